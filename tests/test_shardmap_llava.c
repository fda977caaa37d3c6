/*
 * test_shardmap_llava.c — LLaVA (LlavaForConditionalGeneration, docs/format.md section
 * 2.7): the CLIP tower's and the projector's rank slices computed by hand at TP 2 and 4
 * (q/k/v and their biases fused by vision heads into self_attn.qkv_proj, out_proj and fc2 by
 * columns with their biases replicated, fc1 by rows with its bias, linear_1 by rows with its
 * bias, linear_2 by columns with its bias replicated, the LayerNorms, class / patch /
 * position embeddings and pre_layrnorm replicated byte for byte), the blocks past
 * vision_feature_layer and post_layernorm skipped as vLLM builds neither, the language model
 * as Llama's (same bytes under `language_model.`), the released and the transformers >= 4.52
 * layouts giving the same shards, int8 codes, coverage at TP 1, 2, 4, 8, CLIPVisionConfig's
 * and LlamaConfig's defaults, and the refusals (biases against multimodal_projector_bias, a
 * block past num_hidden_layers, mixed layouts, the position table, heads TP does not
 * divide, a list or out-of-range vision_feature_layer, another tower or language model, no
 * vision_config or text_config). LLaVA-NeXT (LlavaNextForConditionalGeneration): the same
 * slices with a Mistral language model, image_newline replicated, both layouts, its
 * refusals. MantisForConditionalGeneration and TarsierForConditionalGeneration (vLLM's
 * llava.py subclass and tarsier.py): LLaVA's bytes; Tarsier's released layout only and its
 * split-token ids. Seed fixed. The fixture (sizes, configs, model builder, the checks of one
 * rank's slices): test_shardmap_llava_util.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x11a7aull
#include "test_shardmap_fx.h"
#include "test_shardmap_llava_util.h"

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++)
		for (int bias = 0; bias < 2; bias++) {
			fx f;
			fx_open(&f, lv_model(LAY_V450, bias, 3), bias ? cfg_lv : cfg_nobias, tps[i],
			        1, 0, true);
			for (uint32_t r = 0; r < tps[i]; r++)
				check_rank(&f, tps[i], r, bias);
			assert_false(shardmap_tied_lm_head(f.p));
			assert_true(fx_skipped(&f, VT "post_layernorm.weight") &&
			            fx_skipped(&f, VT "post_layernorm.bias") &&
			            fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
			assert_false(fx_skipped(&f, VT "encoder.layers.1.mlp.fc1.weight"));
			fx_close(&f);
		}
	/* the top level's tie_word_embeddings is not the text model's: transformers
	 * 4.57.1 (get_text_config()) and vLLM (text_config) leave lm_head untied */
	static const char cfg_toptie[] =
	    CFG_HEAD("\"tie_word_embeddings\":true,") VISION_CFG(VISION_KEYS);
	fx f;
	fx_open(&f, lv_model(LAY_V450, true, 3), cfg_toptie, 2, 1, 0, true);
	assert_false(shardmap_tied_lm_head(f.p));
	check_rank(&f, 2, 1, true);
	fx_close(&f);
}

/* Released and >= 4.52 layouts: the same shards (the >= 4.52 names skipped under their own
 * names); the language model is Llama's under `language_model.`. */
static void test_layouts_and_text(void **state)
{
	(void)state;
	fx a, b, t;
	fx_open(&a, lv_model(LAY_V450, true, 3), cfg_lv, 2, 1, 0, true);
	fx_open(&b, lv_model(LAY_HF5, true, 3), cfg_lv, 2, 1, 0, true);
	fx_open(&t, lv_model(LAY_TEXT, true, 0), cfg_text, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		same_rank(&a, &b, r, NULL);
		same_rank(&a, &t, r, "language_model.");
	}
	assert_true(fx_skipped(&b, "model." VT "post_layernorm.weight"));
	fx_close(&a);
	fx_close(&b);
	fx_close(&t);
}

