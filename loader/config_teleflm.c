/*
 * config_teleflm.c — Tele-FLM's config keys (model_type TeleFLM, TeleFLMForCausalLM: CofeAI/
 * Tele-FLM (FLM-2-52B), FLM-2-52B-Instruct, Tele-FLM-1T; the remote TeleFLMConfig,
 * configuration_teleflm.py, of which neither transformers 4.57.1 nor vLLM keeps a copy), read
 * as vLLM's teleflm.py builds the model: its LlamaForCausalLM with Llama's bias switches and
 * silu MLP (Xverse's reading, config_internlm3.c), and the muP multipliers:
 *
 *   key               here
 *   use_mup           required boolean: vLLM reads config.use_mup with no default
 *   input_mult        with use_mup true, required: the embeddings times it (TeleFLMModel)
 *   output_mult       with use_mup true, required: the logits times
 *   mup_scale_factor    output_mult / mup_scale_factor (TeleFLMForCausalLM's logit_scale)
 *
 * Each multiplier must be a number in [1e-6, 1e6] (MiniCPM's range; mup_scale_factor divides),
 * else WT_EUNSUPPORTED naming it; absent (or null) is WT_ECORRUPT naming it. With use_mup false
 * the three are not read, as vLLM does not read them. The remote class's defaults were not read
 * here, so the keys it would default are required instead (WT_ECORRUPT naming the key):
 * intermediate_size, rms_norm_eps, tie_word_embeddings (hidden_size, num_attention_heads,
 * num_hidden_layers, vocab_size the loader requires of every family). rope_theta 10000 and
 * max_position_embeddings 8192 are vLLM's getattr defaults (config_defaults_remote.c).
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int need(json_t *v, const char *key, wt_errbuf *err)
{
	json_t *x = json_object_get(v, key);
	if (x == NULL || json_is_null(x))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: TeleFLM needs %s (the remote TeleFLMConfig's default "
		    "is not known here; vLLM's teleflm.py over its llama.py reads "
		    "config.%s): give it",
		    key, key);
	return WT_OK;
}

static int mup_mult(json_t *v, const char *key, wt_errbuf *err)
{
	int rv = need(v, key, err);
	if (rv != WT_OK)
		return rv;
	json_t *x = json_object_get(v, key);
	double m = json_is_number(x) ? json_number_value(x) : NAN;
	if (!(m >= 1e-6 && m <= 1e6))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s is not a number in [1e-6, 1e6]; TeleFLM's muP "
		                 "scales by it (use_mup true): fix it or set use_mup false",
		                 key);
	return WT_OK;
}

int config_teleflm_keys(json_t *v, wt_errbuf *err)
{
	static const char *const required[] = {"intermediate_size", "rms_norm_eps",
	                                       "tie_word_embeddings", "use_mup"};
	int rv = WT_OK;
	for (size_t i = 0; rv == WT_OK && i < sizeof(required) / sizeof(required[0]); i++)
		rv = need(v, required[i], err);
	bool mup = false;
	if (rv == WT_OK)
		rv = config_get_bool(v, "use_mup", false, &mup, err);
	if (rv == WT_OK && mup)
		rv = mup_mult(v, "input_mult", err);
	if (rv == WT_OK && mup)
		rv = mup_mult(v, "output_mult", err);
	if (rv == WT_OK && mup)
		rv = mup_mult(v, "mup_scale_factor", err);
	return rv != WT_OK ? rv : config_xverse_keys(v, err);
}
