/*
 * test_shardmap_dots_ocr.c — dots.ocr (DotsOCRForCausalLM, model_type dots_ocr; docs/format.md
 * section 2.7), cut as vLLM's dots_ocr.py / qwen2.py load it: the tower block's rank slices by
 * hand at TP 2 and 4 (attn.qkv [q_r; k_r; v_r] with its bias, attn.proj by columns, mlp.fc1 /
 * fc3 by rows into fc13 [fc1_r; fc3_r], fc2 by columns, the norms whole), the patch embedding,
 * post_trunk_norm and the merger's ln_q whole, the merger's mlp.0 by rows and mlp.2 by columns
 * (never quantized); the language model byte for byte the qwen2 family's ranks of the same
 * weights (TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4); coverage; the use_bias and
 * post_norm switches; the config classes' defaults; the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x0D07ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"
#include "test_shardmap_swiglu_vit.h"

/* the LM: hid 128, H 8, KV 2, d 16, I 192, V 1000 (padded 1024), 2 layers; the tower: width 64,
 * 4 heads of 16, MLP 96, patch 14, 3 channels, 2 blocks; spatial_merge_size 2 (the merger 64 x
 * 2^2 = 256 wide, its output 128: the LM's width) */
#define HID 128
#define HD  16
#define I   192
#define V   1000
#define VP  1024
#define VE  64
#define VI  96
#define VM  256
#define VT  "vision_tower."
#define B0  VT "blocks.0."
#define B1  VT "blocks.1."
#define MG  VT "merger."
#define L1  "model.layers.1."

#define QW_KEYS                                                                                    \
	"\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"                 \
	"\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define VC(heads, extra)                                                                           \
	"\"vision_config\":{\"embed_dim\":64,\"hidden_size\":128,\"intermediate_size\":96,"        \
	"\"num_hidden_layers\":2,\"num_attention_heads\":" heads ",\"patch_size\":14,"             \
	"\"spatial_merge_size\":2,\"temporal_patch_size\":1" extra "}"
#define CFG_MT(mt, vc)                                                                             \
	"{\"architectures\":[\"DotsOCRForCausalLM\"],\"model_type\":\"" mt "\"," QW_KEYS           \
	",\"tie_word_embeddings\":false,\"image_token_id\":151665," vc "}"
#define CFG(vc) CFG_MT("dots_ocr", vc)
#define SW      ",\"use_bias\":true,\"post_norm\":true"

static const char cfg_on[] = CFG(VC("4", SW));
static const char cfg_off[] = CFG(VC("4", ",\"use_bias\":false"));
/* 8 tower heads (of 8): every tp_size up to 8 divides them */
static const char cfg8[] = CFG(VC("8", SW));
static const char cfg_text[] = "{\"architectures\":[\"Qwen2ForCausalLM\"],\"model_type\":"
                               "\"qwen2\"," QW_KEYS ",\"tie_word_embeddings\":false}";

/* the optional leaves: use_bias's, post_norm's */
enum { O_BIAS = 1, O_POST = 2, O_ALL = 3 };

static void add_4d(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * c * d, 0, 0);
	st_desc *s = &m->d[m->n - 1];
	s->ndim = 4;
	s->shape[0] = a;
	s->shape[1] = b;
	s->shape[2] = c;
	s->shape[3] = d;
}

