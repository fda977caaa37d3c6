/*
 * test_shardmap_qwen3_next.c — Qwen3-Next (Qwen3NextForCausalLM): full-attention layers
 * (q_proj with its output gate, [query_h; gate_h] per head, fused with k / v by whole
 * heads), linear-attention layers (the gated delta net: in_proj_qkvz / in_proj_ba rows
 * by key-head groups, conv1d's q / k / v channel segments each split, A_log / dt_bias by
 * value heads, out_proj by columns), which layer is which (layer_types, else
 * full_attention_interval), Qwen2-MoE's MLP, the mtp.* module dropped. Hand-computed
 * slices at TP 2, TP 4, EP 2, TP 2 x EP 2 and an int8 layout, an FP8-block source,
 * coverage over several layouts, Qwen3NextConfig's defaults and the refusals. Seeds
 * fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed000aull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 256, L 4, full attention H 4 / KV 2 / d 64 (q_proj 512 rows with the gates), linear
 * attention Hk 4 / Hv 8 of 32 (in_proj_qkvz 768 rows: per key head q 32, k 32, v 64, z 64;
 * in_proj_ba 16; conv1d [512, 1, 4]: q 128, k 128, v 256), dense MLP 384 (layer 0),
 * 4 experts of 64 and a shared expert of 128 (layers 1-3), V 1003 */
#define HID 256
#define Q3N_BASE0                                                                                  \
	"\"architectures\":[\"Qwen3NextForCausalLM\"],\"model_type\":\"qwen3_next\","              \
	"\"hidden_size\":256,\"num_attention_heads\":4,\"head_dim\":64,"                           \
	"\"intermediate_size\":384,\"vocab_size\":1003,\"num_hidden_layers\":4,"                   \
	"\"linear_key_head_dim\":32,\"linear_value_head_dim\":32,\"linear_conv_kernel_dim\":4,"    \
	"\"num_experts\":4,\"moe_intermediate_size\":64,\"shared_expert_intermediate_size\":128,"  \
	"\"mlp_only_layers\":[0],\"tie_word_embeddings\":false"
#define Q3N_BASE   Q3N_BASE0 ",\"linear_num_value_heads\":8"
#define Q3N_CFG(x) "{" Q3N_BASE ",\"num_key_value_heads\":2,\"linear_num_key_heads\":4" x "}"
#define Q3N_OK     Q3N_CFG(",\"full_attention_interval\":2")
#define L0         "model.layers.0."
#define L1         "model.layers.1."
#define LIN0       L0 "linear_attn."
#define ATT1       L1 "self_attn."
#define QKVZ       LIN0 "in_proj_qkvz.weight"
#define BA         LIN0 "in_proj_ba.weight"
#define CONV       LIN0 "conv1d.weight"
#define QKV1       ATT1 "qkv_proj.weight"
#define W13(i)     "model.layers." #i ".mlp.experts.w13_weight"
#define W2(i)      "model.layers." #i ".mlp.experts.w2_weight"
#define FP8_IGNORE                                                                                 \
	"\"modules_to_not_convert\":[\"lm_head\",\"model.layers.0.linear_attn.in_proj_ba\"]"
#define FP8_QCONFIG                                                                                \
	",\"quantization_config\":{\"quant_method\":\"fp8\",\"weight_block_size\":[128,128]"       \
	"," FP8_IGNORE "}"

/* The model's shape knobs: layer types ('L' linear, 'F' full), key / value heads of
 * the linear attention, kv heads, FP8-block linears (tm_lin's fp8 1). */
typedef struct q3n_dims {
	const char *types;
	int64_t hk, hv, kv;
	int fp8;
} q3n_dims;

static const q3n_dims Q3N_STD = {"LFLF", 4, 8, 2, 0};

