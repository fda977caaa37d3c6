/*
 * produce_batch.c — a large expert stack transformed a few experts at a time
 * (docs/format.md 4.7).
 *
 * Without EP every rank needs every expert (a column slice of each), so a work
 * item cannot leave experts out; instead the experts are read and transformed
 * `per` at a time (their bytes bounded by pr->batch_bytes), and each selected
 * output takes the rows of its pieces that the batch holds (row pieces: their
 * rows in the batch; column pieces, which index every row from 0: the batch's
 * rows).
 *
 * Streamed (the caller takes parts, pr->emit_part): an output whose rows come in
 * order, batch after batch (its pieces expert-major, as a stack's outputs are),
 * is emitted in parts as the batches come; a quantized one is quantized unit by
 * unit (an expert each) as its units complete, its scales emitted after its codes.
 * An output then holds less than a part carried over and one batch's rows, not
 * its whole; with TP = 8 the ranks' outputs of a stack are the whole stack (and
 * in F32 before quantizing, twice a BF16 one). Otherwise each output is assembled
 * across the batches in its own buffer and emitted once every batch is in.
 *
 * Experts stored one tensor each (Mixtral's, Qwen-MoE's, DeepSeek's) stack the same
 * way with nothing to transform, but a work item of every rank still read all of a
 * layer's experts and held every output (dequantized to F32 first when converted):
 * sm_prod_units streams them too, a batch being output units [b0, b1) (the experts
 * of every selected rank at those slots) whose source tensors alone are read, and
 * freed before the next batch.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "kernels/kernels.h"
#include "shardmap/produce_int.h"

/* Bytes held for one expert of a stack source: read, and its transformed copy. */
static uint64_t expert_cost(const sm_src *src, const sm_stack *st)
{
	switch (src->mode) {
	case SM_SRC_COLVEC:
		return st->ebytes; /* used as read */
	case SM_SRC_DQ_TRANS:
		return st->ebytes * 6; /* codes, their transposed copy, F32 */
	case SM_SRC_DQ_MX:
		return st->ebytes * 5; /* blocks (two values a byte), BF16 */
	default:
		return st->ebytes * 2; /* SM_SRC_TRANS, SM_SRC_DEINT: a transformed copy */
	}
}

/* A selected output that the batches fill (not a scale its weight's quantization
 * writes). */
static const sm_out *member_out(const prod *pr, const sm_group *g, size_t m)
{
	const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
	return sm_prod_selected(pr, g->m[m].rank) && o->okind != SM_O_QSCALE ? o : NULL;
}

static wt_dtype out_dtype(const sm_out *o)
{
	return o->okind == SM_O_QUANT ? o->work : o->info.dtype;
}

/* What a batch [b0, b1) is: experts of stack sources (unit_of NULL), or output units
 * (unit_of[s]: the unit whose pieces alone read source s, < 0: none). want[s]: the
 * rows of source s the selected ranks need (lo > hi: none). */
typedef struct batching {
	const int64_t (*want)[2];
	const int64_t *unit_of;
} batching;

/* Rows [*a, *a + *n) of piece pc's output rows come from batch [b0, b1); false when pc
 * is not a stack's rows (stacks) or is a zero piece. */
static bool piece_rows(const prod *pr, const sm_group *g, const batching *bt, const sm_piece *pc,
                       int64_t b0, int64_t b1, int64_t *a, int64_t *n)
{
	*a = *n = 0;
	if (pc->src == SM_ZERO)
		return false;
	if (bt->unit_of != NULL) {
		if (pc->unit >= b0 && pc->unit < b1)
			*n = pc->out_rows;
		return true;
	}
	sm_stack st;
	if (pr->ld[pc->src].t == NULL || !sm_stack_of(&g->srcs[pc->src], pr->ld[pc->src].t, &st) ||
	    (!pc->cols && pc->out_rows != pc->len))
		return false;
	int64_t s0 = pc->cols ? 0 : pc->start, s1 = pc->cols ? pc->out_rows : s0 + pc->len;
	int64_t lo = s0 > b0 * st.vrows ? s0 : b0 * st.vrows;
	int64_t hi = s1 < b1 * st.vrows ? s1 : b1 * st.vrows;
	if (lo < hi) {
		*a = lo - s0;
		*n = hi - lo;
	}
	return true;
}

