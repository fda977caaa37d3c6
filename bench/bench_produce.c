/*
 * bench_produce.c — production throughput of shardmap_produce against a plain
 * sequential read of the same files, both in the same run with the page cache
 * warm.
 *
 * Input: a ~1 GiB llama checkpoint (`wt-mkckpt --family llama --size-mb 1024`,
 * generated into $WT_BENCH_DIR or /tmp/wt-bench-llama-1g if absent; with
 * WT_BENCH_DIR set, WT_BENCH_MB picks the size it is generated at, 8..8192,
 * default 1024: the default folder always holds the 1 GiB one). Baseline:
 * read() of every file of the folder into a reused 8 MiB buffer. Measured: plan
 * + produce ALL ranks of a TP=4 layout (quant none) in one pass, the emit
 * callback touching nothing. Ratio = (checkpoint bytes / produce seconds) /
 * (file bytes / read seconds); target >= 0.7. Best of 3 of each.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/util/benchutil.h"
#include "common/common.h"
#include "loader/loader.h"
#include "shardmap/shardmap.h"

enum { REPS = 3, BUF = 8 << 20 };

static double read_all(const char *dir, char *buf, uint64_t *total)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	uint64_t t0 = common_now_ns();
	*total = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		ssize_t n;
		while ((n = read(fd, buf, BUF)) > 0)
			*total += (uint64_t)n;
		close(fd);
	}
	closedir(d);
	return (double)(common_now_ns() - t0) / 1e9;
}

static double produce(const char *dir, uint64_t *src_bytes, bench_prod_count *sk)
{
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	wt_errbuf err = {0};
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 4;
	uint64_t t0 = common_now_ns();
	int rv = store_open(&s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&c, s, &err);
	if (rv == WT_OK)
		rv = shardmap_plan(c, &l, &p, &err);
	if (rv == WT_OK)
		rv = shardmap_produce(c, p, -1, bench_prod_count_emit, sk, &err);
	double sec = (double)(common_now_ns() - t0) / 1e9;
	if (rv == WT_OK)
		*src_bytes = ckpt_total_bytes(c);
	else
		fprintf(stderr, "bench_produce: %s\n", err.msg);
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	return rv == WT_OK ? sec : -1;
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *dir =
	    getenv("WT_BENCH_DIR") ? getenv("WT_BENCH_DIR") : "/tmp/wt-bench-llama-1g";
	const char *env_mb = getenv("WT_BENCH_DIR") ? getenv("WT_BENCH_MB") : NULL;
	unsigned long long size_mb = 1024;
	if (getenv("WT_BENCH_DIR") == NULL && getenv("WT_BENCH_MB") != NULL)
		printf("WT_BENCH_MB not used: %s holds the 1 GiB checkpoint (set WT_BENCH_DIR)\n",
		       dir);
	if (env_mb != NULL) {
		char *end = NULL;
		size_mb = strtoull(env_mb, &end, 10);
		if (end == env_mb || *end != '\0' || size_mb < 8 || size_mb > 8192) {
			fprintf(stderr, "bench_produce: WT_BENCH_MB '%s': use 8..8192\n", env_mb);
			return 2;
		}
	}
	char cfg[4096];
	snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
	struct stat st;
	if (stat(cfg, &st) != 0) {
		char self[4096], cmd[8192];
		snprintf(self, sizeof(self), "%s", argv[0]);
		snprintf(cmd, sizeof(cmd), "%s/../wt-mkckpt --family llama --size-mb %llu --out %s",
		         dirname(self), size_mb, dir);
		printf("generating: %s\n", cmd);
		if (system(cmd) != 0) {
			fprintf(stderr, "bench_produce: generating the checkpoint failed\n");
			return 1;
		}
	}
	char *buf = malloc(BUF);
	if (!buf)
		return 1;
	uint64_t fbytes = 0, sbytes = 0;
	read_all(dir, buf, &fbytes); /* warm the page cache */
	double rbest = 1e30, pbest = 1e30;
	bench_prod_count sk = {0};
	for (int r = 0; r < REPS; r++) {
		double t = read_all(dir, buf, &fbytes);
		rbest = t < rbest ? t : rbest;
		sk = (bench_prod_count){0};
		t = produce(dir, &sbytes, &sk);
		if (t < 0)
			return 1;
		pbest = t < pbest ? t : pbest;
	}
	free(buf);
	double rtp = (double)fbytes / rbest / 1e9, ptp = (double)sbytes / pbest / 1e9;
	printf("checkpoint %s: %.1f MiB in files, %.1f MiB of tensors\n", dir,
	       (double)fbytes / 1048576.0, (double)sbytes / 1048576.0);
	printf("sequential read (warm):        %.3f s  %.2f GB/s\n", rbest, rtp);
	printf("produce TP=4 all ranks (none): %.3f s  %.2f GB/s  (%llu tensors, %.1f MiB out)\n",
	       pbest, ptp, (unsigned long long)sk.calls, (double)sk.bytes / 1048576.0);
	printf("ratio production/read throughput: %.2f (target >= 0.7)\n", ptp / rtp);
	return 0;
}
