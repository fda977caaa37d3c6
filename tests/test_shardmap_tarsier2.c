/*
 * test_shardmap_tarsier2.c — Tarsier2 (Tarsier2ForConditionalGeneration: omni-research/
 * Tarsier2-Recap-7b, Tarsier2-7b-0115; docs/format.md section 2.7, Tarsier2), cut as vLLM's
 * qwen2_vl.py loads it: Qwen2VLForConditionalGeneration built of config.json's text_config,
 * its checkpoint under language_model.model., language_model.lm_head. and vision_tower.
 * (vLLM's mapper puts them on Qwen2-VL's modules). Every rank is Qwen2-VL's byte for byte under
 * the checkpoint's own prefixes (plain at TP 2 and 4 with hand slices of layer 1, int8-channel
 * TP 2, fp8-channel TP 4); coverage at TP 1, 2, 4, 8; the top level's LLaVA keys ignored;
 * Qwen2-VL's layouts, a mixed one and configs without a Qwen2-VL text_config refused. Seed
 * fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x7a25e2ull
#include "test_shardmap_fx.h"
#include "test_shardmap_vl_tower.h"

/* LM: hid 128, H 8, KV 2, d 16, I 256, V 256, L 2, untied. Vision: depth 2, embed 64, heads 8,
 * mlp 256, merger 256 (merge 2), patch embed [64, 3, 2, 2, 2]. */
#define HID 128
#define I   256
#define VE  64
#define VM  256

#define VISION_CFG                                                                                 \
	"\"vision_config\":{\"depth\":2,\"embed_dim\":64,\"num_heads\":8,\"mlp_ratio\":4,"         \
	"\"hidden_size\":128,\"patch_size\":2,\"temporal_patch_size\":2,\"spatial_merge_size\":2," \
	"\"in_chans\":3}"
#define LM_KEYS                                                                                    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":256,\"num_hidden_layers\":2"
#define MROPE(s) "\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":" s "},"
/* Qwen2-VL's config.json (tie given by `tie`) */
#define QVL_T(tie, mrope)                                                                          \
	"{\"architectures\":[\"Qwen2VLForConditionalGeneration\"],\"model_type\":\"qwen2_"         \
	"vl\"," LM_KEYS ",\"tie_word_embeddings\":" tie "," mrope VISION_CFG "}"
#define QVL QVL_T("false", MROPE("[2,3,3]"))
/* Tarsier2's: a LLaVA config (top-level keys `top`) whose text_config is `text` */
#define TS_T(top, text)                                                                            \
	"{\"architectures\":[\"Tarsier2ForConditionalGeneration\"],\"model_type\":\"llava\"," top  \
	"\"text_config\":" text "}"
#define TS TS_T("", QVL)

static void add(tm_model *m, lay_t y, const char *c, int64_t a, int64_t b)
{
	char n[200];
	vl_ck_name(n, sizeof(n), c, y);
	tm_add2(m, n, a, b);
}

/* Qwen2-VL's vision tower (test_shardmap_vl_tower.h) in this test's layout. */
static void add_lay(tm_model *m, int layout, const char *c, int64_t a, int64_t b)
{
	add(m, (lay_t)layout, c, a, b);
}

static void add_vision(tm_model *m, lay_t y)
{
	vl_add_tower(m, (int)y, add_lay, VE, VM, HID);
}

/* Qwen2-VL (lm_head when `head`) in layout y; the same values in every layout. */
static tm_model *ts_model(lay_t y, bool head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add(m, y, "model.embed_tokens.weight", 256, HID);
	add(m, y, "model.norm.weight", HID, 0);
	if (head)
		add(m, y, "lm_head.weight", 256, HID);
	static const char *const lm[] = {
	    "input_layernorm.weight",  "post_attention_layernorm.weight",
	    "self_attn.q_proj.weight", "self_attn.k_proj.weight",
	    "self_attn.v_proj.weight", "self_attn.o_proj.weight",
	    "self_attn.q_proj.bias",   "self_attn.k_proj.bias",
	    "self_attn.v_proj.bias",   "mlp.gate_proj.weight",
	    "mlp.up_proj.weight",      "mlp.down_proj.weight"};
	static const int64_t sh[][2] = {{HID, 0},  {HID, 0},   {128, HID}, {32, HID},
	                                {32, HID}, {HID, 128}, {128, 0},   {32, 0},
	                                {32, 0},   {I, HID},   {I, HID},   {HID, I}};
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
			char b[200];
			snprintf(b, sizeof(b), "model.layers.%d.%s", l, lm[k]);
			add(m, y, b, sh[k][0], sh[k][1]);
		}
	add_vision(m, y);
	return m;
}

