/*
 * test_shardmap_idefics3.c — Idefics3 (Idefics3ForConditionalGeneration, docs/format.md
 * section 2.7): the SigLIP-style tower's rank slices computed by hand at TP 2 and 4 (q/k/v
 * and their biases fused by vision heads into self_attn.qkv_proj, out_proj and fc2 by
 * columns with their biases replicated, fc1 by rows with its bias, the LayerNorms, the patch
 * Conv2d with its bias, the position table and post_layernorm replicated byte for byte), the
 * connector's proj whole on every rank (vLLM's ReplicatedLinear) and quantized so, the
 * language model as Llama's (same bytes under `model.text_model.`), int8 codes, coverage at
 * TP 1, 2, 4, 8, Idefics3VisionConfig's and LlamaConfig's defaults, tie_word_embeddings
 * read from text_config only, and the refusals (no vision_config / text_config, another
 * language model, heads, scale_factor against the patch grid and proj's width, missing and
 * unknown tensors, a block past num_hidden_layers). SmolVLM (SmolVLMForConditionalGeneration):
 * the same shards under its names, its tie, defaults and refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x1de3ull
#include "test_shardmap_fx.h"
#include "test_shardmap_tower.h"

/* LM: hid 64, H 8, KV 2, d 8 (H*d 64, KV*d 16), I 128, V 128, L 1, untied. Vision: 2
 * blocks, width 32, 8 heads, MLP 64, image 8 / patch 2: 4 x 4 = 16 patches; scale_factor 2:
 * proj [64, 32 * 4]. */
#define HID 64
#define VE  32
#define VI  64
#define VNP 16
#define VM  128

#define LM_KEYS                                                                                    \
	"\"model_type\":\"llama\",\"hidden_size\":64,\"num_attention_heads\":8,"                   \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1"
#define VISION_CFG(keys) ",\"vision_config\":{\"model_type\":\"idefics3_vision\"" keys "}}"
#define VISION_KEYS                                                                                \
	",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2"
#define CFG_HEAD(top)                                                                              \
	"{\"architectures\":[\"Idefics3ForConditionalGeneration\"],\"model_type\":"                \
	"\"idefics3\"," top "\"text_config\":{" LM_KEYS "}"
static const char cfg_i3[] = CFG_HEAD("\"scale_factor\":2,") VISION_CFG(VISION_KEYS);
static const char cfg_text[] = "{\"architectures\":[\"LlamaForCausalLM\"]," LM_KEYS "}";

#define VT   "model.vision_model."
#define VB   VT "encoder.layers.%d."
#define PROJ "model.connector.modality_projection.proj.weight"
#define TM   "model.text_model."

/* The language model under prefix lm ("model.text_model." or Llama's "model."), lm_head
 * unless tied, then unless text-only the tower of `blocks` blocks and the connector. */
static tm_model *i3_model(bool text, bool lm_head, int blocks)
{
	const char *lm = text ? "model." : TM;
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	snprintf(b, sizeof(b), "%sembed_tokens.weight", lm);
	tm_add2(m, b, 128, HID);
	snprintf(b, sizeof(b), "%snorm.weight", lm);
	tm_add2(m, b, HID, 0);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} lmt[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.k_proj.weight", 16, HID},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.o_proj.weight", HID, 64},
	    {"mlp.gate_proj.weight", 128, HID},   {"mlp.up_proj.weight", 128, HID},
	    {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lmt) / sizeof(lmt[0]); k++) {
		snprintf(b, sizeof(b), "%slayers.0.%s", lm, lmt[k].leaf);
		tm_add2(m, b, lmt[k].n, lmt[k].k);
	}
	if (lm_head)
		tm_add2(m, "lm_head.weight", 128, HID);
	if (text)
		return m;
	tm_siglip_tower(m, VT, blocks, VE, VI, VNP, 0);
	tm_add2(m, PROJ, HID, VM);
	return m;
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
	                                  PROJ};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
		repl(f, r, rep[j]);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
	shp(f, r, PROJ, 2, HID, VM, 0);
	/* LM: H 8 KV 2 d 8; TP 2: kv head r, TP 4: kv head r/2 replicated */
	const char *lq = TM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	shp(f, r, lq, 2, ql + 16, HID, 0);
	rows_at(f, r, lq, 0, TM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, TM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, TM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, TM "layers.0.self_attn.o_proj.weight",
	        TM "layers.0.self_attn.o_proj.weight", HID, 64);
	assert_true(tm_ix(f->p, r, "lm_head.weight") >= 0); /* untied */
	/* 2 blocks x 12 outputs, the tower's 5, proj; the LM's 6 + embed, norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 5 + 1 + 6 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, i3_model(false, true, 2), cfg_i3, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* The language model gives Llama's shards byte for byte, model.* as model.text_model.*. */
