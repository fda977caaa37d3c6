/*
 * test_shardmap_stacks.c — expert stacks read expert by expert (produce_stack.c,
 * docs/format.md 4.7): an expert-parallel rank asks the store for its own experts'
 * bytes of every stack alone (Llama 4's BF16 stacks transposed, the fbgemm FP8
 * release's stacks dequantized or passed through with their scales, GPT-OSS's MXFP4
 * blocks with their scales and its de-interleaved biases), and its outputs are the
 * slices of the single-rank layout's (which reads every expert); the all-ranks pass
 * still asks for every byte once, produces a stack one EP group at a time (rank 0's
 * expert tensors come before the whole stack was read; TP 2 x EP 2 included), and
 * emits the bytes the one-rank passes emit; and stacks produced one expert at a time
 * (stack_batch_bytes) emit the same bytes, every byte still read once. Fixtures from
 * $WT_BUILD/wt-mkckpt (seed printed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed057aull
#include "test_shardmap_util.h"
#include "tests/util/testutil.h"

#define GEN_SEED 7u

static char *g_root;

static int gen(const char *fam)
{
	char *bin = tu_mkckpt();
	char *dir = tu_path(g_root, fam);
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' --family %s --out '%s' --seed %u >/dev/null 2>&1", bin,
	         fam, dir, GEN_SEED);
	free(bin);
	free(dir);
	int st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

static const char *const g_fams[] = {"llama4_text", "llama4_fbgemm", "gpt_oss",
                                     "mixtral",     "qwen2_moe",     "deepseek_v3"};

static int setup(void **state)
{
	(void)state;
	g_root = tu_mkdtemp("smstacks");
	if (g_root == NULL)
		return -1;
	print_message("fixtures: wt-mkckpt --seed %u into %s\n", GEN_SEED, g_root);
	for (size_t i = 0; i < sizeof(g_fams) / sizeof(g_fams[0]); i++)
		if (gen(g_fams[i]) != 0) {
			print_error("wt-mkckpt --family %s failed; build it first (make)\n",
			            g_fams[i]);
			return -1;
		}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (g_root != NULL)
		tu_rmrf(g_root);
	free(g_root);
	return 0;
}

/* Bytes of the checkpoint's expert tensors (stacks, their scales and biases). */
static uint64_t stack_bytes(const ckpt *c)
{
	uint64_t n = 0;
	for (size_t i = 0; i < ckpt_n_tensors(c); i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		if (strstr(t->name, ".experts.") != NULL)
			n += t->nbytes;
	}
	return n;
}

/* An all-ranks pass that records, at each emit of rank 0, the bytes asked of the
 * store since the emit before it (of any rank): what its work item read for it. */
typedef struct paced {
	tm_prod *pr;
	store *s;
	const sm_plan *p;
	uint64_t last;
	uint64_t max_expert; /* the most asked before one of rank 0's expert tensors */
} paced;

static int paced_on(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t n,
                    wt_errbuf *err)
{
	paced *x = ctx;
	uint64_t now = store_bytes_asked(x->s);
	if (rank == 0 && strstr(shardmap_rank_tensor(x->p, 0, ix)->name, ".experts.") != NULL &&
	    now - x->last > x->max_expert)
		x->max_expert = now - x->last;
	x->last = now;
	return tm_on(x->pr, rank, ix, bytes, n, err);
}

/* The largest expert tensor of the checkpoint. */
static uint64_t largest_stack(const ckpt *c)
{
	uint64_t n = 0;
	for (size_t i = 0; i < ckpt_n_tensors(c); i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		if (strstr(t->name, ".experts.") != NULL && t->nbytes > n)
			n = t->nbytes;
	}
	return n;
}

/* Bytes asked of the store by producing rank `only` (< 0: all); the bytes into *out. */
static uint64_t asked(store *s, const ckpt *c, const sm_plan *p, int64_t only, tm_prod **out)
{
	wt_errbuf err = {0};
	int rv;
	uint64_t b0 = store_bytes_asked(s);
	*out = tm_produce(c, p, only, &rv, &err);
	if (rv != WT_OK)
		print_error("produce rank %lld: %s\n", (long long)only, err.msg);
	assert_int_equal(rv, WT_OK);
	return store_bytes_asked(s) - b0;
}

