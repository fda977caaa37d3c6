/*
 * fetch.c — wt_client_fetch: a window of chunk requests in flight, verified
 * bytes handed to the sink in manifest order.
 *
 * Shape: one request (nng context + aio, fetch_msg.c) per window slot (nng's
 * async demo pattern). Chunk i always uses slot i % window. The aio callback
 * (nng thread) receives the reply and checks its chunk hash; the fetch thread
 * waits for the slot of the next chunk in order (head of line), hands it to
 * the sink, folds it into the tensor's XXH3-128 and reuses the slot for
 * chunk i + window. So memory
 * stays at window x chunk size whatever the shard size, and the sink sees
 * each byte once, in order, verified.
 *
 * Failures are handled at the head: a retryable error (timeout, disconnect)
 * resends with exponential backoff; after max_retries the next endpoint in
 * rendezvous order takes over (all in-flight requests move; those over
 * messages are abandoned, not waited for). When nothing ended for
 * client_quiet_probe_ms while the head waits, a Hello asks whether the
 * server is stopped (fetch_probe_quiet). A server that
 * no longer knows the shard (restarted) is asked for the manifest again; it
 * must list the same chunks. A chunk hash mismatch is fetched once more, then
 * WT_EHASH. (What a failure leads to is decided in fetch_retry.c.)
 *
 * A live manifest (cut-through, docs/client.md "Cut-through serving") has no hashes:
 * chunks are asked by index, each reply carries the chunk's hash (and, on a
 * tensor's last chunk, the tensor's), learned into f->chash / f->thash and
 * checked exactly like manifest hashes. A live manifest asked again must be of
 * the same revision and tiling, and agree with every hash already learned
 * (live_adopt); its production's error (WT_ECHANGED) ends the fetch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "client/client_int.h"
#include "client/fetch_int.h"
#include "common/common.h"
#include "proto/wire.h"
#include "weights/engine.h"

const char *fetch_tensor_name(const fetch *f, size_t ci)
{
	return f->m->tensors[f->m->chunks[ci].tensor].name;
}

size_t fetch_chunk_in_tensor(const fetch *f, size_t ci)
{
	return ci - f->m->tensors[f->m->chunks[ci].tensor].first_chunk;
}

bool fetch_reply_hashes_ok(const fetch *f, size_t ci, const uint8_t h[16], bool has_th)
{
	const client_chunk *ch = &f->m->chunks[ci];
	bool last = ch->off + ch->nbytes == f->m->tensors[ch->tensor].nbytes;
	return !(f->cknown[ci] && memcmp(h, f->chash[ci], 16) != 0) &&
	       !(last && !f->tknown[ch->tensor] && !has_th);
}

void fetch_learn_hashes(fetch *f, size_t ci, const uint8_t h[16], const uint8_t *th)
{
	const client_chunk *ch = &f->m->chunks[ci];
	bool last = ch->off + ch->nbytes == f->m->tensors[ch->tensor].nbytes;
	if (!f->cknown[ci]) {
		memcpy(f->chash[ci], h, 16);
		f->cknown[ci] = 1;
	}
	if (last && th != NULL && !f->tknown[ch->tensor]) {
		memcpy(f->thash[ch->tensor], th, 16);
		f->tknown[ch->tensor] = 1;
	}
}

int fetch_check_reply(fetch *f, fetch_slot *s, nng_msg *msg, wt_errbuf *err)
{
	const client_chunk *ch = &f->m->chunks[s->chunk];
	const char *url = f->c->eps[f->ep].url;
	Weights__Reply *r = NULL;
	const uint8_t *tail;
	size_t tail_len;
	int rv = client_parse_reply(f->c, f->ep, msg, s->id, WEIGHTS__REPLY__BODY_CHUNK, &r, &tail,
	                            &tail_len, NULL, err);
	if (rv != WT_OK)
		return wt_errprefix(err, "tensor '%s' chunk %zu", fetch_tensor_name(f, s->chunk),
		                    fetch_chunk_in_tensor(f, s->chunk));
	size_t ci = s->chunk;
	uint8_t rh[16], th[16];
	/* a live reply carries the hash of the tensor it completes */
	int has_th = r->chunk->tensor_hash.len == 16;
	size_t th_len = r->chunk->tensor_hash.len;
	int wrong = r->chunk->hash.len != 16 || r->chunk->offset != 0 || tail_len != ch->nbytes;
	int bad_hash = 0;
	if (!wrong) {
		memcpy(rh, r->chunk->hash.data, 16);
		if (has_th)
			memcpy(th, r->chunk->tensor_hash.data, 16);
		bad_hash = !fetch_reply_hashes_ok(f, ci, rh, has_th);
	}
	wire_reply_free(r);
	if (wrong)
		return wt_seterr(
		    err, WT_EPROTO,
		    "endpoint %s: tensor '%s' chunk %zu: reply is for another chunk or "
		    "range (%zu bytes, expected %llu)",
		    url, fetch_tensor_name(f, s->chunk), fetch_chunk_in_tensor(f, s->chunk),
		    tail_len, (unsigned long long)ch->nbytes);
	if (bad_hash && f->cknown[ci] && memcmp(rh, f->chash[ci], 16) != 0)
		return wt_seterr(
		    err, WT_EPROTO,
		    "endpoint %s: tensor '%s' chunk %zu: the reply's chunk hash is not "
		    "the one the manifest (or an earlier reply) gave: the server sent "
		    "another chunk; get the manifest again",
		    url, fetch_tensor_name(f, s->chunk), fetch_chunk_in_tensor(f, s->chunk));
	if (bad_hash)
		return wt_seterr(
		    err, WT_EPROTO,
		    "endpoint %s: tensor '%s' chunk %zu: the last chunk of a tensor of "
		    "a live manifest came without the tensor's hash (tensor_hash of "
		    "%zu bytes, expected 16); the server breaks the cut-through "
		    "protocol: upgrade it or fetch once the shard is produced",
		    url, fetch_tensor_name(f, s->chunk), fetch_chunk_in_tensor(f, s->chunk),
		    th_len);
	if (f->verify) {
		wt_hash128 got = common_hash128(tail, tail_len);
		wt_hash128 want = common_hash128_from_bytes(rh);
		if (!common_hash128_eq(got, want)) {
			char g[WT_HASH_HEX_LEN + 1], w[WT_HASH_HEX_LEN + 1];
			common_hash128_hex(got, g);
			common_hash128_hex(want, w);
			return wt_seterr(
			    err, WT_EHASH,
			    "endpoint %s: tensor '%s' chunk %zu (offset %llu, %llu bytes): "
			    "XXH3-128 %s, manifest says %s",
			    url, fetch_tensor_name(f, s->chunk), fetch_chunk_in_tensor(f, s->chunk),
			    (unsigned long long)ch->off, (unsigned long long)ch->nbytes, g, w);
		}
	}
	fetch_learn_hashes(f, ci, rh, has_th ? th : NULL);
	s->data = tail;
	return WT_OK;
}

