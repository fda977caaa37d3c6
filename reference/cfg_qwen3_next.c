/*
 * cfg_qwen3_next.c — Qwen3-Next (Qwen3NextForCausalLM, Qwen/Qwen3-Next-80B-A3B-*): its
 * config.json fields with Qwen3NextConfig's defaults (transformers 4.57.1,
 * configuration_qwen3_next.py). The math is in qwen3_next.c.
 *
 *   key                      default            what the reference does with it
 *   rms_norm_eps             1e-6               every RMSNorm, zero-centred (1 + w) but
 *                                               the gated delta net's RMSNormGated (w)
 *   rope_theta               10000              RoPE base of the full-attention layers
 *   partial_rotary_factor    0.25               RoPE turns the first int(head_dim * f)
 *                                               dims of each head (rotate-half)
 *   rope_scaling             null               cfg_rope.c's types over those dims
 *   hidden_act               silu               the MLPs' gate (the gated delta net's
 *                                               conv and output gate are SiLU always)
 *   num_experts_per_tok      10                 top-k of the softmax router
 *   norm_topk_prob           true               top-k weights renormalised
 *   layer_types              absent             ckpt.c: one type per layer, else
 *   full_attention_interval  4                  full attention when (i + 1) % n == 0
 *   linear_num_key_heads ... 16, 32, 128, 128,  the gated delta net's sizes (loader
 *   linear_conv_kernel_dim   4                  defaults), checked here
 *   attention_bias           false              q/k/v/o biases read when present
 *
 * The loader fills Qwen3NextConfig's numeric defaults for keys config.json leaves out
 * (loader/config.c), so the reads below see them; norm_topk_prob, a boolean, takes its
 * default here.
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { Q_PRF, Q_NORM_TOPK, Q_ACT, Q_MAX_POS, Q_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[Q_COUNT] = {
	    [Q_PRF] = {"partial_rotary_factor", CKPT_FIELD_REAL},
	    [Q_NORM_TOPK] = {"norm_topk_prob", CKPT_FIELD_BOOL},
	    [Q_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [Q_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, Q_COUNT, err);
}

/* Python's int(head_dim * partial_rotary_factor), even and from 2 to head_dim. */
static int rotary_dims(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	double prf = f->present ? f->r : 0.25;
	c->rot_dim = prf > 0.0 && prf <= 1.0 ? (int64_t)((double)c->d * prf) : 0;
	if (c->rot_dim < 2 || c->rot_dim % 2 != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: partial_rotary_factor %g of head_dim %lld gives %lld "
		    "rotary dims; the reference needs an even count from 2 to head_dim",
		    prf, (long long)c->d, (long long)c->rot_dim);
	return WT_OK;
}

/* The gated delta net's sizes, when a layer has it: positive, a whole number of value
 * heads per key head (how in_proj_qkvz / in_proj_ba group their rows). */
static int check_linear(const ref_cfg *c, wt_errbuf *err)
{
	bool any = false;
	for (int64_t i = 0; i < c->L; i++)
		any = any || ref_q3n_linear(c, i);
	if (!any)
		return WT_OK;
	if (c->lin_hk < 1 || c->lin_hv < 1 || c->lin_dk < 1 || c->lin_dv < 1 || c->lin_kconv < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: Qwen3-Next's linear-attention layers need "
		                 "linear_num_key_heads, linear_num_value_heads, "
		                 "linear_key_head_dim, linear_value_head_dim and "
		                 "linear_conv_kernel_dim (%lld, %lld, %lld, %lld, %lld)",
		                 (long long)c->lin_hk, (long long)c->lin_hv, (long long)c->lin_dk,
		                 (long long)c->lin_dv, (long long)c->lin_kconv);
	if (c->lin_hv % c->lin_hk != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: linear_num_value_heads %lld is not a multiple of "
		                 "linear_num_key_heads %lld",
		                 (long long)c->lin_hv, (long long)c->lin_hk);
	return WT_OK;
}

int ref_cfg_qwen3_next(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[Q_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[Q_ACT], "silu", c, err);
	if (rv == WT_OK)
		rv = rotary_dims(&f[Q_PRF], c, err);
	if (rv == WT_OK)
		rv = check_linear(c, err);
	if (rv != WT_OK)
		return rv;
	c->norm_off = 1.0f; /* Qwen3NextRMSNorm: x / rms * (1 + w) */
	c->norm_topk = f[Q_NORM_TOPK].present ? f[Q_NORM_TOPK].b : true;
	c->rope_interleave = false;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "Qwen3NextForCausalLM", c->rot_dim,
	                  f[Q_MAX_POS].present ? f[Q_MAX_POS].i : 0};
	rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}
