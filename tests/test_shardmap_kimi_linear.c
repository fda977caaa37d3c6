/*
 * test_shardmap_kimi_linear.c — Kimi Linear (KimiLinearForCausalLM, model_type kimi_linear) as
 * vLLM's kimi_linear.py / kda.py load it: KDA layers (q / k / v / f_b / g_b / b_proj by the KDA
 * heads, f_a / g_a whole, the short convolutions, dt_bias and A_log [1, 1, H, 1] by heads, o_norm
 * whole, o_proj by columns), MLA layers under the same self_attn. names (q_proj / kv_b_proj by
 * heads, kv_a_proj_with_mqa / kv_a_layernorm whole, o_proj by columns), which layer is which
 * (linear_attn_config.kda_layers, 1-based), the dense MLP and block_sparse_moe (router and its
 * correction bias whole, w1 / w3 / w2 stacked, shared experts merged), the MTP layer dropped.
 * Hand slices at TP 2 / 4 and EP, int8-channel, coverage, KimiLinearConfig's defaults and the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed4b1aull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, L 4 (layers 0, 1, 3 KDA, 2 MLA; layer 0 dense, 1-3 MoE), layer 4 an MTP layer; KDA
 * 8 heads of 16 (q / k / v 128 rows, convs [128, 1, 4], A_log [1, 1, 8, 1], b_proj 8 rows); MLA
 * 4 heads, kv_lora_rank 32, qk_nope 16, qk_rope 8, v_head 16 (q_proj 96 rows, kv_a 40, kv_b 128,
 * o_proj 64 columns); dense MLP 192, 4 experts of 32, 2 shared experts (64), V 1003 */
#define HID 128
#define KL_LA(k, f, h)                                                                             \
	"\"linear_attn_config\":{\"kda_layers\":" k ",\"full_attn_layers\":" f ",\"num_heads\":" h \
	",\"head_dim\":16,\"short_conv_kernel_size\":4}"
#define KL_TOP                                                                                     \
	"\"architectures\":[\"KimiLinearForCausalLM\"],\"model_type\":\"kimi_linear\","            \
	"\"hidden_size\":128,\"num_attention_heads\":4,\"num_hidden_layers\":4,"                   \
	"\"vocab_size\":1003,\"intermediate_size\":192,\"tie_word_embeddings\":false,"             \
	"\"num_nextn_predict_layers\":1,\"hidden_act\":\"silu\""
#define KL_MLA                                                                                     \
	",\"q_lora_rank\":null,\"kv_lora_rank\":32,\"qk_nope_head_dim\":16,"                       \
	"\"qk_rope_head_dim\":8,\"v_head_dim\":16,\"mla_use_nope\":true"
#define KL_MOE                                                                                     \
	",\"num_experts\":4,\"num_experts_per_token\":2,\"moe_intermediate_size\":32,"             \
	"\"num_shared_experts\":2,\"first_k_dense_replace\":1,\"moe_layer_freq\":1"
#define KL_CFG_H(x, h) "{" KL_TOP KL_MLA KL_MOE "," KL_LA("[1,2,4]", "[3]", h) x "}"
#define KL_CFG(x)      KL_CFG_H(x, "8")
#define KL_OK          KL_CFG("")
#define L0             "model.layers.0."
#define L1             "model.layers.1."
#define L2             "model.layers.2."
#define K0             L0 "self_attn."
#define M2             L2 "self_attn."
#define W13(i)         "model.layers." #i ".block_sparse_moe.experts.w13_weight"
#define W2(i)          "model.layers." #i ".block_sparse_moe.experts.w2_weight"
#define SH1            L1 "block_sparse_moe.shared_experts."

/* KL_OK with key's scalar value replaced by val (added when absent) into out. */
static const char *kl_cfg(char *out, size_t cap, const char *key, const char *val)
{
	static const char base[] = KL_OK;
	char k[96];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *at = strstr(base, k);
	if (at == NULL) {
		snprintf(out, cap, "%.*s,%s%s}", (int)(sizeof(base) - 2), base, k, val);
		return out;
	}
	const char *end = at + strlen(k);
	while (*end != ',' && *end != '}')
		end++;
	snprintf(out, cap, "%.*s%s%s%s", (int)(at - base), base, k, val, end);
	return out;
}

/* The model's knobs: layer kinds ('K' KDA, 'M' MLA), KDA heads, whether the MTP layer is there. */
typedef struct kl_dims {
	const char *kinds;
	int64_t kh;
	bool mtp;
} kl_dims;

static const kl_dims KL_STD = {"KKMK", 8, true};

