/*
 * reference_shard.c — the sharded reference forward pass: the same math as
 * reference.c, computed from the per-rank runtime tensors of a layout the way
 * a TP/EP engine runs it (docs/format.md section 2):
 *
 *  - vocab-parallel embedding: rank r looks up rows of its padded range
 *    [r*Vl, (r+1)*Vl), zero otherwise, then all-reduce;
 *  - attention: each rank its heads from the fused qkv_proj [q_r; k_r; v_r]
 *    (kv replication when KV < T), its o_proj column slice, all-reduce;
 *    OLMo 2's q_norm / k_norm over all heads: each rank's sums of squares of its
 *    q and k rows all-reduced first, then each rank normalises its rows with
 *    its slice of the replicated weights;
 *  - MLP: gate_up_proj [gate_r; up_r], down_proj column slice, all-reduce
 *    (StarCoder2: c_fc row slice with its bias, c_proj columns, c_proj bias once);
 *  - MoE: experts from the w13_weight/w2_weight stacks (w13_order, EP
 *    ownership count/start), all-reduce over EP ranks; the shared expert is
 *    TP-split like an MLP;
 *  - GPT-OSS (gpt_oss.c): each rank's sinks [Hl] for its heads; experts with
 *    w13_bias / w2_bias, the row-parallel w2_bias added once per expert output;
 *  - Llama 4 (llama4.c): RoPE, L2 q/k norms or the NoPE temperature on each rank's
 *    own heads; every rank scales an expert's input by its own router's score, then
 *    runs its slice (TP) or its whole experts (EP); shared expert TP-split, ungated;
 *  - LM head: rank logits concatenated, padding rows >= V dropped.
 *
 * Every all-reduce sums ranks in increasing order; row-parallel biases are
 * added once after the sum. Each rank normalises with its own replicated norm
 * weights and routes with its own router copy, so a wrong replica shows too.
 * Gemma 2/3's and OLMo 2's norms after the all-reduce (post_attention_layernorm,
 * post_feedforward_layernorm; GLM-4-0414's post_self_attn_layernorm,
 * post_mlp_layernorm) run on every rank of an engine; the reference
 * takes the mean of the ranks' results. The Gemma switches of ref_cfg apply
 * as in the full path (reference.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/afmoe.h"
#include "reference/decilm.h"
#include "reference/grok1.h"
#include "reference/mimo_v2.h"
#include "reference/pangu_sink.h"
#include "reference/ouro.h"
#include "reference/shard_int.h"
#include "reference/solar.h"
#include "reference/step3.h"

/* Index of the first kv head tp rank r holds, in units of KVl (kv heads replicated
 * over T / KV ranks when KV < T). */
static int64_t kv_shard(const shard *s, uint32_t r)
{
	int64_t KV = s->c->KV, T = (int64_t)s->T;
	return KV >= T ? (int64_t)r : (int64_t)r / (T / KV);
}

/* Rank rs's input of layer l's attention into b.h, and its q, k, v rows into b.q, b.k,
 * b.v from the fused qkv_proj [q_r ; k_r ; v_r]. */
static int qkv_rank(shard *s, ref_set *rs, int64_t l)
{
	const ref_cfg *c = s->c;
	ref_bufs *b = &s->b;
	int64_t T = s->n_tok, d = c->d, Hl = s->Hl, KVl = s->KVl, rows = (Hl + 2 * KVl) * d;
	const float *w, *bias;
	int rv;
	if ((rv = ref_block_input(c, rs, b->h, b->x, T, l, ref_attn_norm(c), s->err)) ||
	    (rv = ref_getf(rs, &w, false, s->err, 2, rows, c->hid, 0,
	                   "model.layers.%lld.self_attn.qkv_proj.weight", (long long)l)) ||
	    (rv = ref_getf(rs, &bias, true, s->err, 1, rows, 0, 0,
	                   "model.layers.%lld.self_attn.qkv_proj.bias", (long long)l)))
		return rv;
	ref_linear(b->q, b->h, w, bias, T, c->hid, Hl * d);
	ref_linear(b->k, b->h, w + Hl * d * c->hid, bias ? bias + Hl * d : NULL, T, c->hid,
	           KVl * d);
	ref_linear(b->v, b->h, w + (Hl + KVl) * d * c->hid, bias ? bias + (Hl + KVl) * d : NULL, T,
	           c->hid, KVl * d);
	ref_fh1_qkv(c, b->q, b->k, b->v, T * Hl * d, T * KVl * d);
	return WT_OK;
}

