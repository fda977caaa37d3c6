/*
 * cfg_fam.c — the reference configuration of Phi-3, StarCoder2, DeepSeek-V2,
 * GLM-4, GLM-4.5, dots.llm1, OLMo 2, OLMoE, OLMo 1 and Granite: their config.json fields
 * with transformers' defaults, on top of the Llama (phi3, starcoder2, glm, glm4, olmo2, olmo,
 * granite), Qwen-MoE (olmoe) and DeepSeek-V3 (deepseek_v2, glm4_moe, dots1) math of ref_cfg.
 *
 * The math followed (transformers' modeling files):
 *
 *   Phi-3 (modeling_phi3.py, 4.50.3 and 4.57.1): Llama's decoder; the checkpoint
 *   holds self_attn.qkv_proj [q; k; v] rows and mlp.gate_up_proj [gate; up] rows
 *   (fused_ckpt; the shards hold Llama's [q_r; k_r; v_r], [gate_r; up_r]). RoPE
 *   turns the first int(head_dim * partial_rotary_factor) dims of each head
 *   (rotate-half within them, frequencies theta^(-2i / rot_dim)); the rest pass.
 *   rope_scaling "longrope" ("su" and "yarn" are renamed so by Phi3Config):
 *   inverse frequency i divided by short_factor[i] (long_factor[i] once the
 *   sequence passes original_max_position_embeddings), cos and sin times
 *   attention_factor, default sqrt(1 + ln(s) / ln(original_max_position_embeddings))
 *   with s = max_position_embeddings / original_max_position_embeddings (1 when
 *   s <= 1). sliding_window on every layer (token t sees s with t - s < window).
 *
 *   StarCoder2 (modeling_starcoder2.py, 4.39.3): LayerNorm with bias (eps
 *   norm_epsilon) for input_layernorm, post_attention_layernorm and model.norm;
 *   Llama attention with q/k/v/o biases (use_bias); MLP c_proj(act(c_fc(x)))
 *   with biases, act = hidden_act; tied embeddings when the key is absent
 *   (shardmap_tied). sliding_window on every layer as later transformers do
 *   (4.39.3 windows only under flash attention; the two agree while the tokens
 *   fit the window, which they do for every released config).
 *
 *   DeepSeek-V2 (modeling_deepseek_v2.py, 4.57.1; DeepSeek's remote
 *   modeling_deepseek.py agrees for what is accepted here): DeepSeek-V3's MLA and
 *   MoE tensors; router softmax(h . gate^T) in float32, topk_method "greedy"
 *   (plain top-k) or "group_limited_greedy" (groups ranked by their best score,
 *   top topk_group groups kept, top-k over their experts), weights times
 *   routed_scaling_factor, no correction bias. RoPE on the interleaved pairs
 *   (apply_rotary_emb's complex form = V3's rope_interleave).
 *
 *   GLM-4 (modeling_glm.py / modeling_glm4.py, 4.54.1): Llama's decoder with
 *   q/k/v biases (attention_bias), o_proj without; the checkpoint holds
 *   mlp.gate_up_proj [gate; up] rows as Phi-3's (fused_gate_up; GlmMLP: gate, up =
 *   chunk(2); down(up * act(gate))). RoPE on the first int(head_dim *
 *   partial_rotary_factor) dims of each head, turning the adjacent pairs
 *   (x[2i], x[2i+1]) by theta^(-2i / rot_dim) (rope_pairs: rotate_half over
 *   x[..., 0::2] / x[..., 1::2], cos and sin repeat_interleave'd); the rest
 *   pass. GLM-4-0414 (glm4) adds post_self_attn_layernorm on the attention
 *   output and post_mlp_layernorm on the MLP output before each residual add
 *   (Gemma 2's sandwich; the MLP's input norm stays post_attention_layernorm).
 *
 *   OLMo 2 (modeling_olmo2.py, 4.47.1): Llama's decoder without input_layernorm
 *   (attention and MLP read the residual stream); q_norm is an RMSNorm over the
 *   whole q_proj output [H*d] and k_norm over k_proj's [KV*d], before the split
 *   into heads and RoPE; x += post_attention_layernorm(attn(x)),
 *   x += post_feedforward_layernorm(mlp(x)) (the sandwich's output norms only).
 *
 *   OLMoE (modeling_olmoe.py, 4.57.1): Llama's pre-norm decoder with OLMo 2's q_norm /
 *   k_norm over all of q and k, every layer a Qwen-MoE block without shared expert
 *   (router softmax, top-k, renormalised with norm_topk_prob, default false).
 *   clip_qkv: q_norm(q_proj(h)), k_norm(k_proj(h)) and v_proj(h) clamped to
 *   [-clip_qkv, clip_qkv] before the split into heads (null: none).
 *
 *   OLMo 1 (modeling_olmo.py, 4.47.1): Llama's decoder (q/k/v/o biases with
 *   attention_bias) whose input_layernorm, post_attention_layernorm and model.norm are
 *   OlmoLayerNorm: F.layer_norm in float32 without weight or bias, eps 1e-5 fixed
 *   (norm_free); clip_qkv clamps q_proj, k_proj and v_proj's outputs (biases added)
 *   as OLMoE's. Untied unless tie_word_embeddings (OLMo-1B-hf ties).
 *
 *   GLM-4.5 / 4.6 (modeling_glm4_moe.py, 4.57.1): Llama's decoder (q/k/v biases with
 *   attention_bias, o_proj without; q_norm / k_norm RMSNorms per head of head_dim before
 *   RoPE with use_qk_norm) whose RoPE is the rotate-half form on the first
 *   int(head_dim * partial_rotary_factor) dims; DeepSeek-V3's MoE (cfg.c): layers
 *   >= first_k_dense_replace, sigmoid router in float32 with e_score_correction_bias,
 *   n_group / topk_group (groups by their two best), norm_topk_prob, routed_scaling_factor,
 *   n_shared_experts x moe_intermediate_size shared experts added ungated.
 *
 *   dots.llm1 (modeling_dots1.py, 4.57.1): GLM-4.5's math with Qwen3's attention: q_norm /
 *   k_norm RMSNorms per head on every layer, q/k/v/o biases with attention_bias, rotate-half
 *   RoPE over the whole head (a partial_rotary_factor other than 1 fails in transformers and
 *   is refused), rms_norm_eps 1e-6 and norm_topk_prob false by default, the router's
 *   scoring_func never read. Sliding-window layers as Dots1Config derives layer_types: those
 *   >= max_window_layers when sliding_window (absent: 4096) is not null; a given layer_types
 *   wins.
 *
 *   Granite (modeling_granite.py, 4.57.1): Llama's decoder; embeddings times
 *   embedding_multiplier, scores times attention_multiplier (instead of
 *   1/sqrt(head_dim)), x += residual_multiplier * block(x) after attention and
 *   after the MLP, logits / logits_scaling; each 1.0 when absent, rms_norm_eps 1e-6.
 *
 *   key                      Phi-3          StarCoder2         DeepSeek-V2  GLM-4      OLMo 2
 *   hidden_act               silu           gelu_pytorch_tanh  silu         silu       silu
 *   rms_norm_eps             1e-5           -                  1e-6 (cfg.c) 1.5625e-7  1e-5
 *   partial_rotary_factor    1.0            -                  -            0.5        -
 *   rope_scaling             longrope only; cfg_rope.c for the other families here
 *   original_max_pos_emb.    4096           -                  -            -          -
 *   max_position_embeddings  4096           -                  -            -          -
 *   sliding_window           none           none               -            -          -
 *   norm_epsilon             -              1e-5               -            -          -
 *   scoring_func             -              -                  softmax      -          -
 *   topk_method              -              -                  greedy       -          -
 *   norm_topk_prob           -              -                  false        -          -
 *
 * RoPE scaling of StarCoder2, DeepSeek-V2, GLM-4 and OLMo 2: cfg_rope.c (linear,
 * dynamic, llama3, yarn; DeepSeek-V2's YaRN follows DeepSeek's code, mscale^2 on
 * the softmax scale). Refused (WT_EUNSUPPORTED naming the key): Phi-3 scalings other
 * than longrope (Phi3Config refuses them too), DeepSeek-V2 norm_topk_prob true
 * (transformers ignores it; DeepSeek's code then normalises and drops
 * routed_scaling_factor),
 * other scoring_func / topk_method values, and activations other than silu,
 * gelu_pytorch_tanh, gelu_new and gelu.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum {
	P_ACT,
	P_PRF,
	P_MAX_POS,
	P_ORIG_MAX,
	P_WINDOW,
	P_NORM_EPS,
	P_SCORING,
	P_TOPK_METHOD,
	P_NORM_TOPK,
	P_INTERLEAVE,
	P_RMS_EPS,
	P_EMB_MULT,
	P_RES_MULT,
	P_ATT_MULT,
	P_LOGIT_SCALE,
	P_QK_NORM,
	P_MAX_WIN,
	P_COUNT
};

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[P_COUNT] = {
	    [P_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [P_PRF] = {"partial_rotary_factor", CKPT_FIELD_REAL},
	    [P_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [P_ORIG_MAX] = {"original_max_position_embeddings", CKPT_FIELD_INT},
	    [P_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [P_NORM_EPS] = {"norm_epsilon", CKPT_FIELD_REAL},
	    [P_SCORING] = {"scoring_func", CKPT_FIELD_STRING},
	    [P_TOPK_METHOD] = {"topk_method", CKPT_FIELD_STRING},
	    [P_NORM_TOPK] = {"norm_topk_prob", CKPT_FIELD_BOOL},
	    [P_INTERLEAVE] = {"rope_interleave", CKPT_FIELD_BOOL},
	    [P_RMS_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [P_EMB_MULT] = {"embedding_multiplier", CKPT_FIELD_REAL},
	    [P_RES_MULT] = {"residual_multiplier", CKPT_FIELD_REAL},
	    [P_ATT_MULT] = {"attention_multiplier", CKPT_FIELD_REAL},
	    [P_LOGIT_SCALE] = {"logits_scaling", CKPT_FIELD_REAL},
	    [P_QK_NORM] = {"use_qk_norm", CKPT_FIELD_BOOL},
	    [P_MAX_WIN] = {"max_window_layers", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, P_COUNT, err);
}

int ref_cfg_act(const ckpt_field *f, const char *def, ref_cfg *c, wt_errbuf *err)
{
	const char *a = f->present ? f->s : def;
	if (strcmp(a, "silu") == 0 || strcmp(a, "swish") == 0)
		c->act = REF_ACT_SILU;
	else if (strcmp(a, "gelu_pytorch_tanh") == 0 || strcmp(a, "gelu_new") == 0)
		c->act = REF_ACT_GELU_TANH;
	else if (strcmp(a, "gelu") == 0)
		c->act = REF_ACT_GELU;
	else
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s'; the reference has silu, "
		                 "gelu_pytorch_tanh, gelu_new and gelu",
		                 a);
	return WT_OK;
}

/* RoPE scaling (cfg_rope.c) over the rotary dims of c. */
static int rope_scaling(json_t *root, const ckpt_field *f, const char *arch, ref_cfg *c,
                        wt_errbuf *err)
{
	ref_rope_in in = {arch, c->rot_dim > 0 ? c->rot_dim : c->d,
	                  f[P_MAX_POS].present ? f[P_MAX_POS].i : 0};
	if (c->ds_v2)
		in.rot_dim = c->rope;
	return ref_cfg_rope(root, &in, c, err);
}

