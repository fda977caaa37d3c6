/*
 * family_deepseek_ocr.c — DeepSeek-OCR (DeepseekOCRForCausalLM, model_type deepseek_vl_v2,
 * remote code: deepseek-ai/DeepSeek-OCR), cut as vLLM's deepseek_ocr.py / deepencoder.py /
 * clip.py / deepseek_v2.py load it (docs/format.md section 2.7). Runtime names keep the
 * checkpoint's (SHARDS.md: the module path; vLLM's hf_to_vllm_mapper only moves model.layers.,
 * model.embed_tokens., model.norm. and lm_head. under language_model and strips model. off the
 * rest): model.*, lm_head, model.sam_model.*, model.vision_model.*, model.projector.*,
 * model.image_newline, model.view_seperator (sic).
 *
 * - Language model: the architecture language_config names (DeepseekV2ForCausalLM), the rows
 *   of the table DeepSeek-VL2's loader would pick (lm_model_type): plain attention when
 *   qk_nope_head_dim and qk_rope_head_dim are 0 (the release's: deepseek_v2.py's
 *   DeepseekAttention, the deepseek family's q/k/v fused by heads into qkv_proj, o_proj by
 *   columns), MLA otherwise (the deepseek_v2 family's), with topk_method noaux_tc the
 *   deepseek_v3 family's (e_score_correction_bias, MTP layers dropped); DeepSeek's MoE rows
 *   under all three, shared with family_deepseek_vl2.c through family_rules.h.
 * - SAM ViT-B (model.sam_model., vLLM's build_sam_vit_b: plain nn.Linear / nn.LayerNorm /
 *   Conv2dLayer built without quant_config): every tensor whole on every rank, never
 *   quantized. patch_embed.proj [SW, 3, 16, 16] with bias, pos_embed [1, G, G, SW], per block
 *   norm1 / norm2, attn.qkv [3 SW, SW], attn.proj, attn.rel_pos_h / rel_pos_w [2 S - 1, SW /
 *   heads] (S = G for the global_attn_indexes blocks, the window 14 otherwise), mlp.lin1
 *   [4 SW, SW], mlp.lin2 with biases; neck.0 [256, SW, 1, 1], neck.1 / neck.3 (LayerNorm2d
 *   weight and bias [256]), neck.2 [256, 256, 3, 3], net_2 [D0, 256, 3, 3], net_3 [D1, D0,
 *   3, 3] (no biases). Their shapes are check_extra's (dsocr_extra); the blocks' {i} runs to
 *   the CLIP tower's count, the SAM ones past its own are refused there.
 * - CLIP-L (model.vision_model., DeepCLIPVisionTransformer with quant_config: vLLM's
 *   CLIPEncoder): class_embedding, patch_embedding (no bias), position_embedding
 *   [(image / patch)^2 + 1, VE], pre_layrnorm (sic) and every LayerNorm replicated; per block
 *   (transformer.layers.{i}.) self_attn.qkv_proj fused in the checkpoint [q; k; v] and loaded
 *   through QKVParallelLinear's fused loader: [q_r; k_r; v_r] by heads, with its bias;
 *   out_proj by columns (bias replicated), mlp.fc1 by rows, fc2 by columns (bias replicated),
 *   quantized; no post_layernorm.
 * - The projector (MlpProjector, projector_type linear: a plain nn.Linear) projector.layers
 *   [n_embed, input_dim] with its bias, image_newline and view_seperator [n_embed]
 *   (nn.Parameter): whole, never quantized.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"

#define OC_VT "model.vision_model."
#define OC_VB OC_VT "transformer.layers.{i}."
#define OC_ST "model.sam_model."
#define OC_SB OC_ST "blocks.{i}."

/* Whole on every rank, never quantized. */
#define OC_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
/* A CLIP block's LayerNorm or row-parallel bias, replicated. */
#define OC_VB_REPL(n)                                                                              \
	SM_RULE(OC_VB n, OC_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
/* A SAM block's tensor: whole, its shape and presence dsocr_extra's. */
#define OC_SB_R(n, nd)                                                                             \
	SM_RULE(OC_SB n, OC_SB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS | SM_F_OPT, nd,      \
	        SM_D_ANY, SM_D_ANY)
/* A SAM Conv2d weight outside the blocks, its shape dsocr_extra's. */
#define OC_CONV(n)                                                                                 \
	{                                                                                          \
		n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4,                                     \
		{                                                                                  \
			SM_D_ANY, SM_D_ANY, SM_D_ANY, SM_D_ANY                                     \
		}                                                                                  \
	}

#define OC_TOWER_RULES                                                                             \
	OC_REPL(OC_VT "embeddings.class_embedding", 1, SM_D_VE, SM_D_ANY), SM_VIT_PATCH(OC_VT),    \
	    OC_REPL(OC_VT "embeddings.position_embedding.weight", 2, SM_D_VNP, SM_D_VE),           \
	    OC_REPL(OC_VT "pre_layrnorm.weight", 1, SM_D_VE, SM_D_ANY),                            \
	    OC_REPL(OC_VT "pre_layrnorm.bias", 1, SM_D_VE, SM_D_ANY),                              \
	    OC_VB_REPL("layer_norm1.weight"), OC_VB_REPL("layer_norm1.bias"),                      \
	    SM_RULE(OC_VB "self_attn.qkv_proj.weight", OC_VB "self_attn.qkv_proj.weight",          \
	            SM_K_QKVF, 0, SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E,       \
	            SM_D_VE),                                                                      \
	    SM_RULE(OC_VB "self_attn.qkv_proj.bias", OC_VB "self_attn.qkv_proj.bias", SM_K_QKVF,   \
	            0, SM_U_VHEADS, SM_C_ALL, SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),                    \
	    SM_RULE(OC_VB "self_attn.out_proj.weight", OC_VB "self_attn.out_proj.weight",          \
	            SM_K_COLS, 0, SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE,        \
	            SM_D_VE),                                                                      \
	    OC_VB_REPL("self_attn.out_proj.bias"), OC_VB_REPL("layer_norm2.weight"),               \
	    OC_VB_REPL("layer_norm2.bias"), SM_RULES_VIS_FC(OC_VB), OC_VB_REPL("mlp.fc2.bias"),    \
	    OC_CONV(OC_ST "patch_embed.proj.weight"),                                              \
	    OC_REPL(OC_ST "patch_embed.proj.bias", 1, SM_D_ANY, SM_D_ANY),                         \
	    {OC_ST "pos_embed",                                                                    \
	     OC_ST "pos_embed",                                                                    \
	     SM_K_REPL,                                                                            \
	     0,                                                                                    \
	     SM_U_NONE,                                                                            \
	     SM_C_ALL,                                                                             \
	     0,                                                                                    \
	     4,                                                                                    \
	     {SM_D_ONE, SM_D_ANY, SM_D_ANY, SM_D_ANY}},                                            \
	    OC_SB_R("norm1.weight", 1), OC_SB_R("norm1.bias", 1), OC_SB_R("attn.qkv.weight", 2),   \
	    OC_SB_R("attn.qkv.bias", 1), OC_SB_R("attn.proj.weight", 2),                           \
	    OC_SB_R("attn.proj.bias", 1), OC_SB_R("attn.rel_pos_h", 2),                            \
	    OC_SB_R("attn.rel_pos_w", 2), OC_SB_R("norm2.weight", 1), OC_SB_R("norm2.bias", 1),    \
	    OC_SB_R("mlp.lin1.weight", 2), OC_SB_R("mlp.lin1.bias", 1),                            \
	    OC_SB_R("mlp.lin2.weight", 2), OC_SB_R("mlp.lin2.bias", 1),                            \
	    OC_CONV(OC_ST "neck.0.weight"), OC_REPL(OC_ST "neck.1.weight", 1, SM_D_ANY, SM_D_ANY), \
	    OC_REPL(OC_ST "neck.1.bias", 1, SM_D_ANY, SM_D_ANY), OC_CONV(OC_ST "neck.2.weight"),   \
	    OC_REPL(OC_ST "neck.3.weight", 1, SM_D_ANY, SM_D_ANY),                                 \
	    OC_REPL(OC_ST "neck.3.bias", 1, SM_D_ANY, SM_D_ANY), OC_CONV(OC_ST "net_2.weight"),    \
	    OC_CONV(OC_ST "net_3.weight"),                                                         \
	    OC_REPL("model.projector.layers.weight", 2, SM_D_HID, SM_D_ANY),                       \
	    OC_REPL("model.projector.layers.bias", 1, SM_D_HID, SM_D_ANY),                         \
	    OC_REPL("model.image_newline", 1, SM_D_HID, SM_D_ANY),                                 \
	    OC_REPL("model.view_seperator", 1, SM_D_HID, SM_D_ANY)

/* Plain attention (qk sizes 0: the release): the deepseek family's rows. */
static const sm_rule dsocr_mha_rules[] = {
    SM_RULES_TOP, SM_RULES_LNORM, SM_RULES_ATTN_SWITCHED, DEEPSEEK_RULES_MOE, OC_TOWER_RULES,
};

/* MLA: the deepseek_v2 family's rows. */
static const sm_rule dsocr_v2_rules[] = {
    SM_RULES_TOP, SM_RULES_LNORM, SM_RULES_MLA("self_attn."), DEEPSEEK_RULES_MOE, OC_TOWER_RULES,
};

/* topk_method noaux_tc: the deepseek_v3 family's rows. */
static const sm_rule dsocr_v3_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_MLA("self_attn."),
    DEEPSEEK_RULES_MOE,
    SM_RULE_ROUTER("mlp.gate.e_score_correction_bias", 1, SM_D_E, SM_D_ANY),
    OC_TOWER_RULES,
};