/* Qwen2's language model, 2 layers with the q/k/v biases, its head. */
static void add_lm(tm_model *m)
{
	tm_add2(m, "model.embed_tokens.weight", V, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	tm_add2(m, "lm_head.weight", V, HID);
	static const tm_leaf qw[] = {
	    {"input_layernorm.weight", HID, 0},    {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", HID, HID}, {"self_attn.q_proj.bias", HID, 0},
	    {"self_attn.k_proj.weight", 32, HID},  {"self_attn.k_proj.bias", 32, 0},
	    {"self_attn.v_proj.weight", 32, HID},  {"self_attn.v_proj.bias", 32, 0},
	    {"self_attn.o_proj.weight", HID, HID}, {"mlp.gate_proj.weight", I, HID},
	    {"mlp.up_proj.weight", I, HID},        {"mlp.down_proj.weight", HID, I}};
	tm_layers(m, "model.layers.%d.", 2, qw, TM_NLEAVES(qw), 0);
}

/* The tower block's leaves (when: the option that puts the leaf in). */
static const tm_leaf blk[] = {
    {"norm1.weight", VE, 0, 0},         {"norm2.weight", VE, 0, 0},
    {"attn.qkv.weight", 3 * VE, VE, 0}, {"attn.qkv.bias", 3 * VE, 0, O_BIAS},
    {"attn.proj.weight", VE, VE, 0},    {"attn.proj.bias", VE, 0, O_BIAS},
    {"mlp.fc1.weight", VI, VE, 0},      {"mlp.fc1.bias", VI, 0, O_BIAS},
    {"mlp.fc3.weight", VI, VE, 0},      {"mlp.fc3.bias", VI, 0, O_BIAS},
    {"mlp.fc2.weight", VE, VI, 0},      {"mlp.fc2.bias", VE, 0, O_BIAS},
};

/* dots.ocr: the LM, `blocks` tower blocks with the optional leaves opt names (their attention
 * under attn leaf names qkv / proj), the patch embedding, post_trunk_norm (O_POST), the merger
 * (mlp.2 out rows wide). */
static tm_model *dots_model_x(int blocks, unsigned opt, const char *qkv, int64_t out)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m);
	char b[200];
	for (int i = 0; i < blocks; i++)
		for (size_t k = 0; k < TM_NLEAVES(blk); k++) {
			if (blk[k].when != 0 && !(blk[k].when & (int)opt))
				continue;
			const char *leaf = blk[k].leaf;
			if (qkv != NULL && strncmp(leaf, "attn.qkv.", 9) == 0)
				snprintf(b, sizeof(b), VT "blocks.%d.attn.%s.%s", i, qkv, leaf + 9);
			else
				snprintf(b, sizeof(b), VT "blocks.%d.%s", i, leaf);
			tm_add2(m, b, blk[k].a, blk[k].b);
		}
	add_4d(m, VT "patch_embed.patchifier.proj.weight", VE, 3, 14, 14);
	tm_add2(m, VT "patch_embed.patchifier.proj.bias", VE, 0);
	tm_add2(m, VT "patch_embed.patchifier.norm.weight", VE, 0);
	if (opt & O_POST)
		tm_add2(m, VT "post_trunk_norm.weight", VE, 0);
	tm_add2(m, MG "ln_q.weight", VE, 0);
	tm_add2(m, MG "ln_q.bias", VE, 0);
	tm_add2(m, MG "mlp.0.weight", VM, VM);
	tm_add2(m, MG "mlp.0.bias", VM, 0);
	tm_add2(m, MG "mlp.2.weight", out, VM);
	tm_add2(m, MG "mlp.2.bias", out, 0);
	return m;
}

static tm_model *dots_model(int blocks, unsigned opt)
{
	return dots_model_x(blocks, opt, NULL, HID);
}

static tm_model *text_model(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m);
	return m;
}

static const char *const whole[] = {VT "patch_embed.patchifier.proj.weight",
                                    VT "patch_embed.patchifier.proj.bias",
                                    VT "patch_embed.patchifier.norm.weight",
                                    MG "ln_q.weight",
                                    MG "ln_q.bias",
                                    MG "mlp.2.bias"};

/* Rank r of T's tower block b by hand (fx_swiglu_vit_block_is). */
static void block_is(const fx *f, uint32_t T, uint32_t r, int b, bool bias)
{
	fx_swiglu_vit_block_is(f, T, r, b ? B1 : B0, "norm1.weight", "norm2.weight", VE, VI, bias);
}

/* The merger of rank r of T: mlp.0 and its bias by rows, mlp.2 by columns. */
static void merger_is(const fx *f, uint32_t T, uint32_t r)
{
	int64_t ml = VM / T;
	shp(f, r, MG "mlp.0.weight", 2, ml, VM, 0);
	rows_at(f, r, MG "mlp.0.weight", 0, MG "mlp.0.weight", r * ml, ml);
	shp(f, r, MG "mlp.0.bias", 1, ml, 0, 0);
	rows_at(f, r, MG "mlp.0.bias", 0, MG "mlp.0.bias", r * ml, ml);
	cols_of(f, r, T, MG "mlp.2.weight", MG "mlp.2.weight", HID, VM);
}

