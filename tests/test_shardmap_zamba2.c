/*
 * test_shardmap_zamba2.c — Zamba2 (Zamba2ForCausalLM, zamba2), cut as vLLM's zamba2.py /
 * MambaMixer2 loads it: every layer's Mamba2 mixer (mamba. or a hybrid layer's
 * mamba_decoder.mamba.) as Granite 4.0's; a shared block under the first hybrid layer
 * running it: q / k / v fused by heads into qkv_proj (one kv head per head, head_dim 2 hid /
 * H), o_proj by columns, gate_up_proj re-cut into [gate_r; up_r], down_proj by columns, the
 * LoRA adapters' A by rows of adapter_rank and B by rows (q / k / v: heads; gate_up:
 * [gate_r; up_r]); linear whole on every rank; every Linear quantized, norms never.
 * Hand-computed slices at TP 2 and 4, int8 codes, coverage over TP 1-8, Zamba2Config's
 * defaults and key names, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>
#include <jansson.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00a2ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 64, layers mamba / hybrid / hybrid / mamba / hybrid, 2 blocks (layer 1: block 0,
 * applications 0 and 2; layer 2: block 1, application 1); attention 8 heads of 16 over 128,
 * I 128, adapter_rank 8; the mixer 8 heads of 16 (Im 128), G groups, state 16, conv 4; V
 * 1003, tied (an lm_head.weight only where a test adds one) */
#define HID 64
#define Z2_BASE                                                                                    \
	"\"architectures\":[\"Zamba2ForCausalLM\"],\"model_type\":\"zamba2\",\"hidden_size\":64,"  \
	"\"vocab_size\":1003,\"num_hidden_layers\":5,\"num_attention_heads\":8,"                   \
	"\"intermediate_size\":128,\"adapter_rank\":8,\"num_mem_blocks\":2,"                       \
	"\"layers_block_type\":[\"mamba\",\"hybrid\",\"hybrid\",\"mamba\",\"hybrid\"],"            \
	"\"mamba_d_state\":16,\"mamba_d_conv\":4,\"mamba_expand\":2,\"n_mamba_heads\":8"
#define Z2_STD_KEYS ",\"mamba_ngroups\":4,\"use_shared_attention_adapter\":true"
#define Z2_OK       "{" Z2_BASE Z2_STD_KEYS "}"
#define Z2_G8       "{" Z2_BASE ",\"mamba_ngroups\":8,\"use_shared_attention_adapter\":true}"
#define Z2_CFG(x)   z2_cfg("{" x "}")
#define S1          "model.layers.1.shared_transformer."
#define S2          "model.layers.2.shared_transformer."
#define QKV         S1 "self_attn.qkv_proj.weight"
#define OPJ         S1 "self_attn.o_proj.weight"
#define GU          S1 "feed_forward.gate_up_proj.weight"
#define DOWN        S1 "feed_forward.down_proj.weight"
#define QA2         S1 "self_attn.linear_q_adapter_list.2.0.weight"
#define VB0         S1 "self_attn.linear_v_adapter_list.0.1.weight"
#define GUA1        S2 "feed_forward.gate_up_proj_adapter_list.1.0.weight"
#define GUB1        S2 "feed_forward.gate_up_proj_adapter_list.1.1.weight"
#define LIN4        "model.layers.4.linear.weight"
#define M0          "model.layers.0.mamba."
#define M4          "model.layers.4.mamba_decoder.mamba."
#define LMH         "lm_head.weight"
#define EMB         "model.embed_tokens.weight"

/* Z2_OK with the keys of JSON object over laid over it (static; valid until the next call). */
static const char *z2_cfg(const char *over)
{
	static char buf[4096];
	json_error_t je;
	json_t *b = json_loads(Z2_OK, 0, &je), *o = json_loads(over, 0, &je);
	assert_true(b && o && json_object_update(b, o) == 0);
	char *t = json_dumps(b, JSON_COMPACT);
	assert_non_null(t);
	assert_true(strlen(t) < sizeof(buf));
	memcpy(buf, t, strlen(t) + 1);
	free(t);
	json_decref(b);
	json_decref(o);
	return buf;
}

/* The model's knobs: mixer groups, the biases (add_bias_linear), the attention adapters, an
 * lm_head.weight. */
typedef struct z2_dims {
	int g, bias, attn_ad, lm_head, rank;
} z2_dims;

static const z2_dims Z2_STD = {4, 0, 1, 0, 8};

