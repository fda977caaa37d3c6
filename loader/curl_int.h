/*
 * curl_int.h — private to loader/: the libcurl plumbing shared by the HTTP(S)
 * and S3 store backends (store_http.c, store_s3.c). One place for handle
 * pooling, timeouts, retries, ranged reads and status -> wt_err mapping
 * (curl_util.c; each transfer's callbacks: curl_xfer.c).
 *
 * Thread rule: a curlu client may be used from any number of threads at once.
 * Each call takes a "lane" (a curl multi handle plus its easy handles, which
 * keep their connections alive) from a mutex-guarded pool and returns it after
 * the transfer, so concurrent reads never share a curl handle.
 *
 * Errors: 401/403 -> WT_EPERM (message ends with opts.perm_hint), 404 ->
 * WT_ENOTFOUND, other statuses and protocol violations -> WT_EIO naming the
 * status, the URL and the key; connection refused -> WT_EUNAVAIL; timeouts ->
 * WT_ETIMEDOUT. URLs passed in must not contain secrets (they appear in messages).
 */
#ifndef WT_LOADER_CURL_INT_H
#define WT_LOADER_CURL_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"

/* Ceiling on the number of parallel ranges of one read; smallest split part. */
#define CURLU_MAX_PARALLEL 16
#define CURLU_MIN_PART     (1u << 20)

typedef struct curlu_opts {
	const char *sigv4;         /* CURLOPT_AWS_SIGV4 ("aws:amz:REGION:s3") or NULL */
	const char *userpwd;       /* "KEY:SECRET" for sigv4; NULL = anonymous. Copied. */
	const char *session_token; /* sent as x-amz-security-token; NULL = none. Copied. */
	const char *perm_hint;     /* appended to 401/403 messages; static string */
	const char
	    *ca_bundle; /* CURLOPT_CAINFO (WEIGHTD_HTTP_CA_BUNDLE); NULL = system CAs. Copied. */
	bool follow_redirects;   /* plain HTTP only: a redirect would break a signature */
	bool https_only;         /* requests and redirects stay on https (an https:// store: a
	                            redirect to http:// would carry the bytes without TLS) */
	bool netrc;              /* CURL_NETRC_OPTIONAL: credentials from ~/.netrc */
	long connect_timeout_ms; /* WEIGHTD_HTTP_CONNECT_TIMEOUT_MS, default 10000 */
	long low_speed_time_s; /* abort below 1 KiB/s for this long; WEIGHTD_HTTP_LOW_SPEED_TIME_S,
	                          30 */
	int max_retries;       /* on 5xx/429/connection errors; WEIGHTD_HTTP_RETRIES, default 4 */
	long backoff_ms; /* first retry delay, doubled each time (cap 5 s); WEIGHTD_HTTP_BACKOFF_MS,
	                    200 */
	int parallel;    /* ranges per large read; WEIGHTD_HTTP_PARALLEL, default 4 */
	uint64_t split_bytes; /* reads of at least this many bytes are split;
	                         WEIGHTD_HTTP_SPLIT_BYTES, 8 MiB */
	long settle_ms;       /* a HEAD answered in the second of the object's last write is
	                         asked again once, this long after; WEIGHTD_HTTP_SETTLE_MS, 1100 */
	bool etag_is_content; /* S3: an ETag is an MD5 of the bytes, never kept by a write */
} curlu_opts;

/* Defaults, overridden by the WEIGHTD_HTTP_* environment variables named
 * above. A malformed or out-of-range value is WT_EINVAL naming the variable.
 * ca_bundle points into the environment (curlu_open copies it). */
int curlu_opts_from_env(curlu_opts *o, wt_errbuf *err);

typedef struct curlu curlu;

/* Create a client. The option strings are copied. Free with curlu_close(). */
int curlu_open(curlu **out, const curlu_opts *o, wt_errbuf *err);
void curlu_close(curlu *c); /* NULL-safe; no call may be in flight */
/* Transfers started while cancel is set (NULL: none) end within about a
 * second of *cancel turning true: WT_ECANCELED naming the key, never
 * retried. cancel must outlive them; set and cleared by the store's owner
 * (store_set_cancel) while no other call uses c. */
void curlu_set_cancel(curlu *c, const _Atomic bool *cancel);
/* Asked before a redirect is followed, with its absolute target URL (curl's
 * own resolution of the Location against the URL it answered): WT_OK
 * follows it; anything else (err filled) ends the transfer with that error,
 * never retried. */
typedef int (*curlu_redirect_fn)(void *ctx, const char *url, wt_errbuf *err);
/* Check each redirect with fn (NULL: follow any opts.follow_redirects allows);
 * ctx must outlive c's transfers. Set, like the cancel, while no call uses c. */
void curlu_set_redirect_check(curlu *c, curlu_redirect_fn fn, void *ctx);

/* HEAD url: out->nbytes from Content-Length, out->version from ETag (quotes
 * and W/ stripped), else Last-Modified, else "". out->key = strdup(key).
 * A reply whose Last-Modified is not before its Date (answered in the second
 * of the object's last write) is asked again once, opts.settle_ms later, then
 * WT_ECHANGED (curlu_stat_reply says why). Caller clears out with
 * store_obj_clear(). */
int curlu_stat(curlu *c, const char *url, const char *key, store_obj *out, wt_errbuf *err);

/* GET url with Range: bytes=off-(off+len-1) into buf. Insists on 206 with a
 * Content-Range that starts at off and a body of exactly that length; a range
 * may end early only at the object's end (*got < len). 416 = off at or past
 * the end (*got = 0). A 200 (server ignored Range), a short body or a wrong
 * Content-Range is WT_EIO naming the key. Reads of opts.split_bytes or more
 * are split into opts.parallel ranges fetched at once. version (NULL = any):
 * the ETag (else Last-Modified) every reply must carry, as curlu_stat reported
 * it; a reply from another version of the object is WT_ECHANGED. */
int curlu_read(curlu *c, const char *url, const char *key, const char *version, uint64_t off,
               void *buf, size_t len, size_t *got, wt_errbuf *err);

/* curl_key.c: curlu_stat / curlu_read of key at the URL url_of(st, key) builds
 * (malloc'd; NULL = out of memory, WT_ENOMEM naming the key). */
typedef char *(*curlu_url_fn)(const void *st, const char *key);
int curlu_stat_key(curlu *c, curlu_url_fn url_of, const void *st, const char *key, store_obj *out,
                   wt_errbuf *err);
int curlu_read_key(curlu *c, curlu_url_fn url_of, const void *st, const char *key,
                   const char *version, uint64_t off, void *buf, size_t len, size_t *got,
                   wt_errbuf *err);

/* GET url expecting 200; the body (NUL-terminated beyond *len) is malloc'd
 * into *out, caller frees. A body over max_bytes is WT_ETOOBIG. `what` names
 * the request in messages. */
int curlu_get(curlu *c, const char *url, const char *what, size_t max_bytes, char **out,
              size_t *len, wt_errbuf *err);

/* Percent-encode s for a URL path: every byte except A-Z a-z 0-9 - . _ ~ is
 * %XX (upper-case hex); '/' is kept when keep_slash. NULL on ENOMEM; caller frees. */
char *curlu_escape(const char *s, bool keep_slash);

#endif
