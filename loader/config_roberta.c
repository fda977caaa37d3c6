/*
 * config_roberta.c — RoBERTa's / XLM-RoBERTa's config keys (model_type roberta,
 * xlm-roberta: RobertaModel, XLMRobertaModel), read as transformers 4.57.1's RobertaConfig /
 * XLMRobertaConfig read them (their dims default in config_defaults_classic.c).
 *
 * The embeddings' own keys: max_position_embeddings (512; the learned position table's rows,
 * 514 in the released checkpoints, whose positions start at pad_token_id + 1),
 * type_vocab_size (2; 1 in the released checkpoints), pad_token_id (1),
 * position_embedding_type ("absolute"; vLLM builds no other: "rotary" is Jina's model) and
 * is_decoder (false; a decoder's causal mask is not what vLLM's encoder runs). Values the
 * planner refuses (shardmap/family_roberta.c) are recorded, not refused here. The first three
 * reach config_parse_roberta already filled from the class defaults (config_lm_view); the
 * defaults below say the same for a caller passing an object without them. The sequence
 * classifiers' (XLMRobertaForSequenceClassification, RobertaForSequenceClassification) outputs:
 * PretrainedConfig's num_labels, the entries of id2label when it is given (bge-reranker-v2-m3:
 * one), else num_labels, else 2. BERT's heads (BertForSequenceClassification,
 * BertForTokenClassification; model_type bert) read the same keys but pad_token_id (BERT's
 * positions start at 0): BertConfig's defaults 512, 2, false, "absolute", and num_labels.
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

bool config_is_roberta(const char *model_type)
{
	return model_type != NULL &&
	       (strcmp(model_type, "roberta") == 0 || strcmp(model_type, "xlm-roberta") == 0);
}

int config_num_labels(json_t *root, int64_t *out, wt_errbuf *err)
{
	json_t *labels = json_object_get(root, "id2label");
	if (labels != NULL && !json_is_null(labels) && !json_is_object(labels))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'id2label' is not an object");
	if (json_is_object(labels)) {
		*out = (int64_t)json_object_size(labels);
		return WT_OK;
	}
	return config_get_int(root, "num_labels", 2, 1, out, err);
}

/* The keys BertEmbedding and the heads read (RoBERTa's and BERT's heads alike): the tables'
 * rows, is_decoder, num_labels, position_embedding_type. */
static int parse_embed_keys(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = config_get_int(root, "max_position_embeddings", 512, 1, &c->rob_max_pos, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "type_vocab_size", 2, 1, &c->rob_types, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "is_decoder", false, &c->rob_decoder, err);
	if (rv == WT_OK)
		rv = config_num_labels(root, &c->rob_num_labels, err);
	if (rv != WT_OK)
		return rv;
	json_t *pe = json_object_get(root, "position_embedding_type");
	if (pe != NULL && !json_is_null(pe) && !json_is_string(pe))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'position_embedding_type' is not a string");
	c->rob_abs_pos =
	    pe == NULL || json_is_null(pe) || strcmp(json_string_value(pe), "absolute") == 0;
	return WT_OK;
}

int config_parse_roberta(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = parse_embed_keys(root, c, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "pad_token_id", 1, 0, &c->rob_pad, err);
	return rv;
}

bool config_is_bert_head(const char *arch)
{
	return arch != NULL && (strcmp(arch, "BertForSequenceClassification") == 0 ||
	                        strcmp(arch, "BertForTokenClassification") == 0 ||
	                        strcmp(arch, "BertSpladeSparseEmbeddingModel") == 0);
}

int config_parse_bert_head(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	return parse_embed_keys(root, c, err);
}
