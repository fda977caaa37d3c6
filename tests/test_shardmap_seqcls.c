/*
 * test_shardmap_seqcls.c — the decoder sequence classifiers (docs/format.md section 2.7,
 * decoder sequence classifiers): LlamaForSequenceClassification, MistralForSequenceClassification,
 * Qwen2ForSequenceClassification and Qwen3ForSequenceClassification, cut as vLLM's
 * as_seq_cls_model (adapters.py) loads them: the causal LM's decoder under model. cut as
 * LlamaForCausalLM's / Qwen2ForCausalLM's / Qwen3ForCausalLM's, byte for byte (hand slices of
 * the fused q/k/v rows, o_proj / down_proj columns at TP 2 and 4), no lm_head (a stray one
 * skipped), score.weight [num_labels, hid] whole on every rank and quantized as vLLM's
 * ReplicatedLinear built with the quantization config (int8 codes, fp8), coverage at TP 1, 2,
 * 4, 8, num_labels from id2label / num_labels / 2, the refusals. Seed fixed.
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

#define SEED 0x5ec1ull
#include "test_shardmap_fx.h"

#define HID 256
#define I   512

#define KEYS(kv, v, rest)                                                                          \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":" kv                \
	",\"intermediate_size\":512,\"vocab_size\":" v ",\"num_hidden_layers\":2" rest
#define CFG(arch, mt, keys, rest)                                                                  \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\"," keys rest "}"
#define LABEL1 ",\"id2label\":{\"0\":\"LABEL_0\"}"

/* One decoder of each table: its classifier's config and its causal LM's (the llama / qwen2 /
 * qwen3 test models of test_shardmap_util.h), the model's kv heads, head_dim, vocabulary, q/k/v
 * biases, q / k norms and whether the causal LM has an lm_head. */
typedef struct kind {
	const char *cls, *lm;
	int64_t KV, d, V;
	int bias, qknorm, lm_head;
} kind;

static const kind kinds[] = {
    {CFG("LlamaForSequenceClassification", "llama", KEYS("2", "1000", ",\"head_dim\":32"), LABEL1),
     tm_llama_cfg, 2, 32, 1000, 0, 0, 1},
    {CFG("Qwen2ForSequenceClassification", "qwen2", KEYS("2", "1024", ""), LABEL1), tm_qwen2_cfg, 2,
     32, 1024, 1, 0, 0},
    {CFG("Qwen3ForSequenceClassification", "qwen3", KEYS("4", "1024", ",\"head_dim\":64"), LABEL1),
     tm_qwen3_cfg, 4, 64, 1024, 0, 1, 1},
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Kind k's decoder (lm_head when lm), then score.weight [labels, hid] when labels > 0. */
static tm_model *dec_model(const kind *k, int labels, bool lm)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, k->V, HID, 0);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, k->KV, k->d, HID, k->bias, k->qknorm);
		tm_mlp(m, i, "mlp.", I, HID);
	}
	if (labels > 0)
		tm_add2(m, "score.weight", labels, HID);
	if (lm) /* last, so the decoder's values are the same with and without it */
		tm_add2(m, "lm_head.weight", k->V, HID);
	return m;
}

#define L1 "model.layers.1."

/* Rank r of T: layer 1's q/k/v rows by hand, o_proj / down_proj columns, score whole. */
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
	cols_of(f, r, T, L1 "self_attn.o_proj.weight", L1 "self_attn.o_proj.weight", HID, 8 * k->d);
	cols_of(f, r, T, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, I);
	rows_at(f, r, L1 "mlp.gate_up_proj.weight", I / T, L1 "mlp.up_proj.weight", r * I / T,
	        I / T);
	repl(f, r, "score.weight");
	repl(f, r, "model.norm.weight");
	if (k->qknorm)
		repl(f, r, L1 "self_attn.q_norm.weight");
	assert_int_equal(info(f, r, "score.weight")->dtype, WT_BF16);
}

/* Rank r of the classifier a holds the causal LM b's rank r byte for byte, lm_head aside, and
 * score.weight besides. */
