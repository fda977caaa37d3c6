/* client.c — wt_client lifetime, models, manifests and admin requests. */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "proto/wire.h"
#include "weights/weights.h"

void wt_client_opts_init(wt_client_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->connect_timeout_ms = 2000;
	o->request_timeout_ms = 30000;
	o->manifest_timeout_ms = 600000;
	o->window = 8;
	o->connections = 2;
	o->max_retries = 5;
	o->backoff_initial_ms = 100;
	o->backoff_max_ms = 2000;
	o->max_message_bytes = 256ull << 20;
	o->log_level = WT_CLIENT_LOG_WARNING;
	o->retry_budget_ms = CLIENT_RETRY_BUDGET_MS;
}

/* Close every connection and free (no request may be left in flight). */
static void client_free(wt_client *c)
{
	for (size_t i = 0; i < c->n_eps; i++) {
		for (size_t k = 0; c->eps != NULL && k < c->eps[i].n_socks; k++) {
			nng_close(c->eps[i].socks[k]); /* no pipe callback runs after this */
			free(c->eps[i].mons[k]);
		}
		if (c->eps != NULL) {
			client_bulk_drop_idle(c, i);
			free(c->eps[i].stream_url);
		}
		free(c->urls[i]);
	}
	free(c->urls);
	free(c->eps);
	free(c->token);
	free(c->tls_ca);
	free(c->tls_cert_key);
	free(c->client_id);
	pthread_cond_destroy(&c->req_cv);
	pthread_mutex_destroy(&c->req_lk);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->lk);
	free(c);
}

static _Atomic size_t g_closing; /* clients a close_later thread still holds */

size_t client_closing(void)
{
	return atomic_load(&g_closing);
}

/* The thread that ends a close: the left requests end (replies or their own
 * timeouts), then the sockets close. */
static void *close_later(void *arg)
{
	wt_client *c = arg;
	(void)pthread_setname_np(pthread_self(), "wt:close");
	(void)client_reqs_reap(c, 1);
	client_free(c);
	atomic_fetch_sub(&g_closing, 1);
	return NULL;
}

/* Start close_later on c, detached, every signal blocked (they are the
 * program's). false: no thread (the caller waits itself). */
static bool close_in_background(wt_client *c)
{
	pthread_attr_t a;
	if (pthread_attr_init(&a) != 0)
		return false;
	sigset_t all, old;
	sigfillset(&all);
	pthread_t t;
	atomic_fetch_add(&g_closing, 1);
	bool ok = pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) == 0 &&
	          pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
	if (ok) {
		ok = pthread_create(&t, &a, close_later, c) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_attr_destroy(&a);
	if (!ok)
		atomic_fetch_sub(&g_closing, 1);
	return ok;
}

void wt_client_close(wt_client *c)
{
	if (c == NULL)
		return;
	/* requests fetches walked away from hold contexts on these sockets, and
	 * closing one with a receive in flight can hang nng_close (fetch_msg.c):
	 * a thread of its own waits for them and closes the sockets after */
	size_t left = client_reqs_reap(c, 0);
	if (left > 0) {
		client_log(c, WT_CLIENT_LOG_INFO,
		           "closing: %zu chunk requests left in flight; their connections close "
		           "when they end (at most %u ms)",
		           left, c->o.request_timeout_ms);
		c->o.log = NULL; /* the caller's callback and context may go once we return */
		if (close_in_background(c))
			return;
		(void)client_reqs_reap(c, 1);
	}
	client_free(c);
}

