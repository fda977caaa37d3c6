/*
 * nemotron_h.c — Nemotron-H (NemotronHForCausalLM; its remote code's modeling_nemotron_h.py
 * and vLLM's nemotron_h.py): every layer x = x + mixer(norm(x)), one mixer per layer as
 * hybrid_override_pattern says (the loader's layer_types):
 *   "M"  Granite 4.0's Mamba2 mixer (granite4.c): silu on the conv, the gated norm per
 *        n_groups group (the remote code's MambaRMSNormGated group_size, vLLM's
 *        Mixer2RMSNormGated), width mamba_num_heads * mamba_head_dim;
 *   "*"  Llama's attention without positions (no RoPE) or biases, scale head_dim^-0.5;
 *   "-"  the ungated MLP: down_proj(relu(up_proj(h))^2) (nogate.c), biases with mlp_bias;
 * then backbone.norm_f and an untied lm_head. The checkpoint is read under the names the
 * Granite 4.0 / Arcee passes read (ref_nh_rename):
 *
 *   backbone.embeddings.weight           model.embed_tokens.weight
 *   backbone.norm_f.weight               model.final_layernorm.weight
 *   backbone.layers.{i}.norm.weight      model.layers.{i}.input_layernorm.weight
 *                                        ("-" layers: post_attention_layernorm, the MLP's)
 *   backbone.layers.{i}.mixer.X          "M": model.layers.{i}.mamba.X
 *                                        "*": model.layers.{i}.self_attn.X
 *                                        "-": model.layers.{i}.mlp.X
 *   lm_head.weight                       lm_head.weight
 *
 * layer_norm_epsilon (NemotronHConfig's 1e-5) is every RMSNorm's and the gated norm's;
 * residual_in_fp32 is float32 here anyway; rescale_prenorm_residual is initialisation only.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

int ref_nh_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->nh = c->g4 = true;
	c->m_heads = cc->mamba_n_heads;
	c->m_groups = cc->mamba_n_groups;
	c->m_state = cc->mamba_d_state;
	c->m_conv = cc->mamba_d_conv;
	c->m_dh = cc->mamba_d_head;
	c->m_norm_groups = cc->mamba_n_groups;
	if (c->L > REF_L4_MAX_LAYERS || (int64_t)cc->n_layer_types != c->L)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers (%zu typed); the reference runs "
		                 "Nemotron-H with up to %d, one type each",
		                 (long long)c->L, cc->n_layer_types, REF_L4_MAX_LAYERS);
	for (int64_t i = 0; i < c->L; i++) {
		uint64_t bit = 1ull << (i % 64);
		if (cc->layer_types[i] == CKPT_LAYER_MAMBA)
			c->g4_mamba[i / 64] |= bit;
		else if (cc->layer_types[i] == CKPT_LAYER_MLP)
			c->nh_mlp[i / 64] |= bit;
		else if (cc->layer_types[i] == CKPT_LAYER_MOE) {
			c->nh_mlp[i / 64] |= bit;
			c->nh_moe[i / 64] |= bit;
		} else if (cc->layer_types[i] != CKPT_LAYER_ATTN)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: Nemotron-H's layer %lld is neither \"M\", "
			                 "\"*\", \"-\" nor \"E\"",
			                 (long long)i);
	}
	return WT_OK;
}

/* The MoE layers' routing keys (the remote NemotronHConfig's defaults: 2 per token, one group,
 * renormalised, scale 1) and sizes: E (n_routed_experts), Ie, Is (the loader's). */
static int nh_moe_cfg(ref_cfg *c, json_t *root, wt_errbuf *err)
{
	json_t *k = ref_lm_get(root, "num_experts_per_tok"), *g = ref_lm_get(root, "n_group"),
	       *tg = ref_lm_get(root, "topk_group"), *nt = ref_lm_get(root, "norm_topk_prob"),
	       *rs = ref_lm_get(root, "routed_scaling_factor");
	c->topk = json_is_integer(k) ? json_integer_value(k) : 2;
	c->n_group = json_is_integer(g) ? json_integer_value(g) : 1;
	c->topk_group = json_is_integer(tg) ? json_integer_value(tg) : 1;
	c->norm_topk = json_is_boolean(nt) ? json_is_true(nt) : true;
	c->routed_scale = json_is_number(rs) ? json_number_value(rs) : 1.0;
	if (c->E < 1 || c->E > REF_MAX_EXPERTS || c->Ie < 1 || c->Is < 0 || c->n_group < 1 ||
	    c->E % c->n_group != 0 || c->topk_group < 1 || c->topk_group > c->n_group ||
	    c->topk < 1 || c->topk > c->topk_group * (c->E / c->n_group))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: Nemotron-H's MoE: %lld experts (at most %d), "
		                 "moe_intermediate_size %lld, num_experts_per_tok %lld, n_group "
		                 "%lld, topk_group %lld do not fit",
		                 (long long)c->E, REF_MAX_EXPERTS, (long long)c->Ie,
		                 (long long)c->topk, (long long)c->n_group,
		                 (long long)c->topk_group);
	if (!(c->routed_scale > 0.0 && c->routed_scale < 1e6)) /* as DeepSeek's (cfg.c) */
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: Nemotron-H's routed_scaling_factor %g; it must be in "
		    "(0, 1e6)",
		    c->routed_scale);
	return WT_OK;
}

