/*
 * ckpt.c — the reference forward pass over a checkpoint and over the ranks the
 * planner produces from it (ckpt.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "loader/config_int.h"
#include "loader/loader_mistral.h"
#include "reference/ckpt.h"
#include "reference/decilm.h"
#include "reference/mimo_v2.h"
#include "reference/step3.h"
#include "reference/reference_int.h"

/*
 * The linear-attention layers of a hybrid as a bit mask (REF_L4_MAX_LAYERS bits): layer i is
 * one when layer_types[i] is "linear_attention", else (no layer_types) when whether every
 * divides i + 1 is at_multiple (Qwen3-Next: the full_attention_interval'th layers attend
 * fully; MiniMax: every second layer is linear). A layer_types list of another
 * length than num_hidden_layers or with another type is WT_ECORRUPT, as transformers'
 * layer_type_validation refuses it; more layers than the mask holds WT_EUNSUPPORTED naming
 * who.
 */
static int linear_layer_mask(const ckpt_config *cc, const ref_cfg *c, int64_t every,
                             bool at_multiple, const char *who, uint64_t *mask, wt_errbuf *err)
{
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers; the reference handles %s up to %d",
		                 (long long)c->L, who, REF_L4_MAX_LAYERS);
	if (cc->has_layer_types && (int64_t)cc->n_layer_types != c->L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types has %zu entries but num_hidden_layers "
		                 "is %lld; give one type per layer",
		                 cc->n_layer_types, (long long)c->L);
	for (int64_t i = 0; i < c->L; i++) {
		bool lin = ((i + 1) % every == 0) == at_multiple;
		if (cc->has_layer_types) {
			uint8_t t = cc->layer_types[i];
			if (t != CKPT_LAYER_LINEAR_ATTN && t != CKPT_LAYER_FULL_ATTN)
				return wt_seterr(err, WT_ECORRUPT,
				                 "config.json: layer_types[%lld] is neither "
				                 "\"linear_attention\" nor \"full_attention\"",
				                 (long long)i);
			lin = t == CKPT_LAYER_LINEAR_ATTN;
		}
		if (lin)
			mask[i / 64] |= 1ull << (i % 64);
	}
	return WT_OK;
}

/*
 * Qwen3-Next's linear-attention sizes and layers as the planner reads them
 * (shardmap/family_qwen3_next.c): layer i is linear attention when layer_types[i] is
 * "linear_attention", or without layer_types when (i + 1) % full_attention_interval != 0
 * (Qwen3NextConfig's 4 when absent). A layer_types list of another length than
 * num_hidden_layers or with another type is WT_ECORRUPT, as transformers'
 * layer_type_validation refuses it; more layers than the mask holds WT_EUNSUPPORTED.
 */
static int q3n_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->lin_hk = cc->lin_num_k_heads;
	c->lin_hv = cc->lin_num_v_heads;
	c->lin_dk = cc->lin_k_head_dim;
	c->lin_dv = cc->lin_v_head_dim;
	c->lin_kconv = cc->lin_conv_kernel;
	int64_t n = cc->full_attention_interval > 0 ? cc->full_attention_interval : 4;
	return linear_layer_mask(cc, c, n, false, "Qwen3-Next", c->q3n_linear, err);
}

/*
 * LFM2's MLP size, conv and layers as the planner reads them (shardmap/family_lfm2.c): the
 * size by Lfm2MLP's rule (shardmap_lfm2_ff_dim); layer i is a short-conv layer when
 * layer_types[i] is "conv", else (no layer_types) when i is not in full_attn_idxs (absent:
 * every layer attends). A layer_types list of another length or with another type is
 * WT_ECORRUPT, more layers than the mask holds WT_EUNSUPPORTED.
 */
static int lfm2_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->I = shardmap_lfm2_ff_dim(cc, NULL);
	c->lfm2_kconv = cc->lfm2_conv_l_cache;
	c->lfm2_conv_bias = cc->lfm2_conv_bias;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers; the reference handles LFM2 up to %d",
		                 (long long)c->L, REF_L4_MAX_LAYERS);
	if (cc->has_layer_types && (int64_t)cc->n_layer_types != c->L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types has %zu entries but num_hidden_layers "
		                 "is %lld; give one type per layer",
		                 cc->n_layer_types, (long long)c->L);
	for (int64_t i = 0; i < c->L; i++) {
		bool conv = cc->has_full_attn_idxs;
		for (size_t k = 0; k < cc->n_full_attn_idxs; k++)
			conv = conv && cc->full_attn_idxs[k] != i;
		if (cc->has_layer_types) {
			uint8_t t = cc->layer_types[i];
			if (t != CKPT_LAYER_CONV && t != CKPT_LAYER_FULL_ATTN)
				return wt_seterr(
				    err, WT_ECORRUPT,
				    "config.json: layer_types[%lld] is neither \"conv\" "
				    "nor \"full_attention\"",
				    (long long)i);
			conv = t == CKPT_LAYER_CONV;
		}
		if (conv)
			c->lfm2_conv[i / 64] |= 1ull << (i % 64);
	}
	return WT_OK;
}

