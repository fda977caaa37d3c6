/*
 * test_shardmap_internlm2_rm.c — InternLM2's reward models (InternLM2ForRewardModel, remote code:
 * internlm/internlm2-1_8b-reward, -7b-reward, -20b-reward; model_type internlm2) cut as vLLM's
 * internlm2.py loads them: InternLM2's decoder (attention.wqkv per kv group as each rank's
 * [q_r; k_r; v_r], wo by columns, feed_forward.w1 / w3 into gate_up_proj, w2 by columns), no
 * output, and v_head [1, hid] (RowParallelLinear(hidden_size, 1, bias=False) built without the
 * quantization config) by columns, never quantized. Hand-computed slices at TP 2 and TP 4,
 * int8-channel and fp8-channel layouts, coverage over TP 1..8, the class's one label and
 * InternLM2Config's defaults under this architecture, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0043ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define RM_CFG_RAW(arch, extra)                                                                    \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"internlm2\","                          \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define RM_CFG(extra) RM_CFG_RAW("InternLM2ForRewardModel", ",\"bias\":false" extra)
#define KV2           ",\"num_key_value_heads\":2"
#define L1            "model.layers.1."
#define WQKV          L1 "attention.wqkv.weight"
#define WO            L1 "attention.wo.weight"
#define GU            L1 "feed_forward.gate_up_proj.weight"
#define W1            L1 "feed_forward.w1.weight"
#define W3            L1 "feed_forward.w3.weight"
#define W2            L1 "feed_forward.w2.weight"
#define EMB           "model.tok_embeddings.weight"
#define VH            "v_head.weight"

/* The model with kv kv heads; v_head [vrows, HID] unless vrows is 0; output.weight when out. */
static tm_model *tm_rm(int64_t kv, int64_t vrows, int out)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	if (vrows > 0)
		tm_add2(m, VH, vrows, HID);
	if (out)
		tm_add2(m, "output.weight", 1000, HID);
	const tm_leaf L[] = {{"attention_norm.weight", HID, 0},
	                     {"ffn_norm.weight", HID, 0},
	                     {"attention.wqkv.weight", (8 + 2 * kv) * HD, HID},
	                     {"attention.wo.weight", HID, HID},
	                     {"feed_forward.w1.weight", I, HID},
	                     {"feed_forward.w3.weight", I, HID},
	                     {"feed_forward.w2.weight", HID, I}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), 0);
	return m;
}

/* TP 2 and TP 4 with 2 kv groups of 4 q heads (96 rows a group: q q q q k v), by hand: at TP 2
 * rank r holds group r whole; at TP 4 rank r holds q heads 2r, 2r + 1 of group r / 2 and its
 * k / v heads. v_head: rank r's columns [r*HID/T, (r+1)*HID/T), shape [1, HID/T]. No output. */
static void test_rm_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_rm(2, 1, 0), RM_CFG(KV2), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "internlm2_rm");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T, g = (int64_t)r * 2 / T;
			shp(&f, r, WQKV, 2, (hl + 2) * HD, HID, 0);
			rows_at(&f, r, WQKV, 0, WQKV, 96 * g + (T == 4 ? 32 * (r % 2) : 0),
			        hl * HD);
			rows_at(&f, r, WQKV, hl * HD, WQKV, 96 * g + 64, HD);
			rows_at(&f, r, WQKV, (hl + 1) * HD, WQKV, 96 * g + 80, HD);
			fx_qkv_grouped_is(&f, r, T, 8, 2, HD, WQKV);
			cols_of(&f, r, T, WO, WO, HID, HID);
			fx_gate_up_is(&f, r, T, GU, W1, W3, I);
			cols_of(&f, r, T, W2, W2, HID, I);
			shp(&f, r, VH, 2, 1, HID / T, 0);
			cols_of(&f, r, T, VH, VH, 1, HID);
			repl(&f, r, L1 "attention_norm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, "output.weight") < 0);
		}
		rows_are(&f, 0, EMB, 0, EMB, 0, 1024 / T);
		fx_close(&f);
	}
}

