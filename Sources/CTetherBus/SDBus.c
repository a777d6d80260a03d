#define _GNU_SOURCE
#include "CTetherBus.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The sd-bus functions Tether calls, looked up once. */
static struct {
    int (*new)(sd_bus **);
    int (*set_address)(sd_bus *, const char *);
    int (*set_bus_client)(sd_bus *, int);
    int (*start)(sd_bus *);
    sd_bus *(*close_unref)(sd_bus *);
    int (*get_fd)(sd_bus *);
    int (*get_events)(sd_bus *);
    int (*get_timeout)(sd_bus *, uint64_t *);
    int (*process)(sd_bus *, sd_bus_message **);
    int (*is_open)(sd_bus *);
    int (*is_ready)(sd_bus *);
    int (*get_unique_name)(sd_bus *, const char **);
    int (*new_method_call)(sd_bus *, sd_bus_message **, const char *, const char *, const char *, const char *);
    int (*new_signal)(sd_bus *, sd_bus_message **, const char *, const char *, const char *);
    int (*new_method_return)(sd_bus_message *, sd_bus_message **);
    int (*new_method_error)(sd_bus_message *, sd_bus_message **, const tether_bus_error *);
    sd_bus_message *(*message_ref)(sd_bus_message *);
    sd_bus_message *(*message_unref)(sd_bus_message *);
    int (*call_async)(sd_bus *, sd_bus_slot **, sd_bus_message *, tether_bus_handler, void *, uint64_t);
    int (*call)(sd_bus *, sd_bus_message *, uint64_t, tether_bus_error *, sd_bus_message **);
    int (*send)(sd_bus *, sd_bus_message *, uint64_t *);
    int (*add_match_async)(sd_bus *, sd_bus_slot **, const char *, tether_bus_handler, tether_bus_handler, void *);
    int (*add_object)(sd_bus *, sd_bus_slot **, const char *, tether_bus_handler, void *);
    int (*add_filter)(sd_bus *, sd_bus_slot **, tether_bus_handler, void *);
    sd_bus_slot *(*slot_unref)(sd_bus_slot *);
    void (*error_free)(tether_bus_error *);
    int (*append_basic)(sd_bus_message *, char, const void *);
    int (*open_container)(sd_bus_message *, char, const char *);
    int (*close_container)(sd_bus_message *);
    int (*peek_type)(sd_bus_message *, char *, const char **);
    int (*read_basic)(sd_bus_message *, char, void *);
    int (*enter_container)(sd_bus_message *, char, const char *);
    int (*exit_container)(sd_bus_message *);
    int (*skip)(sd_bus_message *, const char *);
    int (*get_type)(sd_bus_message *, uint8_t *);
    const char *(*get_member)(sd_bus_message *);
    const char *(*get_interface)(sd_bus_message *);
    const char *(*get_path)(sd_bus_message *);
    const char *(*get_sender)(sd_bus_message *);
    const char *(*get_destination)(sd_bus_message *);
    const char *(*get_signature)(sd_bus_message *, int);
    const tether_bus_error *(*get_error)(sd_bus_message *);
} sd;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char load_error[256];

#define FIND(field, symbol)                                                                                   \
    do {                                                                                                      \
        *(void **)(&sd.field) = dlsym(library, symbol);                                                      \
        if (sd.field == NULL) {                                                                               \
            snprintf(load_error, sizeof load_error, "the libsystemd found lacks %s: systemd 241 or later is needed", \
                     symbol);                                                                                 \
            return;                                                                                           \
        }                                                                                                     \
    } while (0)

