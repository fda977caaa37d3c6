/*
 * exaone.c — EXAONE 3.x (ExaoneForCausalLM, remote code; c->exaone): Llama's decoder (RMSNorm,
 * RoPE with Llama's rope_scaling, GQA, silu(gate) * up) under GPT-2-style names, read renamed
 * onto Llama's.
 *
 *   transformer.wte.            model.embed_tokens.
 *   transformer.ln_f.           model.norm.
 *   transformer.h.{i}.          model.layers.{i}.   and in a layer
 *     attn.attention.out_proj.  self_attn.o_proj.
 *     attn.attention.           self_attn.   (q_proj / k_proj / v_proj; a rank's qkv_proj)
 *     ln_1. / ln_2.             input_layernorm. / post_attention_layernorm.
 *     mlp.c_fc_0. / c_fc_1.     mlp.gate_proj. / mlp.up_proj.
 *     mlp.c_proj.               mlp.down_proj.
 *
 * (lm_head and a rank's mlp.gate_up_proj keep their names; suffixes such as weight_scale
 * follow.) config.json: the loader's key mapping (config_exaone_keys: num_layers as
 * num_hidden_layers, layer_norm_epsilon as rms_norm_eps, intermediate_size 4 x hidden_size when
 * falsy) laid over the text the reference reads.
 */
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const ex_tops[][2] = {
    {"transformer.wte.", "model.embed_tokens."},
    {"transformer.ln_f.", "model.norm."},
    {"transformer.h.", "model.layers."},
};
static const char *const ex_leaves[][2] = {
    {".attn.attention.out_proj.", ".self_attn.o_proj."},
    {".attn.attention.", ".self_attn."},
    {".ln_1.", ".input_layernorm."},
    {".ln_2.", ".post_attention_layernorm."},
    {".mlp.c_fc_0.", ".mlp.gate_proj."},
    {".mlp.c_fc_1.", ".mlp.up_proj."},
    {".mlp.c_proj.", ".mlp.down_proj."},
};

bool ref_exaone_named(ref_set *s)
{
	return ref_set_find(s, "transformer.wte.weight") != NULL;
}

static int ex_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)x, (void)in;
	char name[512];
	int rv = ref_map_name(t->name, REF_NAME_MAP(ex_tops), REF_NAME_MAP(ex_leaves), name,
	                      sizeof(name), NULL, NULL, NULL, err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

int ref_exaone_rename(ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, ex_one, NULL, false, err);
}
