// Each function passes its typed last argument on to libcurl's variadic call,
// or calls libcurl through the table `ccurl_load` fills; see ccurl.h for why
// each exists and why libcurl is loaded only when a transfer needs it.
#include "ccurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// libcurl's functions, found by name in the library `ccurl_load` opened.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    curl_mime *(*mime_init)(CURL *);
    curl_mimepart *(*mime_addpart)(curl_mime *);
    CURLcode (*mime_name)(curl_mimepart *, const char *);
    CURLcode (*mime_filename)(curl_mimepart *, const char *);
    CURLcode (*mime_type)(curl_mimepart *, const char *);
    CURLcode (*mime_data)(curl_mimepart *, const char *, size_t);
    void (*mime_free)(curl_mime *);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512] = "libcurl was not loaded";

// Every symbol or none: a table half filled is never used.
static void load(void) {
    void *library = dlopen(CCURL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "dlopen failed");
        return;
    }
#define CCURL_SYMBOL(member, name)                                                                   \
    do {                                                                                             \
        *(void **)(&api.member) = dlsym(library, name);                                              \
        if (api.member == NULL) {                                                                    \
            snprintf(load_error, sizeof load_error, "%s has no %s", CCURL_LIBRARY, name);            \
            return;                                                                                  \
        }                                                                                            \
    } while (0)
    CCURL_SYMBOL(global_init, "curl_global_init");
    CCURL_SYMBOL(easy_init, "curl_easy_init");
    CCURL_SYMBOL(easy_cleanup, "curl_easy_cleanup");
    CCURL_SYMBOL(easy_reset, "curl_easy_reset");
    CCURL_SYMBOL(easy_perform, "curl_easy_perform");
    CCURL_SYMBOL(easy_strerror, "curl_easy_strerror");
    CCURL_SYMBOL(easy_setopt, "curl_easy_setopt");
    CCURL_SYMBOL(easy_getinfo, "curl_easy_getinfo");
    CCURL_SYMBOL(slist_append, "curl_slist_append");
    CCURL_SYMBOL(slist_free_all, "curl_slist_free_all");
    CCURL_SYMBOL(mime_init, "curl_mime_init");
    CCURL_SYMBOL(mime_addpart, "curl_mime_addpart");
    CCURL_SYMBOL(mime_name, "curl_mime_name");
    CCURL_SYMBOL(mime_filename, "curl_mime_filename");
    CCURL_SYMBOL(mime_type, "curl_mime_type");
    CCURL_SYMBOL(mime_data, "curl_mime_data");
    CCURL_SYMBOL(mime_free, "curl_mime_free");
#undef CCURL_SYMBOL
    loaded = 1;
}

const char *ccurl_load(void) {
    pthread_once(&load_once, load);
    return loaded ? NULL : load_error;
}

// Before a successful `ccurl_load` every call fails as libcurl's own calls
// fail (NULL, CURLE_FAILED_INIT), never through a null pointer.
CURLcode ccurl_global_init(long flags) { return loaded ? api.global_init(flags) : CURLE_FAILED_INIT; }
CURL *ccurl_easy_init(void) { return loaded ? api.easy_init() : NULL; }
void ccurl_easy_cleanup(CURL *handle) { if (loaded) api.easy_cleanup(handle); }
void ccurl_easy_reset(CURL *handle) { if (loaded) api.easy_reset(handle); }
CURLcode ccurl_easy_perform(CURL *handle) { return loaded ? api.easy_perform(handle) : CURLE_FAILED_INIT; }
const char *ccurl_easy_strerror(CURLcode code) { return loaded ? api.easy_strerror(code) : load_error; }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *text) {
    return loaded ? api.slist_append(list, text) : NULL;
}
void ccurl_slist_free_all(struct curl_slist *list) { if (loaded) api.slist_free_all(list); }
curl_mime *ccurl_mime_init(CURL *handle) { return loaded ? api.mime_init(handle) : NULL; }
curl_mimepart *ccurl_mime_addpart(curl_mime *mime) { return loaded ? api.mime_addpart(mime) : NULL; }
CURLcode ccurl_mime_name(curl_mimepart *part, const char *name) {
    return loaded ? api.mime_name(part, name) : CURLE_FAILED_INIT;
}
CURLcode ccurl_mime_filename(curl_mimepart *part, const char *name) {
    return loaded ? api.mime_filename(part, name) : CURLE_FAILED_INIT;
}
CURLcode ccurl_mime_type(curl_mimepart *part, const char *type) {
    return loaded ? api.mime_type(part, type) : CURLE_FAILED_INIT;
}
CURLcode ccurl_mime_data(curl_mimepart *part, const char *data, size_t size) {
    return loaded ? api.mime_data(part, data, size) : CURLE_FAILED_INIT;
}
void ccurl_mime_free(curl_mime *mime) { if (loaded) api.mime_free(mime); }

// Each typed setter and getter is libcurl's variadic call with its last
// argument's type spelled out (which Swift cannot call), failing as libcurl
// fails (CURLE_FAILED_INIT) before a successful `ccurl_load`.
#define CCURL_PASS_ON(function, Selector, Value, call)                                           \
    CURLcode ccurl_##function(CURL *handle, Selector selector, Value value) {                    \
        return loaded ? api.call(handle, selector, value) : CURLE_FAILED_INIT;                   \
    }
CCURL_PASS_ON(setopt_long, CURLoption, long, easy_setopt)
CCURL_PASS_ON(setopt_off_t, CURLoption, curl_off_t, easy_setopt)
CCURL_PASS_ON(setopt_string, CURLoption, const char *, easy_setopt)
CCURL_PASS_ON(setopt_pointer, CURLoption, void *, easy_setopt)
CCURL_PASS_ON(setopt_slist, CURLoption, struct curl_slist *, easy_setopt)
CCURL_PASS_ON(setopt_mime, CURLoption, curl_mime *, easy_setopt)
CCURL_PASS_ON(setopt_write_callback, CURLoption, curl_write_callback, easy_setopt)
CCURL_PASS_ON(setopt_read_callback, CURLoption, curl_read_callback, easy_setopt)
CCURL_PASS_ON(setopt_xferinfo_callback, CURLoption, curl_xferinfo_callback, easy_setopt)
CCURL_PASS_ON(getinfo_long, CURLINFO, long *, easy_getinfo)
CCURL_PASS_ON(getinfo_off_t, CURLINFO, curl_off_t *, easy_getinfo)
CCURL_PASS_ON(getinfo_double, CURLINFO, double *, easy_getinfo)
CCURL_PASS_ON(getinfo_string, CURLINFO, const char **, easy_getinfo)
#undef CCURL_PASS_ON