static void add_kda(tm_model *m, int i, int64_t kh)
{
	char b[200];
	int64_t p = kh * 16;
	static const char *const conv[] = {"q", "k", "v"};
	for (int c = 0; c < 3; c++) {
		char leaf[64];
		snprintf(leaf, sizeof(leaf), "self_attn.%s_proj.weight", conv[c]);
		tm_lin_l(m, i, leaf, p, HID, 0);
		snprintf(leaf, sizeof(leaf), "self_attn.%s_conv1d.weight", conv[c]);
		tm_fmt(b, sizeof(b), TM_L, i, leaf);
		tm_add(m, b, WT_DTYPE_INVALID, 3, p, 1, 4);
	}
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.A_log"); /* [1, 1, kh, 1] F32 */
	tm_add(m, b, WT_F32, 3, 1, 1, kh);
	m->d[m->n - 1].ndim = 4;
	m->d[m->n - 1].shape[3] = 1;
	tm_lin_l(m, i, "self_attn.f_a_proj.weight", 16, HID, 0);
	tm_lin_l(m, i, "self_attn.f_b_proj.weight", p, 16, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.dt_bias");
	tm_add(m, b, WT_F32, 1, p, 0, 0);
	tm_lin_l(m, i, "self_attn.b_proj.weight", kh, HID, 0);
	tm_lin_l(m, i, "self_attn.g_a_proj.weight", 16, HID, 0);
	tm_lin_l(m, i, "self_attn.g_b_proj.weight", p, 16, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_norm.weight");
	tm_add2(m, b, 16, 0);
	tm_lin_l(m, i, "self_attn.o_proj.weight", HID, p, 0);
}

static void add_mla(tm_model *m, int i)
{
	char b[200];
	tm_lin_l(m, i, "self_attn.q_proj.weight", 4 * 24, HID, 0);
	tm_lin_l(m, i, "self_attn.kv_a_proj_with_mqa.weight", 32 + 8, HID, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.kv_a_layernorm.weight");
	tm_add2(m, b, 32, 0);
	tm_lin_l(m, i, "self_attn.kv_b_proj.weight", 4 * 32, 32, 0);
	tm_lin_l(m, i, "self_attn.o_proj.weight", HID, 4 * 16, 0);
}

static void add_mlp(tm_model *m, int i)
{
	char b[200];
	if (i == 0) {
		tm_lin_l(m, i, "mlp.gate_proj.weight", 192, HID, 0);
		tm_lin_l(m, i, "mlp.up_proj.weight", 192, HID, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", HID, 192, 0);
		return;
	}
	tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.weight");
	tm_add2(m, b, 4, HID);
	tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.e_score_correction_bias");
	tm_add(m, b, WT_F32, 1, 4, 0, 0);
	for (int j = 0; j < 4; j++) {
		static const char *const leaf[] = {"w1", "w3", "w2"};
		for (int k = 0; k < 3; k++) {
			char l[96];
			snprintf(l, sizeof(l), "block_sparse_moe.experts.%d.%s.weight", j, leaf[k]);
			tm_lin_l(m, i, l, k == 2 ? HID : 32, k == 2 ? 32 : HID, 0);
		}
	}
	tm_lin_l(m, i, "block_sparse_moe.shared_experts.gate_proj.weight", 64, HID, 0);
	tm_lin_l(m, i, "block_sparse_moe.shared_experts.up_proj.weight", 64, HID, 0);
	tm_lin_l(m, i, "block_sparse_moe.shared_experts.down_proj.weight", HID, 64, 0);
}

static tm_model *tm_kl_d(const kl_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, HID, 1);
	for (int i = 0; i < 4; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, HID, 0);
		if (o->kinds[i] == 'K')
			add_kda(m, i, o->kh);
		else
			add_mla(m, i);
		add_mlp(m, i);
	}
	if (o->mtp) { /* model.layers.4: the MTP layer vLLM skips */
		tm_add2(m, "model.layers.4.input_layernorm.weight", HID, 0);
		tm_lin(m, "model.layers.4.self_attn.q_proj.weight", 96, HID, 0);
	}
	return m;
}

static tm_model *tm_kl(void)
{
	return tm_kl_d(&KL_STD);
}

/* Rank r's (tp rank t's) KDA layer 0 at TP T (8 heads of 16). */
static void kda_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t p = 128 / T, h = 8 / T;
	static const char *const qkv[] = {K0 "q_proj.weight", K0 "k_proj.weight",
	                                  K0 "v_proj.weight"};
	static const char *const conv[] = {K0 "q_conv1d.weight", K0 "k_conv1d.weight",
	                                   K0 "v_conv1d.weight"};
	for (int c = 0; c < 3; c++) {
		shp(f, r, qkv[c], 2, p, HID, 0);
		rows_are(f, r, qkv[c], 0, qkv[c], t * p, p);
		shp(f, r, conv[c], 3, p, 1, 4);
		rows_are(f, r, conv[c], 0, conv[c], t * p, p);
	}
	const sm_out_info *a = info(f, r, K0 "A_log");
	assert_int_equal(a->ndim, 4);
	assert_int_equal(a->shape[0], 1);
	assert_int_equal(a->shape[1], 1);
	assert_int_equal(a->shape[2], h);
	assert_int_equal(a->shape[3], 1);
	assert_int_equal(a->dtype, WT_F32);
	rows_are(f, r, K0 "A_log", 0, K0 "A_log", t * h, h);
	shp(f, r, K0 "dt_bias", 1, p, 0, 0);
	rows_are(f, r, K0 "dt_bias", 0, K0 "dt_bias", t * p, p);
	shp(f, r, K0 "b_proj.weight", 2, h, HID, 0);
	rows_are(f, r, K0 "b_proj.weight", 0, K0 "b_proj.weight", t * h, h);
	shp(f, r, K0 "f_b_proj.weight", 2, p, 16, 0);
	rows_are(f, r, K0 "f_b_proj.weight", 0, K0 "f_b_proj.weight", t * p, p);
	rows_are(f, r, K0 "g_b_proj.weight", 0, K0 "g_b_proj.weight", t * p, p);
	repl(f, r, K0 "f_a_proj.weight");
	repl(f, r, K0 "g_a_proj.weight");
	repl(f, r, K0 "o_norm.weight");
	shp(f, r, K0 "o_proj.weight", 2, HID, p, 0);
	cols_at(f, r, K0 "o_proj.weight", 0, K0 "o_proj.weight", HID, 128, t * p, p);
}

/* Rank r's (tp rank t's) MLA layer 2 at TP T (4 heads). */
static void mla_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t hl = 4 / T;
	shp(f, r, M2 "q_proj.weight", 2, 24 * hl, HID, 0);
	rows_are(f, r, M2 "q_proj.weight", 0, M2 "q_proj.weight", t * 24 * hl, 24 * hl);
	repl(f, r, M2 "kv_a_proj_with_mqa.weight");
	repl(f, r, M2 "kv_a_layernorm.weight");
	shp(f, r, M2 "kv_b_proj.weight", 2, 32 * hl, 32, 0);
	rows_are(f, r, M2 "kv_b_proj.weight", 0, M2 "kv_b_proj.weight", t * 32 * hl, 32 * hl);
	shp(f, r, M2 "o_proj.weight", 2, HID, 16 * hl, 0);
	cols_at(f, r, M2 "o_proj.weight", 0, M2 "o_proj.weight", HID, 64, t * 16 * hl, 16 * hl);
	assert_true(tm_ix(f->p, r, M2 "A_log") < 0);
}

