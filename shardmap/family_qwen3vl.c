/*
 * family_qwen3vl.c — Qwen3-VL (Qwen3VLForConditionalGeneration, qwen3_vl: Qwen3-VL-2B..32B)
 * and Qwen3-VL-MoE (Qwen3VLMoeForConditionalGeneration, qwen3_vl_moe: Qwen3-VL-30B-A3B,
 * 235B-A22B), as transformers 4.57.1's modeling_qwen3_vl.py / modeling_qwen3_vl_moe.py
 * lay them out (docs/format.md section 2.7): the language model under
 * `model.language_model.*`, the vision tower under `model.visual.*`, `lm_head.weight`
 * (absent when tied). Rules are written in the names Qwen2-VL's runtime tensors carry
 * (`model.layers.*`, `visual.*`), which the released layout maps onto through the
 * family's aliases, so an engine loading Qwen2-VL's shards finds Qwen3-VL's under the
 * same module paths.
 *
 * Text: Qwen3's decoder (q/k/v/o, optional attention_bias, per-head q_norm / k_norm
 * [head_dim] replicated). Qwen3-VL-MoE's sparse layers (Qwen3-MoE's selection:
 * mlp_only_layers, decoder_sparse_step) hold a router mlp.gate [E, hid] and the experts
 * stacked as torch.bmm operands, gate_up_proj [E, hid, 2*Ie] (gate the first Ie columns:
 * gate_up.chunk(2, dim=-1)) and down_proj [E, Ie, hid]: Llama 4's stacks, loaded
 * transposed per expert (SM_F_TRANS) into w13_weight / w2_weight.
 *
 * Vision tower, split as Qwen2-VL's: each block's fused attn.qkv by heads (SM_K_QKVF),
 * attn.proj by columns, mlp.linear_fc1 by rows and linear_fc2 by columns (biases of the
 * column-parallel ones split with them, the others replicated), the LayerNorms norm1 /
 * norm2 (with biases) replicated; the Conv3d patch_embed.proj (with its bias, unlike
 * Qwen2-VL's) and the learned pos_embed [num_position_embeddings, hidden] replicated,
 * never quantized. The merger (norm [hidden] before the 2x2 shuffle) and each
 * deepstack_merger_list.K (norm [hidden * merge^2] after it) split like Qwen2-VL's merger
 * MLP: linear_fc1 rows, linear_fc2 columns into out_hidden_size.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

#define Q3V_D "visual.deepstack_merger_list.{i}."

/* A replicated tensor of one block ([VE]) of the tower under P, of the tower (nd dims). */
#define Q3V_B_REPL(P, n)                                                                           \
	SM_RULE(P "blocks.{i}." n, P "blocks.{i}." n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, \
	        1, SM_D_VE, SM_D_ANY)
#define Q3V_REPL(P, n, d) SM_RULE(P n, P n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, d, SM_D_ANY)

/* A patch merger under prefix M with flags F (0, or SM_F_DEEP for a deepstack one), its
 * LayerNorm over ND: fc1 [VM, VM] column parallel with its bias, fc2 [VOD, VM] row
 * parallel, its bias replicated. */