/* TP 2 and 4 by hand, the biases on and off: the tower's blocks, the patch embedding, ln_q,
 * post_trunk_norm, the merger, the LM's layer 1; every rank's count. */
static void test_dt_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2)
		for (int bias = 1; bias >= 0; bias--) {
			fx f;
			fx_open(&f, dots_model(2, bias ? O_ALL : O_POST), bias ? cfg_on : cfg_off,
			        T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "dots_ocr");
			for (uint32_t r = 0; r < T; r++) {
				block_is(&f, T, r, 0, bias);
				block_is(&f, T, r, 1, bias);
				for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
					repl(&f, r, whole[k]);
				repl(&f, r, VT "post_trunk_norm.weight");
				merger_is(&f, T, r);
				assert_int_equal(
				    info(&f, r, VT "patch_embed.patchifier.proj.weight")->ndim, 4);
				fx_attn_is(&f, r, T, L1 "self_attn.", "o_proj.weight", 8, 2, HD,
				           HID);
				fx_mlp_is(&f, r, T, L1 "mlp.", I, HID);
				fx_vocab_is(&f, r, T, "lm_head.weight", V, VP, HID);
				fx_vocab_is(&f, r, T, "model.embed_tokens.weight", V, VP, HID);
				/* 2 blocks x (6 or 10), 10 outside them; the LM's 3 + 2 x 7 */
				assert_int_equal(shardmap_rank_n_tensors(f.p, r),
				                 2 * (bias ? 10 : 6) + 10 + 3 + 2 * 7);
			}
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* Every rank's model.* / lm_head.* outputs byte for byte the qwen2 family's ranks of the same
 * weights, in layout l. */
static void same_lm_at(const wt_layout *l)
{
	fx a, b;
	fx_open_l(&a, dots_model(2, O_ALL), cfg8, l, true);
	fx_open_l(&b, text_model(), cfg_text, l, true);
	assert_string_equal(shardmap_family(b.p), "qwen2");
	static const char *const not_lm[] = {VT, NULL};
	for (uint32_t r = 0; r < l->tp_size; r++)
		fx_same_rank_but(&a, &b, r, not_lm, "qwen2");
	fx_close(&a);
	fx_close(&b);
}

/* TP 1 / 2 / 4 / 8, int8-channel TP 2, fp8-channel TP 4. */
static void test_dt_same_lm(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {{1, WT_QUANT_NONE}, {2, WT_QUANT_NONE},         {4, WT_QUANT_NONE},
	            {8, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[k].tp;
		l.quant = lays[k].q;
		same_lm_at(&l);
	}
}

/* The tower's Linears and the LM's quantized; the merger's mlp.0 / mlp.2 (built without the
 * quantization config), the patch embedding, norms and biases kept BF16: int8-channel TP 2
 * (rank 1's proj, fc2 and o_proj codes by columns), fp8-channel TP 4. */
static void test_dt_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {MG "mlp.0.weight",
	                                   MG "mlp.2.weight",
	                                   MG "mlp.0.bias",
	                                   MG "ln_q.weight",
	                                   VT "patch_embed.patchifier.proj.weight",
	                                   VT "post_trunk_norm.weight",
	                                   B1 "attn.qkv.bias",
	                                   B1 "mlp.fc13.bias",
	                                   B1 "norm1.weight",
	                                   "model.embed_tokens.weight"};
	static const char *const q[] = {B0 "attn.qkv.weight", B1 "attn.proj.weight",
	                                B1 "mlp.fc13.weight", B1 "mlp.fc2.weight",
	                                L1 "self_attn.o_proj.weight"};
	size_t nk = sizeof(keep) / sizeof(keep[0]), nq = sizeof(q) / sizeof(q[0]);
	fx f;
	fx_open_quant(&f, dots_model(2, O_ALL), cfg_on, 2, WT_QUANT_INT8_CHANNEL, WT_BF16, keep, nk,
	              q, nq);
	fx_cols_int8_is(&f, 1, 2, B1 "attn.proj.weight", VE, VE);
	fx_cols_int8_is(&f, 1, 2, B1 "mlp.fc2.weight", VE, VI);
	fx_cols_int8_is(&f, 1, 2, L1 "self_attn.o_proj.weight", HID, HID);
	fx_close(&f);
	fx_open_quant(&f, dots_model(2, O_ALL), cfg_on, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, keep, nk,
	              q, nq);
	fx_close(&f);
}

/* Every checkpoint tensor covered exactly once, TP 1 / 2 / 4, the switches on and off. */
static void test_dt_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	static const char cfg_none[] = CFG(VC("4", ",\"post_norm\":false"));
	coverage(dots_model(2, O_ALL), cfg_on, 2, lays, 3);
	coverage(dots_model(2, O_POST), cfg_off, 2, lays, 3);
	coverage(dots_model(2, 0), cfg_none, 2, lays, 3);
}

