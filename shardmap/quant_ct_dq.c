/*
 * quant_ct_dq.c — dequantizing compressed-tensors weights (docs/format.md
 * section 4.5) to F32, as compressed-tensors' dequantize does:
 *
 *   w[n, k] = (f32(code[n, k]) - f32(zp[n, g])) * f32(scale[n, g])
 *
 * | storage                     | code[n, k]                                        |
 * |-----------------------------|---------------------------------------------------|
 * | I8 X.weight                 | the byte (int4 W4A8: must be -8..7)               |
 * | I32 X.weight_packed, b bits | bits b*(k%(32/b)) of word [n, k/(32/b)], - 2^(b-1) |
 *
 * g = k / G (strategy group), 0 (channel), or g_idx[k] (actorder group);
 * zp = 0 unless symmetric false: pack-quantized zero points are packed along
 * the rows (row n of column g at bits b * (n % (32/b)) of word [n / (32/b), g],
 * stored + 2^(b-1)); int-quantized int8 ones are I8 [N, 1].
 * Symmetric schemes without g_idx whose layout the kernels know (int8 per
 * channel, int4 per group) go through kern_dequantize; the rest through the
 * plain loop below.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "shardmap/quant_ct.h"

/* Companion `leaf` of weight t read whole into *out (malloc'd; the caller frees), which
 * must be of dtype dt and nbytes bytes (checked at plan time; checked again here, since
 * production may run on another checkpoint object). */
