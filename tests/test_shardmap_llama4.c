/*
 * test_shardmap_llama4.c — Llama 4 (Llama4ForConditionalGeneration, Llama4ForCausalLM):
 * dense and MoE layers as the config interleaves them (interleave_moe_layer_step,
 * moe_layers), the routed experts stacked as torch.bmm operands [E, hid, 2*I] /
 * [E, I, hid] (gate the first I columns) cut transposed into w13 / w2, the shared
 * expert as a merged MLP, the dense MLP with intermediate_size_mlp, and the vision
 * tower (q/k/v fused by heads, o_proj / fc2 / adapter fc2 by columns, fc1 / adapter fc1
 * by rows, the rest and the projector replicated). Hand-computed slices at TP 2, EP 2,
 * TP 2 x EP 2 and an int8 layout, coverage over several layouts, and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0009ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* hid 256, H 8, KV 2, d 32, V 1003, L 2 (layer 0 dense, 1 MoE), intermediate_size 64
 * (experts and shared expert), intermediate_size_mlp 192 (dense), 4 experts; vision
 * width 64, 4 heads, MLP 256, 1 block, 28 / 14 = 2 x 2 patches (+ class: 5 positions),
 * projector 128, vision_output_dim 96 */
#define HID 256
#define IE  64
#define IM  192
#define L4_TEXT(extra)                                                                             \
	"\"text_config\":{\"model_type\":\"llama4_text\",\"hidden_size\":256,"                     \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32,"                     \
	"\"vocab_size\":1003,\"num_hidden_layers\":2,\"intermediate_size\":64," extra "}"
#define L4_VIS(extra)                                                                              \
	"\"vision_config\":{\"hidden_size\":64,"                                                   \
	"\"num_hidden_layers\":1,\"intermediate_size\":256,\"image_size\":28,\"patch_size\":14,"   \
	"\"num_channels\":3,\"vision_output_dim\":96,\"projector_input_dim\":128" extra "}"
#define L4_CFG(text, vis, top)                                                                     \
	"{\"architectures\":[\"Llama4ForConditionalGeneration\"],\"model_type\":\"llama4\"," text  \
	"," vis top "}"
#define L4_TXT_OK                                                                                  \
	"\"num_local_experts\":4,\"interleave_moe_layer_step\":2,\"intermediate_size_mlp\":192"
#define L4_VIS_OK L4_VIS(",\"projector_output_dim\":128,\"num_attention_heads\":4")
#define L4_OK     L4_CFG(L4_TEXT(L4_TXT_OK), L4_VIS_OK, "")
#define LM        "language_model.model.layers."
#define L0        LM "0."
#define L1        LM "1."
#define FF1       L1 "feed_forward."
#define GU        FF1 "experts.gate_up_proj"
#define DN        FF1 "experts.down_proj"
#define W13       FF1 "experts.w13_weight"
#define W2        FF1 "experts.w2_weight"
#define VB        "vision_model.model.layers.0."
#define RB        (HID * 2) /* bytes of a BF16 row of hid columns */

static void tm_add3(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c)
{
	tm_add(m, name, WT_DTYPE_INVALID, 3, a, b, c);
}

/* The language model (layer `moe` MoE, the other dense) under `prefix`. */
static void l4_text(tm_model *m, int moe, const char *prefix)
{
	tm_top(m, 1003, HID, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, HID, 0, 0);
		if (i != moe) {
			tm_mlp(m, i, "feed_forward.", IM, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "feed_forward.router.weight");
		tm_add2(m, b, 4, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "feed_forward.experts.gate_up_proj");
		tm_add3(m, b, 4, HID, 2 * IE);
		tm_fmt(b, sizeof(b), TM_L, i, "feed_forward.experts.down_proj");
		tm_add3(m, b, 4, IE, HID);
		tm_mlp(m, i, "feed_forward.shared_expert.", IE, HID);
	}
	for (size_t k = 0; k < m->n; k++) {
		char nm[sizeof(m->name[0])];
		int n = snprintf(nm, sizeof(nm), "%s%s", prefix, m->name[k]);
		assert_true(n > 0 && (size_t)n < sizeof(nm));
		memcpy(m->name[k], nm, (size_t)n + 1);
	}
}