/* The tower's switches: a tensor they leave unbuilt is refused naming the key, a missing one
 * they ask for too; post_norm false builds no post_trunk_norm. */
static void test_dt_switches(void **state)
{
	(void)state;
	static const char nopost[] = CFG(VC("4", ",\"use_bias\":true,\"post_norm\":false"));
	fx f;
	fx_open(&f, dots_model(2, O_BIAS), nopost, 2, 1, 0, true);
	block_is(&f, 2, 1, 1, true);
	assert_int_equal(tm_ix(f.p, 1, VT "post_trunk_norm.weight"), -1);
	fx_close(&f);
	fx_refused(dots_model(2, O_ALL), cfg_off, WT_EUNSUPPORTED, "blocks.0.attn.",
	           "vision_config.use_bias is false");
	fx_refused(dots_model(2, O_POST), cfg_on, WT_ENOTFOUND, "attn.qkv.bias", "use_bias");
	fx_refused(dots_model(2, O_ALL), nopost, WT_EUNSUPPORTED, "post_trunk_norm.weight",
	           "post_norm");
	fx_refused(dots_model(2, O_BIAS), cfg_on, WT_ENOTFOUND, "post_trunk_norm.weight",
	           "post_norm");
}

/* DotsVisionConfig's defaults (vision_config absent, null or empty), Qwen2Config's for the top
 * level (DotsOCRConfig's class), the vision keys read. */
static void test_dt_defaults(void **state)
{
	(void)state;
	static const char *const cfgs[] = {
	    "{\"architectures\":[\"DotsOCRForCausalLM\"],\"model_type\":\"dots_ocr\"}",
	    "{\"architectures\":[\"DotsOCRForCausalLM\"],\"model_type\":\"dots_ocr\","
	    "\"vision_config\":null}",
	    "{\"architectures\":[\"DotsOCRForCausalLM\"],\"model_type\":\"dots_ocr\","
	    "\"vision_config\":{}}"};
	for (size_t k = 0; k < sizeof(cfgs) / sizeof(cfgs[0]); k++) {
		ckpt_config c;
		tm_parse(cfgs[k], &c);
		assert_true(c.has_vision);
		assert_int_equal(c.v_hidden_size, 1536);
		assert_int_equal(c.v_out_hidden_size, 1536);
		assert_int_equal(c.v_intermediate_size, 4224);
		assert_int_equal(c.v_depth, 42);
		assert_int_equal(c.v_num_heads, 12);
		assert_int_equal(c.v_in_chans, 3);
		assert_int_equal(c.v_patch_size, 14);
		assert_int_equal(c.v_spatial_merge_size, 2);
		assert_int_equal(c.v_temporal_patch_size, 1);
		assert_false(c.v_attn_bias);
		assert_true(c.dt_post_norm);
		/* Qwen2Config's */
		assert_int_equal(c.vocab_size, 151936);
		assert_int_equal(c.hidden_size, 4096);
		assert_int_equal(c.intermediate_size, 22016);
		assert_int_equal(c.num_hidden_layers, 32);
		assert_int_equal(c.num_key_value_heads, 32);
		assert_false(c.tie_given && c.tie_word_embeddings);
		ckpt_config_clear(&c);
	}
	ckpt_config c;
	tm_parse(cfg_on, &c);
	assert_int_equal(c.v_hidden_size, VE);
	assert_int_equal(c.v_out_hidden_size, HID);
	assert_int_equal(c.v_intermediate_size, VI);
	assert_int_equal(c.v_depth, 2);
	assert_int_equal(c.v_num_heads, 4);
	assert_true(c.v_attn_bias && c.dt_post_norm);
	ckpt_config_clear(&c);
	/* tied: lm_head skipped, as Qwen2ForCausalLM does */
	fx f;
	fx_open(&f, dots_model(2, O_ALL),
	        "{\"architectures\":[\"DotsOCRForCausalLM\"],\"model_type\":\"dots_ocr\"," QW_KEYS
	        ",\"tie_word_embeddings\":true," VC("4", SW) "}",
	        2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p) && fx_skipped(&f, "lm_head.weight"));
	fx_close(&f);
	/* the tower's inv_freq buffer: skipped (ROTARY_EMBEDS_UNUSED_WEIGHTS) */
	tm_model *m = dots_model(2, O_ALL);
	tm_add2(m, VT "rotary_pos_emb.inv_freq", 8, 0);
	fx_open(&f, m, cfg_on, 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 1);
	assert_true(fx_skipped(&f, VT "rotary_pos_emb.inv_freq"));
	assert_int_equal(tm_ix(f.p, 0, VT "rotary_pos_emb.inv_freq"), -1);
	fx_close(&f);
}

