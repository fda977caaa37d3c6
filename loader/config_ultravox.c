/*
 * config_ultravox.c — Ultravox's config keys (model_type ultravox: UltravoxConfig, vLLM's
 * vllm/transformers_utils/configs/ultravox.py, the fixie-ai/ultravox-v0_3 ... v0_6 releases'
 * remote class; transformers 4.57.1 ships none).
 *
 * The language model: UltravoxConfig builds CONFIG_MAPPING[text_config.model_type (llama when
 * absent)](**text_config) and vLLM the registered model of it under language_model. The view
 * (config_view.c) lays text_config over the top level with that class's defaults (LlamaConfig's,
 * MistralConfig's, Qwen2Config's, Qwen3Config's, Gemma3TextConfig's), after dropping the top
 * level's hidden_size and vocab_size (UltravoxConfig's own: the projector's width and the token
 * count it registers) and tie_word_embeddings (tied by text_config alone). Only llama,
 * mistral, qwen2, qwen3 and gemma3_text are cut (the Llama 3.x / Mistral-Nemo / Qwen3 / Gemma 3
 * releases); any other model_type is refused naming text_config.model_type, gemma3 (the
 * multimodal Gemma3ForConditionalGeneration that text_model_id google/gemma-3-*-it gives) with
 * the fix. A config without text_config is refused: with text_model_id vLLM reads the language
 * model's config and weights from that repository (secondary weights), which weightd does not
 * fetch; without it UltravoxConfig's default is a whole default LlamaConfig, no release's.
 *
 * The audio tower: audio_config is a WhisperConfig (model_type whisper when given; absent or
 * null: all of WhisperConfig's defaults, as UltravoxConfig builds it): num_mel_bins 80,
 * encoder_layers 4, encoder_attention_heads 6, encoder_ffn_dim 1536, d_model 384,
 * max_source_positions 1500 into the a_* fields. With audio_model_id and no audio_config it
 * is refused as text_model_id is.
 *
 * The projector (UltravoxFeedForwardProjector): hidden_size (4096), stack_factor (8),
 * projector_act (swiglu: MulAndSilu halves linear_1's output, so an odd hidden_size is refused)
 * and projector_ln_mid (false). num_projector_layers above 0 (UltravoxTransformerProjector:
 * Whisper encoder layers inside the projector) is refused: not cut here.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_ultravox(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "ultravox") == 0;
}

/* text_config's model_type (llama when absent) -> the class whose defaults fill its absent keys
 * (config_view.c's lm_class), NULL when not cut here. */
const char *config_ultravox_class(const char *tmt)
{
	static const char *const map[][2] = {
	    {"llama", "llava:llama"},       {"mistral", "llava:mistral"},
	    {"qwen2", "internvl:qwen2"},    {"qwen3", "internvl:qwen3"},
	    {"gemma3_text", "gemma3_text"},
	};
	for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
		if (strcmp(tmt != NULL ? tmt : "llama", map[k][0]) == 0)
			return map[k][1];
	return NULL;
}

static int need_sub(json_t *root, const char *key, const char *id_key, const char *what,
                    wt_errbuf *err)
{
	json_t *o = json_object_get(root, key);
	if (o != NULL && !json_is_null(o) && !json_is_object(o))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an object", key);
	const char *id = json_string_value(json_object_get(root, id_key));
	if (json_is_object(o) || id == NULL)
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: %s '%s' and no %s: vLLM's UltravoxConfig reads the %s's "
	                 "config from that repository and its ultravox.py loads that repository's "
	                 "weights (secondary weights); weightd cuts one folder: put that model's "
	                 "config.json as %s and its tensors in the checkpoint under %s",
	                 id_key, id, key, what, key,
	                 strcmp(key, "text_config") == 0 ? "language_model.<name>"
	                                                 : "audio_tower.<encoder name>");
}

