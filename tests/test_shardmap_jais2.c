/*
 * test_shardmap_jais2.c — Jais 2 (Jais2ForCausalLM: inceptionai Jais-2-8B / -70B, base and
 * Chat) cut as vLLM's jais2.py loads it: Llama's names, q_proj / k_proj / v_proj stacked by heads
 * into self_attn.qkv_proj [q_r; k_r; v_r] with their biases (kv heads replicated when fewer than
 * T), o_proj by columns with its bias replicated (`attention_bias or bias`, attention_bias true
 * by default); up_proj by rows under its own name with its bias, down_proj by columns with its
 * bias replicated (mlp_bias, true by default), no gate; input_layernorm,
 * post_attention_layernorm and model.norm nn.LayerNorm, weight and bias replicated and never
 * quantized; embed_tokens / lm_head by padded vocabulary rows, untied by default. Hand-computed
 * slices at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP 1..8,
 * Jais2Config's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0049ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, d 16, I 256, V 1000 (1024 padded), 2 layers; H 8 over KV 2 (or 8: coverage) */
#define HID           128
#define HD            16
#define I             256
#define J2_RAW(extra) "{\"architectures\":[\"Jais2ForCausalLM\"],\"model_type\":\"jais2\"" extra "}"
#define DIMS(kv)                                                                                   \
	",\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":" #kv              \
	",\"num_hidden_layers\":2,\"intermediate_size\":256,\"vocab_size\":1000"
#define J2_CFG(extra) J2_RAW(DIMS(2) extra)
#define NO_BIAS       ",\"attention_bias\":false,\"mlp_bias\":false"
#define L1            "model.layers.1."
#define A1            L1 "self_attn."
#define M1            L1 "mlp."
#define QKV           A1 "qkv_proj.weight"
#define QKVB          A1 "qkv_proj.bias"
#define OP            A1 "o_proj.weight"
#define OB            A1 "o_proj.bias"
#define UP            M1 "up_proj.weight"
#define UB            M1 "up_proj.bias"
#define DP            M1 "down_proj.weight"
#define DB            M1 "down_proj.bias"
#define EMB           "model.embed_tokens.weight"
#define IN_W          L1 "input_layernorm.weight"
#define IN_B          L1 "input_layernorm.bias"
#define PA_W          L1 "post_attention_layernorm.weight"
#define PA_B          L1 "post_attention_layernorm.bias"

/* tm_j2's options: the attention's biases (o_proj's too), the MLP's; the LayerNorms' biases are
 * always there but with J_NO_NB (a refusal). */
enum { J_AB = 1, J_MB = 2, J_NB = 4, J_ALL = J_AB | J_MB | J_NB, J_PLAIN = J_NB };

/* Jais 2's tensors over KV kv heads; lm_head.weight when head. */
static tm_model *tm_j2(int64_t KV, int head, int opts)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, head);
	if (opts & J_NB)
		tm_add2(m, "model.norm.bias", HID, 0);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"input_layernorm.bias", HID, 0, J_NB},
	                     {"self_attn.q_proj.weight", 8 * HD, HID, 0},
	                     {"self_attn.k_proj.weight", KV * HD, HID, 0},
	                     {"self_attn.v_proj.weight", KV * HD, HID, 0},
	                     {"self_attn.q_proj.bias", 8 * HD, 0, J_AB},
	                     {"self_attn.k_proj.bias", KV * HD, 0, J_AB},
	                     {"self_attn.v_proj.bias", KV * HD, 0, J_AB},
	                     {"self_attn.o_proj.weight", HID, 8 * HD, 0},
	                     {"self_attn.o_proj.bias", HID, 0, J_AB},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.bias", HID, 0, J_NB},
	                     {"mlp.up_proj.weight", I, HID, 0},
	                     {"mlp.up_proj.bias", I, 0, J_MB},
	                     {"mlp.down_proj.weight", HID, I, 0},
	                     {"mlp.down_proj.bias", HID, 0, J_MB}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), opts);
	return m;
}

/* Rank r of T's layer 1 without its biases: fused q/k/v by heads, o_proj / down_proj by
 * columns, up_proj rows [r*I/T, +I/T), the LayerNorms whole; no gate. */
