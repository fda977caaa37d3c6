/* family_bert.c — BertModel encoders (docs/format.md section 2.7, BERT). */
#include "shardmap/family_rules.h"

#define SM_BL "encoder.layer.{i}."
#define SM_BERT_QKV(x, part)                                                                       \
	SM_RULE(SM_BL "attention.self." x ".weight", SM_BL "attention.self.qkv_proj.weight",       \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_Q, SM_D_HID),            \
	    SM_RULE(SM_BL "attention.self." x ".bias", SM_BL "attention.self.qkv_proj.bias",       \
	            SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, 0, 1, SM_D_Q, SM_D_ANY)
#define SM_BERT_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define SM_BERT_LN(n)                                                                              \
	SM_BERT_REPL(n ".weight", 1, SM_D_HID, SM_D_ANY),                                          \
	    SM_BERT_REPL(n ".bias", 1, SM_D_HID, SM_D_ANY)

static const sm_rule bert_rules[] = {
    SM_RULE("embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight", SM_K_VOCAB, 0,
            SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_BERT_REPL("embeddings.position_embeddings.weight", 2, SM_D_ANY, SM_D_HID),
    SM_BERT_REPL("embeddings.token_type_embeddings.weight", 2, SM_D_ANY, SM_D_HID),
    SM_BERT_LN("embeddings.LayerNorm"),
    SM_BERT_QKV("query", 0),
    SM_BERT_QKV("key", 1),
    SM_BERT_QKV("value", 2),
    SM_RULE(SM_BL "attention.output.dense.weight", SM_BL "attention.output.dense.weight", SM_K_COLS,
            0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_BERT_REPL(SM_BL "attention.output.dense.bias", 1, SM_D_HID, SM_D_ANY),
    SM_BERT_LN(SM_BL "attention.output.LayerNorm"),
    SM_RULE(SM_BL "intermediate.dense.weight", SM_BL "intermediate.dense.weight", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_BL "intermediate.dense.bias", SM_BL "intermediate.dense.bias", SM_K_ROWS, 0, SM_U_I,
            SM_C_ALL, 0, 1, SM_D_I, SM_D_ANY),
    SM_RULE(SM_BL "output.dense.weight", SM_BL "output.dense.weight", SM_K_COLS, 0, SM_U_I,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    SM_BERT_REPL(SM_BL "output.dense.bias", 1, SM_D_HID, SM_D_ANY),
    SM_BERT_LN(SM_BL "output.LayerNorm"),
    SM_RULE("pooler.dense.weight", "pooler.dense.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,
            SM_F_OPT, 2, SM_D_HID, SM_D_HID),
    SM_RULE("pooler.dense.bias", "pooler.dense.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_OPT,
            1, SM_D_HID, SM_D_ANY),
};

static const char *const bert_archs[] = {"BertModel", NULL};

const sm_family shardmap_family_bert = {"bert", bert_archs, bert_rules,      SM_NRULES(bert_rules),
                                        NULL,   false,      "encoder.layer."};
