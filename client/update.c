/*
 * update.c — online weight updates: Watch (the current revision, or wait for
 * the next), the delta between two manifests of a rank (tensors whose content
 * hash changed), a fetch of a subset of a shard's tensors, and the update of a
 * sink that holds the old rank (delta + subset fetch + report).
 *
 * A subset is an ordinary wt_manifest holding the selected tensors and their
 * chunks (same shard id, revision, layout and rank), so the windowed, verified
 * fetch of fetch.c runs on it unchanged; sub_map ties it to the full manifest
 * so a resume after a server restart compares the right tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "common/common.h"
#include "proto/wire.h"

#define WATCH_MARGIN_MS 5000u /* beyond the watch's own wait, for the reply to arrive */
#define WATCH_MAX_MS    60000u

typedef struct watch_arg {
	Weights__Request *req;
	uint32_t timeout_ms;
	Weights__Reply **out;
} watch_arg;

static int watch_fn(wt_client *c, size_t ep, void *arg, bool *answered, wt_errbuf *err)
{
	watch_arg *a = arg;
	return client_call(c, ep, a->req, a->timeout_ms, WEIGHTS__REPLY__BODY_WATCH, a->out,
	                   answered, err);
}

int wt_client_watch(wt_client *c, const char *model, const char *known_revision,
                    uint32_t timeout_ms, char out_revision[65], int *changed, wt_errbuf *err)
{
	if (c == NULL || model == NULL || model[0] == '\0' || out_revision == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "watch: client, model and out_revision are required");
	if (timeout_ms > WATCH_MAX_MS)
		timeout_ms = WATCH_MAX_MS; /* the server's cap */
	Weights__Request req = WEIGHTS__REQUEST__INIT;
	Weights__WatchRequest wr = WEIGHTS__WATCH_REQUEST__INIT;
	wr.model = (char *)model;
	wr.known_revision = (char *)(known_revision ? known_revision : "");
	wr.timeout_ms = timeout_ms;
	req.body_case = WEIGHTS__REQUEST__BODY_WATCH;
	req.watch = &wr;
	Weights__Reply *r = NULL;
	/* in 64 bits: a request_timeout_ms near 2^32 wrapped the sum to a short one */
	uint64_t wait_ms = (uint64_t)timeout_ms + c->o.request_timeout_ms + WATCH_MARGIN_MS;
	watch_arg a = {.req = &req,
	               .timeout_ms = wait_ms < UINT32_MAX ? (uint32_t)wait_ms : UINT32_MAX,
	               .out = &r};
	int rv = client_each_ep(c, NULL, 0, watch_fn, &a, NULL, err);
	if (rv != WT_OK) {
		wt_errprefix(err, "watch of model '%s'", model);
		return rv;
	}
	const char *rev = r->watch->revision ? r->watch->revision : "";
	const char *known = known_revision ? known_revision : "";
	size_t len = strlen(rev);
	size_t hex = strspn(rev, "0123456789abcdef");
	int differs = strcmp(rev, known) != 0;
	if (len != 64 || hex != len) {
		rv = wt_seterr(err, WT_EPROTO,
		               "watch of model '%s': the server answered a revision of %zu "
		               "characters (%s at %zu); a revision is 64 lowercase hex digits: "
		               "is the endpoint a weightd?",
		               model, len, hex < len ? "not hex" : "wrong length", hex);
	} else if ((r->watch->changed != 0) != differs) {
		rv = wt_seterr(err, WT_EPROTO,
		               "watch of model '%s': the server answered revision %.12s with "
		               "changed=%d, but the known revision is %.12s: its reply "
		               "contradicts itself; ask again or check the endpoint",
		               model, rev, r->watch->changed ? 1 : 0, known[0] ? known : "(none)");
	}
	if (rv != WT_OK) {
		wire_reply_free(r);
		return rv;
	}
	snprintf(out_revision, 65, "%s", rev);
	if (changed != NULL)
		*changed = differs;
	wire_reply_free(r);
	return WT_OK;
}

