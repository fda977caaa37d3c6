/* conn.c — endpoints: lazy dial + Hello, framing, synchronous request/reply. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client_int.h"
#include "common/common.h"

#include <nng/protocol/reqrep0/req.h>
#include "proto/wire.h"
#include "weights/weights.h"

void client_log(const wt_client *c, int level, const char *fmt, ...)
{
	if (c->o.log == NULL || level > c->o.log_level)
		return;
	char msg[WT_ERRMSG_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!common_text_needs_escape(msg)) {
		c->o.log(c->o.log_ctx, level, msg);
		return;
	}
	/* a server's id or text in it: control bytes escaped, as the daemon's log does */
	char line[4 * sizeof(msg) + 1];
	common_text_escape(msg, line, sizeof(line), false);
	c->o.log(c->o.log_ctx, level, line);
}

int client_nng_err(int rv)
{
	switch (rv) {
	case 0:
		return WT_OK;
	case NNG_ETIMEDOUT:
		return WT_ETIMEDOUT;
	case NNG_ENOMEM:
		return WT_ENOMEM;
	case NNG_ECANCELED:
		return WT_ECANCELED;
	case NNG_ECLOSED:
		return WT_ECLOSED;
	case NNG_EADDRINVAL:
	case NNG_EINVAL:
		return WT_EINVAL;
	case NNG_ECONNRESET: /* an established connection dropped: retry (it reconnects) */
	case NNG_ECONNSHUT:
	case NNG_ECONNABORTED:
		return WT_ECLOSED;
	case NNG_ECONNREFUSED: /* nobody there: fail over */
	case NNG_EUNREACHABLE:
	case NNG_ENOENT:
		return WT_EUNAVAIL;
	default:
		return WT_EIO;
	}
}

nng_duration client_duration(uint64_t ms)
{
	return (nng_duration)(ms < (uint64_t)INT32_MAX ? ms : (uint64_t)INT32_MAX);
}

int client_retryable(int code)
{
	return code == WT_ETIMEDOUT || code == WT_EUNAVAIL || code == WT_ECLOSED ||
	       code == WT_EBUSY || code == WT_EIO;
}

uint32_t client_backoff_ms(const wt_client *c, uint32_t attempt)
{
	uint64_t ms = c->o.backoff_initial_ms;
	for (uint32_t i = 0; i < attempt && ms < c->o.backoff_max_ms; i++)
		ms *= 2;
	return ms > c->o.backoff_max_ms ? c->o.backoff_max_ms : (uint32_t)ms;
}

uint32_t client_quiet_probe_ms(const wt_client *c)
{
	return c->o.connect_timeout_ms < 1000 ? 1000 : c->o.connect_timeout_ms;
}

