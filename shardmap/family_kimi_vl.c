/*
 * family_kimi_vl.c — Kimi-VL (KimiVLForConditionalGeneration, model_type kimi_vl:
 * moonshotai/Kimi-VL-A3B-Instruct, -Thinking, -Thinking-2506, remote code; docs/format.md
 * section 2.7), cut as vLLM's kimi_vl.py / moonvit.py load it (AutoWeightsLoader, no renames:
 * the released names vision_tower.*, multi_modal_projector.*, language_model.*).
 *
 * - The language model (init_vllm_registered_model on text_config as DeepseekV2ForCausalLM)
 *   under `language_model.`: DeepSeek-V3's rules (family_deepseek.c: MLA with q_proj or the
 *   q_a / q_b pair by q_lora_rank, kv_b_proj by heads, o_proj by columns; the dense MLP below
 *   first_k_dense_replace, the router replicated, the routed experts stacked, the shared
 *   experts merged), the same bytes as the deepseek_v3 family's ranks of the same weights.
 *   gate.e_score_correction_bias exactly when text_config.topk_method is noaux_tc (Kimi-VL's:
 *   vLLM's DeepseekV2MoE builds it then only; otherwise the deepseek_v2 family's rows). The
 *   MTP layers (num_hidden_layers .. + num_nextn_predict_layers - 1) are dropped as
 *   DeepseekV2ForCausalLM.load_weights skips them (get_spec_layer_idx_from_weight_name); a
 *   layer past them is refused (vLLM has no parameter for it).
 * - MoonViT (vision_tower.*, built without the quantization config: never quantized):
 *   patch_embed.proj (Conv2d [VE, 3, P, P] with its bias) and patch_embed.pos_emb.weight
 *   [init_pos_emb_height, init_pos_emb_width, VE] whole; per block norm0 / norm1 (LayerNorms
 *   with biases) whole, wqkv [3 VE, VE] ([q; k; v] rows) and its bias by heads into
 *   [q_r; k_r; v_r] (QKVParallelLinear, kv heads = heads), wo by columns (RowParallelLinear,
 *   its bias whole), mlp.fc0 by rows with its bias (ColumnParallelLinear), mlp.fc1 by columns
 *   (RowParallelLinear, its bias whole); encoder.final_layernorm whole. vLLM divides
 *   num_attention_heads by tp_size (divide() asserts): a tp_size not dividing them is refused.
 * - KimiVLMultiModalProjector (built without the quantization config): pre_norm (LayerNorm
 *   [VE]), linear_1 [VM, VM] and linear_2 [hid, VM] (ReplicatedLinear, VM = VE x kh x kw of
 *   merge_kernel_size) with their biases, whole on every rank, never quantized.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define KV_LP "language_model.model.layers."
#define KV_VT "vision_tower."
#define KV_VB KV_VT "encoder.blocks.{i}."
#define KV_P  "multi_modal_projector."

/* A [VE] tensor of every block, whole on every rank. */
#define KV_VB_REPL(n)                                                                              \
	SM_RULE(KV_VB n, KV_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
/* A block tensor split by kind k in unit u (never quantized). */
#define KV_VB_SPLIT(n, k, u, nd, d0, d1)                                                           \
	SM_RULE(KV_VB n, KV_VB n, k, 0, u, SM_C_ALL, SM_F_VIS, nd, d0, d1)
/* A tensor of the patch embedding, final norm or projector, whole, never quantized. */
#define KV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

/* MoonViT and the projector, as vLLM's moonvit.py / kimi_vl.py build them. */
/* clang-format off */
#define KV_TOWER_RULES                                                                             \
	{KV_VT "patch_embed.proj.weight", KV_VT "patch_embed.proj.weight", SM_K_REPL, 0,           \
	 SM_U_NONE, SM_C_ALL, 0, 4, {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},                        \
	KV_REPL(KV_VT "patch_embed.proj.bias", 1, SM_D_VE, SM_D_ANY),                              \
	SM_RULE3(KV_VT "patch_embed.pos_emb.weight", KV_VT "patch_embed.pos_emb.weight",           \
	         SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_VPH, SM_D_VPW, SM_D_VE),               \
	KV_VB_REPL("norm0.weight"), KV_VB_REPL("norm0.bias"),                                      \
	KV_VB_REPL("norm1.weight"), KV_VB_REPL("norm1.bias"),                                      \
	KV_VB_SPLIT("wqkv.weight", SM_K_QKVF, SM_U_VHEADS, 2, SM_D_V3E, SM_D_VE),                  \
	KV_VB_SPLIT("wqkv.bias", SM_K_QKVF, SM_U_VHEADS, 1, SM_D_V3E, SM_D_ANY),                   \
	KV_VB_SPLIT("wo.weight", SM_K_COLS, SM_U_VHEADS, 2, SM_D_VE, SM_D_VE),                     \
	KV_VB_REPL("wo.bias"),                                                                     \
	KV_VB_SPLIT("mlp.fc0.weight", SM_K_ROWS, SM_U_VI, 2, SM_D_VI, SM_D_VE),                    \
	KV_VB_SPLIT("mlp.fc0.bias", SM_K_ROWS, SM_U_VI, 1, SM_D_VI, SM_D_ANY),                     \
	KV_VB_SPLIT("mlp.fc1.weight", SM_K_COLS, SM_U_VI, 2, SM_D_VE, SM_D_VI),                    \
	KV_VB_REPL("mlp.fc1.bias"),                                                                \
	KV_REPL(KV_VT "encoder.final_layernorm.weight", 1, SM_D_VE, SM_D_ANY),                     \
	KV_REPL(KV_VT "encoder.final_layernorm.bias", 1, SM_D_VE, SM_D_ANY),                       \
	KV_REPL(KV_P "pre_norm.weight", 1, SM_D_VE, SM_D_ANY),                                     \
	KV_REPL(KV_P "pre_norm.bias", 1, SM_D_VE, SM_D_ANY),                                       \
	KV_REPL(KV_P "linear_1.weight", 2, SM_D_VM, SM_D_VM),                                      \
	KV_REPL(KV_P "linear_1.bias", 1, SM_D_VM, SM_D_ANY),                                       \
	KV_REPL(KV_P "linear_2.weight", 2, SM_D_HID, SM_D_VM),                                     \
	KV_REPL(KV_P "linear_2.bias", 1, SM_D_HID, SM_D_ANY)
/* clang-format on */

/* DeepSeek-V3's language model (family_deepseek.c's rows) under language_model. */
#define KV_LM_RULES                                                                                \
	SM_RULES_TOP_AT("language_model."), SM_RULES_LNORM, SM_RULES_MLA("self_attn."),            \
	    DEEPSEEK_RULES_MOE

/* topk_method noaux_tc (Kimi-VL's): the correction bias of every MoE layer. */
static const sm_rule kv_rules[] = {
    KV_LM_RULES,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    KV_TOWER_RULES,
};

/* Any other topk_method (DeepseekV2Config's greedy): no correction bias. */
static const sm_rule kv_greedy_rules[] = {
    KV_LM_RULES,
    KV_TOWER_RULES,
};

/* The language model's layer of canonical name cn (-1: not one). */
static int64_t kv_layer(const char *cn)
{
	return shardmap_index_after(cn, KV_LP);
}

#define KV_BIAS ".mlp.gate.e_score_correction_bias"

/* A correction bias under a topk_method other than noaux_tc (vLLM's DeepseekV2MoE builds none):
 * listed as skipped, then refused by kv_extra naming topk_method. */
static bool kv_stray_bias(const ckpt_config *c, const char *cn)
{
	size_t n = strlen(cn), b = strlen(KV_BIAS);
	return !c->kv_noaux && kv_layer(cn) >= 0 && n > b && strcmp(cn + n - b, KV_BIAS) == 0;
}

/* A layer past num_hidden_layers: an MTP layer (num_nextn_predict_layers of them) is skipped
 * by DeepseekV2ForCausalLM.load_weights, so listed as skipped here; one past those is listed
 * too, then refused by kv_extra with the reason. */
static bool kv_drop(const ckpt_config *c, const char *cn)
{
	return kv_layer(cn) >= c->num_hidden_layers || kv_stray_bias(c, cn);
}

/* The loader's Kimi-VL fields (model_type kimi_vl); MoonViT's head geometry; the MLA sizes. */
static int kv_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision || c->v_pos_h <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type kimi_vl with its vision_config "
		                 "and text_config (KimiVLConfig)",
		                 c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads != 0)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	if ((c->v_hidden_size / c->v_num_attn_heads) % 4 != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config hidden_size %" PRId64
		                 " / num_attention_heads %" PRId64 " is a head of %" PRId64
		                 ", not a multiple of 4 (MoonViT's Rope2DPosEmb asserts it; "
		                 "Kimi-VL's: 1152 / 16 = 72)",
		                 c->v_hidden_size, c->v_num_attn_heads,
		                 c->v_hidden_size / c->v_num_attn_heads);
	if (c->kv_lora_rank <= 0 || c->qk_nope_head_dim <= 0 || c->qk_rope_head_dim <= 0 ||
	    c->v_head_dim <= 0)
		return wt_seterr(err, WT_ESHAPE,
		                 "config.json: Kimi-VL's text_config (DeepSeek-V3's MLA) needs "
		                 "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim "
		                 "(Kimi-VL-A3B: 512, 128, 64, 128)");
	return WT_OK;
}

