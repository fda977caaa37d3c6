/*
 * cfg_afmoe.c — AFMoE (AfmoeForCausalLM, vLLM's afmoe.py; c->afmoe, kind REF_DEEPSEEK with
 * glm4_moe): its config.json fields as vLLM's AfmoeConfig (vllm/transformers_utils/configs/
 * afmoe.py; transformers 4.57.1 has no AfmoeConfig) and the loader's view (config_afmoe.c) give
 * them.
 *
 * The math followed (vLLM's afmoe.py): embeddings times sqrt(hidden_size) when mup_enabled; per
 * layer x += post_attention_layernorm(attn(input_layernorm(x))), x +=
 * post_mlp_layernorm(mlp(pre_mlp_layernorm(x))) (Gemma 2's sandwich; afmoe.c renames the
 * norms); the attention (afmoe.c): q/k/v, per-head RMSNorm q_norm / k_norm (rms_norm_eps), on a
 * "sliding_attention" layer rotate-half RoPE over the whole head and the sliding mask (t - s <
 * sliding_window), on a "full_attention" layer neither (no positional encoding), the output times
 * sigmoid(gate_proj(x)) before o_proj; the dense LlamaMLP below num_dense_layers, then
 * DeepSeek-V3's grouped sigmoid routing (scores + expert_bias choose, groups by their two best,
 * topk_group, the chosen sigmoid scores renormalized when route_norm, times route_scale) plus
 * the shared experts ungated.
 *
 *   key               default     what the reference does with it
 *   rms_norm_eps      1e-5        every RMSNorm
 *   hidden_act        silu        silu only (the loader refuses others)
 *   rope_theta, rope_scaling      cfg_rope.c, on the sliding layers
 *   sliding_window    2048        the sliding layers' window
 *   layer_types       required    one "sliding_attention" / "full_attention" per layer
 *   mup_enabled       false       the embedding scale
 *   score_func        sigmoid     softmax refused (cfg.c: the reference routes by sigmoid)
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/afmoe.h"
#include "reference/reference.h"

enum { A_ACT, A_EPS, A_WINDOW, A_MAX_POS, A_MUP, A_COUNT };

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[A_COUNT] = {
	    [A_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [A_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [A_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [A_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [A_MUP] = {"mup_enabled", CKPT_FIELD_BOOL},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, A_COUNT, err);
}

/* The sliding layers into c->local_mask (layer_types, one entry per layer) with the window. */
static int af_layers(json_t *root, const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	json_t *lt = ref_lm_get(root, "layer_types");
	c->window = f[A_WINDOW].present ? f[A_WINDOW].i : 2048;
	c->window_pattern = 0;
	c->local_masked = true;
	c->nope_global = true; /* a full_attention layer: no rotary_emb */
	memset(c->local_mask, 0, sizeof(c->local_mask));
	if (c->window < 1 || c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: sliding_window %lld, %lld layers; the reference needs "
		    "a positive window and at most %d layers",
		    (long long)c->window, (long long)c->L, REF_L4_MAX_LAYERS);
	int rv = ref_layer_types_list(c, lt, err);
	for (int64_t i = 0; rv == WT_OK && i < c->L; i++) {
		bool local = false;
		rv = ref_layer_type_at(c, lt, i, &local, err);
		if (rv == WT_OK && local)
			c->local_mask[i / 64] |= 1ull << (i % 64);
	}
	return rv;
}

int ref_cfg_afmoe(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[A_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[A_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[A_EPS].present ? f[A_EPS].r : 1e-5;
	c->sandwich = true; /* the four norms, under Gemma 2's names (afmoe.c) */
	c->qk_norm = true;
	c->rot_dim = 0; /* get_rope(head_dim): the whole head */
	c->rope_interleave = false;
	c->layer_freq = 1;
	c->embed_scale = f[A_MUP].present && f[A_MUP].b ? (float)sqrt((double)c->hid) : 0.0f;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = af_layers(root, f, c, err);
	ref_rope_in in = {arch ? arch : "AfmoeForCausalLM", c->d,
	                  f[A_MAX_POS].present ? f[A_MAX_POS].i : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	/* one RoPE, on the sliding layers (ref_layer_attn reads the local one there) */
	c->theta_local = c->theta;
	c->rope_factor[1] = c->rope_factor[0];
	return rv;
}
