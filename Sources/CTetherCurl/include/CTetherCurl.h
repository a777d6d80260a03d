#ifndef CTETHER_CURL_H
#define CTETHER_CURL_H

#include <stddef.h>
#include <stdint.h>

/* libcurl, loaded with dlopen at the first HTTP request: a process that
   never does HTTP never maps it, and nothing is needed at build time but
   this file. Its ABI is stable (curl's numbers never change meaning), so
   what Tether uses of it is declared here rather than taken from
   <curl/curl.h>, which would make libcurl's development package a build
   dependency of every extension. curl_easy_setopt and friends are variadic:
   Swift calls them through the typed wrappers below. */

/* Handles, as curl hands them out. */
typedef void tether_curl_easy;
typedef void tether_curl_multi;
typedef void tether_curl_slist;

/* Options (curl.h: CURLOPTTYPE_LONG 0, OBJECTPOINT 10000, FUNCTIONPOINT
   20000, OFF_T 30000, plus the option's number). */
enum {
    TETHER_CURLOPT_URL = 10002,
    TETHER_CURLOPT_HTTPHEADER = 10023,
    TETHER_CURLOPT_CUSTOMREQUEST = 10036,
    TETHER_CURLOPT_NOPROGRESS = 43,
    TETHER_CURLOPT_NOBODY = 44,
    TETHER_CURLOPT_POST = 47,
    TETHER_CURLOPT_FOLLOWLOCATION = 52,
    TETHER_CURLOPT_SSL_VERIFYPEER = 64,
    TETHER_CURLOPT_HTTPGET = 80,
    TETHER_CURLOPT_SSL_VERIFYHOST = 81,
    TETHER_CURLOPT_NOSIGNAL = 99,
    TETHER_CURLOPT_PROTOCOLS = 181,          /* bitmask, before 7.85 */
    TETHER_CURLOPT_REDIR_PROTOCOLS = 182,
    TETHER_CURLOPT_MAXFILESIZE_LARGE = 30117,
    TETHER_CURLOPT_POSTFIELDSIZE_LARGE = 30120,
    TETHER_CURLOPT_TIMEOUT_MS = 155,
    TETHER_CURLOPT_CONNECTTIMEOUT_MS = 156,
    TETHER_CURLOPT_PROTOCOLS_STR = 10318,    /* 7.85 and later */
    TETHER_CURLOPT_REDIR_PROTOCOLS_STR = 10319,
    TETHER_CURLOPT_NOPROXY = 10177,
    TETHER_CURLOPT_POSTFIELDS = 10015,
    TETHER_CURLOPT_QUICK_EXIT = 322,         /* 7.87 and later */
};

/* CURLPROTO_HTTP | CURLPROTO_HTTPS */
enum { TETHER_CURLPROTO_HTTP_HTTPS = 3 };

/* CURLINFO_LONG (0x200000) + the number. */
enum { TETHER_CURLINFO_RESPONSE_CODE = 0x200002, TETHER_CURLINFO_OS_ERRNO = 0x200019 };

/* The socket callback's actions and socket_action's event bits. */
enum {
    TETHER_CURL_POLL_IN = 1,
    TETHER_CURL_POLL_OUT = 2,
    TETHER_CURL_POLL_REMOVE = 4,
    TETHER_CURL_CSELECT_IN = 1,
    TETHER_CURL_CSELECT_OUT = 2,
    TETHER_CURL_CSELECT_ERR = 4,
    TETHER_CURL_SOCKET_TIMEOUT = -1,
};

