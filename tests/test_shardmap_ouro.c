/*
 * test_shardmap_ouro.c — Ouro (OuroForCausalLM, remote code: ByteDance/Ouro-1.4B, Ouro-2.6B,
 * -Thinking) cut as vLLM's ouro.py loads it: Qwen2's names, q_proj / k_proj / v_proj fused by
 * heads into self_attn.qkv_proj [q_r; k_r; v_r] (no biases; kv heads replicated when fewer
 * than T), o_proj by columns, gate_proj / up_proj merged by rows into mlp.gate_up_proj,
 * down_proj by columns; the four norms of each layer and model.norm replicated;
 * model.early_exit_gate's weight [1, hid] by columns and its bias [1] whole on every rank, never
 * quantized; embed_tokens / lm_head by vocabulary rows, untied by default. Hand-computed slices
 * at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP 1..8, OuroConfig's
 * defaults and the refusals (hidden_act, total_ut_steps, is_causal, an acting sliding window,
 * biases, head_dim). Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0051ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, V 1000, I 192, 2 layers; H 8 of head_dim 16 over KV kv heads */
#define HID 128
#define I   192
#define OU_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"OuroForCausalLM\"],\"model_type\":\"ouro\"" extra "}"
#define DIMS(kv)                                                                                   \
	",\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":" #kv              \
	",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000"
#define OU_CFG(extra) OU_CFG_RAW(DIMS(2) ",\"total_ut_steps\":4" extra)
#define OU_CFG_KV(kv) OU_CFG_RAW(DIMS(kv))
#define TIED          ",\"tie_word_embeddings\":true"
#define L1            "model.layers.1."
#define EMB           "model.embed_tokens.weight"
#define GATE_W        "model.early_exit_gate.weight"
#define GATE_B        "model.early_exit_gate.bias"
#define N1(x)         L1 x ".weight"

/* Options of tm_ou: q/k/v biases, an o_proj bias, a down_proj bias, the early-exit gate's
 * bias (always wanted but in the refusal of a missing one). */
enum { OU_QB = 1, OU_OB = 2, OU_MB = 4, OU_GB = 8, OU_STD = OU_GB };

/* Ouro's tensors with H 8 heads of 16 and KV kv heads; lm_head.weight when head. */
static tm_model *tm_ou(int64_t KV, int head, int opts)
{
	int64_t d = 16;
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, head);
	tm_add2(m, GATE_W, 1, HID);
	if (opts & OU_GB)
		tm_add2(m, GATE_B, 1, 0);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"input_layernorm_2.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm_2.weight", HID, 0, 0},
	                     {"self_attn.q_proj.weight", 8 * d, HID, 0},
	                     {"self_attn.k_proj.weight", KV * d, HID, 0},
	                     {"self_attn.v_proj.weight", KV * d, HID, 0},
	                     {"self_attn.q_proj.bias", 8 * d, 0, OU_QB},
	                     {"self_attn.k_proj.bias", KV * d, 0, OU_QB},
	                     {"self_attn.v_proj.bias", KV * d, 0, OU_QB},
	                     {"self_attn.o_proj.weight", HID, 8 * d, 0},
	                     {"self_attn.o_proj.bias", HID, 0, OU_OB},
	                     {"mlp.gate_proj.weight", I, HID, 0},
	                     {"mlp.up_proj.weight", I, HID, 0},
	                     {"mlp.down_proj.weight", HID, I, 0},
	                     {"mlp.down_proj.bias", HID, 0, OU_MB}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), opts);
	return m;
}

/* The four norms of layer 1 and model.norm whole on rank r, the gate's bias too. */
static void norms_whole(const fx *f, uint32_t r)
{
	repl(f, r, N1("input_layernorm"));
	repl(f, r, N1("input_layernorm_2"));
	repl(f, r, N1("post_attention_layernorm"));
	repl(f, r, N1("post_attention_layernorm_2"));
	repl(f, r, "model.norm.weight");
	repl(f, r, GATE_B);
}

