/*
 * test_shardmap_emb.c — the decoder embedding models saved as base models (docs/format.md
 * section 2.7, decoder embedding models): LlamaModel, MistralModel, Qwen2Model, Gemma2Model and
 * Gemma3TextModel, cut as vLLM's as_embedding_model (adapters.py) loads them: the decoder named
 * without model. (embed_tokens, layers.{i}.*, norm) cut as LlamaForCausalLM's /
 * Qwen2ForCausalLM's / Gemma2ForCausalLM's / Gemma3ForCausalLM's, byte for byte under the base
 * model's names (hand slices of the fused q/k/v rows, o_proj / down_proj columns, the
 * vocabulary rows at TP 2 and 4), no lm_head (a stray one skipped), the model.-prefixed layout
 * read as the same runtime names and bytes (vLLM's WeightsMapper model. -> '') but under
 * Gemma3TextModel (vLLM's Gemma3Model takes names as they are), int8 / fp8 of the Linears
 * alone, coverage at TP 1, 2, 4, 8, the config classes' defaults, the refusals. Seed fixed.
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

#define SEED 0xe3bull
#include "test_shardmap_fx.h"

#define HID 256
#define I   512

#define KEYS(kv, v, rest)                                                                          \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":" kv                \
	",\"intermediate_size\":512,\"vocab_size\":" v ",\"num_hidden_layers\":2" rest
#define CFG(arch, mt, keys) "{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\"," keys "}"
#define TIED                ",\"tie_word_embeddings\":true"

/* One decoder of each table: the base model's config and its causal LM's (tied, so neither
 * has an lm_head), kv heads, head_dim, vocabulary, q/k/v biases, q / k norms, Gemma's norms
 * around the MLP. */
typedef struct kind {
	const char *emb, *lm;
	int64_t KV, d, V;
	int bias, qknorm, ffnorm;
} kind;

static const kind kinds[] = {
    {CFG("LlamaModel", "llama", KEYS("2", "1000", ",\"head_dim\":32")),
     CFG("LlamaForCausalLM", "llama", KEYS("2", "1000", ",\"head_dim\":32" TIED)), 2, 32, 1000, 0,
     0, 0},
    {CFG("Qwen2Model", "qwen2", KEYS("2", "1024", "")),
     CFG("Qwen2ForCausalLM", "qwen2", KEYS("2", "1024", TIED)), 2, 32, 1024, 1, 0, 0},
    {CFG("Gemma2Model", "gemma2", KEYS("4", "1024", ",\"head_dim\":64")),
     CFG("Gemma2ForCausalLM", "gemma2", KEYS("4", "1024", ",\"head_dim\":64")), 4, 64, 1024, 0, 0,
     1},
    {CFG("Gemma3TextModel", "gemma3_text", KEYS("4", "1024", ",\"head_dim\":64")),
     CFG("Gemma3ForCausalLM", "gemma3_text", KEYS("4", "1024", ",\"head_dim\":64")), 4, 64, 1024, 0,
     1, 1},
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Every name of m without its model. prefix (the values stay: they follow the order). */
static void strip_model(tm_model *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->name[i], "model.", 6) == 0)
			memmove(m->name[i], m->name[i] + 6, strlen(m->name[i] + 6) + 1);
}

/* Kind k's decoder under model. when prefixed, else the base model's names; lm_head last when
 * lm (so the decoder's values are the same with and without it). */
static tm_model *dec_model(const kind *k, bool prefixed, bool lm)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, k->V, HID, 0);
	for (int i = 0; i < 2; i++) {
		char b[200];
		tm_attn(m, i, 8, k->KV, k->d, HID, k->bias, k->qknorm);
		tm_mlp(m, i, "mlp.", I, HID);
		for (int n = 0; k->ffnorm && n < 2; n++) {
			tm_fmt(b, sizeof(b), TM_L, i,
			       n ? "post_feedforward_layernorm.weight"
			         : "pre_feedforward_layernorm.weight");
			tm_add2(m, b, HID, 0);
		}
	}
	if (!prefixed)
		strip_model(m);
	if (lm)
		tm_add2(m, "lm_head.weight", k->V, HID);
	return m;
}

