/*
 * family_gpt_oss.c — GptOssForCausalLM (openai/gpt-oss-20b, -120b;
 * docs/format.md section 2.7): Llama's attention with biases and per-head
 * attention sinks, every layer MoE with a biased router and the experts stacked
 * in the checkpoint as MXFP4 (section 4.6), gate and up interleaved.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define GO_EXP SM_LAYER "mlp.experts."

static const sm_rule gpt_oss_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    /* one learned logit per head: the rank's q heads */
    SM_RULE(SM_LAYER "self_attn.sinks", SM_LAYER "self_attn.sinks", SM_K_ROWS, 0, SM_U_HEADS,
            SM_C_ALL, 0, 1, SM_D_H, SM_D_ANY),
    SM_RULE_ROUTER("mlp.router.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE_ROUTER("mlp.router.bias", 1, SM_D_E, SM_D_ANY),
    /* MXFP4 blocks, viewed as [E, 2*Ie, hid] / [E, hid, Ie] (nn.Linear orientation) */
    SM_RULE3(GO_EXP "gate_up_proj_blocks", GO_EXP "w13_weight", SM_K_EXP13I, 0, SM_U_IE, SM_C_MX,
             SM_F_QUANT, SM_D_E, SM_D_IE2, SM_D_HID),
    SM_RULE3(GO_EXP "down_proj_blocks", GO_EXP "w2_weight", SM_K_EXP2S, 0, SM_U_IE, SM_C_MX,
             SM_F_QUANT, SM_D_E, SM_D_HID, SM_D_IE),
    /* saved dequantized by transformers: [E, hid, 2*Ie] / [E, Ie, hid], viewed transposed */
    SM_RULE3(GO_EXP "gate_up_proj", GO_EXP "w13_weight", SM_K_EXP13I, 0, SM_U_IE, SM_C_NOMX,
             SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_IE2, SM_D_HID),
    SM_RULE3(GO_EXP "down_proj", GO_EXP "w2_weight", SM_K_EXP2S, 0, SM_U_IE, SM_C_NOMX,
             SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_HID, SM_D_IE),
    SM_RULE(GO_EXP "gate_up_proj_bias", GO_EXP "w13_bias", SM_K_EXPB13, 0, SM_U_IE, SM_C_MOE, 0, 2,
            SM_D_E, SM_D_IE2),
    SM_RULE(GO_EXP "down_proj_bias", GO_EXP "w2_bias", SM_K_EXPB2, 0, SM_U_NONE, SM_C_MOE, 0, 2,
            SM_D_E, SM_D_HID),
};

static bool gpt_oss_moe(const ckpt_config *cfg, int64_t i)
{
	(void)i;
	return cfg->num_experts > 0;
}

/* Every layer is MoE (GptOssConfig would default num_local_experts to 128); MXFP4 blocks
 * hold 32 elements of a row, so both input widths must be multiples of 32. */
static int gpt_oss_check(const ckpt_config *cfg, wt_errbuf *err)
{
	if (cfg->num_experts <= 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: GptOssForCausalLM needs num_local_experts > 0 (every "
		    "layer is MoE); write the model's expert count into config.json");
	if (cfg->quant != CKPT_QUANT_MXFP4)
		return WT_OK;
	int64_t k = cfg->hidden_size % 32 ? cfg->hidden_size : cfg->moe_intermediate_size;
	if (k % 32 == 0)
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: %s %" PRId64 " is not a multiple of 32, the MXFP4 block "
	                 "size of the experts' rows; fix config.json or the checkpoint",
	                 cfg->hidden_size % 32 ? "hidden_size" : "intermediate_size", k);
}

static const char *const gpt_oss_archs[] = {"GptOssForCausalLM", NULL};

/* GptOssConfig leaves tie_word_embeddings false */
const sm_family shardmap_family_gpt_oss = {
    .name = "gpt_oss",
    .archs = gpt_oss_archs,
    .rules = gpt_oss_rules,
    .n_rules = SM_NRULES(gpt_oss_rules),
    .layer_is_moe = gpt_oss_moe,
    .layer_prefix = "model.layers.",
    .check = gpt_oss_check,
};
