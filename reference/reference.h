/*
 * reference.h — module-internal interface of the reference CPU forward pass
 * (reference/): a small float32 decoder forward written twice over
 * the same math, once over the original checkpoint tensors ("full") and once
 * over the per-rank runtime tensors of a layout the way a TP/EP engine runs
 * them ("sharded", docs/format.md section 2), so that comparing the two logits
 * proves the shards are right.
 *
 * reference/ is an internal module (build/libwt_internal.a, linked by
 * weightctl and the tests), never part of libweights. These functions see
 * tensors only through a ref_set (name -> bytes), filled by the caller
 * (reference/ckpt.h: from a checkpoint and the ranks the planner produces).
 * Nothing here prints or exits.
 *
 * Families: decoders with Llama-style attention (llama, mistral, qwen2 with
 * q/k/v biases, qwen3 with q_norm/k_norm; Gemma, Gemma 2 and Gemma 3 text
 * through the switches of ref_cfg, cfg_gemma.c; Phi-3, StarCoder2, GLM-4,
 * OLMo 2 and OLMo 1 through those of cfg_fam.c), Mixtral MoE (PhiMoE: LayerNorms,
 * sparsemixer routing, LM head bias; cfg_phimoe.c), Qwen2-MoE (shared
 * expert with a sigmoid gate, mlp_only_layers / decoder_sparse_step) and Qwen3-MoE,
 * DeepSeek-V3 (MLA, sigmoid routing; reference_mla.c) and DeepSeek-V2 (softmax
 * routing), GLM-4.5 (DeepSeek-V3's MoE under Llama's attention with partial RoPE), dots.llm1
 * (the same under Qwen3's attention, sliding layers from max_window_layers), Seed-OSS (Llama
 * with its bias switches), SmolLM3 (Llama without RoPE on its NoPE layers; cfg_smollm3.c),
 * ERNIE 4.5 (adjacent-pair RoPE; the MoE's softmax routing chosen with a correction bias), GPT-OSS
 * (attention sinks, biased router and experts, clamped SwiGLU; gpt_oss.c, MXFP4 or dequantized
 * experts), the Llama 4 language model (NoPE layers, chunked attention, L2 q/k norms, input-scaled
 * experts; llama4.c), Qwen3-Next (gated delta net and gated full attention layers over
 * Qwen2-MoE's MoE; qwen3_next.c), Granite 4.0 (Mamba2 mixers and attention layers over
 * GraniteMoE's experts and the shared MLP; granite4.c), Gemma 3n's language model (AltUp,
 * Laurel, per-layer inputs, KV sharing; gemma3n.c), Whisper (the encoder on a fixed log-mel, the
 * decoder with cross-attention; whisper.c) and BERT (reference_bert.c). Anything
 * else is
 * WT_EUNSUPPORTED naming the architecture.
 *
 * Thread rule: a set caches dequantized values on first use, so one set is
 * used by one thread at a time.
 */
#ifndef WT_REFERENCE_H
#define WT_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weights/dtype.h"
#include "weights/error.h"
#include "weights/layout.h"

#include "reference/ref_cfg.h"

/*
 * Tolerance of full vs sharded logits for an unquantized layout:
 * max |full - sharded| <= REF_TOL_F32 * max |full|. The two paths see
 * bit-identical weights (slicing and fusing copy bytes) and differ only in the
 * order of float32 sums (all-reduce of partial o_proj/down_proj/expert sums,
 * vocab-parallel embedding). One float32 rounding is 2^-24 = 6e-8 relative;
 * a dot product of K <= 512 terms reordered moves by at most ~K * 6e-8 = 3e-5
 * of the sum of |terms| in the worst case, typically sqrt(K) * 6e-8 = 1.4e-6.
 * 1e-4 leaves ~3x headroom over the worst case and is still ~1000x below the
 * error of any wrong slice (a swapped head or rank moves logits by O(max)).
 */
#define REF_TOL_F32 1e-4

/*
 * Named error budgets for quantized layouts, relative to max |full logit|:
 * logits of the dequantized rank tensors vs the full float32 path (MoE layers
 * follow the full path's expert choices, see ref_forward_sharded).
 * Measured worst ratios on the wt-mkckpt fixtures (llama TP 2, mixtral and
 * qwen2_moe TP 2 / EP 2, seeds 1, 2, 3, 11): fp8-* 0.073, int8-channel 0.016,
 * int4-group 0.25; the budgets leave ~1.6x headroom and stay well below the
 * ~1.2 of a swapped rank. They are coarse: a small slicing error (one layer's
 * gate/up halves swapped moves logits ~0.1) can hide in fp8 noise, which is
 * why the exact proof is the unquantized comparison above.
 */
