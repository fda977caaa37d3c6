/*
 * test_shardmap_hcx.c — HyperCLOVAX-SEED-Vision (HCXVisionForCausalLM; docs/format.md section
 * 2.7), cut as vLLM's hyperclovax_vision.py / siglip.py / llama.py load it: the
 * vision_model.vision_model.* SigLIP blocks' rank slices by hand at TP 2 and 4, the tower's
 * embeddings, the C-Abstractor mm_projector.* (pos_emb, prenorm, both RegStages' convs, norms
 * and SE modules, readout) and image_newline whole on every rank and never quantized; the
 * language model byte for byte the llama family's ranks of the same weights at TP 1 / 2 / 4 /
 * 8, int8-channel TP 2, fp8-channel TP 4; coverage; the tower built to use_nth_layer with
 * post_layernorm and the deeper blocks skipped; the switches (proj_pos_emb, proj_prenorm,
 * vision_use_head); the config read and defaults; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x686378ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"
#include "test_shardmap_tower.h"

/* the LM (Llama): hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower:
 * width 64, 8 heads of 8, MLP 128, image 4 / patch 2 (4 positions), 3 blocks of which
 * use_nth_layer -2 builds 2; the C-Abstractor's SE width 16 (64 / 4) */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  128
#define SE  16
#define LM  "language_model."
#define L1  LM "model.layers.1."
#define VT  "vision_model.vision_model."
#define VB  VT "encoder.layers.%d."
#define P   "mm_projector."

#define ARCH "HCXVisionForCausalLM"
#define TEXTK(extra)                                                                               \
	"\"text_config\":{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\","      \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":2" extra "}"
#define VISK(inter, heads, extra)                                                                  \
	"\"vision_config\":{\"model_type\":\"siglip_vision_model\",\"hidden_size\":64,"            \
	"\"intermediate_size\":" inter ",\"num_hidden_layers\":3,\"num_attention_heads\":" heads   \
	",\"image_size\":4,\"patch_size\":2" extra "}"
#define TOP                                                                                        \
	"\"anyres\":true,\"mm_projector_type\":\"cabstractor\","                                   \
	"\"num_queries_vis_abstractor_image\":81,\"max_num_grids\":9,"
#define CFGL(top, text, vis)                                                                       \
	"{\"architectures\":[\"" ARCH "\"],\"model_type\":\"hyperclovax_vlm\"," top text "," vis "}"
#define UNTIED ",\"tie_word_embeddings\":false"
#define VIS    VISK("128", "8", ",\"vision_use_head\":false")

static const char cfg[] = CFGL(TOP, TEXTK(UNTIED), VIS);
static const char llama_cfg[] =
    "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":128,"
    "\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
    "\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":false}";

/* hx_model options */
enum {
	O_HEAD = 1,     /* the SigLIP pooling head */
	O_PRE = 2,      /* mm_projector.prenorm */
	O_NOPOS = 4,    /* no mm_projector.pos_emb */
	O_NOHEADLM = 8, /* no lm_head */
	O_NONL = 16,    /* no image_newline */
	O_SE = 32,      /* net.2.b3's SE 17 wide */
	O_K5 = 64,      /* net.0.b2's conv2 kernel 5 x 5 */
	O_RD = 128,     /* readout.0 reading 2 VE */
};

/* A 4-D tensor [a, b, c, d]. */
static void add4(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * c * d, 0, 0);
	st_desc *t = &m->d[m->n - 1];
	t->ndim = 4;
	t->shape[0] = a;
	t->shape[1] = b;
	t->shape[2] = c;
	t->shape[3] = d;
}

/* The Llama language model under prefix p (LM, or "" for the text family's checkpoint). */
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
	                                    {"self_attn.k_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.v_proj.weight", 2 * HD, HID, 0},
	                                    {"self_attn.o_proj.weight", HID, 8 * HD, 0},
	                                    {"mlp.gate_proj.weight", I, HID, 0},
	                                    {"mlp.up_proj.weight", I, HID, 0},
	                                    {"mlp.down_proj.weight", HID, I, 0}};
	snprintf(b, sizeof(b), "%smodel.layers.%%d.", p);
	tm_layers(m, b, 2, lm_leaves, TM_NLEAVES(lm_leaves), 0);
}