void client_sleep_ms(uint32_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int client_frame(const Weights__Request *req, nng_msg **out, wt_errbuf *err)
{
	size_t n = wire_framed_size(&req->base);
	nng_msg *msg;
	if (nng_msg_alloc(&msg, n) != 0)
		return wt_seterr(err, WT_ENOMEM, "out of memory for a %zu-byte request", n);
	if (wire_frame(&req->base, nng_msg_body(msg), n) != n) {
		nng_msg_free(msg);
		return wt_seterr(err, WT_EPROTO, "cannot frame a %zu-byte request", n);
	}
	*out = msg;
	return WT_OK;
}

int client_parse_reply(const wt_client *c, size_t ep, nng_msg *msg, uint64_t id,
                       Weights__Reply__BodyCase want, Weights__Reply **out, const uint8_t **tail,
                       size_t *tail_len, bool *answered, wt_errbuf *err)
{
	const char *url = c->eps[ep].url;
	Weights__Reply *r = NULL;
	const uint8_t *t;
	size_t tl;
	int rv = wire_parse_reply(nng_msg_body(msg), nng_msg_len(msg), WIRE_MAX_HEADER_BYTES, &r,
	                          &t, &tl, err);
	if (rv != WT_OK)
		return wt_errprefix(err, "endpoint %s", url);
	if (r->id != id) {
		uint64_t got = r->id; /* read before r is freed */
		wire_reply_free(r);
		return wt_seterr(err, WT_EPROTO, "endpoint %s: reply id %llu for request %llu", url,
		                 (unsigned long long)got, (unsigned long long)id);
	}
	if (r->body_case == WEIGHTS__REPLY__BODY_ERROR) {
		uint32_t code = r->error->code;
		if (answered != NULL)
			*answered = true;
		/* the server's text, escaped: it reaches logs and terminals */
		char text[WT_ERRMSG_MAX];
		common_text_escape(r->error->message ? r->error->message : "", text, sizeof(text),
		                   false);
		if (code == WT_OK || code >= WT_ERR_COUNT_)
			rv = wt_seterr(err, WT_EPROTO,
			               "endpoint %s: error reply with unknown code %u: %s", url,
			               code, text);
		else
			rv = wt_seterr(err, (int)code, "endpoint %s: %s", url,
			               text[0] ? text : wt_strerror((int)code));
		wire_reply_free(r);
		return rv;
	}
	if (r->body_case != want) {
		int got = (int)r->body_case;
		wire_reply_free(r);
		return wt_seterr(err, WT_EPROTO, "endpoint %s: reply of kind %d, expected %d", url,
		                 got, (int)want);
	}
	*out = r;
	if (tail != NULL) {
		*tail = t;
		*tail_len = tl;
	}
	return WT_OK;
}

/* Pipe notifications keep a socket's monitor: how many connections it has. */
static void mon_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)p;
	client_sockmon *m = arg;
	if (ev == NNG_PIPE_EV_ADD_POST) {
		atomic_fetch_add(&m->adds, 1);
		atomic_fetch_add(&m->pipes, 1);
	} else if (ev == NNG_PIPE_EV_REM_POST && atomic_fetch_sub(&m->pipes, 1) == 1)
		atomic_store(&m->down_ns, common_now_ns());
}

static client_sockmon *monitor_of(wt_client *c, size_t ep, nng_socket sock)
{
	client_sockmon *m = NULL;
	pthread_mutex_lock(&c->lk);
	for (size_t k = 0; k < c->eps[ep].n_socks; k++)
		if (nng_socket_id(c->eps[ep].socks[k]) == nng_socket_id(sock))
			m = c->eps[ep].mons[k];
	pthread_mutex_unlock(&c->lk);
	return m;
}

typedef struct aio_waiter {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	int done;
} aio_waiter;

static void aio_done(void *arg)
{
	aio_waiter *w = arg;
	pthread_mutex_lock(&w->lk);
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lk);
}

/*
 * Wait for a receive that may legitimately take long (a manifest waits for a
 * production). If the socket has had no connection for connect_timeout_ms + 1 s
 * (the daemon died and nng's dialer cannot reconnect), cancel it: true. A
 * daemon restarted meanwhile gets the request again from nng (a request on a
 * lost connection is resent on the next one).
 */
bool client_sockmon_lost(const wt_client *c, const client_sockmon *m)
{
	uint64_t grace = ((uint64_t)c->o.connect_timeout_ms + 1000) * 1000000ull;
	return m != NULL && atomic_load(&m->pipes) == 0 &&
	       common_now_ns() - atomic_load(&m->down_ns) > grace;
}

/*
 * A liveness probe beside a long wait (a manifest waiting for a production, a
 * registration, a watch): a Hello on a context of its own,
 * client_quiet_probe_ms after the wait began and then after each answer, and
 * given as long to be answered (the time a Hello has at connect). A daemon
 * that is stopped or hung keeps its connections up (the kernel answers TCP),
 * so the pipe monitor sees nothing and the wait lasted its whole timeout (600
 * s for a manifest) while another endpoint could serve; the daemon keeps a
 * quarter of its contexts for requests that do not wait, so a working one
 * answers a Hello at once however many productions wait there. (Until
 * 2026-12-02 the probe came after request_timeout_ms and waited as long: a
 * manifest asked of a daemon stopped just then took 60 s to fail over.)
 * Driven from wait_reply's 100 ms polls; the callback only flags completion.
 */
