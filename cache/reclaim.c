/*
 * reclaim.c — give back the disk space of blob files kept alive by a few live
 * chunks (cache/README.md "Disk space"): a compaction of the chunk index, then,
 * only when the files left are still mostly garbage, one compaction with
 * RocksDB's blob GC on. Also the background run after evictions.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/cache_int.h"

static uint64_t prop(cache *c, int cf, const char *name)
{
	uint64_t v = 0;
	if (rocksdb_property_int_cf(c->db, c->cf[cf], name, &v) != 0)
		return 0;
	return v;
}

uint64_t cache_chunk_disk_bytes(cache *c)
{
	return prop(c, CACHE_CF_CHUNKS, "rocksdb.total-blob-file-size") +
	       prop(c, CACHE_CF_CHUNKS, "rocksdb.total-sst-files-size");
}

uint64_t cache_disk_bytes(cache *c)
{
	uint64_t n = prop(c, CACHE_CF_CHUNKS, "rocksdb.total-blob-file-size");
	for (int i = 0; i < 4; i++)
		n += prop(c, i, "rocksdb.total-sst-files-size");
	return n;
}

/* Does the garbage pay for rewriting the live bytes? disk > ratio x live and
 * disk - live >= one blob file. */
static bool worth(const cache *c, uint64_t disk, uint64_t live, double ratio)
{
	return disk > live && disk - live >= c->opts.blob_file_bytes &&
	       (double)disk > ratio * (double)live;
}

/* Largest blob file number in dir (*max), and the bytes of blob files
 * numbered above `above` (return value). Blob files are "<number>.blob". */
static uint64_t blob_files_scan(const char *dir, uint64_t above, uint64_t *max)
{
	uint64_t sum = 0;
	*max = 0;
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		errno = 0;
		unsigned long long num = strtoull(de->d_name, &end, 10);
		if (errno != 0 || end == de->d_name || strcmp(end, ".blob") != 0)
			continue;
		if (num > *max)
			*max = num;
		if (num <= above)
			continue;
		char path[4096];
		struct stat st;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < sizeof(path) &&
		    stat(path, &st) == 0)
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

static int set_gc(cache *c, bool on, wt_errbuf *err)
{
	const char *keys[3] = {"enable_blob_garbage_collection",
	                       "blob_garbage_collection_age_cutoff",
	                       "blob_garbage_collection_force_threshold"};
	/* On: every blob file is old enough to be collected (cutoff 1.0); the
	 * force threshold stays at 1.0 so no automatic compaction is forced. */
	const char *vals[3] = {on ? "true" : "false", on ? "1.0" : "0.25", "1.0"};
	char *e = NULL;
	rocksdb_set_options_cf(c->db, c->cf[CACHE_CF_CHUNKS], 3, keys, vals, &e);
	if (e != NULL)
		return cache_rocks_err(c, e, on ? "enable blob gc" : "disable blob gc", err);
	return WT_OK;
}

/* Compact the whole chunks column family down to its last level. */
static void compact_all(cache *c)
{
	rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
	WT_ASSERT(co != NULL); /* C++ new: aborts rather than returning NULL */
	rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* kForce */);
	rocksdb_compactoptions_set_exclusive_manual_compaction(co, 0);
	rocksdb_compact_range_cf_opt(c->db, c->cf[CACHE_CF_CHUNKS], co, NULL, 0, NULL, 0);
	rocksdb_compactoptions_destroy(co);
}

static uint64_t live_bytes(cache *c)
{
	pthread_mutex_lock(&c->lk);
	uint64_t v = c->bytes;
	pthread_mutex_unlock(&c->lk);
	return v;
}

/* Tests only: c->step_hook (cache_int.h). */
static void step(cache *c, int where)
{
	if (c->step_hook != NULL)
		c->step_hook(c->step_ctx, where);
}

