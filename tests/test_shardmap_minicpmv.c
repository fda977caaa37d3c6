/*
 * test_shardmap_minicpmv.c — MiniCPM-V (MiniCPMV, model_type minicpmv; docs/format.md section
 * 2.7), cut as vLLM's minicpmv.py / resampler.py / idefics2_vision_model.py load it, per
 * supported version (2.5 and 4.0: LlamaForCausalLM, 2.6: Qwen2ForCausalLM, 4.5:
 * Qwen3ForCausalLM): the vpm.* tower block's rank slices by hand at TP 2 and 4 (q/k/v and
 * their biases fused by heads into qkv_proj, out_proj and fc2 by columns, fc1 by rows, the
 * rest whole), the embeddings, post_layernorm and every resampler.* tensor whole; the language
 * model under llm. byte for byte the llama / qwen2 / qwen3 families' ranks of the same weights
 * (TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4); resampler.kv_proj quantized whole,
 * the rest of the resampler kept; coverage; drop_vision_last_layer; the config's defaults;
 * the refusals (versions, missing / unknown tensors, shapes, tp). Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x3c9a5ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_tower.h"

/* the LM: hid 128 (the resampler's nn.MultiheadAttention: 1 head), H 8, KV 2, d 16, I 192,
 * V 1000 (padded 1024), 2 layers; the tower: width 64, 8 heads of 8, MLP 128, image 4 /
 * patch 2 (4 positions), 3 blocks; 16 queries */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define NQ  16
#define LM  "llm."
#define L1  LM "model.layers.1."
#define VT  "vpm."
#define VB  VT "encoder.layers.%d."
#define RS  "resampler."

#define LMK                                                                                        \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"head_dim\":16,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define VKEYS(heads)                                                                               \
	"\"vision_config\":{\"model_type\":\"siglip\",\"hidden_size\":64,\"intermediate_size\":"   \
	"128,\"num_hidden_layers\":3,\"num_attention_heads\":" heads                               \
	",\"image_size\":4,\"patch_size\":2}"
#define CFGV(ver, top, vis)                                                                        \
	"{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":" ver ","       \
	"\"query_num\":16," top LMK "," vis "}"
#define CFG(ver, top) CFGV(ver, "\"drop_vision_last_layer\":false," top, VKEYS("8"))

/* the versions: their config, their LM's text config and family */
enum { K_25 = 0, K_26, K_40, K_45, K_N };
static const char *const cfgs[K_N] = {CFG("2.5", ""), CFG("2.6", ""), CFG("4.0", ""),
                                      CFG("4.5", "")};
static const char *const texts[K_N] = {
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\"," LMK "}",
    "{\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\"," LMK "}",
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\"," LMK "}",
    "{\"architectures\":[\"Qwen3ForCausalLM\"],\"model_type\":\"qwen3\"," LMK "}"};
static const char *const fams[K_N] = {"llama", "qwen2", "llama", "qwen3"};

enum { W_BIAS = 1, W_QKN = 2 };             /* tm_leaf.when: Qwen2's biases, Qwen3's norms */
enum { O_NOKV = 1, O_HEAD = 2, O_POS = 4 }; /* mcv_model options */
static const int lm_opts[K_N] = {0, W_BIAS, 0, W_QKN};

