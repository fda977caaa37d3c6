/*
 * test_shardmap_nomic_bert.c — NomicBertModel (nomic-ai/nomic-embed-text-v1 / v1.5, remote
 * code) cut as vLLM's bert_with_rope.py loads it: word_embeddings and token_type_embeddings by
 * padded rows (both VocabParallelEmbeddings), emb_ln as embeddings.LayerNorm whole; each layer's
 * fused attn.Wqkv re-cut into attn.qkv_proj [q_r; k_r; v_r] by heads with its bias;
 * attn.out_proj and mlp.fc2 (down_proj) by columns with their biases whole; mlp.fc12 (gate) and
 * mlp.fc11 (up) merged by rows into mlp.gate_up_proj [gate_r; up_r] with their biases; norm1 /
 * norm2 as attn_ln / mlp_ln whole; every Linear quantized, the embeddings and LayerNorms not.
 * Hand slices at TP 2 and 4 (with and without the biases), int8-channel TP 2 and fp8-channel
 * TP 4, coverage at TP 1, 2, 4, 8, NomicBertConfig's defaults (GPT2Config's dims, the biases on)
 * and every refusal. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x90111cull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 64, H 8 (d 8), I 96, V 100, 2 token types, 2 layers */
#define HID 64
#define I   96
#define NB_ARCH(arch, act, extra)                                                                  \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"nomic_bert\",\"n_head\":8" act extra "}"
#define NB_RAW(extra) NB_ARCH("NomicBertModel", ",\"activation_function\":\"swiglu\"", extra)
#define NB_DIMS       ",\"n_embd\":64,\"n_inner\":96,\"n_layer\":2,\"vocab_size\":100"
#define NB_CFG(extra) NB_RAW(NB_DIMS extra)
/* the releases' switches: no bias anywhere */
#define NOB  ",\"qkv_proj_bias\":false,\"mlp_fc1_bias\":false,\"mlp_fc2_bias\":false"
#define L1   "encoder.layers.1."
#define WQKV L1 "attn.Wqkv.weight"
#define QKV  L1 "attn.qkv_proj.weight"
#define QKVB L1 "attn.qkv_proj.bias"
#define OP   L1 "attn.out_proj.weight"
#define OB   L1 "attn.out_proj.bias"
#define GU   L1 "mlp.gate_up_proj.weight"
#define GUB  L1 "mlp.gate_up_proj.bias"
#define DP   L1 "mlp.down_proj.weight"
#define DPB  L1 "mlp.down_proj.bias"
#define EMB  "embeddings.word_embeddings.weight"
#define TT   "embeddings.token_type_embeddings.weight"

/* NomicBertModel's tensors as the releases name them: `layers` layers, the Linears' biases when
 * bias; types token-type rows. */
static tm_model *tm_nb(int layers, bool bias, int64_t types)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, EMB, 100, HID);
	tm_add2(m, TT, types, HID);
	tm_add2(m, "emb_ln.weight", HID, 0);
	tm_add2(m, "emb_ln.bias", HID, 0);
	static const struct {
		const char *leaf;
		int64_t a, b;
		bool is_bias;
	} lv[] = {
	    {"attn.Wqkv.weight", 3 * HID, HID, false}, {"attn.Wqkv.bias", 3 * HID, 0, true},
	    {"attn.out_proj.weight", HID, HID, false}, {"attn.out_proj.bias", HID, 0, true},
	    {"norm1.weight", HID, 0, false},           {"norm1.bias", HID, 0, false},
	    {"mlp.fc11.weight", I, HID, false},        {"mlp.fc11.bias", I, 0, true},
	    {"mlp.fc12.weight", I, HID, false},        {"mlp.fc12.bias", I, 0, true},
	    {"mlp.fc2.weight", HID, I, false},         {"mlp.fc2.bias", HID, 0, true},
	    {"norm2.weight", HID, 0, false},           {"norm2.bias", HID, 0, false},
	};
	char n[160];
	for (int l = 0; l < layers; l++)
		for (size_t k = 0; k < sizeof(lv) / sizeof(lv[0]); k++)
			if (bias || !lv[k].is_bias) {
				snprintf(n, sizeof(n), "encoder.layers.%d.%s", l, lv[k].leaf);
				tm_add2(m, n, lv[k].a, lv[k].b);
			}
	return m;
}

