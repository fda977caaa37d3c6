/*
 * test_shardmap_lightonocr.c — LightOnOCR (LightOnOCRForConditionalGeneration:
 * lightonai/LightOnOCR-1B-1025, model_type mistral3; docs/format.md section 2.7), cut as vLLM's
 * lightonocr.py loads it: a Mistral3ForConditionalGeneration whose mapper reads the release's
 * model.vision_encoder., model.vision_projection., model.language_model., lm_head. onto vLLM's
 * vision_tower., multi_modal_projector., language_model.model., language_model.lm_head., its
 * language model the Qwen3 of text_config (per-head q_norm / k_norm). Every rank is Mistral 3's
 * of the same weights byte for byte (plain TP 2 and 4 with hand slices of layer 1's attention and
 * MLP, the Pixtral blocks and the projector; int8-channel TP 2 with o_proj's codes; fp8-channel
 * TP 4); coverage at TP 1, 2, 4; the loader's qwen3 text_config (Qwen3Config's defaults, the tie
 * from text_config); the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x119e0ull
#include "test_shardmap_fx.h"
#include "test_shardmap_quant.h"

/* LM (Qwen3): hid 64, H 4, KV 2, d 24 (H*d 96, KV*d 48), I 128, V 128, L 2, untied. Vision: 2
 * Pixtral blocks, width 32, 4 heads, MLP 64, patch 2; merger 32 x 2^2 = 128. */
#define HID 64
#define VE  32
#define VI  64
#define VM  128

#define LM_KEYS(mt, extra)                                                                         \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":4,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":24,\"intermediate_size\":128,"                     \
	"\"vocab_size\":128,\"num_hidden_layers\":2" extra
#define VKEYS                                                                                      \
	"\"vision_config\":{\"model_type\":\"pixtral\",\"hidden_size\":32,\"intermediate_size\":"  \
	"64,\"num_attention_heads\":4,\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2,"  \
	"\"num_channels\":3}"
/* config.json of architecture a (model_type mistral3) over text_config `text` */
#define CFG_A(a, top, text)                                                                        \
	"{\"architectures\":[\"" a "\"],\"model_type\":\"mistral3\",\"spatial_merge_size\":2,"     \
	"\"multimodal_projector_bias\":false," top "\"text_config\":{" text "}," VKEYS "}"
#define LO(top, text) CFG_A("LightOnOCRForConditionalGeneration", top, text)
#define M3(top, text) CFG_A("Mistral3ForConditionalGeneration", top, text)
static const char cfg_lo[] = LO("", LM_KEYS("qwen3", ""));
static const char cfg_m3[] = M3("", LM_KEYS("qwen3", ""));

#define VT  "vision_tower."
#define VB  VT "transformer.layers.%d."
#define PJ  "multi_modal_projector."
#define LL1 "language_model.model.layers.1."

/* LO_REL: the release's names; LO_VLLM: vLLM's module names (Mistral 3's released names);
 * LO_M3HF5: Mistral 3's transformers >= 4.52 names (model.vision_tower., ...) */
typedef enum { LO_REL, LO_VLLM, LO_M3HF5 } lay_t;

/* Checkpoint name of vLLM's name c (language_model.model., language_model.lm_head.,
 * vision_tower., multi_modal_projector.) in layout y. */
static void ck_name(char *b, size_t n, const char *c, lay_t y)
{
	static const char *const pre[][3] = {
	    {"language_model.model.", "model.language_model.", "model.language_model."},
	    {"language_model.lm_head.", "lm_head.", "lm_head."},
	    {"vision_tower.", "model.vision_encoder.", "model.vision_tower."},
	    {"multi_modal_projector.", "model.vision_projection.", "model.multi_modal_projector."}};
	for (size_t k = 0; y != LO_VLLM && k < 4; k++)
		if (strncmp(c, pre[k][0], strlen(pre[k][0])) == 0) {
			snprintf(b, n, "%s%s", pre[k][y == LO_REL ? 1 : 2], c + strlen(pre[k][0]));
			return;
		}
	snprintf(b, n, "%s", c);
}

static void add(tm_model *m, lay_t y, const char *c, int64_t a, int64_t b)
{
	char n[200];
	ck_name(n, sizeof(n), c, y);
	tm_add2(m, n, a, b);
}

static const fx_leaf block[] = {
    {"attention_norm.weight", VE, 0},          {"attention.q_proj.weight", VE, VE},
    {"attention.k_proj.weight", VE, VE},       {"attention.v_proj.weight", VE, VE},
    {"attention.o_proj.weight", VE, VE},       {"ffn_norm.weight", VE, 0},
    {"feed_forward.gate_proj.weight", VI, VE}, {"feed_forward.up_proj.weight", VI, VE},
    {"feed_forward.down_proj.weight", VE, VI},
};

/* The Qwen3 language model (q_norm / k_norm when `qkn`; lm_head when `head`), the tower and
 * the projector, in layout y; the same values in every layout. */
