/*
 * bcast_int.h — the broadcast wire format and its stream I/O (engine/bcast_*.c;
 * tests may speak it to play a hostile root). Module-private to engine/.
 *
 * All integers little-endian. One stream per replica; the replica dials.
 *
 *   hello (replica -> root), 24 bytes then the three strings, not NUL-ended:
 *     off  size  field
 *      0    4    magic  ENGINE_BCAST_MAGIC
 *      4    4    version ENGINE_BCAST_VERSION
 *      8    4    tp_rank
 *     12    4    ep_rank
 *     16    2    group length      (<= ENGINE_BCAST_MAX_GROUP)
 *     18    2    revision length   (<= ENGINE_BCAST_MAX_TEXT)
 *     20    2    layout length     (<= ENGINE_BCAST_MAX_TEXT)
 *     22    2    0
 *   reply (root -> replica; also the replica's ack after END or a failure):
 *      0    4    magic
 *      4    4    code (WT_OK: admitted / received everything)
 *      8    4    message length (< WT_ERRMSG_MAX), then the message
 *   frame (root -> replica), 24 bytes; DATA is followed by len bytes:
 *      0    4    type (ENGINE_BCAST_F_*)
 *      4    4    tensor index in the manifest
 *      8    8    offset within the tensor (DATA)
 *     16    8    len (DATA; 0 otherwise)
 */
#ifndef WT_ENGINE_BCAST_INT_H
#define WT_ENGINE_BCAST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "weights/error.h"

struct wt_sink;

#define ENGINE_BCAST_MAGIC     0x43425457u /* "WTBC" */
#define ENGINE_BCAST_VERSION   1u
#define ENGINE_BCAST_MAX_GROUP 255u
#define ENGINE_BCAST_MAX_TEXT  16384u
#define ENGINE_BCAST_HELLO     24u
#define ENGINE_BCAST_FRAME     24u

enum {
	ENGINE_BCAST_F_TBEGIN = 1,
	ENGINE_BCAST_F_DATA = 2,
	ENGINE_BCAST_F_TEND = 3,
	ENGINE_BCAST_F_END = 4,
	ENGINE_BCAST_F_ABORT = 5,
};

typedef struct engine_bcast_frame {
	uint32_t type;
	uint32_t tensor;
	uint64_t off;
	uint64_t len;
} engine_bcast_frame;

/* What a hello names; strings borrowed (send) or owned by the caller's buffer (recv). */
typedef struct engine_bcast_hello {
	uint32_t tp_rank, ep_rank;
	char group[ENGINE_BCAST_MAX_GROUP + 1];
	char revision[ENGINE_BCAST_MAX_TEXT + 1];
	char layout[ENGINE_BCAST_MAX_TEXT + 1];
} engine_bcast_hello;

/*
 * Send or receive exactly n bytes within timeout_ms. WT_OK, WT_ETIMEDOUT,
 * WT_ECLOSED (the other side closed or reset), WT_ENOMEM or WT_EIO; err names
 * what (a short phrase from the caller) failed. cancel (a replica's, NULL:
 * none): WT_ECANCELED once it fired, never a send or receive started on the
 * stream it closed (engine_bcast_cancel_watch). The same cancel below.
 */
struct wt_bcast_cancel;
int engine_bcast_io(nng_stream *st, struct wt_bcast_cancel *cancel, int send, void *buf, size_t n,
                    uint32_t timeout_ms, const char *what, wt_errbuf *err);

/* An nng error as a WT_E* code (WT_ETIMEDOUT, WT_ECLOSED, WT_ENOMEM, else WT_EIO). */
int engine_bcast_nng_err(int nrv);

/* Hello: send (h's strings must fit their limits: else WT_EINVAL) and receive
 * (every length checked before a byte of it is read: WT_EPROTO). */
int engine_bcast_hello_send(nng_stream *st, struct wt_bcast_cancel *cancel,
                            const engine_bcast_hello *h, uint32_t timeout_ms, wt_errbuf *err);
int engine_bcast_hello_recv(nng_stream *st, engine_bcast_hello *h, uint32_t timeout_ms,
                            wt_errbuf *err);
/* The fixed part of a hello: magic and version checked (WT_EPROTO, WT_EVERSION),
 * the ranks into h (its strings emptied), the three string lengths into len
 * (group, revision, layout; each within its limit, else WT_EPROTO). */
int engine_bcast_hello_parse(const uint8_t hdr[ENGINE_BCAST_HELLO], engine_bcast_hello *h,
                             size_t len[3], wt_errbuf *err);

/* Reply / ack: a code and a message (msg may be NULL for ""). recv puts the
 * message into msg (cap bytes, NUL-ended) and the code into *code. */
int engine_bcast_reply_send(nng_stream *st, struct wt_bcast_cancel *cancel, int code,
                            const char *msg, uint32_t timeout_ms, wt_errbuf *err);
int engine_bcast_reply_recv(nng_stream *st, struct wt_bcast_cancel *cancel, int *code, char *msg,
                            size_t cap, uint32_t timeout_ms, wt_errbuf *err);

/* One frame header (DATA's bytes follow through engine_bcast_io). */
int engine_bcast_frame_send(nng_stream *st, const engine_bcast_frame *f, uint32_t timeout_ms,
                            wt_errbuf *err);
void engine_bcast_frame_encode(uint8_t hdr[ENGINE_BCAST_FRAME], const engine_bcast_frame *f);
void engine_bcast_frame_decode(const uint8_t hdr[ENGINE_BCAST_FRAME], engine_bcast_frame *f);

/* Where a replica reads the root's side of the stream from: exactly n bytes
 * into buf, or an error (what names the step, for err). frame_start: the
 * read of a frame header (the root may be late by its io_timeout_ms). */
