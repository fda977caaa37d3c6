/*
 * cfg_minimax_m2.c — MiniMax-M2 (MiniMaxM2ForCausalLM, MiniMaxAI/MiniMax-M2, -M2.1; remote
 * code): the config.json fields the reference reads beyond the common ones (cfg.c), as
 * vLLM's minimax_m2.py reads them. The loader has refused what vLLM cannot build
 * (loader/config_minimax_m2.c: scoring_func other than sigmoid, use_routing_bias false,
 * linear-attention layers, shared experts, per-head q/k norms).
 *
 *   key              what the reference does with it
 *   rotary_dim       RoPE (rotate-half) on the first rotary_dim dims of each head
 *   rope_theta,      cfg_rope.c's RoPE over those dims
 *   rope_scaling
 *   rms_norm_eps     every RMSNorm, q_norm / k_norm over all heads included
 *
 * The MoE (kind REF_MIXTRAL: block_sparse_moe, experts w1 / w3 / w2) is routed as vLLM's
 * FusedMoE with scoring_func sigmoid, e_score_correction_bias and renormalize: the top-k
 * of sigmoid(logits) + bias, weighted by their sigmoid scores over the sum of those
 * (ref_route_ds with one group, routed scale 1).
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { M_ROT, M_MAX_POS, M_COUNT };

int ref_cfg_minimax_m2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[M_COUNT] = {
	    [M_ROT] = {"rotary_dim", CKPT_FIELD_INT},
	    [M_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	int rv = ckpt_config_fields(json, len, f, M_COUNT, err);
	if (rv != WT_OK)
		return rv;
	c->rot_dim = f[M_ROT].present ? f[M_ROT].i : 0;
	if (c->rot_dim < 2 || c->rot_dim % 2 != 0 || c->rot_dim > c->d)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary_dim %lld of head_dim %lld; the reference "
		                 "needs an even count from 2 to head_dim",
		                 (long long)c->rot_dim, (long long)c->d);
	c->n_group = c->topk_group = 1;
	c->norm_topk = true;
	c->routed_scale = 1.0;
	c->rope_interleave = false;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "MiniMaxM2ForCausalLM", c->rot_dim,
	                  f[M_MAX_POS].present ? f[M_MAX_POS].i : 0};
	rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}
