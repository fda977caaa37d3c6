/*
 * cfg_apertus.c — the families whose MLP has no gate (nogate.c): Apertus
 * (ApertusForCausalLM), Arcee (ArceeForCausalLM) and Nemotron (NemotronForCausalLM), their
 * config.json fields with the config classes' defaults (transformers 4.57.1).
 *
 * Apertus (modeling_apertus.py): x += o_proj(attn(q_norm(q), k_norm(k), v)) of
 * attention_layernorm(x), per-head RMSNorm q_norm / k_norm [d] before RoPE, Llama's
 * q/k/v/o (biases with attention_bias, added where the checkpoint has them);
 * x += down_proj(xielu(up_proj(feedforward_layernorm(x)))); model.norm, lm_head.
 *
 *   key            default                       what the reference does with it
 *   hidden_act     xielu                         xIELU; anything else refused (the
 *                                                checkpoint's act_fn scalars are xIELU's)
 *   rope_theta     1.2e7                         the loader's class defaults
 *   rope_scaling   llama3 factor 8, low 1,       cfg_rope.c; absent means this default,
 *                  high 4, original 8192         null means none
 *   rms_norm_eps   1e-5                          every RMSNorm (class defaults)
 *
 * Arcee (modeling_arcee.py): Llama's decoder (input_layernorm, post_attention_layernorm,
 * q/k/v/o biases with attention_bias) whose MLP is down_proj(act(up_proj(x))), biases with
 * mlp_bias (added where the checkpoint has them).
 *
 *   key            default                       what the reference does with it
 *   hidden_act     relu2                         relu(x)^2; silu and the gelu forms as
 *                                                ref_cfg_act; xielu refused (its scalars
 *                                                are no Arcee tensor)
 *   rope_theta     10000                         the loader's class defaults
 *   rope_scaling   null                          cfg_rope.c (AFM-4.5B: yarn)
 *   rms_norm_eps   1e-5                          every RMSNorm (class defaults)
 *
 * Nemotron (modeling_nemotron.py): Arcee's decoder (q/k/v/o biases with attention_bias, MLP
 * biases with mlp_bias) whose input_layernorm, post_attention_layernorm and model.norm are
 * LayerNorm1P: F.layer_norm(x, weight + 1, bias, norm_eps) (layernorm, norm_off 1); RoPE
 * (rotate-half) on the first int(head_dim * partial_rotary_factor) dims of each head, the
 * rest pass.
 *
 *   key                    default   what the reference does with it
 *   hidden_act             relu2     as Arcee's
 *   norm_eps               1e-5      every LayerNorm1P
 *   partial_rotary_factor  0.5       rot_dim = int(head_dim * factor), even, 2..head_dim
 *   rope_theta             10000     the loader's class defaults
 *   rope_scaling           null      refused unless default: NemotronRotaryEmbedding is
 *                                    always the default RoPE (transformers ignores the
 *                                    key, vLLM's nemotron.py applies it)
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { N_ACT, N_MAX_POS, N_NORM_EPS, N_PRF, N_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[N_COUNT] = {
	    [N_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [N_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [N_NORM_EPS] = {"norm_eps", CKPT_FIELD_REAL},
	    [N_PRF] = {"partial_rotary_factor", CKPT_FIELD_REAL},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, N_COUNT, err);
}

/* Nemotron's norm_eps, LayerNorm1P (norm_off 1) and rotary dims; a rope_scaling other than
 * the default is refused: transformers' NemotronRotaryEmbedding ignores it. */
static int nemotron_fields(ref_cfg *c, const ckpt_field *f, const char *json, size_t len,
                           wt_errbuf *err)
{
	c->eps = f[N_NORM_EPS].present ? f[N_NORM_EPS].r : 1e-5;
	c->norm_off = 1.0f;
	double prf = f[N_PRF].present ? f[N_PRF].r : 0.5;
	/* Python's int(): truncation; the range first (a huge factor must not reach the cast) */
	c->rot_dim = prf > 0.0 && prf <= 1.0 ? (int64_t)((double)c->d * prf) : 0;
	if (c->rot_dim < 2 || c->rot_dim % 2 != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: partial_rotary_factor %g of head_dim %lld gives %lld "
		    "rotary dims; the reference needs an even count from 2 to head_dim",
		    prf, (long long)c->d, (long long)c->rot_dim);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	bool other = o != NULL && type != NULL && strcmp(type, "default") != 0;
	int rv = other ? wt_seterr(err, WT_EUNSUPPORTED,
	                           "config.json: %s type '%s' on NemotronForCausalLM: "
	                           "transformers' NemotronRotaryEmbedding always turns the "
	                           "default RoPE (and vLLM's nemotron.py would apply it); give "
	                           "null",
	                           key, type)
	               : WT_OK;
	json_decref(root);
	return rv;
}

int ref_cfg_nogate(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[N_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv != WT_OK)
		return rv;
	const char *name = arch          ? arch
	                   : c->apertus  ? "ApertusForCausalLM"
	                   : c->nemotron ? "NemotronForCausalLM"
	                                 : "ArceeForCausalLM";
	const char *act = f[N_ACT].present ? f[N_ACT].s : c->apertus ? "xielu" : "relu2";
	if (c->apertus && strcmp(act, "xielu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s'; %s's MLP is xIELU with its "
		                 "act_fn scalars (give \"xielu\")",
		                 act, name);
	if (!c->apertus && strcmp(act, "xielu") == 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: hidden_act 'xielu' on %s: its learned scalars are no "
		    "tensor of this architecture (relu2 is its default)",
		    name);
	if (c->apertus)
		c->act = REF_ACT_XIELU;
	else if (strcmp(act, "relu2") == 0)
		c->act = REF_ACT_RELU2;
	else if ((rv = ref_cfg_act(&f[N_ACT], "relu2", c, err)) != WT_OK)
		return rv;
	if (c->nemotron && (rv = nemotron_fields(c, f, json, len, err)) != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	/* ApertusConfig's default rope_scaling when the key is absent (null: none) */
	if (c->apertus && ref_lm_get(root, "rope_scaling") == NULL &&
	    ref_lm_get(root, "rope_parameters") == NULL)
		json_object_set_new(root, "rope_scaling",
		                    json_pack("{s:s, s:f, s:i, s:f, s:f}", "rope_type", "llama3",
		                              "factor", 8.0, "original_max_position_embeddings",
		                              8192, "low_freq_factor", 1.0, "high_freq_factor",
		                              4.0));
	ref_rope_in in = {name, c->rot_dim > 0 ? c->rot_dim : c->d,
	                  f[N_MAX_POS].present ? f[N_MAX_POS].i : 0};
	rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}
