/*
 * test_shardmap_qwen3vl.c — Qwen3-VL (Qwen3VLForConditionalGeneration) and Qwen3-VL-MoE
 * (Qwen3VLMoeForConditionalGeneration) in the released layout (model.language_model.*,
 * model.visual.*, lm_head.weight) served under Qwen2-VL's runtime names (model.layers.*,
 * visual.*): Qwen3's attention (fused q/k/v, per-head q/k norms replicated), the MoE
 * layers' bmm stacks gate_up_proj [E, hid, 2*Ie] (gate the first Ie columns) / down_proj
 * [E, Ie, hid] cut transposed into w13 / w2, the dense layers of mlp_only_layers, and the
 * vision tower (qkv by heads, proj and every linear_fc2 by columns, every linear_fc1 by
 * rows with its bias; norms, patch embed, pos_embed and row-parallel biases replicated)
 * with its merger and deepstack mergers. Hand-computed slices at TP 2, EP 2, TP 2 x EP 2
 * up_gate and int8, coverage over several layouts, the class defaults and the refusals.
 * Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0013ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* Text: hid 128, H 4, KV 2, head_dim 48 (q 192 rows, k / v 96), I 256, V 1000, L 2;
 * MoE: layer 0 dense (mlp_only_layers), layer 1 4 experts of 32. Vision: width 64, 4
 * heads, MLP 128, 2 blocks, 4 x 4 patches of 2 frames, merger 64 x 2^2 = 256, 16
 * positions, deepstack after blocks 0 and 1. */
#define HID 128
#define HD  48
#define IE  32
#define VE  64
#define VM  256
#define MROPE                                                                                      \
	"\"rope_scaling\":{\"mrope_interleaved\":true,\"mrope_section\":[8,8,8],"                  \
	"\"rope_type\":\"default\"}"
#define Q3_TEXT(mt, extra)                                                                         \
	"\"text_config\":{\"model_type\":\"" mt "\",\"hidden_size\":128,"                          \
	"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"head_dim\":48,"                     \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define Q3_VIS(extra)                                                                              \
	"\"vision_config\":{\"depth\":2,\"hidden_size\":64,\"intermediate_size\":128,"             \
	"\"patch_size\":4,\"in_channels\":3,\"spatial_merge_size\":2,"                             \
	"\"num_position_embeddings\":16" extra "}"
/* num_heads, temporal_patch_size, out_hidden_size as the checkpoint has them */
#define Q3_V      ",\"num_heads\":4,\"temporal_patch_size\":2,\"out_hidden_size\":128"
#define Q3_VIS_OK Q3_VIS(Q3_V ",\"deepstack_visual_indexes\":[0,1]")
#define Q3_CFG(arch, mt, text, vis)                                                                \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\"," text "," vis "}"
#define Q3D(text, vis)                                                                             \
	Q3_CFG("Qwen3VLForConditionalGeneration", "qwen3_vl", Q3_TEXT("qwen3_vl_text", text), vis)
#define Q3M(text, vis)                                                                             \
	Q3_CFG("Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe",                               \
	       Q3_TEXT("qwen3_vl_moe_text", text), vis)
#define Q3M_TXT ",\"num_experts\":4,\"num_experts_per_tok\":2,\"moe_intermediate_size\":32"
#define Q3D_OK  Q3D("," MROPE, Q3_VIS_OK)
#define Q3M_OK  Q3M(Q3M_TXT ",\"mlp_only_layers\":[0]," MROPE, Q3_VIS_OK)
#define LM      "model.language_model.layers."
#define R1      "model.layers.1." /* runtime */
#define GU      LM "1.mlp.experts.gate_up_proj"
#define DN      LM "1.mlp.experts.down_proj"
#define W13     R1 "mlp.experts.w13_weight"
#define W2      R1 "mlp.experts.w2_weight"
#define VB      "model.visual.blocks.1."
#define RVB     "visual.blocks.1."

static void tm_add3(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c)
{
	tm_add(m, name, WT_DTYPE_INVALID, 3, a, b, c);
}

/* A Linear of the tower under the released prefix: weight [a, b], bias [a]. */
static void vlin(tm_model *m, const char *mod, int64_t a, int64_t b)
{
	char n[200];
	snprintf(n, sizeof(n), "model.visual.%s.weight", mod);
	tm_add2(m, n, a, b);
	snprintf(n, sizeof(n), "model.visual.%s.bias", mod);
	tm_add2(m, n, a, 0);
}