/*
 * Granite 4.0's Mamba sizes and layers as the planner reads them
 * (shardmap/family_granite4.c): layer i is Mamba when layer_types[i] is "mamba" (the list
 * required: transformers 4.57.1 builds no model without it); mamba_d_head
 * "auto" (-1) is mamba_expand * hidden_size / mamba_n_heads. A layer_types list of another
 * length or with another type, or heads x head size other than the expanded width, is
 * WT_ECORRUPT as the config class refuses it; more layers than the mask holds
 * WT_EUNSUPPORTED. Bamba (bamba true): layer i is Mamba unless attn_layer_indices lists it
 * (BambaConfig.layers_block_type).
 */
static int g4_layers(const ckpt_config *cc, ref_cfg *c, bool bamba, wt_errbuf *err)
{
	int64_t im = cc->mamba_expand > 0 ? cc->mamba_expand * cc->hidden_size : -1;
	if (c->fh1 && cc->mamba_d_ssm > 0) /* Falcon-H1's mamba_d_ssm: the mixer's width */
		im = cc->mamba_d_ssm;
	c->m_heads = cc->mamba_n_heads;
	c->m_groups = cc->mamba_n_groups;
	c->m_state = cc->mamba_d_state;
	c->m_conv = cc->mamba_d_conv;
	c->m_dh = cc->mamba_d_head > 0 ? cc->mamba_d_head : c->m_heads > 0 ? im / c->m_heads : -1;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers; the reference handles Granite 4.0 up "
		                 "to %d",
		                 (long long)c->L, REF_L4_MAX_LAYERS);
	if (bamba) { /* Bamba: Mamba unless attn_layer_indices lists the layer */
		for (int64_t i = 0; i < c->L; i++) {
			bool mamba = true;
			for (size_t k = 0; cc->has_full_attn_idxs && k < cc->n_full_attn_idxs; k++)
				mamba = mamba && cc->full_attn_idxs[k] != i;
			if (mamba)
				c->g4_mamba[i / 64] |= 1ull << (i % 64);
		}
		return c->m_heads > 0 && c->m_dh * c->m_heads != im
		           ? wt_seterr(err, WT_ECORRUPT,
		                       "config.json: mamba_n_heads %lld x mamba_d_head %lld is not "
		                       "mamba_expand * hidden_size %lld",
		                       (long long)c->m_heads, (long long)c->m_dh, (long long)im)
		           : WT_OK;
	}
	bool typed = cc->has_layer_types && cc->n_layer_types > 0;
	if (!typed)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types is missing or empty; Granite 4.0 needs "
		                 "one of \"mamba\" / \"attention\" per layer");
	if ((int64_t)cc->n_layer_types != c->L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types has %zu entries but num_hidden_layers "
		                 "is %lld; give one type per layer",
		                 cc->n_layer_types, (long long)c->L);
	bool any = false;
	for (int64_t i = 0; i < c->L; i++) {
		bool mamba = true;
		if (typed) {
			uint8_t t = cc->layer_types[i];
			if (t != CKPT_LAYER_MAMBA && t != CKPT_LAYER_ATTN)
				return wt_seterr(
				    err, WT_ECORRUPT,
				    "config.json: layer_types[%lld] is neither \"mamba\" "
				    "nor \"attention\"",
				    (long long)i);
			mamba = t == CKPT_LAYER_MAMBA;
		}
		if (mamba)
			c->g4_mamba[i / 64] |= 1ull << (i % 64);
		any = any || mamba;
	}
	if (any && c->m_heads > 0 && c->m_dh * c->m_heads != im)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: mamba_n_heads %lld x mamba_d_head %lld is not "
		                 "mamba_expand * hidden_size %lld",
		                 (long long)c->m_heads, (long long)c->m_dh, (long long)im);
	return WT_OK;
}

/*
 * MiniMax's layer kinds as the planner reads them (shardmap/family_minimax.c): layer i is a
 * lightning-attention layer when layer_types[i] is "linear_attention", else (no
 * layer_types) when i is odd (MiniMaxConfig's alternation). A layer_types list of another
 * length or with another type is WT_ECORRUPT, more layers than the mask holds
 * WT_EUNSUPPORTED.
 */
static int minimax_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	return linear_layer_mask(cc, c, 2, true, "MiniMax", c->mm_lin, err); /* odd layers */
}

/*
 * The reference configuration of a checkpoint: the fields the planner reads
 * come from the loader's parse (cc, loader/config.c) exactly as shardmap_plan
 * sees them — one parser for both, a Qwen2-VL `text_config` overlay
 * included — and the reference-only ones from the config.json text
 * (ref_cfg_finish, which lays text_config over the top level the same
 * way).
 */
