/*
 * plan.c — shardmap_plan: map every checkpoint tensor to a family rule,
 * validate the checkpoint against config.json (docs/format.md section 3), then
 * hand the sorted entries to plan_inst.c for the per-rank outputs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "shardmap/quant_ct.h"
#include "shardmap/quant_f8.h"
#include "shardmap/quant_mx.h"

#define NAME_MAX_LEN 512

/* ceil(n / b) without n + b - 1 (which overflows for a huge b). */
static int64_t ceil_div(int64_t n, int64_t b)
{
	return n / b + (n % b != 0);
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

static void shape_text(const int64_t *shape, int ndim, char *buf, size_t cap)
{
	size_t n = 0;
	n += (size_t)snprintf(buf, cap, "[");
	for (int k = 0; k < ndim && n < cap; k++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%" PRId64, k ? ", " : "", shape[k]);
	if (n < cap)
		snprintf(buf + n, cap - n, "]");
}

/* Shape and dtype of a mapped tensor and of its attached FP8 scales. */
static const char *scheme_scale_suffix(const ckpt_config *cfg);

/* A dtype a scalar scale may be stored in (read by shardmap_ct_scalar / kern_convert). */
static bool scalar_dtype(wt_dtype d)
{
	return d == WT_F32 || d == WT_BF16 || d == WT_F16;
}

static int check_entry(const sm_ctx *x, sm_entry *e, wt_errbuf *err)
{
	const sm_rule *r = &x->fam->rules[e->rule];
	const ckpt_tensor *t = &e->view;
	int64_t want[5];
	bool ok = t->ndim == r->ndim;
	sm_dims tmp;
	const sm_dims *dm = shardmap_layer_dm(x, r, e->i, &tmp);
	for (int k = 0; k < r->ndim && k < 5; k++) {
		want[k] = shardmap_dim_value(dm, r->dims[k]);
		if (r->dims[k] != SM_D_ANY && t->shape[k] != want[k])
			ok = false;
	}
	if (!ok) {
		char have[160], exp[160];
		shape_text(t->shape, t->ndim, have, sizeof(have));
		shape_text(want, r->ndim, exp, sizeof(exp));
		const ckpt_tensor *st = ckpt_tensor_at(x->c, e->t);
		if ((r->flags & SM_F_STACK2) && st->ndim == 2) /* DBRX: the 2-D stack as stored */
			return wt_seterr(
			    err, WT_ESHAPE,
			    "tensor '%s': shape [%" PRId64 ", %" PRId64
			    "] (an expert stack [E*a, b], viewed %s) disagrees with "
			    "config.json, which implies %s (-1 = any); fix config.json "
			    "or the checkpoint",
			    t->name, st->shape[0], st->shape[1], have, exp);
		if ((r->flags & (SM_F_TRANS | SM_F_STACK2)) == SM_F_TRANS && st->ndim == 2)
			return wt_seterr(
			    err, WT_ESHAPE,
			    "tensor '%s': shape [%" PRId64 ", %" PRId64
			    "] (a Conv1D [in, out], loaded transposed as %s) disagrees "
			    "with config.json, which implies %s (-1 = any) after the "
			    "transpose; fix config.json or the checkpoint",
			    t->name, st->shape[0], st->shape[1], have, exp);
		return wt_seterr(
		    err, WT_ESHAPE,
		    "tensor '%s': shape %s disagrees with config.json, which implies %s "
		    "(-1 = any); fix config.json or the checkpoint",
		    t->name, have, exp);
	}
	if (shardmap_ct_weight(x->cfg, t) || shardmap_mx_weight(t))
		return shardmap_mx_weight(t) ? shardmap_mx_check(x, e, err)
		                             : shardmap_ct_check(x, e, err);
	if (!wt_dtype_is_float(t->dtype) && !shardmap_int_kept(x->fam, r, t))
		return wt_seterr(err, WT_EDTYPE,
		                 "tensor '%s': dtype %s is not a float type; weights must be F32, "
		                 "F16, BF16, FP8 with scales, or compressed-tensors int8/int4",
		                 t->name, wt_dtype_name(t->dtype));
	if (t->dtype == WT_F8_E5M2 || t->dtype == WT_F64)
		return wt_seterr(
		    err, WT_EDTYPE,
		    "tensor '%s': dtype %s is not supported as a weight source; convert "
		    "to BF16 or F8_E4M3",
		    t->name, wt_dtype_name(t->dtype));
	if (t->dtype == WT_F8_E4M3 && shardmap_fb_source(x->cfg))
		return shardmap_fb_check(x, e, err); /* its input scales are refused there */
	if (t->dtype == WT_F8_E4M3) {
		if (e->wscale == SM_NONE || x->cfg->quant == CKPT_QUANT_NONE)
			return wt_seterr(err, WT_EDTYPE,
			                 "tensor '%s': F8_E4M3 weight without its scale (%s) or "
			                 "without quantization_config in config.json",
			                 t->name,
			                 scheme_scale_suffix(x->cfg) ? scheme_scale_suffix(x->cfg)
			                                             : "weight_scale_inv");
		const ckpt_tensor *s = ckpt_tensor_at(x->c, e->wscale);
		/* per tensor and compressed-tensors' blocks: scales may be in the model's dtype
		 * (every reader converts them) */
		bool loose = x->cfg->quant == CKPT_QUANT_FP8_TENSOR || x->cfg->quant_block_ct;
		if (s->dtype != WT_F32 && !(loose && scalar_dtype(s->dtype)))
			return wt_seterr(err, WT_EDTYPE,
			                 "tensor '%s': scale dtype %s, expected F32%s", s->name,
			                 wt_dtype_name(s->dtype), loose ? ", BF16 or F16" : "");
		if (t->ndim != 2)
			return wt_seterr(err, WT_ESHAPE, "tensor '%s': an FP8 weight must be 2-D",
			                 t->name);
		if (x->cfg->quant == CKPT_QUANT_FP8_BLOCK) {
			int64_t b0 = x->cfg->quant_block[0] > 0 ? x->cfg->quant_block[0] : 128;
			int64_t b1 = x->cfg->quant_block[1] > 0 ? x->cfg->quant_block[1] : 128;
			int64_t rows = ceil_div(t->shape[0], b0), cols = ceil_div(t->shape[1], b1);
			if (s->ndim != 2 || s->shape[0] != rows || s->shape[1] != cols)
				return wt_seterr(err, WT_ESHAPE,
				                 "tensor '%s': block scales must be [%" PRId64
				                 ", %" PRId64 "] for weight [%" PRId64 ", %" PRId64
				                 "]",
				                 s->name, rows, cols, t->shape[0], t->shape[1]);
		} else if (s->nbytes != wt_dtype_size(s->dtype)) {
			return wt_seterr(err, WT_ESHAPE,
			                 "tensor '%s': a per-tensor scale must hold one value",
			                 s->name);
		}
	}
	if (e->iscale != SM_NONE) {
		const ckpt_tensor *s = ckpt_tensor_at(x->c, e->iscale);
		if (!scalar_dtype(s->dtype) || s->nbytes != wt_dtype_size(s->dtype))
			return wt_seterr(
			    err, WT_ESHAPE,
			    "tensor '%s': input_scale must be one F32, BF16 or F16 value", s->name);
	}
	return WT_OK;
}

/* The weight-scale suffix of the checkpoint's FP8 scheme (docs/format.md 4.4), or NULL. */
static const char *scheme_scale_suffix(const ckpt_config *cfg)
{
	switch (cfg->quant) {
	case CKPT_QUANT_FP8_TENSOR:
	case CKPT_QUANT_FBGEMM_FP8:
	case CKPT_QUANT_CT_FP8:
		return "weight_scale";
	case CKPT_QUANT_FP8_BLOCK: /* compressed-tensors names its block scales weight_scale */
		return cfg->quant_block_ct ? "weight_scale" : "weight_scale_inv";
	default:
		return NULL;
	}
}

static const char *scheme_text(const ckpt_config *cfg)
{
	switch (cfg->quant) {
	case CKPT_QUANT_FP8_TENSOR:
		return "per-tensor FP8 (uses X.weight_scale beside an F8_E4M3 X.weight)";
	case CKPT_QUANT_FP8_BLOCK:
		return cfg->quant_block_ct
		           ? "compressed-tensors block FP8 (uses X.weight_scale beside an F8_E4M3 "
		             "X.weight)"
		           : "block FP8 (uses X.weight_scale_inv beside an F8_E4M3 X.weight)";
	case CKPT_QUANT_FBGEMM_FP8:
		return "fbgemm_fp8 per-channel FP8 (uses X.weight_scale beside an F8_E4M3 "
		       "X.weight)";
	case CKPT_QUANT_CT_FP8:
		return "compressed-tensors FP8 per channel (uses X.weight_scale beside an F8_E4M3 "
		       "X.weight)";
	case CKPT_QUANT_CT_INT8:
		return "compressed-tensors int8 (X.weight_scale beside an I8 X.weight, or an "
		       "I32 X.weight_packed when pack-quantized)";
	case CKPT_QUANT_CT_INT4:
		return "compressed-tensors int4 (X.weight_scale beside an I32 X.weight_packed)";
	default:
		return "unquantized (no quantization_config: no weight scales are used)";
	}
}

/* Find the scale companions of `<module>.weight`: the weight scale only for an
 * F8_E4M3 weight and only with the scheme's suffix (companion() refuses any
 * other), the input scale for any weight. */
static void attach_scales(const sm_ctx *x, sm_entry *e)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, e->t);
	e->wscale = e->iscale = SM_NONE;
	if (shardmap_ct_attach(x, e) || shardmap_fb_attach(x, e) || !ends_with(t->name, ".weight"))
		return;
	char buf[NAME_MAX_LEN];
	size_t base = strlen(t->name) - strlen("weight");
	if (base + 20 > sizeof(buf))
		return;
	memcpy(buf, t->name, base);
	const char *sfx = scheme_scale_suffix(x->cfg);
	const ckpt_tensor *s;
	if (sfx != NULL && t->dtype == WT_F8_E4M3) {
		snprintf(buf + base, sizeof(buf) - base, "%s", sfx);
		if ((s = ckpt_find(x->c, buf)) != NULL)
			e->wscale = (uint32_t)ckpt_tensor_index(x->c, s);
	}
	snprintf(buf + base, sizeof(buf) - base, "input_scale");
	s = ckpt_find(x->c, buf);
	if (s)
		e->iscale = (uint32_t)ckpt_tensor_index(x->c, s);
}