/* One SAM tensor's expected shape (n dims). */
typedef struct oc_shape {
	const char *leaf;
	int n;
	int64_t d[4];
} oc_shape;

/* SAM tensor name: present, with shape s. */
static int oc_expect(const ckpt *ck, const char *name, const oc_shape *s, wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_find(ck, name);
	if (t == NULL)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "tensor '%s' is missing: vLLM's SAM ViT-B holds it "
		                 "(vision_config.width.sam_vit_b's layers, width, heads)",
		                 name);
	bool ok = t->ndim == s->n;
	for (int k = 0; ok && k < s->n; k++)
		ok = t->shape[k] == s->d[k];
	if (ok)
		return WT_OK;
	return wt_seterr(err, WT_ESHAPE,
	                 "tensor '%s': shape [%" PRId64 ", ...] (%d dims) but vLLM's SAM ViT-B "
	                 "builds [%" PRId64 ", %" PRId64 "%s] (vision_config.image_size, "
	                 ".width.sam_vit_b's width, heads, global_attn_indexes, "
	                 "downsample_channels)",
	                 name, t->shape[0], t->ndim, s->d[0], s->n > 1 ? s->d[1] : 0,
	                 s->n > 2 ? ", ..." : "");
}

/* Block i's tensors: each present with its shape below the SAM's blocks, none past them. */
static int oc_block(const ckpt *ck, const ckpt_config *c, int64_t i, wt_errbuf *err)
{
	int64_t w = c->ocr_sam_width, hd = w / c->ocr_sam_heads;
	int64_t rel = (c->ocr_sam_global >> i) & 1 ? 2 * c->ocr_sam_grid - 1 : 2 * 14 - 1;
	const oc_shape b[] = {
	    {"norm1.weight", 1, {w}},           {"norm1.bias", 1, {w}},
	    {"attn.qkv.weight", 2, {3 * w, w}}, {"attn.qkv.bias", 1, {3 * w}},
	    {"attn.proj.weight", 2, {w, w}},    {"attn.proj.bias", 1, {w}},
	    {"attn.rel_pos_h", 2, {rel, hd}},   {"attn.rel_pos_w", 2, {rel, hd}},
	    {"norm2.weight", 1, {w}},           {"norm2.bias", 1, {w}},
	    {"mlp.lin1.weight", 2, {4 * w, w}}, {"mlp.lin1.bias", 1, {4 * w}},
	    {"mlp.lin2.weight", 2, {w, 4 * w}}, {"mlp.lin2.bias", 1, {w}},
	};
	char name[160];
	for (size_t k = 0; k < sizeof(b) / sizeof(b[0]); k++) {
		snprintf(name, sizeof(name), OC_ST "blocks.%" PRId64 ".%s", i, b[k].leaf);
		if (i >= c->ocr_sam_layers && ckpt_find(ck, name) != NULL)
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': SAM block %" PRId64
			                 " but config.json vision_config.width.sam_vit_b.layers "
			                 "is %" PRId64,
			                 name, i, c->ocr_sam_layers);
		int rv = i < c->ocr_sam_layers ? oc_expect(ck, name, &b[k], err) : WT_OK;
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

/* The SAM tower's shapes and blocks (its rules take any); the projector's input_dim columns. */
static int dsocr_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	int64_t w = c->ocr_sam_width, g = c->ocr_sam_grid, d0 = c->ocr_sam_ds[0];
	const oc_shape top[] = {
	    {"patch_embed.proj.weight", 4, {w, 3, 16, 16}},
	    {"patch_embed.proj.bias", 1, {w}},
	    {"pos_embed", 4, {1, g, g, w}},
	    {"neck.0.weight", 4, {256, w, 1, 1}},
	    {"neck.1.weight", 1, {256}},
	    {"neck.1.bias", 1, {256}},
	    {"neck.2.weight", 4, {256, 256, 3, 3}},
	    {"neck.3.weight", 1, {256}},
	    {"neck.3.bias", 1, {256}},
	    {"net_2.weight", 4, {d0, 256, 3, 3}},
	    {"net_3.weight", 4, {c->ocr_sam_ds[1], d0, 3, 3}},
	};
	char name[160];
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++) {
		snprintf(name, sizeof(name), OC_ST "%s", top[k].leaf);
		int rv = oc_expect(ck, name, &top[k], err);
		if (rv != WT_OK)
			return rv;
	}
	for (int64_t i = 0; i < c->v_num_layers; i++) {
		int rv = oc_block(ck, c, i, err);
		if (rv != WT_OK)
			return rv;
	}
	const ckpt_tensor *t = ckpt_find(ck, "model.projector.layers.weight");
	if (t != NULL && t->shape[1] != c->v_proj_in_dim)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor 'model.projector.layers.weight': %" PRId64
		                 " columns but projector_config.input_dim is %" PRId64
		                 " (the CLIP width + net_3's channels)",
		                 t->shape[1], c->v_proj_in_dim);
	return WT_OK;
}

