/*
 * test_shardmap_interns1.c — Intern-S1 (InternS1ForConditionalGeneration, model_type interns1,
 * remote code: internlm/Intern-S1 with a Qwen3-MoE language model, Intern-S1-mini with a Qwen3
 * one; docs/format.md section 2.7), which vLLM's registry maps onto interns1.py's
 * InternS1ForConditionalGeneration, the class it builds for InternVLForConditionalGeneration:
 * every rank is the internvl family's of the same weights byte for byte (plain TP 2 and 4 with
 * hand slices of the attention, the dense MLP, the stacked experts and the tower; EP 2;
 * int8-channel TP 2 with o_proj's codes by hand; fp8-channel TP 4), in both name layouts;
 * coverage at TP 1, 2, 4, 8 and EP 2; InternS1Config's / InternS1VisionConfig's defaults (read
 * as InternVL's), the tie from text_config only; InternVL's refusals under Intern-S1's name.
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

#define SEED 0x5e1ull
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_internvl_fx.h"
#include "test_shardmap_quant.h"

/* LM: hid 64, H 8 x d 16, KV 2, I 128, V 128, 2 layers; Intern-S1's (qwen3_moe): layer 0 dense
 * (mlp_only_layers), layer 1 4 experts of 32. The tower and projector of
 * test_shardmap_internvl_fx.h. */
#define NE 4
#define IE 32
#define L0 LM "layers.0."
#define L1 LM "layers.1."

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":16,\"intermediate_size\":128,\"vocab_size\":128,"  \
	"\"num_hidden_layers\":2"
#define MOE_KEYS                                                                                   \
	LM_KEYS("qwen3_moe")                                                                       \
	",\"moe_intermediate_size\":32,\"num_experts\":4,"                                         \
	"\"num_experts_per_tok\":2,\"mlp_only_layers\":[0]"
/* config.json of architecture a / model_type mt over text_config `text` and the tower's
 * switches `vis` (top-level keys `top`) */
#define CFG_A(a, mt, top, text, vis)                                                               \
	"{\"architectures\":[\"" a "\"],\"model_type\":\"" mt "\"," top "\"text_config\":{" text   \
	"},\"vision_config\":{" VKEYS vis "}}"
#define S1(top, text, vis)  CFG_A("InternS1ForConditionalGeneration", "interns1", top, text, vis)
#define IVL(top, text, vis) CFG_A("InternVLForConditionalGeneration", "internvl", top, text, vis)
/* Intern-S1-mini's tower switches (InternViT-300M: q/k/v biases, LayerNorm) and Intern-S1's
 * (InternViT-6B: no q/k/v biases, q / k RMSNorm, RMSNorm blocks) */
#define V_MINI ",\"attention_bias\":true"
#define V_S1   ",\"use_qk_norm\":true,\"norm_type\":\"rms_norm\""
#define O_S1   (O_NOBIAS | O_QKN | O_RMS)

enum { MINI, FULL };
static const char *const cfg_s1[] = {S1("", LM_KEYS("qwen3"), V_MINI), S1("", MOE_KEYS, V_S1)};
static const char *const cfg_ivl[] = {IVL("", LM_KEYS("qwen3"), V_MINI), IVL("", MOE_KEYS, V_S1)};

/* Layer 1's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {L1 "mlp.experts.w13_weight",
                              L1 "mlp.experts.w2_weight",
                              L1 "mlp.experts.%lld.%s.weight",
                              "gate_proj",
                              "up_proj",
                              "down_proj",
                              HID,
                              IE};

static const fx_leaf attn[] = {
    {"input_layernorm.weight", HID, 0},    {"post_attention_layernorm.weight", HID, 0},
    {"self_attn.q_proj.weight", 128, HID}, {"self_attn.k_proj.weight", 32, HID},
    {"self_attn.v_proj.weight", 32, HID},  {"self_attn.o_proj.weight", HID, 128},
    {"self_attn.q_norm.weight", 16, 0},    {"self_attn.k_norm.weight", 16, 0},
};
static const fx_leaf mlp[] = {
    {"mlp.gate_proj.weight", 128, HID},
    {"mlp.up_proj.weight", 128, HID},
    {"mlp.down_proj.weight", HID, 128},
};

/* Layer i's MLP: dense, or (sparse) the router and NE experts, in layout y */
static void add_mlp(tm_model *m, lay y, int i, bool sparse)
{
	char b[200];
	for (size_t k = 0; !sparse && k < sizeof(mlp) / sizeof(mlp[0]); k++) {
		snprintf(b, sizeof(b), "model.layers.%d.%s", i, mlp[k].leaf);
		mm_add(m, y, b, mlp[k].n, mlp[k].k);
	}
	if (!sparse)
		return;
	snprintf(b, sizeof(b), "model.layers.%d.mlp.gate.weight", i);
	mm_add(m, y, b, NE, HID);
	static const char *const ex[] = {"gate_proj", "up_proj", "down_proj"};
	for (int j = 0; j < NE; j++)
		for (int k = 0; k < 3; k++) {
			snprintf(b, sizeof(b), "model.layers.%d.mlp.experts.%d.%s.weight", i, j,
			         ex[k]);
			mm_add(m, y, b, k == 2 ? HID : IE, k == 2 ? IE : HID);
		}
}