static const char *const rm_keep[] = {EMB, VH, "model.norm.weight", L1 "attention_norm.weight",
                                      L1 "ffn_norm.weight"};
static const char *const rm_quant[] = {WQKV, WO, GU, W2};

/* int8-channel at TP 2: the decoder's Linears quantized per row; v_head (no quantization config
 * in vLLM), the embedding and norms BF16, v_head still each rank's columns. fp8-channel at TP 4:
 * the same split. */
static void test_rm_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_rm(2, 1, 0), RM_CFG(KV2), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(rm_keep), FX_N(rm_quant));
	for (uint32_t r = 0; r < 2; r++)
		cols_of(&f, r, 2, VH, VH, 1, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_rm(2, 1, 0), RM_CFG(KV2), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(rm_keep), FX_N(rm_quant));
	fx_close(&f);
}

static void test_rm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_rm(2, 1, 0), RM_CFG(KV2), 2, lays, 2); /* KV < T beyond: replicated */
	coverage(tm_rm(8, 1, 0), RM_CFG(""), 8, lays, 4);
}

/* One label whatever config.json says (num_labels / id2label not read); keys left out take
 * InternLM2Config's defaults: num_key_value_heads the heads, vocab 103168, bias true (refused). */
static void test_rm_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_rm(8, 1, 0),
	        RM_CFG(",\"num_labels\":3,\"id2label\":{\"0\":\"a\",\"1\":\"b\"}"), 2, 1, 0, false);
	shp(&f, 1, WQKV, 2, 12 * HD, HID, 0);
	shp(&f, 1, VH, 2, 1, HID / 2, 0);
	fx_close(&f);
	fx_refused(tm_rm(8, 3, 0), RM_CFG(",\"num_labels\":3"), WT_ESHAPE, VH, "[1, 128]");
	fx_refused(tm_rm(8, 1, 0),
	           "{\"architectures\":[\"InternLM2ForRewardModel\"],\"model_type\":\"internlm2\","
	           "\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"
	           "\"num_hidden_layers\":2,\"bias\":false}",
	           WT_ESHAPE, "[103168, 128]", "fix config.json");
	fx_refused(tm_rm(2, 1, 0), RM_CFG_RAW("InternLM2ForRewardModel", KV2), WT_EUNSUPPORTED,
	           "bias is true", "default");
}

static void test_rm_errors(void **state)
{
	(void)state;
	/* the head is required; the causal LM's output has no parameter here (vLLM never builds
	 * it), nor does a v_head bias (bias=False) */
	fx_refused(tm_rm(2, 0, 0), RM_CFG(KV2), WT_ENOTFOUND, VH, "missing");
	fx_refused(tm_rm(2, 1, 1), RM_CFG(KV2), WT_EUNSUPPORTED, "output.weight", "unknown");
	tm_model *m = tm_rm(2, 1, 0);
	tm_add2(m, "v_head.bias", 1, 0);
	fx_refused(m, RM_CFG(KV2), WT_EUNSUPPORTED, "v_head.bias", "unknown");
	/* InternLM2ForCausalLM over it: v_head unknown */
	fx_refused(tm_rm(2, 1, 1), RM_CFG_RAW("InternLM2ForCausalLM", ",\"bias\":false" KV2),
	           WT_EUNSUPPORTED, VH, "unknown");
	fx_refused(tm_rm(2, 1, 0), RM_CFG(KV2 ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act 'gelu'", "silu");
	fx_refused(tm_rm(2, 1, 0), RM_CFG(",\"num_key_value_heads\":3"), WT_ECORRUPT,
	           "num_key_value_heads 3", "evenly");
	fx_refused_tp(tm_rm(2, 1, 0), RM_CFG(KV2), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_rm(2, 1, 0), RM_CFG(KV2), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rm_slices),   cmocka_unit_test(test_rm_quant),
	    cmocka_unit_test(test_rm_coverage), cmocka_unit_test(test_rm_defaults),
	    cmocka_unit_test(test_rm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
