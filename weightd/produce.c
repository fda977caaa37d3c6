/*
 * produce.c — produce every rank of one layout in ONE pass over the source
 * (shardmap_produce with only_rank = -1). Each emitted tensor is hashed
 * (XXH3-128) and cut into chunks of at most chunk_bytes (never crossing
 * tensors) on one of production_threads threads (shardmap_produce_par), each copied into a
 * write-behind buffer (hashed as it is copied) that cut-through readers are served from; the
 * production's cache writer (wback.c) puts them through one cache writer per rank, behind the
 * producer, and commits a rank's manifest (a packed weights.Manifest) once all its tensors are in
 * and its source check passed. Ranks already committed (the rest of the layout was evicted) are
 * skipped.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/shardmap.h"
#include "weightd/server_int.h"
#include "weights/client.h"

typedef struct tensor_rec {
	bool done;
	uint64_t next_off; /* emitted in parts (emit_part): bytes so far */
	common_hasher *th; /* emitted in parts: the tensor's hash so far; owned */
	wt_hash128 hash;
	wd_chunk *chunks; /* owned */
	size_t n_chunks;
} tensor_rec;

typedef struct rank_state {
	/* w, live and committed belong to the cache writer thread once the
	 * production started (wd_wback_start), to wd_produce again after it ended */
	cache_writer *w; /* NULL once committed, or when skipped */
	wd_live *live;   /* served cut-through until it ends (live.c); NULL = not */
	bool skip;       /* already committed before we started */
	bool committed;
	size_t n_tensors;
	_Atomic size_t n_done; /* emitted from several threads (production_threads) */
	tensor_rec *t;         /* [n_tensors]; owned */
	uint8_t id[WD_SHARD_ID_BYTES];
} rank_state;

typedef struct prod {
	wd_server *s;
	const char *model;
	wd_snap *snap;
	const wt_layout *l;
	const char *layout_text;
	const sm_plan *plan;
	uint32_t n_ranks;
	wt_hash128 key; /* the layout's (cut-through registrations) */
	rank_state *r;  /* [n_ranks] */
	wd_wback *wb;   /* the cache writer (wback.c) */
	/* emit runs on production_threads threads at once: what it adds up is atomic */
	_Atomic uint64_t bytes_out;
	_Atomic uint64_t parts;            /* tensors emitted in parts (rank after rank) */
	_Atomic uint64_t hash_ns, wait_ns; /* producer: hashing + copying, waiting for RAM budget */
	uint64_t emit_ns;                  /* producer: start to last tensor emitted (reads too) */
	uint64_t put_ns, commit_ns;        /* cache writer: chunk puts, rank commits */
} prod;

static void free_tensors(rank_state *rs)
{
	for (size_t i = 0; rs->t != NULL && i < rs->n_tensors; i++) {
		free(rs->t[i].chunks);
		common_hasher_free(rs->t[i].th);
	}
	free(rs->t);
	rs->t = NULL;
}

/* sm_role, wt_tensor_role and the protobuf TensorRole are one code (FROZEN,
 * docs/format.md section 6.1): role_pb is a cast. */
