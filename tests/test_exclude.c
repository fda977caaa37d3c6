/*
 * test_exclude.c — exclusion patterns (docs/format.md section 5): exact, prefix,
 * {i}, *, combinations, re:, sorting/de-duplication, merging with
 * config.json's ignore list, and their effect on a quantized plan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

#include "test_shardmap_util.h"

static sm_excl *compile1(const char *pat)
{
	sm_excl *x = NULL;
	wt_errbuf err = {0};
	const char *p[1] = {pat};
	if (shardmap_excl_compile(p, 1, &x, &err) != WT_OK)
		fail_msg("%s", err.msg);
	return x;
}

static void yes(const char *pat, const char *name)
{
	sm_excl *x = compile1(pat);
	if (!shardmap_excl_match(x, name))
		fail_msg("'%s' should match '%s'", pat, name);
	shardmap_excl_free(x);
}

static void no(const char *pat, const char *name)
{
	sm_excl *x = compile1(pat);
	if (shardmap_excl_match(x, name))
		fail_msg("'%s' should not match '%s'", pat, name);
	shardmap_excl_free(x);
}

static void test_forms(void **state)
{
	(void)state;
	/* exact */
	yes("model.layers.0.mlp.down_proj", "model.layers.0.mlp.down_proj");
	no("model.layers.0.mlp.down_proj", "model.layers.0.mlp.down_proj2");
	no("model.layers.0.mlp.down_proj", "model.layers.10.mlp.down_proj");
	no("model.layers.0.mlp.down_proj", "xmodel.layers.0.mlp.down_proj");
	no("model.layers.0.mlp", "modelXlayers.0.mlp"); /* '.' is literal */
	/* prefix */
	yes("model.layers.0.", "model.layers.0.mlp.down_proj");
	no("model.layers.0.", "model.layers.01.mlp.down_proj");
	no("model.layers.0.", "model.layers.10.mlp.down_proj");
	no("model.layers.0.", "model.layers.0");
	/* {i} */
	yes("model.layers.{i}.self_attn.o_proj", "model.layers.0.self_attn.o_proj");
	yes("model.layers.{i}.self_attn.o_proj", "model.layers.17.self_attn.o_proj");
	no("model.layers.{i}.self_attn.o_proj", "model.layers.x.self_attn.o_proj");
	no("model.layers.{i}.self_attn.o_proj", "model.layers..self_attn.o_proj");
	/* * within one component */
	yes("model.layers.0.*.o_proj", "model.layers.0.self_attn.o_proj");
	yes("model.layers.0.self_attn.*", "model.layers.0.self_attn.q_proj");
	no("model.layers.0.*.o_proj", "model.layers.0.a.b.o_proj");
	yes("*_proj", "lm_proj");
	no("*_proj", "model.q_proj");
	/* combinations: {i} + * + prefix */
	yes("model.layers.{i}.mlp.experts.*.", "model.layers.3.mlp.experts.12.down_proj");
	no("model.layers.{i}.mlp.experts.*.", "model.layers.3.mlp.shared_expert.down_proj");
	yes("model.layers.{i}.*.q_*", "model.layers.1.self_attn.q_proj");
	/* re: whole-name POSIX ERE */
	yes("re:model\\.layers\\.[01]\\.mlp\\.(gate|up)_proj", "model.layers.1.mlp.up_proj");
	no("re:model\\.layers\\.[01]\\.mlp\\.(gate|up)_proj", "model.layers.2.mlp.up_proj");
	yes("re:a|b", "a");
	yes("re:a|b", "b");
	no("re:a|b", "ab");
	no("re:a|b", "xa");
	no("re:lm", "lm_head");
	yes("re:.*o_proj", "model.layers.0.self_attn.o_proj");
}

static void test_sorted_dedup(void **state)
{
	(void)state;
	const char *p[] = {"b.", "a", "b.", "re:c", "a"};
	sm_excl *x = NULL;
	wt_errbuf err = {0};
	assert_int_equal(shardmap_excl_compile(p, 5, &x, &err), WT_OK);
	assert_int_equal(shardmap_excl_count(x), 3);
	assert_string_equal(shardmap_excl_pattern(x, 0), "a");
	assert_string_equal(shardmap_excl_pattern(x, 1), "b.");
	assert_string_equal(shardmap_excl_pattern(x, 2), "re:c");
	assert_true(shardmap_excl_match(x, "b.x"));
	assert_true(shardmap_excl_match(x, "c"));
	assert_false(shardmap_excl_match(x, "d"));
	shardmap_excl_free(x);
	const char *bad[] = {"ok", "re:(unclosed"};
	x = NULL;
	assert_int_equal(shardmap_excl_compile(bad, 2, &x, &err), WT_EINVAL);
	assert_null(x);
	assert_non_null(strstr(err.msg, "re:(unclosed"));
	shardmap_excl_free(NULL);
}

