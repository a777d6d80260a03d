#define _GNU_SOURCE
#include "CTetherBus.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* GLib's GError; every other GLib type stays opaque. */
struct gerror {
    unsigned int domain;
    int code;
    char *message;
};

static struct {
    char *(*address_for_bus)(int, void *, struct gerror **);
    void *(*connection_new)(const char *, int, void *, void *, struct gerror **);
    void *(*call)(void *, const char *, const char *, const char *, const char *, void *, void *, int, int, void *,
                  struct gerror **);
    int (*close)(void *, void *, struct gerror **);
    void *(*variant_new)(const char *, ...);
    void (*variant_get)(void *, const char *, ...);
    int (*variant_get_boolean)(void *);
    const char *(*variant_get_string)(void *, size_t *);
    void (*variant_unref)(void *);
    void (*object_unref)(void *);
    void (*error_free)(struct gerror *);
    void (*free)(void *);
} gio;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char load_error[200];

static void load(void) {
    void *library = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "GIO cannot be loaded (%s): on Debian, apt-get install libglib2.0-0",
                 why != NULL ? why : "not found");
        return;
    }
    const struct { void **slot; const char *symbol; } wanted[] = {
        {(void **)&gio.address_for_bus, "g_dbus_address_get_for_bus_sync"},
        {(void **)&gio.connection_new, "g_dbus_connection_new_for_address_sync"},
        {(void **)&gio.call, "g_dbus_connection_call_sync"}, {(void **)&gio.close, "g_dbus_connection_close_sync"},
        {(void **)&gio.variant_new, "g_variant_new"}, {(void **)&gio.variant_get, "g_variant_get"},
        {(void **)&gio.variant_get_boolean, "g_variant_get_boolean"},
        {(void **)&gio.variant_get_string, "g_variant_get_string"}, {(void **)&gio.variant_unref, "g_variant_unref"},
        {(void **)&gio.object_unref, "g_object_unref"}, {(void **)&gio.error_free, "g_error_free"},
        {(void **)&gio.free, "g_free"},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        *wanted[i].slot = dlsym(library, wanted[i].symbol);
        if (*wanted[i].slot == NULL) {
            snprintf(load_error, sizeof load_error, "the GIO found lacks %s: it is too old", wanted[i].symbol);
            return;
        }
    }
    loaded = 0;
}

static void take_error(struct gerror *gerror, const char *what, char *error, size_t error_size) {
    snprintf(error, error_size, "%s: %s", what, gerror != NULL && gerror->message != NULL ? gerror->message : "failed");
    if (gerror != NULL) gio.error_free(gerror);
}

/* One property of the unit at `path` (a variant the caller unrefs), or NULL. */
static void *property(void *connection, const char *path, const char *interface, const char *name, int timeout,
                      char *error, size_t error_size) {
    struct gerror *gerror = NULL;
    void *reply = gio.call(connection, "org.freedesktop.systemd1", path, "org.freedesktop.DBus.Properties", "Get",
                           gio.variant_new("(ss)", interface, name), NULL, 0, timeout, NULL, &gerror);
    if (reply == NULL) {
        take_error(gerror, name, error, error_size);
        return NULL;
    }
    void *value = NULL;
    gio.variant_get(reply, "(v)", &value);
    gio.variant_unref(reply);
    return value;
}

static int copy_string(void *value, char *out, size_t size) {
    if (value == NULL) return -1;
    snprintf(out, size, "%s", gio.variant_get_string(value, NULL));
    gio.variant_unref(value);
    return 0;
}

int tether_bus_unit_of_pid(unsigned int pid, int timeout, char *unit, size_t unit_size, char *control_group,
                           size_t control_group_size, int *delegated, char *error, size_t error_size) {
    pthread_once(&once, load);
    if (loaded != 0) {
        snprintf(error, error_size, "%s", load_error);
        return -1;
    }
    /* A private connection to the user's bus (G_BUS_TYPE_SESSION: the
       user manager puts it there), closed at the end: GLib's shared one
       would end the process if the bus went away. */
    struct gerror *gerror = NULL;
    char *address = gio.address_for_bus(2, NULL, &gerror);
    if (address == NULL) {
        take_error(gerror, "no session bus", error, error_size);
        return 0;
    }
    void *connection = gio.connection_new(address, 1 | 8 /* AUTHENTICATION_CLIENT | MESSAGE_BUS_CONNECTION */,
                                          NULL, NULL, &gerror);
    gio.free(address);
    if (connection == NULL) {
        take_error(gerror, "no session bus", error, error_size);
        return 0;
    }
    int result = -1;
    void *reply = gio.call(connection, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                           "org.freedesktop.systemd1.Manager", "GetUnitByPID", gio.variant_new("(u)", pid), NULL, 0,
                           timeout, NULL, &gerror);
    if (reply == NULL) {
        /* No manager on this bus, or no unit of it holds the pid. */
        take_error(gerror, "the user's service manager", error, error_size);
        result = 0;
    } else {
        const char *borrowed = NULL;
        gio.variant_get(reply, "(&o)", &borrowed);
        char path[512];
        snprintf(path, sizeof path, "%s", borrowed != NULL ? borrowed : "/");
        gio.variant_unref(reply);
        if (copy_string(property(connection, path, "org.freedesktop.systemd1.Unit", "Id", timeout, error, error_size),
                        unit, unit_size) == 0) {
            size_t length = strlen(unit);
            const char *interface = length > 6 && strcmp(unit + length - 6, ".scope") == 0
                ? "org.freedesktop.systemd1.Scope" : "org.freedesktop.systemd1.Service";
            void *delegate = property(connection, path, interface, "Delegate", timeout, error, error_size);
            if (delegate != NULL) {
                *delegated = gio.variant_get_boolean(delegate);
                gio.variant_unref(delegate);
                if (copy_string(property(connection, path, interface, "ControlGroup", timeout, error, error_size),
                                control_group, control_group_size) == 0) result = 1;
            }
        }
    }
    gio.close(connection, NULL, NULL);
    gio.object_unref(connection);
    return result;
}