/*
 * OLMo 2's q_norm / k_norm span all heads, so their mean squares need every rank's
 * heads: each rank's sums of squares of its q and k rows, all-reduced in rank order,
 * into s->ms_q / s->ms_k per token. When KV < T each kv head sits on T / KV ranks,
 * so the k sum is divided by that count (every replica adds its share: a wrong
 * replica still shows).
 */
static int qk_mean_squares(shard *s, int64_t l)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok, nq = s->Hl * c->d, nk = s->KVl * c->d;
	float ssq[REF_MAX_TOKENS] = {0}, ssk[REF_MAX_TOKENS] = {0};
	for (uint32_t r = 0; r < s->T; r++) {
		int rv = qkv_rank(s, rank_set(s, r, s->g), l);
		if (rv != WT_OK)
			return rv;
		for (int64_t t = 0; t < T; t++) {
			float pq = 0.0f, pk = 0.0f; /* this rank's partial sums */
			for (int64_t i = 0; i < nq; i++)
				pq += s->b.q[t * nq + i] * s->b.q[t * nq + i];
			for (int64_t i = 0; i < nk; i++)
				pk += s->b.k[t * nk + i] * s->b.k[t * nk + i];
			ssq[t] += pq;
			ssk[t] += pk;
		}
	}
	float rep = c->KV >= (int64_t)s->T ? 1.0f : (float)((int64_t)s->T / c->KV);
	for (int64_t t = 0; t < T; t++) {
		s->ms_q[t] = ssq[t] / (float)(c->H * c->d);
		s->ms_k[t] = ssk[t] / rep / (float)(c->KV * c->d);
	}
	return WT_OK;
}

/* x[t] = x[t] / sqrt(ms[t] + eps) * (norm_off + w): rows of n with all-reduced mean squares. */
static void norm_rows(const ref_cfg *c, float *x, const float *w, const float *ms, int64_t T,
                      int64_t n)
{
	for (int64_t t = 0; t < T; t++) {
		float inv = 1.0f / sqrtf(ms[t] + (float)c->eps);
		for (int64_t i = 0; i < n; i++)
			x[t * n + i] = x[t * n + i] * inv * (c->norm_off + w[i]);
	}
}

/* Command R+'s per-head q_norm [Hl, d] / k_norm [KVl, d] (LayerNorms; PLaMo 2's RMSNorms) of
 * rank set rs on b.q, b.k: the planner's rows of the rank's own q heads and kv heads. */
static int cohere_qk_norm(shard *s, ref_set *rs, int64_t l)
{
	const ref_cfg *c = s->c;
	const float *qn, *kn;
	int rv;
	if ((rv = ref_getf(rs, &qn, false, s->err, 2, s->Hl, c->d, 0,
	                   "model.layers.%lld.self_attn.q_norm.weight", (long long)l)) ||
	    (rv = ref_getf(rs, &kn, false, s->err, 2, s->KVl, c->d, 0,
	                   "model.layers.%lld.self_attn.k_norm.weight", (long long)l)))
		return rv;
	if (c->plamo2) { /* RMSNorms */
		ref_p2_head_norm(c, s->b.q, qn, s->n_tok, s->Hl);
		ref_p2_head_norm(c, s->b.k, kn, s->n_tok, s->KVl);
		return WT_OK;
	}
	ref_head_layernorm(c, s->b.q, qn, s->n_tok, s->Hl);
	ref_head_layernorm(c, s->b.k, kn, s->n_tok, s->KVl);
	return WT_OK;
}

/* q_norm / k_norm of rank r on b.q, b.k: per head of d, or OLMo 2's full-width norms,
 * replicated [H*d] / [KV*d] on every rank, with the rank's slice of the weights and
 * the all-reduced mean squares (qk_mean_squares). */
