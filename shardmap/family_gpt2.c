/*
 * family_gpt2.c — GPT-2 (GPT2LMHeadModel, transformers 4.57.1 modeling_gpt2.py:
 * openai-community/gpt2 ... gpt2-xl, distilgpt2), cut as vLLM's gpt2.py loads it.
 *
 * Names stay the checkpoint's (transformer.*, lm_head). GPT-2's linears are Conv1D, stored
 * [in, out]; vLLM's load_weights transposes every c_attn / c_proj / c_fc weight (.t()) before
 * its weight loader, so the runtime tensors are [out, in] as nn.Linear's (SM_F_TRANS: the
 * 2-D weight viewed and produced transposed, as DBRX's w2 is per expert). attn.c_attn then
 * holds [q; k; v] rows, cut by QKVParallelLinear into [q_r; k_r; v_r] (SM_K_QKVC), its bias
 * alike; attn.c_proj by columns (RowParallelLinear, bias replicated); mlp.c_fc by rows with
 * its bias (ColumnParallelLinear), mlp.c_proj by columns (bias replicated); ln_1 / ln_2 /
 * ln_f with their biases and the learned positions wpe (nn.Embedding) replicated; wte by
 * vocabulary rows, lm_head tied to it by default (GPT2Config). The old attn.bias /
 * attn.masked_bias buffers are skipped, and a checkpoint written without the transformer.
 * prefix (h.{i}., wte., wpe., ln_f.: openai-community/gpt2's own files) is read under it,
 * as vLLM prefixes such names.
 *
 * GPT2ForSequenceClassification (below): GPT2Model by these rules, then the score head.
 * GPTBigCode (below): the same names with nn.Linear weights and one kv head.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define G2_LAYER   "transformer.h.{i}."
#define G2_REPL(x) SM_RULE(x, x, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)
#define G2_CONV    (SM_F_QUANT | SM_F_TRANS)

#define G2_WTE                                                                                     \
	SM_RULE("transformer.wte.weight", "transformer.wte.weight", SM_K_VOCAB, 0, SM_U_NONE,      \
	        SM_C_ALL, 0, 2, SM_D_V, SM_D_HID)
/* The learned positions wpe (nn.Embedding, replicated) where cond holds */
#define G2_WPE(cond)                                                                               \
	SM_RULE("transformer.wpe.weight", "transformer.wpe.weight", SM_K_REPL, 0, SM_U_NONE, cond, \
	        0, 2, SM_D_ANY, SM_D_HID)
/* ln_f, the blocks' LayerNorms and attention */
#define G2_NORMS_ATTN                                                                              \
	G2_REPL("transformer.ln_f.weight"), G2_REPL("transformer.ln_f.bias"),                      \
	    G2_REPL(G2_LAYER "ln_1.weight"), G2_REPL(G2_LAYER "ln_1.bias"),                        \
	    G2_REPL(G2_LAYER "ln_2.weight"), G2_REPL(G2_LAYER "ln_2.bias"),                        \
	    SM_RULE(G2_LAYER "attn.c_attn.weight", G2_LAYER "attn.c_attn.weight", SM_K_QKVC, 0,    \
	            SM_U_HEADS, SM_C_ALL, G2_CONV, 2, SM_D_QKV, SM_D_HID),                         \
	    SM_RULE(G2_LAYER "attn.c_attn.bias", G2_LAYER "attn.c_attn.bias", SM_K_QKVC, 0,        \
	            SM_U_HEADS, SM_C_ALL, 0, 1, SM_D_QKV, SM_D_ANY),                               \
	    SM_RULE(G2_LAYER "attn.c_proj.weight", G2_LAYER "attn.c_proj.weight", SM_K_COLS, 0,    \
	            SM_U_HEADS, SM_C_ALL, G2_CONV, 2, SM_D_HID, SM_D_Q),                           \
	    G2_REPL(G2_LAYER "attn.c_proj.bias")
/* A column-parallel Conv1D of the MLP (mlp.c_fc; JAIS's mlp.c_fc2) by rows, its bias alike */
#define G2_FC(leaf)                                                                                \
	SM_RULE(G2_LAYER "mlp." leaf ".weight", G2_LAYER "mlp." leaf ".weight", SM_K_ROWS, 0,      \
	        SM_U_I, SM_C_ALL, G2_CONV, 2, SM_D_I, SM_D_HID),                                   \
	    SM_RULE(G2_LAYER "mlp." leaf ".bias", G2_LAYER "mlp." leaf ".bias", SM_K_ROWS, 0,      \
	            SM_U_I, SM_C_ALL, 0, 1, SM_D_I, SM_D_ANY)
/* mlp.c_proj by columns, its bias replicated */
#define G2_MLP_PROJ                                                                                \
	SM_RULE(G2_LAYER "mlp.c_proj.weight", G2_LAYER "mlp.c_proj.weight", SM_K_COLS, 0, SM_U_I,  \
	        SM_C_ALL, G2_CONV, 2, SM_D_HID, SM_D_I),                                           \
	    G2_REPL(G2_LAYER "mlp.c_proj.bias")
