/*
 * test_shardmap_eagle1.c — EAGLE-1 draft heads (llama_eagle: EagleLlamaForCausalLM, e.g.
 * yuhuili/EAGLE-LLaMA3-Instruct-8B) cut as vLLM's llama_eagle.py loads them: the draft module's
 * names (layers.N., fc., embed_tokens.) under vLLM's model.*; Llama's layers (q/k/v fused by
 * heads, o_proj / down_proj by columns, gate_up by rows, norms replicated) without layer 0's
 * input_layernorm; fc [hid, 2 hid] whole on every rank and never quantized; embed_tokens skipped
 * (shared with the target). Hand slices at TP 2 / 4, the attention biases, int8-channel TP 2,
 * fp8-channel TP 4, coverage TP 1/2/4/8, the refusals (what vLLM's loader fails on). Seeds fixed
 * and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00e1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2 (d 16), I 192, V 1000, 2 layers */
#define HID 128
#define HD  16
#define I   192
#define E1_CFG(extra)                                                                              \
	"{\"architectures\":[\"EagleLlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":" \
	"128,"                                                                                     \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":192,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"rms_norm_eps\":1e-05" extra "}"

enum {
	E1_EMB = 1 << 0,  /* embed_tokens.weight */
	E1_BIAS = 1 << 1, /* q/k/v and o_proj biases */
};

static void e1_add(tm_model *m, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[160];
	snprintf(n, sizeof(n), "layers.%d.%s", i, leaf);
	tm_add2(m, n, a, b);
}

/* yuhuili's EAGLE-1 layout (BF16), two layers, with `fl`. */
static tm_model *e1_model(int fl)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	for (int i = 0; i < 2; i++) {
		e1_add(m, i, "self_attn.q_proj.weight", 8 * HD, HID);
		e1_add(m, i, "self_attn.k_proj.weight", 2 * HD, HID);
		e1_add(m, i, "self_attn.v_proj.weight", 2 * HD, HID);
		e1_add(m, i, "self_attn.o_proj.weight", HID, 8 * HD);
		e1_add(m, i, "mlp.gate_proj.weight", I, HID);
		e1_add(m, i, "mlp.up_proj.weight", I, HID);
		e1_add(m, i, "mlp.down_proj.weight", HID, I);
		e1_add(m, i, "post_attention_layernorm.weight", HID, 0);
		if (i > 0)
			e1_add(m, i, "input_layernorm.weight", HID, 0);
		if (fl & E1_BIAS) {
			e1_add(m, i, "self_attn.q_proj.bias", 8 * HD, 0);
			e1_add(m, i, "self_attn.k_proj.bias", 2 * HD, 0);
			e1_add(m, i, "self_attn.v_proj.bias", 2 * HD, 0);
			e1_add(m, i, "self_attn.o_proj.bias", HID, 0);
		}
	}
	tm_add2(m, "fc.weight", HID, 2 * HID);
	if (fl & E1_EMB)
		tm_add2(m, "embed_tokens.weight", 1000, HID);
	return m;
}

/* Rank r of T's layer i: qkv_proj [q_r; k_r; v_r], o_proj / down_proj by columns, gate_up rows,
 * the norms whole (input_layernorm from layer 1 on). */
static void e1_layer_is(const fx *f, uint32_t r, uint32_t T, int i)
{
	char rt[80], ck[80], a[160], b[160], c[160], d[160];
#define N(buf, p, s) (snprintf(buf, sizeof(buf), "%s%s", p, s), buf)
	snprintf(rt, sizeof(rt), "model.layers.%d.", i);
	snprintf(ck, sizeof(ck), "layers.%d.", i);
	int64_t kvl = 2 >= T ? 2 / T : 1;
	shp(f, r, N(a, rt, "self_attn.qkv_proj.weight"), 2, (8 / T + 2 * kvl) * HD, HID, 0);
	fx_qkv_is(f, r, T, a, N(b, ck, "self_attn.q_proj.weight"),
	          N(c, ck, "self_attn.k_proj.weight"), N(d, ck, "self_attn.v_proj.weight"), 8, 2,
	          HD);
	cols_of(f, r, T, N(a, rt, "self_attn.o_proj.weight"), N(b, ck, "self_attn.o_proj.weight"),
	        HID, 8 * HD);
	fx_gate_up_is(f, r, T, N(a, rt, "mlp.gate_up_proj.weight"),
	              N(b, ck, "mlp.gate_proj.weight"), N(c, ck, "mlp.up_proj.weight"), I);
	cols_of(f, r, T, N(a, rt, "mlp.down_proj.weight"), N(b, ck, "mlp.down_proj.weight"), HID,
	        I);
	repl_from(f, r, N(a, rt, "post_attention_layernorm.weight"),
	          N(b, ck, "post_attention_layernorm.weight"));
	if (i > 0)
		repl_from(f, r, N(a, rt, "input_layernorm.weight"),
		          N(b, ck, "input_layernorm.weight"));
	else
		assert_true(tm_ix(f->p, r, N(a, rt, "input_layernorm.weight")) < 0);
#undef N
}

