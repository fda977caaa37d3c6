/*
 * plan_part.c — the partition rules of docs/format.md section 2: for one
 * runtime tensor ("instance": the sorted entries sharing a runtime name) and
 * one rank, which pieces of which sources it holds and its shape. One function
 * per rule kind (sm_kind), dispatched from part_rules[] below; the routed experts'
 * kinds are in plan_part_expert.c, the recurrent mixers' in plan_part_mixer.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "shardmap/plan_part_int.h"

int shardmap_pvec_push(sm_pvec *pv, sm_piece pc, const char *rt, wt_errbuf *err)
{
	if (pv->n == pv->cap) {
		size_t nc = pv->cap ? pv->cap * 2 : 16;
		sm_piece *nv = realloc(pv->v, nc * sizeof(sm_piece));
		if (!nv)
			return wt_seterr(err, WT_ENOMEM,
			                 "tensor '%s': out of memory for a list of %zu pieces", rt,
			                 nc);
		pv->v = nv;
		pv->cap = nc;
	}
	pv->v[pv->n++] = pc;
	return WT_OK;
}

sm_piece shardmap_rows_piece(uint32_t src, int64_t start, int64_t len, int64_t unit)
{
	sm_piece pc = {.src = src,
	               .aux = SM_NONE,
	               .cols = false,
	               .start = start,
	               .len = len,
	               .out_rows = len,
	               .unit = unit};
	return pc;
}

int shardmap_layout_err(const sm_ctx *x, wt_errbuf *err, const char *fmt, ...)
{
	if (!x->p || !err)
		return WT_ELAYOUT;
	char msg[WT_ERRMSG_MAX], sug[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	shardmap_suggest_tp(x, sug, sizeof(sug));
	return wt_seterr(err, WT_ELAYOUT, "%s%s", msg, sug);
}

int shardmap_part_push(const part_req *req, sm_piece pc)
{
	return shardmap_pvec_push(req->pieces, pc, req->rt, req->err);
}

static const ckpt_tensor *part_tensor(const part_req *req, size_t k)
{
	return &req->ctx->ents[req->first + k].view;
}

void shardmap_geo_2d(sm_geo *g, int64_t rows, int64_t cols, int ndim)
{
	g->rows = rows;
	g->cols = cols;
	g->units = 1;
	g->ndim = ndim;
	g->shape[0] = rows;
	g->shape[1] = cols;
	g->expert = false;
}

/* The count a ROWS/COLS/QKVF split divides, and its config.json name. */
static int64_t unit_count(const sm_ctx *x, int unit, const char **what)
{
	switch (unit) {
	case SM_U_HEADS:
		*what = x->fam->whisper ? "decoder_attention_heads" : "num_attention_heads";
		return x->dm.n_heads;
	case SM_U_I:
		*what = x->fam->llama4    ? "intermediate_size_mlp"
		        : x->fam->whisper ? "decoder_ffn_dim"
		                          : "intermediate_size";
		return x->dm.inter;
	case SM_U_IE:
		*what = x->fam->llama4 ? "intermediate_size" : "moe_intermediate_size";
		return x->dm.moe_inter;
	case SM_U_ISH:
		*what = "shared expert intermediate size";
		return x->dm.shared_inter;
	case SM_U_VHEADS:
		*what = x->fam->vis_heads_key != NULL ? x->fam->vis_heads_key
		        : x->fam->voxtral             ? "audio_config.num_attention_heads"
		        : x->fam->whisper             ? "encoder_attention_heads"
		        : x->fam->ultravox            ? "audio_config.encoder_attention_heads"
		        : x->fam->omni                ? "thinker_config.vision_config.num_heads"
		        : x->fam->ovis
		            ? "visual_tokenizer_config.backbone_config.num_attention_heads"
		        : x->fam->vision_siglip ? "vision_config.num_attention_heads"
		        : x->fam->mllama        ? "vision_config.attention_heads"
		                                : "vision_config.num_heads";
		return x->dm.vis_heads;
	case SM_U_VI:
		*what = x->fam->vis_inter_key != NULL ? x->fam->vis_inter_key
		        : x->fam->voxtral             ? "audio_config.intermediate_size"
		        : x->fam->whisper             ? "encoder_ffn_dim"
		        : x->fam->ultravox            ? "audio_config.encoder_ffn_dim"
		        : x->fam->omni    ? "thinker_config.vision_config.intermediate_size"
		        : x->fam->gspeech ? "encoder_config.hidden_dim x feedforward_mult"
		        : x->fam->glm4v   ? "vision_config.out_hidden_size"
		        : x->fam->ovis ? "visual_tokenizer_config.backbone_config.intermediate_size"
		        : x->fam->vision_gated || x->fam->mllama
		            ? "vision_config.intermediate_size"
		            : "the vision MLP size (embed_dim * mlp_ratio)";
		return x->dm.vis_inter;
	case SM_U_VM:
		*what = x->fam->glm4v ? "vision_config.intermediate_size (the merger's MLP)"
		        : x->fam->vision_gated
		            ? "the vision merger size (hidden_size * spatial_merge_size^2)"
		            : "the vision merger size (embed_dim * spatial_merge_size^2)";
		return x->dm.vis_merged;
	case SM_U_VPI:
		*what = "vision_config.projector_input_dim";
		return x->dm.vis_proj_in;
	case SM_U_LKH:
		*what = "linear_num_key_heads";
		return x->dm.lin_k_heads;
	case SM_U_LVH:
		*what = x->fam->lin_heads_key ? x->fam->lin_heads_key : "linear_num_value_heads";
		return x->dm.lin_v_heads;
	case SM_U_HID:
		*what = "hidden_size";
		return x->dm.hidden;
	case SM_U_MH:
		*what = "mamba_n_heads";
		return x->dm.m_heads;
	case SM_U_VPO:
		*what = x->fam->gspeech ? "encoder_config.output_dim"
		                        : "alignment_intermediate_size / 2";
		return x->dm.vis_proj_out;
	case SM_U_ZAR:
		*what = "adapter_rank";
		return x->dm.z_rank;
	case SM_U_G3NLP:
		*what = "num_hidden_layers x hidden_size_per_layer_input";
		return x->dm.g3n_lp;
	case SM_U_G3NLR:
		*what = "laurel_rank";
		return x->dm.g3n_laurel;
	case SM_U_MI:
		*what = x->fam->mamba_lm          ? "intermediate_size"
		        : x->cfg->mamba_d_ssm > 0 ? "mamba_d_ssm"
		                                  : "mamba_expand * hidden_size";
		return x->dm.m_inter;
	default:
		*what = "?";
		return 1;
	}
}

