/*
 * test_shardmap_fuyu.c — Fuyu (FuyuForCausalLM: adept/fuyu-8b) cut as vLLM's fuyu.py /
 * persimmon.py load it: Persimmon's tensors under language_model. cut as Persimmon's
 * (query_key_value per head into [q_r; k_r; v_r], dense / dense_4h_to_h by columns,
 * dense_h_to_4h by rows, norms and q/k layernorms replicated, embed_tokens / lm_head by
 * vocabulary rows) and vision_embed_tokens [hid, num_channels x patch_size^2], a
 * ColumnParallelLinear: by rows with its bias, quantized. Hand-computed slices at TP 2 and
 * TP 4, the released and transformers 4.57 name layouts byte for byte (and the LM against
 * PersimmonForCausalLM), int8 / fp8 layouts, coverage over TP 1..8, FuyuConfig /
 * PersimmonConfig defaults, the tie, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0f11ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, I 256, V 1000, 2 layers; patches 3 x 4^2 = 48 wide */
#define HID 128
#define HD  16
#define UNF 48
#define TXT                                                                                        \
	"\"model_type\":\"persimmon\",\"hidden_size\":128,\"num_attention_heads\":8,"              \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define FY_HEAD "{\"architectures\":[\"FuyuForCausalLM\"],\"model_type\":\"fuyu\","
/* top: top-level keys after hidden_size / patch_size / num_channels; text: text_config's */
#define FY_CFG(top, text)                                                                          \
	FY_HEAD "\"hidden_size\":128,\"patch_size\":4,\"num_channels\":3" top                      \
	        ",\"text_config\":{" TXT text "}}"
#define PS_CFG "{\"architectures\":[\"PersimmonForCausalLM\"]," TXT "}"
#define LM     "language_model.model."
#define L1     LM "layers.1."
#define A1     L1 "self_attn."
#define QKV    A1 "query_key_value.weight"
#define QKVB   A1 "query_key_value.bias"
#define VW     "vision_embed_tokens.weight"
#define VB     "vision_embed_tokens.bias"
#define HEAD   "language_model.lm_head.weight"

/* Checkpoint name layouts (test_shardmap_fx.h's): the released (adept/fuyu-8b), transformers
 * 4.57's, and PersimmonForCausalLM's alone (no vision_embed_tokens). */
#define LAY_REL LAY_V450
#define LAY_HF  LAY_HF5
#define LAY_PS  LAY_TEXT

static void add_n(tm_model *m, lay y, const char *leaf, int64_t a, int64_t b)
{
	static const char *const lm[] = {[LAY_REL] = "language_model.model.",
	                                 [LAY_HF] = "model.language_model.",
	                                 [LAY_PS] = "model."};
	char n[200];
	bool head = strcmp(leaf, "lm_head.weight") == 0;
	snprintf(n, sizeof(n), "%s%s", head ? (y == LAY_REL ? "language_model." : "") : lm[y],
	         leaf);
	tm_add2(m, n, a, b);
}

/* The model; q/k layernorms when qkln, lm_head when head. */
static tm_model *tm_fy(lay y, int qkln, bool head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_n(m, y, "embed_tokens.weight", 1000, HID);
	add_n(m, y, "final_layernorm.weight", HID, 0);
	add_n(m, y, "final_layernorm.bias", HID, 0);
	if (head)
		add_n(m, y, "lm_head.weight", 1000, HID);
	for (int i = 0; i < 2; i++) {
		char l[64];
		static const struct {
			const char *leaf;
			int64_t a, b;
		} t[] = {
		    {"input_layernorm.weight", HID, 0},
		    {"input_layernorm.bias", HID, 0},
		    {"post_attention_layernorm.weight", HID, 0},
		    {"post_attention_layernorm.bias", HID, 0},
		    {"self_attn.query_key_value.weight", 3 * HID, HID},
		    {"self_attn.query_key_value.bias", 3 * HID, 0},
		    {"self_attn.dense.weight", HID, HID},
		    {"self_attn.dense.bias", HID, 0},
		    {"self_attn.q_layernorm.weight", HD, 0},
		    {"self_attn.q_layernorm.bias", HD, 0},
		    {"self_attn.k_layernorm.weight", HD, 0},
		    {"self_attn.k_layernorm.bias", HD, 0},
		    {"mlp.dense_h_to_4h.weight", 256, HID},
		    {"mlp.dense_h_to_4h.bias", 256, 0},
		    {"mlp.dense_4h_to_h.weight", HID, 256},
		    {"mlp.dense_4h_to_h.bias", HID, 0},
		};
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			if (!qkln && strstr(t[k].leaf, "_layernorm.") && strstr(t[k].leaf, "attn"))
				continue;
			snprintf(l, sizeof(l), "layers.%d.%s", i, t[k].leaf);
			add_n(m, y, l, t[k].a, t[k].b);
		}
	}
	if (y != LAY_PS) {
		const char *p = y == LAY_HF ? "model." : "";
		char n[64];
		snprintf(n, sizeof(n), "%s" VW, p);
		tm_add2(m, n, HID, UNF);
		snprintf(n, sizeof(n), "%s" VB, p);
		tm_add2(m, n, HID, 0);
	}
	return m;
}

