/*
 * test_shardmap_opt.c — OPT (OPTForCausalLM: facebook/opt-125m ... opt-66b) cut as vLLM's
 * opt.py loads it: q/k/v with their biases fused by heads into self_attn.qkv_proj, out_proj
 * by columns (bias replicated), fc1 by rows with its bias, fc2 by columns (bias replicated),
 * the LayerNorms with biases replicated, embed_tokens [V, wep] by vocabulary rows,
 * embed_positions [max_position_embeddings + 2, hid], project_in / project_out replicated
 * (opt-350m's word_embed_proj_dim != hidden_size), model.decoder.final_layer_norm only with
 * do_layer_norm_before, the biases only with enable_bias, the decoder.* layout of the
 * facebook checkpoints. Hand-computed slices at TP 2 and TP 4, an int8 layout, coverage
 * over TP 1..8, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0017ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, head size 16, ffn_dim 256, V 1000, 2 layers, max_position_embeddings 30 */
#define HID 128
#define WEP 64
#define OPT_CFG(extra)                                                                             \
	"{\"architectures\":[\"OPTForCausalLM\"],\"model_type\":\"opt\","                          \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"ffn_dim\":256,"                           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"max_position_embeddings\":30" extra "}"
#define OPT_350 ",\"word_embed_proj_dim\":64,\"do_layer_norm_before\":false"
#define D       "model.decoder."
#define L1      D "layers.1."
#define A1      L1 "self_attn."

enum { O_PROJ = 1, O_FNORM = 2, O_LMHEAD = 4, O_BIAS = 8, O_SHORT = 16 };

/* The model under prefix "model.decoder." (O_SHORT: "decoder."); embeddings wep wide. */
static tm_model *tm_opt(int flags, int64_t wep)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	const char *p = flags & O_SHORT ? "decoder." : D;
	char b[200];
	snprintf(b, sizeof(b), "%sembed_tokens.weight", p);
	tm_add2(m, b, 1000, wep);
	snprintf(b, sizeof(b), "%sembed_positions.weight", p);
	tm_add2(m, b, 32, HID);
	if (flags & O_PROJ) {
		snprintf(b, sizeof(b), "%sproject_in.weight", p);
		tm_add2(m, b, HID, wep);
		snprintf(b, sizeof(b), "%sproject_out.weight", p);
		tm_add2(m, b, wep, HID);
	}
	if (flags & O_FNORM) {
		snprintf(b, sizeof(b), "%sfinal_layer_norm.weight", p);
		tm_add2(m, b, HID, 0);
		snprintf(b, sizeof(b), "%sfinal_layer_norm.bias", p);
		tm_add2(m, b, HID, 0);
	}
	if (flags & O_LMHEAD)
		tm_add2(m, "lm_head.weight", 1000, wep);
	static const char *const norms[] = {"self_attn_layer_norm.weight",
	                                    "self_attn_layer_norm.bias", "final_layer_norm.weight",
	                                    "final_layer_norm.bias"};
	static const char *const biases[][2] = {
	    {"self_attn.q_proj.bias", "h"},
	    {"self_attn.k_proj.bias", "h"},
	    {"self_attn.v_proj.bias", "h"},
	    {"self_attn.out_proj.bias", "h"},
	    {"fc1.bias", "i"},
	    {"fc2.bias", "h"},
	};
	static const char *const lins[][3] = {
	    {"self_attn.q_proj.weight", "h", "h"},
	    {"self_attn.k_proj.weight", "h", "h"},
	    {"self_attn.v_proj.weight", "h", "h"},
	    {"self_attn.out_proj.weight", "h", "h"},
	    {"fc1.weight", "i", "h"},
	    {"fc2.weight", "h", "i"},
	};
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(norms) / sizeof(norms[0]); k++) {
			snprintf(b, sizeof(b), "%slayers.%d.%s", p, i, norms[k]);
			tm_add2(m, b, HID, 0);
		}
		for (size_t k = 0; (flags & O_BIAS) && k < sizeof(biases) / sizeof(biases[0]);
		     k++) {
			snprintf(b, sizeof(b), "%slayers.%d.%s", p, i, biases[k][0]);
			tm_add2(m, b, biases[k][1][0] == 'i' ? 256 : HID, 0);
		}
		for (size_t k = 0; k < sizeof(lins) / sizeof(lins[0]); k++) {
			snprintf(b, sizeof(b), "%slayers.%d.%s", p, i, lins[k][0]);
			tm_lin(m, b, lins[k][1][0] == 'i' ? 256 : HID,
			       lins[k][2][0] == 'i' ? 256 : HID, 0);
		}
	}
	return m;
}

/* opt-125m's shape: pre-norm, final_layer_norm, biases, tied (OPTConfig's default). */
static tm_model *tm_opt125(void)
{
	return tm_opt(O_FNORM | O_BIAS, HID);
}