static void l4_vision(tm_model *m)
{
	tm_add2(m, "vision_model.patch_embedding.linear.weight", 64, 3 * 14 * 14);
	tm_add2(m, "vision_model.class_embedding", 64, 0);
	tm_add2(m, "vision_model.positional_embedding_vlm", 5, 64);
	static const char *const ln[] = {"vision_model.layernorm_pre.",
	                                 "vision_model.layernorm_post.", VB "input_layernorm.",
	                                 VB "post_attention_layernorm."};
	char b[200];
	for (size_t k = 0; k < 4; k++) {
		snprintf(b, sizeof(b), "%sweight", ln[k]);
		tm_add2(m, b, 64, 0);
		snprintf(b, sizeof(b), "%sbias", ln[k]);
		tm_add2(m, b, 64, 0);
	}
	static const char *const lin[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
	for (size_t k = 0; k < 4; k++) {
		snprintf(b, sizeof(b), VB "self_attn.%s.weight", lin[k]);
		tm_add2(m, b, 64, 64);
		snprintf(b, sizeof(b), VB "self_attn.%s.bias", lin[k]);
		tm_add2(m, b, 64, 0);
	}
	tm_add2(m, VB "mlp.fc1.weight", 256, 64);
	tm_add2(m, VB "mlp.fc1.bias", 256, 0);
	tm_add2(m, VB "mlp.fc2.weight", 64, 256);
	tm_add2(m, VB "mlp.fc2.bias", 64, 0);
	tm_add2(m, "vision_model.vision_adapter.mlp.fc1.weight", 128, 256);
	tm_add2(m, "vision_model.vision_adapter.mlp.fc2.weight", 128, 128);
	tm_add2(m, "multi_modal_projector.linear_1.weight", HID, 96);
}

static tm_model *tm_llama4(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	l4_text(m, 1, "language_model.");
	l4_vision(m);
	return m;
}

static const uint8_t *srow(const fx *f, const char *name, int64_t r0)
{
	size_t rowb;
	return src_rows(f, name, r0, &rowb);
}

/* Expert j's gate (half 0) or up (half 1) row k as transformers applies it: column
 * half*IE + k of gate_up_proj[j] ([hid, 2*IE]), element h. */
static uint16_t gu_at(const fx *f, int64_t j, int half, int64_t k, int64_t h)
{
	const uint16_t *s = (const uint16_t *)srow(f, GU, 0);
	return s[(j * HID + h) * 2 * IE + half * IE + k];
}

static const fx_bmm BMM = {GU, DN, W13, W2, HID, IE};

/* Rank r's rt [N, n] (BF16) is columns [a, a+n) of src [N, K]. */
static void cols_are(const fx *f, uint32_t r, const char *rt, const char *src, int64_t N, int64_t K,
                     int64_t a, int64_t n)
{
	const uint8_t *s = srow(f, src, 0), *o = out_bytes(f, r, rt);
	for (int64_t row = 0; row < N; row++)
		assert_memory_equal(o + (size_t)(row * n) * 2, s + (size_t)(row * K + a) * 2,
		                    (size_t)n * 2);
}

static void test_llama4_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_llama4(), L4_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "llama4");
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 1, "language_model.lm_head.weight", 2, 512, HID, 0);
	/* dense layer 0: intermediate_size_mlp 192, 96 rows of gate and of up per rank */
	const char *gup = L0 "feed_forward.gate_up_proj.weight";
	shp(&f, 1, gup, 2, 2 * 96, HID, 0);
	rows_are(&f, 1, gup, 0, L0 "feed_forward.gate_proj.weight", 96, 96);
	rows_are(&f, 1, gup, 96, L0 "feed_forward.up_proj.weight", 96, 96);
	shp(&f, 1, L0 "feed_forward.down_proj.weight", 2, HID, 96, 0);
	cols_are(&f, 1, L0 "feed_forward.down_proj.weight", L0 "feed_forward.down_proj.weight", HID,
	         IM, 96, 96);
	/* MoE layer 1: experts TP-split (Il 32), transposed */
	shp(&f, 1, W13, 3, 4, 64, HID);
	shp(&f, 1, W2, 3, 4, HID, 32);
	for (int64_t j = 0; j < 4; j++) {
		fx_bmm_experts_are(&f, &BMM, 0, j, j, 0, 32, false);
		fx_bmm_experts_are(&f, &BMM, 1, j, j, 32, 32, false);
	}
	/* shared expert: merged gate/up by rows of intermediate_size, down by columns */
	const char *sgu = FF1 "shared_expert.gate_up_proj.weight";
	shp(&f, 1, sgu, 2, 64, HID, 0);
	rows_are(&f, 1, sgu, 0, FF1 "shared_expert.gate_proj.weight", 32, 32);
	rows_are(&f, 1, sgu, 32, FF1 "shared_expert.up_proj.weight", 32, 32);
	cols_are(&f, 0, FF1 "shared_expert.down_proj.weight", FF1 "shared_expert.down_proj.weight",
	         HID, IE, 0, 32);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, FF1 "router.weight", 2, 4, HID, 0);
		rows_are(&f, r, FF1 "router.weight", 0, FF1 "router.weight", 0, 4);
	}
	/* attention: no biases; rank 1 q heads 4..7, kv head 1 */
	const char *qkv = L1 "self_attn.qkv_proj.weight";
	shp(&f, 1, qkv, 2, 128 + 64, HID, 0);
	rows_are(&f, 1, qkv, 0, L1 "self_attn.q_proj.weight", 128, 128);
	rows_are(&f, 1, qkv, 128, L1 "self_attn.k_proj.weight", 32, 32);
	rows_are(&f, 1, qkv, 160, L1 "self_attn.v_proj.weight", 32, 32);
	assert_true(tm_ix(f.p, 1, L1 "self_attn.qkv_proj.bias") < 0);
	fx_close(&f);
}