#define L1 "layers.1."

/* Rank r of T: layer 1's q/k/v rows by hand, o_proj / down_proj columns, up rows, the
 * vocabulary rows of embed_tokens, norms whole. */
static void hand_slices(const fx *f, const kind *k, uint32_t T, uint32_t r)
{
	int64_t hl = 8 / T, kvl = k->KV >= T ? k->KV / T : 1;
	int64_t kvs = k->KV >= T ? r : r / (T / k->KV);
	const char *qkv = L1 "self_attn.qkv_proj.weight";
	rows_at(f, r, qkv, 0, L1 "self_attn.q_proj.weight", r * hl * k->d, hl * k->d);
	rows_at(f, r, qkv, hl * k->d, L1 "self_attn.k_proj.weight", kvs * kvl * k->d, kvl * k->d);
	rows_at(f, r, qkv, (hl + kvl) * k->d, L1 "self_attn.v_proj.weight", kvs * kvl * k->d,
	        kvl * k->d);
	shp(f, r, qkv, 2, (hl + 2 * kvl) * k->d, HID, 0);
	if (k->bias)
		rows_at(f, r, L1 "self_attn.qkv_proj.bias", hl * k->d, L1 "self_attn.k_proj.bias",
		        kvs * kvl * k->d, kvl * k->d);
	cols_of(f, r, T, L1 "self_attn.o_proj.weight", L1 "self_attn.o_proj.weight", HID, 8 * k->d);
	cols_of(f, r, T, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, I);
	rows_at(f, r, L1 "mlp.gate_up_proj.weight", I / T, L1 "mlp.up_proj.weight", r * I / T,
	        I / T);
	int64_t vl = 1024 / T, n = k->V - r * vl < vl ? k->V - r * vl : vl;
	shp(f, r, "embed_tokens.weight", 2, vl, HID, 0);
	rows_at(f, r, "embed_tokens.weight", 0, "embed_tokens.weight", r * vl, n);
	repl(f, r, "norm.weight");
	repl(f, r, L1 "input_layernorm.weight");
	if (k->qknorm)
		repl(f, r, L1 "self_attn.q_norm.weight");
	if (k->ffnorm)
		repl(f, r, L1 "pre_feedforward_layernorm.weight");
}

static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t k = 0; k < N_KINDS; k++)
		for (size_t i = 0; i < 2; i++) {
			fx e, b;
			fx_open(&e, dec_model(&kinds[k], false, false), kinds[k].emb, tps[i], 1, 0,
			        true);
			fx_open(&b, dec_model(&kinds[k], true, false), kinds[k].lm, tps[i], 1, 0,
			        true);
			for (uint32_t r = 0; r < tps[i]; r++) {
				hand_slices(&e, &kinds[k], tps[i], r);
				/* the causal LM's rank r minus model., byte for byte */
				fx_same_rank(&b, &e, r, "model.");
				assert_int_equal(shardmap_rank_n_tensors(b.p, r),
				                 shardmap_rank_n_tensors(e.p, r));
			}
			assert_int_equal(shardmap_n_skipped(e.p), 0);
			fx_close(&e);
			fx_close(&b);
		}
}

/* The model.-prefixed layout (vLLM's WeightsMapper model. -> '') gives the same runtime names
 * and bytes; a stray lm_head.weight (vLLM drops every lm_head.* name) is skipped and listed in
 * either layout; MistralModel is Llama's table. */