/* WT_ELAYOUT unless tp_size divides the rule's unit count (plan_part_int.h). */
int shardmap_part_check_units(const part_req *req, int64_t *units)
{
	const char *what;
	*units = unit_count(req->ctx, req->rule->unit, &what);
	if (*units % req->tp_size == 0)
		return WT_OK;
	return shardmap_layout_err(req->ctx, req->err,
	                           "tensor '%s': tp_size %" PRId64 " does not divide %s %" PRId64,
	                           req->rt, req->tp_size, what, *units);
}

/* Replicated: the whole tensor, every dimension as stored. */
static int part_replicated(const part_req *req)
{
	const ckpt_tensor *t = req->src;
	shardmap_geo_2d(req->geom, sm_trows(t), sm_tcols(t), t->ndim);
	for (int k = 0; k < t->ndim; k++)
		req->geom->shape[k] = t->shape[k];
	return shardmap_part_push(req, shardmap_rows_piece(0, 0, sm_trows(t), 0));
}

/* Fused and replicated (SM_K_REPLF): every part whole, the parts' rows concatenated in part
 * order on every rank. */
static int part_replicated_fused(const part_req *req)
{
	int64_t rows = 0;
	int rv = WT_OK;
	for (size_t k = 0; k < req->n_parts && rv == WT_OK; k++) {
		int64_t n = sm_trows(part_tensor(req, k));
		rv = shardmap_part_push(req, shardmap_rows_piece((uint32_t)k, 0, n, 0));
		rows += n;
	}
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, rows, sm_tcols(req->src), req->rule->ndim);
	return rv;
}

/* The rows of one rank's [q_r; k_r; v_r] (section 2.2): q_rows of q from row
 * q_at, kv_rows of k and of v from row kv_at of each (v: v_rows from v_at, which differ
 * where the family's v heads are v_head_dim rows, qkv_v_head_dim). */
