/*
 * cfg_granite4.c — Granite 4.0 (GraniteMoeHybridForCausalLM, ibm-granite/granite-4.0-*):
 * its config.json fields with GraniteMoeHybridConfig's defaults (transformers 4.57.1,
 * configuration_granitemoehybrid.py), Bamba's and Falcon-H1's (ref_cfg_falconh1, below).
 * The mixer's math is in granite4.c.
 *
 *   key                      default   what the reference does with it
 *   embedding_multiplier,    1.0       Granite's four multipliers (cfg_fam.c's
 *   residual_multiplier,               parse_granite): embeddings times the first,
 *   attention_multiplier,              x += residual_multiplier * block(x), scores
 *   logits_scaling                     times attention_multiplier, logits / the last
 *   rms_norm_eps             1e-6      every RMSNorm and the mixer's gated norm
 *   hidden_act               silu      the MLPs' gate and the mixer's conv output
 *   position_embedding_type  None      "rope": the attention layers turn q / k
 *                                      (rope_theta, rope_scaling: cfg_rope.c); None or
 *                                      "nope": no positions at all
 *   layer_types              None      ckpt.c: "mamba" / "attention" per layer, required
 *                                      (transformers 4.57.1 builds no model without it)
 *   mamba_n_heads ... _expand 128, 1,  the mixer's sizes (loader defaults; mamba_d_head
 *                            256, 4, 2 "auto" = expand * hidden / heads), checked here
 *   num_local_experts        8         0: no MoE block, the shared MLP alone
 *   num_experts_per_tok      2         top-k of the router logits, softmax over them
 *   shared_intermediate_size 1024      the shared MLP, added ungated beside the experts
 *   mamba_chunk_size         256       not read: the chunked scan is the recurrence
 *
 * The loader fills GraniteMoeHybridConfig's numeric defaults for keys config.json leaves out
 * (loader/config_defaults.c), so the reads below see them.
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

/* position_embedding_type: "rope" turns q / k; None, absent or "nope" leaves them (only
 * "rope" builds GraniteMoeHybridRotaryEmbedding); another value is refused. */
static int position_type(json_t *root, ref_cfg *c, const char *arch, wt_errbuf *err)
{
	json_t *v = ref_lm_get(root, "position_embedding_type");
	const char *s = json_string_value(v);
	c->g4_rope = s != NULL && strcmp(s, "rope") == 0;
	if (v == NULL || json_is_null(v) || c->g4_rope || (s != NULL && strcmp(s, "nope") == 0))
		return WT_OK;
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "config.json: position_embedding_type %s%s%s; %s takes \"rope\" or "
	                 "\"nope\" (null)",
	                 s ? "'" : "", s ? s : "not a string", s ? "'" : "", arch);
}

/* The mixer's sizes when a layer is Mamba: positive, heads x head size = the expanded
 * width (checked by the loader's reader, ckpt.c), heads in whole groups. */
static int check_mamba(const ref_cfg *c, const char *arch, wt_errbuf *err)
{
	bool any = false;
	for (int64_t i = 0; i < c->L; i++)
		any = any || ref_g4_mamba_layer(c, i);
	if (!any)
		return WT_OK;
	if (c->m_heads < 1 || c->m_dh < 1 || c->m_groups < 1 || c->m_state < 1 || c->m_conv < 1 ||
	    c->m_heads % c->m_groups != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s's Mamba layers need mamba_n_heads, "
		                 "mamba_d_head, mamba_n_groups (dividing the heads), mamba_d_state "
		                 "and mamba_d_conv (%lld, %lld, %lld, %lld, %lld)",
		                 arch, (long long)c->m_heads, (long long)c->m_dh,
		                 (long long)c->m_groups, (long long)c->m_state,
		                 (long long)c->m_conv);
	return WT_OK;
}

/* The attention's head_dim is hidden_size / num_attention_heads. */
static int check_head_dim(const ref_cfg *c, const char *a, wt_errbuf *err)
{
	if (c->d * c->H != c->hid)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: head_dim %lld x %lld heads is not hidden_size %lld; "
		                 "%s's attention takes hidden_size / num_attention_heads",
		                 (long long)c->d, (long long)c->H, (long long)c->hid, a);
	return WT_OK;
}

