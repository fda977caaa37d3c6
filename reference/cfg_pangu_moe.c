/*
 * cfg_pangu_moe.c — openPangu-Ultra-MoE (PanguUltraMoEForCausalLM, model_type pangu_ultra_moe;
 * kind REF_DEEPSEEK, c->pangu_moe), as vLLM's openpangu.py runs OpenPanguMoEModel:
 * DeepSeek-V3's pass (MLA with interleaved RoPE on qk_rope_head_dim dims at rope_theta,
 * softmax scale (qk_nope + qk_rope)^-0.5; the dense MLP below first_k_dense_replace; the
 * sigmoid router of one group (FusedMoE's grouped top-k with num_expert_group / topk_group 1),
 * no correction bias, norm_topk_prob, routed_scaling_factor on the routed sum, the shared experts
 * added ungated), with sandwich_norm Gemma 2's sandwich: post_attention_layernorm on the
 * attention output, pre_mlp_layernorm (read as pre_feedforward_layernorm, afmoe.c's rename) on
 * the MLP's input, post_mlp_layernorm (post_feedforward_layernorm) on its output.
 *
 *   key             default   what the reference does with it
 *   sandwich_norm   false     the sandwich above
 *   rope_scaling    -         refused: vLLM's OpenPanguMLAAttention ignores it (a fixed
 *                             deepseek_yarn of factor 1 and mscale 1: plain RoPE), the
 *                             reference would apply it
 *   n_group,        1, 1      refused other than 1: vLLM builds FusedMoE with one group
 *   topk_group
 *   scoring_func    sigmoid   refused other than sigmoid (vLLM: scoring_func "sigmoid")
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference_int.h"

enum { P_SANDWICH, P_COUNT };

int ref_cfg_pangu_moe(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[P_COUNT] = {
	    [P_SANDWICH] = {"sandwich_norm", CKPT_FIELD_BOOL},
	};
	int rv = ckpt_config_fields(json, len, f, P_COUNT, err);
	if (rv != WT_OK)
		return rv;
	c->pangu_moe = true;
	c->sandwich = f[P_SANDWICH].present && f[P_SANDWICH].b;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	json_t *rs = json_object_get(root, "rope_scaling");
	bool scaled = rs != NULL && !json_is_null(rs);
	json_decref(root);
	if (scaled)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_scaling on openPangu-Ultra-MoE; vLLM's "
		                 "openpangu.py ignores it (its MLA RoPE is fixed), the reference "
		                 "would apply it: remove the key");
	if (c->n_group != 1 || c->topk_group != 1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: n_group %lld / topk_group %lld; vLLM's OpenPanguMoE "
		    "routes in one group (num_expert_group 1, topk_group 1): remove the "
		    "keys",
		    (long long)c->n_group, (long long)c->topk_group);
	return WT_OK;
}
