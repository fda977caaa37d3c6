/*
 * family_nogate.c — dense decoders whose MLP has no gate: down_proj(act(up_proj(x))).
 * Apertus (ApertusForCausalLM: xIELU with learned per-layer scalars) and Arcee
 * (ArceeForCausalLM: ReLU squared, AFM-4.5B), Nemotron (NemotronForCausalLM: ReLU squared,
 * LayerNorm1P norms with biases; Nemotron-4, Minitron), Jais 2 (Jais2ForCausalLM: ReLU squared,
 * nn.LayerNorm norms with biases; inceptionai/Jais-2-8B / -70B, base and Chat).
 *
 * The contract (spec/SHARDS.md) names only the merged gate_up; for an MLP without a gate
 * up_proj is column parallel and keeps its name (rows split by intermediate_size, as
 * gate_up's halves are), down_proj row parallel, as vLLM's apertus.py / arcee.py load them
 * (ColumnParallelLinear up_proj, RowParallelLinear down_proj): docs/format.md 2.7. Arcee's
 * mlp_bias biases follow: up_proj.bias by rows with its weight, down_proj.bias replicated.
 * Nemotron's as vLLM's nemotron.py loads them (q/k/v stacked into qkv_proj, up_proj
 * ColumnParallel, down_proj RowParallel, the LayerNorm1P weights and biases whole).
 */
#include "shardmap/family_rules.h"

/* up_proj rows / down_proj columns by intermediate_size; both quantized. */
#define NOGATE_MLP                                                                                 \
	SM_RULE(SM_LAYER "mlp.up_proj.weight", SM_LAYER "mlp.up_proj.weight", SM_K_ROWS, 0,        \
	        SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),                                \
	    SM_RULE(SM_LAYER "mlp.down_proj.weight", SM_LAYER "mlp.down_proj.weight", SM_K_COLS,   \
	            0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I)

/* A replicated scalar of xIELU (act_fn.X): a parameter [1] (alpha_p, alpha_n), or a
 * persistent buffer [] (beta, eps: optional, the class's constants when absent). */
#define XIELU_PARAM(x)                                                                             \
	SM_RULE(SM_LAYER "mlp.act_fn." x, SM_LAYER "mlp.act_fn." x, SM_K_REPL, 0, SM_U_NONE,       \
	        SM_C_ALL, 0, 1, SM_D_ONE, SM_D_ANY)
#define XIELU_BUFFER(x)                                                                            \
	SM_RULE(SM_LAYER "mlp.act_fn." x, SM_LAYER "mlp.act_fn." x, SM_K_REPL, 0, SM_U_NONE,       \
	        SM_C_ALL, SM_F_OPT, 0, SM_D_ANY, SM_D_ANY)

/* Apertus (modeling_apertus.py, transformers 4.57.1): attention_layernorm before the
 * attention, feedforward_layernorm before the MLP (RMSNorms [hid]); Llama's q/k/v/o with
 * their biases exactly when attention_bias; Qwen3's per-head q_norm / k_norm [d]; the MLP
 * up_proj / down_proj without biases; xIELU's alpha_p / alpha_n [1] and beta / eps []
 * replicated and never quantized. */
