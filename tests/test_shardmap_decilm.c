/*
 * test_shardmap_decilm.c — DeciLM (DeciLMForCausalLM, model_type nemotron-nas, remote code:
 * NVIDIA's Llama-3_3-Nemotron-Super-49B-v1 / -v1_5, Llama-3_1-Nemotron-Ultra-253B-v1,
 * Llama-3.1-Nemotron-51B-Instruct) cut as vLLM's nemotron_nas.py loads it: Llama's names and
 * cuts, each layer sized by its block_configs entry (kv heads num_attention_heads /
 * n_heads_in_group, the MLP int(2 * ffn_mult * hidden / 3) rounded up to 256), no self_attn /
 * input_layernorm where the attention is a no-op, no mlp / post_attention_layernorm where the
 * ffn is. Hand-computed slices at TP 2 / 4 / 8 (kv heads replicated where a layer has fewer than
 * T), int8-channel TP 2 and fp8-channel TP 4, coverage over TP 1..8, DeciLMConfig's defaults,
 * the widths of ffn_mult, and every refusal (block_configs keys named with the layer; a tensor
 * in a no-op half, one missing or mis-shaped for its layer). Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "loader/loader_decilm.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00d1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head_dim 16, V 1000; the fixture's four layers (fam_decilm.c): 0 KV 2 / I 256,
 * 1 no-op attention / I 512, 2 KV 1 / no-op ffn, 3 KV 1 / I 256 */
#define HID 128
#define HD  16
#define NL  4
#define EMB "model.embed_tokens.weight"

/* n_heads_in_group per layer (0: a no-op attention) and ffn_mult (0: a no-op ffn). */
typedef struct dl_lay {
	int group[NL];
	double mult[NL];
} dl_lay;

static const dl_lay FIX = {{4, 0, 8, 8}, {1.3125, 5.25, 0, 1.3125}};

static int64_t width(double m)
{
	return m == 0 ? 0 : ckpt_decilm_ffn_width(m, HID);
}

/* The model of y: embed / norm / lm_head (when head), each layer's halves as y sizes them. */
static tm_model *tm_dl(const dl_lay *y, int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, head);
	char b[200];
	for (int i = 0; i < NL; i++) {
		if (y->group[i] > 0) {
			int64_t kvd = 8 / y->group[i] * HD;
			const char *leaf[] = {"input_layernorm.weight", "self_attn.q_proj.weight",
			                      "self_attn.k_proj.weight", "self_attn.v_proj.weight",
			                      "self_attn.o_proj.weight"};
			const int64_t a[] = {HID, 8 * HD, kvd, kvd, HID},
			              c[] = {0, HID, HID, HID, 8 * HD};
			for (int k = 0; k < 5; k++) {
				tm_fmt(b, sizeof(b), TM_L, i, leaf[k]);
				tm_add2(m, b, a[k], c[k]);
			}
		}
		if (y->mult[i] > 0) {
			tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
			tm_add2(m, b, HID, 0);
			tm_mlp(m, i, "mlp.", width(y->mult[i]), HID);
		}
	}
	return m;
}

/* y's config.json (Nemotron Super's keys; the null intermediate_size / num_key_value_heads
 * DeciLMConfig saves) with extra keys; ffn of layer 1 as ffn.intermediate_size when is1. */
static const char *dl_cfg_y(const dl_lay *y, bool is1, const char *extra)
{
	static char buf[4096];
	size_t o = (size_t)snprintf(
	    buf, sizeof(buf),
	    "{\"architectures\":[\"DeciLMForCausalLM\"],\"model_type\":\"nemotron-nas\","
	    "\"hidden_size\":128,\"num_attention_heads\":8,\"num_hidden_layers\":4,"
	    "\"vocab_size\":1000,\"intermediate_size\":null,\"num_key_value_heads\":null%s,"
	    "\"block_configs\":[",
	    extra);
	for (int i = 0; i < NL; i++) {
		char a[96], f[96];
		if (y->group[i] > 0)
			snprintf(a, sizeof(a), "{\"n_heads_in_group\":%d,\"no_op\":false}",
			         y->group[i]);
		else
			snprintf(a, sizeof(a), "{\"n_heads_in_group\":null,\"no_op\":true}");
		if (y->mult[i] == 0)
			snprintf(f, sizeof(f), "{\"ffn_mult\":null,\"no_op\":true}");
		else if (is1 && i == 1)
			snprintf(f, sizeof(f), "{\"intermediate_size\":%lld}",
			         (long long)width(y->mult[i]));
		else
			snprintf(f, sizeof(f), "{\"ffn_mult\":%g,\"no_op\":false}", y->mult[i]);
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s{\"attention\":%s,\"ffn\":%s}",
		                      i ? "," : "", a, f);
	}
	snprintf(buf + o, sizeof(buf) - o, "]}");
	return buf;
}

