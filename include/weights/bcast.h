/*
 * bcast.h — broadcast of a fetched rank to data-parallel replicas (since 1.5).
 *
 * In a cluster with R data-parallel replicas, the R ranks that hold the same
 * (tp_rank, ep_rank) need the same bytes. One of them, the root, fetches from
 * weightd through a broadcast sink that wraps its own sink; the others call
 * wt_bcast_receive() and get the bytes from the root instead of asking weightd.
 *
 * Transport: a host stream (nng stream: tcp:// or ipc://). The root listens,
 * the replicas dial. NCCL is not built (docs/engines.md "Broadcast to replicas").
 *
 * Integrity does not depend on the root: a replica gets its own manifest from
 * weightd (wt_client_get_manifest, a small control request) and checks every
 * byte the root sends against it, chunk hash and tensor XXH3-128, exactly as
 * wt_client_fetch does. So the replica's sink sees the contract of engine.h.
 *
 * Root policy: the root's own fetch never fails because of a replica once the
 * broadcast began. What it sends is queued once (max_lag_bytes) and every
 * replica takes from the queue at its own speed, so the root and the other
 * replicas go at the fastest replica's speed, not the slowest's. A replica
 * that, a whole queue behind the fastest, held them up lag_timeout_ms in
 * all, that stops reading (takes no byte for io_timeout_ms) or that goes
 * away is dropped (its stream closed, so it aborts) and counted; wt_bcast_root_result() tells how
 * many replicas got everything. Before the broadcast began, begin() fails (WT_ETIMEDOUT) if not
 * every replica joined within join_timeout_ms: then the root's fetch fails,
 * its inner sink is never called, and the replicas that did join are refused.
 */
#ifndef WEIGHTS_BCAST_H
#define WEIGHTS_BCAST_H

#include <stddef.h>
#include <stdint.h>

#include "weights/api.h"
#include "weights/client.h"
#include "weights/engine.h"
#include "weights/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Since 1.6: a cancellation for wt_bcast_receive (wt_bcast_opts.cancel). */
typedef struct wt_bcast_cancel wt_bcast_cancel; /* opaque */

/* Versioned like wt_client_opts: set struct_size (wt_bcast_opts_init does). */
typedef struct wt_bcast_opts {
	size_t struct_size;
	/* root: URL to listen on (tcp://127.0.0.1:0 picks a free port, see
	 * wt_bcast_root_url); replica: the root's URL. Copied. Required. */
	const char *url;
	/* Group id (the job, the replica set); a replica of another group is refused
	 * at hello. NULL = "". At most 255 bytes. Copied. */
	const char *group;
	/* root: R, the members of the group, root included (1..256; 1 = nobody to
	 * send to). Ignored by a replica. */
	uint32_t n_members;
	/* root: how long begin() waits for the R-1 replicas to join; replica: how
	 * long it tries to reach the root and waits to be admitted. Default 60000. */
	uint32_t join_timeout_ms;
	/* root: each send to a replica (one that takes no byte for this long is
	 * dropped) and the acks at the end (one deadline for all); replica: each
	 * receive within a frame, and twice this between frames. Default 30000. */
	uint32_t io_timeout_ms;
	/* root (since 1.6): how far, in bytes, a replica may fall behind the
	 * fastest one before it holds anyone up. What the root sends is queued
	 * once (this many bytes of root memory, allocated at the first frame;
	 * one frame if a chunk is larger) and every replica takes from the queue
	 * at its own speed. 0 = the default, 64 MiB; at least 64 KiB. */
	uint64_t max_lag_bytes;
	/* root (since 1.6): how long, in all, a replica a whole queue behind may
	 * hold the root (and so the others) up, counted while the fastest has
	 * taken everything; then it is dropped (WT_ETIMEDOUT naming the lag; the
	 * replica sees WT_ECLOSED and should fetch from weightd itself). So a
	 * replica that is late for a moment catches up, and one that is slow for
	 * good costs the others this much once. 0 = the default, 5000; at most
	 * io_timeout_ms (the replicas that wait meanwhile must not time out). */
	uint32_t lag_timeout_ms;
	/* Since 1.6, replica only, optional (NULL, or absent from an older
	 * struct): wt_bcast_cancel_fire(cancel) from another thread ends this
	 * wt_bcast_receive with WT_ECANCELED at once, whatever it waits for
	 * (dialing, admission, a frame). Borrowed; must outlive the call. */
	wt_bcast_cancel *cancel;
} wt_bcast_opts;

WT_API void wt_bcast_opts_init(wt_bcast_opts *o);

/* opaque; one broadcast at a time; wt_bcast_receive may run on any thread */
typedef struct wt_bcast_root wt_bcast_root;

