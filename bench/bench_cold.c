/*
 * bench_cold.c — the cold path (issue 13): a layout nobody produced yet, TP=4,
 * four concurrent clients (one per rank) with cut-through, against baselines
 * measured in the same run. Prints ratios, asserts nothing.
 *
 *   build/bench/bench_cold [--gib G] [--workers N] [--verbose] [--messages]
 *                          [--set KEY=VALUE]...
 *   (default 1 GiB, 4 workers; --verbose: weightd's production summaries;
 *   clients use the bulk data plane, with --messages nng messages; --set: a
 *   weightd setting, e.g. --set production_threads=1)
 *
 * Setup: wt-mkckpt llama of G GiB, read twice (the second read, from the page
 * cache, is the "sequential read" baseline), an in-process weightd (4 MiB
 * chunks) on tcp loopback with an empty cache.
 *  1. cold fetch, cut-through: four clients fetch ranks 0..3 of TP=4 at once;
 *     per rank the time to its first byte and to its end;
 *  2. warm fetch of the same four ranks (cache hits);
 *  3. cold fetch again without cut-through (evicted first): the old behaviour;
 *  3b. cold fetch again with cut-through (evicted first): a daemon that produced
 *     before, whose write-behind buffers are reused instead of fresh memory;
 *  4. production alone (admin WARM after an evict): quant none and fp8-block,
 *     source bytes / s;
 *  5. the cache's own put throughput: the same options, distinct 4 MiB chunks
 *     as many bytes as the checkpoint, one shard, commit included.
 * Ratios (issue 13 targets): first byte / cold fetch <= 0.05; cold fetch /
 * (read + warm fetch) <= 1.5; production / cache put >= 0.5.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/util/benchutil.h"
#include "cache/cache.h"
#include "common/common.h"
#include "weightd/server_int.h"
#include "weightd/weightd.h"
#include "weights/client.h"
#include "weights/engine.h"

#define CHUNK (4u << 20)
#define RANKS 4

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "bench_cold: %s: %s\n", what, msg);
	exit(1);
}

/* Read every file of dir once into a reused buffer; bytes read. */
static uint64_t read_dir(const char *dir)
{
	static uint8_t buf[8u << 20];
	DIR *d = opendir(dir);
	if (d == NULL)
		die("opendir", dir);
	uint64_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			die("open", p);
		ssize_t r;
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			n += (uint64_t)r;
		close(fd);
	}
	closedir(d);
	return n;
}

/* A sink that counts bytes and notes when the first one came. */
typedef struct ttfb_sink {
	bench_count_sink cs;
	const wt_sink_ops *inner;
	uint64_t first_ns;
} ttfb_sink;

static int ts_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t len, wt_errbuf *e)
{
	ttfb_sink *ts = (ttfb_sink *)s;
	if (ts->first_ns == 0)
		ts->first_ns = common_now_ns();
	return ts->inner->write(s, t, off, d, len, e);
}

typedef struct job {
	const char *url;
	wt_layout layout;
	int cut_through;
	uint64_t t0_ns;                    /* common start */
	double manifest_s, ttfb_s, done_s; /* since t0_ns: manifest in, first byte, end */
	uint64_t bytes;
	int live;
} job;

static int g_stream = 1; /* clients use the bulk data plane (--messages: 0) */

