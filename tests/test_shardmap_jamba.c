/*
 * test_shardmap_jamba.c — Jamba (JambaForCausalLM, jamba): Mamba (v1) layers cut as vLLM's
 * MambaMixer loads them (in_proj's x / z halves each split, conv1d and its bias by
 * channels, x_proj by its input columns, dt_proj and its bias, A_log and D by channels,
 * out_proj by columns, the dt / B / C norms whole, none of them quantized), Llama's
 * attention in the layers attn_layer_period / attn_layer_offset pick, the router and
 * experts (stacked as w13 / w2) in the layers expert_layer_period / expert_layer_offset
 * pick, a dense MLP elsewhere. Hand-computed slices at TP 2, TP 4, TP 2 x EP 2, int8
 * codes, coverage over several layouts, the bias switches, JambaConfig's defaults and the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0041ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

#include "test_shardmap_jamba_fx.h"

/* Layer 1's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts EXP = {
    W13, W2, FF1 "experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, 96};

static void test_jb_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_jb(), JB_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "jamba");
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		mamba_is(&f, r, r, 2);
		attn_is(&f, r, r, 2);
		mlp_is(&f, r, r, 2);
	}
	/* the layer kinds: layer 2 attention with a dense MLP, layer 3 Mamba with experts */
	assert_true(tm_ix(f.p, 0, "model.layers.2.mamba.in_proj.weight") < 0);
	assert_true(tm_ix(f.p, 0, "model.layers.3.self_attn.qkv_proj.weight") < 0);
	assert_true(tm_ix(f.p, 0, "model.layers.2.feed_forward.experts.w13_weight") < 0);
	shp(&f, 1, "model.layers.3.mamba.x_proj.weight", 2, 40, 128, 0);
	shp(&f, 1, "model.layers.3.feed_forward.experts.w13_weight", 3, 4, 96, HID);
	repl(&f, 1, "model.final_layernorm.weight");
	fx_close(&f);
}

static void test_jb_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_jb(), JB_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		mamba_is(&f, r, r, 4);
		attn_is(&f, r, r, 4);
		mlp_is(&f, r, r, 4);
	}
	fx_close(&f);
}

/* TP 2 x EP 2: ep rank 1 (ranks 2, 3) holds experts 2, 3 whole (up_gate: [up_j; gate_j]);
 * the mixer, the attention and the dense MLP follow the tp rank. */
static void test_jb_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_jb(), JB_OK, 2, 2, 1, true);
	fx_experts_are(&f, &EXP, 3, 2, 2, 0, 96, true);
	fx_experts_are(&f, &EXP, 2, 2, 2, 0, 96, true);
	mamba_is(&f, 3, 1, 2);
	mamba_is(&f, 2, 0, 2);
	attn_is(&f, 3, 1, 2);
	fx_close(&f);
}

/* int8-channel at TP 2: q/k/v, o_proj, the dense MLP and the experts quantized; every
 * tensor of the Mamba mixer (vLLM builds its linears without quant_config), the norms and
 * the router keep their dtype without a scale. */
static void test_jb_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_jb(), JB_OK, &l, true);
	static const char *const keep[] = {INP,
	                                   CONV,
	                                   CONVB,
	                                   XP,
	                                   M0 "dt_proj.weight",
	                                   M0 "dt_proj.bias",
	                                   M0 "A_log",
	                                   M0 "D",
	                                   OUTP,
	                                   M0 "dt_layernorm.weight",
	                                   FF1 "router.weight",
	                                   "model.layers.2.input_layernorm.weight"};
	static const char *const q8[] = {
	    QKV2, ATT2 "o_proj.weight", FF0 "gate_up_proj.weight", FF0 "down_proj.weight", W13, W2};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	mamba_is(&f, 1, 1, 2);
	const char *gu = FF0 "gate_up_proj.weight";
	char gus[200];
	snprintf(gus, sizeof(gus), "%s_scale", gu);
	shp(&f, 1, gus, 2, 96, 1, 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, gu);
	const float *sc = (const float *)out_bytes(&f, 1, gus);
	size_t rowb;
	const uint16_t *g = (const uint16_t *)src_rows(&f, FF0 "gate_proj.weight", 48, &rowb);
	const uint16_t *u = (const uint16_t *)src_rows(&f, FF0 "up_proj.weight", 48, &rowb);
	for (int64_t row = 0; row < 48; row++) {
		int8_row_is(q + row * HID, sc[row], g + row * HID, HID);
		int8_row_is(q + (48 + row) * HID, sc[48 + row], u + row * HID, HID);
	}
	fx_close(&f);
}