/* int8-channel TP 2: rank 1's linear_1 rows [32, 64) and the tower's fc1 rows [32, 64)
 * quantized per row; the embeddings, norms and biases kept BF16. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, lv_model(LAY_HF5, true, 3), cfg_lv, &l, true);
	static const char *const q[] = {PJ "linear_1.weight", VT "encoder.layers.1.mlp.fc1.weight"};
	static const char *const src[] = {"model." PJ "linear_1.weight",
	                                  "model." VT "encoder.layers.1.mlp.fc1.weight"};
	static const int64_t rows[] = {HID / 2, VI / 2};
	for (int k = 0; k < 2; k++) {
		char sn[200];
		snprintf(sn, sizeof(sn), "%s_scale", q[k]);
		assert_int_equal(info(&f, 1, q[k])->dtype, WT_I8);
		shp(&f, 1, sn, 2, rows[k], 1, 0);
		const int8_t *c = (const int8_t *)out_bytes(&f, 1, q[k]);
		const float *sc = (const float *)out_bytes(&f, 1, sn);
		for (int64_t row = 0; row < rows[k]; row++) {
			size_t rowb;
			const uint16_t *x =
			    (const uint16_t *)src_rows(&f, src[k], rows[k] + row, &rowb);
			int8_row_is(c + row * VE, sc[row], x, VE);
		}
	}
	static const char *const n[] = {PJ "linear_1.bias",
	                                PJ "linear_2.bias",
	                                VT "embeddings.class_embedding",
	                                VT "embeddings.patch_embedding.weight",
	                                VT "embeddings.position_embedding.weight",
	                                VT "pre_layrnorm.weight",
	                                VT "encoder.layers.0.layer_norm1.bias",
	                                VT "encoder.layers.0.self_attn.qkv_proj.bias",
	                                "language_model.model.embed_tokens.weight",
	                                "language_model.lm_head.weight"};
	for (size_t k = 0; k < sizeof(n) / sizeof(n[0]); k++)
		assert_int_equal(info(&f, 1, n[k])->dtype, WT_BF16);
	static const char *const y[] = {
	    PJ "linear_2.weight", VT "encoder.layers.0.self_attn.qkv_proj.weight",
	    VT "encoder.layers.0.self_attn.out_proj.weight", VT "encoder.layers.0.mlp.fc2.weight",
	    "language_model.model.layers.0.mlp.gate_up_proj.weight"};
	for (size_t k = 0; k < sizeof(y) / sizeof(y[0]); k++)
		assert_int_equal(info(&f, 1, y[k])->dtype, WT_I8);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(lv_model(LAY_V450, true, 3), cfg_lv, 2, lays, 4);
	coverage(lv_model(LAY_HF5, false, 3), cfg_nobias, 2, lays, 4);
}

/* vision_config with only its width keys: CLIPVisionConfig's patch 32 and image 224 (7 x 7
 * patches + 1 = 50 positions, [VE, 3, 32, 32]), 12 blocks (feature layer -2: 11 built);
 * LlamaConfig's defaults for text_config keys left out; multimodal_projector_bias true. */
static void test_defaults(void **state)
{
	(void)state;
	tm_model *m = lv_model(LAY_V450, true, 12);
	tm_remove(m, VT "embeddings.patch_embedding.weight");
	tm_add(m, VT "embeddings.patch_embedding.weight", WT_DTYPE_INVALID, 1, VE * 3 * 1024, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 32;
	tm_remove(m, VT "embeddings.position_embedding.weight");
	tm_add2(m, VT "embeddings.position_embedding.weight", 50, VE);
	static const char cfg[] =
	    CFG_HEAD("") VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,"
	                            "\"num_attention_heads\":8");
	fx f;
	fx_open(&f, m, cfg, 2, 1, 0, false);
	const sm_out_info *pc = info(&f, 1, VT "embeddings.patch_embedding.weight");
	assert_true(pc->ndim == 4 && pc->shape[2] == 32 && pc->shape[3] == 32);
	shp(&f, 1, VT "embeddings.position_embedding.weight", 2, 50, VE, 0);
	assert_true(tm_ix(f.p, 1, VT "encoder.layers.10.mlp.fc1.weight") >= 0);
	assert_true(fx_skipped(&f, VT "encoder.layers.11.mlp.fc1.weight"));
	assert_true(tm_ix(f.p, 1, PJ "linear_1.bias") >= 0);
	fx_close(&f);
	/* 12 heads by default: 32 is not a multiple */
	static const char cfg12[] =
	    CFG_HEAD("") VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,"
	                            "\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2");
	fx_refused(lv_model(LAY_V450, true, 3), cfg12, WT_ECORRUPT, "num_attention_heads 12",
	           "hidden_size 32");
	/* LlamaConfig's class defaults under llava (its text_config says llama or nothing; KV
	 * = H) */
	static const char cls[] =
	    "{\"architectures\":[\"LlavaForConditionalGeneration\"],\"model_type\":\"llava\","
	    "\"text_config\":{\"vocab_size\":32064},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.hidden_size == 4096 && c.num_attention_heads == 32 &&
	            c.num_key_value_heads == 32 && c.intermediate_size == 11008 &&
	            c.vocab_size == 32064 && c.num_hidden_layers == 32 && c.mm_projector_bias &&
	            c.v_feature_layer == -2 && strcmp(c.lm_model_type, "llama") == 0 &&
	            strcmp(c.v_model_type, "clip_vision_model") == 0);
	ckpt_config_clear(&c);
	/* LlamaForCausalLM keeps its keys required */
	static const char bare[] = "{\"architectures\":[\"LlamaForCausalLM\"],"
	                           "\"model_type\":\"llama\"}";
	assert_int_not_equal(ckpt_config_parse(bare, strlen(bare), &c, &err), WT_OK);
}

