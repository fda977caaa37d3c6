/*
 * test_shardmap_nano_vl.c — Nemotron Nano VL v2 (NemotronH_Nano_VL_V2; docs/format.md section
 * 2.7), cut as vLLM's nano_nemotron_vl.py / radio.py / intern_vit.py / nemotron_h.py load it:
 * the RADIO block's rank slices by hand at TP 2 (its 6 heads split: attn.qkv [q_r; k_r; v_r]
 * with its bias, attn.proj by columns) and TP 4 (6 heads do not divide 4: qkv / proj whole),
 * mlp.fc1 by rows, fc2 by columns, the patch generator and mlp1 whole; ls1 / ls2,
 * summary_idxs, input_conditioner.* and the video embedder (T 1) skipped; nothing in the tower
 * or mlp1 quantized (RadioModel without the quant_config, plain nn.Linear); the language model
 * under language_model. byte for byte the nemotron_h family's ranks of the same weights (TP 1 /
 * 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4); coverage; the config read; the refusals.
 * Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x6e616e6full
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"

/* the LM: Nemotron-H hid 64, "M-M*-" (test_shardmap_nemotron_h.c's), V 1003; the tower:
 * vit_small_patch16_224 (384 wide, 12 blocks, 6 heads, MLP 1536), patch 2 (12 columns);
 * mlp1: VM 384 x 2^2 = 1536, projector_hidden_size 96 */
#define HID 64
#define VE  384
#define VI  1536
#define NB  12
#define VM  1536
#define PH  96
#define LM  "language_model."
#define RM  "vision_model.radio_model."
#define PG  RM "model.patch_generator."
#define VB  RM "model.blocks.%d."

#define ARCH "NemotronH_Nano_VL_V2"
#define NH_KEYS                                                                                    \
	"\"hidden_size\":64,\"vocab_size\":1003,\"num_attention_heads\":4,"                        \
	"\"num_key_value_heads\":2,\"mamba_num_heads\":8,\"mamba_head_dim\":16,"                   \
	"\"ssm_state_size\":16,\"conv_kernel\":4,\"num_hidden_layers\":5,"                         \
	"\"hybrid_override_pattern\":\"M-M*-\",\"intermediate_size\":128,"                         \
	"\"attention_head_dim\":16,\"n_groups\":4"
#define TEXT                                                                                       \
	"\"text_config\":{\"architectures\":[\"NemotronHForCausalLM\"],\"model_type\":"            \
	"\"nemotron_h\"," NH_KEYS "}"
/* vis: vision_config's members after args; top: the top level's mlp1 keys */
#define VIS(model, args, rest)                                                                     \
	"\"vision_config\":{\"model_type\":\"radio\",\"args\":{\"model\":\"" model "\"" args       \
	"},\"patch_size\":2" rest "}"
#define TOP(vh, ph) "\"vit_hidden_size\":" vh ",\"projector_hidden_size\":" ph
#define CFGA(vis, top)                                                                             \
	"{\"architectures\":[\"" ARCH "\"],\"model_type\":\"" ARCH "\"," TEXT "," vis "," top "}"
#define CFG_T(rest) CFGA(VIS("vit_small_patch16_224", "", rest), TOP("384", "96"))

static const char cfg[] = CFG_T("");
static const char text_cfg[] = "{\"architectures\":[\"NemotronHForCausalLM\"],\"model_type\":"
                               "\"nemotron_h\"," NH_KEYS "}";

/* nv_model options */
enum {
	O_BARE = 1,   /* the LM without language_model. */
	O_SOUND = 2,  /* a sound_encoder.* tensor */
	O_VIDEO = 4,  /* patch_generator.video_embedder.weight for T 2 */
	O_NOBIAS = 8, /* attn.qkv without its bias */
	O_PH = 16,    /* mlp1.1 of 2 x projector_hidden_size rows */
	O_PATCH = 32, /* the embedder of 3 x 3^2 columns */
};

