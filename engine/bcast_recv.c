/*
 * bcast_recv.c — a replica of a broadcast (wt_bcast_receive, weights/bcast.h):
 * what the root sends is hostile input. Every frame is checked against the
 * replica's own manifest (tensor order, offsets, sizes) before a byte of it is
 * read; bytes are gathered chunk by chunk of that manifest, each chunk checked
 * against its XXH3-128 before the sink's write(), and each tensor hashed as
 * its bytes arrive, checked before tensor_end(). Memory: one buffer of the
 * manifest's largest chunk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "common/common.h"
#include "engine/bcast_int.h"
#include "weights/bcast.h"

#define RX_PIECE (1u << 20) /* hashed while still in cache */

typedef struct rx {
	const wt_manifest *m;
	wt_sink *s;
	engine_bcast_read_fn read; /* the root's stream */
	void *rctx;
	uint8_t *buf; /* one chunk; owned */
	common_hasher *th;
	size_t n;    /* tensors */
	size_t next; /* tensor expected at the next TBEGIN */
	size_t cur;  /* tensor open; SIZE_MAX if none */
	wt_tensor_info ti;
	uint64_t got; /* bytes of cur received */
	size_t ck;    /* chunk of cur being filled */
	uint64_t ck_off, ck_n, ck_fill;
	uint8_t ck_hash[16];
} rx;

/* WT_EINVAL for a live manifest: its hashes are not known. */
static int rx_check(const wt_manifest *m, wt_errbuf *err)
{
	if (wt_manifest_live(m))
		return wt_seterr(
		    err, WT_EINVAL,
		    "broadcast replica: the manifest is live (cut-through): its hashes "
		    "are not known yet, so the root's bytes cannot be checked; ask the "
		    "manifest with a client without cut_through");
	return WT_OK;
}

/* A buffer of the largest chunk of m, the tensor hasher. */
static int rx_setup(rx *x, wt_errbuf *err)
{
	int rv = rx_check(x->m, err);
	if (rv != WT_OK)
		return rv;
	uint64_t max = 0;
	x->n = wt_manifest_n_tensors(x->m);
	for (size_t t = 0; t < x->n; t++) {
		uint64_t off, nb;
		uint8_t h[16];
		for (size_t k = 0; client_manifest_chunk(x->m, t, k, &off, &nb, h) == WT_OK; k++)
			max = nb > max ? nb : max;
	}
	if (max > SIZE_MAX)
		return wt_seterr(err, WT_ETOOBIG, "broadcast replica: chunk of %llu bytes",
		                 (unsigned long long)max);
	x->buf = malloc(max ? (size_t)max : 1);
	x->th = common_hasher_new();
	if (x->buf == NULL || x->th == NULL)
		return wt_seterr(
		    err, WT_ENOMEM,
		    "broadcast replica: out of memory for a chunk buffer of %llu bytes",
		    (unsigned long long)max);
	x->cur = SIZE_MAX;
	return WT_OK;
}

static int rx_load_chunk(rx *x, wt_errbuf *err)
{
	x->ck_fill = 0;
	if (client_manifest_chunk(x->m, x->cur, x->ck, &x->ck_off, &x->ck_n, x->ck_hash) != WT_OK ||
	    x->ck_off != x->got || x->ck_n == 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "broadcast replica: tensor '%s': the manifest has no chunk at %llu", x->ti.name,
		    (unsigned long long)x->got);
	return WT_OK;
}

static int on_tbegin(rx *x, const engine_bcast_frame *f, wt_errbuf *err)
{
	if (x->cur != SIZE_MAX || f->tensor != x->next || x->next >= x->n)
		return wt_seterr(err, WT_EPROTO,
		                 "broadcast replica: the root began tensor %u; expected %zu of %zu "
		                 "(manifest order) with no tensor open",
		                 f->tensor, x->next, x->n);
	x->cur = x->next;
	wt_manifest_tensor(x->m, x->cur, &x->ti);
	common_hasher_reset(x->th);
	x->got = 0;
	x->ck = 0;
	int rv = x->ti.nbytes > 0 ? rx_load_chunk(x, err) : WT_OK;
	if (rv == WT_OK)
		rv = x->s->ops->tensor_begin(x->s, x->cur, err);
	return rv;
}

/* The chunk is full: check its hash, hand it to the sink, go to the next. */
static int chunk_done(rx *x, wt_errbuf *err)
{
	wt_hash128 got = common_hash128(x->buf, (size_t)x->ck_n);
	wt_hash128 want = common_hash128_from_bytes(x->ck_hash);
	if (!common_hash128_eq(got, want)) {
		char g[WT_HASH_HEX_LEN + 1], w[WT_HASH_HEX_LEN + 1];
		common_hash128_hex(got, g);
		common_hash128_hex(want, w);
		return wt_seterr(err, WT_EHASH,
		                 "broadcast replica: tensor '%s' chunk at %llu (%llu bytes): bytes "
		                 "from the root hash to %s, the manifest says %s; the root or the "
		                 "link corrupted them (fetch from weightd directly)",
		                 x->ti.name, (unsigned long long)x->ck_off,
		                 (unsigned long long)x->ck_n, g, w);
	}
	int rv = x->s->ops->write(x->s, x->cur, x->ck_off, x->buf, (size_t)x->ck_n, err);
	x->ck++;
	if (rv == WT_OK && x->got < x->ti.nbytes)
		rv = rx_load_chunk(x, err);
	return rv;
}