/* The refusals, each naming its key. */
static void test_dt_errors(void **state)
{
	(void)state;
	/* the mapper's other attention spelling */
	fx_refused(dots_model_x(2, O_ALL, "qkv_proj", HID), cfg_on, WT_EUNSUPPORTED,
	           "blocks.0.attn.qkv_proj.", "rename the checkpoint's attn.qkv_proj");
	fx_refused(dots_model_x(2, O_ALL, "out_proj", HID), cfg_on, WT_EUNSUPPORTED,
	           "attn.out_proj", "attn.proj");
	fx_refused(dots_model(2, O_ALL), CFG(VC("3", SW)), WT_ECORRUPT,
	           "vision_config.num_attention_heads 3", "embed_dim 64");
	fx_refused(dots_model_x(2, O_ALL, NULL, 96),
	           CFG("\"vision_config\":{\"embed_dim\":64,\"hidden_size\":96,"
	               "\"intermediate_size\":96,\"num_hidden_layers\":2,"
	               "\"num_attention_heads\":4" SW "}"),
	           WT_ECORRUPT, "vision_config.hidden_size 96", "hidden_size 128");
	fx_refused(dots_model(2, O_ALL), CFG_MT("qwen2", VC("4", SW)), WT_ECORRUPT,
	           "DotsOCRForCausalLM", "model_type dots_ocr");
	fx_refused(dots_model(2, O_ALL), CFG("\"vision_config\":3"), WT_ECORRUPT, "vision_config",
	           "not an object");
	fx_refused(dots_model(2, O_ALL), CFG(VC("4", ",\"use_bias\":3")), WT_ECORRUPT,
	           "vision_config", "use_bias");
	fx_refused(dots_model(2, O_ALL), CFG(VC("4", ",\"post_norm\":\"yes\"")), WT_ECORRUPT,
	           "vision_config", "post_norm");
	fx_refused(dots_model(2, O_ALL),
	           CFG("\"vision_config\":{\"embed_dim\":64,\"hidden_size\":128,"
	               "\"spatial_merge_size\":65}"),
	           WT_EUNSUPPORTED, "spatial_merge_size 65", "past 64");
	/* vLLM divides the tower's 4 heads by tp_size: TP 8 refused naming the key */
	fx_refused_tp(dots_model(2, O_ALL), cfg_on, 8, WT_ELAYOUT,
	              "vision_config.num_attention_heads", "8");
	/* a block past vision_config.num_hidden_layers */
	fx_refused(dots_model(3, O_ALL), cfg_on, WT_ESHAPE, "blocks.2.",
	           "vision_config.num_hidden_layers");
	/* a block missing */
	fx_refused(dots_model(1, O_ALL), cfg_on, WT_ENOTFOUND, "blocks.1.", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dt_slices),   cmocka_unit_test(test_dt_same_lm),
	    cmocka_unit_test(test_dt_quant),    cmocka_unit_test(test_dt_coverage),
	    cmocka_unit_test(test_dt_switches), cmocka_unit_test(test_dt_defaults),
	    cmocka_unit_test(test_dt_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
