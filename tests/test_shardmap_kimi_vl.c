/*
 * test_shardmap_kimi_vl.c — Kimi-VL (KimiVLForConditionalGeneration, model_type kimi_vl;
 * docs/format.md section 2.7), cut as vLLM's kimi_vl.py / moonvit.py load it: MoonViT's blocks
 * by hand at TP 2 and 4 (wqkv and its bias [q_r; k_r; v_r] by heads, wo and mlp.fc1 by columns,
 * mlp.fc0 and its bias by rows, the norms, the row-parallel biases, the patch embedding, the
 * position table and the final norm whole), the projector whole, the language model under
 * `language_model.` byte for byte the deepseek_v3 family's ranks of the same weights (TP 1 / 2 /
 * 4 / 8, TP 2 x EP 2, int8-channel TP 2, fp8-channel TP 4; topk_method greedy: the deepseek_v2
 * family's, no correction bias; q_lora_rank null, Kimi-VL-A3B's: q_proj by heads), the MTP
 * layer skipped only within num_nextn_predict_layers, int8-channel TP 2 (tower and projector
 * BF16), coverage over TP 1..8 / EP, the config classes' defaults and the refusals. Seed fixed
 * and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x5eedc1a1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* MoonViT: 2 blocks of width 32, 8 heads of 4, MLP 64, patch 2, positions 4 x 6, merge 2 x 2
 * (the projector 128 wide); the LM tm_deepseek's (hid 256, layer 0 dense, 1 MoE, 2 MTP). */
#define VE  32
#define VH  8
#define VI  64
#define VM  128
#define HID 256
#define LMP "language_model."
#define VT  "vision_tower."
#define VB  VT "encoder.blocks.%d."
#define PJ  "multi_modal_projector."

#define KV_TEXT(extra)                                                                             \
	"\"text_config\":{\"model_type\":\"deepseek_v3\",\"hidden_size\":256,"                     \
	"\"num_attention_heads\":8,\"num_key_value_heads\":8,\"q_lora_rank\":128,"                 \
	"\"kv_lora_rank\":64,\"qk_nope_head_dim\":32,\"qk_rope_head_dim\":32,\"v_head_dim\":32,"   \
	"\"intermediate_size\":512,\"moe_intermediate_size\":256,\"n_routed_experts\":4,"          \
	"\"n_shared_experts\":1,\"first_k_dense_replace\":1,\"moe_layer_freq\":1,"                 \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"num_experts_per_tok\":2" extra "}"
#define KV_VKEYS                                                                                   \
	"\"model_type\":\"moonvit\",\"hidden_size\":32,\"num_attention_heads\":8,"                 \
	"\"num_hidden_layers\":2,\"intermediate_size\":64,\"patch_size\":2,"                       \
	"\"init_pos_emb_height\":4,\"init_pos_emb_width\":6,\"merge_kernel_size\":[2,2]"
#define KV_CFG(top, text, vis)                                                                     \
	"{\"architectures\":[\"KimiVLForConditionalGeneration\"],\"model_type\":\"kimi_vl\"," top  \
	KV_TEXT(text) ",\"vision_config\":{" vis "}}"
#define NOAUX ",\"topk_method\":\"noaux_tc\",\"num_nextn_predict_layers\":1"

static const char cfg_kv[] = KV_CFG("", NOAUX, KV_VKEYS);

/* MoonViT's tensors of one block: leaf, rows, columns (0: a vector). */
static const fx_leaf blk[] = {
    {"norm0.weight", VE, 0}, {"norm0.bias", VE, 0},       {"norm1.weight", VE, 0},
    {"norm1.bias", VE, 0},   {"wqkv.weight", 3 * VE, VE}, {"wqkv.bias", 3 * VE, 0},
    {"wo.weight", VE, VE},   {"wo.bias", VE, 0},          {"mlp.fc0.weight", VI, VE},
    {"mlp.fc0.bias", VI, 0}, {"mlp.fc1.weight", VE, VI},  {"mlp.fc1.bias", VE, 0},
};
#define NBLK (sizeof(blk) / sizeof(blk[0]))

