/*
 * family_roberta_cls.c — RobertaForSequenceClassification and
 * XLMRobertaForSequenceClassification (rerankers: BAAI/bge-reranker-v2-m3), docs/format.md
 * section 2.7, as vLLM's roberta.py loads them (RobertaForSequenceClassification: its
 * `roberta` BertModel with RobertaEmbedding, then RobertaClassificationHead).
 *
 * The encoder is RobertaModel's table (family_roberta.c) under `roberta.`, which the runtime
 * names keep (vLLM's module path self.roberta; AutoWeightsLoader(self) without a prefix
 * mapper, so the prefix is required: an unprefixed encoder is unknown names). The head
 * classifier.dense [hid, hid] and classifier.out_proj [num_labels, hid] with their biases are
 * plain nn.Linear in vLLM: whole on every rank and never quantized. Skipped and listed:
 * roberta.pooler.* (BertModel.load_weights skips "pooler."), roberta.embeddings.position_ids.
 * Anything else (an MLM head lm_head.*) is refused as vLLM's loader refuses it.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define RB                      "roberta."
#define CLS_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

static const sm_rule roberta_cls_rules[] = {
    SM_RULE(RB "embeddings.word_embeddings.weight", RB "embeddings.word_embeddings.weight",
            SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_BERT_REPL(RB "embeddings.position_embeddings.weight", 2, SM_D_RPOS, SM_D_HID),
    SM_BERT_REPL(RB "embeddings.token_type_embeddings.weight", 2, SM_D_RTYPES, SM_D_HID),
    SM_BERT_LN(RB "embeddings.LayerNorm"),
    SM_RULES_BERT_LAYER_AT(RB),
    CLS_REPL("classifier.dense.weight", 2, SM_D_HID, SM_D_HID),
    CLS_REPL("classifier.dense.bias", 1, SM_D_HID, SM_D_ANY),
    CLS_REPL("classifier.out_proj.weight", 2, SM_D_NLAB, SM_D_HID),
    CLS_REPL("classifier.out_proj.bias", 1, SM_D_NLAB, SM_D_ANY),
};

static bool roberta_cls_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strncmp(cn, RB "pooler.", strlen(RB "pooler.")) == 0 ||
	       strcmp(cn, RB "embeddings.position_ids") == 0;
}

/* RobertaModel's checks (shardmap_roberta_check), then the head's outputs. */
static int roberta_cls_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_roberta_check(c, err);
	return rv != WT_OK ? rv : shardmap_check_labels(c, "classifier's out_proj", err);
}

static const char *const roberta_cls_archs[] = {"RobertaForSequenceClassification", NULL};
static const char *const xlm_roberta_cls_archs[] = {"XLMRobertaForSequenceClassification", NULL};

#define ROBERTA_CLS_FAMILY(n, a)                                                                   \
	{                                                                                          \
		.name = n, .archs = a, .rules = roberta_cls_rules,                                 \
		.n_rules = SM_NRULES(roberta_cls_rules), .layer_prefix = RB "encoder.layer.",      \
		.check = roberta_cls_check, .drop_canon = roberta_cls_drop,                        \
	}

const sm_family shardmap_family_roberta_cls = ROBERTA_CLS_FAMILY("roberta_cls", roberta_cls_archs);
const sm_family shardmap_family_xlm_roberta_cls =
    ROBERTA_CLS_FAMILY("xlm_roberta_cls", xlm_roberta_cls_archs);