/* Rank r of T by hand: qkv_proj rows [p*HID + r*HID/T, +HID/T) of Wqkv for q, k, v (its bias
 * alike); out_proj / down_proj columns; gate_up [fc12_r; fc11_r]; the LayerNorms under vLLM's
 * names whole; the two tables by padded rows (100 -> 128, 2 -> 64). */
static void check_rank(const fx *f, uint32_t T, uint32_t r, bool bias)
{
	int64_t ql = HID / T;
	shp(f, r, QKV, 2, 3 * ql, HID, 0);
	for (int p = 0; p < 3; p++)
		rows_at(f, r, QKV, p * ql, WQKV, p * HID + r * ql, ql);
	cols_of(f, r, T, OP, OP, HID, HID);
	shp(f, r, GU, 2, 2 * (I / T), HID, 0);
	fx_gate_up_is(f, r, T, GU, L1 "mlp.fc12.weight", L1 "mlp.fc11.weight", I);
	cols_of(f, r, T, DP, L1 "mlp.fc2.weight", HID, I);
	static const char *const ln[][2] = {{"embeddings.LayerNorm.weight", "emb_ln.weight"},
	                                    {"embeddings.LayerNorm.bias", "emb_ln.bias"},
	                                    {L1 "attn_ln.weight", L1 "norm1.weight"},
	                                    {L1 "attn_ln.bias", L1 "norm1.bias"},
	                                    {L1 "mlp_ln.weight", L1 "norm2.weight"},
	                                    {L1 "mlp_ln.bias", L1 "norm2.bias"}};
	for (size_t k = 0; k < sizeof(ln) / sizeof(ln[0]); k++)
		repl_from(f, r, ln[k][0], ln[k][1]);
	fx_vocab_is(f, r, T, EMB, 100, 128, HID);
	fx_vocab_is(f, r, T, TT, 2, 64, HID);
	if (bias) {
		for (int p = 0; p < 3; p++)
			rows_at(f, r, QKVB, p * ql, L1 "attn.Wqkv.bias", p * HID + r * ql, ql);
		shp(f, r, QKVB, 1, 3 * ql, 0, 0);
		repl(f, r, OB);
		fx_gate_up_is(f, r, T, GUB, L1 "mlp.fc12.bias", L1 "mlp.fc11.bias", I);
		repl_from(f, r, DPB, L1 "mlp.fc2.bias");
	} else {
		assert_true(tm_ix(f->p, r, QKVB) < 0 && tm_ix(f->p, r, OB) < 0 &&
		            tm_ix(f->p, r, GUB) < 0 && tm_ix(f->p, r, DPB) < 0);
	}
	/* none of the checkpoint's own names reaches a rank */
	assert_true(tm_ix(f->p, r, WQKV) < 0 && tm_ix(f->p, r, L1 "norm1.weight") < 0 &&
	            tm_ix(f->p, r, L1 "mlp.fc11.weight") < 0 && tm_ix(f->p, r, "emb_ln.bias") < 0);
	assert_int_equal(info(f, r, DP)->dtype, WT_BF16);
	/* the tables and emb_ln; a layer's qkv, out, gate_up, down, four norms (+ four biases) */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 4 + 2 * (bias ? 12 : 8));
}

