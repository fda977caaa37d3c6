/*
 * config_solar.c — Solar (model_type solar, SolarForCausalLM: upstage/solar-pro-preview-instruct,
 * remote code) read as vLLM's solar.py builds the model from SolarConfig (vLLM's copy,
 * transformers_utils/configs/solar.py): Llama's keys plus the block skip connections.
 *
 *   key                 SolarConfig        here
 *   attention_bias      false              with bias (absent: false): q/k/v's and o_proj's
 *   bias                (none)             biases alike (SolarDecoderLayer reads
 *                                          `attention_bias or bias`; qkv_bias is not read)
 *   mlp_bias            false              the MLP's biases (Llama's reading)
 *   hidden_act          "silu"             must be silu (SolarMLP raises otherwise)
 *   bskcn_1, bskcn_2    [12,20,32,44],     layers whose input is saved (SolarModel.forward:
 *                       [20,32]            hidden_states and residual, i.e. the residual
 *                                          stream x entering the layer)
 *   bskcn_3, bskcn_4    [16,24,36,48],     layers whose input becomes tv * saved + (1 - tv)
 *                       [28,40]            * x (bskcn_3 mixes bskcn_1's, bskcn_4 bskcn_2's)
 *   bskcn_tv            [0.9, 0.8]         tv: [1] at inference ([0] is training's)
 *   sliding_window      2047               not read (vLLM's solar.py gives its Attention none)
 *
 * At layer i vLLM saves (bskcn_1, then bskcn_2) before it mixes (bskcn_3, then bskcn_4), so a
 * layer in bskcn_1 and bskcn_3 mixes with itself. Refused as vLLM's forward fails on them: a list
 * naming layer 0 in bskcn_1 / bskcn_2 (no residual there yet: residual.clone() on None), a
 * bskcn_3 (bskcn_4) layer below num_hidden_layers with no bskcn_1 (bskcn_2) layer at or before
 * it (None * tv). Entries at or past num_hidden_layers are never reached and ignored; a reached
 * entry past CKPT_SOLAR_MAX_LAYERS is WT_EUNSUPPORTED; a negative entry, a non-integer, or a
 * bskcn_tv that is not a list of at least two finite numbers is WT_ECORRUPT naming the key.
 */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static const int64_t dflt_1[] = {12, 20, 32, 44}, dflt_2[] = {20, 32}, dflt_3[] = {16, 24, 36, 48},
                     dflt_4[] = {28, 40};
static const struct {
	const char *key;
	const int64_t *dflt;
	size_t n;
} lists[4] = {
    {"bskcn_1", dflt_1, 4}, {"bskcn_2", dflt_2, 2}, {"bskcn_3", dflt_3, 4}, {"bskcn_4", dflt_4, 2}};

static void set_bit(uint64_t *m, int64_t i)
{
	m[i / 64] |= UINT64_C(1) << (i % 64);
}

static bool bit(const uint64_t *m, int64_t i)
{
	return (m[i / 64] >> (i % 64)) & 1u;
}

/* List k (absent or null: SolarConfig's default) into mask m, the layers below L only. */
static int read_list(json_t *v, int k, int64_t L, uint64_t *m, wt_errbuf *err)
{
	const char *key = lists[k].key;
	json_t *a = json_object_get(v, key);
	bool dflt = a == NULL || json_is_null(a);
	if (!dflt && !json_is_array(a))
		return wt_seterr(err, WT_ECORRUPT, "config.json: %s is not a list of layer indices",
		                 key);
	size_t n = dflt ? lists[k].n : json_array_size(a);
	for (size_t j = 0; j < n; j++) {
		json_t *e = dflt ? NULL : json_array_get(a, j);
		if (!dflt && (!json_is_integer(e) || json_integer_value(e) < 0))
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: %s[%zu] is not a layer index (an integer >= 0)", key, j);
		int64_t i = dflt ? lists[k].dflt[j] : (int64_t)json_integer_value(e);
		if (i >= L) /* never reached by SolarModel.forward's loop */
			continue;
		if (i >= CKPT_SOLAR_MAX_LAYERS)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s names layer %lld; the skip connections are "
			    "read for layers below %d",
			    key, (long long)i, CKPT_SOLAR_MAX_LAYERS);
		set_bit(m, i);
	}
	return WT_OK;
}

