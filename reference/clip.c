/*
 * clip.c — CLIP's text tower (CLIPModel, family clip) under the names the decoder passes read
 * (StarCoder2's LayerNorms and plain MLP with biases, Llama's q/k/v and o_proj with biases),
 * its learned positions and its projection as the sequence classifiers' score head:
 *
 *   text_model.embeddings.token_embedding.      model.embed_tokens.
 *   text_model.embeddings.position_embedding.   model.wpe.  (added to the embeddings)
 *   text_model.final_layer_norm.                model.norm.
 *   text_model.encoder.layers.{i}.              model.layers.{i}.   and in a layer
 *     layer_norm1.                              input_layernorm.
 *     layer_norm2.                              post_attention_layernorm.
 *     self_attn.out_proj.                       self_attn.o_proj.
 *     mlp.fc1. / mlp.fc2.                       mlp.c_fc. / mlp.c_proj.
 *   text_projection.                            score.  (n_labels = projection_dim)
 *
 * (q_proj / k_proj / v_proj, a shard's qkv_proj keep their leaves.) The vision tower,
 * visual_projection, logit_scale and the buffers are not read: the reference runs the text
 * tower. The math (transformers 4.57.1 modeling_clip.py CLIPTextTransformer): x = token +
 * position rows; per layer x += out_proj(attn(layer_norm1(x))) under the causal mask,
 * x += fc2(act(fc1(layer_norm2(x)))); final_layer_norm; the pooled state (the EOS token's)
 * through text_projection. The output is text_projection on every token (n_tok x
 * projection_dim): get_text_features is the EOS token's row, vLLM's LAST pooling the last
 * one's.
 */
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const tops[][2] = {
    {"text_model.embeddings.token_embedding.", "model.embed_tokens."},
    {"text_model.embeddings.position_embedding.", "model.wpe."},
    {"text_model.final_layer_norm.", "model.norm."},
    {"text_model.encoder.layers.", "model.layers."},
    {"text_projection.", "score."},
    {"text_model.head.", "score."}, /* SigLIP's, with its bias */
};
static const char *const leaves[][2] = {
    {".layer_norm1.", ".input_layernorm."},
    {".layer_norm2.", ".post_attention_layernorm."},
    {".self_attn.out_proj.", ".self_attn.o_proj."},
    {".mlp.fc1.", ".mlp.c_fc."},
    {".mlp.fc2.", ".mlp.c_proj."},
};

/* name's reference form into buf; false for a name the text tower does not read. */
static bool canon(const char *name, char *buf, size_t cap)
{
	int top;
	return ref_map_name(name, REF_NAME_MAP(tops), REF_NAME_MAP(leaves), buf, cap, &top, NULL,
	                    NULL, NULL) == WT_OK &&
	       top >= 0;
}

static int clip_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                    wt_errbuf *err)
{
	(void)x, (void)in;
	char name[512];
	return canon(t->name, name, sizeof(name)) ? ref_set_add_as(out, name, t, err) : WT_OK;
}

int ref_clip_rename(ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, clip_one, NULL, false, err);
}

int ref_clip_positions(const ref_cfg *c, ref_set *s, int64_t first, bool whole, float *x, int64_t T,
                       wt_errbuf *err)
{
	ref_tensor *t = ref_set_find(s, "model.wpe.weight");
	if (t == NULL || t->ndim != 2 || t->shape[1] != c->hid)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "'text_model.embeddings.position_embedding.weight' [positions, "
		                 "%lld] is missing or of another shape",
		                 (long long)c->hid);
	int64_t rows = t->shape[0];
	if (whole && T > rows)
		return wt_seterr(err, WT_EINVAL,
		                 "%lld tokens need %lld learned positions; the checkpoint's "
		                 "position_embedding has %lld (max_position_embeddings)",
		                 (long long)T, (long long)T, (long long)rows);
	const float *p;
	int rv = ref_getf(s, &p, false, err, 2, rows, c->hid, 0, "model.wpe.weight");
	if (rv != WT_OK)
		return rv;
	for (int64_t k = 0; k < T; k++) /* position k is row k - first of this slice */
		if (k >= first && k - first < rows)
			for (int64_t i = 0; i < c->hid; i++)
				x[k * c->hid + i] += p[(k - first) * c->hid + i];
	return WT_OK;
}

/* CLIPTextConfig's hidden_act (quick_gelu) and layer_norm_eps (1e-5), in text_config;
 * SiglipTextConfig's gelu_pytorch_tanh and 1e-6. */
int ref_cfg_clip(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	enum { C_ACT, C_EPS, C_COUNT };
	ckpt_field f[C_COUNT] = {
	    [C_ACT] = {"text_config.hidden_act", CKPT_FIELD_STRING},
	    [C_EPS] = {"text_config.layer_norm_eps", CKPT_FIELD_REAL},
	};
	int rv = ckpt_config_fields(json, len, f, C_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (f[C_ACT].present ? strcmp(f[C_ACT].s, "quick_gelu") == 0 : !c->siglip)
		c->act = REF_ACT_QUICK_GELU;
	else if ((rv = ref_cfg_act(&f[C_ACT], "gelu_pytorch_tanh", c, err)) != WT_OK)
		return rv;
	c->eps = f[C_EPS].present ? f[C_EPS].r : c->siglip ? 1e-6 : 1e-5;
	c->theta = 10000.0; /* unused: learned positions, no RoPE */
	return WT_OK;
}
