/*
 * test_shardmap_deepseek_v32.c — DeepSeek-V3.2 (DeepseekV32ForCausalLM, model_type deepseek_v32:
 * DeepSeek-V3.2-Exp, DeepSeek-V3.2) cut as vLLM's deepseek_v2.py loads it: every DeepSeek-V3 row
 * as V3's (the same bytes as the V3 model without the indexer, MTP layer dropped) and, in every
 * layer's self_attn, the lightning indexer served whole to every rank: wq_b and wk quantized as
 * q_a_proj, weights_proj and k_norm's weight / bias never; FP8-block sources carry their
 * weight_scale_inv along. Coverage TP 1..8 with EP, the loader's index keys and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0d32ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* tm_deepseek's V3 (hid 256, q_lora_rank 128, layer 0 dense, layer 1 MoE, layer 2 MTP) with
 * index_n_heads 4, index_head_dim 32: wq_b [128, 128], wk [32, 256], weights_proj [4, 256]. */
#define IXH     4
#define IXD     32
#define HID     256
#define QLR     128
#define IDX1    "model.layers.1.self_attn.indexer."
#define IDX0    "model.layers.0.self_attn.indexer."
#define IX_KEYS ",\"index_topk\":2048,\"index_n_heads\":4,\"index_head_dim\":32"

static const char *const ix_leaf[] = {"wq_b.weight", "wk.weight", "k_norm.weight", "k_norm.bias",
                                      "weights_proj.weight"};
#define NIX 5

/* cfg of V3 (tm_deepseek's) as V3.2: architecture and model_type renamed, `keys` added. */
static void v32_cfg(char *out, size_t cap, const char *v3, const char *keys)
{
	const char *a = strstr(v3, "DeepseekV3ForCausalLM"), *t = strstr(v3, "\"deepseek_v3\"");
	assert_non_null(a);
	assert_non_null(t);
	size_t n = strlen(v3);
	assert_true(a < t && v3[n - 1] == '}');
	snprintf(out, cap, "%.*sDeepseekV32%.*s\"deepseek_v32\"%.*s%s}", (int)(a - v3), v3,
	         (int)(t - (a + 10)), a + 10, (int)(v3 + n - 1 - (t + 13)), t + 13, keys);
}

/* The V3 model of tm_deepseek with the indexer in layers 0..2 (2: the MTP layer), wq_b / wk
 * FP8 with weight_scale_inv when fp8; `skip` (a leaf of ix_leaf, or NULL) left out of layer 1.
 * cfg gets V3.2's config with `keys`. */
static tm_model *tm_v32(int fp8, const char *skip, const char *keys, char *cfg, size_t cap)
{
	char v3[1024];
	tm_model *m = tm_deepseek(SEED, fp8, v3, sizeof(v3));
	v32_cfg(cfg, cap, v3, keys);
	char b[200];
	for (int i = 0; i < 3; i++) {
		bool s = i == 1 && skip != NULL;
		if (!(s && strcmp(skip, "wq_b.weight") == 0))
			tm_lin_l(m, i, "self_attn.indexer.wq_b.weight", IXH * IXD, QLR, fp8);
		if (!(s && strcmp(skip, "wk.weight") == 0))
			tm_lin_l(m, i, "self_attn.indexer.wk.weight", IXD, HID, fp8);
		for (int k = 2; k < NIX; k++) {
			if (s && strcmp(skip, ix_leaf[k]) == 0)
				continue;
			char leaf[96];
			snprintf(leaf, sizeof(leaf), "self_attn.indexer.%s", ix_leaf[k]);
			tm_fmt(b, sizeof(b), TM_L, i, leaf);
			if (k == NIX - 1)
				tm_add2(m, b, IXH, HID);
			else
				tm_add2(m, b, IXD, 0);
		}
	}
	return m;
}

/* Rank r of V3.2 (a) holds every tensor of rank r of V3 (b) with its bytes, and the 5 indexer
 * tensors of layers 0 and 1 besides. */
