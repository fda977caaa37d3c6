/*
 * family_internvl.c — InternVL in the Hugging Face format (InternVLForConditionalGeneration,
 * model_type internvl: OpenGVLab/InternVL3-1B-hf .. 78B-hf), cut as vLLM loads it
 * (InternS1ForConditionalGeneration of interns1.py, which its registry maps the architecture
 * to; the tower of interns1_vit.py; Qwen2ForCausalLM of qwen2.py for the language model)
 * (docs/format.md section 2.7).
 *
 * Rules are written in vLLM's module names (its hf_to_vllm_mapper's targets, also the names
 * transformers < 4.52 would read through _checkpoint_conversion_mapping):
 * `language_model.model.*`, `language_model.lm_head.weight`, `vision_tower.*`,
 * `multi_modal_projector.*`; the layout transformers 4.57.1 saves (`model.language_model.*`,
 * `model.vision_tower.*`, `model.multi_modal_projector.*`, `lm_head.weight`, the released
 * -hf checkpoints') maps onto them through Gemma 3's aliases.
 *
 * The language model: Qwen2's table (q/k/v biases fused into qkv_proj.bias), or Qwen3's when
 * text_config.model_type is qwen3 (InternVL3_5-*-HF: vLLM builds Qwen3ForCausalLM of it, the
 * same table with per-head q_norm / k_norm [d] replicated), or Qwen3-MoE's when it is qwen3_moe
 * (InternVL3_5-30B-A3B-HF / 241B-A28B-HF: vLLM builds Qwen3MoeForCausalLM of qwen3_moe.py, the
 * qwen3_moe family's rows: Qwen3's attention; on the layers shardmap_moe_qwen makes sparse
 * (num_experts > 0, not in mlp_only_layers, every decoder_sparse_step-th) the router mlp.gate
 * replicated and unquantized (ReplicatedLinear, quant_config None) and the experts
 * mlp.experts.{j}.gate_proj / up_proj / down_proj stacked into FusedMoE's w13_weight / w2_weight,
 * split by expert parallelism then by TP within an expert; the dense MLP elsewhere), tied by
 * text_config.tie_word_embeddings alone (Qwen2Config's / Qwen3Config's / Qwen3MoeConfig's default
 * false; transformers 4.57.1 ties by get_text_config()). A gpt_oss text model
 * (InternVL3_5-GPT-OSS-20B-A4B-Preview-HF) is refused. The tower (vLLM's InternS1VisionModel, built
 * without a quant config): the class token, the mask token (use_mask_token), the patch Conv2d with
 * its bias and the position table (use_absolute_position_embeddings; (image / patch)^2 + 1 rows)
 * replicated; per block q_proj / k_proj / v_proj (biases when attention_bias), q_norm / k_norm
 * (RMSNorm over the width, when use_qk_norm) and projection_layer with its bias, all plain
 * nn.Linear / norms: whole on every rank; layernorm_before / layernorm_after (biases when
 * norm_type is layer_norm; rms_norm has none) and the layer scales lambda_1 / lambda_2
 * replicated; mlp.fc1 by rows with its bias (ColumnParallelLinear), fc2 by columns
 * (RowParallelLinear, its bias replicated), neither quantized (quant_config None); the final
 * layernorm only when use_mean_pooling is false. The projector (InternS1MultiModalProjector:
 * layer_norm [VE x n^2], linear_1 [hid, VE x n^2], linear_2 [hid, hid], n = 1 /
 * downsample_ratio, with biases) plain nn.LayerNorm / nn.Linear: whole on every rank, never
 * quantized.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define IV_VT "vision_tower."
#define IV_VB IV_VT "encoder.layer.{i}."
#define IV_P  "multi_modal_projector."

/* A [VE] tensor of every block, whole on every rank, under condition c. */
#define IV_VB_REPL(n, c)                                                                           \
	SM_RULE(IV_VB n, IV_VB n, SM_K_REPL, 0, SM_U_NONE, c, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
/* A tensor of the tower or projector, whole on every rank, never quantized. */
#define IV_REPL(n, c, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, c, 0, nd, d0, d1)
/* [1, d1, VE] parameters of the embeddings */
#define IV_TOKEN(n, c, d1)                                                                         \
	SM_RULE3(IV_VT "embeddings." n, IV_VT "embeddings." n, SM_K_REPL, 0, SM_U_NONE, c, 0,      \
	         SM_D_ONE, d1, SM_D_VE)
/* The block's q / k / v: plain nn.Linear [VE, VE], biases with attention_bias. */
#define IV_QKV(x)                                                                                  \
	SM_RULE(IV_VB "attention." x "_proj.weight", IV_VB "attention." x "_proj.weight",          \
	        SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 2, SM_D_VE, SM_D_VE),                 \
	    IV_VB_REPL("attention." x "_proj.bias", SM_C_VATTNB)

static const sm_rule internvl_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    /* InternVL3.5's Qwen3 / Qwen3-MoE language model: per-head q / k RMSNorm weights [d],
     * replicated */
    SM_RULES_QK_NORM_IF(SM_C_QWEN3),
    /* Qwen3-MoE's sparse layers (qwen3_moe's rows): the router ReplicatedLinear(quant_config
     * None), the experts stacked into FusedMoE's w13_weight / w2_weight */
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    IV_TOKEN("cls_token", SM_C_ALL, SM_D_ONE),
    IV_TOKEN("mask_token", SM_C_VMASK, SM_D_ONE),
    IV_TOKEN("position_embeddings", SM_C_VPOS, SM_D_VNP),
    {IV_VT "embeddings.patch_embeddings.projection.weight",
     IV_VT "embeddings.patch_embeddings.projection.weight",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     4,
     {SM_D_VE, SM_D_VCH, SM_D_VP, SM_D_VP}},
    IV_REPL(IV_VT "embeddings.patch_embeddings.projection.bias", SM_C_ALL, 1, SM_D_VE, SM_D_ANY),
    IV_QKV("q"),
    IV_QKV("k"),
    IV_QKV("v"),
    IV_VB_REPL("attention.q_norm.weight", SM_C_VQKN),
    IV_VB_REPL("attention.k_norm.weight", SM_C_VQKN),
    SM_RULE(IV_VB "attention.projection_layer.weight", IV_VB "attention.projection_layer.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    IV_VB_REPL("attention.projection_layer.bias", SM_C_ALL),
    IV_VB_REPL("layernorm_before.weight", SM_C_ALL),
    IV_VB_REPL("layernorm_before.bias", SM_C_VLN),
    IV_VB_REPL("layernorm_after.weight", SM_C_ALL),
    IV_VB_REPL("layernorm_after.bias", SM_C_VLN),
    IV_VB_REPL("lambda_1", SM_C_ALL),
    IV_VB_REPL("lambda_2", SM_C_ALL),
    /* fc1 ColumnParallelLinear, fc2 RowParallelLinear, quant_config None: split, unquantized */
    SM_RULE(IV_VB "mlp.fc1.weight", IV_VB "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL,
            SM_F_VIS, 2, SM_D_VI, SM_D_VE),
    SM_RULE(IV_VB "mlp.fc1.bias", IV_VB "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, SM_F_VIS,
            1, SM_D_VI, SM_D_ANY),
    SM_RULE(IV_VB "mlp.fc2.weight", IV_VB "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_C_ALL,
            SM_F_VIS, 2, SM_D_VE, SM_D_VI),
    IV_VB_REPL("mlp.fc2.bias", SM_C_ALL),
    IV_REPL(IV_VT "layernorm.weight", SM_C_VPOOL, 1, SM_D_VE, SM_D_ANY),
    IV_REPL(IV_VT "layernorm.bias", SM_C_VPOOL, 1, SM_D_VE, SM_D_ANY),
    IV_REPL(IV_P "layer_norm.weight", SM_C_ALL, 1, SM_D_VM, SM_D_ANY),
    IV_REPL(IV_P "layer_norm.bias", SM_C_ALL, 1, SM_D_VM, SM_D_ANY),
    IV_REPL(IV_P "linear_1.weight", SM_C_ALL, 2, SM_D_HID, SM_D_VM),
    IV_REPL(IV_P "linear_1.bias", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
    IV_REPL(IV_P "linear_2.weight", SM_C_ALL, 2, SM_D_HID, SM_D_HID),
    IV_REPL(IV_P "linear_2.bias", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
};

/* InternVLVisionConfig's defaults (transformers 4.57.1; the loader applies them) */
static const sm_vis_class internvl_vis = {"InternViT: ", 1024, 16, 24, 448, 14};

/* The tower and projector vLLM builds: the features of the last block (vision_feature_layer
 * -1) without the class token ("default"), n x n patches merged by the pixel shuffle. */
static int internvl_features(const ckpt_config *c, const sm_vis_geom *g, wt_errbuf *err)
{
	if (c->v_feature_list || c->v_feature_layer != -1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_feature_layer %s: vLLM's "
		                 "InternS1ForConditionalGeneration takes the last block's output "
		                 "whatever it says (and transformers 4.57.1 reads any other from a "
		                 "vision_model it does not have); give -1",
		                 c->v_feature_list ? "is a list" : "is not -1");
	if (strcmp(c->v_select, "default") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vision_feature_select_strategy '%s': vLLM's "
		                 "InternS1ForConditionalGeneration always drops the class token "
		                 "(\"default\"); give \"default\"",
		                 c->v_select);
	int64_t side = g->img / g->patch, n = c->v_spatial_merge_size;
	if (side % n != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: the tower's %" PRId64 " x %" PRId64
		                 " patch grid (vision_config.image_size / patch_size) does not "
		                 "split into the pixel shuffle's %" PRId64 " x %" PRId64
		                 " groups (1 / downsample_ratio)",
		                 side, side, n, n);
	return WT_OK;
}

/* vision_config an InternViT whose heads split its width; a Qwen2, Qwen3 or Qwen3-MoE language
 * model (GPT-OSS refused by name). */
static int internvl_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv;
	if ((rv = shardmap_vision_need(c, &internvl_vis, err)) != WT_OK)
		return rv;
	if (c->lm_model_type[0] == '\0')
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s needs a text_config object (model_type qwen2, qwen3 or "
		    "qwen3_moe, its sizes)",
		    c->architecture);
	if (strcmp(c->lm_model_type, "gpt_oss") == 0) /* InternVL3_5-GPT-OSS-20B-A4B-Preview */
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.model_type 'gpt_oss': InternVL3.5's "
		                 "GPT-OSS language model under %s is not supported (the gpt_oss "
		                 "family's MXFP4 experts and sinks are not in InternVL's table); "
		                 "only qwen2, qwen3 and qwen3_moe text models (InternVL3, "
		                 "InternVL3.5 1B..241B-A28B) are",
		                 c->architecture);
	if (strcmp(c->lm_model_type, "qwen2") != 0 && strcmp(c->lm_model_type, "qwen3") != 0 &&
	    strcmp(c->lm_model_type, "qwen3_moe") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: text_config.model_type '%s': only a qwen2 (InternVL3), "
		    "qwen3 or qwen3_moe (InternVL3.5) language model is supported for %s "
		    "(vLLM's qwen2.py / qwen3.py / qwen3_moe.py tables)",
		    c->lm_model_type, c->architecture);
	sm_vis_geom g;
	if ((rv = shardmap_vision_geom(c, &internvl_vis, &g, err)) != WT_OK)
		return rv;
	return internvl_features(c, &g, err);
}

/* Qwen3-MoE's layer selection (mlp_only_layers, decoder_sparse_step, num_experts > 0) under a
 * qwen3_moe text_config; every layer of a Qwen2 / Qwen3 one is dense. */
static bool internvl_moe(const ckpt_config *c, int64_t i)
{
	return strcmp(c->lm_model_type, "qwen3_moe") == 0 && shardmap_moe_qwen(c, i);
}

/* InternS1ForConditionalGeneration (internlm/Intern-S1: a Qwen3-MoE language model;
 * Intern-S1-mini: a Qwen3 one; remote code, model_type interns1): vLLM's registry maps it onto
 * the same class of interns1.py as InternVLForConditionalGeneration, the same hf_to_vllm_mapper
 * over the same released names; InternS1Config / InternS1VisionConfig (configuration_interns1.py)
 * have InternVLConfig's / InternVLVisionConfig's keys and defaults, so the loader reads
 * model_type interns1 as internvl (config_is_internvl). The same cut. */
static const char *const internvl_archs[] = {"InternVLForConditionalGeneration",
                                             "InternS1ForConditionalGeneration", NULL};

const sm_family shardmap_family_internvl = {
    .name = "internvl",
    .archs = internvl_archs,
    .rules = internvl_rules,
    .n_rules = SM_NRULES(internvl_rules),
    .layer_is_moe = internvl_moe,
    .layer_prefix = "language_model.model.layers.",
    .check = internvl_check,
    .aliases = shardmap_llava_aliases,
    .vision_gated = true,
    .vision_siglip = true,
    .internvl = true,
};
