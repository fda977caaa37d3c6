/*
 * reference_ckpt.h — glue between the reference forward pass and the loader /
 * planner, for programs that link those modules (weightctl, tests). It is a
 * header of static inline functions on purpose: engine/ is compiled into
 * libweights, which must not pull in loader/ or shardmap/ (docs/architecture.md), so
 * this code is compiled only into the programs that include it.
 *
 * engine_ref_verify() is the whole check: plan the layout, produce every
 * rank, run the full path over the checkpoint and the sharded path for every
 * EP group, and report the worst difference against the layout's budget.
 */
#ifndef WT_ENGINE_REFERENCE_CKPT_H
#define WT_ENGINE_REFERENCE_CKPT_H

#include <stdlib.h>
#include <string.h>

#include "engine/reference.h"
#include "loader/loader.h"
#include "shardmap/shardmap.h"

/*
 * The reference configuration of a checkpoint: the fields the planner reads
 * come from the loader's parse (cc, loader/config.c) exactly as shardmap_plan
 * sees them — one parser for both, a Qwen2-VL `text_config` overlay
 * included — and the reference-only ones from the config.json text
 * (engine_ref_cfg_finish, which lays text_config over the top level the same
 * way).
 */
static inline int engine_ref_cfg_from_ckpt(const ckpt_config *cc, const char *json, size_t len,
                                           engine_ref_cfg *out, wt_errbuf *err)
{
	engine_ref_cfg c;
	memset(&c, 0, sizeof(c));
	c.hid = cc->hidden_size;
	c.H = cc->num_attention_heads;
	c.KV = cc->num_key_value_heads;
	c.d = cc->head_dim;
	c.I = cc->intermediate_size;
	c.V = cc->vocab_size;
	c.L = cc->num_hidden_layers;
	c.tied = cc->tie_word_embeddings;
	c.E = cc->num_experts;
	c.Ie = cc->moe_intermediate_size > 0 ? cc->moe_intermediate_size : cc->intermediate_size;
	/* shared experts as the planner derives them (shardmap/plan.c derive_dims) */
	if (cc->shared_expert_intermediate_size > 0)
		c.Is = cc->shared_expert_intermediate_size;
	else if (cc->n_shared_experts > 0)
		c.Is = c.Ie * cc->n_shared_experts;
	c.sparse_step = cc->decoder_sparse_step;
	for (size_t i = 0; i < cc->n_mlp_only_layers; i++) {
		int64_t x = cc->mlp_only_layers[i];
		if (x >= 64 && x < c.L)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: mlp_only_layers lists layer %lld; the "
			                 "reference handles layers below 64",
			                 (long long)x);
		if (x >= 0 && x < 64)
			c.mlp_only_mask |= 1ull << x;
	}
	c.first_dense = cc->first_k_dense_replace;
	c.layer_freq = cc->moe_layer_freq;
	c.q_lora = cc->q_lora_rank;
	c.kv_lora = cc->kv_lora_rank;
	c.nope = cc->qk_nope_head_dim;
	c.rope = cc->qk_rope_head_dim;
	c.vhd = cc->v_head_dim;
	c.block[0] = cc->quant_block[0] > 0 ? cc->quant_block[0] : 128;
	c.block[1] = cc->quant_block[1] > 0 ? cc->quant_block[1] : 128;
	int rv =
	    engine_ref_cfg_finish(&c, shardmap_family_of(cc), cc->architecture, json, len, err);
	if (rv == WT_OK)
		*out = c;
	return rv;
}

/* engine_ref_cfg_from_ckpt over config.json text alone (tests). */
static inline int engine_ref_cfg_parse_json(const char *json, size_t len, engine_ref_cfg *out,
                                            wt_errbuf *err)
{
	ckpt_config cc;
	int rv = ckpt_config_parse(json, len, &cc, err);
	if (rv == WT_OK)
		rv = engine_ref_cfg_from_ckpt(&cc, json, len, out, err);
	ckpt_config_clear(&cc);
	return rv;
}

/* Read every checkpoint tensor into ck under the names the family's rules use
 * (shardmap_canonical_name: a transformers 5.x checkpoint's names become the
 * 4.x ones), and the configuration into cfg (engine_ref_cfg_from_ckpt). */