#define WD_ROLE_SAME(sm, wt, pb)                                                                   \
	_Static_assert((int)(sm) == (int)(pb) && (int)(wt) == (int)(pb),                           \
	               #sm " must equal " #wt " and " #pb)
WD_ROLE_SAME(SM_ROLE_WEIGHT, WT_ROLE_WEIGHT, WEIGHTS__TENSOR_ROLE__ROLE_WEIGHT);
WD_ROLE_SAME(SM_ROLE_SCALE, WT_ROLE_SCALE, WEIGHTS__TENSOR_ROLE__ROLE_SCALE);
WD_ROLE_SAME(SM_ROLE_BIAS, WT_ROLE_BIAS, WEIGHTS__TENSOR_ROLE__ROLE_BIAS);
WD_ROLE_SAME(SM_ROLE_INPUT_SCALE, WT_ROLE_INPUT_SCALE, WEIGHTS__TENSOR_ROLE__ROLE_INPUT_SCALE);

static Weights__TensorRole role_pb(sm_role r)
{
	return (Weights__TensorRole)r; /* sm_role values equal the protobuf ones (FROZEN) */
}

static const wd_chunk *rank_chunks(void *ctx, size_t i, size_t *n)
{
	const rank_state *rs = ctx;
	*n = rs->t[i].n_chunks;
	return rs->t[i].chunks;
}

/* Rank `rank`'s manifest, pointing into the arrays of mb (freed by mb_free).
 * live: no tensor hashes (a live manifest). NULL when out of memory. */
typedef struct mf_bufs {
	Weights__TensorEntry *te, **tp;
	uint8_t (*th)[16];
	char **skipped;
	char *excl[WT_MAX_EXCLUDE];
	Weights__Layout lpb;
	Weights__Manifest mf;
} mf_bufs;

static void mb_free(mf_bufs *mb)
{
	free(mb->te);
	free(mb->tp);
	free(mb->th);
	free(mb->skipped);
}

static Weights__Manifest *build_manifest(prod *p, uint32_t rank, bool live, mf_bufs *mb)
{
	rank_state *rs = &p->r[rank];
	size_t n = rs->n_tensors;
	size_t n_skip = shardmap_n_skipped(p->plan);
	memset(mb, 0, sizeof(*mb));
	mb->te = calloc(n ? n : 1, sizeof(*mb->te));
	mb->tp = calloc(n ? n : 1, sizeof(*mb->tp));
	mb->th = calloc(n ? n : 1, 16);
	mb->skipped = calloc(n_skip ? n_skip : 1, sizeof(*mb->skipped));
	if (!mb->te || !mb->tp || !mb->th || !mb->skipped)
		return NULL;
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *oi = shardmap_rank_tensor(p->plan, rank, i);
		Weights__TensorEntry init = WEIGHTS__TENSOR_ENTRY__INIT, *te = &mb->te[i];
		*te = init;
		te->name = (char *)oi->name;
		te->dtype = (uint32_t)oi->dtype;
		te->n_shape = (size_t)oi->ndim;
		te->shape = (int64_t *)oi->shape;
		te->nbytes = oi->nbytes;
		if (!live) {
			common_hash128_to_bytes(rs->t[i].hash, mb->th[i]);
			te->hash.data = mb->th[i];
			te->hash.len = 16;
		}
		te->role = role_pb(oi->role);
		te->requantized = oi->requantized;
		mb->tp[i] = te;
		total += oi->nbytes;
	}
	for (size_t i = 0; i < n_skip; i++)
		mb->skipped[i] = (char *)shardmap_skipped(p->plan, i);
	Weights__Layout linit = WEIGHTS__LAYOUT__INIT;
	mb->lpb = linit;
	wire_layout_to_pb(p->l, &mb->lpb, mb->excl);
	Weights__Manifest minit = WEIGHTS__MANIFEST__INIT, *mf = &mb->mf;
	*mf = minit;
	mf->revision = p->snap->revision;
	mf->layout = &mb->lpb;
	mf->layout_text = (char *)p->layout_text;
	mf->tp_rank = rank % p->l->tp_size;
	mf->ep_rank = rank / p->l->tp_size;
	mf->shard_id.data = rs->id;
	mf->shard_id.len = sizeof(rs->id);
	mf->n_tensors = n;
	mf->tensors = mb->tp;
	mf->total_bytes = total;
	mf->checkpoint_bytes = ckpt_total_bytes(p->snap->ck);
	mf->tied_lm_head = shardmap_tied_lm_head(p->plan);
	mf->n_skipped = n_skip;
	mf->skipped = mb->skipped;
	mf->live = live;
	return mf;
}

/* Build and commit rank `rank`'s manifest (wd_record_commit). Consumes the writer. */
static int commit_rank(prod *p, uint32_t rank, wt_errbuf *err)
{
	rank_state *rs = &p->r[rank];
	cache_writer *w = rs->w;
	rs->w = NULL;
	mf_bufs mb;
	Weights__Manifest *mf = build_manifest(p, rank, false, &mb);
	int rv;
	if (mf == NULL) {
		cache_abort_shard(w);
		rv = wt_seterr(err, WT_ENOMEM, "out of memory building the manifest");
	} else {
		rv = wd_record_commit(w, mf, p->model, rank_chunks, rs, err);
	}
	rs->committed = rv == WT_OK;
	if (rv != WT_OK)
		wt_errprefix(err, "model '%s' rank %u", p->model, rank);
	mb_free(&mb);
	return rv;
}

