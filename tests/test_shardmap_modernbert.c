/*
 * test_shardmap_modernbert.c — ModernBertModel (docs/format.md section 2.7, ModernBERT), cut
 * as vLLM's modernbert.py loads it: tok_embeddings by vocabulary rows; each layer's fused
 * attn.Wqkv [q; k; v] re-cut into [q_r; k_r; v_r] by heads (not a third of its rows) with its
 * bias; attn.Wo and mlp.Wo by columns with their biases whole; mlp.Wi [input; gate] whole
 * (vLLM's nn.Linear) with its bias; the LayerNorms whole, layer 0 without attn_norm; nothing
 * quantized. Hand slices at TP 2 and 4, the model.-prefixed layout byte for byte the
 * unprefixed one, int8 / fp8 layouts leaving every tensor as it is, coverage at TP 1, 2, 4, 8
 * in both layouts with and without biases, ModernBertConfig's defaults, switched-off biases
 * skipped, and the refusals. The sequence classifier (ModernBertForSequenceClassification): the
 * encoder under model. (kept in the runtime names) cut as ModernBertModel's, byte for byte, the
 * head head.dense / head.norm / classifier [num_labels, hid] whole and never quantized, head
 * biases refused when their switch is false, the pooling / activation / label refusals. The
 * token classifier (ModernBertForTokenClassification): the same table byte for byte, its head
 * running any classifier_activation and pooling nothing (neither refusal), the label, bias and
 * shape refusals. Seed fixed.
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

#define SEED 0x30dbull
#include "test_shardmap_fx.h"

/* hid 64, H 8 (d 8), I 64, V 100, 3 layers */
#define HID 64
#define I   64
#define V   100

#define CFG_KEYS                                                                                   \
	"\"hidden_size\":64,\"num_attention_heads\":8,\"intermediate_size\":64,"                   \
	"\"vocab_size\":100,\"num_hidden_layers\":3"
#define CFG(rest)                                                                                  \
	"{\"architectures\":[\"ModernBertModel\"],\"model_type\":\"modernbert\"," CFG_KEYS rest "}"
#define BIASES ",\"attention_bias\":true,\"mlp_bias\":true,\"norm_bias\":true"
static const char cfg_b[] = CFG(BIASES);
static const char cfg_nb[] = CFG("");

enum { B_ATTN = 1, B_MLP = 2, B_NORM = 4, B_ALL = 7 };

/* ModernBertModel's tensors under pfx ("" or "model."), `layers` layers, biases per mask. */
static tm_model *mb_model(const char *pfx, int layers, int bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
#define MB_ADD(name, a, k) (snprintf(b, sizeof(b), "%s%s", pfx, name), tm_add2(m, b, a, k))
#define MB_LN(name)                                                                                \
	do {                                                                                       \
		MB_ADD(name ".weight", HID, 0);                                                    \
		if (bias & B_NORM)                                                                 \
			MB_ADD(name ".bias", HID, 0);                                              \
	} while (0)
	MB_ADD("embeddings.tok_embeddings.weight", V, HID);
	MB_LN("embeddings.norm");
	for (int l = 0; l < layers; l++) {
		char n[160];
#define MB_L(leaf, a, k) (snprintf(n, sizeof(n), "layers.%d." leaf, l), MB_ADD(n, a, k))
		if (l > 0) {
			MB_L("attn_norm.weight", HID, 0);
			if (bias & B_NORM)
				MB_L("attn_norm.bias", HID, 0);
		}
		MB_L("attn.Wqkv.weight", 3 * HID, HID);
		MB_L("attn.Wo.weight", HID, HID);
		if (bias & B_ATTN) {
			MB_L("attn.Wqkv.bias", 3 * HID, 0);
			MB_L("attn.Wo.bias", HID, 0);
		}
		MB_L("mlp_norm.weight", HID, 0);
		if (bias & B_NORM)
			MB_L("mlp_norm.bias", HID, 0);
		MB_L("mlp.Wi.weight", 2 * I, HID);
		MB_L("mlp.Wo.weight", HID, I);
		if (bias & B_MLP) {
			MB_L("mlp.Wi.bias", 2 * I, 0);
			MB_L("mlp.Wo.bias", HID, 0);
		}
#undef MB_L
	}
	MB_LN("final_norm");
#undef MB_LN
#undef MB_ADD
	return m;
}

