/*
 * family_gemma3n.c — Gemma 3n's language model (Gemma3nForCausalLM, model_type gemma3n_text:
 * the text model of google/gemma-3n-E2B / E4B; docs/format.md section 2.7), as transformers
 * 4.57.1's modeling_gemma3n.py lays it out and vLLM's gemma3n.py loads it.
 *
 * Every Linear is built with the quantization config (vLLM's Gemma3nTextModel is
 * SupportsQuant and hands quant_config to each), so every Linear weight is quantized here; the
 * norms, correct_output_scale and both embeddings never:
 * - model.embed_tokens [V, hid] and model.embed_tokens_per_layer [vocab_size_per_layer_input,
 *   L x P] by vocabulary rows (VocabParallelEmbedding, each padded by its own rows); the LM
 *   head always tied to embed_tokens (vLLM's logits use it whatever the config says: an
 *   lm_head.weight is dropped, tie_word_embeddings false refused by the loader);
 * - per_layer_model_projection [L x P, hid] and altup_projections.{j} /
 *   altup_unembed_projections.{j} [hid, hid] (j < altup_num_inputs - 1) by rows
 *   (ColumnParallelLinear with gather_output); per_layer_projection_norm [P] and model.norm
 *   replicated;
 * - per layer: q / k / v fused by heads into self_attn.qkv_proj (their biases with
 *   attention_bias), o_proj by columns, q_norm / k_norm [head_dim] replicated (v_norm has no
 *   weight); mlp.gate / up fused into gate_up_proj by rows, down_proj by columns;
 *   laurel.linear_left [laurel_rank, hid] by rows (ColumnParallelLinear), linear_right
 *   [hid, laurel_rank] by columns (RowParallelLinear); altup.correction_coefs [N, N],
 *   prediction_coefs [N^2, N], modality_router [N, hid] (N = altup_num_inputs) and
 *   per_layer_input_gate [P, hid] / per_layer_projection [hid, P] whole on every rank
 *   (ReplicatedLinear); the seven RMSNorms and altup.correct_output_scale [hid] replicated.
 * The KV-shared layers (the last num_kv_shared_layers) keep their k / v weights: vLLM builds
 * and loads them as every layer's (their attention reads an earlier layer's cache).
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define G3N_REPL(n, nd, d0, d1, fl) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, fl, nd, d0, d1)
#define G3N_NORM(n)                 G3N_REPL(SM_LAYER n ".weight", 1, SM_D_HID, SM_D_ANY, 0)
#define G3N_ROWS(n, u, d0, d1)      SM_RULE(n, n, SM_K_ROWS, 0, u, SM_C_ALL, SM_F_QUANT, 2, d0, d1)

static const sm_rule gemma3n_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    G3N_REPL("model.norm.weight", 1, SM_D_HID, SM_D_ANY, 0),
    SM_RULE("model.embed_tokens_per_layer.weight", "model.embed_tokens_per_layer.weight",
            SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_G3NVP, SM_D_G3NLP),
    G3N_ROWS("model.per_layer_model_projection.weight", SM_U_G3NLP, SM_D_G3NLP, SM_D_HID),
    G3N_REPL("model.per_layer_projection_norm.weight", 1, SM_D_G3NP, SM_D_ANY, 0),
    G3N_ROWS("model.altup_projections.{j}.weight", SM_U_HID, SM_D_HID, SM_D_HID),
    G3N_ROWS("model.altup_unembed_projections.{j}.weight", SM_U_HID, SM_D_HID, SM_D_HID),
    /* the layers */
    G3N_NORM("input_layernorm"),
    G3N_NORM("post_attention_layernorm"),
    G3N_NORM("pre_feedforward_layernorm"),
    G3N_NORM("post_feedforward_layernorm"),
    G3N_NORM("post_per_layer_input_norm"),
    SM_RULES_ATTN_SWITCHED,
    SM_RULES_QK_NORM,
    SM_RULES_MLP_NOBIAS,
    G3N_ROWS(SM_LAYER "laurel.linear_left.weight", SM_U_G3NLR, SM_D_G3NLR, SM_D_HID),
    SM_RULE(SM_LAYER "laurel.linear_right.weight", SM_LAYER "laurel.linear_right.weight", SM_K_COLS,
            0, SM_U_G3NLR, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_G3NLR),
    G3N_NORM("laurel.post_laurel_norm"),
    G3N_REPL(SM_LAYER "altup.correct_output_scale", 1, SM_D_HID, SM_D_ANY, 0),
    G3N_NORM("altup.router_norm"),
    G3N_REPL(SM_LAYER "altup.correction_coefs.weight", 2, SM_D_G3NA, SM_D_G3NA, SM_F_QUANT),
    G3N_REPL(SM_LAYER "altup.prediction_coefs.weight", 2, SM_D_G3NA2, SM_D_G3NA, SM_F_QUANT),
    G3N_REPL(SM_LAYER "altup.modality_router.weight", 2, SM_D_G3NA, SM_D_HID, SM_F_QUANT),
    G3N_REPL(SM_LAYER "per_layer_input_gate.weight", 2, SM_D_G3NP, SM_D_HID, SM_F_QUANT),
    G3N_REPL(SM_LAYER "per_layer_projection.weight", 2, SM_D_HID, SM_D_G3NP, SM_F_QUANT),
};

