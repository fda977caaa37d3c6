/*
 * bcast_send.c — the root's sends to every replica (bcast_int.h,
 * engine_bcast_tx_*): one queue of what the root sent, shared by all
 * replicas, each at its own position in it, and one nng aio per replica that
 * sends what it has not taken yet as soon as it takes the last piece. So the
 * root, and every replica, go at the speed of the fastest replica: a slower
 * one falls behind within the queue. When it is a whole queue behind and the
 * fastest has taken everything, the root waits for it, and that wait is
 * charged to it; a replica charged lag_ms in all is dropped. So a replica
 * that is slow for good holds the others up lag_ms once, while one that was
 * late for a moment (descheduled, a page-fault storm) catches up.
 *
 * The queue is a ring of cap bytes: positions are byte counts since the
 * broadcast started; byte p lies at ring[p % cap]. The root writes [head,
 * head + n) only when no replica still has to send from it (head + n - tail
 * <= cap, tail the slowest live replica's position).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "engine/bcast_int.h"

enum { TX_LIVE = 0, TX_FAILED, TX_LAGGED };

typedef struct tx_one {
	engine_bcast_tx *t;
	nng_aio *aio;
	/* fields below guarded by t->lk */
	nng_stream *st;    /* NULL: not in this broadcast, or forgotten */
	uint64_t pos;      /* bytes taken */
	int busy;          /* a send in flight */
	uint64_t armed_ns; /* when the send in flight was armed (its bytes last moved) */
	int state;         /* TX_*; not TX_LIVE: nothing more is sent */
	int nrv;           /* TX_FAILED: the send's nng error */
	uint64_t lag;      /* TX_LAGGED: how far behind the fastest */
	uint64_t held_ns;  /* the root's waits charged to it, this broadcast */
	int blocking;      /* in the root's current wait */
} tx_one;

struct engine_bcast_tx {
	pthread_mutex_t lk;
	pthread_cond_t cv; /* a send finished */
	uint32_t n;
	tx_one *one;
	uint32_t timeout_ms, lag_ms;
	/* fields below guarded by lk; the ring's bytes in [tail, head) are read
	 * by the sends, those outside by the root only */
	uint8_t *ring;
	uint64_t cap, max_lag, head;
};

/* Send what o has not taken of [o->pos, t->head), the ring's wrap as two
 * pieces. Under t->lk. */
static void tx_arm(tx_one *o)
{
	engine_bcast_tx *t = o->t;
	uint64_t at = o->pos % t->cap, left = t->head - o->pos;
	uint64_t first = left < t->cap - at ? left : t->cap - at;
	nng_iov v[2] = {{.iov_buf = t->ring + at, .iov_len = first},
	                {.iov_buf = t->ring, .iov_len = left - first}};
	nng_aio_set_iov(o->aio, left > first ? 2 : 1, v);
	nng_aio_set_timeout(o->aio, (nng_duration)t->timeout_ms);
	o->busy = 1;
	o->armed_ns = common_now_ns();
	nng_stream_send(o->st, o->aio);
}

/* Arm every live idle replica that has bytes to take. Under t->lk. */
static void tx_kick(engine_bcast_tx *t)
{
	for (uint32_t k = 0; k < t->n; k++) {
		tx_one *o = &t->one[k];
		if (o->st != NULL && o->state == TX_LIVE && !o->busy && o->pos < t->head)
			tx_arm(o);
	}
}

static void tx_cb(void *arg)
{
	tx_one *o = arg;
	engine_bcast_tx *t = o->t;
	int nrv = nng_aio_result(o->aio);
	size_t got = nng_aio_count(o->aio);
	pthread_mutex_lock(&t->lk);
	o->busy = 0;
	o->pos += got;
	/* a timeout after some bytes is progress: only io_timeout_ms without a
	 * byte taken fails a replica */
	if (nrv != 0 && !(nrv == NNG_ETIMEDOUT && got > 0) && o->state == TX_LIVE) {
		o->state = TX_FAILED;
		o->nrv = nrv;
	}
	if (o->state == TX_LIVE && o->pos < t->head)
		tx_arm(o);
	pthread_cond_broadcast(&t->cv);
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
	free(t->ring);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->lk);
	free(t);
}