/*
 * Llama 4's sizes and MoE layers as the planner reads them (shardmap/family_llama4.c):
 * dense layers' MLP intermediate_size_mlp (absent: Llama4TextConfig's 16384, used only
 * when a layer is dense, which the planner then refuses), experts and the shared expert
 * intermediate_size; layer i is MoE when it is in moe_layers, else in range(step - 1,
 * L, step) of interleave_moe_layer_step, and never without experts.
 */
static void llama4_dims(const ckpt_config *cc, ref_cfg *c)
{
	c->I = cc->intermediate_size_mlp > 0 ? cc->intermediate_size_mlp : 16384;
	c->Ie = c->Is = cc->intermediate_size;
	int64_t step = cc->interleave_moe_layer_step > 0 ? cc->interleave_moe_layer_step : 1;
	for (int64_t i = 0; cc->num_experts > 0 && i < c->L && i < REF_L4_MAX_LAYERS; i++) {
		bool moe = i >= step - 1 && (i - (step - 1)) % step == 0;
		if (cc->has_moe_layers) {
			moe = false;
			for (size_t k = 0; k < cc->n_moe_layers; k++)
				moe = moe || cc->moe_layers[k] == i;
		}
		if (moe)
			c->l4_moe[i / 64] |= 1ull << (i % 64);
	}
}

/*
 * Jamba's Mamba sizes and layers as the planner reads them (shardmap/family_jamba.c):
 * Im = mamba_expand * hidden_size (Mamba's: intermediate_size, family_mamba.c), mamba_dt_rank
 * "auto" (-1) = ceil(hidden_size / 16); layer i is Mamba unless i % attn_layer_period ==
 * attn_layer_offset, MoE when num_experts > 1 and i % expert_layer_period == expert_layer_offset
 * (JambaConfig's layers_block_type and layers_num_experts; the planner refuses periods and offsets
 * that do not fit).
 */
static int jb_layers(const ckpt_config *cc, ref_cfg *c, bool mamba, wt_errbuf *err)
{
	c->m_inner = mamba                  ? cc->intermediate_size /* Mamba's */
	             : cc->mamba_expand > 0 ? cc->mamba_expand * cc->hidden_size
	                                    : -1;
	c->m_rank = cc->mamba_dt_rank > 0 ? cc->mamba_dt_rank : (cc->hidden_size + 15) / 16;
	c->m_state = cc->mamba_d_state;
	c->m_conv = cc->mamba_d_conv;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers; the reference handles Jamba up to %d",
		                 (long long)c->L, REF_L4_MAX_LAYERS);
	int64_t ap = cc->jamba_attn_period, ep = cc->jamba_expert_period;
	for (int64_t i = 0; i < c->L; i++) {
		if (ap <= 0 || i % ap != cc->jamba_attn_offset)
			c->g4_mamba[i / 64] |= 1ull << (i % 64);
		if (cc->num_experts > 1 && ep > 0 && i % ep == cc->jamba_expert_offset)
			c->l4_moe[i / 64] |= 1ull << (i % 64);
	}
	return WT_OK;
}

/* Mllama: the layers of text_config.cross_attention_layers (the loader's full_attn_idxs), which
 * MllamaTextModel skips on text tokens (no cross-attention states). */
static int ml_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->mllama = true;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers; the reference handles Mllama up to %d",
		                 (long long)c->L, REF_L4_MAX_LAYERS);
	for (size_t k = 0; k < cc->n_full_attn_idxs; k++) {
		int64_t i = cc->full_attn_idxs[k];
		if (i >= 0 && i < c->L)
			c->ml_cross[i / 64] |= 1ull << (i % 64);
	}
	return WT_OK;
}

/* The families whose config.json the reference reads with their own key names laid onto the
 * ones it reads (ref_json_keys): DBRX's and MPT's nested attn_config / ffn_config (cfg_dbrx.c),
 * ChatGLM's, EXAONE's, Qwen's and TeleChat2's names. */
static const struct {
	const char *fam;
	int (*keys)(json_t *, wt_errbuf *);
} json_keys[] = {
    {"dbrx", config_dbrx_keys},
    {"mpt", config_mpt_keys},
    {"chatglm", ref_chatglm_keys},
    {"exaone", config_exaone_keys},
    /* Qwen's first generation: QWenConfig's names (loader/config_qwen.c) */
    {"qwen", config_qwen_keys},
    /* TeleChat2: Telechat2Config's names (loader/config_telechat2.c) */
    {"telechat2", config_telechat2_keys},
    /* MiniMax-Text-01 / -M1's remote names (loader/config_minimax01.c; transformers'
     * MiniMaxConfig left as it is) */
    {"minimax", config_minimax01_keys},
    {"minimax_vl_01", config_minimax_vl_flat}, /* text_config over the top, the same */
    /* Code World Model's derived keys (loader/config_cwm.c; other model_types untouched) */
    {"ministral", config_cwm_keys},
    {"step3_text", config_step3_text_keys}, /* moe_top_k as num_experts_per_tok */
    {"mimo_v2_flash", config_mimo_v2_flash_keys},
};

/* The sizes and MoE / MLA / quantization keys ckpt_config gives, as the reference names
 * them. */