static int check_opts(const wt_client_opts *o, wt_errbuf *err)
{
	if (o->n_endpoints == 0 || o->endpoints == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "no endpoint given; pass at least one tcp:// or "
		                 "ipc:// URL");
	if (o->n_endpoints > CLIENT_MAX_ENDPOINTS)
		return wt_seterr(err, WT_EINVAL, "%zu endpoints (max %u)", o->n_endpoints,
		                 CLIENT_MAX_ENDPOINTS);
	for (size_t i = 0; i < o->n_endpoints; i++) {
		const char *u = o->endpoints[i];
		bool tls = u != NULL && strncmp(u, "tls+tcp://", 10) == 0;
		if (tls && (o->tls_ca_file == NULL || o->tls_ca_file[0] == '\0'))
			return wt_seterr(
			    err, WT_EINVAL,
			    "endpoint '%s': tls+tcp:// needs tls_ca_file (the CA "
			    "certificates the server's certificate is checked against)",
			    u);
		if (u == NULL ||
		    (!tls && strncmp(u, "tcp://", 6) != 0 && strncmp(u, "ipc://", 6) != 0))
			return wt_seterr(err, WT_EINVAL,
			                 "endpoint '%s': use tcp://HOST:PORT or ipc:///PATH",
			                 u ? u : "(null)");
	}
	if (o->window == 0 || o->window > CLIENT_MAX_WINDOW)
		return wt_seterr(err, WT_EINVAL, "window %u: use 1..%u", o->window,
		                 CLIENT_MAX_WINDOW);
	if (o->connections == 0 || o->connections > CLIENT_MAX_CONNS)
		return wt_seterr(err, WT_EINVAL, "connections %u: use 1..%u", o->connections,
		                 CLIENT_MAX_CONNS);
	if (o->connect_timeout_ms == 0 || o->request_timeout_ms == 0 || o->manifest_timeout_ms == 0)
		return wt_seterr(err, WT_EINVAL, "timeouts must be > 0 ms");
	if (o->backoff_max_ms < o->backoff_initial_ms)
		return wt_seterr(err, WT_EINVAL, "backoff_max_ms %u < backoff_initial_ms %u",
		                 o->backoff_max_ms, o->backoff_initial_ms);
	if (o->hash_refetch > 1)
		return wt_seterr(err, WT_EINVAL, "hash_refetch %u: use 0 or 1 (never a retry loop)",
		                 o->hash_refetch);
	if (wt_fetch_mode_name(o->mode) == NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "mode %d: use WT_MODE_PARTITIONED, WT_MODE_AUTO or "
		                 "WT_MODE_RAW",
		                 o->mode);
	if (o->retry_budget_ms > 86400000u)
		return wt_seterr(err, WT_EINVAL, "retry_budget_ms %u: use at most 86400000 (a day)",
		                 o->retry_budget_ms);
	if (o->max_message_bytes < 4096)
		return wt_seterr(err, WT_EINVAL, "max_message_bytes %llu: use >= 4096",
		                 (unsigned long long)o->max_message_bytes);
	return WT_OK;
}