/*
 * Scale companions of a weight that exists in the checkpoint: *used = true
 * when `name` is consumed with its weight (or listed as skipped there). An
 * `X.input_scale` always is (docs/format.md 2.5); `X.weight_scale` /
 * `X.weight_scale_inv` only when its suffix is the scheme's and X.weight is
 * F8_E4M3. Any other scale beside an existing X.weight would be neither used
 * nor skipped: it is refused (WT_EUNSUPPORTED, like every tensor the plan
 * cannot account for, SHARDS.md section 3). A name that is no companion
 * (*used false, WT_OK) goes on to the family rules.
 */
static int companion(const sm_ctx *x, const char *name, bool *used, wt_errbuf *err)
{
	static const char *const sfx[] = {".weight_scale_inv", ".weight_scale", ".input_scale"};
	*used = false;
	for (size_t k = 0; k < 3; k++) {
		if (!ends_with(name, sfx[k]))
			continue;
		char buf[NAME_MAX_LEN];
		size_t base = strlen(name) - strlen(sfx[k]);
		if (base + 8 > sizeof(buf))
			return WT_OK;
		memcpy(buf, name, base);
		memcpy(buf + base, ".weight", 8);
		const ckpt_tensor *w = ckpt_find(x->c, buf);
		if (w == NULL)
			return WT_OK;
		const char *want = scheme_scale_suffix(x->cfg);
		if (k == 2 ||
		    (want != NULL && strcmp(sfx[k] + 1, want) == 0 && w->dtype == WT_F8_E4M3)) {
			*used = true;
			return WT_OK;
		}
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': a scale the checkpoint's quantization does not use: "
		                 "config.json makes it %s, and '%s' is %s; remove the stray scale "
		                 "or fix quantization_config",
		                 name, scheme_text(x->cfg), buf, wt_dtype_name(w->dtype));
	}
	return WT_OK;
}

