/*
 * regpolicy.c — what an admin REGISTER may reach, and how long its source check
 * may take (docs/weightd.md "Security: tokens, roles and limits").
 *
 * Reach (wd_register_allowed), by URI scheme:
 *   file://PATH, PATH   the realpath of PATH lies in the realpath of one of
 *                       register_roots (none set: models_dir), compared by whole
 *                       path components (/models2 is not under /models)
 *   http(s)://HOST...   HOST (and port) is in register_hosts; no userinfo
 *   s3://BUCKET/...     BUCKET is in register_buckets
 *   anything else       refused
 * The answer never says whether a refused path exists.
 *
 * Time (wd_register_probe): the checkpoint is opened (store, config, index and
 * headers, as the registration will; not its tensor bytes: the content digest
 * is read by the registration itself, after the probe, however long it takes)
 * on a helper thread; if it gives no answer within
 * register_timeout_ms the registration fails with WT_ETIMEDOUT and the helper
 * is left to end on its own (libcurl's connect and low-speed timeouts end it);
 * at most WD_PROBES_MAX such helpers run at once, more is WT_EBUSY.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weightd/server_int.h"

#define WD_PROBES_MAX 4

static bool under_root(const char *real, const char *root)
{
	char *rr = realpath(root, NULL);
	if (rr == NULL)
		return false;
	size_t n = strlen(rr);
	bool yes = strncmp(real, rr, n) == 0 &&
	           (real[n] == '\0' || real[n] == '/' || (n == 1 && rr[0] == '/'));
	free(rr);
	return yes;
}

static bool in_roots(const wd_reach *r, const char *real)
{
	if (r->roots.n == 0)
		return under_root(real, r->models_dir);
	for (size_t i = 0; i < r->roots.n; i++)
		if (under_root(real, r->roots.v[i]))
			return true;
	return false;
}

/* cfg's reach, borrowed (never freed). */
static wd_reach reach_of(const wd_config *cfg)
{
	return (wd_reach){cfg->register_roots, cfg->models_dir, cfg->register_hosts};
}

int wd_reach_init(wd_reach *r, const wd_config *cfg)
{
	*r = (wd_reach){0};
	if (wd_strlist_copy(&r->roots, &cfg->register_roots) != WT_OK ||
	    wd_strlist_copy(&r->hosts, &cfg->register_hosts) != WT_OK ||
	    (r->models_dir = strdup(cfg->models_dir != NULL ? cfg->models_dir : "")) == NULL) {
		wd_reach_free(r);
		return WT_ENOMEM;
	}
	return WT_OK;
}

void wd_reach_free(wd_reach *r)
{
	wd_strlist_free(&r->roots);
	wd_strlist_free(&r->hosts);
	free(r->models_dir);
	r->models_dir = NULL;
}

int wd_reach_apply(const wd_reach *r, store *st, const char *uri, wt_errbuf *err)
{
	char *root = NULL;
	int rv = store_local_root(st, &root, err);
	if (rv == WT_OK && root != NULL && !in_roots(r, root))
		rv = wt_seterr(err, WT_EPERM,
		               "register %s: the folder opened is not under register_roots (%s): "
		               "it was renamed or swapped for a symlink after the check; register "
		               "a folder that stays put",
		               uri, r->roots.n ? "as configured" : "unset: models_dir");
	free(root);
	if (rv == WT_OK)
		rv = store_limit_redirects(st, r->hosts.v, r->hosts.n, err);
	return rv;
}

/* path does not exist: is its deepest existing ancestor inside a root? Then
 * saying so tells nothing about folders outside the roots. */
static bool missing_in_roots(const wd_reach *r, const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return false;
	char *slash;
	while ((slash = strrchr(buf, '/')) != NULL && slash != buf) {
		*slash = '\0';
		char *real = realpath(buf, NULL);
		if (real != NULL) {
			bool yes = in_roots(r, real);
			free(real);
			return yes;
		}
	}
	return false;
}

