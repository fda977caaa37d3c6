/*
 * test_shardmap_dots1.c — dots.llm1 (Dots1ForCausalLM): Qwen3's fused q/k/v (biases and
 * o_proj's replicated bias with attention_bias), o_proj by columns, per-head q_norm /
 * k_norm replicated on every layer, the dense MLP of layers < first_k_dense_replace merged,
 * DeepSeek-V3's MoE as GLM-4.5 plans it (router and e_score_correction_bias replicated and
 * never quantized, routed experts stacked into w13 / w2, shared experts merged at
 * n_shared_experts x moe_intermediate_size); no MTP layer (a layer past num_hidden_layers
 * is unknown); the attention biases there exactly when attention_bias is true. Hand-computed
 * slices at TP 2, TP 8 (KV 4 < 8), EP 2, TP 2 x EP 2 and an int8 layout, coverage over
 * several layouts, Dots1Config's defaults and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0d01ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 256, H 8, KV 4, head_dim 32 (hidden / heads), I 512 (layer 0), 8 experts of 64, two
 * shared experts (128), V 1000, 3 layers */
#define HID 256
#define IE  64
#define NE  8
#define D1_CFG(extra)                                                                              \
	"{\"architectures\":[\"Dots1ForCausalLM\"],\"model_type\":\"dots1\","                      \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":4,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":3,"                   \
	"\"moe_intermediate_size\":64,\"num_experts_per_tok\":2" extra "}"
#define D1_MOE ",\"n_routed_experts\":8,\"n_shared_experts\":2,\"first_k_dense_replace\":1"
#define D1_OK  D1_CFG(D1_MOE ",\"tie_word_embeddings\":false")
#define L0     "model.layers.0."
#define L1     "model.layers.1."
#define A1     L1 "self_attn."
#define M1     L1 "mlp."
#define W13    M1 "experts.w13_weight"
#define W2     M1 "experts.w2_weight"

/* The model: layer 0 dense, 1..L-1 MoE; q/k/v/o biases when bias. */
static tm_model *tm_dots(int L, int bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < L; i++) {
		tm_attn(m, i, 8, 4, 32, HID, bias, 1);
		if (bias) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
			tm_add2(m, b, HID, 0);
		}
		if (i == 0) {
			tm_mlp(m, i, "mlp.", 512, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, NE, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, NE, 0, 0);
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", 2 * IE, HID);
	}
	return m;
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, M1 "experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Router, correction bias and the q/k norms of every layer: the source bytes on every
 * rank. */
static void replicated(const fx *f, uint32_t ranks)
{
	for (uint32_t r = 0; r < ranks; r++) {
		rows_are(f, r, M1 "gate.weight", 0, M1 "gate.weight", 0, NE);
		rows_are(f, r, M1 "gate.e_score_correction_bias", 0,
		         M1 "gate.e_score_correction_bias", 0, NE);
		assert_int_equal(info(f, r, M1 "gate.e_score_correction_bias")->dtype, WT_F32);
		shp(f, r, M1 "gate.e_score_correction_bias", 1, NE, 0, 0);
		rows_are(f, r, L0 "self_attn.q_norm.weight", 0, L0 "self_attn.q_norm.weight", 0,
		         32);
		rows_are(f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 0, 32);
		rows_are(f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", 0, 32);
		shp(f, r, A1 "k_norm.weight", 1, 32, 0, 0);
	}
}

static void test_dots1_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_dots(3, 0), D1_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "dots1");
	/* attention: rank 1 q heads 4..7 (rows 128..255), kv heads 2..3 (rows 64..127) */
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 2 * 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 64, 64);
	rows_are(&f, 1, qkv, 192, A1 "v_proj.weight", 64, 64);
	rows_are(&f, 0, qkv, 128, A1 "k_proj.weight", 0, 64);
	assert_true(tm_ix(f.p, 1, A1 "qkv_proj.bias") < 0);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 128, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	replicated(&f, 2);
	/* dense layer 0: intermediate_size 512, 256 rows of gate and of up per rank */
	const char *gu = L0 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 512, HID, 0);
	rows_are(&f, 1, gu, 0, L0 "mlp.gate_proj.weight", 256, 256);
	rows_are(&f, 1, gu, 256, L0 "mlp.up_proj.weight", 256, 256);
	cols_at(&f, 1, L0 "mlp.down_proj.weight", 0, L0 "mlp.down_proj.weight", HID, 512, 256, 256);
	assert_true(tm_ix(f.p, 0, L0 "mlp.gate.weight") < 0);
	/* MoE layer 1: every expert TP-split (Il 32) */
	fx_experts_are(&f, &XP, 0, 0, NE, 0, 32, false);
	fx_experts_are(&f, &XP, 1, 0, NE, 32, 32, false);
	/* shared experts: n_shared_experts 2 x 64 = 128, split like an MLP (64 per rank) */
	const char *sgu = M1 "shared_experts.gate_up_proj.weight";
	shp(&f, 1, sgu, 2, 128, HID, 0);
	rows_are(&f, 1, sgu, 0, M1 "shared_experts.gate_proj.weight", 64, 64);
	rows_are(&f, 1, sgu, 64, M1 "shared_experts.up_proj.weight", 64, 64);
	shp(&f, 1, M1 "shared_experts.down_proj.weight", 2, HID, 64, 0);
	cols_at(&f, 1, M1 "shared_experts.down_proj.weight", 0,
	        M1 "shared_experts.down_proj.weight", HID, 2 * IE, 64, 64);
	/* vocab: 1000 padded to 1024, rank 1 rows 512..999 then 24 zero rows */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	fx_close(&f);
}

