/*
 * test_shardmap_lfm2_moe.c — LFM2-MoE (Lfm2MoeForCausalLM: LiquidAI/LFM2-8B-A1B), cut as vLLM's
 * lfm2_moe.py loads it: LFM2's short-conv / attention layers by layer_types; below
 * num_dense_layers the SwiGLU feed_forward (w1 / w3 merged into w13 by rows, w2 by columns,
 * intermediate_size wide), from there the MoE: feed_forward.gate.weight whole and unquantized,
 * feed_forward.expert_bias whole in F32 as feed_forward.gate.e_score_correction_bias, the
 * experts experts.{j}.w1 / w3 / w2 stacked as FusedMoE's experts.w13_weight [gate; up] /
 * w2_weight, each expert split by tp or whole per EP rank, quantized. Hand slices at TP 2,
 * TP 4 and TP 2 x EP 2, int8 codes, fp8-channel, coverage over TP 1-8 and EP,
 * Lfm2MoeConfig's defaults, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed1f2eull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 64, L 4: conv (dense), attention, conv, attention (MoE from layer 1); attention H 8,
 * KV 2, d 8; conv 3 taps; dense SwiGLU 96; 8 experts of Ie 32, top 2; V 1003, tied */
#define HID 64
#define LM_DIMS                                                                                    \
	"\"architectures\":[\"Lfm2MoeForCausalLM\"],\"model_type\":\"lfm2_moe\","                  \
	"\"hidden_size\":64,\"vocab_size\":1003,\"num_attention_heads\":8,"                        \
	"\"num_key_value_heads\":2,\"intermediate_size\":96,\"num_hidden_layers\":4,"              \
	"\"conv_L_cache\":3,\"layer_types\":[\"conv\",\"full_attention\",\"conv\","                \
	"\"full_attention\"]"
#define LM_MOEK(E, K, D, I)                                                                        \
	",\"num_experts\":" #E ",\"moe_intermediate_size\":" #I ",\"num_experts_per_tok\":" #K     \
	",\"num_dense_layers\":" #D
#define LM_MOE                 LM_MOEK(8, 2, 1, 32)
#define LM_CFGK(E, K, D, I, x) "{" LM_DIMS LM_MOEK(E, K, D, I) x "}"
#define LM_CFG(x)              LM_CFGK(8, 2, 1, 32, x)
#define LM_OK                  LM_CFG("")
#define F0                     "model.layers.0.feed_forward."
#define F1                     "model.layers.1.feed_forward."
#define W13                    F1 "experts.w13_weight"
#define W2                     F1 "experts.w2_weight"
#define GATE                   F1 "gate.weight"
#define EBIAS                  F1 "gate.e_score_correction_bias"
#define CK_EBIAS               F1 "expert_bias"

static void add_l(tm_model *m, const char *fmt, int i, int64_t a, int64_t b)
{
	char n[200];
	snprintf(n, sizeof(n), fmt, i);
	tm_add2(m, n, a, b);
}

/* Layer i's MoE: the router, its F32 expert bias (bias), 8 experts w1 / w3 / w2. */
static void add_moe(tm_model *m, int i, bool bias)
{
	char n[200];
	add_l(m, "model.layers.%d.feed_forward.gate.weight", i, 8, HID);
	snprintf(n, sizeof(n), "model.layers.%d.feed_forward.expert_bias", i);
	if (bias)
		tm_add(m, n, WT_F32, 1, 8, 0, 0);
	static const char *const leaf[] = {"w1", "w3", "w2"};
	for (int j = 0; j < 8; j++)
		for (int k = 0; k < 3; k++) {
			snprintf(n, sizeof(n), "model.layers.%d.feed_forward.experts.%d.%s.weight",
			         i, j, leaf[k]);
			tm_add2(m, n, k < 2 ? 32 : HID, k < 2 ? HID : 32);
		}
}

/* LFM2's short conv of layer i. */
static void add_conv(tm_model *m, int i)
{
	char n[200];
	add_l(m, "model.layers.%d.conv.in_proj.weight", i, 3 * HID, HID);
	snprintf(n, sizeof(n), "model.layers.%d.conv.conv.weight", i);
	tm_add(m, n, WT_DTYPE_INVALID, 3, HID, 1, 3);
	add_l(m, "model.layers.%d.conv.out_proj.weight", i, HID, HID);
}