static int copy_sizes(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->hid = cc->hidden_size;
	c->H = cc->num_attention_heads;
	c->KV = cc->num_key_value_heads;
	c->d = cc->head_dim;
	c->I = cc->intermediate_size;
	c->V = cc->vocab_size;
	c->L = cc->num_hidden_layers;
	c->tied = shardmap_tied(cc);
	c->pad_id = cc->rob_pad;
	c->n_labels = cc->rob_num_labels;
	c->mb_every = cc->mb_every;
	c->mb_window = cc->mb_local / 2;
	c->mb_theta = cc->mb_global_theta;
	c->mb_theta_local = cc->mb_local_theta;
	c->mb_eps = cc->mb_norm_eps;
	c->mb_attn_bias = cc->attention_bias;
	c->mb_mlp_bias = cc->mlp_bias;
	c->mb_norm_bias = cc->mb_norm_bias;
	c->mb_cls_bias = cc->mb_cls_bias;
	c->mb_pool_mean = cc->mb_pool == 1;
	c->mb_cls_gelu = cc->mb_cls_gelu;
	c->E = cc->num_experts;
	c->Ie = cc->moe_intermediate_size > 0 ? cc->moe_intermediate_size : cc->intermediate_size;
	/* shared experts as the planner derives them (shardmap/plan.c derive_dims) */
	if (cc->shared_expert_intermediate_size > 0)
		c->Is = cc->shared_expert_intermediate_size;
	else if (cc->n_shared_experts > 0)
		c->Is = c->Ie * cc->n_shared_experts;
	c->sparse_step = cc->decoder_sparse_step;
	for (size_t i = 0; i < cc->n_mlp_only_layers; i++) {
		int64_t x = cc->mlp_only_layers[i];
		if (x >= 64 && x < c->L)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: mlp_only_layers lists layer %lld; the "
			                 "reference handles layers below 64",
			                 (long long)x);
		if (x >= 0 && x < 64)
			c->mlp_only_mask |= 1ull << x;
	}
	c->first_dense = cc->first_k_dense_replace;
	/* ERNIE 4.5 MoE: moe_layer_end_index -1 is the last layer, as Ernie4_5_MoeConfig sets */
	c->moe_start = cc->moe_layer_start_index;
	c->moe_end = cc->moe_layer_end_index < 0 ? c->L - 1 : cc->moe_layer_end_index;
	c->moe_every = cc->moe_layer_interval;
	c->layer_freq = cc->moe_layer_freq;
	c->q_lora = cc->q_lora_rank;
	c->kv_lora = cc->kv_lora_rank;
	c->nope = cc->qk_nope_head_dim;
	c->rope = cc->qk_rope_head_dim;
	c->vhd = cc->v_head_dim;
	c->block[0] = cc->quant_block[0] > 0 ? cc->quant_block[0] : 128;
	c->block[1] = cc->quant_block[1] > 0 ? cc->quant_block[1] : 128;
	return WT_OK;
}

/* The per-layer patterns of family fam: which layers are Mamba, attention, MoE or
 * virtual, read from the config's own keys. */
static int family_layers(const ckpt_config *cc, const char *fam, ref_cfg *c, wt_errbuf *err)
{
	int rv = WT_OK;
	if (fam == NULL)
		return WT_OK;
	if (strcmp(fam, "llama4") == 0 || strcmp(fam, "llama4_text") == 0)
		llama4_dims(cc, c);
	if (strcmp(fam, "qwen3_next") == 0)
		rv = q3n_layers(cc, c, err);
	if (strcmp(fam, "step3_text") == 0)
		rv = ref_step3_layers(cc, c, err);
	if (strcmp(fam, "lfm2") == 0 || strcmp(fam, "lfm2_vl") == 0 || strcmp(fam, "lfm2_moe") == 0)
		rv = lfm2_layers(cc, c, err);
	if (strcmp(fam, "lfm2_moe") == 0) { /* num_dense_layers, use_expert_bias */
		c->first_dense = cc->first_k_dense_replace;
		c->lfm2_bias = cc->lfm2_expert_bias;
	}
	if (strcmp(fam, "minimax") == 0 || strcmp(fam, "minimax_vl_01") == 0)
		rv = minimax_layers(cc, c, err);
	if (strcmp(fam, "granitemoehybrid") == 0)
		rv = g4_layers(cc, c, false, err);
	if (strcmp(fam, "bamba") == 0)
		rv = g4_layers(cc, c, true, err);
	if (strcmp(fam, "falcon_h1") == 0) { /* every layer Mamba (and attention) */
		c->fh1 = true;
		c->m_rms_norm = cc->mamba_rms_norm;
		rv = g4_layers(cc, c, true, err);
	}
	if (strcmp(fam, "jamba") == 0 || strcmp(fam, "jamba_cls") == 0)
		rv = jb_layers(cc, c, false, err);
	if (strcmp(fam, "gemma3n_text") == 0)
		rv = ref_g3n_layers(cc, c, err);
	if (strcmp(fam, "zamba2") == 0 && (rv = ref_z2_layers(cc, c, err)) == WT_OK)
		rv = g4_layers(cc, c, true, err); /* every layer Mamba, the shared blocks */
	if (strcmp(fam, "mamba2") == 0) {         /* every layer Mamba, no MLP */
		c->I = cc->mamba_expand * cc->hidden_size;
		rv = g4_layers(cc, c, true, err);
	}
	if (strcmp(fam, "nemotron_h") == 0) /* one mixer per layer */
		rv = ref_nh_layers(cc, c, err);
	if (strcmp(fam, "longcat_flash") == 0) { /* two virtual layers each */
		c->L = 2 * cc->num_hidden_layers;
		c->n_zero = cc->zero_expert_num;
	}
	if (strcmp(fam, "mamba") == 0 || strcmp(fam, "falcon_mamba") == 0)
		rv = jb_layers(cc, c, true, err);
	if (strcmp(fam, "plamo2") == 0) /* is_mamba's layers (plamo2.c) */
		rv = ref_p2_layers(cc, c, err);
	if (strcmp(fam, "mllama") == 0)
		rv = ml_layers(cc, c, err);
	return rv;
}

