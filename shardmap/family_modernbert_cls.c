/*
 * family_modernbert_cls.c — ModernBertForSequenceClassification (docs/format.md section 2.7,
 * ModernBERT sequence classifier), as vLLM's modernbert.py loads it: its load_weights hands
 * the `model.` tensors to ModernBertModel.load_weights with the prefix stripped (so the encoder
 * is ModernBertModel's table under `model.`, which the runtime names keep, and a switched-off
 * bias there is skipped), and loads head.* into its pooler and classifier.* itself.
 *
 * The head: head.dense [hid, hid] (bias with classifier_bias) and head.norm (a LayerNorm, bias
 * with norm_bias) are the pooler's plain nn.Linear / nn.LayerNorm, classifier [num_labels, hid]
 * with its bias a plain nn.Linear: whole on every rank and never quantized. A head bias whose
 * switch is false is refused (vLLM has no parameter for it there and fails on the name).
 * vLLM's pooler runs nn.GELU() whatever classifier_activation says and pools by
 * classifier_pooling (cls or mean).
 *
 * ModernBertForTokenClassification (modernbert_tok), as vLLM's modernbert.py loads it: the
 * same checkpoint names (model.* through ModernBertModel.load_weights, then head.dense /
 * head.norm of its ModernBertPredictionHead and classifier, plain nn.Linear / nn.LayerNorm
 * loaded by AutoWeightsLoader with the drop.* prefix skipped): the same table and the same
 * bias switches. Its head runs ACT2FN[classifier_activation] (any activation; no pooling), so
 * neither the pooling nor the activation refusal applies.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_modernbert.h"

#define MBC_REPL(n, c, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, c, 0, nd, d0, d1)

static const sm_rule modernbert_cls_rules[] = {
    MB_RULES_AT("model."),
    MBC_REPL("head.dense.weight", SM_C_ALL, 2, SM_D_HID, SM_D_HID),
    MBC_REPL("head.dense.bias", SM_C_CLSBIAS, 1, SM_D_HID, SM_D_ANY),
    MBC_REPL("head.norm.weight", SM_C_ALL, 1, SM_D_HID, SM_D_ANY),
    MBC_REPL("head.norm.bias", SM_C_NORMBIAS, 1, SM_D_HID, SM_D_ANY),
    MBC_REPL("classifier.weight", SM_C_ALL, 2, SM_D_NLAB, SM_D_HID),
    MBC_REPL("classifier.bias", SM_C_ALL, 1, SM_D_NLAB, SM_D_ANY),
};

static bool modernbert_cls_drop(const ckpt_config *c, const char *cn)
{
	return shardmap_modernbert_bias_off(c, "model.", cn);
}

/* ModernBertModel's checks, then the pooler's and the classifier's. */
static int modernbert_cls_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_modernbert_check(c, err);
	if (rv == WT_OK && c->mb_pool < 0)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: classifier_pooling is neither \"cls\" nor \"mean\" "
		               "(ModernBertConfig's two, the pooling vLLM's ModernBertPooler "
		               "takes); set one of them");
	if (rv == WT_OK && !c->mb_cls_gelu)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: classifier_activation is not \"gelu\": vLLM's "
		               "ModernBertPooler runs nn.GELU() whatever it says; set it to "
		               "\"gelu\" or remove it");
	return rv != WT_OK ? rv : shardmap_check_labels(c, "classifier", err);
}

/* ModernBertModel's checks, then the classifier's labels. */
static int modernbert_tok_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_modernbert_check(c, err);
	return rv != WT_OK ? rv : shardmap_check_labels(c, "token classifier", err);
}

static const char *const modernbert_cls_archs[] = {"ModernBertForSequenceClassification", NULL};

const sm_family shardmap_family_modernbert_cls = {
    .name = "modernbert_cls",
    .archs = modernbert_cls_archs,
    .rules = modernbert_cls_rules,
    .n_rules = SM_NRULES(modernbert_cls_rules),
    .layer_prefix = "model.layers.",
    .check = modernbert_cls_check,
    .drop_canon = modernbert_cls_drop,
};

static const char *const modernbert_tok_archs[] = {"ModernBertForTokenClassification", NULL};

/* the sequence classifier's table: the same names, bias switches and cuts */
const sm_family shardmap_family_modernbert_tok = {
    .name = "modernbert_tok",
    .archs = modernbert_tok_archs,
    .rules = modernbert_cls_rules,
    .n_rules = SM_NRULES(modernbert_cls_rules),
    .layer_prefix = "model.layers.",
    .check = modernbert_tok_check,
    .drop_canon = modernbert_cls_drop,
};