static inline int engine_ref_load_ckpt(const ckpt *c, engine_ref_cfg *cfg, engine_ref_set *ck,
                                       wt_errbuf *err)
{
	size_t len = 0;
	const char *json = ckpt_config_json(c, &len);
	int rv = engine_ref_cfg_from_ckpt(ckpt_get_config(c), json, len, cfg, err);
	if (rv != WT_OK)
		return rv;
	ck->quant = WT_QUANT_NONE;
	ck->block[0] = cfg->block[0];
	ck->block[1] = cfg->block[1];
	for (size_t i = 0; i < ckpt_n_tensors(c) && rv == WT_OK; i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		void *buf = malloc(t->nbytes ? t->nbytes : 1);
		if (buf == NULL)
			return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory", t->name);
		char cbuf[512], wbuf[512];
		const char *name = shardmap_canonical_name(c, t->name, cbuf, sizeof(cbuf));
		float *deq = NULL; /* compressed-tensors weight: its F32 values as X.weight */
		int64_t dshape[2];
		if (name != NULL)
			rv = shardmap_ct_weight_f32(c, i, wbuf, sizeof(wbuf), &deq, dshape, err);
		if (deq != NULL) {
			rv = engine_ref_set_add(ck, wbuf, WT_F32, 2, dshape, deq,
			                        (uint64_t)(dshape[0] * dshape[1]) * 4u, err);
			free(deq);
			free(buf);
			continue;
		}
		if (rv == WT_OK)
			rv = ckpt_read(c, t, 0, buf, t->nbytes, err);
		if (rv == WT_OK && name == NULL)
			rv = wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
		if (rv == WT_OK)
			rv = engine_ref_set_add(ck, name, t->dtype, t->ndim, t->shape, buf,
			                        t->nbytes, err);
		free(buf);
	}
	return rv;
}

typedef struct engine_ref_emit_ctx {
	const sm_plan *p;
	engine_ref_set *ranks;
} engine_ref_emit_ctx;

static inline int engine_ref_emit(void *ctx, uint32_t rank, size_t ix, const void *bytes,
                                  uint64_t nbytes, wt_errbuf *err)
{
	engine_ref_emit_ctx *e = ctx;
	const sm_out_info *t = shardmap_rank_tensor(e->p, rank, ix);
	if (t == NULL || nbytes != t->nbytes)
		return wt_seterr(
		    err, WT_ESHAPE, "rank %u tensor %zu: %llu bytes emitted, plan says %llu", rank,
		    ix, (unsigned long long)nbytes, (unsigned long long)(t ? t->nbytes : 0));
	return engine_ref_set_add(&e->ranks[rank], t->name, t->dtype, t->ndim, t->shape, bytes,
	                          nbytes, err);
}

/* Produce every rank of plan p into a new array of shardmap_n_ranks(p) sets (caller frees
 * with engine_ref_free_ranks). */
static inline int engine_ref_load_ranks(const ckpt *c, const sm_plan *p, const wt_layout *l,
                                        engine_ref_set **out, wt_errbuf *err)
{
	uint32_t n = shardmap_n_ranks(p);
	engine_ref_set *r = calloc(n ? n : 1, sizeof(*r));
	if (r == NULL)
		return wt_seterr(err, WT_ENOMEM, "out of memory for %u rank sets", n);
	for (uint32_t i = 0; i < n; i++) {
		r[i].quant = l->quant;
		r[i].group = l->group_size;
	}
	engine_ref_emit_ctx e = {p, r};
	int rv = shardmap_produce(c, p, -1, engine_ref_emit, &e, err);
	if (rv != WT_OK) {
		for (uint32_t i = 0; i < n; i++)
			engine_ref_set_clear(&r[i]);
		free(r);
		return rv;
	}
	*out = r;
	return WT_OK;
}

static inline void engine_ref_free_ranks(engine_ref_set *r, uint32_t n)
{
	for (uint32_t i = 0; r && i < n; i++)
		engine_ref_set_clear(&r[i]);
	free(r);
}

/*
 * The budget a layout is held to, with its reason in *why: exact
 * (ENGINE_REF_TOL_F32) when the rank tensors hold the checkpoint's values
 * bit for bit (same float dtype, F32 output, or FP8-block pass-through), the
 * rounding budget when an unquantized output narrows them, else the scheme's.
 */
static inline double engine_ref_layout_budget(engine_ref_set *ck, const wt_layout *l,
                                              const char **why)
{
	bool fp8 = false, blocks = false, wscale = false, shapes = false;
	wt_dtype src = WT_DTYPE_INVALID;
	for (size_t i = 0; i < ck->n; i++) {
		const engine_ref_tensor *t = &ck->t[i];
		size_t len = strlen(t->name);
		fp8 = fp8 || t->dtype == WT_F8_E4M3;
		blocks = blocks || (len > 10 && strcmp(t->name + len - 10, "_scale_inv") == 0);
		wscale = wscale || (len > 13 && strcmp(t->name + len - 13, ".weight_scale") == 0);
		/* int4: packed (weight_shape beside it) or group scales [N, K/G > 1] */
		shapes = shapes || (len > 13 && strcmp(t->name + len - 13, ".weight_shape") == 0) ||
		         (len > 13 && strcmp(t->name + len - 13, ".weight_scale") == 0 &&
		          t->ndim == 2 && t->shape[1] > 1);
		if (strcmp(t->name, "model.embed_tokens.weight") == 0 ||
		    strcmp(t->name, "embeddings.word_embeddings.weight") == 0)
			src = t->dtype;
	}
	if (l->quant == WT_QUANT_FP8_BLOCK && blocks && !l->requant_allow) {
		*why = "fp8-block pass-through: exact up to float32 summation order";
		return ENGINE_REF_TOL_F32;
	}
	/* compressed-tensors (docs/format.md 4.5): weight_scale without FP8 weights; int4 has
	 * weight_shape. Pass-through keeps the values the full path dequantized. */
	bool ct = wscale && !fp8;
	if (ct && l->quant == (shapes ? WT_QUANT_INT4_GROUP : WT_QUANT_INT8_CHANNEL) &&
	    !l->requant_allow) {
		*why = "compressed-tensors pass-through: exact up to float32 summation order";
		return ENGINE_REF_TOL_F32;
	}
	fp8 = fp8 || ct; /* a quantized source: unquantized outputs default to BF16 */
	if (l->quant != WT_QUANT_NONE) {
		*why = "quantization budget of the scheme";
		return engine_ref_budget(l->quant);
	}
	wt_dtype out = l->dtype == WT_DTYPE_INVALID ? (fp8 ? WT_BF16 : src) : l->dtype;
	if (out == WT_F32 || (!fp8 && out == src)) {
		*why = "float32 summation order only";
		return ENGINE_REF_TOL_F32;
	}
	*why = ct    ? "compressed-tensors checkpoint emitted as BF16/F16: rounding budget"
	       : fp8 ? "FP8 checkpoint emitted as BF16/F16: rounding budget"
	             : "narrower output dtype: rounding budget";
	return ENGINE_REF_BUDGET_ROUND;
}

