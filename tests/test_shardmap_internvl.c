/*
 * test_shardmap_internvl.c — InternVL (InternVLForConditionalGeneration, docs/format.md section
 * 2.7): the rank slices computed by hand at TP 2 and 4 (the InternViT tower whole on every rank
 * but fc1 by rows and fc2 by columns, as vLLM's interns1_vit.py builds them; the projector
 * whole), both name layouts giving the same shards and the language model Qwen2ForCausalLM's,
 * int8-channel and fp8-channel leaving the tower and projector unquantized, coverage at TP 1, 2,
 * 4, 8, the vision_config switches (attention_bias, use_qk_norm, norm_type, use_mask_token,
 * use_absolute_position_embeddings, use_mean_pooling) each way, InternVLConfig's /
 * InternVLVisionConfig's / Qwen2Config's defaults, the tie from text_config only, and the
 * refusals; InternVL3.5's Qwen3 language model (q / k norms, head_dim, Qwen3Config's defaults).
 * Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x1a7eull
#include "test_shardmap_fx.h"
#include "test_shardmap_internvl_fx.h"

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1"
#define CFG_VT(top, mt, text, vkeys)                                                               \
	"{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"                \
	"\"internvl\"," top "\"text_config\":{" LM_KEYS(mt) text "},\"vision_config\":{" vkeys     \
	                                                         "}}"
#define CFG_AT(top, mt, text, vis) CFG_VT(top, mt, text, VKEYS vis)
/* another vision size, the rest InternVL3's */
#define CFG_VS(w, i, h, img, p)                                                                    \
	CFG_VT("", "qwen2", "", VSIZES(w, i, h, img, p) ",\"attention_bias\":true")
/* InternVL3's switches: attention_bias true, LayerNorm; untied by text_config */
#define CFG(top, vis) CFG_AT(top, "qwen2", "", ",\"attention_bias\":true" vis)
static const char cfg_ivl[] = CFG("", "");
static const char cfg_text[] = "{\"architectures\":[\"Qwen2ForCausalLM\"]," LM_KEYS("qwen2") "}";

/* The Qwen2 language model (Qwen3's with O_QWEN3; lm_head when asked), then unless LAY_TEXT
 * the tower with the switches of opt and the projector, all in layout y. */
static tm_model *ivl_model(lay y, bool lm_head, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const fx_leaf lmt[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.q_proj.bias", 64, 0},
	    {"self_attn.k_proj.weight", 16, HID}, {"self_attn.k_proj.bias", 16, 0},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.v_proj.bias", 16, 0},
	    {"self_attn.o_proj.weight", HID, 64}, {"mlp.gate_proj.weight", 128, HID},
	    {"mlp.up_proj.weight", 128, HID},     {"mlp.down_proj.weight", HID, 128}};
	/* Qwen3's: H 8 x d 16, KV 2 x 16, per-head norms */
	static const fx_leaf q3[] = {
	    {"input_layernorm.weight", HID, 0},    {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 128, HID}, {"self_attn.k_proj.weight", 32, HID},
	    {"self_attn.v_proj.weight", 32, HID},  {"self_attn.o_proj.weight", HID, 128},
	    {"self_attn.q_norm.weight", 16, 0},    {"self_attn.k_norm.weight", 16, 0},
	    {"mlp.gate_proj.weight", 128, HID},    {"mlp.up_proj.weight", 128, HID},
	    {"mlp.down_proj.weight", HID, 128}};
	const fx_leaf *lt = opt & O_QWEN3 ? q3 : lmt;
	size_t nl = opt & O_QWEN3 ? sizeof(q3) / sizeof(q3[0]) : sizeof(lmt) / sizeof(lmt[0]);
	for (size_t k = 0; k < nl; k++) {
		snprintf(b, sizeof(b), "model.layers.0.%s", lt[k].leaf);
		mm_add(m, y, b, lt[k].n, lt[k].k);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	ivl_add_tower(m, y, opt);
	return m;
}

/* Rank r of TP T: the tower whole but fc1 (rows, weight and bias) and fc2 (columns); the
 * projector whole; the LM's q/k/v rows and o_proj columns. */
static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	char n[200], a[200];
	ivl_check_tower(f, T, r);
	const char *lq = LM "layers.0.self_attn.qkv_proj.";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	for (int w = 0; w < 2; w++) {
		const char *leaf = w ? "bias" : "weight";
		snprintf(n, sizeof(n), "%s%s", lq, leaf);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.q_proj.%s", leaf);
		rows_at(f, r, n, 0, a, r * ql, ql);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.k_proj.%s", leaf);
		rows_at(f, r, n, ql, a, kvh * 8, 8);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.v_proj.%s", leaf);
		rows_at(f, r, n, ql + 8, a, kvh * 8, 8);
	}
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	/* 2 blocks x 18, the embeddings' 4, the projector's 6; the LM's 7 + embed, norm, head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 18 + 4 + 6 + 7 + 3);
}

/* TP 2 and 4 (the released names; test_layouts: 4.57's give the same bytes) */
static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, ivl_model(LAY_V450, true, 0), cfg_ivl, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* transformers 4.57's layout gives the older one's shards byte for byte; the language model
 * Qwen2ForCausalLM's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	fx_same_layouts(ivl_model(LAY_HF5, true, 0), ivl_model(LAY_V450, true, 0), cfg_ivl,
	                ivl_model(LAY_TEXT, true, 0), cfg_text, 2, 1, "language_model.");
}