/* The language model under prefix p (version k's class), 2 layers, its head. */
static void add_lm(tm_model *m, const char *p, int k)
{
	char b[200], fmt[100];
	snprintf(b, sizeof(b), "%smodel.embed_tokens.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(b, sizeof(b), "%smodel.norm.weight", p);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%slm_head.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(fmt, sizeof(fmt), "%smodel.layers.%%d.", p);
	static const tm_leaf lm_leaves[] = {{"input_layernorm.weight", HID, 0, 0},
	                                    {"post_attention_layernorm.weight", HID, 0, 0},
	                                    {"self_attn.q_proj.weight", 8 * HD, HID, 0},
	                                    {"self_attn.q_proj.bias", 8 * HD, 0, W_BIAS},
	                                    {"self_attn.k_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.k_proj.bias", 2 * HD, 0, W_BIAS},
	                                    {"self_attn.v_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.v_proj.bias", 2 * HD, 0, W_BIAS},
	                                    {"self_attn.o_proj.weight", HID, 8 * HD, 0},
	                                    {"self_attn.q_norm.weight", HD, 0, W_QKN},
	                                    {"self_attn.k_norm.weight", HD, 0, W_QKN},
	                                    {"mlp.gate_proj.weight", I, HID, 0},
	                                    {"mlp.up_proj.weight", I, HID, 0},
	                                    {"mlp.down_proj.weight", HID, I, 0}};
	tm_layers(m, fmt, 2, lm_leaves, TM_NLEAVES(lm_leaves), lm_opts[k]);
}

/* The resampler's tensors but kv_proj: [rows, cols] (cols 0: a vector). */
static const tm_leaf rs_whole[] = {{RS "query", NQ, HID, 0},
                                   {RS "attn.in_proj_weight", 3 * HID, HID, 0},
                                   {RS "attn.in_proj_bias", 3 * HID, 0, 0},
                                   {RS "attn.out_proj.weight", HID, HID, 0},
                                   {RS "attn.out_proj.bias", HID, 0, 0},
                                   {RS "ln_q.weight", HID, 0, 0},
                                   {RS "ln_q.bias", HID, 0, 0},
                                   {RS "ln_kv.weight", HID, 0, 0},
                                   {RS "ln_kv.bias", HID, 0, 0},
                                   {RS "ln_post.weight", HID, 0, 0},
                                   {RS "ln_post.bias", HID, 0, 0},
                                   {RS "proj", HID, HID, 0}};

/* The MiniCPM-V checkpoint of version k: the LM, `blocks` tower blocks with the embeddings
 * and post_layernorm, the resampler (opt: O_NOKV without kv_proj, O_HEAD with a pooling head
 * vpm.head.*, O_POS with a resampler.pos_embed). */
static tm_model *mcv_model(int k, int blocks, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM, k);
	tm_siglip_tower(m, VT, blocks, VE, VI, 4, 0);
	if (opt & O_HEAD) {
		tm_add(m, VT "head.probe", WT_DTYPE_INVALID, 3, 1, 1, VE);
		tm_add2(m, VT "head.attention.in_proj_weight", 3 * VE, VE);
	}
	for (size_t j = 0; j < TM_NLEAVES(rs_whole); j++)
		tm_add2(m, rs_whole[j].leaf, rs_whole[j].a, rs_whole[j].b);
	if (!(opt & O_NOKV))
		tm_add2(m, RS "kv_proj.weight", HID, VE);
	if (opt & O_POS)
		tm_add(m, RS "pos_embed", WT_DTYPE_INVALID, 3, 70, 70, HID);
	return m;
}

static tm_model *text_model(int k)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "", k);
	return m;
}

static const char *const tower_whole[] = {VT "embeddings.patch_embedding.weight",
                                          VT "embeddings.patch_embedding.bias",
                                          VT "embeddings.position_embedding.weight",
                                          VT "post_layernorm.weight",
                                          VT "post_layernorm.bias",
                                          RS "kv_proj.weight"};

/* Rank r of T by hand: the tower's blocks and whole tensors, the resampler whole, the LM's
 * layer 1 and vocabulary tables, the rank's count. */
static void rank_is(const fx *f, int k, uint32_t T, uint32_t r, int blocks)
{
	for (int blk = 0; blk < blocks; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t j = 0; j < sizeof(tower_whole) / sizeof(tower_whole[0]); j++)
		repl(f, r, tower_whole[j]);
	for (size_t j = 0; j < TM_NLEAVES(rs_whole); j++)
		repl(f, r, rs_whole[j].leaf);
	shp(f, r, RS "query", 2, NQ, HID, 0);
	shp(f, r, RS "kv_proj.weight", 2, HID, VE, 0);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, LM "model.embed_tokens.weight", V, VP, HID);
	fx_vocab_is(f, r, T, LM "lm_head.weight", V, VP, HID);
	if (k == K_45) {
		repl(f, r, L1 "self_attn.q_norm.weight");
		repl(f, r, L1 "self_attn.k_norm.weight");
	}
	int per = k == K_26 ? 7 : k == K_45 ? 8 : 6; /* the LM's outputs a layer */
	/* blocks x 12, the tower's 5, the resampler's 13; the LM's 3 + 2 layers */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), blocks * 12 + 5 + 13 + 3 + 2 * per);
}

