/*
 * qwen3vl.c — the Qwen3-VL-MoE part of the reference forward pass
 * (Qwen3VLMoeForConditionalGeneration's language model on text tokens, as transformers
 * 4.57.1's modeling_qwen3_vl_moe.py computes it): Qwen3VLMoeTextSparseMoeBlock's
 * softmax router mlp.gate, the top k renormalised to sum 1 (always: the block does not
 * read norm_topk_prob), and Qwen3VLMoeTextExperts run as the bmm operands the checkpoint
 * stores, gate_up = h @ gate_up_proj[e] ([hid, 2*Ie]; gate, up = chunk(2, dim=-1): gate
 * the first Ie columns), (up * silu(gate)) @ down_proj[e] ([Ie, hid]), times the expert's
 * weight, summed over the chosen experts. Aria's AriaGroupedExpertsMLP is the same math
 * over experts.fc1.weight / fc2.weight (fc1's first half silu'd, times the second) under
 * AriaTextMoELayer's router (softmax of the top-k logits: the same weights).
 *
 * The sharded side reads the runtime stacks as every Qwen-MoE's (shard.c): w13_weight
 * [count, 2*Il, hid] with [gate; up] rows and w2_weight [count, hid, Il], so the two
 * passes agree only when the planner transposed each expert and kept the halves apart.
 */
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

int ref_q3vl_moe_full(const ref_cfg *c, ref_set *s, const char *m, const float *h, int64_t T,
                      float *acc, int64_t *routes, ref_bufs *b, wt_errbuf *err)
{
	int64_t hid = c->hid, ie = c->Ie;
	const float *gu, *dn;
	int rv;
	/* Aria's AriaGroupedExpertsGemm stacks: the same operands under fc1 / fc2 */
	const char *gun = c->aria ? "fc1.weight" : "gate_up_proj";
	const char *dnn = c->aria ? "fc2.weight" : "down_proj";
	if ((rv = ref_getf(s, &gu, false, err, 3, c->E, hid, 2 * ie, "%sexperts.%s", m, gun)) ||
	    (rv = ref_getf(s, &dn, false, err, 3, c->E, ie, hid, "%sexperts.%s", m, dnn)))
		return rv;
	float *g = b->scratch, *u = g + ie;
	float w[REF_MAX_EXPERTS]; /* top-k <= E <= REF_MAX_EXPERTS */
	int64_t idx[REF_MAX_EXPERTS];
	memset(acc, 0, (size_t)(T * hid) * sizeof(float));
	for (int64_t t = 0; t < T; t++) {
		const float *x = h + t * hid;
		float *o = acc + t * hid;
		if ((rv = ref_moe_route(c, s, true, m, x, NULL, idx, w, err)))
			return rv;
		if (routes)
			memcpy(routes + t * c->topk, idx, (size_t)c->topk * sizeof(int64_t));
		for (int64_t j = 0; j < c->topk; j++) {
			const float *wgu = gu + idx[j] * hid * 2 * ie, *wd = dn + idx[j] * ie * hid;
			memset(g, 0, (size_t)(2 * ie) * sizeof(float));
			for (int64_t i = 0; i < hid; i++)
				for (int64_t n = 0; n < 2 * ie; n++)
					g[n] += x[i] * wgu[i * 2 * ie + n];
			ref_act_mul(g, g, u, ie, c->act); /* act(gate) * up */
			for (int64_t n = 0; n < ie; n++)
				for (int64_t i = 0; i < hid; i++)
					o[i] += w[j] * (g[n] * wd[n * hid + i]);
		}
	}
	return WT_OK;
}
