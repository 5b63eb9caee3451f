// CCurl: makes libcurl callable from Swift, and nothing else.
//
// Swift cannot call C variadic functions, and libcurl's option and info
// calls are variadic: `curl_easy_setopt(CURL *, CURLoption, ...)` and
// `curl_easy_getinfo(CURL *, CURLINFO, ...)`. Each function below fixes the
// type of that last argument for one kind of option, so the Swift compiler
// checks it and the C compiler passes it the way libcurl reads it with
// `va_arg`.
//
// libcurl is not linked: `ccurl_load` opens it (dlopen) the first time a
// transfer needs it, and every other function calls through the table it
// fills. Linking it made every jqc command, `jqc --version` included, load
// libcurl's 30-odd libraries and run their constructors (GnuTLS's among them
// through librtmp): about 7 ms of CPU at each start on this project's
// machines, for the few commands that talk to a server.
//
// Every symbol is prefixed `ccurl_` so it can never clash with libcurl's own.
#ifndef CCURL_H
#define CCURL_H

#include <curl/curl.h>

/// The library opened: libcurl's soname, as the Debian package libcurl4
/// (a dependency of jqc's package) installs it.
#define CCURL_LIBRARY "libcurl.so.4"

// MARK: - Loading

/// Opens libcurl and finds every function this module calls, once per
/// process (later calls return the first outcome): NULL when it is loaded,
/// else why not (dlopen's error, or the function missing). Every other
/// function here fails as libcurl fails (NULL, CURLE_FAILED_INIT) until then.
const char *ccurl_load(void);

// MARK: - libcurl's own functions, through the loaded table

CURLcode ccurl_global_init(long flags);
CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *handle);
void ccurl_easy_reset(CURL *handle);
CURLcode ccurl_easy_perform(CURL *handle);
const char *ccurl_easy_strerror(CURLcode code);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *text);
void ccurl_slist_free_all(struct curl_slist *list);
curl_mime *ccurl_mime_init(CURL *handle);
curl_mimepart *ccurl_mime_addpart(curl_mime *mime);
CURLcode ccurl_mime_name(curl_mimepart *part, const char *name);
CURLcode ccurl_mime_filename(curl_mimepart *part, const char *name);
CURLcode ccurl_mime_type(curl_mimepart *part, const char *type);
CURLcode ccurl_mime_data(curl_mimepart *part, const char *data, size_t size);
void ccurl_mime_free(curl_mime *mime);

// MARK: - Options (curl_easy_setopt)

/// For `CURLOPTTYPE_LONG` options (timeouts, flags such as
/// CURLOPT_SSL_VERIFYPEER): libcurl reads a C `long`, which a Swift `Int`
/// passed through `...` would only match by accident of the platform.
CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value);

/// For `CURLOPTTYPE_OFF_T` options (CURLOPT_POSTFIELDSIZE_LARGE): libcurl
/// reads a `curl_off_t`, which differs from `long` on some platforms.
CURLcode ccurl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);

/// For `CURLOPTTYPE_STRINGPOINT` options (CURLOPT_URL, CURLOPT_CAINFO):
/// libcurl copies the string (except CURLOPT_POSTFIELDS), so Swift's
/// temporary C string only has to live for the call.
CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value);

/// For `CURLOPTTYPE_OBJECTPOINT` options that take an untyped pointer
/// (CURLOPT_WRITEDATA, CURLOPT_HEADERDATA, CURLOPT_ERRORBUFFER).
CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value);

/// For CURLOPT_HTTPHEADER and the other list options: typed, so Swift cannot
/// pass anything but a `curl_slist` where libcurl expects one.
CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);

/// For CURLOPT_MIMEPOST: typed, because Swift imports `curl_mime *` as an
/// opaque pointer that does not convert to `void *` by itself.
CURLcode ccurl_setopt_mime(CURL *handle, CURLoption option, curl_mime *value);

/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION, which share this
/// signature: a function pointer cannot go through Swift's `...` at all.
CURLcode ccurl_setopt_write_callback(CURL *handle, CURLoption option, curl_write_callback callback);

/// For CURLOPT_READFUNCTION (streaming an upload from a callback), for the
/// same reason as `ccurl_setopt_write_callback`.
CURLcode ccurl_setopt_read_callback(CURL *handle, CURLoption option, curl_read_callback callback);

/// For CURLOPT_XFERINFOFUNCTION (progress, and the chance to abort a
/// transfer at least about once a second even while nothing arrives).
CURLcode ccurl_setopt_xferinfo_callback(CURL *handle, CURLoption option, curl_xferinfo_callback callback);

// MARK: - Information (curl_easy_getinfo)

/// For `CURLINFO_LONG` items (CURLINFO_RESPONSE_CODE, CURLINFO_NUM_CONNECTS):
/// libcurl writes through a `long *`.
CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value);

/// For `CURLINFO_OFF_T` items (CURLINFO_TOTAL_TIME_T, sizes): libcurl writes
/// through a `curl_off_t *`.
CURLcode ccurl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

/// For `CURLINFO_DOUBLE` items (the older timing items).
CURLcode ccurl_getinfo_double(CURL *handle, CURLINFO info, double *value);

/// For `CURLINFO_STRING` items (CURLINFO_REDIRECT_URL): libcurl stores a
/// pointer to a string it owns, valid until the next transfer on the handle,
/// or NULL.
CURLcode ccurl_getinfo_string(CURL *handle, CURLINFO info, const char **value);

#endif