/* Rank r's tensors against the single-rank layout's tensor of their name: the same
 * bytes, or (an expert tensor [count, ...]) the slice of its experts [e0, e0+count).
 * With tp > 1 the expert tensors alone (whole experts under EP; the rest is split). */
static void same_as_whole(const sm_plan *p, const tm_prod *pr, uint32_t r, const sm_plan *p1,
                          const tm_prod *whole, int64_t e0, uint32_t tp)
{
	for (size_t i = 0; i < pr->n[r]; i++) {
		const sm_out_info *o = shardmap_rank_tensor(p, r, i);
		if (tp > 1 && strstr(o->name, ".experts.") == NULL)
			continue;
		int j = tm_ix(p1, 0, o->name);
		assert_true(j >= 0);
		const uint8_t *a = pr->b[r][i], *b = whole->b[0][j];
		uint64_t n = pr->len[r][i], nw = whole->len[0][j];
		if (n != nw) {
			const sm_out_info *ow = shardmap_rank_tensor(p1, 0, (size_t)j);
			assert_true(strstr(o->name, ".experts.") != NULL);
			assert_int_equal(nw % (uint64_t)ow->shape[0], 0);
			b += (uint64_t)e0 * (nw / (uint64_t)ow->shape[0]);
			assert_int_equal(n, (uint64_t)o->shape[0] * (nw / (uint64_t)ow->shape[0]));
		}
		if (memcmp(a, b, n) != 0)
			fail_msg("rank %u: '%s' differs from the single-rank layout's", r, o->name);
	}
}

static void one_case(const char *fam, wt_quant q, uint32_t tp, uint32_t ep)
{
	char *dir = tu_path(g_root, fam);
	wt_layout l1, l;
	wt_layout_init(&l1);
	l1.quant = q;
	wt_layout_init(&l);
	l.quant = q;
	l.tp_size = tp;
	l.ep_size = ep;
	store *s1, *s;
	ckpt *c1, *c;
	sm_plan *p1, *p;
	wt_errbuf err = {0};
	int rv = tm_plan(dir, &l1, &s1, &c1, &p1, &err);
	if (rv == WT_OK)
		rv = tm_plan(dir, &l, &s, &c, &p, &err);
	if (rv != WT_OK)
		fail_msg("%s: %s", fam, err.msg);
	tm_prod *whole;
	uint64_t a1 = asked(s1, c1, p1, -1, &whole);
	tm_prod *all = tm_produce(c, p, 0, &rv, &err); /* only for its buffers' shape */
	for (uint32_t r = 0; r < all->nr; r++)
		for (size_t i = 0; i < all->n[r]; i++) {
			free(all->b[r][i]);
			all->b[r][i] = NULL;
		}
	all->emits = 0;
	paced pc = {.pr = all, .s = s, .p = p, .last = store_bytes_asked(s)};
	uint64_t b0 = pc.last;
	assert_int_equal(shardmap_produce(c, p, -1, paced_on, &pc, &err), WT_OK);
	uint64_t a_all = store_bytes_asked(s) - b0;
	uint64_t stacks = stack_bytes(c);
	int64_t E = ckpt_get_config(c)->num_experts;
	printf("%s quant %s tp %u ep %u: %lld experts, stacks %llu of %llu bytes asked by one "
	       "rank of tp 1; all ranks ask %llu\n",
	       fam, wt_quant_name(q), tp, ep, (long long)E, (unsigned long long)stacks,
	       (unsigned long long)a1, (unsigned long long)a_all);
	assert_true(E > 0 && stacks > 0 && stacks < a1);
	assert_int_equal(a_all, a1); /* every byte once */
	/* EP group by EP group: rank 0's stacks were produced from its experts' bytes,
	 * not after the whole stack was read */
	printf("  all ranks: at most %llu bytes asked before an expert tensor of rank 0 "
	       "(largest stack %llu)\n",
	       (unsigned long long)pc.max_expert, (unsigned long long)largest_stack(c));
	assert_true(pc.max_expert > 0 && pc.max_expert < largest_stack(c));
	for (uint32_t r = 0; r < tp * ep; r++) {
		tm_prod *one;
		uint64_t ar = asked(s, c, p, r, &one);
		int64_t e = r / tp, share = E / ep, extra = E % ep;
		int64_t count = share + (e < extra), e0 = e * share + (e < extra ? e : extra);
		/* tp 1: everything else replicated, read whole; the stacks' own experts */
		uint64_t want = a1 - stacks + stacks / (uint64_t)E * (uint64_t)count;
		printf("  rank %u: experts [%lld, %lld), asked %llu bytes (want %llu%s)\n", r,
		       (long long)e0, (long long)(e0 + count), (unsigned long long)ar,
		       (unsigned long long)want, tp > 1 ? " at most, tp > 1" : "");
		if (tp == 1)
			assert_int_equal(ar, want);
		else /* the rest split by tp: less */
			assert_true(ar <= want);
		same_as_whole(p, one, r, p1, whole, e0, tp);
		for (size_t i = 0; i < one->n[r]; i++) {
			assert_int_equal(one->len[r][i], all->len[r][i]);
			assert_memory_equal(one->b[r][i], all->b[r][i], one->len[r][i]);
		}
		tm_prod_free(one);
	}
	tm_prod_free(all);
	tm_prod_free(whole);
	tm_close(s, c, p);
	tm_close(s1, c1, p1);
	wt_layout_clear(&l);
	wt_layout_clear(&l1);
	free(dir);
}