/* The vision tower at TP 2: q/k/v (and biases) fused by heads (2 of 4 per rank, 32 rows
 * of each), o_proj and fc2 by columns, fc1 rows, adapter fc1 rows / fc2 columns of
 * projector_input_dim; patch embedding, class and position embeddings, norms, every
 * row-parallel bias and the projector whole on each rank. */
static void test_llama4_vision(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_llama4(), L4_OK, 2, 1, 0, true);
	const char *qkv = VB "self_attn.qkv_proj.weight", *qkvb = VB "self_attn.qkv_proj.bias";
	shp(&f, 1, qkv, 2, 96, 64, 0);
	shp(&f, 1, qkvb, 1, 96, 0, 0);
	static const char *const parts[] = {"q", "k", "v"};
	for (int p = 0; p < 3; p++) {
		char w[200], b[200];
		snprintf(w, sizeof(w), VB "self_attn.%s_proj.weight", parts[p]);
		snprintf(b, sizeof(b), VB "self_attn.%s_proj.bias", parts[p]);
		rows_are(&f, 1, qkv, 32 * p, w, 32, 32);
		rows_are(&f, 1, qkvb, 32 * p, b, 32, 32);
	}
	shp(&f, 1, VB "self_attn.o_proj.weight", 2, 64, 32, 0);
	cols_are(&f, 1, VB "self_attn.o_proj.weight", VB "self_attn.o_proj.weight", 64, 64, 32, 32);
	shp(&f, 1, VB "mlp.fc1.weight", 2, 128, 64, 0);
	rows_are(&f, 1, VB "mlp.fc1.weight", 0, VB "mlp.fc1.weight", 128, 128);
	rows_are(&f, 1, VB "mlp.fc1.bias", 0, VB "mlp.fc1.bias", 128, 128);
	cols_are(&f, 1, VB "mlp.fc2.weight", VB "mlp.fc2.weight", 64, 256, 128, 128);
	const char *a1 = "vision_model.vision_adapter.mlp.fc1.weight",
	           *a2 = "vision_model.vision_adapter.mlp.fc2.weight";
	shp(&f, 1, a1, 2, 64, 256, 0);
	rows_are(&f, 1, a1, 0, a1, 64, 64);
	shp(&f, 1, a2, 2, 128, 64, 0);
	cols_are(&f, 1, a2, a2, 128, 128, 64, 64);
	static const struct {
		const char *n;
		int64_t rows;
	} repl[] = {{"vision_model.patch_embedding.linear.weight", 64},
	            {"vision_model.class_embedding", 64},
	            {"vision_model.positional_embedding_vlm", 5},
	            {"vision_model.layernorm_pre.bias", 64},
	            {"vision_model.layernorm_post.weight", 64},
	            {VB "input_layernorm.weight", 64},
	            {VB "post_attention_layernorm.bias", 64},
	            {VB "self_attn.o_proj.bias", 64},
	            {VB "mlp.fc2.bias", 64},
	            {"multi_modal_projector.linear_1.weight", HID}};
	for (uint32_t r = 0; r < 2; r++)
		for (size_t k = 0; k < sizeof(repl) / sizeof(repl[0]); k++)
			rows_are(&f, r, repl[k].n, 0, repl[k].n, 0, repl[k].rows);
	shp(&f, 0, "vision_model.patch_embedding.linear.weight", 2, 64, 588, 0);
	shp(&f, 0, "multi_modal_projector.linear_1.weight", 2, HID, 96, 0);
	fx_close(&f);
}

