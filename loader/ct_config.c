/*
 * ct_config.c — quantization_config of compressed-tensors checkpoints
 * (quant_method "compressed-tensors", as llm-compressor writes them), read
 * into ckpt_config (docs/format.md section 4.5). Read (type int, static):
 *
 * | format         | num_bits | strategy          | symmetric    | kind                      |
 * |----------------|----------|-------------------|--------------|---------------------------|
 * | int-quantized  | 8        | channel           | true, false  | CT_INT8 (I8 weight)       |
 * | pack-quantized | 8        | channel, group G  | true, false  | CT_INT8 + quant_pack8     |
 * | pack-quantized | 4        | group G (G % 8 == 0) | true, false | CT_INT4                  |
 * | int-quantized  | 4        | group G (G % 8 == 0) | true      | CT_INT4 + quant_int4_i8   |
 * | float-quantized | 8 (type float) | channel    | true         | CT_FP8 (F8_E4M3 weight)   |
 * | float-quantized | 8 (type float) | tensor     | true         | FP8_TENSOR (as "fp8")     |
 * | float-quantized | 8 (type float) | block [b0, b1] | true     | FP8_BLOCK + quant_block_ct |
 *
 * float-quantized per channel is read with dynamic input activations (llm-compressor's
 * FP8_DYNAMIC: no input_scale stored), per tensor with static (its FP8 scheme:
 * X.input_scale [1]) or dynamic ones, per block (FP8_BLOCK: X.weight_scale
 * [ceil(N/b0), ceil(K/b1)]) with dynamic ones; strategy group, and static input
 * activations beside channel or block weights, are WT_EUNSUPPORTED naming them.
 * symmetric false sets quant_asym (X.weight_zero_point is read); actorder
 * "group" / "dynamic" / true (strategy group only) sets quant_gidx
 * (X.weight_g_idx is read); "weight" / "static" / false / null store no g_idx
 * and read like no actorder. Every other combination (int4-quantized: two
 * signed nibbles per I8) is WT_EUNSUPPORTED naming the field and its value.
 * The ignore list is read by the caller (config.c) like every quant_method's.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "loader/ct_int.h"

static const char *str_or(json_t *o, const char *key, const char *dflt)
{
	json_t *v = o ? json_object_get(o, key) : NULL;
	return json_is_string(v) ? json_string_value(v) : dflt;
}

/* weights.<key> as an integer; absent/null -> dflt. */
static int64_t int_or(json_t *o, const char *key, int64_t dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static bool true_(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* The weight scheme of one config group. */
typedef struct ct_scheme {
	ckpt_quant_kind kind;
	int64_t g;        /* group_size; 0 for strategy channel */
	int64_t block[2]; /* float-quantized strategy block: block_structure */
	bool i8, pack8, asym, gidx;
} ct_scheme;

/* weights.actorder: *gidx true for "group" (alias "dynamic", or true: compressed-tensors'
 * validate_actorder), false for none/null/false/"weight"/"static" (contiguous groups, no
 * g_idx stored). */
static int actorder(const char *gname, json_t *w, bool *gidx, wt_errbuf *err)
{
	json_t *ao = json_object_get(w, "actorder");
	const char *v = json_is_string(ao) ? json_string_value(ao) : "";
	*gidx = json_is_true(ao) || strcmp(v, "group") == 0 || strcmp(v, "dynamic") == 0;
	if (ao == NULL || json_is_null(ao) || json_is_boolean(ao) || *gidx ||
	    strcmp(v, "weight") == 0 || strcmp(v, "static") == 0)
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: compressed-tensors group '%s': weights.actorder '%s' is "
	                 "not read; expected null, \"group\" (\"dynamic\") or \"weight\" "
	                 "(\"static\")",
	                 gname, json_is_string(ao) ? v : "(not a string)");
}

/* A float-quantized group: FP8 (E4M3) weights per channel (dynamic input activations
 * or none) or per tensor (static or dynamic ones), symmetric, static. */
static int float_scheme(const char *gname, json_t *grp, json_t *w, ct_scheme *sc, wt_errbuf *err)
{
	const char *type = str_or(w, "type", "");
	const char *strategy = str_or(w, "strategy", "");
	int64_t bits = int_or(w, "num_bits", 8);
	bool chan = strcmp(strategy, "channel") == 0, tensor = strcmp(strategy, "tensor") == 0,
	     block = strcmp(strategy, "block") == 0;
	if (strcmp(type, "float") != 0 || bits != 8 || !(chan || tensor || block) ||
	    !true_(w, "symmetric") || true_(w, "dynamic") || sc->gidx)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: compressed-tensors group '%s': float-quantized weights type "
		    "'%s', num_bits %lld, strategy '%s', symmetric %s, dynamic %s are not read; "
		    "supported: type float, num_bits 8 (FP8 E4M3), strategy channel, tensor or "
		    "block, symmetric true, static (llm-compressor's FP8_DYNAMIC, FP8 and "
		    "FP8_BLOCK schemes)",
		    gname, type, (long long)bits, strategy,
		    true_(w, "symmetric") ? "true" : "false",
		    true_(w, "dynamic") ? "true" : "false");
	if (block) { /* block_structure [b0, b1]: rows x columns of one scale */
		json_t *b = json_object_get(w, "block_structure");
		for (size_t k = 0; k < 2; k++) {
			json_t *v = json_is_array(b) && json_array_size(b) == 2
			                ? json_array_get(b, k)
			                : NULL;
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > CKPT_MAX_QUANT_BLOCK)
				return wt_seterr(
				    err, WT_ECORRUPT,
				    "config.json: compressed-tensors group '%s': "
				    "weights.block_structure must be two integers in 1..%d",
				    gname, CKPT_MAX_QUANT_BLOCK);
			sc->block[k] = (int64_t)json_integer_value(v);
		}
	}
	json_t *in = json_object_get(grp, "input_activations");
	if (!tensor && json_is_object(in) && !true_(in, "dynamic"))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: compressed-tensors group '%s': float-quantized "
		                 "weights per %s with static input activations (input_scale) are "
		                 "not read; only dynamic ones (FP8_DYNAMIC, FP8_BLOCK), or weights "
		                 "per tensor (FP8)",
		                 gname, strategy);
	/* per tensor: the "fp8" quant_method's per-tensor checkpoints with compressed-tensors'
	 * scale shape [1] (and scales F32, BF16 or F16); per block: its block checkpoints with
	 * the scales named X.weight_scale */
	sc->kind = tensor  ? CKPT_QUANT_FP8_TENSOR
	           : block ? CKPT_QUANT_FP8_BLOCK
	                   : CKPT_QUANT_CT_FP8;
	sc->g = 0;
	return WT_OK;
}