void fetch_slot_finish(fetch_slot *s, int rv, const wt_errbuf *err, nng_msg *msg)
{
	fetch *f = s->f;
	pthread_mutex_lock(&f->lk);
	s->rv = rv;
	if (err != NULL && rv != WT_OK)
		s->err = *err;
	s->msg = msg;
	s->state = SLOT_DONE;
	if (s->on_msg)
		f->ended_ns = common_now_ns();
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->lk);
}

int fetch_slot_issue(fetch *f, fetch_slot *s, size_t ci, wt_errbuf *err)
{
	Weights__Request req = WEIGHTS__REQUEST__INIT;
	Weights__ChunkRequest cr = WEIGHTS__CHUNK_REQUEST__INIT;
	cr.shard_id.data = f->shard_id;
	cr.shard_id.len = f->shard_id_len;
	if (f->live) { /* cut-through: by index; the hash comes with the reply */
		cr.live = 1;
		cr.index = ci;
	} else {
		cr.hash.data = f->chash[ci];
		cr.hash.len = 16;
	}
	cr.offset = 0;
	cr.nbytes = 0; /* the whole chunk */
	req.body_case = WEIGHTS__REQUEST__BODY_CHUNK;
	req.chunk = &cr;
	req.id = atomic_fetch_add(&f->c->next_id, 1);
	s->fused = 0;
	s->dst = NULL;
	if (fetch_bulk_on(f)) { /* the bulk stream (fetch_bulk.c) */
		const client_chunk *ch = &f->m->chunks[ci];
		if (f->ops.recv_buf != NULL && ch->nbytes > 0) /* straight into the sink */
			s->dst = f->ops.recv_buf(f->sink, ch->tensor, ch->off, (size_t)ch->nbytes);
		s->chunk = ci;
		s->id = req.id;
		pthread_mutex_lock(&f->lk);
		s->state = SLOT_BUSY;
		s->on_msg = 0;
		s->lost = 0;
		s->msg = NULL;
		pthread_mutex_unlock(&f->lk);
		fetch_bulk_issue(f, s);
		return WT_OK;
	}
	nng_msg *msg;
	int rv = client_frame(&req, &msg, err);
	if (rv != WT_OK)
		return rv;
	s->chunk = ci;
	s->id = req.id;
	pthread_mutex_lock(&f->lk);
	s->state = SLOT_BUSY;
	s->on_msg = 1;
	s->lost = 0;
	s->msg = NULL;
	pthread_mutex_unlock(&f->lk);
	if ((rv = fetch_msg_send(f, s, msg, err)) != WT_OK) {
		pthread_mutex_lock(&f->lk);
		s->state = SLOT_IDLE;
		pthread_mutex_unlock(&f->lk);
	}
	return rv;
}

