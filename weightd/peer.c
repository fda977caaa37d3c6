/*
 * peer.c — the peer tier: a node that misses a layout asks the other nodes of
 * the cache tier before it reads the object store (docs/weightd.md "Peer tier";
 * docs/architecture.md section 4).
 *
 * Inside the layout's single flight (manifest.c), the leader:
 *   1. orders the peers by rendezvous hashing over (model, layout without rank),
 *      the order clients use, so the owning node is asked first;
 *   2. asks one peer for the manifest of EVERY rank, cache_only and at the
 *      revision this node resolved (the peer never produces nor asks its own
 *      peers for a cache_only request: no loops); each must name the shard id
 *      this node derives itself, else the peer is skipped;
 *   3. fetches each missing rank with libweights (chunk and tensor XXH3-128
 *      verified) into a sink that re-cuts every tensor into this node's
 *      chunk_bytes and puts the chunks into a cache writer (the cache hashes
 *      them again), then commits the peer's manifest with those chunks and the
 *      model name asked for — the record wd_produce would have written.
 * A rank that fails half-way is aborted (no uncommitted writer is left); the
 * next peer, then the object store, fills what is missing.
 *
 * Deadlock freedom: a fill holds a worker while it waits on a peer's workers.
 * At most workers - 1 fills run at once, so every node keeps a worker that
 * only does work that never waits on a peer (cache reads, productions), and a
 * peer's cache_only and chunk requests always get served.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "shardmap/shardmap.h"
#include "weightd/server_int.h"
#include "weights/engine.h"
#include "weights/weights.h"

#define PEER_CONNECT_MS  1000u
#define PEER_REQUEST_MS  10000u
#define PEER_MAX_RETRIES 2u
/* A fill that has not reached PEER_MIN_RATE bytes/s after PEER_GRACE_MS of a
 * rank's fetch stops, and the next peer or the source fills the layout: a peer
 * that answers each chunk slowly held every client waiting on the layout
 * (95 s for a layout produced locally in 0.1 s). */
#define PEER_GRACE_MS 10000u
#define PEER_MIN_RATE (16ull << 20)

struct wd_peers {
	size_t n;
	char **urls;        /* [n] owned */
	wt_client **client; /* [n] one endpoint each: a fetch never fails over to a node
	                       that would produce */
	char *token;        /* owned; "" = none */
	char *client_id;    /* owned */
	unsigned max_active;
	_Atomic unsigned active; /* fills running now */
};

void wd_peers_close(wd_peers *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++) {
		wt_client_close(p->client ? p->client[i] : NULL);
		free(p->urls ? p->urls[i] : NULL);
	}
	free(p->client);
	free(p->urls);
	free(p->token);
	free(p->client_id);
	free(p);
}

static bool is_own_url(const wd_config *cfg, const char *url)
{
	for (size_t i = 0; i < cfg->listen.n; i++)
		if (strcmp(cfg->listen.v[i], url) == 0)
			return true;
	return false;
}

