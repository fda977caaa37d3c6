/*
 * cfg_opt.c — OPT (OPTForCausalLM; transformers 4.57.1 configuration_opt.py,
 * modeling_opt.py; vLLM opt.py): its config.json fields (the math: opt.c).
 *
 *   key                             default        what the reference does with it
 *   activation_function             relu           fc1's activation: relu, or ref_cfg_act's
 *                                                  forms (silu, gelu, gelu_new, ...)
 *   word_embed_proj_dim             hidden_size    embed_tokens / lm_head width; project_in /
 *                                                  project_out when it differs from hidden
 *   max_position_embeddings         2048           embed_positions holds it + 2 rows; the
 *                                                  tokens it may run
 *   do_layer_norm_before            true           pre-norm layers, else post-norm (opt-350m)
 *   _remove_final_layer_norm        false          model.decoder.final_layer_norm exists when
 *                                                  do_layer_norm_before and not this
 *   enable_bias                     true           q/k/v/out_proj, fc1 / fc2 biases
 *   layer_norm_elementwise_affine   true           false refused (as the planner does)
 *
 * LayerNorms take nn.LayerNorm's eps 1e-5 (OPTConfig has no eps key).
 */
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { O_ACT, O_WEP, O_POS, O_PRE, O_RMFINAL, O_BIAS, O_AFFINE, O_COUNT };

int ref_cfg_opt(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	static const ckpt_field spec[O_COUNT] = {
	    [O_ACT] = {"activation_function", CKPT_FIELD_STRING},
	    [O_WEP] = {"word_embed_proj_dim", CKPT_FIELD_INT},
	    [O_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [O_PRE] = {"do_layer_norm_before", CKPT_FIELD_BOOL},
	    [O_RMFINAL] = {"_remove_final_layer_norm", CKPT_FIELD_BOOL},
	    [O_BIAS] = {"enable_bias", CKPT_FIELD_BOOL},
	    [O_AFFINE] = {"layer_norm_elementwise_affine", CKPT_FIELD_BOOL},
	};
	ckpt_field f[O_COUNT];
	const char *a = arch ? arch : "OPTForCausalLM";
	memcpy(f, spec, sizeof(spec));
	int rv = ckpt_config_fields(json, len, f, O_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (!f[O_ACT].present || strcmp(f[O_ACT].s, "relu") == 0) {
		c->act = REF_ACT_RELU;
	} else {
		ckpt_field h = f[O_ACT];
		if ((rv = ref_cfg_act(&h, "relu", c, err)) != WT_OK)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: activation_function '%s' on %s; the reference "
			    "has relu, silu, gelu_pytorch_tanh, gelu_new and gelu",
			    f[O_ACT].s, a);
	}
	if (f[O_AFFINE].present && !f[O_AFFINE].b)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: layer_norm_elementwise_affine false on %s; the "
		                 "reference (as the planner) reads OPT's LayerNorms with weights "
		                 "and biases",
		                 a);
	c->wep = f[O_WEP].present ? f[O_WEP].i : c->hid;
	c->max_pos = f[O_POS].present ? f[O_POS].i : 2048;
	c->opt_pre = f[O_PRE].present ? f[O_PRE].b : true;
	c->opt_fnorm = c->opt_pre && !(f[O_RMFINAL].present && f[O_RMFINAL].b);
	c->opt_bias = f[O_BIAS].present ? f[O_BIAS].b : true;
	c->eps = 1e-5;
	if (c->wep < 1 || c->max_pos < 1 || c->H > REF_MAX_HEADS || c->KV != c->H ||
	    c->d * c->H != c->hid)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: word_embed_proj_dim %lld, max_position_embeddings "
		                 "%lld, heads %lld of %lld over hidden_size %lld on %s; the "
		                 "reference needs positive sizes and num_attention_heads (at most "
		                 "%d) heads of hidden_size / heads",
		                 (long long)c->wep, (long long)c->max_pos, (long long)c->H,
		                 (long long)c->d, (long long)c->hid, a, REF_MAX_HEADS);
	return WT_OK;
}