/* A LayerNorm of the tower over d: weight and bias. */
static void vln(tm_model *m, const char *mod, int64_t d)
{
	char n[200];
	snprintf(n, sizeof(n), "model.visual.%s.weight", mod);
	tm_add2(m, n, d, 0);
	snprintf(n, sizeof(n), "model.visual.%s.bias", mod);
	tm_add2(m, n, d, 0);
}

/* Qwen3VLVisionModel with n_deep deepstack mergers. */
static void q3_vision(tm_model *m, int n_deep)
{
	/* Conv3d [64, 3, 2, 4, 4]: added as [64, 6, 16], then given its five dims */
	tm_add3(m, "model.visual.patch_embed.proj.weight", VE, 3 * 2, 4 * 4);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 5;
	d->shape[1] = 3;
	d->shape[2] = 2;
	d->shape[3] = 4;
	d->shape[4] = 4;
	tm_add2(m, "model.visual.patch_embed.proj.bias", VE, 0);
	tm_add2(m, "model.visual.pos_embed.weight", 16, VE);
	char b[100];
	for (int i = 0; i < 2; i++) {
		static const struct {
			const char *n;
			int64_t a, b;
		} lin[] = {{"attn.qkv", 3 * VE, VE},
		           {"attn.proj", VE, VE},
		           {"mlp.linear_fc1", 128, VE},
		           {"mlp.linear_fc2", VE, 128}};
		for (size_t k = 0; k < 4; k++) {
			snprintf(b, sizeof(b), "blocks.%d.%s", i, lin[k].n);
			vlin(m, b, lin[k].a, lin[k].b);
		}
		snprintf(b, sizeof(b), "blocks.%d.norm1", i);
		vln(m, b, VE);
		snprintf(b, sizeof(b), "blocks.%d.norm2", i);
		vln(m, b, VE);
	}
	vln(m, "merger.norm", VE);
	vlin(m, "merger.linear_fc1", VM, VM);
	vlin(m, "merger.linear_fc2", HID, VM);
	for (int k = 0; k < n_deep; k++) {
		snprintf(b, sizeof(b), "deepstack_merger_list.%d.norm", k);
		vln(m, b, VM);
		snprintf(b, sizeof(b), "deepstack_merger_list.%d.linear_fc1", k);
		vlin(m, b, VM, VM);
		snprintf(b, sizeof(b), "deepstack_merger_list.%d.linear_fc2", k);
		vlin(m, b, HID, VM);
	}
}

/* The language model (moe: layer 1 the sparse block) under the released prefix, then
 * the tower. */
static tm_model *tm_q3(int moe, int n_deep)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 4, 2, HD, HID, 0, 1);
		if (!moe || i == 0) {
			tm_mlp(m, i, "mlp.", 256, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, 4, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.experts.gate_up_proj");
		tm_add3(m, b, 4, HID, 2 * IE);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.experts.down_proj");
		tm_add3(m, b, 4, IE, HID);
	}
	for (size_t k = 0; k < m->n; k++) /* model.X -> model.language_model.X */
		if (strncmp(m->name[k], "model.", 6) == 0) {
			char nm[sizeof(m->name[0])];
			snprintf(nm, sizeof(nm), "model.language_model.%s", m->name[k] + 6);
			memcpy(m->name[k], nm, sizeof(nm));
		}
	q3_vision(m, n_deep);
	return m;
}

static const uint8_t *srow(const fx *f, const char *name, int64_t r0)
{
	size_t rowb;
	return src_rows(f, name, r0, &rowb);
}

/* Rank r's rt [N, n] (BF16) is columns [a, a+n) of src [N, K]. */
static void cols_are(const fx *f, uint32_t r, const char *rt, const char *src, int64_t N, int64_t K,
                     int64_t a, int64_t n)
{
	const uint8_t *s = srow(f, src, 0), *o = out_bytes(f, r, rt);
	for (int64_t row = 0; row < N; row++)
		assert_memory_equal(o + (size_t)(row * n) * 2, s + (size_t)(row * K + a) * 2,
		                    (size_t)n * 2);
}

