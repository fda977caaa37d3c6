/*
 * quant_ct.c — compressed-tensors sources (docs/format.md section 4.5).
 *
 * | scheme | tensors of module X (as compressed-tensors writes them)                  |
 * |--------|---------------------------------------------------------------------------|
 * | int8   | X.weight I8 [N, K]; X.weight_scale F32/BF16/F16 [N, 1]; X.input_scale [1]   |
 * | int4   | X.weight_packed I32 [N, K/8]; X.weight_scale [N, K/G]; X.weight_shape I64 [2] |
 *
 * (int-quantized W4A8: X.weight I8 [N, K] holding int4 codes, packed while producing.)
 * Codes are symmetric (no zero point: a weight_zero_point tensor is listed as
 * skipped), w = f32(code) * f32(scale), except pack-quantized int4 with
 * symmetric false: X.weight_zero_point I32 [ceil(N/8), K/G] holds zero points
 * -8..7 packed along the rows (pack_to_int32 with packed_dim 0: row r of
 * group g at bits 4*(r%8) of word [r/8, g], as zp + 8), and
 * w = (f32(code) - f32(zp)) * f32(scale); such codes never pass through (no
 * output layout keeps zero points). compressed-tensors' pack_to_int32 stores
 * code + 8 in 4 bits, element k of each run of 8 at bits 4*(k%8) of a
 * little-endian int32: the contract's int4-group packing, so words pass through.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "shardmap/quant_ct.h"

#define CT_NAME_MAX 512

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

bool shardmap_ct_packed(const ckpt_config *cfg)
{
	return cfg->quant == CKPT_QUANT_CT_INT4 && !cfg->quant_int4_i8;
}

bool shardmap_ct_source(const ckpt_config *cfg)
{
	return cfg->quant == CKPT_QUANT_CT_INT8 || cfg->quant == CKPT_QUANT_CT_INT4;
}

bool shardmap_ct_weight(const ckpt_config *cfg, const ckpt_tensor *t)
{
	if (cfg->quant == CKPT_QUANT_CT_INT8)
		return t->dtype == WT_I8 && ends_with(t->name, ".weight");
	if (cfg->quant == CKPT_QUANT_CT_INT4 && cfg->quant_int4_i8)
		return t->dtype == WT_I8 && ends_with(t->name, ".weight");
	if (cfg->quant == CKPT_QUANT_CT_INT4)
		return t->dtype == WT_I32 && ends_with(t->name, ".weight_packed");
	return false;
}

const ckpt_tensor *shardmap_ct_find(const ckpt *c, const ckpt_config *cfg, const char *name)
{
	const ckpt_tensor *t = ckpt_find(c, name);
	if (t || cfg->quant != CKPT_QUANT_CT_INT4 || !ends_with(name, ".weight"))
		return t;
	char buf[CT_NAME_MAX];
	if ((size_t)snprintf(buf, sizeof(buf), "%s_packed", name) >= sizeof(buf))
		return NULL;
	return ckpt_find(c, buf);
}

const char *shardmap_ct_rule_name(const ckpt_config *cfg, const char *name, char *buf, size_t cap)
{
	if (cfg->quant != CKPT_QUANT_CT_INT4 || !ends_with(name, ".weight_packed"))
		return name;
	size_t n = strlen(name) - strlen("_packed");
	if (n + 1 > cap)
		return NULL;
	memcpy(buf, name, n);
	buf[n] = '\0';
	return buf;
}

void shardmap_ct_view(const ckpt_config *cfg, ckpt_tensor *t)
{
	if (shardmap_ct_weight(cfg, t) && t->dtype == WT_I32 && t->ndim == 2)
		t->shape[1] *= 8;
}

/* The quantized weight of module `base` (name up to and including the '.'). */
static const ckpt_tensor *module_weight(const sm_ctx *x, const char *name, size_t base)
{
	char buf[CT_NAME_MAX];
	const char *leaf = shardmap_ct_packed(x->cfg) ? "weight_packed" : "weight";
	if (base + strlen(leaf) + 1 > sizeof(buf))
		return NULL;
	memcpy(buf, name, base);
	memcpy(buf + base, leaf, strlen(leaf) + 1);
	return ckpt_find(x->c, buf);
}

