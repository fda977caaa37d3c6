/*
 * models.c — the model registry: names -> checkpoint snapshots.
 *
 * Models come from the subfolders of models_dir and from `model NAME=URI`.
 * Each model keeps one open snapshot (store + ckpt + revision). Before serving,
 * the snapshot is revalidated (at most every revalidate_ms, or at once on a
 * cache miss): the store's listing (key, size, version) is fingerprinted and,
 * if it changed, the checkpoint is reopened; a new revision replaces the old
 * snapshot, so a changed checkpoint never serves stale bytes. A model that
 * fails to open is listed as unavailable with the loader's message and is
 * retried at the next revalidation.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "weightd/weightd_int.h"

typedef struct model_ent {
	char *name; /* owned, immutable */
	char *uri;  /* owned, immutable */
	pthread_mutex_t lk;
	/* fields below guarded by lk */
	wd_snap *snap; /* NULL when unavailable */
	wt_errbuf error;
	wt_hash128 fp;
	bool have_fp;
	uint64_t checked_ns;
} model_ent;

struct wd_models {
	model_ent *ents; /* sorted by name; immutable after open */
	size_t n;
	uint64_t revalidate_ns;
	bool locks_ready;               /* entry mutexes initialised (after sorting) */
	_Atomic uint64_t retired_bytes; /* store bytes of snapshots already freed */
};

/* Snapshot with a back pointer to the registry's byte counter. */
typedef struct snap_full {
	wd_snap pub;
	wd_models *m;
} snap_full;

void wd_snap_release(wd_snap *s)
{
	if (s == NULL)
		return;
	if (atomic_fetch_sub_explicit((_Atomic int *)&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	snap_full *sf = (snap_full *)s;
	if (s->st != NULL)
		atomic_fetch_add(&sf->m->retired_bytes, store_bytes_read(s->st));
	ckpt_close(s->ck);
	store_close(s->st);
	free(sf);
}

static wd_snap *snap_ref(wd_snap *s)
{
	if (s != NULL)
		atomic_fetch_add_explicit((_Atomic int *)&s->refs, 1, memory_order_relaxed);
	return s;
}

static int snap_open(wd_models *m, const model_ent *e, wd_snap **out, wt_errbuf *err)
{
	snap_full *sf = calloc(1, sizeof(*sf));
	if (sf == NULL)
		return wt_seterr(err, WT_ENOMEM, "model '%s': out of memory", e->name);
	sf->m = m;
	sf->pub.refs = 1;
	int rv = store_open(&sf->pub.st, e->uri, err);
	if (rv == WT_OK)
		rv = ckpt_open(&sf->pub.ck, sf->pub.st, err);
	if (rv != WT_OK) {
		wt_errprefix(err, "model '%s'", e->name);
		wd_snap_release(&sf->pub);
		return rv;
	}
	snprintf(sf->pub.revision, sizeof(sf->pub.revision), "%s", ckpt_revision(sf->pub.ck));
	*out = &sf->pub;
	return WT_OK;
}

/* Fingerprint of the store listing; false if the store cannot list. */
static bool fingerprint(store *st, wt_hash128 *out)
{
	store_list l = {0};
	if (store_list_objects(st, "", &l, NULL) != WT_OK)
		return false;
	common_hasher *h = common_hasher_new();
	if (h == NULL) {
		store_list_free(&l);
		return false;
	}
	for (size_t i = 0; i < l.n; i++) {
		uint8_t sz[8];
		for (int b = 0; b < 8; b++)
			sz[b] = (uint8_t)(l.objs[i].nbytes >> (8 * b));
		common_hasher_update(h, l.objs[i].key, strlen(l.objs[i].key) + 1);
		common_hasher_update(h, sz, sizeof(sz));
		const char *v = l.objs[i].version ? l.objs[i].version : "";
		common_hasher_update(h, v, strlen(v) + 1);
	}
	*out = common_hasher_digest(h);
	common_hasher_free(h);
	store_list_free(&l);
	return true;
}

/* Bring e up to date. Called with e->lk held. */
static void revalidate(wd_models *m, model_ent *e, bool force)
{
	uint64_t now = common_now_ns();
	if (!force && e->checked_ns != 0 && now - e->checked_ns < m->revalidate_ns)
		return;
	e->checked_ns = now;
	wt_hash128 fp;
	bool have_fp = false;
	if (e->snap != NULL) {
		have_fp = fingerprint(e->snap->st, &fp);
		if (have_fp && e->have_fp && common_hash128_eq(fp, e->fp))
			return; /* nothing changed */
	}
	wd_snap *fresh = NULL;
	wt_errbuf err;
	int rv = snap_open(m, e, &fresh, &err);
	if (rv != WT_OK) {
		if (e->snap != NULL)
			WT_LOG(WT_LOG_WARNING, "%s; model is unavailable until it opens again",
			       err.msg);
		wd_snap_release(e->snap);
		e->snap = NULL;
		e->have_fp = false;
		e->error = err;
		return;
	}
	if (!have_fp)
		have_fp = fingerprint(fresh->st, &fp);
	if (e->snap != NULL && strcmp(e->snap->revision, fresh->revision) == 0) {
		wd_snap_release(fresh); /* listing changed, checkpoint did not */
	} else {
		if (e->snap != NULL)
			WT_LOG(WT_LOG_NOTICE, "model '%s': revision %.12s -> %.12s", e->name,
			       e->snap->revision, fresh->revision);
		else
			WT_LOG(WT_LOG_INFO, "model '%s': revision %.12s (%s)", e->name,
			       fresh->revision, e->uri);
		wd_snap_release(e->snap);
		e->snap = fresh;
	}
	e->fp = fp;
	e->have_fp = have_fp;
	wt_errclear(&e->error);
}

static int add_ent(model_ent **ents, size_t *n, size_t *cap, const char *name, const char *uri,
                   wt_errbuf *err)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*ents)[i].name, name) == 0)
			return wt_seterr(err, WT_EDUP,
			                 "model '%s' is defined twice (%s and %s); rename one",
			                 name, (*ents)[i].uri, uri);
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		model_ent *v = realloc(*ents, nc * sizeof(*v));
		if (v == NULL)
			return wt_seterr(err, WT_ENOMEM, "models: out of memory");
		*ents = v;
		*cap = nc;
	}
	model_ent *e = &(*ents)[*n];
	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	e->uri = strdup(uri);
	if (e->name == NULL || e->uri == NULL) {
		free(e->name);
		free(e->uri);
		return wt_seterr(err, WT_ENOMEM, "models: out of memory");
	}
	(*n)++;
	return WT_OK;
}