static void test_errors(void **state)
{
	(void)state;
	/* the projector's biases against multimodal_projector_bias */
	fx_refused(lv_model(LAY_V450, true, 3), cfg_nobias, WT_EUNSUPPORTED, PJ "linear_1.bias",
	           "multimodal_projector_bias");
	fx_refused(lv_model(LAY_V450, false, 3), cfg_lv, WT_ENOTFOUND, PJ "linear_1.bias",
	           "multimodal_projector_bias");
	/* a block past num_hidden_layers, named by the key */
	fx_refused(lv_model(LAY_V450, true, 4), cfg_lv, WT_ESHAPE, VT "encoder.layers.3.",
	           "vision_config.num_hidden_layers is 3");
	/* a missing block, even one vLLM does not build */
	tm_model *m = lv_model(LAY_HF5, true, 3);
	tm_remove(m, "model." VT "encoder.layers.2.mlp.fc2.bias");
	fx_refused(m, cfg_lv, WT_ENOTFOUND, "model." VT "encoder.layers.2.mlp.fc2.bias", "");
	/* a >= 4.52 name in a released checkpoint */
	m = lv_model(LAY_V450, true, 3);
	tm_add2(m, "model.multi_modal_projector.norm.bias", VE, 0);
	fx_refused(m, cfg_lv, WT_EUNSUPPORTED, "mixes two name layouts", "");
	/* the position table follows image_size / patch_size: 16 wants 8 x 8 + 1 rows */
	static const char cfg16[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"
	               "\"num_hidden_layers\":3,\"image_size\":16,\"patch_size\":2");
	fx_refused(lv_model(LAY_V450, true, 3), cfg16, WT_ESHAPE,
	           VT "embeddings.position_embedding.weight", "");
	/* patch_embedding has no bias */
	m = lv_model(LAY_V450, true, 3);
	tm_add2(m, VT "embeddings.patch_embedding.bias", VE, 0);
	fx_refused(m, cfg_lv, WT_EUNSUPPORTED, VT "embeddings.patch_embedding.bias", "llava");
	/* heads: 3 do not divide 32; 8 heads TP 16 cannot split (the LM's 8 neither) */
	static const char cfg3h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	               "\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2");
	fx_refused(lv_model(LAY_V450, true, 3), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	static const char cfg2h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":2,"
	               "\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2");
	fx_refused_tp(lv_model(LAY_V450, true, 3), cfg2h, 4, WT_ELAYOUT,
	              "vision_config.num_attention_heads 2", "");
	/* vision_feature_layer: a list, or outside the tower */
	static const char cfg_list[] =
	    CFG_HEAD("\"vision_feature_layer\":[-1,-2],") VISION_CFG(VISION_KEYS);
	fx_refused(lv_model(LAY_V450, true, 3), cfg_list, WT_EUNSUPPORTED, "vision_feature_layer",
	           "list");
	static const char cfg_far[] =
	    CFG_HEAD("\"vision_feature_layer\":-5,") VISION_CFG(VISION_KEYS);
	fx_refused(lv_model(LAY_V450, true, 3), cfg_far, WT_ECORRUPT, "vision_feature_layer -5",
	           "[-4, 3]");
	/* feature layer 1 (non-negative: that many blocks) keeps block 0 only */
	static const char cfg_one[] =
	    CFG_HEAD("\"vision_feature_layer\":1,") VISION_CFG(VISION_KEYS);
	fx f;
	fx_open(&f, lv_model(LAY_V450, true, 3), cfg_one, 2, 1, 0, false);
	assert_true(fx_skipped(&f, VT "encoder.layers.1.mlp.fc1.weight") &&
	            tm_ix(f.p, 0, VT "encoder.layers.0.mlp.fc1.weight") >= 0);
	fx_close(&f);
	/* another tower, another language model, none */
	static const char cfg_sig[] =
	    CFG_HEAD("") ",\"vision_config\":{\"model_type\":\"idefics3_vision\"}}";
	fx_refused(lv_model(LAY_V450, true, 3), cfg_sig, WT_EUNSUPPORTED, "idefics3_vision",
	           "a SigLIP one (siglip_vision_model)");
	static const char cfg_qwen[] =
	    "{\"architectures\":[\"LlavaForConditionalGeneration\"],\"model_type\":\"llava\","
	    "\"text_config\":{\"model_type\":\"qwen2\",\"hidden_size\":64,\"num_attention_heads\":"
	    "8,"
	    "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1}" VISION_CFG(VISION_KEYS);
	fx_refused(lv_model(LAY_V450, true, 3), cfg_qwen, WT_EUNSUPPORTED,
	           "text_config.model_type 'qwen2'", "llama or mistral");
	static const char cfg_nov[] = CFG_HEAD("") "}";
	fx_refused(lv_model(LAY_V450, true, 3), cfg_nov, WT_ECORRUPT, "needs vision_config", "");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"LlavaForConditionalGeneration\"],\"model_type\":\"llava\","
	    "\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	    "\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":1" VISION_CFG(
	        VISION_KEYS);
	fx_refused(lv_model(LAY_V450, true, 3), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
}