#define L1 "layers.1."

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	int64_t ql = HID / T, vl = 128 / T; /* V padded to 128 */
	/* [q_r; k_r; v_r]: rows r*ql of each third, weight and bias */
	static const char *const wq[] = {L1 "attn.Wqkv.weight", L1 "attn.Wqkv.bias"};
	for (int w = 0; w < 2; w++)
		for (int p = 0; p < 3; p++)
			rows_at(f, r, wq[w], p * ql, wq[w], p * HID + r * ql, ql);
	shp(f, r, L1 "attn.Wqkv.weight", 2, 3 * ql, HID, 0);
	shp(f, r, L1 "attn.Wqkv.bias", 1, 3 * ql, 0, 0);
	cols_of(f, r, T, L1 "attn.Wo.weight", L1 "attn.Wo.weight", HID, HID);
	cols_of(f, r, T, L1 "mlp.Wo.weight", L1 "mlp.Wo.weight", HID, I);
	static const char *const whole[] = {
	    "embeddings.norm.weight", "embeddings.norm.bias",  "final_norm.weight",
	    "final_norm.bias",        L1 "attn_norm.weight",   L1 "attn_norm.bias",
	    L1 "mlp_norm.weight",     L1 "mlp_norm.bias",      L1 "attn.Wo.bias",
	    L1 "mlp.Wi.weight",       L1 "mlp.Wi.bias",        L1 "mlp.Wo.bias",
	    "layers.0.mlp.Wi.weight", "layers.0.mlp_norm.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++)
		repl(f, r, whole[k]);
	/* vocabulary rows [r*vl, (r+1)*vl) of the padded 128, rows >= 100 zero */
	const char *te = "embeddings.tok_embeddings.weight";
	shp(f, r, te, 2, vl, HID, 0);
	int64_t real = V - (int64_t)r * vl < vl ? V - (int64_t)r * vl : vl;
	if (real > 0)
		rows_at(f, r, te, 0, te, r * vl, real);
	for (int64_t row = real < 0 ? 0 : real; row < vl; row++)
		for (int64_t h = 0; h < HID * 2; h++)
			assert_int_equal(out_bytes(f, r, te)[row * HID * 2 + h], 0);
	assert_int_equal(info(f, r, L1 "mlp.Wo.weight")->dtype, WT_BF16);
	/* 5 embeddings / final tensors, 10 in layer 0, 12 in the others */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 5 + 10 + 2 * 12);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, mb_model("", 3, B_ALL), cfg_b, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* The model.-prefixed layout (ModernBertForMaskedLM's base model) gives the unprefixed
 * layout's ranks byte for byte. */
static void test_layouts(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx a, b;
		fx_open(&a, mb_model("", 3, B_ALL), cfg_b, tps[i], 1, 0, true);
		fx_open(&b, mb_model("model.", 3, B_ALL), cfg_b, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			fx_same_rank(&a, &b, r, NULL);
		fx_close(&a);
		fx_close(&b);
	}
}

/* int8-channel TP 2, fp8-channel TP 4: vLLM builds no Linear of ModernBERT with the
 * quantization config, so every tensor stays BF16 without a scale, cut as unquantized. */
static void test_quant(void **state)
{
	(void)state;
	static const char *const keep[] = {
	    L1 "attn.Wqkv.weight", L1 "attn.Wo.weight", L1 "mlp.Wi.weight",
	    L1 "mlp.Wo.weight",    L1 "attn.Wqkv.bias", "embeddings.tok_embeddings.weight",
	    L1 "mlp_norm.weight",  "final_norm.weight"};
	static const struct {
		wt_quant q;
		uint32_t tp;
	} lq[] = {{WT_QUANT_INT8_CHANNEL, 2}, {WT_QUANT_FP8_CHANNEL, 4}};
	for (size_t i = 0; i < 2; i++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lq[i].tp;
		l.quant = lq[i].q;
		fx f, u;
		fx_open_l(&f, mb_model("model.", 3, B_ALL), cfg_b, &l, true);
		fx_open(&u, mb_model("model.", 3, B_ALL), cfg_b, lq[i].tp, 1, 0, true);
		for (uint32_t r = 0; r < lq[i].tp; r++) {
			fx_quant_split(&f, r, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), NULL,
			               0);
			fx_same_rank(&f, &u, r, NULL);
		}
		fx_close(&f);
		fx_close(&u);
	}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(mb_model("", 3, B_ALL), cfg_b, 8, lays, 4);
	coverage(mb_model("model.", 3, B_ALL), cfg_b, 8, lays, 4);
	coverage(mb_model("", 3, 0), cfg_nb, 8, lays, 4);
	coverage(mb_model("model.", 3, B_MLP), CFG(",\"mlp_bias\":true"), 8, lays, 4);
}

