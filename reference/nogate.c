/*
 * nogate.c — the MLP without a gate (Apertus, Arcee): y = down_proj(act(up_proj(h))).
 *
 * Apertus's activation is xIELU (transformers 4.57.1 activations.py XIELUActivation, its
 * Python path) with four scalars per layer, mlp.act_fn.{alpha_p, alpha_n} (parameters [1])
 * and {beta, eps} (buffers []), in float32:
 *
 *   ap = softplus(alpha_p), an = beta + softplus(alpha_n)
 *   x > 0:  ap * x * x + beta * x
 *   x <= 0: (expm1(min(x, eps)) - x) * an + beta * x
 *
 * softplus as torch's (threshold 20: x past it is x). A checkpoint without beta / eps
 * takes the class's buffers: 0.5 and -1e-6 rounded to BF16 (XIELUActivation builds them in
 * bfloat16). Note transformers keeps the four in BF16 even in a float32 model, so its own
 * softplus runs in BF16; the reference is the float32 math (the model cast to float32).
 * Arcee's relu2 is relu(x)^2 (ref_act_apply). Every rank holds the scalars whole.
 */
#include <math.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

#define XIELU_BETA 0.5f
#define XIELU_EPS  -9.98377799987793e-07f /* bf16(-1e-6) */

static float softplus(float x)
{
	return x > 20.0f ? x : log1pf(expf(x));
}

/* xIELU of module m's act_fn over x[0..n). */
static int xielu(ref_set *s, const char *m, float *x, int64_t n, wt_errbuf *err)
{
	const float *ap, *an, *be, *ep;
	int rv;
	if ((rv = ref_getf(s, &ap, false, err, 1, 1, 0, 0, "%sact_fn.alpha_p", m)) ||
	    (rv = ref_getf(s, &an, false, err, 1, 1, 0, 0, "%sact_fn.alpha_n", m)) ||
	    (rv = ref_getf(s, &be, true, err, 0, 0, 0, 0, "%sact_fn.beta", m)) ||
	    (rv = ref_getf(s, &ep, true, err, 0, 0, 0, 0, "%sact_fn.eps", m)))
		return rv;
	float beta = be ? be[0] : XIELU_BETA, eps = ep ? ep[0] : XIELU_EPS;
	float a_p = softplus(ap[0]), a_n = beta + softplus(an[0]);
	for (int64_t i = 0; i < n; i++) {
		float v = x[i];
		if (v > 0.0f)
			x[i] = a_p * v * v + beta * v;
		else
			x[i] = (expm1f(v < eps ? v : eps) - v) * a_n + beta * v;
	}
	return WT_OK;
}

int ref_nogate_mlp(const ref_cfg *c, ref_set *s, const char *m, int64_t n_inter, int64_t T,
                   const float *h, float *y, float *scratch, wt_errbuf *err)
{
	const float *wu, *bu, *wd;
	int64_t hid = c->hid;
	int rv;
	if ((rv = ref_getf(s, &wu, false, err, 2, n_inter, hid, 0, "%sup_proj.weight", m)) ||
	    (rv = ref_getf(s, &bu, true, err, 1, n_inter, 0, 0, "%sup_proj.bias", m)) ||
	    (rv = ref_getf(s, &wd, false, err, 2, hid, n_inter, 0, "%sdown_proj.weight", m)))
		return rv;
	ref_linear(scratch, h, wu, bu, T, hid, n_inter);
	if (c->act == REF_ACT_XIELU)
		rv = xielu(s, m, scratch, T * n_inter, err);
	else
		ref_act_apply(scratch, T * n_inter, c->act);
	if (rv != WT_OK)
		return rv;
	ref_linear(y, scratch, wd, NULL, T, n_inter, hid);
	return WT_OK;
}
