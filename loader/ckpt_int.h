/*
 * ckpt_int.h — private to loader/: content digests and the revision digest
 * (revision.c), used by checkpoint.c.
 */
#ifndef WT_LOADER_CKPT_INT_H
#define WT_LOADER_CKPT_INT_H

#include "common/common.h"
#include "loader/loader.h"

/* One source object as the revision digest sees it. */
typedef struct ckpt_rev_obj {
	const char *key; /* borrowed */
	uint64_t nbytes;
	wt_hash128 digest; /* XXH3-128 of the object's bytes */
} ckpt_rev_obj;

/* The content digest (XXH3-128 of every byte; the memo first, then a full read
 * through the pin and a store_pin_check; the memo learns what was computed)
 * and the block digests (a head block of heads[i] bytes, which must match
 * head_digests[i], then store_block_bytes blocks; given to the pin) of
 * pins[0..n) into out[i], up to CKPT_DIGEST_THREADS
 * objects at once (the caller's thread is one). memo->get/put may be called
 * from several threads at once. On failure: the error of the first object (in
 * pins order) that failed; the others stopped at their next block. prog (may
 * be NULL): total and done as they go; its cancel stops every object at its
 * next block, WT_ECANCELED. */
#define CKPT_DIGEST_THREADS 4
typedef struct ckpt_digest_in {
	store_pin *const *pins;
	const uint64_t *heads;          /* per object: its head block's length (data_off) */
	const wt_hash128 *head_digests; /* per object: of the header that was parsed */
	size_t n;
	const char *uri;
	const ckpt_memo *memo; /* may be NULL */
	ckpt_progress *prog;   /* may be NULL */
} ckpt_digest_in;
int ckpt_objects_digest(const ckpt_digest_in *in, wt_hash128 *out, wt_errbuf *err);

/* Sort objs by key and write the hex SHA-256 revision digest (64 chars + NUL). */
int ckpt_revision_compute(ckpt_rev_obj *objs, size_t n, char out[65], wt_errbuf *err);

/* ---- the configuration override (config_override.c; ckpt_open_opts.config_override) ---- */
#define CKPT_MAX_OVERRIDE_BYTES (64u * 1024u)
/* the override's entry in the revision: a key no store object has (a control character) */
#define CKPT_OVERRIDE_KEY "\001weightd-config-override"
/* canon merged over the config.json text *json (*len bytes; replaced by the merged text,
 * NUL-terminated): objects into objects recursively, any other value replacing the key's
 * (vLLM's hf_overrides). A config.json that is not a JSON object: the parser's error. */
int ckpt_override_apply(char **json, size_t *len, const char *canon, wt_errbuf *err);

/* ---- Mistral's native format (config_mistral.c; loader_mistral.h) ---- */
#define CKPT_MISTRAL_PARAMS "params.json"
#define CKPT_MISTRAL_SINGLE "consolidated.safetensors"
#define CKPT_MISTRAL_INDEX  "consolidated.safetensors.index.json"

/* What the names and the wq / wk permute need of params.json. */
typedef struct ckpt_mistral_dims {
	int64_t layers, heads, kv_heads, head_dim;
	bool ml3;        /* Mistral-Large-3's MLA + MoE names (config_mistral_ml3.c) */
	int64_t experts; /* its moe.num_experts */
} ckpt_mistral_dims;

/* params.json text (len bytes) -> the config.json text of the same model in transformers'
 * format (MistralForCausalLM; *json owned by the caller, NUL-terminated, *json_len bytes)
 * and *d. A key that is not a dense Mistral's (moe, vision_encoder, quantization, ...) or
 * unknown is WT_EUNSUPPORTED naming it and the fix; a value of the wrong type or out of
 * range WT_ECORRUPT naming it. */
int ckpt_mistral_config(const char *params, size_t len, char **json, size_t *json_len,
                        ckpt_mistral_dims *d, wt_errbuf *err);

/* The transformers name of Meta name `name` into buf (cap bytes); *heads as ckpt_rope_heads
 * gives it (n_heads for wq, n_kv_heads for wk, else 0). An unknown name, or a layer index
 * not below n_layers, is WT_EUNSUPPORTED naming the tensor. */
int ckpt_mistral_name(const ckpt_mistral_dims *d, const char *name, char *buf, size_t cap,
                      int64_t *heads, wt_errbuf *err);

#endif
