/*
 * reference_mla.c — DeepSeek-V3 and DeepSeek-V2 pieces of the reference
 * forward pass: multi-head latent attention and the group-limited router (V3:
 * sigmoid scores with the correction bias, groups by their two best; V2: softmax
 * scores, groups by their best, or plain top-k for topk_method greedy).
 *
 * MLA for heads [0, Hl) of a tensor set (the checkpoint with Hl = H, or one
 * rank's head slice, docs/format.md section 2.7, DeepSeek-V3 MLA):
 *   q   = q_b_proj(RMSNorm(q_a_proj(h)))      (or q_proj(h) when q_lora_rank is null)
 *         per head [nope | rope]
 *   kva = kv_a_proj_with_mqa(h) = [latent (kv_lora) | k_pe (rope, shared by all heads)]
 *   kv  = kv_b_proj(RMSNorm(latent))           per head [k_nope | v]
 *   score = (q_nope . k_nope + q_pe . k_pe) / sqrt(nope + rope), causal softmax,
 *   out = o_proj(softmax . v).
 * RoPE is the rotate-half form of reference_math.c on the rope parts, after
 * de-interleaving them when config.json rope_interleave is true (the
 * transformers default for DeepSeek-V3, apply_rotary_pos_emb_interleave).
 * RoPE scaling (YaRN, with DeepSeek's mscale^2 on the softmax scale) as
 * cfg_rope.c reads it. MiniCPM3 (c->minicpm3) runs the same block without interleave and
 * with its latent norms at rms_norm_eps (cfg_minicpm.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/grok1.h"
#include "reference/reference_int.h"

/* q_a_layernorm and kv_a_layernorm are built without rms_norm_eps in transformers'
 * DeepseekV2/V3Attention (and DeepSeek's own modeling code): their default eps. */
#define MLA_LATENT_EPS 1e-6f

/* vLLM's minicpm3.py builds them with config.rms_norm_eps. */
static float mla_latent_eps(const ref_cfg *c)
{
	return c->minicpm3 ? (float)c->eps : MLA_LATENT_EPS;
}

typedef struct mla_w {
	const float *q_a, *q_ln, *q_b, *kv_a, *kv_ln, *kv_b, *o;
} mla_w;

static int mla_weights(const ref_cfg *c, ref_set *s, int64_t l, int64_t Hl, mla_w *w,
                       wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t qk = c->nope + c->rope;
	int rv;
	memset(w, 0, sizeof(*w));
	if (c->q_lora > 0) {
		if ((rv = ref_getf(s, &w->q_a, false, err, 2, c->q_lora, c->hid, 0,
		                   "model.layers.%lld.self_attn.q_a_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->q_ln, false, err, 1, c->q_lora, 0, 0,
		                   "model.layers.%lld.self_attn.q_a_layernorm.weight", L)) ||
		    (rv = ref_getf(s, &w->q_b, false, err, 2, Hl * qk, c->q_lora, 0,
		                   "model.layers.%lld.self_attn.q_b_proj.weight", L)))
			return rv;
	} else if ((rv = ref_getf(s, &w->q_b, false, err, 2, Hl * qk, c->hid, 0,
	                          "model.layers.%lld.self_attn.q_proj.weight", L))) {
		return rv;
	}
	if ((rv = ref_getf(s, &w->kv_a, false, err, 2, c->kv_lora + c->rope, c->hid, 0,
	                   "model.layers.%lld.self_attn.kv_a_proj_with_mqa.weight", L)) ||
	    (rv = ref_getf(s, &w->kv_ln, false, err, 1, c->kv_lora, 0, 0,
	                   "model.layers.%lld.self_attn.kv_a_layernorm.weight", L)) ||
	    (rv = ref_getf(s, &w->kv_b, false, err, 2, Hl * (c->nope + c->vhd), c->kv_lora, 0,
	                   "model.layers.%lld.self_attn.kv_b_proj.weight", L)) ||
	    (rv = ref_getf(s, &w->o, false, err, 2, c->hid, Hl * c->vhd, 0,
	                   "model.layers.%lld.self_attn.o_proj.weight", L)))
		return rv;
	return WT_OK;
}