/* Expert j's gate (half 0) or up (half 1) row k as transformers applies it: column
 * half*IE + k of gate_up_proj[j] ([hid, 2*IE]), element h. */
static uint16_t gu_at(const fx *f, int64_t j, int half, int64_t k, int64_t h)
{
	const uint16_t *s = (const uint16_t *)srow(f, GU, 0);
	return s[(j * HID + h) * 2 * IE + half * IE + k];
}

/* The bmm expert stacks and the rank's w13 / w2 (test_shardmap_experts.h). */
static const fx_bmm BMM = {GU, DN, W13, W2, HID, IE};

/* No rank tensor keeps a released name. */
static void runtime_names_only(const fx *f)
{
	for (uint32_t r = 0; r < shardmap_n_ranks(f->p); r++)
		for (size_t k = 0; k < shardmap_rank_n_tensors(f->p, r); k++) {
			const char *n = shardmap_rank_tensor(f->p, r, k)->name;
			if (strstr(n, "language_model") || strncmp(n, "model.visual.", 13) == 0)
				fail_msg("rank %u: released name '%s'", r, n);
		}
}

/* The dense family's language model at TP 2: rank 1 q heads 2..3 (rows 96..191), kv head
 * 1 (rows 48..95); q/k norms [48] whole; MLP halves; the vocabulary padded to 1024. */
static void test_q3vl_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_q3(0, 2), Q3D_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "qwen3_vl");
	runtime_names_only(&f);
	const char *a1 = LM "1.self_attn.", *qkv = R1 "self_attn.qkv_proj.weight";
	char q[120], k[120], v[120];
	snprintf(q, sizeof(q), "%sq_proj.weight", a1);
	snprintf(k, sizeof(k), "%sk_proj.weight", a1);
	snprintf(v, sizeof(v), "%sv_proj.weight", a1);
	shp(&f, 1, qkv, 2, 96 + 2 * 48, HID, 0);
	rows_are(&f, 1, qkv, 0, q, 96, 96);
	rows_are(&f, 1, qkv, 96, k, 48, 48);
	rows_are(&f, 1, qkv, 144, v, 48, 48);
	rows_are(&f, 0, qkv, 96, k, 0, 48);
	cols_are(&f, 1, R1 "self_attn.o_proj.weight", LM "1.self_attn.o_proj.weight", HID, 192, 96,
	         96);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, R1 "self_attn.q_norm.weight", 1, HD, 0, 0);
		rows_are(&f, r, R1 "self_attn.q_norm.weight", 0, LM "1.self_attn.q_norm.weight", 0,
		         HD);
		rows_are(&f, r, R1 "self_attn.k_norm.weight", 0, LM "1.self_attn.k_norm.weight", 0,
		         HD);
		rows_are(&f, r, R1 "post_attention_layernorm.weight", 0,
		         LM "1.post_attention_layernorm.weight", 0, HID);
	}
	const char *gu = R1 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 256, HID, 0);
	rows_are(&f, 1, gu, 0, LM "1.mlp.gate_proj.weight", 128, 128);
	rows_are(&f, 1, gu, 128, LM "1.mlp.up_proj.weight", 128, 128);
	cols_are(&f, 0, R1 "mlp.down_proj.weight", LM "1.mlp.down_proj.weight", HID, 256, 0, 128);
	/* untied: lm_head and the embedding by padded vocabulary rows (1024 / 2) */
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	rows_are(&f, 0, "model.embed_tokens.weight", 0, "model.language_model.embed_tokens.weight",
	         0, 512);
	fx_close(&f);
}

/* The tower at TP 2: qkv by heads (rank 1: heads 2..3 of q, k and v, 32 rows each, bias
 * alike), proj and linear_fc2 by columns, linear_fc1 rows with its bias; the mergers' fc1
 * by rows of 256 with its bias, fc2 by columns; the rest whole on every rank. */