/* Whether every connection of the fetch's endpoint is gone for good
 * (client_sockmon_lost): nng would keep a request queued for a connection
 * until request_timeout_ms, and a retry would wait as long again. */
static bool endpoint_lost(const fetch *f)
{
	for (size_t k = 0; k < f->n_socks; k++)
		if (!client_sockmon_lost(f->c, f->mons[k]))
			return false;
	return f->n_socks > 0;
}

/* Whether every connection of the fetch's endpoint is up: a stopped daemon's
 * are; a dead one's are not (endpoint_lost acts on that, without a Hello). */
static bool endpoint_connected(const fetch *f)
{
	for (size_t k = 0; k < f->n_socks; k++)
		if (f->mons[k] == NULL || atomic_load(&f->mons[k]->pipes) == 0)
			return false;
	return f->n_socks > 0;
}

static bool flag_set(const int *flag)
{
	return flag != NULL && __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
}

bool fetch_cancel_asked(const fetch *f)
{
	return flag_set(f->cancel) || (f->o != NULL && flag_set(f->o->cancel));
}

int fetch_canceled_err(const fetch *f, wt_errbuf *err)
{
	return wt_seterr(err, WT_ECANCELED, "fetch canceled by %s (sink aborted)",
	                 flag_set(f->cancel) ? "wt_fetch_cancel" : "wt_fetch_opts.cancel");
}

enum { WAIT_ENDED = 0, WAIT_QUIET, WAIT_CANCELED };

/*
 * Wait for slot s (f->lk held). A request over messages on an endpoint that
 * lost every connection and got none back within connect_timeout_ms + 1 s (a
 * killed daemon, a host gone) is canceled with s->lost set: nng would keep it
 * queued for request_timeout_ms (as the manifest wait in conn.c cancels). A
 * daemon back within that grace gets the request again from nng.
 * quiet_since != 0 (the head, another endpoint listed): WAIT_QUIET, s still
 * busy, once for client_quiet_probe_ms since quiet_since no request over
 * messages ended while every connection is up (s on messages) or the fetch's
 * streams received no byte (s on a bulk stream): fetch_probe_quiet asks why.
 * head (the fetch loop's wait): WAIT_CANCELED, s still busy, once
 * wt_fetch_cancel was called (checked every 100 ms).
 */
static int slot_wait_locked_how(fetch *f, fetch_slot *s, uint64_t quiet_since, bool head)
{
	uint64_t quiet = (uint64_t)client_quiet_probe_ms(f->c) * 1000000u;
	while (s->state == SLOT_BUSY) {
		struct timespec dl = common_timespec_in(CLOCK_REALTIME, 100);
		pthread_cond_timedwait(&f->cv, &f->lk, &dl);
		if (s->state != SLOT_BUSY)
			break;
		if (head && fetch_cancel_asked(f))
			return WAIT_CANCELED;
		if (s->on_msg && !s->lost && endpoint_lost(f)) {
			s->lost = 1;
			pthread_mutex_unlock(&f->lk);
			fetch_msg_cancel(s);
			pthread_mutex_lock(&f->lk);
		} else if (quiet_since != 0 &&
		           (s->on_msg ? !s->lost && endpoint_connected(f) : f->bulk != NULL)) {
			uint64_t moved = s->on_msg ? f->ended_ns : fetch_bulk_moved_ns(f);
			uint64_t last = moved > quiet_since ? moved : quiet_since;
			if (common_now_ns() - last >= quiet)
				return WAIT_QUIET;
		}
	}
	return WAIT_ENDED;
}

