/*
 * family_hcx.c — HyperCLOVAX-SEED-Vision (HCXVisionForCausalLM, model_type hyperclovax_vlm:
 * naver-hyperclovax/HyperCLOVAX-SEED-Vision-Instruct-3B, remote code; docs/format.md section
 * 2.7), cut as vLLM's hyperclovax_vision.py / siglip.py / llama.py load it: a bare
 * AutoWeightsLoader (no hf_to_vllm_mapper, nothing skipped but what SiglipVisionModel's own
 * load_weights skips), so the runtime names are the checkpoint's.
 *
 * - The language model language_model.*: init_vllm_registered_model of text_config
 *   (LlamaForCausalLM for model_type llama, the release's): the llama family's rows under
 *   language_model. (embed_tokens / lm_head by padded vocabulary rows, q/k/v fused by heads
 *   into qkv_proj, gate / up merged, o_proj / down_proj by columns, RMSNorms replicated);
 *   tied by text_config.tie_word_embeddings alone.
 * - The tower vision_model.vision_model.* (init_vision_tower_for_hcxvision: siglip.py's
 *   SiglipVisionModel given the quant_config): SigLIP's rows (SM_RULES_SIGLIP_TOWER; SiglipMLP
 *   quantized only when the tower's sizes are both multiples of 64, which the release's 1152 /
 *   4304 are not), the pooling head unless vision_config.vision_use_head is false. vLLM
 *   builds num_hidden_layers + use_nth_layer + 1 blocks (use_nth_layer + 1 when >= 0; -2 by
 *   default) with require_post_norm=False: the deeper blocks and post_layernorm are dropped
 *   and listed as skipped (SiglipVisionModel.load_weights skips them).
 * - The projector mm_projector.* (HCXVisionCAbstractor, plain torch modules built without the
 *   quant_config: every tensor whole on every rank, never quantized): pos_emb [1, (image /
 *   patch)^2, VE] (proj_pos_emb), prenorm (timm LayerNorm, proj_prenorm), net.0 and net.2 (timm
 *   RegStage of depth 3, VE -> VE, so no downsample: per block b1..b3 conv1 / conv3 1x1 and
 *   conv2 a depthwise 3x3 Conv2d without bias, each with its LayerNorm2d "bn" weight / bias,
 *   and the SE module's fc1 [round(VE / 4), VE, 1, 1] / fc2 [VE, round(VE / 4), 1, 1] with
 *   biases; net.1 is the pooling), readout.0 [hid, VE] / readout.2 [hid, hid] nn.Linear with
 *   biases.
 * - image_newline [hid] (a plain Parameter, anyres true): whole.
 *
 * HyperCLOVAX-SEED-Think (HCXVisionV2ForCausalLM, model_type vlm: naver-hyperclovax/
 * HyperCLOVAX-SEED-Think-32B, remote code; shardmap_family_hcx_v2, this family's arch_variant),
 * cut as vLLM's hyperclovax_vision_v2.py (the stored version at commit 005d0ea3) /
 * hyperclovax.py (055e47c2) / qwen2_5_vl.py load it. Its hf_to_vllm_mapper drops the
 * checkpoint's model. prefix, puts vision_model. on visual. and skips discrete_vision_model;
 * the table is written in vLLM's names (language_model.*, visual.*, mm_projector.*), the
 * release's (model.language_model.*, model.vision_model.*, model.mm_projector.*) read through
 * the aliases and served under the checkpoint's names (alias_runtime).
 * - The language model language_model.*: init_vllm_registered_model of text_config
 *   (HyperCLOVAXForCausalLM for model_type hyperclovax, the release's; LlamaForCausalLM for
 *   llama): the llama family's rows (embed_tokens / lm_head by padded vocabulary rows, q/k/v
 *   fused by heads, gate / up merged, o_proj / down_proj by columns, RMSNorms whole) and, with
 *   text_config.use_post_norm, each layer's post_norm1 / post_norm2 RMSNorms whole.
 * - The tower visual.* (Qwen2_5_VisionTransformer of vision_config, with the quant_config):
 *   Qwen2.5-VL's rows (family_qvl_rules.h: qkv by heads, proj by columns, the gated MLP,
 *   the merger's mlp.0 by rows and mlp.2 by columns). vLLM builds the merger to
 *   out_hidden_size; it is cut here only at the language model's hidden_size (the release's
 *   5120), others refused.
 * - mm_projector [hid, out_hidden_size] and its bias: a plain nn.Linear (no quant_config):
 *   whole on every rank, never quantized.
 * - model.discrete_vision_model.* (the mapper's None): skipped.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/family_qvl_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define HX_VT "vision_model.vision_model."
#define HX_P  "mm_projector."

/* A whole, never quantized projector tensor of nd dims. */
#define HX_R(n, cond, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, cond, 0, nd, d0, d1)
/* clang-format off */
#define HX_R4(n, d0, d1, d2, d3)                                                                   \
	{n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4, {d0, d1, d2, d3}}
