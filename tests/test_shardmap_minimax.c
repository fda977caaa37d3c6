/*
 * test_shardmap_minimax.c — MiniMax-Text-01 (MiniMaxForCausalLM) cut as vLLM's
 * minimax_text_01.py loads it: softmax-attention layers' q/k/v fused into qkv_proj by
 * heads (GQA), o_proj by columns; lightning-attention layers' qkv_proj ([q_h; k_h; v_h]
 * per head) and output_gate by rows, norm by channels, out_proj by columns; Mixtral's
 * block_sparse_moe in every layer (router whole, experts stacked as w13 / w2, Ie split under
 * TP, whole experts under EP); transformers' lightning buffers dropped. Hand-computed
 * slices at TP 2, TP 4, EP 2 and TP 2 x EP 2, an int8 layout, coverage over TP 1..8 / EP,
 * and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0031ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

#define MM_CFG_E(e, extra)                                                                         \
	"{\"architectures\":[\"MiniMaxForCausalLM\"],\"model_type\":\"minimax\","                  \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":64,\"num_local_experts\":" e ",\"num_experts_per_tok\":2,"          \
	"\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define MM_CFG(extra) MM_CFG_E("4", extra)
#define MM_TYPES      ",\"layer_types\":[\"linear_attention\",\"full_attention\"]"
#define MM_OK         MM_CFG(MM_TYPES)
#include "test_shardmap_minimax.h"

static void test_minimax_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_minimax(), MM_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "minimax");
	for (uint32_t r = 0; r < 2; r++) {
		lin_rank(&f, r, 2);
		whole(&f, r);
		/* softmax attention: q heads 4r..4r+3 (64 rows), kv head r (16 rows) */
		fx_attn_is(&f, r, 2, A1, "o_proj.weight", 8, 2, HD, HID);
		/* experts: every expert, Ie rows 32r..32r+31 */
		fx_experts_are(&f, &XP, r, 0, NE, 32 * r, 32, false);
		rows_at(&f, r, "lm_head.weight", 0, "lm_head.weight", 512 * r, r ? 488 : 512);
	}
	fx_close(&f);
}

/* TP 4 > KV 2: kv head r / 2 on rank r; two lightning heads per rank. */
static void test_minimax_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_minimax(), MM_OK, 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		lin_rank(&f, r, 4);
		whole(&f, r);
		fx_attn_is(&f, r, 4, A1, "o_proj.weight", 8, 2, HD, HID);
		fx_experts_are(&f, &XP, r, 0, NE, 16 * r, 16, false);
	}
	fx_close(&f);
}

/* EP 2: whole experts 2 per rank, attention whole; TP 2 x EP 2 up_gate below */
static void test_minimax_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_minimax(), MM_OK, 1, 2, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_experts_are(&f, &XP, r, 2 * r, 2, 0, IE, false);
		lin_rank_tp(&f, r, 0, 1);
		whole(&f, r);
	}
	fx_close(&f);
	fx_open(&f, tm_minimax(), MM_OK, 2, 2, 1, true);
	/* ranks 0 and 3: EP groups 0 and 1, whole experts [w3; w1] on both TP ranks of a group;
	 * attention by TP rank */
	for (uint32_t r = 0; r < 4; r += 3) {
		fx_experts_are(&f, &XP, r, 2 * (r / 2), 2, 0, IE, true);
		lin_rank_tp(&f, r, r % 2, 2);
	}
	fx_close(&f);
}

/* int8-channel at TP 2: both attentions' projections, output_gate and the experts
 * quantized per row; the lightning norm, the routers and the layer norms stay BF16 without
 * a scale. */
static void test_minimax_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_minimax(), MM_OK, &l, true);
	static const char *const q8[] = {A0 "qkv_proj.weight",
	                                 A0 "output_gate.weight",
	                                 A0 "out_proj.weight",
	                                 A1 "qkv_proj.weight",
	                                 A1 "o_proj.weight",
	                                 W13,
	                                 W2};
	for (size_t k = 0; k < sizeof(q8) / sizeof(q8[0]); k++)
		assert_int_equal(info(&f, 1, q8[k])->dtype, WT_I8);
	static const char *const bf[] = {A0 "norm.weight", M0 "gate.weight",
	                                 L0 "input_layernorm.weight"};
	for (size_t k = 0; k < sizeof(bf) / sizeof(bf[0]); k++) {
		char sc[120];
		assert_int_equal(info(&f, 1, bf[k])->dtype, WT_BF16);
		snprintf(sc, sizeof(sc), "%.*sweight_scale", (int)(strlen(bf[k]) - 6), bf[k]);
		assert_true(tm_ix(f.p, 1, sc) < 0);
	}
	/* the lightning qkv_proj of rank 1: source rows 192.., each quantized */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, A0 "qkv_proj.weight");
	const float *s = (const float *)out_bytes(&f, 1, A0 "qkv_proj.weight_scale");
	shp(&f, 1, A0 "qkv_proj.weight_scale", 2, 3 * QD / 2, 1, 0);
	for (int64_t j = 0; j < 3 * QD / 2; j++) {
		size_t rowb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, A0 "qkv_proj.weight", 3 * QD / 2 + j, &rowb);
		int8_row_is(q + j * HID, s[j], x, HID);
	}
	fx_close(&f);
}