/* A list of n LongRoPE factors key of o into out. */
static int ext_list(json_t *o, const char *where, const char *key, int64_t n, double *out,
                    wt_errbuf *err)
{
	json_t *a = json_object_get(o, key);
	if (!json_is_array(a) || (int64_t)json_array_size(a) != n)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.%s is not a list of %lld numbers (half the "
		                 "rotary dims)",
		                 where, key, (long long)n);
	for (int64_t i = 0; i < n; i++) {
		json_t *v = json_array_get(a, (size_t)i);
		if (!json_is_number(v) || !(json_number_value(v) > 0.0))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s.%s[%lld] is not a positive number", where,
			                 key, (long long)i);
		out[i] = json_number_value(v);
	}
	return WT_OK;
}

/* Phi-3 LongRoPE (modeling_rope_utils._compute_longrope_parameters). */
static int parse_longrope(json_t *o, const char *key, const ckpt_field *f, ref_cfg *c,
                          wt_errbuf *err)
{
	int64_t n = c->rot_dim / 2;
	if (n > REF_MAX_ROPE_EXT)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s longrope over %lld rotary dims; the reference "
		                 "takes up to %d",
		                 key, (long long)c->rot_dim, 2 * REF_MAX_ROPE_EXT);
	int rv = ext_list(o, key, "short_factor", n, c->rope_ext[0], err);
	if (rv == WT_OK)
		rv = ext_list(o, key, "long_factor", n, c->rope_ext[1], err);
	if (rv != WT_OK)
		return rv;
	c->n_ext = n;
	c->rope_orig_max = f[P_ORIG_MAX].present ? f[P_ORIG_MAX].i : 4096;
	int64_t max_pos = f[P_MAX_POS].present ? f[P_MAX_POS].i : 4096;
	if (c->rope_orig_max < 2 || max_pos < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: original_max_position_embeddings %lld, "
		                 "max_position_embeddings %lld; longrope needs them positive",
		                 (long long)c->rope_orig_max, (long long)max_pos);
	json_t *af = json_object_get(o, "attention_factor");
	if (af != NULL && !json_is_null(af)) {
		if (!json_is_number(af) || !(json_number_value(af) > 0.0))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: %s.attention_factor is not a positive number", key);
		c->rope_mscale = json_number_value(af);
		return WT_OK;
	}
	double s = (double)max_pos / (double)c->rope_orig_max;
	c->rope_mscale = s <= 1.0 ? 1.0 : sqrt(1.0 + log(s) / log((double)c->rope_orig_max));
	return WT_OK;
}

