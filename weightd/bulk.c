/*
 * bulk.c — the bulk data plane (docs/architecture.md 4.2; headers in
 * proto/bulk.h): with stream_listen set, an nng_stream_listener accepts raw
 * byte streams over which clients pipeline chunk requests; each reply is one
 * nng_stream_send of {reply header, RocksDB's pinned value} (a two-entry
 * iov), so the chunk bytes are not copied into a message first.
 *
 * One state machine per accepted stream, one request in service at a time
 * (the client pipelines; the socket buffers the rest):
 *
 *   BC_OPEN --24 bytes, ticket ok--> BC_HDR --48--> BC_SID --id bytes-->
 *   BC_WORK (request lane: cache_chunk_view re-hashes and pins) --> BC_SEND
 *   --all sent, view released--> BC_HDR
 *
 * nng callbacks only move bytes and queue the job. A malformed header or a
 * wrong ticket closes the stream (logged); a chunk that cannot be served is
 * an error reply (code + text) and the stream goes on. A stream that ended
 * is BC_DEAD and freed at the next accept or at wd_bulk_stop (its aio cannot
 * be freed from its own callback).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "proto/bulk.h"
#include "weightd/server_int.h"

enum { BC_OPEN = 0, BC_HDR, BC_SID, BC_WORK, BC_SEND, BC_DEAD };

typedef struct wd_bconn {
	struct wd_bulk *bk;
	struct wd_bconn *next; /* in wd_bulk.conns; guarded by wd_bulk.lk */
	nng_stream *st;
	nng_aio *aio;
	wd_job job;
	int state; /* guarded by wd_bulk.lk */
	/* fields below belong to whoever moves the state machine now (one thread) */
	nng_iov seg[2];
	unsigned nseg;
	size_t done; /* bytes of seg[] transferred so far */
	uint8_t open[BULK_OPEN_BYTES];
	uint8_t hdr[BULK_REQ_BYTES];
	bulk_req req;
	uint8_t sid[BULK_MAX_SHARD_ID];
	uint8_t rhdr[BULK_REPLY_BYTES + BULK_MAX_MSG];
	cache_view *view; /* pinned chunk being sent; released after the send */
	uint8_t *copy;    /* fault injection only: a corrupted copy of the bytes */
} wd_bconn;

struct wd_bulk {
	wd_server *srv;
	nng_stream_listener *l;
	nng_aio *accept_aio;
	char url[512]; /* advertised in HelloReply.stream_url */
	uint8_t ticket[BULK_TICKET_BYTES];
	pthread_mutex_t lk;
	pthread_cond_t cv;
	/* fields below guarded by lk */
	bool closing;
	wd_bconn *conns;
};

static void bconn_cb(void *arg);

/* Start (or continue) moving seg[] from byte `done`: recv or send by state. */
static void bconn_io(wd_bconn *b)
{
	nng_iov v[2];
	unsigned n = 0;
	size_t skip = b->done;
	for (unsigned i = 0; i < b->nseg; i++) {
		if (skip >= b->seg[i].iov_len) {
			skip -= b->seg[i].iov_len;
			continue;
		}
		v[n].iov_buf = (uint8_t *)b->seg[i].iov_buf + skip;
		v[n].iov_len = b->seg[i].iov_len - skip;
		skip = 0;
		n++;
	}
	nng_aio_set_iov(b->aio, n, v);
	if (b->state == BC_SEND)
		nng_stream_send(b->st, b->aio);
	else
		nng_stream_recv(b->st, b->aio);
}

static size_t seg_total(const wd_bconn *b)
{
	size_t t = 0;
	for (unsigned i = 0; i < b->nseg; i++)
		t += b->seg[i].iov_len;
	return t;
}

/* Move to state st and start receiving n bytes into buf. */
static void bconn_recv(wd_bconn *b, int st, void *buf, size_t n)
{
	wd_bulk *bk = b->bk;
	pthread_mutex_lock(&bk->lk);
	bool closing = bk->closing;
	if (!closing)
		b->state = st;
	pthread_mutex_unlock(&bk->lk);
	if (closing)
		return;
	b->seg[0] = (nng_iov){.iov_buf = buf, .iov_len = n};
	b->nseg = 1;
	b->done = 0;
	bconn_io(b);
}

static void bconn_end(wd_bconn *b, const char *why)
{
	wd_bulk *bk = b->bk;
	if (why != NULL)
		WT_LOG(WT_LOG_INFO, "bulk stream: closed: %s", why);
	cache_view_release(b->view);
	b->view = NULL;
	free(b->copy);
	b->copy = NULL;
	nng_stream_close(b->st);
	pthread_mutex_lock(&bk->lk);
	b->state = BC_DEAD;
	pthread_cond_broadcast(&bk->cv);
	pthread_mutex_unlock(&bk->lk);
}

