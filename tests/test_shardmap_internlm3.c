/*
 * test_shardmap_internlm3.c — InternLM3 (InternLM3ForCausalLM, remote code:
 * internlm/internlm3-8b-instruct) cut as vLLM's llama.py loads it: Llama's names, q_proj /
 * k_proj / v_proj fused by heads into self_attn.qkv_proj [q_r; k_r; v_r] (kv heads replicated
 * when KV < T), their biases alike when qkv_bias; o_proj by columns, its bias replicated when
 * bias or attention_bias; gate_proj / up_proj merged by rows into mlp.gate_up_proj, down_proj
 * by columns; the norms replicated; embed_tokens / lm_head by vocabulary rows, untied by default
 * (InternLM3Config). Hand-computed slices at TP 2 and TP 4 (with and without the biases),
 * int8-channel and fp8-channel layouts, coverage over TP 1..8, InternLM3Config's defaults and
 * the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0044ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"

/* hid 128, H 8, head_dim 32 (H x d 256), I 192, V 1000, 2 layers */
#define HID 128
#define HD  32
#define QD  (8 * HD)
#define I   192
#define IL_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"InternLM3ForCausalLM\"],\"model_type\":\"internlm3\","              \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"head_dim\":32" extra "}"
#define IL_CFG(extra)                                                                              \
	IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000,"       \
	           "\"qkv_bias\":false,\"bias\":false" extra)
#define KV2  ",\"num_key_value_heads\":2"
#define KV8  ",\"num_key_value_heads\":8"
#define TIED ",\"tie_word_embeddings\":true"
#define L1   "model.layers.1."
#define QKV  L1 "self_attn.qkv_proj.weight"
#define QKVB L1 "self_attn.qkv_proj.bias"
#define QP   L1 "self_attn.q_proj.weight"
#define KP   L1 "self_attn.k_proj.weight"
#define VP   L1 "self_attn.v_proj.weight"
#define OP   L1 "self_attn.o_proj.weight"
#define OB   L1 "self_attn.o_proj.bias"
#define GU   L1 "mlp.gate_up_proj.weight"
#define GP   L1 "mlp.gate_proj.weight"
#define UP   L1 "mlp.up_proj.weight"
#define DP   L1 "mlp.down_proj.weight"
#define EMB  "model.embed_tokens.weight"

enum { B_QKV = TM_B_QKV, B_O = TM_B_O };

/* The model with kv kv heads; lm_head.weight when head; the biases of `bias`. */
static tm_model *tm_il3(int64_t kv, int head, int bias)
{
	return tm_llama_biased(SEED, HID, QD, kv * HD, I, head, bias);
}

/* TP 2 and TP 4 with 2 kv heads, by hand: rank r's qkv_proj (and with qkv_bias its bias) is
 * q rows [r*H/T*d, +H/T*d), then k / v rows of kv head r*KV/T (TP 2) or r/2 (TP 4, replicated
 * on ranks 2g and 2g + 1); o_proj by columns, its bias (bias true) whole on every rank. */
static void test_internlm3_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_il3(2, 1, B_QKV | B_O),
		        IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
		                   "\"vocab_size\":1000,\"qkv_bias\":true,\"bias\":true" KV2),
		        T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "internlm3");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T;
			shp(&f, r, QKV, 2, (hl + 2) * HD, HID, 0);
			fx_qkv_is(&f, r, T, QKV, QP, KP, VP, 8, 2, HD);
			shp(&f, r, QKVB, 1, (hl + 2) * HD, 0, 0);
			fx_qkv_is(&f, r, T, QKVB, L1 "self_attn.q_proj.bias",
			          L1 "self_attn.k_proj.bias", L1 "self_attn.v_proj.bias", 8, 2, HD);
			cols_of(&f, r, T, OP, OP, HID, QD);
			repl(&f, r, OB);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, GP, UP, I);
			cols_of(&f, r, T, DP, DP, HID, I);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, GP) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* The release's switches (qkv_bias / bias false): no bias emitted; TP 8 (each kv head on four
 * ranks); attention_bias true gives o_proj's bias alone (vLLM's bias_o_proj), qkv_bias
 * deciding q/k/v's; tie_word_embeddings true drops a checkpoint's lm_head. */
