/*
 * produce.c — shardmap_produce (and one work item of shardmap_produce_ex,
 * produce_run.c): per source group, load the sources once
 * (whole for all ranks, only the needed rows for one rank; an expert stack
 * only the needed experts, produce_stack.c), build each
 * selected rank's outputs (slice, fuse, convert, quantize), emit, move on.
 * Buffers are reused across groups (fresh memory costs page faults).
 * Reading a source: produce_load.c; emitting (scales checked), quantizing and
 * emitting in parts: produce_emit.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "shardmap/produce_int.h"
#include "shardmap/quant_ct.h"

int sm_prod_reserve(buf *b, size_t n)
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

bool sm_prod_selected(const prod *pr, uint32_t rank)
{
	int64_t n = pr->n_only > 1 ? pr->n_only : 1;
	return pr->only < 0 || ((int64_t)rank >= pr->only && (int64_t)rank < pr->only + n);
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
		return wt_seterr(err, WT_ENOMEM, "produce: out of memory for %zu source slots", n);
	memset(pr->raw + pr->n_slots, 0, (n - pr->n_slots) * sizeof(buf));
	memset(pr->dq + pr->n_slots, 0, (n - pr->n_slots) * sizeof(buf));
	pr->n_slots = n;
	return WT_OK;
}

/* dtype pieces of o are assembled in. */
static wt_dtype asm_dtype(const sm_out *o)
{
	return o->okind == SM_O_QUANT ? o->work : o->info.dtype;
}

/* Rows of source s the pieces index: all `all` of them, or (by_rows: read by rows, or
 * a stack read by experts) those of its row pieces. */
typedef struct rows_of {
	bool by_rows;
	int64_t all;
} rows_of;

/* Widen [lo, hi) of source s with the rows piece pc needs; *sum adds its rows;
 * *direct drops unless the piece can be read straight into an output of dtype dd. */
