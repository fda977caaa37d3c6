/*
 * weightd_int.h — private to weightd/ (and its unit tests): the daemon's
 * services, which know nothing of the server: worker pool, shard ids,
 * single-flight table, model registry and registered models. The server's
 * own internals (requests, pipes, peers, metrics, struct wd_server) are in
 * server_int.h, which includes this header.
 */
#ifndef WT_WEIGHTD_INT_H
#define WT_WEIGHTD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "loader/loader.h"
#include "weightd/weightd.h"
#include "weights/error.h"
#include "weights/layout.h"

/* ===================== worker pool (pool.c) ===================== */

/* A unit of blocking work. Intrusive: the pool never allocates per job. */
typedef struct wd_job {
	struct wd_job *next;
	void (*fn)(struct wd_job *job); /* runs on a pool thread */
} wd_job;

typedef struct wd_pool wd_pool;

#define WD_POOL_MAX_LANES 4
/* The server's pool: requests, and productions apart from them. */
enum { WD_LANE_REQUEST = 0, WD_LANE_PRODUCE = 1 };

/* Start n threads (one lane). */
int wd_pool_create(wd_pool **out, unsigned n, wt_errbuf *err);
/* Start per_lane[l] threads for each lane l < n_lanes: a lane's threads run
 * only that lane's jobs, so work queued on one lane never waits behind
 * another's (the server: requests on lane 0, productions on lane 1). */
int wd_pool_create_lanes(wd_pool **out, const unsigned *per_lane, unsigned n_lanes, wt_errbuf *err);
/* Queue job on lane 0 / on lane; fn runs exactly once on a thread of that
 * lane (also while the pool drains, also when queued by another lane's job). */
void wd_pool_submit(wd_pool *p, wd_job *job);
void wd_pool_submit_lane(wd_pool *p, unsigned lane, wd_job *job);
/* Run every queued job of every lane (and what they queue), then join the
 * threads. NULL is a no-op. */
void wd_pool_destroy(wd_pool *p);

/* ===================== shard ids (shardid.c) ===================== */

/* Bumped when the planner/production output changes for the same inputs. */
#define WD_PLAN_VERSION 1u
/* 2: the model name joined the id (shards of two models never mix, even
 * at the same revision); revisions became content digests. */
#define WD_SHARD_ID_VERSION 2u
#define WD_SHARD_ID_BYTES   17 /* version byte + XXH3-128 */
#define WD_LAYOUT_TEXT_MAX  4096

/*
 * Shard id = [WD_SHARD_ID_VERSION][XXH3-128 of (model, revision, layout_text,
 * WD_PLAN_VERSION, rank)] — FROZEN (cache keys). layout_text is the canonical
 * wt_layout_format() text without the rank.
 */
void wd_shard_id(const char *model, const char *revision, const char *layout_text, uint32_t rank,
                 uint8_t out[WD_SHARD_ID_BYTES]);
/* Key of a whole layout (all ranks): XXH3-128 of (model, revision, layout_text, plan version). */
wt_hash128 wd_layout_key(const char *model, const char *revision, const char *layout_text);

/* ===================== single flight (flight.c) ===================== */

typedef struct wd_flight_waiter {
	struct wd_flight_waiter *next;
	/* Runs exactly once, outside the table lock, on the leader's thread,
	 * after wd_flight_finish: rv/err are the producer's result. */
	void (*done)(struct wd_flight_waiter *w, int rv, const wt_errbuf *err);
} wd_flight_waiter;

typedef struct wd_flights wd_flights;

int wd_flights_create(wd_flights **out);
void wd_flights_destroy(wd_flights *t); /* no flight may be open; NULL-safe */

enum { WD_FLIGHT_LEADER = 1, WD_FLIGHT_WAITING = 2 };

/*
 * Join the production of `key`. If none is in flight, the caller becomes the
 * leader (returns WD_FLIGHT_LEADER; w is not queued) and must call
 * wd_flight_finish exactly once. Otherwise w is queued (returns
 * WD_FLIGHT_WAITING) and w->done runs later; w = NULL just asks.
 */