/* ModernBertConfig's defaults (transformers 4.57.1): ModernBERT-base's dims, every bias
 * switch false, global every 3 layers, a local window of 128, the two RoPE bases (a null
 * local_rope_theta is the global one), gelu, cls pooling, 2 labels. */
static void test_defaults(void **state)
{
	(void)state;
	static const char js[] = "{\"architectures\":[\"ModernBertModel\"],\"model_type\":"
	                         "\"modernbert\"}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(js, strlen(js), &c, &err), WT_OK);
	assert_true(c.hidden_size == 768 && c.num_attention_heads == 12 &&
	            c.num_key_value_heads == 12 && c.head_dim == 64 &&
	            c.intermediate_size == 1152 && c.num_hidden_layers == 22 &&
	            c.vocab_size == 50368);
	assert_true(!c.attention_bias && !c.mlp_bias && !c.mb_norm_bias && !c.mb_cls_bias &&
	            c.mb_every == 3 && c.mb_local == 128 && c.mb_gelu && c.mb_cls_gelu &&
	            c.mb_pool == 0 && c.rob_num_labels == 2);
	assert_true(c.mb_global_theta == 160000.0 && c.mb_local_theta == 10000.0 &&
	            c.mb_norm_eps == 1e-5);
	ckpt_config_clear(&c);
	static const char nul[] = CFG(",\"local_rope_theta\":null,\"global_rope_theta\":8e4,"
	                              "\"classifier_pooling\":\"mean\"");
	assert_int_equal(ckpt_config_parse(nul, strlen(nul), &c, &err), WT_OK);
	assert_true(c.mb_local_theta == 8e4 && c.mb_pool == 1);
	ckpt_config_clear(&c);
	/* other model types read none of it */
	static const char bert[] =
	    "{\"architectures\":[\"BertModel\"],\"model_type\":\"bert\"," CFG_KEYS "}";
	assert_int_equal(ckpt_config_parse(bert, strlen(bert), &c, &err), WT_OK);
	assert_true(c.mb_every == -1 && c.mb_local == -1);
	ckpt_config_clear(&c);
	/* no bias keys: none expected (a checkpoint with them refuses as missing) */
	fx f;
	fx_open(&f, mb_model("", 3, 0), cfg_nb, 2, 1, 0, false);
	fx_close(&f);
	tm_model *m = mb_model("", 3, 0);
	tm_add2(m, "layers.0.attn.Wqkv.bias", 3 * HID, 0);
	fx_refused(m, CFG(",\"attention_bias\":true"), WT_ENOTFOUND, "attn.Wqkv.bias",
	           "attention_bias true");
	/* without architectures, model_type finds the family */
	assert_string_equal(shardmap_family_find(NULL, "modernbert")->name, "modernbert");
}