static void need(const sm_piece *pc, uint32_t s, const sm_src *src, const ckpt_tensor *t,
                 rows_of ro, wt_dtype dd, int64_t *lo, int64_t *hi, int64_t *sum, bool *direct)
{
	if (pc->src != s && pc->aux != s)
		return;
	if (pc->src != s || pc->cols || src->whole || dd != t->dtype)
		*direct = false;
	*sum += pc->len;
	int64_t a = 0, b = ro.all;
	if (pc->src == s && !pc->cols && ro.by_rows) {
		a = pc->start;
		b = pc->start + pc->len;
	}
	if (a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

/* What the selected ranks need of source s: ld->ok (needed), rows [r0, r1), direct. */
static void scan_src(prod *pr, const sm_group *g, uint32_t s)
{
	const sm_src *src = &g->srcs[s];
	loaded *ld = &pr->ld[s];
	ld->ok = false;
	ld->direct = false;
	ld->base = NULL;
	if (src->t == UINT32_MAX)
		return;
	const ckpt_tensor *t = ckpt_tensor_at(pr->c, src->t);
	int64_t lo = INT64_MAX, hi = -1, sum = 0;
	bool direct = src->mode == SM_SRC_RAW;
	/* a stack: the experts of the rows needed (produce_stack.c); else whole or by rows */
	sm_stack st;
	rows_of ro = {!src->whole, sm_trows(t)};
	if (sm_stack_of(src, t, &st))
		ro = (rows_of){true, st.experts * st.vrows};
	for (size_t m = 0; m < g->n_m; m++) {
		if (!sm_prod_selected(pr, g->m[m].rank))
			continue;
		const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
		for (size_t k = 0; k < o->np; k++)
			need(&pr->p->pieces[o->p0 + k], s, src, t, ro, asm_dtype(o), &lo, &hi, &sum,
			     &direct);
	}
	if (hi < 0)
		return; /* not needed by the selected ranks */
	ld->t = t;
	ld->cols = sm_tcols(t);
	ld->dt = t->dtype;
	/* on a remote store (a read hint) one large read of the rows beats one
	 * request per rank's piece, staging copy included */
	ld->direct = direct && sum == hi - lo && store_read_hint(ckpt_store(pr->c)) == 0;
	ld->r0 = lo;
	ld->r1 = hi;
	ld->ok = true;
}

int sm_prod_conv(void *dst, wt_dtype dd, const void *src, wt_dtype sd, size_t n)
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
		if (ld->direct) {
			rv = ckpt_read(pr->c, ld->t, (uint64_t)pc->start * srow, dst,
			               (size_t)pc->len * srow, err);
			if (rv != WT_OK)
				return rv;
		} else if (!pc->cols) {
			const uint8_t *s = ld->base + (size_t)(pc->start - ld->r0) * srow;
			rv = sm_prod_conv(dst, dd, s, ld->dt, (size_t)pc->len * (size_t)ld->cols);
		} else if (dd == ld->dt) { /* columns of every row: rows loaded from 0 */
			WT_ASSERT(ld->r0 == 0);
			kern_copy2d(dst, drow, ld->base + (size_t)pc->start * sesz, srow,
			            (size_t)pc->out_rows, (size_t)pc->len * desz);
		} else {
			WT_ASSERT(ld->r0 == 0);
			for (int64_t r = 0; r < pc->out_rows && rv == WT_OK; r++)
				rv = sm_prod_conv(dst + (size_t)r * drow, dd,
				                  ld->base + (size_t)r * srow +
				                      (size_t)pc->start * sesz,
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
	return shardmap_ct_scalar(ld->base, ld->dt); /* F32, or a BF16/F16 scale */
}

static int do_quant(prod *pr, uint32_t rank, const sm_out *o, wt_errbuf *err)
{
	size_t n = (size_t)o->rows * (size_t)o->cols * wt_dtype_size(o->work);
	if (sm_prod_reserve(&pr->out, n))
		return wt_seterr(
		    err, WT_ENOMEM,
		    "tensor '%s': out of memory for its quantization buffers (%zu bytes "
		    "assembled)",
		    o->name, n);
	int rv = assemble(pr, o, pr->out.p, o->work, err);
	return rv != WT_OK ? rv : sm_prod_quant(pr, rank, o, pr->out.p, err);
}

/* Max of the pieces' scalar sources per unit into out[units]. Each must be
 * a finite positive number (a NaN never wins a max, an Inf or a negative
 * scale turns the merge's ratios into garbage): WT_ENONFINITE naming it; and
 * every unit needs one (an input scale on some experts of a stack only):
 * WT_ECORRUPT. */
static int unit_max(const prod *pr, const sm_out *o, bool aux, float *out, wt_errbuf *err)
{
	for (int64_t u = 0; u < o->units; u++)
		out[u] = -INFINITY;
	for (size_t k = 0; k < o->np; k++) {
		const sm_piece *pc = &pr->p->pieces[o->p0 + k];
		uint32_t s = aux ? pc->aux : pc->src;
		float v = scalar(pr, s);
		if (!(isfinite(v) && v > 0.0f))
			return wt_seterr(err, WT_ENONFINITE,
			                 "tensor '%s': scale %g of '%s' is not a finite positive "
			                 "number; fix the checkpoint or exclude the module",
			                 o->name, (double)v, pr->ld[s].t->name);
		if (v > out[pc->unit])
			out[pc->unit] = v;
	}
	for (int64_t u = 0; u < o->units; u++)
		if (out[u] == -INFINITY)
			return wt_seterr(err, WT_ECORRUPT,
			                 "tensor '%s': part (expert) %" PRId64 " of %" PRId64
			                 " has no scale while others have one; a module's input "
			                 "scales must be on all its parts or on none",
			                 o->name, u, o->units);
	return WT_OK;
}

/* A merged input scale: v[unit] holds the max of each expert's (unit's) parts; reduced to
 * the overall max in v[0]. Parts of one unit that differ (q/k/v, gate/up) are logged for
 * FP8 sources; for compressed-tensors sources they are an error naming the module and the
 * parts' values, unless requant=allow (then logged, and the max is used). Different
 * experts' scales are merged to the max and logged (one scale per expert stack, as
 * engines take it). docs/format.md 4.4, 4.5. */
static int input_scales_merge(const prod *pr, uint32_t rank, const sm_out *o, float *v,
                              wt_errbuf *err)
{
	bool strict = shardmap_ct_source(ckpt_get_config(pr->c)) && !pr->p->layout.requant_allow;
	bool talk = (int64_t)rank == (pr->only >= 0 ? pr->only : 0);
	const sm_piece *bad = NULL;
	for (size_t k = 0; k < o->np && !bad; k++) {
		const sm_piece *pc = &pr->p->pieces[o->p0 + k];
		if (scalar(pr, pc->src) != v[pc->unit])
			bad = pc;
	}
	bool experts_differ = false;
	for (int64_t u = 1; u < o->units; u++) {
		experts_differ = experts_differ || v[u] != v[0];
		v[0] = v[u] > v[0] ? v[u] : v[0];
	}
	if (talk && (experts_differ || (bad && !strict)))
		WT_LOG(WT_LOG_WARNING, "'%s': input_scale parts differ; using the max %g", o->name,
		       (double)v[0]);
	if (!bad || !strict)
		return WT_OK;
	char parts[600];
	size_t n = 0, shown = 0;
	for (size_t k = 0; k < o->np && shown < 4 && n < sizeof(parts); k++) {
		const sm_piece *pc = &pr->p->pieces[o->p0 + k];
		if (pc->unit != bad->unit)
			continue;
		n += (size_t)snprintf(parts + n, sizeof(parts) - n, "%s'%s' %.9g",
		                      shown++ ? ", " : "", pr->ld[pc->src].t->name,
		                      (double)scalar(pr, pc->src));
	}
	return wt_seterr(err, WT_ELAYOUT,
	                 "'%s': the fused parts' input scales differ (%s); one activation scale "
	                 "(the max, %.9g) would quantize the others' inputs more coarsely than "
	                 "calibrated: add --requant allow to accept the max, or exclude the "
	                 "module",
	                 o->name, parts, (double)v[bad->unit]);
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
		if (sm_prod_reserve(&pr->out, (size_t)o->units * 4))
			return wt_seterr(err, WT_ENOMEM,
			                 "tensor '%s': out of memory for %" PRId64 " scales",
			                 o->name, o->units);
		float *v = (float *)pr->out.p;
		int rv = unit_max(pr, o, false, v, err);
		if (rv == WT_OK && o->info.role == SM_ROLE_INPUT_SCALE)
			rv = input_scales_merge(pr, rank, o, v, err);
		if (rv != WT_OK)
			return rv;
		return sm_prod_emit(pr, rank, ix, v, o->info.nbytes, err);
	}
	default:
		break;
	}
	const sm_piece *p0 = &pr->p->pieces[o->p0];
	if (o->okind == SM_O_DATA && o->np == 1 && !p0->cols && p0->src != SM_ZERO &&
	    !pr->ld[p0->src].direct && pr->ld[p0->src].dt == o->info.dtype) {
		const loaded *ld = &pr->ld[p0->src];
		size_t srow = (size_t)ld->cols * wt_dtype_size(ld->dt);
		return sm_prod_emit(pr, rank, ix, ld->base + (size_t)(p0->start - ld->r0) * srow,
		                    o->info.nbytes, err);
	}
	if (sm_prod_reserve(&pr->out, o->info.nbytes))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory assembling its %" PRIu64 " bytes",
		                 o->name, o->info.nbytes);
	int rv = assemble(pr, o, pr->out.p, o->info.dtype, err);
	if (rv != WT_OK)
		return rv;
	if (o->okind == SM_O_MERGE) {
		float mx[o->units > 0 ? o->units : 1];
		if ((rv = unit_max(pr, o, true, mx, err)) != WT_OK)
			return rv;
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
	return sm_prod_emit(pr, rank, ix, pr->out.p, o->info.nbytes, err);
}

/* ---- streaming: all outputs of a group at once, sources read in row chunks ----
 * Used when every selected output is a plain copy (SM_O_DATA, no conversion) and
 * none could be emitted straight from a source buffer: the source rows pass
 * through a small reused buffer (warm in cache) and are scattered to every
 * rank's output, instead of landing in a tensor-sized buffer first. */

enum { CHUNK_BYTES = 1 << 18 };

static bool stream_ok(const prod *pr, const sm_group *g)
{
	for (size_t m = 0; m < g->n_m; m++) {
		if (!sm_prod_selected(pr, g->m[m].rank))
			continue;
		const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
		if (o->okind != SM_O_DATA)
			return false;
		for (size_t k = 0; k < o->np; k++) {
			const sm_piece *pc = &pr->p->pieces[o->p0 + k];
			if (pc->src == SM_ZERO)
				continue;
			const loaded *ld = &pr->ld[pc->src];
			if (g->srcs[pc->src].mode != SM_SRC_RAW || ld->dt != o->info.dtype)
				return false;
			if (o->np == 1 && !pc->cols && !ld->direct)
				return false; /* emitted zero-copy from the source instead */
		}
	}
	return true;
}

/* Copy the part of piece pc (first output row orow) that lies in source rows [c0, c1). */
static void scatter(const sm_piece *pc, int64_t orow, uint8_t *ob, size_t orowb,
                    const uint8_t *chunk, int64_t c0, int64_t c1, size_t srowb, size_t esz)
{
	if (pc->cols) {
		kern_copy2d(ob + (size_t)(orow + c0) * orowb, orowb,
		            chunk + (size_t)pc->start * esz, srowb, (size_t)(c1 - c0),
		            (size_t)pc->len * esz);
		return;
	}
	int64_t a = pc->start > c0 ? pc->start : c0;
	int64_t b = pc->start + pc->len < c1 ? pc->start + pc->len : c1;
	if (a >= b)
		return;
	memcpy(ob + (size_t)(orow + a - pc->start) * orowb, chunk + (size_t)(a - c0) * srowb,
	       (size_t)(b - a) * srowb);
}

static int stream_src(prod *pr, const sm_group *g, uint32_t s, wt_errbuf *err)
{
	const loaded *ld = &pr->ld[s];
	size_t esz = wt_dtype_size(ld->dt), srowb = (size_t)ld->cols * esz;
	/* small pieces stay in the CPU cache; a remote store wants big reads */
	size_t piece = CHUNK_BYTES, hint = store_read_hint(ckpt_store(pr->c));
	if (hint > piece)
		piece = hint;
	int64_t step = srowb ? (int64_t)(piece / srowb) : 1;
	if (step < 1)
		step = 1;
	if (sm_prod_reserve(&pr->chunk, (size_t)step * srowb))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory for a read chunk of %zu bytes",
		                 ld->t->name, (size_t)step * srowb);
	for (int64_t c0 = ld->r0; c0 < ld->r1; c0 += step) {
		int64_t c1 = c0 + step < ld->r1 ? c0 + step : ld->r1;
		int rv = ckpt_read(pr->c, ld->t, (uint64_t)c0 * srowb, pr->chunk.p,
		                   (size_t)(c1 - c0) * srowb, err);
		if (rv != WT_OK)
			return rv;
		for (size_t m = 0; m < g->n_m; m++) {
			if (!sm_prod_selected(pr, g->m[m].rank))
				continue;
			const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
			size_t orowb = (size_t)o->cols * esz;
			int64_t orow = 0;
			for (size_t k = 0; k < o->np; k++) {
				const sm_piece *pc = &pr->p->pieces[o->p0 + k];
				if (pc->src == s)
					scatter(pc, orow, pr->obufs[m].p, orowb, pr->chunk.p, c0,
					        c1, srowb, esz);
				orow += pc->out_rows;
			}
		}
	}
	return WT_OK;
}