int wd_peers_open(wd_peers **out, const wd_config *cfg, const char *server_id, wt_errbuf *err)
{
	*out = NULL;
	if (cfg->peer.n == 0)
		return WT_OK;
	if (cfg->peer.n > WD_MAX_PEERS)
		return wt_seterr(err, WT_ECONFIG, "%zu peers configured; at most %d", cfg->peer.n,
		                 WD_MAX_PEERS);
	if (cfg->workers < 2) {
		WT_LOG(WT_LOG_WARNING,
		       "peer: %zu peers configured but workers = 1; peers are not asked (a node "
		       "needs a spare worker to answer its peers): set workers >= 2",
		       cfg->peer.n);
		return WT_OK;
	}
	wd_peers *p = calloc(1, sizeof(*p));
	if (p == NULL || (p->urls = calloc(cfg->peer.n, sizeof(*p->urls))) == NULL ||
	    (p->client = calloc(cfg->peer.n, sizeof(*p->client))) == NULL ||
	    (p->token = strdup(cfg->auth_token)) == NULL ||
	    (p->client_id = malloc(strlen(server_id) + 8)) == NULL) {
		wd_peers_close(p);
		return wt_seterr(err, WT_ENOMEM, "peers: out of memory");
	}
	snprintf(p->client_id, strlen(server_id) + 8, "%s (peer)", server_id);
	p->max_active = (unsigned)cfg->workers - 1;
	for (size_t i = 0; i < cfg->peer.n; i++) {
		const char *url = cfg->peer.v[i];
		if (is_own_url(cfg, url))
			continue; /* one shared list for the whole tier */
		wt_client_opts o;
		wt_client_opts_init(&o);
		o.endpoints = &url;
		o.n_endpoints = 1;
		o.connect_timeout_ms = PEER_CONNECT_MS;
		o.request_timeout_ms = PEER_REQUEST_MS;
		o.manifest_timeout_ms = PEER_REQUEST_MS;
		o.max_retries = PEER_MAX_RETRIES;
		o.backoff_initial_ms = 50;
		o.backoff_max_ms = 500;
		o.retry_budget_ms = 1; /* a single pass: a dead peer is skipped, not waited for */
		o.token = p->token[0] ? p->token : NULL;
		o.client_id = p->client_id;
		int rv = wt_client_open(&p->client[p->n], &o, err);
		if (rv == WT_OK && (p->urls[p->n] = strdup(url)) == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "peers: out of memory");
		p->n++;
		if (rv != WT_OK) {
			wd_peers_close(p);
			wt_errprefix(err, "peer %s", url);
			return rv == WT_ENOMEM ? rv : WT_ECONFIG;
		}
	}
	if (p->n == 0) {
		wd_peers_close(p);
		return WT_OK;
	}
	WT_LOG(WT_LOG_INFO, "peer tier: %zu peers, at most %u fills at once", p->n, p->max_active);
	*out = p;
	return WT_OK;
}

/* ===================== cache_only manifests (libweights) ===================== */

/*
 * The cache_only manifest of `rank` at this node's revision, asked through the
 * peer's libweights client (wt_manifest_opts: revision + cache_only), checked
 * against the shard this node derives. *wm: the validated manifest the fetch
 * follows; *reply: the decoded reply, whose Manifest is the record committed.
 */
static int ask_rank(wd_peers *p, size_t i, const char *model, const wd_snap *snap,
                    const wt_layout *l, const char *layout_text, uint32_t rank, wt_manifest **wm,
                    Weights__Reply **reply, wt_errbuf *err)
{
	wt_layout rl;
	wt_layout_init(&rl);
	if (wt_layout_copy(&rl, l) != WT_OK)
		return wt_seterr(err, WT_ENOMEM, "peer fill: out of memory");
	rl.tp_rank = rank % l->tp_size;
	rl.ep_rank = rank / l->tp_size;
	wt_manifest_opts mo;
	wt_manifest_opts_init(&mo);
	mo.revision = snap->revision;
	mo.cache_only = 1; /* the peer never produces nor asks its own peers: no loops */
	int rv = client_get_manifest_pb(p->client[i], model, &rl, &mo, wm, reply, err);
	wt_layout_clear(&rl);
	if (rv != WT_OK)
		return rv;
	const Weights__Manifest *mf = (*reply)->manifest;
	uint8_t id[WD_SHARD_ID_BYTES];
	wd_shard_id(model, snap->revision, layout_text, rank, id);
	if (mf->revision == NULL || strcmp(mf->revision, snap->revision) != 0)
		rv = wt_seterr(err, WT_ENOTFOUND, "peer %s: rank %u is revision %.12s, not %.12s",
		               p->urls[i], rank, mf->revision ? mf->revision : "", snap->revision);
	else if (mf->format_version != WT_FORMAT_VERSION || mf->layout_text == NULL ||
	         strcmp(mf->layout_text, layout_text) != 0 || mf->shard_id.len != sizeof(id) ||
	         memcmp(mf->shard_id.data, id, sizeof(id)) != 0)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "peer %s: manifest of rank %u (layout %s) is not the shard this "
		               "node derives for layout %s; is the peer another weightd version?",
		               p->urls[i], rank, mf->layout_text ? mf->layout_text : "",
		               layout_text);
	if (rv != WT_OK) {
		wt_manifest_free(*wm);
		*wm = NULL;
		wire_reply_free(*reply);
		*reply = NULL;
	}
	return rv;
}

