/*
 * test_exclude_anchors.c — runs of regex anchors in exclude patterns
 * (common/exclude_re.c). glibc's regcomp expands \b and \B into alternations of
 * two anchors, and its closures over anchors that follow one another grow
 * steeply: a 163-byte "re:" + 80 x "\b" + "x" took 16 s and 7.7 GB per compile,
 * 30 x "(\b|\B)" 29 s, both well inside the byte and position limits. A request
 * carries up to 64 patterns, each compiled by the daemon at plan time. They are
 * now refused before regcomp: at most 16 anchors per pattern (\b, \B count 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test_shardmap_util.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "re:" + n copies of unit + tail into buf. */
static const char *repeat(char *buf, size_t cap, const char *unit, int n, const char *tail)
{
	size_t len = 0;
	common_appendf(buf, cap, &len, "re:");
	for (int k = 0; k < n; k++)
		common_appendf(buf, cap, &len, "%s", unit);
	common_appendf(buf, cap, &len, "%s", tail);
	assert_true(len < cap);
	return buf;
}

/* The layout check (client and daemon, before any regcomp) refuses them. */
static void test_anchor_runs_refused(void **state)
{
	(void)state;
	char b[4][300];
	const char *bad[] = {
	    repeat(b[0], sizeof(b[0]), "\\b", 80, "x"),
	    repeat(b[1], sizeof(b[1]), "(\\b|\\B)", 30, "x"),
	    repeat(b[2], sizeof(b[2]), "\\B", 120, ""),
	    repeat(b[3], sizeof(b[3]), "(\\<|\\>|^|$)", 20, "x"),
	};
	double t0 = now_s();
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		wt_layout l;
		wt_errbuf err = {0};
		wt_layout_init(&l);
		assert_int_equal(wt_layout_add_exclude(&l, bad[k], &err), WT_OK);
		int rv = wt_layout_check(&l, &err);
		if (rv != WT_EINVAL || strstr(err.msg, "anchors") == NULL)
			fail_msg("'%s': got %s '%s', want WT_EINVAL naming the anchors", bad[k],
			         wt_errname(rv), err.msg);
		wt_layout_clear(&l);
	}
	double dt = now_s() - t0;
	printf("anchor runs refused in %.6f s\n", dt);
	assert_true(dt < 0.5);
}

/* 16 anchors besides the wrapper's pass and compile quickly; 17 do not, also in the
 * daemon's compiler (shardmap_excl_compile). */
static void test_anchor_limit(void **state)
{
	(void)state;
	char b[8][300];
	const char *ok[] = {
	    repeat(b[0], sizeof(b[0]), "\\b", 8, "x"),
	    repeat(b[1], sizeof(b[1]), "(\\b|\\B)", 4, "x"),
	    repeat(b[2], sizeof(b[2]), "^", 16, "x"),
	    repeat(b[3], sizeof(b[3]), "(\\<|\\>|^|$)", 4, "x"),
	    "re:(\\b\\b\\b\\b\\b\\b\\b\\bx){80}", /* the copies each consume an x */
	    "re:^model\\.layers\\.[0-9]+\\.mlp\\.down_proj$",
	};
	const char *bad[] = {
	    repeat(b[4], sizeof(b[4]), "\\b", 9, "x"),
	    repeat(b[5], sizeof(b[5]), "^", 17, "x"),
	    repeat(b[6], sizeof(b[6]), "\\b", 8, "^x"),
	    repeat(b[7], sizeof(b[7]), "\\`", 17, ""),
	};
	double t0 = now_s();
	for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
		sm_excl *x = NULL;
		wt_errbuf err = {0};
		if (shardmap_excl_compile(&ok[k], 1, &x, &err) != WT_OK)
			fail_msg("'%s': %s", ok[k], err.msg);
		assert_false(shardmap_excl_match(x, "model.layers.0.mlp.up_proj"));
		shardmap_excl_free(x);
	}
	double dt = now_s() - t0;
	printf("patterns at the anchor limit compiled in %.6f s\n", dt);
	assert_true(dt < 5.0);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		sm_excl *x = NULL;
		wt_errbuf err = {0};
		int rv = shardmap_excl_compile(&bad[k], 1, &x, &err);
		if (rv != WT_EINVAL || strstr(err.msg, "more than 16 anchors") == NULL)
			fail_msg("'%s': got %s '%s'", bad[k], wt_errname(rv), err.msg);
		assert_null(x);
	}
	/* Escaped, in a bracket or in a non-re: pattern they are no anchors. */
	const char *literal[] = {"re:a\\\\b\\\\b\\\\b\\\\b\\\\b\\\\b\\\\b\\\\b\\\\b",
	                         "re:[\\b^$][\\b^$][\\b^$][\\b^$][\\b^$][\\b^$][\\b^$]",
	                         "a^^^^^^^^^^^^^^^^^^$$$$$$$$$$$$"};
	for (size_t k = 0; k < sizeof(literal) / sizeof(literal[0]); k++) {
		wt_errbuf err = {0};
		if (common_excl_regex(literal[k], NULL, NULL, &err) != WT_OK)
			fail_msg("'%s': %s", literal[k], err.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_anchor_runs_refused),
	    cmocka_unit_test(test_anchor_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
