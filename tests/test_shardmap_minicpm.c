/*
 * test_shardmap_minicpm.c — MiniCPM (MiniCPMForCausalLM, remote code: MiniCPM-2B-sft / -dpo,
 * MiniCPM-1B, MiniCPM-2B-128k) cut as vLLM's minicpm.py loads it: Llama's names, q_proj /
 * k_proj / v_proj fused by heads into self_attn.qkv_proj [q_r; k_r; v_r] (kv heads replicated
 * when KV < T); o_proj by columns; gate_proj / up_proj merged by rows into mlp.gate_up_proj
 * [gate_r; up_r], down_proj by columns; the norms replicated; embed_tokens / lm_head by
 * vocabulary rows, lm_head dropped when tied (MiniCPMConfig's default); no biases. Hand-computed
 * slices at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP 1..8,
 * MiniCPMConfig's defaults and the refusals. Seeds fixed and printed.
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
#define MC_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"MiniCPMForCausalLM\"],\"model_type\":\"minicpm\","                  \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define MC_CFG(extra)                                                                              \
	MC_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000,"       \
	           "\"scale_emb\":12,\"scale_depth\":1.4,\"dim_model_base\":256" extra)
#define KV2    ",\"num_key_value_heads\":2"
#define UNTIED ",\"tie_word_embeddings\":false"
#define L1     "model.layers.1."
#define QKV    L1 "self_attn.qkv_proj.weight"
#define QP     L1 "self_attn.q_proj.weight"
#define KP     L1 "self_attn.k_proj.weight"
#define VP     L1 "self_attn.v_proj.weight"
#define OP     L1 "self_attn.o_proj.weight"
#define GU     L1 "mlp.gate_up_proj.weight"
#define GP     L1 "mlp.gate_proj.weight"
#define UP     L1 "mlp.up_proj.weight"
#define DP     L1 "mlp.down_proj.weight"
#define EMB    "model.embed_tokens.weight"

/* The model with kv kv heads; lm_head.weight when head. */
static tm_model *tm_minicpm(int64_t kv, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, head);
	const tm_leaf L[] = {
	    {"input_layernorm.weight", HID, 0},        {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", HID, HID},     {"self_attn.k_proj.weight", kv * HD, HID},
	    {"self_attn.v_proj.weight", kv * HD, HID}, {"self_attn.o_proj.weight", HID, HID},
	    {"mlp.gate_proj.weight", I, HID},          {"mlp.up_proj.weight", I, HID},
	    {"mlp.down_proj.weight", HID, I}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), 0);
	return m;
}

/* TP 2 and TP 4 with 2 kv heads, by hand: rank r's qkv_proj is q_proj rows [r*H/T*d, +H/T*d),
 * then k_proj / v_proj rows of kv head r*KV/T (TP 2) or r/2 (TP 4, replicated on ranks 2g and
 * 2g + 1). */
static void test_minicpm_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_minicpm(2, 1), MC_CFG(KV2 UNTIED), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "minicpm");
		for (uint32_t r = 0; r < T; r++) {
			shp(&f, r, QKV, 2, (8 / T + 2) * HD, HID, 0);
			fx_qkv_is(&f, r, T, QKV, QP, KP, VP, 8, 2, HD);
			cols_of(&f, r, T, OP, OP, HID, HID);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, GP, UP, I);
			cols_of(&f, r, T, DP, DP, HID, I);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, GP) < 0 &&
			            tm_ix(f.p, r, UP) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* TP 8 (each kv head on four ranks, one q head a rank) and 8 kv heads at TP 4; tied
 * (MiniCPMConfig's default, MiniCPM-2B's config.json has no key): lm_head not emitted, and a
 * checkpoint's copy dropped. */