/* Biases whose switch is false are skipped and listed (vLLM's load_weights skips a ".bias"
 * it has no parameter for); the ranks hold the bias-free model's tensors. */
static void same_names(const fx *a, const fx *b, uint32_t r)
{
	size_t n = shardmap_rank_n_tensors(b->p, r);
	assert_int_equal(shardmap_rank_n_tensors(a->p, r), n);
	for (size_t i = 0; i < n; i++) {
		const sm_out_info *t = shardmap_rank_tensor(b->p, r, i);
		assert_int_equal(info(a, r, t->name)->nbytes, t->nbytes);
	}
}

static void test_bias_skipped(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, mb_model("", 3, B_ALL), cfg_nb, 2, 1, 0, true);
	fx_open(&b, mb_model("", 3, 0), cfg_nb, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		same_names(&a, &b, r);
		repl(&a, r, L1 "mlp.Wi.weight");
		cols_of(&a, r, 2, L1 "attn.Wo.weight", L1 "attn.Wo.weight", HID, HID);
	}
	/* 3 layers x (Wqkv, attn.Wo, Wi, mlp.Wo, mlp_norm) + 2 attn_norm + 2 top norms */
	assert_int_equal(shardmap_n_skipped(a.p), 3 * 5 + 2 + 2);
	assert_true(fx_skipped(&a, "layers.2.attn.Wqkv.bias") &&
	            fx_skipped(&a, "layers.1.attn_norm.bias") &&
	            fx_skipped(&a, "final_norm.bias") && fx_skipped(&a, "layers.0.mlp.Wo.bias"));
	fx_close(&a);
	fx_close(&b);
	fx_open(&a, mb_model("model.", 3, B_ALL), CFG(",\"norm_bias\":true"), 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(a.p), 3 * 4);
	assert_true(fx_skipped(&a, "model.layers.1.mlp.Wi.bias") &&
	            !fx_skipped(&a, "model.layers.1.mlp_norm.bias"));
	fx_close(&a);
}

static void test_errors(void **state)
{
	(void)state;
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"hidden_activation\":\"gelu_new\""),
	           WT_EUNSUPPORTED, "hidden_activation", "nn.GELU()");
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"hidden_activation\":1"), WT_ECORRUPT,
	           "hidden_activation", "not a string");
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"global_attn_every_n_layers\":0"),
	           WT_ECORRUPT, "global_attn_every_n_layers 0", ">= 1");
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"local_attention\":1"), WT_ECORRUPT,
	           "local_attention 1", ">= 2");
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"num_key_value_heads\":4"),
	           WT_EUNSUPPORTED, "num_key_value_heads 4", "one key / value head");
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"head_dim\":4"), WT_ECORRUPT,
	           "num_attention_heads 8", "hidden_size 64");
	fx_refused(mb_model("", 3, B_ALL), CFG(",\"norm_bias\":\"yes\""), WT_ECORRUPT, "norm_bias",
	           "not a boolean");
	/* a wrong type of classifier_pooling (read for every ModernBERT config: UBSan found an
	 * unset flag read on this path) */
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"classifier_pooling\":3"), WT_ECORRUPT,
	           "classifier_pooling", "not a string");
	fx_refused(mb_model("", 3, B_ALL), CFG(BIASES ",\"global_rope_theta\":0"), WT_ECORRUPT,
	           "global_rope_theta", "positive");
	/* layer 0's attn_norm (an Identity), a bias missing, past num_hidden_layers, unknown,
	 * two layouts mixed */
	tm_model *m = mb_model("", 3, B_ALL);
	tm_add2(m, "layers.0.attn_norm.weight", HID, 0);
	fx_refused(m, cfg_b, WT_EUNSUPPORTED, "layers.0.attn_norm.weight", "Identity");
	m = mb_model("model.", 3, B_ALL);
	tm_remove(m, "model." L1 "mlp.Wi.bias");
	fx_refused(m, cfg_b, WT_ENOTFOUND, "model." L1 "mlp.Wi.bias", "");
	fx_refused(mb_model("", 4, B_ALL), cfg_b, WT_ESHAPE, "layer 3", "num_hidden_layers");
	m = mb_model("", 3, B_ALL);
	tm_add2(m, "head.dense.weight", HID, HID);
	fx_refused(m, cfg_b, WT_EUNSUPPORTED, "head.dense.weight", "unknown tensor");
	m = mb_model("model.", 3, B_ALL);
	tm_add2(m, "final_norm.weight", HID, 0);
	fx_refused(m, cfg_b, WT_EUNSUPPORTED, "mixes two name layouts", "model.");
	/* a Wqkv of other rows than 3 * hidden_size */
	m = mb_model("", 3, 0);
	tm_remove(m, L1 "attn.Wqkv.weight");
	tm_add2(m, L1 "attn.Wqkv.weight", 2 * HID, HID);
	fx_refused(m, cfg_nb, WT_ESHAPE, L1 "attn.Wqkv.weight", "");
	/* heads: 8 do not split 16 ways */
	fx_refused_tp(mb_model("", 3, B_ALL), cfg_b, 16, WT_ELAYOUT, "tp_size 16", "");
}

