/*
 * plan_cond.c — when a family rule applies: its condition at layer / block i (the layer
 * kinds, the config.json switches, the dims a tensor exists with), and the config.json key a
 * conditional tensor's presence follows, named in the planner's errors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shardmap/plan_int.h"
#include "shardmap/quant_mx.h"

/* Whether layer i is a MoE layer / a linear-attention (conv, Mamba) layer of the family. */
static bool moe_at(const sm_ctx *x, int64_t i)
{
	return x->fam->layer_is_moe && x->fam->layer_is_moe(x->cfg, i);
}

static bool linear_at(const sm_ctx *x, int64_t i)
{
	return x->fam->layer_is_linear && x->fam->layer_is_linear(x->cfg, i);
}

/* The conditions past the switch below: DeciLM's halves (a layer with attention / an MLP by the
 * family's layer_dims), else GPT-OSS's expert forms (shardmap_mx_cond). */
static bool other_cond(const sm_ctx *x, uint8_t cond, int64_t i)
{
	if (cond == SM_C_LATT || cond == SM_C_LMLP)
		return !x->ld || (cond == SM_C_LATT ? x->ld[i].attn : x->ld[i].mlp);
	if (cond == SM_C_LSINK)
		return x->ld != NULL && x->ld[i].sinks;
	return shardmap_mx_cond(x->cfg, cond);
}

/* cfg_switch's vision-tower, encoder-head and draft-model switches. */
static bool cfg_switch_more(const ckpt_config *c, uint8_t cond, bool *on)
{
	switch (cond) {
	case SM_C_VATTNB:
		*on = c->v_attn_bias;
		return true;
	case SM_C_VQKN:
		*on = c->v_qk_norm;
		return true;
	case SM_C_VLN:
		*on = c->v_norm_ln;
		return true;
	case SM_C_VMASK:
		*on = c->v_mask_token;
		return true;
	case SM_C_VPOS:
		*on = c->v_abs_pos;
		return true;
	case SM_C_VPOOL:
		*on = !c->v_mean_pool;
		return true;
	case SM_C_VHEAD:
	case SM_C_OVHEAD:
	case SM_C_BGHEAD:
		*on = c->v_use_head;
		return true;
	case SM_C_HCXPOS:
		*on = c->hcx_pos_emb;
		return true;
	case SM_C_HCXPRE:
		*on = c->hcx_prenorm;
		return true;
	case SM_C_EVTEMP:
		*on = c->ev_temporal_conv;
		return true;
	case SM_C_HCXPOST:
		*on = c->hcx_post_norm;
		return true;
	case SM_C_EAGLEFC:
		*on = c->eagle_aux;
		return true;
	case SM_C_QWEN3:
		*on = strcmp(c->lm_model_type, "qwen3") == 0 ||
		      strcmp(c->lm_model_type, "qwen3_moe") == 0;
		return true;
	case SM_C_NORMBIAS:
		*on = c->mb_norm_bias;
		return true;
	case SM_C_TTYPES:
		*on = c->rob_types > 0;
		return true;
	case SM_C_CLSBIAS:
		*on = c->mb_cls_bias;
		return true;
	case SM_C_VQKVB:
	case SM_C_IVQKVB:
		*on = c->v_attn_bias;
		return true;
	case SM_C_IVQKN:
		*on = c->v_qk_norm;
		return true;
	case SM_C_IVLN:
		*on = c->v_norm_ln;
		return true;
	case SM_C_OVQKVB:
		*on = c->v_attn_bias;
		return true;
	case SM_C_OVBIAS:
		*on = c->ov_use_bias;
		return true;
	case SM_C_DTBIAS:
		*on = c->v_attn_bias;
		return true;
	case SM_C_DTPOST:
		*on = c->dt_post_norm;
		return true;
	case SM_C_O25PE:
		*on = c->ov25_pe;
		return true;
	case SM_C_UVLNMID:
	case SM_C_UVLNPOST:
		*on = c->uv_ln_mid == (cond == SM_C_UVLNMID);
		return true;
	case SM_C_MDFCB:
		*on = c->medusa_fc_bias;
		return true;
	case SM_C_MDORIG:
	case SM_C_MDHEADS:
		*on = c->medusa_orig_lm_head == (cond == SM_C_MDORIG);
		return true;
	case SM_C_MDBLK:
		*on = true;
		return true;
	case SM_C_MDTMAP:
		*on = c->draft_vocab_size > 0 && c->draft_vocab_size < c->vocab_size;
		return true;
	default:
		return false;
	}
}

