/*
 * bcast_wire.c — the broadcast wire format (bcast_int.h) over nng streams:
 * blocking sends and receives, each bounded by a timeout, every length checked
 * before its bytes are read.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client/client.h"
#include "common/common.h"
#include "engine/bcast_int.h"

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

int engine_bcast_nng_err(int nrv)
{
	switch (nrv) {
	case NNG_ETIMEDOUT:
		return WT_ETIMEDOUT;
	case NNG_ENOMEM:
		return WT_ENOMEM;
	case NNG_ECLOSED:
	case NNG_ECONNRESET:
	case NNG_ECONNSHUT:
	case NNG_ECONNABORTED:
		return WT_ECLOSED;
	default:
		return WT_EIO;
	}
}

int engine_bcast_io(nng_stream *st, struct wt_bcast_cancel *cancel, int send, void *buf, size_t n,
                    uint32_t timeout_ms, const char *what, wt_errbuf *err)
{
	uint64_t deadline = common_now_ns() + (uint64_t)timeout_ms * 1000000u;
	client_io_gate gate;
	engine_bcast_cancel_gate(cancel, &gate);
	int nrv = client_stream_io_gated(st, send, buf, n, deadline, NULL, NULL,
	                                 cancel != NULL ? &gate : NULL);
	if (nrv == 0)
		return WT_OK;
	if (nrv == NNG_ECANCELED)
		return wt_seterr(err, WT_ECANCELED, "broadcast: %s: canceled", what);
	if (nrv == NNG_ENOMEM)
		return wt_seterr(err, WT_ENOMEM, "broadcast: %s: out of memory", what);
	int rv = engine_bcast_nng_err(nrv);
	if (rv == WT_ETIMEDOUT)
		return wt_seterr(err, rv, "broadcast: %s: not done within %u ms (io_timeout_ms)",
		                 what, timeout_ms);
	return wt_seterr(err, rv, "broadcast: %s: %s (%s)", what,
	                 rv == WT_ECLOSED ? "the other side went away" : "stream error",
	                 nng_strerror(nrv));
}

int engine_bcast_hello_send(nng_stream *st, struct wt_bcast_cancel *cancel,
                            const engine_bcast_hello *h, uint32_t timeout_ms, wt_errbuf *err)
{
	size_t lg = strlen(h->group), lr = strlen(h->revision), ll = strlen(h->layout);
	if (lg > ENGINE_BCAST_MAX_GROUP || lr > ENGINE_BCAST_MAX_TEXT || ll > ENGINE_BCAST_MAX_TEXT)
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast hello: group (%zu bytes, max %u), revision or layout "
		                 "text (%zu, %zu bytes, max %u) too long",
		                 lg, ENGINE_BCAST_MAX_GROUP, lr, ll, ENGINE_BCAST_MAX_TEXT);
	uint8_t hdr[ENGINE_BCAST_HELLO] = {0};
	put32(hdr, ENGINE_BCAST_MAGIC);
	put32(hdr + 4, ENGINE_BCAST_VERSION);
	put32(hdr + 8, h->tp_rank);
	put32(hdr + 12, h->ep_rank);
	hdr[16] = (uint8_t)lg, hdr[17] = (uint8_t)(lg >> 8);
	hdr[18] = (uint8_t)lr, hdr[19] = (uint8_t)(lr >> 8);
	hdr[20] = (uint8_t)ll, hdr[21] = (uint8_t)(ll >> 8);
	int rv = engine_bcast_io(st, cancel, 1, hdr, sizeof(hdr), timeout_ms, "sending hello", err);
	const char *s[3] = {h->group, h->revision, h->layout};
	size_t l[3] = {lg, lr, ll};
	for (int i = 0; rv == WT_OK && i < 3; i++)
		if (l[i] > 0)
			rv = engine_bcast_io(st, cancel, 1, (void *)s[i], l[i], timeout_ms,
			                     "sending hello", err);
	return rv;
}

int engine_bcast_hello_parse(const uint8_t hdr[ENGINE_BCAST_HELLO], engine_bcast_hello *h,
                             size_t len[3], wt_errbuf *err)
{
	if (get32(hdr) != ENGINE_BCAST_MAGIC)
		return wt_seterr(err, WT_EPROTO,
		                 "broadcast hello: magic %08x is not a weightd broadcast replica's",
		                 get32(hdr));
	if (get32(hdr + 4) != ENGINE_BCAST_VERSION)
		return wt_seterr(err, WT_EVERSION,
		                 "broadcast hello: wire version %u, this root speaks %u; run the "
		                 "same libweights release on root and replicas",
		                 get32(hdr + 4), ENGINE_BCAST_VERSION);
	for (int i = 0; i < 3; i++)
		len[i] = hdr[16 + 2 * i] | (size_t)hdr[17 + 2 * i] << 8;
	if (len[0] > ENGINE_BCAST_MAX_GROUP || len[1] > ENGINE_BCAST_MAX_TEXT ||
	    len[2] > ENGINE_BCAST_MAX_TEXT)
		return wt_seterr(err, WT_EPROTO,
		                 "broadcast hello: string lengths %zu/%zu/%zu over the limits "
		                 "%u/%u/%u",
		                 len[0], len[1], len[2], ENGINE_BCAST_MAX_GROUP,
		                 ENGINE_BCAST_MAX_TEXT, ENGINE_BCAST_MAX_TEXT);
	h->tp_rank = get32(hdr + 8);
	h->ep_rank = get32(hdr + 12);
	h->group[0] = h->revision[0] = h->layout[0] = '\0';
	return WT_OK;
}

int engine_bcast_hello_recv(nng_stream *st, engine_bcast_hello *h, uint32_t timeout_ms,
                            wt_errbuf *err)
{
	uint8_t hdr[ENGINE_BCAST_HELLO];
	size_t l[3];
	int rv = engine_bcast_io(st, NULL, 0, hdr, sizeof(hdr), timeout_ms, "reading hello", err);
	if (rv == WT_OK)
		rv = engine_bcast_hello_parse(hdr, h, l, err);
	char *s[3] = {h->group, h->revision, h->layout};
	for (int i = 0; rv == WT_OK && i < 3; i++) {
		if (l[i] > 0)
			rv = engine_bcast_io(st, NULL, 0, s[i], l[i], timeout_ms, "reading hello",
			                     err);
		s[i][l[i]] = '\0';
	}
	return rv;
}

int engine_bcast_reply_send(nng_stream *st, struct wt_bcast_cancel *cancel, int code,
                            const char *msg, uint32_t timeout_ms, wt_errbuf *err)
{
	size_t len = msg != NULL ? strnlen(msg, WT_ERRMSG_MAX - 1) : 0;
	uint8_t hdr[12];
	put32(hdr, ENGINE_BCAST_MAGIC);
	put32(hdr + 4, (uint32_t)code);
	put32(hdr + 8, (uint32_t)len);
	int rv =
	    engine_bcast_io(st, cancel, 1, hdr, sizeof(hdr), timeout_ms, "sending a reply", err);
	if (rv == WT_OK && len > 0)
		rv = engine_bcast_io(st, cancel, 1, (void *)msg, len, timeout_ms, "sending a reply",
		                     err);
	return rv;
}

int engine_bcast_reply_recv(nng_stream *st, struct wt_bcast_cancel *cancel, int *code, char *msg,
                            size_t cap, uint32_t timeout_ms, wt_errbuf *err)
{
	uint8_t hdr[12];
	char buf[WT_ERRMSG_MAX];
	int rv =
	    engine_bcast_io(st, cancel, 0, hdr, sizeof(hdr), timeout_ms, "reading a reply", err);
	if (rv != WT_OK)
		return rv;
	uint32_t c = get32(hdr + 4), len = get32(hdr + 8);
	if (get32(hdr) != ENGINE_BCAST_MAGIC || c >= WT_ERR_COUNT_ || len >= WT_ERRMSG_MAX)
		return wt_seterr(err, WT_EPROTO,
		                 "broadcast reply: magic %08x, code %u, message of %u bytes: not a "
		                 "weightd broadcast peer's (code < %d, message < %d bytes)",
		                 get32(hdr), c, len, WT_ERR_COUNT_, WT_ERRMSG_MAX);
	if (len > 0 && (rv = engine_bcast_io(st, cancel, 0, buf, len, timeout_ms, "reading a reply",
	                                     err)) != WT_OK)
		return rv;
	buf[len] = '\0';
	for (uint32_t i = 0; i < len; i++) /* text from the network: printable only */
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	snprintf(msg, cap, "%s", buf);
	*code = (int)c;
	return WT_OK;
}

