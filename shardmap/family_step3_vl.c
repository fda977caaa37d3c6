/*
 * family_step3_vl.c — Step3-VL (Step3VLForConditionalGeneration, model_type step3_vl:
 * stepfun-ai/step3, remote code; docs/format.md section 2.7), cut as vLLM's step3_vl.py loads
 * it (vllm-project/vllm 020efdf7, the same weights as 00c457b6): a bare AutoWeightsLoader
 * under hf_to_vllm_mapper {model. -> language_model.model., lm_head. ->
 * language_model.lm_head.}, no packed_modules_mapping. Runtime names keep the checkpoint's
 * (SHARDS.md: the mapper only moves them under vLLM's modules).
 *
 * - The language model (init_vllm_registered_model on text_config, a Step3TextConfig whatever
 *   its model_type says: vLLM's Step3TextForCausalLM) under the checkpoint's model.* /
 *   lm_head.*: the step3_text family's rules (family_step3.h), the same bytes as its ranks.
 * - The tower vision_model.* (Step3VisionTransformer, built with quant_config None: nothing
 *   in it is quantized): embeddings.class_embedding [1, VE], patch_embedding (Conv2d with its
 *   bias) and position_embedding [(image / patch)^2 + 1, VE] replicated; per block
 *   (transformer.layers.{i}.) self_attn.qkv_proj [3 VE, VE] fused in the checkpoint ([q; k;
 *   v] rows: QKVParallelLinear with KV = H, its weight_loader splitting the thirds) and its
 *   bias by vision heads into [q_r; k_r; v_r], out_proj by columns (RowParallelLinear, its
 *   bias replicated), mlp.fc1 by rows with its bias (ColumnParallelLinear), fc2 by columns
 *   (its bias replicated), layer_norm1 / layer_norm2 replicated; no pre / post norm.
 *   mm_encoder_tp_mode "data" (the tower whole on every rank) is not offered.
 * - vit_downsampler (Conv2d VE -> output_hidden_size, kernel 2), vit_downsampler2 (Conv2d
 *   OH -> 2 OH, kernel 3), with biases, and vit_large_projector (nn.Linear [hid, 2 OH], its
 *   bias when projector_bias): plain torch modules, whole on every rank, never quantized.
 *   Their shapes are checked against vision_config here (s3v_shapes: the rules' dims cannot
 *   name output_hidden_size).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_step3.h"

#define S3V_VT "vision_model."
#define S3V_VB S3V_VT "transformer.layers.{i}."

/* A tensor whole on every rank, never quantized. */
#define S3V_REPL(n, C, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, C, 0, nd, d0, d1)
/* A [VE] tensor of every tower block, whole on every rank. */
#define S3V_VB_REPL(n)                                                                             \
	SM_RULE(S3V_VB n, S3V_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE,       \
	        SM_D_ANY)
/* A 4-D Conv2d weight, whole on every rank, never quantized. */
#define S3V_CONV(n, d0, d1, d2, d3)                                                                \
	{                                                                                          \
		n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4,                                     \
		{                                                                                  \
			d0, d1, d2, d3                                                             \
		}                                                                                  \
	}