static int read_tv(json_t *v, double *tv, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "bskcn_tv");
	if (a == NULL || json_is_null(a)) {
		*tv = 0.8; /* SolarConfig's [0.9, 0.8] */
		return WT_OK;
	}
	json_t *e = json_array_get(a, 1);
	if (!json_is_array(a) || !json_is_number(json_array_get(a, 0)) || !json_is_number(e) ||
	    !(fabs(json_number_value(e)) < 1e6))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: bskcn_tv is not a list of two finite numbers "
		                 "[training, inference]");
	*tv = json_number_value(e);
	return WT_OK;
}

/* The skips of view v for L layers; the refusals above. */
static int solar_skips(json_t *v, int64_t L, ckpt_solar_skips *out, wt_errbuf *err)
{
	ckpt_solar_skips s;
	memset(&s, 0, sizeof(s));
	int rv = WT_OK;
	for (int k = 0; k < 4 && rv == WT_OK; k++)
		rv = read_list(v, k, L, k < 2 ? s.save[k] : s.mix[k - 2], err);
	if (rv == WT_OK)
		rv = read_tv(v, &s.tv, err);
	if (rv != WT_OK)
		return rv;
	for (int k = 0; k < 2; k++)
		if (bit(s.save[k], 0))
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: %s names layer 0, which has no residual yet "
			                 "(vLLM's solar.py fails there): name layers from 1",
			                 lists[k].key);
	bool have[2] = {false, false};
	int64_t top = L < CKPT_SOLAR_MAX_LAYERS ? L : CKPT_SOLAR_MAX_LAYERS;
	for (int64_t i = 0; i < top; i++)
		for (int k = 0; k < 2; k++) {
			have[k] = have[k] || bit(s.save[k], i);
			if (bit(s.mix[k], i) && !have[k])
				return wt_seterr(
				    err, WT_EUNSUPPORTED,
				    "config.json: %s names layer %lld, before any layer of "
				    "%s saved what it mixes in (vLLM's solar.py fails "
				    "there): give %s a layer at or before it",
				    lists[k + 2].key, (long long)i, lists[k].key, lists[k].key);
		}
	*out = s;
	return WT_OK;
}

int config_solar_keys(json_t *v, wt_errbuf *err)
{
	json_t *act = json_object_get(v, "hidden_act");
	if (act != NULL && (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act is not \"silu\"; vLLM's solar.py runs "
		                 "only silu: give \"silu\" or remove the key");
	bool attn = false, bias = false;
	int64_t L = 0;
	ckpt_solar_skips s;
	int rv = config_get_bool(v, "attention_bias", false, &attn, err);
	if (rv == WT_OK)
		rv = config_get_bool(v, "bias", false, &bias, err);
	if (rv == WT_OK) /* SolarConfig's 32 where absent (the class defaults come later) */
		rv = config_get_int(v, "num_hidden_layers", 32, 1, &L, err);
	if (rv == WT_OK)
		rv = solar_skips(v, L, &s, err);
	if (rv != WT_OK)
		return rv;
	if (json_object_set_new(v, "attention_bias", json_boolean(attn || bias)) != 0 ||
	    json_object_set_new(v, "attention_out_bias", json_boolean(attn || bias)) != 0)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int ckpt_config_solar(const char *json, size_t len, int64_t n_layers, ckpt_solar_skips *out,
                      wt_errbuf *err)
{
	json_error_t je;
	json_t *v = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object");
	}
	int rv = solar_skips(v, n_layers, out, err);
	json_decref(v);
	return rv;
}
