/*
 * test_shardmap_phimoe.c — PhiMoE (PhiMoEForCausalLM, Phi-3.5-MoE): LayerNorms with
 * biases (replicated), Llama's attention with q/k/v/o biases, Mixtral's router and
 * experts in every layer, and lm_head.bias [V] cut as lm_head's rows (vocab parallel,
 * padding entries zero, 1-D on the ranks, never quantized, kept when tied). Hand-computed
 * slices at TP 2 and TP 2 x EP 2, quantized layouts, coverage over several TP / EP
 * layouts, and the refusals (a missing lm_head.bias when lm_head_bias is true, a stray
 * one when it is not). Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0007ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* H 8, KV 2, d 32, intermediate_size 128 (the expert size), 4 experts, V 1003 (padded to
 * 1024 under vocab_pad 64: 512 rows per TP 2 rank, the last 21 of rank 1 padding). */
#define PM_CFG(extra)                                                                              \
	"{\"architectures\":[\"PhiMoEForCausalLM\"],\"model_type\":\"phimoe\","                    \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":128,\"vocab_size\":1003,\"num_hidden_layers\":2,"                   \
	"\"num_experts_per_tok\":2,\"attention_bias\":true" extra "}"
#define PM_E4   ",\"num_local_experts\":4"
#define PM_OK   PM_CFG(PM_E4 ",\"lm_head_bias\":true,\"tie_word_embeddings\":false")
#define PM_TIED PM_CFG(PM_E4 ",\"lm_head_bias\":true,\"tie_word_embeddings\":true")
#define PM_NOB  PM_CFG(PM_E4 ",\"lm_head_bias\":false")
#define PM_LB   "lm_head.bias"
#define PM_L1   "model.layers.1."
#define PM_W13  PM_L1 "block_sparse_moe.experts.w13_weight"
#define PM_W2   PM_L1 "block_sparse_moe.experts.w2_weight"
#define PM_RT   PM_L1 "block_sparse_moe.gate.weight"
#define RB      (256 * 2) /* bytes of a BF16 row of hid columns */

/* The model; lm_bias 0 leaves lm_head.bias out, else it is [lm_bias] */
static tm_model *tm_phimoe(int lm_head, int64_t lm_bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, 256, lm_head);
	tm_add2(m, "model.norm.bias", 256, 0);
	if (lm_bias)
		tm_add2(m, PM_LB, lm_bias, 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 1, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.bias");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.bias");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.weight");
		tm_add2(m, b, 4, 256);
		tm_experts(m, i, "block_sparse_moe.experts.", 4, 128, 256, "w1", "w3", "w2");
	}
	return m;
}

static const uint8_t *srow(const fx *f, const char *name, int64_t r0)
{
	size_t rowb;
	return src_rows(f, name, r0, &rowb);
}

/* Source expert j's leaf of layer 1 from row r0 */
static const uint8_t *pm_exp(const fx *f, int64_t j, const char *leaf, int64_t r0)
{
	char b[200];
	snprintf(b, sizeof(b), PM_L1 "block_sparse_moe.experts.%lld.%s.weight", (long long)j, leaf);
	return srow(f, b, r0);
}

/* lm_head.bias of rank r (TP 2, tp rank tr): [512] BF16, entries [tr*512, ...) of the
 * source, the entries past 1003 zero */
static void check_lm_bias(const fx *f, uint32_t r, int tr)
{
	shp(f, r, PM_LB, 1, 512, 0, 0);
	assert_int_equal(info(f, r, PM_LB)->dtype, WT_BF16);
	const uint8_t *got = out_bytes(f, r, PM_LB);
	int64_t real = tr == 0 ? 512 : 1003 - 512; /* 491 */
	assert_memory_equal(got, srow(f, PM_LB, tr * 512), (size_t)real * 2);
	for (int64_t k = real * 2; k < 512 * 2; k++)
		if (got[k] != 0)
			fail_msg("rank %u lm_head.bias byte %lld of the padding is %u", r,
			         (long long)k, got[k]);
}

