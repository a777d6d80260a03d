#define _GNU_SOURCE
#include "CTetherBus.h"

#include <stdio.h>
#include <string.h>

#include "GIOLibrary.h"

static void take_error(struct gerror *gerror, const char *what, char *error, size_t error_size) {
    snprintf(error, error_size, "%s: %s", what, gerror != NULL && gerror->message != NULL ? gerror->message : "failed");
    if (gerror != NULL) tether_gio.error_free(gerror);
}

/* One property of the unit at `path` (a variant the caller unrefs), or NULL. */
static void *property(void *connection, const char *path, const char *interface, const char *name, int timeout,
                      char *error, size_t error_size) {
    struct gerror *gerror = NULL;
    void *reply = tether_gio.call_sync(connection, "org.freedesktop.systemd1", path, "org.freedesktop.DBus.Properties", "Get",
                           tether_gio.variant_new("(ss)", interface, name), NULL, 0, timeout, NULL, &gerror);
    if (reply == NULL) {
        take_error(gerror, name, error, error_size);
        return NULL;
    }
    void *value = NULL;
    tether_gio.variant_get(reply, "(v)", &value);
    tether_gio.variant_unref(reply);
    return value;
}

static int copy_string(void *value, char *out, size_t size) {
    if (value == NULL) return -1;
    snprintf(out, size, "%s", tether_gio.variant_get_string(value, NULL));
    tether_gio.variant_unref(value);
    return 0;
}

int tether_bus_unit_of_pid(const char *address, unsigned int pid, int timeout, char *unit, size_t unit_size,
                           char *control_group, size_t control_group_size, int *delegated, char *error,
                           size_t error_size) {
    const char *load_error = NULL;
    if (tether_gio_load(&load_error) != 0) {
        snprintf(error, error_size, "%s", load_error);
        return -1;
    }
    /* A private connection to the user's bus (the user manager is on it),
       closed at the end: GLib's shared one would end the process if the
       bus went away. */
    struct gerror *gerror = NULL;
    void *connection = tether_gio.connection_new(address, 1 | 8 /* AUTHENTICATION_CLIENT | MESSAGE_BUS_CONNECTION */,
                                                 NULL, NULL, &gerror);
    if (connection == NULL) {
        take_error(gerror, "no session bus", error, error_size);
        return 0;
    }
    int result = -1;
    void *reply = tether_gio.call_sync(connection, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                           "org.freedesktop.systemd1.Manager", "GetUnitByPID", tether_gio.variant_new("(u)", pid), NULL, 0,
                           timeout, NULL, &gerror);
    if (reply == NULL) {
        /* No manager on this bus, or no unit of it holds the pid. */
        take_error(gerror, "the user's service manager", error, error_size);
        result = 0;
    } else {
        const char *borrowed = NULL;
        tether_gio.variant_get(reply, "(&o)", &borrowed);
        char path[512];
        snprintf(path, sizeof path, "%s", borrowed != NULL ? borrowed : "/");
        tether_gio.variant_unref(reply);
        if (copy_string(property(connection, path, "org.freedesktop.systemd1.Unit", "Id", timeout, error, error_size),
                        unit, unit_size) == 0) {
            size_t length = strlen(unit);
            const char *interface = length > 6 && strcmp(unit + length - 6, ".scope") == 0
                ? "org.freedesktop.systemd1.Scope" : "org.freedesktop.systemd1.Service";
            void *delegate = property(connection, path, interface, "Delegate", timeout, error, error_size);
            if (delegate != NULL) {
                *delegated = tether_gio.variant_get_boolean(delegate);
                tether_gio.variant_unref(delegate);
                if (copy_string(property(connection, path, interface, "ControlGroup", timeout, error, error_size),
                                control_group, control_group_size) == 0) result = 1;
            }
        }
    }
    tether_gio.close_sync(connection, NULL, NULL);
    tether_gio.object_unref(connection);
    return result;
}