static int qk_norm_rank(shard *s, uint32_t r, int64_t l)
{
	const ref_cfg *c = s->c;
	ref_set *rs = rank_set(s, r, s->g);
	if (c->cohere || c->plamo2) /* [Hl, d] / [KVl, d]: the rank's heads' rows */
		return cohere_qk_norm(s, rs, l);
	int64_t T = s->n_tok, d = c->d, Hl = s->Hl, KVl = s->KVl;
	int64_t qnd = c->qk_norm_full ? c->H * d : d, knd = c->qk_norm_full ? c->KV * d : d;
	if (c->m2) {
		qnd = Hl * d;
		knd = KVl * d;
	}
	const float *qn, *kn;
	int rv;
	if ((rv = ref_getf(rs, &qn, false, s->err, 1, qnd, 0, 0,
	                   "model.layers.%lld.self_attn.%s.weight", (long long)l,
	                   ref_qk_norm_leaf(c, false))) ||
	    (rv = ref_getf(rs, &kn, false, s->err, 1, knd, 0, 0,
	                   "model.layers.%lld.self_attn.%s.weight", (long long)l,
	                   ref_qk_norm_leaf(c, true))))
		return rv;
	if (!c->qk_norm_full) {
		ref_norm(c, s->b.q, s->b.q, qn, T * Hl, d);
		ref_norm(c, s->b.k, s->b.k, kn, T * KVl, d);
		return WT_OK;
	}
	bool own = c->m2; /* MiniMax-M2: the rank holds its own heads' channels */
	norm_rows(c, s->b.q, qn + (own ? 0 : (int64_t)r * Hl * d), s->ms_q, T, Hl * d);
	norm_rows(c, s->b.k, kn + (own ? 0 : kv_shard(s, r) * KVl * d), s->ms_k, T, KVl * d);
	return WT_OK;
}

/* One TP rank's attention partial (before o_proj's all-reduce) into b.o. */
static int attn_rank(shard *s, uint32_t r, int64_t l)
{
	const ref_cfg *c = s->c;
	ref_set *rs = rank_set(s, r, s->g);
	ref_bufs *b = &s->b;
	int64_t T = s->n_tok, d = c->d, Hl = s->Hl, KVl = s->KVl;
	long long L = (long long)l;
	const float *wo;
	int rv;
	if (c->lfm2) { /* its heads or channels; out_proj's bias on rank 0 */
		const ref_lfm2_part p = {.out_bias = r == 0,
		                         .Hl = Hl,
		                         .KVl = KVl,
		                         .q0 = (int64_t)r * Hl,
		                         .kv0 = kv_shard(s, r) * KVl,
		                         .ch = c->hid / (int64_t)s->T};
		if ((rv = ref_block_input(c, rs, b->h, b->x, T, l, ref_attn_norm(c), s->err)))
			return rv;
		return ref_lfm2_mixer(c, rs, l, &p, b->h, T, b->o, s->err);
	}
	if (c->mimo_v2 || c->pv2) { /* each layer's own heads (mimo_v2.c), the sinks' */
		if ((rv = ref_block_input(c, rs, b->h, b->x, T, l, ref_attn_norm(c), s->err)))
			return rv;
		return c->pv2 ? ref_pv2_attn(c, rs, l, (int64_t)r, (int64_t)s->T, b->h, T, b->o,
		                             s->err)
		              : ref_mv_attn(c, rs, l, (int64_t)r, (int64_t)s->T, b->h, T, b->o,
		                            s->err);
	}
	if (ref_is_mla(c) || c->q3n || c->afmoe || c->step3) { /* AFMoE: gate_proj rows too */
		const ref_q3n_part p = {.Hl = Hl,
		                        .KVl = KVl,
		                        .q0 = (int64_t)r * Hl,
		                        .kv0 = kv_shard(s, r) * KVl,
		                        .hk = c->lin_hk / (int64_t)s->T};
		if ((rv = ref_block_input(c, rs, b->h, b->x, T, l, ref_attn_norm(c), s->err)))
			return rv;
		return c->q3n     ? ref_q3n_mixer(c, rs, l, &p, b->h, T, b->o, s->err)
		       : c->afmoe ? ref_afmoe_attn(c, rs, l, &p, b->h, T, b->o, s->err)
		       : c->step3 ? ref_step3_attn(c, rs, l, &p, b->h, T, b->o, s->err)
		                  : ref_mla(c, rs, l, Hl, b->h, T, b->o, s->err);
	}
	if ((rv = qkv_rank(s, rs, l)) ||
	    (rv = ref_getf(rs, &wo, false, s->err, 2, c->hid, Hl * d, 0,
	                   "model.layers.%lld.self_attn.o_proj.weight", L)) ||
	    (c->qk_norm && !c->hunyuan && (rv = qk_norm_rank(s, r, l))) ||
	    (c->ps_qkln && (rv = ref_persimmon_qk(c, rs, l, b->q, b->k, T, Hl, s->err))) ||
	    (c->chameleon && (rv = ref_chameleon_qk(c, rs, l, b->q, b->k, T, Hl, KVl, s->err))))
		return rv;
	ref_clip_qkv(c, b->q, T * Hl * d); /* OLMo 1, OLMoE: each rank its own heads */
	ref_clip_qkv(c, b->k, T * KVl * d);
	ref_clip_qkv(c, b->v, T * KVl * d);
	double theta, factor;
	ref_attn_opt ao;
	ref_layer_attn(c, l, &theta, &factor, &ao);
	if ((rv = ref_gpt_oss_sinks(c, rs, l, Hl, &ao, s->err))) /* the rank's [Hl] */
		return rv;
	float slopes[REF_MAX_HEADS];
	if ((c->mpt || c->bloom || c->fl_alibi || c->bc_alibi || c->jais_alibi) &&
	    c->H <= REF_MAX_HEADS) { /* ALiBi: the rank's heads r*Hl.. of all H */
		ref_alibi_slopes(c, slopes);
		ao.alibi = slopes + (int64_t)r * Hl;
	}
	if (c->llama4) { /* per head: each rank its own */
		ref_llama4_qk(c, l, b->q, b->k, T, Hl, KVl);
	} else {
		ref_rope_layer(c, l, b->q, T, Hl, Hl * d);
		ref_rope_layer(c, l, b->k, T, KVl, KVl * d);
	}
	if (c->qk_norm && c->hunyuan && (rv = qk_norm_rank(s, r, l))) /* after RoPE */
		return rv;
	/* local q head j is global head r*Hl + j; its kv head is global / (H/KV), held
	 * locally at index global_kv - kv_shard*KVl */
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t j = 0; j < Hl; j++) {
		int64_t gkv = ((int64_t)r * Hl + j) / (c->H / c->KV);
		kv_of[j] = gkv - kv_shard(s, r) * KVl;
		if (kv_of[j] < 0 || kv_of[j] >= KVl)
			return wt_seterr(
			    s->err, WT_ELAYOUT,
			    "layer %lld rank %u: head %lld needs kv head %lld, not among "
			    "the %lld this rank holds",
			    L, r, (long long)(r * Hl + j), (long long)gkv, (long long)KVl);
	}
	ref_attention(b->att, b->q, b->k, b->v, T, Hl, KVl, kv_of, d, &ao);
	ref_linear(b->o, b->att, wo, NULL, T, Hl * d, c->hid);
	return WT_OK;
}

