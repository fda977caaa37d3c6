/*
 * ouro.c — Ouro (OuroForCausalLM, ByteDance/Ouro-1.4B / 2.6B, remote code; c->ouro_steps > 0):
 * vLLM's ouro.py runs the decoder layers total_ut_steps times over the same weights. Each step
 * starts with the residual empty and ends with hidden = model.norm(hidden + residual), which is
 * the next step's input; the last step's is the LM head's. A layer is Gemma 2's sandwich in
 * vLLM's fused-residual form, under Ouro's names:
 *
 *   checkpoint / rank (model.layers.{i}.)   read as                       on
 *   input_layernorm.                        input_layernorm.              the attention input
 *   input_layernorm_2.                      post_attention_layernorm.     the attention output
 *   post_attention_layernorm.               pre_feedforward_layernorm.    the MLP input
 *   post_attention_layernorm_2.             post_feedforward_layernorm.   the MLP output
 *
 * with plain RMSNorms (x * w, not Gemma's 1 + w), no embedding scale, Qwen2's attention without
 * biases and RoPE (rope_theta), SwiGLU. model.early_exit_gate is not read: vLLM's forward pass
 * does not use it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/ouro.h"
#include "reference/reference_int.h"

/* leaf -> the name the pass reads; the first that matches applies, once */
static const char *const ou_map[][2] = {
    {".input_layernorm_2.", ".post_attention_layernorm."},
    {".post_attention_layernorm_2.", ".post_feedforward_layernorm."},
    {".post_attention_layernorm.", ".pre_feedforward_layernorm."},
};

bool ref_ouro_named(ref_set *s)
{
	return ref_set_find(s, "model.layers.0.input_layernorm_2.weight") != NULL;
}

static int ou_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)x;
	(void)in;
	char name[512];
	if (snprintf(name, sizeof(name), "%s", t->name) >= (int)sizeof(name))
		return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
	for (size_t i = 0; i < sizeof(ou_map) / sizeof(ou_map[0]); i++) {
		char *at = strstr(name, ou_map[i][0]);
		if (at == NULL)
			continue;
		size_t f = strlen(ou_map[i][0]), to = strlen(ou_map[i][1]), n = strlen(name);
		if (n - f + to + 1 > sizeof(name))
			return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
		memmove(at + to, at + f, n - (size_t)(at - name) - f + 1);
		memcpy(at, ou_map[i][1], to);
		break;
	}
	return ref_set_add_as(out, name, t, err);
}

int ref_ouro_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, ou_one, c, true, err);
}

int ref_cfg_ouro(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[] = {{"total_ut_steps", CKPT_FIELD_INT}};
	int rv = ckpt_config_fields(json, len, f, 1, err);
	if (rv != WT_OK)
		return rv;
	int64_t steps = f[0].present ? f[0].i : 4; /* vLLM's getattr default, OuroConfig's */
	if (steps < 1 || steps > REF_OURO_MAX_STEPS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: total_ut_steps %lld; the reference runs 1 to %d "
		                 "passes over the layers (Ouro's releases: 4)",
		                 (long long)steps, REF_OURO_MAX_STEPS);
	c->ouro_steps = steps;
	c->sandwich = true;
	return WT_OK;
}

int64_t ref_ouro_passes(const ref_cfg *c)
{
	return c->ouro_steps > 0 ? c->ouro_steps : 1;
}

int ref_ouro_step_norm(const ref_cfg *c, ref_set *s, float *x, int64_t rows, wt_errbuf *err)
{
	return ref_norm_of(c, s, x, x, rows, err, "model.norm");
}

int ref_ouro_step_norm_ranks(const ref_cfg *c, ref_set *ranks, uint32_t n_ranks, float *x, float *y,
                             float *acc, int64_t rows, wt_errbuf *err)
{
	int64_t n = rows * c->hid;
	memset(acc, 0, (size_t)n * sizeof(float));
	for (uint32_t r = 0; r < n_ranks; r++) {
		int rv = ref_norm_of(c, &ranks[r], y, x, rows, err, "model.norm");
		if (rv != WT_OK)
			return rv;
		for (int64_t i = 0; i < n; i++)
			acc[i] += y[i] / (float)n_ranks;
	}
	memcpy(x, acc, (size_t)n * sizeof(float));
	return WT_OK;
}
