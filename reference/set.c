/*
 * reference_set.c — named tensor sets for the reference forward pass, and
 * their float32 view: plain floats are converted with kern_convert; quantized
 * rank weights (docs/format.md section 4) are dequantized with kern_dequantize and
 * their `_scale` tensor; FP8 checkpoint weights with kern_dequant_fp8_block
 * and `weight_scale_inv` (blocks), `weight_scale` (per tensor), or per output
 * channel (fbgemm_fp8).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "kernels/kernels.h"

void ref_set_like(ref_set *out, const ref_set *in)
{
	out->quant = in->quant;
	out->group = in->group;
	out->block[0] = in->block[0];
	out->block[1] = in->block[1];
	out->fp8_rows = in->fp8_rows;
	out->fp8_blocks_ct = in->fp8_blocks_ct;
}

int ref_rename_each(ref_set *in, ref_set *out, ref_rename_fn fn, const ref_cfg *c, bool ckpt,
                    wt_errbuf *err)
{
	ref_rename_ctx x = {c, ckpt};
	ref_set_like(out, in);
	int rv = WT_OK;
	for (size_t i = 0; i < in->n && rv == WT_OK; i++)
		rv = fn(&x, in, &in->t[i], out, err);
	if (rv != WT_OK)
		ref_set_clear(out);
	return rv;
}

int ref_map_name(const char *name, ref_name_map tops, ref_name_map leaves, char *buf, size_t cap,
                 int *top, int *leaf, const char **tail, wt_errbuf *err)
{
	const char *rest = name, *pre = "";
	int t = -1, l = -1;
	for (size_t i = 0; i < tops.n && t < 0; i++)
		if (strncmp(name, tops.map[i][0], strlen(tops.map[i][0])) == 0) {
			pre = tops.map[i][1];
			rest = name + strlen(tops.map[i][0]);
			t = (int)i;
		}
	if (top)
		*top = t;
	if (leaf)
		*leaf = -1;
	if (tail)
		*tail = NULL;
	int n = snprintf(buf, cap, "%s%s", pre, rest);
	if (n < 0 || (size_t)n >= cap)
		return wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", name);
	for (size_t i = 0; i < leaves.n && l < 0; i++) {
		char *at = strstr(buf, leaves.map[i][0]);
		if (at == NULL)
			continue;
		size_t from = strlen(leaves.map[i][0]), to = strlen(leaves.map[i][1]);
		size_t after = strlen(at + from);
		if ((size_t)(at - buf) + to + after >= cap)
			return wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", name);
		memmove(at + to, at + from, after + 1);
		memcpy(at, leaves.map[i][1], to);
		l = (int)i;
		if (tail)
			*tail = at + to;
	}
	if (leaf)
		*leaf = l;
	return WT_OK;
}

int ref_split_thirds(const ref_tensor *t, const char *pre, const char *leaf, int64_t rows,
                     ref_set *out, wt_errbuf *err)
{
	static const char *const parts[] = {"q_proj", "k_proj", "v_proj"};
	int64_t n = t->ndim >= 1 ? t->shape[0] : 0;
	bool f16_32 = t->dtype == WT_F32 || t->dtype == WT_BF16 || t->dtype == WT_F16;
	if (n < 3 || n % 3 != 0 || (rows > 0 && n != 3 * rows) || t->nbytes % 3 != 0 || !f16_32)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "tensor '%s': a %s [q; k; v] tensor of %lld rows; the reference "
		    "splits three equal thirds (%lld rows each) of a 16- or 32-bit float",
		    t->name, wt_dtype_name(t->dtype), (long long)n,
		    (long long)(rows > 0 ? rows : n / 3));
	int64_t sh[WT_MAX_DIMS];
	memcpy(sh, t->shape, sizeof(int64_t) * (size_t)t->ndim);
	sh[0] = n / 3;
	uint64_t nb = t->nbytes / 3;
	int rv = WT_OK;
	for (int p = 0; p < 3 && rv == WT_OK; p++) {
		char name[512];
		if (snprintf(name, sizeof(name), "%s%s.%s", pre, parts[p], leaf) >=
		    (int)sizeof(name))
			return wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", t->name);
		rv = ref_set_add(out, name, t->dtype, t->ndim, sh, t->data + (size_t)p * nb, nb,
		                 err);
	}
	return rv;
}

int ref_set_add(ref_set *s, const char *name, wt_dtype dt, int ndim, const int64_t *shape,
                const void *bytes, uint64_t nbytes, wt_errbuf *err)
{
	if (ndim < 0 || ndim > WT_MAX_DIMS)
		return wt_seterr(err, WT_EINVAL, "tensor '%s': %d dims; at most %d", name, ndim,
		                 WT_MAX_DIMS);
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->t[i].name, name) == 0)
			return wt_seterr(err, WT_EDUP, "tensor '%s' added twice to a reference set",
			                 name);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		ref_tensor *t = realloc(s->t, cap * sizeof(*t));
		if (t == NULL)
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", name);
		s->t = t;
		s->cap = cap;
	}
	ref_tensor *t = &s->t[s->n];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	t->data = malloc(nbytes ? nbytes : 1);
	if (t->name == NULL || t->data == NULL) {
		free(t->name);
		free(t->data);
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory holding %llu bytes",
		                 name, (unsigned long long)nbytes);
	}
	memcpy(t->data, bytes, nbytes);
	t->dtype = dt;
	t->ndim = ndim;
	for (int k = 0; k < ndim; k++)
		t->shape[k] = shape[k];
	t->nbytes = nbytes;
	s->n++;
	s->sorted = false;
	return WT_OK;
}

int ref_set_add_as(ref_set *s, const char *name, const ref_tensor *t, wt_errbuf *err)
{
	return ref_set_add(s, name, t->dtype, t->ndim, t->shape, t->data, t->nbytes, err);
}

static int cmp_tensor(const void *a, const void *b)
{
	return strcmp(((const ref_tensor *)a)->name, ((const ref_tensor *)b)->name);
}

ref_tensor *ref_set_find(ref_set *s, const char *name)
{
	if (s->n == 0)
		return NULL;
	if (!s->sorted) {
		qsort(s->t, s->n, sizeof(s->t[0]), cmp_tensor);
		s->sorted = true;
	}
	ref_tensor key = {.name = (char *)name};
	return bsearch(&key, s->t, s->n, sizeof(s->t[0]), cmp_tensor);
}

void ref_set_clear(ref_set *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->t[i].name);
		free(s->t[i].data);
		free(s->t[i].f32);
	}
	free(s->t);
	s->t = NULL;
	s->n = s->cap = 0;
	s->sorted = false;
}

static bool is_quantized_dtype(wt_dtype dt)
{
	return dt == WT_F8_E4M3 || dt == WT_I8 || dt == WT_I32;
}

/* Logical element shape (int4: packed last dim x 8). */
static void logical_shape(const ref_set *s, const ref_tensor *t, int64_t *shape)
{
	for (int k = 0; k < t->ndim; k++)
		shape[k] = t->shape[k];
	if (t->dtype == WT_I32 && s->quant == WT_QUANT_INT4_GROUP && t->ndim > 0)
		shape[t->ndim - 1] *= 8;
}

