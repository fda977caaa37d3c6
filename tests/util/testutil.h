/*
 * testutil.h — small helpers shared by the cmocka tests: temp folders, files,
 * deterministic bytes and tiny Hugging Face checkpoints written with
 * st_write_path(). Test code only; failures return non-zero / NULL, never abort.
 */
#ifndef WT_TESTUTIL_H
#define WT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "loader/loader.h"
#include "tests/util/splitmix.h"

/* Fresh empty folder "$TMPDIR/wt-<tag>-XXXXXX". Caller frees (and tu_rmrf's) it. */
char *tu_mkdtemp(const char *tag);
/* rm -rf path; 0 on success (missing path counts as success). */
int tu_rmrf(const char *path);
/* "dir/rel"; caller frees. */
char *tu_path(const char *dir, const char *rel);
/* The fixture generator the tests run (caller frees): $WT_MKCKPT when set, else
 * $WT_BUILD/wt-mkckpt (build/ without WT_BUILD). `make test` sets WT_MKCKPT to the normal
 * build's for the sanitizer passes: the fixtures are the same bytes, and the generator runs
 * under AddressSanitizer in test_fixtures and the integration scripts. */
char *tu_mkckpt(void);
/* Write len bytes to dir/rel, creating parent folders. 0 on success. */
int tu_write_file(const char *dir, const char *rel, const void *data, size_t len);
/* Whole file, NUL-terminated beyond *len; caller frees. NULL on failure. */
char *tu_read_file(const char *path, size_t *len);
/* Deterministic pseudo-random bytes (tu_splitmix64 of seed). */
void tu_fill(void *buf, size_t len, uint64_t seed);
/* n test-model values of dtype dt (es bytes each) into buf, from splitmix64 state *s: value i
 * is the next draw mapped to [-1, 1) as float, stored as f32, bf16, f16 (RNE) or e4m3 (x 200);
 * any other dtype gets the state's first min(es, 8) bytes. tests/util/tm_fill.c: compiled at
 * -O2 (the test programs are at -Og), one loop per dtype. */
void tu_fill_values(void *buf, wt_dtype dt, size_t es, uint64_t n, uint64_t *s);
/* Shift a file's mtime by delta_ns (to prove version changes). 0 on success. */
int tu_touch(const char *path, int64_t delta_ns);
/* tu_touch every regular file directly in dir (a model folder served over
 * http: written "a while ago", not in the second its HEAD is answered). */
int tu_touch_dir(const char *dir, int64_t delta_ns);
/* Flip the last byte of path in place (same size), then set its mtime to
 * what it was plus mtime_delta_s (0: put back, so only the bytes changed).
 * 0 on success. */
int tu_flip_last_byte(const char *path, int64_t mtime_delta_s);

/* Bytes of one desc (0 on overflow or bad dtype). */
uint64_t tu_desc_nbytes(const st_desc *d);

/*
 * Write a checkpoint folder: dir/config.json (config_json verbatim) and the
 * tensors with data tu_fill(seed + i). n_shards <= 1: model.safetensors;
 * otherwise tensors are split into n_shards contiguous groups written as
 * "model-0000K-of-0000N.safetensors" plus model.safetensors.index.json.
 * 0 on success.
 */
int tu_write_ckpt(const char *dir, const char *config_json, const st_desc *descs, size_t n,
                  size_t n_shards, uint64_t seed);
/* Name of shard k (1-based) of n, as tu_write_ckpt writes it, into buf. */
void tu_shard_name(char *buf, size_t bufsz, size_t k, size_t n);

/* A small Llama-style config (hidden 64, 4 heads, 2 KV heads, 2 layers, vocab 128). */
extern const char tu_llama_config[];
/* Eight tensors of a tiny Llama (with tu_llama_config; one of them 0-d), for
 * the loader's tests: one tensor a file with 8 shards. */
#define TU_TINY_LLAMA_N 8
extern const st_desc tu_tiny_llama[TU_TINY_LLAMA_N];

#endif