#define REF_BUDGET_FP8  0.12 /* e4m3: 3 mantissa bits, up to 2^-4 per weight */
#define REF_BUDGET_INT8 0.03 /* 127 levels per row */
#define REF_BUDGET_INT4 0.40 /* 7 positive levels per group */
/* Unquantized layouts whose outputs round the source values: FP8 checkpoints
 * emitted as BF16 (dtype source), or a narrower --dtype than the source.
 * Measured 0.005 (deepseek_v3 FP8 -> BF16); BF16 keeps 8 significant bits. */
#define REF_BUDGET_ROUND 0.02

/*
 * Quantized layouts of an MXFP4 source (GPT-OSS experts, docs/format.md 4.6): the
 * scheme requantizes values whose 32-element blocks each carry their own power-of-two
 * scale, so one scale per channel spans blocks up to 2^9 apart (the wt-mkckpt fixture
 * draws E8M0 118..127) and the small blocks round coarsely. Measured worst ratios on
 * the gpt_oss fixture (seeds 1, 2, 3, 5, 11; TP 2, EP 2): fp8-* 0.118, int8-channel
 * 0.048; ~1.6x headroom. int4-group measured 0.43-0.54, near the 0.81 of exchanged
 * expert stacks, so it keeps REF_BUDGET_INT4 and verify-forward calls the scheme too
 * coarse for such a model (its unquantized re-check still proves the slicing).
 * Unquantized layouts of an MXFP4 source are exact: BF16 holds every MXFP4 value.
 */
#define REF_BUDGET_MX_FP8  0.19
#define REF_BUDGET_MX_INT8 0.08

/*
 * Quantized layouts of a model with gated-delta-net layers (Qwen3-Next's linear
 * attention, qwen3_next.c): each head's output is RMS-normalised (RMSNormGated) and the
 * delta rule subtracts the state's recall from the value, so small relative weight
 * errors reach the residual stream at full scale; on the random wt-mkckpt fixture even
 * quantizing only the full-attention and MLP weights (linear_attn excluded) moves the
 * logits 0.10-0.22 (fp8) / 0.02-0.06 (int8), through the later gated delta net.
 * Measured worst ratios on the qwen3_next fixture (seeds 1-13; TP 1, 2, 4, EP 2,
 * TP 2 x EP 2): fp8-* 0.452, int8-channel 0.0997; ~1.6x headroom. Coarse: the ranks'
 * in_proj_qkvz or out_proj exchanged (1.35, 1.24) stay above the fp8 budget, but a
 * conv1d segment swap (0.83) barely, and exchanged expert stacks (0.39) or A_log slices
 * (0.011) hide in it (test_reference_qwen3_next.c); the exact unquantized comparison
 * catches them all, and verify-forward re-checks a quantized layout above its budget
 * unquantized. int4-group measured 0.57-1.16, as large as a slicing error, so it keeps
 * REF_BUDGET_INT4 and verify-forward calls the scheme too coarse. PLaMo 2's Mamba mixers
 * (plamo2.c) take the same budgets: post_mixer_norm scales a nearly cancelling mixer output to
 * full size; measured worst on the plamo2 fixture (seeds 1-13, TP 1 / 2 / 4 / 8): fp8-channel
 * 0.607, int8-channel 0.154 (no headroom to speak of; the tests' seeds 0.35 / 0.046).
 */
#define REF_BUDGET_LIN_FP8  0.72
#define REF_BUDGET_LIN_INT8 0.16

/* Budget for a layout's quant scheme (REF_TOL_F32 for WT_QUANT_NONE); _mx: of an
 * MXFP4 source (REF_BUDGET_MX_*, int4-group REF_BUDGET_INT4); _lin: of a model with
 * gated-delta-net layers or PLaMo 2's Mamba mixers (REF_BUDGET_LIN_*, int4-group
 * REF_BUDGET_INT4). */
double ref_budget(wt_quant q);
double ref_budget_mx(wt_quant q);
double ref_budget_lin(wt_quant q);

/* ---------------- tensor sets ---------------- */

