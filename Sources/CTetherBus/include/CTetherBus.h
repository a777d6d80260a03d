#ifndef CTETHER_BUS_H
#define CTETHER_BUS_H

#include <stddef.h>
#include <stdint.h>

/// D-Bus through GDBus (GIO), loaded at the first call (`dlopen`): the one
/// D-Bus client of the project (libsecret uses the same GIO). A process
/// that never calls it never maps GLib, and nothing links it. Calls block,
/// bounded by their timeout: call them where blocking is allowed (the
/// notifier below excepted: it never blocks).

/// The unit the service manager on the user's bus at `address` (`systemd --user`,
/// org.freedesktop.systemd1) runs `pid` in: its name, its control group
/// and whether it is delegated (`Delegate=`). 1 with those filled in; 0
/// when there is no such manager or it has no unit for `pid` (with why in
/// `error`); -1 on any other failure, with why.
int tether_bus_unit_of_pid(const char *address, unsigned int pid, int timeout_milliseconds, char *unit,
                           size_t unit_size, char *control_group, size_t control_group_size, int *delegated,
                           char *error, size_t error_size);

/// The desktop's notification server (org.freedesktop.Notifications) on
/// one private connection: made on a thread of its own, never blocking
/// the caller; replies and signals come back as events, read with
/// `tether_notifier_next` when `tether_notifier_event_fd` is readable.
typedef struct tether_notifier tether_notifier;

enum tether_notifier_event_kind {
    TETHER_NOTIFIER_CONNECTED = 1,
    /// The bus could not be reached: `text` says why.
    TETHER_NOTIFIER_UNREACHABLE,
    /// A server owns the name: `text` its name, `detail` its version;
    /// `reason` 1 when it reads body markup.
    TETHER_NOTIFIER_SERVER,
    /// No server owns the name (or it left): `text` says why.
    TETHER_NOTIFIER_NO_SERVER,
    /// `Notify` of `serial` answered: the notification's `id`.
    TETHER_NOTIFIER_SHOWN,
    /// `Notify` of `serial` failed: `text` the error's name, `detail` its message.
    TETHER_NOTIFIER_FAILED,
    /// `NotificationClosed(id, reason)`.
    TETHER_NOTIFIER_CLOSED,
    /// `ActionInvoked(id, text)`.
    TETHER_NOTIFIER_ACTION,
};

struct tether_notifier_event {
    int kind;
    uint32_t serial;
    uint32_t id;
    uint32_t reason;
    char text[256];
    char detail[256];
};

/// What `Notify` sends. Strings are checked for UTF-8 again here (GLib
/// aborts on others); `actions` holds `action_count` key, label pairs.
struct tether_notification {
    const char *app_name;
    uint32_t replaces_id;
    const char *summary;
    const char *body;
    const char *const *actions;
    size_t action_count;
    /// 0 low, 1 normal, 2 critical; -1 for none.
    int urgency;
    /// NULL for none.
    const char *category;
    /// Milliseconds; -1 for the server's default, 0 for never.
    int32_t expire_timeout;
};

/// Starts connecting to the bus at `address` (a D-Bus address; never
/// autolaunched); NULL with why if it cannot even start.
tether_notifier *tether_notifier_start(const char *address, char *error, size_t error_size);
/// Readable while events wait.
int tether_notifier_event_fd(const tether_notifier *notifier);
/// Once connected: a duplicate of the bus socket's descriptor (close-on-exec,
/// the notifier's to close), to watch for its hang-up; -1 before or without one.
int tether_notifier_bus_fd(tether_notifier *notifier);
/// The next event: 1 if one was taken, 0 when none is left (the eventfd is then drained).
int tether_notifier_next(tether_notifier *notifier, struct tether_notifier_event *event);
/// Events dropped because the owner did not take them (the queue is bounded).
uint64_t tether_notifier_dropped(tether_notifier *notifier);
/// Sends `Notify`; its serial (the answer's event carries it), or 0 with why.
uint32_t tether_notifier_notify(tether_notifier *notifier, const struct tether_notification *notification,
                                char *error, size_t error_size);
/// Closes the connection and frees the notifier once nothing uses it.
void tether_notifier_release(tether_notifier *notifier);

#endif