/* The weights args and format of group `gname` (table above). */
static int group_scheme(const char *gname, json_t *grp, const char *fmt_top, ct_scheme *sc,
                        wt_errbuf *err)
{
	json_t *w = json_is_object(grp) ? json_object_get(grp, "weights") : NULL;
	if (!json_is_object(w))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: quantization_config.config_groups.%s.weights missing "
		    "or not an object",
		    gname);
	const char *fmt = str_or(grp, "format", fmt_top);
	const char *type = str_or(w, "type", "int");
	const char *strategy = str_or(w, "strategy", "");
	int64_t bits = int_or(w, "num_bits", 8), g = int_or(w, "group_size", -1);
	if (fmt == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: compressed-tensors quantization_config has no "
		                 "'format' (int-quantized, pack-quantized or float-quantized)");
	int rv = actorder(gname, w, &sc->gidx, err);
	if (rv != WT_OK)
		return rv;
	if (strcmp(fmt, "float-quantized") == 0)
		return float_scheme(gname, grp, w, sc, err);
	bool packed = strcmp(fmt, "pack-quantized") == 0, intq = strcmp(fmt, "int-quantized") == 0;
	bool chan = strcmp(strategy, "channel") == 0,
	     grp_ok = strcmp(strategy, "group") == 0 && g > 0 && g <= WT_MAX_GROUP_SIZE;
	sc->asym = json_is_false(json_object_get(w, "symmetric"));
	if (strcmp(type, "int") != 0 || !(true_(w, "symmetric") || sc->asym) || true_(w, "dynamic"))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: compressed-tensors group '%s': weights type '%s', "
		                 "symmetric %s, dynamic %s; only static int weights are read",
		                 gname, type, true_(w, "symmetric") ? "true" : "false",
		                 true_(w, "dynamic") ? "true" : "false");
	if (bits == 8 && ((intq && chan) || (packed && (chan || grp_ok)))) {
		sc->kind = CKPT_QUANT_CT_INT8;
		sc->g = chan ? 0 : g;
		sc->pack8 = packed;
	} else if (bits == 4 && (packed || (intq && !sc->asym)) && grp_ok && g % 8 == 0) {
		sc->kind = CKPT_QUANT_CT_INT4;
		sc->g = g;
		sc->i8 = intq; /* W4A8: codes one per I8 byte */
	} else {
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: compressed-tensors group '%s': format '%s', num_bits %lld, "
		    "strategy '%s', group_size %lld, symmetric %s is not read; supported: "
		    "int-quantized 8 bits strategy channel (W8A8), pack-quantized 8 bits strategy "
		    "channel or group, pack-quantized 4 bits strategy group with a group_size "
		    "multiple of 8 up to %d (W4A16; these with symmetric true or false), "
		    "int-quantized 4 bits likewise, symmetric true only (W4A8)",
		    gname, fmt, (long long)bits, strategy, (long long)g,
		    sc->asym ? "false" : "true", WT_MAX_GROUP_SIZE);
	}
	if (sc->gidx && sc->g == 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: compressed-tensors group '%s': actorder \"group\" "
		                 "with strategy '%s'; activation order is read for strategy group "
		                 "only (compressed-tensors allows no other)",
		                 gname, strategy);
	return WT_OK;
}

