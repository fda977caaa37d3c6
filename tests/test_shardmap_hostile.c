/*
 * test_shardmap_hostile.c — checkpoints that are syntactically valid but not
 * a model's are refused with the right code, naming what is wrong, instead of
 * crashing the producer, reading past a buffer or writing wrong bytes:
 *   - config dims past any model's (head_dim 2^61+32 made 8 x head_dim wrap
 *     to 256, the plan pass and the producer abort), a head_dim that comes
 *     out 0, a weight_block_size of 2^63-1 (its ceil-division overflowed to a
 *     [0, 0] scale the dequantizer read past);
 *   - scales that are NaN, Inf or negative, merged (per-tensor FP8) or passed
 *     through (block FP8): WT_ENONFINITE (they wrote NaN codes, -inf scales);
 *   - an input scale on some experts of a stack only (-inf on the others);
 *   - int-quantized int4 codes outside -8..7 (they wrapped mod 16).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_shardmap_ct_util.h"

/* Write m with config cfg, plan layout l and (produce) produce every rank;
 * the first error. */
static int run(const tm_model *m, const char *cfg, const wt_layout *l, bool produce, wt_errbuf *err)
{
	char *dir = tu_mkdtemp("smhostile");
	assert_int_equal(tm_write(m, dir, cfg), 0);
	store *s;
	ckpt *c;
	sm_plan *p;
	int rv = tm_plan(dir, l, &s, &c, &p, err);
	if (rv == WT_OK && produce) {
		tm_prod *pr = tm_produce(c, p, -1, &rv, err);
		tm_prod_free(pr);
	}
	tm_close(s, c, p);
	tu_rmrf(dir);
	free(dir);
	printf("%s: %s\n", wt_errname(rv), rv ? err->msg : "");
	return rv;
}

/* cfg with `from` replaced by `to` (once) into out. */
static const char *edit(char *out, size_t cap, const char *cfg, const char *from, const char *to)
{
	const char *p = strstr(cfg, from);
	assert_non_null(p);
	snprintf(out, cap, "%.*s%s%s", (int)(p - cfg), cfg, to, p + strlen(from));
	return out;
}

static void test_config_dims(void **state)
{
	(void)state;
	tm_model *m = tm_llama(0x5a11u, WT_BF16);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	wt_errbuf err;
	char cfg[1024];
	/* 8 heads x (2^61 + 32) wraps to 256, what the q/k/v tensors hold */
	edit(cfg, sizeof(cfg), tm_llama_cfg, "\"head_dim\":32", "\"head_dim\":2305843009213693984");
	assert_int_equal(run(m, cfg, &l, true, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "head_dim 2305843009213693984"));
	edit(cfg, sizeof(cfg), tm_llama_cfg, "\"intermediate_size\":512",
	     "\"intermediate_size\":1099511627776");
	assert_int_equal(run(m, cfg, &l, false, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "intermediate_size"));
	/* 512 heads of a 256-wide model and no head_dim: hid / H = 0 */
	char c2[1024];
	edit(c2, sizeof(c2), tm_llama_cfg, "\"head_dim\":32,", "");
	edit(cfg, sizeof(cfg), c2, "\"num_attention_heads\":8", "\"num_attention_heads\":512");
	assert_int_equal(run(m, cfg, &l, false, &err), WT_ESHAPE);
	assert_non_null(strstr(err.msg, "head_dim of 0"));
	/* FP8 blocks of 2^63 - 1 */
	edit(cfg, sizeof(cfg), tm_llama_cfg, "\"tie_word_embeddings\":false",
	     "\"tie_word_embeddings\":false,\"quantization_config\":{\"quant_method\":\"fp8\","
	     "\"weight_block_size\":[9223372036854775807,9223372036854775807]}");
	assert_int_equal(run(m, cfg, &l, false, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "weight_block_size"));
	tm_free(m);
}

/* Set the F32 scalar `name` of m to v. */
static void set_f32(tm_model *m, const char *name, float v)
{
	int k = tm_find(m, name);
	assert_true(k >= 0);
	memcpy(m->data[k], &v, 4);
}

