/*
 * bcast_cancel.c — wt_bcast_cancel (weights/bcast.h, since 1.6): stops a
 * replica's wt_bcast_receive from another thread. The replica registers what
 * it blocks on (the dialer while it dials, then its stream to the root);
 * wt_bcast_cancel_fire closes that, so the blocked nng call returns at once
 * (NNG_ECLOSED) instead of at its timeout, and the replica sees the fired
 * flag and reports WT_ECANCELED. Closing is what nng allows from another
 * thread; freeing stays with the replica, after it unregistered under the
 * same lock, so fire never touches a freed object.
 */
#include <pthread.h>
#include <stdlib.h>

#include "client/client.h"
#include "engine/bcast_int.h"
#include "weights/bcast.h"

struct wt_bcast_cancel {
	pthread_mutex_t lk;
	/* fields below guarded by lk */
	int fired;
	nng_stream_dialer *d; /* borrowed from the replica while it dials */
	nng_stream *st;       /* borrowed from the replica while it talks to the root */
};

int wt_bcast_cancel_create(wt_bcast_cancel **out, wt_errbuf *err)
{
	wt_bcast_cancel *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return wt_seterr(err, WT_ENOMEM, "broadcast: out of memory for a cancellation");
	pthread_mutex_init(&c->lk, NULL);
	*out = c;
	return WT_OK;
}

void wt_bcast_cancel_fire(wt_bcast_cancel *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lk);
	c->fired = 1;
	if (c->d != NULL)
		nng_stream_dialer_close(c->d); /* the dial in progress and any later one fail */
	if (c->st != NULL)
		nng_stream_close(c->st); /* a send or receive in progress fails */
	pthread_mutex_unlock(&c->lk);
}

void wt_bcast_cancel_destroy(wt_bcast_cancel *c)
{
	if (c == NULL)
		return;
	pthread_mutex_destroy(&c->lk);
	free(c);
}

bool engine_bcast_cancel_watch(wt_bcast_cancel *c, nng_stream_dialer *d, nng_stream *st)
{
	if (c == NULL)
		return true;
	pthread_mutex_lock(&c->lk);
	c->d = d;
	c->st = st;
	int fired = c->fired;
	pthread_mutex_unlock(&c->lk);
	if (fired)
		wt_bcast_cancel_fire(c); /* closes what was just given */
	return !fired;
}

bool engine_bcast_cancel_fired(wt_bcast_cancel *c)
{
	if (c == NULL)
		return false;
	pthread_mutex_lock(&c->lk);
	int fired = c->fired;
	pthread_mutex_unlock(&c->lk);
	return fired != 0;
}

/* client_io_gate: a send or receive starts under c->lk, never once c fired
 * (fire closes the stream under the same lock: an operation started on a
 * closed nng 1.5 stream would wait for its timeout). */
static int gate_enter(void *ctx)
{
	wt_bcast_cancel *c = ctx;
	pthread_mutex_lock(&c->lk);
	if (!c->fired)
		return 0;
	pthread_mutex_unlock(&c->lk);
	return 1;
}

static void gate_leave(void *ctx)
{
	pthread_mutex_unlock(&((wt_bcast_cancel *)ctx)->lk);
}

void engine_bcast_cancel_gate(wt_bcast_cancel *c, client_io_gate *g)
{
	*g = (client_io_gate){.enter = gate_enter, .leave = gate_leave, .ctx = c};
}
