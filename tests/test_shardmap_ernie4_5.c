/*
 * test_shardmap_ernie4_5.c — Baidu ERNIE 4.5. ernie4_5 (Ernie4_5ForCausalLM): Llama's
 * fused q/k/v with every use_bias bias (q/k/v biases fused, o_proj.bias and
 * down_proj.bias replicated, gate/up biases merged), tied by default. ernie4_5_moe
 * (Ernie4_5_MoeForCausalLM): the dense MLP of the layers outside moe_layer_start_index ..
 * moe_layer_end_index / moe_layer_interval merged, the MoE blocks' F32 router
 * (mlp.gate.weight) and mlp.moe_statics.e_score_correction_bias [1, E] replicated and
 * never quantized, routed experts stacked into w13 / w2, shared experts merged at
 * moe_num_shared_experts x moe_intermediate_size, and the MTP module (model.mtp_*)
 * dropped and listed as skipped. Hand-computed slices at TP 2, EP 2, TP 2 x EP 2 and an
 * int8 layout, coverage over several layouts, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0011ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* ernie4_5_moe: hid 128, H 4, KV 2 (head_dim hid / H = 32), I 256 (layers 0 and 3),
 * 8 experts of 64, 2 shared experts (128), V 1000, 4 layers: 1 and 2 MoE */
#define HID 128
#define IE  64
#define NE  8
#define ISH 128
#define ERN_CFG(extra)                                                                             \
	"{\"architectures\":[\"Ernie4_5_MoeForCausalLM\"],\"model_type\":\"ernie4_5_moe\","        \
	"\"hidden_size\":128,\"num_attention_heads\":4,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":4,"                   \
	"\"tie_word_embeddings\":false,\"moe_intermediate_size\":64,"                              \
	"\"moe_k\":2" extra "}"
#define ERN_E     ",\"moe_num_experts\":8,\"moe_num_shared_experts\":2"
#define ERN_RANGE ",\"moe_layer_start_index\":1,\"moe_layer_end_index\":2"
#define ERN_OK    ERN_CFG(ERN_E ERN_RANGE ",\"moe_layer_interval\":1")
#define L0        "model.layers.0."
#define L1        "model.layers.1."
#define L3        "model.layers.3."
#define A1        L1 "self_attn."
#define M1        L1 "mlp."
#define W13       M1 "experts.w13_weight"
#define W2        M1 "experts.w2_weight"
#define CB        M1 "moe_statics.e_score_correction_bias"

static const char *const mtp_names[] = {
    "model.mtp_emb_norm.0.weight", "model.mtp_hidden_norm.0.weight",
    "model.mtp_linear_proj.0.weight", "model.mtp_block.0.input_layernorm.weight",
    "model.mtp_block.0.self_attn.q_proj.weight"};
#define N_MTP (sizeof(mtp_names) / sizeof(mtp_names[0]))

/* The MoE model: layers 0 and 3 dense, 1 and 2 MoE, the MTP module's tensors. */
static tm_model *tm_ernie_moe(void)
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
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add(m, b, WT_F32, 2, NE, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.moe_statics.e_score_correction_bias");
		tm_add(m, b, WT_F32, 2, 1, NE, 0);
		tm_experts(m, i, "mlp.experts.", NE, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", ISH, HID);
	}
	tm_add2(m, mtp_names[0], HID, 0);
	tm_add2(m, mtp_names[1], HID, 0);
	tm_add2(m, mtp_names[2], HID, 2 * HID);
	tm_add2(m, mtp_names[3], HID, 0);
	tm_add2(m, mtp_names[4], 128, HID);
	return m;
}

/* ernie4_5 (ERNIE-4.5-0.3B's layout): hid 128, H 8, KV 2, head_dim 32 (H * d = 256),
 * I 256, V 1000, 2 layers, use_bias: q/k/v/o and gate/up/down biases; no lm_head. */
#define DENSE_CFG(extra)                                                                           \
	"{\"architectures\":[\"Ernie4_5ForCausalLM\"],\"model_type\":\"ernie4_5\","                \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"head_dim\":32,\"intermediate_size\":256,\"vocab_size\":1000,"                           \
	"\"num_hidden_layers\":2,\"use_bias\":true" extra "}"