static const sm_rule apertus_rules[] = {
    SM_RULES_TOP,
    SM_RULE(SM_LAYER "attention_layernorm.weight", SM_LAYER "attention_layernorm.weight", SM_K_REPL,
            0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "feedforward_layernorm.weight", SM_LAYER "feedforward_layernorm.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULES_ATTN_SWITCHED,
    SM_RULES_QK_NORM,
    NOGATE_MLP,
    XIELU_PARAM("alpha_p"),
    XIELU_PARAM("alpha_n"),
    XIELU_BUFFER("beta"),
    XIELU_BUFFER("eps"),
};

static const char *const apertus_archs[] = {"ApertusForCausalLM", NULL};

/* ApertusConfig unties by default. */
const sm_family shardmap_family_apertus = {
    .name = "apertus",
    .archs = apertus_archs,
    .rules = apertus_rules,
    .n_rules = SM_NRULES(apertus_rules),
    .layer_prefix = "model.layers.",
};

/* Arcee (modeling_arcee.py, transformers 4.57.1): Llama's norms and attention (q/k/v/o biases
 * exactly when attention_bias), the MLP up_proj / down_proj without a gate, their biases
 * exactly when mlp_bias (ArceeMLP builds both Linears with bias=mlp_bias): up_proj.bias by
 * rows as its weight, down_proj.bias replicated (the engine adds it once). */
#define NOGATE_MLP_BIASES                                                                          \
	SM_RULE(SM_LAYER "mlp.up_proj.bias", SM_LAYER "mlp.up_proj.bias", SM_K_ROWS, 0, SM_U_I,    \
	        SM_C_MLPBIAS, 0, 1, SM_D_I, SM_D_ANY),                                             \
	    SM_RULE(SM_LAYER "mlp.down_proj.bias", SM_LAYER "mlp.down_proj.bias", SM_K_REPL, 0,    \
	            SM_U_NONE, SM_C_MLPBIAS, 0, 1, SM_D_HID, SM_D_ANY)

static const sm_rule arcee_rules[] = {
    SM_RULES_TOP, SM_RULES_LNORM, SM_RULES_ATTN_SWITCHED, NOGATE_MLP, NOGATE_MLP_BIASES,
};

static const char *const arcee_archs[] = {"ArceeForCausalLM", NULL};

/* ArceeConfig unties by default. */
const sm_family shardmap_family_arcee = {
    .name = "arcee",
    .archs = arcee_archs,
    .rules = arcee_rules,
    .n_rules = SM_NRULES(arcee_rules),
    .layer_prefix = "model.layers.",
};

/* A replicated LayerNorm1P bias [hid] (required: NemotronLayerNorm1P is nn.LayerNorm with
 * bias=True). */
#define NEMOTRON_NORM_BIAS(x)                                                                      \
	SM_RULE(x ".bias", x ".bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY)

/* Nemotron (modeling_nemotron.py, transformers 4.57.1): Llama's layout whose three norms
 * (input_layernorm, post_attention_layernorm, model.norm) are LayerNorm1P with a weight
 * (applied as weight + 1) and a bias, both replicated and never quantized; q/k/v/o biases
 * exactly when attention_bias (o_proj too), the MLP up_proj / down_proj without a gate and
 * their biases exactly when mlp_bias, cut as Arcee's. */
static const sm_rule nemotron_rules[] = {
    SM_RULES_TOP,
    NEMOTRON_NORM_BIAS("model.norm"),
    SM_RULES_LNORM,
    NEMOTRON_NORM_BIAS(SM_LAYER "input_layernorm"),
    NEMOTRON_NORM_BIAS(SM_LAYER "post_attention_layernorm"),
    SM_RULES_ATTN_SWITCHED,
    NOGATE_MLP,
    NOGATE_MLP_BIASES,
};

static const char *const nemotron_archs[] = {"NemotronForCausalLM", NULL};

/* NemotronConfig unties by default. */
const sm_family shardmap_family_nemotron = {
    .name = "nemotron",
    .archs = nemotron_archs,
    .rules = nemotron_rules,
    .n_rules = SM_NRULES(nemotron_rules),
    .layer_prefix = "model.layers.",
};

/* Jais 2 (Jais2ForCausalLM; inceptionai/Jais-2-8B / -70B, base and Chat), as vLLM's jais2.py
 * loads it: Nemotron's table (not a copy). Its three norms are nn.LayerNorm (weight and bias,
 * applied as they are, replicated and never quantized); q_proj / k_proj / v_proj stacked by
 * heads into self_attn.qkv_proj (QKVParallelLinear) and o_proj by columns (RowParallelLinear),
 * their biases exactly when `attention_bias or bias` (the loader lays both onto
 * attention_bias; Jais2Config's attention_bias defaults to true); up_proj by rows
 * (ColumnParallelLinear) and down_proj by columns, their biases exactly when mlp_bias (true by
 * default); embed_tokens / lm_head by padded vocabulary rows, lm_head dropped when tied
 * (Jais2Config unties by default). The loader refuses a hidden_act other than relu2 and an
 * interleaved_sliding_window of another type (config_jais2.c). */
static const char *const jais2_archs[] = {"Jais2ForCausalLM", NULL};

const sm_family shardmap_family_jais2 = {
    .name = "jais2",
    .archs = jais2_archs,
    .rules = nemotron_rules,
    .n_rules = SM_NRULES(nemotron_rules),
    .layer_prefix = "model.layers.",
};