static void slot_wait_locked(fetch *f, fetch_slot *s)
{
	(void)slot_wait_locked_how(f, s, 0, false);
}

/* Wait for the head slot s; one canceled for a lost endpoint ends as
 * WT_EUNAVAIL with s->lost set, and the caller fails over at once. Before, it
 * waited request_timeout_ms, and so did each of max_retries retries (155-184 s
 * with the defaults while the next endpoint was up). quiet_since: as for
 * slot_wait_locked_how, whose WAIT_* it returns. */
static int slot_wait(fetch *f, fetch_slot *s, uint64_t quiet_since)
{
	pthread_mutex_lock(&f->lk);
	int how = slot_wait_locked_how(f, s, quiet_since, true);
	if (how == WAIT_ENDED && s->lost && s->rv != WT_OK)
		s->rv = wt_seterr(&s->err, WT_EUNAVAIL,
		                  "endpoint %s: tensor '%s' chunk %zu: every connection lost and "
		                  "none back within %u ms (weightd stopped?)",
		                  f->c->eps[f->ep].url, fetch_tensor_name(f, s->chunk),
		                  fetch_chunk_in_tensor(f, s->chunk),
		                  f->c->o.connect_timeout_ms + 1000);
	pthread_mutex_unlock(&f->lk);
	return how;
}

/*
 * Take every busy slot back and drop what it holds. Nothing is aborted: nng
 * 1.5's nng_aio_cancel, closing a context with an operation in flight, or
 * closing a socket while replies are still on the wire can lose a completion
 * (nng issues 1813, 2208) and hang nng_close. Each request in flight ends with
 * its reply, its connection or its own timeout (request_timeout_ms), so the
 * wait is bounded; only a request on an endpoint with no connection left
 * (nothing on the wire) is canceled (slot_wait_locked). Where the fetch
 * cannot wait (a fail-over, its error) it abandons them first
 * (fetch_msg_abandon). Returns how many slots other than skip ended with
 * WT_ECORRUPT (the server evicted the shard for a damaged chunk), the last
 * one's error in *corrupt_err.
 */
unsigned fetch_slots_reclaim_corrupt(fetch *f, const fetch_slot *skip, wt_errbuf *corrupt_err)
{
	unsigned n_corrupt = 0;
	pthread_mutex_lock(&f->lk);
	for (size_t i = 0; i < f->w; i++) {
		fetch_slot *s = &f->slots[i];
		slot_wait_locked(f, s); /* on a lost endpoint: canceled, not timed out */
		if (s != skip && s->state == SLOT_DONE && s->rv == WT_ECORRUPT) {
			n_corrupt++;
			if (corrupt_err != NULL)
				*corrupt_err = s->err;
		}
		if (s->msg != NULL)
			nng_msg_free(s->msg);
		s->msg = NULL;
		s->state = SLOT_IDLE;
	}
	pthread_mutex_unlock(&f->lk);
	return n_corrupt;
}

void fetch_slots_reclaim(fetch *f)
{
	(void)fetch_slots_reclaim_corrupt(f, NULL, NULL);
}

/* Point every slot at endpoint ep, over as many of its connections as open
 * (fewer than asked when a later one's Hello is slow: client_ep_sockets). */
int fetch_use_endpoint(fetch *f, size_t ep, wt_errbuf *err)
{
	fetch_msg_free(f); /* their contexts are the old endpoint's */
	fetch_bulk_close(f);
	size_t want = f->c->o.connections < f->w ? f->c->o.connections : f->w;
	size_t n = 0;
	int rv = client_ep_sockets(f->c, ep, want, f->socks, f->mons, &n, err);
	if (rv != WT_OK)
		return rv;
	f->n_socks = n;
	f->ep = ep; /* slots open their contexts on these sockets when issued */
	snprintf(f->st->endpoint, sizeof(f->st->endpoint), "%s", f->c->eps[ep].url);
	fetch_bulk_open(f); /* when asked for and offered; else messages */
	return WT_OK;
}

