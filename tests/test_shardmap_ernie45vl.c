/*
 * test_shardmap_ernie45vl.c — ERNIE-4.5-VL (Ernie4_5_VLMoeForConditionalGeneration), cut as
 * vLLM's ernie45_vl.py / ernie45_vl_moe.py load it: the MoE layers' checkpoint experts
 * mlp.experts.{j} split into the text set (j < moe_num_experts[0], mlp.experts.w13_weight /
 * w2_weight, moe_intermediate_size[0]) and the vision set (the rest, mlp.vision_experts.*,
 * moe_intermediate_size[1]), each TP-split inside its experts or spread over the ep ranks;
 * the routers mlp.gate.weight / weight_1 stored [hid, E] emitted [E, hid] F32, the [2, E]
 * correction bias whole; the DFNRope tower (qkv by heads, proj / fc2 by columns, fc1 by
 * rows, quantized) and the resampler (ColumnParallel Linears by rows, never quantized, norms
 * whole); the rest of the language model byte for byte the ernie4_5_moe family's. Config
 * and checkpoint refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0e45ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 4, KV 2 (d 32), I 256, V 1000, 4 layers: 0 and 3 dense, 1 and 2 MoE with 4 text
 * experts of 64, 4 vision experts of 32, 2 shared (128). Tower: embed 64, 4 heads, MLP 128
 * (mlp_ratio 2), 2 blocks, patch 2 over 3 channels (12), merge 2 (VM 256). */
#define HID 128
#define NE  4
#define IE  64
#define IEV 32
#define VE  64
#define VI  128
#define VM  256
#define EV_LM(ne, ie, st, en)                                                                      \
	"\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":4,"                   \
	"\"tie_word_embeddings\":false,\"moe_k\":2,\"moe_num_shared_experts\":2,"                  \
	"\"moe_layer_interval\":1,\"moe_num_experts\":" ne ",\"moe_intermediate_size\":" ie        \
	",\"moe_layer_start_index\":" st ",\"moe_layer_end_index\":" en
#define EV_VIS(vc) "\"vision_config\":{" vc "}"
#define EV_VC                                                                                      \
	"\"depth\":2,\"embed_dim\":64,\"hidden_size\":64,\"num_heads\":4,\"mlp_ratio\":2,"         \
	"\"patch_size\":2,\"spatial_merge_size\":2,\"in_channels\":3"
#define EV_TOP "\"pixel_hidden_size\":64,\"spatial_conv_size\":2,\"temporal_conv_size\":2"
#define EV_CFG3(lm, top, vis)                                                                      \
	"{\"architectures\":[\"Ernie4_5_VLMoeForConditionalGeneration\"],"                         \
	"\"model_type\":\"ernie4_5_moe_vl\"," lm "," top "," vis "}"
#define EV_LMOK EV_LM("[4,4]", "[64,32]", "[1,1]", "[2,2]")
#define EV_TOPT EV_TOP ",\"use_temporal_conv\":true"
#define EV_OK   EV_CFG3(EV_LMOK, EV_TOPT, EV_VIS(EV_VC))
/* the same language model as ERNIE 4.5 MoE's text-only config */
#define TXT_CFG                                                                                    \
	"{\"architectures\":[\"Ernie4_5_MoeForCausalLM\"],\"model_type\":\"ernie4_5_moe\"," EV_LM( \
	    "4", "64", "1", "2") "}"
#define L1 "model.layers.1."
#define M1 L1 "mlp."
#define RS "model.resampler_model."
#define B1 "vision_model.blocks.1."

/* The language model both checkpoints share, in one order (tm_add seeds by index: the same
 * tensors get the same values); then the routers and bias of each form, and the VL's own
 * vision experts, tower and resampler (temporal: temporal_linear.*). */
