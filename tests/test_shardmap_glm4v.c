/*
 * test_shardmap_glm4v.c — GLM-4.1V (Glm4vForConditionalGeneration) and GLM-4.5V
 * (Glm4vMoeForConditionalGeneration) in the released layout (model.language_model.*,
 * model.visual.*, lm_head.weight) served under the runtime names model.layers.* / visual.*
 * (docs/format.md section 2.7, as vLLM's glm4_1v.py loads them): GLM-4-0414's language model
 * (q/k/v with their biases fused by heads, the fused gate_up_proj re-cut, the four norms),
 * GLM-4.5's MoE layers without q/k norms (experts, shared experts, router and correction
 * bias, the MTP layer skipped), and the vision tower: qkv by heads, proj and the MLPs'
 * down_proj by columns, the blocks' and the merger's gate / up merged by rows, the merger's
 * proj by rows; the Conv3d / Conv2d kernels, position table and norms whole. Hand-computed
 * slices at TP 2 and 4, EP 2, int8, coverage over several layouts, the class defaults and
 * the refusals. Seed fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x61a4f1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* Text: hid 128, H 4, KV 2, d 32 (hid / H), I 96, V 1000, L 2; partial rotary 0.5 under
 * MRoPE [2, 3, 3]. MoE: layer 0 dense, layer 1 4 experts of 32 + 1 shared, MTP layer 2.
 * Vision: width 64, 4 heads, 2 blocks, block MLP out_hidden_size 128, merger MLP 256,
 * 4 x 4 patches of 2 frames, 2 x 2 merge, image 16 (16 positions). */
#define HID 128
#define I   96
#define IE  32
#define VE  64
#define VO  128
#define VM  256
#define MROPE                                                                                      \
	"\"partial_rotary_factor\":0.5,\"rope_scaling\":{\"mrope_section\":[2,3,3],"               \
	"\"rope_type\":\"default\"}"
#define G_TEXT(mt, extra)                                                                          \
	"\"text_config\":{\"model_type\":\"" mt "\",\"hidden_size\":128,"                          \
	"\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":96,"            \
	"\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define G_VIS(extra)                                                                               \
	"\"vision_config\":{\"depth\":2,\"hidden_size\":64,\"intermediate_size\":256,"             \
	"\"patch_size\":4,\"in_channels\":3,\"spatial_merge_size\":2,\"temporal_patch_size\":"     \
	"2" extra "}"
#define G_V      ",\"num_heads\":4,\"out_hidden_size\":128"
#define G_VI     G_V ",\"image_size\":16"
#define G_VIS_OK G_VIS(G_VI)
#define G_CFG(arch, mt, text, vis)                                                                 \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\"," text "," vis "}"
#define GD(text, vis)                                                                              \
	G_CFG("Glm4vForConditionalGeneration", "glm4v", G_TEXT("glm4v_text", text), vis)
#define GM(text, vis)                                                                              \
	G_CFG("Glm4vMoeForConditionalGeneration", "glm4v_moe", G_TEXT("glm4v_moe_text", text), vis)
#define GM_TXT                                                                                     \
	",\"n_routed_experts\":4,\"num_experts_per_tok\":2,\"moe_intermediate_size\":32,"          \
	"\"n_shared_experts\":1,\"first_k_dense_replace\":1,\"num_nextn_predict_layers\":1"
#define GD_OK GD("," MROPE, G_VIS_OK)
#define GM_OK GM(GM_TXT "," MROPE, G_VIS_OK)
#define LM    "model.language_model.layers."
#define R1    "model.layers.1." /* runtime */
#define VB    "model.visual.blocks.1."
#define RVB   "visual.blocks.1."
#define MG    "model.visual.merger."
#define RMG   "visual.merger."
#define W13   R1 "mlp.experts.w13_weight"
#define W2    R1 "mlp.experts.w2_weight"

