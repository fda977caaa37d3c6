/*
 * fetch_int.h — private to client/fetch*.c: the state of one wt_client_fetch
 * (fetch.c: window, slots, ordering, retries) shared with the bulk stream
 * path (fetch_bulk.c, docs/architecture.md 4.2).
 */
#ifndef WT_CLIENT_FETCH_INT_H
#define WT_CLIENT_FETCH_INT_H

#include "client/client_int.h"
#include "common/common.h"

enum { SLOT_IDLE = 0, SLOT_BUSY, SLOT_DONE };

struct fetch;

typedef struct fetch_slot {
	struct fetch *f;
	fetch_req *req; /* over messages: its request (fetch_msg.c); NULL until one is sent */
	size_t chunk;   /* global chunk index being fetched */
	uint64_t id;    /* request id of the request in flight */
	/* fields below guarded by fetch.lk */
	int state;
	int on_msg; /* the request went over messages (s->aio), not a bulk stream */
	int lost;   /* canceled: every connection of the endpoint gone (slot_wait) */
	int rv;     /* result once SLOT_DONE */
	wt_errbuf err;
	nng_msg *msg;        /* reply (owned) when rv == WT_OK; NULL over the bulk stream */
	const uint8_t *data; /* chunk bytes inside msg, or in buf (bulk stream) */
	uint8_t *buf;        /* bulk stream: this slot's reused receive buffer; owned */
	size_t buf_cap;
	/* bulk stream: where the sink asked the chunk to be received (its recv_buf;
	 * written by the receiver until the slot is DONE); NULL = buf */
	uint8_t *dst;
	/* bulk stream: the chunk's tensor was hashed as it arrived, from the
	 * tensor's first byte through this chunk; tsnap holds that state */
	int fused;
	common_hasher *tsnap; /* owned; NULL until a fused chunk used this slot */
} fetch_slot;

struct fetch;
/* Reply hashes for chunk ci (h; has_th: it carries its tensor's hash):
 * false when h contradicts a known hash, or the tensor's last chunk of a
 * live manifest comes without the tensor's hash. fetch.c. */
bool fetch_reply_hashes_ok(const struct fetch *f, size_t ci, const uint8_t h[16], bool has_th);
/* Learn the verified hashes of chunk ci (a live reply's): h, and th (may be
 * NULL) on its tensor's last chunk. No-op for what is already known. */
void fetch_learn_hashes(struct fetch *f, size_t ci, const uint8_t h[16], const uint8_t *th);

typedef struct fetch {
	wt_client *c;
	const wt_manifest *m;
	size_t ep;                          /* current endpoint */
	nng_socket socks[CLIENT_MAX_CONNS]; /* its connections; slot i uses socks[i % n_socks] */
	client_sockmon *mons[CLIENT_MAX_CONNS]; /* their monitors; borrowed from the client */
	size_t n_socks;
	int verify;
	uint8_t *shard_id; /* current shard id (a restarted server may issue a new one); owned */
	size_t shard_id_len;
	pthread_mutex_t lk;
	pthread_cond_t cv;
	fetch_slot *slots;
	size_t w;
	common_hasher *hasher;
	/* Hashes: the manifest's, or (live manifest) learned from the chunk replies.
	 * Entry i is written by the reply of chunk i (or of tensor i's last chunk)
	 * before its slot is DONE, read by the fetch thread after. */
	int live;                      /* ask chunks by index (a live manifest) */
	uint8_t (*chash)[16], *cknown; /* [n_chunks] */
	uint8_t (*thash)[16], *tknown; /* [n_tensors] */
	wt_fetch_stats *st;
	wt_sink_ops ops;         /* the sink's callbacks, checked (abi.c) */
	wt_sink *sink;           /* borrowed, for ops.recv_buf */
	const wt_fetch_opts *o;  /* the caller's options (progress: also the stop check) */
	struct fetch_bulk *bulk; /* bulk stream of the current endpoint (fetch_bulk.c); NULL =
	                            messages */
	uint64_t ended_ns;       /* guarded by lk: when a request over messages last ended */
	const int *cancel;       /* wt_fetch_cancel's flag (read atomically); NULL: none */
} fetch;

/* Parse the reply msg (borrowed) to slot s's request (s->chunk, s->id) and
 * check it is that chunk: its hash, offset 0, exactly the chunk's bytes, a
 * hash that agrees with what the manifest or earlier replies said (a live
 * manifest's last chunk of a tensor must carry the tensor's hash) and, with
 * f->verify, the bytes' XXH3-128. On success s->data points at the bytes
 * inside msg and a live reply's hashes are learned (fetch_learn_hashes).
 * Errors name the endpoint, the tensor and the chunk (fetch.c; fuzzed by
 * tests/fuzz/fuzz_chunk_reply.c). */
int fetch_check_reply(fetch *f, fetch_slot *s, nng_msg *msg, wt_errbuf *err);

/* The manifest n asked again mid-fetch (fetch_refresh_manifest, after
 * client_request_manifest): it must list the chunks of f->m, or (a live f->m)
 * be of the same revision and tiling and agree with every hash learned, whose
 * hashes are then adopted. Adopts n's shard id; WT_ECHANGED when it differs.
 * n is consumed (freed). fetch_refresh.c. */
int fetch_refresh_adopt(fetch *f, wt_manifest *n, wt_errbuf *err);

/* Ask the current endpoint for the manifest again (fetch_refresh.c); it must list
 * the same chunks (a live one: agree with every hash learned). Adopts its shard
 * id; WT_ECHANGED when it differs (the caller aborts the sink). */
int fetch_refresh_manifest(fetch *f, wt_errbuf *err);

