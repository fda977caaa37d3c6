/*
 * neox.c — GPT-NeoX's tensors under the names the decoder passes read (StarCoder2's
 * LayerNorms and plain MLP, Phi-3's fused qkv_proj):
 *
 *   gpt_neox.embed_in.            model.embed_tokens.
 *   gpt_neox.final_layer_norm.    model.norm.
 *   embed_out.                    lm_head.
 *   gpt_neox.layers.{i}.          model.layers.{i}.   and in a layer
 *     attention.query_key_value.  self_attn.qkv_proj.
 *     attention.dense.            self_attn.o_proj.
 *     mlp.dense_h_to_4h.          mlp.c_fc.
 *     mlp.dense_4h_to_h.          mlp.c_proj.
 *
 * (suffixes such as weight_scale follow). A rank's query_key_value already holds
 * [q_r; k_r; v_r] (docs/format.md section 2.7); the checkpoint's holds [H, 3, d] rows per
 * head, which are reordered into [q; k; v] (head h's part p at row (p*H + h)*d). Other
 * tensors (the old attention.masked_bias buffers) are copied under their own names.
 *
 * BLOOM's (c->bloom), with or without the transformer. prefix: word_embeddings. ->
 * model.embed_tokens., word_embeddings_layernorm. -> model.embed_norm., ln_f. -> model.norm.,
 * h.{i}. -> model.layers.{i}.; in a layer self_attention.query_key_value. (its [H, 3, d] rows
 * reordered as GPT-NeoX's) -> self_attn.qkv_proj., self_attention.dense. -> self_attn.o_proj.,
 * the MLP as GPT-NeoX's.
 *
 * Falcon's (c->falcon): BLOOM's tops (no word_embeddings_layernorm); in a layer BLOOM's
 * leaves, ln_attn. -> input_layernorm., ln_mlp. -> post_attention_layernorm.; its
 * query_key_value holds [KV, H/KV + 2, d] rows per kv group (a group's q heads, its k head,
 * its v head; KV == H is GPT-NeoX's [H, 3, d]), reordered into [q (H*d); k (KV*d); v (KV*d)].
 *
 * Phi's (c->phi): model.final_layernorm. -> model.norm.; in a layer self_attn.dense. ->
 * self_attn.o_proj., mlp.fc1. -> mlp.c_fc., mlp.fc2. -> mlp.c_proj. (q/k/v keep Llama's names).
 *
 * Persimmon's (c->persimmon): model.final_layernorm. -> model.norm.; in a layer
 * self_attn.query_key_value. -> self_attn.qkv_proj. (reordered as GPT-NeoX's),
 * self_attn.dense. -> self_attn.o_proj., and GPT-NeoX's two MLP leaves (q_layernorm /
 * k_layernorm keep their names: ref_persimmon_qk reads them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

/* Phi: model.final_layernorm., and in a layer self_attn.dense., mlp.fc1., mlp.fc2. */
static const char *const phi_tops[][2] = {
    {"model.final_layernorm.", "model.norm."},
};
static const char *const phi_leaves[][2] = {
    {".self_attn.dense.", ".self_attn.o_proj."},
    {".mlp.fc1.", ".mlp.c_fc."},
    {".mlp.fc2.", ".mlp.c_proj."},
};

/* BLOOM (c->bloom): the names without BloomForCausalLM's transformer. prefix (canon drops it) */
static const char *const bloom_tops[][2] = {
    {"word_embeddings_layernorm.", "model.embed_norm."},
    {"word_embeddings.", "model.embed_tokens."},
    {"ln_f.", "model.norm."},
    {"h.", "model.layers."},
};
static const char *const bloom_leaves[][2] = {
    {".self_attention.query_key_value.", ".self_attn.qkv_proj."},
    {".self_attention.dense.", ".self_attn.o_proj."},
    {".mlp.dense_h_to_4h.", ".mlp.c_fc."},
    {".mlp.dense_4h_to_h.", ".mlp.c_proj."},
};
/* Falcon: BLOOM's, and the new architecture's two LayerNorms of the parallel block */
static const char *const falcon_leaves[][2] = {
    {".self_attention.query_key_value.", ".self_attn.qkv_proj."},
    {".self_attention.dense.", ".self_attn.o_proj."},
    {".mlp.dense_h_to_4h.", ".mlp.c_fc."},
    {".mlp.dense_4h_to_h.", ".mlp.c_proj."},
    {".ln_attn.", ".input_layernorm."},
    {".ln_mlp.", ".post_attention_layernorm."},
};
/* Persimmon: model.final_layernorm., and in a layer GPT-NeoX's leaves under self_attn. */
static const char *const ps_leaves[][2] = {
    {".self_attn.query_key_value.", ".self_attn.qkv_proj."},
    {".self_attn.dense.", ".self_attn.o_proj."},
    {".mlp.dense_h_to_4h.", ".mlp.c_fc."},
    {".mlp.dense_4h_to_h.", ".mlp.c_proj."},
};

