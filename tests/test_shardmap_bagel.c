/*
 * test_shardmap_bagel.c — BAGEL (BagelForConditionalGeneration; docs/format.md section 2.7),
 * cut as vLLM's bagel.py / siglip.py / qwen2.py load it: the vit_model.vision_model.* SigLIP
 * block's rank slices by hand at TP 2 and 4, the embeddings and post_layernorm whole, the
 * connector's fc1 by rows (with its bias) and fc2 by columns; the language model byte for byte
 * the qwen3 family's ranks of the same weights (llm_config.qk_norm true: q_norm / k_norm) or
 * the qwen2 family's (false) at TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4; which
 * tensors are quantized; coverage; the generation branch, vit_pos_embed and the blocks past
 * vit_config's count skipped; the pooling head by vit_config.vision_use_head; the config read
 * (27 blocks as 26, BagelConfig's and Qwen2Config's defaults); the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x626167656cull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_tower.h"
#include "test_shardmap_same_lm.h"

/* the LM (Qwen2): hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower:
 * width 64, 8 heads of 8, MLP 128 (96: SiglipMLP unquantized), image 4 / patch 2 (4
 * positions), 2 blocks */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define LM  "language_model."
#define L1  LM "model.layers.1."
#define VT  "vit_model.vision_model."
#define VB  VT "encoder.layers.%d."
#define C   "connector."

#define ARCH "BagelForConditionalGeneration"
#define LMK(extra)                                                                                 \
	"\"llm_config\":{\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":\"qwen2\","       \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define VITK(inter, heads, blocks, extra)                                                          \
	"\"vit_config\":{\"hidden_size\":64,\"intermediate_size\":" inter                          \
	",\"num_hidden_layers\":" blocks ",\"num_attention_heads\":" heads ",\"image_size\":4,"    \
	"\"patch_size\":2" extra "}"
#define CFGL(top, lm, vis)                                                                         \
	"{\"architectures\":[\"" ARCH "\"],\"model_type\":\"bagel\"," top lm "," vis               \
	",\"vit_max_num_patch_per_side\":2,\"connector_act\":\"gelu_pytorch_tanh\"}"
#define QK    ",\"qk_norm\":true,\"tie_word_embeddings\":false"
#define VIT2  VITK("128", "8", "2", "")
#define CFG_Q CFGL("\"visual_gen\":true,\"visual_und\":true,", LMK(QK), VIT2)

static const char cfg[] = CFG_Q;
static const char cfg_noqk[] = CFGL("", LMK(""), VIT2);
#define TEXT(arch, mt)                                                                             \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\",\"hidden_size\":128,"         \
	"\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"           \
	"\"head_dim\":16,\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":"     \
	"false}"
static const char qwen3_cfg[] = TEXT("Qwen3ForCausalLM", "qwen3");
static const char qwen2_cfg[] = TEXT("Qwen2ForCausalLM", "qwen2");

/* bg_model options */
enum { O_NOQK = 1, O_HEAD = 2, O_GEN = 4, O_PE2 = 8, O_NOFC2B = 16, O_NOHEADLM = 32 };

/* The Qwen2 language model under prefix p (LM, or "" for the text family's checkpoint), with
 * q_norm / k_norm unless O_NOQK. */
static void add_lm(tm_model *m, const char *p, unsigned opt)
{
	char b[200];
	snprintf(b, sizeof(b), "%smodel.embed_tokens.weight", p);
	tm_add2(m, b, V, HID);
	snprintf(b, sizeof(b), "%smodel.norm.weight", p);
	tm_add2(m, b, HID, 0);
	snprintf(b, sizeof(b), "%slm_head.weight", p);
	if (!(opt & O_NOHEADLM))
		tm_add2(m, b, V, HID);
	static const tm_leaf lm_leaves[] = {{"input_layernorm.weight", HID, 0, 0},
	                                    {"post_attention_layernorm.weight", HID, 0, 0},
	                                    {"self_attn.q_proj.weight", 8 * HD, HID, 0},
	                                    {"self_attn.q_proj.bias", 8 * HD, 0, 0},
	                                    {"self_attn.k_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.k_proj.bias", 2 * HD, 0, 0},
	                                    {"self_attn.v_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.v_proj.bias", 2 * HD, 0, 0},
	                                    {"self_attn.o_proj.weight", HID, 8 * HD, 0},
	                                    {"mlp.gate_proj.weight", I, HID, 0},
	                                    {"mlp.up_proj.weight", I, HID, 0},
	                                    {"mlp.down_proj.weight", HID, I, 0}};
	static const tm_leaf qk_leaves[] = {{"self_attn.q_norm.weight", HD, 0, 0},
	                                    {"self_attn.k_norm.weight", HD, 0, 0}};
	snprintf(b, sizeof(b), "%smodel.layers.%%d.", p);
	tm_layers(m, b, 2, lm_leaves, TM_NLEAVES(lm_leaves), 0);
	if (!(opt & O_NOQK))
		tm_layers(m, b, 2, qk_leaves, TM_NLEAVES(qk_leaves), 0);
}