static void add_full(tm_model *m, int i, const q3n_dims *o)
{
	char b[200];
	tm_lin_l(m, i, "self_attn.q_proj.weight", 2 * 4 * 64, HID, o->fp8);
	tm_lin_l(m, i, "self_attn.k_proj.weight", o->kv * 64, HID, o->fp8);
	tm_lin_l(m, i, "self_attn.v_proj.weight", o->kv * 64, HID, o->fp8);
	tm_lin_l(m, i, "self_attn.o_proj.weight", HID, 4 * 64, o->fp8);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_norm.weight");
	tm_add2(m, b, 64, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_norm.weight");
	tm_add2(m, b, 64, 0);
}

static void add_linear(tm_model *m, int i, const q3n_dims *o)
{
	char b[200];
	int64_t key = o->hk * 32, val = o->hv * 32;
	tm_lin_l(m, i, "linear_attn.in_proj_qkvz.weight", 2 * key + 2 * val, HID, o->fp8);
	tm_lin_l(m, i, "linear_attn.in_proj_ba.weight", 2 * o->hv, HID, 0); /* BF16 in FP8 too */
	tm_fmt(b, sizeof(b), TM_L, i, "linear_attn.conv1d.weight");
	tm_add(m, b, WT_DTYPE_INVALID, 3, 2 * key + val, 1, 4);
	tm_fmt(b, sizeof(b), TM_L, i, "linear_attn.A_log");
	tm_add(m, b, WT_F32, 1, o->hv, 0, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "linear_attn.dt_bias");
	tm_add2(m, b, o->hv, 0);
	tm_fmt(b, sizeof(b), TM_L, i, "linear_attn.norm.weight");
	tm_add2(m, b, 32, 0);
	tm_lin_l(m, i, "linear_attn.out_proj.weight", HID, val, o->fp8);
}

static void add_mlp(tm_model *m, int i, const q3n_dims *o)
{
	char b[200];
	if (i == 0) {
		tm_lin_l(m, i, "mlp.gate_proj.weight", 384, HID, o->fp8);
		tm_lin_l(m, i, "mlp.up_proj.weight", 384, HID, o->fp8);
		tm_lin_l(m, i, "mlp.down_proj.weight", HID, 384, o->fp8);
		return;
	}
	tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
	tm_add2(m, b, 4, HID);
	for (int j = 0; j < 4; j++) {
		static const char *const leaf[] = {"gate_proj", "up_proj", "down_proj"};
		for (int k = 0; k < 3; k++) {
			char l[96];
			snprintf(l, sizeof(l), "mlp.experts.%d.%s.weight", j, leaf[k]);
			tm_lin_l(m, i, l, k == 2 ? HID : 64, k == 2 ? 64 : HID, o->fp8);
		}
	}
	tm_lin_l(m, i, "mlp.shared_expert.gate_proj.weight", 128, HID, o->fp8);
	tm_lin_l(m, i, "mlp.shared_expert.up_proj.weight", 128, HID, o->fp8);
	tm_lin_l(m, i, "mlp.shared_expert.down_proj.weight", HID, 128, o->fp8);
	tm_fmt(b, sizeof(b), TM_L, i, "mlp.shared_expert_gate.weight");
	tm_add2(m, b, 1, HID);
}

static tm_model *tm_q3n_d(const q3n_dims *o)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, HID, 1);
	for (int i = 0; i < 4; i++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, HID, 0);
		if (o->types[i] == 'F')
			add_full(m, i, o);
		else
			add_linear(m, i, o);
		add_mlp(m, i, o);
	}
	/* the multi-token-prediction module, scales and all (dropped) */
	tm_lin(m, "mtp.fc.weight", HID, 2 * HID, o->fp8);
	tm_add2(m, "mtp.norm.weight", HID, 0);
	return m;
}

static tm_model *tm_q3n(void)
{
	return tm_q3n_d(&Q3N_STD);
}

/* Rank r's (tp rank t's) gated delta net of layer 0 at TP T (Hk 4, Hv 8): key-head groups of
 * in_proj_qkvz (192 rows each) and in_proj_ba (4 rows each), conv1d's q / k / v channel segments,
 * A_log and dt_bias by value heads, out_proj by columns, the norm whole. */
