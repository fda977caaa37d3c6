/*
 * fetch_bulk.c — wt_client_fetch over the bulk stream (docs/architecture.md
 * 4.2, headers in proto/bulk.h): with wt_client_opts.stream set and a server
 * that offered a stream in Hello, chunk requests go on one nng_stream per
 * connection instead of nng messages, and each reply's bytes are received
 * straight into the sink's memory where the sink offers it (wt_sink_ops
 * recv_buf: the slot's dst), else into the slot's reused buffer, and hashed
 * piece by piece as they arrive (each piece is what one receive returned:
 * still in the CPU cache).
 *
 * A chunk of tensor t goes on stream t % n, so each stream receives a
 * tensor's chunks in order and also feeds them, while hot, to a tensor
 * hasher: the slot carries that hasher's state (fused), and delivery adopts
 * it instead of hashing the chunk a second time from memory (fetch.c
 * deliver). A chunk that does not continue the stream's tensor (a re-fetch, a
 * failed one before it) is hashed at delivery as on the message path. The
 * fetch thread sends requests (fetch_bulk_issue); one receiver thread per
 * stream reads the replies, which come in request order, so each stream keeps
 * a FIFO of its slots in flight. Ordering,
 * delivery, retries and fail-over stay fetch.c's: a slot ends exactly as with
 * messages (fetch_slot_finish). Any stream failure (dial, send, receive,
 * timeout, a reply that does not match) ends that stream's slots with
 * WT_EUNAVAIL and turns the bulk path off for the rest of the fetch: fetch.c
 * retries them, and every later request, over messages.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/fetch_int.h"
#include "proto/bulk.h"

#include <nng/supplemental/tls/tls.h> /* after nng.h (fetch_int.h) */

/* Largest piece received and hashed at once (L2 is 1-2 MiB per core). */
#define BULK_HASH_PIECE (256u << 10)

typedef struct bulk_conn {
	struct fetch_bulk *fb;
	nng_stream *st;
	common_hasher *hs; /* the receiver's chunk hasher */
	common_hasher *ts; /* the receiver's tensor hasher: tensor t_cur, bytes [0, t_next) */
	size_t t_cur;
	uint64_t t_next;
	int t_ok; /* ts holds exactly that */
	/* the reply being received (live: the hashes it teaches) */
	uint8_t rh[16], rth[16];
	int r_has_th;
	int kept;     /* taken from the endpoint's idle streams (an earlier fetch's) */
	int dead;     /* guarded by fetch_bulk.lk: closed, no I/O may start on it */
	uint64_t got; /* replies received on it in this fetch */
	pthread_t th;
	int th_started;
	/* fields below guarded by fetch_bulk.lk */
	fetch_slot **q; /* slots in flight on this stream, in request order (ring) */
	size_t q_head, q_n;
} bulk_conn;

typedef struct fetch_bulk {
	fetch *f;
	char url[512];
	uint8_t ticket[BULK_TICKET_BYTES]; /* the offer the streams were opened with */
	size_t n;
	size_t q_cap; /* ring capacity: the window */
	pthread_mutex_t lk;
	pthread_cond_t cv;
	/* fields below guarded by lk */
	int broken;  /* a stream failed: new requests use messages */
	int stale;   /* a kept stream failed before its first reply */
	int closing; /* fetch_bulk_close: receivers stop */
	bulk_conn conns[CLIENT_MAX_CONNS];
	/* when a receive on any of the streams last moved bytes (or they were
	 * opened): fetch_bulk_quiet_ms */
	_Atomic uint64_t moved_ns;
} fetch_bulk;

int client_stream_io(nng_stream *st, int send, void *buf, size_t n, uint64_t deadline_ns,
                     common_hasher *hs, common_hasher *also)
{
	return client_stream_io_gated(st, send, buf, n, deadline_ns, hs, also, NULL);
}

