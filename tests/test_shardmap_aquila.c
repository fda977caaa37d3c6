/*
 * test_shardmap_aquila.c — Aquila (AquilaForCausalLM / AquilaModel, remote code: BAAI/Aquila-7B,
 * AquilaChat-7B, Aquila2-7B, AquilaChat2-7B, -34B) cut as vLLM's llama.py loads it: Llama's
 * names, q_proj / k_proj / v_proj fused by heads into self_attn.qkv_proj [q_r; k_r; v_r], o_proj
 * by columns, gate_proj / up_proj merged by rows into mlp.gate_up_proj, down_proj by columns; the
 * norms replicated; embed_tokens / lm_head by vocabulary rows, untied by default. No biases
 * (AquilaConfig has no bias key); Llama's `attention_bias or bias` / qkv_bias switches when a
 * config.json gives one. Hand-computed slices at TP 2 and TP 4 under both architecture names,
 * int8-channel and fp8-channel layouts, coverage over TP 1..8, AquilaConfig's defaults and the
 * refusals. Seeds fixed and printed.
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
#include "test_shardmap_biased.h"

/* hid 128, H 8, head_dim 16 (hid / H), I 192, V 1000, 2 layers; MHA unless KV is given */
#define HID 128
#define HD  16
#define QD  (8 * HD)
#define I   192
#define AQ_ARCH_RAW(arch, extra)                                                                   \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"aquila\","                             \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define AQ_CFG_RAW(extra) AQ_ARCH_RAW("AquilaForCausalLM", extra)
#define AQ_CFG(extra)                                                                              \
	AQ_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000" extra)
#define KV2  ",\"num_key_value_heads\":2"
#define TIED ",\"tie_word_embeddings\":true"
#define L1   "model.layers.1."
#define AT   L1 "self_attn."
#define QKV  AT "qkv_proj.weight"
#define QKVB AT "qkv_proj.bias"
#define QP   AT "q_proj.weight"
#define KP   AT "k_proj.weight"
#define VP   AT "v_proj.weight"
#define QB   AT "q_proj.bias"
#define KB   AT "k_proj.bias"
#define VB   AT "v_proj.bias"
#define OP   AT "o_proj.weight"
#define OB   AT "o_proj.bias"
#define GU   L1 "mlp.gate_up_proj.weight"
#define GP   L1 "mlp.gate_proj.weight"
#define UP   L1 "mlp.up_proj.weight"
#define DP   L1 "mlp.down_proj.weight"
#define EMB  "model.embed_tokens.weight"

enum { B_QKV = TM_B_QKV, B_O = TM_B_O, B_ALL = TM_B_QKV | TM_B_O };

/* The model with kv kv heads; lm_head.weight when head; the biases of `bias`. */
static tm_model *tm_aq(int64_t kv, int head, int bias)
{
	return tm_llama_biased(SEED, HID, QD, kv * HD, I, head, bias);
}

/* TP 2 and TP 4, the release's layout (MHA, no bias) under AquilaForCausalLM and AquilaModel
 * (Aquila-7B's name), by hand: rank r's qkv_proj is q / k / v
 * rows [r*H/T*d, +H/T*d) each; o_proj by columns; gate_up rows, down columns, vocabulary rows
 * with the padded tail; nothing else on a rank. */
static void test_aquila_slices(void **state)
{
	(void)state;
	static const char *const cfgs[] = {
	    AQ_CFG(""),
	    AQ_ARCH_RAW("AquilaModel", ",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                               "\"vocab_size\":1000")};
	for (uint32_t k = 0; k < 4; k++) {
		uint32_t T = 2 << (k % 2);
		fx f;
		fx_open(&f, tm_aq(8, 1, 0), cfgs[k / 2], T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "aquila");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = 8 / T;
			fx_attn_is(&f, r, T, AT, "o_proj.weight", 8, 8, HD, HID);
			rows_at(&f, r, QKV, hl * HD, KP, r * hl * HD, hl * HD);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, GP) < 0);
			assert_true(tm_ix(f.p, r, QKVB) < 0 && tm_ix(f.p, r, OB) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
			/* 2 layers x 9 (norms, qkv, o, gate_up, down), the norm, embed, lm_head */
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * 6 + 3);
		}
		fx_close(&f);
	}
}

/* Aquila2-34B's grouped kv heads (num_key_value_heads 2) replicated at TP 4; Llama's switches
 * when a config.json gives them: attention_bias or bias true gives q/k/v's (fused by heads) and
 * o_proj's (whole) biases, qkv_bias false keeps o_proj's alone; tie_word_embeddings true drops
 * lm_head. */