/* In a plan: excluded modules stay in the unquantized dtype, without scales; a pattern
 * matching nothing is fine; config.json ignore lists merge in. */
static void test_plan_effect(void **state)
{
	(void)state;
	printf("seed 0x5eed0004\n");
	char *dir = tu_mkdtemp("smexcl");
	tm_model *m = tm_llama(0x5eed0004ull, WT_BF16);
	assert_int_equal(tm_write(m, dir, tm_llama_cfg), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_CHANNEL;
	wt_errbuf err = {0};
	assert_int_equal(wt_layout_add_exclude(&l, "model.layers.{i}.mlp.down_proj", &err), 0);
	assert_int_equal(
	    wt_layout_add_exclude(&l, "re:model\\.layers\\.1\\.self_attn\\.[qkv]_proj", &err), 0);
	assert_int_equal(wt_layout_add_exclude(&l, "no.such.module", &err), 0);
	store *s;
	ckpt *c;
	sm_plan *p;
	int rv = tm_plan(dir, &l, &s, &c, &p, &err);
	if (rv)
		fail_msg("%s", err.msg);
	const char *plain[] = {"model.layers.0.mlp.down_proj.weight",
	                       "model.layers.1.mlp.down_proj.weight",
	                       "model.layers.1.self_attn.qkv_proj.weight"};
	for (size_t k = 0; k < 3; k++) {
		int ix = tm_ix(p, 1, plain[k]);
		assert_true(ix >= 0);
		assert_int_equal(shardmap_rank_tensor(p, 1, (size_t)ix)->dtype, WT_BF16);
		char sc[160];
		snprintf(sc, sizeof(sc), "%s_scale", plain[k]);
		assert_int_equal(tm_ix(p, 1, sc), -1);
	}
	int ix = tm_ix(p, 1, "model.layers.0.self_attn.qkv_proj.weight");
	assert_int_equal(shardmap_rank_tensor(p, 1, (size_t)ix)->dtype, WT_F8_E4M3);
	assert_true(tm_ix(p, 1, "model.layers.0.self_attn.qkv_proj.weight_scale") >= 0);
	tm_close(s, c, p);
	wt_layout_clear(&l);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
}

static void test_config_ignore(void **state)
{
	(void)state;
	printf("seed 0x5eed0005\n");
	char *dir = tu_mkdtemp("smign");
	tm_model *m = tm_llama_fp8(0x5eed0005ull);
	char cfg[1024];
	snprintf(cfg, sizeof(cfg),
	         "%.*s,\"ignore\":[\"lm_head\",\"model.layers.0.self_attn.o_proj\"]}}",
	         (int)(strlen(tm_llama_fp8_cfg) - 2), tm_llama_fp8_cfg);
	assert_int_equal(tm_write(m, dir, cfg), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.quant = WT_QUANT_INT8_CHANNEL;
	store *s;
	ckpt *c;
	sm_plan *p;
	wt_errbuf err = {0};
	int rv = tm_plan(dir, &l, &s, &c, &p, &err);
	if (rv)
		fail_msg("%s", err.msg);
	int ix = tm_ix(p, 0, "model.layers.0.self_attn.o_proj.weight");
	assert_int_equal(shardmap_rank_tensor(p, 0, (size_t)ix)->dtype, WT_BF16); /* dequantized */
	assert_int_equal(tm_ix(p, 0, "model.layers.0.self_attn.o_proj.weight_scale"), -1);
	ix = tm_ix(p, 0, "model.layers.1.self_attn.o_proj.weight");
	assert_int_equal(shardmap_rank_tensor(p, 0, (size_t)ix)->dtype, WT_I8);
	tm_close(s, c, p);
	wt_layout_clear(&l);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
}

static int compile_err(const char *pat, wt_errbuf *err)
{
	sm_excl *x = NULL;
	const char *p[1] = {pat};
	int rv = shardmap_excl_compile(p, 1, &x, err);
	shardmap_excl_free(x);
	return rv;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Hostile patterns are refused before regcomp, cheaply, with the limit and a fix in the
 * message. Before the limits the first one took 1.3 s and 1.27 GB per compile, the
 * nullable repetitions ran for minutes and the back-reference compiled. */
static void test_limits(void **state)
{
	(void)state;
	struct {
		const char *pat, *why;
	} bad[] = {
	    {"re:((a{1,100}){1,100}){1,100}", "over 1000 regex positions"},
	    {"re:a{1001}", "over 1000 regex positions"},
	    {"re:(a|b){2}{2}{2}{2}{2}{2}{2}{2}", "over 1000 regex positions"},
	    {"re:(a?){3,9}{9,}", "can match the empty string"},
	    {"re:((((a?)*)+)*)+", "can match the empty string"},
	    {"re:(x|)+", "can match the empty string"},
	    {"re:(){1,300}", "can match the empty string"},
	    {"re:(a)\\1", "back-reference"},
	    /* an extra ')' would close the ^( wrapper: ^(a)|(b)$ matches "a.anything" */
	    {"re:a)|(b", "has no '('"},
	    {"re:(a|b", "'(' without ')'"},
	    {"re:((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))",
	     "deeper than 32"},
	};
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	double t0 = now_s();
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		wt_errbuf err = {0};
		int rv = compile_err(bad[k].pat, &err);
		if (rv != WT_EINVAL || !strstr(err.msg, bad[k].why) || !strstr(err.msg, bad[k].pat))
			fail_msg("'%s': got %s '%s', want WT_EINVAL '%s'", bad[k].pat,
			         wt_errname(rv), err.msg, bad[k].why);
	}
	double dt = now_s() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	printf("hostile patterns refused in %.6f s, max RSS %ld -> %ld KiB\n", dt, ru0.ru_maxrss,
	       ru1.ru_maxrss);
	assert_true(dt < 0.5);
	assert_true(ru1.ru_maxrss - ru0.ru_maxrss < 64 * 1024);
	/* Length: 256 bytes pass, 257 do not (every form). */
	char pat[300];
	memset(pat, 'a', 256);
	pat[256] = '\0';
	wt_errbuf err = {0};
	assert_int_equal(compile_err(pat, &err), WT_OK);
	pat[256] = 'a';
	pat[257] = '\0';
	assert_int_equal(compile_err(pat, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "257 bytes, over the limit of 256"));
	/* The longest plain forms stay inside the position limit. */
	memset(pat, '*', 256);
	pat[256] = '\0';
	assert_int_equal(compile_err(pat, &err), WT_OK);
	/* Too many patterns (layout plus config.json lists). */
	const char **many = calloc(SM_EXCL_MAX_PATTERNS + 1, sizeof(char *));
	assert_non_null(many);
	for (size_t k = 0; k <= SM_EXCL_MAX_PATTERNS; k++)
		many[k] = "a";
	sm_excl *x = NULL;
	assert_int_equal(shardmap_excl_compile(many, SM_EXCL_MAX_PATTERNS + 1, &x, &err),
	                 WT_ETOOBIG);
	assert_null(x);
	assert_non_null(strstr(err.msg, "limit of 4096"));
	free(many);
}

/* Reasonable regexes keep glibc's POSIX ERE meaning under the limits. */
static void test_limits_keep_semantics(void **state)
{
	(void)state;
	yes("re:model\\.layers\\.[0-9]{1,3}\\.mlp\\.(gate|up)_proj", "model.layers.12.mlp.up_proj");
	no("re:model\\.layers\\.[0-9]{1,3}\\.mlp\\.(gate|up)_proj",
	   "model.layers.1234.mlp.up_proj");
	yes("re:(model\\.)?layers\\.(1[0-5]|[0-9])\\..*", "layers.15.self_attn.o_proj");
	no("re:(model\\.)?layers\\.(1[0-5]|[0-9])\\..*", "layers.16.self_attn.o_proj");
	yes("re:(a|b){1,100}", "abba");
	yes("re:([a-z_]+\\.)*o_proj", "model.layers.x.o_proj");
	yes("re:(a?b)+", "bab");
	yes("re:x{0}y", "y");
	yes("re:[[:alpha:]]+[]x]", "ab]");
	yes("re:a\\)|b", "a)");
	yes("re:[)(]x", ")x"); /* parentheses in a bracket are literals */
}

/* config.json ignore lists are bounded the same way: a hostile pattern there fails the plan
 * with the same error instead of costing seconds and a GB per plan. */
static void test_config_ignore_limits(void **state)
{
	(void)state;
	printf("seed 0x5eed0006\n");
	char *dir = tu_mkdtemp("smignl");
	tm_model *m = tm_llama_fp8(0x5eed0006ull);
	char cfg[1024];
	snprintf(cfg, sizeof(cfg), "%.*s,\"ignore\":[\"re:((a{1,100}){1,100}){1,100}\"]}}",
	         (int)(strlen(tm_llama_fp8_cfg) - 2), tm_llama_fp8_cfg);
	assert_int_equal(tm_write(m, dir, cfg), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.quant = WT_QUANT_INT8_CHANNEL;
	store *s;
	ckpt *c;
	sm_plan *p = NULL;
	wt_errbuf err = {0};
	assert_int_equal(tm_plan(dir, &l, &s, &c, &p, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "over 1000 regex positions"));
	tm_close(s, c, p);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_sorted_dedup),
	    cmocka_unit_test(test_plan_effect),
	    cmocka_unit_test(test_config_ignore),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_limits_keep_semantics),
	    cmocka_unit_test(test_config_ignore_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