static tm_model *tm_ernie_dense(int lm_head)
{
	tm_model *m = tm_new(SEED + 1, WT_BF16);
	tm_top(m, 1000, HID, lm_head);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, HID, 1, 0);
		tm_mlp(m, i, "mlp.", 256, HID);
		static const struct {
			const char *leaf;
			int64_t n;
		} bias[] = {{"self_attn.o_proj.bias", HID},
		            {"mlp.gate_proj.bias", 256},
		            {"mlp.up_proj.bias", 256},
		            {"mlp.down_proj.bias", HID}};
		for (size_t k = 0; k < sizeof(bias) / sizeof(bias[0]); k++) {
			tm_fmt(b, sizeof(b), TM_L, i, bias[k].leaf);
			tm_add2(m, b, bias[k].n, 0);
		}
	}
	return m;
}

/* The stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, M1 "experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* Router and correction bias: the source bytes, F32 and shape, on every rank. */
static void replicated(const fx *f, uint32_t ranks)
{
	for (uint32_t r = 0; r < ranks; r++) {
		rows_are(f, r, M1 "gate.weight", 0, M1 "gate.weight", 0, NE);
		shp(f, r, M1 "gate.weight", 2, NE, HID, 0);
		assert_int_equal(info(f, r, M1 "gate.weight")->dtype, WT_F32);
		rows_are(f, r, CB, 0, CB, 0, 1);
		shp(f, r, CB, 2, 1, NE, 0);
		assert_int_equal(info(f, r, CB)->dtype, WT_F32);
	}
}

/* The dense layer i's MLP on rank r of TP 2: rows [r*128, +128) of gate and up. */
static void dense_mlp_is(const fx *f, uint32_t r, const char *L)
{
	char gu[160], g[160], u[160], d[160];
	snprintf(gu, sizeof(gu), "%smlp.gate_up_proj.weight", L);
	snprintf(g, sizeof(g), "%smlp.gate_proj.weight", L);
	snprintf(u, sizeof(u), "%smlp.up_proj.weight", L);
	snprintf(d, sizeof(d), "%smlp.down_proj.weight", L);
	shp(f, r, gu, 2, 256, HID, 0);
	rows_are(f, r, gu, 0, g, r * 128, 128);
	rows_are(f, r, gu, 128, u, r * 128, 128);
	cols_at(f, r, d, 0, d, HID, 256, r * 128, 128);
}

static void test_ernie4_5_dense_tp2(void **state)
{
	(void)state;
	fx f;
	/* tie_word_embeddings absent: Ernie4_5Config ties, so no lm_head is expected */
	fx_open(&f, tm_ernie_dense(0), DENSE_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "ernie4_5");
	assert_true(shardmap_tied_lm_head(f.p));
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0);
	const char *qkv = L1 "self_attn.qkv_proj.weight";
	/* rank 1: q heads 4..7 (rows 128..255), kv head 1 (rows 32..63), biases alike */
	shp(&f, 1, qkv, 2, 192, HID, 0);
	rows_are(&f, 1, qkv, 0, L1 "self_attn.q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, L1 "self_attn.k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, L1 "self_attn.v_proj.weight", 32, 32);
	const char *qkvb = L1 "self_attn.qkv_proj.bias";
	shp(&f, 1, qkvb, 1, 192, 0, 0);
	rows_are(&f, 1, qkvb, 0, L1 "self_attn.q_proj.bias", 128, 128);
	rows_are(&f, 1, qkvb, 128, L1 "self_attn.k_proj.bias", 32, 32);
	rows_are(&f, 1, qkvb, 160, L1 "self_attn.v_proj.bias", 32, 32);
	cols_at(&f, 1, L1 "self_attn.o_proj.weight", 0, L1 "self_attn.o_proj.weight", HID, 256, 128,
	        128);
	/* row-parallel biases whole on every rank; gate/up biases split like their rows */
	for (uint32_t r = 0; r < 2; r++) {
		rows_are(&f, r, L1 "self_attn.o_proj.bias", 0, L1 "self_attn.o_proj.bias", 0, HID);
		rows_are(&f, r, L1 "mlp.down_proj.bias", 0, L1 "mlp.down_proj.bias", 0, HID);
		const char *gub = L1 "mlp.gate_up_proj.bias";
		shp(&f, r, gub, 1, 256, 0, 0);
		rows_are(&f, r, gub, 0, L1 "mlp.gate_proj.bias", r * 128, 128);
		rows_are(&f, r, gub, 128, L1 "mlp.up_proj.bias", r * 128, 128);
		dense_mlp_is(&f, r, L1);
	}
	shp(&f, 1, "model.embed_tokens.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 512, 488);
	fx_close(&f);
	/* untied: lm_head required, then emitted vocab-parallel */
	fx_open(&f, tm_ernie_dense(1), DENSE_CFG(",\"tie_word_embeddings\":false"), 2, 1, 0, true);
	shp(&f, 0, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 0, "lm_head.weight", 0, "lm_head.weight", 0, 512);
	fx_close(&f);
}