/* TP 8 > KV 4: ranks 2k and 2k+1 share kv head k; attention_bias's q/k/v biases fuse with
 * their rows, o_proj's bias is replicated whole. */
static void test_dots1_tp8_bias(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_dots(3, 1), D1_CFG(D1_MOE ",\"attention_bias\":true"), 8, 1, 0, true);
	const char *qkv = A1 "qkv_proj.weight", *qkvb = A1 "qkv_proj.bias";
	for (uint32_t r = 4; r < 6; r++) { /* q head r, kv head 2 */
		shp(&f, r, qkv, 2, 3 * 32, HID, 0);
		rows_are(&f, r, qkv, 0, A1 "q_proj.weight", r * 32, 32);
		rows_are(&f, r, qkv, 32, A1 "k_proj.weight", 64, 32);
		rows_are(&f, r, qkv, 64, A1 "v_proj.weight", 64, 32);
		rows_are(&f, r, qkvb, 0, A1 "q_proj.bias", r * 32, 32);
		rows_are(&f, r, qkvb, 32, A1 "k_proj.bias", 64, 32);
		rows_are(&f, r, qkvb, 64, A1 "v_proj.bias", 64, 32);
		shp(&f, r, A1 "o_proj.bias", 1, HID, 0, 0);
		rows_are(&f, r, A1 "o_proj.bias", 0, A1 "o_proj.bias", 0, HID);
		cols_at(&f, r, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, r * 32, 32);
	}
	replicated(&f, 8);
	/* experts of 64 rows: 8 per rank; the shared experts' 128: 16 */
	shp(&f, 7, W13, 3, NE, 16, HID);
	shp(&f, 7, M1 "shared_experts.gate_up_proj.weight", 2, 32, HID, 0);
	fx_close(&f);
}

static void test_dots1_ep(void **state)
{
	(void)state;
	fx f;
	/* EP 2 (TP 1): ep rank 1 holds experts 4..7 whole; dense, shared experts whole */
	fx_open(&f, tm_dots(3, 0), D1_OK, 1, 2, 0, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, false);
	fx_experts_are(&f, &XP, 1, 4, 4, 0, IE, false);
	shp(&f, 1, M1 "shared_experts.gate_up_proj.weight", 2, 256, HID, 0);
	shp(&f, 1, L0 "mlp.gate_up_proj.weight", 2, 1024, HID, 0);
	replicated(&f, 2);
	fx_close(&f);
	/* TP 2 x EP 2, up_gate: rank 3 (tp 1, ep 1) holds experts 4..7 whole, up first; the
	 * shared experts and the dense MLP follow the tp rank, [gate ; up] whatever w13_order */
	fx_open(&f, tm_dots(3, 0), D1_OK, 2, 2, 1, true);
	fx_experts_are(&f, &XP, 3, 4, 4, 0, IE, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, true);
	const char *sgu = M1 "shared_experts.gate_up_proj.weight";
	rows_are(&f, 3, sgu, 0, M1 "shared_experts.gate_proj.weight", 64, 64);
	rows_are(&f, 3, sgu, 64, M1 "shared_experts.up_proj.weight", 64, 64);
	rows_are(&f, 2, L0 "mlp.gate_up_proj.weight", 256, L0 "mlp.up_proj.weight", 0, 256);
	rows_are(&f, 3, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 128, 128);
	replicated(&f, 4);
	fx_close(&f);
}

/* int8-channel at TP 2: each expert's rows quantized one by one (scale max(amax, 1e-8) /
 * 127, codes rint(x / s)); router, correction bias and q/k norms stay as they are. */
static void test_dots1_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_dots(3, 0), D1_OK, &l, true);
	shp(&f, 1, W13 "_scale", 3, NE, 64, 1);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "shared_experts.down_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "gate.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, M1 "gate.e_score_correction_bias")->dtype, WT_F32);
	assert_int_equal(info(&f, 1, A1 "q_norm.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, M1 "gate.weight_scale") < 0);
	assert_true(tm_ix(f.p, 1, M1 "gate.e_score_correction_bias_scale") < 0);
	assert_true(tm_ix(f.p, 1, A1 "k_norm.weight_scale") < 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13);
	const float *sc = (const float *)out_bytes(&f, 1, W13 "_scale");
	for (int64_t j = 0; j < NE; j++)
		for (int64_t row = 0; row < 64; row++) {
			char src[160];
			snprintf(src, sizeof(src), M1 "experts.%lld.%s_proj.weight", (long long)j,
			         row < 32 ? "gate" : "up");
			size_t rowb;
			const uint16_t *x =
			    (const uint16_t *)src_rows(&f, src, 32 + row % 32, &rowb);
			int8_row_is(q + (j * 64 + row) * HID, sc[j * 64 + row], x, HID);
		}
	fx_close(&f);
}

static void test_dots1_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}, {1, 8}};
	coverage(tm_dots(3, 0), D1_OK, 4, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_dots(3, 1), D1_CFG(D1_MOE ",\"attention_bias\":true"), 4, lays, 4);
}