static void test_llama4_bf16(void **state)
{
	(void)state;
	one_case("llama4_text", WT_QUANT_NONE, 1, 2);
	one_case("llama4_text", WT_QUANT_NONE, 1, 4);
	one_case("llama4_text", WT_QUANT_INT8_CHANNEL, 1, 2);
	one_case("llama4_text", WT_QUANT_FP8_BLOCK, 2, 2);
}

static void test_llama4_fbgemm(void **state)
{
	(void)state;
	one_case("llama4_fbgemm", WT_QUANT_NONE, 1, 2);        /* dequantized, transposed */
	one_case("llama4_fbgemm", WT_QUANT_FP8_CHANNEL, 1, 4); /* codes and scales */
	one_case("llama4_fbgemm", WT_QUANT_INT8_CHANNEL, 1, 4);
	one_case("llama4_fbgemm", WT_QUANT_FP8_CHANNEL, 2, 2);
}

static void test_gpt_oss_mxfp4(void **state)
{
	(void)state;
	one_case("gpt_oss", WT_QUANT_NONE, 1, 2); /* blocks, scales, biases */
	one_case("gpt_oss", WT_QUANT_NONE, 1, 4);
	one_case("gpt_oss", WT_QUANT_FP8_BLOCK, 2, 2);
}

/* Stacks produced a few experts at a time (sm_produce_opts.stack_batch_bytes; 1: one
 * expert per batch) emit the bytes of the default production and still ask the store
 * for every byte once, on one thread and on three; and with parts taken
 * (emit_part, parts of PART_BYTES) the stacks' outputs come in parts, in order, as
 * the batches come: on one thread, an expert stack's first part is emitted before
 * the store was asked for its last expert (assembled, the outputs came whole once
 * every batch was read). */
typedef struct batch_case {
	const char *fam;
	wt_quant q;
	uint32_t tp, ep;
} batch_case;

enum { PART_BYTES = 4096 };

typedef struct parts_got {
	tm_prod *pr;
	const sm_plan *p;
	store *s;
	pthread_mutex_t lk;
	uint64_t **next;  /* bytes of each tensor so far */
	uint64_t **first; /* store_bytes_asked at its first part */
	int parts;        /* calls */
	int fail_at;      /* this call fails (0: none) */
	int early;        /* expert tensors whose last part came after more was read */
	char bad[512];    /* the first part out of order */
} parts_got;

static int got_whole(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t n,
                     wt_errbuf *err)
{
	parts_got *pg = ctx;
	pthread_mutex_lock(&pg->lk);
	int rv = tm_on(pg->pr, rank, ix, bytes, n, err);
	pthread_mutex_unlock(&pg->lk);
	return rv;
}