int shardmap_ct_companion(const sm_ctx *x, sm_plan *p, const char *name, bool *used, wt_errbuf *err)
{
	static const char *const sfx[] = {".weight_scale", ".input_scale", ".weight_shape",
	                                  ".weight_zero_point"};
	*used = false;
	for (size_t k = 0; k < sizeof(sfx) / sizeof(sfx[0]); k++) {
		if (!ends_with(name, sfx[k]))
			continue;
		size_t base = strlen(name) - strlen(sfx[k]) + 1;
		const ckpt_tensor *w = module_weight(x, name, base);
		if (w != NULL && shardmap_ct_weight(x->cfg, w)) {
			*used = true;
			if (k == 3 && x->cfg->quant_asym)
				return WT_OK; /* zero points: read with the weight
				                 (shardmap_ct_dequant) */
			return k >= 2 ? shardmap_plan_add_skipped(p, name, err) : WT_OK;
		}
		char plain[CT_NAME_MAX];
		snprintf(plain, sizeof(plain), "%.*sweight", (int)base, name);
		const ckpt_tensor *f = ckpt_find(x->c, plain);
		if (f != NULL && k != 1)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': a quantization tensor beside '%s', which is %s, "
			    "not the %s the compressed-tensors scheme in config.json "
			    "stores; fix the checkpoint or quantization_config",
			    name, plain, wt_dtype_name(f->dtype),
			    shardmap_ct_packed(x->cfg) ? "I32 weight_packed" : "I8 weight");
		return WT_OK; /* no weight of that module: the family rules decide */
	}
	return WT_OK;
}

static uint32_t find_ix(const sm_ctx *x, const char *name, size_t base, const char *leaf)
{
	char buf[CT_NAME_MAX];
	if (base + strlen(leaf) + 1 > sizeof(buf))
		return SM_NONE;
	memcpy(buf, name, base);
	memcpy(buf + base, leaf, strlen(leaf) + 1);
	const ckpt_tensor *s = ckpt_find(x->c, buf);
	return s ? (uint32_t)ckpt_tensor_index(x->c, s) : SM_NONE;
}

bool shardmap_ct_attach(const sm_ctx *x, sm_entry *e)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, e->t);
	if (!shardmap_ct_weight(x->cfg, t))
		return false;
	size_t base =
	    strlen(t->name) - strlen(shardmap_ct_packed(x->cfg) ? "weight_packed" : "weight");
	e->wscale = find_ix(x, t->name, base, "weight_scale");
	e->iscale = find_ix(x, t->name, base, "input_scale");
	return true;
}

/* X.weight_zero_point of weight `wname` ("X.weight" or "X.weight_packed"), or NULL. */
static const ckpt_tensor *zero_points(const ckpt *c, const char *wname)
{
	char buf[CT_NAME_MAX];
	const char *cut = strrchr(wname, '.');
	if (cut == NULL || (size_t)snprintf(buf, sizeof(buf), "%.*s.weight_zero_point",
	                                    (int)(cut - wname), wname) >= sizeof(buf))
		return NULL;
	return ckpt_find(c, buf);
}

static bool scale_dtype(wt_dtype d)
{
	return d == WT_F32 || d == WT_BF16 || d == WT_F16;
}

