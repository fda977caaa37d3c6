/*
 * test_shardmap_families2.c — families added after test_shardmap_families.c
 * filled up: Granite (IBM Granite 3.x) with hand-computed shapes, its odd
 * vocabulary padded per rank, tied and untied heads, and the covered-exactly-
 * once property over TP 1-8. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0003ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* Granite: H 8, KV 2, d 32, V 1003 (odd like Granite 3's 49155), multipliers
 * that are math, not layout. */
#define GRANITE_CFG(tied)                                                                          \
	"{\"architectures\":[\"GraniteForCausalLM\"],\"model_type\":\"granite\","                  \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1003,\"num_hidden_layers\":2,"                   \
	"\"embedding_multiplier\":12.0,\"residual_multiplier\":0.22,"                              \
	"\"attention_multiplier\":0.015625,\"logits_scaling\":8.0,\"tie_word_embeddings\":" tied   \
	"}"

static tm_model *tm_granite(int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, 256, lm_head);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

static void test_granite(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_granite(0), GRANITE_CFG("true"), 4, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "granite");
	assert_true(shardmap_tied_lm_head(f.p));
	/* 1003 rows padded to 1024 (vocab_pad 64): 256 per rank, the last rank's
	 * padding rows zero */
	const char *emb = "model.embed_tokens.weight";
	shp(&f, 3, emb, 2, 256, 256, 0);
	size_t rb;
	const uint8_t *want = src_rows(&f, emb, 768, &rb);
	const uint8_t *got = out_bytes(&f, 3, emb);
	assert_memory_equal(got, want, (1003 - 768) * rb);
	for (size_t k = (size_t)(1003 - 768) * rb; k < 256 * rb; k++)
		assert_int_equal(got[k], 0);
	assert_int_equal(tm_ix(f.p, 0, "lm_head.weight"), -1);
	shp(&f, 1, "model.layers.0.self_attn.qkv_proj.weight", 2, 64 + 2 * 32, 256, 0);
	shp(&f, 1, "model.layers.1.mlp.gate_up_proj.weight", 2, 2 * 128, 256, 0);
	shp(&f, 2, "model.layers.1.mlp.down_proj.weight", 2, 256, 128, 0);
	fx_close(&f);
	/* untied: GraniteConfig's default is false, like Llama's */
	fx_open(&f, tm_granite(1), GRANITE_CFG("false"), 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 1, "lm_head.weight", 2, 512, 256, 0);
	fx_close(&f);
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_granite(0), GRANITE_CFG("true"), 2, dense, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_granite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