/* Register rank `rank` for cut-through serving (its chunk list is planned). */
static void live_open(prod *p, uint32_t rank)
{
	rank_state *rs = &p->r[rank];
	size_t n = rs->n_tensors, nc = 0;
	size_t *counts = calloc(n ? n : 1, sizeof(*counts));
	mf_bufs mb;
	Weights__Manifest *mf = build_manifest(p, rank, true, &mb);
	size_t len = 0;
	uint8_t *buf = NULL;
	for (size_t i = 0; counts != NULL && i < n; i++)
		nc += counts[i] = rs->t[i].n_chunks;
	if (mf != NULL && counts != NULL && nc > 0)
		buf = wd_record_pack(mf, p->model, rank_chunks, rs, &len);
	if (buf != NULL)
		wd_live_open(p->s->lives, p->key, rs->id, buf, len, counts, n, &rs->live);
	free(buf);
	free(counts);
	mb_free(&mb);
}

/* Plan rank rs's chunks: tensor i is cut into chunk_bytes pieces (hashes come in emit). */
static int plan_chunks(prod *p, uint32_t rank, wt_errbuf *err)
{
	rank_state *rs = &p->r[rank];
	uint64_t cb = p->s->cfg->chunk_bytes;
	for (size_t i = 0; i < rs->n_tensors; i++) {
		uint64_t nbytes = shardmap_rank_tensor(p->plan, rank, i)->nbytes;
		size_t nc = (size_t)((nbytes + cb - 1) / cb);
		tensor_rec *tr = &rs->t[i];
		tr->chunks = calloc(nc ? nc : 1, sizeof(*tr->chunks));
		if (tr->chunks == NULL)
			return wt_seterr(err, WT_ENOMEM, "model '%s': out of memory", p->model);
		for (size_t c = 0; c < nc; c++)
			tr->chunks[c].nbytes =
			    nbytes - (uint64_t)c * cb < cb ? nbytes - (uint64_t)c * cb : cb;
		tr->n_chunks = nc;
	}
	return WT_OK;
}

/* The rank's last tensor is in: source check, release to cut-through clients,
 * queue the commit behind its chunks. */
static int finish_rank(prod *p, uint32_t rank, wt_errbuf *err)
{
	rank_state *rs = &p->r[rank];
	const wd_faults *f = atomic_load(&p->s->faults);
	if (f != NULL && f->before_check != NULL)
		f->before_check(f->ctx, rank);
	/* Every byte of the rank was read; it becomes visible only if no
	 * source object changed since the snapshot was opened, so committed
	 * ranks never mix revisions (the caller produces again). Cut-through
	 * clients get its last chunk only now. */
	int rv = ckpt_check(p->snap->ck, err);
	/* a cache write that already failed fails the production before the last
	 * chunk goes out; one that fails later fails only the commit */
	if (rv == WT_OK)
		rv = wd_wback_error(p->wb, err);
	if (rv != WT_OK)
		return rv;
	wd_live_seal(p->s->lives, rs->live);
	return wd_wback_push(p->wb, rank, 0, 0, NULL, err);
}

/* The cache writer (wback.c): put chunk c of tensor ti of `rank` (b), or
 * commit the rank (b NULL) and end its cut-through entry. */
static int write_behind(void *ctx, uint32_t rank, size_t ti, size_t c, wd_wbuf *b, wt_errbuf *err)
{
	prod *p = ctx;
	rank_state *rs = &p->r[rank];
	const wd_faults *f = atomic_load(&p->s->faults);
	uint64_t t0 = common_now_ns();
	int rv;
	if (b == NULL) {
		if (f != NULL && f->before_commit != NULL)
			f->before_commit(f->ctx, rank);
		rv = commit_rank(p, rank, err);
		wd_live_end(p->s->lives, rs->live, rv, err);
		rs->live = NULL;
		p->commit_ns += common_now_ns() - t0;
		return rv;
	}
	const tensor_rec *tr = &rs->t[ti];
	size_t len;
	const uint8_t *data = wd_wbuf_data(b, &len);
	if (f != NULL && f->before_put != NULL && (rv = f->before_put(f->ctx, rank)) != WT_OK)
		wt_seterr(err, rv, "fault injection: the cache write failed");
	else /* hashed by emit as it filled the buffer */
		rv = cache_put_chunk_hashed(rs->w, data, len, tr->chunks[c].hash, err);
	if (rv != WT_OK)
		return wt_errprefix(err, "model '%s' rank %u tensor '%s' chunk %zu", p->model, rank,
		                    shardmap_rank_tensor(p->plan, rank, ti)->name, c);
	wd_live_stored(p->s->lives, rs->live, ti, c);
	p->put_ns += common_now_ns() - t0;
	return WT_OK;
}

