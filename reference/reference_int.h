/*
 * reference_int.h — private to the reference/ sources: the activation buffers
 * both forward paths share.
 */
#ifndef WT_REFERENCE_INT_H
#define WT_REFERENCE_INT_H

#include <jansson.h>

#include "reference/ref_mixers.h" /* the recurrent and hybrid token mixers */
#include "reference/reference.h"

#define REF_MAX_TOKENS 64  /* attention keeps one row of scores on the stack */
#define REF_MAX_HEADS  256 /* kv map of one layer on the stack */

/* A set of experts (or DeepSeek expert groups) in [0, REF_MAX_EXPERTS): the
 * routers' "taken" set. Zero-initialise; an index out of range is never in it. */
_Static_assert(REF_MAX_EXPERTS % 64 == 0, "ref_eset holds whole words");
typedef struct ref_eset {
	uint64_t w[REF_MAX_EXPERTS / 64];
} ref_eset;

static inline bool ref_eset_has(const ref_eset *s, int64_t e)
{
	return e >= 0 && e < REF_MAX_EXPERTS && ((s->w[e / 64] >> (e % 64)) & 1u);
}

static inline void ref_eset_add(ref_eset *s, int64_t e)
{
	if (e >= 0 && e < REF_MAX_EXPERTS)
		s->w[e / 64] |= 1ull << (e % 64);
}

/* Whether a layer's attention is DeepSeek's MLA (ref_mla): DeepSeek-V2 / V3, not
 * GLM-4.5 or ERNIE 4.5 MoE, whose REF_DEEPSEEK kind is their MoE only. */
static inline bool ref_is_mla(const ref_cfg *c)
{
	return c->kind == REF_DEEPSEEK && !c->glm4_moe && !c->ernie;
}

/* Activations for n_tok tokens; all owned. */
typedef struct ref_bufs {
	float *x; /* [T, hid] residual stream */
	float *h; /* [T, hid] normed input of a block */
	float *q, *k, *v, *att;
	float *o;       /* [T, hid] block output / per-rank partial */
	float *acc;     /* [T, hid] all-reduce accumulator */
	float *part;    /* [T, hid] EP all-reduce of one TP rank */
	float *y;       /* [T, hid] one expert's output */
	float *scratch; /* 6 * T * max(I, Ie, Is) */
	float *row;     /* [hid] one row (Llama 4: an expert's input times its score) */
	float *sc;      /* [T, hid] LongCat-Flash's shortcut MoE output, held for a layer */
} ref_bufs;

/* Leaf of the norm before layer i's attention: input_layernorm; NULL for OLMo 2,
 * whose attention reads the residual stream (ref_block_input). */
static inline const char *ref_attn_norm(const ref_cfg *c)
{
	if (c->apertus)
		return "attention_layernorm";
	if (c->lfm2)
		return "operator_norm";
	return c->olmo2 ? NULL : "input_layernorm";
}

/* Leaf of the norm before layer i's MLP / MoE: Gemma 2/3 pre_feedforward_layernorm
 * (their post_attention_layernorm normalises the attention output), NULL for OLMo 2
 * (none: its post_attention_layernorm is on the attention output too), Cohere's
 * input_layernorm (its parallel block; the sharded pass applies it to x before the
 * attention's output is added, the full pass reuses attention's input), else
 * post_attention_layernorm (GLM-4-0414 too). */
static inline const char *ref_mlp_norm(const ref_cfg *c)
{
	if (c->olmo2)
		return NULL;
	if (c->apertus)
		return "feedforward_layernorm";
	if (c->lfm2)
		return "ffn_norm";
	if (c->bamba || c->jamba)
		return "pre_ff_layernorm";
	if (c->cohere || c->phi || c->fl_one_ln) /* the parallel block: the attention's own input
	                                          * norm, on x */
		return "input_layernorm";
	return (c->sandwich && c->glm == 0) || c->vaultgemma ? "pre_feedforward_layernorm"
	                                                     : "post_attention_layernorm";
}

/* Leaves of the sandwich norms (c->sandwich) on the attention output (mlp false)
 * or the MLP output (mlp true): Gemma 2/3 post_attention_layernorm /
 * post_feedforward_layernorm, GLM-4-0414 post_self_attn_layernorm /
 * post_mlp_layernorm. */
static inline const char *ref_post_norm(const ref_cfg *c, bool mlp)
{
	if (c->glm != 0)
		return mlp ? "post_mlp_layernorm" : "post_self_attn_layernorm";
	if (c->chameleon) /* swin_norm */
		return mlp ? "post_attention_layernorm" : "input_layernorm";
	return mlp ? "post_feedforward_layernorm" : "post_attention_layernorm";
}

/* The leaf of a layer's MLP / MoE module: Llama 4's "feed_forward.", else "mlp."
 * (Mixtral's MoE block_sparse_moe.: ref_moe_prefix). */
static inline const char *ref_ffn_module(const ref_cfg *c)
{
	return c->llama4 || c->lfm2 || c->bamba || c->jamba ? "feed_forward."
	       : c->g4 && !c->nh                            ? "shared_mlp."
	       : c->arctic                                  ? "block_sparse_moe.mlp."
	                                                    : "mlp.";
}

