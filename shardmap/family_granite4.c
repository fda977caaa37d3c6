/*
 * family_granite4.c — Granite 4.0 (GraniteMoeHybridForCausalLM, model_type
 * granitemoehybrid: ibm-granite/granite-4.0-h-tiny / h-small / h-micro, and the
 * all-attention granite-4.0-micro; docs/format.md section 2.7), as transformers 4.57.1's
 * modeling_granitemoehybrid.py lays it out and vLLM's granitemoehybrid.py /
 * mamba_mixer2.py shard it.
 *
 * Layers are Mamba2 mixers or softmax attention: layer_types ("mamba" / "attention", one
 * per layer), required: GraniteMoeHybridConfig's attribute_map turns layers_block_type into
 * layer_types itself, so without it transformers 4.57.1 builds no model (None indexed),
 * nor does vLLM (config.layer_types[i]).
 * - Attention (self_attn.): Llama's q/k/v fused into qkv_proj, o_proj by columns, head_dim
 *   hidden_size / num_attention_heads; q/k/v/o biases exactly when attention_bias.
 * - Mamba (mamba.): in_proj [2*Im + 2*G*N + Hm, hid] rows [z; x; B; C; dt] and conv1d
 *   [Im + 2*G*N, 1, Kc] channels [x; B; C] cut per segment (SM_K_MAMBA: B and C whole on
 *   every rank when tp does not divide the one group); A_log, D, dt_bias [Hm] and the gated
 *   norm's weight [Im] by heads (rows); out_proj by columns; conv1d.bias with
 *   mamba_conv_bias, in_proj.bias (cut like its weight) and out_proj.bias (whole) with
 *   mamba_proj_bias. in_proj and out_proj are quantized; conv1d, A_log, D, dt_bias and the
 *   norm never are.
 * - MLP: GraniteMoE's block_sparse_moe (router replicated as block_sparse_moe.gate, stacked
 *   experts as w13 / w2) in every layer when num_local_experts > 0, and GraniteMoeShared's
 *   shared_mlp (input_linear [gate; up] re-sliced per rank, output_linear by columns) in
 *   every layer when shared_intermediate_size > 0 (the only MLP of Granite 4.0 Micro).
 * The multipliers (embedding, residual, attention, logits_scaling) and
 * position_embedding_type are math, not layout.
 */
#include <inttypes.h>

#include "shardmap/family_rules.h"

#define G4_ATT SM_LAYER "self_attn."
#define G4_MAM SM_LAYER "mamba."

/* q / k / v weight and bias of the attention layers (conditions at, atb). */
#define G4_QKV(x, part, d, at, atb)                                                                \
	SM_RULE(G4_ATT x "_proj.weight", G4_ATT "qkv_proj.weight", SM_K_QKV, part, SM_U_HEADS, at, \
	        SM_F_QUANT, 2, d, SM_D_HID),                                                       \
	    SM_RULE(G4_ATT x "_proj.bias", G4_ATT "qkv_proj.bias", SM_K_QKV, part, SM_U_HEADS,     \
	            atb, 0, 1, d, SM_D_ANY)

/* The Mamba2 mixer's tensors under prefix M (Granite 4.0's mamba., Mamba2's mixer.) in the
 * layers the table's layer_is_linear picks; nrm: the gated norm's condition (SM_C_LINATT, or
 * SM_C_MNORM where mamba_rms_norm builds it). */
#define G4_RULES_MIXER2(M, nrm) SM_RULES_MIXER2_C(M, SM_C_LINATT, SM_C_MCONVB, SM_C_MPROJB, nrm)

/* Attention (Llama's) and the Mamba2 mixer: shared by Granite 4.0, Bamba and Falcon-H1.
 * at / atb: the attention's layers and its biases' (SM_C_FULLATT / SM_C_FULLATTB in the
 * alternating hybrids, SM_C_ALL / SM_C_ATTNBIAS where every layer runs both mixers); nrm:
 * the gated norm's. */
#define G4_RULES_MIXERS_C(at, atb, nrm)                                                            \
	G4_QKV("q", 0, SM_D_Q, at, atb), G4_QKV("k", 1, SM_D_KV, at, atb),                         \
	    G4_QKV("v", 2, SM_D_KV, at, atb),                                                      \
	    SM_RULE(G4_ATT "o_proj.weight", G4_ATT "o_proj.weight", SM_K_COLS, 0, SM_U_HEADS, at,  \
	            SM_F_QUANT, 2, SM_D_HID, SM_D_Q),                                              \
	    SM_RULE(G4_ATT "o_proj.bias", G4_ATT "o_proj.bias", SM_K_REPL, 0, SM_U_NONE, atb, 0,   \
	            1, SM_D_HID, SM_D_ANY),                                                        \
	    G4_RULES_MIXER2(G4_MAM, nrm)
