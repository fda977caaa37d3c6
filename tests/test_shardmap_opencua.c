/*
 * test_shardmap_opencua.c — OpenCUA (OpenCUAForConditionalGeneration: xlangai/OpenCUA-7B, -32B,
 * model_type opencua; docs/format.md section 2.7, OpenCUA), cut as vLLM's opencua.py loads it:
 * Qwen2_5_VLForConditionalGeneration's tower (Qwen2_5_VisionTransformer of vision_config) and
 * Qwen2ForCausalLM of text_config (1-D RoPE), its checkpoint under language_model.model.,
 * language_model.lm_head. and vision_tower. (vLLM's mapper puts vision_tower. on visual.). Every
 * rank is Qwen2.5-VL's of the same weights byte for byte under the checkpoint's own prefixes
 * (plain TP 2 and 4 with hand slices of layer 1 and of the tower's gated MLP, int8-channel TP 2,
 * fp8-channel TP 4); Qwen2.5-VL's 4.x names read as Qwen2.5-VL's; coverage at TP 1, 2, 4, 8; the
 * config (OpenCUAConfig: Qwen2Config of text_config whatever it says, Qwen2_5_VLVisionConfig of
 * vision_config, no mrope_section asked, the tie from text_config); the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x0c0aull
#include "test_shardmap_fx.h"
#include "test_shardmap_vl_tower.h"
#include "test_shardmap_qvl25.h"
#include "test_shardmap_quant.h"

/* LM (Qwen2): hid 128, H 8, KV 2, d 16, I 256, V 256, L 2, q/k/v biases, untied. Vision
 * (Qwen2.5-VL's): depth 2, width 64, 8 heads, gated MLP 96, merger 256 (merge 2) out 128, patch
 * embed [64, 3, 2, 2, 2]. */
#define HID 128
#define I   256
#define VE  64
#define VI  96
#define VM  256

#define LM_KEYS                                                                                    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":256,\"num_hidden_layers\":2"
#define VKEYS_AT(out)                                                                              \
	"\"vision_config\":{\"depth\":2,\"hidden_size\":64,\"intermediate_size\":96,\"num_"        \
	"heads\":"                                                                                 \
	"8,\"out_hidden_size\":" out ",\"patch_size\":2,\"temporal_patch_size\":2,"                \
	"\"spatial_merge_size\":2,\"in_chans\":3,\"window_size\":112,\"fullatt_block_indexes\":["  \
	"1]}"
#define VKEYS VKEYS_AT("128")
/* Qwen2.5-VL's 4.x config.json */
#define QVL                                                                                        \
	"{\"architectures\":[\"Qwen2_5_VLForConditionalGeneration\"],\"model_type\":\"qwen2_5_"    \
	"vl\"," LM_KEYS ",\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":[2,3,3]}," VKEYS  \
	"}"
/* OpenCUA's: top-level keys `top`, text_config `text`, then the vision_config `vis` */
#define OC_T(top, text, vis)                                                                       \
	"{\"architectures\":[\"OpenCUAForConditionalGeneration\"],\"model_type\":\"opencua\"," top \
	"\"text_config\":{" text "}" vis "}"
#define OC OC_T("", "\"model_type\":\"qwen2\"," LM_KEYS, "," VKEYS)

static void add(tm_model *m, lay_t y, const char *c, int64_t a, int64_t b)
{
	char n[200];
	vl_ck_name(n, sizeof(n), c, y);
	tm_add2(m, n, a, b);
}

static void add_lay(tm_model *m, int layout, const char *c, int64_t a, int64_t b)
{
	add(m, (lay_t)layout, c, a, b);
}

/* Qwen2.5-VL (lm_head when `head`) in layout y; the same values in every layout. */
static tm_model *oc_model(lay_t y, bool head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	qvl25_add(m, (int)y, add_lay, head, &(qvl25_dims){HID, I, VE, VI, VM});
	return m;
}