/* Layer 1's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13(1), W2(1), L1 "block_sparse_moe.experts.%lld.%s.weight", "w1", "w3", "w2", HID, 32};

/* Rank r's (tp rank t's) dense MLP of layer 0, shared experts of layer 1, router, tables. */
static void mlp_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t il = 192 / T, sl = 64 / T;
	const char *gu = L0 "mlp.gate_up_proj.weight";
	shp(f, r, gu, 2, 2 * il, HID, 0);
	rows_are(f, r, gu, 0, L0 "mlp.gate_proj.weight", t * il, il);
	rows_are(f, r, gu, il, L0 "mlp.up_proj.weight", t * il, il);
	cols_at(f, r, L0 "mlp.down_proj.weight", 0, L0 "mlp.down_proj.weight", HID, 192, t * il,
	        il);
	rows_are(f, r, SH1 "gate_up_proj.weight", 0, SH1 "gate_proj.weight", t * sl, sl);
	rows_are(f, r, SH1 "gate_up_proj.weight", sl, SH1 "up_proj.weight", t * sl, sl);
	cols_at(f, r, SH1 "down_proj.weight", 0, SH1 "down_proj.weight", HID, 64, t * sl, sl);
	repl(f, r, L1 "block_sparse_moe.gate.weight");
	repl(f, r, L1 "block_sparse_moe.gate.e_score_correction_bias");
	if ((int64_t)r == t) { /* the vocabulary by tp rank (fx_vocab_is: rank r of T) */
		fx_vocab_is(f, r, T, "model.embed_tokens.weight", 1003, 1024, HID);
		fx_vocab_is(f, r, T, "lm_head.weight", 1003, 1024, HID);
	}
	repl(f, r, "model.norm.weight");
}

