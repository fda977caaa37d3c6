/*
 * test_shardmap_glm4_moe.c — GLM-4.5 / 4.6 (Glm4MoeForCausalLM): Llama's fused q/k/v
 * with biases, o_proj by columns, per-head q_norm / k_norm replicated (only with
 * use_qk_norm), the dense MLP of layers < first_k_dense_replace merged, DeepSeek-V3's
 * MoE (router and e_score_correction_bias replicated and never quantized, routed experts
 * stacked into w13 / w2, shared experts merged at n_shared_experts x
 * moe_intermediate_size), and the MTP layer (index >= num_hidden_layers) dropped and
 * listed as skipped. Hand-computed slices at TP 2, EP 2, TP 2 x EP 2 and an int8
 * layout, coverage over several layouts, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0010ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 128, H 8, KV 2, head_dim 32 (H * d = 256), I 256 (layer 0), 8 experts of 64,
 * one shared expert (64), V 1000, 3 layers + MTP layer 3 */
#define HID 128
#define IE  64
#define NE  8
#define GLM_CFG(extra)                                                                             \
	"{\"architectures\":[\"Glm4MoeForCausalLM\"],\"model_type\":\"glm4_moe\","                 \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":3,"   \
	"\"num_nextn_predict_layers\":1" extra "}"
/* the MoE keys but n_shared_experts and first_k_dense_replace */
#define GLM_MOE_BASE                                                                               \
	",\"moe_intermediate_size\":64,\"n_routed_experts\":8,\"num_experts_per_tok\":2,"          \
	"\"n_group\":2,\"topk_group\":1,\"attention_bias\":true"
#define GLM_MOE  GLM_MOE_BASE ",\"n_shared_experts\":1,\"first_k_dense_replace\":1"
#define GLM_OK   GLM_CFG(GLM_MOE ",\"use_qk_norm\":true")
#define L0       "model.layers.0."
#define L1       "model.layers.1."
#define A1       L1 "self_attn."
#define M1       L1 "mlp."
#define W13      M1 "experts.w13_weight"
#define W2       M1 "experts.w2_weight"
#define RB       (HID * 2) /* bytes of a BF16 row of hid columns */
#define MTP_LAST 3         /* the MTP layer */

/* The model: layers 0..3 (3 the MTP layer, a MoE decoder layer with its own modules). */
static tm_model *tm_glm(int qknorm)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i <= MTP_LAST; i++) {
		tm_attn(m, i, 8, 2, 32, HID, 1, qknorm);
		if (i == 0) {
			tm_mlp(m, i, "mlp.", 256, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, NE, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, NE, 0, 0);
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", IE, HID);
	}
	static const char *const mtp[] = {"enorm.weight", "hnorm.weight",
	                                  "shared_head.norm.weight"};
	for (size_t k = 0; k < sizeof(mtp) / sizeof(mtp[0]); k++) {
		tm_fmt(b, sizeof(b), TM_L, MTP_LAST, mtp[k]);
		tm_add2(m, b, HID, 0);
	}
	tm_fmt(b, sizeof(b), TM_L, MTP_LAST, "eh_proj.weight");
	tm_add2(m, b, HID, 2 * HID);
	tm_fmt(b, sizeof(b), TM_L, MTP_LAST, "shared_head.head.weight");
	tm_add2(m, b, 1000, HID);
	return m;
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, M1 "experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Router, correction bias and q/k norms: the source bytes on every rank. */
static void replicated(const fx *f, uint32_t ranks)
{
	for (uint32_t r = 0; r < ranks; r++) {
		rows_are(f, r, M1 "gate.weight", 0, M1 "gate.weight", 0, NE);
		rows_are(f, r, M1 "gate.e_score_correction_bias", 0,
		         M1 "gate.e_score_correction_bias", 0, NE);
		assert_int_equal(info(f, r, M1 "gate.e_score_correction_bias")->dtype, WT_F32);
		rows_are(f, r, A1 "q_norm.weight", 0, A1 "q_norm.weight", 0, 32);
		rows_are(f, r, A1 "k_norm.weight", 0, A1 "k_norm.weight", 0, 32);
		shp(f, r, A1 "q_norm.weight", 1, 32, 0, 0);
	}
}

static void test_glm4_moe_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_glm(1), GLM_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "glm4_moe");
	/* attention: rank 1 q heads 4..7 (rows 128..255), kv head 1 (rows 32..63), biases alike */
	const char *qkv = A1 "qkv_proj.weight", *qkvb = A1 "qkv_proj.bias";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, A1 "v_proj.weight", 32, 32);
	shp(&f, 1, qkvb, 1, 192, 0, 0);
	rows_are(&f, 1, qkvb, 0, A1 "q_proj.bias", 128, 128);
	rows_are(&f, 1, qkvb, 128, A1 "k_proj.bias", 32, 32);
	rows_are(&f, 1, qkvb, 160, A1 "v_proj.bias", 32, 32);
	shp(&f, 1, A1 "o_proj.weight", 2, HID, 128, 0);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 256, 128, 128);
	replicated(&f, 2);
	/* dense layer 0: intermediate_size 256, 128 rows of gate and of up per rank */
	const char *gu = L0 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 256, HID, 0);
	rows_are(&f, 1, gu, 0, L0 "mlp.gate_proj.weight", 128, 128);
	rows_are(&f, 1, gu, 128, L0 "mlp.up_proj.weight", 128, 128);
	cols_at(&f, 0, L0 "mlp.down_proj.weight", 0, L0 "mlp.down_proj.weight", HID, 256, 0, 128);
	/* MoE layer 1: every expert TP-split (Il 32) */
	fx_experts_are(&f, &XP, 0, 0, NE, 0, 32, false);
	fx_experts_are(&f, &XP, 1, 0, NE, 32, 32, false);
	/* shared experts: n_shared_experts 1 x 64, split like an MLP */
	const char *sgu = M1 "shared_experts.gate_up_proj.weight";
	shp(&f, 1, sgu, 2, 64, HID, 0);
	rows_are(&f, 1, sgu, 0, M1 "shared_experts.gate_proj.weight", 32, 32);
	rows_are(&f, 1, sgu, 32, M1 "shared_experts.up_proj.weight", 32, 32);
	shp(&f, 1, M1 "shared_experts.down_proj.weight", 2, HID, 32, 0);
	cols_at(&f, 1, M1 "shared_experts.down_proj.weight", 0,
	        M1 "shared_experts.down_proj.weight", HID, IE, 32, 32);
	/* vocab: 1000 padded to 1024, rank 1 rows 512..999 then 24 zero rows */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	/* the MTP layer: nothing emitted, every tensor of it skipped */
	size_t mtp = 0;
	for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
		mtp += strncmp(shardmap_skipped(f.p, k), "model.layers.3.", 15) == 0;
	assert_int_equal(mtp, 11 + 2 + 3 * NE + 3 + 5);
	for (size_t k = 0; k < shardmap_rank_n_tensors(f.p, 0); k++)
		assert_null(strstr(shardmap_rank_tensor(f.p, 0, k)->name, "layers.3."));
	fx_close(&f);
}

