/*
 * manifest.c — Manifest requests (and admin WARM): resolve the model's current
 * revision, derive the shard id, serve the committed manifest from the cache,
 * or fill the whole layout once (single flight) — from a peer of the cache
 * tier (peer.c), else produced from the object store — and then serve it. A
 * cache_only request (a peer asking) is answered from the cache or WT_ENOTFOUND.
 *
 * A request that finds the layout already being produced parks on the flight
 * (state WD_WAIT: it holds its nng context but no worker thread); the producer
 * re-queues it when done. The leader parks too: the production itself runs on
 * the pool's producer lane (cfg->producers threads), so the request lane's
 * workers keep answering Hello, lists, cache hits and chunks meanwhile.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "weightd/server_int.h"

#define MAX_TRIES          3
#define MAX_SOURCE_CHANGES 3 /* productions restarted because the source changed */

static void mreq_clear(wd_mreq *m)
{
	wd_snap_release(m->snap);
	free(m->model);
	wt_layout_clear(&m->layout);
	memset(m, 0, sizeof(*m));
	wt_layout_init(&m->layout);
}

static void finish(wd_req *r, nng_msg *reply)
{
	mreq_clear(&r->m);
	wd_req_reply(r, reply);
}

static void finish_err(wd_req *r, const wt_errbuf *err)
{
	finish(r, wd_reply_error(r->id, err->code, err->msg));
}

/* (Re)derive the shard id from the snapshot's revision. */
static void derive_id(wd_mreq *m)
{
	wd_shard_id(m->model, m->snap->revision, m->layout_text, m->rank, m->id);
	m->key = wd_layout_key(m->model, m->snap->revision, m->layout_text);
}

/* Reply from the cache: WT_OK with *out set, WT_ENOTFOUND on a miss, or an error. */
static int from_cache(wd_req *r, nng_msg **out, wt_errbuf *err)
{
	wd_server *s = r->srv;
	wd_mreq *m = &r->m;
	if (m->warm) {
		uint32_t n = wt_layout_n_ranks(&m->layout);
		uint64_t bytes = 0, chunks = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t id[WD_SHARD_ID_BYTES];
			wd_shard_id(m->model, m->snap->revision, m->layout_text, i, id);
			cache_shard *sh;
			int rv = cache_shard_open(s->cache, id, sizeof(id), &sh, err);
			if (rv != WT_OK)
				return rv;
			bytes += cache_shard_nbytes(sh);
			chunks += cache_shard_n_chunks(sh);
			cache_shard_close(sh);
		}
		char text[WD_LAYOUT_TEXT_MAX + 200];
		snprintf(text, sizeof(text), "model '%s' revision %.12s layout %s: %u shards warm",
		         m->model, m->snap->revision, m->layout_text, n);
		Weights__AdminReply ar = WEIGHTS__ADMIN_REPLY__INIT;
		ar.text = text;
		ar.bytes = bytes;
		ar.shards = n;
		ar.chunks = chunks;
		Weights__Reply rp = WEIGHTS__REPLY__INIT;
		rp.id = r->id;
		rp.body_case = WEIGHTS__REPLY__BODY_ADMIN;
		rp.admin = &ar;
		*out = wd_reply_msg(&rp);
		return WT_OK;
	}
	cache_shard *sh;
	int rv = cache_shard_open(s->cache, m->id, sizeof(m->id), &sh, err);
	if (rv != WT_OK)
		return rv;
	size_t len;
	const void *bytes = cache_shard_manifest(sh, &len);
	Weights__Manifest *mf = weights__manifest__unpack(NULL, len, bytes);
	if (mf == NULL) {
		cache_shard_close(sh);
		cache_evict(s->cache, m->id, sizeof(m->id), NULL);
		return wt_seterr(err, WT_ECORRUPT,
		                 "cached manifest of model '%s' rank %u is not a weights.Manifest; "
		                 "evicted, retry to re-produce it",
		                 m->model, m->rank);
	}
	/* Shard ids include the model name, so the stored manifest is this model's. */
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = r->id;
	rp.body_case = WEIGHTS__REPLY__BODY_MANIFEST;
	rp.manifest = mf;
	*out = wd_reply_msg(&rp);
	weights__manifest__free_unpacked(mf, NULL);
	cache_shard_close(sh);
	return WT_OK;
}

