/*
 * cfg_chameleon.c — Chameleon (ChameleonForConditionalGeneration, chameleon set by the family
 * map): its config.json switches with ChameleonConfig's defaults (transformers 4.57.1,
 * configuration_chameleon.py; the dims' defaults are the loader's class defaults), and the
 * per-head q/k LayerNorm both forward paths share. Text tokens only: the VQ-VAE image
 * tokenizer (model.vqmodel.*) is loaded, not run.
 *
 * The math followed (modeling_chameleon.py, 4.57.1): Llama's decoder (RMSNorm eps
 * rms_norm_eps, q/k/v/o without biases, down(silu(gate(h)) * up(h)), RoPE rotate_half over
 * halves) with q and k LayerNormed per head before RoPE: ChameleonLayerNorm((heads, d)),
 * F.layer_norm over each head's d dims with eps 1e-5 whatever the config says, then that
 * head's own weight row and bias row of q_norm [H, d] / k_norm [KV, d]. swin_norm
 * (chameleon-30b) moves the norms after the sublayers: x = x + input_layernorm(attn(x));
 * x = x + post_attention_layernorm(mlp(x)) (OLMo 2's block under these names: olmo2 and
 * sandwich set, reference_int.h ref_post_norm). The logits are lm_head(norm(x)); the ones of
 * the vocabulary_map's IMGIMG image tokens, which transformers and vLLM set to the float
 * minimum, are left as computed.
 *
 *   key                      default     what the reference does with it
 *   rms_norm_eps             1e-5        every RMSNorm (the loader's class defaults)
 *   hidden_act               silu        the MLP's gate
 *   swin_norm                false       the norms' places
 *   rope_theta, rope_scaling 10000, -    cfg_rope.c
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { CH_ACT, CH_SWIN, CH_MAX_POS, CH_COUNT };

int ref_cfg_chameleon(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[CH_COUNT] = {
	    [CH_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [CH_SWIN] = {"swin_norm", CKPT_FIELD_BOOL},
	    [CH_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	int rv = ckpt_config_fields(json, len, f, CH_COUNT, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[CH_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->qk_norm = false; /* its own per-head LayerNorms: ref_chameleon_qk */
	if (f[CH_SWIN].present && f[CH_SWIN].b)
		c->olmo2 = c->sandwich = true;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "ChameleonForConditionalGeneration", c->d,
	                  f[CH_MAX_POS].present ? f[CH_MAX_POS].i : 4096};
	rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}

int ref_chameleon_qk(const ref_cfg *c, ref_set *s, int64_t l, float *q, float *k, int64_t T,
                     int64_t n_q, int64_t n_kv, wt_errbuf *err)
{
	const float *w[2], *b[2];
	int64_t n[2] = {n_q, n_kv};
	int rv;
	for (int j = 0; j < 2; j++)
		if ((rv = ref_getf(s, &w[j], false, err, 2, n[j], c->d, 0,
		                   "model.layers.%lld.self_attn.%s_norm.weight", (long long)l,
		                   j ? "k" : "q")) ||
		    (rv = ref_getf(s, &b[j], false, err, 2, n[j], c->d, 0,
		                   "model.layers.%lld.self_attn.%s_norm.bias", (long long)l,
		                   j ? "k" : "q")))
			return rv;
	for (int j = 0; j < 2; j++) {
		float *x = j ? k : q;
		for (int64_t t = 0; t < T; t++)
			for (int64_t h = 0; h < n[j]; h++) {
				float *xh = x + (t * n[j] + h) * c->d;
				ref_layernorm(xh, xh, w[j] + h * c->d, b[j] + h * c->d, 1, c->d,
				              1e-5f);
			}
	}
	return WT_OK;
}