static void load(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error,
                 "D-Bus needs libsystemd, which cannot be loaded (%s): on Debian and Ubuntu, sudo apt-get install libsystemd0",
                 why != NULL ? why : "not found");
        return;
    }
    FIND(new, "sd_bus_new");
    FIND(set_address, "sd_bus_set_address");
    FIND(set_bus_client, "sd_bus_set_bus_client");
    FIND(start, "sd_bus_start");
    FIND(close_unref, "sd_bus_close_unref");
    FIND(get_fd, "sd_bus_get_fd");
    FIND(get_events, "sd_bus_get_events");
    FIND(get_timeout, "sd_bus_get_timeout");
    FIND(process, "sd_bus_process");
    FIND(is_open, "sd_bus_is_open");
    FIND(is_ready, "sd_bus_is_ready");
    FIND(get_unique_name, "sd_bus_get_unique_name");
    FIND(new_method_call, "sd_bus_message_new_method_call");
    FIND(new_signal, "sd_bus_message_new_signal");
    FIND(new_method_return, "sd_bus_message_new_method_return");
    FIND(new_method_error, "sd_bus_message_new_method_error");
    FIND(message_ref, "sd_bus_message_ref");
    FIND(message_unref, "sd_bus_message_unref");
    FIND(call_async, "sd_bus_call_async");
    FIND(call, "sd_bus_call");
    FIND(send, "sd_bus_send");
    FIND(add_match_async, "sd_bus_add_match_async");
    FIND(add_object, "sd_bus_add_object");
    FIND(add_filter, "sd_bus_add_filter");
    FIND(slot_unref, "sd_bus_slot_unref");
    FIND(error_free, "sd_bus_error_free");
    FIND(append_basic, "sd_bus_message_append_basic");
    FIND(open_container, "sd_bus_message_open_container");
    FIND(close_container, "sd_bus_message_close_container");
    FIND(peek_type, "sd_bus_message_peek_type");
    FIND(read_basic, "sd_bus_message_read_basic");
    FIND(enter_container, "sd_bus_message_enter_container");
    FIND(exit_container, "sd_bus_message_exit_container");
    FIND(skip, "sd_bus_message_skip");
    FIND(get_type, "sd_bus_message_get_type");
    FIND(get_member, "sd_bus_message_get_member");
    FIND(get_interface, "sd_bus_message_get_interface");
    FIND(get_path, "sd_bus_message_get_path");
    FIND(get_sender, "sd_bus_message_get_sender");
    FIND(get_destination, "sd_bus_message_get_destination");
    FIND(get_signature, "sd_bus_message_get_signature");
    FIND(get_error, "sd_bus_message_get_error");
    loaded = 0;
}

int tether_bus_load(char *reason, size_t size) {
    pthread_once(&once, load);
    if (loaded != 0 && reason != NULL && size > 0) snprintf(reason, size, "%s", load_error);
    return loaded;
}

int tether_bus_open(const char *address, sd_bus **out) {
    *out = NULL;
    if (loaded != 0) return -ENOSYS;
    /* GIO would run dbus-launch for it; sd-bus does not know it: either way, no. */
    if (strncmp(address, "autolaunch:", 11) == 0 || strstr(address, ";autolaunch:") != NULL) return -EINVAL;
    sd_bus *bus = NULL;
    int result = sd.new(&bus);
    if (result < 0) return result;
    if ((result = sd.set_address(bus, address)) < 0 || (result = sd.set_bus_client(bus, 1)) < 0 ||
        (result = sd.start(bus)) < 0) {
        sd.close_unref(bus);
        return result;
    }
    *out = bus;
    return 0;
}

void tether_bus_close(sd_bus *bus) { if (bus != NULL) sd.close_unref(bus); }
int tether_bus_fd(sd_bus *bus) { return sd.get_fd(bus); }
int tether_bus_events(sd_bus *bus) { return sd.get_events(bus); }
int tether_bus_timeout(sd_bus *bus, uint64_t *usec) { return sd.get_timeout(bus, usec); }
int tether_bus_process(sd_bus *bus) { return sd.process(bus, NULL); }
int tether_bus_is_open(sd_bus *bus) { return sd.is_open(bus); }
int tether_bus_is_ready(sd_bus *bus) { return sd.is_ready(bus); }
int tether_bus_unique_name(sd_bus *bus, const char **name) { return sd.get_unique_name(bus, name); }

int tether_bus_new_method_call(sd_bus *bus, sd_bus_message **message, const char *destination, const char *path,
                               const char *interface, const char *member) {
    return sd.new_method_call(bus, message, destination, path, interface, member);
}