/* x[0..n) times the embedding scale (Gemma), else unchanged. */
static inline void ref_embed_scale(const ref_cfg *c, float *x, int64_t n)
{
	for (int64_t i = 0; c->embed_scale != 0.0f && i < n; i++)
		x[i] *= c->embed_scale;
}

/* OLMo 1 / OLMoE clip_qkv: x[0..n) clamped to [-clip_qkv, clip_qkv] (elementwise, so a
 * rank clamping its heads equals the full clamp); nothing when clip_qkv is 0. */
static inline void ref_clip_qkv(const ref_cfg *c, float *x, int64_t n)
{
	float m = (float)c->clip_qkv;
	for (int64_t i = 0; c->clip_qkv > 0.0 && i < n; i++)
		x[i] = x[i] > m ? m : (x[i] < -m ? -m : x[i]);
}

/* x += y over n floats, y times Granite's residual_multiplier. */
static inline void ref_residual_add(const ref_cfg *c, float *x, const float *y, int64_t n)
{
	float m = c->resid_mult != 0.0 ? (float)c->resid_mult : 1.0f;
	for (int64_t i = 0; i < n; i++)
		x[i] += m == 1.0f ? y[i] : y[i] * m;
}

/* The LM head's output: / Granite's logits_scaling, * Cohere's logit_scale, Gemma 2's
 * final soft-cap. */
static inline void ref_logits_post(const ref_cfg *c, float *logits, int64_t n)
{
	for (int64_t i = 0; c->logit_mult != 0.0 && i < n; i++)
		logits[i] *= (float)c->logit_mult;
	for (int64_t i = 0; c->logits_div != 0.0 && i < n; i++)
		logits[i] /= (float)c->logits_div;
	if (c->final_cap > 0.0)
		ref_softcap(logits, n, (float)c->final_cap);
}

/* The leaves of a fused gated MLP: gate_up_proj / down_proj, or GraniteMoeShared's
 * shared_mlp.input_linear ([gate; up] rows) / output_linear, in the checkpoint and on
 * the ranks alike (its only fused MLP: every GraniteMoE layer is MoE). */
static inline const char *ref_gate_up_leaf(const ref_cfg *c)
{
	if (c->lfm2 || c->arctic) /* a rank's merged w1 / w3 (vLLM's w13) */
		return "w13";
	return c->stacked_experts ? "input_linear" : "gate_up_proj";
}
static inline const char *ref_down_leaf(const ref_cfg *c)
{
	if (c->lfm2 || c->arctic)
		return "w2";
	return c->stacked_experts ? "output_linear" : "down_proj";
}
/* The checkpoint's separate gate / up leaves (LFM2: w1 / w3). */
static inline const char *ref_gate_leaf(const ref_cfg *c)
{
	return c->lfm2 || c->arctic ? "w1" : "gate_proj";
}
static inline const char *ref_up_leaf(const ref_cfg *c)
{
	return c->lfm2 || c->arctic ? "w3" : "up_proj";
}
/* The final norm's module (LFM2: model.embedding_norm, after the last layer). */
static inline const char *ref_final_norm(const ref_cfg *c)
{
	return c->lfm2                                                   ? "model.embedding_norm"
	       : c->bamba || c->jamba || c->mamba2 || c->zamba2 || c->nh ? "model.final_layernorm"
	                                                                 : "model.norm";
}

/* Norm module of set s named by fmt ("model.layers.3.input_layernorm"): its weight,
 * and for LayerNorm families (StarCoder2) its bias, applied to `rows` rows of x
 * (c->hid wide) into y (may alias x); OLMo 1 (norm_free) reads nothing. */
int ref_norm_of(const ref_cfg *c, ref_set *s, float *y, const float *x, int64_t rows,
                wt_errbuf *err, const char *fmt, ...) WT_PRINTF(7, 8);

/* The input y of a block of layer l: norm `leaf` (ref_attn_norm, ref_mlp_norm) of set
 * s on `rows` rows of x, or x copied when leaf is NULL (OLMo 2). */
int ref_block_input(const ref_cfg *c, ref_set *s, float *y, const float *x, int64_t rows, int64_t l,
                    const char *leaf, wt_errbuf *err);

/* config.json's root object (json_decref it; Tarsier2's: its flat view, config_tarsier2_root), or
 * NULL with err set (WT_ECORRUPT). */
json_t *ref_cfg_root(const char *json, size_t len, wt_errbuf *err);
/* config.json text rewritten by a loader key normalizer (config_dbrx_keys, config_mpt_keys,
 * ref_chatglm_keys, config_exaone_keys: a family's own key names laid onto the ones the
 * reference reads, the loader's refusals included) into *out (malloc'd; free it). */
int ref_json_keys(const char *json, size_t len, int (*keys)(json_t *, wt_errbuf *), char **out,
                  size_t *out_len, wt_errbuf *err);
/* The language-model value of config.json key: text_config's over the top level
 * (as loader/config.c lays them); NULL when absent. Borrowed from root. */
json_t *ref_lm_get(json_t *root, const char *key);

/* The Phi-3 / StarCoder2 / DeepSeek-V2 / GLM-4 / OLMo 2 fields of c (switches set by the family
 * map) from config.json (cfg_fam.c). */