static void add_l(tm_model *m, const char *lm, int i, const char *leaf, int64_t a, int64_t b)
{
	char n[200];
	snprintf(n, sizeof(n), "%sbackbone.layers.%d.%s", lm, i, leaf);
	tm_add2(m, n, a, b);
}

static void add_mamba(tm_model *m, const char *lm, int i)
{
	int64_t nc = 128 + 2 * 4 * 16, rows = 128 + nc + 8;
	char b[200];
	add_l(m, lm, i, "mixer.in_proj.weight", rows, HID);
	snprintf(b, sizeof(b), "%sbackbone.layers.%d.mixer.conv1d.weight", lm, i);
	tm_add(m, b, WT_DTYPE_INVALID, 3, nc, 1, 4);
	add_l(m, lm, i, "mixer.conv1d.bias", nc, 0);
	add_l(m, lm, i, "mixer.A_log", 8, 0);
	add_l(m, lm, i, "mixer.D", 8, 0);
	add_l(m, lm, i, "mixer.dt_bias", 8, 0);
	add_l(m, lm, i, "mixer.norm.weight", 128, 0);
	add_l(m, lm, i, "mixer.out_proj.weight", HID, 128);
}

/* Nemotron-H's "M-M*-" under lm. */
static void add_lm(tm_model *m, const char *lm)
{
	char b[200];
	snprintf(b, sizeof(b), "%sbackbone.embeddings.weight", lm);
	tm_add2(m, b, 1003, HID);
	snprintf(b, sizeof(b), "%sbackbone.norm_f.weight", lm);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%slm_head.weight", lm);
	tm_add2(m, b, 1003, HID);
	for (int i = 0; i < 5; i++)
		add_l(m, lm, i, "norm.weight", HID, 0);
	add_mamba(m, lm, 0);
	add_mamba(m, lm, 2);
	for (int i = 1; i < 5; i += 3) {
		add_l(m, lm, i, "mixer.up_proj.weight", 128, HID);
		add_l(m, lm, i, "mixer.down_proj.weight", HID, 128);
	}
	add_l(m, lm, 3, "mixer.q_proj.weight", 64, HID);
	add_l(m, lm, 3, "mixer.k_proj.weight", 32, HID);
	add_l(m, lm, 3, "mixer.v_proj.weight", 32, HID);
	add_l(m, lm, 3, "mixer.o_proj.weight", HID, 64);
}

/* The RADIO block's leaves (opt drops the switched-off ones); ls1 / ls2 skipped by vLLM. */
static const tm_leaf blk[] = {
    {"attn.qkv.weight", 3 * VE, VE, 0},
    {"attn.qkv.bias", 3 * VE, 0, O_NOBIAS},
    {"attn.proj.weight", VE, VE, 0},
    {"attn.proj.bias", VE, 0, 0},
    {"mlp.fc1.weight", VI, VE, 0},
    {"mlp.fc1.bias", VI, 0, 0},
    {"mlp.fc2.weight", VE, VI, 0},
    {"mlp.fc2.bias", VE, 0, 0},
    {"norm1.weight", VE, 0, 0},
    {"norm1.bias", VE, 0, 0},
    {"norm2.weight", VE, 0, 0},
    {"norm2.bias", VE, 0, 0},
    {"ls1", VE, 0, 0},
    {"ls2", VE, 0, 0},
};

static tm_model *nv_model(unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, (opt & O_BARE) ? "" : LM);
	tm_add2(m, PG "embedder.weight", VE, (opt & O_PATCH) ? 27 : 12);
	tm_add(m, PG "pos_embed", WT_DTYPE_INVALID, 3, 1, 16, VE);
	tm_add2(m, PG "cls_token.token", 10, VE);
	if (opt & O_VIDEO)
		tm_add2(m, PG "video_embedder.weight", VE, 24);
	tm_layers(m, VB, NB, blk, TM_NLEAVES(blk), (opt & O_NOBIAS) ? 0 : O_NOBIAS);
	tm_add2(m, RM "summary_idxs", 3, 0);
	tm_add2(m, RM "input_conditioner.norm_mean", 3, 0);
	tm_add2(m, RM "feature_normalizer.mean", VE, 0);
	tm_add2(m, "mlp1.0.weight", VM, 0);
	tm_add2(m, "mlp1.1.weight", (opt & O_PH) ? 2 * PH : PH, VM);
	tm_add2(m, "mlp1.3.weight", HID, PH);
	if (opt & O_SOUND)
		tm_add2(m, "sound_encoder.projection.weight", HID, 8);
	return m;
}

