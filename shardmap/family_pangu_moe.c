/*
 * family_pangu_moe.c — openPangu-Ultra-MoE (PanguUltraMoEForCausalLM, model_type
 * pangu_ultra_moe: openPangu-Ultra-MoE-718B, -718B-V1.1; remote code), cut as vLLM's
 * openpangu.py loads it (OpenPanguMoEModel: OpenPanguDecoderLayer with OpenPanguMLAAttention
 * and OpenPanguMoE, load_weights' stacked and expert mappings).
 *
 * DeepSeek-V3's tensors under DeepSeek-V3's names (family_deepseek.c's rows, not copied):
 * - MLA: q_a_proj / q_a_layernorm / q_b_proj (q_proj when q_lora_rank is null),
 *   kv_a_proj_with_mqa / kv_a_layernorm replicated, q_b_proj / kv_b_proj rows by heads, o_proj
 *   columns by heads (fused_qkv_a_proj is the engine's fusion of the two replicated a-projections:
 *   served unfused as DeepSeek-V3's);
 * - layers below first_k_dense_replace: OpenPanguMLP (gate_proj / up_proj merged into
 *   gate_up_proj, down_proj by columns); the others OpenPanguMoE: mlp.gate.weight [E, hid]
 *   (a ReplicatedLinear built without the quant_config: never quantized) whole, the routed
 *   experts stacked as FusedMoE's w13 / w2 (TP inside each expert, whole experts per EP rank),
 *   the shared experts (moe_intermediate_size x n_shared_experts rows) merged;
 * - input_layernorm and post_attention_layernorm on every layer, and with sandwich_norm
 *   pre_mlp_layernorm and post_mlp_layernorm [hid] (the sandwich: the attention output is
 *   normed by post_attention_layernorm, the MLP's input by pre_mlp_layernorm, its output by
 *   post_mlp_layernorm), all replicated; vLLM builds the two exactly when sandwich_norm is true.
 * The MTP layers (num_nextn_predict_layers, model.layers.{L..}) are dropped: vLLM's
 * load_weights skips every layer index >= num_hidden_layers. The variants openpangu.py builds
 * from other keys (the sink attention, mHC, MoME, the DSA indexer, sliding windows, block
 * post-layernorms, the router's e_score_correction_bias) are refused by the loader
 * (loader/config_pangu_moe.c).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define PGM_NORM(x)                                                                                \
	SM_RULE(SM_LAYER x ".weight", SM_LAYER x ".weight", SM_K_REPL, 0, SM_U_NONE,               \
	        SM_C_SANDWICH, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule pangu_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    PGM_NORM("pre_mlp_layernorm"),
    PGM_NORM("post_mlp_layernorm"),
    SM_RULES_MLA("self_attn."),
    DEEPSEEK_RULES_MOE,
};

int shardmap_pangu_moe_layers(const ckpt_config *c, const char *model, wt_errbuf *err)
{
	if (c->num_experts <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s's n_routed_experts is missing or 0; vLLM's "
		                 "OpenPanguMoEModel needs MoE layers: give n_routed_experts",
		                 model);
	if (c->first_k_dense_replace >= c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: first_k_dense_replace %" PRId64
		                 " leaves none of the %" PRId64
		                 " layers MoE; vLLM's OpenPanguMoEModel raises \"No MOE layer "
		                 "found\": give first_k_dense_replace below num_hidden_layers",
		                 c->first_k_dense_replace, c->num_hidden_layers);
	return WT_OK;
}

/* The MoE layers, then MLA's dims. */
static int pangu_moe_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_pangu_moe_layers(c, "openPangu-Ultra-MoE", err);
	if (rv != WT_OK)
		return rv;
	if (c->kv_lora_rank <= 0 || c->qk_nope_head_dim <= 0 || c->qk_rope_head_dim <= 0 ||
	    c->v_head_dim <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: openPangu-Ultra-MoE's MLA needs kv_lora_rank, "
		                 "qk_nope_head_dim, qk_rope_head_dim and v_head_dim all positive");
	return WT_OK;
}

static const char *const pangu_moe_archs[] = {"PanguUltraMoEForCausalLM", NULL};

const sm_family shardmap_family_pangu_ultra_moe = {
    .name = "pangu_ultra_moe",
    .archs = pangu_moe_archs,
    .rules = pangu_moe_rules,
    .n_rules = SM_NRULES(pangu_moe_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .drop_extra_layers = true,
    .layer_prefix = "model.layers.",
    .check = pangu_moe_check,
    .moe_keys = "first_k_dense_replace",
};
