/*
 * loader_store.h — part of the loader's interface (split from loader.h, which includes it):
 * object stores (file://, http(s)://, s3://): opening one, listing, stat, reads, and pinned
 * objects whose reads are checked against their size, version and block digests.
 * store.c, store_*.c.
 */
#ifndef WT_LOADER_LOADER_STORE_H
#define WT_LOADER_LOADER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "weights/error.h"

typedef struct store store;

typedef struct store_obj {
	char *key;       /* relative to the store root, '/'-separated; owned */
	uint64_t nbytes; /* object size */
	char *version;   /* ETag (else Last-Modified); for file:// "MTIME.CTIME.DEV.INO"
	                    (ns, ns, hex, decimal): any write, rename over or
	                    touch of the file changes it; owned */
} store_obj;

typedef struct store_list {
	store_obj *objs; /* sorted by key; owned */
	size_t n;
} store_list;

/*
 * Open a store rooted at uri: "file:///abs/dir", a plain path "dir", and later
 * "s3://bucket/prefix" and "http(s)://host/prefix" (same interface). Keys are
 * relative to the root; a key that escapes the root ("..", absolute, symlink
 * outside) is refused with WT_EPERM.
 */
int store_open(store **out, const char *uri, wt_errbuf *err);
void store_close(store *s); /* NULL is a no-op */

/* The URI the store was opened with. Borrowed; valid until store_close(). */
const char *store_uri(const store *s);

/* Smallest read worth making on this store: below it a read costs mostly
 * its fixed per-request cost (http(s), s3: 8 MiB); 0 for file:// (pread).
 * Readers that cut a large read into pieces use pieces of at least this. */
size_t store_read_hint(const store *s);
/* While cancel is set (NULL: none), a remote request in flight on s ends
 * within about a second of *cancel turning true (WT_ECANCELED), instead of
 * at its end: a canceled open of a slow or silent source stops at once.
 * Call while no other thread uses s; cancel must outlive the setting. */
void store_set_cancel(store *s, const _Atomic bool *cancel);
/* Every redirect a read of s follows must lead to one of hosts (n entries,
 * "HOST[:PORT]" as register_hosts: no port = any port; copied), over http or
 * https and without user:password@; one elsewhere ends the read with WT_EPERM
 * naming the target and the list. A no-op for stores that follow no redirect
 * (file://, s3://). Call before any read; weightd limits the models REGISTER
 * added to its register_hosts. */
int store_limit_redirects(store *s, char *const *hosts, size_t n, wt_errbuf *err);

/* The folder a file:// store (or a path) reads below, as it was opened: the
 * real path of the directory handle it holds (/proc/self/fd) with the root
 * below it, malloc'd into *out; NULL for stores that are not local folders.
 * A check of the path a URI names races with a rename or a symlink swapped
 * in before the open; this is what the store reads. */
int store_local_root(const store *s, char **out, wt_errbuf *err);

/* store_hosts.c: "host:port" / "[v6]:port" / "host" (n bytes at a) split
 * into host (hlen bytes) and port (plen bytes, "" when none). */
void store_split_hostport(const char *a, size_t n, const char **host, size_t *hlen,
                          const char **port, size_t *plen);
/* Is host (hlen bytes, "[v6]" in brackets) with port (plen bytes) in hosts?
 * An entry without a port matches any port; hosts compare without case. */
bool store_host_listed(char *const *hosts, size_t n, const char *host, size_t hlen,
                       const char *port, size_t plen);

/* All objects whose key starts with prefix ("" = all), recursively. */
int store_list_objects(store *s, const char *prefix, store_list *out, wt_errbuf *err);
void store_list_free(store_list *l); /* NULL-safe; leaves l empty */

int store_stat(store *s, const char *key, store_obj *out, wt_errbuf *err);
void store_obj_clear(store_obj *o); /* frees key/version; NULL-safe */

/* Read exactly len bytes at off into buf. A short object is WT_EIO naming the key. */
int store_read(store *s, const char *key, uint64_t off, void *buf, size_t len, wt_errbuf *err);