/* The conditions that are config.json switches alone (no layer kind): *on set and true, or
 * false when cond is not one of them. */
static bool cfg_switch(const ckpt_config *c, uint8_t cond, bool *on)
{
	switch (cond) {
	case SM_C_LMBIAS:
		*on = c->lm_head_bias;
		return true;
	case SM_C_QKNORM:
		*on = c->use_qk_norm;
		return true;
	case SM_C_QKLN:
		*on = c->qk_layernorm;
		return true;
	case SM_C_SANDWICH:
		*on = c->sandwich_norm;
		return true;
	case SM_C_GEMMA2:
		*on = strcmp(c->lm_model_type, "gemma2") == 0;
		return true;
	case SM_C_ATTNBIAS:
		*on = c->attention_bias;
		return true;
	case SM_C_OUTBIAS:
		*on = c->attention_out_bias;
		return true;
	case SM_C_MLPBIAS:
		*on = c->mlp_bias;
		return true;
	case SM_C_MMBIAS:
		*on = c->mm_projector_bias;
		return true;
	case SM_C_OPROJ:
		*on = c->opt_word_embed_proj_dim != c->hidden_size;
		return true;
	case SM_C_OFNORM:
		*on = c->opt_final_norm;
		return true;
	case SM_C_JWPE:
		*on = c->jais_wpe;
		return true;
	case SM_C_FLN2:
		*on = c->falcon_ln == 2;
		return true;
	case SM_C_FLN1:
		*on = c->falcon_ln == 1 || c->falcon_ln == 3;
		return true;
	case SM_C_FPOST:
		*on = c->falcon_ln == 3;
		return true;
	default:
		return cfg_switch_more(c, cond, on);
	}
}

bool shardmap_cond_holds(const sm_ctx *x, const sm_rule *r, int64_t i)
{
	bool on;
	switch (r->cond) {
	case SM_C_DENSE:
		return !moe_at(x, i);
	case SM_C_MOE:
		return moe_at(x, i);
	case SM_C_QLORA:
		return x->dm.q_lora_rank > 0;
	case SM_C_NOQLORA:
		return x->dm.q_lora_rank <= 0;
	case SM_C_SHARED:
		return x->dm.shared_inter > 0 && moe_at(x, i);
	case SM_C_FULLATT:
		return !linear_at(x, i);
	case SM_C_LINATT:
		return linear_at(x, i);
	case SM_C_CONVBIAS:
		return x->cfg->lfm2_conv_bias && linear_at(x, i);
	case SM_C_SHMLP:
		return x->dm.shared_inter > 0;
	case SM_C_FULLATTB:
		return x->cfg->attention_bias && !linear_at(x, i);
	case SM_C_MCONVB:
		return x->cfg->mamba_conv_bias && linear_at(x, i);
	case SM_C_LFMEB:
		return x->cfg->lfm2_expert_bias && moe_at(x, i);
	case SM_C_RBIAS:
		return x->cfg->router_expert_bias && moe_at(x, i);
	case SM_C_MPROJB:
		return x->cfg->mamba_proj_bias && linear_at(x, i);
	case SM_C_MNORM:
		return x->cfg->mamba_rms_norm && linear_at(x, i);
	case SM_C_ARES:
		return x->cfg->arctic_residual && moe_at(x, i);
	case SM_C_MBLATER:
		return i > 0;
	case SM_C_MBLATERB:
		return i > 0 && x->cfg->mb_norm_bias;
	case SM_C_MSTIE0:
		return i == 0 || !x->cfg->mlps_tied;
	case SM_C_MSTIE1:
		return i <= 1 || !x->cfg->mlps_tied;
	case SM_C_QFCROSS: /* qf_cross >= 1: the loader's minimum */
		return x->cfg->qf_cross > 0 && i % x->cfg->qf_cross == 0;
	case SM_C_Z2HYB:
	case SM_C_Z2HYBB:
	case SM_C_Z2BLK:
	case SM_C_Z2BLKB:
	case SM_C_Z2ATTAD:
		return shardmap_zamba2_cond(x->cfg, r->cond, i);
	default: /* the config switches, GPT-OSS's expert forms, Nemotron-H's, DeciLM's, SM_C_ALL */
		if (cfg_switch(x->cfg, r->cond, &on))
			return on;
		return r->cond >= SM_C_NHATT && r->cond <= SM_C_NHMLPB
		           ? shardmap_nemotron_h_cond(x->cfg, r->cond, i)
		           : other_cond(x, r->cond, i);
	}
}

