/*
 * hostile_weightd.h — an in-process weightd that misbehaves on purpose, for
 * the client's tests against a hostile or broken server (test code only): an
 * nng rep0 socket on tcp://127.0.0.1 answering Hello (with a bulk-stream
 * offer when asked), Manifest (one F32 tensor "w" of nbytes in chunks) and
 * chunk requests, and a bulk-stream listener; each reply kind can be
 * replaced by a hook (trickle, stall, lie).
 */
#ifndef WT_TESTS_HOSTILE_WEIGHTD_H
#define WT_TESTS_HOSTILE_WEIGHTD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "proto/bulk.h"
#include "proto/wire.h"

typedef struct hostile hostile;
/* Hooks (NULL: the honest reply). manifest/chunk run on the server thread and
 * send with hw_send; bulk runs on the stream's own thread, after the request
 * (req: BULK_REQ_BYTES, decoded in br) was read, and writes with hw_write. */
typedef void (*hw_manifest_fn)(hostile *h, uint64_t id);
typedef void (*hw_chunk_fn)(hostile *h, const Weights__Request *q);
typedef void (*hw_bulk_fn)(hostile *h, nng_stream *st, const bulk_req *br);
/* Any other request (ListModels, Admin, ...): NULL answers WT_EUNSUPPORTED. */
typedef void (*hw_other_fn)(hostile *h, const Weights__Request *q);

struct hostile {
	char url[64];        /* control socket */
	char stream_url[64]; /* bulk stream, when started with one */
	uint8_t *data;       /* the tensor's bytes */
	uint64_t nbytes, chunk;
	hw_manifest_fn on_manifest;
	hw_chunk_fn on_chunk;
	hw_bulk_fn on_bulk;
	hw_other_fn on_other;
	const char *server_id; /* Hello's server_id; NULL: "hostile" */
	/* Cut-through (set before the first request): Hello offers cut_through and
	 * stream_live, the manifest is live, and the honest replies answer live
	 * chunk requests (by index) with the chunk's hash and, on the tensor's
	 * last chunk, the tensor's. */
	bool live;
	_Atomic bool stop; /* hooks that wait should give up once set */
	/* private */
	nng_socket sock;
	nng_stream_listener *sl;
	uint8_t ticket[16];
	pthread_t th, sth;
	pthread_mutex_t lk;
	int n_conns; /* stream threads running */
	pthread_cond_t cv;
};

/* Start a server for a tensor of nbytes in chunks of `chunk` bytes, with a
 * bulk-stream listener when with_stream. */
hostile *hw_start(uint64_t nbytes, uint64_t chunk, bool with_stream);
/* Stop it: sets stop, waits for the stream threads, closes everything. */
void hw_stop(hostile *h);
/* Send reply r (+ tail bytes) on the control socket. */
void hw_send(hostile *h, Weights__Reply *r, const uint8_t *tail, size_t tail_len);
/* The honest manifest (with live set when live); the place (*off, *len) of
 * the chunk whose hash is `hash` (false if none). */
void hw_manifest(hostile *h, uint64_t id, bool live);
bool hw_find_chunk(const hostile *h, const uint8_t hash[16], uint64_t *off, uint64_t *len);
/* Chunk `index` (false past the last): its place, hash, and the tensor's hash
 * in *th when it is the tensor's last chunk (*last). */
bool hw_live_chunk(const hostile *h, uint64_t index, uint64_t *off, uint64_t *len, uint8_t hash[16],
                   uint8_t th[16], bool *last);
/* Write n bytes on st (0, or an nng error). */
int hw_write(nng_stream *st, const void *buf, size_t n);

#endif