static void test_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_fy(LAY_REL, 1, true), FY_CFG("", ""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "fuyu");
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, QKV, 2, 3 * 64, HID, 0);
		fx_qkv_grouped_is(&f, r, 2, 8, 8, HD, QKV);
		fx_qkv_grouped_is(&f, r, 2, 8, 8, HD, QKVB);
		cols_of(&f, r, 2, A1 "dense.weight", A1 "dense.weight", HID, HID);
		repl(&f, r, A1 "dense.bias");
		repl(&f, r, A1 "q_layernorm.weight");
		repl(&f, r, A1 "k_layernorm.bias");
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.weight", 0, L1 "mlp.dense_h_to_4h.weight",
		         128 * r, 128);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.bias", 0, L1 "mlp.dense_h_to_4h.bias",
		         128 * r, 128);
		cols_of(&f, r, 2, L1 "mlp.dense_4h_to_h.weight", L1 "mlp.dense_4h_to_h.weight", HID,
		        256);
		repl(&f, r, L1 "mlp.dense_4h_to_h.bias");
		repl(&f, r, L1 "input_layernorm.bias");
		repl(&f, r, LM "final_layernorm.weight");
		/* vision_embed_tokens: a ColumnParallelLinear, 64 of the 128 rows a rank */
		shp(&f, r, VW, 2, 64, UNF, 0);
		rows_are(&f, r, VW, 0, VW, 64 * r, 64);
		shp(&f, r, VB, 1, 64, 0, 0);
		rows_are(&f, r, VB, 0, VB, 64 * r, 64);
	}
	/* vocabulary rows: 1000 padded to 1024, rank 1 rows [512, 1000) then zeros */
	shp(&f, 1, HEAD, 2, 512, HID, 0);
	rows_are(&f, 1, HEAD, 0, HEAD, 512, 488);
	rows_are(&f, 0, LM "embed_tokens.weight", 0, LM "embed_tokens.weight", 0, 512);
	assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 4 + 2 * 16 + 2);
	fx_close(&f);
}

/* TP 4: two heads a rank; qk_layernorm false in text_config, tied by text_config. */
static void test_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_fy(LAY_REL, 0, false),
	        FY_CFG("", ",\"qk_layernorm\":false,\"tie_word_embeddings\":true"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, 3 * 32, HID, 0);
		fx_qkv_grouped_is(&f, r, 4, 8, 8, HD, QKV);
		fx_qkv_grouped_is(&f, r, 4, 8, 8, HD, QKVB);
		cols_of(&f, r, 4, A1 "dense.weight", A1 "dense.weight", HID, HID);
		rows_are(&f, r, L1 "mlp.dense_h_to_4h.bias", 0, L1 "mlp.dense_h_to_4h.bias", 64 * r,
		         64);
		shp(&f, r, VW, 2, 32, UNF, 0);
		rows_are(&f, r, VW, 0, VW, 32 * r, 32);
		rows_are(&f, r, VB, 0, VB, 32 * r, 32);
		assert_true(tm_ix(f.p, r, HEAD) < 0);
		assert_true(tm_ix(f.p, r, A1 "q_layernorm.weight") < 0);
	}
	fx_close(&f);
}

