/*
 * test_reference_util.h — what the reference forward-pass tests share
 * (test_reference*.c): wt-mkckpt fixtures in a temporary
 * folder (seed fixed and printed), opening one, running ref_verify under a
 * layout with its figures printed, and the pass / tamper helpers. Include after
 * cmocka.h.
 */
#ifndef WT_TEST_REFERENCE_UTIL_H
#define WT_TEST_REFERENCE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "loader/loader_st.h"
#include "reference/ckpt.h"
#include "reference/reference.h"
#include "reference/reference_int.h"
#include "tests/util/testutil.h"

#define SEED 11u

static char *g_root;
static const int64_t g_tokens[] = {1, 999, 17, 500, 3, 256, 640};
#define N_TOK (sizeof(g_tokens) / sizeof(g_tokens[0]))

/* wt-mkckpt --family fam into g_root/out; its exit status. */
static __attribute__((unused)) int gen_family(const char *fam, const char *out)
{
	char *bin = tu_mkckpt();
	char *dir = tu_path(g_root, out);
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "'%s' --family %s --out '%s' --seed %u >/dev/null 2>&1", bin,
	         fam, dir, SEED);
	free(bin);
	free(dir);
	int st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

/* A temporary folder (tag) holding each of fams[0..n) under its name; 0 or -1. */
static __attribute__((unused)) int gen_fixtures(const char *tag, const char *const *fams, size_t n)
{
	g_root = tu_mkdtemp(tag);
	if (g_root == NULL)
		return -1;
	print_message("fixtures: wt-mkckpt --seed %u into %s\n", SEED, g_root);
	for (size_t i = 0; i < n; i++)
		if (gen_family(fams[i], fams[i]) != 0) {
			print_error("wt-mkckpt --family %s failed; build it first (make)\n",
			            fams[i]);
			return -1;
		}
	return 0;
}

/* The full path of the last checkpoint verified (ref_full): the layouts a test runs over one
 * fixture load it and run its full path once. Keyed by the checkpoint's revision (a digest of
 * its bytes): a fixture rewritten between runs is loaded again. */
static ref_full g_full;
static char g_full_rev[80];

static __attribute__((unused)) int teardown(void **state)
{
	(void)state;
	ref_full_clear(&g_full);
	g_full_rev[0] = '\0';
	if (g_root != NULL)
		tu_rmrf(g_root);
	free(g_root);
	return 0;
}

typedef struct model {
	store *s;
	ckpt *c;
} model;

static __attribute__((unused)) void open_model(model *m, const char *fam)
{
	char *dir = tu_path(g_root, fam);
	wt_errbuf err = {0};
	int rv = store_open(&m->s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&m->c, m->s, &err);
	free(dir);
	if (rv != WT_OK)
		print_error("%s: %s\n", fam, err.msg);
	assert_int_equal(rv, WT_OK);
}

static __attribute__((unused)) void close_model(model *m)
{
	ckpt_close(m->c);
	store_close(m->s);
}

