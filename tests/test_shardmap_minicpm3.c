/*
 * test_shardmap_minicpm3.c — MiniCPM3 (MiniCPM3ForCausalLM, remote code: MiniCPM3-4B) cut as
 * vLLM's minicpm3.py loads it: Llama's global names and norms, DeepSeek-V2's multi-head
 * latent attention (q_a_proj, q_a_layernorm, kv_a_proj_with_mqa, kv_a_layernorm replicated;
 * q_b_proj and kv_b_proj by heads (rows); o_proj by columns), gate_proj / up_proj merged by
 * rows into mlp.gate_up_proj [gate_r; up_r], down_proj by columns; embed_tokens / lm_head by
 * vocabulary rows, lm_head dropped when tied (MiniCPM3Config's default); no biases.
 * Hand-computed slices at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over
 * TP 1..8, MiniCPM3Config's defaults and the refusals. Seeds fixed and printed.
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

/* hid 128, H 8, q_lora 64, kv_lora 32, nope 16, rope 8, v 16, I 192, V 1000, 2 layers */
#define HID  128
#define NH   8
#define QLR  64
#define KVLR 32
#define QK   24 /* nope + rope */
#define KVB  32 /* nope + v */
#define KVA  40 /* kv_lora + rope */
#define VHD  16
#define I    192
#define MC3_CFG_RAW(extra)                                                                         \
	"{\"architectures\":[\"MiniCPM3ForCausalLM\"],\"model_type\":\"minicpm3\","                \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define MC3_MLA                                                                                    \
	",\"q_lora_rank\":64,\"kv_lora_rank\":32,\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":8"
#define MC3_CFG(extra)                                                                             \
	MC3_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000,"      \
	            "\"scale_emb\":12,\"scale_depth\":1.4,\"dim_model_base\":256" MC3_MLA extra)
#define UNTIED ",\"tie_word_embeddings\":false"
#define L1     "model.layers.1."
#define A1     L1 "self_attn."
#define QA     A1 "q_a_proj.weight"
#define QB     A1 "q_b_proj.weight"
#define KVAP   A1 "kv_a_proj_with_mqa.weight"
#define KVBP   A1 "kv_b_proj.weight"
#define OP     A1 "o_proj.weight"
#define GU     L1 "mlp.gate_up_proj.weight"
#define GP     L1 "mlp.gate_proj.weight"
#define UP     L1 "mlp.up_proj.weight"
#define DP     L1 "mlp.down_proj.weight"
#define EMB    "model.embed_tokens.weight"

/* The model with v_head_dim vhd; lm_head.weight when head. */
static tm_model *tm_mc3(int64_t vhd, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, head);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0},
	                     {"post_attention_layernorm.weight", HID, 0},
	                     {"self_attn.q_a_proj.weight", QLR, HID},
	                     {"self_attn.q_a_layernorm.weight", QLR, 0},
	                     {"self_attn.q_b_proj.weight", NH * QK, QLR},
	                     {"self_attn.kv_a_proj_with_mqa.weight", KVA, HID},
	                     {"self_attn.kv_a_layernorm.weight", KVLR, 0},
	                     {"self_attn.kv_b_proj.weight", NH * (16 + vhd), KVLR},
	                     {"self_attn.o_proj.weight", HID, NH * vhd},
	                     {"mlp.gate_proj.weight", I, HID},
	                     {"mlp.up_proj.weight", I, HID},
	                     {"mlp.down_proj.weight", HID, I}};
	tm_layers(m, TM_L, 2, L, TM_NLEAVES(L), 0);
	return m;
}

/* TP 2 and TP 4 by hand: rank r's q_b_proj is rows [r*H/T*24, +H/T*24) (its heads' [nope |
 * rope]), kv_b_proj rows [r*H/T*32, +H/T*32) (its heads' [k_nope | v]), o_proj columns
 * [r*H/T*16, ...); q_a / kv_a and the four norms whole. */
