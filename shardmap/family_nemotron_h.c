/*
 * family_nemotron_h.c — Nemotron-H (NemotronHForCausalLM, model_type nemotron_h, remote code:
 * nvidia/NVIDIA-Nemotron-Nano-9B-v2, Nemotron-H-8B / 47B-Base; docs/format.md section 2.7),
 * as vLLM's nemotron_h.py / mamba_mixer2.py load it.
 *
 * Mamba's backbone (SM_RULES_BACKBONE: backbone.embeddings and lm_head by vocabulary rows,
 * backbone.norm_f and each layer's norm whole), and in layer i one mixer under
 * backbone.layers.{i}.mixer., its kind the i-th character of hybrid_override_pattern (the
 * loader's layer_types):
 * - "M": the Mamba2 mixer, cut as Granite 4.0's (SM_RULES_MIXER2_C: in_proj [z; x; B; C;
 *   dt] and conv1d [x; B; C] per segment, A_log / D / dt_bias / the gated norm by heads,
 *   out_proj by columns; conv1d.bias with use_conv_bias, in_proj / out_proj biases with
 *   use_bias), its width mamba_num_heads * mamba_head_dim; in_proj and out_proj quantized.
 * - "*": attention without positions or biases: q / k / v fused into qkv_proj by heads
 *   (QKVParallelLinear), o_proj by columns (RowParallelLinear); both quantized.
 * - "-": the ungated relu2 MLP: up_proj by rows (ColumnParallelLinear), down_proj by
 *   columns (RowParallelLinear), both quantized; biases with mlp_bias (up's cut with it,
 *   down's whole).
 * - "E": the MoE (vLLM's NemotronHMoE): the router gate.weight [E, hid] and
 *   gate.e_score_correction_bias [E] whole and unquantized on every rank (GateLinear, an
 *   F32 parameter); the non-gated routed experts experts.{j}.up_proj / down_proj stacked as
 *   FusedMoE's experts.w13_weight (w1 alone, SM_K_EXP1) / w2_weight, each expert's rows /
 *   columns split by tp, whole experts per rank under EP; the shared experts
 *   shared_experts.up_proj by rows, down_proj by columns (NemotronHMLP, n_shared_experts x
 *   moe_shared_expert_intermediate_size wide); experts and shared experts quantized.
 * vLLM drops mtp.* (orig_to_new_prefix "mtp": None): dropped and listed as skipped here.
 * The loader (config_nemotron_h.c) refuses a latent MoE (moe_latent_size), MoE layers with
 * mlp_bias, a tied LM head and attention biases (vLLM builds none of them so).
 */
#include <inttypes.h>

#include "shardmap/families.h"
#include "shardmap/family_nemotron_h.h"

static const sm_rule nemotron_h_rules[] = {SM_RULES_NEMOTRON_H};

/* Layer i's kind (the loader's layer_types from hybrid_override_pattern). */
static bool nh_is(const ckpt_config *c, int64_t i, uint8_t kind)
{
	return c->has_layer_types && i >= 0 && (uint64_t)i < c->n_layer_types &&
	       c->layer_types[i] == kind;
}

bool shardmap_nemotron_h_mamba(const ckpt_config *c, int64_t i)
{
	return nh_is(c, i, CKPT_LAYER_MAMBA);
}

bool shardmap_nemotron_h_moe(const ckpt_config *c, int64_t i)
{
	return nh_is(c, i, CKPT_LAYER_MOE);
}

bool shardmap_nemotron_h_cond(const ckpt_config *c, uint8_t cond, int64_t i)
{
	if (cond == SM_C_NHATT)
		return nh_is(c, i, CKPT_LAYER_ATTN);
	return nh_is(c, i, CKPT_LAYER_MLP) && (cond == SM_C_NHMLP || c->mlp_bias);
}

const char *shardmap_nemotron_h_why(const sm_family *f, const ckpt_config *c, uint8_t cond,
                                    int64_t i)
{
	bool mixer = cond == SM_C_LINATT || cond == SM_C_MCONVB || cond == SM_C_MPROJB;
	bool moe = cond == SM_C_MOE || cond == SM_C_SHARED;
	if ((f != &shardmap_family_nemotron_h && f != &shardmap_family_nano_vl) ||
	    (!mixer && !moe && cond != SM_C_NHATT && cond != SM_C_NHMLP && cond != SM_C_NHMLPB))
		return NULL;
	if (shardmap_nemotron_h_moe(c, i) && cond == SM_C_SHARED)
		return "without shared experts (n_shared_experts is 0 or null)";
	if (nh_is(c, i, CKPT_LAYER_MAMBA) && mixer)
		return cond == SM_C_MCONVB ? "without a conv1d bias (use_conv_bias is false)"
		                           : "without in_proj / out_proj biases (use_bias is false "
		                             "or absent)";
	if (nh_is(c, i, CKPT_LAYER_MLP) && cond == SM_C_NHMLPB)
		return "without MLP biases (mlp_bias is false or absent)";
	return nh_is(c, i, CKPT_LAYER_MAMBA) ? "a Mamba2 layer (\"M\" in hybrid_override_pattern)"
	       : nh_is(c, i, CKPT_LAYER_ATTN)
	           ? "an attention layer (\"*\" in hybrid_override_pattern)"
	       : shardmap_nemotron_h_moe(c, i) ? "a MoE layer (\"E\" in hybrid_override_pattern)"
	                                       : "an MLP layer (\"-\" in hybrid_override_pattern)";
}

/* The loader checked the pattern against num_hidden_layers; MoE layers need routed experts;
 * the Mamba2 mixer's rules (whole groups of heads; its width is mamba_num_heads *
 * mamba_head_dim, mamba_d_ssm). */
int shardmap_nemotron_h_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_layer_types || (int64_t)c->n_layer_types != c->num_hidden_layers)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Nemotron-H's hybrid_override_pattern has %zu layers "
		                 "but num_hidden_layers is %" PRId64 "; give one per layer",
		                 c->n_layer_types, c->num_hidden_layers);
	for (int64_t i = 0; i < c->num_hidden_layers; i++)
		if (shardmap_nemotron_h_moe(c, i) &&
		    (c->num_experts < 1 || c->moe_intermediate_size < 1))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: Nemotron-H's layer %" PRId64
			                 " is a MoE layer (\"E\") but n_routed_experts (%" PRId64
			                 ") or moe_intermediate_size (%" PRId64 ") is not >= 1",
			                 i, c->num_experts, c->moe_intermediate_size);
	return shardmap_mamba2_mixers_check(c, "Nemotron-H", shardmap_nemotron_h_mamba, err);
}

static const char *const nemotron_h_archs[] = {"NemotronHForCausalLM", NULL};

/* NemotronHConfig leaves tie_word_embeddings false (true is refused: vLLM never ties) */
const sm_family shardmap_family_nemotron_h = {
    .name = "nemotron_h",
    .archs = nemotron_h_archs,
    .rules = nemotron_h_rules,
    .n_rules = SM_NRULES(nemotron_h_rules),
    .layer_prefix = "backbone.layers.",
    .layer_is_moe = shardmap_nemotron_h_moe,
    .check = shardmap_nemotron_h_check,
    .layer_is_linear = shardmap_nemotron_h_mamba,
    .linear_keys = "hybrid_override_pattern",
    .drop_prefix = "mtp.",
    .mamba = true,
    .mamba_use_keys = true,
};
