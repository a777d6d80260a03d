#define _GNU_SOURCE
#include "CTetherSecret.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* libsecret's SecretSchema (secret-schema.h, stable since 0.18), declared
   here so that nothing includes GLib's headers or links the library. */
struct schema_attribute {
    const char *name;
    int type; /* SECRET_SCHEMA_ATTRIBUTE_STRING is 0 */
};
struct schema {
    const char *name;
    int flags; /* SECRET_SCHEMA_NONE */
    struct schema_attribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
};
/* GLib's GError. */
struct gerror {
    unsigned int domain;
    int code;
    char *message;
};

static const struct schema tether_schema = {
    "org.tether.Credential", 0, {{"group", 0}, {"secret", 0}, {"account", 0}, {NULL, 0}}, 0,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

static struct {
    int (*store)(const struct schema *, void *, const char *, const char *, const char *, void *, struct gerror **);
    char *(*lookup)(const struct schema *, void *, void *, struct gerror **);
    int (*clear)(const struct schema *, void *, void *, struct gerror **);
    void (*free_secret)(char *);
    void *(*table_new)(unsigned int (*)(const void *), int (*)(const void *, const void *));
    int (*table_insert)(void *, void *, void *);
    void (*table_unref)(void *);
    unsigned int (*str_hash)(const void *);
    int (*str_equal)(const void *, const void *);
    void (*error_free)(struct gerror *);
    void *(*service_get)(int, void *, struct gerror **);
    void *(*collection_for_alias)(void *, const char *, int, void *, struct gerror **);
    int (*collection_locked)(void *);
    void (*object_unref)(void *);
    void *(*bus_get)(int, void *, struct gerror **);
    void (*set_exit_on_close)(void *, int);
    int (*is_closed)(void *);
    void (*service_disconnect)(void);
    unsigned int (*io_error_quark)(void);
    unsigned int (*dbus_error_quark)(void);
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char load_error[256];

static void load(void) {
    void *library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error,
                 "the keyring needs libsecret, which cannot be loaded (%s): on Debian and Ubuntu, sudo apt-get install libsecret-1-0",
                 why != NULL ? why : "not found");
        return;
    }
    /* libsecret's, then GLib's, through libsecret's own dependencies. */
    const struct { void **slot; const char *symbol; } wanted[] = {
        {(void **)&lib.store, "secret_password_storev_sync"}, {(void **)&lib.lookup, "secret_password_lookupv_sync"},
        {(void **)&lib.clear, "secret_password_clearv_sync"}, {(void **)&lib.free_secret, "secret_password_free"},
        {(void **)&lib.table_new, "g_hash_table_new"}, {(void **)&lib.table_insert, "g_hash_table_insert"},
        {(void **)&lib.table_unref, "g_hash_table_unref"}, {(void **)&lib.str_hash, "g_str_hash"},
        {(void **)&lib.str_equal, "g_str_equal"}, {(void **)&lib.error_free, "g_error_free"},
        {(void **)&lib.service_get, "secret_service_get_sync"},
        {(void **)&lib.collection_for_alias, "secret_collection_for_alias_sync"},
        {(void **)&lib.collection_locked, "secret_collection_get_locked"}, {(void **)&lib.object_unref, "g_object_unref"},
        {(void **)&lib.bus_get, "g_bus_get_sync"}, {(void **)&lib.set_exit_on_close, "g_dbus_connection_set_exit_on_close"},
        {(void **)&lib.is_closed, "g_dbus_connection_is_closed"}, {(void **)&lib.service_disconnect, "secret_service_disconnect"},
        {(void **)&lib.io_error_quark, "g_io_error_quark"}, {(void **)&lib.dbus_error_quark, "g_dbus_error_quark"},
    };
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        *wanted[i].slot = dlsym(library, wanted[i].symbol);
        if (*wanted[i].slot == NULL) {
            snprintf(load_error, sizeof load_error, "the libsecret found lacks %s: it is too old", wanted[i].symbol);
            return;
        }
    }
    loaded = 0;
}