int tether_bus_new_signal(sd_bus *bus, sd_bus_message **message, const char *path, const char *interface,
                          const char *member) {
    return sd.new_signal(bus, message, path, interface, member);
}

int tether_bus_new_method_return(sd_bus_message *call, sd_bus_message **message) {
    return sd.new_method_return(call, message);
}

int tether_bus_new_method_error(sd_bus_message *call, sd_bus_message **message, const char *name, const char *text) {
    tether_bus_error error = {name, text, 0};
    return sd.new_method_error(call, message, &error);
}

void tether_bus_message_ref(sd_bus_message *message) { sd.message_ref(message); }
void tether_bus_message_unref(sd_bus_message *message) { if (message != NULL) sd.message_unref(message); }

int tether_bus_call_async(sd_bus *bus, sd_bus_slot **slot, sd_bus_message *message, tether_bus_handler handler,
                          void *userdata, uint64_t usec) {
    return sd.call_async(bus, slot, message, handler, userdata, usec);
}

int tether_bus_call(sd_bus *bus, sd_bus_message *message, uint64_t usec, tether_bus_error *error,
                    sd_bus_message **reply) {
    return sd.call(bus, message, usec, error, reply);
}

int tether_bus_send(sd_bus *bus, sd_bus_message *message) { return sd.send(bus, message, NULL); }

int tether_bus_add_match(sd_bus *bus, sd_bus_slot **slot, const char *match, tether_bus_handler handler,
                         void *userdata) {
    return sd.add_match_async(bus, slot, match, handler, NULL, userdata);
}

int tether_bus_add_object(sd_bus *bus, sd_bus_slot **slot, const char *path, tether_bus_handler handler,
                          void *userdata) {
    return sd.add_object(bus, slot, path, handler, userdata);
}

int tether_bus_add_filter(sd_bus *bus, sd_bus_slot **slot, tether_bus_handler handler, void *userdata) {
    return sd.add_filter(bus, slot, handler, userdata);
}

void tether_bus_slot_unref(sd_bus_slot *slot) { if (slot != NULL) sd.slot_unref(slot); }
void tether_bus_error_free(tether_bus_error *error) { sd.error_free(error); }

int tether_bus_append_basic(sd_bus_message *message, char type, const void *value) {
    return sd.append_basic(message, type, value);
}
int tether_bus_open_container(sd_bus_message *message, char type, const char *contents) {
    return sd.open_container(message, type, contents);
}
int tether_bus_close_container(sd_bus_message *message) { return sd.close_container(message); }
int tether_bus_peek_type(sd_bus_message *message, char *type, const char **contents) {
    return sd.peek_type(message, type, contents);
}
int tether_bus_read_basic(sd_bus_message *message, char type, void *value) {
    return sd.read_basic(message, type, value);
}
int tether_bus_enter_container(sd_bus_message *message, char type, const char *contents) {
    return sd.enter_container(message, type, contents);
}
int tether_bus_exit_container(sd_bus_message *message) { return sd.exit_container(message); }
int tether_bus_skip(sd_bus_message *message, const char *types) { return sd.skip(message, types); }

uint8_t tether_bus_message_type(sd_bus_message *message) {
    uint8_t type = 0;
    return sd.get_type(message, &type) < 0 ? 0 : type;
}
const char *tether_bus_message_member(sd_bus_message *message) { return sd.get_member(message); }
const char *tether_bus_message_interface(sd_bus_message *message) { return sd.get_interface(message); }
const char *tether_bus_message_path(sd_bus_message *message) { return sd.get_path(message); }
const char *tether_bus_message_sender(sd_bus_message *message) { return sd.get_sender(message); }
const char *tether_bus_message_destination(sd_bus_message *message) { return sd.get_destination(message); }
const char *tether_bus_message_signature(sd_bus_message *message) { return sd.get_signature(message, 1); }

const char *tether_bus_message_error_name(sd_bus_message *message) {
    const tether_bus_error *error = sd.get_error(message);
    return error != NULL ? error->name : NULL;
}

const char *tether_bus_message_error_text(sd_bus_message *message) {
    const tether_bus_error *error = sd.get_error(message);
    return error != NULL ? error->message : NULL;
}