static const ref_tensor *find_scale(ref_set *s, const char *name, const char *suffix,
                                    wt_errbuf *err)
{
	char sname[512];
	if ((size_t)snprintf(sname, sizeof(sname), "%s%s", name, suffix) >= sizeof(sname)) {
		wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", name);
		return NULL;
	}
	ref_tensor *sc = ref_set_find(s, sname);
	if (sc == NULL) {
		wt_seterr(err, WT_ENOTFOUND, "tensor '%s' is quantized but '%s' is missing", name,
		          sname);
		return NULL;
	}
	if (sc->dtype != WT_F32) {
		wt_seterr(err, WT_EDTYPE, "scale '%s' is %s; scales are F32", sname,
		          wt_dtype_name(sc->dtype));
		return NULL;
	}
	return sc;
}

/* Dequantize a rank weight [count.., N, K] with the layout scheme. */
static int dequant_rank(ref_set *s, ref_tensor *t, const int64_t *shape, int64_t n, wt_errbuf *err)
{
	if (t->ndim < 2)
		return wt_seterr(err, WT_ESHAPE, "quantized tensor '%s' has %d dims; want >= 2",
		                 t->name, t->ndim);
	const ref_tensor *sc = find_scale(s, t->name, "_scale", err);
	if (sc == NULL)
		return err ? err->code : WT_ENOTFOUND;
	int64_t N = shape[t->ndim - 2], K = shape[t->ndim - 1];
	int64_t group = s->group ? s->group : 128;
	int64_t per = kern_scale_count(s->quant, N, K, group);
	int64_t qb = kern_qbytes(s->quant, N, K);
	int64_t count = (N > 0 && K > 0) ? n / (N * K) : 0;
	if (per <= 0 || qb <= 0 || (uint64_t)(count * qb) != t->nbytes ||
	    (uint64_t)(count * per) * 4u != sc->nbytes)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s' (%s): %lld x [%lld, %lld] needs %lld bytes and %lld "
		                 "scales; have %llu bytes and %llu scales",
		                 t->name, wt_quant_name(s->quant), (long long)count, (long long)N,
		                 (long long)K, (long long)(count * qb), (long long)(count * per),
		                 (unsigned long long)t->nbytes,
		                 (unsigned long long)sc->nbytes / 4u);
	const float *scale = (const float *)(const void *)sc->data;
	for (int64_t c = 0; c < count; c++) {
		int rv = kern_dequantize(s->quant, t->data + c * qb, scale + c * per, N, K, group,
		                         t->f32 + c * N * K, WT_F32);
		if (rv != WT_OK)
			return wt_seterr(err, rv, "tensor '%s': cannot dequantize %s with %s",
			                 t->name, wt_dtype_name(t->dtype), wt_quant_name(s->quant));
	}
	return WT_OK;
}

