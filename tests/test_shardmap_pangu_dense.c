/*
 * test_shardmap_pangu_dense.c — openPangu-Embedded (PanguEmbeddedForCausalLM, remote code:
 * openPangu-Embedded-1B / -7B) cut as vLLM's openpangu.py loads its dense decoder: Llama's names,
 * q_proj / k_proj / v_proj and their biases fused by heads into self_attn.qkv_proj [q_r; k_r;
 * v_r], o_proj by columns with its bias whole, gate_proj / up_proj merged by rows into
 * mlp.gate_up_proj, down_proj by columns; the norms replicated; embed_tokens / lm_head by
 * vocabulary rows, untied by default. PanguEmbeddedConfig's bias defaults to true (the releases'
 * q/k/v and o_proj biases); Llama's `attention_bias or bias` / qkv_bias switches as vLLM's
 * OpenPanguDecoderLayer reads them. Hand-computed slices at TP 2 and TP 4, int8-channel and
 * fp8-channel layouts, coverage over TP 1..8, PanguEmbeddedConfig's defaults and the refusals
 * (hidden_act, every openpangu.py variant the family does not read, the biases). Seeds fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0061ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_biased.h"

/* hid 128, H 8, head_dim 16 (hid / H), I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define PG_RAW(extra)                                                                              \
	"{\"architectures\":[\"PanguEmbeddedForCausalLM\"],\"model_type\":\"PanguEmbedded\","      \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
/* the release's keys (num_key_value_heads given, bias left to the class: true) */
#define PG_CFG(extra)                                                                              \
	PG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000" extra)
#define KV2  ",\"num_key_value_heads\":2"
#define NOB  ",\"bias\":false"
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

enum { B_ALL = TM_B_QKV | TM_B_O };

/* The model with kv kv heads; lm_head.weight when head; the biases of `bias`. */
static tm_model *tm_pg(int64_t kv, int head, int bias)
{
	return tm_llama_biased(SEED, HID, 8 * HD, kv * HD, I, head, bias);
}

/* TP 2 and TP 4 of the release's layout (GQA 8 / 2, q/k/v and o_proj biases, bias absent: the
 * class's true), by hand: rank r's qkv_proj is q rows [r*8/T*d, +8/T*d) and kv head r*2/T's k /
 * v rows (replicated at TP 4), its bias the same rows of the q / k / v biases; o_proj by columns,
 * its bias whole; gate_up rows, down columns; vocabulary rows with the padded tail. */
static void test_pangu_dense_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_pg(2, 1, B_ALL), PG_CFG(KV2), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "pangu_dense");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&f, r, T, AT, "o_proj.weight", 8, 2, HD, HID);
			fx_qkv_is(&f, r, T, QKVB, QB, KB, VB, 8, 2, HD);
			repl(&f, r, OB);
			fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, QP) < 0 && tm_ix(f.p, r, QB) < 0 &&
			            tm_ix(f.p, r, GP) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
			/* 2 layers x 8 (2 norms, qkv, its bias, o, its bias, gate_up, down), 3 more
			 */
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 2 * 8 + 3);
		}
		fx_close(&f);
	}
}

/* Llama's switches: bias false drops every attention bias (MHA at TP 2 by hand); qkv_bias false
 * keeps o_proj's alone; attention_bias true with bias false gives them all; tie_word_embeddings
 * true drops lm_head. */
static void test_pangu_dense_switches(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_pg(8, 1, 0), PG_CFG(NOB), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_attn_is(&f, r, 2, AT, "o_proj.weight", 8, 8, HD, HID);
		assert_true(tm_ix(f.p, r, QKVB) < 0 && tm_ix(f.p, r, OB) < 0);
	}
	fx_close(&f);
	fx_open(&f, tm_pg(8, 1, TM_B_O), PG_CFG(",\"qkv_bias\":false"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 1, QKVB) < 0);
	repl(&f, 1, OB);
	fx_close(&f);
	fx_open(&f, tm_pg(8, 1, B_ALL), PG_CFG(NOB ",\"attention_bias\":true"), 2, 1, 0, true);
	fx_qkv_is(&f, 1, 2, QKVB, QB, KB, VB, 8, 8, HD);
	fx_close(&f);
	fx_open(&f, tm_pg(2, 1, B_ALL), PG_CFG(KV2 ",\"tie_word_embeddings\":true"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const pg_keep[] = {
    EMB, "lm_head.weight", "model.norm.weight", L1 "input_layernorm.weight", QKVB, OB};
static const char *const pg_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / o_proj / gate_up_proj / down_proj quantized per row, the
 * biases, embedding, lm_head and norms BF16; rank 1's qkv_proj codes are q rows 64..127 and kv
 * head 1's k / v rows. fp8-channel at TP 4: the same split. */
static void test_pangu_dense_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_pg(2, 1, B_ALL), PG_CFG(KV2), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(pg_keep), FX_N(pg_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV, QP, KP, VP, 8, 2, HD, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_pg(2, 1, B_ALL), PG_CFG(KV2), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(pg_keep), FX_N(pg_quant));
	fx_close(&f);
}

static void test_pangu_dense_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_pg(2, 1, B_ALL), PG_CFG(KV2), 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_pg(8, 1, 0), PG_CFG(NOB ",\"num_key_value_heads\":8"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take PanguEmbeddedConfig's defaults: bias true (the biases required), untied
 * (lm_head needed), 8 kv heads, vocab_size 153376, intermediate_size 12800, 34 layers. */
static void test_pangu_dense_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_pg(8, 1, B_ALL), PG_CFG(",\"num_key_value_heads\":8"), 2, 1, 0, true);
	repl(&f, 0, OB);
	assert_true(tm_ix(f.p, 0, QKVB) >= 0 && tm_ix(f.p, 0, "lm_head.weight") >= 0);
	fx_close(&f);
	fx_refused(tm_pg(2, 1, 0), PG_CFG(KV2), WT_ENOTFOUND, "_proj.bias", "bias true");
	fx_refused(tm_pg(2, 0, B_ALL), PG_CFG(KV2), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_pg(2, 1, B_ALL), PG_CFG(""), WT_ESHAPE, "k_proj.bias", "implies [128]");
	fx_refused(tm_pg(2, 1, B_ALL),
	           PG_RAW(KV2 ",\"num_hidden_layers\":2,\"intermediate_size\":192"), WT_ESHAPE,
	           "[153376, 128]", "fix config.json");
	fx_refused(tm_pg(2, 1, B_ALL), PG_RAW(KV2 ",\"num_hidden_layers\":2,\"vocab_size\":1000"),
	           WT_ESHAPE, "[128, 12800]", "fix config.json");
	fx_refused(tm_pg(2, 1, B_ALL), PG_RAW(KV2 ",\"intermediate_size\":192,\"vocab_size\":1000"),
	           WT_ENOTFOUND, "model.layers.2", "missing");
}

