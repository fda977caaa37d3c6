/*
 * test_shardmap_gemma3n.c — Gemma 3n's language model (Gemma3nForCausalLM; docs/format.md
 * section 2.7, Gemma 3n) cut as vLLM's gemma3n.py loads it: hand slices at TP 2 and 4 of the
 * fused q/k/v rows, o_proj / down_proj / laurel.linear_right columns, gate_up rows,
 * laurel.linear_left / per_layer_model_projection / altup_(unembed_)projections rows (gathered
 * ColumnParallelLinears), both embeddings by vocabulary rows (each padded by its own), the
 * AltUp coefficients / router and the per-layer gate / projection whole (ReplicatedLinear), the
 * norms and correct_output_scale whole; a dropped lm_head.weight (always tied); int8 codes of
 * the Linears (the replicated ones included), the embeddings / norms BF16, fp8-channel; coverage
 * TP 1/2/4/8; Gemma3nTextConfig's defaults; every refusal. Seed fixed.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernels/kernels.h"
#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x63e3ull
#include "test_shardmap_fx.h"

/* hid 64, 8 heads / 2 kv heads of 16, I 128, V 1000, per-layer vocabulary 900, 4 layers, 4
 * AltUp streams, laurel 32, per-layer inputs 16 (L x P = 64) */
#define HID 64
#define H   8
#define KV  2
#define HD  16
#define I   128
#define V   1000
#define PV  900
#define NL  4
#define NA  4
#define LR  32
#define P   16

/* The config with laurel_rank lr, num_kv_shared_layers kvs, layer_types lt, then extra. */
#define G3N_CFG3(lr, kvs, lt, extra)                                                               \
	"{\"architectures\":[\"Gemma3nForCausalLM\"],\"model_type\":\"gemma3n_text\","             \
	"\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":16,"  \
	"\"intermediate_size\":[128,128,128,128],\"vocab_size\":1000,\"num_hidden_layers\":4,"     \
	"\"vocab_size_per_layer_input\":900,\"hidden_size_per_layer_input\":16,"                   \
	"\"altup_num_inputs\":4,\"laurel_rank\":" lr ",\"num_kv_shared_layers\":" kvs              \
	",\"layer_types\":" lt extra "}"
#define G3N_LT         "[\"sliding_attention\",\"full_attention\",\"sliding_attention\",\"full_attention\"]"
#define G3N_CFG(extra) G3N_CFG3("32", "2", G3N_LT, extra)
#define G3N_OK         G3N_CFG("")

#define L1   "model.layers.1."
#define EMB  "model.embed_tokens.weight"
#define PLE  "model.embed_tokens_per_layer.weight"
#define PLP  "model.per_layer_model_projection.weight"
#define AP1  "model.altup_projections.1.weight"
#define AU2  "model.altup_unembed_projections.2.weight"
#define QKV  L1 "self_attn.qkv_proj.weight"
#define OPJ  L1 "self_attn.o_proj.weight"
#define GU   L1 "mlp.gate_up_proj.weight"
#define DOWN L1 "mlp.down_proj.weight"
#define LL   L1 "laurel.linear_left.weight"
#define LRT  L1 "laurel.linear_right.weight"
#define PCF  L1 "altup.prediction_coefs.weight"
#define CCF  L1 "altup.correction_coefs.weight"
#define MRT  L1 "altup.modality_router.weight"
#define PIG  L1 "per_layer_input_gate.weight"
#define PPJ  L1 "per_layer_projection.weight"

