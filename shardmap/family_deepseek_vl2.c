/*
 * family_deepseek_vl2.c — DeepSeek-VL2 (DeepseekVLV2ForCausalLM, model_type deepseek_vl_v2,
 * remote code: deepseek-ai/deepseek-vl2-tiny, deepseek-vl2-small, deepseek-vl2), cut as vLLM's
 * deepseek_vl2.py loads it (docs/format.md section 2.7). Runtime names keep the checkpoint's
 * (SHARDS.md: the module path; vLLM's hf_to_vllm_mapper only moves language. under its
 * language_model module): language.*, vision.*, projector.*, image_newline, view_seperator (sic).
 *
 * - Language model (language.*): vLLM builds the registered model of one architecture picked
 *   from language_config (the loader's lm_model_type): topk_method noaux_tc the deepseek_v3
 *   family's table (MLA, e_score_correction_bias, MTP layers dropped), use_mla false the
 *   deepseek family's (DeepseekForCausalLM: q/k/v fused by heads into qkv_proj, o_proj by
 *   columns; deepseek-vl2-tiny, whose qk_nope_head_dim and qk_rope_head_dim are 0, which is what
 *   makes vLLM's deepseek_v2.py build DeepseekAttention), otherwise the deepseek_v2 family's
 *   (MLA; deepseek-vl2-small, deepseek-vl2). DeepSeek's MoE rows under all three: the dense MLP
 *   below first_k_dense_replace, router whole and unquantized, experts stacked, shared experts
 *   merged.
 * - The tower (vision.*): vLLM's _init_vision_module builds timm's
 *   vit_so400m_patch14_siglip_384 (plain nn.Linear / LayerNorm / Conv2d, no quant_config, no
 *   tensor parallelism): every tensor whole on every rank, never quantized. pos_embed
 *   [1, (image / patch)^2, W], patch_embed.proj (Conv2d with bias), per block norm1 / norm2,
 *   attn.qkv [3 W, W], attn.proj, mlp.fc1 [int(W x mlp_ratio), W], mlp.fc2 with their biases,
 *   the final norm, and the MAP head attn_pool (latent [1, 1, W], q, kv [2 W, W], proj, norm,
 *   mlp.fc1 / fc2 with biases; vLLM's model has it although forward_features never runs it, so
 *   its strict load needs it). The sizes are vision_config's (the remote VisionEncoderConfig the
 *   checkpoint was built from; the loader refuses a model_name other than so400m's).
 * - The projector (MlpProjector, downsample_mlp_gelu: plain nn.Linear in nn.Sequential):
 *   projector.layers.0 [n_embed x mlp_ratio, input_dim x downsample_ratio^2] and layers.2
 *   [n_embed, n_embed x mlp_ratio] with biases, whole, never quantized; image_newline and
 *   view_seperator [n_embed] (nn.Parameter) whole. n_embed is the language model's hidden_size
 *   and input_dim the tower's width (the loader's checks).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language.model.layers.{i}."

#define DV_VT "vision."
#define DV_VB DV_VT "blocks.{i}."
#define DV_AP DV_VT "attn_pool."

/* A tensor of every tower block, whole on every rank, never quantized. */
#define DV_BLK(n, nd, d0, d1)                                                                      \
	SM_RULE(DV_VB n, DV_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, nd, d0, d1)
/* Any other tensor of the tower or projector, whole on every rank, never quantized. */
#define DV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

/* timm's SigLIP ViT with its MAP head, the projector and the two separators. attn_pool.kv's
 * 2 W rows are check_extra's (no symbol). */