/* int8-channel TP 2 and fp8-channel TP 4: the LM's Linears quantized; the tower (fc1 / fc2
 * split but unquantized: vLLM builds them without a quant config) and the projector kept
 * BF16 without scales. */
static void test_quant(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_CHANNEL};
	static const uint32_t tps[] = {2, 4};
	static const char *const keep[] = {VT "encoder.layer.1.mlp.fc1.weight",
	                                   VT "encoder.layer.1.mlp.fc2.weight",
	                                   VT "encoder.layer.0.attention.q_proj.weight",
	                                   VT "encoder.layer.0.attention.projection_layer.weight",
	                                   PJ "linear_1.weight",
	                                   PJ "linear_2.weight",
	                                   LM "embed_tokens.weight"};
	for (size_t i = 0; i < 2; i++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = tps[i];
		l.quant = qs[i];
		fx f;
		fx_open_l(&f, ivl_model(LAY_V450, true, 0), cfg_ivl, &l, true);
		uint32_t r = tps[i] - 1;
		fx_quant_split(&f, r, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), NULL, 0);
		int want = i == 0 ? WT_I8 : WT_F8_E4M3;
		assert_int_equal(info(&f, r, LM "layers.0.self_attn.qkv_proj.weight")->dtype, want);
		assert_int_equal(info(&f, r, LM "layers.0.mlp.gate_up_proj.weight")->dtype, want);
		assert_int_equal(info(&f, r, LM "layers.0.mlp.down_proj.weight")->dtype, want);
		rows_at(&f, r, VT "encoder.layer.1.mlp.fc1.weight", 0,
		        VT "encoder.layer.1.mlp.fc1.weight", r * (VI / tps[i]), VI / tps[i]);
		cols_of(&f, r, tps[i], VT "encoder.layer.1.mlp.fc2.weight",
		        VT "encoder.layer.1.mlp.fc2.weight", VE, VI);
		repl(&f, r, PJ "linear_1.weight");
		repl(&f, r, VT "encoder.layer.0.attention.q_proj.weight");
		fx_close(&f);
	}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(ivl_model(LAY_HF5, true, 0), cfg_ivl, 2, lays, 4);
	coverage(ivl_model(LAY_V450, true, 0), cfg_ivl, 2, lays, 4);
	static const char cfg_all[] =
	    CFG_AT("", "qwen2", "",
	           ",\"use_qk_norm\":true,\"norm_type\":\"rms_norm\",\"use_mask_token\":true,"
	           "\"use_mean_pooling\":false");
	coverage(ivl_model(LAY_HF5, true, O_NOBIAS | O_QKN | O_RMS | O_MASK | O_POOLLN), cfg_all, 2,
	         lays, 4);
}