static void linear_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t g = 4 / T; /* key heads per rank */
	shp(f, r, QKVZ, 2, 192 * g, HID, 0);
	rows_are(f, r, QKVZ, 0, QKVZ, t * 192 * g, 192 * g);
	shp(f, r, BA, 2, 4 * g, HID, 0);
	rows_are(f, r, BA, 0, BA, t * 4 * g, 4 * g);
	shp(f, r, CONV, 3, 512 / T, 1, 4);
	int64_t qk = 128 / T, v = 256 / T;
	rows_are(f, r, CONV, 0, CONV, t * qk, qk);          /* q channels */
	rows_are(f, r, CONV, qk, CONV, 128 + t * qk, qk);   /* k channels */
	rows_are(f, r, CONV, 2 * qk, CONV, 256 + t * v, v); /* v channels */
	shp(f, r, LIN0 "A_log", 1, 8 / T, 0, 0);
	assert_int_equal(info(f, r, LIN0 "A_log")->dtype, WT_F32);
	rows_are(f, r, LIN0 "A_log", 0, LIN0 "A_log", t * 8 / T, 8 / T);
	rows_are(f, r, LIN0 "dt_bias", 0, LIN0 "dt_bias", t * 8 / T, 8 / T);
	rows_are(f, r, LIN0 "norm.weight", 0, LIN0 "norm.weight", 0, 32);
	shp(f, r, LIN0 "out_proj.weight", 2, HID, 256 / T, 0);
	cols_at(f, r, LIN0 "out_proj.weight", 0, LIN0 "out_proj.weight", HID, 256, t * 256 / T,
	        256 / T);
}

/* Rank r's (tp rank t's) fused q/k/v of layer 1 at TP T: whole q heads with their gates (128 rows
 * per head), then the rank's kv head (replicated when T > KV 2). */
static void attn_is(const fx *f, uint32_t r, int64_t t, int64_t T)
{
	int64_t hl = 4 / T, kvl = T > 2 ? 1 : 2 / T, ks = T > 2 ? t / (T / 2) : t;
	shp(f, r, QKV1, 2, (2 * hl + 2 * kvl) * 64, HID, 0);
	rows_are(f, r, QKV1, 0, ATT1 "q_proj.weight", t * hl * 128, hl * 128);
	rows_are(f, r, QKV1, hl * 128, ATT1 "k_proj.weight", ks * kvl * 64, kvl * 64);
	rows_are(f, r, QKV1, hl * 128 + kvl * 64, ATT1 "v_proj.weight", ks * kvl * 64, kvl * 64);
	shp(f, r, ATT1 "o_proj.weight", 2, HID, 256 / T, 0);
	cols_at(f, r, ATT1 "o_proj.weight", 0, ATT1 "o_proj.weight", HID, 256, t * 256 / T,
	        256 / T);
	rows_are(f, r, ATT1 "q_norm.weight", 0, ATT1 "q_norm.weight", 0, 64);
	rows_are(f, r, ATT1 "k_norm.weight", 0, ATT1 "k_norm.weight", 0, 64);
}