/* MoonViT (blocks of it) and the projector vm wide into m. */
static void add_tower_vm(tm_model *m, int blocks, int64_t vm)
{
	tm_add(m, VT "patch_embed.proj.weight", WT_DTYPE_INVALID, 1, VE * 3 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 2;
	tm_add2(m, VT "patch_embed.proj.bias", VE, 0);
	tm_add(m, VT "patch_embed.pos_emb.weight", WT_DTYPE_INVALID, 3, 4, 6, VE);
	for (int b = 0; b < blocks; b++)
		for (size_t k = 0; k < NBLK; k++) {
			char n[200];
			snprintf(n, sizeof(n), VB "%s", b, blk[k].leaf);
			tm_add2(m, n, blk[k].n, blk[k].k);
		}
	tm_add2(m, VT "encoder.final_layernorm.weight", VE, 0);
	tm_add2(m, VT "encoder.final_layernorm.bias", VE, 0);
	tm_add2(m, PJ "pre_norm.weight", VE, 0);
	tm_add2(m, PJ "pre_norm.bias", VE, 0);
	tm_add2(m, PJ "linear_1.weight", vm, vm);
	tm_add2(m, PJ "linear_1.bias", vm, 0);
	tm_add2(m, PJ "linear_2.weight", HID, vm);
	tm_add2(m, PJ "linear_2.bias", HID, 0);
}

static void add_tower(tm_model *m, int blocks)
{
	add_tower_vm(m, blocks, VM);
}

/* Every tensor of m whose name starts with p removed. */
static void drop_prefix(tm_model *m, const char *p)
{
	for (size_t i = m->n; i-- > 0;)
		if (strncmp(m->name[i], p, strlen(p)) == 0)
			tm_remove(m, m->name[i]);
}

/* tm_deepseek's V3 (MTP layer 2 kept unless mtp is false, the correction biases unless bias
 * is false); v3 gets its config. */
static tm_model *lm_model(bool mtp, bool bias, char *v3, size_t cap)
{
	tm_model *m = tm_deepseek(SEED, 0, v3, cap);
	if (!mtp)
		drop_prefix(m, "model.layers.2.");
	if (!bias)
		tm_remove(m, "model.layers.1.mlp.gate.e_score_correction_bias");
	return m;
}

/* lm_model's with q_lora_rank null (Kimi-VL-A3B's shape): each layer's q_a_proj,
 * q_a_layernorm and q_b_proj replaced by q_proj [H x (nope + rope), hid]; v3 gets the config
 * with q_lora_rank null. */
static tm_model *lm_model_q(char *v3, size_t cap)
{
	char c[1024];
	tm_model *m = lm_model(true, true, c, sizeof(c));
	static const char *const qa[] = {"q_a_proj.weight", "q_a_layernorm.weight",
	                                 "q_b_proj.weight"};
	for (int i = 0; i < 3; i++) {
		char b[200];
		for (size_t k = 0; k < 3; k++) {
			snprintf(b, sizeof(b), "model.layers.%d.self_attn.%s", i, qa[k]);
			tm_remove(m, b);
		}
		snprintf(b, sizeof(b), "model.layers.%d.self_attn.q_proj.weight", i);
		tm_add2(m, b, 8 * 64, HID);
	}
	const char *q = strstr(c, "\"q_lora_rank\":128");
	assert_non_null(q);
	snprintf(v3, cap, "%.*s\"q_lora_rank\":null%s", (int)(q - c), c, q + 17);
	return m;
}

/* LM m (model.*, lm_head.*) under language_model., then MoonViT and the projector. */
static tm_model *kv_wrap(tm_model *m)
{
	for (size_t i = 0; i < m->n; i++) {
		char b[sizeof(m->name[0]) + 16];
		snprintf(b, sizeof(b), LMP "%s", m->name[i]);
		assert_true(strlen(b) < sizeof(m->name[0]));
		memcpy(m->name[i], b, sizeof(m->name[0]));
	}
	add_tower(m, 2);
	return m;
}

/* The LM of lm_model under language_model., then MoonViT and the projector. */
static tm_model *kv_model_lm(bool mtp, bool bias)
{
	char v3[1024];
	return kv_wrap(lm_model(mtp, bias, v3, sizeof(v3)));
}

static tm_model *kv_model(void)
{
	return kv_model_lm(true, true);
}

/* Rank r of T: block b of MoonViT and the rest of the tower, the projector. */
static void tower_rank(const fx *f, uint32_t r, uint32_t T, int b)
{
	char n[200], s[200];
	int64_t hl = VE / T, il = VI / T;
	snprintf(n, sizeof(n), VB "wqkv.weight", b);
	shp(f, r, n, 2, 3 * hl, VE, 0);
	for (int part = 0; part < 3; part++) /* [q_r; k_r; v_r]: heads r*H/T.. of each part */
		rows_at(f, r, n, part * hl, n, part * VE + r * hl, hl);
	snprintf(n, sizeof(n), VB "wqkv.bias", b);
	shp(f, r, n, 1, 3 * hl, 0, 0);
	for (int part = 0; part < 3; part++)
		rows_at(f, r, n, part * hl, n, part * VE + r * hl, hl);
	snprintf(n, sizeof(n), VB "wo.weight", b);
	cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), VB "mlp.fc0.weight", b);
	shp(f, r, n, 2, il, VE, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), VB "mlp.fc0.bias", b);
	shp(f, r, n, 1, il, 0, 0);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), VB "mlp.fc1.weight", b);
	cols_of(f, r, T, n, n, VE, VI);
	static const char *const whole[] = {"norm0.weight", "norm0.bias", "norm1.weight",
	                                    "norm1.bias",   "wo.bias",    "mlp.fc1.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(s, sizeof(s), VB "%s", b, whole[k]);
		repl(f, r, s);
	}
	static const char *const top[] = {VT "patch_embed.proj.weight",
	                                  VT "patch_embed.proj.bias",
	                                  VT "patch_embed.pos_emb.weight",
	                                  VT "encoder.final_layernorm.weight",
	                                  VT "encoder.final_layernorm.bias",
	                                  PJ "pre_norm.weight",
	                                  PJ "pre_norm.bias",
	                                  PJ "linear_1.weight",
	                                  PJ "linear_1.bias",
	                                  PJ "linear_2.weight",
	                                  PJ "linear_2.bias"};
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++) {
		repl(f, r, top[k]);
		assert_int_equal(info(f, r, top[k])->dtype, WT_BF16);
	}
	shp(f, r, VT "patch_embed.pos_emb.weight", 3, 4, 6, VE);
	shp(f, r, PJ "linear_2.weight", 2, HID, VM, 0);
}

