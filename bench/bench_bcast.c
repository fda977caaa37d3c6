/*
 * bench_bcast.c — broadcast of one rank to data-parallel replicas
 * (weights/bcast.h) against plain fetches from weightd measured in the same
 * run. Prints ratios, asserts nothing on figures (a member that fails exits 1).
 *
 *   build/bench/bench_bcast [--rounds N] [--lag-ms MS] [--slow-mb-s S] [--stream]
 *   (WT_BENCH_MB sizes the llama, default 256; the rank is TP 1, the whole
 *   model; N rounds per case, best kept, default 3; --lag-ms: the root's
 *   lag_timeout_ms in (c), default 1000; --slow-mb-s: how fast the slow
 *   replica's sink takes bytes, MB/s, default 50; --stream: the clients fetch over
 *   weightd's bulk data plane instead of nng messages)
 *
 * Setup: wt-mkckpt llama, weightd (a child process, 2 workers, 4 MiB chunks),
 * warmed by one fetch (every fetch below is a cache hit). Every member (the
 * root, the replicas, the plain fetchers) is a thread of this process with a
 * wt_client of its own and its own manifest from weightd, asked before the
 * clock starts; every sink counts bytes and keeps none (bench_count_sink), so
 * the figures are wire, copies and verification, not the engine's memory.
 *  (a) baseline: one plain wt_client_fetch, GB/s.
 *  (b) R = 2 and 4 members, over ipc:// and tcp://127.0.0.1: the root fetches
 *      into a broadcast sink, R-1 replicas wt_bcast_receive (each verifying
 *      against its own manifest); then R plain fetches at once. Time is from
 *      the root's fetch (replicas already dialing) to the last member's end.
 *      Per-replica and aggregate goodput (R x rank bytes / time), time / one
 *      plain fetch, broadcast / R concurrent plain fetches, broadcast / R
 *      plain fetches one after another (R x (a)), and CPU seconds per GB
 *      delivered to the R members (this process: root, replicas and clients;
 *      weightd apart).
 *  (c) R = 4 over tcp:// with one replica whose sink takes --slow-mb-s MB/s
 *      (so it reads slowly) and lag_timeout_ms --lag-ms: the time of the good
 *      members / all-good time in (b), and what happened to the slow one.
 * On one machine every member shares the same cores (and the loopback), so
 * (b) measures CPU per byte more than a network: the broadcast trades
 * weightd's sends and the replicas' fetches for the root's copy into its queue
 * and a send per replica.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/util/benchutil.h"
#include "common/common.h"
#include "weights/bcast.h"
#include "weights/client.h"
#include "weights/engine.h"

#define MAX_R 4

/* A counting sink whose write() first sleeps as long as n bytes take at
 * mb_s MB/s: a replica that reads slowly (it reads the next frame only after
 * its sink took the chunk). */
typedef struct slow_sink {
	bench_count_sink cs; /* first: count_ops cast the sink to it */
	uint32_t mb_s;       /* 0: not slow */
} slow_sink;

static const wt_sink_ops *g_count_ops; /* bench_count_sink's; set in main */
static wt_sink_ops g_slow_ops;         /* the same with slow_write */

static int slow_write(wt_sink *s, size_t t, uint64_t off, const void *d, size_t n, wt_errbuf *err)
{
	uint64_t ns = (uint64_t)n * 1000u / ((slow_sink *)s)->mb_s; /* n / (mb_s * 1e6) s */
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
	                      .tv_nsec = (long)(ns % 1000000000u)};
	nanosleep(&ts, NULL);
	return g_count_ops->write(s, t, off, d, n, err);
}

/* One member of a replica set: its own client and manifest. */
typedef struct member {
	wt_client *c;
	wt_manifest *m;  /* owned; asked once, before any clock */
	slow_sink sk;    /* sk.cs.base is the sink; slow when ops are g_slow_ops */
	const char *url; /* replica: the root's URL; NULL: a plain fetch */
	int rv;
	wt_errbuf err;
	uint64_t end_ns;
	pthread_t th;
} member;

typedef struct run_res {
	double total_s;         /* clock start to the last member's end */
	double good_s;          /* to the last end of a member that is not the slow one */
	double member_s[MAX_R]; /* to each member's end; [0] the root or fetcher 0 */
	double cpu_s, srv_cpu_s;
	uint32_t n_done; /* broadcast: replicas that got everything */
	char first[WT_ERRMSG_MAX];
} run_res;

static double secs(uint64_t a, uint64_t b)
{
	return (double)(b - a) / 1e9;
}