/* Copy chunks [c0, c1) of tensor ti of `rank` (bytes: chunk c0's) into
 * write-behind buffers, hashing each chunk and, with th, the tensor as it
 * copies; publish each chunk to cut-through readers and queue it for the
 * cache writer. */
static int emit_chunks(prod *p, uint32_t rank, size_t ti, const uint8_t *bytes, size_t c0,
                       size_t c1, common_hasher *th, wt_errbuf *err)
{
	rank_state *rs = &p->r[rank];
	tensor_rec *tr = &rs->t[ti];
	if (tr->n_chunks == 0) {
		tr->hash = common_hash128("", 0);
		wd_live_tensor(p->s->lives, rs->live, ti, tr->hash);
	}
	uint64_t off = 0;
	for (size_t c = c0; c < c1; c++) {
		uint64_t len = tr->chunks[c].nbytes; /* planned (plan_chunks) */
		wd_wbuf *b = NULL;
		uint64_t t1 = common_now_ns();
		int rv = wd_wback_alloc(p->wb, (size_t)len, &b, err);
		uint64_t t2 = common_now_ns();
		atomic_fetch_add(&p->wait_ns, t2 - t1);
		if (rv != WT_OK)
			return rv; /* the writer's error names its chunk */
		size_t blen;
		uint8_t *dst = (uint8_t *)wd_wbuf_data(b, &blen);
		tr->chunks[c].hash = common_hash128_copy_also(dst, bytes + off, blen, th);
		if (c + 1 == tr->n_chunks) { /* before its last chunk is served */
			tr->hash = th != NULL ? common_hasher_digest(th) : tr->chunks[c].hash;
			wd_live_tensor(p->s->lives, rs->live, ti, tr->hash);
		}
		atomic_fetch_add(&p->hash_ns, common_now_ns() - t2);
		wd_live_chunk(p->s->lives, rs->live, ti, c, tr->chunks[c].hash, b);
		if ((rv = wd_wback_push(p->wb, rank, ti, c, b, err)) != WT_OK)
			return rv; /* the writer failed: its error */
		off += len;
	}
	return WT_OK;
}

/* Checks of an emitted tensor or part: the rank's state into *rs_out (NULL: a
 * rank already committed, nothing to do). */
static int emit_check(prod *p, uint32_t rank, size_t ti, uint64_t off, uint64_t n,
                      rank_state **rs_out, wt_errbuf *err)
{
	*rs_out = NULL;
	if (atomic_load(&p->s->cancel))
		return wt_seterr(err, WT_ECANCELED, "production of model '%s' canceled (shutdown)",
		                 p->model);
	if (rank >= p->n_ranks || ti >= p->r[rank].n_tensors)
		return wt_seterr(err, WT_ECORRUPT,
		                 "planner emitted rank %u tensor %zu outside the plan (%u ranks)",
		                 rank, ti, p->n_ranks);
	rank_state *rs = &p->r[rank];
	if (rs->skip)
		return WT_OK;
	const sm_out_info *oi = shardmap_rank_tensor(p->plan, rank, ti);
	const tensor_rec *tr = &rs->t[ti];
	uint64_t cb = p->s->cfg->chunk_bytes;
	/* parts come in order, each ending on a chunk boundary or at the tensor's end */
	if (tr->done || off != tr->next_off || n > oi->nbytes - off ||
	    (off + n != oi->nbytes && (n == 0 || (off + n) % cb != 0)))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "tensor '%s' rank %u: emitted %s%llu bytes at %llu, plan says %llu "
		    "(next at %llu)",
		    oi->name, rank, tr->done ? "twice, " : "", (unsigned long long)n,
		    (unsigned long long)off, (unsigned long long)oi->nbytes,
		    (unsigned long long)tr->next_off);
	*rs_out = rs;
	return WT_OK;
}

