/*
 * live.c — cut-through serving: shards being produced, served while they are
 * produced (server_int.h "cut-through serving" has the contract).
 *
 * The producer registers each rank it makes (wd_live_open) once the plan is
 * known, with its live manifest: tensors and chunk boundaries, no hashes.
 * Manifest requests that asked live_ok get that manifest at once; chunk
 * requests name a chunk by its index and are parked (no thread held, like a
 * flight waiter) until the producer has hashed it; the reply comes from the
 * chunk's write-behind buffer while the cache writer has not put it yet
 * (wback.c), else from the cache like any chunk, with its hash (and the
 * tensor's hash on a tensor's last chunk). The rank's last chunk waits for
 * wd_live_seal (source check passed), so no fetch ends on a production that
 * fails with WT_ECHANGED. Durability (flush, fsync, manifest commit) follows
 * behind: a crash leaves only unreferenced chunks, never a visible shard.
 */
#include <stdlib.h>
#include <string.h>

#include "weightd/server_int.h"

enum { LIVE_PRODUCING = 0, LIVE_DONE, LIVE_FAILED };

struct wd_live {
	struct wd_live *next;
	wt_hash128 key;
	uint8_t id[WD_SHARD_ID_BYTES];
	int state;
	int rv; /* LIVE_FAILED: the production's error */
	wt_errbuf err;
	uint8_t *mf; /* packed live manifest; owned */
	size_t mf_len;
	size_t n_chunks, n_tensors;
	size_t *chunk_tensor; /* [n_chunks]: tensor of each chunk */
	size_t *first;        /* [n_tensors + 1]: first chunk of each tensor */
	uint64_t *nbytes;     /* [n_chunks]: planned chunk sizes (from the manifest) */
	wt_hash128 *chunk_hash, *tensor_hash;
	uint8_t *have; /* [n_chunks]: chunk hashed, its bytes in buf or the cache */
	wd_wbuf **buf; /* [n_chunks]: write-behind buffer (a reference) until stored */
	bool sealed;
	wd_live_wait *waiters; /* parked chunk requests (messages and bulk streams) */
	uint64_t end_seq;      /* order finished entries are dropped in */
};

struct wd_lives {
	pthread_mutex_t lk;
	/* fields below guarded by lk */
	wd_live *head;
	size_t n, n_producing;
	wd_flight_waiter *plan_waiters; /* parked manifest requests (wd_req.m.key) */
	uint64_t seq;
};

static wd_req *req_of(wd_flight_waiter *w)
{
	return (wd_req *)((char *)w - offsetof(wd_req, waiter));
}

int wd_lives_create(wd_lives **out)
{
	wd_lives *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return WT_ENOMEM;
	pthread_mutex_init(&t->lk, NULL);
	*out = t;
	return WT_OK;
}

static void live_free(wd_live *l)
{
	if (l == NULL)
		return;
	free(l->mf);
	free(l->chunk_tensor);
	free(l->first);
	free(l->nbytes);
	free(l->chunk_hash);
	free(l->tensor_hash);
	free(l->have);
	for (size_t i = 0; l->buf != NULL && i < l->n_chunks; i++)
		wd_wbuf_unref(l->buf[i]);
	free(l->buf);
	free(l);
}

void wd_lives_destroy(wd_lives *t)
{
	if (t == NULL)
		return;
	WT_ASSERT(t->n_producing == 0 && t->plan_waiters == NULL);
	while (t->head != NULL) {
		wd_live *l = t->head;
		t->head = l->next;
		live_free(l);
	}
	pthread_mutex_destroy(&t->lk);
	free(t);
}

static wd_live **find(wd_lives *t, const uint8_t *id)
{
	wd_live **pp = &t->head;
	while (*pp != NULL && memcmp((*pp)->id, id, WD_SHARD_ID_BYTES) != 0)
		pp = &(*pp)->next;
	return pp;
}

/* Drop finished entries past WD_LIVE_KEEP, oldest first; caller holds t->lk. */
static void trim_locked(wd_lives *t)
{
	while (t->n - t->n_producing > WD_LIVE_KEEP) {
		wd_live **oldest = NULL;
		for (wd_live **pp = &t->head; *pp != NULL; pp = &(*pp)->next)
			if ((*pp)->state != LIVE_PRODUCING &&
			    (oldest == NULL || (*pp)->end_seq < (*oldest)->end_seq))
				oldest = pp;
		wd_live *l = *oldest;
		*oldest = l->next;
		t->n--;
		live_free(l);
	}
}

