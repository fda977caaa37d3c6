/*
 * produce_run.c — the order and the threads of a production: groups in
 * serving (manifest) order, groups whose ranks read disjoint rows split into
 * one work item per rank (an expert stack under EP: one per EP group, each
 * reading and transforming its own experts alone, produce_stack.c), items
 * taken in that order by one or more threads,
 * each with its own buffers (produce.c builds an item's outputs).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "shardmap/produce_int.h"

/* ---- rank by rank: a group whose ranks read disjoint rows of its sources ----
 * (a split along rows: lm_head, a vocab-parallel embedding, column-parallel
 * projections) is produced one rank at a time, each reading only its own
 * rows, exactly as only_rank does: every byte is still read once, and a
 * rank's outputs are emitted after its own rows instead of after the whole
 * group's (a cut-through reader's first byte), while they are still in the
 * CPU cache. */

enum { RBR_MAX_PIECES = 256 };

typedef struct rows_iv {
	uint32_t rank, src;
	int64_t a, b;
} rows_iv;

static bool rank_by_rank(const ckpt *c, const sm_plan *p, const sm_group *g)
{
	if (g->n_m < 2)
		return false;
	/* on a remote store a read below its hint costs mostly a round trip:
	 * there, only ranks whose own rows are that large are read apart */
	size_t hint = store_read_hint(ckpt_store(c));
	rows_iv iv[RBR_MAX_PIECES];
	size_t n = 0;
	bool two = false;
	for (size_t m = 0; m < g->n_m; m++) {
		uint32_t rank = g->m[m].rank;
		const sm_out *o = &p->ranks[rank].outs[g->m[m].ix];
		if (o->okind != SM_O_DATA && o->okind != SM_O_QUANT)
			return false;
		two = two || rank != g->m[0].rank;
		for (size_t k = 0; k < o->np; k++) {
			const sm_piece *pc = &p->pieces[o->p0 + k];
			if (pc->src == SM_ZERO)
				continue;
			const sm_src *src = &g->srcs[pc->src];
			if (pc->cols || src->whole || src->mode != SM_SRC_RAW ||
			    n == RBR_MAX_PIECES)
				return false;
			const ckpt_tensor *t = ckpt_tensor_at(c, src->t);
			int64_t rows = sm_trows(t); /* 0 for an empty tensor */
			if (hint > 0 &&
			    (rows <= 0 || (uint64_t)pc->len * (t->nbytes / (uint64_t)rows) < hint))
				return false;
			rows_iv me = {rank, pc->src, pc->start, pc->start + pc->len};
			for (size_t j = 0; j < n; j++)
				if (iv[j].src == me.src && iv[j].rank != rank && iv[j].a < me.b &&
				    me.a < iv[j].b)
					return false; /* two ranks share rows: read them once */
			iv[n++] = me;
		}
	}
	return two;
}

/* ---- serving order: groups by the manifest (name) position of their first output ----
 * A client reads a shard in manifest order, tensor by tensor; producing the
 * groups in that order lets a cut-through reader (weightd live.c) start at
 * once instead of waiting for whichever tensor sorts first. */

typedef struct group_key {
	size_t key; /* smallest name-order position of the group's outputs */
	size_t g;
} group_key;

static int key_cmp(const void *a, const void *b)
{
	const group_key *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->g < y->g ? -1 : x->g > y->g;
}

/* Group indices in serving order (malloc'd), or NULL when out of memory. */
static group_key *serving_order(const sm_plan *p)
{
	group_key *o = malloc((p->n_groups ? p->n_groups : 1) * sizeof(*o));
	if (o == NULL)
		return NULL;
	for (size_t g = 0; g < p->n_groups; g++) {
		const sm_group *gr = &p->groups[g];
		size_t k = SIZE_MAX;
		for (size_t m = 0; m < gr->n_m; m++) {
			size_t pos = p->ranks[gr->m[m].rank].pos[gr->m[m].ix];
			if (pos < k)
				k = pos;
		}
		o[g] = (group_key){k, g};
	}
	qsort(o, p->n_groups, sizeof(*o), key_cmp);
	return o;
}