typedef struct probe {
	wt_client *c;
	nng_socket sock;
	nng_ctx ctx;
	nng_aio *aio;
	_Atomic int done; /* the aio completed (probe_cb) */
	int phase;        /* 0 idle, 1 sending, 2 receiving */
	bool on, ctx_open;
	uint64_t next_ns; /* idle: when to send the next one */
} probe;

static void probe_cb(void *arg)
{
	atomic_store(&((probe *)arg)->done, 1);
}

static void probe_init(probe *p, wt_client *c, nng_socket sock, bool on)
{
	*p = (probe){.c = c, .sock = sock};
	p->next_ns = common_now_ns() + (uint64_t)client_quiet_probe_ms(c) * 1000000ull;
	p->on = on && nng_aio_alloc(&p->aio, probe_cb, p) == 0;
	if (p->on && nng_ctx_open(&p->ctx, sock) == 0)
		p->ctx_open = true;
	p->on = p->on && p->ctx_open;
}

static void probe_send(probe *p)
{
	Weights__Request req = WEIGHTS__REQUEST__INIT;
	Weights__Hello h = WEIGHTS__HELLO__INIT;
	h.protocol_version = WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION;
	h.client_id = p->c->client_id;
	h.token = p->c->token;
	req.body_case = WEIGHTS__REQUEST__BODY_HELLO;
	req.hello = &h;
	req.id = atomic_fetch_add(&p->c->next_id, 1);
	nng_msg *msg;
	if (client_frame(&req, &msg, NULL) != WT_OK) {
		p->on = false; /* out of memory: the wait goes on unprobed */
		return;
	}
	atomic_store(&p->done, 0);
	p->phase = 1;
	nng_aio_set_timeout(p->aio, client_duration(client_quiet_probe_ms(p->c)));
	nng_aio_set_msg(p->aio, msg);
	nng_ctx_send(p->ctx, p->aio);
}

/* One poll: true when a probe went unanswered for client_quiet_probe_ms. */
static bool probe_step(probe *p)
{
	if (!p->on)
		return false;
	if (p->phase == 0) {
		if (common_now_ns() >= p->next_ns)
			probe_send(p);
		return false;
	}
	if (!atomic_load(&p->done))
		return false;
	int nrv = nng_aio_result(p->aio);
	if (nrv == 0 && p->phase == 1) {
		atomic_store(&p->done, 0);
		p->phase = 2;
		nng_aio_set_timeout(p->aio, client_duration(client_quiet_probe_ms(p->c)));
		nng_ctx_recv(p->ctx, p->aio);
		return false;
	}
	/* a send left with us, or a reply of any kind: the daemon is alive */
	nng_msg *left = nng_aio_get_msg(p->aio);
	if (left != NULL)
		nng_msg_free(left);
	bool stalled = p->phase == 2 && nrv == NNG_ETIMEDOUT; /* sent, never answered */
	p->phase = 0;
	p->next_ns = common_now_ns() + (uint64_t)client_quiet_probe_ms(p->c) * 1000000ull;
	return stalled; /* a send that found no connection is the pipe monitor's */
}

static void probe_fini(probe *p)
{
	if (p->aio != NULL) {
		nng_aio_stop(p->aio);
		int nrv = nng_aio_result(p->aio);
		nng_msg *left = nng_aio_get_msg(p->aio); /* a send left, a reply unread */
		if (left != NULL && ((p->phase == 1 && nrv != 0) || (p->phase == 2 && nrv == 0)))
			nng_msg_free(left);
		nng_aio_free(p->aio);
	}
	if (p->ctx_open)
		nng_ctx_close(p->ctx);
}

enum { WAIT_DONE = 0, WAIT_LOST, WAIT_STALLED };

/*
 * Wait for a receive that may legitimately take long (a manifest waits for a
 * production). If the socket has had no connection for connect_timeout_ms + 1 s
 * (the daemon died and nng's dialer cannot reconnect): WAIT_LOST; if the
 * probe (optional) went unanswered: WAIT_STALLED; both cancel the receive. A
 * daemon restarted meanwhile gets the request again from nng (a request on a
 * lost connection is resent on the next one).
 */