static const sm_rule step3_vl_rules[] = {
    SM_RULES_TOP,
    SM_RULES_STEP3_TEXT_LAYERS,
    /* Step3VisionEmbeddings */
    S3V_REPL(S3V_VT "embeddings.class_embedding", SM_C_ALL, 2, SM_D_ONE, SM_D_VE),
    S3V_CONV(S3V_VT "embeddings.patch_embedding.weight", SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP),
    S3V_REPL(S3V_VT "embeddings.patch_embedding.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    S3V_REPL(S3V_VT "embeddings.position_embedding.weight", SM_C_ALL, 2, SM_D_VNP, SM_D_VE),
    /* Step3VisionEncoderLayer (quant_config None) */
    SM_RULE(S3V_VB "self_attn.qkv_proj.weight", S3V_VB "self_attn.qkv_proj.weight", SM_K_QKVF, 0,
            SM_U_VHEADS, SM_C_ALL, SM_F_VIS, 2, SM_D_V3E, SM_D_VE),
    SM_RULE(S3V_VB "self_attn.qkv_proj.bias", S3V_VB "self_attn.qkv_proj.bias", SM_K_QKVF, 0,
            SM_U_VHEADS, SM_C_ALL, SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),
    SM_RULE(S3V_VB "self_attn.out_proj.weight", S3V_VB "self_attn.out_proj.weight", SM_K_COLS, 0,
            SM_U_VHEADS, SM_C_ALL, SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    S3V_VB_REPL("self_attn.out_proj.bias"),
    S3V_VB_REPL("layer_norm1.weight"),
    S3V_VB_REPL("layer_norm1.bias"),
    SM_RULE(S3V_VB "mlp.fc1.weight", S3V_VB "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,
            SM_F_VIS, 2, SM_D_VI, SM_D_VE),
    SM_RULE(S3V_VB "mlp.fc1.bias", S3V_VB "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, SM_F_VIS,
            1, SM_D_VI, SM_D_ANY),
    SM_RULE(S3V_VB "mlp.fc2.weight", S3V_VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,
            SM_F_VIS, 2, SM_D_VE, SM_D_VI),
    S3V_VB_REPL("mlp.fc2.bias"),
    S3V_VB_REPL("layer_norm2.weight"),
    S3V_VB_REPL("layer_norm2.bias"),
    /* the downsamplers and the projector (plain torch modules; shapes: s3v_shapes) */
    S3V_CONV("vit_downsampler.weight", SM_D_ANY, SM_D_VE, SM_D_ANY, SM_D_ANY),
    S3V_REPL("vit_downsampler.bias", SM_C_ALL, 1, SM_D_ANY, SM_D_ANY),
    S3V_CONV("vit_downsampler2.weight", SM_D_ANY, SM_D_ANY, SM_D_ANY, SM_D_ANY),
    S3V_REPL("vit_downsampler2.bias", SM_C_ALL, 1, SM_D_ANY, SM_D_ANY),
    S3V_REPL("vit_large_projector.weight", SM_C_ALL, 2, SM_D_HID, SM_D_ANY),
    S3V_REPL("vit_large_projector.bias", SM_C_MMBIAS, 1, SM_D_HID, SM_D_ANY),
};

/* The loader's vision fields (model_type step3_vl: Step3VisionEncoderConfig's defaults filled
 * in); the tower's geometry; the language model's own check. */
static int s3v_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type step3_vl (Step3VLConfig: its "
		                 "vision_config and text_config)",
		                 c->architecture);
	if (c->v_hidden_size % c->v_num_attn_heads != 0)
		return shardmap_vision_heads_err("num_attention_heads", c->v_num_attn_heads,
		                                 c->v_hidden_size, err);
	if (c->v_image_size < c->v_patch_size)
		return shardmap_vision_patch_err(c->v_image_size, c->v_patch_size, err);
	return shardmap_step3_text_check(c, err);
}

/* One of the downsamplers' / projector's tensors: its shape against want[0..nd). */
static int s3v_shape_is(const ckpt_tensor *t, const int64_t *want, size_t nd, const char *why,
                        wt_errbuf *err)
{
	bool ok = t->ndim == (int)nd;
	for (size_t i = 0; ok && i < nd; i++)
		ok = t->shape[i] == want[i];
	if (ok)
		return WT_OK;
	char w[96];
	int n = snprintf(w, sizeof(w), "[%" PRId64, want[0]);
	for (size_t i = 1; i < nd && n > 0 && (size_t)n < sizeof(w); i++)
		n += snprintf(w + n, sizeof(w) - (size_t)n, ", %" PRId64, want[i]);
	return wt_seterr(err, WT_ESHAPE,
	                 "tensor '%s': vLLM's step3_vl.py builds it %s] (%s); fix config.json's "
	                 "vision_config or the checkpoint",
	                 t->name, w, why);
}

/* In this order (a weight named before its bias): vit_downsampler [OH, VE, 2, 2] / [OH],
 * vit_downsampler2 [2 OH, OH, 3, 3] / [2 OH], vit_large_projector [hid, 2 OH] / [hid] (OH
 * vision_config.output_hidden_size). */
static int s3v_shapes(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	int64_t oh = c->v_out_hidden_size, ve = c->v_hidden_size, hid = c->hidden_size;
	const struct {
		const char *name;
		int64_t want[4];
		size_t nd;
		const char *why;
	} tab[] = {
	    {"vit_downsampler.weight",
	     {oh, ve, 2, 2},
	     4,
	     "Conv2d(vision_config.hidden_size, output_hidden_size, kernel_size=2)"},
	    {"vit_downsampler.bias", {oh}, 1, "vision_config.output_hidden_size"},
	    {"vit_downsampler2.weight",
	     {2 * oh, oh, 3, 3},
	     4,
	     "Conv2d(output_hidden_size, 2 x output_hidden_size, kernel_size=3)"},
	    {"vit_downsampler2.bias", {2 * oh}, 1, "2 x vision_config.output_hidden_size"},
	    {"vit_large_projector.weight",
	     {hid, 2 * oh},
	     2,
	     "nn.Linear(2 x vision_config.output_hidden_size, hidden_size)"},
	    {"vit_large_projector.bias", {hid}, 1, "text_config.hidden_size"},
	};
	for (size_t j = 0; j < sizeof(tab) / sizeof(tab[0]); j++)
		for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
			const ckpt_tensor *t = ckpt_tensor_at(ck, k);
			int rv = strcmp(t->name, tab[j].name) == 0
			             ? s3v_shape_is(t, tab[j].want, tab[j].nd, tab[j].why, err)
			             : WT_OK;
			if (rv != WT_OK)
				return rv;
		}
	return WT_OK;
}

static const char *const step3_vl_archs[] = {"Step3VLForConditionalGeneration", NULL};

/* Step3TextForCausalLM never ties its lm_head (the loader reads the tie as false). */
const sm_family shardmap_family_step3_vl = {
    .name = "step3_vl",
    .archs = step3_vl_archs,
    .rules = step3_vl_rules,
    .n_rules = SM_NRULES(step3_vl_rules),
    .layer_is_moe = shardmap_step3_text_moe,
    .layer_prefix = "model.layers.",
    .check = s3v_check,
    .check_extra = s3v_shapes,
    .moe_keys = "text_config.moe_layers_enum",
    .mm_bias_key = "projector_bias",
    .vision_gated = true,
    .vision_siglip = true,
    .internvl = true,
};
