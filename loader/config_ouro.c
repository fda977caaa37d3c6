/*
 * config_ouro.c — Ouro's config keys (model_type ouro, OuroForCausalLM: ByteDance/Ouro-1.4B,
 * Ouro-2.6B, -Thinking; the remote OuroConfig, configuration_ouro.py, of which neither
 * transformers 4.57.1 nor vLLM keeps a copy), read as vLLM's ouro.py builds the model. The
 * Qwen2-like dims are read for every family (OuroConfig's defaults for those:
 * config_defaults_remote.c).
 *
 *   key                 absent   vLLM's ouro.py                      here
 *   hidden_act          "silu"   OuroMLP raises on any other         must be silu
 *   total_ut_steps      4        getattr(config, "total_ut_steps",   an integer in [1, 64]: the
 *                                4): every layer run that many      passes over the weights
 *                                times over the same weights
 *   is_causal           true     false builds ENCODER_ONLY           must be true or absent
 *                                attention (not a causal LM)
 *   use_sliding_window  false    a window set and not turned off     refused when it would act
 *   sliding_window      None     acts on every layer (the engine's   (use_sliding_window true,
 *                                sliding_window, max_window_layers   sliding_window given): the
 *                                asserted equal to the layers)       reference attends over the
 *                                                                    whole prefix
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_ouro_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not \"silu\"; vLLM's ouro.py runs only "
		    "silu: give \"silu\" or remove the key");
	int64_t steps = 0;
	int rv = config_get_int(v, "total_ut_steps", 4, 1, &steps, err);
	if (rv != WT_OK)
		return rv;
	if (steps > CONFIG_OURO_MAX_UT_STEPS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: total_ut_steps %lld; the layers are run that many "
		                 "times over the same weights and this reading takes 1 to %d "
		                 "(Ouro's releases: 4): give a value in that range",
		                 (long long)steps, CONFIG_OURO_MAX_UT_STEPS);
	rv = config_refuse_bool(v, "is_causal", true, false,
	                        "vLLM's ouro.py then builds encoder-only (bidirectional) "
	                        "attention, not a causal LM: give true or remove the key",
	                        err);
	bool sw = false;
	if (rv == WT_OK)
		rv = config_get_bool(v, "use_sliding_window", false, &sw, err);
	if (rv != WT_OK)
		return rv;
	json_t *win = json_object_get(v, "sliding_window");
	if (sw && win != NULL && !json_is_null(win))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: use_sliding_window is true with sliding_window given; vLLM's "
		    "ouro.py then attends over a window on every layer, which this reading does "
		    "not run (the reference attends over the whole prefix): give "
		    "use_sliding_window false or sliding_window null");
	return WT_OK;
}