/* Result of one verification. */
typedef struct engine_ref_result {
	engine_ref_diff diff; /* worst EP group */
	uint32_t worst_group;
	double budget;   /* relative to diff.max_abs_ref */
	const char *why; /* the budget's reason; static */
	bool pass;
	uint32_t n_ranks;
	size_t n_tok;
	int64_t width; /* output floats per row: V logits, or hid for BERT */
} engine_ref_result;

/* Optional hook between production and the sharded pass (tests break a shard here). */
typedef void (*engine_ref_tamper_fn)(void *ctx, engine_ref_set *ranks, uint32_t n_ranks);

/*
 * Plan and produce every rank of layout l (rank fields ignored), run both
 * paths on tokens and compare. WT_OK means the check RAN; res->pass says
 * whether the outputs agree within engine_ref_layout_budget().
 */
static inline int engine_ref_verify(const ckpt *c, const wt_layout *l, const int64_t *tokens,
                                    size_t n_tok, engine_ref_tamper_fn tamper, void *tctx,
                                    engine_ref_result *res, wt_errbuf *err)
{
	engine_ref_cfg cfg;
	engine_ref_set ck = {0};
	engine_ref_set *ranks = NULL;
	sm_plan *p = NULL;
	float *full = NULL, *sh = NULL;
	int64_t *routes = NULL;
	uint32_t n = 0;
	memset(res, 0, sizeof(*res));
	int rv = engine_ref_load_ckpt(c, &cfg, &ck, err);
	if (rv == WT_OK)
		rv = shardmap_plan(c, l, &p, err);
	if (rv == WT_OK) {
		n = shardmap_n_ranks(p);
		rv = engine_ref_load_ranks(c, p, l, &ranks, err);
	}
	if (rv != WT_OK)
		goto out;
	size_t n_out = engine_ref_out_count(&cfg, n_tok);
	full = malloc(n_out * sizeof(float));
	sh = malloc(n_out * sizeof(float));
	/* quantized layouts follow the full path's expert choices (engine_ref_forward_sharded) */
	if (l->quant != WT_QUANT_NONE && cfg.E > 0)
		routes = calloc((size_t)(cfg.L * cfg.topk) * n_tok, sizeof(int64_t));
	if (full == NULL || sh == NULL || (l->quant != WT_QUANT_NONE && cfg.E > 0 && !routes)) {
		rv = wt_seterr(err, WT_ENOMEM, "logits: out of memory");
		goto out;
	}
	if (tamper)
		tamper(tctx, ranks, n);
	if ((rv = engine_ref_forward_full(&cfg, &ck, tokens, n_tok, full, routes, err)) != WT_OK)
		goto out;
	res->budget = engine_ref_layout_budget(&ck, l, &res->why);
	res->n_ranks = n;
	res->n_tok = n_tok;
	res->width = (int64_t)(n_out / (cfg.kind == ENGINE_REF_BERT ? n_tok + 1 : n_tok));
	res->pass = true;
	for (uint32_t g = 0; g < l->ep_size; g++) {
		engine_ref_diff d;
		if ((rv = engine_ref_forward_sharded(&cfg, ranks, l, g, tokens, n_tok, routes, sh,
		                                     err)))
			goto out;
		engine_ref_compare(full, sh, n_out, &d);
		if (g == 0 || d.nonfinite || d.max_abs_diff > res->diff.max_abs_diff) {
			res->diff = d;
			res->worst_group = g;
		}
		if (!engine_ref_within(&d, res->budget))
			res->pass = false;
	}
out:
	free(full);
	free(sh);
	free(routes);
	engine_ref_free_ranks(ranks, n);
	engine_ref_set_clear(&ck);
	shardmap_plan_free(p);
	return rv;
}

#endif