int shardmap_ct_check(const sm_ctx *x, const sm_entry *e, wt_errbuf *err)
{
	const ckpt_tensor *t = &e->view;
	bool i4 = x->cfg->quant == CKPT_QUANT_CT_INT4;
	int64_t G = x->cfg->quant_group;
	if (t->ndim != 2)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': a compressed-tensors weight must be 2-D", t->name);
	if (e->wscale == SM_NONE)
		return wt_seterr(
		    err, WT_ENOTFOUND,
		    "tensor '%s': compressed-tensors %s weight without its weight_scale", t->name,
		    i4 ? "int4" : "int8");
	const ckpt_tensor *s = ckpt_tensor_at(x->c, e->wscale);
	int64_t N = t->shape[0], K = t->shape[1], sc = i4 ? K / G : 1;
	if (i4 && K % G != 0)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': in_features %" PRId64
		                 " is not a multiple of the checkpoint's group_size %" PRId64
		                 " (partial groups are not read)",
		                 t->name, K, G);
	if (!scale_dtype(s->dtype))
		return wt_seterr(err, WT_EDTYPE,
		                 "tensor '%s': scale dtype %s, expected F32, BF16 or F16", s->name,
		                 wt_dtype_name(s->dtype));
	if (s->ndim != 2 || s->shape[0] != N || s->shape[1] != sc)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': weight scales must be [%" PRId64 ", %" PRId64
		                 "] for weight '%s' of %" PRId64 " x %" PRId64 " values",
		                 s->name, N, sc, t->name, N, K);
	if (x->cfg->quant_asym) {
		const ckpt_tensor *z = zero_points(x->c, t->name);
		if (z == NULL)
			return wt_seterr(err, WT_ENOTFOUND,
			                 "tensor '%s': asymmetric compressed-tensors int4 weight "
			                 "(symmetric false) without its weight_zero_point",
			                 t->name);
		if (z->dtype != WT_I32 || z->ndim != 2 || z->shape[0] != (N + 7) / 8 ||
		    z->shape[1] != sc)
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': zero points must be I32 [%" PRId64
			                 ", %" PRId64
			                 "] (packed 8 rows per word) for weight '%s' of %" PRId64
			                 " x %" PRId64 " values; it is %s with %d dimensions",
			                 z->name, (N + 7) / 8, sc, t->name, N, K,
			                 wt_dtype_name(z->dtype), z->ndim);
	}
	if (e->iscale != SM_NONE) {
		const ckpt_tensor *is = ckpt_tensor_at(x->c, e->iscale);
		if (!scale_dtype(is->dtype) || is->nbytes != wt_dtype_size(is->dtype))
			return wt_seterr(
			    err, WT_ESHAPE,
			    "tensor '%s': input_scale must be one F32, BF16 or F16 value",
			    is->name);
	}
	return WT_OK;
}

bool shardmap_ct_pass(const ckpt_config *cfg, const wt_layout *l)
{
	if (cfg->quant == CKPT_QUANT_CT_INT8)
		return l->quant == WT_QUANT_INT8_CHANNEL;
	if (cfg->quant == CKPT_QUANT_CT_INT4)
		return l->quant == WT_QUANT_INT4_GROUP && !cfg->quant_asym &&
		       (int64_t)l->group_size == cfg->quant_group;
	return false;
}

bool shardmap_ct_group_aligned(const ckpt_config *cfg, const sm_pvec *pv, const sm_piece **bad)
{
	int64_t G = cfg->quant_group;
	if (cfg->quant != CKPT_QUANT_CT_INT4)
		return true;
	for (size_t k = 0; k < pv->n; k++) {
		const sm_piece *pc = &pv->v[k];
		if (pc->cols && (pc->start % G != 0 || pc->len % G != 0)) {
			*bad = pc;
			return false;
		}
	}
	return true;
}

int shardmap_ct_pieces(const sm_ctx *x, size_t n, const sm_pvec *pv, int64_t cols, sm_pvec *wp,
                       sm_pvec *sp, int64_t *wcols, int64_t *scols, const char *rt, wt_errbuf *err)
{
	bool i4 = x->cfg->quant == CKPT_QUANT_CT_INT4;
	int64_t G = i4 ? x->cfg->quant_group : 1;
	int rv = WT_OK;
	for (size_t k = 0; k < pv->n && rv == WT_OK; k++) {
		const sm_piece *pc = &pv->v[k];
		sm_piece w = *pc, s = *pc;
		s.src = (uint32_t)(n + pc->src);
		if (pc->cols && i4) {
			w.start = pc->start / 8;
			w.len = pc->len / 8;
			s.start = pc->start / G;
			s.len = pc->len / G;
		} else if (pc->cols) {
			/* row parallel, int8: the whole per-row scales of every row */
			s = shardmap_rows_piece(s.src, 0, pc->out_rows, pc->unit);
		}
		rv = shardmap_pvec_push(wp, w, rt, err);
		if (rv == WT_OK)
			rv = shardmap_pvec_push(sp, s, rt, err);
	}
	*wcols = i4 ? cols / 8 : cols;
	*scols = i4 ? cols / G : 1;
	return rv;
}

float shardmap_ct_scalar(const void *p, wt_dtype dt)
{
	uint16_t h;
	float v;
	switch (dt) {
	case WT_BF16:
		memcpy(&h, p, 2);
		return kern_bf16_to_f32(h);
	case WT_F16:
		memcpy(&h, p, 2);
		return kern_f16_to_f32(h);
	default:
		memcpy(&v, p, 4);
		return v;
	}
}

