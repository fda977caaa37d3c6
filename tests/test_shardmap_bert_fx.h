/*
 * test_shardmap_bert_fx.h — BERT's heads' planner test checkpoint (BertModel under a prefix, its
 * pooler, a classifier) and their hand slices of the encoder, shared by test_shardmap_bert_cls.c
 * and test_shardmap_bert_splade.c. Include after test_shardmap_fx.h (SEED, tm_*, rows_at ...).
 */
#ifndef TEST_SHARDMAP_BERT_FX_H
#define TEST_SHARDMAP_BERT_FX_H

#include <stdio.h>

/* hid 64, H 8 (d 8), I 128, V 100, 2 layers, 20 positions, 2 token types */
#define HID 64
#define I   128
#define V   100
#define POS 20

#define SIZES                                                                                      \
	"\"hidden_size\":64,\"num_attention_heads\":8,\"intermediate_size\":128,"                  \
	"\"vocab_size\":100,\"num_hidden_layers\":2"
#define KEYS            SIZES ",\"max_position_embeddings\":20,\"type_vocab_size\":2"
#define CFG(arch, rest) "{\"architectures\":[\"" arch "\"],\"model_type\":\"bert\"," KEYS rest "}"
#define LABEL1          ",\"id2label\":{\"0\":\"LABEL_0\"}"
#define LABEL4          ",\"id2label\":{\"0\":\"O\",\"1\":\"B-PER\",\"2\":\"I-PER\",\"3\":\"B-LOC\"}"
static const char cfg_bert[] = CFG("BertModel", "");
static const char cfg_cls[] = CFG("BertForSequenceClassification", LABEL1);
static const char cfg_tok[] = CFG("BertForTokenClassification", LABEL4);

/* an encoder layer's tensors (0 columns: 1-D) */
static const fx_leaf layer[] = {FX_BERT_LAYER_LEAVES(HID, I)};

/* BertModel under prefix pfx ("" or "bert."), with its pooler when pooler, then (labels > 0)
 * classifier [labels, hid] and its bias; extras: the position_ids buffer under pfx. */
static tm_model *bert_model(const char *pfx, bool pooler, int labels, bool extras)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
#define BT_ADD(name, a, k) (snprintf(b, sizeof(b), "%s%s", pfx, name), tm_add2(m, b, a, k))
	BT_ADD("embeddings.word_embeddings.weight", V, HID);
	BT_ADD("embeddings.position_embeddings.weight", POS, HID);
	BT_ADD("embeddings.token_type_embeddings.weight", 2, HID);
	BT_ADD("embeddings.LayerNorm.weight", HID, 0);
	BT_ADD("embeddings.LayerNorm.bias", HID, 0);
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(layer) / sizeof(layer[0]); k++) {
			char n[160];
			snprintf(n, sizeof(n), "encoder.layer.%d.%s", l, layer[k].leaf);
			BT_ADD(n, layer[k].n, layer[k].k);
		}
	if (pooler) {
		BT_ADD("pooler.dense.weight", HID, HID);
		BT_ADD("pooler.dense.bias", HID, 0);
	}
	if (extras) {
		snprintf(b, sizeof(b), "%sembeddings.position_ids", pfx);
		tm_add(m, b, WT_I64, 2, 1, POS, 0);
	}
#undef BT_ADD
	if (labels > 0) {
		tm_add2(m, "classifier.weight", labels, HID);
		tm_add2(m, "classifier.bias", labels, 0);
	}
	return m;
}

#define L1 "bert.encoder.layer.1."

/* Rank r of T: layer 1's q/k/v rows and intermediate rows by hand, the output columns, the
 * padded vocabulary rows, the replicated rows whole (the classifier's when cls). */
static void hand_slices_of(const fx *f, uint32_t T, uint32_t r, bool cls)
{
	int64_t ql = HID / T, il = I / T, vl = 128 / T; /* V padded to 128 */
	static const char *const leaf[] = {"weight", "bias"};
	static const char *const part[] = {"query", "key", "value"};
	char n[160], s[160];
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), L1 "attention.self.qkv_proj.%s", leaf[w]);
		for (int p = 0; p < 3; p++) {
			snprintf(s, sizeof(s), L1 "attention.self.%s.%s", part[p], leaf[w]);
			rows_at(f, r, n, p * ql, s, r * ql, ql);
		}
		snprintf(n, sizeof(n), L1 "intermediate.dense.%s", leaf[w]);
		rows_at(f, r, n, 0, n, r * il, il);
	}
	shp(f, r, L1 "attention.self.qkv_proj.weight", 2, 3 * ql, HID, 0);
	cols_of(f, r, T, L1 "attention.output.dense.weight", L1 "attention.output.dense.weight",
	        HID, HID);
	cols_of(f, r, T, L1 "output.dense.weight", L1 "output.dense.weight", HID, I);
	static const char *const whole[] = {"bert.embeddings.position_embeddings.weight",
	                                    "bert.embeddings.token_type_embeddings.weight",
	                                    "bert.embeddings.LayerNorm.bias",
	                                    L1 "attention.output.dense.bias",
	                                    L1 "output.LayerNorm.weight",
	                                    "classifier.weight",
	                                    "classifier.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]) - (cls ? 0 : 2); k++)
		repl(f, r, whole[k]);
	const char *we = "bert.embeddings.word_embeddings.weight";
	shp(f, r, we, 2, vl, HID, 0);
	int64_t real = V - (int64_t)r * vl < vl ? V - (int64_t)r * vl : vl;
	if (real > 0)
		rows_at(f, r, we, 0, we, r * vl, real);
}

static __attribute__((unused)) void hand_slices(const fx *f, uint32_t T, uint32_t r)
{
	hand_slices_of(f, T, r, true);
}

#endif
