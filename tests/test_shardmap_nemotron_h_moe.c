/*
 * test_shardmap_nemotron_h_moe.c — Nemotron-H's MoE layers (NemotronHForCausalLM with "E" in
 * hybrid_override_pattern: NVIDIA-Nemotron-3-Nano-30B-A3B), cut as vLLM's nemotron_h.py
 * NemotronHMoE loads them: the router gate.weight and gate.e_score_correction_bias whole and
 * unquantized on every rank; the non-gated routed experts experts.{j}.up_proj / down_proj
 * stacked as FusedMoE's experts.w13_weight (w1 alone: [E, Il, hid]) / w2_weight ([E, hid,
 * Il]), each expert's rows / columns split by tp, whole experts per EP rank; the shared
 * experts shared_experts.up_proj by rows and down_proj by columns (n_shared_experts x
 * moe_shared_expert_intermediate_size wide); experts and shared experts quantized. Hand
 * slices at TP 2, TP 4 and TP 2 x EP 2, int8 codes, fp8-channel, coverage over TP 1-8 and EP,
 * the remote config's MoE defaults, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00e8ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 64, L 4 "ME*E"; Mamba2 8 heads of 16, 4 groups, state 16, conv 4; attention H 4, KV 2,
 * d 16; MoE: 8 experts of Ie 32 in 4 groups, one shared expert of 96; V 1003, untied */
#define HID 64
#define NHM_DIMS                                                                                   \
	"\"architectures\":[\"NemotronHForCausalLM\"],\"model_type\":\"nemotron_h\","              \
	"\"hidden_size\":64,\"vocab_size\":1003,\"num_attention_heads\":4,"                        \
	"\"num_key_value_heads\":2,\"mamba_num_heads\":8,\"mamba_head_dim\":16,"                   \
	"\"ssm_state_size\":16,\"conv_kernel\":4,\"n_groups\":4,\"attention_head_dim\":16,"        \
	"\"intermediate_size\":128,\"num_hidden_layers\":4,\"hybrid_override_pattern\":\"ME*E\""
#define NHM_MOE                                                                                    \
	",\"n_routed_experts\":8,\"moe_intermediate_size\":32,\"num_experts_per_tok\":3,"          \
	"\"n_group\":4,\"topk_group\":2,\"routed_scaling_factor\":2.5"
#define NHM_CFG(x) "{" NHM_DIMS NHM_MOE ",\"moe_shared_expert_intermediate_size\":96" x "}"
#define NHM_OK     NHM_CFG("")
#define L1         "backbone.layers.1.mixer."
#define L3         "backbone.layers.3.mixer."
#define W13        L1 "experts.w13_weight"
#define W2         L1 "experts.w2_weight"
#define GATE       L1 "gate.weight"
#define EBIAS      L1 "gate.e_score_correction_bias"
#define SUP        L1 "shared_experts.up_proj.weight"
#define SDOWN      L1 "shared_experts.down_proj.weight"

static void add_l(tm_model *m, const char *fmt, int i, int64_t a, int64_t b)
{
	char n[200];
	snprintf(n, sizeof(n), fmt, i);
	tm_add2(m, n, a, b);
}

/* Layer i's MoE: the router and its F32 bias, 8 experts, the shared expert (shared). */
static void add_moe(tm_model *m, int i, bool shared)
{
	char n[200];
	add_l(m, "backbone.layers.%d.mixer.gate.weight", i, 8, HID);
	snprintf(n, sizeof(n), "backbone.layers.%d.mixer.gate.e_score_correction_bias", i);
	tm_add(m, n, WT_F32, 1, 8, 0, 0);
	for (int j = 0; j < 8; j++) {
		snprintf(n, sizeof(n), "backbone.layers.%d.mixer.experts.%d.up_proj.weight", i, j);
		tm_add2(m, n, 32, HID);
		snprintf(n, sizeof(n), "backbone.layers.%d.mixer.experts.%d.down_proj.weight", i,
		         j);
		tm_add2(m, n, HID, 32);
	}
	if (shared) {
		add_l(m, "backbone.layers.%d.mixer.shared_experts.up_proj.weight", i, 96, HID);
		add_l(m, "backbone.layers.%d.mixer.shared_experts.down_proj.weight", i, HID, 96);
	}
}