/*
 * Gemma 2/3 / GLM-4-0414 norm `leaf` of layer l on the all-reduced b.acc, in place. Each TP
 * rank of an engine normalises the sum with its own replica; the reference
 * takes the mean of the T results, so a wrong replica on any rank shows (for
 * equal replicas the mean is their value up to the rounding of the sum).
 */
int ref_shard_post_norm_mean(shard *s, int64_t l, const char *leaf)
{
	const ref_cfg *c = s->c;
	int64_t n = s->n_tok * c->hid;
	memset(s->b.part, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T; r++) {
		const float *w;
		int rv = ref_getf(rank_set(s, r, s->g), &w, false, s->err, 1, c->hid, 0, 0,
		                  "model.layers.%lld.%s.weight", (long long)l, leaf);
		if (rv != WT_OK)
			return rv;
		ref_norm(c, s->b.y, s->b.acc, w, s->n_tok, c->hid);
		for (int64_t i = 0; i < n; i++)
			s->b.part[i] += s->b.y[i] / (float)s->T;
	}
	memcpy(s->b.acc, s->b.part, (size_t)n * sizeof(float));
	return WT_OK;
}

static int attn(shard *s, int64_t l)
{
	if (ref_g4_mamba_layer(s->c, l) && !s->c->fh1)
		return ref_shard_g4_mamba(s, l);
	if (ref_mm_lin(s->c, l))
		return ref_shard_mm_lightning(s, l);
	if (ref_jb_mamba_layer(s->c, l))
		return ref_shard_jb_mamba(s, l);
	if (ref_p2_mamba_layer(s->c, l))
		return ref_shard_p2_mamba(s, l);
	const ref_cfg *c = s->c;
	int64_t n = s->n_tok * c->hid;
	const float *bo;
	int rv;
	/* Falcon-H1: the Mamba mixer first, into b.y (times ssm_out_multiplier) */
	if (ref_g4_mamba_layer(c, l) && (rv = ref_shard_g4_mamba(s, l)) != WT_OK)
		return rv;
	if (c->qk_norm_full && (rv = qk_mean_squares(s, l)) != WT_OK)
		return rv;
	memset(s->b.acc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T; r++) {
		if ((rv = attn_rank(s, r, l)) != WT_OK)
			return rv;
		add_into(s->b.acc, s->b.o, n);
	}
	if ((rv = ref_getf(rank_set(s, 0, s->g), &bo, true, s->err, 1, c->hid, 0, 0,
	                   "model.layers.%lld.self_attn.o_proj.bias", (long long)l)))
		return rv;
	for (int64_t t = 0; bo && t < s->n_tok; t++)
		add_into(s->b.acc + t * c->hid, bo, c->hid);
	ref_gk_attn_mult(c, s->b.acc, n); /* Grok-1: before post_attn_norm */
	if (c->sandwich && (rv = ref_shard_post_norm_mean(s, l, ref_post_norm(c, false))))
		return rv;
	/* the parallel block (Cohere; GPT-NeoX's parallel residual): x is the MLP's input too;
	 * added after it */
	if (c->cohere || c->neox_par) {
		memcpy(s->b.y, s->b.acc, (size_t)n * sizeof(float));
	} else if (ref_arctic_res(c, l)) { /* added after the MoE and residual MLP (arctic.c) */
		memcpy(s->b.sc, s->b.acc, (size_t)n * sizeof(float));
	} else {
		ref_mm_resid(c, s->b.x, s->b.h, n, l, false); /* MiniMax: alpha * norm(x) */
		ref_fh1_sum(c, s->b.acc, s->b.y, n);          /* Falcon-H1: + the Mamba mixer */
		ref_residual_add(c, s->b.x, s->b.acc, n);
	}
	return WT_OK;
}