int ref_cfg_granite4(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	const char *a = arch ? arch : "GraniteMoeHybridForCausalLM";
	int rv = ref_cfg_fam(c, "granitemoehybrid", json, len, err); /* Granite's multipliers */
	if (rv == WT_OK)
		rv = check_mamba(c, a, err);
	if (rv == WT_OK)
		rv = check_head_dim(c, a, err);
	if (rv != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = position_type(root, c, a, err);
	json_decref(root);
	return rv;
}

/* Bamba: cfg_fam.c's parse_bamba (silu, eps, the partial RoPE), Granite 4.0's mixer sizes
 * and head_dim rule; the attention layers always turn q / k. */
int ref_cfg_bamba(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	const char *a = arch ? arch : "BambaForCausalLM";
	int rv = ref_cfg_fam(c, "bamba", json, len, err);
	if (rv == WT_OK)
		rv = check_mamba(c, a, err);
	if (rv == WT_OK)
		rv = check_head_dim(c, a, err);
	c->g4_rope = true;
	return rv;
}

/* A muP multiplier (a number, or n of them in a list) of FalconH1Config: absent or null is
 * the class's 1.0 each; anything else must be finite and non-zero. */
static int fh1_mults(json_t *root, const char *key, size_t n, float *out, wt_errbuf *err)
{
	json_t *v = ref_lm_get(root, key);
	for (size_t i = 0; i < n; i++) {
		json_t *x = n > 1 && json_is_array(v) ? json_array_get(v, i) : v;
		if (v == NULL || json_is_null(v)) {
			out[i] = 1.0f;
			continue;
		}
		double d = json_is_number(x) ? json_number_value(x) : 0.0;
		if (n > 1 && (!json_is_array(v) || json_array_size(v) != n))
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: %s must be a list of %zu numbers", key, n);
		if (!(d != 0.0 && d > -1e6 && d < 1e6))
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: %s must be non-zero numbers in (-1e6, 1e6)",
			                 key);
		out[i] = (float)d;
	}
	return WT_OK;
}

/* Falcon-H1: Bamba's switches (cfg_fam.c: silu, rms_norm_eps 1e-5, RoPE on the whole head
 * unless partial_rotary_factor says otherwise), the mixer's sizes, the attention's own
 * head_dim (no hidden_size / heads rule), FalconH1Config's multipliers (transformers
 * 4.57.1: each 1.0 when absent or null), mamba_norm_before_gate (default true; the loader
 * reads mamba_rms_norm, ckpt.c), the gated norm over mamba_n_groups groups. */
int ref_cfg_falconh1(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	const char *a = arch ? arch : "FalconH1ForCausalLM";
	int rv = ref_cfg_fam(c, "falcon_h1", json, len, err);
	if (rv == WT_OK)
		rv = check_mamba(c, a, err);
	if (rv != WT_OK)
		return rv;
	c->g4_rope = true;
	c->m_norm_groups = c->m_groups;
	if (c->m_rms_norm && (c->m_heads * c->m_dh) % c->m_norm_groups != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: the gated norm's %lld channels are not %lld groups",
		                 (long long)(c->m_heads * c->m_dh), (long long)c->m_norm_groups);
	if (c->m_norm_groups > REF_G4_MAX_NORM_GROUPS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: mamba_n_groups %lld; the reference's gated norm "
		                 "handles up to %d",
		                 (long long)c->m_norm_groups, REF_G4_MAX_NORM_GROUPS);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	float emb = 1.0f, lmh = 1.0f, mlp[2];
	json_t *nbg = ref_lm_get(root, "mamba_norm_before_gate");
	c->m_norm_before_gate = nbg == NULL || json_is_null(nbg) || json_is_true(nbg);
	if ((rv = fh1_mults(root, "embedding_multiplier", 1, &emb, err)) ||
	    (rv = fh1_mults(root, "lm_head_multiplier", 1, &lmh, err)) ||
	    (rv = fh1_mults(root, "attention_in_multiplier", 1, &c->fh1_attn_in, err)) ||
	    (rv = fh1_mults(root, "attention_out_multiplier", 1, &c->fh1_attn_out, err)) ||
	    (rv = fh1_mults(root, "key_multiplier", 1, &c->fh1_key, err)) ||
	    (rv = fh1_mults(root, "ssm_in_multiplier", 1, &c->fh1_ssm_in, err)) ||
	    (rv = fh1_mults(root, "ssm_out_multiplier", 1, &c->fh1_ssm_out, err)) ||
	    (rv = fh1_mults(root, "ssm_multipliers", 5, c->fh1_mup, err)) ||
	    (rv = fh1_mults(root, "mlp_multipliers", 2, mlp, err))) {
		json_decref(root);
		return rv;
	}
	json_decref(root);
	c->embed_scale = emb;
	c->logit_mult = lmh;
	c->fh1_gate = mlp[0];
	c->fh1_down = mlp[1];
	return WT_OK;
}