/* Each vision_config switch: the tensors it asks for plan (whole on every rank), their absence
 * is refused naming the switch, and so is their presence with the switch off. */
static void test_switches(void **state)
{
	(void)state;
	/* msg: what the refusals name (the planner meets k_proj / k_norm / layernorm_after first
	 * in the checkpoint, misses q_proj / q_norm / layernorm_before first in its table) */
	static const struct {
		unsigned opt;
		const char *cfg, *tensor, *msg, *key;
	} sw[] = {
	    {O_NOBIAS, CFG_AT("", "qwen2", "", ""), VT "encoder.layer.0.attention.q_proj.bias",
	     "_proj.bias", "vision_config.attention_bias"},
	    {O_QKN, CFG("", ",\"use_qk_norm\":true"), VT "encoder.layer.0.attention.q_norm.weight",
	     "_norm.weight", "vision_config.use_qk_norm"},
	    {O_RMS, CFG("", ",\"norm_type\":\"rms_norm\""),
	     VT "encoder.layer.0.layernorm_before.bias", VT "encoder.layer.0.layernorm_",
	     "vision_config.norm_type"},
	    {O_MASK, CFG("", ",\"use_mask_token\":true"), VT "embeddings.mask_token",
	     VT "embeddings.mask_token", "vision_config.use_mask_token"},
	    {O_NOPOS, CFG("", ",\"use_absolute_position_embeddings\":false"),
	     VT "embeddings.position_embeddings", VT "embeddings.position_embeddings",
	     "vision_config.use_absolute_position_embeddings"},
	    {O_POOLLN, CFG("", ",\"use_mean_pooling\":false"), VT "layernorm.weight",
	     VT "layernorm.", "vision_config.use_mean_pooling"},
	};
	for (size_t k = 0; k < sizeof(sw) / sizeof(sw[0]); k++) {
		/* the switch and the tensors agree: plans; what it adds is whole */
		fx f;
		fx_open(&f, ivl_model(LAY_V450, true, sw[k].opt), sw[k].cfg, 2, 1, 0, true);
		bool adds = sw[k].opt != O_NOBIAS && sw[k].opt != O_RMS && sw[k].opt != O_NOPOS;
		if (adds)
			repl(&f, 1, sw[k].tensor);
		else
			assert_int_equal(tm_ix(f.p, 1, sw[k].tensor), -1);
		fx_close(&f);
		/* the switch with InternVL3's tensors, InternVL3's switch with these tensors */
		fx_refused(ivl_model(LAY_HF5, true, 0), sw[k].cfg,
		           adds ? WT_ENOTFOUND : WT_EUNSUPPORTED, sw[k].msg, sw[k].key);
		fx_refused(ivl_model(LAY_HF5, true, sw[k].opt), cfg_ivl,
		           adds ? WT_EUNSUPPORTED : WT_ENOTFOUND, sw[k].msg, sw[k].key);
	}
}

