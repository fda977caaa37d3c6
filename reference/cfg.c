/*
 * cfg.c — the reference configuration: the config.json fields only the
 * reference forward pass needs, and the validation of the whole ref_cfg.
 *
 * config.json has one parser, loader/config.c: the fields the planner reads
 * too (dimensions, experts, MoE layer selection, MLA dims, FP8 block) are
 * copied from the loader's ckpt_config (ref_cfg_from_ckpt, ckpt.c), and the
 * reference-only ones below are read with ckpt_config_fields, which applies
 * the same JSON rules and `text_config` overlay.
 *
 * Reference-only fields and their Hugging Face defaults: rms_norm_eps 1e-6
 * (BERT layer_norm_eps 1e-12), rope_parameters.rope_theta (transformers 5.x)
 * else rope_theta, else 10000; DeepSeek rope_interleave true;
 * num_experts_per_tok (required with experts); Mixtral renormalises its top-k
 * weights, Qwen-MoE only with norm_topk_prob, DeepSeek unless norm_topk_prob
 * is false; DeepSeek n_group 1, topk_group 1, routed_scaling_factor 1,
 * scoring_func sigmoid; BERT max_position_embeddings 512, type_vocab_size 2,
 * hidden_act gelu; ERNIE 4.5 MoE moe_k (for num_experts_per_tok) and moe_norm_min (the
 * loader's class defaults 6 and 1e-12 when absent), hidden_act silu only. A present field of the
 * wrong JSON type is WT_ECORRUPT naming it (null counts as absent; ckpt_config_fields). The Gemma
 * families' own fields: cfg_gemma.c; Phi-3's, StarCoder2's, DeepSeek-V2's, GLM-4's, OLMo 2's,
 * Granite's, GLM-4.5's and dots.llm1's: cfg_fam.c; PhiMoE's: cfg_phimoe.c; GPT-OSS's:
 * cfg_gpt_oss.c; Llama 4's: cfg_llama4.c; Qwen3-Next's: cfg_qwen3_next.c; SmolLM3's:
 * cfg_smollm3.c.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/afmoe.h"
#include "reference/cfg_kind.h"
#include "reference/grok1.h"
#include "reference/ouro.h"
#include "reference/plamo3.h"
#include "reference/jais2.h"
#include "reference/reference_int.h"
#include "reference/mimo_v2.h"
#include "reference/pangu_sink.h"
#include "reference/step3.h"
#include "reference/teleflm.h"
#include "reference/solar.h"

/* The reference-only fields, indices into the table read_fields fills. */
enum {
	F_RMS_EPS,
	F_ROPE_THETA,
	F_RP_THETA,
	F_ROPE_INTERLEAVE,
	F_N_GROUP,
	F_TOPK_GROUP,
	F_NORM_TOPK,
	F_ROUTED_SCALE,
	F_SCORING,
	F_TOPK,
	F_ACT,
	F_LN_EPS,
	F_MAX_POS,
	F_N_TYPES,
	F_MOE_K,
	F_NORM_MIN,
	F_MOE_TOPK,
	F_COUNT
};

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[F_COUNT] = {
	    [F_RMS_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [F_ROPE_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [F_RP_THETA] = {"rope_parameters.rope_theta", CKPT_FIELD_REAL},
	    [F_ROPE_INTERLEAVE] = {"rope_interleave", CKPT_FIELD_BOOL},
	    [F_N_GROUP] = {"n_group", CKPT_FIELD_INT},
	    [F_TOPK_GROUP] = {"topk_group", CKPT_FIELD_INT},
	    [F_NORM_TOPK] = {"norm_topk_prob", CKPT_FIELD_BOOL},
	    [F_ROUTED_SCALE] = {"routed_scaling_factor", CKPT_FIELD_REAL},
	    [F_SCORING] = {"scoring_func", CKPT_FIELD_STRING},
	    [F_TOPK] = {"num_experts_per_tok", CKPT_FIELD_INT},
	    [F_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [F_LN_EPS] = {"layer_norm_eps", CKPT_FIELD_REAL},
	    [F_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [F_N_TYPES] = {"type_vocab_size", CKPT_FIELD_INT},
	    [F_MOE_K] = {"moe_k", CKPT_FIELD_INT},
	    [F_NORM_MIN] = {"moe_norm_min", CKPT_FIELD_REAL},
	    [F_MOE_TOPK] = {"moe_topk", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, F_COUNT, err);
}

static int64_t int_or(const ckpt_field *f, int64_t def)
{
	return f->present ? f->i : def;
}

static double real_or(const ckpt_field *f, double def)
{
	return f->present ? f->r : def;
}

static bool bool_or(const ckpt_field *f, bool def)
{
	return f->present ? f->b : def;
}

/* rope_parameters.rope_theta (transformers 5.x) wins over the legacy rope_theta. */
static int parse_rope(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	c->theta = real_or(&f[F_RP_THETA], real_or(&f[F_ROPE_THETA], 10000.0));
	if (!(c->theta > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_theta %g; the reference needs a value above 1",
		                 c->theta);
	/* transformers' default for DeepSeek: interleaved */
	c->rope_interleave = ref_is_mla(c) && bool_or(&f[F_ROPE_INTERLEAVE], true);
	return WT_OK;
}

#define REF_MAX_NORM_MIN 1e6 /* a floor on the top-k weights' sum past this is no model's */

/* ERNIE 4.5 MoE (Ernie4_5_MoeConfig): moe_k experts of the softmax router, weights over
 * max(sum, moe_norm_min); one group, no scaling; the layer range as the planner reads it. */
static int parse_ernie_moe(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	c->n_group = c->topk_group = 1;
	c->norm_topk = true;
	c->routed_scale = 1.0;
	c->norm_min = real_or(&f[F_NORM_MIN], 1e-12);
	if (!(c->norm_min >= 0.0 && c->norm_min < REF_MAX_NORM_MIN))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: moe_norm_min %g; it must be in [0, %g)", c->norm_min,
		                 REF_MAX_NORM_MIN);
	if (c->moe_every < 1 || c->moe_start < 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: moe_layer_interval %lld, moe_layer_start_index %lld "
		                 "out of range",
		                 (long long)c->moe_every, (long long)c->moe_start);
	return WT_OK;
}

static int parse_deepseek(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	if (c->ernie)
		return parse_ernie_moe(f, c, err);
	c->n_group = int_or(&f[F_N_GROUP], 1);
	c->topk_group = int_or(&f[F_TOPK_GROUP], 1);
	c->norm_topk = bool_or(&f[F_NORM_TOPK], true);
	c->routed_scale = real_or(&f[F_ROUTED_SCALE], 1.0);
	/* DeepSeek-V2's scoring and top-k method: cfg_fam.c */
	/* Dots1TopkRouter reads no scoring_func: always the sigmoid */
	if (!c->ds_v2 && !c->dots1 && !c->ds_moe && !c->ml3 && f[F_SCORING].present &&
	    strcmp(f[F_SCORING].s, "sigmoid") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: scoring_func '%s'; the reference has 'sigmoid'",
		                 f[F_SCORING].s);
	if (c->n_group < 1 || c->topk_group < 1 || c->topk_group > c->n_group ||
	    c->layer_freq < 1 || c->first_dense < 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: n_group %lld, topk_group %lld, moe_layer_freq "
		                 "%lld, first_k_dense_replace %lld out of range",
		                 (long long)c->n_group, (long long)c->topk_group,
		                 (long long)c->layer_freq, (long long)c->first_dense);
	if (c->E % c->n_group != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: n_group %lld does not divide %lld experts",
		                 (long long)c->n_group, (long long)c->E);
	return WT_OK;
}

static int parse_moe(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	/* ERNIE: moe_k; Hunyuan: moe_topk (one value: the loader's view reads a per-layer list
	 * of equal entries as it) */
	const ckpt_field *k = &f[c->ernie ? F_MOE_K : c->hunyuan || c->aria ? F_MOE_TOPK : F_TOPK];
	if (!k->present && !c->jamba)
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is missing", k->key);
	c->topk = k->present ? k->i : 2; /* JambaConfig's num_experts_per_tok */
	if (c->E < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: no routed experts (num_local_experts, num_experts "
		                 "or n_routed_experts) for a mixture-of-experts architecture");
	int rv;
	if (c->kind == REF_MIXTRAL) {
		if (!c->stacked_experts) /* GraniteMoeShared keeps its shared MLP */
			c->Is = 0;
		c->norm_topk = true;
		c->sparse_step = 1;
	} else if (c->kind == REF_DEEPSEEK) {
		c->sparse_step = 1;
		if ((rv = parse_deepseek(f, c, err)) != WT_OK)
			return rv;
	} else {
		/* Qwen3VLMoeTextSparseMoeBlock and HunYuanMoEV1Moe renormalise whatever
		 * norm_topk_prob says */
		c->norm_topk =
		    c->q3vl_moe || c->hunyuan || c->aria || bool_or(&f[F_NORM_TOPK], c->bailing);
		if (c->jamba) { /* JambaSparseMoeBlock: the softmax's top-k as they are */
			c->norm_topk = false;
			c->sparse_step = 1;
		}
	}
	if (c->E > REF_MAX_EXPERTS || c->topk < 1 || c->topk > c->E || c->Ie < 1 || c->Is < 0 ||
	    c->sparse_step < 1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: experts %lld, top-k %lld, expert size %lld, shared "
		    "%lld, sparse step %lld; the reference needs 1 <= top-k <= experts "
		    "<= %d and positive sizes",
		    (long long)c->E, (long long)c->topk, (long long)c->Ie, (long long)c->Is,
		    (long long)c->sparse_step, REF_MAX_EXPERTS);
	return WT_OK;
}

static int parse_bert(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	if (f[F_ACT].present && strcmp(f[F_ACT].s, "gelu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "BertModel hidden_act '%s': the reference has only 'gelu'",
		                 f[F_ACT].s);
	c->eps = real_or(&f[F_LN_EPS], 1e-12);
	c->max_pos = int_or(&f[F_MAX_POS], 512);
	c->n_types = int_or(&f[F_N_TYPES], 2);
	if (c->max_pos < 1 || c->n_types < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: max_position_embeddings %lld, type_vocab_size "
		                 "%lld must be positive",
		                 (long long)c->max_pos, (long long)c->n_types);
	if ((c->rb_cls || c->bt_cls || c->bt_tok) && (c->n_labels < 1 || c->n_labels > c->hid))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld labels; the reference writes a classifier's "
		                 "logits into one row of hidden_size %lld",
		                 (long long)c->n_labels, (long long)c->hid);
	if (c->KV != c->H)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: BertModel with %lld kv heads for %lld heads; BERT "
		                 "attention has one kv head per head",
		                 (long long)c->KV, (long long)c->H);
	return WT_OK;
}

/* ModernBERT: the loader's ModernBertConfig values (ref_cfg_from_ckpt copied them; eps and the
 * global theta over the decoders' keys read above); positions unbounded by a table. */
static int parse_modernbert(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	c->max_pos = int_or(&f[F_MAX_POS], 8192);
	c->eps = c->mb_eps;
	c->theta = c->mb_theta;
	if (!(c->mb_theta > 1.0 && c->mb_theta_local > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: global_rope_theta %g, local_rope_theta %g; the "
		                 "reference needs values above 1",
		                 c->mb_theta, c->mb_theta_local);
	if (c->mb_tok && !c->mb_cls_gelu)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: classifier_activation is not \"gelu\"; the reference's "
		    "token classifier head runs GELU");
	if ((c->mb_cls || c->mb_tok) && (c->n_labels < 1 || c->n_labels > c->hid))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld labels; the reference writes a classifier's "
		                 "logits into one row of hidden_size %lld",
		                 (long long)c->n_labels, (long long)c->hid);
	if (c->mb_every < 1 || c->mb_window < 1 || c->KV != c->H || c->hid % c->H != 0 ||
	    c->d != c->hid / c->H)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: ModernBERT with global_attn_every_n_layers %lld, a "
		                 "window of %lld, %lld kv heads for %lld heads of %lld; the "
		                 "reference needs every >= 1, local_attention >= 2 and one head "
		                 "of hidden_size / heads per kv head",
		                 (long long)c->mb_every, (long long)c->mb_window, (long long)c->KV,
		                 (long long)c->H, (long long)c->d);
	return WT_OK;
}

static int check_mla(const ref_cfg *c, wt_errbuf *err)
{
	if (c->kv_lora < 1 || c->nope < 1 || c->rope < 2 || c->rope % 2 || c->rope > 1024 ||
	    c->vhd < 1 || c->q_lora == 0 || c->q_lora < -1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: MLA dims q_lora %lld kv_lora %lld nope %lld rope %lld v "
		    "%lld; the reference needs positive sizes and an even rope dim <= 1024",
		    (long long)c->q_lora, (long long)c->kv_lora, (long long)c->nope,
		    (long long)c->rope, (long long)c->vhd);
	return WT_OK;
}

static int parse_rest(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	c->eps = real_or(&f[F_RMS_EPS], 1e-6);
	int rv = parse_rope(f, c, err);
	if (rv == WT_OK && c->kind == REF_BERT && c->modernbert)
		rv = parse_modernbert(f, c, err);
	else if (rv == WT_OK && c->kind == REF_BERT && !c->brope) /* brope: cfg_bert_rope.c */
		rv = parse_bert(f, c, err);
	if (rv == WT_OK && ref_is_mla(c))
		rv = check_mla(c, err);
	if (rv == WT_OK && c->kind != REF_DENSE && c->kind != REF_BERT && !c->minicpm3)
		rv = parse_moe(f, c, err);
	if (rv != WT_OK)
		return rv;
	/* BailingMoe(V2)Config's None: every layer is MoE (V2: the loader requires it with
	 * first_k_dense_replace), none reads it */
	if (c->I < 1 && (c->bailing || c->bailing_v2))
		c->I = c->Ie;
	if (c->I < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'intermediate_size' is missing; the reference "
		                 "forward pass needs it");
	if (c->H < 1 || c->KV < 1 || c->hid < 1 || c->H % c->KV != 0 || c->d < 2 || c->d % 2 != 0 ||
	    c->V < 1 || c->L < 1 || c->block[0] < 1 || c->block[1] < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: heads %lld, kv heads %lld, head_dim %lld, "
		                 "intermediate %lld, vocab %lld, layers %lld; the reference needs "
		                 "kv heads dividing heads, an even head_dim and positive sizes",
		                 (long long)c->H, (long long)c->KV, (long long)c->d,
		                 (long long)c->I, (long long)c->V, (long long)c->L);
	return WT_OK;
}

/* The RoPE scaling of the families with no switches of their own (Llama,
 * Mistral, Qwen, the MoE decoders, DeepSeek-V3): cfg_rope.c. */
static int plain_rope(ref_cfg *c, const char *arch, const ckpt_field *f, const char *json,
                      size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "this architecture", ref_is_mla(c) ? c->rope : c->d,
	                  f[F_MAX_POS].present ? f[F_MAX_POS].i : 0};
	int rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}

/*
 * The real-valued settings every family shares, once each family has read
 * them: values no model uses that turn the logits into NaN or Inf (a negative
 * epsilon under a square root; a cap or routed scale past float's range) are
 * refused naming the key, so verify-forward never reports a FAIL that is the
 * config's arithmetic (found by test_config_sweep).
 */
#define REF_MAX_SCALE 1e6 /* as Granite's multipliers (cfg_fam.c) */

static int check_reals(const ref_cfg *c, wt_errbuf *err)
{
	if (!(c->eps >= 0.0 && c->eps <= 1.0))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: the norm epsilon (rms_norm_eps, layer_norm_eps or "
		    "norm_epsilon) is %g; it must be in [0, 1] (models use 1e-12..1e-5)",
		    c->eps);
	if (c->kind == REF_DEEPSEEK && !(c->routed_scale > 0.0 && c->routed_scale < REF_MAX_SCALE))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: routed_scaling_factor %g; it must be in (0, %g)",
		                 c->routed_scale, REF_MAX_SCALE);
	if (!(c->attn_cap >= 0.0 && c->attn_cap < REF_MAX_SCALE) ||
	    !(c->final_cap >= 0.0 && c->final_cap < REF_MAX_SCALE))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: attn_logit_softcapping %g, final_logit_softcapping "
		                 "%g; a cap must be null or in (0, %g)",
		                 c->attn_cap, c->final_cap, REF_MAX_SCALE);
	return WT_OK;
}

