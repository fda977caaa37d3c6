/*
 * config_plamo2.c — PLaMo 2's config keys (model_type plamo2, Plamo2ForCausalLM:
 * pfnet/plamo-2-1b, plamo-2-8b, plamo-2-translate; the remote Plamo2Config of
 * modeling_plamo2.py, which neither transformers 4.57.1 nor vLLM keeps: vLLM's plamo2.py types
 * the fields it reads) under the names the planner reads, as vLLM's plamo2.py builds the model.
 * Runs after Plamo2Config's class defaults (config_defaults_remote.c) are filled in.
 *
 *   key                    vLLM's plamo2.py                         here
 *   hidden_size_per_head   config.head_dim = hidden_size_per_head   head_dim, mamba_d_head
 *   mamba_num_heads        Plamo2MambaMixer's heads                 mamba_n_heads
 *   (derived)              intermediate = heads x head dim          mamba_d_ssm
 *   (derived)              time_step_rank = max(64, hid // 16)      mamba_dt_rank
 *   mamba_step             is_mamba: asserts > 1; layer i Mamba     an integer >= 2;
 *                          unless i % step == step // 2 (with       layer_types "mamba" /
 *                          L <= step // 2: all but the last)        "attention"
 *   mamba_enabled          not read (the remote code: no Mamba      must be true
 *                          layer when false)
 * mamba_d_state and mamba_d_conv already carry the mixer's names; the mixer has one group.
 */
#include <jansson.h>
#include <stdbool.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int p2_set(json_t *v, const char *key, json_int_t x, wt_errbuf *err)
{
	if (json_object_set_new(v, key, json_integer(x)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

/* layer_types from vLLM's is_mamba(config, i) over L layers. */
static int p2_layers(json_t *v, int64_t L, int64_t step, wt_errbuf *err)
{
	json_t *lt = json_array();
	if (lt == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	for (int64_t i = 0; i < L; i++) {
		bool mamba = L <= step / 2 ? i != L - 1 : i % step != step / 2;
		if (json_array_append_new(lt, json_string(mamba ? "mamba" : "attention")) != 0) {
			json_decref(lt);
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		}
	}
	if (json_object_set_new(v, "layer_types", lt) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_plamo2_keys(json_t *v, wt_errbuf *err)
{
	json_t *en = json_object_get(v, "mamba_enabled");
	if (en != NULL && !json_is_null(en) && !json_is_true(en))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: PLaMo 2's mamba_enabled is not true; vLLM's plamo2.py "
		    "does not read it and builds Mamba layers by mamba_step anyway (the "
		    "remote code would build none): give true or remove the key");
	int64_t L = 0, step = 0, hid = 0, heads = 0, d = 0;
	int rv = config_get_int(v, "num_hidden_layers", 32, 1, &L, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "mamba_step", 2, 2, &step, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "hidden_size", 4096, 1, &hid, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "mamba_num_heads", 64, 1, &heads, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "hidden_size_per_head", 128, 1, &d, err);
	if (rv != WT_OK)
		return rv;
	if (L > 4096) /* the layer kinds are laid out one a layer */
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: PLaMo 2's num_hidden_layers %lld is too many (at most "
		    "4096)",
		    (long long)L);
	if (heads * d > CONFIG_INT_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: PLaMo 2's mamba_num_heads x hidden_size_per_head is "
		                 "over 2^40");
	rv = p2_layers(v, L, step, err);
	if (rv == WT_OK)
		rv = p2_set(v, "head_dim", d, err);
	if (rv == WT_OK)
		rv = p2_set(v, "mamba_d_head", d, err);
	if (rv == WT_OK)
		rv = p2_set(v, "mamba_n_heads", heads, err);
	if (rv == WT_OK)
		rv = p2_set(v, "mamba_n_groups", 1, err);
	if (rv == WT_OK)
		rv = p2_set(v, "mamba_d_ssm", heads * d, err);
	if (rv == WT_OK)
		rv = p2_set(v, "mamba_dt_rank", hid / 16 > 64 ? hid / 16 : 64, err);
	return rv;
}
