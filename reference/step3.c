/*
 * step3.c — Step 3's language model (Step3TextForCausalLM, vLLM's step3_text.py; c->step3, kind
 * REF_DEEPSEEK with glm4_moe and ds_moe): its config, its MoE layers, its tensors under the names
 * DeepSeek-MoE's pass reads, and its attention, for the full pass (the checkpoint) and the
 * sharded one (a tp rank) alike.
 *
 * The math followed (vLLM's step3_text.py): per layer x += attn(input_layernorm(x)), x +=
 * ffn(post_attention_layernorm(x)); the attention on H heads of head_dim d over ONE kv head:
 *   [qa; k; v] = x [q_proj; k_proj; v_proj]^T (qa of share_q_dim), q = inter_norm(qa) wq^T
 *   (RMSNorm over share_q_dim, rms_norm_eps), rotate-half RoPE over the whole head on q and k,
 *   causal softmax at 1/sqrt(d), out = attn o_proj^T;
 * the layers moe_layers_enum names: softmax over moe.gate's logits, the top moe_top_k,
 * renormalized when norm_expert_weight, each expert silu(x g_e^T) * (x u_e^T) d_e^T, plus the
 * share_expert MLP ungated; the others a dense SiLU MLP. So DeepSeek-MoE's router (V2's softmax,
 * one group, routed_scaling 1) under these names:
 *
 *   model.layers.{i}.moe.gate.               mlp.gate.
 *   model.layers.{i}.moe.gate_proj [E,Ie,hid] mlp.experts.{j}.gate_proj.weight (row block j)
 *   model.layers.{i}.moe.up_proj   [E,Ie,hid] mlp.experts.{j}.up_proj.weight
 *   model.layers.{i}.moe.down_proj [E,hid,Ie] mlp.experts.{j}.down_proj.weight
 *   model.layers.{i}.moe.experts.  (a rank)   mlp.experts.  (w13_weight / w2_weight)
 *   model.layers.{i}.share_expert.            mlp.shared_experts.
 *
 * A rank holds the whole fused qkv_proj [qa; k; v] and inter_norm (replicated), wq's rows of its
 * heads and o_proj's columns: every step after the norm is per head, so the caller sums the
 * ranks' outputs.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/step3.h"

#define LAYER "model.layers.%lld."

enum { S_ACT, S_EPS, S_MAX_POS, S_NORM_W, S_COUNT };

int ref_cfg_step3(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[S_COUNT] = {
	    [S_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [S_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [S_MAX_POS] = {"max_position_embedding", CKPT_FIELD_INT},
	    [S_NORM_W] = {"norm_expert_weight", CKPT_FIELD_BOOL},
	};
	int rv = ckpt_config_fields(json, len, f, S_COUNT, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[S_ACT], "silu", c, err);
	if (rv != WT_OK)
		return rv;
	if (c->q_lora < 1)
		return wt_seterr(err, WT_ECORRUPT, "config.json: share_q_dim is missing");
	c->eps = f[S_EPS].present ? f[S_EPS].r : 1e-5;
	c->qk_norm = false;
	c->rot_dim = 0; /* get_rope(head_dim): the whole head */
	c->rope_interleave = false;
	c->layer_freq = 1;
	c->first_dense = 0;
	c->n_group = c->topk_group = 1;
	c->routed_scale = 1.0;
	/* FusedMoE's renormalize = norm_expert_weight (Step3TextConfig's default false) */
	c->norm_topk = f[S_NORM_W].present && f[S_NORM_W].b;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {arch ? arch : "Step3TextForCausalLM", c->d,
	                  f[S_MAX_POS].present ? f[S_MAX_POS].i : 0};
	rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}

int ref_step3_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	memset(c->l4_moe, 0, sizeof(c->l4_moe));
	if (cc->num_hidden_layers > REF_L4_MAX_LAYERS)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %lld layers; the reference handles at most %d",
		                 (long long)cc->num_hidden_layers, REF_L4_MAX_LAYERS);
	for (size_t k = 0; cc->has_moe_layers && k < cc->n_moe_layers; k++) {
		int64_t i = cc->moe_layers[k];
		if (i >= 0 && i < cc->num_hidden_layers) /* a number naming no layer names none */
			c->l4_moe[i / 64] |= 1ull << (i % 64);
	}
	return WT_OK;
}

bool ref_step3_named(ref_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (strstr(s->t[i].name, ".moe.") != NULL ||
		    strstr(s->t[i].name, ".share_expert.") != NULL)
			return true;
	return false;
}

static const char *const s3_tops[][2] = {{"", ""}};
static const char *const s3_leaves[][2] = {
    {".moe.", ".mlp."},
    {".share_expert.", ".mlp.shared_experts."},
};

/* The checkpoint's stack t ("<layer>moe.<leaf>.weight", [E, rows, cols]) as E tensors
 * "<layer>mlp.experts.{j}.<leaf>.weight" [rows, cols] of out (row block j each). */
