/*
 * host_sink.c — engine sink into host memory: one malloc'd buffer per tensor,
 * looked up by name, all allocated at begin(). Results of a fetch become
 * visible only at end(), when every tensor was verified; until then (and
 * after an abort) the sink holds the previous successful fetch, or nothing.
 * So the fetcher may receive chunks straight into the new buffers (recv_buf),
 * unverified bytes included: nobody sees them before end(). The update sink
 * (wt_host_sink_update_sink) instead writes the tensors it is given into the
 * buffers of the last successful fetch, in place (same pointers). A tensor
 * an update began and that update then failed is stale (partly or wholly the
 * new revision's bytes while the others are the old one's) until an update
 * rewrites it: an update that does not is refused, else it would report
 * success over a mix of revisions.
 *
 * Both check the callback order (engine.h) as the CUDA sink does: a write
 * out of order or past its tensor's end, a tensor ended short, or end() before
 * every tensor was complete is WT_EINVAL, and a full fetch then publishes
 * nothing (no buffer holding bytes that were never written).
 */
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "common/common.h"
#include "weights/engine.h"

typedef struct host_tensor {
	char *name;    /* owned */
	uint8_t *data; /* owned; NULL for 0 bytes */
	uint64_t nbytes;
	uint64_t written;
	int stale; /* begun by an update that then failed: bytes of no one revision */
} host_tensor;

typedef struct host_set {
	host_tensor *t; /* in manifest (name) order */
	size_t n;
} host_set;

struct wt_host_sink {
	wt_sink base;  /* first member: the fetcher calls through it */
	host_set done; /* last successful fetch */
	host_set cur;  /* fetch in progress */
	const wt_manifest *m;
	/* in-place update (wt_host_sink_update_sink) */
	wt_sink upd;
	size_t *upd_map; /* update tensor -> index in done */
	size_t upd_n;
	size_t upd_cur;  /* update tensor open (tensor_begin..tensor_end); SIZE_MAX if none */
	size_t upd_next; /* update tensor expected at the next tensor_begin */
	uint64_t upd_written;
};

static void set_free(host_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->t[i].name);
		free(s->t[i].data);
	}
	free(s->t);
	s->t = NULL;
	s->n = 0;
}

static wt_host_sink *host_of(wt_sink *s)
{
	return (wt_host_sink *)s;
}

/* Tensor t's buffer, for the manifest's tensor info. */
static int tensor_alloc(host_tensor *t, const wt_tensor_info *info, wt_errbuf *err)
{
	if (info->nbytes > SIZE_MAX)
		return wt_seterr(err, WT_ETOOBIG, "host sink: tensor '%s' of %llu bytes",
		                 info->name, (unsigned long long)info->nbytes);
	t->name = strdup(info->name);
	t->data = info->nbytes ? malloc((size_t)info->nbytes) : NULL;
	if (t->name == NULL || (info->nbytes && t->data == NULL))
		return wt_seterr(err, WT_ENOMEM,
		                 "host sink: tensor '%s': out of memory for %llu bytes", info->name,
		                 (unsigned long long)info->nbytes);
	t->nbytes = info->nbytes;
	return WT_OK;
}

/* Every tensor's buffer is allocated here, so that the fetcher may receive
 * any chunk straight into it (h_recv_buf) before its tensor begins. */
static int h_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	wt_host_sink *h = host_of(s);
	set_free(&h->cur);
	size_t n = wt_manifest_n_tensors(m);
	h->cur.t = calloc(n ? n : 1, sizeof(host_tensor));
	if (h->cur.t == NULL)
		return wt_seterr(err, WT_ENOMEM, "host sink: out of memory for %zu tensors", n);
	h->cur.n = n;
	for (size_t i = 0; i < n; i++) {
		wt_tensor_info info;
		int rv = wt_manifest_tensor(m, i, &info);
		if (rv == WT_OK)
			rv = tensor_alloc(&h->cur.t[i], &info, err);
		if (rv != WT_OK) {
			set_free(&h->cur);
			return rv;
		}
	}
	h->m = m;
	return WT_OK;
}

static int h_tensor_begin(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_host_sink *h = host_of(s);
	if (ti >= h->cur.n)
		return wt_seterr(err, WT_EINVAL, "host sink: tensor %zu out of range", ti);
	h->cur.t[ti].written = 0;
	return WT_OK;
}

/* The chunk's place in its tensor's buffer: received there, it needs no copy. */
static void *h_recv_buf(wt_sink *s, size_t ti, uint64_t off, size_t len)
{
	wt_host_sink *h = host_of(s);
	host_tensor *t = ti < h->cur.n ? &h->cur.t[ti] : NULL;
	if (t == NULL || t->data == NULL || off > t->nbytes || len > t->nbytes - off)
		return NULL;
	return t->data + off;
}