/* ===================== the sink: verified bytes -> cache writer ===================== */

typedef struct ptensor {
	wd_chunk *c; /* owned */
	size_t n, cap;
} ptensor;

typedef struct peer_sink {
	wt_sink base; /* first */
	cache_writer *w;
	uint64_t cb;  /* this node's chunk_bytes */
	uint8_t *buf; /* [cb] a chunk being assembled; owned */
	size_t fill;
	ptensor *t; /* [n_tensors] owned */
	size_t n_tensors, cur;
	uint64_t bytes;
} peer_sink;

static int sk_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	peer_sink *k = (peer_sink *)s;
	k->n_tensors = wt_manifest_n_tensors(m);
	k->t = calloc(k->n_tensors ? k->n_tensors : 1, sizeof(*k->t));
	if (k->t == NULL)
		return wt_seterr(err, WT_ENOMEM, "peer fill: out of memory");
	for (size_t i = 0; i < k->n_tensors; i++) {
		wt_tensor_info ti;
		wt_manifest_tensor(m, i, &ti);
		size_t n = (size_t)((ti.nbytes + k->cb - 1) / k->cb);
		if (n > 0 && (k->t[i].c = calloc(n, sizeof(wd_chunk))) == NULL)
			return wt_seterr(err, WT_ENOMEM, "peer fill: out of memory");
		k->t[i].cap = n;
	}
	return WT_OK;
}

static int sk_tensor_begin(wt_sink *s, size_t tensor, wt_errbuf *err)
{
	(void)err;
	peer_sink *k = (peer_sink *)s;
	k->cur = tensor;
	k->fill = 0;
	return WT_OK;
}

static int put(peer_sink *k, const void *data, size_t len, wt_errbuf *err)
{
	ptensor *t = &k->t[k->cur];
	if (t->n == t->cap)
		return wt_seterr(err, WT_ECORRUPT, "peer fill: tensor %zu longer than its manifest",
		                 k->cur);
	int rv = cache_put_chunk(k->w, data, len, &t->c[t->n].hash, err);
	if (rv != WT_OK)
		return rv;
	t->c[t->n++].nbytes = len;
	k->bytes += len;
	return WT_OK;
}

/* Re-cut the tensor into chunks of cb bytes from its start, as wd_produce does. */
static int sk_write(wt_sink *s, size_t tensor, uint64_t off, const void *data, size_t len,
                    wt_errbuf *err)
{
	(void)tensor;
	(void)off;
	peer_sink *k = (peer_sink *)s;
	const uint8_t *p = data;
	while (len > 0) {
		int rv;
		if (k->fill == 0 && len >= k->cb) {
			if ((rv = put(k, p, (size_t)k->cb, err)) != WT_OK)
				return rv;
			p += k->cb;
			len -= (size_t)k->cb;
			continue;
		}
		if (k->buf == NULL && (k->buf = malloc((size_t)k->cb)) == NULL)
			return wt_seterr(err, WT_ENOMEM, "peer fill: out of memory");
		size_t n = (size_t)k->cb - k->fill < len ? (size_t)k->cb - k->fill : len;
		memcpy(k->buf + k->fill, p, n);
		k->fill += n;
		p += n;
		len -= n;
		if (k->fill == k->cb) {
			k->fill = 0;
			if ((rv = put(k, k->buf, (size_t)k->cb, err)) != WT_OK)
				return rv;
		}
	}
	return WT_OK;
}

static int sk_tensor_end(wt_sink *s, size_t tensor, wt_errbuf *err)
{
	peer_sink *k = (peer_sink *)s;
	(void)tensor;
	size_t n = k->fill;
	k->fill = 0;
	return n > 0 ? put(k, k->buf, n, err) : WT_OK;
}

