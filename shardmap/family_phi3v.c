/*
 * family_phi3v.c — Phi-3-Vision (Phi3VForCausalLM, model_type phi3_v, remote code:
 * microsoft/Phi-3-vision-128k-instruct, Phi-3.5-vision-instruct), cut as vLLM's phi3v.py /
 * clip.py / llama.py load it (docs/format.md section 2.7).
 *
 * Runtime names keep the checkpoint's (SHARDS.md); vLLM's hf_to_vllm_mapper only moves them
 * under its own modules (model. -> language_model.model., lm_head. ->
 * language_model.lm_head., model.vision_embed_tokens. -> vision_embed_tokens.,
 * model.vision_embed_tokens.wte -> embed_tokens).
 *
 * - Language model: Phi-3's table (vLLM builds LlamaForCausalLM of the same config): embedding
 *   and lm_head by padded vocabulary rows, q/k/v fused in the checkpoint as qkv_proj and gate /
 *   up as gate_up_proj, re-sliced into each rank's [q_r; k_r; v_r] and [gate_r; up_r], o_proj
 *   and down_proj by columns, norms replicated; untied by default (Phi3VConfig's).
 * - model.vision_embed_tokens.wte.weight: the remote model's second handle on the embedding
 *   table. vLLM loads it, when the checkpoint holds it, into its own VocabParallelEmbedding
 *   (embed_tokens, the one its image merge embeds text with): by padded vocabulary rows as
 *   model.embed_tokens; when absent vLLM reuses the language model's table. Optional here.
 * - The image tower model.vision_embed_tokens.img_processor.vision_model.*: vLLM builds
 *   CLIPVisionModel of its hard-coded CLIP_VIT_LARGE_PATCH14_336_CONFIG (width 1024, 24
 *   blocks, 16 heads, MLP 4096, image 336, patch 14; config.json carries none of these) up to
 *   img_processor.layer_idx (default -2: 24 + idx + 1 blocks; a non-negative index idx + 1),
 *   with quant_config: LLaVA's CLIP rows (SM_RULES_CLIP_TOWER). The blocks past it are dropped;
 *   post_layernorm is built (and kept) only when every block is (require_post_norm None).
 * - glb_GN [1, 1, 4 x 1024] and sub_GN [1, 1, 1, 4 x 1024] (plain Parameters) replicated;
 *   img_projection.0 [hid, 4096] and .2 [hid, hid] with their biases: plain nn.Linear inside
 *   nn.Sequential, whole on every rank, never quantized.
 *
 * The loader (loader/config_phi3v.c) lays the tower's fixed sizes and the block count onto the
 * vision fields and refuses the img_processor / embd_layer settings vLLM cannot run.
 */
#include "shardmap/family_rules.h"
#include "shardmap/tower_defaults.h"

#define P3V_E  "model.vision_embed_tokens."
#define P3V_VT P3V_E "img_processor.vision_model."
/* CLIP ViT-L/14-336's blocks (vLLM's CLIP_VIT_LARGE_PATCH14_336_CONFIG) */
#define P3V_CLIP_BLOCKS 24

#define P3V_REPL(n, nd, d0, d1) SM_RULE(n, n, SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, nd, d0, d1)

static const sm_rule phi3v_rules[] = {
    SM_RULES_TOP,
    SM_RULES_LNORM,
    SM_RULES_PHI3_ATTN,
    SM_RULES_MLP_FUSED,
    SM_RULE(P3V_E "wte.weight", P3V_E "wte.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_ALL, SM_F_OPT, 2,
            SM_D_V, SM_D_HID),
    SM_RULES_CLIP_TOWER(P3V_VT),
    SM_RULE3(P3V_E "glb_GN", P3V_E "glb_GN", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, SM_D_ONE,
             SM_D_ONE, SM_D_VM),
    {P3V_E "sub_GN",
     P3V_E "sub_GN",
     SM_K_REPL,
     0,
     SM_U_NONE,
     SM_C_ALL,
     0,
     4,
     {SM_D_ONE, SM_D_ONE, SM_D_ONE, SM_D_VM}},
    P3V_REPL(P3V_E "img_projection.0.weight", 2, SM_D_HID, SM_D_VM),
    P3V_REPL(P3V_E "img_projection.0.bias", 1, SM_D_HID, SM_D_ANY),
    P3V_REPL(P3V_E "img_projection.2.weight", 2, SM_D_HID, SM_D_HID),
    P3V_REPL(P3V_E "img_projection.2.bias", 1, SM_D_HID, SM_D_ANY),
};

/* The blocks past img_processor.layer_idx, and post_layernorm unless every block is built. */
static bool phi3v_drop(const ckpt_config *c, const char *cn)
{
	return shardmap_vision_drop(c, P3V_VT, P3V_CLIP_BLOCKS, false, cn);
}

/* The loader reads img_processor (model_type phi3_v) into the vision fields; an architecture
 * Phi3VForCausalLM under another model_type has none. */
static int phi3v_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->has_vision)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s needs model_type phi3_v (Phi3VConfig) with its "
		                 "img_processor and embd_layer objects; vLLM's phi3v.py reads them",
		                 c->architecture);
	return WT_OK;
}

static const char *const phi3v_archs[] = {"Phi3VForCausalLM", NULL};

const sm_family shardmap_family_phi3v = {
    .name = "phi3v",
    .archs = phi3v_archs,
    .rules = phi3v_rules,
    .n_rules = SM_NRULES(phi3v_rules),
    .layer_prefix = "model.layers.",
    .check = phi3v_check,
    .vision_gated = true,
    .vision_siglip = true,
    .clip = true,
    .drop_canon = phi3v_drop,
};
