/*
 * ckpt.c — the reference forward pass over a checkpoint and over the ranks the
 * planner produces from it (ckpt.h). The reference configuration of a checkpoint
 * (ref_cfg_from_ckpt: the sizes and per-layer patterns from the loader's parse): ckpt_cfg.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "loader/loader_mistral.h"
#include "reference/ckpt.h"
#include "reference/reference_int.h"

/* Gemma 3 multimodal keeps its language model under language_model., Qwen2.5-Omni under
 * thinker. (with its towers and speech generator), Idefics3 / SmolVLM
 * under model.text_model. (docs/format.md 2.7): both paths read it under the text model's
 * names (model.*, lm_head.*), as the Qwen2-VL language model is read; the vision tower's
 * tensors are loaded, unused. RoBERTa's sequence classifiers keep their encoder under
 * roberta.: read under RobertaModel's names; BERT's heads under bert.: BertModel's names. The
 * decoder embedding models (base, the *_emb families) name the decoder without model.: read
 * under the causal LM's names. buf holds a rewritten name. */
static const char *lm_name(const char *name, bool base, char *buf, size_t cap)
{
	static const char *const bare[] = {"embed_tokens.", "layers.", "norm."};
	for (size_t i = 0; base && i < sizeof(bare) / sizeof(bare[0]); i++)
		if (strncmp(name, bare[i], strlen(bare[i])) == 0 &&
		    (size_t)snprintf(buf, cap, "model.%s", name) < cap)
			return buf;
	/* prefixes dropped: RoBERTa's sequence classifiers' encoder, BERT's and GTE's heads'
	 * encoder, Qwen2.5-Omni's thinker (model.*, lm_head.*), the Gemma 3 / LLaVA-style LM */
	static const char *const drop[] = {"roberta.", "bert.", "new.", "thinker.",
	                                   "language_model."};
	for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
		if (strncmp(name, drop[k], strlen(drop[k])) == 0)
			return name + strlen(drop[k]);
	static const char tm[] = "model.text_model.";
	if (strncmp(name, tm, sizeof(tm) - 1) == 0 &&
	    (size_t)snprintf(buf, cap, "model.%s", name + sizeof(tm) - 1) < cap)
		return buf;
	return name;
}

/* Is c's family a decoder embedding model saved as a base model (llama_emb, ...)? */
static bool base_names(const ckpt *c)
{
	const char *f = shardmap_family_of(ckpt_get_config(c));
	size_t n = f != NULL ? strlen(f) : 0;
	return n > 4 && strcmp(f + n - 4, "_emb") == 0;
}

/* Mistral's native wq / wk (loader_mistral.h): *buf's rows de-interleaved per head into
 * transformers' order (as the planner's SM_SRC_ROPE load); *buf replaced. */
static int rope_rows(const ckpt_tensor *t, int64_t heads, void **buf, wt_errbuf *err)
{
	int64_t rows = t->ndim == 2 ? t->shape[0] : 0;
	if (rows <= 0 || rows % (2 * heads) != 0)
		return wt_seterr(err, WT_EINVAL,
		                 "tensor '%s': rows are not %lld heads of RoPE pairs", t->name,
		                 (long long)heads);
	uint8_t *hf = malloc(t->nbytes ? t->nbytes : 1);
	if (hf == NULL)
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
	kern_deinterleave_rows(hf, *buf, heads, rows / heads / 2,
	                       (size_t)(t->nbytes / (uint64_t)rows));
	free(*buf);
	*buf = hf;
	return WT_OK;
}

/* Read every checkpoint tensor into ck under the names the family's rules use
 * (shardmap_canonical_name: a transformers 5.x checkpoint's names become the
 * 4.x ones), and the configuration into cfg (ref_cfg_from_ckpt). */