int wt_client_open(wt_client **out, const wt_client_opts *caller_opts, wt_errbuf *err)
{
	wt_client_opts full; /* the caller's members over the defaults (abi.c) */
	int rv = client_opts_in(&full, caller_opts, err);
	if (rv == WT_OK)
		rv = check_opts(&full, err);
	if (rv != WT_OK)
		return rv;
	if (full.retry_budget_ms == 0) /* also an older caller's zeroed padding (abi.c) */
		full.retry_budget_ms = CLIENT_RETRY_BUDGET_MS;
	const wt_client_opts *opts = &full;
	wt_client *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return wt_seterr(err, WT_ENOMEM, "client: out of memory");
	pthread_mutex_init(&c->lk, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_mutex_init(&c->req_lk, NULL);
	pthread_cond_init(&c->req_cv, NULL);
	c->o = *opts;
	atomic_init(&c->next_id, 1);
	atomic_init(&c->verify, 1);
	c->urls = calloc(opts->n_endpoints, sizeof(char *));
	c->eps = calloc(opts->n_endpoints, sizeof(client_ep));
	c->token = strdup(opts->token ? opts->token : "");
	c->client_id = strdup(opts->client_id ? opts->client_id : "libweights/" WT_VERSION_STRING);
	c->tls_ca = opts->tls_ca_file ? strdup(opts->tls_ca_file) : NULL;
	c->tls_cert_key = opts->tls_cert_key_file ? strdup(opts->tls_cert_key_file) : NULL;
	if (c->urls == NULL || c->eps == NULL || c->token == NULL || c->client_id == NULL ||
	    (opts->tls_ca_file && !c->tls_ca) || (opts->tls_cert_key_file && !c->tls_cert_key))
		goto nomem;
	for (size_t i = 0; i < opts->n_endpoints; i++, c->n_eps++) {
		if ((c->urls[i] = strdup(opts->endpoints[i])) == NULL)
			goto nomem;
		c->eps[i].url = c->urls[i];
	}
	c->o.endpoints = (const char *const *)c->urls;
	c->o.token = c->token;
	c->o.client_id = c->client_id;
	c->o.tls_ca_file = c->tls_ca;
	c->o.tls_cert_key_file = c->tls_cert_key;
	*out = c;
	return WT_OK;
nomem:
	wt_client_close(c);
	return wt_seterr(err, WT_ENOMEM, "client: out of memory");
}

typedef struct call_arg {
	Weights__Request *req;
	uint32_t timeout_ms;
	Weights__Reply__BodyCase want;
	Weights__Reply **out;
} call_arg;

static int call_fn(wt_client *c, size_t ep, void *arg, bool *answered, wt_errbuf *err)
{
	call_arg *a = arg;
	return client_call(c, ep, a->req, a->timeout_ms, a->want, a->out, answered, err);
}

/* Try endpoints in list order until one answers req (client_each_ep: retries,
 * fail-over, retry budget). */
static int call_any(wt_client *c, Weights__Request *req, uint32_t timeout_ms,
                    Weights__Reply__BodyCase want, Weights__Reply **out, wt_errbuf *err)
{
	call_arg a = {.req = req, .timeout_ms = timeout_ms, .want = want, .out = out};
	return client_each_ep(c, NULL, 0, call_fn, &a, NULL, err);
}

/* The override table after a list's n entries (wt_client_list_models allocates both). */
static char **list_overrides(const wt_model_info *list, size_t n)
{
	return (char **)(void *)((char *)(uintptr_t)list + n * sizeof(*list));
}

int wt_client_list_models(wt_client *c, wt_model_info **out, size_t *n, wt_errbuf *err)
{
	Weights__Request req = WEIGHTS__REQUEST__INIT;
	Weights__ListModelsRequest lm = WEIGHTS__LIST_MODELS_REQUEST__INIT;
	req.body_case = WEIGHTS__REQUEST__BODY_LIST_MODELS;
	req.list_models = &lm;
	Weights__Reply *r = NULL;
	int rv = call_any(c, &req, c->o.request_timeout_ms, WEIGHTS__REPLY__BODY_MODELS, &r, err);
	if (rv != WT_OK)
		return rv;
	size_t cnt = r->models->n_models;
	/* the entries, then each one's override (wt_model_list_override): one block */
	wt_model_info *list = cnt ? calloc(1, cnt * (sizeof(*list) + sizeof(char *))) : NULL;
	if (cnt && list == NULL) {
		wire_reply_free(r);
		return wt_seterr(err, WT_ENOMEM, "models: out of memory for %zu entries", cnt);
	}
	/* every string escaped (control bytes as \xNN): they are printed to terminals and
	 * logs, and a server's names and URIs never hold such bytes (weightd refuses them) */
#define ESC_DUP(str) common_text_escape_dup((str) ? (str) : "", false)
	for (size_t i = 0; i < cnt; i++) {
		const Weights__ModelInfo *mi = r->models->models[i];
		list[i].name = ESC_DUP(mi->name);
		list[i].uri = ESC_DUP(mi->uri);
		list[i].revision = ESC_DUP(mi->revision);
		list[i].architecture = ESC_DUP(mi->architecture);
		list[i].checkpoint_bytes = mi->checkpoint_bytes;
		list[i].n_tensors = mi->n_tensors;
		list[i].available = mi->available;
		list[i].error = ESC_DUP(mi->error);
		list[i].source = ESC_DUP(mi->source);
		char **ov = list_overrides(list, cnt);
		ov[i] = ESC_DUP(mi->config_override);
		if (!list[i].name || !list[i].uri || !list[i].revision || !list[i].architecture ||
		    !list[i].error || !list[i].source || !ov[i]) {
			wt_model_list_free(list, cnt);
			wire_reply_free(r);
			return wt_seterr(err, WT_ENOMEM, "models: out of memory");
		}
	}
#undef ESC_DUP
	wire_reply_free(r);
	*out = list;
	*n = cnt;
	return WT_OK;
}

void wt_model_list_free(wt_model_info *list, size_t n)
{
	if (list == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(list[i].name);
		free(list[i].uri);
		free(list[i].revision);
		free(list[i].architecture);
		free(list[i].error);
		free(list[i].source);
		free(list_overrides(list, n)[i]);
	}
	free(list);
}

const char *wt_model_list_override(const wt_model_info *list, size_t n, size_t i)
{
	if (list == NULL || i >= n)
		return NULL;
	return list_overrides(list, n)[i];
}

static void manifest_request(Weights__Request *req, Weights__ManifestRequest *mr,
                             Weights__Layout *pl, char **excl, const char *model,
                             const wt_layout *layout, const client_mreq *q)
{
	mr->plan_only = q->plan_only;
	mr->cache_only = q->cache_only;
	wire_layout_to_pb(layout, pl, excl);
	mr->model = (char *)model;
	mr->revision = (char *)(q->revision ? q->revision : "");
	mr->layout = pl;
	mr->tp_rank = layout->tp_rank;
	mr->ep_rank = layout->ep_rank;
	req->body_case = WEIGHTS__REQUEST__BODY_MANIFEST;
	req->manifest = mr;
}

static uint64_t chunk_limit(const wt_client *c)
{
	/* a reply is the chunk plus a small header; keep 64 KiB for it (half the
	 * limit under 128 KiB: it used to wrap to no limit below 64 KiB) */
	uint64_t m = c->o.max_message_bytes;
	return m > 2 * 65536 ? m - 65536 : m / 2;
}

/* Check and keep what the endpoint sent (r: consumed). */
static int take_manifest(wt_client *c, size_t ep, const char *model, const wt_layout *layout,
                         const client_mreq *q, bool live_ok, Weights__Reply *r, wt_manifest **out,
                         wt_errbuf *err)
{
	*out = NULL;
	int rv;
	if (r->manifest->live && !live_ok) /* its hashes would come from the server later */
		rv = wt_seterr(err, WT_EPROTO,
		               "endpoint %s: model '%s': a live (cut-through) manifest, which this "
		               "request did not accept (cut_through off, plan_only or cache_only)",
		               c->eps[ep].url, model);
	else if ((rv = client_manifest_from_pb(r->manifest, chunk_limit(c), model, layout, out,
	                                       err)) != WT_OK)
		wt_errprefix(err, "endpoint %s: model '%s'", c->eps[ep].url, model);
	else if (((*out)->served_by = strdup(c->eps[ep].url)) == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "manifest: out of memory");
	else if ((*out)->tp_rank != layout->tp_rank || (*out)->ep_rank != layout->ep_rank)
		rv = wt_seterr(err, WT_EPROTO,
		               "endpoint %s: manifest for tp_rank=%u,ep_rank=%u, asked for "
		               "tp_rank=%u,ep_rank=%u",
		               c->eps[ep].url, (*out)->tp_rank, (*out)->ep_rank, layout->tp_rank,
		               layout->ep_rank);
	if (rv != WT_OK) {
		wt_manifest_free(*out);
		*out = NULL;
	}
	if (rv == WT_OK && q->keep != NULL)
		*q->keep = r;
	else
		wire_reply_free(r);
	return rv;
}

static int request_manifest(wt_client *c, size_t ep, const char *model, const wt_layout *layout,
                            const client_mreq *q, wt_manifest **out, bool *answered, wt_errbuf *err)
{
	Weights__Request req = WEIGHTS__REQUEST__INIT;
	Weights__ManifestRequest mr = WEIGHTS__MANIFEST_REQUEST__INIT;
	Weights__Layout pl = WEIGHTS__LAYOUT__INIT;
	char *excl[WT_MAX_EXCLUDE];
	manifest_request(&req, &mr, &pl, excl, model, layout, q);
	/* cut-through: a live manifest may answer (never for plan_only / cache_only) */
	mr.live_ok = c->o.cut_through && !q->plan_only && !q->cache_only;
	Weights__Reply *r = NULL;
	int rv = client_call(c, ep, &req, c->o.manifest_timeout_ms, WEIGHTS__REPLY__BODY_MANIFEST,
	                     &r, answered, err);
	if (rv != WT_OK)
		return rv;
	return take_manifest(c, ep, model, layout, q, mr.live_ok, r, out, err);
}

int client_request_manifest(wt_client *c, size_t ep, const char *model, const wt_layout *layout,
                            wt_manifest **out, wt_errbuf *err)
{
	client_mreq q = {.plan_only = false};
	return request_manifest(c, ep, model, layout, &q, out, NULL, err);
}

typedef struct manifest_arg {
	const char *model;
	const wt_layout *layout;
	const client_mreq *q;
	wt_manifest **out;
} manifest_arg;

static int manifest_fn(wt_client *c, size_t ep, void *arg, bool *answered, wt_errbuf *err)
{
	manifest_arg *a = arg;
	return request_manifest(c, ep, a->model, a->layout, a->q, a->out, answered, err);
}

int client_get_manifest_once(wt_client *c, const char *model, const wt_layout *layout,
                             const client_mreq *q, wt_manifest **out, wt_errbuf *err)
{
	if (model == NULL || model[0] == '\0' || layout == NULL)
		return wt_seterr(err, WT_EINVAL, "get_manifest: model and layout are required");
	int rv = wt_layout_check(layout, err);
	if (rv != WT_OK)
		return rv;
	uint8_t key[16];
	size_t order[CLIENT_MAX_ENDPOINTS];
	client_route_key(model, layout, key);
	client_rendezvous_order(key, (const char *const *)c->urls, c->n_eps, order);
	manifest_arg a = {.model = model, .layout = layout, .q = q, .out = out};
	rv = client_each_ep(c, order, 0, manifest_fn, &a, NULL, err);
	if (rv == WT_EUNAVAIL && err != NULL)
		wt_errprefix(err, "model '%s': no endpoint served the manifest", model);
	return rv;
}

/* An admin request's extras: REGISTER's wait and follow (0: none), and
 * where it went and what it said of an open still running (out). */
typedef struct admin_ext {
	uint32_t wait_ms;
	bool follow;
	const size_t *order; /* endpoints to try (NULL: list order) */
	size_t used;         /* out: the endpoint that answered */
	bool opening;        /* out: the registration still opens */
	uint64_t read, total;
} admin_ext;

static int admin_call(wt_client *c, wt_admin_op op, const char *model, const char *uri,
                      const wt_layout *layout, admin_ext *x, wt_admin_result *out, wt_errbuf *err)
{
	Weights__Request req = WEIGHTS__REQUEST__INIT;
	Weights__AdminRequest ar = WEIGHTS__ADMIN_REQUEST__INIT;
	Weights__Layout pl = WEIGHTS__LAYOUT__INIT;
	char *excl[WT_MAX_EXCLUDE];
	ar.op = (Weights__AdminRequest__Op)op;
	ar.model = (char *)(model ? model : "");
	ar.uri = (char *)(uri ? uri : "");
	if (layout != NULL) {
		wire_layout_to_pb(layout, &pl, excl);
		ar.layout = &pl;
	}
	if (x != NULL) {
		ar.wait_ms = x->wait_ms;
		ar.follow = x->follow;
	}
	req.body_case = WEIGHTS__REQUEST__BODY_ADMIN;
	req.admin = &ar;
	Weights__Reply *r = NULL;
	/* warm/verify may produce or read whole shards */
	call_arg a = {.req = &req,
	              .timeout_ms = c->o.manifest_timeout_ms,
	              .want = WEIGHTS__REPLY__BODY_ADMIN,
	              .out = &r};
	size_t used = 0;
	int rv = client_each_ep(c, x != NULL ? x->order : NULL, CLIENT_ANSWER_FINAL, call_fn, &a,
	                        &used, err);
	if (rv != WT_OK)
		return rv;
	if (x != NULL) {
		x->used = used;
		x->opening = r->admin->opening;
		x->read = r->admin->open_read;
		x->total = r->admin->open_total;
	}
	memset(out, 0, sizeof(*out));
	/* the server's text, escaped but for its line breaks (STATS has several) */
	out->text = common_text_escape_dup(r->admin->text ? r->admin->text : "", true);
	out->bytes = r->admin->bytes;
	out->shards = r->admin->shards;
	out->chunks = r->admin->chunks;
	out->bad = r->admin->bad;
	out->disk_bytes = r->admin->disk_bytes;
	out->disk_before = r->admin->disk_bytes_before;
	out->rewritten = r->admin->rewritten_bytes;
	wire_reply_free(r);
	if (out->text == NULL)
		return wt_seterr(err, WT_ENOMEM, "admin: out of memory");
	return WT_OK;
}

int wt_client_admin(wt_client *c, wt_admin_op op, const char *model, const wt_layout *layout,
                    wt_admin_result *out, wt_errbuf *err)
{
	if (op == WT_ADMIN_REGISTER)
		return wt_seterr(err, WT_EINVAL,
		                 "admin: register needs a URI; use wt_client_register");
	if (op == WT_ADMIN_UNREGISTER)
		return wt_client_unregister(c, model, out, err);
	if ((op < WT_ADMIN_STATS || op > WT_ADMIN_VERIFY) && op != WT_ADMIN_RECLAIM)
		return wt_seterr(err, WT_EINVAL, "admin: unknown operation %d", (int)op);
	return admin_call(c, op, model, NULL, layout, NULL, out, err);
}

int wt_client_register(wt_client *c, const char *model, const char *uri, wt_admin_result *out,
                       wt_errbuf *err)
{
	return wt_client_register_progress(c, model, uri, NULL, NULL, out, err);
}

int wt_client_register_progress(wt_client *c, const char *model, const char *uri,
                                wt_register_progress_fn progress, void *ctx, wt_admin_result *out,
                                wt_errbuf *err)
{
	if (model == NULL || model[0] == '\0' || uri == NULL || uri[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "register: a model name and a URI are required");
	/* the first endpoint that answers starts it; the follow requests go to
	 * that one only (each endpoint in the order is it: retries and the retry
	 * budget as for any request) */
	size_t order[CLIENT_MAX_ENDPOINTS];
	admin_ext x = {.wait_ms = CLIENT_REGISTER_POLL_MS};
	int rv = admin_call(c, WT_ADMIN_REGISTER, model, uri, NULL, &x, out, err);
	uint64_t last_read = 0, moved_ms = client_now_ms();
	while (rv == WT_OK && x.opening) {
		if (progress != NULL && progress(ctx, x.read, x.total) != 0) {
			rv = wt_seterr(
			    err, WT_ECANCELED,
			    "register '%s': the caller stopped waiting; the registration "
			    "goes on in the server (weightctl models shows it, unregister "
			    "cancels it)",
			    model);
			wt_admin_result_clear(out);
			break;
		}
		if (x.read != last_read) {
			last_read = x.read;
			moved_ms = client_now_ms();
		} else if (client_now_ms() - moved_ms > c->o.manifest_timeout_ms) {
			rv = wt_seterr(err, WT_ETIMEDOUT,
			               "register '%s': the server read no byte of %s for %u ms "
			               "(manifest_timeout_ms); the registration goes on there: "
			               "weightctl models shows it",
			               model, uri, c->o.manifest_timeout_ms);
			wt_admin_result_clear(out);
			break;
		}
		wt_admin_result_clear(out);
		for (size_t k = 0; k < c->n_eps; k++)
			order[k] = x.used;
		x.order = order;
		x.follow = true;
		rv = admin_call(c, WT_ADMIN_REGISTER, model, uri, NULL, &x, out, err);
	}
	return rv;
}

int wt_client_register_override(wt_client *c, const char *model, const char *uri,
                                const char *config_override, wt_register_progress_fn progress,
                                void *ctx, wt_admin_result *out, wt_errbuf *err)
{
	if (config_override == NULL || config_override[0] == '\0')
		return wt_client_register_progress(c, model, uri, progress, ctx, out, err);
	if (uri == NULL || uri[0] == '\0' || strchr(uri, '\t') != NULL)
		return wt_seterr(err, WT_EINVAL,
		                 "register: a URI without control characters is required");
	/* the override rides after a tab in the URI (weightd 1.9: weightd/modelspec.c); an
	 * older weightd refuses a URI with a control character instead of ignoring it */
	size_t nu = strlen(uri), no = strlen(config_override);
	char *spec = malloc(nu + 1 + no + 1);
	if (spec == NULL)
		return wt_seterr(err, WT_ENOMEM, "register: out of memory");
	memcpy(spec, uri, nu);
	spec[nu] = '\t';
	memcpy(spec + nu + 1, config_override, no + 1);
	int rv = wt_client_register_progress(c, model, spec, progress, ctx, out, err);
	free(spec);
	if (rv == WT_EINVAL && err != NULL && strstr(err->msg, "control characters") != NULL)
		wt_errprefix(err,
		             "(a weightd older than 1.9 takes no config override: upgrade it)");
	return rv;
}

int wt_client_unregister(wt_client *c, const char *model, wt_admin_result *out, wt_errbuf *err)
{
	if (model == NULL || model[0] == '\0')
		return wt_seterr(err, WT_EINVAL, "unregister: a model name is required");
	return admin_call(c, WT_ADMIN_UNREGISTER, model, NULL, NULL, NULL, out, err);
}

void wt_admin_result_clear(wt_admin_result *r)
{
	if (r == NULL)
		return;
	free(r->text);
	memset(r, 0, sizeof(*r));
}