/* GPT2Model's rules after wte: wpe, ln_f, the blocks */
#define G2_DECODER G2_WPE(SM_C_ALL), G2_NORMS_ATTN, G2_FC("c_fc"), G2_MLP_PROJ

static const sm_rule gpt2_rules[] = {
    G2_WTE,
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    G2_DECODER,
};

/* GPT2Attention's head_dim is n_embd / n_head (no head_dim key, no grouped kv heads); a
 * pre-quantized checkpoint's scales would describe the stored [in, out] Conv1D, not the
 * transposed weight vLLM loads (its gpt2.py notes the transpose "might break quantized
 * models"): refused. */
static int gpt2_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "n_embd", "n_head", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " differs from n_head %" PRId64
		                 "; %s has no grouped kv heads: remove the key",
		                 c->num_key_value_heads, c->num_attention_heads, c->architecture);
	if (c->quant != CKPT_QUANT_NONE)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: a quantized %s checkpoint is not read "
		                 "(its Conv1D weights are stored [in, out] and loaded transposed); "
		                 "shard the float checkpoint and quantize with the layout instead",
		                 c->architecture);
	return WT_OK;
}

static const char *const gpt2_archs[] = {"GPT2LMHeadModel", NULL};
static const char *const gpt2_drop[] = {"attn.bias", "attn.masked_bias", NULL};
/* openai-community/gpt2's files name the GPT2Model's tensors without transformer. */
static const char *const gpt2_aliases[] = {"h.",   "transformer.h.",   "wte.",  "transformer.wte.",
                                           "wpe.", "transformer.wpe.", "ln_f.", "transformer.ln_f.",
                                           NULL};

/* GPT2Config ties by default (PretrainedConfig's tie_word_embeddings=True) */
const sm_family shardmap_family_gpt2 = {
    .name = "gpt2",
    .archs = gpt2_archs,
    .rules = gpt2_rules,
    .n_rules = SM_NRULES(gpt2_rules),
    .layer_prefix = "transformer.h.",
    .check = gpt2_check,
    .drop_suffixes = gpt2_drop,
    .aliases = gpt2_aliases,
    .tie_default = true,
};

/* GPT2ForSequenceClassification (transformers' modeling_gpt2.py; vLLM's gpt2.py
 * GPT2ForSequenceClassification, a pooling model): GPT2Model under transformer. by GPT-2's
 * rules, then score = nn.Linear(n_embd, num_labels, bias=False) built without the quantization
 * config (vLLM keeps it in head_dtype): score.weight [num_labels, n_embd] whole on every rank
 * and never quantized; no score.bias. vLLM loads it by AutoWeightsLoader, which hands
 * transformer.* to GPT2Model.load_weights (the Conv1D transposes, attn.bias / masked_bias
 * skipped) and prefixes nothing: a name without transformer. (h.{i}., wte.) or an lm_head.*
 * is unknown, as GPT2ForSequenceClassification has no such module. */
static const sm_rule gpt2_cls_rules[] = {
    G2_WTE,
    G2_DECODER,
    SM_RULE("score.weight", "score.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_NLAB,
            SM_D_HID),
};

static int gpt2_cls_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = shardmap_check_labels(c, "score head", err);
	return rv != WT_OK ? rv : gpt2_check(c, err);
}

static const char *const gpt2_cls_archs[] = {"GPT2ForSequenceClassification", NULL};

const sm_family shardmap_family_gpt2_cls = {
    .name = "gpt2_cls",
    .archs = gpt2_cls_archs,
    .rules = gpt2_cls_rules,
    .n_rules = SM_NRULES(gpt2_cls_rules),
    .layer_prefix = "transformer.h.",
    .check = gpt2_cls_check,
    .drop_suffixes = gpt2_drop,
};

/* GPTBigCode (GPTBigCodeForCausalLM, modeling_gpt_bigcode.py: bigcode/starcoderbase,
 * santacoder), cut as vLLM's gpt_bigcode.py loads it: GPT-2's names and rules with nn.Linear
 * weights ([out, in], nothing transposed) and multi-query attention: attn.c_attn
 * [(H + 2)*d, hid] holds [q; k; v] rows with one kv head, which QKVParallelLinear (num_kv_heads
 * 1) replicates on every rank beside its H/T query heads (SM_K_QKVC with KV 1 < T), its bias
 * alike; multi_query false is refused by the loader (config_gpt2.c). */
#define BC_RULE(leaf, kind, unit, nd, d0, d1)                                                      \
	SM_RULE(G2_LAYER leaf, G2_LAYER leaf, kind, 0, unit, SM_C_ALL, nd == 2 ? SM_F_QUANT : 0,   \
	        nd, d0, d1)