static int refuse(wt_errbuf *err, const wt_manifest *o, const wt_manifest *n, const char *what)
{
	return wt_seterr(err, WT_ELAYOUT,
	                 "model '%s' revision %.12s -> %.12s: %s; layout or shapes changed: "
	                 "full reload needed (fetch the new manifest into a fresh sink)",
	                 n->model, o->revision, n->revision, what);
}

static int same_shape(const client_tensor *a, const client_tensor *b)
{
	if (a->dtype != b->dtype || a->ndim != b->ndim || a->nbytes != b->nbytes)
		return 0;
	for (int d = 0; d < a->ndim; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

static void shape_text(const client_tensor *t, char *buf, size_t cap)
{
	size_t len = (size_t)snprintf(buf, cap, "[");
	for (int d = 0; d < t->ndim && len < cap; d++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? "," : "",
		                        (long long)t->shape[d]);
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
}

int wt_manifest_delta(const wt_manifest *o, const wt_manifest *n, unsigned char *changed,
                      size_t *n_changed, uint64_t *bytes, wt_errbuf *err)
{
	if (o == NULL || n == NULL)
		return wt_seterr(err, WT_EINVAL, "manifest delta: both manifests are required");
	if (o->sub_map != NULL || n->sub_map != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "manifest delta: pass whole-shard manifests, not a subset");
	char what[600];
	if (strcmp(o->model, n->model) != 0 || strcmp(o->layout_text, n->layout_text) != 0 ||
	    o->tp_rank != n->tp_rank || o->ep_rank != n->ep_rank) {
		snprintf(what, sizeof(what),
		         "the manifests are of another model, layout or rank ('%s' %s rank %u/%u "
		         "vs '%s' %s rank %u/%u)",
		         o->model, o->layout_text, o->tp_rank, o->ep_rank, n->model, n->layout_text,
		         n->tp_rank, n->ep_rank);
		return refuse(err, o, n, what);
	}
	size_t cnt = 0, i = 0, j = 0;
	uint64_t sum = 0;
	/* Both are in name order (validated): walk them together. */
	while (i < o->n_tensors || j < n->n_tensors) {
		int c = i == o->n_tensors   ? 1
		        : j == n->n_tensors ? -1
		                            : strcmp(o->tensors[i].name, n->tensors[j].name);
		if (c != 0) {
			snprintf(what, sizeof(what), "tensor '%s' %s",
			         c < 0 ? o->tensors[i].name : n->tensors[j].name,
			         c < 0 ? "is gone from the new revision"
			               : "is new in the new revision");
			return refuse(err, o, n, what);
		}
		const client_tensor *a = &o->tensors[i], *b = &n->tensors[j];
		if (!same_shape(a, b)) {
			char sa[200], sb[200];
			shape_text(a, sa, sizeof(sa));
			shape_text(b, sb, sizeof(sb));
			snprintf(what, sizeof(what), "tensor '%s' changed from %s %s to %s %s",
			         b->name, wt_dtype_name(a->dtype), sa, wt_dtype_name(b->dtype), sb);
			return refuse(err, o, n, what);
		}
		int diff = memcmp(a->hash, b->hash, 16) != 0;
		if (changed != NULL)
			changed[j] = (unsigned char)diff;
		cnt += (size_t)diff;
		sum += diff ? b->nbytes : 0;
		i++;
		j++;
	}
	if (n_changed != NULL)
		*n_changed = cnt;
	if (bytes != NULL)
		*bytes = sum;
	return WT_OK;
}

static char *dup_or_null(const char *s, int *bad)
{
	char *d = s ? strdup(s) : NULL;
	if (s != NULL && d == NULL)
		*bad = 1;
	return d;
}

/* The selected tensors of m (and their chunks) as a manifest of their own. */
static int subset(const wt_manifest *m, const unsigned char *sel, wt_manifest **out, wt_errbuf *err)
{
	size_t nt = 0, nc = 0;
	for (size_t i = 0; i < m->n_tensors; i++)
		if (sel[i]) {
			nt++;
			nc += m->tensors[i].n_chunks;
		}
	wt_manifest *s = calloc(1, sizeof(*s));
	int bad = s == NULL;
	if (!bad) {
		*s = *m;
		s->tensors = calloc(nt ? nt : 1, sizeof(*s->tensors));
		s->chunks = calloc(nc ? nc : 1, sizeof(*s->chunks));
		s->sub_map = calloc(nt ? nt : 1, sizeof(*s->sub_map));
		s->skipped = NULL;
		s->n_skipped = 0;
		s->n_tensors = s->n_chunks = 0;
		s->model = dup_or_null(m->model, &bad);
		s->revision = dup_or_null(m->revision, &bad);
		s->layout_text = dup_or_null(m->layout_text, &bad);
		s->req_model = dup_or_null(m->req_model, &bad);
		s->served_by = dup_or_null(m->served_by, &bad);
		s->mode_reason = dup_or_null(m->mode_reason, &bad); /* *s = *m shared it */
		s->shard_id = malloc(m->shard_id_len ? m->shard_id_len : 1);
		wt_layout_init(&s->req_layout);
		bad |= s->tensors == NULL || s->chunks == NULL || s->sub_map == NULL ||
		       s->shard_id == NULL ||
		       wt_layout_copy(&s->req_layout, &m->req_layout) != WT_OK;
	}
	if (bad) {
		wt_manifest_free(s);
		return wt_seterr(err, WT_ENOMEM, "fetch of %zu tensors: out of memory", nt);
	}
	memcpy(s->shard_id, m->shard_id, m->shard_id_len);
	s->sub_full_tensors = m->n_tensors;
	s->total_bytes = 0;
	for (size_t i = 0; i < m->n_tensors; i++) {
		if (!sel[i])
			continue;
		client_tensor *t = &s->tensors[s->n_tensors];
		*t = m->tensors[i];
		if ((t->name = strdup(m->tensors[i].name)) == NULL) {
			wt_manifest_free(s);
			return wt_seterr(err, WT_ENOMEM, "fetch of %zu tensors: out of memory", nt);
		}
		t->first_chunk = s->n_chunks;
		for (size_t k = 0; k < t->n_chunks; k++) {
			s->chunks[s->n_chunks] = m->chunks[m->tensors[i].first_chunk + k];
			s->chunks[s->n_chunks++].tensor = s->n_tensors;
		}
		s->total_bytes += t->nbytes;
		s->sub_map[s->n_tensors++] = i;
	}
	*out = s;
	return WT_OK;
}

static int same_tensor(const wt_manifest *a, size_t ia, const wt_manifest *b, size_t ib)
{
	const client_tensor *x = &a->tensors[ia], *y = &b->tensors[ib];
	if (strcmp(x->name, y->name) != 0 || memcmp(x->hash, y->hash, 16) != 0 ||
	    x->n_chunks != y->n_chunks)
		return 0;
	for (size_t k = 0; k < x->n_chunks; k++) {
		const client_chunk *p = &a->chunks[x->first_chunk + k];
		const client_chunk *q = &b->chunks[y->first_chunk + k];
		if (memcmp(p->hash, q->hash, 16) != 0 || p->nbytes != q->nbytes)
			return 0;
	}
	return 1;
}

int client_manifest_same(const wt_manifest *full, const wt_manifest *m)
{
	size_t want = m->sub_map != NULL ? m->sub_full_tensors : m->n_tensors;
	if (full->n_tensors != want)
		return 0;
	for (size_t i = 0; i < m->n_tensors; i++)
		if (!same_tensor(full, m->sub_map != NULL ? m->sub_map[i] : i, m, i))
			return 0;
	return 1;
}

int wt_client_fetch_tensors(wt_client *c, const wt_manifest *m, const unsigned char *select,
                            wt_sink *sink, const wt_fetch_opts *opts, wt_errbuf *err)
{
	if (c == NULL || m == NULL || select == NULL || sink == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "fetch_tensors: client, manifest, select and sink are required");
	if (m->sub_map != NULL)
		return wt_seterr(err, WT_EINVAL, "fetch_tensors: pass a whole-shard manifest");
	if (m->live)
		return wt_seterr(err, WT_EINVAL,
		                 "fetch_tensors: a live manifest (cut-through) is fetched whole "
		                 "with wt_client_fetch; get the manifest again once the layout "
		                 "is produced to fetch a subset");
	wt_manifest *s = NULL;
	int rv = subset(m, select, &s, err);
	if (rv != WT_OK)
		return rv;
	rv = wt_client_fetch(c, s, sink, opts, err);
	wt_manifest_free(s);
	return rv;
}

static void report_init(wt_update_report *r, const wt_manifest *o, const wt_manifest *n)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->revision_before, sizeof(r->revision_before), "%s", o->revision);
	snprintf(r->revision_after, sizeof(r->revision_after), "%s", n->revision);
	r->tp_rank = n->tp_rank;
	r->ep_rank = n->ep_rank;
	r->tensors_total = n->n_tensors;
	r->bytes_total = n->total_bytes;
}