/* mamba_proj_bias: in_proj.bias cut like its weight, out_proj.bias whole; mamba_conv_bias
 * false: no conv1d.bias. */
static void test_jb_biases(void **state)
{
	(void)state;
	jb_dims o = JB_STD;
	o.conv_bias = 0;
	o.proj_bias = 1;
	fx f;
	fx_open(&f, tm_jb_d(&o), JB_CFG(",\"mamba_conv_bias\":false,\"mamba_proj_bias\":true"), 2,
	        1, 0, true);
	const char *b = M0 "in_proj.bias";
	shp(&f, 1, b, 1, 256, 0, 0);
	rows_at(&f, 1, b, 0, b, 128, 128);
	rows_at(&f, 1, b, 128, b, 384, 128);
	repl(&f, 1, M0 "out_proj.bias");
	assert_true(tm_ix(f.p, 1, CONVB) < 0);
	fx_close(&f);
}

/* num_experts 1: every layer a dense MLP (JambaMLP); an all-Mamba stack (offset >= L). */
static void test_jb_dense(void **state)
{
	(void)state;
	jb_dims o = {"MMMM", "DDDD", 1, 0};
	fx f;
	fx_open(&f, tm_jb_d(&o),
	        "{\"architectures\":[\"JambaForCausalLM\"],\"model_type\":\"jamba\","
	        "\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,"
	        "\"intermediate_size\":96,\"vocab_size\":1003,\"num_hidden_layers\":4,"
	        "\"mamba_d_state\":16,\"mamba_d_conv\":4,\"mamba_expand\":2,\"num_experts\":1}",
	        2, 1, 0, true);
	mamba_is(&f, 1, 1, 2);
	shp(&f, 0, "model.layers.1.feed_forward.gate_up_proj.weight", 2, 96, HID, 0);
	assert_true(tm_ix(f.p, 0, W13) < 0);
	fx_close(&f);
}

static void test_jb_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}};
	coverage(tm_jb(), JB_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* JambaConfig's class defaults fill what config.json leaves out. */
static void test_jb_config_defaults(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"JambaForCausalLM\"], \"model_type\": \"jamba\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_int_equal(c.vocab_size, 65536);
	assert_int_equal(c.intermediate_size, 14336);
	assert_int_equal(c.num_experts, 16);
	assert_int_equal(c.moe_intermediate_size, 14336);
	assert_int_equal(c.jamba_attn_period, 8);
	assert_int_equal(c.jamba_attn_offset, 4);
	assert_int_equal(c.jamba_expert_period, 2);
	assert_int_equal(c.jamba_expert_offset, 1);
	assert_int_equal(c.mamba_d_state, 16);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_expand, 2);
	assert_int_equal(c.mamba_dt_rank, -1); /* auto */
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	static const char given[] = "{\"architectures\": [\"JambaForCausalLM\"], "
	                            "\"model_type\": \"jamba\", \"mamba_dt_rank\": 12, "
	                            "\"attn_layer_offset\": 0, \"mamba_conv_bias\": false}";
	assert_int_equal(ckpt_config_parse(given, strlen(given), &c, &err), WT_OK);
	assert_int_equal(c.mamba_dt_rank, 12);
	assert_int_equal(c.jamba_attn_offset, 0);
	assert_false(c.mamba_conv_bias);
	ckpt_config_clear(&c);
	/* another model type gets none of them */
	static const char llama[] = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
	                            "64, \"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
	                            "\"vocab_size\": 10, \"attn_layer_period\": 0}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.jamba_attn_period, -1);
	assert_int_equal(c.mamba_dt_rank, -1);
	ckpt_config_clear(&c);
}