static void test_text(void **state)
{
	(void)state;
	fx a, t;
	fx_open(&a, i3_model(false, true, 2), cfg_i3, 2, 1, 0, true);
	fx_open(&t, i3_model(true, true, 0), cfg_text, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		size_t n = shardmap_rank_n_tensors(t.p, r);
		assert_int_equal(n, 9);
		for (size_t i = 0; i < n; i++) {
			const sm_out_info *u = shardmap_rank_tensor(t.p, r, i);
			char nm[200];
			if (strncmp(u->name, "model.", 6) == 0)
				snprintf(nm, sizeof(nm), TM "%s", u->name + 6);
			else
				snprintf(nm, sizeof(nm), "%s", u->name);
			const sm_out_info *v = info(&a, r, nm);
			assert_int_equal(u->nbytes, v->nbytes);
			assert_int_equal(u->ndim, v->ndim);
			assert_memory_equal(t.pr->b[r][i], out_bytes(&a, r, nm), u->nbytes);
		}
	}
	fx_close(&a);
	fx_close(&t);
}

/* int8-channel TP 2: proj whole on rank 1 (its 64 rows quantized per row over 128
 * columns), the tower's fc1 rows [32, 64); the embeddings, norms and biases kept BF16. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, i3_model(false, true, 2), cfg_i3, &l, true);
	static const char *const q[] = {PROJ, VT "encoder.layers.1.mlp.fc1.weight"};
	static const int64_t rows[] = {HID, VI / 2}, r0[] = {0, VI / 2}, cols[] = {VM, VE};
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
			    (const uint16_t *)src_rows(&f, q[k], r0[k] + row, &rowb);
			int8_row_is(c + row * cols[k], sc[row], x, cols[k]);
		}
	}
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.patch_embedding.bias",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "post_layernorm.weight",
	                                   VT "encoder.layers.0.layer_norm1.bias",
	                                   VT "encoder.layers.0.self_attn.qkv_proj.bias",
	                                   TM "embed_tokens.weight",
	                                   "lm_head.weight"};
	static const char *const q8[] = {
	    VT "encoder.layers.0.self_attn.qkv_proj.weight",
	    VT "encoder.layers.0.self_attn.out_proj.weight", VT "encoder.layers.0.mlp.fc2.weight",
	    TM "layers.0.mlp.gate_up_proj.weight", TM "layers.0.self_attn.qkv_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(i3_model(false, true, 2), cfg_i3, 2, lays, 4);
}

/* vision_config with only its width keys and image_size 64: Idefics3VisionConfig's patch 32
 * (2 x 2 = 4 positions, [VE, 3, 32, 32]), 12 blocks, 16 heads; scale_factor's 2 (proj 4 VE
 * wide); LlamaConfig's defaults for text_config keys left out; tie_word_embeddings from
 * text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	tm_model *m = i3_model(false, true, 12);
	tm_remove(m, VT "embeddings.patch_embedding.weight");
	tm_add(m, VT "embeddings.patch_embedding.weight", WT_DTYPE_INVALID, 1, VE * 3 * 1024, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 32;
	tm_remove(m, VT "embeddings.position_embedding.weight");
	tm_add2(m, VT "embeddings.position_embedding.weight", 4, VE);
	static const char cfg[] =
	    CFG_HEAD("") VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,"
	                            "\"image_size\":64");
	fx f;
	fx_open(&f, m, cfg, 2, 1, 0, false);
	const sm_out_info *pc = info(&f, 1, VT "embeddings.patch_embedding.weight");
	assert_true(pc->ndim == 4 && pc->shape[2] == 32 && pc->shape[3] == 32);
	shp(&f, 1, VT "embeddings.position_embedding.weight", 2, 4, VE, 0);
	assert_true(tm_ix(f.p, 1, VT "encoder.layers.11.mlp.fc1.weight") >= 0);
	/* 16 heads at TP 2: 1 head of 2 per rank... the tower's 32 split into 16 + 16 */
	shp(&f, 1, VT "encoder.layers.0.self_attn.qkv_proj.weight", 2, 3 * 16, VE, 0);
	fx_close(&f);
	/* image_size 224 / patch 32 (the class defaults): 7 patches a side, scale_factor 2 */
	static const char cfg7[] =
	    CFG_HEAD("") VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64");
	fx_refused(i3_model(false, true, 12), cfg7, WT_ESHAPE, "scale_factor 2 does not divide",
	           "7 patches a side");
	/* LlamaConfig's class defaults (KV = H), scale_factor 2, the top level's tie not read */
	static const char cls[] =
	    "{\"architectures\":[\"Idefics3ForConditionalGeneration\"],\"model_type\":\"idefics3\","
	    "\"tie_word_embeddings\":true,\"text_config\":{\"vocab_size\":128259},"
	    "\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.hidden_size == 4096 && c.num_attention_heads == 32 &&
	            c.num_key_value_heads == 32 && c.intermediate_size == 11008 &&
	            c.vocab_size == 128259 && c.num_hidden_layers == 32 &&
	            c.v_spatial_merge_size == 2 && strcmp(c.lm_model_type, "llama") == 0 &&
	            !c.tie_given && !c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* text_config's tie_word_embeddings true: lm_head absent is fine, present skipped */
	static const char cfg_tied[] =
	    "{\"architectures\":[\"Idefics3ForConditionalGeneration\"],\"model_type\":\"idefics3\","
	    "\"tie_word_embeddings\":false,\"text_config\":{" LM_KEYS
	    ",\"tie_word_embeddings\":true}" VISION_CFG(VISION_KEYS);
	fx_open(&f, i3_model(false, false, 2), cfg_tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_int_equal(tm_ix(f.p, 0, "lm_head.weight"), -1);
	fx_close(&f);
	/* the top level's true with text_config silent: untied, lm_head required */
	static const char cfg_top[] =
	    CFG_HEAD("\"tie_word_embeddings\":true,") VISION_CFG(VISION_KEYS);
	fx_refused(i3_model(false, false, 2), cfg_top, WT_ENOTFOUND, "lm_head.weight", "");
}

