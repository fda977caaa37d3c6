/*
 * loader_st.h — part of the loader's interface (split from loader.h, which includes it):
 * the safetensors format: parsing a header (from a store or a pinned object) and the
 * streaming / positional writer. safetensors.c, st_read.c, st_write.c.
 */
#ifndef WT_LOADER_LOADER_ST_H
#define WT_LOADER_LOADER_ST_H

#include <stddef.h>
#include <stdint.h>

#include "loader/loader_store.h"
#include "weights/dtype.h"
#include "weights/error.h"

#define ST_MAX_HEADER_BYTES (100u * 1024u * 1024u)

typedef struct st_tensor {
	char *name; /* owned */
	wt_dtype dtype;
	int ndim;
	int64_t shape[WT_MAX_DIMS]; /* row-major, last dim contiguous */
	uint64_t off;               /* ABSOLUTE byte offset in the file */
	uint64_t nbytes;
} st_tensor;

typedef struct st_kv {
	char *key; /* owned */
	char *value;
} st_kv;

typedef struct st_file {
	st_tensor *tensors; /* in the header's order of data offsets; owned */
	size_t n_tensors;
	st_kv *meta; /* __metadata__, string -> string; owned */
	size_t n_meta;
	uint64_t data_off;   /* 8 + header length */
	uint64_t file_bytes; /* = data_off + data section length */
	/* st_read_pinned: XXH3-128 of the first data_off bytes read (length prefix
	 * and header), the head block the content digest compares */
	wt_hash128 head_digest;
} st_file;

/*
 * Validate and parse a header (STYLE.md 9 order). `hdr` holds the JSON header
 * bytes (without the 8-byte length), file_bytes the total file size. Every
 * rejection is an error naming the tensor.
 */
int st_parse_header(const char *hdr, size_t hdr_len, uint64_t file_bytes, st_file *out,
                    wt_errbuf *err);
/* Decode the 8-byte little-endian length prefix and check it against the cap
 * (WT_ETOOBIG) and against file_bytes (WT_ECORRUPT). */
int st_check_prefix(const void *prefix8, uint64_t file_bytes, uint64_t *hdr_len, wt_errbuf *err);
/* Read the length prefix and header of `key` in `s`, and parse. */
int st_read_file(store *s, const char *key, st_file *out, wt_errbuf *err);
/* The same through a pinned object. */
int st_read_pinned(store_pin *p, st_file *out, wt_errbuf *err);
void st_file_free(st_file *f); /* NULL-safe */
/* Find a tensor by name; NULL if absent. Borrowed. */
const st_tensor *st_find(const st_file *f, const char *name);
/* A __metadata__ value; NULL if absent. Borrowed. */
const char *st_meta_get(const st_file *f, const char *key);

/* Streaming writer: the header is written first, then the data in order (or, opened
 * with st_writer_open_at, each tensor at its place in any order). */
typedef int (*st_write_fn)(void *ctx, const void *data, size_t len); /* returns WT_* */

typedef struct st_desc {
	const char *name;
	wt_dtype dtype;
	int ndim;
	int64_t shape[WT_MAX_DIMS];
} st_desc;

typedef struct st_writer st_writer;

/* Compute offsets in the given order and write the header through fn. The descs
 * and meta are copied. Tensor data must then be written in the same order. */
int st_writer_open(st_writer **out, const st_desc *descs, size_t n, const st_kv *meta,
                   size_t n_meta, st_write_fn fn, void *ctx, wt_errbuf *err);
/* Append data (any split across calls). Writing more than declared is WT_EINVAL. */
int st_writer_write(st_writer *w, const void *data, size_t len, wt_errbuf *err);
/* Check every declared byte was written (else WT_EINVAL), then free. NULL-safe. */
int st_writer_close(st_writer *w, wt_errbuf *err);
/* Free without the completeness check (error paths). NULL-safe. */
void st_writer_abort(st_writer *w);

/* Positional writes, for a producer that emits tensors in another order than the
 * header's (weightctl shard): len bytes at file offset `at` (header included). */
typedef int (*st_pwrite_fn)(void *ctx, const void *data, size_t len, uint64_t at);
/* As st_writer_open (the header through fn), then the data only through
 * st_writer_write_at, by pfn: each tensor's bytes in order, the tensors in any
 * order. st_writer_close checks that every tensor is whole. */
int st_writer_open_at(st_writer **out, const st_desc *descs, size_t n, const st_kv *meta,
                      size_t n_meta, st_write_fn fn, st_pwrite_fn pfn, void *ctx, wt_errbuf *err);
/* Bytes [off, off + len) of tensor i (st_writer_open_at): off must be where its
 * bytes so far end, and off + len within it; else WT_EINVAL naming it. Threads may
 * write different tensors at once (pfn then must be thread-safe: pwrite is). */
int st_writer_write_at(st_writer *w, size_t i, uint64_t off, const void *data, size_t len,
                       wt_errbuf *err);

/* Convenience: write a whole safetensors file at `path` (atomic: temp + rename). */
int st_write_path(const char *path, const st_desc *descs, const void *const *data, size_t n,
                  const st_kv *meta, size_t n_meta, wt_errbuf *err);

#endif