/* TP 2 and 4: LLaVA's slices, image_newline whole on every rank; the >= 4.52 layout
 * (model.image_newline) the same shards; one tensor more than LLaVA's per rank. */
static void test_next(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx a, b, c;
		fx_open(&a, next_model(LAY_V450, true), cfg_next, tps[i], 1, 0, true);
		fx_open(&b, next_model(LAY_HF5, true), cfg_next, tps[i], 1, 0, true);
		fx_open(&c, lv_model(LAY_V450, true, 3), cfg_lv, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			check_rank(&a, tps[i], r, true);
			repl(&a, r, "image_newline");
			assert_int_equal(info(&a, r, "image_newline")->dtype, WT_BF16);
			same_rank(&a, &b, r, NULL);
			assert_int_equal(shardmap_rank_n_tensors(a.p, r),
			                 shardmap_rank_n_tensors(c.p, r) + 1);
		}
		assert_true(fx_skipped(&b, "model." VT "post_layernorm.bias"));
		fx_close(&a);
		fx_close(&b);
		fx_close(&c);
	}
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(next_model(LAY_HF5, true), cfg_next, 2, lays, 4);
	/* int8: image_newline stays BF16, linear_1 quantized */
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, next_model(LAY_HF5, true), cfg_next, &l, false);
	assert_int_equal(info(&f, 1, "image_newline")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, PJ "linear_1.weight")->dtype, WT_I8);
	fx_close(&f);
}

