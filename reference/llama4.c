/*
 * llama4.c — the Llama 4 parts of the reference forward pass (Llama4ForCausalLM and
 * the language model of Llama4ForConditionalGeneration, as transformers 4.54.1's
 * modeling_llama4.py computes them; the configuration: cfg_llama4.c):
 *
 *  - Llama4TextAttention after q_proj / k_proj: on a RoPE layer (no_rope_layers[i]
 *    true) apply_rotary_emb, a complex product over the adjacent pairs (x[2i],
 *    x[2i+1]) with llama3-scaled frequencies, then, with use_qk_norm, the weightless
 *    L2 norm x / sqrt(mean(x^2) + rms_norm_eps) of each q and k head (RoPE layers
 *    only: the module exists only when use_rope); on a NoPE layer neither, and with
 *    attn_temperature_tuning q times log(floor((pos + 1) / floor_scale) + 1) *
 *    attn_scale + 1. Scores times head_dim^-0.5; the chunked mask is ref_attention's.
 *  - Llama4TextMoe: router logits, the top k, scores sigmoid(logit) at those (0 at
 *    the others: sigmoid(-inf)); every expert runs on the hidden state TIMES its score
 *    (routed_in = hidden * router_scores), silu(gate) * up of gate_up_proj[e]
 *    ([hid, 2*Ie], torch.bmm operand, gate the first Ie columns) through down_proj[e]
 *    ([Ie, hid]); the experts' outputs summed, plus the shared expert (the caller's,
 *    reference.c / shard.c, as a Qwen-MoE shared expert without a gate). An expert
 *    that was not chosen gets a zero input and, without biases, adds nothing.
 *
 * The sharded side reads the runtime stacks (docs/format.md 2.7): w13_weight
 * [count, 2*Il, hid] with [gate; up] rows (w13_order up_gate: [up; gate]) and
 * w2_weight [count, hid, Il]; a TP rank scales the input, then runs its Il slice.
 */
#include <math.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

/* x / sqrt(mean(x^2) + eps) over each of the n rows of d (Llama4TextL2Norm). */
static void l2_norm(float *x, int64_t n, int64_t d, float eps)
{
	for (int64_t r = 0; r < n; r++) {
		float *v = x + r * d, ss = 0.0f;
		for (int64_t i = 0; i < d; i++)
			ss += v[i] * v[i];
		float inv = 1.0f / sqrtf(ss / (float)d + eps);
		for (int64_t i = 0; i < d; i++)
			v[i] *= inv;
	}
}

void ref_llama4_qk(const ref_cfg *c, int64_t l, float *q, float *k, int64_t T, int64_t nq,
                   int64_t nkv)
{
	int64_t d = c->d;
	if (ref_l4_bit(c->l4_rope, l)) {
		ref_rope_layer(c, l, q, T, nq, nq * d);
		ref_rope_layer(c, l, k, T, nkv, nkv * d);
		if (c->l2_qk_norm) {
			l2_norm(q, T * nq, d, (float)c->eps);
			l2_norm(k, T * nkv, d, (float)c->eps);
		}
		return;
	}
	for (int64_t t = 0; c->temp_tuning && t < T; t++) {
		/* transformers: float32 cache_position; floor of (pos + 1) / floor_scale */
		double f = floor(((double)t + 1.0) / c->floor_scale);
		float sc = (float)(log(f + 1.0) * c->temp_scale + 1.0);
		for (int64_t i = 0; i < nq * d; i++)
			q[t * nq * d + i] *= sc;
	}
}

void ref_route_topk_sigmoid(const float *logits, int64_t E, int64_t k, const int64_t *forced,
                            int64_t *idx, float *w)
{
	ref_eset taken = {0}; /* E <= REF_MAX_EXPERTS, checked by the config parser */
	for (int64_t j = 0; j < k; j++) {
		int64_t best = forced ? forced[j] : -1;
		for (int64_t e = 0; forced == NULL && e < E; e++)
			if (!ref_eset_has(&taken, e) && (best < 0 || logits[e] > logits[best]))
				best = e;
		ref_eset_add(&taken, best);
		idx[j] = best;
		w[j] = 1.0f / (1.0f + expf(-logits[best]));
	}
}

/* Route token h of layer l with the router of set s (the checkpoint's or a rank's
 * replicated copy): idx / w receive topk entries. */