static void test_kl_tp(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_kl(), KL_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "kimi_linear");
		assert_false(shardmap_tied_lm_head(f.p));
		for (uint32_t r = 0; r < T; r++) {
			kda_is(&f, r, r, T);
			mla_is(&f, r, r, T);
			mlp_is(&f, r, r, T);
			fx_experts_are(&f, &XP, r, 0, 4, r * 32 / T, 32 / T, false);
			/* 3 top + 4 x 2 norms; 3 KDA x 15, MLA 5; dense 2, 3 MoE x 6 */
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 3 + 8 + 45 + 5 + 2 + 18);
		}
		/* layer 3 is KDA, layer 1's attention KDA too */
		shp(&f, 1, "model.layers.3.self_attn.q_conv1d.weight", 3, 128 / T, 1, 4);
		shp(&f, 1, L1 "self_attn.o_proj.weight", 2, HID, 128 / T, 0);
		/* the MTP layer dropped and listed */
		assert_int_equal(shardmap_n_skipped(f.p), 2);
		assert_true(fx_skipped(&f, "model.layers.4.input_layernorm.weight"));
		assert_true(fx_skipped(&f, "model.layers.4.self_attn.q_proj.weight"));
		fx_close(&f);
	}
}

static void test_kl_ep(void **state)
{
	(void)state;
	fx f;
	/* EP 2: ep rank 1 holds experts 2, 3 whole; the rest whole (TP 1) */
	fx_open(&f, tm_kl(), KL_OK, 1, 2, 0, true);
	fx_experts_are(&f, &XP, 0, 0, 2, 0, 32, false);
	fx_experts_are(&f, &XP, 1, 2, 2, 0, 32, false);
	kda_is(&f, 1, 0, 1);
	mla_is(&f, 1, 0, 1);
	mlp_is(&f, 1, 0, 1);
	fx_close(&f);
	/* TP 2 x EP 2, up_gate: rank 3 (tp 1, ep 1) experts 2, 3 whole, up first; the attention
	 * of both kinds and the shared experts follow the tp rank */
	fx_open(&f, tm_kl(), KL_OK, 2, 2, 1, true);
	fx_experts_are(&f, &XP, 3, 2, 2, 0, 32, true);
	fx_experts_are(&f, &XP, 1, 0, 2, 0, 32, true);
	kda_is(&f, 3, 1, 2);
	mla_is(&f, 3, 1, 2);
	mlp_is(&f, 3, 1, 2);
	fx_close(&f);
}

/* int8-channel at TP 2: the Linears vLLM builds with quant_config quantized (f_a_proj /
 * g_a_proj and kv_a_proj_with_mqa whole), the convs, A_log, dt_bias, o_norm, the router and its
 * bias, the norms kept without a scale. */
static void test_kl_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_kl(), KL_OK, &l, true);
	static const char *const keep[] = {K0 "q_conv1d.weight",
	                                   K0 "v_conv1d.weight",
	                                   K0 "A_log",
	                                   K0 "dt_bias",
	                                   K0 "o_norm.weight",
	                                   M2 "kv_a_layernorm.weight",
	                                   L1 "block_sparse_moe.gate.weight",
	                                   L1 "block_sparse_moe.gate.e_score_correction_bias",
	                                   L0 "input_layernorm.weight"};
	static const char *const q8[] = {
	    K0 "q_proj.weight",       K0 "k_proj.weight", K0 "f_a_proj.weight",
	    K0 "f_b_proj.weight",     K0 "b_proj.weight", K0 "g_a_proj.weight",
	    K0 "o_proj.weight",       M2 "q_proj.weight", M2 "kv_a_proj_with_mqa.weight",
	    M2 "kv_b_proj.weight",    M2 "o_proj.weight", W13(1),
	    SH1 "gate_up_proj.weight"};
	for (uint32_t r = 0; r < 2; r++)
		fx_quant_split(&f, r, -1, keep, sizeof(keep) / sizeof(keep[0]), q8,
		               sizeof(q8) / sizeof(q8[0]));
	assert_int_equal(info(&f, 1, K0 "A_log")->dtype, WT_F32);
	assert_int_equal(info(&f, 1, K0 "q_conv1d.weight")->dtype, WT_BF16);
	/* f_a_proj whole: its 16 rows quantized from the source's own rows on every rank */
	shp(&f, 1, K0 "f_a_proj.weight_scale", 2, 16, 1, 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, K0 "f_a_proj.weight");
	const float *sc = (const float *)out_bytes(&f, 1, K0 "f_a_proj.weight_scale");
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(&f, K0 "f_a_proj.weight", 0, &rowb);
	for (int64_t row = 0; row < 16; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	/* b_proj: rank 1's heads 4..7 */
	q = (const int8_t *)out_bytes(&f, 1, K0 "b_proj.weight");
	sc = (const float *)out_bytes(&f, 1, K0 "b_proj.weight_scale");
	src = (const uint16_t *)src_rows(&f, K0 "b_proj.weight", 4, &rowb);
	for (int64_t row = 0; row < 4; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	fx_close(&f);
}

static void test_kl_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2}, {1, 4}, {4, 4}};
	coverage(tm_kl(), KL_OK, 4, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Every layer KDA, no MoE: no MLA key asked for, KimiMLP in every layer. */
static void test_kl_all_kda(void **state)
{
	(void)state;
	kl_dims o = {"KKKK", 8, false};
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, HID, 1);
	for (int i = 0; i < 4; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, HID, 0);
		add_kda(m, i, o.kh);
		tm_lin_l(m, i, "mlp.gate_proj.weight", 192, HID, 0);
		tm_lin_l(m, i, "mlp.up_proj.weight", 192, HID, 0);
		tm_lin_l(m, i, "mlp.down_proj.weight", HID, 192, 0);
	}
	fx f;
	fx_open(&f, m, "{" KL_TOP "," KL_LA("[1,2,3,4]", "[]", "8") "}", 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		kda_is(&f, r, r, 4);
	shp(&f, 2, "model.layers.3.mlp.gate_up_proj.weight", 2, 96, HID, 0);
	fx_close(&f);
}