static void test_next_errors(void **state)
{
	(void)state;
	/* image_newline: required, [hid], LLaVA-NeXT's only */
	fx_refused(next_model(LAY_HF5, false), cfg_next, WT_ENOTFOUND, "model.image_newline", "");
	tm_model *m = next_model(LAY_V450, false);
	tm_add2(m, "image_newline", VE, 0);
	fx_refused(m, cfg_next, WT_ESHAPE, "image_newline", "[64]");
	fx_refused(next_model(LAY_V450, true), cfg_lv, WT_EUNSUPPORTED, "image_newline", "llava");
	/* LLaVA's checks: a qwen2 text model, a list feature layer */
	static const char cfg_q[] =
	    "{\"architectures\":[\"LlavaNextForConditionalGeneration\"],\"model_type\":"
	    "\"llava_next\",\"text_config\":{\"model_type\":\"qwen2\",\"hidden_size\":64,"
	    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":128,"
	    "\"vocab_size\":128,\"num_hidden_layers\":1}" VISION_CFG(VISION_KEYS);
	fx_refused(next_model(LAY_V450, true), cfg_q, WT_EUNSUPPORTED, "'qwen2'",
	           "LlavaNextForConditionalGeneration");
	static const char cfg_list[] =
	    CFG_NEXT("\"vision_feature_layer\":[-2,-5],") VISION_CFG(VISION_KEYS);
	fx_refused(next_model(LAY_V450, true), cfg_list, WT_EUNSUPPORTED, "vision_feature_layer",
	           "list");
	/* MistralConfig's class defaults for the text_config keys left out (KV 8) */
	static const char cls[] = "{\"architectures\":[\"LlavaNextForConditionalGeneration\"],"
	                          "\"model_type\":\"llava_next\",\"text_config\":{\"model_type\":"
	                          "\"mistral\"},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.hidden_size == 4096 && c.num_key_value_heads == 8 &&
	            c.intermediate_size == 14336 && c.mm_projector_bias &&
	            c.v_feature_layer == -2 && strcmp(c.lm_model_type, "mistral") == 0);
	ckpt_config_clear(&c);
}

static tm_model *mlp_odd(void)
{
	return lv_model(LAY_V450, true, 3);
}

static tm_model *mlp_i96(void)
{
	return lv_model_w(LAY_V450, true, 3, 64, 96);
}

static tm_model *mlp_w64(void)
{
	return lv_model_w(LAY_V450, true, 3, 64, 128);
}

/* vLLM's clip.py CLIPMLP hands fc1 / fc2 its quant_config at any size (SiglipMLP's 64
 * rule is not CLIP's): the CLIP tower of width 32 or MLP 96 keeps them quantized under
 * int8-channel and fp8-block, as at 64 / 128. */
static void test_siglip_mlp(void **state)
{
	(void)state;
	fx_siglip_mlp(mlp_odd, cfg_lv, VT, 2, false);
	fx_siglip_mlp(mlp_i96, cfg_i96, VT, 2, false);
	fx_siglip_mlp(mlp_w64, cfg_w64, VT, 2, false);
}

#define CFG_ARCH(arch, top)                                                                        \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"llava\"," top                          \
	"\"text_config\":{" LM_KEYS "}" VISION_CFG(VISION_KEYS)
#define TS_IDS "\"image_newline_idx\":126,\"image_new_idx\":127,"

/* Mantis (vLLM's LlavaForConditionalGeneration with its own processor): LLaVA's bytes in both
 * layouts. Tarsier (tarsier.py: LLaVA's tower, projector and language model, a plain
 * AutoWeightsLoader): LLaVA's bytes in the released layout, plain and int8-channel; the >= 4.52
 * layout, a Pixtral tower and missing or out-of-vocabulary split-token ids refused. */
