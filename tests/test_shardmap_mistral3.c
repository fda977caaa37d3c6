/*
 * test_shardmap_mistral3.c — Mistral 3 multimodal (Mistral3ForConditionalGeneration,
 * docs/format.md section 2.7): the Pixtral tower's and the projector's rank slices computed
 * by hand at TP 2 and 4 (q/k/v fused by vision heads into attention.qkv_proj, o_proj and
 * down_proj by columns, gate / up merged by rows into feed_forward.gate_up_proj, linear_1 by
 * rows with its bias, linear_2 by columns with its bias replicated, the norms, patch_conv and
 * patch_merger.merging_layer replicated byte for byte), the language model as Mistral's (same
 * bytes under `language_model.`), the released and the transformers >= 4.52 layouts giving
 * the same shards, coverage at TP 1, 2, 4, PixtralVisionConfig's and MistralConfig's
 * defaults, what is quantized, and the refusals (multimodal_projector_bias against the
 * biases present, a block past num_hidden_layers, mixed layouts, the merger's width,
 * heads TP does not divide, a list vision_feature_layer, no vision_config). Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x3a15f3ull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 4, KV 2, d 24 (H*d 96, KV*d 48), I 128, V 128, L 1, untied. Vision: 2
 * blocks, width 32, 4 heads, MLP 64, patch 2, 3 channels; merger 32 x 2^2 = 128. */
#define HID 64
#define VE  32
#define VI  64
#define VM  128

#define LM_KEYS                                                                                    \
	"\"model_type\":\"mistral\",\"hidden_size\":64,\"num_attention_heads\":4,"                 \
	"\"num_key_value_heads\":2,\"head_dim\":24,\"intermediate_size\":128,"                     \
	"\"vocab_size\":128,\"num_hidden_layers\":1"
#define VISION_CFG(keys) ",\"vision_config\":{\"model_type\":\"pixtral\"" keys "}}"
#define VISION_KEYS                                                                                \
	",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":4,"                  \
	"\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2,\"num_channels\":3"
#define CFG_HEAD(top)                                                                              \
	"{\"architectures\":[\"Mistral3ForConditionalGeneration\"],\"model_type\":\"mistral3\","   \
	"\"spatial_merge_size\":2," top "\"text_config\":{" LM_KEYS "}"
static const char cfg_m3[] = CFG_HEAD("") VISION_CFG(VISION_KEYS);
static const char cfg_m3_bias[] =
    CFG_HEAD("\"multimodal_projector_bias\":true,") VISION_CFG(VISION_KEYS);
static const char cfg_text[] = "{\"architectures\":[\"MistralForCausalLM\"]," LM_KEYS "}";
/* LightOnOCR-1B's: a qwen3 text_config (vLLM builds Qwen3ForCausalLM of it) */
#define QW3_KEYS                                                                                   \
	"\"model_type\":\"qwen3\",\"hidden_size\":64,\"num_attention_heads\":4,"                   \
	"\"num_key_value_heads\":2,\"head_dim\":24,\"intermediate_size\":128,"                     \
	"\"vocab_size\":128,\"num_hidden_layers\":1"
static const char cfg_qw3[] = "{\"architectures\":[\"Mistral3ForConditionalGeneration\"],"
                              "\"model_type\":\"mistral3\",\"spatial_merge_size\":2,"
                              "\"text_config\":{" QW3_KEYS "}" VISION_CFG(VISION_KEYS);
static const char cfg_qw3_text[] = "{\"architectures\":[\"Qwen3ForCausalLM\"]," QW3_KEYS "}";

#define VT "vision_tower."
#define VB VT "transformer.layers.%d."
#define PJ "multi_modal_projector."

static const struct {
	const char *leaf;
	int64_t n, k;
} block[] = {
    {"attention_norm.weight", VE, 0},          {"attention.q_proj.weight", VE, VE},
    {"attention.k_proj.weight", VE, VE},       {"attention.v_proj.weight", VE, VE},
    {"attention.o_proj.weight", VE, VE},       {"ffn_norm.weight", VE, 0},
    {"feed_forward.gate_proj.weight", VI, VE}, {"feed_forward.up_proj.weight", VI, VE},
    {"feed_forward.down_proj.weight", VE, VI},
};

