/*
 * config_minicpmv.c — MiniCPM-V's config.json (architectures MiniCPMV, model_type minicpmv:
 * the remote MiniCPMVConfig of openbmb/MiniCPM-V-2, MiniCPM-Llama3-V-2_5, MiniCPM-V-2_6,
 * MiniCPM-V-4, MiniCPM-V-4_5; neither transformers 4.57.1 nor vLLM ships it).
 *
 * The config is flat: MiniCPMVConfig subclasses the language model's config class (LlamaConfig
 * for 2.5 and 4.0, Qwen2Config for 2.6, Qwen3Config for 4.5), so the language model's keys
 * are the top level's, beside vision_config, query_num, version, drop_vision_last_layer and
 * the image-processing keys. vLLM's MiniCPMV dispatches on the version (get_version_by_config:
 * str(config.version) split at '.', each part an int; without the key (2, 0) when hidden_size
 * is 2304 and query_num 64, else (2, 5)) and builds LlamaForCausalLM (2.5, 4.0),
 * Qwen2ForCausalLM (2.6) or Qwen3ForCausalLM (4.5) of the config itself. So the flat view
 * (config_minicpmv_root) is config.json with text_config = its own keys, model_type that
 * class's (llama, qwen2, qwen3; minicpm for 2.0, MiniCPM-V-2: MiniCPMForCausalLM, read as
 * the minicpm family's config with MiniCPMConfig's defaults): that class's defaults fill the
 * absent keys. Any version vLLM has no class for is refused naming the version. 2.0's tower is
 * timm's fixed SigLIP-400M (mcv2_tower), its vision_config not read.
 *
 * The tower (vLLM's Idefics2VisionTransformer of vision_config): MiniCPMVConfig builds
 * SiglipVisionConfig(**vision_config), so absent keys take SiglipVisionConfig's defaults
 * (hidden_size 768, intermediate_size 3072, 12 layers, 12 heads, image_size 224, patch_size
 * 16, 3 channels); without vision_config its default_vision_config (1152, 4304, 27 layers, 16
 * heads, image_size 980, patch_size 14). drop_vision_last_layer (MiniCPMVConfig's default
 * true) makes vLLM build one block fewer (encoder.layers[:-1]): v_num_layers is the count it
 * builds (no block left refused); query_num (64) is the resampler's query rows.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_minicpmv(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "minicpmv") == 0;
}

/* The version as Python's str(config.version) writes it into s[cap]: a string as it is, an
 * integer without a point, a real as its shortest round-trip digits (2.6, 4.0). */
static int version_text(json_t *v, char *s, size_t cap, wt_errbuf *err)
{
	if (json_is_string(v)) {
		snprintf(s, cap, "%s", json_string_value(v));
		return WT_OK;
	}
	if (json_is_integer(v)) {
		snprintf(s, cap, "%lld", (long long)json_integer_value(v));
		return WT_OK;
	}
	if (!json_is_real(v))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: version is not a number or a string (MiniCPMVConfig's "
		    "model version, e.g. 2.6)");
	double x = json_real_value(v);
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(s, cap, "%.*g", prec, x);
		double back = 0;
		if (sscanf(s, "%lf", &back) == 1 && back == x)
			break;
	}
	size_t n = strlen(s);
	if (strpbrk(s, ".eEn") == NULL && n + 2 < cap)
		snprintf(s + n, cap - n, ".0"); /* str(4.0) is "4.0" */
	return WT_OK;
}

/* The whole number of digits at *s (at most 3 of them) into *out; the text after it. */
static const char *digits(const char *s, int *out)
{
	int n = 0, k = 0;
	for (; k < 3 && s[k] >= '0' && s[k] <= '9'; k++)
		n = n * 10 + (s[k] - '0');
	*out = n;
	return k > 0 ? s + k : NULL;
}

/* "A.B" with A and B whole numbers into *maj / *min; false for any other text. */
static bool version_pair(const char *s, int *maj, int *min)
{
	const char *p = digits(s, maj);
	if (p == NULL || *p != '.')
		return false;
	p = digits(p + 1, min);
	return p != NULL && *p == '\0';
}

/* The version vLLM's MiniCPMV picks (major * 10 + minor) and its language model's class. */
static int mcv_version(json_t *root, int64_t *ver, const char **mt, wt_errbuf *err)
{
	json_t *v = json_object_get(root, "version");
	char s[64] = "";
	int maj = 2, min = 5;
	if (v == NULL || json_is_null(v)) {
		json_t *h = json_object_get(root, "hidden_size"),
		       *q = json_object_get(root, "query_num");
		bool q64 = q == NULL || json_is_null(q) ||
		           (json_is_integer(q) && json_integer_value(q) == 64);
		if (json_is_integer(h) && json_integer_value(h) == 2304 && q64)
			min = 0; /* MiniCPM-V-2 */
		snprintf(s, sizeof(s), "%d.%d (no version key)", maj, min);
	} else {
		int rv = version_text(v, s, sizeof(s), err);
		if (rv != WT_OK)
			return rv;
		if (!version_pair(s, &maj, &min))
			maj = min = -1;
	}
	static const struct {
		int maj, min;
		const char *mt;
	} lms[] = {
	    {2, 0, "minicpm"}, {2, 5, "llama"}, {2, 6, "qwen2"}, {4, 0, "llama"}, {4, 5, "qwen3"}};
	for (size_t k = 0; k < sizeof(lms) / sizeof(lms[0]); k++)
		if (lms[k].maj == maj && lms[k].min == min) {
			*ver = maj * 10 + min;
			*mt = lms[k].mt;
			return WT_OK;
		}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: MiniCPMV version %s: vLLM's MiniCPMV builds versions 2.0, "
	                 "2.5, 2.6, 4.0 and 4.5 only (str(version) split at '.'); give one of "
	                 "2.0, 2.5, 2.6, 4.0 or 4.5",
	                 s);
}