/* Layer 1's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, LM "1.mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

static void tm_addn(tm_model *m, const char *name, int nd, const int64_t *shape)
{
	/* added as [a, b, c], then given its nd dims (a Conv kernel) */
	int64_t rest = 1;
	for (int k = 2; k < nd; k++)
		rest *= shape[k];
	tm_add(m, name, WT_DTYPE_INVALID, 3, shape[0], shape[1], rest);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = nd;
	for (int k = 0; k < nd; k++)
		d->shape[k] = shape[k];
}

/* Glm4vVisionModel under the released prefix (qkv_bias: a qkv bias in block 1 too). */
static void g_vision(tm_model *m, int qkv_bias)
{
	static const int64_t pe[] = {VE, 3, 2, 4, 4}, ds[] = {VO, VE, 2, 2};
	tm_addn(m, "model.visual.patch_embed.proj.weight", 5, pe);
	tm_add2(m, "model.visual.patch_embed.proj.bias", VE, 0);
	tm_add2(m, "model.visual.post_conv_layernorm.weight", VE, 0);
	tm_add2(m, "model.visual.embeddings.position_embedding.weight", 16, VE);
	char b[120];
	for (int i = 0; i < 2; i++) {
		static const struct {
			const char *n;
			int64_t a, b;
		} t[] = {{"norm1.weight", VE, 0},          {"norm2.weight", VE, 0},
		         {"attn.qkv.weight", 3 * VE, VE},  {"attn.proj.weight", VE, VE},
		         {"mlp.gate_proj.weight", VO, VE}, {"mlp.up_proj.weight", VO, VE},
		         {"mlp.down_proj.weight", VE, VO}};
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			snprintf(b, sizeof(b), "model.visual.blocks.%d.%s", i, t[k].n);
			tm_add2(m, b, t[k].a, t[k].b);
		}
	}
	if (qkv_bias)
		tm_add2(m, VB "attn.qkv.bias", 3 * VE, 0);
	tm_add2(m, "model.visual.post_layernorm.weight", VE, 0);
	tm_addn(m, "model.visual.downsample.weight", 4, ds);
	tm_add2(m, "model.visual.downsample.bias", VO, 0);
	tm_add2(m, MG "proj.weight", VO, VO);
	tm_add2(m, MG "post_projection_norm.weight", VO, 0);
	tm_add2(m, MG "post_projection_norm.bias", VO, 0);
	tm_add2(m, MG "gate_proj.weight", VM, VO);
	tm_add2(m, MG "up_proj.weight", VM, VO);
	tm_add2(m, MG "down_proj.weight", VO, VM);
}

/* model.X -> model.language_model.X for every tensor so far */
static void to_released(tm_model *m)
{
	for (size_t k = 0; k < m->n; k++)
		if (strncmp(m->name[k], "model.", 6) == 0) {
			char nm[sizeof(m->name[0])];
			snprintf(nm, sizeof(nm), "model.language_model.%s", m->name[k] + 6);
			memcpy(m->name[k], nm, sizeof(nm));
		}
}

/* GLM-4.1V: the GLM-4-0414 language model, then the tower. */
static tm_model *tm_g4v(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 4, 2, 32, HID, 1, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_self_attn_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_mlp_layernorm.weight");
		tm_add2(m, b, HID, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate_up_proj.weight");
		tm_add2(m, b, 2 * I, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.down_proj.weight");
		tm_add2(m, b, HID, I);
	}
	to_released(m);
	g_vision(m, 0);
	return m;
}

/* GLM-4.5V: layer 0 dense, layer 1 MoE (4 experts, 1 shared, router + correction bias),
 * MTP layer 2 (a MoE decoder layer with its own modules), then the tower. */
static tm_model *tm_g4vm(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, HID, 1);
	char b[200];
	for (int i = 0; i < 3; i++) {
		tm_attn(m, i, 4, 2, 32, HID, 1, 0);
		if (i == 0) {
			tm_mlp(m, i, "mlp.", I, HID);
			continue;
		}
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, 4, HID);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
		tm_add(m, b, WT_F32, 1, 4, 0, 0);
		tm_experts(m, i, "mlp.experts.", 4, IE, HID, "gate_proj", "up_proj", "down_proj");
		tm_mlp(m, i, "mlp.shared_experts.", IE, HID);
	}
	tm_fmt(b, sizeof(b), TM_L, 2, "eh_proj.weight");
	tm_add2(m, b, HID, 2 * HID);
	tm_fmt(b, sizeof(b), TM_L, 2, "enorm.weight");
	tm_add2(m, b, HID, 0);
	to_released(m);
	g_vision(m, 0);
	return m;
}

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