static tm_model *lo_model(lay_t y, bool qkn, bool head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add(m, y, "language_model.model.embed_tokens.weight", 128, HID);
	add(m, y, "language_model.model.norm.weight", HID, 0);
	static const fx_leaf lm[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 96, HID}, {"self_attn.k_proj.weight", 48, HID},
	    {"self_attn.v_proj.weight", 48, HID}, {"self_attn.o_proj.weight", HID, 96},
	    {"self_attn.q_norm.weight", 24, 0},   {"self_attn.k_norm.weight", 24, 0},
	    {"mlp.gate_proj.weight", 128, HID},   {"mlp.up_proj.weight", 128, HID},
	    {"mlp.down_proj.weight", HID, 128}};
	char b[200];
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
			if (!qkn && strstr(lm[k].leaf, "_norm.weight") && lm[k].n == 24)
				continue;
			snprintf(b, sizeof(b), "language_model.model.layers.%d.%s", l, lm[k].leaf);
			add(m, y, b, lm[k].n, lm[k].k);
		}
	if (head)
		add(m, y, "language_model.lm_head.weight", 128, HID);
	ck_name(b, sizeof(b), VT "patch_conv.weight", y);
	tm_add(m, b, WT_DTYPE_INVALID, 1, VE * 3 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 2;
	add(m, y, VT "ln_pre.weight", VE, 0);
	for (int blk = 0; blk < 2; blk++)
		for (size_t k = 0; k < sizeof(block) / sizeof(block[0]); k++) {
			snprintf(b, sizeof(b), VB "%s", blk, block[k].leaf);
			add(m, y, b, block[k].n, block[k].k);
		}
	add(m, y, PJ "norm.weight", VE, 0);
	add(m, y, PJ "patch_merger.merging_layer.weight", VE, VM);
	add(m, y, PJ "linear_1.weight", HID, VE);
	add(m, y, PJ "linear_2.weight", HID, HID);
	return m;
}

/* Every rank of a (LightOnOCR) is b's (Mistral 3's) byte for byte, names and count included. */
static void same_ranks(const fx *a, const fx *b, uint32_t n)
{
	assert_string_equal(shardmap_family(a->p), "mistral3");
	for (uint32_t r = 0; r < n; r++)
		fx_same_rank(a, b, r, NULL);
}

/* Rank r of T by hand (vLLM's names): layer 1's attention (q/k/v by heads, o_proj columns) and
 * per-head norms whole, its MLP, the Pixtral blocks, the projector (linear_1 rows, linear_2
 * columns, the rest whole), the vocabulary rows. */
static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	fx_attn_is(f, r, T, LL1 "self_attn.", "o_proj.weight", 4, 2, 24, HID);
	repl(f, r, LL1 "self_attn.q_norm.weight");
	repl(f, r, LL1 "self_attn.k_norm.weight");
	fx_mlp_is(f, r, T, LL1 "mlp.", 128, HID);
	for (int blk = 0; blk < 2; blk++)
		fx_pixtral_block(f, T, r, VB, blk, VE, VI);
	static const char *const rep[] = {VT "patch_conv.weight", VT "ln_pre.weight",
	                                  PJ "norm.weight", PJ "patch_merger.merging_layer.weight",
	                                  "language_model.model.norm.weight"};
	for (size_t j = 0; j < sizeof(rep) / sizeof(rep[0]); j++)
		repl(f, r, rep[j]);
	int64_t hl = HID / T;
	shp(f, r, PJ "linear_1.weight", 2, hl, VE, 0);
	rows_at(f, r, PJ "linear_1.weight", 0, PJ "linear_1.weight", r * hl, hl);
	cols_of(f, r, T, PJ "linear_2.weight", PJ "linear_2.weight", HID, HID);
	fx_vocab_is(f, r, T, "language_model.lm_head.weight", 128, 128, HID);
}

/* TP 2 and 4: the release's names give Mistral 3's ranks of the same weights (a Qwen3
 * text_config under Mistral3ForConditionalGeneration); vLLM's names, which its mapper leaves as
 * they are, the same; checked by hand. */
static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		uint32_t T = tps[i];
		fx l, m, v;
		fx_open(&l, lo_model(LO_REL, true, true), cfg_lo, T, 1, 0, true);
		fx_open(&m, lo_model(LO_VLLM, true, true), cfg_m3, T, 1, 0, true);
		fx_open(&v, lo_model(LO_VLLM, true, true), cfg_lo, T, 1, 0, true);
		same_ranks(&l, &m, T);
		same_ranks(&v, &m, T);
		for (uint32_t r = 0; r < T; r++)
			check_rank(&v, T, r);
		assert_int_equal(shardmap_n_skipped(l.p), 0);
		fx_close(&l);
		fx_close(&m);
		fx_close(&v);
	}
	assert_string_equal(shardmap_family_find("LightOnOCRForConditionalGeneration", NULL)->name,
	                    "mistral3");
}

/* int8-channel TP 2 and fp8-channel TP 4: Mistral 3's ranks byte for byte (o_proj's int8 codes
 * checked column by column on those, whose checkpoint has vLLM's names; q_norm kept BF16). */
