/*
 * config_mimo.c — Xiaomi MiMo's config keys (model_type mimo, MiMoForCausalLM: XiaomiMiMo/
 * MiMo-7B-Base, -RL, -SFT; the remote MiMoConfig, configuration_mimo.py, a Qwen2Config with one
 * key more), read as vLLM's mimo.py builds the model over its Qwen2 classes. The class defaults
 * (Qwen2Config's, transformers 4.57.1) are in config_defaults_remote.c.
 *
 *   key                        MiMoConfig  here
 *   hidden_act                 "silu"      must be silu: vLLM's Qwen2MLP raises on any other
 *   num_nextn_predict_layers   0           an integer >= 0 (the release: 1), else WT_ECORRUPT;
 *                                          the model.mtp_layers.* it counts are the draft's
 *                                          (mimo_mtp.py), dropped by the planner
 */
#include <stdint.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_mimo_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not \"silu\"; vLLM's mimo.py runs Qwen2's "
		    "MLP, which supports only silu: give \"silu\" or remove the key");
	int64_t n = 0;
	return config_get_int(v, "num_nextn_predict_layers", 0, 0, &n, err);
}