static int s3_split(const ref_tensor *t, const char *leaf, ref_set *out, wt_errbuf *err)
{
	int64_t E = t->shape[0], rows = t->shape[1], cols = t->shape[2];
	if (E < 1 || rows < 1 || cols < 1 || t->nbytes % (uint64_t)(E * rows * cols) != 0)
		return wt_seterr(err, WT_ECORRUPT, "tensor '%s': not an [E, rows, cols] stack",
		                 t->name);
	size_t blk = (size_t)(t->nbytes / (uint64_t)E);
	const char *m = strstr(t->name, "moe.");
	int rv = WT_OK;
	for (int64_t j = 0; j < E && rv == WT_OK; j++) {
		char name[600];
		int64_t shape[2] = {rows, cols};
		int n = snprintf(name, sizeof(name), "%.*smlp.experts.%lld.%s.weight",
		                 (int)(m - t->name), t->name, (long long)j, leaf);
		rv = n < 0 || (size_t)n >= sizeof(name)
		         ? wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", t->name)
		         : ref_set_add(out, name, t->dtype, 2, shape, t->data + (size_t)j * blk,
		                       blk, err);
	}
	return rv;
}

static int s3_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)in;
	static const char *const stacks[] = {"gate_proj", "up_proj", "down_proj"};
	const char *m = strstr(t->name, ".moe.");
	for (size_t k = 0; x->ckpt && m != NULL && t->ndim == 3 && k < 3; k++) {
		char want[64];
		snprintf(want, sizeof(want), ".moe.%s.weight", stacks[k]);
		if (strcmp(m, want) == 0)
			return s3_split(t, stacks[k], out, err);
	}
	char name[512];
	int rv = ref_map_name(t->name, REF_NAME_MAP(s3_tops), REF_NAME_MAP(s3_leaves), name,
	                      sizeof(name), NULL, NULL, NULL, err);
	return rv != WT_OK ? rv : ref_set_add_as(out, name, t, err);
}

int ref_step3_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool whole, wt_errbuf *err)
{
	return ref_rename_each(in, out, s3_one, c, whole, err);
}

/* The q_proj / k_proj / v_proj (or fused qkv_proj), inter_norm, wq and o_proj of layer l. */
typedef struct s3_w {
	const float *wa, *wk, *wv, *in, *wq, *wo;
} s3_w;

static int s3_get(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, s3_w *w,
                  wt_errbuf *err)
{
	long long L = (long long)l;
	int64_t d = c->d, hid = c->hid, qa = c->q_lora, qd = p->Hl * d;
	int rv;
	if (p->ckpt) {
		if ((rv = ref_getf(s, &w->wa, false, err, 2, qa, hid, 0,
		                   LAYER "self_attn.q_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->wk, false, err, 2, d, hid, 0,
		                   LAYER "self_attn.k_proj.weight", L)) ||
		    (rv = ref_getf(s, &w->wv, false, err, 2, d, hid, 0,
		                   LAYER "self_attn.v_proj.weight", L)))
			return rv;
	} else {
		const float *f;
		if ((rv = ref_getf(s, &f, false, err, 2, qa + 2 * d, hid, 0,
		                   LAYER "self_attn.qkv_proj.weight", L)))
			return rv;
		w->wa = f;
		w->wk = f + qa * hid;
		w->wv = f + (qa + d) * hid;
	}
	if ((rv = ref_getf(s, &w->in, false, err, 1, qa, 0, 0, LAYER "self_attn.inter_norm.weight",
	                   L)) ||
	    (rv = ref_getf(s, &w->wq, false, err, 2, qd, qa, 0, LAYER "self_attn.wq.weight", L)))
		return rv;
	return ref_getf(s, &w->wo, false, err, 2, hid, qd, 0, LAYER "self_attn.o_proj.weight", L);
}

int ref_step3_attn(const ref_cfg *c, ref_set *s, int64_t l, const ref_q3n_part *p, const float *h,
                   int64_t T, float *out, wt_errbuf *err)
{
	int64_t d = c->d, Hl = p->Hl, qa = c->q_lora, qd = Hl * d;
	int64_t kv_of[REF_MAX_HEADS] = {0}; /* every head on the one kv head */
	if (Hl > REF_MAX_HEADS)
		return wt_seterr(err, WT_EUNSUPPORTED, "%lld heads; the reference handles %d",
		                 (long long)Hl, REF_MAX_HEADS);
	s3_w w;
	int rv = s3_get(c, s, l, p, &w, err);
	if (rv != WT_OK)
		return rv;
	float *buf = malloc((size_t)(T * (qa + 2 * qd + 2 * d)) * sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "layer %lld attention: out of memory",
		                 (long long)l);
	float *a = buf, *q = a + T * qa, *att = q + T * qd, *k = att + T * qd, *v = k + T * d;
	ref_linear(a, h, w.wa, NULL, T, c->hid, qa);
	ref_linear(k, h, w.wk, NULL, T, c->hid, d);
	ref_linear(v, h, w.wv, NULL, T, c->hid, d);
	ref_norm(c, a, a, w.in, T, qa); /* inter_norm over share_q_dim */
	ref_linear(q, a, w.wq, NULL, T, qa, qd);
	ref_rope_layer(c, l, q, T, Hl, qd);
	ref_rope_layer(c, l, k, T, 1, d);
	double theta, factor;
	ref_attn_opt ao;
	ref_layer_attn(c, l, &theta, &factor, &ao);
	ref_attention(att, q, k, v, T, Hl, 1, kv_of, d, &ao);
	ref_linear(out, att, w.wo, NULL, T, qd, c->hid);
	free(buf);
	return WT_OK;
}