/* A sliding window on every layer (0 = none); theta_local is then the one base. */
static void all_local_window(const ckpt_field *f, ref_cfg *c)
{
	c->window = f[P_WINDOW].present && f[P_WINDOW].i > 0 ? f[P_WINDOW].i : 0;
	c->window_pattern = 0;
	c->theta_local = c->theta;
}

/* RoPE on the first int(d * prf) dims of each head (partial_rotary_factor). */
static int rotary_dims(double prf, ref_cfg *c, wt_errbuf *err)
{
	/* Python's int(): truncation; the range first (a huge factor must not reach the cast) */
	c->rot_dim = prf > 0.0 && prf <= 1.0 ? (int64_t)((double)c->d * prf) : 0;
	if (c->rot_dim < 2 || c->rot_dim % 2 != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: partial_rotary_factor %g of head_dim %lld gives %lld "
		    "rotary dims; the reference needs an even count from 2 to head_dim",
		    prf, (long long)c->d, (long long)c->rot_dim);
	return WT_OK;
}

static int parse_phi3(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1e-5; /* Phi3Config's default */
	if ((rv = rotary_dims(f[P_PRF].present ? f[P_PRF].r : 1.0, c, err)) != WT_OK)
		return rv;
	all_local_window(f, c);
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	if (o == NULL || type == NULL || strcmp(type, "default") == 0)
		return WT_OK;
	if (strcmp(type, "longrope") == 0 || strcmp(type, "su") == 0 || strcmp(type, "yarn") == 0)
		return parse_longrope(o, key, f, c, err);
	/* Phi3Config raises ValueError on any other type */
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: %s type '%s'; Phi-3 has 'longrope' (and 'su', 'yarn', "
	                 "which Phi3Config renames to it)",
	                 key, type);
}