static void *member_main(void *arg)
{
	member *p = arg;
	if (p->url == NULL) {
		p->rv = wt_client_fetch(p->c, p->m, &p->sk.cs.base, NULL, &p->err);
	} else {
		wt_bcast_opts o;
		wt_bcast_opts_init(&o);
		o.url = p->url;
		o.group = "bench";
		p->rv = wt_bcast_receive(&o, p->m, &p->sk.cs.base, &p->err);
	}
	p->end_ns = common_now_ns();
	return NULL;
}

/* member_main on a thread of its own; a bench that cannot start one stops. */
static void member_start(member *p)
{
	if (pthread_create(&p->th, NULL, member_main, p) != 0) {
		fprintf(stderr, "bench_bcast: cannot start a thread\n");
		exit(1);
	}
}

/* 0 when member k got every byte of its rank; else -1 after a line naming it. */
static int member_check(const member *p, int k, const char *what)
{
	if (p->rv == WT_OK && p->sk.cs.bytes == wt_manifest_total_bytes(p->m))
		return 0;
	fprintf(stderr, "bench_bcast: %s: member %d: %s (%s), %llu of %llu bytes\n", what, k,
	        p->rv != WT_OK ? p->err.msg : "short", wt_errname(p->rv),
	        (unsigned long long)p->sk.cs.bytes,
	        (unsigned long long)wt_manifest_total_bytes(p->m));
	return -1;
}

static void sink_reset(member *p, uint32_t mb_s)
{
	bench_count_sink_init(&p->sk.cs);
	p->sk.mb_s = mb_s;
	if (mb_s > 0)
		p->sk.cs.base.ops = &g_slow_ops;
}

static pid_t g_weightd = -1;

static void clock_start(uint64_t *t0, double *c0, double *s0)
{
	*c0 = bench_cpu_s();
	*s0 = bench_proc_cpu_s(g_weightd);
	*t0 = common_now_ns();
}

/* slow: the slow member (0: none; the root or fetcher 0 never is) */
static void clock_stop(run_res *res, member *ms, int r, int slow, uint64_t t0, double c0, double s0)
{
	for (int k = 0; k < r; k++) {
		res->member_s[k] = secs(t0, ms[k].end_ns);
		if (res->member_s[k] > res->total_s)
			res->total_s = res->member_s[k];
		if (k != slow && res->member_s[k] > res->good_s)
			res->good_s = res->member_s[k];
	}
	res->cpu_s = bench_cpu_s() - c0;
	res->srv_cpu_s = bench_proc_cpu_s(g_weightd) - s0;
}

/* R plain fetches at once, one per thread. 0, or -1 if one failed. */
static int run_plain(member *ms, int r, run_res *res)
{
	uint64_t t0;
	double c0, s0;
	memset(res, 0, sizeof(*res));
	for (int k = 0; k < r; k++) {
		sink_reset(&ms[k], 0);
		ms[k].url = NULL;
	}
	clock_start(&t0, &c0, &s0);
	for (int k = 0; k < r; k++)
		member_start(&ms[k]);
	for (int k = 0; k < r; k++)
		pthread_join(ms[k].th, NULL);
	clock_stop(res, ms, r, 0, t0, c0, s0);
	int rc = 0;
	for (int k = 0; k < r; k++)
		rc |= member_check(&ms[k], k, "plain fetch");
	return rc;
}

/* One broadcast: ms[0] the root (this thread), ms[1..r-1] replicas on threads,
 * ms[slow] (0: none) with a sink that takes slow_mb_s MB/s. listen: the URL
 * the root binds; lag_ms: its lag_timeout_ms (0: the default). 0, or -1 if a
 * member that is not the slow one failed (res->n_done and res->first tell the
 * root's result). */
static int run_bcast(member *ms, int r, const char *listen, int slow, uint32_t slow_mb_s,
                     uint32_t lag_ms, run_res *res)
{
	wt_bcast_opts o;
	wt_bcast_opts_init(&o);
	o.url = listen;
	o.group = "bench";
	o.n_members = (uint32_t)r;
	o.lag_timeout_ms = lag_ms;
	wt_bcast_root *root = NULL;
	wt_errbuf err;
	memset(res, 0, sizeof(*res));
	for (int k = 0; k < r; k++)
		sink_reset(&ms[k], k == slow && k > 0 ? slow_mb_s : 0);
	if (wt_bcast_root_create(&root, &o, &ms[0].sk.cs.base, &err) != WT_OK) {
		fprintf(stderr, "bench_bcast: root on %s: %s\n", listen, err.msg);
		return -1;
	}
	uint64_t t0;
	double c0, s0;
	clock_start(&t0, &c0, &s0);
	for (int k = 1; k < r; k++) {
		ms[k].url = wt_bcast_root_url(root);
		member_start(&ms[k]);
	}
	ms[0].rv = wt_client_fetch(ms[0].c, ms[0].m, wt_bcast_root_sink(root), NULL, &ms[0].err);
	ms[0].end_ns = common_now_ns();
	for (int k = 1; k < r; k++)
		pthread_join(ms[k].th, NULL);
	clock_stop(res, ms, r, slow, t0, c0, s0);
	if (wt_bcast_root_result(root, &res->n_done, &err) != WT_OK)
		snprintf(res->first, sizeof(res->first), "%s", err.msg);
	wt_bcast_root_destroy(root);
	int rc = 0;
	for (int k = 0; k < r; k++)
		if (k != slow)
			rc |= member_check(&ms[k], k, "broadcast");
	return rc;
}