static int route(const ref_cfg *c, ref_set *s, int64_t l, const float *h, const int64_t *forced,
                 int64_t *idx, float *w, wt_errbuf *err)
{
	const float *router;
	float rl[REF_MAX_EXPERTS];
	int rv = ref_getf(s, &router, false, err, 2, c->E, c->hid, 0,
	                  "model.layers.%lld.feed_forward.router.weight", (long long)l);
	if (rv != WT_OK)
		return rv;
	ref_linear(rl, h, router, NULL, 1, c->hid, c->E);
	ref_route_topk_sigmoid(rl, c->E, c->topk, forced, idx, w);
	return WT_OK;
}

int ref_llama4_moe_full(const ref_cfg *c, ref_set *s, int64_t l, const float *h, int64_t T,
                        float *acc, int64_t *routes, ref_bufs *b, wt_errbuf *err)
{
	int64_t hid = c->hid, ie = c->Ie;
	const float *gu, *dn;
	int rv;
	if ((rv = ref_getf(s, &gu, false, err, 3, c->E, hid, 2 * ie,
	                   "model.layers.%lld.feed_forward.experts.gate_up_proj", (long long)l)) ||
	    (rv = ref_getf(s, &dn, false, err, 3, c->E, ie, hid,
	                   "model.layers.%lld.feed_forward.experts.down_proj", (long long)l)))
		return rv;
	float *in = b->row, *g = b->scratch, *u = g + ie; /* gate_up = in @ gate_up_proj[e] */
	float w[REF_MAX_EXPERTS];                         /* top-k <= E <= REF_MAX_EXPERTS */
	int64_t idx[REF_MAX_EXPERTS];
	memset(acc, 0, (size_t)(T * hid) * sizeof(float));
	for (int64_t t = 0; t < T; t++) {
		const float *x = h + t * hid;
		float *o = acc + t * hid;
		if ((rv = route(c, s, l, x, NULL, idx, w, err)))
			return rv;
		if (routes)
			memcpy(routes + t * c->topk, idx, (size_t)c->topk * sizeof(int64_t));
		for (int64_t j = 0; j < c->topk; j++) {
			const float *wgu = gu + idx[j] * hid * 2 * ie, *wd = dn + idx[j] * ie * hid;
			for (int64_t i = 0; i < hid; i++)
				in[i] = x[i] * w[j]; /* routed_in = hidden * router_scores */
			memset(g, 0, (size_t)(2 * ie) * sizeof(float));
			for (int64_t i = 0; i < hid; i++)
				for (int64_t n = 0; n < 2 * ie; n++)
					g[n] += in[i] * wgu[i * 2 * ie + n];
			ref_act_mul(g, g, u, ie, c->act); /* act(gate) * up */
			for (int64_t n = 0; n < ie; n++)
				for (int64_t i = 0; i < hid; i++)
					o[i] += g[n] * wd[n * hid + i];
		}
	}
	return WT_OK;
}

int ref_llama4_experts_rank(const ref_cfg *c, ref_set *rs, int64_t l, const ref_go_rank *k,
                            const float *h, int64_t T, float *out, ref_bufs *b, wt_errbuf *err)
{
	int64_t hid = c->hid, Il = k->Il;
	const float *w13, *w2;
	int rv;
	if ((rv = ref_getf(rs, &w13, false, err, 3, k->count, 2 * Il, hid,
	                   "model.layers.%lld.feed_forward.experts.w13_weight", (long long)l)) ||
	    (rv = ref_getf(rs, &w2, false, err, 3, k->count, hid, Il,
	                   "model.layers.%lld.feed_forward.experts.w2_weight", (long long)l)))
		return rv;
	float w[REF_MAX_EXPERTS]; /* top-k <= E <= REF_MAX_EXPERTS */
	int64_t idx[REF_MAX_EXPERTS];
	for (int64_t t = 0; t < T; t++) {
		const float *x = h + t * hid;
		if ((rv = route(c, rs, l, x, k->forced ? k->forced + t * c->topk : NULL, idx, w,
		                err)))
			return rv;
		for (int64_t j = 0; j < c->topk; j++) {
			int64_t loc = idx[j] - k->start;
			if (loc < 0 || loc >= k->count)
				continue; /* another EP rank owns it */
			const float *a = w13 + loc * 2 * Il * hid, *bb = a + Il * hid;
			for (int64_t i = 0; i < hid; i++)
				b->row[i] = x[i] * w[j]; /* the score scales the expert's input */
			ref_ffn(b->y, b->row, 1, hid, Il, k->up_gate ? bb : a, NULL,
			        k->up_gate ? a : bb, NULL, w2 + loc * hid * Il, c->act, b->scratch);
			for (int64_t i = 0; i < hid; i++)
				out[t * hid + i] += b->y[i];
		}
	}
	return WT_OK;
}
