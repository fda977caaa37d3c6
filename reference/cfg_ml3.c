/*
 * cfg_ml3.c — Mistral-Large-3 (MistralLarge3ForCausalLM; family mistral_large3): DeepSeek-V3's
 * reference (MLA, first_k_dense_replace dense layers, routed + shared experts; cfg.c, mla.c) with
 * the routing and attention scaling vLLM runs for it (configs/mistral.py makes the config,
 * deepseek_v2.py runs it):
 *
 *   key              value read            what the reference does
 *   scoring_func     "softmax" only        router softmax(h . gate^T) in float32, no correction
 *                                          bias (DeepseekV2MoE builds none: topk_method is not
 *                                          noaux_tc); groups ranked by their best score
 *                                          (vLLM's grouped_topk without a bias), top topk_group
 *                                          groups, top-k over their experts
 *   topk_method      null / absent only    (noaux_tc would add the correction bias)
 *   norm_topk_prob   true only             the top-k weights renormalised, then times
 *                                          routed_scaling_factor (FusedMoE renormalize)
 *   llama_4_scaling  {original_max_position_embeddings, beta}, optional: token t's q (both its
 *                    nope and rope parts, after RoPE) times 1 + beta ln(1 + floor(t / orig))
 *                    (vLLM's _get_llama_4_scaling, positions 0 .. T-1): 1 while t < orig
 *
 * RoPE, YaRN (rope_scaling, with DeepSeek's mscale^2) and rope_interleave as DeepSeek-V3's
 * (cfg_rope.c; vLLM's MLA rotary is_neox_style=False, the interleaved pairs).
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { M_SCORING, M_TOPK_METHOD, M_NORM_TOPK, M_COUNT };

static int read_l4(json_t *root, ref_cfg *c, wt_errbuf *err)
{
	json_t *l4 = ref_lm_get(root, "llama_4_scaling");
	c->l4_orig = 0;
	c->l4_beta = 0.0;
	if (l4 == NULL || json_is_null(l4))
		return WT_OK;
	json_t *o = json_object_get(l4, "original_max_position_embeddings");
	json_t *b = json_object_get(l4, "beta");
	if (!json_is_object(l4) || !json_is_integer(o) || json_integer_value(o) < 1 ||
	    !json_is_number(b) || !isfinite(json_number_value(b)) || json_number_value(b) < 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: llama_4_scaling must be an object with an integer "
		                 "original_max_position_embeddings >= 1 and a finite beta >= 0");
	c->l4_orig = (int64_t)json_integer_value(o);
	c->l4_beta = json_number_value(b);
	return WT_OK;
}

int ref_cfg_ml3(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[M_COUNT] = {
	    [M_SCORING] = {"scoring_func", CKPT_FIELD_STRING},
	    [M_TOPK_METHOD] = {"topk_method", CKPT_FIELD_STRING},
	    [M_NORM_TOPK] = {"norm_topk_prob", CKPT_FIELD_BOOL},
	};
	int rv = ckpt_config_fields(json, len, f, M_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (!f[M_SCORING].present || strcmp(f[M_SCORING].s, "softmax") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: scoring_func '%s'; Mistral-Large-3 routes with "
		                 "'softmax' (vLLM's configs/mistral.py)",
		                 f[M_SCORING].present ? f[M_SCORING].s : "(absent)");
	if (f[M_TOPK_METHOD].present)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: topk_method '%s'; Mistral-Large-3's is null (no "
		                 "correction bias)",
		                 f[M_TOPK_METHOD].s);
	if (!f[M_NORM_TOPK].present || !f[M_NORM_TOPK].b)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: norm_topk_prob must be true for Mistral-Large-3 "
		                 "(vLLM renormalises its top-k weights)");
	c->norm_topk = true;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = read_l4(root, c, err);
	json_decref(root);
	return rv;
}

void ref_ml3_scale_q(const ref_cfg *c, float *qn, float *qp, int64_t T, int64_t Hl)
{
	if (!c->ml3 || c->l4_orig <= 0)
		return;
	for (int64_t t = 0; t < T; t++) {
		float s =
		    (float)(1.0 + c->l4_beta * log(1.0 + floor((double)t / (double)c->l4_orig)));
		for (int64_t i = 0; i < Hl * c->nope; i++)
			qn[t * Hl * c->nope + i] *= s;
		for (int64_t i = 0; i < Hl * c->rope; i++)
			qp[t * Hl * c->rope + i] *= s;
	}
}
