/*
 * family_emb.c — decoder embedding models saved as base models (vLLM's _EMBEDDING_MODELS):
 * LlamaModel (intfloat/e5-mistral-7b-instruct's kind), MistralModel, Qwen2Model
 * (Alibaba-NLP/gte-Qwen2-*-instruct saved with AutoModel), Gemma2Model
 * (BAAI/bge-multilingual-gemma2) and Gemma3TextModel, docs/format.md section 2.7, as vLLM
 * loads them: as_embedding_model (adapters.py) over LlamaForCausalLM / Qwen2ForCausalLM /
 * Gemma2ForCausalLM, over Gemma3Model itself for Gemma3TextModel. LlamaBidirectionalModel
 * (nvidia/llama-nemotron-embed-1b-v2, llama-embed-nemotron-8b; model_type llama_bidirec, remote
 * code) is llama.py's LlamaBidirectionalModel, the same as_embedding_model(LlamaForCausalLM):
 * the same names and bytes as LlamaModel's; its attention is bidirectional (vLLM's
 * LlamaBidirectionalConfig sets is_causal false), which changes no tensor.
 *
 * The checkpoint is the decoder alone, named as the base model's own modules: embed_tokens,
 * layers.{i}.*, norm, no model. prefix and no lm_head. Each tensor is cut by the causal LM's
 * rules (Llama's for llama / mistral / qwen2, q/k/v biases optional; Gemma 2's and Gemma 3's
 * norms and q / k norms), so the bytes equal the causal LM's; the runtime names keep the
 * checkpoint's module path (SHARDS.md section 2: embed_tokens.weight,
 * layers.{i}.self_attn.qkv_proj.weight, norm.weight), which are the names vLLM's inner model
 * loads. vLLM's loader drops every lm_head.* name (a stray one is skipped and listed) and,
 * over a *ForCausalLM whose only parameters are in model, maps model. -> '' before the inner
 * model's load_weights: a checkpoint named model.embed_tokens / model.layers / model.norm
 * under LlamaModel / MistralModel / Qwen2Model / Gemma2Model is read through the aliases with
 * the same runtime names and bytes (a mix of both layouts is refused, as for every aliased
 * family). Gemma3TextModel is Gemma3Model in vLLM's registry, which takes the names as they
 * are: model.* is unknown there.
 */
#include <string.h>

#include "shardmap/family_rules.h"

/* The base model's layers (the shared macros expand SM_LAYER here). */
#undef SM_LAYER
#define SM_LAYER "layers.{i}."

#define EMB_TOP                                                                                    \
	SM_RULE("embed_tokens.weight", "embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,  \
	        0, 2, SM_D_V, SM_D_HID),                                                           \
	    SM_RULE("norm.weight", "norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,         \
	            SM_D_HID, SM_D_ANY)

static const sm_rule llama_emb_rules[] = {
    EMB_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

static const sm_rule gemma2_emb_rules[] = {
    EMB_TOP,
    SM_RULES_LNORM,
    SM_RULE_GEMMA_NORM("pre_feedforward_layernorm"),
    SM_RULE_GEMMA_NORM("post_feedforward_layernorm"),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

static const sm_rule gemma3_emb_rules[] = {
    EMB_TOP,
    SM_RULES_LNORM,
    SM_RULE_GEMMA_NORM("pre_feedforward_layernorm"),
    SM_RULE_GEMMA_NORM("post_feedforward_layernorm"),
    SM_RULES_QK_NORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

/* vLLM's pooling model deletes lm_head and drops every lm_head.* name before loading. */
static bool emb_drop(const ckpt_config *cfg, const char *cn)
{
	(void)cfg;
	return strncmp(cn, "lm_head.", strlen("lm_head.")) == 0;
}

/* The causal LM's layout (vLLM's WeightsMapper model. -> '') onto the base model's names. */
static const char *const emb_aliases[] = {
    "model.embed_tokens.",
    "embed_tokens.",
    "model.layers.",
    "layers.",
    "model.norm.",
    "norm.",
    NULL,
};

static const char *const llama_emb_archs[] = {"LlamaModel", NULL};
static const char *const mistral_emb_archs[] = {"MistralModel", NULL};
static const char *const qwen2_emb_archs[] = {"Qwen2Model", NULL};
static const char *const gemma2_emb_archs[] = {"Gemma2Model", NULL};
static const char *const gemma3_emb_archs[] = {"Gemma3TextModel", NULL};
static const char *const llama_bidir_emb_archs[] = {"LlamaBidirectionalModel", NULL};

#define EMB_FAMILY(n, a, r, al)                                                                    \
	{                                                                                          \
		.name = n, .archs = a, .rules = r, .n_rules = SM_NRULES(r),                        \
		.layer_prefix = "layers.", .drop_canon = emb_drop, .aliases = al,                  \
	}

const sm_family shardmap_family_llama_emb =
    EMB_FAMILY("llama_emb", llama_emb_archs, llama_emb_rules, emb_aliases);
const sm_family shardmap_family_mistral_emb =
    EMB_FAMILY("mistral_emb", mistral_emb_archs, llama_emb_rules, emb_aliases);
const sm_family shardmap_family_qwen2_emb =
    EMB_FAMILY("qwen2_emb", qwen2_emb_archs, llama_emb_rules, emb_aliases);
const sm_family shardmap_family_gemma2_emb =
    EMB_FAMILY("gemma2_emb", gemma2_emb_archs, gemma2_emb_rules, emb_aliases);
const sm_family shardmap_family_gemma3_text_emb =
    EMB_FAMILY("gemma3_text_emb", gemma3_emb_archs, gemma3_emb_rules, NULL);
const sm_family shardmap_family_llama_bidir_emb =
    EMB_FAMILY("llama_bidir_emb", llama_bidir_emb_archs, llama_emb_rules, emb_aliases);
