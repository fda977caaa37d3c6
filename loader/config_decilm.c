/*
 * config_decilm.c — DeciLM's config keys (model_type nemotron-nas, DeciLMForCausalLM: NVIDIA's
 * Llama-3_3-Nemotron-Super-49B-v1 / -v1_5, Llama-3_1-Nemotron-Ultra-253B-v1,
 * Llama-3.1-Nemotron-51B-Instruct), read as vLLM's nemotron_nas.py builds the model from the
 * remote DeciLMConfig (configuration_decilm.py: a LlamaConfig of transformers 4.44.2 with
 * intermediate_size and num_key_value_heads set to None) and its block_config.py (per-layer
 * AttentionConfig / FFNConfig dataclasses). Its dims: config_defaults_remote.c.
 *
 *   key (block_configs[i].)     remote class          here
 *   (the list itself)           None                  required, one entry per layer
 *   attention.no_op             false                 the layer has no self_attn /
 *                                                     input_layernorm
 *   attention.replace_with_linear  false              must be false (vLLM builds no linear
 *                                                     replacement: its loader refuses it)
 *   attention.n_heads_in_group  None (asserted set)   required without no_op: an integer >= 1
 *                                                     dividing num_attention_heads; kv heads
 *                                                     num_attention_heads / it
 *   ffn.no_op                   false                 the layer has no mlp /
 *                                                     post_attention_layernorm
 *   ffn.replace_with_linear     false                 must be false (as attention's)
 *   ffn.ffn_mult                None (asserted set)   MLP width int(2 * round(m, 6) * hidden /
 *                                                     3) rounded up to 256
 *   ffn.intermediate_size       (later classes)       the width when ffn_mult is absent
 *   ffn.hidden_act              (later classes)       else the top-level hidden_act; silu only
 *
 * Top level: attention_bias, bias, qkv_bias and mlp_bias must be false or absent (no release
 * sets them; not cut here). The first layer that is not all no-op must have attention: vLLM's
 * DeciLMDecoderLayer otherwise runs post_attention_layernorm without a residual, which fails;
 * and some layer must have attention (vLLM sizes its kv cache from the first one).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader_decilm.h"

int64_t ckpt_decilm_ffn_width(double m, int64_t hid)
{
	if (!(m > 0) || !isfinite(m) || hid <= 0)
		return -1;
	char buf[64]; /* Python's round(m, 6): the double nearest m's 6-decimal rounding */
	snprintf(buf, sizeof(buf), "%.6f", m);
	double r = strtod(buf, NULL);
	double w = 2.0 * r * (double)hid / 3.0; /* int(2 * ffn_mult * n_embd / 3) */
	if (!(w < 2147483648.0))
		return -1;
	int64_t n = (int64_t)w;
	if (n % 256 != 0)
		n += 256 - n % 256;
	return n > 2147483647 ? -1 : n;
}

/* block_configs[i].sec.key as a boolean (absent or null: false). */
static int blk_bool(json_t *o, int64_t i, const char *sec, const char *key, bool *out,
                    wt_errbuf *err)
{
	json_t *k = json_object_get(o, key);
	*out = false;
	if (k == NULL || json_is_null(k))
		return WT_OK;
	if (!json_is_boolean(k))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: block_configs[%" PRId64 "].%s.%s is not a boolean",
		                 i, sec, key);
	*out = json_is_true(k);
	return WT_OK;
}

/* A subblock's no_op / replace_with_linear. */
static int blk_switches(json_t *o, int64_t i, const char *sec, bool *no_op, wt_errbuf *err)
{
	bool lin;
	int rv = blk_bool(o, i, sec, "no_op", no_op, err);
	if (rv == WT_OK)
		rv = blk_bool(o, i, sec, "replace_with_linear", &lin, err);
	if (rv == WT_OK && lin && !*no_op)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: block_configs[%" PRId64
		    "].%s.replace_with_linear is true: vLLM's nemotron_nas.py builds no "
		    "linear replacement (its loader cannot load one); not cut here",
		    i, sec);
	if (rv == WT_OK && lin)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: block_configs[%" PRId64
		                 "].%s has both no_op and replace_with_linear true (the remote "
		                 "block_config.py asserts one at most); fix config.json",
		                 i, sec);
	return rv;
}