typedef struct qkv_span {
	int64_t q_rows, q_at, kv_rows, kv_at, v_rows, v_at;
} qkv_span;

/* The kv heads rank r holds (section 2.2): kv_local heads from head kv_shard * kv_local;
 * tp_size must divide num_attention_heads, and tp_size and num_key_value_heads one the
 * other. */
static int kv_heads_of(const part_req *req, int64_t *kv_local, int64_t *kv_shard)
{
	int64_t tp = req->tp_size, heads = req->ctx->dm.n_heads, kv_heads = req->ctx->dm.n_kv_heads;
	const char *hk = req->ctx->dm.heads_key ? req->ctx->dm.heads_key : "num_attention_heads";
	const char *kk = req->ctx->dm.kv_key ? req->ctx->dm.kv_key : "num_key_value_heads";
	if (heads % tp)
		return shardmap_layout_err(req->ctx, req->err,
		                           "tensor '%s': tp_size %" PRId64
		                           " does not divide %s %" PRId64,
		                           req->rt, tp, hk, heads);
	if (req->ctx->fam->kv_divides_tp && kv_heads % tp)
		return shardmap_layout_err(
		    req->ctx, req->err,
		    "tensor '%s': tp_size %" PRId64 " does not divide %s %" PRId64
		    " (vLLM's %s.py asserts it: no kv head is replicated)",
		    req->rt, tp, kk, kv_heads,
		    req->ctx->fam->vllm_py ? req->ctx->fam->vllm_py : req->ctx->fam->name);
	if (req->ctx->fam->kv_one_or_split && kv_heads > 1 && kv_heads < tp)
		return shardmap_layout_err(
		    req->ctx, req->err,
		    "tensor '%s': tp_size %" PRId64 " exceeds %s %" PRId64
		    " (vLLM's %s.py cuts the [%s, d] k norm by rank with "
		    "sharded_weight_loader and replicates it only for one kv "
		    "head)",
		    req->rt, tp, kk, kv_heads, req->ctx->fam->name, kk);
	if (kv_heads % tp && tp % kv_heads)
		return shardmap_layout_err(req->ctx, req->err,
		                           "tensor '%s': tp_size %" PRId64 " and %s %" PRId64
		                           ": one must divide the other",
		                           req->rt, tp, kk, kv_heads);
	if (kv_heads >= tp) {
		*kv_local = kv_heads / tp;
		*kv_shard = req->tp_rank;
	} else {
		/* fewer kv heads than ranks: each kv head is replicated on tp / kv_heads
		 * consecutive ranks */
		*kv_local = 1;
		*kv_shard = req->tp_rank / (tp / kv_heads);
	}
	return WT_OK;
}

static int qkv_span_of(const part_req *req, qkv_span *s)
{
	int64_t tp = req->tp_size, heads = req->ctx->dm.n_heads;
	int64_t head_dim = req->ctx->dm.head_dim;
	int64_t kv_local, kv_shard;
	int rv = kv_heads_of(req, &kv_local, &kv_shard);
	if (rv != WT_OK)
		return rv;
	/* a gated q (Qwen3-Next) holds [query_h; gate_h], 2*d rows, per head */
	s->q_rows = heads / tp * head_dim * (req->ctx->fam->q_gated ? 2 : 1);
	s->q_at = req->tp_rank * s->q_rows;
	s->kv_rows = kv_local * head_dim;
	s->kv_at = kv_shard * s->kv_rows;
	int64_t vd = req->ctx->fam->qkv_v_head_dim && req->ctx->dm.v_head_dim > 0
	                 ? req->ctx->dm.v_head_dim
	                 : head_dim;
	s->v_rows = kv_local * vd;
	s->v_at = kv_shard * s->v_rows;
	shardmap_geo_2d(req->geom, s->q_rows + s->kv_rows + s->v_rows, sm_tcols(req->src),
	                req->rule->ndim);
	return WT_OK;
}

/* Rows per kv head ([KV, d], Command R+'s k_norm): the rows of the kv heads the rank's
 * k_proj slice holds (kv_heads_of), so the norm travels with its head. */
