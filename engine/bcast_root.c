/*
 * bcast_root.c — the root of a broadcast (weights/bcast.h): a sink that
 * forwards every callback to the engine's own sink and sends what passed to
 * every replica that joined, over one nng stream each (wire: bcast_int.h).
 *
 * What the root sends goes into one queue (max_lag_bytes) that every replica
 * takes from at its own speed (bcast_send.c): the root and the fast replicas
 * are not paced by a slower one until it is a whole queue behind, and then
 * for lag_timeout_ms in all before it is dropped (stream closed: it aborts);
 * so is one that takes no byte for io_timeout_ms. The root's fetch goes on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "engine/bcast_int.h"
#include "weights/bcast.h"

#define BCAST_MAX_MEMBERS 256u
#define BCAST_MAX_LAG     (64ull << 20) /* wt_bcast_opts.max_lag_bytes default */
#define BCAST_MIN_LAG     (64ull << 10)
#define BCAST_LAG_MS      5000u /* wt_bcast_opts.lag_timeout_ms default */

/* Used by one thread at a time: the one running the fetch into its sink
 * (engine.h), then the caller of wt_bcast_root_result / destroy. */
struct wt_bcast_root {
	wt_sink base; /* first member: the fetcher calls through it */
	wt_sink *inner;
	char *url; /* as bound: the port filled in; owned */
	char group[ENGINE_BCAST_MAX_GROUP + 1];
	uint32_t n_members, join_timeout_ms, io_timeout_ms;
	nng_stream_listener *l;
	nng_stream **peers;  /* n_members - 1 slots; NULL = none or dropped */
	engine_bcast_tx *tx; /* the sends to the n_members - 1 replicas */
	uint32_t n_peers;    /* joined in this broadcast */
	uint64_t max_lag;
	uint32_t lag_ms;
	/* result of the last broadcast */
	uint32_t n_done;
	wt_errbuf first;   /* first replica failure; code WT_OK if none */
	int begun;         /* it began: replicas were admitted */
	uint32_t n_joined; /* replicas admitted to it */
	wt_errbuf *fails;  /* [n_members - 1]: each one's failure; code WT_OK if none */
};

static wt_bcast_root *root_of(wt_sink *s)
{
	return (wt_bcast_root *)s;
}

/* Drop replica k (closed: it sees the stream end and aborts); keep the first
 * failure for wt_bcast_root_result. */
static void drop(wt_bcast_root *r, uint32_t k, const wt_errbuf *why)
{
	/* A replica that failed sends its error before it closes: a send that
	 * found its stream gone may still read why (up to 200 ms), only for the
	 * first failure of a broadcast: however many replicas go away, that
	 * wait is paid once (test_bcast_slow: test_bcast_gone_replicas). */
	char msg[WT_ERRMSG_MAX];
	int code = WT_OK;
	uint32_t ms = r->io_timeout_ms < 200 ? r->io_timeout_ms : 200;
	wt_errbuf *e = &r->fails[k];
	if (r->first.code == WT_OK && why->code == WT_ECLOSED &&
	    engine_bcast_reply_recv(r->peers[k], NULL, &code, msg, sizeof(msg), ms, NULL) ==
	        WT_OK &&
	    code != WT_OK)
		wt_seterr(e, code, "replica %u failed: %s", k, msg);
	else
		wt_seterr(e, why->code, "replica %u dropped: %s", k, why->msg);
	if (r->first.code == WT_OK)
		r->first = *e;
	engine_bcast_tx_forget(r->tx, k);
	engine_bcast_close(r->peers[k]);
	r->peers[k] = NULL;
}

/* The broadcast ends without its end (why): each replica still in it failed
 * so (wt_bcast_root_replica). */
static void cancel_live(wt_bcast_root *r, const char *why)
{
	for (uint32_t k = 0; k < r->n_peers; k++)
		if (r->peers[k] != NULL && r->fails[k].code == WT_OK)
			wt_seterr(&r->fails[k], WT_ECANCELED, "replica %u: canceled: %s", k, why);
}