/* CURLcode values Tether tells apart. */
enum {
    TETHER_CURLE_OK = 0,
    TETHER_CURLE_UNSUPPORTED_PROTOCOL = 1,
    TETHER_CURLE_URL_MALFORMAT = 3,
    TETHER_CURLE_COULDNT_RESOLVE_PROXY = 5,
    TETHER_CURLE_COULDNT_RESOLVE_HOST = 6,
    TETHER_CURLE_COULDNT_CONNECT = 7,
    TETHER_CURLE_WEIRD_SERVER_REPLY = 8,
    TETHER_CURLE_HTTP2 = 16,
    TETHER_CURLE_PARTIAL_FILE = 18,
    TETHER_CURLE_OPERATION_TIMEDOUT = 28,
    TETHER_CURLE_SSL_CONNECT_ERROR = 35,
    TETHER_CURLE_GOT_NOTHING = 52,
    TETHER_CURLE_SEND_ERROR = 55,
    TETHER_CURLE_RECV_ERROR = 56,
    TETHER_CURLE_SSL_CERTPROBLEM = 58,
    TETHER_CURLE_SSL_CIPHER = 59,
    TETHER_CURLE_PEER_FAILED_VERIFICATION = 60,
    TETHER_CURLE_BAD_CONTENT_ENCODING = 61,
    TETHER_CURLE_FILESIZE_EXCEEDED = 63,
    TETHER_CURLE_SSL_CACERT_BADFILE = 77,
    TETHER_CURLE_SSL_PINNEDPUBKEYNOTMATCH = 90,
    TETHER_CURLE_SSL_INVALIDCERTSTATUS = 91,
    TETHER_CURLE_HTTP2_STREAM = 92,
    TETHER_CURLE_HTTP3 = 95,
};

/* curl_socket_callback and curl_multi_timer_callback. */
typedef int (*tether_curl_socket_callback)(tether_curl_easy *easy, int socket, int action, void *client, void *socket_data);
typedef int (*tether_curl_timer_callback)(tether_curl_multi *multi, long timeout_ms, void *client);
/* CURLOPT_WRITEFUNCTION */
typedef size_t (*tether_curl_write_callback)(char *data, size_t size, size_t count, void *transfer);

/* Loads libcurl (once per process; later calls return the first result)
   and runs curl_global_init. 0, or -1 with a reason in `error`. */
int tether_curl_load(char *error, size_t error_size);

tether_curl_easy *tether_curl_easy_init(void);
void tether_curl_easy_cleanup(tether_curl_easy *easy);
int tether_curl_easy_setopt_long(tether_curl_easy *easy, int option, long value);
int tether_curl_easy_setopt_pointer(tether_curl_easy *easy, int option, const void *value);
int tether_curl_easy_setopt_offset(tether_curl_easy *easy, int option, int64_t value);
/* CURLOPT_OPENSOCKETFUNCTION: every socket curl opens is close-on-exec, as
   every descriptor Tether opens is. */
int tether_curl_easy_set_cloexec_sockets(tether_curl_easy *easy);
/* CURLOPT_WRITEFUNCTION and CURLOPT_WRITEDATA */
int tether_curl_easy_set_writer(tether_curl_easy *easy, tether_curl_write_callback callback, void *transfer);
int tether_curl_easy_getinfo_long(tether_curl_easy *easy, int info, long *value);

tether_curl_multi *tether_curl_multi_init(void);
int tether_curl_multi_cleanup(tether_curl_multi *multi);
/* CURLMOPT_SOCKETFUNCTION/SOCKETDATA and CURLMOPT_TIMERFUNCTION/TIMERDATA */
int tether_curl_multi_set_callbacks(tether_curl_multi *multi, tether_curl_socket_callback on_socket,
                                    tether_curl_timer_callback on_timer, void *client);
int tether_curl_multi_add_handle(tether_curl_multi *multi, tether_curl_easy *easy);
int tether_curl_multi_remove_handle(tether_curl_multi *multi, tether_curl_easy *easy);
int tether_curl_multi_socket_action(tether_curl_multi *multi, int socket, int events, int *running);
/* The next finished transfer (curl_multi_info_read's CURLMSG_DONE), with
   its CURLcode in `result`; NULL when there is none. */
tether_curl_easy *tether_curl_multi_next_done(tether_curl_multi *multi, int *result);

tether_curl_slist *tether_curl_slist_append(tether_curl_slist *list, const char *line);
/* Clears each line (a header may carry a token) before curl frees the list. */
void tether_curl_slist_free_all_cleared(tether_curl_slist *list);

#endif