/* TP 2 and 4: every block and the projector by hand; the MTP layer skipped; the LM's MLA and
 * experts spot-checked (kv_b_proj by heads, o_proj by columns). */
static void test_kv_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t t = 0; t < 2; t++) {
		uint32_t T = tps[t];
		fx f;
		fx_open(&f, kv_model(), cfg_kv, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "kimi_vl");
		for (uint32_t r = 0; r < T; r++) {
			for (int b = 0; b < 2; b++)
				tower_rank(&f, r, T, b);
			const char *kvb = LMP "model.layers.1.self_attn.kv_b_proj.weight";
			shp(&f, r, kvb, 2, 512 / T, 64, 0);
			rows_at(&f, r, kvb, 0, kvb, r * (512 / T), 512 / T);
			const char *o = LMP "model.layers.0.self_attn.o_proj.weight";
			cols_of(&f, r, T, o, o, HID, HID);
			repl(&f, r, LMP "model.layers.1.mlp.gate.e_score_correction_bias");
		}
		assert_true(fx_skipped(&f, LMP "model.layers.2.self_attn.q_a_proj.weight"));
		assert_true(fx_skipped(&f, LMP "model.layers.2.eh_proj.weight"));
		fx_close(&f);
	}
}

/* Every rank's language_model.* is the deepseek_v3 family's rank of the same weights as a
 * DeepseekV3ForCausalLM checkpoint (TP 1 / 2 / 4 / 8, TP 2 x EP 2); topk_method greedy (absent:
 * DeepseekV2Config's default) is the deepseek_v2 family's, without the correction bias. */
