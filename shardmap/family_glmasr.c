/*
 * family_glmasr.c — GLM-ASR (GlmAsrForConditionalGeneration, model_type glmasr:
 * zai-org/GLM-ASR-Nano-2512 in transformers' layout), cut as vLLM's glmasr.py (the native
 * encoder of PR 31779, commit cbd85c5f) and llama.py load it. load_weights is a bare
 * AutoWeightsLoader (no hf_to_vllm_mapper: the released names are the module names) skipping
 * audio_tower.embed_positions; packed_modules_mapping fuses q/k/v and gate/up.
 *
 * The language model: Llama's table under `language_model.` (vLLM builds LlamaForCausalLM of
 * text_config whatever its model_type: refused unless llama), tied by
 * text_config.tie_word_embeddings alone, as Voxtral's.
 *
 * The encoder `audio_tower.*` (vLLM's own GlmAsrEncoder, built with the quantization config):
 * per layer self_attn.q/k/v_proj [AE, AE] fused into self_attn.qkv_proj by heads
 * (QKVParallelLinear, kv heads = heads: other counts refused by the loader), its bias
 * [q_r; zeros; v_r] (k_proj has none: the fused bias loads zeros for it); o_proj by columns
 * (RowParallelLinear, its bias whole); mlp.fc1 [AI, AE] by rows with its bias
 * (ColumnParallelLinear), mlp.fc2 [AE, AI] by columns, its bias whole; those six weights
 * quantized. conv1 [AE, mel, 3], conv2 [AE, AE, 3] (nn.Conv1d), input_layernorm /
 * post_attention_layernorm and the final norm (nn.LayerNorm, weight + bias) whole on every
 * rank, never quantized. A stray audio_tower.embed_positions.* is skipped (skip_prefixes).
 *
 * The projector GlmAsrMultiModalProjector: linear_1 [2 hid, AI] by rows with its bias
 * (ColumnParallelLinear), linear_2 [hid, 2 hid] by columns, its bias whole
 * (RowParallelLinear); both weights quantized. The 2 hid width has no table dim:
 * glmasr_shapes checks it.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define GA_T                "audio_tower."
#define GA_L                GA_T "layers.{i}."
#define GA_P                "multi_modal_projector."
#define GA_R(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define GA_LR(n, nd, d0, d1)                                                                       \
	SM_RULE(GA_L n, GA_L n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, nd, d0, d1)
#define GA_S(n, rt, kind, part, unit, fl, nd, d0, d1)                                              \
	SM_RULE(GA_L n, GA_L rt, kind, part, unit, SM_C_ALL, SM_F_VIS | (fl), nd, d0, d1)
#define GA_QKV "self_attn.qkv_proj."

static const sm_rule glmasr_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    SM_RULES_MLP_SWITCHED,
    SM_WH_CONV(GA_T, "conv1.weight", SM_D_VCH),
    GA_R(GA_T "conv1.bias", 1, SM_D_VE, SM_D_ANY),
    SM_WH_CONV(GA_T, "conv2.weight", SM_D_VE),
    GA_R(GA_T "conv2.bias", 1, SM_D_VE, SM_D_ANY),
    GA_S("self_attn.q_proj.weight", GA_QKV "weight", SM_K_ROWS, 0, SM_U_VHEADS, SM_F_QUANT, 2,
         SM_D_VE, SM_D_VE),
    GA_S("self_attn.k_proj.weight", GA_QKV "weight", SM_K_ROWS, 1, SM_U_VHEADS, SM_F_QUANT, 2,
         SM_D_VE, SM_D_VE),
    GA_S("self_attn.v_proj.weight", GA_QKV "weight", SM_K_ROWS, 2, SM_U_VHEADS, SM_F_QUANT, 2,
         SM_D_VE, SM_D_VE),
    GA_S("self_attn.q_proj.bias", GA_QKV "bias", SM_K_QKVZ, 0, SM_U_VHEADS, 0, 1, SM_D_VE,
         SM_D_ANY),
    GA_S("self_attn.v_proj.bias", GA_QKV "bias", SM_K_QKVZ, 1, SM_U_VHEADS, 0, 1, SM_D_VE,
         SM_D_ANY),
    GA_S("self_attn.o_proj.weight", "self_attn.o_proj.weight", SM_K_COLS, 0, SM_U_VHEADS,
         SM_F_QUANT, 2, SM_D_VE, SM_D_VE),
    GA_LR("self_attn.o_proj.bias", 1, SM_D_VE, SM_D_ANY),
    GA_LR("input_layernorm.weight", 1, SM_D_VE, SM_D_ANY),
    GA_LR("input_layernorm.bias", 1, SM_D_VE, SM_D_ANY),
    GA_LR("post_attention_layernorm.weight", 1, SM_D_VE, SM_D_ANY),
    GA_LR("post_attention_layernorm.bias", 1, SM_D_VE, SM_D_ANY),
    GA_S("mlp.fc1.weight", "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_VI, SM_F_QUANT, 2, SM_D_VI,
         SM_D_VE),
    GA_S("mlp.fc1.bias", "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_VI, 0, 1, SM_D_VI, SM_D_ANY),
    GA_S("mlp.fc2.weight", "mlp.fc2.weight", SM_K_COLS, 0, SM_U_VI, SM_F_QUANT, 2, SM_D_VE,
         SM_D_VI),
    GA_LR("mlp.fc2.bias", 1, SM_D_VE, SM_D_ANY),
    GA_R(GA_T "norm.weight", 1, SM_D_VE, SM_D_ANY),
    GA_R(GA_T "norm.bias", 1, SM_D_VE, SM_D_ANY),
    SM_RULE(GA_P "linear_1.weight", GA_P "linear_1.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_ANY, SM_D_VI),
    SM_RULE(GA_P "linear_1.bias", GA_P "linear_1.bias", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, 0, 1,
            SM_D_ANY, SM_D_ANY),
    SM_RULE(GA_P "linear_2.weight", GA_P "linear_2.weight", SM_K_COLS, 0, SM_U_HID, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_ANY),
    GA_R(GA_P "linear_2.bias", 1, SM_D_HID, SM_D_ANY),
};

/* A llama text_config (vLLM builds LlamaForCausalLM of it); encoder heads that split its
 * width (GlmAsrEncoderAttention's head_dim). */