static int h_write(wt_sink *s, size_t ti, uint64_t off, const void *data, size_t len,
                   wt_errbuf *err)
{
	wt_host_sink *h = host_of(s);
	host_tensor *t = ti < h->cur.n ? &h->cur.t[ti] : NULL;
	if (t == NULL || t->name == NULL || off != t->written || len > t->nbytes - off)
		return wt_seterr(
		    err, WT_EINVAL,
		    "host sink: tensor %zu: write of %zu bytes at %llu out of order or "
		    "past its end",
		    ti, len, (unsigned long long)off);
	if (data != t->data + off) /* else received in place (h_recv_buf) */
		memcpy(t->data + off, data, len);
	t->written += len;
	return WT_OK;
}

static int h_tensor_end(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_host_sink *h = host_of(s);
	host_tensor *t = ti < h->cur.n ? &h->cur.t[ti] : NULL;
	if (t == NULL || t->written != t->nbytes)
		return wt_seterr(err, WT_EINVAL, "host sink: tensor %zu ended incomplete", ti);
	return WT_OK;
}

static int h_end(wt_sink *s, wt_errbuf *err)
{
	wt_host_sink *h = host_of(s);
	for (size_t i = 0; i < h->cur.n; i++) {
		const host_tensor *t = &h->cur.t[i];
		if (t->written != t->nbytes) {
			wt_seterr(err, WT_EINVAL,
			          "host sink: tensor '%s' incomplete at end (%llu of %llu bytes); "
			          "nothing published",
			          t->name, (unsigned long long)t->written,
			          (unsigned long long)t->nbytes);
			set_free(&h->cur); /* end() failing means no abort() follows */
			h->m = NULL;
			return WT_EINVAL;
		}
	}
	set_free(&h->done);
	h->done = h->cur;
	h->cur.t = NULL;
	h->cur.n = 0;
	h->m = NULL;
	return WT_OK;
}

static void h_abort(wt_sink *s)
{
	wt_host_sink *h = host_of(s);
	set_free(&h->cur);
	h->m = NULL;
}

static const wt_sink_ops host_ops = {
    .struct_size = sizeof(wt_sink_ops),
    .begin = h_begin,
    .tensor_begin = h_tensor_begin,
    .write = h_write,
    .tensor_end = h_tensor_end,
    .end = h_end,
    .abort = h_abort,
    .recv_buf = h_recv_buf,
};

/* ---- in-place update: tensors written into the buffers of the last fetch ---- */

static wt_host_sink *upd_of(wt_sink *s)
{
	return (wt_host_sink *)((char *)s - offsetof(wt_host_sink, upd));
}