static int scan_dir(const char *dir, bool explicit_dir, model_ent **ents, size_t *n, size_t *cap,
                    wt_errbuf *err)
{
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
		rv = add_ent(ents, n, cap, de->d_name, uri, err);
	}
	closedir(d);
	return rv;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const model_ent *)a)->name, ((const model_ent *)b)->name);
}

int wd_models_open(wd_models **out, const wd_config *cfg, wt_errbuf *err)
{
	wd_models *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return wt_seterr(err, WT_ENOMEM, "models: out of memory");
	m->revalidate_ns = cfg->revalidate_ms * 1000000ull;
	size_t cap = 0;
	/* models_dir is table row 1: explicit if set by file or flag. */
	bool explicit_dir = cfg->set[1] != 0;
	int rv = scan_dir(cfg->models_dir, explicit_dir, &m->ents, &m->n, &cap, err);
	for (size_t i = 0; rv == WT_OK && i < cfg->model.n; i++) {
		const char *spec = cfg->model.v[i];
		const char *eq = strchr(spec, '=');
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - spec), spec);
		rv = add_ent(&m->ents, &m->n, &cap, name, eq + 1, err);
	}
	if (rv != WT_OK) {
		wd_models_close(m);
		return rv;
	}
	if (m->n > 1)
		qsort(m->ents, m->n, sizeof(*m->ents), cmp_ent);
	for (size_t i = 0; i < m->n; i++) {
		model_ent *e = &m->ents[i];
		pthread_mutex_init(&e->lk, NULL);
		m->locks_ready = true;
		revalidate(m, e, true);
		if (e->snap == NULL)
			WT_LOG(WT_LOG_WARNING, "%s; listed as unavailable", e->error.msg);
	}
	*out = m;
	return WT_OK;
}

void wd_models_close(wd_models *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n; i++) {
		wd_snap_release(m->ents[i].snap);
		if (m->locks_ready)
			pthread_mutex_destroy(&m->ents[i].lk);
		free(m->ents[i].name);
		free(m->ents[i].uri);
	}
	free(m->ents);
	free(m);
}

size_t wd_models_count(const wd_models *m)
{
	return m->n;
}

void wd_models_info(wd_models *m, size_t i, wd_model_info *info)
{
	model_ent *e = &m->ents[i];
	memset(info, 0, sizeof(*info));
	info->name = e->name;
	info->uri = e->uri;
	pthread_mutex_lock(&e->lk);
	revalidate(m, e, false);
	info->snap = snap_ref(e->snap);
	info->available = e->snap != NULL;
	if (!info->available)
		snprintf(info->error, sizeof(info->error), "%s", e->error.msg);
	pthread_mutex_unlock(&e->lk);
}

int wd_models_get(wd_models *m, const char *name, bool force, wd_snap **out, wt_errbuf *err)
{
	model_ent key = {.name = (char *)name};
	model_ent *e = m->n ? bsearch(&key, m->ents, m->n, sizeof(*m->ents), cmp_ent) : NULL;
	if (e == NULL) {
		char names[400] = "";
		size_t len = 0;
		for (size_t i = 0; i < m->n && len < sizeof(names) - 1; i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
			                        i ? ", " : "", m->ents[i].name);
		return wt_seterr(err, WT_ENOTFOUND, "model '%s' is not served here; models: %s",
		                 name, m->n ? names : "(none)");
	}
	pthread_mutex_lock(&e->lk);
	revalidate(m, e, force);
	int rv = WT_OK;
	if (e->snap != NULL) {
		*out = snap_ref(e->snap);
	} else {
		rv = e->error.code ? e->error.code : WT_EUNAVAIL;
		if (err != NULL)
			*err = e->error;
	}
	pthread_mutex_unlock(&e->lk);
	return rv;
}

uint64_t wd_models_source_bytes(wd_models *m)
{
	uint64_t sum = atomic_load(&m->retired_bytes);
	for (size_t i = 0; i < m->n; i++) {
		pthread_mutex_lock(&m->ents[i].lk);
		if (m->ents[i].snap != NULL)
			sum += store_bytes_read(m->ents[i].snap->st);
		pthread_mutex_unlock(&m->ents[i].lk);
	}
	return sum;
}
