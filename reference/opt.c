/*
 * opt.c — both reference paths for OPTForCausalLM (transformers 4.57.1 modeling_opt.py,
 * vLLM opt.py):
 *
 *   e = embed_tokens[tokens] (word_embed_proj_dim wide), then project_in (when present),
 *   x = e + embed_positions[t + 2] (the learned table's offset of 2 rows); per layer
 *   (pre-norm, do_layer_norm_before)  x += out_proj(attn(qkv(self_attn_layer_norm(x))));
 *                                     x += fc2(act(fc1(final_layer_norm(x))))
 *   (post-norm, opt-350m)             x = self_attn_layer_norm(x + out_proj(attn(qkv(x))));
 *                                     x = final_layer_norm(x + fc2(act(fc1(x))))
 *   then model.decoder.final_layer_norm (when present), project_out (when present), and the
 *   logits against lm_head (embed_tokens when tied). Every Linear but project_in / out has a
 *   bias with enable_bias; LayerNorms eps 1e-5 with weights and biases; causal attention
 *   over num_attention_heads heads of hidden_size / heads without positions, scaled by
 *   head_dim^-0.5.
 *
 * Sharded (docs/format.md section 2.7, OPT): embed_tokens and lm_head vocab-parallel (padding
 * rows checked zero), qkv_proj [q_r; k_r; v_r] of the rank's heads, out_proj and fc2
 * row-parallel (partial sums all-reduced in rank order, the replicated biases added once),
 * fc1 column-parallel with its bias. The replicated tensors (LayerNorms, embed_positions,
 * project_in / out, the row-parallel biases) are read from rank 0 after every other rank's
 * copy is checked equal to it, so a wrong replica on any rank shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

typedef struct opt_run {
	const ref_cfg *c;
	ref_set *sets;   /* the checkpoint (T 1, ckpt) or the ranks */
	uint32_t T;      /* tp size */
	int64_t Vl;      /* vocabulary rows per rank */
	bool ckpt;       /* q/k/v separate under the checkpoint's names */
	const char *pre; /* "model.decoder." or the facebook checkpoints' "decoder." */
	int64_t n;       /* tokens */
	float *x, *h, *q, *k, *v, *att, *o, *acc, *f, *e; /* e: [n, max(wep, hid)] */
	wt_errbuf *err;
} opt_run;

/* The replicated tensor name (under pre) of nd dims a, b: rank 0's, every other rank's copy
 * checked equal to it. */
static int repl(opt_run *r, const float **out, bool optional, int nd, int64_t a, int64_t b,
                const char *leaf)
{
	int rv = ref_getf(&r->sets[0], out, optional, r->err, nd, a, b, 0, "%s%s", r->pre, leaf);
	size_t n = (size_t)(nd == 1 ? a : a * b);
	for (uint32_t k = 1; rv == WT_OK && *out != NULL && k < r->T; k++) {
		const float *o;
		if ((rv = ref_getf(&r->sets[k], &o, false, r->err, nd, a, b, 0, "%s%s", r->pre,
		                   leaf)))
			break;
		if (memcmp(o, *out, n * sizeof(float)) != 0)
			rv = wt_seterr(r->err, WT_ECORRUPT,
			               "rank %u '%s%s': its replica differs from rank 0's", k,
			               r->pre, leaf);
	}
	return rv;
}

/* LayerNorm `leaf` (weight and bias, replicated) of x into y. */
static int norm(opt_run *r, float *y, const float *x, const char *leaf)
{
	char b[160];
	const float *w, *bias;
	int rv;
	snprintf(b, sizeof(b), "%s.weight", leaf);
	if ((rv = repl(r, &w, false, 1, r->c->hid, 0, b)))
		return rv;
	snprintf(b, sizeof(b), "%s.bias", leaf);
	if ((rv = repl(r, &bias, false, 1, r->c->hid, 0, b)))
		return rv;
	ref_layernorm(y, x, w, bias, r->n, r->c->hid, 1e-5f);
	return WT_OK;
}

