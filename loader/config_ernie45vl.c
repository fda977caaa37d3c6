/*
 * config_ernie45vl.c — ERNIE-4.5-VL's config.json (model_type ernie4_5_moe_vl: the remote
 * configuration_ernie_45t_vl.py, which neither transformers 4.57.1 nor vLLM ships; the keys
 * below are the ones vLLM's ernie45_vl.py / ernie45_vl_moe.py read, and the released
 * config.json files of ERNIE-4.5-VL-28B-A3B-PT and -424B-A47B-PT hold them all).
 *
 * The language model's keys are top-level, four of them [text, vision] lists:
 *
 *   moe_num_experts        [64, 64]      equal (Ernie4_5_VLMoeMoE asserts it): num_experts
 *   moe_intermediate_size  [1536, 512]   [0] the text experts' (and shared experts') width,
 *                                        [1] the vision experts' (ev_moe_inter_v)
 *   moe_layer_start_index  [1, 1]        required (read without a default)
 *   moe_layer_end_index    [29, 28]      absent: [L - 1, L - 1] (vLLM's getattr default)
 *
 * The flat view holds their text entries as integers, so ERNIE 4.5 MoE's readers (config.c)
 * and layer rule (family_ernie.c) apply; the two ranges must give the same layers (past the
 * last layer counts as the last): where one ends vLLM builds a dense MLP under text_experts /
 * vision_experts that no checkpoint name loads. An integer instead of a list (ERNIE 4.5's
 * text-only form) fails vLLM's indexing and is refused naming the text-only architecture.
 *
 * vision_config (DFNRopeVisionTransformerConfig): depth, embed_dim, hidden_size (asserted
 * equal to embed_dim), num_heads, mlp_ratio, patch_size, spatial_merge_size, in_channels,
 * each required (vLLM reads them as attributes of the remote class, whose defaults no file
 * here holds). The resampler's top-level keys: pixel_hidden_size (its input width: the tower's
 * embed_dim), spatial_conv_size (the 2-D merge: vLLM sizes the image tokens by
 * spatial_merge_size, so the two agree), use_temporal_conv (temporal_linear.*),
 * temporal_conv_size (2: the resampler concatenates two time steps whatever it says).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* The flat view's key holding moe_intermediate_size[1] (config_ernie45vl_vision reads it). */
#define EV_INTER_V "ernie45vl_vision_moe_intermediate_size"

bool config_is_ernie45vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "ernie4_5_moe_vl") == 0;
}

/* A [text, vision] list key: two integers >= min (absent or null: dflt when given, else
 * refused naming the key and the released value eg). */
static int pair_key(json_t *root, const char *key, int64_t min, const int64_t *dflt, const char *eg,
                    int64_t out[2], wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if ((v == NULL || json_is_null(v)) && dflt != NULL) {
		out[0] = dflt[0];
		out[1] = dflt[1];
		return WT_OK;
	}
	if (v == NULL || json_is_null(v))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s is missing; vLLM's ernie45_vl_moe.py reads it as "
		                 "a [text, vision] pair (ERNIE-4.5-VL-28B-A3B: %s); add it",
		                 key, eg);
	if (json_is_integer(v))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s is an integer, ERNIE 4.5's text-only form; vLLM's "
		    "ernie45_vl_moe.py indexes it as a [text, vision] pair (%s): give "
		    "the pair, or serve a text-only model as Ernie4_5_MoeForCausalLM",
		    key, eg);
	if (!json_is_array(v) || json_array_size(v) != 2)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s is not a [text, vision] list of two integers "
		                 "(ERNIE-4.5-VL-28B-A3B: %s)",
		                 key, eg);
	for (size_t k = 0; k < 2; k++) {
		json_t *x = json_array_get(v, k);
		if (!json_is_integer(x) || json_integer_value(x) < min ||
		    json_integer_value(x) > CONFIG_INT_MAX)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s[%zu] is not an integer in [%lld, %lld]",
			                 key, k, (long long)min, (long long)CONFIG_INT_MAX);
		out[k] = (int64_t)json_integer_value(x);
	}
	return WT_OK;
}