/* Fill b->rhdr with an error reply and the segments to send it. */
static void reply_error(wd_bconn *b, int code, const char *msg)
{
	size_t n = strlen(msg);
	if (n > BULK_MAX_MSG)
		n = BULK_MAX_MSG;
	bulk_reply rp = {.id = b->req.id, .code = (uint32_t)code, .msg_len = (uint32_t)n};
	memcpy(rp.chunk_hash, b->req.hash, 16);
	bulk_reply_encode(&rp, b->rhdr);
	memcpy(b->rhdr + BULK_REPLY_BYTES, msg, n);
	b->seg[0] = (nng_iov){.iov_buf = b->rhdr, .iov_len = BULK_REPLY_BYTES + n};
	b->nseg = 1;
}

/* Worker thread: find and pin the chunk, build the reply segments. Returns
 * WT_OK with seg[] set (bytes or an error reply); the view stays pinned. */
static void bconn_prepare(wd_bconn *b)
{
	wd_server *s = b->bk->srv;
	const bulk_req *q = &b->req;
	wt_hash128 h = common_hash128_from_bytes(q->hash);
	uint64_t clen = 0, end, n = q->nbytes;
	char msg[300];
	if (!cache_has_shard(s->cache, b->sid, q->shard_id_len)) {
		reply_error(b, WT_ENOTFOUND,
		            "shard is not in the cache (evicted, corrupted or of an old revision); "
		            "request the manifest again");
		return;
	}
	if (!cache_shard_has_chunk(s->cache, b->sid, q->shard_id_len, h, &clen)) {
		reply_error(
		    b, WT_ENOTFOUND,
		    "bulk request: that chunk hash is not part of the shard; use a hash from "
		    "this shard's manifest");
		return;
	}
	if (n == 0 && q->offset <= clen)
		n = clen - q->offset;
	if (q->offset > clen || !wt_add_u64(q->offset, n, &end) || end > clen) {
		snprintf(
		    msg, sizeof(msg),
		    "bulk request: range offset %llu + %llu bytes is past the chunk's %llu bytes",
		    (unsigned long long)q->offset, (unsigned long long)q->nbytes,
		    (unsigned long long)clen);
		reply_error(b, WT_EINVAL, msg);
		return;
	}
	wt_errbuf err;
	size_t got = 0;
	int rv = cache_chunk_view(s->cache, h, &b->view, &err); /* re-hashes the whole chunk */
	const uint8_t *data = rv == WT_OK ? cache_view_data(b->view, &got) : NULL;
	if (rv == WT_OK && got != clen)
		rv = wt_seterr(&err, WT_ECORRUPT,
		               "bulk request %llu: the cache holds %zu bytes for a %llu-byte chunk",
		               (unsigned long long)q->id, got, (unsigned long long)clen);
	if (rv != WT_OK) {
		cache_view_release(b->view);
		b->view = NULL;
		if (rv == WT_ECORRUPT)
			WT_LOG(WT_LOG_WARNING, "bulk request %llu: %s", (unsigned long long)q->id,
			       err.msg);
		reply_error(b, rv, err.msg);
		return;
	}
	data += q->offset;
	uint64_t seq = atomic_fetch_add(&s->chunk_replies, 1) + 1;
	atomic_fetch_add(&s->bulk_replies, 1);
	atomic_fetch_add(&s->chunk_bytes_out, n);
	const wd_faults *f = atomic_load(&s->faults);
	if (f != NULL && f->corrupt_chunk == seq && n > 0 && (b->copy = malloc(n)) != NULL) {
		memcpy(b->copy, data, n); /* the pinned value is RocksDB's: corrupt a copy */
		b->copy[n / 2] ^= 0x5a;
		data = b->copy;
		WT_LOG(WT_LOG_NOTICE, "fault injection: corrupted bulk chunk reply #%llu",
		       (unsigned long long)seq);
	}
	bulk_reply rp = {.id = q->id, .nbytes = n, .offset = q->offset};
	memcpy(rp.chunk_hash, q->hash, 16);
	bulk_reply_encode(&rp, b->rhdr);
	b->seg[0] = (nng_iov){.iov_buf = b->rhdr, .iov_len = BULK_REPLY_BYTES};
	b->seg[1] = (nng_iov){.iov_buf = (void *)data, .iov_len = (size_t)n};
	b->nseg = n > 0 ? 2 : 1;
}

