/*
 * bench_cuda_sink.c — cache-hit fetch from a real weightd into the CUDA device
 * sink, as ratios against baselines measured in the same run (docs/architecture.md section 6):
 *
 *   (a) CUDA sink goodput / host sink goodput                  target >= 0.9
 *   (b) CUDA sink goodput / counting sink goodput (wire + verification only,
 *       no copy at all): what the staging and DMA path costs
 *
 * Uses build/wt-mkckpt (llama, WT_BENCH_MB MiB, default 256) and build/weightd
 * next to this binary; WT_BENCH_WINDOW and WT_BENCH_CONNS set the client window
 * (default 8) and connections (default 2).
 * Goodputs are the best of 3 cache-hit fetches (the first fetch produces the
 * shard and is not counted). Where no CUDA device is usable it prints
 * "cuda: no usable device" and exits 0.
 */
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/util/benchutil.h"
#include "common/common.h"
#include "engine/cuda_sink_int.h"
#include "weights/client.h"
#include "weights/engine.h"

/* Best goodput (bytes/s) of 3 fetches of m into s; 0 on failure. */
static double best_of_3(wt_client *c, const wt_manifest *m, wt_sink *s, const char *what)
{
	double best = 0;
	for (int i = 0; i < 3; i++) {
		wt_errbuf err;
		uint64_t t0 = common_now_ns();
		int rv = wt_client_fetch(c, m, s, NULL, &err);
		double sec = (double)(common_now_ns() - t0) / 1e9;
		if (rv != WT_OK) {
			fprintf(stderr, "bench_cuda_sink: %s fetch: %s\n", what, err.msg);
			return 0;
		}
		double g = (double)wt_manifest_total_bytes(m) / sec;
		if (g > best)
			best = g;
	}
	return best;
}

int main(int argc, char **argv)
{
	(void)argc;
	wt_cuda_sink *cuda = NULL;
	wt_errbuf err;
	if (wt_cuda_sink_create(&cuda, 0, &err) != WT_OK) {
		printf("cuda: no usable device (%s)\n", err.msg);
		return 0;
	}
	/* as weightctl fetch does: reuse chunk buffers instead of fresh mmaps */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	const char *mb = NULL;
	if (bench_init(argv[0], "cuda") != 0)
		return 1;
	char url[512];
	int rc = 1;
	pid_t wd = -1;
	wt_client *c = NULL;
	wt_manifest *m = NULL;
	wt_host_sink *host = NULL;
	if ((wd = bench_fixture_and_weightd("bench_cuda_sink", url, sizeof(url), &mb)) < 0)
		goto out;
	wt_client_opts o;
	const char *eps[] = {url};
	bench_client_opts(&o, eps);
	wt_layout l;
	wt_layout_init(&l);
	bench_count_sink cnt;
	bench_count_sink_init(&cnt);
	if (wt_client_open(&c, &o, &err) != WT_OK ||
	    wt_client_get_manifest(c, "llama", &l, &m, &err) != WT_OK ||
	    wt_host_sink_create(&host, &err) != WT_OK ||
	    wt_client_fetch(c, m, &cnt.base, NULL, &err) != WT_OK) { /* produce + warm */
		fprintf(stderr, "bench_cuda_sink: %s\n", err.msg);
		goto out;
	}
	printf("fixture: llama %s MiB, weightd %s, window %u, shard %llu bytes, %zu tensors, "
	       "%zu chunks\n",
	       mb, url, o.window, (unsigned long long)wt_manifest_total_bytes(m),
	       wt_manifest_n_tensors(m), wt_manifest_n_chunks(m));
	double gc = best_of_3(c, m, &cnt.base, "count");
	double gh = best_of_3(c, m, wt_host_sink_sink(host), "host");
	engine_cuda_stats s0, s1;
	engine_cuda_sink_stats(cuda, &s0);
	double gd = best_of_3(c, m, wt_cuda_sink_sink(cuda), "cuda");
	engine_cuda_sink_stats(cuda, &s1);
	if (gc <= 0 || gh <= 0 || gd <= 0)
		goto out;
	printf("staging %u x %u MiB: %llu copies, %llu waits for a busy buffer in 3 fetches\n",
	       ENGINE_CUDA_N_STAGE, ENGINE_CUDA_STAGE_BYTES >> 20,
	       (unsigned long long)(s1.copies - s0.copies),
	       (unsigned long long)(s1.waits - s0.waits));
	printf("(a) cuda sink %.2f GB/s / host sink %.2f GB/s = %.2f (target >= 0.9)\n", gd / 1e9,
	       gh / 1e9, gd / gh);
	printf("(b) cuda sink %.2f GB/s / counting sink (no copy) %.2f GB/s = %.2f\n", gd / 1e9,
	       gc / 1e9, gd / gc);
	rc = 0;
out:
	wt_host_sink_destroy(host);
	wt_manifest_free(m);
	wt_client_close(c);
	wt_cuda_sink_destroy(cuda);
	bench_finish(wd);
	return rc;
}