#define TL1 "language_model.model.layers.1."

static void ts_rel_name(char *b, size_t n, const char *c)
{
	vl_ck_name(b, n, c, VL_REL);
}

/* Every tensor of Qwen2-VL q's rank r is t's under the release name, and t has no other. */
static void same_as_qvl(const fx *q, const fx *t, uint32_t r)
{
	fx_same_rank_renamed(q, t, r, ts_rel_name, "Qwen2-VL");
}

/* TP 2 and 4: layer 1's q/k/v rows (and biases), o_proj columns, gate_up rows and down_proj
 * columns by hand under the checkpoint's names; the vision fc1 rows, fc2 columns; the rest as
 * Qwen2-VL's. */
static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		uint32_t T = tps[i];
		fx t, q;
		fx_open(&t, ts_model(VL_REL, true), TS, T, 1, 0, true);
		fx_open(&q, ts_model(VL_QVL, true), QVL, T, 1, 0, true);
		assert_string_equal(shardmap_family(t.p), "qwen2_vl");
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&t, r, T, TL1 "self_attn.", "o_proj.weight", 8, 2, 16, HID);
			fx_qkv_is(&t, r, T, TL1 "self_attn.qkv_proj.bias",
			          TL1 "self_attn.q_proj.bias", TL1 "self_attn.k_proj.bias",
			          TL1 "self_attn.v_proj.bias", 8, 2, 16);
			fx_mlp_is(&t, r, T, TL1 "mlp.", I, HID);
			int64_t n = 4 * VE / T;
			rows_at(&t, r, "vision_tower.blocks.1.mlp.fc1.weight", 0,
			        "vision_tower.blocks.1.mlp.fc1.weight", r * n, n);
			cols_of(&t, r, T, "vision_tower.blocks.0.mlp.fc2.weight",
			        "vision_tower.blocks.0.mlp.fc2.weight", VE, 4 * VE);
			repl(&t, r, "language_model.model.norm.weight");
			repl(&t, r, "vision_tower.merger.ln_q.bias");
			same_as_qvl(&q, &t, r);
		}
		fx_close(&t);
		fx_close(&q);
	}
}

/* The runtime names are the checkpoint's; the top level's LLaVA keys (its CLIP vision_config,
 * a tie, sizes) change nothing: vLLM builds the model of text_config alone. */
static void test_names(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, ts_model(VL_REL, true), TS, 2, 1, 0, true);
	fx_open(&b, ts_model(VL_REL, true),
	        TS_T("\"tie_word_embeddings\":true,\"hidden_size\":64,\"vision_config\":{\"model_"
	             "type\":\"clip_vision_model\",\"hidden_size\":32},\"image_token_index\":9,",
	             QVL),
	        2, 1, 0, true);
	static const char *const names[] = {"language_model.model.embed_tokens.weight",
	                                    "language_model.lm_head.weight",
	                                    TL1 "self_attn.qkv_proj.weight",
	                                    "vision_tower.blocks.0.attn.qkv.weight",
	                                    "vision_tower.patch_embed.proj.weight",
	                                    "vision_tower.merger.mlp.2.bias"};
	for (uint32_t r = 0; r < 2; r++) {
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			assert_non_null(info(&a, r, names[k]));
		for (size_t i = 0; i < shardmap_rank_n_tensors(a.p, r); i++) {
			const char *n = shardmap_rank_tensor(a.p, r, i)->name;
			if (strncmp(n, "language_model.", 15) != 0 &&
			    strncmp(n, "vision_tower.", 13) != 0)
				fail_msg("rank %u serves '%s', not a checkpoint name", r, n);
		}
		fx_same_rank(&a, &b, r, NULL);
	}
	assert_int_equal(shardmap_n_skipped(a.p), 0);
	assert_string_equal(shardmap_family_find("Tarsier2ForConditionalGeneration", NULL)->name,
	                    "qwen2_vl");
	fx_close(&a);
	fx_close(&b);
}

/* int8-channel TP 2 and fp8-channel TP 4: Qwen2-VL's ranks under Tarsier2's names (o_proj's
 * codes column by column). */