static void add_at(tm_model *m, const char *pre, const char *leaf, int64_t a, int64_t b)
{
	char n[240];
	snprintf(n, sizeof(n), "%s%s", pre, leaf);
	tm_add2(m, n, a, b);
}

/* The Mamba2 mixer under prefix M (in_proj [2*128 + 2*G*16 + 8, 64], conv1d [128 + 2*G*16,
 * 1, 4]), its input norm n. */
static void add_mixer(tm_model *m, const char *M, const char *n, const z2_dims *o)
{
	int64_t nc = 128 + 2 * o->g * 16, rows = 128 + nc + 8;
	char b[240];
	tm_add2(m, n, HID, 0);
	add_at(m, M, "in_proj.weight", rows, HID);
	snprintf(b, sizeof(b), "%sconv1d.weight", M);
	tm_add(m, b, WT_DTYPE_INVALID, 3, nc, 1, 4);
	add_at(m, M, "conv1d.bias", nc, 0);
	add_at(m, M, "A_log", 8, 0);
	add_at(m, M, "D", 8, 0);
	add_at(m, M, "dt_bias", 8, 0);
	add_at(m, M, "norm.weight", 128, 0);
	add_at(m, M, "out_proj.weight", HID, 128);
	if (o->bias) {
		add_at(m, M, "in_proj.bias", rows, 0);
		add_at(m, M, "out_proj.bias", HID, 0);
	}
}

/* Application j's adapters in block prefix S. */
static void add_adapters(tm_model *m, const char *S, int j, const z2_dims *o)
{
	static const char *const x[] = {"q", "k", "v"};
	char b[240];
	for (int k = 0; k < 3 && o->attn_ad; k++) {
		snprintf(b, sizeof(b), "%sself_attn.linear_%s_adapter_list.%d.0.weight", S, x[k],
		         j);
		tm_add2(m, b, o->rank, 128);
		snprintf(b, sizeof(b), "%sself_attn.linear_%s_adapter_list.%d.1.weight", S, x[k],
		         j);
		tm_add2(m, b, 128, o->rank);
	}
	snprintf(b, sizeof(b), "%sfeed_forward.gate_up_proj_adapter_list.%d.0.weight", S, j);
	tm_add2(m, b, o->rank, HID);
	snprintf(b, sizeof(b), "%sfeed_forward.gate_up_proj_adapter_list.%d.1.weight", S, j);
	tm_add2(m, b, 256, o->rank);
}

static void add_block(tm_model *m, const char *S, const z2_dims *o)
{
	add_at(m, S, "input_layernorm.weight", 128, 0);
	add_at(m, S, "pre_ff_layernorm.weight", HID, 0);
	add_at(m, S, "self_attn.q_proj.weight", 128, 128);
	add_at(m, S, "self_attn.k_proj.weight", 128, 128);
	add_at(m, S, "self_attn.v_proj.weight", 128, 128);
	add_at(m, S, "self_attn.o_proj.weight", HID, 128);
	add_at(m, S, "feed_forward.gate_up_proj.weight", 256, HID);
	add_at(m, S, "feed_forward.down_proj.weight", HID, 128);
	if (o->bias) {
		add_at(m, S, "feed_forward.gate_up_proj.bias", 256, 0);
		add_at(m, S, "feed_forward.down_proj.bias", HID, 0);
	}
}

static tm_model *tm_z2_d(const z2_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 1003, HID);
	tm_add2(m, "model.final_layernorm.weight", HID, 0);
	if (o->lm_head)
		tm_add2(m, LMH, 1003, HID);
	static const int hybrid[5] = {0, 1, 1, 0, 1};
	for (int i = 0; i < 5; i++) {
		char p[80], n[120];
		if (!hybrid[i]) {
			snprintf(p, sizeof(p), "model.layers.%d.mamba.", i);
			snprintf(n, sizeof(n), "model.layers.%d.input_layernorm.weight", i);
			add_mixer(m, p, n, o);
			continue;
		}
		snprintf(p, sizeof(p), "model.layers.%d.mamba_decoder.mamba.", i);
		snprintf(n, sizeof(n), "model.layers.%d.mamba_decoder.input_layernorm.weight", i);
		add_mixer(m, p, n, o);
		snprintf(n, sizeof(n), "model.layers.%d.linear.weight", i);
		tm_add2(m, n, HID, HID);
	}
	add_block(m, S1, o);
	add_block(m, S2, o);
	add_adapters(m, S1, 0, o);
	add_adapters(m, S1, 2, o);
	add_adapters(m, S2, 1, o);
	return m;
}