/* Run the verification of family fam under layout (tp, ep, quant, up_gate, dtype). */
static __attribute__((unused)) int run_dt(const char *fam, uint32_t tp, uint32_t ep, wt_quant q,
                                          int up_gate, wt_dtype dt, ref_tamper_fn tamper,
                                          void *tctx, ref_result *res, wt_errbuf *err)
{
	model m = {0};
	wt_layout l;
	open_model(&m, fam);
	wt_layout_init(&l);
	l.tp_size = tp;
	l.ep_size = ep;
	l.quant = q;
	l.w13_up_gate = up_gate;
	l.dtype = dt;
	const char *rev = ckpt_revision(m.c);
	int rv = WT_OK;
	if (g_full_rev[0] == '\0' || strcmp(rev, g_full_rev) != 0) {
		ref_full_clear(&g_full);
		g_full_rev[0] = '\0';
		if ((rv = ref_full_load(m.c, g_tokens, N_TOK, &g_full, err)) == WT_OK &&
		    *rev != '\0')
			snprintf(g_full_rev, sizeof(g_full_rev), "%s", rev);
	}
	if (rv == WT_OK)
		rv = ref_verify_full(m.c, &g_full, &l, tamper, tctx, res, err);
	if (rv == WT_OK)
		print_message("%-11s tp %u ep %u %-12s %-7s %-6s: max|diff| %.3g, max|out| %.3g, "
		              "ratio %.3g (budget %.3g) %s\n",
		              fam, tp, ep, wt_quant_name(q), up_gate ? "up_gate" : "gate_up",
		              dt == WT_DTYPE_INVALID ? "source" : wt_dtype_name(dt),
		              res->diff.max_abs_diff, res->diff.max_abs_ref,
		              res->diff.max_abs_diff / res->diff.max_abs_ref, res->budget,
		              res->pass ? "PASS" : "FAIL");
	else
		print_message("%s tp %u ep %u: %s (%s)\n", fam, tp, ep, err->msg, wt_errname(rv));
	wt_layout_clear(&l);
	close_model(&m);
	return rv;
}

static __attribute__((unused)) int run(const char *fam, uint32_t tp, uint32_t ep, wt_quant q,
                                       int up_gate, ref_tamper_fn tamper, void *tctx,
                                       ref_result *res, wt_errbuf *err)
{
	return run_dt(fam, tp, ep, q, up_gate, WT_DTYPE_INVALID, tamper, tctx, res, err);
}

/* Passes within its budget, and a quantized layout really differs. */
static __attribute__((unused)) void expect_pass(const char *fam, uint32_t tp, uint32_t ep,
                                                wt_quant q, int up_gate)
{
	ref_result res;
	wt_errbuf err = {0};
	assert_int_equal(run(fam, tp, ep, q, up_gate, NULL, NULL, &res, &err), WT_OK);
	assert_false(res.diff.nonfinite);
	assert_true(res.diff.max_abs_ref > 0.1); /* logits are not all ~0 */
	assert_true(res.pass);
	if (q != WT_QUANT_NONE) /* the rank tensors really were quantized */
		assert_true(res.diff.max_abs_diff > REF_TOL_F32 * res.diff.max_abs_ref);
}

/* The layouts every dense family's reference test runs: TP 1, 2, 4 (and 8 when tp8) unquantized,
 * int8-channel at TP 2 and fp8-channel at TP 4, each through expect_pass. */
static __attribute__((unused)) void expect_pass_tp(const char *fam, bool tp8)
{
	for (uint32_t tp = 1; tp <= (tp8 ? 8u : 4u); tp *= 2)
		expect_pass(fam, tp, 1, WT_QUANT_NONE, 0);
	expect_pass(fam, 2, 1, WT_QUANT_INT8_CHANNEL, 0);
	expect_pass(fam, 4, 1, WT_QUANT_FP8_CHANNEL, 0);
}

/* Tensor name of a rank set; fails the test when it is not there. */
static __attribute__((unused)) ref_tensor *find_tensor(ref_set *r, const char *name)
{
	ref_tensor *t = ref_set_find(r, name);
	if (t == NULL)
		print_error("tensor '%s' not in the rank set\n", name);
	assert_non_null(t);
	return t;
}

/* A tamper's tool: rows [0, half) and [half, 2*half) of each of `count` stacks (row_bytes each)
 * swapped. */
static __attribute__((unused)) void swap_stack_halves(uint8_t *p, int64_t count, int64_t half,
                                                      size_t row_bytes)
{
	size_t h = (size_t)half * row_bytes;
	uint8_t *tmp = malloc(h);
	assert_non_null(tmp);
	for (int64_t e = 0; e < count; e++) {
		uint8_t *s = p + (size_t)e * 2 * h;
		memcpy(tmp, s, h);
		memcpy(s, s + h, h);
		memcpy(s + h, tmp, h);
	}
	free(tmp);
}