static int read_aux(const ckpt *c, const ckpt_tensor *t, const char *leaf, wt_dtype dt,
                    uint64_t nbytes, void **out, wt_errbuf *err)
{
	const ckpt_tensor *a = shardmap_ct_aux(c, t->name, leaf);
	*out = NULL;
	if (a == NULL || a->dtype != dt || a->nbytes != nbytes)
		return wt_seterr(err, WT_ECORRUPT,
		                 "tensor '%s': its %s is missing or not %s of %" PRIu64 " bytes",
		                 t->name, leaf, wt_dtype_name(dt), nbytes);
	void *p = malloc(nbytes ? nbytes : 1);
	if (p == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", a->name);
	int rv = ckpt_read(c, a, 0, p, nbytes, err);
	if (rv != WT_OK) {
		free(p);
		return rv;
	}
	*out = p;
	return WT_OK;
}

/* g_idx of weight t ([N, K], groups of G, ng of them) read and validated: every value in
 * [0, ng) and every group holding exactly G columns. **Reading:** compressed-tensors
 * dequantizes with g_idx by sorting the columns by group and cutting runs of G, which is
 * scale[:, g_idx[k]] only when every group has G columns (GPTQ writes them so). */
static int read_g_idx(const ckpt *c, const ckpt_tensor *t, int64_t K, int64_t G, int32_t **out,
                      wt_errbuf *err)
{
	int64_t ng = K / G;
	void *p = NULL;
	int rv = read_aux(c, t, "weight_g_idx", WT_I32, (uint64_t)K * 4, &p, err);
	int64_t *cnt = rv == WT_OK ? calloc((size_t)ng + 1, sizeof(int64_t)) : NULL;
	if (rv == WT_OK && cnt == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	const int32_t *gi = p;
	for (int64_t k = 0; rv == WT_OK && k < K; k++) {
		if (gi[k] < 0 || gi[k] >= ng)
			rv = wt_seterr(err, WT_ECORRUPT,
			               "tensor '%s': weight_g_idx[%" PRId64 "] = %" PRId32
			               " is outside [0, %" PRId64 ") (in_features %" PRId64
			               " / group_size %" PRId64 "); fix the checkpoint",
			               t->name, k, gi[k], ng, K, G);
		else
			cnt[gi[k]]++;
	}
	for (int64_t g = 0; rv == WT_OK && g < ng; g++)
		if (cnt[g] != G)
			rv = wt_seterr(err, WT_ECORRUPT,
			               "tensor '%s': weight_g_idx puts %" PRId64
			               " columns in group %" PRId64 ", not group_size %" PRId64
			               " (activation order permutes whole groups); fix the "
			               "checkpoint",
			               t->name, cnt[g], g, G);
	free(cnt);
	if (rv != WT_OK) {
		free(p);
		return rv;
	}
	*out = p;
	return WT_OK;
}

/* Code e (row-major) of stored weight raw: packed words of `bits`-bit codes, or I8. */
static inline int code_at(const void *raw, bool packed, int bits, int64_t e)
{
	if (!packed)
		return ((const int8_t *)raw)[e];
	int64_t pw = 32 / bits;
	uint32_t w = ((const uint32_t *)raw)[e / pw];
	return (int)((w >> (bits * (e % pw))) & ((1u << bits) - 1)) - (1 << (bits - 1));
}

/* Zero point of row r, scale column g (sc of them). */
static inline int zp_at(const void *zp, bool packed, int bits, int64_t r, int64_t g, int64_t sc)
{
	if (!packed)
		return ((const int8_t *)zp)[r * sc + g];
	int64_t pw = 32 / bits;
	uint32_t w = ((const uint32_t *)zp)[(r / pw) * sc + g];
	return (int)((w >> (bits * (r % pw))) & ((1u << bits) - 1)) - (1 << (bits - 1));
}

/* The plain loop of the table above: zero points and g_idx read whole from the
 * checkpoint. */
static int dequant_general(const ckpt *c, const ckpt_tensor *t, const void *raw, const float *scale,
                           int64_t N, int64_t K, float *dst, wt_errbuf *err)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	bool packed = t->dtype == WT_I32, i4 = cfg->quant == CKPT_QUANT_CT_INT4;
	int bits = i4 ? 4 : 8;
	int64_t G = cfg->quant_group, sc = G > 0 ? K / G : 1, pw = 32 / bits;
	void *zp = NULL;
	int32_t *gidx = NULL;
	int rv = WT_OK;
	if (cfg->quant_asym)
		rv = packed
		         ? read_aux(c, t, "weight_zero_point", WT_I32,
		                    (uint64_t)((N + pw - 1) / pw * sc) * 4, &zp, err)
		         : read_aux(c, t, "weight_zero_point", WT_I8, (uint64_t)(N * sc), &zp, err);
	if (rv == WT_OK && cfg->quant_gidx)
		rv = read_g_idx(c, t, K, G, &gidx, err);
	for (int64_t r = 0; rv == WT_OK && r < N; r++)
		for (int64_t k = 0; k < K; k++) {
			int64_t e = r * K + k, g = gidx ? gidx[k] : (G > 0 ? k / G : 0);
			int q = code_at(raw, packed, bits, e);
			if (i4 && !packed && (q < -8 || q > 7)) {
				rv = shardmap_ct_bad_code(t->name, e, q, err);
				break;
			}
			int z = zp ? zp_at(zp, packed, bits, r, g, sc) : 0;
			dst[e] = (float)(q - z) * scale[r * sc + g];
		}
	free(zp);
	free(gidx);
	return rv;
}

/* int4 codes one per I8 byte (W4A8) packed for the kernel into *out (malloc'd). */
static int pack_i8(const ckpt_tensor *t, const void *raw, int64_t n, uint32_t **out, wt_errbuf *err)
{
	if ((*out = malloc((size_t)(n / 8) * 4 + 1)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	int64_t bad = shardmap_ct_pack(raw, n, *out);
	if (bad < 0)
		return WT_OK;
	return shardmap_ct_bad_code(t->name, bad, ((const int8_t *)raw)[bad], err);
}

int shardmap_ct_dequant(const ckpt *c, const ckpt_tensor *t, const ckpt_tensor *st, const void *raw,
                        float *dst, wt_errbuf *err)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	bool i4 = cfg->quant == CKPT_QUANT_CT_INT4;
	int64_t N = t->shape[0], K = shardmap_ct_cols(cfg, t);
	size_t ns = (size_t)(st->nbytes / wt_dtype_size(st->dtype));
	/* what kern_dequantize reads: int8 per channel, int4 per group packed as 4.3 */
	bool kern = shardmap_ct_keepable(cfg) && (i4 || t->dtype == WT_I8);
	uint32_t *packed = NULL; /* int-quantized int4: its I8 codes packed for the kernel */
	void *sraw = malloc(st->nbytes ? st->nbytes : 1);
	float *scale = malloc(ns * sizeof(float) + 1);
	int rv = (!sraw || !scale)
	             ? wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory for %zu scales",
	                         st->name, ns)
	             : ckpt_read(c, st, 0, sraw, st->nbytes, err);
	if (rv == WT_OK && (rv = kern_convert(scale, WT_F32, sraw, st->dtype, ns)) != WT_OK)
		rv = wt_seterr(err, rv, "tensor '%s': converting scales to F32 failed", st->name);
	if (rv == WT_OK && kern && i4 && t->dtype == WT_I8 &&
	    (rv = pack_i8(t, raw, N * K, &packed, err)) == WT_OK)
		raw = packed;
	if (rv == WT_OK && !kern) {
		rv = dequant_general(c, t, raw, scale, N, K, dst, err);
	} else if (rv == WT_OK) {
		rv = kern_dequantize(i4 ? WT_QUANT_INT4_GROUP : WT_QUANT_INT8_CHANNEL, raw, scale,
		                     N, K, i4 ? cfg->quant_group : 0, dst, WT_F32);
		if (rv != WT_OK)
			rv = wt_seterr(err, rv, "tensor '%s': dequantizing failed", t->name);
	}
	free(sraw);
	free(scale);
	free(packed);
	return rv;
}

void shardmap_ct_unpack8(const uint32_t *words, int64_t n, int8_t *codes)
{
	for (int64_t e = 0; e < n; e++)
		codes[e] = (int8_t)((int)((words[e / 4] >> (8 * (e % 4))) & 255u) - 128);
}

int64_t shardmap_ct_pack(const int8_t *codes, int64_t n, uint32_t *words)
{
	for (int64_t w = 0; w < n / 8; w++) {
		uint32_t v = 0;
		for (int k = 0; k < 8; k++) {
			int c = codes[w * 8 + k];
			if (c < -8 || c > 7)
				return w * 8 + k; /* it would wrap to another code */
			v |= (uint32_t)(c + 8) << (4 * k);
		}
		words[w] = v;
	}
	return -1;
}

int shardmap_ct_bad_code(const char *name, int64_t bad, int code, wt_errbuf *err)
{
	return wt_seterr(err, WT_ECORRUPT,
	                 "tensor '%s': int4 code %d at element %" PRId64
	                 " is outside -8..7 (an int-quantized 4-bit checkpoint keeps one code "
	                 "per I8 byte); fix the checkpoint",
	                 name, code, bad);
}

int shardmap_ct_weight_f32(const ckpt *c, size_t i, char *name, size_t cap, float **out,
                           int64_t shape[2], wt_errbuf *err)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	const ckpt_tensor *t = ckpt_tensor_at(c, i);
	*out = NULL;
	if (!shardmap_ct_weight(cfg, t) || t->ndim != 2)
		return WT_OK;
	const char *wn = shardmap_ct_rule_name(cfg, t->name, name, cap);
	char sname[SHARDMAP_CT_NAME_MAX];
	if (wn == NULL || (size_t)snprintf(sname, sizeof(sname), "%s_scale", wn) >= sizeof(sname))
		return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
	if (wn != name)
		snprintf(name, cap, "%s", wn);
	const ckpt_tensor *st = ckpt_find(c, sname);
	if (st == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "tensor '%s': '%s' is missing", t->name, sname);
	shape[0] = t->shape[0];
	shape[1] = shardmap_ct_cols(cfg, t);
	void *raw = malloc(t->nbytes ? t->nbytes : 1);
	float *f = malloc((size_t)shape[0] * (size_t)shape[1] * sizeof(float) + 1);
	int rv = (!raw || !f) ? wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name)
	                      : ckpt_read(c, t, 0, raw, t->nbytes, err);
	if (rv == WT_OK)
		rv = shardmap_ct_dequant(c, t, st, raw, f, err);
	free(raw);
	if (rv != WT_OK) {
		free(f);
		return rv;
	}
	*out = f;
	return WT_OK;
}
