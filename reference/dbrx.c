/*
 * dbrx.c — DBRX's tensors under the names the Mixtral pass reads (PhiMoE's LayerNorms,
 * Phi-3's fused qkv_proj, OLMo's clip_qkv; cfg_dbrx.c sets the switches):
 *
 *   transformer.wte.              model.embed_tokens.
 *   transformer.norm_f.           model.norm.
 *   transformer.blocks.{i}.       model.layers.{i}.   and in a layer
 *     norm_attn_norm.norm_1.      input_layernorm.
 *     norm_attn_norm.norm_2.      post_attention_layernorm.
 *     norm_attn_norm.attn.Wqkv.   self_attn.qkv_proj.
 *     norm_attn_norm.attn.out_proj. self_attn.o_proj.
 *     ffn.router.layer.           block_sparse_moe.gate.
 *     ffn.experts.                block_sparse_moe.experts.
 *
 * (suffixes such as weight_scale follow; lm_head keeps its name). DBRX's LayerNorms have no
 * bias: each norm's weight gets a zero bias beside it, which the LayerNorm pass adds. A
 * rank's experts are already the runtime stacks w13_weight / w2_weight (docs/format.md
 * 2.7); the checkpoint's 2-D stacks ffn.experts.mlp.w1 / v1 / w2 [E*Ie, hid] become
 * Mixtral's experts.{j}.w1 / w3 / w2.weight: w1 and v1 row blocks j, w2's block j
 * transposed to [hid, Ie] (DbrxExpertGLU computes x @ w2[j], Mixtral's w2 x @ W^T).
 *
 * MPT (c->mpt; the same tops, no experts): in a layer norm_1. -> input_layernorm.,
 * norm_2. -> post_attention_layernorm., attn.Wqkv. -> self_attn.qkv_proj., attn.out_proj. ->
 * self_attn.o_proj., ffn.up_proj. -> mlp.c_fc., ffn.down_proj. -> mlp.c_proj. (StarCoder2's
 * plain MLP), the LayerNorms given zero biases as DBRX's; lm_head is the tied wte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const tops[][2] = {
    {"transformer.wte.", "model.embed_tokens."},
    {"transformer.norm_f.", "model.norm."},
    {"transformer.blocks.", "model.layers."},
};
static const char *const leaves[][2] = {
    {".norm_attn_norm.norm_1.", ".input_layernorm."},
    {".norm_attn_norm.norm_2.", ".post_attention_layernorm."},
    {".norm_attn_norm.attn.Wqkv.", ".self_attn.qkv_proj."},
    {".norm_attn_norm.attn.out_proj.", ".self_attn.o_proj."},
    {".ffn.router.layer.", ".block_sparse_moe.gate."},
    {".ffn.experts.", ".block_sparse_moe.experts."},
};

/* MPT's leaves (its tops are DBRX's): StarCoder2's / Phi-3's names */
static const char *const mpt_leaves[][2] = {
    {".norm_1.", ".input_layernorm."},       {".norm_2.", ".post_attention_layernorm."},
    {".attn.Wqkv.", ".self_attn.qkv_proj."}, {".attn.out_proj.", ".self_attn.o_proj."},
    {".ffn.up_proj.", ".mlp.c_fc."},         {".ffn.down_proj.", ".mlp.c_proj."},
};

static int canon(const ref_cfg *c, const char *name, char *buf, size_t cap, wt_errbuf *err)
{
	const char *const(*lv)[2] = c->mpt ? mpt_leaves : leaves;
	size_t nlv = c->mpt ? sizeof(mpt_leaves) / sizeof(mpt_leaves[0])
	                    : sizeof(leaves) / sizeof(leaves[0]);
	return ref_map_name(name, REF_NAME_MAP(tops), (ref_name_map){lv, nlv}, buf, cap, NULL, NULL,
	                    NULL, err);
}

/* The checkpoint's 2-D stack t ("<base>mlp.w1" / v1 / w2, base ending "experts.") as
 * Mixtral's per-expert tensors of out. */
static int split_stack(const ref_cfg *c, const ref_tensor *t, const char *base, const char *what,
                       ref_set *out, wt_errbuf *err)
{
	int64_t E = c->E, ie = c->Ie, hid = c->hid;
	if (t->ndim != 2 || E < 1 || t->shape[0] != E * ie || t->shape[1] != hid ||
	    t->nbytes % (uint64_t)(E * ie * hid) != 0)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "tensor '%s': shape is not [%lld, %lld] (experts x ffn_hidden_size, "
		    "d_model)",
		    t->name, (long long)(E * ie), (long long)hid);
	size_t es = (size_t)(t->nbytes / (uint64_t)(E * ie * hid)), blk = (size_t)(ie * hid) * es;
	bool w2 = strcmp(what, "w2") == 0;
	const char *leaf = strcmp(what, "v1") == 0 ? "w3" : what;
	uint8_t *buf = malloc(blk);
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	int rv = WT_OK;
	for (int64_t j = 0; j < E && rv == WT_OK; j++) {
		const uint8_t *src = t->data + (size_t)j * blk;
		if (w2) /* [Ie, hid] -> [hid, Ie] */
			for (int64_t r = 0; r < ie; r++)
				for (int64_t k = 0; k < hid; k++)
					memcpy(buf + (size_t)(k * ie + r) * es,
					       src + (size_t)(r * hid + k) * es, es);
		else
			memcpy(buf, src, blk);
		char name[600];
		int64_t shape[2] = {w2 ? hid : ie, w2 ? ie : hid};
		int n = snprintf(name, sizeof(name), "%s%lld.%s.weight", base, (long long)j, leaf);
		rv = n < 0 || (size_t)n >= sizeof(name)
		         ? wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", t->name)
		         : ref_set_add(out, name, t->dtype, 2, shape, buf, blk, err);
	}
	free(buf);
	return rv;
}

/* A zero bias beside LayerNorm weight `name` ("...norm.weight" or "...layernorm.weight"). */
static int zero_bias(const ref_tensor *t, const char *name, ref_set *out, wt_errbuf *err)
{
	size_t n = strlen(name);
	if (n < 7 || strcmp(name + n - 7, ".weight") != 0 || strstr(name, "norm.") == NULL)
		return WT_OK;
	char b[600];
	snprintf(b, sizeof(b), "%.*s.bias", (int)(n - 7), name);
	uint8_t *z = calloc(1, t->nbytes ? t->nbytes : 1);
	if (z == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	int rv = ref_set_add(out, b, t->dtype, t->ndim, t->shape, z, t->nbytes, err);
	free(z);
	return rv;
}

static int dbrx_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                    wt_errbuf *err)
{
	(void)in;
	const ref_cfg *c = x->c;
	char name[512];
	int rv = canon(c, t->name, name, sizeof(name), err);
	if (rv != WT_OK)
		return rv;
	char *m = c->mpt ? NULL : strstr(name, "experts.mlp.");
	if (m != NULL) { /* the checkpoint's 2-D stacks */
		char base[512];
		snprintf(base, sizeof(base), "%.*sexperts.", (int)(m - name), name);
		return split_stack(c, t, base, m + strlen("experts.mlp."), out, err);
	}
	rv = ref_set_add_as(out, name, t, err);
	if (rv == WT_OK && strstr(name, ".block_sparse_moe.") == NULL &&
	    strstr(name, ".self_attn.") == NULL)
		rv = zero_bias(t, name, out, err);
	return rv;
}

int ref_dbrx_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, dbrx_one, c, false, err);
}