/* Causal attention over the split q/k parts; out [T, Hl*vhd]. */
static void mla_attend(const ref_cfg *c, int64_t T, int64_t Hl, const float *qn, const float *qp,
                       const float *kv, const float *kp, float *out)
{
	int64_t nope = c->nope, rope = c->rope, vhd = c->vhd, kvw = Hl * (nope + vhd);
	/* DeepSeek's YaRN multiplies it by mscale^2 (cfg_rope.c) */
	float scale =
	    c->attn_scale > 0.0 ? (float)c->attn_scale : 1.0f / sqrtf((float)(nope + rope));
	float p[REF_MAX_TOKENS];
	for (int64_t h = 0; h < Hl; h++) {
		for (int64_t t = 0; t < T; t++) {
			const float *qnr = qn + (t * Hl + h) * nope,
			            *qpr = qp + (t * Hl + h) * rope;
			float mx = -INFINITY, sum = 0.0f;
			for (int64_t s = 0; s <= t; s++) {
				const float *knr = kv + s * kvw + h * (nope + vhd),
				            *kpr = kp + s * rope;
				float a = 0.0f, b = 0.0f;
				for (int64_t i = 0; i < nope; i++)
					a += qnr[i] * knr[i];
				for (int64_t i = 0; i < rope; i++)
					b += qpr[i] * kpr[i];
				p[s] = (a + b) * scale;
				if (p[s] > mx)
					mx = p[s];
			}
			for (int64_t s = 0; s <= t; s++) {
				p[s] = expf(p[s] - mx);
				sum += p[s];
			}
			float *o = out + t * Hl * vhd + h * vhd;
			for (int64_t i = 0; i < vhd; i++)
				o[i] = 0.0f;
			for (int64_t s = 0; s <= t; s++) {
				const float *vr = kv + s * kvw + h * (nope + vhd) + nope;
				float ps = p[s] / sum;
				for (int64_t i = 0; i < vhd; i++)
					o[i] += ps * vr[i];
			}
		}
	}
}