/* Layer index of `name` under the family's layer prefix, or -1. */
static int64_t layer_of(const sm_family *f, const char *name)
{
	size_t n = strlen(f->layer_prefix);
	if (strncmp(name, f->layer_prefix, n) != 0)
		return -1;
	int64_t v = 0;
	const char *s = name + n;
	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9' && v < 100000000)
		v = v * 10 + (*s++ - '0');
	return *s == '.' ? v : -1;
}

/* The config.json key counting the vision blocks. */
static const char *vis_depth_key(const sm_family *f)
{
	return f->depth_key != NULL            ? f->depth_key
	       : f->voxtral                    ? "audio_config.num_hidden_layers"
	       : f->whisper                    ? "encoder_layers"
	       : f->omni                       ? "thinker_config.vision_config.depth"
	       : f->audio                      ? "audio_config.encoder_layers"
	       : f->gspeech                    ? "encoder_config.num_layers"
	       : f->vision_siglip || f->mllama ? "vision_config.num_hidden_layers"
	                                       : "vision_config.depth";
}

/* What {i} of rule ru counts: its config.json key and the count. */
static const char *block_key(const sm_ctx *x, const sm_rule *ru, int64_t *n)
{
	if (ru->flags & SM_F_DEEP) {
		*n = x->dm.vis_deep;
		return "vision_config.deepstack_visual_indexes (entries)";
	}
	if (ru->flags & SM_F_VIS) {
		*n = x->dm.vis_depth;
		return vis_depth_key(x->fam);
	}
	if (ru->flags & SM_F_QF) {
		*n = x->dm.qf_layers;
		return x->fam->blip2    ? "qformer_config.num_hidden_layers"
		       : x->fam->mllama ? "vision_config.num_global_layers"
		       : x->fam->omni   ? "thinker_config.audio_config.encoder_layers"
		                        : "projector_config.num_hidden_layers";
	}
	*n = x->dm.n_layers;
	return shardmap_layers_key(x->fam);
}