/* Layer 1's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13(1), W2(1), L1 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, 64};

static void test_q3n_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_q3n(), Q3N_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "qwen3_next");
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		linear_is(&f, r, r, 2);
		attn_is(&f, r, r, 2);
		fx_experts_are(&f, &XP, r, 0, 4, r * 32, 32, false);
	}
	/* layer 2 is linear too, layer 3 full: the interval's pattern */
	shp(&f, 1, "model.layers.2.linear_attn.conv1d.weight", 3, 256, 1, 4);
	shp(&f, 1, "model.layers.3.self_attn.qkv_proj.weight", 2, 384, HID, 0);
	assert_true(tm_ix(f.p, 1, "model.layers.2.self_attn.qkv_proj.weight") < 0);
	/* dense layer 0: gate / up rows [192, 384) each, down columns */
	const char *gu = L0 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 384, HID, 0);
	rows_are(&f, 1, gu, 0, L0 "mlp.gate_proj.weight", 192, 192);
	rows_are(&f, 1, gu, 192, L0 "mlp.up_proj.weight", 192, 192);
	cols_at(&f, 1, L0 "mlp.down_proj.weight", 0, L0 "mlp.down_proj.weight", HID, 384, 192, 192);
	/* shared expert merged, its gate and the router whole */
	const char *sgu = L1 "mlp.shared_expert.gate_up_proj.weight";
	rows_are(&f, 1, sgu, 0, L1 "mlp.shared_expert.gate_proj.weight", 64, 64);
	rows_are(&f, 1, sgu, 64, L1 "mlp.shared_expert.up_proj.weight", 64, 64);
	cols_at(&f, 0, L1 "mlp.shared_expert.down_proj.weight", 0,
	        L1 "mlp.shared_expert.down_proj.weight", HID, 128, 0, 64);
	rows_are(&f, 1, L1 "mlp.shared_expert_gate.weight", 0, L1 "mlp.shared_expert_gate.weight",
	         0, 1);
	rows_are(&f, 1, L1 "mlp.gate.weight", 0, L1 "mlp.gate.weight", 0, 4);
	/* mtp.* dropped and listed */
	assert_int_equal(shardmap_n_skipped(f.p), 2);
	assert_string_equal(shardmap_skipped(f.p, 0), "mtp.fc.weight");
	assert_string_equal(shardmap_skipped(f.p, 1), "mtp.norm.weight");
	assert_true(tm_ix(f.p, 0, "mtp.fc.weight") < 0);
	fx_close(&f);
}

/* TP 4: one key head per rank (192 rows of in_proj_qkvz, 4 of in_proj_ba), one q head with
 * its gate, the kv heads replicated on ranks 0-1 and 2-3. */
static void test_q3n_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_q3n(), Q3N_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		linear_is(&f, r, r, 4);
		attn_is(&f, r, r, 4);
		fx_experts_are(&f, &XP, r, 0, 4, r * 16, 16, false);
	}
	fx_close(&f);
}

static void test_q3n_ep(void **state)
{
	(void)state;
	fx f;
	/* EP 2: ep rank 1 holds experts 2, 3 whole; everything else whole (TP 1) */
	fx_open(&f, tm_q3n(), Q3N_OK, 1, 2, 0, true);
	shp(&f, 1, W2(3), 3, 2, HID, 64);
	fx_experts_are(&f, &XP, 0, 0, 2, 0, 64, false);
	fx_experts_are(&f, &XP, 1, 2, 2, 0, 64, false);
	linear_is(&f, 1, 0, 1);
	attn_is(&f, 1, 0, 1);
	fx_close(&f);
	/* TP 2 x EP 2, up_gate: rank 3 (tp 1, ep 1) holds experts 2, 3 whole, up first, rank 1
	 * (tp 1, ep 0) experts 0, 1; the attention of both kinds follows the tp rank */
	fx_open(&f, tm_q3n(), Q3N_OK, 2, 2, 1, true);
	fx_experts_are(&f, &XP, 3, 2, 2, 0, 64, true);
	fx_experts_are(&f, &XP, 1, 0, 2, 0, 64, true);
	linear_is(&f, 3, 1, 2);
	attn_is(&f, 3, 1, 2);
	rows_are(&f, 3, L1 "mlp.shared_expert.gate_up_proj.weight", 0,
	         L1 "mlp.shared_expert.gate_proj.weight", 64, 64);
	fx_close(&f);
}

/* int8-channel at TP 2: in_proj_qkvz (and the other linears) quantized from the rank's own
 * rows; in_proj_ba, conv1d, A_log, dt_bias, the norms, the router and shared_expert_gate
 * keep their dtype and get no scale. fp8-block and int4-group give the documented shapes. */
