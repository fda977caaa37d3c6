/*
 * test_shardmap_gemma3.c — Gemma 3 multimodal (Gemma3ForConditionalGeneration,
 * docs/format.md section 2.7): the SigLIP tower's rank slices computed by hand
 * at TP 2 and 4 (q/k/v fused by heads into qkv_proj with their biases,
 * out_proj / fc2 by columns, fc1 by rows, the rest replicated byte for byte),
 * the language model as gemma3_text's (same bytes under `language_model.`),
 * the released and the transformers >= 4.52 layouts giving the same shards,
 * coverage at TP 1, 2, 4, SiglipVisionConfig's defaults, and the refusals (a
 * block past num_hidden_layers, mixed layouts, a wrong shape, heads TP does not
 * divide, no vision_config). Seed fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x6e33a3ull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 4, KV 1, d 32 (H*d 128), I 128, V 128, L 1. Vision: 2 blocks, width 32,
 * 4 heads, MLP 64, patch 2 on a 4 x 4 image (4 positions), 3 channels. */
#define HID 64
#define VE  32
#define VI  64
#define NP  4

#define LM_KEYS                                                                                    \
	"\"model_type\":\"gemma3_text\",\"hidden_size\":64,\"num_attention_heads\":4,"             \
	"\"num_key_value_heads\":1,\"head_dim\":32,\"intermediate_size\":128,"                     \
	"\"vocab_size\":128,\"num_hidden_layers\":1"
#define VISION_CFG(keys) ",\"vision_config\":{\"model_type\":\"siglip_vision_model\"" keys "}}"
#define VISION_KEYS_W(h, i)                                                                        \
	",\"hidden_size\":" h ",\"intermediate_size\":" i ",\"num_attention_heads\":4,"            \
	"\"num_hidden_layers\":2,\"image_size\":4,\"patch_size\":2,\"num_channels\":3"
#define VISION_KEYS VISION_KEYS_W("32", "64")
#define CFG_HEAD(tie)                                                                              \
	"{\"architectures\":[\"Gemma3ForConditionalGeneration\"],\"model_type\":\"gemma3\"," tie   \
	"\"text_config\":{" LM_KEYS "}"
static const char cfg_g3[] = CFG_HEAD("") VISION_CFG(VISION_KEYS);
/* Untied by text_config's key alone (transformers' get_text_config); a top-level false
 * over a text_config without the key is tied (Gemma3TextConfig's default). */
static const char cfg_g3_untied[] =
    "{\"architectures\":[\"Gemma3ForConditionalGeneration\"],\"model_type\":\"gemma3\","
    "\"text_config\":{" LM_KEYS ",\"tie_word_embeddings\":false}" VISION_CFG(VISION_KEYS);
static const char cfg_g3_top_false[] =
    CFG_HEAD("\"tie_word_embeddings\":false,") VISION_CFG(VISION_KEYS);
static const char cfg_text[] = "{\"architectures\":[\"Gemma3ForCausalLM\"]," LM_KEYS "}";

/* Checkpoint layouts of one set of values. */
#define VT "vision_tower.vision_model."
#define VB VT "encoder.layers.%d."

/* The language model (values first: the same in every layout and as gemma3_text's),
 * then, unless text-only, the tower of `blocks` blocks and the projector. */