#define Q3V_MERGER(M, F, ND)                                                                       \
	SM_RULE(M "norm.weight", M "norm.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, F, 1, ND,     \
	        SM_D_ANY),                                                                         \
	    SM_RULE(M "norm.bias", M "norm.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, F, 1, ND,     \
	            SM_D_ANY),                                                                     \
	    SM_RULE(M "linear_fc1.weight", M "linear_fc1.weight", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, \
	            SM_F_QUANT | (F), 2, SM_D_VM, SM_D_VM),                                        \
	    SM_RULE(M "linear_fc1.bias", M "linear_fc1.bias", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, F,  \
	            1, SM_D_VM, SM_D_ANY),                                                         \
	    SM_RULE(M "linear_fc2.weight", M "linear_fc2.weight", SM_K_COLS, 0, SM_U_VM, SM_C_ALL, \
	            SM_F_QUANT | (F), 2, SM_D_VOD, SM_D_VM),                                       \
	    SM_RULE(M "linear_fc2.bias", M "linear_fc2.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL,   \
	            F, 1, SM_D_VOD, SM_D_ANY)

/* Qwen3VLVisionModel's patch embed, learned positions and blocks under prefix P ("visual.";
 * Qwen3-Omni's "thinker.visual."): the same in the three families. */
#define Q3V_TOWER_RULES(P)                                                                         \
	SM_RULE_PATCH3D(P), Q3V_REPL(P, "patch_embed.proj.bias", SM_D_VE),                         \
	    SM_RULE(P "pos_embed.weight", P "pos_embed.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, \
	            0, 2, SM_D_VNP, SM_D_VE),                                                      \
	    Q3V_B_REPL(P, "norm1.weight"), Q3V_B_REPL(P, "norm1.bias"),                            \
	    Q3V_B_REPL(P, "norm2.weight"), Q3V_B_REPL(P, "norm2.bias"),                            \
	    SM_RULE(P "blocks.{i}.attn.qkv.weight", P "blocks.{i}.attn.qkv.weight", SM_K_QKVF, 0,  \
	            SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),           \
	    SM_RULE(P "blocks.{i}.attn.qkv.bias", P "blocks.{i}.attn.qkv.bias", SM_K_QKVF, 0,      \
	            SM_U_VHEADS, SM_C_ALL, SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),                       \
	    SM_RULE(P "blocks.{i}.attn.proj.weight", P "blocks.{i}.attn.proj.weight", SM_K_COLS,   \
	            0, SM_U_VHEADS, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),         \
	    Q3V_B_REPL(P, "attn.proj.bias"),                                                       \
	    SM_RULE(P "blocks.{i}.mlp.linear_fc1.weight", P "blocks.{i}.mlp.linear_fc1.weight",    \
	            SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VI, SM_D_VE),  \
	    SM_RULE(P "blocks.{i}.mlp.linear_fc1.bias", P "blocks.{i}.mlp.linear_fc1.bias",        \
	            SM_K_ROWS, 0, SM_U_VI, SM_C_ALL, SM_F_VIS, 1, SM_D_VI, SM_D_ANY),              \
	    SM_RULE(P "blocks.{i}.mlp.linear_fc2.weight", P "blocks.{i}.mlp.linear_fc2.weight",    \
	            SM_K_COLS, 0, SM_U_VI, SM_C_ALL, SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VI),  \
	    Q3V_B_REPL(P, "mlp.linear_fc2.bias")

/* Qwen3VLVisionModel (the same in both families). */
#define Q3V_VISION_RULES                                                                           \
	Q3V_TOWER_RULES("visual."), Q3V_MERGER("visual.merger.", 0, SM_D_VE),                      \
	    Q3V_MERGER(Q3V_D, SM_F_DEEP, SM_D_VM)

static const sm_rule qwen3_vl_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_QK_NORM,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_ALL),
    Q3V_VISION_RULES,
};

/* Qwen3VLMoeTextDecoderLayer: a dense Qwen3VLMoeTextMLP(intermediate_size) on the
 * mlp_only_layers and off the decoder_sparse_step, the sparse block elsewhere. */
static const sm_rule qwen3_vl_moe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_QK_NORM,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULE3(SM_LAYER "mlp.experts.gate_up_proj", SM_LAYER "mlp.experts.w13_weight", SM_K_EXP13S, 0,
             SM_U_IE, SM_C_MOE, SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_IE2, SM_D_HID),
    SM_RULE3(SM_LAYER "mlp.experts.down_proj", SM_LAYER "mlp.experts.w2_weight", SM_K_EXP2S, 0,
             SM_U_IE, SM_C_MOE, SM_F_QUANT | SM_F_TRANS, SM_D_E, SM_D_HID, SM_D_IE),
    Q3V_VISION_RULES,
};