/* Intern-S1-mini (Qwen3, the 300M tower's switches) or Intern-S1 (layer 1 sparse, the 6B
 * tower's switches), lm_head when asked, in layout y; the same values in every layout. */
static tm_model *s1_model(int which, lay y, bool lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(attn) / sizeof(attn[0]); k++) {
			snprintf(b, sizeof(b), "model.layers.%d.%s", i, attn[k].leaf);
			mm_add(m, y, b, attn[k].n, attn[k].k);
		}
		add_mlp(m, y, i, which == FULL && i == 1);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	ivl_add_tower(m, y, which == FULL ? O_S1 : 0);
	return m;
}

/* Every rank of a (Intern-S1) is b's (InternVL's) byte for byte, names and count included. */
static void same_ranks(const fx *a, const fx *b, uint32_t n)
{
	assert_string_equal(shardmap_family(a->p), "internvl");
	for (uint32_t r = 0; r < n; r++)
		fx_same_rank(a, b, r, NULL);
}

/* TP 2 and 4, the released names: layer 0's attention (q/k/v rows by heads, o_proj columns,
 * per-head norms whole) and dense MLP, layer 1's experts each cut by TP (Intern-S1), the tower
 * (Intern-S1-mini's switches: fc1 rows, fc2 columns, the rest whole), every rank InternVL's. */
static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (int w = MINI; w <= FULL; w++)
		for (size_t i = 0; i < 2; i++) {
			uint32_t T = tps[i];
			fx s, v;
			fx_open(&s, s1_model(w, LAY_HF5, true), cfg_s1[w], T, 1, 0, true);
			fx_open(&v, s1_model(w, LAY_HF5, true), cfg_ivl[w], T, 1, 0, true);
			same_ranks(&s, &v, T);
			fx_close(&s);
			fx_close(&v);
			fx_open(&s, s1_model(w, LAY_V450, true), cfg_s1[w], T, 1, 0, true);
			for (uint32_t r = 0; r < T; r++) {
				fx_attn_is(&s, r, T, L0 "self_attn.", "o_proj.weight", 8, 2, 16,
				           HID);
				repl(&s, r, L0 "self_attn.q_norm.weight");
				fx_mlp_is(&s, r, T, L0 "mlp.", 128, HID);
				if (w == FULL) {
					fx_experts_are(&s, &XP, r, 0, NE, r * (IE / T), IE / T,
					               false);
					repl(&s, r, L1 "mlp.gate.weight");
					repl(&s, r, VT "encoder.layer.1.attention.q_norm.weight");
				} else {
					fx_mlp_is(&s, r, T, L1 "mlp.", 128, HID);
					ivl_check_tower(&s, T, r);
				}
				fx_vocab_is(&s, r, T, "language_model.lm_head.weight", 128, 128,
				            HID);
			}
			fx_close(&s);
		}
	assert_string_equal(shardmap_family_find("InternS1ForConditionalGeneration", NULL)->name,
	                    "internvl");
}

/* EP 2 (TP 1): Intern-S1's whole experts two per rank, InternVL's ranks byte for byte. */
static void test_ep(void **state)
{
	(void)state;
	fx s, v;
	fx_open(&s, s1_model(FULL, LAY_V450, true), cfg_s1[FULL], 1, 2, 0, true);
	fx_open(&v, s1_model(FULL, LAY_V450, true), cfg_ivl[FULL], 1, 2, 0, true);
	same_ranks(&s, &v, 2);
	for (uint32_t e = 0; e < 2; e++)
		fx_experts_are(&s, &XP, e, 2 * e, 2, 0, IE, false);
	fx_close(&s);
	fx_close(&v);
}

