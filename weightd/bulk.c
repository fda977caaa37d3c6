/*
 * bulk.c — the bulk data plane (docs/architecture.md 4.2; headers in
 * proto/bulk.h): with stream_listen set, an nng_stream_listener accepts raw
 * byte streams over which clients pipeline chunk requests; each reply is one
 * nng_stream_send of {reply header, RocksDB's pinned value} (a two-entry
 * iov), so the chunk bytes are not copied into a message first.
 *
 * Per accepted stream, a receive side and a send side over two reply slots,
 * so the next chunk is looked up and re-hashed (on the request lane) while
 * the previous one is on the wire; replies leave in request order:
 *
 *   receive: open (24 bytes, ticket) -> header (48) -> shard id -> slot queued
 *            on the request lane -> next header into the other slot, or wait
 *            for a free slot
 *   worker:  cache_chunk_view (re-hashes, pins) -> slot ready
 *   send:    the oldest slot once ready: {header, pinned bytes} -> view
 *            released, slot free (a waiting receive resumes)
 *
 * nng callbacks only move bytes and queue jobs. A malformed header or a wrong
 * ticket closes the stream (logged); a chunk that cannot be served is an
 * error reply (code + text) and the stream goes on. A stream that ended is
 * freed by a pool job (wd_bulk_reap_soon_locked) once no job of it is queued
 * (its aios cannot be freed from their own callbacks), at the next accept, or
 * at wd_bulk_stop. The listener, accepting and reaping: bulk_listen.c.
 */
#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "proto/bulk.h"
#include "weightd/bulk_int.h"

static void slot_clear(wd_bslot *sl)
{
	cache_view_release(sl->view);
	sl->view = NULL;
	wd_wbuf_unref(sl->wbuf);
	sl->wbuf = NULL;
	free(sl->copy);
	sl->copy = NULL;
}

/* What a prepared slot pins, taken out of it under wd_bulk.lk and let go
 * after (slot_take_locked, hold_release). */
typedef struct slot_hold {
	cache_view *view;
	wd_wbuf *wbuf;
	uint8_t *copy;
} slot_hold;

static void slot_take_locked(wd_bslot *sl, slot_hold *h)
{
	*h = (slot_hold){.view = sl->view, .wbuf = sl->wbuf, .copy = sl->copy};
	sl->view = NULL;
	sl->wbuf = NULL;
	sl->copy = NULL;
	sl->nseg = 0;
}

static void hold_release(slot_hold *h)
{
	cache_view_release(h->view);
	wd_wbuf_unref(h->wbuf);
	free(h->copy);
}

/* The stream ended (an error, the peer closed, or shutdown). Its prepared
 * replies are never sent: what they pin goes back now, not when the stream
 * is freed (a write-behind buffer held by a dead stream holds back the
 * production it belongs to, and with it the stream's own parked requests). */
static void bconn_kill(wd_bconn *b, const char *why)
{
	wd_bulk *bk = b->bk;
	slot_hold held[BULK_SLOTS] = {0};
	if (why != NULL)
		WT_LOG(WT_LOG_INFO, "bulk stream: closed: %s", why);
	pthread_mutex_lock(&bk->lk);
	b->dead = true;
	for (unsigned i = 0; i < BULK_SLOTS; i++)
		if (b->slot[i].ready && !(b->sending && i == b->send_head))
			slot_take_locked(&b->slot[i], &held[i]);
	pthread_cond_broadcast(&bk->cv);
	pthread_mutex_unlock(&bk->lk);
	for (unsigned i = 0; i < BULK_SLOTS; i++)
		hold_release(&held[i]);
	nng_stream_close(b->st); /* the other side's operation ends too */
	/* last: the reap may free b as soon as this callback has returned */
	pthread_mutex_lock(&bk->lk);
	bool reap = b->jobs == 0 && wd_bulk_reap_soon_locked(bk);
	pthread_mutex_unlock(&bk->lk);
	if (reap)
		wd_bulk_reap_submit(bk);
}

/* Start (or continue) a receive of rlen bytes into rbuf from rdone. An
 * unauthenticated stream gets hello_timeout_ms from its accept for the whole
 * opening message, as a pipe for its Hello (not per receive: a peer
 * trickling a byte now and then would hold it 24 times as long); once open,
 * a stream may idle between requests. */
