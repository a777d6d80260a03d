#ifndef CTETHER_SECRET_H
#define CTETHER_SECRET_H

#include <stddef.h>

/// The user's keyring through the freedesktop Secret Service, by libsecret,
/// loaded at the first call (`dlopen`): a process that never touches the
/// keyring never maps libsecret or GLib, and nothing links them. Every call
/// blocks on D-Bus (libsecret's own main context): call it off the event
/// loop. Items use the schema "org.tether.Credential" with the string
/// attributes `group`, `secret` and `account`.
///
/// `attributes` is a NULL-terminated list of names and values, alternating.
/// On failure a call returns -1 and writes one sentence into `error`. A
/// call failing as a stale service does (its daemon restarted since
/// libsecret cached its session, the connection closed) is made once more
/// through a new service; a timeout or the keyring's own answer is not. A
/// process whose session bus closed is told to restart to reach a new one.

/// 0 once libsecret is loaded; -1 with why (naming the package) in `error`.
int tether_secret_load(char *error, size_t error_size);

/// Stores `secret` under `attributes` in the default collection, replacing
/// an item with the same attributes (CreateItem with replace). 0 or -1.
int tether_secret_store(const char *const *attributes, const char *label, const char *secret,
                        char *error, size_t error_size);

/// 1 with the secret in `*secret` (free it with `tether_secret_free`, which
/// wipes it), 0 when no item matches, -1 on failure (a locked collection
/// that could not be unlocked is a failure, not "none").
int tether_secret_lookup(const char *const *attributes, char **secret, char *error, size_t error_size);

/// Removes every item matching `attributes`: 1 if any was, 0 if none, -1.
int tether_secret_clear(const char *const *attributes, char *error, size_t error_size);

/// Whether the default collection is locked: 1 locked, 0 unlocked, -1
/// (with why) when there is no service or no default collection.
int tether_secret_default_locked(char *error, size_t error_size);

/// Wipes and frees a secret `tether_secret_lookup` returned.
void tether_secret_free(char *secret);

#endif