/* Swap tensor name's data between two rank sets (a tamper's tool). */
static __attribute__((unused)) void swap_data(ref_set *a, ref_set *b, const char *name)
{
	ref_tensor *x = find_tensor(a, name), *y = find_tensor(b, name);
	assert_int_equal(x->nbytes, y->nbytes);
	uint8_t *t = x->data;
	x->data = y->data;
	y->data = t;
}

/* Fixture folder `to` under g_root: the files[0..n) of fixture `from`, byte for byte (a layout
 * the tests then rewrite with edit_config). 0, or -1 when one could not be copied. */
static __attribute__((unused)) int copy_fixture(const char *from, const char *to,
                                                const char *const *files, size_t n)
{
	char *src = tu_path(g_root, from), *dir = tu_path(g_root, to);
	int rv = 0;
	for (size_t i = 0; i < n && rv == 0; i++) {
		char *p = tu_path(src, files[i]);
		size_t len = 0;
		char *b = tu_read_file(p, &len);
		rv = b != NULL && tu_write_file(dir, files[i], b, len) == 0 ? 0 : -1;
		free(b);
		free(p);
	}
	free(src);
	free(dir);
	return rv;
}

/* Fixture folder `to` under g_root, a release layout of fixture `fam`'s weights: its tensors (as
 * the reference loads them) under the names rename() writes (at most the name's length + 32
 * bytes), in one model.safetensors, and config() of the fixture's config.json text as its
 * config.json (malloc'd; NULL fails). Tarsier2's and OpenCUA's released names of Qwen2-VL's and
 * Qwen2.5-VL's fixtures. 0, or -1 when a step failed. */
static __attribute__((unused)) int write_renamed(const char *fam, const char *to,
                                                 void (*rename)(char *, size_t, const char *),
                                                 char *(*config)(const char *, size_t))
{
	model m = {0};
	ref_set ck = {0};
	ref_cfg c;
	wt_errbuf err = {0};
	open_model(&m, fam);
	int rv = ref_load_ckpt(m.c, &c, &ck, &err);
	close_model(&m);
	st_desc *d = calloc(ck.n ? ck.n : 1, sizeof(*d));
	const void **data = calloc(ck.n ? ck.n : 1, sizeof(*data));
	char **names = calloc(ck.n ? ck.n : 1, sizeof(*names));
	assert_true(d != NULL && data != NULL && names != NULL);
	for (size_t i = 0; rv == WT_OK && i < ck.n; i++) {
		const ref_tensor *t = &ck.t[i];
		names[i] = malloc(strlen(t->name) + 32);
		assert_non_null(names[i]);
		rename(names[i], strlen(t->name) + 32, t->name);
		d[i] = (st_desc){names[i], t->dtype, t->ndim, {0}};
		memcpy(d[i].shape, t->shape, sizeof(t->shape));
		data[i] = t->data;
	}
	char *src = tu_path(g_root, fam), *dir = tu_path(g_root, to);
	char *cpath = tu_path(src, "config.json"), *out = tu_path(dir, "model.safetensors");
	size_t len = 0;
	char *text = tu_read_file(cpath, &len);
	char *json = text != NULL ? config(text, len) : NULL;
	if (rv == WT_OK)
		rv = json != NULL && tu_write_file(dir, "config.json", json, strlen(json)) == 0
		         ? WT_OK
		         : -1;
	if (rv == WT_OK)
		rv = st_write_path(out, d, data, ck.n, NULL, 0, &err);
	for (size_t i = 0; i < ck.n; i++)
		free(names[i]);
	free(names);
	free(d);
	free(data);
	free(text);
	free(json);
	free(src);
	free(dir);
	free(cpath);
	free(out);
	ref_set_clear(&ck);
	return rv == WT_OK ? 0 : -1;
}