static void *job_main(void *arg)
{
	job *j = arg;
	wt_errbuf err;
	wt_client_opts o;
	bench_client_opts(&o, &j->url);
	o.cut_through = j->cut_through;
	o.stream = g_stream;
	o.manifest_timeout_ms = 3600000;
	o.request_timeout_ms = 600000;
	wt_client *c;
	wt_manifest *m = NULL;
	if (wt_client_open(&c, &o, &err) != WT_OK ||
	    wt_client_get_manifest(c, "m", &j->layout, &m, &err) != WT_OK)
		die("manifest", err.msg);
	j->manifest_s = secs(common_now_ns() - j->t0_ns);
	j->live = wt_manifest_live(m);
	ttfb_sink ts;
	memset(&ts, 0, sizeof(ts));
	bench_count_sink_init(&ts.cs);
	wt_sink_ops ops = *ts.cs.base.ops;
	ts.inner = ts.cs.base.ops;
	ops.write = ts_write;
	ts.cs.base.ops = &ops;
	if (wt_client_fetch(c, m, &ts.cs.base, NULL, &err) != WT_OK)
		die("fetch", err.msg);
	uint64_t t1 = common_now_ns();
	j->bytes = ts.cs.bytes;
	j->ttfb_s = secs(ts.first_ns - j->t0_ns);
	j->done_s = secs(t1 - j->t0_ns);
	wt_manifest_free(m);
	wt_client_close(c);
	return NULL;
}

static void layout_tp4(wt_layout *l, uint32_t rank, wt_quant q)
{
	wt_layout_init(l);
	l->tp_size = RANKS;
	l->tp_rank = rank;
	l->quant = q;
}

/* Four clients, one per rank, started together. Returns the time until the
 * last finished; worst first-byte / own-fetch ratio and bytes into *ratio, *bytes. */
static double fetch_all(const char *url, int cut, double *ttfb_ratio, double *ttfb_max,
                        uint64_t *bytes, int *live)
{
	job j[RANKS];
	pthread_t th[RANKS];
	uint64_t t0 = common_now_ns();
	double c0 = bench_cpu_s();
	for (uint32_t r = 0; r < RANKS; r++) {
		memset(&j[r], 0, sizeof(j[r]));
		j[r].url = url;
		j[r].cut_through = cut;
		j[r].t0_ns = t0;
		layout_tp4(&j[r].layout, r, WT_QUANT_NONE);
		pthread_create(&th[r], NULL, job_main, &j[r]);
	}
	double worst = 0, all = 0, tmax = 0;
	*bytes = 0;
	*live = 0;
	for (uint32_t r = 0; r < RANKS; r++) {
		pthread_join(th[r], NULL);
		double q = j[r].ttfb_s / j[r].done_s;
		worst = q > worst ? q : worst;
		all = j[r].done_s > all ? j[r].done_s : all;
		tmax = j[r].ttfb_s > tmax ? j[r].ttfb_s : tmax;
		*bytes += j[r].bytes;
		*live += j[r].live;
		printf("  rank %u: manifest %.3f s, first byte %.3f s, done %.3f s, %.0f MiB%s\n",
		       r, j[r].manifest_s, j[r].ttfb_s, j[r].done_s, (double)j[r].bytes / 1048576.0,
		       j[r].live ? " (live)" : "");
	}
	printf("  CPU (weightd and clients): %.2f s = %.2f cores\n", bench_cpu_s() - c0,
	       (bench_cpu_s() - c0) / all);
	*ttfb_ratio = worst;
	*ttfb_max = tmax;
	return all;
}

static void admin(wt_client *c, wt_admin_op op, wt_quant q)
{
	wt_layout l;
	layout_tp4(&l, 0, q);
	wt_admin_result res;
	wt_errbuf err;
	memset(&res, 0, sizeof(res));
	/* EVICT drops every layout of the model and takes none (only WARM does) */
	if (wt_client_admin(c, op, "m", op == WT_ADMIN_EVICT ? NULL : &l, &res, &err) != WT_OK)
		die("admin", err.msg);
	wt_admin_result_clear(&res);
}

/* Production alone: evict the model's shards, then WARM the layout. Seconds. */
static double produce(wt_client *c, wt_quant q)
{
	wt_admin_result res;
	wt_errbuf err;
	memset(&res, 0, sizeof(res));
	if (wt_client_admin(c, WT_ADMIN_EVICT, "m", NULL, &res, &err) != WT_OK)
		die("admin evict", err.msg);
	wt_admin_result_clear(&res);
	uint64_t t0 = common_now_ns();
	admin(c, WT_ADMIN_WARM, q);
	return secs(common_now_ns() - t0);
}