static void test_aquila_switches(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_aq(2, 1, 0), AQ_CFG(KV2), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		fx_attn_is(&f, r, 4, AT, "o_proj.weight", 8, 2, HD, HID);
	fx_close(&f);
	fx_open(&f, tm_aq(8, 1, B_ALL), AQ_CFG(",\"attention_bias\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, OB);
		fx_qkv_is(&f, r, 2, QKVB, QB, KB, VB, 8, 8, HD);
	}
	fx_close(&f);
	fx_open(&f, tm_aq(8, 1, B_O), AQ_CFG(",\"bias\":true,\"qkv_bias\":false"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 1, QKVB) < 0);
	repl(&f, 1, OB);
	fx_close(&f);
	fx_open(&f, tm_aq(8, 1, 0), AQ_CFG(TIED), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const aq_keep[] = {EMB, "lm_head.weight", "model.norm.weight",
                                      L1 "input_layernorm.weight"};
static const char *const aq_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * embedding, lm_head and norms BF16; rank 1's qkv_proj codes are q / k / v rows 64..127 each.
 * fp8-channel at TP 4: the same split. */
static void test_aquila_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_aq(8, 1, 0), AQ_CFG(""), &l, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_quant_split(&f, r, WT_BF16, aq_keep, sizeof(aq_keep) / sizeof(aq_keep[0]),
		               aq_quant, sizeof(aq_quant) / sizeof(aq_quant[0]));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 8, HD, HID);
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_aq(8, 1, 0), AQ_CFG(""), &l, true);
	for (uint32_t r = 0; r < 4; r++)
		fx_quant_split_as(&f, r, WT_BF16, aq_keep, sizeof(aq_keep) / sizeof(aq_keep[0]),
		                  aq_quant, sizeof(aq_quant) / sizeof(aq_quant[0]), WT_F8_E4M3);
	fx_close(&f);
}

static void test_aquila_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_aq(8, 1, 0), AQ_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_aq(2, 1, 0), AQ_CFG(KV2), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_aq(8, 1, B_ALL), AQ_CFG(",\"bias\":true"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take AquilaConfig's defaults: no bias (none accepted), untied (lm_head needed),
 * num_key_value_heads the heads, vocab_size 100008, intermediate_size 11008, 32 layers. */
static void test_aquila_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_aq(8, 1, 0), AQ_CFG(""), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, OB) < 0 && tm_ix(f.p, 0, "lm_head.weight") >= 0);
	fx_close(&f);
	fx_refused(tm_aq(8, 0, 0), AQ_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_aq(2, 1, 0), AQ_CFG(""), WT_ESHAPE, "k_proj.weight", "implies [128, 128]");
	fx_refused(tm_aq(8, 1, 0), AQ_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192"),
	           WT_ESHAPE, "[100008, 128]", "fix config.json");
	fx_refused(tm_aq(8, 1, 0), AQ_CFG_RAW(",\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ESHAPE, "[128, 11008]", "fix config.json");
	fx_refused(tm_aq(8, 1, 0), AQ_CFG_RAW(",\"intermediate_size\":192,\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
}

static void test_aquila_errors(void **state)
{
	(void)state;
	fx_refused(tm_aq(8, 1, 0), AQ_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_aq(8, 1, B_O), AQ_CFG(""), WT_EUNSUPPORTED, "o_proj.bias",
	           "(bias is false or absent)");
	fx_refused(tm_aq(8, 1, B_QKV), AQ_CFG(""), WT_EUNSUPPORTED, "_proj.bias", "bias is false");
	fx_refused(tm_aq(8, 1, B_O), AQ_CFG(",\"bias\":true"), WT_ENOTFOUND, "q_proj.bias",
	           "config.json's bias true");
	fx_refused(tm_aq(8, 1, B_QKV), AQ_CFG(",\"bias\":true"), WT_ENOTFOUND, "o_proj.bias",
	           "config.json's bias true");
	fx_refused(tm_aq(8, 1, 0), AQ_CFG(",\"bias\":1"), WT_ECORRUPT, "bias", "boolean");
	tm_model *m = tm_aq(8, 1, 0);
	tm_remove(m, UP);
	fx_refused(m, AQ_CFG(""), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_aq(8, 1, 0), AQ_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_aq(8, 1, 0), AQ_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aquila_slices),   cmocka_unit_test(test_aquila_switches),
	    cmocka_unit_test(test_aquila_quant),    cmocka_unit_test(test_aquila_coverage),
	    cmocka_unit_test(test_aquila_defaults), cmocka_unit_test(test_aquila_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