/* What bagel.py skips: the generation branch (MoT twins, VAE projections, embedders, the VAE)
 * and vit_pos_embed's buffer. */
static const char *const gen_names[] = {
    LM "model.layers.0.self_attn.q_proj_moe_gen.weight",
    LM "model.layers.1.mlp_moe_gen.gate_proj.weight",
    LM "model.layers.1.input_layernorm_moe_gen.weight",
    LM "model.norm_moe_gen.weight",
    "latent_pos_embed.pos_embed",
    "llm2vae.weight",
    "vae2llm.weight",
    "time_embedder.mlp.0.weight",
    "vit_pos_embed.pos_embed",
    "decoder.conv_in.weight",
    "encoder.conv_in.weight",
};

/* The BAGEL checkpoint: the LM, `blocks` tower blocks of MLP width vi with the embeddings and
 * post_layernorm, the connector (opt: O_NOQK without q_norm / k_norm, O_HEAD with a pooling
 * head, O_GEN with gen_names, O_PE2 with the patch stored 2-D, O_NOFC2B without fc2's bias,
 * O_NOHEADLM without lm_head). */
static tm_model *bg_model(int blocks, int64_t vi, int64_t fc1_cols, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM, opt);
	tm_siglip_tower(m, VT, blocks, VE, vi, 4, (opt & O_PE2) ? TM_TOWER_PE2D : 0);
	if (opt & O_HEAD)
		tm_siglip_head(m, VT, VE, vi);
	tm_add2(m, C "fc1.weight", HID, fc1_cols);
	tm_add2(m, C "fc1.bias", HID, 0);
	tm_add2(m, C "fc2.weight", HID, HID);
	if (!(opt & O_NOFC2B))
		tm_add2(m, C "fc2.bias", HID, 0);
	for (size_t k = 0; (opt & O_GEN) && k < sizeof(gen_names) / sizeof(gen_names[0]); k++)
		tm_add2(m, gen_names[k], 16, 0);
	return m;
}

static tm_model *text_model(unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "", opt);
	return m;
}

static const char *const whole[] = {
    VT "embeddings.patch_embedding.weight",
    VT "embeddings.patch_embedding.bias",
    VT "embeddings.position_embedding.weight",
    VT "post_layernorm.weight",
    VT "post_layernorm.bias",
    C "fc2.bias",
    L1 "input_layernorm.weight",
    L1 "self_attn.q_norm.weight",
    L1 "self_attn.k_norm.weight",
};

/* Rank r of T by hand: the tower's blocks, the whole tensors, the connector, the LM's layer 1
 * and vocabulary tables, the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
		repl(f, r, whole[j]);
	assert_int_equal(info(f, r, VT "embeddings.patch_embedding.weight")->ndim, 4);
	shp(f, r, C "fc1.weight", 2, HID / T, VE, 0);
	rows_at(f, r, C "fc1.weight", 0, C "fc1.weight", r * (HID / T), HID / T);
	shp(f, r, C "fc1.bias", 1, HID / T, 0, 0);
	rows_at(f, r, C "fc1.bias", 0, C "fc1.bias", r * (HID / T), HID / T);
	cols_of(f, r, T, C "fc2.weight", C "fc2.weight", HID, HID);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	shp(f, r, L1 "self_attn.qkv_proj.bias", 1, (8 / T + 2 * (2 >= T ? 2 / T : 1)) * HD, 0, 0);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, LM "model.embed_tokens.weight", V, VP, HID);
	fx_vocab_is(f, r, T, LM "lm_head.weight", V, VP, HID);
	/* 2 blocks x 12, the tower's 5, the connector's 4; the LM's 3 + 2 layers x 9 (qkv_proj
	 * weight and bias, o_proj, gate_up_proj, down_proj, two norms, q_norm, k_norm) */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 5 + 4 + 3 + 2 * 9);
}

