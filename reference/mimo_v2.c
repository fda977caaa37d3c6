/*
 * mimo_v2.c — MiMo-V2-Flash (MiMoV2FlashForCausalLM, model_type mimo_v2_flash; XiaomiMiMo/
 * MiMo-V2-Flash, remote code; vLLM's mimo_v2_flash.py; c->mimo_v2, kind REF_DEEPSEEK with
 * glm4_moe): its layer kinds, its config and its attention, for the full pass (the checkpoint)
 * and the sharded one (a tp rank) alike.
 *
 * The math followed (vLLM's MiMoV2FlashDecoderLayer): x += attn(input_layernorm(x)),
 * x += mlp(post_attention_layernorm(x)), RMSNorms at layernorm_epsilon. Layer i's attention is
 * the sliding-window kind when hybrid_layer_pattern[i] == 1 (swa_num_attention_heads,
 * swa_num_key_value_heads, swa_head_dim, swa_v_head_dim, swa_rope_theta, a window of
 * sliding_window_size keys: key s seen by query t when t - s < window, and with
 * add_swa_attention_sink_bias one sink logit per head joining each row's softmax denominator,
 * GPT-OSS's sinks), else the full kind (num_attention_heads, num_key_value_heads, head_dim,
 * v_head_dim, rope_theta, no window, no sinks):
 *
 *   q, k (head_dim a head), v (v_head_dim a head) = x [q_proj; k_proj; v_proj]^T (+ biases with
 *   attention_bias); neox RoPE on the first int(head_dim * partial_rotary_factor) dims of each
 *   q / k head (rope_type default: rope_scaling is not read); v times attention_value_scale
 *   when given; causal softmax at head_dim^-0.5 over the GQA kv heads; o_proj of H x v_head_dim
 *   columns.
 *
 * The layers moe_layer_freq marks (a list; the loader's moe_layers) are MiMoV2MoE: sigmoid of
 * the F32 router mlp.gate, DeepSeek-V3's grouped top-k (n_group, topk_group) chosen on the
 * scores plus mlp.gate.e_score_correction_bias, weighted by the scores, renormalized with
 * norm_topk_prob, no routed scaling and no shared expert (ref_route_ds); the others the SiLU
 * MLP. A rank holds its heads' q / k / v rows fused in qkv_proj (kv heads replicated past the
 * layer's kv heads), o_proj's columns and its heads' sinks: the caller sums the ranks'
 * outputs. Unequal q / v head widths run through ref_attention on heads zero-padded to the
 * wider of the two (zeros add nothing to q.k nor to the weighted sum of v).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "loader/loader_mimo_v2.h"
#include "reference/mimo_v2.h"
#include "reference/reference.h"
#include "reference/step3.h"

#define LAYER         "model.layers.%lld.self_attn."
#define MV_MAX_DIM    1024 /* the widest q / k / v head the reference runs */
#define MV_MAX_VSCALE 1e6  /* attention_value_scale beyond this makes the logits non-finite */