/* Rule ru matched block i (layer or vision block) and expert j of tensor t:
 * are they within config.json's counts, and does the config give layer i this
 * kind of tensor (dense vs MoE, shared experts, q_lora)? */
static int check_rule_indices(const sm_ctx *x, const sm_rule *ru, const ckpt_tensor *t, int64_t i,
                              int64_t j, wt_errbuf *err)
{
	int64_t nb;
	const char *bk = block_key(x, ru, &nb);
	if ((ru->flags & (SM_F_DEEP | SM_F_QF)) && i >= nb)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': %s %" PRId64 " but config.json %s is %" PRId64,
		                 t->name,
		                 !(ru->flags & SM_F_QF) ? "deepstack merger"
		                 : x->fam->mllama       ? "global vision layer"
		                 : x->fam->omni         ? "audio encoder layer"
		                                        : "Q-Former layer",
		                 i, bk, nb);
	if ((ru->flags & SM_F_VIS) && i >= x->dm.vis_depth)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': %s block %" PRId64 " but config.json %s is %" PRId64,
		                 t->name, x->fam->audio || x->fam->gspeech ? "encoder" : "vision",
		                 i, vis_depth_key(x->fam), x->dm.vis_depth);
	if (!(ru->flags & (SM_F_VIS | SM_F_DEEP | SM_F_QF)) && i >= x->dm.n_layers)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': layer %" PRId64 " but config.json %s is %" PRId64,
		                 t->name, i, bk, x->dm.n_layers);
	if (x->fam->j_holds && j >= 0 && !x->fam->j_holds(x->cfg, i, j) && x->fam->j_key)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': index %" PRId64 " past config.json's %s", t->name, j,
		                 x->fam->j_key);
	if (x->fam->j_holds && j >= 0 && !x->fam->j_holds(x->cfg, i, j))
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': config.json gives the shared block of layer %" PRId64
		                 " no adapter %" PRId64 " (see layers_block_type, num_mem_blocks)",
		                 t->name, i, j);
	if (!x->fam->j_holds && j >= x->dm.n_experts)
		return wt_seterr(err, WT_ESHAPE,
		                 "tensor '%s': expert %" PRId64 " but config.json has %" PRId64
		                 " experts",
		                 t->name, j, x->dm.n_experts);
	if (shardmap_cond_holds(x, ru, i))
		return WT_OK;
	return shardmap_cond_refused(x, ru, t, i, err);
}

/* A tied LM head is not emitted: it and its scale companions are listed as skipped. */
static int skip_tied_lm_head(sm_ctx *x, sm_plan *p, size_t k, wt_errbuf *err)
{
	sm_entry tmp = {.t = (uint32_t)k};
	attach_scales(x, &tmp);
	int rv = shardmap_plan_add_skipped(p, ckpt_tensor_at(x->c, k)->name, err);
	if (rv == WT_OK && tmp.wscale != SM_NONE)
		rv = shardmap_plan_add_skipped(p, ckpt_tensor_at(x->c, tmp.wscale)->name, err);
	if (rv == WT_OK && tmp.iscale != SM_NONE)
		rv = shardmap_plan_add_skipped(p, ckpt_tensor_at(x->c, tmp.iscale)->name, err);
	return rv;
}