/* A tensor of a language-model layer past the MTP layers: vLLM's DeepseekV2ForCausalLM has
 * no parameter for it (its load_weights skips num_nextn_predict_layers of them only). */
static int kv_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const char *n = ckpt_tensor_at(ck, k)->name;
		int64_t i = kv_layer(n);
		if (i < c->num_hidden_layers && kv_stray_bias(c, n))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': text_config.topk_method is not noaux_tc (greedy "
			    "when absent), and vLLM's DeepseekV2MoE builds "
			    "gate.e_score_correction_bias for noaux_tc only; give "
			    "topk_method \"noaux_tc\" (Kimi-VL's) or remove the tensor",
			    n);
		if (i >= c->num_hidden_layers && i - c->num_hidden_layers >= c->kv_nextn)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': layer %" PRId64
			    " is past text_config.num_hidden_layers %" PRId64
			    " and its num_nextn_predict_layers %" PRId64
			    " MTP layers, which vLLM's "
			    "DeepseekV2ForCausalLM.load_weights skips; it has no parameter for it: "
			    "remove the layer, or give num_nextn_predict_layers in text_config",
			    n, i, c->num_hidden_layers, c->kv_nextn);
	}
	return WT_OK;
}

static const sm_family kv_greedy;

/* The table without the correction bias unless topk_method is noaux_tc. */
static const sm_family *kv_variant(const ckpt_config *c)
{
	return c->kv_noaux ? NULL : &kv_greedy;
}

static const char *const kv_archs[] = {"KimiVLForConditionalGeneration", NULL};

#define KV_FAMILY(R)                                                                               \
	.name = "kimi_vl", .archs = kv_archs, .rules = R, .n_rules = SM_NRULES(R),                 \
	.layer_is_moe = shardmap_moe_deepseek, .layer_prefix = KV_LP, .check = kv_check,           \
	.check_extra = kv_extra, .drop_canon = kv_drop, .vision_gated = true,                      \
	.vision_siglip = true, .moonvit = true,                                                    \
	.moe_keys = "text_config.first_k_dense_replace, moe_layer_freq"

static const sm_family kv_greedy = {KV_FAMILY(kv_greedy_rules)};

const sm_family shardmap_family_kimi_vl = {KV_FAMILY(kv_rules), .variant_for = kv_variant};
