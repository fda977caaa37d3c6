/*
 * quant_ct.c — compressed-tensors sources (docs/format.md section 4.5): names,
 * plan-time checks and pass-through pieces (dequantization: quant_ct_dq.c).
 *
 * | scheme      | tensors of module X (as compressed-tensors writes them)              |
 * |-------------|----------------------------------------------------------------------|
 * | int8        | X.weight I8 [N, K]; X.weight_scale F32/BF16/F16 [N, 1]; X.input_scale  |
 * | int8 packed | X.weight_packed I32 [N, K/4]; X.weight_scale [N, 1 or K/G]; weight_shape |
 * | int4        | X.weight_packed I32 [N, K/8]; X.weight_scale [N, K/G]; X.weight_shape  |
 *
 * (int-quantized W4A8: X.weight I8 [N, K] holding int4 codes, packed while producing.)
 * Companions read with the weight: X.weight_zero_point when symmetric false
 * (pack-quantized: I32 [ceil(N/(32/bits)), K/G or 1], packed along the rows by
 * pack_to_int32 with packed_dim 0; int-quantized int8: I8 [N, 1]) and
 * X.weight_g_idx I32 [K] with actorder "group". A symmetric scheme's
 * weight_zero_point (older writers stored zeros) is listed as skipped.
 * compressed-tensors' pack_to_int32 stores code + 2^(bits-1) in `bits` bits,
 * element k of each run of 32/bits at bits bits*(k%(32/bits)) of a
 * little-endian int32: for int4 the contract's int4-group packing, so words
 * pass through.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "shardmap/quant_ct.h"

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

bool shardmap_ct_packed(const ckpt_config *cfg)
{
	return (cfg->quant == CKPT_QUANT_CT_INT4 && !cfg->quant_int4_i8) ||
	       (cfg->quant == CKPT_QUANT_CT_INT8 && cfg->quant_pack8);
}

int64_t shardmap_ct_per_word(const ckpt_config *cfg)
{
	return cfg->quant == CKPT_QUANT_CT_INT4 ? 8 : 4;
}

int64_t shardmap_ct_cols(const ckpt_config *cfg, const ckpt_tensor *t)
{
	return t->dtype == WT_I32 ? t->shape[1] * shardmap_ct_per_word(cfg) : t->shape[1];
}

void shardmap_ct_describe(const ckpt_config *cfg, char *buf, size_t cap)
{
	char grp[48] = "per channel";
	if (cfg->quant_group > 0)
		snprintf(grp, sizeof(grp), "per group of %" PRId64, cfg->quant_group);
	snprintf(buf, cap, "%s %s%s%s%s", cfg->quant == CKPT_QUANT_CT_INT4 ? "int4" : "int8", grp,
	         cfg->quant_pack8 ? " (pack-quantized)" : "",
	         cfg->quant_asym ? " with zero points (symmetric false)" : "",
	         cfg->quant_gidx ? " with activation order (actorder group, weight_g_idx)" : "");
}

bool shardmap_ct_source(const ckpt_config *cfg)
{
	return cfg->quant == CKPT_QUANT_CT_INT8 || cfg->quant == CKPT_QUANT_CT_INT4;
}

bool shardmap_ct_weight(const ckpt_config *cfg, const ckpt_tensor *t)
{
	if (!shardmap_ct_source(cfg))
		return false;
	if (shardmap_ct_packed(cfg))
		return t->dtype == WT_I32 && ends_with(t->name, ".weight_packed");
	return t->dtype == WT_I8 && ends_with(t->name, ".weight");
}

const ckpt_tensor *shardmap_ct_find(const ckpt *c, const ckpt_config *cfg, const char *name)
{
	const ckpt_tensor *t = ckpt_find(c, name);
	if (t || !shardmap_ct_packed(cfg) || !ends_with(name, ".weight"))
		return t;
	char buf[SHARDMAP_CT_NAME_MAX];
	if ((size_t)snprintf(buf, sizeof(buf), "%s_packed", name) >= sizeof(buf))
		return NULL;
	return ckpt_find(c, buf);
}

const char *shardmap_ct_rule_name(const ckpt_config *cfg, const char *name, char *buf, size_t cap)
{
	if (!shardmap_ct_packed(cfg) || !ends_with(name, ".weight_packed"))
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
		t->shape[1] *= shardmap_ct_per_word(cfg);
}

/* The quantized weight of module `base` (name up to and including the '.'). */
static const ckpt_tensor *module_weight(const sm_ctx *x, const char *name, size_t base)
{
	char buf[SHARDMAP_CT_NAME_MAX];
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
	                                  ".weight_zero_point", ".weight_g_idx"};
	*used = false;
	for (size_t k = 0; k < sizeof(sfx) / sizeof(sfx[0]); k++) {
		if (!ends_with(name, sfx[k]))
			continue;
		size_t base = strlen(name) - strlen(sfx[k]) + 1;
		const ckpt_tensor *w = module_weight(x, name, base);
		if (w != NULL && shardmap_ct_weight(x->cfg, w)) {
			*used = true;
			if ((k == 3 && x->cfg->quant_asym) || (k == 4 && x->cfg->quant_gidx))
				return WT_OK; /* read with the weight (shardmap_ct_dequant) */
			if (k == 4)
				return wt_seterr(
				    err, WT_EUNSUPPORTED,
				    "tensor '%s': a g_idx (activation order) beside '%s', but "
				    "config.json's weights.actorder is not \"group\"; fix "
				    "quantization_config or the checkpoint",
				    name, w->name);
			return k >= 2 ? shardmap_plan_add_skipped(p, name, err) : WT_OK;
		}
		char plain[SHARDMAP_CT_NAME_MAX];
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
	char buf[SHARDMAP_CT_NAME_MAX];
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

const ckpt_tensor *shardmap_ct_aux(const ckpt *c, const char *wname, const char *leaf)
{
	char buf[SHARDMAP_CT_NAME_MAX];
	const char *cut = strrchr(wname, '.');
	if (cut == NULL || (size_t)snprintf(buf, sizeof(buf), "%.*s.%s", (int)(cut - wname), wname,
	                                    leaf) >= sizeof(buf))
		return NULL;
	return ckpt_find(c, buf);
}

static bool scale_dtype(wt_dtype d)
{
	return d == WT_F32 || d == WT_BF16 || d == WT_F16;
}

/* Zero points of weight t ([N, K], sc scale columns): pack-quantized I32 [ceil(N/pw), sc],
 * int-quantized int8 I8 [N, 1]. */
static int check_zero_points(const sm_ctx *x, const ckpt_tensor *t, int64_t sc, wt_errbuf *err)
{
	const ckpt_tensor *z = shardmap_ct_aux(x->c, t->name, "weight_zero_point");
	bool packed = shardmap_ct_packed(x->cfg);
	int64_t N = t->shape[0], pw = shardmap_ct_per_word(x->cfg);
	int64_t rows = packed ? (N + pw - 1) / pw : N;
	wt_dtype dt = packed ? WT_I32 : WT_I8;
	if (z == NULL)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "tensor '%s': asymmetric compressed-tensors weight (symmetric "
		                 "false) without its weight_zero_point",
		                 t->name);
	if (z->dtype == dt && z->ndim == 2 && z->shape[0] == rows && z->shape[1] == sc)
		return WT_OK;
	char how[48] = "";
	if (packed)
		snprintf(how, sizeof(how), " (packed %" PRId64 " rows per word)", pw);
	return wt_seterr(err, WT_ESHAPE,
	                 "tensor '%s': zero points must be %s [%" PRId64 ", %" PRId64
	                 "]%s for weight '%s' of %" PRId64 " x %" PRId64
	                 " values; it is %s with %d dimensions",
	                 z->name, wt_dtype_name(dt), rows, sc, how, t->name, N, t->shape[1],
	                 wt_dtype_name(z->dtype), z->ndim);
}