static const char *dl_cfg(const char *extra)
{
	return dl_cfg_y(&FIX, false, extra);
}

/* Layer i's name: "model.layers.<i>." + leaf. */
static const char *ln(char *b, size_t n, int i, const char *leaf)
{
	snprintf(b, n, "model.layers.%d.%s", i, leaf);
	return b;
}

/* Rank r of T: each layer as FIX sizes it (fx_attn_is with the layer's kv heads, fx_mlp_is with
 * its width), the no-op halves absent, vocabulary rows, 21 tensors. */
static void dl_rank_is(const fx *f, uint32_t r, uint32_t T)
{
	char p[96], b[160];
	for (int i = 0; i < NL; i++) {
		ln(p, sizeof(p), i, "self_attn.");
		if (FIX.group[i] > 0) {
			fx_attn_is(f, r, T, p, "o_proj.weight", 8, 8 / FIX.group[i], HD, HID);
			repl(f, r, ln(b, sizeof(b), i, "input_layernorm.weight"));
		} else {
			assert_true(
			    tm_ix(f->p, r, ln(b, sizeof(b), i, "self_attn.qkv_proj.weight")) < 0);
			assert_true(tm_ix(f->p, r, ln(b, sizeof(b), i, "input_layernorm.weight")) <
			            0);
		}
		ln(p, sizeof(p), i, "mlp.");
		if (FIX.mult[i] > 0) {
			fx_mlp_is(f, r, T, p, width(FIX.mult[i]), HID);
			repl(f, r, ln(b, sizeof(b), i, "post_attention_layernorm.weight"));
		} else {
			assert_true(tm_ix(f->p, r, ln(b, sizeof(b), i, "mlp.gate_up_proj.weight")) <
			            0);
			assert_true(
			    tm_ix(f->p, r, ln(b, sizeof(b), i, "post_attention_layernorm.weight")) <
			    0);
		}
	}
	repl(f, r, "model.norm.weight");
	fx_vocab_is(f, r, T, EMB, 1000, 1024, HID);
	fx_vocab_is(f, r, T, "lm_head.weight", 1000, 1024, HID);
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 21);
}

/* TP 2, 4 and 8 by hand: layer 0's two kv heads one a rank at TP 2 and replicated from TP 4,
 * layers 2 and 3's one kv head on every rank; the widths 256 and 512 by rows / columns; the
 * no-op halves absent. Layer 1's width read from ffn.intermediate_size cuts alike. */