bool shardmap_cond_deferred(const sm_ctx *x, size_t r, int64_t i)
{
	const sm_rule *ru = &x->fam->rules[r];
	size_t k = r + 1; /* conditions are asked only of a name two rules share */
	while (k < x->fam->n_rules && strcmp(x->fam->rules[k].ckpt, ru->ckpt) != 0)
		k++;
	if (k == x->fam->n_rules || shardmap_cond_holds(x, ru, i))
		return false;
	for (; k < x->fam->n_rules; k++)
		if (strcmp(x->fam->rules[k].ckpt, ru->ckpt) == 0 &&
		    shardmap_cond_holds(x, &x->fam->rules[k], i))
			return true;
	return false;
}

int64_t shardmap_j_count(const sm_ctx *x)
{
	return x->fam->j_count != NULL ? x->fam->j_count(x->cfg) : x->dm.n_layers;
}

const char *shardmap_vswitch(uint8_t cond, bool on)
{
	static const struct {
		uint8_t cond;
		const char *on, *off;
	} sw[] = {
	    {SM_C_VATTNB, "vision_config.attention_bias true",
	     "vision_config.attention_bias is false or absent (q/k/v without biases)"},
	    {SM_C_VQKN, "vision_config.use_qk_norm true",
	     "vision_config.use_qk_norm is false or absent (no q_norm / k_norm)"},
	    {SM_C_VLN, "vision_config.norm_type layer_norm (its default)",
	     "vision_config.norm_type is rms_norm (norms without biases)"},
	    {SM_C_VMASK, "vision_config.use_mask_token true",
	     "vision_config.use_mask_token is false or absent (no mask_token)"},
	    {SM_C_VPOS, "vision_config.use_absolute_position_embeddings true (its default)",
	     "vision_config.use_absolute_position_embeddings is false (no position table)"},
	    {SM_C_VQKVB, "vision_config.qkv_bias true (its default)",
	     "vision_config.qkv_bias is false (qkv without a bias)"},
	    {SM_C_IVQKVB, "vision_config.qkv_bias true",
	     "vision_config.qkv_bias is false or absent (InternViT's qkv without a bias)"},
	    {SM_C_IVQKN,
	     "vision_config.qk_normalization true or absent (InternVisionConfig's "
	     "default)",
	     "vision_config.qk_normalization is false (no q_norm / k_norm)"},
	    {SM_C_IVLN, "vision_config.norm_type layer_norm",
	     "vision_config.norm_type is rms_norm or absent (InternViT's norms without biases)"},
	    {SM_C_UVLNMID, "projector_ln_mid true (Ultravox v0.5 on: ln_mid)",
	     "projector_ln_mid is false or absent (ln_post after linear_2, no ln_mid)"},
	    {SM_C_UVLNPOST, "projector_ln_mid false or absent (Ultravox up to v0.4.1: ln_post)",
	     "projector_ln_mid is true (ln_mid before linear_2, no ln_post)"},
	    {SM_C_VHEAD,
	     "vision_config.vision_use_head true or absent (SiglipVisionTransformer's "
	     "default: vLLM builds the pooling head)",
	     "vision_config.vision_use_head is false (no pooling head)"},
	    {SM_C_OVQKVB, "visual_tokenizer_config.backbone_config.qkv_bias true",
	     "visual_tokenizer_config.backbone_config.qkv_bias is false or absent (AIMv2's qkv "
	     "without a bias)"},
	    {SM_C_OVBIAS, "visual_tokenizer_config.backbone_config.use_bias true",
	     "visual_tokenizer_config.backbone_config.use_bias is false or absent (AIMv2's proj "
	     "and MLP without biases)"},
	    {SM_C_DTBIAS, "vision_config.use_bias true",
	     "vision_config.use_bias is false or absent (dots.ocr's tower Linears without biases)"},
	    {SM_C_DTPOST, "vision_config.post_norm true or absent (DotsVisionConfig's default)",
	     "vision_config.post_norm is false (vLLM builds no post_trunk_norm)"},
	    {SM_C_O25PE,
	     "vit_config.preserve_original_pe true or absent (Siglip2NavitConfig's default: the "
	     "position table)",
	     "vit_config.preserve_original_pe is false (vLLM builds no position_embedding)"},
	    {SM_C_OVHEAD,
	     "visual_tokenizer_config.backbone_config.vision_use_head true or absent (vLLM's "
	     "SiglipVisionTransformer builds the pooling head)",
	     "visual_tokenizer_config.backbone_config.vision_use_head is false (no pooling head)"},
	    {SM_C_MDFCB, "medusa_fc_bias true",
	     "medusa_fc_bias is false or absent (the blocks' Linears without biases)"},
	    {SM_C_MDORIG,
	     "original_lm_head true (one lm_head.weight, or lm_heads.0.weight, for "
	     "every head)",
	     "original_lm_head is false or absent (one lm_heads.N.weight a head)"},
	    {SM_C_MDBLK,
	     "num_heads and num_hidden_layers (a block of num_hidden_layers Linears for "
	     "each of num_heads heads)",
	     "num_heads"},
	    {SM_C_MDHEADS,
	     "original_lm_head false or absent (one lm_heads.N.weight for each of "
	     "num_heads)",
	     "original_lm_head is true (every head shares lm_head.weight: give it, or "
	     "lm_heads.0.weight, alone)"},
	    {SM_C_MDTMAP, "truncated_vocab_size below vocab_size (vLLM asserts a token_map then)",
	     "truncated_vocab_size is vocab_size or absent (no token_map read)"},
	    {SM_C_BGHEAD, "vit_config.vision_use_head true (vLLM builds the pooling head)",
	     "vit_config.vision_use_head is false or absent (vLLM's bagel.py sets it false: no "
	     "pooling head)"},
	    {SM_C_HCXPOS, "proj_pos_emb true or absent (HCXVisionConfig's default: pos_emb)",
	     "proj_pos_emb is false (vLLM's C-Abstractor builds no pos_emb)"},
	    {SM_C_HCXPRE, "proj_prenorm true (vLLM's C-Abstractor builds prenorm)",
	     "proj_prenorm is false or absent (HCXVisionConfig's default: no prenorm)"},
	    {SM_C_EVTEMP, "use_temporal_conv true (vLLM's resampler builds temporal_linear)",
	     "use_temporal_conv is false (no temporal_linear)"},
	    {SM_C_HCXPOST,
	     "text_config.use_post_norm true (vLLM's HyperCLOVAX layers build post_norm1 / "
	     "post_norm2)",
	     "text_config.use_post_norm is false or absent (HyperCLOVAXConfig's default: no "
	     "post_norm1 / post_norm2)"},
	    {SM_C_VPOOL, "vision_config.use_mean_pooling false",
	     "vision_config.use_mean_pooling is true or absent (the final layernorm is an "
	     "Identity)"},
	};
	for (size_t k = 0; k < sizeof(sw) / sizeof(sw[0]); k++)
		if (sw[k].cond == cond)
			return on ? sw[k].on : sw[k].off;
	return NULL;
}