/* InternVLConfig's defaults (downsample_ratio 0.5, vision_feature_layer -1, "default", a qwen2
 * text_config), InternVLVisionConfig's (sizes, switches; image / patch as integers too),
 * Qwen2Config's for text_config keys left out (num_key_value_heads 32), the tie from
 * text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	    "\"internvl\",\"tie_word_embeddings\":true,\"text_config\":{\"hidden_size\":896,"
	    "\"num_attention_heads\":14},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.v_feature_layer == -1 && !c.v_feature_list && c.v_spatial_merge_size == 2 &&
	            strcmp(c.v_select, "default") == 0 && strcmp(c.lm_model_type, "qwen2") == 0);
	assert_true(c.v_hidden_size == 1024 && c.v_intermediate_size == 4096 &&
	            c.v_num_layers == 24 && c.v_num_attn_heads == 16 && c.v_image_size == 448 &&
	            c.v_patch_size == 14 && c.v_in_chans == 3);
	assert_true(!c.v_attn_bias && !c.v_qk_norm && c.v_norm_ln && !c.v_mask_token &&
	            c.v_abs_pos && c.v_mean_pool);
	assert_true(c.vocab_size == 151936 && c.hidden_size == 896 && c.num_attention_heads == 14 &&
	            c.num_key_value_heads == 32 && c.intermediate_size == 22016 &&
	            c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	static const char ints[] =
	    "{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	    "\"internvl\",\"downsample_ratio\":0.25,\"text_config\":{},"
	    "\"vision_config\":{\"image_size\":336,\"patch_size\":[14,14]}}";
	assert_int_equal(ckpt_config_parse(ints, strlen(ints), &c, &err), WT_OK);
	assert_true(c.v_image_size == 336 && c.v_patch_size == 14 && c.v_spatial_merge_size == 4);
	ckpt_config_clear(&c);
	/* the top level's true over text_config without the key: untied (Qwen2Config's false) */
	static const char untied[] = CFG("\"tie_word_embeddings\":true,", "");
	fx f;
	fx_open(&f, ivl_model(LAY_HF5, true, 0), untied, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	/* text_config's true under a top-level false: tied, the checkpoint's lm_head dropped */
	static const char tied[] =
	    CFG_AT("\"tie_word_embeddings\":false,", "qwen2", ",\"tie_word_embeddings\":true",
	           ",\"attention_bias\":true");
	fx_open(&f, ivl_model(LAY_HF5, true, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_int_equal(tm_ix(f.p, 0, "language_model.lm_head.weight"), -1);
	fx_close(&f);
	fx_open(&f, ivl_model(LAY_V450, false, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* The config refusals: what vLLM does not build, what is not a model. */
static void test_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *cfg;
		int code;
		const char *a, *b;
	} bad[] = {
	    {CFG("\"vision_feature_layer\":-2,", ""), WT_EUNSUPPORTED, "vision_feature_layer",
	     "give -1"},
	    {CFG("\"vision_feature_layer\":[-1],", ""), WT_EUNSUPPORTED, "is a list", "give -1"},
	    {CFG("\"vision_feature_select_strategy\":\"full\",", ""), WT_EUNSUPPORTED, "'full'",
	     "class token"},
	    {CFG("\"downsample_ratio\":0.3,", ""), WT_EUNSUPPORTED, "downsample_ratio 0.3",
	     "1 / n"},
	    {CFG("\"downsample_ratio\":2,", ""), WT_EUNSUPPORTED, "downsample_ratio 2", "1 / n"},
	    {CFG("\"downsample_ratio\":1e-300,", ""), WT_EUNSUPPORTED, "downsample_ratio 1e-300",
	     "1 / n"},
	    {CFG("\"downsample_ratio\":0.125,", ""), WT_ECORRUPT, "4 x 4 patch grid",
	     "downsample_ratio"},
	    {CFG("", ",\"norm_type\":\"batch_norm\""), WT_EUNSUPPORTED, "vision_config.norm_type",
	     "rms_norm"},
	    {CFG_VS("32", "64", "4", "[8,16]", "[2,2]"), WT_EUNSUPPORTED,
	     "vision_config.image_size [8, 16]", "square"},
	    {CFG_VS("32", "64", "4", "[8,8]", "[2]"), WT_ECORRUPT, "vision_config.patch_size",
	     "pair"},
	    {CFG_VS("32", "64", "3", "8", "2"), WT_ECORRUPT,
	     "num_attention_heads 3 does not divide hidden_size 32", ""},
	    {CFG_AT("", "gpt_oss", "", ""), WT_EUNSUPPORTED, "text_config.model_type 'gpt_oss'",
	     "GPT-OSS language model"},
	    {CFG_AT("", "llama", "", ""), WT_EUNSUPPORTED, "text_config.model_type 'llama'",
	     "qwen2"},
	    {"{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	     "\"internvl\","
	     "\"text_config\":{" LM_KEYS("qwen2") "}}",
	     WT_ECORRUPT, "needs vision_config", "InternViT"},
	    {"{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	     "\"internvl\","
	     "\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	     "\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":1,"
	     "\"vision_config\":{" VKEYS "}}",
	     WT_ECORRUPT, "needs a text_config", ""},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused(ivl_model(LAY_HF5, true, 0), bad[k].cfg, bad[k].code, bad[k].a,
		           bad[k].b);
}

/* The tensor refusals: a projector or tower tensor missing or of another shape, a layer past
 * num_hidden_layers, an unknown name, fc1 not splitting at the TP size. */
static void test_errors(void **state)
{
	(void)state;
	tm_model *m = ivl_model(LAY_HF5, true, 0);
	tm_remove(m, "model." PJ "layer_norm.bias");
	fx_refused(m, cfg_ivl, WT_ENOTFOUND, PJ "layer_norm.bias", "");
	m = ivl_model(LAY_HF5, true, 0);
	tm_remove(m, "model." VT "encoder.layer.1.lambda_2");
	fx_refused(m, cfg_ivl, WT_ENOTFOUND, VT "encoder.layer.1.lambda_2", "");
	m = ivl_model(LAY_HF5, true, 0);
	tm_remove(m, "model." PJ "linear_1.weight");
	tm_add2(m, "model." PJ "linear_1.weight", HID, VE); /* not the pixel shuffle's 4 x VE */
	fx_refused(m, cfg_ivl, WT_ESHAPE, PJ "linear_1.weight", "");
	m = ivl_model(LAY_HF5, true, 0);
	tm_remove(m, "model." VT "embeddings.position_embeddings");
	tm_add(m, "model." VT "embeddings.position_embeddings", WT_DTYPE_INVALID, 3, 1, VNP - 1,
	       VE);
	fx_refused(m, cfg_ivl, WT_ESHAPE, VT "embeddings.position_embeddings", "");
	m = ivl_model(LAY_HF5, true, 0);
	tm_add2(m, "model." VT "encoder.layer.2.lambda_1", VE, 0);
	fx_refused(m, cfg_ivl, WT_ESHAPE, "vision block 2", "vision_config.num_hidden_layers");
	m = ivl_model(LAY_HF5, true, 0);
	tm_add2(m, "model." VT "encoder.layer.0.attention.qkv.weight", 3 * VE, VE);
	fx_refused(m, cfg_ivl, WT_EUNSUPPORTED, "attention.qkv.weight", "");
	/* fc1's rows not divisible at TP 8 when the MLP is 36 wide */
	static const char cfg36[] = CFG_VS("32", "36", "4", "[8,8]", "[2,2]");
	m = ivl_model(LAY_HF5, true, 0);
	for (int blk = 0; blk < 2; blk++) {
		char n[200];
		static const fx_leaf mlp[] = {{"mlp.fc1.weight", 36, VE},
		                              {"mlp.fc1.bias", 36, 0},
		                              {"mlp.fc2.weight", VE, 36}};
		for (size_t k = 0; k < 3; k++) {
			snprintf(n, sizeof(n), "model." VB "%s", blk, mlp[k].leaf);
			tm_remove(m, n);
			tm_add2(m, n, mlp[k].n, mlp[k].k);
		}
	}
	fx_refused_tp(m, cfg36, 8, WT_ELAYOUT, "mlp.fc1", "vision_config.intermediate_size");
}

/* InternVL3.5: a qwen3 text_config (head_dim 16 over hidden 64): Qwen3's table, q/k/v rows by
 * heads of 16, o_proj columns, q_norm / k_norm [16] whole on every rank; the same bytes as
 * Qwen3ForCausalLM's under language_model.; the tower as InternVL3's. */
#define CFG_Q3(text) CFG_AT("", "qwen3", ",\"head_dim\":16" text, ",\"attention_bias\":true")
static const char cfg_q3[] = CFG_Q3("");
static const char cfg_q3_text[] =
    "{\"architectures\":[\"Qwen3ForCausalLM\"]," LM_KEYS("qwen3") ",\"head_dim\":16}";

/* Rank r of TP T under cfg_q3: the LM's q/k/v rows and o_proj columns, the norms whole */
static void check_q3_rank(const fx *f, uint32_t T, uint32_t r)
{
	const char *a = LM "layers.0.self_attn.";
	char n[200], q[200];
	int64_t ql = 8 / T * 16, kvh = T == 2 ? r : r / 2;
	snprintf(n, sizeof(n), "%sqkv_proj.weight", a);
	shp(f, r, n, 2, ql + 32, HID, 0);
	snprintf(q, sizeof(q), "%sq_proj.weight", a);
	rows_at(f, r, n, 0, q, r * ql, ql);
	snprintf(q, sizeof(q), "%sk_proj.weight", a);
	rows_at(f, r, n, ql, q, kvh * 16, 16);
	snprintf(q, sizeof(q), "%sv_proj.weight", a);
	rows_at(f, r, n, ql + 16, q, kvh * 16, 16);
	snprintf(n, sizeof(n), "%so_proj.weight", a);
	cols_of(f, r, T, n, n, HID, 128);
	snprintf(n, sizeof(n), "%sq_norm.weight", a);
	repl(f, r, n);
	snprintf(n, sizeof(n), "%sk_norm.weight", a);
	repl(f, r, n);
	repl(f, r, PJ "linear_1.weight");
	rows_at(f, r, VT "encoder.layer.0.mlp.fc1.weight", 0, VT "encoder.layer.0.mlp.fc1.weight",
	        r * (VI / T), VI / T);
}

static void test_qwen3(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	fx f;
	for (size_t i = 0; i < 2; i++) {
		fx_open(&f, ivl_model(LAY_V450, true, O_QWEN3), cfg_q3, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_q3_rank(&f, tps[i], r);
		fx_close(&f);
	}
	fx_same_layouts(ivl_model(LAY_HF5, true, O_QWEN3), ivl_model(LAY_V450, true, O_QWEN3),
	                cfg_q3, ivl_model(LAY_TEXT, true, O_QWEN3), cfg_q3_text, 2, 1,
	                "language_model.");
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(ivl_model(LAY_HF5, true, O_QWEN3), cfg_q3, 2, lays, 4);
	/* tied by text_config: the checkpoint's lm_head dropped */
	static const char tied[] = CFG_Q3(",\"tie_word_embeddings\":true");
	fx_open(&f, ivl_model(LAY_HF5, true, O_QWEN3), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* Qwen3Config's defaults under a qwen3 text_config (head_dim 128, 32 kv heads, untied); the
 * q / k norms required with qwen3 and unknown with qwen2 */
static void test_qwen3_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	    "\"internvl\",\"tie_word_embeddings\":true,\"text_config\":{\"model_type\":\"qwen3\","
	    "\"hidden_size\":1024,\"num_attention_heads\":16},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_string_equal(c.lm_model_type, "qwen3");
	assert_true(c.vocab_size == 151936 && c.hidden_size == 1024 && c.head_dim == 128 &&
	            c.num_key_value_heads == 32 && c.intermediate_size == 22016 &&
	            c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	tm_model *m = ivl_model(LAY_HF5, true, O_QWEN3);
	tm_remove(m, "model.language_model.layers.0.self_attn.k_norm.weight");
	fx_refused(m, cfg_q3, WT_ENOTFOUND, "self_attn.k_norm.weight", "");
	m = ivl_model(LAY_HF5, true, 0);
	tm_add2(m, "model.language_model.layers.0.self_attn.q_norm.weight", 8, 0);
	fx_refused(m, cfg_ivl, WT_EUNSUPPORTED, "self_attn.q_norm.weight", "not qwen3");
	/* Qwen2's shapes under a qwen3 text_config: head_dim 16 asks for k / v of 2 x 16 rows */
	fx_refused(ivl_model(LAY_HF5, true, 0), cfg_q3, WT_ESHAPE, "k_proj.bias", "[32]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices),   cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_quant),         cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_switches),      cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_config_errors), cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_qwen3),         cmocka_unit_test(test_qwen3_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