static void v3_rows_same(const fx *a, const fx *b, uint32_t r)
{
	size_t nb = shardmap_rank_n_tensors(b->p, r);
	for (size_t i = 0; i < nb; i++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, i);
		const sm_out_info *t = info(a, r, u->name);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(out_bytes(a, r, u->name), b->pr->b[r][i], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from V3's", r, u->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), nb + 2 * NIX);
}

/* TP 2 and TP 4 (and TP 2 x EP 2): V3's rows as V3's, the indexer of layers 0 / 1 whole on
 * every rank, byte for byte; the MTP layer's indexer dropped with the rest of it. */
static void test_v32_slices(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {4, 1}, {2, 2}};
	for (size_t k = 0; k < 3; k++) {
		char cfg[1200], v3[1024];
		fx f, g;
		fx_open(&f, tm_v32(0, NULL, IX_KEYS, cfg, sizeof(cfg)), cfg, lays[k][0], lays[k][1],
		        0, true);
		assert_string_equal(shardmap_family(f.p), "deepseek_v32");
		fx_open(&g, tm_deepseek(SEED, 0, v3, sizeof(v3)), v3, lays[k][0], lays[k][1], 0,
		        true);
		for (uint32_t r = 0; r < lays[k][0] * lays[k][1]; r++) {
			v3_rows_same(&f, &g, r);
			for (int l = 0; l < 2; l++)
				for (int j = 0; j < NIX; j++) {
					char b[200];
					snprintf(b, sizeof(b), "%s%s", l ? IDX1 : IDX0, ix_leaf[j]);
					repl(&f, r, b);
				}
		}
		shp(&f, 1, IDX1 "wq_b.weight", 2, IXH * IXD, QLR, 0);
		shp(&f, 1, IDX1 "wk.weight", 2, IXD, HID, 0);
		shp(&f, 1, IDX1 "weights_proj.weight", 2, IXH, HID, 0);
		shp(&f, 1, IDX1 "k_norm.bias", 1, IXD, 0, 0);
		for (int j = 0; j < NIX; j++) {
			char b[200];
			snprintf(b, sizeof(b), "model.layers.2.self_attn.indexer.%s", ix_leaf[j]);
			assert_true(fx_skipped(&f, b));
		}
		fx_close(&f);
		fx_close(&g);
	}
}

static const char *const v32_keep[] = {IDX1 "weights_proj.weight", IDX1 "k_norm.weight",
                                       IDX1 "k_norm.bias", "model.layers.1.mlp.gate.weight"};
static const char *const v32_quant[] = {IDX1 "wq_b.weight", IDX1 "wk.weight", IDX0 "wq_b.weight",
                                        IDX0 "wk.weight",
                                        "model.layers.1.self_attn.q_a_proj.weight"};

/* int8-channel TP 2: wq_b / wk per-row int8 with their scales (every row on every rank, as the
 * source's), weights_proj and k_norm kept BF16 without a scale; fp8-channel TP 4 the same. */
static void test_v32_quant(void **state)
{
	(void)state;
	char cfg[1200];
	fx f;
	fx_open_quant(&f, tm_v32(0, NULL, IX_KEYS, cfg, sizeof(cfg)), cfg, 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(v32_keep), FX_N(v32_quant));
	for (uint32_t r = 0; r < 2; r++) {
		fx_rows_int8_is(&f, r, IDX1 "wq_b.weight", 0, IDX1 "wq_b.weight", 0, IXH * IXD,
		                QLR);
		fx_rows_int8_is(&f, r, IDX1 "wk.weight", 0, IDX1 "wk.weight", 0, IXD, HID);
		repl(&f, r, IDX1 "weights_proj.weight");
	}
	fx_close(&f);
	fx_open_quant(&f, tm_v32(0, NULL, IX_KEYS, cfg, sizeof(cfg)), cfg, 4, WT_QUANT_FP8_CHANNEL,
	              WT_BF16, FX_N(v32_keep), FX_N(v32_quant));
	shp(&f, 3, IDX1 "wq_b.weight", 2, IXH * IXD, QLR, 0);
	fx_close(&f);
}

/* An FP8-block V3.2 (the released format) kept FP8-block at TP 2: wq_b and wk served FP8 with
 * their whole weight_scale_inv (as weight_scale) on every rank, byte for byte, weights_proj and
 * k_norm BF16 as stored; unquantized (no target), wq_b / wk dequantized to BF16 whole. */
