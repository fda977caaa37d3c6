/*
 * family_ernie45vl.c — ERNIE-4.5-VL (Ernie4_5_VLMoeForConditionalGeneration:
 * baidu/ERNIE-4.5-VL-28B-A3B-PT, -424B-A47B-PT), as vLLM's ernie45_vl.py and ernie45_vl_moe.py
 * load it. Runtime names keep the checkpoint's (SHARDS.md: vLLM's hf_to_vllm_mapper only moves
 * model.* under language_model. and model.resampler_model.* to resampler_model.), but for the
 * one set the checkpoint does not name apart.
 *
 * Language model (model.*, lm_head): ERNIE 4.5 MoE's (family_ernie.c) attention, norms, vocab
 * and the dense MLP of the layers outside moe_layer_start_index .. moe_layer_end_index (the
 * loader's text entries; both ranges give the same layers). An MoE layer holds two routed sets
 * in one index range: mlp.experts.{j}, j < moe_num_experts[0], the text experts (FusedMoE of
 * moe_intermediate_size[0]: stacked into mlp.experts.w13_weight / w2_weight as SHARDS.md
 * names them), and mlp.experts.{E + j} the vision experts (vLLM renames them
 * vision_experts.{j}: a FusedMoE of moe_intermediate_size[1], stacked into
 * mlp.vision_experts.w13_weight / w2_weight), each TP-split inside its experts without EP and
 * spread whole over the ep ranks with it, each set alike (two FusedMoE of E experts: a rank
 * holds the same j of both). The routers mlp.gate.weight (text) and mlp.gate.weight_1
 * (vision) are stored [hid, E]: vLLM loads them transposed (loaded_weight.T) into
 * ReplicatedLinear text_experts_gate / vision_experts_gate, so they are emitted [E, hid] under
 * their checkpoint names, whole, never quantized (SHARDS.md's router rule; vLLM passes
 * quant_config to them, params_dtype F32). mlp.moe_statics.e_score_correction_bias [2, E]
 * (text row, vision row; vLLM's e_score_correction_bias parameter) whole, never quantized.
 * The shared experts (moe_intermediate_size[0] x moe_num_shared_experts) merged as ERNIE 4.5
 * MoE's. model.mtp_* dropped as there (vLLM skips names holding "mtp").
 *
 * Vision tower (vision_model.*, Ernie4_5_VisionTransformer, built with quant_config):
 * patch_embed.proj [VE, in_channels x patch_size^2] (a plain nn.Linear) whole, never
 * quantized; per block norm1 / norm2 (LayerNorm, biases) whole, attn.qkv [3 VE, VE] and its
 * bias ([q; k; v], QKVParallelLinear with KV = H) by heads into [q_r; k_r; v_r], attn.proj by
 * columns (its bias whole), mlp.fc1 and its bias by rows, mlp.fc2 by columns (its bias whole),
 * the four Linears quantized; ln (LayerNorm) whole.
 *
 * Resampler (model.resampler_model.*, VariableResolutionResamplerModel: its ColumnParallel
 * Linears get getattr(config, "quant_config", None), no such key in the config: never
 * quantized; gather_output: each rank holds its rows): spatial_linear.0 / .2 [VM, VM]
 * (VM = embed_dim x spatial_conv_size^2) and their biases by rows, spatial_linear.3
 * (LayerNorm) whole; with use_temporal_conv temporal_linear.0 [VM, 2 VM] / .2 [VM, VM] by rows,
 * temporal_linear.3 whole (without it skipped, as the resampler's load_weights skips names it
 * has no parameter for); mlp [hid, VM] and its bias by rows (hidden_size), after_norm
 * (RMSNorm) whole.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shardmap/family_rules.h"

#define EV_M  "mlp."
#define EV_VB "vision_model.blocks.{i}."
#define EV_RS "model.resampler_model."

/* The vision experts: as SM_RULES_EXPERTS under mlp.vision_experts., moe_intermediate_size[1]
 * wide. */
#define EV_VEXP(leaf, rt, kind, part, d0, d1)                                                      \
	SM_RULE(SM_LAYER EV_M "vision_experts.{j}." leaf ".weight", SM_LAYER EV_M rt, kind, part,  \
	        SM_U_IEV, SM_C_MOE, SM_F_QUANT, 2, d0, d1)