static void test_q3vl_vision(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_q3(1, 2), Q3M_OK, 2, 1, 0, true);
	const char *qkv = RVB "attn.qkv.weight", *qkvb = RVB "attn.qkv.bias";
	shp(&f, 1, qkv, 2, 96, VE, 0);
	for (int p = 0; p < 3; p++) {
		rows_are(&f, 1, qkv, 32 * p, VB "attn.qkv.weight", p * VE + 32, 32);
		rows_are(&f, 1, qkvb, 32 * p, VB "attn.qkv.bias", p * VE + 32, 32);
		rows_are(&f, 0, qkv, 32 * p, VB "attn.qkv.weight", p * VE, 32);
	}
	shp(&f, 1, RVB "attn.proj.weight", 2, VE, 32, 0);
	cols_are(&f, 1, RVB "attn.proj.weight", VB "attn.proj.weight", VE, VE, 32, 32);
	shp(&f, 1, RVB "mlp.linear_fc1.weight", 2, 64, VE, 0);
	rows_are(&f, 1, RVB "mlp.linear_fc1.weight", 0, VB "mlp.linear_fc1.weight", 64, 64);
	rows_are(&f, 1, RVB "mlp.linear_fc1.bias", 0, VB "mlp.linear_fc1.bias", 64, 64);
	cols_are(&f, 1, RVB "mlp.linear_fc2.weight", VB "mlp.linear_fc2.weight", VE, 128, 64, 64);
	static const char *const mergers[][2] = {
	    {"visual.merger.", "model.visual.merger."},
	    {"visual.deepstack_merger_list.1.", "model.visual.deepstack_merger_list.1."}};
	char rt[120], src[120];
	for (size_t k = 0; k < 2; k++) {
		snprintf(rt, sizeof(rt), "%slinear_fc1.weight", mergers[k][0]);
		snprintf(src, sizeof(src), "%slinear_fc1.weight", mergers[k][1]);
		shp(&f, 1, rt, 2, 128, VM, 0);
		rows_are(&f, 1, rt, 0, src, 128, 128);
		snprintf(rt, sizeof(rt), "%slinear_fc1.bias", mergers[k][0]);
		snprintf(src, sizeof(src), "%slinear_fc1.bias", mergers[k][1]);
		rows_are(&f, 0, rt, 0, src, 0, 128);
		snprintf(rt, sizeof(rt), "%slinear_fc2.weight", mergers[k][0]);
		snprintf(src, sizeof(src), "%slinear_fc2.weight", mergers[k][1]);
		shp(&f, 1, rt, 2, HID, 128, 0);
		cols_are(&f, 1, rt, src, HID, VM, 128, 128);
	}
	static const struct {
		const char *rt;
		int64_t rows;
	} repl[] = {{"visual.patch_embed.proj.bias", VE},
	            {"visual.pos_embed.weight", 16},
	            {RVB "norm1.weight", VE},
	            {RVB "norm2.bias", VE},
	            {RVB "attn.proj.bias", VE},
	            {RVB "mlp.linear_fc2.bias", VE},
	            {"visual.merger.norm.weight", VE},
	            {"visual.merger.linear_fc2.bias", HID},
	            {"visual.deepstack_merger_list.0.norm.bias", VM},
	            {"visual.deepstack_merger_list.0.linear_fc2.bias", HID}};
	for (uint32_t r = 0; r < 2; r++)
		for (size_t k = 0; k < sizeof(repl) / sizeof(repl[0]); k++) {
			char s[120];
			snprintf(s, sizeof(s), "model.%s", repl[k].rt);
			rows_are(&f, r, repl[k].rt, 0, s, 0, repl[k].rows);
		}
	/* the Conv3d kernel keeps its five dims, whole */
	const sm_out_info *pe = info(&f, 1, "visual.patch_embed.proj.weight");
	assert_int_equal(pe->ndim, 5);
	assert_int_equal(pe->shape[2], 2);
	assert_int_equal(pe->shape[4], 4);
	assert_memory_equal(out_bytes(&f, 1, "visual.patch_embed.proj.weight"),
	                    srow(&f, "model.visual.patch_embed.proj.weight", 0),
	                    (size_t)VE * 3 * 2 * 4 * 4 * 2);
	fx_close(&f);
}

/* The MoE layer: TP 2 splits every expert (Il 16) transposed; EP 2 gives rank 1 experts
 * 2, 3 whole; TP 2 x EP 2 up_gate puts up first; the router whole; layer 0 (in
 * mlp_only_layers) a dense MLP. */
