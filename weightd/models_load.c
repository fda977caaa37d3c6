/*
 * models_load.c — the model registry's start and end: the `model` keys, the
 * subfolders of models_dir and the registry file (registry.c) are added
 * first, then opened WD_OPEN_THREADS at a time before weightd serves them
 * (a new revision's digest reads every byte; each model's files are read in
 * parallel too); a rescan (SIGHUP) adds new subfolders.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "weightd/models_int.h"

/* The model_override of model (key or folder) name, NULL for none. */
static const char *config_override_of(const wd_config *cfg, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < cfg->model_override.n; i++)
		if (strncmp(cfg->model_override.v[i], name, n) == 0 &&
		    cfg->model_override.v[i][n] == '=')
			return cfg->model_override.v[i] + n + 1;
	return NULL;
}

/* Add every subfolder of cfg's models_dir not yet known, each under its model_override if
 * cfg has one. at_start: a name that already exists is a configuration error (WT_EDUP);
 * otherwise it is skipped. */
static int scan_dir(wd_models *m, const wd_config *cfg, bool explicit_dir, bool at_start,
                    size_t *added, wt_errbuf *err)
{
	const char *dir = cfg->models_dir;
	char abs[PATH_MAX];
	DIR *d = realpath(dir, abs) ? opendir(abs) : NULL;
	if (d == NULL) {
		if (!explicit_dir) {
			WT_LOG(WT_LOG_NOTICE, "models_dir %s: %s; serving only --model entries",
			       dir, strerror(errno));
			return WT_OK;
		}
		return wt_seterr(err, WT_ECONFIG, "models_dir %s: %s; create it or fix the path",
		                 dir, strerror(errno));
	}
	int rv = WT_OK;
	struct dirent *de;
	while (rv == WT_OK && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char path[PATH_MAX];
		int pn = snprintf(path, sizeof(path), "%s/%s", abs, de->d_name);
		if (pn < 0 || (size_t)pn >= sizeof(path))
			continue;
		struct stat sb;
		if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
			continue;
		char uri[PATH_MAX + 8];
		int un = snprintf(uri, sizeof(uri), "file://%s", path);
		if (un < 0 || (size_t)un >= sizeof(uri))
			continue;
		if (!at_start && models_has(m, de->d_name))
			continue;
		/* listed first, then opened: an open in progress is canceled by a stop
		 * (wd_models_cancel_opens reaches listed entries only) */
		char *spec = NULL; /* the URI and the folder's model_override (modelspec.c) */
		rv = wd_spec_make(uri, config_override_of(cfg, de->d_name), &spec, err);
		if (rv == WT_OK)
			rv = wd_models_add_from(m, de->d_name, spec, WD_SRC_FOLDER, WD_OPEN_LATER,
			                        err);
		free(spec);
		if (rv == WT_OK && added != NULL)
			(*added)++;
		model_ent *e = rv == WT_OK && !at_start ? models_find(m, de->d_name) : NULL;
		if (e != NULL) {
			pthread_mutex_lock(&e->lk);
			models_revalidate(m, e, true);
			if (e->snap == NULL)
				WT_LOG(WT_LOG_WARNING, "%s; listed as unavailable", e->error.msg);
			pthread_mutex_unlock(&e->lk);
			models_put(e);
		}
		if (rv == WT_EEXIST && !at_start)
			rv = WT_OK; /* raced with a registration */
	}
	closedir(d);
	return rv;
}

int wd_models_rescan(wd_models *m, const wd_config *cfg, size_t *added, wt_errbuf *err)
{
	*added = 0;
	return scan_dir(m, cfg, true, false, added, err);
}

/* Start: open every model added WD_OPEN_LATER, WD_OPEN_THREADS at a time
 * (each new revision reads all its bytes; its files are read in parallel
 * too). Before the models are served: nothing else touches them. */
typedef struct open_run {
	wd_models *m;
	_Atomic size_t next;
} open_run;

static void *open_main(void *arg)
{
	open_run *r = arg;
	for (size_t i; (i = atomic_fetch_add(&r->next, 1)) < r->m->n;) {
		model_ent *e = r->m->ents[i];
		pthread_mutex_lock(&e->lk);
		models_revalidate(r->m, e, true);
		if (e->snap == NULL && e->source == WD_SRC_REGISTERED)
			WT_LOG(
			    WT_LOG_WARNING,
			    "registry %s: registered model '%s' (%s) does not open: %s; kept "
			    "registered and listed unavailable (weightctl admin unregister --model "
			    "%s removes it)",
			    r->m->registry_path, e->name, e->uri, e->error.msg, e->name);
		else if (e->snap == NULL)
			WT_LOG(WT_LOG_WARNING, "%s; listed as unavailable", e->error.msg);
		pthread_mutex_unlock(&e->lk);
	}
	return NULL;
}

