/*
 * family_dots_ocr.c — dots.ocr (DotsOCRForCausalLM, model_type dots_ocr: rednote-hilab/dots.ocr,
 * remote code; docs/format.md section 2.7), cut as vLLM's dots_ocr.py / qwen2.py load it
 * (vllm-project/vllm dots_ocr.py 01463071: its hf_to_vllm_mapper, packed_modules_mapping,
 * DotsSwiGLUFFN.load_weights and the module tree of DotsVisionTransformer).
 *
 * Runtime names keep the checkpoint's (SHARDS.md): the mapper only moves model. / lm_head. under
 * language_model.; the fused leaves take vLLM's names.
 *
 * - The language model: Qwen2ForCausalLM of the top-level config (DotsOCRConfig is a Qwen2Config):
 *   the qwen2 family's rows (embedding and lm_head by padded vocabulary rows, q/k/v with their
 *   biases into qkv_proj [q_r; k_r; v_r], gate / up into gate_up_proj, o_proj / down_proj by
 *   columns, norms whole; lm_head skipped when tied), byte for byte the qwen2 family's ranks.
 * - The tower vision_tower.* (DotsVisionTransformer, built with the quantization config):
 *   patch_embed.patchifier.proj (a plain Conv2d [VE, VCH, VP, VP] with its bias) and
 *   patchifier.norm (RMSNorm [VE]) whole, never quantized; per block blocks.{i}.: attn.qkv
 *   [3 VE, VE] ([q; k; v] rows) by heads into [q_r; k_r; v_r] (QKVParallelLinear, heads == kv
 *   heads), attn.proj by columns (RowParallelLinear), mlp.fc1 / mlp.fc3 by rows into mlp.fc13
 *   [fc1_r; fc3_r] (MergedColumnParallelLinear: DotsSwiGLUFFN.load_weights' fc1 -> shard 0,
 *   fc3 -> shard 1), mlp.fc2 by columns, all quantized; their biases only under
 *   vision_config.use_bias (the qkv bias split as its weight, fc13's as its weight, proj's and
 *   fc2's whole); norm1 / norm2 (RMSNorm) whole. post_trunk_norm (RMSNorm) whole, built only
 *   when vision_config.post_norm (every block is built: require_post_norm None).
 * - The patch merger vision_tower.merger.* (PatchMerger, built WITHOUT the quantization config):
 *   ln_q (LayerNorm [VE], weight and bias) whole; mlp.0 [VE m^2, VE m^2] (ColumnParallelLinear)
 *   and its bias by rows; mlp.2 [hid, VE m^2] (RowParallelLinear) by columns, its bias whole;
 *   never quantized.
 * - vLLM skips: lm_head when tied (Qwen2ForCausalLM), rotary_emb.inv_freq, and the tower's
 *   rotary_pos_emb.inv_freq (a non-persistent buffer; AutoWeightsLoader's
 *   ROTARY_EMBEDS_UNUSED_WEIGHTS skips it should a checkpoint hold it): skipped here. The mapper's
 *   other spelling of the tower's attention (attn.qkv_proj / attn.out_proj) is refused here
 *   (dots_ocr_names) rather than served under a second name.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"

#define DT_V  "vision_tower."
#define DT_VB DT_V "blocks.{i}."
#define DT_M  DT_V "merger."

/* A [VE] tensor of every block, whole, under condition c. */
#define DT_VB_REPL(n, c)                                                                           \
	SM_RULE(DT_VB n, DT_VB n, SM_K_REPL, 0, SM_U_NONE, c, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
/* A tensor outside the blocks, whole, never quantized. */
#define DT_REPL(n, nd, d0, d1, c) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, c, 0, nd, d0, d1)
/* fc1 (part 0) / fc3 (part 1) into fc13 by rows: weight and (use_bias) bias. */
#define DT_FC13(x, part)                                                                           \
	SM_RULE(DT_VB "mlp." x ".weight", DT_VB "mlp.fc13.weight", SM_K_ROWS, part, SM_U_VI,       \
	        SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                             \
	    SM_RULE(DT_VB "mlp." x ".bias", DT_VB "mlp.fc13.bias", SM_K_ROWS, part, SM_U_VI,       \
	            SM_C_DTBIAS, SM_F_VIS, 1, SM_D_VI, SM_D_ANY)

/* clang-format off */
static const sm_rule dots_ocr_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    {DT_V "patch_embed.patchifier.proj.weight", DT_V "patch_embed.patchifier.proj.weight",
     SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4, {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    DT_REPL(DT_V "patch_embed.patchifier.proj.bias", 1, SM_D_VE, SM_D_ANY, SM_C_ALL),
    DT_REPL(DT_V "patch_embed.patchifier.norm.weight", 1, SM_D_VE, SM_D_ANY, SM_C_ALL),
    DT_VB_REPL("norm1.weight", SM_C_ALL),
    DT_VB_REPL("norm2.weight", SM_C_ALL),
    SM_RULE(DT_VB "attn.qkv.weight", DT_VB "attn.qkv.weight", SM_K_QKVF, 0, SM_U_VHEADS,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),
    SM_RULE(DT_VB "attn.qkv.bias", DT_VB "attn.qkv.bias", SM_K_QKVF, 0, SM_U_VHEADS,
            SM_C_DTBIAS, SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),
    SM_RULE(DT_VB "attn.proj.weight", DT_VB "attn.proj.weight", SM_K_COLS, 0, SM_U_VHEADS,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    DT_VB_REPL("attn.proj.bias", SM_C_DTBIAS),
    DT_FC13("fc1", 0),
    DT_FC13("fc3", 1),
    SM_RULE(DT_VB "mlp.fc2.weight", DT_VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),
    DT_VB_REPL("mlp.fc2.bias", SM_C_DTBIAS),
    DT_REPL(DT_V "post_trunk_norm.weight", 1, SM_D_VE, SM_D_ANY, SM_C_DTPOST),
    DT_REPL(DT_M "ln_q.weight", 1, SM_D_VE, SM_D_ANY, SM_C_ALL),
    DT_REPL(DT_M "ln_q.bias", 1, SM_D_VE, SM_D_ANY, SM_C_ALL),
    SM_RULE(DT_M "mlp.0.weight", DT_M "mlp.0.weight", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, 0, 2,
            SM_D_VM, SM_D_VM),
    SM_RULE(DT_M "mlp.0.bias", DT_M "mlp.0.bias", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, 0, 1,
            SM_D_VM, SM_D_ANY),
    SM_RULE(DT_M "mlp.2.weight", DT_M "mlp.2.weight", SM_K_COLS, 0, SM_U_VM, SM_C_ALL, 0, 2,
            SM_D_HID, SM_D_VM),
    DT_REPL(DT_M "mlp.2.bias", 1, SM_D_HID, SM_D_ANY, SM_C_ALL),
};
/* clang-format on */

/* The mapper's other attention spelling in tensor name n (attn.qkv_proj / attn.out_proj of a
 * block), or NULL. */
static const char *other_spelling(const char *n)
{
	if (strncmp(n, DT_V "blocks.", strlen(DT_V "blocks.")) != 0)
		return NULL;
	return strstr(n, ".attn.qkv_proj.") != NULL   ? "attn.qkv_proj"
	       : strstr(n, ".attn.out_proj.") != NULL ? "attn.out_proj"
	                                              : NULL;
}

/* The tower's rotary_pos_emb.inv_freq: AutoWeightsLoader skips any name holding it. */
static bool dots_ocr_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strstr(cn, "rotary_pos_emb.inv_freq") != NULL;
}

/* vLLM's hf_to_vllm_mapper renames the tower's attn.qkv_proj / attn.out_proj onto attn.qkv /
 * attn.proj; the released checkpoint holds the latter, which this table cuts. Checked before the
 * tensors are mapped (check_names), so the reason comes before an unknown / missing tensor. */
static int dots_ocr_names(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	(void)c;
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const char *n = ckpt_tensor_at(ck, k)->name, *o = other_spelling(n);
		if (o != NULL)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "tensor '%s': dots.ocr's tower attention is cut under the "
			                 "released names attn.qkv / attn.proj only (vLLM's mapper "
			                 "renames %s onto them); rename the checkpoint's "
			                 "attn.qkv_proj to attn.qkv and attn.out_proj to attn.proj",
			                 n, o);
	}
	return WT_OK;
}

/* The loader's dots_ocr fields; the tower's heads and the merger's output width. */
static int dots_ocr_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->dt_config)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type dots_ocr (DotsOCRConfig, whose "
		                 "vision_config vLLM's dots_ocr.py reads)",
		                 c->architecture);
	if (c->v_hidden_size % c->v_num_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.num_attention_heads %" PRId64
		                 " does not divide embed_dim %" PRId64
		                 " (vLLM's DotsVisionAttention divides them); give a divisor "
		                 "(dots.ocr's: 12 heads of 1536)",
		                 c->v_num_heads, c->v_hidden_size);
	if (c->v_out_hidden_size != c->hidden_size)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.hidden_size %" PRId64
		    " must equal the language model's hidden_size %" PRId64
		    " (the merger's mlp.2 output is its input embedding); give %" PRId64,
		    c->v_out_hidden_size, c->hidden_size, c->hidden_size);
	return WT_OK;
}

static const char *const dots_ocr_archs[] = {"DotsOCRForCausalLM", NULL};

const sm_family shardmap_family_dots_ocr = {
    .name = "dots_ocr",
    .archs = dots_ocr_archs,
    .rules = dots_ocr_rules,
    .n_rules = SM_NRULES(dots_ocr_rules),
    .layer_prefix = "model.layers.",
    .check = dots_ocr_check,
    .check_names = dots_ocr_names,
    .drop_canon = dots_ocr_drop,
    .vision_gated = true,
    .depth_key = "vision_config.num_hidden_layers",
    .vis_heads_key = "vision_config.num_attention_heads",
};