static int part_kv_heads(const part_req *req)
{
	int64_t kv_local, kv_shard, kv_heads = req->ctx->dm.n_kv_heads;
	int rv = kv_heads_of(req, &kv_local, &kv_shard);
	if (rv != WT_OK)
		return rv;
	int64_t per_head = sm_trows(req->src) / kv_heads;
	shardmap_geo_2d(req->geom, kv_local * per_head, sm_tcols(req->src), req->rule->ndim);
	return shardmap_part_push(
	    req, shardmap_rows_piece(0, kv_shard * kv_local * per_head, kv_local * per_head, 0));
}

/* Static sink keys / values [S, KV, d] (openPangu's param_sink_key / _value, loaded by
 * sharded_weight_loader(1)): the kv heads the rank's k_proj slice holds, on dim 1 of each of
 * the S sinks, so [S, KV/T, d] (S pieces of rows of the [S*KV, d] view). */
static int part_sink_kv(const part_req *req)
{
	int64_t kv_local, kv_shard, kv_heads = req->ctx->dm.n_kv_heads;
	int rv = kv_heads_of(req, &kv_local, &kv_shard);
	if (rv != WT_OK)
		return rv;
	if (req->src->ndim != 3 || req->src->shape[1] != kv_heads)
		return wt_seterr(req->err, WT_ESHAPE,
		                 "tensor '%s': not [sinks, num_key_value_heads %" PRId64 ", dim]",
		                 req->rt, kv_heads);
	int64_t sinks = req->src->shape[0], d = req->src->shape[2];
	shardmap_geo_2d(req->geom, sinks * kv_local, d, 3);
	req->geom->shape[0] = sinks;
	req->geom->shape[1] = kv_local;
	req->geom->shape[2] = d;
	for (int64_t s = 0; rv == WT_OK && s < sinks; s++)
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(0, s * kv_heads + kv_shard * kv_local, kv_local, 0));
	return rv;
}

/* Fused QKV with GQA (section 2.2): [q_r; k_r; v_r] from parts 0, 1, 2. */
static int part_qkv(const part_req *req)
{
	qkv_span s;
	int rv = qkv_span_of(req, &s);
	if (rv == WT_OK && req->n_parts != 3)
		return wt_seterr(req->err, WT_ENOTFOUND, "tensor '%s': q, k and v are needed",
		                 req->rt);
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(0, s.q_at, s.q_rows, 0));
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(1, s.kv_at, s.kv_rows, 0));
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(2, s.v_at, s.v_rows, 0));
	return rv;
}

/* The same from one checkpoint tensor [q (H*d rows); k (KV*d); v (KV*d)]. */
static int part_qkv_ckpt(const part_req *req)
{
	qkv_span s;
	int rv = qkv_span_of(req, &s);
	int64_t q_all = req->ctx->dm.n_heads * req->ctx->dm.head_dim,
	        kv_all = req->ctx->dm.n_kv_heads * req->ctx->dm.head_dim;
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(0, s.q_at, s.q_rows, 0));
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(0, q_all + s.kv_at, s.kv_rows, 0));
	if (rv == WT_OK)
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(0, q_all + kv_all + s.kv_at, s.kv_rows, 0));
	return rv;
}

/* Fused per kv group in the checkpoint ([KV, H/KV + 2, d] rows: group g holds its n = H/KV q
 * heads, then its k head, then its v head; GPT-NeoX's / BLOOM's query_key_value is the case
 * KV == H, [H, 3, d], and Falcon's multi_query KV == 1, [q; k; v]): rank r's
 * [q_r; k_r; v_r] as SM_K_QKV lays it out (kv heads replicated when KV < T), gathered one
 * d-row piece per head and part (vLLM's gpt_neox.py / bloom.py view(H, 3, d).transpose and
 * falcon.py view(KV, n + 2, d) narrow / cat before QKVParallelLinear's split). */