int wd_flight_join(wd_flights *t, wt_hash128 key, wd_flight_waiter *w);
/* End the flight of `key`; every queued waiter's done(rv, err) runs before
 * this returns, on the calling thread, outside the lock. */
void wd_flight_finish(wd_flights *t, wt_hash128 key, int rv, const wt_errbuf *err);
/* Flights in progress (tests, stats). */
size_t wd_flights_active(wd_flights *t);

/* ===================== models (models.c) ===================== */

/* An open revision of a model: refcounted, immutable. */
typedef struct wd_snap {
	int refs; /* atomic */
	store *st;
	ckpt *ck;
	char revision[80];
} wd_snap;

typedef struct wd_models wd_models;

/* Where a model comes from (ModelInfo.source). */
typedef enum {
	WD_SRC_CONFIG = 0, /* model = NAME=URI / --model */
	WD_SRC_FOLDER = 1, /* a models_dir subfolder */
	WD_SRC_REGISTERED, /* admin REGISTER (registry.c persists it) */
} wd_model_source;

/* "config", "folder", "registered". Static. */
const char *wd_model_source_name(wd_model_source source);

/* Open the models of cfg (models_dir subfolders + --model). A model that fails
 * to open is logged and listed as unavailable; a duplicate name or an explicit
 * models_dir that cannot be listed is an error. memo (may be NULL; borrowed,
 * outlives m): remembered content digests of source objects (srcmemo.c). */
int wd_models_open(wd_models **out, const wd_config *cfg, const ckpt_memo *memo, wt_errbuf *err);
/* wd_models_open in two steps, so that a stop can reach the opens (wd_server_start):
 * list every model (folder, config, registry file) without opening any, then
 * open them all (WD_OPEN_THREADS at a time; wd_models_cancel_opens ends them). */
int wd_models_add_all(wd_models **out, const wd_config *cfg, const ckpt_memo *memo, wt_errbuf *err);
void wd_models_open_listed(wd_models *m);
void wd_models_close(wd_models *m); /* NULL-safe; snapshots must be released */

/* fn(ctx) runs whenever a model's revision changes or it becomes unavailable,
 * with that model's lock held: it must only signal (no call back into m). Set
 * once, before other threads use m. */
void wd_models_set_notify(wd_models *m, void (*fn)(void *ctx), void *ctx);

/* Change revalidate_ms at run time (reload). */
void wd_models_set_revalidate(wd_models *m, uint64_t ms);

/* Models opened at once at start (wd_models_open). */
#define WD_OPEN_THREADS 4

typedef enum wd_open_mode {
	WD_OPEN_NOW,     /* open before it is added; one that fails is listed unavailable */
	WD_OPEN_LATER,   /* listed without a snapshot, opened by the caller (at start: with the
	                    others, in parallel; a rescan: right after, cancelable) */
	WD_OPEN_PENDING, /* being registered: wd_models_open_pending, then settle */
} wd_open_mode;

/*
 * Add model name -> uri, coming from `source` (folder, config, registered; in
 * memory only: weightd/registry.c persists registrations), opened as mode
 * says. WT_EEXIST for a name in use, WT_EINVAL for a bad name or URI.
 *
 * A WD_OPEN_PENDING model is found (wd_models_find: the name is taken) but
 * not served (wd_models_get: WT_ENOTFOUND saying it is being registered and
 * how far its open got; clients retry WT_EBUSY for their whole budget), listed
 * as being registered, skipped by wd_models_each, and never opened by
 * anyone but wd_models_open_pending, until wd_models_settle keeps it or
 * wd_models_remove drops it.
 */
int wd_models_add_from(wd_models *m, const char *name, const char *uri, wd_model_source source,
                       wd_open_mode mode, wt_errbuf *err);