static void j2_layer_is(const fx *f, uint32_t r, uint32_t T, int64_t KV)
{
	fx_attn_is(f, r, T, A1, "o_proj.weight", 8, KV, HD, HID);
	shp(f, r, UP, 2, I / T, HID, 0);
	rows_at(f, r, UP, 0, UP, r * (I / T), I / T);
	cols_of(f, r, T, DP, DP, HID, I);
	repl(f, r, IN_W);
	repl(f, r, IN_B);
	repl(f, r, PA_W);
	repl(f, r, PA_B);
	repl(f, r, "model.norm.weight");
	repl(f, r, "model.norm.bias");
	assert_true(tm_ix(f->p, r, M1 "gate_up_proj.weight") < 0);
	fx_vocab_is(f, r, T, EMB, 1000, 1024, HID);
	fx_vocab_is(f, r, T, "lm_head.weight", 1000, 1024, HID);
}

/* TP 2 under Jais2Config's bias defaults (attention_bias and mlp_bias true): q/k/v biases by
 * the same heads as their weights, up_proj.bias by its rows, o_proj / down_proj biases whole. */
static void test_jais2_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_j2(2, 1, J_ALL), J2_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "jais2");
	for (uint32_t r = 0; r < 2; r++) {
		j2_layer_is(&f, r, 2, 2);
		shp(&f, r, QKVB, 1, (4 + 2) * HD, 0, 0);
		fx_qkv_is(&f, r, 2, QKVB, A1 "q_proj.bias", A1 "k_proj.bias", A1 "v_proj.bias", 8,
		          2, HD);
		shp(&f, r, UB, 1, I / 2, 0, 0);
		rows_at(&f, r, UB, 0, UB, r * (I / 2), I / 2);
		repl(&f, r, OB);
		repl(&f, r, DB);
	}
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r; no linear bias (both switches false); `bias` true
 * stands for attention_bias (vLLM's `attention_bias or bias`); tied on request. */
static void test_jais2_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_j2(2, 1, J_PLAIN), J2_CFG(NO_BIAS), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		j2_layer_is(&f, r, 4, 2);
		assert_true(tm_ix(f.p, r, QKVB) < 0 && tm_ix(f.p, r, OB) < 0);
		assert_true(tm_ix(f.p, r, UB) < 0 && tm_ix(f.p, r, DB) < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_j2(2, 1, J_PLAIN | J_AB),
	        J2_CFG(",\"attention_bias\":false,\"bias\":true,\"mlp_bias\":false"), 4, 1, 0,
	        true);
	for (uint32_t r = 0; r < 4; r++) {
		fx_qkv_is(&f, r, 4, QKVB, A1 "q_proj.bias", A1 "k_proj.bias", A1 "v_proj.bias", 8,
		          2, HD);
		repl(&f, r, OB);
	}
	fx_close(&f);
	fx_open(&f, tm_j2(2, 0, J_ALL), J2_CFG(",\"tie_word_embeddings\":true"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	fx_vocab_is(&f, 1, 2, EMB, 1000, 1024, HID);
	fx_close(&f);
}

static const char *const j2_keep[] = {EMB,
                                      "lm_head.weight",
                                      "model.norm.weight",
                                      "model.norm.bias",
                                      IN_W,
                                      IN_B,
                                      PA_W,
                                      PA_B,
                                      QKVB,
                                      OB,
                                      UB,
                                      DB};
static const char *const j2_quant[] = {QKV, OP, UP, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / up_proj / down_proj quantized per row, the
 * LayerNorms, biases, embedding and lm_head BF16; rank 1's qkv_proj codes are q heads 4..7 and
 * kv head 1's rows, its down_proj codes columns 128..255. fp8-channel at TP 4: the same split. */
static void test_jais2_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_j2(2, 1, J_ALL), J2_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(j2_keep), FX_N(j2_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, A1 "q_proj.weight", A1 "k_proj.weight", A1 "v_proj.weight", 8,
	               2, HD, HID);
	fx_cols_int8_is(&f, 1, 2, DP, HID, I);
	fx_rows_int8_is(&f, 1, UP, 0, UP, I / 2, I / 2, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_j2(2, 1, J_ALL), J2_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(j2_keep), FX_N(j2_quant));
	fx_close(&f);
}

static void test_jais2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_j2(2, 1, J_ALL), J2_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_j2(8, 1, J_PLAIN), J2_RAW(DIMS(8) NO_BIAS), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take Jais2Config's defaults: attention_bias and mlp_bias true (their biases
 * required), untied (lm_head required), num_key_value_heads the heads, vocab_size 150272,
 * intermediate_size 26624. */
static void test_jais2_defaults(void **state)
{
	(void)state;
	fx_refused(tm_j2(2, 1, J_PLAIN | J_MB), J2_CFG(""), WT_ENOTFOUND, "q_proj.bias",
	           "attention_bias");
	fx_refused(tm_j2(2, 1, J_PLAIN | J_AB), J2_CFG(""), WT_ENOTFOUND, "up_proj.bias",
	           "mlp_bias");
	fx_refused(tm_j2(2, 0, J_ALL), J2_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_j2(2, 1, J_ALL),
	           J2_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,\"num_hidden_layers\":2,"
	                  "\"intermediate_size\":256,\"vocab_size\":1000"),
	           WT_ESHAPE, "k_proj.bias", "implies [128]");
	fx_refused(
	    tm_j2(2, 1, J_ALL),
	    J2_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"num_hidden_layers\":2,\"intermediate_size\":256"),
	    WT_ESHAPE, "[150272, 128]", "fix config.json");
	fx_refused(
	    tm_j2(2, 1, J_ALL),
	    J2_RAW(",\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"num_hidden_layers\":2,\"vocab_size\":1000"),
	    WT_ESHAPE, "down_proj", "[128, 26624]");
}