static tm_model *tm_z2(void)
{
	return tm_z2_d(&Z2_STD);
}

/* Rank r's mixer under prefix M at TP T with G groups (fx_mamba2_mixer_is: 8 heads, width
 * 128, state 16, conv 4, conv1d bias and gated norm). */
static void mixer_is(const fx *f, uint32_t r, int64_t T, int64_t G, const char *M)
{
	const fx_m2 m = {128, 8, G, 16, 4, HID, true, true};
	fx_mamba2_mixer_is(f, r, T, M, &m);
}

/* Rank r's share of the shared blocks at TP T: qkv_proj [q_r; k_r; v_r] (hl = 8/T heads of
 * 16), o_proj's columns, gate_up [gate_r; up_r], down's columns, A rows of the rank, B rows of
 * its heads / [gate_r; up_r]; norms and linear whole. */
static void blocks_are(const fx *f, uint32_t r, int64_t T)
{
	int64_t q = 128 / T, il = 128 / T, rl = 8 / T;
	shp(f, r, QKV, 2, 3 * q, 128, 0);
	rows_at(f, r, QKV, 0, S1 "self_attn.q_proj.weight", r * q, q);
	rows_at(f, r, QKV, q, S1 "self_attn.k_proj.weight", r * q, q);
	rows_at(f, r, QKV, 2 * q, S1 "self_attn.v_proj.weight", r * q, q);
	shp(f, r, OPJ, 2, HID, q, 0);
	cols_at(f, r, OPJ, 0, OPJ, HID, 128, r * q, q);
	shp(f, r, GU, 2, 2 * il, HID, 0);
	rows_at(f, r, GU, 0, GU, r * il, il);
	rows_at(f, r, GU, il, GU, 128 + r * il, il);
	cols_at(f, r, DOWN, 0, DOWN, HID, 128, r * il, il);
	shp(f, r, QA2, 2, rl, 128, 0);
	rows_at(f, r, QA2, 0, QA2, r * rl, rl);
	shp(f, r, VB0, 2, q, 8, 0);
	rows_at(f, r, VB0, 0, VB0, r * q, q);
	shp(f, r, GUA1, 2, rl, HID, 0);
	rows_at(f, r, GUA1, 0, GUA1, r * rl, rl);
	shp(f, r, GUB1, 2, 2 * il, 8, 0);
	rows_at(f, r, GUB1, 0, GUB1, r * il, il);
	rows_at(f, r, GUB1, il, GUB1, 128 + r * il, il);
	repl(f, r, LIN4);
	repl(f, r, S2 "input_layernorm.weight");
	repl(f, r, S2 "pre_ff_layernorm.weight");
	repl(f, r, "model.layers.4.mamba_decoder.input_layernorm.weight");
	repl(f, r, "model.layers.3.input_layernorm.weight");
	repl(f, r, "model.final_layernorm.weight");
}

/* The padded vocabulary (1003 -> 1024 at TP 2 and 4): rank r's rows of t. */
static void vocab_is(const fx *f, uint32_t r, int64_t T, const char *t)
{
	fx_vocab_is(f, r, T, t, 1003, 1024, HID);
}

static void test_z2_tp(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_z2(), Z2_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "zamba2");
		assert_true(shardmap_tied_lm_head(f.p)); /* vLLM's zamba2.py always ties */
		for (uint32_t r = 0; r < T; r++) {
			blocks_are(&f, r, T);
			mixer_is(&f, r, T, 4, M0);
			mixer_is(&f, r, T, 4, M4);
			vocab_is(&f, r, T, EMB);
		}
		/* 2 + 5 x 9 (norm + mixer) + 3 linear + 2 x 6 blocks (q / k / v fused) + 3 x 8
		 * adapters */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 86);
		assert_true(tm_ix(f.p, 0, S1 "self_attn.q_proj.weight") < 0);
		fx_close(&f);
	}
}

/* int8-channel at TP 2: every Linear quantized per output row (vLLM hands each the
 * quant_config: the adapters' A / B, linear, the mixer's in_proj / out_proj), the norms, the
 * mixer's conv1d / A_log / D / dt_bias and the vocabulary kept; fp8-channel at TP 4 alike. */