/* The language model at TP 2 and 4: q heads and kv heads by rank (KV 2 < TP 4:
 * replicated), their biases alike, o_proj by columns, gate_up_proj re-cut into
 * [gate_r ; up_r], down_proj by columns, the four norms whole. */
static void test_g4v_text(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_g4v(), GD_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "glm4v");
	runtime_names_only(&f);
	const char *qkv = R1 "self_attn.qkv_proj.weight", *qkvb = R1 "self_attn.qkv_proj.bias";
	shp(&f, 1, qkv, 2, 64 + 2 * 32, HID, 0);
	rows_at(&f, 1, qkv, 0, LM "1.self_attn.q_proj.weight", 64, 64);
	rows_at(&f, 1, qkv, 64, LM "1.self_attn.k_proj.weight", 32, 32);
	rows_at(&f, 1, qkv, 96, LM "1.self_attn.v_proj.weight", 32, 32);
	rows_at(&f, 0, qkv, 64, LM "1.self_attn.k_proj.weight", 0, 32);
	rows_at(&f, 1, qkvb, 0, LM "1.self_attn.q_proj.bias", 64, 64);
	rows_at(&f, 1, qkvb, 96, LM "1.self_attn.v_proj.bias", 32, 32);
	cols_of(&f, 1, 2, R1 "self_attn.o_proj.weight", LM "1.self_attn.o_proj.weight", HID, 128);
	assert_true(tm_ix(f.p, 0, R1 "self_attn.o_proj.bias") < 0);
	const char *gu = R1 "mlp.gate_up_proj.weight", *sgu = LM "1.mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, I, HID, 0);
	rows_at(&f, 1, gu, 0, sgu, 48, 48);      /* gate rows 48..95 */
	rows_at(&f, 1, gu, 48, sgu, I + 48, 48); /* up rows 48..95 */
	rows_at(&f, 0, gu, 48, sgu, I, 48);
	cols_of(&f, 0, 2, R1 "mlp.down_proj.weight", LM "1.mlp.down_proj.weight", HID, I);
	static const char *const norms[] = {"input_layernorm", "post_self_attn_layernorm",
	                                    "post_attention_layernorm", "post_mlp_layernorm"};
	for (uint32_t r = 0; r < 2; r++)
		for (size_t k = 0; k < 4; k++) {
			char rt[120], src[120];
			snprintf(rt, sizeof(rt), R1 "%s.weight", norms[k]);
			snprintf(src, sizeof(src), LM "1.%s.weight", norms[k]);
			rows_are(&f, r, rt, 0, src, 0, HID);
		}
	shp(&f, 1, "lm_head.weight", 2, 512, HID, 0);
	rows_are(&f, 1, "lm_head.weight", 0, "lm_head.weight", 512, 488);
	rows_are(&f, 0, "model.embed_tokens.weight", 0, "model.language_model.embed_tokens.weight",
	         0, 512);
	fx_close(&f);
	/* TP 4: rank 3 q head 3, kv head 1 (KV 2 replicated in pairs), gate / up rows 72..95 */
	fx_open(&f, tm_g4v(), GD_OK, 4, 1, 0, true);
	shp(&f, 3, qkv, 2, 32 + 2 * 32, HID, 0);
	rows_at(&f, 3, qkv, 0, LM "1.self_attn.q_proj.weight", 96, 32);
	rows_at(&f, 3, qkv, 32, LM "1.self_attn.k_proj.weight", 32, 32);
	rows_at(&f, 2, qkv, 64, LM "1.self_attn.v_proj.weight", 32, 32);
	rows_at(&f, 1, qkv, 32, LM "1.self_attn.k_proj.weight", 0, 32);
	rows_at(&f, 3, gu, 0, sgu, 72, 24);
	rows_at(&f, 3, gu, 24, sgu, I + 72, 24);
	cols_of(&f, 3, 4, R1 "mlp.down_proj.weight", LM "1.mlp.down_proj.weight", HID, I);
	fx_close(&f);
}