/* No tensor changed: the sink still sees an update, of no tensor (begin, end;
 * no server asked), so an update sink can refuse the tensors a failed update
 * left stale instead of the call reporting success over a mix of revisions. */
static int empty_update(const wt_manifest *m, const unsigned char *none, wt_sink *sink,
                        wt_errbuf *err)
{
	wt_sink_ops ops;
	wt_manifest *s = NULL;
	int rv = client_sink_ops_in(&ops, sink, err);
	if (rv == WT_OK)
		rv = subset(m, none, &s, err);
	if (rv == WT_OK)
		rv = ops.begin(sink, s, err);
	if (rv == WT_OK)
		rv = ops.end(sink, err);
	wt_manifest_free(s);
	return rv;
}

int wt_client_fetch_update(wt_client *c, const wt_manifest *old_m, const wt_manifest *new_m,
                           wt_sink *sink, const wt_fetch_opts *opts, wt_update_report *report,
                           wt_errbuf *err)
{
	if (c == NULL || old_m == NULL || new_m == NULL || sink == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "fetch_update: client, both manifests and sink are required");
	if (old_m->live || new_m->live)
		return wt_seterr(err, WT_EINVAL,
		                 "fetch_update: a live manifest (cut-through) has no tensor hashes "
		                 "to compare; fetch it whole with wt_client_fetch, or get the "
		                 "manifest again once the layout is produced");
	uint64_t t0 = common_now_ns();
	wt_update_report local;
	wt_update_report *r = report != NULL ? report : &local;
	report_init(r, old_m, new_m);
	unsigned char *sel = calloc(new_m->n_tensors ? new_m->n_tensors : 1, 1);
	if (sel == NULL)
		return wt_seterr(err, WT_ENOMEM, "fetch_update: out of memory");
	size_t n = 0;
	uint64_t bytes = 0;
	int rv = wt_manifest_delta(old_m, new_m, sel, &n, &bytes, err);
	if (rv == WT_OK && n > 0) {
		wt_fetch_stats st;
		wt_fetch_opts o;
		wt_fetch_opts_init(&o);
		if (opts != NULL)
			rv = client_fetch_opts_in(&o, opts, err);
		o.struct_size = sizeof(o);
		wt_fetch_stats *user = o.stats;
		memset(&st, 0, sizeof(st));
		o.stats = &st;
		if (rv == WT_OK)
			rv = wt_client_fetch_tensors(c, new_m, sel, sink, &o, err);
		if (user != NULL)
			*user = st;
		r->bytes_updated = st.bytes;
	} else if (rv == WT_OK) {
		rv = empty_update(new_m, sel, sink, err);
	}
	if (rv == WT_OK)
		r->tensors_updated = n;
	r->elapsed_us = (common_now_ns() - t0) / 1000;
	free(sel);
	return rv;
}
