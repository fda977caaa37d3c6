/*
 * fetch_msg.c — chunk requests over nng messages (fetch_int.h): one request
 * object (an nng context and aio) per window slot, which a fetch can walk
 * away from.
 *
 * A fetch that fails over, or ends in an error, cannot wait for what it asked
 * of a stopped or hung daemon: each request would end only with its own
 * request_timeout_ms (30 s by default). Nor can it abort them: nng 1.5's
 * nng_aio_cancel can lose the completion, and closing a context or socket
 * with a receive in flight can hang nng_close (nng issues 2208, 1813). So the
 * fetch abandons them: the request object leaves the slot for the client's
 * list of left requests, runs on to its reply or its own timeout without
 * touching the fetch (whose slots live no longer than wt_client_fetch), and
 * is freed then (each fetch reaps what ended). wt_client_close returns at
 * once and leaves the rest to a thread of its own (client.c), which closes
 * their sockets when they end (at most request_timeout_ms after they were
 * left).
 *
 * Locks: c->req_lk guards a request's slot, phase, users and the client's
 * list; it is never held with the fetch's lock.
 */
#include <stdio.h>
#include <stdlib.h>

#include "client/client.h"
#include "client/fetch_int.h"

enum { REQ_IDLE = 0, REQ_SENDING, REQ_RECEIVING };

struct fetch_req {
	wt_client *c;
	nng_aio *aio;
	nng_ctx ctx;
	/* c->req_lk: */
	fetch_slot *slot;       /* NULL once abandoned */
	int phase;              /* REQ_*: an operation is in flight unless REQ_IDLE */
	int users;              /* callbacks using slot (and its fetch) right now */
	uint64_t ends_ns;       /* left: its own timeout ends it by then */
	struct fetch_req *next; /* c->left */
};

/* r's request ended (answered or timed out: no context is closed with its
 * request still out), nothing is in flight on its aio. */
static void req_free(fetch_req *r)
{
	nng_ctx_close(r->ctx);
	nng_aio_free(r->aio);
	free(r);
}

/* The callback of an abandoned request's end: drop what it holds. */
static void req_left_ended(fetch_req *r, int phase, int nrv)
{
	nng_msg *m = nng_aio_get_msg(r->aio);
	if (m != NULL &&
	    ((phase == REQ_SENDING && nrv != 0) || (phase == REQ_RECEIVING && nrv == 0)))
		nng_msg_free(m); /* a send left with us, or a reply nobody reads */
	pthread_mutex_lock(&r->c->req_lk);
	r->phase = REQ_IDLE;
	pthread_cond_broadcast(&r->c->req_cv);
	pthread_mutex_unlock(&r->c->req_lk);
}

/* The slot's request ended: its result (the reply checked) to the fetch. */
static void req_finish(fetch_req *r, fetch_slot *s, int phase, int nrv)
{
	fetch *f = s->f;
	wt_errbuf err;
	if (phase == REQ_SENDING && nrv != 0) { /* a failed send leaves the message with us */
		nng_msg *left = nng_aio_get_msg(r->aio);
		if (left != NULL)
			nng_msg_free(left);
	}
	if (nrv != 0) {
		int rv =
		    wt_seterr(&err, client_nng_err(nrv), "endpoint %s: tensor '%s' chunk %zu: %s%s",
		              f->c->eps[f->ep].url, fetch_tensor_name(f, s->chunk),
		              fetch_chunk_in_tensor(f, s->chunk), nng_strerror(nrv),
		              nrv == NNG_ETIMEDOUT ? " (raise the request timeout?)" : "");
		fetch_slot_finish(s, rv, &err, NULL);
		return;
	}
	nng_msg *msg = nng_aio_get_msg(r->aio);
	int rv = fetch_check_reply(f, s, msg, &err);
	if (rv != WT_OK) {
		nng_msg_free(msg);
		msg = NULL;
	}
	fetch_slot_finish(s, rv, &err, msg);
}

/* aio callback (nng thread): send done -> post the receive; else the end. */
static void req_cb(void *arg)
{
	fetch_req *r = arg;
	wt_client *c = r->c;
	int nrv = nng_aio_result(r->aio);
	pthread_mutex_lock(&c->req_lk);
	int phase = r->phase;
	fetch_slot *s = r->slot;
	if (phase == REQ_SENDING && nrv == 0) {
		/* sent: receive the reply, also for a left request: a context closed
		 * with its request still unanswered hung nng_close later (seen under
		 * ASan and TSan in test_weightd_cut) */
		r->phase = REQ_RECEIVING;
		if (s == NULL)
			r->ends_ns = common_now_ns() + (uint64_t)c->o.request_timeout_ms * 1000000u;
		pthread_mutex_unlock(&c->req_lk);
		nng_ctx_recv(r->ctx, r->aio); /* last: the next callback may run at once */
		return;
	}
	if (s == NULL) {
		pthread_mutex_unlock(&c->req_lk);
		req_left_ended(r, phase, nrv);
		return;
	}
	r->phase = REQ_IDLE;
	r->users++;
	pthread_mutex_unlock(&c->req_lk);
	req_finish(r, s, phase, nrv);
	pthread_mutex_lock(&c->req_lk);
	r->users--;
	pthread_cond_broadcast(&c->req_cv);
	pthread_mutex_unlock(&c->req_lk);
}

