/*
 * family_ultravox.c — Ultravox (UltravoxModel, model_type ultravox, remote code:
 * fixie-ai/ultravox-v0_3 ... v0_6 on Llama 3.x, Mistral-Nemo, Qwen3 and Gemma 3 language
 * models), cut as vLLM's ultravox.py / whisper.py build the modules these tensors load into
 * (vLLM's AutoWeightsLoader loads audio_tower.*, multi_modal_projector.* and
 * language_model.* as they are).
 *
 * - Language model (language_model.*): vLLM builds the registered model of text_config
 *   (UltravoxConfig's wrapped_model_config; llama when it names no model_type).
 *   llama / mistral / qwen2 / qwen3 are Llama's table (q/k/v into qkv_proj with Qwen2's
 *   optional biases, gate / up into gate_up_proj, the embedding and lm_head by padded
 *   vocabulary rows) with Qwen3's per-head q_norm / k_norm (SM_C_QWEN3); gemma3_text Gemma 3's
 *   (the pre / post feed-forward norms, q_norm / k_norm; tied by Gemma3TextConfig's default).
 *   Tied by text_config.tie_word_embeddings alone. The loader (loader/config_ultravox.c)
 *   refuses any other model_type.
 * - The audio tower (audio_tower.*): UltravoxWhisperEncoder, vLLM's WhisperEncoder built of
 *   audio_config with the quantization config: the Whisper encoder's rules
 *   (SM_RULES_WHISPER_ENCODER, as Voxtral's tower and Whisper's encoder: q/k/v fused by heads
 *   into self_attn.qkv_proj with k's zero bias, out_proj / fc2 by columns, fc1 by rows, those
 *   quantized; conv1 / conv2, embed_positions and the LayerNorms whole).
 * - The projector (multi_modal_projector.*, UltravoxFeedForwardProjector): ln_pre [AE x
 *   stack_factor] (RMSNorm), linear_1 [hidden_size, AE x stack_factor] and linear_2
 *   [text hidden_size, hidden_size / 2 under swiglu, else hidden_size] without biases
 *   (ReplicatedLinear with the quantization config: whole on every rank, quantized), then
 *   ln_mid [hidden_size / 2] when projector_ln_mid (v0.5 on), else ln_post [text
 *   hidden_size]. hidden_size is UltravoxConfig's own (the top level's).
 *
 * Refused by name (check_names) before any tensor is mapped: a config naming text_model_id
 * or audio_model_id whose weights are not in the checkpoint (vLLM fetches them from that
 * repository; weightd cuts one folder), and a whole Whisper checkpoint under
 * audio_tower.model. / audio_tower.proj_out. (vLLM's hf_to_vllm_mapper renames its encoder
 * and skips the rest; not cut here: the fix is named).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/families.h"
#include "shardmap/family_rules.h"

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

#define UV_P "multi_modal_projector."
/* A projector tensor, whole on every rank, under condition c with flags f. */
#define UV_R(n, c, f, nd, d0, d1) SM_RULE(UV_P n, UV_P n, SM_K_REPL, 0, SM_U_NONE, c, f, nd, d0, d1)

#define UV_AUDIO_RULES                                                                             \
	SM_RULES_WHISPER_ENCODER("audio_tower."),                                                  \
	    UV_R("ln_pre.weight", SM_C_ALL, 0, 1, SM_D_VM, SM_D_ANY),                              \
	    UV_R("linear_1.weight", SM_C_ALL, SM_F_QUANT, 2, SM_D_VPI, SM_D_VM),                   \
	    UV_R("ln_mid.weight", SM_C_UVLNMID, 0, 1, SM_D_VPO, SM_D_ANY),                         \
	    UV_R("linear_2.weight", SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_VPO),                  \
	    UV_R("ln_post.weight", SM_C_UVLNPOST, 0, 1, SM_D_HID, SM_D_ANY)

/* LlamaForCausalLM / MistralForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM. */
static const sm_rule uv_rules[] = {
    SM_RULES_TOP_AT("language_model."),
    SM_RULES_LLAMA_QWEN_LAYER,
    UV_AUDIO_RULES,
};

/* Gemma3ForCausalLM (text_config.model_type gemma3_text). */
static const sm_rule uv_gemma3_rules[] = {
    SM_RULES_GEMMA3_LM("language_model."),
    UV_AUDIO_RULES,
};

static bool has_prefix(const ckpt *ck, const char *p)
{
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++)
		if (strncmp(ckpt_tensor_at(ck, k)->name, p, strlen(p)) == 0)
			return true;
	return false;
}

static int uv_names(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const char *n = ckpt_tensor_at(ck, k)->name;
		if (strncmp(n, "audio_tower.model.", 18) == 0 ||
		    strncmp(n, "audio_tower.proj_out.", 21) == 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': a whole Whisper checkpoint under audio_tower. (vLLM's "
			    "ultravox.py maps audio_tower.model.encoder.* to audio_tower.* and "
			    "skips "
			    "the decoder and proj_out); not cut here: rename "
			    "audio_tower.model.encoder.<name> to audio_tower.<name> and remove "
			    "audio_tower.model.decoder.* and audio_tower.proj_out.*",
			    n);
	}
	if (c->uv_text_id[0] != '\0' && !has_prefix(ck, "language_model."))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: text_model_id '%s' and no language_model.* tensor in "
		    "the checkpoint: vLLM loads the language model's weights from that "
		    "repository (secondary weights), which weightd does not fetch; add "
		    "its tensors as language_model.<name> (e.g. "
		    "language_model.model.embed_tokens.weight)",
		    c->uv_text_id);
	if (c->uv_audio_id[0] != '\0' && !has_prefix(ck, "audio_tower."))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: audio_model_id '%s' and no audio_tower.* tensor in the "
		    "checkpoint: vLLM loads the Whisper encoder's weights from that "
		    "repository (secondary weights), which weightd does not fetch; add "
		    "its model.encoder.<name> tensors as audio_tower.<name> (e.g. "
		    "audio_tower.conv1.weight)",
		    c->uv_audio_id);
	return WT_OK;
}

/* audio_config a Whisper encoder whose heads split d_model (WhisperAttention's own check). */
static int uv_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_audio)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type ultravox (UltravoxConfig: "
		                 "text_config, audio_config, stack_factor, ...)",
		                 c->architecture);
	return shardmap_audio_heads_check(c, "audio_config.encoder_attention_heads", "d_model",
	                                  "WhisperAttention", err);
}

static const sm_family uv_gemma3;

/* Gemma 3's table when text_config.model_type is gemma3_text. */
static const sm_family *uv_variant(const ckpt_config *c)
{
	return strcmp(c->lm_model_type, "gemma3_text") == 0 ? &uv_gemma3 : NULL;
}

static const char *const uv_archs[] = {"UltravoxModel", NULL};

#define UV_FAMILY(R)                                                                               \
	.name = "ultravox", .archs = uv_archs, .rules = R, .n_rules = SM_NRULES(R),                \
	.layer_prefix = "language_model.model.layers.", .check = uv_check,                         \
	.check_names = uv_names, .audio = true, .ultravox = true

static const sm_family uv_gemma3 = {UV_FAMILY(uv_gemma3_rules), .tie_default = true};

const sm_family shardmap_family_ultravox = {UV_FAMILY(uv_rules), .variant_for = uv_variant};