static void test_kv_same_lm(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}};
	for (size_t k = 0; k < 5; k++) {
		char v3[1024];
		tm_model *t = lm_model(true, true, v3, sizeof(v3));
		fx_same_layouts(kv_model(), NULL, cfg_kv, t, v3, lays[k][0], lays[k][1], LMP);
	}
	static const char cfg_greedy[] = KV_CFG("", "", KV_VKEYS);
	for (size_t k = 0; k < 5; k++) {
		char v3[1024], v2[1100];
		tm_model *t = lm_model(false, false, v3, sizeof(v3));
		const char *a = strstr(v3, "DeepseekV3"), *mt = strstr(v3, "deepseek_v3");
		assert_non_null(a);
		assert_non_null(mt);
		snprintf(v2, sizeof(v2), "%.*sDeepseekV2%.*sdeepseek_v2%s", (int)(a - v3), v3,
		         (int)(mt - (a + 10)), a + 10, mt + 11);
		fx_same_layouts(kv_model_lm(false, false), NULL, cfg_greedy, t, v2, lays[k][0],
		                lays[k][1], LMP);
	}
	/* q_lora_rank null (Kimi-VL-A3B's): q_proj by heads, as the deepseek_v3 family cuts it */
	char kq[1400];
	const char *q = strstr(cfg_kv, "\"q_lora_rank\":128");
	assert_non_null(q);
	snprintf(kq, sizeof(kq), "%.*s\"q_lora_rank\":null%s", (int)(q - cfg_kv), cfg_kv, q + 17);
	for (size_t k = 0; k < 5; k++) {
		char v3[1024], v3b[1024];
		tm_model *t = lm_model_q(v3, sizeof(v3));
		tm_model *m = kv_wrap(lm_model_q(v3b, sizeof(v3b)));
		fx_same_layouts(m, NULL, kq, t, v3, lays[k][0], lays[k][1], LMP);
	}
	char unused[1024];
	fx f;
	fx_open(&f, kv_wrap(lm_model_q(unused, sizeof(unused))), kq, 4, 1, 0, true);
	const char *qp = LMP "model.layers.1.self_attn.q_proj.weight";
	shp(&f, 2, qp, 2, 128, HID, 0);
	rows_at(&f, 2, qp, 0, qp, 256, 128);
	assert_true(tm_ix(f.p, 2, LMP "model.layers.1.self_attn.q_a_proj.weight") < 0);
	fx_close(&f);
}

static const char *const kv_keep[] = {VT "encoder.blocks.1.wqkv.weight",
                                      VT "encoder.blocks.1.wo.weight",
                                      VT "encoder.blocks.1.mlp.fc0.weight",
                                      VT "encoder.blocks.1.mlp.fc1.weight",
                                      VT "patch_embed.proj.weight",
                                      PJ "linear_1.weight",
                                      PJ "linear_2.weight",
                                      LMP "model.layers.1.mlp.gate.weight"};
static const char *const kv_quant[] = {LMP "model.layers.1.self_attn.q_a_proj.weight",
                                       LMP "model.layers.1.self_attn.o_proj.weight",
                                       LMP "model.layers.1.self_attn.kv_b_proj.weight",
                                       LMP "model.layers.0.mlp.down_proj.weight",
                                       LMP "model.layers.1.mlp.experts.w13_weight",
                                       LMP "model.layers.1.mlp.shared_experts.down_proj.weight"};

/* int8-channel TP 2: the LM's Linears quantized (rank 1's o_proj codes checked), MoonViT's and
 * the projector's kept BF16 without a scale (vLLM builds them without quant_config); the LM
 * byte for byte the deepseek_v3 family's; fp8-channel TP 4 the same split. */
static void test_kv_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, kv_model(), cfg_kv, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(kv_keep),
	              FX_N(kv_quant));
	fx_cols_int8_is(&f, 1, 2, LMP "model.layers.0.self_attn.o_proj.weight", HID, HID);
	tower_rank(&f, 1, 2, 0);
	char v3[1024];
	fx t;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&t, lm_model(true, true, v3, sizeof(v3)), v3, &l, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&f, &t, r, LMP);
	fx_close(&t);
	fx_close(&f);
	fx_open_quant(&f, kv_model(), cfg_kv, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(kv_keep),
	              FX_N(kv_quant));
	fx_close(&f);
}

static void test_kv_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}, {4, 2}};
	coverage(kv_model(), cfg_kv, 8, lays, 6);
}

/* ckpt_config_parse of a Kimi-VL config: MoonViTConfig's defaults for an absent vision_config,
 * DeepseekV2Config's for absent text keys (a null q_lora_rank kept), topk_method and
 * num_nextn_predict_layers read from text_config, the top level's tie dropped. */
