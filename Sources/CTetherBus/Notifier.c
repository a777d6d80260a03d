#define _GNU_SOURCE
#include "CTetherBus.h"
#include "GIOLibrary.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The desktop's notification server (org.freedesktop.Notifications) over
   one private GDBus connection. Nothing here blocks the caller: the
   connection is made on a thread of its own, messages are sent with
   g_dbus_connection_send_message (queued to GDBus's worker thread), and
   replies and signals are read by a filter that runs on that worker
   thread, with no GMainLoop. The filter queues events under a mutex and
   wakes the caller's loop through an eventfd. */

#define NAME "org.freedesktop.Notifications"
#define PATH "/org/freedesktop/Notifications"

/* Events waiting for the owner: a ring, bounded; past it the oldest
   signals are dropped (and counted), never the caller blocked. */
#define QUEUE_SIZE 256

struct tether_notifier {
    atomic_int references;
    pthread_mutex_t mutex;
    int event_fd;
    int bus_fd;                /* a duplicate of the bus socket's, for its hang-up; -1 if none */
    char *address;
    void *connection;          /* under mutex */
    unsigned filter;
    int released;              /* the owner let go: the thread cleans up */
    uint32_t information_serial, capabilities_serial;
    char server[256];          /* the server's unique name: signals from anyone else are ignored */
    /* GetServerInformation's answer, told once GetCapabilities' is in too:
       nothing is shown before whether to escape markup is known. */
    struct tether_notifier_event found;
    struct tether_notifier_event queue[QUEUE_SIZE];
    size_t head, count;
    uint64_t dropped;
};

static void unreference(struct tether_notifier *notifier) {
    if (atomic_fetch_sub(&notifier->references, 1) != 1) return;
    close(notifier->event_fd);
    if (notifier->bus_fd >= 0) close(notifier->bus_fd);
    pthread_mutex_destroy(&notifier->mutex);
    free(notifier->address);
    free(notifier);
}

static void filter_done(void *data) { unreference(data); }

static void wake(struct tether_notifier *notifier) {
    uint64_t one = 1;
    ssize_t written;
    do { written = write(notifier->event_fd, &one, sizeof one); } while (written < 0 && errno == EINTR);
}

/* Under the mutex. */
static void enqueue(struct tether_notifier *notifier, const struct tether_notifier_event *event) {
    if (notifier->count == QUEUE_SIZE) {
        notifier->head = (notifier->head + 1) % QUEUE_SIZE;
        notifier->count--;
        notifier->dropped++;
    }
    notifier->queue[(notifier->head + notifier->count) % QUEUE_SIZE] = *event;
    notifier->count++;
    wake(notifier);
}

static void post(struct tether_notifier *notifier, const struct tether_notifier_event *event) {
    pthread_mutex_lock(&notifier->mutex);
    enqueue(notifier, event);
    pthread_mutex_unlock(&notifier->mutex);
}

static void copy(char *destination, size_t size, const char *source) {
    snprintf(destination, size, "%s", source != NULL ? source : "");
}

/* Sends a method call with `body` (floating, or NULL); its serial, 0 if it
   could not be queued (why in `error`). Thread-safe: GDBus queues it. */
static uint32_t send_call(void *connection, const char *destination, const char *path, const char *interface,
                          const char *member, void *body, char *error, size_t error_size) {
    void *message = tether_gio.message_new_method_call(destination, path, interface, member);
    if (body != NULL) tether_gio.message_set_body(message, body);
    uint32_t serial = 0;
    struct gerror *gerror = NULL;
    if (!tether_gio.send_message(connection, message, 0, &serial, &gerror)) {
        if (error != NULL) copy(error, error_size, gerror != NULL ? gerror->message : "cannot send");
        if (gerror != NULL) tether_gio.error_free(gerror);
        serial = 0;
    }
    tether_gio.object_unref(message);
    return serial;
}

/* Under the mutex: who serves the name now, and what it can do. */
static void ask_server(struct tether_notifier *notifier) {
    /* A name-owner change can come in as the notifier is released. */
    if (notifier->released || notifier->connection == NULL) return;
    memset(&notifier->found, 0, sizeof notifier->found);
    notifier->information_serial = send_call(notifier->connection, NAME, PATH, NAME, "GetServerInformation", NULL, NULL, 0);
    notifier->capabilities_serial = send_call(notifier->connection, NAME, PATH, NAME, "GetCapabilities", NULL, NULL, 0);
}

static int body_is(void *body, const char *type) {
    return body != NULL && strcmp(tether_gio.variant_get_type_string(body), type) == 0;
}

/* On GDBus's worker thread, for every message in and out. */
static void *filter(void *connection, void *message, int incoming, void *data) {
    (void)connection;
    if (!incoming) return message;
    struct tether_notifier *notifier = data;
    struct tether_notifier_event event;
    memset(&event, 0, sizeof event);
    int type = tether_gio.message_get_type(message);
    void *body = tether_gio.message_get_body(message);
    const char *sender = tether_gio.message_get_sender(message);
    pthread_mutex_lock(&notifier->mutex);
    uint32_t reply_to = type == 2 || type == 3 ? tether_gio.message_get_reply_serial(message) : 0;
    if (reply_to != 0 && reply_to == notifier->information_serial) {
        notifier->information_serial = 0;
        if (type == 2 && body_is(body, "(ssss)")) {
            const char *name = NULL, *vendor = NULL, *version = NULL, *spec = NULL;
            tether_gio.variant_get(body, "(&s&s&s&s)", &name, &vendor, &version, &spec);
            copy(notifier->server, sizeof notifier->server, sender);
            notifier->found.kind = TETHER_NOTIFIER_SERVER;
            copy(notifier->found.text, sizeof notifier->found.text, name);
            copy(notifier->found.detail, sizeof notifier->found.detail, version);
            if (notifier->capabilities_serial == 0) enqueue(notifier, &notifier->found);
        } else {
            event.kind = TETHER_NOTIFIER_NO_SERVER;
            copy(event.text, sizeof event.text, type == 3 ? tether_gio.message_get_error_name(message) : "an unexpected answer");
            enqueue(notifier, &event);
        }
    } else if (reply_to != 0 && reply_to == notifier->capabilities_serial) {
        notifier->capabilities_serial = 0;
        if (type == 2 && body_is(body, "(as)")) {
            void *array = tether_gio.variant_get_child_value(body, 0);
            size_t length = 0;
            const char **capabilities = tether_gio.variant_get_strv(array, &length);
            for (size_t i = 0; i < length; i++) {
                if (strcmp(capabilities[i], "body-markup") == 0) notifier->found.reason = 1;
            }
            tether_gio.free(capabilities);
            tether_gio.variant_unref(array);
        }
        if (notifier->information_serial == 0 && notifier->found.kind == TETHER_NOTIFIER_SERVER) {
            enqueue(notifier, &notifier->found);
        }
    } else if (reply_to != 0) {
        event.serial = reply_to;
        if (type == 2 && body_is(body, "(u)")) {
            event.kind = TETHER_NOTIFIER_SHOWN;
            tether_gio.variant_get(body, "(u)", &event.id);
        } else {
            event.kind = TETHER_NOTIFIER_FAILED;
            copy(event.text, sizeof event.text, type == 3 ? tether_gio.message_get_error_name(message) : "an unexpected answer");
            if (type == 3 && body_is(body, "(s)")) {
                const char *why = NULL;
                tether_gio.variant_get(body, "(&s)", &why);
                copy(event.detail, sizeof event.detail, why);
            }
        }
        enqueue(notifier, &event);
    } else if (type == 4) {
        const char *interface = tether_gio.message_get_interface(message), *member = tether_gio.message_get_member(message);
        int from_server = sender != NULL && notifier->server[0] != 0 && strcmp(sender, notifier->server) == 0;
        if (interface != NULL && strcmp(interface, NAME) == 0 && member != NULL && from_server) {
            if (strcmp(member, "NotificationClosed") == 0 && body_is(body, "(uu)")) {
                event.kind = TETHER_NOTIFIER_CLOSED;
                tether_gio.variant_get(body, "(uu)", &event.id, &event.reason);
                enqueue(notifier, &event);
            } else if (strcmp(member, "ActionInvoked") == 0 && body_is(body, "(us)")) {
                const char *key = NULL;
                event.kind = TETHER_NOTIFIER_ACTION;
                tether_gio.variant_get(body, "(u&s)", &event.id, &key);
                copy(event.text, sizeof event.text, key);
                enqueue(notifier, &event);
            }
        } else if (interface != NULL && strcmp(interface, "org.freedesktop.DBus") == 0 && member != NULL
                   && sender != NULL && strcmp(sender, "org.freedesktop.DBus") == 0
                   && strcmp(member, "NameOwnerChanged") == 0 && body_is(body, "(sss)")) {
            const char *name = NULL, *old_owner = NULL, *new_owner = NULL;
            tether_gio.variant_get(body, "(&s&s&s)", &name, &old_owner, &new_owner);
            if (strcmp(name, NAME) == 0) {
                notifier->server[0] = 0;
                if (new_owner[0] == 0) {
                    event.kind = TETHER_NOTIFIER_NO_SERVER;
                    copy(event.text, sizeof event.text, "the notification server left the bus");
                    enqueue(notifier, &event);
                } else {
                    ask_server(notifier);
                }
            }
        }
    }
    pthread_mutex_unlock(&notifier->mutex);
    return message;
}

static void *connect_thread(void *data) {
    struct tether_notifier *notifier = data;
    struct tether_notifier_event event;
    memset(&event, 0, sizeof event);
    /* GIO is loaded here, off the caller's thread: a host start pays nothing for it. */
    const char *load_error = NULL;
    if (tether_gio_load(&load_error) != 0) {
        event.kind = TETHER_NOTIFIER_UNREACHABLE;
        copy(event.text, sizeof event.text, load_error);
        post(notifier, &event);
        unreference(notifier);
        return NULL;
    }
    struct gerror *gerror = NULL;
    void *connection = tether_gio.connection_new(notifier->address, 1 | 8 /* AUTHENTICATION_CLIENT | MESSAGE_BUS_CONNECTION */,
                                          NULL, NULL, &gerror);
    if (connection == NULL) {
        event.kind = TETHER_NOTIFIER_UNREACHABLE;
        copy(event.text, sizeof event.text, gerror != NULL ? gerror->message : "cannot connect");
        if (gerror != NULL) tether_gio.error_free(gerror);
        post(notifier, &event);
        unreference(notifier);
        return NULL;
    }
    pthread_mutex_lock(&notifier->mutex);
    if (notifier->released) {
        pthread_mutex_unlock(&notifier->mutex);
        tether_gio.close(connection, NULL, NULL, NULL);
        tether_gio.object_unref(connection);
        unreference(notifier);
        return NULL;
    }
    notifier->connection = connection;
    atomic_fetch_add(&notifier->references, 1); /* the filter's, given back by filter_done */
    notifier->filter = tether_gio.add_filter(connection, filter, notifier, filter_done);
    /* Signals a server broadcasts (GNOME's, KDE's) reach us only through a
       match; dunst's are sent to the caller alone. */
    send_call(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch",
              tether_gio.variant_new("(s)", "type='signal',interface='" NAME "',path='" PATH "'"), NULL, 0);
    send_call(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch",
              tether_gio.variant_new("(s)", "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" NAME "'"),
              NULL, 0);
    /* The bus socket's hang-up, watched by the owner's loop on a duplicate
       (GDBus keeps reading its own): a bus that goes away is known at once. */
    void *stream = tether_gio.connection_get_stream(connection);
    if (stream != NULL && tether_gio.type_check_instance_is_a(stream, tether_gio.socket_connection_get_type())) {
        int fd = tether_gio.socket_get_fd(tether_gio.socket_connection_get_socket(stream));
        notifier->bus_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    }
    event.kind = TETHER_NOTIFIER_CONNECTED;
    enqueue(notifier, &event);
    ask_server(notifier);
    pthread_mutex_unlock(&notifier->mutex);
    unreference(notifier);
    return NULL;
}

struct tether_notifier *tether_notifier_start(const char *address, char *error, size_t error_size) {
    struct tether_notifier *notifier = calloc(1, sizeof *notifier);
    if (notifier == NULL) {
        copy(error, error_size, "out of memory");
        return NULL;
    }
    notifier->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    notifier->bus_fd = -1;
    notifier->address = strdup(address);
    if (notifier->event_fd < 0 || notifier->address == NULL) {
        snprintf(error, error_size, "cannot make the notifier's eventfd: %s", strerror(errno));
        if (notifier->event_fd >= 0) close(notifier->event_fd);
        free(notifier->address);
        free(notifier);
        return NULL;
    }
    pthread_mutex_init(&notifier->mutex, NULL);
    atomic_store(&notifier->references, 2); /* the owner's and the thread's */
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int failed = pthread_create(&thread, &attributes, connect_thread, notifier);
    pthread_attr_destroy(&attributes);
    if (failed != 0) {
        snprintf(error, error_size, "cannot start the notifier's thread: %s", strerror(failed));
        atomic_store(&notifier->references, 1);
        unreference(notifier);
        return NULL;
    }
    return notifier;
}

int tether_notifier_event_fd(const struct tether_notifier *notifier) { return notifier->event_fd; }

int tether_notifier_bus_fd(struct tether_notifier *notifier) {
    pthread_mutex_lock(&notifier->mutex);
    int fd = notifier->bus_fd;
    pthread_mutex_unlock(&notifier->mutex);
    return fd;
}

int tether_notifier_next(struct tether_notifier *notifier, struct tether_notifier_event *event) {
    pthread_mutex_lock(&notifier->mutex);
    if (notifier->count == 0) {
        uint64_t ignored;
        ssize_t drained;
        do { drained = read(notifier->event_fd, &ignored, sizeof ignored); } while (drained < 0 && errno == EINTR);
        pthread_mutex_unlock(&notifier->mutex);
        return 0;
    }
    *event = notifier->queue[notifier->head];
    notifier->head = (notifier->head + 1) % QUEUE_SIZE;
    notifier->count--;
    pthread_mutex_unlock(&notifier->mutex);
    return 1;
}

uint64_t tether_notifier_dropped(struct tether_notifier *notifier) {
    pthread_mutex_lock(&notifier->mutex);
    uint64_t dropped = notifier->dropped;
    pthread_mutex_unlock(&notifier->mutex);
    return dropped;
}

/* GLib aborts or warns on strings that are not UTF-8: each is checked here
   too, whatever the caller checked. */
static int valid(const char *text) { return text != NULL && tether_gio.utf8_validate(text, -1, NULL); }

uint32_t tether_notifier_notify(struct tether_notifier *notifier, const struct tether_notification *notification,
                                char *error, size_t error_size) {
    pthread_mutex_lock(&notifier->mutex);
    void *connection = notifier->connection; /* set only once GIO is loaded */
    if (connection == NULL || tether_gio.is_closed(connection)) {
        pthread_mutex_unlock(&notifier->mutex);
        copy(error, error_size, connection == NULL ? "not connected to the session bus" : "the session bus closed");
        return 0;
    }
    const char *problem = NULL;
    if (!valid(notification->app_name) || !valid(notification->summary) || !valid(notification->body)) {
        problem = "a text is not UTF-8";
    }
    for (size_t i = 0; problem == NULL && i < notification->action_count * 2; i++) {
        if (!valid(notification->actions[i])) problem = "an action is not UTF-8";
    }
    if (problem == NULL && notification->category != NULL && !valid(notification->category)) {
        problem = "the category is not UTF-8";
    }
    if (problem != NULL) {
        pthread_mutex_unlock(&notifier->mutex);
        copy(error, error_size, problem);
        return 0;
    }
    void *actions = tether_gio.builder_new("as");
    for (size_t i = 0; i < notification->action_count * 2; i++) tether_gio.builder_add(actions, "s", notification->actions[i]);
    void *hints = tether_gio.builder_new("a{sv}");
    if (notification->urgency >= 0) {
        tether_gio.builder_add(hints, "{sv}", "urgency", tether_gio.variant_new_byte((unsigned char)notification->urgency));
    }
    if (notification->category != NULL) {
        tether_gio.builder_add(hints, "{sv}", "category", tether_gio.variant_new_string(notification->category));
    }
    void *body = tether_gio.variant_new("(susss@as@a{sv}i)", notification->app_name, notification->replaces_id, "",
                                 notification->summary, notification->body, tether_gio.builder_end(actions),
                                 tether_gio.builder_end(hints), notification->expire_timeout);
    tether_gio.builder_unref(actions);
    tether_gio.builder_unref(hints);
    uint32_t serial = send_call(connection, NAME, PATH, NAME, "Notify", body, error, error_size);
    pthread_mutex_unlock(&notifier->mutex);
    return serial;
}

void tether_notifier_release(struct tether_notifier *notifier) {
    pthread_mutex_lock(&notifier->mutex);
    notifier->released = 1;
    void *connection = notifier->connection;
    notifier->connection = NULL;
    pthread_mutex_unlock(&notifier->mutex);
    if (connection != NULL) {
        /* The filter may be running still: its reference outlives it (filter_done). */
        tether_gio.remove_filter(connection, notifier->filter);
        tether_gio.close(connection, NULL, NULL, NULL);
        tether_gio.object_unref(connection);
    }
    unreference(notifier);
}
