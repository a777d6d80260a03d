#ifndef CTETHER_GIO_LIBRARY_H
#define CTETHER_GIO_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

/* The part of GIO the project's one D-Bus client uses (the desktop
   notifier, the service manager's questions), loaded at the first
   connection (dlopen), like the keyring's libsecret: nothing links GLib,
   and a process that never asks never maps it. */

struct gerror {
    unsigned int domain;
    int code;
    char *message;
};

struct gio_library {
    void *(*connection_new)(const char *, int, void *, void *, struct gerror **);
    unsigned (*add_filter)(void *, void *(*)(void *, void *, int, void *), void *, void (*)(void *));
    void (*remove_filter)(void *, unsigned);
    int (*send_message)(void *, void *, int, uint32_t *, struct gerror **);
    int (*is_closed)(void *);
    void (*close)(void *, void *, void *, void *);
    int (*close_sync)(void *, void *, struct gerror **);
    void *(*call_sync)(void *, const char *, const char *, const char *, const char *, void *, void *, int, int, void *,
                       struct gerror **);
    int (*variant_get_boolean)(void *);
    const char *(*variant_get_string)(void *, size_t *);
    void *(*message_new_method_call)(const char *, const char *, const char *, const char *);
    void (*message_set_body)(void *, void *);
    int (*message_get_type)(void *);
    uint32_t (*message_get_reply_serial)(void *);
    const char *(*message_get_interface)(void *);
    const char *(*message_get_member)(void *);
    const char *(*message_get_sender)(void *);
    const char *(*message_get_error_name)(void *);
    void *(*message_get_body)(void *);
    void *(*variant_new)(const char *, ...);
    void (*variant_get)(void *, const char *, ...);
    const char *(*variant_get_type_string)(void *);
    void *(*builder_new)(const char *);
    void (*builder_add)(void *, const char *, ...);
    void *(*builder_end)(void *);
    void (*builder_unref)(void *);
    void *(*variant_new_byte)(unsigned char);
    void *(*variant_new_string)(const char *);
    int (*utf8_validate)(const char *, long, const char **);
    void *(*connection_get_stream)(void *);
    unsigned long (*socket_connection_get_type)(void);
    int (*type_check_instance_is_a)(void *, unsigned long);
    void *(*socket_connection_get_socket)(void *);
    int (*socket_get_fd)(void *);
    void *(*variant_get_child_value)(void *, size_t);
    const char **(*variant_get_strv)(void *, size_t *);
    void (*variant_unref)(void *);
    void (*free)(void *);
    void (*object_unref)(void *);
    void (*error_free)(struct gerror *);
};

extern struct gio_library tether_gio;

/* Loads GIO once; 0, or -1 with why in `*error`. Thread-safe. */
int tether_gio_load(const char **error);

#endif
