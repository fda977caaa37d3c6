/*
 * family_ernie.c — Baidu ERNIE 4.5 (transformers 4.57.1's modeling_ernie4_5.py and
 * modeling_ernie4_5_moe.py; vLLM's ernie45.py / ernie45_moe.py load them alike).
 *
 * ernie4_5 (Ernie4_5ForCausalLM, ERNIE-4.5-0.3B): Llama's table, every Linear with a
 * bias when use_bias (q/k/v biases fuse, o_proj.bias and down_proj.bias replicated);
 * head_dim given (H * d need not be hid); tied unless tie_word_embeddings is false.
 *
 * ernie4_5_moe (Ernie4_5_MoeForCausalLM, ERNIE-4.5-21B-A3B, -300B-A47B): the same
 * attention; layer i has an MoE block iff (i + 1) % moe_layer_interval == 0 and
 * moe_layer_start_index <= i <= moe_layer_end_index (-1 = the last layer), else a dense
 * MLP of intermediate_size. The MoE block: router mlp.gate.weight [E, hid] (F32 in
 * transformers) and mlp.moe_statics.e_score_correction_bias [1, E] (F32), both
 * replicated and never quantized (the bias keeps its name and shape; vLLM renames it
 * gate.e_score_correction_bias and squeezes it when loading); routed experts
 * mlp.experts.{j}.{gate,up,down}_proj stacked; shared experts mlp.shared_experts.* of
 * moe_intermediate_size x moe_num_shared_experts merged like DeepSeek's. The MTP module
 * (model.mtp_block.*, model.mtp_emb_norm.*, model.mtp_hidden_norm.*,
 * model.mtp_linear_proj.*) is dropped as transformers skips it on load; the draft family
 * ernie_mtp (family_ernie_mtp.c) cuts it.
 */
#include <inttypes.h>

#include "common/common.h"
#include "shardmap/family_rules.h"

static const sm_rule ernie4_5_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

static const sm_rule ernie4_5_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE_ROUTER("mlp.moe_statics.e_score_correction_bias", 2, SM_D_ONE, SM_D_E),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    SM_RULES_MLP("mlp.shared_experts.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
};

/* Ernie4_5_MoeDecoderLayer's test, moe_layer_end_index -1 read as the last layer (as
 * Ernie4_5_MoeConfig sets it). */
bool shardmap_ernie_moe_layer(const ckpt_config *c, int64_t i)
{
	if (c->num_experts <= 0 || c->moe_layer_interval < 1)
		return false;
	int64_t end =
	    c->moe_layer_end_index < 0 ? c->num_hidden_layers - 1 : c->moe_layer_end_index;
	return (i + 1) % c->moe_layer_interval == 0 && i >= c->moe_layer_start_index && i <= end;
}

/* use_bias gives every routed expert gate/up/down biases (Ernie4_5_MoeMLP), which no
 * expert stack carries: refused by name rather than as unknown tensors. */
int shardmap_ernie_moe_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->use_bias && c->num_experts > 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: use_bias is true, which gives each of the %" PRId64
		                 " routed experts gate/up/down biases; expert stacks "
		                 "(w13_weight / w2_weight) carry no biases, and no released "
		                 "ERNIE 4.5 MoE sets it",
		                 c->num_experts);
	return WT_OK;
}

static const char *const ernie4_5_archs[] = {"Ernie4_5ForCausalLM", NULL};
static const char *const ernie4_5_moe_archs[] = {"Ernie4_5_MoeForCausalLM", NULL};

/* Ernie4_5Config and Ernie4_5_MoeConfig tie by default (ERNIE-4.5-0.3B and 21B-A3B tie,
 * 300B-A47B does not) */
const sm_family shardmap_family_ernie4_5 = {
    .name = "ernie4_5",
    .archs = ernie4_5_archs,
    .rules = ernie4_5_rules,
    .n_rules = SM_NRULES(ernie4_5_rules),
    .layer_prefix = "model.layers.",
    .tie_default = true,
};

const sm_family shardmap_family_ernie4_5_moe = {
    .name = "ernie4_5_moe",
    .archs = ernie4_5_moe_archs,
    .rules = ernie4_5_moe_rules,
    .n_rules = SM_NRULES(ernie4_5_moe_rules),
    .layer_is_moe = shardmap_ernie_moe_layer,
    .layer_prefix = "model.layers.",
    .check = shardmap_ernie_moe_check,
    .tie_default = true,
    .drop_prefix = "model.mtp_",
    .moe_keys = "moe_layer_start_index, moe_layer_end_index, moe_layer_interval",
};