static void test_jais2_errors(void **state)
{
	(void)state;
	/* hidden_act: vLLM's Jais2MLP runs relu2 whatever it says */
	fx_refused(tm_j2(2, 1, J_ALL), J2_CFG(",\"hidden_act\":\"silu\""), WT_EUNSUPPORTED,
	           "hidden_act", "relu2");
	/* interleaved_sliding_window: an integer > 0 or a non-empty list of them / null */
	static const char *const bad_windows[] = {
	    J2_CFG(",\"interleaved_sliding_window\":\"4096\""),
	    J2_CFG(",\"interleaved_sliding_window\":null"),
	    J2_CFG(",\"interleaved_sliding_window\":[]"),
	    J2_CFG(",\"interleaved_sliding_window\":[4096,-1]"),
	    J2_CFG(",\"interleaved_sliding_window\":true"),
	    J2_CFG(",\"interleaved_sliding_window\":{\"w\":4}"),
	};
	for (size_t k = 0; k < sizeof(bad_windows) / sizeof(bad_windows[0]); k++)
		fx_refused(tm_j2(2, 1, J_ALL), bad_windows[k], WT_EUNSUPPORTED,
		           "interleaved_sliding_window", "vLLM's jais2.py");
	fx f;
	fx_open(&f, tm_j2(2, 1, J_ALL), J2_CFG(",\"interleaved_sliding_window\":[4096,null]"), 2, 1,
	        0, false);
	fx_close(&f);
	fx_open(&f, tm_j2(2, 1, J_ALL), J2_CFG(",\"interleaved_sliding_window\":4096"), 2, 1, 0,
	        false);
	fx_close(&f);
	/* the switches: a bias without its switch is unknown, the switch not a boolean corrupt */
	fx_refused(tm_j2(2, 1, J_ALL), J2_CFG(",\"attention_bias\":false"), WT_EUNSUPPORTED,
	           "proj.bias", "attention_bias");
	fx_refused(tm_j2(2, 1, J_ALL), J2_CFG(",\"mlp_bias\":false"), WT_EUNSUPPORTED, "proj.bias",
	           "mlp_bias is false");
	fx_refused(tm_j2(2, 1, J_ALL), J2_CFG(",\"bias\":1"), WT_ECORRUPT, "bias", "boolean");
	/* a gate is no Jais 2 tensor; the LayerNorms have their biases */
	tm_model *m = tm_j2(2, 1, J_ALL);
	tm_lin_l(m, 1, "mlp.gate_proj.weight", I, HID, 0);
	fx_refused(m, J2_CFG(""), WT_EUNSUPPORTED, M1 "gate_proj.weight", "jais2");
	m = tm_j2(2, 1, J_ALL);
	tm_remove(m, PA_B);
	fx_refused(m, J2_CFG(""), WT_ENOTFOUND, PA_B, "missing");
	m = tm_j2(2, 1, J_ALL);
	tm_remove(m, "model.norm.bias");
	fx_refused(m, J2_CFG(""), WT_ENOTFOUND, "model.norm.bias", "missing");
	/* TP 3 divides no head count; TP 16 is more than the 8 heads */
	fx_refused_tp(tm_j2(2, 1, J_ALL), J2_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
	fx_refused_tp(tm_j2(2, 1, J_ALL), J2_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jais2_tp2),      cmocka_unit_test(test_jais2_tp4),
	    cmocka_unit_test(test_jais2_quant),    cmocka_unit_test(test_jais2_coverage),
	    cmocka_unit_test(test_jais2_defaults), cmocka_unit_test(test_jais2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
