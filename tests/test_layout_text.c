/*
 * test_layout_text.c — the canonical layout text is part of every shard id and
 * cache key (docs/format.md section 1), so two layouts that are accepted must never
 * format alike. Exclude patterns are joined with ';', so a pattern holding ';' is
 * refused wherever a layout comes in: the API, the daemon's wire decoder and
 * wt_layout_check for a layout built by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"
#include "proto/wire.h"
#include "weights/weights.h"

static void fmt(const wt_layout *l, char *buf, size_t cap)
{
	size_t n = wt_layout_format(l, buf, cap);
	assert_true(n < cap);
}

/* ["lm_head;model.embed_tokens"] excludes nothing (no module has ';' in its name);
 * ["lm_head", "model.embed_tokens"] keeps both unquantized. Both formatted as
 * exclude=[lm_head;model.embed_tokens]: the second request was served the first's
 * cached, quantized shards. */
static void test_semicolon_pattern_refused(void **state)
{
	(void)state;
	wt_errbuf err;
	wt_layout one, two;
	wt_layout_init(&one);
	wt_layout_init(&two);
	one.quant = two.quant = WT_QUANT_FP8_BLOCK;
	assert_int_equal(wt_layout_add_exclude(&two, "lm_head", &err), WT_OK);
	assert_int_equal(wt_layout_add_exclude(&two, "model.embed_tokens", &err), WT_OK);
	assert_int_equal(wt_layout_check(&two, &err), WT_OK);

	assert_int_equal(wt_layout_add_exclude(&one, "lm_head;model.embed_tokens", &err),
	                 WT_EINVAL);
	assert_non_null(strstr(err.msg, "';'"));
	assert_int_equal(one.n_exclude, 0);
	assert_int_equal(wt_layout_add_exclude(&one, "re:a[;]b", &err), WT_EINVAL);
	/* nor a control character: the layout text reaches manifests, logs and
	 * terminals, and the client refuses a manifest whose layout text has one */
	assert_int_equal(wt_layout_add_exclude(&one, "lm_\x1b[2Jhead", &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "control character"));
	assert_int_equal(wt_layout_add_exclude(&one, "re:a\tb", &err), WT_EINVAL);
	assert_int_equal(wt_layout_add_include(&one, "w\n", &err), WT_EINVAL);
	assert_int_equal(one.n_exclude, 0);

	/* A layout filled in directly (the API allows it) is refused by the check. */
	char *pat = strdup("lm_head\x07");
	assert_non_null(pat);
	one.exclude[0] = pat;
	one.n_exclude = 1;
	assert_int_equal(wt_layout_check(&one, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "control character"));
	free(pat);
	pat = strdup("lm_head;model.embed_tokens");
	assert_non_null(pat);
	one.exclude[0] = pat;
	assert_int_equal(wt_layout_check(&one, &err), WT_EINVAL);
	assert_non_null(strstr(err.msg, "';'"));
	char a[512], b[512];
	fmt(&one, a, sizeof(a));
	fmt(&two, b, sizeof(b));
	assert_string_equal(a, b); /* why: the texts collide, so one must be refused */
	wt_layout_clear(&one);
	wt_layout_clear(&two);
}

/* The daemon's decoder of a request's Layout refuses it too. */
static void test_semicolon_pattern_wire(void **state)
{
	(void)state;
	wt_errbuf err;
	Weights__Layout pb = WEIGHTS__LAYOUT__INIT;
	char *pats[] = {"model.layers.0.mlp.down_proj;model.layers.1.mlp.down_proj"};
	pb.tp_size = 1;
	pb.ep_size = 1;
	pb.quant = WT_QUANT_FP8_TENSOR;
	pb.group_size = 128;
	pb.vocab_pad = 64;
	pb.n_exclude = 1;
	pb.exclude = pats;
	wt_layout l;
	wt_layout_init(&l);
	assert_int_equal(wire_layout_from_pb(&pb, &l, &err), WT_EINVAL);
	assert_int_equal(l.n_exclude, 0);
	pats[0] = "model.layers.0.mlp.down_proj";
	assert_int_equal(wire_layout_from_pb(&pb, &l, &err), WT_OK);
	wt_layout_clear(&l);
}

/* Accepted layouts with different pattern sets format differently; equal sets (order
 * and duplicates aside) format alike. Patterns from an alphabet that includes the
 * text's other punctuation (',', '=', '[', ']'). */
static void test_distinct_sets_distinct_texts(void **state)
{
	(void)state;
	static const char *const alphabet[] = {"a", "b", "a]", "[a", "a,b", "x=y", "b.", "re:a|b"};
	enum { N_ALPHA = sizeof(alphabet) / sizeof(alphabet[0]) };
	static char texts[1 << N_ALPHA][512];
	wt_errbuf err;
	for (unsigned set = 0; set < (1u << N_ALPHA); set++) {
		wt_layout l;
		wt_layout_init(&l);
		for (int k = N_ALPHA - 1; k >= 0; k--)
			if (set & (1u << k)) {
				assert_int_equal(wt_layout_add_exclude(&l, alphabet[k], &err),
				                 WT_OK);
				assert_int_equal(wt_layout_add_exclude(&l, alphabet[k], &err),
				                 WT_OK);
			}
		assert_int_equal(wt_layout_check(&l, &err), WT_OK);
		fmt(&l, texts[set], sizeof(texts[set]));
		for (unsigned other = 0; other < set; other++)
			if (strcmp(texts[set], texts[other]) == 0)
				fail_msg("sets %#x and %#x share the text '%s'", set, other,
				         texts[set]);
		wt_layout_clear(&l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_semicolon_pattern_refused),
	    cmocka_unit_test(test_semicolon_pattern_wire),
	    cmocka_unit_test(test_distinct_sets_distinct_texts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