/* Every replica closed; the sends forget them (none is in flight: every
 * broadcast ends with engine_bcast_tx_drain). */
static void close_all(wt_bcast_root *r)
{
	if (r->tx != NULL) /* NULL: a half-built root */
		engine_bcast_tx_start(r->tx, NULL, 0, r->io_timeout_ms);
	for (uint32_t k = 0; k < r->n_peers; k++) {
		engine_bcast_close(r->peers[k]);
		r->peers[k] = NULL;
	}
	r->n_peers = 0;
}

/* Drop every replica whose sends failed or fell too far behind. */
static void drop_failed(wt_bcast_root *r)
{
	for (uint32_t k = 0; k < r->n_peers; k++) {
		wt_errbuf e;
		if (r->peers[k] != NULL && engine_bcast_tx_result(r->tx, k, &e) != WT_OK)
			drop(r, k, &e);
	}
}

/* Queue frame f (and, for DATA, len bytes at data) for every live replica;
 * it waits only for the fastest (engine_bcast_tx_send). When the queue
 * cannot be had (out of memory), every replica is dropped: the root's own
 * fetch goes on. */
static void send_all(wt_bcast_root *r, uint32_t type, size_t tensor, uint64_t off, const void *data,
                     uint64_t len)
{
	engine_bcast_frame f = {.type = type, .tensor = (uint32_t)tensor, .off = off, .len = len};
	uint8_t hdr[ENGINE_BCAST_FRAME];
	engine_bcast_frame_encode(hdr, &f);
	wt_errbuf e;
	if (engine_bcast_tx_send(r->tx, hdr, data, len, &e) != WT_OK) {
		engine_bcast_tx_drain(r->tx);
		for (uint32_t k = 0; k < r->n_peers; k++)
			if (r->peers[k] != NULL)
				drop(r, k, &e);
	}
	drop_failed(r);
}

/* Refuse every joined replica with code/msg and close them. */
static void refuse_all(wt_bcast_root *r, int code, const char *msg)
{
	for (uint32_t k = 0; k < r->n_peers; k++)
		if (r->peers[k] != NULL)
			engine_bcast_reply_send(r->peers[k], NULL, code, msg, r->io_timeout_ms,
			                        NULL);
	close_all(r);
}

/* WT_OK if hello h names m's group, revision, layout and rank; else the code
 * and message to refuse it with. */
static int hello_check(const wt_bcast_root *r, const engine_bcast_hello *h, const wt_manifest *m,
                       wt_errbuf *err)
{
	if (strcmp(h->group, r->group) != 0)
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast root: replica of group '%s', this root serves group "
		                 "'%s'; dial the root of your own group",
		                 h->group, r->group);
	if (strcmp(h->revision, wt_manifest_revision(m)) != 0)
		return wt_seterr(
		    err, WT_EVERSION,
		    "broadcast root: replica asks revision %s, this root broadcasts %s; "
		    "get the manifest again (both ends must fetch one revision)",
		    h->revision, wt_manifest_revision(m));
	if (strcmp(h->layout, wt_manifest_layout_text(m)) != 0 ||
	    h->tp_rank != wt_manifest_tp_rank(m) || h->ep_rank != wt_manifest_ep_rank(m))
		return wt_seterr(err, WT_ELAYOUT,
		                 "broadcast root: replica holds layout '%s' tp_rank %u ep_rank %u, "
		                 "this root broadcasts layout '%s' tp_rank %u ep_rank %u; dial the "
		                 "root of your own (tp_rank, ep_rank)",
		                 h->layout, h->tp_rank, h->ep_rank, wt_manifest_layout_text(m),
		                 wt_manifest_tp_rank(m), wt_manifest_ep_rank(m));
	return WT_OK;
}

typedef struct admit_ctx {
	const wt_bcast_root *r;
	const wt_manifest *m;
} admit_ctx;

