/*
 * pangu_sink.c — openPangu-Pro-MoE-V2 (PanguProMoEV2ForCausalLM, model_type PanguProMoEV2; remote
 * code; vLLM's openpangu.py with OpenPanguSinkAttention; c->pv2, kind REF_DEEPSEEK with
 * glm4_moe): its config and its sink attention, for the full pass (the checkpoint) and the
 * sharded one (a tp rank) alike.
 *
 * The math followed (vLLM's OpenPanguSinkAttention and StaticSinkAttention), head_dim d =
 * qk_nope_dim + qk_rope_dim, v heads of v_channels:
 *
 *   q [H, d], k [KV, d], v [KV, v_channels] = x [q_proj; k_proj; v_proj]^T (+ biases);
 *   k = k_layernorm(k) per kv head (an RMSNorm over d at rms_norm_eps); RoPE at rope_theta on
 *   the first qk_rope_dim dims of each q / k head (get_rope with partial_rotary_factor
 *   qk_rope_dim / d), GPT-J's adjacent pairs with rope_interleave (default true: is_neox_style
 *   false), rotate-half without; the param_sink_number static sinks of each kv head (keys
 *   k_layernorm(param_sink_key), never rotated; values param_sink_value) sit before the tokens
 *   in the kv cache, so every query sees all of them and its causal tokens; softmax at d^-0.5;
 *   o_proj over H x v_channels columns (+ its bias).
 *
 * The sinks run through ref_attention as S leading rows of keys / values (their query rows
 * zero, their outputs dropped), the q / k / v heads zero-padded to the wider of d and
 * v_channels (zeros add nothing to q.k nor to the weighted sum of v). A rank holds its heads'
 * q / k / v rows fused in qkv_proj (no kv head replicated: vLLM refuses fewer kv heads than
 * ranks), o_proj's columns, its kv heads' sinks; o_proj's bias on rank 0 only: the caller sums
 * the ranks' outputs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/pangu_sink.h"
#include "reference/reference.h"

#define LAYER        "model.layers.%lld.self_attn."
#define PV2_MAX_DIM  1024 /* the widest q / k / v head the reference runs */
#define PV2_MAX_ROWS 64   /* ref_attention's rows: the sinks and the tokens together */

enum { P_SANDWICH, P_NOPE, P_ROPE, P_VC, P_SINKS, P_INTERLEAVE, P_THETA, P_COUNT };

static int pv2_fields(ref_cfg *c, const ckpt_field *f, wt_errbuf *err)
{
	for (int k = P_NOPE; k <= P_SINKS; k++)
		if (!f[k].present)
			return wt_seterr(err, WT_ECORRUPT, "config.json: %s is missing", f[k].key);
	if (!f[P_THETA].present)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: rope_theta is missing; vLLM's OpenPanguDecoderLayer "
		                 "reads config.rope_theta for the sink attention: give it");
	int64_t nope = f[P_NOPE].i, rope = f[P_ROPE].i;
	c->pv2_vd = f[P_VC].i;
	c->pv2_sinks = f[P_SINKS].i;
	if (nope + rope != c->d || c->d > PV2_MAX_DIM || c->pv2_vd < 1 || c->pv2_vd > PV2_MAX_DIM)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: qk_nope_dim %lld + qk_rope_dim %lld, v_channels %lld; "
		    "the reference runs heads of up to %d dims (head_dim %lld)",
		    (long long)nope, (long long)rope, (long long)c->pv2_vd, PV2_MAX_DIM,
		    (long long)c->d);
	if (rope < 2 || rope % 2 != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: qk_rope_dim %lld; the reference needs an even count "
		                 "of rotary dims from 2",
		                 (long long)rope);
	if (c->pv2_sinks < 1 || c->pv2_sinks >= PV2_MAX_ROWS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: param_sink_number %lld; the reference runs 1 to %d "
		                 "sinks",
		                 (long long)c->pv2_sinks, PV2_MAX_ROWS - 1);
	c->theta = f[P_THETA].r;
	if (!(c->theta > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_theta %g; the reference needs a value above 1",
		                 c->theta);
	c->rot_dim = rope;
	c->rope_pairs = !f[P_INTERLEAVE].present || f[P_INTERLEAVE].b;
	return WT_OK;
}