static void test_quant(void **state)
{
	(void)state;
	static const struct {
		uint32_t T;
		wt_quant q;
	} lays[] = {{2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (size_t i = 0; i < 2; i++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[i].T;
		l.quant = lays[i].q;
		fx t, q;
		fx_open_l(&t, ts_model(VL_REL, true), TS, &l, true);
		fx_open_l(&q, ts_model(VL_QVL, true), QVL, &l, true);
		for (uint32_t r = 0; r < lays[i].T; r++)
			same_as_qvl(&q, &t, r);
		if (lays[i].q == WT_QUANT_INT8_CHANNEL)
			for (uint32_t r = 0; r < 2; r++)
				fx_cols_int8_is(&t, r, 2, TL1 "self_attn.o_proj.weight", HID, 128);
		else
			assert_int_equal(
			    info(&t, 3, "vision_tower.blocks.1.attn.qkv.weight")->dtype,
			    WT_F8_E4M3);
		fx_close(&t);
		fx_close(&q);
	}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(ts_model(VL_REL, true), TS, 2, lays, 4);
}

/* The loader reads text_config as the model's config: Qwen2-VL's fields, Tarsier2's
 * architecture, the top level's quantization_config; a tied text_config drops
 * language_model.lm_head.weight. */
static void test_config(void **state)
{
	(void)state;
	ckpt_config a, b;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(TS, strlen(TS), &a, &err), WT_OK);
	assert_int_equal(ckpt_config_parse(QVL, strlen(QVL), &b, &err), WT_OK);
	assert_string_equal(a.architecture, "Tarsier2ForConditionalGeneration");
	assert_string_equal(a.model_type, "qwen2_vl");
	assert_true(a.hidden_size == b.hidden_size && a.num_hidden_layers == b.num_hidden_layers &&
	            a.v_embed_dim == b.v_embed_dim && a.v_depth == b.v_depth && a.has_mrope &&
	            a.n_mrope == 3 && !a.tie_word_embeddings && a.tie_given);
	ckpt_config_clear(&a);
	ckpt_config_clear(&b);
	/* the top level's quantization_config: vLLM builds its quant config before the swap */
	static const char q[] =
	    TS_T("\"quantization_config\":{\"quant_method\":\"fbgemm_fp8\"},", QVL);
	assert_int_equal(ckpt_config_parse(q, strlen(q), &a, &err), WT_OK);
	assert_int_equal(a.quant, CKPT_QUANT_FBGEMM_FP8);
	ckpt_config_clear(&a);
	fx t;
	fx_open(&t, ts_model(VL_REL, true), TS_T("", QVL_T("true", MROPE("[2,3,3]"))), 2, 1, 0,
	        true);
	assert_true(fx_skipped(&t, "language_model.lm_head.weight"));
	fx_close(&t);
}

static void test_errors(void **state)
{
	(void)state;
	/* Qwen2-VL's own layouts, 4.x and 5.x; Tarsier2's with the tower under visual. */
	fx_refused(ts_model(VL_QVL, true), TS, WT_EUNSUPPORTED, "tensor 'lm_head.weight'",
	           "released layout only");
	fx_refused(ts_model(VL_HF5, true), TS, WT_EUNSUPPORTED, "model.language_model.",
	           "unknown tensor");
	fx_refused(ts_model(VL_MIXED, true), TS, WT_EUNSUPPORTED, "visual.",
	           "mixes two name layouts");
	/* text_config missing, not an object, not Qwen2-VL's */
	fx_refused(ts_model(VL_REL, true),
	           "{\"architectures\":[\"Tarsier2ForConditionalGeneration\"],\"model_type\":"
	           "\"llava\"," LM_KEYS "," MROPE("[2,3,3]") VISION_CFG "}",
	           WT_ENOTFOUND, "'text_config' is missing", "Qwen2-VL");
	fx_refused(ts_model(VL_REL, true), TS_T("", "[1]"), WT_ECORRUPT, "'text_config'",
	           "not an object");
	static const char q25[] =
	    TS_T("", "{\"model_type\":\"qwen2_5_vl\"," LM_KEYS "," MROPE("[2,3,3]") VISION_CFG "}");
	fx_refused(ts_model(VL_REL, true), q25, WT_EUNSUPPORTED,
	           "text_config.model_type 'qwen2_5_vl'", "model_type qwen2_vl");
	fx_refused(ts_model(VL_REL, true),
	           TS_T("", "{" LM_KEYS "," MROPE("[2,3,3]") VISION_CFG "}"), WT_EUNSUPPORTED,
	           "text_config.model_type '(none)'", "Qwen2-VL");
	/* Qwen2-VL's refusals through text_config: mrope_section, lm_head of an untied model */
	fx_refused(ts_model(VL_REL, true), TS_T("", QVL_T("false", MROPE("[2,3,4]"))), WT_ECORRUPT,
	           "mrope_section", "head_dim/2");
	fx_refused(ts_model(VL_REL, false), TS, WT_ENOTFOUND, "language_model.lm_head.weight", "");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(ts_model(VL_REL, true), TS, 16, WT_ELAYOUT, "tp_size 16", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices), cmocka_unit_test(test_names),
	    cmocka_unit_test(test_quant),  cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_config), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