static int got_part(void *ctx, uint32_t rank, size_t ix, uint64_t off, const void *bytes,
                    uint64_t n, wt_errbuf *err)
{
	parts_got *pg = ctx;
	const sm_out_info *oi = shardmap_rank_tensor(pg->p, rank, ix);
	pthread_mutex_lock(&pg->lk);
	if (++pg->parts == pg->fail_at) {
		pthread_mutex_unlock(&pg->lk);
		return wt_seterr(err, WT_EIO, "part %d fails on purpose", pg->fail_at);
	}
	tm_prod *pr = pg->pr;
	bool last = off + n == oi->nbytes;
	if (off != pg->next[rank][ix] || off + n > oi->nbytes || (!last && n != PART_BYTES)) {
		if (pg->bad[0] == '\0')
			snprintf(pg->bad, sizeof(pg->bad),
			         "rank %u '%s': part of %llu bytes at %llu, %llu so far, of %llu",
			         rank, oi->name, (unsigned long long)n, (unsigned long long)off,
			         (unsigned long long)pg->next[rank][ix],
			         (unsigned long long)oi->nbytes);
		pthread_mutex_unlock(&pg->lk);
		return WT_EINVAL;
	}
	if (off == 0) {
		pr->b[rank][ix] = malloc(oi->nbytes ? oi->nbytes : 1);
		pr->len[rank][ix] = oi->nbytes;
		pg->first[rank][ix] = store_bytes_asked(pg->s);
	}
	memcpy((uint8_t *)pr->b[rank][ix] + off, bytes, n);
	pg->next[rank][ix] = off + n;
	if (last && off > 0 && strstr(oi->name, ".experts.") != NULL &&
	    store_bytes_asked(pg->s) > pg->first[rank][ix])
		pg->early++;
	pthread_mutex_unlock(&pg->lk);
	return WT_OK;
}

/* A production's collector: pr's buffers emptied (tm_produce made them). */
static void pg_init(parts_got *pg, tm_prod *pr, const sm_plan *p, store *s, int fail_at)
{
	*pg = (parts_got){.pr = pr, .p = p, .s = s, .fail_at = fail_at};
	pthread_mutex_init(&pg->lk, NULL);
	pg->next = calloc(pr->nr, sizeof(*pg->next));
	pg->first = calloc(pr->nr, sizeof(*pg->first));
	for (uint32_t r = 0; r < pr->nr; r++) {
		pg->next[r] = calloc(pr->n[r] + 1, sizeof(uint64_t));
		pg->first[r] = calloc(pr->n[r] + 1, sizeof(uint64_t));
		for (size_t i = 0; i < pr->n[r]; i++) {
			free(pr->b[r][i]);
			pr->b[r][i] = NULL;
		}
	}
}

static void pg_free(parts_got *pg)
{
	for (uint32_t r = 0; r < pg->pr->nr; r++) {
		free(pg->next[r]);
		free(pg->first[r]);
	}
	free(pg->next);
	free(pg->first);
	pthread_mutex_destroy(&pg->lk);
	tm_prod_free(pg->pr);
}