int client_stream_io_gated(nng_stream *st, int send, void *buf, size_t n, uint64_t deadline_ns,
                           common_hasher *hs, common_hasher *also, const client_io_gate *gate)
{
	nng_aio *aio;
	int rv = nng_aio_alloc(&aio, NULL, NULL);
	if (rv != 0)
		return rv;
	size_t done = 0;
	while (rv == 0 && done < n) {
		uint64_t now = common_now_ns();
		if (now >= deadline_ns) {
			rv = NNG_ETIMEDOUT;
			break;
		}
		uint64_t left_ms = (deadline_ns - now + 999999) / 1000000;
		nng_aio_set_timeout(aio, client_duration(left_ms));
		/* hashed pieces are capped so that they are still in L2 when hashed */
		size_t piece = n - done;
		if ((hs != NULL || also != NULL) && piece > BULK_HASH_PIECE)
			piece = BULK_HASH_PIECE;
		nng_iov v = {.iov_buf = (uint8_t *)buf + done, .iov_len = piece};
		nng_aio_set_iov(aio, 1, &v);
		if (gate != NULL && gate->enter(gate->ctx) != 0) {
			rv = NNG_ECANCELED;
			break;
		}
		if (send)
			nng_stream_send(st, aio);
		else
			nng_stream_recv(st, aio);
		if (gate != NULL)
			gate->leave(gate->ctx);
		nng_aio_wait(aio);
		rv = nng_aio_result(aio);
		size_t got = nng_aio_count(aio);
		if (gate != NULL && gate->moved_ns != NULL && got > 0)
			atomic_store(gate->moved_ns, common_now_ns());
		if (hs != NULL && got > 0)
			common_hasher_update(hs, (uint8_t *)buf + done, got);
		if (also != NULL && got > 0)
			common_hasher_update(also, (uint8_t *)buf + done, got);
		done += got;
	}
	nng_aio_free(aio);
	return rv;
}

void (*client_bulk_test_hook)(void);

/*
 * Every send and receive on a bulk stream starts under fb->lk, and only while
 * the fetch is not closing and the stream not closed (conn_io_enter): a
 * stream is closed under the same lock, after the flag, so no operation
 * starts on a closed stream (nng 1.5 then waits for its whole timeout: a
 * fetch that failed with WT_EHASH took request_timeout_ms, 30 s, to end when
 * its receiver started a receive just after bulk_close closed the stream).
 */
static int conn_io_enter(void *ctx)
{
	bulk_conn *k = ctx;
	pthread_mutex_lock(&k->fb->lk);
	if (k->fb->closing || k->dead) {
		pthread_mutex_unlock(&k->fb->lk);
		return 1;
	}
	return 0;
}

static void conn_io_leave(void *ctx)
{
	bulk_conn *k = ctx;
	pthread_mutex_unlock(&k->fb->lk);
}

/* Close k's stream for good (fb->lk held): I/O in flight ends, none starts. */
static void conn_close_locked(bulk_conn *k)
{
	k->dead = 1;
	nng_stream_close(k->st);
}

/* Milliseconds from now as a deadline for client_stream_io. */
static uint64_t deadline_in(uint32_t ms)
{
	return common_now_ns() + (uint64_t)ms * 1000000u;
}

static int st_io(nng_stream *st, int send, void *buf, size_t n, uint64_t deadline_ns)
{
	return client_stream_io(st, send, buf, n, deadline_ns, NULL, NULL);
}

/* client_stream_io on k's stream, started only while it is open (above). */
static int conn_io(bulk_conn *k, int send, void *buf, size_t n, uint64_t deadline_ns,
                   common_hasher *hs, common_hasher *also)
{
	client_io_gate gate = {conn_io_enter, conn_io_leave, k, send ? NULL : &k->fb->moved_ns};
	return client_stream_io_gated(k->st, send, buf, n, deadline_ns, hs, also, &gate);
}

/* The stream failed: it is closed, its slots end with WT_EUNAVAIL, the bulk
 * path is off for the rest of the fetch. */