/* LFM2's attention of layer i (H 8, KV 2, d 8, q/k layernorms). */
static void add_attn(tm_model *m, int i)
{
	add_l(m, "model.layers.%d.self_attn.q_proj.weight", i, 64, HID);
	add_l(m, "model.layers.%d.self_attn.k_proj.weight", i, 16, HID);
	add_l(m, "model.layers.%d.self_attn.v_proj.weight", i, 16, HID);
	add_l(m, "model.layers.%d.self_attn.out_proj.weight", i, HID, 64);
	add_l(m, "model.layers.%d.self_attn.q_layernorm.weight", i, 8, 0);
	add_l(m, "model.layers.%d.self_attn.k_layernorm.weight", i, 8, 0);
}

static tm_model *tm_lm_b(bool bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1003, HID);
	tm_add2(m, "model.embedding_norm.weight", HID, 0);
	for (int i = 0; i < 4; i++) {
		add_l(m, "model.layers.%d.operator_norm.weight", i, HID, 0);
		add_l(m, "model.layers.%d.ffn_norm.weight", i, HID, 0);
		if (i % 2 == 0)
			add_conv(m, i);
		else
			add_attn(m, i);
		if (i > 0)
			add_moe(m, i, bias);
	}
	tm_add2(m, F0 "w1.weight", 96, HID);
	tm_add2(m, F0 "w3.weight", 96, HID);
	tm_add2(m, F0 "w2.weight", HID, 96);
	return m;
}

static tm_model *tm_lm(void)
{
	return tm_lm_b(true);
}

/* Layer 1's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {W13, W2, F1 "experts.%lld.%s.weight", "w1", "w3", "w2", HID, 32};

/* Rank r's MoE of layer 1 at TP T (no EP): slot j of w13 is [w1_j rows [r*Il, +Il); w3_j the
 * same rows], of w2 w2_j's columns [r*Il, +Il); the router and its bias whole; layer 0's
 * dense w13 [w1 rows; w3 rows] and w2 columns. */
static void moe_tp_is(const fx *f, uint32_t r, int64_t T)
{
	int64_t il = 32 / T, dl = 96 / T;
	fx_experts_are(f, &XP, r, 0, 8, r * il, il, false);
	repl(f, r, GATE);
	shp(f, r, EBIAS, 1, 8, 0, 0);
	rows_at(f, r, EBIAS, 0, CK_EBIAS, 0, 8);
	assert_int_equal(info(f, r, EBIAS)->dtype, WT_F32);
	shp(f, r, F0 "w13.weight", 2, 2 * dl, HID, 0);
	rows_at(f, r, F0 "w13.weight", 0, F0 "w1.weight", r * dl, dl);
	rows_at(f, r, F0 "w13.weight", dl, F0 "w3.weight", r * dl, dl);
	cols_of(f, r, (uint32_t)T, F0 "w2.weight", F0 "w2.weight", HID, 96);
	repl(f, r, "model.layers.1.ffn_norm.weight");
}

static void test_lm_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lm(), LM_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "lfm2_moe");
	for (uint32_t r = 0; r < 2; r++)
		moe_tp_is(&f, r, 2);
	/* embed + final norm (tied), 8 norms, 2 convs of 3, 2 attentions of 4, layer 0's w13 /
	 * w2, three MoE layers of 4 */
	assert_int_equal(shardmap_rank_n_tensors(f.p, 1), 2 + 8 + 6 + 8 + 2 + 12);
	shp(&f, 1, "model.layers.3.feed_forward.experts.w13_weight", 3, 8, 32, HID);
	fx_close(&f);
}

static void test_lm_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lm(), LM_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++)
		moe_tp_is(&f, r, 4);
	fx_close(&f);
}

/* TP 2 x EP 2: EP rank e holds experts [4e, 4e + 4) whole ([w1; w3] rows) on both of its tp
 * ranks; the router, its bias and the dense MLP as at TP 2. */
static void test_lm_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_lm(), LM_OK, 2, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++)
		for (uint32_t t = 0; t < 2; t++) {
			uint32_t r = e * 2 + t;
			fx_experts_are(&f, &XP, r, 4 * e, 4, 0, 32, false);
			repl(&f, r, GATE);
			rows_at(&f, r, EBIAS, 0, CK_EBIAS, 0, 8);
			rows_at(&f, r, F0 "w13.weight", 0, F0 "w1.weight", t * 48, 48);
		}
	fx_close(&f);
}