static int on_data(rx *x, const engine_bcast_frame *f, wt_errbuf *err)
{
	if (x->cur == SIZE_MAX || f->tensor != x->cur || f->off != x->got || f->len == 0 ||
	    f->len > x->ti.nbytes - x->got)
		return wt_seterr(
		    err, WT_EPROTO,
		    "broadcast replica: the root sent %llu bytes at %llu of tensor %u; "
		    "expected bytes at %llu of tensor %zu ('%s', %llu bytes)",
		    (unsigned long long)f->len, (unsigned long long)f->off, f->tensor,
		    (unsigned long long)x->got, x->cur,
		    x->cur != SIZE_MAX ? x->ti.name : "none open",
		    (unsigned long long)x->ti.nbytes);
	uint64_t left = f->len;
	int rv = WT_OK;
	while (rv == WT_OK && left > 0) {
		uint64_t piece = x->ck_n - x->ck_fill;
		piece = piece < left ? piece : left;
		piece = piece < RX_PIECE ? piece : RX_PIECE;
		uint8_t *p = x->buf + x->ck_fill;
		rv = x->read(x->rctx, p, (size_t)piece, 0, "receiving chunk bytes", err);
		if (rv != WT_OK)
			break;
		common_hasher_update(x->th, p, (size_t)piece);
		x->ck_fill += piece;
		x->got += piece;
		left -= piece;
		if (x->ck_fill == x->ck_n)
			rv = chunk_done(x, err);
	}
	return rv;
}

static int on_tend(rx *x, const engine_bcast_frame *f, wt_errbuf *err)
{
	if (x->cur == SIZE_MAX || f->tensor != x->cur || x->got != x->ti.nbytes)
		return wt_seterr(
		    err, WT_EPROTO,
		    "broadcast replica: the root ended tensor %u at %llu bytes; open is "
		    "tensor %zu of %llu bytes",
		    f->tensor, (unsigned long long)x->got, x->cur,
		    (unsigned long long)x->ti.nbytes);
	wt_hash128 got = common_hasher_digest(x->th);
	if (!common_hash128_eq(got, common_hash128_from_bytes(x->ti.hash))) {
		char g[WT_HASH_HEX_LEN + 1];
		common_hash128_hex(got, g);
		return wt_seterr(
		    err, WT_EHASH,
		    "broadcast replica: tensor '%s' (%llu bytes) hashes to %s, not the "
		    "manifest's XXH3-128; fetch it from weightd directly",
		    x->ti.name, (unsigned long long)x->ti.nbytes, g);
	}
	int rv = x->s->ops->tensor_end(x->s, x->cur, err);
	x->cur = SIZE_MAX;
	x->next++;
	return rv;
}

/* Frames until END (WT_OK: the sink may end) or an error. */
static int rx_run(rx *x, wt_errbuf *err)
{
	for (;;) {
		engine_bcast_frame f;
		uint8_t hdr[ENGINE_BCAST_FRAME];
		int rv = x->read(x->rctx, hdr, sizeof(hdr), 1, "waiting for the root", err);
		if (rv != WT_OK)
			return rv;
		engine_bcast_frame_decode(hdr, &f);
		switch (f.type) {
		case ENGINE_BCAST_F_TBEGIN:
			rv = on_tbegin(x, &f, err);
			break;
		case ENGINE_BCAST_F_DATA:
			rv = on_data(x, &f, err);
			break;
		case ENGINE_BCAST_F_TEND:
			rv = on_tend(x, &f, err);
			break;
		case ENGINE_BCAST_F_END:
			if (x->cur != SIZE_MAX || x->next != x->n)
				return wt_seterr(
				    err, WT_EPROTO,
				    "broadcast replica: the root ended after %zu of %zu "
				    "tensors",
				    x->next, x->n);
			return WT_OK;
		case ENGINE_BCAST_F_ABORT:
			return wt_seterr(
			    err, WT_ECANCELED,
			    "broadcast replica: the root aborted the broadcast (its own "
			    "fetch failed or was canceled); retry, or fetch from weightd");
		default:
			return wt_seterr(err, WT_EPROTO, "broadcast replica: unknown frame type %u",
			                 f.type);
		}
		if (rv != WT_OK)
			return rv;
	}
}