/* The language model (values first: the same in every layout and as Mistral's; Qwen3's per-head
 * q_norm / k_norm too when qk), then, unless text-only, the tower of `blocks` blocks and the
 * projector (biases if bias). */
static tm_model *m3_model_lm(lay y, bool bias, int blocks, bool qk)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} lm[] = {{"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	          {"self_attn.q_proj.weight", 96, HID}, {"self_attn.k_proj.weight", 48, HID},
	          {"self_attn.v_proj.weight", 48, HID}, {"self_attn.o_proj.weight", HID, 96},
	          {"mlp.gate_proj.weight", 128, HID},   {"mlp.up_proj.weight", 128, HID},
	          {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
		char b[200];
		snprintf(b, sizeof(b), "model.layers.0.%s", lm[k].leaf);
		mm_add(m, y, b, lm[k].n, lm[k].k);
	}
	if (qk) {
		mm_add(m, y, "model.layers.0.self_attn.q_norm.weight", 24, 0);
		mm_add(m, y, "model.layers.0.self_attn.k_norm.weight", 24, 0);
	}
	mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	char pe[200];
	mm_ck_name(pe, sizeof(pe), VT "patch_conv.weight", y);
	tm_add(m, pe, WT_DTYPE_INVALID, 1, VE * 3 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 2;
	mm_add(m, y, VT "ln_pre.weight", VE, 0);
	for (int blk = 0; blk < blocks; blk++)
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++) {
			char b[200];
			snprintf(b, sizeof(b), VB "%s", blk, block[k].leaf);
			mm_add(m, y, b, block[k].n, block[k].k);
		}
	mm_add(m, y, PJ "norm.weight", VE, 0);
	mm_add(m, y, PJ "patch_merger.merging_layer.weight", VE, VM);
	mm_add(m, y, PJ "linear_1.weight", HID, VE);
	mm_add(m, y, PJ "linear_2.weight", HID, HID);
	if (bias) {
		mm_add(m, y, PJ "linear_1.bias", HID, 0);
		mm_add(m, y, PJ "linear_2.bias", HID, 0);
	}
	return m;
}

static tm_model *m3_model(lay y, bool bias, int blocks)
{
	return m3_model_lm(y, bias, blocks, false);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r, bool bias)
{
	for (int blk = 0; blk < 2; blk++)
		fx_pixtral_block(f, T, r, VB, blk, VE, VI);
	static const char *const rep[] = {VT "patch_conv.weight", VT "ln_pre.weight",
	                                  PJ "norm.weight", PJ "patch_merger.merging_layer.weight"};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
		repl(f, r, rep[j]);
	assert_int_equal(info(f, r, VT "patch_conv.weight")->ndim, 4);
	int64_t hl = HID / T;
	shp(f, r, PJ "linear_1.weight", 2, hl, VE, 0);
	rows_at(f, r, PJ "linear_1.weight", 0, PJ "linear_1.weight", r * hl, hl);
	cols_of(f, r, T, PJ "linear_2.weight", PJ "linear_2.weight", HID, HID);
	if (bias) {
		shp(f, r, PJ "linear_1.bias", 1, hl, 0, 0);
		rows_at(f, r, PJ "linear_1.bias", 0, PJ "linear_1.bias", r * hl, hl);
		repl(f, r, PJ "linear_2.bias");
	} else {
		assert_int_equal(tm_ix(f->p, r, PJ "linear_1.bias"), -1);
		assert_int_equal(tm_ix(f->p, r, PJ "linear_2.bias"), -1);
	}
	/* LM: H 4 KV 2 d 24; TP 2: kv head r, TP 4: kv head r/2 replicated */
	const char *lq = "language_model.model.layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 96 / T, kvh = T == 2 ? r : r / 2;
	shp(f, r, lq, 2, ql + 48, HID, 0);
	rows_at(f, r, lq, 0, "language_model.model.layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, "language_model.model.layers.0.self_attn.k_proj.weight", kvh * 24,
	        24);
	rows_at(f, r, lq, ql + 24, "language_model.model.layers.0.self_attn.v_proj.weight",
	        kvh * 24, 24);
	cols_of(f, r, T, "language_model.model.layers.0.self_attn.o_proj.weight",
	        "language_model.model.layers.0.self_attn.o_proj.weight", HID, 96);
	assert_true(tm_ix(f->p, r, "language_model.lm_head.weight") >= 0); /* untied */
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++)
		for (int bias = 0; bias < 2; bias++) {
			fx f;
			fx_open(&f, m3_model(LAY_V450, bias, 2), bias ? cfg_m3_bias : cfg_m3,
			        tps[i], 1, 0, true);
			for (uint32_t r = 0; r < tps[i]; r++)
				check_rank(&f, tps[i], r, bias);
			assert_false(shardmap_tied_lm_head(f.p));
			fx_close(&f);
		}
}