static void test_mantis_tarsier(void **state)
{
	(void)state;
	static const char mantis[] = CFG_ARCH("MantisForConditionalGeneration", "");
	static const char tarsier[] = CFG_ARCH("TarsierForConditionalGeneration", TS_IDS);
	for (int q = 0; q < 2; q++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = q ? WT_QUANT_INT8_CHANNEL : WT_QUANT_NONE;
		fx a, b, t;
		fx_open_l(&a, lv_model(LAY_V450, true, 3), cfg_lv, &l, true);
		fx_open_l(&b, lv_model(q ? LAY_V450 : LAY_HF5, true, 3), mantis, &l, true);
		fx_open_l(&t, lv_model(LAY_V450, true, 3), tarsier, &l, true);
		assert_string_equal(shardmap_family(t.p), "llava");
		for (uint32_t r = 0; r < 2; r++) {
			same_rank(&a, &b, r, NULL);
			same_rank(&a, &t, r, NULL);
		}
		assert_true(fx_skipped(&t, VT "post_layernorm.weight"));
		fx_close(&a);
		fx_close(&b);
		fx_close(&t);
	}
	fx_refused(lv_model(LAY_HF5, true, 3), tarsier, WT_EUNSUPPORTED, "tensor 'lm_head.weight'",
	           "released layout only");
	static const char *const no_ids[] = {
	    CFG_ARCH("TarsierForConditionalGeneration", "\"image_new_idx\":127,"),
	    CFG_ARCH("TarsierForConditionalGeneration", "\"image_newline_idx\":126,")};
	fx_refused(lv_model(LAY_V450, true, 3), no_ids[0], WT_ENOTFOUND,
	           "'image_newline_idx' is missing", "Tarsier");
	fx_refused(lv_model(LAY_V450, true, 3), no_ids[1], WT_ENOTFOUND,
	           "'image_new_idx' is missing", "Tarsier");
	fx_refused(lv_model(LAY_V450, true, 3),
	           CFG_ARCH("TarsierForConditionalGeneration",
	                    "\"image_newline_idx\":128,\"image_new_idx\":127,"),
	           WT_ECORRUPT, "image_newline_idx 128", "vocab_size 128");
	fx_refused(lv_model(LAY_V450, true, 3),
	           CFG_ARCH("TarsierForConditionalGeneration",
	                    "\"image_newline_idx\":126,\"image_new_idx\":-1,"),
	           WT_ECORRUPT, "image_new_idx", ">= 0");
	fx_refused(lv_model(LAY_V450, true, 3),
	           CFG_ARCH("TarsierForConditionalGeneration",
	                    "\"image_newline_idx\":\"x\",\"image_new_idx\":127,"),
	           WT_ECORRUPT, "image_newline_idx", "not an integer");
	fx_refused(
	    lv_model(LAY_V450, true, 3),
	    "{\"architectures\":[\"TarsierForConditionalGeneration\"],\"model_type\":"
	    "\"llava\"," TS_IDS "\"text_config\":{" LM_KEYS "},\"vision_config\":{\"model_"
	    "type\":\"pixtral\",\"hidden_size\":32,\"intermediate_size\":64,\"num_"
	    "attention_heads\":8,\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2}}",
	    WT_EUNSUPPORTED, "'pixtral'", "CLIP or SigLIP tower only");
}

/* LLaVA with a SigLIP tower (vLLM's init_vision_tower_for_llava builds SiglipVisionModel up to
 * vision_feature_layer, no post-norm): at TP 2 and 4 the tower's blocks 0 and 1 cut as CLIP's
 * (fx_vit_block), block 2 and post_layernorm skipped, the patch embedding with its bias and the
 * position table (16 rows: no class token) whole, the projector by rows / columns; the >= 4.52
 * layout the same bytes; Mantis and Tarsier take the same table; a SigLIP tower 32 wide keeps
 * fc1 / fc2 unquantized (SiglipMLP's rule); heads that do not divide refused. */
#define NOHEAD ",\"vision_use_head\":false" /* no pooling head (test_siglip_head has one) */
#define SIG_CFG(arch, top)                                                                         \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"llava\"," top                          \
	"\"text_config\":{" LM_KEYS                                                                \
	"},\"vision_config\":{\"model_type\":\"siglip_vision_model\"" NOHEAD VISION_KEYS "}}"