/* The union of the output rows of o that batch [b0, b1) gives its pieces, as [*ra,
 * *rb) (empty: *ra = *rb = 0); false when it is not one interval (two column
 * pieces stacked, a zero piece between rows) or a piece is not a stack's rows. */
static bool batch_rows(const prod *pr, const sm_group *g, const batching *bt, const sm_out *o,
                       int64_t b0, int64_t b1, int64_t *ra, int64_t *rb)
{
	int64_t lo = INT64_MAX, hi = -1, covered = 0, pos = 0;
	for (size_t k = 0; k < o->np; k++) {
		const sm_piece *pc = &pr->p->pieces[o->p0 + k];
		int64_t a, n;
		if (pc->src != SM_ZERO && !piece_rows(pr, g, bt, pc, b0, b1, &a, &n))
			return false;
		if (pc->src != SM_ZERO && n > 0) {
			lo = pos + a < lo ? pos + a : lo;
			hi = pos + a + n > hi ? pos + a + n : hi;
			covered += n;
		}
		pos += pc->out_rows;
	}
	*ra = hi < 0 ? 0 : lo;
	*rb = hi < 0 ? 0 : hi;
	return hi < 0 || hi - lo == covered; /* the pieces' output rows are disjoint */
}

/* Whether o has zero rows (a padded vocabulary's: never a stack's). */
static bool has_zeros(const prod *pr, const sm_out *o)
{
	for (size_t k = 0; k < o->np; k++)
		if (pr->p->pieces[o->p0 + k].src == SM_ZERO)
			return true;
	return false;
}

/* A streamed output's state across the batches. */
typedef struct mstate {
	int64_t done;  /* output rows in so far */
	int64_t most;  /* the most rows one batch gives it */
	uint64_t fill; /* bytes held (carried over from the last batch, then this one's) */
	uint64_t off;  /* bytes emitted */
	float *sc;     /* a quantized output's scales, all of them (owned) */
} mstate;

/* Whether every selected output of g can be streamed with batches of `per`
 * experts in [lo, hi): it has rows and no zero rows, and its rows come in order,
 * batch after batch (a quantized one's in whole units). ms (NULL: not wanted)
 * [m].most set, [m].done 0. */
static bool stream_plan(const prod *pr, const sm_group *g, const batching *bt, int64_t lo,
                        int64_t hi, int64_t per, mstate *ms)
{
	if (pr->emit_part == NULL || pr->part_bytes == 0 || pr->part_bytes % 16 != 0)
		return false;
	for (size_t m = 0; m < g->n_m; m++) {
		const sm_out *o = member_out(pr, g, m);
		if (o == NULL)
			continue;
		bool quant = o->okind == SM_O_QUANT;
		if (o->units < 1 || o->rows < 1 || o->rows % o->units != 0 || has_zeros(pr, o))
			return false;
		int64_t N = o->rows / o->units, done = 0, most = 0;
		for (int64_t b0 = lo; b0 < hi; b0 += per) {
			int64_t ra, rb;
			if (!batch_rows(pr, g, bt, o, b0, b0 + per < hi ? b0 + per : hi, &ra, &rb))
				return false;
			if (ra == rb)
				continue;
			if (ra != done || (quant && (ra % N != 0 || rb % N != 0)))
				return false;
			done = rb;
			most = rb - ra > most ? rb - ra : most;
		}
		if (done != o->rows)
			return false;
		if (ms != NULL)
			ms[m] = (mstate){.most = most};
	}
	return true;
}

