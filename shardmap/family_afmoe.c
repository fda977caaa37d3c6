/*
 * family_afmoe.c — Arcee's AFMoE (AfmoeForCausalLM, model_type afmoe: arcee-ai/Trinity-Mini,
 * Trinity-Nano-Preview, Trinity-Large), cut as vLLM's afmoe.py loads it (its load_weights: an
 * AutoWeightsLoader over hf_to_vllm_mapper, FusedMoE's expert mapping).
 *
 * Per layer:
 * - self_attn.q_proj / k_proj / v_proj fused by heads into qkv_proj (QKVParallelLinear: kv heads
 *   replicated on tp / KV ranks past num_key_value_heads), no biases; o_proj by columns;
 * - self_attn.gate_proj [H*d, hid]: the attention output gate (ColumnParallelLinear, not fused,
 *   no bias), rows by heads as q's: rank r holds [r*H*d/T, (r+1)*H*d/T);
 * - self_attn.q_norm / k_norm [head_dim] replicated;
 * - input_layernorm, post_attention_layernorm, pre_mlp_layernorm, post_mlp_layernorm [hid]
 *   replicated (the sandwich);
 * - layers below num_dense_layers (the loader's first_k_dense_replace): the dense AfmoeMLP
 *   (LlamaMLP: gate_proj / up_proj merged into gate_up_proj, down_proj by columns);
 * - the others AfmoeMoE: mlp.router.gate.weight [E, hid] served as mlp.gate.weight (vLLM's
 *   rename ".router.gate.weight" -> ".gate.weight"; an F32 nn.Linear, never quantized),
 *   mlp.expert_bias [E] (F32, the grouped top-k's e_score_correction_bias) whole and never
 *   quantized, mlp.experts.{j}.{gate,up,down}_proj stacked as FusedMoE's w13_weight / w2_weight
 *   (TP inside each expert, whole experts per EP rank), mlp.shared_experts (LlamaMLP of
 *   moe_intermediate_size x num_shared_experts rows: the loader's shared_expert_intermediate_size)
 *   merged into gate_up_proj, present exactly when num_shared_experts > 0.
 * Refusals of keys: loader/config_afmoe.c.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define AF_ATTN SM_LAYER "self_attn."
#define AF_NORM(x)                                                                                 \
	SM_RULE(SM_LAYER x ".weight", SM_LAYER x ".weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,  \
	        1, SM_D_HID, SM_D_ANY)

static const sm_rule afmoe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    AF_NORM("pre_mlp_layernorm"),
    AF_NORM("post_mlp_layernorm"),
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_RULE(AF_ATTN "o_proj.weight", AF_ATTN "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(AF_ATTN "gate_proj.weight", AF_ATTN "gate_proj.weight", SM_K_ROWS, 0, SM_U_HEADS,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_Q, SM_D_HID),
    SM_RULES_QK_NORM,
    SM_RULES_MLP_NOBIAS_IF(SM_C_DENSE),
    SM_RULE(SM_LAYER "mlp.router.gate.weight", SM_LAYER "mlp.gate.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_MOE, 0, 2, SM_D_E, SM_D_HID),
    SM_RULE_ROUTER("mlp.expert_bias", 1, SM_D_E, SM_D_ANY),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    SM_RULES_MLP_NOBIAS_AT("mlp.shared_experts.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
};

/* AfmoeAttention indexes layer_types[layer_idx] (vLLM's AfmoeConfig leaves it None); AfmoeMoE
 * needs routed experts in the layers from num_dense_layers on. */
static int afmoe_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_layer_types || (int64_t)c->n_layer_types != c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types must list one \"sliding_attention\" or "
		                 "\"full_attention\" per layer (%" PRId64
		                 "): vLLM's afmoe.py indexes it for every layer (AfmoeConfig's "
		                 "default is None)",
		                 c->num_hidden_layers);
	for (size_t i = 0; i < c->n_layer_types; i++)
		if (c->layer_types[i] != CKPT_LAYER_SLIDING_ATTN &&
		    c->layer_types[i] != CKPT_LAYER_FULL_ATTN)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: layer_types[%zu] is neither "
			                 "\"sliding_attention\" nor \"full_attention\"",
			                 i);
	if (c->num_experts <= 0 && c->first_k_dense_replace < c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_experts is 0 but layers %" PRId64 "..%" PRId64
		                 " are AfmoeMoE blocks (num_dense_layers %" PRId64
		                 "): give the checkpoint's num_experts",
		                 c->first_k_dense_replace, c->num_hidden_layers - 1,
		                 c->first_k_dense_replace);
	return WT_OK;
}

static const char *const afmoe_archs[] = {"AfmoeForCausalLM", NULL};

/* A tie is refused by the loader (vLLM's AfmoeForCausalLM never ties its lm_head). */
const sm_family shardmap_family_afmoe = {
    .name = "afmoe",
    .archs = afmoe_archs,
    .rules = afmoe_rules,
    .n_rules = SM_NRULES(afmoe_rules),
    .layer_is_moe = shardmap_moe_glm4,
    .layer_prefix = "model.layers.",
    .check = afmoe_check,
    .moe_keys = "num_dense_layers",
};
