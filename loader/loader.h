/*
 * loader.h — module interface of loader/: object stores, the safetensors
 * format, and the Hugging Face checkpoint view.
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
#include "weights/dtype.h"
#include "weights/error.h"

/* ===================== object stores ===================== */

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

/* ===================== safetensors ===================== */

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

/* ===================== checkpoint view ===================== */

typedef enum {
	CKPT_QUANT_NONE = 0,
	CKPT_QUANT_FP8_BLOCK =
	    1, /* weight F8_E4M3 + weight_scale_inv F32 [ceil(N/b0), ceil(K/b1)] */
	CKPT_QUANT_FP8_TENSOR = 2, /* weight F8_E4M3 + weight_scale F32 scalar (+ input_scale) */
	/* compressed-tensors (ct_config.c): I8 weight [N, K] + weight_scale [N, 1] (+ input_scale)
	 */
	CKPT_QUANT_CT_INT8 = 3,
	/* compressed-tensors: weight_packed I32 [N, K/8] + weight_scale [N, K/G] + weight_shape */
	CKPT_QUANT_CT_INT4 = 4,
	/* quant_method "mxfp4" (GPT-OSS experts): X_blocks U8 [..., N, K/32, 16] (FP4 E2M1, two
	 * per byte, low nibble first) + X_scales U8 [..., N, K/32] (E8M0, bias 127) */
	CKPT_QUANT_MXFP4 = 5,
	/* quant_method "fbgemm_fp8" (Llama 4 Maverick's FP8 release, per output channel): a
	 * Linear's X.weight F8_E4M3 [N, K] + X.weight_scale F32/BF16/F16 [N, 1]; Llama 4's
	 * expert stacks X F8_E4M3 [E, K, N] + X_scale [E, 1, N] (gate_up_proj) or [E, N, 1]
	 * (down_proj): one scale per output channel */
	CKPT_QUANT_FBGEMM_FP8 = 6,
	/* compressed-tensors float-quantized FP8 per channel (llm-compressor's FP8_DYNAMIC):
	 * X.weight F8_E4M3 [N, K] + X.weight_scale F32/BF16/F16 [N, 1], dynamic activations (no
	 * input_scale); read as fbgemm_fp8's Linears (shardmap_fb_source) */
	CKPT_QUANT_CT_FP8 = 7,
} ckpt_quant_kind;

/* A layer_types entry (transformers >= 4.53): what the planner tells apart. */
typedef enum {
	CKPT_LAYER_OTHER = 0,    /* any other string ("sliding_attention", ...) */
	CKPT_LAYER_FULL_ATTN,    /* "full_attention" */
	CKPT_LAYER_LINEAR_ATTN,  /* "linear_attention" (Qwen3-Next's gated delta net) */
	CKPT_LAYER_SLIDING_ATTN, /* "sliding_attention" (Cohere2) */
	CKPT_LAYER_CONV,         /* "conv" (LFM2's short-convolution layers) */
	CKPT_LAYER_MAMBA,        /* "mamba" (Granite 4.0's Mamba2 mixer) */
	CKPT_LAYER_ATTN,         /* "attention" (Granite 4.0's softmax attention) */
	CKPT_LAYER_HYBRID,       /* "hybrid" (Zamba2's shared block before its Mamba2 mixer) */
	CKPT_LAYER_MLP,          /* "mlp" (Nemotron-H's MLP-only layers) */
	CKPT_LAYER_MOE,          /* "moe" (Nemotron-H's MoE layers) */
} ckpt_layer_type;

/* config.json fields the shard format needs (docs/format.md section 1); -1 where absent and without
 * a default. */
#define CKPT_MAX_MROPE 16 /* longest mrope_section list read */

#define CKPT_MAX_VQ_LEVELS 8 /* longest Chameleon vq_config.channel_multiplier read */

#define CKPT_MAX_QUANT_BLOCK (1 << 16) /* weight_block_size entries (DeepSeek: 128) */
#define CKPT_MAX_QUANT_KEEP  4096      /* fbgemm_fp8 modules_to_not_convert entries */