static void bconn_work(wd_job *job)
{
	wd_bconn *b = (wd_bconn *)((char *)job - offsetof(wd_bconn, job));
	wd_bulk *bk = b->bk;
	bconn_prepare(b);
	pthread_mutex_lock(&bk->lk);
	bool closing = bk->closing;
	b->state = closing ? BC_DEAD : BC_SEND;
	pthread_cond_broadcast(&bk->cv);
	pthread_mutex_unlock(&bk->lk);
	if (closing) {
		cache_view_release(b->view);
		b->view = NULL;
		return;
	}
	b->done = 0;
	bconn_io(b);
}

/* One step done (nng thread): continue a partial transfer or move on. */
static void bconn_cb(void *arg)
{
	wd_bconn *b = arg;
	wd_bulk *bk = b->bk;
	wt_errbuf err;
	int nrv = nng_aio_result(b->aio);
	if (nrv != 0) {
		bconn_end(b, nrv == NNG_ECLOSED || nrv == NNG_ECONNSHUT ? NULL : nng_strerror(nrv));
		return;
	}
	b->done += nng_aio_count(b->aio);
	if (b->done < seg_total(b)) {
		bconn_io(b);
		return;
	}
	switch (b->state) {
	case BC_OPEN:
		if (bulk_open_check(b->open, bk->ticket, &err) != WT_OK) {
			wd_auth_log_failure(bk->srv, err.msg);
			bconn_end(b, err.msg);
			return;
		}
		bconn_recv(b, BC_HDR, b->hdr, BULK_REQ_BYTES);
		return;
	case BC_HDR:
		if (bulk_req_decode(b->hdr, &b->req, &err) != WT_OK) {
			bconn_end(b, err.msg);
			return;
		}
		bconn_recv(b, BC_SID, b->sid, b->req.shard_id_len);
		return;
	case BC_SID:
		pthread_mutex_lock(&bk->lk);
		bool closing = bk->closing;
		if (!closing)
			b->state = BC_WORK;
		pthread_mutex_unlock(&bk->lk);
		if (!closing) {
			atomic_fetch_add(&bk->srv->requests, 1);
			wd_pool_submit_lane(bk->srv->pool, WD_LANE_REQUEST, &b->job);
		}
		return;
	case BC_SEND:
		cache_view_release(b->view);
		b->view = NULL;
		free(b->copy);
		b->copy = NULL;
		bconn_recv(b, BC_HDR, b->hdr, BULK_REQ_BYTES);
		return;
	default:
		return;
	}
}

static void bconn_free(wd_bconn *b)
{
	nng_aio_stop(b->aio); /* waits for its callback */
	nng_aio_free(b->aio);
	cache_view_release(b->view);
	free(b->copy);
	nng_stream_free(b->st);
	free(b);
}

/* Free the streams that ended (from the accept callback: another aio's). */
static void reap_dead(wd_bulk *bk)
{
	wd_bconn *dead = NULL;
	pthread_mutex_lock(&bk->lk);
	for (wd_bconn **p = &bk->conns; *p != NULL;) {
		wd_bconn *b = *p;
		if (b->state == BC_DEAD) {
			*p = b->next;
			b->next = dead;
			dead = b;
		} else {
			p = &b->next;
		}
	}
	pthread_mutex_unlock(&bk->lk);
	while (dead != NULL) {
		wd_bconn *b = dead;
		dead = b->next;
		bconn_free(b);
	}
}

static void accept_cb(void *arg)
{
	wd_bulk *bk = arg;
	int nrv = nng_aio_result(bk->accept_aio);
	if (nrv != 0) {
		if (nrv != NNG_ECLOSED && nrv != NNG_ECANCELED)
			WT_LOG(WT_LOG_WARNING, "bulk stream: accept: %s", nng_strerror(nrv));
		pthread_mutex_lock(&bk->lk);
		bool closing = bk->closing;
		pthread_mutex_unlock(&bk->lk);
		if (!closing && nrv != NNG_ECLOSED)
			nng_stream_listener_accept(bk->l, bk->accept_aio);
		return;
	}
	reap_dead(bk);
	nng_stream *st = nng_aio_get_output(bk->accept_aio, 0);
	wd_bconn *b = calloc(1, sizeof(*b));
	if (b == NULL || nng_aio_alloc(&b->aio, bconn_cb, b) != 0) {
		WT_LOG(WT_LOG_ERR, "bulk stream: out of memory for a connection");
		free(b);
		nng_stream_free(st);
		nng_stream_listener_accept(bk->l, bk->accept_aio);
		return;
	}
	b->bk = bk;
	b->st = st;
	b->job.fn = bconn_work;
	pthread_mutex_lock(&bk->lk);
	b->next = bk->conns;
	bk->conns = b;
	bool closing = bk->closing;
	pthread_mutex_unlock(&bk->lk);
	if (closing) {
		nng_stream_close(st);
		return; /* freed by wd_bulk_stop */
	}
	b->state = BC_OPEN;
	bconn_recv(b, BC_OPEN, b->open, BULK_OPEN_BYTES);
	nng_stream_listener_accept(bk->l, bk->accept_aio);
}