#define G4_RULES_MIXERS G4_RULES_MIXERS_C(SM_C_FULLATT, SM_C_FULLATTB, SM_C_LINATT)

static const sm_rule granite4_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    G4_RULES_MIXERS,
    /* MLPs: GraniteMoE's experts, GraniteMoeShared's shared MLP */
    SM_RULE(SM_LAYER "block_sparse_moe.router.layer.weight",
            SM_LAYER "block_sparse_moe.gate.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, 0, 2,
            SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS_STACKED("block_sparse_moe."),
    SM_RULE(SM_LAYER "shared_mlp.input_linear.weight", SM_LAYER "shared_mlp.input_linear.weight",
            SM_K_ROWS2, 0, SM_U_ISH, SM_C_SHMLP, SM_F_QUANT, 2, SM_D_ISH2, SM_D_HID),
    SM_RULE(SM_LAYER "shared_mlp.output_linear.weight", SM_LAYER "shared_mlp.output_linear.weight",
            SM_K_COLS, 0, SM_U_ISH, SM_C_SHMLP, SM_F_QUANT, 2, SM_D_HID, SM_D_ISH),
};

/* Layer i is Mamba when layer_types[i] is "mamba" (g4_check_types requires the list). */
static bool g4_mamba(const ckpt_config *c, int64_t i)
{
	return c->has_layer_types && i >= 0 && (uint64_t)i < c->n_layer_types &&
	       c->layer_types[i] == CKPT_LAYER_MAMBA;
}

static bool g4_moe(const ckpt_config *c, int64_t i)
{
	(void)i;
	return c->num_experts > 0;
}

/* layer_types: present, one per layer (GraniteMoeHybridDecoderLayer indexes
 * layers_block_type, which is layer_types, by layer), each "mamba" or "attention" (the
 * config class's own check). */
static int g4_check_types(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_layer_types || c->n_layer_types == 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types is missing or empty; Granite 4.0 needs "
		                 "one of \"mamba\" / \"attention\" per layer (transformers "
		                 "4.57.1 and vLLM read each layer's type from it)");
	if ((uint64_t)c->num_hidden_layers != c->n_layer_types)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types has %zu entries but num_hidden_layers "
		                 "is %" PRId64 "; give one type per layer",
		                 c->n_layer_types, c->num_hidden_layers);
	for (size_t k = 0; k < c->n_layer_types; k++)
		if (c->layer_types[k] != CKPT_LAYER_MAMBA && c->layer_types[k] != CKPT_LAYER_ATTN)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: layer_types[%zu] is neither \"mamba\" nor "
			                 "\"attention\", the two Granite 4.0 layer types",
			                 k);
	return WT_OK;
}

/* The config rules of the Mamba hybrids' config classes (GraniteMoeHybridConfig,
 * BambaConfig) and their modules: the attention's head_dim is hidden_size /
 * num_attention_heads, exactly; the Mamba mixer's mamba_expand * hidden_size is mamba_n_heads
 * * mamba_d_head (d_head "auto" = that quotient) and its heads come in whole groups
 * (repeat_interleave of B and C); the mixer's width is mamba_d_ssm where Falcon-H1 gives
 * it. fam names the family in the messages; is_mamba tells the layers apart;
 * free_head_dim skips the head_dim rule (Falcon-H1's attention reads head_dim itself). */
