/*
 * models.c — the model registry: names -> checkpoint snapshots.
 *
 * Models come from the subfolders of models_dir, from `model NAME=URI` and
 * from admin REGISTER (registry.c keeps those in <cache_dir>/registered-models
 * and loads them after the others at start).
 * Each model keeps one open snapshot (store + ckpt + revision). Before serving,
 * the snapshot is revalidated (at most every revalidate_ms, or at once on a
 * cache miss): the store's listing (key, size, version) is fingerprinted and,
 * if it changed, the checkpoint is reopened; a new revision replaces the old
 * snapshot, so a changed checkpoint never serves stale bytes. A model that
 * fails to open is listed as unavailable with the loader's message and is
 * retried at the next revalidation.
 *
 * At start (models_load.c) every model is added first and then opened,
 * WD_OPEN_THREADS at a time. A model added pending
 * (admin REGISTER, registry.c) is not served, listed, saved or revalidated
 * by anyone but the thread that opens it, until registry.c settles it. An
 * open in progress publishes its ckpt_progress (ListModels shows how far it
 * got); unregistering the model or closing the daemon cancels it.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "weightd/models_int.h"

/* Entries allocated and not yet freed, in this process (wd_models_alive). */
static _Atomic size_t models_alive;

size_t wd_models_alive(void)
{
	return atomic_load(&models_alive);
}

/* Snapshot with a back pointer to the registry's counters. */
typedef struct snap_full {
	wd_snap pub;
	wd_models *m;
	/* counts of its store already in the registry's retired_* (snap_retire):
	 * written once, by the thread that drops the entry's reference */
	uint64_t folded_bytes, folded_rewrites;
} snap_full;

/* Add s's store counters, less what snap_retire added already, to the
 * registry's retired counters; fold: remember them as added. */
static void snap_fold(snap_full *sf, bool fold)
{
	if (sf->pub.st == NULL)
		return;
	uint64_t b = store_bytes_read(sf->pub.st), w = store_rewrites_found(sf->pub.st);
	atomic_fetch_add(&sf->m->retired_bytes, b - sf->folded_bytes);
	atomic_fetch_add(&sf->m->retired_rewrites, w - sf->folded_rewrites);
	if (fold) {
		sf->folded_bytes = b;
		sf->folded_rewrites = w;
	}
}

/* The entry drops its snapshot s (replaced, failed, removed): its counts move
 * to the retired ones now, not when the last request holding it ends, so the
 * sums (wd_models_source_bytes) never go down meanwhile. */
static void snap_retire(wd_snap *s)
{
	if (s != NULL)
		snap_fold((snap_full *)s, true);
	wd_snap_release(s);
}

