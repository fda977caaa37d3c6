/*
 * gptj.c — GPT-J's tensors under Phi's names (GPT-J's block is Phi's: one LayerNorm before
 * the parallel attention and MLP, fc_out(act(fc_in(x))) with biases, lm_head with its bias),
 * which neox.c then reads under StarCoder2's:
 *
 *   transformer.wte.       model.embed_tokens.
 *   transformer.ln_f.      model.final_layernorm.
 *   transformer.h.{i}.     model.layers.{i}.   and in a layer
 *     ln_1.                input_layernorm.
 *     attn.out_proj.       self_attn.dense.
 *     attn.                self_attn.          (q_proj, k_proj, v_proj; a rank's qkv_proj)
 *     mlp.fc_in.           mlp.fc1.
 *     mlp.fc_out.          mlp.fc2.
 *
 * Other tensors (the old attn.masked_bias buffers, lm_head.*) keep their names.
 */
#include <stdio.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const tops[][2] = {
    {"transformer.wte.", "model.embed_tokens."},
    {"transformer.ln_f.", "model.final_layernorm."},
    {"transformer.h.", "model.layers."},
};
static const char *const leaves[][2] = {
    {".ln_1.", ".input_layernorm."}, {".attn.out_proj.", ".self_attn.dense."},
    {".attn.", ".self_attn."},       {".mlp.fc_in.", ".mlp.fc1."},
    {".mlp.fc_out.", ".mlp.fc2."},
};

static int canon(const char *name, char *buf, size_t cap, wt_errbuf *err)
{
	return ref_map_name(name, REF_NAME_MAP(tops), REF_NAME_MAP(leaves), buf, cap, NULL, NULL,
	                    NULL, err);
}

static int gptj_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                    wt_errbuf *err)
{
	(void)x, (void)in;
	char name[512];
	int rv = canon(t->name, name, sizeof(name), err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

int ref_gptj_rename(ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, gptj_one, NULL, false, err);
}