static tm_model *text_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "");
	return m;
}

static const char *const whole[] = {PG "embedder.weight", PG "pos_embed",  PG "cls_token.token",
                                    "mlp1.0.weight",      "mlp1.1.weight", "mlp1.3.weight"};
static const char *const blk_whole[] = {"attn.proj.bias", "mlp.fc2.bias", "norm1.weight",
                                        "norm1.bias",     "norm2.weight", "norm2.bias"};

/* Rank r of T's RADIO block b by hand: qkv (weight and bias) the rank's heads of q, k and v
 * when the 6 heads divide T, else whole with proj; proj by columns; fc1 (and bias) by rows,
 * fc2 by columns; the rest whole. */
static void block_is(const fx *f, uint32_t T, uint32_t r, int b)
{
	char pre[100], n[200];
	snprintf(pre, sizeof(pre), VB, b);
	for (size_t k = 0; k < sizeof(blk_whole) / sizeof(blk_whole[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", pre, blk_whole[k]);
		repl(f, r, n);
	}
	static const char *const qkv[] = {"attn.qkv.weight", "attn.qkv.bias"};
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), "%s%s", pre, qkv[w]);
		if (6 % T != 0) {
			repl(f, r, n);
			continue;
		}
		int64_t loc = VE / T;
		shp(f, r, n, w ? 1 : 2, 3 * loc, w ? 0 : VE, 0);
		for (int part = 0; part < 3; part++)
			rows_at(f, r, n, part * loc, n, part * VE + r * loc, loc);
	}
	snprintf(n, sizeof(n), "%sattn.proj.weight", pre);
	if (6 % T != 0)
		repl(f, r, n);
	else
		cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), "%smlp.fc1.weight", pre);
	shp(f, r, n, 2, VI / T, VE, 0);
	rows_at(f, r, n, 0, n, r * (VI / T), VI / T);
	snprintf(n, sizeof(n), "%smlp.fc1.bias", pre);
	rows_at(f, r, n, 0, n, r * (VI / T), VI / T);
	snprintf(n, sizeof(n), "%smlp.fc2.weight", pre);
	cols_of(f, r, T, n, n, VE, VI);
}

/* TP 2 and 4 by hand (blocks 0 and 11, the whole tensors, the rank's count: 12 blocks x 12,
 * the 6 whole, the LM's 30); what vLLM skips listed: ls1 / ls2 x 12, summary_idxs,
 * input_conditioner, the feature normalizer. */
static void test_nv_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, nv_model(0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "nano_vl");
		for (uint32_t r = 0; r < T; r++) {
			block_is(&f, T, r, 0);
			block_is(&f, T, r, NB - 1);
			for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
				repl(&f, r, whole[j]);
			fx_vocab_is(&f, r, T, LM "backbone.embeddings.weight", 1003, 1024, HID);
			fx_vocab_is(&f, r, T, LM "lm_head.weight", 1003, 1024, HID);
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), NB * 12 + 6 + 30);
		}
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2 * NB + 3);
		assert_true(fx_skipped(&f, RM "model.blocks.3.ls1"));
		assert_true(fx_skipped(&f, RM "summary_idxs"));
		assert_true(fx_skipped(&f, RM "input_conditioner.norm_mean"));
		assert_true(fx_skipped(&f, RM "feature_normalizer.mean"));
		fx_close(&f);
	}
}

/* Every rank's outputs outside vision_model. / mlp1. equal byte for byte, less language_model.,
 * the nemotron_h family's ranks of the same weights; TP 1 / 2 / 4, int8-channel TP 2,
 * fp8-channel TP 4. */