int ref_mv_layers(const ckpt_config *cc, const char *json, size_t len, ref_cfg *c, wt_errbuf *err)
{
	if (cc->num_hidden_layers > REF_L4_MAX_LAYERS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %lld layers; the reference runs MiMo-V2-Flash with up to %d",
		    (long long)cc->num_hidden_layers, REF_L4_MAX_LAYERS);
	ckpt_mimo_v2_layer *ly;
	int rv = ckpt_config_mimo_v2(json, len, cc, &ly, err);
	if (rv != WT_OK)
		return rv;
	memset(c->local_mask, 0, sizeof(c->local_mask));
	c->mv_sinks = false;
	for (int64_t i = 0; i < cc->num_hidden_layers && rv == WT_OK; i++) {
		int k = ly[i].swa ? 1 : 0;
		if (ly[i].heads > REF_MAX_HEADS || ly[i].head_dim > MV_MAX_DIM ||
		    ly[i].v_head_dim > MV_MAX_DIM)
			rv = wt_seterr(err, WT_EUNSUPPORTED,
			               "config.json: layer %lld's attention has %lld heads of %lld "
			               "(v %lld) dims; the reference runs up to %d heads of %d",
			               (long long)i, (long long)ly[i].heads,
			               (long long)ly[i].head_dim, (long long)ly[i].v_head_dim,
			               REF_MAX_HEADS, MV_MAX_DIM);
		c->mv_h[k] = ly[i].heads;
		c->mv_kv[k] = ly[i].kv_heads;
		c->mv_d[k] = ly[i].head_dim;
		c->mv_vd[k] = ly[i].v_head_dim;
		c->mv_sinks = c->mv_sinks || ly[i].sinks;
		if (ly[i].swa)
			c->local_mask[i / 64] |= 1ull << (i % 64);
	}
	free(ly);
	/* moe_layer_freq's layers, as Step 3's moe_layers_enum: the loader's moe_layers */
	return rv != WT_OK ? rv : ref_step3_layers(cc, c, err);
}

enum { M_EPS, M_THETA, M_SWA_THETA, M_PRF, M_VSCALE, M_WINDOW, M_COUNT };