static int g4_check_mixers(const ckpt_config *c, const char *fam,
                           bool (*is_mamba)(const ckpt_config *, int64_t), bool free_head_dim,
                           wt_errbuf *err)
{
	if (!free_head_dim && (c->hidden_size % c->num_attention_heads ||
	                       c->head_dim != c->hidden_size / c->num_attention_heads))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s's attention has head_dim = hidden_size "
		                 "%" PRId64 " / num_attention_heads %" PRId64
		                 " exactly (head_dim %" PRId64 " given or derived); fix "
		                 "hidden_size, num_attention_heads or drop head_dim",
		                 fam, c->hidden_size, c->num_attention_heads, c->head_dim);
	int64_t n_mamba = 0;
	for (int64_t i = 0; i < c->num_hidden_layers; i++)
		n_mamba += is_mamba(c, i);
	if (n_mamba == 0)
		return WT_OK;
	if (c->mamba_n_heads <= 0 || c->mamba_n_groups <= 0 || c->mamba_d_state <= 0 ||
	    c->mamba_d_conv <= 0 || c->mamba_expand <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s has %" PRId64
		                 " Mamba layers and needs mamba_n_heads, mamba_n_groups, "
		                 "mamba_d_state, mamba_d_conv and mamba_expand (-1 = missing: "
		                 "%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ")",
		                 fam, n_mamba, c->mamba_n_heads, c->mamba_n_groups,
		                 c->mamba_d_state, c->mamba_d_conv, c->mamba_expand);
	int64_t im = c->mamba_d_ssm > 0 ? c->mamba_d_ssm : c->mamba_expand * c->hidden_size;
	int64_t dh = c->mamba_d_head > 0 ? c->mamba_d_head : im / c->mamba_n_heads;
	if (im % c->mamba_n_heads || dh * c->mamba_n_heads != im)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s = %" PRId64 " must be mamba_n_heads %" PRId64
		                 " x mamba_d_head (%" PRId64 "; \"auto\" = the quotient)",
		                 c->mamba_d_ssm > 0 ? "mamba_d_ssm" : "mamba_expand * hidden_size",
		                 im, c->mamba_n_heads, dh);
	if (c->mamba_n_heads % c->mamba_n_groups)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: mamba_n_groups %" PRId64
		                 " does not divide mamba_n_heads %" PRId64
		                 " (each group serves mamba_n_heads / mamba_n_groups heads)",
		                 c->mamba_n_groups, c->mamba_n_heads);
	return WT_OK;
}

int shardmap_mamba2_mixers_check(const ckpt_config *c, const char *fam,
                                 bool (*is_mamba)(const ckpt_config *, int64_t), wt_errbuf *err)
{
	return g4_check_mixers(c, fam, is_mamba, true, err);
}

static int g4_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = g4_check_types(c, err);
	return rv != WT_OK ? rv : g4_check_mixers(c, "Granite 4.0", g4_mamba, false, err);
}

static const char *const granite4_archs[] = {"GraniteMoeHybridForCausalLM", NULL};

/* GraniteMoeHybridConfig leaves tie_word_embeddings false (the released models set it
 * true) */
const sm_family shardmap_family_granitemoehybrid = {
    .name = "granitemoehybrid",
    .archs = granite4_archs,
    .rules = granite4_rules,
    .n_rules = SM_NRULES(granite4_rules),
    .layer_is_moe = g4_moe,
    .layer_prefix = "model.layers.",
    .check = g4_check,
    .layer_is_linear = g4_mamba,
    .moe_keys = "num_local_experts",
    .mamba = true,
};

/*
 * Bamba (BambaForCausalLM, model_type bamba: ibm-ai-platform/Bamba-9B), as transformers
 * 4.57.1's modeling_bamba.py lays it out and vLLM's bamba.py loads it: Granite 4.0's
 * attention and Mamba2 mixer (the same tensors, cut the same way), the attention layers
 * those listed in attn_layer_indices (BambaConfig.layers_block_type; absent or empty: all
 * Mamba), a SwiGLU feed_forward (gate_proj / up_proj fused into gate_up_proj, down_proj by
 * columns) after pre_ff_layernorm, and model.final_layernorm. BambaConfig fixes
 * attention_bias and mlp_bias false; partial_rotary_factor (0.5) and rope_theta are math.
 */