/* One RegNet Bottleneck of the C-Abstractor (13 tensors) under mm_projector.net.s.bb. */
static void add_block(tm_model *m, int s, int b, unsigned opt)
{
	char n[160];
	static const char *const cna[] = {"conv1", "conv2", "conv3"};
	for (int k = 0; k < 3; k++) {
		snprintf(n, sizeof(n), P "net.%d.b%d.%s.conv.weight", s, b, cna[k]);
		int64_t ks = k != 1 ? 1 : (opt & O_K5) && s == 0 && b == 2 ? 5 : 3;
		add4(m, n, VE, k == 1 ? 1 : VE, ks, ks);
		snprintf(n, sizeof(n), P "net.%d.b%d.%s.bn.weight", s, b, cna[k]);
		tm_add2(m, n, VE, 0);
		snprintf(n, sizeof(n), P "net.%d.b%d.%s.bn.bias", s, b, cna[k]);
		tm_add2(m, n, VE, 0);
	}
	int64_t se = (opt & O_SE) && s == 2 && b == 3 ? SE + 1 : SE;
	snprintf(n, sizeof(n), P "net.%d.b%d.se.fc1.weight", s, b);
	add4(m, n, se, VE, 1, 1);
	snprintf(n, sizeof(n), P "net.%d.b%d.se.fc1.bias", s, b);
	tm_add2(m, n, se, 0);
	snprintf(n, sizeof(n), P "net.%d.b%d.se.fc2.weight", s, b);
	add4(m, n, VE, se, 1, 1);
	snprintf(n, sizeof(n), P "net.%d.b%d.se.fc2.bias", s, b);
	tm_add2(m, n, VE, 0);
}

/* The HCX checkpoint: the LM, `blocks` tower blocks of MLP width vi with the embeddings and
 * post_layernorm, the C-Abstractor and image_newline (opt: the O_* above). */
static tm_model *hx_model(int blocks, int64_t vi, unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, LM, opt);
	tm_siglip_tower(m, VT, blocks, VE, vi, 4, 0);
	if (opt & O_HEAD)
		tm_siglip_head(m, VT, VE, vi);
	if (!(opt & O_NOPOS))
		tm_add(m, P "pos_emb", WT_DTYPE_INVALID, 3, 1, 4, VE);
	if (opt & O_PRE) {
		tm_add2(m, P "prenorm.weight", VE, 0);
		tm_add2(m, P "prenorm.bias", VE, 0);
	}
	for (int s = 0; s <= 2; s += 2)
		for (int k = 1; k <= 3; k++)
			add_block(m, s, k, opt);
	tm_add2(m, P "readout.0.weight", HID, opt & O_RD ? 2 * VE : VE);
	tm_add2(m, P "readout.0.bias", HID, 0);
	tm_add2(m, P "readout.2.weight", HID, HID);
	tm_add2(m, P "readout.2.bias", HID, 0);
	if (!(opt & O_NONL))
		tm_add2(m, "image_newline", HID, 0);
	return m;
}

static tm_model *text_model(unsigned opt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, "", opt);
	return m;
}

/* hx_model(3, VI, 0); the text family's checkpoint of the same language model */
static tm_model *hx_rel(void)
{
	return hx_model(3, VI, 0);
}

static tm_model *hx_text(void)
{
	return text_model(0);
}

static const char *const whole[] = {
    VT "embeddings.patch_embedding.weight",
    VT "embeddings.patch_embedding.bias",
    VT "embeddings.position_embedding.weight",
    P "pos_emb",
    P "net.0.b1.conv1.conv.weight",
    P "net.0.b1.conv1.bn.weight",
    P "net.0.b2.conv2.conv.weight",
    P "net.0.b3.se.fc1.weight",
    P "net.0.b3.se.fc1.bias",
    P "net.2.b1.se.fc2.weight",
    P "net.2.b2.se.fc2.bias",
    P "net.2.b3.conv3.conv.weight",
    P "net.2.b3.conv3.bn.bias",
    P "readout.0.weight",
    P "readout.0.bias",
    P "readout.2.weight",
    P "readout.2.bias",
    "image_newline",
    L1 "input_layernorm.weight",
};

/* Rank r of T by hand: the tower's two built blocks, the whole tensors, the LM's layer 1 and
 * vocabulary tables, the rank's count. */