typedef struct ckpt_config {
	char *architecture; /* architectures[0]; owned */
	char *model_type;   /* owned; "" if absent */
	int64_t hidden_size;
	int64_t num_attention_heads;
	int64_t num_key_value_heads; /* default num_attention_heads */
	int64_t head_dim;            /* default hidden_size / num_attention_heads */
	int64_t intermediate_size;
	int64_t vocab_size;
	int64_t num_hidden_layers;
	bool tie_word_embeddings; /* as given; false if absent */
	bool tie_given;           /* present in config.json: else the architecture's
	                             default decides (shardmap_tied) */
	bool lm_head_bias;        /* PhiMoE: lm_head has a bias [vocab_size]; false if absent */
	bool use_qk_norm; /* GLM-4.5 (Llama 4: the L2 norm): q_norm / k_norm; false if absent */
	bool use_bias;    /* ERNIE 4.5: every Linear has a bias; false if absent */
	bool use_cla;     /* Hunyuan V1: cross-layer attention (refused); false if absent */
	/* Phi's qk_layernorm (refused: vLLM's phi.py has no q/k layernorms); read for model_type
	 * phi only, false if absent */
	bool qk_layernorm;
	/* StableLM's use_parallel_residual (refused: vLLM's stablelm.py is sequential); read for
	 * model_type stablelm only (with qk_layernorm, and use_qkv_bias into attention_bias),
	 * false if absent */
	bool use_parallel_residual;
	/* Falcon's LayerNorms (model_type falcon only; 0 otherwise): 1 one input_layernorm
	 * before the parallel attention and MLP, 2 ln_attn and ln_mlp (new_decoder_architecture),
	 * 3 input_layernorm and post_attention_layernorm (parallel_attn false: sequential) */
	int falcon_ln;
	/* Seed-OSS's bias switches: q/k/v biases, o_proj's, the MLP's; false if absent (but
	 * SeedOssConfig's attention_bias is true: config_defaults.c fills it) */
	bool attention_bias, attention_out_bias, mlp_bias;
	/* MoE */
	int64_t num_experts; /* num_local_experts | num_experts | n_routed_experts; 0 = dense */
	int64_t moe_intermediate_size;           /* Mixtral: intermediate_size */
	int64_t shared_expert_intermediate_size; /* Qwen2-MoE; GraniteMoeShared's
	                                            shared_intermediate_size; -1 if absent */
	int64_t n_shared_experts;                /* DeepSeek; 0 if absent */
	int64_t decoder_sparse_step;             /* Qwen2-MoE; default 1 */
	int64_t *mlp_only_layers;                /* Qwen2-MoE; owned */
	size_t n_mlp_only_layers;
	int64_t first_k_dense_replace; /* DeepSeek; default 0 */
	int64_t moe_layer_freq;        /* DeepSeek; default 1 */
	/* ERNIE 4.5 MoE: layer i is MoE iff (i + 1) % moe_layer_interval == 0 and
	 * moe_layer_start_index <= i <= moe_layer_end_index (-1 = the last layer); defaults
	 * 0, -1, 1 (Ernie4_5_MoeConfig's class defaults 1, -1, 1 for model_type ernie4_5_moe) */
	int64_t moe_layer_start_index;
	int64_t moe_layer_end_index;
	int64_t moe_layer_interval;
	/* Llama 4 (Llama4TextConfig): the dense MLPs' intermediate_size_mlp (-1 if absent);
	 * interleave_moe_layer_step (default 1); moe_layers, the MoE layers when given
	 * (has_moe_layers; an empty list is no MoE layer) */
	int64_t intermediate_size_mlp;
	int64_t interleave_moe_layer_step;
	bool has_moe_layers;
	int64_t *moe_layers; /* owned */
	size_t n_moe_layers;
	/* Qwen3-Next (Qwen3NextConfig): the gated-delta-net linear attention's
	 * linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
	 * linear_value_head_dim, linear_conv_kernel_dim (-1 if absent; the loader fills
	 * Qwen3NextConfig's defaults for model_type qwen3_next); full_attention_interval
	 * (-1 if absent); layer_types, one code per entry (has_layer_types when the list
	 * is present; its length and values are the family's to check) */
	int64_t lin_num_k_heads, lin_num_v_heads, lin_k_head_dim, lin_v_head_dim;
	int64_t lin_conv_kernel;
	int64_t full_attention_interval;
	bool has_layer_types;
	uint8_t *layer_types; /* ckpt_layer_type codes; owned */
	size_t n_layer_types;
	/* LFM2 (Lfm2Config; read for model_type lfm2 only, zero otherwise): conv_L_cache (the
	 * short conv's taps), block_multiple_of, block_dim / conv_dim (vLLM's names for the
	 * MLP and conv widths; -1 if absent: the loader fills Lfm2Config's defaults but for
	 * those two); conv_bias,
	 * block_auto_adjust_ff_dim; block_ffn_dim_multiplier (lfm2_ffn_mult_null when given
	 * as null: no multiplier and, in transformers, no rounding); full_attn_idxs, the
	 * attention layers when layer_types is absent (has_full_attn_idxs; for model_type
	 * bamba, BambaConfig's attn_layer_indices) */
	int64_t lfm2_conv_l_cache, lfm2_multiple_of, lfm2_block_dim, lfm2_conv_dim;
	bool lfm2_conv_bias, lfm2_auto_adjust, lfm2_ffn_mult_null;
	double lfm2_ffn_mult;
	/* LFM2-MoE (model_type lfm2_moe): use_expert_bias (feed_forward.expert_bias); its
	 * num_dense_layers is first_k_dense_replace */
	bool lfm2_expert_bias;
	bool has_full_attn_idxs;
	int64_t *full_attn_idxs; /* owned */
	size_t n_full_attn_idxs;
	/* Granite 4.0 (GraniteMoeHybridConfig): the Mamba2 mixer's mamba_n_heads,
	 * mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_expand, mamba_d_head (-1 if
	 * absent; mamba_d_head also -1 for "auto", mamba_expand * hidden_size /
	 * mamba_n_heads; the loader fills the class's defaults for model_type
	 * granitemoehybrid), mamba_conv_bias / mamba_proj_bias (false if absent; the class
	 * default of mamba_conv_bias, true, is filled likewise) */
	int64_t mamba_n_heads, mamba_n_groups, mamba_d_state, mamba_d_conv, mamba_expand;
	int64_t mamba_d_head;
	bool mamba_conv_bias, mamba_proj_bias;
	/* Jamba (JambaConfig; read for model_type jamba only, -1 otherwise): attn_layer_period /
	 * attn_layer_offset (layer i is attention when i % period == offset, else Mamba),
	 * expert_layer_period / expert_layer_offset (layer i has num_experts experts when
	 * i % period == offset, else a dense MLP), mamba_dt_rank (-1 for "auto" or absent:
	 * ceil(hidden_size / 16)); the loader fills JambaConfig's defaults but for dt_rank */
	int64_t jamba_attn_period, jamba_attn_offset, jamba_expert_period, jamba_expert_offset;
	int64_t mamba_dt_rank;
	/* Falcon-H1 (FalconH1Config; read for model_type falcon_h1 only): mamba_d_ssm, the
	 * Mamba mixer's width (absent: the class's 1024; null or any other family: -1, that is
	 * mamba_expand * hidden_size); mamba_rms_norm (the gated norm is built only then),
	 * projectors_bias (out_proj's bias) */
	int64_t mamba_d_ssm;
	bool mamba_rms_norm, projectors_bias;
	/* Zamba2 (Zamba2Config; read for model_type zamba2 only, -1 / false otherwise):
	 * num_mem_blocks (1; the shared transformer blocks, block k at the hybrid layers whose
	 * order among them is k modulo it), adapter_rank (128; the LoRA adapters' rank),
	 * use_shared_attention_adapter (false; the q / k / v adapters); add_bias_linear is read
	 * into mamba_proj_bias (the mixer's in_proj / out_proj and the shared MLP's biases) */
	int64_t z2_mem_blocks, z2_adapter_rank;
	bool z2_attn_adapter;
	/* Gemma 3n (Gemma3nTextConfig; read for model_type gemma3n_text only, -1 otherwise):
	 * altup_num_inputs (4; AltUp's streams), altup_active_idx (0), laurel_rank (64),
	 * hidden_size_per_layer_input (256), vocab_size_per_layer_input (262144; the per-layer
	 * embedding's rows), num_kv_shared_layers (15; the last layers read an earlier layer's
	 * keys and values) */
	int64_t g3n_altup, g3n_active, g3n_laurel, g3n_ple, g3n_ple_vocab, g3n_kv_shared;
	/* LongCat-Flash (LongcatFlashConfig; read for model_type longcat_flash only, 0
	 * otherwise): zero_expert_num, the identity experts the router scores after the
	 * n_routed_experts real ones */
	int64_t zero_expert_num;
	/* OPT (OPTConfig; read for model_type opt only, config_opt.c): word_embed_proj_dim
	 * (absent or null: hidden_size; -1 for any other family), max_position_embeddings (the
	 * learned position table holds it + 2 rows; absent: the class's 2048),
	 * do_layer_norm_before (true if absent; false: opt-350m's post-norm layers),
	 * opt_final_norm (model.decoder.final_layer_norm exists: do_layer_norm_before and not
	 * _remove_final_layer_norm), layer_norm_elementwise_affine (true if absent; false refused
	 * by the planner); enable_bias is read into attention_bias (true if absent) */
	int64_t opt_word_embed_proj_dim, opt_max_pos;
	bool opt_ln_before, opt_final_norm, opt_ln_affine;
	/* JAIS (JAISConfig; read for model_type jais only, config_jais.c; false otherwise):
	 * jais_wpe: position_embedding_type is not "alibi" (absent: "learned"), so the model has
	 * learned positions transformer.wpe (vLLM's jais.py builds none with ALiBi) */
	bool jais_wpe;
	/* Snowflake Arctic (ArcticConfig; read for model_type arctic only, config_arctic.c; false
	 * / 2 otherwise): use_residual (the residual MLP residual_mlp and residual_layernorm
	 * beside each MoE layer's experts) and moe_layer_frequency (layer i is MoE when
	 * (i + 1) % it == 0; 1 or 2) */
	bool arctic_residual;
	int64_t arctic_moe_freq;
	/* RoBERTa / XLM-RoBERTa (RobertaConfig, XLMRobertaConfig; read for model_type roberta
	 * and xlm-roberta only, config_roberta.c; -1 / false otherwise): max_position_embeddings
	 * (the position table's rows; absent: 512), type_vocab_size (2), pad_token_id (1;
	 * positions start at pad_token_id + 1), is_decoder (false), rob_abs_pos:
	 * position_embedding_type absent or "absolute"; rob_num_labels: the classifier's outputs
	 * (PretrainedConfig: the entries of id2label, else num_labels, else 2). BERT's heads
	 * (BertForSequenceClassification, BertForTokenClassification) fill the same fields but
	 * rob_pad (BertConfig's 512, 2, false, "absolute"; config_parse_bert_head). Whisper:
	 * rob_max_pos is max_target_positions (448), the decoder's position table. CLIPModel
	 * (config_clip.c): rob_max_pos its text_config.max_position_embeddings (77),
	 * rob_num_labels its projection_dim (512: text_projection's / visual_projection's rows).
	 * SiglipModel (config_clip.c): rob_max_pos its text_config.max_position_embeddings (64),
	 * rob_num_labels its text_config.projection_size (hidden_size: text_model.head's rows) */
	int64_t rob_max_pos, rob_types, rob_pad, rob_num_labels;
	bool rob_decoder, rob_abs_pos;
	/* The decoder sequence classifiers (Llama-, Mistral-, Qwen2-, Qwen3ForSequence-
	 * Classification, GPT2ForSequenceClassification; config_seqcls.c): rob_num_labels holds
	 * the score head's outputs as RoBERTa's; cls_from_token (not read for GPT-2's):
	 * classifier_from_token or method given (vLLM's online conversion of a causal LM, refused
	 * by the planner) */
	bool cls_from_token;
	/* Chameleon (ChameleonConfig; read for model_type chameleon only, config_chameleon.c):
	 * swin_norm (false if absent: the 30B's norms after the attention and the MLP),
	 * hidden_act silu (cham_act_silu; vLLM's ChameleonMLP builds no other), and vq_config with
	 * ChameleonVQVAEConfig's defaults: channel_multiplier (vq_levels entries, the encoder's
	 * resolutions), num_res_blocks, resolution, attn_resolutions (the image sizes whose
	 * levels have attention blocks; none if absent or null) and attn_type "vanilla"
	 * (vq_attn: the attention blocks are built at all); the channels: base_channels (128),
	 * in_channels (3), latent_channels (256), embed_dim (256), num_embeddings (8192),
	 * double_latent (false: conv_out has latent_channels outputs, else twice as many) */
	bool cham_swin, cham_act_silu, vq_attn, vq_double;
	int64_t vq_levels, vq_res_blocks, vq_resolution;
	int64_t vq_base, vq_in, vq_latent, vq_embed, vq_n_embed;
	int64_t vq_mult[CKPT_MAX_VQ_LEVELS];
	int64_t vq_attn_res[CKPT_MAX_VQ_LEVELS];
	size_t vq_n_attn_res;
	/* ModernBERT (ModernBertConfig; read for model_type modernbert only,
	 * config_modernbert.c; -1 / 0 / false otherwise; rob_num_labels holds its classifier's
	 * outputs as RoBERTa's): global_attn_every_n_layers (3; layer i is global when i % it ==
	 * 0), local_attention (128; the local layers see |i - j| <= local_attention / 2),
	 * global_rope_theta (160000), local_rope_theta (10000 when absent, the global theta
	 * when null), norm_eps (1e-5), norm_bias / classifier_bias (false), hidden_activation
	 * and classifier_activation "gelu" (mb_gelu / mb_cls_gelu: absent or "gelu"),
	 * classifier_pooling: 0 "cls" (its default), 1 "mean", -1 anything else */
	int64_t mb_every, mb_local, mb_pool;
	double mb_global_theta, mb_local_theta, mb_norm_eps;
	bool mb_norm_bias, mb_cls_bias, mb_gelu, mb_cls_gelu;
	/* DeepSeek MLA */
	int64_t q_lora_rank; /* -1 = null */
	int64_t kv_lora_rank;
	int64_t qk_nope_head_dim;
	int64_t qk_rope_head_dim;
	int64_t v_head_dim;
	/* Vision tower (vision_config; Qwen2-VL). has_vision false when absent. */
	bool has_vision;
	int64_t v_depth, v_embed_dim, v_num_heads; /* -1 if absent */
	double v_mlp_ratio;                        /* default 4 */
	int64_t v_patch_size;                      /* default 14 */
	bool v_patch_given;                        /* patch_size present (SigLIP's default: 16) */
	int64_t v_temporal_patch_size;             /* default 2 */
	int64_t v_spatial_merge_size;              /* default 2 */
	int64_t v_in_chans; /* in_chans | in_channels | num_channels (SigLIP), default 3 */
	/* Qwen2.5-VL names: the vision width is hidden_size, its MLP hidden
	 * intermediate_size, the merger's output out_hidden_size (-1 if absent;
	 * in Qwen2-VL's vision_config hidden_size is the merger's output) */
	int64_t v_hidden_size, v_intermediate_size, v_out_hidden_size;
	/* SigLIP names (Gemma 3): blocks num_hidden_layers, heads num_attention_heads,
	 * image_size (-1 if absent; the planner applies SiglipVisionConfig's defaults) */
	int64_t v_num_layers, v_num_attn_heads, v_image_size;
	/* Llama 4's vision_config: vision_output_dim, projector_input_dim,
	 * projector_output_dim (-1 if absent; the planner applies Llama4VisionConfig's
	 * defaults) */
	int64_t v_output_dim, v_proj_in_dim, v_proj_out_dim;
	/* Qwen3-VL's vision_config: num_position_embeddings (pos_embed rows; -1 if absent)
	 * and deepstack_visual_indexes, the blocks whose output feeds one deepstack merger
	 * each (has_deepstack when the list is present; the planner applies
	 * Qwen3VLVisionConfig's defaults otherwise) */
	int64_t v_num_pos;
	/* Mistral 3 (Mistral3Config, top level): multimodal_projector_bias (default false);
	 * spatial_merge_size read there when vision_config has none (Pixtral's has none);
	 * vision_feature_layer given as a list (v_feature_list; the projector then takes
	 * several layers' features, which its norm cannot, so the planner refuses it) */
	bool mm_projector_bias, v_feature_list;
	/* LLaVA (LlavaConfig, model_type llava; read for it only): vision_feature_layer (an
	 * integer; default -2), vision_config.model_type (default clip_vision_model; pixtral
	 * makes the planner take LLaVA's Pixtral-tower table, pixtral-12b's) and
	 * text_config.model_type (default llama; "" without a text_config object), each
	 * truncated to its buffer; multimodal_projector_bias defaults to true there. Mistral 3
	 * (model_type mistral3) reads vision_feature_layer too, default -1 */
	int64_t v_feature_layer;
	char v_model_type[32], lm_model_type[32];
	/* LLaVA-NeXT-Video (LlavaNextVideoConfig; read for it only): spatial_pool_mode (default
	 * "average"; truncated to its buffer) and spatial_pool_stride (default 2), the video
	 * resampler's pooling */
	char v_pool_mode[16];
	int64_t v_pool_stride;
	/* Qwen2-Audio (Qwen2AudioConfig's audio_config, Qwen2AudioEncoderConfig's defaults; read
	 * for model_type qwen2_audio only, has_audio when the object is there): num_mel_bins,
	 * encoder_layers, encoder_attention_heads, encoder_ffn_dim, d_model,
	 * max_source_positions; Voxtral's audio_config too, VoxtralEncoderConfig's names and
	 * defaults, config_voxtral.c; Qwen2.5-Omni's thinker_config.audio_config with
	 * Qwen2_5OmniAudioEncoderConfig's, and its output_dim, config_omni.c; Whisper's
	 * top-level encoder keys, WhisperConfig's defaults, config_whisper.c) */
	bool has_audio;
	int64_t a_mel, a_layers, a_heads, a_ffn, a_d_model, a_max_pos, a_out_dim;
	int64_t a_dsh; /* Qwen3-Omni's downsample_hidden_size (the Conv2d stem's channels) */
	/* Aria (AriaConfig, model_type aria; read for it only, config_aria.c): the projector's
	 * learned queries, max(projector_patch_to_query_dict.values()) (256 when absent) */
	int64_t aria_queries;
	/* Granite Speech (GraniteSpeechConfig, model_type granite_speech; read for it only,
	 * config_granite_speech.c): encoder_config (GraniteSpeechEncoderConfig's defaults:
	 * input_dim 160, num_layers 10, hidden_dim 1024, feedforward_mult 4, num_heads 8,
	 * dim_head 128, output_dim 42, context_size 200, max_pos_emb 512, conv_kernel_size 15,
	 * conv_expansion_factor 2), its projector_config into qf_* and the top level's
	 * window_size 15 / downsample_rate 5 */
	int64_t gs_in, gs_layers, gs_hidden, gs_ff_mult, gs_heads, gs_dim_head, gs_out, gs_ctx;
	int64_t gs_max_pos, gs_kernel, gs_conv_exp;
	int64_t gs_window, gs_downsample;
	/* A BLIP-2 Q-Former (Blip2QFormerConfig: Granite Speech's projector_config, BLIP-2's
	 * qformer_config; config_qformer.c, its defaults for absent keys): hidden_size 768,
	 * num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072,
	 * cross_attention_frequency 2 (a crossattention in every layer i with i % qf_cross == 0),
	 * encoder_hidden_size 1408 (BLIP-2: vision_config.hidden_size, as Blip2Config sets it);
	 * qf_text for use_qformer_text_input true, qf_abs for position_embedding_type absolute,
	 * qf_model its model_type (blip_2_qformer when absent); BLIP-2's num_query_tokens (32;
	 * config_blip2.c, which also sets vision_config's sizes and qkv_bias into the v_* fields)
	 */
	int64_t qf_hidden, qf_layers, qf_heads, qf_inter, qf_cross, qf_enc, num_query_tokens;
	bool qf_text, qf_abs;
	char qf_model[32];
	/* Mllama (MllamaConfig, model_type mllama; read for it only, config_mllama.c): the
	 * vision_config's num_global_layers (8: the gated global transformer), max_num_tiles (4),
	 * the entries of supported_aspect_ratios (8; max_aspect_ratio_id: the tile embeddings
	 * hold it + 1 rows), norm_eps (1e-5); the vision keys MllamaVisionConfig's defaults fill
	 * go to v_* (hidden_size 1280, intermediate_size 5120, num_hidden_layers 32,
	 * attention_heads 16, num_channels 3, image_size 448, patch_size 14, vision_output_dim
	 * 7680); text_config's cross_attention_layers (MllamaTextConfig's [3, 8, ..., 38]) go to
	 * full_attn_idxs (has_full_attn_idxs set); ml_head_dim_key: text_config gives head_dim */
	int64_t ml_global_layers, ml_max_tiles, ml_n_aspect;
	double ml_norm_eps;
	bool ml_head_dim_key;
	/* InternVL (InternVLConfig, model_type internvl; read for it only, config_internvl.c):
	 * InternVLVisionConfig's switches attention_bias (v_attn_bias: q/k/v biases),
	 * use_qk_norm (q_norm / k_norm), norm_type (v_norm_ln: layer_norm, whose norms have
	 * biases; false: rms_norm), use_mask_token, use_absolute_position_embeddings (v_abs_pos),
	 * use_mean_pooling (v_mean_pool: no final layernorm then); the top level's
	 * vision_feature_select_strategy (default "default"; truncated to its buffer). Its sizes
	 * go to v_hidden_size, v_intermediate_size, v_num_layers, v_num_attn_heads, v_in_chans,
	 * v_image_size, v_patch_size with the class's defaults applied, downsample_ratio to
	 * v_spatial_merge_size as 1 / ratio, vision_feature_layer to v_feature_layer (-1) */
	bool v_attn_bias, v_qk_norm, v_norm_ln, v_mask_token, v_abs_pos, v_mean_pool;
	char v_select[16];
	bool has_deepstack;
	int64_t *deepstack; /* owned */
	size_t n_deepstack;
	/* MRoPE: rope_scaling.mrope_section | rope_parameters.mrope_section (checked at plan
	 * time); has_mrope when the list is present, n_mrope its length. */
	bool has_mrope;
	size_t n_mrope;
	int64_t mrope_section[CKPT_MAX_MROPE];
	/* partial_rotary_factor as given (GLM-4.1V / 4.5V's MRoPE spans the first
	 * int(head_dim * factor) dims; the planner checks the sections against it): the
	 * number, or 0 when absent or null, -1 when not a positive number (the families that
	 * read it refuse that; the others never look) */
	double partial_rotary_factor;
	/* quantization_config */
	ckpt_quant_kind quant;
	int64_t quant_block[2]; /* weight_block_size, default 128x128 */
	/* CKPT_QUANT_FP8_BLOCK from compressed-tensors (strategy block, block_structure into
	 * quant_block): the block scales are X.weight_scale (F32, BF16 or F16), not
	 * weight_scale_inv */
	bool quant_block_ct;
	int64_t quant_group; /* compressed-tensors strategy group: weights.group_size;
	                        strategy channel (and other schemes): 0 */
	bool quant_int4_i8;  /* CKPT_QUANT_CT_INT4 stored int-quantized: one code per I8 */
	bool quant_pack8;    /* CKPT_QUANT_CT_INT8 stored pack-quantized: 4 codes per I32
	                        word, X.weight_packed I32 [N, K/4] */
	bool quant_asym;     /* compressed-tensors with zero points (symmetric false):
	                        X.weight_zero_point, packed along the rows (pack-quantized,
	                        I32 [ceil(N/(32/bits)), K/G or 1]) or I8 [N, 1] (int-quantized
	                        int8 per channel) */
	bool quant_gidx;     /* compressed-tensors actorder "group" (alias "dynamic"):
	                        X.weight_g_idx I32 [K], the group of each input column */
	char **quant_ignore; /* ignore | ignored_layers | modules_to_not_convert; owned */
	size_t n_quant_ignore;
	/* fbgemm_fp8's modules_to_not_convert, verbatim (not in quant_ignore): matched against
	 * module names as transformers does (shardmap_fb_kept); owned */
	char **quant_keep;
	size_t n_quant_keep;
} ckpt_config;

