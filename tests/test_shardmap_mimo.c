/*
 * test_shardmap_mimo.c — MiMo (MiMoForCausalLM, remote code: XiaomiMiMo/MiMo-7B-Base, -RL, -SFT)
 * cut as vLLM's mimo.py loads it (MiMoForCausalLM over Qwen2's model): q_proj / k_proj / v_proj
 * and their biases fused by heads into self_attn.qkv_proj [q_r; k_r; v_r], o_proj by columns
 * (no bias), gate_proj / up_proj merged by rows into mlp.gate_up_proj, down_proj by columns; the
 * norms replicated; embed_tokens / lm_head by vocabulary rows, untied by default. The
 * multi-token-prediction layer the release stores (model.mtp_layers.0.*) is dropped and listed
 * as skipped, as vLLM's WeightsMapper drops the prefix. Hand-computed slices at TP 2 and TP 4,
 * int8-channel and fp8-channel layouts, coverage over TP 1..8, MiMoConfig's defaults and the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0050ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"

/* hid 128, H 8, head_dim 16 (hid / H), I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define QD  (8 * HD)
#define I   192
#define MI_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"MiMoForCausalLM\"],\"model_type\":\"mimo\","                        \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define MI_CFG(extra)                                                                              \
	MI_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000" extra)
/* MiMo-7B's num_nextn_predict_layers 1 and the kv heads (MHA: 8) */
#define MI_NX(n)      MI_CFG(",\"num_key_value_heads\":8,\"num_nextn_predict_layers\":" n)
#define MI_REL(extra) MI_CFG(",\"num_key_value_heads\":8,\"num_nextn_predict_layers\":1" extra)
#define KV2           ",\"num_key_value_heads\":2,\"num_nextn_predict_layers\":1"
#define TIED          ",\"tie_word_embeddings\":true"
#define L1            "model.layers.1."
#define AT            L1 "self_attn."
#define QKV           AT "qkv_proj.weight"
#define QKVB          AT "qkv_proj.bias"
#define QP            AT "q_proj.weight"
#define KP            AT "k_proj.weight"
#define VP            AT "v_proj.weight"
#define QB            AT "q_proj.bias"
#define KB            AT "k_proj.bias"
#define VB            AT "v_proj.bias"
#define OB            AT "o_proj.bias"
#define GU            L1 "mlp.gate_up_proj.weight"
#define DP            L1 "mlp.down_proj.weight"
#define UP            L1 "mlp.up_proj.weight"
#define EMB           "model.embed_tokens.weight"
#define MTP           "model.mtp_layers.0."

/* The MTP layer's 16 tensors as modeling_mimo.py's MiMoMTPLayers names them (kv kv heads). */
static void add_mtp(tm_model *m, int64_t kv)
{
	static const char *const norms[] = {"token_layernorm.weight", "hidden_layernorm.weight",
	                                    "final_layernorm.weight", "input_layernorm.weight",
	                                    "post_attention_layernorm.weight"};
	char n[128];
	for (size_t k = 0; k < 5; k++) {
		snprintf(n, sizeof(n), MTP "%s", norms[k]);
		tm_add2(m, n, HID, 0);
	}
	tm_add2(m, MTP "input_proj.weight", HID, 2 * HID);
	tm_add2(m, MTP "self_attn.q_proj.weight", QD, HID);
	tm_add2(m, MTP "self_attn.q_proj.bias", QD, 0);
	tm_add2(m, MTP "self_attn.k_proj.weight", kv * HD, HID);
	tm_add2(m, MTP "self_attn.k_proj.bias", kv * HD, 0);
	tm_add2(m, MTP "self_attn.v_proj.weight", kv * HD, HID);
	tm_add2(m, MTP "self_attn.v_proj.bias", kv * HD, 0);
	tm_add2(m, MTP "self_attn.o_proj.weight", HID, QD);
	tm_add2(m, MTP "mlp.gate_proj.weight", I, HID);
	tm_add2(m, MTP "mlp.up_proj.weight", I, HID);
	tm_add2(m, MTP "mlp.down_proj.weight", HID, I);
}