static void test_siglip_tower(void **state)
{
	(void)state;
	lv_siglip_tower = true;
	static const char cfg_sig[] = SIG_CFG("LlavaForConditionalGeneration", "");
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, lv_model(LAY_V450, true, 3), cfg_sig, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			fx_siglip_tower2(&f, T, r, VT, VB, VE, VI);
			int64_t hl = HID / T;
			rows_at(&f, r, PJ "linear_1.weight", 0, PJ "linear_1.weight", r * hl, hl);
			cols_of(&f, r, T, PJ "linear_2.weight", PJ "linear_2.weight", HID, HID);
			assert_true(tm_ix(f.p, r, "language_model.lm_head.weight") >= 0);
		}
		assert_true(fx_skipped(&f, VT "post_layernorm.weight") &&
		            fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
		fx_close(&f);
	}
	static const char mantis[] = SIG_CFG("MantisForConditionalGeneration", "");
	static const char tarsier[] = SIG_CFG("TarsierForConditionalGeneration", TS_IDS);
	fx a, b;
	fx_open(&a, lv_model(LAY_V450, true, 3), cfg_sig, 2, 1, 0, true);
	fx_open(&b, lv_model(LAY_HF5, true, 3), mantis, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		same_rank(&a, &b, r, NULL);
	fx_close(&b);
	fx_open(&b, lv_model(LAY_V450, true, 3), tarsier, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
	fx_refused(lv_model(LAY_HF5, true, 3), tarsier, WT_EUNSUPPORTED, "tensor 'lm_head.weight'",
	           "released layout only");
	/* int8-channel: the tower's fc1 / fc2 kept (SiglipMLP quantizes them only when width and
	 * MLP are multiples of 64; this tower is 32 wide: CLIP's would be quantized), the
	 * projector quantized */
	static const char *const keep[] = {
	    VT "embeddings.patch_embedding.bias", VT "embeddings.position_embedding.weight",
	    VT "encoder.layers.0.mlp.fc1.weight", VT "encoder.layers.1.mlp.fc2.weight"};
	static const char *const quant[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                    PJ "linear_1.weight", PJ "linear_2.weight"};
	fx_open_quant(&a, lv_model(LAY_V450, true, 3), cfg_sig, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(quant));
	fx_close(&a);
	fx_refused(
	    lv_model(LAY_V450, true, 3),
	    "{\"architectures\":[\"LlavaForConditionalGeneration\"],\"model_type\":\"llava\","
	    "\"text_config\":{" LM_KEYS "},\"vision_config\":{\"model_type\":\"siglip_vision_"
	    "model\",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":5,"
	    "\"num_hidden_layers\":3,\"image_size\":8,\"patch_size\":2}}",
	    WT_ECORRUPT, "num_attention_heads", "");
	lv_siglip_tower = false;
}

/* LLaVA-NeXT on a SigLIP tower (vLLM's llava_next.py builds it with init_vision_tower_for_llava):
 * LLaVA's SigLIP-tower cut plus image_newline whole, both layouts the same bytes. */
static void test_next_siglip(void **state)
{
	(void)state;
	lv_siglip_tower = true;
	static const char cfg_nsig[] = CFG_NEXT(
	    "") ",\"vision_config\":{\"model_type\":\"siglip_vision_model\"" NOHEAD VISION_KEYS
	        "}}";
	static const char cfg_sig[] = SIG_CFG("LlavaForConditionalGeneration", "");
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx a, b, c;
		fx_open(&a, next_model(LAY_V450, true), cfg_nsig, T, 1, 0, true);
		fx_open(&b, next_model(LAY_HF5, true), cfg_nsig, T, 1, 0, true);
		fx_open(&c, lv_model(LAY_V450, true, 3), cfg_sig, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			fx_siglip_tower2(&a, T, r, VT, VB, VE, VI);
			repl(&a, r, "image_newline");
			int64_t hl = HID / T;
			rows_at(&a, r, PJ "linear_1.weight", 0, PJ "linear_1.weight", r * hl, hl);
			same_rank(&a, &b, r, NULL);
			assert_int_equal(shardmap_rank_n_tensors(a.p, r),
			                 shardmap_rank_n_tensors(c.p, r) + 1);
		}
		assert_true(fx_skipped(&b, "model." VT "post_layernorm.weight") &&
		            fx_skipped(&a, VT "encoder.layers.2.mlp.fc1.weight"));
		fx_close(&a);
		fx_close(&b);
		fx_close(&c);
	}
	/* int8-channel: SiglipMLP's fc1 / fc2 of the 32-wide tower and image_newline kept */
	static const char *const keep[] = {VT "encoder.layers.0.mlp.fc1.weight",
	                                   VT "encoder.layers.1.mlp.fc2.weight", "image_newline"};
	static const char *const quant[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                    PJ "linear_1.weight", PJ "linear_2.weight"};
	fx f;
	fx_open_quant(&f, next_model(LAY_V450, true), cfg_nsig, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(quant));
	fx_close(&f);
	fx_refused(next_model(LAY_V450, false), cfg_nsig, WT_ENOTFOUND, "image_newline", "");
	lv_siglip_tower = false;
}