/* Gemma 3n's text model at the sizes above, laurel_rank lr (lm_head.weight too when lm). */
static tm_model *tm_g3n_r(bool lm, int64_t lr)
{
	static const char *const norms[] = {
	    "input_layernorm.weight",           "post_attention_layernorm.weight",
	    "pre_feedforward_layernorm.weight", "post_feedforward_layernorm.weight",
	    "post_per_layer_input_norm.weight", "laurel.post_laurel_norm.weight",
	    "altup.router_norm.weight",         "altup.correct_output_scale"};
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, V, HID, 0);
	tm_add2(m, PLE, PV, NL * P);
	tm_add2(m, PLP, NL * P, HID);
	tm_add2(m, "model.per_layer_projection_norm.weight", P, 0);
	char b[200];
	for (int j = 0; j < NA - 1; j++) {
		snprintf(b, sizeof(b), "model.altup_projections.%d.weight", j);
		tm_add2(m, b, HID, HID);
		snprintf(b, sizeof(b), "model.altup_unembed_projections.%d.weight", j);
		tm_add2(m, b, HID, HID);
	}
	for (int i = 0; i < NL; i++) {
		tm_attn(m, i, H, KV, HD, HID, 0, 1);
		tm_mlp(m, i, "mlp.", I, HID);
		for (size_t k = 2; k < sizeof(norms) / sizeof(norms[0]); k++) {
			tm_fmt(b, sizeof(b), TM_L, i, norms[k]);
			tm_add2(m, b, HID, 0);
		}
		const struct {
			const char *leaf;
			int64_t n, k;
		} lin[] = {{"laurel.linear_left.weight", lr, HID},
		           {"laurel.linear_right.weight", HID, lr},
		           {"altup.correction_coefs.weight", NA, NA},
		           {"altup.prediction_coefs.weight", NA * NA, NA},
		           {"altup.modality_router.weight", NA, HID},
		           {"per_layer_input_gate.weight", P, HID},
		           {"per_layer_projection.weight", HID, P}};
		for (size_t k = 0; k < sizeof(lin) / sizeof(lin[0]); k++) {
			tm_fmt(b, sizeof(b), TM_L, i, lin[k].leaf);
			tm_add2(m, b, lin[k].n, lin[k].k);
		}
	}
	if (lm)
		tm_add2(m, "lm_head.weight", V, HID);
	return m;
}

static tm_model *tm_g3n(bool lm)
{
	return tm_g3n_r(lm, LR);
}

/* Rank r of T: layer 1's and the model's tensors by hand. */
static void hand_slices(const fx *f, uint32_t T, uint32_t r)
{
	int64_t hl = H / T, kvl = KV >= T ? KV / T : 1, kvs = KV >= T ? r : r / (T / KV);
	rows_at(f, r, QKV, 0, L1 "self_attn.q_proj.weight", r * hl * HD, hl * HD);
	rows_at(f, r, QKV, hl * HD, L1 "self_attn.k_proj.weight", kvs * kvl * HD, kvl * HD);
	rows_at(f, r, QKV, (hl + kvl) * HD, L1 "self_attn.v_proj.weight", kvs * kvl * HD, kvl * HD);
	shp(f, r, QKV, 2, (hl + 2 * kvl) * HD, HID, 0);
	cols_of(f, r, T, OPJ, OPJ, HID, H * HD);
	cols_of(f, r, T, DOWN, DOWN, HID, I);
	cols_of(f, r, T, LRT, LRT, HID, LR);
	rows_at(f, r, GU, 0, L1 "mlp.gate_proj.weight", r * I / T, I / T);
	rows_at(f, r, GU, I / T, L1 "mlp.up_proj.weight", r * I / T, I / T);
	rows_at(f, r, LL, 0, LL, r * LR / T, LR / T);
	shp(f, r, LL, 2, LR / T, HID, 0);
	rows_at(f, r, PLP, 0, PLP, r * NL * P / T, NL * P / T);
	rows_at(f, r, AP1, 0, AP1, r * HID / T, HID / T);
	rows_at(f, r, AU2, 0, AU2, r * HID / T, HID / T);
	shp(f, r, AU2, 2, HID / T, HID, 0);
	static const char *const whole[] = {PCF,
	                                    CCF,
	                                    MRT,
	                                    PIG,
	                                    PPJ,
	                                    L1 "altup.correct_output_scale",
	                                    L1 "altup.router_norm.weight",
	                                    L1 "laurel.post_laurel_norm.weight",
	                                    L1 "self_attn.q_norm.weight",
	                                    "model.per_layer_projection_norm.weight",
	                                    "model.norm.weight"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		repl(f, r, whole[k]);
	/* vocabulary rows: 1000 and 900 padded to lcm(64, T) multiples, each its own */
	int64_t vl = (V + 63) / 64 * 64 / T, pvl = (PV + 63) / 64 * 64 / T;
	shp(f, r, EMB, 2, vl, HID, 0);
	shp(f, r, PLE, 2, pvl, NL * P, 0);
	int64_t real = PV - r * pvl < pvl ? PV - r * pvl : pvl;
	rows_at(f, r, PLE, 0, PLE, r * pvl, real);
}

static void test_g3n_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, tm_g3n(false), G3N_OK, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			hand_slices(&f, tps[i], r);
		/* per layer 8 norms, qkv, o, q / k norms, gate_up, down, 7 Linears; 11 globals */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), NL * 21 + 11);
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* An lm_head.weight is dropped and listed (tied whatever it holds); the ranks unchanged. */
static void test_g3n_tied(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, tm_g3n(true), G3N_OK, 2, 1, 0, true);
	fx_open(&b, tm_g3n(false), G3N_OK, 2, 1, 0, true);
	assert_true(fx_skipped(&a, "lm_head.weight"));
	for (uint32_t r = 0; r < 2; r++) {
		assert_int_equal(tm_ix(a.p, r, "lm_head.weight"), -1);
		fx_same_rank(&a, &b, r, NULL);
	}
	fx_close(&a);
	fx_close(&b);
}