static void same_as_lm(const fx *a, const fx *b, uint32_t r)
{
	size_t nb = shardmap_rank_n_tensors(b->p, r), seen = 0;
	for (size_t i = 0; i < nb; i++) {
		const sm_out_info *u = shardmap_rank_tensor(b->p, r, i);
		if (strcmp(u->name, "lm_head.weight") == 0)
			continue;
		seen++;
		const sm_out_info *t = info(a, r, u->name);
		assert_int_equal(t->nbytes, u->nbytes);
		assert_int_equal(t->dtype, u->dtype);
		if (memcmp(out_bytes(a, r, u->name), b->pr->b[r][i], u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from the causal LM's", r, u->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), seen + 1);
}

static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t k = 0; k < N_KINDS; k++)
		for (size_t i = 0; i < 2; i++) {
			fx c, b;
			fx_open(&c, dec_model(&kinds[k], 1, false), kinds[k].cls, tps[i], 1, 0,
			        true);
			fx_open(&b, dec_model(&kinds[k], 0, kinds[k].lm_head), kinds[k].lm, tps[i],
			        1, 0, true);
			for (uint32_t r = 0; r < tps[i]; r++) {
				hand_slices(&c, &kinds[k], tps[i], r);
				same_as_lm(&c, &b, r);
			}
			assert_int_equal(shardmap_n_skipped(c.p), 0);
			fx_close(&c);
			fx_close(&b);
		}
}

/* A stray lm_head.weight (vLLM drops every lm_head.* name): skipped and listed, the ranks
 * unchanged; MistralForSequenceClassification is Llama's table. */
static void test_layouts(void **state)
{
	(void)state;
	fx a, b, m;
	fx_open(&a, dec_model(&kinds[0], 1, false), kinds[0].cls, 2, 1, 0, true);
	fx_open(&b, dec_model(&kinds[0], 1, true), kinds[0].cls, 2, 1, 0, true);
	fx_open(&m, dec_model(&kinds[0], 1, true),
	        CFG("MistralForSequenceClassification", "mistral",
	            KEYS("2", "1000", ",\"head_dim\":32"), LABEL1),
	        2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_same_rank(&a, &b, r, NULL);
		fx_same_rank(&a, &m, r, NULL);
	}
	assert_int_equal(shardmap_n_skipped(b.p), 1);
	assert_true(fx_skipped(&b, "lm_head.weight") && fx_skipped(&m, "lm_head.weight"));
	assert_string_equal(shardmap_family_find("MistralForSequenceClassification", NULL)->name,
	                    "mistral_cls");
	fx_close(&a);
	fx_close(&b);
	fx_close(&m);
}

/* int8-channel TP 2: score quantized (ReplicatedLinear with the quantization config; codes
 * checked row by row, whole on each rank) with the decoder's Linears; embed_tokens and norms kept
 * BF16. fp8-channel TP 4: the same split. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, dec_model(&kinds[2], 3, false),
	          CFG("Qwen3ForSequenceClassification", "qwen3",
	              KEYS("4", "1024", ",\"head_dim\":64"), ",\"num_labels\":3"),
	          &l, true);
	static const char *const keep[] = {"model.embed_tokens.weight", "model.norm.weight",
	                                   L1 "self_attn.q_norm.weight",
	                                   L1 "input_layernorm.weight"};
	static const char *const q8[] = {"score.weight", L1 "self_attn.qkv_proj.weight",
	                                 L1 "self_attn.o_proj.weight", L1 "mlp.down_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, 4, q8, 4);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, "score.weight", 2, 3, HID, 0);
		const int8_t *q = (const int8_t *)out_bytes(&f, r, "score.weight");
		const float *sc = (const float *)out_bytes(&f, r, "score.weight_scale");
		size_t rb;
		const uint16_t *x = (const uint16_t *)src_rows(&f, "score.weight", 0, &rb);
		for (int64_t row = 0; row < 3; row++)
			int8_row_is(q + row * HID, sc[row], x + row * HID, HID);
	}
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, dec_model(&kinds[1], 1, false), kinds[1].cls, &l, true);
	assert_int_equal(info(&f, 3, "score.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, L1 "mlp.gate_up_proj.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&f, 3, "model.norm.weight")->dtype, WT_BF16);
	assert_int_equal(info(&f, 3, L1 "self_attn.qkv_proj.bias")->dtype, WT_BF16);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	for (size_t k = 0; k < N_KINDS; k++)
		coverage(dec_model(&kinds[k], 1, true), kinds[k].cls, kinds[k].KV, lays, 4);
}

/* num_labels: id2label's entries, else num_labels, else PretrainedConfig's 2; read for the
 * classifiers alone (a causal LM's is -1); classifier_from_token / method recorded when not
 * null. */
static void test_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *js;
		int64_t labels;
		bool tok;
	} cases[] = {
	    {CFG("Qwen3ForSequenceClassification", "qwen3", KEYS("2", "1000", ",\"num_labels\":5"),
	         LABEL1),
	     1, false},
	    {CFG("LlamaForSequenceClassification", "llama", KEYS("2", "1000", ",\"num_labels\":5"),
	         ""),
	     5, false},
	    {CFG("Qwen2ForSequenceClassification", "qwen2", KEYS("2", "1000", ",\"method\":null"),
	         ",\"classifier_from_token\":null"),
	     2, false},
	    {CFG("MistralForSequenceClassification", "mistral",
	         KEYS("2", "1000", ",\"method\":\"no_post_processing\""), ""),
	     2, true},
	    {CFG("LlamaForCausalLM", "llama", KEYS("2", "1000", ",\"num_labels\":5"), ""), -1,
	     false},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cases[k].js, strlen(cases[k].js), &c, &err),
		                 WT_OK);
		assert_int_equal(c.rob_num_labels, cases[k].labels);
		assert_int_equal(c.cls_from_token, cases[k].tok);
		ckpt_config_clear(&c);
	}
	fx f; /* two labels by default */
	fx_open(&f, dec_model(&kinds[0], 2, false),
	        CFG("LlamaForSequenceClassification", "llama", KEYS("2", "1000", ""), ""), 2, 1, 0,
	        false);
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	const char *cfg = kinds[2].cls;
	/* score's rows other than num_labels, score missing, a score bias (vLLM builds none) */
	fx_refused(dec_model(&kinds[2], 2, false), cfg, WT_ESHAPE, "score.weight", "implies [1");
	fx_refused(dec_model(&kinds[2], 0, false), cfg, WT_ENOTFOUND, "score.weight", "");
	tm_model *m = dec_model(&kinds[2], 1, false);
	tm_add2(m, "score.bias", 1, 0);
	fx_refused(m, cfg, WT_EUNSUPPORTED, "score.bias", "unknown tensor");
	/* q / k norms in Llama's classifier; the online conversion keys; id2label */
	m = dec_model(&kinds[0], 1, false);
	tm_add2(m, "model.layers.0.self_attn.q_norm.weight", 32, 0);
	fx_refused(m, kinds[0].cls, WT_EUNSUPPORTED, "q_norm", "unknown tensor");
	fx_refused(dec_model(&kinds[2], 1, false),
	           CFG("Qwen3ForSequenceClassification", "qwen3",
	               KEYS("4", "1024", ",\"head_dim\":64"),
	               LABEL1 ",\"classifier_from_token\":[\"no\",\"yes\"]"),
	           WT_EUNSUPPORTED, "classifier_from_token", "score.weight");
	fx_refused(dec_model(&kinds[2], 1, false),
	           CFG("Qwen3ForSequenceClassification", "qwen3",
	               KEYS("4", "1024", ",\"head_dim\":64"),
	               LABEL1 ",\"method\":\"from_2_way_softmax\""),
	           WT_EUNSUPPORTED, "method", "remove both keys");
	fx_refused(dec_model(&kinds[2], 1, false),
	           CFG("Qwen3ForSequenceClassification", "qwen3",
	               KEYS("4", "1024", ",\"head_dim\":64"), ",\"id2label\":{}"),
	           WT_ECORRUPT, "id2label is empty", "num_labels");
	fx_refused(dec_model(&kinds[2], 1, false),
	           CFG("Qwen3ForSequenceClassification", "qwen3",
	               KEYS("4", "1024", ",\"head_dim\":64"), ",\"id2label\":[1]"),
	           WT_ECORRUPT, "id2label", "not an object");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(dec_model(&kinds[0], 1, false), kinds[0].cls, 16, WT_ELAYOUT, "tp_size 16",
	              "num_attention_heads 8");
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