int ref_mla(const ref_cfg *c, ref_set *s, int64_t l, int64_t Hl, const float *h, int64_t T,
            float *out, wt_errbuf *err)
{
	mla_w w;
	int rv = mla_weights(c, s, l, Hl, &w, err);
	if (rv != WT_OK)
		return rv;
	int64_t qk = c->nope + c->rope, kva = c->kv_lora + c->rope,
	        lat = c->q_lora > 0 ? c->q_lora : 0;
	size_t n = (size_t)T * (size_t)(lat + Hl * qk + kva + c->kv_lora + Hl * (c->nope + c->vhd) +
	                                Hl * c->nope + Hl * c->rope + c->rope + Hl * c->vhd);
	float *buf = malloc((n ? n : 1) * sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld MLA: out of memory", (long long)l);
	float *qa = buf, *q = qa + T * lat, *ka = q + T * Hl * qk, *lnk = ka + T * kva,
	      *kv = lnk + T * c->kv_lora, *qn = kv + T * Hl * (c->nope + c->vhd),
	      *qp = qn + T * Hl * c->nope, *kp = qp + T * Hl * c->rope, *att = kp + T * c->rope;
	if (c->q_lora > 0) {
		ref_linear(qa, h, w.q_a, NULL, T, c->hid, lat);
		ref_rmsnorm(qa, qa, w.q_ln, T, lat, mla_latent_eps(c));
		ref_linear(q, qa, w.q_b, NULL, T, lat, Hl * qk);
	} else {
		ref_linear(q, h, w.q_b, NULL, T, c->hid, Hl * qk);
	}
	ref_linear(ka, h, w.kv_a, NULL, T, c->hid, kva);
	for (int64_t t = 0; t < T; t++) {
		memcpy(lnk + t * c->kv_lora, ka + t * kva, (size_t)c->kv_lora * sizeof(float));
		memcpy(kp + t * c->rope, ka + t * kva + c->kv_lora,
		       (size_t)c->rope * sizeof(float));
		for (int64_t j = 0; j < Hl; j++) {
			memcpy(qn + (t * Hl + j) * c->nope, q + (t * Hl + j) * qk,
			       (size_t)c->nope * sizeof(float));
			memcpy(qp + (t * Hl + j) * c->rope, q + (t * Hl + j) * qk + c->nope,
			       (size_t)c->rope * sizeof(float));
		}
	}
	ref_rmsnorm(lnk, lnk, w.kv_ln, T, c->kv_lora, mla_latent_eps(c));
	ref_linear(kv, lnk, w.kv_b, NULL, T, c->kv_lora, Hl * (c->nope + c->vhd));
	if (c->rope_interleave) {
		ref_rope_deinterleave(qp, T, Hl, c->rope, Hl * c->rope);
		ref_rope_deinterleave(kp, T, 1, c->rope, c->rope);
	}
	ref_rope_mla(c, qp, T, Hl, Hl * c->rope);
	ref_rope_mla(c, kp, T, 1, c->rope);
	ref_ml3_scale_q(c, qn, qp, T, Hl); /* llama_4_scaling: after RoPE, as vLLM */
	mla_attend(c, T, Hl, qn, qp, kv, kp, att);
	ref_linear(out, att, w.o, NULL, T, Hl * c->vhd, c->hid);
	free(buf);
	return WT_OK;
}

void ref_route_ds(const ref_cfg *c, const float *logits, const float *bias, const int64_t *forced,
                  int64_t *idx, float *w)
{
	int64_t E = c->E, G = c->n_group, gs = E / G;
	float sc[REF_MAX_EXPERTS], ch[REF_MAX_EXPERTS], gscore[REF_MAX_EXPERTS]; /* G <= E */
	/* ERNIE 4.5: softmax, chosen with the correction bias; DeepSeek-MoE: V2's */
	const bool soft = c->ds_v2 || c->ernie || c->ds_moe || c->ml3; /* Mistral-Large-3: V2's */
	if (soft)
		ref_softmax(sc, logits, E);
	for (int64_t e = 0; e < E; e++) {
		if (!soft)
			sc[e] = 1.0f / (1.0f + expf(-logits[e]));
		ch[e] = sc[e] + (bias ? bias[e] : 0.0f);
	}
	/* group score: V3 the sum of the two best choice scores of the group, V2
	 * (group_limited_greedy) the best */
	for (int64_t g = 0; g < G; g++) {
		float b1 = -INFINITY, b2 = -INFINITY;
		for (int64_t e = g * gs; e < (g + 1) * gs; e++) {
			if (ch[e] > b1) {
				b2 = b1;
				b1 = ch[e];
			} else if (ch[e] > b2) {
				b2 = ch[e];
			}
		}
		gscore[g] = gs > 1 && !c->ds_v2 && !c->ds_moe && !c->ml3 ? b1 + b2 : b1;
	}
	ref_eset keep = {0}; /* the topk_group best groups */
	for (int64_t k = 0; k < c->topk_group; k++) {
		int64_t best = -1;
		for (int64_t g = 0; g < G; g++)
			if (!ref_eset_has(&keep, g) && (best < 0 || gscore[g] > gscore[best]))
				best = g;
		ref_eset_add(&keep, best);
	}
	ref_eset taken = {0};
	float wsum = 0.0f;
	for (int64_t j = 0; j < c->topk; j++) {
		int64_t best = forced ? forced[j] : -1;
		for (int64_t e = 0; !forced && e < E; e++) {
			if (ref_eset_has(&taken, e))
				continue;
			float v = ref_eset_has(&keep, e / gs) ? ch[e] : 0.0f;
			float bv =
			    best < 0 ? 0.0f : (ref_eset_has(&keep, best / gs) ? ch[best] : 0.0f);
			if (best < 0 || v > bv)
				best = e;
		}
		ref_eset_add(&taken, best);
		idx[j] = best;
		w[j] = sc[best];
		wsum += w[j];
	}
	for (int64_t j = 0; j < c->topk; j++) {
		if (c->ernie) /* Ernie4_5_MoeSparseMoeBlock: clamp(sum, min=moe_norm_min) */
			w[j] /= fmaxf(wsum, (float)c->norm_min);
		else if (c->norm_topk)
			w[j] /= wsum + 1e-20f;
		w[j] *= (float)c->routed_scale;
	}
}

int ref_moe_route(const ref_cfg *c, ref_set *s, bool ckpt, const char *m, const float *h,
                  const int64_t *forced, int64_t *idx, float *w, wt_errbuf *err)
{
	const float *router, *bias = NULL;
	float rl[REF_MAX_EXPERTS];
	int rv;
	if (c->gpt_oss) { /* mlp.router with a bias, in the checkpoint and on the ranks */
		if ((rv = ref_getf(s, &router, false, err, 2, c->E, c->hid, 0, "%srouter.weight",
		                   m)) ||
		    (rv = ref_getf(s, &bias, false, err, 1, c->E, 0, 0, "%srouter.bias", m)))
			return rv;
		ref_linear(rl, h, router, bias, 1, c->hid, c->E);
		ref_route_topk_softmax(rl, c->E, c->topk, forced, idx, w);
		return WT_OK;
	}
	/* GraniteMoE's checkpoint router is router.layer; the ranks carry Mixtral's gate */
	rv = ref_getf(s, &router, false, err, 2, c->E, c->hid, 0, "%s%s.weight", m,
	              ckpt && c->stacked_experts ? "router.layer"
	              : ckpt && c->hunyuan       ? "gate.wg" /* vLLM: mlp.gate */
	              : c->jamba || c->aria      ? "router"  /* *.router, both */
	                                         : "gate");
	if (rv == WT_OK && c->m2) /* MiniMaxM2MoE: beside the gate, [E] */
		rv = ref_getf(s, &bias, false, err, 1, c->E, 0, 0, "%se_score_correction_bias", m);
	else if (rv == WT_OK && c->lfm2_bias) /* LFM2-MoE: vLLM's rename of expert_bias */
		rv = ref_getf(s, &bias, false, err, 1, c->E, 0, 0, "%s%s", m,
		              ckpt ? "expert_bias" : "gate.e_score_correction_bias");
	else if (rv == WT_OK && c->ernie) /* Ernie4_5_MoeStatics: [1, E] */
		rv = ref_getf(s, &bias, false, err, 2, 1, c->E, 0,
		              "%smoe_statics.e_score_correction_bias", m);
	else if (rv == WT_OK && ((c->kind == REF_DEEPSEEK && !c->ds_v2 && !c->ml3) || c->nh))
		rv = ref_getf(s, &bias, !c->nh, err, 1, c->E, 0, 0,
		              "%sgate.e_score_correction_bias", m);
	if (rv != WT_OK)
		return rv;
	ref_linear(rl, h, router, NULL, 1, c->hid, c->E);
	ref_gk_router_cap(c, rl, c->E);                               /* Grok-1: 30 tanh(x / 30) */
	if (c->kind == REF_DEEPSEEK || c->m2 || c->nh || c->lfm2_moe) /* Nemotron-H: V3's */
		ref_route_ds(c, rl, bias, forced, idx, w);
	else if (c->phimoe)
		ref_route_sparsemixer(rl, c->E, c->jitter_eps, forced, idx, w, idx + c->topk);
	else
		ref_route(rl, c->E, c->topk, c->norm_topk, forced, idx, w);
	return WT_OK;
}

int ref_shared_gate(const ref_cfg *c, ref_set *s, const char *m, const float *h, char *name,
                    size_t cap, float *gate, wt_errbuf *err)
{
	const bool ds = c->kind == REF_DEEPSEEK || c->nh; /* Nemotron-H: shared_experts. */
	*gate = 1.0f;
	if (c->stacked_experts) { /* GraniteMoeShared: model.layers.{i}.shared_mlp., no gate */
		size_t n = strlen(m), k = strlen("block_sparse_moe.");
		snprintf(name, cap, "%.*sshared_mlp.", (int)(n > k ? n - k : 0), m);
		return WT_OK;
	}
	if (c->hunyuan || c->aria || c->bailing) { /* shared_mlp. / shared_experts., ungated */
		snprintf(name, cap, "%s%s", m, c->hunyuan ? "shared_mlp." : "shared_experts.");
		return WT_OK;
	}
	snprintf(name, cap, "%s%s", m, ds ? "shared_experts." : "shared_expert.");
	if (ds || c->llama4) /* Llama 4's shared expert is added ungated */
		return WT_OK;
	const float *sg;
	int rv = ref_getf(s, &sg, false, err, 2, 1, c->hid, 0, "%sshared_expert_gate.weight", m);
	if (rv != WT_OK)
		return rv;
	float gl;
	ref_linear(&gl, h, sg, NULL, 1, c->hid, 1);
	*gate = 1.0f / (1.0f + expf(-gl));
	return WT_OK;
}
