/*
 * produce_stack.c — expert stacks read expert by expert (docs/format.md 4.7).
 *
 * A source loaded transformed (SM_SRC_TRANS: Llama 4's / GPT-OSS's [E, K, N]
 * transposed to [E, N, K]; SM_SRC_DQ_TRANS: an fbgemm FP8 stack dequantized and
 * transposed; SM_SRC_DQ_MX: MXFP4 blocks [E, N, G, 16] dequantized; SM_SRC_DEINT:
 * a gate/up bias [E, 2n] de-interleaved; SM_SRC_COLVEC: an fbgemm stack's scales)
 * is transformed one expert at a time, and its view (the rows the pieces index) is
 * expert-major: view rows [r0, r1) lie in experts [r0 / n, ceil(r1 / n)), n the
 * view rows of one expert. So the selected ranks' rows of it are produced from
 * those experts' bytes alone: an expert-parallel rank reads and transforms its
 * own experts (its scales too), not the stack. A column piece (TP without EP:
 * every expert, a column slice of each) still needs all of them.
 *
 * And the work items of such a group: under EP the ranks of one EP group (the
 * tp_size consecutive ranks that replicate the same experts) read experts no
 * other EP group reads, so the group is produced one EP group at a time
 * (sm_stack_block), every byte still read once, and the memory a production
 * holds for the stack is its share (1 / ep_size), not the whole and its copy.
 *
 * And when the experts a work item needs, read and transformed at once, would
 * hold more than a ceiling (pr->batch_bytes; TP without EP needs every expert),
 * they are read and transformed a few at a time (produce_batch.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "shardmap/produce_int.h"
#include "shardmap/quant_f8.h"
#include "shardmap/quant_mx.h"

/* t as its source reads it: a 2-D stack [E*K, N] (SM_F_STACK2) as [E, K, N] in *tmp */
static const ckpt_tensor *stack_view(const sm_src *src, const ckpt_tensor *t, ckpt_tensor *tmp)
{
	if (src->e2d <= 0 || t->ndim != 2 || t->shape[0] % src->e2d != 0)
		return t;
	*tmp = *t;
	tmp->ndim = 3;
	tmp->shape[0] = src->e2d;
	tmp->shape[1] = t->shape[0] / src->e2d;
	tmp->shape[2] = t->shape[1];
	return tmp;
}

bool sm_stack_of(const sm_src *src, const ckpt_tensor *t0, sm_stack *st)
{
	ckpt_tensor tmp;
	const ckpt_tensor *t = stack_view(src, t0, &tmp);
	int64_t vrows;
	switch (src->mode) {
	case SM_SRC_TRANS:
	case SM_SRC_DQ_TRANS: /* [E, K, N] viewed [E*N, K] */
		if (t->ndim != 3)
			return false;
		vrows = t->shape[2];
		break;
	case SM_SRC_COLVEC: /* [E, 1, N] or [E, N, 1] viewed [E*N, 1] */
		if (t->ndim != 3)
			return false;
		vrows = t->shape[1] * t->shape[2];
		break;
	case SM_SRC_DQ_MX: /* [E, N, G, 16] viewed [E*N, G*32] */
		if (t->ndim != 4)
			return false;
		vrows = t->shape[1];
		break;
	case SM_SRC_DEINT: /* [E, 2n] viewed [E*2n, 1] */
		if (t->ndim != 2)
			return false;
		vrows = t->shape[1];
		break;
	default:
		return false;
	}
	int64_t E = t->shape[0];
	if (E <= 0 || vrows <= 0 || t->nbytes % (uint64_t)E != 0)
		return false;
	st->experts = E;
	st->vrows = vrows;
	st->ebytes = t->nbytes / (uint64_t)E;
	return true;
}

void sm_stack_span(const sm_stack *st, int64_t r0, int64_t r1, int64_t *e0, int64_t *e1)
{
	int64_t a = r0 / st->vrows, b = (r1 + st->vrows - 1) / st->vrows;
	if (a < 0)
		a = 0;
	if (b > st->experts)
		b = st->experts;
	*e0 = a;
	*e1 = b > a ? b : a;
}

/* The part of t read: its experts [e0, e0 + shape[0]), or the whole with e0 0. */
typedef struct part {
	ckpt_tensor t; /* t's shape[0] and nbytes those of the part */
	int64_t e0;
	uint64_t off; /* in t */
} part;