static void test_q3vl_moe(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_q3(1, 2), Q3M_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "qwen3_vl_moe");
	runtime_names_only(&f);
	shp(&f, 1, W13, 3, 4, 32, HID);
	shp(&f, 1, W2, 3, 4, HID, 16);
	for (int64_t j = 0; j < 4; j++) {
		fx_bmm_experts_are(&f, &BMM, 0, j, j, 0, 16, false);
		fx_bmm_experts_are(&f, &BMM, 1, j, j, 16, 16, false);
	}
	for (uint32_t r = 0; r < 2; r++)
		rows_are(&f, r, R1 "mlp.gate.weight", 0, LM "1.mlp.gate.weight", 0, 4);
	rows_are(&f, 1, "model.layers.0.mlp.gate_up_proj.weight", 0, LM "0.mlp.gate_proj.weight",
	         128, 128);
	assert_true(tm_ix(f.p, 0, "model.layers.0.mlp.experts.w13_weight") < 0);
	fx_close(&f);
	fx_open(&f, tm_q3(1, 2), Q3M_OK, 1, 2, 0, true);
	shp(&f, 1, W13, 3, 2, 2 * IE, HID);
	for (int64_t k = 0; k < 2; k++) {
		fx_bmm_experts_are(&f, &BMM, 0, k, k, 0, IE, false);
		fx_bmm_experts_are(&f, &BMM, 1, k, 2 + k, 0, IE, false);
	}
	fx_close(&f);
	fx_open(&f, tm_q3(1, 2), Q3M_OK, 2, 2, 1, true);
	for (int64_t k = 0; k < 2; k++) {
		fx_bmm_experts_are(&f, &BMM, 3, k, 2 + k, 0, IE, true);
		fx_bmm_experts_are(&f, &BMM, 0, k, k, 0, IE, true);
	}
	rows_are(&f, 3, "model.layers.0.mlp.gate_up_proj.weight", 128, LM "0.mlp.up_proj.weight",
	         128, 128);
	fx_close(&f);
}

/* int8-channel at TP 2: each expert quantized from its transposed rows (s = max(amax,
 * 1e-8) / 127, codes rint(x / s)); the vision Linears quantized, the patch embed,
 * pos_embed, router and norms kept BF16. */
static void test_q3vl_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_q3(1, 2), Q3M_OK, &l, true);
	shp(&f, 1, W13 "_scale", 3, 4, 32, 1);
	assert_int_equal(info(&f, 1, W13)->dtype, WT_I8);
	/* rank 1, expert 3, up row 5 (its 21st up row): w13 slot 3 row 16 + 5 */
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13) + (3 * 32 + 16 + 5) * HID;
	float s = ((const float *)out_bytes(&f, 1, W13 "_scale"))[3 * 32 + 16 + 5], amax = 0.0f;
	for (int64_t h = 0; h < HID; h++)
		amax = fmaxf(amax, fabsf(kern_bf16_to_f32(gu_at(&f, 3, 1, 16 + 5, h))));
	assert_true(s == fmaxf(amax, 1e-8f) / 127.0f);
	for (int64_t h = 0; h < HID; h++)
		assert_int_equal(q[h],
		                 (int)rintf(kern_bf16_to_f32(gu_at(&f, 3, 1, 16 + 5, h)) / s));
	assert_int_equal(info(&f, 0, RVB "attn.qkv.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 0, "visual.deepstack_merger_list.0.linear_fc2.weight")->dtype,
	                 WT_I8);
	static const char *const kept[] = {"visual.patch_embed.proj.weight",
	                                   "visual.pos_embed.weight", R1 "mlp.gate.weight",
	                                   "visual.merger.norm.weight", RVB "attn.qkv.bias"};
	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
		assert_int_equal(info(&f, 0, kept[k])->dtype, WT_BF16);
		char sc[120];
		snprintf(sc, sizeof(sc), "%s_scale", kept[k]);
		assert_true(tm_ix(f.p, 0, sc) < 0);
	}
	fx_close(&f);
}

/* Every element of every tensor once per its replication, over TP / EP layouts. */
static void test_q3vl_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {1, 4}, {2, 2}, {1, 3}};
	coverage(tm_q3(1, 2), Q3M_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(tm_q3(0, 2), Q3D_OK, 2, dense, sizeof(dense) / sizeof(dense[0]));
}