int64_t sm_stack_batch(const prod *pr, const sm_group *g, bool *streamed)
{
	*streamed = false;
	uint64_t cap = pr->batch_bytes ? pr->batch_bytes : SM_STACK_BATCH_BYTES, per = 0;
	int64_t E = -1, lo = INT64_MAX, hi = -1;
	for (uint32_t s = 0; s < g->n_srcs; s++) {
		const loaded *ld = &pr->ld[s];
		if (!ld->ok)
			continue;
		sm_stack st;
		if (ld->direct || !sm_stack_of(&g->srcs[s], ld->t, &st) ||
		    (E >= 0 && st.experts != E))
			return 0;
		E = st.experts;
		int64_t e0, e1;
		sm_stack_span(&st, ld->r0, ld->r1, &e0, &e1);
		lo = e0 < lo ? e0 : lo;
		hi = e1 > hi ? e1 : hi;
		per += expert_cost(&g->srcs[s], &st);
	}
	if (E < 0 || per == 0 || hi <= lo || (uint64_t)(hi - lo) * per <= cap)
		return 0;
	uint64_t sum = 0, most = 0; /* the outputs' assembled bytes: all, the largest */
	for (size_t m = 0; m < g->n_m; m++) {
		const sm_out *o = member_out(pr, g, m);
		if (o == NULL)
			continue;
		if (o->okind != SM_O_DATA && o->okind != SM_O_QUANT)
			return 0;
		uint64_t n = (uint64_t)o->rows * (uint64_t)o->cols * wt_dtype_size(out_dtype(o));
		sum += n;
		most = n > most ? n : most;
	}
	int64_t n = (int64_t)(cap / per);
	n = n < 1 ? 1 : n;
	/* streamed, the outputs hold a part each and one batch's rows: batching always
	 * wins, and the batch's rows count towards the ceiling (their share of the
	 * outputs: one expert's of each) */
	int64_t ns = (int64_t)(cap / (per + sum / (uint64_t)(hi - lo)));
	ns = ns < 1 ? 1 : ns;
	*streamed = stream_plan(pr, g, &(batching){0}, lo, hi, ns, NULL);
	if (*streamed)
		return ns;
	/* assembled, every output is held at once (the replicas of the ranks of an EP
	 * group too); at once, the stack and one output: batch only when that is less */
	return sum + (uint64_t)n * per < (uint64_t)(hi - lo) * per + most ? n : 0;
}

/* Into out (o's rows from skip on, in dtype dd), the part of each piece that the rows
 * loaded this batch ([ld->r0, ld->r1) of sources with ld->ok) hold. */
static int place(prod *pr, const sm_out *o, uint8_t *out, wt_dtype dd, int64_t skip, wt_errbuf *err)
{
	size_t desz = wt_dtype_size(dd), drow = (size_t)o->cols * desz;
	int64_t pos = 0; /* the output row of the piece's first row */
	for (size_t k = 0; k < o->np; pos += pr->p->pieces[o->p0 + k].out_rows, k++) {
		const sm_piece *pc = &pr->p->pieces[o->p0 + k];
		const loaded *ld = pc->src == SM_ZERO ? NULL : &pr->ld[pc->src];
		if (ld == NULL || !ld->ok)
			continue;
		size_t sesz = wt_dtype_size(ld->dt), srow = (size_t)ld->cols * sesz;
		/* rows [a, b) of the source view: a row piece's, or (columns) the output's */
		int64_t s0 = pc->cols ? 0 : pc->start, s1 = pc->cols ? pc->out_rows : s0 + pc->len;
		int64_t a = s0 > ld->r0 ? s0 : ld->r0, b = s1 < ld->r1 ? s1 : ld->r1;
		if (a >= b)
			continue;
		uint8_t *dst = out + (size_t)(pos + (a - s0) - skip) * drow;
		const uint8_t *src = ld->base + (size_t)(a - ld->r0) * srow;
		int rv = WT_OK;
		if (!pc->cols)
			rv = sm_prod_conv(dst, dd, src, ld->dt, (size_t)(b - a) * (size_t)ld->cols);
		else if (dd == ld->dt)
			kern_copy2d(dst, drow, src + (size_t)pc->start * sesz, srow,
			            (size_t)(b - a), (size_t)pc->len * desz);
		else
			for (int64_t r = 0; r < b - a && rv == WT_OK; r++)
				rv = sm_prod_conv(dst + (size_t)r * drow, dd,
				                  src + (size_t)r * srow + (size_t)pc->start * sesz,
				                  ld->dt, (size_t)pc->len);
		if (rv != WT_OK)
			return wt_seterr(err, rv, "tensor '%s': converting %s to %s failed",
			                 o->name, wt_dtype_name(ld->dt), wt_dtype_name(dd));
	}
	return WT_OK;
}