static void test_llama4_ep(void **state)
{
	(void)state;
	fx f;
	/* EP 2 (TP 1): ep rank 1 holds experts 2, 3 whole; the dense layer whole everywhere */
	fx_open(&f, tm_llama4(), L4_OK, 1, 2, 0, true);
	shp(&f, 1, W13, 3, 2, 128, HID);
	shp(&f, 1, W2, 3, 2, HID, IE);
	for (int64_t k = 0; k < 2; k++) {
		fx_bmm_experts_are(&f, &BMM, 0, k, k, 0, IE, false);
		fx_bmm_experts_are(&f, &BMM, 1, k, 2 + k, 0, IE, false);
	}
	shp(&f, 1, L0 "feed_forward.gate_up_proj.weight", 2, 2 * IM, HID, 0);
	fx_close(&f);
	/* TP 2 x EP 2 with up_gate: rank 3 (tp 1, ep 1) holds experts 2, 3 whole, up first;
	 * the shared expert and the dense MLP follow the tp rank */
	fx_open(&f, tm_llama4(), L4_OK, 2, 2, 1, true);
	for (int64_t k = 0; k < 2; k++) {
		fx_bmm_experts_are(&f, &BMM, 3, k, 2 + k, 0, IE, true);
		fx_bmm_experts_are(&f, &BMM, 0, k, k, 0, IE, true);
	}
	const char *sgu = FF1 "shared_expert.gate_up_proj.weight";
	rows_are(&f, 3, sgu, 0, FF1 "shared_expert.gate_proj.weight", 32, 32);
	rows_are(&f, 3, sgu, 32, FF1 "shared_expert.up_proj.weight", 32, 32);
	rows_are(&f, 2, L0 "feed_forward.gate_up_proj.weight", 96, L0 "feed_forward.up_proj.weight",
	         0, 96);
	fx_close(&f);
}

/* int8-channel at TP 2: every expert quantized one by one from its transposed rows
 * (scale per emitted row: max(amax, 1e-8) / 127, codes rint(x / s)); the router stays
 * BF16; fp8-block and int4-group give the documented shapes. */
static void test_llama4_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_llama4(), L4_OK, &l, true);
	shp(&f, 1, W13, 3, 4, 64, HID);
	shp(&f, 1, W13 "_scale", 3, 4, 64, 1);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	assert_int_equal(info(&f, 1, FF1 "router.weight")->dtype, WT_BF16);
	assert_true(tm_ix(f.p, 1, FF1 "router.weight_scale") < 0);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13);
	const float *sc = (const float *)out_bytes(&f, 1, W13 "_scale");
	for (int64_t j = 0; j < 4; j++)
		for (int64_t row = 0; row < 64; row++) {
			int half = row >= 32;
			float x[HID], amax = 0;
			for (int64_t h = 0; h < HID; h++) {
				x[h] = kern_bf16_to_f32(gu_at(&f, j, half, 32 + row % 32, h));
				amax = fmaxf(amax, fabsf(x[h]));
			}
			float s = fmaxf(amax, 1e-8f) / 127.0f;
			assert_true(sc[j * 64 + row] == s);
			for (int64_t h = 0; h < HID; h++) {
				float v = rintf(x[h] / s);
				v = v > 127 ? 127 : v < -127 ? -127 : v;
				assert_int_equal(q[(j * 64 + row) * HID + h], (int)v);
			}
		}
	fx_close(&f);
	l.quant = WT_QUANT_FP8_BLOCK;
	fx_open_l(&f, tm_llama4(), L4_OK, &l, false);
	shp(&f, 0, W13 "_scale", 3, 4, 1, 2);
	shp(&f, 0, W2 "_scale", 3, 4, 2, 1);
	fx_close(&f);
	l.tp_size = 1;
	l.ep_size = 2;
	l.quant = WT_QUANT_INT4_GROUP;
	l.group_size = 32;
	fx_open_l(&f, tm_llama4(), L4_OK, &l, false);
	shp(&f, 1, W13, 3, 2, 128, HID / 8);
	shp(&f, 1, W2 "_scale", 3, 2, HID, 2);
	fx_close(&f);
}