static int parse_glm(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv == WT_OK)
		rv = rotary_dims(f[P_PRF].present ? f[P_PRF].r : 0.5, c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1.5625e-07; /* GlmConfig, Glm4Config */
	c->rope_pairs = true;
	c->sandwich = c->glm == 2;
	return rope_scaling(root, f, c->glm == 2 ? "Glm4ForCausalLM" : "GlmForCausalLM", c, err);
}

/* GLM-4.5 / 4.6 (Glm4MoeConfig): silu, rms_norm_eps 1e-5, per-head q_norm / k_norm when
 * use_qk_norm, rotate-half RoPE (Glm4Moe's apply_rotary_pos_emb, unlike GLM-4's pairs) on
 * the first int(head_dim * partial_rotary_factor) dims, default 0.5; the MoE is V3's
 * (cfg.c parse_deepseek), every layer from first_k_dense_replace on (Glm4MoeDecoderLayer
 * reads no moe_layer_freq). */
/* Ling 2.0 (vLLM's later bailing_moe.py): get_rope(rotary_dim = config.rotary_dim or head_dim,
 * partial_rotary_factor) turns int(rotary_dim * factor) dims when the factor is below 1,
 * rotary_dim itself otherwise; BailingMoeV2Config's factor 0.5. */
static int bailing_v2_rotary(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	json_t *rd = ref_lm_get(root, "rotary_dim");
	double prf = f[P_PRF].present ? f[P_PRF].r : 0.5;
	if (rd == NULL || json_is_null(rd))
		return rotary_dims(prf, c, err);
	if (!json_is_integer(rd) || json_integer_value(rd) < 2 || json_integer_value(rd) > c->d)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: rotary_dim is not an integer from 2 to head_dim %lld; "
		    "remove the key (vLLM then turns head_dim x partial_rotary_factor)",
		    (long long)c->d);
	int64_t r = json_integer_value(rd);
	c->rot_dim = prf > 0.0 && prf < 1.0 ? (int64_t)((double)r * prf) : r;
	if (c->rot_dim < 2 || c->rot_dim % 2 != 0 || !(prf > 0.0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: rotary_dim %lld x partial_rotary_factor %g gives %lld "
		    "rotary dims; the reference needs an even count from 2",
		    (long long)r, prf, (long long)c->rot_dim);
	return WT_OK;
}