/* The same model with one Linear per expert, as Qwen3-MoE stores them (the FP8
 * releases' block-quantized experts: mlp.experts.{j}.gate_proj.weight and its
 * weight_scale_inv): the same runtime stacks. */
static const sm_rule qwen3_vl_moe_pe_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_QK_NORM,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    Q3V_VISION_RULES,
};

/* MRoPE sections (the text config's rope_scaling.mrope_section, which
 * Qwen3VLTextRotaryEmbedding reads without a default when rope_scaling is absent: an
 * AttributeError on None): non-negative, summing to head_dim / 2, the T/H/W frequencies
 * interleaved over it. */
static int q3v_mrope_check(const ckpt_config *c, wt_errbuf *err)
{
	int64_t half = c->head_dim / 2, sum = 0;
	if (!c->has_mrope)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: Qwen3-VL needs text_config.rope_scaling.mrope_section "
		    "(or rope_parameters.mrope_section): non-negative sections summing "
		    "to head_dim/2 = %" PRId64 ", e.g. [24, 20, 20] for head_dim 128",
		    half);
	for (size_t k = 0; k < c->n_mrope; k++) {
		if (c->mrope_section[k] < 0)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: mrope_section[%zu] = %" PRId64
			                 " is negative; sections must be >= 0",
			                 k, c->mrope_section[k]);
		sum += c->mrope_section[k];
	}
	if (c->n_mrope != 3 || c->head_dim % 2 || sum != half)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: mrope_section has %zu entries summing to %" PRId64
		                 " but needs 3 (T, H, W) summing to head_dim/2 = %" PRId64
		                 " (head_dim %" PRId64 ", which must be even); fix "
		                 "text_config.rope_scaling.mrope_section",
		                 c->n_mrope, sum, half, c->head_dim);
	return WT_OK;
}

/* The vision tower's heads split its width, the mergers' output feeds the language model
 * (out_hidden_size = hidden_size), each deepstack index names a block; then MRoPE. */
static int qwen3_vl_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs vision_config (depth, hidden_size, "
		                 "num_heads, intermediate_size, out_hidden_size, "
		                 "num_position_embeddings, deepstack_visual_indexes)",
		                 c->architecture ? c->architecture : "Qwen3-VL");
	int64_t depth = c->v_depth > 0 ? c->v_depth : SM_Q3V_DEPTH;
	int64_t ve = c->v_hidden_size > 0 ? c->v_hidden_size : SM_Q3V_HIDDEN;
	int64_t vh = c->v_num_heads > 0 ? c->v_num_heads : SM_Q3V_HEADS;
	int64_t out = c->v_out_hidden_size > 0 ? c->v_out_hidden_size : SM_Q3V_OUT;
	if (ve % vh)
		return shardmap_vision_heads_err("num_heads", vh, ve, err);
	if (out != c->hidden_size)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.out_hidden_size %" PRId64
		                 " must equal the language model's hidden_size %" PRId64
		                 " (the mergers' output is its input); set out_hidden_size",
		                 out, c->hidden_size);
	if (c->n_deepstack > (size_t)depth)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config.deepstack_visual_indexes has %zu entries "
		    "but depth is %" PRId64 "; give at most one per vision block",
		    c->n_deepstack, depth);
	for (size_t k = 0; k < c->n_deepstack; k++)
		if (c->deepstack[k] < 0 || c->deepstack[k] >= depth)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: vision_config.deepstack_visual_indexes[%zu] = "
			    "%" PRId64 " is not a vision block (depth %" PRId64
			    "); give block indices in [0, depth)",
			    k, c->deepstack[k], depth);
	return q3v_mrope_check(c, err);
}

static const char *const qwen3_vl_archs[] = {"Qwen3VLForConditionalGeneration", NULL};
static const char *const qwen3_vl_moe_archs[] = {"Qwen3VLMoeForConditionalGeneration", NULL};