/* Every variant of vLLM's openpangu.py the family does not read, refused naming its key. */
static const struct {
	const char *extra, *key;
} pg_variants[] = {
    {",\"qk_nope_head_dim\":8,\"qk_rope_head_dim\":8,\"v_head_dim\":16,\"kv_lora_rank\":32",
     "kv_lora_rank"},
    {",\"param_sink_number\":128", "param_sink_number"},
    {",\"n_routed_experts\":4", "n_routed_experts"},
    {",\"sandwich_norm\":true", "sandwich_norm"},
    {",\"use_mhc\":true", "use_mhc"},
    {",\"block_post_layernorm_idx\":[1]", "block_post_layernorm_idx"},
    {",\"interleaved_sliding_window\":4096", "interleaved_sliding_window"},
    {",\"is_causal\":false", "is_causal"},
    {",\"rope_scaling\":{\"rope_type\":\"default\",\"mrope_interleaved\":true}",
     "rope_scaling.mrope_interleaved"},
};

static void test_pangu_dense_errors(void **state)
{
	(void)state;
	char cfg[1024];
	for (size_t i = 0; i < sizeof(pg_variants) / sizeof(pg_variants[0]); i++) {
		snprintf(cfg, sizeof(cfg), PG_CFG(KV2 "%s"), pg_variants[i].extra);
		fx_refused(tm_pg(2, 1, B_ALL), cfg, WT_EUNSUPPORTED, pg_variants[i].key, "remove");
	}
	/* the inert forms read as the dense decoder: kv_lora_rank without the other MLA keys, no
	 * sinks, false switches, an empty block list, is_causal true */
	fx f;
	fx_open(&f, tm_pg(2, 1, B_ALL),
	        PG_CFG(KV2 ",\"kv_lora_rank\":32,\"param_sink_number\":0,\"sandwich_norm\":false,"
	                   "\"use_mhc\":false,\"block_post_layernorm_idx\":[],\"is_causal\":true,"
	                   "\"n_routed_experts\":null"),
	        2, 1, 0, true);
	fx_close(&f);
	fx_refused(tm_pg(2, 1, B_ALL), PG_CFG(KV2 ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_pg(2, 1, TM_B_O), PG_CFG(KV2 NOB), WT_EUNSUPPORTED, "o_proj.bias",
	           "(bias is false or absent)");
	fx_refused(tm_pg(2, 1, TM_B_QKV), PG_CFG(KV2 NOB), WT_EUNSUPPORTED, "_proj.bias",
	           "bias is false");
	fx_refused(tm_pg(2, 1, TM_B_O), PG_CFG(KV2), WT_ENOTFOUND, "q_proj.bias", "bias true");
	fx_refused(tm_pg(2, 1, TM_B_QKV), PG_CFG(KV2), WT_ENOTFOUND, "o_proj.bias", "bias true");
	fx_refused(tm_pg(2, 1, B_ALL), PG_CFG(KV2 ",\"bias\":1"), WT_ECORRUPT, "bias", "boolean");
	tm_model *m = tm_pg(2, 1, B_ALL);
	tm_remove(m, UP);
	fx_refused(m, PG_CFG(KV2), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_pg(2, 1, B_ALL), PG_CFG(KV2), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_pg(2, 1, B_ALL), PG_CFG(KV2), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pangu_dense_slices),
	    cmocka_unit_test(test_pangu_dense_switches),
	    cmocka_unit_test(test_pangu_dense_quant),
	    cmocka_unit_test(test_pangu_dense_coverage),
	    cmocka_unit_test(test_pangu_dense_defaults),
	    cmocka_unit_test(test_pangu_dense_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