static int check_path(const wd_config *cfg, const char *uri, const char *path, wt_errbuf *err)
{
	wd_reach r = reach_of(cfg);
	char *real = path[0] != '\0' ? realpath(path, NULL) : NULL;
	int e = errno;
	bool exists = real != NULL, ok = exists && in_roots(&r, real);
	free(real);
	if (ok)
		return WT_OK;
	if (!exists && e == ENOENT && missing_in_roots(&r, path))
		return wt_seterr(err, WT_ENOTFOUND,
		                 "register %s: no such folder; give a model folder", uri);
	return wt_seterr(err, WT_EPERM,
	                 "register %s: not an existing folder under register_roots (%s); add "
	                 "its parent folder to register_roots in the daemon's configuration",
	                 uri, cfg->register_roots.n ? "as configured" : "unset: models_dir");
}

static int check_host(const wd_config *cfg, const char *uri, const char *rest, bool tls,
                      wt_errbuf *err)
{
	size_t n = strcspn(rest, "/?#");
	if (memchr(rest, '@', n) != NULL)
		return wt_seterr(err, WT_EPERM,
		                 "register %s: user names or passwords in the URL are not allowed; "
		                 "give credentials through the environment (see docs/stores.md)",
		                 uri);
	const char *h, *p;
	size_t hl, pl;
	store_split_hostport(rest, n, &h, &hl, &p, &pl);
	if (pl == 0) {
		p = tls ? "443" : "80";
		pl = strlen(p);
	}
	if (store_host_listed(cfg->register_hosts.v, cfg->register_hosts.n, h, hl, p, pl))
		return WT_OK;
	return wt_seterr(err, WT_EPERM,
	                 "register %s: host %.*s port %.*s is not in register_hosts; add "
	                 "HOST[:PORT] to register_hosts in the daemon's configuration",
	                 uri, (int)hl, h, (int)pl, p);
}

static int check_bucket(const wd_config *cfg, const char *uri, const char *rest, wt_errbuf *err)
{
	size_t n = strcspn(rest, "/");
	for (size_t i = 0; n > 0 && i < cfg->register_buckets.n; i++)
		if (strlen(cfg->register_buckets.v[i]) == n &&
		    memcmp(cfg->register_buckets.v[i], rest, n) == 0)
			return WT_OK;
	return wt_seterr(err, WT_EPERM,
	                 "register %s: bucket '%.*s' is not in register_buckets; add it to "
	                 "register_buckets in the daemon's configuration",
	                 uri, (int)n, rest);
}

int wd_register_allowed(const wd_config *cfg, const char *uri, wt_errbuf *err)
{
	if (strchr(uri, '\t') != NULL) { /* a spec (modelspec.c): its URI decides */
		char *bare = NULL, *override = NULL;
		if (wd_spec_split(uri, &bare, &override) != WT_OK)
			return wt_seterr(err, WT_ENOMEM, "register: out of memory");
		int rv = wd_register_allowed(cfg, bare, err);
		free(bare);
		free(override);
		return rv;
	}
	if (strncmp(uri, "file://", 7) == 0)
		return check_path(cfg, uri, uri + 7, err);
	if (strncmp(uri, "http://", 7) == 0)
		return check_host(cfg, uri, uri + 7, false, err);
	if (strncmp(uri, "https://", 8) == 0)
		return check_host(cfg, uri, uri + 8, true, err);
	if (strncmp(uri, "s3://", 5) == 0)
		return check_bucket(cfg, uri, uri + 5, err);
	if (strstr(uri, "://") == NULL)
		return check_path(cfg, uri, uri, err);
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "register %s: scheme not supported; use file://, a path, http(s):// or "
	                 "s3://",
	                 uri);
}

/* ---- bounded source check ---- */

typedef struct probe {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	int refs; /* waiter + helper; guarded by lk */
	bool done;
	int rv;
	wt_errbuf err;
	wd_reach reach; /* what the opened store may reach (wd_reach_apply) */
	char uri[];
} probe;

