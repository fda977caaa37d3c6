/*
 * test_shardmap_internlm.c — InternLM, first generation (InternLMForCausalLM, remote code:
 * internlm/internlm-7b, -20b and their chat models) cut as vLLM's llama.py loads it: Llama's
 * names, q_proj / k_proj / v_proj fused by heads into self_attn.qkv_proj [q_r; k_r; v_r] with
 * their biases alike, o_proj by columns and its bias replicated (both switched by `attention_bias
 * or bias`, InternLMConfig's bias defaulting to true; a qkv_bias given decides q/k/v's);
 * gate_proj / up_proj merged by rows into mlp.gate_up_proj, down_proj by columns; the norms
 * replicated; embed_tokens / lm_head by vocabulary rows, untied by default. Hand-computed slices
 * at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP 1..8,
 * InternLMConfig's defaults and the refusals (rotary included). Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0045ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"

/* hid 128, H 8, head_dim 16 (hid / H), I 192, V 1000, 2 layers; MHA unless KV is given */
#define HID 128
#define HD  16
#define QD  (8 * HD)
#define I   192
#define IL_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"InternLMForCausalLM\"],\"model_type\":\"internlm\","                \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define IL_CFG(extra)                                                                              \
	IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000,"       \
	           "\"bias\":true,\"rotary\":{\"base\":10000,\"type\":\"dynamic\"}" extra)
#define NOROT(extra)                                                                               \
	IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000,"       \
	           "\"bias\":true" extra)
#define NOBIAS(extra)                                                                              \
	IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000,"       \
	           "\"bias\":false" extra)
#define KV2  ",\"num_key_value_heads\":2"
#define TIED ",\"tie_word_embeddings\":true"
#define L1   "model.layers.1."
#define QKV  L1 "self_attn.qkv_proj.weight"
#define QKVB L1 "self_attn.qkv_proj.bias"
#define QP   L1 "self_attn.q_proj.weight"
#define KP   L1 "self_attn.k_proj.weight"
#define VP   L1 "self_attn.v_proj.weight"
#define QB   L1 "self_attn.q_proj.bias"
#define KB   L1 "self_attn.k_proj.bias"
#define VB   L1 "self_attn.v_proj.bias"
#define OP   L1 "self_attn.o_proj.weight"
#define OB   L1 "self_attn.o_proj.bias"
#define GU   L1 "mlp.gate_up_proj.weight"
#define GP   L1 "mlp.gate_proj.weight"
#define UP   L1 "mlp.up_proj.weight"
#define DP   L1 "mlp.down_proj.weight"
#define EMB  "model.embed_tokens.weight"

enum { B_QKV = TM_B_QKV, B_O = TM_B_O, B_ALL = TM_B_QKV | TM_B_O };

/* The model with kv kv heads; lm_head.weight when head; the biases of `bias`. */
static tm_model *tm_il(int64_t kv, int head, int bias)
{
	return tm_llama_biased(SEED, HID, QD, kv * HD, I, head, bias);
}

/* TP 2 and TP 4, the release's layout (MHA, bias true), by hand: rank r's qkv_proj and its
 * bias are q / k / v rows [r*H/T*d, +H/T*d) each; o_proj by columns, its bias whole on every
 * rank; gate_up rows, down columns, vocabulary rows with the padded tail. */