static int admit(void *ctx, const engine_bcast_hello *h, wt_errbuf *err)
{
	admit_ctx *a = ctx;
	return hello_check(a->r, h, a->m, err);
}

/* Wait for n_members - 1 replicas that say hello for m (engine_bcast_join:
 * hellos read concurrently, so a silent connection holds up no replica);
 * WT_ETIMEDOUT naming how many joined (they are refused) when they did not in
 * time. */
static int join(wt_bcast_root *r, const wt_manifest *m, wt_errbuf *err)
{
	admit_ctx a = {.r = r, .m = m};
	engine_bcast_join_opts o = {
	    .n_want = r->n_members - 1,
	    .deadline_ns = common_now_ns() + (uint64_t)r->join_timeout_ms * 1000000u,
	    .hello_ms = r->io_timeout_ms,
	    .admit = admit,
	    .ctx = &a,
	};
	int rv = engine_bcast_join(r->l, &o, r->peers, &r->n_peers, err);
	if (rv != WT_ETIMEDOUT)
		return rv;
	wt_errbuf e;
	rv = wt_seterr(&e, WT_ETIMEDOUT,
	               "broadcast root %s: %u of %u replicas joined within %u ms "
	               "(join_timeout_ms) for revision %.12s tp_rank %u ep_rank %u; start "
	               "the missing replicas, or lower n_members",
	               r->url, r->n_peers, r->n_members - 1, r->join_timeout_ms,
	               wt_manifest_revision(m), wt_manifest_tp_rank(m), wt_manifest_ep_rank(m));
	refuse_all(r, WT_ETIMEDOUT, e.msg);
	return wt_seterr(err, rv, "%s", e.msg);
}

static int b_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	wt_bcast_root *r = root_of(s);
	close_all(r);
	r->n_done = 0;
	wt_errclear(&r->first);
	r->begun = 0;
	r->n_joined = 0;
	for (uint32_t k = 0; k + 1 < r->n_members; k++)
		wt_errclear(&r->fails[k]);
	if (wt_manifest_n_tensors(m) > UINT32_MAX)
		return wt_seterr(err, WT_ETOOBIG, "broadcast root: %zu tensors (max %u)",
		                 wt_manifest_n_tensors(m), UINT32_MAX);
	int rv = join(r, m, err);
	if (rv == WT_OK && (rv = r->inner->ops->begin(r->inner, m, err)) != WT_OK) {
		char msg[WT_ERRMSG_MAX + 64]; /* sent cut to WT_ERRMSG_MAX - 1 */
		snprintf(msg, sizeof(msg), "broadcast root: its own sink refused the fetch: %s",
		         err != NULL ? err->msg : wt_strerror(rv));
		refuse_all(r, rv, msg);
	}
	if (rv != WT_OK) {
		wt_seterr(&r->first, rv, "broadcast did not begin: %s",
		          err != NULL ? err->msg : wt_strerror(rv));
		return rv;
	}
	r->begun = 1;
	r->n_joined = r->n_peers;
	for (uint32_t k = 0; k < r->n_peers; k++) { /* admitted */
		wt_errbuf e;
		if (engine_bcast_reply_send(r->peers[k], NULL, WT_OK, NULL, r->io_timeout_ms, &e) !=
		    WT_OK)
			drop(r, k, &e);
	}
	engine_bcast_tx_start(r->tx, r->peers, r->n_peers, r->io_timeout_ms);
	return WT_OK;
}

static int b_tensor_begin(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_bcast_root *r = root_of(s);
	int rv = r->inner->ops->tensor_begin(r->inner, ti, err);
	if (rv == WT_OK)
		send_all(r, ENGINE_BCAST_F_TBEGIN, ti, 0, NULL, 0);
	return rv;
}

