/*
 * qwen.c — Qwen's (first generation) tensors (QWenLMHeadModel, remote code; c->qwen) under
 * Llama's names, which the decoder passes read: the remote modeling_qwen.py is Llama's decoder
 * (RMSNorm, rotate-half RoPE over the whole head, silu-gated MLP) with q/k/v packed into one
 * c_attn with biases, GPT-2-style module names, and its MLP's gate named w2.
 *
 *   transformer.wte.            model.embed_tokens.
 *   transformer.ln_f.           model.norm.
 *   transformer.h.{i}.          model.layers.{i}.   and in a layer
 *     attn.c_attn.              self_attn.qkv_proj.  (a rank's; the checkpoint's: below)
 *     attn.c_proj.              self_attn.o_proj.
 *     ln_1. / ln_2.             input_layernorm. / post_attention_layernorm.
 *     mlp.w2. / mlp.w1.         mlp.gate_proj. / mlp.up_proj.  (QWenMLP: w1(x) * silu(w2(x)))
 *     mlp.gate_up_proj.         mlp.gate_up_proj.  (a rank's [w2_r; w1_r])
 *     mlp.c_proj.               mlp.down_proj.
 *
 * (lm_head keeps its name; suffixes such as weight_scale follow.) A rank's c_attn already holds
 * [q_r; k_r; v_r]; the checkpoint's [q; k; v] (weight and bias) becomes self_attn.q_proj /
 * k_proj / v_proj, its three equal thirds. config.json: the loader's key mapping
 * (config_qwen_keys: layer_norm_epsilon as rms_norm_eps, kv_channels as head_dim,
 * rotary_emb_base as rope_theta, intermediate_size halved) laid over the text the reference
 * reads. use_dynamic_ntk / use_logn_attn act only past seq_length tokens and are not run.
 */
#include <stdio.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const qw_tops[][2] = {
    {"transformer.wte.", "model.embed_tokens."},
    {"transformer.ln_f.", "model.norm."},
    {"transformer.h.", "model.layers."},
};
static const char *const qw_leaves[][2] = {
    {".attn.c_attn.", ".self_attn.qkv_proj."}, {".attn.c_proj.", ".self_attn.o_proj."},
    {".ln_1.", ".input_layernorm."},           {".ln_2.", ".post_attention_layernorm."},
    {".mlp.w2.", ".mlp.gate_proj."},           {".mlp.w1.", ".mlp.up_proj."},
    {".mlp.c_proj.", ".mlp.down_proj."},
};

bool ref_qwen_named(ref_set *s)
{
	return ref_set_find(s, "transformer.wte.weight") != NULL;
}

static int qw_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)in;
	char name[512];
	int leaf;
	const char *tail;
	int rv = ref_map_name(t->name, REF_NAME_MAP(qw_tops), REF_NAME_MAP(qw_leaves), name,
	                      sizeof(name), NULL, &leaf, &tail, err);
	if (rv != WT_OK)
		return rv;
	if (x->ckpt && leaf == 0 && (strcmp(tail, "weight") == 0 || strcmp(tail, "bias") == 0)) {
		name[strlen(name) - strlen("qkv_proj.") - strlen(tail)] = '\0';
		return ref_split_thirds(t, name, tail, 0, out, err);
	}
	return ref_set_add_as(out, name, t, err);
}

int ref_qwen_rename(ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err)
{
	return ref_rename_each(in, out, qw_one, NULL, ckpt, err);
}