void wd_snap_release(wd_snap *s)
{
	if (s == NULL)
		return;
	if (atomic_fetch_sub_explicit((_Atomic int *)&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	snap_full *sf = (snap_full *)s;
	snap_fold(sf, false);
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

static int snap_open(wd_models *m, const model_ent *e, ckpt_progress *prog, wd_snap **out,
                     wt_errbuf *err)
{
	snap_full *sf = calloc(1, sizeof(*sf));
	if (sf == NULL)
		return wt_seterr(err, WT_ENOMEM, "model '%s': out of memory", e->name);
	sf->m = m;
	sf->pub.refs = 1;
	int rv = store_open(&sf->pub.st, e->src, err);
	if (rv == WT_OK && e->source == WD_SRC_REGISTERED) /* what REGISTER's check allowed */
		rv = wd_reach_apply(&m->reach, sf->pub.st, e->src, err);
	if (rv == WT_OK && prog != NULL) /* a cancel also ends a request in flight */
		store_set_cancel(sf->pub.st, &prog->cancel);
	if (rv == WT_OK)
		rv = ckpt_open_with(&sf->pub.ck, sf->pub.st,
		                    &(ckpt_open_opts){.memo = m->memo,
		                                      .prog = prog,
		                                      .config_override = e->override},
		                    err);
	if (sf->pub.st != NULL) /* prog goes away with the open; the store serves on,
	                          its remote reads ended by wd_models_abort_reads */
		store_set_cancel(sf->pub.st, &m->abort_reads);
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

/*
 * Bring e up to date. Called with e->lk held; drops it while the source is
 * listed and the checkpoint opened (a new revision's content digest may read
 * for minutes). Meanwhile
 * a caller that may use the current snapshot (not force) gets it at once: the
 * old revision is served until the new one is ready, and requests for the
 * model never pile up on the data workers behind one open. A caller without
 * a snapshot waits for that open to end and takes its result; a forced caller
 * waits too, then checks again: that open's listing may predate the call.
 */
void models_revalidate(wd_models *m, model_ent *e, bool force)
{
	while (e->opening) {
		if (!force && e->snap != NULL)
			return;
		while (e->opening)
			pthread_cond_wait(&e->opened, &e->lk);
		if (!force)
			return;
	}
	uint64_t now = common_now_ns();
	if (e->removed || atomic_load(&m->closing))
		return;
	if (!force && e->checked_ns != 0 && now - e->checked_ns < atomic_load(&m->revalidate_ns))
		return;
	e->checked_ns = now;
	/* the listing too is done unlocked: on s3 or http it is remote requests */
	wd_snap *cur = snap_ref(e->snap);
	bool had_fp = e->have_fp;
	wt_hash128 old_fp = e->fp, fp;
	ckpt_progress prog = {0};
	e->opening = true;
	e->prog = &prog; /* read under lk; canceled by remove and cancel_opens */
	pthread_mutex_unlock(&e->lk);
	bool have_fp = cur != NULL && fingerprint(cur->st, &fp);
	/* a read found an object rewritten under its version: the listing is the
	 * same, the bytes are not (ckpt_read had the memo forget its digest) */
	bool changed = !(have_fp && had_fp && common_hash128_eq(fp, old_fp)) ||
	               (cur != NULL && ckpt_content_changed(cur->ck));
	wd_snap_release(cur);
	wd_snap *fresh = NULL;
	wt_errbuf err;
	int rv = WT_OK;
	if (changed) {
		rv = snap_open(m, e, &prog, &fresh, &err);
		if (rv == WT_OK && !have_fp)
			have_fp = fingerprint(fresh->st, &fp);
	}
	pthread_mutex_lock(&e->lk);
	e->opening = false;
	e->prog = NULL;
	pthread_cond_broadcast(&e->opened);
	if (!changed)
		return; /* nothing changed */
	if (e->removed || (rv == WT_ECANCELED && atomic_load(&m->closing))) {
		wd_snap_release(fresh); /* unregistered, or the daemon stops: as it was */
		return;
	}
	if (rv != WT_OK) {
		if (e->snap != NULL)
			WT_LOG(WT_LOG_WARNING, "%s; model is unavailable until it opens again",
			       err.msg);
		if (e->snap != NULL && m->notify != NULL)
			m->notify(m->notify_ctx);
		snap_retire(e->snap);
		e->snap = NULL;
		e->have_fp = false;
		e->error = err;
		return;
	}
	if (e->snap != NULL && strcmp(e->snap->revision, fresh->revision) == 0) {
		wd_snap_release(fresh); /* listing changed, checkpoint did not */
	} else {
		if (e->snap != NULL)
			WT_LOG(WT_LOG_NOTICE, "model '%s': revision %.12s -> %.12s", e->name,
			       e->snap->revision, fresh->revision);
		else
			WT_LOG(WT_LOG_INFO, "model '%s': revision %.12s (%s)", e->name,
			       fresh->revision, e->uri);
		snap_retire(e->snap);
		e->snap = fresh;
		if (m->notify != NULL)
			m->notify(m->notify_ctx); /* watchers (watch.c) */
	}
	e->fp = fp;
	e->have_fp = have_fp;
	wt_errclear(&e->error);
}

static model_ent *ent_new(const char *name, const char *uri, wd_model_source source)
{
	model_ent *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->source = source;
	e->name = strdup(name);
	e->uri = strdup(uri);
	if (e->name == NULL || e->uri == NULL ||
	    wd_spec_split(uri, &e->src, &e->override) != WT_OK) {
		free(e->name);
		free(e->uri);
		free(e);
		return NULL;
	}
	pthread_mutex_init(&e->lk, NULL);
	pthread_cond_init(&e->opened, NULL);
	atomic_init(&e->refs, 1); /* the list's */
	atomic_fetch_add(&models_alive, 1);
	return e;
}

static void ent_free(model_ent *e)
{
	atomic_fetch_sub(&models_alive, 1);
	wd_snap_release(e->snap);
	pthread_cond_destroy(&e->opened);
	pthread_mutex_destroy(&e->lk);
	free(e->name);
	free(e->uri);
	free(e->src);
	free(e->override);
	free(e);
}

/* Index where name is or would be; *found tells which. Call with m->lk held. */
static size_t find_pos(const wd_models *m, const char *name, bool *found)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->ents[mid]->name, name);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

void models_put(model_ent *e)
{
	if (e != NULL && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1)
		ent_free(e);
}

model_ent *models_find(wd_models *m, const char *name)
{
	bool found;
	pthread_rwlock_rdlock(&m->lk);
	size_t i = find_pos(m, name, &found);
	model_ent *e = found ? m->ents[i] : NULL;
	if (e != NULL)
		atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
	pthread_rwlock_unlock(&m->lk);
	return e;
}

bool models_has(wd_models *m, const char *name)
{
	bool found;
	pthread_rwlock_rdlock(&m->lk);
	find_pos(m, name, &found);
	pthread_rwlock_unlock(&m->lk);
	return found;
}

const char *wd_model_source_name(wd_model_source source)
{
	switch (source) {
	case WD_SRC_CONFIG:
		return "config";
	case WD_SRC_FOLDER:
		return "folder";
	case WD_SRC_REGISTERED:
		return "registered";
	}
	return "unknown";
}

int wd_models_add_from(wd_models *m, const char *name, const char *uri, wd_model_source source,
                       wd_open_mode mode, wt_errbuf *err)
{
	if (name == NULL || name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL ||
	    strlen(name) > 200)
		return wt_seterr(err, WT_EINVAL,
		                 "model name '%s' is not usable; use 1-200 characters without '/' "
		                 "and not starting with '.'",
		                 name ? name : "");
	if (uri == NULL || uri[0] == '\0' || uri[0] == '\t')
		return wt_seterr(err, WT_EINVAL,
		                 "model '%s': empty URI; use file:///dir, s3:// or "
		                 "http(s)://",
		                 name);
	const char *tab = strchr(uri, '\t');
	char *canon = NULL;
	int crv = tab != NULL ? ckpt_override_canonical(tab + 1, &canon, err) : WT_OK;
	free(canon);
	if (crv != WT_OK)
		return wt_errprefix(err, "model '%s'", name);
	model_ent *old = models_find(m, name);
	if (old != NULL) {
		wt_seterr(err, WT_EEXIST, "model '%s' already exists (%s); pick another name", name,
		          old->uri);
		models_put(old);
		return WT_EEXIST;
	}
	model_ent *e = ent_new(name, uri, source);
	if (e == NULL)
		return wt_seterr(err, WT_ENOMEM, "models: out of memory");
	e->pending = mode == WD_OPEN_PENDING;
	if (mode == WD_OPEN_NOW) {
		pthread_mutex_lock(&e->lk);
		models_revalidate(m, e, true); /* validation when added */
		pthread_mutex_unlock(&e->lk);
		if (e->snap == NULL)
			WT_LOG(WT_LOG_WARNING, "%s; listed as unavailable", e->error.msg);
	}
	pthread_rwlock_wrlock(&m->lk);
	bool found;
	size_t pos = find_pos(m, name, &found);
	int rv = WT_OK;
	if (found) {
		rv = wt_seterr(err, WT_EEXIST, "model '%s' already exists (%s); pick another name",
		               name, m->ents[pos]->uri);
	} else if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		model_ent **v = realloc(m->ents, nc * sizeof(*v));
		if (v == NULL)
			rv = wt_seterr(err, WT_ENOMEM, "models: out of memory");
		else {
			m->ents = v;
			m->cap = nc;
		}
	}
	if (rv == WT_OK) {
		memmove(&m->ents[pos + 1], &m->ents[pos], (m->n - pos) * sizeof(*m->ents));
		m->ents[pos] = e;
		m->n++;
	}
	pthread_rwlock_unlock(&m->lk);
	if (rv != WT_OK)
		models_put(e);
	return rv;
}

/* How far e's open in progress got (0, 0 when none). Call with e->lk held. */
static void progress_of(const model_ent *e, uint64_t *read, uint64_t *total)
{
	*read = e->prog != NULL ? atomic_load(&e->prog->done) : 0;
	*total = e->prog != NULL ? atomic_load(&e->prog->total) : 0;
}

/* "model 'x' is being registered: ..." with its progress. Call with e->lk held. */
static void pending_msg(const model_ent *e, char *buf, size_t cap)
{
	uint64_t read, total;
	char p[80];
	progress_of(e, &read, &total);
	snprintf(buf, cap,
	         "model '%s' is being registered: its checkpoint (%s) is read for its revision, "
	         "%s; retry when weightctl models lists it available",
	         e->name, e->uri, common_fmt_progress(p, sizeof(p), read, total));
}

int wd_models_list(wd_models *m, wd_model_info **out, size_t *n)
{
	pthread_rwlock_rdlock(&m->lk);
	size_t cnt = m->n;
	model_ent **ents = malloc((cnt ? cnt : 1) * sizeof(*ents));
	wd_model_info *info = calloc(cnt ? cnt : 1, sizeof(*info));
	if (ents == NULL || info == NULL) {
		pthread_rwlock_unlock(&m->lk);
		free(ents);
		free(info);
		return WT_ENOMEM;
	}
	for (size_t i = 0; i < cnt; i++) { /* each held past the list lock */
		ents[i] = m->ents[i];
		atomic_fetch_add_explicit(&ents[i]->refs, 1, memory_order_relaxed);
	}
	pthread_rwlock_unlock(&m->lk);
	size_t k = 0;
	for (size_t i = 0; i < cnt; i++) {
		model_ent *e = ents[i];
		pthread_mutex_lock(&e->lk);
		if (e->removed) { /* unregistered since the copy */
			pthread_mutex_unlock(&e->lk);
			models_put(e);
			continue;
		}
		info[k].ent = e; /* keeps name and uri; wd_models_list_free puts it */
		info[k].name = e->name;
		info[k].uri = e->src;
		info[k].override = e->override;
		info[k].source = e->source;
		if (!e->pending)
			models_revalidate(m, e, false);
		if (e->removed) { /* unregistered while revalidate() dropped the lock */
			pthread_mutex_unlock(&e->lk);
			info[k].ent = NULL;
			models_put(e);
			continue;
		}
		info[k].pending = e->pending;
		info[k].opening = e->opening;
		progress_of(e, &info[k].open_read, &info[k].open_total);
		info[k].snap = e->pending ? NULL : snap_ref(e->snap);
		info[k].available = info[k].snap != NULL;
		if (e->pending)
			pending_msg(e, info[k].error, sizeof(info[k].error));
		else if (!info[k].available)
			snprintf(info[k].error, sizeof(info[k].error), "%s", e->error.msg);
		common_utf8_scrub(info[k].error); /* a long URI cut inside a character */
		pthread_mutex_unlock(&e->lk);
		k++;
	}
	free(ents);
	*out = info;
	*n = k;
	return WT_OK;
}

void wd_models_list_free(wd_model_info *info, size_t n)
{
	for (size_t i = 0; info != NULL && i < n; i++) {
		wd_snap_release(info[i].snap);
		models_put(info[i].ent);
	}
	free(info);
}

int wd_models_get(wd_models *m, const char *name, bool force, wd_snap **out, wt_errbuf *err)
{
	model_ent *e = models_find(m, name);
	if (e == NULL) {
		char names[400] = "";
		size_t len = 0;
		pthread_rwlock_rdlock(&m->lk);
		for (size_t i = 0; i < m->n && len < sizeof(names) - 1; i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
			                        i ? ", " : "", m->ents[i]->name);
		pthread_rwlock_unlock(&m->lk);
		return wt_seterr(err, WT_ENOTFOUND, "model '%s' is not served here; models: %s",
		                 name, names[0] ? names : "(none)");
	}
	pthread_mutex_lock(&e->lk);
	if (e->pending) {
		if (err != NULL) {
			pending_msg(e, err->msg, sizeof(err->msg));
			err->code = WT_ENOTFOUND;
		}
		pthread_mutex_unlock(&e->lk);
		models_put(e);
		return WT_ENOTFOUND; /* not served yet; clients would retry WT_EBUSY */
	}
	models_revalidate(m, e, force);
	int rv = WT_OK;
	if (e->removed) {
		rv = wt_seterr(err, WT_ENOTFOUND, "model '%s' was unregistered", name);
	} else if (e->snap != NULL) {
		*out = snap_ref(e->snap);
	} else {
		rv = e->error.code ? e->error.code : WT_EUNAVAIL;
		if (err != NULL)
			*err = e->error;
	}
	pthread_mutex_unlock(&e->lk);
	models_put(e);
	return rv;
}

void wd_models_count(wd_models *m, uint64_t out[WD_MODEL_N_STATES])
{
	memset(out, 0, WD_MODEL_N_STATES * sizeof(*out));
	pthread_rwlock_rdlock(&m->lk);
	for (size_t i = 0; i < m->n; i++) {
		model_ent *e = m->ents[i];
		pthread_mutex_lock(&e->lk);
		out[e->pending        ? WD_MODEL_REGISTERING
		    : e->snap != NULL ? WD_MODEL_AVAILABLE
		    : e->opening      ? WD_MODEL_OPENING
		                      : WD_MODEL_UNAVAILABLE]++;
		pthread_mutex_unlock(&e->lk);
	}
	pthread_rwlock_unlock(&m->lk);
}

/* retired plus count(store) of the snapshot each entry serves now (one that
 * snap_retire folded into retired is no longer an entry's). */
static uint64_t sum_stores(wd_models *m, const _Atomic uint64_t *retired,
                           uint64_t (*count)(const store *))
{
	uint64_t sum = atomic_load(retired);
	pthread_rwlock_rdlock(&m->lk);
	for (size_t i = 0; i < m->n; i++) {
		model_ent *e = m->ents[i];
		pthread_mutex_lock(&e->lk);
		if (e->snap != NULL)
			sum += count(e->snap->st);
		pthread_mutex_unlock(&e->lk);
	}
	pthread_rwlock_unlock(&m->lk);
	return sum;
}

uint64_t wd_models_source_bytes(wd_models *m)
{
	return sum_stores(m, &m->retired_bytes, store_bytes_read);
}

uint64_t wd_models_source_rewrites(wd_models *m)
{
	return sum_stores(m, &m->retired_rewrites, store_rewrites_found);
}

bool wd_models_find(wd_models *m, const char *name, wd_model_source *source, char **uri)
{
	model_ent *e = models_find(m, name);
	if (e == NULL)
		return false;
	*source = e->source;
	if (uri != NULL)
		*uri = strdup(e->uri);
	models_put(e);
	return true;
}

int wd_models_remove(wd_models *m, const char *name, wt_errbuf *err)
{
	pthread_rwlock_wrlock(&m->lk);
	bool found;
	size_t pos = find_pos(m, name, &found);
	int rv = WT_OK;
	if (!found)
		rv = wt_seterr(err, WT_ENOTFOUND, "model '%s' is not served here", name);
	else if (m->ents[pos]->source != WD_SRC_REGISTERED)
		rv = wt_seterr(err, WT_EPERM,
		               "model '%s' comes from the %s, not from a registration", name,
		               wd_model_source_name(m->ents[pos]->source));
	model_ent *e = NULL;
	if (rv == WT_OK) {
		e = m->ents[pos]; /* the list's reference, put below */
		memmove(&m->ents[pos], &m->ents[pos + 1], (m->n - pos - 1) * sizeof(*m->ents));
		m->n--;
	}
	pthread_rwlock_unlock(&m->lk);
	if (e != NULL) {
		pthread_mutex_lock(&e->lk);
		e->removed = true;
		if (e->prog != NULL) /* an open in progress ends at its next block */
			atomic_store(&e->prog->cancel, true);
		snap_retire(e->snap); /* requests holding a reference finish with it */
		e->snap = NULL;
		pthread_mutex_unlock(&e->lk);
		models_put(e); /* freed now, or by the last thread that holds it */
	}
	return rv;
}

void wd_models_each(wd_models *m, wd_model_source source,
                    void (*fn)(void *ctx, const char *name, const char *uri), void *ctx)
{
	pthread_rwlock_rdlock(&m->lk);
	for (size_t i = 0; i < m->n; i++) {
		model_ent *e = m->ents[i];
		pthread_mutex_lock(&e->lk);
		bool pending = e->pending;
		pthread_mutex_unlock(&e->lk);
		if (e->source == source && !pending)
			fn(ctx, e->name, e->uri);
	}
	pthread_rwlock_unlock(&m->lk);
}

int wd_models_open_pending(wd_models *m, const char *name, wd_snap **out, wt_errbuf *err)
{
	*out = NULL;
	model_ent *e = models_find(m, name);
	if (e == NULL)
		return wt_seterr(err, WT_ENOTFOUND, "model '%s' was unregistered", name);
	pthread_mutex_lock(&e->lk);
	models_revalidate(m, e, true);
	int rv = WT_OK;
	if (e->removed)
		rv = wt_seterr(err, WT_ECANCELED, "model '%s' was unregistered while it opened",
		               name);
	else if (atomic_load(&m->closing) && e->snap == NULL)
		rv = wt_seterr(err, WT_ECANCELED, "model '%s': weightd is stopping", name);
	else if (e->snap != NULL)
		*out = snap_ref(e->snap);
	else {
		rv = e->error.code ? e->error.code : WT_EUNAVAIL;
		if (err != NULL)
			*err = e->error;
	}
	pthread_mutex_unlock(&e->lk);
	models_put(e);
	return rv;
}

void wd_models_settle(wd_models *m, const char *name)
{
	model_ent *e = models_find(m, name);
	if (e == NULL)
		return;
	pthread_mutex_lock(&e->lk);
	e->pending = false;
	if (m->notify != NULL)
		m->notify(m->notify_ctx); /* a new model: watchers (watch.c) */
	pthread_mutex_unlock(&e->lk);
	models_put(e);
}

bool wd_models_pending(wd_models *m, const char *name, uint64_t *read, uint64_t *total)
{
	model_ent *e = models_find(m, name);
	if (e == NULL)
		return false;
	pthread_mutex_lock(&e->lk);
	bool pending = e->pending;
	progress_of(e, read, total);
	pthread_mutex_unlock(&e->lk);
	models_put(e);
	return pending;
}

int wd_models_keep_line(wd_models *m, const char *name, const char *uri)
{
	size_t n = strlen(name) + strlen(uri) + 2;
	char *l = malloc(n), **v = realloc(m->kept, (m->n_kept + 1) * sizeof(*v));
	if (v != NULL)
		m->kept = v;
	if (l == NULL || v == NULL) {
		free(l);
		return WT_ENOMEM;
	}
	snprintf(l, n, "%s=%s", name, uri);
	m->kept[m->n_kept++] = l;
	return WT_OK;
}

bool wd_models_drop_kept(wd_models *m, const char *name)
{
	size_t nl = strlen(name), k = 0;
	bool dropped = false;
	for (size_t i = 0; i < m->n_kept; i++) {
		if (strncmp(m->kept[i], name, nl) == 0 && m->kept[i][nl] == '=') {
			free(m->kept[i]);
			dropped = true;
		} else {
			m->kept[k++] = m->kept[i];
		}
	}
	m->n_kept = k;
	return dropped;
}

size_t wd_models_kept(const wd_models *m, const char *const **lines)
{
	*lines = (const char *const *)m->kept;
	return m->n_kept;
}

void wd_models_abort_reads(wd_models *m)
{
	atomic_store(&m->abort_reads, true);
}

void wd_models_cancel_opens(wd_models *m)
{
	atomic_store(&m->closing, true);
	pthread_rwlock_rdlock(&m->lk);
	for (size_t i = 0; i < m->n; i++) {
		model_ent *e = m->ents[i];
		pthread_mutex_lock(&e->lk);
		if (e->prog != NULL)
			atomic_store(&e->prog->cancel, true);
		pthread_mutex_unlock(&e->lk);
	}
	pthread_rwlock_unlock(&m->lk);
}
