/*
 * shard_ends.c — the two vocabulary ends of the sharded reference pass (shard.c): the
 * vocab-parallel embedding (each rank its padded rows, padding rows checked zero, then the
 * all-reduce; GPT-2's / CLIP's positions, BLOOM's embedding norm) and the LM head (each
 * rank's logits concatenated, padding rows dropped), or the decoder classifiers' and
 * embedding models' score heads. Split from shard.c.
 */
#include <stdlib.h>
#include <string.h>

#include "reference/shard_int.h"

/* Rows >= V of a vocab-parallel tensor of tp rank r (vl rows a rank; the vocabulary v: V, or
 * Mllama's embed_tokens' V + 8) must be zero (docs/format.md section 2.3). */
static int check_padding(const shard *s, uint32_t r, const float *w, const char *name, int64_t vl,
                         int64_t v)
{
	int64_t first = v - (int64_t)r * vl;
	if (first < 0)
		first = 0;
	for (int64_t row = first; row < vl; row++)
		for (int64_t i = 0; i < s->c->hid; i++)
			if (w[row * s->c->hid + i] != 0.0f)
				return wt_seterr(
				    s->err, WT_ECORRUPT,
				    "rank (tp %u, ep %u) '%s': padding row %lld (vocab row "
				    "%lld >= vocab_size %lld) is not zero",
				    r, s->g, name, (long long)row, (long long)(r * vl + row),
				    (long long)v);
	return WT_OK;
}

/* The same for a rank's 1-D [Vl] slice of a vocabulary vector (PhiMoE's lm_head.bias). */
static int check_padding_1d(const shard *s, uint32_t r, const float *v, const char *name)
{
	for (int64_t i = s->c->V - (int64_t)r * s->Vl; i < s->Vl; i++)
		if (i >= 0 && v[i] != 0.0f)
			return wt_seterr(s->err, WT_ECORRUPT,
			                 "rank (tp %u, ep %u) '%s': padding entry %lld (vocab row "
			                 "%lld >= vocab_size %lld) is not zero",
			                 r, s->g, name, (long long)i, (long long)(r * s->Vl + i),
			                 (long long)s->c->V);
	return WT_OK;
}

int ref_shard_embed(shard *s, const int64_t *tokens)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok;
	memset(s->b.x, 0, (size_t)(T * c->hid) * sizeof(float));
	for (uint32_t r = 0; r < s->T; r++) {
		const float *e;
		int rv = ref_getf(rank_set(s, r, s->g), &e, false, s->err, 2, s->Vle, c->hid, 0,
		                  "model.embed_tokens.weight");
		if (rv || (rv = check_padding(s, r, e, "model.embed_tokens.weight", s->Vle,
		                              ref_embed_rows(c))))
			return rv;
		for (int64_t t = 0; t < T; t++) {
			int64_t row = tokens[t] - (int64_t)r * s->Vle;
			float *xr = s->b.x + t * c->hid;
			for (int64_t i = 0; i < c->hid; i++)
				xr[i] += (row >= 0 && row < s->Vle) ? e[row * c->hid + i] : 0.0f;
		}
	}
	ref_embed_scale(c, s->b.x, T * c->hid); /* after the all-reduce, as engines do */
	/* wpe replicated: rank 0's rows (every rank holds the same); none with JAIS's ALiBi */
	if (c->gpt2 && !c->jais_alibi)
		return ref_gpt2_positions(c, rank_set(s, 0, s->g), s->b.x, T, s->err);
	for (uint32_t r = 0; c->clip && r < s->T; r++) { /* vocabulary-parallel positions */
		ref_tensor *p = ref_set_find(rank_set(s, r, s->g), "model.wpe.weight");
		int rv = p == NULL || p->ndim != 2
		             ? wt_seterr(s->err, WT_ENOTFOUND, "rank %u: no position table", r)
		             : ref_clip_positions(c, rank_set(s, r, s->g), (int64_t)r * p->shape[0],
		                                  false, s->b.x, T, s->err);
		if (rv != WT_OK)
			return rv;
	}
	if (!c->bloom)
		return WT_OK;
	/* BLOOM's word_embeddings_layernorm, each rank with its own replica: their mean, so a
	 * wrong replica on any rank shows */
	memset(s->b.part, 0, (size_t)(T * c->hid) * sizeof(float));
	for (uint32_t r = 0; r < s->T; r++) {
		int rv = ref_norm_of(c, rank_set(s, r, s->g), s->b.y, s->b.x, T, s->err,
		                     "model.embed_norm");
		if (rv != WT_OK)
			return rv;
		for (int64_t i = 0; i < T * c->hid; i++)
			s->b.part[i] += s->b.y[i] / (float)s->T;
	}
	memcpy(s->b.x, s->b.part, (size_t)(T * c->hid) * sizeof(float));
	return WT_OK;
}

/* Qwen2's reward models' score head on rank rs into part [n_tok, n_labels]: its rows of
 * score.0 (+ bias), ReLU, its columns of score.2 (the row-parallel partial sum), score.2's
 * replicated bias over T (the ranks' copies averaged). */