static tm_model *tm_nhm_s(bool shared)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "backbone.embeddings.weight", 1003, HID);
	tm_add2(m, "backbone.norm_f.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1003, HID);
	for (int i = 0; i < 4; i++)
		add_l(m, "backbone.layers.%d.norm.weight", i, HID, 0);
	const char *mx = "backbone.layers.0.mixer.";
	char n[200];
	static const struct {
		const char *leaf;
		int64_t a, b;
	} mamba[] = {{"in_proj.weight", 128 + 256 + 8, HID},
	             {"conv1d.bias", 256, 0},
	             {"A_log", 8, 0},
	             {"D", 8, 0},
	             {"dt_bias", 8, 0},
	             {"norm.weight", 128, 0},
	             {"out_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(mamba) / sizeof(mamba[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", mx, mamba[k].leaf);
		tm_add2(m, n, mamba[k].a, mamba[k].b);
	}
	snprintf(n, sizeof(n), "%sconv1d.weight", mx);
	tm_add(m, n, WT_DTYPE_INVALID, 3, 256, 1, 4);
	add_moe(m, 1, shared);
	add_l(m, "backbone.layers.%d.mixer.q_proj.weight", 2, 64, HID);
	add_l(m, "backbone.layers.%d.mixer.k_proj.weight", 2, 32, HID);
	add_l(m, "backbone.layers.%d.mixer.v_proj.weight", 2, 32, HID);
	add_l(m, "backbone.layers.%d.mixer.o_proj.weight", 2, HID, 64);
	add_moe(m, 3, shared);
	return m;
}

static tm_model *tm_nhm(void)
{
	return tm_nhm_s(true);
}

/* Layer 1's stacked experts (no gate) against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {W13, W2, L1 "experts.%lld.%s.weight", NULL, "up_proj", "down_proj",
                              HID, 32};

/* Rank r's MoE of layer 1 at TP T (no EP): slot j of w13 is up_j's rows [r*Il, +Il), of w2
 * down_j's columns [r*Il, +Il); the router and its bias whole; the shared expert's up rows
 * and down columns. */
static void moe_tp_is(const fx *f, uint32_t r, int64_t T)
{
	int64_t il = 32 / T, sl = 96 / T;
	fx_experts_are(f, &XP, r, 0, 8, r * il, il, false);
	repl(f, r, GATE);
	repl(f, r, EBIAS);
	assert_int_equal(info(f, r, EBIAS)->dtype, WT_F32);
	shp(f, r, SUP, 2, sl, HID, 0);
	rows_at(f, r, SUP, 0, SUP, r * sl, sl);
	cols_of(f, r, (uint32_t)T, SDOWN, SDOWN, HID, 96);
	repl(f, r, "backbone.layers.1.norm.weight");
}

static void test_nhm_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nhm(), NHM_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "nemotron_h");
	for (uint32_t r = 0; r < 2; r++)
		moe_tp_is(&f, r, 2);
	/* 3 global, 4 norms, the mixer's 8, qkv / o, two MoE layers of 6 */
	assert_int_equal(shardmap_rank_n_tensors(f.p, 1), 3 + 4 + 8 + 2 + 12);
	shp(&f, 1, L3 "experts.w13_weight", 3, 8, 16, HID);
	fx_close(&f);
}

static void test_nhm_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nhm(), NHM_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		moe_tp_is(&f, r, 4);
	fx_close(&f);
}

/* TP 2 x EP 2: EP rank e holds experts [4e, 4e + 4) whole on both of its tp ranks; the
 * shared expert and the router as at TP 2. */
static void test_nhm_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nhm(), NHM_OK, 2, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			fx_experts_are(&f, &XP, r, 4 * e, 4, 0, 32, false);
			shp(&f, r, SUP, 2, 48, HID, 0);
			rows_at(&f, r, SUP, 0, SUP, t * 48, 48);
			shp(&f, r, SDOWN, 2, HID, 48, 0);
			cols_at(&f, r, SDOWN, 0, SDOWN, HID, 96, t * 48, 48);
			repl(&f, r, GATE);
			repl(&f, r, EBIAS);
		}
	fx_close(&f);
}

