/* hostile_weightd.c — see hostile_weightd.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "tests/util/hostile_weightd.h"
#include "tests/util/pb_manifest.h"

#include <nng/protocol/reqrep0/rep.h> /* after nng.h */
#include "weights/dtype.h"
#include "weights/weights.h"

void hw_send(hostile *h, Weights__Reply *r, const uint8_t *tail, size_t tail_len)
{
	size_t n = wire_framed_size(&r->base);
	nng_msg *m;
	if (nng_msg_alloc(&m, n + tail_len) != 0)
		abort();
	wire_frame(&r->base, nng_msg_body(m), n);
	if (tail_len > 0)
		memcpy((uint8_t *)nng_msg_body(m) + n, tail, tail_len);
	if (nng_sendmsg(h->sock, m, 0) != 0)
		nng_msg_free(m);
}

static void error_reply(hostile *h, uint64_t id, int code)
{
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	Weights__Error er = WEIGHTS__ERROR__INIT;
	er.code = (uint32_t)code;
	er.message = "hostile_weightd: no";
	r.id = id;
	r.body_case = WEIGHTS__REPLY__BODY_ERROR;
	r.error = &er;
	hw_send(h, &r, NULL, 0);
}

bool hw_find_chunk(const hostile *h, const uint8_t hash[16], uint64_t *off, uint64_t *len)
{
	for (uint64_t o = 0; o < h->nbytes; o += h->chunk) {
		uint64_t l = h->nbytes - o < h->chunk ? h->nbytes - o : h->chunk;
		uint8_t x[16];
		common_hash128_to_bytes(common_hash128(h->data + o, l), x);
		if (memcmp(x, hash, 16) == 0) {
			*off = o;
			*len = l;
			return true;
		}
	}
	return false;
}

bool hw_live_chunk(const hostile *h, uint64_t index, uint64_t *off, uint64_t *len, uint8_t hash[16],
                   uint8_t th[16], bool *last)
{
	uint64_t n_chunks = (h->nbytes + h->chunk - 1) / h->chunk;
	if (index >= n_chunks)
		return false;
	*off = index * h->chunk;
	*len = h->nbytes - *off < h->chunk ? h->nbytes - *off : h->chunk;
	*last = index + 1 == n_chunks;
	common_hash128_to_bytes(common_hash128(h->data + *off, *len), hash);
	if (*last)
		common_hash128_to_bytes(common_hash128(h->data, h->nbytes), th);
	return true;
}

void hw_manifest(hostile *h, uint64_t id, bool live)
{
	pbm b;
	pbm_build(&b, &(pbm_tensor){"w", WT_F32, h->data, h->nbytes}, 1, h->chunk, live);
	b.m.model = "fake";
	b.m.revision = "rev1";
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	r.id = id;
	r.body_case = WEIGHTS__REPLY__BODY_MANIFEST;
	r.manifest = &b.m;
	hw_send(h, &r, NULL, 0);
	pbm_free(&b);
}

static void honest_chunk(hostile *h, const Weights__Request *q)
{
	uint64_t off, len;
	uint8_t hash[16], th[16];
	bool last = false;
	if (q->chunk->live
	        ? !hw_live_chunk(h, q->chunk->index, &off, &len, hash, th, &last)
	        : q->chunk->hash.len != 16 || !hw_find_chunk(h, q->chunk->hash.data, &off, &len)) {
		error_reply(h, q->id, WT_ENOTFOUND);
		return;
	}
	Weights__Reply r = WEIGHTS__REPLY__INIT;
	Weights__ChunkReply c = WEIGHTS__CHUNK_REPLY__INIT;
	c.hash = q->chunk->hash;
	if (q->chunk->live) {
		c.hash = (ProtobufCBinaryData){.len = 16, .data = hash};
		if (last)
			c.tensor_hash = (ProtobufCBinaryData){.len = 16, .data = th};
	}
	c.nbytes = len;
	r.id = q->id;
	r.body_case = WEIGHTS__REPLY__BODY_CHUNK;
	r.chunk = &c;
	hw_send(h, &r, h->data + off, len);
}