static void recv_more(wd_bconn *b)
{
	nng_duration t = NNG_DURATION_INFINITE;
	if (b->open_by_ns != 0) {
		uint64_t now = common_now_ns();
		uint64_t left = b->open_by_ns > now ? (b->open_by_ns - now + 999999) / 1000000 : 0;
		t = left > 0 ? (nng_duration)left : 1;
	}
	nng_aio_set_timeout(b->raio, t);
	nng_iov v = {.iov_buf = b->rbuf + b->rdone, .iov_len = b->rlen - b->rdone};
	nng_aio_set_iov(b->raio, 1, &v);
	nng_stream_recv(b->st, b->raio);
}

static void recv_start(wd_bconn *b, int st, uint8_t *buf, size_t n)
{
	pthread_mutex_lock(&b->bk->lk); /* send_cb tests it for BR_WAIT */
	b->rstate = st;
	pthread_mutex_unlock(&b->bk->lk);
	b->rbuf = buf;
	b->rlen = n;
	b->rdone = 0;
	recv_more(b);
}

/* Continue sending slot[send_head] from sdone. */
static void send_more(wd_bconn *b)
{
	wd_bslot *sl = &b->slot[b->send_head];
	nng_iov v[2];
	unsigned n = 0;
	size_t skip = b->sdone;
	for (unsigned i = 0; i < sl->nseg; i++) {
		if (skip >= sl->seg[i].iov_len) {
			skip -= sl->seg[i].iov_len;
			continue;
		}
		v[n].iov_buf = (uint8_t *)sl->seg[i].iov_buf + skip;
		v[n].iov_len = sl->seg[i].iov_len - skip;
		skip = 0;
		n++;
	}
	/* per send: a TCP send completes with what the socket took, so this is
	 * the longest a reply may move no byte (a peer that stopped reading) */
	uint64_t ms = b->bk->srv->cfg->send_timeout_ms;
	nng_aio_set_timeout(b->saio, ms > 0 ? (nng_duration)ms : NNG_DURATION_INFINITE);
	nng_aio_set_iov(b->saio, n, v);
	nng_stream_send(b->st, b->saio);
}

/* With bk->lk held: 1 if the oldest slot is ready and nothing is being sent
 * (then it is marked as sending: the caller starts it after unlocking). */
static int send_claim_locked(wd_bconn *b)
{
	if (b->dead || b->sending || b->used == 0 || !b->slot[b->send_head].ready)
		return 0;
	b->sending = 1;
	b->sdone = 0;
	return 1;
}

/* Fill sl->rhdr with an error reply and the segments to send it. */
static void reply_error(wd_bslot *sl, int code, const char *msg)
{
	char text[BULK_MAX_MSG + 1]; /* UTF-8, as the client requires (proto/bulk.h) */
	snprintf(text, sizeof(text), "%s", msg);
	common_utf8_scrub(text);
	size_t n = strlen(text);
	bulk_reply rp = {.id = sl->req.id, .code = (uint32_t)code, .msg_len = (uint32_t)n};
	memcpy(rp.chunk_hash, sl->req.hash, 16);
	bulk_reply_encode(&rp, sl->rhdr);
	memcpy(sl->rhdr + BULK_REPLY_BYTES, text, n);
	sl->seg[0] = (nng_iov){.iov_buf = sl->rhdr, .iov_len = BULK_REPLY_BYTES + n};
	sl->nseg = 1;
}

/* The reply segments for n bytes at data (pinned by the slot) of the chunk
 * whose hash is h (and, th not NULL, its tensor's hash). */
static void slot_bytes(wd_bslot *sl, const uint8_t *data, uint64_t n, const uint8_t h[16],
                       const uint8_t *th)
{
	wd_server *s = sl->b->bk->srv;
	const bulk_req *q = &sl->req;
	uint64_t seq = atomic_fetch_add(&s->chunk_replies, 1) + 1;
	atomic_fetch_add(&s->bulk_replies, 1);
	atomic_fetch_add(&s->chunk_bytes_out, n);
	const wd_faults *f = atomic_load(&s->faults);
	if (f != NULL && f->corrupt_chunk == seq && n > 0 && (sl->copy = malloc(n)) != NULL) {
		memcpy(sl->copy, data, n); /* the pinned value is RocksDB's: corrupt a copy */
		sl->copy[n / 2] ^= 0x5a;
		data = sl->copy;
		WT_LOG(WT_LOG_NOTICE, "fault injection: corrupted bulk chunk reply #%llu",
		       (unsigned long long)seq);
	}
	bulk_reply rp = {.id = q->id, .nbytes = n, .offset = q->offset};
	memcpy(rp.chunk_hash, h, 16);
	if (th != NULL)
		memcpy(rp.tensor_hash, th, 16);
	bulk_reply_encode(&rp, sl->rhdr);
	sl->seg[0] = (nng_iov){.iov_buf = sl->rhdr, .iov_len = BULK_REPLY_BYTES};
	sl->seg[1] = (nng_iov){.iov_buf = (void *)data, .iov_len = (size_t)n};
	sl->nseg = n > 0 ? 2 : 1;
}