/* The tower at TP 2 and 4: qkv by heads (16 rows each), proj by columns, the block MLP
 * (out_hidden_size 128 wide) gate / up by rows into gate_up_proj, down_proj by columns;
 * the merger's proj by rows, its gate / up (256) by rows into gate_up_proj, down_proj by
 * columns; everything else whole. */
static void test_g4v_vision(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_g4v(), GD_OK, 2, 1, 0, true);
	const char *qkv = RVB "attn.qkv.weight";
	shp(&f, 1, qkv, 2, 96, VE, 0);
	for (int p = 0; p < 3; p++) {
		rows_at(&f, 1, qkv, 32 * p, VB "attn.qkv.weight", p * VE + 32, 32);
		rows_at(&f, 0, qkv, 32 * p, VB "attn.qkv.weight", p * VE, 32);
	}
	cols_of(&f, 1, 2, RVB "attn.proj.weight", VB "attn.proj.weight", VE, VE);
	const char *gu = RVB "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, VO, VE, 0);
	rows_at(&f, 1, gu, 0, VB "mlp.gate_proj.weight", 64, 64);
	rows_at(&f, 1, gu, 64, VB "mlp.up_proj.weight", 64, 64);
	rows_at(&f, 0, gu, 64, VB "mlp.up_proj.weight", 0, 64);
	cols_of(&f, 1, 2, RVB "mlp.down_proj.weight", VB "mlp.down_proj.weight", VE, VO);
	shp(&f, 1, RMG "proj.weight", 2, 64, VO, 0);
	rows_at(&f, 1, RMG "proj.weight", 0, MG "proj.weight", 64, 64);
	const char *mgu = RMG "gate_up_proj.weight";
	shp(&f, 1, mgu, 2, VM, VO, 0);
	rows_at(&f, 1, mgu, 0, MG "gate_proj.weight", 128, 128);
	rows_at(&f, 1, mgu, 128, MG "up_proj.weight", 128, 128);
	rows_at(&f, 0, mgu, 0, MG "gate_proj.weight", 0, 128);
	cols_of(&f, 1, 2, RMG "down_proj.weight", MG "down_proj.weight", VO, VM);
	static const char *const whole[] = {"patch_embed.proj.weight",
	                                    "patch_embed.proj.bias",
	                                    "post_conv_layernorm.weight",
	                                    "embeddings.position_embedding.weight",
	                                    "blocks.1.norm1.weight",
	                                    "blocks.0.norm2.weight",
	                                    "post_layernorm.weight",
	                                    "downsample.weight",
	                                    "downsample.bias",
	                                    "merger.post_projection_norm.weight",
	                                    "merger.post_projection_norm.bias"};
	for (uint32_t r = 0; r < 2; r++)
		for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
			char rt[120], src[120];
			snprintf(rt, sizeof(rt), "visual.%s", whole[k]);
			snprintf(src, sizeof(src), "model.visual.%s", whole[k]);
			const sm_out_info *o = info(&f, r, rt);
			int ks = tm_find(f.m, src);
			assert_true(ks >= 0);
			assert_int_equal(o->ndim,
			                 f.m->d[ks].ndim); /* Conv kernels keep their dims */
			rows_are(&f, r, rt, 0, src, 0, f.m->d[ks].shape[0]);
		}
	fx_close(&f);
	/* TP 4: rank 3 vision head 3 of q, k and v; block MLP rows 96..127; merger 192..255 */
	fx_open(&f, tm_g4v(), GD_OK, 4, 1, 0, true);
	for (int p = 0; p < 3; p++)
		rows_at(&f, 3, qkv, 16 * p, VB "attn.qkv.weight", p * VE + 48, 16);
	rows_at(&f, 3, gu, 32, VB "mlp.up_proj.weight", 96, 32);
	rows_at(&f, 3, RMG "proj.weight", 0, MG "proj.weight", 96, 32);
	rows_at(&f, 3, mgu, 64, MG "up_proj.weight", 192, 64);
	cols_of(&f, 2, 4, RMG "down_proj.weight", MG "down_proj.weight", VO, VM);
	fx_close(&f);
}