static const sm_rule gpt_bigcode_rules[] = {
    SM_RULE("transformer.wte.weight", "transformer.wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULE("transformer.wpe.weight", "transformer.wpe.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,
            0, 2, SM_D_ANY, SM_D_HID),
    G2_REPL("transformer.ln_f.weight"),
    G2_REPL("transformer.ln_f.bias"),
    G2_REPL(G2_LAYER "ln_1.weight"),
    G2_REPL(G2_LAYER "ln_1.bias"),
    G2_REPL(G2_LAYER "ln_2.weight"),
    G2_REPL(G2_LAYER "ln_2.bias"),
    BC_RULE("attn.c_attn.weight", SM_K_QKVC, SM_U_HEADS, 2, SM_D_QKV, SM_D_HID),
    BC_RULE("attn.c_attn.bias", SM_K_QKVC, SM_U_HEADS, 1, SM_D_QKV, SM_D_ANY),
    BC_RULE("attn.c_proj.weight", SM_K_COLS, SM_U_HEADS, 2, SM_D_HID, SM_D_Q),
    G2_REPL(G2_LAYER "attn.c_proj.bias"),
    BC_RULE("mlp.c_fc.weight", SM_K_ROWS, SM_U_I, 2, SM_D_I, SM_D_HID),
    BC_RULE("mlp.c_fc.bias", SM_K_ROWS, SM_U_I, 1, SM_D_I, SM_D_ANY),
    BC_RULE("mlp.c_proj.weight", SM_K_COLS, SM_U_I, 2, SM_D_HID, SM_D_I),
    G2_REPL(G2_LAYER "mlp.c_proj.bias"),
};

/* GPTBigCodeAttention's head_dim is n_embd / n_head; one kv head (the loader sets
 * num_key_value_heads 1 from multi_query). */
static int gpt_bigcode_check(const ckpt_config *c, wt_errbuf *err)
{
	int hq = shardmap_check_head_quotient(c, "n_embd", "n_head", "head_dim", err);
	if (hq != WT_OK)
		return hq;
	if (c->num_key_value_heads != 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %" PRId64 " kv heads; GPTBigCodeForCausalLM is read "
		                 "multi-query only (one kv head): set multi_query true",
		                 c->num_key_value_heads);
	return WT_OK;
}

static const char *const gpt_bigcode_archs[] = {"GPTBigCodeForCausalLM", NULL};

/* GPTBigCodeConfig ties by default */
const sm_family shardmap_family_gpt_bigcode = {
    .name = "gpt_bigcode",
    .archs = gpt_bigcode_archs,
    .rules = gpt_bigcode_rules,
    .n_rules = SM_NRULES(gpt_bigcode_rules),
    .layer_prefix = "transformer.h.",
    .check = gpt_bigcode_check,
    .drop_suffixes = gpt2_drop,
    .aliases = gpt2_aliases,
    .tie_default = true,
};

/* JAIS (JAISLMHeadModel: inceptionai/jais-13b, jais-13b-chat, jais-30b-v3, the jais-family /
 * jais-adapted releases; remote modeling_jais.py), cut as vLLM's jais.py loads it: GPT-2's
 * names and Conv1D transposes (its load_weights .t()s every weight whose name holds c_attn,
 * c_proj or c_fc, so mlp.c_fc2 too), with the SwiGLU MLP's second input mlp.c_fc2, a
 * ColumnParallelLinear as c_fc (rows with its bias); wpe only with position_embedding_type
 * learned (SM_C_JWPE: none with ALiBi, whose slopes vLLM computes itself and whose
 * checkpoint buffer relative_pe.slopes it skips, as attn.bias / attn.masked_bias). lm_head is
 * wte (jais.py skips every lm_head.weight; tie_word_embeddings false is refused by the
 * loader, config_jais.c). Names without transformer. are read under it, as vLLM prefixes
 * them. GPT-2's checks (head_dim n_embd / n_head, no grouped kv heads, no pre-quantized
 * checkpoint: jais.py's transposes are GPT-2's). */
static const sm_rule jais_rules[] = {
    G2_WTE,
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    G2_WPE(SM_C_JWPE),
    G2_NORMS_ATTN,
    G2_FC("c_fc"),
    G2_FC("c_fc2"),
    G2_MLP_PROJ,
};

static const char *const jais_archs[] = {"JAISLMHeadModel", NULL};
static const char *const jais_drop[] = {"attn.bias", "attn.masked_bias", "relative_pe.slopes",
                                        NULL};

const sm_family shardmap_family_jais = {
    .name = "jais",
    .archs = jais_archs,
    .rules = jais_rules,
    .n_rules = SM_NRULES(jais_rules),
    .layer_prefix = "transformer.h.",
    .check = gpt2_check,
    .drop_suffixes = jais_drop,
    .aliases = gpt2_aliases,
    .tie_default = true,
};