static void batch_one(const batch_case *bc)
{
	char *dir = tu_path(g_root, bc->fam);
	wt_layout l;
	wt_layout_init(&l);
	l.quant = bc->q;
	l.tp_size = bc->tp;
	l.ep_size = bc->ep;
	store *s;
	ckpt *c;
	sm_plan *p;
	wt_errbuf err = {0};
	if (tm_plan(dir, &l, &s, &c, &p, &err) != WT_OK)
		fail_msg("%s: %s", bc->fam, err.msg);
	tm_prod *ref;
	uint64_t a0 = asked(s, c, p, -1, &ref);
	int early = 0, parts = 0;
	for (int inparts = 0; inparts <= 1; inparts++)
		for (unsigned threads = 1; threads <= 3; threads += 2)
			for (int64_t only = -1; only < (int64_t)(bc->tp * bc->ep); only++) {
				tm_prod *pr = tm_produce(c, p, 0, &(int){0}, &err);
				parts_got pg;
				pg_init(&pg, pr, p, s, 0);
				sm_produce_opts o = {.only_rank = only,
				                     .threads = threads,
				                     .emit = got_whole,
				                     .emit_part = inparts ? got_part : NULL,
				                     .part_bytes = PART_BYTES,
				                     .ctx = &pg,
				                     .stack_batch_bytes = 1};
				uint64_t b0 = store_bytes_asked(s);
				int rv = shardmap_produce_ex(c, p, &o, &err);
				if (rv != WT_OK)
					fail_msg("%s tp %u ep %u: %s %s", bc->fam, bc->tp, bc->ep,
					         err.msg, pg.bad);
				uint64_t a = store_bytes_asked(s) - b0;
				if (only < 0)
					assert_int_equal(a, a0); /* every byte once */
				if (only < 0 && threads == 1 && inparts) {
					early = pg.early;
					parts = pg.parts;
				}
				for (uint32_t r = 0; r < pr->nr; r++) {
					if (only >= 0 && r != (uint32_t)only)
						continue;
					for (size_t i = 0; i < pr->n[r]; i++) {
						assert_non_null(pr->b[r][i]);
						assert_int_equal(pr->len[r][i], ref->len[r][i]);
						if (memcmp(pr->b[r][i], ref->b[r][i],
						           ref->len[r][i]) != 0)
							fail_msg(
							    "%s tp %u ep %u rank %u: '%s' "
							    "differs in batches%s",
							    bc->fam, bc->tp, bc->ep, r,
							    shardmap_rank_tensor(p, r, i)->name,
							    inparts ? " (in parts)" : "");
					}
				}
				pg_free(&pg);
			}
	/* a part that fails (here the one in the middle) stops the production with its
	 * error, on one thread and on three */
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		parts_got pg;
		pg_init(&pg, tm_produce(c, p, 0, &(int){0}, &err), p, s, parts / 2);
		sm_produce_opts o = {.only_rank = -1,
		                     .threads = threads,
		                     .emit = got_whole,
		                     .emit_part = got_part,
		                     .part_bytes = PART_BYTES,
		                     .ctx = &pg,
		                     .stack_batch_bytes = 1};
		memset(&err, 0, sizeof(err));
		assert_int_equal(shardmap_produce_ex(c, p, &o, &err), WT_EIO);
		assert_non_null(strstr(err.msg, "fails on purpose"));
		pg_free(&pg);
	}
	printf("%s quant %s tp %u ep %u: one expert per batch, the same bytes (all ranks ask "
	       "%llu bytes); in parts of %d bytes: %d parts, %d expert tensors streamed\n",
	       bc->fam, wt_quant_name(bc->q), bc->tp, bc->ep, (unsigned long long)a0, PART_BYTES,
	       parts, early);
	assert_true(early > 0);
	tm_prod_free(ref);
	tm_close(s, c, p);
	wt_layout_clear(&l);
	free(dir);
}

static void test_batches(void **state)
{
	(void)state;
	static const batch_case cases[] = {
	    {"llama4_text", WT_QUANT_NONE, 2, 1},
	    {"llama4_text", WT_QUANT_INT8_CHANNEL, 4, 1},
	    {"llama4_text", WT_QUANT_FP8_BLOCK, 1, 2},
	    {"llama4_fbgemm", WT_QUANT_NONE, 4, 1},
	    {"llama4_fbgemm", WT_QUANT_FP8_CHANNEL, 2, 1},
	    {"llama4_fbgemm", WT_QUANT_INT8_CHANNEL, 1, 2},
	    {"gpt_oss", WT_QUANT_NONE, 4, 1},
	    {"gpt_oss", WT_QUANT_FP8_BLOCK, 2, 2},
	    /* experts stored one tensor each (produce_batch.c's units) */
	    {"mixtral", WT_QUANT_NONE, 4, 1},
	    {"mixtral", WT_QUANT_INT8_CHANNEL, 2, 2},
	    {"qwen2_moe", WT_QUANT_FP8_CHANNEL, 2, 1},
	    {"deepseek_v3", WT_QUANT_NONE, 2, 1},
	    {"deepseek_v3", WT_QUANT_FP8_BLOCK, 1, 2},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		batch_one(&cases[k]);
}

int main(void)
{
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_llama4_bf16),
	    cmocka_unit_test(test_llama4_fbgemm),
	    cmocka_unit_test(test_gpt_oss_mxfp4),
	    cmocka_unit_test(test_batches),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
