/*
 * bench_reclaim.c — what cache_reclaim costs and gives back, as ratios of the
 * live bytes and of the cache's own put rate measured in the same run.
 *
 *   build/bench/bench_reclaim [--layout-mb N] [--blob-mb N] [--dir PATH]
 *
 * A layout = 4 ranks x L layers x (4 MiB weight + 16 KiB norm), --layout-mb in
 * all (default 256); blob files of --blob-mb (default 16). Scenario "shared
 * norms": put A, put B (same norms: they dedup into A's files), evict A, so
 * every file of A is kept by B's norms; reclaim must relocate. Scenario "dead
 * files": put A, put B, evict B: B's files hold only dead chunks; reclaim should
 * free them without rewriting anything. Printed: disk / live before and after,
 * bytes rewritten / live, bytes freed / bytes rewritten, and the reclaim time
 * against the time the cache took to put the same number of live bytes.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/util/benchutil.h"
#include "cache/cache.h"
#include "common/common.h"

#define WEIGHT (4u << 20)
#define NORM   (16u << 10)
#define RANKS  4
#define SRC    (64u << 20)

static uint8_t *src, *buf;
static int layers;

/* Chunk (kind, layout, rank, layer): a window of src with its key in front. */
static const uint8_t *chunk(int kind, int layout, int r, int l, size_t n)
{
	uint64_t key =
	    (uint64_t)kind << 48 | (uint64_t)layout << 32 | (uint64_t)r << 16 | (uint64_t)l;
	uint64_t off = (key * 1048573u) % (SRC - n);
	memcpy(buf, src + off, n);
	memcpy(buf, &key, sizeof(key));
	return buf;
}

/* Put every rank of a layout; seconds taken, < 0 on error (printed). */
static double put_layout(cache *c, int layout)
{
	wt_errbuf err;
	double t0 = (double)common_now_ns() / 1e9;
	for (int r = 0; r < RANKS; r++) {
		char id[32];
		snprintf(id, sizeof(id), "%d/%d", layout, r);
		cache_writer *w = NULL;
		int rv = cache_begin_shard(c, id, strlen(id), &w, &err);
		for (int l = 0; l < layers && rv == WT_OK; l++) {
			rv = cache_put_chunk(w, chunk(0, layout, r, l, WEIGHT), WEIGHT, NULL, &err);
			if (rv == WT_OK) /* norms: the same in both layouts */
				rv = cache_put_chunk(w, chunk(1, 0, r, l, NORM), NORM, NULL, &err);
		}
		if (rv == WT_OK)
			rv = cache_commit_shard(w, id, strlen(id), &err);
		else
			cache_abort_shard(w);
		if (rv != WT_OK) {
			fprintf(stderr, "bench_reclaim: put: %s\n", err.msg);
			return -1;
		}
	}
	return (double)common_now_ns() / 1e9 - t0;
}

static int evict_layout(cache *c, int layout)
{
	wt_errbuf err;
	for (int r = 0; r < RANKS; r++) {
		char id[32];
		snprintf(id, sizeof(id), "%d/%d", layout, r);
		if (cache_evict(c, id, strlen(id), &err) != WT_OK) {
			fprintf(stderr, "bench_reclaim: evict: %s\n", err.msg);
			return -1;
		}
	}
	return 0;
}

