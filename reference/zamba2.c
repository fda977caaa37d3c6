/*
 * zamba2.c — Zamba2 (Zamba2ForCausalLM; transformers 4.57.1, modeling_zamba2.py without a
 * cache, eager attention), for the full path (the checkpoint) and the sharded one (every tp
 * rank) alike.
 *
 * x = embed_tokens[tokens] (kept as e, the original_hidden_states); per layer
 *   hybrid layer i (order j among the hybrid layers, block k = j % num_mem_blocks held under
 *   the first hybrid layer running it):
 *     u = RMSNorm_2hid([x; e]) (shared_transformer.input_layernorm);
 *     q / k / v = u W^T + (u A_j^T) B_j^T (the attention adapters with
 *       use_shared_attention_adapter), RoPE on each head of d = 2 hid / H with use_mem_rope,
 *     a = causal softmax(q k^T * (d / 2)^-0.5) v, o = a W_o^T;
 *     g = RMSNorm(o) (pre_ff_layernorm); gu = g W_gu^T (+ b) + (g A_j^T) B_j^T;
 *     f = (gelu(gu[:I]) * gu[I:]) W_down^T (+ b); t = f W_linear^T (layer i's linear);
 *     x = x + mixer(RMSNorm(x + t)) (mamba_decoder.input_layernorm, the mixer under
 *     mamba_decoder.mamba.);
 *   Mamba layer: x = x + mixer(RMSNorm(x)) (input_layernorm, mamba.);
 * then final_layernorm and the LM head. The mixer is Granite 4.0's (granite4.c) with silu
 * and Zamba2RMSNormGated's norm per mamba_n_groups group; its input eps is rms_norm_eps
 * (transformers fixes the gated norm's at 1e-5, Zamba2Config's default; vLLM reads
 * rms_norm_eps), dt unclamped (transformers' torch_forward clamps it below at
 * time_step_min, 0.001 by default, vLLM does not: softplus outputs under it are rare).
 *
 * The hybrid layers' mixers are read under the Mamba layers' names (ref_z2_rename), so the
 * Granite 4.0 passes run them. A tp rank holds its heads of q / k / v (qkv_proj) and their
 * rows of each adapter's B, its o_proj columns, its rows of adapter_rank of each A (the
 * ranks' A outputs are all-gathered: ColumnParallelLinear with gather_output), [gate_r;
 * up_r] of gate_up_proj and of the MLP adapter's B, its down_proj columns; norms and linear
 * whole on every rank (each rank normalises with its own copy; linear's output is the mean
 * of the ranks'). o and the MLP's output are all-reduced in rank order, down_proj's bias
 * added once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/shard_int.h"

#define ST "model.layers.%lld.shared_transformer."

/* The order of hybrid layer l among the hybrid layers, -1 if l is a Mamba layer. */
static int64_t z2_order(const ref_cfg *c, int64_t l)
{
	if (!ref_l4_bit(c->z2_hybrid, l))
		return -1;
	int64_t j = 0;
	for (int64_t k = 0; k < l; k++)
		j += ref_l4_bit(c->z2_hybrid, k);
	return j;
}

/* The layer holding block k: the hybrid layer of order k. */
static int64_t z2_home(const ref_cfg *c, int64_t k)
{
	for (int64_t l = 0, j = 0; l < c->L; l++)
		if (ref_l4_bit(c->z2_hybrid, l) && j++ == k)
			return l;
	return -1;
}

/* What the sets of a block pass hold: n sets (the checkpoint, or the tp ranks in order),
 * each hl heads, il rows of I and rl rows of adapter_rank (ckpt: the checkpoint's q / k /
 * v_proj, else the ranks' qkv_proj). */
typedef struct z2_pass {
	ref_set **sets;
	int64_t n, hl, il, rl;
	bool ckpt;
	long long home, j;
	float *u;  /* [n][T, 2 hid] each set's normed input */
	float *ar; /* [T, adapter_rank] the all-gathered A output */
} z2_pass;

/* p->ar = the all-gather over the sets of x_r A_r^T, A_r = adapter list `list`'s .0 of j
 * ([rl, k]); x_r = x + r * xs (xs 0: one input for all). */
