#define _GNU_SOURCE
#include "GIOLibrary.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

struct gio_library tether_gio;

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
        {(void **)&tether_gio.connection_new, "g_dbus_connection_new_for_address_sync"},
        {(void **)&tether_gio.add_filter, "g_dbus_connection_add_filter"},
        {(void **)&tether_gio.remove_filter, "g_dbus_connection_remove_filter"},
        {(void **)&tether_gio.send_message, "g_dbus_connection_send_message"},
        {(void **)&tether_gio.is_closed, "g_dbus_connection_is_closed"},
        {(void **)&tether_gio.close, "g_dbus_connection_close"},
        {(void **)&tether_gio.close_sync, "g_dbus_connection_close_sync"},
        {(void **)&tether_gio.call_sync, "g_dbus_connection_call_sync"},
        {(void **)&tether_gio.variant_get_boolean, "g_variant_get_boolean"},
        {(void **)&tether_gio.variant_get_string, "g_variant_get_string"},
        {(void **)&tether_gio.message_new_method_call, "g_dbus_message_new_method_call"},
        {(void **)&tether_gio.message_set_body, "g_dbus_message_set_body"},
        {(void **)&tether_gio.message_get_type, "g_dbus_message_get_message_type"},
        {(void **)&tether_gio.message_get_reply_serial, "g_dbus_message_get_reply_serial"},
        {(void **)&tether_gio.message_get_interface, "g_dbus_message_get_interface"},
        {(void **)&tether_gio.message_get_member, "g_dbus_message_get_member"},
        {(void **)&tether_gio.message_get_sender, "g_dbus_message_get_sender"},
        {(void **)&tether_gio.message_get_error_name, "g_dbus_message_get_error_name"},
        {(void **)&tether_gio.message_get_body, "g_dbus_message_get_body"},
        {(void **)&tether_gio.variant_new, "g_variant_new"}, {(void **)&tether_gio.variant_get, "g_variant_get"},
        {(void **)&tether_gio.variant_get_type_string, "g_variant_get_type_string"},
        {(void **)&tether_gio.builder_new, "g_variant_builder_new"}, {(void **)&tether_gio.builder_add, "g_variant_builder_add"},
        {(void **)&tether_gio.builder_end, "g_variant_builder_end"}, {(void **)&tether_gio.builder_unref, "g_variant_builder_unref"},
        {(void **)&tether_gio.variant_new_byte, "g_variant_new_byte"},
        {(void **)&tether_gio.variant_new_string, "g_variant_new_string"},
        {(void **)&tether_gio.utf8_validate, "g_utf8_validate"},
        {(void **)&tether_gio.connection_get_stream, "g_dbus_connection_get_stream"},
        {(void **)&tether_gio.socket_connection_get_type, "g_socket_connection_get_type"},
        {(void **)&tether_gio.type_check_instance_is_a, "g_type_check_instance_is_a"},
        {(void **)&tether_gio.socket_connection_get_socket, "g_socket_connection_get_socket"},
        {(void **)&tether_gio.socket_get_fd, "g_socket_get_fd"},
        {(void **)&tether_gio.variant_get_child_value, "g_variant_get_child_value"},
        {(void **)&tether_gio.variant_get_strv, "g_variant_get_strv"}, {(void **)&tether_gio.variant_unref, "g_variant_unref"},
        {(void **)&tether_gio.free, "g_free"},
        {(void **)&tether_gio.object_unref, "g_object_unref"}, {(void **)&tether_gio.error_free, "g_error_free"},
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

int tether_gio_load(const char **error) {
    pthread_once(&once, load);
    if (loaded != 0) *error = load_error;
    return loaded;
}