static int rm_rank(shard *s, ref_set *rs, float *part)
{
	const ref_cfg *c = s->c;
	int64_t hl = c->hid / s->T, nl = c->n_labels;
	const float *w0, *b0, *w2, *b2;
	int rv;
	if ((rv = ref_getf(rs, &w0, false, s->err, 2, hl, c->hid, 0, "score.0.weight")) ||
	    (rv = ref_getf(rs, &b0, false, s->err, 1, hl, 0, 0, "score.0.bias")) ||
	    (rv = ref_getf(rs, &w2, false, s->err, 2, nl, hl, 0, "score.2.weight")) ||
	    (rv = ref_getf(rs, &b2, false, s->err, 1, nl, 0, 0, "score.2.bias")))
		return rv;
	float *mid = malloc((size_t)(s->n_tok * hl) * sizeof(float));
	if (mid == NULL)
		return wt_seterr(s->err, WT_ENOMEM, "score head: out of memory");
	ref_linear(mid, s->b.h, w0, b0, s->n_tok, c->hid, hl);
	for (int64_t i = 0; i < s->n_tok * hl; i++)
		mid[i] = mid[i] > 0.0f ? mid[i] : 0.0f;
	ref_linear(part, mid, w2, NULL, s->n_tok, hl, nl);
	for (int64_t t = 0; t < s->n_tok; t++)
		for (int64_t j = 0; j < nl; j++)
			part[t * nl + j] += b2[j] / (float)s->T;
	free(mid);
	return WT_OK;
}

/* InternLM2's reward models' v_head (read as score.weight) on rank r into part [n_tok,
 * n_labels]: its hid / T columns over the same channels of the final hidden states, the
 * row-parallel partial score (summed over the ranks, no bias). */
static int vh_rank(shard *s, ref_set *rs, uint32_t r, float *part)
{
	const ref_cfg *c = s->c;
	int64_t hl = c->hid / s->T, nl = c->n_labels;
	const float *w;
	int rv = ref_getf(rs, &w, false, s->err, 2, nl, hl, 0, "score.weight");
	if (rv != WT_OK)
		return rv;
	for (int64_t t = 0; t < s->n_tok; t++)
		for (int64_t j = 0; j < nl; j++) {
			const float *h = s->b.h + t * c->hid + (int64_t)r * hl;
			double acc = 0.0;
			for (int64_t k = 0; k < hl; k++)
				acc += (double)h[k] * (double)w[j * hl + k];
			part[t * nl + j] = (float)acc;
		}
	return WT_OK;
}

/* The decoder sequence classifiers' score.weight, whole on every rank: each rank's scores
 * over its own final norm, averaged (Qwen2's and InternLM2's reward models: the ranks' partial
 * scores summed, rm_rank, vh_rank); the decoder embedding models (no head): each rank's final
 * hidden states, averaged. */
static int score_head(shard *s, float *out)
{
	const ref_cfg *c = s->c;
	int64_t n = s->n_tok * (c->dec_emb ? c->hid : c->n_labels);
	float div = c->rm_head || c->vh_cols ? 1.0f : (float)s->T;
	float *part = malloc((size_t)n * sizeof(float));
	if (part == NULL)
		return wt_seterr(s->err, WT_ENOMEM, "score head: out of memory");
	int rv = WT_OK;
	memset(out, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++) {
		ref_set *rs = rank_set(s, r, s->g);
		const float *w, *bias = NULL;
		if ((rv = ref_norm_of(c, rs, s->b.h, s->b.x, s->n_tok, s->err, "%s",
		                      ref_final_norm(c))))
			break;
		if (c->dec_emb)
			memcpy(part, s->b.h, (size_t)n * sizeof(float));
		else if (c->rm_head)
			rv = rm_rank(s, rs, part);
		else if (c->vh_cols)
			rv = vh_rank(s, rs, r, part);
		else if ((rv = ref_getf(rs, &w, false, s->err, 2, c->n_labels, c->hid, 0,
		                        "score.weight")) == WT_OK &&
		         (!c->siglip || (rv = ref_getf(rs, &bias, false, s->err, 1, c->n_labels, 0,
		                                       0, "score.bias")) == WT_OK))
			ref_linear(part, s->b.h, w, bias, s->n_tok, c->hid, c->n_labels);
		if (rv != WT_OK)
			break;
		for (int64_t i = 0; i < n; i++)
			out[i] += part[i] / div;
	}
	free(part);
	return rv;
}

int ref_shard_lm_head(shard *s, float *logits)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok;
	if (c->dec_cls || c->dec_emb)
		return score_head(s, logits);
	float *part = malloc((size_t)(T * s->Vl) * sizeof(float));
	if (part == NULL)
		return wt_seterr(s->err, WT_ENOMEM, "LM head: out of memory");
	int rv = WT_OK;
	for (uint32_t r = 0; r < s->T && rv == WT_OK; r++) {
		ref_set *rs = rank_set(s, r, s->g);
		const char *name = c->tied ? "model.embed_tokens.weight" : "lm_head.weight";
		const float *w, *bias = NULL;
		if ((rv = ref_norm_of(c, rs, s->b.h, s->b.x, T, s->err, "%s", ref_final_norm(c))) ||
		    (rv = ref_getf(rs, &w, false, s->err, 2, s->Vl, c->hid, 0, "%s", name)) ||
		    (rv = check_padding(s, r, w, name, s->Vl, c->V)))
			break;
		/* PhiMoE's lm_head.bias [Vl]: the rank's rows of it, padding entries zero */
		if (c->lm_bias &&
		    ((rv = ref_getf(rs, &bias, false, s->err, 1, s->Vl, 0, 0, "lm_head.bias")) ||
		     (rv = check_padding_1d(s, r, bias, "lm_head.bias"))))
			break;
		ref_linear(part, s->b.h, w, bias, T, c->hid, s->Vl);
		for (int64_t t = 0; t < T; t++)
			for (int64_t i = 0; i < s->Vl; i++) {
				int64_t v = (int64_t)r * s->Vl + i;
				if (v < c->V)
					logits[t * c->V + v] = part[t * s->Vl + i];
			}
	}
	free(part);
	if (rv == WT_OK)
		ref_logits_post(c, logits, T * c->V);
	return rv;
}