/* Replace the first `from` in a file's text with `to` (one occurrence expected). */
static __attribute__((unused)) void edit_config(const char *dir, const char *from, const char *to)
{
	char *cpath = tu_path(dir, "config.json");
	FILE *f = fopen(cpath, "rb");
	assert_non_null(f);
	static char json[16384], out[16384];
	size_t len = fread(json, 1, sizeof(json) - 1, f);
	fclose(f);
	json[len] = '\0';
	char *at = strstr(json, from);
	if (at == NULL)
		print_error("'%s' not in %s\n", from, cpath);
	assert_non_null(at);
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - json), json, to, at + strlen(from));
	f = fopen(cpath, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(out, 1, strlen(out), f), strlen(out));
	fclose(f);
	free(cpath);
}

static __attribute__((unused)) void full_logits(const char *fam, float *out, ref_cfg *cfg)
{
	model m = {0};
	ref_set ck = {0};
	wt_errbuf err = {0};
	open_model(&m, fam);
	assert_int_equal(ref_load_ckpt(m.c, cfg, &ck, &err), WT_OK);
	assert_int_equal(ref_forward_full(cfg, &ck, g_tokens, N_TOK, out, NULL, &err), WT_OK);
	ref_set_clear(&ck);
	close_model(&m);
}

/* A logit transformers computed: row (token) and column (vocabulary entry). */
typedef struct gold_pt {
	int row, col;
	float v;
} gold_pt;

/* fam's full-path logits ([N_TOK, vocab]) at the n golden points g, each within tol. */
static __attribute__((unused)) void expect_gold(const char *fam, int64_t vocab, double tol,
                                                const gold_pt *g, size_t n)
{
	float *lg = malloc((size_t)(N_TOK * vocab) * sizeof(float));
	assert_non_null(lg);
	ref_cfg c;
	full_logits(fam, lg, &c);
	double worst = 0;
	for (size_t k = 0; k < n; k++) {
		double d = fabs((double)lg[g[k].row * vocab + g[k].col] - (double)g[k].v);
		worst = d > worst ? d : worst;
	}
	print_message("%s: max |reference - transformers| over %zu points %.3g\n", fam, n, worst);
	assert_true(worst < tol);
	free(lg);
}

/* Outputs a and b (n floats) differ by more than `ratio` of max|a|: a switch
 * (what) moves the logits, so a path that ignored it would be caught. */
static __attribute__((unused)) void expect_moved(const float *a, const float *b, size_t n,
                                                 double ratio, const char *what)
{
	ref_diff d;
	ref_compare(a, b, n, &d);
	print_message("%s: max|diff| %.3g of %.3g\n", what, d.max_abs_diff, d.max_abs_ref);
	assert_false(ref_within(&d, ratio));
}

/* The tampers most planner mistakes look like, as a check's context: a tensor's bytes
 * given to the wrong rank, or one rank's stacked halves in the wrong order. */
typedef struct tamper_halves {
	const char *name; /* in rank `rank`'s set */
	uint32_t rank;
	int64_t count, half; /* `count` stacks of rows [0, half) and [half, 2*half) */
	size_t row_bytes;
} tamper_halves;

static __attribute__((unused)) void tamper_swap_ranks(void *ctx, ref_set *r, uint32_t n)
{
	assert_true(n >= 2);
	swap_data(&r[0], &r[1], (const char *)ctx);
}

static __attribute__((unused)) void tamper_swap_halves(void *ctx, ref_set *r, uint32_t n)
{
	const tamper_halves *h = ctx;
	assert_true(h->rank < n);
	swap_stack_halves(find_tensor(&r[h->rank], h->name)->data, h->count, h->half, h->row_bytes);
}

/* The check of fam under tp x ep (quant none) with tamper (and its ctx) runs and fails;
 * what, if not NULL, is printed first. */