/* int8-channel TP 2 (o_proj's codes column by column; the tower's fc1 kept BF16) and
 * fp8-channel TP 4 (experts F8): InternVL's ranks byte for byte. */
static void test_quant(void **state)
{
	(void)state;
	static const struct {
		uint32_t T;
		wt_quant q;
	} lays[] = {{2, WT_QUANT_INT8_CHANNEL}, {4, WT_QUANT_FP8_CHANNEL}};
	for (int w = MINI; w <= FULL; w++)
		for (size_t i = 0; i < 2; i++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = lays[i].T;
			l.quant = lays[i].q;
			fx s, v;
			fx_open_l(&s, s1_model(w, LAY_V450, true), cfg_s1[w], &l, true);
			fx_open_l(&v, s1_model(w, LAY_V450, true), cfg_ivl[w], &l, true);
			same_ranks(&s, &v, lays[i].T);
			for (uint32_t r = 0; r < lays[i].T; r++)
				assert_int_equal(
				    info(&s, r, VT "encoder.layer.1.mlp.fc1.weight")->dtype,
				    WT_BF16);
			if (lays[i].q == WT_QUANT_INT8_CHANNEL)
				for (uint32_t r = 0; r < 2; r++)
					fx_cols_int8_is(&s, r, 2, L0 "self_attn.o_proj.weight", HID,
					                128);
			else if (w == FULL)
				assert_int_equal(info(&s, 3, XP.w13)->dtype, WT_F8_E4M3);
			fx_close(&s);
			fx_close(&v);
		}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}};
	coverage(s1_model(MINI, LAY_HF5, true), cfg_s1[MINI], 2, lays, 4);
	coverage(s1_model(FULL, LAY_HF5, true), cfg_s1[FULL], 2, lays, 5);
}

/* model_type interns1 is read as InternVL's: every field the planner reads equal, and
 * InternS1Config's / InternS1VisionConfig's defaults (InternVL's) for absent keys. */
static void test_config(void **state)
{
	(void)state;
	ckpt_config a, b;
	wt_errbuf err = {0};
	for (int w = MINI; w <= FULL; w++) {
		assert_int_equal(ckpt_config_parse(cfg_s1[w], strlen(cfg_s1[w]), &a, &err), WT_OK);
		assert_int_equal(ckpt_config_parse(cfg_ivl[w], strlen(cfg_ivl[w]), &b, &err),
		                 WT_OK);
		assert_string_equal(a.architecture, "InternS1ForConditionalGeneration");
		assert_string_equal(a.lm_model_type, b.lm_model_type);
		assert_true(a.has_vision && a.hidden_size == b.hidden_size &&
		            a.head_dim == b.head_dim && a.num_experts == b.num_experts &&
		            a.v_hidden_size == b.v_hidden_size &&
		            a.v_num_layers == b.v_num_layers && a.v_image_size == 8 &&
		            a.v_patch_size == 2 && a.v_qk_norm == (w == FULL) &&
		            a.v_norm_ln == (w == MINI) && a.v_attn_bias == (w == MINI) &&
		            a.v_spatial_merge_size == 2);
		ckpt_config_clear(&a);
		ckpt_config_clear(&b);
	}
	/* defaults: vision_config {} and a text_config of its model_type alone (Qwen3Config's) */
	static const char d[] = "{\"architectures\":[\"InternS1ForConditionalGeneration\"],"
	                        "\"model_type\":\"interns1\",\"text_config\":{\"model_type\":"
	                        "\"qwen3\"},\"vision_config\":{}}";
	assert_int_equal(ckpt_config_parse(d, strlen(d), &a, &err), WT_OK);
	assert_true(a.v_hidden_size == 1024 && a.v_intermediate_size == 4096 &&
	            a.v_num_layers == 24 && a.v_num_attn_heads == 16 && a.v_image_size == 448 &&
	            a.v_patch_size == 14 && a.v_spatial_merge_size == 2 &&
	            a.v_feature_layer == -1 && !a.v_attn_bias && !a.v_qk_norm && a.v_norm_ln &&
	            !a.v_mask_token && a.v_abs_pos && a.v_mean_pool);
	assert_string_equal(a.v_select, "default");
	assert_true(a.hidden_size == 4096 && a.head_dim == 128 && a.num_key_value_heads == 32 &&
	            a.vocab_size == 151936 && !a.tie_word_embeddings);
	ckpt_config_clear(&a);
	/* a text_config without model_type is Qwen2's (InternS1Config's CONFIG_MAPPING["qwen2"]) */
	static const char q2[] = S1("", "\"hidden_size\":64", V_MINI);
	assert_int_equal(ckpt_config_parse(q2, strlen(q2), &a, &err), WT_OK);
	assert_string_equal(a.lm_model_type, "qwen2");
	ckpt_config_clear(&a);
}

