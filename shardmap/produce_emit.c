/*
 * produce_emit.c — what leaves the producer (produce_int.h): outputs emitted whole or in
 * parts with their scales checked first (finite, not negative), SM_O_QUANT outputs
 * quantized unit by unit and emitted with their scales, and members of a group emitted
 * straight from their source in parts (sm_prod_parts, produce_run.c's large
 * pass-through outputs). Building the outputs: produce.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "kernels/kernels.h"
#include "shardmap/produce_int.h"

/* Emitted scales (those copied from the checkpoint by a pass-through
 * included) must be finite and not negative: engines multiply by them (a
 * NaN block scale went through unchanged). */
static int scales_ok(const sm_out *o, const void *bytes, uint64_t n, uint64_t first, uint32_t rank,
                     wt_errbuf *err)
{
	if ((o->info.role != SM_ROLE_SCALE && o->info.role != SM_ROLE_INPUT_SCALE) ||
	    o->info.dtype != WT_F32)
		return WT_OK;
	const uint8_t *p = bytes;
	for (uint64_t i = 0; i < n / 4; i++) {
		float v;
		memcpy(&v, p + i * 4, 4);
		if (!(isfinite(v) && v >= 0.0f))
			return wt_seterr(err, WT_ENONFINITE,
			                 "tensor '%s' (rank %u): scale %g at element %" PRIu64
			                 " is not a finite number >= 0; fix the checkpoint or "
			                 "exclude the module",
			                 o->name, rank, (double)v, first + i);
	}
	return WT_OK;
}

int sm_prod_emit(prod *pr, uint32_t rank, size_t ix, const void *data, uint64_t n, wt_errbuf *err)
{
	int rv = scales_ok(&pr->p->ranks[rank].outs[ix], data, n, 0, rank, err);
	return rv != WT_OK ? rv : pr->emit(pr->ctx, rank, pr->p->ranks[rank].pos[ix], data, n, err);
}

int sm_prod_emit_part(prod *pr, uint32_t rank, size_t ix, uint64_t off, const void *data,
                      uint64_t n, wt_errbuf *err)
{
	int rv = scales_ok(&pr->p->ranks[rank].outs[ix], data, n, off / 4, rank, err);
	return rv != WT_OK
	           ? rv
	           : pr->emit_part(pr->ctx, rank, pr->p->ranks[rank].pos[ix], off, data, n, err);
}

int sm_prod_quant_units(const prod *pr, uint32_t rank, const sm_out *o, const uint8_t *in,
                        int64_t u0, int64_t u1, uint8_t *q, float *sc, wt_errbuf *err)
{
	const sm_out *so = &pr->p->ranks[rank].outs[o->scale_ix];
	int64_t N = o->rows / o->units, K = o->cols, G = pr->p->layout.group_size;
	size_t ub = (size_t)N * (size_t)K * wt_dtype_size(o->work);
	size_t qb = o->info.nbytes / (size_t)o->units, sn = so->info.nbytes / 4 / (size_t)o->units;
	for (int64_t u = u0; u < u1; u++) {
		int64_t bad = -1;
		int rv = kern_quantize(o->q, in + (size_t)(u - u0) * ub, o->work, N, K, G,
		                       q + (size_t)(u - u0) * qb, sc + (size_t)u * sn, &bad);
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
	return WT_OK;
}

int sm_prod_quant(prod *pr, uint32_t rank, const sm_out *o, const uint8_t *in, wt_errbuf *err)
{
	const sm_out *so = &pr->p->ranks[rank].outs[o->scale_ix];
	if (sm_prod_reserve(&pr->q, o->info.nbytes) || sm_prod_reserve(&pr->sc, so->info.nbytes))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory for its quantization buffers (%" PRIu64
		                 " + %" PRIu64 " bytes)",
		                 o->name, o->info.nbytes, so->info.nbytes);
	int rv = sm_prod_quant_units(pr, rank, o, in, 0, o->units, pr->q.p, (float *)pr->sc.p, err);
	if (rv != WT_OK)
		return rv;
	rv = sm_prod_emit(pr, rank, o->scale_ix, pr->sc.p, so->info.nbytes, err);
	if (rv == WT_OK)
		rv = sm_prod_emit(pr, rank, (size_t)(o - pr->p->ranks[rank].outs), pr->q.p,
		                  o->info.nbytes, err);
	return rv;
}

int sm_prod_parts(prod *pr, const sm_group *g, size_t m0, size_t mstep, sm_emit_part_fn part,
                  uint64_t part_bytes, const _Atomic bool *stop, wt_errbuf *err)
{
	if (sm_prod_reserve(&pr->chunk, (size_t)part_bytes))
		return wt_seterr(err, WT_ENOMEM,
		                 "produce: out of memory for a %" PRIu64 "-byte part", part_bytes);
	bool more = true;
	for (int64_t k = 0; more; k++) {
		more = false;
		for (size_t m = m0; m < g->n_m; m += mstep) {
			uint32_t rank = g->m[m].rank;
			const sm_out *o = &pr->p->ranks[rank].outs[g->m[m].ix];
			const sm_piece *pc = &pr->p->pieces[o->p0]; /* then perhaps zero rows */
			const ckpt_tensor *t = ckpt_tensor_at(pr->c, g->srcs[pc->src].t);
			uint64_t rowb = t->nbytes / (uint64_t)sm_trows(t);
			int64_t all = (int64_t)(o->info.nbytes / rowb);
			int64_t per = (int64_t)(part_bytes / rowb), r0 = k * per;
			if (r0 >= all)
				continue;
			if (atomic_load(stop)) /* a part can be many MiB: do not read them all */
				return wt_seterr(
				    err, WT_ECANCELED,
				    "produce: stopped (another production thread failed)");
			int64_t rows = all - r0 < per ? all - r0 : per;
			int64_t from_src = pc->len - r0 < rows ? pc->len - r0 : rows;
			if (from_src < 0)
				from_src = 0;
			more = more || r0 + rows < all;
			uint64_t n = (uint64_t)rows * rowb, ns = (uint64_t)from_src * rowb;
			memset(pr->chunk.p + ns, 0, n - ns);
			int rv = ns == 0 ? WT_OK
			                 : ckpt_read(pr->c, t, (uint64_t)(pc->start + r0) * rowb,
			                             pr->chunk.p, ns, err);
			if (rv == WT_OK)
				rv = part(pr->ctx, rank, pr->p->ranks[rank].pos[g->m[m].ix],
				          (uint64_t)r0 * rowb, pr->chunk.p, n, err);
			if (rv != WT_OK)
				return rv;
		}
	}
	return WT_OK;
}