static void test_layouts(void **state)
{
	(void)state;
	for (size_t k = 0; k < 3; k++) { /* not Gemma3TextModel (test_errors) */
		fx a, b, c;
		fx_open(&a, dec_model(&kinds[k], false, false), kinds[k].emb, 2, 1, 0, true);
		fx_open(&b, dec_model(&kinds[k], true, true), kinds[k].emb, 2, 1, 0, true);
		fx_open(&c, dec_model(&kinds[k], false, true), kinds[k].emb, 2, 1, 0, true);
		for (uint32_t r = 0; r < 2; r++) {
			fx_same_rank(&a, &b, r, NULL);
			fx_same_rank(&a, &c, r, NULL);
		}
		assert_int_equal(shardmap_n_skipped(b.p), 1);
		assert_true(fx_skipped(&b, "lm_head.weight") && fx_skipped(&c, "lm_head.weight"));
		assert_int_equal(tm_ix(b.p, 0, "model.norm.weight"), -1);
		fx_close(&a);
		fx_close(&b);
		fx_close(&c);
	}
	fx a, m;
	fx_open(&a, dec_model(&kinds[0], false, false), kinds[0].emb, 2, 1, 0, true);
	fx_open(&m, dec_model(&kinds[0], true, false),
	        CFG("MistralModel", "mistral", KEYS("2", "1000", ",\"head_dim\":32")), 2, 1, 0,
	        true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &m, r, NULL);
	static const char *const fam[][2] = {{"LlamaModel", "llama_emb"},
	                                     {"MistralModel", "mistral_emb"},
	                                     {"Qwen2Model", "qwen2_emb"},
	                                     {"Gemma2Model", "gemma2_emb"},
	                                     {"Gemma3TextModel", "gemma3_text_emb"}};
	for (size_t k = 0; k < 5; k++)
		assert_string_equal(shardmap_family_find(fam[k][0], NULL)->name, fam[k][1]);
	/* model_type alone stays the causal LM */
	assert_string_equal(shardmap_family_find(NULL, "qwen2")->name, "qwen2");
	fx_close(&a);
	fx_close(&m);
}