static int sk_end(wt_sink *s, wt_errbuf *err)
{
	(void)s;
	(void)err;
	return WT_OK; /* the caller commits */
}

static void sk_abort(wt_sink *s)
{
	peer_sink *k = (peer_sink *)s;
	cache_abort_shard(k->w);
	k->w = NULL;
}

static const wt_sink_ops sink_ops = {.struct_size = sizeof(wt_sink_ops),
                                     .begin = sk_begin,
                                     .tensor_begin = sk_tensor_begin,
                                     .write = sk_write,
                                     .tensor_end = sk_tensor_end,
                                     .end = sk_end,
                                     .abort = sk_abort};

static void sink_clear(peer_sink *k)
{
	cache_abort_shard(k->w); /* NULL once committed */
	for (size_t i = 0; k->t != NULL && i < k->n_tensors; i++)
		free(k->t[i].c);
	free(k->t);
	free(k->buf);
	memset(k, 0, sizeof(*k));
}

static const wd_chunk *sink_chunks(void *ctx, size_t i, size_t *n)
{
	const peer_sink *k = ctx;
	*n = k->t[i].n;
	return k->t[i].c;
}

/* Commit the peer's manifest with this node's chunks and model name. Consumes k->w. */
static int commit(peer_sink *k, Weights__Manifest *mf, const char *model, wt_errbuf *err)
{
	if (k->n_tensors != mf->n_tensors)
		return wt_seterr(err, WT_ECORRUPT,
		                 "peer fill: %zu tensors fetched, manifest has %zu", k->n_tensors,
		                 mf->n_tensors);
	cache_writer *w = k->w;
	k->w = NULL;
	int rv = wd_record_commit(w, mf, model, sink_chunks, k, err);
	if (rv != WT_OK)
		wt_errprefix(err, "peer fill of model '%s'", model);
	return rv;
}

typedef struct fill_prog {
	wd_server *s;
	uint64_t t0_ns;
	bool slow; /* stopped: under PEER_MIN_RATE after PEER_GRACE_MS */
} fill_prog;

/* libweights' progress (after each verified chunk, and before each retry):
 * stop at the shutdown deadline, or when the peer is too slow. */
static int progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)total;
	fill_prog *fp = ctx;
	if (atomic_load(&fp->s->cancel))
		return 1;
	uint64_t ms = (common_now_ns() - fp->t0_ns) / 1000000u;
	if (ms > PEER_GRACE_MS && done < PEER_MIN_RATE * ms / 1000u) {
		fp->slow = true;
		return 1;
	}
	return 0;
}

/* What a fill did (log line). */
typedef struct fill_stats {
	uint32_t filled;    /* ranks committed */
	uint64_t bytes;     /* their bytes */
	uint64_t ask_ns;    /* cache_only manifests */
	uint64_t fetch_ns;  /* chunks fetched, verified, put */
	uint64_t commit_ns; /* cache commits (flush + synced manifest) */
} fill_stats;

/* Fetch rank `rank` (wm, its record mf) from peer i into the cache. WT_EEXIST = already there. */
static int fill_rank(wd_server *s, size_t i, const char *model, uint32_t rank,
                     const wt_manifest *wm, Weights__Manifest *mf, fill_stats *fs, wt_errbuf *err)
{
	wd_peers *p = s->peers;
	peer_sink k = {.base = {.ops = &sink_ops}, .cb = s->cfg->chunk_bytes};
	int rv = cache_disk_room(s->cache, wt_manifest_total_bytes(wm), err);
	if (rv == WT_OK)
		rv = cache_begin_shard(s->cache, mf->shard_id.data, mf->shard_id.len, &k.w, err);
	if (rv != WT_OK)
		return rv;
	wt_fetch_opts fo;
	wt_fetch_opts_init(&fo);
	uint64_t t0 = common_now_ns();
	fill_prog fp = {.s = s, .t0_ns = t0};
	fo.progress = progress;
	fo.progress_ctx = &fp;
	rv = wt_client_fetch(p->client[i], wm, &k.base, &fo, err);
	uint64_t t1 = common_now_ns();
	if (rv == WT_ECANCELED && fp.slow)
		rv = wt_seterr(err, WT_ETIMEDOUT,
		               "peer %s: %llu bytes in %.1f s, under %llu MiB/s: too slow, skipped",
		               p->urls[i], (unsigned long long)k.bytes, (double)(t1 - t0) / 1e9,
		               (unsigned long long)(PEER_MIN_RATE >> 20));
	fs->fetch_ns += t1 - t0;
	if (rv == WT_OK) {
		uint64_t n = k.bytes;
		rv = commit(&k, mf, model, err);
		fs->commit_ns += common_now_ns() - t1;
		if (rv == WT_OK) {
			fs->bytes += n;
			fs->filled++;
		}
	}
	if (rv != WT_OK && rv != WT_EEXIST)
		wt_errprefix(err, "rank %u", rank);
	sink_clear(&k); /* aborts the writer unless committed */
	return rv;
}