/* Transform the part of src read into raw[s] (ld->base, ld->dt, ld->cols set). */
static int transform(prod *pr, const sm_src *src, uint32_t s, const part *pt, wt_errbuf *err)
{
	loaded *ld = &pr->ld[s];
	const ckpt_tensor *t = &pt->t;
	size_t esz = wt_dtype_size(t->dtype);
	if (src->mode == SM_SRC_COLVEC) {
		ld->cols = 1; /* [numel, 1] */
		return WT_OK;
	}
	if (src->mode == SM_SRC_DQ_TRANS) {
		size_t n = (size_t)t->nbytes; /* one byte per element */
		if (sm_prod_reserve(&pr->dq[s], n * 4))
			return wt_seterr(err, WT_ENOMEM,
			                 "tensor '%s': out of memory dequantizing it (%zu bytes)",
			                 t->name, n * 4);
		int rv = shardmap_f8_dequant(pr->c, src->mode, t, pt->e0,
		                             ckpt_tensor_at(pr->c, src->scale), pr->raw[s].p,
		                             (float *)pr->dq[s].p, &ld->cols, err);
		ld->base = pr->dq[s].p;
		ld->dt = WT_F32;
		return rv;
	}
	if (src->mode == SM_SRC_DEINT || src->mode == SM_SRC_TRANS) {
		if (sm_prod_reserve(&pr->dq[s], (size_t)t->nbytes))
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory reading it",
			                 t->name);
		ld->base = pr->dq[s].p;
		if (src->mode == SM_SRC_DEINT) {
			kern_deinterleave_rows(pr->dq[s].p, pr->raw[s].p, sm_trows(t),
			                       sm_tcols(t) / 2, esz);
			ld->cols = 1;
			return WT_OK;
		}
		int64_t E = t->shape[0], K = t->shape[1], N = t->shape[2];
		kern_transpose_stack(pr->dq[s].p, pr->raw[s].p, E, K, N, esz);
		ld->cols = K;
		if (src->deint) { /* back into raw[s], whose bytes are no longer needed */
			kern_deinterleave_rows(pr->raw[s].p, pr->dq[s].p, E, N / 2,
			                       (size_t)K * esz);
			ld->base = pr->raw[s].p;
		}
		return WT_OK;
	}
	WT_ASSERT(src->mode == SM_SRC_DQ_MX);
	/* blocks [..., N, G, 16]: N*G*32 values per leading index, BF16 (exact): half the
	 * memory of F32 (a gpt-oss-120b gate/up stack: 4.2 GB instead of 8.5) */
	size_t n = (size_t)t->nbytes * 2;
	if (sm_prod_reserve(&pr->dq[s], n * 2))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory dequantizing it (%zu bytes)", t->name,
		                 n * 2);
	int rv = shardmap_mx_dequant(pr->c, t, pt->e0, ckpt_tensor_at(pr->c, src->scale),
	                             pr->raw[s].p, src->deint, (uint16_t *)pr->dq[s].p, err);
	if (rv != WT_OK)
		return rv;
	ld->base = pr->dq[s].p;
	ld->dt = WT_BF16;
	ld->cols = t->shape[t->ndim - 2] * 32;
	return WT_OK;
}

int sm_prod_load_stack(prod *pr, const sm_group *g, uint32_t s, wt_errbuf *err)
{
	const sm_src *src = &g->srcs[s];
	loaded *ld = &pr->ld[s];
	ckpt_tensor tmp;
	const ckpt_tensor *t = stack_view(src, ld->t, &tmp);
	part pt = {.t = *t, .e0 = 0, .off = 0};
	sm_stack st;
	if (sm_stack_of(src, t, &st)) {
		int64_t e1;
		sm_stack_span(&st, ld->r0, ld->r1, &pt.e0, &e1);
		pt.t.shape[0] = e1 - pt.e0;
		pt.t.nbytes = (uint64_t)(e1 - pt.e0) * st.ebytes;
		pt.off = (uint64_t)pt.e0 * st.ebytes;
		ld->r0 = pt.e0 * st.vrows;
		ld->r1 = e1 * st.vrows;
	} else {
		ld->r0 = 0; /* read whole: scan_src's rows [0, all) */
	}
	if (sm_prod_reserve(&pr->raw[s], (size_t)pt.t.nbytes))
		return wt_seterr(err, WT_ENOMEM,
		                 "tensor '%s': out of memory reading %" PRIu64 " bytes", t->name,
		                 pt.t.nbytes);
	int rv = ckpt_read(pr->c, ld->t, pt.off, pr->raw[s].p, pt.t.nbytes, err);
	if (rv != WT_OK)
		return rv;
	ld->base = pr->raw[s].p;
	ld->dt = t->dtype;
	ld->cols = sm_tcols(t);
	return transform(pr, src, s, &pt, err);
}

