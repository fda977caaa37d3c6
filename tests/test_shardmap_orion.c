/*
 * test_shardmap_orion.c — Orion (OrionForCausalLM, remote code: OrionStarAI/Orion-14B-Base,
 * -Chat, -LongChat) cut as vLLM's orion.py loads it: Llama's names, q_proj / k_proj / v_proj
 * fused by heads into self_attn.qkv_proj [q_r; k_r; v_r] (kv heads replicated when fewer than
 * T), o_proj by columns, gate_proj / up_proj merged by rows into mlp.gate_up_proj, down_proj by
 * columns, no linear biases; input_layernorm, post_attention_layernorm and model.norm are
 * nn.LayerNorm, weight and bias replicated and never quantized; embed_tokens / lm_head by
 * vocabulary rows, untied by default. Hand-computed slices at TP 2 and TP 4, int8-channel and
 * fp8-channel layouts, coverage over TP 1..8, OrionConfig's defaults and the refusals. Seeds
 * fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0046ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"

/* hid 128, V 1000, I 192, 2 layers; H 4 of head_dim 32 (KV 2) or H 8 of 16 (coverage) */
#define HID 128
#define I   192
#define OR_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"OrionForCausalLM\"],\"model_type\":\"orion\"" extra "}"
#define DIMS(h, kv)                                                                                \
	",\"hidden_size\":128,\"num_attention_heads\":" #h ",\"num_key_value_heads\":" #kv         \
	",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000"
#define OR_CFG(extra)  OR_CFG_RAW(DIMS(4, 2) ",\"attention_bias\":false" extra)
#define OR_CFG8(extra) OR_CFG_RAW(DIMS(8, 2) extra)
#define TIED           ",\"tie_word_embeddings\":true"
#define L1             "model.layers.1."
#define QKV            L1 "self_attn.qkv_proj.weight"
#define QP             L1 "self_attn.q_proj.weight"
#define KP             L1 "self_attn.k_proj.weight"
#define VP             L1 "self_attn.v_proj.weight"
#define OP             L1 "self_attn.o_proj.weight"
#define GU             L1 "mlp.gate_up_proj.weight"
#define GP             L1 "mlp.gate_proj.weight"
#define UP             L1 "mlp.up_proj.weight"
#define DP             L1 "mlp.down_proj.weight"
#define EMB            "model.embed_tokens.weight"
#define IN_W           L1 "input_layernorm.weight"
#define IN_B           L1 "input_layernorm.bias"
#define PA_W           L1 "post_attention_layernorm.weight"
#define PA_B           L1 "post_attention_layernorm.bias"

/* Options of tm_or beyond test_shardmap_biased.h's TM_B_QKV / TM_B_O: the LayerNorm biases
 * (always wanted but in the refusal of a missing one), an MLP bias. */
enum { OR_NB = 4, OR_MB = 8, OR_STD = OR_NB };

/* Orion's tensors with H heads of hid / H and KV kv heads; lm_head.weight when head. */
static tm_model *tm_or(int64_t H, int64_t KV, int head, int opts)
{
	int64_t d = HID / H;
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, head);
	if (opts & OR_NB)
		tm_add2(m, "model.norm.bias", HID, 0);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"input_layernorm.bias", HID, 0, OR_NB},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.bias", HID, 0, OR_NB},
	                     {"self_attn.q_proj.weight", H * d, HID, 0},
	                     {"self_attn.k_proj.weight", KV * d, HID, 0},
	                     {"self_attn.v_proj.weight", KV * d, HID, 0},
	                     {"self_attn.q_proj.bias", H * d, 0, TM_B_QKV},
	                     {"self_attn.k_proj.bias", KV * d, 0, TM_B_QKV},
	                     {"self_attn.v_proj.bias", KV * d, 0, TM_B_QKV},
	                     {"self_attn.o_proj.weight", HID, H * d, 0},
	                     {"self_attn.o_proj.bias", HID, 0, TM_B_O},
	                     {"mlp.gate_proj.weight", I, HID, 0},
	                     {"mlp.up_proj.weight", I, HID, 0},
	                     {"mlp.down_proj.weight", HID, I, 0},
	                     {"mlp.down_proj.bias", HID, 0, OR_MB}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), opts);
	return m;
}