/* Released and >= 4.52 layouts: the same shards; the language model is Mistral's (or Qwen3's)
 * under `language_model.`. */
static void test_layouts_and_text(void **state)
{
	(void)state;
	for (int bias = 0; bias < 2; bias++) {
		const char *cfg = bias ? cfg_m3_bias : cfg_m3;
		fx_same_layouts(m3_model(LAY_V450, bias, 2), m3_model(LAY_HF5, bias, 2), cfg,
		                m3_model(LAY_TEXT, bias, 0), cfg_text, 2, 1, "language_model.");
	}
	/* a qwen3 text_config: Qwen3's q_norm / k_norm replicated, the rest as Qwen3's own */
	for (uint32_t T = 1; T <= 4; T *= 2)
		fx_same_layouts(m3_model_lm(LAY_V450, false, 2, true),
		                m3_model_lm(LAY_HF5, false, 2, true), cfg_qw3,
		                m3_model_lm(LAY_TEXT, false, 0, true), cfg_qw3_text, T, 1,
		                "language_model.");
	/* a mistral text_config has no q / k norms: a checkpoint with them is refused */
	wt_errbuf err = {0};
	assert_int_not_equal(plan_err(m3_model_lm(LAY_V450, false, 2, true), cfg_m3, &err), WT_OK);
	assert_non_null(strstr(err.msg, "q_norm"));
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(m3_model(LAY_V450, false, 2), cfg_m3, 2, lays, 3);
	coverage(m3_model(LAY_HF5, true, 2), cfg_m3_bias, 2, lays, 3);
}

/* vision_config with only its width keys: PixtralVisionConfig's patch 16 ([VE, 3, 16, 16])
 * and 24 blocks / 16 heads when those are absent; MistralConfig's defaults for text_config
 * keys left out; spatial_merge_size read at the top level. */
static void test_defaults(void **state)
{
	(void)state;
	tm_model *m = m3_model(LAY_V450, false, 2);
	tm_remove(m, VT "patch_conv.weight");
	tm_add(m, VT "patch_conv.weight", WT_DTYPE_INVALID, 1, VE * 3 * 256, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 16;
	static const char cfg[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":4,"
	               "\"num_hidden_layers\":2");
	fx f;
	fx_open(&f, m, cfg, 2, 1, 0, false);
	const sm_out_info *pc = info(&f, 1, VT "patch_conv.weight");
	assert_true(pc->ndim == 4 && pc->shape[0] == VE && pc->shape[1] == 3 &&
	            pc->shape[2] == 16 && pc->shape[3] == 16);
	fx_close(&f);
	wt_errbuf err = {0};
	static const char cfg24[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":4,"
	               "\"patch_size\":2");
	assert_int_equal(plan_err(m3_model(LAY_V450, false, 2), cfg24, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "vision_config.num_hidden_layers 24"));
	/* 16 heads by default: TP 2 divides them, width 32 of 16 heads of 2 */
	static const char cfg16[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_hidden_layers\":2,"
	               "\"patch_size\":2");
	fx_open(&f, m3_model(LAY_V450, false, 2), cfg16, 2, 1, 0, false);
	fx_close(&f);
	/* MistralConfig's class defaults under mistral3 (its text_config says mistral) */
	static const char cls[] =
	    "{\"architectures\":[\"Mistral3ForConditionalGeneration\"],\"model_type\":\"mistral3\","
	    "\"spatial_merge_size\":3,\"text_config\":{\"model_type\":\"mistral\"},"
	    "\"vision_config\":{\"model_type\":\"pixtral\"}}";
	ckpt_config c;
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.hidden_size == 4096 && c.num_attention_heads == 32 &&
	            c.num_key_value_heads == 8 && c.intermediate_size == 14336 &&
	            c.vocab_size == 32000 && c.num_hidden_layers == 32 && c.head_dim == 128 &&
	            c.v_spatial_merge_size == 3 && !c.mm_projector_bias);
	ckpt_config_clear(&c);
	/* MistralForCausalLM keeps its keys required */
	static const char bare[] = "{\"architectures\":[\"MistralForCausalLM\"],"
	                           "\"model_type\":\"mistral\"}";
	assert_int_not_equal(ckpt_config_parse(bare, strlen(bare), &c, &err), WT_OK);
}