/* The tie is text_config's alone: a top-level true over a text_config without the key serves
 * language_model.lm_head.weight; text_config's true skips it. */
static void test_tie(void **state)
{
	(void)state;
	fx s;
	fx_open(&s, s1_model(MINI, LAY_HF5, true),
	        S1("\"tie_word_embeddings\":true,", LM_KEYS("qwen3"), V_MINI), 2, 1, 0, true);
	assert_false(shardmap_tied_lm_head(s.p));
	assert_non_null(info(&s, 1, "language_model.lm_head.weight"));
	fx_close(&s);
	fx_open(&s, s1_model(MINI, LAY_HF5, true),
	        S1("", LM_KEYS("qwen3") ",\"tie_word_embeddings\":true", V_MINI), 2, 1, 0, true);
	assert_true(shardmap_tied_lm_head(s.p));
	assert_true(fx_skipped(&s, "lm_head.weight"));
	fx_close(&s);
}

/* InternVL's refusals, named for Intern-S1 where they name the architecture */
static void test_errors(void **state)
{
	(void)state;
	fx_refused(s1_model(MINI, LAY_HF5, true), S1("", LM_KEYS("gpt_oss"), V_MINI),
	           WT_EUNSUPPORTED, "'gpt_oss'", "InternS1ForConditionalGeneration");
	fx_refused(s1_model(MINI, LAY_HF5, true), S1("", LM_KEYS("llama"), V_MINI), WT_EUNSUPPORTED,
	           "text_config.model_type 'llama'", "InternS1ForConditionalGeneration");
	fx_refused(
	    s1_model(MINI, LAY_HF5, true),
	    "{\"architectures\":[\"InternS1ForConditionalGeneration\"],\"model_type\":"
	    "\"interns1\",\"hidden_size\":64,\"num_attention_heads\":8,\"intermediate_size\":"
	    "128,\"vocab_size\":128,\"num_hidden_layers\":2,\"vision_config\":{" VKEYS V_MINI "}}",
	    WT_ECORRUPT, "InternS1ForConditionalGeneration", "text_config");
	fx_refused(s1_model(MINI, LAY_HF5, true),
	           S1("\"vision_feature_layer\":-2,", LM_KEYS("qwen3"), V_MINI), WT_EUNSUPPORTED,
	           "vision_feature_layer", "give -1");
	fx_refused(s1_model(MINI, LAY_HF5, true),
	           S1("\"downsample_ratio\":0.3,", LM_KEYS("qwen3"), V_MINI), WT_EUNSUPPORTED,
	           "downsample_ratio", "1 / n");
	fx_refused(s1_model(MINI, LAY_HF5, true),
	           "{\"architectures\":[\"InternS1ForConditionalGeneration\"],\"model_type\":"
	           "\"interns1\",\"text_config\":{" LM_KEYS("qwen3") "},\"vision_config\":{" VSIZES(
	               "32", "64", "4", "[8,6]", "[2,2]") V_MINI "}}",
	           WT_EUNSUPPORTED, "image_size [8, 6]", "square");
	/* Intern-S1's dense layer 0 where the config makes every layer sparse; its 6B tower's q / k
	 * norms where use_qk_norm is false */
	tm_model *m = s1_model(FULL, LAY_HF5, true);
	fx_refused(
	    m, S1("", LM_KEYS("qwen3_moe") ",\"moe_intermediate_size\":32,\"num_experts\":4", V_S1),
	    WT_EUNSUPPORTED, "layers.0.mlp.down_proj.weight", "mlp_only_layers");
	fx_refused(s1_model(FULL, LAY_HF5, true), S1("", MOE_KEYS, ",\"norm_type\":\"rms_norm\""),
	           WT_EUNSUPPORTED, "q_norm", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices), cmocka_unit_test(test_ep),
	    cmocka_unit_test(test_quant),  cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_config), cmocka_unit_test(test_tie),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
