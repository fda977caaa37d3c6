/*
 * cfg_hunyuan.c — Hunyuan V1 dense (HunYuanDenseV1ForCausalLM): its config.json fields on top
 * of Llama's math (transformers 4.57.1, modeling_hunyuan_v1_dense.py; vLLM hunyuan_v1.py).
 *
 * The math followed: Llama's RMSNorm decoder (q/k/v and o_proj biases with attention_bias,
 * added where the checkpoint has them), q and k turned by RoPE and then each head RMSNormed
 * by query_layernorm / key_layernorm [head_dim] (after RoPE, unlike Qwen3's q_norm / k_norm),
 * a silu-gated MLP without biases.
 *
 *   key                      default     what the reference does with it
 *   rms_norm_eps             1e-5        every RMSNorm, the two head norms too (class default)
 *   hidden_act               silu        the MLP's gate; another is refused (vLLM's
 *                                        HunYuanMLP raises on it)
 *   use_qk_norm              true        the head norms (vLLM reads the key; transformers
 *                                        builds them always: the loader's class default)
 *   rope_theta               10000       the RoPE base
 *   rope_scaling             none        {"type": "dynamic", "alpha": a}: base times
 *                                        a^(d / (d - 2)), no other scaling (transformers'
 *                                        HunYuanDenseV1RotaryEmbedding below
 *                                        max_position_embeddings, vLLM's
 *                                        DynamicNTKAlphaRotaryEmbedding always); dynamic
 *                                        without alpha is transformers' KeyError, refused;
 *                                        other types cfg_rope.c
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { H_ACT, H_QK_NORM, H_MAX_POS, H_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[H_COUNT] = {
	    [H_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [H_QK_NORM] = {"use_qk_norm", CKPT_FIELD_BOOL},
	    [H_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, H_COUNT, err);
}

/* rope_scaling's dynamic alpha (the Hunyuan releases' {"type": "dynamic", "alpha": 1000.0,
 * "factor": 1.0, ...}) into c->theta; any other type to cfg_rope.c. */
static int hunyuan_rope(json_t *root, const ckpt_field *f, const char *arch, ref_cfg *c,
                        wt_errbuf *err)
{
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	if (o != NULL && type != NULL && strcmp(type, "dynamic") == 0) {
		json_t *a = json_object_get(o, "alpha");
		if (a == NULL || json_is_null(a))
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: %s type 'dynamic' without alpha on %s; "
			                 "transformers 4.57.1 reads rope_scaling[\"alpha\"] for it "
			                 "(Hunyuan's NTK-alpha base); give alpha",
			                 key, arch);
		if (!json_is_number(a) || !(json_number_value(a) > 0.0) ||
		    !(json_number_value(a) < 1e9))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s.alpha is not a number in (0, 1e9)", key);
		double d = (double)c->d;
		c->theta *= pow(json_number_value(a), d / (d - 2.0));
		return WT_OK;
	}
	ref_rope_in in = {arch, c->d, f[H_MAX_POS].present ? f[H_MAX_POS].i : 0};
	return ref_cfg_rope(root, &in, c, err);
}

int ref_cfg_hunyuan(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[H_COUNT];
	const char *a = arch ? arch : "HunYuanDenseV1ForCausalLM";
	int rv = read_fields(json, len, f, err);
	if (rv != WT_OK)
		return rv;
	if (f[H_ACT].present && strcmp(f[H_ACT].s, "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s' on %s; vLLM's hunyuan_v1.py runs "
		                 "silu only, and so does the reference",
		                 f[H_ACT].s, a);
	c->qk_norm = f[H_QK_NORM].present ? f[H_QK_NORM].b : true;
	if (c->d < 4)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: head_dim %lld; Hunyuan's RoPE needs at least 4",
		                 (long long)c->d);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = hunyuan_rope(root, f, a, c, err);
	json_decref(root);
	return rv;
}

const char *ref_qk_norm_leaf(const ref_cfg *c, bool key)
{
	if (c->hunyuan)
		return key ? "key_layernorm" : "query_layernorm";
	return key ? "k_norm" : "q_norm";
}