/* Append the plan entry of checkpoint tensor k under rule r (block i, expert j),
 * runtime name rt, canonical name cn (t->name when the checkpoint uses it). */
static int add_entry(sm_ctx *x, size_t k, uint32_t r, int64_t i, int64_t j, const char *rt,
                     const char *cn, wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, k);
	sm_entry *e = &x->ents[x->n_ents];
	memset(e, 0, sizeof(*e));
	e->t = (uint32_t)k;
	e->view = *t;
	shardmap_ct_view(x->cfg, &e->view);
	e->rule = r;
	e->i = i;
	e->j = j;
	attach_scales(x, e);
	int64_t ne = x->cfg->num_experts;
	if ((x->fam->rules[r].flags & SM_F_STACK2) && e->view.ndim == 2 && ne > 0 &&
	    e->view.shape[0] % ne == 0) { /* [E*a, b] is [E, a, b]; else the shape check names it */
		e->view.ndim = 3;
		e->view.shape[2] = e->view.shape[1];
		e->view.shape[1] = e->view.shape[0] / ne;
		e->view.shape[0] = ne;
	} else if ((x->fam->rules[r].flags & (SM_F_TRANS | SM_F_STACK2)) == SM_F_TRANS &&
	           e->view.ndim == 2) { /* a Conv1D weight [in, out] is loaded [out, in] */
		int64_t k0 = e->view.shape[0];
		e->view.shape[0] = e->view.shape[1];
		e->view.shape[1] = k0;
	}
	shardmap_mx_entry(x, e); /* MXFP4: the [..., N, K] view and X_scales */
	e->rt = strdup(rt);
	e->canon = cn != t->name ? strdup(cn) : NULL;
	if (!e->rt || (cn != t->name && !e->canon))
		return wt_seterr(err, WT_ENOMEM, "tensor '%s': out of memory for its names",
		                 t->name);
	x->n_ents++;
	return check_entry(x, e, err);
}

static int map_tensor(sm_ctx *x, sm_plan *p, size_t k, wt_errbuf *err)
{
	const ckpt_tensor *t = ckpt_tensor_at(x->c, k);
	if (shardmap_generic_drop(t->name))
		return shardmap_plan_add_skipped(p, t->name, err);
	if (x->fam->drop_prefix &&
	    strncmp(t->name, x->fam->drop_prefix, strlen(x->fam->drop_prefix)) == 0)
		return shardmap_plan_add_skipped(p, t->name, err);
	for (const char *const *sf = x->fam->drop_suffixes; sf && *sf; sf++) {
		size_t a = strlen(t->name), b = strlen(*sf);
		if (a > b && t->name[a - b - 1] == '.' && strcmp(t->name + a - b, *sf) == 0)
			return shardmap_plan_add_skipped(p, t->name, err);
	}
	char cbuf[NAME_MAX_LEN];
	bool mixed;
	const char *cn = shardmap_plan_canon(x, t->name, cbuf, sizeof(cbuf), &mixed);
	if (!cn)
		return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
	if (mixed)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "tensor '%s': the checkpoint mixes two name layouts (other tensors "
		    "start with '%s'); rename every tensor to one layout",
		    t->name, x->fam->aliases[0]);
	/* MTP layers past num_hidden_layers, under the canonical name (GLM-4.5V's
	 * model.language_model.layers.46.* is model.layers.46.*) */
	if (x->fam->drop_extra_layers && layer_of(x->fam, cn) >= x->dm.n_layers)
		return shardmap_plan_add_skipped(p, t->name, err);
	if (x->fam->drop_canon && x->fam->drop_canon(x->cfg, cn))
		return shardmap_plan_add_skipped(p, t->name, err);
	/* Companions are looked up under the checkpoint's own names (a 5.x scale
	 * beside its 5.x weight), so a stray scale is refused in either layout. */
	bool used = shardmap_mx_companion(x, t->name);
	int crv = !used && shardmap_ct_source(x->cfg)
	              ? shardmap_ct_companion(x, p, t->name, &used, err)
	              : WT_OK;
	if (crv == WT_OK && !used)
		crv = shardmap_fb_companion(x, t->name, &used, err); /* X_scale, input scales */
	if (crv == WT_OK && !used)
		crv = companion(x, t->name, &used, err);
	if (crv != WT_OK || used)
		return crv; /* consumed with its weight (or listed as skipped there) */
	char pbuf[NAME_MAX_LEN];
	cn = shardmap_ct_rule_name(x->cfg, cn, pbuf, sizeof(pbuf)); /* X.weight_packed */
	if (!cn)
		return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
	for (size_t r = 0; r < x->fam->n_rules; r++) {
		const sm_rule *ru = &x->fam->rules[r];
		int64_t i, j;
		if (!shardmap_match(ru->ckpt, cn, &i, &j) || shardmap_cond_deferred(x, r, i))
			continue;
		int rv = check_rule_indices(x, ru, t, i, j, err);
		if (rv != WT_OK)
			return rv;
		if ((ru->flags & SM_F_LMHEAD) && x->tied)
			return skip_tied_lm_head(x, p, k, err);
		char rt[NAME_MAX_LEN];
		bool keep = strstr(ru->ckpt, "{k}") != NULL; /* {k} binds nothing: name kept */
		int64_t ir = i + x->dm.rt_lo; /* the runtime's {i} (ERNIE's MTP layer: + L) */
		if (keep ? (size_t)snprintf(rt, sizeof(rt), "%s", cn) >= sizeof(rt)
		         : !shardmap_expand_rt(x->fam, x->alt, ru->runtime, ir, j, rt, sizeof(rt)))
			return wt_seterr(err, WT_ETOOBIG, "tensor '%s': name too long", t->name);
		return add_entry(x, k, (uint32_t)r, i, j, rt, cn, err);
	}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "tensor '%s': unknown tensor for family %s (no partition rule maps it); "
	                 "remove it from the checkpoint or check architectures in config.json",
	                 t->name, x->fam->name);
}

