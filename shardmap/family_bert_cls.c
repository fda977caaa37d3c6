/*
 * family_bert_cls.c — BERT's heads: BertForSequenceClassification (cross-encoders:
 * cross-encoder/ms-marco-MiniLM-L-6-v2) and BertForTokenClassification (NER taggers:
 * dslim/bert-base-NER), docs/format.md section 2.7, as vLLM's bert.py loads them.
 *
 * The encoder is BertModel's table (family_bert.c) under `bert.`, which the runtime names keep
 * (vLLM's module path self.bert; AutoWeightsLoader(self) without a prefix mapper, so the prefix
 * is required: an unprefixed encoder is unknown names). BertForSequenceClassification's
 * self.bert is a BertPoolingModel: its pooler.dense [hid, hid] with its bias is a plain
 * nn.Linear, required, whole on every rank and never quantized. BertForTokenClassification's
 * is a BertModel without a pooler: bert.pooler.* is skipped and listed (BertModel.load_weights
 * skip_prefixes "pooler."). Both heads' classifier [num_labels, hid] with its bias is a plain
 * nn.Linear: whole on every rank, never quantized. Skipped and listed:
 * bert.embeddings.position_ids. Anything else (an MLM head cls.predictions.*) is refused as
 * vLLM's AutoWeightsLoader refuses it.
 */
#include <string.h>

#include "shardmap/family_rules.h"

#define BB                     "bert."
#define BC_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define BC_ENCODER                                                                                 \
	SM_RULE(BB "embeddings.word_embeddings.weight", BB "embeddings.word_embeddings.weight",    \
	        SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                       \
	    SM_BERT_REPL(BB "embeddings.position_embeddings.weight", 2, SM_D_RPOS, SM_D_HID),      \
	    SM_BERT_REPL(BB "embeddings.token_type_embeddings.weight", 2, SM_D_RTYPES, SM_D_HID),  \
	    SM_BERT_LN(BB "embeddings.LayerNorm"), SM_RULES_BERT_LAYER_AT(BB)
#define BC_CLASSIFIER                                                                              \
	BC_REPL("classifier.weight", 2, SM_D_NLAB, SM_D_HID),                                      \
	    BC_REPL("classifier.bias", 1, SM_D_NLAB, SM_D_ANY)

static const sm_rule bert_cls_rules[] = {
    BC_ENCODER,
    BC_REPL(BB "pooler.dense.weight", 2, SM_D_HID, SM_D_HID),
    BC_REPL(BB "pooler.dense.bias", 1, SM_D_HID, SM_D_ANY),
    BC_CLASSIFIER,
};

static const sm_rule bert_tok_rules[] = {
    BC_ENCODER,
    BC_CLASSIFIER,
};

static bool bert_cls_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strcmp(cn, BB "embeddings.position_ids") == 0;
}

/* BertForTokenClassification builds no pooler: vLLM's BertModel skips it. */
static bool bert_tok_drop(const ckpt_config *cfg, const char *cn)
{
	return bert_cls_drop(cfg, cn) || strncmp(cn, BB "pooler.", strlen(BB "pooler.")) == 0;
}

/* BertEmbedding's and the head's keys (loader/config_bert_cls.c reads them). */
static int bert_cls_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->rob_abs_pos)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: position_embedding_type is not \"absolute\": vLLM's "
		                 "BertEmbedding raises on any other; set it to \"absolute\" or "
		                 "remove it");
	if (c->rob_decoder)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: is_decoder is true: a decoder's causal mask is not "
		                 "what vLLM's BERT encoder runs; set it to false");
	if (c->rob_num_labels < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: id2label is empty: the classifier needs at least "
		                 "one label (num_labels)");
	return WT_OK;
}

static const char *const bert_cls_archs[] = {"BertForSequenceClassification", NULL};
static const char *const bert_tok_archs[] = {"BertForTokenClassification", NULL};

const sm_family shardmap_family_bert_cls = {
    .name = "bert_cls",
    .archs = bert_cls_archs,
    .rules = bert_cls_rules,
    .n_rules = SM_NRULES(bert_cls_rules),
    .layer_prefix = BB "encoder.layer.",
    .check = bert_cls_check,
    .drop_canon = bert_cls_drop,
};

const sm_family shardmap_family_bert_tok = {
    .name = "bert_tok",
    .archs = bert_tok_archs,
    .rules = bert_tok_rules,
    .n_rules = SM_NRULES(bert_tok_rules),
    .layer_prefix = BB "encoder.layer.",
    .check = bert_cls_check,
    .drop_canon = bert_tok_drop,
};