/* Move in-flight chunks [head, issued) to fresh requests (after reclaim). */
int fetch_reissue(fetch *f, size_t head, size_t issued, wt_errbuf *err)
{
	for (size_t ci = head; ci < issued; ci++) {
		int rv = fetch_slot_issue(f, &f->slots[ci % f->w], ci, err);
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

/* Deliver tensor ti's zero-byte body (no chunks): begin, hash check, end. */
static int empty_tensor(fetch *f, wt_sink *sink, size_t ti, wt_errbuf *err)
{
	const client_tensor *t = &f->m->tensors[ti];
	int rv = f->ops.tensor_begin(sink, ti, err);
	if (rv != WT_OK)
		return rv;
	wt_hash128 h = common_hash128("", 0);
	if (f->verify && f->tknown[ti] &&
	    !common_hash128_eq(h, common_hash128_from_bytes(f->thash[ti])))
		return wt_seterr(
		    err, WT_EHASH,
		    "tensor '%s': empty, but its manifest hash is not the hash of 0 bytes",
		    t->name);
	return f->ops.tensor_end(sink, ti, err);
}

/* Hand the verified chunk in slot s to the sink; close the tensor at its last chunk. */
static int deliver(fetch *f, wt_sink *sink, fetch_slot *s, wt_errbuf *err)
{
	const client_chunk *ch = &f->m->chunks[s->chunk];
	const client_tensor *t = &f->m->tensors[ch->tensor];
	int rv;
	if (ch->off == 0) {
		if ((rv = f->ops.tensor_begin(sink, ch->tensor, err)) != WT_OK)
			return rv;
		common_hasher_reset(f->hasher);
	}
	if ((rv = f->ops.write(sink, ch->tensor, ch->off, s->data, (size_t)ch->nbytes, err)) !=
	    WT_OK)
		return rv;
	if (f->verify && t->n_chunks > 1) {
		if (s->fused) /* hashed while hot as it arrived (fetch_bulk.c) */
			common_hasher_copy(f->hasher, s->tsnap);
		else
			common_hasher_update(f->hasher, s->data, (size_t)ch->nbytes);
	}
	f->st->bytes += ch->nbytes;
	f->st->chunks++;
	if (ch->off + ch->nbytes != t->nbytes)
		return WT_OK;
	if (f->verify) {
		/* one chunk: its verified hash is the tensor's hash */
		wt_hash128 got = t->n_chunks > 1 ? common_hasher_digest(f->hasher)
		                                 : common_hash128_from_bytes(f->chash[s->chunk]);
		const uint8_t *want = f->thash[ch->tensor];
		if (!common_hash128_eq(got, common_hash128_from_bytes(want))) {
			char g[WT_HASH_HEX_LEN + 1], w[WT_HASH_HEX_LEN + 1];
			common_hash128_hex(got, g);
			wt_hash_hex(want, w);
			return wt_seterr(
			    err, WT_EHASH,
			    "endpoint %s: tensor '%s': XXH3-128 of its %llu bytes is %s, the "
			    "manifest says %s",
			    f->c->eps[f->ep].url, t->name, (unsigned long long)t->nbytes, g, w);
		}
	}
	return f->ops.tensor_end(sink, ch->tensor, err);
}

static int run(fetch *f, wt_sink *sink, const wt_fetch_opts *o, fetch_loop *L, wt_errbuf *err)
{
	const wt_manifest *m = f->m;
	int rv;
	uint64_t quiet_since = common_now_ns(); /* the head's wait, or the last probe */
	while (L->head < m->n_chunks) {
		/* the first chunk goes alone: it does not share the wire and the
		 * CPU with a window of others, so the first byte comes early */
		size_t w = L->head == 0 ? 1 : f->w;
		while (L->issued < m->n_chunks && L->issued < L->head + w) {
			if ((rv = fetch_slot_issue(f, &f->slots[L->issued % f->w], L->issued,
			                           err)) != WT_OK)
				return rv;
			L->issued++;
		}
		fetch_slot *s = &f->slots[L->head % f->w];
		int how = slot_wait(f, s, f->c->n_eps > 1 ? quiet_since : 0);
		if (how == WAIT_CANCELED)
			return fetch_canceled_err(f, err);
		if (how == WAIT_QUIET) {
			if ((rv = fetch_probe_quiet(f, L, err)) != WT_OK)
				return rv;
			/* answered: slow, not stopped; quiet again as long before the
			 * next Hello (a fail-over reissued what was in flight) */
			quiet_since = common_now_ns();
			continue;
		}
		quiet_since = common_now_ns();
		if (s->rv != WT_OK) {
			if ((rv = fetch_handle_failure(f, L, s, err)) != WT_OK)
				return rv;
			continue;
		}
		size_t ti = m->chunks[L->head].tensor;
		for (; L->next_tensor < ti; L->next_tensor++)
			if ((rv = empty_tensor(f, sink, L->next_tensor, err)) != WT_OK)
				return rv;
		rv = deliver(f, sink, s, err);
		if (s->msg != NULL)
			nng_msg_free(s->msg);
		s->msg = NULL;
		s->state = SLOT_IDLE;
		if (rv != WT_OK)
			return rv;
		if (m->chunks[L->head].off + m->chunks[L->head].nbytes == m->tensors[ti].nbytes)
			L->next_tensor = ti + 1;
		L->head++;
		L->bud.t0_ms = 0;
		L->bud.passes = 0;
		L->attempt = 0;
		L->refreshed = 0;
		L->rehello = 0;
		if (o->progress != NULL &&
		    o->progress(o->progress_ctx, f->st->bytes, m->total_bytes) != 0)
			return wt_seterr(err, WT_ECANCELED,
			                 "fetch canceled by the progress callback");
		/* while chunks keep coming the wait below never runs long enough
		 * to look at the flags: look after each one */
		if (fetch_cancel_asked(f))
			return fetch_canceled_err(f, err);
	}
	for (; L->next_tensor < m->n_tensors; L->next_tensor++)
		if ((rv = empty_tensor(f, sink, L->next_tensor, err)) != WT_OK)
			return rv;
	return WT_OK;
}

static void fetch_fini(fetch *f)
{
	if (f->slots != NULL) {
		fetch_slots_reclaim(f);
		fetch_bulk_close(f);
		fetch_msg_free(f);
		for (size_t i = 0; i < f->w; i++) {
			free(f->slots[i].buf);
			common_hasher_free(f->slots[i].tsnap);
		}
	}
	free(f->slots);
	free(f->shard_id);
	free(f->chash);
	free(f->cknown);
	free(f->thash);
	free(f->tknown);
	common_hasher_free(f->hasher);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->lk);
}

static int fetch_init(fetch *f, wt_client *c, const wt_manifest *m, wt_fetch_stats *st,
                      wt_errbuf *err)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lk, NULL);
	pthread_cond_init(&f->cv, NULL);
	f->c = c;
	f->m = m;
	f->st = st;
	f->verify = atomic_load(&c->verify);
	f->w = c->o.window;
	if (m->n_chunks > 0 && f->w > m->n_chunks)
		f->w = m->n_chunks;
	f->slots = calloc(f->w, sizeof(*f->slots));
	f->shard_id = malloc(m->shard_id_len);
	f->hasher = common_hasher_new();
	size_t nc = m->n_chunks ? m->n_chunks : 1, nt = m->n_tensors ? m->n_tensors : 1;
	f->chash = calloc(nc, 16);
	f->cknown = calloc(nc, 1);
	f->thash = calloc(nt, 16);
	f->tknown = calloc(nt, 1);
	if (f->slots == NULL || f->shard_id == NULL || f->hasher == NULL || f->chash == NULL ||
	    f->cknown == NULL || f->thash == NULL || f->tknown == NULL)
		return wt_seterr(err, WT_ENOMEM, "fetch: out of memory");
	f->live = m->live;
	for (size_t i = 0; i < m->n_chunks; i++) {
		memcpy(f->chash[i], m->chunks[i].hash, 16);
		f->cknown[i] = (uint8_t)m->chunks[i].known;
	}
	for (size_t i = 0; i < m->n_tensors; i++) {
		memcpy(f->thash[i], m->tensors[i].hash, 16);
		f->tknown[i] = (uint8_t)m->tensors[i].known;
	}
	memcpy(f->shard_id, m->shard_id, m->shard_id_len);
	f->shard_id_len = m->shard_id_len;
	for (size_t i = 0; i < f->w; i++)
		f->slots[i].f = f;
	return WT_OK;
}

