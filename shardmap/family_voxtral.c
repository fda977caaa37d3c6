/*
 * family_voxtral.c — Voxtral (VoxtralForConditionalGeneration, model_type voxtral:
 * mistralai/Voxtral-Mini-3B-2507, Voxtral-Small-24B-2507 in transformers' layout), cut as
 * vLLM's voxtral.py / whisper.py / llama.py build the modules these tensors load into
 * (vLLM reads the Mistral-native consolidated names; the transformers names below are the
 * same tensors one for one: audio_tower.* its whisper_encoder, multi_modal_projector.
 * linear_1 / linear_2 its audio_language_adapter's w_in / w_out, language_model.* its
 * language model).
 *
 * The language model: Llama's table under `language_model.` (vLLM builds LlamaForCausalLM of
 * text_config; q/k/v and o_proj biases exactly when attention_bias, the MLP's when mlp_bias),
 * tied by text_config.tie_word_embeddings alone.
 *
 * The Whisper encoder `audio_tower.*` (VoxtralEncoderConfig): vLLM's WhisperEncoder, built
 * with the quantization config. Per layer q/k/v_proj [AE, AE] fuse into
 * self_attn.qkv_proj by heads (QKVParallelLinear with as many kv heads as heads); its bias
 * is [q_r; zeros; v_r] (k_proj has no bias: vLLM loads zeros for it); out_proj by columns
 * (RowParallelLinear, its bias replicated); fc1 [AI, AE] by rows with its bias
 * (ColumnParallelLinear), fc2 [AE, AI] by columns, its bias replicated; those six weights
 * quantized. conv1 [AE, mel, 3], conv2 [AE, AE, 3] (nn.Conv1d), embed_positions
 * [max_source_positions, AE] (nn.Embedding) and the LayerNorms whole on every rank, never
 * quantized. AE, AI, the layer count, the heads, mel and the positions are hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads, num_mel_bins and
 * max_source_positions (the vision dims, as Qwen2-Audio's).
 *
 * The projector: linear_1 [hid, AI] (the encoder's output is read AI = 4 x AE wide: vLLM's
 * w_in of d_model x downsample_factor) and linear_2 [hid, hid], without biases: vLLM's
 * AudioLanguageAdapter is two plain nn.Linear, whole on every rank, never quantized.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define VX_R(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

static const sm_rule voxtral_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN_SWITCHED,
    SM_RULES_MLP_SWITCHED,
    SM_RULES_WHISPER_ENCODER("audio_tower."),
    VX_R("multi_modal_projector.linear_1.weight", 2, SM_D_HID, SM_D_VI),
    VX_R("multi_modal_projector.linear_2.weight", 2, SM_D_HID, SM_D_HID),
};

/* A text_config object (its sizes: refused without one rather than the whole of
 * VoxtralConfig's default Llama); audio_config a Whisper encoder whose heads split hidden_size
 * (VoxtralAttention's and vLLM's WhisperAttention's own check); a text_config of model_type llama
 * (vLLM builds LlamaForCausalLM of it). */
static int voxtral_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_text_config_is(
	    c, "llama", NULL, "VoxtralConfig's default; vLLM builds LlamaForCausalLM", err);
	if (rv != WT_OK)
		return rv;
	return shardmap_audio_heads_check(c, "audio_config.num_attention_heads", "hidden_size",
	                                  "the Whisper encoder", err);
}

static const char *const voxtral_archs[] = {"VoxtralForConditionalGeneration", NULL};

const sm_family shardmap_family_voxtral = {
    .name = "voxtral",
    .archs = voxtral_archs,
    .rules = voxtral_rules,
    .n_rules = SM_NRULES(voxtral_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = voxtral_check,
    .audio = true,
    .voxtral = true,
};