static void slot_work(wd_job *job);

static void slot_woken(wd_live_wait *w)
{
	wd_bslot *sl = (wd_bslot *)((char *)w - offsetof(wd_bslot, wait));
	wd_pool_submit_lane(sl->b->bk->srv->pool, WD_LANE_REQUEST, &sl->job);
}

/* The chunk of sl's request could not be had: drop what the slot holds and
 * reply with the error (a damaged chunk is logged). */
static void slot_fail(wd_bslot *sl, int rv, const wt_errbuf *err)
{
	slot_clear(sl);
	if (rv == WT_ECORRUPT)
		WT_LOG(WT_LOG_WARNING, "bulk request %llu: %s", (unsigned long long)sl->req.id,
		       err->msg);
	reply_error(sl, rv, err->msg);
}

/* A live (cut-through) request: the chunk from its write-behind buffer, or
 * from the cache once written; 1 when parked until it is produced. */
static int slot_prepare_live(wd_bslot *sl)
{
	wd_server *s = sl->b->bk->srv;
	const bulk_req *q = &sl->req;
	char msg[WT_ERRMSG_MAX + 64];
	wd_live_ref ref;
	sl->wait.fn = slot_woken;
	int rv = wd_live_lookup(s->lives, sl->sid, q->shard_id_len, bulk_req_live_index(q),
	                        &sl->wait, &ref, msg, sizeof(msg));
	if (rv == 1)
		return 1;
	if (rv != WT_OK) {
		reply_error(sl, rv, msg);
		return 0;
	}
	const uint8_t *data = NULL;
	size_t got = 0;
	wt_errbuf err;
	if ((sl->wbuf = ref.buf) != NULL) /* hashed by this process as it was filled */
		data = wd_wbuf_data(sl->wbuf, &got);
	else if ((rv = cache_chunk_view(s->cache, ref.h, &sl->view, &err)) == WT_OK)
		data = cache_view_data(sl->view, &got); /* re-hashed */
	if (rv == WT_OK && got != ref.clen)
		rv = wt_seterr(&err, WT_ECORRUPT,
		               "bulk request %llu: %zu bytes held for a %llu-byte live chunk",
		               (unsigned long long)q->id, got, (unsigned long long)ref.clen);
	if (rv != WT_OK) {
		slot_fail(sl, rv, &err);
		return 0;
	}
	uint8_t h[16];
	common_hash128_to_bytes(ref.h, h);
	slot_bytes(sl, data, ref.clen, h, ref.has_th ? ref.th : NULL);
	return 0;
}

/* Worker thread: find and pin the chunk, build the slot's reply segments
 * (the bytes, or an error reply). The view stays pinned until sent. 1 when a
 * live request was parked (it runs again once its chunk is produced). */