/* TP 2 and 4 by hand, every version; nothing skipped, untied. */
static void test_mcv_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int k = 0; k < K_N; k++) {
			fx f;
			fx_open(&f, mcv_model(k, 3, 0), cfgs[k], T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "minicpmv");
			for (uint32_t r = 0; r < T; r++)
				rank_is(&f, k, T, r, 3);
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* Every rank's llm.* outputs byte for byte the text family's ranks of the same weights (no
 * more, no fewer): TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4; every version. */
static void test_mcv_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++)
		for (int k = 0; k < K_N; k++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = lays[j].tp;
			l.quant = lays[j].q;
			fx a, b;
			fx_open_l(&a, mcv_model(k, 3, 0), cfgs[k], &l, true);
			fx_open_l(&b, text_model(k), texts[k], &l, true);
			assert_string_equal(shardmap_family(b.p), fams[k]);
			for (uint32_t r = 0; r < l.tp_size; r++)
				fx_same_rank(&a, &b, r, LM);
			fx_close(&a);
			fx_close(&b);
		}
}

/* The tower's Linears, resampler.kv_proj (whole, ReplicatedLinear with the quantization config)
 * and the LM's quantized; the resampler's MultiheadAttention, query, proj and norms, the
 * embeddings, norms and biases kept BF16: int8-channel TP 2 (rank 1's out_proj / fc2 codes by
 * columns, kv_proj's every row on both ranks), fp8-channel TP 4. */