int ckpt_ct_parse_quant(json_t *q, ckpt_config *c, wt_errbuf *err)
{
	const char *status = str_or(q, "quantization_status", "compressed");
	if (strcmp(status, "compressed") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: compressed-tensors quantization_status '%s'; only "
		                 "'compressed' checkpoints (quantized weights stored) are read",
		                 status);
	json_t *groups = json_object_get(q, "config_groups");
	if (!json_is_object(groups) || json_object_size(groups) == 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: compressed-tensors quantization_config.config_groups "
		    "missing or empty");
	const char *fmt_top = str_or(q, "format", NULL);
	const char *gname;
	json_t *grp;
	ct_scheme s0 = {0};
	const char *first = NULL;
	json_object_foreach(groups, gname, grp)
	{
		ct_scheme sc = {0};
		int rv = group_scheme(gname, grp, fmt_top, &sc, err);
		if (rv != WT_OK)
			return rv;
		if (first != NULL &&
		    (sc.kind != s0.kind || sc.g != s0.g || sc.block[0] != s0.block[0] ||
		     sc.block[1] != s0.block[1] || sc.i8 != s0.i8 || sc.pack8 != s0.pack8 ||
		     sc.asym != s0.asym || sc.gidx != s0.gidx))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: compressed-tensors groups '%s' and '%s' use "
			    "different weight schemes; mixed-precision checkpoints are not "
			    "read",
			    first, gname);
		first = gname;
		s0 = sc;
	}
	c->quant = s0.kind;
	c->quant_group = s0.g;
	if (s0.kind == CKPT_QUANT_FP8_BLOCK) {
		c->quant_block[0] = s0.block[0];
		c->quant_block[1] = s0.block[1];
		c->quant_block_ct = true;
	}
	c->quant_int4_i8 = s0.i8;
	c->quant_pack8 = s0.pack8;
	c->quant_asym = s0.asym;
	c->quant_gidx = s0.gidx;
	return WT_OK;
}