typedef struct ref_tensor {
	char *name; /* owned */
	wt_dtype dtype;
	int ndim;
	int64_t shape[WT_MAX_DIMS]; /* row-major, last dim contiguous */
	uint8_t *data;              /* owned; the tensor's bytes as stored/emitted */
	uint64_t nbytes;
	float *f32; /* owned cache of the dequantized values; NULL until used */
} ref_tensor;

/*
 * Named tensors of one checkpoint or one rank. `quant`/`group` say how
 * F8_E4M3 / I8 / I32 weights of a rank set are dequantized with their
 * `<name>_scale` tensor (the layout's scheme). For a checkpoint set
 * (quant = WT_QUANT_NONE), an F8_E4M3 weight is dequantized with
 * `<name>_scale_inv` (blocks of block[0] x block[1]) or `<name>_scale`
 * (per tensor). Initialise with {0} and set quant/group/block as needed.
 */
typedef struct ref_set {
	ref_tensor *t; /* owned; sorted by name after the first lookup */
	size_t n, cap;
	bool sorted;
	wt_quant quant;
	int64_t group;      /* int4-group; 0 = 128 */
	int64_t block[2];   /* checkpoint FP8 blocks; 0 = 128 */
	bool fp8_rows;      /* checkpoint FP8 per output channel (fbgemm_fp8): X.weight [N, K] +
	                       X.weight_scale [N, 1]; Llama 4 stacks [E, K, N] + X_scale of E * N */
	bool fp8_blocks_ct; /* checkpoint FP8 blocks from compressed-tensors: X.weight_scale */
} ref_set;

/* Give out in's checkpoint quantization (quant, group, FP8 block / row / compressed-tensors
 * layout): a family's renamed copy of a set reads its tensors as in's. */
void ref_set_like(ref_set *out, const ref_set *in);

/* A table of parts of tensor names and their reference forms: map[k][0] -> map[k][1]. */
typedef struct ref_name_map {
	const char *const (*map)[2];
	size_t n;
} ref_name_map;
#define REF_NAME_MAP(a) ((ref_name_map){(a), sizeof(a) / sizeof((a)[0])})
/*
 * name's reference form into buf (cap bytes): the first of `tops` that starts name is replaced by
 * its form (none matching: name as it is), then the first of `leaves` found in that by its form.
 * *top / *leaf (when not NULL): the index matched, or -1; *tail (when not NULL): what follows the
 * replaced leaf in buf, NULL when none was. WT_EINVAL naming the tensor when it does not fit.
 */
int ref_map_name(const char *name, ref_name_map tops, ref_name_map leaves, char *buf, size_t cap,
                 int *top, int *leaf, const char **tail, wt_errbuf *err);
/*
 * A tensor t holding [q; k; v] as three equal thirds of its rows (Qwen's c_attn weight and bias,
 * Baichuan's W_pack) added to out as <pre>q_proj.<leaf>, k_proj.<leaf> and v_proj.<leaf> (pre ends
 * in "self_attn."). rows > 0: the rows each third must have. WT_EUNSUPPORTED naming the tensor
 * when it is not a 16- or 32-bit float whose rows split so.
 */
int ref_split_thirds(const ref_tensor *t, const char *pre, const char *leaf, int64_t rows,
                     ref_set *out, wt_errbuf *err);
/* Copy a tensor into the set. WT_EDUP for a name already present. */
int ref_set_add(ref_set *s, const char *name, wt_dtype dt, int ndim, const int64_t *shape,
                const void *bytes, uint64_t nbytes, wt_errbuf *err);
/* Copy tensor t (its dtype, shape and bytes) into the set under name. */
int ref_set_add_as(ref_set *s, const char *name, const ref_tensor *t, wt_errbuf *err);
/* What a family's renaming reads besides the tensor: the config, and whether the set is the
 * checkpoint's (its packed / interleaved forms) rather than a shard's. */
typedef struct ref_rename_ctx {
	const ref_cfg *c;
	bool ckpt;
} ref_rename_ctx;
/* Add tensor t of set in to out under its reference name(s). */
typedef int (*ref_rename_fn)(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t,
                             ref_set *out, wt_errbuf *err);
/* out = in renamed tensor by tensor through fn, with in's quantization (ref_set_like); on the
 * first failure out is cleared and its code returned. c may be NULL for a family whose names
 * need no config. */
int ref_rename_each(ref_set *in, ref_set *out, ref_rename_fn fn, const ref_cfg *c, bool ckpt,
                    wt_errbuf *err);