/*
 * An fbgemm_fp8 weight (transformers' FbgemmFp8Linear / FbgemmFp8Llama4TextExperts): one
 * scale per output channel, F32, BF16 or F16 (read as float32 through ref_get). A Linear
 * [N, K] scales its rows (X.weight_scale [N, 1]); a Llama 4 stack [E, K, N] (torch.bmm
 * operands [in, out]) its columns (X_scale [E, 1, N] or [E, N, 1]): expert e's
 * [K, N] matrix is dequantized with K x 1 blocks of scales [1, N].
 */
static int dequant_rows(ref_set *s, ref_tensor *t, wt_errbuf *err)
{
	char sname[512];
	snprintf(sname, sizeof(sname), "%s_scale", t->name);
	ref_tensor *sc = ref_set_find(s, sname);
	int64_t E = t->ndim == 3 ? t->shape[0] : 1, K = t->shape[t->ndim - 2],
	        N = t->shape[t->ndim - 1];
	if (t->ndim == 2) { /* rows: [N, K] with N = shape[0] */
		K = t->shape[1];
		N = t->shape[0];
	}
	if (sc == NULL || (t->ndim != 2 && t->ndim != 3))
		return wt_seterr(err, WT_ENOTFOUND, "FP8 tensor '%s' (%d dims): no '%s'", t->name,
		                 t->ndim, sname);
	const float *v;
	int64_t n = 1;
	for (int k = 0; k < sc->ndim; k++)
		n *= sc->shape[k];
	int rv = ref_get(s, sname, sc->ndim, sc->shape, &v, err);
	if (rv == WT_OK && n != E * N)
		rv = wt_seterr(err, WT_ESHAPE, "scale of '%s': %lld values; want %lld", t->name,
		               (long long)n, (long long)(E * N));
	if (rv != WT_OK || t->ndim == 2)
		return rv != WT_OK ? rv
		                   : kern_dequant_fp8_block(t->f32, WT_F32, t->data, N, K, v, 1, K);
	for (int64_t e = 0; e < E && rv == WT_OK; e++)
		rv = kern_dequant_fp8_block(t->f32 + e * K * N, WT_F32, t->data + e * K * N, K, N,
		                            v + e * N, K, 1);
	return rv;
}