static tm_model *g3_model_w(lay y, bool untied, int blocks, int64_t ve, int64_t vi)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} lm[] = {{"input_layernorm.weight", HID, 0},
	          {"post_attention_layernorm.weight", HID, 0},
	          {"pre_feedforward_layernorm.weight", HID, 0},
	          {"post_feedforward_layernorm.weight", HID, 0},
	          {"self_attn.q_proj.weight", 128, HID},
	          {"self_attn.k_proj.weight", 32, HID},
	          {"self_attn.v_proj.weight", 32, HID},
	          {"self_attn.o_proj.weight", HID, 128},
	          {"self_attn.q_norm.weight", 32, 0},
	          {"self_attn.k_norm.weight", 32, 0},
	          {"mlp.gate_proj.weight", 128, HID},
	          {"mlp.up_proj.weight", 128, HID},
	          {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
		char b[200];
		snprintf(b, sizeof(b), "model.layers.0.%s", lm[k].leaf);
		mm_add(m, y, b, lm[k].n, lm[k].k);
	}
	if (untied)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	mm_add_vit(m, y, false, ve, vi, NP, blocks);
	mm_add(m, y, "multi_modal_projector.mm_input_projection_weight", ve, HID);
	mm_add(m, y, "multi_modal_projector.mm_soft_emb_norm.weight", ve, 0);
	return m;
}

static tm_model *g3_model(lay y, bool untied, int blocks)
{
	return g3_model_w(y, untied, blocks, VE, VI);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	static const char *const rep[] = {VT "embeddings.patch_embedding.weight",
	                                  VT "embeddings.patch_embedding.bias",
	                                  VT "embeddings.position_embedding.weight",
	                                  VT "post_layernorm.weight",
	                                  VT "post_layernorm.bias",
	                                  "multi_modal_projector.mm_input_projection_weight",
	                                  "multi_modal_projector.mm_soft_emb_norm.weight"};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
		repl(f, r, rep[j]);
	const sm_out_info *pe = info(f, r, VT "embeddings.patch_embedding.weight");
	assert_int_equal(pe->ndim, 4);
	assert_int_equal(pe->shape[3], 2);
	/* LM: H 4 KV 1 d 32, kv head replicated; q rows [r*128/T, ...) */
	const char *lq = "language_model.model.layers.0.self_attn.qkv_proj.weight";
	shp(f, r, lq, 2, 128 / T + 64, HID, 0);
	rows_at(f, r, lq, 0, "language_model.model.layers.0.self_attn.q_proj.weight", r * 128 / T,
	        128 / T);
	rows_at(f, r, lq, 128 / T, "language_model.model.layers.0.self_attn.k_proj.weight", 0, 32);
	rows_at(f, r, lq, 128 / T + 32, "language_model.model.layers.0.self_attn.v_proj.weight", 0,
	        32);
	assert_int_equal(tm_ix(f->p, r, "language_model.lm_head.weight"), -1); /* tied */
}