static void test_z2_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_z2(), Z2_OK, &l, true);
	static const char *const keep[] = {EMB,
	                                   S1 "input_layernorm.weight",
	                                   S1 "pre_ff_layernorm.weight",
	                                   M4 "conv1d.weight",
	                                   M4 "A_log",
	                                   M4 "D",
	                                   M4 "dt_bias",
	                                   M4 "norm.weight",
	                                   "model.final_layernorm.weight"};
	static const char *const q8[] = {QKV,
	                                 OPJ,
	                                 GU,
	                                 DOWN,
	                                 QA2,
	                                 VB0,
	                                 GUA1,
	                                 GUB1,
	                                 LIN4,
	                                 M4 "in_proj.weight",
	                                 M0 "out_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	size_t rowb;
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, LIN4);
	const float *sc = (const float *)out_bytes(&f, 1, LIN4 "_scale");
	const uint16_t *src = (const uint16_t *)src_rows(&f, LIN4, 0, &rowb);
	for (int64_t row = 0; row < HID; row++) /* linear whole on rank 1 too */
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	q = (const int8_t *)out_bytes(&f, 1, QA2);
	sc = (const float *)out_bytes(&f, 1, QA2 "_scale");
	src = (const uint16_t *)src_rows(&f, QA2, 4, &rowb);
	for (int64_t row = 0; row < 4; row++) /* rank 1's A rows 4..7 */
		int8_row_is(q + row * 128, sc[row], src + row * 128, 128);
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_z2(), Z2_OK, &l, false);
	assert_int_equal(info(&f, 3, GUB1)->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, LIN4)->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, S2 "input_layernorm.weight")->dtype, WT_BF16);
	fx_close(&f);
}

/* add_bias_linear: the MLP's gate_up bias cut like its weight, down's whole, the mixers'
 * in_proj / out_proj biases in both layer kinds; without use_shared_attention_adapter no q /
 * k / v adapters; an lm_head.weight dropped (always tied). */
static void test_z2_switches(void **state)
{
	(void)state;
	z2_dims o = {4, 1, 1, 0, 8};
	fx f;
	fx_open(&f, tm_z2_d(&o), Z2_CFG("\"add_bias_linear\":true"), 2, 1, 0, true);
	const char *b = S2 "feed_forward.gate_up_proj.bias";
	shp(&f, 1, b, 1, 128, 0, 0);
	rows_at(&f, 1, b, 0, b, 64, 64);
	rows_at(&f, 1, b, 64, b, 192, 64);
	repl(&f, 1, S2 "feed_forward.down_proj.bias");
	repl(&f, 1, M0 "out_proj.bias");
	repl(&f, 1, M4 "out_proj.bias");
	shp(&f, 1, M4 "in_proj.bias", 1, 196, 0, 0);
	fx_close(&f);
	o = Z2_STD;
	o.attn_ad = 0;
	o.lm_head = 1; /* dropped: the LM head is embed_tokens */
	fx_open(&f, tm_z2_d(&o), Z2_CFG("\"use_shared_attention_adapter\":false"), 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_true(tm_ix(f.p, 0, LMH) < 0);
	assert_true(fx_skipped(&f, LMH));
	assert_true(tm_ix(f.p, 0, QA2) < 0);
	fx_close(&f);
}

static void test_z2_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(tm_z2(), Z2_OK, 8, lays, sizeof(lays) / sizeof(lays[0]));
	z2_dims o = Z2_STD;
	o.g = 8;
	static const uint32_t lays8[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_z2_d(&o), Z2_G8, 8, lays8, sizeof(lays8) / sizeof(lays8[0]));
}