static void test_phimoe_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_phimoe(1, 1003), PM_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "phimoe");
	assert_false(shardmap_tied_lm_head(f.p));
	check_lm_bias(&f, 0, 0);
	check_lm_bias(&f, 1, 1);
	shp(&f, 1, "lm_head.weight", 2, 512, 256, 0);
	assert_memory_equal(out_bytes(&f, 1, "lm_head.weight"), srow(&f, "lm_head.weight", 512),
	                    491 * RB);
	/* fused q/k/v bias of rank 1: q heads 4..7 (entries [128, 256)), kv head 1 ([32, 64)) */
	const char *qkvb = PM_L1 "self_attn.qkv_proj.bias";
	shp(&f, 1, qkvb, 1, 128 + 2 * 32, 0, 0);
	const uint8_t *got = out_bytes(&f, 1, qkvb);
	assert_memory_equal(got, srow(&f, PM_L1 "self_attn.q_proj.bias", 128), 128 * 2);
	assert_memory_equal(got + 256, srow(&f, PM_L1 "self_attn.k_proj.bias", 32), 32 * 2);
	assert_memory_equal(got + 320, srow(&f, PM_L1 "self_attn.v_proj.bias", 32), 32 * 2);
	/* replicated in full: o_proj.bias, the LayerNorms' weights and biases, the router */
	static const char *const repl[] = {PM_L1 "self_attn.o_proj.bias",
	                                   PM_L1 "input_layernorm.bias",
	                                   PM_L1 "input_layernorm.weight",
	                                   PM_L1 "post_attention_layernorm.bias",
	                                   "model.norm.bias",
	                                   "model.norm.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		for (size_t k = 0; k < sizeof(repl) / sizeof(repl[0]); k++) {
			shp(&f, r, repl[k], 1, 256, 0, 0);
			assert_memory_equal(out_bytes(&f, r, repl[k]), srow(&f, repl[k], 0), RB);
		}
		shp(&f, r, PM_RT, 2, 4, 256, 0);
		assert_memory_equal(out_bytes(&f, r, PM_RT), srow(&f, PM_RT, 0), 4 * RB);
	}
	/* experts TP-split: rank 1's slot j = [w1_j rows [64, 128) ; w3_j rows [64, 128)],
	 * w2 slot j = w2_j columns [64, 128) */
	shp(&f, 1, PM_W13, 3, 4, 128, 256);
	shp(&f, 1, PM_W2, 3, 4, 256, 64);
	const uint8_t *w13 = out_bytes(&f, 1, PM_W13) + (size_t)(3 * 128) * RB;
	assert_memory_equal(w13, pm_exp(&f, 3, "w1", 64), 64 * RB);
	assert_memory_equal(w13 + 64 * RB, pm_exp(&f, 3, "w3", 64), 64 * RB);
	const uint8_t *w2 = out_bytes(&f, 1, PM_W2) + (size_t)(3 * 256) * 128;
	const uint8_t *src = pm_exp(&f, 3, "w2", 0);
	for (int64_t row = 0; row < 256; row++)
		assert_memory_equal(w2 + (size_t)row * 128, src + (size_t)row * 256 + 128, 128);
	fx_close(&f);
}