/* The tower at 64 / 96 and 64 / 128 (vision hidden_size / intermediate_size). */
static const char cfg_i96[] = CFG_HEAD("") VISION_CFG(VISION_KEYS_W("64", "96"));
static const char cfg_w64[] = CFG_HEAD("") VISION_CFG(VISION_KEYS_W("64", "128"));

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, g3_model(LAY_V450, false, 2), cfg_g3, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_true(shardmap_tied_lm_head(f.p));
		fx_close(&f);
	}
	/* A top-level false over a text_config without the key: tied (transformers reads
	 * text_config's, default true), the checkpoint's lm_head.weight dropped. */
	fx f;
	fx_open(&f, g3_model(LAY_V450, true, 2), cfg_g3_top_false, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		check_rank(&f, 2, r);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* Released and >= 4.52 layouts (tied and untied): the same shards; the language model
 * is gemma3_text's under `language_model.`. */
static void test_layouts_and_text(void **state)
{
	(void)state;
	for (int untied = 0; untied < 2; untied++) {
		const char *cfg = untied ? cfg_g3_untied : cfg_g3;
		fx a, b, t;
		fx_open(&a, g3_model(LAY_V450, untied, 2), cfg, 2, 1, 0, true);
		fx_open(&b, g3_model(LAY_HF5, untied, 2), cfg, 2, 1, 0, true);
		fx_open(&t, g3_model(LAY_TEXT, untied, 0),
		        untied ? "{\"architectures\":[\"Gemma3ForCausalLM\"]," LM_KEYS
		                 ",\"tie_word_embeddings\":false}"
		               : cfg_text,
		        2, 1, 0, true);
		for (uint32_t r = 0; r < 2; r++) {
			fx_same_rank(&a, &b, r, NULL);
			fx_same_rank(&a, &t, r, "language_model.");
		}
		assert_int_equal(tm_ix(a.p, 1, "language_model.lm_head.weight") >= 0, untied);
		fx_close(&a);
		fx_close(&b);
		fx_close(&t);
	}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(g3_model(LAY_V450, false, 2), cfg_g3, 1, lays, 3);
	coverage(g3_model(LAY_V450, true, 2), cfg_g3_untied, 1, lays, 3);
}

/* vision_config with only its width keys: SiglipVisionConfig's image_size 224, patch 16
 * (196 positions, [VE, 3, 16, 16]), 12 blocks / 12 heads when those are absent. */
static void test_siglip_defaults(void **state)
{
	(void)state;
	tm_model *m = g3_model(LAY_V450, false, 2);
	tm_remove(m, VT "embeddings.position_embedding.weight");
	tm_remove(m, VT "embeddings.patch_embedding.weight");
	tm_add2(m, VT "embeddings.position_embedding.weight", 196, VE);
	tm_add(m, VT "embeddings.patch_embedding.weight", WT_DTYPE_INVALID, 1, VE * 3 * 256, 0, 0);
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
	shp(&f, 1, VT "embeddings.position_embedding.weight", 2, 196, VE, 0);
	fx_close(&f);
	/* 12 blocks by default: block 1 of 2 present, blocks 2..11 missing */
	wt_errbuf err = {0};
	static const char cfg12[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":4,"
	               "\"image_size\":4,\"patch_size\":2");
	assert_int_equal(plan_err(g3_model(LAY_V450, false, 2), cfg12, &err), WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "vision_config.num_hidden_layers 12"));
	/* intermediate_size 3072 by default: the fixture's fc1 is 64 wide */
	static const char cfgi[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"num_attention_heads\":4,\"num_hidden_layers\":2,"
	               "\"image_size\":4,\"patch_size\":2");
	int rv = plan_err(g3_model(LAY_V450, false, 2), cfgi, &err);
	printf("  -> %d %s\n", rv, err.msg);
	assert_int_equal(rv, WT_ESHAPE);
	assert_non_null(strstr(err.msg, "implies [3072]"));
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
	/* a block past num_hidden_layers, named by the key */
	expect(g3_model(LAY_V450, false, 3), cfg_g3, WT_ESHAPE,
	       "vision_tower.vision_model.encoder.layers.2.",
	       "vision_config.num_hidden_layers is 2");
	/* a >= 4.52 name in a released checkpoint */
	tm_model *m = g3_model(LAY_V450, false, 2);
	tm_add2(m, "model.multi_modal_projector.mm_soft_emb_norm.bias", VE, 0);
	expect(m, cfg_g3, WT_EUNSUPPORTED, "mixes two name layouts", NULL);
	m = g3_model(LAY_HF5, false, 2);
	tm_add2(m, VT "post_layernorm.extra", VE, 0);
	expect(m, cfg_g3, WT_EUNSUPPORTED, "vision_tower.vision_model.post_layernorm.extra",
	       "mixes two name layouts");
	/* a wrong vision shape */
	m = g3_model(LAY_V450, false, 2);
	tm_remove(m, VT "encoder.layers.1.mlp.fc1.weight");
	tm_add2(m, VT "encoder.layers.1.mlp.fc1.weight", VI + 2, VE);
	expect(m, cfg_g3, WT_ESHAPE, "vision_tower.vision_model.encoder.layers.1.mlp.fc1.weight",
	       NULL);
	m = g3_model(LAY_HF5, false, 2);
	tm_remove(m, "model." VT "embeddings.position_embedding.weight");
	tm_add2(m, "model." VT "embeddings.position_embedding.weight", NP + 1, VE);
	expect(m, cfg_g3, WT_ESHAPE,
	       "model.vision_tower.vision_model.embeddings.position_embedding", NULL);
	/* a missing vision tensor, in the checkpoint's own names */
	m = g3_model(LAY_HF5, false, 2);
	tm_remove(m, "model." VT "encoder.layers.0.self_attn.k_proj.bias");
	expect(m, cfg_g3, WT_ENOTFOUND,
	       "model.vision_tower.vision_model.encoder.layers.0.self_attn.k_proj.bias", NULL);
	/* the SigLIP pooling head (vision_use_head) is not served */
	m = g3_model(LAY_V450, false, 2);
	tm_add2(m, VT "head.probe", VE, 0);
	expect(m, cfg_g3, WT_EUNSUPPORTED, "vision_tower.vision_model.head.probe", "gemma3");
	/* heads TP does not divide: 6 heads of width 36 at TP 2 is fine, at TP 4 not */
	static const char cfg3h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	               "\"num_hidden_layers\":2,\"image_size\":4,\"patch_size\":2");
	expect(g3_model(LAY_V450, false, 2), cfg3h, WT_ECORRUPT,
	       "num_attention_heads 3 does not divide hidden_size 32", NULL);
	static const char cfg2h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":1,"
	               "\"num_hidden_layers\":2,\"image_size\":4,\"patch_size\":2");
	expect(g3_model(LAY_V450, false, 2), cfg2h, WT_ELAYOUT,
	       "vision_config.num_attention_heads 1", NULL);
	static const char cfg_nov[] = CFG_HEAD("") "}";
	expect(g3_model(LAY_V450, false, 2), cfg_nov, WT_ECORRUPT, "needs vision_config", NULL);
}

