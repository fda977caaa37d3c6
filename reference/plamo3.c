/*
 * plamo3.c — PLaMo 3 (Plamo3ForCausalLM, pfnet/plamo-3-*, remote code; c->plamo3) as vLLM's
 * plamo3.py runs it: Gemma 3's decoder shape (sandwich norms, per-head q/k norms before RoPE,
 * sliding layers with their own RoPE base) with Llama's SwiGLU, no embedding scale and
 * 1/sqrt(head_dim) scores. The checkpoint's names are read as Gemma 3's:
 *
 *   checkpoint / rank (model.layers.layers.{i}.)   read as (model.layers.{i}.)    offset
 *   pre_mixer_norm.                                 input_layernorm.               1
 *   post_mixer_norm.                                post_attention_layernorm.      1/5
 *   pre_mlp_norm.                                   pre_feedforward_layernorm.     1
 *   post_mlp_norm.                                  post_feedforward_layernorm.    1/5^1.5
 *   mixer.q_norm. / mixer.k_norm.                   self_attn.q_norm. / k_norm.    1
 *   mixer. (qkv_proj, o_proj)                       self_attn.                     -
 *   model.norm.                                     model.norm.                    1
 *
 * The shards carry the checkpoint's norm bytes (as Gemma's (1 + w)); vLLM's
 * rms_norm_weight_loader adds the offsets at load time, and so does this renaming: every norm
 * then is a plain x * w. Layer i is full attention when (i + 1) % sliding_window_pattern == 0
 * (RoPE base rope_theta), else it attends over the last window_size tokens (rope_local_theta).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/plamo3.h"
#include "reference/reference_int.h"

static const char *const p3_tops[][2] = {{"model.layers.layers.", "model.layers."}};
/* leaf -> the name the pass reads; the first found applies */
static const char *const p3_leaves[][2] = {
    {".pre_mixer_norm.", ".input_layernorm."},
    {".post_mixer_norm.", ".post_attention_layernorm."},
    {".pre_mlp_norm.", ".pre_feedforward_layernorm."},
    {".post_mlp_norm.", ".post_feedforward_layernorm."},
    {".mixer.", ".self_attn."},
};

bool ref_plamo3_named(ref_set *s)
{
	return ref_set_find(s, "model.layers.layers.0.pre_mixer_norm.weight") != NULL;
}

static int p3_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)x;
	(void)in;
	char name[512];
	int rv = ref_map_name(t->name, REF_NAME_MAP(p3_tops), REF_NAME_MAP(p3_leaves), name,
	                      sizeof(name), NULL, NULL, NULL, err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

/* vLLM's rms_norm_weight_loader offset of the (renamed) norm n; 0: not a norm. */
static double p3_offset(const char *n)
{
	size_t len = strlen(n);
	if (len < 7 || strcmp(n + len - 7, ".weight") != 0)
		return 0.0;
	if (strstr(n, ".post_attention_layernorm.") != NULL)
		return 1.0 / 5.0;
	if (strstr(n, ".post_feedforward_layernorm.") != NULL)
		return 1.0 / pow(5.0, 1.5);
	if (strstr(n, ".input_layernorm.") != NULL ||
	    strstr(n, ".pre_feedforward_layernorm.") != NULL || strstr(n, ".q_norm.") != NULL ||
	    strstr(n, ".k_norm.") != NULL || strcmp(n, "model.norm.weight") == 0)
		return 1.0;
	return 0.0;
}

int ref_norm_offsets(ref_set *out, double (*offset)(const char *name), wt_errbuf *err)
{
	int rv = WT_OK;
	(void)ref_set_find(out, ""); /* sorted once: the lookups below keep the order */
	for (size_t i = 0; i < out->n && rv == WT_OK; i++) {
		ref_tensor *t = &out->t[i];
		double off = offset(t->name);
		if (off == 0.0)
			continue;
		const float *v;
		int64_t n = t->shape[0];
		rv = t->ndim == 1 ? ref_get(out, t->name, 1, &n, &v, err)
		                  : wt_seterr(err, WT_ESHAPE, "tensor '%s': a norm of %d dims",
		                              t->name, t->ndim);
		for (int64_t k = 0; rv == WT_OK && k < n; k++)
			t->f32[k] = (float)((double)t->f32[k] + off);
	}
	if (rv != WT_OK)
		ref_set_clear(out);
	return rv;
}

int ref_plamo3_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	int rv = ref_rename_each(in, out, p3_one, c, true, err);
	return rv != WT_OK ? rv : ref_norm_offsets(out, p3_offset, err);
}

int ref_cfg_plamo3(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	enum { P_THETA, P_LOCAL, P_WINDOW, P_PATTERN, P_N };
	ckpt_field f[P_N] = {{"rope_theta", CKPT_FIELD_REAL},
	                     {"rope_local_theta", CKPT_FIELD_REAL},
	                     {"window_size", CKPT_FIELD_INT},
	                     {"sliding_window_pattern", CKPT_FIELD_INT}};
	int rv = ckpt_config_fields(json, len, f, P_N, err);
	if (rv != WT_OK)
		return rv;
	/* Plamo3Config's defaults */
	c->theta = f[P_THETA].present ? f[P_THETA].r : 1000000.0;
	c->theta_local = f[P_LOCAL].present ? f[P_LOCAL].r : 10000.0;
	c->window = f[P_WINDOW].present ? f[P_WINDOW].i : 2048;
	c->window_pattern = f[P_PATTERN].present ? f[P_PATTERN].i : 8;
	if (!(c->theta > 1.0) || !(c->theta_local > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_theta %g, rope_local_theta %g; the reference "
		                 "needs RoPE bases above 1",
		                 c->theta, c->theta_local);
	if (c->window < 1 || c->window_pattern < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: window_size %lld, sliding_window_pattern %lld; the "
		                 "reference needs positive values",
		                 (long long)c->window, (long long)c->window_pattern);
	c->sandwich = c->qk_norm = c->fused_ckpt = c->fused_gate_up = true;
	return WT_OK;
}