/* The listen URL of a transport: "ipc" (a socket under the temp folder) or "tcp". */
static void listen_url(char *url, size_t cap, const char *tr)
{
	static int seq;
	if (strcmp(tr, "ipc") == 0)
		snprintf(url, cap, "ipc://%s/bcast-%d.ipc", bench_tmp(), seq++);
	else
		snprintf(url, cap, "tcp://127.0.0.1:0");
}

/* Best of rounds runs of a case (the shortest good_s); slow = 0: all good. */
static int best_bcast(member *ms, int r, const char *tr, int slow, uint32_t slow_mb_s,
                      uint32_t lag_ms, uint64_t rounds, run_res *best)
{
	for (uint64_t i = 0; i < rounds; i++) {
		run_res res;
		char url[4300];
		listen_url(url, sizeof(url), tr);
		if (run_bcast(ms, r, url, slow, slow_mb_s, lag_ms, &res) != 0)
			return -1;
		if (i == 0 || res.good_s < best->good_s)
			*best = res;
	}
	return 0;
}

static int best_plain(member *ms, int r, uint64_t rounds, run_res *best)
{
	for (uint64_t i = 0; i < rounds; i++) {
		run_res res;
		if (run_plain(ms, r, &res) != 0)
			return -1;
		if (i == 0 || res.total_s < best->total_s)
			*best = res;
	}
	return 0;
}

/* (b) for one R and transport: the broadcast, R plain fetches, their ratios. */
static int case_b(member *ms, int r, const char *tr, uint64_t bytes, double one_s, uint64_t rounds,
                  run_res *bc_out)
{
	run_res bc, pl;
	if (best_bcast(ms, r, tr, 0, 0, 0, rounds, &bc) != 0 || best_plain(ms, r, rounds, &pl) != 0)
		return -1;
	double gb = (double)bytes * r / 1e9;
	printf("(b) broadcast R=%d %s://: %.3f s for %d ranks, aggregate %.2f GB/s; per member "
	       "GB/s: root %.2f",
	       r, tr, bc.total_s, r, gb / bc.total_s, (double)bytes / 1e9 / bc.member_s[0]);
	for (int k = 1; k < r; k++)
		printf(", replica %d %.2f", k, (double)bytes / 1e9 / bc.member_s[k]);
	printf("\n    %d plain fetches at once: %.3f s, aggregate %.2f GB/s\n", r, pl.total_s,
	       gb / pl.total_s);
	printf("    RATIO broadcast / one plain fetch = %.2f; broadcast / %d concurrent plain "
	       "fetches = %.2f; broadcast / %d plain fetches one after another (%d x (a)) = %.2f\n",
	       bc.total_s / one_s, r, bc.total_s / pl.total_s, r, r, bc.total_s / (one_s * r));
	printf("    CPU s per GB delivered: broadcast %.2f (this process %.2f + weightd %.2f), "
	       "plain %.2f (this process %.2f + weightd %.2f)\n",
	       (bc.cpu_s + bc.srv_cpu_s) / gb, bc.cpu_s / gb, bc.srv_cpu_s / gb,
	       (pl.cpu_s + pl.srv_cpu_s) / gb, pl.cpu_s / gb, pl.srv_cpu_s / gb);
	*bc_out = bc;
	return 0;
}

/* (c): R = MAX_R over tcp://, member MAX_R - 1 slow; all-good time from (b). */
static int case_c(member *ms, uint32_t slow_mb_s, uint32_t lag_ms, uint64_t rounds,
                  const run_res *good)
{
	run_res sl;
	int slow = MAX_R - 1;
	if (best_bcast(ms, MAX_R, "tcp", slow, slow_mb_s, lag_ms, rounds, &sl) != 0)
		return -1;
	double good_s = sl.good_s;
	const member *p = &ms[slow];
	printf("(c) one slow replica (its sink takes %u MB/s), R=%d tcp://, lag_timeout_ms %u: "
	       "good members %.3f s / all good %.3f s = %.2f (+%.3f s)\n",
	       slow_mb_s, MAX_R, lag_ms, good_s, good->total_s, good_s / good->total_s,
	       good_s - good->total_s);
	printf("    slow replica: %s after %.3f s, %llu of %llu bytes; root: %u of %d replicas "
	       "got everything%s%s\n",
	       p->rv == WT_OK ? "completed" : wt_errname(p->rv), sl.member_s[slow],
	       (unsigned long long)p->sk.cs.bytes,
	       (unsigned long long)wt_manifest_total_bytes(p->m), sl.n_done, MAX_R - 1,
	       sl.first[0] ? " (replicas numbered in join order): " : "", sl.first);
	return 0;
}

