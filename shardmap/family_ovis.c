/*
 * family_ovis.c — Ovis (Ovis, model_type ovis: AIDC-AI/Ovis2-1B, -2B, -4B, -8B, -16B, -34B and
 * Ovis1.6-Llama3.2-3B, remote code; docs/format.md section 2.7), cut as vLLM's ovis.py / aimv2.py
 * (and siglip.py) load it (a bare AutoWeightsLoader: the checkpoint's names llm.*,
 * visual_tokenizer.*, vte.*; AIMv2Model's / SiglipVisionModel's own load_weights under
 * visual_tokenizer.backbone.).
 *
 * - The language model (init_vllm_registered_model of llm_config, model_type qwen2 or llama)
 *   under llm.: Llama's table with Qwen2's q/k/v biases (llm.model.*, llm.lm_head.weight), the
 *   same bytes as the qwen2 / llama families' ranks of the same weights; tied by llm_config.
 * - The visual tokenizer's AIMv2 backbone (AIMv2Model with require_post_norm False, built with
 *   the quantization config): preprocessor.patchifier.proj (Conv2d [VE, VCH, VP, VP] with its
 *   bias), patchifier.norm [VE] and preprocessor.pos_embed [1, (image / patch)^2, VE] whole; per
 *   block trunk.blocks.{i}.: attn.qkv [3 VE, VE] ([q; k; v] rows, its bias with qkv_bias) by
 *   heads into [q_r; k_r; v_r] (QKVParallelLinear), attn.proj by columns (RowParallelLinear, its
 *   bias with use_bias whole), mlp.fc1 / mlp.fc3 by rows into mlp.fc13 [fc1_r; fc3_r]
 *   (MergedColumnParallelLinear: load_weights' stacked_params_mapping, shards 0 and 1, biases
 *   with use_bias), mlp.fc2 by columns (its bias whole), Linears quantized; norm_1 / norm_2
 *   whole. trunk.post_trunk_norm is skipped (vLLM builds none: load_weights skips it). vLLM
 *   divides the heads by tp_size (divide() asserts): a tp_size not dividing them is refused.
 * - Ovis1.6's SigLIP backbone (backbone_config.model_type siglip_vision_model: vLLM's
 *   SiglipVisionModel, built with the quantization config, every block and post_layernorm
 *   built) under visual_tokenizer.backbone.vision_model.: LLaVA's SigLIP rows (q/k/v with biases
 *   fused by heads into qkv_proj, out_proj / fc2 by columns, fc1 by rows, the patch Conv2d,
 *   position table, LayerNorms and row-parallel biases whole; SiglipMLPs whose sizes are not
 *   multiples of 64 built unquantized, shardmap_siglip_mlp_float), its pooling head
 *   (vision_use_head not false) as LLaVA's; the siglip_tower table.
 * - The visual tokenizer's head: head.0 (ReplicatedLinear without the quantization config,
 *   no bias) [vocab_size - 5, VE x hidden_stride^2] and head.1 (LayerNorm [vocab_size - 5],
 *   weight and bias) whole on every rank, never quantized.
 * - vte (VisualEmbedding, a plain nn.Embedding) [vocab_size, hidden_size] whole on every rank,
 *   never quantized.
 *
 * Ovis2.5 (Ovis2_5, model_type ovis2_5) is the family's arch_variant: family_ovis2_5.c.
 *
 * Followed: vllm-project/vllm ovis.py 03356f8c and aimv2.py 712378a9 (the stored versions with
 * the explicit stacked_params_mapping; the newer aimv2.py 055e47c2 maps the same names through a
 * WeightsMapper).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_ovis.h"

#undef SM_LAYER
#define SM_LAYER "llm.model.layers.{i}."

#define OV_VT "visual_tokenizer.backbone."
#define OV_VB OV_VT "trunk.blocks.{i}."
#define OV_SV OV_VT "vision_model."

/* A [VE] tensor of every block, whole on every rank, under condition c. */
#define OV_VB_REPL(n, c)                                                                           \
	SM_RULE(OV_VB n, OV_VB n, SM_K_REPL, 0, SM_U_NONE, c, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
/* fc1 (part 0) / fc3 (part 1) into fc13 by rows: weight and (use_bias) bias. */
#define OV_FC13(x, part)                                                                           \
	SM_RULE(OV_VB "mlp." x ".weight", OV_VB "mlp.fc13.weight", SM_K_ROWS, part, SM_U_VI,       \
	        SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),                             \
	    SM_RULE(OV_VB "mlp." x ".bias", OV_VB "mlp.fc13.bias", SM_K_ROWS, part, SM_U_VI,       \
	            SM_C_OVBIAS, SM_F_VIS, 1, SM_D_VI, SM_D_ANY)

/* clang-format off */
static const sm_rule ovis_rules[] = {
    OV_LM_RULES,
    {OV_VT "preprocessor.patchifier.proj.weight", OV_VT "preprocessor.patchifier.proj.weight",
     SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4, {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    OV_REPL(OV_VT "preprocessor.patchifier.proj.bias", 1, SM_D_VE, SM_D_ANY),
    OV_REPL(OV_VT "preprocessor.patchifier.norm.weight", 1, SM_D_VE, SM_D_ANY),
    SM_RULE3(OV_VT "preprocessor.pos_embed", OV_VT "preprocessor.pos_embed", SM_K_REPL, 0,
             SM_U_NONE, SM_C_ALL, 0, SM_D_ONE, SM_D_VNP, SM_D_VE),
    OV_VB_REPL("norm_1.weight", SM_C_ALL),
    OV_VB_REPL("norm_2.weight", SM_C_ALL),
    SM_RULE(OV_VB "attn.qkv.weight", OV_VB "attn.qkv.weight", SM_K_QKVF, 0, SM_U_VHEADS,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),
    SM_RULE(OV_VB "attn.qkv.bias", OV_VB "attn.qkv.bias", SM_K_QKVF, 0, SM_U_VHEADS,
            SM_C_OVQKVB, SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),
    SM_RULE(OV_VB "attn.proj.weight", OV_VB "attn.proj.weight", SM_K_COLS, 0, SM_U_VHEADS,
            SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    OV_VB_REPL("attn.proj.bias", SM_C_OVBIAS),
    OV_FC13("fc1", 0),
    OV_FC13("fc3", 1),
    SM_RULE(OV_VB "mlp.fc2.weight", OV_VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),
    OV_VB_REPL("mlp.fc2.bias", SM_C_OVBIAS),
    OV_HEAD_RULES,
};
/* clang-format on */

/* Ovis1.6: the SigLIP backbone (vLLM's SiglipVisionModel), its pooling head. */
static const sm_rule ovis_siglip_rules[] = {
    OV_LM_RULES,
    SM_RULES_SIGLIP_TOWER(OV_SV),
    SM_RULES_SIGLIP_POOL_HEAD(OV_SV "head.", SM_C_OVHEAD),
    OV_HEAD_RULES,
};

/* SiglipMLP (the blocks' and the pooling head's) built without the quantization config when
 * its sizes are not multiples of 64, as LLaVA's SigLIP tower. */
static bool ovis_siglip_float(const ckpt_config *c, const char *cn)
{
	return shardmap_siglip_mlp_float(c, OV_SV, cn);
}

#define OV_POST OV_VT "trunk.post_trunk_norm."

/* The backbone's block of canonical name cn (-1: not one). */
static int64_t ovis_block(const char *cn)
{
	return shardmap_index_after(cn, OV_VT "trunk.blocks.");
}

/* trunk.post_trunk_norm: vLLM's AIMv2Model (require_post_norm False) builds none and its
 * load_weights skips it. A block past backbone_config.num_hidden_layers: listed as skipped
 * here, then refused by ovis_extra with the reason (before a shape error would name
 * vision_config). */
static bool ovis_drop(const ckpt_config *c, const char *cn)
{
	return strncmp(cn, OV_POST, strlen(OV_POST)) == 0 || ovis_block(cn) >= c->v_num_layers;
}

/* A block vLLM does not build: AIMv2Model.load_weights indexes params_dict[name] and has no
 * parameter for it. */
static int ovis_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const char *n = ckpt_tensor_at(ck, k)->name;
		if (ovis_block(n) >= c->v_num_layers)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': block %" PRId64
			    " is past visual_tokenizer_config.backbone_config."
			    "num_hidden_layers %" PRId64
			    " (the blocks vLLM's AIMv2Model builds; its load_weights has "
			    "no parameter for it): remove the blocks from %" PRId64
			    " on, or give num_hidden_layers the checkpoint's block count",
			    n, ovis_block(n), c->v_num_layers, c->v_num_layers);
	}
	return WT_OK;
}

/* The loader's Ovis fields (model_type ovis); the backbone's heads and patch grid; the vte's
 * width (the top level's hidden_size) against the language model's. */
static int ovis_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision || c->ov_vocab <= 5 || c->ov25)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type ovis with its "
		                 "visual_tokenizer_config and llm_config (OvisConfig)",
		                 c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads != 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: visual_tokenizer_config.backbone_config "
		    "num_attention_heads %" PRId64 " does not divide hidden_size %" PRId64
		    " (vLLM's AIMv2Attention raises); give a divisor (Ovis2's AIMv2: 8 "
		    "heads of 1024)",
		    c->v_num_attn_heads, c->v_hidden_size);
	int64_t grid = (c->v_image_size + c->v_patch_size - 1) / c->v_patch_size;
	if (c->v_image_size < c->v_patch_size || grid % c->v_spatial_merge_size != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: visual_tokenizer_config: the patch grid ceil(image_size "
		    "%" PRId64 " / patch_size %" PRId64 ") = %" PRId64
		    " is not a multiple of hidden_stride %" PRId64
		    " (vLLM's get_image_segment_len asserts it; Ovis2's: 448 / 14 = 32, "
		    "stride 2)",
		    c->v_image_size, c->v_patch_size, grid, c->v_spatial_merge_size);
	if (c->ov_hidden < 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: the top level's hidden_size is missing: vLLM's Ovis "
		    "builds vte as VisualEmbedding(visual_tokenizer_config.vocab_size, "
		    "hidden_size); give llm_config.hidden_size (%" PRId64 ") there",
		    c->hidden_size);
	if (c->ov_hidden != c->hidden_size)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: the top level's hidden_size %" PRId64
		    " is not llm_config.hidden_size %" PRId64
		    ": vte (that wide) embeds the language model's inputs; give %" PRId64,
		    c->ov_hidden, c->hidden_size, c->hidden_size);
	return WT_OK;
}

static const char *const ovis_archs[] = {"Ovis", "Ovis2_5", NULL};

#define OV_FAMILY(R)                                                                               \
	.name = "ovis", .archs = ovis_archs, .rules = R, .n_rules = SM_NRULES(R),                  \
	.layer_prefix = "llm.model.layers.", .check = ovis_check, .vision_siglip = true,           \
	.vision_gated = true, .ovis = true,                                                        \
	.depth_key = "visual_tokenizer_config.backbone_config.num_hidden_layers"

static const sm_family ovis_siglip = {OV_FAMILY(ovis_siglip_rules),
                                      .keep_float = ovis_siglip_float};

const sm_family shardmap_family_ovis = {OV_FAMILY(ovis_rules), .check_extra = ovis_extra,
                                        .drop_canon = ovis_drop, .siglip_tower = &ovis_siglip,
                                        .arch_variant = &shardmap_family_ovis2_5};