static int b_write(wt_sink *s, size_t ti, uint64_t off, const void *data, size_t len,
                   wt_errbuf *err)
{
	wt_bcast_root *r = root_of(s);
	int rv = r->inner->ops->write(r->inner, ti, off, data, len, err);
	if (rv == WT_OK && len > 0)
		send_all(r, ENGINE_BCAST_F_DATA, ti, off, data, len);
	return rv;
}

static void *b_recv_buf(wt_sink *s, size_t ti, uint64_t off, size_t len)
{
	wt_bcast_root *r = root_of(s);
	const wt_sink_ops *o = r->inner->ops;
	if (o->struct_size < offsetof(wt_sink_ops, recv_buf) + sizeof(o->recv_buf) ||
	    o->recv_buf == NULL)
		return NULL;
	return o->recv_buf(r->inner, ti, off, len);
}

static int b_tensor_end(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_bcast_root *r = root_of(s);
	int rv = r->inner->ops->tensor_end(r->inner, ti, err);
	if (rv == WT_OK)
		send_all(r, ENGINE_BCAST_F_TEND, ti, 0, NULL, 0);
	return rv;
}

/* After END: every replica takes what is queued (or fails), then each
 * replica's ack (its sink's end() result), all within one io_timeout_ms
 * (they come in parallel; one that never acks costs it once). */
static void collect_acks(wt_bcast_root *r)
{
	engine_bcast_tx_drain(r->tx);
	drop_failed(r);
	uint64_t deadline = common_now_ns() + (uint64_t)r->io_timeout_ms * 1000000u;
	for (uint32_t k = 0; k < r->n_peers; k++) {
		wt_errbuf e;
		char msg[WT_ERRMSG_MAX];
		int code = WT_OK;
		if (r->peers[k] == NULL)
			continue;
		uint64_t now = common_now_ns();
		uint32_t ms = now < deadline ? (uint32_t)((deadline - now + 999999) / 1000000) : 1;
		int rv =
		    engine_bcast_reply_recv(r->peers[k], NULL, &code, msg, sizeof(msg), ms, &e);
		if (rv == WT_OK && code != WT_OK)
			wt_seterr(&e, code, "replica failed: %s", msg);
		if (rv == WT_OK && code == WT_OK)
			r->n_done++;
		else
			drop(r, k, &e);
	}
}

static int b_end(wt_sink *s, wt_errbuf *err)
{
	wt_bcast_root *r = root_of(s);
	int rv = r->inner->ops->end(r->inner, err);
	if (rv == WT_OK) {
		send_all(r, ENGINE_BCAST_F_END, 0, 0, NULL, 0);
		collect_acks(r);
	} else {
		send_all(r, ENGINE_BCAST_F_ABORT, 0, 0, NULL, 0);
		engine_bcast_tx_drain(r->tx);
		if (r->first.code == WT_OK)
			wt_seterr(&r->first, WT_ECANCELED, "the root's own sink failed at end");
		cancel_live(r, "the root's own sink failed at end");
	}
	close_all(r);
	return rv;
}

static void b_abort(wt_sink *s)
{
	wt_bcast_root *r = root_of(s);
	r->inner->ops->abort(r->inner);
	send_all(r, ENGINE_BCAST_F_ABORT, 0, 0, NULL, 0);
	engine_bcast_tx_drain(r->tx);
	if (r->first.code == WT_OK)
		wt_seterr(&r->first, WT_ECANCELED, "the root's fetch was aborted");
	cancel_live(r, "the root's fetch was aborted");
	close_all(r);
}

static const wt_sink_ops bcast_ops = {
    .struct_size = sizeof(wt_sink_ops),
    .begin = b_begin,
    .tensor_begin = b_tensor_begin,
    .write = b_write,
    .tensor_end = b_tensor_end,
    .end = b_end,
    .abort = b_abort,
    .recv_buf = b_recv_buf,
};

/* Whether the caller's wt_bcast_opts is recent enough to have max_lag_bytes
 * and lag_timeout_ms (1.6). */