static void test_ernie4_5_moe_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ernie_moe(), ERN_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "ernie4_5_moe");
	assert_false(shardmap_tied_lm_head(f.p));
	/* attention: rank 1 q heads 2..3 (rows 64..127), kv head 1 (rows 32..63) */
	const char *qkv = A1 "qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128, HID, 0);
	rows_are(&f, 1, qkv, 0, A1 "q_proj.weight", 64, 64);
	rows_are(&f, 1, qkv, 64, A1 "k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 96, A1 "v_proj.weight", 32, 32);
	cols_at(&f, 1, A1 "o_proj.weight", 0, A1 "o_proj.weight", HID, 128, 64, 64);
	replicated(&f, 2);
	/* dense layers 0 (before moe_layer_start_index) and 3 (past moe_layer_end_index) */
	for (uint32_t r = 0; r < 2; r++) {
		dense_mlp_is(&f, r, L0);
		dense_mlp_is(&f, r, L3);
	}
	assert_true(tm_ix(f.p, 0, L3 "mlp.gate.weight") < 0);
	assert_true(tm_ix(f.p, 0, L0 "mlp.experts.w13_weight") < 0);
	/* MoE layer 1: every expert TP-split (Il 32) */
	fx_experts_are(&f, &XP, 0, 0, NE, 0, 32, false);
	fx_experts_are(&f, &XP, 1, 0, NE, 32, 32, false);
	/* shared experts: moe_num_shared_experts 2 x 64 = 128, split like an MLP */
	const char *sgu = M1 "shared_experts.gate_up_proj.weight";
	shp(&f, 1, sgu, 2, 128, HID, 0);
	rows_are(&f, 1, sgu, 0, M1 "shared_experts.gate_proj.weight", 64, 64);
	rows_are(&f, 1, sgu, 64, M1 "shared_experts.up_proj.weight", 64, 64);
	shp(&f, 1, M1 "shared_experts.down_proj.weight", 2, HID, 64, 0);
	cols_at(&f, 1, M1 "shared_experts.down_proj.weight", 0,
	        M1 "shared_experts.down_proj.weight", HID, ISH, 64, 64);
	/* vocab: 1000 padded to 1024, rank 1 rows 512..999 then 24 zero rows */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	/* the MTP module: nothing emitted, each of its tensors skipped */
	assert_int_equal(shardmap_n_skipped(f.p), N_MTP);
	for (size_t k = 0; k < N_MTP; k++) {
		bool seen = false;
		for (size_t s = 0; s < shardmap_n_skipped(f.p); s++)
			seen |= strcmp(shardmap_skipped(f.p, s), mtp_names[k]) == 0;
		assert_true(seen);
	}
	for (uint32_t r = 0; r < 2; r++)
		for (size_t k = 0; k < shardmap_rank_n_tensors(f.p, r); k++)
			assert_null(strstr(shardmap_rank_tensor(f.p, r, k)->name, "mtp"));
	fx_close(&f);
}

