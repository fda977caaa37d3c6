/*
 * plan_cond.c — when a family rule applies: its condition at layer / block i (the layer
 * kinds, the config.json switches, the dims a tensor exists with), and the config.json key a
 * conditional tensor's presence follows, named in the planner's errors.
 */
#include <string.h>

#include "shardmap/plan_int.h"
#include "shardmap/quant_mx.h"

bool shardmap_cond_holds(const sm_ctx *x, const sm_rule *r, int64_t i)
{
	switch (r->cond) {
	case SM_C_DENSE:
		return !x->fam->layer_is_moe || !x->fam->layer_is_moe(x->cfg, i);
	case SM_C_MOE:
		return x->fam->layer_is_moe && x->fam->layer_is_moe(x->cfg, i);
	case SM_C_QLORA:
		return x->dm.q_lora_rank > 0;
	case SM_C_NOQLORA:
		return x->dm.q_lora_rank <= 0;
	case SM_C_SHARED:
		return x->dm.shared_inter > 0 && x->fam->layer_is_moe &&
		       x->fam->layer_is_moe(x->cfg, i);
	case SM_C_LMBIAS:
		return x->cfg->lm_head_bias;
	case SM_C_FULLATT:
		return !x->fam->layer_is_linear || !x->fam->layer_is_linear(x->cfg, i);
	case SM_C_LINATT:
		return x->fam->layer_is_linear && x->fam->layer_is_linear(x->cfg, i);
	case SM_C_QKNORM:
		return x->cfg->use_qk_norm;
	case SM_C_QKLN:
		return x->cfg->qk_layernorm;
	case SM_C_ATTNBIAS:
		return x->cfg->attention_bias;
	case SM_C_OUTBIAS:
		return x->cfg->attention_out_bias;
	case SM_C_MLPBIAS:
		return x->cfg->mlp_bias;
	case SM_C_MMBIAS:
		return x->cfg->mm_projector_bias;
	case SM_C_CONVBIAS:
		return x->cfg->lfm2_conv_bias && x->fam->layer_is_linear &&
		       x->fam->layer_is_linear(x->cfg, i);
	case SM_C_SHMLP:
		return x->dm.shared_inter > 0;
	case SM_C_FULLATTB:
		return x->cfg->attention_bias &&
		       (!x->fam->layer_is_linear || !x->fam->layer_is_linear(x->cfg, i));
	case SM_C_MCONVB:
		return x->cfg->mamba_conv_bias && x->fam->layer_is_linear &&
		       x->fam->layer_is_linear(x->cfg, i);
	case SM_C_MPROJB:
		return x->cfg->mamba_proj_bias && x->fam->layer_is_linear &&
		       x->fam->layer_is_linear(x->cfg, i);
	case SM_C_MNORM:
		return x->cfg->mamba_rms_norm && x->fam->layer_is_linear &&
		       x->fam->layer_is_linear(x->cfg, i);
	case SM_C_OPROJ:
		return x->cfg->opt_word_embed_proj_dim != x->cfg->hidden_size;
	case SM_C_OFNORM:
		return x->cfg->opt_final_norm;
	case SM_C_FLN2:
		return x->cfg->falcon_ln == 2;
	case SM_C_FLN1:
		return x->cfg->falcon_ln == 1 || x->cfg->falcon_ln == 3;
	case SM_C_FPOST:
		return x->cfg->falcon_ln == 3;
	default: /* SM_C_MX, SM_C_NOMX (GPT-OSS's two expert forms) or SM_C_ALL */
		return shardmap_mx_cond(x->cfg, r->cond);
	}
}

/* The config.json switch a bias rule's condition reads, or NULL. */
const char *shardmap_bias_key(const sm_family *f, uint8_t cond)
{
	if (f->bias_key_all != NULL &&
	    (cond == SM_C_ATTNBIAS || cond == SM_C_OUTBIAS || cond == SM_C_MLPBIAS))
		return f->bias_key_all; /* Falcon: bias */
	if (cond == SM_C_ATTNBIAS && f->attn_bias_key != NULL)
		return f->attn_bias_key; /* StableLM: use_qkv_bias */
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
	return cond == SM_C_QKNORM ? "use_qk_norm" : shardmap_bias_key(f, cond);
}