static atomic_int probes_running;

static void probe_unref(probe *p)
{
	pthread_mutex_lock(&p->lk);
	bool last = --p->refs == 0;
	pthread_mutex_unlock(&p->lk);
	if (last) {
		wd_reach_free(&p->reach);
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->lk);
		free(p);
	}
}

static void *probe_main(void *arg)
{
	probe *p = arg;
	store *st = NULL;
	ckpt *ck = NULL;
	wt_errbuf err;
	char *uri = NULL, *override = NULL; /* p->uri is a spec (modelspec.c) */
	int rv = wd_spec_split(p->uri, &uri, &override) == WT_OK
	             ? WT_OK
	             : wt_seterr(&err, WT_ENOMEM, "register: out of memory");
	if (rv == WT_OK)
		rv = store_open(&st, uri, &err);
	if (rv == WT_OK)
		rv = wd_reach_apply(&p->reach, st, uri, &err);
	/* not its bytes: no digest here (quick) */
	ckpt_open_opts o = {.quick = true, .config_override = override};
	if (rv == WT_OK)
		rv = ckpt_open_with(&ck, st, &o, &err);
	free(uri);
	free(override);
	ckpt_close(ck);
	store_close(st);
	pthread_mutex_lock(&p->lk);
	p->done = true;
	p->rv = rv;
	if (rv != WT_OK)
		p->err = err;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->lk);
	atomic_fetch_sub(&probes_running, 1);
	probe_unref(p);
	return NULL;
}

int wd_register_probe(const char *uri, const wd_config *cfg, uint64_t timeout_ms, wt_errbuf *err)
{
	if (atomic_fetch_add(&probes_running, 1) >= WD_PROBES_MAX) {
		atomic_fetch_sub(&probes_running, 1);
		return wt_seterr(err, WT_EBUSY,
		                 "register %s: %d earlier registrations are still waiting on their "
		                 "sources; retry later",
		                 uri, WD_PROBES_MAX);
	}
	size_t n = strlen(uri);
	probe *p = calloc(1, sizeof(*p) + n + 1);
	if (p == NULL) {
		atomic_fetch_sub(&probes_running, 1);
		return wt_seterr(err, WT_ENOMEM, "register: out of memory");
	}
	memcpy(p->uri, uri, n + 1);
	if (wd_reach_init(&p->reach, cfg) != WT_OK) {
		free(p);
		atomic_fetch_sub(&probes_running, 1);
		return wt_seterr(err, WT_ENOMEM, "register: out of memory");
	}
	pthread_mutex_init(&p->lk, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->refs = 2;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int e = pthread_create(&t, &at, probe_main, p);
	pthread_attr_destroy(&at);
	if (e != 0) {
		p->refs = 1;
		atomic_fetch_sub(&probes_running, 1);
		probe_unref(p);
		return wt_seterr(err, WT_ENOMEM, "register: cannot start a thread: %s",
		                 strerror(e));
	}
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	uint64_t ns = (uint64_t)dl.tv_nsec + timeout_ms * 1000000ull;
	dl.tv_sec += (time_t)(ns / 1000000000ull);
	dl.tv_nsec = (long)(ns % 1000000000ull);
	pthread_mutex_lock(&p->lk);
	while (!p->done && pthread_cond_timedwait(&p->cv, &p->lk, &dl) == 0)
		;
	bool timed_out = !p->done;
	int rv = timed_out ? WT_ETIMEDOUT : p->rv;
	if (!timed_out && rv != WT_OK)
		*err = p->err;
	pthread_mutex_unlock(&p->lk);
	probe_unref(p);
	if (timed_out)
		wt_seterr(err, WT_ETIMEDOUT,
		          "register %s: the source gave no checkpoint within register_timeout_ms "
		          "(%llu ms); check the address, or raise register_timeout_ms",
		          uri, (unsigned long long)timeout_ms);
	return rv;
}