#define TL1 "language_model.model.layers.1."
#define VB1 "vision_tower.blocks.1."

static void oc_rel_name(char *b, size_t n, const char *c)
{
	vl_ck_name(b, n, c, VL_REL);
}

/* Every tensor of Qwen2.5-VL q's rank r is t's under the release name, and t has no other. */
static void same_as_qvl(const fx *q, const fx *t, uint32_t r)
{
	assert_string_equal(shardmap_family(t->p), "qwen2_5_vl");
	fx_same_rank_renamed(q, t, r, oc_rel_name, "Qwen2.5-VL");
}

/* TP 2 and 4: layer 1's q/k/v rows (and biases), o_proj columns, gate_up rows and down_proj
 * columns by hand under the checkpoint's names; the tower's gated MLP (gate / up rows fused,
 * down_proj columns) and merger (mlp.0 rows, mlp.2 columns); the rest as Qwen2.5-VL's. */
static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		uint32_t T = tps[i];
		fx t, q;
		fx_open(&t, oc_model(VL_REL, true), OC, T, 1, 0, true);
		fx_open(&q, oc_model(VL_QVL, true), QVL, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&t, r, T, TL1 "self_attn.", "o_proj.weight", 8, 2, 16, HID);
			fx_qkv_is(&t, r, T, TL1 "self_attn.qkv_proj.bias",
			          TL1 "self_attn.q_proj.bias", TL1 "self_attn.k_proj.bias",
			          TL1 "self_attn.v_proj.bias", 8, 2, 16);
			fx_mlp_is(&t, r, T, TL1 "mlp.", I, HID);
			fx_gate_up_is(&t, r, T, VB1 "mlp.gate_up_proj.weight",
			              VB1 "mlp.gate_proj.weight", VB1 "mlp.up_proj.weight", VI);
			cols_of(&t, r, T, VB1 "mlp.down_proj.weight", VB1 "mlp.down_proj.weight",
			        VE, VI);
			int64_t n = VM / T;
			rows_at(&t, r, "vision_tower.merger.mlp.0.weight", 0,
			        "vision_tower.merger.mlp.0.weight", r * n, n);
			cols_of(&t, r, T, "vision_tower.merger.mlp.2.weight",
			        "vision_tower.merger.mlp.2.weight", HID, VM);
			repl(&t, r, "language_model.model.norm.weight");
			repl(&t, r, "vision_tower.merger.ln_q.weight");
			same_as_qvl(&q, &t, r);
		}
		fx_close(&t);
		fx_close(&q);
	}
}

/* The runtime names are the checkpoint's; Qwen2.5-VL's 4.x names under OpenCUA's config (vLLM's
 * mapper reads model. and lm_head. too) give Qwen2.5-VL's ranks, names included; the top level's
 * keys change nothing. */
