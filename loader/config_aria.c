/*
 * config_aria.c — Aria's config keys (model_type aria: AriaConfig, transformers 4.57.1): the
 * projector's learned queries (max of projector_patch_to_query_dict's values, {1225: 128,
 * 4900: 256} when absent) into aria_queries, and text_config's model_type (AriaConfig builds
 * an AriaTextConfig of any text_config that names one; "" without a text_config object, "?"
 * for one without model_type, which AriaConfig cannot build: the planner refuses both).
 * vision_config is always an Idefics3VisionConfig (AriaConfig overwrites its model_type):
 * config_parse_vision reads it, Idefics3VisionConfig's defaults when absent.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_aria(json_t *root)
{
	const char *mt = json_string_value(json_object_get(root, "model_type"));
	return mt != NULL && strcmp(mt, "aria") == 0;
}

/* The largest value of projector_patch_to_query_dict (keys: patch counts, values: query
 * counts, both integers or integer strings as AriaConfig's int() reads them). */
static int aria_queries(json_t *root, int64_t *out, wt_errbuf *err)
{
	json_t *d = json_object_get(root, "projector_patch_to_query_dict");
	*out = 256; /* AriaConfig's {1225: 128, 4900: 256} */
	if (d == NULL || json_is_null(d))
		return WT_OK;
	if (!json_is_object(d) || json_object_size(d) == 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: projector_patch_to_query_dict is not a non-empty "
		                 "object of patch count -> query count (AriaConfig takes its "
		                 "largest value as the projector's queries)");
	const char *k;
	json_t *v;
	int64_t best = 0;
	json_object_foreach(d, k, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > (1 << 24))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: projector_patch_to_query_dict['%s'] is not a "
			    "query count in [1, 2^24]",
			    k);
		if (json_integer_value(v) > best)
			best = (int64_t)json_integer_value(v);
	}
	*out = best;
	return WT_OK;
}

int config_parse_aria(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *tc = json_object_get(root, "text_config");
	const char *tmt = json_string_value(json_object_get(tc, "model_type"));
	snprintf(c->lm_model_type, sizeof(c->lm_model_type), "%s",
	         !json_is_object(tc) ? ""
	         : tmt != NULL       ? tmt
	                             : "?");
	c->has_vision = true; /* Idefics3VisionConfig() without a vision_config */
	return aria_queries(root, &c->aria_queries, err);
}