/* Rewrite canonical name buf (cap bytes) into the checkpoint's name layout. */
static bool ckpt_name(const sm_ctx *x, char *buf, size_t cap)
{
	char tmp[NAME_MAX_LEN];
	const char *n = shardmap_plan_ckpt(x, buf, tmp, sizeof(tmp));
	if (!n || strlen(n) >= cap)
		return false;
	if (n != buf)
		memcpy(buf, n, strlen(n) + 1);
	return true;
}

/* Required tensors present; optional fused parts all-or-none. */
static int check_missing(const sm_ctx *x, wt_errbuf *err)
{
	const sm_family *f = x->fam;
	char name[NAME_MAX_LEN], other[NAME_MAX_LEN];
	for (size_t r = 0; r < f->n_rules; r++) {
		const sm_rule *ru = &f->rules[r];
		bool li = strstr(ru->ckpt, "{i}") != NULL, lj = strstr(ru->ckpt, "{j}") != NULL;
		int64_t nb;
		const char *bk = block_key(x, ru, &nb);
		int64_t ni = li ? nb : 1;
		int64_t nj = !lj ? 1 : f->j_holds ? shardmap_j_count(x) : x->dm.n_experts;
		for (int64_t i = li ? shardmap_block_lo(x, ru) : 0; i < ni; i++) {
			if (!shardmap_cond_holds(x, ru, li ? i : 0) && li)
				continue;
			if (!li && !shardmap_cond_holds(x, ru, 0))
				continue;
			for (int64_t j = 0; j < nj; j++) {
				if (lj && f->j_holds && !f->j_holds(x->cfg, i, j))
					continue;
				if (!shardmap_expand(ru->ckpt, i, j, name, sizeof(name)) ||
				    !ckpt_name(x, name, sizeof(name)))
					return wt_seterr(err, WT_ETOOBIG, "name too long");
				bool have = shardmap_ct_find(x->c, x->cfg, name) != NULL;
				bool need = !(ru->flags & SM_F_OPT);
				if ((ru->flags & SM_F_LMHEAD) && x->tied)
					need = false;
				if (need && !have &&
				    (ru->cond == SM_C_OPROJ || ru->cond == SM_C_OFNORM ||
				     ru->cond == SM_C_JWPE))
					return wt_seterr(
					    err, WT_ENOTFOUND,
					    "tensor '%s': missing from the checkpoint, which "
					    "config.json asks for (family %s: %s); fix config.json "
					    "or add the tensor",
					    name, f->name,
					    ru->cond == SM_C_OPROJ
					        ? "word_embed_proj_dim differs from hidden_size"
					    : ru->cond == SM_C_JWPE
					        ? "position_embedding_type learned"
					        : "do_layer_norm_before true, "
					          "_remove_final_layer_norm "
					          "false");
				if (need && !have && shardmap_vswitch(ru->cond, true) != NULL)
					return wt_seterr(
					    err, WT_ENOTFOUND,
					    "tensor '%s': missing from the checkpoint, which "
					    "config.json's %s asks for (family %s); fix "
					    "config.json or add the tensor",
					    name, shardmap_vswitch(ru->cond, true), f->name);
				if (need && !have && shardmap_switch_key(f, ru->cond) != NULL)
					return wt_seterr(
					    err, WT_ENOTFOUND,
					    "tensor '%s': missing from the checkpoint, "
					    "which config.json's %s true asks for (family "
					    "%s); set it false or add the tensor",
					    name, shardmap_switch_key(f, ru->cond), f->name);
				if (need && !have)
					return wt_seterr(
					    err, WT_ENOTFOUND,
					    "tensor '%s': missing from the checkpoint (family %s, "
					    "config.json %s %" PRId64 ")",
					    name, f->name, bk, nb);
				if (!(ru->flags & SM_F_OPT) || !have)
					continue;
				for (size_t r2 = 0; r2 < f->n_rules; r2++) {
					const sm_rule *o = &f->rules[r2];
					if (r2 == r || strcmp(o->runtime, ru->runtime) != 0)
						continue;
					if (!shardmap_expand(o->ckpt, i, j, other, sizeof(other)) ||
					    !ckpt_name(x, other, sizeof(other)))
						return wt_seterr(err, WT_ETOOBIG, "name too long");
					if (!shardmap_ct_find(x->c, x->cfg, other))
						return wt_seterr(
						    err, WT_ENOTFOUND,
						    "tensor '%s': missing, but its fusion partner "
						    "'%s' "
						    "is present; both or neither must exist",
						    other, name);
				}
			}
		}
	}
	return WT_OK;
}

