/*
 * async.h — asynchronous fetches (since 1.1): start a fetch on a thread of its
 * own, go on initialising the engine, then wait, poll, or be called back; and
 * cancel it from any thread.
 *
 *     wt_fetch_handle *h;
 *     wt_client_fetch_start(c, m, sink, NULL, NULL, &h, &err);
 *     ...                                   // other work; wt_fetch_cancel(h) from any thread
 *     int rv;
 *     wt_fetch_wait(h, -1, &rv, &err);      // rv: what wt_client_fetch would have returned
 *     wt_fetch_free(h);
 *
 * The fetch is wt_client_fetch (client.h) run on the handle's thread: the same
 * verification, retries and sink calls (all from that thread). The client,
 * manifest, sink and opts->stats must stay valid until the fetch has ended
 * (wt_fetch_wait returned WT_OK, the done callback returned, or wt_fetch_free
 * returned).
 */
#ifndef WEIGHTS_ASYNC_H
#define WEIGHTS_ASYNC_H

#include <stddef.h>
#include <stdint.h>

#include "weights/api.h"
#include "weights/client.h"
#include "weights/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wt_fetch_handle wt_fetch_handle; /* opaque */

/*
 * Completion callback: called exactly once, on the fetch's thread, when the
 * fetch has ended (success, failure or cancel), with its result and error
 * (borrowed for the call). Waiters are released after it returns. It must not
 * call wt_fetch_free or wt_fetch_wait on h.
 */
typedef void (*wt_fetch_done_fn)(void *ctx, wt_fetch_handle *h, int result, const wt_errbuf *err);

typedef struct wt_async_opts {
	size_t struct_size;    /* sizeof(wt_async_opts); set by wt_async_opts_init() */
	wt_fetch_done_fn done; /* optional */
	void *done_ctx;
} wt_async_opts;

/* No callback; struct_size set. */
WT_API void wt_async_opts_init(wt_async_opts *o);

/*
 * Start wt_client_fetch(c, m, sink, opts) on a new thread. *out receives the
 * handle (free it with wt_fetch_free). opts and aopts may be NULL; both are
 * copied (opts->stats is written by the fetch). Errors before the thread runs
 * (WT_EVERSION for a bad struct_size, WT_EINVAL for a NULL argument, WT_ENOMEM,
 * WT_EIO when no thread can be created) are returned here and nothing starts.
 */
WT_API int wt_client_fetch_start(wt_client *c, const wt_manifest *m, wt_sink *sink,
                                 const wt_fetch_opts *opts, const wt_async_opts *aopts,
                                 wt_fetch_handle **out, wt_errbuf *err);

/* 1 when the fetch has ended (its result is ready), 0 while it runs. */
WT_API int wt_fetch_poll(wt_fetch_handle *h);

/*
 * Wait up to timeout_ms (< 0: forever; 0: just look) for the fetch to end.
 * WT_OK when it has ended: *result (optional) gets wt_client_fetch's code and
 * err its message. WT_ETIMEDOUT (err says so) when it is still running.
 */
WT_API int wt_fetch_wait(wt_fetch_handle *h, int64_t timeout_ms, int *result, wt_errbuf *err);

/*
 * Ask the fetch to stop; callable from any thread, any number of times, also
 * after the end (then a no-op). A fetch canceled before its end returns
 * WT_ECANCELED ("fetch canceled by wt_fetch_cancel") with the sink aborted
 * (or never begun). It takes effect at the next verified chunk, before a
 * retry or fail-over, and within about 100 ms while the fetch waits for a
 * chunk (its requests in flight are left to end on their own, also when the
 * server stopped answering).
 */
WT_API void wt_fetch_cancel(wt_fetch_handle *h);

/* Cancel the fetch if it still runs, wait for it to end, release the handle.
 * NULL-safe. Not from the done callback. */
WT_API void wt_fetch_free(wt_fetch_handle *h);

#ifdef __cplusplus
}
#endif

#endif