/* The cache's own put throughput (bytes/s): distinct CHUNK-byte chunks, one shard, commit. */
static double cache_put_gbps(const char *dir, uint64_t total)
{
	cache_opts co;
	cache_opts_init(&co);
	co.max_bytes = 64ull << 30;
	co.chunk_bytes = CHUNK;
	cache *c;
	cache_writer *w;
	wt_errbuf err;
	if (cache_open(&c, dir, &co, &err) != WT_OK)
		die("cache_open", err.msg);
	uint8_t *buf = malloc(CHUNK);
	for (size_t i = 0; i < CHUNK; i++)
		buf[i] = (uint8_t)(i * 131u + 7u);
	uint64_t t0 = common_now_ns();
	if (cache_begin_shard(c, "put", 3, &w, &err) != WT_OK)
		die("cache_begin_shard", err.msg);
	for (uint64_t off = 0, k = 0; off < total; off += CHUNK, k++) {
		memcpy(buf, &k, sizeof(k)); /* distinct chunks: no dedup */
		uint32_t n = total - off < CHUNK ? (uint32_t)(total - off) : CHUNK;
		if (cache_put_chunk(w, buf, n, NULL, &err) != WT_OK)
			die("cache_put_chunk", err.msg);
	}
	if (cache_commit_shard(w, "manifest", 8, &err) != WT_OK)
		die("cache_commit_shard", err.msg);
	double gbps = (double)total / 1e9 / secs(common_now_ns() - t0);
	free(buf);
	cache_close(c);
	return gbps;
}

typedef struct results {
	uint64_t ck, bytes, bytes_w;
	int live;
	double t_read, put, t_cold, ttfb_max, q_ttfb, t_old, tm_old, q_old, t_again, q_again,
	    t_warm, t_none, t_fp8;
} results;

static void print_results(const results *r)
{
	double read_gbps = (double)r->ck / 1e9 / r->t_read;
	double none_gbps = (double)r->ck / 1e9 / r->t_none,
	       fp8_gbps = (double)r->ck / 1e9 / r->t_fp8;
	printf("baseline: sequential read of the checkpoint: %.3f s = %.2f GB/s\n", r->t_read,
	       read_gbps);
	printf("baseline: cache put (same cache options, distinct 4 MiB chunks, commit): %.2f "
	       "GB/s\n",
	       r->put);
	printf("cold fetch, cut-through, all ranks: %.3f s (%.0f MiB out, %d of %d manifests "
	       "live), last first byte %.3f s\n",
	       r->t_cold, (double)r->bytes / 1048576.0, r->live, RANKS, r->ttfb_max);
	printf("cold fetch, no cut-through, all ranks: %.3f s, last first byte %.3f s\n", r->t_old,
	       r->tm_old);
	printf("cold fetch, cut-through, write-behind buffers reused, all ranks: %.3f s\n",
	       r->t_again);
	printf("warm fetch, all ranks: %.3f s = %.2f GB/s\n", r->t_warm,
	       (double)r->bytes_w / 1e9 / r->t_warm);
	printf("production alone (admin WARM), quant none: %.3f s = %.3f GB/s of source\n",
	       r->t_none, none_gbps);
	printf("production alone (admin WARM), fp8-block: %.3f s = %.3f GB/s of source\n", r->t_fp8,
	       fp8_gbps);
	printf("RATIO time to first byte / cold fetch (worst rank): %.3f   (target <= 0.05; "
	       "without cut-through %.3f)\n",
	       r->q_ttfb, r->q_old);
	printf("RATIO cold fetch / (sequential read + warm fetch): %.2f   (target <= 1.5; "
	       "without cut-through %.2f)\n",
	       r->t_cold / (r->t_read + r->t_warm), r->t_old / (r->t_read + r->t_warm));
	printf("RATIO (a daemon that produced before, buffers reused) time to first byte / cold "
	       "fetch: %.3f; cold fetch / (sequential read + warm fetch): %.2f\n",
	       r->q_again, r->t_again / (r->t_read + r->t_warm));
	printf("RATIO production quant none / cache put: %.2f   (target >= 0.5)\n",
	       none_gbps / r->put);
	printf("RATIO production fp8-block / cache put: %.2f   (target >= 0.5)\n",
	       fp8_gbps / r->put);
}