/* Is the peer's manifest of `rank` what this node's own plan of the layout
 * says, field by field (tensors in order with name, dtype, shape, bytes, role,
 * requantized; skipped tensors; totals)? A broken or hostile peer could else
 * leave a tensor out, or add one, and this node would cache and serve that
 * record. (Its bytes are checked against the hashes it sent: a peer that
 * forges both is trusted, docs/weightd.md "Peer tier".) */
static int check_plan(const wd_peers *p, size_t i, const sm_plan *plan, const ckpt *ck,
                      uint32_t rank, const Weights__Manifest *mf, wt_errbuf *err)
{
	size_t n = shardmap_rank_n_tensors(plan, rank);
	const char *bad = NULL;
	size_t at = 0;
	uint64_t total = 0;
	if (mf->n_tensors != n)
		bad = "tensor count";
	for (size_t t = 0; bad == NULL && t < n; t++) {
		const sm_out_info *oi = shardmap_rank_tensor(plan, rank, t);
		const Weights__TensorEntry *te = mf->tensors[t];
		at = t;
		total += oi->nbytes;
		if (te->name == NULL || strcmp(te->name, oi->name) != 0)
			bad = "tensor name";
		else if (te->dtype != (uint32_t)oi->dtype || te->nbytes != oi->nbytes ||
		         te->n_shape != (size_t)oi->ndim ||
		         (oi->ndim > 0 &&
		          memcmp(te->shape, oi->shape, (size_t)oi->ndim * sizeof(int64_t)) != 0))
			bad = "tensor dtype, shape or size";
		else if ((int)te->role != (int)oi->role || te->requantized != oi->requantized)
			bad = "tensor role";
	}
	if (bad == NULL &&
	    (mf->total_bytes != total || mf->checkpoint_bytes != ckpt_total_bytes(ck) ||
	     mf->tied_lm_head != shardmap_tied_lm_head(plan) ||
	     mf->n_skipped != shardmap_n_skipped(plan)))
		bad = "totals or skipped tensors";
	for (size_t k = 0; bad == NULL && k < mf->n_skipped; k++)
		if (mf->skipped[k] == NULL ||
		    strcmp(mf->skipped[k], shardmap_skipped(plan, k)) != 0)
			bad = "skipped tensors";
	if (bad == NULL)
		return WT_OK;
	return wt_seterr(err, WT_ECORRUPT,
	                 "peer %s: manifest of rank %u is not this node's plan of the layout (%s, "
	                 "near tensor %zu); skipped",
	                 p->urls[i], rank, bad, at);
}

