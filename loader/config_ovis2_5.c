/*
 * config_ovis2_5.c — Ovis2.5's config.json (Ovis2_5, model_type ovis2_5: AIDC-AI/Ovis2.5-2B,
 * Ovis2.5-9B, remote code; keys and defaults read from the remote configuration_ovis2_5.py,
 * Ovis2_5Config and Siglip2NavitConfig, which transformers 4.57.1 does not ship).
 *
 * The language model: Ovis2_5Config builds llm_config's class from llm_config.model_type
 * (AutoConfig.for_model) and vLLM reads it as text_config; its flat view is Ovis's
 * (config_ovis_root: llm_config as text_config, qwen3 alone admitted), Qwen3Config's defaults
 * for absent keys, llm_config's tie_word_embeddings alone ties.
 *
 * The visual tokenizer, vit_config (required: vLLM reads config.vit_config.model_type): its
 * model_type must be siglip2_navit (vLLM's VisualTokenizer raises on any other), then
 * Siglip2NavitConfig's keys and defaults:
 *
 *   key                    default   here
 *   hidden_size            1024      v_hidden_size
 *   intermediate_size      4096      v_intermediate_size
 *   num_hidden_layers      24        v_num_layers
 *   num_attention_heads    16        v_num_attn_heads
 *   num_channels           3         v_in_chans
 *   image_size             512       v_image_size
 *   patch_size             16        v_patch_size
 *   hidden_stride          2         v_spatial_merge_size (the head is VE x stride^2 wide)
 *   num_patches            -1        ov25_patches (> 0: the NaFlex patch Linear, refused at
 *                                    plan time; else the patch Conv2d the releases build)
 *   preserve_original_pe   true      ov25_pe (the position table, (image / patch)^2 rows:
 *                                    v_num_pos)
 *
 * The top level: visual_vocab_size (65536: the vte's rows, the head's + 4, the indicator
 * tokens) into ov_vocab, hidden_size (None by default: the vte's width) into ov_hidden (-1
 * when absent; the planner refuses that and checks it against the language model's).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_ovis2_5(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "ovis2_5") == 0;
}

/* Siglip2NavitConfig's keys of vit_config v (an object) into c, its defaults for absent ones. */
static int parse_vit(json_t *v, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 1024, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 4096, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 24, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 16, offsetof(ckpt_config, v_num_attn_heads)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	    {"image_size", 512, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 16, offsetof(ckpt_config, v_patch_size)},
	    {"hidden_stride", 2, offsetof(ckpt_config, v_spatial_merge_size)},
	};
	int rv = config_read_ints(v, "vit_config", ints, CONFIG_NKEYS(ints), c, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "num_patches", -1, INT64_MIN, &c->ov25_patches, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "preserve_original_pe", true, &c->ov25_pe, err);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in vit_config");
		return rv;
	}
	if (c->v_spatial_merge_size > 64)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vit_config.hidden_stride %lld is past 64 (Ovis2.5's "
		                 "is 2)",
		                 (long long)c->v_spatial_merge_size);
	int64_t side = c->v_image_size / c->v_patch_size;
	if (side > (INT64_C(1) << 24))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vit_config image_size %lld / patch_size %lld is not a "
		    "model's (Ovis2.5's: 512 / 16)",
		    (long long)c->v_image_size, (long long)c->v_patch_size);
	c->v_num_pos = side * side; /* Siglip2VisionEmbeddings' Conv2d path */
	c->v_patch_given = true;
	return WT_OK;
}

int config_parse_ovis2_5(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config"); /* config_ovis_root's */
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s", tmt != NULL ? tmt : "");
	c->ov25 = true;
	json_t *v = json_object_get(root, "vit_config");
	if (!json_is_object(v))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vit_config is missing or not an object: vLLM's "
		                 "Ovis2_5 builds its visual tokenizer of it (Siglip2NavitConfig: "
		                 "model_type siglip2_navit, hidden_size, num_hidden_layers, ...)");
	const char *vmt = json_string_value(json_object_get(v, "model_type"));
	if (vmt == NULL || strcmp(vmt, "siglip2_navit") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: vit_config.model_type '%s': vLLM's VisualTokenizer "
		                 "builds a siglip2_navit backbone only (it raises 'Unsupported "
		                 "visual tokenizer model_type' for any other); give siglip2_navit",
		                 vmt != NULL ? vmt : "(none)");
	snprintf(c->v_model_type, sizeof(c->v_model_type), "%s", vmt);
	int rv = parse_vit(v, c, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "visual_vocab_size", 65536, 5, &c->ov_vocab, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "hidden_size", -1, 1, &c->ov_hidden, err);
	c->has_vision = rv == WT_OK;
	return rv;
}
