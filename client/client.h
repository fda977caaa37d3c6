/*
 * client.h — module interface of client/ (libweights internals that tests and
 * benchmarks may call; users call include/weights/client.h only).
 */
#ifndef WT_CLIENT_CLIENT_H
#define WT_CLIENT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "common/common.h"
#include "proto/weights.pb-c.h"
#include "weights/client.h"

/*
 * Move n bytes over st (send or receive) before deadline_ns (common_now_ns
 * clock; the whole transfer, not each piece: a peer that trickles a byte now
 * and then times out too); an nng error code (0 = all moved). hs and also
 * (receive only; NULL = none) are fed each piece as soon as it arrived, while
 * it is still in the CPU cache. The bulk stream's receivers (fetch_bulk.c),
 * engine/'s broadcast, and tests that speak a stream protocol use it.
 */
int client_stream_io(nng_stream *st, int send, void *buf, size_t n, uint64_t deadline_ns,
                     common_hasher *hs, common_hasher *also);
/*
 * client_stream_io with a gate (NULL: none): each send or receive is started
 * between enter(ctx) and leave(ctx); enter returning non-zero (it then leaves
 * itself) stops the transfer with NNG_ECANCELED before it starts one. So a
 * party that closes st under the same lock as enter never closes it between
 * the check and the start (an operation started on a closed nng 1.5 stream
 * waits for its timeout).
 */
typedef struct client_io_gate {
	int (*enter)(void *ctx);
	void (*leave)(void *ctx);
	void *ctx;
	/* NULL, or set to common_now_ns() each time an operation moved bytes */
	_Atomic uint64_t *moved_ns;
} client_io_gate;
int client_stream_io_gated(nng_stream *st, int send, void *buf, size_t n, uint64_t deadline_ns,
                           common_hasher *hs, common_hasher *also, const client_io_gate *gate);
/* Tests only (NULL otherwise): called by a bulk stream's receiver each time
 * it has taken a request and is about to receive its reply (test_weightd_bulk
 * widens the window between the two to test the close race there). */
extern void (*client_bulk_test_hook)(void);

/*
 * Build a manifest from a decoded protobuf Manifest, validating it completely
 * (see wt_client_get_manifest). Chunks over max_chunk_bytes are WT_ETOOBIG.
 * route_key is the rendezvous key (client_route_key) stored with it; model and
 * layout (with rank) are what was requested, kept to ask again on resume; both
 * copied. On success the caller owns *out (wt_manifest_free()).
 */
int client_manifest_from_pb(const Weights__Manifest *pb, uint64_t max_chunk_bytes,
                            const char *model, const wt_layout *layout, wt_manifest **out,
                            wt_errbuf *err);

/*
 * Chunk k (0-based, offset order) of tensor t of m: its byte offset within the
 * tensor, its size and its XXH3-128 (big-endian; all zero in a live manifest,
 * whose hashes are not known yet). WT_EINVAL when t or k is out of range.
 * For engine/ (the broadcast replica checks every chunk as the fetcher does).
 */
int client_manifest_chunk(const wt_manifest *m, size_t t, size_t k, uint64_t *off, uint64_t *nbytes,
                          uint8_t hash[16]);

/* Rendezvous key of a shard: XXH3-128 over model, canonical layout text and rank. */
void client_route_key(const char *model, const wt_layout *layout, uint8_t key[16]);

/*
 * Rendezvous (highest random weight) order of n endpoint URLs for key: order[0]
 * is the endpoint that owns the shard, the rest the fail-over order. Each URL's
 * weight is XXH3-64(key || url); ties keep list order. order has n entries.
 */
void client_rendezvous_order(const uint8_t key[16], const char *const *urls, size_t n,
                             size_t *order);

/*
 * weightd's peer fill (weightd/peer.c): wt_client_get_manifest_opts in the
 * partitioned mode, also handing back the decoded reply, whose Manifest is the
 * record the filling node commits to its cache. On success the caller owns
 * *out (wt_manifest_free()) and *reply (wire_reply_free()).
 */
int client_get_manifest_pb(wt_client *c, const char *model, const wt_layout *layout,
                           const wt_manifest_opts *opts, wt_manifest **out, Weights__Reply **reply,
                           wt_errbuf *err);

/* How many chunk requests fetches of c left in flight (a fail-over from a
 * stopped daemon, a fetch's error) have not ended yet; those that ended are
 * freed. wt_client_close leaves them to a thread of its own, which closes
 * the client's sockets when they end (at most request_timeout_ms). fetch_msg.c. */
size_t client_requests_left(wt_client *c);

/* How many closed clients that thread still holds (their requests had not
 * ended at wt_client_close). client.c. */
size_t client_closing(void);

#endif