/* Read a whole (small) object into a malloc'd buffer (NUL-terminated beyond *len).
 * Refuses objects over max_bytes with WT_ETOOBIG. Caller frees *out. */
int store_read_all(store *s, const char *key, uint64_t max_bytes, char **out, size_t *len,
                   wt_errbuf *err);

/* Bytes read from the backend since open (tests count source reads). With
 * block digests (store_pin_set_blocks) a read fetches the whole blocks it
 * touches, so this can exceed store_bytes_asked, the bytes returned to
 * callers by store_read and store_pin_read. */
uint64_t store_bytes_read(const store *s);
uint64_t store_bytes_asked(const store *s);
/* Pinned objects whose reads found bytes that did not match their block
 * digests (store_pin_content_changed: rewritten under an unchanged
 * version), each pin counted once, since open. */
uint64_t store_rewrites_found(const store *s);

/*
 * A pinned object: reads see the bytes the object had when it was pinned, or
 * fail with WT_ECHANGED. file:// keeps the file open (a rename over the name
 * does not affect the pin; an in-place write is caught by store_pin_check);
 * http/s3 check every reply's ETag (else Last-Modified) against the pinned one.
 * A pin may be read from any number of threads; close it once.
 */
typedef struct store_pin store_pin;

int store_pin_open(store *s, const char *key, store_pin **out, wt_errbuf *err);
void store_pin_close(store_pin *p); /* NULL-safe */
/* Key, size and version at pin time. Borrowed; valid until store_pin_close(). */
const store_obj *store_pin_obj(const store_pin *p);
/* Read exactly len bytes at off (WT_EIO if the object is shorter). */
int store_pin_read(store_pin *p, uint64_t off, void *buf, size_t len, wt_errbuf *err);
/* WT_OK if the object still has its pinned size and version; WT_ECHANGED
 * naming the key otherwise (then bytes read through the pin may be mixed).
 * A file:// pin whose file was unlinked (a rename over the name) with its
 * size and mtime unchanged cannot tell that from a write before the unlink
 * by its version: it is WT_OK only if its bytes, read again (once per
 * version), still match the digest given to store_pin_set_digest, and
 * WT_ECHANGED when none was given. */
int store_pin_check(store_pin *p, wt_errbuf *err);
/* The XXH3-128 (common_hasher) of the object's bytes at pin time, as the
 * caller computed it (ckpt: the content digest); thread-safe. */
void store_pin_set_digest(store_pin *p, wt_hash128 digest);
/*
 * Block digests: the XXH3-128 of each block of the object's bytes at pin time,
 * as the caller computed them (ckpt: beside the content digest). head > 0
 * makes block 0 the bytes [0, head) (ckpt: a safetensors file's length prefix
 * and header); the other blocks are block_bytes long from head (the last one
 * may be shorter). Once given, every store_pin_read returns only bytes whose
 * blocks matched (it reads the whole blocks a range touches), else
 * WT_ECHANGED naming the key and the block, whatever the object's version
 * says. Given once per pin (WT_EINVAL after), before the reads it should
 * cover; n must be store_block_count(size, head, block_bytes).
 */
#define STORE_MAX_BLOCKS 65536u
/* The block size of an object of nbytes: 1 MiB, doubled until it has at most
 * STORE_MAX_BLOCKS blocks (besides a head block). */
uint32_t store_block_bytes(uint64_t nbytes);
size_t store_block_count(uint64_t nbytes, uint64_t head, uint32_t block_bytes);
int store_pin_set_blocks(store_pin *p, uint64_t head, uint32_t block_bytes,
                         const wt_hash128 *blocks, size_t n, wt_errbuf *err);
/* true once a read through p found bytes that did not match their block. */
bool store_pin_content_changed(const store_pin *p);
/* Whole (small) pinned object into a malloc'd buffer, as store_read_all. */
int store_pin_read_all(store_pin *p, uint64_t max_bytes, char **out, size_t *len, wt_errbuf *err);

#endif