/* The activation-order groups of weight t: I32 [K] (values are checked when read). */
static int check_g_idx(const sm_ctx *x, const ckpt_tensor *t, wt_errbuf *err)
{
	const ckpt_tensor *gi = shardmap_ct_aux(x->c, t->name, "weight_g_idx");
	int64_t K = t->shape[1];
	if (gi == NULL)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "tensor '%s': compressed-tensors weight with actorder \"group\" "
		                 "without its weight_g_idx",
		                 t->name);
	if (gi->dtype == WT_I32 && gi->ndim == 1 && gi->shape[0] == K)
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "tensor '%s': g_idx must be I32 [%" PRId64
	                 "] (the group of each input column of weight '%s'); it is %s with %d "
	                 "dimensions, %" PRId64 " values; fix the checkpoint",
	                 gi->name, K, t->name, wt_dtype_name(gi->dtype), gi->ndim,
	                 (int64_t)(gi->nbytes / wt_dtype_size(gi->dtype)));
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
	int64_t N = t->shape[0], K = t->shape[1], sc = G > 0 ? K / G : 1;
	if (G > 0 && K % G != 0)
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
	int rv = x->cfg->quant_asym ? check_zero_points(x, t, sc, err) : WT_OK;
	if (rv == WT_OK && x->cfg->quant_gidx)
		rv = check_g_idx(x, t, err);
	if (rv != WT_OK)
		return rv;
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

bool shardmap_ct_keepable(const ckpt_config *cfg)
{
	return shardmap_ct_source(cfg) && !cfg->quant_asym && !cfg->quant_gidx &&
	       (cfg->quant == CKPT_QUANT_CT_INT4 || cfg->quant_group == 0);
}

bool shardmap_ct_pass(const ckpt_config *cfg, const wt_layout *l)
{
	if (!shardmap_ct_keepable(cfg))
		return false;
	if (cfg->quant == CKPT_QUANT_CT_INT8)
		return l->quant == WT_QUANT_INT8_CHANNEL;
	return l->quant == WT_QUANT_INT4_GROUP && (int64_t)l->group_size == cfg->quant_group;
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