static int parse_glm4_moe(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv == WT_OK && c->bailing_v2)
		rv = bailing_v2_rotary(f, root, c, err);
	else if (rv == WT_OK)
		rv = rotary_dims(f[P_PRF].present ? f[P_PRF].r : 0.5, c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1e-5;
	c->qk_norm = f[P_QK_NORM].present && f[P_QK_NORM].b;
	c->layer_freq = 1;
	c->rope_interleave = false;
	return rope_scaling(
	    root, f, c->bailing_v2 ? "BailingMoeV2ForCausalLM" : "Glm4MoeForCausalLM", c, err);
}

/* dots.llm1's sliding layers into c->local_mask: layer_types when given (one entry per
 * layer, full_attention or sliding_attention), else the layers >= max_window_layers when
 * sliding_window is not null; an absent sliding_window is Dots1Config's 4096. */
static int dots1_windows(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv;
	json_t *sw = ref_lm_get(root, "sliding_window"), *lt = ref_lm_get(root, "layer_types");
	bool typed = lt != NULL && !json_is_null(lt);
	c->window = sw == NULL ? 4096 : f[P_WINDOW].present ? f[P_WINDOW].i : 0;
	c->window_pattern = 0;
	c->theta_local = c->theta;
	c->local_masked = true;
	memset(c->local_mask, 0, sizeof(c->local_mask));
	if (c->window < 0 || c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: sliding_window %lld, %lld layers; the reference needs "
		    "a window >= 0 and at most %d layers",
		    (long long)c->window, (long long)c->L, REF_L4_MAX_LAYERS);
	if (typed && (rv = ref_layer_types_list(c, lt, err)) != WT_OK)
		return rv;
	int64_t from = f[P_MAX_WIN].present ? f[P_MAX_WIN].i : c->L;
	for (int64_t i = 0; i < c->L; i++) {
		bool local = c->window > 0 && i >= from;
		if (typed && (rv = ref_layer_type_at(c, lt, i, &local, err)) != WT_OK)
			return rv;
		if (local)
			c->local_mask[i / 64] |= 1ull << (i % 64);
	}
	return WT_OK;
}