int ref_cfg_fam(ref_cfg *c, const char *family, const char *json, size_t len, wt_errbuf *err);

struct ckpt_field;

/* hidden_act (f, or def when absent) into c->act: silu / swish, gelu_pytorch_tanh /
 * gelu_new, gelu; another is WT_EUNSUPPORTED naming it (cfg_fam.c). */
int ref_cfg_act(const struct ckpt_field *f, const char *def, ref_cfg *c, wt_errbuf *err);

/* The RoPE scaling object of config.json: transformers 5.x rope_parameters, else
 * rope_scaling; NULL when neither is an object. *key names it, *type is its
 * rope_type (or legacy type; NULL when absent, which transformers reads as
 * "default"). Borrowed from root (cfg_rope.c). */
json_t *ref_rope_obj(json_t *root, const char **key, const char **type);

/* What a family's RoPE scaling applies to (cfg_rope.c). */
typedef struct ref_rope_in {
	const char *arch; /* named in refusals */
	int64_t rot_dim;  /* the dims RoPE turns: head_dim, its rotary part, MLA's rope */
	int64_t max_pos;  /* config.json max_position_embeddings; 0 = absent */
	/* llama3 with low_freq_factor == high_freq_factor taken (no interpolated band:
	 * frequencies past the wavelength divided, the rest kept), as transformers
	 * computes it; Llama 4 Scout's released config says 1 / 1. Else refused */
	bool llama3_step;
} ref_rope_in;

/* config.json's RoPE scaling (linear, dynamic, llama3, yarn; default and mrope
 * are none) into c: rope_factor, rope_dyn, the per-frequency divisors, rope_mscale,
 * DeepSeek's softmax scale (c->theta, kind, nope and rope set). Other types are
 * WT_EUNSUPPORTED naming them, bad members WT_ECORRUPT naming the key. */
int ref_cfg_rope(json_t *root, const ref_rope_in *in, ref_cfg *c, wt_errbuf *err);

/*
 * `layer_types` (transformers >= 4.53; Gemma 2/3 and GPT-OSS) into c->window_pattern:
 * the first full_attention layer is the pattern's last (none: every layer local). A
 * list the pattern rule cannot express is refused naming family `fam` (cfg_gemma.c).
 */
int ref_layer_types(ref_cfg *c, json_t *lt, const char *fam, wt_errbuf *err);
/* layer_types given as a list of one entry per layer (c->L), else WT_ECORRUPT. */
int ref_layer_types_list(const ref_cfg *c, json_t *lt, wt_errbuf *err);
/* Entry i of that list: *local true for "sliding_attention", false for "full_attention",
 * anything else WT_ECORRUPT naming it; a sliding entry without a window (c->window 0:
 * sliding_window null or 0) WT_ECORRUPT. */
int ref_layer_type_at(const ref_cfg *c, json_t *lt, int64_t i, bool *local, wt_errbuf *err);

/* The Gemma fields of c (gemma set by the family map) from config.json (cfg_gemma.c). */
int ref_cfg_gemma(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);

/* Check tokens against V and n_tok against REF_MAX_TOKENS, then allocate. */
int ref_bufs_alloc(ref_bufs *b, const ref_cfg *c, size_t n_tok, const int64_t *tokens,
                   wt_errbuf *err);
void ref_bufs_free(ref_bufs *b); /* NULL-safe */

/* BertModel paths (reference_bert.c); b allocated for T tokens; out has
 * ref_out_count() floats. ranks[TP] are the rank sets, Vl the padded
 * vocabulary rows per rank. */
int ref_bert_full(const ref_cfg *c, ref_set *s, const int64_t *tokens, int64_t T, ref_bufs *b,
                  float *out, wt_errbuf *err);
int ref_bert_sharded(const ref_cfg *c, ref_set *ranks, uint32_t TP, int64_t Vl,
                     const int64_t *tokens, int64_t T, ref_bufs *b, float *out, wt_errbuf *err);
/* ModernBertModel paths (modernbert.c); b allocated for T tokens; out has T * hid floats: the
 * last hidden state. */
int ref_modernbert_full(const ref_cfg *c, ref_set *s, const int64_t *tokens, int64_t T, ref_bufs *b,
                        float *out, wt_errbuf *err);
int ref_modernbert_sharded(const ref_cfg *c, ref_set *ranks, uint32_t TP, int64_t Vl,
                           const int64_t *tokens, int64_t T, ref_bufs *b, float *out,
                           wt_errbuf *err);

/* NomicBertModel / GteNewModel paths (bert_rope.c): the checkpoint s under its own names, or
 * the ranks[TP] under vLLM's; out has T * hid floats: the last hidden state. */
int ref_bert_rope_full(const ref_cfg *c, ref_set *s, const int64_t *tokens, int64_t T, ref_bufs *b,
                       float *out, wt_errbuf *err);
int ref_bert_rope_sharded(const ref_cfg *c, ref_set *ranks, uint32_t TP, const int64_t *tokens,
                          int64_t T, ref_bufs *b, float *out, wt_errbuf *err);
/* Their config.json keys into c (cfg_bert_rope.c). */
int ref_cfg_bert_rope(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);

