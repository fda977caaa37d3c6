/*
 * family_neox.c — GPT-NeoX (GPTNeoXForCausalLM, transformers 4.57.1 modeling_gpt_neox.py:
 * EleutherAI Pythia, GPT-NeoX-20B), cut as vLLM's gpt_neox.py loads it, and Phi
 * (PhiForCausalLM, modeling_phi.py: microsoft/phi-2, phi-1_5), cut as vLLM's phi.py loads it,
 * and Persimmon (PersimmonForCausalLM, modeling_persimmon.py), cut as vLLM's persimmon.py does,
 * and Fuyu (FuyuForCausalLM: Persimmon under language_model. and vision_embed_tokens).
 *
 * Names stay the checkpoint's (gpt_neox.*, embed_out). attention.query_key_value
 * [3*hid, hid] holds its rows per head, [H, 3, d] (head h's q, k, v at rows h*3d, h*3d + d,
 * h*3d + 2d); vLLM's load_weights views it (H, 3, d), swaps the two axes into [q; k; v]
 * and QKVParallelLinear cuts that, so rank r holds [q_r; k_r; v_r] of its heads
 * [r*H/T, (r+1)*H/T) (SM_K_QKVH), its bias alike; attention.dense by columns (bias
 * replicated); mlp.dense_h_to_4h by rows with its bias, dense_4h_to_h by columns (bias
 * replicated); the four LayerNorms' weights and biases replicated; embed_in / embed_out by
 * vocabulary rows. The old attention.bias / attention.masked_bias buffers (Pythia's
 * checkpoints) are skipped, as transformers and vLLM skip them.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"

int shardmap_check_head_quotient(const ckpt_config *c, const char *hid, const char *heads,
                                 const char *dim, wt_errbuf *err)
{
	if (c->num_attention_heads <= 0 || c->hidden_size % c->num_attention_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs %s (%" PRId64 ") divisible by %s (%" PRId64
		                 "): its head size is their quotient",
		                 c->architecture, hid, c->hidden_size, heads,
		                 c->num_attention_heads);
	int64_t q = c->hidden_size / c->num_attention_heads;
	if (c->head_dim == q)
		return WT_OK;
	if (strcmp(dim, "head_dim") == 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: head_dim %" PRId64 " is not %s / %s = %" PRId64
		                 "; %s has no head_dim key: remove it",
		                 c->head_dim, hid, heads, q, c->architecture);
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: %s %" PRId64 " is not %s / %s = %" PRId64
	                 "; %s builds its heads of the latter: fix %s",
	                 dim, c->head_dim, hid, heads, q, c->architecture, dim);
}

#define NX_LAYER      "gpt_neox.layers.{i}."
#define NX_REPL(x, c) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, c, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule gpt_neox_rules[] = {
    SM_RULE("gpt_neox.embed_in.weight", "gpt_neox.embed_in.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("embed_out.weight", "embed_out.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD,
            2, SM_D_V, SM_D_HID),
    NX_REPL("gpt_neox.final_layer_norm.weight", SM_C_ALL),
    NX_REPL("gpt_neox.final_layer_norm.bias", SM_C_ALL),
    NX_REPL(NX_LAYER "input_layernorm.weight", SM_C_ALL),
    NX_REPL(NX_LAYER "input_layernorm.bias", SM_C_ALL),
    NX_REPL(NX_LAYER "post_attention_layernorm.weight", SM_C_ALL),
    NX_REPL(NX_LAYER "post_attention_layernorm.bias", SM_C_ALL),
    SM_RULE(NX_LAYER "attention.query_key_value.weight",
            NX_LAYER "attention.query_key_value.weight", SM_K_QKVH, 0, SM_U_HEADS, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),
    SM_RULE(NX_LAYER "attention.query_key_value.bias", NX_LAYER "attention.query_key_value.bias",
            SM_K_QKVH, 0, SM_U_HEADS, SM_C_ATTNBIAS, 0, 1, SM_D_QKV, SM_D_ANY),
    SM_RULE(NX_LAYER "attention.dense.weight", NX_LAYER "attention.dense.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    NX_REPL(NX_LAYER "attention.dense.bias", SM_C_ATTNBIAS),
    SM_RULE(NX_LAYER "mlp.dense_h_to_4h.weight", NX_LAYER "mlp.dense_h_to_4h.weight", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(NX_LAYER "mlp.dense_h_to_4h.bias", NX_LAYER "mlp.dense_h_to_4h.bias", SM_K_ROWS, 0,
            SM_U_I, SM_C_ALL, 0, 1, SM_D_I, SM_D_ANY),
    SM_RULE(NX_LAYER "mlp.dense_4h_to_h.weight", NX_LAYER "mlp.dense_4h_to_h.weight", SM_K_COLS, 0,
            SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    NX_REPL(NX_LAYER "mlp.dense_4h_to_h.bias", SM_C_ALL),
};

/* GPTNeoXAttention's head_size is hidden_size / num_attention_heads (no head_dim key) and
 * it has no grouped kv heads: both checked before the table's shapes. */