/* Borrowed; valid until the set is cleared. NULL if absent. Callers (tests)
 * may modify data/f32 in place. */
ref_tensor *ref_set_find(ref_set *s, const char *name);
/* Free everything and leave an empty set (quant/group/block kept). NULL-safe. */
void ref_set_clear(ref_set *s);

/*
 * The values of tensor `name` as float32, with its shape checked against
 * want[0..nd) (for quantized I32 int4 weights, the unpacked shape). Borrowed;
 * valid until the set is cleared. WT_ENOTFOUND / WT_ESHAPE / WT_EDTYPE name
 * the tensor.
 */
int ref_get(ref_set *s, const char *name, int nd, const int64_t *want, const float **out,
            wt_errbuf *err);

/* ---------------- configuration (the struct: ref_cfg.h) ---------------- */

/*
 * Complete a configuration. The caller has filled the fields config.json
 * shares with the planner (hid, H, KV, d, I, V, L, tied, E, Ie, Is,
 * sparse_step, mlp_only_mask, first_dense, layer_freq, q_lora, kv_lora, nope,
 * rope, vhd, block) from the loader's ckpt_config, and passes the planner's
 * family name for the architecture (NULL: none; reference/ckpt.h does all
 * this: ref_cfg_from_ckpt). This reads the reference-only fields of the
 * config.json text with the loader's parser (ckpt_config_fields) and validates the whole: a family
 * without a reference (or none) is WT_EUNSUPPORTED naming `arch`, a missing required field or one
 * of the wrong type WT_ECORRUPT naming it, sizes the reference cannot run
 * WT_EUNSUPPORTED with the numbers.
 */
int ref_cfg_finish(ref_cfg *c, const char *family, const char *arch, const char *json, size_t len,
                   wt_errbuf *err);
/*
 * ref_get with the name formatted from fmt; nd dims a, b, c (unused
 * trailing ones ignored). With `optional`, a missing tensor gives *out = NULL
 * and WT_OK.
 */
int ref_getf(ref_set *s, const float **out, bool optional, wt_errbuf *err, int nd, int64_t a,
             int64_t b, int64_t c, const char *fmt, ...) WT_PRINTF(9, 10);

/* Layer l's q / k / v weights and biases under "model.layers.<l>.self_attn.": the full
 * checkpoint's q_proj [qd, hid], k_proj [kd, hid], v_proj [vd, hid] (their biases optional), or
 * a rank's fused qkv_proj [qd + kd + vd, hid] split in that order (its bias likewise). */
typedef struct ref_qkv {
	const float *wq, *wk, *wv, *bq, *bk, *bv;
} ref_qkv;
int ref_get_qkv(ref_set *s, int64_t l, int64_t hid, int64_t qd, int64_t kd, int64_t vd, bool full,
                ref_qkv *o, wt_errbuf *err);

/* Floats of the forward output for n_tok tokens: decoders n_tok * V logits (the decoder
 * sequence classifiers n_tok * n_labels scores, the decoder embedding models n_tok * hid
 * final hidden states);
 * BERT (n_tok + 1) * hid: the last hidden state, then the pooler output; RoBERTa and ModernBERT
 * n_tok * hid, the last hidden state; RoBERTa's sequence classifiers (n_tok + 1) * hid, the last
 * row the classifier's n_labels logits then zeros. ref_out_rows: the rows of that output. */
size_t ref_out_count(const ref_cfg *c, size_t n_tok);
size_t ref_out_rows(const ref_cfg *c, size_t n_tok);

/* Whether layer i has an MoE block. */
bool ref_layer_is_moe(const ref_cfg *c, int64_t i);
/* Module prefix of layer i's MoE block ("model.layers.3.block_sparse_moe.") into buf. */
void ref_moe_prefix(const ref_cfg *c, int64_t i, char *buf, size_t cap);

/* ---------------- forward passes ---------------- */

/*
 * Full path over checkpoint tensors. tokens[n_tok] < V; positions 0..n_tok-1;
 * logits [n_tok, V] caller-allocated. routes (may be NULL), [L * n_tok * topk],
 * receives the experts each MoE layer chose per token (index
 * (layer * n_tok + t) * topk + j).
 */
int ref_forward_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok,
                     float *logits, int64_t *routes, wt_errbuf *err);