static void test_dots1_errors(void **state)
{
	(void)state;
	tm_model *m = tm_dots(3, 0);
	tm_remove(m, M1 "gate.e_score_correction_bias");
	fx_refused(m, D1_OK, WT_ENOTFOUND, M1 "gate.e_score_correction_bias", "missing");
	/* the q/k norms are on every layer, whatever use_qk_norm says */
	m = tm_dots(3, 0);
	tm_remove(m, "model.layers.2.self_attn.k_norm.weight");
	fx_refused(m, D1_CFG(D1_MOE ",\"use_qk_norm\":false"), WT_ENOTFOUND,
	           "model.layers.2.self_attn.k_norm.weight", "missing");
	/* Dots1Config leaves the MoE counts None: refused, naming the key */
	fx_refused(tm_dots(3, 0), D1_CFG(",\"n_shared_experts\":2,\"first_k_dense_replace\":1"),
	           WT_ECORRUPT, "n_routed_experts", "None");
	fx_refused(tm_dots(3, 0), D1_CFG(",\"n_routed_experts\":8,\"first_k_dense_replace\":1"),
	           WT_ECORRUPT, "n_shared_experts", "None");
	/* shared experts sized by n_shared_experts x moe_intermediate_size: 1 x 64 */
	fx_refused(tm_dots(3, 0),
	           D1_CFG(",\"n_routed_experts\":8,\"n_shared_experts\":1,"
	                  "\"first_k_dense_replace\":1"),
	           WT_ESHAPE, "shared_experts", "implies [256, 64]");
	/* first_k_dense_replace left out is Dots1Config's 0: layer 0's dense MLP is unknown */
	fx_refused(tm_dots(3, 0), D1_CFG(",\"n_routed_experts\":8,\"n_shared_experts\":2"),
	           WT_EUNSUPPORTED, L0 "mlp.", "first_k_dense_replace");
	/* first_k_dense_replace 2: layer 1's experts are unknown */
	fx_refused(tm_dots(3, 0),
	           D1_CFG(",\"n_routed_experts\":8,\"n_shared_experts\":2,"
	                  "\"first_k_dense_replace\":2"),
	           WT_EUNSUPPORTED, M1, "unknown");
	/* moe_layer_freq is not Dots1's: layer 1 stays MoE with it at 2 */
	fx f;
	fx_open(&f, tm_dots(3, 0), D1_CFG(D1_MOE ",\"moe_layer_freq\":2"), 2, 1, 0, false);
	shp(&f, 0, W13, 3, NE, 64, HID);
	fx_close(&f);
	/* no MTP layer: a layer past num_hidden_layers is refused, not dropped */
	fx_refused(tm_dots(4, 0), D1_OK, WT_ESHAPE, "model.layers.3.", "num_hidden_layers is 3");
	/* num_key_value_heads left out is Dots1Config's 32, not num_attention_heads */
	fx_refused(tm_dots(3, 0),
	           "{\"architectures\":[\"Dots1ForCausalLM\"],\"model_type\":\"dots1\","
	           "\"hidden_size\":256,\"num_attention_heads\":8,\"intermediate_size\":512,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":3,\"moe_intermediate_size\":64" D1_MOE
	           "}",
	           WT_ESHAPE, "k_proj", "1024");
	/* attention_bias (default false) gives q/k/v and o_proj their biases: exactly then */
	fx_refused(tm_dots(3, 1), D1_OK, WT_EUNSUPPORTED, "_proj.bias", "attention_bias is false");
	m = tm_dots(3, 1);
	tm_remove(m, A1 "o_proj.bias");
	fx_refused(m, D1_CFG(D1_MOE ",\"attention_bias\":true"), WT_ENOTFOUND, A1 "o_proj.bias",
	           "attention_bias true");
	/* an expert past n_routed_experts */
	m = tm_dots(3, 0);
	tm_add2(m, M1 "experts.8.up_proj.weight", IE, HID);
	fx_refused(m, D1_OK, WT_ESHAPE, "experts.8.", "8 experts");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dots1_tp2),      cmocka_unit_test(test_dots1_tp8_bias),
	    cmocka_unit_test(test_dots1_ep),       cmocka_unit_test(test_dots1_int8),
	    cmocka_unit_test(test_dots1_coverage), cmocka_unit_test(test_dots1_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
