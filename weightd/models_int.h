/*
 * models_int.h — the model registry's own internals, shared by models.c
 * (entries, revalidation, requests) and models_load.c (start, rescan, end).
 * Nothing else includes it.
 */
#ifndef WEIGHTD_MODELS_INT_H
#define WEIGHTD_MODELS_INT_H

#include "weightd/weightd_int.h"

typedef struct model_ent {
	_Atomic uint32_t refs;  /* the list's, and one per models_find holder */
	char *name;             /* owned, immutable */
	char *uri;              /* owned, immutable: the source spec (modelspec.c), its identity */
	char *src;              /* owned, immutable: the spec's URI, what the store opens */
	char *override;         /* owned, immutable: the spec's configuration override; NULL */
	wd_model_source source; /* immutable */
	pthread_mutex_t lk;
	pthread_cond_t opened; /* signalled when an open ends (opening -> false) */
	/* fields below guarded by lk */
	bool opening;        /* a thread opens the checkpoint with lk dropped (revalidate) */
	bool removed;        /* unregistered: never reopened, not found */
	bool pending;        /* being registered: served by nobody yet (registry.c) */
	ckpt_progress *prog; /* the open in progress (opening), else NULL */
	wd_snap *snap;       /* NULL when unavailable */
	wt_errbuf error;
	wt_hash128 fp;
	bool have_fp;
	uint64_t checked_ns;
} model_ent;

struct wd_models {
	pthread_rwlock_t lk; /* guards the list below; each entry has its own lk */
	model_ent **ents;    /* sorted by name; each holds a reference (refs) */
	size_t n, cap;
	char *registry_path; /* <cache_dir>/registered-models; owned */
	wd_reach reach;      /* what a model REGISTER added may reach (wd_reach_apply); owned */
	char **kept;         /* registry lines NAME=URI kept, not served (registry.c;
	                        under its lock); owned */
	size_t n_kept;
	_Atomic uint64_t revalidate_ns;    /* reload-safe (SIGHUP) */
	_Atomic uint64_t retired_bytes;    /* store bytes of snapshots already dropped */
	_Atomic uint64_t retired_rewrites; /* store_rewrites_found of those */
	_Atomic bool closing;              /* wd_models_cancel_opens: no new opens */
	_Atomic bool abort_reads;          /* wd_models_abort_reads: snapshot stores' cancel */
	const ckpt_memo *memo;             /* borrowed; may be NULL */
	void (*notify)(void *ctx);         /* revision changed (wd_models_set_notify) */
	void *notify_ctx;
};

/* Bring e up to date (models.c); call with e->lk held (dropped meanwhile). */
void models_revalidate(wd_models *m, model_ent *e, bool force);
/* The entry named name with a reference the caller drops with models_put,
 * or NULL (the list lock is taken and dropped). An entry removed from the
 * list stays valid until its last holder puts it. */
model_ent *models_find(wd_models *m, const char *name);
/* Drop a reference; the last one frees e and releases its snapshot. NULL-safe. */
void models_put(model_ent *e);
/* Is name in the list? (no reference taken) */
bool models_has(wd_models *m, const char *name);

#endif