/* KimiLinearConfig's defaults and what the loader makes of linear_attn_config. */
static void test_kl_config(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\":[\"KimiLinearForCausalLM\"],\"model_type\":\"kimi_linear\","
	    "\"num_hidden_layers\":3,\"num_experts\":8,\"moe_intermediate_size\":64,"
	    "\"kv_lora_rank\":512,\"qk_nope_head_dim\":128,\"qk_rope_head_dim\":64,"
	    "\"v_head_dim\":128,\"mla_use_nope\":true,\"n_shared_experts\":5,"
	    "\"linear_attn_config\":{\"kda_layers\":[1,3],\"full_attn_layers\":[2],"
	    "\"num_heads\":32,\"head_dim\":128,\"short_conv_kernel_size\":4}}";
	ckpt_config c;
	tm_parse(cfg, &c);
	assert_int_equal(c.vocab_size, 163840);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.intermediate_size, 11008);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_hidden_layers, 3);
	assert_int_equal(c.first_k_dense_replace, 0);
	assert_int_equal(c.moe_layer_freq, 1);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.num_experts, 8);
	assert_int_equal(c.moe_intermediate_size, 64);
	assert_int_equal(c.n_shared_experts,
	                 0); /* num_shared_experts absent: 0; n_shared_* not read */
	assert_int_equal(c.lin_num_k_heads, 32);
	assert_int_equal(c.lin_num_v_heads, 32);
	assert_int_equal(c.lin_k_head_dim, 128);
	assert_int_equal(c.lin_v_head_dim, 128);
	assert_int_equal(c.lin_conv_kernel, 4);
	assert_int_equal(c.kv_nextn, 0);
	assert_true(c.has_layer_types);
	assert_int_equal(c.n_layer_types, 3);
	assert_int_equal(c.layer_types[0], CKPT_LAYER_LINEAR_ATTN);
	assert_int_equal(c.layer_types[1], CKPT_LAYER_FULL_ATTN);
	assert_int_equal(c.layer_types[2], CKPT_LAYER_LINEAR_ATTN);
	ckpt_config_clear(&c);
	tm_parse(KL_OK, &c);
	assert_int_equal(c.n_shared_experts, 2);
	assert_int_equal(c.kv_nextn, 1);
	ckpt_config_clear(&c);
}

