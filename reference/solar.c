/*
 * solar.c — Solar (SolarForCausalLM, remote code: upstage/solar-pro-preview-instruct; vLLM's
 * solar.py): Llama's decoder plus the block skip connections of SolarModel.forward. At each
 * layer i vLLM saves hidden_states and residual when i is in bskcn_1 (bskcn_2), then, when i is
 * in bskcn_3 (bskcn_4), replaces both by bskcn_tv * saved + (1 - bskcn_tv) * current, with
 * bskcn_tv[1] (not training). The reference carries the residual stream x = hidden_states +
 * residual (what the layer's fused add-norm reads), which the mix, being linear and alike on
 * both, takes to tv * saved_x + (1 - tv) * x; the two sums round apart by float32 ulps.
 */
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference_int.h"
#include "reference/solar.h"

int ref_cfg_solar(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_solar_skips s;
	int rv = ckpt_config_solar(json, len, c->L, &s, err);
	if (rv != WT_OK)
		return rv;
	memcpy(c->sk_save, s.save, sizeof(c->sk_save));
	memcpy(c->sk_mix, s.mix, sizeof(c->sk_mix));
	c->sk_tv = s.tv;
	return WT_OK;
}

int ref_solar_skip(const ref_cfg *c, ref_solar *s, float *x, int64_t n, int64_t l, wt_errbuf *err)
{
	if (!c->solar)
		return WT_OK;
	for (int k = 0; k < 2; k++) {
		if (!ref_l4_bit(c->sk_save[k], l))
			continue;
		if (s->saved[k] == NULL &&
		    (s->saved[k] = malloc((size_t)n * sizeof(float))) == NULL)
			return wt_seterr(err, WT_ENOMEM, "reference forward: out of memory");
		memcpy(s->saved[k], x, (size_t)n * sizeof(float));
	}
	/* tensor * python float: the factors in float32, 1 - tv taken in double first */
	const float tv = (float)c->sk_tv, rest = (float)(1.0 - c->sk_tv);
	for (int k = 0; k < 2; k++) {
		if (!ref_l4_bit(c->sk_mix[k], l))
			continue;
		const float *sv = s->saved[k];
		if (sv == NULL)
			return wt_seterr(
			    err, WT_EINVAL,
			    "Solar: layer %lld mixes in bskcn_%d's input before any was "
			    "saved",
			    (long long)l, k + 1);
		for (int64_t i = 0; i < n; i++)
			x[i] = sv[i] * tv + x[i] * rest;
	}
	return WT_OK;
}

void ref_solar_free(ref_solar *s)
{
	if (s == NULL)
		return;
	free(s->saved[0]);
	free(s->saved[1]);
	s->saved[0] = s->saved[1] = NULL;
}