/* dots.llm1 (Dots1Config): as parse_glm4_moe with the differences above. */
static int parse_dots1(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	if (f[P_PRF].present && f[P_PRF].r != 1.0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: partial_rotary_factor %g; Dots1ForCausalLM turns "
		    "the whole head (transformers fails on a partial one); remove the key",
		    f[P_PRF].r);
	c->rot_dim = 0;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1e-6;
	c->qk_norm = true;
	c->norm_topk = f[P_NORM_TOPK].present && f[P_NORM_TOPK].b;
	c->layer_freq = 1;
	c->rope_interleave = false;
	rv = dots1_windows(f, root, c, err);
	return rv == WT_OK ? rope_scaling(root, f, "Dots1ForCausalLM", c, err) : rv;
}

/* DeepSeek-MoE (DeepseekConfig; vLLM's deepseek_v2.py, DeepseekAttention): Llama's attention
 * (no biases, rotate-half RoPE over the whole head, rope_scaling as Llama's), rms_norm_eps 1e-6;
 * V2's MoE (cfg.c parse_deepseek, mla.c ref_route_ds): softmax over mlp.gate, top
 * num_experts_per_tok, renormalised when norm_topk_prob (default false), times
 * routed_scaling_factor (vLLM's absent value 1.0), every moe_layer_freq-th layer from
 * first_k_dense_replace on, n_shared_experts shared experts added ungated. */
static int parse_deepseek_moe(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	if (f[P_SCORING].present && strcmp(f[P_SCORING].s, "softmax") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: scoring_func '%s'; DeepSeek-MoE routes with 'softmax'",
		    f[P_SCORING].s);
	c->rot_dim = 0;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1e-6;
	c->qk_norm = false;
	c->norm_topk = f[P_NORM_TOPK].present && f[P_NORM_TOPK].b;
	c->rope_interleave = false;
	return rope_scaling(root, f, "DeepseekForCausalLM", c, err);
}

static int parse_olmo2(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	/* Olmo2Config's default 1e-5, FlexOlmoConfig's 1e-6 */
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : c->flex_olmo ? 1e-6 : 1e-5;
	c->sandwich = true; /* post_attention_layernorm, post_feedforward_layernorm */
	return rope_scaling(root, f, c->flex_olmo ? "FlexOlmoForCausalLM" : "Olmo2ForCausalLM", c,
	                    err);
}

/* Granite's four multipliers (GraniteConfig: each 1.0 when absent). */
static int parse_granite(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1e-6; /* GraniteConfig's default */
	double m[4];
	for (int k = 0; k < 4; k++) {
		const ckpt_field *x = &f[P_EMB_MULT + k];
		m[k] = x->present ? x->r : 1.0;
		if (!(m[k] >= 1e-6 && m[k] <= 1e6)) /* 1e-300 overflowed the logits to inf */
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s %g; the reference needs a value in [1e-6, 1e6]",
			    x->key, m[k]);
	}
	c->embed_scale = (float)m[0];
	c->resid_mult = m[1];
	c->attn_scale = m[2];
	c->logits_div = m[3];
	return rope_scaling(root, f, "GraniteForCausalLM", c, err);
}

/* Bamba (BambaConfig): silu, rms_norm_eps 1e-5, RoPE on int(head_dim *
 * partial_rotary_factor) dims (the class sets 0.5; a key in config.json wins), rope_theta
 * and rope_scaling as Llama's; no multipliers. */
static int parse_bamba(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1e-5;
	/* Falcon-H1 (bamba set too): RoPE on the whole head */
	double prf = f[P_PRF].present ? f[P_PRF].r : c->fh1 ? 1.0 : 0.5;
	if ((rv = rotary_dims(prf, c, err)) != WT_OK)
		return rv;
	return rope_scaling(root, f, "BambaForCausalLM", c, err);
}

/* clip_qkv of OLMo 1 / OLMoE (and DBRX's, cfg_dbrx.c): null or absent = none (c->clip_qkv
 * 0), else a positive finite bound. */
int ref_cfg_clip_qkv(json_t *root, ref_cfg *c, wt_errbuf *err)
{
	json_t *v = ref_lm_get(root, "clip_qkv");
	c->clip_qkv = 0.0;
	if (v == NULL || json_is_null(v))
		return WT_OK;
	double x = json_is_number(v) ? json_number_value(v) : 0.0;
	if (!(x > 0.0 && isfinite(x)))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: clip_qkv is not a positive finite number; write the "
		                 "bound q, k and v are clamped to, or null for none");
	c->clip_qkv = x;
	return WT_OK;
}