static const sm_rule bamba_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULE("model.final_layernorm.weight", "model.final_layernorm.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "pre_ff_layernorm.weight", SM_LAYER "pre_ff_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    G4_RULES_MIXERS,
    /* SM_RULES_MLP's weights; no optional biases (a feed_forward bias is an unknown tensor) */
    SM_RULE(SM_LAYER "feed_forward.gate_proj.weight", SM_LAYER "feed_forward.gate_up_proj.weight",
            SM_K_ROWS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "feed_forward.up_proj.weight", SM_LAYER "feed_forward.gate_up_proj.weight",
            SM_K_ROWS, 1, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "feed_forward.down_proj.weight", SM_LAYER "feed_forward.down_proj.weight",
            SM_K_COLS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* Layer i is Mamba unless attn_layer_indices lists it (BambaConfig.layers_block_type). */
static bool bamba_mamba(const ckpt_config *c, int64_t i)
{
	for (size_t k = 0; c->has_full_attn_idxs && k < c->n_full_attn_idxs; k++)
		if (c->full_attn_idxs[k] == i)
			return false;
	return true;
}

/* attn_layer_indices: each entry a layer (BambaConfig says "at most num_hidden_layers";
 * an index past the stack would name no layer, as a typo would), then the mixers' rules. */
static int bamba_check(const ckpt_config *c, wt_errbuf *err)
{
	for (size_t k = 0; c->has_full_attn_idxs && k < c->n_full_attn_idxs; k++)
		if (c->full_attn_idxs[k] < 0 || c->full_attn_idxs[k] >= c->num_hidden_layers)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: attn_layer_indices[%zu] is %" PRId64
			                 ", not a layer of the %" PRId64
			                 " (num_hidden_layers); list attention layers 0.."
			                 "%" PRId64,
			                 k, c->full_attn_idxs[k], c->num_hidden_layers,
			                 c->num_hidden_layers - 1);
	if (c->attention_bias || c->mlp_bias)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: attention_bias / mlp_bias true, but Bamba's layers "
		                 "have no biases (BambaConfig fixes both false, vLLM's bamba.py "
		                 "builds none); drop the keys");
	return g4_check_mixers(c, "Bamba", bamba_mamba, false, err);
}

static const char *const bamba_archs[] = {"BambaForCausalLM", NULL};

/* BambaConfig leaves tie_word_embeddings false (Bamba-9B unties them) */
const sm_family shardmap_family_bamba = {
    .name = "bamba",
    .archs = bamba_archs,
    .rules = bamba_rules,
    .n_rules = SM_NRULES(bamba_rules),
    .layer_prefix = "model.layers.",
    .check = bamba_check,
    .layer_is_linear = bamba_mamba,
    .linear_keys = "attn_layer_indices",
    .mamba = true,
};

/*
 * Falcon-H1 (FalconH1ForCausalLM, model_type falcon_h1: tiiuae/Falcon-H1-0.5B / 1.5B / 3B /
 * 7B / 34B), as transformers 4.57.1's modeling_falcon_h1.py lays it out and vLLM's
 * falcon_h1.py / mamba_mixer2.py load it: every layer runs the attention (self_attn.) and
 * the Mamba2 mixer (mamba.) in parallel on the same normed input, both cut as Granite 4.0's,
 * then Bamba's SwiGLU feed_forward after pre_ff_layernorm; model.final_layernorm. The
 * mixer's width is mamba_d_ssm (mamba_expand * hidden_size when null); its gated norm
 * exists only with mamba_rms_norm; the attention's head_dim is its own key (Falcon-H1-0.5B:
 * 8 heads of 64 over hidden 1024). The muP multipliers (embedding, lm_head, attention in /
 * out, key, ssm in / out, ssm_multipliers' mup_vector, mlp_multipliers) are math.
 */
static const sm_rule falcon_h1_rules[] = {
    SM_RULE("model.embed_tokens.weight", "model.embed_tokens.weight", SM_K_VOCAB, 0, SM_U_NONE,
            SM_C_ALL, 0, 2, SM_D_V, SM_D_HID),
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_LMHEAD, 2,
            SM_D_V, SM_D_HID),
    SM_RULE("model.final_layernorm.weight", "model.final_layernorm.weight", SM_K_REPL, 0, SM_U_NONE,
            SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "input_layernorm.weight", SM_LAYER "input_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    SM_RULE(SM_LAYER "pre_ff_layernorm.weight", SM_LAYER "pre_ff_layernorm.weight", SM_K_REPL, 0,
            SM_U_NONE, SM_C_ALL, 0, 1, SM_D_HID, SM_D_ANY),
    G4_RULES_MIXERS_C(SM_C_ALL, SM_C_ATTNBIAS, SM_C_MNORM),
    SM_RULE(SM_LAYER "feed_forward.gate_proj.weight", SM_LAYER "feed_forward.gate_up_proj.weight",
            SM_K_ROWS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "feed_forward.up_proj.weight", SM_LAYER "feed_forward.gate_up_proj.weight",
            SM_K_ROWS, 1, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_I, SM_D_HID),
    SM_RULE(SM_LAYER "feed_forward.down_proj.weight", SM_LAYER "feed_forward.down_proj.weight",
            SM_K_COLS, 0, SM_U_I, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_I),
};

/* Every Falcon-H1 layer has a Mamba mixer (beside its attention). */
static bool fh1_mamba(const ckpt_config *c, int64_t i)
{
	(void)c;
	(void)i;
	return true;
}

