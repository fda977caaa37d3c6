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
 * The encoder (Qwen2AudioEncoderConfig): conv1 [AE, mel, 3] and conv2 [AE, AE, 3] with their
 * biases, embed_positions [max_source_positions, AE], per layer self_attn.{q,k,v,out}_proj
 * [AE, AE] (k_proj without a bias), self_attn_layer_norm, fc1 [AI, AE], fc2 [AE, AI] with
 * their biases, final_layer_norm, then layer_norm; its avg_pooler has no weights. AE, AI, the
 * block count and mel are d_model, encoder_ffn_dim, encoder_layers and num_mel_bins (kept in
 * the vision dims: SM_D_VE, SM_D_VI, vis_depth, SM_D_VCH; SM_D_VNP the positions).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define QA_T "audio_tower."
#define QA_B QA_T "layers.{i}."

#define QA_R(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define QA_BR(n, nd, d0, d1)                                                                       \
	SM_RULE(QA_B n, QA_B n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, nd, d0, d1)
/* a Conv1d weight [out, in, kernel 3] (the kernel is the class's constant, not checked) */
#define QA_CONV(n, d1)                                                                             \
	{                                                                                          \
		QA_T n, QA_T n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 3,                           \
		{                                                                                  \
			SM_D_VE, d1, SM_D_ANY                                                      \
		}                                                                                  \
	}

static const sm_rule qwen2_audio_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    QA_CONV("conv1.weight", SM_D_VCH),
    QA_R(QA_T "conv1.bias", 1, SM_D_VE, SM_D_ANY),
    QA_CONV("conv2.weight", SM_D_VE),
    QA_R(QA_T "conv2.bias", 1, SM_D_VE, SM_D_ANY),
    QA_R(QA_T "embed_positions.weight", 2, SM_D_VNP, SM_D_VE),
    QA_BR("self_attn.q_proj.weight", 2, SM_D_VE, SM_D_VE),
    QA_BR("self_attn.q_proj.bias", 1, SM_D_VE, SM_D_ANY),
    QA_BR("self_attn.k_proj.weight", 2, SM_D_VE, SM_D_VE),
    QA_BR("self_attn.v_proj.weight", 2, SM_D_VE, SM_D_VE),
    QA_BR("self_attn.v_proj.bias", 1, SM_D_VE, SM_D_ANY),
    QA_BR("self_attn.out_proj.weight", 2, SM_D_VE, SM_D_VE),
    QA_BR("self_attn.out_proj.bias", 1, SM_D_VE, SM_D_ANY),
    QA_BR("self_attn_layer_norm.weight", 1, SM_D_VE, SM_D_ANY),
    QA_BR("self_attn_layer_norm.bias", 1, SM_D_VE, SM_D_ANY),
    QA_BR("fc1.weight", 2, SM_D_VI, SM_D_VE),
    QA_BR("fc1.bias", 1, SM_D_VI, SM_D_ANY),
    QA_BR("fc2.weight", 2, SM_D_VE, SM_D_VI),
    QA_BR("fc2.bias", 1, SM_D_VE, SM_D_ANY),
    QA_BR("final_layer_norm.weight", 1, SM_D_VE, SM_D_ANY),
    QA_BR("final_layer_norm.bias", 1, SM_D_VE, SM_D_ANY),
    QA_R(QA_T "layer_norm.weight", 1, SM_D_VE, SM_D_ANY),
    QA_R(QA_T "layer_norm.bias", 1, SM_D_VE, SM_D_ANY),
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
	if (c->a_d_model % c->a_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: audio_config.encoder_attention_heads %" PRId64
		                 " does not divide d_model %" PRId64
		                 " (Qwen2AudioAttention splits it into heads)",
		                 c->a_heads, c->a_d_model);
	return WT_OK;
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