/* Rows >= V of rank k's vocabulary slice w [Vl, cols] must be zero. */
static int padding(opt_run *r, uint32_t k, const float *w, int64_t cols, const char *name)
{
	int64_t first = r->c->V - (int64_t)k * r->Vl;
	for (int64_t row = first < 0 ? 0 : first; row < r->Vl; row++)
		for (int64_t i = 0; i < cols; i++)
			if (w[row * cols + i] != 0.0f)
				return wt_seterr(
				    r->err, WT_ECORRUPT,
				    "rank %u '%s': padding row %lld (vocab row %lld >= "
				    "vocab_size %lld) is not zero",
				    k, name, (long long)row, (long long)(k * r->Vl + row),
				    (long long)r->c->V);
	return WT_OK;
}

/* x = project_in(embed_tokens[tokens]) + embed_positions[t + 2]. */
static int embed(opt_run *r, const int64_t *tokens)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, W = c->wep;
	char name[96];
	snprintf(name, sizeof(name), "%sembed_tokens.weight", r->pre);
	memset(r->e, 0, (size_t)(n * W) * sizeof(float));
	int rv = WT_OK;
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *e;
		if ((rv = ref_getf(&r->sets[k], &e, false, r->err, 2, r->Vl, W, 0, "%s", name)) ||
		    (rv = padding(r, k, e, W, name)))
			break;
		for (int64_t t = 0; t < n; t++) {
			int64_t row = tokens[t] - (int64_t)k * r->Vl;
			for (int64_t i = 0; row >= 0 && row < r->Vl && i < W; i++)
				r->e[t * W + i] += e[row * W + i];
		}
	}
	const float *pin = NULL, *pos;
	if (rv == WT_OK && W != c->hid)
		rv = repl(r, &pin, false, 2, c->hid, W, "project_in.weight");
	if (rv == WT_OK)
		rv = repl(r, &pos, false, 2, c->max_pos + 2, c->hid, "embed_positions.weight");
	if (rv != WT_OK)
		return rv;
	if (pin != NULL)
		ref_linear(r->x, r->e, pin, NULL, n, W, c->hid);
	else
		memcpy(r->x, r->e, (size_t)(n * c->hid) * sizeof(float));
	for (int64_t t = 0; t < n; t++)
		for (int64_t i = 0; i < c->hid; i++)
			r->x[t * c->hid + i] += pos[(t + 2) * c->hid + i];
	return WT_OK;
}

/* Rank k's q, k, v of its Hl heads on r->h. */
static int qkv(opt_run *r, uint32_t k, int64_t l, int64_t Hl)
{
	const ref_cfg *c = r->c;
	ref_set *s = &r->sets[k];
	int64_t hid = c->hid, w = Hl * c->d, n = r->n;
	long long L = (long long)l;
	bool bias = c->opt_bias;
	const float *W, *B = NULL;
	int rv;
	if (r->ckpt) {
		static const char *const part[] = {"q", "k", "v"};
		float *dst[] = {r->q, r->k, r->v};
		for (int p = 0; p < 3; p++) {
			if ((rv = ref_getf(s, &W, false, r->err, 2, w, hid, 0,
			                   "%slayers.%lld.self_attn.%s_proj.weight", r->pre, L,
			                   part[p])) ||
			    (bias && (rv = ref_getf(s, &B, false, r->err, 1, w, 0, 0,
			                            "%slayers.%lld.self_attn.%s_proj.bias", r->pre,
			                            L, part[p]))))
				return rv;
			ref_linear(dst[p], r->h, W, B, n, hid, w);
		}
		return WT_OK;
	}
	if ((rv = ref_getf(s, &W, false, r->err, 2, 3 * w, hid, 0,
	                   "%slayers.%lld.self_attn.qkv_proj.weight", r->pre, L)) ||
	    (bias && (rv = ref_getf(s, &B, false, r->err, 1, 3 * w, 0, 0,
	                            "%slayers.%lld.self_attn.qkv_proj.bias", r->pre, L))))
		return rv;
	ref_linear(r->q, r->h, W, B, n, hid, w);
	ref_linear(r->k, r->h, W + w * hid, B ? B + w : NULL, n, hid, w);
	ref_linear(r->v, r->h, W + 2 * w * hid, B ? B + 2 * w : NULL, n, hid, w);
	return WT_OK;
}

/* The bias `leaf` of layer l (replicated: a row-parallel Linear's) added to acc, when
 * enable_bias. */