/* A checkpoint already under the runtime names (model.layers.*, visual.*: no released
 * prefix, so no alias applies) plans to the same slices. */
static void test_g4v_runtime_names(void **state)
{
	(void)state;
	tm_model *m = tm_g4v();
	for (size_t k = 0; k < m->n; k++) {
		char nm[sizeof(m->name[0])];
		if (strncmp(m->name[k], "model.language_model.", 21) == 0)
			snprintf(nm, sizeof(nm), "model.%s", m->name[k] + 21);
		else if (strncmp(m->name[k], "model.visual.", 13) == 0)
			snprintf(nm, sizeof(nm), "%s", m->name[k] + 6);
		else
			continue;
		memcpy(m->name[k], nm, sizeof(nm));
	}
	fx f;
	fx_open(&f, m, GD_OK, 2, 1, 0, true);
	rows_at(&f, 1, R1 "self_attn.qkv_proj.weight", 0, R1 "self_attn.q_proj.weight", 64, 64);
	for (int p = 0; p < 3; p++)
		rows_at(&f, 1, RVB "attn.qkv.weight", 32 * p, RVB "attn.qkv.weight", p * VE + 32,
		        32);
	rows_at(&f, 1, RMG "gate_up_proj.weight", 128, RMG "up_proj.weight", 128, 128);
	fx_close(&f);
}

/* int8-channel at TP 2: the Linears of both models quantized by rows (a merger gate_up
 * row checked against the formula), the Conv kernels, position table, norms, biases and
 * router kept BF16. */
static void test_g4v_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_g4v(), GD_OK, &l, true);
	const char *mgu = RMG "gate_up_proj.weight";
	assert_int_equal(info(&f, 1, mgu)->dtype, WT_I8);
	/* rank 1 row 128 + 5 is up row 128 + 5 */
	size_t rowb;
	const uint16_t *x = (const uint16_t *)src_rows(&f, MG "up_proj.weight", 133, &rowb);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, mgu) + 133 * VO;
	int8_row_is(q, ((const float *)out_bytes(&f, 1, RMG "gate_up_proj.weight_scale"))[133], x,
	            VO);
	static const char *const quant[] = {RVB "attn.qkv.weight", RVB "mlp.down_proj.weight",
	                                    RMG "proj.weight", R1 "self_attn.qkv_proj.weight",
	                                    R1 "mlp.gate_up_proj.weight"};
	for (size_t k = 0; k < sizeof(quant) / sizeof(quant[0]); k++)
		assert_int_equal(info(&f, 0, quant[k])->dtype, WT_I8);
	static const char *const kept[] = {"visual.patch_embed.proj.weight",
	                                   "visual.embeddings.position_embedding.weight",
	                                   "visual.downsample.weight",
	                                   RMG "post_projection_norm.weight",
	                                   RVB "norm1.weight",
	                                   R1 "self_attn.qkv_proj.bias"};
	for (size_t k = 0; k < sizeof(kept) / sizeof(kept[0]); k++) {
		assert_int_equal(info(&f, 0, kept[k])->dtype, WT_BF16);
		char sc[120];
		snprintf(sc, sizeof(sc), "%s_scale", kept[k]);
		assert_true(tm_ix(f.p, 0, sc) < 0);
	}
	fx_close(&f);
}

