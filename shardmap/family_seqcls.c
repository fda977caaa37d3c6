/*
 * family_seqcls.c — the decoder sequence classifiers (reward models, rerankers):
 * LlamaForSequenceClassification (Skywork-Reward-Llama-3.1-8B), MistralForSequenceClassification,
 * Qwen2ForSequenceClassification and Qwen3ForSequenceClassification (Qwen3-Reranker-*-seq-cls),
 * docs/format.md section 2.7, as vLLM loads them: as_seq_cls_model (adapters.py) over its
 * LlamaForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM.
 * LlamaBidirectionalForSequenceClassification (nvidia/llama-nemotron-rerank-1b-v2; model_type
 * llama_bidirec, remote code) is llama.py's class of that name, the same
 * as_seq_cls_model(LlamaForCausalLM): llama_cls's table, names and bytes; its attention is
 * bidirectional and its pooling the config's (vLLM's LlamaBidirectionalConfig), which changes no
 * tensor.
 *
 * The decoder is the causal LM's table without lm_head (vLLM deletes the attribute and drops
 * every lm_head.* name before loading: a stray lm_head.weight is skipped and listed): Llama's
 * rules for llama / mistral / qwen2 (q/k/v biases optional), Qwen3's with its q / k norms,
 * under the causal LM's names (model.*). The head: score.weight [num_labels, hid], vLLM's
 * ReplicatedLinear(hidden_size, num_labels, bias=False) built with the quantization config:
 * whole on every rank and quantized as the other Linears; no bias (a score.bias is unknown, as
 * vLLM has no parameter for it). A config with classifier_from_token or method (vLLM's online
 * conversion of a causal LM: the score made of two lm_head rows) is refused.
 *
 * Qwen2's reward models (Qwen2ForRewardModel: Qwen/Qwen2.5-Math-RM-72B;
 * Qwen2ForProcessRewardModel: Qwen/Qwen2.5-Math-PRM-7B; remote code), as vLLM's qwen2_rm.py
 * loads them: Qwen2Model under model. (Llama's rules, q/k/v biases optional) and the score head
 * nn.Sequential(ColumnParallelLinear(hid, hid), ReLU, RowParallelLinear(hid, num_labels)), both
 * with their biases (the remote code's nn.Linear defaults; required): score.0.weight and its
 * bias by rows, score.2.weight by columns, score.2.bias replicated in full (the engine adds it
 * once), both weights quantized. num_labels is the class's, 1 or 2 (loader/config_seqcls.c);
 * a stray lm_head.* is skipped (vLLM's ignore_unexpected_prefixes).
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define SC_TOP                                                                                     \
	SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0,           \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                      \
	    SM_RULE("model.norm.weight", "model.norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,   \
	            0, 1, SM_D_HID, SM_D_ANY)
#define SC_SCORE                                                                                   \
	SM_RULE("score.weight", "score.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_QUANT, 2,  \
	        SM_D_NLAB, SM_D_HID)

static const sm_rule llama_cls_rules[] = {
    SC_TOP, SM_RULES_LNORM, SM_RULES_ATTN, SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL), SC_SCORE,
};

/* The reward models' score: [hid, hid] rows + bias, ReLU, [NLAB, hid] columns + bias whole. */
#define RM_SCORE                                                                                   \
	SM_RULE("score.0.weight", "score.0.weight", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, SM_F_QUANT,  \
	        2, SM_D_HID, SM_D_HID),                                                            \
	    SM_RULE("score.0.bias", "score.0.bias", SM_K_ROWS, 0, SM_U_HID, SM_C_ALL, 0, 1,        \
	            SM_D_HID, SM_D_ANY),                                                           \
	    SM_RULE("score.2.weight", "score.2.weight", SM_K_COLS, 0, SM_U_HID, SM_C_ALL,          \
	            SM_F_QUANT, 2, SM_D_NLAB, SM_D_HID),                                           \
	    SM_RULE("score.2.bias", "score.2.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,       \
	            SM_D_NLAB, SM_D_ANY)

static const sm_rule qwen2_rm_rules[] = {
    SC_TOP, SM_RULES_LNORM, SM_RULES_ATTN, SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL), RM_SCORE,
};

static const sm_rule qwen3_cls_rules[] = {
    SC_TOP,           SM_RULES_LNORM, SM_RULES_ATTN, SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    SM_RULES_QK_NORM, SC_SCORE,
};

static bool seqcls_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strncmp(cn, "lm_head.", strlen("lm_head.")) == 0;
}

static int seqcls_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->cls_from_token)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: classifier_from_token / method ask for vLLM's online "
		    "conversion of a causal LM (the score made of lm_head rows); convert "
		    "the checkpoint to a score.weight [num_labels, hidden_size] and "
		    "remove both keys");
	return shardmap_check_labels(c, "score head", err);
}

int shardmap_check_labels(const ckpt_config *c, const char *head, wt_errbuf *err)
{
	if (c->rob_num_labels < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: id2label is empty: the %s needs at least one label "
		                 "(num_labels)",
		                 head);
	return WT_OK;
}

static const char *const llama_cls_archs[] = {"LlamaForSequenceClassification", NULL};
static const char *const mistral_cls_archs[] = {"MistralForSequenceClassification", NULL};
static const char *const qwen2_cls_archs[] = {"Qwen2ForSequenceClassification", NULL};
static const char *const qwen3_cls_archs[] = {"Qwen3ForSequenceClassification", NULL};
static const char *const llama_bidir_cls_archs[] = {"LlamaBidirectionalForSequenceClassification",
                                                    NULL};
static const char *const qwen2_rm_archs[] = {"Qwen2ForRewardModel", NULL};
static const char *const qwen2_prm_archs[] = {"Qwen2ForProcessRewardModel", NULL};

#define SEQCLS_FAMILY(n, a, r)                                                                     \
	{                                                                                          \
		.name = n, .archs = a, .rules = r, .n_rules = SM_NRULES(r),                        \
		.layer_prefix = "model.layers.", .check = seqcls_check, .drop_canon = seqcls_drop, \
	}

const sm_family shardmap_family_llama_cls =
    SEQCLS_FAMILY("llama_cls", llama_cls_archs, llama_cls_rules);
const sm_family shardmap_family_mistral_cls =
    SEQCLS_FAMILY("mistral_cls", mistral_cls_archs, llama_cls_rules);
const sm_family shardmap_family_qwen2_cls =
    SEQCLS_FAMILY("qwen2_cls", qwen2_cls_archs, llama_cls_rules);
const sm_family shardmap_family_qwen3_cls =
    SEQCLS_FAMILY("qwen3_cls", qwen3_cls_archs, qwen3_cls_rules);
const sm_family shardmap_family_llama_bidir_cls =
    SEQCLS_FAMILY("llama_bidir_cls", llama_bidir_cls_archs, llama_cls_rules);
const sm_family shardmap_family_qwen2_rm =
    SEQCLS_FAMILY("qwen2_rm", qwen2_rm_archs, qwen2_rm_rules);
const sm_family shardmap_family_qwen2_prm =
    SEQCLS_FAMILY("qwen2_prm", qwen2_prm_archs, qwen2_rm_rules);