static void test_glm4_moe_ep(void **state)
{
	(void)state;
	fx f;
	/* EP 2 (TP 1): ep rank 1 holds experts 4..7 whole; dense, shared experts whole */
	fx_open(&f, tm_glm(1), GLM_OK, 1, 2, 0, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, false);
	fx_experts_are(&f, &XP, 1, 4, 4, 0, IE, false);
	shp(&f, 1, M1 "shared_experts.gate_up_proj.weight", 2, 128, HID, 0);
	shp(&f, 1, L0 "mlp.gate_up_proj.weight", 2, 512, HID, 0);
	replicated(&f, 2);
	fx_close(&f);
	/* TP 2 x EP 2, up_gate: rank 3 (tp 1, ep 1) holds experts 4..7 whole, up first; the
	 * shared experts and the dense MLP follow the tp rank, [gate ; up] whatever w13_order */
	fx_open(&f, tm_glm(1), GLM_OK, 2, 2, 1, true);
	fx_experts_are(&f, &XP, 3, 4, 4, 0, IE, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, true);
	const char *sgu = M1 "shared_experts.gate_up_proj.weight";
	rows_are(&f, 3, sgu, 0, M1 "shared_experts.gate_proj.weight", 32, 32);
	rows_are(&f, 3, sgu, 32, M1 "shared_experts.up_proj.weight", 32, 32);
	rows_are(&f, 2, L0 "mlp.gate_up_proj.weight", 128, L0 "mlp.up_proj.weight", 0, 128);
	rows_are(&f, 3, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 128, 128);
	replicated(&f, 4);
	fx_close(&f);
}

/* int8-channel at TP 2: each expert's rows quantized one by one (scale max(amax, 1e-8) /
 * 127, codes rint(x / s)); router, correction bias and q/k norms stay as they are. */
static void test_glm4_moe_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_glm(1), GLM_OK, &l, true);
	shp(&f, 1, W13, 3, NE, 64, HID);
	shp(&f, 1, W13 "_scale", 3, NE, 64, 1);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "gate.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, M1 "gate.e_score_correction_bias")->dtype, WT_F32);
	assert_int_equal(info(&f, 1, A1 "q_norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.bias")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, M1 "gate.weight_scale") < 0);
	assert_true(tm_ix(f.p, 1, M1 "gate.e_score_correction_bias_scale") < 0);
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