/* GLM-4.5V: GLM-4.5's MoE rows at TP 2 and EP 2 (the experts, shared experts, router and
 * correction bias), layer 0 dense, the MTP layer skipped, the same tower. */
static void test_g4vm_moe(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_g4vm(), GM_OK, 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "glm4v_moe");
	runtime_names_only(&f);
	/* every expert on both ranks, rank 1 its gate / up rows and down columns 16..31 */
	fx_experts_are(&f, &XP, 1, 0, 4, 16, 16, false);
	const char *sgu = R1 "mlp.shared_experts.gate_up_proj.weight";
	rows_at(&f, 1, sgu, 0, LM "1.mlp.shared_experts.gate_proj.weight", 16, 16);
	rows_at(&f, 1, sgu, 16, LM "1.mlp.shared_experts.up_proj.weight", 16, 16);
	for (uint32_t r = 0; r < 2; r++) {
		rows_are(&f, r, R1 "mlp.gate.weight", 0, LM "1.mlp.gate.weight", 0, 4);
		rows_are(&f, r, R1 "mlp.gate.e_score_correction_bias", 0,
		         LM "1.mlp.gate.e_score_correction_bias", 0, 4);
	}
	rows_at(&f, 1, "model.layers.0.mlp.gate_up_proj.weight", 48, LM "0.mlp.up_proj.weight", 48,
	        48);
	rows_at(&f, 1, "model.layers.1.self_attn.qkv_proj.bias", 0, LM "1.self_attn.q_proj.bias",
	        64, 64);
	assert_true(tm_ix(f.p, 0, "model.layers.1.self_attn.q_norm.weight") < 0);
	rows_at(&f, 1, RMG "proj.weight", 0, MG "proj.weight", 64, 64);
	/* the MTP layer (index 2 = num_hidden_layers) listed as skipped, under its own name */
	bool eh = false;
	for (size_t k = 0; k < shardmap_n_skipped(f.p); k++)
		eh = eh || strcmp(shardmap_skipped(f.p, k), LM "2.eh_proj.weight") == 0;
	assert_true(eh);
	assert_true(tm_ix(f.p, 0, "model.layers.2.eh_proj.weight") < 0);
	fx_close(&f);
	/* EP 2: rank 1 experts 2, 3 whole */
	fx_open(&f, tm_g4vm(), GM_OK, 1, 2, 0, true);
	fx_experts_are(&f, &XP, 1, 2, 2, 0, IE, false);
	fx_close(&f);
}

/* Every element of every tensor once per its replication, over TP / EP layouts. */
static void test_g4v_coverage(void **state)
{
	(void)state;
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(tm_g4v(), GD_OK, 2, dense, sizeof(dense) / sizeof(dense[0]));
	static const uint32_t moe[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {1, 4}, {2, 2}};
	coverage(tm_g4vm(), GM_OK, 2, moe, sizeof(moe) / sizeof(moe[0]));
}

/* Plan m under cfg at TP 2: code, and a message holding `want`. */
static void refused(tm_model *m, const char *cfg, int code, const char *want)
{
	wt_errbuf err = {0};
	int rv = plan_err(m, cfg, &err);
	if (rv != code || strstr(err.msg, want) == NULL)
		fail_msg("want %d with '%s', got %d: %s", code, want, rv, err.msg);
	print_message("refused: %s\n", err.msg);
}