static void test_phimoe_ep(void **state)
{
	(void)state;
	fx f;
	/* TP 2 x EP 2, E 4: ep rank 1 (ranks 2, 3) holds experts 2, 3 whole; lm_head.bias
	 * follows the tp rank on every ep rank */
	fx_open(&f, tm_phimoe(1, 1003), PM_OK, 2, 2, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		check_lm_bias(&f, r, (int)(r % 2));
	shp(&f, 3, PM_W13, 3, 2, 256, 256);
	shp(&f, 3, PM_W2, 3, 2, 256, 128);
	const uint8_t *w13 = out_bytes(&f, 3, PM_W13), *w2 = out_bytes(&f, 2, PM_W2);
	for (int64_t k = 0; k < 2; k++) {
		const uint8_t *o = w13 + (size_t)(k * 256) * RB;
		assert_memory_equal(o, pm_exp(&f, 2 + k, "w1", 0), 128 * RB);
		assert_memory_equal(o + 128 * RB, pm_exp(&f, 2 + k, "w3", 0), 128 * RB);
		assert_memory_equal(w2 + (size_t)(k * 256) * 256, pm_exp(&f, 2 + k, "w2", 0),
		                    256 * 256);
	}
	assert_memory_equal(out_bytes(&f, 0, PM_W13), pm_exp(&f, 0, "w1", 0), 128 * RB);
	fx_close(&f);
}

/* lm_head.bias is never quantized: int8 / fp8 leave it BF16 with the same bytes (and
 * no scale) while the attention and expert weights are quantized; tied embeddings drop
 * lm_head.weight but keep the bias. */
static void test_phimoe_quant_tied(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_CHANNEL,
	                              WT_QUANT_FP8_TENSOR};
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		fx f;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = qs[k];
		fx_open_l(&f, tm_phimoe(1, 1003), PM_OK, &l, true);
		check_lm_bias(&f, 1, 1);
		assert_true(tm_ix(f.p, 1, PM_LB "_scale") < 0);
		assert_int_equal(info(&f, 1, "lm_head.weight")->dtype, WT_BF16);
		wt_dtype qd = qs[k] == WT_QUANT_INT8_CHANNEL ? WT_I8 : WT_F8_E4M3;
		assert_int_equal(info(&f, 1, PM_L1 "self_attn.o_proj.weight")->dtype, qd);
		assert_int_equal(info(&f, 1, PM_W13)->dtype, qd);
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_phimoe(0, 1003), PM_TIED, 2, 1, 0, true);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	check_lm_bias(&f, 1, 1);
	fx_close(&f);
}

static void test_phimoe_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}};
	coverage(tm_phimoe(1, 1003), PM_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void pm_refused(tm_model *m, const char *cfg, int code, const char *a, const char *b)
{
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, cfg, &err), code);
	printf("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, a));
	assert_non_null(strstr(err.msg, b));
}

static void test_phimoe_errors(void **state)
{
	(void)state;
	/* lm_head_bias true and no lm_head.bias */
	pm_refused(tm_phimoe(1, 0), PM_OK, WT_ENOTFOUND, PM_LB, "missing");
	/* an lm_head.bias the config does not declare (absent key = false) */
	pm_refused(tm_phimoe(1, 1003), PM_NOB, WT_EUNSUPPORTED, PM_LB, "lm_head_bias");
	pm_refused(tm_phimoe(1, 1003), PM_CFG(PM_E4), WT_EUNSUPPORTED, PM_LB, "lm_head_bias");
	/* its length is the vocabulary's */
	pm_refused(tm_phimoe(1, 1000), PM_OK, WT_ESHAPE, PM_LB, "[1003]");
	/* LayerNorm biases are required */
	tm_model *m = tm_phimoe(1, 1003);
	tm_remove(m, PM_L1 "post_attention_layernorm.bias");
	pm_refused(m, PM_OK, WT_ENOTFOUND, PM_L1 "post_attention_layernorm.bias", "missing");
	/* every layer is MoE: no expert count is refused, not read as dense */
	pm_refused(tm_phimoe(1, 1003), PM_CFG(",\"lm_head_bias\":true"), WT_ECORRUPT,
	           "num_local_experts", "PhiMoEForCausalLM");
	/* Qwen-MoE's expert names are no PhiMoE tensors */
	m = tm_phimoe(1, 1003);
	tm_experts(m, 0, "mlp.experts.", 1, 128, 256, "gate_proj", "up_proj", "down_proj");
	pm_refused(m, PM_OK, WT_EUNSUPPORTED, "model.layers.0.mlp.experts.0", "phimoe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_phimoe_tp2),        cmocka_unit_test(test_phimoe_ep),
	    cmocka_unit_test(test_phimoe_quant_tied), cmocka_unit_test(test_phimoe_coverage),
	    cmocka_unit_test(test_phimoe_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