/* TP 2 and 4 by hand; nothing skipped, untied. */
static void test_bg_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, bg_model(2, VI, VE, 0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "bagel");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* Every rank's outputs outside vit_model.* and connector.* equal byte for byte the text
 * family's ranks of the same weights without the language_model. prefix: qwen3's (q_norm /
 * k_norm, Qwen2's optional biases) for qk_norm true, qwen2's for false. */
static const char *const not_lm[] = {"vit_model.", C, NULL};

static void test_bg_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (int qk = 0; qk < 2; qk++)
		for (size_t j = 0; j < sizeof(lays) / sizeof(lays[0]); j++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = lays[j].tp;
			l.quant = lays[j].q;
			unsigned opt = qk ? 0 : O_NOQK;
			const char *what = qk ? "qwen3" : "qwen2";
			fx a, b;
			fx_open_l(&a, bg_model(2, VI, VE, opt), qk ? cfg : cfg_noqk, &l, true);
			fx_open_l(&b, text_model(opt), qk ? qwen3_cfg : qwen2_cfg, &l, true);
			assert_string_equal(shardmap_family(b.p), what);
			for (uint32_t r = 0; r < l.tp_size; r++)
				fx_same_rank_strip(&a, &b, r, not_lm, LM, what);
			fx_close(&a);
			fx_close(&b);
		}
}

/* The tower's Linears, the connector and the LM's quantized; the embeddings, norms and biases
 * kept BF16: int8-channel TP 2 (rank 1's out_proj / fc2 / connector fc2 codes by columns),
 * fp8-channel TP 4; with MLP width 96 (not a multiple of 64, as BAGEL's 4304) SiglipMLP's
 * fc1 / fc2, the pooling head's too, are kept. */
static void test_bg_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   VT "post_layernorm.weight",
	                                   C "fc1.bias",
	                                   C "fc2.bias",
	                                   LM "model.embed_tokens.weight",
	                                   LM "lm_head.weight",
	                                   L1 "self_attn.q_norm.weight",
	                                   L1 "input_layernorm.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                C "fc1.weight",
	                                C "fc2.weight",
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight",
	                                L1 "mlp.gate_up_proj.weight"};
	fx f;
	fx_open_quant(&f, bg_model(2, VI, VE, 0), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep), FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", VE, VI);
	fx_cols_int8_is(&f, 1, 2, C "fc2.weight", HID, HID);
	fx_close(&f);
	fx_open_quant(&f, bg_model(2, VI, VE, 0), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_close(&f);
	static const char odd[] =
	    CFGL("", LMK(QK), VITK("96", "8", "2", ",\"vision_use_head\":true"));
	static const char *const keep96[] = {VT "encoder.layers.0.mlp.fc1.weight",
	                                     VT "encoder.layers.1.mlp.fc2.weight",
	                                     VT "head.mlp.fc1.weight",
	                                     VT "head.mlp.fc2.weight",
	                                     VT "head.attention.in_proj_weight",
	                                     VT "head.attention.out_proj.weight"};
	static const char *const q96[] = {VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                  VT "encoder.layers.0.self_attn.out_proj.weight",
	                                  C "fc1.weight", L1 "mlp.down_proj.weight"};
	fx_open_quant(&f, bg_model(2, 96, VE, O_HEAD), odd, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep96), FX_N(q96));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8, with and without q_norm /
 * k_norm, with the pooling head. */
static void test_bg_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(bg_model(2, VI, VE, 0), cfg, 2, lays, 4);
	coverage(bg_model(2, VI, VE, O_NOQK), cfg_noqk, 2, lays, 4);
	static const char head[] =
	    CFGL("", LMK(QK), VITK("128", "8", "2", ",\"vision_use_head\":true"));
	coverage(bg_model(2, VI, VE, O_HEAD), head, 2, lays, 2);
}

/* bagel.py's skips: the generation branch, the VAE and vit_pos_embed.pos_embed; a block past
 * vit_config's count (SiglipVisionModel.load_weights skips it); the rest as without them.
 * Tied: lm_head skipped or absent. */