/* A slot's request ended (any thread): rv, err (when rv != WT_OK) and the reply
 * message msg (owned; NULL over the bulk stream) are published, waiters woken. */
void fetch_slot_finish(fetch_slot *s, int rv, const wt_errbuf *err, nng_msg *msg);

/*
 * Requests over messages (fetch_msg.c). send: send msg (consumed) as slot s's
 * request (s->chunk, s->id set, s BUSY and on_msg), on the connection of its
 * slot index; its end comes through fetch_slot_finish. cancel: cancel s's
 * request in flight (only where nothing is on the wire: slot_wait's lost
 * endpoint). abandon: walk away from every request in flight (a fail-over, the
 * fetch's error): each slot that had one is DONE with WT_EUNAVAIL at once,
 * its request runs on to its reply or timeout and the client frees it
 * (client_reqs_reap); returns how many. free: free the slots' requests, none
 * in flight (all reclaimed).
 */
int fetch_msg_send(fetch *f, fetch_slot *s, nng_msg *msg, wt_errbuf *err);
void fetch_msg_cancel(fetch_slot *s);
unsigned fetch_msg_abandon(fetch *f);
void fetch_msg_free(fetch *f);

/*
 * Bulk stream (fetch_bulk.c). open: after use_endpoint, with no slot busy: when
 * c->o.stream is set, the endpoint offered a stream in Hello and the manifest is
 * not live (or the server takes live requests), take the streams earlier
 * fetches left open and dial the rest, one per connection (f->bulk set); otherwise, or when
 * dialing fails (logged), f->bulk stays NULL and the fetch uses messages.
 * issue: send slot s's request (s->chunk, s->id set) on its stream; a failure
 * finishes s with WT_EUNAVAIL and turns the bulk path off for the rest of the
 * fetch (later requests use messages). close: NULL-safe; closes the streams
 * first, so a receiver blocked on a reply stops at once: its slots end (with
 * WT_EUNAVAIL or WT_ECANCELED), and once close returns no receiver writes to
 * any slot's buffer or dst again (the sink may be aborted).
 */
void fetch_bulk_open(fetch *f);
void fetch_bulk_issue(fetch *f, fetch_slot *s);
void fetch_bulk_close(fetch *f);
/* The fetch got every chunk (no slot busy): close, but leave the streams open
 * for the client's next fetch (client_ep.idle; open takes them first). */
void fetch_bulk_done(fetch *f);
/* 1 while the bulk path is usable. */
int fetch_bulk_on(const fetch *f);
/* When a receive on one of the fetch's streams last moved bytes, or they
 * were opened (common_now_ns clock); 0 without streams. */
uint64_t fetch_bulk_moved_ns(const fetch *f);
/* 1 when a stream an earlier fetch left open failed before its first reply
 * in this one: the server most likely restarted (another ticket). */
int fetch_bulk_stale(const fetch *f);

/* The fetch loop's position and its failure bookkeeping (fetch.c runs it,
 * fetch_retry.c decides what a failure leads to). */
typedef struct fetch_loop {
	size_t head, issued, next_tensor, k_ep;
	uint32_t attempt;            /* failed attempts of the head chunk on this endpoint */
	int refreshed;               /* manifest asked again for this head chunk */
	int rehello;                 /* Hello sent again for this head chunk */
	int renewed;                 /* bulk streams opened anew (stale kept ones; whole fetch) */
	uint32_t corrupt;            /* manifests asked again after WT_ECORRUPT (whole fetch) */
	uint32_t corrupt_at_refresh; /* corrupt when refreshed was set */
	client_budget bud;           /* retry budget since the last delivered chunk */
	uint8_t *refetched;          /* one bit per chunk: re-fetched after a hash mismatch */
	size_t order[CLIENT_MAX_ENDPOINTS];
} fetch_loop;

/* fetch.c, shared with fetch_retry.c */
/* wt_fetch_cancel was called (f->cancel), or the caller's wt_fetch_opts.cancel is set */
bool fetch_cancel_asked(const fetch *f);
int fetch_canceled_err(const fetch *f, wt_errbuf *err); /* WT_ECANCELED naming which */
const char *fetch_tensor_name(const fetch *f, size_t ci);
size_t fetch_chunk_in_tensor(const fetch *f, size_t ci);
int fetch_slot_issue(fetch *f, fetch_slot *s, size_t ci, wt_errbuf *err);
unsigned fetch_slots_reclaim_corrupt(fetch *f, const fetch_slot *skip, wt_errbuf *corrupt_err);
void fetch_slots_reclaim(fetch *f);
int fetch_use_endpoint(fetch *f, size_t ep, wt_errbuf *err);
int fetch_reissue(fetch *f, size_t head, size_t issued, wt_errbuf *err);

/* fetch_retry.c: the head slot failed: re-fetch, retry, resume, fail over,
 * or the error (also WT_ECANCELED when the progress callback says stop). */
int fetch_handle_failure(fetch *f, fetch_loop *L, fetch_slot *s, wt_errbuf *err);
/* The next endpoint in rendezvous order that answers, within the retry budget. */
int fetch_fail_over(fetch *f, fetch_loop *L, wt_errbuf *err);
/* fetch_retry.c: the head slot, on a bulk stream, waited client_quiet_probe_ms
 * without a byte arriving: WT_OK when the endpoint answers a Hello (slow; the
 * wait goes on), else the fetch fails over now (its streams closed first:
 * nothing waits for request_timeout_ms) and this is that result. */
int fetch_probe_quiet(fetch *f, fetch_loop *L, wt_errbuf *err);

#endif