/* transformers 4.57's names give the released layout's runtime names and bytes; the
 * language model's are PersimmonForCausalLM's under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T += 2) {
		fx_same_layouts(tm_fy(LAY_REL, 1, true), tm_fy(LAY_HF, 1, true), FY_CFG("", ""),
		                tm_fy(LAY_PS, 1, true), PS_CFG, T, 1, "language_model.");
	}
}

/* int8-channel TP 2: vision_embed_tokens' weight quantized per row (vLLM passes the
 * quantization config), its bias, the norms and the vocabulary kept BF16; fp8-channel TP 4
 * alike. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_fy(LAY_HF, 1, true), FY_CFG("", ""), &l, true);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, VW);
	const float *sc = (const float *)out_bytes(&f, 1, VW "_scale");
	shp(&f, 1, VW "_scale", 2, 64, 1, 0);
	for (int64_t row = 0; row < 64; row++) {
		size_t rowb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, "model." VW, 64 + row, &rowb);
		int8_row_is(q + row * UNF, sc[row], x, UNF);
	}
	static const char *const keep[] = {VB, LM "embed_tokens.weight", HEAD, QKVB,
	                                   A1 "q_layernorm.weight"};
	static const char *const q8[] = {VW, QKV, A1 "dense.weight", L1 "mlp.dense_h_to_4h.weight",
	                                 L1 "mlp.dense_4h_to_h.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_fy(LAY_REL, 1, true), FY_CFG("", ""), &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, VW)->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, VB)->dtype, WT_BF16);
		shp(&f, r, VW, 2, 32, UNF, 0);
	}
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_fy(LAY_REL, 1, true), FY_CFG("", ""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_fy(LAY_HF, 1, true), FY_CFG("", ""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_fy(LAY_REL, 0, false),
	         FY_CFG("", ",\"qk_layernorm\":false,\"tie_word_embeddings\":true"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* FuyuConfig without a text_config builds its PersimmonConfig of the top-level keys (the
 * tie among them); with one, the tie is text_config's alone (PersimmonConfig's default
 * false), the language model's other keys PersimmonConfig's defaults; patch_size,
 * num_channels and the top-level hidden_size FuyuConfig's (30, 3, 4096). */
#define FLAT(extra)                                                                                \
	FY_HEAD "\"hidden_size\":128,\"patch_size\":4,\"num_channels\":3,"                         \
	        "\"num_attention_heads\":8,\"intermediate_size\":256,\"vocab_size\":1000,"         \
	        "\"num_hidden_layers\":2" extra "}"
static void test_defaults(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, tm_fy(LAY_REL, 1, true), FY_CFG("", ""), 2, 1, 0, true);
	fx_open(&b, tm_fy(LAY_REL, 1, true), FLAT(""), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&b);
	/* text_config without model_type: persimmon */
	fx_open(&b, tm_fy(LAY_REL, 1, true),
	        FY_HEAD "\"hidden_size\":128,\"patch_size\":4,\"num_channels\":3,\"text_config\":{"
	                "\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"
	                "\"vocab_size\":1000,\"num_hidden_layers\":2}}",
	        2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&b);
	fx_close(&a);
	/* the tie: the top level's without text_config, text_config's with one */
	fx_open(&a, tm_fy(LAY_REL, 1, false), FLAT(",\"tie_word_embeddings\":true"), 2, 1, 0, true);
	assert_true(tm_ix(a.p, 0, HEAD) < 0);
	fx_close(&a);
	fx_refused(tm_fy(LAY_REL, 1, false), FY_CFG(",\"tie_word_embeddings\":true", ""),
	           WT_ENOTFOUND, "lm_head.weight", "");
	fx_open(&a, tm_fy(LAY_REL, 1, true), FY_CFG(",\"tie_word_embeddings\":true", ""), 2, 1, 0,
	        true);
	rows_are(&a, 1, HEAD, 0, HEAD, 512, 488);
	fx_close(&a);
	fx_open(&a, tm_fy(LAY_HF, 1, false),
	        FY_CFG(",\"tie_word_embeddings\":false", ",\"tie_word_embeddings\":true"), 2, 1, 0,
	        true);
	assert_true(tm_ix(a.p, 0, HEAD) < 0);
	fx_close(&a);
	/* qk_layernorm true when neither level says */
	fx_refused(tm_fy(LAY_REL, 0, true), FLAT(""), WT_ENOTFOUND, "q_layernorm", "missing");
	/* PersimmonConfig's intermediate_size 16384 when text_config omits it */
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD
	           "\"hidden_size\":128,\"patch_size\":4,\"num_channels\":3,\"text_config\":{"
	           "\"model_type\":\"persimmon\",\"hidden_size\":128,"
	           "\"num_attention_heads\":8,\"vocab_size\":1000,\"num_hidden_layers\":2}}",
	           WT_ESHAPE, "16384", "fix config.json");
	/* patch_size 30 and num_channels 3: 2700 columns */
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD "\"hidden_size\":128,\"text_config\":{" TXT "}}", WT_ESHAPE, "2700", VW);
	/* num_channels 3 when absent: the fixture's 3 x 4^2 */
	fx_open(&a, tm_fy(LAY_REL, 1, true),
	        FY_HEAD "\"hidden_size\":128,\"patch_size\":4,\"text_config\":{" TXT "}}", 2, 1, 0,
	        true);
	shp(&a, 1, VW, 2, 64, UNF, 0);
	fx_close(&a);
	/* hidden_size 4096 at the top level when absent: not the language model's 128 */
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD "\"patch_size\":4,\"num_channels\":3,\"text_config\":{" TXT "}}",
	           WT_EUNSUPPORTED, "hidden_size 4096", "give both the same");
}