static void test_bg_skips(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, bg_model(3, VI, VE, O_GEN), cfg, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		rank_is(&f, 2, r);
	for (size_t k = 0; k < sizeof(gen_names) / sizeof(gen_names[0]); k++)
		assert_true(fx_skipped(&f, gen_names[k]));
	assert_true(fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
	assert_int_equal(tm_ix(f.p, 0, "vit_pos_embed.pos_embed"), -1);
	assert_int_equal(shardmap_n_skipped(f.p), sizeof(gen_names) / sizeof(gen_names[0]) + 16);
	fx_close(&f);
	static const char tied[] =
	    CFGL("", LMK(",\"qk_norm\":true,\"tie_word_embeddings\":true"), VIT2);
	fx_open(&f, bg_model(2, VI, VE, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
	fx_open(&f, bg_model(2, VI, VE, O_NOHEADLM), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	/* a top-level tie does not reach the language model (llm_config decides: Qwen2Config's
	 * false where it has no key) */
	static const char top_tie[] =
	    CFGL("\"tie_word_embeddings\":true,", LMK(",\"qk_norm\":true"), VIT2);
	fx_open(&f, bg_model(2, VI, VE, 0), top_tie, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* vit_config num_hidden_layers 27 is read as 26 (bagel.py's override): a 26-block tower plans,
 * a 27th block is skipped; vision_use_head true asks for the pooling head (planned whole but
 * its MLP). */
static void test_bg_blocks_head(void **state)
{
	(void)state;
	static const char c27[] = CFGL("", LMK(QK), VITK("128", "8", "27", ""));
	fx f;
	fx_open(&f, bg_model(26, VI, VE, 0), c27, 2, 1, 0, true);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	fx_vit_block(&f, 2, 1, VB, 25, VE, VI);
	fx_close(&f);
	fx_open(&f, bg_model(27, VI, VE, 0), c27, 2, 1, 0, true);
	assert_int_equal(shardmap_n_skipped(f.p), 16);
	assert_true(fx_skipped(&f, VT "encoder.layers.26.layer_norm1.weight"));
	fx_close(&f);
	static const char head[] =
	    CFGL("", LMK(QK), VITK("128", "8", "2", ",\"vision_use_head\":true"));
	fx_open(&f, bg_model(2, VI, VE, O_HEAD), head, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, VT "head.probe");
		repl(&f, r, VT "head.attention.in_proj_weight");
		repl(&f, r, VT "head.layernorm.bias");
		rows_at(&f, r, VT "head.mlp.fc1.weight", 0, VT "head.mlp.fc1.weight", r * (VI / 2),
		        VI / 2);
		cols_of(&f, r, 2, VT "head.mlp.fc2.weight", VT "head.mlp.fc2.weight", VE, VI);
	}
	fx_close(&f);
}

/* config.json read: llm_config as the language model (Qwen2Config's defaults for absent keys,
 * whatever its model_type), qk_norm, vit_config as the tower (27 blocks as 26, vision_use_head
 * false when absent). */
static void test_bg_config(void **state)
{
	(void)state;
	ckpt_config c;
	tm_parse(cfg, &c);
	assert_string_equal(c.architecture, ARCH);
	assert_true(c.has_vision);
	assert_int_equal(c.hidden_size, HID);
	assert_int_equal(c.head_dim, HD);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.vocab_size, V);
	assert_true(c.use_qk_norm);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_intermediate_size, VI);
	assert_int_equal(c.v_num_layers, 2);
	assert_int_equal(c.v_num_attn_heads, 8);
	assert_false(c.v_use_head);
	assert_string_equal(c.lm_model_type, "qwen2");
	ckpt_config_clear(&c);
	tm_parse(cfg_noqk, &c);
	assert_false(c.use_qk_norm);
	ckpt_config_clear(&c);
	/* neither sub-config: Qwen2Config's and SiglipVisionConfig's defaults */
	tm_parse("{\"architectures\":[\"" ARCH "\"],\"model_type\":\"bagel\"}", &c);
	assert_true(c.has_vision);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.vocab_size, 151936);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_false(c.use_qk_norm);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.v_hidden_size, -1); /* the planner's SigLIP defaults */
	assert_false(c.v_use_head);
	ckpt_config_clear(&c);
	/* BAGEL-7B-MoT's vit_config: 27 blocks read as 26; llm_config's model_type ignored */
	tm_parse(CFGL("", "\"llm_config\":{\"model_type\":\"llama\",\"qk_norm\":true}",
	              "\"vit_config\":{\"hidden_size\":1152,\"intermediate_size\":4304,"
	              "\"num_hidden_layers\":27,\"num_attention_heads\":16,\"image_size\":980,"
	              "\"patch_size\":14,\"vision_use_head\":true}"),
	         &c);
	assert_int_equal(c.v_num_layers, 26);
	assert_true(c.v_use_head);
	assert_true(c.use_qk_norm);
	assert_int_equal(c.hidden_size, 4096);
	ckpt_config_clear(&c);
}

/* The refusals, each naming its key or tensor. */
static void test_bg_errors(void **state)
{
	(void)state;
	tm_model *m = bg_model(2, VI, VE, 0);
	fx_refused(m, CFGL("\"visual_und\":false,", LMK(QK), VIT2), WT_EUNSUPPORTED, "visual_und",
	           "set visual_und true");
	fx_refused(bg_model(2, VI, VE, 0), CFGL("", "\"llm_config\":[]", VIT2), WT_ECORRUPT,
	           "llm_config is not an object", "Qwen2Config");
	fx_refused(bg_model(2, VI, VE, 0), CFGL("", LMK(QK), "\"vit_config\":7"), WT_ECORRUPT,
	           "vit_config is not an object", "SiglipVisionConfig");
	fx_refused(bg_model(2, VI, VE, 0), CFGL("", LMK(",\"qk_norm\":1"), VIT2), WT_ECORRUPT,
	           "llm_config.qk_norm", "true or false");
	fx_refused(bg_model(2, VI, VE, 0),
	           CFGL("", LMK(QK), VITK("128", "8", "2", ",\"vision_use_head\":\"no\"")),
	           WT_ECORRUPT, "vit_config.vision_use_head", "true or false");
	/* the switches: q_norm / k_norm by llm_config.qk_norm, the head by vision_use_head */
	fx_refused(bg_model(2, VI, VE, O_NOQK), cfg, WT_ENOTFOUND, "q_norm.weight': missing",
	           "llm_config.qk_norm true");
	fx_refused(bg_model(2, VI, VE, 0), cfg_noqk, WT_EUNSUPPORTED, "_norm.weight': unknown",
	           "llm_config.qk_norm is false or absent");
	fx_refused(bg_model(2, VI, VE, 0),
	           CFGL("", LMK(QK), VITK("128", "8", "2", ",\"vision_use_head\":true")),
	           WT_ENOTFOUND, "head.", "vit_config.vision_use_head");
	fx_refused(bg_model(2, VI, VE, O_HEAD), cfg, WT_EUNSUPPORTED, "head.",
	           "vit_config.vision_use_head");
	/* the tower's geometry, named as vit_config */
	fx_refused(bg_model(2, VI, VE, 0), CFGL("", LMK(QK), VITK("128", "6", "2", "")),
	           WT_ECORRUPT, "vit_config.num_attention_heads 6", "hidden_size 64");
	fx_refused(bg_model(2, VI, VE, 0),
	           CFGL("", LMK(QK),
	                "\"vit_config\":{\"hidden_size\":64,\"intermediate_size\":128,"
	                "\"num_hidden_layers\":2,\"num_attention_heads\":8,\"image_size\":1,"
	                "\"patch_size\":2}"),
	           WT_ECORRUPT, "vit_config.image_size 1", "patch_size 2");
	/* BAGEL's release stores the patch Conv2d as a Linear: the re-ordering is refused */
	fx_refused(bg_model(2, VI, VE, O_PE2), cfg, WT_EUNSUPPORTED,
	           "patch_embedding.weight': [64, 12]", "[64, 3, 2, 2]");
	/* another model_type: no tower config */
	fx_refused(bg_model(2, VI, VE, 0),
	           "{\"architectures\":[\"" ARCH "\"],\"model_type\":\"qwen2\",\"hidden_size\":128,"
	           "\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ECORRUPT, "needs model_type bagel", "vit_config");
	/* tp_size must divide the LM's heads (8 at TP 16) and the tower's (4 at TP 8) */
	fx_refused_tp(bg_model(2, VI, VE, 0), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
	fx_refused_tp(bg_model(2, VI, VE, 0), CFGL("", LMK(QK), VITK("128", "4", "2", "")), 8,
	              WT_ELAYOUT, "tp_size 8", "vit_config.num_attention_heads");
	/* shapes and presence: the connector's input width, fc2's bias, a missing block */
	fx_refused(bg_model(2, VI, 2 * VE, 0), cfg, WT_ESHAPE, C "fc1.weight", "");
	fx_refused(bg_model(2, VI, VE, O_NOFC2B), cfg, WT_ENOTFOUND, C "fc2.bias", "");
	fx_refused(bg_model(1, VI, VE, 0), cfg, WT_ENOTFOUND, "encoder.layers.1.", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bg_slices), cmocka_unit_test(test_bg_same_lm),
	    cmocka_unit_test(test_bg_quant),  cmocka_unit_test(test_bg_coverage),
	    cmocka_unit_test(test_bg_skips),  cmocka_unit_test(test_bg_blocks_head),
	    cmocka_unit_test(test_bg_config), cmocka_unit_test(test_bg_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