/* use_qk_norm false: a checkpoint without q/k norms plans, with no norm emitted. */
static void test_glm4_moe_no_qk_norm(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_glm(0), GLM_CFG(GLM_MOE), 2, 1, 0, false);
	assert_true(tm_ix(f.p, 0, A1 "q_norm.weight") < 0);
	shp(&f, 0, A1 "qkv_proj.weight", 2, 192, HID, 0);
	fx_close(&f);
}

static void test_glm4_moe_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}, {1, 8}};
	coverage(tm_glm(1), GLM_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

/* A layout the model cannot take, refused at plan time naming the numbers. */
static void layout_refused(uint32_t T, uint32_t P, const char *a, const char *b)
{
	fx_refused_tp_ep(tm_glm(1), GLM_OK, T, P, WT_ELAYOUT, a, b);
}

static void test_glm4_moe_layouts_refused(void **state)
{
	(void)state;
	layout_refused(16, 1, "16", "8"); /* 8 heads */
	layout_refused(3, 1, "3", "8");   /* heads not divisible */
	layout_refused(1, 16, "16", "8"); /* more EP ranks than experts */
	layout_refused(16, 2, "16", "8");
}

static void test_glm4_moe_errors(void **state)
{
	(void)state;
	tm_model *m = tm_glm(1);
	tm_remove(m, M1 "gate.e_score_correction_bias");
	fx_refused(m, GLM_OK, WT_ENOTFOUND, M1 "gate.e_score_correction_bias", "missing");
	/* use_qk_norm true: the norms are required; false: they are unknown */
	m = tm_glm(1);
	tm_remove(m, A1 "k_norm.weight");
	fx_refused(m, GLM_OK, WT_ENOTFOUND, A1 "k_norm.weight", "missing");
	fx_refused(tm_glm(1), GLM_CFG(GLM_MOE), WT_EUNSUPPORTED, "_norm.weight", "use_qk_norm");
	/* shared experts sized by n_shared_experts x moe_intermediate_size: 2 x 64 = 128 */
	fx_refused(tm_glm(1),
	           GLM_CFG(GLM_MOE_BASE ",\"use_qk_norm\":true,\"n_shared_experts\":2,"
	                                "\"first_k_dense_replace\":1"),
	           WT_ESHAPE, "shared_experts", "[128, 128]");
	/* first_k_dense_replace 0: layer 0's dense MLP is unknown there */
	fx_refused(tm_glm(1),
	           GLM_CFG(GLM_MOE_BASE ",\"use_qk_norm\":true,\"first_k_dense_replace\":0"),
	           WT_EUNSUPPORTED, L0 "mlp.", "unknown");
	/* first_k_dense_replace 2: layer 1's experts are unknown */
	fx_refused(tm_glm(1),
	           GLM_CFG(GLM_MOE_BASE ",\"use_qk_norm\":true,\"first_k_dense_replace\":2"),
	           WT_EUNSUPPORTED, M1, "unknown");
	/* moe_layer_freq is not Glm4Moe's: layer 1 stays MoE with it at 2 */
	fx f;
	fx_open(&f, tm_glm(1), GLM_CFG(GLM_MOE ",\"use_qk_norm\":true,\"moe_layer_freq\":2"), 2, 1,
	        0, false);
	shp(&f, 0, W13, 3, NE, 64, HID);
	fx_close(&f);
	/* keys left out take Glm4MoeConfig's defaults (moe_intermediate_size 1408, 128
	 * experts), as in transformers: this checkpoint's are refused by shape */
	fx_refused(
	    tm_glm(1),
	    GLM_CFG(",\"n_routed_experts\":8,\"first_k_dense_replace\":1,\"use_qk_norm\":true"),
	    WT_ESHAPE, "experts", "1408");
	fx_refused(tm_glm(1),
	           GLM_CFG(",\"moe_intermediate_size\":64,\"first_k_dense_replace\":1,"
	                   "\"use_qk_norm\":true"),
	           WT_ESHAPE, "gate.", "[128]");
	/* an expert past n_routed_experts */
	m = tm_glm(1);
	tm_add2(m, M1 "experts.8.up_proj.weight", IE, HID);
	fx_refused(m, GLM_OK, WT_ESHAPE, "experts.8.", "8 experts");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_glm4_moe_tp2),
	    cmocka_unit_test(test_glm4_moe_ep),
	    cmocka_unit_test(test_glm4_moe_int8),
	    cmocka_unit_test(test_glm4_moe_no_qk_norm),
	    cmocka_unit_test(test_glm4_moe_coverage),
	    cmocka_unit_test(test_glm4_moe_layouts_refused),
	    cmocka_unit_test(test_glm4_moe_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