static __attribute__((unused)) void expect_caught_ctx(const char *fam, uint32_t tp, uint32_t ep,
                                                      ref_tamper_fn tamper, void *ctx,
                                                      const char *what)
{
	ref_result res;
	wt_errbuf err = {0};
	if (what != NULL)
		print_message("%s:\n", what);
	assert_int_equal(run(fam, tp, ep, WT_QUANT_NONE, 0, tamper, ctx, &res, &err), WT_OK);
	assert_false(res.pass);
}

/* The check of fam under tp x ep catches tensor `name` exchanged between ranks 0 and 1
 * (what: the planner mistake it stands for, printed first). */
static __attribute__((unused)) void expect_swapped(const char *fam, uint32_t tp, uint32_t ep,
                                                   const char *name, const char *what)
{
	expect_caught_ctx(fam, tp, ep, tamper_swap_ranks, (void *)name, what);
}

/* The check of fam under tp x ep catches h's stacked halves exchanged. */
static __attribute__((unused)) void expect_halves_swapped(const char *fam, uint32_t tp, uint32_t ep,
                                                          tamper_halves h, const char *what)
{
	expect_caught_ctx(fam, tp, ep, tamper_swap_halves, &h, what);
}

/* A tensor of one rank's set: `name` in r[rank]. */
typedef struct tamper_at {
	const char *name;
	uint32_t rank;
} tamper_at;

static __attribute__((unused)) void tamper_zero(void *ctx, ref_set *r, uint32_t n)
{
	const tamper_at *a = ctx;
	assert_true(a->rank < n);
	ref_tensor *t = find_tensor(&r[a->rank], a->name);
	memset(t->data, 0, t->nbytes);
}

/* The check of fam under tp x ep catches rank `rank`'s tensor `name` zeroed (its slice
 * dropped, or a bias the rank adds once lost). */
static __attribute__((unused)) void expect_zeroed(const char *fam, uint32_t tp, uint32_t ep,
                                                  uint32_t rank, const char *name, const char *what)
{
	tamper_at a = {name, rank};
	expect_caught_ctx(fam, tp, ep, tamper_zero, &a, what);
}

static __attribute__((unused)) void tamper_swap_stacks(void *ctx, ref_set *r, uint32_t n)
{
	char w13[256], w2[256];
	assert_true(n >= 2);
	snprintf(w13, sizeof(w13), "%sw13_weight", (const char *)ctx);
	snprintf(w2, sizeof(w2), "%sw2_weight", (const char *)ctx);
	swap_data(&r[0], &r[1], w13);
	swap_data(&r[0], &r[1], w2);
}

/* The check of fam under tp x ep catches the expert stacks prefix "w13_weight" and prefix
 * "w2_weight" exchanged between ranks 0 and 1 (under EP: the wrong experts on each rank). */
static __attribute__((unused)) void expect_stacks_swapped(const char *fam, uint32_t tp, uint32_t ep,
                                                          const char *prefix, const char *what)
{
	expect_caught_ctx(fam, tp, ep, tamper_swap_stacks, (void *)prefix, what);
}

/* expect_caught_ctx with a tamper that takes no context. */
static __attribute__((unused)) void expect_caught(const char *fam, uint32_t tp, uint32_t ep,
                                                  ref_tamper_fn tamper, const char *what)
{
	expect_caught_ctx(fam, tp, ep, tamper, NULL, what);
}

/* The full path's logits of ck under c (a switch of c changed by the caller). */
static __attribute__((unused)) void logits_with(ref_cfg *c, ref_set *ck, float *out)
{
	wt_errbuf err = {0};
	assert_int_equal(ref_forward_full(c, ck, g_tokens, N_TOK, out, NULL, &err), WT_OK);
}

/* config.json text json parses with code; a refusal's message contains what. */
static __attribute__((unused)) void expect_cfg(const char *json, int code, const char *what)
{
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(ref_cfg_parse_json(json, strlen(json), &c, &err), code);
	if (code != WT_OK) {
		print_message("refused: %s\n", err.msg);
		assert_non_null(strstr(err.msg, what));
	}
}

#endif