int engine_bcast_tx_create(engine_bcast_tx **out, uint32_t n, uint64_t max_lag, uint32_t lag_ms,
                           wt_errbuf *err)
{
	engine_bcast_tx *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return wt_seterr(err, WT_ENOMEM, "broadcast root: out of memory");
	pthread_mutex_init(&t->lk, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	t->n = n;
	t->max_lag = max_lag;
	t->lag_ms = lag_ms;
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

void engine_bcast_tx_start(engine_bcast_tx *t, nng_stream **st, uint32_t n, uint32_t timeout_ms)
{
	pthread_mutex_lock(&t->lk);
	t->timeout_ms = timeout_ms;
	t->head = 0;
	for (uint32_t k = 0; k < t->n; k++) {
		tx_one *o = &t->one[k];
		o->st = k < n ? st[k] : NULL;
		o->pos = 0;
		o->state = TX_LIVE;
		o->nrv = 0;
		o->lag = 0;
		o->held_ns = 0;
		o->blocking = 0;
	}
	pthread_mutex_unlock(&t->lk);
}

/* Wait until no send is in flight on a replica that is not live (a lagging
 * one's send is cancelled). Under t->lk. */
static void tx_settle(engine_bcast_tx *t)
{
	for (uint32_t k = 0; k < t->n; k++) {
		tx_one *o = &t->one[k];
		while (o->st != NULL && o->state != TX_LIVE && o->busy) {
			nng_aio_cancel(o->aio); /* the callback runs later: no lock needed */
			pthread_cond_wait(&t->cv, &t->lk);
		}
	}
}

/* Whether some replica is still sent to. Under t->lk. */
static int tx_any_live(const engine_bcast_tx *t)
{
	for (uint32_t k = 0; k < t->n; k++)
		if (t->one[k].st != NULL && t->one[k].state == TX_LIVE)
			return 1;
	return 0;
}

/* Positions of the slowest and the fastest live replica (head when none). */
static void tx_span(const engine_bcast_tx *t, uint64_t *tail, uint64_t *front)
{
	*tail = t->head;
	*front = 0;
	int any = 0;
	for (uint32_t k = 0; k < t->n; k++) {
		const tx_one *o = &t->one[k];
		if (o->st == NULL || o->state != TX_LIVE)
			continue;
		any = 1;
		*tail = o->pos < *tail ? o->pos : *tail;
		*front = o->pos > *front ? o->pos : *front;
	}
	if (!any)
		*front = t->head;
}

/* Charge the root's wait of dt_ns to the replicas that blocked it; drop
 * those charged lag_ms in all. One whose send in flight has taken no byte for
 * io_timeout_ms (lag_ms is at most that) stopped reading: dropped as such, as
 * the send's own timeout would have (its timer, late on a loaded machine, may
 * not have fired yet). Under t->lk. */
static void tx_charge(engine_bcast_tx *t, uint64_t dt_ns)
{
	int dropped = 0;
	uint64_t now = common_now_ns();
	for (uint32_t k = 0; k < t->n; k++) {
		tx_one *o = &t->one[k];
		if (!o->blocking)
			continue;
		o->blocking = 0;
		o->held_ns += dt_ns;
		if (o->state != TX_LIVE || o->held_ns < (uint64_t)t->lag_ms * 1000000u)
			continue;
		if (o->busy && now - o->armed_ns >= (uint64_t)t->timeout_ms * 1000000u) {
			o->state = TX_FAILED;
			o->nrv = NNG_ETIMEDOUT;
		} else {
			o->state = TX_LAGGED;
			o->lag = t->head - o->pos;
		}
		dropped = 1;
	}
	if (dropped)
		tx_settle(t);
}

/* Wait until n more bytes fit: the slowest live replica at most cap - n
 * behind head (n = cap: every live replica took everything). While the
 * fastest has taken everything, the wait is charged to each replica that
 * blocks it (tx_charge); else the fastest sets the pace. Under t->lk. */
static void tx_room(engine_bcast_tx *t, uint64_t n)
{
	uint64_t lag_ns = (uint64_t)t->lag_ms * 1000000u;
	for (;;) {
		uint64_t tail, front;
		tx_span(t, &tail, &front);
		if (t->head + n - tail <= t->cap)
			return;
		if (front != t->head) {
			pthread_cond_wait(&t->cv, &t->lk);
			continue;
		}
		uint64_t left = UINT64_MAX;
		for (uint32_t k = 0; k < t->n; k++) {
			tx_one *o = &t->one[k];
			if (o->st == NULL || o->state != TX_LIVE || t->head + n - o->pos <= t->cap)
				continue;
			o->blocking = 1;
			uint64_t l = o->held_ns < lag_ns ? lag_ns - o->held_ns : 0;
			left = l < left ? l : left;
		}
		uint64_t t0 = common_now_ns();
		if (left > 0) {
			struct timespec ts =
			    common_timespec_in(CLOCK_MONOTONIC, (left + 999999) / 1000000);
			pthread_cond_timedwait(&t->cv, &t->lk, &ts);
		}
		tx_charge(t, common_now_ns() - t0);
	}
}

/* The ring, grown to hold a frame of n bytes when it cannot (a chunk larger
 * than max_lag_bytes): first every replica takes what is queued, so nothing
 * is moved. Under t->lk. */
static int tx_grow(engine_bcast_tx *t, uint64_t n, wt_errbuf *err)
{
	uint64_t want = t->max_lag > n ? t->max_lag : n;
	if (t->ring != NULL && t->cap >= n)
		return WT_OK;
	if (t->ring != NULL)
		tx_room(t, t->cap); /* every replica took everything: nothing queued */
	uint8_t *p = malloc(want);
	if (p == NULL)
		return wt_seterr(err, WT_ENOMEM,
		                 "broadcast root: out of memory for a queue of %llu bytes; lower "
		                 "max_lag_bytes",
		                 (unsigned long long)want);
	free(t->ring);
	t->ring = p;
	t->cap = want;
	return WT_OK;
}

/* Copy len bytes at src into the ring at head. Under t->lk. */
static void tx_put(engine_bcast_tx *t, const void *src, uint64_t len)
{
	uint64_t at = t->head % t->cap, first = len < t->cap - at ? len : t->cap - at;
	memcpy(t->ring + at, src, first);
	memcpy(t->ring, (const uint8_t *)src + first, len - first);
	t->head += len;
}

int engine_bcast_tx_send(engine_bcast_tx *t, const uint8_t *hdr, const void *data, uint64_t len,
                         wt_errbuf *err)
{
	uint64_t n;
	if (__builtin_add_overflow(len, (uint64_t)ENGINE_BCAST_FRAME, &n))
		return wt_seterr(err, WT_EOVERFLOW, "broadcast root: frame of %llu bytes",
		                 (unsigned long long)len);
	pthread_mutex_lock(&t->lk);
	if (!tx_any_live(t)) {
		pthread_mutex_unlock(&t->lk); /* nobody to send to: nothing queued */
		return WT_OK;
	}
	int rv = tx_grow(t, n, err);
	if (rv == WT_OK) {
		tx_room(t, n);
		tx_put(t, hdr, ENGINE_BCAST_FRAME);
		if (len > 0)
			tx_put(t, data, len);
		tx_kick(t);
	}
	pthread_mutex_unlock(&t->lk);
	return rv;
}

void engine_bcast_tx_drain(engine_bcast_tx *t)
{
	pthread_mutex_lock(&t->lk);
	if (t->ring != NULL)
		tx_room(t, t->cap);
	pthread_mutex_unlock(&t->lk);
}

int engine_bcast_tx_result(engine_bcast_tx *t, uint32_t k, wt_errbuf *err)
{
	pthread_mutex_lock(&t->lk);
	tx_one o = t->one[k];
	uint64_t cap = t->cap;
	uint32_t lag_ms = t->lag_ms;
	pthread_mutex_unlock(&t->lk);
	if (o.st == NULL || o.state == TX_LIVE)
		return WT_OK;
	if (o.state == TX_LAGGED)
		return wt_seterr(err, WT_ETIMEDOUT,
		                 "broadcast: %llu bytes behind the fastest replica, it held the "
		                 "others up %u ms (lag_timeout_ms) in all while the root waited "
		                 "for it (its send queue of max_lag_bytes %llu full, or the "
		                 "broadcast's end); dropped so that they go on at full speed: "
		                 "fetch it from weightd, or raise lag_timeout_ms",
		                 (unsigned long long)o.lag, lag_ms, (unsigned long long)cap);
	int rv = engine_bcast_nng_err(o.nrv);
	if (rv == WT_ETIMEDOUT)
		return wt_seterr(err, rv,
		                 "broadcast: sending: no byte taken within %u ms (io_timeout_ms) "
		                 "after %llu bytes; the replica stopped reading",
		                 t->timeout_ms, (unsigned long long)o.pos);
	return wt_seterr(
	    err, rv, "broadcast: sending after %llu bytes: %s (%s)", (unsigned long long)o.pos,
	    rv == WT_ECLOSED ? "the other side went away" : "stream error", nng_strerror(o.nrv));
}

void engine_bcast_tx_forget(engine_bcast_tx *t, uint32_t k)
{
	pthread_mutex_lock(&t->lk);
	t->one[k].st = NULL;
	pthread_mutex_unlock(&t->lk);
}