/* TP 2 and 4 by hand; fc whole; embed_tokens skipped (the target's is shared). */
static void test_eagle1_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, e1_model(E1_EMB), E1_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "llama_eagle");
		assert_true(fx_skipped(&f, "embed_tokens.weight"));
		for (uint32_t r = 0; r < T; r++) {
			e1_layer_is(&f, r, T, 0);
			e1_layer_is(&f, r, T, 1);
			repl_from(&f, r, "model.fc.weight", "fc.weight");
			shp(&f, r, "model.fc.weight", 2, HID, 2 * HID, 0);
			/* 5 + 6 layer tensors, fc */
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 12);
		}
		fx_close(&f);
	}
}

/* Llama's optional attention biases: q/k/v's fused by heads, o_proj's whole. */
static void test_eagle1_biases(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, e1_model(E1_BIAS), E1_CFG(",\"attention_bias\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_qkv_is(&f, r, 2, "model.layers.1.self_attn.qkv_proj.bias",
		          "layers.1.self_attn.q_proj.bias", "layers.1.self_attn.k_proj.bias",
		          "layers.1.self_attn.v_proj.bias", 8, 2, HD);
		repl_from(&f, r, "model.layers.1.self_attn.o_proj.bias",
		          "layers.1.self_attn.o_proj.bias");
	}
	fx_close(&f);
}

static const char *const e1_keep[] = {"model.fc.weight", "model.layers.1.input_layernorm.weight"};
static const char *const e1_quant[] = {
    "model.layers.0.self_attn.qkv_proj.weight", "model.layers.0.self_attn.o_proj.weight",
    "model.layers.1.mlp.gate_up_proj.weight", "model.layers.1.mlp.down_proj.weight"};

/* int8-channel TP 2: the layers' Linears quantized (rank 1's layer-0 qkv_proj codes), fc BF16
 * (an nn.Linear no quant_config reaches); fp8-channel TP 4 alike. */
static void test_eagle1_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, e1_model(0), E1_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(e1_keep),
	              FX_N(e1_quant));
	fx_qkv_int8_is(&f, 1, 2, "model.layers.0.self_attn.qkv_proj.weight",
	               "layers.0.self_attn.q_proj.weight", "layers.0.self_attn.k_proj.weight",
	               "layers.0.self_attn.v_proj.weight", 8, 2, HD, HID);
	repl_from(&f, 1, "model.fc.weight", "fc.weight");
	fx_close(&f);
	fx_open_quant(&f, e1_model(0), E1_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(e1_keep),
	              FX_N(e1_quant));
	fx_close(&f);
}

static void test_eagle1_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(e1_model(E1_EMB | E1_BIAS), E1_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_eagle1_errors(void **state)
{
	(void)state;
	tm_model *m = e1_model(0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	fx_refused(m, E1_CFG(""), WT_EUNSUPPORTED, "lm_head.weight", "unknown tensor");
	m = e1_model(0);
	tm_add2(m, "model.norm.weight", HID, 0);
	fx_refused(m, E1_CFG(""), WT_EUNSUPPORTED, "model.norm.weight", "without model.");
	fx_refused(e1_model(0), E1_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED, "hidden_act",
	           "silu");
	static const char *const stray[] = {"norm.weight", "fc.bias", "embedding_layernorm.weight"};
	for (size_t k = 0; k < sizeof(stray) / sizeof(stray[0]); k++) {
		m = e1_model(0);
		tm_add2(m, stray[k], HID, 0);
		fx_refused(m, E1_CFG(""), WT_EUNSUPPORTED, stray[k], "unknown tensor");
	}
	m = e1_model(0);
	tm_add2(m, "layers.0.input_layernorm.weight", HID, 0);
	fx_refused(m, E1_CFG(""), WT_EUNSUPPORTED, "layers.0.input_layernorm.weight", "Identity");
	m = e1_model(0);
	tm_remove(m, "layers.1.input_layernorm.weight");
	fx_refused(m, E1_CFG(""), WT_ENOTFOUND, "layers.1.input_layernorm.weight", "missing");
	m = e1_model(0);
	tm_remove(m, "fc.weight");
	tm_add2(m, "fc.weight", HID, 3 * HID);
	fx_refused(m, E1_CFG(""), WT_ESHAPE, "fc.weight", "[128, 256]");
	fx_refused_tp(e1_model(0), E1_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eagle1_slices), cmocka_unit_test(test_eagle1_biases),
	    cmocka_unit_test(test_eagle1_quant),  cmocka_unit_test(test_eagle1_coverage),
	    cmocka_unit_test(test_eagle1_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