/* ---- sequence classifier ---- */

#define CLS_CFG(rest)                                                                              \
	"{\"architectures\":[\"ModernBertForSequenceClassification\"],\"model_type\":"             \
	"\"modernbert\"," CFG_KEYS ",\"id2label\":{\"0\":\"a\",\"1\":\"b\",\"2\":\"c\"}" rest "}"
static const char cfg_cls[] = CLS_CFG(BIASES ",\"classifier_bias\":true");

/* The encoder under model. (its values those of mb_model("", ...)), then the head: head.dense
 * (bias with `cb`), head.norm (bias with B_NORM), classifier [labels, hid] with its bias. */
static tm_model *cls_model(int bias, bool cb, int labels)
{
	tm_model *m = mb_model("model.", 3, bias);
	tm_add2(m, "head.dense.weight", HID, HID);
	if (cb)
		tm_add2(m, "head.dense.bias", HID, 0);
	tm_add2(m, "head.norm.weight", HID, 0);
	if (bias & B_NORM)
		tm_add2(m, "head.norm.bias", HID, 0);
	tm_add2(m, "classifier.weight", labels, HID);
	tm_add2(m, "classifier.bias", labels, 0);
	return m;
}

static const char *const cls_head[] = {"head.dense.weight", "head.dense.bias",   "head.norm.weight",
                                       "head.norm.bias",    "classifier.weight", "classifier.bias"};

/* TP 2 and 4: the encoder's ranks are ModernBertModel's under model.; the head whole. */
static void test_cls_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx c, b;
		fx_open(&c, cls_model(B_ALL, true, 3), cfg_cls, tps[i], 1, 0, true);
		fx_open(&b, mb_model("", 3, B_ALL), cfg_b, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			fx_same_rank(&c, &b, r, "model.");
			for (size_t k = 0; k < 6; k++)
				repl(&c, r, cls_head[k]);
			shp(&c, r, "classifier.weight", 2, 3, HID, 0);
			assert_int_equal(shardmap_rank_n_tensors(c.p, r), 5 + 10 + 2 * 12 + 6);
		}
		assert_int_equal(shardmap_n_skipped(c.p), 0);
		fx_close(&c);
		fx_close(&b);
	}
}