/* PaliGemma's text model is Gemma's, or Gemma 2's when text_config.model_type says gemma2
 * (the planner has refused any other). */
static int paligemma_gen(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field mt = {"text_config.model_type", CKPT_FIELD_STRING};
	int rv = ckpt_config_fields(json, len, &mt, 1, err);
	if (rv == WT_OK && mt.present && strcmp(mt.s, "gemma2") == 0)
		c->gemma = 2;
	return rv;
}

/* InternVL's text model is Qwen2's, or Qwen3's (per-head q / k norms) when text_config.model_type
 * says qwen3, or Qwen3-MoE's (the same attention, qwen3_moe's MoE layers) when it says qwen3_moe
 * (InternVL3.5; the planner has refused any other). */
static int internvl_gen(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field mt = {"text_config.model_type", CKPT_FIELD_STRING};
	int rv = ckpt_config_fields(json, len, &mt, 1, err);
	bool moe = rv == WT_OK && mt.present && strcmp(mt.s, "qwen3_moe") == 0;
	if (moe || (rv == WT_OK && mt.present && strcmp(mt.s, "qwen3") == 0))
		c->qk_norm = true;
	if (moe)
		c->kind = REF_QWEN2_MOE;
	return rv;
}

/* Mistral 3's language model is text_config's: a qwen3 one (LightOnOCR-1B's) has Qwen3's
 * per-head q / k norms (the planner has refused any q / k norm under another). */