static int add_bias(opt_run *r, int64_t l, const char *leaf)
{
	if (!r->c->opt_bias)
		return WT_OK;
	char b[160];
	const float *bias;
	snprintf(b, sizeof(b), "layers.%lld.%s", (long long)l, leaf);
	int rv = repl(r, &bias, false, 1, r->c->hid, 0, b);
	for (int64_t t = 0; rv == WT_OK && t < r->n; t++)
		for (int64_t i = 0; i < r->c->hid; i++)
			r->acc[t * r->c->hid + i] += bias[i];
	return rv;
}

/* x (+)= block; with the layer's norm `leaf` before (pre-norm) or after (post-norm). */
static int attn(opt_run *r, int64_t l)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, Hl = c->H / (int64_t)r->T, w = Hl * c->d;
	char leaf[96];
	snprintf(leaf, sizeof(leaf), "layers.%lld.self_attn_layer_norm", (long long)l);
	int rv = WT_OK;
	if (c->opt_pre)
		rv = norm(r, r->h, r->x, leaf);
	else
		memcpy(r->h, r->x, (size_t)(n * hid) * sizeof(float));
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t j = 0; j < Hl; j++)
		kv_of[j] = j;
	ref_attn_opt ao = {.causal = true};
	memset(r->acc, 0, (size_t)(n * hid) * sizeof(float));
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *wo;
		if ((rv = qkv(r, k, l, Hl)) ||
		    (rv =
		         ref_getf(&r->sets[k], &wo, false, r->err, 2, hid, w, 0,
		                  "%slayers.%lld.self_attn.out_proj.weight", r->pre, (long long)l)))
			break;
		ref_attention(r->att, r->q, r->k, r->v, n, Hl, Hl, kv_of, c->d, &ao);
		ref_linear(r->o, r->att, wo, NULL, n, w, hid);
		for (int64_t i = 0; i < n * hid; i++)
			r->acc[i] += r->o[i];
	}
	if (rv == WT_OK)
		rv = add_bias(r, l, "self_attn.out_proj.bias");
	if (rv != WT_OK)
		return rv;
	for (int64_t i = 0; i < n * hid; i++)
		r->x[i] += r->acc[i];
	return c->opt_pre ? WT_OK : norm(r, r->x, r->x, leaf);
}

static int mlp(opt_run *r, int64_t l)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, hid = c->hid, Il = c->I / (int64_t)r->T;
	long long L = (long long)l;
	char leaf[96];
	snprintf(leaf, sizeof(leaf), "layers.%lld.final_layer_norm", L);
	int rv = WT_OK;
	if (c->opt_pre)
		rv = norm(r, r->h, r->x, leaf);
	else
		memcpy(r->h, r->x, (size_t)(n * hid) * sizeof(float));
	memset(r->acc, 0, (size_t)(n * hid) * sizeof(float));
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		ref_set *s = &r->sets[k];
		const float *w1, *b1 = NULL, *w2;
		if ((rv = ref_getf(s, &w1, false, r->err, 2, Il, hid, 0, "%slayers.%lld.fc1.weight",
		                   r->pre, L)) ||
		    (c->opt_bias && (rv = ref_getf(s, &b1, false, r->err, 1, Il, 0, 0,
		                                   "%slayers.%lld.fc1.bias", r->pre, L))) ||
		    (rv = ref_getf(s, &w2, false, r->err, 2, hid, Il, 0, "%slayers.%lld.fc2.weight",
		                   r->pre, L)))
			break;
		ref_linear(r->f, r->h, w1, b1, n, hid, Il);
		ref_act_apply(r->f, n * Il, c->act);
		ref_linear(r->o, r->f, w2, NULL, n, Il, hid);
		for (int64_t i = 0; i < n * hid; i++)
			r->acc[i] += r->o[i];
	}
	if (rv == WT_OK)
		rv = add_bias(r, l, "fc2.bias");
	if (rv != WT_OK)
		return rv;
	for (int64_t i = 0; i < n * hid; i++)
		r->x[i] += r->acc[i];
	return c->opt_pre ? WT_OK : norm(r, r->x, r->x, leaf);
}

