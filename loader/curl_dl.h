/*
 * curl_dl.h — private to loader/curl_*.c and store_http.c: libcurl, loaded
 * with dlopen by the first HTTP(S) or S3 client (curlu_open), not linked.
 *
 * Why: linked, libcurl and its ~35 libraries (GnuTLS, Kerberos, LDAP, SSH,
 * RTMP, ...) run their constructors at every start of every program that
 * links the loader: 8-11 ms of CPU per start (15 ms in the ASan build), paid
 * by each `weightctl`, `wt-mkckpt` and test binary whether or not it reads
 * a URL (docs/architecture.md 2.1). Only a process that opens an
 * http(s):// or s3:// source pays it now, once.
 *
 * Every libcurl function the loader calls is a member of wt_curl, named
 * without the "curl_" prefix and with the function's own type
 * (`wt_curl.easy_init()` for curl_easy_init()). curl_dl_load() fills them;
 * until it succeeds they are NULL. A libcurl that cannot be loaded, or lacks
 * one of them (older than the headers this was built with), is WT_EUNSUPPORTED
 * naming the library, the symbol and the fix.
 *
 * WEIGHTD_LIBCURL names the library to load instead of libcurl.so.4 (a path
 * or a soname: a libcurl built with other protocols or TLS back-ends).
 */
#ifndef WT_LOADER_CURL_DL_H
#define WT_LOADER_CURL_DL_H

#include <curl/curl.h>

#include "weights/error.h"

/* The default library: the soname of libcurl's ABI 4 (every libcurl since 7.16). */
#define CURL_DL_SONAME "libcurl.so.4"

/* X(name): curl_<name> is called through wt_curl.name. */
#define CURL_DL_FUNCS(X)                                                                           \
	X(global_init)                                                                             \
	X(easy_init)                                                                               \
	X(easy_cleanup)                                                                            \
	X(easy_reset)                                                                              \
	X(easy_setopt)                                                                             \
	X(easy_getinfo)                                                                            \
	X(easy_strerror)                                                                           \
	X(free)                                                                                    \
	X(getdate)                                                                                 \
	X(multi_init)                                                                              \
	X(multi_cleanup)                                                                           \
	X(multi_add_handle)                                                                        \
	X(multi_remove_handle)                                                                     \
	X(multi_perform)                                                                           \
	X(multi_poll)                                                                              \
	X(multi_info_read)                                                                         \
	X(multi_strerror)                                                                          \
	X(slist_append)                                                                            \
	X(slist_free_all)                                                                          \
	X(url)                                                                                     \
	X(url_cleanup)                                                                             \
	X(url_get)                                                                                 \
	X(url_set)

typedef struct curl_dl_api {
#define CURL_DL_MEMBER(name) __typeof__(curl_##name) *name;
	CURL_DL_FUNCS(CURL_DL_MEMBER)
#undef CURL_DL_MEMBER
} curl_dl_api;

extern curl_dl_api wt_curl;

/* Load libcurl and fill wt_curl, once per process (thread-safe; a failure is
 * kept and reported again). WT_OK, or WT_EUNSUPPORTED with err naming what is
 * missing and the fix. */
int curl_dl_load(wt_errbuf *err);

/* libcurl's option kinds by number: a CURLOPTTYPE_LONG option (below
 * CURLOPTTYPE_OBJECTPOINT) takes a long, every other kind a pointer or
 * curl_off_t. curl_easy_setopt through wt_curl has no type check of its own
 * (curl/typecheck-gcc.h checks only direct calls), so a setter asserts this
 * at compile time: CURL_DL_LONG_OK(CURLOPT_X, value). */
#define CURL_DL_LONG_OK(opt, val)                                                                  \
	(_Generic((val), long : 1, default : 0) == ((opt) < CURLOPTTYPE_OBJECTPOINT))

#endif
