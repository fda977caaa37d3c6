/*
 * test_shardmap_telechat2.c — TeleChat2 (TeleChat2ForCausalLM, remote code: Tele-AI/TeleChat2-3B
 * / 7B / 35B / 115B) cut as vLLM's telechat2.py loads it: transformer.h.* served under Llama's
 * runtime names; self_attention.query with key_value ([KV, 2, d] rows, each kv head's k then
 * its v) de-interleaved and fused by heads into self_attn.qkv_proj [q_r; k_r; v_r];
 * self_attention.dense by columns into o_proj, its bias replicated; gate_proj / up_proj merged
 * into mlp.gate_up_proj, down_proj by columns with its bias replicated; the norms replicated;
 * word_embeddings / lm_head by vocabulary rows, tied when config.json leaves the key out.
 * Hand-computed slices at TP 2 and TP 4 (MHA, and grouped kv heads up to TP 8), int8-channel
 * and fp8-channel layouts, coverage over TP 1..8, Telechat2Config's defaults and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0047ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, n_head 8, head_dim 16 (hid / n_head), I 192, V 1000, 2 layers; MHA unless KV */
#define HID 128
#define HD  16
#define QD  (8 * HD)
#define I   192
#define TC_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"TeleChat2ForCausalLM\"],\"model_type\":\"telechat\","               \
	"\"hidden_size\":128" extra "}"
#define TC_CFG(extra)                                                                              \
	TC_CFG_RAW(",\"n_head\":8,\"n_layer\":2,\"ffn_hidden_size\":192,\"vocab_size\":1000,"      \
	           "\"tie_word_embeddings\":false" extra)
#define KV2 ",\"num_key_value_heads\":2"
#define L1  "transformer.h.1."
#define R1  "model.layers.1."
#define QKV R1 "self_attn.qkv_proj.weight"
#define QW  L1 "self_attention.query.weight"
#define KVW L1 "self_attention.key_value.weight"
#define OP  R1 "self_attn.o_proj.weight"
#define OB  R1 "self_attn.o_proj.bias"
#define DW  L1 "self_attention.dense.weight"
#define DB  L1 "self_attention.dense.bias"
#define GU  R1 "mlp.gate_up_proj.weight"
#define GP  L1 "mlp.gate_proj.weight"
#define UP  L1 "mlp.up_proj.weight"
#define DP  R1 "mlp.down_proj.weight"
#define DPB R1 "mlp.down_proj.bias"
#define EMB "transformer.word_embeddings.weight"

/* Extra leaves of tm_tc's options: a query bias, gate / up biases (vLLM has none). */
enum { TC_QB = 1, TC_GB = 2 };

/* The model with kv kv heads; lm_head.weight when head; the extra biases of opts. */
static tm_model *tm_tc(int64_t kv, int head, int opts)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1000, HID);
	tm_add2(m, "transformer.ln_f.weight", HID, 0);
	if (head)
		tm_add2(m, "lm_head.weight", 1000, HID);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"self_attention.query.weight", QD, HID, 0},
	                     {"self_attention.query.bias", QD, 0, TC_QB},
	                     {"self_attention.key_value.weight", 2 * kv * HD, HID, 0},
	                     {"self_attention.dense.weight", HID, QD, 0},
	                     {"self_attention.dense.bias", HID, 0, 0},
	                     {"mlp.gate_proj.weight", I, HID, 0},
	                     {"mlp.gate_proj.bias", I, 0, TC_GB},
	                     {"mlp.up_proj.weight", I, HID, 0},
	                     {"mlp.down_proj.weight", HID, I, 0},
	                     {"mlp.down_proj.bias", HID, 0, 0}};
	tm_layers(m, "transformer.h.%d.", 2, L, TM_NLEAVES(L), opts);
	return m;
}

/* Rank r of T's qkv_proj: q heads [r*H/T, +H/T) of query, then its kv heads' k rows, then their
 * v rows, kv head g's k at key_value row 2*g*d and its v d rows further; the rank's kv heads
 * [r*KV/T, +KV/T) or, when KV < T, the one kv head r / (T/KV). */
static void tc_qkv_is(const fx *f, uint32_t r, uint32_t T, int64_t KV)
{
	int64_t hl = 8 / T, kvl = KV >= T ? KV / T : 1, g0 = KV >= T ? r * kvl : r / (T / KV);
	shp(f, r, QKV, 2, (hl + 2 * kvl) * HD, HID, 0);
	rows_at(f, r, QKV, 0, QW, r * hl * HD, hl * HD);
	for (int64_t m = 0; m < kvl; m++) {
		rows_at(f, r, QKV, (hl + m) * HD, KVW, 2 * (g0 + m) * HD, HD);
		rows_at(f, r, QKV, (hl + kvl + m) * HD, KVW, (2 * (g0 + m) + 1) * HD, HD);
	}
}

