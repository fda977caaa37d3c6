/*
 * config_ovis.c — Ovis's config.json (model_type ovis: OvisConfig with an
 * Aimv2VisualTokenizerConfig and its AIMv2Config backbone, AIDC-AI/Ovis2-1B .. Ovis2-34B, remote
 * code; keys and defaults read from vLLM's own copies, vllm/transformers_utils/configs/ovis.py,
 * which transformers 4.57.1 does not ship).
 *
 * The language model: OvisConfig builds llm_config's class from llm_config.model_type
 * (AutoConfig.for_model; a llm_config without one is a KeyError) and maps it to text_config;
 * vLLM builds the registered model of it under llm. and indexes its IMAGE_PAD_TOKEN_ID_MAP by
 * that model_type (gemma2, llama, qwen2: any other is a KeyError). So the flat view
 * (config_ovis_root) is config.json with text_config = llm_config: its class's defaults fill
 * absent keys (Qwen2Config's, LlamaConfig's), its tie_word_embeddings alone ties. qwen2 and llama
 * are cut here; gemma2 (Ovis1.6-Gemma2, whose tower is SigLIP) is refused.
 *
 * The visual tokenizer, visual_tokenizer_config (required: vLLM reads it unguarded): model_type
 * aimv2_visual_tokenizer or siglip_visual_tokenizer (the same keys), vocab_size 16384 (the vte
 * rows; the head has vocab_size - 5: the image indicator tokens), hidden_stride 1 (into
 * v_spatial_merge_size: the head is backbone hidden_size x hidden_stride^2 wide); depths is not
 * read (vLLM builds backbone_config's num_hidden_layers blocks: backbone_kwargs is unused).
 * backbone_config (required: vLLM's VisualTokenizer builds the backbone of its model_type, into
 * v_model_type): aimv2 (Ovis2) with AIMv2Config's keys and defaults: hidden_size 1024,
 * intermediate_size 2816, num_hidden_layers 24, num_attention_heads 8, num_channels 3,
 * image_size 224, patch_size 14, qkv_bias false, use_bias false; siglip_vision_model (Ovis1.6)
 * with SiglipVisionConfig's (transformers 4.57.1): 768, 3072, 12 layers, 12 heads, 3 channels,
 * image 224, patch 16, and vision_use_head (true unless false or null: the class defines none,
 * so vLLM's SiglipVisionTransformer builds the pooling head). The top level's
 * hidden_size (the vte's width: vLLM builds VisualEmbedding(vocab_size, config.hidden_size))
 * into ov_hidden (-1 when absent; the planner checks it against the language model's).
 *
 * Ovis2.5 (model_type ovis2_5, config_ovis2_5.c) has the same flat view: config_ovis_root
 * serves it, admitting llm_config.model_type qwen3 alone there.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_ovis(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "ovis") == 0;
}

int config_ovis_root(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *llm = json_object_get(root, "llm_config");
	if (llm == NULL || json_is_null(llm))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: llm_config is missing: vLLM's Ovis builds its "
		                 "language model of it (OvisConfig maps it to text_config; the "
		                 "released config.json files hold the whole Qwen2 config there)");
	if (!json_is_object(llm))
		return wt_seterr(err, WT_ECORRUPT, "config.json: llm_config is not an object");
	const char *mt = json_string_value(json_object_get(llm, "model_type"));
	if (mt == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: llm_config.model_type is missing: OvisConfig builds "
		                 "the language model's config class of it; give e.g. \"qwen2\"");
	if (config_is_ovis2_5(root) && strcmp(mt, "qwen3") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: llm_config.model_type '%s': Ovis2.5's language model is cut "
		    "here only as qwen3 (the qwen3 family's table; Ovis2.5-2B's and -9B's; vLLM's "
		    "ovis2_5.py knows gemma2, llama and qwen2 too, which are not cut here, and no "
		    "other)",
		    mt);
	if (!config_is_ovis2_5(root) && strcmp(mt, "qwen2") != 0 && strcmp(mt, "llama") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: llm_config.model_type '%s': Ovis's language model is cut here "
		    "only as qwen2 or llama (the qwen2 / llama families' tables; vLLM's ovis.py "
		    "knows gemma2 too, Ovis1.6-Gemma2's, which is not cut here, and no other)",
		    mt);
	json_t *v = json_copy(root), *tc = json_deep_copy(llm);
	if (v == NULL || tc == NULL || json_object_del(v, "llm_config") != 0 ||
	    json_object_set(v, "text_config", tc) != 0) {
		json_decref(v);
		json_decref(tc);
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	json_decref(tc);
	*out = v;
	return WT_OK;
}

/* AIMv2Config's keys of backbone_config b (an object) into c, its defaults for absent ones. */
static int parse_aimv2(json_t *b, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 1024, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 2816, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 24, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 8, offsetof(ckpt_config, v_num_attn_heads)},
	    {"image_size", 224, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 14, offsetof(ckpt_config, v_patch_size)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	};
	const char *in = "visual_tokenizer_config.backbone_config";
	int rv = config_read_ints(b, in, ints, CONFIG_NKEYS(ints), c, err);
	if (rv == WT_OK)
		rv = config_get_bool(b, "qkv_bias", false, &c->v_attn_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(b, "use_bias", false, &c->ov_use_bias, err);
	if (rv != WT_OK && err != NULL)
		wt_errprefix(err, "in visual_tokenizer_config.backbone_config");
	c->v_patch_given = true;
	return rv;
}

