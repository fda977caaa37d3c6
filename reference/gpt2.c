/*
 * gpt2.c — GPT-2's tensors under the names the decoder passes read (StarCoder2's LayerNorms
 * and plain MLP, Phi-3's fused qkv_proj), and its learned positions:
 *
 *   transformer.wte.     model.embed_tokens.
 *   transformer.wpe.     model.wpe.          (added to the embeddings: ref_gpt2_positions)
 *   transformer.ln_f.    model.norm.
 *   transformer.h.{i}.   model.layers.{i}.   and in a layer
 *     ln_1.              input_layernorm.
 *     ln_2.              post_attention_layernorm.
 *     attn.c_attn.       self_attn.qkv_proj.
 *     attn.c_proj.       self_attn.o_proj.
 *   (mlp.c_fc. / mlp.c_proj. and lm_head. keep their names)
 *
 * A checkpoint may name them without transformer. (openai-community/gpt2's files). Its
 * Conv1D weights (c_attn, c_proj, c_fc) are stored [in, out] and are transposed into
 * nn.Linear's [out, in] here, as vLLM's load_weights does; a rank's are already so
 * (docs/format.md section 2.7). GPTBigCode's (c->bigcode) are nn.Linear's already: renamed
 * only, its c_attn [q; k; v] with one kv head. JAIS's (c->jais) are GPT-2's with its SwiGLU
 * MLP under Llama's gated names (jais_leaves) and its scales (cfg_jais). Other tensors (the old
 * attn.masked_bias buffers) are copied under their own names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

static const char *const tops[][2] = {
    {"wte.", "model.embed_tokens."},
    {"wpe.", "model.wpe."},
    {"ln_f.", "model.norm."},
    {"h.", "model.layers."},
};
static const char *const leaves[][2] = {
    {".ln_1.", ".input_layernorm."},
    {".ln_2.", ".post_attention_layernorm."},
    {".attn.c_attn.", ".self_attn.qkv_proj."},
    {".attn.c_proj.", ".self_attn.o_proj."},
};
/* JAIS's (c->jais): GPT-2's, and its SwiGLU MLP c_fc(x) * silu(c_fc2(x)) under Llama's gated
 * MLP act(gate(x)) * up(x): c_fc2 the gate, c_fc the up projection */
static const char *const jais_leaves[][2] = {
    {".ln_1.", ".input_layernorm."},           {".ln_2.", ".post_attention_layernorm."},
    {".attn.c_attn.", ".self_attn.qkv_proj."}, {".attn.c_proj.", ".self_attn.o_proj."},
    {".mlp.c_fc2.", ".mlp.gate_proj."},        {".mlp.c_fc.", ".mlp.up_proj."},
    {".mlp.c_proj.", ".mlp.down_proj."},
};

/* name's reference form into buf; *conv when it is a Conv1D weight (c_attn / c_proj / c_fc;
 * JAIS's c_fc2). */
static int canon(const char *name, bool jais, char *buf, size_t cap, bool *conv, wt_errbuf *err)
{
	const char *in = strncmp(name, "transformer.", 12) == 0 ? name + 12 : name;
	ref_name_map lv = jais ? REF_NAME_MAP(jais_leaves) : REF_NAME_MAP(leaves);
	int top;
	int rv = ref_map_name(in, REF_NAME_MAP(tops), lv, buf, cap, &top, NULL, NULL, err);
	if (rv == WT_OK && top < 0) /* lm_head., or a name of no table: the leaves alone */
		rv = ref_map_name(name, (ref_name_map){NULL, 0}, lv, buf, cap, NULL, NULL, NULL,
		                  err);
	if (rv != WT_OK)
		return rv;
	size_t len = strlen(buf);
	*conv = len > 7 && strcmp(buf + len - 7, ".weight") == 0 &&
	        (strstr(buf, ".self_attn.qkv_proj.") || strstr(buf, ".self_attn.o_proj.") ||
	         strstr(buf, ".mlp.c_fc.") || strstr(buf, ".mlp.c_proj.") ||
	         (jais && strstr(buf, ".mlp.")));
	return WT_OK;
}

