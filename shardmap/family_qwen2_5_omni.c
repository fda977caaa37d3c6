/*
 * family_qwen2_5_omni.c — Qwen2.5-Omni's thinker (Qwen2_5OmniForConditionalGeneration,
 * Qwen2_5OmniModel; model_type qwen2_5_omni: Qwen/Qwen2.5-Omni-3B, -7B), cut as vLLM's
 * qwen2_5_omni_thinker.py (Qwen2_5OmniThinkerForConditionalGeneration, which vLLM registers
 * both architectures as) / qwen2.py / qwen2_5_vl.py load it. Its load_weights maps
 * thinker.model. -> language_model.model., thinker.lm_head. -> language_model.lm_head.,
 * thinker. -> "" and skips talker. and token2wav.: the shards keep the checkpoint's thinker.*
 * names, and every talker.* / token2wav.* tensor (the speech generator, which vLLM does not
 * build) is skipped and listed, whatever enable_audio_output says. One layout (transformers
 * 4.57.1 saves the released names: no _checkpoint_conversion_mapping).
 *
 * The language model: Qwen2's table (q/k/v biases) under `thinker.` (vLLM builds
 * Qwen2ForCausalLM of thinker_config.text_config), tied by text_config.tie_word_embeddings
 * alone (Qwen2_5OmniTextConfig's default false).
 *
 * The vision tower `thinker.visual.*`: vLLM's Qwen2_5_VisionTransformer, built with the
 * quantization config, Qwen2.5-VL's rules (family_qwen2vl.c) but for its attention: the
 * checkpoint stores attn.q / attn.k / attn.v [VE, VE] with biases (Qwen2_5OmniVisionAttention),
 * which vLLM's stacked_params_mapping loads into attn.qkv (QKVParallelLinear with as many kv
 * heads as heads): attn.qkv.weight / .bias = [q_r; k_r; v_r] by vision heads, quantized as
 * the fused qkv of Qwen2.5-VL is.
 *
 * The audio encoder `thinker.audio_tower.*`: vLLM builds transformers' own
 * Qwen2_5OmniAudioEncoder (plain nn.Linear, no tensor parallelism, no quant config), so
 * every tensor is whole on every rank, never quantized: conv1 [AE, mel, 3] and conv2
 * [AE, AE, 3] with biases, audio_bos_eos_token [2, output_dim] (nn.Embedding(2, ...)), per
 * layer the Whisper layer (self_attn.{q,k,v,out}_proj [AE, AE], k_proj without a bias,
 * self_attn_layer_norm, fc1 [AI, AE] / fc2 [AE, AI] with biases, final_layer_norm), ln_post
 * and proj [output_dim, AE] with its bias. Its positional_embedding is a non-persistent
 * buffer (not saved; a checkpoint holding one is refused as unknown). AE, AI, mel are
 * d_model, encoder_ffn_dim and num_mel_bins (SM_D_AE, SM_D_AI, SM_D_AMEL), the layers
 * encoder_layers ({i} of the SM_F_QF rules); output_dim must be the language model's
 * hidden_size (the audio features are its input embeddings), so SM_D_HID.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "thinker.model.layers.{i}."

#define QO_V  "thinker.visual."
#define QO_VB QO_V "blocks.{i}."
#define QO_A  "thinker.audio_tower."
#define QO_AB QO_A "layers.{i}."

/* replicated: a top-level tensor (no {i}), a vision block's, an audio encoder layer's */
#define QO_R(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define QO_VR(n)                                                                                   \
	SM_RULE(QO_VB n, QO_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define QO_AR(n, nd, d0, d1)                                                                       \
	SM_RULE(QO_AB n, QO_AB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_QF, nd, d0, d1)
/* a vision block's split tensor: ckpt leaf n, runtime leaf rt */
#define QO_VS(n, rt, kind, part, unit, flags, nd, d0, d1)                                          \
	SM_RULE(QO_VB n, QO_VB rt, kind, part, unit, SM_C_ALL, SM_F_VIS | (flags), nd, d0, d1)
/* a Conv1d weight [out, in, kernel 3] (the kernel is the class's constant, not checked) */
#define QO_CONV(n, d1)                                                                             \
	{                                                                                          \
		QO_A n, QO_A n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 3,                           \
		{                                                                                  \
			SM_D_AE, d1, SM_D_ANY                                                      \
		}                                                                                  \
	}
/* the vision attention's q (part 0), k (1), v (2): weight and bias into attn.qkv */
#define QO_VQKV(x, part)                                                                           \
	QO_VS("attn." x ".weight", "attn.qkv.weight", SM_K_ROWS, part, SM_U_VHEADS, SM_F_QUANT, 2, \
	      SM_D_VE, SM_D_VE),                                                                   \
	    QO_VS("attn." x ".bias", "attn.qkv.bias", SM_K_ROWS, part, SM_U_VHEADS, 0, 1, SM_D_VE, \
	          SM_D_ANY)

static const sm_rule qwen2_5_omni_rules[] = {
    SM_RULES_TOP_AT("thinker."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    /* the vision tower: Qwen2.5-VL's */
    SM_RULE_PATCH3D(QO_V),
    QO_VR("norm1.weight"),
    QO_VR("norm2.weight"),
    QO_VQKV("q", 0),
    QO_VQKV("k", 1),
    QO_VQKV("v", 2),
    QO_VS("attn.proj.weight", "attn.proj.weight", SM_K_COLS, 0, SM_U_VHEADS, SM_F_QUANT, 2, SM_D_VE,
          SM_D_VE),
    QO_VR("attn.proj.bias"),
    QO_VS("mlp.gate_proj.weight", "mlp.gate_up_proj.weight", SM_K_ROWS, 0, SM_U_VI, SM_F_QUANT, 2,
          SM_D_VI, SM_D_VE),
    QO_VS("mlp.up_proj.weight", "mlp.gate_up_proj.weight", SM_K_ROWS, 1, SM_U_VI, SM_F_QUANT, 2,
          SM_D_VI, SM_D_VE),
    QO_VS("mlp.gate_proj.bias", "mlp.gate_up_proj.bias", SM_K_ROWS, 0, SM_U_VI, 0, 1, SM_D_VI,
          SM_D_ANY),
    QO_VS("mlp.up_proj.bias", "mlp.gate_up_proj.bias", SM_K_ROWS, 1, SM_U_VI, 0, 1, SM_D_VI,
          SM_D_ANY),
    QO_VS("mlp.down_proj.weight", "mlp.down_proj.weight", SM_K_COLS, 0, SM_U_VI, SM_F_QUANT, 2,
          SM_D_VE, SM_D_VI),
    QO_VR("mlp.down_proj.bias"),
    QO_R(QO_V "merger.ln_q.weight", 1, SM_D_VE, SM_D_ANY),
    SM_RULE(QO_V "merger.mlp.0.weight", QO_V "merger.mlp.0.weight", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_VM, SM_D_VM),
    SM_RULE(QO_V "merger.mlp.0.bias", QO_V "merger.mlp.0.bias", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, 0,
            1, SM_D_VM, SM_D_ANY),
    SM_RULE(QO_V "merger.mlp.2.weight", QO_V "merger.mlp.2.weight", SM_K_COLS, 0, SM_U_VM, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_VM),
    QO_R(QO_V "merger.mlp.2.bias", 1, SM_D_HID, SM_D_ANY),
    /* the audio encoder: whole, never quantized */
    QO_CONV("conv1.weight", SM_D_AMEL),
    QO_R(QO_A "conv1.bias", 1, SM_D_AE, SM_D_ANY),
    QO_CONV("conv2.weight", SM_D_AE),
    QO_R(QO_A "conv2.bias", 1, SM_D_AE, SM_D_ANY),
    QO_R(QO_A "audio_bos_eos_token.weight", 2, SM_D_ANY, SM_D_HID),
    QO_AR("self_attn.q_proj.weight", 2, SM_D_AE, SM_D_AE),
    QO_AR("self_attn.q_proj.bias", 1, SM_D_AE, SM_D_ANY),
    QO_AR("self_attn.k_proj.weight", 2, SM_D_AE, SM_D_AE),
    QO_AR("self_attn.v_proj.weight", 2, SM_D_AE, SM_D_AE),
    QO_AR("self_attn.v_proj.bias", 1, SM_D_AE, SM_D_ANY),
    QO_AR("self_attn.out_proj.weight", 2, SM_D_AE, SM_D_AE),
    QO_AR("self_attn.out_proj.bias", 1, SM_D_AE, SM_D_ANY),
    QO_AR("self_attn_layer_norm.weight", 1, SM_D_AE, SM_D_ANY),
    QO_AR("self_attn_layer_norm.bias", 1, SM_D_AE, SM_D_ANY),
    QO_AR("fc1.weight", 2, SM_D_AI, SM_D_AE),
    QO_AR("fc1.bias", 1, SM_D_AI, SM_D_ANY),
    QO_AR("fc2.weight", 2, SM_D_AE, SM_D_AI),
    QO_AR("fc2.bias", 1, SM_D_AE, SM_D_ANY),
    QO_AR("final_layer_norm.weight", 1, SM_D_AE, SM_D_ANY),
    QO_AR("final_layer_norm.bias", 1, SM_D_AE, SM_D_ANY),
    QO_R(QO_A "ln_post.weight", 1, SM_D_AE, SM_D_ANY),
    QO_R(QO_A "ln_post.bias", 1, SM_D_AE, SM_D_ANY),
    QO_R(QO_A "proj.weight", 2, SM_D_HID, SM_D_AE),
    QO_R(QO_A "proj.bias", 1, SM_D_HID, SM_D_ANY),
};

/* The speech generator's tensors (talker.*, token2wav.*): vLLM's load_weights skips them. */
static bool omni_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strncmp(cn, "talker.", 7) == 0 || strncmp(cn, "token2wav.", 10) == 0;
}

int shardmap_omni_audio_check(const ckpt_config *c, const char *attn, const char *proj,
                              wt_errbuf *err)
{
	if (c->a_d_model % c->a_heads != 0 || c->a_d_model % 2 != 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: thinker_config.audio_config.d_model %" PRId64
		    " must be even and divisible by encoder_attention_heads %" PRId64
		    " (%s splits it into heads, SinusoidsPositionEmbedding into sin / cos "
		    "halves)",
		    c->a_d_model, c->a_heads, attn);
	if (c->a_out_dim != c->hidden_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: thinker_config.audio_config.output_dim %" PRId64
		                 " must equal text_config.hidden_size %" PRId64
		                 " (the encoder's %s output is the language model's input)",
		                 c->a_out_dim, c->hidden_size, proj);
	return WT_OK;
}

/* The vision tower's heads split its width and its merger feeds the language model
 * (out_hidden_size = hidden_size); the audio encoder's heads split d_model, which
 * SinusoidsPositionEmbedding needs even, and its output_dim is the language model's
 * hidden_size; MRoPE's sections sum to head_dim / 2. */
static int qwen2_5_omni_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->v_hidden_size % c->v_num_heads)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: thinker_config.vision_config.num_heads %" PRId64
		                 " does not divide hidden_size %" PRId64,
		                 c->v_num_heads, c->v_hidden_size);
	if (c->v_out_hidden_size != c->hidden_size)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: thinker_config.vision_config.out_hidden_size %" PRId64
		    " must equal text_config.hidden_size %" PRId64
		    " (the merger's output is the language model's input)",
		    c->v_out_hidden_size, c->hidden_size);
	int rv = shardmap_omni_audio_check(c, "Qwen2_5OmniAudioAttention", "proj", err);
	if (rv != WT_OK)
		return rv;
	return shardmap_mrope_check(c, "Qwen2.5-Omni", err);
}

static const char *const qwen2_5_omni_archs[] = {"Qwen2_5OmniForConditionalGeneration",
                                                 "Qwen2_5OmniModel", NULL};

const sm_family shardmap_family_qwen2_5_omni = {
    .name = "qwen2_5_omni",
    .archs = qwen2_5_omni_archs,
    .rules = qwen2_5_omni_rules,
    .n_rules = SM_NRULES(qwen2_5_omni_rules),
    .layer_prefix = "thinker.model.layers.",
    .check = qwen2_5_omni_check,
    .vision_gated = true,
    .drop_canon = omni_drop,
    .omni = true,
};
