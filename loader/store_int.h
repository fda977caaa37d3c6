/*
 * store_int.h — private to loader/: the object-store backend interface.
 *
 * A backend is a vtable plus an opaque impl pointer. store.c owns the generic
 * part (URI dispatch, key validation, exact-length reads, byte counting); a
 * backend only moves bytes. Adding S3/HTTP means adding a store_<x>.c with an
 * open function and one line in store.c's scheme table: loader.h does not change.
 *
 * Thread rule: list/stat/read may be called from any number of threads at once
 * on the same store; close is called once, after every other call returned.
 */
#ifndef WT_LOADER_STORE_INT_H
#define WT_LOADER_STORE_INT_H

#include <stdatomic.h>

#include "loader/loader.h"

/* http(s)/s3 read hint: one ranged GET per read costs ~0.1-0.5 ms however
 * small (loopback nginx: 4 KiB reads 0.09 ms, 1 MiB 0.4 ms, 16 MiB 8 ms). */
#define STORE_REMOTE_READ_HINT (8u << 20)

typedef struct store_ops {
	/* All objects under prefix (validated, may be ""), any order; the generic
	 * part filters and sorts. out is zeroed on entry. */
	int (*list)(void *impl, const char *prefix, store_list *out, wt_errbuf *err);
	/* Size and version of key (validated). Missing object: WT_ENOTFOUND. */
	int (*stat)(void *impl, const char *key, store_obj *out, wt_errbuf *err);
	/* Read up to len bytes at off into buf; *got < len only at end of object.
	 * version (NULL = any): the version (as stat reports it) the bytes must
	 * come from; bytes of another version are WT_ECHANGED. */
	int (*read)(void *impl, const char *key, const char *version, uint64_t off, void *buf,
	            size_t len, size_t *got, wt_errbuf *err);
	void (*close)(void *impl); /* NULL-safe */
	/* Optional (file://): an open handle on the object, so reads keep seeing
	 * the object that was opened even if the name is replaced. pin fills out
	 * like stat; pin_stat reports the pinned object's current size and
	 * version (an in-place write changes them), and sets *unsure when the
	 * version moved in a way only the bytes can settle (file://: the pinned
	 * file was unlinked, which moves its ctime like a write does; store.c then
	 * compares the content digest, store_pin_set_digest); unpin is NULL-safe.
	 * Without these, store.c pins by version: reads pass the version to read(). */
	int (*pin)(void *impl, const char *key, void **h, store_obj *out, wt_errbuf *err);
	int (*pin_read)(void *h, const char *key, uint64_t off, void *buf, size_t len, size_t *got,
	                wt_errbuf *err);
	int (*pin_stat)(void *h, const char *key, store_obj *out, bool *unsure, wt_errbuf *err);
	void (*unpin)(void *h);
	/* Reads smaller than this cost mostly their fixed per-request cost (one
	 * HTTP request each); 0 = none (file://: a pread). store_read_hint. */
	size_t read_hint;
	/* Optional (http, s3): requests in flight end when *cancel turns true
	 * (store_set_cancel); file:// reads are short and need none. */
	void (*set_cancel)(void *impl, const _Atomic bool *cancel);
	/* Optional (http): store_limit_redirects; stores without it follow none. */
	int (*limit_redirects)(void *impl, char *const *hosts, size_t n, wt_errbuf *err);
	/* Optional (file): store_local_root; others have no local folder. */
	int (*local_root)(void *impl, char **out, wt_errbuf *err);
} store_ops;

struct store {
	const store_ops *ops;
	void *impl;
	char *uri;
	_Atomic uint64_t bytes_read;  /* from the backend; updated without a lock */
	_Atomic uint64_t bytes_asked; /* returned to callers (store_bytes_asked) */
	_Atomic uint64_t rewrites;    /* store_rewrites_found */
};

/* Backend openers: path is the URI without its scheme. On success *ops and
 * *impl are set; on failure nothing is left to free. */
int store_file_open(const char *path, const store_ops **ops, void **impl, wt_errbuf *err);
/* store_http.c: "host[:port]/prefix"; store_s3.c: "bucket/prefix" (environment: docs/stores.md). */
int store_http_open(const char *rest, const store_ops **ops, void **impl, wt_errbuf *err);
int store_https_open(const char *rest, const store_ops **ops, void **impl, wt_errbuf *err);
int store_s3_open(const char *rest, const store_ops **ops, void **impl, wt_errbuf *err);

/* store_verify.c: the block digests of a pinned object (store_pin_set_blocks)
 * and reads checked against them. raw reads exactly len bytes at off. */
typedef struct store_blocks store_blocks;
typedef int (*store_raw_read_fn)(void *ctx, uint64_t off, void *buf, size_t len, wt_errbuf *err);
int store_blocks_new(store_blocks **out, uint64_t nbytes, uint64_t head, uint32_t block_bytes,
                     const wt_hash128 *d, size_t n, wt_errbuf *err);
void store_blocks_free(store_blocks *b); /* NULL-safe; drops its cached blocks */
/* Exactly len bytes at off, every block they touch read whole through raw
 * and matched against its digest: WT_ECHANGED naming the key and the block
 * otherwise (then store_blocks_mismatch turns true). Thread-safe. */
int store_blocks_read(store_blocks *b, const char *key, uint64_t off, void *buf, size_t len,
                      store_raw_read_fn raw, void *ctx, wt_errbuf *err);
bool store_blocks_mismatch(const store_blocks *b); /* NULL: false */

/* Validate a relative key: non-empty, '/'-separated, no absolute path, no "."
 * or ".." or empty component. Escapes are WT_EPERM, other bad keys WT_EINVAL.
 * allow_empty (prefixes): "" and a trailing '/' are accepted. */
int store_check_key(const char *key, bool allow_empty, wt_errbuf *err);

#endif