/* The three LayerNorms' weight and bias whole on rank r. */
static void norms_whole(const fx *f, uint32_t r)
{
	repl(f, r, IN_W);
	repl(f, r, IN_B);
	repl(f, r, PA_W);
	repl(f, r, PA_B);
	repl(f, r, "model.norm.weight");
	repl(f, r, "model.norm.bias");
}

/* TP 2 and TP 4 (H 4, KV 2: split at TP 2, replicated in pairs at TP 4), by hand: rank r's
 * qkv_proj q rows [r*H/T*d, +H/T*d) then its kv head's k and v rows; o_proj by columns,
 * gate_up rows, down columns, the LayerNorms whole, vocabulary rows with the padded tail; no
 * bias but the norms'. */
static void test_orion_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_or(4, 2, 1, OR_STD), OR_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "orion");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 4 / T; /* one kv head a rank either way */
			shp(&f, r, QKV, 2, (hl + 2) * 32, HID, 0);
			fx_qkv_is(&f, r, T, QKV, QP, KP, VP, 4, 2, 32);
			/* k rows by hand: kv head r (TP 2) or r / 2 (TP 4) */
			rows_at(&f, r, QKV, hl * 32, KP, (T == 2 ? r : r / 2) * 32, 32);
			cols_of(&f, r, T, OP, OP, HID, HID);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, GP, UP, I);
			cols_of(&f, r, T, DP, DP, HID, I);
			norms_whole(&f, r);
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, GP) < 0);
			assert_true(tm_ix(f.p, r, L1 "self_attn.qkv_proj.bias") < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* TP 8 with H 8 (a head per rank, kv heads 2 replicated over four ranks each), MHA at TP 4
 * (KV 4: one kv head a rank); tie_word_embeddings true drops lm_head. */
static void test_orion_heads(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_or(8, 2, 1, OR_STD), OR_CFG8(""), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		shp(&f, r, QKV, 2, 3 * 16, HID, 0);
		fx_qkv_is(&f, r, 8, QKV, QP, KP, VP, 8, 2, 16);
		norms_whole(&f, r);
	}
	fx_close(&f);
	fx_open(&f, tm_or(4, 4, 1, OR_STD), OR_CFG_RAW(DIMS(4, 4)), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		fx_qkv_is(&f, r, 4, QKV, QP, KP, VP, 4, 4, 32);
	fx_close(&f);
	fx_open(&f, tm_or(4, 2, 1, OR_STD), OR_CFG(TIED), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const or_keep[] = {
    EMB, "lm_head.weight", "model.norm.weight", "model.norm.bias", IN_W, IN_B, PA_W, PA_B};
static const char *const or_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * LayerNorms' weights and biases, embedding and lm_head BF16; rank 1's qkv_proj codes are q
 * rows 64..127 and kv head 1's k / v rows. fp8-channel at TP 4: the same split. */
static void test_orion_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_or(4, 2, 1, OR_STD), OR_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(or_keep), FX_N(or_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 4, 2, 32, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_or(4, 2, 1, OR_STD), OR_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(or_keep), FX_N(or_quant));
	fx_close(&f);
}

static void test_orion_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_or(8, 2, 1, OR_STD), OR_CFG8(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_or(8, 8, 1, OR_STD), OR_CFG_RAW(DIMS(8, 8)), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take OrionConfig's defaults: untied (lm_head needed), attention_bias false,
 * num_key_value_heads 40 (not the heads), vocab_size 84608, intermediate_size 15360, 40
 * layers; hidden_size 4096 and 40 heads have no head size. */
static void test_orion_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_or(4, 2, 1, OR_STD), OR_CFG_RAW(DIMS(4, 2)), 2, 1, 0, true);
	repl(&f, 1, PA_B);
	fx_close(&f);
	fx_refused(tm_or(4, 2, 0, OR_STD), OR_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_or(4, 4, 1, OR_STD),
	           OR_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":4,"
	                      "\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ESHAPE, "k_proj.weight", "[1280, 128]");
	fx_refused(tm_or(4, 2, 1, OR_STD),
	           OR_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":4,"
	                      "\"num_key_value_heads\":2,\"num_hidden_layers\":2,"
	                      "\"intermediate_size\":192"),
	           WT_ESHAPE, "[84608, 128]", "fix config.json");
	fx_refused(tm_or(4, 2, 1, OR_STD),
	           OR_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":4,"
	                      "\"num_key_value_heads\":2,\"num_hidden_layers\":2,"
	                      "\"vocab_size\":1000"),
	           WT_ESHAPE, "15360", "fix config.json");
	fx_refused(tm_or(4, 2, 1, OR_STD),
	           OR_CFG_RAW(",\"hidden_size\":128,\"num_attention_heads\":4,"
	                      "\"num_key_value_heads\":2,\"intermediate_size\":192,"
	                      "\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
	fx_refused(tm_or(4, 2, 1, OR_STD),
	           OR_CFG_RAW(",\"num_key_value_heads\":2,\"num_hidden_layers\":2,"
	                      "\"intermediate_size\":192,\"vocab_size\":1000"),
	           WT_ECORRUPT, "hidden_size (4096) divisible by num_attention_heads (40)",
	           "OrionForCausalLM");
}

static void test_orion_errors(void **state)
{
	(void)state;
	fx_refused(tm_or(4, 2, 1, OR_STD), OR_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_or(4, 2, 1, OR_STD | TM_B_QKV | TM_B_O),
	           OR_CFG_RAW(DIMS(4, 2) ",\"attention_bias\":true"), WT_EUNSUPPORTED,
	           "attention_bias is true", "without biases");
	fx_refused(tm_or(4, 2, 1, OR_STD | OR_MB), OR_CFG(",\"mlp_bias\":true"), WT_EUNSUPPORTED,
	           "mlp_bias is true", "remove the key");
	fx_refused(tm_or(4, 2, 1, OR_STD),
	           OR_CFG(",\"rope_scaling\":{\"type\":\"yarn\",\"factor\":2.0}"), WT_EUNSUPPORTED,
	           "rope_scaling", "linear");
	fx_refused(tm_or(4, 2, 1, OR_STD),
	           OR_CFG(",\"rope_scaling\":{\"type\":\"linear\",\"factor\":1.0}"),
	           WT_EUNSUPPORTED, "rope_scaling", "factor");
	fx_refused(tm_or(4, 2, 1, OR_STD),
	           OR_CFG(",\"rope_scaling\":{\"type\":\"dynamic\",\"factor\":2.0,"
	                  "\"original_max_position_embeddings\":4096}"),
	           WT_EUNSUPPORTED, "rope_scaling", "OrionConfig");
	fx_refused(tm_or(4, 2, 1, OR_STD), OR_CFG(",\"rope_scaling\":\"linear\""), WT_EUNSUPPORTED,
	           "rope_scaling", "null");
	fx_refused(tm_or(4, 2, 1, OR_STD | TM_B_QKV), OR_CFG(""), WT_EUNSUPPORTED, "_proj.bias",
	           "(attention_bias is false)");
	fx_refused(tm_or(4, 2, 1, OR_STD | TM_B_O), OR_CFG(""), WT_EUNSUPPORTED, "o_proj.bias", "");
	fx_refused(tm_or(4, 2, 1, OR_STD | OR_MB), OR_CFG(""), WT_EUNSUPPORTED, "down_proj.bias",
	           "");
	fx_refused(tm_or(4, 2, 1, 0), OR_CFG(""), WT_ENOTFOUND, "model.norm.bias", "missing");
	fx_refused(tm_or(4, 2, 1, OR_STD), OR_CFG(",\"head_dim\":64"), WT_EUNSUPPORTED,
	           "head_dim 64", "remove it");
	tm_model *m = tm_or(4, 2, 1, OR_STD);
	tm_remove(m, IN_B);
	fx_refused(m, OR_CFG(""), WT_ENOTFOUND, IN_B, "missing");
	m = tm_or(4, 2, 1, OR_STD);
	tm_remove(m, UP);
	fx_refused(m, OR_CFG(""), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_or(4, 2, 1, OR_STD), OR_CFG(""), 8, WT_ELAYOUT, "tp_size 8", "4");
	fx_refused_tp(tm_or(4, 2, 1, OR_STD), OR_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_orion_slices),   cmocka_unit_test(test_orion_heads),
	    cmocka_unit_test(test_orion_quant),    cmocka_unit_test(test_orion_coverage),
	    cmocka_unit_test(test_orion_defaults), cmocka_unit_test(test_orion_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