static int blk_attn(json_t *a, int64_t i, int64_t H, ckpt_decilm_block *b, wt_errbuf *err)
{
	bool no_op;
	int rv = blk_switches(a, i, "attention", &no_op, err);
	if (rv != WT_OK || no_op)
		return rv;
	json_t *g = json_object_get(a, "n_heads_in_group");
	if (g == NULL || json_is_null(g) || !json_is_integer(g) || json_integer_value(g) < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: block_configs[%" PRId64
		                 "].attention.n_heads_in_group is %s; an attention layer needs an "
		                 "integer >= 1 (its kv heads are num_attention_heads / it)",
		                 i,
		                 g == NULL || json_is_null(g) ? "missing" : "not an integer >= 1");
	int64_t n = json_integer_value(g);
	if (H % n != 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: block_configs[%" PRId64 "].attention.n_heads_in_group %" PRId64
		    " does not divide num_attention_heads %" PRId64 "; fix config.json",
		    i, n, H);
	b->attn = true;
	b->kv_heads = H / n;
	return WT_OK;
}

static int blk_ffn(json_t *f, int64_t i, int64_t hid, json_t *top_act, ckpt_decilm_block *b,
                   wt_errbuf *err)
{
	bool no_op;
	int rv = blk_switches(f, i, "ffn", &no_op, err);
	if (rv != WT_OK || no_op)
		return rv;
	json_t *act = json_object_get(f, "hidden_act");
	bool own = act != NULL && !json_is_null(act);
	if (!own)
		act = top_act; /* vLLM: config.hidden_act where the block has none */
	if (act != NULL && !json_is_null(act) &&
	    (!json_is_string(act) || strcmp(json_string_value(act), "silu") != 0))
		return own ? wt_seterr(err, WT_EUNSUPPORTED,
		                       "config.json: block_configs[%" PRId64
		                       "].ffn.hidden_act is not \"silu\" (the only activation cut "
		                       "and checked here); use silu",
		                       i)
		           : wt_seterr(err, WT_EUNSUPPORTED,
		                       "config.json: hidden_act is not \"silu\" (layer %" PRId64
		                       "'s MLP uses it; the only activation cut and checked here)",
		                       i);
	json_t *m = json_object_get(f, "ffn_mult");
	json_t *is = json_object_get(f, "intermediate_size");
	if (m != NULL && !json_is_null(m)) {
		b->inter =
		    json_is_number(m) ? ckpt_decilm_ffn_width(json_number_value(m), hid) : -1;
		if (b->inter < 256)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: block_configs[%" PRId64
			                 "].ffn.ffn_mult is not a positive number giving a width "
			                 "below 2^31",
			                 i);
	} else if (is != NULL && !json_is_null(is)) {
		if (!json_is_integer(is) || json_integer_value(is) < 1 ||
		    json_integer_value(is) > CONFIG_INT_MAX)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: block_configs[%" PRId64
			                 "].ffn.intermediate_size is not an integer >= 1",
			                 i);
		b->inter = json_integer_value(is);
	} else
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: block_configs[%" PRId64
		                 "].ffn.ffn_mult is missing; an MLP layer needs it (or "
		                 "ffn.intermediate_size)",
		                 i);
	b->ffn = true;
	return WT_OK;
}

/* Every block of view v: *pout = L blocks (owned), NULL on error. */
static int decilm_blocks(json_t *v, int64_t L, int64_t H, int64_t hid, ckpt_decilm_block **pout,
                         wt_errbuf *err)
{
	*pout = NULL;
	json_t *bc = json_object_get(v, "block_configs");
	if (bc == NULL || json_is_null(bc) || !json_is_array(bc))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: block_configs is %s; DeciLM (nemotron-nas) needs one "
		    "entry per layer",
		    bc == NULL || json_is_null(bc) ? "missing" : "not a list");
	if ((int64_t)json_array_size(bc) != L)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: block_configs has %zu entries but num_hidden_layers is "
		    "%" PRId64 "; one per layer",
		    json_array_size(bc), L);
	ckpt_decilm_block *out = calloc((size_t)L, sizeof(*out));
	if (out == NULL)
		return wt_seterr(err, WT_ENOMEM,
		                 "config.json: out of memory for %" PRId64 " blocks", L);
	int rv = WT_OK;
	json_t *top_act = json_object_get(v, "hidden_act");
	int64_t first = -1; /* the first layer that is not all no-op */
	for (int64_t i = 0; i < L; i++) {
		json_t *b = json_array_get(bc, (size_t)i);
		json_t *a = json_object_get(b, "attention"), *f = json_object_get(b, "ffn");
		if (!json_is_object(b) || !json_is_object(a) || !json_is_object(f))
			rv = wt_seterr(err, WT_ECORRUPT,
			               "config.json: block_configs[%" PRId64
			               "] is not an object with \"attention\" and \"ffn\" objects",
			               i);
		if (rv == WT_OK)
			rv = blk_attn(a, i, H, &out[i], err);
		if (rv == WT_OK)
			rv = blk_ffn(f, i, hid, top_act, &out[i], err);
		if (rv != WT_OK)
			break;
		if (first < 0 && (out[i].attn || out[i].ffn))
			first = i;
	}
	if (rv == WT_OK && first < 0)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: every block_configs entry has attention.no_op and "
		               "ffn.no_op true (vLLM sizes its kv cache from an attention layer); "
		               "not cut here");
	else if (rv == WT_OK && !out[first].attn)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: block_configs[%" PRId64
		               "] has an ffn but attention.no_op true, and no layer before it has "
		               "attention: vLLM's DeciLMDecoderLayer then normalizes without a "
		               "residual, which fails; not cut here",
		               first);
	if (rv != WT_OK) {
		free(out);
		return rv;
	}
	*pout = out;
	return WT_OK;
}