/* Fill the layout from peer i; fs counts what was committed from it. */
static int fill_from(wd_server *s, size_t i, const char *model, wd_snap *snap, const wt_layout *l,
                     const char *layout_text, fill_stats *fs, wt_errbuf *err)
{
	uint32_t n = wt_layout_n_ranks(l);
	Weights__Reply **mf = calloc(n, sizeof(*mf));
	wt_manifest **wm = calloc(n, sizeof(*wm));
	int rv = mf && wm ? WT_OK : wt_seterr(err, WT_ENOMEM, "peer fill: out of memory");
	uint64_t t0 = common_now_ns();
	sm_plan *plan = NULL;
	if (rv == WT_OK)
		rv = shardmap_plan(snap->ck, l, &plan, err);
	for (uint32_t r = 0; rv == WT_OK && r < n; r++) {
		rv = ask_rank(s->peers, i, model, snap, l, layout_text, r, &wm[r], &mf[r], err);
		if (rv == WT_OK)
			rv = check_plan(s->peers, i, plan, snap->ck, r, mf[r]->manifest, err);
	}
	shardmap_plan_free(plan);
	fs->ask_ns = common_now_ns() - t0;
	/* Ranks one after the other: on 2 cores, fetching two at once measured
	 * slower (the commits' flushes and the peer's workers are shared). */
	for (uint32_t r = 0; rv == WT_OK && r < n; r++) {
		rv = fill_rank(s, i, model, r, wm[r], mf[r]->manifest, fs, err);
		if (rv == WT_EEXIST)
			rv = WT_OK; /* committed before (the rest of the layout was evicted) */
	}
	for (uint32_t r = 0; r < n && mf && wm; r++) {
		wire_reply_free(mf[r]);
		wt_manifest_free(wm[r]);
	}
	free(mf);
	free(wm);
	return rv;
}

int wd_peer_fill(wd_server *s, const char *model, wd_snap *snap, const wt_layout *l,
                 const char *layout_text, wt_errbuf *err)
{
	wd_peers *p = s->peers;
	if (p == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "no peer configured");
	if (atomic_fetch_add(&p->active, 1) >= p->max_active) {
		atomic_fetch_sub(&p->active, 1);
		WT_LOG(WT_LOG_INFO, "peer: %u fills running (workers - 1); producing layout %s",
		       p->max_active, layout_text);
		return wt_seterr(err, WT_EBUSY, "every spare worker is filling from a peer");
	}
	uint64_t t0 = common_now_ns();
	wt_layout base;
	wt_layout_init(&base);
	int rv = wt_layout_copy(&base, l);
	if (rv != WT_OK) {
		atomic_fetch_sub(&p->active, 1);
		return wt_seterr(err, WT_ENOMEM, "peer fill: out of memory");
	}
	base.tp_rank = 0;
	base.ep_rank = 0;
	uint8_t key[16];
	client_route_key(model, &base, key);
	wt_layout_clear(&base);
	size_t order[WD_MAX_PEERS];
	client_rendezvous_order(key, (const char *const *)p->urls, p->n, order);
	rv = WT_ENOTFOUND;
	for (size_t k = 0; k < p->n && !atomic_load(&s->cancel); k++) {
		size_t i = order[k];
		fill_stats fs = {0};
		rv = fill_from(s, i, model, snap, l, layout_text, &fs, err);
		atomic_fetch_add(&s->peer_bytes, fs.bytes);
		if (rv == WT_OK) {
			atomic_fetch_add(&s->peer_fills, 1);
			WT_LOG(WT_LOG_NOTICE,
			       "filled layout %s of model '%s' rev %.12s from peer %s: %u ranks, "
			       "%llu bytes in %llu ms (manifests %llu, fetch %llu, commit %llu)",
			       layout_text, model, snap->revision, p->urls[i], fs.filled,
			       (unsigned long long)fs.bytes,
			       (unsigned long long)((common_now_ns() - t0) / 1000000u),
			       (unsigned long long)(fs.ask_ns / 1000000u),
			       (unsigned long long)(fs.fetch_ns / 1000000u),
			       (unsigned long long)(fs.commit_ns / 1000000u));
			break;
		}
		WT_LOG(rv == WT_ENOTFOUND ? WT_LOG_INFO : WT_LOG_WARNING,
		       "peer fill of layout %s of model '%s' skipped peer %s (%u ranks taken): %s",
		       layout_text, model, p->urls[i], fs.filled, err->msg);
	}
	atomic_fetch_sub(&p->active, 1);
	return rv;
}