/* Dequantize an FP8 checkpoint weight [N, K]. */
static int dequant_ckpt(ref_set *s, ref_tensor *t, wt_errbuf *err)
{
	if (s->fp8_rows)
		return dequant_rows(s, t, err);
	if (t->ndim != 2)
		return wt_seterr(err, WT_ESHAPE, "FP8 tensor '%s' has %d dims; want 2", t->name,
		                 t->ndim);
	int64_t N = t->shape[0], K = t->shape[1];
	char sname[512];
	snprintf(sname, sizeof(sname), "%s_scale_inv", t->name);
	if (ref_set_find(s, sname) != NULL) {
		const ref_tensor *sc = find_scale(s, t->name, "_scale_inv", err);
		if (sc == NULL)
			return err ? err->code : WT_ENOTFOUND;
		int64_t bn = s->block[0] ? s->block[0] : 128, bk = s->block[1] ? s->block[1] : 128;
		uint64_t want = (uint64_t)((N + bn - 1) / bn * ((K + bk - 1) / bk));
		if (sc->nbytes != want * 4u)
			return wt_seterr(err, WT_ESHAPE, "scale of '%s': %llu values; want %llu",
			                 t->name, (unsigned long long)sc->nbytes / 4u,
			                 (unsigned long long)want);
		return kern_dequant_fp8_block(t->f32, WT_F32, t->data, N, K,
		                              (const float *)(const void *)sc->data, bn, bk);
	}
	/* per tensor: one scale, F32 ([] as the "fp8" method writes it) or, from
	 * compressed-tensors, [1] in F32, BF16 or F16 (read as float32 through ref_get);
	 * compressed-tensors' blocks: [ceil(N/b0), ceil(K/b1)] likewise */
	snprintf(sname, sizeof(sname), "%s_scale", t->name);
	const ref_tensor *st = ref_set_find(s, sname);
	if (st == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "tensor '%s' is quantized but '%s' is missing",
		                 t->name, sname);
	if (st->ndim == 2) {
		int64_t bn = s->block[0] ? s->block[0] : 128, bk = s->block[1] ? s->block[1] : 128;
		int64_t want[2] = {(N + bn - 1) / bn, (K + bk - 1) / bk};
		const float *v;
		int rv = ref_get(s, sname, 2, want, &v, err);
		return rv != WT_OK
		           ? rv
		           : kern_dequant_fp8_block(t->f32, WT_F32, t->data, N, K, v, bn, bk);
	}
	if (st->nbytes != wt_dtype_size(st->dtype))
		return wt_seterr(err, WT_ESHAPE, "scale of '%s': %llu bytes; want one value",
		                 t->name, (unsigned long long)st->nbytes);
	const float *v;
	int rv = ref_get(s, sname, st->ndim, st->shape, &v, err);
	return rv != WT_OK ? rv : kern_dequant_fp8_block(t->f32, WT_F32, t->data, N, K, v, N, K);
}