static void test_opt_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_opt125(), OPT_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "opt");
	assert_true(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		/* [q_r; k_r; v_r], 64 rows each, and the biases alike */
		shp(&f, r, A1 "qkv_proj.weight", 2, 192, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 0, A1 "q_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 64, A1 "k_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.weight", 128, A1 "v_proj.weight", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.bias", 0, A1 "q_proj.bias", 64 * r, 64);
		rows_are(&f, r, A1 "qkv_proj.bias", 128, A1 "v_proj.bias", 64 * r, 64);
		cols_of(&f, r, 2, A1 "out_proj.weight", A1 "out_proj.weight", HID, HID);
		repl(&f, r, A1 "out_proj.bias");
		rows_are(&f, r, L1 "fc1.weight", 0, L1 "fc1.weight", 128 * r, 128);
		rows_are(&f, r, L1 "fc1.bias", 0, L1 "fc1.bias", 128 * r, 128);
		cols_of(&f, r, 2, L1 "fc2.weight", L1 "fc2.weight", HID, 256);
		repl(&f, r, L1 "fc2.bias");
		repl(&f, r, L1 "self_attn_layer_norm.bias");
		repl(&f, r, L1 "final_layer_norm.weight");
		repl(&f, r, D "final_layer_norm.bias");
		repl(&f, r, D "embed_positions.weight");
		assert_true(tm_ix(f.p, r, A1 "q_proj.weight") < 0);
		assert_true(tm_ix(f.p, r, "lm_head.weight") < 0);
	}
	/* embed_tokens [512, 128] per rank: rank 1 rows [512, 1000) then 24 zero rows */
	shp(&f, 1, D "embed_tokens.weight", 2, 512, HID, 0);
	rows_are(&f, 1, D "embed_tokens.weight", 0, D "embed_tokens.weight", 512, 488);
	const uint16_t *z = (const uint16_t *)out_bytes(&f, 1, D "embed_tokens.weight");
	for (int k = 488 * HID; k < 512 * HID; k++)
		assert_int_equal(z[k], 0);
	fx_close(&f);
}

/* TP 4, opt-350m's shape from the decoder.* layout: project_in / project_out replicated,
 * embed_tokens and the untied lm_head 64 wide, no final LayerNorm; the runtime names are
 * model.decoder.*. */
static void test_opt_tp4_350m(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_opt(O_PROJ | O_LMHEAD | O_BIAS | O_SHORT, WEP),
	        OPT_CFG(OPT_350 ",\"tie_word_embeddings\":false"), 4, 1, 0, true);
	assert_false(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, A1 "qkv_proj.weight", 2, 96, HID, 0);
		rows_are(&f, r, A1 "qkv_proj.weight", 32,
		         "decoder.layers.1.self_attn.k_proj.weight", 32 * r, 32);
		rows_are(&f, r, L1 "fc1.bias", 0, "decoder.layers.1.fc1.bias", 64 * r, 64);
		cols_of(&f, r, 4, L1 "fc2.weight", "decoder.layers.1.fc2.weight", HID, 256);
		shp(&f, r, D "project_in.weight", 2, HID, WEP, 0);
		rows_are(&f, r, D "project_in.weight", 0, "decoder.project_in.weight", 0, HID);
		rows_are(&f, r, D "project_out.weight", 0, "decoder.project_out.weight", 0, WEP);
		shp(&f, r, D "embed_tokens.weight", 2, 256, WEP, 0);
		shp(&f, r, "lm_head.weight", 2, 256, WEP, 0);
		assert_true(tm_ix(f.p, r, D "final_layer_norm.weight") < 0);
		assert_true(tm_ix(f.p, r, "decoder.layers.1.fc1.weight") < 0);
	}
	rows_are(&f, 2, "lm_head.weight", 0, "lm_head.weight", 512, 256);
	rows_are(&f, 3, D "embed_tokens.weight", 0, "decoder.embed_tokens.weight", 768, 232);
	fx_close(&f);
}

/* int8-channel at TP 2: qkv, out_proj, fc1, fc2, project_in / out quantized per row;
 * biases, norms and the position table BF16. */
static void test_opt_int8(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_opt(O_PROJ | O_FNORM | O_BIAS, WEP),
	          OPT_CFG(",\"word_embed_proj_dim\":64"), &l, true);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "out_proj.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, L1 "fc2.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, D "project_out.weight")->dtype, WT_I8);
	assert_int_equal(info(&f, 1, A1 "qkv_proj.bias")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, D "embed_positions.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 1, D "embed_tokens.weight")->dtype, WT_BF16);
	fx_rows_int8_is(&f, 1, L1 "fc1.weight", 0, L1 "fc1.weight", 128, 128, HID);
	fx_rows_int8_is(&f, 0, D "project_in.weight", 0, D "project_in.weight", 0, HID, WEP);
	fx_close(&f);
}

