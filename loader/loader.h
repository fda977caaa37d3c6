/*
 * loader.h — module interface of loader/: object stores (loader_store.h), the
 * safetensors format (loader_st.h), config.json (loader_config.h), each included
 * here, and the Hugging Face checkpoint view.
 *
 * Thread rules: a store may be read from any number of threads at once
 * (store_read is pread-like). A ckpt is immutable after ckpt_open() and may be
 * shared by threads; its reads go through the store.
 */
#ifndef WT_LOADER_H
#define WT_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "loader/loader_config.h"
#include "loader/loader_st.h"
#include "loader/loader_store.h"
#include "weights/dtype.h"
#include "weights/error.h"

/* ===================== checkpoint view ===================== */

typedef struct ckpt_tensor {
	const char *name;   /* borrowed from the ckpt */
	const char *object; /* store key of the file holding it; borrowed */
	wt_dtype dtype;
	int ndim;
	int64_t shape[WT_MAX_DIMS];
	uint64_t off; /* absolute offset in the object */
	uint64_t nbytes;
	size_t object_index; /* of `object` among the checkpoint's safetensors files */
} ckpt_tensor;

typedef struct ckpt ckpt;

/* Ceiling on config.json and model.safetensors.index.json (WT_ETOOBIG beyond). */
#define CKPT_MAX_JSON_BYTES (64u * 1024u * 1024u)

/*
 * Remembered content digests (weightd keeps them in its cache): get returns
 * true and fills *out when the digest of object o (key, size, version) of the
 * store at uri is known; put records one. Called from several threads at once
 * (the objects of a checkpoint are hashed in parallel): both must be
 * thread-safe.
 * Objects with an empty version are never looked up.
 */
typedef struct ckpt_memo {
	/* also the n block digests (store_pin_set_blocks: a head block of head
	 * bytes, then blocks of block_bytes): a digest remembered without them,
	 * or with another geometry, is not known */
	bool (*get)(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out, uint64_t head,
	            uint32_t block_bytes, wt_hash128 *blocks, size_t n);
	void (*put)(void *ctx, const char *uri, const store_obj *o, wt_hash128 digest,
	            uint64_t head, uint32_t block_bytes, const wt_hash128 *blocks, size_t n);
	/* Optional: the bytes of o no longer match what was remembered although
	 * its version is the same; drop it (the next open hashes it again). The
	 * ckpt keeps a copy of the memo for this: ctx must outlive the ckpt. */
	void (*forget)(void *ctx, const char *uri, const store_obj *o);
	void *ctx;
} ckpt_memo;

/* Open the model folder at the store root: config.json + model.safetensors, or
 * model.safetensors.index.json + shards. Validates the index (entries point to
 * existing files and tensors; a tensor in two files; tensors not in the index).
 * Every object is pinned (store_pin_open) for the life of the ckpt, and its
 * content digest computed (a full read) unless memo knows it. */
int ckpt_open(ckpt **out, store *s, wt_errbuf *err);
int ckpt_open_memo(ckpt **out, store *s, const ckpt_memo *memo, wt_errbuf *err);
/* ckpt_open without the content digests: config.json, the index and every
 * header are read and checked and the objects pinned, but no tensor byte is
 * read, and ckpt_revision() is "" (a quick validity check, such as weightd's
 * registration probe; never for producing or naming shards). */
int ckpt_open_quick(ckpt **out, store *s, wt_errbuf *err);
/* ckpt_open with everything optional: memo, progress, the quick check, and a
 * configuration override (vLLM's hf_overrides): a JSON object merged over config.json
 * before it is read (objects into objects recursively, any other value replacing the
 * key's), e.g. {"architectures": ["DeepSeekMTPModel"]} to cut a checkpoint as another
 * architecture. Its canonical text is part of the revision. NULL or "": none; not a
 * non-empty JSON object (at most 64 KiB): WT_EINVAL / WT_ETOOBIG naming the fix. */