/* Qwen3VLTextConfig / Qwen3VLMoeTextConfig leave tie_word_embeddings false (transformers
 * ties by the text config's value, which the loader's text_config overlay reads). The MoE
 * text config's absent expert keys take its class defaults (loader/config_defaults.c: 60
 * experts of 1408), as transformers builds the model. */
const sm_family shardmap_family_qwen3_vl = {
    .name = "qwen3_vl",
    .archs = qwen3_vl_archs,
    .rules = qwen3_vl_rules,
    .n_rules = SM_NRULES(qwen3_vl_rules),
    .layer_prefix = "model.layers.",
    .check = qwen3_vl_check,
    .aliases = shardmap_qwen_vl_aliases, /* Qwen2-VL's runtime names */
    .vision_gated = true,
    .qwen3_vl = true,
};

static const sm_family qwen3_vl_moe_pe = {
    .name = "qwen3_vl_moe",
    .archs = qwen3_vl_moe_archs,
    .rules = qwen3_vl_moe_pe_rules,
    .n_rules = SM_NRULES(qwen3_vl_moe_pe_rules),
    .layer_is_moe = shardmap_moe_qwen,
    .layer_prefix = "model.layers.",
    .check = qwen3_vl_check,
    .aliases = shardmap_qwen_vl_aliases, /* Qwen2-VL's runtime names */
    .vision_gated = true,
    .qwen3_vl = true,
};

const sm_family shardmap_family_qwen3_vl_moe = {
    .name = "qwen3_vl_moe",
    .archs = qwen3_vl_moe_archs,
    .rules = qwen3_vl_moe_rules,
    .n_rules = SM_NRULES(qwen3_vl_moe_rules),
    .layer_is_moe = shardmap_moe_qwen,
    .layer_prefix = "model.layers.",
    .check = qwen3_vl_check,
    .aliases = shardmap_qwen_vl_aliases, /* Qwen2-VL's runtime names */
    .vision_gated = true,
    .qwen3_vl = true,
    .per_expert = &qwen3_vl_moe_pe,
};

/*
 * Qwen3-Omni's thinker (Qwen3OmniMoeForConditionalGeneration, model_type qwen3_omni_moe:
 * Qwen/Qwen3-Omni-30B-A3B-Instruct / -Thinking / -Captioner), cut as vLLM's
 * qwen3_omni_moe_thinker.py (Qwen3OmniMoeThinkerForConditionalGeneration) / qwen3_moe.py load
 * it. Its hf_to_vllm_mapper maps thinker.model. -> language_model.model., thinker.lm_head. ->
 * language_model.lm_head., thinker. -> "", and load_weights skips talker. and code2wav.: the
 * shards keep the checkpoint's thinker.* names (the module paths, as Qwen2.5-Omni's), and
 * every talker.* / code2wav.* tensor is skipped and listed.
 *
 * The language model: Qwen3-MoE's table under thinker. (vLLM's Qwen3MoeLLMForCausalLM of
 * thinker_config.text_config: q_norm / k_norm, the router and per-expert experts on the
 * sparse layers, the dense MLP on mlp_only_layers), tied by text_config alone.
 *
 * The vision tower `thinker.visual.*`: Qwen3-VL's blocks, patch embed (vLLM's ReplicatedLinear
 * without a quant config: never quantized) and pos_embed (nn.Embedding of
 * num_position_embeddings); its mergers are Qwen2.5-VL-style Qwen3_VisionPatchMerger: ln_q
 * (with a bias) replicated, mlp.0 (ColumnParallelLinear) by rows with its bias, mlp.2
 * (RowParallelLinear) by columns, its bias replicated; merger.ln_q over the width [VE],
 * merger_list.K.ln_q over the shuffled width [VM] (one per deepstack_visual_indexes entry).
 *
 * The audio encoder `thinker.audio_tower.*`: transformers' own Qwen3OmniMoeAudioEncoder in
 * vLLM (no tensor parallelism, no quant config): every tensor whole on every rank, never
 * quantized: the Conv2d stem conv2d1 [DH, 1, 3, 3], conv2d2 / conv2d3 [DH, DH, 3, 3] with
 * biases (DH downsample_hidden_size), conv_out [AE, DH x F] without a bias (F the mel bins
 * after three stride-2 convolutions), the Whisper layers (q/k/v/out_proj all with biases),
 * ln_post, proj1 [AE, AE] and proj2 [output_dim, AE] with biases. Its positional_embedding
 * is a non-persistent buffer (a checkpoint holding one is refused as unknown).
 */