static void rank_is(const fx *f, uint32_t T, uint32_t r)
{
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	for (size_t j = 0; j < sizeof(whole) / sizeof(whole[0]); j++)
		repl(f, r, whole[j]);
	assert_int_equal(info(f, r, P "net.0.b2.conv2.conv.weight")->ndim, 4);
	assert_int_equal(info(f, r, P "pos_emb")->ndim, 3);
	fx_attn_is(f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD, HID);
	fx_mlp_is(f, r, T, L1 "mlp.", I, HID);
	fx_vocab_is(f, r, T, LM "model.embed_tokens.weight", V, VP, HID);
	fx_vocab_is(f, r, T, LM "lm_head.weight", V, VP, HID);
	/* 2 blocks x 12 and the tower's 3 embeddings; the C-Abstractor's pos_emb, 6 blocks x 13
	 * and readout's 4; image_newline; the LM's 3 + 2 layers x 6 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r),
	                 2 * 12 + 3 + 1 + 6 * 13 + 4 + 1 + 3 + 2 * 6);
}

/* TP 2 and 4 by hand; block 2 and post_layernorm skipped (use_nth_layer -2), untied. */
static void test_hx_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, hx_model(3, VI, 0), cfg, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "hcx_vision");
		for (uint32_t r = 0; r < T; r++)
			rank_is(&f, T, r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 16 + 2);
		assert_true(fx_skipped(&f, VT "encoder.layers.2.mlp.fc1.weight"));
		assert_true(fx_skipped(&f, VT "post_layernorm.weight"));
		fx_close(&f);
	}
}

/* Every rank's outputs outside the tower, the projector and image_newline equal byte for byte
 * the llama family's ranks of the same weights without the language_model. prefix. */
static const char *const not_lm[] = {"vision_model.", P, "image_newline", NULL};

static void test_hx_same_lm(void **state)
{
	(void)state;
	fx_same_lm_lays(hx_rel, NULL, cfg, hx_text, llama_cfg, not_lm, LM, "llama");
}

/* The tower's Linears and the LM's quantized; the C-Abstractor (built without the
 * quant_config), image_newline, embeddings, norms and biases kept BF16: int8-channel TP 2
 * (rank 1's out_proj / fc2 codes by columns), fp8-channel TP 4; with MLP width 96 (not a
 * multiple of 64, as the release's 4304) SiglipMLP's fc1 / fc2, the pooling head's too, kept. */
static void test_hx_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {VT "embeddings.patch_embedding.weight",
	                                   VT "embeddings.position_embedding.weight",
	                                   VT "encoder.layers.1.self_attn.qkv_proj.bias",
	                                   P "pos_emb",
	                                   P "net.0.b1.conv1.conv.weight",
	                                   P "net.0.b2.conv2.conv.weight",
	                                   P "net.2.b3.se.fc1.weight",
	                                   P "net.2.b3.se.fc2.weight",
	                                   P "net.2.b1.conv3.conv.weight",
	                                   P "readout.0.weight",
	                                   P "readout.2.weight",
	                                   "image_newline",
	                                   LM "model.embed_tokens.weight",
	                                   LM "lm_head.weight",
	                                   L1 "input_layernorm.weight"};
	static const char *const q[] = {VT "encoder.layers.0.self_attn.qkv_proj.weight",
	                                VT "encoder.layers.1.self_attn.out_proj.weight",
	                                VT "encoder.layers.1.mlp.fc1.weight",
	                                VT "encoder.layers.1.mlp.fc2.weight",
	                                L1 "self_attn.qkv_proj.weight",
	                                L1 "self_attn.o_proj.weight",
	                                L1 "mlp.gate_up_proj.weight"};
	fx f;
	fx_open_quant(&f, hx_model(3, VI, 0), cfg, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.self_attn.out_proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, VT "encoder.layers.1.mlp.fc2.weight", VE, VI);
	fx_close(&f);
	fx_open_quant(&f, hx_model(3, VI, 0), cfg, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(keep),
	              FX_N(q));
	fx_close(&f);
	static const char odd[] = CFGL(TOP, TEXTK(UNTIED), VISK("96", "8", ""));
	static const char *const keep96[] = {VT "encoder.layers.0.mlp.fc1.weight",
	                                     VT "encoder.layers.1.mlp.fc2.weight",
	                                     VT "head.mlp.fc1.weight",
	                                     VT "head.mlp.fc2.weight",
	                                     VT "head.attention.in_proj_weight",
	                                     P "readout.2.weight"};
	static const char *const q96[] = {VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                  VT "encoder.layers.0.self_attn.out_proj.weight",
	                                  L1 "mlp.down_proj.weight"};
	fx_open_quant(&f, hx_model(3, 96, O_HEAD), odd, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(keep96), FX_N(q96));
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4 / 8; with the pooling head and
 * prenorm and without pos_emb. */