static int z2_gather_a(const ref_cfg *c, z2_pass *p, const char *list, const float *x, int64_t xs,
                       int64_t k, int64_t T, wt_errbuf *err)
{
	float *part = malloc((size_t)(T * p->rl) * sizeof(float));
	if (part == NULL)
		return wt_seterr(err, WT_ENOMEM, "Zamba2 adapter: out of memory");
	int rv = WT_OK;
	for (int64_t r = 0; r < p->n && rv == WT_OK; r++) {
		const float *a;
		if ((rv = ref_getf(p->sets[r], &a, false, err, 2, p->rl, k, 0,
		                   ST "%s.%lld.0.weight", p->home, list, p->j)))
			break;
		ref_linear(part, x + r * xs, a, NULL, T, k, p->rl);
		for (int64_t t = 0; t < T; t++)
			memcpy(p->ar + t * c->z2_rank + r * p->rl, part + t * p->rl,
			       (size_t)p->rl * sizeof(float));
	}
	free(part);
	return rv;
}

/* y [T, rows] += p->ar B^T, B = adapter list `list`'s .1 of j in set s ([rows, rank]). */
static int z2_add_b(const ref_cfg *c, const z2_pass *p, ref_set *s, const char *list, float *y,
                    int64_t rows, int64_t T, float *tmp, wt_errbuf *err)
{
	const float *b;
	int rv = ref_getf(s, &b, false, err, 2, rows, c->z2_rank, 0, ST "%s.%lld.1.weight", p->home,
	                  list, p->j);
	if (rv != WT_OK)
		return rv;
	ref_linear(tmp, p->ar, b, NULL, T, c->z2_rank, rows);
	for (int64_t i = 0; i < T * rows; i++)
		y[i] += tmp[i];
	return WT_OK;
}

/* Set r's q / k / v [T, hl * d] each (with the adapters' B rows), RoPE'd. */
static int z2_qkv(const ref_cfg *c, z2_pass *p, int64_t r, int64_t T, float *q, float *k, float *v,
                  float *tmp, wt_errbuf *err)
{
	static const char *const x[3] = {"q", "k", "v"};
	int64_t w2 = 2 * c->hid, qd = p->hl * c->d;
	float *out[3] = {q, k, v};
	const float *u = p->u + r * T * w2, *w;
	int rv = WT_OK;
	if (!p->ckpt) {
		if ((rv = ref_getf(p->sets[r], &w, false, err, 2, 3 * qd, w2, 0,
		                   ST "self_attn.qkv_proj.weight", p->home)))
			return rv;
		ref_linear(tmp, u, w, NULL, T, w2, 3 * qd);
		for (int64_t t = 0; t < T; t++)
			for (int m = 0; m < 3; m++)
				memcpy(out[m] + t * qd, tmp + t * 3 * qd + m * qd,
				       (size_t)qd * sizeof(float));
	}
	for (int m = 0; m < 3 && p->ckpt && rv == WT_OK; m++)
		if ((rv = ref_getf(p->sets[r], &w, false, err, 2, qd, w2, 0,
		                   ST "self_attn.%s_proj.weight", p->home, x[m])) == WT_OK)
			ref_linear(out[m], u, w, NULL, T, w2, qd);
	for (int m = 0; m < 3 && c->z2_attn_ad && rv == WT_OK; m++) {
		char list[40];
		snprintf(list, sizeof(list), "self_attn.linear_%s_adapter_list", x[m]);
		if ((rv = z2_gather_a(c, p, list, p->u, T * w2, w2, T, err)) == WT_OK)
			rv = z2_add_b(c, p, p->sets[r], list, out[m], qd, T, tmp, err);
	}
	if (rv == WT_OK && c->z2_rope) {
		ref_rope(q, T, p->hl, c->d, qd, c->theta);
		ref_rope(k, T, p->hl, c->d, qd, c->theta);
	}
	return rv;
}