static void *control_main(void *arg)
{
	hostile *h = arg;
	while (!atomic_load(&h->stop)) {
		nng_msg *m;
		if (nng_recvmsg(h->sock, &m, 0) != 0)
			continue;
		Weights__Request *q = NULL;
		int rv = wire_parse_request(nng_msg_body(m), nng_msg_len(m), 1u << 20, &q, NULL);
		nng_msg_free(m);
		if (rv != WT_OK)
			continue;
		if (q->body_case == WEIGHTS__REQUEST__BODY_HELLO) {
			Weights__Reply r = WEIGHTS__REPLY__INIT;
			Weights__HelloReply hr = WEIGHTS__HELLO_REPLY__INIT;
			hr.protocol_version = 1;
			hr.server_id = (char *)(h->server_id ? h->server_id : "hostile");
			hr.max_chunk_bytes = h->chunk;
			hr.cut_through = h->live;
			hr.stream_live = h->live && h->sl != NULL;
			if (h->sl != NULL) {
				hr.stream_url = h->stream_url;
				hr.stream_ticket.data = h->ticket;
				hr.stream_ticket.len = 16;
			}
			r.id = q->id;
			r.body_case = WEIGHTS__REPLY__BODY_HELLO;
			r.hello = &hr;
			hw_send(h, &r, NULL, 0);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_MANIFEST) {
			if (h->on_manifest != NULL)
				h->on_manifest(h, q->id);
			else
				hw_manifest(h, q->id, h->live);
		} else if (q->body_case == WEIGHTS__REQUEST__BODY_CHUNK) {
			if (h->on_chunk != NULL)
				h->on_chunk(h, q);
			else
				honest_chunk(h, q);
		} else if (h->on_other != NULL) {
			h->on_other(h, q);
		} else {
			error_reply(h, q->id, WT_EUNSUPPORTED);
		}
		wire_request_free(q);
	}
	return NULL;
}

/* All n bytes of buf through op (nng_stream_recv or _send), each wait up to
 * timeout_ms: 0, or the nng error that stopped it. */
static int st_io(nng_stream *st, void *buf, size_t n, nng_duration timeout_ms,
                 void (*op)(nng_stream *, nng_aio *))
{
	nng_aio *aio;
	if (nng_aio_alloc(&aio, NULL, NULL) != 0)
		return NNG_ENOMEM;
	nng_aio_set_timeout(aio, timeout_ms);
	size_t done = 0;
	int rv = 0;
	while (rv == 0 && done < n) {
		nng_iov v = {.iov_buf = (uint8_t *)buf + done, .iov_len = n - done};
		nng_aio_set_iov(aio, 1, &v);
		op(st, aio);
		nng_aio_wait(aio);
		rv = nng_aio_result(aio);
		done += nng_aio_count(aio);
	}
	nng_aio_free(aio);
	return rv;
}

static int st_read(nng_stream *st, void *buf, size_t n)
{
	return st_io(st, buf, n, 500, nng_stream_recv);
}

int hw_write(nng_stream *st, const void *buf, size_t n)
{
	return st_io(st, (void *)buf, n, 2000, nng_stream_send);
}

typedef struct conn_arg {
	hostile *h;
	nng_stream *st;
} conn_arg;

/* One bulk stream: the open header, then requests until the client or stop. */
static void *conn_main(void *arg)
{
	conn_arg *a = arg;
	hostile *h = a->h;
	nng_stream *st = a->st;
	free(a);
	uint8_t o[BULK_OPEN_BYTES];
	wt_errbuf err;
	int rv;
	while ((rv = st_read(st, o, sizeof(o))) == NNG_ETIMEDOUT && !atomic_load(&h->stop)) {
	}
	if (rv == 0 && bulk_open_check(o, h->ticket, &err) == WT_OK) {
		for (;;) {
			uint8_t q[BULK_REQ_BYTES], sid[BULK_MAX_SHARD_ID];
			bulk_req br;
			while ((rv = st_read(st, q, sizeof(q))) == NNG_ETIMEDOUT &&
			       !atomic_load(&h->stop)) {
			}
			if (rv != 0 || bulk_req_decode(q, &br, &err) != WT_OK ||
			    st_read(st, sid, br.shard_id_len) != 0)
				break;
			if (h->on_bulk != NULL) {
				h->on_bulk(h, st, &br);
				continue;
			}
			bulk_reply rp;
			memset(&rp, 0, sizeof(rp));
			rp.id = br.id;
			uint8_t hd[BULK_REPLY_BYTES];
			uint64_t off, len;
			bool last = false;
			if ((br.flags & BULK_F_LIVE)
			        ? !hw_live_chunk(h, bulk_req_live_index(&br), &off, &len, br.hash,
			                         rp.tensor_hash, &last)
			        : !hw_find_chunk(h, br.hash, &off, &len)) {
				rp.code = WT_ENOTFOUND;
				bulk_reply_encode(&rp, hd);
				hw_write(st, hd, sizeof(hd));
				continue;
			}
			rp.nbytes = len;
			memcpy(rp.chunk_hash, br.hash, 16);
			bulk_reply_encode(&rp, hd);
			if (hw_write(st, hd, sizeof(hd)) != 0 ||
			    hw_write(st, h->data + off, len) != 0)
				break;
		}
	}
	nng_stream_close(st);
	nng_stream_free(st);
	pthread_mutex_lock(&h->lk);
	h->n_conns--;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->lk);
	return NULL;
}

