/*
 * bench_stack.c — the memory of producing large expert stacks without EP
 * (shardmap/produce_batch.c): every rank of a TP=4 layout of a gpt_oss checkpoint
 * with many experts (`wt-mkckpt --family gpt_oss --experts E`, default 4096: two
 * layers of MXFP4 stacks that dequantize to 768 MiB of BF16 each; --family mixtral
 * or deepseek_v3: experts stored one tensor each, BF16 / FP8 blocks) produced in one
 * pass on two threads, the stacks read in batches of the default stack_batch_bytes
 * (256 MiB), as weightd produces a layout. Baseline, in the same run: the outputs
 * assembled whole (emit only: each rank's share of a stack held until every batch
 * is in); measured: the outputs streamed in 4 MiB parts (emit_part, as weightd
 * takes them, as each batch comes). Each production runs in a child process of its
 * own (its peak RSS is its own), alternating, --rounds times; prints each one's
 * peak RSS and seconds (the child's wall time: plan and production), and the
 * ratios of the medians, streamed / assembled.
 *
 *   bench_stack [--family gpt_oss|mixtral|deepseek_v3] [--experts E] [--rounds N]
 *               [--quant none|fp8-block|int8-channel]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/util/benchutil.h"
#include "common/common.h"
#include "loader/loader.h"
#include "shardmap/shardmap.h"

enum { PART = 4 << 20, MAX_ROUNDS = 15 };

/* The child: produce every rank of dir's TP=4 layout, streamed or assembled. */
static int child(const char *mode, const char *dir, const char *quant)
{
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	wt_errbuf err = {0};
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 4;
	int rv = wt_quant_from_name(quant, &l.quant, &err);
	if (rv == WT_OK)
		rv = store_open(&s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&c, s, &err);
	if (rv == WT_OK)
		rv = shardmap_plan(c, &l, &p, &err);
	bench_prod_count sk = {0};
	sm_produce_opts o = {.only_rank = -1,
	                     .threads = 2,
	                     .emit = bench_prod_count_emit,
	                     .emit_part =
	                         strcmp(mode, "streamed") == 0 ? bench_prod_count_part : NULL,
	                     .part_bytes = PART,
	                     .ctx = &sk};
	if (rv == WT_OK)
		rv = shardmap_produce_ex(c, p, &o, &err);
	if (rv != WT_OK)
		fprintf(stderr, "bench_stack: %s\n", err.msg);
	shardmap_plan_free(p);
	ckpt_close(c);
	store_close(s);
	wt_layout_clear(&l);
	return rv == WT_OK ? 0 : 1;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--child") == 0)
		return child(argv[2], argv[3], argv[4]);
	uint64_t experts = 4096, rounds = 3;
	const char *quant = "none", *fam = "gpt_oss";
	static const struct option opts[] = {{"family", required_argument, NULL, 'f'},
	                                     {"experts", required_argument, NULL, 'e'},
	                                     {"rounds", required_argument, NULL, 'r'},
	                                     {"quant", required_argument, NULL, 'q'},
	                                     {NULL, 0, NULL, 0}};
	for (int k; (k = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		if (k == 'e' && bench_u64("experts", optarg, &experts) == 0 && experts >= 4 &&
		    experts <= 65536)
			continue;
		if (k == 'r' && bench_u64("rounds", optarg, &rounds) == 0 && rounds >= 1 &&
		    rounds <= MAX_ROUNDS)
			continue;
		if (k == 'q') {
			quant = optarg;
			continue;
		}
		if (k == 'f' && (strcmp(optarg, "gpt_oss") == 0 || strcmp(optarg, "mixtral") == 0 ||
		                 strcmp(optarg, "deepseek_v3") == 0)) {
			fam = optarg;
			continue;
		}
		fprintf(
		    stderr,
		    "usage: bench_stack [--family gpt_oss|mixtral|deepseek_v3] "
		    "[--experts 4..65536] [--rounds 1..%d] [--quant none|fp8-block|int8-channel]\n",
		    MAX_ROUNDS);
		return 2;
	}
	if (bench_init(argv[0], "stack") != 0)
		return 1;
	char dir[4096], bin[4096], self[4096], ne[32];
	snprintf(dir, sizeof(dir), "%s/%s", bench_tmp(), fam);
	snprintf(bin, sizeof(bin), "%s/wt-mkckpt", bench_build());
	snprintf(self, sizeof(self), "%s/bench/bench_stack", bench_build());
	snprintf(ne, sizeof(ne), "%llu", (unsigned long long)experts);
	char *gen[] = {bin, "--family", (char *)fam, "--experts", ne, "--out", dir, NULL};
	if (bench_run(gen, NULL) != 0) {
		fprintf(stderr, "bench_stack: %s --family %s --experts %s failed\n", bin, fam, ne);
		bench_finish(-1);
		return 1;
	}
	char st[4200];
	snprintf(st, sizeof(st), "%s/model.safetensors", dir);
	struct stat sb;
	printf("%s, %s experts, 2 layers, TP=4 all ranks, quant %s, 2 threads: checkpoint %.0f "
	       "MiB\n",
	       fam, ne, quant, stat(st, &sb) == 0 ? (double)sb.st_size / 1048576.0 : -1.0);
	static const char *const modes[2] = {"assembled", "streamed"};
	double rss[2][MAX_ROUNDS], sec[2][MAX_ROUNDS];
	for (int r = 0; r < (int)rounds; r++)
		for (int k = 0; k < 2; k++) {
			int m = (r + k) % 2; /* alternate which goes first */
			char *argv_c[] = {self, "--child",     (char *)modes[m],
			                  dir,  (char *)quant, NULL};
			long kb = 0;
			uint64_t t0 = common_now_ns();
			if (bench_run(argv_c, &kb) != 0) {
				fprintf(stderr, "bench_stack: the %s production failed\n",
				        modes[m]);
				bench_finish(-1);
				return 1;
			}
			sec[m][r] = (double)(common_now_ns() - t0) / 1e9;
			rss[m][r] = (double)kb / 1024.0;
			printf("round %d %-9s: peak RSS %7.1f MiB, %.2f s\n", r + 1, modes[m],
			       rss[m][r], sec[m][r]);
		}
	double ra = median(rss[0], (int)rounds), rs = median(rss[1], (int)rounds);
	double sa = median(sec[0], (int)rounds), ss = median(sec[1], (int)rounds);
	printf("RATIO peak RSS streamed / assembled: %.2f (%.1f / %.1f MiB, medians)\n", rs / ra,
	       rs, ra);
	printf("RATIO seconds streamed / assembled: %.2f (%.2f / %.2f s, medians)\n", ss / sa, ss,
	       sa);
	bench_finish(-1);
	return 0;
}