int sm_prod_obufs(prod *pr, size_t n, wt_errbuf *err)
{
	if (n > pr->n_obufs) {
		buf *nb = realloc(pr->obufs, n * sizeof(buf));
		if (!nb)
			return wt_seterr(err, WT_ENOMEM,
			                 "produce: out of memory for the buffers of %zu outputs",
			                 n);
		memset(nb + pr->n_obufs, 0, (n - pr->n_obufs) * sizeof(buf));
		pr->obufs = nb;
		pr->n_obufs = n;
	}
	return WT_OK;
}

static int do_stream(prod *pr, const sm_group *g, wt_errbuf *err)
{
	int rv0 = sm_prod_obufs(pr, g->n_m, err);
	if (rv0 != WT_OK)
		return rv0;
	/* Outputs: zero rows and direct row pieces now, streamed sources below. */
	for (size_t m = 0; m < g->n_m; m++) {
		if (!sm_prod_selected(pr, g->m[m].rank))
			continue;
		const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
		if (sm_prod_reserve(&pr->obufs[m], o->info.nbytes))
			return wt_seterr(err, WT_ENOMEM,
			                 "tensor '%s': out of memory for its %" PRIu64
			                 " output bytes",
			                 o->name, o->info.nbytes);
		size_t orowb = (size_t)o->cols * wt_dtype_size(o->info.dtype);
		uint8_t *d = pr->obufs[m].p;
		for (size_t k = 0; k < o->np; k++) {
			const sm_piece *pc = &pr->p->pieces[o->p0 + k];
			size_t bytes = (size_t)pc->out_rows * orowb;
			if (pc->src == SM_ZERO) {
				memset(d, 0, bytes);
			} else if (pr->ld[pc->src].direct) {
				int rv = ckpt_read(pr->c, pr->ld[pc->src].t,
				                   (uint64_t)pc->start * orowb, d, bytes, err);
				if (rv != WT_OK)
					return rv;
			}
			d += bytes;
		}
	}
	for (uint32_t s = 0; s < g->n_srcs; s++) {
		if (!pr->ld[s].ok || pr->ld[s].direct)
			continue;
		int rv = stream_src(pr, g, s, err);
		if (rv != WT_OK)
			return rv;
	}
	for (size_t m = 0; m < g->n_m; m++) {
		if (!sm_prod_selected(pr, g->m[m].rank))
			continue;
		const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
		int rv =
		    sm_prod_emit(pr, g->m[m].rank, g->m[m].ix, pr->obufs[m].p, o->info.nbytes, err);
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

/* The selected ranks' outputs of g, the sources loaded for them. */
int sm_prod_group(prod *pr, const sm_group *g, wt_errbuf *err)
{
	bool any = false;
	for (size_t m = 0; m < g->n_m && !any; m++)
		any = sm_prod_selected(pr, g->m[m].rank);
	if (!any)
		return WT_OK;
	int rv = slots(pr, g->n_srcs, err);
	if (rv != WT_OK)
		return rv;
	for (uint32_t s = 0; s < g->n_srcs; s++)
		scan_src(pr, g, s);
	bool done = false; /* experts stored one tensor each, a few at a time */
	rv = sm_prod_units(pr, g, &done, err);
	if (rv != WT_OK || done)
		return rv;
	if (stream_ok(pr, g))
		return do_stream(pr, g, err);
	bool streamed = false; /* a large stack: a few experts at a time */
	int64_t per = sm_stack_batch(pr, g, &streamed);
	if (per > 0)
		return sm_prod_batched(pr, g, per, streamed, err);
	for (uint32_t s = 0; s < g->n_srcs && rv == WT_OK; s++)
		rv = sm_prod_load_src(pr, g, s, err);
	for (size_t m = 0; m < g->n_m && rv == WT_OK; m++)
		if (sm_prod_selected(pr, g->m[m].rank))
			rv = do_out(pr, g->m[m].rank, g->m[m].ix, err);
	return rv;
}

void sm_prod_free(prod *pr)
{
	for (size_t s = 0; s < pr->n_slots; s++) {
		free(pr->raw[s].p);
		free(pr->dq[s].p);
	}
	free(pr->raw);
	free(pr->dq);
	free(pr->ld);
	for (size_t m = 0; m < pr->n_obufs; m++)
		free(pr->obufs[m].p);
	free(pr->obufs);
	free(pr->chunk.p);
	free(pr->out.p);
	free(pr->q.p);
	free(pr->sc.p);
	memset(pr, 0, sizeof(*pr));
}