static int cmp_ent(const void *a, const void *b, void *ctx)
{
	const sm_entry *x = a, *y = b;
	const sm_family *f = ctx;
	int c = strcmp(x->rt, y->rt);
	if (c)
		return c;
	int pa = f->rules[x->rule].part, pb = f->rules[y->rule].part;
	if (pa != pb)
		return pa < pb ? -1 : 1;
	if (x->j != y->j)
		return x->j < y->j ? -1 : 1;
	return 0;
}

static int build_exclusions(sm_ctx *x, wt_errbuf *err)
{
	size_t n = x->l->n_exclude + x->cfg->n_quant_ignore;
	const char **all = calloc(n ? n : 1, sizeof(char *));
	if (!all)
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory for %zu exclusion patterns",
		                 n);
	for (size_t k = 0; k < x->l->n_exclude; k++)
		all[k] = x->l->exclude[k];
	for (size_t k = 0; k < x->cfg->n_quant_ignore; k++)
		all[x->l->n_exclude + k] = x->cfg->quant_ignore[k];
	int rv = shardmap_excl_compile(all, n, &x->excl, err);
	free(all);
	return rv;
}

const char *shardmap_family_of(const ckpt_config *cfg)
{
	const sm_family *f = shardmap_family_find(cfg->architecture, cfg->model_type);
	return f ? f->name : NULL;
}

bool shardmap_tied(const ckpt_config *cfg)
{
	if (cfg->tie_given)
		return cfg->tie_word_embeddings;
	const sm_family *f = shardmap_family_find(cfg->architecture, cfg->model_type);
	return f != NULL && f->tie_default;
}

/* No family cuts cfg's architecture: WT_EUNSUPPORTED naming why for one vLLM serves that is
 * not cut here (registry.c not_cut), else the supported architectures, as many as the
 * message has room for. */
static int unknown_architecture(const ckpt_config *cfg, wt_errbuf *err)
{
	const char *arch = cfg->architecture ? cfg->architecture : "";
	const char *mt = cfg->model_type ? cfg->model_type : "";
	const char *why = shardmap_not_cut_why(arch);
	if (why != NULL)
		return wt_seterr(err, WT_EUNSUPPORTED, "%s is not supported: %s", arch, why);
	/* the list fills what the message has left, so the message ends whole */
	int head = snprintf(
	    NULL, 0, "architecture '%s' (model_type '%s') is not supported; supported: ", arch, mt);
	char list[WT_ERRMSG_MAX];
	size_t room =
	    head >= 0 && (size_t)head + 64 < sizeof(list) ? sizeof(list) - (size_t)head : 64;
	shardmap_architectures_text(list, room);
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "architecture '%s' (model_type '%s') is not supported; supported: %s",
	                 arch, mt, list);
}

