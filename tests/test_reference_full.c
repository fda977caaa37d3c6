/*
 * test_reference_full.c — ref_full, the layout-independent half of ref_verify (the
 * checkpoint's tensors and its full path, loaded and run once for every layout checked):
 * ref_verify_full over one ref_full gives, layout after layout, exactly what ref_verify gives
 * from scratch (quantized MoE layouts following the full path's recorded expert choices
 * included), runs the full path once, and a tampered rank is still caught without the
 * tamper reaching the shared half. And the reference tests' own cache of it
 * (test_reference_util.h, keyed by the checkpoint's revision): a fixture rewritten with
 * other weights between two checks is loaded again, never compared against the old one's
 * outputs. Fixtures from $WT_BUILD/wt-mkckpt (seed printed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference/reference.h"
#include "reference/ckpt.h"
#include "tests/util/testutil.h"
#include "tests/test_reference_util.h"

static int setup(void **state)
{
	(void)state;
	static const char *fams[] = {"mixtral"};
	return gen_fixtures("reference_full", fams, 1);
}

typedef struct lay {
	uint32_t tp, ep;
	wt_quant q;
} lay;

static void layout_of(wt_layout *l, const lay *y)
{
	wt_layout_init(l);
	l->tp_size = y->tp;
	l->ep_size = y->ep;
	l->quant = y->q;
}

static void expect_same(const ref_result *a, const ref_result *b)
{
	assert_true(a->diff.max_abs_diff == b->diff.max_abs_diff);
	assert_true(a->diff.max_abs_ref == b->diff.max_abs_ref);
	assert_int_equal(a->diff.at, b->diff.at);
	assert_int_equal(a->worst_group, b->worst_group);
	assert_true(a->budget == b->budget);
	assert_int_equal(a->pass, b->pass);
	assert_int_equal(a->n_ranks, b->n_ranks);
	assert_int_equal(a->width, b->width);
}

static void test_same_as_verify(void **state)
{
	(void)state;
	/* unquantized (own routing), then quantized (the full path's routes) under TP and EP */
	static const lay lays[] = {{2, 1, WT_QUANT_NONE},
	                           {2, 1, WT_QUANT_INT8_CHANNEL},
	                           {1, 2, WT_QUANT_FP8_CHANNEL},
	                           {2, 2, WT_QUANT_NONE}};
	model m = {0};
	open_model(&m, "mixtral");
	ref_full f;
	wt_errbuf err = {0};
	assert_int_equal(ref_full_load(m.c, g_tokens, N_TOK, &f, &err), WT_OK);
	assert_null(f.out); /* run by the first layout, not by the load */
	const float *out = NULL;
	for (size_t i = 0; i < sizeof(lays) / sizeof(lays[0]); i++) {
		wt_layout l;
		layout_of(&l, &lays[i]);
		ref_result a, b;
		assert_int_equal(ref_verify_full(m.c, &f, &l, NULL, NULL, &a, &err), WT_OK);
		assert_int_equal(ref_verify(m.c, &l, g_tokens, N_TOK, NULL, NULL, &b, &err), WT_OK);
		print_message("tp %u ep %u %s: max|diff| %.3g of %.3g, both ways\n", lays[i].tp,
		              lays[i].ep, wt_quant_name(lays[i].q), a.diff.max_abs_diff,
		              a.diff.max_abs_ref);
		expect_same(&a, &b);
		assert_true(a.pass);
		/* the full path ran once: its outputs are the same buffer every layout */
		assert_non_null(f.out);
		if (out == NULL)
			out = f.out;
		assert_ptr_equal(f.out, out);
		assert_non_null(f.routes); /* an MoE model records its expert choices */
		wt_layout_clear(&l);
	}
	ref_full_clear(&f);
	assert_null(f.out);
	close_model(&m);
}

static void test_tamper_stays_in_ranks(void **state)
{
	(void)state;
	model m = {0};
	open_model(&m, "mixtral");
	ref_full f;
	wt_errbuf err = {0};
	assert_int_equal(ref_full_load(m.c, g_tokens, N_TOK, &f, &err), WT_OK);
	wt_layout l;
	layout_of(&l, &(lay){2, 1, WT_QUANT_NONE});
	ref_result res;
	char name[] = "model.layers.0.self_attn.o_proj.weight";
	assert_int_equal(ref_verify_full(m.c, &f, &l, tamper_swap_ranks, name, &res, &err), WT_OK);
	assert_false(res.pass);
	assert_int_equal(ref_verify_full(m.c, &f, &l, NULL, NULL, &res, &err), WT_OK);
	assert_true(res.pass);
	wt_layout_clear(&l);
	ref_full_clear(&f);
	close_model(&m);
}

/* run() after the fixture's folder was rewritten with another model's weights: the cache of
 * test_reference_util.h must not compare the new ranks against the old full path. */
static void test_rewritten_fixture_reloads(void **state)
{
	(void)state;
	assert_int_equal(gen_family("llama", "swap"), 0);
	expect_pass("swap", 2, 1, WT_QUANT_NONE, 0);
	char *dir = tu_path(g_root, "swap");
	tu_rmrf(dir);
	free(dir);
	assert_int_equal(gen_family("qwen2", "swap"), 0);
	expect_pass("swap", 2, 1, WT_QUANT_NONE, 0);
	expect_pass("mixtral", 2, 1, WT_QUANT_NONE, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_as_verify),
	    cmocka_unit_test(test_tamper_stays_in_ranks),
	    cmocka_unit_test(test_rewritten_fixture_reloads),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