static tm_model *tm_evl(int vl, int temporal)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 4; i++) {
		tm_attn(m, i, 4, 2, 32, HID, 0, 0);
		if (i == 0 || i == 3) {
			tm_mlp(m, i, "mlp.", 256, HID);
			continue;
		}
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", 2 * IE, HID);
	}
	for (int i = 1; i < 3; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add(m, b, WT_F32, 2, vl ? HID : NE, vl ? NE : HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.moe_statics.e_score_correction_bias");
		tm_add(m, b, WT_F32, 2, vl ? 2 : 1, NE, 0);
		if (!vl)
			continue;
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight_1");
		tm_add(m, b, WT_F32, 2, HID, NE, 0);
		for (int j = NE; j < 2 * NE; j++) {
			static const char *const leaf[] = {"gate_proj", "up_proj", "down_proj"};
			for (int k = 0; k < 3; k++) {
				char l[80];
				snprintf(l, sizeof(l), "mlp.experts.%d.%s.weight", j, leaf[k]);
				tm_fmt(b, sizeof(b), TM_L, i, l);
				tm_add2(m, b, k < 2 ? IEV : HID, k < 2 ? HID : IEV);
			}
		}
	}
	if (!vl)
		return m;
	tm_add2(m, "vision_model.patch_embed.proj.weight", VE, 12);
	static const tm_leaf blk[] = {
	    {"norm1.weight", VE, 0, 0},         {"norm1.bias", VE, 0, 0},
	    {"norm2.weight", VE, 0, 0},         {"norm2.bias", VE, 0, 0},
	    {"attn.qkv.weight", 3 * VE, VE, 0}, {"attn.qkv.bias", 3 * VE, 0, 0},
	    {"attn.proj.weight", VE, VE, 0},    {"attn.proj.bias", VE, 0, 0},
	    {"mlp.fc1.weight", VI, VE, 0},      {"mlp.fc1.bias", VI, 0, 0},
	    {"mlp.fc2.weight", VE, VI, 0},      {"mlp.fc2.bias", VE, 0, 0}};
	tm_layers(m, "vision_model.blocks.%d.", 2, blk, TM_NLEAVES(blk), 0);
	tm_add2(m, "vision_model.ln.weight", VE, 0);
	tm_add2(m, "vision_model.ln.bias", VE, 0);
	static const tm_leaf rs[] = {{"spatial_linear.0.weight", VM, VM, 0},
	                             {"spatial_linear.0.bias", VM, 0, 0},
	                             {"spatial_linear.2.weight", VM, VM, 0},
	                             {"spatial_linear.2.bias", VM, 0, 0},
	                             {"spatial_linear.3.weight", VM, 0, 0},
	                             {"spatial_linear.3.bias", VM, 0, 0},
	                             {"mlp.weight", HID, VM, 0},
	                             {"mlp.bias", HID, 0, 0},
	                             {"after_norm.weight", HID, 0, 0},
	                             {"temporal_linear.0.weight", VM, 2 * VM, 1},
	                             {"temporal_linear.0.bias", VM, 0, 1},
	                             {"temporal_linear.2.weight", VM, VM, 1},
	                             {"temporal_linear.2.bias", VM, 0, 1},
	                             {"temporal_linear.3.weight", VM, 0, 1},
	                             {"temporal_linear.3.bias", VM, 0, 1}};
	tm_layers(m, RS "%.0d", 1, rs, TM_NLEAVES(rs), temporal);
	return m;
}

static tm_model *tm_ev_full(void)
{
	return tm_evl(1, 1);
}

static tm_model *tm_ev_text(void)
{
	return tm_evl(0, 0);
}

static const fx_experts XT = {M1 "experts.w13_weight",
                              M1 "experts.w2_weight",
                              M1 "experts.%lld.%s.weight",
                              "gate_proj",
                              "up_proj",
                              "down_proj",
                              HID,
                              IE};
static const fx_experts XV = {M1 "vision_experts.w13_weight",
                              M1 "vision_experts.w2_weight",
                              M1 "experts.%lld.%s.weight",
                              "gate_proj",
                              "up_proj",
                              "down_proj",
                              HID,
                              IEV};