/* Llama4ForCausalLM: the same language model under model.* / lm_head.weight. */
static void test_llama4_text(void **state)
{
	(void)state;
	tm_model *m = tm_new(SEED, WT_BF16);
	l4_text(m, 1, "");
	fx f;
	fx_open(&f, m,
	        "{\"architectures\":[\"Llama4ForCausalLM\"],\"model_type\":\"llama4_text\","
	        "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	        "\"head_dim\":32,\"vocab_size\":1003,\"num_hidden_layers\":2,"
	        "\"intermediate_size\":64," L4_TXT_OK "}",
	        2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "llama4_text");
	shp(&f, 1, "model.layers.1.feed_forward.experts.w13_weight", 3, 4, 64, HID);
	shp(&f, 1, "model.layers.0.feed_forward.gate_up_proj.weight", 2, 192, HID, 0);
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	fx_close(&f);
}

static void test_llama4_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}};
	coverage(tm_llama4(), L4_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void l4_refused(tm_model *m, const char *cfg, int code, const char *a, const char *b)
{
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, cfg, &err), code);
	printf("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, a));
	assert_non_null(strstr(err.msg, b));
}

/* Which layers are MoE follows moe_layers, else interleave_moe_layer_step. */
static void test_llama4_moe_layers(void **state)
{
	(void)state;
#define L4_ML(x)                                                                                   \
	L4_CFG(L4_TEXT("\"num_local_experts\":4,\"intermediate_size_mlp\":192," x), L4_VIS_OK, "")
	/* moe_layers [0] (the step ignored): layer 0 MoE, layer 1 dense */
	fx f;
	tm_model *m = tm_new(SEED, WT_BF16);
	l4_text(m, 0, "language_model.");
	l4_vision(m);
	fx_open(&f, m, L4_ML("\"moe_layers\":[0, 7, -1],\"interleave_moe_layer_step\":2"), 2, 1, 0,
	        false);
	shp(&f, 0, L0 "feed_forward.experts.w13_weight", 3, 4, 64, HID);
	shp(&f, 0, L1 "feed_forward.gate_up_proj.weight", 2, 192, HID, 0);
	fx_close(&f);
	/* the fixture's layer 1 experts under moe_layers [0] are unknown tensors */
	l4_refused(tm_llama4(), L4_ML("\"moe_layers\":[0]"), WT_EUNSUPPORTED, L0 "feed_forward.",
	           "unknown");
	/* step 1 (Scout): every layer MoE, so layer 0's dense MLP is unknown */
	l4_refused(tm_llama4(), L4_ML("\"interleave_moe_layer_step\":1"), WT_EUNSUPPORTED,
	           L0 "feed_forward.", "unknown");
	/* step 2 without the key: the default step 1 */
	l4_refused(tm_llama4(), L4_ML("\"rope_theta\":500000"), WT_EUNSUPPORTED, L0 "feed_forward.",
	           "unknown");
	/* moe_layers [] is no MoE layer at all */
	l4_refused(tm_llama4(), L4_ML("\"moe_layers\":[]"), WT_EUNSUPPORTED, FF1, "unknown");
	/* a step of 0 is no range() */
	l4_refused(tm_llama4(), L4_ML("\"interleave_moe_layer_step\":0"), WT_ECORRUPT,
	           "interleave_moe_layer_step", ">= 1");
#undef L4_ML
}

