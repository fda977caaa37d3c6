/*
 * test_shardmap_smollm3.c — SmolLM3 (SmolLM3ForCausalLM): Llama's table (fused q/k/v,
 * o_proj by columns, merged MLP), tied embeddings when tie_word_embeddings is absent
 * (PretrainedConfig's true: no lm_head emitted), attention_bias giving q/k/v AND o_proj
 * their biases and mlp_bias the MLP's, each required when true and unknown when false;
 * layer_types checked (one full_attention / sliding_attention entry per layer); NoPE layers
 * and windows change no tensor. Hand-computed slices at TP 2 and TP 4 (KV 2 < 4), coverage,
 * SmolLM3Config's defaults and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed5301ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 256, H 8, KV 2 (d 32), I 512, V 1000, 4 layers */
#define HID 256
#define SM_CFG(extra)                                                                              \
	"{\"architectures\":[\"SmolLM3ForCausalLM\"],\"model_type\":\"smollm3\","                  \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":4,"                   \
	"\"no_rope_layers\":[1,1,1,0]" extra "}"
#define L3 "model.layers.3."
#define A3 L3 "self_attn."

/* attention biases (q/k/v/o) when abias, MLP biases when mbias, lm_head when untied */
static tm_model *tm_smol(int abias, int mbias, int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, lm_head);
	char b[200];
	for (int i = 0; i < 4; i++) {
		tm_attn(m, i, 8, 2, 32, HID, abias, 0);
		tm_mlp(m, i, "mlp.", 512, HID);
		if (abias) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
			tm_add2(m, b, HID, 0);
		}
		if (mbias) {
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate_proj.bias");
			tm_add2(m, b, 512, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.up_proj.bias");
			tm_add2(m, b, 512, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "mlp.down_proj.bias");
			tm_add2(m, b, HID, 0);
		}
	}
	return m;
}

static void test_smollm3_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_smol(0, 0, 0), SM_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "smollm3");
	/* the NoPE layer 3 is sliced as any other: q heads 4..7, kv head 1 */
	const char *qkv = A3 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 2 * 32, HID, 0);
	rows_are(&f, 1, qkv, 0, A3 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A3 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A3 "v_proj.weight", 32, 32);
	cols_at(&f, 1, A3 "o_proj.weight", 0, A3 "o_proj.weight", HID, 256, 128, 128);
	const char *gu = L3 "mlp.gate_up_proj.weight";
	rows_are(&f, 1, gu, 0, L3 "mlp.gate_proj.weight", 256, 256);
	rows_are(&f, 1, gu, 256, L3 "mlp.up_proj.weight", 256, 256);
	cols_at(&f, 0, L3 "mlp.down_proj.weight", 0, L3 "mlp.down_proj.weight", HID, 512, 0, 256);
	assert_true(tm_ix(f.p, 0, A3 "qkv_proj.bias") < 0);
	/* tie_word_embeddings absent: tied, no lm_head emitted */
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	shp(&f, 1, "model.embed_tokens.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 512, 488);
	fx_close(&f);
}

/* TP 4 > KV 2 with every bias: kv head r / 2 on rank r with its bias rows; o_proj's bias
 * (attention_bias) and down_proj's (mlp_bias) whole on every rank; untied. */