/* A router stored [hid, E], emitted [E, hid] (vLLM's loaded_weight.T). */
#define EV_GATE(n)                                                                                 \
	SM_RULE(SM_LAYER EV_M n, SM_LAYER EV_M n, SM_K_REPL, 0, SM_U_NONE, SM_C_MOE, SM_F_TRANS,   \
	        2, SM_D_E, SM_D_HID)
#define EV_VREPL(n)                                                                                \
	SM_RULE(EV_VB n, EV_VB n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, SM_F_VIS, 1, SM_D_VE, SM_D_ANY)
#define EV_REPL(n, d) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 1, d, SM_D_ANY)
/* A resampler Linear (ColumnParallelLinear, gather_output) under condition C: weight [d0, d1]
 * and bias [d0] by rows in unit U, never quantized. */
#define EV_COLP(n, U, C, d0, d1)                                                                   \
	SM_RULE(EV_RS n ".weight", EV_RS n ".weight", SM_K_ROWS, 0, U, C, 0, 2, d0, d1),           \
	    SM_RULE(EV_RS n ".bias", EV_RS n ".bias", SM_K_ROWS, 0, U, C, 0, 1, d0, SM_D_ANY)
#define EV_NORM(n, C)                                                                              \
	SM_RULE(EV_RS n ".weight", EV_RS n ".weight", SM_K_REPL, 0, SM_U_NONE, C, 0, 1, SM_D_VM,   \
	        SM_D_ANY),                                                                         \
	    SM_RULE(EV_RS n ".bias", EV_RS n ".bias", SM_K_REPL, 0, SM_U_NONE, C, 0, 1, SM_D_VM,   \
	            SM_D_ANY)

static const sm_rule ernie45_vl_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_ATTN,
    SM_RULES_MLP("mlp.", SM_D_I, SM_U_I, SM_C_DENSE),
    EV_GATE("gate.weight"),
    EV_GATE("gate.weight_1"),
    SM_RULE_ROUTER("mlp.moe_statics.e_score_correction_bias", 2, SM_D_ANY, SM_D_E),
    SM_RULES_EXPERTS("mlp.experts.", "gate_proj", "up_proj", "down_proj"),
    EV_VEXP("gate_proj", "vision_experts.w13_weight", SM_K_EXP13, 0, SM_D_IEV, SM_D_HID),
    EV_VEXP("up_proj", "vision_experts.w13_weight", SM_K_EXP13, 1, SM_D_IEV, SM_D_HID),
    EV_VEXP("down_proj", "vision_experts.w2_weight", SM_K_EXP2, 0, SM_D_HID, SM_D_IEV),
    SM_RULES_MLP("mlp.shared_experts.", SM_D_ISH, SM_U_ISH, SM_C_SHARED),
    /* the vision tower */
    SM_RULE("vision_model.patch_embed.proj.weight", "vision_model.patch_embed.proj.weight",
            SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_VE, SM_D_VUNF),
    EV_VREPL("norm1.weight"),
    EV_VREPL("norm1.bias"),
    EV_VREPL("norm2.weight"),
    EV_VREPL("norm2.bias"),
    SM_RULE(EV_VB "attn.qkv.weight", EV_VB "attn.qkv.weight", SM_K_QKVF, 0, SM_U_VHEADS, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_V3E, SM_D_VE),
    SM_RULE(EV_VB "attn.qkv.bias", EV_VB "attn.qkv.bias", SM_K_QKVF, 0, SM_U_VHEADS, SM_C_ALL,
            SM_F_VIS, 1, SM_D_V3E, SM_D_ANY),
    SM_RULE(EV_VB "attn.proj.weight", EV_VB "attn.proj.weight", SM_K_COLS, 0, SM_U_VHEADS, SM_C_ALL,
            SM_F_QUANT | SM_F_VIS, 2, SM_D_VE, SM_D_VE),
    EV_VREPL("attn.proj.bias"),
    SM_RULES_VIS_FC(EV_VB),
    EV_VREPL("mlp.fc2.bias"),
    EV_REPL("vision_model.ln.weight", SM_D_VE),
    EV_REPL("vision_model.ln.bias", SM_D_VE),
    /* the resampler */
    EV_COLP("spatial_linear.0", SM_U_VM, SM_C_ALL, SM_D_VM, SM_D_VM),
    EV_COLP("spatial_linear.2", SM_U_VM, SM_C_ALL, SM_D_VM, SM_D_VM),
    EV_NORM("spatial_linear.3", SM_C_ALL),
    EV_COLP("temporal_linear.0", SM_U_VM, SM_C_EVTEMP, SM_D_VM, SM_D_VM2),
    EV_COLP("temporal_linear.2", SM_U_VM, SM_C_EVTEMP, SM_D_VM, SM_D_VM),
    EV_NORM("temporal_linear.3", SM_C_EVTEMP),
    EV_COLP("mlp", SM_U_HID, SM_C_ALL, SM_D_HID, SM_D_VM),
    EV_REPL(EV_RS "after_norm.weight", SM_D_HID),
};