static int wait_reply(const wt_client *c, client_sockmon *m, probe *pr, aio_waiter *w, nng_aio *aio)
{
	int why = WAIT_DONE;
	pthread_mutex_lock(&w->lk);
	while (!w->done) {
		struct timespec dl = common_timespec_in(CLOCK_REALTIME, 100);
		pthread_cond_timedwait(&w->cv, &w->lk, &dl);
		if (!w->done && client_sockmon_lost(c, m)) {
			why = WAIT_LOST;
			break;
		}
		if (!w->done && pr != NULL && probe_step(pr)) {
			why = WAIT_STALLED;
			break;
		}
	}
	pthread_mutex_unlock(&w->lk);
	if (why != WAIT_DONE)
		nng_aio_cancel(aio);
	nng_aio_wait(aio);
	return why;
}

/* Send req on sock and wait for the reply of kind want. */
static int call_on(wt_client *c, size_t ep, nng_socket sock, client_sockmon *mon,
                   Weights__Request *req, uint32_t timeout_ms, Weights__Reply__BodyCase want,
                   Weights__Reply **out, bool *answered, wt_errbuf *err)
{
	const char *url = c->eps[ep].url;
	nng_ctx ctx;
	nng_aio *aio = NULL;
	nng_msg *msg = NULL;
	int rv, nrv;
	req->id = atomic_fetch_add(&c->next_id, 1);
	if ((rv = client_frame(req, &msg, err)) != WT_OK)
		return rv;
	if ((nrv = nng_ctx_open(&ctx, sock)) != 0) {
		nng_msg_free(msg);
		return wt_seterr(err, client_nng_err(nrv), "endpoint %s: cannot open a context: %s",
		                 url, nng_strerror(nrv));
	}
	aio_waiter w = {.done = 0};
	pthread_mutex_init(&w.lk, NULL);
	pthread_cond_init(&w.cv, NULL);
	if ((nrv = nng_aio_alloc(&aio, aio_done, &w)) != 0) {
		rv = wt_seterr(err, WT_ENOMEM, "endpoint %s: out of memory", url);
		goto out;
	}
	nng_aio_set_timeout(aio, client_duration(timeout_ms));
	nng_aio_set_msg(aio, msg);
	nng_ctx_send(ctx, aio); /* with no connection it waits for one: watch that too */
	bool lost = wait_reply(c, mon, NULL, &w, aio) != WAIT_DONE;
	if (lost || (nrv = nng_aio_result(aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(aio));
		if (lost) {
			rv = wt_seterr(
			    err, WT_EUNAVAIL,
			    "endpoint %s: no connection for %u ms while sending a request "
			    "(weightd stopped?)",
			    url, c->o.connect_timeout_ms + 1000);
			goto out;
		}
		rv = wt_seterr(err, client_nng_err(nrv), "endpoint %s: sending a request: %s", url,
		               nng_strerror(nrv));
		goto out;
	}
	pthread_mutex_lock(&w.lk);
	w.done = 0;
	pthread_mutex_unlock(&w.lk);
	nng_ctx_recv(ctx, aio);
	/* a long wait (not a Hello: no monitor) is probed */
	probe pr;
	probe_init(&pr, c, sock, mon != NULL && timeout_ms > c->o.request_timeout_ms);
	int why = wait_reply(c, mon, &pr, &w, aio);
	probe_fini(&pr);
	if (why == WAIT_LOST) {
		rv = wt_seterr(err, WT_EUNAVAIL,
		               "endpoint %s: the connection was lost during the request and not "
		               "back within %u ms (weightd stopped?)",
		               url, c->o.connect_timeout_ms + 1000);
		goto out;
	}
	if (why == WAIT_STALLED) {
		rv = wt_seterr(err, WT_EUNAVAIL,
		               "endpoint %s: no answer to a Hello within %u ms while waiting for "
		               "the reply (weightd stopped or hung? raise the connect timeout "
		               "if it is only slow)",
		               url, client_quiet_probe_ms(c));
		goto out;
	}
	if ((nrv = nng_aio_result(aio)) != 0) {
		if (nrv == NNG_ETIMEDOUT)
			rv =
			    wt_seterr(err, WT_ETIMEDOUT,
			              "endpoint %s: no reply within %u ms; check that weightd runs "
			              "there or raise the timeout",
			              url, timeout_ms);
		else
			rv = wt_seterr(err, client_nng_err(nrv), "endpoint %s: request failed: %s",
			               url, nng_strerror(nrv));
		goto out;
	}
	msg = nng_aio_get_msg(aio);
	rv = client_parse_reply(c, ep, msg, req->id, want, out, NULL, NULL, answered, err);
	nng_msg_free(msg);
out:
	nng_aio_free(aio); /* waits for aio_done: w may go after this */
	nng_ctx_close(ctx);
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.lk);
	return rv;
}