static void test_q3n_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_q3n(), Q3N_OK, &l, true);
	static const char *const keep[] = {BA,
	                                   CONV,
	                                   LIN0 "A_log",
	                                   LIN0 "dt_bias",
	                                   LIN0 "norm.weight",
	                                   ATT1 "q_norm.weight",
	                                   L1 "mlp.gate.weight",
	                                   L1 "mlp.shared_expert_gate.weight"};
	static const char *const q8[] = {QKVZ, LIN0 "out_proj.weight", QKV1, ATT1 "o_proj.weight",
	                                 W13(1)};
	fx_quant_split(&f, 1, -1, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	assert_int_equal(info(&f, 1, LIN0 "A_log")->dtype, WT_F32);
	assert_int_equal(info(&f, 1, BA)->dtype, WT_BF16);
	shp(&f, 1, QKVZ "_scale", 2, 384, 1, 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKVZ);
	const float *sc = (const float *)out_bytes(&f, 1, QKVZ "_scale");
	size_t rowb;
	const uint16_t *src = (const uint16_t *)src_rows(&f, QKVZ, 384, &rowb);
	for (int64_t row = 0; row < 384; row++) {
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	}
	fx_close(&f);
	l.quant = WT_QUANT_FP8_BLOCK;
	fx_open_l(&f, tm_q3n(), Q3N_OK, &l, false);
	shp(&f, 0, QKVZ "_scale", 2, 3, 2, 0);
	shp(&f, 0, LIN0 "out_proj.weight_scale", 2, 2, 1, 0);
	shp(&f, 0, QKV1 "_scale", 2, 3, 2, 0);
	assert_true(tm_ix(f.p, 0, BA "_scale") < 0);
	fx_close(&f);
	l.quant = WT_QUANT_INT4_GROUP;
	l.group_size = 32;
	fx_open_l(&f, tm_q3n(), Q3N_OK, &l, false);
	shp(&f, 1, LIN0 "out_proj.weight", 2, HID, 16, 0);
	shp(&f, 1, LIN0 "out_proj.weight_scale", 2, HID, 4, 0);
	fx_close(&f);
}

/* An FP8-block source as Qwen's FP8 release stores it: the linears F8_E4M3 with
 * weight_scale_inv, in_proj_ba, conv1d, A_log, dt_bias, norms, router and
 * shared_expert_gate BF16 (F32) without scales. fp8-block at TP 2 passes in_proj_qkvz
 * through (rows [384, 768): whole 128-blocks) with its scale rows [3, 6); q/k/v (k's 64 rows
 * are no whole block) needs requant=allow; the mtp module goes, scales and all. */