/* Open the pending model name now, on the caller's thread (may read for
 * minutes; canceled by wd_models_remove or wd_models_cancel_opens:
 * WT_ECANCELED). On success *out holds a reference to its snapshot; else the
 * loader's error. It stays pending. */
int wd_models_open_pending(wd_models *m, const char *name, wd_snap **out, wt_errbuf *err);
/* The pending model name is served from now on (registry.c saved it). */
void wd_models_settle(wd_models *m, const char *name);
/* Is name pending? Then *read and *total (0 until known): its open so far. */
bool wd_models_pending(wd_models *m, const char *name, uint64_t *read, uint64_t *total);
/* Shutdown: cancel every open in progress (each ends at its next 8 MiB);
 * no model opens again. Models keep the snapshots they have. */
void wd_models_cancel_opens(wd_models *m);
/* Registry lines kept as they were, not served (registry.c, under its lock):
 * a registration its register_* settings refused at start stays in the file
 * (it was dropped by the next rewrite) until it is registered or
 * unregistered again. keep: WT_ENOMEM on failure; drop: whether name had one;
 * kept: "NAME=URI" lines, borrowed. */
int wd_models_keep_line(wd_models *m, const char *name, const char *uri);
bool wd_models_drop_kept(wd_models *m, const char *name);
size_t wd_models_kept(const wd_models *m, const char *const **lines);
/* Shutdown, once the drain is over: every http/s3 read of every snapshot,
 * in flight or to come, ends with WT_ECANCELED within about a second
 * (productions reading a slow source stop instead of holding the exit). */
void wd_models_abort_reads(wd_models *m);
/* Remove a WD_SRC_REGISTERED model: WT_ENOTFOUND if unknown, WT_EPERM for a
 * folder/config model. Requests holding its snapshot finish with it. */
int wd_models_remove(wd_models *m, const char *name, wt_errbuf *err);
/* Is name a model? Then *source and, when uri is not NULL, *uri: a copy the
 * caller frees (NULL if out of memory). */
bool wd_models_find(wd_models *m, const char *name, wd_model_source *source, char **uri);
/* Model entries allocated and not yet freed in this process (tests: an
 * unregistered or failed model is freed once no request holds it). */
size_t wd_models_alive(void);
/* fn(ctx, name, uri) for every model of source, in name order, under the list
 * lock (fn must not call back into m). */
void wd_models_each(wd_models *m, wd_model_source source,
                    void (*fn)(void *ctx, const char *name, const char *uri), void *ctx);
/* "<cache_dir>/registered-models". Borrowed; valid while m is open. */
const char *wd_models_registry_path(const wd_models *m);
/* Add the subfolders of cfg's models_dir that are not models yet (each under its
 * model_override); *added = how many. */
int wd_models_rescan(wd_models *m, const wd_config *cfg, size_t *added, wt_errbuf *err);

typedef struct wd_model_info {
	const char *name;     /* valid until wd_models_list_free */
	const char *uri;      /* the source URI */
	const char *override; /* its configuration override (canonical), NULL: none */
	wd_model_source source;
	bool available;
	char error[WT_ERRMSG_MAX];      /* when !available */
	wd_snap *snap;                  /* NULL when !available; a reference */
	bool pending;                   /* being registered (never available) */
	bool opening;                   /* an open is in progress (a new revision, or pending) */
	uint64_t open_read, open_total; /* its progress (total 0 until known) */
	struct model_ent *ent;          /* the entry, held (name, uri) */
} wd_model_info;

/* Every model (sorted by name), revalidated if due. *out holds a reference to
 * each snapshot: free with wd_models_list_free. WT_ENOMEM on failure. */
int wd_models_list(wd_models *m, wd_model_info **out, size_t *n);
void wd_models_list_free(wd_model_info *info, size_t n);

/*
 * Current snapshot of model `name`. force = re-check the source now (a cache
 * miss), else at most every cfg->revalidate_ms. WT_ENOTFOUND for an unknown
 * model (the message lists the names); the loader's error for an unavailable
 * one. On success *out holds a reference: wd_snap_release() it.
 */