static void test_opt_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_opt125(), OPT_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_opt(O_PROJ | O_LMHEAD | O_BIAS | O_SHORT, WEP),
	         OPT_CFG(OPT_350 ",\"tie_word_embeddings\":false"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
	coverage(tm_opt(O_FNORM, HID), OPT_CFG(",\"enable_bias\":false"), 8, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

static void test_opt_errors(void **state)
{
	(void)state;
	/* enable_bias (true by default): every bias there, or none */
	tm_model *m = tm_opt125();
	tm_remove(m, A1 "k_proj.bias");
	fx_refused(m, OPT_CFG(""), WT_ENOTFOUND, "k_proj.bias", "missing");
	m = tm_opt125();
	tm_remove(m, L1 "fc1.bias");
	fx_refused(m, OPT_CFG(""), WT_ENOTFOUND, "fc1.bias", "missing");
	fx_refused(tm_opt125(), OPT_CFG(",\"enable_bias\":false"), WT_EUNSUPPORTED, "bias",
	           "enable_bias is false");
	/* project_in / project_out exactly when word_embed_proj_dim != hidden_size */
	fx_refused(tm_opt(O_PROJ | O_FNORM | O_BIAS, HID), OPT_CFG(""), WT_EUNSUPPORTED,
	           "project_in.weight", "word_embed_proj_dim");
	m = tm_opt(O_PROJ | O_FNORM | O_BIAS, WEP);
	tm_remove(m, D "project_out.weight");
	fx_refused(m, OPT_CFG(",\"word_embed_proj_dim\":64"), WT_ENOTFOUND, "project_out",
	           "word_embed_proj_dim");
	fx_refused(tm_opt(O_FNORM | O_BIAS, WEP), OPT_CFG(",\"word_embed_proj_dim\":64"),
	           WT_ENOTFOUND, "project_in", "word_embed_proj_dim");
	/* embed_tokens is word_embed_proj_dim wide */
	fx_refused(tm_opt(O_PROJ | O_FNORM | O_BIAS, WEP), OPT_CFG(",\"word_embed_proj_dim\":32"),
	           WT_ESHAPE, "embed_tokens", "");
	/* the final LayerNorm exactly when do_layer_norm_before and not _remove_final_layer_norm */
	fx_refused(tm_opt125(), OPT_CFG(",\"do_layer_norm_before\":false"), WT_EUNSUPPORTED,
	           "final_layer_norm", "do_layer_norm_before");
	fx_refused(tm_opt125(), OPT_CFG(",\"_remove_final_layer_norm\":true"), WT_EUNSUPPORTED,
	           "model.decoder.final_layer_norm", "_remove_final_layer_norm");
	m = tm_opt125();
	tm_remove(m, D "final_layer_norm.bias");
	fx_refused(m, OPT_CFG(""), WT_ENOTFOUND, "final_layer_norm.bias", "do_layer_norm_before");
	/* the position table: max_position_embeddings + 2 rows (2048 + 2 when absent) */
	fx_refused(tm_opt125(),
	           "{\"architectures\":[\"OPTForCausalLM\"],\"model_type\":\"opt\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"ffn_dim\":256,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2}",
	           WT_ESHAPE, "embed_positions", "2050");
	/* Llama's o_proj is no OPT tensor */
	m = tm_opt125();
	tm_add2(m, A1 "o_proj.weight", HID, HID);
	fx_refused(m, OPT_CFG(""), WT_EUNSUPPORTED, "o_proj.weight", "opt");
	/* configs vLLM's opt.py cannot load, or weightd does not cut */
	fx_refused(tm_opt125(), OPT_CFG(",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "num_key_value_heads 2", "opt.py");
	fx_refused(tm_opt125(), OPT_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove it");
	fx_refused(tm_opt125(), OPT_CFG(",\"layer_norm_elementwise_affine\":false"),
	           WT_EUNSUPPORTED, "layer_norm_elementwise_affine false", "set it true");
	fx_refused(tm_opt125(), OPT_CFG(",\"do_layer_norm_before\":3"), WT_ECORRUPT,
	           "do_layer_norm_before", "");
	fx_refused(tm_opt125(), OPT_CFG(",\"word_embed_proj_dim\":0"), WT_ECORRUPT,
	           "word_embed_proj_dim", "");
	/* heads split by TP: 8 heads at TP 16 */
	fx_refused_tp(tm_opt125(), OPT_CFG(""), 16, WT_ELAYOUT, "", "");
	/* keys left out take OPTConfig's defaults: ffn_dim 3072 (intermediate_size unread) */
	fx_refused(tm_opt125(),
	           "{\"architectures\":[\"OPTForCausalLM\"],\"model_type\":\"opt\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"intermediate_size\":256,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2,\"max_position_embeddings\":30}",
	           WT_ESHAPE, "3072", "fix config.json");
	fx_refused(tm_opt125(),
	           "{\"architectures\":[\"OPTForCausalLM\"],\"model_type\":\"opt\","
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"ffn_dim\":256,"
	           "\"num_hidden_layers\":2,\"max_position_embeddings\":30}",
	           WT_ESHAPE, "50272", "fix config.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_opt_tp2),    cmocka_unit_test(test_opt_tp4_350m),
	    cmocka_unit_test(test_opt_int8),   cmocka_unit_test(test_opt_coverage),
	    cmocka_unit_test(test_opt_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