/* int8-channel: every Linear quantized (vLLM hands each the quant_config, the replicated ones
 * too: rank 1's codes of the whole prediction_coefs row by row), the embeddings and norms BF16. */
static void test_g3n_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_g3n(false), G3N_OK, &l, true);
	static const char *const keep[] = {EMB,
	                                   PLE,
	                                   "model.norm.weight",
	                                   "model.per_layer_projection_norm.weight",
	                                   L1 "altup.correct_output_scale",
	                                   L1 "altup.router_norm.weight",
	                                   L1 "self_attn.k_norm.weight",
	                                   L1 "post_per_layer_input_norm.weight"};
	static const char *const q8[] = {QKV, OPJ, GU,  DOWN, LL,  LRT, PLP,
	                                 AP1, AU2, PCF, CCF,  MRT, PIG, PPJ};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	size_t rowb;
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, PCF);
	const float *sc = (const float *)out_bytes(&f, 1, PCF "_scale");
	const uint16_t *src = (const uint16_t *)src_rows(&f, PCF, 0, &rowb);
	for (int64_t row = 0; row < NA * NA; row++)
		int8_row_is(q + row * NA, sc[row], src + row * NA, NA);
	q = (const int8_t *)out_bytes(&f, 1, LL);
	sc = (const float *)out_bytes(&f, 1, LL "_scale");
	src = (const uint16_t *)src_rows(&f, LL, LR / 2, &rowb);
	for (int64_t row = 0; row < LR / 2; row++) /* rank 1's rows 16..31 */
		int8_row_is(q + row * HID, sc[row], src + row * HID, HID);
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_g3n(false), G3N_OK, &l, true);
	assert_int_equal(info(&f, 3, MRT)->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, PLP)->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, PLE)->dtype, WT_BF16);
	shp(&f, 3, MRT, 2, NA, HID, 0);
	fx_close(&f);
}

static void test_g3n_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_g3n(false), G3N_OK, KV, lays, 4);
}