static void test_ernie4_5_moe_ep(void **state)
{
	(void)state;
	fx f;
	/* EP 2 (TP 1): ep rank 1 holds experts 4..7 whole; dense, shared experts whole */
	fx_open(&f, tm_ernie_moe(), ERN_OK, 1, 2, 0, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, false);
	fx_experts_are(&f, &XP, 1, 4, 4, 0, IE, false);
	shp(&f, 1, M1 "shared_experts.gate_up_proj.weight", 2, 256, HID, 0);
	shp(&f, 1, L0 "mlp.gate_up_proj.weight", 2, 512, HID, 0);
	shp(&f, 1, L3 "mlp.gate_up_proj.weight", 2, 512, HID, 0);
	replicated(&f, 2);
	fx_close(&f);
	/* TP 2 x EP 2, up_gate: rank 3 (tp 1, ep 1) holds experts 4..7 whole, up first; the
	 * shared experts and the dense MLP follow the tp rank, [gate ; up] whatever w13_order */
	fx_open(&f, tm_ernie_moe(), ERN_OK, 2, 2, 1, true);
	fx_experts_are(&f, &XP, 3, 4, 4, 0, IE, true);
	fx_experts_are(&f, &XP, 0, 0, 4, 0, IE, true);
	const char *sgu = M1 "shared_experts.gate_up_proj.weight";
	rows_are(&f, 3, sgu, 0, M1 "shared_experts.gate_proj.weight", 64, 64);
	rows_are(&f, 3, sgu, 64, M1 "shared_experts.up_proj.weight", 64, 64);
	rows_are(&f, 2, L0 "mlp.gate_up_proj.weight", 128, L0 "mlp.up_proj.weight", 0, 128);
	rows_are(&f, 3, L3 "mlp.gate_up_proj.weight", 0, L3 "mlp.gate_proj.weight", 128, 128);
	rows_are(&f, 3, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64, 64);
	replicated(&f, 4);
	fx_close(&f);
}

/* int8-channel at TP 2: each expert's rows quantized one by one (scale max(amax, 1e-8) /
 * 127, codes rint(x / s)); the F32 router and correction bias stay F32, unscaled. */
static void test_ernie4_5_moe_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_ernie_moe(), ERN_OK, &l, true);
	shp(&f, 1, W13, 3, NE, 64, HID);
	shp(&f, 1, W13 "_scale", 3, NE, 64, 1);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "shared_experts.gate_up_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L3 "mlp.down_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, M1 "gate.weight")->dtype, WT_F32);
	assert_int_equal(info(&f, 1, CB)->dtype, WT_F32);
	assert_int_equal(info(&f, 1, "lm_head.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, M1 "gate.weight_scale") < 0);
	assert_true(tm_ix(f.p, 1, CB "_scale") < 0);
	replicated(&f, 2);
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

static void test_ernie4_5_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2},
	                                   {1, 4}, {4, 2}, {2, 4}, {1, 8}, {1, 3}};
	coverage(tm_ernie_moe(), ERN_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ernie_dense(0), DENSE_CFG(""), 2, dense, sizeof(dense) / sizeof(dense[0]));
}

/* A layout the model cannot take, refused at plan time naming the numbers. */
static void layout_refused(uint32_t T, uint32_t P, const char *a, const char *b)
{
	fx_refused_tp_ep(tm_ernie_moe(), ERN_OK, T, P, WT_ELAYOUT, a, b);
}

static void test_ernie4_5_layouts_refused(void **state)
{
	(void)state;
	layout_refused(8, 1, "8", "4");   /* 4 heads */
	layout_refused(3, 1, "3", "4");   /* heads not divisible */
	layout_refused(1, 16, "16", "8"); /* more EP ranks than experts */
}