/* Layouts vLLM refuses: the numbers and a layout that works. */
static void test_jb_layouts(void **state)
{
	(void)state;
	fx_refused_tp(tm_jb(), JB_OK, 8, WT_ELAYOUT, "does not divide num_attention_heads 4",
	              "use tp_size 1, 2 or 4");
	/* all Mamba at TP 3: the mixer's 256 channels do not split in three */
	jb_dims o = {"MMMM", "DEDE", 1, 0};
	fx_refused_tp(tm_jb_d(&o), JB_CFG0_ALLM, 3, WT_ELAYOUT, "mamba_expand * hidden_size 256",
	              "use tp_size");
}

/* Configs that misdescribe the model, and checkpoints that miss or add tensors. */
static void test_jb_errors(void **state)
{
	(void)state;
	fx_refused_tp(tm_jb(),
	              "{" JB_BASE0
	              ",\"num_experts\":4,\"attn_layer_period\":4,\"attn_layer_offset\":4}",
	              2, WT_ECORRUPT, "attn_layer_offset 4", "attn_layer_period 4");
	fx_refused_tp(tm_jb(), JB_CFGX(",\"num_experts\":4,\"expert_layer_offset\":2"), 2,
	              WT_ECORRUPT, "expert_layer_offset 2", "expert_layer_period 2");
	fx_refused_tp(tm_jb(), JB_CFG(",\"head_dim\":16"), 2, WT_ECORRUPT, "head_dim 16",
	              "hidden_size 128");
	/* attention in layer 1: its Mamba tensors are unknown there */
	fx_refused_tp(
	    tm_jb(),
	    "{" JB_BASE0 ",\"num_experts\":4,\"attn_layer_period\":4,\"attn_layer_offset\":1}", 2,
	    WT_EUNSUPPORTED, "model.layers.1.mamba", "attn_layer_period, attn_layer_offset");
	/* experts in layer 0: its dense MLP is unknown there */
	fx_refused_tp(tm_jb(), JB_CFGX(",\"num_experts\":4,\"expert_layer_offset\":0"), 2,
	              WT_EUNSUPPORTED, "model.layers.0.feed_forward", "expert_layer_period");
	/* num_experts 1: every MLP dense, so layer 1's experts are unknown */
	fx_refused_tp(tm_jb(), JB_CFGX(",\"num_experts\":1,\"expert_layer_offset\":1"), 2,
	              WT_EUNSUPPORTED, "model.layers.1", "num_experts");
	/* mamba_conv_bias (true by default) needs conv1d.bias; false refuses one */
	tm_model *m = tm_jb();
	tm_remove(m, CONVB);
	fx_refused_tp(m, JB_OK, 2, WT_ENOTFOUND, CONVB, "missing");
	fx_refused_tp(tm_jb(), JB_CFG(",\"mamba_conv_bias\":false"), 2, WT_EUNSUPPORTED, CONVB,
	              "mamba_conv_bias is false");
	m = tm_jb();
	tm_add2(m, M0 "out_proj.bias", HID, 0);
	fx_refused_tp(m, JB_OK, 2, WT_EUNSUPPORTED, M0 "out_proj.bias", "mamba_proj_bias");
	/* a dt rank the checkpoint does not have: x_proj's rows disagree */
	fx_refused_tp(tm_jb(), JB_CFG(",\"mamba_dt_rank\":16"), 2, WT_ESHAPE,
	              "model.layers.0.mamba.", "implies [");
	/* a Mamba tensor in the attention layer */
	m = tm_jb();
	tm_add2(m, "model.layers.2.mamba.D", 256, 0);
	fx_refused_tp(m, JB_OK, 2, WT_EUNSUPPORTED, "model.layers.2.mamba.D", "an attention layer");
	m = tm_jb();
	tm_remove(m, M0 "b_layernorm.weight");
	fx_refused_tp(m, JB_OK, 2, WT_ENOTFOUND, M0 "b_layernorm.weight", "missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jb_tp2),      cmocka_unit_test(test_jb_tp4),
	    cmocka_unit_test(test_jb_ep),       cmocka_unit_test(test_jb_quant),
	    cmocka_unit_test(test_jb_biases),   cmocka_unit_test(test_jb_dense),
	    cmocka_unit_test(test_jb_coverage), cmocka_unit_test(test_jb_config_defaults),
	    cmocka_unit_test(test_jb_layouts),  cmocka_unit_test(test_jb_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