/* The routers on rank r: [E, hid] F32, the transpose of the stored [hid, E]; the correction
 * bias whole [2, E]. */
static void routers_are(const fx *f, uint32_t r)
{
	static const char *const g[] = {M1 "gate.weight", M1 "gate.weight_1"};
	for (int k = 0; k < 2; k++) {
		shp(f, r, g[k], 2, NE, HID, 0);
		assert_int_equal(info(f, r, g[k])->dtype, WT_F32);
		size_t rowb;
		const float *s = (const float *)(const void *)src_rows(f, g[k], 0, &rowb);
		const float *o = (const float *)(const void *)out_bytes(f, r, g[k]);
		for (int64_t e = 0; e < NE; e++)
			for (int64_t h = 0; h < HID; h++)
				assert_true(o[e * HID + h] == s[h * NE + e]);
	}
	const char *cb = M1 "moe_statics.e_score_correction_bias";
	shp(f, r, cb, 2, 2, NE, 0);
	rows_are(f, r, cb, 0, cb, 0, 2);
}

/* Rank rk (tp rank r of TP 2) 's tower block 1 and resampler. */
static void tower_tp2_is(const fx *f, uint32_t rk, uint32_t r)
{
	const char *qkv = B1 "attn.qkv.weight", *qb = B1 "attn.qkv.bias";
	shp(f, rk, qkv, 2, 3 * VE / 2, VE, 0);
	for (int p = 0; p < 3; p++) { /* [q_r; k_r; v_r]: heads 2r, 2r+1 (16 rows each) */
		rows_are(f, rk, qkv, p * 32, qkv, p * VE + r * 32, 32);
		rows_are(f, rk, qb, p * 32, qb, p * VE + r * 32, 32);
	}
	cols_at(f, rk, B1 "attn.proj.weight", 0, B1 "attn.proj.weight", VE, VE, r * 32, 32);
	rows_are(f, rk, B1 "mlp.fc1.weight", 0, B1 "mlp.fc1.weight", r * 64, 64);
	rows_are(f, rk, B1 "mlp.fc1.bias", 0, B1 "mlp.fc1.bias", r * 64, 64);
	cols_at(f, rk, B1 "mlp.fc2.weight", 0, B1 "mlp.fc2.weight", VE, VI, r * 64, 64);
	static const char *const whole[] = {B1 "attn.proj.bias", B1 "mlp.fc2.bias",
	                                    B1 "norm1.weight", B1 "norm2.bias",
	                                    "vision_model.ln.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		rows_are(f, rk, whole[k], 0, whole[k], 0, VE);
	shp(f, rk, "vision_model.patch_embed.proj.weight", 2, VE, 12, 0);
	rows_are(f, rk, "vision_model.patch_embed.proj.weight", 0,
	         "vision_model.patch_embed.proj.weight", 0, VE);
	/* resampler: gather_output ColumnParallel Linears by rows, biases alike */
	static const char *const col[] = {"spatial_linear.0", "spatial_linear.2",
	                                  "temporal_linear.0", "temporal_linear.2"};
	char w[120], bb[120];
	for (size_t k = 0; k < 4; k++) {
		snprintf(w, sizeof(w), RS "%s.weight", col[k]);
		snprintf(bb, sizeof(bb), RS "%s.bias", col[k]);
		shp(f, rk, w, 2, VM / 2, k == 2 ? 2 * VM : VM, 0);
		rows_are(f, rk, w, 0, w, r * VM / 2, VM / 2);
		rows_are(f, rk, bb, 0, bb, r * VM / 2, VM / 2);
	}
	shp(f, rk, RS "mlp.weight", 2, HID / 2, VM, 0);
	rows_are(f, rk, RS "mlp.weight", 0, RS "mlp.weight", r * HID / 2, HID / 2);
	rows_are(f, rk, RS "mlp.bias", 0, RS "mlp.bias", r * HID / 2, HID / 2);
	rows_are(f, rk, RS "spatial_linear.3.weight", 0, RS "spatial_linear.3.weight", 0, VM);
	rows_are(f, rk, RS "temporal_linear.3.bias", 0, RS "temporal_linear.3.bias", 0, VM);
	rows_are(f, rk, RS "after_norm.weight", 0, RS "after_norm.weight", 0, HID);
}

static void test_ev_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ev_full(), EV_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "ernie45_vl");
	for (uint32_t r = 0; r < 2; r++) {
		/* text experts 0..3, each's rows [32r, +32); vision experts (checkpoint 4..7) rows
		 * [16r, +16) of 32 */
		fx_experts_are(&f, &XT, r, 0, NE, r * 32, 32, false);
		fx_experts_are(&f, &XV, r, NE, NE, r * 16, 16, false);
		routers_are(&f, r);
		tower_tp2_is(&f, r, r);
	}
	assert_true(tm_ix(f.p, 0, "model.layers.3.mlp.vision_experts.w13_weight") < 0);
	assert_true(tm_ix(f.p, 0, "model.layers.0.mlp.gate.weight_1") < 0);
	fx_close(&f);
}