/* TP 2 and TP 4, the release's layout (MHA), by hand: qkv_proj as tc_qkv_is; o_proj the dense
 * weight's columns, its bias whole on every rank; gate_up rows, down columns with its bias
 * whole; norms whole under Llama's names; vocabulary rows with the padded tail. */
static void test_telechat2_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_tc(8, 1, 0), TC_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "telechat2");
		for (uint32_t r = 0; r < T; r++) {
			tc_qkv_is(&f, r, T, 8);
			/* rank 1 of 2: query rows 64..127, key_value's heads 4..7 (rows 128..255)
			 */
			if (T == 2 && r == 1) {
				rows_at(&f, r, QKV, 0, QW, 64, 64);
				rows_at(&f, r, QKV, 64, KVW, 128, 16);
				rows_at(&f, r, QKV, 80, KVW, 160, 16);
				rows_at(&f, r, QKV, 128, KVW, 144, 16);
				rows_at(&f, r, QKV, 176, KVW, 240, 16);
			}
			cols_of(&f, r, T, OP, DW, HID, QD);
			repl_from(&f, r, OB, DB);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, GP, UP, I);
			cols_of(&f, r, T, DP, L1 "mlp.down_proj.weight", HID, I);
			repl_from(&f, r, DPB, L1 "mlp.down_proj.bias");
			repl_from(&f, r, R1 "input_layernorm.weight", L1 "input_layernorm.weight");
			repl_from(&f, r, R1 "post_attention_layernorm.weight",
			          L1 "post_attention_layernorm.weight");
			repl_from(&f, r, "model.norm.weight", "transformer.ln_f.weight");
			assert_true(tm_ix(f.p, r, QW) < 0 && tm_ix(f.p, r, KVW) < 0);
			assert_true(tm_ix(f.p, r, R1 "self_attn.qkv_proj.bias") < 0);
			assert_true(tm_ix(f.p, r, R1 "mlp.gate_up_proj.bias") < 0);
			fx_vocab_from(&f, r, T, "model.embed_tokens.weight", EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* Grouped kv heads (num_key_value_heads 2 of 8: vLLM's _split_key_value slices the rows past
 * key_value's end empty, so it de-interleaves them right): kv head r at TP 2, replicated on
 * two ranks at TP 4 and four at TP 8; num_key_value_heads null is MHA; the Llama names win
 * over Telechat2Config's (num_hidden_layers 2 over n_layer 30, as PretrainedConfig sets a
 * mapped key last). */
static void test_telechat2_gqa(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2) {
		fx f;
		fx_open(&f, tm_tc(2, 1, 0), TC_CFG(KV2), T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++)
			tc_qkv_is(&f, r, T, 2);
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_tc(8, 1, 0), TC_CFG(",\"num_key_value_heads\":null"), 4, 1, 0, true);
	tc_qkv_is(&f, 3, 4, 8);
	fx_close(&f);
	fx_open(
	    &f, tm_tc(8, 1, 0),
	    TC_CFG_RAW(",\"n_head\":8,\"n_layer\":30,\"num_hidden_layers\":2,"
	               "\"ffn_hidden_size\":192,\"vocab_size\":1000,\"tie_word_embeddings\":false"),
	    2, 1, 0, true);
	tc_qkv_is(&f, 1, 2, 8);
	fx_close(&f);
}

static const char *const tc_keep[] = {
    "model.embed_tokens.weight", "lm_head.weight", "model.norm.weight", OB, DPB,
    R1 "input_layernorm.weight"};
static const char *const tc_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * biases, embedding, lm_head and norms BF16; rank 1's qkv_proj codes are its query rows and its
 * kv heads' de-interleaved key_value rows, each quantized on its own. fp8-channel at TP 4. */
static void test_telechat2_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_tc(8, 1, 0), TC_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(tc_keep), FX_N(tc_quant));
	const int8_t *c = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc = (const float *)out_bytes(&f, 1, QKV "_scale");
	for (int64_t row = 0; row < 3 * 4 * HD; row++) {
		int64_t kv = row - 4 * HD, g = 4 + (kv % (4 * HD)) / HD;
		int64_t sr = row < 4 * HD ? 64 + row : (2 * g + kv / (4 * HD)) * HD + kv % HD;
		size_t rowb;
		int8_row_is(c + row * HID, sc[row],
		            (const uint16_t *)src_rows(&f, row < 4 * HD ? QW : KVW, sr, &rowb),
		            HID);
	}
	fx_close(&f);
	fx_open_quant(&f, tm_tc(8, 1, 0), TC_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(tc_keep), FX_N(tc_quant));
	fx_close(&f);
}

static void test_telechat2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_tc(8, 1, 0), TC_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_tc(2, 1, 0), TC_CFG(KV2), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take Telechat2Config's defaults: tied (PretrainedConfig's true: lm_head
 * dropped, none needed), num_key_value_heads the heads, vocab_size 160256, ffn_hidden_size
 * 12288, n_layer 30, n_head 32; hidden_act other than silu is laid to silu (vLLM forces it). */