/* What vLLM quantizes: the experts, the dense MLP, q/k/v / out_proj; the router, the expert
 * bias, the short conv and the norms stay as they are. */
static const char *const keep_lm[] = {GATE,
                                      EBIAS,
                                      "model.layers.1.ffn_norm.weight",
                                      "model.layers.0.short_conv.in_proj.weight",
                                      "model.layers.0.short_conv.out_proj.weight",
                                      "model.embed_tokens.weight"};
static const char *const q_lm[] = {W13,
                                   W2,
                                   F0 "w13.weight",
                                   F0 "w2.weight",
                                   "model.layers.1.self_attn.qkv_proj.weight",
                                   "model.layers.1.self_attn.out_proj.weight"};

static void test_lm_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_lm(), LM_OK, &l, true);
	fx_quant_split(&f, 1, -1, keep_lm, sizeof(keep_lm) / sizeof(keep_lm[0]), q_lm,
	               sizeof(q_lm) / sizeof(q_lm[0]));
	assert_int_equal(info(&f, 1, GATE)->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, EBIAS)->dtype, WT_F32);
	shp(&f, 1, W13 "_scale", 3, 8, 32, 1);
	/* rank 1's w13 slot 5 is expert 5's w1 rows 16..31 then w3 rows 16..31, a scale a row */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13);
	const float *sc = (const float *)out_bytes(&f, 1, W13 "_scale");
	size_t rowb;
	char b[200];
	const uint16_t *src =
	    (const uint16_t *)src_rows(&f, fx_expert_src(b, sizeof(b), &XP, 5, "w1"), 16, &rowb);
	for (int64_t row = 0; row < 16; row++)
		int8_row_is(q + (5 * 32 + row) * HID, sc[5 * 32 + row], src + row * HID, HID);
	src = (const uint16_t *)src_rows(&f, fx_expert_src(b, sizeof(b), &XP, 5, "w3"), 16, &rowb);
	for (int64_t row = 0; row < 16; row++)
		int8_row_is(q + (5 * 32 + 16 + row) * HID, sc[5 * 32 + 16 + row], src + row * HID,
		            HID);
	fx_close(&f);
	fx_open_quant(&f, tm_lm(), LM_OK, 4, WT_QUANT_FP8_CHANNEL, -1, FX_N(keep_lm), FX_N(q_lm));
	shp(&f, 3, W2 "_scale", 3, 8, HID, 1);
	fx_close(&f);
}

static void test_lm_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 8}};
	coverage(tm_lm(), LM_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* use_expert_bias false: no expert_bias cut, none asked for */
	coverage(tm_lm_b(false), LM_CFG(",\"use_expert_bias\":false"), 2, lays, 3);
}

/* Lfm2MoeConfig's defaults (LFM2-8B-A1B's dims, 32 experts of 1792, 2 dense layers, the
 * expert bias, tied) and tie_embedding, its original key. */
static void test_lm_config(void **state)
{
	(void)state;
	static const char bare[] = "{\"architectures\": [\"Lfm2MoeForCausalLM\"], \"model_type\": "
	                           "\"lfm2_moe\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(bare, strlen(bare), &c, &err), WT_OK);
	assert_int_equal(c.vocab_size, 65536);
	assert_int_equal(c.hidden_size, 2048);
	assert_int_equal(c.intermediate_size, 7168);
	assert_int_equal(c.moe_intermediate_size, 1792);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_int_equal(c.num_experts, 32);
	assert_int_equal(c.first_k_dense_replace, 2);
	assert_int_equal(c.lfm2_conv_l_cache, 3);
	assert_true(c.lfm2_expert_bias && c.tie_word_embeddings && !c.lfm2_conv_bias &&
	            !c.lfm2_auto_adjust && !c.has_layer_types);
	ckpt_config_clear(&c);
	const char *j = LM_CFG(",\"use_expert_bias\":false,\"tie_embedding\":true,"
	                       "\"tie_word_embeddings\":false");
	assert_int_equal(ckpt_config_parse(j, strlen(j), &c, &err), WT_OK);
	assert_true(!c.lfm2_expert_bias && c.tie_word_embeddings);
	assert_int_equal(c.first_k_dense_replace, 1);
	ckpt_config_clear(&c);
	/* tie_embedding preferred; false refused by the loader (vLLM always ties) */
	j = LM_CFG(",\"tie_embedding\":false,\"tie_word_embeddings\":true");
	assert_int_equal(ckpt_config_parse(j, strlen(j), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "ties lm_head"));
	/* block_* keys are Lfm2Config's, not read: the MLP is intermediate_size wide */
	fx f;
	fx_open(&f, tm_lm(), LM_CFG(",\"block_auto_adjust_ff_dim\":true"), 2, 1, 0, true);
	shp(&f, 0, F0 "w13.weight", 2, 96, HID, 0);
	fx_close(&f);
}