/* o [T, hid] = the all-reduce of each set's attention through its o_proj columns. */
static int z2_attention(const ref_cfg *c, z2_pass *p, int64_t T, float *o, wt_errbuf *err)
{
	int64_t qd = p->hl * c->d, kv_of[REF_MAX_HEADS];
	size_t nq = (size_t)(T * qd);
	float *buf = malloc((nq * 7 + (size_t)(T * c->hid)) * sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "Zamba2 attention: out of memory");
	float *q = buf, *k = q + nq, *v = k + nq, *att = v + nq, *tmp = att + nq,
	      *po = tmp + 3 * nq;
	for (int64_t h = 0; h < p->hl && h < REF_MAX_HEADS; h++)
		kv_of[h] = h;
	ref_attn_opt ao = {.causal = true, .scale = 1.0f / sqrtf((float)c->d / 2.0f)};
	memset(o, 0, (size_t)(T * c->hid) * sizeof(float));
	int rv = WT_OK;
	for (int64_t r = 0; r < p->n && rv == WT_OK; r++) {
		const float *wo;
		if ((rv = z2_qkv(c, p, r, T, q, k, v, tmp, err)) ||
		    (rv = ref_getf(p->sets[r], &wo, false, err, 2, c->hid, qd, 0,
		                   ST "self_attn.o_proj.weight", p->home)))
			break;
		ref_attention(att, q, k, v, T, p->hl, p->hl, kv_of, c->d, &ao);
		ref_linear(po, att, wo, NULL, T, qd, c->hid);
		for (int64_t i = 0; i < T * c->hid; i++)
			o[i] += po[i];
	}
	free(buf);
	return rv;
}

/* f [T, hid] = the all-reduce of each set's MLP on its pre_ff_layernorm of o, down_proj's
 * bias once. */
static int z2_mlp(const ref_cfg *c, z2_pass *p, const float *o, int64_t T, float *f, wt_errbuf *err)
{
	int64_t hid = c->hid, il = p->il;
	size_t ng = (size_t)(T * 2 * il);
	float *buf =
	    malloc(((size_t)p->n * (size_t)(T * hid) + 2 * ng + (size_t)(T * hid)) * sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "Zamba2 MLP: out of memory");
	float *g = buf, *gu = g + p->n * T * hid, *tmp = gu + ng, *po = tmp + ng;
	int rv = WT_OK;
	for (int64_t r = 0; r < p->n && rv == WT_OK; r++)
		rv = ref_norm_of(c, p->sets[r], g + r * T * hid, o, T, err, ST "pre_ff_layernorm",
		                 p->home);
	if (rv == WT_OK)
		rv = z2_gather_a(c, p, "feed_forward.gate_up_proj_adapter_list", g, T * hid, hid, T,
		                 err);
	memset(f, 0, (size_t)(T * hid) * sizeof(float));
	for (int64_t r = 0; r < p->n && rv == WT_OK; r++) {
		const float *w, *b, *wd;
		ref_set *s = p->sets[r];
		if ((rv = ref_getf(s, &w, false, err, 2, 2 * il, hid, 0,
		                   ST "feed_forward.gate_up_proj.weight", p->home)) ||
		    (rv = ref_getf(s, &b, true, err, 1, 2 * il, 0, 0,
		                   ST "feed_forward.gate_up_proj.bias", p->home)) ||
		    (rv = ref_getf(s, &wd, false, err, 2, hid, il, 0,
		                   ST "feed_forward.down_proj.weight", p->home)))
			break;
		ref_linear(gu, g + r * T * hid, w, b, T, hid, 2 * il);
		if ((rv = z2_add_b(c, p, s, "feed_forward.gate_up_proj_adapter_list", gu, 2 * il, T,
		                   tmp, err)))
			break;
		for (int64_t t = 0; t < T; t++)
			ref_act_mul(tmp + t * il, gu + t * 2 * il, gu + t * 2 * il + il, il,
			            REF_ACT_GELU);
		ref_linear(po, tmp, wd, NULL, T, il, hid);
		for (int64_t i = 0; i < T * hid; i++)
			f[i] += po[i];
	}
	const float *bd;
	if (rv == WT_OK && (rv = ref_getf(p->sets[0], &bd, true, err, 1, hid, 0, 0,
	                                  ST "feed_forward.down_proj.bias", p->home)) == WT_OK)
		for (int64_t t = 0; bd && t < T; t++)
			for (int64_t i = 0; i < hid; i++)
				f[t * hid + i] += bd[i];
	free(buf);
	return rv;
}