static int part_qkv_heads(const part_req *req)
{
	qkv_span s;
	int rv = qkv_span_of(req, &s);
	int64_t d = req->ctx->dm.head_dim, H = req->ctx->dm.n_heads, KV = req->ctx->dm.n_kv_heads;
	if (rv == WT_OK && (KV <= 0 || H % KV != 0))
		return wt_seterr(
		    req->err, WT_EUNSUPPORTED,
		    "tensor '%s': a q/k/v fused per kv group needs num_attention_heads "
		    "(%" PRId64 ") divisible by the kv heads (%" PRId64 ")",
		    req->rt, H, KV);
	int64_t n = rv == WT_OK ? H / KV : 1, h0 = s.q_at / d, nh = s.q_rows / d;
	int64_t g0 = s.kv_at / d, ng = s.kv_rows / d;
	for (int64_t h = h0; h < h0 + nh && rv == WT_OK; h++)
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(0, ((h / n) * (n + 2) + h % n) * d, d, 0));
	for (int64_t part = 0; part < 2; part++)
		for (int64_t g = g0; g < g0 + ng && rv == WT_OK; g++)
			rv = shardmap_part_push(
			    req, shardmap_rows_piece(0, (g * (n + 2) + n + part) * d, d, 0));
	return rv;
}

/* q (part 0, [H*d] rows) with k / v interleaved per kv head in part 1 ([KV, 2, d] rows: kv
 * head g's k at row 2*g*d, its v d rows further; TeleChat2's key_value): rank r's
 * [q_r; k_r; v_r] as SM_K_QKV lays it out (kv heads replicated when KV < T), k and v gathered
 * one d-row piece per kv head (vLLM's telechat2.py _split_key_value de-interleaves before
 * QKVParallelLinear's split). */
static int part_qkv_interleaved(const part_req *req)
{
	qkv_span s;
	int rv = qkv_span_of(req, &s);
	if (rv == WT_OK && req->n_parts != 2)
		return wt_seterr(req->err, WT_ENOTFOUND, "tensor '%s': q and key_value are needed",
		                 req->rt);
	int64_t d = req->ctx->dm.head_dim, g0 = d > 0 ? s.kv_at / d : 0,
	        ng = d > 0 ? s.kv_rows / d : 0;
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(0, s.q_at, s.q_rows, 0));
	for (int64_t part = 0; part < 2; part++)
		for (int64_t g = g0; g < g0 + ng && rv == WT_OK; g++)
			rv = shardmap_part_push(req,
			                        shardmap_rows_piece(1, (2 * g + part) * d, d, 0));
	return rv;
}

/* Fused in the checkpoint: one source [q; k; v], each part units * head_dim rows;
 * rank r takes heads [r*units/T, (r+1)*units/T) of each part. */
static int part_qkv_fused(const part_req *req)
{
	int64_t units, part_rows = sm_trows(req->src) / 3;
	int rv = shardmap_part_check_units(req, &units);
	if (rv != WT_OK)
		return rv;
	/* a head is part_rows / units rows; the rank takes units / T heads of each part */
	int64_t rows_local = part_rows / units * (units / req->tp_size);
	shardmap_geo_2d(req->geom, 3 * rows_local, sm_tcols(req->src), req->rule->ndim);
	for (int64_t part = 0; part < 3 && rv == WT_OK; part++)
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(0, part * part_rows + req->tp_rank * rows_local,
		                             rows_local, 0));
	return rv;
}

/* Column parallel: rows [r*R/T, (r+1)*R/T) of each part, parts concatenated. */
static int part_row_split(const part_req *req)
{
	int64_t units, rows = 0, tp = req->tp_size;
	int rv = shardmap_part_check_units(req, &units);
	for (size_t k = 0; k < req->n_parts && rv == WT_OK; k++) {
		int64_t part_rows = sm_trows(part_tensor(req, k));
		if (part_rows % tp)
			return shardmap_layout_err(req->ctx, req->err,
			                           "tensor '%s': tp_size %" PRId64
			                           " does not divide its %" PRId64 " rows",
			                           req->rt, tp, part_rows);
		int64_t local = part_rows / tp;
		rv = shardmap_part_push(
		    req, shardmap_rows_piece((uint32_t)k, req->tp_rank * local, local, 0));
		rows += local;
	}
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, rows, sm_tcols(req->src), req->rule->ndim);
	if (rv == WT_OK && req->rule->ndim == 3) { /* [C, 1, K] depthwise conv (LFM2) */
		req->geom->shape[1] = req->src->shape[1];
		req->geom->shape[2] = req->src->shape[2];
	}
	if (rv == WT_OK && req->rule->ndim == 4) { /* [out, C, p, p] Conv2d by out channels; */
		int d = 0; /* [1, 1, H, 1] by its first dim over 1 (Kimi-Linear's A_log, dim 2) */
		while (d < 3 && req->src->shape[d] == 1)
			d++;
		for (int k = 0; k < 4; k++)
			req->geom->shape[k] = req->src->shape[k];
		req->geom->shape[d] /= tp;
	}
	return rv;
}