static void test_llama4_errors(void **state)
{
	(void)state;
	/* a missing tensor is named */
	tm_model *m = tm_llama4();
	tm_remove(m, FF1 "shared_expert.down_proj.weight");
	l4_refused(m, L4_OK, WT_ENOTFOUND, FF1 "shared_expert.down_proj.weight", "missing");
	m = tm_llama4();
	tm_remove(m, VB "self_attn.k_proj.bias");
	l4_refused(m, L4_OK, WT_ENOTFOUND, VB "self_attn.k_proj.bias", "missing");
	/* experts in nn.Linear orientation ([E, 2I, hid]) are not Llama 4's stacks */
	m = tm_llama4();
	tm_remove(m, GU);
	tm_add3(m, GU, 4, 2 * IE, HID);
	l4_refused(m, L4_OK, WT_ESHAPE, GU, "shape");
	/* the dense MLP's size is intermediate_size_mlp, not intermediate_size */
	l4_refused(tm_llama4(),
	           L4_CFG(L4_TEXT("\"num_local_experts\":4,\"interleave_moe_layer_step\":2,"
	                          "\"intermediate_size_mlp\":64"),
	                  L4_VIS_OK, ""),
	           WT_ESHAPE, L0 "feed_forward.", "shape");
	/* sizes left out take Llama4TextConfig's defaults (intermediate_size_mlp 16384,
	 * num_local_experts 16), as in transformers: this checkpoint's are refused by shape */
	l4_refused(tm_llama4(),
	           L4_CFG(L4_TEXT("\"num_local_experts\":4,\"interleave_moe_layer_step\":2"),
	                  L4_VIS_OK, ""),
	           WT_ESHAPE, L0 "feed_forward.", "16384");
	l4_refused(tm_llama4(),
	           L4_CFG(L4_TEXT("\"interleave_moe_layer_step\":2,\"intermediate_size_mlp\":192"),
	                  L4_VIS_OK, ""),
	           WT_ESHAPE, "experts", "[16, ");
	/* vision: projector sizes that disagree, heads not dividing the width, a block past
	 * num_hidden_layers, an unknown tensor, and no vision_config */
	l4_refused(tm_llama4(),
	           L4_CFG(L4_TEXT(L4_TXT_OK),
	                  L4_VIS(",\"projector_output_dim\":64,\"num_attention_heads\":4"), ""),
	           WT_ECORRUPT, "projector_output_dim 64", "projector_input_dim 128");
	l4_refused(tm_llama4(),
	           L4_CFG(L4_TEXT(L4_TXT_OK),
	                  L4_VIS(",\"projector_output_dim\":128,\"num_attention_heads\":3"), ""),
	           WT_ECORRUPT, "num_attention_heads 3", "64");
	m = tm_llama4();
	tm_add2(m, "vision_model.model.layers.1.mlp.fc2.bias", 64, 0);
	l4_refused(m, L4_OK, WT_ESHAPE, "vision_model.model.layers.1.mlp.fc2.bias",
	           "vision_config.num_hidden_layers");
	m = tm_llama4();
	tm_add2(m, "vision_model.model.layers.0.self_attn.q_norm.weight", 64, 0);
	l4_refused(m, L4_OK, WT_EUNSUPPORTED, "self_attn.q_norm.weight", "llama4");
	m = tm_llama4();
	tm_add2(m, L1 "self_attn.q_proj.bias", 256, 0);
	l4_refused(m, L4_OK, WT_EUNSUPPORTED, L1 "self_attn.q_proj.bias", "llama4");
	l4_refused(tm_llama4(), L4_CFG(L4_TEXT(L4_TXT_OK), "\"x\":1", ""), WT_ECORRUPT,
	           "vision_config", "Llama4ForConditionalGeneration");
	/* Maverick's FP8 release (fbgemm_fp8) is read: tests/test_shardmap_fbgemm.c */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_llama4_tp2),        cmocka_unit_test(test_llama4_vision),
	    cmocka_unit_test(test_llama4_ep),         cmocka_unit_test(test_llama4_quant),
	    cmocka_unit_test(test_llama4_text),       cmocka_unit_test(test_llama4_coverage),
	    cmocka_unit_test(test_llama4_moe_layers), cmocka_unit_test(test_llama4_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