void engine_bcast_frame_encode(uint8_t hdr[ENGINE_BCAST_FRAME], const engine_bcast_frame *f)
{
	put32(hdr, f->type);
	put32(hdr + 4, f->tensor);
	put64(hdr + 8, f->off);
	put64(hdr + 16, f->len);
}

int engine_bcast_frame_send(nng_stream *st, const engine_bcast_frame *f, uint32_t timeout_ms,
                            wt_errbuf *err)
{
	uint8_t hdr[ENGINE_BCAST_FRAME];
	engine_bcast_frame_encode(hdr, f);
	return engine_bcast_io(st, NULL, 1, hdr, sizeof(hdr), timeout_ms, "sending a frame", err);
}

void engine_bcast_frame_decode(const uint8_t hdr[ENGINE_BCAST_FRAME], engine_bcast_frame *f)
{
	f->type = get32(hdr);
	f->tensor = get32(hdr + 4);
	f->off = get64(hdr + 8);
	f->len = get64(hdr + 16);
}

int engine_bcast_dial(const char *url, uint32_t timeout_ms, struct wt_bcast_cancel *cancel,
                      nng_stream **out, wt_errbuf *err)
{
	nng_stream_dialer *d = NULL;
	nng_aio *aio = NULL;
	int nrv = nng_stream_dialer_alloc(&d, url);
	if (nrv != 0) {
		nng_stream_dialer_free(d);
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast: root URL '%s': %s; use tcp://HOST:PORT "
		                 "or ipc://PATH",
		                 url, nng_strerror(nrv));
	}
	if ((nrv = nng_aio_alloc(&aio, NULL, NULL)) != 0) {
		nng_stream_dialer_free(d);
		return wt_seterr(err, WT_ENOMEM, "broadcast: out of memory");
	}
	uint64_t deadline = common_now_ns() + (uint64_t)timeout_ms * 1000000u;
	nrv = NNG_ETIMEDOUT;
	bool go = engine_bcast_cancel_watch(cancel, d, NULL);
	while (go) {
		uint64_t now = common_now_ns();
		if (now >= deadline || engine_bcast_cancel_fired(cancel))
			break;
		nng_aio_set_timeout(aio, (nng_duration)((deadline - now + 999999) / 1000000));
		nng_stream_dialer_dial(d, aio);
		nng_aio_wait(aio);
		if ((nrv = nng_aio_result(aio)) == 0)
			break;
		struct timespec ts = {0, 20 * 1000000}; /* the root may not listen yet */
		nanosleep(&ts, NULL);
	}
	nng_stream *st = nrv == 0 ? nng_aio_get_output(aio, 0) : NULL;
	engine_bcast_cancel_watch(cancel, NULL, NULL); /* before the dialer goes */
	nng_aio_free(aio);
	nng_stream_dialer_free(d);
	if (st == NULL && engine_bcast_cancel_fired(cancel))
		return wt_seterr(err, WT_ECANCELED,
		                 "broadcast: dialing the root %s: canceled (wt_bcast_cancel_fire)",
		                 url);
	if (st == NULL)
		return wt_seterr(
		    err, WT_ETIMEDOUT,
		    "broadcast: root %s not reached within %u ms (last: %s); start the "
		    "root first or raise join_timeout_ms",
		    url, timeout_ms, nrv != 0 ? nng_strerror(nrv) : "timed out");
	*out = st;
	return WT_OK;
}

void engine_bcast_close(nng_stream *st)
{
	if (st == NULL)
		return;
	nng_stream_close(st);
	nng_stream_free(st);
}
