/*
 * config_iquestcoder.c — IQuest-Coder's config keys (model_type iquestcoder,
 * IQuestCoderForCausalLM: IQuestLab's IQuest-Coder-V1 7B / 14B / 40B Base / Instruct / Thinking;
 * the remote IQuestCoderConfig, configuration_iquestcoder.py), read as vLLM's llama.py builds the
 * model (its registry maps the architecture onto LlamaForCausalLM). IQuestCoderConfig is
 * LlamaConfig's keys with its own defaults (config_defaults_remote.c) and three the remote
 * modeling_iquestcoder.py acts on but vLLM's llama.py never reads:
 *
 *   key                 IQuestCoderConfig  remote model                 here
 *   clip_qkv            None               clamps q, k, v to +-clip     refused unless null
 *   use_sliding_window  false              a window over the layers    refused when it would act
 *   sliding_window      None               from max_window_layers on    (use_sliding_window true,
 *   max_window_layers   0                                               sliding_window given and
 *                                                                       max_window_layers < L)
 *   hidden_act          "silu"             ACT2FN                       must be silu (LlamaMLP)
 *
 * vLLM would serve such a config with neither the clamp nor the window (another model than the
 * one trained), so it is refused naming the key; every released config.json has them inert.
 */
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_iquestcoder_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act is not \"silu\"; vLLM's llama.py runs only "
		    "silu: give \"silu\" or remove the key");
	json_t *clip = json_object_get(v, "clip_qkv");
	if (clip != NULL && !json_is_null(clip))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: clip_qkv is set; IQuest-Coder's own model clamps q, k and "
		    "v with it but vLLM's llama.py (IQuestCoderForCausalLM's) never does, so "
		    "the served model would not be the trained one: only clip_qkv null is "
		    "supported");
	bool sw = false;
	int64_t first = 0, L = 0;
	int rv = config_get_bool(v, "use_sliding_window", false, &sw, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "max_window_layers", 0, 0, &first, err);
	if (rv == WT_OK) /* IQuestCoderConfig's default: the class fills it after this check */
		rv = config_get_int(v, "num_hidden_layers", 80, 1, &L, err);
	if (rv != WT_OK)
		return rv;
	json_t *win = json_object_get(v, "sliding_window");
	if (sw && win != NULL && !json_is_null(win) && first < L)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: use_sliding_window is true with sliding_window given "
		    "(layers from max_window_layers %lld on attend over a window); vLLM's "
		    "llama.py reads neither and attends over the whole prefix: give "
		    "use_sliding_window false",
		    (long long)first);
	return WT_OK;
}