static void test_errors(void **state)
{
	(void)state;
	/* a block past num_hidden_layers, named by the key */
	fx_refused(i3_model(false, true, 3), cfg_i3, WT_ESHAPE, VT "encoder.layers.2.",
	           "vision_config.num_hidden_layers is 2");
	/* post_layernorm is built by vLLM: required */
	tm_model *m = i3_model(false, true, 2);
	tm_remove(m, VT "post_layernorm.bias");
	fx_refused(m, cfg_i3, WT_ENOTFOUND, VT "post_layernorm.bias", "");
	/* the connector: missing, with a bias (bias=False), of scale_factor 1's width */
	m = i3_model(false, true, 2);
	tm_remove(m, PROJ);
	fx_refused(m, cfg_i3, WT_ENOTFOUND, PROJ, "");
	m = i3_model(false, true, 2);
	tm_add2(m, "model.connector.modality_projection.proj.bias", HID, 0);
	fx_refused(m, cfg_i3, WT_EUNSUPPORTED, "model.connector.modality_projection.proj.bias",
	           "idefics3");
	static const char cfg_sf1[] = CFG_HEAD("\"scale_factor\":1,") VISION_CFG(VISION_KEYS);
	fx_refused(i3_model(false, true, 2), cfg_sf1, WT_ESHAPE, PROJ, "");
	/* scale_factor 3 does not divide the 4 x 4 grid */
	static const char cfg_sf3[] = CFG_HEAD("\"scale_factor\":3,") VISION_CFG(VISION_KEYS);
	fx_refused(i3_model(false, true, 2), cfg_sf3, WT_ESHAPE, "scale_factor 3",
	           "4 patches a side");
	/* the position table follows image_size / patch_size: 16 wants 8 x 8 rows */
	static const char cfg16[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"
	               "\"num_hidden_layers\":2,\"image_size\":16,\"patch_size\":2");
	fx_refused(i3_model(false, true, 2), cfg16, WT_ESHAPE,
	           VT "embeddings.position_embedding.weight", "");
	/* image below a patch */
	static const char cfg_small[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":8,"
	               "\"num_hidden_layers\":2,\"image_size\":1,\"patch_size\":2");
	fx_refused(i3_model(false, true, 2), cfg_small, WT_ECORRUPT, "image_size 1",
	           "patch_size 2");
	/* heads: 3 do not divide 32; 2 heads TP 4 cannot split */
	static const char cfg3h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	               "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2");
	fx_refused(i3_model(false, true, 2), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	static const char cfg2h[] = CFG_HEAD("")
	    VISION_CFG(",\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":2,"
	               "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2");
	fx_refused_tp(i3_model(false, true, 2), cfg2h, 4, WT_ELAYOUT,
	              "vision_config.num_attention_heads 2", "");
	/* another language model, none, no tower */
	static const char cfg_qwen[] =
	    "{\"architectures\":[\"Idefics3ForConditionalGeneration\"],\"model_type\":\"idefics3\","
	    "\"text_config\":{\"model_type\":\"qwen2\",\"hidden_size\":64,\"num_attention_heads\":"
	    "8,\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1}" VISION_CFG(VISION_KEYS);
	fx_refused(i3_model(false, true, 2), cfg_qwen, WT_EUNSUPPORTED,
	           "text_config.model_type 'qwen2'", "llama");
	static const char cfg_nov[] = CFG_HEAD("") "}";
	fx_refused(i3_model(false, true, 2), cfg_nov, WT_ECORRUPT, "needs vision_config", "");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"Idefics3ForConditionalGeneration\"],\"model_type\":\"idefics3\","
	    "\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	    "\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":1" VISION_CFG(
	        VISION_KEYS);
	fx_refused(i3_model(false, true, 2), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
	/* a Llama name outside model.text_model. */
	m = i3_model(false, true, 2);
	tm_add2(m, "model.layers.0.input_layernorm.weight", HID, 0);
	fx_refused(m, cfg_i3, WT_EUNSUPPORTED, "model.layers.0.input_layernorm.weight", "idefics3");
}

/* SmolVLM (SmolVLMForConditionalGeneration): Idefics3's table and checks under SmolVLM's
 * names: the same shards byte for byte at TP 2 and 4, tied by text_config alone, coverage,
 * SmolVLMConfig's scale_factor 2 when absent, its refusals. */
#define CFG_SMOL(top, text)                                                                        \
	"{\"architectures\":[\"SmolVLMForConditionalGeneration\"],\"model_type\":\"smolvlm\"," top \
	"\"text_config\":{" LM_KEYS text "}"
static const char cfg_smol[] = CFG_SMOL("", "") VISION_CFG(VISION_KEYS);

static void test_smolvlm(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx a, b;
		fx_open(&a, i3_model(false, true, 2), cfg_i3, tps[i], 1, 0, true);
		fx_open(&b, i3_model(false, true, 2), cfg_smol, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			fx_same_rank(&a, &b, r, NULL);
			check_rank(&b, tps[i], r);
		}
		fx_close(&a);
		fx_close(&b);
	}
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(i3_model(false, true, 2), cfg_smol, 2, lays, 4);
	/* tied by text_config (the top level says false): lm_head absent, served by nothing */
	static const char cfg_tied[] =
	    CFG_SMOL("\"tie_word_embeddings\":false,", ",\"tie_word_embeddings\":true")
	        VISION_CFG(VISION_KEYS);
	fx f;
	fx_open(&f, i3_model(false, false, 2), cfg_tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_int_equal(tm_ix(f.p, 1, "lm_head.weight"), -1);
	fx_close(&f);
	/* the top level's true alone: untied, lm_head required */
	static const char cfg_top[] =
	    CFG_SMOL("\"tie_word_embeddings\":true,", "") VISION_CFG(VISION_KEYS);
	fx_refused(i3_model(false, false, 2), cfg_top, WT_ENOTFOUND, "lm_head.weight", "");
	/* SmolVLMConfig's defaults: scale_factor 2, LlamaConfig's text model */
	static const char cls[] =
	    "{\"architectures\":[\"SmolVLMForConditionalGeneration\"],\"model_type\":\"smolvlm\","
	    "\"text_config\":{\"vocab_size\":49280},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.hidden_size == 4096 && c.num_key_value_heads == 32 && c.vocab_size == 49280 &&
	            c.v_spatial_merge_size == 2 && strcmp(c.lm_model_type, "llama") == 0);
	ckpt_config_clear(&c);
	/* scale_factor 4 (SmolVLM-256M's) against a 4 x 4 grid: proj 16 VE wide wanted */
	static const char cfg_sf4[] = CFG_SMOL("\"scale_factor\":4,", "") VISION_CFG(VISION_KEYS);
	fx_refused(i3_model(false, true, 2), cfg_sf4, WT_ESHAPE, PROJ, "[64, 512]");
	/* another text model, no tower */
	static const char cfg_mis[] =
	    "{\"architectures\":[\"SmolVLMForConditionalGeneration\"],\"model_type\":\"smolvlm\","
	    "\"text_config\":{\"model_type\":\"mistral\",\"hidden_size\":64,"
	    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":128,"
	    "\"vocab_size\":128,\"num_hidden_layers\":1}" VISION_CFG(VISION_KEYS);
	fx_refused(i3_model(false, true, 2), cfg_mis, WT_EUNSUPPORTED,
	           "text_config.model_type 'mistral'", "SmolVLMForConditionalGeneration");
	static const char cfg_nov[] = CFG_SMOL("", "") "}";
	fx_refused(i3_model(false, true, 2), cfg_nov, WT_ECORRUPT, "needs vision_config", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_text),
	    cmocka_unit_test(test_int8),        cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_smolvlm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