static int gpt_neox_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " differs from num_attention_heads %" PRId64
		                 "; GPTNeoXForCausalLM has no grouped kv heads: remove the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

static const char *const gpt_neox_archs[] = {"GPTNeoXForCausalLM", NULL};
static const char *const gpt_neox_drop[] = {"attention.bias", "attention.masked_bias", NULL};

/* GPTNeoXConfig unties by default (tie_word_embeddings=False) */
const sm_family shardmap_family_gpt_neox = {
    .name = "gpt_neox",
    .archs = gpt_neox_archs,
    .rules = gpt_neox_rules,
    .n_rules = SM_NRULES(gpt_neox_rules),
    .layer_prefix = "gpt_neox.layers.",
    .check = gpt_neox_check,
    .drop_suffixes = gpt_neox_drop,
};

/* Phi (vLLM phi.py): Llama's q/k/v fused by heads into self_attn.qkv_proj (weights and biases,
 * always there), self_attn.dense by columns (bias replicated), mlp.fc1 by rows with its bias,
 * mlp.fc2 by columns (bias replicated), one input_layernorm per layer and
 * model.final_layernorm with biases replicated, lm_head's weight and bias [V] by vocabulary
 * rows (the bias 1-D, padding entries zero, kept when tied: it is no part of the tie). */
#define PHI_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define PHI_QKV_B(x, part, d)                                                                      \
	SM_RULE(SM_LAYER "self_attn." x "_proj.bias", SM_LAYER "self_attn.qkv_proj.bias",          \
	        SM_K_QKV, part, SM_U_HEADS, SM_C_ALL, 0, 1, d, SM_D_ANY)
static const sm_rule phi_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULE("lm_head.bias", "lm_head.bias", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_V,
            SM_D_ANY),
    PHI_REPL("model.final_layernorm.weight"),
    PHI_REPL("model.final_layernorm.bias"),
    PHI_REPL(SM_LAYER "input_layernorm.weight"),
    PHI_REPL(SM_LAYER "input_layernorm.bias"),
    SM_QKV_W("q", 0, SM_D_Q),
    SM_QKV_W("k", 1, SM_D_KV),
    SM_QKV_W("v", 2, SM_D_KV),
    PHI_QKV_B("q", 0, SM_D_Q),
    PHI_QKV_B("k", 1, SM_D_KV),
    PHI_QKV_B("v", 2, SM_D_KV),
    SM_RULE(SM_LAYER "self_attn.dense.weight", SM_LAYER "self_attn.dense.weight", SM_K_COLS, 0,
            SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),
    PHI_REPL(SM_LAYER "self_attn.dense.bias"),
    SM_RULE(SM_LAYER "mlp.fc1.weight", SM_LAYER "mlp.fc1.weight", SM_K_ROWS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "mlp.fc1.bias", SM_LAYER "mlp.fc1.bias", SM_K_ROWS, 0, SM_U_I, SM_C_ALL, 0, 1,
            SM_D_I, SM_D_ANY),
    SM_RULE(SM_LAYER "mlp.fc2.weight", SM_LAYER "mlp.fc2.weight", SM_K_COLS, 0, SM_U_I, SM_C_ALL,
            SM_F_QUANT, 2, SM_D_HID, SM_D_I),
    PHI_REPL(SM_LAYER "mlp.fc2.bias"),
};

/* vLLM's PhiAttention builds QKVParallelLinear over num_attention_heads heads of
 * hidden_size / heads (no kv-head grouping, no head_dim key) and no q_layernorm /
 * k_layernorm: configs it cannot load are refused here. */
static int phi_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_key_value_heads %" PRId64
		    " differs from num_attention_heads %" PRId64
		    "; vLLM's phi.py builds q/k/v over num_attention_heads only: remove "
		    "the key or set it to num_attention_heads",
		    c->num_key_value_heads, c->num_attention_heads);
	if (c->qk_layernorm)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: qk_layernorm true; vLLM's phi.py builds no "
		    "q_layernorm / k_layernorm (phi-1_5 / phi-2 say false): set it false");
	return WT_OK;
}