/* The config.json switch a bias rule's condition reads, or NULL. */
const char *shardmap_bias_key(const sm_family *f, uint8_t cond)
{
	if (f->bias_key_all != NULL &&
	    (cond == SM_C_ATTNBIAS || cond == SM_C_OUTBIAS || cond == SM_C_MLPBIAS))
		return f->bias_key_all; /* Falcon: bias */
	if (cond == SM_C_ATTNBIAS && f->attn_bias_key != NULL)
		return f->attn_bias_key; /* StableLM: use_qkv_bias */
	if (cond == SM_C_OUTBIAS && f->out_bias_key != NULL)
		return f->out_bias_key; /* InternLM3: bias */
	if (cond == SM_C_MMBIAS && f->mm_bias_key != NULL)
		return f->mm_bias_key; /* LFM2-VL: projector_bias */
	return cond == SM_C_ATTNBIAS   ? "attention_bias"
	       : cond == SM_C_OUTBIAS  ? "attention_out_bias"
	       : cond == SM_C_MLPBIAS  ? "mlp_bias"
	       : cond == SM_C_MMBIAS   ? "multimodal_projector_bias"
	       : cond == SM_C_CONVBIAS ? "conv_bias"
	                               : NULL;
}

/* The config.json switch that asks for a conditional tensor when true (a bias rule's, or
 * use_qk_norm for the q / k norms: GLM-4.5's, Hunyuan's), or NULL. */