int ref_load_ckpt(const ckpt *c, ref_cfg *cfg, ref_set *ck, wt_errbuf *err)
{
	size_t len = 0;
	const char *json = ckpt_config_json(c, &len);
	int rv = ref_cfg_from_ckpt(ckpt_get_config(c), json, len, cfg, err);
	if (rv != WT_OK)
		return rv;
	ck->quant = WT_QUANT_NONE;
	ck->block[0] = cfg->block[0];
	ck->block[1] = cfg->block[1];
	ck->fp8_rows = ckpt_get_config(c)->quant == CKPT_QUANT_FBGEMM_FP8 ||
	               ckpt_get_config(c)->quant == CKPT_QUANT_CT_FP8;
	ck->fp8_blocks_ct = ckpt_get_config(c)->quant_block_ct;
	bool base = base_names(c);
	for (size_t i = 0; i < ckpt_n_tensors(c) && rv == WT_OK; i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		void *buf = malloc(t->nbytes ? t->nbytes : 1);
		if (buf == NULL)
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
		char cbuf[512], wbuf[512], lbuf[512];
		const char *name = shardmap_canonical_name(c, t->name, cbuf, sizeof(cbuf));
		float *deq = NULL; /* compressed-tensors weight: its F32 values as X.weight */
		int64_t dshape[2];
		if (name != NULL)
			rv = shardmap_ct_weight_f32(c, i, wbuf, sizeof(wbuf), &deq, dshape, err);
		if (deq != NULL) {
			rv = ref_set_add(ck, wbuf, WT_F32, 2, dshape, deq,
			                 (uint64_t)(dshape[0] * dshape[1]) * 4u, err);
			free(deq);
			free(buf);
			continue;
		}
		if (rv == WT_OK)
			rv = ckpt_read(c, t, 0, buf, t->nbytes, err);
		if (rv == WT_OK && ckpt_rope_heads(c, i) > 0) /* Mistral's native wq / wk */
			rv = rope_rows(t, ckpt_rope_heads(c, i), &buf, err);
		if (rv == WT_OK && name == NULL)
			rv = wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
		if (rv == WT_OK)
			rv = ref_set_add(ck, lm_name(name, base, lbuf, sizeof(lbuf)), t->dtype,
			                 t->ndim, t->shape, buf, t->nbytes, err);
		free(buf);
	}
	return rv;
}

typedef struct ref_emit_ctx {
	const sm_plan *p;
	ref_set *ranks;
	bool base; /* base_names: the runtime names lack model. */
} ref_emit_ctx;

static int ref_emit(void *ctx, uint32_t rank, size_t ix, const void *bytes, uint64_t nbytes,
                    wt_errbuf *err)
{
	ref_emit_ctx *e = ctx;
	const sm_out_info *t = shardmap_rank_tensor(e->p, rank, ix);
	if (t == NULL || nbytes != t->nbytes)
		return wt_seterr(
		    err, WT_ESHAPE, "rank %u tensor %zu: %llu bytes emitted, plan says %llu", rank,
		    ix, (unsigned long long)nbytes, (unsigned long long)(t ? t->nbytes : 0));
	char lbuf[512];
	return ref_set_add(&e->ranks[rank], lm_name(t->name, e->base, lbuf, sizeof(lbuf)), t->dtype,
	                   t->ndim, t->shape, bytes, nbytes, err);
}
/* Produce every rank of plan p into a new array of shardmap_n_ranks(p) sets (caller frees
 * with ref_free_ranks). */