static void test_internlm3_switches(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_il3(2, 1, 0), IL_CFG(KV2), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, QKV, 2, 3 * HD, HID, 0);
		rows_at(&f, r, QKV, HD, KP, (r / 4) * HD, HD);
		assert_true(tm_ix(f.p, r, QKVB) < 0 && tm_ix(f.p, r, OB) < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_il3(2, 1, B_O), IL_CFG(KV2 ",\"attention_bias\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, OB);
		assert_true(tm_ix(f.p, r, QKVB) < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_il3(2, 1, 0), IL_CFG(KV2 TIED), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const il_keep[] = {EMB, "lm_head.weight",           "model.norm.weight", QKVB,
                                      OB,  L1 "input_layernorm.weight"};
static const char *const il_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * biases, embedding, lm_head and norms BF16; rank 1's qkv_proj codes are q_proj rows 128..
 * then kv head 1's k / v rows. fp8-channel at TP 4: the same split. */
static void test_internlm3_quant(void **state)
{
	(void)state;
	fx f;
	const char *cfg = IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                             "\"vocab_size\":1000,\"qkv_bias\":true,\"bias\":true" KV2);
	fx_open_quant(&f, tm_il3(2, 1, B_QKV | B_O), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(il_keep), FX_N(il_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 2, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_il3(2, 1, B_QKV | B_O), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(il_keep), FX_N(il_quant));
	fx_close(&f);
}

static void test_internlm3_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_il3(2, 1, 0), IL_CFG(KV2), 2, lays, 2); /* KV < T: the tests above */
	coverage(tm_il3(8, 1, B_QKV | B_O),
	         IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                    "\"vocab_size\":1000,\"qkv_bias\":true,\"bias\":true" KV8),
	         8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take InternLM3Config's defaults: untied (lm_head needed), 32 kv heads (not the
 * heads), vocab_size 128512, intermediate_size 11008, 32 layers, qkv_bias / bias false. */
static void test_internlm3_defaults(void **state)
{
	(void)state;
	fx_refused(tm_il3(8, 0, 0), IL_CFG(KV8), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_il3(8, 1, 0), IL_CFG(""), WT_ESHAPE, "k_proj", "[1024, 128]");
	fx_refused(tm_il3(8, 1, 0),
	           IL_CFG_RAW(KV8 ",\"num_hidden_layers\":2,\"intermediate_size\":192"), WT_ESHAPE,
	           "[128512, 128]", "fix config.json");
	fx_refused(tm_il3(8, 1, 0), IL_CFG_RAW(KV8 ",\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ESHAPE, "[128, 11008]", "fix config.json");
	fx_refused(tm_il3(8, 1, 0),
	           IL_CFG_RAW(KV8 ",\"intermediate_size\":192,\"vocab_size\":1000"), WT_ENOTFOUND,
	           "model.layers.2", "missing");
	fx_refused(tm_il3(8, 1, B_QKV),
	           IL_CFG_RAW(KV8 ",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                          "\"vocab_size\":1000"),
	           WT_EUNSUPPORTED, "_proj.bias", "qkv_bias is false");
}

static void test_internlm3_errors(void **state)
{
	(void)state;
	fx_refused(tm_il3(2, 1, 0), IL_CFG(KV2 ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_il3(2, 1, B_O), IL_CFG(KV2), WT_EUNSUPPORTED, "o_proj.bias",
	           "(bias is false or absent)");
	fx_refused(tm_il3(2, 1, B_QKV), IL_CFG(KV2 ",\"attention_bias\":true"), WT_EUNSUPPORTED,
	           "_proj.bias", "qkv_bias is false");
	fx_refused(tm_il3(2, 1, 0),
	           IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000,\"qkv_bias\":true" KV2),
	           WT_ENOTFOUND, "q_proj.bias", "config.json's qkv_bias true");
	fx_refused(tm_il3(2, 1, 0),
	           IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000,\"bias\":true" KV2),
	           WT_ENOTFOUND, "o_proj.bias", "config.json's bias true");
	fx_refused(tm_il3(2, 1, 0),
	           "{\"architectures\":[\"InternLM3ForCausalLM\"],\"model_type\":\"internlm3\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"head_dim\":16,"
	           "\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000" KV2 "}",
	           WT_ESHAPE, "k_proj", "[32, 128]");
	tm_model *m = tm_il3(2, 1, 0);
	tm_remove(m, UP);
	fx_refused(m, IL_CFG(KV2), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_il3(2, 1, 0), IL_CFG(KV2), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_il3(2, 1, 0), IL_CFG(KV2), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internlm3_slices),   cmocka_unit_test(test_internlm3_switches),
	    cmocka_unit_test(test_internlm3_quant),    cmocka_unit_test(test_internlm3_coverage),
	    cmocka_unit_test(test_internlm3_defaults), cmocka_unit_test(test_internlm3_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