/* Dial, hello, wait to be admitted. */
static int rx_join(const wt_manifest *m, const wt_bcast_opts *o, uint32_t io_ms, nng_stream **st,
                   wt_errbuf *err)
{
	engine_bcast_hello *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return wt_seterr(err, WT_ENOMEM, "broadcast replica: out of memory");
	h->tp_rank = wt_manifest_tp_rank(m);
	h->ep_rank = wt_manifest_ep_rank(m);
	snprintf(h->group, sizeof(h->group), "%s", o->group ? o->group : "");
	snprintf(h->revision, sizeof(h->revision), "%s", wt_manifest_revision(m));
	snprintf(h->layout, sizeof(h->layout), "%s", wt_manifest_layout_text(m));
	int rv = engine_bcast_dial(o->url, o->join_timeout_ms, o->cancel, st, err);
	if (rv == WT_OK && !engine_bcast_cancel_watch(o->cancel, NULL, *st))
		rv = WT_ECANCELED; /* err set by the caller */
	if (rv == WT_OK)
		rv = engine_bcast_hello_send(*st, o->cancel, h, io_ms, err);
	free(h);
	char msg[WT_ERRMSG_MAX];
	int code = WT_OK;
	if (rv == WT_OK) /* the root answers once every replica joined */
		rv = engine_bcast_reply_recv(*st, o->cancel, &code, msg, sizeof(msg),
		                             o->join_timeout_ms, err);
	if (rv == WT_OK && code != WT_OK)
		rv = wt_seterr(err, code ? code : WT_EPROTO,
		               "broadcast root %s refused this replica: %s", o->url, msg);
	return rv;
}

int engine_bcast_rx_drive(const wt_manifest *m, wt_sink *sink, engine_bcast_read_fn read, void *ctx,
                          wt_errbuf *err)
{
	rx x = {.m = m, .s = sink, .read = read, .rctx = ctx};
	int rv = rx_setup(&x, err);
	if (rv == WT_OK && (rv = sink->ops->begin(sink, m, err)) == WT_OK) {
		rv = rx_run(&x, err);
		if (rv == WT_OK)
			rv = sink->ops->end(sink, err);
		else
			sink->ops->abort(sink);
	}
	common_hasher_free(x.th);
	free(x.buf);
	return rv;
}

typedef struct rx_stream {
	nng_stream *st;
	uint32_t io_ms;
	wt_bcast_cancel *cancel;
} rx_stream;

/* A frame may come io_timeout_ms late: the root waits that long for a
 * replica that stopped reading before it drops it and sends the next frame.
 * So between frames a replica waits twice io_timeout_ms, longer than the
 * root's own patience; within a frame, io_timeout_ms. */
static int rx_read(void *ctx, void *buf, size_t n, int frame_start, const char *what,
                   wt_errbuf *err)
{
	rx_stream *s = ctx;
	uint32_t ms =
	    frame_start ? (s->io_ms > UINT32_MAX / 2 ? UINT32_MAX : 2 * s->io_ms) : s->io_ms;
	int rv = engine_bcast_io(s->st, s->cancel, 0, buf, n, ms, what, err);
	if (rv == WT_ETIMEDOUT && frame_start)
		wt_seterr(err, rv,
		          "broadcast: %s: nothing for %u ms (twice io_timeout_ms: the root may "
		          "wait io_timeout_ms for a replica that stopped reading); check the "
		          "root, or raise io_timeout_ms",
		          what, ms);
	return rv;
}

int wt_bcast_receive(const wt_bcast_opts *o, const wt_manifest *m, wt_sink *sink, wt_errbuf *err)
{
	int rv = engine_bcast_opts_check(o, NULL, err);
	if (rv != WT_OK)
		return rv;
	if (m == NULL || sink == NULL || sink->ops == NULL || sink->ops->begin == NULL ||
	    sink->ops->tensor_begin == NULL || sink->ops->write == NULL ||
	    sink->ops->tensor_end == NULL || sink->ops->end == NULL || sink->ops->abort == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast replica: give the manifest and a sink with every "
		                 "callback from begin through abort");
	if ((rv = rx_check(m, err)) != WT_OK)
		return rv;
	/* the caller's struct may end before members appended since (cancel, 1.6) */
	wt_bcast_opts oo = {0};
	memcpy(&oo, o, o->struct_size < sizeof(oo) ? o->struct_size : sizeof(oo));
	oo.join_timeout_ms = o->join_timeout_ms ? o->join_timeout_ms : 60000;
	rx_stream s = {
	    .st = NULL, .io_ms = o->io_timeout_ms ? o->io_timeout_ms : 30000, .cancel = oo.cancel};
	if ((rv = rx_join(m, &oo, s.io_ms, &s.st, err)) == WT_OK) {
		rv = engine_bcast_rx_drive(m, sink, rx_read, &s, err);
		/* the root counts who got everything (best effort: it may be gone) */
		engine_bcast_reply_send(s.st, oo.cancel, rv,
		                        err != NULL && rv != WT_OK ? err->msg : NULL, s.io_ms,
		                        NULL);
	}
	engine_bcast_cancel_watch(oo.cancel, NULL, NULL); /* before the stream goes */
	engine_bcast_close(s.st);
	if (rv != WT_OK && rv != WT_ETIMEDOUT && engine_bcast_cancel_fired(oo.cancel))
		rv = wt_seterr(
		    err, WT_ECANCELED,
		    "broadcast replica: canceled by wt_bcast_cancel_fire() while receiving "
		    "from %s",
		    o->url);
	return rv;
}