/* One run; caller holds c->rc_run. */
static int reclaim_run(cache *c, cache_reclaim_stats *st, wt_errbuf *err)
{
	int rv = WT_OK;
	uint64_t t0 = common_now_ns();
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&c->lk);
	c->rc_freed = 0;
	pthread_mutex_unlock(&c->lk);
	st->disk_before = cache_disk_bytes(c);
	if (c->opts.store == CACHE_STORE_BLOB) {
		step(c, CACHE_STEP_RECLAIM_BEGIN);
		compact_all(c); /* pass 1: index only; drops all-dead blob files */
		step(c, CACHE_STEP_RECLAIM_PASS1);
		double ratio =
		    c->opts.reclaim_ratio > 0 ? c->opts.reclaim_ratio : CACHE_RECLAIM_RATIO_DEF;
		bool closing;
		pthread_mutex_lock(&c->lk);
		closing = c->rc_closing;
		pthread_mutex_unlock(&c->lk);
		if (!closing && worth(c, cache_chunk_disk_bytes(c), live_bytes(c), ratio)) {
			uint64_t max_before = 0;
			blob_files_scan(c->dir, UINT64_MAX, &max_before);
			if ((rv = set_gc(c, true, err)) == WT_OK) {
				step(c, CACHE_STEP_RECLAIM_GC_ON);
				compact_all(c); /* pass 2: relocate every live chunk */
				st->relocated = true;
				step(c, CACHE_STEP_RECLAIM_PASS2);
				rv = set_gc(c, false, err);
				step(c, CACHE_STEP_RECLAIM_GC_OFF);
				uint64_t unused;
				st->rewritten_bytes = blob_files_scan(c->dir, max_before, &unused);
			}
		}
	}
	st->disk_after = cache_disk_bytes(c);
	st->live_bytes = live_bytes(c);
	st->elapsed_ns = common_now_ns() - t0;
	pthread_mutex_lock(&c->lk);
	c->reclaims++;
	if (st->disk_before > st->disk_after)
		c->reclaimed += st->disk_before - st->disk_after;
	pthread_mutex_unlock(&c->lk);
	WT_LOG(WT_LOG_NOTICE,
	       "cache '%s': reclaim: files %" PRIu64 " -> %" PRIu64 " bytes on disk, %" PRIu64
	       " live; %s%" PRIu64 " bytes rewritten; %.1f ms",
	       c->dir, st->disk_before, st->disk_after, st->live_bytes,
	       st->relocated ? "relocated live chunks, " : "index compaction only, ",
	       st->rewritten_bytes, (double)st->elapsed_ns / 1e6);
	return rv;
}

static void set_active(cache *c, bool on)
{
	pthread_mutex_lock(&c->lk);
	c->rc_active = on;
	pthread_mutex_unlock(&c->lk);
}

int cache_reclaim(cache *c, cache_reclaim_stats *out, wt_errbuf *err)
{
	cache_reclaim_stats st;
	pthread_mutex_lock(&c->rc_run);
	set_active(c, true);
	int rv = reclaim_run(c, &st, err);
	set_active(c, false);
	pthread_mutex_unlock(&c->rc_run);
	if (out != NULL)
		*out = st;
	return rv;
}

static void *bg_main(void *arg)
{
	cache *c = arg;
	cache_reclaim_stats st;
	wt_errbuf err;
	pthread_mutex_lock(&c->rc_run);
	pthread_mutex_lock(&c->lk);
	bool closing = c->rc_closing;
	c->rc_active = !closing;
	pthread_mutex_unlock(&c->lk);
	if (!closing && reclaim_run(c, &st, &err) != WT_OK)
		WT_LOG(WT_LOG_ERR, "%s (the next eviction retries)", err.msg);
	pthread_mutex_lock(&c->lk);
	c->rc_active = false;
	c->rc_bg = false; /* after this the thread touches no cache field */
	pthread_mutex_unlock(&c->lk);
	pthread_mutex_unlock(&c->rc_run);
	return NULL;
}

void cache_reclaim_maybe_locked(cache *c)
{
	/* New garbage of one blob file at least since the last run: a run that
	 * could not bring the disk down (old files held by a reader) is not
	 * repeated at every eviction. */
	if (c->opts.reclaim_ratio <= 0 || c->opts.store != CACHE_STORE_BLOB || !c->rc_armed ||
	    c->rc_closing || c->rc_bg || c->rc_freed < c->opts.blob_file_bytes)
		return;
	if (!worth(c, cache_chunk_disk_bytes(c), c->bytes, c->opts.reclaim_ratio))
		return;
	if (c->rc_thread_live) {
		/* The previous run has finished (rc_bg is false) and needs no lock. */
		pthread_join(c->rc_thread, NULL);
		c->rc_thread_live = false;
	}
	c->rc_bg = true;
	if (pthread_create(&c->rc_thread, NULL, bg_main, c) != 0) {
		c->rc_bg = false;
		WT_LOG(WT_LOG_WARNING,
		       "cache '%s': cannot start the reclaim thread; the next "
		       "eviction retries",
		       c->dir);
		return;
	}
	c->rc_thread_live = true;
}

void cache_reclaim_stop(cache *c)
{
	pthread_mutex_lock(&c->lk);
	c->rc_closing = true;
	bool live = c->rc_thread_live, busy = c->rc_bg;
	c->rc_thread_live = false;
	pthread_mutex_unlock(&c->lk);
	if (busy && c->db != NULL)
		rocksdb_disable_manual_compaction(c->db); /* a running compaction stops early */
	if (live)
		pthread_join(c->rc_thread, NULL);
}
