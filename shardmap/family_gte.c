/*
 * family_gte.c — GteNewModel (Alibaba-NLP/gte-base-en-v1.5, gte-large-en-v1.5,
 * gte-multilingual-base: the remote NewModel of Alibaba-NLP/new-impl, served by vLLM under the
 * architecture GteNewModel), docs/format.md section 2.7, as vLLM's bert_with_rope.py builds and
 * loads it.
 *
 * vLLM's GteNewModel drops classifier.* and pooler.* tensors, strips "new." (the base model of
 * NewForSequenceClassification), renames encoder.layer to encoder.layers, attention.qkv_proj /
 * o_proj to attn.qkv_proj / out_proj, and splits mlp.up_gate_proj [up; gate] into up_proj
 * (shard 1) and gate_proj (shard 0) of gate_up_proj: rank r holds [gate_r; up_r]
 * (SM_K_ROWS2R), built without a bias. word_embeddings and token_type_embeddings
 * (type_vocab_size > 0 only) are VocabParallelEmbeddings: padded rows. qkv_proj is a
 * QKVParallelLinear from the packed tensor ([q_r; k_r; v_r] by heads, its bias alike); out_proj
 * and down_proj RowParallelLinear (columns, biases whole). Every Linear is quantized; the
 * tables, LayerNorms and biases are not. GteNewModel's bias switch (`bias`, absent from NewConfig:
 * true) gives qkv_proj, out_proj and down_proj their biases, all required.
 *
 * GteModel (Snowflake/snowflake-arctic-embed-m-v2.0, -l-v2.0: the remote GteModel of GteConfig,
 * model_type gte) is vLLM's SnowflakeGteNewModel: GteNewModel with the same renames but "new."
 * not stripped, so the same cut; a new.-prefixed name is unknown to it (refused, naming it).
 *
 * GteNewForSequenceClassification (the remote NewForSequenceClassification: GTE rerankers and
 * classifiers such as Alibaba-NLP/gte-multilingual-reranker-base), as the same file loads it:
 * AutoWeightsLoader(self) hands new.* to a GteNewModel built with add_pooling_layer (so the
 * encoder is the table above under new., required and kept in the runtime names, and
 * new.pooler.dense is loaded, not skipped) and loads classifier.* itself. new.pooler.dense
 * [hid, hid] with its bias is BertPooler's plain nn.Linear (CLS token, tanh): whole on every
 * rank, never quantized. classifier [num_labels, hid] with its bias is a ReplicatedLinear built
 * with the quant config: whole on every rank, the weight quantized, the bias not. An unprefixed
 * encoder, and any other name, is unknown (vLLM's AutoWeightsLoader raises on it).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define GT_C "encoder.layer.{i}."
#define GT_R "encoder.layers.{i}."
#define GT_REPL(ck, rt, nd, d0)                                                                    \
	SM_RULE(ck, rt, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, SM_D_ANY)
#define GT_LN(ck, rt)                                                                              \
	GT_REPL(ck ".weight", rt ".weight", 1, SM_D_HID),                                          \
	    GT_REPL(ck ".bias", rt ".bias", 1, SM_D_HID)
/* GteNewModel's table with P before both names ("" for GteNewModel, "new." for its classifier) */
#define GT_RULES_AT(P)                                                                             \
	SM_RULE(P "embeddings.word_embeddings.weight", P "embeddings.word_embeddings.weight",      \
	        SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                       \
	    SM_RULE(P "embeddings.token_type_embeddings.weight",                                   \
	            P "embeddings.token_type_embeddings.weight", SM_K_VOCAB, 0, SM_U_NONE,         \
	            SM_C_TTYPES, 0, 2, SM_D_RTYPES, SM_D_HID),                                     \
	    GT_LN(P "embeddings.LayerNorm", P "embeddings.LayerNorm"),                             \
	    SM_RULE(P GT_C "attention.qkv_proj.weight", P GT_R "attn.qkv_proj.weight", SM_K_QKVF,  \
	            0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),                   \
	    SM_RULE(P GT_C "attention.qkv_proj.bias", P GT_R "attn.qkv_proj.bias", SM_K_QKVF, 0,   \
	            SM_U_HEADS, SM_C_ALL, 0, 1, SM_D_QKV, SM_D_ANY),                               \
	    SM_RULE(P GT_C "attention.o_proj.weight", P GT_R "attn.out_proj.weight", SM_K_COLS, 0, \
	            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                        \
	    GT_REPL(P GT_C "attention.o_proj.bias", P GT_R "attn.out_proj.bias", 1, SM_D_HID),     \
	    GT_LN(P GT_C "attn_ln", P GT_R "attn_ln"),                                             \
	    SM_RULE(P GT_C "mlp.up_gate_proj.weight", P GT_R "mlp.gate_up_proj.weight",            \
	            SM_K_ROWS2R, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I2, SM_D_HID),           \
	    SM_RULE(P GT_C "mlp.down_proj.weight", P GT_R "mlp.down_proj.weight", SM_K_COLS, 0,    \
	            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),                            \
	    GT_REPL(P GT_C "mlp.down_proj.bias", P GT_R "mlp.down_proj.bias", 1, SM_D_HID),        \
	    GT_LN(P GT_C "mlp_ln", P GT_R "mlp_ln")

static const sm_rule gte_new_rules[] = {GT_RULES_AT("")};

/* GteNewForSequenceClassification: GteNewModel under new. with its pooler (a plain nn.Linear:
 * whole, never quantized), then classifier, a ReplicatedLinear built with the quant config:
 * whole on every rank, its weight quantized as the encoder's Linears, its bias not. */
static const sm_rule gte_new_cls_rules[] = {
    GT_RULES_AT("new."),
    SM_RULE("new.pooler.dense.weight", "new.pooler.dense.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_HID, SM_D_HID),
    GT_REPL("new.pooler.dense.bias", "new.pooler.dense.bias", 1, SM_D_HID),
    SM_RULE("classifier.weight", "classifier.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_QUANT,
            2, SM_D_NLAB, SM_D_HID),
    SM_RULE("classifier.bias", "classifier.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,
            SM_D_NLAB, SM_D_ANY),
};

static const char *const gte_new_aliases[] = {"new.", "", NULL};

/* GteNewModel's load_weights drops classifier.* (ignore_unnecessary_layers) and every name
 * holding "pooler" (NewModel's pooler.dense): listed as skipped. */
static bool gte_new_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strncmp(cn, "classifier", 10) == 0 || strstr(cn, "pooler") != NULL;
}

/* BertWithRopeAttention's head sizes (family_nomic_bert.c). */
static int gte_new_check(const ckpt_config *c, wt_errbuf *err)
{
	return shardmap_bert_rope_check(c, "num_attention_heads", "hidden_size", err);
}

static const char *const gte_new_archs[] = {"GteNewModel", "GteModel", NULL};

/* SnowflakeGteNewModel's hf_to_vllm_mapper has no "new." -> "": a name under new. matches no
 * parameter and vLLM's load fails on it, so it is refused here rather than served. */
static int gte_snowflake_names(const ckpt *c, const ckpt_config *cfg, wt_errbuf *err)
{
	if (cfg->architecture == NULL || strcmp(cfg->architecture, "GteModel") != 0)
		return WT_OK;
	for (size_t i = 0; i < ckpt_n_tensors(c); i++) {
		const char *n = ckpt_tensor_at(c, i)->name;
		if (strncmp(n, "new.", 4) == 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': architecture GteModel (vLLM's "
			    "SnowflakeGteNewModel) does not strip 'new.'; save the base "
			    "model's names, or set architectures to [\"GteNewModel\"]",
			    n);
	}
	return WT_OK;
}

/* GteNewModel's head checks, then the classifier's labels (loader/config_gte.c reads them). */
static int gte_new_cls_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = gte_new_check(c, err);
	return rv != WT_OK ? rv : shardmap_check_labels(c, "classifier", err);
}

static const char *const gte_new_cls_archs[] = {"GteNewForSequenceClassification", NULL};

const sm_family shardmap_family_gte_new = {
    .name = "gte_new",
    .archs = gte_new_archs,
    .rules = gte_new_rules,
    .n_rules = SM_NRULES(gte_new_rules),
    .layer_prefix = "encoder.layer.",
    .check = gte_new_check,
    .aliases = gte_new_aliases,
    .drop_canon = gte_new_drop,
    .check_extra = gte_snowflake_names,
};

const sm_family shardmap_family_gte_new_cls = {
    .name = "gte_new_cls",
    .archs = gte_new_cls_archs,
    .rules = gte_new_cls_rules,
    .n_rules = SM_NRULES(gte_new_cls_rules),
    .layer_prefix = "new.encoder.layer.",
    .check = gte_new_cls_check,
};