static void test_kv_defaults(void **state)
{
	(void)state;
	static const char js[] =
	    "{\"architectures\":[\"KimiVLForConditionalGeneration\"],\"model_type\":\"kimi_vl\","
	    "\"tie_word_embeddings\":true,\"text_config\":{\"model_type\":\"deepseek_v3\","
	    "\"q_lora_rank\":null}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(js, strlen(js), &c, &err), WT_OK);
	assert_true(c.has_vision);
	assert_int_equal(c.v_hidden_size, 1152);
	assert_int_equal(c.v_intermediate_size, 4304);
	assert_int_equal(c.v_num_layers, 27);
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_int_equal(c.v_patch_size, 14);
	assert_int_equal(c.v_pos_h, 64);
	assert_int_equal(c.v_pos_w, 64);
	assert_int_equal(c.v_merge_h, 2);
	assert_int_equal(c.v_merge_w, 2);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.vocab_size, 32000);
	assert_int_equal(c.q_lora_rank, -1);
	assert_int_equal(c.kv_lora_rank, 512);
	assert_int_equal(c.num_experts, 64);
	assert_int_equal(c.moe_intermediate_size, 1407);
	assert_int_equal(c.first_k_dense_replace, 0);
	assert_false(c.tie_word_embeddings);
	assert_false(c.kv_noaux);
	assert_int_equal(c.kv_nextn, 0);
	ckpt_config_clear(&c);
	assert_int_equal(ckpt_config_parse(cfg_kv, strlen(cfg_kv), &c, &err), WT_OK);
	assert_true(c.kv_noaux);
	assert_int_equal(c.kv_nextn, 1);
	assert_int_equal(c.q_lora_rank, 128);
	assert_int_equal(c.v_pos_w, 6);
	ckpt_config_clear(&c);
}

/* merge_kernel_size [2, 1]: the projector VE x 2 wide, whole on every rank. */
static void test_kv_merge(void **state)
{
	(void)state;
	char v3[1024];
	tm_model *m = lm_model(true, true, v3, sizeof(v3));
	for (size_t i = 0; i < m->n; i++) {
		char b[sizeof(m->name[0]) + 16];
		snprintf(b, sizeof(b), LMP "%s", m->name[i]);
		memcpy(m->name[i], b, sizeof(m->name[0]));
	}
	add_tower_vm(m, 2, 2 * VE);
	static const char cfg[] = KV_CFG("", NOAUX,
	                                 "\"hidden_size\":32,\"num_attention_heads\":8,"
	                                 "\"num_hidden_layers\":2,\"intermediate_size\":64,"
	                                 "\"patch_size\":2,\"init_pos_emb_height\":4,"
	                                 "\"init_pos_emb_width\":6,\"merge_kernel_size\":[2,1]");
	fx f;
	fx_open(&f, m, cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, PJ "linear_1.weight", 2, 2 * VE, 2 * VE, 0);
		repl(&f, r, PJ "linear_2.weight");
	}
	fx_close(&f);
	/* the release's 2 x 2 kernel against a 2 x 1 projector */
	m = lm_model(true, true, v3, sizeof(v3));
	for (size_t i = 0; i < m->n; i++) {
		char b[sizeof(m->name[0]) + 16];
		snprintf(b, sizeof(b), LMP "%s", m->name[i]);
		memcpy(m->name[i], b, sizeof(m->name[0]));
	}
	add_tower_vm(m, 2, 2 * VE);
	fx_refused(m, cfg_kv, WT_ESHAPE, PJ "linear_1.", "implies [128");
}

