/*
 * config_view.c — the object config.c reads a model's language-model fields from
 * (config_lm_view): config.json itself, or a composite config's text_config laid over
 * its top level (the top level's keys that are not the text model's dropped first:
 * tie_by_text, PaliGemma's own dims), then the keys the language model's config class
 * defaults (config_defaults.c) where config.json leaves them out.
 */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* Absent (or null) keys of view v from its class defaults; v is the caller's own. */
static int fill_class_defaults(json_t *v, const char *mt, wt_errbuf *err)
{
	size_t n = 0;
	const class_default *d = config_class_defaults(mt, &n);
	for (size_t i = 0; i < n; i++) {
		json_t *cur = json_object_get(v, d[i].key);
		if (cur != NULL && !json_is_null(cur))
			continue;
		json_t *x = d[i].boolean ? json_boolean(d[i].v != 0.0)
		            : d[i].real  ? json_real(d[i].v)
		                         : json_integer((json_int_t)d[i].v);
		if (x == NULL || json_object_set_new(v, d[i].key, x) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}

/* Lfm2Config's original key names, which it prefers when present (kwargs.get):
 * block_ff_dim for intermediate_size, theta for rope_theta, tie_embedding for
 * tie_word_embeddings; laid over view v of model_type lfm2 before its class defaults. */
static int lfm2_aliases(json_t *v, const char *mt, wt_errbuf *err)
{
	static const char *const alias[][2] = {{"block_ff_dim", "intermediate_size"},
	                                       {"theta", "rope_theta"},
	                                       {"tie_embedding", "tie_word_embeddings"}};
	if (mt != NULL && strcmp(mt, "lfm2_moe") == 0) /* Lfm2MoeConfig: tie_embedding alone */
		return config_alias_keys(v, alias + 2, 1, false, err);
	if (mt == NULL || strcmp(mt, "lfm2") != 0)
		return WT_OK;
	return config_alias_keys(v, alias, sizeof(alias) / sizeof(alias[0]), false, err);
}

int config_alias_keys(json_t *v, const char *const (*keys)[2], size_t n, bool skip_null,
                      wt_errbuf *err)
{
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_object_get(v, keys[i][0]);
		if (x != NULL && !(skip_null && json_is_null(x)) &&
		    json_object_set(v, keys[i][1], x) != 0)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	return WT_OK;
}

/* *out = c; true (lm_class_wrapped / lm_class_fixed matched). */
static bool set_class(const char **out, const char *c)
{
	*out = c;
	return true;
}

/* lm_class's composite configs that build text_config by its model_type under a default of
 * their own (LLaVA ... Ultravox): true with *out the class (NULL: none) when root is one. */
static bool lm_class_wrapped(json_t *root, const char *tmt, const char **out)
{
	if (config_is_llava(root)) {
		/* LlavaConfig builds its text_config by that one's model_type (llama when it
		 * has none): LlamaConfig's / MistralConfig's defaults under names of LLaVA's
		 * own, so LlamaForCausalLM's own config.json keeps its required keys required */
		tmt = tmt != NULL ? tmt : "llama";
		return set_class(out, strcmp(tmt, "llama") == 0     ? "llava:llama"
		                      : strcmp(tmt, "mistral") == 0 ? "llava:mistral"
		                                                    : tmt);
	}
	if (config_is_idefics3(root)) {
		/* Idefics3Config / SmolVLMConfig build text_config by its model_type (llama when
		 * it has none): LlamaConfig's defaults under a name of their own */
		tmt = tmt != NULL ? tmt : "llama";
		return set_class(out, strcmp(tmt, "llama") == 0 ? "idefics3:llama" : tmt);
	}
	if (config_is_paligemma(root)) {
		/* PaliGemmaConfig builds text_config by its model_type (gemma when it has none):
		 * GemmaConfig's / Gemma2Config's defaults under names of their own */
		tmt = tmt != NULL ? tmt : "gemma";
		return set_class(out, strcmp(tmt, "gemma") == 0    ? "paligemma:gemma"
		                      : strcmp(tmt, "gemma2") == 0 ? "paligemma:gemma2"
		                                                   : tmt);
	}
	if ((config_is_aya_vision(root) || config_is_cohere2_vision(root)))
		/* cohere2 when it has none */
		return set_class(out, tmt != NULL ? tmt : "cohere2");
	if (config_is_llava_onevision(root)) {
		/* LlavaOnevisionConfig builds text_config by its model_type (qwen2 when it has
		 * none): Qwen2Config's defaults under a name of their own */
		tmt = tmt != NULL ? tmt : "qwen2";
		return set_class(out, strcmp(tmt, "qwen2") == 0 ? "llava_onevision:qwen2" : tmt);
	}
	if (config_is_qwen2_audio(root)) { /* Qwen2AudioConfig: the same, qwen2 */
		tmt = tmt != NULL ? tmt : "qwen2";
		return set_class(out, strcmp(tmt, "qwen2") == 0 ? "qwen2_audio:qwen2" : tmt);
	}
	if (config_is_audioflamingo3(root)) { /* AudioFlamingo3Config: the same, qwen2 */
		tmt = tmt != NULL ? tmt : "qwen2";
		return set_class(out, strcmp(tmt, "qwen2") == 0 ? "audioflamingo3:qwen2" : tmt);
	}
	if (config_is_granite_speech(root)) {
		/* GraniteSpeechConfig builds text_config by its model_type (granite when it has
		 * none): GraniteConfig's defaults under a name of their own */
		tmt = tmt != NULL ? tmt : "granite";
		return set_class(out, strcmp(tmt, "granite") == 0 ? "granite_speech:granite" : tmt);
	}
	if (config_is_aria(root)) /* AriaConfig: an AriaTextConfig whatever it says */
		return set_class(out, "aria:aria_text");
	if (config_is_voxtral(root)) {
		/* VoxtralConfig builds text_config by its model_type (llama when it has none)
		 * from _default_text_config_kwargs over that class's defaults */
		tmt = tmt != NULL ? tmt : "llama";
		return set_class(out, strcmp(tmt, "llama") == 0 ? "voxtral:llama" : tmt);
	}
	if (config_is_glmasr(root)) {
		/* GlmAsrConfig builds text_config by its model_type (llama when it has none)
		 * from _default_text_config_kwargs over that class's defaults */
		tmt = tmt != NULL ? tmt : "llama";
		return set_class(out, strcmp(tmt, "llama") == 0 ? "glmasr:llama" : tmt);
	}
	if (config_is_ultravox(root)) /* UltravoxConfig: llama when it has none */
		return set_class(out, config_ultravox_class(tmt));
	return false;
}

/* lm_class's composite configs with a text class of their own, whatever text_config says
 * (Mllama ... LightOnOCR's qwen3): true with *out the class when root is one. */
static bool lm_class_fixed(json_t *root, const char *mt, const char *tmt, const char **out)
{
	if (config_is_mllama(root)) /* MllamaConfig builds a MllamaTextConfig */
		return set_class(out, "mllama_text_model");
	if (config_is_qwen2_5_omni(root)) /* a Qwen2_5OmniTextConfig whatever it says */
		return set_class(out, "qwen2_5_omni:text");
	if (config_is_qwen3_omni(root)) /* a Qwen3OmniMoeTextConfig, the same */
		return set_class(out, "qwen3_omni_moe:text");
	if (config_is_fuyu(root)) /* FuyuConfig: persimmon when it has none */
		return set_class(out, tmt != NULL ? tmt : "persimmon");
	if (config_is_lfm2_vl(root)) /* Lfm2VlConfig: lfm2 when it has none */
		return set_class(out, tmt != NULL ? tmt : "lfm2");
	if (config_is_blip2(root)) /* Blip2Config: opt when it has none */
		return set_class(out, tmt != NULL ? tmt : "opt");
	if (config_is_internvl(root)) { /* InternVLConfig: the same, qwen2 */
		tmt = tmt != NULL ? tmt : "qwen2";
		return set_class(out, strcmp(tmt, "qwen2") == 0       ? "internvl:qwen2"
		                      : strcmp(tmt, "qwen3") == 0     ? "internvl:qwen3"
		                      : strcmp(tmt, "qwen3_moe") == 0 ? "internvl:qwen3_moe"
		                                                      : tmt);
	}
	if (config_is_minicpmv(root)) {
		/* MiniCPMVConfig subclasses its version's class (config_minicpmv.c set
		 * text_config's model_type to it): that class's defaults under a name of their own
		 */
		tmt = tmt != NULL ? tmt : "llama";
		return set_class(out, strcmp(tmt, "qwen2") == 0     ? "minicpmv:qwen2"
		                      : strcmp(tmt, "qwen3") == 0   ? "minicpmv:qwen3"
		                      : strcmp(tmt, "minicpm") == 0 ? "minicpm" /* 2.0 */
		                                                    : "minicpmv:llama");
	}
	if (config_is_ovis(root))
		/* OvisConfig builds llm_config by its model_type (AutoConfig.for_model;
		 * config_ovis.c admits qwen2 and llama): Qwen2Config's / LlamaConfig's defaults,
		 * the rows InternVL3's qwen2 and LLaVA's llama text_config read */
		return set_class(out, tmt != NULL && strcmp(tmt, "llama") == 0 ? "llava:llama"
		                                                               : "internvl:qwen2");
	if (config_is_ovis2_5(root))
		/* Ovis2_5Config builds llm_config by its model_type (config_ovis.c admits qwen3
		 * there): Qwen3Config's defaults, the row InternVL3.5's qwen3 text_config reads */
		return set_class(out, "internvl:qwen3");
	if (mt != NULL && strcmp(mt, "kimi_vl") == 0)
		/* vLLM's KimiVLConfig builds DeepseekV2Config(**text_config) whatever its
		 * model_type says (Kimi-VL's: deepseek_v3) */
		return set_class(out, "kimi_vl:deepseek_v2");
	if (config_is_step3_vl(root))
		/* vLLM's Step3VLConfig builds Step3TextConfig(**text_config) whatever its
		 * model_type says */
		return set_class(out, "step3_text");
	if (config_is_bagel(root))
		/* vLLM's BagelConfig builds Qwen2Config(**llm_config) whatever it says:
		 * Qwen2Config's defaults (the row InternVL3's qwen2 text_config reads) */
		return set_class(out, "internvl:qwen2");
	if (config_is_hcx(root))
		/* HCXVisionConfig builds text_config by its model_type (AutoConfig.for_model;
		 * required): LlamaConfig's defaults for llama, the row LLaVA's llama reads */
		return set_class(out,
		                 tmt != NULL && strcmp(tmt, "llama") == 0 ? "llava:llama" : tmt);
	if (config_is_hcx_v2(root))
		/* HyperCLOVAX-SEED-Think's HCXVisionConfig builds text_config by its model_type
		 * (config_hcx_v2.c admits hyperclovax and llama): HyperCLOVAXConfig's defaults, or
		 * LlamaConfig's (the row LLaVA's llama reads) */
		return set_class(out, tmt != NULL && strcmp(tmt, "llama") == 0 ? "llava:llama"
		                                                               : "hyperclovax");
	if (mt != NULL && strcmp(mt, "opencua") == 0)
		/* vLLM's OpenCUAConfig builds Qwen2Config(**text_config) whatever its model_type
		 * says: Qwen2Config's defaults (the row InternVL3's qwen2 text_config reads) */
		return set_class(out, "internvl:qwen2");
	if (mt != NULL && strcmp(mt, "bee") == 0 && tmt != NULL && strcmp(tmt, "qwen3") == 0)
		/* the remote BeeConfig builds its text_config by model_type (Bee-8B's qwen3):
		 * Qwen3Config's defaults, the row InternVL3.5's qwen3 text_config reads */
		return set_class(out, "internvl:qwen3");
	if (config_is_rvl(root))
		/* R-4B's remote config builds text_config by its model_type (config_rvl.c requires
		 * it; qwen3 in the release): Qwen3Config's defaults, InternVL3.5's qwen3 row */
		return set_class(out,
		                 tmt == NULL || strcmp(tmt, "qwen3") == 0 ? "internvl:qwen3" : tmt);
	if (mt != NULL && strcmp(mt, "mistral3") == 0 && tmt != NULL && strcmp(tmt, "qwen3") == 0)
		/* Mistral3Config builds a Qwen3Config of a qwen3 text_config (LightOnOCR-1B's):
		 * Qwen3Config's defaults, the row InternVL3.5's qwen3 text_config reads */
		return set_class(out, "internvl:qwen3");
	return false;
}

/* The class whose defaults a config's language model takes: a composite model's own
 * class decides its text_config's (Mistral3Config's text_config says mistral);
 * otherwise the text_config's model_type, then root's. overlay: root has a
 * text_config object. */
static const char *lm_class(json_t *root, json_t *tc, bool overlay)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	if (!overlay)
		return mt;
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	const char *c = NULL;
	if (lm_class_wrapped(root, tmt, &c) || lm_class_fixed(root, mt, tmt, &c))
		return c;
	size_t nd = 0;
	if (config_class_defaults(mt, &nd) == NULL && tmt != NULL)
		return tmt;
	return mt;
}

/* Composite configs whose lm_head tie is their text_config's alone (transformers'
 * get_text_config(), vLLM's language model built of text_config; checked in
 * transformers 4.57.1 for each, glm4v_moe as glm4v: a top-level true over a text_config
 * without the key leaves lm_head untied; Qwen2-VL's config reads the key through to its
 * text_config once it has one). Without the key in text_config the family's
 * tie_default (the text class's) decides: Gemma 3's is true, so a top-level false over a
 * text_config without the key is tied (Gemma3ForConditionalGeneration reads
 * text_config.tie_word_embeddings, Gemma3TextConfig's default; vLLM's Gemma3ForCausalLM
 * asserts it). */
static const char *const tie_by_text[] = {
    "llava",
    "llava_next",
    "llava_next_video",
    "idefics3",
    "smolvlm",
    "paligemma",
    "aya_vision",
    "llava_onevision",
    "cohere2_vision",
    "qwen2_audio",
    "audioflamingo3",
    "mistral3",
    "glm4v",
    "glm4v_moe",
    "llama4",
    "gemma3",
    "qwen2_vl",
    "qwen2_5_vl",
    "qwen3_vl",
    "qwen3_vl_moe",
    "internvl",
    "interns1",
    "fuyu",
    "lfm2_vl",
    "lfm2-vl",
    "granite_speech",
    "blip-2",
    "aria",
    "voxtral",
    "glmasr",
    "mllama",
    "qwen2_5_omni",
    "qwen3_omni_moe",
    "opencua",
    "internvl_chat",
    "h2ovl_chat",
    "skywork_chat",
    "deepseek_vl_v2",
    "kimi_vl",
    "ovis",
    "ovis2_5",
    "ultravox",
    "bagel",
    "bee",
    "hyperclovax_vlm",
    "vlm",
};

/* Top-level keys of a composite config that are not its text model's: the tie of
 * those in tie_by_text; PaliGemmaConfig's own hidden_size and vocab_size (paligemma2's
 * top level says 2048 over a 2304 wide Gemma 2), and UltravoxConfig's (the projector's
 * width, 4096 by default), so text_config or its class defaults give them. */
static void drop_composite_keys(json_t *v, json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	for (size_t i = 0; mt != NULL && i < sizeof(tie_by_text) / sizeof(tie_by_text[0]); i++)
		if (strcmp(mt, tie_by_text[i]) == 0)
			json_object_del(v, "tie_word_embeddings");
	/* vLLM builds their LM of text_config alone (R-4B: by architecture) */
	if (config_is_minimax_vl(root) || config_is_rvl(root))
		json_object_del(v, "tie_word_embeddings");
	if (config_is_internvl_chat(root)) /* NVLM_D's too: tied by llm_config alone */
		json_object_del(v, "tie_word_embeddings");
	bool pali = config_is_paligemma(root);
	if (pali || config_is_ultravox(root)) { /* Ultravox's: the projector's width */
		json_object_del(v, "hidden_size");
		json_object_del(v, "vocab_size");
	}
}

/* The class's own key names and checks around its defaults (fill: the class has
 * a defaults table), in the order the classes need them. */
typedef struct {
	const char *mt;                         /* config.json's model_type */
	int (*keys)(json_t *v, wt_errbuf *err); /* its reader: loader/config_<family>.c */
} key_reader;

/* The readers that run before the class defaults are filled in (they refuse or rewrite keys the
 * defaults would otherwise supply). */
static const key_reader keys_before[] = {
    {"dbrx", config_dbrx_keys},
    {"bloom", config_bloom_keys},
    {"falcon", config_falcon_keys},
    {"mpt", config_mpt_keys},
    {"nemotron_h", config_nemotron_h_alias},
    {"longcat_flash", config_longcat_check},
    {"opt", config_opt_keys},
    {"gptj", config_gptj_keys},
    {"chatglm", config_chatglm_keys},
    {"exaone", config_exaone_keys},
    {"qwen", config_qwen_keys},
    {"baichuan", config_baichuan_keys},
    {"minicpm", config_minicpm_keys},
    {"minicpm3", config_minicpm3_keys},
    {"internlm3", config_internlm3_keys},
    {"internlm", config_internlm_keys},
    {"xverse", config_xverse_keys},
    {"aquila", config_xverse_keys},
    {"iquestcoder", config_iquestcoder_keys},
    {"ouro", config_ouro_keys},
    {"plamo3", config_plamo3_keys},
    {"cwm", config_cwm_keys},
    {"jais2", config_jais2_keys},
    {"TeleFLM", config_teleflm_keys},
    {"solar", config_solar_keys},
    {"mimo", config_mimo_keys},
    {"orion", config_orion_keys},
    {"stablelm_epoch", config_stablelm_epoch_keys},
    {"telechat", config_telechat2_keys},
    {"jais", config_jais_keys},
    {"arctic", config_arctic_keys},
    {"bailing_moe", config_bailing_keys},
    {"bailing_moe_v2", config_bailing_v2_keys},
    {"afmoe", config_afmoe_keys},
    {"deepseek", config_deepseek_keys},
    {"deepseek_v32", config_deepseek_v32_keys},
    {"kimi_vl:deepseek_v2", config_kimi_vl_text_keys},
    {"step3_text", config_step3_text_keys},
    {"PanguEmbedded", config_pangu_dense_keys},
    {"pangu_ultra_moe", config_pangu_moe_keys},
    {"PanguProMoEV2", config_pangu_v2_keys},
    {"mimo_v2_flash", config_mimo_v2_flash_keys},
    {"llama_bidirec", config_llama_bidirec_keys},
    {"nomic_bert", config_nomic_bert_keys},
    {"new", config_gte_new_keys},
    {"gte", config_gte_keys},
    {"qwen2_vl", config_qwen2_vl_keys},
    {"qwen2_5_vl", config_qwen2_vl_keys},
    {"qwen2_vl_text", config_qwen2_vl_keys},
    {"qwen2_5_vl_text", config_qwen2_vl_keys},
    {"medusa", config_medusa_keys},
    {"mlp_speculator", config_mlp_speculator_alias},
    {"molmo", config_molmo_keys},
};

/* The readers that run after the class defaults (they read what the defaults filled in). */
static const key_reader keys_after[] = {
    {"nemotron-nas", config_decilm_keys},  {"longcat_flash", config_longcat_keys},
    {"whisper", config_whisper_keys},      {"mamba", config_mamba_keys},
    {"falcon_mamba", config_mamba_keys},   {"mamba2", config_mamba2_keys},
    {"zamba2", config_zamba2_keys},        {"nemotron_h", config_nemotron_h_keys},
    {"gemma3n_text", config_gemma3n_keys}, {"bloom", config_bloom_width},
    {"plamo2", config_plamo2_keys},        {"mlp_speculator", config_mlp_speculator_keys},
    {"molmo", config_molmo_width},         {"kimi_linear", config_kimi_linear_keys},
};

/* Run every reader of tab[n] whose model_type is mt, in table order. */
static int run_readers(const key_reader *tab, size_t n, json_t *v, const char *mt, wt_errbuf *err)
{
	for (size_t i = 0; i < n; i++) {
		int rv = strcmp(mt, tab[i].mt) == 0 ? tab[i].keys(v, err) : WT_OK;
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

static int class_keys(json_t *v, const char *mt, bool fill, wt_errbuf *err)
{
	int rv = WT_OK;
	if (fill) {
		rv = lfm2_aliases(v, mt, err);
		if (rv == WT_OK)
			rv = run_readers(keys_before, sizeof(keys_before) / sizeof(keys_before[0]),
			                 v, mt, err);
		if (rv == WT_OK && config_is_rw(mt))
			rv = config_rw_keys(v, err);
		if (rv == WT_OK && (strcmp(mt, "gpt2") == 0 || strcmp(mt, "gpt_bigcode") == 0))
			rv = config_gpt2_keys(v, mt, err);
		if (rv == WT_OK && config_is_minimax01(mt))
			rv = config_minimax01_keys(v, err);
		if (rv == WT_OK)
			rv = fill_class_defaults(v, mt, err);
		if (rv == WT_OK)
			rv = run_readers(keys_after, sizeof(keys_after) / sizeof(keys_after[0]), v,
			                 mt, err);
	}
	if (rv == WT_OK && mt != NULL && strcmp(mt, "hunyuan_v1_moe") == 0)
		rv = config_hunyuan_lists(v, err);
	return rv;
}

/*
 * *out = the object the language-model fields are read from: root itself, or
 * (when root has a `text_config` object) a shallow copy of root with
 * text_config's fields laid over it; then the keys the language model's config
 * class defaults (class_defaults) where they are absent. A new reference either
 * way.
 */
int config_lm_view(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	if (tc != NULL && !json_is_null(tc) && !json_is_object(tc))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'text_config' is not an object");
	bool overlay = json_is_object(tc);
	int rv = config_kimi_vl_need_text(root, err);
	if (rv == WT_OK)
		rv = config_ultravox_need_text(root, err);
	if (rv == WT_OK)
		rv = config_step3_vl_need_text(root, err);
	if (rv != WT_OK)
		return rv;
	const char *mt = lm_class(root, tc, overlay);
	size_t nd = 0;
	/* StableLM Epoch, DeepSeek-V3.2 and GteConfig have no defaults table
	 * (config_stablelm_epoch.c; V3.2's DeepseekV3Config is read as deepseek_v3's,
	 * config_deepseek_v32.c; gte: config_gte.c) but their own keys */
	bool fill = config_class_defaults(mt, &nd) != NULL ||
	            (mt != NULL && (strcmp(mt, "stablelm_epoch") == 0 ||
	                            strcmp(mt, "deepseek_v32") == 0 || strcmp(mt, "gte") == 0));
	if (!overlay && !fill) {
		*out = json_incref(root);
		return WT_OK;
	}
	json_t *v = json_copy(root);
	if (v != NULL && overlay)
		drop_composite_keys(v, root);
	if (v == NULL || (overlay && json_object_update(v, tc) != 0)) {
		json_decref(v);
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	rv = class_keys(v, mt, fill, err);
	if (rv != WT_OK) {
		json_decref(v);
		return rv;
	}
	*out = v;
	return WT_OK;
}
