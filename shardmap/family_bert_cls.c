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
 *
 * BertSpladeSparseEmbeddingModel (SPLADE: naver/splade-cocondenser-ensembledistil,
 * naver/splade-v3, saved as BertForMaskedLM) as the same file loads it: load_weights strips
 * model. / bert. and hands the encoder to BertModel.load_weights (pooler.* skipped) and the
 * masked-LM head's six cls.predictions.* names to its BertMLMHead (plain nn.Linear /
 * nn.LayerNorm: dense, LayerNorm, decoder [V, hid] with its bias): whole on every rank, never
 * quantized, under the checkpoint's names. vLLM maps only decoder.weight / decoder.bias: it
 * neither ties the decoder to the word embeddings nor reads cls.predictions.bias (the name
 * transformers saves), so a checkpoint without either decoder tensor would leave vLLM's decoder
 * at its random init: refused naming the tensor and the fix; cls.predictions.bias is skipped.
 * The encoder's names: bert. (BertForMaskedLM's) or model. (an alias onto bert.); an unprefixed
 * encoder is unknown names (vLLM would take it: not read here).
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

static const sm_rule bert_splade_rules[] = {
    BC_ENCODER,
    BC_REPL("cls.predictions.transform.dense.weight", 2, SM_D_HID, SM_D_HID),
    BC_REPL("cls.predictions.transform.dense.bias", 1, SM_D_HID, SM_D_ANY),
    BC_REPL("cls.predictions.transform.LayerNorm.weight", 1, SM_D_HID, SM_D_ANY),
    BC_REPL("cls.predictions.transform.LayerNorm.bias", 1, SM_D_HID, SM_D_ANY),
    /* required by bert_splade_decoder, which names the fix */
    SM_RULE("cls.predictions.decoder.weight", "cls.predictions.decoder.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, SM_F_OPT, 2, SM_D_V, SM_D_HID),
    SM_RULE("cls.predictions.decoder.bias", "cls.predictions.decoder.bias", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, SM_F_OPT, 1, SM_D_V, SM_D_ANY),
};

/* The encoder's other layout: vLLM's BertEmbeddingModel names (model.). */
static const char *const bert_splade_aliases[] = {"model.", BB, NULL};

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

/* BertModel skips its pooler; the MLM head's cls.predictions.bias is not a name vLLM maps. */
static bool bert_splade_drop(const ckpt_config *cfg, const char *cn)
{
	return bert_tok_drop(cfg, cn) || strcmp(cn, "cls.predictions.bias") == 0;
}

/* The decoder vLLM's BertMLMHead loads, or its random init would be served. */
static int bert_splade_decoder(const ckpt *c, const ckpt_config *cfg, wt_errbuf *err)
{
	(void)cfg;
	if (ckpt_find(c, "cls.predictions.decoder.weight") == NULL)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "tensor 'cls.predictions.decoder.weight': missing from the "
		                 "checkpoint: vLLM's BertSpladeSparseEmbeddingModel does not tie "
		                 "the decoder to the word embeddings and would serve its random "
		                 "init; save it (a copy of bert.embeddings.word_embeddings.weight "
		                 "for a tied BertForMaskedLM)");
	if (ckpt_find(c, "cls.predictions.decoder.bias") == NULL)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "tensor 'cls.predictions.decoder.bias': missing from the "
		                 "checkpoint: vLLM's BertSpladeSparseEmbeddingModel does not read "
		                 "cls.predictions.bias and would serve its random init; save it (a "
		                 "copy of cls.predictions.bias)");
	return WT_OK;
}

/* BertEmbedding's keys (loader/config_roberta.c reads them). */
static int bert_embed_check(const ckpt_config *c, wt_errbuf *err)
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
	return WT_OK;
}

/* BertEmbedding's and the head's keys. */
static int bert_cls_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = bert_embed_check(c, err);
	return rv != WT_OK ? rv : shardmap_check_labels(c, "classifier", err);
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

static const char *const bert_splade_archs[] = {"BertSpladeSparseEmbeddingModel", NULL};

const sm_family shardmap_family_bert_splade = {
    .name = "bert_splade",
    .archs = bert_splade_archs,
    .rules = bert_splade_rules,
    .n_rules = SM_NRULES(bert_splade_rules),
    .layer_prefix = BB "encoder.layer.",
    .check = bert_embed_check,
    .aliases = bert_splade_aliases,
    .drop_canon = bert_splade_drop,
    .check_extra = bert_splade_decoder,
};