/* What vLLM cannot build or load, refused naming the key or tensor and the fix. */
static void test_kv_refusals(void **state)
{
	(void)state;
#define VKW(heads, w, extra)                                                                       \
	"\"hidden_size\":32,\"num_attention_heads\":" heads ",\"num_hidden_layers\":2,"            \
	"\"intermediate_size\":64,\"patch_size\":2,\"init_pos_emb_height\":4,"                     \
	"\"init_pos_emb_width\":" w extra
#define VK(heads, extra) VKW(heads, "6", extra)
	/* tp_size not dividing the tower's heads (vLLM's divide() asserts) */
	static const char h4[] = KV_CFG("", NOAUX, VK("4", ""));
	fx_refused_tp(kv_model(), h4, 8, WT_ELAYOUT, "vision_config.num_attention_heads",
	              "tp_size 8");
	/* heads not dividing the width; a head not a multiple of 4 (Rope2DPosEmb) */
	static const char h5[] = KV_CFG("", NOAUX, VK("5", ""));
	fx_refused(kv_model(), h5, WT_ECORRUPT, "num_attention_heads 5", "hidden_size 32");
	static const char h16[] = KV_CFG("", NOAUX, VK("16", ""));
	fx_refused(kv_model(), h16, WT_ECORRUPT, "Rope2DPosEmb", "multiple of 4");
	/* merge_kernel_size not two integers >= 1 */
	static const char *const mk[] = {
	    KV_CFG("", NOAUX, VK("8", ",\"merge_kernel_size\":[2]")),
	    KV_CFG("", NOAUX, VK("8", ",\"merge_kernel_size\":[0,2]")),
	    KV_CFG("", NOAUX, VK("8", ",\"merge_kernel_size\":\"2x2\"")),
	};
	for (size_t k = 0; k < 3; k++)
		fx_refused(kv_model(), mk[k], WT_ECORRUPT, "merge_kernel_size", "[2, 2]");
	/* the position table of another size than init_pos_emb_height x _width */
	static const char pw[] = KV_CFG("", NOAUX, VKW("8", "8", ""));
	fx_refused(kv_model(), pw, WT_ESHAPE, VT "patch_embed.pos_emb.weight", "8");
	/* no text_config; a topk_method not a string; kv_lora_rank null */
	static const char nt[] =
	    "{\"architectures\":[\"KimiVLForConditionalGeneration\"],\"model_type\":\"kimi_vl\","
	    "\"vision_config\":{" KV_VKEYS "}}";
	fx_refused(kv_model(), nt, WT_ECORRUPT, "text_config", "DeepseekV2ForCausalLM");
	static const char tk[] = KV_CFG("", ",\"topk_method\":1", KV_VKEYS);
	fx_refused(kv_model(), tk, WT_ECORRUPT, "topk_method", "noaux_tc");
	char kl[1400];
	const char *q = strstr(cfg_kv, "\"kv_lora_rank\":64");
	assert_non_null(q);
	snprintf(kl, sizeof(kl), "%.*s\"kv_lora_rank\":null%s", (int)(q - cfg_kv), cfg_kv, q + 17);
	fx_refused(kv_model(), kl, WT_ESHAPE, "kv_lora_rank", "Kimi-VL");
	/* the MTP layer without num_nextn_predict_layers: vLLM has no parameter for it */
	static const char nn[] = KV_CFG("", ",\"topk_method\":\"noaux_tc\"", KV_VKEYS);
	fx_refused(kv_model(), nn, WT_EUNSUPPORTED, LMP "model.layers.2.",
	           "num_nextn_predict_layers");
	/* the architecture under another model_type (no KimiVLConfig: no MoonViT keys) */
	char v3[1024];
	tm_free(tm_deepseek(SEED, 0, v3, sizeof(v3)));
	char other[1200];
	const char *a = strstr(v3, "DeepseekV3ForCausalLM");
	assert_non_null(a);
	snprintf(other, sizeof(other), "%.*sKimiVLForConditionalGeneration%s", (int)(a - v3), v3,
	         a + strlen("DeepseekV3ForCausalLM"));
	fx_refused(kv_model(), other, WT_ECORRUPT, "KimiVLForConditionalGeneration", "kimi_vl");
	/* a tower tensor missing; a block past num_hidden_layers */
	tm_model *m = kv_model();
	tm_remove(m, VT "encoder.blocks.1.wqkv.bias");
	fx_refused(m, cfg_kv, WT_ENOTFOUND, VT "encoder.blocks.1.wqkv.bias", "wqkv.bias");
	m = kv_model();
	tm_add2(m, VT "encoder.blocks.2.norm0.weight", VE, 0);
	fx_refused(m, cfg_kv, WT_ESHAPE, VT "encoder.blocks.2.norm0.weight",
	           "vision_config.num_hidden_layers");
	/* the correction bias: required with noaux_tc, unknown with greedy */
	m = kv_model();
	tm_remove(m, LMP "model.layers.1.mlp.gate.e_score_correction_bias");
	fx_refused(m, cfg_kv, WT_ENOTFOUND, "e_score_correction_bias", "model.layers.1.");
	static const char gr[] =
	    KV_CFG("", ",\"topk_method\":\"greedy\",\"num_nextn_predict_layers\":1", KV_VKEYS);
	fx_refused(kv_model(), gr, WT_EUNSUPPORTED, "e_score_correction_bias", "topk_method");
#undef VK
#undef VKW
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kv_slices),   cmocka_unit_test(test_kv_same_lm),
	    cmocka_unit_test(test_kv_quant),    cmocka_unit_test(test_kv_coverage),
	    cmocka_unit_test(test_kv_defaults), cmocka_unit_test(test_kv_merge),
	    cmocka_unit_test(test_kv_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
