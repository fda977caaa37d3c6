/*
 * family_audioflamingo3.c — Audio Flamingo 3 (AudioFlamingo3ForConditionalGeneration, model_type
 * audioflamingo3: nvidia/audio-flamingo-3-hf), cut as vLLM's audioflamingo3.py / qwen2.py load
 * it (load_weights a bare AutoWeightsLoader: no hf_to_vllm_mapper, so the released names are
 * the module names; packed_modules_mapping fuses the LM's q/k/v and gate/up only):
 *
 * The language model: Qwen2's table (q/k/v biases) under `language_model.` (vLLM builds
 * Qwen2ForCausalLM of text_config whatever its model_type: refused unless qwen2), tied by
 * text_config.tie_word_embeddings alone (Qwen2Config's default false).
 *
 * The encoder `audio_tower.*`: vLLM's AudioFlamingo3Encoder subclasses transformers' own
 * Qwen2AudioEncoder (built of audio_config, no quant config, no tensor parallelism) and adds
 * only an nn.AvgPool1d, which has no weights: Qwen2-Audio's rows unchanged
 * (SM_RULES_QWEN2_AUDIO_TOWER, family_qwen2_audio.h), whole on every rank, never quantized.
 * Only the key names differ: AudioFlamingo3EncoderConfig's hidden_size, intermediate_size,
 * num_hidden_layers, num_attention_heads (the loader also reads its attribute_map aliases).
 *
 * The projector AudioFlamingo3MultiModalProjector: linear_1 [hid, AE] and linear_2 [hid, hid],
 * plain nn.Linear built without quant_config, their biases exactly when projector_bias (true
 * by default): whole on every rank, never quantized.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_qwen2_audio.h"
#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define AF3_P    "multi_modal_projector."
#define AF3_B(n) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_MMBIAS, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule audioflamingo3_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QWEN2_AUDIO_TOWER,
    QA_R(AF3_P "linear_1.weight", 2, SM_D_HID, SM_D_VE),
    AF3_B(AF3_P "linear_1.bias"),
    QA_R(AF3_P "linear_2.weight", 2, SM_D_HID, SM_D_HID),
    AF3_B(AF3_P "linear_2.bias"),
};

/* A qwen2 text_config (its sizes: refused without one rather than the whole of
 * AudioFlamingo3Config's default Qwen2Config); audio_config an encoder whose heads split
 * hidden_size (Qwen2AudioAttention's own check). */
static int audioflamingo3_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_text_config_is(c, "qwen2", NULL,
	                                 "vLLM's audioflamingo3.py builds Qwen2ForCausalLM", err);
	if (rv != WT_OK)
		return rv;
	return shardmap_audio_heads_check(c, "audio_config.num_attention_heads", "hidden_size",
	                                  "Qwen2AudioAttention", err);
}

static const char *const audioflamingo3_archs[] = {"AudioFlamingo3ForConditionalGeneration", NULL};

const sm_family shardmap_family_audioflamingo3 = {
    .name = "audioflamingo3",
    .archs = audioflamingo3_archs,
    .rules = audioflamingo3_rules,
    .n_rules = SM_NRULES(audioflamingo3_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = audioflamingo3_check,
    .audio = true,
    .voxtral = true,
    .mm_bias_key = "projector_bias",
};