static void test_hx_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(hx_model(3, VI, 0), cfg, 2, lays, 4);
	static const char sw[] = CFGL(TOP "\"proj_pos_emb\":false,\"proj_prenorm\":true,",
	                              TEXTK(UNTIED), VISK("128", "8", ""));
	coverage(hx_model(3, VI, O_HEAD | O_PRE | O_NOPOS), sw, 2, lays, 2);
}

/* use_nth_layer: -1 builds all 3 blocks (post_layernorm still skipped: require_post_norm
 * False), 0 one, 1 two; tied by text_config alone (lm_head skipped or absent; a top-level tie
 * ignored). */
static void test_hx_tower_tie(void **state)
{
	(void)state;
	static const struct {
		const char *cfg;
		int kept;
	} nth[] = {{CFGL(TOP "\"use_nth_layer\":-1,", TEXTK(UNTIED), VIS), 3},
	           {CFGL(TOP "\"use_nth_layer\":0,", TEXTK(UNTIED), VIS), 1},
	           {CFGL(TOP "\"use_nth_layer\":1,", TEXTK(UNTIED), VIS), 2},
	           {CFGL(TOP "\"use_nth_layer\":-3,", TEXTK(UNTIED), VIS), 1}};
	for (size_t k = 0; k < sizeof(nth) / sizeof(nth[0]); k++) {
		fx f;
		fx_open(&f, hx_model(3, VI, 0), nth[k].cfg, 2, 1, 0, true);
		assert_int_equal(shardmap_n_skipped(f.p), 2 + 16 * (3 - nth[k].kept));
		assert_true(fx_skipped(&f, VT "post_layernorm.bias"));
		fx_vit_block(&f, 2, 1, VB, nth[k].kept - 1, VE, VI);
		if (nth[k].kept < 3)
			assert_int_equal(tm_ix(f.p, 0, VT "encoder.layers.2.mlp.fc1.weight"), -1);
		fx_close(&f);
	}
	fx f;
	static const char tied[] = CFGL(TOP, TEXTK(",\"tie_word_embeddings\":true"), VIS);
	fx_open(&f, hx_model(3, VI, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, LM "lm_head.weight"));
	fx_close(&f);
	fx_open(&f, hx_model(3, VI, O_NOHEADLM), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	static const char top_tie[] = CFGL(TOP "\"tie_word_embeddings\":true,", TEXTK(""), VIS);
	fx_open(&f, hx_model(3, VI, 0), top_tie, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* The switches: prenorm planned whole with proj_prenorm true, pos_emb absent with
 * proj_pos_emb false, the pooling head (fc1 rows, fc2 columns, the rest whole) unless
 * vision_use_head is false; each tensor refused under the other value. */
static void test_hx_switches(void **state)
{
	(void)state;
	static const char sw[] = CFGL(TOP "\"proj_pos_emb\":false,\"proj_prenorm\":true,",
	                              TEXTK(UNTIED), VISK("128", "8", ""));
	fx f;
	fx_open(&f, hx_model(3, VI, O_HEAD | O_PRE | O_NOPOS), sw, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, P "prenorm.weight");
		repl(&f, r, P "prenorm.bias");
		assert_int_equal(tm_ix(f.p, r, P "pos_emb"), -1);
		repl(&f, r, VT "head.probe");
		repl(&f, r, VT "head.attention.in_proj_weight");
		rows_at(&f, r, VT "head.mlp.fc1.weight", 0, VT "head.mlp.fc1.weight", r * (VI / 2),
		        VI / 2);
		cols_of(&f, r, 2, VT "head.mlp.fc2.weight", VT "head.mlp.fc2.weight", VE, VI);
	}
	fx_close(&f);
	fx_refused(hx_model(3, VI, O_HEAD | O_PRE), sw, WT_EUNSUPPORTED, P "pos_emb",
	           "proj_pos_emb is false");
	fx_refused(hx_model(3, VI, O_HEAD | O_NOPOS), sw, WT_ENOTFOUND, P "prenorm",
	           "proj_prenorm true");
	fx_refused(hx_model(3, VI, O_PRE), cfg, WT_EUNSUPPORTED, P "prenorm",
	           "proj_prenorm is false or absent");
	fx_refused(hx_model(3, VI, O_NOPOS), cfg, WT_ENOTFOUND, P "pos_emb",
	           "proj_pos_emb true or absent");
	fx_refused(hx_model(3, VI, O_PRE | O_NOPOS), sw, WT_ENOTFOUND, "head.",
	           "vision_use_head true or absent");
	fx_refused(hx_model(3, VI, O_HEAD), cfg, WT_EUNSUPPORTED, "head.",
	           "vision_use_head is false");
}

/* config.json read: text_config as the language model (LlamaConfig's defaults for absent
 * keys), the tower's keys, use_nth_layer (-2), vision_use_head, the C-Abstractor's switches;
 * the release's config. */
static void test_hx_config(void **state)
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
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_num_layers, 3);
	assert_int_equal(c.v_feature_layer, -2);
	assert_false(c.v_use_head);
	assert_true(c.hcx_pos_emb);
	assert_false(c.hcx_prenorm);
	assert_string_equal(c.lm_model_type, "llama");
	assert_string_equal(c.v_model_type, "siglip_vision_model");
	ckpt_config_clear(&c);
	/* HyperCLOVAX-SEED-Vision-Instruct-3B's shape of config (sizes as its model card gives
	 * them); text_config with only its model_type takes LlamaConfig's defaults */
	tm_parse(CFGL(TOP "\"use_nth_layer\":-2,\"proj_pos_emb\":true,\"proj_prenorm\":false,",
	              "\"text_config\":{\"model_type\":\"llama\"}",
	              "\"vision_config\":{\"model_type\":\"siglip_vision_model\","
	              "\"hidden_size\":1152,\"intermediate_size\":4304,\"num_hidden_layers\":27,"
	              "\"num_attention_heads\":16,\"image_size\":378,\"patch_size\":14}"),
	         &c);
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.vocab_size, 32000);
	assert_int_equal(c.num_hidden_layers, 32);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.v_num_layers, 27);
	assert_int_equal(c.v_image_size, 378);
	assert_true(c.v_use_head);
	assert_true(c.hcx_pos_emb);
	ckpt_config_clear(&c);
}