/*
 * Listen on o->url for the replicas of one group. The sink of the root
 * (wt_bcast_root_sink) forwards every callback to inner (borrowed; must
 * outlive the root) and sends each verified chunk, each tensor's start and
 * end, and the end or abort of the fetch to every replica, in order.
 * begin(m) waits for n_members - 1 replicas whose hello names the same group,
 * revision, layout text and (tp_rank, ep_rank) as m; a replica that does not
 * is refused with a message naming the difference and does not count.
 * Hellos are read concurrently, each within io_timeout_ms of its connect: a
 * connection that says nothing holds up no replica.
 * Each fetch into the sink is a new broadcast to newly joined replicas.
 * WT_EINVAL for bad options (the message names the field), WT_EUNAVAIL when
 * the URL cannot be listened on. Caller owns *out (wt_bcast_root_destroy()).
 */
WT_API int wt_bcast_root_create(wt_bcast_root **out, const wt_bcast_opts *o, wt_sink *inner,
                                wt_errbuf *err);
/* The sink to pass to wt_client_fetch(). Borrowed; valid until destroy. */
WT_API wt_sink *wt_bcast_root_sink(wt_bcast_root *r);
/* The URL replicas dial (the bound port filled in). Borrowed; valid until destroy. */
WT_API const char *wt_bcast_root_url(const wt_bcast_root *r);
/*
 * After a broadcast ended (end or abort): *n_done = replicas that received
 * and verified every tensor (their sink's end() succeeded). Returns WT_OK when
 * all n_members - 1 did; else the first replica failure's code with err
 * naming it ("replica K dropped: ..." for a send timeout or for holding the
 * others up lag_timeout_ms, WT_ETIMEDOUT both; its own verification error, ...).
 * The root's end() returns once every live replica took what is queued
 * (within its lag_timeout_ms) and acknowledged (one io_timeout_ms for all).
 */
WT_API int wt_bcast_root_result(const wt_bcast_root *r, uint32_t *n_done, wt_errbuf *err);
/*
 * After a broadcast ended: replica k's own result (k = 0 .. n_members - 2, in
 * the order they were admitted, as the messages above number them): WT_OK
 * when it received and verified every tensor; else its failure, err naming it
 * ("replica K dropped: ...", "replica K failed: ...", "replica K: canceled:
 * ..." when the root's fetch failed). WT_ENOTFOUND when fewer replicas joined
 * it; when it did not begin, why (as wt_bcast_root_result); WT_EINVAL for k
 * out of range. Since 1.7: wt_bcast_root_result gives only the first failure.
 */
WT_API int wt_bcast_root_replica(const wt_bcast_root *r, uint32_t k, wt_errbuf *err);
/* Close the listener and every replica stream; no broadcast may be running.
 * NULL is a no-op. */
WT_API void wt_bcast_root_destroy(wt_bcast_root *r);

/*
 * Replica: dial the root at o->url (retrying until join_timeout_ms), say
 * hello (group, m's revision, layout text and rank), then drive sink with
 * what the root sends, checked against m (the manifest this replica got from
 * weightd itself; borrowed; must not be live, WT_EINVAL): begin(m) once
 * admitted; tensor_begin, write (chunk by chunk of m, each after its chunk
 * hash passed, offsets contiguous from 0), tensor_end (after the tensor's
 * XXH3-128 passed), end — or abort exactly once on any failure after begin.
 * Errors: WT_EHASH naming the tensor (and chunk) whose bytes do not match;
 * WT_EPROTO for a frame out of order, of the wrong tensor or size; WT_ECANCELED
 * when the root aborted (its own fetch failed); WT_ECLOSED when the root went
 * away or dropped this replica (too slow: fetch from weightd instead);
 * WT_ETIMEDOUT when it was silent for io_timeout_ms within a frame (twice
 * that between frames) or could not be reached and admitted within
 * join_timeout_ms; the root's refusal at hello
 * (WT_EVERSION another revision, WT_ELAYOUT another layout or rank, WT_EINVAL
 * another group); a sink callback's own error. Blocks the calling thread.
 */
WT_API int wt_bcast_receive(const wt_bcast_opts *o, const wt_manifest *m, wt_sink *sink,
                            wt_errbuf *err);

/*
 * Since 1.6. A cancellation for one wt_bcast_receive at a time (its
 * o->cancel). Caller owns *out (wt_bcast_cancel_destroy()); WT_ENOMEM.
 */
WT_API int wt_bcast_cancel_create(wt_bcast_cancel **out, wt_errbuf *err);
/*
 * Any thread, any time, idempotent: the wt_bcast_receive using c (now or
 * later: a fired cancellation stays fired) returns WT_ECANCELED without
 * waiting for a timeout: its dial is stopped and its stream to the root
 * closed (the root drops this replica). After the sink's begin(), abort() is
 * called exactly once as for any failure; a receive that already passed its
 * sink's end() returns WT_OK.
 */
WT_API void wt_bcast_cancel_fire(wt_bcast_cancel *c);
/* NULL is a no-op; not while a wt_bcast_receive uses it. */
WT_API void wt_bcast_cancel_destroy(wt_bcast_cancel *c);

#ifdef __cplusplus
}
#endif

#endif