typedef int (*engine_bcast_read_fn)(void *ctx, void *buf, size_t n, int frame_start,
                                    const char *what, wt_errbuf *err);

/*
 * A replica once admitted: sink->begin(m), then the root's frames and bytes
 * from read until END, every frame checked against m before a byte of it is
 * read, every chunk against its hash before sink->write (offsets contiguous
 * from 0), every tensor against its XXH3-128 before tensor_end; then
 * sink->end. On any failure after begin, sink->abort exactly once and never
 * end. m must not be live (WT_EINVAL, the sink never called). Returns WT_OK
 * or the error (weights/bcast.h, wt_bcast_receive).
 */
struct wt_manifest;
int engine_bcast_rx_drive(const struct wt_manifest *m, struct wt_sink *sink,
                          engine_bcast_read_fn read, void *ctx, wt_errbuf *err);

/*
 * The root's join: accept on l until n_want connections said a hello that
 * admit(ctx, hello, err) accepts (WT_OK), or until deadline_ns. Hellos of up
 * to 32 connections are read at once, each within hello_ms of its accept,
 * so a connection that stays silent holds up no other (when 32 are pending,
 * a new one evicts the oldest). A hello that is malformed or that admit
 * refuses gets the code and message back and its connection closed; a
 * connection silent for hello_ms is closed. Admitted streams go to
 * out[0..*n_out) (caller owns them, out has n_want slots). WT_OK when n_want
 * joined; WT_ETIMEDOUT (err not set: the caller names what) or WT_ENOMEM.
 */
typedef struct engine_bcast_join_opts {
	uint32_t n_want;
	uint64_t deadline_ns; /* common_now_ns() clock */
	uint64_t hello_ms;
	int (*admit)(void *ctx, const engine_bcast_hello *h, wt_errbuf *err);
	void *ctx;
} engine_bcast_join_opts;
int engine_bcast_join(nng_stream_listener *l, const engine_bcast_join_opts *o, nng_stream **out,
                      uint32_t *n_out, wt_errbuf *err);

/*
 * The root's sends to n replicas (bcast_send.c): one queue of at most
 * max_lag bytes (grown to one frame when a frame is larger) shared by all,
 * each replica at its own position in it, one aio each sending what it has
 * not taken. A send that takes no byte within timeout_ms fails the replica
 * (WT_ETIMEDOUT); while the fastest took everything and a replica a whole
 * queue behind makes the root wait, the wait is charged to it, and one
 * charged lag_ms in all is dropped (WT_ETIMEDOUT naming the lag).
 * engine_bcast_tx_start: a new broadcast to st[k] != NULL, k < n (borrowed
 * until the next start or tx_forget); n = 0 forgets all.
 * engine_bcast_tx_send: queue hdr (ENGINE_BCAST_FRAME bytes) and len bytes at
 * data (copied; may wait for room, bounded by the replicas' timeouts);
 * WT_ENOMEM, WT_EOVERFLOW. engine_bcast_tx_drain: wait until every replica
 * took everything or failed. engine_bcast_tx_result: WT_OK for replica k
 * (live), or why it failed; a failed replica has no send in flight, so its
 * stream may be closed once tx_forget(k) said so. One thread calls these.
 */
typedef struct engine_bcast_tx engine_bcast_tx;
int engine_bcast_tx_create(engine_bcast_tx **out, uint32_t n, uint64_t max_lag, uint32_t lag_ms,
                           wt_errbuf *err);
void engine_bcast_tx_start(engine_bcast_tx *t, nng_stream **st, uint32_t n, uint32_t timeout_ms);
int engine_bcast_tx_send(engine_bcast_tx *t, const uint8_t *hdr, const void *data, uint64_t len,
                         wt_errbuf *err);
void engine_bcast_tx_drain(engine_bcast_tx *t);
int engine_bcast_tx_result(engine_bcast_tx *t, uint32_t k, wt_errbuf *err);
void engine_bcast_tx_forget(engine_bcast_tx *t, uint32_t k);
void engine_bcast_tx_destroy(engine_bcast_tx *t); /* NULL is a no-op */

/*
 * A replica's side of wt_bcast_cancel (bcast_cancel.c; c NULL: never fired).
 * engine_bcast_cancel_watch: what wt_bcast_cancel_fire closes from now on
 * (the dialer and/or the stream, borrowed; NULL, NULL before the caller frees
 * them); false when c already fired (then they are closed now).
 * engine_bcast_cancel_gate: the gate for client_stream_io_gated (a send or
 * receive starts under c's lock, after checking it did not fire).
 */
bool engine_bcast_cancel_watch(struct wt_bcast_cancel *c, nng_stream_dialer *d, nng_stream *st);
bool engine_bcast_cancel_fired(struct wt_bcast_cancel *c);
struct client_io_gate;
void engine_bcast_cancel_gate(struct wt_bcast_cancel *c, struct client_io_gate *g);

/* Dial url, retrying a refused or failed connect until timeout_ms passed;
 * WT_ECANCELED once cancel (NULL: none) fired. */
int engine_bcast_dial(const char *url, uint32_t timeout_ms, struct wt_bcast_cancel *cancel,
                      nng_stream **out, wt_errbuf *err);

/* The options of a root (inner: its sink) or a replica (inner NULL): WT_EINVAL
 * naming the field that is wrong. */
struct wt_bcast_opts;
struct wt_sink;
int engine_bcast_opts_check(const struct wt_bcast_opts *o, struct wt_sink *inner, wt_errbuf *err);

/* Close and free (NULL is a no-op). */
void engine_bcast_close(nng_stream *st);

#endif
