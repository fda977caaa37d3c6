/*
 * family_roberta.c — RobertaModel / RobertaForMaskedLM and XLMRobertaModel encoders
 * (docs/format.md section 2.7, RoBERTa), as vLLM's roberta.py (RobertaEmbeddingModel: BertModel
 * with RobertaEmbedding) loads them.
 *
 * BERT's layers (SM_RULES_BERT_LAYER). The embeddings: word_embeddings vocab-parallel
 * (VocabParallelEmbedding); position_embeddings [max_position_embeddings, hid] and
 * token_type_embeddings [type_vocab_size, hid] whole on every rank (plain nn.Embedding in
 * RobertaEmbedding, where BertEmbedding's are vocab-parallel); the LayerNorm replicated.
 * Names with the `roberta.` prefix (the *ForMaskedLM / ForSequenceClassification base
 * model's, as FacebookAI/roberta-base saves them) or none (bge-m3, multilingual-e5,
 * all-roberta-large-v1): vLLM maps either onto its model. Dropped and listed as skipped,
 * as vLLM loads nothing of them: the pooler (BertModel.load_weights skip_prefixes
 * "pooler."), the MLM head lm_head.* (skip_prefixes "lm_head."), the position_ids buffer.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

static const sm_rule roberta_rules[] = {
    SM_RULE("embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight", SM_K_VOCAB, 0,
            SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_BERT_REPL("embeddings.position_embeddings.weight", 2, SM_D_RPOS, SM_D_HID),
    SM_BERT_REPL("embeddings.token_type_embeddings.weight", 2, SM_D_RTYPES, SM_D_HID),
    SM_BERT_LN("embeddings.LayerNorm"),
    SM_RULES_BERT_LAYER,
};

/* The roberta. layout onto the canonical (unprefixed) names. */
static const char *const roberta_aliases[] = {"roberta.", "", NULL};

static bool roberta_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strncmp(cn, "pooler.", 7) == 0 || strcmp(cn, "embeddings.position_ids") == 0;
}

/* RobertaEmbedding's keys vLLM builds with (config_roberta.c reads them); the sequence
 * classifiers' too (family_roberta_cls.c). */
int shardmap_roberta_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->rob_abs_pos)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: position_embedding_type is not \"absolute\": vLLM's "
		    "RobertaEmbedding builds absolute position embeddings only (rotary "
		    "is Jina's model); set it to \"absolute\" or remove it");
	if (c->rob_decoder)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: is_decoder is true: a decoder's causal mask is not "
		                 "what vLLM's RoBERTa encoder runs; set it to false");
	if (c->rob_pad >= c->rob_max_pos - 1) /* rob_max_pos >= 1: no overflow either way */
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: pad_token_id %" PRId64
		                 " leaves no position below max_position_embeddings %" PRId64
		                 " (positions start at pad_token_id + 1)",
		                 c->rob_pad, c->rob_max_pos);
	if (c->rob_pad >= c->vocab_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: pad_token_id %" PRId64
		                 " is not below vocab_size %" PRId64,
		                 c->rob_pad, c->vocab_size);
	return WT_OK;
}

/* RobertaForMaskedLM (FacebookAI/roberta-base / -large, distilroberta-base as the Hub saves them):
 * vLLM's registry maps it onto RobertaEmbeddingModel, the same encoder; its MLM head lm_head.*
 * is skipped there (skip_prefixes) and dropped and listed here. */
static const char *const roberta_archs[] = {"RobertaModel", "RobertaForMaskedLM", NULL};
static const char *const xlm_roberta_archs[] = {"XLMRobertaModel", NULL};

#define ROBERTA_FAMILY(n, a)                                                                       \
	{                                                                                          \
		.name = n, .archs = a, .rules = roberta_rules,                                     \
		.n_rules = SM_NRULES(roberta_rules), .layer_prefix = "encoder.layer.",             \
		.check = shardmap_roberta_check, .drop_prefix = "lm_head.",                        \
		.aliases = roberta_aliases, .drop_canon = roberta_drop,                            \
	}

const sm_family shardmap_family_roberta = ROBERTA_FAMILY("roberta", roberta_archs);
const sm_family shardmap_family_xlm_roberta = ROBERTA_FAMILY("xlm_roberta", xlm_roberta_archs);