static void test_g4v_refusals(void **state)
{
	(void)state;
	refused(tm_g4v(),
	        G_CFG("Glm4vForConditionalGeneration", "glm4v", G_TEXT("glm4v_text", "," MROPE),
	              "\"x\":1"),
	        WT_ECORRUPT, "GLM-4.1V needs vision_config");
	refused(tm_g4v(), GD("," MROPE, G_VIS(",\"num_heads\":4,\"out_hidden_size\":96")),
	        WT_ECORRUPT, "out_hidden_size 96 must equal the language model's hidden_size 128");
	refused(tm_g4v(), GD("," MROPE, G_VIS(",\"num_heads\":5,\"out_hidden_size\":128")),
	        WT_ECORRUPT, "num_heads 5 does not divide hidden_size 64");
	/* absent: Glm4vVisionConfig's out_hidden_size 4096 and num_heads 12 */
	refused(tm_g4v(), GD("," MROPE, G_VIS(",\"num_heads\":4")), WT_ECORRUPT,
	        "out_hidden_size 4096 must equal");
	refused(tm_g4v(), GD("," MROPE, G_VIS(",\"out_hidden_size\":128")), WT_ECORRUPT,
	        "num_heads 12 does not divide hidden_size 64");
	refused(tm_g4v(), GD("," MROPE, G_VIS(G_V ",\"image_size\":2")), WT_ECORRUPT,
	        "image_size 2 is below patch_size 4");
	/* image 32: 64 positions where the checkpoint holds 16 */
	refused(tm_g4v(), GD("," MROPE, G_VIS(G_V ",\"image_size\":32")), WT_ESHAPE,
	        "position_embedding.weight");
	/* MRoPE: required, three sections over the rotary half of the head */
	refused(tm_g4v(), GD(",\"partial_rotary_factor\":0.5", G_VIS_OK), WT_ECORRUPT,
	        "GLM-4.1V needs text_config.rope_scaling.mrope_section");
	refused(
	    tm_g4v(),
	    GD(",\"rope_scaling\":{\"mrope_section\":[2,3,3],\"rope_type\":\"default\"}", G_VIS_OK),
	    WT_ECORRUPT,
	    "summing to 8 but needs 3 (T, H, W) summing to int(head_dim * "
	    "partial_rotary_factor) / 2 = 16");
	refused(tm_g4v(),
	        GD(",\"partial_rotary_factor\":0.5,\"rope_scaling\":{\"mrope_section\":[4,4],"
	           "\"rope_type\":\"default\"}",
	           G_VIS_OK),
	        WT_ECORRUPT, "mrope_section has 2 entries");
	refused(tm_g4v(),
	        GD(",\"partial_rotary_factor\":0,\"rope_scaling\":{\"mrope_section\":[2,3,3]}",
	           G_VIS_OK),
	        WT_ECORRUPT, "partial_rotary_factor must be a number in (0, 1]");
	/* GLM-4.1V's heads are hid / H wide */
	refused(tm_g4v(), GD(",\"head_dim\":64," MROPE, G_VIS_OK), WT_ECORRUPT,
	        "head_dim 64 but GLM-4.1V's attention heads are hidden_size / "
	        "num_attention_heads = 128 / 4");
	/* the q/k/v biases are always there; o_proj and the tower's qkv have none */
	tm_model *m = tm_g4v();
	tm_remove(m, LM "0.self_attn.k_proj.bias");
	refused(m, GD_OK, WT_ENOTFOUND, "k_proj.bias': missing");
	m = tm_g4v();
	tm_add2(m, LM "1.self_attn.o_proj.bias", HID, 0);
	refused(m, GD_OK, WT_EUNSUPPORTED, "o_proj.bias': unknown tensor");
	m = tm_g4v();
	tm_add2(m, VB "attn.qkv.bias", 3 * VE, 0);
	refused(m, GD_OK, WT_EUNSUPPORTED, "attn.qkv.bias': unknown tensor");
	/* a block past depth; a missing merger tensor; a downsample of another kernel */
	refused(tm_g4v(),
	        GD("," MROPE,
	           "\"vision_config\":{\"depth\":1,\"hidden_size\":64,\"intermediate_size\":256,"
	           "\"patch_size\":4,\"spatial_merge_size\":2,\"image_size\":16" G_V "}"),
	        WT_ESHAPE, "vision block 1 but config.json vision_config.depth is 1");
	m = tm_g4v();
	tm_remove(m, MG "up_proj.weight");
	refused(m, GD_OK, WT_ENOTFOUND, "merger.up_proj.weight': missing");
	refused(tm_g4v(),
	        GD("," MROPE,
	           "\"vision_config\":{\"depth\":2,\"hidden_size\":64,\"intermediate_size\":256,"
	           "\"patch_size\":4,\"spatial_merge_size\":1,\"image_size\":16" G_V "}"),
	        WT_ESHAPE, "downsample.weight");
	/* two name layouts in one checkpoint */
	m = tm_g4v();
	tm_add2(m, "model.layers.0.input_layernorm.weight", HID, 0);
	refused(m, GD_OK, WT_EUNSUPPORTED, "mixes two name layouts");
	/* GLM-4.5V: no q/k norms */
	refused(tm_g4vm(), GM(GM_TXT ",\"use_qk_norm\":true," MROPE, G_VIS_OK), WT_ECORRUPT,
	        "GLM-4.5V's text attention has no q_norm / k_norm");
	/* TP 4 > a tower of 2 heads (the language model's 4 split) */
	fx f;
	char *dir = tu_mkdtemp("g4v");
	m = tm_g4v();
	assert_int_equal(
	    tm_write(
	        m, dir,
	        GD("," MROPE, G_VIS(",\"num_heads\":2,\"out_hidden_size\":128,\"image_size\":16"))),
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

/* Keys a saved text_config leaves out take Glm4vTextConfig's / Glm4vMoeTextConfig's
 * defaults (partial_rotary_factor 1.0 / 0.5 included). */
static void test_g4v_defaults(void **state)
{
	(void)state;
	static const char dense[] = "{\"architectures\":[\"Glm4vForConditionalGeneration\"],"
	                            "\"model_type\":\"glm4v\",\"text_config\":{\"model_type\":"
	                            "\"glm4v_text\"},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(dense, strlen(dense), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.intermediate_size, 13696);
	assert_int_equal(c.vocab_size, 151552);
	assert_int_equal(c.num_hidden_layers, 40);
	assert_false(c.tie_word_embeddings);
	assert_true(c.partial_rotary_factor == 1.0);
	assert_false(c.has_mrope);
	ckpt_config_clear(&c);
	static const char moe[] = "{\"architectures\":[\"Glm4vMoeForConditionalGeneration\"],"
	                          "\"model_type\":\"glm4v_moe\",\"text_config\":{\"model_type\":"
	                          "\"glm4v_moe_text\",\"hidden_size\":1024},\"vision_config\":{}}";
	assert_int_equal(ckpt_config_parse(moe, strlen(moe), &c, &err), WT_OK);
	assert_int_equal(c.hidden_size, 1024);
	assert_int_equal(c.num_attention_heads, 96);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_int_equal(c.num_experts, 128);
	assert_int_equal(c.moe_intermediate_size, 1408);
	assert_int_equal(c.n_shared_experts, 1);
	assert_int_equal(c.first_k_dense_replace, 1);
	assert_int_equal(c.vocab_size, 151424);
	assert_int_equal(c.num_hidden_layers, 46);
	assert_true(c.partial_rotary_factor == 0.5);
	ckpt_config_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_g4v_text),     cmocka_unit_test(test_g4v_vision),
	    cmocka_unit_test(test_g4v_quant),    cmocka_unit_test(test_g4vm_moe),
	    cmocka_unit_test(test_g4v_coverage), cmocka_unit_test(test_g4v_refusals),
	    cmocka_unit_test(test_g4v_defaults), cmocka_unit_test(test_g4v_runtime_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