int config_minicpmv_root(json_t *root, json_t **out, wt_errbuf *err)
{
	int64_t ver = 0;
	const char *mt = NULL;
	int rv = mcv_version(root, &ver, &mt, err);
	if (rv != WT_OK)
		return rv;
	json_t *v = json_copy(root), *tc = json_copy(root);
	if (v == NULL || tc == NULL ||
	    json_object_set_new(tc, "model_type", json_string(mt)) != 0 ||
	    json_object_set(v, "text_config", tc) != 0) {
		json_decref(v);
		json_decref(tc);
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	json_object_del(tc, "vision_config");
	json_object_del(tc, "text_config");
	json_decref(tc);
	*out = v;
	return WT_OK;
}

/* Version 2.0's tower: timm's vit_so400m_patch14_siglip_384 (1152 wide, MLP 4304, 27 blocks
 * of 16 heads, image 384, patch 14, 3 channels), which vLLM's MiniCPMV2_0 builds whatever
 * vision_config says (not read); a vision_encoder naming another is refused. Its Resampler2 has
 * int(sqrt(query_num))^2 queries while the image placeholder holds query_num tokens: a
 * query_num that is not a square is refused. */
static int mcv2_tower(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	static const char so400m[] = "vit_so400m_patch14_siglip_384";
	json_t *e = json_object_get(root, "vision_encoder");
	const char *es = json_string_value(e);
	if (e != NULL && !json_is_null(e) &&
	    (es == NULL || strncmp(es, so400m, sizeof(so400m) - 1) != 0 ||
	     (es[sizeof(so400m) - 1] != '\0' && strcmp(es + sizeof(so400m) - 1, ".webli") != 0)))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_encoder is not "
		    "\"vit_so400m_patch14_siglip_384.webli\": vLLM's MiniCPMV2_0 builds "
		    "that timm tower whatever the key says; give it or remove the key");
	c->v_hidden_size = 1152;
	c->v_intermediate_size = 4304;
	c->v_num_layers = 27;
	c->v_num_attn_heads = 16;
	c->v_image_size = 384;
	c->v_patch_size = 14;
	c->v_in_chans = 3;
	int64_t g = 0;
	while ((g + 1) * (g + 1) <= c->mcv_query_num)
		g++;
	if (g * g != c->mcv_query_num)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: query_num %lld is not a square: vLLM's MiniCPM-V 2.0 "
		    "Resampler2 builds int(sqrt(query_num))^2 = %lld queries while an "
		    "image takes query_num tokens; give a square (the release's 64)",
		    (long long)c->mcv_query_num, (long long)(g * g));
	return WT_OK;
}

int config_parse_minicpmv(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config"); /* config_minicpmv_root's */
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s", tmt != NULL ? tmt : "");
	const char *mt = NULL;
	int rv = mcv_version(root, &c->mcv_version, &mt, err);
	if (rv != WT_OK)
		return rv;
	if (v != NULL && !json_is_null(v) && !json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'vision_config' is not an object");
	bool given = json_is_object(v); /* SiglipVisionConfig's defaults, else MiniCPMV's own */
	const config_int_key ints[] = {
	    {"hidden_size", given ? 768 : 1152, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", given ? 3072 : 4304, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", given ? 12 : 27, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", given ? 12 : 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"image_size", given ? 224 : 980, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", given ? 16 : 14, offsetof(ckpt_config, v_patch_size)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	};
	bool v2 = c->mcv_version == 20; /* vision_config not read: mcv2_tower */
	rv = v2 ? WT_OK
	        : config_read_ints(given ? v : NULL, "vision_config", ints, CONFIG_NKEYS(ints), c,
	                           err);
	if (rv == WT_OK)
		rv = config_get_int(root, "query_num", 64, 1, &c->mcv_query_num, err);
	if (rv == WT_OK && c->mcv_query_num > (int64_t)1 << 24)
		rv =
		    wt_seterr(err, WT_ECORRUPT,
		              "config.json: query_num %lld is not a model's (the resampler's query "
		              "rows; at most 2^24, the releases' 64)",
		              (long long)c->mcv_query_num);
	if (rv == WT_OK && v2)
		rv = mcv2_tower(root, c, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "drop_vision_last_layer", true, &c->mcv_drop_last, err);
	if (rv == WT_OK && c->mcv_drop_last && c->v_num_layers < 2)
		rv = wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: drop_vision_last_layer true (MiniCPMVConfig's default) "
		    "over vision_config.num_hidden_layers %lld leaves the tower no block; "
		    "set drop_vision_last_layer false or give more layers",
		    (long long)c->v_num_layers);
	if (rv == WT_OK && c->mcv_drop_last)
		c->v_num_layers--; /* vLLM builds encoder.layers[:-1] */
	c->v_patch_given = true;
	c->has_vision = rv == WT_OK;
	return rv;
}