/* Resolve tcp port 0 to the bound port for the URL clients dial. */
static void advertised_url(wd_bulk *bk, const char *url)
{
	size_t n = strlen(url);
	int port = 0;
	if (strncmp(url, "tcp://", 6) == 0 && n > 2 && strcmp(url + n - 2, ":0") == 0 &&
	    nng_stream_listener_get_int(bk->l, NNG_OPT_TCP_BOUND_PORT, &port) == 0)
		snprintf(bk->url, sizeof(bk->url), "%.*s:%d", (int)(n - 2), url, port);
	else
		snprintf(bk->url, sizeof(bk->url), "%s", url);
}

int wd_bulk_start(wd_server *s, wt_errbuf *err)
{
	const char *url = s->cfg->stream_listen;
	if (url == NULL || url[0] == '\0')
		return WT_OK;
	if (strncmp(url, "tcp://", 6) != 0 && strncmp(url, "ipc://", 6) != 0)
		return wt_seterr(err, WT_ECONFIG,
		                 "stream_listen %s: only tcp://HOST:PORT and ipc:///path are "
		                 "supported (tls+tcp:// not yet); or leave it empty",
		                 url);
	if (strlen(url) >= sizeof(s->bulk->url) - 8)
		return wt_seterr(err, WT_ECONFIG, "stream_listen %.64s...: URL too long", url);
	wd_bulk *bk = calloc(1, sizeof(*bk));
	if (bk == NULL)
		return wt_seterr(err, WT_ENOMEM, "stream_listen: out of memory");
	bk->srv = s;
	pthread_mutex_init(&bk->lk, NULL);
	pthread_cond_init(&bk->cv, NULL);
	s->bulk = bk; /* wd_bulk_stop frees it, also half-built */
	if (getrandom(bk->ticket, sizeof(bk->ticket), 0) != (ssize_t)sizeof(bk->ticket))
		return wt_seterr(err, WT_EIO, "stream_listen: getrandom failed for the ticket");
	int rv = nng_stream_listener_alloc(&bk->l, url);
	if (rv == 0)
		rv = nng_stream_listener_listen(bk->l);
	if (rv == 0)
		rv = nng_aio_alloc(&bk->accept_aio, accept_cb, bk);
	if (rv != 0)
		return wt_seterr(err, rv == NNG_EADDRINUSE ? WT_EBUSY : WT_ECONFIG,
		                 "stream_listen %s: %s; check the URL and that no other process "
		                 "uses it",
		                 url, nng_strerror(rv));
	advertised_url(bk, url);
	nng_stream_listener_accept(bk->l, bk->accept_aio);
	WT_LOG(WT_LOG_INFO, "bulk data plane on %s", bk->url);
	return WT_OK;
}

bool wd_bulk_offer(const wd_server *s, const char **url, const uint8_t **ticket)
{
	if (s->bulk == NULL || s->bulk->l == NULL)
		return false;
	*url = s->bulk->url;
	*ticket = s->bulk->ticket;
	return true;
}

void wd_bulk_stop(wd_server *s)
{
	wd_bulk *bk = s->bulk;
	if (bk == NULL)
		return;
	pthread_mutex_lock(&bk->lk);
	bk->closing = true;
	for (wd_bconn *b = bk->conns; b != NULL; b = b->next)
		nng_stream_close(b->st);
	pthread_mutex_unlock(&bk->lk);
	if (bk->l != NULL)
		nng_stream_listener_close(bk->l);
	if (bk->accept_aio != NULL)
		nng_aio_stop(bk->accept_aio);
	/* a request in service finishes its cache read, then sees closing */
	pthread_mutex_lock(&bk->lk);
	for (wd_bconn *b = bk->conns; b != NULL; b = b->next)
		while (b->state == BC_WORK)
			pthread_cond_wait(&bk->cv, &bk->lk);
	wd_bconn *list = bk->conns;
	bk->conns = NULL;
	pthread_mutex_unlock(&bk->lk);
	while (list != NULL) {
		wd_bconn *b = list;
		list = b->next;
		bconn_free(b);
	}
	nng_aio_free(bk->accept_aio);
	nng_stream_listener_free(bk->l);
	pthread_cond_destroy(&bk->cv);
	pthread_mutex_destroy(&bk->lk);
	free(bk);
	s->bulk = NULL;
}