typedef struct opts {
	double gib;
	const char *workers, *level;
	char *sets[16]; /* KEY=VALUE */
	int n_sets;
} opts;

/* Command line into *o; 0, or 2 after a usage message. */
static int parse_opts(int argc, char **argv, opts *o)
{
	*o = (opts){.gib = 1.0, .workers = "4", .level = "warning"};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--gib") == 0 && i + 1 < argc)
			o->gib = strtod(argv[++i], NULL);
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			o->workers = argv[++i];
		else if (strcmp(argv[i], "--verbose") == 0)
			o->level =
			    "info"; /* weightd's production summaries (where the time went) */
		else if (strcmp(argv[i], "--messages") == 0)
			g_stream = 0;
		else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && o->n_sets < 16 &&
		         strchr(argv[i + 1], '=') != NULL)
			o->sets[o->n_sets++] = argv[++i];
		else {
			fprintf(stderr, "usage: bench_cold [--gib G (0.05..64, default 1)] "
			                "[--workers N (default 4)] [--verbose] [--messages] [--set "
			                "KEY=VALUE]...\n");
			return 2;
		}
	}
	if (o->gib < 0.05 || o->gib > 64) {
		fprintf(stderr, "bench_cold: --gib %.3f is outside 0.05..64\n", o->gib);
		return 2;
	}
	return 0;
}

/* An in-process weightd over models/ with an empty cachedir, o's settings. */
static wd_server *start_weightd(const opts *o, wd_config *cfg, const char *models,
                                const char *cachedir)
{
	wd_config_init(cfg);
	char *av[] = {"weightd", "--stream-listen", "tcp://127.0.0.1:0", "--listen",
	              "tcp://127.0.0.1:0", "--models-dir", (char *)models, "--cache-dir",
	              (char *)cachedir, "--chunk-bytes", "4M", "--workers", (char *)o->workers,
	              "--cache-max-bytes", "64G",
	              /* RAM to run ahead of the disk: more than the layout, as a
	               * deployment would set it (dist/weightd.conf: 8G) */
	              "--writeback-bytes", "2G", "--log-level", (char *)o->level};
	wt_errbuf err;
	wd_server *srv;
	if (wd_config_parse_args(cfg, (int)(sizeof(av) / sizeof(av[0])), av, &err) != WT_OK)
		die("weightd", err.msg);
	for (int i = 0; i < o->n_sets; i++) {
		char *eq = strchr(o->sets[i], '=');
		*eq = '\0';
		if (wd_config_set(cfg, o->sets[i], eq + 1, "--set", &err) != WT_OK)
			die("--set", err.msg);
		printf("weightd setting: %s = %s\n", o->sets[i], eq + 1);
	}
	if (wd_server_open(&srv, cfg, &err) != WT_OK)
		die("weightd", err.msg);
	if (cfg->writeback_prefault_bytes > 0) { /* a node started a while ago: wait for it */
		uint64_t t_pf = common_now_ns(), last = UINT64_MAX;
		wd_wbudget_stats st = {0};
		for (int quiet = 0; quiet < 10; usleep(20000)) {
			wd_wbudget_get(srv->wbudget, &st);
			quiet = st.prefaulted == last ? quiet + 1 : 0;
			last = st.prefaulted;
		}
		printf("writeback_prefault_bytes: %llu MiB faulted in at start, %.2f s\n",
		       (unsigned long long)(st.prefaulted >> 20),
		       secs(common_now_ns() - t_pf) - 0.2);
	}
	return srv;
}