static void test_nomic_bert_slices(void **state)
{
	(void)state;
	for (int b = 0; b < 2; b++)
		for (uint32_t T = 2; T <= 4; T *= 2) {
			fx f;
			fx_open(&f, tm_nb(2, b, 2), b ? NB_CFG("") : NB_CFG(NOB), T, 1, 0, true);
			assert_string_equal(shardmap_family(f.p), "nomic_bert");
			for (uint32_t r = 0; r < T; r++)
				check_rank(&f, T, r, b);
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

static const char *const nb_keep[] = {
    EMB, TT, "embeddings.LayerNorm.weight", L1 "attn_ln.bias", QKVB, OB, GUB, DPB};
static const char *const nb_quant[] = {QKV, OP, GU, DP};

/* int8-channel at TP 2: qkv_proj / out_proj / gate_up_proj / down_proj quantized per row, the
 * biases, tables and LayerNorms BF16; rank 1's qkv_proj codes are Wqkv rows [32, 64) of each
 * third, its out_proj codes columns [32, 64). fp8-channel at TP 4: the same split. */
static void test_nomic_bert_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_nb(2, true, 2), NB_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(nb_keep), FX_N(nb_quant));
	for (int p = 0; p < 3; p++)
		fx_rows_int8_is(&f, 1, QKV, p * (HID / 2), WQKV, p * HID + HID / 2, HID / 2, HID);
	fx_cols_int8_is(&f, 1, 2, OP, HID, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_nb(2, true, 2), NB_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(nb_keep), FX_N(nb_quant));
	fx_close(&f);
}

static void test_nomic_bert_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_nb(2, true, 2), NB_CFG(""), 8, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_nb(2, false, 2), NB_CFG(NOB), 8, lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take NomicBertConfig's: the three bias switches true (the biases required),
 * GPT2Config's n_layer 12, vocab_size 50257, n_embd 768; type_vocab_size 2. */
static void test_nomic_bert_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_nb(2, true, 2), NB_CFG(""), 2, 1, 0, true);
	repl(&f, 1, OB);
	fx_close(&f);
	fx_open(&f, tm_nb(2, false, 3), NB_CFG(NOB ",\"type_vocab_size\":3"), 2, 1, 0, true);
	fx_vocab_is(&f, 0, 2, TT, 3, 64, HID);
	fx_close(&f);
	fx_refused(tm_nb(2, false, 2), NB_CFG(""), WT_ENOTFOUND, "bias", "missing");
	fx_refused(tm_nb(2, false, 3), NB_CFG(NOB), WT_ESHAPE, TT, "[2, 64]");
	fx_refused(tm_nb(2, false, 2), NB_RAW(NOB ",\"n_embd\":64,\"n_inner\":96,\"n_layer\":2"),
	           WT_ESHAPE, "[50257, 64]", "fix config.json");
	fx_refused(tm_nb(2, false, 2),
	           NB_RAW(NOB ",\"n_embd\":64,\"n_inner\":96,\"vocab_size\":100"), WT_ENOTFOUND,
	           "encoder.layers.2", "missing");
	fx_refused(tm_nb(2, false, 2),
	           NB_RAW(NOB ",\"n_inner\":96,\"n_layer\":2,\"vocab_size\":100"), WT_ESHAPE, "768",
	           "fix config.json");
}

/* What vLLM's NomicBertModelConfig asserts off, or bert_with_rope.py does not build here. */
static const struct {
	const char *extra, *key, *what;
} nb_refusals[] = {
    {",\"qkv_proj_bias\":false", "qkv_proj_bias", "equal"},
    {",\"mlp_fc2_bias\":false", "mlp_fc2_bias", "equal"},
    {",\"rotary_emb_scale_base\":512", "rotary_emb_scale_base", "remove"},
    {",\"rotary_emb_interleaved\":true", "rotary_emb_interleaved", "remove"},
    {",\"moe_every_n_layers\":2", "moe_every_n_layers", "remove"},
    {",\"prenorm\":true", "prenorm", "post-norm"},
    {",\"parallel_block\":true", "parallel_block", "post-norm"},
    {",\"use_rms_norm\":true", "use_rms_norm", "post-norm"},
    {",\"causal\":true", "causal", "bidirectional"},
};