/* The refusals, each naming its key or tensor. */
static void test_hx_errors(void **state)
{
	(void)state;
	/* config.json: HCXVisionConfig's keys */
	fx_refused(hx_model(3, VI, 0),
	           CFGL("\"mm_projector_type\":\"cabstractor\",", TEXTK(UNTIED), VIS),
	           WT_EUNSUPPORTED, "anyres is false", "set anyres true");
	fx_refused(
	    hx_model(3, VI, 0),
	    CFGL("\"anyres\":true,\"num_queries_vis_abstractor_image\":81,", TEXTK(UNTIED), VIS),
	    WT_ECORRUPT, "mm_projector_type is missing", "cabstractor");
	fx_refused(hx_model(3, VI, 0),
	           CFGL("\"anyres\":true,\"mm_projector_type\":\"mlp\",", TEXTK(UNTIED), VIS),
	           WT_EUNSUPPORTED, "mm_projector_type 'mlp'", "only cabstractor");
	fx_refused(
	    hx_model(3, VI, 0),
	    CFGL("\"anyres\":true,\"mm_projector_type\":\"cabstractor\",", TEXTK(UNTIED), VIS),
	    WT_ECORRUPT, "num_queries_vis_abstractor_image is missing", "81");
	fx_refused(hx_model(3, VI, 0),
	           CFGL("\"anyres\":true,\"mm_projector_type\":\"cabstractor\","
	                "\"num_queries_vis_abstractor_image\":80,",
	                TEXTK(UNTIED), VIS),
	           WT_ECORRUPT, "num_queries_vis_abstractor_image 80", "not a square");
	fx_refused(hx_model(3, VI, 0), CFGL(TOP "\"proj_prenorm\":1,", TEXTK(UNTIED), VIS),
	           WT_ECORRUPT, "proj_prenorm", "not a boolean");
	fx_refused(hx_model(3, VI, 0),
	           CFGL(TOP,
	                "\"text_config\":{\"hidden_size\":128,\"intermediate_size\":192,"
	                "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"vocab_size\":1000,"
	                "\"num_hidden_layers\":2}",
	                VIS),
	           WT_ECORRUPT, "text_config.model_type is missing", "llama");
	fx_refused(hx_model(3, VI, 0), CFGL(TOP, TEXTK(UNTIED), "\"vision_config\":{}"),
	           WT_ECORRUPT, "vision_config.model_type is missing", "siglip_vision_model");
	fx_refused(hx_model(3, VI, 0),
	           CFGL(TOP, TEXTK(UNTIED), VISK("128", "8", ",\"vision_use_head\":\"no\"")),
	           WT_ECORRUPT, "vision_config.vision_use_head", "true, false or null");
	/* the planner: the tower's class and depth, the language model's class */
	fx_refused(
	    hx_model(3, VI, 0),
	    CFGL(TOP, TEXTK(UNTIED),
	         "\"vision_config\":{\"model_type\":\"clip_vision_model\",\"hidden_size\":64}"),
	    WT_EUNSUPPORTED, "vision_config.model_type 'clip_vision_model'", "SigLIP");
	fx_refused(hx_model(3, VI, 0),
	           CFGL(TOP, "\"text_config\":{\"model_type\":\"gpt2\",\"n_embd\":128}", VIS),
	           WT_EUNSUPPORTED, "text_config.model_type 'gpt2'", "llama");
	fx_refused(hx_model(3, VI, 0), CFGL(TOP "\"use_nth_layer\":3,", TEXTK(UNTIED), VIS),
	           WT_ECORRUPT, "use_nth_layer 3 leaves 4", "[-3, 2]");
	fx_refused(hx_model(3, VI, 0), CFGL(TOP "\"use_nth_layer\":-4,", TEXTK(UNTIED), VIS),
	           WT_ECORRUPT, "use_nth_layer -4 leaves 0", "e.g. -2");
	fx_refused(hx_model(3, VI, 0), CFGL(TOP, TEXTK(UNTIED), VISK("128", "6", "")), WT_ECORRUPT,
	           "num_attention_heads 6", "64");
	/* tp_size must divide the LM's heads (8 at TP 16) and the tower's (4 at TP 8) */
	fx_refused_tp(hx_model(3, VI, 0), cfg, 16, WT_ELAYOUT, "tp_size 16", "");
	fx_refused_tp(hx_model(3, VI, 0),
	              CFGL(TOP, TEXTK(UNTIED), VISK("128", "4", ",\"vision_use_head\":false")), 8,
	              WT_ELAYOUT, "tp_size 8", "num_attention_heads");
	/* the checkpoint: the C-Abstractor's shapes, missing tensors */
	fx_refused(hx_model(3, VI, O_SE), cfg, WT_ESHAPE, P "net.2.b3.se.fc1.weight",
	           "round(hidden_size / 4)");
	fx_refused(hx_model(3, VI, O_K5), cfg, WT_ESHAPE, P "net.0.b2.conv2.conv.weight", "3 x 3");
	fx_refused(hx_model(3, VI, O_RD), cfg, WT_ESHAPE, P "readout.0.weight", "");
	fx_refused(hx_model(3, VI, O_NONL), cfg, WT_ENOTFOUND, "image_newline", "");
	fx_refused(hx_model(1, VI, 0), cfg, WT_ENOTFOUND, "encoder.layers.1.", "");
	/* another model_type: no vision_config */
	fx_refused(hx_model(3, VI, 0),
	           "{\"architectures\":[\"" ARCH "\"],\"model_type\":\"llama\",\"hidden_size\":128,"
	           "\"intermediate_size\":192,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ECORRUPT, "needs vision_config", ARCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hx_slices),    cmocka_unit_test(test_hx_same_lm),
	    cmocka_unit_test(test_hx_quant),     cmocka_unit_test(test_hx_coverage),
	    cmocka_unit_test(test_hx_tower_tie), cmocka_unit_test(test_hx_switches),
	    cmocka_unit_test(test_hx_config),    cmocka_unit_test(test_hx_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