static int mistral3_gen(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field mt = {"text_config.model_type", CKPT_FIELD_STRING};
	int rv = ckpt_config_fields(json, len, &mt, 1, err);
	if (rv == WT_OK && mt.present && strcmp(mt.s, "qwen3") == 0)
		c->qk_norm = true;
	return rv;
}

/* The kind and switches of family, the keys every family reads into f (and c), and the
 * activations the reference checks before its family's own keys. */
static int read_common(ref_cfg *c, const char *family, const char *arch, const char *json,
                       size_t len, ckpt_field *f, wt_errbuf *err)
{
	int rv = ref_kind_of(family, arch, c, err);
	if (rv != WT_OK)
		return rv;
	c->ml3 = strcmp(family, "mistral_large3") == 0; /* cfg_ml3.c */
	if (c->dec_cls && c->n_labels < 1)
		return wt_seterr(err, WT_ECORRUPT, "config.json: the score head has no labels");
	if (strcmp(family, "paligemma") == 0 && (rv = paligemma_gen(c, json, len, err)) != WT_OK)
		return rv;
	if (strcmp(family, "internvl") == 0 && (rv = internvl_gen(c, json, len, err)) != WT_OK)
		return rv;
	if (strcmp(family, "mistral3") == 0 && (rv = mistral3_gen(c, json, len, err)) != WT_OK)
		return rv;
	if ((rv = read_fields(json, len, f, err)) != WT_OK)
		return rv;
	if ((rv = parse_rest(f, c, err)) != WT_OK)
		return rv;
	/* ERNIE 4.5: rotate_half over (x[2i], x[2i+1]) with cos / sin of frequency i repeated
	 * per pair (modeling_ernie4_5.py apply_rotary_pos_emb), on the whole head */
	c->rope_pairs = c->rope_pairs || c->ernie;
	if (c->ernie && f[F_ACT].present && strcmp(f[F_ACT].s, "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s'; the reference has silu for %s",
		                 f[F_ACT].s, arch ? arch : "ERNIE 4.5");
	/* Aria: transformers' shared experts run ACT2FN[hidden_act], its experts and vLLM's
	 * everything silu: only silu agrees */
	if (c->aria && f[F_ACT].present && strcmp(f[F_ACT].s, "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.hidden_act '%s' on Aria: vLLM's "
		                 "aria.py runs silu in the experts and the shared experts whatever "
		                 "it says; only silu is supported",
		                 f[F_ACT].s);
	/* hidden_act read: Qwen3-VL's text MLPs and experts run ACT2FN[hidden_act]
	 * (Qwen3VL(Moe)TextConfig: silu); the FAM_ACT families' likewise */
	if ((c->read_act || (family != NULL && strncmp(family, "qwen3_vl", 8) == 0)) &&
	    (rv = ref_cfg_act(&f[F_ACT], "silu", c, err)) != WT_OK)
		return rv;
	c->br_cls = family != NULL && strcmp(family, "gte_new_cls") == 0;
	c->bt_splade = family != NULL && strcmp(family, "bert_splade") == 0;
	return WT_OK;
}

/* What some families read on top of the family whose keys ref_cfg_finish read for them. */
static int read_addons(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	int rv = WT_OK;
	if (c->minimax) /* Mixtral's keys, its residual factors here */
		rv = ref_cfg_minimax(c, arch, json, len, err);
	if (rv == WT_OK && c->arctic) /* Mixtral's keys, its layer pattern here */
		rv = ref_cfg_arctic(c, json, len, err);
	if (rv == WT_OK && c->teleflm) /* Llama's keys, the muP multipliers here */
		rv = ref_cfg_teleflm(c, json, len, err);
	if (rv == WT_OK && c->solar) /* Llama's keys, the skip connections here */
		rv = ref_cfg_solar(c, json, len, err);
	if (rv == WT_OK && c->ouro) /* Qwen2's keys, the loop and its norms here */
		rv = ref_cfg_ouro(c, json, len, err);
	return rv;
}

/* The readers that lay a family's own keys over what its kind's reader set (DeepSeek-V3's
 * reading, cfg_fam.c's glm4_moe one): openPangu-Ultra-MoE, Mistral-Large-3 (V3's keys and RoPE,
 * the routing and llama_4_scaling), openPangu-Pro-MoE-V2. */
static int read_after(ref_cfg *c, const char *family, const char *json, size_t len, wt_errbuf *err)
{
	int rv = WT_OK;
	if (family != NULL && strcmp(family, "pangu_ultra_moe") == 0)
		rv = ref_cfg_pangu_moe(c, json, len, err);
	if (rv == WT_OK && c->ml3)
		rv = ref_cfg_ml3(c, json, len, err);
	if (rv == WT_OK && family != NULL && strcmp(family, "pangu_pro_moe_v2") == 0)
		rv = ref_cfg_pangu_v2(c, json, len, err);
	return rv;
}

int ref_cfg_finish(ref_cfg *c, const char *family, const char *arch, const char *json, size_t len,
                   wt_errbuf *err)
{
	ckpt_field f[F_COUNT];
	int rv = read_common(c, family, arch, json, len, f, err);
	if (rv != WT_OK)
		return rv;
	if (c->brope)
		rv = ref_cfg_bert_rope(c, json, len, err);
	else if (c->bt_splade)
		rv = ref_cfg_splade(c, json, len, err);
	else if (c->longcat)
		rv = ref_cfg_longcat(c, arch, json, len, err);
	else if (c->gpt2)
		rv = ref_cfg_gpt2(c, arch, json, len, err);
	else if (c->clip)
		rv = ref_cfg_clip(c, json, len, err);
	else if (c->opt)
		rv = ref_cfg_opt(c, arch, json, len, err);
	else if (c->whisper)
		rv = ref_cfg_whisper(c, json, len, err);
	else if (c->g3n)
		rv = ref_cfg_g3n(c, arch, json, len, err);
	else if (c->jamba)
		rv = ref_cfg_jamba(c, arch, json, len, err);
	else if (c->neox || c->phi || c->stablelm || c->bloom || c->persimmon || c->falcon)
		rv = ref_cfg_neox(c, arch, json, len, err);
	else if (c->dbrx)
		rv = ref_cfg_dbrx(c, arch, json, len, err);
	else if (c->mpt)
		rv = ref_cfg_mpt(c, arch, json, len, err);
	else if (c->hunyuan)
		rv = ref_cfg_hunyuan(c, arch, json, len, err);
	else if (c->gpt_oss)
		rv = ref_cfg_gpt_oss(c, arch, json, len, err);
	else if (c->llama4)
		rv = ref_cfg_llama4(c, arch, json, len, err);
	else if (c->q3n)
		rv = ref_cfg_qwen3_next(c, arch, json, len, err);
	else if (c->fh1) /* before Bamba's, whose switches it shares */
		rv = ref_cfg_falconh1(c, arch, json, len, err);
	else if (c->bamba)
		rv = ref_cfg_bamba(c, arch, json, len, err);
	else if (c->zamba2) /* before Granite 4.0's, whose mixer it runs */
		rv = ref_cfg_zamba2(c, arch, json, len, err);
	else if (c->nh) /* likewise */
		rv = ref_cfg_nemotron_h(c, arch, json, len, err);
	else if (c->g4) /* before cfg_fam.c's granite, which it calls */
		rv = ref_cfg_granite4(c, arch, json, len, err);
	else if (c->cohere != 0)
		rv = ref_cfg_cohere(c, arch, json, len, err);
	else if (c->chameleon)
		rv = ref_cfg_chameleon(c, arch, json, len, err);
	else if (c->olmo3)
		rv = ref_cfg_olmo3(c, arch, json, len, err);
	else if (c->exaone4)
		rv = ref_cfg_exaone4(c, arch, json, len, err);
	else if (c->smollm3)
		rv = ref_cfg_smollm3(c, arch, json, len, err);
	else if (c->ministral)
		rv = ref_cfg_ministral(c, arch, json, len, err);
	else if (c->minicpm)
		rv = ref_cfg_minicpm(c, arch, json, len, err);
	else if (c->jais2) /* before the other families without a gate */
		rv = ref_cfg_jais2(c, arch, json, len, err);
	else if (c->nogate)
		rv = ref_cfg_nogate(c, arch, json, len, err);
	else if (c->lfm2)
		rv = ref_cfg_lfm2(c, arch, json, len, err);
	else if (c->plamo3) /* PLaMo 2 too (plamo2 set by ckpt.c) */
		rv = c->plamo2 ? ref_cfg_plamo2(c) : ref_cfg_plamo3(c, json, len, err);
	else if (c->orion || c->bailing) /* before cfg_fam.c: Orion's layernorm, Bailing's
	                                  * fused_ckpt; Llama's RoPE, rms_norm_eps (the loader
	                                  * fills the config class's 1e-5 where absent) */
		rv = plain_rope(c, arch, f, json, len, err);
	else if (c->grok)
		rv = ref_cfg_grok1(c, arch, json, len, err);
	else if (c->phimoe || c->m2) /* before cfg_fam.c: its layernorm, qk_norm_full */
		rv = c->m2 ? ref_cfg_minimax_m2(c, arch, json, len, err)
		           : ref_cfg_phimoe(c, json, len, err);
	else if (c->step3) /* likewise (DeepSeek-MoE's router) */
		rv = ref_cfg_step3(c, arch, json, len, err);
	else if (c->mimo_v2) /* likewise (mimo_v2.c) */
		rv = ref_cfg_mimo_v2(c, json, len, err);
	else if (c->afmoe) /* before cfg_fam.c's glm4_moe, whose router it shares */
		rv = ref_cfg_afmoe(c, arch, json, len, err);
	else if (c->fused_ckpt || c->layernorm || c->ds_v2 || c->glm != 0 || c->qk_norm_full ||
	         c->granite || c->norm_free || c->glm4_moe)
		rv = ref_cfg_fam(c, family, json, len, err);
	else if (c->gemma > 0)
		rv = ref_cfg_gemma(c, json, len, err);
	else if (c->kind != REF_BERT)
		rv = plain_rope(c, arch, f, json, len, err);
	if (rv == WT_OK)
		rv = read_after(c, family, json, len, err);
	if (rv == WT_OK)
		rv = read_addons(c, arch, json, len, err);
	return rv != WT_OK ? rv : check_reals(c, err);
}

bool ref_layer_is_moe(const ref_cfg *c, int64_t i)
{
	if (c->lfm2_moe) /* Lfm2MoeDecoderLayer: dense below num_dense_layers */
		return i >= c->first_dense;
	if (c->longcat || c->minicpm3) /* LongCat: its shortcut MoE beside the dense MLPs */
		return false;
	if (c->nh) /* Nemotron-H's "E" layers (nemotron_h.c) */
		return ref_l4_bit(c->nh_moe, i);
	if (c->ernie) /* Ernie4_5_MoeDecoderLayer */
		return c->kind == REF_DEEPSEEK && c->E > 0 && (i + 1) % c->moe_every == 0 &&
		       i >= c->moe_start && i <= c->moe_end;
	if (c->jamba) /* expert_layer_period / _offset (ckpt.c), as the planner reads them */
		return c->kind != REF_DENSE && ref_l4_bit(c->l4_moe, i);
	if (c->llama4 || c->mimo_v2) /* moe_layers (Llama 4: or interleave_moe_layer_step), as
	                              * the planner reads them; MiMo-V2-Flash's moe_layer_freq */
		return c->kind != REF_DENSE && ref_l4_bit(c->l4_moe, i);
	if (c->step3) /* moe_layers_enum (step3.c) */
		return ref_l4_bit(c->l4_moe, i);
	if (c->kind == REF_DENSE || c->kind == REF_BERT)
		return false;
	if (c->arctic) /* ArcticMoE: (i + 1) % moe_layer_frequency == 0 */
		return (i + 1) % c->sparse_step == 0;
	if (c->kind == REF_MIXTRAL)
		return true;
	if (c->kind == REF_DEEPSEEK)
		return i >= c->first_dense && i % c->layer_freq == 0;
	if (i >= 0 && i < 64 && ((c->mlp_only_mask >> i) & 1u))
		return false;
	return (i + 1) % c->sparse_step == 0;
}

void ref_moe_prefix(const ref_cfg *c, int64_t i, char *buf, size_t cap)
{
	snprintf(buf, cap, "model.layers.%lld.%s", (long long)i,
	         c->kind == REF_MIXTRAL && !c->lfm2_moe && !c->minicpm ? "block_sparse_moe."
	                                                               : ref_ffn_module(c));
}

size_t ref_out_rows(const ref_cfg *c, size_t n_tok)
{
	return c->kind == REF_BERT && ((!c->roberta && !c->modernbert && !c->bt_tok && !c->brope) ||
	                               c->rb_cls || c->mb_cls || c->br_cls)
	           ? n_tok + 1
	           : n_tok;
}

size_t ref_out_count(const ref_cfg *c, size_t n_tok)
{
	if (c->kind == REF_BERT)
		return ref_out_rows(c, n_tok) * (size_t)(c->bt_splade ? c->V : c->hid);
	return n_tok * (size_t)(c->dec_cls ? c->n_labels : c->dec_emb ? c->hid : c->V);
}