/* xin [T, hid] = x + linear(block(x, e)) of hybrid layer l over the sets of p. */
static int z2_block(const ref_cfg *c, z2_pass *p, int64_t l, const float *x, const float *e,
                    int64_t T, float *xin, wt_errbuf *err)
{
	int64_t hid = c->hid, w2 = 2 * hid, j = z2_order(c, l);
	p->j = j;
	p->home = z2_home(c, j % c->z2_blocks);
	size_t nu = (size_t)(p->n * T * w2);
	float *buf = malloc((nu + (size_t)(T * w2 + T * c->z2_rank + 3 * T * hid)) * sizeof(float));
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "Zamba2 layer %lld: out of memory", (long long)l);
	float *in = buf + nu, *o = in + T * w2, *f = o + T * hid, *t2 = f + T * hid;
	p->u = buf;
	p->ar = t2 + T * hid;
	for (int64_t t = 0; t < T; t++) { /* [hidden_states; original_hidden_states] */
		memcpy(in + t * w2, x + t * hid, (size_t)hid * sizeof(float));
		memcpy(in + t * w2 + hid, e + t * hid, (size_t)hid * sizeof(float));
	}
	int rv = WT_OK;
	for (int64_t r = 0; r < p->n && rv == WT_OK; r++) {
		const float *w;
		if ((rv = ref_getf(p->sets[r], &w, false, err, 1, w2, 0, 0,
		                   ST "input_layernorm.weight", p->home)) == WT_OK)
			ref_rmsnorm(p->u + r * T * w2, in, w, T, w2, (float)c->eps);
	}
	if (rv == WT_OK)
		rv = z2_attention(c, p, T, o, err);
	if (rv == WT_OK)
		rv = z2_mlp(c, p, o, T, f, err);
	memcpy(xin, x, (size_t)(T * hid) * sizeof(float));
	for (int64_t r = 0; r < p->n && rv == WT_OK; r++) { /* each rank's replicated linear */
		const float *w;
		if ((rv = ref_getf(p->sets[r], &w, false, err, 2, hid, hid, 0,
		                   "model.layers.%lld.linear.weight", (long long)l)))
			break;
		ref_linear(t2, f, w, NULL, T, hid, hid);
		for (int64_t i = 0; i < T * hid; i++)
			xin[i] += t2[i] / (float)p->n;
	}
	free(buf);
	return rv;
}

int ref_z2_input_full(const ref_cfg *c, ref_set *s, int64_t l, int64_t T, ref_bufs *b,
                      wt_errbuf *err)
{
	if (l == 0) /* the embeddings, the shared blocks' original_hidden_states */
		memcpy(b->sc, b->x, (size_t)(T * c->hid) * sizeof(float));
	const float *xin = b->x;
	if (z2_order(c, l) >= 0) {
		ref_set *sets[1] = {s};
		z2_pass p = {
		    .sets = sets, .n = 1, .hl = c->H, .il = c->I, .rl = c->z2_rank, .ckpt = true};
		int rv = z2_block(c, &p, l, b->x, b->sc, T, b->y, err);
		if (rv != WT_OK)
			return rv;
		xin = b->y;
	}
	return ref_block_input(c, s, b->h, xin, T, l, "input_layernorm", err);
}

int ref_z2_input_sharded(shard *s, int64_t l, const float **xin)
{
	const ref_cfg *c = s->c;
	int64_t T = s->n_tok, tp = (int64_t)s->T;
	if (l == 0)
		memcpy(s->b.sc, s->b.x, (size_t)(T * c->hid) * sizeof(float));
	*xin = s->b.x;
	if (z2_order(c, l) < 0)
		return WT_OK;
	if (c->H % tp || c->I % tp || c->z2_rank % tp)
		return wt_seterr(s->err, WT_ELAYOUT,
		                 "layout tp %lld does not fit Zamba2's %lld heads, intermediate "
		                 "%lld and adapter_rank %lld; the planner refuses it too",
		                 (long long)tp, (long long)c->H, (long long)c->I,
		                 (long long)c->z2_rank);
	ref_set *sets[REF_Z2_MAX_TP];
	if (tp > REF_Z2_MAX_TP)
		return wt_seterr(s->err, WT_EUNSUPPORTED,
		                 "tp %lld; the reference runs Zamba2 to %d", (long long)tp,
		                 REF_Z2_MAX_TP);
	for (int64_t r = 0; r < tp; r++)
		sets[r] = rank_set(s, (uint32_t)r, s->g);
	z2_pass p = {
	    .sets = sets, .n = tp, .hl = c->H / tp, .il = c->I / tp, .rl = c->z2_rank / tp};
	int rv = z2_block(c, &p, l, s->b.x, s->b.sc, T, s->b.y, s->err);
	*xin = s->b.y;
	return rv;
}