/* OLMoE (OlmoeConfig): silu, rms_norm_eps 1e-5, clip_qkv. */
static int parse_olmoe(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv == WT_OK)
		rv = ref_cfg_clip_qkv(root, c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[P_RMS_EPS].present ? f[P_RMS_EPS].r : 1e-5;
	return rope_scaling(root, f, "OlmoeForCausalLM", c, err);
}

/* OLMo 1 (OlmoConfig): silu, clip_qkv; OlmoLayerNorm's eps is 1e-5 whatever config.json
 * says (OlmoConfig has no epsilon key). */
static int parse_olmo(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv == WT_OK)
		rv = ref_cfg_clip_qkv(root, c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = 1e-5;
	return rope_scaling(root, f, "OlmoForCausalLM", c, err);
}

static int parse_starcoder2(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	int rv = ref_cfg_act(&f[P_ACT], "gelu_pytorch_tanh", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[P_NORM_EPS].present ? f[P_NORM_EPS].r : 1e-5;
	if (!(c->eps > 0.0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: norm_epsilon %g; the reference needs a positive value", c->eps);
	all_local_window(f, c);
	return rope_scaling(root, f, "Starcoder2ForCausalLM", c, err);
}

static int parse_deepseek_v2(const ckpt_field *f, json_t *root, ref_cfg *c, wt_errbuf *err)
{
	const char *sc = f[P_SCORING].present ? f[P_SCORING].s : "softmax";
	const char *tm = f[P_TOPK_METHOD].present ? f[P_TOPK_METHOD].s : "greedy";
	int rv = ref_cfg_act(&f[P_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	if (strcmp(sc, "softmax") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: scoring_func '%s'; DeepSeek-V2 routes with 'softmax'", sc);
	if (strcmp(tm, "greedy") == 0) {
		c->n_group = c->topk_group = 1; /* transformers reads neither then */
	} else if (strcmp(tm, "group_limited_greedy") != 0) {
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: topk_method '%s'; the reference has 'greedy' and "
		                 "'group_limited_greedy' for DeepSeek-V2",
		                 tm);
	}
	if (f[P_NORM_TOPK].present && f[P_NORM_TOPK].b)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: norm_topk_prob true on DeepSeek-V2: transformers "
		                 "ignores it and DeepSeek's code then drops routed_scaling_factor; "
		                 "the reference takes neither");
	if (f[P_INTERLEAVE].present && !f[P_INTERLEAVE].b)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_interleave false; DeepSeek-V2 always turns the "
		                 "interleaved pairs");
	c->norm_topk = false;
	c->rope_interleave = true;
	return rope_scaling(root, f, "DeepseekV2ForCausalLM", c, err);
}

int ref_cfg_fam(ref_cfg *c, const char *family, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[P_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	if (c->bamba)
		rv = parse_bamba(f, root, c, err);
	else if (c->dots1)
		rv = parse_dots1(f, root, c, err);
	else if (c->ds_moe)
		rv = parse_deepseek_moe(f, root, c, err);
	else if (c->glm4_moe)
		rv = parse_glm4_moe(f, root, c, err);
	else if (c->glm != 0)
		rv = parse_glm(f, root, c, err);
	else if (c->fused_ckpt)
		rv = parse_phi3(f, root, c, err);
	else if (c->layernorm)
		rv = parse_starcoder2(f, root, c, err);
	else if (c->ds_v2)
		rv = parse_deepseek_v2(f, root, c, err);
	else if (c->granite)
		rv = parse_granite(f, root, c, err);
	else if (c->olmo2)
		rv = parse_olmo2(f, root, c, err);
	else if (c->qk_norm_full)
		rv = parse_olmoe(f, root, c, err);
	else if (c->norm_free)
		rv = parse_olmo(f, root, c, err);
	else
		rv = wt_seterr(err, WT_EINVAL, "family %s has no switches of cfg_fam.c",
		               family ? family : "none");
	json_decref(root);
	return rv;
}
