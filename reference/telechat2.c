/*
 * telechat2.c — TeleChat2's checkpoint tensors (TeleChat2ForCausalLM, remote code; c->telechat2)
 * under Llama's names, which the decoder passes read: vLLM's telechat2.py is its llama.py with
 * these names mapped, o_proj and down_proj biased, q/k/v and gate/up not.
 *
 *   transformer.word_embeddings.   model.embed_tokens.
 *   transformer.ln_f.              model.norm.
 *   transformer.h.{i}.             model.layers.{i}.   and in a layer
 *     self_attention.query.        self_attn.q_proj.
 *     self_attention.key_value.    self_attn.k_proj. and self_attn.v_proj.  (below)
 *     self_attention.dense.        self_attn.o_proj.
 *
 * (lm_head, the norms and the MLP keep their names). key_value holds [KV, 2, d] rows: kv head
 * g's k at rows [2*g*d, +d), its v the next d (vLLM's _split_key_value). A rank's shard holds
 * the runtime names already (qkv_proj [q_r; k_r; v_r], gate_up_proj) and is not renamed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const tc_tops[][2] = {
    {"transformer.word_embeddings.", "model.embed_tokens."},
    {"transformer.ln_f.", "model.norm."},
    {"transformer.h.", "model.layers."},
};
static const char *const tc_leaves[][2] = {
    {".self_attention.key_value.", ".self_attn.key_value."},
    {".self_attention.query.", ".self_attn.q_proj."},
    {".self_attention.dense.", ".self_attn.o_proj."},
};

bool ref_telechat2_named(ref_set *s)
{
	return ref_set_find(s, "transformer.word_embeddings.weight") != NULL;
}

/* The checkpoint's key_value t (16- or 32-bit float, [KV, 2, d] rows) added to out as
 * <pre>k_proj.weight and v_proj.weight (pre ends in "self_attn."). */
static int split_kv(const ref_cfg *c, const ref_tensor *t, const char *pre, ref_set *out,
                    wt_errbuf *err)
{
	int64_t rows = t->ndim == 2 ? t->shape[0] : 0, d = c->d, KV = c->KV;
	if (KV < 1 || rows != 2 * KV * d || t->nbytes % (uint64_t)rows != 0 ||
	    !wt_dtype_is_float(t->dtype) || t->dtype == WT_F8_E4M3 || t->dtype == WT_F8_E5M2)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a %s key_value of %lld rows; the reference splits "
		                 "%lld rows of a 16- or 32-bit float",
		                 t->name, wt_dtype_name(t->dtype), (long long)rows,
		                 (long long)(2 * KV * d));
	size_t rb = (size_t)(t->nbytes / (uint64_t)rows) * (size_t)d; /* one head's rows */
	uint8_t *kv = malloc(2 * (size_t)KV * rb);
	if (kv == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	for (int64_t g = 0; g < KV; g++) {
		memcpy(kv + (size_t)g * rb, t->data + (size_t)(2 * g) * rb, rb);
		memcpy(kv + (size_t)(KV + g) * rb, t->data + (size_t)(2 * g + 1) * rb, rb);
	}
	char name[544]; /* pre is at most 511 bytes (its callers' buffers) */
	int64_t sh[2] = {KV * d, t->shape[1]};
	snprintf(name, sizeof(name), "%sk_proj.weight", pre);
	int rv = ref_set_add(out, name, t->dtype, 2, sh, kv, (uint64_t)KV * rb, err);
	snprintf(name, sizeof(name), "%sv_proj.weight", pre);
	if (rv == WT_OK)
		rv = ref_set_add(out, name, t->dtype, 2, sh, kv + (size_t)KV * rb,
		                 (uint64_t)KV * rb, err);
	free(kv);
	return rv;
}

static int tc_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)in;
	char name[512];
	int leaf;
	const char *tail;
	int rv = ref_map_name(t->name, REF_NAME_MAP(tc_tops), REF_NAME_MAP(tc_leaves), name,
	                      sizeof(name), NULL, &leaf, &tail, err);
	if (rv != WT_OK)
		return rv;
	if (leaf == 0) {
		if (strcmp(tail, "weight") != 0)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "tensor '%s': the reference reads key_value.weight alone",
			                 t->name);
		name[strlen(name) - strlen("key_value.weight")] = '\0';
		return split_kv(x->c, t, name, out, err);
	}
	return ref_set_add_as(out, name, t, err);
}

int ref_telechat2_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, tc_one, c, true, err);
}