int ref_get(ref_set *s, const char *name, int nd, const int64_t *want, const float **out,
            wt_errbuf *err)
{
	ref_tensor *t = ref_set_find(s, name);
	if (t == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "tensor '%s' is missing", name);
	int64_t shape[WT_MAX_DIMS];
	logical_shape(s, t, shape);
	bool ok = t->ndim == nd;
	for (int k = 0; ok && k < nd; k++)
		ok = shape[k] == want[k];
	if (!ok) {
		char a[160] = "", b[160] = "";
		size_t la = 0, lb = 0;
		for (int k = 0; k < t->ndim && la < sizeof(a); k++)
			la += (size_t)snprintf(a + la, sizeof(a) - la, "%s%lld", k ? ", " : "",
			                       (long long)shape[k]);
		for (int k = 0; k < nd && lb < sizeof(b); k++)
			lb += (size_t)snprintf(b + lb, sizeof(b) - lb, "%s%lld", k ? ", " : "",
			                       (long long)want[k]);
		return wt_seterr(err, WT_ESHAPE, "tensor '%s' has shape [%s]; want [%s]", name, a,
		                 b);
	}
	if (t->f32 == NULL) {
		int64_t n = 1;
		for (int k = 0; k < nd; k++)
			n *= shape[k];
		t->f32 = malloc((size_t)(n ? n : 1) * sizeof(float));
		if (t->f32 == NULL)
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", name);
		int rv;
		if (is_quantized_dtype(t->dtype) && s->quant != WT_QUANT_NONE)
			rv = dequant_rank(s, t, shape, n, err);
		else if (t->dtype == WT_F8_E4M3)
			rv = dequant_ckpt(s, t, err);
		else if (wt_dtype_is_float(t->dtype) && t->dtype != WT_F8_E5M2 &&
		         (uint64_t)n * wt_dtype_size(t->dtype) == t->nbytes)
			rv = kern_convert(t->f32, WT_F32, t->data, t->dtype, (size_t)n);
		else
			rv = wt_seterr(err, WT_EDTYPE, "tensor '%s': cannot read %s as float32",
			               name, wt_dtype_name(t->dtype));
		if (rv != WT_OK) {
			if (err && err->code == WT_OK)
				wt_seterr(err, rv, "tensor '%s': cannot convert %s to F32", name,
				          wt_dtype_name(t->dtype));
			free(t->f32);
			t->f32 = NULL;
			return rv;
		}
	}
	*out = t->f32;
	return WT_OK;
}

int ref_getf(ref_set *s, const float **out, bool optional, wt_errbuf *err, int nd, int64_t a,
             int64_t b, int64_t c, const char *fmt, ...)
{
	char name[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(name))
		return wt_seterr(err, WT_EINVAL, "tensor name from '%s' too long", fmt);
	*out = NULL;
	if (optional && ref_set_find(s, name) == NULL)
		return WT_OK;
	int64_t want[3] = {a, b, c};
	return ref_get(s, name, nd, want, out, err);
}

#define QKV_LAYER "model.layers.%lld.self_attn."

int ref_get_qkv(ref_set *s, int64_t l, int64_t hid, int64_t qd, int64_t kd, int64_t vd, bool full,
                ref_qkv *o, wt_errbuf *err)
{
	long long L = (long long)l;
	int rv;
	if (full) {
		if ((rv = ref_getf(s, &o->wq, false, err, 2, qd, hid, 0, QKV_LAYER "q_proj.weight",
		                   L)) ||
		    (rv = ref_getf(s, &o->wk, false, err, 2, kd, hid, 0, QKV_LAYER "k_proj.weight",
		                   L)) ||
		    (rv = ref_getf(s, &o->wv, false, err, 2, vd, hid, 0, QKV_LAYER "v_proj.weight",
		                   L)) ||
		    (rv =
		         ref_getf(s, &o->bq, true, err, 1, qd, 0, 0, QKV_LAYER "q_proj.bias", L)) ||
		    (rv =
		         ref_getf(s, &o->bk, true, err, 1, kd, 0, 0, QKV_LAYER "k_proj.bias", L)) ||
		    (rv = ref_getf(s, &o->bv, true, err, 1, vd, 0, 0, QKV_LAYER "v_proj.bias", L)))
			return rv;
		return WT_OK;
	}
	const float *f, *fb;
	if ((rv = ref_getf(s, &f, false, err, 2, qd + kd + vd, hid, 0, QKV_LAYER "qkv_proj.weight",
	                   L)) ||
	    (rv = ref_getf(s, &fb, true, err, 1, qd + kd + vd, 0, 0, QKV_LAYER "qkv_proj.bias", L)))
		return rv;
	o->wq = f;
	o->wk = f + qd * hid;
	o->wv = f + (qd + kd) * hid;
	o->bq = fb;
	o->bk = fb ? fb + qd : NULL;
	o->bv = fb ? fb + qd + kd : NULL;
	return WT_OK;
}
