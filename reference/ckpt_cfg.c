/*
 * ckpt_cfg.c — the reference configuration of a checkpoint (ckpt.h: ref_cfg_from_ckpt,
 * ref_cfg_parse_json): the sizes, MoE / MLA / quantization keys and per-layer patterns
 * (Mamba, linear attention, MoE, cross-attention layers) from the loader's parse as the
 * planner reads them, and the families whose config.json the reference reads under their own
 * key names. The forward pass over a checkpoint and its ranks: ckpt.c.
 */
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
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