/* ---- work items: one EP group at a time ---- */

typedef struct span {
	int64_t e0, e1; /* experts; e0 > e1: none yet */
	uint64_t ebytes;
} span;

/* Widen *sp (a block's span of source pc->src) with the experts piece pc reads;
 * false when pc is not a row piece of a stack. */
static bool add_piece(const ckpt *c, const sm_group *g, const sm_piece *pc, span *sp)
{
	const sm_src *src = &g->srcs[pc->src];
	sm_stack st;
	if (pc->cols || src->t == UINT32_MAX || !sm_stack_of(src, ckpt_tensor_at(c, src->t), &st))
		return false;
	int64_t e0, e1;
	sm_stack_span(&st, pc->start, pc->start + pc->len, &e0, &e1);
	if (e0 >= e1)
		return true;
	bool empty = sp->e0 > sp->e1;
	if (empty || e0 < sp->e0)
		sp->e0 = e0;
	if (empty || e1 > sp->e1)
		sp->e1 = e1;
	sp->ebytes = st.ebytes;
	return true;
}

/* Whether the blocks' spans (n_blocks per source, n_srcs sources) are pairwise
 * disjoint, at least two blocks read something, and (remote store) each block's
 * read is at least hint bytes. */
static bool spans_apart(const span *sp, size_t n_srcs, uint32_t n_blocks, size_t hint)
{
	uint32_t busy = 0;
	for (uint32_t b = 0; b < n_blocks; b++) {
		bool any = false;
		for (size_t s = 0; s < n_srcs; s++) {
			const span *x = &sp[s * n_blocks + b];
			if (x->e0 > x->e1)
				continue;
			any = true;
			if (hint > 0 && (uint64_t)(x->e1 - x->e0) * x->ebytes < hint)
				return false;
			for (uint32_t o = 0; o < b; o++) {
				const span *y = &sp[s * n_blocks + o];
				/* two EP groups share experts: read them once, whole */
				if (y->e0 <= y->e1 && x->e0 < y->e1 && y->e0 < x->e1)
					return false;
			}
		}
		busy += any;
	}
	return busy >= 2;
}

/* Spans one decision holds (sources x EP groups: a stacked source's group has 3
 * sources, so ep_size up to 170); beyond, the group is produced whole. */
enum { STACK_MAX_SPANS = 512 };

uint32_t sm_stack_block(const ckpt *c, const sm_plan *p, const sm_group *g)
{
	if (p->ep < 2 || p->tp < 1 || g->n_srcs == 0 || g->n_srcs * p->ep > STACK_MAX_SPANS)
		return 0;
	uint32_t blk = p->tp, n_blocks = p->ep;
	span sp[STACK_MAX_SPANS];
	for (size_t k = 0; k < g->n_srcs * n_blocks; k++)
		sp[k] = (span){.e0 = 1, .e1 = 0};
	bool ok = true;
	for (size_t m = 0; m < g->n_m && ok; m++) {
		uint32_t rank = g->m[m].rank, b = rank / blk;
		const sm_out *o = &p->ranks[rank].outs[g->m[m].ix];
		ok = b < n_blocks &&
		     (o->okind == SM_O_DATA || o->okind == SM_O_QUANT || o->okind == SM_O_QSCALE);
		for (size_t k = 0; k < o->np && ok; k++) {
			const sm_piece *pc = &p->pieces[o->p0 + k];
			if (pc->src != SM_ZERO)
				ok = add_piece(c, g, pc, &sp[pc->src * n_blocks + b]);
		}
	}
	ok = ok && spans_apart(sp, g->n_srcs, n_blocks, store_read_hint(ckpt_store(c)));
	return ok ? blk : 0;
}