/* Parse config.json text (len bytes, need not be NUL-terminated) into out; on
 * failure out is left cleared. Missing required fields (architectures,
 * hidden_size, num_attention_heads, num_hidden_layers, vocab_size) and wrong
 * types are WT_ECORRUPT naming the field; an unknown quant_method is
 * WT_EUNSUPPORTED. A `text_config` object (transformers 5.x multimodal
 * configs) supplies the language-model fields in place of the top level;
 * architectures, model_type, quantization_config and vision_config are always
 * read from the top level. Free with ckpt_config_clear(). */
int ckpt_config_parse(const char *json, size_t len, ckpt_config *out, wt_errbuf *err);
void ckpt_config_clear(ckpt_config *c); /* frees owned fields; NULL-safe */

/*
 * Fields a consumer of config.json other than the planner reads (the reference
 * forward pass: rms_norm_eps, rope_theta, ...), read by the same parser rules
 * as ckpt_config_parse (one owner): JSON with duplicate keys refused, the
 * language-model view (a `text_config` object laid over the top level), null
 * counting as absent, a present field of the wrong JSON type WT_ECORRUPT
 * naming it. `key` is a field name or "parent.child" (one level, e.g.
 * "rope_parameters.rope_theta"; a present parent that is not an object is
 * WT_ECORRUPT naming it). A CKPT_FIELD_REAL accepts integers too. A string
 * longer than CKPT_FIELD_STR - 1 bytes is WT_ETOOBIG.
 */