static void test_ev_ep(void **state)
{
	(void)state;
	fx f;
	/* EP 2: ep rank e holds text experts 2e, 2e+1 and vision experts 2e, 2e+1 (checkpoint
	 * 4 + 2e, 5 + 2e), whole */
	fx_open(&f, tm_ev_full(), EV_OK, 1, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++) {
		fx_experts_are(&f, &XT, e, 2 * e, 2, 0, IE, false);
		fx_experts_are(&f, &XV, e, NE + 2 * e, 2, 0, IEV, false);
		routers_are(&f, e);
	}
	fx_close(&f);
	/* TP 2 x EP 2, up_gate: rank 3 (tp 1, ep 1) the same experts, up first; the tower by
	 * the tp rank */
	fx_open(&f, tm_ev_full(), EV_OK, 2, 2, 1, true);
	fx_experts_are(&f, &XT, 3, 2, 2, 0, IE, true);
	fx_experts_are(&f, &XV, 3, NE + 2, 2, 0, IEV, true);
	fx_experts_are(&f, &XV, 0, NE, 2, 0, IEV, true);
	tower_tp2_is(&f, 3, 1);
	tower_tp2_is(&f, 2, 0);
	fx_close(&f);
}

/* int8-channel TP 2: the language model's and the tower's Linears quantized, the vision
 * experts among them; the resampler, the patch Linear, routers and norms not. */
static void test_ev_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_ev_full(), EV_OK, &l, true);
	static const char *const q[] = {M1 "vision_experts.w13_weight",
	                                M1 "vision_experts.w2_weight",
	                                M1 "experts.w13_weight",
	                                B1 "attn.qkv.weight",
	                                B1 "attn.proj.weight",
	                                B1 "mlp.fc1.weight",
	                                B1 "mlp.fc2.weight"};
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		assert_int_equal(info(&f, 1, q[k])->dtype, WT_I8);
	shp(&f, 1, M1 "vision_experts.w13_weight_scale", 3, NE, 32, 1);
	static const char *const fl[] = {
	    RS "spatial_linear.0.weight", RS "temporal_linear.0.weight", RS "mlp.weight",
	    "vision_model.patch_embed.proj.weight", B1 "attn.qkv.bias"};
	for (size_t k = 0; k < sizeof(fl) / sizeof(fl[0]); k++) {
		assert_int_equal(info(&f, 1, fl[k])->dtype, WT_BF16);
		char s[160];
		snprintf(s, sizeof(s), "%s_scale", fl[k]);
		assert_true(tm_ix(f.p, 1, s) < 0);
	}
	assert_int_equal(info(&f, 1, M1 "gate.weight_1")->dtype, WT_F32);
	/* vision expert 5 (slot 1), up row 3 of rank 1's half: checkpoint row 16 + 3 */
	const int8_t *c = (const int8_t *)out_bytes(&f, 1, M1 "vision_experts.w13_weight");
	const float *sc =
	    (const float *)(const void *)out_bytes(&f, 1, M1 "vision_experts.w13_weight_scale");
	size_t rowb;
	const uint16_t *x =
	    (const uint16_t *)(const void *)src_rows(&f, M1 "experts.5.up_proj.weight", 19, &rowb);
	int8_row_is(c + (1 * 32 + 16 + 3) * HID, sc[1 * 32 + 16 + 3], x, HID);
	fx_close(&f);
}