/* The q and v biases of a q/k/v whose k has no bias (Whisper's encoder): rows
 * [r*R/T, (r+1)*R/T) of each, with as many zero rows for k between them, [q_r; 0; v_r]
 * (vLLM's QKVParallelLinear loading _create_fake_bias_for_k_proj's zeros). */
static int part_qkv_zero_k(const part_req *req)
{
	int64_t units, tp = req->tp_size, rows = sm_trows(req->src);
	int rv = shardmap_part_check_units(req, &units);
	if (rv == WT_OK && req->n_parts != 2)
		return wt_seterr(req->err, WT_ENOTFOUND, "tensor '%s': q and v biases are needed",
		                 req->rt);
	int64_t local = rows / tp;
	if (rv == WT_OK)
		rv =
		    shardmap_part_push(req, shardmap_rows_piece(0, req->tp_rank * local, local, 0));
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(SM_ZERO, 0, local, 0));
	if (rv == WT_OK)
		rv =
		    shardmap_part_push(req, shardmap_rows_piece(1, req->tp_rank * local, local, 0));
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, 3 * local, sm_tcols(req->src), req->rule->ndim);
	return rv;
}

/* The v bias of a k/v whose k has no bias (Whisper's encoder_attn.kv_proj): rows
 * [r*R/T, (r+1)*R/T) of v after as many zero rows for k, [0; v_r]. */
static int part_kv_zero_k(const part_req *req)
{
	int64_t units, tp = req->tp_size, rows = sm_trows(req->src);
	int rv = shardmap_part_check_units(req, &units);
	int64_t local = rows / tp;
	if (rv == WT_OK)
		rv = shardmap_part_push(req, shardmap_rows_piece(SM_ZERO, 0, local, 0));
	if (rv == WT_OK)
		rv =
		    shardmap_part_push(req, shardmap_rows_piece(0, req->tp_rank * local, local, 0));
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, 2 * local, sm_tcols(req->src), req->rule->ndim);
	return rv;
}

/* One checkpoint tensor of two equal halves ([gate; up]): rows [r*R/T, (r+1)*R/T)
 * of each half, [gate_r ; up_r] (dense gate_up_proj's layout, section 2.2); with up_first the
 * checkpoint's halves are [up; gate] (SM_K_ROWS2R) and the rank still holds [gate_r; up_r]. */
static int halves(const part_req *req, bool up_first)
{
	int64_t units, tp = req->tp_size, half = sm_trows(req->src) / 2;
	int rv = shardmap_part_check_units(req, &units);
	if (rv != WT_OK)
		return rv;
	int64_t local = half / tp, first = up_first ? half : 0;
	rv =
	    shardmap_part_push(req, shardmap_rows_piece(0, first + req->tp_rank * local, local, 0));
	if (rv == WT_OK)
		rv = shardmap_part_push(
		    req, shardmap_rows_piece(0, half - first + req->tp_rank * local, local, 0));
	if (rv == WT_OK)
		shardmap_geo_2d(req->geom, 2 * local, sm_tcols(req->src), req->rule->ndim);
	return rv;
}

static int part_halves(const part_req *req)
{
	return halves(req, false);
}

static int part_halves_up_first(const part_req *req)
{
	return halves(req, true);
}

/* Row parallel: columns [r*K/T, (r+1)*K/T), all rows. */
static int part_col_split(const part_req *req)
{
	int64_t units, tp = req->tp_size, in_features = sm_tcols(req->src);
	const char *what;
	units = unit_count(req->ctx, req->rule->unit, &what);
	/* both the unit count and the columns must divide (the message names the units) */
	if (units % tp || in_features % tp)
		return shardmap_layout_err(req->ctx, req->err,
		                           "tensor '%s': tp_size %" PRId64
		                           " does not divide %s %" PRId64,
		                           req->rt, tp, what, units);
	int64_t local = in_features / tp;
	shardmap_geo_2d(req->geom, sm_trows(req->src), local, 2);
	sm_piece pc = {.src = 0,
	               .aux = SM_NONE,
	               .cols = true,
	               .start = req->tp_rank * local,
	               .len = local,
	               .out_rows = sm_trows(req->src),
	               .unit = 0};
	return shardmap_part_push(req, pc);
}