void wd_live_open(wd_lives *t, wt_hash128 key, const uint8_t *id, const void *mf, size_t mf_len,
                  const size_t *n_chunks_of, size_t n_tensors, wd_live **out)
{
	*out = NULL;
	size_t nc = 0;
	for (size_t i = 0; i < n_tensors; i++)
		nc += n_chunks_of[i];
	wd_live *l = calloc(1, sizeof(*l));
	Weights__Manifest *pb = weights__manifest__unpack(NULL, mf_len, mf);
	if (l != NULL) {
		l->mf = malloc(mf_len ? mf_len : 1);
		l->chunk_tensor = calloc(nc ? nc : 1, sizeof(size_t));
		l->first = calloc(n_tensors + 1, sizeof(size_t));
		l->nbytes = calloc(nc ? nc : 1, sizeof(uint64_t));
		l->chunk_hash = calloc(nc ? nc : 1, sizeof(wt_hash128));
		l->tensor_hash = calloc(n_tensors ? n_tensors : 1, sizeof(wt_hash128));
		l->have = calloc(nc ? nc : 1, 1);
		l->buf = calloc(nc ? nc : 1, sizeof(*l->buf));
	}
	if (l == NULL || pb == NULL || !l->mf || !l->chunk_tensor || !l->first || !l->nbytes ||
	    !l->chunk_hash || !l->tensor_hash || !l->have || !l->buf ||
	    pb->n_tensors != n_tensors) {
		WT_LOG(WT_LOG_WARNING,
		       "cut-through: out of memory; a rank is served once committed");
		live_free(l);
		weights__manifest__free_unpacked(pb, NULL);
		return;
	}
	memcpy(l->mf, mf, mf_len);
	l->mf_len = mf_len;
	l->key = key;
	memcpy(l->id, id, WD_SHARD_ID_BYTES);
	l->n_chunks = nc;
	l->n_tensors = n_tensors;
	size_t k = 0;
	for (size_t i = 0; i < n_tensors; i++) {
		l->first[i] = k;
		WT_ASSERT(pb->tensors[i]->n_chunks == n_chunks_of[i]);
		for (size_t c = 0; c < n_chunks_of[i]; c++, k++) {
			l->chunk_tensor[k] = i;
			l->nbytes[k] = pb->tensors[i]->chunks[c]->nbytes;
		}
	}
	l->first[n_tensors] = k;
	weights__manifest__free_unpacked(pb, NULL);
	pthread_mutex_lock(&t->lk);
	wd_live **pp = find(t, id);
	if (*pp != NULL) { /* an earlier, finished production of the same shard */
		wd_live *old = *pp;
		WT_ASSERT(old->state != LIVE_PRODUCING && old->waiters == NULL);
		*pp = old->next;
		t->n--;
		live_free(old);
	}
	l->next = t->head;
	t->head = l;
	t->n++;
	t->n_producing++;
	pthread_mutex_unlock(&t->lk);
	*out = l;
}

static bool ready_locked(const wd_live *l, uint64_t ci)
{
	return l->have[ci] && (ci + 1 != l->n_chunks || l->sealed);
}

/* Take the waiters whose chunk is ready now (all of them when `all`); caller holds t->lk. */
static wd_live_wait *take_locked(wd_live *l, bool all)
{
	wd_live_wait *woken = NULL, **pp = &l->waiters;
	while (*pp != NULL) {
		wd_live_wait *w = *pp;
		if (all || ready_locked(l, w->index)) {
			*pp = w->next;
			w->next = woken;
			woken = w;
		} else {
			pp = &w->next;
		}
	}
	return woken;
}

static void wake(wd_flight_waiter *w, int rv, const wt_errbuf *err)
{
	while (w != NULL) {
		wd_flight_waiter *next = w->next;
		w->done(w, rv, err);
		w = next;
	}
}

static void wake_chunks(wd_live_wait *w)
{
	while (w != NULL) {
		wd_live_wait *next = w->next;
		w->fn(w);
		w = next;
	}
}

void wd_live_tensor(wd_lives *t, wd_live *l, size_t ti, wt_hash128 h)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&t->lk);
	WT_ASSERT(ti < l->n_tensors);
	l->tensor_hash[ti] = h;
	pthread_mutex_unlock(&t->lk);
}

void wd_live_chunk(wd_lives *t, wd_live *l, size_t ti, size_t c, wt_hash128 h, wd_wbuf *b)
{
	if (l == NULL)
		return;
	if (b != NULL)
		wd_wbuf_ref(b);
	pthread_mutex_lock(&t->lk);
	size_t ci = l->first[ti] + c;
	WT_ASSERT(ci < l->first[ti + 1] && l->buf[ci] == NULL);
	l->chunk_hash[ci] = h;
	l->have[ci] = 1;
	l->buf[ci] = b;
	wd_live_wait *w = take_locked(l, false);
	pthread_mutex_unlock(&t->lk);
	wake_chunks(w);
}