/* the language model's layers under thinker. (the tables above are written before) */
#undef SM_LAYER
#define SM_LAYER "thinker.model.layers.{i}."

#define Q3O_V  "thinker.visual."
#define Q3O_A  "thinker.audio_tower."
#define Q3O_AB Q3O_A "layers.{i}."

/* An omni merger under M with flags F, its ln_q over ND: mlp.0 [VM, VM] rows with its bias,
 * mlp.2 [VOD, VM] columns, its bias replicated. */
#define Q3O_MERGER(M, F, ND)                                                                       \
	SM_RULE(M "ln_q.weight", M "ln_q.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, F, 1, ND,     \
	        SM_D_ANY),                                                                         \
	    SM_RULE(M "ln_q.bias", M "ln_q.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, F, 1, ND,     \
	            SM_D_ANY),                                                                     \
	    SM_RULE(M "mlp.0.weight", M "mlp.0.weight", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL,           \
	            SM_F_QUANT | (F), 2, SM_D_VM, SM_D_VM),                                        \
	    SM_RULE(M "mlp.0.bias", M "mlp.0.bias", SM_K_ROWS, 0, SM_U_VM, SM_C_ALL, F, 1,         \
	            SM_D_VM, SM_D_ANY),                                                            \
	    SM_RULE(M "mlp.2.weight", M "mlp.2.weight", SM_K_COLS, 0, SM_U_VM, SM_C_ALL,           \
	            SM_F_QUANT | (F), 2, SM_D_VOD, SM_D_VM),                                       \
	    SM_RULE(M "mlp.2.bias", M "mlp.2.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, F, 1,       \
	            SM_D_VOD, SM_D_ANY)

/* a whole audio tensor: of the encoder (no {i}), of one of its layers */
#define Q3O_AR(n, nd, d0, d1)                                                                      \
	SM_RULE(Q3O_A n, Q3O_A n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)
#define Q3O_AL(n, nd, d0, d1)                                                                      \
	SM_RULE(Q3O_AB n, Q3O_AB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_QF, nd, d0, d1)
/* a Conv2d weight [DH, in, 3, 3] (the kernel is the class's constant, not checked) */
#define Q3O_CONV(n, d1)                                                                            \
	{                                                                                          \
		Q3O_A n, Q3O_A n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 4,                         \
		{                                                                                  \
			SM_D_ADH, d1, SM_D_ANY, SM_D_ANY                                           \
		}                                                                                  \
	}
/* a layer's Linear or LayerNorm: weight [d0, d1] (or [d0]) and bias [d0] */
#define Q3O_LIN(n, nd, d0, d1) Q3O_AL(n ".weight", nd, d0, d1), Q3O_AL(n ".bias", 1, d0, SM_D_ANY)

static const sm_rule qwen3_omni_rules[] = {
    SM_RULES_TOP_AT("thinker."),
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_QK_NORM,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    SM_RULE_ROUTER("mlp.gate.weight", 2, SM_D_E, SM_D_HID),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    Q3V_TOWER_RULES(Q3O_V),
    Q3O_MERGER(Q3O_V "merger.", 0, SM_D_VE),
    Q3O_MERGER(Q3O_V "merger_list.{i}.", SM_F_DEEP, SM_D_VM),
    Q3O_CONV("conv2d1.weight", SM_D_ONE),
    Q3O_AR("conv2d1.bias", 1, SM_D_ADH, SM_D_ANY),
    Q3O_CONV("conv2d2.weight", SM_D_ADH),
    Q3O_AR("conv2d2.bias", 1, SM_D_ADH, SM_D_ANY),
    Q3O_CONV("conv2d3.weight", SM_D_ADH),
    Q3O_AR("conv2d3.bias", 1, SM_D_ADH, SM_D_ANY),
    Q3O_AR("conv_out.weight", 2, SM_D_AE, SM_D_ACO),
    Q3O_LIN("self_attn.q_proj", 2, SM_D_AE, SM_D_AE),
    Q3O_LIN("self_attn.k_proj", 2, SM_D_AE, SM_D_AE),
    Q3O_LIN("self_attn.v_proj", 2, SM_D_AE, SM_D_AE),
    Q3O_LIN("self_attn.out_proj", 2, SM_D_AE, SM_D_AE),
    Q3O_LIN("self_attn_layer_norm", 1, SM_D_AE, SM_D_ANY),
    Q3O_LIN("fc1", 2, SM_D_AI, SM_D_AE),
    Q3O_LIN("fc2", 2, SM_D_AE, SM_D_AI),
    Q3O_LIN("final_layer_norm", 1, SM_D_AE, SM_D_ANY),
    Q3O_AR("ln_post.weight", 1, SM_D_AE, SM_D_ANY),
    Q3O_AR("ln_post.bias", 1, SM_D_AE, SM_D_ANY),
    Q3O_AR("proj1.weight", 2, SM_D_AE, SM_D_AE),
    Q3O_AR("proj1.bias", 1, SM_D_AE, SM_D_ANY),
    Q3O_AR("proj2.weight", 2, SM_D_HID, SM_D_AE),
    Q3O_AR("proj2.bias", 1, SM_D_HID, SM_D_ANY),
};

/* The speech generator's tensors (talker.*, code2wav.*): vLLM's load_weights skips them. */
static bool omni3_drop(const ckpt_config *c, const char *cn)
{
	(void)c;
	return strncmp(cn, "talker.", 7) == 0 || strncmp(cn, "code2wav.", 9) == 0;
}

/* MRoPE present (transformers reads rope_scaling without a default), the audio encoder's
 * heads split d_model, which SinusoidsPositionEmbedding needs even, and its proj2 output is
 * the language model's input; then Qwen3-VL's tower checks (the mergers feed the language
 * model, deepstack indexes name blocks, the sections sum to head_dim / 2). */
static int qwen3_omni_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_mrope)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: Qwen3-Omni needs thinker_config.text_config.rope_scaling "
		    "(an object; its mrope_section defaults to [24, 20, 20]): "
		    "Qwen3OmniMoeThinkerTextRotaryEmbedding reads it without a default");
	int rv = shardmap_omni_audio_check(c, "Qwen3OmniMoeAudioAttention", "proj2", err);
	if (rv != WT_OK)
		return rv;
	return qwen3_vl_check(c, err);
}

static const char *const qwen3_omni_archs[] = {"Qwen3OmniMoeForConditionalGeneration", NULL};

/* Qwen3OmniMoeTextConfig leaves tie_word_embeddings false (the loader's tie_by_text) */
const sm_family shardmap_family_qwen3_omni_moe = {
    .name = "qwen3_omni_moe",
    .archs = qwen3_omni_archs,
    .rules = qwen3_omni_rules,
    .n_rules = SM_NRULES(qwen3_omni_rules),
    .layer_is_moe = shardmap_moe_qwen,
    .layer_prefix = "thinker.model.layers.",
    .check = qwen3_omni_check,
    .vision_gated = true,
    .drop_canon = omni3_drop,
    .qwen3_vl = true,
    .omni = true,
};