/* A SigLIP tower's pooling head: SiglipVisionTransformer builds it unless
 * vision_config.vision_use_head is false, and SiglipVisionConfig has no such key, so a LLaVA
 * SigLIP checkpoint saved by transformers carries head.*: cut as SiglipModel's (probe, the
 * MultiheadAttention and layernorm whole and never quantized, the MLP by rows / columns under
 * SiglipMLP's rule), required then, unknown when false. LLaVA and LLaVA-NeXT. */
#define HEAD_VC(keys)                                                                              \
	",\"vision_config\":{\"model_type\":\"siglip_vision_model\"" keys VISION_KEYS "}}"
#define VH VT "head."
static void test_siglip_head(void **state)
{
	(void)state;
	lv_siglip_tower = true;
	static const char cfg_h[] = CFG_HEAD("") HEAD_VC("");
	static const char cfg_t[] = CFG_HEAD("") HEAD_VC(",\"vision_use_head\":true");
	static const char cfg_nh[] = CFG_HEAD("") HEAD_VC(NOHEAD);
	static const char cfg_num[] = CFG_HEAD("") HEAD_VC(",\"vision_use_head\":1");
	for (uint32_t T = 2; T <= 4; T *= 2) {
		tm_model *m = lv_model(LAY_V450, true, 3);
		fx_add_siglip_head(m, VH, VE, VI);
		fx f;
		fx_open(&f, m, cfg_h, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			fx_siglip_tower2(&f, T, r, VT, VB, VE, VI);
			fx_siglip_head_is(&f, T, r, VH, VE, VI);
		}
		fx_close(&f);
	}
	fx a, b;
	tm_model *ma = lv_model(LAY_V450, true, 3), *mb = lv_model(LAY_V450, true, 3);
	fx_add_siglip_head(ma, VH, VE, VI);
	fx_add_siglip_head(mb, VH, VE, VI);
	fx_open(&a, ma, cfg_h, 2, 1, 0, true);
	fx_open(&b, mb, cfg_t, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
	/* int8-channel: the 32-wide head's SiglipMLP kept as the blocks' are, the
	 * MultiheadAttention never quantized; the blocks' qkv_proj and the projector quantized */
	static const char *const keep[] = {VH "probe", VH "attention.in_proj_weight",
	                                   VH "attention.out_proj.weight", VH "mlp.fc1.weight",
	                                   VH "mlp.fc2.weight"};
	static const char *const quant[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                    PJ "linear_1.weight"};
	ma = lv_model(LAY_V450, true, 3);
	fx_add_siglip_head(ma, VH, VE, VI);
	fx_open_quant(&a, ma, cfg_h, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep), FX_N(quant));
	fx_close(&a);
	/* LLaVA-NeXT's table takes it too */
	static const char cfg_next_h[] = CFG_NEXT("") HEAD_VC("");
	ma = next_model(LAY_V450, true);
	fx_add_siglip_head(ma, VH, VE, VI);
	fx_open(&a, ma, cfg_next_h, 2, 1, 0, true);
	fx_siglip_head_is(&a, 2, 1, VH, VE, VI);
	repl(&a, 1, "image_newline");
	fx_close(&a);
	/* required by default, unknown when false, a boolean */
	fx_refused(lv_model(LAY_V450, true, 3), cfg_h, WT_ENOTFOUND, VH,
	           "vision_config.vision_use_head true or absent");
	ma = lv_model(LAY_V450, true, 3);
	fx_add_siglip_head(ma, VH, VE, VI);
	fx_refused(ma, cfg_nh, WT_EUNSUPPORTED, VH, "vision_use_head is false");
	fx_refused(lv_model(LAY_V450, true, 3), cfg_num, WT_ECORRUPT, "vision_use_head",
	           "true, false or null");
	lv_siglip_tower = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_siglip_mlp),       cmocka_unit_test(test_hand_slices),
	    cmocka_unit_test(test_layouts_and_text), cmocka_unit_test(test_int8),
	    cmocka_unit_test(test_coverage),         cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),           cmocka_unit_test(test_next),
	    cmocka_unit_test(test_next_errors),      cmocka_unit_test(test_mantis_tarsier),
	    cmocka_unit_test(test_siglip_tower),     cmocka_unit_test(test_next_siglip),
	    cmocka_unit_test(test_siglip_head),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
