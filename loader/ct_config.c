/*
 * ct_config.c — quantization_config of compressed-tensors checkpoints
 * (quant_method "compressed-tensors", as llm-compressor writes them), read
 * into ckpt_config (docs/format.md section 4.5). Read:
 *
 * | format         | weights                                   | kind             |
 * |----------------|-------------------------------------------|------------------|
 * | int-quantized  | int, 8 bits, strategy channel, symmetric  | CKPT_QUANT_CT_INT8 |
 * | pack-quantized | int, 4 bits, strategy group (G % 8 == 0), symmetric | CKPT_QUANT_CT_INT4 |
 * | int-quantized  | the same 4-bit weights, one code per I8 byte (W4A8) | CKPT_QUANT_CT_INT4 +
 * quant_int4_i8 |
 * | pack-quantized | int, 4 bits, strategy group, symmetric false (zero points) |
 * CKPT_QUANT_CT_INT4
 * + quant_asym |
 *
 * Every other combination (int4-quantized: two signed nibbles per I8) is WT_EUNSUPPORTED
 * naming the field and its value.
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

/* The weights args and format of group `gname`: the scheme kind and group size. */
static int group_scheme(const char *gname, json_t *grp, const char *fmt_top, ckpt_quant_kind *kind,
                        int64_t *gsize, bool *i8, bool *asym, wt_errbuf *err)
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
	int64_t bits = int_or(w, "num_bits", 8);
	json_t *ao = json_object_get(w, "actorder");
	if (fmt == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: compressed-tensors quantization_config has no "
		                 "'format' (int-quantized or pack-quantized)");
	/* zero points are read for pack-quantized int4 per group only (AWQ-style W4A16) */
	*asym = json_is_false(json_object_get(w, "symmetric")) &&
	        strcmp(fmt, "pack-quantized") == 0 && bits == 4 && strcmp(strategy, "group") == 0;
	if (strcmp(type, "int") != 0 || !(true_(w, "symmetric") || *asym) || true_(w, "dynamic") ||
	    (ao != NULL && !json_is_null(ao) && !json_is_false(ao)))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: compressed-tensors group '%s': weights type '%s', "
		                 "symmetric %s, dynamic %s, actorder %s; only static int weights "
		                 "without actorder are read, symmetric (asymmetric: pack-quantized "
		                 "4 bits per group only)",
		                 gname, type, true_(w, "symmetric") ? "true" : "false",
		                 true_(w, "dynamic") ? "true" : "false",
		                 (ao == NULL || json_is_null(ao) || json_is_false(ao)) ? "none"
		                                                                       : "set");
	if (strcmp(fmt, "int-quantized") == 0 && bits == 8 && strcmp(strategy, "channel") == 0) {
		*kind = CKPT_QUANT_CT_INT8;
		*gsize = 0;
		return WT_OK;
	}
	int64_t g = int_or(w, "group_size", -1);
	*i8 = strcmp(fmt, "int-quantized") == 0; /* W4A8: codes one per I8 byte */
	if ((*i8 || strcmp(fmt, "pack-quantized") == 0) && bits == 4 &&
	    strcmp(strategy, "group") == 0 && g > 0 && g % 8 == 0 && g <= WT_MAX_GROUP_SIZE) {
		*kind = CKPT_QUANT_CT_INT4;
		*gsize = g;
		return WT_OK;
	}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: compressed-tensors group '%s': format '%s', num_bits %lld, "
	                 "strategy '%s', group_size %lld is not read; supported: int-quantized 8 "
	                 "bits strategy channel (W8A8), pack-quantized or int-quantized 4 bits "
	                 "strategy group with a group_size multiple of 8 up to %d (W4A16/W4A8)",
	                 gname, fmt, (long long)bits, strategy, (long long)g, WT_MAX_GROUP_SIZE);
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
	ckpt_quant_kind kind0 = CKPT_QUANT_NONE;
	int64_t g0 = 0;
	bool i80 = false, asym0 = false;
	const char *first = NULL;
	json_object_foreach(groups, gname, grp)
	{
		ckpt_quant_kind kind = CKPT_QUANT_NONE;
		int64_t g = 0;
		bool i8 = false, asym = false;
		int rv = group_scheme(gname, grp, fmt_top, &kind, &g, &i8, &asym, err);
		if (rv != WT_OK)
			return rv;
		if (first != NULL && (kind != kind0 || g != g0 || i8 != i80 || asym != asym0))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: compressed-tensors groups '%s' and '%s' use "
			    "different weight schemes; mixed-precision checkpoints are not "
			    "read",
			    first, gname);
		first = gname;
		kind0 = kind;
		g0 = g;
		i80 = i8;
		asym0 = asym;
	}
	c->quant = kind0;
	c->quant_group = g0;
	c->quant_int4_i8 = kind0 == CKPT_QUANT_CT_INT4 && i80;
	c->quant_asym = kind0 == CKPT_QUANT_CT_INT4 && asym0;
	return WT_OK;
}