/* StarCoder2's plain MLP slice of rank rs: c_fc rows (bias with them), c_proj columns;
 * the replicated c_proj bias is added after the all-reduce (add_down_bias). */
static int plain_rank(shard *s, ref_set *rs, const char *m, const float *h, float *y)
{
	const ref_cfg *c = s->c;
	int64_t Il = c->I / s->T;
	const float *w1, *b1, *w2;
	int rv;
	if ((rv = ref_getf(rs, &w1, false, s->err, 2, Il, c->hid, 0, "%sc_fc.weight", m)) ||
	    (rv = ref_getf(rs, &b1, true, s->err, 1, Il, 0, 0, "%sc_fc.bias", m)) ||
	    (rv = ref_getf(rs, &w2, false, s->err, 2, c->hid, Il, 0, "%sc_proj.weight", m)))
		return rv;
	ref_mlp_plain(y, h, s->n_tok, c->hid, Il, w1, b1, w2, c->act, s->b.scratch);
	return WT_OK;
}

/* JAIS's MLP on rank rs: its rows of c_fc2 (gate_proj) and c_fc (up_proj), apart as vLLM
 * keeps them, down_proj's columns; act(gate) * up (silu on c_fc2). */
static int jais_mlp_rank(shard *s, ref_set *rs, const char *m, int64_t Il, int64_t T,
                         const float *h, float *y)
{
	const ref_cfg *c = s->c;
	const float *wg, *bg, *wu, *bu, *wd;
	int rv;
	if ((rv = ref_getf(rs, &wg, false, s->err, 2, Il, c->hid, 0, "%sgate_proj.weight", m)) ||
	    (rv = ref_getf(rs, &bg, true, s->err, 1, Il, 0, 0, "%sgate_proj.bias", m)) ||
	    (rv = ref_getf(rs, &wu, false, s->err, 2, Il, c->hid, 0, "%sup_proj.weight", m)) ||
	    (rv = ref_getf(rs, &bu, true, s->err, 1, Il, 0, 0, "%sup_proj.bias", m)) ||
	    (rv = ref_getf(rs, &wd, false, s->err, 2, c->hid, Il, 0, "%sdown_proj.weight", m)))
		return rv;
	ref_ffn(y, h, T, c->hid, Il, wg, bg, wu, bu, wd, c->act, s->b.scratch);
	return WT_OK;
}