/* BertSpladeSparseEmbeddingModel's head (splade.c): cls_token_id / sep_token_id into c; the
 * masked-LM head's tensors; out[t * V + v] += each of T rows' logits / div; the pooled row T. */
typedef struct ref_mlm {
	const float *dw, *db, *lw, *lb, *ow, *ob;
} ref_mlm;
int ref_cfg_splade(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
int ref_mlm_get(ref_set *s, const ref_cfg *c, ref_mlm *h, wt_errbuf *err);
int ref_mlm_rows(const ref_cfg *c, const float *x, const ref_mlm *h, int64_t T, float div,
                 float *out, wt_errbuf *err);
void ref_splade_pool(const ref_cfg *c, const int64_t *tokens, int64_t T, float *out);

/* OPTForCausalLM paths (opt.c): the checkpoint ck (model.decoder.* or decoder.*), or the
 * ranks[T] of a layout with Vl padded vocabulary rows each; logits [n_tok, V]. */
int ref_opt_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok, float *logits,
                 wt_errbuf *err);
int ref_opt_sharded(const ref_cfg *c, ref_set *ranks, uint32_t T, int64_t Vl, const int64_t *tokens,
                    size_t n_tok, float *logits, wt_errbuf *err);

/* DeepSeek-V3 (reference_mla.c). MLA block of layer l with heads [0, Hl) of set
 * s (checkpoint: Hl = H; a rank: its slice) on normed input h: out [T, hid] is
 * o_proj's output (a rank's partial). */
int ref_mla(const ref_cfg *c, ref_set *s, int64_t l, int64_t Hl, const float *h, int64_t T,
            float *out, wt_errbuf *err);
/* Sigmoid scores, + correction bias (may be NULL) for the choice, group-limited
 * top-k (or `forced`), weights normalised (norm_topk_prob) and scaled. */
void ref_route_ds(const ref_cfg *c, const float *logits, const float *bias, const int64_t *forced,
                  int64_t *idx, float *w);

