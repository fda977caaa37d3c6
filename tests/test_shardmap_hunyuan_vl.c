/*
 * test_shardmap_hunyuan_vl.c — HunYuan-VL (HunYuanVLForConditionalGeneration; docs/format.md
 * section 2.7), cut as vLLM's hunyuan_vision.py / hunyuan_v1.py load it: the vit.* tower's
 * layer slices by hand at TP 2 and 4 (q/k/v with their biases fused by heads into
 * self_attn.qkv, o_proj and dense_4h_to_h by columns, dense_h_to_4h by rows, the LayerNorms and
 * the row-parallel biases whole), the embeddings and the perceive merger (plain torch modules)
 * whole and never quantized; the language model byte for byte the hunyuan_v1_dense family's
 * ranks of the same weights (TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4); which
 * tensors are quantized; coverage; the config read with HunYuanVLVisionConfig's /
 * HunYuanVLTextConfig's defaults; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x6879766cull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"

/* the LM (Hunyuan dense): hid 128, H 8, KV 2, d 32 (H d = 256, not hid), I 192, V 1000
 * (padded 1024), 2 layers, qk norms; the tower: width 64, 8 heads of 8, MLP 128,
 * max_image_size 4 / patch 2 (2^2 + 1 = 5 positions), 2 layers; the merger 2 x 2 kernel,
 * 2 VE = 128, 4 VE = 256 channels, output hid */
#define HID 128
#define HD  32
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define VNP 5
#define L1  "model.layers.1."
#define VB  "vit.layers.%d."
#define P   "vit.perceive."

#define ARCH "HunYuanVLForConditionalGeneration"
#define LMK                                                                                        \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"head_dim\":32,\"vocab_size\":1000,\"num_hidden_layers\":2,"   \
	"\"use_qk_norm\":true,\"attention_bias\":false,"                                           \
	"\"rope_scaling\":{\"type\":\"xdrope\",\"alpha\":1000.0,\"factor\":1.0,"                   \
	"\"xdrope_section\":[4,4,4,4]}"
#define VKEYS(heads, out, maxim)                                                                   \
	"\"vision_config\":{\"hidden_size\":64,\"intermediate_size\":128,\"num_hidden_layers\":2," \
	"\"num_attention_heads\":" heads ",\"patch_size\":2,\"max_image_size\":" maxim             \
	",\"spatial_merge_size\":2,\"out_hidden_size\":" out ",\"num_channels\":3}"
#define CFGL(top, vis)                                                                             \
	"{\"architectures\":[\"" ARCH "\"],\"model_type\":\"hunyuan_vl\"," top LMK "," vis "}"
#define TIED "\"tie_word_embeddings\":true,"
#define CFG  CFGL(TIED, VKEYS("8", "128", "4"))

static const char cfg[] = CFG;
static const char text_cfg[] = "{\"architectures\":[\"HunYuanDenseV1ForCausalLM\"],"
                               "\"model_type\":\"hunyuan_v1_dense\"," TIED LMK "}";

enum { O_HEAD = 1, O_NOSEP = 2, O_BAD2 = 4, O_BADMLP = 8, O_VLLM = 16 }; /* hv_model */