static void test_minimax_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {1, 4}, {2, 2}};
	coverage(tm_minimax(), MM_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* no layer_types: MiniMaxConfig's alternation, layer 0 softmax and layer 1 lightning */
	coverage(tm_minimax_at(1), MM_CFG(""), 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* The buffers transformers saves for the lightning attention: dropped, listed as skipped. */
static void test_minimax_buffers(void **state)
{
	(void)state;
	tm_model *m = tm_minimax();
	tm_add(m, A0 "slope_rate", WT_F32, 3, 8, 1, 1);
	tm_add(m, A0 "query_decay", WT_F32, 3, 8, 256, 1);
	tm_add(m, A0 "key_decay", WT_F32, 3, 8, 256, 1);
	tm_lin_l(m, 0, "self_attn.diagonal_decay", 256, 256, 0);
	fx f;
	fx_open(&f, m, MM_OK, 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, A0 "slope_rate") < 0);
	assert_true(tm_ix(f.p, 1, A0 "diagonal_decay") < 0);
	assert_int_equal(shardmap_n_skipped(f.p), 4);
	fx_close(&f);
}

static void test_minimax_errors(void **state)
{
	(void)state;
	/* layer_types: one per layer, linear_attention or full_attention only */
	fx_refused(tm_minimax(), MM_CFG(",\"layer_types\":[\"linear_attention\"]"), WT_ECORRUPT,
	           "layer_types has 1", "num_hidden_layers is 2");
	fx_refused(tm_minimax(), MM_CFG(",\"layer_types\":[\"linear_attention\",\"conv\"]"),
	           WT_ECORRUPT, "layer_types[1]", "MiniMax layer types");
	/* the layer kinds swapped, and the default alternation on a layer-0 lightning model */
	fx_refused(tm_minimax(),
	           MM_CFG(",\"layer_types\":[\"full_attention\",\"linear_attention\"]"),
	           WT_EUNSUPPORTED, A0, "layer_types");
	fx_refused(tm_minimax(), MM_CFG(""), WT_EUNSUPPORTED, A0, "layer_types");
	/* no experts */
	fx_refused(tm_minimax(), MM_CFG_E("0", MM_TYPES), WT_ECORRUPT, "num_local_experts > 0",
	           "every layer is MoE");
	/* heads TP 3 does not divide */
	wt_errbuf err = {0};
	char *dir = tu_mkdtemp("smfam");
	tm_model *m = tm_minimax();
	assert_int_equal(tm_write(m, dir, MM_OK), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 3;
	store *s = NULL;
	ckpt *c = NULL;
	sm_plan *p = NULL;
	int rv = tm_plan(dir, &l, &s, &c, &p, &err);
	printf("refused (%d): %s\n", rv, err.msg);
	assert_int_not_equal(rv, 0);
	assert_non_null(strstr(err.msg, "num_attention_heads"));
	tm_close(s, c, p);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
	/* a lightning tensor missing, of the wrong size, or unknown */
	m = tm_minimax();
	tm_remove(m, A0 "output_gate.weight");
	fx_refused(m, MM_OK, WT_ENOTFOUND, A0 "output_gate.weight", "missing");
	m = tm_minimax();
	tm_remove(m, A0 "qkv_proj.weight");
	tm_add2(m, A0 "qkv_proj.weight", 2 * QD, HID);
	fx_refused(m, MM_OK, WT_ESHAPE, A0 "qkv_proj.weight", "384");
	m = tm_minimax();
	tm_add2(m, A0 "norm.bias", QD, 0);
	fx_refused(m, MM_OK, WT_EUNSUPPORTED, A0 "norm.bias", "unknown");
	/* an expert past num_local_experts */
	m = tm_minimax();
	tm_lin_l(m, 0, "block_sparse_moe.experts.4.w1.weight", IE, HID, 0);
	fx_refused(m, MM_OK, WT_ESHAPE, "experts.4", "expert 4 but config.json has 4 experts");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minimax_tp2),      cmocka_unit_test(test_minimax_tp4),
	    cmocka_unit_test(test_minimax_ep),       cmocka_unit_test(test_minimax_int8),
	    cmocka_unit_test(test_minimax_coverage), cmocka_unit_test(test_minimax_buffers),
	    cmocka_unit_test(test_minimax_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