/*
 * Sharded path over the rank sets of layout l (ranks[l->ep_size * l->tp_size],
 * index ep_rank * tp_size + tp_rank) as the TP group of ep rank `group`
 * would run it: per-rank partial sums, all-reduce in rank order, vocab-parallel
 * embedding and LM head, MoE experts from the EP ranks. Shape disagreements
 * with docs/format.md are WT_ESHAPE naming the tensor; non-zero vocab padding rows
 * are WT_ECORRUPT. With routes (from ref_forward_full) MoE layers take
 * those expert choices instead of their own top-k (the weights still come from
 * each rank's router): quantization noise can flip a near-tie in the router,
 * which is not a shard error; NULL routes independently. PhiMoE's routes are
 * route codes carrying sparsemixer's kept sets too (reference_int.h).
 */
int ref_forward_sharded(const ref_cfg *c, ref_set *ranks, const wt_layout *l, uint32_t group,
                        const int64_t *tokens, size_t n_tok, const int64_t *routes, float *logits,
                        wt_errbuf *err);

/* ---------------- comparison ---------------- */

typedef struct ref_diff {
	double max_abs_diff; /* max |ref - got| */
	double max_abs_ref;  /* max |ref| */
	size_t at;           /* flat index of max_abs_diff */
	bool nonfinite;      /* a NaN/Inf in either */
} ref_diff;

void ref_compare(const float *ref, const float *got, size_t n, ref_diff *out);
/* max_abs_diff <= budget * max_abs_ref and all finite. */
bool ref_within(const ref_diff *d, double budget);

/* ---------------- math shared by both paths (reference_math.c) ---------------- */

/* y[t] = x[t] * w / sqrt(mean(x[t]^2) + eps), rows of `dim`; y may alias x. */
void ref_rmsnorm(float *y, const float *x, const float *w, int64_t rows, int64_t dim, float eps);
/* ref_rmsnorm with the configuration's eps and weight offset: x[t] / rms * (norm_off + w). */
void ref_norm(const ref_cfg *c, float *y, const float *x, const float *w, int64_t rows,
              int64_t dim);
/* y[t][n] = sum_k x[t][k] * w[n][k] (+ b[n]); x [T,K], w [N,K], y [T,N]. */
void ref_linear(float *y, const float *x, const float *w, const float *b, int64_t T, int64_t K,
                int64_t N);
/* Rotate-half RoPE in place on heads of d at positions 0..T-1; x row stride `ld`. */
void ref_rope(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t ld, double theta);
/* Rotate-half RoPE of base theta on the first rd dims of each head of d (the rest untouched). */
void ref_rope_part(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t rd, int64_t ld,
                   double theta);
/* ref_rope with linear scaling (transformers' "linear" rope_type): frequencies / factor. */
void ref_rope_scaled(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t ld, double theta,
                     double factor);
/* The RoPE of decoder layer l (ref_layer_attn's base and linear factor, Phi-3's
 * partial rotary and LongRoPE) on T rows of n_heads heads of c->d, row stride ld. */
void ref_rope_layer(const ref_cfg *c, int64_t l, float *x, int64_t T, int64_t n_heads, int64_t ld);
/* RoPE of c on MLA's rope parts (c->rope dims per head; DeepSeek, after the
 * de-interleave): its scaling, no window. */
void ref_rope_mla(const ref_cfg *c, float *x, int64_t T, int64_t n_heads, int64_t ld);
/* DeepSeek rope_interleave (transformers' apply_rotary_pos_emb_interleave): each
 * head's d values [x0 x1 x2 x3 ...] become [x0 x2 ... | x1 x3 ...] in place, so
 * that ref_rope then rotates the original adjacent pairs (x0, x1), ... */
void ref_rope_deinterleave(float *x, int64_t T, int64_t n_heads, int64_t d, int64_t ld);
/* How scores are formed and masked (ref_layer_attn gives a decoder layer's). */
typedef struct ref_attn_opt {
	bool causal;    /* token t sees 0..t; else all */
	float scale;    /* scores q.k times this; 0 = 1/sqrt(d) */
	float softcap;  /* scores become softcap * tanh(s / softcap) before the mask; 0 = none */
	int64_t window; /* causal sliding window: token t sees t-window+1..t; 0 = none */
	/* bidirectional window (ModernBERT's local layers, causal false): query t sees keys s
	 * with |t - s| <= bidir_window; 0 = none */
	int64_t bidir_window;
	/* GPT-OSS: one logit per q head of the call (sinks[h]) that joins each row's
	 * softmax denominator and is then dropped; NULL = none */
	const float *sinks;
	/* Llama 4 chunked attention: key s seen by query t when s / chunk == t / chunk
	 * (and s <= t); 0 = none */
	int64_t chunk;
	/* ALiBi (MPT, BLOOM): score of query t on key s plus alibi[h] * (s - t) for q head h of
	 * the call (BLOOM's transformers adds alibi[h] * s: softmax-equal); NULL = none */
	const float *alibi;
} ref_attn_opt;
/* The ALiBi slopes of c->H heads into out (vLLM's _get_alibi_slopes, transformers'
 * build_mpt_alibi_tensor; BLOOM's build_alibi_tensor is the same with alibi_max 8): with n
 * the next power of two >= H, m_k = k * alibi_max / n (k = 1..n), slope_k = 2^-m_k, and when
 * n != H the odd-indexed then the even-indexed ones, the first H of them. */