/* openPangu-Ultra-MoE's fields of c from config.json (cfg_pangu_moe.c). */
int ref_cfg_pangu_moe(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
/* Mistral-Large-3 (cfg_ml3.c): its routing keys and llama_4_scaling; ref_ml3_scale_q multiplies
 * token t's q (nope [T, Hl*nope] and pe [T, Hl*rope] parts) by its llama_4_scaling factor. */
int ref_cfg_ml3(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
void ref_ml3_scale_q(const ref_cfg *c, float *qn, float *qp, int64_t T, int64_t Hl);
/* The PhiMoE fields of c (phimoe set by the family map; topk read) from config.json
 * (cfg_phimoe.c). */
int ref_cfg_phimoe(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
/* PhiMoE's sparsemixer (eval) over E <= REF_PHIMOE_MAX_E router logits: the 2 experts
 * and their weights into idx[2] / w[2], and their route codes into codes[2] (expert |
 * the set its softmax kept << 8). With `forced` (codes, or plain expert indices) the
 * weights are those of the forced experts, over the forced kept sets when given: the
 * sharded path follows the full path's masks as well as its choices, since a
 * quantization-sized move of a score across the mask's threshold is no shard error
 * (cfg_phimoe.c). */
#define REF_PHIMOE_MAX_E 48
void ref_route_sparsemixer(const float *logits, int64_t E, double jitter_eps, const int64_t *forced,
                           int64_t *idx, float *w, int64_t *codes);

/* The GPT-OSS fields of c (gpt_oss set by the family map) from config.json
 * (cfg_gpt_oss.c); arch is named in refusals. */
int ref_cfg_gpt_oss(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* GPT-OSS's router (GptOssTopKRouter): the k largest of E logits (ties to the lower
 * index), or the k experts in `forced`, weighted by the softmax over those k logits. */
void ref_route_topk_softmax(const float *logits, int64_t E, int64_t k, const int64_t *forced,
                            int64_t *idx, float *w);
/* layer l's attention sinks into o->sinks: the checkpoint's [H] or a rank's [Hl]
 * (n_heads) `model.layers.{l}.self_attn.sinks`; nothing unless c->gpt_oss (gpt_oss.c). */
int ref_gpt_oss_sinks(const ref_cfg *c, ref_set *s, int64_t l, int64_t n_heads, ref_attn_opt *o,
                      wt_errbuf *err);
/* GPT-OSS's MoE block of layer l over the checkpoint set s on T normed rows h into
 * acc [T, hid] (overwritten; y: hid floats, scratch: Ie floats); routes (may be NULL) receives the
 * choices [T, topk]. The experts are MXFP4 (`_blocks` / `_scales`, dequantized with
 * kern_dequant_mxfp4 and cached in the blocks tensor) or float [E, hid, 2*Ie] / [E, Ie, hid]
 * (gpt_oss.c). */
int ref_gpt_oss_moe_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                         float *acc, int64_t *routes, float *y, float *scratch, wt_errbuf *err);
/* One rank's share of layer l's GPT-OSS experts (docs/format.md 2.7): experts
 * [start, start + count) of w13_weight [count, 2*Il, hid] ([gate; up] or, up_gate,
 * [up; gate]), w13_bias [count, 2*Il], w2_weight [count, hid, Il], w2_bias [count, hid]
 * of rank set rs, on T normed rows h, added into out (weighted by the rank's router,
 * or the forced choices [T, topk]); w2_bias is added only when add_b2 (the engine adds
 * a row-parallel bias once: on tp rank 0, or on every rank that holds whole experts). */
typedef struct ref_go_rank {
	int64_t count, start, Il;
	bool up_gate, add_b2;
	const int64_t *forced; /* [T, topk] or NULL */
} ref_go_rank;
int ref_gpt_oss_experts_rank(const ref_cfg *c, ref_set *rs, int64_t l, const ref_go_rank *k,
                             const float *h, int64_t T, float *out, float *y, float *scratch,
                             wt_errbuf *err);

/* The Llama 4 fields of c (llama4 set by the family map; l4_moe, I, Ie, Is from the
 * loader's parse, ckpt.c) from config.json (cfg_llama4.c); arch is named in refusals. */
int ref_cfg_llama4(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Llama 4's q / k of layer l after the projections, in place on T rows of nq q heads and
 * nkv kv heads of c->d (row strides nq*d, nkv*d): on a RoPE layer RoPE (adjacent pairs,
 * llama3 scaling) then the L2 norm per head (use_qk_norm); on a NoPE layer q times the
 * attention temperature of its position (attn_temperature_tuning). Elementwise per
 * head, so a rank runs it on its own heads (llama4.c). */
void ref_llama4_qk(const ref_cfg *c, int64_t l, float *q, float *k, int64_t T, int64_t nq,
                   int64_t nkv);
/* Llama4Router: the k largest of E logits (ties to the lower index), or the k experts in
 * `forced`, each weighted by the sigmoid of its logit (llama4.c). */
void ref_route_topk_sigmoid(const float *logits, int64_t E, int64_t k, const int64_t *forced,
                            int64_t *idx, float *w);
/* Llama 4's routed experts of layer l over the checkpoint set s on T normed rows h into
 * acc [T, hid] (overwritten): each chosen expert runs on h times its router score,
 * gate_up_proj [E, hid, 2*Ie] ([in, out], gate the first Ie columns), down_proj
 * [E, Ie, hid]; routes (may be NULL) receives the choices [T, topk]; b: its row (hid
 * floats) and scratch (2 * Ie). The shared expert is the caller's (llama4.c). */
int ref_llama4_moe_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                        float *acc, int64_t *routes, ref_bufs *b, wt_errbuf *err);
/* Qwen3-VL-MoE's sparse block of module prefix m on h [T, hid] into acc [T, hid], from
 * the checkpoint's bmm stacks m "experts.gate_up_proj" [E, hid, 2*Ie] (gate the first Ie
 * columns) and m "experts.down_proj" [E, Ie, hid] (Aria: m "experts.fc1.weight" /
 * "experts.fc2.weight", the same operands); routes (may be NULL) receives the
 * choices [T, topk]; b: its scratch (2 * Ie floats) (qwen3vl.c). */
int ref_q3vl_moe_full(const ref_cfg *c, ref_set *s, const char *m, const float *h, int64_t T,
                      float *acc, int64_t *routes, ref_bufs *b, wt_errbuf *err);
/* One rank's share of layer l's Llama 4 routed experts: experts [start, start + count)
 * of w13_weight [count, 2*Il, hid] ([gate; up], or up_gate [up; gate]) and w2_weight
 * [count, hid, Il] of rank set rs, each on h times the rank's router score (its own
 * router copy; the forced choices when given), added into out; b: its row, y (hid
 * floats) and scratch (3 * Il); add_b2 is unused (llama4.c). */
int ref_llama4_experts_rank(const ref_cfg *c, ref_set *rs, int64_t l, const ref_go_rank *k,
                            const float *h, int64_t T, float *out, ref_bufs *b, wt_errbuf *err);

/* The SmolLM3 fields of c (smollm3 set by the family map) from config.json
 * (cfg_smollm3.c): NoPE layers, sliding layers, RoPE; arch is named in refusals. */
/* The Apertus / Arcee fields of c (nogate, apertus set by the family map) from
 * config.json (cfg_apertus.c): hidden_act, RoPE with ApertusConfig's default llama3
 * scaling when rope_scaling is absent; arch is named in refusals. */
int ref_cfg_nogate(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* The gateless MLP of module prefix m ("model.layers.{l}.mlp.") of set s, n_inter rows of
 * up_proj (the full I, or a rank's slice), on h [T, hid] into y [T, hid]: up_proj (its
 * bias when s has it), the activation (xIELU: s's act_fn.alpha_p / alpha_n / beta / eps),
 * down_proj WITHOUT its bias (the caller adds it once); scratch holds T * n_inter floats
 * (nogate.c). */
/* GPT-NeoX's fields of c (neox set by the family map) from config.json: hidden_act,
 * rotary_pct, rotary_emb_base, layer_norm_eps, use_parallel_residual, rope_scaling; Phi's
 * (phi set): hidden_act, partial_rotary_factor, rope_theta, layer_norm_eps, qk_layernorm
 * (refused when true), rope_scaling (cfg_neox.c). */
int ref_cfg_neox(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Whether set s holds its family's tensors under the family's own checkpoint names, which the
 * passes read renamed (reference.c: GPT-NeoX, Phi, Persimmon, BLOOM, Falcon, InternLM2,
 * ChatGLM, EXAONE, Qwen, Baichuan, GPT-2, CLIP, GPT-J, DBRX, MPT, Mamba, Nemotron-H, Zamba2,
 * LongCat-Flash). */
bool ref_own_names(const ref_cfg *c, ref_set *s);
/* Set s, under its family's own names, into r under the names the pass reads; ckpt: s is the
 * checkpoint (its packed / interleaved forms), else one rank's shard (reference.c). */
int ref_rename_own(const ref_cfg *c, ref_set *s, ref_set *r, bool ckpt, wt_errbuf *err);
/* Set in's tensors into the empty set out under the names the decoder passes read (neox.c's
 * table); with ckpt, query_key_value's [H, 3, d] rows reordered into [q; k; v]. On failure
 * out is left empty. */
int ref_neox_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err);
/* Whether s holds BLOOM's tensors under the checkpoint's names (with or without the
 * transformer. prefix), not yet renamed (neox.c). */
bool ref_bloom_ckpt(ref_set *s);
/* Set in's tensors into the empty set out under Llama's names (internlm2.c's table); with
 * ckpt, wqkv's [KV, H/KV + 2, d] rows unpacked into q_proj / k_proj / v_proj. On failure out
 * is left empty. */
int ref_internlm2_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err);
/* Whether s holds InternLM2's tensors under their own names, not yet renamed (internlm2.c). */
bool ref_internlm2_named(ref_set *s);
/* ChatGLM (chatglm.c): in's tensors into the empty set out under Llama's names (on failure
 * out is left empty); whether s holds them under THUDM's names; config.json with ChatGLM's
 * keys under the names the reference reads (config_chatglm_keys), into *out (malloc'd). */
int ref_chatglm_rename(ref_set *in, ref_set *out, wt_errbuf *err);
bool ref_chatglm_named(ref_set *s);
int ref_chatglm_keys(json_t *root, wt_errbuf *err);
/* EXAONE 3.x (exaone.c): in's tensors into the empty set out under Llama's names (on failure
 * out is left empty); whether s holds them under their own names; config.json text with
 * ExaoneConfig's keys under the names the reference reads (config_exaone_keys), into *out. */
int ref_exaone_rename(ref_set *in, ref_set *out, wt_errbuf *err);
bool ref_exaone_named(ref_set *s);
/* Qwen, first generation (qwen.c): in's tensors into the empty set out under Llama's names
 * (on failure out is left empty); with ckpt, c_attn's [q; k; v] (weight and bias) split into
 * q_proj / k_proj / v_proj. Whether s holds them under their own names. */
int ref_qwen_rename(ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err);
bool ref_qwen_named(ref_set *s);
/* Baichuan (baichuan.c): in's tensors into the empty set out under Llama's names (ckpt: the
 * checkpoint's W_pack split into q_proj / k_proj / v_proj, else a rank's read as qkv_proj;
 * lm_head's rows normalized when c->V is 125696; on failure out is left empty); whether s
 * holds them under their own names. */
int ref_baichuan_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err);
bool ref_baichuan_named(ref_set *s);
/* TeleChat2 (telechat2.c): the checkpoint's tensors in into the empty set out under Llama's
 * names, key_value ([KV, 2, d] rows) split into k_proj / v_proj (on failure out is left
 * empty); whether s holds them under their own names (a shard holds the runtime names). */
int ref_telechat2_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);
bool ref_telechat2_named(ref_set *s);
/* Bailing MoE (bailing.c): in's tensors (the checkpoint's or a rank's) into the empty set out
 * under Llama's names. */
int ref_bailing_rename(ref_set *in, ref_set *out, wt_errbuf *err);
bool ref_bailing_named(ref_set *s);
/* Persimmon's q_layernorm / k_layernorm of layer l from s on q and k (T rows of n_heads
 * heads of c->d each; no kv grouping): every head LayerNormed with the one [d] weight and
 * bias, eps c->eps (cfg_neox.c). */
int ref_persimmon_qk(const ref_cfg *c, ref_set *s, int64_t l, float *q, float *k, int64_t T,
                     int64_t n_heads, wt_errbuf *err);
/* Chameleon's config.json switches into c (cfg_chameleon.c); arch is named in refusals. */
int ref_cfg_chameleon(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Chameleon's q_norm / k_norm of layer l from s on q (T rows of n_q heads of c->d) and k (n_kv
 * heads): head h LayerNormed over its d dims (eps 1e-5) with row h of the [n, d] weight and
 * bias (cfg_chameleon.c). */
int ref_chameleon_qk(const ref_cfg *c, ref_set *s, int64_t l, float *q, float *k, int64_t T,
                     int64_t n_q, int64_t n_kv, wt_errbuf *err);
/* clip_qkv of OLMo 1 / OLMoE / DBRX (config.json's language-model key): null or absent =
 * none (c->clip_qkv 0), else a positive finite bound (cfg_fam.c). */
int ref_cfg_clip_qkv(json_t *root, ref_cfg *c, wt_errbuf *err);
/* DBRX: config.json text with attn_config / ffn_config laid over the top level as the loader
 * lays them (malloc'd into *out; free it), and the Mixtral switches read from that text
 * (cfg_dbrx.c). */
int ref_cfg_dbrx(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Set in's tensors (a DBRX checkpoint or rank) into the empty set out under Mixtral's names
 * (dbrx.c). */
int ref_dbrx_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);
/* MPT: config.json text with attn_config laid over the top level (config_mpt_keys, its
 * refusals included), and the dense switches read from it (cfg_dbrx.c). */
int ref_cfg_mpt(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Qwen2.5-Omni: config.json text as the loader reads it (config_omni_root: thinker_config's
 * keys, the classes' defaults for absent sub-configs; malloc'd into *out; free it;
 * cfg_dbrx.c). */
int ref_omni_json(const char *json, size_t len, char **out, size_t *out_len, wt_errbuf *err);
/* LongCat-Flash (longcat.c, cfg_longcat.c): the config's switches; a checkpoint or rank set
 * renamed into virtual layers (model.layers.{2i+k}. for sublayer k: input_layernorm,
 * self_attn, post_attention_layernorm, mlp. for mlps.k; layer i's MoE block under
 * model.layers.{2i}.mlp.), q_a_layernorm / kv_a_layernorm times sqrt(hidden / rank) (the
 * MLA latents' scaling) as F32; the full pass's shortcut MoE of virtual layer l into b->sc
 * (routes [T * topk] of the layer, or NULL). */
int ref_cfg_longcat(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
int ref_lc_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);
int ref_lc_moe_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                    int64_t *routes, wt_errbuf *err);

/* Zamba2 (zamba2.c). ref_z2_layers: the ref_cfg fields of ckpt_config cc (the blocks,
 * adapter_rank, the attention adapters, the hybrid layers, the gated norm's groups);
 * ref_cfg_zamba2: config.json's hidden_act (gelu), rms_norm_eps (1e-5), use_mem_rope, the
 * refusals. ref_z2_named: set s holds a hybrid layer under mamba_decoder.; ref_z2_rename:
 * out = in with those under the Mamba layers' names (input_layernorm, mamba.).
 * ref_z2_input_full: b->h = input_layernorm of layer l's input (x, or x + linear(the shared
 * block) on a hybrid layer) over the checkpoint; layer 0 keeps the embeddings in b->sc. */
/* Gemma 3n (gemma3n.c, gemma3n_attn.c). ref_g3n_layers: the ref_cfg fields of ckpt_config
 * cc (the AltUp / Laurel / per-layer input sizes, the full_attention layers, each KV-shared
 * layer's source); ref_cfg_g3n: config.json's soft cap, window, RoPE bases, eps and
 * activation_sparsity_pattern, rope_scaling refused. ref_g3n_full / _sharded: the whole pass
 * over the checkpoint or the ranks (Vl: embed_tokens rows per rank). ref_g3n_attn: layer l's
 * attention of each of the T sets on the normed input h [n, hid] into acc (the o_proj sums in
 * set order), its keys / values left in kc / vc ([L, T, n, KVl * d]) or read from its
 * source's. */
#define REF_G3N_MAX_LAYERS 128
struct ckpt_config;
int ref_g3n_layers(const struct ckpt_config *cc, ref_cfg *c, wt_errbuf *err);
int ref_cfg_g3n(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
int ref_g3n_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok, float *logits,
                 wt_errbuf *err);
int ref_g3n_sharded(const ref_cfg *c, ref_set *ranks, uint32_t T, int64_t Vl, const int64_t *tokens,
                    size_t n_tok, float *logits, wt_errbuf *err);
int ref_g3n_attn(const ref_cfg *c, ref_set *sets, uint32_t T, bool ckpt, int64_t l, const float *h,
                 int64_t n, float *kc, float *vc, float *acc, wt_errbuf *err);

#define REF_Z2_MAX_TP 64
struct ckpt_config;
int ref_z2_layers(const struct ckpt_config *cc, ref_cfg *c, wt_errbuf *err);
int ref_cfg_zamba2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
bool ref_z2_named(const ref_set *s);
int ref_z2_rename(ref_set *in, ref_set *out, wt_errbuf *err);
int ref_z2_input_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                      wt_errbuf *err);