/* Is what this request needs committed (WARM: every rank; else its own)? */
static bool present(wd_server *s, const wd_mreq *m)
{
	if (!m->warm)
		return cache_has_shard(s->cache, m->id, sizeof(m->id));
	uint32_t n = wt_layout_n_ranks(&m->layout);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t id[WD_SHARD_ID_BYTES];
		wd_shard_id(m->model, m->snap->revision, m->layout_text, i, id);
		if (!cache_has_shard(s->cache, id, sizeof(id)))
			return false;
	}
	return true;
}

static void step(wd_req *r);
static void produce_job(wd_job *job);

/*
 * A production that found a source object changed (WT_ECHANGED) committed
 * nothing of the layout; take the model's new snapshot and try again, a few
 * times. false (err set) when the source keeps changing or cannot be opened.
 */
static bool refresh_after_change(wd_req *r, const wt_errbuf *why, wt_errbuf *err)
{
	wd_mreq *m = &r->m;
	if (++m->changes > MAX_SOURCE_CHANGES) {
		wt_seterr(err, WT_ECHANGED,
		          "model '%s': the source changed during each of %d productions (last: "
		          "%s); retry once the upload has finished",
		          m->model, MAX_SOURCE_CHANGES, why->msg);
		return false;
	}
	WT_LOG(WT_LOG_NOTICE, "model '%s' layout %s: %s; producing again at the new revision",
	       m->model, m->layout_text, why->msg);
	wd_snap *fresh;
	if (wd_models_get(r->srv->models, m->model, true, &fresh, err) != WT_OK)
		return false;
	wd_snap_release(m->snap);
	m->snap = fresh;
	derive_id(m);
	m->tries = 0;
	return true;
}

static void resume_job(wd_job *job)
{
	wd_req *r = (wd_req *)((char *)job - offsetof(wd_req, job));
	if (r->m.flight_rv == WT_ECHANGED) {
		wt_errbuf err;
		if (!refresh_after_change(r, &r->m.flight_err, &err)) {
			finish_err(r, &err);
			return;
		}
	} else if (r->m.flight_rv != WT_OK) {
		finish_err(r, &r->m.flight_err);
		return;
	}
	step(r);
}

static void flight_done(wd_flight_waiter *w, int rv, const wt_errbuf *err)
{
	wd_req *r = (wd_req *)((char *)w - offsetof(wd_req, waiter));
	r->m.flight_rv = rv;
	if (rv != WT_OK && err != NULL)
		r->m.flight_err = *err;
	else if (rv != WT_OK)
		wt_seterr(&r->m.flight_err, rv, "production failed");
	pthread_mutex_lock(&r->srv->lk);
	r->state = WD_WORK;
	pthread_mutex_unlock(&r->srv->lk);
	r->job.fn = resume_job;
	wd_pool_submit_lane(r->srv->pool, WD_LANE_REQUEST, &r->job);
}

/* A production job: a copy of the leader's request (the leader may be answered
 * with a live manifest and recycled while the production runs). */
typedef struct prod_job {
	wd_job job;
	wd_server *s;
	wd_mreq m;
	wd_flight_waiter *leader; /* resumed when done; NULL for a live_ok leader */
} prod_job;

/*
 * Producer lane: fill the leader's layout (a peer of the cache tier first,
 * else the object store), end the flight (its waiters resume), then resume the
 * leader itself on the request lane. Another producer may have finished
 * between the leader's miss and its join: then there is nothing to do.
 */
static void produce_job(wd_job *job)
{
	prod_job *pj = (prod_job *)job;
	wd_server *s = pj->s;
	wd_mreq *m = &pj->m;
	wt_errbuf err;
	wt_errclear(&err);
	int rv = WT_OK;
	if (!present(s, m)) {
		rv = wd_peer_fill(s, m->model, m->snap, &m->layout, m->layout_text, &err);
		if (rv != WT_OK) {
			wt_errclear(&err);
			rv = wd_produce(s, m->model, m->snap, &m->layout, m->layout_text, &err);
		}
	}
	wd_flight_finish(s->flights, m->key, rv, &err);
	wd_lives_layout_done(s->lives, m->key, rv, &err);
	if (pj->leader != NULL)
		pj->leader->done(pj->leader, rv, &err); /* re-queues it on the request lane */
	mreq_clear(m);
	free(pj);
}