static void test_quant(void **state)
{
	(void)state;
	static const struct {
		uint32_t T;
		wt_quant q;
	} lays[] = {{2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t i = 0; i < 2; i++) {
		wt_layout ly;
		wt_layout_init(&ly);
		ly.tp_size = lays[i].T;
		ly.quant = lays[i].q;
		fx l, m;
		fx_open_l(&l, lo_model(LO_REL, true, true), cfg_lo, &ly, true);
		fx_open_l(&m, lo_model(LO_VLLM, true, true), cfg_m3, &ly, true);
		same_ranks(&l, &m, lays[i].T);
		for (uint32_t r = 0; r < lays[i].T; r++)
			assert_int_equal(info(&l, r, LL1 "self_attn.q_norm.weight")->dtype,
			                 WT_BF16);
		if (lays[i].q == WT_QUANT_INT8_CHANNEL)
			for (uint32_t r = 0; r < 2; r++)
				fx_cols_int8_is(&m, r, 2, LL1 "self_attn.o_proj.weight", HID, 96);
		else
			assert_int_equal(info(&l, 3, LL1 "self_attn.qkv_proj.weight")->dtype,
			                 WT_F8_E4M3);
		fx_close(&l);
		fx_close(&m);
	}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(lo_model(LO_REL, true, true), cfg_lo, 2, lays, 3);
}

/* The loader: a qwen3 text_config under model_type mistral3 is Qwen3's (lm_model_type qwen3,
 * Qwen3Config's defaults: Mistral3Config builds a Qwen3Config of it), a mistral one keeps
 * MistralConfig's; the tie is text_config's alone. */
static void test_config(void **state)
{
	(void)state;
	ckpt_config a;
	wt_errbuf err = {0};
	static const char q3[] = LO("", "\"model_type\":\"qwen3\"");
	assert_int_equal(ckpt_config_parse(q3, strlen(q3), &a, &err), WT_OK);
	assert_string_equal(a.architecture, "LightOnOCRForConditionalGeneration");
	assert_string_equal(a.lm_model_type, "qwen3");
	assert_true(a.hidden_size == 4096 && a.head_dim == 128 && a.num_key_value_heads == 32 &&
	            a.vocab_size == 151936 && a.num_hidden_layers == 32 && !a.tie_word_embeddings);
	ckpt_config_clear(&a);
	static const char ms[] = M3("", "\"model_type\":\"mistral\"");
	assert_int_equal(ckpt_config_parse(ms, strlen(ms), &a, &err), WT_OK);
	assert_string_equal(a.lm_model_type, "mistral");
	assert_true(a.vocab_size == 32000 && a.num_key_value_heads == 8 && a.head_dim == 128);
	ckpt_config_clear(&a);
	static const char none[] = M3("", "\"hidden_size\":64");
	assert_int_equal(ckpt_config_parse(none, strlen(none), &a, &err), WT_OK);
	assert_string_equal(a.lm_model_type, "mistral");
	ckpt_config_clear(&a);
	fx l;
	fx_open(&l, lo_model(LO_REL, true, true),
	        LO("", LM_KEYS("qwen3", ",\"tie_word_embeddings\":true")), 2, 1, 0, true);
	assert_true(shardmap_tied_lm_head(l.p));
	assert_true(fx_skipped(&l, "lm_head.weight"));
	fx_close(&l);
	fx_open(&l, lo_model(LO_REL, true, true),
	        LO("\"tie_word_embeddings\":true,", LM_KEYS("qwen3", "")), 2, 1, 0, true);
	assert_false(shardmap_tied_lm_head(l.p));
	fx_close(&l);
}

static void test_errors(void **state)
{
	(void)state;
	/* q_norm / k_norm under a mistral text_config; a qwen3 one without them */
	fx_refused(lo_model(LO_REL, true, true), LO("", LM_KEYS("mistral", "")), WT_EUNSUPPORTED,
	           "q_norm", "not qwen3");
	fx_refused(lo_model(LO_REL, false, true), cfg_lo, WT_ENOTFOUND, "q_norm", "");
	/* Mistral 3's transformers >= 4.52 names: vLLM's LightOnOCR mapper reads none of them */
	fx_refused(lo_model(LO_M3HF5, true, true), cfg_lo, WT_EUNSUPPORTED,
	           "model.multi_modal_projector.", "unknown tensor");
	/* no vision_config; an untied model without lm_head; heads TP does not divide */
	fx_refused(lo_model(LO_REL, true, true),
	           "{\"architectures\":[\"LightOnOCRForConditionalGeneration\"],\"model_type\":"
	           "\"mistral3\",\"text_config\":{" LM_KEYS("qwen3", "") "}}",
	           WT_ECORRUPT, "LightOnOCRForConditionalGeneration needs vision_config", "");
	fx_refused(lo_model(LO_REL, true, false), cfg_lo, WT_ENOTFOUND, "lm_head", "");
	fx_refused_tp(lo_model(LO_REL, true, true), cfg_lo, 8, WT_ELAYOUT, "tp_size 8", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),   cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage), cmocka_unit_test(test_config),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
