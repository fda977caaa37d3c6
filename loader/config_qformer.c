/*
 * config_qformer.c — a BLIP-2 Q-Former's config (Blip2QFormerConfig, transformers 4.57.1):
 * Granite Speech's projector_config and BLIP-2's qformer_config. Absent keys take the
 * class's defaults: hidden_size 768, num_hidden_layers 12, num_attention_heads 12,
 * intermediate_size 3072, cross_attention_frequency 2, encoder_hidden_size 1408,
 * use_qformer_text_input false, position_embedding_type absolute, model_type
 * blip_2_qformer. The planner refuses what vLLM's Blip2QFormerModel cannot build
 * (shardmap_qformer_check).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static const config_int_key qformer_keys[] = {
    {"hidden_size", 768, offsetof(ckpt_config, qf_hidden)},
    {"num_hidden_layers", 12, offsetof(ckpt_config, qf_layers)},
    {"num_attention_heads", 12, offsetof(ckpt_config, qf_heads)},
    {"intermediate_size", 3072, offsetof(ckpt_config, qf_inter)},
    {"cross_attention_frequency", 2, offsetof(ckpt_config, qf_cross)},
    {"encoder_hidden_size", 1408, offsetof(ckpt_config, qf_enc)},
};

int config_parse_qformer(json_t *q, const char *key, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_read_ints(q, key, qformer_keys, CONFIG_NKEYS(qformer_keys), c, err);
	if (rv != WT_OK)
		return rv;
	json_t *o = json_is_object(q) ? q : NULL;
	const char *mt = json_string_value(json_object_get(o, "model_type"));
	snprintf(c->qf_model, sizeof(c->qf_model), "%s", mt != NULL ? mt : "blip_2_qformer");
	json_t *pej = json_object_get(o, "position_embedding_type");
	const char *pe = json_string_value(pej);
	if (pej != NULL && !json_is_null(pej) && pe == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s.position_embedding_type is not a string", key);
	c->qf_abs = pe == NULL || strcmp(pe, "absolute") == 0;
	rv = config_get_bool(o, "use_qformer_text_input", false, &c->qf_text, err);
	if (rv != WT_OK && err != NULL)
		wt_errprefix(err, "in %s", key);
	return rv;
}