int ref_cfg_nemotron_h(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	const char *a = arch ? arch : "NemotronHForCausalLM";
	json_t *eps = ref_lm_get(root, "layer_norm_epsilon");
	c->eps = json_is_number(eps) ? json_number_value(eps) : 1e-5; /* NemotronHConfig's */
	c->act = REF_ACT_RELU2; /* the MLP's; silu the mixer's */
	c->g4_rope = false;
	c->nogate = true;
	int rv = WT_OK;
	bool any = false, moe = false;
	for (int64_t i = 0; i < c->L; i++) {
		any = any || ref_g4_mamba_layer(c, i);
		moe = moe || ref_layer_is_moe(c, i);
	}
	if (moe)
		rv = nh_moe_cfg(c, root, err);
	if (rv == WT_OK && c->m_norm_groups > REF_G4_MAX_NORM_GROUPS)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: n_groups %lld; the reference runs Nemotron-H's gated "
		               "norm with up to %d groups",
		               (long long)c->m_norm_groups, REF_G4_MAX_NORM_GROUPS);
	else if (rv == WT_OK && any &&
	         (c->m_heads < 1 || c->m_dh < 1 || c->m_groups < 1 || c->m_state < 1 ||
	          c->m_conv < 1 || c->m_heads % c->m_groups != 0))
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: %s's Mamba2 layers need mamba_num_heads (%lld) of "
		               "mamba_head_dim (%lld), n_groups (%lld) dividing them, "
		               "ssm_state_size (%lld) and conv_kernel (%lld)",
		               a, (long long)c->m_heads, (long long)c->m_dh, (long long)c->m_groups,
		               (long long)c->m_state, (long long)c->m_conv);
	json_decref(root);
	return rv;
}

/* name under the Granite 4.0 / Arcee names into buf (cap bytes), or NULL if too long. */
static const char *nh_canon(const ref_cfg *c, const char *name, char *buf, size_t cap)
{
	static const char *const top[][2] = {
	    {"backbone.embeddings.", "model.embed_tokens."},
	    {"backbone.norm_f.", "model.final_layernorm."},
	};
	int n = -1;
	for (size_t i = 0; n < 0 && i < sizeof(top) / sizeof(top[0]); i++)
		if (strncmp(name, top[i][0], strlen(top[i][0])) == 0)
			n = snprintf(buf, cap, "%s%s", top[i][1], name + strlen(top[i][0]));
	const char *lp = "backbone.layers.";
	if (n < 0 && strncmp(name, lp, strlen(lp)) == 0) {
		const char *at = name + strlen(lp), *dot = strchr(at, '.');
		const char *leaf = dot ? dot + 1 : "";
		int li = dot ? (int)(dot - at) : 0;
		long long l = strtoll(at, NULL, 10);
		bool mlp = ref_nh_mlp(c, l), mamba = ref_g4_mamba_layer(c, l);
		const char *mod = mlp ? "mlp." : mamba ? "mamba." : "self_attn.";
		if (strncmp(leaf, "mixer.", 6) == 0)
			n = snprintf(buf, cap, "model.layers.%.*s.%s%s", li, at, mod, leaf + 6);
		else if (strncmp(leaf, "norm.", 5) == 0)
			n = snprintf(buf, cap, "model.layers.%.*s.%s.%s", li, at,
			             mlp ? "post_attention_layernorm" : "input_layernorm",
			             leaf + 5);
	}
	if (n < 0)
		n = snprintf(buf, cap, "%s", name);
	return n < 0 || (size_t)n >= cap ? NULL : buf;
}

static int nh_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)in;
	char buf[512];
	const char *name = nh_canon(x->c, t->name, buf, sizeof(buf));
	return name == NULL ? wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", t->name)
	                    : ref_set_add_as(out, name, t, err);
}

int ref_nh_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, nh_one, c, false, err);
}
