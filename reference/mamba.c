/*
 * mamba.c — Mamba (MambaForCausalLM; transformers 4.57.1, modeling_mamba.py without a
 * cache): x = embeddings[tokens]; per layer x = x + mixer(RMSNorm(x)) with Jamba's Mamba
 * (v1) mixer (jamba.c) without its dt / B / C norms; then norm_f and the (tied) LM head.
 * It is read as Jamba's layers with every layer a mixer and no feed_forward: the
 * checkpoint (or a rank's shard, which keeps the checkpoint's names) is set under Jamba's
 * names first (ref_mamba_rename), then the Jamba passes run (reference.c, shard.c).
 *
 *   backbone.embeddings.weight        model.embed_tokens.weight
 *   backbone.norm_f.weight            model.final_layernorm.weight
 *   backbone.layers.{i}.norm.weight   model.layers.{i}.input_layernorm.weight
 *   backbone.layers.{i}.mixer.X       model.layers.{i}.mamba.X
 *   lm_head.weight (untied)           lm_head.weight
 */
#include <stdio.h>
#include <string.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const names[][2] = {
    {"backbone.embeddings.", "model.embed_tokens."},
    {"backbone.norm_f.", "model.final_layernorm."},
};

/* name under Jamba's names into buf. */
static int canon(const char *name, char *buf, size_t cap, wt_errbuf *err)
{
	int n = -1;
	for (size_t i = 0; n < 0 && i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(name, names[i][0], strlen(names[i][0])) == 0)
			n = snprintf(buf, cap, "%s%s", names[i][1], name + strlen(names[i][0]));
	const char *lp = "backbone.layers.";
	if (n < 0 && strncmp(name, lp, strlen(lp)) == 0) {
		const char *at = name + strlen(lp), *dot = strchr(at, '.');
		const char *leaf = dot ? dot + 1 : "";
		int li = dot ? (int)(dot - at) : 0;
		if (strncmp(leaf, "mixer.", 6) == 0)
			n = snprintf(buf, cap, "model.layers.%.*s.mamba.%s", li, at, leaf + 6);
		else if (strncmp(leaf, "norm.", 5) == 0)
			n = snprintf(buf, cap, "model.layers.%.*s.input_layernorm.%s", li, at,
			             leaf + 5);
	}
	if (n < 0)
		n = snprintf(buf, cap, "%s", name);
	if (n < 0 || (size_t)n >= cap)
		return wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", name);
	return WT_OK;
}

static int mamba_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                     wt_errbuf *err)
{
	(void)x, (void)in;
	char name[512];
	int rv = canon(t->name, name, sizeof(name), err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

int ref_mamba_rename(const ref_cfg *c, ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, mamba_one, c, false, err);
}
