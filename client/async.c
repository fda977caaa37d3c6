/*
 * async.c — asynchronous fetches (include/weights/async.h): wt_client_fetch
 * on a thread per fetch, with a cancel flag checked at every verified chunk
 * through the fetch's progress callback (the synchronous fetch's own cancel
 * point: a non-zero return is WT_ECANCELED with the sink aborted), and by the
 * fetch itself while it waits for a chunk or retries (client_fetch).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client_int.h"
#include "weights/async.h"
#include "weights/weights.h"

struct wt_fetch_handle {
	wt_client *c;
	const wt_manifest *m;
	wt_sink *sink;
	wt_fetch_opts fo;        /* the caller's, progress replaced by on_progress */
	wt_progress_fn progress; /* the caller's progress callback, or NULL */
	void *progress_ctx;
	wt_async_opts ao;
	pthread_t th;
	pthread_mutex_t lk;
	pthread_cond_t cv; /* signalled when ended becomes 1 */
	int canceled;      /* atomic */
	int ended;         /* under lk */
	int result;        /* valid once ended */
	wt_errbuf err;     /* valid once ended */
};

static int on_progress(void *ctx, uint64_t done, uint64_t total)
{
	wt_fetch_handle *h = ctx;
	/* the caller's callback sees every verified chunk, the last one too */
	if (h->progress != NULL && h->progress(h->progress_ctx, done, total) != 0)
		return 1;
	return __atomic_load_n(&h->canceled, __ATOMIC_ACQUIRE) ? 1 : 0;
}

static void *fetch_thread(void *arg)
{
	wt_fetch_handle *h = arg;
	wt_errbuf err;
	wt_errclear(&err);
	int rv;
	if (__atomic_load_n(&h->canceled, __ATOMIC_ACQUIRE))
		rv = wt_seterr(&err, WT_ECANCELED,
		               "fetch canceled by wt_fetch_cancel before it started (the sink "
		               "was not called)");
	else
		rv = client_fetch(h->c, h->m, h->sink, &h->fo, &h->canceled, &err);
	if (rv == WT_ECANCELED && __atomic_load_n(&h->canceled, __ATOMIC_ACQUIRE) &&
	    strstr(err.msg, "progress callback") != NULL)
		wt_seterr(&err, WT_ECANCELED, "fetch canceled by wt_fetch_cancel (sink aborted)");
	if (h->ao.done != NULL)
		h->ao.done(h->ao.done_ctx, h, rv, &err);
	pthread_mutex_lock(&h->lk);
	h->result = rv;
	h->err = err;
	h->ended = 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->lk);
	return NULL;
}

void wt_async_opts_init(wt_async_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
}

/* A wt_async_opts of an older or the same layout: copy what the caller has. */
static int async_opts_in(wt_async_opts *dst, const wt_async_opts *src, wt_errbuf *err)
{
	wt_async_opts_init(dst);
	if (src == NULL)
		return WT_OK;
	if (src->struct_size != sizeof(*src))
		return wt_seterr(err, WT_EVERSION,
		                 "wt_async_opts.struct_size %zu is not one libweights %s knows "
		                 "(%zu): fill it with wt_async_opts_init()",
		                 src->struct_size, WT_VERSION_STRING, sizeof(*src));
	*dst = *src;
	return WT_OK;
}

int wt_client_fetch_start(wt_client *c, const wt_manifest *m, wt_sink *sink,
                          const wt_fetch_opts *opts, const wt_async_opts *aopts,
                          wt_fetch_handle **out, wt_errbuf *err)
{
	if (c == NULL || m == NULL || sink == NULL || out == NULL)
		return wt_seterr(
		    err, WT_EINVAL,
		    "wt_client_fetch_start: client, manifest, sink and out are required");
	wt_fetch_handle *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return wt_seterr(err, WT_ENOMEM, "wt_client_fetch_start: out of memory");
	int rv = client_fetch_opts_in(&h->fo, opts, err);
	if (rv == WT_OK)
		rv = async_opts_in(&h->ao, aopts, err);
	if (rv != WT_OK) {
		free(h);
		return rv;
	}
	h->c = c;
	h->m = m;
	h->sink = sink;
	h->progress = h->fo.progress;
	h->progress_ctx = h->fo.progress_ctx;
	h->fo.progress = on_progress;
	h->fo.progress_ctx = h;
	pthread_mutex_init(&h->lk, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	int e = pthread_create(&h->th, NULL, fetch_thread, h);
	if (e != 0) {
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->lk);
		free(h);
		return wt_seterr(err, WT_EIO, "wt_client_fetch_start: cannot create a thread: %s",
		                 strerror(e));
	}
	*out = h;
	return WT_OK;
}

int wt_fetch_poll(wt_fetch_handle *h)
{
	pthread_mutex_lock(&h->lk);
	int ended = h->ended;
	pthread_mutex_unlock(&h->lk);
	return ended;
}

int wt_fetch_wait(wt_fetch_handle *h, int64_t timeout_ms, int *result, wt_errbuf *err)
{
	struct timespec dl =
	    common_timespec_in(CLOCK_MONOTONIC, timeout_ms > 0 ? (uint64_t)timeout_ms : 0);
	pthread_mutex_lock(&h->lk);
	while (!h->ended && timeout_ms != 0) {
		if (timeout_ms < 0)
			pthread_cond_wait(&h->cv, &h->lk);
		else if (pthread_cond_timedwait(&h->cv, &h->lk, &dl) == ETIMEDOUT)
			break;
	}
	int ended = h->ended, rv = h->result;
	wt_errbuf e = h->err;
	pthread_mutex_unlock(&h->lk);
	if (!ended)
		return wt_seterr(err, WT_ETIMEDOUT, "fetch still running after %lld ms",
		                 (long long)timeout_ms);
	if (result != NULL)
		*result = rv;
	if (err != NULL)
		*err = e;
	return WT_OK;
}

void wt_fetch_cancel(wt_fetch_handle *h)
{
	if (h != NULL)
		__atomic_store_n(&h->canceled, 1, __ATOMIC_RELEASE);
}

void wt_fetch_free(wt_fetch_handle *h)
{
	if (h == NULL)
		return;
	if (!wt_fetch_poll(h))
		wt_fetch_cancel(h);
	pthread_join(h->th, NULL);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->lk);
	free(h);
}