static int opts_has_max_lag(const wt_bcast_opts *o)
{
	return o->struct_size >=
	       offsetof(wt_bcast_opts, lag_timeout_ms) + sizeof(o->lag_timeout_ms);
}

int engine_bcast_opts_check(const wt_bcast_opts *o, wt_sink *inner, wt_errbuf *err)
{
	if (o == NULL || o->struct_size < offsetof(wt_bcast_opts, io_timeout_ms) + sizeof(uint32_t))
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast: options missing or struct_size too small; call "
		                 "wt_bcast_opts_init first");
	if (o->url == NULL || o->url[0] == '\0')
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast: url not set; give tcp://HOST:PORT or ipc://PATH");
	if (o->group != NULL && strlen(o->group) > ENGINE_BCAST_MAX_GROUP)
		return wt_seterr(err, WT_EINVAL, "broadcast: group of %zu bytes; the limit is %u",
		                 strlen(o->group), ENGINE_BCAST_MAX_GROUP);
	if (inner != NULL && (o->n_members < 1 || o->n_members > BCAST_MAX_MEMBERS))
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast root: n_members %u; give the group's size, root "
		                 "included (1..%u)",
		                 o->n_members, BCAST_MAX_MEMBERS);
	if (inner != NULL && opts_has_max_lag(o) && o->max_lag_bytes != 0 &&
	    o->max_lag_bytes < BCAST_MIN_LAG)
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast root: max_lag_bytes %llu; give at least %llu (0 = "
		                 "the default, %llu)",
		                 (unsigned long long)o->max_lag_bytes,
		                 (unsigned long long)BCAST_MIN_LAG,
		                 (unsigned long long)BCAST_MAX_LAG);
	if (inner != NULL &&
	    (inner->ops == NULL || inner->ops->begin == NULL || inner->ops->tensor_begin == NULL ||
	     inner->ops->write == NULL || inner->ops->tensor_end == NULL ||
	     inner->ops->end == NULL || inner->ops->abort == NULL))
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast root: inner sink lacks a required callback (begin "
		                 "through abort)");
	return WT_OK;
}