/* exclude patterns match the checkpoint's names (mlp.experts.{4..7}) or the vision set's
 * (mlp.vision_experts.{j}): either keeps layer 1's vision stack BF16, the text stack int8; half
 * the vision experts is a partly excluded fused module. */
static void test_ev_exclude(void **state)
{
	(void)state;
	static const char *const pats[] = {"re:model\\.layers\\.1\\.mlp\\.experts\\.[4-7]\\..*",
	                                   "model.layers.1.mlp.vision_experts."};
	for (size_t k = 0; k < 2; k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = WT_QUANT_INT8_CHANNEL;
		assert_int_equal(wt_layout_add_exclude(&l, pats[k], NULL), WT_OK);
		fx f;
		fx_open_l(&f, tm_ev_full(), EV_OK, &l, true);
		assert_int_equal(info(&f, 1, M1 "vision_experts.w13_weight")->dtype, WT_BF16);
		assert_int_equal(info(&f, 1, M1 "experts.w13_weight")->dtype, WT_I8);
		assert_int_equal(info(&f, 1, "model.layers.2.mlp.vision_experts.w2_weight")->dtype,
		                 WT_I8);
		fx_experts_are(&f, &XV, 1, NE, NE, 16, 16, false);
		fx_close(&f);
		wt_layout_clear(&l);
	}
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	assert_int_equal(wt_layout_add_exclude(&l, "model.layers.1.mlp.experts.5.", NULL), WT_OK);
	fx_refused_at(tm_ev_full(), EV_OK, &l, WT_ELAYOUT, "vision_experts.w13_weight",
	              "experts.5");
	wt_layout_clear(&l);
}

/* Rank r of a (ERNIE-4.5-VL) against rank r of b (ernie4_5_moe), as fx_same_rank_but, each
 * plan's outputs under skip left out (b's routers and bias have other shapes). */
static void same_but(const fx *a, const fx *b, uint32_t r, const char *const *skip)
{
	size_t n[2] = {0, 0};
	const fx *p[2] = {a, b};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < shardmap_rank_n_tensors(p[k]->p, r); i++) {
			const sm_out_info *t = shardmap_rank_tensor(p[k]->p, r, i);
			bool other = false;
			for (const char *const *s = skip; *s != NULL && !other; s++)
				other = strncmp(t->name, *s, strlen(*s)) == 0;
			if (other)
				continue;
			n[k]++;
			const sm_out_info *u = info(p[1 - k], r, t->name);
			assert_int_equal(t->nbytes, u->nbytes);
			assert_int_equal(t->dtype, u->dtype);
			if (memcmp(p[k]->pr->b[r][i], out_bytes(p[1 - k], r, t->name), t->nbytes) !=
			    0)
				fail_msg("rank %u '%s' differs from the ernie4_5_moe family's", r,
				         t->name);
		}
	assert_int_equal(n[0], n[1]);
}

/* Every rank outside the tower, the resampler and the MoE layers' vision experts / routers /
 * bias is the ernie4_5_moe family's rank of the same weights. */