/* The checkpoint's Conv1D t [in, out] transposed into out ([out, in]). */
static int transpose(const ref_tensor *t, uint8_t *out, wt_errbuf *err)
{
	if (t->ndim != 2 || t->shape[0] < 1 || t->shape[1] < 1 || !wt_dtype_is_float(t->dtype) ||
	    t->dtype == WT_F8_E4M3 || t->dtype == WT_F8_E5M2 ||
	    t->nbytes % (uint64_t)(t->shape[0] * t->shape[1]) != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a %s Conv1D weight of %d dims; the reference "
		                 "transposes a 2-D 16- or 32-bit float [in, out]",
		                 t->name, wt_dtype_name(t->dtype), t->ndim);
	int64_t K = t->shape[0], N = t->shape[1];
	size_t es = (size_t)(t->nbytes / (uint64_t)(K * N));
	for (int64_t k = 0; k < K; k++)
		for (int64_t n = 0; n < N; n++)
			memcpy(out + (size_t)(n * K + k) * es, t->data + (size_t)(k * N + n) * es,
			       es);
	return WT_OK;
}

static int gpt2_one(const ref_rename_ctx *x, ref_set *in, const ref_tensor *t, ref_set *out,
                    wt_errbuf *err)
{
	(void)in;
	char name[512];
	bool conv = false;
	int rv = canon(t->name, x->c->jais, name, sizeof(name), &conv, err);
	if (rv != WT_OK)
		return rv;
	if (!(x->ckpt && conv && !x->c->bigcode))
		return ref_set_add_as(out, name, t, err);
	uint8_t *buf = malloc(t->nbytes ? t->nbytes : 1);
	if (buf == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	rv = transpose(t, buf, err);
	int64_t shape[2] = {t->ndim == 2 ? t->shape[1] : 0, t->ndim == 2 ? t->shape[0] : 0};
	if (rv == WT_OK)
		rv = ref_set_add(out, name, t->dtype, 2, shape, buf, t->nbytes, err);
	free(buf);
	return rv;
}

int ref_gpt2_rename(const ref_cfg *c, ref_set *in, ref_set *out, bool from_ckpt, wt_errbuf *err)
{
	return ref_rename_each(in, out, gpt2_one, c, from_ckpt, err);
}

int ref_gpt2_positions(const ref_cfg *c, ref_set *s, float *x, int64_t T, wt_errbuf *err)
{
	ref_tensor *t = ref_set_find(s, "model.wpe.weight");
	if (t == NULL || t->ndim != 2 || t->shape[1] != c->hid)
		return wt_seterr(err, WT_ENOTFOUND,
		                 "'transformer.wpe.weight' [n_positions, %lld] is missing or of "
		                 "another shape",
		                 (long long)c->hid);
	if (T > t->shape[0])
		return wt_seterr(err, WT_EINVAL,
		                 "%lld tokens need %lld learned positions; the checkpoint's "
		                 "transformer.wpe has %lld (n_positions)",
		                 (long long)T, (long long)T, (long long)t->shape[0]);
	const float *p;
	int rv = ref_getf(s, &p, false, err, 2, t->shape[0], c->hid, 0, "model.wpe.weight");
	if (rv != WT_OK)
		return rv;
	/* JAIS scales wte + wpe by embeddings_scale: x is wte's already scaled (ref_embed_scale) */
	float ps = c->jais && c->embed_scale != 0.0f ? c->embed_scale : 1.0f;
	for (int64_t i = 0; i < T * c->hid; i++)
		x[i] += p[i] * ps; /* position t's row at t * hid */
	return WT_OK;
}

/* A JAIS scale: the first of keys a and b present, else dflt; finite, nonzero, |x| < 1e6. */
static int jais_scale(const ckpt_field *a, const ckpt_field *b, double dflt, double *out,
                      wt_errbuf *err)
{
	const ckpt_field *f = a->present ? a : b;
	*out = f->present ? f->r : dflt;
	if (!(*out > -1e6 && *out < 1e6) || *out == 0.0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s %g; the reference takes a nonzero scale within "
		                 "(-1e6, 1e6)",
		                 f->key, *out);
	return WT_OK;
}

/*
 * JAIS (vLLM's jais.py over JAISConfig, vllm/transformers_utils/configs/jais.py):
 *
 *   config.json                                  default   here
 *   embeddings_scale, else mup_embeddings_scale  1.0       embed_scale (on wte + wpe)
 *   width_scale, else mup_output_alpha *         1.0, 1.0  logit_mult (the logits times it)
 *     mup_width_scale
 *   scale_qk_dot_by_d, else mup_scale_qk_dot_by_d false   attn_scale head_dim^-1, else ^-0.5
 *   position_embedding_type                      learned   alibi: jais_alibi (the slopes of
 *                                                          _get_alibi_slopes: alibi_max 8)
 *   activation_function                          gelu_new  must be swiglu (silu on c_fc2)
 */
static int cfg_jais(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	enum { J_POS, J_EMB, J_MEMB, J_WID, J_ALPHA, J_MWID, J_QKD, J_MQKD, J_COUNT };
	ckpt_field f[J_COUNT] = {
	    [J_POS] = {"position_embedding_type", CKPT_FIELD_STRING},
	    [J_EMB] = {"embeddings_scale", CKPT_FIELD_REAL},
	    [J_MEMB] = {"mup_embeddings_scale", CKPT_FIELD_REAL},
	    [J_WID] = {"width_scale", CKPT_FIELD_REAL},
	    [J_ALPHA] = {"mup_output_alpha", CKPT_FIELD_REAL},
	    [J_MWID] = {"mup_width_scale", CKPT_FIELD_REAL},
	    [J_QKD] = {"scale_qk_dot_by_d", CKPT_FIELD_BOOL},
	    [J_MQKD] = {"mup_scale_qk_dot_by_d", CKPT_FIELD_BOOL},
	};
	double emb, width, alpha, mwidth;
	int rv = ckpt_config_fields(json, len, f, J_COUNT, err);
	if (rv == WT_OK)
		rv = jais_scale(&f[J_EMB], &f[J_MEMB], 1.0, &emb, err);
	if (rv == WT_OK && f[J_WID].present)
		rv = jais_scale(&f[J_WID], &f[J_WID], 1.0, &width, err);
	if (rv == WT_OK && !f[J_WID].present) {
		rv = jais_scale(&f[J_ALPHA], &f[J_ALPHA], 1.0, &alpha, err);
		if (rv == WT_OK)
			rv = jais_scale(&f[J_MWID], &f[J_MWID], 1.0, &mwidth, err);
		width = alpha * mwidth;
	}
	if (rv != WT_OK)
		return rv;
	bool qkd = f[J_QKD].present ? f[J_QKD].b : f[J_MQKD].present && f[J_MQKD].b;
	c->embed_scale = (float)emb;
	c->logit_mult = width;
	c->attn_scale = qkd ? 1.0 / (double)c->d : 0.0; /* 0: head_dim^-0.5 */
	c->jais_alibi = f[J_POS].present && strcmp(f[J_POS].s, "alibi") == 0;
	if (c->jais_alibi)
		c->alibi_max = 8.0;
	return WT_OK;
}

/* GPT2Config's keys (transformers 4.57.1 configuration_gpt2.py); GPTBigCodeConfig's the same
 * with activation_function gelu_pytorch_tanh by default (configuration_gpt_bigcode.py); JAIS's
 * with its scales (cfg_jais). */
int ref_cfg_gpt2(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	enum { G_ACT, G_EPS, G_COUNT };
	ckpt_field f[G_COUNT] = {
	    [G_ACT] = {"activation_function", CKPT_FIELD_STRING},
	    [G_EPS] = {"layer_norm_epsilon", CKPT_FIELD_REAL},
	};
	(void)arch;
	int rv = ckpt_config_fields(json, len, f, G_COUNT, err);
	if (rv == WT_OK && c->jais) { /* SwiGLU: silu on c_fc2, read as Llama's gate */
		if (!f[G_ACT].present || strcmp(f[G_ACT].s, "swiglu") != 0)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: JAIS's activation_function must be swiglu");
		c->act = REF_ACT_SILU;
		rv = cfg_jais(c, json, len, err);
	} else if (rv == WT_OK)
		rv = ref_cfg_act(&f[G_ACT], c->bigcode ? "gelu_pytorch_tanh" : "gelu_new", c, err);
	if (rv != WT_OK)
		return rv;
	c->eps = f[G_EPS].present ? f[G_EPS].r : 1e-5;
	c->theta = 10000.0; /* unused: learned positions, no RoPE */
	return WT_OK;
}