static void test_minicpm3_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_mc3(VHD, 1), MC3_CFG(UNTIED), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "minicpm3");
		for (uint32_t r = 0; r < T; r++) {
			int64_t hl = NH / T;
			shp(&f, r, QB, 2, hl * QK, QLR, 0);
			rows_are(&f, r, QB, 0, QB, r * hl * QK, hl * QK);
			shp(&f, r, KVBP, 2, hl * KVB, KVLR, 0);
			rows_are(&f, r, KVBP, 0, KVBP, r * hl * KVB, hl * KVB);
			cols_of(&f, r, T, OP, OP, HID, NH * VHD);
			shp(&f, r, GU, 2, 2 * I / T, HID, 0);
			fx_gate_up_is(&f, r, T, GU, GP, UP, I);
			cols_of(&f, r, T, DP, DP, HID, I);
			repl(&f, r, QA);
			repl(&f, r, KVAP);
			repl(&f, r, A1 "q_a_layernorm.weight");
			repl(&f, r, A1 "kv_a_layernorm.weight");
			repl(&f, r, L1 "input_layernorm.weight");
			repl(&f, r, L1 "post_attention_layernorm.weight");
			repl(&f, r, "model.norm.weight");
			assert_true(tm_ix(f.p, r, GP) < 0 && tm_ix(f.p, r, UP) < 0);
			fx_vocab_is(&f, r, T, EMB, 1000, 1024, HID);
			fx_vocab_is(&f, r, T, "lm_head.weight", 1000, 1024, HID);
		}
		fx_close(&f);
	}
}

/* TP 8 (one head a rank) with v_head_dim 24 given; tied (MiniCPM3Config's default, no key):
 * lm_head not emitted, and a checkpoint's copy dropped. */
static void test_minicpm3_tp8_tied(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mc3(24, 1), MC3_CFG(",\"v_head_dim\":24"), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++) {
		rows_are(&f, r, QB, 0, QB, r * QK, QK);
		shp(&f, r, KVBP, 2, 40, KVLR, 0);
		rows_are(&f, r, KVBP, 0, KVBP, r * 40, 40);
		cols_of(&f, r, 8, OP, OP, HID, NH * 24);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	}
	assert_true(fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

static const char *const mc3_keep[] = {EMB,
                                       "lm_head.weight",
                                       "model.norm.weight",
                                       L1 "input_layernorm.weight",
                                       L1 "post_attention_layernorm.weight",
                                       A1 "q_a_layernorm.weight",
                                       A1 "kv_a_layernorm.weight"};
static const char *const mc3_quant[] = {QA, QB, KVAP, KVBP, OP, GU, DP};

/* int8-channel at TP 2: every Linear (q_a / q_b / kv_a / kv_b / o / gate_up / down) quantized
 * per row, the embedding, lm_head and norms BF16; rank 1's kv_b_proj codes are rows 128.. of
 * the checkpoint's. fp8-channel at TP 4: the same split. */
static void test_minicpm3_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_mc3(VHD, 1), MC3_CFG(UNTIED), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(mc3_keep), FX_N(mc3_quant));
	fx_rows_int8_is(&f, 1, KVBP, 0, KVBP, 4 * KVB, 4 * KVB, KVLR);
	fx_close(&f);
	fx_open_quant(&f, tm_mc3(VHD, 1), MC3_CFG(UNTIED), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(mc3_keep), FX_N(mc3_quant));
	fx_close(&f);
}

static void test_minicpm3_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_mc3(VHD, 1), MC3_CFG(UNTIED), NH, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take MiniCPM3Config's defaults: v_head_dim None -> qk_nope_head_dim, tied
 * (lm_head not needed), vocab_size 32000, intermediate_size 11008, 32 layers, q_lora_rank 768,
 * kv_lora_rank 256, qk_nope_head_dim 64, qk_rope_head_dim 32 (kv_a_proj_with_mqa [kv_lora + 32]);
 * head_dim, which vLLM never reads, accepted. */