void ref_alibi_slopes(const ref_cfg *c, float *out);
/* The attention of decoder layer l: RoPE base, linear RoPE factor and options. */
void ref_layer_attn(const ref_cfg *c, int64_t l, double *theta, double *factor, ref_attn_opt *o);
/* Softmax attention: out[t][h] over q[t][h] and k/v[.][kv_of[h]]; rows have n_q*d
 * (q, out) and n_kv*d (k, v) floats. */
void ref_attention(float *out, const float *q, const float *k, const float *v, int64_t T,
                   int64_t n_q, int64_t n_kv, const int64_t *kv_of, int64_t d,
                   const ref_attn_opt *o);
/* x[i] = cap * tanh(x[i] / cap) (Gemma 2 logit soft-capping); cap > 0. */
void ref_softcap(float *x, int64_t n, float cap);
/* y[t] = (x[t] - mean) / sqrt(var + eps) * w + b, rows of `dim`; y may alias x; w NULL
 * is 1, b NULL is 0 (OLMo 1's parameter-free LayerNorm). */
void ref_layernorm(float *y, const float *x, const float *w, const float *b, int64_t rows,
                   int64_t dim, float eps);
/* Exact (erf) GELU in place. */
void ref_gelu(float *x, int64_t n);
/* x[i] = act(x[i]) in place. */
void ref_act_apply(float *x, int64_t n, ref_act act);
/* The norm of ref_cfg: RMSNorm (ref_norm), or LayerNorm with bias b for StarCoder2. */
void ref_norm_b(const ref_cfg *c, float *y, const float *x, const float *w, const float *b,
                int64_t rows, int64_t dim);
/* out[i] = act(g[i]) * u[i]. */
void ref_act_mul(float *out, const float *g, const float *u, int64_t n, ref_act act);
/* Plain MLP without the output bias (StarCoder2): y [T,hid] = act(x w1^T + b1) w2^T,
 * w1 [n_inter, hid], w2 [hid, n_inter], b1 optional; scratch T*n_inter floats. */
void ref_mlp_plain(float *y, const float *x, int64_t T, int64_t hid, int64_t n_inter,
                   const float *w1, const float *b1, const float *w2, ref_act act, float *scratch);
/* Gated MLP without the down bias: y [T,hid] = (act(x wg^T + bg) * (x wu^T + bu)) wd^T,
 * wg/wu [n_inter, hid], wd [hid, n_inter], biases optional; scratch 3*T*n_inter floats. */
void ref_ffn(float *y, const float *x, int64_t T, int64_t hid, int64_t n_inter, const float *wg,
             const float *bg, const float *wu, const float *bu, const float *wd, ref_act act,
             float *scratch);
/* ref_ffn with Falcon-H1's mlp_multipliers: act(gm * (x wg^T + bg)) * (x wu^T + bu), its
 * product with wd times dm (1, 1: ref_ffn). */
void ref_ffn_mult(float *y, const float *x, int64_t T, int64_t hid, int64_t n_inter,
                  const float *wg, const float *bg, const float *wu, const float *bu,
                  const float *wd, ref_act act, float *scratch, float gm, float dm);
/* y = softmax(x) over n values; y may alias x. */
void ref_softmax(float *y, const float *x, int64_t n);
/* Router: softmax over E logits, top-k (ties to the lower index), or the k experts
 * in `forced` when non-NULL; weights renormalised when `norm`. idx/w receive k entries. */
void ref_route(const float *logits, int64_t E, int64_t k, bool norm, const int64_t *forced,
               int64_t *idx, float *w);

#endif
