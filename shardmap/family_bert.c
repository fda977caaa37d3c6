/* family_bert.c — BertModel encoders (docs/format.md section 2.7, BERT). */
#include "shardmap/family_rules.h"

static const sm_rule bert_rules[] = {
    SM_RULE("embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight", SM_K_VOCAB, 0,
            SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_BERT_REPL("embeddings.position_embeddings.weight", 2, SM_D_ANY, SM_D_HID),
    SM_BERT_REPL("embeddings.token_type_embeddings.weight", 2, SM_D_ANY, SM_D_HID),
    SM_BERT_LN("embeddings.LayerNorm"),
    SM_RULES_BERT_LAYER,
    SM_RULE("pooler.dense.weight", "pooler.dense.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,
            SM_F_OPT, 2, SM_D_HID, SM_D_HID),
    SM_RULE("pooler.dense.bias", "pooler.dense.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_OPT,
            1, SM_D_HID, SM_D_ANY),
};

static const char *const bert_archs[] = {"BertModel", NULL};

const sm_family shardmap_family_bert = {"bert", bert_archs, bert_rules,      SM_NRULES(bert_rules),
                                        NULL,   false,      "encoder.layer."};