/* TP 2 and TP 4 (KV 2: split at TP 2, replicated in pairs at TP 4), by hand: rank r's
 * qkv_proj q rows then its kv head's k and v rows, o_proj by columns (fx_attn_is), gate_up
 * rows and down columns (fx_mlp_is), the norms and the gate's bias whole, the gate's weight
 * columns [r*hid/T, +hid/T), vocabulary rows with the padded tail; no bias emitted. */
static void test_ouro_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_ou(2, 1, OU_STD), OU_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "ouro");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, 16, HID);
			/* k rows by hand: kv head r (TP 2) or r / 2 (TP 4) */
			rows_at(&f, r, L1 "self_attn.qkv_proj.weight", 8 / T * 16,
			        L1 "self_attn.k_proj.weight", (T == 2 ? r : r / 2) * 16, 16);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			norms_whole(&f, r);
			shp(&f, r, GATE_W, 2, 1, HID / T, 0);
			cols_of(&f, r, T, GATE_W, GATE_W, 1, HID);
			shp(&f, r, GATE_B, 1, 1, 0, 0);
			assert_true(tm_ix(f.p, r, L1 "self_attn.qkv_proj.bias") < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* TP 8: a head per rank, kv heads 2 replicated over four ranks each, the gate's weight 16
 * columns a rank; MHA at TP 4 (KV 8: two kv heads a rank); tie_word_embeddings true drops
 * lm_head. */
static void test_ouro_heads(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ou(2, 1, OU_STD), OU_CFG(""), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		fx_attn_is(&f, r, 8, L1 "self_attn.", "o_proj.weight", 8, 2, 16, HID);
		cols_of(&f, r, 8, GATE_W, GATE_W, 1, HID);
		norms_whole(&f, r);
	}
	fx_close(&f);
	fx_open(&f, tm_ou(8, 1, OU_STD), OU_CFG_KV(8), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		fx_attn_is(&f, r, 4, L1 "self_attn.", "o_proj.weight", 8, 8, 16, HID);
	fx_close(&f);
	fx_open(&f, tm_ou(2, 1, OU_STD), OU_CFG(TIED), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const ou_keep[] = {EMB,
                                      "lm_head.weight",
                                      "model.norm.weight",
                                      GATE_W,
                                      GATE_B,
                                      N1("input_layernorm"),
                                      N1("input_layernorm_2"),
                                      N1("post_attention_layernorm"),
                                      N1("post_attention_layernorm_2")};
static const char *const ou_quant[] = {L1 "self_attn.qkv_proj.weight", L1 "self_attn.o_proj.weight",
                                       L1 "mlp.gate_up_proj.weight", L1 "mlp.down_proj.weight"};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * norms, the early-exit gate, embedding and lm_head BF16; rank 1's qkv_proj codes are q rows
 * 64..127 and kv head 1's k / v rows, its o_proj / down_proj codes its columns. fp8-channel at
 * TP 4: the same split. */
static void test_ouro_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_ou(2, 1, OU_STD), OU_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(ou_keep), FX_N(ou_quant));
	fx_qkv_int8_is(&f, 1, 2, L1 "self_attn.qkv_proj.weight", L1 "self_attn.q_proj.weight",
	               L1 "self_attn.k_proj.weight", L1 "self_attn.v_proj.weight", 8, 2, 16, HID);
	fx_cols_int8_is(&f, 1, 2, L1 "self_attn.o_proj.weight", HID, HID);
	fx_cols_int8_is(&f, 1, 2, L1 "mlp.down_proj.weight", HID, I);
	cols_of(&f, 1, 2, GATE_W, GATE_W, 1, HID); /* the gate's BF16 columns, as stored */
	fx_close(&f);
	fx_open_quant(&f, tm_ou(2, 1, OU_STD), OU_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(ou_keep), FX_N(ou_quant));
	fx_close(&f);
}

static void test_ouro_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ou(2, 1, OU_STD), OU_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ou(8, 1, OU_STD), OU_CFG_KV(8), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ou(2, 0, OU_STD), OU_CFG(TIED), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take OuroConfig's defaults: untied (lm_head needed), num_key_value_heads 16,
 * vocab_size 49152, intermediate_size 5632, 24 layers; hidden_size 2048 over 16 heads (head_dim
 * 128 where the tensors are 16 wide); total_ut_steps 4 is fine. */
static void test_ouro_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ou(2, 1, OU_STD), OU_CFG_KV(2), 2, 1, 0, true);
	repl(&f, 1, GATE_B);
	fx_close(&f);
	fx_refused(tm_ou(2, 0, OU_STD), OU_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_ou(2, 1, OU_STD),
	           OU_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ESHAPE, "k_proj.weight", "[256, 128]");
	fx_refused(tm_ou(2, 1, OU_STD),
	           OU_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":2,\"num_hidden_layers\":2,"
	                      "\"intermediate_size\":192"),
	           WT_ESHAPE, "[49152, 128]", "fix config.json");
	fx_refused(tm_ou(2, 1, OU_STD),
	           OU_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":2,\"num_hidden_layers\":2,"
	                      "\"vocab_size\":1000"),
	           WT_ESHAPE, "5632", "fix config.json");
	fx_refused(tm_ou(2, 1, OU_STD),
	           OU_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,"
	                      "\"num_key_value_heads\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
}