/* Gemma3nTextConfig's defaults (transformers 4.57.1) for what config.json leaves out. */
static void test_g3n_config(void **state)
{
	(void)state;
	static const char cfg[] =
	    "{\"architectures\": [\"Gemma3nForCausalLM\"], \"model_type\": \"gemma3n_text\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cfg, strlen(cfg), &c, &err), WT_OK);
	assert_int_equal(c.vocab_size, 262400);
	assert_int_equal(c.hidden_size, 2048);
	assert_int_equal(c.intermediate_size, 16384);
	assert_int_equal(c.num_hidden_layers, 35);
	assert_int_equal(c.num_attention_heads, 8);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 256);
	assert_int_equal(c.g3n_altup, 4);
	assert_int_equal(c.g3n_active, 0);
	assert_int_equal(c.g3n_laurel, 64);
	assert_int_equal(c.g3n_ple, 256);
	assert_int_equal(c.g3n_ple_vocab, 262144);
	assert_int_equal(c.g3n_kv_shared, 15);
	assert_false(c.attention_bias);
	assert_false(c.tie_given); /* tied by the family's default, as transformers reads it */
	assert_true(shardmap_tied(&c));
	assert_int_equal(c.n_layer_types, 35);
	for (size_t i = 0; i < 35; i++) /* full_attention every fifth layer */
		assert_int_equal(c.layer_types[i],
		                 (i + 1) % 5 == 0 ? CKPT_LAYER_FULL_ATTN : CKPT_LAYER_SLIDING_ATTN);
	ckpt_config_clear(&c);
	/* the released E2B's shapes: a per-layer list, 30 layers, 10 KV-shared */
	static const char e2b[] =
	    "{\"architectures\": [\"Gemma3nForCausalLM\"], \"model_type\": \"gemma3n_text\", "
	    "\"num_hidden_layers\": 3, \"intermediate_size\": [8192, 8192, 8192], "
	    "\"num_kv_shared_layers\": 1, \"altup_active_idx\": 2, \"laurel_rank\": 8}";
	assert_int_equal(ckpt_config_parse(e2b, strlen(e2b), &c, &err), WT_OK);
	assert_int_equal(c.intermediate_size, 8192);
	assert_int_equal(c.g3n_kv_shared, 1);
	assert_int_equal(c.g3n_active, 2);
	assert_int_equal(c.g3n_laurel, 8);
	ckpt_config_clear(&c);
	/* other families read none of it */
	static const char llama[] = "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": "
	                            "\"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
	                            "\"num_hidden_layers\": 2, \"vocab_size\": 100, "
	                            "\"intermediate_size\": 128, \"laurel_rank\": 8}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_OK);
	assert_int_equal(c.g3n_laurel, -1);
	assert_int_equal(c.g3n_altup, -1);
	ckpt_config_clear(&c);
}