#define DV_VISION_RULES                                                                            \
	SM_RULE3(DV_VT "pos_embed", DV_VT "pos_embed", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,       \
	         SM_D_ONE, SM_D_VNP, SM_D_VE),                                                     \
	    {DV_VT "patch_embed.proj.weight",                                                      \
	     DV_VT "patch_embed.proj.weight",                                                      \
	     SM_K_REPL,                                                                            \
	     0,                                                                                    \
	     SM_U_NONE,                                                                            \
	     SM_C_ALL,                                                                             \
	     0,                                                                                    \
	     4,                                                                                    \
	     {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},                                               \
	    DV_REPL(DV_VT "patch_embed.proj.bias", 1, SM_D_VE, SM_D_ANY),                          \
	    DV_BLK("norm1.weight", 1, SM_D_VE, SM_D_ANY),                                          \
	    DV_BLK("norm1.bias", 1, SM_D_VE, SM_D_ANY),                                            \
	    DV_BLK("attn.qkv.weight", 2, SM_D_V3E, SM_D_VE),                                       \
	    DV_BLK("attn.qkv.bias", 1, SM_D_V3E, SM_D_ANY),                                        \
	    DV_BLK("attn.proj.weight", 2, SM_D_VE, SM_D_VE),                                       \
	    DV_BLK("attn.proj.bias", 1, SM_D_VE, SM_D_ANY),                                        \
	    DV_BLK("norm2.weight", 1, SM_D_VE, SM_D_ANY),                                          \
	    DV_BLK("norm2.bias", 1, SM_D_VE, SM_D_ANY),                                            \
	    DV_BLK("mlp.fc1.weight", 2, SM_D_VI, SM_D_VE),                                         \
	    DV_BLK("mlp.fc1.bias", 1, SM_D_VI, SM_D_ANY),                                          \
	    DV_BLK("mlp.fc2.weight", 2, SM_D_VE, SM_D_VI),                                         \
	    DV_BLK("mlp.fc2.bias", 1, SM_D_VE, SM_D_ANY),                                          \
	    DV_REPL(DV_VT "norm.weight", 1, SM_D_VE, SM_D_ANY),                                    \
	    DV_REPL(DV_VT "norm.bias", 1, SM_D_VE, SM_D_ANY),                                      \
	    SM_RULE3(DV_AP "latent", DV_AP "latent", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0,         \
	             SM_D_ONE, SM_D_ONE, SM_D_VE),                                                 \
	    DV_REPL(DV_AP "q.weight", 2, SM_D_VE, SM_D_VE),                                        \
	    DV_REPL(DV_AP "q.bias", 1, SM_D_VE, SM_D_ANY),                                         \
	    DV_REPL(DV_AP "kv.weight", 2, SM_D_ANY, SM_D_VE),                                      \
	    DV_REPL(DV_AP "kv.bias", 1, SM_D_ANY, SM_D_ANY),                                       \
	    DV_REPL(DV_AP "proj.weight", 2, SM_D_VE, SM_D_VE),                                     \
	    DV_REPL(DV_AP "proj.bias", 1, SM_D_VE, SM_D_ANY),                                      \
	    DV_REPL(DV_AP "norm.weight", 1, SM_D_VE, SM_D_ANY),                                    \
	    DV_REPL(DV_AP "norm.bias", 1, SM_D_VE, SM_D_ANY),                                      \
	    DV_REPL(DV_AP "mlp.fc1.weight", 2, SM_D_VI, SM_D_VE),                                  \
	    DV_REPL(DV_AP "mlp.fc1.bias", 1, SM_D_VI, SM_D_ANY),                                   \
	    DV_REPL(DV_AP "mlp.fc2.weight", 2, SM_D_VE, SM_D_VI),                                  \
	    DV_REPL(DV_AP "mlp.fc2.bias", 1, SM_D_VE, SM_D_ANY),                                   \
	    DV_REPL("projector.layers.0.weight", 2, SM_D_VPI, SM_D_VM),                            \
	    DV_REPL("projector.layers.0.bias", 1, SM_D_VPI, SM_D_ANY),                             \
	    DV_REPL("projector.layers.2.weight", 2, SM_D_HID, SM_D_VPI),                           \
	    DV_REPL("projector.layers.2.bias", 1, SM_D_HID, SM_D_ANY),                             \
	    DV_REPL("image_newline", 1, SM_D_HID, SM_D_ANY),                                       \
	    DV_REPL("view_seperator", 1, SM_D_HID, SM_D_ANY)

/* DeepseekV2ForCausalLM under language. (MLA: deepseek-vl2-small, deepseek-vl2): the
 * deepseek_v2 family's rows. */
static const sm_rule dsvl2_v2_rules[] = {
    SM_RULES_TOP_AT("language."), SM_RULES_LNORM,  SM_RULES_MLA("self_attn."),
    DEEPSEEK_RULES_MOE,           DV_VISION_RULES,
};

/* DeepseekV3ForCausalLM (topk_method noaux_tc): the deepseek_v3 family's rows. */
static const sm_rule dsvl2_v3_rules[] = {
    SM_RULES_TOP_AT("language."),
    SM_RULES_LNORM,
    SM_RULES_MLA("self_attn."),
    DEEPSEEK_RULES_MOE,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    DV_VISION_RULES,
};

/* DeepseekForCausalLM (use_mla false: deepseek-vl2-tiny): the deepseek family's rows. */
static const sm_rule dsvl2_mha_rules[] = {
    SM_RULES_TOP_AT("language."), SM_RULES_LNORM,  SM_RULES_ATTN_SWITCHED,
    DEEPSEEK_RULES_MOE,           DV_VISION_RULES,
};

/* AttentionPoolLatent's kv: [2 W, W] and its bias [2 W]. */
static int dsvl2_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	static const char *const kv[] = {DV_AP "kv.weight", DV_AP "kv.bias"};
	for (size_t k = 0; k < 2; k++) {
		const ckpt_tensor *t = ckpt_find(ck, kv[k]);
		if (t != NULL && t->shape[0] != 2 * c->v_hidden_size)
			return wt_seterr(
			    err, WT_ESHAPE,
			    "tensor '%s': %" PRId64
			    " rows, but timm's AttentionPoolLatent kv holds 2 x "
			    "vision_config.width = %" PRId64
			    " (k and v); the checkpoint does not match its vision_config",
			    kv[k], t->shape[0], 2 * c->v_hidden_size);
	}
	return WT_OK;
}