int ref_shard_mlp_rank(shard *s, ref_set *rs, const char *m, int64_t n_inter, int64_t T,
                       const float *h, float *y)
{
	const ref_cfg *c = s->c;
	int64_t Il = n_inter / s->T;
	const float *gu, *bgu, *wd;
	int rv;
	const char *gul = ref_gate_up_leaf(c), *dl = ref_down_leaf(c);
	if (c->jais) /* c_fc2 (gate) and c_fc (up): two ColumnParallelLinear, Il rows each */
		return jais_mlp_rank(s, rs, m, Il, T, h, y);
	if ((rv = ref_getf(rs, &gu, false, s->err, 2, 2 * Il, c->hid, 0, "%s%s.weight", m, gul)) ||
	    (rv = ref_getf(rs, &bgu, true, s->err, 1, 2 * Il, 0, 0, "%s%s.bias", m, gul)) ||
	    (rv = ref_getf(rs, &wd, false, s->err, 2, c->hid, Il, 0, "%s%s.weight", m, dl)))
		return rv;
	ref_ffn_mult(y, h, T, c->hid, Il, gu, bgu, gu + Il * c->hid, bgu ? bgu + Il : NULL, wd,
	             c->act, s->b.scratch, c->fh1 ? c->fh1_gate : 1.0f,
	             c->fh1 ? c->fh1_down : 1.0f); /* Falcon-H1's mlp_multipliers */
	return WT_OK;
}

/* Add the row-parallel down_proj bias of module m (rank (0, g)) once. */
static int add_down_bias(shard *s, const char *m)
{
	const float *bd;
	int rv = ref_getf(rank_set(s, 0, s->g), &bd, true, s->err, 1, s->c->hid, 0, 0, "%s%s.bias",
	                  m, s->c->plain_mlp ? "c_proj" : "down_proj");
	for (int64_t t = 0; rv == WT_OK && bd && t < s->n_tok; t++)
		add_into(s->b.acc + t * s->c->hid, bd, s->c->hid);
	return rv;
}