const char *shardmap_switch_key(const sm_family *f, uint8_t cond)
{
	if (cond == SM_C_QKNORM && f->qk_norm_key != NULL)
		return f->qk_norm_key;
	return cond == SM_C_QKNORM     ? "use_qk_norm"
	       : cond == SM_C_SANDWICH ? "sandwich_norm"
	       : cond == SM_C_RBIAS    ? "router_enable_expert_bias"
	       : cond == SM_C_EAGLEFC  ? "eagle_config.use_aux_hidden_state"
	                               : shardmap_bias_key(f, cond);
}

/* Why a Mamba hybrid's conditional rule (the attention layers' biases, the mixer's conv1d /
 * in_proj / out_proj biases, its gated norm) does not hold at layer i; NULL for other rules. */
static const char *hybrid_why(const sm_ctx *x, const sm_rule *ru, int64_t i, char *wb, size_t cap)
{
	const char *keys = x->fam->linear_keys ? x->fam->linear_keys : "layer_types";
	bool use_keys = x->fam->mamba_lm || x->fam->mamba_use_keys;
	switch (ru->cond) {
	case SM_C_FULLATTB:
		if (!x->cfg->attention_bias)
			return "without attention biases (attention_bias is false)";
		snprintf(wb, cap, "a Mamba layer (see %s)", keys);
		return wb;
	case SM_C_MCONVB:
	case SM_C_MPROJB:
		if (!x->fam->layer_is_linear(x->cfg, i)) {
			snprintf(wb, cap, "an attention layer (see %s)", keys);
			return wb;
		}
		if (ru->cond == SM_C_MCONVB)
			return use_keys ? "without a conv1d bias (use_conv_bias is false)"
			                : "without a conv1d bias (mamba_conv_bias is false)";
		return use_keys ? "without in_proj / out_proj biases (use_bias is false or absent)"
		                : "without in_proj / out_proj biases (mamba_proj_bias is false or "
		                  "absent)";
	case SM_C_MNORM:
		return "without the mixer's gated norm (mamba_rms_norm is false or absent)";
	case SM_C_LSINK:
		return "without attention sinks (a full-attention layer by hybrid_layer_pattern or "
		       "add_swa_attention_sink_bias false or absent)";
	default:
		return NULL;
	}
}

/* What config.json makes layer i that rule ru's tensor cannot be in ("a dense layer (see
 * ...)", "without q/k norms (...)"), built in wb (cap bytes) where it names keys. */