static void test_minicpm_replicated(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_minicpm(2, 0), MC_CFG(KV2), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, QKV, 2, 3 * HD, HID, 0);
		fx_qkv_is(&f, r, 8, QKV, QP, KP, VP, 8, 2, HD);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_minicpm(8, 1), MC_CFG(""), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 6 * HD, HID, 0);
		fx_qkv_is(&f, r, 4, QKV, QP, KP, VP, 8, 8, HD);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	}
	assert_true(fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const mc_keep[] = {EMB, "lm_head.weight", "model.norm.weight",
                                      L1 "input_layernorm.weight",
                                      L1 "post_attention_layernorm.weight"};
static const char *const mc_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * embedding, lm_head and norms BF16; rank 1's qkv_proj codes are q_proj rows 64.. then kv
 * head 1's k / v rows. fp8-channel at TP 4: the same split. */
static void test_minicpm_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_minicpm(2, 1), MC_CFG(KV2 UNTIED), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(mc_keep), FX_N(mc_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 2, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_minicpm(2, 1), MC_CFG(KV2 UNTIED), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(mc_keep), FX_N(mc_quant));
	fx_close(&f);
}

static void test_minicpm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_minicpm(2, 1), MC_CFG(KV2 UNTIED), 2, lays, 2); /* KV < T: the tests above */
	coverage(tm_minicpm(8, 1), MC_CFG(UNTIED), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take MiniCPMConfig's defaults: num_key_value_heads the heads, tied (lm_head
 * not needed), vocab_size 32000, intermediate_size 11008, 32 layers; head_dim, which vLLM
 * never reads, accepted when it is hidden_size / heads. */
static void test_minicpm_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_minicpm(8, 0), MC_CFG(""), 2, 1, 0, false);
	shp(&f, 1, QKV, 2, 12 * HD, HID, 0);
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	fx_close(&f);
	fx_open(&f, tm_minicpm(2, 0), MC_CFG(KV2 ",\"head_dim\":16,\"num_experts\":0"), 2, 1, 0,
	        false);
	fx_close(&f);
	fx_refused(tm_minicpm(8, 0), MC_CFG(UNTIED), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_minicpm(8, 0),
	           MC_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192"), WT_ESHAPE,
	           "[32000, 128]", "fix config.json");
	fx_refused(tm_minicpm(8, 0), MC_CFG_RAW(",\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ESHAPE, "[128, 11008]", "fix config.json");
	fx_refused(tm_minicpm(8, 0), MC_CFG_RAW(",\"intermediate_size\":192,\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
}

static void test_minicpm_errors(void **state)
{
	(void)state;
	fx_refused(tm_minicpm(2, 1), MC_CFG(KV2 UNTIED ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_minicpm(2, 1), MC_CFG(KV2 UNTIED ",\"attention_bias\":true"), WT_EUNSUPPORTED,
	           "attention_bias", "without biases");
	fx_refused(tm_minicpm(2, 1),
	           MC_CFG(KV2 UNTIED ",\"num_experts\":8,\"num_experts_per_tok\":2"),
	           WT_EUNSUPPORTED, "a MoE layer", "see num_experts");
	fx_refused(tm_minicpm(2, 1), MC_CFG(KV2 UNTIED ",\"head_dim\":32"), WT_EUNSUPPORTED,
	           "head_dim 32", "hidden_size / num_attention_heads = 16");
	fx_refused(tm_minicpm(2, 1), MC_CFG(UNTIED ",\"num_key_value_heads\":4"), WT_ESHAPE,
	           "k_proj", "[64, 128]");
	tm_model *m = tm_minicpm(2, 1);
	tm_add2(m, L1 "self_attn.q_proj.bias", HID, 0);
	fx_refused(m, MC_CFG(KV2 UNTIED), WT_EUNSUPPORTED, "q_proj.bias", "unknown");
	m = tm_minicpm(2, 1);
	tm_add2(m, L1 "self_attn.o_proj.bias", HID, 0);
	fx_refused(m, MC_CFG(KV2 UNTIED), WT_EUNSUPPORTED, "o_proj.bias", "unknown");
	m = tm_minicpm(2, 1);
	tm_remove(m, UP);
	fx_refused(m, MC_CFG(KV2 UNTIED), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_minicpm(2, 1), MC_CFG(KV2 UNTIED), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_minicpm(2, 1), MC_CFG(KV2 UNTIED), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minicpm_slices),   cmocka_unit_test(test_minicpm_replicated),
	    cmocka_unit_test(test_minicpm_quant),    cmocka_unit_test(test_minicpm_coverage),
	    cmocka_unit_test(test_minicpm_defaults), cmocka_unit_test(test_minicpm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
