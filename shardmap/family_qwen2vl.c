/*
 * family_qwen2vl.c — Qwen2-VL (Qwen2VLForConditionalGeneration) and Qwen2.5-VL
 * (Qwen2_5_VLForConditionalGeneration): the Qwen2 language model plus the
 * vision tower `visual.*` (docs/format.md section 2.7). Qwen2-VL's blocks
 * have LayerNorms with biases and an fc1/fc2 MLP; Qwen2.5-VL's have RMSNorms
 * (weight only) and a gated MLP whose gate/up fuse into `mlp.gate_up_proj` as
 * the language model's do (window attention adds no weights). Rules are
 * written in the transformers 4.x names; the 5.x layout
 * (`model.language_model.*`, `model.visual.*`) maps onto them through the
 * family's aliases, so both layouts give the same runtime names and bytes.
 *
 * Tarsier2ForConditionalGeneration (vLLM's qwen2_vl.py): Qwen2-VL's table under its release's
 * prefixes language_model.model., language_model.lm_head., vision_tower. (the aliases of
 * shardmap_family_tarsier2, qwen2_vl's arch_variant), served under those names.
 * OpenCUAForConditionalGeneration (vLLM's opencua.py): Qwen2.5-VL's table under the same
 * prefixes (shardmap_family_opencua, qwen2_5_vl's arch_variant), without MRoPE.
 *
 * JinaVLForRanking (jinaai/jina-reranker-m0, remote code), as vLLM's jina_vl.py loads it
 * (JinaVLForSequenceClassification, a Qwen2VLForConditionalGeneration): Qwen2-VL's table and
 * the score head score.0 (ColumnParallelLinear(hid, hid), weight and bias by rows), ReLU,
 * score.2 (RowParallelLinear(hid, num_labels): weight by columns, bias whole, added once).
 * vLLM builds both without the quantization config (and keeps them in its head_dtype), so
 * they are never quantized; its mapper renames them score.dense / score.out_proj at load,
 * the shard keeps the checkpoint's names. num_labels is 1 (vLLM's
 * JinaVLForSequenceClassificationConfig sets it whatever config.json says).
 */
#include <inttypes.h>

#include "shardmap/families.h"
#include "shardmap/family_qvl_rules.h"

static const sm_rule qwen2_vl_rules[] = {
    QVL_COMMON_RULES,
    QVL_V1_RULES,
};

/* jina-reranker-m0's score head, never quantized (JinaVLScorer has no quant config). */
static const sm_rule jina_vl_rules[] = {
    QVL_COMMON_RULES,
    QVL_V1_RULES,
    SM_RULE("score.0.weight", "score.0.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, 0, 2, SM_D_HID,
            SM_D_HID),
    SM_RULE("score.0.bias", "score.0.bias", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, 0, 1, SM_D_HID,
            SM_D_ANY),
    SM_RULE("score.2.weight", "score.2.weight", SM_K_COLS, 0, SM_U_HID, SM_C_ALL, 0, 2, SM_D_NLAB,
            SM_D_HID),
    SM_RULE("score.2.bias", "score.2.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_NLAB,
            SM_D_ANY),
};

/* Qwen2.5-VL: QVL_25_RULES (family_qvl_rules.h). */
static const sm_rule qwen2_5_vl_rules[] = {
    QVL_COMMON_RULES,
    QVL_25_RULES,
};

/* MRoPE sections: non-negative, summing to head_dim / 2. */
int shardmap_mrope_check(const ckpt_config *c, const char *model, wt_errbuf *err)
{
	int64_t half = c->head_dim / 2, sum = 0;
	if (!c->has_mrope)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs rope_scaling.mrope_section (or "
		                 "rope_parameters.mrope_section): non-negative sections summing "
		                 "to head_dim/2 = %" PRId64 ", e.g. [16, 24, 24] for head_dim 128",
		                 model, half);
	for (size_t k = 0; k < c->n_mrope; k++) {
		if (c->mrope_section[k] < 0)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: mrope_section[%zu] = %" PRId64
			                 " is negative; sections must be >= 0",
			                 k, c->mrope_section[k]);
		sum += c->mrope_section[k];
	}
	if (c->head_dim % 2 || sum != half)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: mrope_section sums to %" PRId64
		                 " but must equal head_dim/2 = %" PRId64 " (head_dim %" PRId64
		                 ", which must be even); fix rope_scaling.mrope_section",
		                 sum, half, c->head_dim);
	return WT_OK;
}