static const char *const tops[][2] = {
    {"gpt_neox.embed_in.", "model.embed_tokens."},
    {"gpt_neox.final_layer_norm.", "model.norm."},
    {"embed_out.", "lm_head."},
    {"gpt_neox.layers.", "model.layers."},
};
static const char *const leaves[][2] = {
    {".attention.query_key_value.", ".self_attn.qkv_proj."},
    {".attention.dense.", ".self_attn.o_proj."},
    {".mlp.dense_h_to_4h.", ".mlp.c_fc."},
    {".mlp.dense_4h_to_h.", ".mlp.c_proj."},
};

/* name's canonical form into buf under c's tables; *qkv when it is GPT-NeoX's
 * query_key_value weight or bias. */
static int canon(const ref_cfg *c, const char *name, char *buf, size_t cap, bool *qkv,
                 wt_errbuf *err)
{
	bool model = c->phi || c->persimmon; /* model.* names */
	bool bl = c->bloom || c->falcon;     /* BLOOM's tops */
	const char *const(*tp)[2] = model ? phi_tops : bl ? bloom_tops : tops;
	const char *const(*lv)[2] = c->phi         ? phi_leaves
	                            : c->persimmon ? ps_leaves
	                            : c->falcon    ? falcon_leaves
	                            : c->bloom     ? bloom_leaves
	                                           : leaves;
	size_t ntp = model ? sizeof(phi_tops) / sizeof(phi_tops[0])
	             : bl  ? sizeof(bloom_tops) / sizeof(bloom_tops[0])
	                   : sizeof(tops) / sizeof(tops[0]);
	size_t nlv = c->phi         ? sizeof(phi_leaves) / sizeof(phi_leaves[0])
	             : c->persimmon ? sizeof(ps_leaves) / sizeof(ps_leaves[0])
	             : c->falcon    ? sizeof(falcon_leaves) / sizeof(falcon_leaves[0])
	             : c->bloom     ? sizeof(bloom_leaves) / sizeof(bloom_leaves[0])
	                            : sizeof(leaves) / sizeof(leaves[0]);
	if (bl && strncmp(name, "transformer.", 12) == 0)
		name += 12;
	int leaf;
	const char *tail;
	int rv = ref_map_name(name, (ref_name_map){tp, ntp}, (ref_name_map){lv, nlv}, buf, cap,
	                      NULL, &leaf, &tail, err);
	*qkv = rv == WT_OK && !c->phi && leaf == 0 &&
	       (strcmp(tail, "weight") == 0 || strcmp(tail, "bias") == 0);
	return rv;
}

/* The checkpoint's query_key_value t ([KV, H/KV + 2, d] rows: [H, 3, d] when KV == H, as
 * every family but Falcon has it) reordered into [q; k; v] in out. */
static int deinterleave(const ref_cfg *c, const ref_tensor *t, uint8_t *out, wt_errbuf *err)
{
	int64_t rows = t->ndim > 0 ? t->shape[0] : 0, d = c->d, H = c->H;
	int64_t KV = c->falcon ? c->KV : H, n = KV > 0 ? H / KV : 0;
	if (KV < 1 || n * KV != H || rows != (H + 2 * KV) * d || t->nbytes % (uint64_t)rows != 0 ||
	    !wt_dtype_is_float(t->dtype) || t->dtype == WT_F8_E4M3 || t->dtype == WT_F8_E5M2)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a %s query_key_value of %lld rows; the reference "
		                 "reorders %lld rows of a 16- or 32-bit float",
		                 t->name, wt_dtype_name(t->dtype), (long long)rows,
		                 (long long)((H + 2 * KV) * d));
	size_t rb = (size_t)(t->nbytes / (uint64_t)rows) * (size_t)d; /* one head part */
	for (int64_t g = 0; g < KV; g++) {
		const uint8_t *src = t->data + (size_t)(g * (n + 2)) * rb; /* group g */
		memcpy(out + (size_t)(g * n) * rb, src, (size_t)n * rb);   /* its q heads */
		memcpy(out + (size_t)(H + g) * rb, src + (size_t)n * rb, rb);
		memcpy(out + (size_t)(H + KV + g) * rb, src + (size_t)(n + 1) * rb, rb);
	}
	return WT_OK;
}

static int neox_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                    wt_errbuf *err)
{
	(void)in;
	char name[512];
	bool qkv;
	int rv = canon(x->c, t->name, name, sizeof(name), &qkv, err);
	if (rv != WT_OK)
		return rv;
	if (!(x->ckpt && qkv))
		return ref_set_add_as(out, name, t, err);
	uint8_t *buf = malloc(t->nbytes ? t->nbytes : 1);
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	rv = deinterleave(x->c, t, buf, err);
	if (rv == WT_OK)
		rv = ref_set_add(out, name, t->dtype, t->ndim, t->shape, buf, t->nbytes, err);
	free(buf);
	return rv;
}

int ref_neox_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err)
{
	return ref_rename_each(in, out, neox_one, c, ckpt, err);
}

bool ref_bloom_ckpt(ref_set *s)
{
	return ref_set_find(s, "transformer.word_embeddings.weight") != NULL ||
	       ref_set_find(s, "word_embeddings.weight") != NULL;
}