/* vLLM's load_weights: checkpoint expert mlp.experts.{J}, J >= moe_num_experts[0], is vision
 * expert J - E (vision_experts.{J - E}); to_rules false maps a rules' name back. A name past
 * the digits of at most 9 is left alone (the planner refuses it). */
static const char *ev_rename(const ckpt_config *c, bool to_rules, const char *name, char *buf,
                             size_t cap)
{
	const char *from = to_rules ? ".mlp.experts." : ".mlp.vision_experts.";
	const char *to = to_rules ? ".mlp.vision_experts." : ".mlp.experts.";
	const char *at = strstr(name, from), *d = at ? at + strlen(from) : NULL;
	if (at == NULL || strncmp(name, "model.layers.", 13) != 0 || *d < '0' || *d > '9')
		return name;
	int64_t j = 0;
	const char *e = d;
	while (*e >= '0' && *e <= '9' && e - d < 10)
		j = j * 10 + (*e++ - '0');
	if (e - d > 9 || (to_rules && j < c->num_experts))
		return name;
	j = to_rules ? j - c->num_experts : j + c->num_experts;
	int n = snprintf(buf, cap, "%.*s%s%" PRId64 "%s", (int)(at - name), name, to, j, e);
	return n < 0 || (size_t)n >= cap ? NULL : buf;
}

/* moe_statics.e_score_correction_bias holds a text row and a vision row: [2, E] (the rule
 * checks E). */
static int ev_bias_rows(const ckpt *ck, const ckpt_config *c, wt_errbuf *err)
{
	(void)c;
	static const char suf[] = ".mlp.moe_statics.e_score_correction_bias";
	for (size_t k = 0; k < ckpt_n_tensors(ck); k++) {
		const ckpt_tensor *t = ckpt_tensor_at(ck, k);
		size_t n = strlen(t->name);
		if (n < sizeof(suf) - 1 || strcmp(t->name + n - (sizeof(suf) - 1), suf) != 0)
			continue;
		if (t->ndim != 2 || t->shape[0] != 2)
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': %d-D with %" PRId64
			                 " rows, want [2, moe_num_experts] (the text experts' "
			                 "correction bias, then the vision experts': vLLM's "
			                 "Ernie4_5_VLMoeMoE)",
			                 t->name, t->ndim, t->ndim > 0 ? t->shape[0] : 0);
	}
	return WT_OK;
}

/* VariableResolutionResamplerModel.load_weights skips a name it has no parameter for: without
 * use_temporal_conv, the temporal_linear.* a checkpoint may hold are skipped. */
static bool ev_drop(const ckpt_config *c, const char *cn)
{
	static const char tl[] = EV_RS "temporal_linear.";
	return !c->ev_temporal_conv && strncmp(cn, tl, sizeof(tl) - 1) == 0;
}

static const char *const ernie45_vl_archs[] = {"Ernie4_5_VLMoeForConditionalGeneration", NULL};

/* No class defaults of its own (the loader requires the keys vLLM reads without one);
 * tie_word_embeddings absent ties (PretrainedConfig's default; the 28B release ties). */
const sm_family shardmap_family_ernie45_vl = {
    .name = "ernie45_vl",
    .archs = ernie45_vl_archs,
    .rules = ernie45_vl_rules,
    .n_rules = SM_NRULES(ernie45_vl_rules),
    .layer_is_moe = shardmap_ernie_moe_layer,
    .layer_prefix = "model.layers.",
    .check = shardmap_ernie_moe_check,
    .check_extra = ev_bias_rows,
    .tie_default = true,
    .drop_prefix = "model.mtp_",
    .moe_keys = "moe_layer_start_index, moe_layer_end_index, moe_layer_interval",
    .tp_le_experts = true,
    .vllm_py = "ernie45_vl_moe",
    .drop_canon = ev_drop,
    .rename = ev_rename,
    .ernie_vl = true,
};