int config_ultravox_need_text(json_t *root, wt_errbuf *err)
{
	if (!config_is_ultravox(root))
		return WT_OK;
	int rv = need_sub(root, "text_config", "text_model_id", "language model", err);
	if (rv == WT_OK)
		rv = need_sub(root, "audio_config", "audio_model_id", "Whisper encoder", err);
	if (rv != WT_OK)
		return rv;
	json_t *tc = json_object_get(root, "text_config");
	if (!json_is_object(tc))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: UltravoxModel needs text_config (the language "
		    "model's config: model_type, hidden_size, num_hidden_layers, ...); "
		    "UltravoxConfig's default is a whole default LlamaConfig, no "
		    "release's");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	if (tmt != NULL && strcmp(tmt, "gemma3") == 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.model_type gemma3: vLLM builds "
		                 "Gemma3ForConditionalGeneration (with its own vision tower) as "
		                 "Ultravox's language model; not cut here: give Gemma 3's "
		                 "text_config (model_type gemma3_text) and its tensors as "
		                 "language_model.model.* / language_model.lm_head.*");
	if (config_ultravox_class(tmt) == NULL)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: text_config.model_type '%s': Ultravox's language "
		                 "model is cut here only as llama, mistral, qwen2, qwen3 or "
		                 "gemma3_text (the llama / qwen3 / gemma3_text families' tables)",
		                 tmt);
	return WT_OK;
}

/* The projector's keys (UltravoxConfig's defaults) at the top level. */
static int parse_projector(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int64_t npl = 0;
	int rv = config_get_int(root, "hidden_size", 4096, 1, &c->uv_hidden, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "stack_factor", 8, 1, &c->uv_stack, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "projector_ln_mid", false, &c->uv_ln_mid, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_projector_layers", 0, 0, &npl, err);
	if (rv != WT_OK)
		return rv;
	if (npl > 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_projector_layers %lld: vLLM's ultravox.py then "
		    "builds UltravoxTransformerProjector (Whisper encoder layers in the "
		    "projector), not cut here; only the feed-forward projector "
		    "(num_projector_layers 0 or absent) is",
		    (long long)npl);
	json_t *act = json_object_get(root, "projector_act");
	const char *a = act == NULL || json_is_null(act) ? "swiglu" : json_string_value(act);
	if (a == NULL)
		return wt_seterr(err, WT_ECORRUPT, "config.json: projector_act is not a string");
	c->uv_swiglu = strcmp(a, "swiglu") == 0;
	if (c->uv_swiglu && c->uv_hidden % 2 != 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: hidden_size %lld is odd: projector_act swiglu "
		    "(MulAndSilu) halves the projector's linear_1 output; give an even "
		    "hidden_size",
		    (long long)c->uv_hidden);
	return WT_OK;
}

int config_parse_ultravox(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s", tmt != NULL ? tmt : "llama");
	const char *tid = json_string_value(json_object_get(root, "text_model_id"));
	const char *aid = json_string_value(json_object_get(root, "audio_model_id"));
	snprintf(c->uv_text_id, sizeof(c->uv_text_id), "%s", tid != NULL ? tid : "");
	snprintf(c->uv_audio_id, sizeof(c->uv_audio_id), "%s", aid != NULL ? aid : "");
	json_t *a = json_object_get(root, "audio_config");
	json_t *src = json_is_object(a) ? a : NULL; /* config_ultravox_need_text checked it */
	const char *amt = json_string_value(json_object_get(src, "model_type"));
	if (amt != NULL && strcmp(amt, "whisper") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: audio_config.model_type '%s': vLLM's ultravox.py "
		                 "builds a Whisper encoder (UltravoxWhisperEncoder) of it; only "
		                 "whisper is supported",
		                 amt);
	c->has_audio = true;
	static const config_int_key keys[] = {
	    {"num_mel_bins", 80, offsetof(ckpt_config, a_mel)},
	    {"encoder_layers", 4, offsetof(ckpt_config, a_layers)},
	    {"encoder_attention_heads", 6, offsetof(ckpt_config, a_heads)},
	    {"encoder_ffn_dim", 1536, offsetof(ckpt_config, a_ffn)},
	    {"d_model", 384, offsetof(ckpt_config, a_d_model)},
	    {"max_source_positions", 1500, offsetof(ckpt_config, a_max_pos)},
	};
	int rv = config_read_ints(src, "audio_config", keys, CONFIG_NKEYS(keys), c, err);
	return rv == WT_OK ? parse_projector(root, c, err) : rv;
}