int ref_cfg_from_ckpt(const ckpt_config *cc, const char *json, size_t len, ref_cfg *out,
                      wt_errbuf *err)
{
	ref_cfg c;
	memset(&c, 0, sizeof(c));
	int rv = copy_sizes(cc, &c, err);
	const char *fam = shardmap_family_of(cc);
	if (rv == WT_OK)
		rv = family_layers(cc, fam, &c, err);
	if (rv == WT_OK && fam != NULL && strcmp(fam, "nemotron_nas") == 0)
		rv = ref_dl_layers(cc, json, len, &c, err); /* block_configs (decilm.c) */
	if (rv == WT_OK && fam != NULL && strcmp(fam, "mimo_v2_flash") == 0)
		rv = ref_mv_layers(cc, json, len, &c, err); /* hybrid_layer_pattern (mimo_v2.c) */
	char *flat = NULL; /* the families whose own key names the reference reads renamed */
	for (size_t i = 0;
	     rv == WT_OK && fam != NULL && i < sizeof(json_keys) / sizeof(json_keys[0]); i++)
		if (strcmp(fam, json_keys[i].fam) == 0)
			rv = ref_json_keys(json, len, json_keys[i].keys, &flat, &len, err);
	if (rv == WT_OK && fam != NULL &&
	    (strcmp(fam, "qwen2_5_omni") == 0 || strcmp(fam, "qwen3_omni_moe") == 0))
		rv = ref_omni_json(json, len, &flat, &len, err); /* thinker_config's */
	if (rv == WT_OK)
		rv = ref_cfg_finish(&c, fam, cc->architecture, flat ? flat : json, len, err);
	free(flat);
	if (rv == WT_OK)
		*out = c;
	return rv;
}
/* ref_cfg_from_ckpt over config.json text alone (tests). */
int ref_cfg_parse_json(const char *json, size_t len, ref_cfg *out, wt_errbuf *err)
{
	ckpt_config cc;
	int rv = ckpt_config_parse(json, len, &cc, err);
	if (rv == WT_OK)
		rv = ref_cfg_from_ckpt(&cc, json, len, out, err);
	ckpt_config_clear(&cc);
	return rv;
}

/* Gemma 3 multimodal keeps its language model under language_model., Qwen2.5-Omni under
 * thinker. (with its towers and speech generator), Idefics3 / SmolVLM
 * under model.text_model. (docs/format.md 2.7): both paths read it under the text model's
 * names (model.*, lm_head.*), as the Qwen2-VL language model is read; the vision tower's
 * tensors are loaded, unused. RoBERTa's sequence classifiers keep their encoder under
 * roberta.: read under RobertaModel's names; BERT's heads under bert.: BertModel's names. The
 * decoder embedding models (base, the *_emb families) name the decoder without model.: read
 * under the causal LM's names. buf holds a rewritten name. */
static const char *lm_name(const char *name, bool base, char *buf, size_t cap)
{
	static const char *const bare[] = {"embed_tokens.", "layers.", "norm."};
	for (size_t i = 0; base && i < sizeof(bare) / sizeof(bare[0]); i++)
		if (strncmp(name, bare[i], strlen(bare[i])) == 0 &&
		    (size_t)snprintf(buf, cap, "model.%s", name) < cap)
			return buf;
	/* prefixes dropped: RoBERTa's sequence classifiers' encoder, BERT's and GTE's heads'
	 * encoder, Qwen2.5-Omni's thinker (model.*, lm_head.*), the Gemma 3 / LLaVA-style LM */
	static const char *const drop[] = {"roberta.", "bert.", "new.", "thinker.",
	                                   "language_model."};
	for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
		if (strncmp(name, drop[k], strlen(drop[k])) == 0)
			return name + strlen(drop[k]);
	static const char tm[] = "model.text_model.";
	if (strncmp(name, tm, sizeof(tm) - 1) == 0 &&
	    (size_t)snprintf(buf, cap, "model.%s", name + sizeof(tm) - 1) < cap)
		return buf;
	return name;
}