/* config.json text (a G3N_CFG) refused at parse time with code, naming a and b. */
static void cfg_refused(const char *cfg, int code, const char *a, const char *b)
{
	ckpt_config c;
	wt_errbuf err = {0};
	int rv = ckpt_config_parse(cfg, strlen(cfg), &c, &err);
	printf("refused (%s): %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, code);
	if (!strstr(err.msg, a) || !strstr(err.msg, b))
		fail_msg("'%s' lacks '%s' or '%s'", err.msg, a, b);
}

static void test_g3n_errors(void **state)
{
	(void)state;
	cfg_refused(G3N_CFG(",\"hidden_activation\":\"silu\""), WT_EUNSUPPORTED,
	            "hidden_activation", "gelu_pytorch_tanh");
	cfg_refused(G3N_CFG(",\"altup_correct_scale\":false"), WT_EUNSUPPORTED,
	            "altup_correct_scale", "asserts");
	cfg_refused(G3N_CFG(",\"tie_word_embeddings\":false"), WT_EUNSUPPORTED,
	            "tie_word_embeddings", "embed_tokens");
	cfg_refused("{\"architectures\":[\"Gemma3nForCausalLM\"],\"model_type\":\"gemma3n_text\","
	            "\"num_hidden_layers\":2,\"intermediate_size\":[128,256]}",
	            WT_EUNSUPPORTED, "intermediate_size[1]", "MatFormer");
	cfg_refused("{\"architectures\":[\"Gemma3nForCausalLM\"],\"model_type\":\"gemma3n_text\","
	            "\"num_hidden_layers\":2,\"intermediate_size\":[128]}",
	            WT_ECORRUPT, "intermediate_size", "one per layer");
	cfg_refused(G3N_CFG(",\"activation_sparsity_pattern\":[0.95]"), WT_ECORRUPT,
	            "activation_sparsity_pattern", "one number per layer");
	cfg_refused(G3N_CFG(",\"activation_sparsity_pattern\":[0.95,1.5,0,0]"), WT_ECORRUPT,
	            "activation_sparsity_pattern[1]", "[0, 1)");
	cfg_refused(G3N_CFG(",\"altup_active_idx\":4"), WT_ECORRUPT, "altup_active_idx",
	            "altup_num_inputs");
	cfg_refused(G3N_CFG3("32", "4", G3N_LT, ""), WT_ECORRUPT, "num_kv_shared_layers",
	            "num_hidden_layers");
	/* vLLM's KV-sharing source (one / two layers before the first shared one) disagrees */
	fx_refused(tm_g3n(false), G3N_CFG3("32", "1", G3N_LT, ""), WT_EUNSUPPORTED, "layer 3",
	           "num_kv_shared_layers");
	fx_refused(tm_g3n(false), G3N_CFG3("32", "2", "[]", ""), WT_ECORRUPT, "layer_types",
	           "num_hidden_layers");
	/* layouts: tp must divide the heads, I, laurel_rank, L x P and hid */
	fx_refused_tp(tm_g3n_r(false, 12), G3N_CFG3("12", "2", G3N_LT, ""), 8, WT_ELAYOUT,
	              "laurel.linear_left", "laurel_rank 12");
	fx_refused_tp(tm_g3n(false), G3N_OK, 16, WT_ELAYOUT, "tp_size 16", "");
	/* tensors: an AltUp projection past altup_num_inputs - 1, a missing one, a shape */
	tm_model *m = tm_g3n(false);
	tm_add2(m, "model.altup_projections.3.weight", HID, HID);
	fx_refused(m, G3N_OK, WT_ESHAPE, "altup_projections.3", "altup_num_inputs - 1");
	m = tm_g3n(false);
	tm_remove(m, L1 "per_layer_input_gate.weight");
	fx_refused(m, G3N_OK, WT_ENOTFOUND, "per_layer_input_gate", "");
	m = tm_g3n(false);
	tm_remove(m, PCF);
	tm_add2(m, PCF, NA, NA);
	fx_refused(m, G3N_OK, WT_ESHAPE, "prediction_coefs", "");
	m = tm_g3n(false);
	tm_add2(m, L1 "self_attn.q_proj.bias", H * HD, 0);
	fx_refused(m, G3N_OK, WT_EUNSUPPORTED, "q_proj.bias", "attention_bias");
	/* Gemma3nForConditionalGeneration: its towers are not cut, said as such (not as an
	 * unknown architecture with the supported list) */
	fx_refused(
	    tm_g3n(false),
	    "{\"architectures\":[\"Gemma3nForConditionalGeneration\"],\"model_type\":"
	    "\"gemma3n\",\"text_config\":{\"model_type\":\"gemma3n_text\",\"hidden_size\":64,"
	    "\"num_attention_heads\":8,\"num_hidden_layers\":4,\"vocab_size\":1000}}",
	    WT_EUNSUPPORTED, "MobileNetV5 vision tower",
	    "serve the language model as Gemma3nForCausalLM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_g3n_slices), cmocka_unit_test(test_g3n_tied),
	    cmocka_unit_test(test_g3n_quant),  cmocka_unit_test(test_g3n_coverage),
	    cmocka_unit_test(test_g3n_config), cmocka_unit_test(test_g3n_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