/* fp8-channel: the tower's attention linears and the language model's are quantized; the
 * tower's fc1 / fc2 (width 32: vLLM's SiglipMLP builds them unquantized), the projector, the
 * patch embedding, the position table and the norms are not. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx f;
	fx_open_l(&f, g3_model(LAY_HF5, false, 2), cfg_g3, &l, false);
	static const char *const q[] = {VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                "language_model.model.layers.0.self_attn.qkv_proj.weight",
	                                "language_model.model.layers.0.mlp.down_proj.weight"};
	for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
		assert_int_equal(info(&f, 1, q[k])->dtype, WT_F8_E4M3);
	static const char *const n[] = {"multi_modal_projector.mm_input_projection_weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                VT "embeddings.patch_embedding.weight",
	                                VT "embeddings.position_embedding.weight",
	                                VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                "language_model.model.embed_tokens.weight"};
	for (size_t k = 0; k < sizeof(n) / sizeof(n[0]); k++)
		assert_int_equal(info(&f, 1, n[k])->dtype, WT_BF16);
	fx_close(&f);
}

static tm_model *mlp_odd(void)
{
	return g3_model(LAY_HF5, false, 2);
}

static tm_model *mlp_i96(void)
{
	return g3_model_w(LAY_HF5, false, 2, 64, 96);
}

static tm_model *mlp_w64(void)
{
	return g3_model_w(LAY_HF5, false, 2, 64, 128);
}

/* vLLM's siglip.py SiglipMLP: under int8-channel and fp8-block the tower's fc1 / fc2 are
 * kept BF16 without scales when its width (32) or MLP (96) is not a multiple of 64, and
 * quantized at 64 / 128; q/k/v and out_proj quantized in all three. */
static void test_siglip_mlp(void **state)
{
	(void)state;
	fx_siglip_mlp(mlp_odd, cfg_g3, VT, 2, true);
	fx_siglip_mlp(mlp_i96, cfg_i96, VT, 2, true);
	fx_siglip_mlp(mlp_w64, cfg_w64, VT, 2, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_siglip_mlp),
	    cmocka_unit_test(test_hand_slices),
	    cmocka_unit_test(test_layouts_and_text),
	    cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_siglip_defaults),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_quant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