static void test_names(void **state)
{
	(void)state;
	fx a, b, q;
	fx_open(&a, oc_model(VL_REL, true), OC, 2, 1, 0, true);
	fx_open(&b, oc_model(VL_REL, true),
	        OC_T("\"tie_word_embeddings\":true,\"hidden_size\":64,\"vocab_size\":9,",
	             "\"model_type\":\"qwen2\"," LM_KEYS, "," VKEYS),
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
	fx_close(&a);
	fx_close(&b);
	fx_open(&a, oc_model(VL_QVL, true), OC, 2, 1, 0, true);
	fx_open(&q, oc_model(VL_QVL, true), QVL, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &q, r, NULL);
	fx_close(&a);
	fx_close(&q);
	assert_string_equal(shardmap_family_find("OpenCUAForConditionalGeneration", NULL)->name,
	                    "qwen2_5_vl");
}

/* int8-channel TP 2 and fp8-channel TP 4: Qwen2.5-VL's ranks under OpenCUA's names (o_proj's
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
		fx_open_l(&t, oc_model(VL_REL, true), OC, &l, true);
		fx_open_l(&q, oc_model(VL_QVL, true), QVL, &l, true);
		for (uint32_t r = 0; r < lays[i].T; r++)
			same_as_qvl(&q, &t, r);
		if (lays[i].q == WT_QUANT_INT8_CHANNEL)
			for (uint32_t r = 0; r < 2; r++)
				fx_cols_int8_is(&t, r, 2, TL1 "self_attn.o_proj.weight", HID, 128);
		else
			assert_int_equal(info(&t, 3, VB1 "mlp.gate_up_proj.weight")->dtype,
			                 WT_F8_E4M3);
		fx_close(&t);
		fx_close(&q);
	}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(oc_model(VL_REL, true), OC, 2, lays, 4);
}

/* The loader: text_config as Qwen2Config (its defaults whatever its model_type says), the tower
 * from vision_config (Qwen2_5_VLVisionConfig's defaults), no mrope_section asked; a tied
 * text_config skips language_model.lm_head.weight, a top-level tie does not. */
static void test_config(void **state)
{
	(void)state;
	ckpt_config a;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(OC, strlen(OC), &a, &err), WT_OK);
	assert_string_equal(a.architecture, "OpenCUAForConditionalGeneration");
	assert_true(a.hidden_size == HID && a.num_hidden_layers == 2 &&
	            a.num_key_value_heads == 2 && a.has_vision && a.v_depth == 2 &&
	            a.v_hidden_size == VE && a.v_intermediate_size == VI &&
	            a.v_out_hidden_size == HID && !a.has_mrope && !a.tie_word_embeddings);
	ckpt_config_clear(&a);
	static const char d[] = OC_T("", "\"model_type\":\"qwen2_5_vl_text\"", "");
	assert_int_equal(ckpt_config_parse(d, strlen(d), &a, &err), WT_OK);
	assert_true(a.hidden_size == 4096 && a.intermediate_size == 22016 &&
	            a.num_hidden_layers == 32 && a.num_key_value_heads == 32 &&
	            a.vocab_size == 151936 && a.v_depth == 32 && a.v_hidden_size == 3584 &&
	            a.v_intermediate_size == 3420 && a.v_num_heads == 16 &&
	            a.v_out_hidden_size == 3584);
	ckpt_config_clear(&a);
	fx t;
	fx_open(
	    &t, oc_model(VL_REL, true),
	    OC_T("", "\"model_type\":\"qwen2\",\"tie_word_embeddings\":true," LM_KEYS, "," VKEYS),
	    2, 1, 0, true);
	assert_true(fx_skipped(&t, "language_model.lm_head.weight"));
	fx_close(&t);
}

static void test_errors(void **state)
{
	(void)state;
	/* transformers 5.x's Qwen2.5-VL names; the release's with the tower under visual. */
	fx_refused(oc_model(VL_HF5, true), OC, WT_EUNSUPPORTED, "model.language_model.",
	           "unknown tensor");
	fx_refused(oc_model(VL_MIXED, true), OC, WT_EUNSUPPORTED, "visual.",
	           "mixes two name layouts");
	/* the merger's output is the language model's input */
	fx_refused(oc_model(VL_REL, true),
	           OC_T("", "\"model_type\":\"qwen2\"," LM_KEYS, "," VKEYS_AT("64")), WT_ECORRUPT,
	           "out_hidden_size 64", "hidden_size 128");
	/* no vision_config: Qwen2_5_VLVisionConfig's 3584-wide tower, which the checkpoint is not
	 */
	fx_refused(oc_model(VL_REL, true), OC_T("", "\"model_type\":\"qwen2\"," LM_KEYS, ""),
	           WT_ECORRUPT, "out_hidden_size 3584", "hidden_size 128");
	/* untied without its lm_head; heads 8 do not split 16 ways */
	fx_refused(oc_model(VL_REL, false), OC, WT_ENOTFOUND, "language_model.lm_head.weight", "");
	fx_refused_tp(oc_model(VL_REL, true), OC, 16, WT_ELAYOUT, "tp_size 16", "");
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