static const char *cond_why(const sm_ctx *x, const sm_rule *ru, int64_t i, char *wb, size_t cap)
{
	const char *why = shardmap_mx_why(ru->cond); /* "a dense layer ..." unless MXFP4 */
	const char *z2 = shardmap_zamba2_why(x->cfg, ru->cond, i);
	const char *nh = shardmap_nemotron_h_why(x->fam, x->cfg, ru->cond, i);
	const char *hy = hybrid_why(x, ru, i, wb, cap);
	if (z2 != NULL || nh != NULL || hy != NULL)
		why = z2 != NULL ? z2 : nh != NULL ? nh : hy;
	else if (x->fam->moe_keys && (ru->cond == SM_C_DENSE || ru->cond == SM_C_MOE)) {
		snprintf(wb, cap, "a %s layer (see %s)", ru->cond == SM_C_DENSE ? "MoE" : "dense",
		         x->fam->moe_keys);
		why = wb;
	} else if (ru->cond == SM_C_DENSE)
		why = "a MoE layer (see mlp_only_layers, first_k_dense_replace)";
	else if (ru->cond == SM_C_SHARED && x->dm.shared_inter <= 0)
		why = "without shared experts (n_shared_experts / num_shared_experts / "
		      "moe_num_shared_experts / shared_expert_intermediate_size / "
		      "shared_intermediate_size / use_mixed_mlp_moe, num_shared_expert)";
	else if (ru->cond == SM_C_QLORA || ru->cond == SM_C_NOQLORA)
		why = "inconsistent with q_lora_rank";
	else if (ru->cond == SM_C_FULLATT || ru->cond == SM_C_LINATT ||
	         (ru->cond == SM_C_CONVBIAS && x->cfg->lfm2_conv_bias)) {
		const char *kind = ru->cond != SM_C_FULLATT
		                       ? (x->fam->mamba    ? "an attention"
		                          : x->fam->mllama ? "a self-attention"
		                                           : "a full-attention")
		                   : x->fam->mllama ? "a cross-attention"
		                   : x->fam->lfm2   ? "a conv"
		                   : x->fam->mamba  ? "a Mamba"
		                                    : "a linear-attention";
		const char *keys = x->fam->linear_keys ? x->fam->linear_keys
		                   : x->fam->mamba     ? "layer_types"
		                                       : "layer_types, full_attention_interval";
		snprintf(wb, cap, "%s layer (see %s)", kind, keys);
		why = wb;
	} else if (ru->cond == SM_C_LATT || ru->cond == SM_C_LMLP) {
		snprintf(wb, cap,
		         "a layer without %s (block_configs[%" PRId64 "].%s.no_op is true)",
		         ru->cond == SM_C_LATT ? "attention" : "an MLP", i,
		         ru->cond == SM_C_LATT ? "attention" : "ffn");
		why = wb;
	} else if (ru->cond == SM_C_QKNORM && x->fam->qk_norm_key != NULL) {
		snprintf(wb, cap, "without q/k norms (%s is false or absent)", x->fam->qk_norm_key);
		why = wb;
	} else if (ru->cond == SM_C_QKNORM)
		why = "without q/k norms (use_qk_norm is false or absent)";
	else if (ru->cond == SM_C_QKLN)
		why = "without q/k layernorms (qk_layernorm is false)";
	else if (ru->cond == SM_C_SANDWICH)
		why = "without the sandwich norms (sandwich_norm is false or absent)";
	else if (ru->cond == SM_C_GEMMA2)
		why = "a Gemma decoder layer without pre / post_feedforward_layernorm "
		      "(text_config.model_type is gemma, not gemma2)";
	else if (ru->cond == SM_C_QWEN3)
		why = x->fam->minicpmv ? "a decoder layer without q_norm / k_norm (version is not "
		                         "4.5, whose language model alone is Qwen3ForCausalLM)"
		                       : "a decoder layer without q_norm / k_norm "
		                         "(text_config.model_type is not qwen3 or qwen3_moe)";
	else if (ru->cond == SM_C_MBLATER || ru->cond == SM_C_MBLATERB)
		why = "the first layer, whose input norm is an Identity (vLLM builds none there: "
		      "ModernBERT's attn_norm, an EAGLE-1 draft's input_layernorm)";
	else if (ru->cond == SM_C_QFCROSS)
		why = "a Q-Former layer without cross-attention (only layers i with i % "
		      "qformer_config.cross_attention_frequency == 0 have one)";
	else if (ru->cond == SM_C_SHMLP)
		why = "without a shared MLP (shared_intermediate_size is 0)";
	else if (ru->cond == SM_C_ARES)
		why = moe_at(x, i) ? "a MoE layer without the residual MLP (use_residual is false)"
		                   : "a dense layer (see moe_layer_frequency)";
	else if (ru->cond == SM_C_RBIAS)
		why = moe_at(x, i) ? "a MoE layer without the router's expert bias "
		                     "(router_enable_expert_bias is false or absent)"
		                   : "a dense layer (see first_k_dense_replace)";
	else if (ru->cond == SM_C_LFMEB)
		why = x->fam->layer_is_moe(x->cfg, i)
		          ? "a MoE layer without the expert bias (use_expert_bias is false)"
		          : "a dense layer (see num_dense_layers)";
	else if (ru->cond == SM_C_FLN2 || ru->cond == SM_C_FLN1 || ru->cond == SM_C_FPOST)
		why = x->cfg->falcon_ln == 2 ? "take ln_attn / ln_mlp (new_decoder_architecture)"
		      : x->cfg->falcon_ln == 1
		          ? "take one input_layernorm (parallel_attn true, "
		            "num_ln_in_parallel_attn not 2)"
		          : "take input_layernorm and post_attention_layernorm "
		            "(parallel_attn false)";
	else if (shardmap_bias_key(x->fam, ru->cond) != NULL)
		why = ru->cond == SM_C_ATTNBIAS
		          ? (snprintf(wb, cap, "without attention biases (%s is false)",
		                      shardmap_bias_key(x->fam, ru->cond)),
		             wb)
		      : ru->cond == SM_C_OUTBIAS
		          ? (snprintf(wb, cap, "without an o_proj bias (%s is false or absent)",
		                      shardmap_bias_key(x->fam, ru->cond)),
		             wb)
		      : ru->cond == SM_C_CONVBIAS
		          ? "without conv biases (conv_bias is false or absent)"
		          : (snprintf(wb, cap, "without MLP biases (%s is false or absent)",
		                      shardmap_bias_key(x->fam, ru->cond)),
		             wb);
	return why;
}