/* Bytes [off, off + n) of tensor ti of `rank` (the whole of it, or a part:
 * sm_produce_opts.emit_part), on chunk boundaries. One pass: each chunk is
 * copied into its buffer and hashed, and the tensor hashed with it (a
 * one-chunk tensor's hash is its chunk's); the tensor's last part finishes it. */
static int emit_part(void *ctx, uint32_t rank, size_t ti, uint64_t off, const void *bytes,
                     uint64_t n, wt_errbuf *err)
{
	prod *p = ctx;
	rank_state *rs;
	int rv = emit_check(p, rank, ti, off, n, &rs, err);
	if (rv != WT_OK || rs == NULL)
		return rv;
	tensor_rec *tr = &rs->t[ti];
	const sm_out_info *oi = shardmap_rank_tensor(p->plan, rank, ti);
	if (off == 0 && tr->n_chunks > 1 && (tr->th = common_hasher_new()) == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory hashing tensor '%s'", oi->name);
	uint64_t cb = p->s->cfg->chunk_bytes;
	bool last = off + n == oi->nbytes;
	if (off == 0 && !last)
		atomic_fetch_add(&p->parts, 1);
	size_t c0 = (size_t)(off / cb), c1 = last ? tr->n_chunks : (size_t)((off + n) / cb);
	rv = emit_chunks(p, rank, ti, bytes, c0, c1, tr->th, err);
	tr->next_off = off + n;
	if (rv != WT_OK || !last)
		return rv;
	common_hasher_free(tr->th);
	tr->th = NULL;
	tr->done = true;
	atomic_fetch_add(&p->bytes_out, oi->nbytes);
	/* the thread that emits a rank's last tensor finishes it: every other
	 * tensor's chunks were queued before their thread counted it */
	if (atomic_fetch_add(&rs->n_done, 1) + 1 == rs->n_tensors)
		return finish_rank(p, rank, err);
	return WT_OK;
}

static int emit(void *ctx, uint32_t rank, size_t ti, const void *bytes, uint64_t nbytes,
                wt_errbuf *err)
{
	return emit_part(ctx, rank, ti, 0, bytes, nbytes, err);
}

/* Open a cache writer for every rank not committed yet (*to_make of them),
 * plan its chunks and register it for cut-through serving. */
static int open_ranks(prod *p, uint32_t *to_make, wt_errbuf *err)
{
	int rv = WT_OK;
	for (uint32_t i = 0; i < p->n_ranks && rv == WT_OK; i++) {
		rank_state *rs = &p->r[i];
		wd_shard_id(p->model, p->snap->revision, p->layout_text, i, rs->id);
		rs->n_tensors = shardmap_rank_n_tensors(p->plan, i);
		rv = cache_begin_shard(p->s->cache, rs->id, sizeof(rs->id), &rs->w, err);
		if (rv == WT_EEXIST) {
			rs->skip = true;
			rv = WT_OK;
			continue;
		}
		if (rv != WT_OK)
			break;
		(*to_make)++;
		rs->t = calloc(rs->n_tensors ? rs->n_tensors : 1, sizeof(*rs->t));
		if (rs->t == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "model '%s': out of memory", p->model);
		else if (rs->n_tensors == 0)
			rv = commit_rank(p, i, err);
		else if ((rv = plan_chunks(p, i, err)) == WT_OK)
			live_open(p, i);
	}
	return rv;
}

/* Run the production: the producer (this thread) and its cache writer. */
static int run_production(prod *p, wt_errbuf *err)
{
	int rv = wd_wback_start(p->s, write_behind, p, &p->wb, err);
	if (rv != WT_OK)
		return rv;
	uint64_t t0 = common_now_ns();
	/* lm_head and the embedding in chunk-sized parts, rank after rank: every
	 * cut-through reader's first chunk comes after a few chunks, not after
	 * the other ranks' whole rows */
	sm_produce_opts o = {.only_rank = -1,
	                     .threads = (unsigned)p->s->cfg->production_threads,
	                     .emit = emit,
	                     .emit_part = emit_part,
	                     .part_bytes = p->s->cfg->chunk_bytes,
	                     .stack_batch_bytes = p->s->cfg->stack_batch_bytes,
	                     .ctx = p};
	rv = shardmap_produce_ex(p->snap->ck, p->plan, &o, err);
	p->emit_ns = common_now_ns() - t0;
	/* the writer's own error comes first: the producer's may be its echo */
	wt_errbuf werr;
	int wrv = wd_wback_finish(p->wb, rv != WT_OK, &werr);
	p->wb = NULL;
	if (wrv != WT_OK) {
		rv = wrv;
		*err = werr;
	}
	for (uint32_t i = 0; rv == WT_OK && i < p->n_ranks; i++)
		if (!p->r[i].skip && !p->r[i].committed)
			rv =
			    wt_seterr(err, WT_ECORRUPT,
			              "model '%s' rank %u: production emitted %zu of %zu tensors",
			              p->model, i, atomic_load(&p->r[i].n_done), p->r[i].n_tensors);
	return rv;
}

int wd_produce(wd_server *s, const char *model, wd_snap *snap, const wt_layout *l,
               const char *layout_text, wt_errbuf *err)
{
	uint64_t t0 = common_now_ns();
	uint64_t read0 = store_bytes_read(snap->st);
	sm_plan *plan = NULL;
	uint32_t to_make = 0;
	prod p = {.s = s, .model = model, .snap = snap, .l = l, .layout_text = layout_text};
	p.key = wd_layout_key(model, snap->revision, layout_text);
	int rv = shardmap_plan(snap->ck, l, &plan, err);
	if (rv != WT_OK) {
		wt_errprefix(err, "model '%s' layout %s", model, layout_text);
		return rv;
	}
	p.plan = plan;
	p.n_ranks = shardmap_n_ranks(plan);
	uint64_t need = 0; /* every rank's bytes: an upper bound (committed ranks and dedup) */
	for (uint32_t i = 0; i < p.n_ranks; i++)
		need += shardmap_rank_bytes(plan, i);
	if ((rv = cache_disk_room(s->cache, need, err)) != WT_OK) {
		wt_errprefix(err, "model '%s' layout %s", model, layout_text);
		goto out;
	}
	p.r = calloc(p.n_ranks, sizeof(*p.r));
	if (p.r == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "model '%s': out of memory", model);
		goto out;
	}
	rv = open_ranks(&p, &to_make, err);
	wd_lives_ready(s->lives, p.key); /* live_ok manifest requests answer now */
	if (rv == WT_OK && to_make > 0)
		rv = run_production(&p, err);
out:
	for (uint32_t i = 0; p.r != NULL && i < p.n_ranks; i++) {
		if (p.r[i].live != NULL) { /* parked cut-through readers get the error */
			if (rv == WT_OK)
				wt_seterr(err, WT_ECORRUPT, "model '%s' rank %u was not committed",
				          model, i);
			wd_live_end(s->lives, p.r[i].live, rv == WT_OK ? WT_ECORRUPT : rv, err);
		}
		cache_abort_shard(p.r[i].w);
		free_tensors(&p.r[i]);
	}
	free(p.r);
	uint64_t ms = (common_now_ns() - t0) / 1000000u;
	uint64_t read = store_bytes_read(snap->st) - read0;
	if (rv == WT_OK) {
		atomic_fetch_add(&s->productions, 1);
		atomic_fetch_add(&s->m.production_bytes, p.bytes_out);
		wd_hist_observe(&s->m.production, common_now_ns() - t0);
		WT_LOG(WT_LOG_INFO,
		       "produced model '%s' rev %.12s layout %s: %u of %u ranks, %llu bytes read, "
		       "%llu bytes out (%llu tensors in parts), %llu ms (producer %llu: hash + "
		       "copy %llu over its threads, "
		       "waiting for "
		       "writeback_bytes %llu; behind: cache put %llu, commit %llu)",
		       model, snap->revision, layout_text, to_make, p.n_ranks,
		       (unsigned long long)read, (unsigned long long)atomic_load(&p.bytes_out),
		       (unsigned long long)atomic_load(&p.parts), (unsigned long long)ms,
		       (unsigned long long)(p.emit_ns / 1000000),
		       (unsigned long long)(atomic_load(&p.hash_ns) / 1000000),
		       (unsigned long long)(atomic_load(&p.wait_ns) / 1000000),
		       (unsigned long long)(p.put_ns / 1000000),
		       (unsigned long long)(p.commit_ns / 1000000));
	} else {
		WT_LOG(WT_LOG_WARNING, "production failed after %llu ms: %s",
		       (unsigned long long)ms, err->msg);
	}
	shardmap_plan_free(plan);
	return rv;
}
