/*
 * family_eagle.c — EAGLE-3 draft heads for Llama-style targets (Eagle3LlamaForCausalLM,
 * LlamaForCausalLMEagle3, Eagle3Qwen2_5vlForCausalLM, Eagle3Qwen3vlForCausalLM: the names vLLM's
 * registry maps onto llama_eagle3.py), cut as that file loads them.
 *
 * Names: the checkpoint's are the draft module's own (midlayer.* or layers.{i}.*, fc, norm,
 * embed_tokens, lm_head, d2t, t2d); vLLM renames midlayer. to layers.0. and puts model. before
 * every name but lm_head's, so the runtime names are model.layers.{i}.*, model.fc.weight,
 * model.norm.weight, model.embed_tokens.weight and lm_head.weight (the aliases below; a
 * checkpoint already under model.* is refused: vLLM would look for model.model.*).
 * Layers: Llama's decoder layer (q/k/v fused by heads into qkv_proj, o_proj by columns,
 * gate/up merged into gate_up_proj, down_proj by columns, input / post_attention norms
 * replicated) plus hidden_norm (replicated); layer 0's q/k/v read [embeds; hidden] and so
 * have 2 x hidden_size columns (the later layers' hidden_size). Biases: q/k/v's with
 * attention_bias, o_proj's with `attention_bias or bias`, the MLP's with mlp_bias (each
 * required when its switch is true, unknown when false).
 * fc: a ReplicatedLinear [hidden, 3 x target_hidden_size] (hidden_size when absent), whole on
 * every rank and quantized; dropped (skipped) when eagle_config.use_aux_hidden_state is
 * false. lm_head: ParallelLMHead over draft_vocab_size rows (padded vocabulary rows), never
 * tied; embed_tokens: vocabulary rows over vocab_size. Both optional: the engine shares the
 * target's when the draft has none.
 * d2t: vLLM's draft_id_to_target_id (an nn.Parameter, int64 [draft_vocab_size]: target id =
 * draft id + d2t[draft id]), whole on every rank in I64 as stored, never converted to the
 * layout's dtype nor quantized (int_keep); optional as in vLLM (without it draft id i is
 * target id i). t2d is dropped (vLLM skips it).
 */
#include <string.h>

#include "shardmap/family_rules.h"

#define EG_L0  "model.layers.0."
#define EG_D2T "draft_id_to_target_id"
/* layer 0's q / k / v ([embeds; hidden]: 2 x hidden_size columns); the biases are any layer's */
#define EG_QKV0(x, part, d)                                                                        \
	SM_RULE(EG_L0 "self_attn." x "_proj.weight", EG_L0 "self_attn.qkv_proj.weight", SM_K_QKV,  \
	        part, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, d, SM_D_HID2)