int ref_load_ranks(const ckpt *c, const sm_plan *p, const wt_layout *l, ref_set **out,
                   wt_errbuf *err)
{
	uint32_t n = shardmap_n_ranks(p);
	ref_set *r = calloc(n ? n : 1, sizeof(*r));
	if (r == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %u rank sets", n);
	for (uint32_t i = 0; i < n; i++) {
		r[i].quant = l->quant;
		r[i].group = l->group_size;
	}
	ref_emit_ctx e = {p, r, base_names(c)};
	int rv = shardmap_produce(c, p, -1, ref_emit, &e, err);
	if (rv != WT_OK) {
		for (uint32_t i = 0; i < n; i++)
			ref_set_clear(&r[i]);
		free(r);
		return rv;
	}
	*out = r;
	return WT_OK;
}
void ref_free_ranks(ref_set *r, uint32_t n)
{
	for (uint32_t i = 0; r && i < n; i++)
		ref_set_clear(&r[i]);
	free(r);
}
/*
 * The budget a layout is held to, with its reason in *why: exact
 * (REF_TOL_F32) when the rank tensors hold the checkpoint's values
 * bit for bit (same float dtype, F32 output, FP8-block or fbgemm_fp8 fp8-channel
 * pass-through; an MXFP4
 * source's values in BF16 too), the rounding budget when an unquantized output
 * narrows them, else the scheme's (REF_BUDGET_MX_* for an MXFP4 source).
 */
double ref_layout_budget(ref_set *ck, const wt_layout *l, const char **why)
{
	bool fp8 = false, blocks = false, wscale = false, shapes = false, groups = false,
	     chan = false, mx = false, lin = false;
	static const char qkvz[] = ".linear_attn.in_proj_qkvz.weight",
	                  p2[] = ".mixer.bcdt_proj.weight";
	wt_dtype src = WT_DTYPE_INVALID;
	for (size_t i = 0; i < ck->n; i++) {
		const ref_tensor *t = &ck->t[i];
		size_t len = strlen(t->name);
		fp8 = fp8 || t->dtype == WT_F8_E4M3;
		/* MXFP4 (docs/format.md 4.6): X_blocks U8 beside X_scales */
		mx = mx ||
		     (t->dtype == WT_U8 && len > 7 && strcmp(t->name + len - 7, "_blocks") == 0);
		/* a gated delta net (Qwen3-Next's linear attention), PLaMo 2's Mamba mixer */
		lin = lin ||
		      (len > sizeof(qkvz) - 1 &&
		       strcmp(t->name + len - (sizeof(qkvz) - 1), qkvz) == 0) ||
		      (len > sizeof(p2) - 1 && strcmp(t->name + len - (sizeof(p2) - 1), p2) == 0);
		blocks = blocks || (len > 10 && strcmp(t->name + len - 10, "_scale_inv") == 0);
		wscale = wscale || (len > 13 && strcmp(t->name + len - 13, ".weight_scale") == 0);
		/* int4: group scales [N, K/G > 1], or packed (weight_shape beside it) without
		 * per-channel scales [N, 1] (8-bit pack-quantized has those) */
		bool sc2 =
		    len > 13 && strcmp(t->name + len - 13, ".weight_scale") == 0 && t->ndim == 2;
		shapes = shapes || (len > 13 && strcmp(t->name + len - 13, ".weight_shape") == 0);
		groups = groups || (sc2 && t->shape[1] > 1);
		chan = chan || (sc2 && t->shape[1] == 1);
		if (strcmp(t->name, "model.embed_tokens.weight") == 0 ||
		    strcmp(t->name, "embeddings.word_embeddings.weight") == 0)
			src = t->dtype;
	}
	/* compressed-tensors' block scales are weight_scale (the config says so) */
	blocks = blocks || ck->fp8_blocks_ct;
	if (l->quant == WT_QUANT_FP8_BLOCK && blocks && !l->requant_allow) {
		*why = "fp8-block pass-through: exact up to float32 summation order";
		return REF_TOL_F32;
	}
	if (l->quant == WT_QUANT_FP8_CHANNEL && ck->fp8_rows) { /* docs/format.md 4.7 */
		*why = "fbgemm_fp8 fp8-channel pass-through: exact up to float32 summation order";
		return REF_TOL_F32;
	}
	/* compressed-tensors (docs/format.md 4.5): weight_scale without FP8 weights; int4 has
	 * weight_shape. Pass-through keeps the values the full path dequantized. */
	bool ct = wscale && !fp8, i4 = groups || (shapes && !chan);
	if (ct && l->quant == (i4 ? WT_QUANT_INT4_GROUP : WT_QUANT_INT8_CHANNEL) &&
	    !l->requant_allow) {
		*why = "compressed-tensors pass-through: exact up to float32 summation order";
		return REF_TOL_F32;
	}
	fp8 = fp8 || ct; /* a quantized source: unquantized outputs default to BF16 */
	if (l->quant != WT_QUANT_NONE && mx) {
		*why = "quantization budget of the scheme on an MXFP4 source";
		return ref_budget_mx(l->quant);
	}
	if (l->quant != WT_QUANT_NONE && lin) {
		*why =
		    "quantization budget of the scheme for a model with gated-delta-net layers or "
		    "PLaMo 2's Mamba mixers";
		return ref_budget_lin(l->quant);
	}
	if (l->quant != WT_QUANT_NONE) {
		*why = "quantization budget of the scheme";
		return ref_budget(l->quant);
	}
	wt_dtype out = l->dtype == WT_DTYPE_INVALID ? (fp8 ? WT_BF16 : src) : l->dtype;
	if (out == WT_F32 || (!fp8 && out == src)) {
		*why = "float32 summation order only";
		return REF_TOL_F32;
	}
	*why = ct    ? "compressed-tensors checkpoint emitted as BF16/F16: rounding budget"
	       : fp8 ? "FP8 checkpoint emitted as BF16/F16: rounding budget"
	             : "narrower output dtype: rounding budget";
	return REF_BUDGET_ROUND;
}
/* The full path of f's checkpoint on its tokens into f->out (and f->routes for an MoE model),
 * once. */
static int full_once(ref_full *f, wt_errbuf *err)
{
	if (f->out != NULL)
		return WT_OK;
	size_t n_out = ref_out_count(&f->cfg, f->n_tok);
	float *out = malloc(n_out * sizeof(float));
	/* recorded always: quantized layouts follow the full path's expert choices
	 * (ref_forward_sharded), unquantized ones route on their own */
	int64_t *routes = f->cfg.E > 0
	                      ? calloc((size_t)(f->cfg.L * f->cfg.topk) * f->n_tok, sizeof(int64_t))
	                      : NULL;
	int rv = WT_OK;
	if (out == NULL || (f->cfg.E > 0 && routes == NULL))
		rv = wt_seterr(err, WT_ENOMEM, "logits: out of memory");
	else
		rv = ref_forward_full(&f->cfg, &f->ck, f->tokens, f->n_tok, out, routes, err);
	if (rv != WT_OK) {
		free(out);
		free(routes);
		return rv;
	}
	f->out = out;
	f->routes = routes;
	return WT_OK;
}

int ref_full_load(const ckpt *c, const int64_t *tokens, size_t n_tok, ref_full *f, wt_errbuf *err)
{
	memset(f, 0, sizeof(*f));
	f->tokens = malloc((n_tok ? n_tok : 1) * sizeof(int64_t));
	if (f->tokens == NULL)
		return wt_seterr(err, WT_ENOMEM, "tokens: out of memory");
	memcpy(f->tokens, tokens, n_tok * sizeof(int64_t));
	f->n_tok = n_tok;
	int rv = ref_load_ckpt(c, &f->cfg, &f->ck, err);
	if (rv != WT_OK)
		ref_full_clear(f);
	return rv;
}

void ref_full_clear(ref_full *f)
{
	free(f->out);
	free(f->routes);
	free(f->tokens);
	ref_set_clear(&f->ck);
	memset(f, 0, sizeof(*f));
}

int ref_verify_full(const ckpt *c, ref_full *f, const wt_layout *l, ref_tamper_fn tamper,
                    void *tctx, ref_result *res, wt_errbuf *err)
{
	ref_set *ranks = NULL;
	sm_plan *p = NULL;
	float *sh = NULL;
	uint32_t n = 0;
	memset(res, 0, sizeof(*res));
	int rv = shardmap_plan(c, l, &p, err);
	if (rv == WT_OK) {
		n = shardmap_n_ranks(p);
		rv = ref_load_ranks(c, p, l, &ranks, err);
	}
	if (rv != WT_OK)
		goto out;
	size_t n_out = ref_out_count(&f->cfg, f->n_tok);
	if ((sh = malloc(n_out * sizeof(float))) == NULL) {
		rv = wt_seterr(err, WT_ENOMEM, "logits: out of memory");
		goto out;
	}
	if (tamper)
		tamper(tctx, ranks, n);
	if ((rv = full_once(f, err)) != WT_OK)
		goto out;
	const int64_t *routes = l->quant != WT_QUANT_NONE ? f->routes : NULL;
	res->budget = ref_layout_budget(&f->ck, l, &res->why);
	res->n_ranks = n;
	res->n_tok = f->n_tok;
	res->width = (int64_t)(n_out / ref_out_rows(&f->cfg, f->n_tok));
	res->pass = true;
	for (uint32_t g = 0; g < l->ep_size; g++) {
		ref_diff d;
		rv =
		    ref_forward_sharded(&f->cfg, ranks, l, g, f->tokens, f->n_tok, routes, sh, err);
		if (rv != WT_OK)
			goto out;
		ref_compare(f->out, sh, n_out, &d);
		if (g == 0 || d.nonfinite || d.max_abs_diff > res->diff.max_abs_diff) {
			res->diff = d;
			res->worst_group = g;
		}
		if (!ref_within(&d, res->budget))
			res->pass = false;
	}
out:
	free(sh);
	ref_free_ranks(ranks, n);
	shardmap_plan_free(p);
	return rv;
}

int ref_verify(const ckpt *c, const wt_layout *l, const int64_t *tokens, size_t n_tok,
               ref_tamper_fn tamper, void *tctx, ref_result *res, wt_errbuf *err)
{
	ref_full f;
	memset(res, 0, sizeof(*res));
	int rv = ref_full_load(c, tokens, n_tok, &f, err);
	if (rv == WT_OK)
		rv = ref_verify_full(c, &f, l, tamper, tctx, res, err);
	ref_full_clear(&f);
	return rv;
}

int ref_full_outputs(const ckpt *c, const int64_t *tokens, size_t n_tok, float **out, size_t *rows,
                     int64_t *width, wt_errbuf *err)
{
	ref_cfg cfg;
	ref_set ck = {0};
	*out = NULL;
	int rv = ref_load_ckpt(c, &cfg, &ck, err);
	if (rv != WT_OK)
		return rv;
	size_t n_out = ref_out_count(&cfg, n_tok);
	float *o = malloc(n_out * sizeof(float));
	if (o == NULL)
		rv = wt_seterr(err, WT_ENOMEM, "logits: out of memory");
	else
		rv = ref_forward_full(&cfg, &ck, tokens, n_tok, o, NULL, err);
	ref_set_clear(&ck);
	if (rv != WT_OK) {
		free(o);
		return rv;
	}
	*rows = ref_out_rows(&cfg, n_tok);
	*width = (int64_t)(n_out / *rows);
	*out = o;
	return WT_OK;
}
