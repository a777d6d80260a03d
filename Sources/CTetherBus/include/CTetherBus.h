#ifndef CTETHER_BUS_H
#define CTETHER_BUS_H

#include <stddef.h>
#include <stdint.h>

/* D-Bus through sd-bus (libsystemd0), loaded at the first connection
   (dlopen): the project's one D-Bus client, for the user's service
   manager, the desktop's notification server, the keyring's Secret
   Service and IBus. libsystemd0 is on every Debian-family system (apt
   depends on it) where GLib may not be, and sd-bus runs on any event loop
   (a descriptor, its events, a timeout, then `process`), so TetherBus
   drives it on libuv. Its ABI is stable since systemd 221; what Tether
   uses of it is declared here, so libsystemd-dev is no build dependency.
   The variadic calls are not used: Swift appends and reads one value at
   a time. */

typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;

/* sd_bus_error's layout. */
typedef struct tether_bus_error {
    const char *name;
    const char *message;
    int _need_free;
} tether_bus_error;

typedef int (*tether_bus_handler)(sd_bus_message *message, void *userdata, tether_bus_error *error);

/* sd_bus_message_get_type's answers. */
enum {
    TETHER_BUS_METHOD_CALL = 1,
    TETHER_BUS_METHOD_RETURN = 2,
    TETHER_BUS_METHOD_ERROR = 3,
    TETHER_BUS_SIGNAL = 4,
};

/* 0 once libsystemd is loaded, else -1 with why (naming the package). */
int tether_bus_load(char *reason, size_t size);

/* A connection to the bus at `address` (a D-Bus address; an autolaunch:
   one is refused), as a client of a message bus (Hello sent, and
   answered while `process` runs). Returns a negative errno on failure. */
int tether_bus_open(const char *address, sd_bus **bus);
/* Ends the connection without waiting for what is queued, and frees it. */
void tether_bus_close(sd_bus *bus);
int tether_bus_fd(sd_bus *bus);
/* POLLIN/POLLOUT wanted now. */
int tether_bus_events(sd_bus *bus);
/* An absolute CLOCK_MONOTONIC time in microseconds, or UINT64_MAX. */
int tether_bus_timeout(sd_bus *bus, uint64_t *usec);
/* Dispatches at most one message: >0 when more may wait, 0 when idle,
   a negative errno when the connection is gone. */
int tether_bus_process(sd_bus *bus);
int tether_bus_is_open(sd_bus *bus);
/* Whether the handshake and Hello are done (no wait). */
int tether_bus_is_ready(sd_bus *bus);
int tether_bus_unique_name(sd_bus *bus, const char **name);

int tether_bus_new_method_call(sd_bus *bus, sd_bus_message **message, const char *destination, const char *path,
                               const char *interface, const char *member);
int tether_bus_new_signal(sd_bus *bus, sd_bus_message **message, const char *path, const char *interface,
                          const char *member);
int tether_bus_new_method_return(sd_bus_message *call, sd_bus_message **message);
int tether_bus_new_method_error(sd_bus_message *call, sd_bus_message **message, const char *name,
                                const char *text);
void tether_bus_message_ref(sd_bus_message *message);
void tether_bus_message_unref(sd_bus_message *message);

/* The answer (or the error) comes to `handler`, within `usec` (0: sd-bus's 25 s). */
int tether_bus_call_async(sd_bus *bus, sd_bus_slot **slot, sd_bus_message *message, tether_bus_handler handler,
                          void *userdata, uint64_t usec);
/* Waits for the answer, at most `usec`: only where blocking is allowed. */
int tether_bus_call(sd_bus *bus, sd_bus_message *message, uint64_t usec, tether_bus_error *error,
                    sd_bus_message **reply);
int tether_bus_send(sd_bus *bus, sd_bus_message *message);
/* A match rule, its AddMatch sent without waiting. */
int tether_bus_add_match(sd_bus *bus, sd_bus_slot **slot, const char *match, tether_bus_handler handler,
                         void *userdata);
/* Every method call to `path` comes to `handler`: 1 answered, 0 not ours. */
int tether_bus_add_object(sd_bus *bus, sd_bus_slot **slot, const char *path, tether_bus_handler handler,
                          void *userdata);
/* Every incoming message comes to `handler` first: 1 taken, 0 not. */
int tether_bus_add_filter(sd_bus *bus, sd_bus_slot **slot, tether_bus_handler handler, void *userdata);
void tether_bus_slot_unref(sd_bus_slot *slot);
void tether_bus_error_free(tether_bus_error *error);

int tether_bus_append_basic(sd_bus_message *message, char type, const void *value);
int tether_bus_open_container(sd_bus_message *message, char type, const char *contents);
int tether_bus_close_container(sd_bus_message *message);
/* >0 with the next value's type (and a container's contents), 0 at the end. */
int tether_bus_peek_type(sd_bus_message *message, char *type, const char **contents);
int tether_bus_read_basic(sd_bus_message *message, char type, void *value);
int tether_bus_enter_container(sd_bus_message *message, char type, const char *contents);
int tether_bus_exit_container(sd_bus_message *message);
int tether_bus_skip(sd_bus_message *message, const char *types);

uint8_t tether_bus_message_type(sd_bus_message *message);
const char *tether_bus_message_member(sd_bus_message *message);
const char *tether_bus_message_interface(sd_bus_message *message);
const char *tether_bus_message_path(sd_bus_message *message);
const char *tether_bus_message_sender(sd_bus_message *message);
const char *tether_bus_message_destination(sd_bus_message *message);
const char *tether_bus_message_signature(sd_bus_message *message);
/* An error answer's name and text (NULL for other messages). */
const char *tether_bus_message_error_name(sd_bus_message *message);
const char *tether_bus_message_error_text(sd_bus_message *message);

#endif