/* The loader's refusals: code and the key named. */
static void cfg_refused(const char *cfg, int code, const char *a, const char *b)
{
	ckpt_config c;
	wt_errbuf err = {0};
	int rv = ckpt_config_parse(cfg, strlen(cfg), &c, &err);
	printf("refused (%s): %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, code);
	if (!strstr(err.msg, a) || !strstr(err.msg, b))
		fail_msg("'%s' lacks '%s' or '%s'", err.msg, a, b);
}

static void test_kl_config_refusals(void **state)
{
	(void)state;
	char b[1200];
	cfg_refused("{" KL_TOP KL_MLA KL_MOE "}", WT_ECORRUPT, "linear_attn_config",
	            "is missing or not an object");
	cfg_refused("{" KL_TOP KL_MLA KL_MOE ",\"linear_attn_config\":{\"full_attn_layers\":[3],"
	            "\"num_heads\":8,\"head_dim\":16,\"short_conv_kernel_size\":4}}",
	            WT_ECORRUPT, "linear_attn_config.kda_layers", "not a list");
	cfg_refused("{" KL_TOP KL_MLA KL_MOE ",\"linear_attn_config\":{\"kda_layers\":[1,2,4],"
	            "\"num_heads\":8,\"head_dim\":16,\"short_conv_kernel_size\":4}}",
	            WT_ECORRUPT, "linear_attn_config.full_attn_layers", "not a list");
	/* 0-based numbers, and one past the layers */
	cfg_refused("{" KL_TOP KL_MLA KL_MOE "," KL_LA("[0,1,3]", "[2]", "8") "}", WT_ECORRUPT,
	            "kda_layers[0]", "1-based");
	cfg_refused("{" KL_TOP KL_MLA KL_MOE "," KL_LA("[1,2,5]", "[3]", "8") "}", WT_ECORRUPT,
	            "kda_layers[2]", "1 .. 4 (num_hidden_layers)");
	cfg_refused("{" KL_TOP KL_MLA KL_MOE ",\"linear_attn_config\":{\"kda_layers\":[1,2,4],"
	            "\"full_attn_layers\":[3],\"head_dim\":16,\"short_conv_kernel_size\":4}}",
	            WT_ECORRUPT, "linear_attn_config.num_heads", "positive integer");
	cfg_refused(KL_CFG_H("", "0"), WT_ECORRUPT, "linear_attn_config.num_heads",
	            "positive integer");
	cfg_refused(kl_cfg(b, sizeof(b), "q_lora_rank", "64"), WT_EUNSUPPORTED, "q_lora_rank",
	            "asserts q_lora_rank is None");
	cfg_refused(kl_cfg(b, sizeof(b), "mla_use_nope", "false"), WT_EUNSUPPORTED, "mla_use_nope",
	            "asserts use_nope");
	cfg_refused(kl_cfg(b, sizeof(b), "num_experts", "0"), WT_EUNSUPPORTED, "num_experts",
	            "is 0");
	cfg_refused("{" KL_TOP KL_MLA ",\"num_experts\":4," KL_LA("[1,2,4]", "[3]", "8") "}",
	            WT_ECORRUPT, "moe_intermediate_size", "is missing");
	cfg_refused(kl_cfg(b, sizeof(b), "num_shared_experts", "null"), WT_EUNSUPPORTED,
	            "num_shared_experts", "is null");
	cfg_refused(kl_cfg(b, sizeof(b), "hidden_act", "\"gelu\""), WT_EUNSUPPORTED, "hidden_act",
	            "silu");
	cfg_refused(kl_cfg(b, sizeof(b), "moe_router_activation_func", "\"relu\""), WT_EUNSUPPORTED,
	            "moe_router_activation_func", "sigmoid");
	cfg_refused(kl_cfg(b, sizeof(b), "tie_word_embeddings", "true"), WT_EUNSUPPORTED,
	            "tie_word_embeddings", "never ties");
}

/* Planner refusals: layouts, config keys the planner checks, tensors. */
static void test_kl_refusals(void **state)
{
	(void)state;
	char b[1200];
	fx_refused_tp(tm_kl(), KL_OK, 8, WT_ELAYOUT, "does not divide num_attention_heads 4",
	              "use tp_size 1, 2 or 4");
	kl_dims o = KL_STD;
	o.kh = 6; /* 6 KDA heads at TP 4 */
	fx_refused_tp(tm_kl_d(&o), KL_CFG_H("", "6"), 4, WT_ELAYOUT,
	              "does not divide linear_attn_config.num_heads 6", "use tp_size 1 or 2");
	fx_refused_tp_ep(tm_kl(), KL_OK, 1, 8, WT_ELAYOUT, "ep_size 8 exceeds the 4 routed experts",
	                 "ep_size <= 4");
	/* another model_type: KimiLinearConfig never read */
	fx_refused(tm_kl(),
	           "{\"architectures\":[\"KimiLinearForCausalLM\"],\"model_type\":\"deepseek_v3\","
	           "\"hidden_size\":128,\"num_attention_heads\":4,\"num_hidden_layers\":4,"
	           "\"vocab_size\":1003}",
	           WT_EUNSUPPORTED, "model_type 'deepseek_v3'", "give model_type kimi_linear");
	fx_refused(tm_kl(),
	           "{" KL_TOP ",\"mla_use_nope\":true" KL_MOE "," KL_LA("[1,2,4]", "[3]", "8") "}",
	           WT_ECORRUPT, "1 MLA layers", "kv_lora_rank");
	/* the layer kinds follow kda_layers: an MLA tensor in a KDA layer, a KDA one in an MLA
	 * layer */
	tm_model *m = tm_kl();
	tm_add2(m, K0 "kv_a_layernorm.weight", 32, 0);
	fx_refused(m, KL_OK, WT_EUNSUPPORTED, K0 "kv_a_layernorm.weight",
	           "a linear-attention layer (see linear_attn_config.kda_layers)");
	m = tm_kl();
	tm_add2(m, M2 "o_norm.weight", 16, 0);
	fx_refused(m, KL_OK, WT_EUNSUPPORTED, M2 "o_norm.weight",
	           "a full-attention layer (see linear_attn_config.kda_layers)");
	/* the MLA layer's q_proj with the KDA rows */
	m = tm_kl();
	tm_remove(m, M2 "q_proj.weight");
	tm_add2(m, M2 "q_proj.weight", 128, HID);
	fx_refused(m, KL_OK, WT_ESHAPE, M2 "q_proj.weight", "[96, 128]");
	/* A_log flat [8] rather than [1, 1, 8, 1] */
	m = tm_kl();
	tm_remove(m, K0 "A_log");
	tm_add(m, K0 "A_log", WT_F32, 1, 8, 0, 0);
	fx_refused(m, KL_OK, WT_ESHAPE, K0 "A_log", "[1, 1, 8, 1]");
	m = tm_kl();
	tm_remove(m, K0 "k_conv1d.weight");
	fx_refused(m, KL_OK, WT_ENOTFOUND, K0 "k_conv1d.weight", "missing");
	m = tm_kl();
	tm_remove(m, L1 "block_sparse_moe.gate.e_score_correction_bias");
	fx_refused(m, KL_OK, WT_ENOTFOUND, "e_score_correction_bias", "missing");
	/* no biases anywhere (vLLM's load_weights has no parameter for one) */
	m = tm_kl();
	tm_add2(m, K0 "o_proj.bias", HID, 0);
	fx_refused(m, KL_OK, WT_EUNSUPPORTED, K0 "o_proj.bias", "unknown tensor");
	/* shared experts where num_shared_experts is 0 */
	fx_refused(tm_kl(), kl_cfg(b, sizeof(b), "num_shared_experts", "0"), WT_EUNSUPPORTED, SH1,
	           "without shared experts (n_shared_experts / num_shared_experts");
	/* a layer past the MTP layer */
	m = tm_kl();
	tm_add2(m, "model.layers.5.input_layernorm.weight", HID, 0);
	fx_refused(m, KL_OK, WT_ESHAPE, "model.layers.5.", "num_hidden_layers is 4");
	/* without num_nextn_predict_layers the MTP layer is no layer of the model */
	fx_refused(tm_kl(), kl_cfg(b, sizeof(b), "num_nextn_predict_layers", "0"), WT_ESHAPE,
	           "model.layers.4.", "num_hidden_layers is 4");
}

/* Kimi-Linear-48B-A3B-Instruct's widths (its config.json's keys; 4 layers of its pattern's
 * first four, 8 of its 256 experts), hollow: planned only, at TP 8 (4 MLA heads and 4 KDA heads a
 * rank). */
static const char kl_release[] =
    "{\"architectures\":[\"KimiLinearForCausalLM\"],\"model_type\":\"kimi_linear\","
    "\"hidden_size\":2304,\"head_dim\":72,\"num_attention_heads\":32,"
    "\"num_key_value_heads\":32,\"num_hidden_layers\":4,\"vocab_size\":163840,"
    "\"intermediate_size\":9216,\"moe_intermediate_size\":1024,\"num_experts\":8,"
    "\"num_experts_per_token\":8,\"num_shared_experts\":1,\"first_k_dense_replace\":1,"
    "\"moe_layer_freq\":1,\"moe_renormalize\":true,\"moe_router_activation_func\":\"sigmoid\","
    "\"routed_scaling_factor\":2.446,\"use_grouped_topk\":true,\"num_expert_group\":1,"
    "\"topk_group\":1,\"q_lora_rank\":null,\"kv_lora_rank\":512,\"qk_nope_head_dim\":128,"
    "\"qk_rope_head_dim\":64,\"v_head_dim\":128,\"mla_use_nope\":true,"
    "\"num_nextn_predict_layers\":0,\"hidden_act\":\"silu\",\"rms_norm_eps\":1e-05,"
    "\"rope_scaling\":null,\"rope_theta\":10000.0,\"tie_word_embeddings\":false,"
    "\"linear_attn_config\":{\"full_attn_layers\":[4],\"head_dim\":128,"
    "\"kda_layers\":[1,2,3],\"num_heads\":32,\"short_conv_kernel_size\":4}}";

static tm_model *tm_kl_release(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	m->hollow = true;
	const int64_t H = 2304, P = 32 * 128;
	tm_top(m, 163840, H, 1);
	char b[200];
	for (int i = 0; i < 4; i++) {
		static const char *const nrm[] = {"input_layernorm.weight",
		                                  "post_attention_layernorm.weight"};
		for (int k = 0; k < 2; k++) {
			tm_fmt(b, sizeof(b), TM_L, i, nrm[k]);
			tm_add2(m, b, H, 0);
		}
		if (i == 3) {
			tm_lin_l(m, i, "self_attn.q_proj.weight", 32 * 192, H, 0);
			tm_lin_l(m, i, "self_attn.kv_a_proj_with_mqa.weight", 576, H, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.kv_a_layernorm.weight");
			tm_add2(m, b, 512, 0);
			tm_lin_l(m, i, "self_attn.kv_b_proj.weight", 32 * 256, 512, 0);
			tm_lin_l(m, i, "self_attn.o_proj.weight", H, 32 * 128, 0);
		} else {
			static const char *const x[] = {"q", "k", "v"};
			for (int c = 0; c < 3; c++) {
				char l[64];
				snprintf(l, sizeof(l), "self_attn.%s_proj.weight", x[c]);
				tm_lin_l(m, i, l, P, H, 0);
				snprintf(l, sizeof(l), "self_attn.%s_conv1d.weight", x[c]);
				tm_fmt(b, sizeof(b), TM_L, i, l);
				tm_add(m, b, WT_DTYPE_INVALID, 3, P, 1, 4);
			}
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.A_log");
			tm_add(m, b, WT_F32, 3, 1, 1, 32);
			m->d[m->n - 1].ndim = 4;
			m->d[m->n - 1].shape[3] = 1;
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.dt_bias");
			tm_add(m, b, WT_F32, 1, P, 0, 0);
			tm_lin_l(m, i, "self_attn.f_a_proj.weight", 128, H, 0);
			tm_lin_l(m, i, "self_attn.f_b_proj.weight", P, 128, 0);
			tm_lin_l(m, i, "self_attn.g_a_proj.weight", 128, H, 0);
			tm_lin_l(m, i, "self_attn.g_b_proj.weight", P, 128, 0);
			tm_lin_l(m, i, "self_attn.b_proj.weight", 32, H, 0);
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_norm.weight");
			tm_add2(m, b, 128, 0);
			tm_lin_l(m, i, "self_attn.o_proj.weight", H, P, 0);
		}
		if (i == 0) {
			tm_lin_l(m, i, "mlp.gate_proj.weight", 9216, H, 0);
			tm_lin_l(m, i, "mlp.up_proj.weight", 9216, H, 0);
			tm_lin_l(m, i, "mlp.down_proj.weight", H, 9216, 0);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.weight");
		tm_add2(m, b, 8, H);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, 8, 0, 0);
		for (int j = 0; j < 8; j++)
			for (int k = 0; k < 3; k++) {
				static const char *const leaf[] = {"w1", "w3", "w2"};
				char l[96];
				snprintf(l, sizeof(l), "block_sparse_moe.experts.%d.%s.weight", j,
				         leaf[k]);
				tm_lin_l(m, i, l, k == 2 ? H : 1024, k == 2 ? 1024 : H, 0);
			}
		tm_lin_l(m, i, "block_sparse_moe.shared_experts.gate_proj.weight", 1024, H, 0);
		tm_lin_l(m, i, "block_sparse_moe.shared_experts.up_proj.weight", 1024, H, 0);
		tm_lin_l(m, i, "block_sparse_moe.shared_experts.down_proj.weight", H, 1024, 0);
	}
	return m;
}

static void test_kl_release(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_kl_release(), kl_release, 8, 1, 0, false);
	shp(&f, 7, K0 "q_proj.weight", 2, 512, 2304, 0);
	shp(&f, 7, K0 "v_conv1d.weight", 3, 512, 1, 4);
	shp(&f, 7, K0 "b_proj.weight", 2, 4, 2304, 0);
	shp(&f, 7, K0 "f_a_proj.weight", 2, 128, 2304, 0);
	shp(&f, 7, K0 "g_b_proj.weight", 2, 512, 128, 0);
	shp(&f, 7, K0 "dt_bias", 1, 512, 0, 0);
	assert_int_equal(info(&f, 7, K0 "A_log")->shape[2], 4);
	shp(&f, 7, K0 "o_proj.weight", 2, 2304, 512, 0);
	const char *m3 = "model.layers.3.self_attn.";
	char n[128];
	snprintf(n, sizeof(n), "%sq_proj.weight", m3);
	shp(&f, 7, n, 2, 4 * 192, 2304, 0);
	snprintf(n, sizeof(n), "%skv_a_proj_with_mqa.weight", m3);
	shp(&f, 7, n, 2, 576, 2304, 0);
	snprintf(n, sizeof(n), "%skv_b_proj.weight", m3);
	shp(&f, 7, n, 2, 4 * 256, 512, 0);
	snprintf(n, sizeof(n), "%so_proj.weight", m3);
	shp(&f, 7, n, 2, 2304, 512, 0);
	shp(&f, 7, W13(1), 3, 8, 256, 2304);
	shp(&f, 7, SH1 "gate_up_proj.weight", 2, 256, 2304, 0);
	shp(&f, 7, "lm_head.weight", 2, 20480, 2304, 0);
	fx_close(&f);
	/* 32 MLA and KDA heads: TP 64 is out */
	fx_refused_tp(tm_kl_release(), kl_release, 64, WT_ELAYOUT, "does not divide", "32");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kl_tp),
	    cmocka_unit_test(test_kl_ep),
	    cmocka_unit_test(test_kl_quant),
	    cmocka_unit_test(test_kl_coverage),
	    cmocka_unit_test(test_kl_all_kda),
	    cmocka_unit_test(test_kl_config),
	    cmocka_unit_test(test_kl_config_refusals),
	    cmocka_unit_test(test_kl_refusals),
	    cmocka_unit_test(test_kl_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
