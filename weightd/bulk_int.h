/*
 * bulk_int.h — the bulk data plane's state, shared by its two halves: the per-stream
 * protocol (bulk.c: the receive side, the two reply slots, the send side) and the
 * listener (bulk_listen.c: accept, max_connections, reaping the streams that ended,
 * start / offer / stop).
 */
#ifndef WT_WEIGHTD_BULK_INT_H
#define WT_WEIGHTD_BULK_INT_H

#include "proto/bulk.h"
#include "weightd/server_int.h"

#define BULK_SLOTS 2

typedef struct wd_bslot {
	struct wd_bconn *b;
	wd_job job;
	bulk_req req;
	uint8_t sid[BULK_MAX_SHARD_ID];
	uint8_t rhdr[BULK_REPLY_BYTES + BULK_MAX_MSG];
	nng_iov seg[2]; /* what to send: header (+ text), bytes */
	unsigned nseg;
	cache_view *view;  /* pinned chunk being sent; released after the send */
	wd_wbuf *wbuf;     /* or a live chunk's write-behind buffer (a reference) */
	uint8_t *copy;     /* fault injection only: a corrupted copy of the bytes */
	wd_live_wait wait; /* a live request parked until its chunk is produced */
	int ready;         /* guarded by wd_bulk.lk: prepared, waiting to be sent */
} wd_bslot;

enum { BR_OPEN = 0, BR_HDR, BR_SID, BR_WAIT };

typedef struct wd_bconn {
	struct wd_bulk *bk;
	struct wd_bconn *next; /* in wd_bulk.conns; guarded by wd_bulk.lk */
	nng_stream *st;
	nng_aio *raio, *saio;
	/* receive side (one receive in flight at a time) */
	int rstate; /* written under wd_bulk.lk (the send side reads it there) */
	size_t rdone, rlen;
	uint8_t *rbuf;
	uint64_t open_by_ns; /* common_now_ns deadline of the opening message; 0 = none */
	uint8_t open[BULK_OPEN_BYTES];
	uint8_t hdr[BULK_REQ_BYTES];
	size_t sdone; /* send side: bytes of slot[send_head] sent so far */
	wd_bslot slot[BULK_SLOTS];
	/* fields below guarded by wd_bulk.lk */
	unsigned recv_slot, send_head, used; /* slots used in order from send_head */
	int sending;
	int jobs; /* queued requests, and callbacks using b past the lock: freed at 0 */
	bool dead;
} wd_bconn;

struct wd_bulk {
	wd_server *srv;
	nng_stream_listener *l;
	nng_aio *accept_aio;
	char url[512]; /* advertised in HelloReply.stream_url */
	int wild_port; /* tcp on a wildcard host: the bound port; 0 = url as is */
	uint8_t ticket[BULK_TICKET_BYTES];
	pthread_mutex_t lk;
	pthread_cond_t cv;
	wd_job reap_job; /* reap_work: frees the streams that ended */
	/* fields below guarded by lk */
	bool closing;
	wd_bconn *conns;
	bool reap_queued;   /* reap_job is queued and has not begun */
	unsigned reap_jobs; /* reap_job queued or running (wd_bulk_stop waits) */
};

/* Queue the reaping job unless it is queued already (bk->lk held); true: the caller
 * submits bk->reap_job with wd_bulk_reap_submit once it has unlocked (bulk_listen.c). */
bool wd_bulk_reap_soon_locked(wd_bulk *bk);
void wd_bulk_reap_submit(wd_bulk *bk);

/* A stream's state for accepted stream st (its aios allocated; nothing started), or NULL
 * out of memory (st left to the caller); wd_bconn_open starts receiving its opening
 * message (hello_timeout_ms applies); wd_bconn_free stops its aios and frees it with st
 * (bulk.c). */
wd_bconn *wd_bconn_new(wd_bulk *bk, nng_stream *st);
void wd_bconn_open(wd_bconn *b);
void wd_bconn_free(wd_bconn *b);

#endif