#define CKPT_FIELD_STR 64
typedef enum ckpt_field_kind {
	CKPT_FIELD_INT,
	CKPT_FIELD_REAL,
	CKPT_FIELD_BOOL,
	CKPT_FIELD_STRING,
} ckpt_field_kind;

typedef struct ckpt_field {
	const char *key; /* in */
	ckpt_field_kind kind;
	bool present; /* out: false when absent or null (the value members are then 0) */
	int64_t i;
	double r;
	bool b;
	char s[CKPT_FIELD_STR];
} ckpt_field;

int ckpt_config_fields(const char *json, size_t len, ckpt_field *fields, size_t n, wt_errbuf *err);

/* Solar's block skip connections (SolarConfig's bskcn_1..4 and bskcn_tv; config_solar.c): bit i
 * of save[k] for the layers i < n_layers that bskcn_1 (k 0) / bskcn_2 (k 1) save, of mix[k] for
 * those that bskcn_3 / bskcn_4 mix; tv is bskcn_tv[1] (vLLM's inference value). Absent keys take
 * SolarConfig's defaults; the loader's refusals of these keys apply (WT_ECORRUPT /
 * WT_EUNSUPPORTED naming the key). */
#define CKPT_SOLAR_MAX_LAYERS 256
typedef struct ckpt_solar_skips {
	uint64_t save[2][CKPT_SOLAR_MAX_LAYERS / 64], mix[2][CKPT_SOLAR_MAX_LAYERS / 64];
	double tv;
} ckpt_solar_skips;
int ckpt_config_solar(const char *json, size_t len, int64_t n_layers, ckpt_solar_skips *out,
                      wt_errbuf *err);

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
/* How far a ckpt_open_progress got, read by other threads while it runs:
 * total is set to the bytes of every safetensors file before the content
 * digest starts, done counts the bytes hashed (and those the memo knew).
 * Setting cancel makes the open stop at the digest's next block (8 MiB) with
 * WT_ECANCELED. Zero it before the open; it must outlive the call. */
typedef struct ckpt_progress {
	_Atomic uint64_t done;
	_Atomic uint64_t total;
	_Atomic bool cancel;
} ckpt_progress;
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