/* The text and vision MoE ranges: each start <= end (asserted), and the same layers. */
static int ranges_agree(const int64_t st[2], const int64_t en[2], int64_t layers, wt_errbuf *err)
{
	for (size_t k = 0; k < 2; k++)
		if (st[k] > en[k])
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: moe_layer_start_index[%zu] %lld is past "
			                 "moe_layer_end_index[%zu] %lld (vLLM's Ernie4_5_VLMoeMoE "
			                 "asserts start <= end)",
			                 k, (long long)st[k], k, (long long)en[k]);
	int64_t last = layers > 0 ? layers - 1 : 0;
	int64_t e0 = en[0] < last ? en[0] : last, e1 = en[1] < last ? en[1] : last;
	if (st[0] != st[1] || e0 != e1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: moe_layer_start_index [%lld, %lld] / moe_layer_end_index [%lld, "
		    "%lld] give the text experts layers %lld..%lld and the vision experts "
		    "%lld..%lld; "
		    "where one range ends vLLM's Ernie4_5_VLMoeMoE builds a dense MLP under "
		    "text_experts / vision_experts that no checkpoint tensor loads: give both the "
		    "same layers (ERNIE-4.5-VL-28B-A3B: [1, 1] / [29, 28] over 28 layers)",
		    (long long)st[0], (long long)st[1], (long long)en[0], (long long)en[1],
		    (long long)st[0], (long long)e0, (long long)st[1], (long long)e1);
	return WT_OK;
}

/* json_object_set_new of an integer, WT_ENOMEM naming the key. */
static int set_int(json_t *o, const char *key, int64_t v, wt_errbuf *err)
{
	if (json_object_set_new(o, key, json_integer((json_int_t)v)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory for %s", key);
	return WT_OK;
}

int config_ernie45vl_root(json_t *root, json_t **out, wt_errbuf *err)
{
	int64_t ne[2], inter[2], st[2], en[2], layers = -1;
	int rv = config_get_int(root, "num_hidden_layers", -1, 0, &layers, err);
	int64_t last = layers > 0 ? layers - 1 : 0, dflt_end[2] = {last, last};
	if (rv == WT_OK)
		rv = pair_key(root, "moe_num_experts", 1, NULL, "[64, 64]", ne, err);
	if (rv == WT_OK)
		rv = pair_key(root, "moe_intermediate_size", 1, NULL, "[1536, 512]", inter, err);
	if (rv == WT_OK)
		rv = pair_key(root, "moe_layer_start_index", 0, NULL, "[1, 1]", st, err);
	if (rv == WT_OK)
		rv = pair_key(root, "moe_layer_end_index", 0, dflt_end, "[29, 28]", en, err);
	if (rv == WT_OK && ne[0] != ne[1])
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: moe_num_experts [%lld, %lld]: vLLM's "
		               "Ernie4_5_VLMoeMoE asserts as many vision experts as text experts "
		               "(one e_score_correction_bias [2, E]); no release differs",
		               (long long)ne[0], (long long)ne[1]);
	if (rv == WT_OK)
		rv = ranges_agree(st, en, layers, err);
	if (rv != WT_OK)
		return rv;
	json_t *v = json_copy(root); /* shallow: the lists replaced, the rest shared */
	if (v == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	rv = set_int(v, "moe_num_experts", ne[0], err);
	if (rv == WT_OK)
		rv = set_int(v, "moe_intermediate_size", inter[0], err);
	if (rv == WT_OK)
		rv = set_int(v, "moe_layer_start_index", st[0], err);
	if (rv == WT_OK)
		rv = set_int(v, "moe_layer_end_index", en[0], err);
	if (rv == WT_OK)
		rv = set_int(v, EV_INTER_V, inter[1], err);
	if (rv != WT_OK) {
		json_decref(v);
		return rv;
	}
	*out = v;
	return WT_OK;
}

/* An integer key >= 1 of o (in: its name in messages) that must be there: vLLM reads it as an
 * attribute of the remote config class. eg is the released value. */
static int need_int(json_t *o, const char *in, const char *key, const char *eg, int64_t *out,
                    wt_errbuf *err)
{
	json_t *x = json_object_get(o, key);
	if (x == NULL || json_is_null(x))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s%s is missing; vLLM's ernie45_vl.py reads it "
		                 "(ERNIE-4.5-VL's releases give %s); add it",
		                 in, key, eg);
	int rv = config_get_int(o, key, 1, 1, out, err);
	if (rv != WT_OK && in[0] != '\0')
		wt_errprefix(err, "in vision_config");
	return rv;
}

/* vision_config's keys, each required; hidden_size equal to embed_dim. */
static int tower_keys(json_t *v, int64_t *embed, int64_t *merge, wt_errbuf *err)
{
	static const struct {
		const char *key, *eg;
	} k[] = {{"depth", "32"},     {"embed_dim", "1280"}, {"hidden_size", "1280"},
	         {"num_heads", "16"}, {"patch_size", "14"},  {"spatial_merge_size", "2"},
	         {"in_channels", "3"}};
	int64_t val[7];
	for (size_t i = 0; i < 7; i++) {
		int rv = need_int(v, "vision_config.", k[i].key, k[i].eg, &val[i], err);
		if (rv != WT_OK)
			return rv;
	}
	json_t *r = json_object_get(v, "mlp_ratio");
	if (r == NULL || json_is_null(r))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.mlp_ratio is missing; vLLM's "
		                 "ernie45_vl.py reads it (ERNIE-4.5-VL's releases give 4); add it");
	if (val[2] != val[1])
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.hidden_size %lld differs from embed_dim "
		    "%lld; vLLM's Ernie4_5_VisionTransformer asserts them equal (its ln "
		    "is hidden_size wide over embed_dim-wide blocks): set both alike",
		    (long long)val[2], (long long)val[1]);
	*embed = val[1];
	*merge = val[5];
	return WT_OK;
}