/* GLib's shared session connection, which libsecret uses, held here with
   exit-on-close off: by default it ends the process with SIGTERM when the
   bus goes away, and a host outliving a desktop session must not. Held,
   so that it stays the shared one. Once closed it cannot be replaced while
   libsecret's leftovers hold it (GLib hands out the closed one again): the
   process must be restarted to reach a new bus, and is told so. */
static pthread_mutex_t connection_lock = PTHREAD_MUTEX_INITIALIZER;
static void *connection;
static const char bus_closed[] = "the session bus this process connected to has closed, and GLib cannot connect "
                                 "it to another: restart it to reach the keyring on the new bus";

/* Holds the shared connection (a new one if it has gone): 1 if it is
   open, -1 if GLib hands out only the closed one, 0 if there is no bus. */
static int hold_connection(void) {
    pthread_mutex_lock(&connection_lock);
    if (connection != NULL && lib.is_closed(connection)) {
        lib.object_unref(connection);
        connection = NULL;
    }
    if (connection == NULL) {
        struct gerror *gerror = NULL;
        connection = lib.bus_get(2 /* G_BUS_TYPE_SESSION */, NULL, &gerror);
        if (connection != NULL) lib.set_exit_on_close(connection, 0);
        if (gerror != NULL) lib.error_free(gerror);
    }
    int state = connection == NULL ? 0 : lib.is_closed(connection) ? -1 : 1;
    pthread_mutex_unlock(&connection_lock);
    return state;
}

int tether_secret_load(char *error, size_t error_size) {
    pthread_once(&once, load);
    if (loaded != 0 && error != NULL && error_size > 0) snprintf(error, error_size, "%s", load_error);
    /* At every call: a bus that appears after the first is held too, before
       libsecret makes the shared connection with exit-on-close on. */
    if (loaded == 0) hold_connection();
    return loaded;
}

/* The attributes as the GHashTable libsecret takes (keys and values are
   borrowed: the table frees neither). NULL on an odd list. */
static void *table(const char *const *attributes) {
    void *table = lib.table_new(lib.str_hash, lib.str_equal);
    for (size_t i = 0; attributes[i] != NULL; i += 2) {
        if (attributes[i + 1] == NULL) {
            lib.table_unref(table);
            return NULL;
        }
        lib.table_insert(table, (void *)attributes[i], (void *)attributes[i + 1]);
    }
    return table;
}

/* -1, with GLib's message (it never holds the secret) or `fallback`. */
static int failed(struct gerror *gerror, const char *fallback, char *error, size_t error_size) {
    if (error != NULL && error_size > 0) {
        snprintf(error, error_size, "%s", gerror != NULL && gerror->message != NULL ? gerror->message : fallback);
    }
    if (gerror != NULL) lib.error_free(gerror);
    return -1;
}

/* Whether `gerror` is what libsecret's cached service gives once its
   daemon restarted (the session it keeps is gone with it: an unmapped
   D-Bus error) or its connection closed. Anything else is an answer, a
   timeout included (a hung daemon is not asked twice, nor a user twice).
   0: the error stands (as when there is no bus at all). 1: the cached
   service was dropped; make the call once more, so that a long-lived host
   reaches a restarted keyring. -1: the bus is closed for good
   (`bus_closed` is the error). The dropped service is not freed: the
   password API keeps a reference to it, and so to the old connection. */