static void test_ernie4_5_errors(void **state)
{
	(void)state;
	tm_model *m = tm_ernie_moe();
	tm_remove(m, CB);
	fx_refused(m, ERN_OK, WT_ENOTFOUND, CB, "missing");
	m = tm_ernie_moe();
	tm_remove(m, M1 "shared_experts.up_proj.weight");
	fx_refused(m, ERN_OK, WT_ENOTFOUND, "shared_experts.up_proj", "missing");
	/* the bias as DeepSeek names it is not ERNIE's */
	m = tm_ernie_moe();
	tm_add(m, M1 "gate.e_score_correction_bias", WT_F32, 1, NE, 0, 0);
	fx_refused(m, ERN_OK, WT_EUNSUPPORTED, "gate.e_score_correction_bias", "unknown");
	/* the bias squeezed to [E] is not Ernie4_5_MoeStatics' [1, E] */
	m = tm_ernie_moe();
	tm_remove(m, CB);
	tm_add(m, CB, WT_F32, 1, NE, 0, 0);
	fx_refused(m, ERN_OK, WT_ESHAPE, CB, "[1, 8]");
	/* shared experts sized moe_num_shared_experts x moe_intermediate_size: 1 x 64 */
	fx_refused(tm_ernie_moe(),
	           ERN_CFG(",\"moe_num_experts\":8,\"moe_num_shared_experts\":1" ERN_RANGE),
	           WT_ESHAPE, "shared_experts", "[128, 64]");
	/* moe_num_shared_experts 0: no shared experts, so theirs are unknown */
	fx_refused(tm_ernie_moe(),
	           ERN_CFG(",\"moe_num_experts\":8,\"moe_num_shared_experts\":0" ERN_RANGE),
	           WT_EUNSUPPORTED, "shared_experts", "moe_num_shared_experts");
	/* moe_layer_end_index -1 (the last layer): layer 3's dense MLP is unknown there */
	fx_refused(tm_ernie_moe(),
	           ERN_CFG(ERN_E ",\"moe_layer_start_index\":1,\"moe_layer_end_index\":-1"),
	           WT_EUNSUPPORTED, L3 "mlp.", "moe_layer_end_index");
	/* moe_layer_start_index 0: layer 0's dense MLP is unknown */
	fx_refused(tm_ernie_moe(),
	           ERN_CFG(ERN_E ",\"moe_layer_start_index\":0,\"moe_layer_end_index\":2"),
	           WT_EUNSUPPORTED, L0 "mlp.", "unknown");
	/* moe_layer_interval 2: MoE iff (i + 1) % 2 == 0, so layer 2's experts are unknown */
	fx_refused(tm_ernie_moe(), ERN_CFG(ERN_E ERN_RANGE ",\"moe_layer_interval\":2"),
	           WT_EUNSUPPORTED, "model.layers.2.mlp.",
	           "a dense layer (see moe_layer_start_index");
	/* keys left out take Ernie4_5_MoeConfig's defaults (64 experts, start 1, end the last
	 * layer), as in transformers: this checkpoint is refused by them */
	fx_refused(tm_ernie_moe(), ERN_CFG(",\"moe_num_shared_experts\":2" ERN_RANGE), WT_ESHAPE,
	           "gate.weight", "64");
	fx_refused(tm_ernie_moe(), ERN_CFG(ERN_E), WT_EUNSUPPORTED, L3 "mlp.", "unknown");
	/* ERNIE-4.5-VL's per-modality lists are not read */
	fx_refused(tm_ernie_moe(),
	           ERN_CFG(ERN_E ",\"moe_layer_start_index\":[1,1],\"moe_layer_end_index\":2"),
	           WT_ECORRUPT, "moe_layer_start_index", "not an integer");
	/* use_bias on the MoE model: the experts' biases have no stack to go to */
	fx_refused(tm_ernie_moe(), ERN_CFG(ERN_E ERN_RANGE ",\"use_bias\":true"), WT_EUNSUPPORTED,
	           "use_bias", "routed experts");
	/* an expert past moe_num_experts */
	m = tm_ernie_moe();
	tm_add2(m, M1 "experts.8.up_proj.weight", IE, HID);
	fx_refused(m, ERN_OK, WT_ESHAPE, "experts.8.", "8 experts");
	/* dense: tie_word_embeddings false needs lm_head */
	fx_refused(tm_ernie_dense(0), DENSE_CFG(",\"tie_word_embeddings\":false"), WT_ENOTFOUND,
	           "lm_head.weight", "missing");
	/* an ERNIE MTP tensor in the dense family is no part of it */
	m = tm_ernie_dense(0);
	tm_add2(m, "model.mtp_emb_norm.0.weight", HID, 0);
	fx_refused(m, DENSE_CFG(""), WT_EUNSUPPORTED, "model.mtp_emb_norm.0.weight", "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ernie4_5_dense_tp2),
	    cmocka_unit_test(test_ernie4_5_moe_tp2),
	    cmocka_unit_test(test_ernie4_5_moe_ep),
	    cmocka_unit_test(test_ernie4_5_moe_int8),
	    cmocka_unit_test(test_ernie4_5_coverage),
	    cmocka_unit_test(test_ernie4_5_layouts_refused),
	    cmocka_unit_test(test_ernie4_5_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
