/*
 * bailing.c — Bailing MoE's tensors (BailingMoeForCausalLM, remote code; c->bailing, kind
 * REF_QWEN2_MOE) under Llama's names, which the decoder passes read: vLLM's bailing_moe.py is
 * Llama's decoder (RMSNorm, neox-style rotate-half RoPE over the whole head, grouped kv heads)
 * with q/k/v packed into one query_key_value ([q; k; v] rows, Phi-3's qkv_proj: fused_ckpt)
 * and, in every layer, Qwen2-MoE's routing (softmax over mlp.gate, top num_experts_per_tok,
 * renormalized when norm_topk_prob, BailingMoeConfig's default true) with the shared experts
 * added ungated (mlp.shared_experts, DeepSeek's name).
 *
 *   model.word_embeddings.       model.embed_tokens.
 *   model.layers.{i}.            model.layers.{i}.   and in a layer
 *     attention.query_key_value. self_attn.qkv_proj.  ([q; k; v], a rank's [q_r; k_r; v_r])
 *     attention.dense.           self_attn.o_proj.
 *     attention.query_layernorm. self_attn.q_norm.    (Ling 2.0, BailingMoeV2ForCausalLM:
 *     attention.key_layernorm.   self_attn.k_norm.     read as GLM-4.5's, c->bailing_v2)
 *     mlp.gate.expert_bias       mlp.gate.e_score_correction_bias
 *
 * (lm_head, model.norm, the layer norms and mlp.* keep their names; suffixes such as
 * weight_scale follow.) lm_head is read as stored: vLLM's norm_head normalization is never
 * reached (shardmap/family_bailing.c), so the reference does not normalize it either.
 */
#include <stdio.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const bl_tops[][2] = {
    {"model.word_embeddings.", "model.embed_tokens."},
};
static const char *const bl_leaves[][2] = {
    {".attention.query_key_value.", ".self_attn.qkv_proj."},
    {".attention.dense.", ".self_attn.o_proj."},
    /* Ling 2.0 (c->bailing_v2; the planner refuses them under bailing_moe) */
    {".attention.query_layernorm.", ".self_attn.q_norm."},
    {".attention.key_layernorm.", ".self_attn.k_norm."},
    {".mlp.gate.expert_bias", ".mlp.gate.e_score_correction_bias"},
};

bool ref_bailing_named(ref_set *s)
{
	return ref_set_find(s, "model.word_embeddings.weight") != NULL;
}

static int bl_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)x, (void)in;
	char name[512];
	int rv = ref_map_name(t->name, REF_NAME_MAP(bl_tops), REF_NAME_MAP(bl_leaves), name,
	                      sizeof(name), NULL, NULL, NULL, err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

int ref_bailing_rename(ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, bl_one, NULL, false, err);
}