static int mlp(shard *s, int64_t l)
{
	char m[160];
	int rv;
	int64_t n = s->n_tok * s->c->hid;
	snprintf(m, sizeof(m), "model.layers.%lld.%s", (long long)l, ref_ffn_module(s->c));
	memset(s->b.acc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < s->T; r++) {
		ref_set *rs = rank_set(s, r, s->g);
		if ((rv = shard_post_norm(s, rs, l)))
			return rv;
		if (s->c->plain_mlp)
			rv = plain_rank(s, rs, m, s->b.h, s->b.o);
		else if (s->c->nogate) /* up_proj rows, down_proj columns of the rank */
			rv = ref_nogate_mlp(s->c, rs, m, s->c->I / s->T, s->n_tok, s->b.h, s->b.o,
			                    s->b.scratch, s->err);
		else
			rv = ref_shard_mlp_rank(s, rs, m, s->c->I, s->n_tok, s->b.h, s->b.o);
		if (rv != WT_OK)
			return rv;
		add_into(s->b.acc, s->b.o, n);
	}
	return add_down_bias(s, m);
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Qwen3-Next's gated delta net splits by key heads and value heads: each a multiple of
 * the tp size when a layer is linear attention. */
static bool q3n_fits(const ref_cfg *c, int64_t T)
{
	for (int64_t i = 0; i < c->L; i++)
		if (ref_q3n_linear(c, i))
			return c->lin_hk % T == 0 && c->lin_hv % T == 0;
	return true;
}

/* Granite 4.0's Mamba mixer splits by heads, and by groups unless there is one (vLLM's
 * MambaMixer2), when a layer is Mamba. */
static bool g4_fits(const ref_cfg *c, int64_t T)
{
	for (int64_t i = 0; i < c->L; i++)
		if (ref_g4_mamba_layer(c, i))
			return c->m_heads % T == 0 && (c->m_groups % T == 0 || c->m_groups == 1);
	return true;
}

/* Whether layout tp s->T x ep s->P (group) fits c, as the planner checks it: an error naming
 * the sizes when not. */
static int layout_fits(const ref_cfg *c, const shard *s, uint32_t group, uint32_t vocab_pad,
                       wt_errbuf *err)
{
	int64_t T = s->T;
	/* Mamba: no attention, so no head counts to divide (its one placeholder head); tp 0
	 * is refused before a head count is divided by it */
	bool heads_fit =
	    T >= 1 && (c->mamba_lm || (c->H % T == 0 && (c->KV % T == 0 || T % c->KV == 0)));
	if (T < 1 || s->P < 1 || group >= s->P || vocab_pad < 1 || !heads_fit || c->I % T != 0 ||
	    c->H > REF_MAX_HEADS || (c->E > 0 && s->P == 1 && (c->Ie % T != 0 || c->Is % T != 0)) ||
	    (s->P > 1 && (c->E == 0 || (int64_t)s->P > c->E)))
		return wt_seterr(
		    err, WT_ELAYOUT,
		    "layout tp %u ep %u (group %u) does not fit heads %lld, kv heads "
		    "%lld, intermediate %lld, experts %lld; the planner refuses it too",
		    s->T, s->P, group, (long long)c->H, (long long)c->KV, (long long)c->I,
		    (long long)c->E);
	if (c->g4 && !g4_fits(c, T))
		return wt_seterr(err, WT_ELAYOUT,
		                 "layout tp %u does not fit the Mamba mixer's %lld heads and %lld "
		                 "groups; the planner refuses it too",
		                 s->T, (long long)c->m_heads, (long long)c->m_groups);
	if ((c->jamba && c->m_inner % T != 0) || (c->plamo2 && c->m_heads % T != 0))
		return wt_seterr(err, WT_ELAYOUT,
		                 "layout tp %u does not fit the Mamba mixer's %lld channels (%lld "
		                 "heads); the planner refuses it too",
		                 s->T, (long long)c->m_inner, (long long)c->m_heads);
	if (!q3n_fits(c, T))
		return wt_seterr(err, WT_ELAYOUT,
		                 "layout tp %u does not fit the gated delta net's %lld key heads "
		                 "and %lld value heads; the planner refuses it too",
		                 s->T, (long long)c->lin_hk, (long long)c->lin_hv);
	return WT_OK;
}

/* GPT-NeoX, Phi (neox.c), DBRX, MPT (dbrx.c), LongCat-Flash (longcat.c), GPT-2 (gpt2.c), Mamba
 * (mamba.c), GPT-J (gptj.c, then Phi's): every rank set under the names read here, then the
 * pass. */
static int sharded_neox(const ref_cfg *c, ref_set *ranks, const wt_layout *l, uint32_t group,
                        const int64_t *tokens, size_t n_tok, const int64_t *routes, float *logits,
                        wt_errbuf *err)
{
	size_t n = (size_t)l->tp_size * (l->ep_size ? l->ep_size : 1);
	ref_set *r = calloc(n ? n : 1, sizeof(*r));
	if (r == NULL)
		return wt_seterr(err, WT_ENOMEM, "reference forward: out of memory");
	int rv = WT_OK;
	/* GPT-J's names go to Phi's first (then this runs again for Phi's) */
	for (size_t i = 0; i < n && rv == WT_OK; i++)
		rv = ref_rename_own(c, &ranks[i], &r[i], false, err);
	if (rv == WT_OK)
		rv = ref_forward_sharded(c, r, l, group, tokens, n_tok, routes, logits, err);
	for (size_t i = 0; i < n; i++)
		ref_set_clear(&r[i]);
	free(r);
	return rv;
}

int ref_forward_sharded(const ref_cfg *c, ref_set *ranks, const wt_layout *l, uint32_t group,
                        const int64_t *tokens, size_t n_tok, const int64_t *routes, float *logits,
                        wt_errbuf *err)
{
	if (l->tp_size >= 1 && ref_own_names(c, &ranks[0]))
		return sharded_neox(c, ranks, l, group, tokens, n_tok, routes, logits, err);
	shard s = {.c = c,
	           .ranks = ranks,
	           .T = l->tp_size,
	           .P = l->ep_size,
	           .g = group,
	           .up_gate = l->w13_up_gate,
	           .n_tok = (int64_t)n_tok,
	           .routes = routes,
	           .err = err};
	ref_solar sk = {{NULL, NULL}};
	int rv = layout_fits(c, &s, group, l->vocab_pad, err);
	if (rv != WT_OK)
		return rv;
	int64_t T = s.T;
	s.Hl = c->H / T;
	s.KVl = c->KV >= T ? c->KV / T : 1;
	int64_t pad = (int64_t)l->vocab_pad, lcm = pad / gcd64(pad, T) * T;
	s.Vl = (c->V + lcm - 1) / lcm * lcm / T;
	s.Vle = (ref_embed_rows(c) + lcm - 1) / lcm * lcm / T;
	rv = ref_bufs_alloc(&s.b, c, n_tok, tokens, err);
	if (rv != WT_OK)
		return rv;
	if (c->kind == REF_BERT && c->brope) {
		rv = ref_bert_rope_sharded(c, ranks, s.T, tokens, s.n_tok, &s.b, logits, err);
		goto out;
	}
	if (c->kind == REF_BERT && c->modernbert) {
		rv =
		    ref_modernbert_sharded(c, ranks, s.T, s.Vl, tokens, s.n_tok, &s.b, logits, err);
		goto out;
	}
	if (c->kind == REF_BERT) {
		rv = ref_bert_sharded(c, ranks, s.T, s.Vl, tokens, s.n_tok, &s.b, logits, err);
		goto out;
	}
	if (c->opt) { /* its own pass (opt.c) */
		rv = ref_opt_sharded(c, ranks, s.T, s.Vl, tokens, n_tok, logits, err);
		goto out;
	}
	if (c->whisper) { /* its own pass (whisper.c) */
		rv = ref_whisper_sharded(c, ranks, s.T, tokens, n_tok, logits, err);
		goto out;
	}
	if (c->g3n) { /* its own pass (gemma3n.c) */
		rv = ref_g3n_sharded(c, ranks, s.T, s.Vl, tokens, n_tok, logits, err);
		goto out;
	}
	if ((rv = ref_shard_embed(&s, tokens)))
		goto out;
	for (int64_t it = 0; it < c->L * ref_ouro_passes(c); it++) { /* Ouro: its loop steps */
		int64_t i = it % c->L;
		if (i == 0 && it > 0 &&
		    (rv = ref_ouro_step_norm_ranks(c, rank_set(&s, 0, s.g), s.T, s.b.x, s.b.y,
		                                   s.b.part, s.n_tok, err)))
			goto out;
		if (ref_ml_cross(c, i)) /* Mllama's cross-attention layer: skipped on text */
			continue;
		if ((rv = ref_solar_skip(c, &sk, s.b.x, s.n_tok * c->hid, i, err)))
			goto out; /* Solar's skips */
		ref_cfg lc;       /* DeciLM: the layer's own kv heads and MLP width (decilm.c) */
		s.c = ref_dl_layer(c, i, &lc);
		s.KVl = s.c->KV >= T ? s.c->KV / T : 1;
		if (!ref_nh_mlp(c, i) && ref_dl_attn(c, i) && (rv = attn(&s, i)))
			goto out;
		if (c->longcat && i % 2 == 0 && (rv = ref_shard_lc_moe(&s, i)))
			goto out;
		if (c->mamba_lm || (c->nh && !ref_nh_mlp(c, i)) || !ref_dl_ffn(c, i))
			continue; /* the mixer is the whole block; DeciLM's no-op ffn */
		if (ref_layer_is_moe(c, i))
			rv = ref_shard_moe(&s, i);
		else
			rv = mlp(&s, i);
		if (rv == WT_OK && ref_arctic_res(c, i))
			rv = ref_arctic_shard_residual(&s, i);
		if (rv == WT_OK && c->sandwich)
			rv = ref_shard_post_norm_mean(&s, i, ref_post_norm(c, true));
		if (rv)
			goto out;
		if (c->cohere || c->neox_par) /* (x + attn(h)) + mlp(h) */
			ref_residual_add(c, s.b.x, s.b.y, s.n_tok * c->hid);
		ref_mm_resid(c, s.b.x, s.b.h, s.n_tok * c->hid, i, true);
		ref_residual_add(c, s.b.x, s.b.acc, s.n_tok * c->hid);
		if ((c->longcat && i % 2 == 1) || ref_arctic_res(c, i)) /* Arctic: attention's */
			ref_residual_add(c, s.b.x, s.b.sc, s.n_tok * c->hid);
	}
	s.c = c;
	rv = ref_shard_lm_head(&s, logits);
out:
	ref_solar_free(&sk);
	ref_bufs_free(&s.b);
	return rv;
}