/* Plan m under cfg at TP tp: WT_OK or the error, whose message must hold `want`. */
static void refused(tm_model *m, const char *cfg, int code, const char *want)
{
	wt_errbuf err = {0};
	int rv = plan_err(m, cfg, &err);
	if (rv != code || strstr(err.msg, want) == NULL)
		fail_msg("want %d with '%s', got %d: %s", code, want, rv, err.msg);
}

static void test_q3vl_refusals(void **state)
{
	(void)state;
	/* the tower's config */
	refused(tm_q3(0, 2),
	        Q3_CFG("Qwen3VLForConditionalGeneration", "qwen3_vl",
	               Q3_TEXT("qwen3_vl_text", "," MROPE), "\"x\":1"),
	        WT_ECORRUPT, "needs vision_config");
	refused(tm_q3(0, 2),
	        Q3D("," MROPE,
	            Q3_VIS(",\"num_heads\":4,\"temporal_patch_size\":2,\"out_hidden_size\":96,"
	                   "\"deepstack_visual_indexes\":[0,1]")),
	        WT_ECORRUPT, "out_hidden_size 96 must equal the language model's hidden_size 128");
	refused(tm_q3(0, 2), Q3D("," MROPE, Q3_VIS(Q3_V ",\"deepstack_visual_indexes\":[0,2]")),
	        WT_ECORRUPT, "deepstack_visual_indexes[1] = 2 is not a vision block (depth 2)");
	refused(tm_q3(0, 2), Q3D("," MROPE, Q3_VIS(Q3_V ",\"deepstack_visual_indexes\":[0,1,1]")),
	        WT_ECORRUPT, "deepstack_visual_indexes has 3 entries but depth is 2");
	/* one merger per deepstack index: a missing one, an extra one */
	refused(tm_q3(0, 1), Q3D_OK, WT_ENOTFOUND,
	        "model.visual.deepstack_merger_list.1.norm.weight': missing");
	refused(tm_q3(0, 2), Q3D("," MROPE, Q3_VIS(Q3_V ",\"deepstack_visual_indexes\":[1]")),
	        WT_ESHAPE,
	        "deepstack merger 1 but config.json vision_config.deepstack_visual_indexes");
	/* absent: Qwen3VLVisionConfig's three ([8, 16, 24]), beyond this depth */
	refused(tm_q3(0, 2), Q3D("," MROPE, Q3_VIS(Q3_V)), WT_ENOTFOUND,
	        "deepstack_merger_list.2.norm.weight': missing");
	/* MRoPE: required, three sections summing to head_dim / 2 */
	refused(tm_q3(0, 2), Q3D("", Q3_VIS_OK), WT_ECORRUPT,
	        "Qwen3-VL needs text_config.rope_scaling.mrope_section");
	refused(tm_q3(0, 2),
	        Q3D(",\"rope_scaling\":{\"mrope_section\":[16,20,20],\"rope_type\":\"default\"}",
	            Q3_VIS_OK),
	        WT_ECORRUPT,
	        "3 entries summing to 56 but needs 3 (T, H, W) summing to head_dim/2 = 24");
	/* the vision heads split the width; a patch embed of another kernel */
	refused(tm_q3(0, 2),
	        Q3D("," MROPE,
	            Q3_VIS(",\"num_heads\":5,\"temporal_patch_size\":2,\"out_hidden_size\":128,"
	                   "\"deepstack_visual_indexes\":[0,1]")),
	        WT_ECORRUPT, "num_heads 5 does not divide hidden_size 64");
	refused(tm_q3(0, 2),
	        Q3D("," MROPE,
	            Q3_VIS(",\"num_heads\":4,\"temporal_patch_size\":1,\"out_hidden_size\":128,"
	                   "\"deepstack_visual_indexes\":[0,1]")),
	        WT_ESHAPE, "patch_embed.proj.weight");
	/* experts stored as nn.Linear rows [E, 2*Ie, hid] are not the bmm operands */
	tm_model *m = tm_q3(1, 2);
	tm_remove(m, GU);
	tm_add3(m, GU, 4, 2 * IE, HID);
	refused(m, Q3M_OK, WT_ESHAPE, "mlp.experts.gate_up_proj");
	/* experts in a layer mlp_only_layers makes dense */
	refused(tm_q3(1, 2), Q3M(Q3M_TXT ",\"mlp_only_layers\":[0,1]," MROPE, Q3_VIS_OK),
	        WT_EUNSUPPORTED, "unknown tensor");
	/* two name layouts in one checkpoint */
	m = tm_q3(0, 2);
	tm_add2(m, "model.layers.0.input_layernorm.weight", HID, 0);
	refused(m, Q3D_OK, WT_EUNSUPPORTED, "mixes two name layouts");
	/* TP 4 > a tower of 2 heads (the language model's 4 split) */
	fx f;
	char *dir = tu_mkdtemp("q3vl");
	m = tm_q3(0, 2);
	assert_int_equal(
	    tm_write(m, dir,
	             Q3D("," MROPE, Q3_VIS(",\"num_heads\":2,\"temporal_patch_size\":2,"
	                                   "\"out_hidden_size\":128,"
	                                   "\"deepstack_visual_indexes\":[0,1]"))),
	    0);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 4;
	wt_errbuf err = {0};
	int rv = tm_plan(dir, &l, &f.s, &f.c, &f.p, &err);
	print_message("%s\n", err.msg);
	assert_int_equal(rv, WT_ELAYOUT);
	assert_non_null(strstr(err.msg, "tp_size 4 does not divide vision_config.num_heads 2"));
	tm_close(f.s, f.c, f.p);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
}