/* Qwen2's tensors with kv kv heads and the q/k/v biases (plus o_proj's with TM_B_O in bias);
 * lm_head.weight when head; the MTP layer when mtp. */
static tm_model *tm_mimo(int64_t kv, int head, int bias, int mtp)
{
	tm_model *m = tm_llama_biased(SEED, HID, QD, kv * HD, I, head, TM_B_QKV | bias);
	if (mtp)
		add_mtp(m, kv);
	return m;
}

/* TP 2 and TP 4, the release's layout (its MTP layer stored), by hand: rank r's qkv_proj and
 * qkv_proj.bias are q / k / v rows [r*H/T*d, +H/T*d) each; o_proj by columns; gate_up rows, down
 * columns, vocabulary rows with the padded tail; the 16 MTP tensors skipped; nothing else on a
 * rank. */
static void test_mimo_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_mimo(8, 1, 0, 1), MI_REL(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "mimo");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T;
			fx_attn_is(&f, r, T, AT, "o_proj.weight", 8, 8, HD, HID);
			rows_at(&f, r, QKV, hl * HD, KP, r * hl * HD, hl * HD);
			fx_qkv_is(&f, r, T, QKVB, QB, KB, VB, 8, 8, HD);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, OB) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
			/* 2 layers x 7 (norms, qkv + bias, o, gate_up, down), the norm, embed,
			 * lm_head */
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * 7 + 3);
		}
		assert_int_equal(shardmap_n_skipped(f.p), 16);
		assert_true(fx_skipped(&f, MTP "input_proj.weight") &&
		            fx_skipped(&f, MTP "self_attn.q_proj.bias") &&
		            fx_skipped(&f, MTP "token_layernorm.weight"));
		fx_close(&f);
	}
}

/* MiMo-7B's grouped kv heads (num_key_value_heads 8 of 32; here 2 of 8) replicated at TP 4, the
 * biases with them; without an MTP layer (num_nextn_predict_layers 0) nothing is skipped;
 * tie_word_embeddings true drops lm_head. */
static void test_mimo_grouped(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mimo(2, 1, 0, 1), MI_CFG(KV2), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_attn_is(&f, r, 4, AT, "o_proj.weight", 8, 2, HD, HID);
		fx_qkv_is(&f, r, 4, QKVB, QB, KB, VB, 8, 2, HD);
	}
	fx_close(&f);
	fx_open(&f, tm_mimo(8, 1, 0, 0), MI_NX("0"), 2, 1, 0, true);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	fx_close(&f);
	fx_open(&f, tm_mimo(8, 1, 0, 1), MI_REL(TIED), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	assert_int_equal(shardmap_n_skipped(f.p), 17);
	fx_close(&f);
}

static const char *const mi_keep[] = {EMB, "lm_head.weight", "model.norm.weight",
                                      L1 "input_layernorm.weight", QKVB};