static void conn_fail(bulk_conn *k, const char *why)
{
	fetch_bulk *fb = k->fb;
	fetch *f = fb->f;
	wt_errbuf err;
	wt_seterr(&err, WT_EUNAVAIL, "endpoint %s: bulk stream %s: %s; going on over messages",
	          f->c->eps[f->ep].url, fb->url, why);
	pthread_mutex_lock(&fb->lk);
	conn_close_locked(k);
	int first = !fb->broken && !fb->closing;
	fb->broken = 1;
	fb->stale |= k->kept && k->got == 0 && !fb->closing;
	fetch_slot *left[CLIENT_MAX_WINDOW];
	size_t n = 0;
	for (; k->q_n > 0; k->q_n--, k->q_head = (k->q_head + 1) % fb->q_cap)
		left[n++] = k->q[k->q_head];
	pthread_cond_broadcast(&fb->cv);
	pthread_mutex_unlock(&fb->lk);
	if (first)
		client_log(f->c, WT_CLIENT_LOG_WARNING, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		fetch_slot_finish(left[i], WT_EUNAVAIL, &err, NULL);
}

/* One reply for slot s (the head of k's queue): 0 with the bytes in s->buf; 1
 * for the server's error reply (in *serr; the stream goes on); -1 for an
 * nng/protocol failure described in why (the caller fails the stream). */
static int recv_one(bulk_conn *k, fetch_slot *s, char *why, size_t why_cap, wt_errbuf *serr)
{
	fetch *f = k->fb->f;
	const client_chunk *ch = &f->m->chunks[s->chunk];
	/* one deadline for the whole reply (header, message or bytes), as a reply
	 * over messages has */
	uint64_t tmo = deadline_in(f->c->o.request_timeout_ms);
	uint8_t h[BULK_REPLY_BYTES];
	bulk_reply r;
	wt_errbuf err;
	int nrv = conn_io(k, 0, h, sizeof(h), tmo, NULL, NULL);
	if (nrv != 0)
		return snprintf(why, why_cap, "%s", nng_strerror(nrv)), -1;
	if (bulk_reply_decode(h, ch->nbytes, &r, &err) != WT_OK)
		return snprintf(why, why_cap, "%s", err.msg), -1;
	if (r.id != s->id)
		return snprintf(why, why_cap, "reply %llu for request %llu",
		                (unsigned long long)r.id, (unsigned long long)s->id),
		       -1;
	if (r.code != WT_OK) {
		char msg[BULK_MAX_MSG + 1];
		if ((nrv = conn_io(k, 0, msg, r.msg_len, tmo, NULL, NULL)) != 0)
			return snprintf(why, why_cap, "%s", nng_strerror(nrv)), -1;
		msg[r.msg_len] = '\0';
		/* as a reply's text over messages (proto/wire_check.c) */
		if (!common_utf8_valid(msg, r.msg_len, false))
			return snprintf(why, why_cap,
			                "reply %llu: error text that is not UTF-8 (or holds NUL)",
			                (unsigned long long)r.id),
			       -1;
		int code = r.code < WT_ERR_COUNT_ ? (int)r.code : WT_EPROTO;
		char text[WT_ERRMSG_MAX]; /* escaped: it reaches logs and terminals */
		common_text_escape(msg, text, sizeof(text), false);
		wt_seterr(serr, code, "endpoint %s: tensor '%s' chunk %zu: %s",
		          f->c->eps[f->ep].url, f->m->tensors[ch->tensor].name,
		          s->chunk - f->m->tensors[ch->tensor].first_chunk, text);
		return 1;
	}
	/* a live reply teaches the chunk's hash (and, on a tensor's last chunk,
	 * the tensor's); one already known must agree */
	static const uint8_t zero[16];
	const client_tensor *tt = &f->m->tensors[ch->tensor];
	k->r_has_th = f->live && memcmp(r.tensor_hash, zero, 16) != 0;
	if (r.nbytes != ch->nbytes || r.offset != 0 ||
	    !fetch_reply_hashes_ok(f, s->chunk, r.chunk_hash, k->r_has_th))
		return snprintf(why, why_cap, "reply %llu is for another chunk or range",
		                (unsigned long long)r.id),
		       -1;
	memcpy(k->rh, r.chunk_hash, 16);
	memcpy(k->rth, r.tensor_hash, 16);
	if (s->dst == NULL && s->buf_cap < ch->nbytes) {
		free(s->buf);
		s->buf_cap = 0;
		if ((s->buf = malloc(ch->nbytes ? (size_t)ch->nbytes : 1)) == NULL)
			return snprintf(why, why_cap, "out of memory for a %llu-byte chunk",
			                (unsigned long long)ch->nbytes),
			       -1;
		s->buf_cap = (size_t)ch->nbytes;
	}
	if (f->verify)
		common_hasher_reset(k->hs);
	/* a multi-chunk tensor's chunk that continues what ts holds feeds it too */
	const client_tensor *t = tt;
	s->fused = f->verify && t->n_chunks > 1 &&
	           (ch->off == 0 || (k->t_ok && k->t_cur == ch->tensor && k->t_next == ch->off));
	if (s->fused && ch->off == 0)
		common_hasher_reset(k->ts);
	k->t_ok = 0; /* until this chunk is in and verified (receiver) */
	nrv = conn_io(k, 0, s->dst != NULL ? s->dst : s->buf, (size_t)ch->nbytes, tmo,
	              f->verify ? k->hs : NULL, s->fused ? k->ts : NULL);
	if (nrv != 0)
		return snprintf(why, why_cap, "%s", nng_strerror(nrv)), -1;
	return 0;
}

/* Chunk s arrived whole and verified: when it fed the tensor hasher, the slot
 * takes a copy of its state for delivery, and the stream's tensor goes on. */
static void fuse_done(bulk_conn *k, fetch_slot *s, const client_chunk *ch)
{
	if (!s->fused)
		return;
	if (s->tsnap == NULL && (s->tsnap = common_hasher_new()) == NULL) {
		s->fused = 0; /* out of memory: delivery hashes it */
		return;
	}
	common_hasher_copy(s->tsnap, k->ts);
	k->t_cur = ch->tensor;
	k->t_next = ch->off + ch->nbytes;
	k->t_ok = 1;
}

static void *receiver(void *arg)
{
	bulk_conn *k = arg;
	fetch_bulk *fb = k->fb;
	fetch *f = fb->f;
	char why[WT_ERRMSG_MAX];
	(void)pthread_setname_np(pthread_self(), "wt:stream");
	for (;;) {
		pthread_mutex_lock(&fb->lk);
		while (k->q_n == 0 && !fb->closing)
			pthread_cond_wait(&fb->cv, &fb->lk);
		fetch_slot *s = fb->closing ? NULL : k->q[k->q_head];
		pthread_mutex_unlock(&fb->lk);
		if (s == NULL)
			return NULL;
		if (client_bulk_test_hook != NULL)
			client_bulk_test_hook();
		wt_errbuf err;
		int rv = recv_one(k, s, why, sizeof(why), &err);
		if (rv < 0) {
			conn_fail(k, why);
			return NULL;
		}
		k->got++;
		pthread_mutex_lock(&fb->lk);
		k->q_head = (k->q_head + 1) % fb->q_cap;
		k->q_n--;
		pthread_mutex_unlock(&fb->lk);
		if (rv > 0) { /* the server's error reply: the stream goes on */
			fetch_slot_finish(s, err.code, &err, NULL);
			continue;
		}
		const client_chunk *ch = &f->m->chunks[s->chunk];
		int ok = 1;
		if (f->verify) /* hashed piece by piece as it arrived (recv_one) */
			ok = common_hash128_eq(common_hasher_digest(k->hs),
			                       common_hash128_from_bytes(k->rh));
		if (!ok) {
			s->fused = 0;
			wt_seterr(
			    &err, WT_EHASH,
			    "endpoint %s (bulk stream): tensor '%s' chunk %zu (offset %llu, %llu "
			    "bytes): XXH3-128 does not match the manifest",
			    f->c->eps[f->ep].url, f->m->tensors[ch->tensor].name,
			    s->chunk - f->m->tensors[ch->tensor].first_chunk,
			    (unsigned long long)ch->off, (unsigned long long)ch->nbytes);
			fetch_slot_finish(s, WT_EHASH, &err, NULL);
			continue;
		}
		/* verified: learn what a live reply taught */
		fetch_learn_hashes(f, s->chunk, k->rh, k->r_has_th ? k->rth : NULL);
		fuse_done(k, s, ch);
		s->data = s->dst != NULL ? s->dst : s->buf;
		fetch_slot_finish(s, WT_OK, NULL, NULL);
	}
}

/* The host of a tcp:// or tls+tcp:// URL (brackets of an IPv6 address
 * dropped) into out; false when there is none. */
static bool url_host(const char *url, char *out, size_t cap)
{
	const char *p = strstr(url, "://");
	if (p == NULL)
		return false;
	p += 3;
	const char *end = *p == '[' ? strchr(++p, ']') : strrchr(p, ':');
	if (end == NULL || end == p || (size_t)(end - p) >= cap)
		return false;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return true;
}

/* A tls+tcp:// stream is verified as the control connection is: the client's
 * CA (and certificate, for mutual TLS), and the server name of the endpoint
 * the client dialed (the certificate names it, not the stream's address). */
static int dialer_tls(const fetch_bulk *fb, nng_stream_dialer *d)
{
	const wt_client *c = fb->f->c;
	if (strncmp(fb->url, "tls+tcp://", 10) != 0)
		return 0;
	char host[256];
	if (c->tls_ca == NULL || !url_host(c->eps[fb->f->ep].url, host, sizeof(host)))
		return NNG_ENOTSUP; /* no CA to verify it with: messages */
	int rv = nng_stream_dialer_set_string(d, NNG_OPT_TLS_CA_FILE, c->tls_ca);
	if (rv == 0 && c->tls_cert_key != NULL)
		rv = nng_stream_dialer_set_string(d, NNG_OPT_TLS_CERT_KEY_FILE, c->tls_cert_key);
	if (rv == 0)
		rv = nng_stream_dialer_set_string(d, NNG_OPT_TLS_SERVER_NAME, host);
	return rv;
}

/* A dial in progress (dial_start, dial_finish). */
typedef struct bulk_dial {
	nng_stream_dialer *d;
	nng_aio *aio;
	int rv;
} bulk_dial;

/* Start dialing fb's stream URL; the result is dial_finish's. */
static void dial_start(fetch_bulk *fb, bulk_dial *dl)
{
	memset(dl, 0, sizeof(*dl));
	dl->rv = nng_stream_dialer_alloc(&dl->d, fb->url);
	if (dl->rv == 0)
		dl->rv = dialer_tls(fb, dl->d);
	if (dl->rv == 0)
		dl->rv = nng_aio_alloc(&dl->aio, NULL, NULL);
	if (dl->rv == 0) {
		nng_aio_set_timeout(dl->aio, client_duration(fb->f->c->o.connect_timeout_ms));
		nng_stream_dialer_dial(dl->d, dl->aio);
	}
}

/* Wait for dial dl into stream k and send the open header; 0 or an nng error. */
static int dial_finish(fetch_bulk *fb, bulk_dial *dl, bulk_conn *k, const uint8_t *ticket)
{
	int rv = dl->rv;
	if (rv == 0) {
		nng_aio_wait(dl->aio);
		if ((rv = nng_aio_result(dl->aio)) == 0)
			k->st = nng_aio_get_output(dl->aio, 0);
	}
	nng_aio_free(dl->aio);
	nng_stream_dialer_free(dl->d);
	if (rv != 0)
		return rv;
	uint8_t o[BULK_OPEN_BYTES];
	bulk_open_encode(ticket, o);
	return st_io(k->st, 1, o, sizeof(o), deadline_in(fb->f->c->o.connect_timeout_ms));
}

void client_bulk_drop_idle(wt_client *c, size_t ep)
{
	client_ep *e = &c->eps[ep];
	for (; e->n_idle > 0; e->n_idle--) {
		nng_stream_close(e->idle[e->n_idle - 1]);
		nng_stream_free(e->idle[e->n_idle - 1]);
	}
}

/* A quiet stream (nothing in flight) back to its endpoint for the next fetch,
 * while the endpoint still offers the stream it was opened on; else closed. */
static void park_stream(fetch_bulk *fb, nng_stream *st)
{
	wt_client *c = fb->f->c;
	client_ep *e = &c->eps[fb->f->ep];
	pthread_mutex_lock(&c->lk);
	bool ok = e->stream_url != NULL && strcmp(e->stream_url, fb->url) == 0 &&
	          memcmp(e->stream_ticket, fb->ticket, sizeof(fb->ticket)) == 0 &&
	          e->n_idle < c->o.connections && e->n_idle < CLIENT_MAX_CONNS;
	if (ok)
		e->idle[e->n_idle++] = st;
	pthread_mutex_unlock(&c->lk);
	if (!ok) {
		nng_stream_close(st);
		nng_stream_free(st);
	}
}

/* The stream the endpoint offers (url, fb->ticket; url "" when none usable)
 * and up to want streams an earlier fetch left open (into kept; their count). */
static size_t take_offer(fetch *f, fetch_bulk *fb, char *url, size_t cap, nng_stream **kept,
                         size_t want)
{
	client_ep *e = &f->c->eps[f->ep];
	size_t n = 0;
	pthread_mutex_lock(&f->c->lk);
	/* a live manifest needs a server that takes live requests on the stream */
	if (e->stream_url != NULL && (!f->live || e->stream_live)) {
		snprintf(url, cap, "%s", e->stream_url);
		memcpy(fb->ticket, e->stream_ticket, sizeof(fb->ticket));
		/* streams an earlier fetch left open: no connect, no opening message */
		for (; n < want && e->n_idle > 0; n++)
			kept[n] = e->idle[--e->n_idle];
	}
	pthread_mutex_unlock(&f->c->lk);
	return n;
}

void fetch_bulk_open(fetch *f)
{
	wt_client *c = f->c;
	char url[512] = "";
	nng_stream *kept[CLIENT_MAX_CONNS];
	size_t n_kept = 0, want = f->n_socks;
	if (!c->o.stream || f->bulk != NULL)
		return;
	fetch_bulk *fb = calloc(1, sizeof(*fb));
	if (fb == NULL)
		return;
	n_kept = take_offer(f, fb, url, sizeof(url), kept, want);
	if (url[0] == '\0') {
		free(fb);
		return; /* an older server, or stream_listen off: messages */
	}
	fb->f = f;
	fb->q_cap = f->w;
	atomic_store(&fb->moved_ns, common_now_ns());
	snprintf(fb->url, sizeof(fb->url), "%s", url);
	pthread_mutex_init(&fb->lk, NULL);
	pthread_cond_init(&fb->cv, NULL);
	f->bulk = fb;
	/* the others dialed at once: a fetch's first chunk waits for one connect,
	 * not for one after the other (each costs a few ms on a busy host, more
	 * over TLS) */
	bulk_dial dl[CLIENT_MAX_CONNS];
	for (size_t i = n_kept; i < want; i++)
		dial_start(fb, &dl[i]);
	int rv = 0;
	for (size_t i = 0; i < want; i++) {
		bulk_conn *k = &fb->conns[i];
		k->fb = fb;
		k->q = calloc(fb->q_cap, sizeof(*k->q));
		k->hs = common_hasher_new();
		k->ts = common_hasher_new();
		int drv = 0;
		k->kept = i < n_kept;
		if (k->kept)
			k->st = kept[i];
		else /* frees the dial either way */
			drv = dial_finish(fb, &dl[i], k, fb->ticket);
		if (rv == 0)
			rv = k->q == NULL || k->hs == NULL || k->ts == NULL ? NNG_ENOMEM : drv;
		if (rv == 0)
			rv = pthread_create(&k->th, NULL, receiver, k) == 0 ? 0 : NNG_ENOMEM;
		fb->n = i + 1;
		k->th_started = rv == 0;
	}
	if (rv != 0) {
		client_log(c, WT_CLIENT_LOG_WARNING,
		           "endpoint %s: bulk stream %s: %s; fetching over messages",
		           c->eps[f->ep].url, url, nng_strerror(rv));
		fetch_bulk_close(f);
		return;
	}
	client_log(c, WT_CLIENT_LOG_INFO, "endpoint %s: %zu bulk stream(s) on %s (%zu kept open)",
	           c->eps[f->ep].url, want, url, n_kept);
}

int fetch_bulk_stale(const fetch *f)
{
	fetch_bulk *fb = f->bulk;
	if (fb == NULL)
		return 0;
	pthread_mutex_lock(&fb->lk);
	int stale = fb->stale;
	pthread_mutex_unlock(&fb->lk);
	return stale;
}

uint64_t fetch_bulk_moved_ns(const fetch *f)
{
	return f->bulk != NULL ? atomic_load(&f->bulk->moved_ns) : 0;
}

int fetch_bulk_on(const fetch *f)
{
	fetch_bulk *fb = f->bulk;
	if (fb == NULL)
		return 0;
	pthread_mutex_lock(&fb->lk);
	int on = !fb->broken;
	pthread_mutex_unlock(&fb->lk);
	return on;
}

void fetch_bulk_issue(fetch *f, fetch_slot *s)
{
	fetch_bulk *fb = f->bulk;
	/* by tensor: a stream gets a tensor's chunks in order (its tensor hasher) */
	bulk_conn *k = &fb->conns[f->m->chunks[s->chunk].tensor % fb->n];
	pthread_mutex_lock(&fb->lk);
	int broken = fb->broken;
	if (!broken) {
		k->q[(k->q_head + k->q_n) % fb->q_cap] = s;
		k->q_n++;
		pthread_cond_broadcast(&fb->cv);
	}
	pthread_mutex_unlock(&fb->lk);
	if (broken) {
		wt_errbuf err;
		wt_seterr(&err, WT_EUNAVAIL, "endpoint %s: bulk stream %s is down",
		          f->c->eps[f->ep].url, fb->url);
		fetch_slot_finish(s, WT_EUNAVAIL, &err, NULL);
		return;
	}
	uint8_t b[BULK_REQ_BYTES + BULK_MAX_SHARD_ID];
	bulk_req q = {.id = s->id, .shard_id_len = (uint32_t)f->shard_id_len};
	if (f->live) /* cut-through: by index, the server waits until it is produced */
		bulk_req_set_live(&q, s->chunk);
	else
		memcpy(q.hash, f->chash[s->chunk], 16);
	bulk_req_encode(&q, b);
	memcpy(b + BULK_REQ_BYTES, f->shard_id, f->shard_id_len);
	int nrv = conn_io(k, 1, b, BULK_REQ_BYTES + f->shard_id_len,
	                  deadline_in(f->c->o.request_timeout_ms), NULL, NULL);
	if (nrv != 0) { /* the receiver fails the queue (s included) when the stream closes */
		pthread_mutex_lock(&fb->lk);
		conn_close_locked(k);
		pthread_mutex_unlock(&fb->lk);
	}
}

/* Stop the receivers. keep: a stream with nothing in flight (its receiver
 * waits for a request, so no reply is on the wire) goes back to the endpoint
 * for the next fetch; every other stream is closed first, which stops a
 * receiver blocked on a reply. */
static void bulk_close(fetch *f, bool keep)
{
	fetch_bulk *fb = f->bulk;
	if (fb == NULL)
		return;
	bool quiet[CLIENT_MAX_CONNS];
	pthread_mutex_lock(&fb->lk);
	fb->closing = 1;
	for (size_t i = 0; i < fb->n; i++)
		quiet[i] = keep && !fb->broken && fb->conns[i].st != NULL &&
		           fb->conns[i].th_started && fb->conns[i].q_n == 0;
	pthread_cond_broadcast(&fb->cv);
	pthread_mutex_unlock(&fb->lk);
	for (size_t i = 0; i < fb->n; i++) {
		bulk_conn *k = &fb->conns[i];
		if (k->st != NULL && !quiet[i]) { /* closing is set: no I/O starts on it now */
			pthread_mutex_lock(&fb->lk);
			conn_close_locked(k);
			pthread_mutex_unlock(&fb->lk);
		}
		if (k->th_started)
			pthread_join(k->th, NULL);
		/* requests the receiver stopped before (it saw closing) end here */
		wt_errbuf err;
		wt_seterr(&err, WT_ECANCELED, "bulk stream closed");
		for (; k->q_n > 0; k->q_n--, k->q_head = (k->q_head + 1) % fb->q_cap)
			fetch_slot_finish(k->q[k->q_head], WT_ECANCELED, &err, NULL);
		if (k->st != NULL && quiet[i])
			park_stream(fb, k->st);
		else if (k->st != NULL)
			nng_stream_free(k->st);
		common_hasher_free(k->hs);
		common_hasher_free(k->ts);
		free(k->q);
	}
	pthread_cond_destroy(&fb->cv);
	pthread_mutex_destroy(&fb->lk);
	free(fb);
	f->bulk = NULL;
}

void fetch_bulk_close(fetch *f)
{
	bulk_close(f, false);
}

void fetch_bulk_done(fetch *f)
{
	bulk_close(f, true);
}