static void test_mcv_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {RS "query",
	                                   RS "attn.in_proj_weight",
	                                   RS "attn.out_proj.weight",
	                                   RS "proj",
	                                   RS "ln_kv.weight",
	                                   VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   VT "post_layernorm.weight",
	                                   LM "model.embed_tokens.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.2.mlp.fc1.weight",
	                                VT "encoder.layers.2.mlp.fc2.weight",
	                                RS "kv_proj.weight",
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight"};
	fx f;
	fx_open_quant(&f, mcv_model(K_26, 3, 0), cfgs[K_26], 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.2.mlp.fc2.weight", VE, VI);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, RS "kv_proj.weight", 2, HID, VE, 0);
		fx_rows_int8_is(&f, r, RS "kv_proj.weight", 0, RS "kv_proj.weight", 0, HID, VE);
	}
	fx_close(&f);
	fx_open_quant(&f, mcv_model(K_45, 3, 0), cfgs[K_45], 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8, every version. */
static void test_mcv_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	for (int k = 0; k < K_N; k++)
		coverage(mcv_model(k, 3, 0), cfgs[k], 2, lays, 4);
}

/* drop_vision_last_layer (true, and absent: MiniCPMVConfig's default) builds blocks 0 and 1:
 * the checkpoint's block 2 skipped (vLLM's loader skips it), the rest as without it; a
 * checkpoint without block 2 plans the same; vpm.head.* skipped; a block past
 * num_hidden_layers refused. */
static void test_mcv_drop_last(void **state)
{
	(void)state;
	static const char on[] = CFGV("2.6", "\"drop_vision_last_layer\":true,", VKEYS("8"));
	static const char dflt[] = CFGV("2.6", "", VKEYS("8"));
	const char *cf[] = {on, dflt};
	for (int j = 0; j < 2; j++) {
		fx f;
		fx_open(&f, mcv_model(K_26, 3, O_HEAD), cf[j], 2, 1, 0, true);
		for (uint32_t r = 0; r < 2; r++)
			rank_is(&f, K_26, 2, r, 2);
		assert_true(fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
		assert_true(fx_skipped(&f, VT "head.probe"));
		assert_int_equal(tm_ix(f.p, 0, VT "encoder.layers.2.mlp.fc1.weight"), -1);
		assert_int_equal(shardmap_n_skipped(f.p), 16 + 2);
		fx_close(&f);
		fx_open(&f, mcv_model(K_26, 2, 0), cf[j], 4, 1, 0, true);
		for (uint32_t r = 0; r < 4; r++)
			rank_is(&f, K_26, 4, r, 2);
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
	fx_refused(mcv_model(K_26, 4, 0), cfgs[K_26], WT_ESHAPE, "encoder.layers.3.",
	           "num_hidden_layers is 3");
	fx_refused(mcv_model(K_26, 3, 0),
	           CFGV("2.6", "",
	                "\"vision_config\":{\"hidden_size\":64,\"num_attention_heads\":8,"
	                "\"num_hidden_layers\":1}"),
	           WT_EUNSUPPORTED, "drop_vision_last_layer", "no block");
}

/* The defaults: without vision_config MiniCPMVConfig's (SigLIP-400M, 27 layers), with one
 * SiglipVisionConfig's for absent keys; query_num 64, drop_vision_last_layer true; the
 * version's language-model class and its defaults (Qwen2Config's vocab_size, Qwen3Config's
 * head_dim); no version key: 2.5 (Llama), and 2.0 when hidden_size is 2304 with query_num 64
 * (test_mcv_errors); the tie from the top level. */
static void test_mcv_defaults(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse("{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.6}",
	         &c);
	assert_int_equal(c.v_hidden_size, 1152);
	assert_int_equal(c.v_intermediate_size, 4304);
	assert_int_equal(c.v_num_layers, 26); /* 27, the last dropped */
	assert_int_equal(c.v_num_attn_heads, 16);
	assert_int_equal(c.v_image_size, 980);
	assert_int_equal(c.v_patch_size, 14);
	assert_int_equal(c.mcv_query_num, 64);
	assert_true(c.mcv_drop_last);
	assert_int_equal(c.mcv_version, 26);
	assert_string_equal(c.lm_model_type, "qwen2");
	assert_int_equal(c.vocab_size, 151936);
	assert_false(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	tm_parse(
	    "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":\"4.5\","
	    "\"tie_word_embeddings\":true,\"vision_config\":{\"intermediate_size\":4304}}",
	    &c);
	assert_int_equal(c.v_hidden_size, 768);
	assert_int_equal(c.v_intermediate_size, 4304);
	assert_int_equal(c.v_num_layers, 11);
	assert_int_equal(c.v_num_attn_heads, 12);
	assert_int_equal(c.v_image_size, 224);
	assert_int_equal(c.v_patch_size, 16);
	assert_int_equal(c.mcv_version, 45);
	assert_string_equal(c.lm_model_type, "qwen3");
	assert_int_equal(c.head_dim, 128);
	assert_true(c.tie_word_embeddings);
	ckpt_config_clear(&c);
	tm_parse("{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":4.0}",
	         &c);
	assert_int_equal(c.mcv_version, 40);
	assert_string_equal(c.lm_model_type, "llama");
	ckpt_config_clear(&c);
	tm_parse(
	    "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"hidden_size\":4096}",
	    &c);
	assert_int_equal(c.mcv_version, 25);
	assert_string_equal(c.lm_model_type, "llama");
	assert_int_equal(c.vocab_size, 32000);
	ckpt_config_clear(&c);
	/* tied by the top level: the head is skipped */
	fx f;
	fx_open(&f, mcv_model(K_25, 3, 0), CFG("2.5", "\"tie_word_embeddings\":true,"), 2, 1, 0,
	        false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
}

/* The refusals, each naming its key or tensor. */
static void test_mcv_errors(void **state)
{
	(void)state;
	/* version 2.0 (explicit, or derived from hidden_size 2304): MiniCPM-V-2's table
	 * (test_shardmap_minicpmv2.c), which has no q/k/v biases and no Idefics2 tower */
	fx_refused(mcv_model(K_26, 3, 0), CFG("2.0", ""), WT_EUNSUPPORTED,
	           "llm.model.layers.0.self_attn.k_proj.bias", "unknown tensor");
	fx_refused(mcv_model(K_25, 3, 0),
	           "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\","
	           "\"hidden_size\":2304," VKEYS("8") "}",
	           WT_ESHAPE, "llm.lm_head.weight", "[32000, 2304]"); /* MiniCPMConfig's vocab */
	fx_refused(mcv_model(K_26, 3, 0), CFG("2.7", ""), WT_EUNSUPPORTED, "version 2.7",
	           "2.5, 2.6, 4.0 or 4.5");
	fx_refused(mcv_model(K_26, 3, 0), CFG("4", ""), WT_EUNSUPPORTED, "version 4:", "4.0");
	fx_refused(mcv_model(K_26, 3, 0), CFG("\"2.6.1\"", ""), WT_EUNSUPPORTED, "version 2.6.1",
	           "2.6");
	fx_refused(mcv_model(K_26, 3, 0), CFG("[2, 6]", ""), WT_ECORRUPT, "version",
	           "not a number or a string");
	fx_refused(mcv_model(K_26, 3, 0), CFGV("2.6", "", "\"vision_config\":3"), WT_ECORRUPT,
	           "vision_config", "not an object");
	fx_refused(mcv_model(K_26, 3, 0), CFGV("2.6", "", VKEYS("6")), WT_ECORRUPT,
	           "num_attention_heads", "64");
	fx_refused(mcv_model(K_26, 3, 0),
	           "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.6,"
	           "\"query_num\":0," LMK "," VKEYS("8") "}",
	           WT_ECORRUPT, "query_num", "");
	/* a resampler sized for another query_num */
	fx_refused(mcv_model(K_26, 3, 0),
	           "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.6,"
	           "\"query_num\":64,\"drop_vision_last_layer\":false," LMK "," VKEYS("8") "}",
	           WT_ESHAPE, "resampler.query", "64");
	/* the tower's heads must divide tp_size (Idefics2VisionAttention asserts it): 8 at TP 16 */
	fx_refused_tp(mcv_model(K_26, 3, 0), cfgs[K_26], 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(mcv_model(K_26, 3, 0),
	              CFGV("2.6", "\"drop_vision_last_layer\":false,", VKEYS("4")), 8, WT_ELAYOUT,
	              "tp_size 8", "vision_config.num_attention_heads 4");
	/* missing and unknown tensors */
	fx_refused(mcv_model(K_26, 3, O_NOKV), cfgs[K_26], WT_ENOTFOUND, "resampler.kv_proj.weight",
	           "");
	fx_refused(mcv_model(K_26, 3, O_POS), cfgs[K_26], WT_EUNSUPPORTED, "resampler.pos_embed",
	           "unknown tensor");
	fx_refused(mcv_model(K_25, 3, 0), cfgs[K_45], WT_ENOTFOUND, "q_norm", "");
	fx_refused(mcv_model(K_45, 3, 0), cfgs[K_26], WT_EUNSUPPORTED, "q_norm",
	           "version is not 4.5");
	/* the resampler vLLM cannot build, and the identity kv_proj */
	fx_refused(mcv_model(K_26, 3, 0),
	           "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.6,"
	           "\"hidden_size\":385,\"num_attention_heads\":5,\"num_key_value_heads\":1,"
	           "\"head_dim\":77,\"intermediate_size\":192,\"vocab_size\":1000,"
	           "\"num_hidden_layers\":2," VKEYS("8") "}",
	           WT_EUNSUPPORTED, "hidden_size 385", "nn.MultiheadAttention");
	fx_refused(mcv_model(K_26, 3, 0),
	           "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"minicpmv\",\"version\":2.6,"
	           "\"query_num\":16," LMK ",\"vision_config\":{\"hidden_size\":128,"
	           "\"num_attention_heads\":8,\"num_hidden_layers\":3,\"image_size\":4,"
	           "\"patch_size\":2}}",
	           WT_EUNSUPPORTED, "equals hidden_size", "kv_proj");
	/* MiniCPMV under another model_type */
	fx_refused(mcv_model(K_26, 3, 0),
	           "{\"architectures\":[\"MiniCPMV\"],\"model_type\":\"qwen2\"," LMK "}",
	           WT_ECORRUPT, "MiniCPMV", "minicpmv");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mcv_slices),    cmocka_unit_test(test_mcv_same_lm),
	    cmocka_unit_test(test_mcv_quant),     cmocka_unit_test(test_mcv_coverage),
	    cmocka_unit_test(test_mcv_drop_last), cmocka_unit_test(test_mcv_defaults),
	    cmocka_unit_test(test_mcv_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