static void test_ev_same_lm(void **state)
{
	(void)state;
	static const char *const skip[] = {"vision_model.",
	                                   RS,
	                                   "model.layers.1.mlp.vision_experts.",
	                                   "model.layers.2.mlp.vision_experts.",
	                                   "model.layers.1.mlp.gate.weight",
	                                   "model.layers.2.mlp.gate.weight",
	                                   "model.layers.1.mlp.moe_statics.",
	                                   "model.layers.2.mlp.moe_statics.",
	                                   NULL};
	static const uint32_t lays[][3] = {{1, 1, 0}, {2, 1, 0}, {4, 1, 0}, {2, 2, 1}, {1, 4, 0}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		fx a, b;
		fx_open(&a, tm_ev_full(), EV_OK, lays[k][0], lays[k][1], (int)lays[k][2], true);
		fx_open(&b, tm_ev_text(), TXT_CFG, lays[k][0], lays[k][1], (int)lays[k][2], true);
		for (uint32_t r = 0; r < lays[k][0] * lays[k][1]; r++)
			same_but(&a, &b, r, skip);
		fx_close(&a);
		fx_close(&b);
	}
}

static void test_ev_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2}, {1, 4}, {4, 2}};
	coverage(tm_ev_full(), EV_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* use_temporal_conv false: no temporal_linear */
	static const uint32_t two[][2] = {{2, 1}, {1, 3}};
	coverage(tm_evl(1, 0),
	         EV_CFG3(EV_LMOK, EV_TOP ",\"use_temporal_conv\":false", EV_VIS(EV_VC)), 2, two, 2);
	/* and a checkpoint holding temporal_linear.* anyway: skipped, as vLLM's resampler skips
	 * names it has no parameter for */
	fx f;
	fx_open(&f, tm_evl(1, 1),
	        EV_CFG3(EV_LMOK, EV_TOP ",\"use_temporal_conv\":false", EV_VIS(EV_VC)), 2, 1, 0,
	        false);
	assert_int_equal(shardmap_n_skipped(f.p), 6);
	for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
		assert_non_null(strstr(shardmap_skipped(f.p, k), RS "temporal_linear."));
	assert_true(tm_ix(f.p, 0, RS "temporal_linear.0.weight") < 0);
	fx_close(&f);
}

/* The language model's config keys: the [text, vision] lists and their ranges. */
static void test_ev_config_refused(void **state)
{
	(void)state;
#define EV_LMREF(ne, ie, st, en, code, a, b)                                                       \
	fx_refused(tm_ev_full(), EV_CFG3(EV_LM(ne, ie, st, en), EV_TOPT, EV_VIS(EV_VC)), code, a, b)
	EV_LMREF("[4,8]", "[64,32]", "[1,1]", "[2,2]", WT_EUNSUPPORTED, "moe_num_experts [4, 8]",
	         "asserts");
	EV_LMREF("4", "[64,32]", "[1,1]", "[2,2]", WT_EUNSUPPORTED, "moe_num_experts",
	         "Ernie4_5_MoeForCausalLM");
	EV_LMREF("[4,4]", "[64]", "[1,1]", "[2,2]", WT_ECORRUPT, "moe_intermediate_size",
	         "[1536, 512]");
	EV_LMREF("[4,4]", "[64,-1]", "[1,1]", "[2,2]", WT_ECORRUPT, "moe_intermediate_size[1]",
	         "not an integer");
	EV_LMREF("[4,4]", "[64,32]", "[1,2]", "[2,2]", WT_EUNSUPPORTED, "vision experts 2..2",
	         "give both the same layers");
	EV_LMREF("[4,4]", "[64,32]", "[1,1]", "[2,9]", WT_EUNSUPPORTED, "text experts layers 1..2",
	         "vision experts 1..3");
	EV_LMREF("[4,4]", "[64,32]", "[2,2]", "[1,1]", WT_ECORRUPT, "moe_layer_start_index[0] 2",
	         "start <= end");
	fx_refused(tm_ev_full(),
	           EV_CFG3("\"hidden_size\":128,\"num_hidden_layers\":4,\"moe_num_experts\":[4,4],"
	                   "\"moe_intermediate_size\":[64,32]",
	                   EV_TOPT, EV_VIS(EV_VC)),
	           WT_ECORRUPT, "moe_layer_start_index is missing", "[1, 1]");
#undef EV_LMREF
	/* end past the last layer is the last layer (the 28B release's [29, 28] over 28): the
	 * text range 1..3 here makes layer 3 MoE, whose dense MLP is then unknown */
	fx_refused(tm_ev_full(),
	           EV_CFG3(EV_LM("[4,4]", "[64,32]", "[1,1]", "[9,5]"), EV_TOPT, EV_VIS(EV_VC)),
	           WT_EUNSUPPORTED, "model.layers.3.mlp.", "moe_layer_end_index");
	/* the text expert width is the shared experts' unit too: 32 x 2 is not their 128 */
	fx_refused(tm_ev_full(),
	           EV_CFG3(EV_LM("[4,4]", "[32,64]", "[1,1]", "[2,2]"), EV_TOPT, EV_VIS(EV_VC)),
	           WT_ESHAPE, "experts", "32");
}