/* What vLLM quantizes: the experts (FusedMoE) and the shared experts (NemotronHMLP); the
 * router (GateLinear) and its correction bias stay as they are. */
static const char *const keep_moe[] = {GATE, EBIAS, "backbone.layers.1.norm.weight"};
static const char *const q_moe[] = {W13, W2, SUP, SDOWN};

static void test_nhm_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_nhm(), NHM_OK, &l, true);
	fx_quant_split(&f, 1, -1, keep_moe, sizeof(keep_moe) / sizeof(keep_moe[0]), q_moe,
	               sizeof(q_moe) / sizeof(q_moe[0]));
	assert_int_equal(info(&f, 1, GATE)->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, EBIAS)->dtype, WT_F32);
	shp(&f, 1, W13 "_scale", 3, 8, 16, 1);
	/* rank 1's w13 slot 5 is expert 5's up rows 16..31, a scale a row */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13);
	const float *sc = (const float *)out_bytes(&f, 1, W13 "_scale");
	size_t rowb;
	char b[200];
	const uint16_t *src = (const uint16_t *)src_rows(
	    &f, fx_expert_src(b, sizeof(b), &XP, 5, "up_proj"), 16, &rowb);
	for (int64_t row = 0; row < 16; row++)
		int8_row_is(q + (5 * 16 + row) * HID, sc[5 * 16 + row], src + row * HID, HID);
	q = (const int8_t *)out_bytes(&f, 1, SUP);
	sc = (const float *)out_bytes(&f, 1, SUP "_scale");
	src = (const uint16_t *)src_rows(&f, SUP, 48, &rowb);
	for (int64_t row = 0; row < 48; row++)
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_nhm(), NHM_OK, 4, WT_QUANT_FP8_CHANNEL, -1, FX_N(keep_moe),
	              FX_N(q_moe));
	shp(&f, 3, W2 "_scale", 3, 8, HID, 1);
	fx_close(&f);
}

static void test_nhm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2}, {1, 8}};
	coverage(tm_nhm(), NHM_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* no shared experts (n_shared_experts 0): none cut, none asked for */
	coverage(tm_nhm_s(false), NHM_CFG(",\"n_shared_experts\":0"), 2, lays, 3);
}

/* The remote NemotronHConfig's MoE defaults, filled only with an "E" layer; the shared
 * experts' width n_shared_experts x moe_shared_expert_intermediate_size (null: none). */
static void test_nhm_config(void **state)
{
	(void)state;
	static const char moe[] = "{\"architectures\": [\"NemotronHForCausalLM\"], \"model_type\": "
	                          "\"nemotron_h\", \"num_hidden_layers\": 4, "
	                          "\"hybrid_override_pattern\": \"ME*E\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(moe, strlen(moe), &c, &err), WT_OK);
	assert_int_equal(c.num_experts, 8);
	assert_int_equal(c.moe_intermediate_size, 7688);
	assert_int_equal(c.n_shared_experts, 1);
	assert_int_equal(c.shared_expert_intermediate_size, 7688);
	assert_true(c.layer_types[1] == CKPT_LAYER_MOE && c.layer_types[3] == CKPT_LAYER_MOE &&
	            c.layer_types[0] == CKPT_LAYER_MAMBA && c.layer_types[2] == CKPT_LAYER_ATTN);
	ckpt_config_clear(&c);
	static const char dense[] = "{\"architectures\": [\"NemotronHForCausalLM\"], "
	                            "\"model_type\": \"nemotron_h\"}";
	assert_int_equal(ckpt_config_parse(dense, strlen(dense), &c, &err), WT_OK);
	assert_int_equal(c.num_experts, 0);
	assert_true(c.shared_expert_intermediate_size <= 0);
	ckpt_config_clear(&c);
	const char *j = NHM_CFG(",\"n_shared_experts\":2");
	assert_int_equal(ckpt_config_parse(j, strlen(j), &c, &err), WT_OK);
	assert_int_equal(c.shared_expert_intermediate_size, 192);
	ckpt_config_clear(&c);
	j = NHM_CFG(",\"n_shared_experts\":null");
	assert_int_equal(ckpt_config_parse(j, strlen(j), &c, &err), WT_OK);
	assert_true(c.shared_expert_intermediate_size <= 0);
	ckpt_config_clear(&c);
}