static void test_q3n_fp8_source(void **state)
{
	(void)state;
	q3n_dims o = Q3N_STD;
	o.fp8 = 1;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_BLOCK;
	wt_errbuf err = {0};
	char *dir = tu_mkdtemp("smq3n");
	tm_model *m = tm_q3n_d(&o);
	assert_int_equal(tm_write(m, dir, Q3N_CFG(",\"full_attention_interval\":2" FP8_QCONFIG)),
	                 0);
	store *s;
	ckpt *c;
	sm_plan *p;
	assert_int_equal(tm_plan(dir, &l, &s, &c, &p, &err), WT_ELAYOUT);
	printf("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, QKV1));
	assert_non_null(strstr(err.msg, "requant allow"));
	tm_close(s, c, p);
	tu_rmrf(dir);
	free(dir);
	l.requant_allow = true;
	fx_open_l(&f, m, Q3N_CFG(",\"full_attention_interval\":2" FP8_QCONFIG), &l, true);
	assert_int_equal(info(&f, 1, QKVZ)->dtype, WT_F8_E4M3);
	assert_false(info(&f, 1, QKVZ)->requantized);
	rows_are(&f, 1, QKVZ, 0, QKVZ, 384, 384);
	shp(&f, 1, QKVZ "_scale", 2, 3, 2, 0);
	rows_are(&f, 1, QKVZ "_scale", 0, LIN0 "in_proj_qkvz.weight_scale_inv", 3, 3);
	assert_true(info(&f, 1, QKV1)->requantized);
	assert_int_equal(info(&f, 1, BA)->dtype, WT_BF16);
	rows_are(&f, 1, BA, 0, BA, 8, 8);
	rows_are(&f, 1, CONV, 0, CONV, 64, 64);
	assert_int_equal(info(&f, 1, LIN0 "A_log")->dtype, WT_F32);
	assert_int_equal(shardmap_n_skipped(f.p), 3);
	assert_string_equal(shardmap_skipped(f.p, 0), "mtp.fc.weight");
	assert_string_equal(shardmap_skipped(f.p, 1), "mtp.fc.weight_scale_inv");
	fx_close(&f);
	/* quant none: every FP8 linear dequantized to BF16 */
	wt_layout_init(&l);
	l.tp_size = 2;
	fx_open_l(&f, tm_q3n_d(&o), Q3N_CFG(",\"full_attention_interval\":2" FP8_QCONFIG), &l,
	          false);
	assert_int_equal(info(&f, 0, QKVZ)->dtype, WT_BF16);
	assert_int_equal(info(&f, 0, QKV1)->dtype, WT_BF16);
	fx_close(&f);
}

/* layer_types decides the layer kinds over full_attention_interval. */
static void test_q3n_layer_types(void **state)
{
	(void)state;
	q3n_dims o = Q3N_STD;
	o.types = "LLFL";
	fx f;
	fx_open(&f, tm_q3n_d(&o),
	        Q3N_CFG(",\"full_attention_interval\":2,\"layer_types\":[\"linear_attention\","
	                "\"linear_attention\",\"full_attention\",\"linear_attention\"]"),
	        2, 1, 0, true);
	shp(&f, 1, L1 "linear_attn.in_proj_qkvz.weight", 2, 384, HID, 0);
	shp(&f, 1, "model.layers.2.self_attn.qkv_proj.weight", 2, 384, HID, 0);
	shp(&f, 0, "model.layers.3.linear_attn.A_log", 1, 4, 0, 0);
	linear_is(&f, 1, 1, 2);
	fx_close(&f);
	/* every layer full attention: no linear dims needed (interval 1) */
	o.types = "FFFF";
	fx_open(&f, tm_q3n_d(&o),
	        "{" Q3N_BASE ",\"num_key_value_heads\":2,\"full_attention_interval\":1}", 4, 1, 0,
	        false);
	shp(&f, 3, "model.layers.0.self_attn.qkv_proj.weight", 2, 256, HID, 0);
	fx_close(&f);
}

static void test_q3n_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2},
	                                   {1, 4}, {4, 2}, {2, 4}, {1, 3}, {4, 4}};
	coverage(tm_q3n(), Q3N_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Qwen3NextConfig's class defaults fill what config.json leaves out. */
static void test_q3n_config_defaults(void **state)
{
	(void)state;
	static const char cfg[] = "{\"architectures\": [\"Qwen3NextForCausalLM\"], "
	                          "\"model_type\": \"qwen3_next\", \"num_experts\": 64}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 2048);
	assert_int_equal(c.num_hidden_layers, 48);
	assert_int_equal(c.num_attention_heads, 16);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 256);
	assert_int_equal(c.vocab_size, 151936);
	assert_int_equal(c.intermediate_size, 5632);
	assert_int_equal(c.num_experts, 64); /* given */
	assert_int_equal(c.moe_intermediate_size, 512);
	assert_int_equal(c.shared_expert_intermediate_size, 512);
	assert_int_equal(c.lin_num_k_heads, 16);
	assert_int_equal(c.lin_num_v_heads, 32);
	assert_int_equal(c.lin_k_head_dim, 128);
	assert_int_equal(c.lin_v_head_dim, 128);
	assert_int_equal(c.lin_conv_kernel, 4);
	assert_int_equal(c.full_attention_interval, 4);
	assert_false(c.has_layer_types);
	ckpt_config_clear(&c);
	/* another model type gets none of them */
	static const char llama[] =
	    "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "
	    "64, \"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
	    "\"vocab_size\": 10, \"layer_types\": [\"full_attention\", \"x\"]}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.lin_num_k_heads, -1);
	assert_int_equal(c.full_attention_interval, -1);
	assert_true(c.has_layer_types);
	assert_int_equal(c.n_layer_types, 2);
	assert_int_equal(c.layer_types[0], CKPT_LAYER_FULL_ATTN);
	assert_int_equal(c.layer_types[1], CKPT_LAYER_OTHER);
	ckpt_config_clear(&c);
}