/* The language model's tensors (opt O_HEAD: with the tied lm_head.weight). */
static void add_lm(tm_model *m, unsigned opt)
{
	tm_add2(m, "model.embed_tokens.weight", V, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	if (opt & O_HEAD)
		tm_add2(m, "lm_head.weight", V, HID);
	static const tm_leaf lm_leaves[] = {{"input_layernorm.weight", HID, 0, 0},
	                                    {"post_attention_layernorm.weight", HID, 0, 0},
	                                    {"self_attn.q_proj.weight", 8 * HD, HID, 0},
	                                    {"self_attn.k_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.v_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.o_proj.weight", HID, 8 * HD, 0},
	                                    {"self_attn.query_layernorm.weight", HD, 0, 0},
	                                    {"self_attn.key_layernorm.weight", HD, 0, 0},
	                                    {"mlp.gate_proj.weight", I, HID, 0},
	                                    {"mlp.up_proj.weight", I, HID, 0},
	                                    {"mlp.down_proj.weight", HID, I, 0}};
	tm_layers(m, "model.layers.%d.", 2, lm_leaves, TM_NLEAVES(lm_leaves), 0);
}

/* A 4-D tensor [a, b, c, c]. */
static void add4(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * c * c, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = a;
	d->shape[1] = b;
	d->shape[2] = d->shape[3] = c;
}

static const tm_leaf vit_leaves[] = {
    {"input_layernorm.weight", VE, 0, 0},          {"input_layernorm.bias", VE, 0, 0},
    {"post_attention_layernorm.weight", VE, 0, 0}, {"post_attention_layernorm.bias", VE, 0, 0},
    {"self_attn.q_proj.weight", VE, VE, 0},        {"self_attn.q_proj.bias", VE, 0, 0},
    {"self_attn.k_proj.weight", VE, VE, 0},        {"self_attn.k_proj.bias", VE, 0, 0},
    {"self_attn.v_proj.weight", VE, VE, 0},        {"self_attn.v_proj.bias", VE, 0, 0},
    {"self_attn.o_proj.weight", VE, VE, 0},        {"self_attn.o_proj.bias", VE, 0, 0},
    {"mlp.dense_h_to_4h.weight", VI, VE, 0},       {"mlp.dense_h_to_4h.bias", VI, 0, 0},
    {"mlp.dense_4h_to_h.weight", VE, VI, 0},       {"mlp.dense_4h_to_h.bias", VE, 0, 0}};

/* The HunYuan-VL checkpoint in the released names: the LM, `layers` tower layers, the
 * embeddings, the perceive merger (opt: O_HEAD with lm_head, O_NOSEP without image_sep, O_BAD2
 * with proj.0 3 VE wide, O_BADMLP with mlp [hid, 2 VE], O_VLLM with a tensor in vLLM's own
 * visual. name). */
static tm_model *hv_model(int layers, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, opt);
	add4(m, "vit.embeddings.patch_embedding.weight", VE, 3, 2);
	tm_add2(m, "vit.embeddings.patch_embedding.bias", VE, 0);
	tm_add2(m, "vit.embeddings.position_embedding.weight", VNP, VE);
	tm_layers(m, VB, layers, vit_leaves, TM_NLEAVES(vit_leaves), 0);
	int64_t two = (opt & O_BAD2) ? 3 * VE : 2 * VE;
	tm_add2(m, P "before_rms.weight", VE, 0);
	add4(m, P "proj.0.weight", two, VE, 2);
	tm_add2(m, P "proj.0.bias", two, 0);
	add4(m, P "proj.2.weight", 4 * VE, two, 1);
	tm_add2(m, P "proj.2.bias", 4 * VE, 0);
	tm_add2(m, P "mlp.weight", HID, (opt & O_BADMLP) ? 2 * VE : 4 * VE);
	tm_add2(m, P "mlp.bias", HID, 0);
	tm_add2(m, P "image_newline", 4 * VE, 0);
	tm_add2(m, P "image_begin", HID, 0);
	tm_add2(m, P "image_end", HID, 0);
	if (!(opt & O_NOSEP))
		tm_add2(m, P "image_sep", HID, 0);
	tm_add2(m, P "after_rms.weight", HID, 0);
	if (opt & O_VLLM)
		tm_add2(m, "visual.perceive.image_sep", HID, 0);
	return m;
}

static tm_model *text_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, 0);
	return m;
}

static const char *const whole[] = {
    "vit.embeddings.patch_embedding.weight",
    "vit.embeddings.patch_embedding.bias",
    "vit.embeddings.position_embedding.weight",
    P "before_rms.weight",
    P "proj.0.weight",
    P "proj.0.bias",
    P "proj.2.weight",
    P "proj.2.bias",
    P "mlp.weight",
    P "mlp.bias",
    P "image_newline",
    P "image_begin",
    P "image_end",
    P "image_sep",
    P "after_rms.weight",
    L1 "self_attn.query_layernorm.weight",
    L1 "self_attn.key_layernorm.weight",
};

/* Tower layer blk of rank r of T by hand. */
static void vit_layer_is(const fx *f, uint32_t T, uint32_t r, int blk)
{
	char p[64], n[160], q[160], k[160], v[160];
	snprintf(p, sizeof(p), VB, blk);
	static const char *const leaf[] = {"weight", "bias"};
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), "%sself_attn.qkv.%s", p, leaf[w]);
		snprintf(q, sizeof(q), "%sself_attn.q_proj.%s", p, leaf[w]);
		snprintf(k, sizeof(k), "%sself_attn.k_proj.%s", p, leaf[w]);
		snprintf(v, sizeof(v), "%sself_attn.v_proj.%s", p, leaf[w]);
		shp(f, r, n, w ? 1 : 2, 3 * VE / T, w ? 0 : VE, 0);
		fx_qkv_is(f, r, T, n, q, k, v, 8, 8, VE / 8);
		snprintf(n, sizeof(n), "%smlp.dense_h_to_4h.%s", p, leaf[w]);
		shp(f, r, n, w ? 1 : 2, VI / T, w ? 0 : VE, 0);
		rows_at(f, r, n, 0, n, r * VI / T, VI / T);
	}
	snprintf(n, sizeof(n), "%sself_attn.o_proj.weight", p);
	cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), "%smlp.dense_4h_to_h.weight", p);
	cols_of(f, r, T, n, n, VE, VI);
	static const char *const rep[] = {
	    "input_layernorm.weight",          "input_layernorm.bias",
	    "post_attention_layernorm.weight", "post_attention_layernorm.bias",
	    "self_attn.o_proj.bias",           "mlp.dense_4h_to_h.bias"};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++) {
		snprintf(n, sizeof(n), "%s%s", p, rep[j]);
		repl(f, r, n);
	}
}