int ref_cfg_mimo_v2(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[M_COUNT] = {
	    [M_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL}, /* layernorm_epsilon, the loader's */
	    [M_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [M_SWA_THETA] = {"swa_rope_theta", CKPT_FIELD_REAL},
	    [M_PRF] = {"partial_rotary_factor", CKPT_FIELD_REAL},
	    [M_VSCALE] = {"attention_value_scale", CKPT_FIELD_REAL},
	    [M_WINDOW] = {"sliding_window_size", CKPT_FIELD_INT},
	};
	int rv = ckpt_config_fields(json, len, f, M_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (!f[M_EPS].present)
		return wt_seterr(err, WT_ECORRUPT, "config.json: layernorm_epsilon is missing");
	bool swa = c->local_mask[0] || c->local_mask[1] || c->local_mask[2] || c->local_mask[3];
	c->eps = f[M_EPS].r;
	c->theta = f[M_THETA].present ? f[M_THETA].r : 1000000.0; /* vLLM's getattr default */
	c->theta_local = f[M_SWA_THETA].present ? f[M_SWA_THETA].r : c->theta;
	c->mv_vscale = f[M_VSCALE].present ? f[M_VSCALE].r : 1.0;
	c->window = swa ? f[M_WINDOW].i : 0;
	c->local_masked = true;
	c->window_pattern = 0;
	c->rope_factor[0] = c->rope_factor[1] = 0.0;
	c->n_ext = 0;
	c->rope_dyn = 0.0;
	c->rot_dim = 0;
	c->rope_interleave = false;
	c->qk_norm = false;
	c->act = REF_ACT_SILU;
	c->routed_scale = 1.0; /* FusedMoE's default: vLLM passes no routed_scaling_factor */
	c->first_dense = 0;
	c->layer_freq = 1;
	c->Is = 0;
	if (!(c->theta > 1.0) || !(c->theta_local > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_theta %g, swa_rope_theta %g; the reference "
		                 "needs values above 1",
		                 c->theta, c->theta_local);
	if (!(fabs(c->mv_vscale) <= MV_MAX_VSCALE)) /* v, then the logits, would overflow */
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: attention_value_scale %g; the reference runs values "
		                 "within +-%g",
		                 c->mv_vscale, MV_MAX_VSCALE);
	if (swa && c->window < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: sliding_window_size %lld; the reference runs a "
		                 "sliding-window layer over a window of at least one key",
		                 (long long)c->window);
	double prf = f[M_PRF].present ? f[M_PRF].r : 1.0;
	for (int k = 0; k < 2; k++) {
		if (c->mv_d[k] == 0) /* no layer of this kind */
			continue;
		double r = (double)c->mv_d[k] * prf;
		c->mv_rot[k] = r >= 0.0 && r <= (double)c->mv_d[k] ? (int64_t)r : -1;
		if (c->mv_rot[k] < 2 || c->mv_rot[k] % 2 != 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: %s %lld x partial_rotary_factor %g gives %lld "
			    "rotary dims; the reference needs an even count from 2 to "
			    "the head's",
			    k ? "swa_head_dim" : "head_dim", (long long)c->mv_d[k], prf,
			    (long long)c->mv_rot[k]);
	}
	return WT_OK;
}

/* Layer l's attention on one pass: its kind k, sizes, and the heads the call holds. */
typedef struct mv_dims {
	int k;
	int64_t H, KV, d, vd, Hl, KVl, q0, kv0, D;
} mv_dims;

static int mv_dims_of(const ref_cfg *c, int64_t l, int64_t r, int64_t tp, mv_dims *m,
                      wt_errbuf *err)
{
	m->k = ref_l4_bit(c->local_mask, l) ? 1 : 0;
	m->H = c->mv_h[m->k];
	m->KV = c->mv_kv[m->k];
	m->d = c->mv_d[m->k];
	m->vd = c->mv_vd[m->k];
	m->D = m->d > m->vd ? m->d : m->vd;
	if (m->H < 1 || m->KV < 1 || m->H % m->KV != 0 || m->d < 1 || m->vd < 1)
		return wt_seterr(err, WT_ECORRUPT, "layer %lld: no attention sizes", (long long)l);
	if (tp == 0) {
		m->Hl = m->H;
		m->KVl = m->KV;
		m->q0 = m->kv0 = 0;
		return WT_OK;
	}
	const char *hk = m->k ? "swa_num_attention_heads" : "num_attention_heads";
	if (m->H % tp != 0 || (m->KV % tp != 0 && tp % m->KV != 0))
		return wt_seterr(err, WT_ELAYOUT,
		                 "layer %lld: tp %lld does not fit %s %lld and its %lld kv heads; "
		                 "the planner refuses it too",
		                 (long long)l, (long long)tp, hk, (long long)m->H,
		                 (long long)m->KV);
	m->Hl = m->H / tp;
	m->KVl = m->KV >= tp ? m->KV / tp : 1;
	m->q0 = r * m->Hl;
	m->kv0 = m->KV >= tp ? r * m->KVl : r / (tp / m->KV);
	return WT_OK;
}

/* The q / k / v weights (and biases), o_proj and sinks of layer l on the call's heads. */
typedef struct mv_w {
	const float *wq, *wk, *wv, *bq, *bk, *bv, *wo, *sinks;
} mv_w;

static int mv_get(const ref_cfg *c, ref_set *s, int64_t l, const mv_dims *m, bool full, mv_w *w,
                  wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t hid = c->hid, qd = m->Hl * m->d, kd = m->KVl * m->d, vdd = m->KVl * m->vd;
	int rv;
	w->sinks = NULL;
	ref_qkv q;
	if ((rv = ref_get_qkv(s, l, hid, qd, kd, vdd, full, &q, err)) != WT_OK)
		return rv;
	w->wq = q.wq;
	w->wk = q.wk;
	w->wv = q.wv;
	w->bq = q.bq;
	w->bk = q.bk;
	w->bv = q.bv;
	if (m->k == 1 && c->mv_sinks &&
	    (rv = ref_getf(s, &w->sinks, false, err, 1, m->Hl, 0, 0, LAYER "attention_sink_bias",
	                   L)))
		return rv;
	return ref_getf(s, &w->wo, false, err, 2, hid, m->Hl * m->vd, 0, LAYER "o_proj.weight", L);
}

/* rows [T, n, w] of src into [T, n, D] of dst (zeros past w), or back when !in */
static void mv_pad(float *dst, const float *src, int64_t T, int64_t n, int64_t w, int64_t D,
                   bool in)
{
	for (int64_t i = 0; i < T * n; i++) {
		if (in) {
			memcpy(dst + i * D, src + i * w, (size_t)w * sizeof(float));
			memset(dst + i * D + w, 0, (size_t)(D - w) * sizeof(float));
		} else {
			memcpy(dst + i * w, src + i * D, (size_t)w * sizeof(float));
		}
	}
}

int ref_mv_attn(const ref_cfg *c, ref_set *s, int64_t l, int64_t r, int64_t tp, const float *h,
                int64_t T, float *out, wt_errbuf *err)
{
	mv_dims m = {0};
	mv_w w;
	int rv = mv_dims_of(c, l, r, tp, &m, err);
	if (rv != WT_OK || (rv = mv_get(c, s, l, &m, tp == 0, &w, err)) != WT_OK)
		return rv;
	int64_t Hl = m.Hl, KVl = m.KVl, d = m.d, vd = m.vd, D = m.D, hid = c->hid;
	int64_t kv_of[REF_MAX_HEADS];
	for (int64_t j = 0; j < Hl; j++) {
		kv_of[j] = (m.q0 + j) / (m.H / m.KV) - m.kv0;
		if (kv_of[j] < 0 || kv_of[j] >= KVl)
			return wt_seterr(
			    err, WT_ELAYOUT,
			    "layer %lld rank %lld: head %lld's kv head is not among the "
			    "%lld it holds",
			    (long long)l, (long long)r, (long long)(m.q0 + j), (long long)KVl);
	}
	size_t n = (size_t)(T * (Hl * d + KVl * d + KVl * vd + (2 * Hl + 2 * KVl) * D));
	float *buf = malloc(n * sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld attention: out of memory",
		                 (long long)l);
	float *q = buf, *k = q + T * Hl * d, *v = k + T * KVl * d, *qp = v + T * KVl * vd;
	float *kp = qp + T * Hl * D, *vp = kp + T * KVl * D, *att = vp + T * KVl * D;
	ref_linear(q, h, w.wq, w.bq, T, hid, Hl * d);
	ref_linear(k, h, w.wk, w.bk, T, hid, KVl * d);
	ref_linear(v, h, w.wv, w.bv, T, hid, KVl * vd);
	ref_cfg *lc = malloc(sizeof(*lc)); /* c with the layer's head_dim and rotary width */
	if (lc == NULL) {
		free(buf);
		return wt_seterr(err, WT_ENOMEM, "layer %lld attention: out of memory",
		                 (long long)l);
	}
	memcpy(lc, c, sizeof(*lc));
	lc->d = d;
	lc->rot_dim = c->mv_rot[m.k];
	ref_rope_layer(lc, l, q, T, Hl, Hl * d); /* theta / theta_local by the layer's kind */
	ref_rope_layer(lc, l, k, T, KVl, KVl * d);
	double theta, factor;
	ref_attn_opt ao;
	ref_layer_attn(lc, l, &theta, &factor, &ao); /* the window on the sliding layers */
	free(lc);
	for (int64_t i = 0; i < T * KVl * vd; i++) /* attention_value_scale (1 when absent) */
		v[i] *= (float)c->mv_vscale;
	ao.scale = (float)(1.0 / sqrt((double)d));
	ao.sinks = w.sinks;
	mv_pad(qp, q, T, Hl, d, D, true);
	mv_pad(kp, k, T, KVl, d, D, true);
	mv_pad(vp, v, T, KVl, vd, D, true);
	ref_attention(att, qp, kp, vp, T, Hl, KVl, kv_of, D, &ao);
	mv_pad(qp, att, T, Hl, vd, D, false); /* qp's room holds the T x Hl x vd outputs */
	ref_linear(out, qp, w.wo, NULL, T, Hl * vd, hid);
	free(buf);
	return WT_OK;
}