/* name under the Mamba layers' names into buf: model.layers.{i}.mamba_decoder.mamba.X ->
 * model.layers.{i}.mamba.X, mamba_decoder.input_layernorm -> input_layernorm. */
static const char *z2_canon(const char *name, char *buf, size_t cap)
{
	const char *m = strstr(name, ".mamba_decoder.");
	if (m == NULL || strncmp(name, "model.layers.", 13) != 0)
		return name;
	int n = snprintf(buf, cap, "%.*s.%s", (int)(m - name), name, m + 15);
	return n > 0 && (size_t)n < cap ? buf : NULL;
}

bool ref_z2_named(const ref_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (strstr(s->t[i].name, ".mamba_decoder.") != NULL)
			return true;
	return false;
}

static int z2_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                  wt_errbuf *err)
{
	(void)x, (void)in;
	char buf[512];
	const char *name = z2_canon(t->name, buf, sizeof(buf));
	return name == NULL ? wt_seterr(err, WT_EINVAL, "tensor '%s': name too long", t->name)
	                    : ref_set_add_as(out, name, t, err);
}

int ref_z2_rename(ref_set *in, ref_set *out, wt_errbuf *err)
{
	return ref_rename_each(in, out, z2_one, NULL, false, err);
}

int ref_z2_layers(const ckpt_config *cc, ref_cfg *c, wt_errbuf *err)
{
	c->zamba2 = true;
	c->z2_blocks = cc->z2_mem_blocks;
	c->z2_rank = cc->z2_adapter_rank;
	c->z2_attn_ad = cc->z2_attn_adapter;
	c->m_norm_groups = cc->mamba_n_groups;
	if (c->L > REF_L4_MAX_LAYERS || c->m_norm_groups > REF_G4_MAX_NORM_GROUPS ||
	    c->z2_blocks < 1 || c->z2_rank < 1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %lld layers, mamba_ngroups %lld, num_mem_blocks %lld, "
		    "adapter_rank %lld; the reference runs Zamba2 with up to %d layers "
		    "and %d groups",
		    (long long)c->L, (long long)c->m_norm_groups, (long long)c->z2_blocks,
		    (long long)c->z2_rank, REF_L4_MAX_LAYERS, REF_G4_MAX_NORM_GROUPS);
	for (int64_t i = 0; i < c->L && (size_t)i < cc->n_layer_types; i++)
		if (cc->layer_types[i] == CKPT_LAYER_HYBRID)
			c->z2_hybrid[i / 64] |= 1ull << (i % 64);
	return WT_OK;
}

int ref_cfg_zamba2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	const char *a = arch ? arch : "Zamba2ForCausalLM";
	json_t *act = ref_lm_get(root, "hidden_act"), *eps = ref_lm_get(root, "rms_norm_eps");
	json_t *rope = ref_lm_get(root, "use_mem_rope"), *lc = ref_lm_get(root, "use_long_context");
	c->act = REF_ACT_GELU;
	c->eps = json_is_number(eps) ? json_number_value(eps) : 1e-5; /* Zamba2Config's */
	c->z2_rope = json_is_true(rope);
	int rv = WT_OK;
	if (act != NULL && !(json_is_string(act) && strcmp(json_string_value(act), "gelu") == 0))
		rv =
		    wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s's hidden_act must be gelu", a);
	else if (c->z2_rope && json_is_true(lc))
		rv = wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: use_long_context with use_mem_rope: Zamba2Config "
		    "rescales rope_theta in its constructor, again each time it reads its "
		    "own saved config; the reference does not guess which base is meant");
	else if (c->d * c->H != 2 * c->hid || c->m_heads < 1 || c->m_dh < 1 || c->m_groups < 1 ||
	         c->m_state < 1 || c->m_conv < 1 || c->m_heads % c->m_groups != 0)
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: %s needs head_dim x heads = 2 x hidden_size (%lld x "
		               "%lld, %lld) and the mixer's sizes (heads %lld of %lld, groups %lld "
		               "dividing them, state %lld, conv %lld)",
		               a, (long long)c->d, (long long)c->H, (long long)c->hid,
		               (long long)c->m_heads, (long long)c->m_dh, (long long)c->m_groups,
		               (long long)c->m_state, (long long)c->m_conv);
	json_decref(root);
	return rv;
}