static int parse_args(int argc, char **argv, uint64_t *rounds, uint64_t *lag, uint64_t *slow,
                      int *stream)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--stream") == 0) {
			*stream = 1;
			continue;
		}
		if (i + 1 >= argc)
			goto usage;
		const char *v = argv[++i];
		if (strcmp(a, "--rounds") == 0) {
			if (bench_u64("rounds", v, rounds) != 0 || *rounds == 0 || *rounds > 100)
				goto usage;
		} else if (strcmp(a, "--lag-ms") == 0) {
			if (bench_u64("lag-ms", v, lag) != 0 || *lag == 0 || *lag > 30000)
				goto usage;
		} else if (strcmp(a, "--slow-mb-s") == 0) {
			if (bench_u64("slow-mb-s", v, slow) != 0 || *slow == 0 || *slow > 100000)
				goto usage;
		} else {
			goto usage;
		}
	}
	return 0;
usage:
	fprintf(stderr, "usage: bench_bcast [--rounds 1..100] [--lag-ms 1..30000] "
	                "[--slow-mb-s 1..100000] [--stream]\n");
	return -1;
}

int main(int argc, char **argv)
{
	uint64_t rounds = 3, lag_ms = 1000, slow_mb_s = 50;
	int stream = 0, rc = 1;
	setvbuf(stdout, NULL, _IOLBF, 0); /* each line as it is measured */
	if (parse_args(argc, argv, &rounds, &lag_ms, &slow_mb_s, &stream) != 0 ||
	    bench_init(argv[0], "bcast") != 0)
		return 2;
	bench_count_sink probe;
	bench_count_sink_init(&probe);
	g_count_ops = probe.base.ops;
	g_slow_ops = *g_count_ops;
	g_slow_ops.write = slow_write;
	member ms[MAX_R];
	memset(ms, 0, sizeof(ms));
	char url[512];
	const char *mb = NULL;
	pid_t wd = bench_fixture_and_weightd("bench_bcast", url, sizeof(url), &mb);
	if (wd < 0)
		goto out;
	g_weightd = wd;
	const char *eps[] = {url};
	wt_client_opts co;
	bench_client_opts(&co, eps);
	co.stream = stream;
	wt_layout l;
	wt_layout_init(&l);
	wt_errbuf err;
	for (int k = 0; k < MAX_R; k++)
		if (wt_client_open(&ms[k].c, &co, &err) != WT_OK ||
		    wt_client_get_manifest(ms[k].c, "llama", &l, &ms[k].m, &err) != WT_OK) {
			fprintf(stderr, "bench_bcast: member %d: %s\n", k, err.msg);
			goto out;
		}
	run_res one, good4 = {0}, bc;
	/* untimed: the first manifest waited for production; this reads it once */
	if (run_plain(ms, 1, &one) != 0)
		goto out;
	uint64_t bytes = wt_manifest_total_bytes(ms[0].m);
	printf("fixture: llama %s MiB, rank TP 1 %.1f MiB, weightd %s, %s, window %u, "
	       "connections %u; members are threads of this process\n",
	       mb, (double)bytes / 1048576.0, url, stream ? "bulk stream" : "messages", co.window,
	       co.connections);
	if (best_plain(ms, 1, rounds, &one) != 0)
		goto out;
	printf("(a) plain fetch, 1 rank: %.3f s, %.2f GB/s; CPU s per GB: this process %.2f, "
	       "weightd %.2f\n",
	       one.total_s, (double)bytes / 1e9 / one.total_s, one.cpu_s / ((double)bytes / 1e9),
	       one.srv_cpu_s / ((double)bytes / 1e9));
	static const char *const trs[] = {"ipc", "tcp"};
	for (int r = 2; r <= MAX_R; r *= 2)
		for (size_t t = 0; t < 2; t++) {
			if (case_b(ms, r, trs[t], bytes, one.total_s, rounds, &bc) != 0)
				goto out;
			if (r == MAX_R && strcmp(trs[t], "tcp") == 0)
				good4 = bc;
		}
	if (case_c(ms, (uint32_t)slow_mb_s, (uint32_t)lag_ms, rounds, &good4) != 0)
		goto out;
	rc = 0;
out:
	for (int k = 0; k < MAX_R; k++) {
		wt_manifest_free(ms[k].m);
		wt_client_close(ms[k].c);
	}
	bench_finish(wd);
	return rc;
}