int ref_cfg_pangu_v2(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[P_COUNT] = {
	    [P_SANDWICH] = {"sandwich_norm", CKPT_FIELD_BOOL},
	    [P_NOPE] = {"qk_nope_dim", CKPT_FIELD_INT},
	    [P_ROPE] = {"qk_rope_dim", CKPT_FIELD_INT},
	    [P_VC] = {"v_channels", CKPT_FIELD_INT},
	    [P_SINKS] = {"param_sink_number", CKPT_FIELD_INT},
	    [P_INTERLEAVE] = {"rope_interleave", CKPT_FIELD_BOOL},
	    [P_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	};
	int rv = ckpt_config_fields(json, len, f, P_COUNT, err);
	if (rv != WT_OK)
		return rv;
	c->pv2 = c->pangu_moe = true; /* pangu_moe: the sandwich's names and attention norm */
	c->sandwich = f[P_SANDWICH].present && f[P_SANDWICH].b;
	c->qk_norm = false;
	c->rope_factor[0] = c->rope_factor[1] = 0.0;
	c->n_ext = 0;
	c->rope_dyn = 0.0;
	c->rope_mscale = 0.0;
	if ((rv = pv2_fields(c, f, err)) != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	json_t *rs = json_object_get(root, "rope_scaling");
	bool scaled = rs != NULL && !json_is_null(rs);
	json_decref(root);
	if (scaled)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_scaling on openPangu-Pro-MoE-V2; vLLM's "
		                 "openpangu.py scales the sink attention's RoPE by it, which the "
		                 "reference does not: remove the key");
	if (c->n_group != 1 || c->topk_group != 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: n_group %lld / topk_group %lld; vLLM's OpenPanguMoE "
		                 "routes in one group (num_expert_group 1, topk_group 1): remove "
		                 "the keys",
		                 (long long)c->n_group, (long long)c->topk_group);
	return WT_OK;
}

/* The call's heads: all (tp 0) or rank r's of tp. */
typedef struct pv2_dims {
	int64_t H, KV, d, vd, S, Hl, KVl, q0, kv0, D;
} pv2_dims;

static int pv2_dims_of(const ref_cfg *c, int64_t l, int64_t r, int64_t tp, int64_t T, pv2_dims *m,
                       wt_errbuf *err)
{
	m->H = c->H;
	m->KV = c->KV;
	m->d = c->d;
	m->vd = c->pv2_vd;
	m->S = c->pv2_sinks;
	m->D = m->d > m->vd ? m->d : m->vd;
	if (m->H < 1 || m->KV < 1 || m->H % m->KV != 0 || m->H > REF_MAX_HEADS)
		return wt_seterr(err, WT_EUNSUPPORTED, "layer %lld: %lld heads over %lld kv heads",
		                 (long long)l, (long long)m->H, (long long)m->KV);
	if (m->S + T > PV2_MAX_ROWS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "param_sink_number %lld and %lld tokens: the reference attends "
		                 "over up to %d rows",
		                 (long long)m->S, (long long)T, PV2_MAX_ROWS);
	int64_t n = tp == 0 ? 1 : tp;
	if (m->H % n != 0 || m->KV % n != 0)
		return wt_seterr(err, WT_ELAYOUT,
		                 "layer %lld: tp %lld does not divide %lld heads and %lld kv heads "
		                 "(vLLM's OpenPanguSinkAttention replicates no kv head)",
		                 (long long)l, (long long)tp, (long long)m->H, (long long)m->KV);
	m->Hl = m->H / n;
	m->KVl = m->KV / n;
	m->q0 = r * m->Hl;
	m->kv0 = r * m->KVl;
	return WT_OK;
}

/* The call's q / k / v weights and biases, o_proj and its bias, k_layernorm and the sinks. */
typedef struct pv2_w {
	const float *wq, *wk, *wv, *bq, *bk, *bv, *wo, *bo, *kn, *sk, *sv;
} pv2_w;

static int pv2_get(ref_set *s, int64_t hid, int64_t l, const pv2_dims *m, bool full, bool bias0,
                   pv2_w *w, wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t qd = m->Hl * m->d, kd = m->KVl * m->d, vdd = m->KVl * m->vd;
	int rv;
	ref_qkv q;
	if ((rv = ref_get_qkv(s, l, hid, qd, kd, vdd, full, &q, err)) != WT_OK)
		return rv;
	w->wq = q.wq;
	w->wk = q.wk;
	w->wv = q.wv;
	w->bq = q.bq;
	w->bk = q.bk;
	w->bv = q.bv;
	w->bo = NULL;
	if ((rv = ref_getf(s, &w->wo, false, err, 2, hid, m->Hl * m->vd, 0, LAYER "o_proj.weight",
	                   L)) ||
	    (bias0 &&
	     (rv = ref_getf(s, &w->bo, true, err, 1, hid, 0, 0, LAYER "o_proj.bias", L))) ||
	    (rv = ref_getf(s, &w->kn, false, err, 1, m->d, 0, 0, LAYER "k_layernorm.weight", L)) ||
	    (rv =
	         ref_getf(s, &w->sk, false, err, 3, m->S, m->KVl, m->d, LAYER "param_sink_key", L)))
		return rv;
	return ref_getf(s, &w->sv, false, err, 3, m->S, m->KVl, m->vd, LAYER "param_sink_value", L);
}

/* rows [n, w] of src into [n, D] rows of dst (zeros past w) */
static void pv2_pad(float *dst, const float *src, int64_t n, int64_t w, int64_t D)
{
	for (int64_t i = 0; i < n; i++) {
		memcpy(dst + i * D, src + i * w, (size_t)w * sizeof(float));
		memset(dst + i * D + w, 0, (size_t)(D - w) * sizeof(float));
	}
}

/* q / k / v of the T tokens: the projections, k_layernorm on k, RoPE on q and k. */
static void pv2_qkv(const ref_cfg *c, int64_t l, const pv2_dims *m, const pv2_w *w, const float *h,
                    int64_t T, float *q, float *k, float *v)
{
	ref_linear(q, h, w->wq, w->bq, T, c->hid, m->Hl * m->d);
	ref_linear(k, h, w->wk, w->bk, T, c->hid, m->KVl * m->d);
	ref_linear(v, h, w->wv, w->bv, T, c->hid, m->KVl * m->vd);
	ref_rmsnorm(k, k, w->kn, T * m->KVl, m->d, (float)c->eps);
	ref_rope_layer(c, l, q, T, m->Hl, m->Hl * m->d);
	ref_rope_layer(c, l, k, T, m->KVl, m->KVl * m->d);
}

int ref_pv2_attn(const ref_cfg *c, ref_set *s, int64_t l, int64_t r, int64_t tp, const float *h,
                 int64_t T, float *out, wt_errbuf *err)
{
	pv2_dims m = {0};
	pv2_w w = {0};
	int rv = pv2_dims_of(c, l, r, tp, T, &m, err);
	if (rv != WT_OK || (rv = pv2_get(s, c->hid, l, &m, tp == 0, r == 0, &w, err)) != WT_OK)
		return rv;
	int64_t Hl = m.Hl, KVl = m.KVl, d = m.d, vd = m.vd, D = m.D, S = m.S, R = S + T;
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t j = 0; j < Hl; j++)
		kv_of[j] = (m.q0 + j) / (m.H / m.KV) - m.kv0;
	size_t n =
	    (size_t)(T * (Hl * d + KVl * d + KVl * vd) + S * KVl * d + R * (2 * Hl + 2 * KVl) * D);
	float *buf = calloc(n, sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld attention: out of memory",
		                 (long long)l);
	float *q = buf, *k = q + T * Hl * d, *v = k + T * KVl * d, *skn = v + T * KVl * vd;
	float *qp = skn + S * KVl * d, *kp = qp + R * Hl * D, *vp = kp + R * KVl * D;
	float *att = vp + R * KVl * D;
	pv2_qkv(c, l, &m, &w, h, T, q, k, v);
	ref_rmsnorm(skn, w.sk, w.kn, S * KVl, d, (float)c->eps); /* the sink keys' k_layernorm */
	/* rows 0..S-1: the sinks (zero queries), then the tokens */
	pv2_pad(qp + S * Hl * D, q, T * Hl, d, D);
	pv2_pad(kp, skn, S * KVl, d, D);
	pv2_pad(kp + S * KVl * D, k, T * KVl, d, D);
	pv2_pad(vp, w.sv, S * KVl, vd, D);
	pv2_pad(vp + S * KVl * D, v, T * KVl, vd, D);
	ref_attn_opt ao = {.causal = true, .scale = (float)(1.0 / sqrt((double)d))};
	ref_attention(att, qp, kp, vp, R, Hl, KVl, kv_of, D, &ao);
	for (int64_t i = 0; i < T * Hl; i++) /* the tokens' outputs, v_channels of each head */
		memcpy(qp + i * vd, att + (S * Hl + i) * D, (size_t)vd * sizeof(float));
	ref_linear(out, qp, w.wo, w.bo, T, Hl * vd, c->hid);
	free(buf);
	return WT_OK;
}