int fetch_msg_send(fetch *f, fetch_slot *s, nng_msg *msg, wt_errbuf *err)
{
	wt_client *c = f->c;
	fetch_req *r = s->req;
	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		int nrv = r == NULL ? NNG_ENOMEM : nng_aio_alloc(&r->aio, req_cb, r);
		if (nrv == 0)
			nrv = nng_ctx_open(&r->ctx, f->socks[(size_t)(s - f->slots) % f->n_socks]);
		if (nrv != 0) {
			if (r != NULL)
				nng_aio_free(r->aio);
			free(r);
			nng_msg_free(msg);
			return wt_seterr(err, client_nng_err(nrv),
			                 "endpoint %s: cannot open a request context: %s",
			                 c->eps[f->ep].url, nng_strerror(nrv));
		}
		r->c = c;
		r->slot = s;
		s->req = r;
	}
	pthread_mutex_lock(&c->req_lk);
	r->phase = REQ_SENDING;
	pthread_mutex_unlock(&c->req_lk);
	nng_aio_set_msg(r->aio, msg);
	nng_aio_set_timeout(r->aio, client_duration(c->o.request_timeout_ms));
	nng_ctx_send(r->ctx, r->aio);
	return WT_OK;
}

void fetch_msg_cancel(fetch_slot *s)
{
	if (s->req != NULL)
		nng_aio_cancel(s->req->aio); /* req_cb finishes the slot (NNG_ECANCELED) */
}

/* Leave slot s's request in flight to the client's list (req_lk held). A
 * request still sending gets its reply received too (req_cb): it ends by
 * then at the latest twice request_timeout_ms from now (ends_ns moves to
 * the receive's own end once it is posted). */
static void leave(wt_client *c, fetch_slot *s, fetch_req *r)
{
	r->slot = NULL;
	r->ends_ns = common_now_ns() + (uint64_t)c->o.request_timeout_ms * 1000000u *
	                                   (r->phase == REQ_SENDING ? 2 : 1);
	while (r->users > 0) /* a callback of an earlier request still on its way out */
		pthread_cond_wait(&c->req_cv, &c->req_lk);
	r->next = c->left;
	c->left = r;
	c->n_left++;
	s->req = NULL;
}

unsigned fetch_msg_abandon(fetch *f)
{
	wt_client *c = f->c;
	unsigned n = 0;
	for (size_t i = 0; i < f->w; i++) {
		fetch_slot *s = &f->slots[i];
		fetch_req *r = s->req;
		if (r == NULL)
			continue;
		pthread_mutex_lock(&c->req_lk);
		int left = r->phase != REQ_IDLE; /* else it ended: the slot is (about to be) DONE */
		if (left)
			leave(c, s, r);
		pthread_mutex_unlock(&c->req_lk);
		if (!left)
			continue;
		n++;
		pthread_mutex_lock(&f->lk);
		s->state = SLOT_DONE;
		s->rv = wt_seterr(&s->err, WT_EUNAVAIL, "endpoint %s: request left in flight",
		                  c->eps[f->ep].url);
		s->msg = NULL;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->lk);
	}
	if (n > 0)
		client_log(c, WT_CLIENT_LOG_INFO,
		           "endpoint %s: %u chunk requests left in flight (they end with their "
		           "replies or within %u ms)",
		           c->eps[f->ep].url, n, c->o.request_timeout_ms);
	return n;
}

void fetch_msg_free(fetch *f)
{
	for (size_t i = 0; i < f->w; i++)
		if (f->slots[i].req != NULL) { /* ended: reclaimed, or never sent */
			req_free(f->slots[i].req);
			f->slots[i].req = NULL;
		}
}

size_t client_reqs_reap(wt_client *c, int wait)
{
	fetch_req *done = NULL;
	pthread_mutex_lock(&c->req_lk);
	uint64_t t0 = common_now_ns();
	for (;;) {
		uint64_t last = 0; /* when the last one in flight ends at the latest */
		for (fetch_req **p = &c->left; *p != NULL;) {
			fetch_req *r = *p;
			if (r->phase != REQ_IDLE) {
				if (r->ends_ns > last)
					last = r->ends_ns;
				p = &r->next;
				continue;
			}
			*p = r->next;
			r->next = done;
			done = r;
			c->n_left--;
		}
		/* a completion nng lost would hold this for ever: 5 s past their
		 * timeouts, they are left as they are (not freed) */
		if (!wait || c->left == NULL || common_now_ns() > last + 5000000000ull)
			break;
		struct timespec dl = common_timespec_in(CLOCK_REALTIME, 100);
		pthread_cond_timedwait(&c->req_cv, &c->req_lk, &dl);
	}
	size_t still = c->n_left;
	pthread_mutex_unlock(&c->req_lk);
	while (done != NULL) {
		fetch_req *r = done;
		done = r->next;
		req_free(r);
	}
	if (wait && still > 0)
		client_log(c, WT_CLIENT_LOG_WARNING,
		           "%zu chunk requests never ended (%.1f s past their timeouts): not freed",
		           still, (double)(common_now_ns() - t0) / 1e9);
	return still;
}

size_t client_requests_left(wt_client *c)
{
	return client_reqs_reap(c, 0);
}