/* The loader's vision fields and the language model's sizes (shardmap_deepseek_vl2_check). */
static int dsvl2_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_deepseek_vl2_check(c, "", err);
}

int shardmap_deepseek_vl2_check(const ckpt_config *c, const char *as, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type deepseek_vl_v2 with its "
		                 "language_config, vision_config and projector_config "
		                 "(DeepseekVLV2Config)%s",
		                 c->architecture, as);
	if (strcmp(c->lm_model_type, "deepseek") == 0)
		return shardmap_check_head_quotient(c, "language_config.hidden_size",
		                                    "language_config.num_attention_heads",
		                                    "language_config.head_dim", err);
	if (c->kv_lora_rank <= 0 || c->qk_nope_head_dim <= 0 || c->qk_rope_head_dim <= 0 ||
	    c->v_head_dim <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: language_config builds MLA (use_mla true) and needs "
		                 "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim "
		                 "above 0 (deepseek-vl2-small: 512, 128, 64, 128)");
	return WT_OK;
}

static const sm_family dsvl2_v3, dsvl2_mha;

/* The table of the architecture vLLM's deepseek_vl2.py picks from language_config. */
static const sm_family *dsvl2_variant(const ckpt_config *c)
{
	if (strcmp(c->lm_model_type, "deepseek_v3") == 0)
		return &dsvl2_v3;
	return strcmp(c->lm_model_type, "deepseek") == 0 ? &dsvl2_mha : NULL;
}

static const char *const dsvl2_archs[] = {"DeepseekVLV2ForCausalLM", NULL};

#define DSVL2_FAMILY(R)                                                                            \
	.name = "deepseek_vl2", .archs = dsvl2_archs, .rules = R, .n_rules = SM_NRULES(R),         \
	.layer_is_moe = shardmap_moe_deepseek, .layer_prefix = "language.model.layers.",           \
	.check = dsvl2_check, .check_extra = dsvl2_extra, .vision_siglip = true, .siglip2 = true,  \
	.moe_keys = "language_config.first_k_dense_replace, moe_layer_freq"

/* V3's MTP layers (index >= num_hidden_layers) are dropped as the deepseek_v3 family's. */
static const sm_family dsvl2_v3 = {DSVL2_FAMILY(dsvl2_v3_rules), .drop_extra_layers = true};
static const sm_family dsvl2_mha = {DSVL2_FAMILY(dsvl2_mha_rules)};

const sm_family shardmap_family_deepseek_vl2 = {DSVL2_FAMILY(dsvl2_v2_rules),
                                                .variant_for = dsvl2_variant};