int shardmap_cond_refused(const sm_ctx *x, const sm_rule *ru, const ckpt_tensor *t, int64_t i,
                          wt_errbuf *err)
{
	if (ru->cond == SM_C_LMBIAS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': config.json has no lm_head_bias true; set it or "
		                 "remove the tensor",
		                 t->name);
	if (ru->cond == SM_C_OPROJ)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': unknown tensor: config.json's word_embed_proj_dim "
		                 "equals hidden_size %" PRId64
		                 " (no project_in / project_out then); fix config.json or the "
		                 "checkpoint",
		                 t->name, x->cfg->hidden_size);
	if (ru->cond == SM_C_JWPE)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': unknown tensor: config.json's "
		                 "position_embedding_type is alibi (vLLM's jais.py builds no wpe "
		                 "then); fix config.json or the checkpoint",
		                 t->name);
	if (ru->cond == SM_C_OFNORM)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': unknown tensor: config.json's do_layer_norm_before "
		                 "is false or _remove_final_layer_norm true (no final LayerNorm "
		                 "then); fix config.json or the checkpoint",
		                 t->name);
	if (ru->cond == SM_C_TTYPES)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "tensor '%s': unknown tensor: config.json's type_vocab_size is 0 "
		    "(vLLM builds no token_type_embeddings then); fix config.json or the "
		    "checkpoint",
		    t->name);
	if (ru->cond == SM_C_NORMBIAS || ru->cond == SM_C_CLSBIAS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': unknown tensor: config.json's %s is false or absent "
		                 "(vLLM builds no bias there); fix config.json or the checkpoint",
		                 t->name,
		                 ru->cond == SM_C_NORMBIAS ? "norm_bias" : "classifier_bias");
	if (ru->cond == SM_C_QFCROSS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': unknown tensor: config.json's "
		                 "projector_config.cross_attention_frequency %" PRId64
		                 " gives Q-Former layer %" PRId64
		                 " no crossattention (vLLM builds none there, and its loader "
		                 "refuses the name); fix config.json or the checkpoint",
		                 t->name, x->cfg->qf_cross, i);
	if (ru->cond == SM_C_MMBIAS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': unknown tensor: config.json's %s is false%s (the "
		                 "projector has no biases then); fix config.json or the checkpoint",
		                 t->name, shardmap_bias_key(x->fam, SM_C_MMBIAS),
		                 x->fam->mm_bias_key ? "" : " or absent");
	const char *vs = shardmap_vswitch(ru->cond, false);
	if (vs != NULL)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': unknown tensor: config.json's %s, and vLLM builds "
		                 "none then; fix config.json or the checkpoint",
		                 t->name, vs);
	char wb[160];
	const char *why = cond_why(x, ru, i, wb, sizeof(wb));
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "tensor '%s': unknown tensor: config.json makes layer %" PRId64
	                 " %s; fix config.json or the checkpoint",
	                 t->name, i, why);
}

const sm_dims *shardmap_layer_dm(const sm_ctx *x, const sm_rule *r, int64_t i, sm_dims *tmp)
{
	if (!x->ld || i < 0 || i >= x->dm.n_layers ||
	    (r->flags & (SM_F_VIS | SM_F_DEEP | SM_F_QF)) || strstr(r->ckpt, "{i}") == NULL)
		return &x->dm;
	*tmp = x->dm;
	if (x->ld[i].attn)
		tmp->n_kv_heads = x->ld[i].kv_heads;
	if (x->ld[i].attn && x->ld[i].heads > 0)
		tmp->n_heads = x->ld[i].heads;
	if (x->ld[i].attn) {
		tmp->heads_key = x->ld[i].heads_key;
		tmp->kv_key = x->ld[i].kv_key;
	}
	if (x->ld[i].attn && x->ld[i].head_dim > 0)
		tmp->head_dim = x->ld[i].head_dim;
	if (x->ld[i].attn && x->ld[i].v_head_dim > 0)
		tmp->v_head_dim = x->ld[i].v_head_dim;
	if (x->ld[i].mlp)
		tmp->inter = x->ld[i].inter;
	return tmp;
}
