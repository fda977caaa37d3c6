/*
 * produce.c — produce every rank of one layout in ONE pass over the source
 * (shardmap_produce with only_rank = -1). Each emitted tensor is hashed
 * (XXH3-128) and cut into chunks of at most chunk_bytes (never crossing
 * tensors) written through one cache writer per rank; a rank's manifest (a
 * packed weights.Manifest) is committed as soon as all its tensors are in.
 * Ranks already committed (the rest of the layout was evicted) are skipped.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/shardmap.h"
#include "weightd/server_int.h"
#include "weights/client.h"

typedef struct tensor_rec {
	bool done;
	wt_hash128 hash;
	wd_chunk *chunks; /* owned */
	size_t n_chunks;
} tensor_rec;

typedef struct rank_state {
	cache_writer *w; /* NULL once committed, or when skipped */
	bool skip;       /* already committed before we started */
	bool committed;
	size_t n_tensors, n_done;
	tensor_rec *t; /* [n_tensors]; owned */
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
	rank_state *r; /* [n_ranks] */
	uint64_t bytes_out;
	uint64_t hash_ns, put_ns, commit_ns; /* where the time went (info log) */
} prod;

static void free_tensors(rank_state *rs)
{
	for (size_t i = 0; rs->t != NULL && i < rs->n_tensors; i++)
		free(rs->t[i].chunks);
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

/* Build and commit rank `rank`'s manifest (wd_record_commit). Consumes the writer. */
static int commit_rank(prod *p, uint32_t rank, wt_errbuf *err)
{
	rank_state *rs = &p->r[rank];
	size_t n = rs->n_tensors;
	int rv = WT_ENOMEM;
	Weights__TensorEntry *te = calloc(n ? n : 1, sizeof(*te));
	Weights__TensorEntry **tp = calloc(n ? n : 1, sizeof(*tp));
	uint8_t(*th)[16] = calloc(n ? n : 1, 16);
	size_t n_skip = shardmap_n_skipped(p->plan);
	char **skipped = calloc(n_skip ? n_skip : 1, sizeof(*skipped));
	char *excl[WT_MAX_EXCLUDE];
	cache_writer *w = rs->w;
	rs->w = NULL;
	if (!te || !tp || !th || !skipped) {
		cache_abort_shard(w);
		wt_seterr(err, WT_ENOMEM, "out of memory building the manifest");
		goto out;
	}
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *oi = shardmap_rank_tensor(p->plan, rank, i);
		Weights__TensorEntry init = WEIGHTS__TENSOR_ENTRY__INIT;
		te[i] = init;
		te[i].name = (char *)oi->name;
		te[i].dtype = (uint32_t)oi->dtype;
		te[i].n_shape = (size_t)oi->ndim;
		te[i].shape = (int64_t *)oi->shape;
		te[i].nbytes = oi->nbytes;
		common_hash128_to_bytes(rs->t[i].hash, th[i]);
		te[i].hash.data = th[i];
		te[i].hash.len = 16;
		te[i].role = role_pb(oi->role);
		te[i].requantized = oi->requantized;
		tp[i] = &te[i];
		total += oi->nbytes;
	}
	for (size_t i = 0; i < n_skip; i++)
		skipped[i] = (char *)shardmap_skipped(p->plan, i);
	Weights__Layout lpb = WEIGHTS__LAYOUT__INIT;
	wire_layout_to_pb(p->l, &lpb, excl);
	Weights__Manifest mf = WEIGHTS__MANIFEST__INIT;
	mf.revision = p->snap->revision;
	mf.layout = &lpb;
	mf.layout_text = (char *)p->layout_text;
	mf.tp_rank = rank % p->l->tp_size;
	mf.ep_rank = rank / p->l->tp_size;
	mf.shard_id.data = rs->id;
	mf.shard_id.len = sizeof(rs->id);
	mf.n_tensors = n;
	mf.tensors = tp;
	mf.total_bytes = total;
	mf.checkpoint_bytes = ckpt_total_bytes(p->snap->ck);
	mf.tied_lm_head = shardmap_tied_lm_head(p->plan);
	mf.n_skipped = n_skip;
	mf.skipped = skipped;
	rv = wd_record_commit(w, &mf, p->model, rank_chunks, rs, err);
	rs->committed = rv == WT_OK;
out:
	if (rv != WT_OK)
		wt_errprefix(err, "model '%s' rank %u", p->model, rank);
	free(te);
	free(tp);
	free(th);
	free(skipped);
	free_tensors(rs);
	return rv;
}

