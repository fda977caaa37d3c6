/*
 * weightd_int.h — private interfaces between the files of weightd/ (and its
 * unit tests): worker pool, single-flight table, shard ids, model registry,
 * request handlers.
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

/* Start n threads. */
int wd_pool_create(wd_pool **out, unsigned n, wt_errbuf *err);
/* Queue job; fn runs exactly once on a pool thread (also while the pool drains). */
void wd_pool_submit(wd_pool *p, wd_job *job);
/* Run every queued job, then join the threads. NULL is a no-op. */
void wd_pool_destroy(wd_pool *p);

/* ===================== shard ids (shardid.c) ===================== */

/* Bumped when the planner/production output changes for the same inputs. */
#define WD_PLAN_VERSION     1u
#define WD_SHARD_ID_VERSION 1u
#define WD_SHARD_ID_BYTES   17 /* version byte + XXH3-128 */
#define WD_LAYOUT_TEXT_MAX  4096

/*
 * Shard id = [WD_SHARD_ID_VERSION][XXH3-128 of (revision, layout_text,
 * WD_PLAN_VERSION, rank)] — FROZEN (cache keys). layout_text is the canonical
 * wt_layout_format() text without the rank.
 */
void wd_shard_id(const char *revision, const char *layout_text, uint32_t rank,
                 uint8_t out[WD_SHARD_ID_BYTES]);
/* Key of a whole layout (all ranks): XXH3-128 of (revision, layout_text, plan version). */
wt_hash128 wd_layout_key(const char *revision, const char *layout_text);

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

/* Open the models of cfg (models_dir subfolders + --model). A model that fails
 * to open is logged and listed as unavailable; a duplicate name or an explicit
 * models_dir that cannot be listed is an error. */
int wd_models_open(wd_models **out, const wd_config *cfg, wt_errbuf *err);
void wd_models_close(wd_models *m); /* NULL-safe; snapshots must be released */

size_t wd_models_count(const wd_models *m);

typedef struct wd_model_info {
	const char *name; /* borrowed; valid while m is open */
	const char *uri;
	bool available;
	char error[WT_ERRMSG_MAX]; /* when !available */
	wd_snap *snap;             /* NULL when !available; a reference: release it */
} wd_model_info;

/* Model i, revalidated if due. On return info->snap (if set) holds a reference. */
void wd_models_info(wd_models *m, size_t i, wd_model_info *info);

/*
 * Current snapshot of model `name`. force = re-check the source now (a cache
 * miss), else at most every cfg->revalidate_ms. WT_ENOTFOUND for an unknown
 * model (the message lists the names); the loader's error for an unavailable
 * one. On success *out holds a reference: wd_snap_release() it.
 */
int wd_models_get(wd_models *m, const char *name, bool force, wd_snap **out, wt_errbuf *err);
void wd_snap_release(wd_snap *s); /* NULL-safe */

/* Sum of store_bytes_read over every store the registry opened (source reads). */
uint64_t wd_models_source_bytes(wd_models *m);

#endif