int wd_models_get(wd_models *m, const char *name, bool force, wd_snap **out, wt_errbuf *err);
void wd_snap_release(wd_snap *s); /* NULL-safe */

/* Models by state, as metrics count them (no revalidation): served, not
 * opening (unavailable: retried at each revalidation), without a revision
 * while an open runs, being registered (pending). */
enum {
	WD_MODEL_AVAILABLE,
	WD_MODEL_UNAVAILABLE,
	WD_MODEL_OPENING,
	WD_MODEL_REGISTERING,
	WD_MODEL_N_STATES
};
void wd_models_count(wd_models *m, uint64_t out[WD_MODEL_N_STATES]);

/* Sum of store_bytes_read over every store the registry opened (source reads). */
uint64_t wd_models_source_bytes(wd_models *m);
/* Source objects found rewritten under an unchanged version (their bytes no
 * longer matched the revision's block digests), all models, since start. */
uint64_t wd_models_source_rewrites(wd_models *m);

/* ===================== registered models (registry.c) ===================== */

/* File name of the registry inside cache_dir: one NAME=URI a line. */
#define WD_REGISTRY_FILE "registered-models"

/*
 * Add the models of the registry file (wd_models_registry_path) at start,
 * after the folder and config models. Never fails: a missing file is no
 * registration; a bad line, a URI that cfg no longer lets REGISTER reach
 * (wd_register_allowed), a name the folder/config already serves (they
 * win) or a checkpoint that does not open (listed unavailable) is a warning.
 */
void wd_registry_load(wd_models *m, const wd_config *cfg);

/* modelspec.c: a model's source spec, "URI" or "URI<TAB>OVERRIDE" (the configuration
 * override, canonical: ckpt_override_canonical). make: uri and override (NULL or "": none;
 * else checked, WT_EINVAL / WT_ETOOBIG naming the fix) into *spec (the caller frees it).
 * split: copies of the two parts (*override NULL for none); WT_ENOMEM only. */
int wd_spec_make(const char *uri, const char *override, char **spec, wt_errbuf *err);
int wd_spec_split(const char *spec, char **uri, char **override);
/* The spec for people: "URI" or "URI, config override {...}" (the caller frees it; NULL when
 * out of memory). */
char *wd_spec_show(const char *spec);

/* regpolicy.c: may a REGISTER reach uri under cfg (register_roots,
 * register_hosts, register_buckets)? WT_EPERM naming the key to set. */
int wd_register_allowed(const wd_config *cfg, const char *uri, wt_errbuf *err);
/* What a model REGISTER added may reach once open (regpolicy.c): a copy of
 * register_roots, models_dir and register_hosts. wd_reach_init copies cfg's
 * (WT_ENOMEM leaves r empty); wd_reach_free empties r. */
typedef struct wd_reach {
	wd_strlist roots;
	char *models_dir;
	wd_strlist hosts;
} wd_reach;
int wd_reach_init(wd_reach *r, const wd_config *cfg);
void wd_reach_free(wd_reach *r);
/* st was just opened from uri for such a model: the folder it holds open
 * (store_local_root) must lie in the roots, else WT_EPERM (renamed or swapped
 * for a symlink between wd_register_allowed and the open); its redirects are
 * kept to the hosts (store_limit_redirects). */
int wd_reach_apply(const wd_reach *r, store *st, const char *uri, wt_errbuf *err);
/* regpolicy.c: open uri's checkpoint on a helper thread, under cfg's reach
 * (wd_reach_apply); WT_ETIMEDOUT if it gives no answer within timeout_ms (the
 * helper ends on its own), WT_EBUSY when too many helpers still run, else the
 * loader's result. */
int wd_register_probe(const char *uri, const wd_config *cfg, uint64_t timeout_ms, wt_errbuf *err);

#endif