/* Zamba2Config's class defaults and derived keys, its key names read as the mixer's. */
static void test_z2_config(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"Zamba2ForCausalLM\"], \"model_type\": \"zamba2\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 2560);
	assert_int_equal(c.num_hidden_layers, 54);
	assert_int_equal(c.vocab_size, 32000);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 32);
	assert_int_equal(c.head_dim, 160); /* 2 x 2560 / 32 */
	assert_int_equal(c.intermediate_size, 10240);
	assert_int_equal(c.mamba_n_heads, 8);
	assert_int_equal(c.mamba_n_groups, 1);
	assert_int_equal(c.mamba_d_state, 64);
	assert_int_equal(c.mamba_d_conv, 4);
	assert_int_equal(c.mamba_expand, 2);
	assert_int_equal(c.mamba_d_head, -1);
	assert_true(c.mamba_conv_bias);
	assert_false(c.mamba_proj_bias);
	assert_int_equal(c.z2_mem_blocks, 1);
	assert_int_equal(c.z2_adapter_rank, 128);
	assert_false(c.z2_attn_adapter);
	assert_true(c.tie_word_embeddings);
	assert_int_equal(c.n_layer_types, 54);
	for (size_t i = 0; i < 54; i++) /* hybrid at 6, 12, .., 42, 47, 51 */
		assert_int_equal(c.layer_types[i],
		                 (i % 6 == 0 && i > 0 && i <= 42) || i == 47 || i == 51
		                     ? CKPT_LAYER_HYBRID
		                     : CKPT_LAYER_MAMBA);
	ckpt_config_clear(&c);
	static const char given[] =
	    "{\"architectures\": [\"Zamba2ForCausalLM\"], \"model_type\": \"zamba2\", "
	    "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"layers_block_type\": [\"hybrid\", "
	    "\"mamba\"], \"num_attention_heads\": 4, \"n_mamba_heads\": 4, \"mamba_ngroups\": 2, "
	    "\"add_bias_linear\": true, \"num_mem_blocks\": 3, \"adapter_rank\": 16, "
	    "\"use_shared_attention_adapter\": true, \"attention_head_dim\": 99, "
	    "\"mamba_headdim\": 7, \"tie_word_embeddings\": true}";
	assert_int_equal(ckpt_config_parse(given, strlen(given), &c, &err), WT_OK);
	assert_int_equal(c.head_dim, 32); /* derived, attention_head_dim ignored */
	assert_int_equal(c.intermediate_size, 256);
	assert_int_equal(c.mamba_n_heads, 4);
	assert_int_equal(c.mamba_n_groups, 2);
	assert_true(c.mamba_proj_bias);
	assert_int_equal(c.z2_mem_blocks, 3);
	assert_int_equal(c.z2_adapter_rank, 16);
	assert_true(c.z2_attn_adapter);
	assert_true(c.tie_word_embeddings);
	assert_int_equal(c.layer_types[0], CKPT_LAYER_HYBRID);
	ckpt_config_clear(&c);
	/* another model type gets none of them */
	static const char llama[] =
	    "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
	    "64, \"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
	    "\"vocab_size\": 10, \"n_mamba_heads\": 7, \"adapter_rank\": 3}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.mamba_n_heads, -1);
	assert_int_equal(c.z2_adapter_rank, -1);
	ckpt_config_clear(&c);
}

/* Layouts vLLM refuses: the numbers and a layout that works. */
static void test_z2_layouts(void **state)
{
	(void)state;
	fx_refused_tp(tm_z2(), Z2_OK, 8, WT_ELAYOUT, "does not divide mamba_n_groups 4",
	              "use tp_size 1, 2 or 4");
	z2_dims o = Z2_STD;
	o.g = 8;
	o.rank = 6;
	fx_refused_tp(tm_z2_d(&o), Z2_CFG("\"mamba_ngroups\":8,\"adapter_rank\":6"), 4, WT_ELAYOUT,
	              "adapter_rank 6", "tp_size 1 or 2");
}

/* Configs vLLM's zamba2.py cannot build as transformers does, configs that misdescribe the
 * model, and checkpoints that miss or add tensors. */
