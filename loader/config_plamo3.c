/*
 * config_plamo3.c — PLaMo 3's config keys (model_type plamo3, Plamo3ForCausalLM: pfnet/plamo-3-*;
 * the remote Plamo3Config, configuration_plamo3.py, as SGLang's copy, srt/configs/plamo3.py,
 * keeps it; vLLM's plamo3.py types the fields it reads), read as vLLM builds the model. The
 * Llama-like dims (head_dim given) are read for every family (Plamo3Config's defaults:
 * config_defaults_remote.c).
 *
 *   key                        absent     vLLM's plamo3.py                 here
 *   hidden_activation          "swiglu"   not read: SiluAndMul always      must be swiglu
 *   attention_bias             false      QKVParallelLinear bias=False     must be false
 *   rope_scaling_factor        1          != 1: YaRN on the full layers    must be 1
 *                                         (rope_scaling property)
 *   window_size                2048       interleaved_sliding_window[i]    an integer >= 1
 *   sliding_window_pattern     8          layer i full when (i + 1) %      an integer >= 1
 *                                         pattern == 0, else sliding       (0 divides by zero)
 *   interleaved_sliding_window derived    saved by save_pretrained; read   absent, null or the
 *                                         back over the derived list       derived list
 *   rope_local_theta           10000      the sliding layers' RoPE base    a real > 0
 */
#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

/* interleaved_sliding_window, when given, must be Plamo3Config's own list: None on the full
 * layers ((i + 1) % pattern == 0), window elsewhere. */
static int p3_window_list(json_t *v, int64_t L, int64_t window, int64_t pattern, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "interleaved_sliding_window");
	if (a == NULL || json_is_null(a))
		return WT_OK;
	if (!json_is_array(a) || (int64_t)json_array_size(a) != L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: interleaved_sliding_window is not a list of "
		                 "num_hidden_layers (%lld) entries",
		                 (long long)L);
	for (int64_t i = 0; i < L; i++) {
		json_t *e = json_array_get(a, (size_t)i);
		bool full = (i + 1) % pattern == 0;
		bool ok = full ? json_is_null(e)
		               : json_is_integer(e) && json_integer_value(e) == (json_int_t)window;
		if (!ok)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: interleaved_sliding_window[%lld] is not %s; the "
			    "sliding layers are read from window_size (%lld) and "
			    "sliding_window_pattern (%lld): remove the list or make it match",
			    (long long)i, full ? "null" : "window_size", (long long)window,
			    (long long)pattern);
	}
	return WT_OK;
}

int config_plamo3_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_activation");
	if (act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "swiglu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_activation is not \"swiglu\"; vLLM's "
		                 "plamo3.py runs SwiGLU whatever it says: give \"swiglu\" or "
		                 "remove the key");
	int rv = config_refuse_bool(v, "attention_bias", false, true,
	                            "vLLM's plamo3.py builds qkv_proj without a bias and would "
	                            "not load one: give false or remove the key",
	                            err);
	double factor = 1.0, local = 0.0;
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "rope_scaling_factor", 1.0, &factor, err);
	if (rv == WT_OK && factor != 1.0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_scaling_factor %g; vLLM's plamo3.py then runs "
		                 "YaRN on the full-attention layers, which this reading does not "
		                 "(the released models: 1): give 1 or remove the key",
		                 factor);
	int64_t L = 0, window = 0, pattern = 0;
	if (rv == WT_OK)
		rv = config_get_pos_real(v, "rope_local_theta", 10000.0, &local, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "num_hidden_layers", 32, 1, &L, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "window_size", 2048, 1, &window, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "sliding_window_pattern", 8, 1, &pattern, err);
	if (rv == WT_OK)
		rv = p3_window_list(v, L, window, pattern, err);
	return rv;
}