/* Phases 1-4 against weightd at url into *r (all but the baselines). */
static void run_fetches(const char *url, results *r)
{
	wt_errbuf err;
	double q_w, tm_w, q_old, tm_old, q_again, tm_again;
	int live_w, live_old;
	uint64_t bytes_old;
	printf("cold fetch, cut-through:\n");
	r->t_cold = fetch_all(url, 1, &r->q_ttfb, &r->ttfb_max, &r->bytes, &r->live);
	/* the commits run behind the cut-through readers: wait for them (a cache hit
	 * once every rank is committed) so the warm fetch is all cache hits */
	wt_client_opts o;
	bench_client_opts(&o, &url);
	o.manifest_timeout_ms = 3600000;
	wt_client *c;
	if (wt_client_open(&c, &o, &err) != WT_OK)
		die("client", err.msg);
	admin(c, WT_ADMIN_WARM, WT_QUANT_NONE);
	printf("warm fetch:\n");
	r->t_warm = fetch_all(url, 1, &q_w, &tm_w, &r->bytes_w, &live_w);
	admin(c, WT_ADMIN_EVICT, WT_QUANT_NONE);
	printf("cold fetch, no cut-through (before 1.1):\n");
	r->t_old = fetch_all(url, 0, &q_old, &tm_old, &bytes_old, &live_old);
	r->q_old = q_old;
	r->tm_old = tm_old;
	admin(c, WT_ADMIN_EVICT, WT_QUANT_NONE);
	printf("cold fetch, cut-through, write-behind buffers reused:\n");
	r->t_again = fetch_all(url, 1, &q_again, &tm_again, &bytes_old, &live_old);
	r->q_again = q_again;
	r->t_none = produce(c, WT_QUANT_NONE);
	r->t_fp8 = produce(c, WT_QUANT_FP8_BLOCK);
	wt_client_close(c);
}

int main(int argc, char **argv)
{
	opts op;
	if (parse_opts(argc, argv, &op) != 0)
		return 2;
	if (bench_init(argv[0], "cold") != 0)
		return 1;
	char mb[32], models[1024], model[1100], cachedir[1024], putdir[1024];
	snprintf(mb, sizeof(mb), "%.0f", op.gib * 1024);
	if (bench_make_llama("m", mb) != 0)
		die("wt-mkckpt", "cannot make the fixture (build it with make)");
	snprintf(models, sizeof(models), "%s/models", bench_tmp());
	snprintf(model, sizeof(model), "%s/m", models);
	snprintf(cachedir, sizeof(cachedir), "%s/cache", bench_tmp());
	snprintf(putdir, sizeof(putdir), "%s/putcache", bench_tmp());
	cache_tune_malloc(CHUNK);
	common_log_set(NULL, NULL, strcmp(op.level, "info") == 0 ? WT_LOG_INFO : WT_LOG_WARNING);

	results r = {0};
	read_dir(model); /* into the page cache */
	uint64_t t0 = common_now_ns();
	r.ck = read_dir(model);
	r.t_read = secs(common_now_ns() - t0);

	wd_config cfg;
	wd_server *srv = start_weightd(&op, &cfg, models, cachedir);
	printf("model: llama %.2f GiB (%llu source bytes), TP=%d, %d concurrent clients, 4 MiB "
	       "chunks, %s workers, %llu production threads, writeback_bytes %llu MiB, tcp "
	       "loopback, cold cache, source in the page cache; chunks on %s\n",
	       (double)r.ck / 1073741824.0, (unsigned long long)r.ck, RANKS, RANKS, op.workers,
	       (unsigned long long)cfg.production_threads,
	       (unsigned long long)(cfg.writeback_bytes >> 20),
	       g_stream ? "the bulk stream" : "nng messages");
	run_fetches(wd_server_url(srv, 0), &r);
	wd_server_close(srv);
	wd_config_free(&cfg);
	r.put = cache_put_gbps(putdir, r.ck);
	print_results(&r);
	bench_finish(0);
	return 0;
}