/* One work item: group g for rank `only` (or every selected rank: the
 * caller's), or, with parts, the members m0, m0 + mstep, ... of g (one rank
 * each) in turn in parts. */
typedef struct work {
	size_t g;
	int64_t only;
	bool parts;
	uint32_t m0, mstep;
	uint32_t n_only; /* ranks [only, only + n_only) (an EP group's); 0: one */
} work;

/* Can g be produced in parts of part_bytes (sm_prod_parts)? Each member is
 * its rank's only output of g, a plain copy of one contiguous row range of a
 * source (no conversion), then perhaps zero rows (a padded vocabulary), and
 * part_bytes is a whole number of its rows. */
static bool in_parts(const ckpt *c, const sm_plan *p, const sm_group *g, uint64_t part_bytes)
{
	/* a remote store wants reads of at least its hint (one per rank's rows) */
	if (part_bytes == 0 || store_read_hint(ckpt_store(c)) > part_bytes)
		return false;
	for (size_t m = 0; m < g->n_m; m++) {
		const sm_out *o = &p->ranks[g->m[m].rank].outs[g->m[m].ix];
		if (o->okind != SM_O_DATA || o->np < 1 || o->np > 2 ||
		    (o->np == 2 && p->pieces[o->p0 + 1].src != SM_ZERO))
			return false;
		const sm_piece *pc = &p->pieces[o->p0];
		if (pc->src == SM_ZERO || pc->cols || pc->len <= 0)
			return false;
		const sm_src *src = &g->srcs[pc->src];
		const ckpt_tensor *t = ckpt_tensor_at(c, src->t);
		int64_t rows = sm_trows(t);
		uint64_t rowb = rows > 0 ? t->nbytes / (uint64_t)rows : 0; /* 0: [N, 0] */
		/* and the output has the source's rows, at least the piece's */
		if (src->whole || src->mode != SM_SRC_RAW || t->dtype != o->info.dtype ||
		    rowb == 0 || part_bytes % rowb != 0 || o->cols != sm_tcols(t) ||
		    o->rows < pc->len)
			return false;
		for (size_t j = 0; j < m; j++)
			if (g->m[j].rank == g->m[m].rank)
				return false;
	}
	return true;
}

/* The work items in serving order into *out (malloc'd), their count into *n. */
static int work_list(const ckpt *c, const sm_plan *p, const sm_produce_opts *opt, work **out,
                     size_t *n, wt_errbuf *err)
{
	int64_t only_rank = opt->only_rank;
	*out = NULL;
	*n = 0;
	group_key *order = serving_order(p);
	size_t cap = 0;
	for (size_t g = 0; g < p->n_groups; g++)
		cap += p->groups[g].n_m > 0 ? p->groups[g].n_m : 1;
	work *w = malloc((cap ? cap : 1) * sizeof(*w));
	if ((order == NULL && p->n_groups > 0) || w == NULL) {
		free(order);
		free(w);
		return wt_seterr(err, WT_ENOMEM, "produce: out of memory ordering %zu groups",
		                 p->n_groups);
	}
	for (size_t i = 0; i < p->n_groups; i++) {
		size_t gi = order[i].g;
		const sm_group *g = &p->groups[gi];
		uint32_t blk = only_rank < 0 ? sm_stack_block(c, p, g) : 0;
		if (blk > 0) { /* an expert stack: one EP group at a time (produce_stack.c) */
			for (uint32_t r0 = 0; r0 < p->tp * p->ep; r0 += blk) {
				bool has = false; /* (every EP group has: one item each) */
				for (size_t m = 0; m < g->n_m && !has; m++)
					has = g->m[m].rank >= r0 && g->m[m].rank - r0 < blk;
				if (has)
					w[(*n)++] = (work){gi, r0, false, 0, 0, blk};
			}
			continue;
		}
		if (only_rank >= 0 || !rank_by_rank(c, p, g)) {
			w[(*n)++] = (work){gi, only_rank, false};
			continue;
		}
		if (opt->emit_part != NULL && in_parts(c, p, g, opt->part_bytes)) {
			/* the ranks dealt out over the threads: with two, the fourth
			 * rank's first part comes after two parts, not four */
			size_t k = opt->threads > 1 ? opt->threads : 1;
			if (k > g->n_m)
				k = g->n_m;
			for (size_t j = 0; j < k; j++)
				w[(*n)++] = (work){gi, -1, true, (uint32_t)j, (uint32_t)k};
			continue;
		}
		for (size_t m = 0; m < g->n_m; m++) {
			bool seen = false;
			for (size_t j = 0; j < m && !seen; j++)
				seen = g->m[j].rank == g->m[m].rank;
			if (!seen)
				w[(*n)++] = (work){gi, g->m[m].rank, false};
		}
	}
	free(order);
	*out = w;
	return WT_OK;
}