void wd_live_stored(wd_lives *t, wd_live *l, size_t ti, size_t c)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&t->lk);
	size_t ci = l->first[ti] + c;
	WT_ASSERT(ci < l->first[ti + 1]);
	wd_wbuf *b = l->buf[ci];
	l->buf[ci] = NULL;
	pthread_mutex_unlock(&t->lk);
	wd_wbuf_unref(b);
}

void wd_live_seal(wd_lives *t, wd_live *l)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&t->lk);
	l->sealed = true;
	wd_live_wait *w = take_locked(l, false);
	pthread_mutex_unlock(&t->lk);
	wake_chunks(w);
}

void wd_live_end(wd_lives *t, wd_live *l, int rv, const wt_errbuf *err)
{
	if (l == NULL)
		return;
	pthread_mutex_lock(&t->lk);
	WT_ASSERT(l->state == LIVE_PRODUCING);
	l->state = rv == WT_OK ? LIVE_DONE : LIVE_FAILED;
	l->rv = rv;
	if (rv != WT_OK && err != NULL)
		l->err = *err;
	else if (rv != WT_OK)
		wt_seterr(&l->err, rv, "production failed");
	l->end_seq = ++t->seq;
	t->n_producing--;
	/* The ended entry keeps no RAM (lock order: t->lk, then the budget's). */
	for (size_t i = 0; i < l->n_chunks; i++) {
		wd_wbuf_unref(l->buf[i]);
		l->buf[i] = NULL;
	}
	wd_live_wait *w = take_locked(l, true);
	trim_locked(t);
	pthread_mutex_unlock(&t->lk);
	wake_chunks(w); /* each looks its chunk up again: ready, or the error */
}

/* Take the parked manifest requests of layout key; caller holds t->lk. */
static wd_flight_waiter *take_plan_locked(wd_lives *t, wt_hash128 key)
{
	wd_flight_waiter *woken = NULL, **pp = &t->plan_waiters;
	while (*pp != NULL) {
		wd_flight_waiter *w = *pp;
		if (common_hash128_eq(req_of(w)->m.key, key)) {
			*pp = w->next;
			w->next = woken;
			woken = w;
		} else {
			pp = &w->next;
		}
	}
	return woken;
}

void wd_lives_ready(wd_lives *t, wt_hash128 key)
{
	pthread_mutex_lock(&t->lk);
	wd_flight_waiter *w = take_plan_locked(t, key);
	pthread_mutex_unlock(&t->lk);
	wake(w, WT_OK, NULL);
}

void wd_lives_layout_done(wd_lives *t, wt_hash128 key, int rv, const wt_errbuf *err)
{
	pthread_mutex_lock(&t->lk);
	wd_flight_waiter *w = take_plan_locked(t, key);
	pthread_mutex_unlock(&t->lk);
	wake(w, rv, err);
}

static nng_msg *manifest_reply(uint64_t id, const wd_live *l)
{
	Weights__Manifest *mf = weights__manifest__unpack(NULL, l->mf_len, l->mf);
	if (mf == NULL)
		return NULL;
	Weights__Reply rp = WEIGHTS__REPLY__INIT;
	rp.id = id;
	rp.body_case = WEIGHTS__REPLY__BODY_MANIFEST;
	rp.manifest = mf;
	nng_msg *m = wd_reply_msg(&rp);
	weights__manifest__free_unpacked(mf, NULL);
	return m;
}

bool wd_lives_manifest(wd_lives *t, wd_req *r, bool park, nng_msg **reply)
{
	*reply = NULL;
	pthread_mutex_lock(&t->lk);
	wd_live *l = *find(t, r->m.id);
	if (l != NULL && l->state == LIVE_PRODUCING) {
		/* Unpacked under the lock: the entry cannot go while it is held. */
		*reply = manifest_reply(r->id, l);
		pthread_mutex_unlock(&t->lk);
		return true;
	}
	if (park) {
		r->waiter.next = t->plan_waiters;
		t->plan_waiters = &r->waiter;
	}
	pthread_mutex_unlock(&t->lk);
	return false;
}