int config_ernie45vl_vision(json_t *root, json_t *v, struct ckpt_config *c, wt_errbuf *err)
{
	if (v == NULL || json_is_null(v) || !json_is_object(v))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config is %s; Ernie4_5_VLMoeForConditionalGen"
		    "eration builds its vision tower from it (depth, embed_dim, "
		    "hidden_size, num_heads, mlp_ratio, patch_size, spatial_merge_size, "
		    "in_channels)",
		    v == NULL || json_is_null(v) ? "missing" : "not an object");
	int64_t embed = 0, merge = 0, pix = 0, sconv = 0, tconv = 0;
	bool temporal = false;
	int rv = tower_keys(v, &embed, &merge, err);
	if (rv == WT_OK)
		rv = need_int(root, "", "pixel_hidden_size", "1280", &pix, err);
	if (rv == WT_OK)
		rv = need_int(root, "", "spatial_conv_size", "2", &sconv, err);
	if (rv == WT_OK)
		rv = need_int(root, "", "temporal_conv_size", "2", &tconv, err);
	json_t *tc = json_object_get(root, "use_temporal_conv");
	if (rv == WT_OK && (tc == NULL || json_is_null(tc)))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: use_temporal_conv is missing; vLLM's "
		               "VariableResolutionResamplerModel reads it (ERNIE-4.5-VL's releases "
		               "give true); add it");
	if (rv == WT_OK)
		rv = config_get_bool(root, "use_temporal_conv", false, &temporal, err);
	if (rv == WT_OK && pix != embed)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: pixel_hidden_size %lld differs from vision_config."
		               "embed_dim %lld: the resampler's spatial_linear takes the tower's "
		               "embed_dim-wide features; set it to %lld",
		               (long long)pix, (long long)embed, (long long)embed);
	if (rv == WT_OK && sconv != merge)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: spatial_conv_size %lld differs from "
		               "vision_config.spatial_merge_size %lld: vLLM's resampler merges "
		               "spatial_conv_size^2 patches while it counts the image tokens by "
		               "spatial_merge_size; set both alike (the releases: 2)",
		               (long long)sconv, (long long)merge);
	if (rv == WT_OK && temporal && tconv != 2)
		rv =
		    wt_seterr(err, WT_EUNSUPPORTED,
		              "config.json: temporal_conv_size %lld with use_temporal_conv: vLLM's "
		              "resampler concatenates two time steps whatever it says (its "
		              "temporal_linear.0 takes temporal_conv_size x the merged width); set "
		              "it to 2",
		              (long long)tconv);
	if (rv == WT_OK)
		rv = config_get_int(root, EV_INTER_V, -1, 1, &c->ev_moe_inter_v, err);
	c->ev_temporal_conv = temporal;
	return rv;
}