static int glmasr_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_text_config_is(
	    c, "llama", NULL, "GlmAsrConfig's default; vLLM builds LlamaForCausalLM", err);
	if (rv != WT_OK)
		return rv;
	return shardmap_audio_heads_check(c, "audio_config.num_attention_heads", "hidden_size",
	                                  "GlmAsrEncoderAttention", err);
}

/* linear_1's rows and bias, linear_2's columns: 2 x text hidden_size. */
static int glmasr_shapes(const ckpt *k, const ckpt_config *c, wt_errbuf *err)
{
	static const struct {
		const char *name;
		int dim;
	} two[] = {
	    {GA_P "linear_1.weight", 0}, {GA_P "linear_1.bias", 0}, {GA_P "linear_2.weight", 1}};
	for (size_t j = 0; j < sizeof(two) / sizeof(two[0]); j++) {
		const ckpt_tensor *d = ckpt_find(k, two[j].name);
		if (d == NULL || d->ndim <= two[j].dim)
			continue; /* missing or misshapen: the table refuses it */
		if (d->shape[two[j].dim] != 2 * c->hidden_size)
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': dim %d is %" PRId64 ", expected 2 x "
			                 "text_config.hidden_size = %" PRId64
			                 " (GlmAsrMultiModalProjector's inner width)",
			                 two[j].name, two[j].dim, d->shape[two[j].dim],
			                 2 * c->hidden_size);
	}
	return WT_OK;
}

static const char *const glmasr_archs[] = {"GlmAsrForConditionalGeneration", NULL};

const sm_family shardmap_family_glmasr = {
    .name = "glmasr",
    .archs = glmasr_archs,
    .rules = glmasr_rules,
    .n_rules = SM_NRULES(glmasr_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = glmasr_check,
    .check_extra = glmasr_shapes,
    .drop_prefix = GA_T "embed_positions.",
    .audio = true,
    .voxtral = true,
};