static int renewed(struct gerror **gerror) {
    if (*gerror == NULL) return 0;
    unsigned int domain = (*gerror)->domain;
    int code = (*gerror)->code;
    int stale = (domain == lib.io_error_quark() && (code == 18 /* CLOSED */ || code == 36 /* DBUS_ERROR */))
        || (domain == lib.dbus_error_quark() && (code == 2 /* SERVICE_UNKNOWN */ || code == 3 /* NAME_HAS_NO_OWNER */
                                                 || code == 15 /* DISCONNECTED */ || code == 19 /* UNKNOWN_METHOD */));
    if (!stale) return 0;
    lib.service_disconnect();
    int bus = hold_connection();
    if (bus == 0) return 0;  /* no bus at all: GLib's error says why */
    lib.error_free(*gerror);
    *gerror = NULL;
    return bus;
}

int tether_secret_store(const char *const *attributes, const char *label, const char *secret,
                        char *error, size_t error_size) {
    if (tether_secret_load(error, error_size) != 0) return -1;
    void *attributes_table = table(attributes);
    if (attributes_table == NULL) return failed(NULL, "an attribute has no value", error, error_size);
    struct gerror *gerror = NULL;
    int stored = lib.store(&tether_schema, attributes_table, NULL /* the default collection */, label, secret, NULL, &gerror);
    int again = stored ? 0 : renewed(&gerror);
    if (again > 0) stored = lib.store(&tether_schema, attributes_table, NULL, label, secret, NULL, &gerror);
    lib.table_unref(attributes_table);
    return stored ? 0 : failed(gerror, again < 0 ? bus_closed : "the keyring did not store the secret", error, error_size);
}

int tether_secret_lookup(const char *const *attributes, char **secret, char *error, size_t error_size) {
    *secret = NULL;
    if (tether_secret_load(error, error_size) != 0) return -1;
    void *attributes_table = table(attributes);
    if (attributes_table == NULL) return failed(NULL, "an attribute has no value", error, error_size);
    struct gerror *gerror = NULL;
    char *found = lib.lookup(&tether_schema, attributes_table, NULL, &gerror);
    int again = found != NULL ? 0 : renewed(&gerror);
    if (again > 0) found = lib.lookup(&tether_schema, attributes_table, NULL, &gerror);
    lib.table_unref(attributes_table);
    if (gerror != NULL || again < 0) {
        if (found != NULL) lib.free_secret(found);
        return failed(gerror, bus_closed, error, error_size);
    }
    *secret = found;
    return found != NULL ? 1 : 0;
}

int tether_secret_clear(const char *const *attributes, char *error, size_t error_size) {
    if (tether_secret_load(error, error_size) != 0) return -1;
    void *attributes_table = table(attributes);
    if (attributes_table == NULL) return failed(NULL, "an attribute has no value", error, error_size);
    struct gerror *gerror = NULL;
    int removed = lib.clear(&tether_schema, attributes_table, NULL, &gerror);
    int again = removed ? 0 : renewed(&gerror);
    if (again > 0) removed = lib.clear(&tether_schema, attributes_table, NULL, &gerror);
    lib.table_unref(attributes_table);
    if (gerror != NULL || again < 0) return failed(gerror, bus_closed, error, error_size);
    return removed ? 1 : 0;
}

static int default_locked(struct gerror **gerror) {
    void *service = lib.service_get(0, NULL, gerror);
    if (service == NULL) return -1;
    void *collection = lib.collection_for_alias(service, "default", 0, NULL, gerror);
    lib.object_unref(service);
    if (collection == NULL) return -1;
    int locked = lib.collection_locked(collection) ? 1 : 0;
    lib.object_unref(collection);
    return locked;
}

int tether_secret_default_locked(char *error, size_t error_size) {
    if (tether_secret_load(error, error_size) != 0) return -1;
    struct gerror *gerror = NULL;
    int locked = default_locked(&gerror);
    int again = locked >= 0 ? 0 : renewed(&gerror);
    if (again > 0) locked = default_locked(&gerror);
    return locked >= 0 ? locked : failed(gerror, again < 0 ? bus_closed : "the keyring has no default collection", error, error_size);
}

void tether_secret_free(char *secret) {
    if (secret != NULL && loaded == 0) lib.free_secret(secret);
}