/* Keys a saved text_config leaves out take Qwen3VLTextConfig's / Qwen3VLMoeTextConfig's
 * defaults (not the loader's generic ones: KV 32 / 16, not num_attention_heads). */
static void test_q3vl_defaults(void **state)
{
	(void)state;
	static const char dense[] = "{\"architectures\":[\"Qwen3VLForConditionalGeneration\"],"
	                            "\"model_type\":\"qwen3_vl\",\"text_config\":{"
	                            "\"num_attention_heads\":16},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(dense, strlen(dense), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_attention_heads, 16);
	assert_int_equal(c.num_key_value_heads, 32);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.intermediate_size, 22016);
	assert_int_equal(c.vocab_size, 151936);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.v_num_pos, -1);
	assert_false(c.has_deepstack);
	ckpt_config_clear(&c);
	static const char moe[] = "{\"architectures\":[\"Qwen3VLMoeForConditionalGeneration\"],"
	                          "\"model_type\":\"qwen3_vl_moe\",\"text_config\":{\"model_type\":"
	                          "\"qwen3_vl_moe_text\",\"hidden_size\":1024},"
	                          "\"vision_config\":{\"deepstack_visual_indexes\":[]}}";
	assert_int_equal(ckpt_config_parse(moe, strlen(moe), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 1024);
	assert_int_equal(c.num_attention_heads, 16);
	assert_int_equal(c.num_key_value_heads, 16);
	assert_int_equal(c.head_dim, 64); /* hidden_size / heads: the MoE class has no 128 */
	assert_int_equal(c.num_experts, 60);
	assert_int_equal(c.moe_intermediate_size, 1408);
	assert_int_equal(c.intermediate_size, 5632);
	assert_int_equal(c.num_hidden_layers, 24);
	assert_true(c.has_deepstack);
	assert_int_equal(c.n_deepstack, 0);
	ckpt_config_clear(&c);
	static const char bad[] =
	    "{\"architectures\":[\"Qwen3VLForConditionalGeneration\"],"
	    "\"model_type\":\"qwen3_vl\",\"text_config\":{},\"vision_config\":{"
	    "\"deepstack_visual_indexes\":[8, \"16\"]}}";
	assert_int_equal(ckpt_config_parse(bad, strlen(bad), &c, &err), WT_ECORRUPT);
	print_message("%s\n", err.msg);
	assert_non_null(strstr(err.msg, "'deepstack_visual_indexes'[1] is not an integer"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_q3vl_tp2),      cmocka_unit_test(test_q3vl_vision),
	    cmocka_unit_test(test_q3vl_moe),      cmocka_unit_test(test_q3vl_quant),
	    cmocka_unit_test(test_q3vl_coverage), cmocka_unit_test(test_q3vl_refusals),
	    cmocka_unit_test(test_q3vl_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