/* int8-channel TP 2: nothing quantized, the head neither; coverage TP 1/2/4/8; encoder biases
 * switched off skipped; num_labels from id2label, num_labels, PretrainedConfig's 2. */
static void test_cls_quant_coverage(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, cls_model(B_ALL, true, 3), cfg_cls, &l, true);
	static const char *const keep[] = {"head.dense.weight", "classifier.weight",
	                                   "model." L1 "attn.Wqkv.weight",
	                                   "model." L1 "mlp.Wo.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, 4, NULL, 0);
	fx_close(&f);
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(cls_model(B_ALL, true, 3), cfg_cls, 8, lays, 4);
	coverage(cls_model(0, false, 1),
	         "{\"architectures\":[\"ModernBertForSequenceClassification\"],\"model_type\":"
	         "\"modernbert\"," CFG_KEYS ",\"num_labels\":1}",
	         8, lays, 4);
	fx_open(&f, cls_model(B_ALL, false, 3), CLS_CFG(",\"norm_bias\":true"), 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 3 * 4); /* Wqkv, attn.Wo, Wi, mlp.Wo biases */
	assert_true(fx_skipped(&f, "model.layers.0.attn.Wqkv.bias"));
	fx_close(&f);
	ckpt_config c;
	wt_errbuf err = {0};
	static const char two[] = "{\"architectures\":[\"ModernBertForSequenceClassification\"],"
	                          "\"model_type\":\"modernbert\"}";
	assert_int_equal(ckpt_config_parse(two, strlen(two), &c, &err), WT_OK);
	assert_true(c.rob_num_labels == 2 && c.mb_pool == 0 && !c.mb_cls_bias && c.mb_cls_gelu);
	ckpt_config_clear(&c);
}

static void test_cls_errors(void **state)
{
	(void)state;
	fx_refused(cls_model(B_ALL, true, 3), CLS_CFG(BIASES ",\"classifier_pooling\":\"max\""),
	           WT_EUNSUPPORTED, "classifier_pooling", "\"mean\"");
	fx_refused(cls_model(B_ALL, true, 3),
	           CLS_CFG(BIASES ",\"classifier_bias\":true,\"classifier_activation\":\"silu\""),
	           WT_EUNSUPPORTED, "classifier_activation", "nn.GELU()");
	fx_refused(cls_model(B_ALL, true, 1),
	           "{\"architectures\":[\"ModernBertForSequenceClassification\"],\"model_type\":"
	           "\"modernbert\"," CFG_KEYS BIASES ",\"id2label\":{}}",
	           WT_ECORRUPT, "id2label is empty", "num_labels");
	/* head biases with their switch false: vLLM has no parameter for them */
	fx_refused(cls_model(B_ALL, true, 3), CLS_CFG(BIASES), WT_EUNSUPPORTED, "head.dense.bias",
	           "classifier_bias");
	fx_refused(cls_model(B_NORM, false, 3), CLS_CFG(""), WT_EUNSUPPORTED, "head.norm.bias",
	           "norm_bias");
	/* classifier rows other than num_labels, the head missing, the encoder unprefixed */
	fx_refused(cls_model(B_ALL, true, 2), cfg_cls, WT_ESHAPE, "classifier.", "");
	tm_model *m = cls_model(B_ALL, true, 3);
	tm_remove(m, "head.norm.weight");
	fx_refused(m, cfg_cls, WT_ENOTFOUND, "head.norm.weight", "");
	m = mb_model("", 3, 0);
	tm_add2(m, "classifier.weight", 3, HID);
	fx_refused(m, CLS_CFG(""), WT_EUNSUPPORTED, "unknown tensor", "modernbert_cls");
	/* ModernBertModel's refusals hold */
	fx_refused(cls_model(B_ALL, true, 3),
	           CLS_CFG(BIASES ",\"classifier_bias\":true,\"local_attention\":0"), WT_ECORRUPT,
	           "local_attention 0", "");
}

/* ---- token classifier ---- */