static void test_nv_same_lm(void **state)
{
	(void)state;
	static const char *const not_lm[] = {"vision_model.", "mlp1.", NULL};
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE},
	            {2, WT_QUANT_NONE},
	            {4, WT_QUANT_NONE},
	            {2, WT_QUANT_INT8_CHANNEL},
	            {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[j].tp;
		l.quant = lays[j].q;
		fx a, b;
		fx_open_l(&a, nv_model(0), cfg, &l, true);
		fx_open_l(&b, text_model(), text_cfg, &l, true);
		assert_string_equal(shardmap_family(b.p), "nemotron_h");
		for (uint32_t r = 0; r < l.tp_size; r++)
			fx_same_rank_strip(&a, &b, r, not_lm, LM, "nemotron_h");
		fx_close(&a);
		fx_close(&b);
	}
}

/* Nothing in the tower or mlp1 quantized (RadioModel built without the quant_config, mlp1's
 * plain nn.Linear); the LM's Linears quantized: int8-channel TP 2, fp8-channel TP 4. */
static void test_nv_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {RM "model.blocks.0.attn.qkv.weight",
	                                   RM "model.blocks.1.attn.proj.weight",
	                                   RM "model.blocks.5.mlp.fc1.weight",
	                                   RM "model.blocks.11.mlp.fc2.weight",
	                                   PG "embedder.weight",
	                                   "mlp1.1.weight",
	                                   "mlp1.3.weight",
	                                   LM "backbone.embeddings.weight"};
	static const char *const q[] = {LM "backbone.layers.0.mixer.in_proj.weight",
	                                LM "backbone.layers.3.mixer.qkv_proj.weight",
	                                LM "backbone.layers.3.mixer.o_proj.weight",
	                                LM "backbone.layers.1.mixer.down_proj.weight"};
	fx f;
	fx_open_quant(&f, nv_model(0), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep), FX_N(q));
	fx_requant(&f, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep), FX_N(q)); /* written once */
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 (the LM's 4 attention heads). */
static void test_nv_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(nv_model(0), cfg, 2, lays, 3);
}

/* The video embedder: served whole with video_temporal_patch_size 2 ([VE, 3 x 2 x 2^2]),
 * skipped with T 1; qkv_bias false: attn.qkv without its bias. */
static void test_nv_video_bias(void **state)
{
	(void)state;
	static const char t2[] = CFG_T(",\"video_temporal_patch_size\":2");
	fx f;
	fx_open(&f, nv_model(O_VIDEO), t2, 2, 1, 0, true);
	repl(&f, 1, PG "video_embedder.weight");
	fx_close(&f);
	fx_open(&f, nv_model(O_VIDEO), cfg, 2, 1, 0, false);
	assert_true(fx_skipped(&f, PG "video_embedder.weight"));
	fx_close(&f);
	static const char nob[] =
	    CFGA(VIS("vit_small_patch16_224", ",\"qkv_bias\":false", ""), TOP("384", "96"));
	fx_open(&f, nv_model(O_NOBIAS), nob, 2, 1, 0, false);
	fx_close(&f);
}

/* config.json read: text_config's Nemotron-H, RADIO's sizes by args.model, the mlp1 keys. */
static void test_nv_config(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse(cfg, &c);
	assert_string_equal(c.architecture, ARCH);
	assert_true(c.has_vision);
	assert_int_equal(c.hidden_size, HID);
	assert_int_equal(c.num_hidden_layers, 5);
	assert_int_equal(c.v_hidden_size, 384);
	assert_int_equal(c.v_num_layers, 12);
	assert_int_equal(c.v_num_attn_heads, 6);
	assert_int_equal(c.v_intermediate_size, 1536);
	assert_int_equal(c.v_patch_size, 2);
	assert_int_equal(c.v_temporal_patch_size, 1);
	assert_int_equal(c.v_spatial_merge_size, 2);
	assert_int_equal(c.v_proj_in_dim, PH);
	assert_true(c.v_attn_bias);
	assert_false(c.v_qk_norm);
	assert_true(c.v_norm_ln);
	ckpt_config_clear(&c);
	tm_parse(CFGA(VIS("vit_huge_patch16_224", "", ""), TOP("1280", "20480")), &c);
	assert_int_equal(c.v_hidden_size, 1280);
	assert_int_equal(c.v_num_layers, 32);
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_int_equal(c.v_intermediate_size, 5120);
	ckpt_config_clear(&c);
}

