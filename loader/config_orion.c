/*
 * config_orion.c — Orion's config keys (model_type orion, OrionForCausalLM: the remote
 * OrionConfig, configuration_orion.py, of which vLLM keeps a copy in
 * transformers_utils/configs/orion.py), read as vLLM's orion.py builds the model. The
 * Llama-like dims are read for every family (OrionConfig's defaults for those:
 * config_defaults_classic.c).
 *
 *   key             OrionConfig   here
 *   hidden_act      "silu"        must be silu: vLLM's OrionMLP raises on any other
 *   attention_bias  false         must be false: vLLM's OrionAttention builds q/k/v and o_proj
 *                                 without biases and its load_weights skips a checkpoint's
 *                                 .bias tensors, so the model would run without them
 *   mlp_bias        (none)        must be false or absent: OrionMLP has no biases
 *   rope_scaling    None          null, or {type linear | dynamic, factor > 1} and nothing
 *                                 else: OrionConfig._rope_scaling_validation raises on any
 *                                 other (the reference runs both as transformers does)
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* OrionConfig's _rope_scaling_validation: a dict of exactly type and factor. */
static int orion_rope_scaling(json_t *v, wt_errbuf *err)
{
	json_t *r = json_object_get(v, "rope_scaling");
	if (r == NULL || json_is_null(r))
		return WT_OK;
	json_t *t = json_is_object(r) ? json_object_get(r, "type") : NULL;
	json_t *f = json_is_object(r) ? json_object_get(r, "factor") : NULL;
	if (!json_is_object(r) || json_object_size(r) != 2 || !json_is_string(t) ||
	    (strcmp(json_string_value(t), "linear") != 0 &&
	     strcmp(json_string_value(t), "dynamic") != 0) ||
	    !json_is_number(f) || !(json_number_value(f) > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_scaling is not {\"type\": \"linear\" or "
		                 "\"dynamic\", \"factor\": a number > 1}; OrionConfig (and vLLM's "
		                 "copy of it) raises on any other: give one of them or null");
	return WT_OK;
}

int config_orion_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not \"silu\"; vLLM's orion.py runs only "
		    "silu: give \"silu\" or remove the key");
	int rv = config_refuse_bool(v, "attention_bias", false, true,
	                            "vLLM's orion.py builds q/k/v and o_proj without biases and "
	                            "skips the checkpoint's: give false for a checkpoint without "
	                            "them",
	                            err);
	if (rv == WT_OK)
		rv = config_refuse_bool(v, "mlp_bias", false, true,
		                        "vLLM's orion.py builds gate_up_proj and down_proj without "
		                        "biases: remove the key",
		                        err);
	return rv != WT_OK ? rv : orion_rope_scaling(v, err);
}
