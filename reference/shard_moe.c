/*
 * shard_moe.c — the sharded reference pass's MoE block (shard.c runs the layers): each
 * rank's routed experts from its w13_weight / w2_weight stacks (w13_order, EP ownership
 * count / start; MiniCPM-MoE's and Arctic's ws / w2s: every expert, [w1; w3] whatever w13_order;
 * Llama 4's and GPT-OSS's in llama4.c / gpt_oss.c), the shared expert TP-split like an MLP, and the
 * all-reduce over the TP and EP ranks.
 */
#include <string.h>

#include "reference/shard_int.h"

/* Routed-expert partial of rank (tp r, ep e) on b.h, added into out. */
static int experts_rank(shard *s, uint32_t r, uint32_t e, int64_t l, float *out)
{
	const ref_cfg *c = s->c;
	ref_set *rs = rank_set(s, r, e);
	int64_t E = c->E, P = s->P, count = E, start = 0, Il = c->Ie / s->T;
	if (P > 1) {
		count = E / P + ((int64_t)e < E % P);
		start = (int64_t)e * (E / P) + ((int64_t)e < E % P ? (int64_t)e : E % P);
		Il = c->Ie;
	}
	char m[160];
	ref_moe_prefix(c, l, m, sizeof(m));
	const float *w13, *w2;
	int rv;
	if (c->gpt_oss || c->llama4) { /* GPT-OSS: w2_bias once: tp rank 0, or every rank
		                        * with whole experts */
		const ref_go_rank k = {.count = count,
		                       .start = start,
		                       .Il = Il,
		                       .up_gate = s->up_gate != 0,
		                       .add_b2 = P > 1 || r == 0,
		                       .forced =
		                           s->routes ? s->routes + l * s->n_tok * c->topk : NULL};
		if ((rv = shard_post_norm(s, rs, l)))
			return rv;
		if (c->llama4)
			return ref_llama4_experts_rank(c, rs, l, &k, s->b.h, s->n_tok, out, &s->b,
			                               s->err);
		return ref_gpt_oss_experts_rank(c, rs, l, &k, s->b.h, s->n_tok, out, s->b.y,
		                                s->b.scratch, s->err);
	}
	int64_t parts = c->nh ? 1 : 2; /* Nemotron-H's w13 holds w1 (up) alone */
	/* MiniCPM-MoE, Arctic: vLLM's MiniCPMMoE / ArcticMoE parameters ws / w2s, ws [w1; w3]
	 * whatever w13_order */
	const bool mc = c->minicpm || c->arctic, up_gate = s->up_gate && !mc;
	if ((rv = shard_post_norm(s, rs, l)) ||
	    (rv = ref_getf(rs, &w13, false, s->err, 3, count, parts * Il, c->hid, "%s%s", m,
	                   mc ? "ws" : "experts.w13_weight")) ||
	    (rv = ref_getf(rs, &w2, false, s->err, 3, count, c->hid, Il, "%s%s", m,
	                   mc ? "w2s" : "experts.w2_weight")))
		return rv;
	float w[REF_MAX_EXPERTS]; /* top-k <= E <= REF_MAX_EXPERTS */
	int64_t idx[REF_MAX_EXPERTS];
	for (int64_t t = 0; t < s->n_tok; t++) {
		const float *h = s->b.h + t * c->hid;
		const int64_t *forced = s->routes ? s->routes + (l * s->n_tok + t) * c->topk : NULL;
		if ((rv = ref_moe_route(c, rs, false, m, h, forced, idx, w, s->err)))
			return rv;
		for (int64_t j = 0; j < c->topk; j++) {
			int64_t loc = idx[j] - start;
			if (loc < 0 || loc >= count)
				continue; /* another EP rank owns it */
			const float *a = w13 + loc * parts * Il * c->hid, *bb = a + Il * c->hid;
			const float *wg = up_gate ? bb : a, *wu = up_gate ? a : bb;
			if (c->nh) { /* relu2(up) then down */
				ref_linear(s->b.scratch, h, a, NULL, 1, c->hid, Il);
				ref_act_apply(s->b.scratch, Il, c->act);
				ref_linear(s->b.y, s->b.scratch, w2 + loc * c->hid * Il, NULL, 1,
				           Il, c->hid);
			} else
				ref_ffn(s->b.y, h, 1, c->hid, Il, wg, NULL, wu, NULL,
				        w2 + loc * c->hid * Il, c->act, s->b.scratch);
			for (int64_t i = 0; i < c->hid; i++)
				out[t * c->hid + i] += w[j] * s->b.y[i];
		}
	}
	return WT_OK;
}

/* Shared-expert partial (TP-split; Qwen2-MoE sigmoid-gated) of tp rank r of the group. */
static int shared_rank(shard *s, uint32_t r, int64_t l, float *out)
{
	const ref_cfg *c = s->c;
	ref_set *rs = rank_set(s, r, s->g);
	char m[160], se[200];
	ref_moe_prefix(c, l, m, sizeof(m));
	int rv;
	if ((rv = shard_post_norm(s, rs, l)))
		return rv;
	for (int64_t t = 0; t < s->n_tok; t++) {
		const float *h = s->b.h + t * c->hid;
		float gate;
		if ((rv = ref_shared_gate(c, rs, m, h, se, sizeof(se), &gate, s->err)))
			return rv;
		rv = c->nogate ? ref_nogate_mlp(c, rs, se, c->Is / s->T, 1, h, s->b.y, s->b.scratch,
		                                s->err) /* Nemotron-H's up rows, down columns */
		               : ref_shard_mlp_rank(s, rs, se, c->Is, 1, h, s->b.y);
		if (rv != WT_OK)
			return rv;
		for (int64_t i = 0; i < c->hid; i++)
			out[t * c->hid + i] += gate * s->b.y[i];
	}
	return WT_OK;
}

/*
 * MoE block. P == 1: tp rank r computes its TP slice of every selected expert
 * (and of the shared expert) and the partials are all-reduced. P > 1: tp rank
 * r all-reduces the outputs of the experts owned by ranks (r, 0..P-1); every
 * tp rank gets the same sum, and the reference averages those T copies so a
 * wrong expert stack on any rank shows. The shared expert stays TP-split on
 * the ranks of the group.
 */
int ref_shard_moe(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t n = s->n_tok * c->hid;
	int rv;
	memset(s->b.acc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T; r++) {
		if (s->P == 1) {
			memset(s->b.o, 0, (size_t)n * sizeof(float));
			if ((rv = experts_rank(s, r, 0, l, s->b.o)))
				return rv;
			if (c->Is > 0 && (rv = shared_rank(s, r, l, s->b.o)))
				return rv;
			add_into(s->b.acc, s->b.o, n);
			continue;
		}
		memset(s->b.part, 0, (size_t)n * sizeof(float));
		for (uint32_t e = 0; e < s->P; e++) {
			memset(s->b.o, 0, (size_t)n * sizeof(float));
			if ((rv = experts_rank(s, r, e, l, s->b.o)))
				return rv;
			add_into(s->b.part, s->b.o, n);
		}
		for (int64_t i = 0; i < n; i++)
			s->b.acc[i] += s->b.part[i] / (float)s->T;
	}
	if (s->P > 1 && c->Is > 0) {
		for (uint32_t r = 0; r < s->T; r++) {
			memset(s->b.o, 0, (size_t)n * sizeof(float));
			if ((rv = shared_rank(s, r, l, s->b.o)))
				return rv;
			add_into(s->b.acc, s->b.o, n);
		}
	}
	return WT_OK;
}