static void test_dl_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 8; T *= 2) {
		fx f;
		fx_open(&f, tm_dl(&FIX, 1), dl_cfg(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "nemotron_nas");
		for (uint32_t r = 0; r < T; r++)
			dl_rank_is(&f, r, T);
		/* layer 0 at TP 4: rank 3 holds q heads 6, 7 and kv head 1 */
		if (T == 4)
			rows_at(&f, 3, "model.layers.0.self_attn.qkv_proj.weight", 2 * HD,
			        "model.layers.0.self_attn.k_proj.weight", HD, HD);
		fx_close(&f);
	}
	fx f;
	fx_open(&f, tm_dl(&FIX, 1), dl_cfg_y(&FIX, true, ""), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		dl_rank_is(&f, r, 2);
	fx_close(&f);
}

/* int8-channel at TP 2: q/k/v, o_proj, gate_up and down quantized per row, norms, embedding and
 * lm_head BF16; rank 1's layer 0 qkv_proj codes, its layer 1 down_proj columns 256..511.
 * fp8-channel at TP 4: the same split. */
static void test_dl_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {EMB, "lm_head.weight", "model.norm.weight",
	                                   "model.layers.0.input_layernorm.weight",
	                                   "model.layers.1.post_attention_layernorm.weight"};
	static const char *const quant[] = {
	    "model.layers.0.self_attn.qkv_proj.weight", "model.layers.2.self_attn.o_proj.weight",
	    "model.layers.1.mlp.gate_up_proj.weight", "model.layers.3.mlp.down_proj.weight"};
	fx f;
	fx_open_quant(&f, tm_dl(&FIX, 1), dl_cfg(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(quant));
	fx_qkv_int8_is(&f, 1, 2, "model.layers.0.self_attn.qkv_proj.weight",
	               "model.layers.0.self_attn.q_proj.weight",
	               "model.layers.0.self_attn.k_proj.weight",
	               "model.layers.0.self_attn.v_proj.weight", 8, 2, HD, HID);
	fx_cols_int8_is(&f, 1, 2, "model.layers.1.mlp.down_proj.weight", HID, 512);
	fx_close(&f);
	fx_open_quant(&f, tm_dl(&FIX, 1), dl_cfg(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(quant));
	fx_close(&f);
}

/* Every element once (replicated tensors on every rank, kv rows T / KV times) at TP 1..8, for
 * the attention layers' kv heads all 2 and all 1 (the coverage check takes one KV), with the
 * no-op halves and both widths. */
static void test_dl_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	static const dl_lay kv2 = {{4, 0, 4, 4}, {1.3125, 5.25, 0, 2.625}};
	static const dl_lay kv1 = {{8, 8, 0, 8}, {0, 5.25, 1.3125, 1.3125}};
	coverage(tm_dl(&kv2, 1), dl_cfg_y(&kv2, false, ""), 2, lays, 4);
	coverage(tm_dl(&kv1, 1), dl_cfg_y(&kv1, false, ""), 1, lays, 4);
}

/* ckpt_decilm_ffn_width is vLLM's _ffn_mult_to_intermediate_size after the remote FFNConfig's
 * round(ffn_mult, 6): Nemotron Super's 8192-wide layers; a ninth decimal rounded away before
 * the floor (2 * 0.5 * 771 / 3 = 257: 512, where 0.49999999 unrounded gives 256); refusals. */
static void test_dl_widths(void **state)
{
	(void)state;
	assert_int_equal(ckpt_decilm_ffn_width(5.25, 8192), 28672);
	assert_int_equal(ckpt_decilm_ffn_width(2.625, 8192), 14336);
	assert_int_equal(ckpt_decilm_ffn_width(0.5, 8192), 2816);
	assert_int_equal(ckpt_decilm_ffn_width(1.3125, 128), 256);
	assert_int_equal(ckpt_decilm_ffn_width(5.25, 128), 512);
	assert_int_equal(ckpt_decilm_ffn_width(0.49999999, 771), 512);
	assert_int_equal(ckpt_decilm_ffn_width(0.4999, 771), 256);
	assert_int_equal(ckpt_decilm_ffn_width(0, 128), -1);
	assert_int_equal(ckpt_decilm_ffn_width(-1, 128), -1);
	assert_int_equal(ckpt_decilm_ffn_width(1e12, 128), -1);
}

/* DeciLMConfig's defaults (a LlamaConfig of transformers 4.44.2): untied (lm_head required),
 * vocab_size 32000, hidden_size 4096, 32 layers (then 4 block_configs are too few). */
static void test_dl_defaults(void **state)
{
	(void)state;
	fx_refused(tm_dl(&FIX, 0), dl_cfg(""), WT_ENOTFOUND, "lm_head.weight", "missing");
	char cfg[4096];
	snprintf(cfg, sizeof(cfg), "%s", dl_cfg(""));
	char *v = strstr(cfg, "\"vocab_size\":1000,");
	memmove(v, v + 18, strlen(v + 18) + 1);
	fx_refused(tm_dl(&FIX, 1), cfg, WT_ESHAPE, "[32000, 128]", "fix config.json");
	snprintf(cfg, sizeof(cfg), "%s", dl_cfg(""));
	v = strstr(cfg, "\"hidden_size\":128,");
	memmove(v, v + 18, strlen(v + 18) + 1);
	fx_refused(tm_dl(&FIX, 1), cfg, WT_ESHAPE, "[1000, 4096]", "fix config.json");
	snprintf(cfg, sizeof(cfg), "%s", dl_cfg(""));
	v = strstr(cfg, "\"num_hidden_layers\":4,");
	memmove(v, v + 22, strlen(v + 22) + 1);
	fx_refused(tm_dl(&FIX, 1), cfg, WT_ECORRUPT, "block_configs has 4 entries",
	           "num_hidden_layers is 32");
	fx f; /* tied on request: lm_head dropped */
	fx_open(&f, tm_dl(&FIX, 1), dl_cfg(",\"tie_word_embeddings\":true"), 2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
}

/* config.json refused layer by layer, naming block_configs[i] and the key. */
static void test_dl_config_refusals(void **state)
{
	(void)state;
	static const dl_lay g3 = {{3, 0, 8, 8}, {1.3125, 5.25, 0, 1.3125}};
	static const dl_lay first = {{0, 4, 8, 8}, {1.3125, 5.25, 0, 1.3125}};
	static const dl_lay none = {{0, 0, 0, 0}, {0, 0, 0, 0}};
	fx_refused(tm_dl(&FIX, 1), dl_cfg_y(&g3, false, ""), WT_ECORRUPT,
	           "block_configs[0].attention.n_heads_in_group 3", "num_attention_heads 8");
	fx_refused(tm_dl(&FIX, 1), dl_cfg_y(&first, false, ""), WT_EUNSUPPORTED, "block_configs[0]",
	           "without a residual");
	fx_refused(tm_dl(&FIX, 1), dl_cfg_y(&none, false, ""), WT_EUNSUPPORTED,
	           "every block_configs entry", "no_op");
	fx_refused(tm_dl(&FIX, 1), dl_cfg(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "layer 0");
	fx_refused(tm_dl(&FIX, 1), dl_cfg(",\"attention_bias\":true"), WT_EUNSUPPORTED,
	           "attention_bias", "set it false");
	fx_refused(tm_dl(&FIX, 1), dl_cfg(",\"mlp_bias\":true"), WT_EUNSUPPORTED, "mlp_bias",
	           "set it false");
	static const struct {
		const char *from, *to;
		int code;
		const char *a, *b;
	} ed[] = {
	    {"{\"n_heads_in_group\":null,\"no_op\":true}",
	     "{\"n_heads_in_group\":null,\"no_op\":false,\"replace_with_linear\":true}",
	     WT_EUNSUPPORTED, "block_configs[1].attention.replace_with_linear",
	     "linear replacement"},
	    {"{\"ffn_mult\":null,\"no_op\":true}", "{\"replace_with_linear\":true}",
	     WT_EUNSUPPORTED, "block_configs[2].ffn.replace_with_linear", "vLLM"},
	    {"{\"n_heads_in_group\":8,\"no_op\":false}", "{\"no_op\":false}", WT_ECORRUPT,
	     "block_configs[2].attention.n_heads_in_group is missing", "integer"},
	    {"{\"n_heads_in_group\":4,\"no_op\":false}", "{\"n_heads_in_group\":4.5}", WT_ECORRUPT,
	     "block_configs[0].attention.n_heads_in_group", "not an integer"},
	    {"{\"ffn_mult\":1.3125,\"no_op\":false}", "{\"no_op\":false}", WT_ECORRUPT,
	     "block_configs[0].ffn.ffn_mult is missing", "intermediate_size"},
	    {"{\"ffn_mult\":1.3125,\"no_op\":false}",
	     "{\"ffn_mult\":1.3125,\"hidden_act\":\"relu\"}", WT_EUNSUPPORTED,
	     "block_configs[0].ffn.hidden_act", "silu"},
	    {"{\"ffn_mult\":1.3125,\"no_op\":false}", "{\"ffn_mult\":-1}", WT_ECORRUPT,
	     "block_configs[0].ffn.ffn_mult", "positive"},
	    {"{\"ffn_mult\":1.3125,\"no_op\":false}", "{\"ffn_mult\":1.3125,\"no_op\":1}",
	     WT_ECORRUPT, "block_configs[0].ffn.no_op", "boolean"},
	    {"{\"attention\":{\"n_heads_in_group\":4,\"no_op\":false},", "{\"attention\":7,",
	     WT_ECORRUPT, "block_configs[0]", "\"attention\" and \"ffn\" objects"},
	    {"\"block_configs\":[", "\"block_configs\":{},\"x\":[", WT_ECORRUPT, "block_configs",
	     "not a list"},
	};
	for (size_t k = 0; k < sizeof(ed) / sizeof(ed[0]); k++) {
		char cfg[4096];
		snprintf(cfg, sizeof(cfg), "%s", dl_cfg(""));
		char *at = strstr(cfg, ed[k].from);
		assert_non_null(at);
		size_t a = strlen(ed[k].from), b = strlen(ed[k].to);
		memmove(at + b, at + a, strlen(at + a) + 1);
		memcpy(at, ed[k].to, b);
		fx_refused(tm_dl(&FIX, 1), cfg, ed[k].code, ed[k].a, ed[k].b);
	}
	char cfg[4096]; /* four entries for five layers */
	snprintf(cfg, sizeof(cfg), "%s", dl_cfg(""));
	char *v = strstr(cfg, "\"num_hidden_layers\":4");
	v[20] = '5';
	fx_refused(tm_dl(&FIX, 1), cfg, WT_ECORRUPT, "block_configs has 4 entries",
	           "num_hidden_layers is 5");
}

/* Tensors against each layer's block: one in a no-op half refused naming the layer's
 * block_configs key, one missing where the layer has the half, one shaped for another layer's
 * kv heads or width, a bias; TP 16 and 3. */
static void test_dl_tensor_refusals(void **state)
{
	(void)state;
	tm_model *m = tm_dl(&FIX, 1);
	tm_add2(m, "model.layers.1.self_attn.q_proj.weight", 8 * HD, HID);
	fx_refused(m, dl_cfg(""), WT_EUNSUPPORTED, "model.layers.1.self_attn.q_proj.weight",
	           "block_configs[1].attention.no_op is true");
	m = tm_dl(&FIX, 1);
	tm_add2(m, "model.layers.1.input_layernorm.weight", HID, 0);
	fx_refused(m, dl_cfg(""), WT_EUNSUPPORTED, "model.layers.1.input_layernorm.weight",
	           "layer 1 a layer without attention");
	m = tm_dl(&FIX, 1);
	tm_add2(m, "model.layers.2.post_attention_layernorm.weight", HID, 0);
	fx_refused(m, dl_cfg(""), WT_EUNSUPPORTED, "model.layers.2.post_attention_layernorm.weight",
	           "block_configs[2].ffn.no_op is true");
	m = tm_dl(&FIX, 1);
	tm_mlp(m, 2, "mlp.", 256, HID);
	fx_refused(m, dl_cfg(""), WT_EUNSUPPORTED, "model.layers.2.mlp.",
	           "block_configs[2].ffn.no_op is true");
	m = tm_dl(&FIX, 1);
	tm_remove(m, "model.layers.2.self_attn.k_proj.weight");
	fx_refused(m, dl_cfg(""), WT_ENOTFOUND, "model.layers.2.self_attn.k_proj.weight",
	           "missing");
	m = tm_dl(&FIX, 1);
	tm_remove(m, "model.layers.1.post_attention_layernorm.weight");
	fx_refused(m, dl_cfg(""), WT_ENOTFOUND, "model.layers.1.post_attention_layernorm.weight",
	           "missing");
	/* layer 2 built with layer 0's two kv heads, layer 1 with layer 0's width */
	static const dl_lay kv = {{4, 0, 4, 8}, {1.3125, 5.25, 0, 1.3125}};
	fx_refused(tm_dl(&kv, 1), dl_cfg(""), WT_ESHAPE, "model.layers.2.self_attn.k_proj.weight",
	           "implies [16, 128]");
	static const dl_lay wd = {{4, 0, 8, 8}, {1.3125, 1.3125, 0, 1.3125}};
	fx_refused(tm_dl(&wd, 1), dl_cfg(""), WT_ESHAPE, "model.layers.1.mlp.", "implies [");
	m = tm_dl(&FIX, 1);
	tm_add2(m, "model.layers.0.self_attn.q_proj.bias", 8 * HD, 0);
	fx_refused(m, dl_cfg(""), WT_EUNSUPPORTED, "q_proj.bias", "unknown tensor");
	fx_refused_tp(tm_dl(&FIX, 1), dl_cfg(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(tm_dl(&FIX, 1), dl_cfg(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dl_slices),          cmocka_unit_test(test_dl_quant),
	    cmocka_unit_test(test_dl_coverage),        cmocka_unit_test(test_dl_widths),
	    cmocka_unit_test(test_dl_defaults),        cmocka_unit_test(test_dl_config_refusals),
	    cmocka_unit_test(test_dl_tensor_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