/* What vLLM's lfm2_moe.py does not build as the config says: refused naming the key. */
static void test_lm_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *cfg;
		int code;
		const char *a, *b;
	} bad[] = {
	    {"{\"architectures\":[\"Lfm2MoeForCausalLM\"],\"model_type\":\"lfm2_moe\","
	     "\"hidden_size\":64,\"vocab_size\":1003,\"num_attention_heads\":8,"
	     "\"num_key_value_heads\":2,\"intermediate_size\":96,\"num_hidden_layers\":4"
	     ",\"full_attn_idxs\":[1,3]" LM_MOE "}",
	     WT_ECORRUPT, "needs layer_types", "full_attn_idxs is not read"},
	    {LM_CFG(",\"tie_embedding\":false"), WT_EUNSUPPORTED, "tie_word_embeddings",
	     "set it true"},
	    {LM_CFGK(8, 2, 4, 32, ""), WT_EUNSUPPORTED, "num_dense_layers 4", "no MoE layer"},
	    {LM_CFGK(0, 2, 1, 32, ""), WT_ECORRUPT, "num_experts 0", "routed experts"},
	    {LM_CFGK(8, 9, 1, 32, ""), WT_ECORRUPT, "num_experts_per_tok 9", "num_experts 8"},
	    {LM_CFG(",\"head_dim\":16"), WT_EUNSUPPORTED, "head_dim 16", "hidden_size"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused_tp(tm_lm(), bad[k].cfg, 2, bad[k].code, bad[k].a, bad[k].b);
}

/* A layer's tensors of another kind, an expert bias the config leaves out, missing router,
 * expert or bias, sizes the config does not give, more EP ranks than experts. */
static void test_lm_errors(void **state)
{
	(void)state;
	tm_model *m = tm_lm();
	tm_add2(m, "model.layers.1.feed_forward.w1.weight", 96, HID);
	fx_refused(m, LM_OK, WT_EUNSUPPORTED, "a MoE layer", "num_dense_layers");
	m = tm_lm();
	add_l(m, "model.layers.%d.feed_forward.gate.weight", 0, 8, HID);
	fx_refused(m, LM_OK, WT_EUNSUPPORTED, "a dense layer", "num_dense_layers");
	fx_refused(tm_lm(), LM_CFG(",\"use_expert_bias\":false"), WT_EUNSUPPORTED, "expert_bias",
	           "use_expert_bias is false");
	m = tm_lm();
	tm_remove(m, CK_EBIAS);
	fx_refused(m, LM_OK, WT_ENOTFOUND, "expert_bias", "");
	m = tm_lm();
	tm_remove(m, F1 "experts.7.w3.weight");
	fx_refused(m, LM_OK, WT_ENOTFOUND, "experts.7.w3.weight", "missing");
	m = tm_lm();
	tm_remove(m, GATE);
	fx_refused(m, LM_OK, WT_ENOTFOUND, "gate.weight", "");
	m = tm_lm();
	tm_add2(m, "model.layers.2.self_attn.q_proj.weight", 64, HID);
	fx_refused(m, LM_OK, WT_EUNSUPPORTED, "a conv layer", "layer_types");
	fx_refused(tm_lm(), LM_CFGK(8, 2, 1, 48, ""), WT_ESHAPE, "experts.0.",
	           "disagrees with config.json");
	fx_refused_tp_ep(tm_lm(), LM_OK, 1, 16, WT_ELAYOUT, "16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lm_tp2),
	    cmocka_unit_test(test_lm_tp4),
	    cmocka_unit_test(test_lm_ep),
	    cmocka_unit_test(test_lm_quant),
	    cmocka_unit_test(test_lm_coverage),
	    cmocka_unit_test(test_lm_config),
	    cmocka_unit_test(test_lm_config_errors),
	    cmocka_unit_test(test_lm_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
