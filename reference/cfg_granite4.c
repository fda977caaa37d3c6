/*
 * cfg_granite4.c — Granite 4.0 (GraniteMoeHybridForCausalLM, ibm-granite/granite-4.0-*):
 * its config.json fields with GraniteMoeHybridConfig's defaults (transformers 4.57.1,
 * configuration_granitemoehybrid.py). The mixer's math is in granite4.c.
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