static void refused_l(tm_model *m, const char *cfg, uint32_t tp, uint32_t ep, int code,
                      const char *a, const char *b)
{
	char *dir = tu_mkdtemp("smq3n");
	assert_int_equal(tm_write(m, dir, cfg), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = tp;
	l.ep_size = ep;
	store *s;
	ckpt *c;
	sm_plan *p;
	wt_errbuf err = {0};
	int rv = tm_plan(dir, &l, &s, &c, &p, &err);
	printf("refused (%s): %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, code);
	if (!strstr(err.msg, a) || !strstr(err.msg, b))
		fail_msg("'%s' lacks '%s' or '%s'", err.msg, a, b);
	tm_close(s, c, p);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
}

/* Layouts the model cannot take: the numbers and the tp sizes that work. */
static void test_q3n_layouts(void **state)
{
	(void)state;
	refused_l(tm_q3n(), Q3N_OK, 8, 1, WT_ELAYOUT, "does not divide num_attention_heads 4",
	          "use tp_size 1, 2 or 4");
	refused_l(tm_q3n(), Q3N_OK, 3, 1, WT_ELAYOUT, "num_attention_heads 4", "use tp_size");
	/* 2 key heads: in_proj_qkvz splits by them, so TP 4 is out */
	q3n_dims o = Q3N_STD;
	o.hk = 2;
	refused_l(tm_q3n_d(&o),
	          "{" Q3N_BASE ",\"num_key_value_heads\":2,\"linear_num_key_heads\":2,"
	          "\"full_attention_interval\":2}",
	          4, 1, WT_ELAYOUT, "does not divide linear_num_key_heads 2", "use tp_size 1 or 2");
	/* KV 3 with TP 2: neither divides the other */
	o = Q3N_STD;
	o.kv = 3;
	refused_l(tm_q3n_d(&o),
	          "{" Q3N_BASE ",\"num_key_value_heads\":3,\"linear_num_key_heads\":4,"
	          "\"full_attention_interval\":2}",
	          2, 1, WT_ELAYOUT, "num_key_value_heads 3: one must divide the other",
	          "use tp_size 1");
	refused_l(tm_q3n(), Q3N_OK, 1, 8, WT_ELAYOUT, "ep_size 8 exceeds the 4 routed experts",
	          "use ep_size <= 4");
}

/* Configs that misdescribe the model, and checkpoints that miss or add tensors. */
static void test_q3n_errors(void **state)
{
	(void)state;
	/* interval 4: layer 1 is linear attention, so its self_attn tensors are unknown */
	refused_l(tm_q3n(), Q3N_CFG(",\"full_attention_interval\":4"), 2, 1, WT_EUNSUPPORTED, ATT1,
	          "makes layer 1 a linear-attention layer");
	/* no interval: Qwen3NextConfig's 4, the same */
	refused_l(tm_q3n(), Q3N_CFG(""), 2, 1, WT_EUNSUPPORTED, L1, "linear-attention layer");
	refused_l(tm_q3n(), Q3N_CFG(",\"full_attention_interval\":0"), 2, 1, WT_ECORRUPT,
	          "full_attention_interval", ">= 1");
	refused_l(tm_q3n(), Q3N_CFG(",\"layer_types\":[\"linear_attention\",\"full_attention\"]"),
	          2, 1, WT_ECORRUPT, "layer_types has 2 entries", "num_hidden_layers is 4");
	refused_l(tm_q3n(),
	          Q3N_CFG(",\"layer_types\":[\"linear_attention\",\"sliding_attention\","
	                  "\"linear_attention\",\"full_attention\"]"),
	          2, 1, WT_ECORRUPT, "layer_types[1]",
	          "\"linear_attention\" nor \"full_attention\"");
	refused_l(tm_q3n(), Q3N_CFG(",\"layer_types\":[1,2,3,4]"), 2, 1, WT_ECORRUPT,
	          "'layer_types'[0]", "not a string");
	refused_l(tm_q3n(),
	          "{" Q3N_BASE0 ",\"num_key_value_heads\":2,\"linear_num_key_heads\":4,"
	          "\"linear_num_value_heads\":6,\"full_attention_interval\":2}",
	          2, 1, WT_ECORRUPT, "linear_num_value_heads 6", "linear_num_key_heads 4");
	/* no model_type: no class defaults, and the linear sizes are missing */
	refused_l(tm_q3n(),
	          "{\"architectures\":[\"Qwen3NextForCausalLM\"],\"hidden_size\":256,"
	          "\"num_attention_heads\":4,\"num_hidden_layers\":4,\"vocab_size\":1003}",
	          2, 1, WT_ECORRUPT, "3 linear-attention layers", "linear_num_key_heads");
	tm_model *m = tm_q3n();
	tm_remove(m, CONV);
	refused_l(m, Q3N_OK, 2, 1, WT_ENOTFOUND, CONV, "missing");
	/* q_proj without its gates is not Qwen3-Next's */
	m = tm_q3n();
	tm_remove(m, ATT1 "q_proj.weight");
	tm_add2(m, ATT1 "q_proj.weight", 256, HID);
	refused_l(m, Q3N_OK, 2, 1, WT_ESHAPE, ATT1 "q_proj.weight", "[512, 256]");
	m = tm_q3n();
	tm_remove(m, BA);
	tm_add2(m, BA, 8, HID);
	refused_l(m, Q3N_OK, 2, 1, WT_ESHAPE, BA, "[16, 256]");
	/* the MLPs have no biases; only the attention's are optional */
	m = tm_q3n();
	tm_add2(m, L1 "mlp.shared_expert.up_proj.bias", 128, 0);
	refused_l(m, Q3N_OK, 2, 1, WT_EUNSUPPORTED, "shared_expert.up_proj.bias", "qwen3_next");
	/* a linear-attention tensor in a full-attention layer */
	m = tm_q3n();
	tm_add2(m, L1 "linear_attn.norm.weight", 32, 0);
	refused_l(m, Q3N_OK, 2, 1, WT_EUNSUPPORTED, L1 "linear_attn.norm.weight",
	          "a full-attention layer");
	/* a stray scale beside the BF16 in_proj_ba of an FP8 checkpoint */
	q3n_dims o = Q3N_STD;
	o.fp8 = 1;
	m = tm_q3n_d(&o);
	tm_add(m, LIN0 "in_proj_ba.weight_scale_inv", WT_F32, 2, 1, 2, 0);
	refused_l(m, Q3N_CFG(",\"full_attention_interval\":2" FP8_QCONFIG), 2, 1, WT_EUNSUPPORTED,
	          "in_proj_ba.weight_scale_inv", "BF16");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_q3n_tp2),        cmocka_unit_test(test_q3n_tp4),
	    cmocka_unit_test(test_q3n_ep),         cmocka_unit_test(test_q3n_quant),
	    cmocka_unit_test(test_q3n_fp8_source), cmocka_unit_test(test_q3n_layer_types),
	    cmocka_unit_test(test_q3n_coverage),   cmocka_unit_test(test_q3n_config_defaults),
	    cmocka_unit_test(test_q3n_layouts),    cmocka_unit_test(test_q3n_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