static void expect(tm_model *m, const char *cfg, int code, const char *a, const char *b)
{
	wt_errbuf err = {0};
	int rv = plan_err(m, cfg, &err);
	printf("  -> %d %s\n", rv, err.msg);
	assert_int_equal(rv, code);
	assert_non_null(strstr(err.msg, a));
	if (b)
		assert_non_null(strstr(err.msg, b));
}

static void test_errors(void **state)
{
	(void)state;
	/* the projector's biases against multimodal_projector_bias */
	expect(m3_model(LAY_V450, true, 2), cfg_m3, WT_EUNSUPPORTED, PJ "linear_1.bias",
	       "multimodal_projector_bias");
	expect(m3_model(LAY_V450, false, 2), cfg_m3_bias, WT_ENOTFOUND, PJ "linear_1.bias",
	       "multimodal_projector_bias");
	/* a block past num_hidden_layers, named by the key */
	expect(m3_model(LAY_V450, false, 3), cfg_m3, WT_ESHAPE,
	       "vision_tower.transformer.layers.2.", "vision_config.num_hidden_layers is 2");
	/* a >= 4.52 name in a released checkpoint */
	tm_model *m = m3_model(LAY_V450, false, 2);
	tm_add2(m, "model.multi_modal_projector.norm.bias", VE, 0);
	expect(m, cfg_m3, WT_EUNSUPPORTED, "mixes two name layouts", NULL);
	/* the merger's width follows spatial_merge_size: 3 wants [32, 288] */
	static const char cfg_s3[] =
	    "{\"architectures\":[\"Mistral3ForConditionalGeneration\"],\"model_type\":\"mistral3\","
	    "\"spatial_merge_size\":3,\"text_config\":{" LM_KEYS "}" VISION_CFG(VISION_KEYS);
	expect(m3_model(LAY_V450, false, 2), cfg_s3, WT_ESHAPE,
	       PJ "patch_merger.merging_layer.weight", NULL);
	/* a missing tower tensor, in the checkpoint's own names */
	m = m3_model(LAY_HF5, false, 2);
	tm_remove(m, "model." VT "transformer.layers.1.feed_forward.up_proj.weight");
	expect(m, cfg_m3, WT_ENOTFOUND,
	       "model.vision_tower.transformer.layers.1.feed_forward.up_proj.weight", NULL);
	/* patch_conv has no bias */
	m = m3_model(LAY_V450, false, 2);
	tm_add2(m, VT "patch_conv.bias", VE, 0);
	expect(m, cfg_m3, WT_EUNSUPPORTED, "vision_tower.patch_conv.bias", "mistral3");
	/* heads: 3 do not divide 32; 1 head TP 2 cannot split */
	static const char cfg3h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	               "\"num_hidden_layers\":2,\"patch_size\":2");
	expect(m3_model(LAY_V450, false, 2), cfg3h, WT_ECORRUPT,
	       "num_attention_heads 3 does not divide hidden_size 32", NULL);
	static const char cfg1h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":1,"
	               "\"num_hidden_layers\":2,\"patch_size\":2");
	expect(m3_model(LAY_V450, false, 2), cfg1h, WT_ELAYOUT,
	       "vision_config.num_attention_heads 1", NULL);
	static const char cfg_list[] =
	    CFG_HEAD("\"vision_feature_layer\":[-1,-2],") VISION_CFG(VISION_KEYS);
	expect(m3_model(LAY_V450, false, 2), cfg_list, WT_ECORRUPT, "vision_feature_layer", NULL);
	static const char cfg_nov[] = CFG_HEAD("") "}";
	expect(m3_model(LAY_V450, false, 2), cfg_nov, WT_ECORRUPT, "needs vision_config", NULL);
	static const char cfg_far[] =
	    CFG_HEAD("\"vision_feature_layer\":-4,") VISION_CFG(VISION_KEYS);
	expect(m3_model(LAY_V450, false, 2), cfg_far, WT_ECORRUPT, "vision_feature_layer -4",
	       "outside the tower's 2 blocks");
}