/* int8-channel TP 2: the Linears quantized (q/k/v, o, gate/up, down: codes of o_proj's rows
 * checked), embed_tokens, norms and biases kept BF16. fp8-channel TP 4: the same split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, dec_model(&kinds[3], false, false), kinds[3].emb, &l, true);
	static const char *const keep[] = {"embed_tokens.weight", "norm.weight",
	                                   L1 "self_attn.q_norm.weight",
	                                   L1 "post_feedforward_layernorm.weight"};
	static const char *const q8[] = {L1 "self_attn.qkv_proj.weight",
	                                 L1 "self_attn.o_proj.weight", L1 "mlp.gate_up_proj.weight",
	                                 L1 "mlp.down_proj.weight"};
	for (uint32_t r = 0; r < 2; r++) {
		fx_quant_split(&f, r, WT_BF16, keep, 4, q8, 4);
		const int8_t *q = (const int8_t *)out_bytes(&f, r, L1 "self_attn.o_proj.weight");
		const float *sc =
		    (const float *)out_bytes(&f, r, L1 "self_attn.o_proj.weight_scale");
		size_t rb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, L1 "self_attn.o_proj.weight", 0, &rb);
		int64_t K = 8 * 64, kl = K / 2;
		uint16_t row[256];
		for (int64_t a = 0; a < 4; a++) {
			memcpy(row, x + a * K + r * kl, (size_t)kl * 2);
			int8_row_is(q + a * kl, sc[a], row, kl);
		}
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, dec_model(&kinds[1], true, false), kinds[1].emb, &l, true);
	assert_int_equal(info(&f, 3, L1 "mlp.gate_up_proj.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, L1 "self_attn.qkv_proj.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "embed_tokens.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 3, "norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 3, L1 "self_attn.qkv_proj.bias")->dtype, WT_BF16);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	for (size_t k = 0; k < N_KINDS; k++)
		coverage(dec_model(&kinds[k], false, true), kinds[k].emb, kinds[k].KV, lays, 4);
}

/* A base model's config.json is read as its causal LM's (the same model_type: the same keys,
 * the same class defaults), e.g. LlamaConfig's num_key_value_heads = num_attention_heads; no
 * LM head either way, whatever tie_word_embeddings says. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const pairs[][2] = {
	    {CFG("Gemma2Model", "gemma2", KEYS("4", "1024", "")),
	     CFG("Gemma2ForCausalLM", "gemma2", KEYS("4", "1024", ""))},
	    {CFG("Qwen2Model", "qwen2", KEYS("2", "1024", "")),
	     CFG("Qwen2ForCausalLM", "qwen2", KEYS("2", "1024", ""))},
	    {CFG("Gemma3TextModel", "gemma3_text", "\"num_hidden_layers\":2"),
	     CFG("Gemma3ForCausalLM", "gemma3_text", "\"num_hidden_layers\":2")},
	};
	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		ckpt_config a, b;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(pairs[k][0], strlen(pairs[k][0]), &a, &err),
		                 WT_OK);
		assert_int_equal(ckpt_config_parse(pairs[k][1], strlen(pairs[k][1]), &b, &err),
		                 WT_OK);
		assert_int_equal(a.head_dim, b.head_dim);
		assert_int_equal(a.num_key_value_heads, b.num_key_value_heads);
		assert_int_equal(a.hidden_size, b.hidden_size);
		assert_int_equal(a.intermediate_size, b.intermediate_size);
		assert_int_equal(a.vocab_size, b.vocab_size);
		ckpt_config_clear(&a);
		ckpt_config_clear(&b);
	}
	kind k = kinds[0];
	k.KV = 8;
	fx f;
	fx_open(&f, dec_model(&k, false, false),
	        CFG("LlamaModel", "llama",
	            "\"hidden_size\":256,\"num_attention_heads\":8,\"intermediate_size\":512,"
	            "\"vocab_size\":1000,\"num_hidden_layers\":2,\"tie_word_embeddings\":false"),
	        4, 1, 0, true);
	shp(&f, 3, L1 "self_attn.qkv_proj.weight", 2, (2 + 2 * 2) * 32, HID, 0);
	assert_int_equal(tm_ix(f.p, 0, "lm_head.weight"), -1);
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* Gemma3TextModel is vLLM's Gemma3Model itself: model.* names are unknown there */
	fx_refused(dec_model(&kinds[3], true, false), kinds[3].emb, WT_EUNSUPPORTED,
	           "unknown tensor", "gemma3_text_emb");
	/* both layouts at once */
	tm_model *m = dec_model(&kinds[1], false, false);
	snprintf(m->name[tm_find(m, "norm.weight")], sizeof(m->name[0]), "model.norm.weight");
	fx_refused(m, kinds[1].emb, WT_EUNSUPPORTED, "mixes two name layouts", "model.");
	/* q / k norms in LlamaModel, Gemma's MLP norms in Qwen2Model, a head, a tensor missing */
	m = dec_model(&kinds[0], false, false);
	tm_add2(m, "layers.0.self_attn.q_norm.weight", 32, 0);
	fx_refused(m, kinds[0].emb, WT_EUNSUPPORTED, "q_norm", "unknown tensor");
	m = dec_model(&kinds[1], false, false);
	tm_add2(m, "layers.0.pre_feedforward_layernorm.weight", HID, 0);
	fx_refused(m, kinds[1].emb, WT_EUNSUPPORTED, "pre_feedforward_layernorm", "unknown tensor");
	m = dec_model(&kinds[1], false, false);
	tm_add2(m, "score.weight", 1, HID);
	fx_refused(m, kinds[1].emb, WT_EUNSUPPORTED, "score.weight", "unknown tensor");
	m = dec_model(&kinds[2], false, false);
	tm_remove(m, "layers.1.post_feedforward_layernorm.weight");
	fx_refused(m, kinds[2].emb, WT_ENOTFOUND, "layers.1.post_feedforward_layernorm.weight", "");
	/* shapes against config.json, heads against the layout */
	fx_refused(dec_model(&kinds[0], false, false),
	           CFG("LlamaModel", "llama", KEYS("2", "1000", ",\"head_dim\":16")), WT_ESHAPE,
	           "disagrees with config.json", "implies");
	fx_refused_tp(dec_model(&kinds[0], false, false), kinds[0].emb, 16, WT_ELAYOUT,
	              "tp_size 16", "num_attention_heads 8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices),   cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_quant),    cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
