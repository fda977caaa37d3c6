/*
 * family_qwen2_audio.c — Qwen2-Audio (Qwen2AudioForConditionalGeneration, model_type
 * qwen2_audio: Qwen/Qwen2-Audio-7B, -7B-Instruct), cut as vLLM's qwen2_audio.py / qwen2.py
 * load it: Qwen2's table (q/k/v biases) under `language_model.` (vLLM builds
 * Qwen2ForCausalLM of text_config), tied by text_config.tie_word_embeddings alone
 * (Qwen2Config's default false); the Whisper-style audio encoder `audio_tower.*`, which vLLM
 * builds as transformers' own Qwen2AudioEncoder (no tensor parallelism, no quant config),
 * and the projector `multi_modal_projector.linear` (a plain nn.Linear with its bias): whole
 * on every rank, never quantized. One layout (transformers 4.57.1 saves the released names:
 * Qwen2AudioForConditionalGeneration has no _checkpoint_conversion_mapping).
 *
 * The encoder (Qwen2AudioEncoderConfig): SM_RULES_QWEN2_AUDIO_TOWER (family_qwen2_audio.h); its
 * avg_pooler has no weights. AE, AI, the block count and mel are d_model, encoder_ffn_dim,
 * encoder_layers and num_mel_bins (kept in the vision dims: SM_D_VE, SM_D_VI, vis_depth,
 * SM_D_VCH; SM_D_VNP the positions).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_qwen2_audio.h"
#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

static const sm_rule qwen2_audio_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QWEN2_AUDIO_TOWER,
    /* nn.Linear(d_model, text hidden_size, bias=True) */
    QA_R("multi_modal_projector.linear.weight", 2, SM_D_HID, SM_D_VE),
    QA_R("multi_modal_projector.linear.bias", 1, SM_D_HID, SM_D_ANY),
};

/* audio_config an encoder whose heads split d_model (Qwen2AudioAttention's own check); a
 * text_config of model_type qwen2 (vLLM builds Qwen2ForCausalLM whatever it says). */
static int qwen2_audio_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_audio)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs audio_config (the Whisper-style encoder's "
		                 "d_model, encoder_layers, encoder_attention_heads, ...)",
		                 c->architecture);
	int rv = shardmap_text_config_is(c, "qwen2", NULL,
	                                 "vLLM's qwen2_audio.py builds Qwen2ForCausalLM", err);
	if (rv != WT_OK)
		return rv;
	return shardmap_audio_heads_check(c, "audio_config.encoder_attention_heads", "d_model",
	                                  "Qwen2AudioAttention", err);
}

static const char *const qwen2_audio_archs[] = {"Qwen2AudioForConditionalGeneration", NULL};

const sm_family shardmap_family_qwen2_audio = {
    .name = "qwen2_audio",
    .archs = qwen2_audio_archs,
    .rules = qwen2_audio_rules,
    .n_rules = SM_NRULES(qwen2_audio_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = qwen2_audio_check,
    .audio = true,
};