/* Asymmetric int4 (pack-quantized, symmetric false): dst[r, k] =
 * (f32(code) - f32(zp[r, k/G])) * scale[r, k/G], the zero points read whole
 * from X.weight_zero_point (checked at plan time: I32 [ceil(N/8), K/G]). */
static int dequant_asym(const ckpt *c, const ckpt_tensor *t, const void *raw, const float *scale,
                        int64_t N, int64_t K, int64_t G, float *dst, wt_errbuf *err)
{
	const ckpt_tensor *z = zero_points(c, t->name);
	int64_t ng = K / G;
	if (z == NULL || z->dtype != WT_I32 || (int64_t)z->nbytes != (N + 7) / 8 * ng * 4)
		return wt_seterr(err, WT_ECORRUPT,
		                 "tensor '%s': its weight_zero_point is missing or not I32 "
		                 "[%" PRId64 ", %" PRId64 "]",
		                 t->name, (N + 7) / 8, ng);
	uint32_t *zw = malloc(z->nbytes ? z->nbytes : 1);
	if (zw == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", z->name);
	int rv = ckpt_read(c, z, 0, zw, z->nbytes, err);
	const uint32_t *w = raw;
	for (int64_t r = 0; rv == WT_OK && r < N; r++)
		for (int64_t g = 0; g < ng; g++) {
			uint32_t zword = zw[(r / 8) * ng + g];
			float zp = (float)((int)((zword >> (4 * (r % 8))) & 15u) - 8);
			float s = scale[r * ng + g];
			for (int64_t k = g * G; k < (g + 1) * G; k++) {
				int64_t e = r * K + k;
				float q = (float)((int)((w[e / 8] >> (4 * (e % 8))) & 15u) - 8);
				dst[e] = (q - zp) * s;
			}
		}
	free(zw);
	return rv;
}

int shardmap_ct_dequant(const ckpt *c, const ckpt_tensor *t, const ckpt_tensor *st, const void *raw,
                        float *dst, wt_errbuf *err)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	bool i4 = cfg->quant == CKPT_QUANT_CT_INT4;
	int64_t N = t->shape[0], K = t->dtype == WT_I32 ? t->shape[1] * 8 : t->shape[1];
	size_t ns = (size_t)(st->nbytes / wt_dtype_size(st->dtype));
	uint32_t *packed = NULL; /* int-quantized int4: its I8 codes packed for the kernel */
	if (i4 && t->dtype == WT_I8) {
		if ((packed = malloc((size_t)(N * K / 8) * 4 + 1)) == NULL)
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
		int64_t bad = shardmap_ct_pack(raw, N * K, packed);
		if (bad >= 0) {
			int rv =
			    shardmap_ct_bad_code(t->name, bad, ((const int8_t *)raw)[bad], err);
			free(packed);
			return rv;
		}
		raw = packed;
	}
	void *sraw = malloc(st->nbytes ? st->nbytes : 1);
	float *scale = malloc(ns * sizeof(float) + 1);
	int rv = (!sraw || !scale)
	             ? wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory for %zu scales",
	                         st->name, ns)
	             : ckpt_read(c, st, 0, sraw, st->nbytes, err);
	if (rv == WT_OK && (rv = kern_convert(scale, WT_F32, sraw, st->dtype, ns)) != WT_OK)
		rv = wt_seterr(err, rv, "tensor '%s': converting scales to F32 failed", st->name);
	if (rv == WT_OK && i4 && cfg->quant_asym) {
		rv = dequant_asym(c, t, raw, scale, N, K, cfg->quant_group, dst, err);
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
	char sname[CT_NAME_MAX];
	if (wn == NULL || (size_t)snprintf(sname, sizeof(sname), "%s_scale", wn) >= sizeof(sname))
		return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
	if (wn != name)
		snprintf(name, cap, "%s", wn);
	const ckpt_tensor *st = ckpt_find(c, sname);
	if (st == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "tensor '%s': '%s' is missing", t->name, sname);
	shape[0] = t->shape[0];
	shape[1] = t->dtype == WT_I32 ? t->shape[1] * 8 : t->shape[1];
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
