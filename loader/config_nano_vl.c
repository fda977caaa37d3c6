/*
 * config_nano_vl.c — Nemotron Nano VL v2's config.json (NemotronH_Nano_VL_V2, model_type
 * NemotronH_Nano_VL_V2: nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL, remote code), read as vLLM's
 * nano_nemotron_vl.py reads it. The language model is text_config (a NemotronHConfig, laid
 * over the top level as for every composite config). The RADIO tower is built by
 * get_vit_model_from_radio_config as RadioConfig(model_name = vision_config.args.model,
 * patch_size = vision_config.patch_size, **args); RadioConfig takes its four sizes from
 * VIT_TIMM_DIM_BY_NAME[model_name] (any other name is a KeyError there, refused here):
 *
 *   args.model               hidden  layers  heads  intermediate
 *   vit_small_patch16_224     384     12      6     1536
 *   vit_base_patch16_224      768     12     12     3072
 *   vit_large_patch16_224    1024     24     16     4096
 *   vit_huge_patch16_224     1280     32     16     5120
 *
 *   key                                   default      here
 *   vision_config.patch_size              16           v_patch_size
 *   vision_config.video_temporal_patch_size 1          v_temporal_patch_size (> 1: the
 *                                                      patch generator's video_embedder)
 *   vision_config.separate_video_embedder true         refused false with T > 1 (vLLM raises)
 *   args.qkv_bias                         true         v_attn_bias
 *   args.qk_normalization                 false        v_qk_norm
 *   args.norm_type                        layer_norm   v_norm_ln (rms_norm: no biases)
 *   vit_hidden_size (top level)           required     equal to the RADIO width (mlp1's)
 *   downsample_ratio (top level)          0.5          v_spatial_merge_size round(1 / r)
 *   projector_hidden_size (top level)     required     v_proj_in_dim (mlp1.1's rows)
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_nano_vl(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "NemotronH_Nano_VL_V2") == 0;
}

/* RadioConfig's VIT_TIMM_DIM_BY_NAME row for args.model into c; WT_EUNSUPPORTED without one. */
static int radio_dims(json_t *args, ckpt_config *c, wt_errbuf *err)
{
	static const struct {
		const char *name;
		int64_t h, l, nh, i;
	} vit[] = {{"vit_small_patch16_224", 384, 12, 6, 1536},
	           {"vit_base_patch16_224", 768, 12, 12, 3072},
	           {"vit_large_patch16_224", 1024, 24, 16, 4096},
	           {"vit_huge_patch16_224", 1280, 32, 16, 5120}};
	const char *m = json_string_value(json_object_get(args, "model"));
	for (size_t k = 0; m != NULL && k < sizeof(vit) / sizeof(vit[0]); k++)
		if (strcmp(m, vit[k].name) == 0) {
			c->v_hidden_size = vit[k].h;
			c->v_num_layers = vit[k].l;
			c->v_num_attn_heads = vit[k].nh;
			c->v_intermediate_size = vit[k].i;
			return WT_OK;
		}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: vision_config.args.model %s%s%s is not a RADIO model "
	                 "vLLM builds (RadioConfig's VIT_TIMM_DIM_BY_NAME: vit_small / vit_base / "
	                 "vit_large / vit_huge_patch16_224); give one of them (the 12B release: "
	                 "vit_huge_patch16_224)",
	                 m ? "'" : "", m ? m : "(absent or not a string)", m ? "'" : "");
}

/* args.qkv_bias / qk_normalization / norm_type (RadioConfig's defaults). */
static int radio_args(json_t *args, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_bool(args, "qkv_bias", true, &c->v_attn_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(args, "qk_normalization", false, &c->v_qk_norm, err);
	json_t *nt = json_object_get(args, "norm_type");
	const char *n = nt == NULL || json_is_null(nt) ? "layer_norm" : json_string_value(nt);
	if (rv == WT_OK && (n == NULL || (strcmp(n, "layer_norm") && strcmp(n, "rms_norm"))))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.args.norm_type is not layer_norm or "
		    "rms_norm (intern_vit.py's NORM2FN); give layer_norm (the release's)");
	c->v_norm_ln = n != NULL && strcmp(n, "layer_norm") == 0;
	if (rv != WT_OK && err != NULL)
		wt_errprefix(err, "in vision_config.args");
	return rv;
}

/* The top level's vit_hidden_size / projector_hidden_size / downsample_ratio (mlp1's sizes). */
static int projector_keys(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int64_t vh, ph;
	double r;
	int rv = config_get_int(root, "vit_hidden_size", -1, 1, &vh, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "projector_hidden_size", -1, 1, &ph, err);
	if (rv == WT_OK)
		rv = config_get_pos_real(root, "downsample_ratio", 0.5, &r, err);
	if (rv != WT_OK)
		return rv;
	if (vh < 0 || ph < 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Nemotron Nano VL's %s is missing: vLLM builds mlp1 "
		                 "of it; give it (the 12B release: vit_hidden_size 1280, "
		                 "projector_hidden_size 20480)",
		                 vh < 0 ? "vit_hidden_size" : "projector_hidden_size");
	if (vh != c->v_hidden_size)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vit_hidden_size %" PRId64 " is not the RADIO tower's "
		    "width %" PRId64 " (vision_config.args.model): mlp1 would not take "
		    "the tower's output; give %" PRId64,
		    vh, c->v_hidden_size, c->v_hidden_size);
	double n = round(1.0 / r);
	if (!(r <= 1.0) || n > 64.0 || fabs(n * r - 1.0) > 1e-6)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: downsample_ratio %g is not 1 / n for a whole n from 1 "
		    "to 64: the pixel shuffle and mlp1's width (vit_hidden_size x "
		    "round(1 / downsample_ratio)^2) need one; give 0.5 (the release's)",
		    r);
	c->v_spatial_merge_size = (int64_t)n;
	c->v_proj_in_dim = ph;
	return WT_OK;
}

int config_parse_nano_vl(json_t *root, json_t *v, ckpt_config *c, wt_errbuf *err)
{
	json_t *args = json_is_object(v) ? json_object_get(v, "args") : NULL;
	if (!json_is_object(args))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: Nemotron Nano VL's vision_config%s is not an object "
		    "(vLLM's get_vit_model_from_radio_config reads the RADIO model from "
		    "vision_config.args.model); give the release's vision_config",
		    json_is_object(v) ? ".args" : "");
	int rv = radio_dims(args, c, err);
	if (rv == WT_OK)
		rv = radio_args(args, c, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "patch_size", 16, 1, &c->v_patch_size, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "video_temporal_patch_size", 1, 1, &c->v_temporal_patch_size,
		                    err);
	bool sep = true;
	if (rv == WT_OK)
		rv = config_get_bool(v, "separate_video_embedder", true, &sep, err);
	if (rv != WT_OK)
		return rv;
	if (c->v_patch_size > 1024 || c->v_temporal_patch_size > 64)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.patch_size %" PRId64
		                 " or video_temporal_patch_size %" PRId64
		                 " is not a model's (at most 1024 / 64; the release: 16 / 1)",
		                 c->v_patch_size, c->v_temporal_patch_size);
	if (c->v_temporal_patch_size > 1 && !sep)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: vision_config.separate_video_embedder false with "
		    "video_temporal_patch_size %" PRId64 ": vLLM's ViTPatchGenerator "
		    "supports only a separate video_embedder then (NotImplementedError); "
		    "set it true",
		    c->v_temporal_patch_size);
	c->v_patch_given = true;
	c->v_in_chans = 3;
	rv = projector_keys(root, c, err);
	c->has_vision = rv == WT_OK;
	return rv;
}