/* What a HelloReply teaches about endpoint ep; c->lk held. */
static void hello_learn_locked(wt_client *c, size_t ep, const Weights__HelloReply *h)
{
	client_ep *e = &c->eps[ep];
	e->server_max_message_bytes = h->max_message_bytes;
	e->server_max_chunk_bytes = h->max_chunk_bytes;
	/* the bulk stream offered (1.2 servers with stream_listen); else none.
	 * Streams kept open for another offer (a restarted server's new ticket)
	 * are of no use any more. */
	bool same = e->stream_url != NULL && h->stream_url != NULL &&
	            strcmp(e->stream_url, h->stream_url) == 0 && h->stream_ticket.len == 16 &&
	            memcmp(e->stream_ticket, h->stream_ticket.data, 16) == 0;
	if (!same)
		client_bulk_drop_idle(c, ep);
	free(e->stream_url);
	e->stream_url = NULL;
	if (h->stream_url != NULL && h->stream_url[0] != '\0' && h->stream_ticket.len == 16) {
		e->stream_url = strdup(h->stream_url);
		memcpy(e->stream_ticket, h->stream_ticket.data, 16);
	}
	e->stream_live = e->stream_url != NULL && h->stream_live;
}

/*
 * Hello on sock; mon (may be NULL) notes the connection it was answered on.
 * The caller has claimed endpoint ep (ep_claim) and does not hold c->lk: the
 * wait (at most connect_timeout_ms; no monitor, the timeout bounds it) holds
 * up no request to another endpoint; c->lk is taken to write what the reply
 * teaches.
 */
static int hello(wt_client *c, size_t ep, nng_socket sock, client_sockmon *mon, wt_errbuf *err)
{
	uint64_t adds = mon != NULL ? atomic_load(&mon->adds) : 0;
	Weights__Request req = WEIGHTS__REQUEST__INIT;
	Weights__Hello h = WEIGHTS__HELLO__INIT;
	h.protocol_version = WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION;
	h.client_id = c->client_id;
	h.token = c->token;
	req.body_case = WEIGHTS__REQUEST__BODY_HELLO;
	req.hello = &h;
	Weights__Reply *r = NULL;
	int rv = call_on(c, ep, sock, NULL, &req, c->o.connect_timeout_ms,
	                 WEIGHTS__REPLY__BODY_HELLO, &r, NULL, err);
	if (rv != WT_OK)
		return rv;
	if (r->hello->protocol_version != WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION) {
		rv =
		    wt_seterr(err, WT_EVERSION,
		              "endpoint %s speaks protocol version %u, this client %d; upgrade the "
		              "older side",
		              c->eps[ep].url, r->hello->protocol_version,
		              WEIGHTS__PROTOCOL_VERSION__PROTOCOL_VERSION);
	} else {
		pthread_mutex_lock(&c->lk);
		hello_learn_locked(c, ep, r->hello);
		pthread_mutex_unlock(&c->lk);
		client_log(c, WT_CLIENT_LOG_INFO, "connected to %s (server %s %s)", c->eps[ep].url,
		           r->hello->server_id ? r->hello->server_id : "?",
		           r->hello->server_version ? r->hello->server_version : "?");
	}
	wire_reply_free(r);
	if (rv == WT_OK && mon != NULL)
		atomic_store(&mon->hello_adds, adds);
	return rv;
}