/* Set in's tensors (Mamba's checkpoint or a rank's shard, backbone.*) into the empty set out
 * under Jamba's names (mamba.c). */
int ref_mamba_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err);
int ref_nogate_mlp(const ref_cfg *c, ref_set *s, const char *m, int64_t n_inter, int64_t T,
                   const float *h, float *y, float *scratch, wt_errbuf *err);
/* GPT-2's fields of c from config.json: activation_function, layer_norm_epsilon (gpt2.c). */
/* CLIP's text tower (clip.c): in's text tensors under the names the passes read into out
 * (the rest left out); the learned position rows of s (a slice whose first row is position
 * `first`: a shard's vocabulary-parallel rows; whole: the checkpoint's table, which must hold
 * T positions) added to x [T, hid]; CLIPTextConfig's
 * hidden_act and layer_norm_eps. */
int ref_clip_rename(ref_set *in, ref_set *out, wt_errbuf *err);
int ref_clip_positions(const ref_cfg *c, ref_set *s, int64_t first, bool whole, float *x, int64_t T,
                       wt_errbuf *err);
int ref_cfg_clip(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
int ref_cfg_gpt2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Set in's tensors (a GPT-2 checkpoint, with ckpt, or rank) into the empty set out under the
 * names the decoder passes read (gpt2.c's table); with ckpt, the Conv1D weights [in, out]
 * transposed to [out, in]. On failure out is left empty. */
int ref_gpt2_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err);
/* x [T, hid] += the learned positions 0..T-1 of s's model.wpe.weight (gpt2.c). */
int ref_gpt2_positions(const ref_cfg *c, ref_set *s, float *x, int64_t T, wt_errbuf *err);
int ref_cfg_smollm3(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Ministral: layer_types' sliding layers (cfg_smollm3.c) */
int ref_cfg_ministral(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* MiniCPM: scale_emb, scale_depth, dim_model_base as Granite's multipliers, hidden_act silu,
 * RoPE (cfg_minicpm.c) */
int ref_cfg_minicpm(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Arctic (arctic.c): use_residual and moe_layer_frequency read, the top-k renormalized only
 * above 1; whether layer l has the residual MLP; that MLP on residual_layernorm(b->x) of the
 * checkpoint s added into b->acc. */
int ref_cfg_arctic(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
bool ref_arctic_res(const ref_cfg *c, int64_t l);
int ref_arctic_residual_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                             wt_errbuf *err);

/* The Hunyuan V1 fields of c (hunyuan set by the family map) from config.json
 * (cfg_hunyuan.c): use_qk_norm, hidden_act, the NTK-alpha RoPE base; arch is named in
 * refusals. */
int ref_cfg_hunyuan(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* The leaf of layer l's per-head q (key false) or k norm: q_norm / k_norm, Hunyuan's
 * query_layernorm / key_layernorm (cfg_hunyuan.c). */
const char *ref_qk_norm_leaf(const ref_cfg *c, bool key);

/* The Cohere / Cohere2 fields of c (cohere set by the family map) from config.json
 * (cfg_cohere.c); arch is named in refusals. */
int ref_cfg_cohere(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* Command R+'s q_norm / k_norm: T rows of n_heads heads of c->d in x, each head LayerNormed
 * (no bias, c->eps) with its own weight row of w [n_heads, d] (cfg_cohere.c). */
void ref_head_layernorm(const ref_cfg *c, float *x, const float *w, int64_t T, int64_t n_heads);
/* The OLMo 3 fields of c (olmo3 set by the family map, with olmo2's switches) from
 * config.json (cfg_olmo3.c); arch is named in refusals. */
int ref_cfg_olmo3(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* The EXAONE 4.0 fields of c (exaone4 set by the family map, with olmo2's switches and
 * per-head qk_norm) from config.json (cfg_olmo3.c); arch is named in refusals. */
int ref_cfg_exaone4(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/* GPT-J's tensors of in under Phi's names into out (gptj.c): checkpoint or rank sets alike. */
int ref_gptj_rename(ref_set *in, ref_set *out, wt_errbuf *err);
/* WhisperForConditionalGeneration paths (whisper.c): the checkpoint ck, or the T ranks; the
 * encoder on ref_whisper_mel's input, the decoder on tokens, logits [n_tok, V]. */
int ref_whisper_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok,
                     float *logits, wt_errbuf *err);
int ref_whisper_sharded(const ref_cfg *c, ref_set *ranks, uint32_t T, const int64_t *tokens,
                        size_t n_tok, float *logits, wt_errbuf *err);
/* The encoder's fixed input: mel rows of 2 x src frames, element i of the row-major array
 * ((s >> 40) / 2^24) * 2 - 1 of the i+1-th step of the 64-bit LCG s = s * 6364136223846793005
 * + 1442695040888963407 from s = 0x5eed (exact in float32). out: mel * 2 * src floats. */
void ref_whisper_mel(float *out, int64_t mel, int64_t src);
/* Whisper's fields of c from config.json (cfg_whisper.c). */
int ref_cfg_whisper(ref_cfg *c, const char *json, size_t len, wt_errbuf *err);
/* OPT's fields of c from config.json (cfg_opt.c); arch is named in refusals. */
int ref_cfg_opt(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err);
/*
 * Route one token h of the MoE block with prefix m, reading the router (and the
 * DeepSeek correction bias) from set s: idx/w receive topk entries (PhiMoE: idx
 * [topk, 2*topk) its route codes, what ref_forward_full records as routes). ckpt: s is
 * the checkpoint, whose router GraniteMoE names router.layer (ranks: gate).
 */
int ref_moe_route(const ref_cfg *c, ref_set *s, bool ckpt, const char *m, const float *h,
                  const int64_t *forced, int64_t *idx, float *w, wt_errbuf *err);
/* Shared-expert module of an MoE prefix ("shared_expert." / "shared_experts.";
 * GraniteMoeShared's layer-level "shared_mlp.") and its gate: *gate =
 * sigmoid(h . shared_expert_gate) for Qwen2-MoE, 1 for DeepSeek and GraniteMoeShared. */
int ref_shared_gate(const ref_cfg *c, ref_set *s, const char *m, const float *h, char *name,
                    size_t cap, float *gate, wt_errbuf *err);

#endif
