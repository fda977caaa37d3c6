/*
 * cfg_lfm2.c — LFM2 (Lfm2ForCausalLM, LiquidAI/LFM2-*): its config.json fields with
 * Lfm2Config's defaults (transformers 4.57.1, configuration_lfm2.py). The math is in
 * lfm2.c; the conv layers, conv_L_cache, conv_bias and the MLP size come from the loader's
 * parse (ckpt.c, shardmap_lfm2_ff_dim).
 *
 *   key                      default     what the reference does with it
 *   norm_eps                 1e-5        every RMSNorm (plain: x / rms * w)
 *   rope_theta (theta)       1e6         RoPE base of the attention layers (whole head)
 *   rope_scaling             null        cfg_rope.c's types
 *   layer_types              absent      ckpt.c: one type per layer ("conv" /
 *   full_attn_idxs           absent      "full_attention"), else the listed layers attend,
 *                                        else every layer does
 *   conv_L_cache, conv_bias  3, false    the short conv's taps and biases
 *   intermediate_size (block_ff_dim), block_auto_adjust_ff_dim, block_ffn_dim_multiplier,
 *   block_multiple_of        12288, true, 1.0, 256: Lfm2MLP's size rule
 *
 * hidden_act is not read: Lfm2MLP calls F.silu whatever the config says.
 *
 * LFM2-MoE (Lfm2MoeForCausalLM; Lfm2MoeConfig's defaults): the feed_forward below
 * num_dense_layers (2; ckpt.c) is the SwiGLU of intermediate_size, from there the MoE routed
 * as vLLM's lfm2_moe.py asks FusedMoE to (grouped top-k of one group, sigmoid scores):
 *   num_experts_per_tok      4           the top-k (read with the common MoE keys)
 *   use_expert_bias          true        ckpt.c: the expert bias added for the choice only
 *   norm_topk_prob           true        the chosen sigmoid scores over their sum
 *   routed_scaling_factor    1.0         the weights times it; refused outside (0, 1e6)
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { F_EPS, F_MAX_POS, F_NORM_TOPK, F_SCALE, F_COUNT };

int ref_cfg_lfm2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[F_COUNT] = {
	    [F_EPS] = {"norm_eps", CKPT_FIELD_REAL},
	    [F_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [F_NORM_TOPK] = {"norm_topk_prob", CKPT_FIELD_BOOL},
	    [F_SCALE] = {"routed_scaling_factor", CKPT_FIELD_REAL},
	};
	int rv = ckpt_config_fields(json, len, f, F_COUNT, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[F_EPS].present ? f[F_EPS].r : 1e-5;
	c->norm_off = 0.0f; /* Lfm2RMSNorm: weight * x / rms */
	if (c->lfm2_moe) {  /* FusedMoE's grouped top-k of one group */
		c->n_group = c->topk_group = 1;
		c->norm_topk = !f[F_NORM_TOPK].present || f[F_NORM_TOPK].b;
		c->routed_scale = f[F_SCALE].present ? f[F_SCALE].r : 1.0;
		if (!(c->routed_scale > 0.0 && c->routed_scale < 1e6))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: routed_scaling_factor %g; it must be in "
			                 "(0, 1e6)",
			                 c->routed_scale);
	}
	if (c->lfm2_kconv < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: conv_L_cache %lld; it must be >= 1",
		                 (long long)c->lfm2_kconv);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "Lfm2ForCausalLM", c->d,
	                  f[F_MAX_POS].present ? f[F_MAX_POS].i : 0};
	rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}