/* Open, dial and greet one more socket of endpoint ep into *out, its monitor
 * into *out_mon (owned by the caller); the caller has claimed ep and does not
 * hold c->lk (the dial and the Hello wait up to connect_timeout_ms each).
 * Every failure of this connect phase (refused, no handshake, no Hello reply
 * within connect_timeout_ms, connection dropped) is WT_EUNAVAIL: the caller
 * tries the next endpoint, or this one again after a backoff. */
static int open_socket(wt_client *c, size_t ep, nng_socket *out, client_sockmon **out_mon,
                       wt_errbuf *err)
{
	client_ep *e = &c->eps[ep];
	nng_socket s;
	int rv, nrv;
	if ((nrv = nng_req0_open(&s)) != 0)
		return wt_seterr(err, client_nng_err(nrv), "endpoint %s: cannot open a socket: %s",
		                 e->url, nng_strerror(nrv));
	/* Every buffer has a ceiling (an oversized reply is dropped by nng: a timeout). */
	nng_socket_set_size(s, NNG_OPT_RECVMAXSZ, (size_t)c->o.max_message_bytes);
	/* Our own retry loop resends; nng's timer would duplicate slow requests. */
	nng_socket_set_ms(s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	nng_socket_set_ms(s, NNG_OPT_RECONNMINT, 50);
	nng_socket_set_ms(s, NNG_OPT_RECONNMAXT, 500);
	client_sockmon *mon = calloc(1, sizeof(*mon));
	if (mon == NULL || nng_pipe_notify(s, NNG_PIPE_EV_ADD_POST, mon_cb, mon) != 0 ||
	    nng_pipe_notify(s, NNG_PIPE_EV_REM_POST, mon_cb, mon) != 0) {
		nng_close(s);
		free(mon);
		return wt_seterr(err, WT_ENOMEM, "endpoint %s: out of memory", e->url);
	}
	atomic_store(&mon->down_ns, common_now_ns());
	if ((rv = client_dial_bounded(c, s, mon, e->url, c->o.connect_timeout_ms, err)) != WT_OK) {
		/* s is closed, or an abandoned dial thread closes it and frees mon */
		return rv;
	}
	if ((rv = hello(c, ep, s, mon, err)) != WT_OK) {
		nng_close(s);
		free(mon);
		if (client_retryable(rv)) { /* slow or dropped Hello: connect phase */
			rv = WT_EUNAVAIL;
			if (err != NULL) {
				err->code = rv;
				wt_errprefix(err, "Hello");
			}
		}
		return rv;
	}
	*out = s;
	*out_mon = mon;
	return WT_OK;
}

/*
 * An endpoint's connections are opened and greeted by one thread at a time,
 * without c->lk: the dial and the Hello wait up to connect_timeout_ms each (a
 * stopped daemon, a Hello starved there), and a request to another endpoint
 * of the same client must not wait behind them. ep_claim waits (on c->cv,
 * c->lk released) while another thread has ep, then marks it busy; only the
 * thread that has ep adds sockets to it or greets them, so it reads
 * eps[ep].n_socks, socks[] and mons[] without c->lk, and writes them with it.
 * Returns eps[ep].n_socks.
 */
static size_t ep_claim(wt_client *c, size_t ep)
{
	client_ep *e = &c->eps[ep];
	pthread_mutex_lock(&c->lk);
	while (e->busy)
		pthread_cond_wait(&c->cv, &c->lk);
	e->busy = true;
	size_t n = e->n_socks;
	pthread_mutex_unlock(&c->lk);
	return n;
}

static void ep_release(wt_client *c, size_t ep)
{
	pthread_mutex_lock(&c->lk);
	c->eps[ep].busy = false;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lk);
}

/*
 * With ep claimed: Hello again on each socket of endpoint ep that nng
 * connected anew since its Hello (it redials a server that went away by
 * itself). A restarted server is another instance: without this, what the
 * first Hello taught (its bulk stream ticket, limits) would stay the old
 * one's, and a server without a token never asks for Hello again. A failure
 * is logged: the request that follows meets it too.
 */