static void test_internlm_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_il(8, 1, B_ALL), IL_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "internlm");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T;
			shp(&f, r, QKV, 2, 3 * hl * HD, HID, 0);
			fx_qkv_is(&f, r, T, QKV, QP, KP, VP, 8, 8, HD);
			rows_at(&f, r, QKV, hl * HD, KP, r * hl * HD, hl * HD);
			shp(&f, r, QKVB, 1, 3 * hl * HD, 0, 0);
			fx_qkv_is(&f, r, T, QKVB, QB, KB, VB, 8, 8, HD);
			cols_of(&f, r, T, OP, OP, HID, QD);
			repl(&f, r, OB);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, GP, UP, I);
			cols_of(&f, r, T, DP, DP, HID, I);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, GP) < 0);
			assert_true(tm_ix(f.p, r, QB) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* bias false: no bias emitted (TP 8, a head per rank); attention_bias true with bias false
 * switches all four biases on (vLLM's `attention_bias or bias`); qkv_bias false with bias true
 * keeps o_proj's alone, qkv_bias true with bias false q/k/v's alone; grouped kv heads (a
 * num_key_value_heads given) replicated at TP 4; tie_word_embeddings true drops lm_head. */
static void test_internlm_switches(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_il(8, 1, 0), NOBIAS(""), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, QKV, 2, 3 * HD, HID, 0);
		rows_at(&f, r, QKV, 2 * HD, VP, r * HD, HD);
		assert_true(tm_ix(f.p, r, QKVB) < 0 && tm_ix(f.p, r, OB) < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_il(8, 1, B_ALL), NOBIAS(",\"attention_bias\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, OB);
		fx_qkv_is(&f, r, 2, QKVB, QB, KB, VB, 8, 8, HD);
	}
	fx_close(&f);
	fx_open(&f, tm_il(8, 1, B_O), IL_CFG(",\"qkv_bias\":false"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 1, QKVB) < 0);
	repl(&f, 1, OB);
	fx_close(&f);
	fx_open(&f, tm_il(8, 1, B_QKV), NOBIAS(",\"qkv_bias\":true"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 1, OB) < 0);
	fx_qkv_is(&f, 1, 2, QKVB, QB, KB, VB, 8, 8, HD);
	fx_close(&f);
	fx_open(&f, tm_il(2, 1, B_ALL), IL_CFG(KV2), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_qkv_is(&f, r, 4, QKV, QP, KP, VP, 8, 2, HD);
		fx_qkv_is(&f, r, 4, QKVB, QB, KB, VB, 8, 2, HD);
	}
	fx_close(&f);
	fx_open(&f, tm_il(8, 1, B_ALL), IL_CFG(TIED), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const il_keep[] = {EMB, "lm_head.weight",           "model.norm.weight", QKVB,
                                      OB,  L1 "input_layernorm.weight"};
static const char *const il_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * biases, embedding, lm_head and norms BF16; rank 1's qkv_proj codes are q / k / v rows 64..127
 * each. fp8-channel at TP 4: the same split. */
static void test_internlm_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_il(8, 1, B_ALL), IL_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(il_keep), FX_N(il_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 8, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_il(8, 1, B_ALL), IL_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(il_keep), FX_N(il_quant));
	fx_close(&f);
}

static void test_internlm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_il(8, 1, B_ALL), IL_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_il(8, 1, 0), NOBIAS(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take InternLMConfig's defaults: bias true (every bias required), untied
 * (lm_head needed), num_key_value_heads the heads, vocab_size 103168, intermediate_size 11008,
 * 32 layers; no rotary / rope_theta is rope_theta 10000. */
static void test_internlm_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(
	    &f, tm_il(8, 1, B_ALL),
	    IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000"), 2,
	    1, 0, true);
	repl(&f, 0, OB);
	fx_qkv_is(&f, 0, 2, QKVB, QB, KB, VB, 8, 8, HD);
	fx_close(&f);
	fx_refused(tm_il(8, 1, B_QKV),
	           IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ENOTFOUND, "o_proj.bias", "config.json's bias true");
	fx_refused(tm_il(8, 1, B_O),
	           IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ENOTFOUND, "q_proj.bias", "config.json's bias true");
	fx_refused(tm_il(8, 0, B_ALL), IL_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_il(2, 1, B_ALL), IL_CFG(""), WT_ESHAPE, "k_proj.bias", "implies [128]");
	fx_refused(tm_il(8, 1, B_ALL),
	           IL_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192"), WT_ESHAPE,
	           "[103168, 128]", "fix config.json");
	fx_refused(tm_il(8, 1, B_ALL), IL_CFG_RAW(",\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ESHAPE, "[128, 11008]", "fix config.json");
	fx_refused(tm_il(8, 1, B_ALL), IL_CFG_RAW(",\"intermediate_size\":192,\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
	/* rope_theta given alike, a rotary base other than 10000 is the same model */
	fx_open(&f, tm_il(8, 1, B_ALL),
	        NOROT(",\"rope_theta\":20000,\"rotary\":{\"base\":20000,\"type\":\"origin\"}"), 2,
	        1, 0, true);
	repl(&f, 1, OB);
	fx_close(&f);
}

static void test_internlm_errors(void **state)
{
	(void)state;
	fx_refused(tm_il(8, 1, B_ALL), IL_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_il(8, 1, B_ALL), NOROT(",\"rotary\":{\"base\":10000,\"type\":\"linear\"}"),
	           WT_EUNSUPPORTED, "rotary.type", "dynamic");
	fx_refused(tm_il(8, 1, B_ALL), NOROT(",\"rotary\":{\"base\":20000,\"type\":\"dynamic\"}"),
	           WT_EUNSUPPORTED, "rotary.base 20000", "rope_theta 10000");
	fx_refused(tm_il(8, 1, B_ALL), IL_CFG(",\"rope_theta\":20000"), WT_EUNSUPPORTED,
	           "rotary.base 10000", "rope_theta 20000");
	fx_refused(tm_il(8, 1, B_ALL), NOROT(",\"rotary\":\"dynamic\""), WT_ECORRUPT, "rotary",
	           "object");
	fx_refused(tm_il(8, 1, B_O), NOBIAS(""), WT_EUNSUPPORTED, "o_proj.bias",
	           "(bias is false or absent)");
	fx_refused(tm_il(8, 1, B_QKV), NOBIAS(""), WT_EUNSUPPORTED, "_proj.bias", "bias is false");
	fx_refused(tm_il(8, 1, B_O), IL_CFG(""), WT_ENOTFOUND, "q_proj.bias",
	           "config.json's bias true");
	fx_refused(tm_il(8, 1, B_QKV), IL_CFG(""), WT_ENOTFOUND, "o_proj.bias",
	           "config.json's bias true");
	tm_model *m = tm_il(8, 1, B_ALL);
	tm_remove(m, UP);
	fx_refused(m, IL_CFG(""), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_il(8, 1, B_ALL), IL_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_il(8, 1, B_ALL), IL_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_internlm_slices),   cmocka_unit_test(test_internlm_switches),
	    cmocka_unit_test(test_internlm_quant),    cmocka_unit_test(test_internlm_coverage),
	    cmocka_unit_test(test_internlm_defaults), cmocka_unit_test(test_internlm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