static void test_ouro_errors(void **state)
{
	(void)state;
	fx_refused(tm_ou(2, 1, OU_STD), OU_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_ou(2, 1, OU_STD), OU_CFG_RAW(DIMS(2) ",\"total_ut_steps\":0"), WT_ECORRUPT,
	           "total_ut_steps", ">= 1");
	fx_refused(tm_ou(2, 1, OU_STD), OU_CFG_RAW(DIMS(2) ",\"total_ut_steps\":65"),
	           WT_EUNSUPPORTED, "total_ut_steps 65", "1 to 64");
	fx_refused(tm_ou(2, 1, OU_STD), OU_CFG_RAW(DIMS(2) ",\"total_ut_steps\":true"), WT_ECORRUPT,
	           "total_ut_steps", "integer");
	fx_refused(tm_ou(2, 1, OU_STD), OU_CFG(",\"is_causal\":false"), WT_EUNSUPPORTED,
	           "is_causal is false", "encoder-only");
	fx_refused(tm_ou(2, 1, OU_STD),
	           OU_CFG(",\"use_sliding_window\":true,\"sliding_window\":64"), WT_EUNSUPPORTED,
	           "use_sliding_window is true", "sliding_window null");
	fx_refused(tm_ou(2, 1, OU_STD | OU_QB), OU_CFG(""), WT_EUNSUPPORTED, "_proj.bias",
	           "unknown tensor");
	fx_refused(tm_ou(2, 1, OU_STD | OU_OB), OU_CFG(""), WT_EUNSUPPORTED, "o_proj.bias",
	           "unknown tensor");
	fx_refused(tm_ou(2, 1, OU_STD | OU_MB), OU_CFG(""), WT_EUNSUPPORTED, "down_proj.bias",
	           "unknown tensor");
	fx_refused(tm_ou(2, 1, 0), OU_CFG(""), WT_ENOTFOUND, GATE_B, "missing");
	fx_refused(tm_ou(2, 1, OU_STD), OU_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	tm_model *m = tm_ou(2, 1, OU_STD);
	tm_remove(m, N1("input_layernorm_2"));
	fx_refused(m, OU_CFG(""), WT_ENOTFOUND, N1("input_layernorm_2"), "missing");
	m = tm_ou(2, 1, OU_STD);
	tm_remove(m, N1("post_attention_layernorm_2"));
	fx_refused(m, OU_CFG(""), WT_ENOTFOUND, N1("post_attention_layernorm_2"), "missing");
	m = tm_ou(2, 1, OU_STD);
	tm_remove(m, GATE_W);
	fx_refused(m, OU_CFG(""), WT_ENOTFOUND, GATE_W, "missing");
	fx_refused_tp(tm_ou(2, 1, OU_STD), OU_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_ou(2, 1, OU_STD), OU_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ouro_slices),   cmocka_unit_test(test_ouro_heads),
	    cmocka_unit_test(test_ouro_quant),    cmocka_unit_test(test_ouro_coverage),
	    cmocka_unit_test(test_ouro_defaults), cmocka_unit_test(test_ouro_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