/* FalconH1Config fixes attention_bias / mlp_bias false; out_proj's bias is projectors_bias
 * in transformers but mamba_proj_bias in vLLM's MambaMixer2 (one use_bias for in_proj and
 * out_proj), so the two must agree; then the mixers' rules (the attention's head_dim is
 * free). */
static int fh1_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->attention_bias || c->mlp_bias)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: attention_bias / mlp_bias true, but Falcon-H1's "
		                 "attention and MLP have no biases (FalconH1Config fixes both "
		                 "false); drop the keys");
	if (c->projectors_bias != c->mamba_proj_bias)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: projectors_bias %s but mamba_proj_bias %s: "
		                 "transformers gives out_proj a bias by projectors_bias, vLLM's "
		                 "MambaMixer2 by mamba_proj_bias; set both the same",
		                 c->projectors_bias ? "true" : "false",
		                 c->mamba_proj_bias ? "true" : "false");
	return g4_check_mixers(c, "Falcon-H1", fh1_mamba, true, err);
}

static const char *const falcon_h1_archs[] = {"FalconH1ForCausalLM", NULL};

/* FalconH1Config leaves tie_word_embeddings false (the released models untie them) */
const sm_family shardmap_family_falcon_h1 = {
    .name = "falcon_h1",
    .archs = falcon_h1_archs,
    .rules = falcon_h1_rules,
    .n_rules = SM_NRULES(falcon_h1_rules),
    .layer_prefix = "model.layers.",
    .check = fh1_check,
    .layer_is_linear = fh1_mamba,
    .mamba = true,
};

/*
 * Mamba2 (Mamba2ForCausalLM, model_type mamba2: mistralai/Mamba-Codestral-7B-v0.1), as
 * transformers 4.57.1's modeling_mamba2.py lays it out and vLLM's mamba2.py /
 * mamba_mixer2.py load it: Mamba's backbone (SM_RULES_BACKBONE: backbone.embeddings,
 * backbone.layers.{i}.norm, backbone.norm_f, lm_head, tied only by tie_word_embeddings,
 * Mamba2Config's false) and in every layer Granite 4.0's Mamba2 mixer under
 * backbone.layers.{i}.mixer., cut the same way (in_proj / out_proj quantized: vLLM hands
 * MambaMixer2 the quant_config), its gated norm always built. Mamba2Config's keys are read
 * under the mixer's names (loader/config_hybrid.c, config_mamba2_keys).
 */
static const sm_rule mamba2_rules[] = {
    SM_RULES_BACKBONE,
    G4_RULES_MIXER2("backbone.layers.{i}.mixer.", SM_C_LINATT),
};

/* Mamba2Config's own rule (hidden_size * expand = num_heads * head_dim) and the mixer's
 * (n_groups divides num_heads), named by Mamba2Config's keys; then Granite 4.0's. */
static int mamba2_check(const ckpt_config *c, wt_errbuf *err)
{
	if (c->mamba_n_heads > 0 && c->mamba_d_head > 0 && c->mamba_expand > 0 &&
	    c->hidden_size * c->mamba_expand != c->mamba_n_heads * c->mamba_d_head)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Mamba2's hidden_size %" PRId64 " x expand %" PRId64
		                 " must equal num_heads %" PRId64 " x head_dim %" PRId64
		                 " (Mamba2Config's own check)",
		                 c->hidden_size, c->mamba_expand, c->mamba_n_heads,
		                 c->mamba_d_head);
	if (c->mamba_n_heads > 0 && c->mamba_n_groups > 0 && c->mamba_n_heads % c->mamba_n_groups)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Mamba2's n_groups %" PRId64
		                 " does not divide num_heads %" PRId64
		                 " (each group serves num_heads / n_groups heads)",
		                 c->mamba_n_groups, c->mamba_n_heads);
	return g4_check_mixers(c, "Mamba2", fh1_mamba, true, err);
}

static const char *const mamba2_archs[] = {"Mamba2ForCausalLM", NULL};

/* Mamba2Config leaves tie_word_embeddings false */
const sm_family shardmap_family_mamba2 = {
    .name = "mamba2",
    .archs = mamba2_archs,
    .rules = mamba2_rules,
    .n_rules = SM_NRULES(mamba2_rules),
    .layer_prefix = "backbone.layers.",
    .check = mamba2_check,
    .layer_is_linear = fh1_mamba,
    .linear_keys = "every layer is a Mamba2 mixer",
    .mamba = true,
    .mamba_use_keys = true,
};