/* The config refusals, each naming its key. */
static void test_nv_config_errors(void **state)
{
	(void)state;
	fx_refused(nv_model(0), CFGA(VIS("vit_giant_patch14", "", ""), TOP("384", "96")),
	           WT_EUNSUPPORTED, "args.model 'vit_giant_patch14'", "VIT_TIMM_DIM_BY_NAME");
	fx_refused(nv_model(0), CFGA("\"vision_config\":7", TOP("384", "96")), WT_ECORRUPT,
	           "vision_config is not an object", "args.model");
	fx_refused(nv_model(0), CFGA(VIS("vit_small_patch16_224", "", ""), TOP("1280", "96")),
	           WT_ECORRUPT, "vit_hidden_size 1280", "give 384");
	fx_refused(nv_model(0),
	           CFGA(VIS("vit_small_patch16_224", "", ""), "\"vit_hidden_size\":384"),
	           WT_ECORRUPT, "projector_hidden_size is missing", "");
	fx_refused(nv_model(0),
	           CFGA(VIS("vit_small_patch16_224", "", ""),
	                TOP("384", "96") ",\"downsample_ratio\":0.3"),
	           WT_ECORRUPT, "downsample_ratio 0.3", "1 / n");
	fx_refused(nv_model(0),
	           CFG_T(",\"video_temporal_patch_size\":2,\"separate_video_embedder\":false"),
	           WT_EUNSUPPORTED, "separate_video_embedder false", "");
	fx_refused(nv_model(0),
	           CFGA(VIS("vit_small_patch16_224", ",\"norm_type\":\"batch_norm\"", ""),
	                TOP("384", "96")),
	           WT_ECORRUPT, "args.norm_type", "layer_norm");
	fx_refused(nv_model(0),
	           CFGA("\"vision_config\":{\"args\":{\"model\":\"vit_small_patch16_224\"},"
	                "\"patch_size\":4096}",
	                TOP("384", "96")),
	           WT_ECORRUPT, "patch_size 4096", "at most 1024");
}

/* The checkpoint refusals, each naming its tensor. */
static void test_nv_errors(void **state)
{
	(void)state;
	fx_refused(nv_model(O_PH), cfg, WT_ESHAPE, "mlp1.1.weight': rows 192",
	           "projector_hidden_size = 96");
	fx_refused(nv_model(O_PATCH), cfg, WT_ESHAPE, "embedder.weight': columns 27", "= 12");
	fx_refused(nv_model(O_BARE), cfg, WT_EUNSUPPORTED, "'backbone.", "language_model.");
	fx_refused(nv_model(O_SOUND), cfg, WT_EUNSUPPORTED, "sound_encoder.projection.weight",
	           "Parakeet");
	/* qkv_bias true (RadioConfig's default) and no bias: missing */
	fx_refused(nv_model(O_NOBIAS), cfg, WT_ENOTFOUND, "attn.qkv.bias", "");
	/* the LM's own: tp_size 16 past Nemotron-H's 8 Mamba heads */
	fx_refused_tp(nv_model(0), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nv_slices),        cmocka_unit_test(test_nv_same_lm),
	    cmocka_unit_test(test_nv_quant),         cmocka_unit_test(test_nv_coverage),
	    cmocka_unit_test(test_nv_video_bias),    cmocka_unit_test(test_nv_config),
	    cmocka_unit_test(test_nv_config_errors), cmocka_unit_test(test_nv_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