static int u_begin(wt_sink *s, const wt_manifest *m, wt_errbuf *err)
{
	wt_host_sink *h = upd_of(s);
	size_t n = wt_manifest_n_tensors(m);
	free(h->upd_map);
	h->upd_n = 0;
	if ((h->upd_map = calloc(n ? n : 1, sizeof(*h->upd_map))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "host sink update: out of memory");
	/* Every tensor must exist with the same size before any byte moves. */
	for (size_t i = 0; i < n; i++) {
		wt_tensor_info info;
		size_t k = SIZE_MAX;
		wt_manifest_tensor(m, i, &info);
		if (common_find_name(h->done.t, h->done.n, sizeof(host_tensor),
		                     offsetof(host_tensor, name), info.name, &k) != WT_OK ||
		    h->done.t[k].nbytes != info.nbytes) {
			free(h->upd_map);
			h->upd_map = NULL;
			return wt_seterr(
			    err, WT_ELAYOUT,
			    "host sink update: tensor '%s' (%llu bytes) is %s in the held "
			    "rank; layout or shapes changed: full reload needed",
			    info.name, (unsigned long long)info.nbytes,
			    k < h->done.n && h->done.t[k].nbytes != info.nbytes ? "of another size"
			                                                        : "not");
		}
		h->upd_map[i] = k;
	}
	/* A stale tensor must be rewritten by this update (upd_map is in name order). */
	for (size_t k = 0, i = 0; k < h->done.n; k++) {
		while (i < n && h->upd_map[i] < k)
			i++;
		if (h->done.t[k].stale && (i == n || h->upd_map[i] != k)) {
			free(h->upd_map);
			h->upd_map = NULL;
			return wt_seterr(
			    err, WT_ELAYOUT,
			    "host sink update to revision %.12s: tensor '%s' holds bytes of an "
			    "earlier update that failed, and this update does not rewrite it; "
			    "fetch the rank in full (or select that tensor too)",
			    wt_manifest_revision(m), h->done.t[k].name);
		}
	}
	h->upd_n = n;
	h->upd_cur = SIZE_MAX;
	h->upd_next = 0;
	return WT_OK;
}

static int u_tensor_begin(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_host_sink *h = upd_of(s);
	if (ti >= h->upd_n || ti != h->upd_next || h->upd_cur != SIZE_MAX)
		return wt_seterr(err, WT_EINVAL,
		                 "host sink update: tensor %zu begun out of order (expected %zu of "
		                 "%zu)",
		                 ti, h->upd_next, h->upd_n);
	h->upd_cur = ti;
	h->upd_written = 0;
	h->done.t[h->upd_map[ti]].stale = 1; /* until this update ends well */
	return WT_OK;
}

static int u_write(wt_sink *s, size_t ti, uint64_t off, const void *data, size_t len,
                   wt_errbuf *err)
{
	wt_host_sink *h = upd_of(s);
	host_tensor *t = ti < h->upd_n && ti == h->upd_cur ? &h->done.t[h->upd_map[ti]] : NULL;
	if (t == NULL || off != h->upd_written || len > t->nbytes - off)
		return wt_seterr(err, WT_EINVAL,
		                 "host sink update: tensor %zu: write of %zu bytes at %llu out of "
		                 "order or past its end",
		                 ti, len, (unsigned long long)off);
	memcpy(t->data + off, data, len);
	h->upd_written += len;
	return WT_OK;
}

static int u_tensor_end(wt_sink *s, size_t ti, wt_errbuf *err)
{
	wt_host_sink *h = upd_of(s);
	if (ti >= h->upd_n || ti != h->upd_cur ||
	    h->upd_written != h->done.t[h->upd_map[ti]].nbytes)
		return wt_seterr(err, WT_EINVAL, "host sink update: tensor %zu ended incomplete",
		                 ti);
	h->upd_cur = SIZE_MAX;
	h->upd_next = ti + 1;
	return WT_OK;
}

static void u_abort(wt_sink *s)
{
	wt_host_sink *h = upd_of(s);
	free(h->upd_map);
	h->upd_map = NULL;
	h->upd_n = 0;
}

static int u_end(wt_sink *s, wt_errbuf *err)
{
	wt_host_sink *h = upd_of(s);
	int rv = WT_OK;
	if (h->upd_map == NULL || h->upd_next != h->upd_n)
		rv = wt_seterr(err, WT_EINVAL,
		               "host sink update: end after %zu of %zu tensors; the tensors "
		               "updated so far may hold partial bytes",
		               h->upd_map != NULL ? h->upd_next : 0, h->upd_n);
	for (size_t i = 0; rv == WT_OK && i < h->upd_n; i++)
		h->done.t[h->upd_map[i]].stale = 0;
	u_abort(s);
	return rv;
}

static const wt_sink_ops upd_ops = {
    .struct_size = sizeof(wt_sink_ops),
    .begin = u_begin,
    .tensor_begin = u_tensor_begin,
    .write = u_write,
    .tensor_end = u_tensor_end,
    .end = u_end,
    .abort = u_abort,
};

wt_sink *wt_host_sink_update_sink(wt_host_sink *h)
{
	return &h->upd;
}

int wt_host_sink_create(wt_host_sink **out, wt_errbuf *err)
{
	wt_host_sink *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return wt_seterr(err, WT_ENOMEM, "host sink: out of memory");
	h->base.ops = &host_ops;
	h->upd.ops = &upd_ops;
	*out = h;
	return WT_OK;
}

wt_sink *wt_host_sink_sink(wt_host_sink *h)
{
	return &h->base;
}

int wt_host_sink_find(const wt_host_sink *h, const char *name, const void **data, uint64_t *nbytes)
{
	size_t i; /* manifest order is name order */
	if (common_find_name(h->done.t, h->done.n, sizeof(host_tensor), offsetof(host_tensor, name),
	                     name, &i) != WT_OK)
		return WT_ENOTFOUND;
	*data = h->done.t[i].data;
	*nbytes = h->done.t[i].nbytes;
	return WT_OK;
}

size_t wt_host_sink_n_tensors(const wt_host_sink *h)
{
	return h->done.n;
}

void wt_host_sink_destroy(wt_host_sink *h)
{
	if (h == NULL)
		return;
	set_free(&h->done);
	set_free(&h->cur);
	free(h->upd_map);
	free(h);
}