/* altup_projections.{j} / altup_unembed_projections.{j}: one per stream past the first. */
static bool g3n_stream(const ckpt_config *c, int64_t i, int64_t j)
{
	(void)i;
	return j >= 0 && j < c->g3n_altup - 1;
}

/* The KV-shared layers read the cache of the last layer of their type before them; vLLM
 * names it as the layer one before the first shared one (full_attention) or two before
 * (sliding_attention): refused where transformers would pick another. */
static int g3n_kv_sharing(const ckpt_config *c, wt_errbuf *err)
{
	int64_t first = c->num_hidden_layers - c->g3n_kv_shared;
	if (c->g3n_kv_shared == 0)
		return WT_OK;
	for (int64_t i = first; i < c->num_hidden_layers; i++) {
		bool full = c->layer_types[i] == CKPT_LAYER_FULL_ATTN;
		int64_t src = first - (full ? 1 : 2);
		if (src < 0 || c->layer_types[src] != c->layer_types[i])
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: Gemma 3n's layer %" PRId64
			    " shares keys and values (num_kv_shared_layers %" PRId64
			    ") with the last %s layer before layer %" PRId64
			    ", which vLLM takes to be layer %" PRId64
			    " (its layer_types disagree); give layer_types / num_kv_shared_layers "
			    "as the released models do",
			    i, c->g3n_kv_shared, full ? "full_attention" : "sliding_attention",
			    first, src);
	}
	return WT_OK;
}

static int g3n_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->g3n_altup < 1 || c->g3n_laurel < 1 || c->g3n_ple < 1 || c->g3n_ple_vocab < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Gemma 3n needs altup_num_inputs, laurel_rank, "
		                 "hidden_size_per_layer_input and vocab_size_per_layer_input >= 1 "
		                 "(model_type gemma3n_text reads them)");
	if (c->g3n_altup - 1 > c->num_hidden_layers)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Gemma 3n's altup_num_inputs %" PRId64
		                 " is past num_hidden_layers + 1 (%" PRId64
		                 "): the planner counts AltUp's projections by layers",
		                 c->g3n_altup, c->num_hidden_layers + 1);
	int rv = shardmap_check_swa_layer_types(c, "Gemma 3n", err);
	if (rv == WT_OK && !c->has_layer_types)
		rv = wt_seterr(err, WT_ECORRUPT, "config.json: Gemma 3n needs layer_types");
	return rv == WT_OK ? g3n_kv_sharing(c, err) : rv;
}

static const char *const gemma3n_archs[] = {"Gemma3nForCausalLM", NULL};

const sm_family shardmap_family_gemma3n_text = {
    .name = "gemma3n_text",
    .archs = gemma3n_archs,
    .rules = gemma3n_rules,
    .n_rules = SM_NRULES(gemma3n_rules),
    .layer_prefix = "model.layers.",
    .check = g3n_check,
    .tie_default = true,
    .j_holds = g3n_stream,
    .j_key = "altup_num_inputs - 1 (AltUp's projections)",
};
