/*
 * flight.c — single flight: concurrent requests for any rank of one
 * (revision, layout) wait for the one producer. Waiters are not threads: they
 * are queued callbacks (the request state machine parks its context) and are
 * completed by the leader when it finishes.
 */
#include <pthread.h>
#include <stdlib.h>

#include "weightd/weightd_int.h"

typedef struct flight {
	struct flight *next;
	wt_hash128 key;
	wd_flight_waiter *waiters; /* LIFO; order does not matter */
} flight;

struct wd_flights {
	pthread_mutex_t lk;
	/* fields below guarded by lk */
	flight *head; /* few flights at a time: a list is enough */
	size_t n;
};

int wd_flights_create(wd_flights **out)
{
	wd_flights *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return WT_ENOMEM;
	pthread_mutex_init(&t->lk, NULL);
	*out = t;
	return WT_OK;
}

void wd_flights_destroy(wd_flights *t)
{
	if (t == NULL)
		return;
	WT_ASSERT(t->head == NULL);
	pthread_mutex_destroy(&t->lk);
	free(t);
}

static flight **find(wd_flights *t, wt_hash128 key)
{
	flight **pp = &t->head;
	while (*pp != NULL && !common_hash128_eq((*pp)->key, key))
		pp = &(*pp)->next;
	return pp;
}

int wd_flight_join(wd_flights *t, wt_hash128 key, wd_flight_waiter *w)
{
	flight *f = calloc(1, sizeof(*f)); /* allocated outside the lock; freed if unused */
	pthread_mutex_lock(&t->lk);
	flight **pp = find(t, key);
	if (*pp != NULL) {
		if (w != NULL) {
			w->next = (*pp)->waiters;
			(*pp)->waiters = w;
		}
		pthread_mutex_unlock(&t->lk);
		free(f);
		return WD_FLIGHT_WAITING;
	}
	if (f == NULL) {
		/* No memory for the table entry: lead without a record (no waiter can
		 * join, so at worst a second producer runs; the cache refuses a
		 * second writer of the same shard with WT_EBUSY). */
		pthread_mutex_unlock(&t->lk);
		return WD_FLIGHT_LEADER;
	}
	f->key = key;
	f->next = t->head;
	t->head = f;
	t->n++;
	pthread_mutex_unlock(&t->lk);
	return WD_FLIGHT_LEADER;
}

void wd_flight_finish(wd_flights *t, wt_hash128 key, int rv, const wt_errbuf *err)
{
	pthread_mutex_lock(&t->lk);
	flight **pp = find(t, key);
	flight *f = *pp;
	if (f != NULL) {
		*pp = f->next;
		t->n--;
	}
	pthread_mutex_unlock(&t->lk);
	if (f == NULL)
		return;
	wd_flight_waiter *w = f->waiters;
	free(f);
	while (w != NULL) {
		wd_flight_waiter *next = w->next;
		w->done(w, rv, err);
		w = next;
	}
}

size_t wd_flights_active(wd_flights *t)
{
	pthread_mutex_lock(&t->lk);
	size_t n = t->n;
	pthread_mutex_unlock(&t->lk);
	return n;
}