int shardmap_plan(const ckpt *c, const wt_layout *l, sm_plan **out, wt_errbuf *err)
{
	if (l->raw)
		return shardmap_plan_raw(c, l, out, err); /* any checkpoint, no family */
	const ckpt_config *cfg = ckpt_get_config(c);
	const sm_family *fam = shardmap_family_for(c);
	if (!fam)
		return unknown_architecture(cfg, err);
	wt_layout chk = *l;
	chk.tp_rank = 0;
	chk.ep_rank = 0;
	int rv = wt_layout_check(&chk, err);
	if (rv != WT_OK)
		return rv;
	sm_ctx x = {.c = c,
	            .cfg = cfg,
	            .l = l,
	            .fam = fam,
	            .tp_size = l->tp_size,
	            .ep_size = l->ep_size,
	            .tied = cfg->tie_given ? cfg->tie_word_embeddings : fam->tie_default};
	sm_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return wt_seterr(err, WT_ENOMEM, "plan: out of memory for the plan");
	wt_layout_init(&p->layout);
	p->fam = fam;
	p->tp = l->tp_size;
	p->ep = l->ep_size;
	p->tied = x.tied;
	uint64_t nr;
	if (!wt_mul_u64(p->tp, p->ep, &nr) || nr > 65536) {
		rv = wt_seterr(err, WT_ELAYOUT, "tp_size %u * ep_size %u ranks is too many", p->tp,
		               p->ep);
		goto fail;
	}
	p->ranks = calloc(nr, sizeof(sm_rank));
	x.ents = calloc(ckpt_n_tensors(c) + 1, sizeof(sm_entry));
	if (!p->ranks || !x.ents) {
		rv = wt_seterr(err, WT_ENOMEM,
		               "plan: out of memory for %" PRIu64 " ranks and %zu entries", nr,
		               ckpt_n_tensors(c) + 1);
		goto fail;
	}
	if ((rv = wt_layout_copy(&p->layout, l)) != WT_OK) {
		rv = wt_seterr(err, rv, "plan: copying the layout failed");
		goto fail;
	}
	if ((rv = shardmap_derive_dims(&x, err)) != WT_OK ||
	    (rv = build_exclusions(&x, err)) != WT_OK ||
	    (fam->layer_dims && (rv = fam->layer_dims(c, &x.ld, err)) != WT_OK))
		goto fail;
	if ((fam->check && (rv = fam->check(cfg, err)) != WT_OK) ||
	    (fam->check_names && (rv = fam->check_names(c, cfg, err)) != WT_OK))
		goto fail;
	x.alt = shardmap_alias_layout(fam, c);
	for (size_t k = 0; k < ckpt_n_tensors(c); k++)
		if ((rv = map_tensor(&x, p, k, err)) != WT_OK)
			goto fail;
	if ((rv = check_missing(&x, err)) != WT_OK ||
	    (fam->check_extra && (rv = fam->check_extra(c, cfg, err)) != WT_OK))
		goto fail;
	qsort_r(x.ents, x.n_ents, sizeof(sm_entry), cmp_ent, (void *)fam);
	for (size_t k = 1; k < x.n_ents; k++)
		if (cmp_ent(&x.ents[k - 1], &x.ents[k], (void *)fam) == 0) {
			rv = wt_seterr(err, WT_EDUP, "tensors '%s' and '%s' both map to '%s'",
			               ckpt_tensor_at(c, x.ents[k - 1].t)->name,
			               ckpt_tensor_at(c, x.ents[k].t)->name, x.ents[k].rt);
			goto fail;
		}
	x.p = p;
	if ((rv = shardmap_plan_instances(&x, err)) != WT_OK)
		goto fail;
	if ((rv = shardmap_plan_finish(p, err)) != WT_OK)
		goto fail;
	*out = p;
	p = NULL;
fail:
	for (size_t k = 0; k < x.n_ents; k++) {
		free(x.ents[k].rt);
		free(x.ents[k].canon);
	}
	free(x.ents);
	free(x.ld);
	shardmap_excl_free(x.excl);
	shardmap_plan_free(p);
	return rv;
}