static const char *const mi_quant[] = {QKV, AT "o_proj.weight", GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * embedding, lm_head, norms and the qkv bias BF16; rank 1's qkv_proj codes are q / k / v rows
 * 64..127 each. fp8-channel at TP 4: the same split. */
static void test_mimo_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_mimo(8, 1, 0, 1), MI_REL(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(mi_keep), FX_N(mi_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 8, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_mimo(8, 1, 0, 1), MI_REL(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(mi_keep), FX_N(mi_quant));
	fx_close(&f);
}

static void test_mimo_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_mimo(8, 1, 0, 1), MI_REL(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_mimo(2, 1, 0, 1), MI_CFG(KV2), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_mimo(8, 1, 0, 0), MI_NX("0"), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take MiMoConfig's (Qwen2Config's) defaults: untied (lm_head needed),
 * num_key_value_heads 32 (not the heads), vocab_size 151936, intermediate_size 22016, 32
 * layers; num_nextn_predict_layers 0 changes no cut. */
static void test_mimo_defaults(void **state)
{
	(void)state;
	fx_refused(tm_mimo(8, 0, 0, 1), MI_REL(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_mimo(8, 1, 0, 1),
	           MI_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ESHAPE, "k_proj.bias", "implies [512]");
	fx_refused(tm_mimo(8, 1, 0, 1),
	           MI_CFG_RAW(",\"num_key_value_heads\":8,\"num_hidden_layers\":2,"
	                      "\"intermediate_size\":192"),
	           WT_ESHAPE, "[151936, 128]", "fix config.json");
	fx_refused(tm_mimo(8, 1, 0, 1),
	           MI_CFG_RAW(",\"num_key_value_heads\":8,\"num_hidden_layers\":2,"
	                      "\"vocab_size\":1000"),
	           WT_ESHAPE, "[128, 22016]", "fix config.json");
	fx_refused(tm_mimo(8, 1, 0, 1),
	           MI_CFG_RAW(",\"num_key_value_heads\":8,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
	fx f;
	fx_open(&f, tm_mimo(8, 1, 0, 1),
	        MI_CFG_RAW(",\"num_key_value_heads\":8,\"num_hidden_layers\":2,"
	                   "\"intermediate_size\":192,\"vocab_size\":1000"),
	        2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") >= 0 && shardmap_n_skipped(f.p) == 16);
	fx_close(&f);
}

/* What vLLM's MiMoForCausalLM would not load: another activation, an o_proj bias (Qwen2's
 * o_proj has none), a q/k/v bias missing or all three (its qkv_proj has one), a name outside the
 * table (model.mtp.* is not the mapper's prefix, a layer past num_hidden_layers); a
 * num_nextn_predict_layers that is no count; a missing tensor; TP not dividing the heads. */
static void test_mimo_errors(void **state)
{
	(void)state;
	fx_refused(tm_mimo(8, 1, 0, 1), MI_REL(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_mimo(8, 1, TM_B_O, 1), MI_REL(""), WT_EUNSUPPORTED, "o_proj.bias",
	           "unknown tensor");
	tm_model *m = tm_mimo(8, 1, 0, 1);
	tm_remove(m, KB);
	fx_refused(m, MI_REL(""), WT_ENOTFOUND, "k_proj.bias", "missing");
	m = tm_llama_biased(SEED, HID, QD, 8 * HD, I, 1, 0); /* no q/k/v bias at all */
	fx_refused(m, MI_REL(""), WT_ENOTFOUND, "q_proj.bias", "missing");
	m = tm_mimo(8, 1, 0, 1);
	tm_add2(m, "model.mtp.0.input_proj.weight", HID, 2 * HID);
	fx_refused(m, MI_REL(""), WT_EUNSUPPORTED, "model.mtp.0.input_proj.weight", "unknown");
	m = tm_mimo(8, 1, 0, 1);
	tm_add2(m, "model.layers.2.input_layernorm.weight", HID, 0);
	fx_refused(m, MI_REL(""), WT_ESHAPE, "model.layers.2", "num_hidden_layers is 2");
	fx_refused(tm_mimo(8, 1, 0, 1), MI_NX("\"1\""), WT_ECORRUPT, "num_nextn_predict_layers",
	           "integer");
	fx_refused(tm_mimo(8, 1, 0, 1), MI_NX("-1"), WT_ECORRUPT, "num_nextn_predict_layers",
	           ">= 0");
	m = tm_mimo(8, 1, 0, 1);
	tm_remove(m, UP);
	fx_refused(m, MI_REL(""), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_mimo(8, 1, 0, 1), MI_REL(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_mimo(8, 1, 0, 1), MI_REL(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mimo_slices),   cmocka_unit_test(test_mimo_grouped),
	    cmocka_unit_test(test_mimo_quant),    cmocka_unit_test(test_mimo_coverage),
	    cmocka_unit_test(test_mimo_defaults), cmocka_unit_test(test_mimo_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