static int slot_prepare(wd_bslot *sl)
{
	wd_server *s = sl->b->bk->srv;
	const bulk_req *q = &sl->req;
	if (q->flags & BULK_F_LIVE)
		return slot_prepare_live(sl);
	wt_hash128 h = common_hash128_from_bytes(q->hash);
	uint64_t clen = 0, end, n = q->nbytes;
	char msg[300];
	if (!cache_has_shard(s->cache, sl->sid, q->shard_id_len)) {
		reply_error(sl, WT_ENOTFOUND,
		            "shard is not in the cache (evicted, corrupted or of an old revision); "
		            "request the manifest again");
		return 0;
	}
	if (!cache_shard_has_chunk(s->cache, sl->sid, q->shard_id_len, h, &clen)) {
		reply_error(
		    sl, WT_ENOTFOUND,
		    "bulk request: that chunk hash is not part of the shard; use a hash from "
		    "this shard's manifest");
		return 0;
	}
	if (n == 0 && q->offset <= clen)
		n = clen - q->offset;
	if (q->offset > clen || !wt_add_u64(q->offset, n, &end) || end > clen) {
		snprintf(
		    msg, sizeof(msg),
		    "bulk request: range offset %llu + %llu bytes is past the chunk's %llu bytes",
		    (unsigned long long)q->offset, (unsigned long long)q->nbytes,
		    (unsigned long long)clen);
		reply_error(sl, WT_EINVAL, msg);
		return 0;
	}
	wt_errbuf err;
	size_t got = 0;
	int rv = cache_chunk_view(s->cache, h, &sl->view, &err); /* re-hashes the whole chunk */
	const uint8_t *data = rv == WT_OK ? cache_view_data(sl->view, &got) : NULL;
	if (rv == WT_OK && got != clen)
		rv = wt_seterr(&err, WT_ECORRUPT,
		               "bulk request %llu: the cache holds %zu bytes for a %llu-byte chunk",
		               (unsigned long long)q->id, got, (unsigned long long)clen);
	if (rv != WT_OK) {
		slot_fail(sl, rv, &err);
		return 0;
	}
	slot_bytes(sl, data + q->offset, n, q->hash, NULL);
	return 0;
}

/* A job of b ends: b may be freed from now on (reap_dead, wd_bulk_stop free
 * a dead stream once it has none). Called after the job's last use of b, so
 * an operation it starts is in flight before then (bconn_free stops it). */
static void job_done(wd_bconn *b)
{
	wd_bulk *bk = b->bk;
	pthread_mutex_lock(&bk->lk);
	b->jobs--;
	bool reap = b->dead && b->jobs == 0 && wd_bulk_reap_soon_locked(bk);
	pthread_cond_broadcast(&bk->cv);
	pthread_mutex_unlock(&bk->lk);
	if (reap)
		wd_bulk_reap_submit(bk);
}

static void slot_work(wd_job *job)
{
	wd_bslot *sl = (wd_bslot *)((char *)job - offsetof(wd_bslot, job));
	wd_bconn *b = sl->b;
	wd_bulk *bk = b->bk;
	pthread_mutex_lock(&bk->lk);
	bool dead = b->dead || bk->closing;
	pthread_mutex_unlock(&bk->lk);
	if (!dead && slot_prepare(sl) == 1)
		return; /* parked: still a job of b (slot_woken queues it again) */
	slot_hold held = {0};
	pthread_mutex_lock(&bk->lk);
	sl->ready = 1;
	if (b->dead) /* it died meanwhile: never sent (bconn_kill) */
		slot_take_locked(sl, &held);
	int go = send_claim_locked(b);
	pthread_mutex_unlock(&bk->lk);
	hold_release(&held);
	if (go)
		send_more(b);
	job_done(b);
}

/* A whole request arrived in slot[recv_slot]: queue it, receive the next. */
static void request_in(wd_bconn *b)
{
	wd_bulk *bk = b->bk;
	wd_bslot *sl = &b->slot[b->recv_slot];
	pthread_mutex_lock(&bk->lk);
	if (b->dead || bk->closing) {
		pthread_mutex_unlock(&bk->lk);
		return;
	}
	sl->ready = 0;
	b->used++;
	b->jobs++;
	b->recv_slot = (b->recv_slot + 1) % BULK_SLOTS;
	bool room = b->used < BULK_SLOTS;
	if (!room)
		b->rstate = BR_WAIT; /* resumed when a send frees a slot */
	pthread_mutex_unlock(&bk->lk);
	atomic_fetch_add(&bk->srv->requests, 1);
	wd_pool_submit_lane(bk->srv->pool, WD_LANE_REQUEST, &sl->job);
	if (room)
		recv_start(b, BR_HDR, b->hdr, BULK_REQ_BYTES);
}

