/*
 * bcast_send.c — the root's send of one frame to every replica at once
 * (bcast_int.h, engine_bcast_tx_*): one nng aio per replica, all bounded by
 * one deadline. A stream send may take part of what it was given; its
 * callback sends the rest at once (not when the root gets round to it), so a
 * replica that stops reading delays no other's bytes.
 */
#include <pthread.h>
#include <stdlib.h>

#include "common/common.h"
#include "engine/bcast_int.h"

typedef struct tx_one {
	engine_bcast_tx *t;
	nng_aio *aio;
	nng_stream *st;
	uint64_t sent;
	int nrv;  /* the send's result, once done */
	int done; /* guarded by t->lk */
} tx_one;

struct engine_bcast_tx {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	uint32_t n;
	tx_one *one;
	/* the frame being sent; set before the sends start, read by callbacks */
	uint8_t *hdr;
	const uint8_t *data;
	uint64_t len, deadline_ns;
	uint32_t timeout_ms;
};

/* Start (or go on with) o's send of what is left of hdr + data. */
static void tx_arm(tx_one *o)
{
	engine_bcast_tx *t = o->t;
	nng_iov v[2];
	unsigned n = 0;
	if (o->sent < ENGINE_BCAST_FRAME)
		v[n++] =
		    (nng_iov){.iov_buf = t->hdr + o->sent, .iov_len = ENGINE_BCAST_FRAME - o->sent};
	uint64_t dsent = o->sent < ENGINE_BCAST_FRAME ? 0 : o->sent - ENGINE_BCAST_FRAME;
	if (t->len > dsent)
		v[n++] =
		    (nng_iov){.iov_buf = (uint8_t *)t->data + dsent, .iov_len = t->len - dsent};
	uint64_t now = common_now_ns();
	nng_aio_set_iov(o->aio, n, v);
	nng_aio_set_timeout(o->aio, now < t->deadline_ns
	                                ? (nng_duration)((t->deadline_ns - now + 999999) / 1000000)
	                                : 1);
	nng_stream_send(o->st, o->aio);
}

static void tx_cb(void *arg)
{
	tx_one *o = arg;
	engine_bcast_tx *t = o->t;
	int nrv = nng_aio_result(o->aio);
	o->sent += nng_aio_count(o->aio);
	if (nrv == 0 && o->sent < ENGINE_BCAST_FRAME + t->len) {
		tx_arm(o); /* the rest, by the same deadline */
		return;
	}
	pthread_mutex_lock(&t->lk);
	o->nrv = nrv;
	o->done = 1;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->lk);
}

void engine_bcast_tx_destroy(engine_bcast_tx *t)
{
	if (t == NULL)
		return;
	for (uint32_t k = 0; t->one != NULL && k < t->n; k++)
		if (t->one[k].aio != NULL) {
			nng_aio_stop(t->one[k].aio);
			nng_aio_free(t->one[k].aio);
		}
	free(t->one);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->lk);
	free(t);
}

int engine_bcast_tx_create(engine_bcast_tx **out, uint32_t n, wt_errbuf *err)
{
	engine_bcast_tx *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return wt_seterr(err, WT_ENOMEM, "broadcast root: out of memory");
	pthread_mutex_init(&t->lk, NULL);
	pthread_cond_init(&t->cv, NULL);
	t->n = n;
	int bad = (t->one = calloc(n ? n : 1, sizeof(*t->one))) == NULL;
	for (uint32_t k = 0; !bad && k < n; k++) {
		t->one[k].t = t;
		bad = nng_aio_alloc(&t->one[k].aio, tx_cb, &t->one[k]) != 0;
	}
	if (bad) {
		engine_bcast_tx_destroy(t);
		return wt_seterr(err, WT_ENOMEM, "broadcast root: out of memory");
	}
	*out = t;
	return WT_OK;
}

void engine_bcast_tx_send(engine_bcast_tx *t, nng_stream **st, uint32_t n, uint8_t *hdr,
                          const void *data, uint64_t len, uint32_t timeout_ms)
{
	t->hdr = hdr;
	t->data = data;
	t->len = len;
	t->timeout_ms = timeout_ms;
	t->deadline_ns = common_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (uint32_t k = 0; k < n && k < t->n; k++) {
		tx_one *o = &t->one[k];
		o->st = st[k];
		o->sent = 0;
		o->nrv = 0;
		pthread_mutex_lock(&t->lk);
		o->done = st[k] == NULL;
		pthread_mutex_unlock(&t->lk);
		if (st[k] != NULL)
			tx_arm(o);
	}
	pthread_mutex_lock(&t->lk);
	for (uint32_t k = 0; k < n && k < t->n; k++)
		while (!t->one[k].done)
			pthread_cond_wait(&t->cv, &t->lk);
	pthread_mutex_unlock(&t->lk);
}

int engine_bcast_tx_result(const engine_bcast_tx *t, uint32_t k, wt_errbuf *err)
{
	const tx_one *o = &t->one[k];
	if (o->st == NULL || o->nrv == 0)
		return WT_OK;
	int rv = engine_bcast_nng_err(o->nrv);
	if (rv == WT_ETIMEDOUT)
		return wt_seterr(
		    err, rv,
		    "broadcast: sending a frame: %llu of %llu bytes taken within %u ms "
		    "(io_timeout_ms); the replica stopped reading",
		    (unsigned long long)o->sent, (unsigned long long)(ENGINE_BCAST_FRAME + t->len),
		    t->timeout_ms);
	return wt_seterr(err, rv, "broadcast: sending a frame: %s (%s)",
	                 rv == WT_ECLOSED ? "the other side went away" : "stream error",
	                 nng_strerror(o->nrv));
}