static int emit(void *ctx, uint32_t rank, size_t ti, const void *bytes, uint64_t nbytes,
                wt_errbuf *err)
{
	prod *p = ctx;
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
	tensor_rec *tr = &rs->t[ti];
	if (tr->done || nbytes != oi->nbytes)
		return wt_seterr(err, WT_ECORRUPT,
		                 "tensor '%s' rank %u: emitted %s%llu bytes, plan says %llu",
		                 oi->name, rank, tr->done ? "twice, " : "",
		                 (unsigned long long)nbytes, (unsigned long long)oi->nbytes);
	uint64_t cb = p->s->cfg->chunk_bytes;
	size_t nc = (size_t)((nbytes + cb - 1) / cb);
	tr->chunks = calloc(nc ? nc : 1, sizeof(*tr->chunks));
	if (tr->chunks == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", oi->name);
	uint64_t t0 = common_now_ns();
	tr->hash = common_hash128(bytes, (size_t)nbytes);
	uint64_t t1 = common_now_ns();
	p->hash_ns += t1 - t0;
	for (size_t c = 0; c < nc; c++) {
		uint64_t off = (uint64_t)c * cb;
		uint64_t len = nbytes - off < cb ? nbytes - off : cb;
		int rv = cache_put_chunk(rs->w, (const uint8_t *)bytes + off, (size_t)len,
		                         &tr->chunks[c].hash, err);
		if (rv != WT_OK)
			return wt_errprefix(err, "tensor '%s' rank %u chunk %zu", oi->name, rank,
			                    c);
		tr->chunks[c].nbytes = len;
	}
	tr->n_chunks = nc;
	tr->done = true;
	p->bytes_out += nbytes;
	uint64_t t2 = common_now_ns();
	p->put_ns += t2 - t1;
	if (++rs->n_done == rs->n_tensors) {
		/* Every byte of the rank was read; it becomes visible only if no
		 * source object changed since the snapshot was opened, so committed
		 * ranks never mix revisions (the caller produces again). */
		int rv = ckpt_check(p->snap->ck, err);
		if (rv == WT_OK)
			rv = commit_rank(p, rank, err);
		p->commit_ns += common_now_ns() - t2;
		return rv;
	}
	return WT_OK;
}

int wd_produce(wd_server *s, const char *model, wd_snap *snap, const wt_layout *l,
               const char *layout_text, wt_errbuf *err)
{
	uint64_t t0 = common_now_ns();
	uint64_t read0 = store_bytes_read(snap->st);
	sm_plan *plan = NULL;
	uint32_t to_make = 0;
	prod p = {.s = s, .model = model, .snap = snap, .l = l, .layout_text = layout_text};
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
	for (uint32_t i = 0; i < p.n_ranks && rv == WT_OK; i++) {
		rank_state *rs = &p.r[i];
		wd_shard_id(model, snap->revision, layout_text, i, rs->id);
		rs->n_tensors = shardmap_rank_n_tensors(plan, i);
		rv = cache_begin_shard(s->cache, rs->id, sizeof(rs->id), &rs->w, err);
		if (rv == WT_EEXIST) {
			rs->skip = true;
			rv = WT_OK;
			continue;
		}
		if (rv != WT_OK)
			break;
		to_make++;
		rs->t = calloc(rs->n_tensors ? rs->n_tensors : 1, sizeof(*rs->t));
		if (rs->t == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "model '%s': out of memory", model);
		else if (rs->n_tensors == 0)
			rv = commit_rank(&p, i, err);
	}
	if (rv == WT_OK && to_make > 0)
		rv = shardmap_produce(snap->ck, plan, -1, emit, &p, err);
	for (uint32_t i = 0; rv == WT_OK && i < p.n_ranks; i++)
		if (!p.r[i].skip && !p.r[i].committed)
			rv = wt_seterr(err, WT_ECORRUPT,
			               "model '%s' rank %u: production emitted %zu of %zu tensors",
			               model, i, p.r[i].n_done, p.r[i].n_tensors);
out:
	for (uint32_t i = 0; p.r != NULL && i < p.n_ranks; i++) {
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
		       "%llu bytes out, %llu ms (hash %llu, cache put %llu, commit %llu)",
		       model, snap->revision, layout_text, to_make, p.n_ranks,
		       (unsigned long long)read, (unsigned long long)p.bytes_out,
		       (unsigned long long)ms, (unsigned long long)(p.hash_ns / 1000000),
		       (unsigned long long)(p.put_ns / 1000000),
		       (unsigned long long)(p.commit_ns / 1000000));
	} else {
		WT_LOG(WT_LOG_WARNING, "production failed after %llu ms: %s",
		       (unsigned long long)ms, err->msg);
	}
	shardmap_plan_free(plan);
	return rv;
}