/* SiglipVisionConfig's keys of backbone_config b (an object) into c, its defaults for absent
 * ones; vision_use_head. */
static int parse_siglip(json_t *b, ckpt_config *c, wt_errbuf *err)
{
	static const config_int_key ints[] = {
	    {"hidden_size", 768, offsetof(ckpt_config, v_hidden_size)},
	    {"intermediate_size", 3072, offsetof(ckpt_config, v_intermediate_size)},
	    {"num_hidden_layers", 12, offsetof(ckpt_config, v_num_layers)},
	    {"num_attention_heads", 12, offsetof(ckpt_config, v_num_attn_heads)},
	    {"image_size", 224, offsetof(ckpt_config, v_image_size)},
	    {"patch_size", 16, offsetof(ckpt_config, v_patch_size)},
	    {"num_channels", 3, offsetof(ckpt_config, v_in_chans)},
	};
	int rv = config_read_ints(b, "visual_tokenizer_config.backbone_config", ints,
	                          CONFIG_NKEYS(ints), c, err);
	json_t *h = json_object_get(b, "vision_use_head");
	c->v_use_head = !json_is_false(h);
	c->v_patch_given = true;
	return rv;
}

/* visual_tokenizer_config t (an object): its class, vocab_size, hidden_stride, backbone. */
static int parse_tokenizer(json_t *t, ckpt_config *c, wt_errbuf *err)
{
	const char *mt = json_string_value(json_object_get(t, "model_type"));
	if (mt == NULL || (strcmp(mt, "aimv2_visual_tokenizer") != 0 &&
	                   strcmp(mt, "siglip_visual_tokenizer") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: visual_tokenizer_config.model_type '%s': OvisConfig "
		                 "builds the visual tokenizer's config of aimv2_visual_tokenizer "
		                 "(Ovis2) or siglip_visual_tokenizer (Ovis1.6) only",
		                 mt != NULL ? mt : "(none)");
	int rv = config_get_int(t, "vocab_size", 16384, 6, &c->ov_vocab, err);
	if (rv == WT_OK)
		rv = config_get_int(t, "hidden_stride", 1, 1, &c->v_spatial_merge_size, err);
	if (rv == WT_OK && c->v_spatial_merge_size > 64)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: hidden_stride %lld is past 64 (Ovis2's is 2)",
		               (long long)c->v_spatial_merge_size);
	if (rv != WT_OK) {
		if (err != NULL)
			wt_errprefix(err, "in visual_tokenizer_config");
		return rv;
	}
	json_t *b = json_object_get(t, "backbone_config");
	if (!json_is_object(b))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: visual_tokenizer_config.backbone_config is missing "
		    "or not an object: vLLM's VisualTokenizer builds the backbone of its "
		    "model_type (aimv2)");
	const char *bmt = json_string_value(json_object_get(b, "model_type"));
	bool aim = bmt != NULL && strcmp(bmt, "aimv2") == 0;
	if (!aim && (bmt == NULL || strcmp(bmt, "siglip_vision_model") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: visual_tokenizer_config.backbone_config.model_type "
		                 "'%s': vLLM's VisualTokenizer builds an aimv2 (Ovis2) or "
		                 "siglip_vision_model (Ovis1.6) backbone only",
		                 bmt != NULL ? bmt : "(none)");
	snprintf(c->v_model_type, sizeof(c->v_model_type), "%s", bmt);
	return aim ? parse_aimv2(b, c, err) : parse_siglip(b, c, err);
}

int config_parse_ovis(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config"); /* config_ovis_root's */
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s", tmt != NULL ? tmt : "");
	json_t *t = json_object_get(root, "visual_tokenizer_config");
	if (!json_is_object(t))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: visual_tokenizer_config is missing or not an object: "
		    "vLLM's Ovis builds its visual tokenizer of it");
	int rv = parse_tokenizer(t, c, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "hidden_size", -1, 1, &c->ov_hidden, err);
	c->has_vision = rv == WT_OK;
	return rv;
}