static const sm_rule eagle3_rules[] = {
    /* layer 0 first: its names also match the {i} rules below */
    EG_QKV0("q", 0, SM_D_Q),
    EG_QKV0("k", 1, SM_D_KV),
    EG_QKV0("v", 2, SM_D_KV),
    SM_RULE(EG_L0 "hidden_norm.weight", EG_L0 "hidden_norm.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    /* the later layers build a hidden_norm too, which their forward pass never reads */
    SM_RULE(SM_LAYER "hidden_norm.weight", SM_LAYER "hidden_norm.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, SM_F_OPT, 1, SM_D_HID, SM_D_ANY),
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    SM_QKV_BS("q", 0, SM_D_Q),
    SM_QKV_BS("k", 1, SM_D_KV),
    SM_QKV_BS("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    SM_RULE(SM_LAYER "self_attn.o_proj.bias", SM_LAYER "self_attn.o_proj.bias", SM_K_REPL, 0,
            SM_U_NONE, SM_C_OUTBIAS, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_LNORM,
    SM_RULES_MLP_SWITCHED,
    SM_RULE("model.fc.weight", "model.fc.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_EAGLEFC, SM_F_QUANT,
            2, SM_D_HID, SM_D_EFC),
    SM_RULE("model.norm.weight", "model.norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1,
            SM_D_HID, SM_D_ANY),
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, SM_F_OPT, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_OPT, 2,
            SM_D_DV, SM_D_HID),
    SM_RULE(EG_D2T, EG_D2T, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_OPT, 1, SM_D_DV, SM_D_ANY),
};

/* The draft module's names and vLLM's (model. before all but lm_head; d2t renamed); a
 * checkpoint with midlayer. (vLLM's layers.0.) is read with the second table. */
#define EG_ALIASES_TOP                                                                             \
	"fc.", "model.fc.", "norm.", "model.norm.", "embed_tokens.", "model.embed_tokens.", "d2t", \
	    EG_D2T
static const char *const eagle3_aliases[] = {"layers.", "model.layers.", EG_ALIASES_TOP, NULL};
static const char *const eagle3_mid_aliases[] = {"midlayer.", EG_L0, EG_ALIASES_TOP, NULL};

bool shardmap_int_kept(const sm_family *f, const sm_rule *r, const ckpt_tensor *t)
{
	return f != NULL && f->int_keep != NULL && strcmp(r->runtime, f->int_keep) == 0 &&
	       t->dtype == WT_I64;
}

/* fc is skipped by vLLM when eagle_config.use_aux_hidden_state is false */
static bool eagle3_drop(const ckpt_config *c, const char *cn)
{
	return !c->eagle_aux && strncmp(cn, "model.fc.", 9) == 0;
}

/* Before any tensor is mapped (the layer_dims hook, which leaves every layer the model's
 * sizes): a model.-prefixed name refused. */
static int eagle3_names(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	*out = NULL;
	for (size_t k = 0; k < ckpt_n_tensors(c); k++) {
		const char *n = ckpt_tensor_at(c, k)->name;
		if (strncmp(n, "model.", 6) == 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': an EAGLE draft's names are the draft module's "
			    "(midlayer. or layers.N., fc., norm., embed_tokens., lm_head.): "
			    "vLLM's llama_eagle3.py / llama_eagle.py put model. before them "
			    "itself; rename it without model.",
			    n);
	}
	return WT_OK;
}

static const char *const eagle3_archs[] = {"Eagle3LlamaForCausalLM", "LlamaForCausalLMEagle3",
                                           "Eagle3Qwen2_5vlForCausalLM", "Eagle3Qwen3vlForCausalLM",
                                           NULL};

static const sm_family eagle3_mid = {
    .name = "llama_eagle3",
    .archs = eagle3_archs,
    .rules = eagle3_rules,
    .n_rules = SM_NRULES(eagle3_rules),
    .layer_prefix = "model.layers.",
    .aliases = eagle3_mid_aliases,
    .drop_prefix = "t2d",
    .drop_canon = eagle3_drop,
    .layer_dims = eagle3_names,
    .int_keep = EG_D2T,
    .out_bias_key = "attention_bias or bias",
};

const sm_family shardmap_family_llama_eagle3 = {
    .name = "llama_eagle3",
    .archs = eagle3_archs,
    .rules = eagle3_rules,
    .n_rules = SM_NRULES(eagle3_rules),
    .layer_prefix = "model.layers.",
    .aliases = eagle3_aliases,
    .drop_prefix = "t2d",
    .drop_canon = eagle3_drop,
    .layer_dims = eagle3_names,
    .int_keep = EG_D2T,
    .out_bias_key = "attention_bias or bias",
    .prefix_variant = &eagle3_mid,
    .prefix_at = "midlayer.",
};

/*
 * EAGLE-1 draft heads for Llama targets (EagleLlamaForCausalLM: the name vLLM's registry maps onto
 * llama_eagle.py; vLLM's EAGLEConfig gives a draft that name when the speculative method is
 * eagle), cut as that file loads them: the draft module's names (layers.N., fc., embed_tokens.)
 * under vLLM's (model. before every one); Llama's decoder layers (its table: optional biases)
 * without layer 0's input_layernorm (an Identity: vLLM has no parameter for a stored one and
 * fails on it, so it is refused); fc an nn.Linear [hid, 2 x hid] (bias=False), whole on every
 * rank and never quantized (no quant_config reaches it); embed_tokens skipped (vLLM shares the
 * target's unless pipeline-parallel, which a layout here never is). No final norm, no lm_head,
 * no fc bias: vLLM's loader fails on each (unknown here).
 */
static const sm_rule eagle1_rules[] = {
    SM_RULE("model.fc.weight", "model.fc.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_HID,
            SM_D_HID2),
    /* layer 0's is an Identity */
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_MBLATER, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "post_attention_layernorm.weight", SM_LAYER "post_attention_layernorm.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
};

static const char *const eagle1_aliases[] = {
    "layers.", "model.layers.", "fc.", "model.fc.", "embed_tokens.", "model.embed_tokens.", NULL,
};

static bool eagle1_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strcmp(cn, "model.embed_tokens.weight") == 0;
}

static const char *const eagle1_archs[] = {"EagleLlamaForCausalLM", NULL};

const sm_family shardmap_family_llama_eagle = {
    .name = "llama_eagle",
    .archs = eagle1_archs,
    .rules = eagle1_rules,
    .n_rules = SM_NRULES(eagle1_rules),
    .layer_prefix = "model.layers.",
    .aliases = eagle1_aliases,
    .drop_canon = eagle1_drop,
    .layer_dims = eagle3_names,
};