/* What vLLM's NemotronHMoE does not build as the remote code does, and configs that
 * misdescribe the routing: refused naming the key. */
static void test_nhm_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *cfg;
		int code;
		const char *a, *b;
	} bad[] = {
	    {NHM_CFG(",\"moe_latent_size\":32"), WT_EUNSUPPORTED, "moe_latent_size", "latent MoE"},
	    {NHM_CFG(",\"mlp_bias\":true"), WT_EUNSUPPORTED, "mlp_bias", "FusedMoE"},
	    {NHM_CFG(",\"mlp_hidden_act\":\"silu\""), WT_EUNSUPPORTED, "mlp_hidden_act", "relu2"},
	    {"{" NHM_DIMS ",\"n_routed_experts\":8,\"n_group\":3}", WT_EUNSUPPORTED, "n_group 3",
	     "must divide"},
	    {"{" NHM_DIMS ",\"n_routed_experts\":8,\"n_group\":2,\"topk_group\":3}",
	     WT_EUNSUPPORTED, "topk_group 3", "grouped_topk"},
	    {"{" NHM_DIMS ",\"n_routed_experts\":8,\"n_group\":4,\"num_experts_per_tok\":3}",
	     WT_EUNSUPPORTED, "num_experts_per_tok 3", "topk_group"},
	    {"{" NHM_DIMS ",\"n_routed_experts\":0}", WT_ECORRUPT, "n_routed_experts", ">= 1"},
	    {"{" NHM_DIMS ",\"n_shared_experts\":5000}", WT_ECORRUPT, "n_shared_experts 5000",
	     "at most 4096"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused_tp(tm_nhm(), bad[k].cfg, 2, bad[k].code, bad[k].a, bad[k].b);
}

/* A layer's tensors of another kind, shared experts the config leaves out, missing router or
 * experts, sizes the config does not give, more EP ranks than experts. */
static void test_nhm_errors(void **state)
{
	(void)state;
	tm_model *m = tm_nhm();
	tm_add2(m, "backbone.layers.1.mixer.q_proj.weight", 64, HID);
	fx_refused(m, NHM_OK, WT_EUNSUPPORTED, "a MoE layer", "\"E\" in hybrid_override_pattern");
	m = tm_nhm();
	tm_add2(m, "backbone.layers.2.mixer.gate.weight", 8, HID);
	fx_refused(m, NHM_OK, WT_EUNSUPPORTED, "an attention layer", "hybrid_override_pattern");
	fx_refused(tm_nhm(), NHM_CFG(",\"n_shared_experts\":0"), WT_EUNSUPPORTED,
	           "mixer.shared_experts.", "n_shared_experts is 0 or null");
	fx_refused(tm_nhm_s(false), NHM_OK, WT_ENOTFOUND, "shared_experts", "");
	m = tm_nhm();
	tm_remove(m, L1 "experts.7.up_proj.weight");
	fx_refused(m, NHM_OK, WT_ENOTFOUND, "experts.7.up_proj.weight", "missing");
	m = tm_nhm();
	tm_remove(m, EBIAS);
	fx_refused(m, NHM_OK, WT_ENOTFOUND, "e_score_correction_bias", "");
	fx_refused(tm_nhm(),
	           "{" NHM_DIMS ",\"n_routed_experts\":8,\"moe_intermediate_size\":48,"
	           "\"moe_shared_expert_intermediate_size\":96}",
	           WT_ESHAPE, "experts.0.", "disagrees with config.json");
	fx_refused_tp_ep(tm_nhm(), NHM_OK, 1, 16, WT_ELAYOUT, "16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nhm_tp2),
	    cmocka_unit_test(test_nhm_tp4),
	    cmocka_unit_test(test_nhm_ep),
	    cmocka_unit_test(test_nhm_quant),
	    cmocka_unit_test(test_nhm_coverage),
	    cmocka_unit_test(test_nhm_config),
	    cmocka_unit_test(test_nhm_config_errors),
	    cmocka_unit_test(test_nhm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