/* Start the production of r's layout on the producer lane; false when out of memory. */
static bool start_production(wd_req *r, bool resume_leader)
{
	wd_mreq *m = &r->m;
	prod_job *pj = calloc(1, sizeof(*pj));
	if (pj == NULL)
		return false;
	pj->s = r->srv;
	pj->leader = resume_leader ? &r->waiter : NULL;
	wt_layout_init(&pj->m.layout);
	if ((pj->m.model = strdup(m->model)) == NULL ||
	    wt_layout_copy(&pj->m.layout, &m->layout) != WT_OK) {
		mreq_clear(&pj->m);
		free(pj);
		return false;
	}
	atomic_fetch_add_explicit((_Atomic int *)&m->snap->refs, 1, memory_order_relaxed);
	pj->m.snap = m->snap;
	pj->m.warm = m->warm;
	pj->m.rank = m->rank;
	memcpy(pj->m.layout_text, m->layout_text, sizeof(m->layout_text));
	memcpy(pj->m.id, m->id, sizeof(m->id));
	pj->m.key = m->key;
	pj->job.fn = produce_job;
	wd_pool_submit_lane(r->srv->pool, WD_LANE_PRODUCE, &pj->job);
	return true;
}

/* A miss to produce: park r (if there is room) and lead or join the layout's
 * flight; cut-through (live_ok) parks on its live registration instead. */
static void wait_or_lead(wd_req *r)
{
	wd_server *s = r->srv;
	wd_mreq *m = &r->m;
	wt_errbuf err;
	nng_msg *reply = NULL;
	r->waiter.done = flight_done;
	size_t waiting; /* parked before joining: the leader may finish at once */
	if (!wd_req_park(s, r, &waiting)) { /* all parked would starve the others */
		char msg[300];
		wd_park_full_msg(s, waiting, msg, sizeof(msg));
		wt_seterr(&err, WT_EBUSY, "model '%s': layout not cached yet and %s", m->model,
		          msg);
		finish_err(r, &err);
		return;
	}
	/* live_ok: park on the layout's cut-through registration (before
	 * joining, so the end of a running flight cannot be missed). */
	bool live = m->live_ok && !m->warm;
	if (live && wd_lives_manifest(s->lives, r, true, &reply)) {
		pthread_mutex_lock(&s->lk);
		r->state = WD_WORK; /* registered meanwhile: not parked */
		pthread_mutex_unlock(&s->lk);
		if (reply != NULL) {
			finish(r, reply);
			return;
		}
		wt_seterr(&err, WT_ENOMEM, "out of memory for a live manifest");
		finish_err(r, &err);
		return;
	}
	if (wd_flight_join(s->flights, m->key, live ? NULL : &r->waiter) == WD_FLIGHT_WAITING) {
		atomic_fetch_add(&s->flight_waits, 1);
		return; /* parked: flight_done re-queues us */
	}
	/* Leader: the production runs on the producer lane; this request stays
	 * parked (WD_WAIT) and continues like a waiter when it is done (or, live,
	 * when the layout's ranks are registered). */
	if (!start_production(r, !live)) {
		wt_seterr(&err, WT_ENOMEM, "out of memory starting a production");
		wd_flight_finish(s->flights, m->key, WT_ENOMEM, &err);
		wd_lives_layout_done(s->lives, m->key, WT_ENOMEM, &err);
		if (!live)
			flight_done(&r->waiter, WT_ENOMEM, &err);
	}
}

/* One attempt: cache hit -> reply; miss -> revalidate, then lead or join a flight. */
static void step(wd_req *r)
{
	wd_server *s = r->srv;
	wd_mreq *m = &r->m;
	wt_errbuf err;
	for (;;) {
		nng_msg *reply = NULL;
		int rv = from_cache(r, &reply, &err);
		if (rv == WT_OK) {
			finish(r, reply);
			return;
		}
		if (rv != WT_ENOTFOUND) {
			finish_err(r, &err);
			return;
		}
		if (m->cache_only) {
			/* A peer asks: never produce, never ask our own peers (no loops). */
			wt_seterr(&err, WT_ENOTFOUND,
			          "model '%s' revision %.12s layout %s rank %u is not cached on "
			          "this node (cache_only request)",
			          m->model, m->snap->revision, m->layout_text, m->rank);
			finish_err(r, &err);
			return;
		}
		if (m->live_ok && !m->warm && wd_lives_manifest(s->lives, r, false, &reply)) {
			if (reply != NULL) {
				finish(r, reply); /* being produced: served cut-through */
				return;
			}
			wt_seterr(&err, WT_ENOMEM, "out of memory for a live manifest");
			finish_err(r, &err);
			return;
		}
		if (++m->tries > MAX_TRIES) {
			wt_seterr(
			    &err, WT_ENOSPC,
			    "model '%s' layout %s rank %u was produced but is no longer in the "
			    "cache; raise cache_max_bytes (now %llu bytes)",
			    m->model, m->layout_text, m->rank,
			    (unsigned long long)s->cfg->cache_max_bytes);
			finish_err(r, &err);
			return;
		}
		if (m->tries == 1) {
			/* A miss re-checks the source at once: never produce a stale revision. */
			wd_snap *fresh;
			if ((rv = wd_models_get(s->models, m->model, true, &fresh, &err)) !=
			    WT_OK) {
				finish_err(r, &err);
				return;
			}
			bool changed = strcmp(fresh->revision, m->snap->revision) != 0;
			wd_snap_release(m->snap);
			m->snap = fresh;
			if (changed) {
				derive_id(m);
				continue; /* the new revision may be cached already */
			}
		}
		wait_or_lead(r);
		return;
	}
}