static int scenario(const char *dir, const char *name, int evicted, uint64_t blob)
{
	cache_opts o;
	cache_opts_init(&o);
	cache_tune_malloc(o.chunk_bytes);
	o.max_bytes = 1ull << 40;
	o.blob_file_bytes = blob;
	o.reclaim_ratio = 0; /* measured on request, not in the background */
	cache *c = NULL;
	wt_errbuf err;
	if (cache_open(&c, dir, &o, &err) != WT_OK) {
		fprintf(stderr, "bench_reclaim: %s\n", err.msg);
		return -1;
	}
	double ta = put_layout(c, 1), tb = ta >= 0 ? put_layout(c, 2) : -1;
	int rv = -1;
	if (tb >= 0 && evict_layout(c, evicted) == 0) {
		cache_stats st;
		cache_stats_get(c, &st);
		cache_reclaim_stats rs;
		if (cache_reclaim(c, &rs, &err) != WT_OK) {
			fprintf(stderr, "bench_reclaim: %s\n", err.msg);
		} else {
			double live = (double)rs.live_bytes;
			double put_rate = live / (evicted == 1 ? tb : ta); /* the kept layout */
			double secs = (double)rs.elapsed_ns / 1e9;
			double freed = (double)rs.disk_before - (double)rs.disk_after;
			char per[64] = "nothing rewritten";
			if (rs.rewritten_bytes > 0)
				snprintf(per, sizeof(per), "freed/rewritten %.2f",
				         freed / (double)rs.rewritten_bytes);
			printf(
			    "%s: live %.0f MiB; disk/live %.2f -> %.2f; freed %.0f MiB; "
			    "rewritten/live %.2f, %s; reclaim %.2f s = %.2f x the time to put the "
			    "live bytes (%.2f GB/s)\n",
			    name, live / 1048576, (double)st.disk_bytes / live,
			    (double)rs.disk_after / live, freed / 1048576,
			    (double)rs.rewritten_bytes / live, per, secs, secs / (live / put_rate),
			    put_rate / 1e9);
			rv = 0;
		}
	}
	cache_close(c);
	return rv;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_reclaim [--layout-mb N] [--blob-mb N] [--dir PATH]\n");
}

int main(int argc, char **argv)
{
	uint64_t layout_mb = 256, blob_mb = 16;
	const char *dir = NULL;
	static const struct option opts[] = {{"layout-mb", required_argument, NULL, 0},
	                                     {"blob-mb", required_argument, NULL, 0},
	                                     {"dir", required_argument, NULL, 0},
	                                     {NULL, 0, NULL, 0}};
	char msg[256];
	const char *v;
	optind = 0;
	for (int k; (k = common_opt_next(argc, argv, opts, &v, msg, sizeof(msg))) != -1;) {
		int bad = k == -2;
		if (k == -2)
			fprintf(stderr, "bench_reclaim: %s\n", msg);
		else if (k == 0)
			bad = bench_u64("layout-mb", v, &layout_mb) != 0;
		else if (k == 1)
			bad = bench_u64("blob-mb", v, &blob_mb) != 0;
		else
			dir = v;
		if (bad) {
			usage();
			return 2;
		}
	}
	if (optind < argc) { /* after the loop: optind is past only the options read so far */
		fprintf(stderr, "bench_reclaim: unexpected argument '%s'\n", argv[optind]);
		usage();
		return 2;
	}
	layers = (int)(layout_mb / RANKS / 4);
	if (layers < 1 || blob_mb < 1) {
		fprintf(stderr, "bench_reclaim: --layout-mb >= 16 and --blob-mb >= 1\n");
		return 2;
	}
	if (bench_init(argv[0], "reclaim") != 0)
		return 1;
	src = malloc(SRC);
	buf = malloc(WEIGHT);
	if (src == NULL || buf == NULL)
		return 1;
	uint64_t x = 0x9e3779b97f4a7c15ull; /* xorshift64, fixed seed */
	for (size_t i = 0; i < SRC / 8; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(src + 8 * i, &x, 8);
	}
	printf("bench_reclaim: %d ranks x %d layers x (4 MiB weight + 16 KiB norm) per layout, "
	       "%llu MiB blob files\n",
	       RANKS, layers, (unsigned long long)blob_mb);
	char d1[4096], d2[4096];
	const char *base = dir != NULL ? dir : bench_tmp();
	snprintf(d1, sizeof(d1), "%s/shared", base);
	snprintf(d2, sizeof(d2), "%s/dead", base);
	int rv = scenario(d1, "shared norms (evict A)", 1, blob_mb << 20);
	if (rv == 0)
		rv = scenario(d2, "dead files (evict B)", 2, blob_mb << 20);
	free(src);
	free(buf);
	bench_finish(0);
	return rv == 0 ? 0 : 1;
}
