/*
 * test_shardmap_llama_alias.h — the planner tests of a family vLLM's registry maps onto its
 * LlamaForCausalLM with InternLM's bias switches and no bias in its releases (Xverse, Aquila:
 * test_shardmap_xverse.c, test_shardmap_aquila.c): hand slices at TP 2 / 4 of a config
 * (la_slices), grouped kv heads and Llama's bias / tie switches, int8-channel and fp8-channel,
 * coverage, the config class's defaults and the refusals. Define before including it: SEED,
 * LA_FAM (the family), LA_CFG_RAW(extra) (a config.json of the architecture with hid 128 and 8
 * heads), LA_CFG(extra) (that with 2 layers, I 192, V 1000), LA_VOCAB_SHAPE and LA_INTER_SHAPE
 * (the embedding's and down_proj's shapes its class defaults imply). A family whose config.json
 * must give tie_word_embeddings (Tele-FLM: its class's defaults unknown, the keys required)
 * defines LA_CFG_TIED (LA_CFG with it true) and LA_NO_CLASS_DEFAULTS (no test_la_defaults);
 * LA_QKV_BIAS_READ 0 where the model file never reads qkv_bias (Solar: test_shardmap_solar.c),
 * so that bias true with qkv_bias false keeps the q/k/v biases (default 1: Llama's reading drops
 * them).
 */
#ifndef WT_TEST_SHARDMAP_LLAMA_ALIAS_H
#define WT_TEST_SHARDMAP_LLAMA_ALIAS_H

#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"

#ifndef LA_QKV_BIAS_READ
#define LA_QKV_BIAS_READ 1
#endif

/* hid 128, H 8, head_dim 16 (hid / H), I 192, V 1000, 2 layers; MHA unless KV is given */
#define HID  128
#define HD   16
#define QD   (8 * HD)
#define I    192
#define KV2  ",\"num_key_value_heads\":2"
#define TIED ",\"tie_word_embeddings\":true"
#ifndef LA_CFG_TIED
#define LA_CFG_TIED LA_CFG(TIED)
#endif
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
static tm_model *tm_la(int64_t kv, int head, int bias)
{
	return tm_llama_biased(SEED, HID, QD, kv * HD, I, head, bias);
}

/* TP 2 and TP 4 of cfg, the release's layout (MHA, no bias), by hand: rank r's qkv_proj is q / k /
 * v rows [r*H/T*d, +H/T*d) each; o_proj by columns; gate_up rows, down columns, vocabulary rows
 * with the padded tail; nothing else on a rank. */
static void la_slices(const char *cfg)
{
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_la(8, 1, 0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), LA_FAM);
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

/* Grouped kv heads (num_key_value_heads 2: XVERSE-65B's, Aquila2-34B's) replicated at TP 4; Llama's
 * switches when a config.json gives them: attention_bias or bias true gives q/k/v's (fused by
 * heads) and o_proj's (whole) biases, qkv_bias false keeps o_proj's alone (where it is read:
 * LA_QKV_BIAS_READ); tie_word_embeddings true drops lm_head. */
static void test_la_switches(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_la(2, 1, 0), LA_CFG(KV2), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		fx_attn_is(&f, r, 4, AT, "o_proj.weight", 8, 2, HD, HID);
	fx_close(&f);
	fx_open(&f, tm_la(8, 1, B_ALL), LA_CFG(",\"attention_bias\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, OB);
		fx_qkv_is(&f, r, 2, QKVB, QB, KB, VB, 8, 8, HD);
	}
	fx_close(&f);
	fx_open(&f, tm_la(8, 1, LA_QKV_BIAS_READ ? B_O : B_ALL),
	        LA_CFG(",\"bias\":true,\"qkv_bias\":false"), 2, 1, 0, true);
	assert_true((tm_ix(f.p, 1, QKVB) < 0) == LA_QKV_BIAS_READ);
	repl(&f, 1, OB);
	fx_close(&f);
	fx_open(&f, tm_la(8, 1, 0), LA_CFG_TIED, 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const la_keep[] = {EMB, "lm_head.weight", "model.norm.weight",
                                      L1 "input_layernorm.weight"};
static const char *const la_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * embedding, lm_head and norms BF16; rank 1's qkv_proj codes are q / k / v rows 64..127 each.
 * fp8-channel at TP 4: the same split. */
static void test_la_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_la(8, 1, 0), LA_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(la_keep), FX_N(la_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 8, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_la(8, 1, 0), LA_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(la_keep), FX_N(la_quant));
	fx_close(&f);
}

static void test_la_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_la(8, 1, 0), LA_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_la(2, 1, 0), LA_CFG(KV2), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_la(8, 1, B_ALL), LA_CFG(",\"bias\":true"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

#ifndef LA_NO_CLASS_DEFAULTS
/* Keys left out take the config class's defaults: no bias (none accepted), untied (lm_head
 * needed), num_key_value_heads the heads, its vocab_size and intermediate_size (LA_VOCAB_SHAPE,
 * LA_INTER_SHAPE), more layers than the checkpoint's. */
static void test_la_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_la(8, 1, 0), LA_CFG(""), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, OB) < 0 && tm_ix(f.p, 0, "lm_head.weight") >= 0);
	fx_close(&f);
	fx_refused(tm_la(8, 0, 0), LA_CFG(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_la(2, 1, 0), LA_CFG(""), WT_ESHAPE, "k_proj.weight", "implies [128, 128]");
	fx_refused(tm_la(8, 1, 0), LA_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192"),
	           WT_ESHAPE, LA_VOCAB_SHAPE, "fix config.json");
	fx_refused(tm_la(8, 1, 0), LA_CFG_RAW(",\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ESHAPE, LA_INTER_SHAPE, "fix config.json");
	fx_refused(tm_la(8, 1, 0), LA_CFG_RAW(",\"intermediate_size\":192,\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
}
#endif

static void test_la_errors(void **state)
{
	(void)state;
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_la(8, 1, B_O), LA_CFG(""), WT_EUNSUPPORTED, "o_proj.bias",
	           "(bias is false or absent)");
	fx_refused(tm_la(8, 1, B_QKV), LA_CFG(""), WT_EUNSUPPORTED, "_proj.bias", "bias is false");
	fx_refused(tm_la(8, 1, B_O), LA_CFG(",\"bias\":true"), WT_ENOTFOUND, "q_proj.bias",
	           "config.json's bias true");
	fx_refused(tm_la(8, 1, B_QKV), LA_CFG(",\"bias\":true"), WT_ENOTFOUND, "o_proj.bias",
	           "config.json's bias true");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bias\":1"), WT_ECORRUPT, "bias", "boolean");
	tm_model *m = tm_la(8, 1, 0);
	tm_remove(m, UP);
	fx_refused(m, LA_CFG(""), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_la(8, 1, 0), LA_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_la(8, 1, 0), LA_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

#endif