static void test_smollm3_tp4_bias(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_smol(1, 1, 1),
	        SM_CFG(",\"attention_bias\":true,\"mlp_bias\":true,\"tie_word_embeddings\":false"),
	        4, 1, 0, true);
	const char *qkvb = A3 "qkv_proj.bias";
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, qkvb, 1, 64 + 2 * 32, 0, 0);
		rows_are(&f, r, qkvb, 0, A3 "q_proj.bias", 64 * r, 64);
		rows_are(&f, r, qkvb, 64, A3 "k_proj.bias", 32 * (r / 2), 32);
		rows_are(&f, r, qkvb, 96, A3 "v_proj.bias", 32 * (r / 2), 32);
		rows_are(&f, r, A3 "o_proj.bias", 0, A3 "o_proj.bias", 0, HID);
		rows_are(&f, r, L3 "mlp.down_proj.bias", 0, L3 "mlp.down_proj.bias", 0, HID);
		rows_are(&f, r, L3 "mlp.gate_up_proj.bias", 0, L3 "mlp.gate_proj.bias", 128 * r,
		         128);
		rows_are(&f, r, L3 "mlp.gate_up_proj.bias", 128, L3 "mlp.up_proj.bias", 128 * r,
		         128);
	}
	shp(&f, 3, "lm_head.weight", 2, 256, HID, 0);
	rows_are(&f, 3, "lm_head.weight", 0, "lm_head.weight", 768, 232);
	fx_close(&f);
}

static void test_smollm3_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_smol(0, 0, 0), SM_CFG(""), 2, lays, 4);
	coverage(tm_smol(1, 1, 1),
	         SM_CFG(",\"attention_bias\":true,\"mlp_bias\":true,\"tie_word_embeddings\":false"),
	         2, lays, 4);
}

static void test_smollm3_errors(void **state)
{
	(void)state;
	/* attention_bias covers o_proj's bias too: false (the default) makes the biases
	 * unknown, true without o_proj's is a missing tensor naming the key */
	fx_refused(tm_smol(1, 0, 0), SM_CFG(""), WT_EUNSUPPORTED, "_proj.bias", "attention_bias");
	tm_model *m = tm_smol(1, 0, 0);
	tm_remove(m, A3 "o_proj.bias");
	fx_refused(m, SM_CFG(",\"attention_bias\":true"), WT_ENOTFOUND, A3 "o_proj.bias",
	           "attention_bias true");
	fx_refused(tm_smol(0, 1, 0), SM_CFG(""), WT_EUNSUPPORTED, "mlp.", "mlp_bias");
	fx_refused(tm_smol(0, 0, 0), SM_CFG(",\"mlp_bias\":true"), WT_ENOTFOUND, "mlp.",
	           "mlp_bias true");
	/* untied by config.json: the lm_head is required */
	fx_refused(tm_smol(0, 0, 0), SM_CFG(",\"tie_word_embeddings\":false"), WT_ENOTFOUND,
	           "lm_head.weight", "missing");
	/* layer_types: one per layer, of the two types */
	fx_refused(tm_smol(0, 0, 0), SM_CFG(",\"layer_types\":[\"full_attention\"]"), WT_ECORRUPT,
	           "layer_types has 1 entries", "num_hidden_layers is 4");
	fx_refused(
	    tm_smol(0, 0, 0),
	    SM_CFG(",\"layer_types\":[\"full_attention\",\"full_attention\",\"full_attention\","
	           "\"chunked_attention\"]"),
	    WT_ECORRUPT, "layer_types[3]", "SmolLM3");
	/* num_key_value_heads left out is SmolLM3Config's 4, not num_attention_heads */
	fx_refused(tm_smol(0, 0, 0),
	           "{\"architectures\":[\"SmolLM3ForCausalLM\"],\"model_type\":\"smollm3\","
	           "\"hidden_size\":256,\"num_attention_heads\":8,\"intermediate_size\":512,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":4}",
	           WT_ESHAPE, "k_proj", "[128, 256]");
	/* a sliding layer list is math: it plans */
	fx f;
	fx_open(&f, tm_smol(0, 0, 0),
	        SM_CFG(",\"sliding_window\":8,\"layer_types\":[\"full_attention\","
	               "\"sliding_attention\",\"full_attention\",\"sliding_attention\"]"),
	        2, 1, 0, false);
	shp(&f, 0, A3 "qkv_proj.weight", 2, 192, HID, 0);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_smollm3_tp2),
	    cmocka_unit_test(test_smollm3_tp4_bias),
	    cmocka_unit_test(test_smollm3_coverage),
	    cmocka_unit_test(test_smollm3_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
