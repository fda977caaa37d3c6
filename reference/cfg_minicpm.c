/*
 * cfg_minicpm.c — MiniCPM (MiniCPMForCausalLM, remote code): its config.json fields with the
 * remote MiniCPMConfig's defaults (openbmb's configuration_minicpm.py), on top of Llama's math,
 * as vLLM's minicpm.py computes it.
 *
 * The math followed (vLLM's minicpm.py, the remote modeling_minicpm.py alike): Llama's RMSNorm
 * decoder without biases; the embeddings times scale_emb; each block's output (attention,
 * then the MLP) added to the residual times scale_depth / sqrt(num_hidden_layers); the final
 * hidden state divided by hidden_size / dim_model_base before lm_head, done here on the logits
 * (lm_head is linear: the same up to rounding). Scores times head_dim^-0.5, head_dim =
 * hidden_size / heads. These are Granite's four multipliers (cfg_fam.c) under other names:
 * embedding_multiplier = scale_emb, residual_multiplier = scale_depth / sqrt(L),
 * attention_multiplier = head_dim^-0.5, logits_scaling = hidden_size / dim_model_base.
 *
 *   key                      default     what the reference does with it
 *   scale_emb                1           c->embed_scale
 *   scale_depth              1           c->resid_mult = scale_depth / sqrt(L)
 *   dim_model_base           1           c->logits_div = hidden_size / dim_model_base
 *   hidden_act               silu        must be silu (vLLM's MiniCPMMLP raises on another)
 *   rms_norm_eps             1e-6        every RMSNorm (cfg.c)
 *   rope_theta, rope_scaling 10000, -    cfg_rope.c
 *
 * Each multiplier must lie in [1e-6, 1e6] (Granite's range), else WT_EUNSUPPORTED naming the
 * key.
 *
 * MiniCPM3 (MiniCPM3ForCausalLM; minicpm3 and minicpm both set): the same three multipliers
 * and silu MLP around DeepSeek-V2's MLA (mla.c), as vLLM's minicpm3.py runs it: scores times
 * (qk_nope_head_dim + qk_rope_head_dim)^-0.5, RoPE (get_rope's default neox style: rotate-half,
 * no interleave) on the qk_rope_head_dim parts, q_a_layernorm / kv_a_layernorm at
 * rms_norm_eps; no experts. A rope_scaling is refused (WT_EUNSUPPORTED): vLLM's get_rope
 * scaling types (MiniCPM3-4B's longrope) are not checked here for MLA.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { M_EMB, M_DEPTH, M_BASE, M_ACT, M_MAX_POS, M_COUNT };

static int minicpm_mults(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	double m[3];
	for (int k = 0; k < 3; k++) {
		m[k] = f[k].present ? f[k].r : 1.0;
		if (!(m[k] >= 1e-6 && m[k] <= 1e6))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s %g; the reference needs a value in [1e-6, 1e6]",
			    f[k].key, m[k]);
	}
	c->embed_scale = (float)m[M_EMB];
	c->resid_mult = m[M_DEPTH] / sqrt((double)c->L);
	c->logits_div = (double)c->hid / m[M_BASE];
	c->attn_scale = 0.0; /* head_dim^-0.5; MiniCPM3: (nope + rope)^-0.5 (mla.c) */
	if (c->minicpm3) {   /* no experts: cfg.c's routed-scale check */
		c->routed_scale = 1.0;
		c->rope_interleave = false; /* vLLM's get_rope default: neox rotate-half */
	}
	return WT_OK;
}

int ref_cfg_minicpm(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[M_COUNT] = {
	    [M_EMB] = {"scale_emb", CKPT_FIELD_REAL},
	    [M_DEPTH] = {"scale_depth", CKPT_FIELD_REAL},
	    [M_BASE] = {"dim_model_base", CKPT_FIELD_REAL},
	    [M_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [M_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	int rv = ckpt_config_fields(json, len, f, M_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (f[M_ACT].present && strcmp(f[M_ACT].s, "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s'; MiniCPM runs silu only (vLLM's "
		                 "MiniCPMMLP)",
		                 f[M_ACT].s);
	c->act = REF_ACT_SILU;
	if ((rv = minicpm_mults(f, c, err)) != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "MiniCPMForCausalLM", c->minicpm3 ? c->rope : c->d,
	                  f[M_MAX_POS].present ? f[M_MAX_POS].i : 0};
	json_t *rs = json_object_get(root, "rope_scaling");
	if (c->minicpm3 && rs != NULL && !json_is_null(rs))
		rv = wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: rope_scaling on MiniCPM3; the reference runs it without "
		    "(MiniCPM3-4B's longrope and DeepSeek's YaRN softmax scale are not "
		    "vLLM's minicpm3.py math here): remove the key to verify");
	else
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}