/* The endpoint that sent the manifest holds the shard: ask it first (the others
 * keep their rendezvous order behind it). */
static void start_at_server(const wt_client *c, const wt_manifest *m, size_t *order)
{
	if (m->served_by == NULL)
		return;
	for (size_t k = 1; k < c->n_eps; k++)
		if (strcmp(c->urls[order[k]], m->served_by) == 0) {
			size_t ep = order[k];
			memmove(order + 1, order, k * sizeof(order[0]));
			order[0] = ep;
			return;
		}
}

int wt_client_fetch(wt_client *c, const wt_manifest *m, wt_sink *sink,
                    const wt_fetch_opts *caller_opts, wt_errbuf *err)
{
	return client_fetch(c, m, sink, caller_opts, NULL, err);
}

int client_fetch(wt_client *c, const wt_manifest *m, wt_sink *sink,
                 const wt_fetch_opts *caller_opts, const int *cancel, wt_errbuf *err)
{
	if (c == NULL || m == NULL || sink == NULL || sink->ops == NULL)
		return wt_seterr(err, WT_EINVAL, "fetch: client, manifest and sink are required");
	wt_fetch_opts opts; /* the caller's members over the defaults (abi.c) */
	wt_sink_ops ops;
	int rv = client_fetch_opts_in(&opts, caller_opts, err);
	if (rv == WT_OK)
		rv = client_sink_ops_in(&ops, sink, err);
	if (rv != WT_OK)
		return rv;
	if (flag_set(cancel) || flag_set(opts.cancel))
		return wt_seterr(err, WT_ECANCELED,
		                 "fetch canceled by %s before it began (the "
		                 "sink was not called)",
		                 flag_set(cancel) ? "wt_fetch_cancel" : "wt_fetch_opts.cancel");
	(void)client_reqs_reap(c, 0); /* what earlier fetches left that ended since */
	wt_fetch_stats local;
	wt_fetch_stats *st = opts.stats != NULL ? opts.stats : &local;
	memset(st, 0, sizeof(*st));
	fetch f;
	fetch_loop L;
	memset(&L, 0, sizeof(L));
	rv = fetch_init(&f, c, m, st, err);
	f.ops = ops;
	f.sink = sink;
	f.o = &opts;
	f.cancel = cancel;
	if (rv == WT_OK && (L.refetched = calloc(m->n_chunks / 8 + 1, 1)) == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "fetch: out of memory");
	if (rv != WT_OK) {
		free(L.refetched);
		fetch_fini(&f);
		return rv;
	}
	client_rendezvous_order(m->route_key, (const char *const *)c->urls, c->n_eps, L.order);
	start_at_server(c, m, L.order);
	if ((rv = f.ops.begin(sink, m, err)) != WT_OK) {
		free(L.refetched);
		fetch_fini(&f);
		return rv;
	}
	f.ep = L.order[0];
	rv = fetch_use_endpoint(&f, L.order[0], err);
	if (rv != WT_OK && client_retryable(rv)) {
		client_log(c, WT_CLIENT_LOG_WARNING, "%s", err ? err->msg : "endpoint down");
		rv = fetch_fail_over(&f, &L, err);
	}
	if (rv == WT_OK)
		rv = run(&f, sink, &opts, &L, err);
	if (rv == WT_OK)
		fetch_bulk_done(&f); /* every chunk in: its streams stay open for the next */
	if (rv == WT_OK) {
		rv = f.ops.end(sink, err);
	} else {
		/* receivers may still be writing into the sink's memory (recv_buf):
		 * stop them, and walk away from every request in flight over
		 * messages (a stopped server would hold them request_timeout_ms),
		 * before the sink lets go */
		fetch_bulk_close(&f);
		fetch_msg_abandon(&f);
		fetch_slots_reclaim(&f);
		f.ops.abort(sink);
	}
	free(L.refetched);
	fetch_fini(&f);
	return rv;
}
