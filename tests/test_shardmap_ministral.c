/*
 * test_shardmap_ministral.c — Ministral (MinistralForCausalLM: Ministral-8B-Instruct-2410)
 * cut as vLLM's llama.py loads it: Mistral's tensors exactly (q/k/v fused by heads, gate/up
 * merged, o_proj / down_proj by columns, RMSNorms replicated); layer_types (sliding /
 * full per layer) checked as the hybrid sliding-window families' are. Hand-computed slices
 * at TP 2, coverage over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed001cull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2, head size 16, I 256, V 1000, 2 layers */
#define HID 128
#define MI_CFG(extra)                                                                              \
	"{\"architectures\":[\"MinistralForCausalLM\"],\"model_type\":\"ministral\","              \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"sliding_window\":4" extra "}"
#define MI_TYPED MI_CFG(",\"layer_types\":[\"sliding_attention\",\"full_attention\"]")
#define L1       "model.layers.1."
#define A1       L1 "self_attn."

static tm_model *tm_ministral(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_lin_l(m, i, "self_attn.q_proj.weight", HID, HID, 0);
		tm_lin_l(m, i, "self_attn.k_proj.weight", 32, HID, 0);
		tm_lin_l(m, i, "self_attn.v_proj.weight", 32, HID, 0);
		tm_lin_l(m, i, "self_attn.o_proj.weight", HID, HID, 0);
		tm_lin_l(m, i, "mlp.gate_proj.weight", 256, HID, 0);
		tm_lin_l(m, i, "mlp.up_proj.weight", 256, HID, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", HID, 256, 0);
	}
	return m;
}

static void test_ministral_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ministral(), MI_TYPED, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "ministral");
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 96, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 16 * r, 16);
		rows_are(&f, r, A1 "qkv_proj.weight", 80, A1 "v_proj.weight", 16 * r, 16);
		cols_of(&f, r, 2, A1 "o_proj.weight", A1 "o_proj.weight", HID, HID);
		rows_are(&f, r, L1 "mlp.gate_up_proj.weight", 0, L1 "mlp.gate_proj.weight", 128 * r,
		         128);
		rows_are(&f, r, L1 "mlp.gate_up_proj.weight", 128, L1 "mlp.up_proj.weight", 128 * r,
		         128);
		cols_of(&f, r, 2, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, 256);
		repl(&f, r, L1 "input_layernorm.weight");
		repl(&f, r, "model.norm.weight");
		rows_are(&f, r, "lm_head.weight", 0, "lm_head.weight", 512 * r, r ? 488 : 512);
	}
	fx_close(&f);
}

static void test_ministral_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ministral(), MI_TYPED, 2, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ministral(), MI_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_ministral_errors(void **state)
{
	(void)state;
	/* layer_types: one per layer, sliding_attention or full_attention */
	fx_refused(tm_ministral(), MI_CFG(",\"layer_types\":[\"full_attention\"]"), WT_ECORRUPT,
	           "layer_types has 1 entries", "one type per layer");
	fx_refused(tm_ministral(),
	           MI_CFG(",\"layer_types\":[\"full_attention\",\"chunked_attention\"]"),
	           WT_ECORRUPT, "layer_types[1]", "Ministral");
	/* Mistral's tensors have no biases */
	tm_model *m = tm_ministral();
	tm_add2(m, A1 "q_proj.bias", HID, 0);
	fx_refused(m, MI_TYPED, WT_EUNSUPPORTED, "q_proj.bias", "ministral");
	m = tm_ministral();
	tm_add2(m, L1 "mlp.down_proj.bias", HID, 0);
	fx_refused(m, MI_TYPED, WT_EUNSUPPORTED, "down_proj.bias", "ministral");
	m = tm_ministral();
	tm_remove(m, L1 "post_attention_layernorm.weight");
	fx_refused(m, MI_TYPED, WT_ENOTFOUND, "post_attention_layernorm.weight", "missing");
	/* keys left out take MinistralConfig's defaults: I 14336 */
	fx_refused(tm_ministral(),
	           "{\"architectures\":[\"MinistralForCausalLM\"],\"model_type\":\"ministral\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "14336", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ministral_tp2),
	    cmocka_unit_test(test_ministral_coverage),
	    cmocka_unit_test(test_ministral_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