/* Listen on url; r->url gets the bound URL (a tcp port 0 filled in). */
static int root_listen(wt_bcast_root *r, const char *url, wt_errbuf *err)
{
	int nrv = nng_stream_listener_alloc(&r->l, url);
	if (nrv == 0)
		nrv = nng_stream_listener_listen(r->l);
	if (nrv != 0)
		return wt_seterr(
		    err, nrv == NNG_EADDRINVAL || nrv == NNG_ENOTSUP ? WT_EINVAL : WT_EUNAVAIL,
		    "broadcast root: cannot listen on %s: %s; give a free "
		    "tcp://HOST:PORT (port 0 picks one) or ipc://PATH",
		    url, nng_strerror(nrv));
	int port = 0;
	size_t cap = strlen(url) + 16;
	if ((r->url = malloc(cap)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "broadcast root: out of memory");
	const char *colon = strrchr(url, ':');
	if (strncmp(url, "tcp", 3) == 0 && colon != NULL && strcmp(colon, ":0") == 0 &&
	    nng_stream_listener_get_int(r->l, NNG_OPT_TCP_BOUND_PORT, &port) == 0)
		snprintf(r->url, cap, "%.*s:%d", (int)(colon - url), url, port);
	else
		snprintf(r->url, cap, "%s", url);
	return WT_OK;
}

int wt_bcast_root_create(wt_bcast_root **out, const wt_bcast_opts *o, wt_sink *inner,
                         wt_errbuf *err)
{
	if (inner == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "broadcast root: no inner sink; give the "
		                 "engine's own sink");
	int rv = engine_bcast_opts_check(o, inner, err);
	if (rv != WT_OK)
		return rv;
	wt_bcast_root *r = calloc(1, sizeof(*r));
	if (r == NULL || (r->peers = calloc(o->n_members, sizeof(*r->peers))) == NULL ||
	    (r->fails = calloc(o->n_members, sizeof(*r->fails))) == NULL) {
		free(r);
		return wt_seterr(err, WT_ENOMEM, "broadcast root: out of memory");
	}
	r->io_timeout_ms = o->io_timeout_ms ? o->io_timeout_ms : 30000;
	r->max_lag = opts_has_max_lag(o) && o->max_lag_bytes ? o->max_lag_bytes : BCAST_MAX_LAG;
	r->lag_ms = opts_has_max_lag(o) && o->lag_timeout_ms ? o->lag_timeout_ms : BCAST_LAG_MS;
	if (r->lag_ms > r->io_timeout_ms) /* the fastest waits for a frame meanwhile */
		r->lag_ms = r->io_timeout_ms;
	if ((rv = engine_bcast_tx_create(&r->tx, o->n_members - 1, r->max_lag, r->lag_ms, err)) !=
	    WT_OK) {
		wt_bcast_root_destroy(r);
		return rv;
	}
	r->base.ops = &bcast_ops;
	r->inner = inner;
	r->n_members = o->n_members;
	r->join_timeout_ms = o->join_timeout_ms ? o->join_timeout_ms : 60000;
	snprintf(r->group, sizeof(r->group), "%s", o->group ? o->group : "");
	if ((rv = root_listen(r, o->url, err)) != WT_OK) {
		wt_bcast_root_destroy(r);
		return rv;
	}
	*out = r;
	return WT_OK;
}

wt_sink *wt_bcast_root_sink(wt_bcast_root *r)
{
	return &r->base;
}

const char *wt_bcast_root_url(const wt_bcast_root *r)
{
	return r->url;
}

int wt_bcast_root_result(const wt_bcast_root *r, uint32_t *n_done, wt_errbuf *err)
{
	*n_done = r->n_done;
	if (r->first.code != WT_OK)
		return wt_seterr(err, r->first.code, "%s", r->first.msg);
	if (r->n_done + 1 < r->n_members)
		return wt_seterr(err, WT_EINVAL, "broadcast: %u of %u replicas received it",
		                 r->n_done, r->n_members - 1);
	return WT_OK;
}

int wt_bcast_root_replica(const wt_bcast_root *r, uint32_t k, wt_errbuf *err)
{
	if (r == NULL || (uint64_t)k + 1 >= r->n_members) /* k + 1 in 32 bits wraps */
		return wt_seterr(err, WT_EINVAL, "broadcast: no replica %u (replicas 0..%u)", k,
		                 r != NULL && r->n_members > 1 ? r->n_members - 2 : 0);
	if (!r->begun)
		return wt_seterr(err, r->first.code != WT_OK ? r->first.code : WT_ENOTFOUND, "%s",
		                 r->first.code != WT_OK ? r->first.msg
		                                        : "broadcast: none has run yet");
	if (k >= r->n_joined)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "broadcast: replica %u did not join it (%u of %u joined)", k,
		                 r->n_joined, r->n_members - 1);
	if (r->fails[k].code != WT_OK)
		return wt_seterr(err, r->fails[k].code, "%s", r->fails[k].msg);
	return WT_OK;
}

void wt_bcast_root_destroy(wt_bcast_root *r)
{
	if (r == NULL)
		return;
	if (r->peers != NULL)
		close_all(r);
	if (r->l != NULL) {
		nng_stream_listener_close(r->l);
		nng_stream_listener_free(r->l);
	}
	engine_bcast_tx_destroy(r->tx);
	free(r->fails);
	free(r->peers);
	free(r->url);
	free(r);
}

void wt_bcast_opts_init(wt_bcast_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->n_members = 1;
	o->join_timeout_ms = 60000;
	o->io_timeout_ms = 30000;
	o->max_lag_bytes = BCAST_MAX_LAG;
	o->lag_timeout_ms = BCAST_LAG_MS;
}
