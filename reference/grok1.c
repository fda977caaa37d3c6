/*
 * grok1.c — Grok-1 (Grok1ModelForCausalLM, hpcai-tech/grok-1; remote code; c->grok): its
 * config fields as vLLM's grok1.py reads them, and its tensors under the names the decoder
 * passes read (Mixtral's MoE, Gemma 2's sandwich norms):
 *
 *   checkpoint / rank (model.layers.{i}.)   read as
 *   attn.                                   self_attn.
 *   pre_attn_norm.scale / .weight           input_layernorm.weight
 *   post_attn_norm.                         post_attention_layernorm.
 *   pre_moe_norm.                           pre_feedforward_layernorm.
 *   post_moe_norm.                          post_feedforward_layernorm.
 *   moe_block.                              block_sparse_moe.
 *   experts.{e}.linear / linear_v /         experts.{e}.w1 / w3 / w2 (gate, up, down:
 *   linear_1                                vLLM's expert_params_mapping)
 *   model.norm.scale                        model.norm.weight
 *
 *   key                          absent        what the reference does with it
 *   attn_output_multiplier       0.0884        o_proj's output times it, before post_attn_norm
 *   embedding_multiplier_scale   78.38         the embeddings times it
 *   output_multiplier_scale      0.577         the logits times it (vLLM's LogitsProcessor)
 *   attn_logit_softcapping       30            cap tanh(s / cap) of the scaled scores; <= 0
 *                                              none (vLLM's max(.., 0))
 *   rope_theta                   10000         rotate-half RoPE over the whole head
 *   rms_norm_eps                 1e-5          every RMSNorm
 * The absent values are Grok1Config's (the loader's class defaults) and vLLM's getattr
 * default for the soft-cap. The router logits are soft-capped 30 tanh(x / 30), then softmax
 * top-k renormalized (FusedMoE renormalize); the experts are gelu (erf: FusedMoE's "gelu").
 */
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/grok1.h"
#include "reference/reference_int.h"

static const char *const gk_map[][2] = {
    {".attn.", ".self_attn."},
    {".pre_attn_norm.", ".input_layernorm."},
    {".post_attn_norm.", ".post_attention_layernorm."},
    {".pre_moe_norm.", ".pre_feedforward_layernorm."},
    {".post_moe_norm.", ".post_feedforward_layernorm."},
    {".moe_block.", ".block_sparse_moe."},
    {".linear.", ".w1."},
    {".linear_v.", ".w3."},
    {".linear_1.", ".w2."},
    {"norm.scale", "norm.weight"},
};

bool ref_grok1_named(ref_set *s)
{
	return ref_set_find(s, "model.layers.0.pre_attn_norm.scale") != NULL ||
	       ref_set_find(s, "model.layers.0.pre_attn_norm.weight") != NULL;
}

/* Replace the first `from` of buf (cap bytes) by `to`; false if it does not fit. */
static bool swap_once(char *buf, size_t cap, const char *from, const char *to)
{
	char *at = strstr(buf, from);
	if (at == NULL)
		return true;
	size_t f = strlen(from), t = strlen(to), n = strlen(buf);
	if (n - f + t + 1 > cap)
		return false;
	memmove(at + t, at + f, n - (size_t)(at - buf) - f + 1);
	memcpy(at, to, t);
	return true;
}

static int gk_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)x;
	(void)in;
	char name[512];
	if (snprintf(name, sizeof(name), "%s", t->name) >= (int)sizeof(name))
		return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
	for (size_t i = 0; i < sizeof(gk_map) / sizeof(gk_map[0]); i++)
		if (!swap_once(name, sizeof(name), gk_map[i][0], gk_map[i][1]))
			return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
	return ref_set_add_as(out, name, t, err);
}

int ref_grok1_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, gk_one, c, true, err);
}

enum { G_ATT, G_EMB, G_OUT, G_CAP, G_MAX_POS, G_COUNT };

int ref_cfg_grok1(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[G_COUNT] = {
	    [G_ATT] = {"attn_output_multiplier", CKPT_FIELD_REAL},
	    [G_EMB] = {"embedding_multiplier_scale", CKPT_FIELD_REAL},
	    [G_OUT] = {"output_multiplier_scale", CKPT_FIELD_REAL},
	    [G_CAP] = {"attn_logit_softcapping", CKPT_FIELD_REAL},
	    [G_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	int rv = ckpt_config_fields(json, len, f, G_COUNT, err);
	if (rv != WT_OK)
		return rv;
	static const double dflt[] = {0.08838834764831845, 78.38367176906169, 0.5773502691896257};
	double m[3];
	for (int k = G_ATT; k <= G_OUT; k++) { /* float's range: the logits stay finite */
		m[k] = f[k].present ? f[k].r : dflt[k];
		if (!(m[k] > 0.0 && m[k] < 1e6))
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s %g; the reference takes a multiplier in (0, "
			    "1e6) (Grok-1: %g)",
			    f[k].key, m[k], dflt[k]);
	}
	c->gk_attn_mult = (float)m[G_ATT];
	c->embed_scale = (float)m[G_EMB];
	c->logit_mult = m[G_OUT];
	double cap = f[G_CAP].present ? f[G_CAP].r : 30.0;
	c->attn_cap = cap > 0.0 ? cap : 0.0;
	c->sandwich = true;
	c->act = REF_ACT_GELU;
	c->norm_topk = true;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "Grok1ModelForCausalLM", c->d,
	                  f[G_MAX_POS].present ? f[G_MAX_POS].i : 0};
	rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}