static void test_v32_fp8_source(void **state)
{
	(void)state;
	char cfg[1200];
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_BLOCK;
	fx f;
	fx_open_l(&f, tm_v32(1, NULL, IX_KEYS, cfg, sizeof(cfg)), cfg, &l, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, IDX1 "wq_b.weight");
		repl_from(&f, r, IDX1 "wq_b.weight_scale", IDX1 "wq_b.weight_scale_inv");
		repl(&f, r, IDX0 "wk.weight");
		repl_from(&f, r, IDX0 "wk.weight_scale", IDX0 "wk.weight_scale_inv");
		repl(&f, r, IDX1 "weights_proj.weight");
		repl(&f, r, IDX1 "k_norm.bias");
		assert_int_equal(info(&f, r, IDX1 "wk.weight")->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, IDX1 "weights_proj.weight")->dtype, WT_BF16);
		assert_true(tm_ix(f.p, r, IDX1 "weights_proj.weight_scale") < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_v32(1, NULL, IX_KEYS, cfg, sizeof(cfg)), cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, IDX1 "wq_b.weight", 2, IXH * IXD, QLR, 0);
		assert_int_equal(info(&f, r, IDX1 "wq_b.weight")->dtype, WT_BF16);
		assert_int_equal(info(&f, r, IDX1 "wk.weight")->dtype, WT_BF16);
		assert_true(tm_ix(f.p, r, IDX1 "wk.weight_scale") < 0);
	}
	fx_close(&f);
}

static void test_v32_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {4, 2}, {8, 4}};
	char cfg[1200];
	coverage(tm_v32(0, NULL, IX_KEYS, cfg, sizeof(cfg)), cfg, 8, lays, 6);
}

/* A missing indexer tensor names itself; V3 (DeepseekV3ForCausalLM) does not take an indexer;
 * q_lora_rank null is refused naming it. */
static void test_v32_refusals(void **state)
{
	(void)state;
	char cfg[1200];
	for (int j = 0; j < NIX; j++) {
		char b[200];
		snprintf(b, sizeof(b), "%s%s", IDX1, ix_leaf[j]);
		fx_refused(tm_v32(0, ix_leaf[j], IX_KEYS, cfg, sizeof(cfg)), cfg, WT_ENOTFOUND, b,
		           b);
	}
	char v3[1024];
	tm_model *m = tm_v32(0, NULL, IX_KEYS, cfg, sizeof(cfg));
	tm_free(tm_deepseek(SEED, 0, v3, sizeof(v3))); /* the V3 config only */
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, v3, &err), WT_EUNSUPPORTED);
	printf("V3 with an indexer: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "indexer"));
	char nq[1200];
	m = tm_v32(0, NULL, IX_KEYS, cfg, sizeof(cfg));
	char *q = strstr(cfg, "\"q_lora_rank\":128");
	assert_non_null(q);
	snprintf(nq, sizeof(nq), "%.*s\"q_lora_rank\":null%s", (int)(q - cfg), cfg, q + 17);
	fx_refused(m, nq, WT_ECORRUPT, "q_lora_rank", "indexer");
}

/* The loader's index keys: each required, an integer >= 1, refused naming it. */
static void test_v32_config_refusals(void **state)
{
	(void)state;
	static const struct {
		const char *keys, *key;
	} bad[] = {
	    {",\"index_topk\":0,\"index_n_heads\":4,\"index_head_dim\":32", "index_topk"},
	    {",\"index_topk\":-5,\"index_n_heads\":4,\"index_head_dim\":32", "index_topk"},
	    {",\"index_n_heads\":4,\"index_head_dim\":32", "index_topk"},
	    {",\"index_topk\":null,\"index_n_heads\":4,\"index_head_dim\":32", "index_topk"},
	    {",\"index_topk\":\"2048\",\"index_n_heads\":4,\"index_head_dim\":32", "index_topk"},
	    {",\"index_topk\":2048,\"index_head_dim\":32", "index_n_heads"},
	    {",\"index_topk\":2048,\"index_n_heads\":0,\"index_head_dim\":32", "index_n_heads"},
	    {",\"index_topk\":2048,\"index_n_heads\":4", "index_head_dim"},
	    {",\"index_topk\":2048,\"index_n_heads\":4,\"index_head_dim\":0", "index_head_dim"},
	};
	char cfg[1200];
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused(tm_v32(0, NULL, bad[k].keys, cfg, sizeof(cfg)), cfg, WT_ECORRUPT,
		           "config.json", bad[k].key);
	/* index_topk 1 (every query keeps one key) is a model vLLM builds */
	fx f;
	fx_open(&f,
	        tm_v32(0, NULL, ",\"index_topk\":1,\"index_n_heads\":4,\"index_head_dim\":32", cfg,
	               sizeof(cfg)),
	        cfg, 2, 1, 0, false);
	assert_string_equal(shardmap_family(f.p), "deepseek_v32");
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v32_slices),     cmocka_unit_test(test_v32_quant),
	    cmocka_unit_test(test_v32_fp8_source), cmocka_unit_test(test_v32_coverage),
	    cmocka_unit_test(test_v32_refusals),   cmocka_unit_test(test_v32_config_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
