/*
 * family_paddleocr_vl.c — PaddleOCR-VL (PaddleOCRVLForConditionalGeneration, model_type
 * paddleocr_vl: PaddlePaddle/PaddleOCR-VL, remote code; docs/format.md section 2.7), cut as
 * vLLM's paddleocr_vl.py loads it (a bare AutoWeightsLoader whose hf_to_vllm_mapper only moves
 * model.* / lm_head.* under language_model.; SHARDS.md keeps the checkpoint's names).
 *
 * - The language model: Ernie4_5ForCausalLM (vLLM's LlamaForCausalLM) on the top-level config:
 *   the ernie4_5 family's rows (embed_tokens / lm_head by padded vocabulary rows, q/k/v fused by
 *   heads, gate / up merged, o_proj / down_proj by columns, the RMSNorms replicated), the same
 *   bytes as the ernie4_5 family's ranks of the same weights. vLLM's Llama builds no bias from
 *   use_bias: true is refused (config_paddleocr_vl.c reads the top level's other keys).
 * - The tower visual.vision_model.* (paddleocr_vl.py's own SiglipVisionModel, given the
 *   quant_config): SigLIP's rows (SM_RULES_SIGLIP_TOWER: q/k/v with their biases fused by heads
 *   into self_attn.qkv_proj, QKVParallelLinear with KV = H; out_proj by columns, its bias
 *   replicated; siglip.py's SiglipMLP fc1 by rows, fc2 by columns, quantized only when
 *   hidden_size and intermediate_size are both multiples of 64, which PaddleOCR-VL's 1152 /
 *   4304 are not; the LayerNorms, the patch Conv2d with its bias, the position table
 *   [(image / patch)^2, VE] and post_layernorm replicated). The mapper drops any name holding
 *   head.attention, head.layernorm, head.mlp, head.probe or packing_position_embedding: a
 *   SigLIP pooling head and Keye's packing table are skipped here.
 * - The projector mlp_AR (Projector, merge_kernel_size fixed (2, 2), built of plain torch
 *   modules without the quant_config): pre_norm (nn.LayerNorm [VE]), linear_1 (nn.Linear
 *   [4 VE, 4 VE] with its bias) and linear_2 (nn.Linear [hid, 4 VE] with its bias), every one
 *   whole on every rank and never quantized.
 */
#include <string.h>

#include "shardmap/family_rules.h"

#define PV_VT "visual.vision_model."
#define PV_P  "mlp_AR."

#define PV_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

/* The language model (the ernie4_5 family's rows), the tower and mlp_AR (VM: VE x
 * spatial_merge_size^2, which paddleocr_vl_check holds at 2). */
static const sm_rule paddleocr_vl_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_SIGLIP_TOWER(PV_VT),
    PV_REPL(PV_P "pre_norm.weight", 1, SM_D_VE, SM_D_ANY),
    PV_REPL(PV_P "pre_norm.bias", 1, SM_D_VE, SM_D_ANY),
    PV_REPL(PV_P "linear_1.weight", 2, SM_D_VM, SM_D_VM),
    PV_REPL(PV_P "linear_1.bias", 1, SM_D_VM, SM_D_ANY),
    PV_REPL(PV_P "linear_2.weight", 2, SM_D_HID, SM_D_VM),
    PV_REPL(PV_P "linear_2.bias", 1, SM_D_HID, SM_D_ANY),
};

/* vision_config's sizes, given (the remote PaddleOCRVisionConfig and transformers 5's
 * differ, so neither default is assumed), the 2 x 2 merge vLLM's projector hard-codes, the
 * heads splitting the width and a patch grid; use_bias false (vLLM's Llama builds no
 * biases from it and would skip them). */
static int paddleocr_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->use_bias)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: use_bias is true, but vLLM builds PaddleOCR-VL's "
		    "language model as LlamaForCausalLM, which reads attention_bias / "
		    "mlp_bias, not use_bias, and skips the q/k/v / o_proj / MLP biases; "
		    "PaddleOCR-VL's release sets false");
	return shardmap_vision_mlp_ar_check(c,
	                                    "the remote PaddleOCRVisionConfig's default and "
	                                    "transformers 5's differ",
	                                    "PaddleOCR-VL", err);
}

/* SiglipVisionModel's mapper drops a name holding any of these (orig_to_new_substr to None):
 * a SigLIP pooling head and KeyeVisionEmbeddings' packing table, which the tower lacks. */
static bool paddleocr_vl_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	static const char *const gone[] = {"head.attention", "head.layernorm", "head.mlp",
	                                   "head.probe", "packing_position_embedding"};
	if (strncmp(cn, PV_VT, sizeof(PV_VT) - 1) != 0)
		return false;
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++)
		if (strstr(cn, gone[k]) != NULL)
			return true;
	return false;
}

/* SiglipMLP's fc1 / fc2 built without the quant_config when the tower's sizes are not both
 * multiples of 64 (PaddleOCR-VL's 1152 / 4304). */
static bool paddleocr_vl_float(const ckpt_config *c, const char *cn)
{
	return shardmap_siglip_mlp_float(c, PV_VT, cn);
}

static const char *const paddleocr_vl_archs[] = {"PaddleOCRVLForConditionalGeneration", NULL};

const sm_family shardmap_family_paddleocr_vl = {
    .name = "paddleocr_vl",
    .archs = paddleocr_vl_archs,
    .rules = paddleocr_vl_rules,
    .n_rules = SM_NRULES(paddleocr_vl_rules),
    .layer_prefix = "model.layers.",
    .check = paddleocr_vl_check,
    .drop_canon = paddleocr_vl_drop,
    .keep_float = paddleocr_vl_float,
    .vision_gated = true,
    .vision_siglip = true,
};