/* The output buffers of g's selected members, their zero rows set. */
static int out_bufs(prod *pr, const sm_group *g, wt_errbuf *err)
{
	int rv = sm_prod_obufs(pr, g->n_m, err);
	for (size_t m = 0; m < g->n_m && rv == WT_OK; m++) {
		const sm_out *o = member_out(pr, g, m);
		if (o == NULL)
			continue;
		size_t drow = (size_t)o->cols * wt_dtype_size(out_dtype(o)),
		       n = (size_t)o->rows * drow;
		if (o->okind == SM_O_DATA && n < o->info.nbytes)
			n = (size_t)o->info.nbytes; /* (they are equal) */
		if (sm_prod_reserve(&pr->obufs[m], n))
			return wt_seterr(err, WT_ENOMEM,
			                 "tensor '%s': out of memory for its %zu assembled bytes",
			                 o->name, n);
		uint8_t *d = pr->obufs[m].p;
		for (size_t k = 0; k < o->np; k++) {
			const sm_piece *pc = &pr->p->pieces[o->p0 + k];
			if (pc->src == SM_ZERO)
				memset(d, 0, (size_t)pc->out_rows * drow);
			d += (size_t)pc->out_rows * drow;
		}
	}
	return rv;
}

/* Load batch [b0, b1) of the needed rows of g's sources: a stack's rows of those
 * experts, or the sources of those units whole (the buffers of every other source
 * freed: the batch before's). */