/* Qwen2-VL's vision tower (embed_dim, mlp_ratio) and MRoPE (plan-time checks). */
static int qwen2_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision || c->v_depth < 1 || c->v_embed_dim < 1 || c->v_num_heads < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Qwen2-VL needs vision_config with depth, embed_dim "
		                 "and num_heads (depth %" PRId64 ", embed_dim %" PRId64
		                 ", num_heads %" PRId64 "; -1 = missing)",
		                 c->v_depth, c->v_embed_dim, c->v_num_heads);
	if (c->v_embed_dim % c->v_num_heads)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.num_heads %" PRId64
		                 " does not divide embed_dim %" PRId64,
		                 c->v_num_heads, c->v_embed_dim);
	if ((int64_t)((double)c->v_embed_dim * c->v_mlp_ratio) < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config embed_dim * mlp_ratio is below 1");
	return shardmap_mrope_check(c, "Qwen2-VL", err);
}

/* Qwen2.5-VL's vision tower (hidden_size, intermediate_size, out_hidden_size). The merger's
 * output feeds the language model: out_hidden_size must be its hidden_size. */
static int qwen2_5_vl_tower(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision || c->v_depth < 1 || c->v_hidden_size < 1 || c->v_num_heads < 1 ||
	    c->v_intermediate_size < 1 || c->v_out_hidden_size < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Qwen2.5-VL needs vision_config with depth, "
		                 "hidden_size, num_heads, intermediate_size and out_hidden_size "
		                 "(depth %" PRId64 ", hidden_size %" PRId64 ", num_heads %" PRId64
		                 ", intermediate_size %" PRId64 ", out_hidden_size %" PRId64
		                 "; -1 = missing)",
		                 c->v_depth, c->v_hidden_size, c->v_num_heads,
		                 c->v_intermediate_size, c->v_out_hidden_size);
	if (c->v_hidden_size % c->v_num_heads)
		return shardmap_vision_heads_err("num_heads", c->v_num_heads, c->v_hidden_size,
		                                 err);
	if (c->v_out_hidden_size != c->hidden_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.out_hidden_size %" PRId64
		                 " must equal the language model's hidden_size %" PRId64
		                 " (the merger's output is its input)",
		                 c->v_out_hidden_size, c->hidden_size);
	return WT_OK;
}

/* The tower and MRoPE. */
static int qwen2_5_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = qwen2_5_vl_tower(c, err);
	return rv != WT_OK ? rv : shardmap_mrope_check(c, "Qwen2.5-VL", err);
}

/* Tarsier2ForConditionalGeneration (omni-research/Tarsier2-Recap-7b, Tarsier2-7b-0115; vLLM's
 * qwen2_vl.py): Qwen2VLForConditionalGeneration built of config.json's text_config, its
 * checkpoint under LLaVA-style prefixes that its hf_to_vllm_mapper puts onto Qwen2-VL's
 * modules: language_model.model. (the language model), language_model.lm_head. and
 * vision_tower. (the vision tower, visual. in vLLM). The same cut, served under the
 * checkpoint's names (alias_runtime). */
static const char *const tarsier2_archs[] = {"Tarsier2ForConditionalGeneration", NULL};
static const char *const tarsier2_aliases[] = {"language_model.model.",
                                               "model.",
                                               "language_model.lm_head.",
                                               "lm_head.",
                                               "vision_tower.",
                                               "visual.",
                                               NULL};

/* The released layout only: vLLM's mapper renames vision_tower. alone and its language model
 * lives under language_model., so Qwen2-VL's own names (model.*, lm_head.*, visual.*, or
 * transformers 5.x's model.language_model.*) match no parameter of Tarsier2's. A checkpoint
 * with a tensor under one of Tarsier2's prefixes and one under Qwen2-VL's is refused as mixed
 * while it is mapped; this refuses one with none under Tarsier2's. */
static int tarsier2_layout(const ckpt *c, const ckpt_config *cfg, wt_errbuf *err)
{
	(void)cfg;
	if (ckpt_n_tensors(c) == 0 || shardmap_alias_layout(&shardmap_family_tarsier2, c))
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "tensor '%s': vLLM's Tarsier2ForConditionalGeneration loads the released "
	                 "layout only (language_model.model., language_model.lm_head., "
	                 "vision_tower.), not Qwen2-VL's names; save it in Tarsier2's names or "
	                 "serve it as Qwen2VLForConditionalGeneration (text_config as config.json)",
	                 ckpt_tensor_at(c, 0)->name);
}

