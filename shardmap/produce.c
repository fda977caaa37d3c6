/*
 * produce.c — shardmap_produce: per source group, load the sources once
 * (whole for all ranks, only the needed rows for one rank), build each
 * selected rank's outputs (slice, fuse, convert, quantize), emit, move on.
 * Buffers are reused across groups (fresh memory costs page faults).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "shardmap/shardmap_int.h"

typedef struct buf {
	uint8_t *p;
	size_t cap;
} buf;

typedef struct loaded {
	const uint8_t *base; /* rows [r0, r1) of the source in dtype dt */
	int64_t r0, r1;
	int64_t cols;
	wt_dtype dt;
	bool ok;
} loaded;

typedef struct prod {
	const ckpt *c;
	const sm_plan *p;
	int64_t only;
	buf *raw, *dq; /* per source slot */
	loaded *ld;
	size_t n_slots;
	buf out, q, sc;
	sm_emit_fn emit;
	void *ctx;
} prod;

static int reserve(buf *b, size_t n)
{
	if (n <= b->cap)
		return WT_OK;
	free(b->p);
	b->p = malloc(n ? n : 1);
	if (!b->p) {
		b->cap = 0;
		return WT_ENOMEM;
	}
	b->cap = n;
	return WT_OK;
}

static int64_t trows(const ckpt_tensor *t)
{
	return t->ndim >= 1 ? t->shape[0] : 1;
}

static int64_t tcols(const ckpt_tensor *t)
{
	int64_t c = 1;
	for (int k = 1; k < t->ndim; k++)
		c *= t->shape[k];
	return c;
}

static bool selected(const prod *pr, uint32_t rank)
{
	return pr->only < 0 || (int64_t)rank == pr->only;
}

static int slots(prod *pr, size_t n, wt_errbuf *err)
{
	if (n <= pr->n_slots)
		return WT_OK;
	buf *r = realloc(pr->raw, n * sizeof(buf));
	if (r)
		pr->raw = r;
	buf *d = realloc(pr->dq, n * sizeof(buf));
	if (d)
		pr->dq = d;
	loaded *l = realloc(pr->ld, n * sizeof(loaded));
	if (l)
		pr->ld = l;
	if (!r || !d || !l)
		return wt_seterr(err, WT_ENOMEM, "produce: out of memory");
	memset(pr->raw + pr->n_slots, 0, (n - pr->n_slots) * sizeof(buf));
	memset(pr->dq + pr->n_slots, 0, (n - pr->n_slots) * sizeof(buf));
	pr->n_slots = n;
	return WT_OK;
}