static const char *const phi_archs[] = {"PhiForCausalLM", NULL};

/* PhiConfig unties by default (tie_word_embeddings=False) */
const sm_family shardmap_family_phi = {
    .name = "phi",
    .archs = phi_archs,
    .rules = phi_rules,
    .n_rules = SM_NRULES(phi_rules),
    .layer_prefix = "model.layers.",
    .check = phi_check,
};

/* Persimmon (PersimmonForCausalLM, modeling_persimmon.py: adept/persimmon-8b-base, -chat), cut
 * as vLLM's persimmon.py loads it: GPT-NeoX's self_attn.query_key_value [H, 3, d] rows per head
 * (viewed (H, 3, d) and swapped into [q; k; v] by load_weights) with its bias, by heads into
 * [q_r; k_r; v_r] (SM_K_QKVH); self_attn.dense by columns (bias replicated); with qk_layernorm
 * (PersimmonConfig's default true) self_attn.q_layernorm / k_layernorm [d] weights and biases,
 * one LayerNorm over head_dim shared by every head, replicated; mlp.dense_h_to_4h by rows with
 * its bias, mlp.dense_4h_to_h by columns (bias replicated); input_layernorm,
 * post_attention_layernorm and model.final_layernorm with biases replicated; embed_tokens and
 * the untied lm_head (no bias) by vocabulary rows. */
#define PS_QKLN(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_QKLN, 0, 1, SM_D_HD, SM_D_ANY)
/* Persimmon's table under top ("" for PersimmonForCausalLM, "language_model." for Fuyu's
 * language model); PS_L is its layer prefix. */