/* Is c's family a decoder embedding model saved as a base model (llama_emb, ...)? */
static bool base_names(const ckpt *c)
{
	const char *f = shardmap_family_of(ckpt_get_config(c));
	size_t n = f != NULL ? strlen(f) : 0;
	return n > 4 && strcmp(f + n - 4, "_emb") == 0;
}

/* Mistral's native wq / wk (loader_mistral.h): *buf's rows de-interleaved per head into
 * transformers' order (as the planner's SM_SRC_ROPE load); *buf replaced. */
static int rope_rows(const ckpt_tensor *t, int64_t heads, void **buf, wt_errbuf *err)
{
	int64_t rows = t->ndim == 2 ? t->shape[0] : 0;
	if (rows <= 0 || rows % (2 * heads) != 0)
		return wt_seterr(err, WT_EINVAL,
		                 "tensor '%s': rows are not %lld heads of RoPE pairs", t->name,
		                 (long long)heads);
	uint8_t *hf = malloc(t->nbytes ? t->nbytes : 1);
	if (hf == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	kern_deinterleave_rows(hf, *buf, heads, rows / heads / 2,
	                       (size_t)(t->nbytes / (uint64_t)rows));
	free(*buf);
	*buf = hf;
	return WT_OK;
}

/* Read every checkpoint tensor into ck under the names the family's rules use
 * (shardmap_canonical_name: a transformers 5.x checkpoint's names become the
 * 4.x ones), and the configuration into cfg (ref_cfg_from_ckpt). */
int ref_load_ckpt(const ckpt *c, ref_cfg *cfg, ref_set *ck, wt_errbuf *err)
{
	size_t len = 0;
	const char *json = ckpt_config_json(c, &len);
	int rv = ref_cfg_from_ckpt(ckpt_get_config(c), json, len, cfg, err);
	if (rv != WT_OK)
		return rv;
	ck->quant = WT_QUANT_NONE;
	ck->block[0] = cfg->block[0];
	ck->block[1] = cfg->block[1];
	ck->fp8_rows = ckpt_get_config(c)->quant == CKPT_QUANT_FBGEMM_FP8 ||
	               ckpt_get_config(c)->quant == CKPT_QUANT_CT_FP8;
	ck->fp8_blocks_ct = ckpt_get_config(c)->quant_block_ct;
	bool base = base_names(c);
	for (size_t i = 0; i < ckpt_n_tensors(c) && rv == WT_OK; i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		void *buf = malloc(t->nbytes ? t->nbytes : 1);
		if (buf == NULL)
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
		char cbuf[512], wbuf[512], lbuf[512];
		const char *name = shardmap_canonical_name(c, t->name, cbuf, sizeof(cbuf));
		float *deq = NULL; /* compressed-tensors weight: its F32 values as X.weight */
		int64_t dshape[2];
		if (name != NULL)
			rv = shardmap_ct_weight_f32(c, i, wbuf, sizeof(wbuf), &deq, dshape, err);
		if (deq != NULL) {
			rv = ref_set_add(ck, wbuf, WT_F32, 2, dshape, deq,
			                 (uint64_t)(dshape[0] * dshape[1]) * 4u, err);
			free(deq);
			free(buf);
			continue;
		}
		if (rv == WT_OK)
			rv = ckpt_read(c, t, 0, buf, t->nbytes, err);
		if (rv == WT_OK && ckpt_rope_heads(c, i) > 0) /* Mistral's native wq / wk */
			rv = rope_rows(t, ckpt_rope_heads(c, i), &buf, err);
		if (rv == WT_OK && name == NULL)
			rv = wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
		if (rv == WT_OK)
			rv = ref_set_add(ck, lm_name(name, base, lbuf, sizeof(lbuf)), t->dtype,
			                 t->ndim, t->shape, buf, t->nbytes, err);
		free(buf);
	}
	return rv;
}

typedef struct ref_emit_ctx {
	const sm_plan *p;
	ref_set *ranks;
	bool base; /* base_names: the runtime names lack model. */
} ref_emit_ctx;

static int ref_emit(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t nbytes,
                    wt_errbuf *err)
{
	ref_emit_ctx *e = ctx;
	const sm_out_info *t = shardmap_rank_tensor(e->p, rank, ix);
	if (t == NULL || nbytes != t->nbytes)
		return wt_seterr(
		    err, WT_ESHAPE, "rank %u tensor %zu: %llu bytes emitted, plan says %llu", rank,
		    ix, (unsigned long long)nbytes, (unsigned long long)(t ? t->nbytes : 0));
	char lbuf[512];
	return ref_set_add(&e->ranks[rank], lm_name(t->name, e->base, lbuf, sizeof(lbuf)), t->dtype,
	                   t->ndim, t->shape, bytes, nbytes, err);
}
/* Produce every rank of plan p into a new array of shardmap_n_ranks(p) sets (caller frees
 * with ref_free_ranks). */
int ref_load_ranks(const ckpt *c, const sm_plan *p, const wt_layout *l, ref_set **out,
                   wt_errbuf *err)
{
	uint32_t n = shardmap_n_ranks(p);
	ref_set *r = calloc(n ? n : 1, sizeof(*r));
	if (r == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %u rank sets", n);
	for (uint32_t i = 0; i < n; i++) {
		r[i].quant = l->quant;
		r[i].group = l->group_size;
	}
	ref_emit_ctx e = {p, r, base_names(c)};
	int rv = shardmap_produce(c, p, -1, ref_emit, &e, err);
	if (rv != WT_OK) {
		for (uint32_t i = 0; i < n; i++)
			ref_set_clear(&r[i]);
		free(r);
		return rv;
	}
	*out = r;
	return WT_OK;
}
void ref_free_ranks(ref_set *r, uint32_t n)
{
	for (uint32_t i = 0; r && i < n; i++)
		ref_set_clear(&r[i]);
	free(r);
}
/*
 * The budget a layout is held to, with its reason in *why: exact
 * (REF_TOL_F32) when the rank tensors hold the checkpoint's values
 * bit for bit (same float dtype, F32 output, FP8-block or fbgemm_fp8 fp8-channel
 * pass-through; an MXFP4
 * source's values in BF16 too), the rounding budget when an unquantized output
 * narrows them, else the scheme's (REF_BUDGET_MX_* for an MXFP4 source).
 */
double ref_layout_budget(ref_set *ck, const wt_layout *l, const char **why)
{
	bool fp8 = false, blocks = false, wscale = false, shapes = false, groups = false,
	     chan = false, mx = false, lin = false;
	static const char qkvz[] = ".linear_attn.in_proj_qkvz.weight",
	                  p2[] = ".mixer.bcdt_proj.weight";
	wt_dtype src = WT_DTYPE_INVALID;
	for (size_t i = 0; i < ck->n; i++) {
		const ref_tensor *t = &ck->t[i];
		size_t len = strlen(t->name);
		fp8 = fp8 || t->dtype == WT_F8_E4M3;
		/* MXFP4 (docs/format.md 4.6): X_blocks U8 beside X_scales */
		mx = mx ||
		     (t->dtype == WT_U8 && len > 7 && strcmp(t->name + len - 7, "_blocks") == 0);
		/* a gated delta net (Qwen3-Next's linear attention), PLaMo 2's Mamba mixer */
		lin = lin ||
		      (len > sizeof(qkvz) - 1 &&
		       strcmp(t->name + len - (sizeof(qkvz) - 1), qkvz) == 0) ||
		      (len > sizeof(p2) - 1 && strcmp(t->name + len - (sizeof(p2) - 1), p2) == 0);
		blocks = blocks || (len > 10 && strcmp(t->name + len - 10, "_scale_inv") == 0);
		wscale = wscale || (len > 13 && strcmp(t->name + len - 13, ".weight_scale") == 0);
		/* int4: group scales [N, K/G > 1], or packed (weight_shape beside it) without
		 * per-channel scales [N, 1] (8-bit pack-quantized has those) */
		bool sc2 =
		    len > 13 && strcmp(t->name + len - 13, ".weight_scale") == 0 && t->ndim == 2;
		shapes = shapes || (len > 13 && strcmp(t->name + len - 13, ".weight_shape") == 0);
		groups = groups || (sc2 && t->shape[1] > 1);
		chan = chan || (sc2 && t->shape[1] == 1);
		if (strcmp(t->name, "model.embed_tokens.weight") == 0 ||
		    strcmp(t->name, "embeddings.word_embeddings.weight") == 0)
			src = t->dtype;
	}
	/* compressed-tensors' block scales are weight_scale (the config says so) */
	blocks = blocks || ck->fp8_blocks_ct;
	if (l->quant == WT_QUANT_FP8_BLOCK && blocks && !l->requant_allow) {
		*why = "fp8-block pass-through: exact up to float32 summation order";
		return REF_TOL_F32;
	}
	if (l->quant == WT_QUANT_FP8_CHANNEL && ck->fp8_rows) { /* docs/format.md 4.7 */
		*why = "fbgemm_fp8 fp8-channel pass-through: exact up to float32 summation order";
		return REF_TOL_F32;
	}
	/* compressed-tensors (docs/format.md 4.5): weight_scale without FP8 weights; int4 has
	 * weight_shape. Pass-through keeps the values the full path dequantized. */
	bool ct = wscale && !fp8, i4 = groups || (shapes && !chan);
	if (ct && l->quant == (i4 ? WT_QUANT_INT4_GROUP : WT_QUANT_INT8_CHANNEL) &&
	    !l->requant_allow) {
		*why = "compressed-tensors pass-through: exact up to float32 summation order";
		return REF_TOL_F32;
	}
	fp8 = fp8 || ct; /* a quantized source: unquantized outputs default to BF16 */
	if (l->quant != WT_QUANT_NONE && mx) {
		*why = "quantization budget of the scheme on an MXFP4 source";
		return ref_budget_mx(l->quant);
	}
	if (l->quant != WT_QUANT_NONE && lin) {
		*why =
		    "quantization budget of the scheme for a model with gated-delta-net layers or "
		    "PLaMo 2's Mamba mixers";
		return ref_budget_lin(l->quant);
	}
	if (l->quant != WT_QUANT_NONE) {
		*why = "quantization budget of the scheme";
		return ref_budget(l->quant);
	}
	wt_dtype out = l->dtype == WT_DTYPE_INVALID ? (fp8 ? WT_BF16 : src) : l->dtype;
	if (out == WT_F32 || (!fp8 && out == src)) {
		*why = "float32 summation order only";
		return REF_TOL_F32;
	}
	*why = ct    ? "compressed-tensors checkpoint emitted as BF16/F16: rounding budget"
	       : fp8 ? "FP8 checkpoint emitted as BF16/F16: rounding budget"
	             : "narrower output dtype: rounding budget";
	return REF_BUDGET_ROUND;
}
/*
 * Plan and produce every rank of layout l (rank fields ignored), run both
 * paths on tokens and compare. WT_OK means the check RAN; res->pass says
 * whether the outputs agree within ref_layout_budget().
 */
int ref_verify(const ckpt *c, const wt_layout *l, const int64_t *tokens, size_t n_tok,
               ref_tamper_fn tamper, void *tctx, ref_result *res, wt_errbuf *err)
{
	ref_cfg cfg;
	ref_set ck = {0};
	ref_set *ranks = NULL;
	sm_plan *p = NULL;
	float *full = NULL, *sh = NULL;
	int64_t *routes = NULL;
	uint32_t n = 0;
	memset(res, 0, sizeof(*res));
	int rv = ref_load_ckpt(c, &cfg, &ck, err);
	if (rv == WT_OK)
		rv = shardmap_plan(c, l, &p, err);
	if (rv == WT_OK) {
		n = shardmap_n_ranks(p);
		rv = ref_load_ranks(c, p, l, &ranks, err);
	}
	if (rv != WT_OK)
		goto out;
	size_t n_out = ref_out_count(&cfg, n_tok);
	full = malloc(n_out * sizeof(float));
	sh = malloc(n_out * sizeof(float));
	/* quantized layouts follow the full path's expert choices (ref_forward_sharded) */
	if (l->quant != WT_QUANT_NONE && cfg.E > 0)
		routes = calloc((size_t)(cfg.L * cfg.topk) * n_tok, sizeof(int64_t));
	if (full == NULL || sh == NULL || (l->quant != WT_QUANT_NONE && cfg.E > 0 && !routes)) {
		rv = wt_seterr(err, WT_ENOMEM, "logits: out of memory");
		goto out;
	}
	if (tamper)
		tamper(tctx, ranks, n);
	if ((rv = ref_forward_full(&cfg, &ck, tokens, n_tok, full, routes, err)) != WT_OK)
		goto out;
	res->budget = ref_layout_budget(&ck, l, &res->why);
	res->n_ranks = n;
	res->n_tok = n_tok;
	res->width = (int64_t)(n_out / ref_out_rows(&cfg, n_tok));
	res->pass = true;
	for (uint32_t g = 0; g < l->ep_size; g++) {
		ref_diff d;
		if ((rv = ref_forward_sharded(&cfg, ranks, l, g, tokens, n_tok, routes, sh, err)))
			goto out;
		ref_compare(full, sh, n_out, &d);
		if (g == 0 || d.nonfinite || d.max_abs_diff > res->diff.max_abs_diff) {
			res->diff = d;
			res->worst_group = g;
		}
		if (!ref_within(&d, res->budget))
			res->pass = false;
	}
out:
	free(full);
	free(sh);
	free(routes);
	ref_free_ranks(ranks, n);
	ref_set_clear(&ck);
	shardmap_plan_free(p);
	return rv;
}

int ref_full_outputs(const ckpt *c, const int64_t *tokens, size_t n_tok, float **out, size_t *rows,
                     int64_t *width, wt_errbuf *err)
{
	ref_cfg cfg;
	ref_set ck = {0};
	*out = NULL;
	int rv = ref_load_ckpt(c, &cfg, &ck, err);
	if (rv != WT_OK)
		return rv;
	size_t n_out = ref_out_count(&cfg, n_tok);
	float *o = malloc(n_out * sizeof(float));
	if (o == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "logits: out of memory");
	else
		rv = ref_forward_full(&cfg, &ck, tokens, n_tok, o, NULL, err);
	ref_set_clear(&ck);
	if (rv != WT_OK) {
		free(o);
		return rv;
	}
	*rows = ref_out_rows(&cfg, n_tok);
	*width = (int64_t)(n_out / *rows);
	*out = o;
	return WT_OK;
}