static void test_minicpm3_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_mc3(VHD, 0), MC3_CFG(",\"v_head_dim\":null,\"head_dim\":24"), 2, 1, 0,
	        false);
	shp(&f, 1, KVBP, 2, 4 * KVB, KVLR, 0);
	assert_true(tm_ix(f.p, 1, "lm_head.weight") < 0);
	fx_close(&f);
	fx_refused(tm_mc3(VHD, 0), MC3_CFG(UNTIED), WT_ENOTFOUND, "lm_head.weight", "missing");
	fx_refused(tm_mc3(VHD, 0),
	           MC3_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192" MC3_MLA),
	           WT_ESHAPE, "[32000, 128]", "fix config.json");
	fx_refused(tm_mc3(VHD, 0),
	           MC3_CFG_RAW(",\"num_hidden_layers\":2,\"vocab_size\":1000" MC3_MLA), WT_ESHAPE,
	           "[128, 11008]", "fix config.json");
	fx_refused(tm_mc3(VHD, 0),
	           MC3_CFG_RAW(",\"intermediate_size\":192,\"vocab_size\":1000" MC3_MLA),
	           WT_ENOTFOUND, "model.layers.2", "missing");
	fx_refused(tm_mc3(VHD, 0),
	           MC3_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                       "\"vocab_size\":1000,\"kv_lora_rank\":32,\"qk_nope_head_dim\":16,"
	                       "\"qk_rope_head_dim\":8"),
	           WT_ESHAPE, "q_a_layernorm.weight", "[768]");
	fx_refused(tm_mc3(VHD, 0),
	           MC3_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                       "\"vocab_size\":1000,\"q_lora_rank\":64,\"kv_lora_rank\":32"),
	           WT_ESHAPE, "kv_a_proj_with_mqa", "[64, 128]");
}

static void test_minicpm3_errors(void **state)
{
	(void)state;
	fx_refused(tm_mc3(VHD, 1), MC3_CFG(UNTIED ",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(tm_mc3(VHD, 1), MC3_CFG(UNTIED ",\"attention_bias\":true"), WT_EUNSUPPORTED,
	           "attention_bias", "without biases");
	fx_refused(tm_mc3(VHD, 1), MC3_CFG(UNTIED ",\"num_experts\":8,\"num_experts_per_tok\":2"),
	           WT_EUNSUPPORTED, "num_experts is 8", "MiniCPM-MoE");
	fx_refused(tm_mc3(VHD, 1),
	           MC3_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                       "\"vocab_size\":1000,\"q_lora_rank\":null" UNTIED),
	           WT_EUNSUPPORTED, "q_lora_rank is null", "q_a_proj / q_b_proj");
	fx_refused(tm_mc3(VHD, 1), MC3_CFG(UNTIED ",\"v_head_dim\":24"), WT_ESHAPE, "kv_b_proj",
	           "[320, 32]");
	fx_refused(tm_mc3(VHD, 1),
	           MC3_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,"
	                       "\"vocab_size\":1000,\"q_lora_rank\":64,\"kv_lora_rank\":32,"
	                       "\"qk_nope_head_dim\":16,\"qk_rope_head_dim\":0" UNTIED),
	           WT_ESHAPE, "qk_rope_head_dim", "> 0");
	tm_model *m = tm_mc3(VHD, 1);
	tm_add2(m, A1 "q_a_proj.bias", QLR, 0);
	fx_refused(m, MC3_CFG(UNTIED), WT_EUNSUPPORTED, "q_a_proj.bias", "unknown");
	m = tm_mc3(VHD, 1);
	tm_add2(m, L1 "mlp.down_proj.bias", HID, 0);
	fx_refused(m, MC3_CFG(UNTIED), WT_EUNSUPPORTED, "down_proj.bias", "unknown");
	m = tm_mc3(VHD, 1);
	tm_add2(m, A1 "q_proj.weight", NH * QK, HID);
	fx_refused(m, MC3_CFG(UNTIED), WT_EUNSUPPORTED, "q_proj.weight", "q_lora_rank");
	m = tm_mc3(VHD, 1);
	tm_remove(m, KVBP);
	fx_refused(m, MC3_CFG(UNTIED), WT_ENOTFOUND, "kv_b_proj", "missing");
	m = tm_mc3(VHD, 1);
	tm_remove(m, UP);
	fx_refused(m, MC3_CFG(UNTIED), WT_ENOTFOUND, "up_proj", "missing");
	fx_refused_tp(tm_mc3(VHD, 1), MC3_CFG(UNTIED), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_mc3(VHD, 1), MC3_CFG(UNTIED), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minicpm3_slices),   cmocka_unit_test(test_minicpm3_tp8_tied),
	    cmocka_unit_test(test_minicpm3_quant),    cmocka_unit_test(test_minicpm3_coverage),
	    cmocka_unit_test(test_minicpm3_defaults), cmocka_unit_test(test_minicpm3_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