/* final_layer_norm, project_out, and each rank's vocabulary rows of the LM head. */
static int head(opt_run *r, float *logits)
{
	const ref_cfg *c = r->c;
	int64_t n = r->n, W = c->wep, V = c->V;
	const float *pout = NULL;
	int rv = WT_OK;
	if (c->opt_fnorm)
		rv = norm(r, r->x, r->x, "final_layer_norm");
	if (rv == WT_OK && W != c->hid)
		rv = repl(r, &pout, false, 2, W, c->hid, "project_out.weight");
	if (rv != WT_OK)
		return rv;
	if (pout != NULL)
		ref_linear(r->e, r->x, pout, NULL, n, c->hid, W);
	else
		memcpy(r->e, r->x, (size_t)(n * W) * sizeof(float));
	float *part = malloc((size_t)(n * r->Vl) * sizeof(float));
	if (part == NULL)
		return wt_seterr(r->err, WT_ENOMEM, "LM head: out of memory");
	char name[96];
	if (c->tied)
		snprintf(name, sizeof(name), "%sembed_tokens.weight", r->pre);
	else
		snprintf(name, sizeof(name), "lm_head.weight");
	for (uint32_t k = 0; k < r->T && rv == WT_OK; k++) {
		const float *w;
		if ((rv = ref_getf(&r->sets[k], &w, false, r->err, 2, r->Vl, W, 0, "%s", name)) ||
		    (rv = padding(r, k, w, W, name)))
			break;
		ref_linear(part, r->e, w, NULL, n, W, r->Vl);
		for (int64_t t = 0; t < n; t++)
			for (int64_t i = 0; i < r->Vl; i++)
				if ((int64_t)k * r->Vl + i < V)
					logits[t * V + (int64_t)k * r->Vl + i] =
					    part[t * r->Vl + i];
	}
	free(part);
	return rv;
}

static int run(opt_run *r, const int64_t *tokens, float *logits)
{
	const ref_cfg *c = r->c;
	if (r->n < 1 || r->n > REF_MAX_TOKENS || r->n > c->max_pos)
		return wt_seterr(r->err, WT_EINVAL,
		                 "%lld tokens; the reference runs 1 to %d within "
		                 "max_position_embeddings %lld",
		                 (long long)r->n, REF_MAX_TOKENS, (long long)c->max_pos);
	for (int64_t t = 0; t < r->n; t++)
		if (tokens[t] < 0 || tokens[t] >= c->V)
			return wt_seterr(r->err, WT_EINVAL,
			                 "token %lld is %lld; vocab_size is %lld", (long long)t,
			                 (long long)tokens[t], (long long)c->V);
	size_t n = (size_t)r->n, hid = (size_t)c->hid;
	size_t we = (size_t)(c->wep > c->hid ? c->wep : c->hid);
	float *buf = calloc(n * (8 * hid + (size_t)c->I + we), sizeof(float));
	if (buf == NULL)
		return wt_seterr(r->err, WT_ENOMEM, "reference forward: out of memory");
	float **p[] = {&r->x, &r->h, &r->q, &r->k, &r->v, &r->att, &r->o, &r->acc};
	for (size_t i = 0; i < 8; i++)
		*p[i] = buf + i * n * hid;
	r->f = buf + 8 * n * hid;
	r->e = r->f + n * (size_t)c->I;
	int rv = embed(r, tokens);
	for (int64_t l = 0; rv == WT_OK && l < c->L; l++)
		if ((rv = attn(r, l)) == WT_OK)
			rv = mlp(r, l);
	if (rv == WT_OK)
		rv = head(r, logits);
	free(buf);
	return rv;
}

int ref_opt_full(const ref_cfg *c, ref_set *ck, const int64_t *tokens, size_t n_tok, float *logits,
                 wt_errbuf *err)
{
	opt_run r = {.c = c,
	             .sets = ck,
	             .T = 1,
	             .Vl = c->V,
	             .ckpt = true,
	             .pre = ref_set_find(ck, "decoder.embed_tokens.weight") ? "decoder."
	                                                                    : "model.decoder.",
	             .n = (int64_t)n_tok,
	             .err = err};
	return run(&r, tokens, logits);
}

int ref_opt_sharded(const ref_cfg *c, ref_set *ranks, uint32_t T, int64_t Vl, const int64_t *tokens,
                    size_t n_tok, float *logits, wt_errbuf *err)
{
	opt_run r = {.c = c,
	             .sets = ranks,
	             .T = T,
	             .Vl = Vl,
	             .pre = "model.decoder.",
	             .n = (int64_t)n_tok,
	             .err = err};
	return run(&r, tokens, logits);
}