/* Common set-up of Manifest and WARM requests. */
static int setup(wd_req *r, const char *model, const char *revision, const Weights__Layout *pl,
                 uint32_t tp_rank, uint32_t ep_rank, wt_errbuf *err)
{
	wd_server *s = r->srv;
	wd_mreq *m = &r->m;
	mreq_clear(m);
	if (model == NULL || model[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "request names no model; see ListModels");
	if ((m->model = strdup(model)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory");
	int rv = wire_layout_from_pb(pl, &m->layout, err);
	if (rv != WT_OK)
		return rv;
	m->layout.tp_rank = tp_rank;
	m->layout.ep_rank = ep_rank;
	if ((rv = wt_layout_check(&m->layout, err)) != WT_OK)
		return rv;
	m->rank = wt_layout_rank_index(&m->layout);
	size_t need = wt_layout_format(&m->layout, m->layout_text, sizeof(m->layout_text));
	if (need >= sizeof(m->layout_text))
		return wt_seterr(err, WT_ETOOBIG,
		                 "layout text of %zu bytes is over %d; use fewer "
		                 "or shorter exclude patterns",
		                 need, WD_LAYOUT_TEXT_MAX);
	if ((rv = wd_models_get(s->models, model, false, &m->snap, err)) != WT_OK)
		return rv;
	if (revision != NULL && revision[0] != '\0' && strcmp(revision, m->snap->revision) != 0) {
		wd_snap_release(m->snap);
		m->snap = NULL;
		if ((rv = wd_models_get(s->models, model, true, &m->snap, err)) != WT_OK)
			return rv;
		if (strcmp(revision, m->snap->revision) != 0)
			return wt_seterr(err, WT_ENOTFOUND,
			                 "model '%s' revision %.16s is not served; the current "
			                 "revision is %s (ask with an empty revision)",
			                 model, revision, m->snap->revision);
	}
	derive_id(m);
	return WT_OK;
}

void wd_manifest_start(wd_req *r, const Weights__ManifestRequest *mr)
{
	wt_errbuf err;
	int rv = setup(r, mr->model, mr->revision, mr->layout, mr->tp_rank, mr->ep_rank, &err);
	if (rv != WT_OK) {
		finish_err(r, &err);
		return;
	}
	if (mr->plan_only) {
		nng_msg *msg = wd_plan_only_reply(r->id, &r->m, &err);
		if (msg == NULL)
			finish_err(r, &err);
		else
			finish(r, msg);
		return;
	}
	r->m.cache_only = mr->cache_only;
	r->m.live_ok = mr->live_ok;
	step(r);
}

void wd_warm_start(wd_req *r, const Weights__AdminRequest *ar)
{
	wt_errbuf err;
	/* no layout: the default one (wt_layout_init), as a client with no layout
	 * flags asks for in a Manifest request */
	wt_layout def;
	wt_layout_init(&def);
	Weights__Layout pl = WEIGHTS__LAYOUT__INIT;
	wire_layout_to_pb(&def, &pl, NULL); /* no exclude strings to borrow */
	int rv = setup(r, ar->model, NULL, ar->layout != NULL ? ar->layout : &pl, 0, 0, &err);
	if (rv != WT_OK) {
		finish_err(r, &err);
		return;
	}
	r->m.warm = true;
	step(r);
}