/* clang-format on */
/* A ConvNormAct: its Conv2d (no bias) and LayerNorm2d's weight / bias. */
#define HX_CNA(B, c, d1, d2)                                                                       \
	HX_R4(B c ".conv.weight", SM_D_VE, d1, d2, d2),                                            \
	    HX_R(B c ".bn.weight", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),                                \
	    HX_R(B c ".bn.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY)
/* A RegNet Bottleneck under B: conv1 1x1, conv2 depthwise 3x3 (its kernel checked by
 * hcx_extra), the SE module (its width checked there), conv3 1x1. */
#define HX_BLOCK(B)                                                                                \
	HX_CNA(B, "conv1", SM_D_VE, SM_D_ONE), HX_CNA(B, "conv2", SM_D_ONE, SM_D_ANY),             \
	    HX_R4(B "se.fc1.weight", SM_D_ANY, SM_D_VE, SM_D_ONE, SM_D_ONE),                       \
	    HX_R(B "se.fc1.bias", SM_C_ALL, 1, SM_D_ANY, SM_D_ANY),                                \
	    HX_R4(B "se.fc2.weight", SM_D_VE, SM_D_ANY, SM_D_ONE, SM_D_ONE),                       \
	    HX_R(B "se.fc2.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),                                 \
	    HX_CNA(B, "conv3", SM_D_VE, SM_D_ONE)
#define HX_STAGE(S) HX_BLOCK(S "b1."), HX_BLOCK(S "b2."), HX_BLOCK(S "b3.")

static const sm_rule hcx_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_SIGLIP_TOWER(HX_VT),
    SM_RULES_SIGLIP_POOL_HEAD(HX_VT "head.", SM_C_VHEAD),
    SM_RULE3(HX_P "pos_emb", HX_P "pos_emb", SM_K_REPL, 0, SM_U_NONE, SM_C_HCXPOS, 0, SM_D_ONE,
             SM_D_VNP, SM_D_VE),
    HX_R(HX_P "prenorm.weight", SM_C_HCXPRE, 1, SM_D_VE, SM_D_ANY),
    HX_R(HX_P "prenorm.bias", SM_C_HCXPRE, 1, SM_D_VE, SM_D_ANY),
    HX_STAGE(HX_P "net.0."),
    HX_STAGE(HX_P "net.2."),
    HX_R(HX_P "readout.0.weight", SM_C_ALL, 2, SM_D_HID, SM_D_VE),
    HX_R(HX_P "readout.0.bias", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
    HX_R(HX_P "readout.2.weight", SM_C_ALL, 2, SM_D_HID, SM_D_HID),
    HX_R(HX_P "readout.2.bias", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
    HX_R("image_newline", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
};

/* The tower blocks vLLM builds: num_hidden_layers + use_nth_layer + 1 for a negative index,
 * use_nth_layer + 1 otherwise (init_vision_tower_for_hcxvision). */
static int64_t hcx_kept(const ckpt_config *c, int64_t vd)
{
	int64_t n = c->v_feature_layer;
	return n < 0 ? vd + n + 1 : n + 1;
}

/* A SigLIP tower (siglip_vision_model, the release's) whose heads split its width, at least
 * one block and no more than it has; a Llama language model. */
static int hcx_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	sm_vis_geom g;
	if ((rv = shardmap_siglip_text_check(c, "HyperCLOVAX-SEED-Vision-Instruct-3B's", "llama",
	                                     "vLLM's llama.py table", &g, err)) != WT_OK)
		return rv;
	int64_t kept = hcx_kept(c, g.vd);
	if (kept < 1 || kept > g.vd)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: use_nth_layer %" PRId64 " leaves %" PRId64
		    " of the tower's %" PRId64 " blocks (vision_config."
		    "num_hidden_layers): vLLM builds none or more than it has; give an "
		    "index in [%" PRId64 ", %" PRId64 "], e.g. -2 (the release's)",
		    c->v_feature_layer, kept, g.vd, -g.vd, g.vd - 1);
	return WT_OK;
}

/* post_layernorm (require_post_norm=False) and the blocks past the kept ones. */
static bool hcx_drop(const ckpt_config *c, const char *cn)
{
	int64_t vd = c->v_num_layers > 0 ? c->v_num_layers : shardmap_vis_siglip.layers;
	return shardmap_tower_drop(HX_VT, hcx_kept(c, vd), vd, true, cn);
}

/* SiglipMLP's fc1 / fc2 built without the quant_config when the tower's sizes are not both
 * multiples of 64 (the release's 1152 / 4304). */
static bool hcx_float(const ckpt_config *c, const char *cn)
{
	return shardmap_siglip_mlp_float(c, HX_VT, cn);
}

/* The SE width timm's Bottleneck gives: int(round(VE * 0.25)), Python's round (half to even). */
static int64_t hcx_se(int64_t ve)
{
	int64_t q = ve / 4, r = ve % 4;
	return r < 2 ? q : r > 2 ? q + 1 : q + (q & 1);
}

/* Each RegStage block's conv2 kernel 3 x 3 and SE width, which the table leaves open. */
static int hcx_extra(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	sm_vis_geom g;
	(void)shardmap_vision_geom(c, &shardmap_vis_siglip, &g, NULL);
	int64_t se = hcx_se(g.ve);
	static const struct {
		const char *leaf;
		int dim;
		int is_se;
	} k[] = {{"conv2.conv.weight", 2, 0},
	         {"conv2.conv.weight", 3, 0},
	         {"se.fc1.weight", 0, 1},
	         {"se.fc1.bias", 0, 1},
	         {"se.fc2.weight", 1, 1}};
	char name[96];
	for (int s = 0; s <= 2; s += 2)
		for (int b = 1; b <= 3; b++)
			for (size_t j = 0; j < sizeof(k) / sizeof(k[0]); j++) {
				snprintf(name, sizeof(name), HX_P "net.%d.b%d.%s", s, b, k[j].leaf);
				const ckpt_tensor *t = ckpt_find(ck, name);
				int64_t want = k[j].is_se ? se : 3;
				if (t == NULL || t->ndim <= k[j].dim || t->shape[k[j].dim] == want)
					continue;
				return wt_seterr(err, WT_ESHAPE,
				                 "tensor '%s': dim %d is %" PRId64
				                 ", expected %" PRId64
				                 " (%s); vLLM's C-Abstractor builds timm RegStage "
				                 "blocks of vision_config.hidden_size %" PRId64,
				                 name, k[j].dim, t->shape[k[j].dim], want,
				                 k[j].is_se ? "the SE width round(hidden_size / 4)"
				                            : "conv2's depthwise 3 x 3 kernel",
				                 g.ve);
			}
	return WT_OK;
}

/* HyperCLOVAX-SEED-Think: the language model's rows (SM_LAYER is language_model.model.layers.
 * here), use_post_norm's two norms, Qwen2.5-VL's tower, the Linear projector. */
static const sm_rule hcx_v2_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULE(SM_LAYER "post_norm1.weight", SM_LAYER "post_norm1.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_HCXPOST, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "post_norm2.weight", SM_LAYER "post_norm2.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_HCXPOST, 0, 1, SM_D_HID, SM_D_ANY),
    QVL_TOWER_RULES,
    QVL_25_RULES,
    HX_R("mm_projector.weight", SM_C_ALL, 2, SM_D_HID, SM_D_HID),
    HX_R("mm_projector.bias", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
};

/* The release's prefixes and vLLM's names (the table's). */
static const char *const hcx_v2_aliases[] = {"model.language_model.",
                                             "language_model.",
                                             "model.vision_model.",
                                             "visual.",
                                             "model.mm_projector.",
                                             "mm_projector.",
                                             NULL};

/* Qwen2.5-VL's tower (depth, hidden_size, num_heads, intermediate_size, out_hidden_size) whose
 * heads split its width, its merger out to the language model's width. */
static int hcx_v2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision || c->v_depth < 1 || c->v_hidden_size < 1 || c->v_num_heads < 1 ||
	    c->v_intermediate_size < 1 || c->v_out_hidden_size < 1)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: HCXVisionV2ForCausalLM needs vision_config with depth, "
		    "hidden_size, num_heads, intermediate_size and out_hidden_size "
		    "(Qwen2_5_VisionTransformer's; depth %" PRId64 ", hidden_size %" PRId64
		    ", num_heads %" PRId64 ")",
		    c->v_depth, c->v_hidden_size, c->v_num_heads);
	if (c->v_hidden_size % c->v_num_heads)
		return shardmap_vision_heads_err("num_heads", c->v_num_heads, c->v_hidden_size,
		                                 err);
	if (c->v_out_hidden_size != c->hidden_size)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_config.out_hidden_size %" PRId64
		                 " is not text_config.hidden_size %" PRId64
		                 ": vLLM's mm_projector maps one onto the other, but only the "
		                 "release's equal widths (5120) are cut here; give equal widths",
		                 c->v_out_hidden_size, c->hidden_size);
	return WT_OK;
}

static const char *const hcx_v2_archs[] = {"HCXVisionV2ForCausalLM", NULL};

const sm_family shardmap_family_hcx_v2 = {
    .name = "hcx_vision",
    .archs = hcx_v2_archs,
    .rules = hcx_v2_rules,
    .n_rules = SM_NRULES(hcx_v2_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = hcx_v2_check,
    .aliases = hcx_v2_aliases,
    .alias_runtime = true,
    .drop_prefix = "model.discrete_vision_model.",
    .vision_gated = true,
};

static const char *const hcx_archs[] = {"HCXVisionForCausalLM", "HCXVisionV2ForCausalLM", NULL};

const sm_family shardmap_family_hcx = {
    .name = "hcx_vision",
    .archs = hcx_archs,
    .rules = hcx_rules,
    .n_rules = SM_NRULES(hcx_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = hcx_check,
    .check_extra = hcx_extra,
    .drop_canon = hcx_drop,
    .keep_float = hcx_float,
    .vision_gated = true,
    .vision_siglip = true,
    .arch_variant = &shardmap_family_hcx_v2,
};