static void hello_reconnected(wt_client *c, size_t ep, size_t n_socks)
{
	client_ep *e = &c->eps[ep];
	for (size_t k = 0; k < n_socks; k++) {
		client_sockmon *m = e->mons[k];
		wt_errbuf herr;
		uint64_t adds = m != NULL ? atomic_load(&m->adds) : 0; /* before the Hello */
		if (m != NULL && adds != atomic_load(&m->hello_adds) &&
		    hello(c, ep, e->socks[k], m, &herr) != WT_OK) {
			/* tried for this connection: not again on every call
			 * (a request's own error path says Hello again, e.g. on EPERM) */
			atomic_store(&m->hello_adds, adds);
			client_log(c, WT_CLIENT_LOG_WARNING, "%s", herr.msg);
		}
	}
}

/* Endpoint ep's sockets 0..want-1 opened and greeted (up to the first that
 * fails: its error), and those nng reconnected greeted again. */
static int ep_open(wt_client *c, size_t ep, size_t want, wt_errbuf *err)
{
	client_ep *e = &c->eps[ep];
	int rv = WT_OK;
	size_t n = ep_claim(c, ep);
	while (rv == WT_OK && n < want) {
		nng_socket s = NNG_SOCKET_INITIALIZER;
		client_sockmon *m = NULL;
		rv = open_socket(c, ep, &s, &m, err);
		if (rv == WT_OK) {
			pthread_mutex_lock(&c->lk);
			e->socks[n] = s;
			e->mons[n] = m;
			e->n_socks = ++n;
			pthread_mutex_unlock(&c->lk);
		}
	}
	hello_reconnected(c, ep, n);
	ep_release(c, ep);
	return rv;
}

int client_ep_sockets(wt_client *c, size_t ep, size_t want, nng_socket *socks,
                      client_sockmon **mons, size_t *n, wt_errbuf *err)
{
	client_ep *e = &c->eps[ep];
	WT_ASSERT(want >= 1 && want <= c->o.connections && want <= CLIENT_MAX_CONNS);
	int rv = ep_open(c, ep, want, err);
	pthread_mutex_lock(&c->lk);
	size_t have = e->n_socks < want ? e->n_socks : want;
	memcpy(socks, e->socks, have * sizeof(socks[0]));
	memcpy(mons, e->mons, have * sizeof(mons[0]));
	pthread_mutex_unlock(&c->lk);
	if (have == 0)
		return rv;
	if (rv != WT_OK)
		client_log(c, WT_CLIENT_LOG_WARNING,
		           "%s; going on with %zu of %zu connections to %s", err ? err->msg : "",
		           have, want, e->url);
	*n = have;
	return WT_OK;
}

int client_ep_socket(wt_client *c, size_t ep, size_t conn, nng_socket *sock, wt_errbuf *err)
{
	WT_ASSERT(conn < c->o.connections && conn < CLIENT_MAX_CONNS);
	int rv = ep_open(c, ep, conn + 1, err);
	if (rv == WT_OK) {
		pthread_mutex_lock(&c->lk);
		*sock = c->eps[ep].socks[conn];
		pthread_mutex_unlock(&c->lk);
	}
	return rv;
}

int client_call(wt_client *c, size_t ep, Weights__Request *req, uint32_t timeout_ms,
                Weights__Reply__BodyCase want, Weights__Reply **out, bool *answered, wt_errbuf *err)
{
	nng_socket sock;
	int rv = client_ep_socket(c, ep, 0, &sock, err);
	if (rv != WT_OK)
		return rv;
	return call_on(c, ep, sock, monitor_of(c, ep, sock), req, timeout_ms, want, out, answered,
	               err);
}

int client_ep_rehello(wt_client *c, size_t ep, wt_errbuf *err)
{
	client_ep *e = &c->eps[ep];
	/* claimed as ep_open claims it around its Hello; c->lk only while
	 * hello() writes what the reply teaches (the stream offer, idle streams) */
	size_t n = ep_claim(c, ep);
	int rv = n == 0 ? wt_seterr(err, WT_ECLOSED, "endpoint %s: not connected", e->url) : WT_OK;
	for (size_t k = 0; rv == WT_OK && k < n; k++)
		rv = hello(c, ep, e->socks[k], e->mons[k], err);
	ep_release(c, ep);
	return rv;
}