#define PS_L(top) top "model.layers.{i}."
#define PS_RULES(top)                                                                              \
	SM_RULE(top "model.embed_tokens.weight", top "model.embed_tokens.weight", SM_K_VOCAB, 0,   \
	        SM_U_NONE, SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),                                      \
	    SM_RULE(top "lm_head.weight", top "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE,          \
	            SM_C_ALL, SM_F_LMHEAD, 2, SM_D_V, SM_D_HID),                                   \
	    PHI_REPL(top "model.final_layernorm.weight"),                                          \
	    PHI_REPL(top "model.final_layernorm.bias"),                                            \
	    PHI_REPL(PS_L(top) "input_layernorm.weight"),                                          \
	    PHI_REPL(PS_L(top) "input_layernorm.bias"),                                            \
	    PHI_REPL(PS_L(top) "post_attention_layernorm.weight"),                                 \
	    PHI_REPL(PS_L(top) "post_attention_layernorm.bias"),                                   \
	    SM_RULE(PS_L(top) "self_attn.query_key_value.weight",                                  \
	            PS_L(top) "self_attn.query_key_value.weight", SM_K_QKVH, 0, SM_U_HEADS,        \
	            SM_C_ALL, SM_F_QUANT, 2, SM_D_QKV, SM_D_HID),                                  \
	    SM_RULE(PS_L(top) "self_attn.query_key_value.bias",                                    \
	            PS_L(top) "self_attn.query_key_value.bias", SM_K_QKVH, 0, SM_U_HEADS,          \
	            SM_C_ALL, 0, 1, SM_D_QKV, SM_D_ANY),                                           \
	    PS_QKLN(PS_L(top) "self_attn.q_layernorm.weight"),                                     \
	    PS_QKLN(PS_L(top) "self_attn.q_layernorm.bias"),                                       \
	    PS_QKLN(PS_L(top) "self_attn.k_layernorm.weight"),                                     \
	    PS_QKLN(PS_L(top) "self_attn.k_layernorm.bias"),                                       \
	    SM_RULE(PS_L(top) "self_attn.dense.weight", PS_L(top) "self_attn.dense.weight",        \
	            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),          \
	    PHI_REPL(PS_L(top) "self_attn.dense.bias"),                                            \
	    SM_RULE(PS_L(top) "mlp.dense_h_to_4h.weight", PS_L(top) "mlp.dense_h_to_4h.weight",    \
	            SM_K_ROWS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),              \
	    SM_RULE(PS_L(top) "mlp.dense_h_to_4h.bias", PS_L(top) "mlp.dense_h_to_4h.bias",        \
	            SM_K_ROWS, 0, SM_U_I, SM_C_ALL, 0, 1, SM_D_I, SM_D_ANY),                       \
	    SM_RULE(PS_L(top) "mlp.dense_4h_to_h.weight", PS_L(top) "mlp.dense_4h_to_h.weight",    \
	            SM_K_COLS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),              \
	    PHI_REPL(PS_L(top) "mlp.dense_4h_to_h.bias")
static const sm_rule persimmon_rules[] = {PS_RULES("")};

/* vLLM's PersimmonAttention: num_attention_heads heads of hidden_size / heads, no kv-head
 * grouping, no head_dim key. */
static int persimmon_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq =
	    shardmap_check_head_quotient(c, "hidden_size", "num_attention_heads", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " differs from num_attention_heads %" PRId64
		                 "; PersimmonForCausalLM has no grouped kv heads: remove the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	return WT_OK;
}

static const char *const persimmon_archs[] = {"PersimmonForCausalLM", NULL};

/* PersimmonConfig unties by default (tie_word_embeddings=False) */
const sm_family shardmap_family_persimmon = {
    .name = "persimmon",
    .archs = persimmon_archs,
    .rules = persimmon_rules,
    .n_rules = SM_NRULES(persimmon_rules),
    .layer_prefix = "model.layers.",
    .check = persimmon_check,
};

/* Fuyu (FuyuForCausalLM, modeling_fuyu.py: adept/fuyu-8b), cut as vLLM's fuyu.py /
 * persimmon.py load it: Persimmon's table under `language_model.` (vLLM builds
 * PersimmonForCausalLM of text_config) and vision_embed_tokens, the Linear from a patch's
 * num_channels x patch_size^2 pixels to hidden_size: a ColumnParallelLinear
 * (gather_output=True) with the quantization config, so its weight [hid, VUNF] by rows and
 * quantized, its bias [hid] by rows. Rules are written in the released checkpoint's names
 * (`language_model.model.*`, `language_model.lm_head.weight`, `vision_embed_tokens.*`, vLLM's
 * module names, which transformers 4.57.1's save_pretrained writes too); its modules'
 * (`model.language_model.*`, `lm_head.weight`, `model.vision_embed_tokens.*`, which
 * FuyuForCausalLM's _checkpoint_conversion_mapping loads the released names into and which it
 * also loads as they are) map onto them. The tie is text_config.tie_word_embeddings
 * (PersimmonConfig's default false) when there is a text_config, the top level's otherwise
 * (FuyuConfig builds text_config of the top-level keys then). */
static const sm_rule fuyu_rules[] = {
    PS_RULES("language_model."),
    SM_RULE("vision_embed_tokens.weight", "vision_embed_tokens.weight", SM_K_ROWS, 0, SM_U_HID,
            SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_VUNF),
    SM_RULE("vision_embed_tokens.bias", "vision_embed_tokens.bias", SM_K_ROWS, 0, SM_U_HID,
            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
};

/* Persimmon's checks; a persimmon text_config (vLLM's fuyu.py builds PersimmonForCausalLM
 * whatever it says); vision_embed_tokens' output (the top-level hidden_size, FuyuConfig's
 * default 4096) as wide as the language model's embeddings, which it is added among. */
static int fuyu_check(const ckpt_config *c, wt_errbuf *err)
{
	if (strcmp(c->lm_model_type, "persimmon") != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: text_config.model_type '%s': vLLM's fuyu.py builds "
		    "PersimmonForCausalLM; only a persimmon language model is supported",
		    c->lm_model_type);
	if (c->v_hidden_size != c->hidden_size)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_size %" PRId64
		    " (vision_embed_tokens' output, FuyuConfig's default 4096) differs "
		    "from text_config.hidden_size %" PRId64
		    "; FuyuForCausalLM puts the patch embeddings among the language "
		    "model's: give both the same",
		    c->v_hidden_size, c->hidden_size);
	return persimmon_check(c, err);
}

static const char *const fuyu_archs[] = {"FuyuForCausalLM", NULL};

/* transformers >= 4.52 checkpoint prefix -> the released (canonical) prefix */
static const char *const fuyu_aliases[] = {"model.language_model.",
                                           "language_model.model.",
                                           "model.vision_embed_tokens.",
                                           "vision_embed_tokens.",
                                           "lm_head.",
                                           "language_model.lm_head.",
                                           NULL};

const sm_family shardmap_family_fuyu = {
    .name = "fuyu",
    .archs = fuyu_archs,
    .rules = fuyu_rules,
    .n_rules = SM_NRULES(fuyu_rules),
    .layer_prefix = "language_model.model.layers.",
    .check = fuyu_check,
    .aliases = fuyu_aliases,
    .fuyu = true,
};