typedef struct run {
	const ckpt *c;
	const sm_plan *p;
	const sm_produce_opts *o;
	const work *w;
	size_t n;
	_Atomic size_t next;
	_Atomic bool stop;
	pthread_mutex_t lk;
	int rv; /* the first error (lk) */
	wt_errbuf err;
} run;

/* Take work items in order until none is left or another thread failed. */
static void *run_items(void *arg)
{
	run *r = arg;
	prod pr = {.c = r->c,
	           .p = r->p,
	           .emit = r->o->emit,
	           .emit_part = r->o->emit_part,
	           .part_bytes = r->o->part_bytes,
	           .ctx = r->o->ctx,
	           .batch_bytes = r->o->stack_batch_bytes};
	wt_errbuf err;
	while (!atomic_load(&r->stop)) {
		size_t i = atomic_fetch_add(&r->next, 1);
		if (i >= r->n)
			break;
		pr.only = r->w[i].only;
		pr.n_only = r->w[i].n_only;
		const sm_group *g = &r->p->groups[r->w[i].g];
		const work *wi = &r->w[i];
		int rv = wi->parts ? sm_prod_parts(&pr, g, wi->m0, wi->mstep, r->o->emit_part,
		                                   r->o->part_bytes, &r->stop, &err)
		                   : sm_prod_group(&pr, g, &err);
		if (rv == WT_OK)
			continue;
		pthread_mutex_lock(&r->lk);
		if (r->rv == WT_OK) {
			r->rv = rv;
			r->err = err;
		}
		pthread_mutex_unlock(&r->lk);
		atomic_store(&r->stop, true);
	}
	sm_prod_free(&pr);
	return NULL;
}

/* A production thread of its own (top -H, perf): run_items. */
static void *run_thread(void *arg)
{
	(void)pthread_setname_np(pthread_self(), "sm:produce");
	return run_items(arg);
}

int shardmap_produce_ex(const ckpt *c, const sm_plan *p, const sm_produce_opts *o, wt_errbuf *err)
{
	if (o->only_rank >= (int64_t)(p->tp * p->ep))
		return wt_seterr(err, WT_EINVAL, "rank %" PRId64 " out of range (%u ranks)",
		                 o->only_rank, p->tp * p->ep);
	run r = {.c = c, .p = p, .o = o, .rv = WT_OK};
	unsigned threads = o->threads;
	work *w;
	int rv = work_list(c, p, o, &w, &r.n, err);
	if (rv != WT_OK)
		return rv;
	r.w = w;
	pthread_mutex_init(&r.lk, NULL);
	if (threads > SM_PRODUCE_MAX_THREADS)
		threads = SM_PRODUCE_MAX_THREADS;
	pthread_t th[SM_PRODUCE_MAX_THREADS];
	unsigned started = 0;
	/* a thread that cannot start leaves its share to the others */
	while (started + 1 < threads && started + 1 < r.n &&
	       pthread_create(&th[started], NULL, run_thread, &r) == 0)
		started++;
	run_items(&r);
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&r.lk);
	free(w);
	if (r.rv != WT_OK)
		*err = r.err;
	return r.rv;
}

int shardmap_produce(const ckpt *c, const sm_plan *p, int64_t only_rank, sm_emit_fn emit_fn,
                     void *ctx, wt_errbuf *err)
{
	sm_produce_opts o = {.only_rank = only_rank, .threads = 1, .emit = emit_fn, .ctx = ctx};
	return shardmap_produce_ex(c, p, &o, err);
}