static void open_all(wd_models *m)
{
	open_run r = {.m = m};
	pthread_t th[WD_OPEN_THREADS];
	unsigned started = 0;
	uint64_t t0 = common_now_ns();
	int e = 0;
	while (started + 1 < WD_OPEN_THREADS && started + 1 < m->n &&
	       (e = pthread_create(&th[started], NULL, open_main, &r)) == 0)
		started++;
	if (e != 0) /* fewer at once; the caller still opens them all */
		WT_LOG(WT_LOG_WARNING, "models: no thread to open models in parallel (%s)",
		       strerror(e));
	open_main(&r); /* the caller is one of the threads */
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	size_t failed = 0;
	for (size_t i = 0; i < m->n; i++)
		failed += m->ents[i]->snap == NULL; /* no other thread yet */
	if (m->n > 1)
		WT_LOG(failed ? WT_LOG_WARNING : WT_LOG_INFO,
		       "models: %zu opened in %.2f s, up to %u at a time; %zu unavailable",
		       m->n - failed, (double)(common_now_ns() - t0) / 1e9, started + 1, failed);
}

int wd_models_open(wd_models **out, const wd_config *cfg, const ckpt_memo *memo, wt_errbuf *err)
{
	int rv = wd_models_add_all(out, cfg, memo, err);
	if (rv == WT_OK)
		wd_models_open_listed(*out);
	return rv;
}

void wd_models_open_listed(wd_models *m)
{
	open_all(m);
}

int wd_models_add_all(wd_models **out, const wd_config *cfg, const ckpt_memo *memo, wt_errbuf *err)
{
	wd_models *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return wt_seterr(err, WT_ENOMEM, "models: out of memory");
	m->memo = memo;
	pthread_rwlock_init(&m->lk, NULL);
	atomic_store(&m->revalidate_ns, cfg->revalidate_ms * 1000000ull);
	int rv = WT_OK;
	for (size_t i = 0; rv == WT_OK && i < cfg->model.n; i++) {
		const char *spec = cfg->model.v[i];
		const char *eq = strchr(spec, '=');
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - spec), spec);
		char *src = NULL; /* the URI and its model_override (modelspec.c) */
		rv = wd_spec_make(eq + 1, config_override_of(cfg, name), &src, err);
		if (rv == WT_OK)
			rv = wd_models_add_from(m, name, src, WD_SRC_CONFIG, WD_OPEN_LATER, err);
		free(src);
	}
	/* a missing models_dir is an error only when set explicitly (file or flag) */
	if (rv == WT_OK)
		rv = scan_dir(m, cfg, wd_config_is_set(cfg, "models_dir"), true, NULL, err);
	if (rv == WT_EEXIST) { /* the same name twice in the configuration */
		rv = WT_EDUP;
		if (err != NULL)
			err->code = WT_EDUP;
	}
	size_t plen = strlen(cfg->cache_dir) + sizeof("/" WD_REGISTRY_FILE);
	if (rv == WT_OK && (m->registry_path = malloc(plen)) == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "models: out of memory");
	if (rv == WT_OK)
		snprintf(m->registry_path, plen, "%s/%s", cfg->cache_dir, WD_REGISTRY_FILE);
	if (rv == WT_OK && wd_reach_init(&m->reach, cfg) != WT_OK)
		rv = wt_seterr(err, WT_ENOMEM, "models: out of memory");
	if (rv == WT_OK)
		wd_registry_load(m, cfg); /* after the folder and config models; never fails */
	if (rv != WT_OK) {
		wd_models_close(m);
		return rv;
	}
	*out = m;
	return WT_OK;
}

void wd_models_close(wd_models *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n; i++)
		models_put(m->ents[i]); /* every holder has ended: frees it */
	free(m->ents);
	for (size_t i = 0; i < m->n_kept; i++)
		free(m->kept[i]);
	free(m->kept);
	free(m->registry_path);
	wd_reach_free(&m->reach);
	pthread_rwlock_destroy(&m->lk);
	free(m);
}

void wd_models_set_notify(wd_models *m, void (*fn)(void *ctx), void *ctx)
{
	m->notify_ctx = ctx;
	m->notify = fn;
}

void wd_models_set_revalidate(wd_models *m, uint64_t ms)
{
	atomic_store(&m->revalidate_ns, ms * 1000000ull);
}

const char *wd_models_registry_path(const wd_models *m)
{
	return m->registry_path;
}
