/*
 * family_llama4.c — Llama 4 (meta-llama/Llama-4-Scout-17B-16E, -Maverick-17B-128E;
 * docs/format.md section 2.7), as transformers 4.54's modeling_llama4.py lays it out:
 *
 * - llama4: Llama4ForConditionalGeneration (base_model_prefix "", no
 *   _checkpoint_conversion_mapping): the language model `language_model.model.*` /
 *   `language_model.lm_head.weight`, the vision tower `vision_model.*` and the projector
 *   `multi_modal_projector.linear_1.weight`.
 * - llama4_text: Llama4ForCausalLM, `model.*` and `lm_head.weight`.
 *
 * Text layers: Llama's attention without biases (attention_bias is forced false; the
 * L2 qk_norm has no weight); a layer is MoE when its index is in moe_layers, else
 * in range(interleave_moe_layer_step - 1, L, step) (Llama4TextConfig), and its
 * feed_forward is Llama4TextMoe: router [E, hid], experts stacked [E, hid, 2*I] /
 * [E, I, hid] as torch.bmm operands ([in, out] per expert, gate the first I columns:
 * gate_up.chunk(2, dim=-1)), loaded transposed into Mixtral-style w13 / w2 stacks, and
 * a shared expert Llama4TextMLP(intermediate_size). Dense layers: Llama4TextMLP with
 * intermediate_size_mlp. Vision blocks as Gemma 3's SigLIP ones (q/k/v fused by heads,
 * o_proj by columns, fc1 rows, fc2 columns), the pixel-shuffle adapter's MLP
 * (Llama4VisionConfig.base_model_tp_plan: vision_adapter.mlp.fc1 colwise, fc2 rowwise)
 * likewise, everything else of the tower and the projector (colwise_rep) replicated.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

/* Llama 4's text model: every layer under SM_LAYER as defined where it is expanded. */
#define L4_FF SM_LAYER "feed_forward."
#define L4_LM(P)                                                                                   \
	SM_RULES_TOP_AT(P), SM_RULES_LNORM, SM_QKV_W("q", 0, SM_D_Q), SM_QKV_W("k", 1, SM_D_KV),   \
	    SM_QKV_W("v", 2, SM_D_KV),                                                             \
	    SM_RULE(SM_LAYER "self_attn.o_proj.weight", SM_LAYER "self_attn.o_proj.weight",        \
	            SM_K_COLS, 0, SM_U_HEADS, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_Q),          \
	    L4_MLP("", SM_D_I, SM_U_I, SM_C_DENSE),                                                \
	    L4_MLP("shared_expert.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),                             \
	    SM_RULE_ROUTER("feed_forward.router.weight", 2, SM_D_E, SM_D_HID),                     \
	    SM_RULE3(L4_FF "experts.gate_up_proj", L4_FF "experts.w13_weight", SM_K_EXP13S, 0,     \
	             SM_U_IE, SM_C_MOE, SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_IE2, SM_D_HID),      \
	    SM_RULE3(L4_FF "experts.down_proj", L4_FF "experts.w2_weight", SM_K_EXP2S, 0, SM_U_IE, \
	             SM_C_MOE, SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_HID, SM_D_IE)

/* Llama4TextMLP (no biases) under feed_forward.M: gate/up merged by rows, down by columns. */
#define L4_MLP(M, D, U, C)                                                                         \
	SM_RULE(L4_FF M "gate_proj.weight", L4_FF M "gate_up_proj.weight", SM_K_ROWS, 0, U, C,     \
	        SM_F_QUANT, 2, D, SM_D_HID),                                                       \
	    SM_RULE(L4_FF M "up_proj.weight", L4_FF M "gate_up_proj.weight", SM_K_ROWS, 1, U, C,   \
	            SM_F_QUANT, 2, D, SM_D_HID),                                                   \
	    SM_RULE(L4_FF M "down_proj.weight", L4_FF M "down_proj.weight", SM_K_COLS, 0, U, C,    \
	            SM_F_QUANT, 2, SM_D_HID, D)

static const sm_rule llama4_text_rules[] = {L4_LM("")};

#define L4_V  "vision_model."
#define L4_VB L4_V "model.layers.{i}."

/* Replicated tensor of the tower (nd dims) / of one block ([VE]). */
#define L4_V_REPL(n, nd, d0, d1)                                                                   \
	SM_RULE(L4_V n, L4_V n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define L4_VB_REPL(n)                                                                              \
	SM_RULE(L4_VB n, L4_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
/* q / k / v (part 0 / 1 / 2) weight and bias into the fused qkv_proj, rows by heads. */
#define L4_VQKV(x, part)                                                                           \
	SM_RULE(L4_VB "self_attn." x "_proj.weight", L4_VB "self_attn.qkv_proj.weight", SM_K_ROWS, \
	        part, SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),          \
	    SM_RULE(L4_VB "self_attn." x "_proj.bias", L4_VB "self_attn.qkv_proj.bias", SM_K_ROWS, \
	            part, SM_U_VHEADS, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)

#undef SM_LAYER
#define SM_LAYER "language_model.model.layers.{i}."

static const sm_rule llama4_rules[] = {
    L4_LM("language_model."),
    /* Llama4UnfoldConvolution's Linear [VE, C*P*P] (colwise_rep: whole on every rank) */
    L4_V_REPL("patch_embedding.linear.weight", 2, SM_D_VE, SM_D_VUNF),
    L4_V_REPL("class_embedding", 1, SM_D_VE, SM_D_ANY),
    L4_V_REPL("positional_embedding_vlm", 2, SM_D_VNP, SM_D_VE),
    L4_V_REPL("layernorm_pre.weight", 1, SM_D_VE, SM_D_ANY),
    L4_V_REPL("layernorm_pre.bias", 1, SM_D_VE, SM_D_ANY),
    L4_V_REPL("layernorm_post.weight", 1, SM_D_VE, SM_D_ANY),
    L4_V_REPL("layernorm_post.bias", 1, SM_D_VE, SM_D_ANY),
    L4_VB_REPL("input_layernorm.weight"),
    L4_VB_REPL("input_layernorm.bias"),
    L4_VQKV("q", 0),
    L4_VQKV("k", 1),
    L4_VQKV("v", 2),
    SM_RULE(L4_VB "self_attn.o_proj.weight", L4_VB "self_attn.o_proj.weight", SM_K_COLS, 0,
            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    L4_VB_REPL("self_attn.o_proj.bias"),
    L4_VB_REPL("post_attention_layernorm.weight"),
    L4_VB_REPL("post_attention_layernorm.bias"),
    SM_RULES_VIS_FC(L4_VB),
    L4_VB_REPL("mlp.fc2.bias"),
    /* Llama4VisionMLP2: fc1 Linear(intermediate_size, projector_input_dim), fc2
     * Linear(projector_output_dim, projector_output_dim), no biases */
    SM_RULE(L4_V "vision_adapter.mlp.fc1.weight", L4_V "vision_adapter.mlp.fc1.weight", SM_K_ROWS,
            0, SM_U_VPI, SM_C_ALL, SM_F_QUANT, 2, SM_D_VPI, SM_D_VI),
    SM_RULE(L4_V "vision_adapter.mlp.fc2.weight", L4_V "vision_adapter.mlp.fc2.weight", SM_K_COLS,
            0, SM_U_VPI, SM_C_ALL, SM_F_QUANT, 2, SM_D_VPO, SM_D_VPO),
    /* Linear(vision_output_dim, text hidden_size), colwise_rep: replicated */
    SM_RULE("multi_modal_projector.linear_1.weight", "multi_modal_projector.linear_1.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_QUANT, 2, SM_D_HID, SM_D_VOD),
};

/* Llama4TextDecoderLayer.is_moe_layer: layer_idx in config.moe_layers, which
 * Llama4TextConfig defaults to range(step - 1, L, step); no experts, no MoE layer. */
static bool llama4_moe(const ckpt_config *c, int64_t i)
{
	if (c->num_experts <= 0)
		return false;
	if (c->has_moe_layers) {
		for (size_t k = 0; k < c->n_moe_layers; k++)
			if (c->moe_layers[k] == i)
				return true;
		return false;
	}
	int64_t step = c->interleave_moe_layer_step > 0 ? c->interleave_moe_layer_step : 1;
	return i >= step - 1 && (i - (step - 1)) % step == 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* How many of the layers 0..L-1 the config makes MoE (experts or not): *out. */
static int llama4_count_moe(const ckpt_config *c, int64_t *out, wt_errbuf *err)
{
	int64_t L = c->num_hidden_layers, step = c->interleave_moe_layer_step, n = 0;
	if (!c->has_moe_layers) {
		*out = step > 0 && L >= step ? (L - step) / step + 1 : 0;
		return WT_OK;
	}
	int64_t *v = malloc((c->n_moe_layers + 1) * sizeof(*v));
	if (!v)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory reading moe_layers");
	size_t m = 0;
	for (size_t k = 0; k < c->n_moe_layers; k++)
		if (c->moe_layers[k] >= 0 && c->moe_layers[k] < L)
			v[m++] = c->moe_layers[k];
	qsort(v, m, sizeof(*v), cmp_i64);
	for (size_t k = 0; k < m; k++)
		n += k == 0 || v[k] != v[k - 1];
	free(v);
	*out = n;
	return WT_OK;
}

/* The sizes the layers use: MoE layers need num_local_experts (Llama4TextConfig would
 * assume 16) and intermediate_size, dense layers intermediate_size_mlp (16384). */
static int llama4_text_check(const ckpt_config *c, wt_errbuf *err)
{
	int64_t moe = 0;
	int rv = llama4_count_moe(c, &moe, err);
	if (rv != WT_OK)
		return rv;
	if (moe > 0 && (c->num_experts <= 0 || c->intermediate_size <= 0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Llama 4 makes %" PRId64 " layers MoE (moe_layers / "
		                 "interleave_moe_layer_step) and needs num_local_experts and "
		                 "intermediate_size for them (num_local_experts %" PRId64
		                 ", intermediate_size %" PRId64 "; -1 / 0 = missing)",
		                 moe, c->num_experts, c->intermediate_size);
	if (moe < c->num_hidden_layers && c->intermediate_size_mlp <= 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Llama 4 has %" PRId64 " dense layers and needs "
		                 "intermediate_size_mlp for their MLP",
		                 c->num_hidden_layers - moe);
	return WT_OK;
}

/* The text checks, then the vision tower: heads split its width (the attention views
 * hidden_size / num_attention_heads per head), a patch fits in the image, and the
 * adapter's fc2 takes fc1's output (projector_output_dim = projector_input_dim). */
static int llama4_check(const ckpt_config *c, wt_errbuf *err)
{
	int rv = llama4_text_check(c, err);
	if (rv != WT_OK)
		return rv;
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Llama4ForConditionalGeneration needs vision_config "
		                 "(hidden_size, num_attention_heads, num_hidden_layers, "
		                 "intermediate_size, image_size, patch_size, projector_input_dim, "
		                 "projector_output_dim, vision_output_dim)");
	int64_t ve = c->v_hidden_size > 0 ? c->v_hidden_size : SM_L4V_HIDDEN;
	int64_t vh = c->v_num_attn_heads > 0 ? c->v_num_attn_heads : SM_L4V_HEADS;
	int64_t img = c->v_image_size > 0 ? c->v_image_size : SM_L4V_IMAGE;
	int64_t pi = c->v_proj_in_dim > 0 ? c->v_proj_in_dim : SM_L4V_PROJ;
	int64_t po = c->v_proj_out_dim > 0 ? c->v_proj_out_dim : SM_L4V_PROJ;
	if (ve % vh)
		return shardmap_vision_heads_err("num_attention_heads", vh, ve, err);
	if (img < c->v_patch_size)
		return shardmap_vision_patch_err(img, c->v_patch_size, err);
	if (pi != po)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.projector_output_dim %" PRId64
		                 " differs from projector_input_dim %" PRId64
		                 " (the vision adapter's fc2 takes fc1's output)",
		                 po, pi);
	return WT_OK;
}

static const char *const llama4_archs[] = {"Llama4ForConditionalGeneration", NULL};
static const char *const llama4_text_archs[] = {"Llama4ForCausalLM", NULL};

/* Llama4Config and Llama4TextConfig leave tie_word_embeddings false */
const sm_family shardmap_family_llama4 = {
    .name = "llama4",
    .archs = llama4_archs,
    .rules = llama4_rules,
    .n_rules = SM_NRULES(llama4_rules),
    .layer_is_moe = llama4_moe,
    .layer_prefix = "language_model.model.layers.",
    .check = llama4_check,
    .vision_gated = true,
    .vision_siglip = true,
    .llama4 = true,
};

const sm_family shardmap_family_llama4_text = {
    .name = "llama4_text",
    .archs = llama4_text_archs,
    .rules = llama4_text_rules,
    .n_rules = SM_NRULES(llama4_text_rules),
    .layer_is_moe = llama4_moe,
    .layer_prefix = "model.layers.",
    .check = llama4_text_check,
    .llama4 = true,
};