/* Widen [lo, hi) of source s with the rows piece pc needs. */
static void need(const sm_piece *pc, uint32_t s, const sm_src *src, const ckpt_tensor *t,
                 int64_t *lo, int64_t *hi)
{
	if (pc->src != s && pc->aux != s)
		return;
	int64_t a = 0, b = trows(t);
	if (pc->src == s && !pc->cols && !src->whole) {
		a = pc->start;
		b = pc->start + pc->len;
	}
	if (a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

static int load_src(prod *pr, const sm_group *g, uint32_t s, wt_errbuf *err)
{
	const sm_src *src = &g->srcs[s];
	loaded *ld = &pr->ld[s];
	ld->ok = false;
	if (src->t == UINT32_MAX)
		return WT_OK;
	const ckpt_tensor *t = ckpt_tensor_at(pr->c, src->t);
	int64_t lo = INT64_MAX, hi = -1;
	for (size_t m = 0; m < g->n_m; m++) {
		if (!selected(pr, g->m[m].rank))
			continue;
		const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
		for (size_t k = 0; k < o->np; k++)
			need(&pr->p->pieces[o->p0 + k], s, src, t, &lo, &hi);
	}
	if (hi < 0)
		return WT_OK; /* not needed by the selected ranks */
	int64_t cols = tcols(t);
	size_t esz = wt_dtype_size(t->dtype);
	uint64_t rowb = (uint64_t)cols * esz, off = (uint64_t)lo * rowb,
	         len = (uint64_t)(hi - lo) * rowb;
	if (reserve(&pr->raw[s], len))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory reading %" PRIu64 " bytes", t->name,
		                 len);
	int rv = ckpt_read(pr->c, t, off, pr->raw[s].p, len, err);
	if (rv != WT_OK)
		return rv;
	ld->base = pr->raw[s].p;
	ld->dt = t->dtype;
	if (src->mode != SM_SRC_RAW) {
		const ckpt_tensor *st = ckpt_tensor_at(pr->c, src->scale);
		int64_t N = t->shape[0], K = t->shape[1];
		size_t ns = st->nbytes / 4;
		float *scale = malloc(ns * sizeof(float));
		if (!scale || reserve(&pr->dq[s], (size_t)N * (size_t)K * 4)) {
			free(scale);
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
		}
		rv = ckpt_read(pr->c, st, 0, scale, st->nbytes, err);
		if (rv == WT_OK) {
			const ckpt_config *cfg = ckpt_get_config(pr->c);
			int64_t bn = N, bk = K;
			if (src->mode == SM_SRC_DQ_BLOCK) {
				bn = cfg->quant_block[0] > 0 ? cfg->quant_block[0] : 128;
				bk = cfg->quant_block[1] > 0 ? cfg->quant_block[1] : 128;
			}
			rv = kern_dequant_fp8_block(pr->dq[s].p, WT_F32, pr->raw[s].p, N, K, scale,
			                            bn, bk);
			if (rv != WT_OK)
				rv =
				    wt_seterr(err, rv, "tensor '%s': dequantizing failed", t->name);
		}
		free(scale);
		if (rv != WT_OK)
			return rv;
		ld->base = pr->dq[s].p;
		ld->dt = WT_F32;
	}
	ld->r0 = lo;
	ld->r1 = hi;
	ld->cols = cols;
	ld->ok = true;
	return WT_OK;
}

static int conv(void *dst, wt_dtype dd, const void *src, wt_dtype sd, size_t n)
{
	if (dd == sd) {
		memcpy(dst, src, n * wt_dtype_size(dd));
		return WT_OK;
	}
	return kern_convert(dst, dd, src, sd, n);
}

/* Concatenate the pieces of o into dst (dtype dd, o->cols per row). */
static int assemble(prod *pr, const sm_out *o, uint8_t *dst, wt_dtype dd, wt_errbuf *err)
{
	size_t desz = wt_dtype_size(dd);
	size_t drow = (size_t)o->cols * desz;
	for (size_t k = 0; k < o->np; k++) {
		const sm_piece *pc = &pr->p->pieces[o->p0 + k];
		size_t bytes = (size_t)pc->out_rows * drow;
		if (pc->src == SM_ZERO) {
			memset(dst, 0, bytes);
			dst += bytes;
			continue;
		}
		const loaded *ld = &pr->ld[pc->src];
		WT_ASSERT(ld->ok);
		size_t sesz = wt_dtype_size(ld->dt);
		size_t srow = (size_t)ld->cols * sesz;
		int rv = WT_OK;
		if (!pc->cols) {
			const uint8_t *s = ld->base + (size_t)(pc->start - ld->r0) * srow;
			rv = conv(dst, dd, s, ld->dt, (size_t)pc->len * (size_t)ld->cols);
		} else if (dd == ld->dt) {
			kern_copy2d(dst, drow, ld->base + (size_t)pc->start * sesz, srow,
			            (size_t)pc->out_rows, (size_t)pc->len * desz);
		} else {
			for (int64_t r = 0; r < pc->out_rows && rv == WT_OK; r++)
				rv = conv(dst + (size_t)r * drow, dd,
				          ld->base + (size_t)r * srow + (size_t)pc->start * sesz,
				          ld->dt, (size_t)pc->len);
		}
		if (rv != WT_OK)
			return wt_seterr(err, rv, "tensor '%s': converting %s to %s failed",
			                 o->name, wt_dtype_name(ld->dt), wt_dtype_name(dd));
		dst += bytes;
	}
	return WT_OK;
}

static float scalar(const prod *pr, uint32_t s)
{
	const loaded *ld = &pr->ld[s];
	float v;
	memcpy(&v, ld->base, sizeof(v));
	return v;
}

static int emit(prod *pr, uint32_t rank, size_t ix, const void *data, uint64_t n, wt_errbuf *err)
{
	return pr->emit(pr->ctx, rank, pr->p->ranks[rank].pos[ix], data, n, err);
}

static int do_quant(prod *pr, uint32_t rank, const sm_out *o, wt_errbuf *err)
{
	const sm_out *so = &pr->p->ranks[rank].outs[o->scale_ix];
	size_t wesz = wt_dtype_size(o->work);
	int64_t N = o->rows / o->units, K = o->cols, G = pr->p->layout.group_size;
	if (reserve(&pr->out, (size_t)o->rows * (size_t)K * wesz) ||
	    reserve(&pr->q, o->info.nbytes) || reserve(&pr->sc, so->info.nbytes))
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", o->name);
	int rv = assemble(pr, o, pr->out.p, o->work, err);
	if (rv != WT_OK)
		return rv;
	size_t qb = o->info.nbytes / (size_t)o->units, sn = so->info.nbytes / 4 / (size_t)o->units;
	for (int64_t u = 0; u < o->units; u++) {
		int64_t bad = -1;
		rv = kern_quantize(o->q, pr->out.p + (size_t)u * (size_t)N * (size_t)K * wesz,
		                   o->work, N, K, G, pr->q.p + (size_t)u * qb,
		                   (float *)pr->sc.p + (size_t)u * sn, &bad);
		if (rv == WT_ENONFINITE)
			return wt_seterr(
			    err, WT_ENONFINITE,
			    "tensor '%s' (rank %u): NaN or Inf at element %" PRId64
			    "; quantization needs finite values: fix the checkpoint or "
			    "exclude the module",
			    o->name, rank, u * N * K + bad);
		if (rv != WT_OK)
			return wt_seterr(err, rv, "tensor '%s': quantization failed", o->name);
	}
	rv = emit(pr, rank, o->scale_ix, pr->sc.p, so->info.nbytes, err);
	if (rv == WT_OK)
		rv = emit(pr, rank, (size_t)(o - pr->p->ranks[rank].outs), pr->q.p, o->info.nbytes,
		          err);
	return rv;
}

/* Max of the pieces' scalar sources per unit into out[units]. */
static void unit_max(const prod *pr, const sm_out *o, bool aux, float *out)
{
	for (int64_t u = 0; u < o->units; u++)
		out[u] = -INFINITY;
	for (size_t k = 0; k < o->np; k++) {
		const sm_piece *pc = &pr->p->pieces[o->p0 + k];
		float v = scalar(pr, aux ? pc->aux : pc->src);
		if (v > out[pc->unit])
			out[pc->unit] = v;
	}
}

static int do_out(prod *pr, uint32_t rank, size_t ix, wt_errbuf *err)
{
	const sm_out *o = &pr->p->ranks[rank].outs[ix];
	switch (o->okind) {
	case SM_O_QSCALE:
		return WT_OK; /* written with its weight */
	case SM_O_QUANT:
		return do_quant(pr, rank, o, err);
	case SM_O_SCALE_MAX: {
		if (reserve(&pr->out, (size_t)o->units * 4))
			return wt_seterr(err, WT_ENOMEM, "out of memory");
		float *v = (float *)pr->out.p;
		unit_max(pr, o, false, v);
		if (o->info.role == SM_ROLE_INPUT_SCALE && (pr->only >= 0 || rank == 0)) {
			for (size_t k = 0; k < o->np; k++)
				if (scalar(pr, pr->p->pieces[o->p0 + k].src) != v[0]) {
					WT_LOG(WT_LOG_WARNING,
					       "'%s': input_scale parts differ; using the max %g",
					       o->name, (double)v[0]);
					break;
				}
		}
		return emit(pr, rank, ix, v, o->info.nbytes, err);
	}
	default:
		break;
	}
	const sm_piece *p0 = &pr->p->pieces[o->p0];
	if (o->okind == SM_O_DATA && o->np == 1 && !p0->cols && p0->src != SM_ZERO &&
	    pr->ld[p0->src].dt == o->info.dtype) {
		const loaded *ld = &pr->ld[p0->src];
		size_t srow = (size_t)ld->cols * wt_dtype_size(ld->dt);
		return emit(pr, rank, ix, ld->base + (size_t)(p0->start - ld->r0) * srow,
		            o->info.nbytes, err);
	}
	if (reserve(&pr->out, o->info.nbytes))
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", o->name);
	int rv = assemble(pr, o, pr->out.p, o->info.dtype, err);
	if (rv != WT_OK)
		return rv;
	if (o->okind == SM_O_MERGE) {
		float mx[o->units > 0 ? o->units : 1];
		unit_max(pr, o, true, mx);
		uint8_t *d = pr->out.p;
		for (size_t k = 0; k < o->np; k++) {
			const sm_piece *pc = &pr->p->pieces[o->p0 + k];
			size_t n = (size_t)pc->out_rows * (size_t)o->cols;
			float s = scalar(pr, pc->aux);
			if (s != mx[pc->unit])
				kern_fp8_rescale(d, n, s / mx[pc->unit]);
			d += n;
		}
	}
	return emit(pr, rank, ix, pr->out.p, o->info.nbytes, err);
}

static int do_group(prod *pr, const sm_group *g, wt_errbuf *err)
{
	bool any = false;
	for (size_t m = 0; m < g->n_m && !any; m++)
		any = selected(pr, g->m[m].rank);
	if (!any)
		return WT_OK;
	int rv = slots(pr, g->n_srcs, err);
	for (uint32_t s = 0; s < g->n_srcs && rv == WT_OK; s++)
		rv = load_src(pr, g, s, err);
	for (size_t m = 0; m < g->n_m && rv == WT_OK; m++)
		if (selected(pr, g->m[m].rank))
			rv = do_out(pr, g->m[m].rank, g->m[m].ix, err);
	return rv;
}

int shardmap_produce(const ckpt *c, const sm_plan *p, int64_t only_rank, sm_emit_fn emit_fn,
                     void *ctx, wt_errbuf *err)
{
	if (only_rank >= (int64_t)(p->tp * p->ep))
		return wt_seterr(err, WT_EINVAL, "rank %" PRId64 " out of range (%u ranks)",
		                 only_rank, p->tp * p->ep);
	prod pr = {.c = c, .p = p, .only = only_rank, .emit = emit_fn, .ctx = ctx};
	int rv = WT_OK;
	for (size_t g = 0; g < p->n_groups && rv == WT_OK; g++)
		rv = do_group(&pr, &p->groups[g], err);
	for (size_t s = 0; s < pr.n_slots; s++) {
		free(pr.raw[s].p);
		free(pr.dq[s].p);
	}
	free(pr.raw);
	free(pr.dq);
	free(pr.ld);
	free(pr.out.p);
	free(pr.q.p);
	free(pr.sc.p);
	return rv;
}