static void test_errors(void **state)
{
	(void)state;
	/* vLLM's fuyu.py builds PersimmonForCausalLM whatever text_config says */
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD "\"hidden_size\":128,\"patch_size\":4,\"num_channels\":3,"
	                   "\"text_config\":{\"model_type\":\"llama\",\"hidden_size\":128,"
	                   "\"num_attention_heads\":8,\"intermediate_size\":256,"
	                   "\"vocab_size\":1000,\"num_hidden_layers\":2}}",
	           WT_EUNSUPPORTED, "text_config.model_type 'llama'", "PersimmonForCausalLM");
	/* vision_embed_tokens' output must be the language model's width */
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD "\"hidden_size\":256,\"patch_size\":4,\"num_channels\":3,"
	                   "\"text_config\":{" TXT "}}",
	           WT_EUNSUPPORTED, "hidden_size 256", "text_config.hidden_size 128");
	tm_model *m = tm_fy(LAY_REL, 1, true);
	tm_remove(m, VB);
	fx_refused(m, FY_CFG("", ""), WT_ENOTFOUND, VB, "missing");
	m = tm_fy(LAY_HF, 1, true);
	tm_remove(m, "model." VW);
	fx_refused(m, FY_CFG("", ""), WT_ENOTFOUND, VW, "missing");
	m = tm_fy(LAY_REL, 1, true);
	tm_add2(m, "vision_embed_tokens.proj.weight", HID, UNF);
	fx_refused(m, FY_CFG("", ""), WT_EUNSUPPORTED, "vision_embed_tokens.proj.weight", "fuyu");
	/* a patch width the config does not give */
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD "\"hidden_size\":128,\"patch_size\":5,\"num_channels\":3,"
	                   "\"text_config\":{" TXT "}}",
	           WT_ESHAPE, VW, "75");
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD "\"hidden_size\":128,\"patch_size\":0,\"text_config\":{" TXT "}}",
	           WT_ECORRUPT, "patch_size", "");
	fx_refused(tm_fy(LAY_REL, 1, true),
	           FY_HEAD "\"hidden_size\":128,\"patch_size\":16777216,\"num_channels\":3,"
	                   "\"text_config\":{" TXT "}}",
	           WT_ECORRUPT, "num_channels x patch_size^2", "");
	/* Persimmon's refusals, read from text_config */
	fx_refused(tm_fy(LAY_REL, 1, true), FY_CFG("", ",\"layer_norm_eps\":1e-6"), WT_EUNSUPPORTED,
	           "layer_norm_eps 1e-06", "give 1e-5");
	fx_refused(tm_fy(LAY_REL, 1, true), FY_CFG("", ",\"num_key_value_heads\":2"),
	           WT_EUNSUPPORTED, "num_key_value_heads 2", "remove the key");
	fx_refused(tm_fy(LAY_REL, 0, true), FY_CFG("", ""), WT_ENOTFOUND, "q_layernorm", "missing");
	fx_refused_tp(tm_fy(LAY_REL, 1, true), FY_CFG("", ""), 3, WT_ELAYOUT, "", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tp2),      cmocka_unit_test(test_tp4),
	    cmocka_unit_test(test_layouts),  cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage), cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