static void *stream_main(void *arg)
{
	hostile *h = arg;
	nng_aio *aio;
	if (nng_aio_alloc(&aio, NULL, NULL) != 0)
		return NULL;
	while (!atomic_load(&h->stop)) {
		nng_aio_set_timeout(aio, 100);
		nng_stream_listener_accept(h->sl, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0)
			continue;
		conn_arg *a = malloc(sizeof(*a));
		if (a == NULL)
			abort();
		a->h = h;
		a->st = nng_aio_get_output(aio, 0);
		pthread_t t;
		pthread_mutex_lock(&h->lk);
		h->n_conns++;
		pthread_mutex_unlock(&h->lk);
		if (pthread_create(&t, NULL, conn_main, a) != 0)
			abort();
		pthread_detach(t);
	}
	nng_aio_free(aio);
	return NULL;
}

hostile *hw_start(uint64_t nbytes, uint64_t chunk, bool with_stream)
{
	hostile *h = calloc(1, sizeof(*h));
	if (h == NULL || (h->data = malloc(nbytes)) == NULL)
		abort();
	h->nbytes = nbytes;
	h->chunk = chunk;
	for (uint64_t i = 0; i < nbytes; i++)
		h->data[i] = (uint8_t)(i * 131 + 7);
	pthread_mutex_init(&h->lk, NULL);
	pthread_cond_init(&h->cv, NULL);
	nng_listener l;
	int port = 0;
	if (nng_rep0_open(&h->sock) != 0 ||
	    nng_socket_set_ms(h->sock, NNG_OPT_RECVTIMEO, 50) != 0 ||
	    nng_socket_set_size(h->sock, NNG_OPT_RECVMAXSZ, 0) != 0 ||
	    nng_listen(h->sock, "tcp://127.0.0.1:0", &l, 0) != 0 ||
	    nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port) != 0)
		abort();
	snprintf(h->url, sizeof(h->url), "tcp://127.0.0.1:%d", port);
	if (with_stream) {
		memset(h->ticket, 7, sizeof(h->ticket));
		int sp = 0;
		if (nng_stream_listener_alloc(&h->sl, "tcp://127.0.0.1:0") != 0 ||
		    nng_stream_listener_listen(h->sl) != 0 ||
		    nng_stream_listener_get_int(h->sl, NNG_OPT_TCP_BOUND_PORT, &sp) != 0)
			abort();
		snprintf(h->stream_url, sizeof(h->stream_url), "tcp://127.0.0.1:%d", sp);
		if (pthread_create(&h->sth, NULL, stream_main, h) != 0)
			abort();
	}
	if (pthread_create(&h->th, NULL, control_main, h) != 0)
		abort();
	return h;
}

void hw_stop(hostile *h)
{
	if (h == NULL)
		return;
	atomic_store(&h->stop, true);
	pthread_join(h->th, NULL);
	if (h->sl != NULL) {
		pthread_join(h->sth, NULL);
		pthread_mutex_lock(&h->lk);
		while (h->n_conns > 0)
			pthread_cond_wait(&h->cv, &h->lk);
		pthread_mutex_unlock(&h->lk);
		nng_stream_listener_close(h->sl);
		nng_stream_listener_free(h->sl);
	}
	nng_close(h->sock);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->lk);
	free(h->data);
	free(h);
}