/* The loader's vision fields and the language model's sizes (shardmap_deepseek_vl2_check). */
static int dsocr_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_deepseek_vl2_check(c, ", as deepseek-ai/DeepSeek-OCR's", err);
}

static const sm_family dsocr_v2, dsocr_v3;

/* The table of the language model the loader picked (lm_model_type). */
static const sm_family *dsocr_variant(const ckpt_config *c)
{
	if (strcmp(c->lm_model_type, "deepseek_v3") == 0)
		return &dsocr_v3;
	return strcmp(c->lm_model_type, "deepseek_v2") == 0 ? &dsocr_v2 : NULL;
}

static const char *const dsocr_archs[] = {"DeepseekOCRForCausalLM", NULL};

#define DSOCR_FAMILY(R)                                                                            \
	.name = "deepseek_ocr", .archs = dsocr_archs, .rules = R, .n_rules = SM_NRULES(R),         \
	.layer_is_moe = shardmap_moe_deepseek, .layer_prefix = "model.layers.",                    \
	.check = dsocr_check, .check_extra = dsocr_extra, .vision_gated = true,                    \
	.vision_siglip = true, .clip = true,                                                       \
	.moe_keys = "language_config.first_k_dense_replace, moe_layer_freq",                       \
	.depth_key = "vision_config.width.clip-l-14-224.layers",                                   \
	.vis_heads_key = "vision_config.width.clip-l-14-224.heads"

/* V3's MTP layers (index >= num_hidden_layers) are dropped as the deepseek_v3 family's. */
static const sm_family dsocr_v3 = {DSOCR_FAMILY(dsocr_v3_rules), .drop_extra_layers = true};
static const sm_family dsocr_v2 = {DSOCR_FAMILY(dsocr_v2_rules)};

const sm_family shardmap_family_deepseek_ocr = {DSOCR_FAMILY(dsocr_mha_rules),
                                                .variant_for = dsocr_variant};