const sm_family shardmap_family_tarsier2 = {
    .name = "qwen2_vl",
    .archs = tarsier2_archs,
    .rules = qwen2_vl_rules,
    .n_rules = SM_NRULES(qwen2_vl_rules),
    .layer_is_moe = NULL,
    .drop_extra_layers = false,
    .layer_prefix = "model.layers.",
    .check = qwen2_vl_check,
    .aliases = tarsier2_aliases,
    .check_extra = tarsier2_layout,
    .alias_runtime = true,
};

static const char *const qwen2_vl_archs[] = {"Qwen2VLForConditionalGeneration",
                                             "Tarsier2ForConditionalGeneration", NULL};

/* The prefixes transformers >= 4.52 writes for the Qwen2-VL-style layouts (model.language_model.,
 * model.visual.) and the names the rules use (model., visual.): Qwen2-VL / Qwen2.5-VL's
 * transformers 5.x saves, Qwen3-VL's and GLM-4.1V's releases. */
const char *const shardmap_qwen_vl_aliases[] = {"model.language_model.", "model.", "model.visual.",
                                                "visual.", NULL};

const sm_family shardmap_family_qwen2_vl = {
    .name = "qwen2_vl",
    .archs = qwen2_vl_archs,
    .rules = qwen2_vl_rules,
    .n_rules = SM_NRULES(qwen2_vl_rules),
    .layer_is_moe = NULL,
    .drop_extra_layers = false,
    .layer_prefix = "model.layers.",
    .check = qwen2_vl_check,
    .aliases = shardmap_qwen_vl_aliases,
    .arch_variant = &shardmap_family_tarsier2,
};

static const char *const jina_vl_archs[] = {"JinaVLForRanking", NULL};

/* Qwen2-VL's checks and the score head's one label. */
static int jina_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = qwen2_vl_check(c, err);
	return rv != WT_OK ? rv : shardmap_check_labels(c, "score head", err);
}

const sm_family shardmap_family_jina_vl = {
    .name = "jina_vl",
    .archs = jina_vl_archs,
    .rules = jina_vl_rules,
    .n_rules = SM_NRULES(jina_vl_rules),
    .layer_is_moe = NULL,
    .drop_extra_layers = false,
    .layer_prefix = "model.layers.",
    .check = jina_vl_check,
    .aliases = shardmap_qwen_vl_aliases,
};

/* OpenCUAForConditionalGeneration (xlangai/OpenCUA-7B, -32B; vLLM's opencua.py): a
 * Qwen2_5_VLForConditionalGeneration whose tower is Qwen2.5-VL's (Qwen2_5_VisionTransformer of
 * vision_config) and whose language model is Qwen2ForCausalLM of text_config (1-D RoPE: no
 * mrope_section asked). The release's names are Tarsier2's prefixes (language_model.model.,
 * language_model.lm_head., vision_tower.), which its hf_to_vllm_mapper puts onto the same modules
 * (vision_tower. -> visual.); so Qwen2.5-VL's table under those aliases, served under the
 * checkpoint's names (alias_runtime); a checkpoint in Qwen2.5-VL's 4.x names (model.*, visual.*,
 * lm_head: the mapper's "model." and "lm_head." read it) is served as Qwen2.5-VL's. */
static int opencua_check(const ckpt_config *c, wt_errbuf *err)
{
	return qwen2_5_vl_tower(c, err);
}

static const char *const opencua_archs[] = {"OpenCUAForConditionalGeneration", NULL};

const sm_family shardmap_family_opencua = {
    .name = "qwen2_5_vl",
    .archs = opencua_archs,
    .rules = qwen2_5_vl_rules,
    .n_rules = SM_NRULES(qwen2_5_vl_rules),
    .layer_is_moe = NULL,
    .drop_extra_layers = false,
    .layer_prefix = "model.layers.",
    .check = opencua_check,
    .aliases = tarsier2_aliases,
    .alias_runtime = true,
    .vision_gated = true,
};

static const char *const qwen2_5_vl_archs[] = {"Qwen2_5_VLForConditionalGeneration",
                                               "OpenCUAForConditionalGeneration", NULL};

const sm_family shardmap_family_qwen2_5_vl = {
    .name = "qwen2_5_vl",
    .archs = qwen2_5_vl_archs,
    .rules = qwen2_5_vl_rules,
    .n_rules = SM_NRULES(qwen2_5_vl_rules),
    .layer_is_moe = NULL,
    .drop_extra_layers = false,
    .layer_prefix = "model.layers.",
    .check = qwen2_5_vl_check,
    .aliases = shardmap_qwen_vl_aliases,
    .vision_gated = true,
    .arch_variant = &shardmap_family_opencua,
};
