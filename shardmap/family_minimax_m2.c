/*
 * family_minimax_m2.c — MiniMax-M2 / M2.1 (MiniMaxM2ForCausalLM, model_type minimax_m2;
 * remote code; docs/format.md section 2.8), cut as vLLM's minimax_m2.py loads it.
 *
 * Every layer is softmax attention over a sigmoid-routed MoE (the loader refuses
 * attn_type_list's linear-attention layers, config_minimax_m2.c):
 * - q / k / v fused into qkv_proj (GQA), o_proj by columns, no biases.
 * - q_norm [H*d] / k_norm [KV*d]: one RMSNorm over the whole projection
 *   (MiniMaxText01RMSNormTP, its variance all-reduced), each rank holding the channels of
 *   its own heads: q_norm rows by heads; k_norm the rows of the kv heads its k_proj slice
 *   holds (SM_K_KVH: when KV < T the rank's one shared head, as vLLM's
 *   weight_shard_world_size = KV, weight_shard_rank = r / (T / KV)). Never quantized.
 * - block_sparse_moe: router gate [E, hid] and e_score_correction_bias [E] replicated and
 *   never quantized (vLLM's ReplicatedLinear with quant_config None, a float32 parameter);
 *   experts w1 / w3 / w2 of intermediate_size stacked as w13 / w2 (Ie split under TP,
 *   whole experts under EP), no shared experts.
 * - lm_head never tied (vLLM's ParallelLMHead always loads it).
 * The MTP modules' layers (model.layers.{L..}, num_mtp_modules) are dropped as vLLM's
 * load_weights skips them.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define M2_ATT SM_LAYER "self_attn."

static const sm_rule minimax_m2_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_RULE(M2_ATT "o_proj.weight", M2_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    /* the norms over all heads: each rank its heads' channels */
    SM_RULE(M2_ATT "q_norm.weight", M2_ATT "q_norm.weight", SM_K_ROWS, 0, SM_U_HEADS, SM_C_ALL, 0,
            1, SM_D_Q, SM_D_ANY),
    SM_RULE(M2_ATT "k_norm.weight", M2_ATT "k_norm.weight", SM_K_KVH, 0, SM_U_HEADS, SM_C_ALL, 0, 1,
            SM_D_KV, SM_D_ANY),
    SM_RULE_ROUTER("block_sparse_moe.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE_ROUTER("block_sparse_moe.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    SM_RULES_EXPERTS("block_sparse_moe.experts.", "w1", "w3", "w2"),
};

static bool minimax_m2_moe(const ckpt_config *c, int64_t i)
{
	(void)i;
	return c->num_experts > 0;
}

/* Every layer is MoE (MiniMaxM2MoE). */
static int minimax_m2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->num_experts <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: MiniMaxM2ForCausalLM needs num_local_experts > 0 "
		                 "(every layer is MoE; MiniMax-M2: 256); give it");
	return WT_OK;
}

static const char *const minimax_m2_archs[] = {"MiniMaxM2ForCausalLM", NULL};

const sm_family shardmap_family_minimax_m2 = {
    .name = "minimax_m2",
    .archs = minimax_m2_archs,
    .rules = minimax_m2_rules,
    .n_rules = SM_NRULES(minimax_m2_rules),
    .layer_is_moe = minimax_m2_moe,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
    .check = minimax_m2_check,
};