static void test_telechat2_defaults(void **state)
{
	(void)state;
	fx f;
	const char *dflt = TC_CFG_RAW(",\"n_head\":8,\"n_layer\":2,\"ffn_hidden_size\":192,"
	                              "\"vocab_size\":1000,\"hidden_act\":\"gelu\"");
	fx_open(&f, tm_tc(8, 1, 0), dflt, 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	tc_qkv_is(&f, 1, 2, 8);
	fx_close(&f);
	fx_open(&f, tm_tc(8, 0, 0), dflt, 2, 1, 0, true);
	fx_vocab_from(&f, 1, 2, "model.embed_tokens.weight", EMB, 1000, 1024, HID);
	fx_close(&f);
	fx_refused(tm_tc(8, 0, 0), TC_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_tc(8, 1, 0),
	           TC_CFG_RAW(",\"n_head\":8,\"n_layer\":2,\"ffn_hidden_size\":192,"
	                      "\"tie_word_embeddings\":false"),
	           WT_ESHAPE, "[160256, 128]", "fix config.json");
	fx_refused(tm_tc(8, 1, 0),
	           TC_CFG_RAW(",\"n_head\":8,\"n_layer\":2,\"vocab_size\":1000,"
	                      "\"tie_word_embeddings\":false"),
	           WT_ESHAPE, "[128, 12288]", "fix config.json");
	fx_refused(tm_tc(8, 1, 0),
	           TC_CFG_RAW(",\"n_head\":8,\"ffn_hidden_size\":192,\"vocab_size\":1000,"
	                      "\"tie_word_embeddings\":false"),
	           WT_ENOTFOUND, "transformer.h.2", "missing");
	/* n_head 32: heads of 4 rows, so rank 1 of 2's second k head is key_value rows 136..139 */
	fx_open(&f, tm_tc(8, 1, 0),
	        TC_CFG_RAW(",\"n_layer\":2,\"ffn_hidden_size\":192,\"vocab_size\":1000,"
	                   "\"tie_word_embeddings\":false"),
	        2, 1, 0, true);
	rows_at(&f, 1, QKV, 64, KVW, 128, 4);
	rows_at(&f, 1, QKV, 68, KVW, 136, 4);
	rows_at(&f, 1, QKV, 128, KVW, 132, 4);
	fx_close(&f);
}

static void test_telechat2_errors(void **state)
{
	(void)state;
	fx_refused(tm_tc(8, 1, 0), TC_CFG(",\"apply_residual_connection_post_layernorm\":true"),
	           WT_EUNSUPPORTED, "apply_residual_connection_post_layernorm", "give false");
	fx_refused(tm_tc(8, 1, 0), TC_CFG(",\"embed_layernorm\":true"), WT_EUNSUPPORTED,
	           "embed_layernorm", "give false");
	fx_refused(tm_tc(8, 1, 0), TC_CFG(",\"base\":20000"), WT_EUNSUPPORTED,
	           "base 20000 differs from rope_theta 10000", "rope_theta only");
	fx_refused(tm_tc(8, 1, 0), TC_CFG(",\"rope_theta\":20000,\"base\":10000"), WT_EUNSUPPORTED,
	           "base 10000 differs from rope_theta 20000", "rope_theta only");
	fx_refused(tm_tc(8, 1, 0), TC_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_tc(8, 1, 0), TC_CFG(",\"num_key_value_heads\":3"), WT_EUNSUPPORTED,
	           "num_key_value_heads 3", "does not divide n_head 8");
	fx_refused(tm_tc(8, 1, TC_QB), TC_CFG(""), WT_EUNSUPPORTED, "self_attention.query.bias",
	           "unknown");
	fx_refused(tm_tc(8, 1, TC_GB), TC_CFG(""), WT_EUNSUPPORTED, "mlp.gate_proj.bias",
	           "unknown");
	fx_refused(tm_tc(2, 1, 0), TC_CFG(""), WT_ESHAPE, "key_value", "[256, 128]");
	tm_model *m = tm_tc(8, 1, 0);
	tm_remove(m, DB);
	fx_refused(m, TC_CFG(""), WT_ENOTFOUND, "dense.bias", "missing");
	m = tm_tc(8, 1, 0);
	tm_remove(m, L1 "mlp.down_proj.bias");
	fx_refused(m, TC_CFG(""), WT_ENOTFOUND, "down_proj.bias", "missing");
	m = tm_tc(8, 1, 0);
	tm_remove(m, KVW);
	fx_refused(m, TC_CFG(""), WT_ENOTFOUND, "key_value", "missing");
	fx_refused_tp(tm_tc(8, 1, 0), TC_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_tc(8, 1, 0), TC_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_telechat2_slices),   cmocka_unit_test(test_telechat2_gqa),
	    cmocka_unit_test(test_telechat2_quant),    cmocka_unit_test(test_telechat2_coverage),
	    cmocka_unit_test(test_telechat2_defaults), cmocka_unit_test(test_telechat2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