static void test_z2_errors(void **state)
{
	(void)state;
	fx_refused_tp(tm_z2(), Z2_CFG("\"tie_word_embeddings\":false"), 2, WT_EUNSUPPORTED,
	              "tie_word_embeddings false", "ties lm_head");
	fx_refused_tp(tm_z2(), Z2_CFG("\"hidden_act\":\"silu\""), 2, WT_EUNSUPPORTED, "hidden_act",
	              "gelu");
	fx_refused_tp(tm_z2(), Z2_CFG("\"use_conv_bias\":false"), 2, WT_EUNSUPPORTED,
	              "use_conv_bias", "drop the key");
	fx_refused_tp(tm_z2(), Z2_CFG("\"use_shared_mlp_adapter\":false"), 2, WT_EUNSUPPORTED,
	              "use_shared_mlp_adapter", "gate_up_proj_adapter_list");
	fx_refused_tp(tm_z2(), Z2_CFG("\"num_key_value_heads\":2"), 2, WT_EUNSUPPORTED,
	              "num_key_value_heads", "one kv");
	fx_refused_tp(tm_z2(), Z2_CFG("\"mamba_expand\":1.5"), 2, WT_EUNSUPPORTED, "mamba_expand",
	              "integer");
	fx_refused_tp(tm_z2(), Z2_CFG("\"num_attention_heads\":5"), 2, WT_ECORRUPT,
	              "num_attention_heads 5", "2 x hidden_size 128");
	fx_refused_tp(tm_z2(), Z2_CFG("\"num_hidden_layers\":4"), 2, WT_ECORRUPT,
	              "layers_block_type has 5 entries", "num_hidden_layers is 4");
	/* past 512 layers (the adapter checks are O(layers^3)): refused before any tensor */
	json_error_t je;
	json_t *big = json_loads(Z2_OK, 0, &je), *types = json_array();
	assert_true(big != NULL && types != NULL);
	for (int k = 0; k < 600; k++)
		json_array_append_new(types, json_string("hybrid"));
	json_object_set_new(big, "layers_block_type", types);
	json_object_set_new(big, "num_hidden_layers", json_integer(600));
	json_object_set_new(big, "num_mem_blocks", json_integer(600));
	char *bigs = json_dumps(big, JSON_COMPACT);
	assert_non_null(bigs);
	fx_refused_tp(tm_z2(), bigs, 2, WT_ECORRUPT, "num_hidden_layers 600 is past 512", "");
	free(bigs);
	json_decref(big);
	fx_refused_tp(tm_z2(),
	              Z2_CFG("\"layers_block_type\":[\"mamba\",\"attention\",\"hybrid\",\"mamba\","
	                     "\"hybrid\"]"),
	              2, WT_ECORRUPT, "layers_block_type[1]", "\"hybrid\"");
	fx_refused_tp(tm_z2(), Z2_CFG("\"n_mamba_heads\":6"), 2, WT_ECORRUPT, "mamba_n_heads 6",
	              "mamba_expand * hidden_size");
	/* a block saved again under a later hybrid layer; an adapter under the wrong block */
	tm_model *m = tm_z2();
	tm_add2(m, "model.layers.4.shared_transformer.pre_ff_layernorm.weight", HID, 0);
	fx_refused_tp(m, Z2_OK, 2, WT_EUNSUPPORTED, "layer 4",
	              "a shared block an earlier hybrid layer holds");
	m = tm_z2();
	tm_add2(m, S1 "feed_forward.gate_up_proj_adapter_list.1.0.weight", 8, HID);
	fx_refused_tp(m, Z2_OK, 2, WT_ESHAPE, "no adapter 1", "num_mem_blocks");
	m = tm_z2();
	tm_remove(m, S2 "self_attn.linear_k_adapter_list.1.1.weight");
	fx_refused_tp(m, Z2_OK, 2, WT_ENOTFOUND, S2 "self_attn.linear_k_adapter_list.1.1.weight",
	              "missing");
	/* attention adapters the config says are absent */
	fx_refused_tp(tm_z2(), Z2_CFG("\"use_shared_attention_adapter\":false"), 2, WT_EUNSUPPORTED,
	              "_adapter_list.", "use_shared_attention_adapter");
	/* a hybrid layer's tensors under a Mamba layer and the other way round */
	m = tm_z2();
	tm_add2(m, "model.layers.0.linear.weight", HID, HID);
	fx_refused_tp(m, Z2_OK, 2, WT_EUNSUPPORTED, "model.layers.0.linear.weight",
	              "a Mamba layer");
	m = tm_z2();
	tm_add2(m, "model.layers.1.input_layernorm.weight", HID, 0);
	fx_refused_tp(m, Z2_OK, 2, WT_EUNSUPPORTED, "model.layers.1.input_layernorm.weight",
	              "mamba_decoder.mamba.");
	/* biases add_bias_linear does not ask for */
	m = tm_z2();
	tm_add2(m, M0 "out_proj.bias", HID, 0);
	fx_refused_tp(m, Z2_OK, 2, WT_EUNSUPPORTED, M0 "out_proj.bias", "add_bias_linear");
	m = tm_z2();
	tm_add2(m, S1 "feed_forward.down_proj.bias", HID, 0);
	fx_refused_tp(m, Z2_OK, 2, WT_EUNSUPPORTED, S1 "feed_forward.down_proj.bias",
	              "add_bias_linear");
	m = tm_z2();
	tm_remove(m, LIN4);
	fx_refused_tp(m, Z2_OK, 2, WT_ENOTFOUND, LIN4, "missing");
}

int main(void)
{
	printf("seed 0x%llx\n", (unsigned long long)SEED);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_z2_tp),       cmocka_unit_test(test_z2_quant),
	    cmocka_unit_test(test_z2_switches), cmocka_unit_test(test_z2_coverage),
	    cmocka_unit_test(test_z2_config),   cmocka_unit_test(test_z2_layouts),
	    cmocka_unit_test(test_z2_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