int config_decilm_keys(json_t *v, wt_errbuf *err)
{
	static const char *const off[] = {"attention_bias", "bias", "qkv_bias", "mlp_bias"};
	for (size_t k = 0; k < sizeof(off) / sizeof(off[0]); k++) {
		json_t *b = json_object_get(v, off[k]);
		if (b != NULL && !json_is_null(b) && !json_is_false(b))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s is not false: no DeciLM release has biases "
			    "and they are not cut here; set it false",
			    off[k]);
	}
	int64_t L, H, hid;
	int rv = config_get_int(v, "num_hidden_layers", 32, 1, &L, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "num_attention_heads", 32, 1, &H, err);
	if (rv == WT_OK)
		rv = config_get_int(v, "hidden_size", 4096, 1, &hid, err);
	if (rv != WT_OK)
		return rv;
	ckpt_decilm_block *b;
	rv = decilm_blocks(v, L, H, hid, &b, err);
	free(b);
	return rv;
}

int ckpt_config_decilm(const char *json, size_t len, const ckpt_config *cfg,
                       ckpt_decilm_block **out, wt_errbuf *err)
{
	*out = NULL;
	if (cfg->num_hidden_layers < 1)
		return wt_seterr(err, WT_ECORRUPT, "config.json: num_hidden_layers is not >= 1");
	json_error_t je;
	json_t *v = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object");
	}
	int rv = decilm_blocks(v, cfg->num_hidden_layers, cfg->num_attention_heads,
	                       cfg->hidden_size, out, err);
	json_decref(v);
	return rv;
}