/* vision_config's and the resampler's keys. */
static void test_ev_vision_refused(void **state)
{
	(void)state;
	fx_refused(tm_ev_full(), EV_CFG3(EV_LMOK, EV_TOPT, "\"x\":0"), WT_ECORRUPT,
	           "vision_config is missing", "embed_dim");
	static const char *const keys[] = {"depth",       "embed_dim",  "num_heads",
	                                   "mlp_ratio",   "patch_size", "spatial_merge_size",
	                                   "in_channels", "hidden_size"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		/* vision_config without keys[k] */
		char vc[400] = "", cfg[1600];
		static const char *const kv[][2] = {
		    {"depth", "2"},       {"embed_dim", "64"},  {"num_heads", "4"},
		    {"mlp_ratio", "2"},   {"patch_size", "2"},  {"spatial_merge_size", "2"},
		    {"in_channels", "3"}, {"hidden_size", "64"}};
		for (size_t i = 0; i < 8; i++)
			if (i != k)
				snprintf(vc + strlen(vc), sizeof(vc) - strlen(vc), "%s\"%s\":%s",
				         vc[0] ? "," : "", kv[i][0], kv[i][1]);
		snprintf(cfg, sizeof(cfg), EV_CFG3(EV_LMOK, EV_TOPT, "\"vision_config\":{%s}"), vc);
		char want[80];
		snprintf(want, sizeof(want), "vision_config.%s is missing", keys[k]);
		fx_refused(tm_ev_full(), cfg, WT_ECORRUPT, want, "add it");
	}
	fx_refused(tm_ev_full(),
	           EV_CFG3(EV_LMOK, EV_TOPT,
	                   EV_VIS("\"depth\":2,\"embed_dim\":64,\"hidden_size\":128,\"num_heads\":"
	                          "4,\"mlp_ratio\":2,\"patch_size\":2,\"spatial_merge_size\":2,"
	                          "\"in_channels\":3")),
	           WT_ECORRUPT, "hidden_size 128 differs from embed_dim 64", "asserts");
	fx_refused(
	    tm_ev_full(),
	    EV_CFG3(EV_LMOK,
	            "\"pixel_hidden_size\":32,\"spatial_conv_size\":2,\"temporal_conv_size\":"
	            "2,\"use_temporal_conv\":true",
	            EV_VIS(EV_VC)),
	    WT_ECORRUPT, "pixel_hidden_size 32", "set it to 64");
	fx_refused(
	    tm_ev_full(),
	    EV_CFG3(EV_LMOK,
	            "\"pixel_hidden_size\":64,\"spatial_conv_size\":1,\"temporal_conv_size\":"
	            "2,\"use_temporal_conv\":true",
	            EV_VIS(EV_VC)),
	    WT_EUNSUPPORTED, "spatial_conv_size 1", "spatial_merge_size 2");
	fx_refused(
	    tm_ev_full(),
	    EV_CFG3(EV_LMOK,
	            "\"pixel_hidden_size\":64,\"spatial_conv_size\":2,\"temporal_conv_size\":"
	            "3,\"use_temporal_conv\":true",
	            EV_VIS(EV_VC)),
	    WT_EUNSUPPORTED, "temporal_conv_size 3", "set it to 2");
	fx_refused(tm_ev_full(), EV_CFG3(EV_LMOK, EV_TOP, EV_VIS(EV_VC)), WT_ECORRUPT,
	           "use_temporal_conv is missing", "add it");
	fx_refused(tm_ev_full(),
	           EV_CFG3(EV_LMOK,
	                   "\"spatial_conv_size\":2,\"temporal_conv_size\":2,"
	                   "\"use_temporal_conv\":true",
	                   EV_VIS(EV_VC)),
	           WT_ECORRUPT, "pixel_hidden_size is missing", "1280");
	/* and true without them: missing */
	fx_refused(tm_evl(1, 0), EV_OK, WT_ENOTFOUND, "temporal_linear.0.weight", "missing");
}