typedef struct ckpt_progress ckpt_progress;
typedef struct ckpt_open_opts {
	const ckpt_memo *memo;       /* may be NULL */
	ckpt_progress *prog;         /* may be NULL */
	const char *config_override; /* NULL or "": none */
	bool quick;                  /* ckpt_open_quick */
} ckpt_open_opts;
int ckpt_open_with(ckpt **out, store *s, const ckpt_open_opts *o, wt_errbuf *err);
/* The override the ckpt was opened with, canonical (keys sorted, compact); "" for none. */
const char *ckpt_config_override(const ckpt *c);
/* The override text (NULL or "": none, *out NULL) checked as one non-empty JSON object
 * (at most 64 KiB) and written canonically (keys sorted, compact, ASCII: no control
 * character) into *out (the caller frees it); WT_EINVAL / WT_ETOOBIG naming the fault and
 * the fix. What ckpt_open_with does with config_override first. */
int ckpt_override_canonical(const char *text, char **out, wt_errbuf *err);
/* The override that names arch as the architecture ({"architectures": [arch]}, what vLLM's
 * hf_overrides or its speculative config set) into *out (the caller frees it); WT_EINVAL for
 * an empty name, a control character or bytes that are not UTF-8. */
int ckpt_override_for_arch(const char *arch, char **out, wt_errbuf *err);
/* How far a ckpt_open_progress got, read by other threads while it runs:
 * total is set to the bytes of every safetensors file before the content
 * digest starts, done counts the bytes hashed (and those the memo knew).
 * Setting cancel makes the open stop at the digest's next block (8 MiB) with
 * WT_ECANCELED. Zero it before the open; it must outlive the call. */
struct ckpt_progress {
	_Atomic uint64_t done;
	_Atomic uint64_t total;
	_Atomic bool cancel;
};
/* ckpt_open_memo that reports to p (may be NULL: ckpt_open_memo). */
int ckpt_open_progress(ckpt **out, store *s, const ckpt_memo *memo, ckpt_progress *p,
                       wt_errbuf *err);
/* A content digest that reads for longer than ns logs its progress (NOTICE:
 * the store URI, GiB read of the total, GB/s) every ns, and a last line when
 * it ends. Default 30 s; 0 = never. Process-wide (tests set it small). */
void ckpt_digest_progress_ns(uint64_t ns);

/* WT_OK if no object changed since the ckpt was opened (every byte read
 * through it belongs to its revision); WT_ECHANGED naming the object else. */
int ckpt_check(const ckpt *c, wt_errbuf *err);
/* true once a read through c found bytes of an object that did not match
 * its block digests (store_pin_content_changed): the object was rewritten
 * although its version did not change, so a listing or a store_stat cannot
 * tell; the checkpoint must be opened again for its new revision. */
bool ckpt_content_changed(const ckpt *c);
void ckpt_close(ckpt *c); /* NULL-safe; does not close the store */

const ckpt_config *ckpt_get_config(const ckpt *c);
/* Raw config.json text. Borrowed. */
const char *ckpt_config_json(const ckpt *c, size_t *len);
/* Revision digest: hex SHA-256 over (key, size, XXH3-128 of the bytes) of every object
 * (README "Revision digest"); "" after ckpt_open_quick. */
const char *ckpt_revision(const ckpt *c);
store *ckpt_store(const ckpt *c);

/* Tensors sorted by name. */
size_t ckpt_n_tensors(const ckpt *c);
const ckpt_tensor *ckpt_tensor_at(const ckpt *c, size_t i);
const ckpt_tensor *ckpt_find(const ckpt *c, const char *name); /* NULL if absent */
/* Index of t in name order (for plan references). */
size_t ckpt_tensor_index(const ckpt *c, const ckpt_tensor *t);
/* Sum of tensor bytes. */
uint64_t ckpt_total_bytes(const ckpt *c);

/* Read len bytes at byte offset `off` within tensor t. */
int ckpt_read(const ckpt *c, const ckpt_tensor *t, uint64_t off, void *buf, size_t len,
              wt_errbuf *err);

#endif
