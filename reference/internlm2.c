/*
 * internlm2.c — InternLM2's tensors (InternLM2ForCausalLM, remote code; c->internlm2) under
 * Llama's names, which the decoder passes read: the remote code is Llama's decoder with q/k/v
 * packed into one wqkv and other module names.
 *
 *   model.tok_embeddings.       model.embed_tokens.
 *   output.                     lm_head.
 *   model.layers.{i}.           model.layers.{i}.   and in a layer
 *     attention.wqkv.           self_attn.qkv_proj.  (a rank's; the checkpoint's: below)
 *     attention.wo.             self_attn.o_proj.
 *     attention_norm.           input_layernorm.
 *     ffn_norm.                 post_attention_layernorm.
 *     feed_forward.w1. / w3.    mlp.gate_proj. / mlp.up_proj.
 *     feed_forward.gate_up_proj. mlp.gate_up_proj.  (a rank's)
 *     feed_forward.w2.          mlp.down_proj.
 *
 * (suffixes such as weight_scale follow). A rank's wqkv already holds [q_r; k_r; v_r]
 * (docs/format.md, InternLM2); the checkpoint's holds [KV, H/KV + 2, d] rows per kv group
 * (a group's q heads, its k head, its v head), which become self_attn.q_proj / k_proj /
 * v_proj: q head h is group h / n's row block h % n, kv head g group g's blocks n and n + 1
 * (n = H/KV), as the remote code's rearrange and vLLM's split_qkv read them.
 *
 * InternLM2-VE (InternLM2VEForCausalLM, family internlm2_ve): the pass is text only (no
 * visual-token mask, vLLM's InternLM2VEDecoderLayer then runs feed_forward alone), so the
 * visual expert's tensors (.feed_forward_ve.*, checkpoint's or a rank's) are left out here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const il_tops[][2] = {
    {"model.tok_embeddings.", "model.embed_tokens."},
    {"output.", "lm_head."},
    {"v_head.", "score."}, /* InternLM2ForRewardModel's head, read as score.weight */
};
static const char *const il_leaves[][2] = {
    {".attention.wqkv.", ".self_attn.qkv_proj."},
    {".attention.wo.", ".self_attn.o_proj."},
    {".attention_norm.", ".input_layernorm."},
    {".ffn_norm.", ".post_attention_layernorm."},
    {".feed_forward.w1.", ".mlp.gate_proj."},
    {".feed_forward.w3.", ".mlp.up_proj."},
    {".feed_forward.gate_up_proj.", ".mlp.gate_up_proj."},
    {".feed_forward.w2.", ".mlp.down_proj."},
};

/* name's Llama form into buf; *wqkv when it is the checkpoint's wqkv.weight */
static int canon(const char *name, char *buf, size_t cap, bool *wqkv, wt_errbuf *err)
{
	int leaf;
	const char *tail;
	int rv = ref_map_name(name, REF_NAME_MAP(il_tops), REF_NAME_MAP(il_leaves), buf, cap, NULL,
	                      &leaf, &tail, err);
	*wqkv = rv == WT_OK && leaf == 0 && strcmp(tail, "weight") == 0;
	return rv;
}

/* The checkpoint's wqkv t (16- or 32-bit float, [KV, H/KV + 2, d] rows) added to out as
 * <pre>q_proj.weight, k_proj.weight and v_proj.weight (pre ends in "self_attn."). */
static int unpack(const ref_cfg *c, const ref_tensor *t, const char *pre, ref_set *out,
                  wt_errbuf *err)
{
	int64_t rows = t->ndim == 2 ? t->shape[0] : 0, d = c->d, H = c->H, KV = c->KV;
	int64_t n = KV > 0 ? H / KV : 0;
	if (KV < 1 || n * KV != H || rows != (H + 2 * KV) * d || t->nbytes % (uint64_t)rows != 0 ||
	    !wt_dtype_is_float(t->dtype) || t->dtype == WT_F8_E4M3 || t->dtype == WT_F8_E5M2)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a %s wqkv of %lld rows; the reference unpacks %lld "
		                 "rows of a 16- or 32-bit float",
		                 t->name, wt_dtype_name(t->dtype), (long long)rows,
		                 (long long)((H + 2 * KV) * d));
	size_t rb = (size_t)(t->nbytes / (uint64_t)rows) * (size_t)d; /* one head's rows */
	uint8_t *q = malloc((size_t)H * rb), *kv = malloc(2 * (size_t)KV * rb);
	if (q == NULL || kv == NULL) {
		free(q);
		free(kv);
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	}
	for (int64_t g = 0; g < KV; g++) {
		const uint8_t *src = t->data + (size_t)(g * (n + 2)) * rb; /* group g */
		memcpy(q + (size_t)(g * n) * rb, src, (size_t)n * rb);
		memcpy(kv + (size_t)g * rb, src + (size_t)n * rb, rb);
		memcpy(kv + (size_t)(KV + g) * rb, src + (size_t)(n + 1) * rb, rb);
	}
	char name[544]; /* pre is at most 511 bytes (its callers' buffers) */
	int64_t shq[2] = {H * d, t->shape[1]}, shk[2] = {KV * d, t->shape[1]};
	snprintf(name, sizeof(name), "%sq_proj.weight", pre);
	int rv = ref_set_add(out, name, t->dtype, 2, shq, q, (uint64_t)H * rb, err);
	snprintf(name, sizeof(name), "%sk_proj.weight", pre);
	if (rv == WT_OK)
		rv = ref_set_add(out, name, t->dtype, 2, shk, kv, (uint64_t)KV * rb, err);
	snprintf(name, sizeof(name), "%sv_proj.weight", pre);
	if (rv == WT_OK)
		rv = ref_set_add(out, name, t->dtype, 2, shk, kv + (size_t)KV * rb,
		                 (uint64_t)KV * rb, err);
	free(q);
	free(kv);
	return rv;
}

bool ref_internlm2_named(ref_set *s)
{
	return ref_set_find(s, "model.tok_embeddings.weight") != NULL;
}

static int il2_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                   wt_errbuf *err)
{
	(void)in;
	if (strstr(t->name, ".feed_forward_ve.") != NULL)
		return WT_OK; /* InternLM2-VE's visual expert: unused on text tokens */
	char name[512];
	bool wqkv;
	int rv = canon(t->name, name, sizeof(name), &wqkv, err);
	if (rv != WT_OK)
		return rv;
	if (x->ckpt && wqkv) {
		name[strlen(name) - strlen("qkv_proj.weight")] = '\0';
		return unpack(x->c, t, name, out, err);
	}
	return ref_set_add_as(out, name, t, err);
}

int ref_internlm2_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool ckpt, wt_errbuf *err)
{
	return ref_rename_each(in, out, il2_one, c, ckpt, err);
}