static void recv_cb(void *arg)
{
	wd_bconn *b = arg;
	wt_errbuf err;
	int nrv = nng_aio_result(b->raio);
	if (nrv == NNG_ETIMEDOUT && b->open_by_ns != 0) {
		bconn_kill(b, "no whole opening message within hello_timeout_ms");
		return;
	}
	if (nrv != 0) {
		bconn_kill(b,
		           nrv == NNG_ECLOSED || nrv == NNG_ECONNSHUT ? NULL : nng_strerror(nrv));
		return;
	}
	b->rdone += nng_aio_count(b->raio);
	if (b->rdone < b->rlen) {
		recv_more(b);
		return;
	}
	switch (b->rstate) {
	case BR_OPEN:
		if (bulk_open_check(b->open, b->bk->ticket, &err) != WT_OK) {
			wd_auth_log_failure(b->bk->srv, err.msg);
			bconn_kill(b, err.msg);
			return;
		}
		b->open_by_ns = 0;
		recv_start(b, BR_HDR, b->hdr, BULK_REQ_BYTES);
		return;
	case BR_HDR: {
		wd_bslot *sl = &b->slot[b->recv_slot]; /* free: receives wait for room */
		if (bulk_req_decode(b->hdr, &sl->req, &err) != WT_OK) {
			bconn_kill(b, err.msg);
			return;
		}
		recv_start(b, BR_SID, sl->sid, sl->req.shard_id_len);
		return;
	}
	case BR_SID:
		request_in(b);
		return;
	default:
		return;
	}
}

static void send_cb(void *arg)
{
	wd_bconn *b = arg;
	wd_bulk *bk = b->bk;
	int nrv = nng_aio_result(b->saio);
	wd_bslot *sl = &b->slot[b->send_head];
	if (nrv != 0) {
		pthread_mutex_lock(&bk->lk);
		b->sending = 0;
		pthread_mutex_unlock(&bk->lk);
		if (nrv == NNG_ETIMEDOUT)
			atomic_fetch_add(&bk->srv->stalled_closed, 1);
		bconn_kill(b, nrv == NNG_ECLOSED || nrv == NNG_ECONNSHUT ? NULL
		              : nrv == NNG_ETIMEDOUT
		                  ? "a reply moved no byte for send_timeout_ms: the peer stopped "
		                    "reading; its stream is closed and the chunk it held let go"
		                  : nng_strerror(nrv));
		return;
	}
	b->sdone += nng_aio_count(b->saio);
	size_t total = 0;
	for (unsigned i = 0; i < sl->nseg; i++)
		total += sl->seg[i].iov_len;
	if (b->sdone < total) {
		send_more(b);
		return;
	}
	slot_clear(sl);
	pthread_mutex_lock(&bk->lk);
	sl->ready = 0;
	b->sending = 0;
	b->used--;
	b->send_head = (b->send_head + 1) % BULK_SLOTS;
	bool resume = b->rstate == BR_WAIT && !b->dead && !bk->closing;
	if (resume)
		b->rstate = BR_HDR;
	int go = send_claim_locked(b);
	if (go || resume)
		b->jobs++; /* b is used after the unlock: not freed meanwhile */
	pthread_mutex_unlock(&bk->lk);
	if (go)
		send_more(b);
	if (resume)
		recv_start(b, BR_HDR, b->hdr, BULK_REQ_BYTES);
	if (go || resume)
		job_done(b);
}

wd_bconn *wd_bconn_new(wd_bulk *bk, nng_stream *st)
{
	wd_bconn *b = calloc(1, sizeof(*b));
	if (b == NULL || nng_aio_alloc(&b->raio, recv_cb, b) != 0 ||
	    nng_aio_alloc(&b->saio, send_cb, b) != 0) {
		if (b != NULL)
			nng_aio_free(b->raio);
		free(b);
		return NULL;
	}
	b->bk = bk;
	b->st = st;
	for (unsigned i = 0; i < BULK_SLOTS; i++) {
		b->slot[i].b = b;
		b->slot[i].job.fn = slot_work;
	}
	return b;
}

void wd_bconn_open(wd_bconn *b)
{
	uint64_t ms = wd_cfg_live(&b->bk->srv->cfg->hello_timeout_ms);
	if (ms > 0)
		b->open_by_ns = common_now_ns() + ms * 1000000u;
	recv_start(b, BR_OPEN, b->open, BULK_OPEN_BYTES);
}

void wd_bconn_free(wd_bconn *b)
{
	nng_aio_stop(b->raio); /* waits for its callback */
	nng_aio_stop(b->saio);
	nng_aio_free(b->raio);
	nng_aio_free(b->saio);
	for (unsigned i = 0; i < BULK_SLOTS; i++)
		slot_clear(&b->slot[i]);
	nng_stream_free(b->st);
	free(b);
}