/* Rank r of T by hand: the tower's layers, the whole tensors, the LM's layer 1 and
 * embedding, the rank's count (tied: no lm_head). */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		vit_layer_is(f, T, r, blk);
	for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
		repl(f, r, whole[j]);
	assert_int_equal(info(f, r, P "proj.0.weight")->ndim, 4);
	assert_int_equal(info(f, r, P "proj.2.weight")->ndim, 4);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, "model.embed_tokens.weight", V, VP, HID);
	assert_int_equal(tm_ix(f->p, r, "lm_head.weight"), -1);
	/* 2 layers x 12, the embeddings' 3, perceive's 12; the LM's 2 + 2 layers x 8 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 3 + 12 + 2 + 2 * 8);
}

/* The language model's keys in a text_config (HunYuanVLConfig reads them from there when
 * given, the top level otherwise): the same cut. */
static const char text_config_cfg[] =
    "{\"architectures\":[\"" ARCH "\"],\"model_type\":\"hunyuan_vl\",\"text_config\":{"
    "\"model_type\":\"hunyuan_vl_text\"," TIED LMK "}," VKEYS("8", "128", "4") "}";

/* TP 2 and 4 by hand; the tied lm_head skipped when present; the text_config layout. */
static void test_hv_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, hv_model(2, 0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "hunyuan_vl");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_true(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
	fx f;
	fx_open(&f, hv_model(2, O_HEAD), cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		rank_is(&f, 2, r);
	assert_true(fx_skipped(&f, "lm_head.weight"));
	assert_int_equal(shardmap_n_skipped(f.p), 1);
	fx_close(&f);
	fx_open(&f, hv_model(2, 0), text_config_cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		rank_is(&f, 2, r);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* Every rank's outputs outside vit.* equal byte for byte the hunyuan_v1_dense family's ranks
 * of the same weights as a HunYuanDenseV1ForCausalLM checkpoint, no more, no fewer. */
static const char *const not_lm[] = {"vit.", NULL};

/* TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4. */
static void test_hv_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[j].tp;
		l.quant = lays[j].q;
		fx a, b;
		fx_open_l(&a, hv_model(2, 0), cfg, &l, true);
		fx_open_l(&b, text_model(), text_cfg, &l, true);
		assert_string_equal(shardmap_family(b.p), "hunyuan_v1_dense");
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank_but(&a, &b, r, not_lm, "hunyuan_v1_dense");
		fx_close(&a);
		fx_close(&b);
	}
}

/* The tower's Linears (given the quant_config) and the LM's quantized; the merger (plain
 * torch modules), the embeddings, norms and biases kept BF16: int8-channel TP 2 (rank 1's
 * o_proj / dense_4h_to_h codes by columns), fp8-channel TP 4. */
static void test_hv_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {"vit.embeddings.patch_embedding.weight",
	                                   "vit.embeddings.position_embedding.weight",
	                                   "vit.layers.1.self_attn.qkv.bias",
	                                   "vit.layers.0.input_layernorm.weight",
	                                   P "proj.0.weight",
	                                   P "proj.2.weight",
	                                   P "mlp.weight",
	                                   P "mlp.bias",
	                                   P "image_newline",
	                                   P "after_rms.weight",
	                                   "model.embed_tokens.weight",
	                                   L1 "self_attn.query_layernorm.weight"};
	static const char *const q[] = {"vit.layers.0.self_attn.qkv.weight",
	                                "vit.layers.1.self_attn.o_proj.weight",
	                                "vit.layers.1.mlp.dense_h_to_4h.weight",
	                                "vit.layers.1.mlp.dense_4h_to_h.weight",
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight",
	                                L1 "mlp.gate_up_proj.weight"};
	fx f;
	fx_open_quant(&f, hv_model(2, 0), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_cols_int8_is(&f, 1, 2, "vit.layers.1.self_attn.o_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, "vit.layers.1.mlp.dense_4h_to_h.weight", VE, VI);
	fx_close(&f);
	fx_open_quant(&f, hv_model(2, 0), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8. */
static void test_hv_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(hv_model(2, O_HEAD), cfg, 2, lays, 4);
}

/* config.json read: the top-level LM keys, vision_config's with the derived position rows and
 * merger width; HunYuanVLVisionConfig's defaults for an empty vision_config and
 * HunYuanVLTextConfig's for absent LM keys (use_qk_norm false: vLLM's getattr default). */
static void test_hv_config(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse(cfg, &c);
	assert_string_equal(c.architecture, ARCH);
	assert_true(c.has_vision);
	assert_int_equal(c.hidden_size, HID);
	assert_int_equal(c.head_dim, HD);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_true(c.use_qk_norm);
	assert_true(c.tie_word_embeddings);
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_intermediate_size, VI);
	assert_int_equal(c.v_num_layers, 2);
	assert_int_equal(c.v_num_attn_heads, 8);
	assert_int_equal(c.v_patch_size, 2);
	assert_int_equal(c.v_num_pos, VNP);
	assert_int_equal(c.v_proj_in_dim, 4 * VE);
	assert_int_equal(c.v_out_hidden_size, HID);
	ckpt_config_clear(&c);
	tm_parse("{\"architectures\":[\"" ARCH "\"],\"model_type\":\"hunyuan_vl\","
	         "\"vision_config\":{}}",
	         &c);
	assert_int_equal(c.v_hidden_size, 1152);
	assert_int_equal(c.v_intermediate_size, 4304);
	assert_int_equal(c.v_num_layers, 27);
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_int_equal(c.v_patch_size, 16);
	assert_int_equal(c.v_out_hidden_size, 4096);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_int_equal(c.v_num_pos, 128 * 128 + 1);
	assert_int_equal(c.v_proj_in_dim, 4 * 1152);
	assert_int_equal(c.vocab_size, 290943);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.intermediate_size, 11008);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_int_equal(c.num_attention_heads, 32);
	assert_int_equal(c.num_key_value_heads, 32);
	assert_false(c.use_qk_norm);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
}

/* The refusals, each naming its key or tensor. */
static void test_hv_errors(void **state)
{
	(void)state;
	fx_refused(hv_model(2, 0), CFGL(TIED, "\"x\":0"), WT_ECORRUPT, ARCH, "needs vision_config");
	fx_refused(hv_model(2, 0), CFGL(TIED, "\"vision_config\":[]"), WT_ECORRUPT, "vision_config",
	           "not an object");
	fx_refused(hv_model(2, 0), CFGL("", VKEYS("8", "128", "4")), WT_EUNSUPPORTED,
	           "tie_word_embeddings false", "lm_head");
	fx_refused(hv_model(2, 0), CFGL(TIED "\"num_experts\":4,", VKEYS("8", "128", "4")),
	           WT_EUNSUPPORTED, "num_experts 4", "HunYuanDenseV1ForCausalLM");
	fx_refused(hv_model(2, 0), CFGL(TIED "\"use_cla\":true,", VKEYS("8", "128", "4")),
	           WT_EUNSUPPORTED, "use_cla", "k_proj");
	fx_refused(hv_model(2, 0), CFGL(TIED, VKEYS("6", "128", "4")), WT_ECORRUPT,
	           "num_attention_heads", "64");
	fx_refused(hv_model(2, 0), CFGL(TIED, VKEYS("8", "256", "4")), WT_ECORRUPT,
	           "out_hidden_size 256", "hidden_size 128");
	fx_refused(hv_model(2, 0), CFGL(TIED, VKEYS("8", "128", "1")), WT_ECORRUPT,
	           "max_image_size 1", "patch_size 2");
	fx_refused(hv_model(2, 0), CFGL(TIED, VKEYS("8", "128", "6")), WT_ESHAPE,
	           "position_embedding", "");
	/* tp_size must divide the LM's heads (8 at TP 16) and the tower's (4 at TP 8) */
	fx_refused_tp(hv_model(2, 0), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
	fx_refused_tp(hv_model(2, 0), CFGL(TIED, VKEYS("4", "128", "4")), 8, WT_ELAYOUT,
	              "tp_size 8", "vision_config.num_attention_heads 4");
	/* shapes and names: the merger's 2 VE / 4 VE, a missing image_sep, a layer past the
	 * count, a missing one */
	fx_refused(hv_model(2, O_BAD2), cfg, WT_ESHAPE, P "proj.", "");
	fx_refused(hv_model(2, O_BADMLP), cfg, WT_ESHAPE, P "mlp.weight", "");
	fx_refused(hv_model(2, O_NOSEP), cfg, WT_ENOTFOUND, P "image_sep", "");
	fx_refused(hv_model(3, 0), cfg, WT_ESHAPE, "vit.layers.2.", "num_hidden_layers is 2");
	fx_refused(hv_model(1, 0), cfg, WT_ENOTFOUND, "vit.layers.1.", "");
	/* only the released vit. / model. names are cut (see docs/format.md) */
	fx_refused(hv_model(2, O_VLLM), cfg, WT_EUNSUPPORTED, "visual.perceive.image_sep", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hv_slices), cmocka_unit_test(test_hv_same_lm),
	    cmocka_unit_test(test_hv_quant),  cmocka_unit_test(test_hv_coverage),
	    cmocka_unit_test(test_hv_config), cmocka_unit_test(test_hv_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
