#define _GNU_SOURCE
#include "CTetherCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* The functions Tether calls, looked up once. */
static struct {
    int (*global_init)(long flags);
    void *(*easy_init)(void);
    void (*easy_cleanup)(void *);
    int (*easy_setopt)(void *, int, ...);
    int (*easy_getinfo)(void *, int, ...);
    void *(*multi_init)(void);
    int (*multi_cleanup)(void *);
    int (*multi_setopt)(void *, int, ...);
    int (*multi_add_handle)(void *, void *);
    int (*multi_remove_handle)(void *, void *);
    int (*multi_socket_action)(void *, int, int, int *);
    void *(*multi_info_read)(void *, int *);
    void *(*slist_append)(void *, const char *);
    void (*slist_free_all)(void *);
} curl;

/* struct CURLMsg: what curl_multi_info_read returns. */
struct curl_message {
    int msg; /* CURLMSG_DONE is 1 */
    void *easy_handle;
    union { void *whatever; int result; } data;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char load_error[256];

/* Debian and Ubuntu ship OpenSSL's flavour as libcurl.so.4 (package
   libcurl4, libcurl4t64 since Debian 13); the GnuTLS one is there as
   often, for other programs. Only ABI 4: the declarations here are its. */
static const char *const library_names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", NULL};

#define FIND(field, symbol)                                                                   \
    do {                                                                                      \
        *(void **)(&curl.field) = dlsym(library, symbol);                                    \
        if (curl.field == NULL) {                                                             \
            snprintf(load_error, sizeof load_error, "the libcurl found lacks %s: it is too old", symbol); \
            return;                                                                           \
        }                                                                                     \
    } while (0)

static void load(void) {
    void *library = NULL;
    const char *first_error = NULL;
    char reason[160] = "";
    for (const char *const *name = library_names; *name != NULL && library == NULL; name++) {
        library = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
        if (library == NULL && first_error == NULL) {
            first_error = dlerror();
            if (first_error != NULL) snprintf(reason, sizeof reason, "%s", first_error);
        }
    }
    if (library == NULL) {
        snprintf(load_error, sizeof load_error,
                 "HTTP needs libcurl, which cannot be loaded (%s): on Debian and Ubuntu, sudo apt-get install libcurl4",
                 reason[0] != '\0' ? reason : "not found");
        return;
    }
    FIND(global_init, "curl_global_init");
    FIND(easy_init, "curl_easy_init");
    FIND(easy_cleanup, "curl_easy_cleanup");
    FIND(easy_setopt, "curl_easy_setopt");
    FIND(easy_getinfo, "curl_easy_getinfo");
    FIND(multi_init, "curl_multi_init");
    FIND(multi_cleanup, "curl_multi_cleanup");
    FIND(multi_setopt, "curl_multi_setopt");
    FIND(multi_add_handle, "curl_multi_add_handle");
    FIND(multi_remove_handle, "curl_multi_remove_handle");
    FIND(multi_socket_action, "curl_multi_socket_action");
    FIND(multi_info_read, "curl_multi_info_read");
    FIND(slist_append, "curl_slist_append");
    FIND(slist_free_all, "curl_slist_free_all");
    /* CURL_GLOBAL_DEFAULT; not thread-safe in older releases, hence once. */
    if (curl.global_init(3) != 0) {
        snprintf(load_error, sizeof load_error, "libcurl did not initialize");
        return;
    }
    loaded = 0;
}

int tether_curl_load(char *error, size_t error_size) {
    pthread_once(&once, load);
    if (loaded != 0 && error != NULL && error_size > 0) {
        snprintf(error, error_size, "%s", load_error);
    }
    return loaded;
}

tether_curl_easy *tether_curl_easy_init(void) { return curl.easy_init(); }
void tether_curl_easy_cleanup(tether_curl_easy *easy) { curl.easy_cleanup(easy); }

int tether_curl_easy_setopt_long(tether_curl_easy *easy, int option, long value) {
    return curl.easy_setopt(easy, option, value);
}

int tether_curl_easy_setopt_pointer(tether_curl_easy *easy, int option, const void *value) {
    return curl.easy_setopt(easy, option, value);
}

int tether_curl_easy_setopt_offset(tether_curl_easy *easy, int option, int64_t value) {
    return curl.easy_setopt(easy, option, value); /* curl_off_t: int64_t on LP64 */
}

/* struct curl_sockaddr, what curl passes to CURLOPT_OPENSOCKETFUNCTION. */
struct curl_socket_address {
    int family;
    int socktype;
    int protocol;
    unsigned int addrlen;
    struct sockaddr addr;
};

static int open_cloexec_socket(void *client, int purpose, struct curl_socket_address *address) {
    (void)client;
    (void)purpose;
    int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    return fd < 0 ? -1 /* CURL_SOCKET_BAD */ : fd;
}

int tether_curl_easy_set_cloexec_sockets(tether_curl_easy *easy) {
    return curl.easy_setopt(easy, 20163 /* CURLOPT_OPENSOCKETFUNCTION */, open_cloexec_socket);
}

int tether_curl_easy_set_writer(tether_curl_easy *easy, tether_curl_write_callback callback, void *transfer) {
    int rc = curl.easy_setopt(easy, 20011 /* CURLOPT_WRITEFUNCTION */, callback);
    return rc != 0 ? rc : curl.easy_setopt(easy, 10001 /* CURLOPT_WRITEDATA */, transfer);
}

int tether_curl_easy_getinfo_long(tether_curl_easy *easy, int info, long *value) {
    return curl.easy_getinfo(easy, info, value);
}

tether_curl_multi *tether_curl_multi_init(void) { return curl.multi_init(); }
int tether_curl_multi_cleanup(tether_curl_multi *multi) { return curl.multi_cleanup(multi); }

int tether_curl_multi_set_callbacks(tether_curl_multi *multi, tether_curl_socket_callback on_socket,
                                    tether_curl_timer_callback on_timer, void *client) {
    int rc = curl.multi_setopt(multi, 20001 /* CURLMOPT_SOCKETFUNCTION */, on_socket);
    if (rc == 0) rc = curl.multi_setopt(multi, 10002 /* CURLMOPT_SOCKETDATA */, client);
    if (rc == 0) rc = curl.multi_setopt(multi, 20004 /* CURLMOPT_TIMERFUNCTION */, on_timer);
    if (rc == 0) rc = curl.multi_setopt(multi, 10005 /* CURLMOPT_TIMERDATA */, client);
    return rc;
}

int tether_curl_multi_add_handle(tether_curl_multi *multi, tether_curl_easy *easy) {
    return curl.multi_add_handle(multi, easy);
}

int tether_curl_multi_remove_handle(tether_curl_multi *multi, tether_curl_easy *easy) {
    return curl.multi_remove_handle(multi, easy);
}

int tether_curl_multi_socket_action(tether_curl_multi *multi, int socket, int events, int *running) {
    return curl.multi_socket_action(multi, socket, events, running);
}

tether_curl_easy *tether_curl_multi_next_done(tether_curl_multi *multi, int *result) {
    int queued = 0;
    struct curl_message *message;
    while ((message = curl.multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == 1 /* CURLMSG_DONE */) {
            *result = message->data.result;
            return message->easy_handle;
        }
    }
    return NULL;
}

tether_curl_slist *tether_curl_slist_append(tether_curl_slist *list, const char *line) {
    return curl.slist_append(list, line);
}

/* struct curl_slist */
struct curl_string_list {
    char *data;
    struct curl_string_list *next;
};

void tether_curl_slist_free_all_cleared(tether_curl_slist *list) {
    for (struct curl_string_list *item = list; item != NULL; item = item->next) {
        if (item->data != NULL) explicit_bzero(item->data, strlen(item->data));
    }
    curl.slist_free_all(list);
}