/* SM_K_QKVFW / SM_K_COLSW: split as SM_K_QKVF / SM_K_COLS when tp_size divides the unit
 * count, else the whole tensor on every rank (InternViT's attention: vLLM builds
 * InternParallelAttention when the heads divide tp_size, else InternSdpaAttention). */
static bool units_divide(const part_req *req)
{
	const char *what;
	int64_t units = unit_count(req->ctx, req->rule->unit, &what);
	return units > 0 && units % req->tp_size == 0;
}

static int part_qkv_fused_or_whole(const part_req *req)
{
	return units_divide(req) ? part_qkv_fused(req) : part_replicated(req);
}

static int part_col_split_or_whole(const part_req *req)
{
	return units_divide(req) ? part_col_split(req) : part_replicated(req);
}

typedef int (*part_fn)(const part_req *req);

/* The rule of each kind (sm_kind), like the family tables map names to kinds. */
static const part_fn part_rules[] = {
    [SM_K_REPL] = part_replicated,
    [SM_K_QKV] = part_qkv,
    [SM_K_ROWS] = part_row_split,
    [SM_K_COLS] = part_col_split,
    [SM_K_VOCAB] = shardmap_part_vocab,
    [SM_K_EXP13] = shardmap_part_expert_w13,
    [SM_K_EXP2] = shardmap_part_expert_w2,
    [SM_K_QKVF] = part_qkv_fused,
    [SM_K_QKVC] = part_qkv_ckpt,
    [SM_K_ROWS2] = part_halves,
    [SM_K_EXP13S] = shardmap_part_expert_w13_stacked,
    [SM_K_EXP2S] = shardmap_part_expert_w2_stacked,
    [SM_K_EXP13I] = shardmap_part_expert_w13_stacked,
    [SM_K_EXPB13] = shardmap_part_expert_b13,
    [SM_K_EXPB2] = shardmap_part_expert_b2,
    [SM_K_CONVQKV] = shardmap_part_conv_qkv,
    [SM_K_KVH] = part_kv_heads,
    [SM_K_ROWS3] = shardmap_part_thirds,
    [SM_K_MAMBA] = shardmap_part_mamba,
    [SM_K_QKVH] = part_qkv_heads,
    [SM_K_EXPGU] = shardmap_part_expert_w13_two,
    [SM_K_QKVZ] = part_qkv_zero_k,
    [SM_K_KVZ] = part_kv_zero_k,
    [SM_K_EXP1] = shardmap_part_expert_w1,
    [SM_K_QKVI] = part_qkv_interleaved,
    [SM_K_REPLF] = part_replicated_fused,
    [SM_K_ROWS2R] = part_halves_up_first,
    [SM_K_SINKKV] = part_sink_kv,
    [SM_K_ROWS2H] = shardmap_part_halves_per_unit,
    [SM_K_QKVFW] = part_qkv_fused_or_whole,
    [SM_K_COLSW] = part_col_split_or_whole,
};

int shardmap_partition(const sm_ctx *ctx, size_t first, size_t n_parts, uint32_t tp_rank,
                       uint32_t ep_rank, sm_pvec *pieces, sm_geo *geom, wt_errbuf *err)
{
	const sm_rule *rule = &ctx->fam->rules[ctx->ents[first].rule];
	part_req req = {.ctx = ctx,
	                .first = first,
	                .n_parts = n_parts,
	                .rule = rule,
	                .rt = ctx->ents[first].rt,
	                .tp_size = ctx->tp_size,
	                .tp_rank = tp_rank,
	                .ep_rank = ep_rank,
	                .src = &ctx->ents[first].view,
	                .pieces = pieces,
	                .geom = geom,
	                .err = err};
	if (rule->kind >= sizeof(part_rules) / sizeof(part_rules[0]) || !part_rules[rule->kind])
		return wt_seterr(err, WT_EINVAL, "tensor '%s': bad rule kind %u", req.rt,
		                 (unsigned)rule->kind);
	return part_rules[rule->kind](&req);
}