/* vLLM builds the tower up to vision_feature_layer (init_vision_tower_for_mistral3): -2
 * leaves block 1 of 2 unbuilt, its tensors skipped; -1 (Mistral3Config's default, the
 * releases') and 2 build both. */
static void test_feature_layer(void **state)
{
	(void)state;
	static const char cfg_m2[] =
	    CFG_HEAD("\"vision_feature_layer\":-2,") VISION_CFG(VISION_KEYS);
	static const char cfg_p2[] =
	    CFG_HEAD("\"vision_feature_layer\":2,") VISION_CFG(VISION_KEYS);
	fx f, all;
	fx_open(&f, m3_model(LAY_V450, false, 2), cfg_m2, 2, 1, 0, false);
	fx_open(&all, m3_model(LAY_V450, false, 2), cfg_m3, 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 9); /* the block's nine tensors */
	assert_int_equal(shardmap_n_skipped(all.p), 0);
	for (uint32_t r = 0; r < 2; r++) {
		assert_int_equal(tm_ix(f.p, r, VT "transformer.layers.1.attention.qkv_proj.weight"),
		                 -1);
		assert_true(tm_ix(all.p, r, VT "transformer.layers.1.attention.qkv_proj.weight") >=
		            0);
		assert_true(tm_ix(f.p, r, VT "transformer.layers.0.attention.qkv_proj.weight") >=
		            0);
	}
	fx_close(&f);
	fx_close(&all);
	fx_open(&f, m3_model(LAY_V450, false, 2), cfg_p2, 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	fx_close(&f);
}

/* fp8-channel: the tower's linears, linear_1 / linear_2 and the language model's are
 * quantized; merging_layer, patch_conv, the norms and the biases are not. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx f;
	fx_open_l(&f, m3_model(LAY_HF5, true, 2), cfg_m3_bias, &l, false);
	static const char *const q[] = {VT "transformer.layers.1.attention.qkv_proj.weight",
	                                VT "transformer.layers.1.attention.o_proj.weight",
	                                VT "transformer.layers.1.feed_forward.gate_up_proj.weight",
	                                VT "transformer.layers.1.feed_forward.down_proj.weight",
	                                PJ "linear_1.weight",
	                                PJ "linear_2.weight",
	                                "language_model.model.layers.0.self_attn.qkv_proj.weight"};
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		assert_int_equal(info(&f, 1, q[k])->dtype, WT_F8_E4M3);
	static const char *const n[] = {PJ "patch_merger.merging_layer.weight",
	                                PJ "norm.weight",
	                                PJ "linear_1.bias",
	                                VT "patch_conv.weight",
	                                VT "transformer.layers.1.ffn_norm.weight",
	                                "language_model.model.embed_tokens.weight"};
	for (size_t k = 0; k < sizeof(n) / sizeof(n[0]); k++)
		assert_int_equal(info(&f, 1, n[k])->dtype, WT_BF16);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_layouts_and_text),
	    cmocka_unit_test(test_coverage),    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),      cmocka_unit_test(test_feature_layer),
	    cmocka_unit_test(test_quant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