#define TOK_CFG(rest)                                                                              \
	"{\"architectures\":[\"ModernBertForTokenClassification\"],\"model_type\":"                \
	"\"modernbert\"," CFG_KEYS ",\"id2label\":{\"0\":\"O\",\"1\":\"B\"}" rest "}"
static const char cfg_tok[] = TOK_CFG(BIASES ",\"classifier_bias\":true");

/* TP 2 and 4: the sequence classifier's table (the encoder's ranks ModernBertModel's under
 * model., the head whole); int8-channel quantizes nothing; coverage TP 1/2/4/8. */
static void test_tok_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx c, b;
		fx_open(&c, cls_model(B_ALL, true, 2), cfg_tok, tps[i], 1, 0, true);
		assert_string_equal(shardmap_family(c.p), "modernbert_tok");
		fx_open(&b, mb_model("", 3, B_ALL), cfg_b, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++) {
			fx_same_rank(&c, &b, r, "model.");
			for (size_t k = 0; k < 6; k++)
				repl(&c, r, cls_head[k]);
			shp(&c, r, "classifier.weight", 2, 2, HID, 0);
			assert_int_equal(shardmap_rank_n_tensors(c.p, r), 5 + 10 + 2 * 12 + 6);
		}
		fx_close(&c);
		fx_close(&b);
	}
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx f;
	fx_open_l(&f, cls_model(B_ALL, true, 2), cfg_tok, &l, true);
	static const char *const keep[] = {"head.dense.weight", "classifier.weight",
	                                   "model." L1 "attn.Wqkv.weight"};
	fx_quant_split_as(&f, 1, WT_BF16, keep, 3, NULL, 0, WT_F8_E4M3);
	fx_close(&f);
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(cls_model(0, false, 2), TOK_CFG(""), 8, lays, 4);
	assert_string_equal(shardmap_family_find("ModernBertForTokenClassification", NULL)->name,
	                    "modernbert_tok");
}

/* Its head runs ACT2FN[classifier_activation] and pools nothing: neither refusal of the
 * sequence classifier applies; the labels, the head's bias switches, the shapes do. */
static void test_tok_errors(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, cls_model(B_ALL, true, 2),
	        TOK_CFG(BIASES ",\"classifier_bias\":true,\"classifier_activation\":\"silu\","
	                       "\"classifier_pooling\":\"max\""),
	        2, 1, 0, false);
	fx_close(&f);
	fx_refused(cls_model(B_ALL, true, 1),
	           "{\"architectures\":[\"ModernBertForTokenClassification\"],\"model_type\":"
	           "\"modernbert\"," CFG_KEYS BIASES ",\"id2label\":{}}",
	           WT_ECORRUPT, "id2label is empty", "token classifier");
	fx_refused(cls_model(B_ALL, true, 2), TOK_CFG(BIASES), WT_EUNSUPPORTED, "head.dense.bias",
	           "classifier_bias");
	fx_refused(cls_model(B_NORM, false, 2), TOK_CFG(""), WT_EUNSUPPORTED, "head.norm.bias",
	           "norm_bias");
	fx_refused(cls_model(B_ALL, true, 3), cfg_tok, WT_ESHAPE, "classifier.", "");
	tm_model *m = cls_model(B_ALL, true, 2);
	tm_remove(m, "classifier.bias");
	fx_refused(m, cfg_tok, WT_ENOTFOUND, "classifier.bias", "");
	fx_refused_tp(cls_model(B_ALL, true, 2), cfg_tok, 16, WT_ELAYOUT, "tp_size 16", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices),
	    cmocka_unit_test(test_layouts),
	    cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_bias_skipped),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_cls_slices),
	    cmocka_unit_test(test_cls_quant_coverage),
	    cmocka_unit_test(test_cls_errors),
	    cmocka_unit_test(test_tok_slices),
	    cmocka_unit_test(test_tok_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