/* The checkpoint's tensors. */
static void test_ev_tensors_refused(void **state)
{
	(void)state;
	const char *cb = M1 "moe_statics.e_score_correction_bias";
	tm_model *m = tm_ev_full();
	tm_remove(m, cb);
	tm_add(m, cb, WT_F32, 2, 1, NE, 0);
	fx_refused(m, EV_OK, WT_ESHAPE, cb, "[2, moe_num_experts]");
	m = tm_ev_full();
	tm_remove(m, M1 "experts.6.down_proj.weight");
	fx_refused(m, EV_OK, WT_ENOTFOUND, M1 "experts.6.down_proj.weight", "missing");
	m = tm_ev_full();
	tm_remove(m, M1 "gate.weight_1");
	fx_refused(m, EV_OK, WT_ENOTFOUND, M1 "gate.weight_1", "missing");
	/* a vision expert of the text width */
	m = tm_ev_full();
	tm_remove(m, M1 "experts.5.up_proj.weight");
	tm_add2(m, M1 "experts.5.up_proj.weight", IE, HID);
	fx_refused(m, EV_OK, WT_ESHAPE, M1 "experts.5.up_proj.weight", "32");
	/* a router stored [E, hid] (not transposed) */
	m = tm_ev_full();
	tm_remove(m, M1 "gate.weight");
	tm_add(m, M1 "gate.weight", WT_F32, 2, NE, HID, 0);
	fx_refused(m, EV_OK, WT_ESHAPE, M1 "gate.weight", "128");
	/* checkpoint expert 8: past both sets */
	m = tm_ev_full();
	tm_add2(m, M1 "experts.8.up_proj.weight", IEV, HID);
	fx_refused(m, EV_OK, WT_ESHAPE, "experts.8.", "4 experts");
	/* the resampler's mlp of the merged width's rows */
	m = tm_ev_full();
	tm_remove(m, RS "mlp.weight");
	tm_add2(m, RS "mlp.weight", VM, VM);
	fx_refused(m, EV_OK, WT_ESHAPE, RS "mlp.weight", "128");
	/* tp 8 over 4 experts: vLLM's Ernie4_5_VLMoeMoE raises */
	fx_refused_tp(tm_ev_full(), EV_OK, 8, WT_ELAYOUT, "tp_size 8", "4 routed experts");
	/* tp 4: the vision experts' 32 rows split, 4 heads; tp 3 divides neither */
	fx_refused_tp_ep(tm_ev_full(), EV_OK, 3, 1, WT_ELAYOUT, "3", "4");
	/* use_bias: the experts' biases have no stack */
	fx_refused(tm_ev_full(), EV_CFG3(EV_LMOK ",\"use_bias\":true", EV_TOPT, EV_VIS(EV_VC)),
	           WT_EUNSUPPORTED, "use_bias", "routed experts");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ev_tp2),
	    cmocka_unit_test(test_ev_ep),
	    cmocka_unit_test(test_ev_int8),
	    cmocka_unit_test(test_ev_exclude),
	    cmocka_unit_test(test_ev_same_lm),
	    cmocka_unit_test(test_ev_coverage),
	    cmocka_unit_test(test_ev_config_refused),
	    cmocka_unit_test(test_ev_vision_refused),
	    cmocka_unit_test(test_ev_tensors_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