static void test_nomic_bert_errors(void **state)
{
	(void)state;
	char cfg[1024];
	for (size_t i = 0; i < sizeof(nb_refusals) / sizeof(nb_refusals[0]); i++) {
		snprintf(cfg, sizeof(cfg), NB_CFG("%s"), nb_refusals[i].extra);
		fx_refused(tm_nb(2, true, 2), cfg, WT_EUNSUPPORTED, nb_refusals[i].key,
		           nb_refusals[i].what);
	}
	/* the inert forms: the switches false, no MoE, the scale base null */
	fx f;
	fx_open(&f, tm_nb(2, true, 2),
	        NB_CFG(",\"prenorm\":false,\"parallel_block\":false,\"use_rms_norm\":false,"
	               "\"causal\":false,\"rotary_emb_interleaved\":false,"
	               "\"rotary_emb_scale_base\":null,\"moe_every_n_layers\":0"),
	        2, 1, 0, true);
	fx_close(&f);
	fx_refused(tm_nb(2, true, 2), NB_RAW(",\"n_embd\":64,\"n_layer\":2,\"vocab_size\":100"),
	           WT_EUNSUPPORTED, "n_inner", "absent");
	fx_refused(tm_nb(2, true, 2),
	           NB_RAW(",\"n_embd\":64,\"n_inner\":null,\"n_layer\":2,\"vocab_size\":100"),
	           WT_EUNSUPPORTED, "n_inner", "give n_inner");
	fx_refused(tm_nb(2, true, 2),
	           NB_ARCH("NomicBertModel", ",\"activation_function\":\"gelu\"", NB_DIMS),
	           WT_EUNSUPPORTED, "activation_function \"gelu\"", "swiglu");
	fx_refused(tm_nb(2, true, 2), NB_ARCH("NomicBertModel", "", NB_DIMS), WT_EUNSUPPORTED,
	           "activation_function \"gelu_new\"", "swiglu");
	fx_refused(tm_nb(2, true, 2),
	           NB_ARCH("NomicBertModel", ",\"activation_function\":3", NB_DIMS), WT_ECORRUPT,
	           "activation_function", "not a string");
	fx_refused(tm_nb(2, true, 2), NB_CFG(",\"prenorm\":1"), WT_ECORRUPT, "prenorm",
	           "not a boolean");
	fx_refused(tm_nb(2, true, 2), NB_CFG(",\"type_vocab_size\":0"), WT_ECORRUPT,
	           "type_vocab_size", "");
	fx_refused(tm_nb(2, false, 2), NB_CFG(",\"qkv_proj_bias\":false,\"mlp_fc1_bias\":false"),
	           WT_EUNSUPPORTED, "mlp_fc2_bias true", "equal");
	fx_refused(tm_nb(2, true, 2), NB_CFG(NOB), WT_EUNSUPPORTED, "bias", "qkv_proj_bias");
	fx_refused(tm_nb(2, true, 2), NB_CFG(",\"num_key_value_heads\":2"), WT_EUNSUPPORTED,
	           "num_key_value_heads", "one key / value head");
	fx_refused(tm_nb(2, true, 2),
	           NB_RAW(",\"n_embd\":60,\"n_inner\":96,\"n_layer\":2,\"vocab_size\":100"),
	           WT_ECORRUPT, "n_head 8 does not divide n_embd 60", "asserts");
	fx_refused_tp(tm_nb(2, true, 2), NB_CFG(""), 16, WT_ELAYOUT, "tp_size 16",
	              "use tp_size 1, 2, 4 or 8");
	fx_refused(
	    tm_nb(2, true, 2),
	    NB_ARCH("NomicBertForPreTraining", ",\"activation_function\":\"swiglu\"", NB_DIMS),
	    WT_EUNSUPPORTED, "NomicBertForPreTraining", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nomic_bert_slices),   cmocka_unit_test(test_nomic_bert_quant),
	    cmocka_unit_test(test_nomic_bert_coverage), cmocka_unit_test(test_nomic_bert_defaults),
	    cmocka_unit_test(test_nomic_bert_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
