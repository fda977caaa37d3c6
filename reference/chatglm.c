/*
 * chatglm.c — ChatGLM / GLM-4 in THUDM's original format (ChatGLMModel, remote code; ref_cfg
 * glm 3): GLM's math (GlmForCausalLM, transformers' port of GLM-4: RMSNorm, q/k/v biases,
 * GLM's interleaved rotary on the first half of each head, silu(gate) * up from one fused
 * gate_up_proj) read under Llama's names with Phi-3's fused qkv_proj (fused_ckpt).
 *
 *   transformer.embedding.word_embeddings.   model.embed_tokens.
 *   transformer.output_layer.                lm_head.
 *   transformer.encoder.final_layernorm.     model.norm.
 *   transformer.encoder.layers.{i}.          model.layers.{i}.   and in a layer
 *     self_attention.query_key_value.        self_attn.qkv_proj.  ([q; k; v], a rank's
 *                                                                  [q_r; k_r; v_r])
 *     self_attention.dense.                  self_attn.o_proj.
 *     mlp.dense_h_to_4h.                     mlp.gate_up_proj.    ([gate; up])
 *     mlp.dense_4h_to_h.                     mlp.down_proj.
 *
 * (input_layernorm / post_attention_layernorm keep their names; suffixes such as
 * weight_scale follow; rotary_pos_emb.inv_freq, a buffer, is not read.) config.json: the
 * loader's key mapping (config_chatglm_keys: layernorm_epsilon as rms_norm_eps, 10000 *
 * rope_ratio as rope_theta; ChatGLMConfig's defaults 1e-5 / 10000 from the loader's view) laid
 * over the text the reference reads; original_rope false (rotate-half) and
 * apply_residual_connection_post_layernorm true are refused: the reference runs neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const cg_tops[][2] = {
    {"transformer.embedding.word_embeddings.", "model.embed_tokens."},
    {"transformer.output_layer.", "lm_head."},
    {"transformer.encoder.final_layernorm.", "model.norm."},
    {"transformer.encoder.layers.", "model.layers."},
};
static const char *const cg_leaves[][2] = {
    {".self_attention.query_key_value.", ".self_attn.qkv_proj."},
    {".self_attention.dense.", ".self_attn.o_proj."},
    {".mlp.dense_h_to_4h.", ".mlp.gate_up_proj."},
    {".mlp.dense_4h_to_h.", ".mlp.down_proj."},
};

/* name's Llama form into buf */
static int canon(const char *name, char *buf, size_t cap, wt_errbuf *err)
{
	return ref_map_name(name, REF_NAME_MAP(cg_tops), REF_NAME_MAP(cg_leaves), buf, cap, NULL,
	                    NULL, NULL, err);
}

bool ref_chatglm_named(ref_set *s)
{
	return ref_set_find(s, "transformer.embedding.word_embeddings.weight") != NULL;
}

static int glm_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                   wt_errbuf *err)
{
	(void)x, (void)in;
	static const char inv[] = "rotary_pos_emb.inv_freq";
	size_t nl = strlen(t->name);
	if (nl >= strlen(inv) && strcmp(t->name + nl - strlen(inv), inv) == 0)
		return WT_OK;
	char name[512];
	int rv = canon(t->name, name, sizeof(name), err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

int ref_chatglm_rename(ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, glm_one, NULL, false, err);
}

static int chatglm_math(json_t *root, wt_errbuf *err)
{
	json_t *orig = json_object_get(root, "original_rope");
	if (json_is_false(orig))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: original_rope is false (rotate-half rotary); the "
		    "reference runs GLM's interleaved pairs (original_rope true) only");
	if (json_is_true(json_object_get(root, "apply_residual_connection_post_layernorm")))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: apply_residual_connection_post_layernorm is true; the "
		    "reference adds the residual before the norms only");
	return WT_OK;
}

int ref_chatglm_keys(json_t *root, wt_errbuf *err)
{
	int rv = config_chatglm_keys(root, err);
	return rv == WT_OK ? chatglm_math(root, err) : rv;
}