static void test_fp8_scales(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.quant = WT_QUANT_FP8_TENSOR;
	wt_errbuf err;
	static const struct {
		const char *name;
		float v;
	} bad[] = {
	    {"model.layers.0.self_attn.k_proj.weight_scale", NAN},
	    {"model.layers.0.self_attn.q_proj.weight_scale", INFINITY},
	    {"model.layers.0.self_attn.q_proj.weight_scale", -0.01f},
	    {"model.layers.0.self_attn.o_proj.weight_scale", NAN}, /* one part: no merge */
	    {"model.layers.0.self_attn.q_proj.input_scale", NAN},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tm_model *m = tm_llama_fp8(0x5a12u);
		set_f32(m, bad[i].name, bad[i].v);
		assert_int_equal(run(m, tm_llama_fp8_cfg, &l, true, &err), WT_ENONFINITE);
		assert_non_null(strstr(err.msg, bad[i].name));
		tm_free(m);
	}
	/* a block scale passed through as it is */
	tm_model *m = tm_llama(0x5a13u, WT_BF16);
	tm_remove(m, "model.layers.1.self_attn.o_proj.weight");
	tm_lin(m, "model.layers.1.self_attn.o_proj.weight", 256, 256, 1);
	set_f32(m, "model.layers.1.self_attn.o_proj.weight_scale_inv", NAN);
	char cfg[1024];
	edit(cfg, sizeof(cfg), tm_llama_cfg, "\"tie_word_embeddings\":false",
	     "\"tie_word_embeddings\":false,\"quantization_config\":{\"quant_method\":\"fp8\","
	     "\"weight_block_size\":[128,128]}");
	l.quant = WT_QUANT_FP8_BLOCK;
	assert_int_equal(run(m, cfg, &l, true, &err), WT_ENONFINITE);
	assert_non_null(strstr(err.msg, "o_proj.weight_scale"));
	tm_free(m);
}

/* Per-tensor FP8 experts with an input scale on expert 0 only. */
static void test_expert_input_scales(void **state)
{
	(void)state;
	tm_model *m = tm_mixtral(0x5a14u);
	static const char *const leaves[] = {"w1", "w3", "w2"};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 6; j++)
			for (int k = 0; k < 3; k++) {
				char leaf[128], b[200];
				snprintf(leaf, sizeof(leaf),
				         "block_sparse_moe.experts.%d.%s.weight", j, leaves[k]);
				tm_fmt(b, sizeof(b), TM_L, i, leaf);
				tm_remove(m, b);
				tm_lin(m, b, 256, 256, 2);
				if (j > 0) {
					snprintf(leaf, sizeof(leaf),
					         "block_sparse_moe.experts.%d.%s.input_scale", j,
					         leaves[k]);
					tm_fmt(b, sizeof(b), TM_L, i, leaf);
					tm_remove(m, b);
				}
			}
	char cfg[1024];
	edit(cfg, sizeof(cfg), tm_mixtral_cfg, "\"num_hidden_layers\":2",
	     "\"num_hidden_layers\":2,\"quantization_config\":{\"quant_method\":\"fp8\"}");
	wt_layout l;
	wt_layout_init(&l);
	l.quant = WT_QUANT_FP8_TENSOR;
	l.ep_size = 2;
	wt_errbuf err;
	assert_int_equal(run(m, cfg, &l, true, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "input_scale"));
	assert_non_null(strstr(err.msg, "on all its parts or on none"));
	tm_free(m);
}

/* int-quantized int4 (W4A8): one code per I8 byte, which can hold 100. */
static void test_int4_codes(void **state)
{
	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		ctm c;
		ct_llama(&c, 4, 128, 0, 0, 1);
		int k = tm_find(c.m, "model.layers.0.mlp.down_proj.weight");
		assert_true(k >= 0);
		((int8_t *)c.m->data[k])[3] = 100;
		char cfg[4096];
		ct_config(cfg, sizeof(cfg), 44, 128, NULL);
		wt_layout l;
		wt_layout_init(&l);
		l.quant = pass ? WT_QUANT_INT4_GROUP : WT_QUANT_NONE; /* packed / dequantized */
		wt_errbuf err;
		assert_int_equal(run(c.m, cfg, &l, true, &err), WT_ECORRUPT);
		assert_non_null(strstr(err.msg, "int4 code 100 at element 3"));
		ct_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config_dims),
	    cmocka_unit_test(test_fp8_scales),
	    cmocka_unit_test(test_expert_input_scales),
	    cmocka_unit_test(test_int4_codes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