int wd_live_lookup(wd_lives *t, const uint8_t *id, size_t id_len, uint64_t index,
                   wd_live_wait *park, wd_live_ref *out, char *msg, size_t cap)
{
	memset(out, 0, sizeof(*out));
	if (id_len != WD_SHARD_ID_BYTES) {
		snprintf(msg, cap,
		         "live chunk request: shard_id must be the live manifest's "
		         "shard_id");
		return WT_EPROTO;
	}
	pthread_mutex_lock(&t->lk);
	wd_live *l = *find(t, id);
	int rv = WT_OK;
	if (l == NULL) {
		rv = WT_ENOTFOUND;
		snprintf(msg, cap,
		         "live chunk request: this server is not producing that shard (restarted, "
		         "or finished long ago); request the manifest again");
	} else if (index >= l->n_chunks) {
		rv = WT_EINVAL;
		snprintf(msg, cap,
		         "live chunk request: index %llu, the live manifest lists %zu chunks",
		         (unsigned long long)index, l->n_chunks);
	} else if (l->state == LIVE_FAILED) {
		rv = l->rv;
		snprintf(msg, cap, "the production of this shard failed: %s", l->err.msg);
	} else if (!ready_locked(l, index) && park == NULL) {
		rv = 2;
		snprintf(msg, cap, "live chunk %llu is not produced yet",
		         (unsigned long long)index);
	} else if (!ready_locked(l, index)) {
		WT_ASSERT(l->state == LIVE_PRODUCING); /* a finished rank has every chunk */
		park->index = index;
		park->next = l->waiters;
		l->waiters = park;
		rv = 1;
	} else {
		size_t ti = l->chunk_tensor[index];
		out->h = l->chunk_hash[index];
		out->clen = l->nbytes[index];
		out->has_th = index + 1 == l->first[ti + 1];
		common_hash128_to_bytes(l->tensor_hash[ti], out->th);
		if ((out->buf = l->buf[index]) != NULL) /* not in the cache yet: from RAM */
			wd_wbuf_ref(out->buf);
	}
	pthread_mutex_unlock(&t->lk);
	return rv;
}

static void chunk_step(wd_req *r);

static void chunk_resume(wd_job *job)
{
	chunk_step((wd_req *)((char *)job - offsetof(wd_req, job)));
}

static void chunk_woken(wd_live_wait *w)
{
	wd_req *r = (wd_req *)((char *)w - offsetof(wd_req, lc.wait));
	pthread_mutex_lock(&r->srv->lk);
	r->state = WD_WORK;
	pthread_mutex_unlock(&r->srv->lk);
	r->job.fn = chunk_resume;
	wd_pool_submit_lane(r->srv->pool, WD_LANE_REQUEST, &r->job);
}

/* Answer r's live chunk request, or park it until its chunk is ready: while
 * there is room (wd_req_park: waits leave a quarter of the contexts to
 * requests that do not wait), else a chunk not ready yet is WT_EBUSY (the
 * client asks again after its backoff). */
static void chunk_step(wd_req *r)
{
	wd_server *s = r->srv;
	char msg[WT_ERRMSG_MAX + 64];
	wd_live_ref ref;
	size_t waiting;
	/* WD_WAIT before it can be woken (lock order: lives, then srv) */
	bool room = wd_req_park(s, r, &waiting);
	r->lc.wait.fn = chunk_woken;
	int rv = wd_live_lookup(s->lives, r->lc.shard_id, WD_SHARD_ID_BYTES, r->lc.index,
	                        room ? &r->lc.wait : NULL, &ref, msg, sizeof(msg));
	if (rv == 1)
		return; /* parked: chunk_woken runs it again */
	pthread_mutex_lock(&s->lk);
	r->state = WD_WORK;
	pthread_mutex_unlock(&s->lk);
	if (rv == 2) { /* not ready, no room to wait */
		rv = WT_EBUSY;
		size_t n = strlen(msg);
		snprintf(msg + n, sizeof(msg) - n, "; ");
		n = strlen(msg);
		wd_park_full_msg(s, waiting, msg + n, sizeof(msg) - n);
	}
	if (rv != WT_OK) {
		wd_req_reply(r, wd_reply_error(r->id, rv, msg));
		return;
	}
	size_t blen = 0;
	const uint8_t *mem = ref.buf != NULL ? wd_wbuf_data(ref.buf, &blen) : NULL;
	WT_ASSERT(ref.buf == NULL || blen == ref.clen);
	wd_req_reply(r, wd_chunk_send(s, r->id, ref.h, ref.clen, r->lc.off, r->lc.nbytes,
	                              ref.has_th ? ref.th : NULL, mem));
	wd_wbuf_unref(ref.buf);
}

void wd_live_chunk_start(wd_req *r, const Weights__ChunkRequest *c)
{
	if (c->shard_id.len != WD_SHARD_ID_BYTES) {
		wd_req_reply(r, wd_reply_error(r->id, WT_EPROTO,
		                               "live chunk request: shard_id must be the live "
		                               "manifest's shard_id"));
		return;
	}
	memcpy(r->lc.shard_id, c->shard_id.data, WD_SHARD_ID_BYTES);
	r->lc.index = c->index;
	r->lc.off = c->offset;
	r->lc.nbytes = c->nbytes;
	chunk_step(r);
}

size_t wd_lives_producing(wd_lives *t, size_t *all)
{
	pthread_mutex_lock(&t->lk);
	size_t n = t->n_producing;
	if (all != NULL)
		*all = t->n;
	pthread_mutex_unlock(&t->lk);
	return n;
}
