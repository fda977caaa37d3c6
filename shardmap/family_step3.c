/*
 * family_step3.c — StepFun's Step 3 language model (Step3TextForCausalLM, model_type
 * step3_text: the text weights of stepfun-ai/step3; remote code), cut as vLLM's
 * step3_text.py loads it.
 *
 * model.embed_tokens / lm_head by padded vocabulary rows (lm_head is vLLM's ParallelLMHead,
 * never tied: loader/config_step3.c), norms replicated. Attention (Step3TextAttention, one
 * shared kv head): self_attn.q_proj [share_q_dim, hid], k_proj / v_proj [head_dim, hid] fused
 * whole into self_attn.qkv_proj [q; k; v] on every rank (a ReplicatedLinear built with the
 * quant_config: quantized; SM_K_REPLF), inter_norm [share_q_dim] replicated, wq [H*d,
 * share_q_dim] by rows in heads (ColumnParallelLinear), o_proj by columns in heads. The layers
 * named in moe_layers_enum (the loader's moe_layers) are MoE: moe.gate [E, hid] whole and
 * never quantized (ReplicatedLinear with quant_config None), the experts stored stacked as
 * moe.gate_proj / moe.up_proj [E, Ie, hid] into moe.experts.w13_weight and moe.down_proj
 * [E, hid, Ie] into moe.experts.w2_weight (FusedMoE: TP by Ie, EP by whole experts), and
 * share_expert (share_expert_dim: shared_expert_intermediate_size) with gate_proj / up_proj
 * merged into gate_up_proj, down_proj by columns; the other layers a dense mlp of
 * intermediate_size. share_q_dim is read into q_lora_rank (the dims q_proj, inter_norm and wq
 * share). Refusals: loader/config_step3.c.
 */
#include "shardmap/family_step3.h"

static const sm_rule step3_text_rules[] = {
    SM_RULES_TOP,
    SM_RULES_STEP3_TEXT_LAYERS,
};

/* Step3TextDecoderLayer: layer i is MoE when moe_layers_enum names it (the loader refuses a
 * config without the key: vLLM cannot read Step3TextConfig's tuple default). */
bool shardmap_step3_text_moe(const ckpt_config *c, int64_t i)
{
	for (size_t k = 0; c->has_moe_layers && k < c->n_moe_layers; k++)
		if (c->moe_layers[k] == i)
			return true;
	return false;
}

/* FusedMoEBlock needs experts where moe_layers_enum names a layer. */
int shardmap_step3_text_check(const ckpt_config *c, wt_errbuf *err)
{
	for (int64_t i = 0; i < c->num_hidden_layers; i++)
		if (c->num_experts <= 0 && shardmap_step3_text_moe(c, i))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: moe_num_experts is 0 but moe_layers_enum names "
			    "layer %lld a FusedMoEBlock: give the checkpoint's "
			    "moe_num_experts",
			    (long long)i);
	return WT_OK;
}

static const char *const step3_text_archs[] = {"Step3TextForCausalLM", NULL};

const sm_family shardmap_family_step3_text = {
    .name = "step3_text",
    .archs = step3_text_archs,
    .rules = step3_text_rules,
    .n_rules = SM_NRULES(step3_text_rules),
    .layer_is_moe = shardmap_step3_text_moe,
    .layer_prefix = "model.layers.",
    .check = shardmap_step3_text_check,
    .moe_keys = "moe_layers_enum",
};