static int load_batch(prod *pr, const sm_group *g, const batching *bt, int64_t b0, int64_t b1,
                      wt_errbuf *err)
{
	const int64_t(*want)[2] = bt->want;
	for (uint32_t s = 0; s < g->n_srcs && bt->unit_of != NULL; s++) {
		loaded *ld = &pr->ld[s];
		ld->ok = want[s][0] <= want[s][1] && bt->unit_of[s] >= b0 && bt->unit_of[s] < b1;
		if (!ld->ok) {
			free(pr->raw[s].p);
			free(pr->dq[s].p);
			pr->raw[s] = pr->dq[s] = (buf){0};
			continue;
		}
		ld->r0 = want[s][0];
		ld->r1 = want[s][1];
		ld->direct = false; /* placed from the buffer, as a batch's rows */
		int rv = sm_prod_load_src(pr, g, s, err);
		if (rv != WT_OK)
			return rv;
	}
	for (uint32_t s = 0; s < g->n_srcs && bt->unit_of == NULL; s++) {
		loaded *ld = &pr->ld[s];
		sm_stack st;
		ld->ok = want[s][0] <= want[s][1] && sm_stack_of(&g->srcs[s], ld->t, &st);
		if (!ld->ok)
			continue;
		ld->r0 = want[s][0] > b0 * st.vrows ? want[s][0] : b0 * st.vrows;
		ld->r1 = want[s][1] < b1 * st.vrows ? want[s][1] : b1 * st.vrows;
		ld->ok = ld->r0 < ld->r1;
		int rv = ld->ok ? sm_prod_load_stack(pr, g, s, err) : WT_OK;
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

/* ---- assembled ---- */

static int assembled(prod *pr, const sm_group *g, const batching *bt, int64_t lo, int64_t hi,
                     int64_t per, wt_errbuf *err)
{
	int rv = out_bufs(pr, g, err);
	for (int64_t b0 = lo; b0 < hi && rv == WT_OK; b0 += per) {
		rv = load_batch(pr, g, bt, b0, b0 + per < hi ? b0 + per : hi, err);
		for (size_t m = 0; m < g->n_m && rv == WT_OK; m++) {
			const sm_out *o = member_out(pr, g, m);
			if (o != NULL)
				rv = place(pr, o, pr->obufs[m].p, out_dtype(o), 0, err);
		}
	}
	for (size_t m = 0; m < g->n_m && rv == WT_OK; m++) {
		const sm_out *o = member_out(pr, g, m);
		if (o == NULL)
			continue;
		rv = o->okind == SM_O_QUANT
		         ? sm_prod_quant(pr, g->m[m].rank, o, pr->obufs[m].p, err)
		         : sm_prod_emit(pr, g->m[m].rank, g->m[m].ix, pr->obufs[m].p,
		                        o->info.nbytes, err);
	}
	return rv;
}

/* ---- streamed ---- */

/* Emit the whole parts member m holds (at the tensor's end, the rest too) and keep
 * what is left at the front of its buffer. */
static int flush(prod *pr, const sm_group *g, size_t m, mstate *ms, uint64_t total, wt_errbuf *err)
{
	uint8_t *b = pr->obufs[m].p;
	uint64_t at = 0;
	int rv = WT_OK;
	while (rv == WT_OK && ms->fill - at > 0 &&
	       (ms->fill - at >= pr->part_bytes || ms->off + ms->fill - at == total)) {
		uint64_t n = ms->fill - at < pr->part_bytes ? ms->fill - at : pr->part_bytes;
		rv = sm_prod_emit_part(pr, g->m[m].rank, g->m[m].ix, ms->off, b + at, n, err);
		at += n;
		ms->off += n;
	}
	memmove(b, b + at, (size_t)(ms->fill - at));
	ms->fill -= at;
	return rv;
}

/* Each member's buffer (a part carried over and its most rows of one batch, as
 * codes when quantized), the F32 rows one batch quantizes (pr->out) and the
 * quantized outputs' scales. */
static int stream_bufs(prod *pr, const sm_group *g, mstate *ms, wt_errbuf *err)
{
	int rv = sm_prod_obufs(pr, g->n_m, err);
	size_t work = 0;
	for (size_t m = 0; m < g->n_m && rv == WT_OK; m++) {
		const sm_out *o = member_out(pr, g, m);
		if (o == NULL)
			continue;
		size_t drow = (size_t)o->cols * wt_dtype_size(out_dtype(o)), n;
		if (o->okind == SM_O_QUANT) {
			const sm_out *so = &pr->p->ranks[g->m[m].rank].outs[o->scale_ix];
			int64_t N = o->rows / o->units;
			n = (size_t)(o->info.nbytes / (uint64_t)o->units) *
			    (size_t)(ms[m].most / N);
			work = (size_t)ms[m].most * drow > work ? (size_t)ms[m].most * drow : work;
			if ((ms[m].sc = malloc(so->info.nbytes ? so->info.nbytes : 1)) == NULL)
				return wt_seterr(err, WT_ENOMEM,
				                 "tensor '%s': out of memory for its %" PRIu64
				                 " scale bytes",
				                 so->name, so->info.nbytes);
		} else {
			n = (size_t)ms[m].most * drow;
		}
		if (sm_prod_reserve(&pr->obufs[m], n + (size_t)pr->part_bytes))
			return wt_seterr(err, WT_ENOMEM,
			                 "tensor '%s': out of memory for its %zu streamed bytes",
			                 o->name, n + (size_t)pr->part_bytes);
	}
	if (rv == WT_OK && work > 0 && sm_prod_reserve(&pr->out, work))
		return wt_seterr(err, WT_ENOMEM,
		                 "produce: out of memory for %zu bytes of a batch to quantize",
		                 work);
	return rv;
}

/* Member m's rows of the batch just loaded into its buffer (quantized: as codes), and
 * its whole parts emitted. */
static int stream_rows(prod *pr, const sm_group *g, const batching *bt, size_t m, mstate *ms,
                       int64_t b0, int64_t b1, wt_errbuf *err)
{
	const sm_out *o = &pr->p->ranks[g->m[m].rank].outs[g->m[m].ix];
	int64_t ra, rb;
	bool one = batch_rows(pr, g, bt, o, b0, b1, &ra, &rb);
	if (one && ra == rb)
		return WT_OK;
	if (!one || ra != ms->done) /* (stream_plan checked them) */
		return wt_seterr(err, WT_ECORRUPT,
		                 "tensor '%s': experts [%" PRId64 ", %" PRId64
		                 ") give output rows out of order (produce_batch.c)",
		                 o->name, b0, b1);
	size_t drow = (size_t)o->cols * wt_dtype_size(out_dtype(o));
	int rv;
	if (o->okind == SM_O_QUANT) {
		int64_t N = o->rows / o->units;
		rv = place(pr, o, pr->out.p, o->work, ra, err);
		if (rv == WT_OK)
			rv = sm_prod_quant_units(pr, g->m[m].rank, o, pr->out.p, ra / N, rb / N,
			                         pr->obufs[m].p + ms->fill, ms->sc, err);
		ms->fill += (o->info.nbytes / (uint64_t)o->units) * (uint64_t)(rb / N - ra / N);
	} else {
		rv = place(pr, o, pr->obufs[m].p + ms->fill, o->info.dtype, ra, err);
		ms->fill += (uint64_t)(rb - ra) * drow;
	}
	ms->done = rb;
	return rv == WT_OK ? flush(pr, g, m, ms, o->info.nbytes, err) : rv;
}

/* After the last batch (whose flush emitted the last part): a quantized output's
 * scales. */
static int stream_end(prod *pr, const sm_group *g, size_t m, mstate *ms, wt_errbuf *err)
{
	uint32_t rank = g->m[m].rank;
	const sm_out *o = &pr->p->ranks[rank].outs[g->m[m].ix];
	if (ms->off != o->info.nbytes || ms->fill != 0) /* (stream_plan: every row comes) */
		return wt_seterr(err, WT_ECORRUPT,
		                 "tensor '%s': %" PRIu64 " of %" PRIu64
		                 " bytes emitted after the last batch (produce_batch.c)",
		                 o->name, ms->off, o->info.nbytes);
	if (o->okind != SM_O_QUANT)
		return WT_OK;
	const sm_out *so = &pr->p->ranks[rank].outs[o->scale_ix];
	return sm_prod_emit(pr, rank, o->scale_ix, ms->sc, so->info.nbytes, err);
}

static int streamed(prod *pr, const sm_group *g, const batching *bt, int64_t lo, int64_t hi,
                    int64_t per, wt_errbuf *err)
{
	mstate *ms = calloc(g->n_m ? g->n_m : 1, sizeof(*ms));
	if (ms == NULL)
		return wt_seterr(err, WT_ENOMEM, "produce: out of memory for %zu streamed outputs",
		                 g->n_m);
	int rv = stream_plan(pr, g, bt, lo, hi, per, ms)
	             ? stream_bufs(pr, g, ms, err)
	             : wt_seterr(err, WT_ECORRUPT, "produce: a stack's batches cannot be streamed");
	for (int64_t b0 = lo; b0 < hi && rv == WT_OK; b0 += per) {
		int64_t b1 = b0 + per < hi ? b0 + per : hi;
		rv = load_batch(pr, g, bt, b0, b1, err);
		for (size_t m = 0; m < g->n_m && rv == WT_OK; m++)
			if (member_out(pr, g, m) != NULL)
				rv = stream_rows(pr, g, bt, m, &ms[m], b0, b1, err);
	}
	for (size_t m = 0; m < g->n_m && rv == WT_OK; m++)
		if (member_out(pr, g, m) != NULL)
			rv = stream_end(pr, g, m, &ms[m], err);
	for (size_t m = 0; m < g->n_m; m++)
		free(ms[m].sc);
	free(ms);
	return rv;
}

int sm_prod_batched(prod *pr, const sm_group *g, int64_t per, bool stream, wt_errbuf *err)
{
	int64_t(*want)[2] = malloc((g->n_srcs ? g->n_srcs : 1) * sizeof(*want));
	if (want == NULL)
		return wt_seterr(err, WT_ENOMEM, "produce: out of memory for %zu source ranges",
		                 g->n_srcs);
	int64_t lo = INT64_MAX, hi = -1;
	for (uint32_t s = 0; s < g->n_srcs; s++) {
		const loaded *ld = &pr->ld[s];
		sm_stack st;
		want[s][0] = 1;
		want[s][1] = 0;
		if (!ld->ok || !sm_stack_of(&g->srcs[s], ld->t, &st))
			continue; /* (sm_stack_batch: every needed source is a stack) */
		want[s][0] = ld->r0;
		want[s][1] = ld->r1;
		int64_t e0, e1;
		sm_stack_span(&st, ld->r0, ld->r1, &e0, &e1);
		lo = e0 < lo ? e0 : lo;
		hi = e1 > hi ? e1 : hi;
	}
	batching bt = {.want = (const int64_t(*)[2])want};
	int rv = stream ? streamed(pr, g, &bt, lo, hi, per, err)
	                : assembled(pr, g, &bt, lo, hi, per, err);
	free(want);
	return rv;
}

/* ---- experts stored one tensor each ---- */

/* Bytes held while source s is loaded: read, and dequantized to F32 when converted. */
static uint64_t src_cost(const prod *pr, const sm_group *g, uint32_t s)
{
	const loaded *ld = &pr->ld[s];
	const ckpt_tensor *t = ld->t;
	int64_t rows = sm_trows(t);
	uint64_t raw = (uint64_t)(ld->r1 - ld->r0) * (rows > 0 ? t->nbytes / (uint64_t)rows : 0);
	switch (g->srcs[s].mode) {
	case SM_SRC_RAW:
		return raw;
	case SM_SRC_ROPE:
		return raw * 2; /* and its de-interleaved copy */
	case SM_SRC_DQ_CT:
	case SM_SRC_PACK_CT:
		return raw + (uint64_t)t->shape[0] *
		                 (uint64_t)shardmap_ct_cols(ckpt_get_config(pr->c), t) * 4;
	default:
		return raw + t->nbytes * 4; /* FP8: one byte an element */
	}
}

/* Units per batch (0: not this way) for g's selected outputs, every one a stack of U
 * units; unit_of and want (n_srcs each) filled. */
static int64_t unit_plan(const prod *pr, const sm_group *g, int64_t U, int64_t *unit_of,
                         int64_t (*want)[2], uint64_t *cost)
{
	uint64_t outs = 0, total = 0, most = 0;
	for (uint32_t s = 0; s < g->n_srcs; s++) {
		unit_of[s] = -1;
		want[s][0] = 1;
		want[s][1] = 0;
	}
	for (size_t m = 0; m < g->n_m; m++) {
		const sm_out *o = member_out(pr, g, m);
		if (o == NULL)
			continue;
		if (o->okind != SM_O_DATA && o->okind != SM_O_QUANT)
			return 0;
		outs += (uint64_t)o->rows * (uint64_t)o->cols * wt_dtype_size(out_dtype(o));
		for (size_t k = 0; k < o->np; k++) {
			const sm_piece *pc = &pr->p->pieces[o->p0 + k];
			if (pc->src == SM_ZERO || pc->unit < 0 || pc->unit >= U ||
			    (unit_of[pc->src] >= 0 && unit_of[pc->src] != pc->unit))
				return 0; /* a source two units read: a stack, or not experts */
			unit_of[pc->src] = pc->unit;
		}
	}
	for (uint32_t s = 0; s < g->n_srcs; s++) {
		const loaded *ld = &pr->ld[s];
		sm_stack st;
		if (!ld->ok)
			continue;
		if (unit_of[s] < 0 || sm_stack_of(&g->srcs[s], ld->t, &st))
			return 0;
		want[s][0] = ld->r0;
		want[s][1] = ld->r1;
		uint64_t c = src_cost(pr, g, s);
		cost[unit_of[s]] += c;
		total += c;
	}
	for (int64_t u = 0; u < U; u++)
		most = cost[u] > most ? cost[u] : most;
	uint64_t cap = pr->batch_bytes ? pr->batch_bytes : SM_STACK_BATCH_BYTES;
	if (total + outs <= cap || most == 0) /* at once: the sources and the outputs */
		return 0;
	/* a batch's sources and its rows of every output count towards the ceiling */
	int64_t per = (int64_t)(cap / (most + outs / (uint64_t)U));
	per = per < 1 ? 1 : per;
	batching bt = {.want = (const int64_t(*)[2])want, .unit_of = unit_of};
	return stream_plan(pr, g, &bt, 0, U, per, NULL) ? per : 0;
}

int sm_prod_units(prod *pr, const sm_group *g, bool *done, wt_errbuf *err)
{
	*done = false;
	if (pr->emit_part == NULL)
		return WT_OK;
	int64_t U = -1;
	for (size_t m = 0; m < g->n_m; m++) {
		const sm_out *o = member_out(pr, g, m);
		if (o == NULL)
			continue;
		if (o->units < 2 || (U >= 0 && o->units != U))
			return WT_OK;
		U = o->units;
	}
	if (U < 0)
		return WT_OK;
	size_t n = g->n_srcs ? g->n_srcs : 1;
	int64_t *unit_of = malloc(n * sizeof(*unit_of));
	int64_t(*want)[2] = malloc(n * sizeof(*want));
	uint64_t *cost = calloc((size_t)U, sizeof(*cost));
	int rv = WT_OK;
	if (unit_of == NULL || want == NULL || cost == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "produce: out of memory planning %zu sources", n);
	} else {
		int64_t per = unit_plan(pr, g, U, unit_of, want, cost);
		batching bt = {.want = (const int64_t(*)[2])want, .unit_of = unit_of};
		if (per > 0) {
			*done = true;
			rv = streamed(pr, g, &bt, 0, U, per, err);
			for (uint32_t s = 0; s < g->n_srcs; s++) { /* the last batch's */
				free(pr->raw[s].p);
				free(pr->dq[s].p);
				pr->raw[s] = pr->dq[s] = (buf){0};
			}
		}
	}
	free(unit_of);
	free(want);
	free(cost);
	return rv;
}
