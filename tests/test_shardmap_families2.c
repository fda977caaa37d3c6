/*
 * test_shardmap_families2.c — families added after test_shardmap_families.c
 * filled up: Granite (IBM Granite 3.x) with hand-computed shapes, its odd
 * vocabulary padded per rank, tied and untied heads, and the covered-exactly-
 * once property over TP 1-8; GraniteMoE / GraniteMoeShared, whose checkpoints
 * store the experts stacked ([E, 2*I, hid], [E, hid, I]): hand-computed rows
 * and columns of the stacks under TP and EP, w13_order, the shards byte-equal
 * to a Mixtral checkpoint holding the same weights per expert (quantized too),
 * coverage, and the refusals; OLMoE (Llama's pre-norm decoder, q_norm / k_norm
 * over all heads replicated in full, every layer MoE with Qwen-MoE's expert
 * names): hand-computed slices under TP x EP, coverage and the refusals; OLMo 1
 * (Llama's tensors, no norm tensor at all): slices at TP 2 tied and untied, a stray
 * norm refused, coverage over TP 1-8. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0003ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* Granite: H 8, KV 2, d 32, V 1003 (odd like Granite 3's 49155), multipliers
 * that are math, not layout. */
#define GRANITE_CFG(tied)                                                                          \
	"{\"architectures\":[\"GraniteForCausalLM\"],\"model_type\":\"granite\","                  \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":512,\"vocab_size\":1003,\"num_hidden_layers\":2,"                   \
	"\"embedding_multiplier\":12.0,\"residual_multiplier\":0.22,"                              \
	"\"attention_multiplier\":0.015625,\"logits_scaling\":8.0,\"tie_word_embeddings\":" tied   \
	"}"

static tm_model *tm_granite(int lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, 256, lm_head);
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

static void test_granite(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_granite(0), GRANITE_CFG("true"), 4, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "granite");
	assert_true(shardmap_tied_lm_head(f.p));
	/* 1003 rows padded to 1024 (vocab_pad 64): 256 per rank, the last rank's
	 * padding rows zero */
	const char *emb = "model.embed_tokens.weight";
	shp(&f, 3, emb, 2, 256, 256, 0);
	size_t rb;
	const uint8_t *want = src_rows(&f, emb, 768, &rb);
	const uint8_t *got = out_bytes(&f, 3, emb);
	assert_memory_equal(got, want, (1003 - 768) * rb);
	for (size_t k = (size_t)(1003 - 768) * rb; k < 256 * rb; k++)
		assert_int_equal(got[k], 0);
	assert_int_equal(tm_ix(f.p, 0, "lm_head.weight"), -1);
	shp(&f, 1, "model.layers.0.self_attn.qkv_proj.weight", 2, 64 + 2 * 32, 256, 0);
	shp(&f, 1, "model.layers.1.mlp.gate_up_proj.weight", 2, 2 * 128, 256, 0);
	shp(&f, 2, "model.layers.1.mlp.down_proj.weight", 2, 256, 128, 0);
	fx_close(&f);
	/* untied: GraniteConfig's default is false, like Llama's */
	fx_open(&f, tm_granite(1), GRANITE_CFG("false"), 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 1, "lm_head.weight", 2, 512, 256, 0);
	fx_close(&f);
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_granite(0), GRANITE_CFG("true"), 2, dense, 4);
}

/* ---------- GraniteMoE: experts stacked in the checkpoint ---------- */

#define GM_I 128 /* intermediate_size: the expert size */

/* H 8, KV 2, d 32, I 128, V 1003, tied (granite-3.0-*-a*m), E and extra keys given. */
#define GM_CFG(arch, type, extra)                                                                  \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" type "\",\"hidden_size\":256,"       \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":128,"           \
	"\"vocab_size\":1003,\"num_hidden_layers\":2,\"num_experts_per_tok\":2,"                   \
	"\"embedding_multiplier\":12.0,\"residual_multiplier\":0.22,"                              \
	"\"attention_multiplier\":0.015625,\"logits_scaling\":6.0,\"tie_word_embeddings\":"        \
	"true" extra "}"
#define GRANITEMOE_CFG GM_CFG("GraniteMoeForCausalLM", "granitemoe", ",\"num_local_experts\":6")
#define GMS_CFG(S)                                                                                 \
	GM_CFG("GraniteMoeSharedForCausalLM", "granitemoeshared",                                  \
	       ",\"num_local_experts\":4,\"shared_intermediate_size\":" S)
/* The same model as Mixtral: per-expert w1/w3/w2, router block_sparse_moe.gate */
#define GM_MIXTRAL_CFG GM_CFG("MixtralForCausalLM", "mixtral", ",\"num_local_experts\":6")

#define GM_IN  "model.layers.1.block_sparse_moe.input_linear.weight"
#define GM_OUT "model.layers.1.block_sparse_moe.output_linear.weight"
#define GM_W13 "model.layers.1.block_sparse_moe.experts.w13_weight"
#define GM_W2  "model.layers.1.block_sparse_moe.experts.w2_weight"

/* E experts per layer; a shared MLP of S rows per half when S > 0. */
static tm_model *tm_granitemoe(int64_t E, int64_t S)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, 256, 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.router.layer.weight");
		tm_add2(m, b, E, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.input_linear.weight");
		tm_add(m, b, WT_DTYPE_INVALID, 3, E, 2 * GM_I, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.output_linear.weight");
		tm_add(m, b, WT_DTYPE_INVALID, 3, E, 256, GM_I);
		if (S == 0)
			continue;
		tm_fmt(b, sizeof(b), TM_L, i, "shared_mlp.input_linear.weight");
		tm_add2(m, b, 2 * S, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "shared_mlp.output_linear.weight");
		tm_add2(m, b, 256, S);
	}
	return m;
}

/* Add tensor `name` [a, b] (b 0: [a]) holding a copy of src. */
static void put(tm_model *m, const char *name, int64_t a, int64_t b, const void *src)
{
	void *d = tm_add(m, name, WT_DTYPE_INVALID, b ? 2 : 1, a, b, 0);
	memcpy(d, src, (size_t)tu_desc_nbytes(&m->d[m->n - 1]));
}

/* The Mixtral checkpoint of g's weights: experts.{j}.w1 / w3 = the gate / up rows of
 * input_linear[j], w2 = output_linear[j], router.layer -> gate; the rest as is. */
static tm_model *as_mixtral(const tm_model *g)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	for (size_t k = 0; k < g->n; k++) {
		const st_desc *d = &g->d[k];
		const uint8_t *v = g->data[k];
		char b[200], pre[64];
		int i = 0;
		bool layer = sscanf(d->name, "model.layers.%d.", &i) == 1;
		snprintf(pre, sizeof(pre), "model.layers.%d.block_sparse_moe.", i);
		const char *leaf =
		    layer && strncmp(d->name, pre, strlen(pre)) == 0 ? d->name + strlen(pre) : "";
		size_t rowb = (size_t)d->shape[d->ndim - 1] * 2;
		if (strcmp(leaf, "router.layer.weight") == 0) {
			snprintf(b, sizeof(b), "%sgate.weight", pre);
			put(m, b, d->shape[0], d->shape[1], v);
		} else if (strcmp(leaf, "input_linear.weight") == 0) {
			for (int64_t j = 0; j < d->shape[0]; j++)
				for (int h = 0; h < 2; h++) {
					snprintf(b, sizeof(b), "%sexperts.%lld.%s.weight", pre,
					         (long long)j, h ? "w3" : "w1");
					put(m, b, GM_I, 256, v + (size_t)(2 * j + h) * GM_I * rowb);
				}
		} else if (strcmp(leaf, "output_linear.weight") == 0) {
			for (int64_t j = 0; j < d->shape[0]; j++) {
				snprintf(b, sizeof(b), "%sexperts.%lld.w2.weight", pre,
				         (long long)j);
				put(m, b, 256, GM_I, v + (size_t)j * 256 * rowb);
			}
		} else {
			put(m, d->name, d->shape[0], d->ndim == 2 ? d->shape[1] : 0, v);
		}
	}
	return m;
}

/* Source rows from row r0 of tensor name (rows of its [E*a, b] view for a stack). */
static const uint8_t *srow(const fx *f, const char *name, int64_t r0)
{
	size_t rowb;
	return src_rows(f, name, r0, &rowb);
}

#define RB13 (256 * 2)  /* bytes of a row of input_linear / w13 (BF16 hid) */
#define RB2  (GM_I * 2) /* of output_linear (BF16 I) */

/* Every rank of a and b: the same tensors (names, dtypes, shapes) and bytes. */
static void same_shards(const fx *a, const fx *b)
{
	assert_int_equal(shardmap_n_ranks(a->p), shardmap_n_ranks(b->p));
	for (uint32_t r = 0; r < shardmap_n_ranks(a->p); r++) {
		size_t n = shardmap_rank_n_tensors(a->p, r);
		assert_int_equal(n, shardmap_rank_n_tensors(b->p, r));
		for (size_t i = 0; i < n; i++) {
			const sm_out_info *x = shardmap_rank_tensor(a->p, r, i),
			                  *y = shardmap_rank_tensor(b->p, r, i);
			assert_string_equal(x->name, y->name);
			assert_int_equal(x->dtype, y->dtype);
			assert_int_equal(x->ndim, y->ndim);
			assert_memory_equal(x->shape, y->shape, sizeof(x->shape));
			assert_int_equal(a->pr->len[r][i], b->pr->len[r][i]);
			if (memcmp(a->pr->b[r][i], b->pr->b[r][i], a->pr->len[r][i]) != 0)
				fail_msg("rank %u '%s': bytes differ from Mixtral's", r, x->name);
		}
	}
}

static void test_granitemoe_ep(void **state)
{
	(void)state;
	fx f;
	/* TP 2 x EP 2, E 6: ep rank 1 (ranks 2, 3) holds experts 3..5 whole, each
	 * [gate_j; up_j] = input_linear[j]: rows [3*256, 6*256) of the [E*256, 256] view */
	fx_open(&f, tm_granitemoe(6, 0), GRANITEMOE_CFG, 2, 2, 0, true);
	assert_string_equal(shardmap_family(f.p), "granitemoe");
	assert_true(shardmap_tied_lm_head(f.p));
	shp(&f, 3, GM_W13, 3, 3, 2 * GM_I, 256);
	shp(&f, 3, GM_W2, 3, 3, 256, GM_I);
	assert_memory_equal(out_bytes(&f, 3, GM_W13), srow(&f, GM_IN, 3 * 256), 3 * 256 * RB13);
	assert_memory_equal(out_bytes(&f, 2, GM_W13), srow(&f, GM_IN, 3 * 256), 3 * 256 * RB13);
	assert_memory_equal(out_bytes(&f, 0, GM_W13), srow(&f, GM_IN, 0), 3 * 256 * RB13);
	assert_memory_equal(out_bytes(&f, 3, GM_W2), srow(&f, GM_OUT, 3 * 256), 3 * 256 * RB2);
	assert_memory_equal(out_bytes(&f, 1, GM_W2), srow(&f, GM_OUT, 0), 3 * 256 * RB2);
	/* the router, renamed as Mixtral's, whole on every rank */
	const char *gate = "model.layers.0.block_sparse_moe.gate.weight";
	shp(&f, 3, gate, 2, 6, 256, 0);
	assert_memory_equal(out_bytes(&f, 3, gate),
	                    srow(&f, "model.layers.0.block_sparse_moe.router.layer.weight", 0),
	                    6 * RB13);
	assert_int_equal(tm_ix(f.p, 0, "model.layers.0.block_sparse_moe.router.layer.weight"), -1);
	fx_close(&f);
	/* w13_order up_gate: [up_j; gate_j] of each local expert */
	fx_open(&f, tm_granitemoe(6, 0), GRANITEMOE_CFG, 2, 2, 1, true);
	const uint8_t *got = out_bytes(&f, 3, GM_W13);
	for (int64_t slot = 0; slot < 3; slot++) {
		int64_t j = 3 + slot;
		const uint8_t *o = got + (size_t)(slot * 2 * GM_I) * RB13;
		assert_memory_equal(o, srow(&f, GM_IN, j * 2 * GM_I + GM_I), GM_I * RB13);
		assert_memory_equal(o + GM_I * RB13, srow(&f, GM_IN, j * 2 * GM_I), GM_I * RB13);
	}
	fx_close(&f);
}

static void test_granitemoe_tp(void **state)
{
	(void)state;
	fx f;
	/* TP 2, no EP: every expert on rank 1 is [gate_j rows [64, 128) ; up_j rows
	 * [64, 128)] = view rows j*256 + 64 and j*256 + 128 + 64; w2 columns [64, 128) */
	fx_open(&f, tm_granitemoe(6, 0), GRANITEMOE_CFG, 2, 1, 0, true);
	shp(&f, 1, GM_W13, 3, 6, GM_I, 256);
	shp(&f, 1, GM_W2, 3, 6, 256, GM_I / 2);
	const uint8_t *w13 = out_bytes(&f, 1, GM_W13), *w2 = out_bytes(&f, 1, GM_W2);
	for (int64_t j = 0; j < 6; j++) {
		const uint8_t *o = w13 + (size_t)(j * GM_I) * RB13;
		assert_memory_equal(o, srow(&f, GM_IN, j * 2 * GM_I + 64), 64 * RB13);
		assert_memory_equal(o + 64 * RB13, srow(&f, GM_IN, j * 2 * GM_I + GM_I + 64),
		                    64 * RB13);
	}
	const uint8_t *src = srow(&f, GM_OUT, 0);
	for (int64_t row = 0; row < 6 * 256; row++)
		assert_memory_equal(w2 + (size_t)row * 128, src + (size_t)row * RB2 + 128, 128);
	fx_close(&f);
}

/* The shards of a GraniteMoE checkpoint are those of a Mixtral checkpoint holding the
 * same weights per expert, under TP, EP (uneven too), w13_order and every scheme. */
static void test_granitemoe_as_mixtral(void **state)
{
	(void)state;
	static const struct {
		uint32_t T, P;
		wt_quant q;
		int up_gate;
	} lays[] = {
	    {1, 1, WT_QUANT_NONE, 0},         {2, 1, WT_QUANT_NONE, 1},
	    {2, 2, WT_QUANT_NONE, 0},         {4, 1, WT_QUANT_FP8_CHANNEL, 0},
	    {1, 4, WT_QUANT_INT8_CHANNEL, 1}, {2, 3, WT_QUANT_FP8_TENSOR, 0},
	    {2, 1, WT_QUANT_INT4_GROUP, 0},   {8, 1, WT_QUANT_FP8_BLOCK, 1},
	};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[k].T;
		l.ep_size = lays[k].P;
		l.quant = lays[k].q;
		l.w13_up_gate = lays[k].up_gate;
		l.group_size = 32; /* int4: w2 has 64 columns per rank at TP 2 */
		fx g, x;
		tm_model *gm = tm_granitemoe(6, 0);
		fx_open_l(&x, as_mixtral(gm), GM_MIXTRAL_CFG, &l, true);
		fx_open_l(&g, gm, GRANITEMOE_CFG, &l, true);
		assert_string_equal(shardmap_family(x.p), "mixtral");
		same_shards(&g, &x);
		fx_close(&g);
		fx_close(&x);
	}
}

static void test_granitemoe_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {2, 3}, {1, 6}, {8, 4}};
	coverage(tm_granitemoe(6, 0), GRANITEMOE_CFG, 2, lays, sizeof(lays) / sizeof(lays[0]));
	static const uint32_t shared[][2] = {{1, 1}, {2, 1}, {8, 1}, {2, 2}, {4, 4}};
	coverage(tm_granitemoe(4, 256), GMS_CFG("256"), 2, shared, 5);
}

static void test_granitemoeshared(void **state)
{
	(void)state;
	fx f;
	/* shared MLP at TP 2 (S 256): rank 1's input_linear = rows [128, 256) and
	 * [384, 512) of [gate; up]; output_linear columns [128, 256); E 4 at EP 2 */
	fx_open(&f, tm_granitemoe(4, 256), GMS_CFG("256"), 2, 2, 0, true);
	assert_string_equal(shardmap_family(f.p), "granitemoeshared");
	const char *in = "model.layers.0.shared_mlp.input_linear.weight",
	           *out = "model.layers.0.shared_mlp.output_linear.weight";
	shp(&f, 3, in, 2, 256, 256, 0);
	shp(&f, 3, out, 2, 256, 128, 0);
	shp(&f, 3, GM_W13, 3, 2, 2 * GM_I, 256);
	const uint8_t *got = out_bytes(&f, 3, in);
	assert_memory_equal(got, srow(&f, in, 128), 128 * RB13);
	assert_memory_equal(got + 128 * RB13, srow(&f, in, 384), 128 * RB13);
	/* output_linear [256, 256]: rows of 512 bytes, rank 1 the second half of each */
	got = out_bytes(&f, 1, out);
	const uint8_t *src = srow(&f, out, 0);
	for (int64_t row = 0; row < 256; row++)
		assert_memory_equal(got + (size_t)row * 256, src + (size_t)row * 512 + 256, 256);
	assert_memory_equal(out_bytes(&f, 3, GM_W13), srow(&f, GM_IN, 2 * 256), 2 * 256 * RB13);
	fx_close(&f);
	/* shared_intermediate_size 0 (or absent): no shared MLP, as transformers builds it */
	fx_open(&f, tm_granitemoe(4, 0), GMS_CFG("0"), 2, 1, 0, false);
	assert_int_equal(tm_ix(f.p, 0, "model.layers.0.shared_mlp.input_linear.weight"), -1);
	fx_close(&f);
}

/* Plan m (TP 2) under cfg: the error code, and that the message names `a` and `b`. */
static void gm_refused(tm_model *m, const char *cfg, int code, const char *a, const char *b)
{
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, cfg, &err), code);
	printf("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, a));
	assert_non_null(strstr(err.msg, b));
}

static void test_granitemoe_errors(void **state)
{
	(void)state;
	/* a stack of the wrong shape is named with the shape config.json implies */
	tm_model *m = tm_granitemoe(6, 0);
	tm_remove(m, GM_IN);
	tm_add(m, GM_IN, WT_DTYPE_INVALID, 3, 6, GM_I, 256); /* gate only */
	gm_refused(m, GRANITEMOE_CFG, WT_ESHAPE, GM_IN, "[6, 256, 256]");
	m = tm_granitemoe(6, 0);
	tm_remove(m, GM_OUT);
	tm_add(m, GM_OUT, WT_DTYPE_INVALID, 3, 6, GM_I, 256); /* transposed */
	gm_refused(m, GRANITEMOE_CFG, WT_ESHAPE, GM_OUT, "[6, 256, 128]");
	m = tm_granitemoe(6, 0);
	tm_remove(m, GM_IN);
	tm_add2(m, GM_IN, 6 * 2 * GM_I, 256); /* flattened to 2-D */
	gm_refused(m, GRANITEMOE_CFG, WT_ESHAPE, GM_IN, "[1536, 256]");
	/* 5 experts stacked where config.json says 6 */
	m = tm_granitemoe(6, 0);
	tm_remove(m, GM_OUT);
	tm_add(m, GM_OUT, WT_DTYPE_INVALID, 3, 5, 256, GM_I);
	gm_refused(m, GRANITEMOE_CFG, WT_ESHAPE, GM_OUT, "[5, 256, 128]");
	/* Mixtral's per-expert names are no GraniteMoE tensors */
	m = tm_granitemoe(6, 0);
	tm_add2(m, "model.layers.0.block_sparse_moe.experts.0.w1.weight", GM_I, 256);
	gm_refused(m, GRANITEMOE_CFG, WT_EUNSUPPORTED,
	           "model.layers.0.block_sparse_moe.experts.0.w1.weight", "granitemoe");
	m = tm_granitemoe(6, 0);
	tm_remove(m, GM_OUT);
	gm_refused(m, GRANITEMOE_CFG, WT_ENOTFOUND, GM_OUT, "missing");
	/* no expert count: refused, not read as a model without MLPs */
	gm_refused(tm_granitemoe(6, 0),
	           GM_CFG("GraniteMoeForCausalLM", "granitemoe", ",\"num_local_experts\":null"),
	           WT_ECORRUPT, "num_local_experts", "GraniteMoeForCausalLM");
	/* a pre-quantized FP8 stack is refused by name (FP8 sources are 2-D weights) */
	m = tm_granitemoe(6, 0);
	tm_remove(m, GM_IN);
	tm_add(m, GM_IN, WT_F8_E4M3, 3, 6, 2 * GM_I, 256);
	tm_add(m, "model.layers.1.block_sparse_moe.input_linear.weight_scale", WT_F32, 0, 0, 0, 0);
	tm_abs(m, "model.layers.1.block_sparse_moe.input_linear.weight_scale");
	gm_refused(m,
	           GM_CFG("GraniteMoeForCausalLM", "granitemoe",
	                  ",\"num_local_experts\":6,\"quantization_config\":{\"quant_method\":"
	                  "\"fp8\"}"),
	           WT_ESHAPE, GM_IN, "2-D");
	/* GraniteMoeShared: a shared MLP the config does not declare, or one missing */
	m = tm_granitemoe(4, 256);
	gm_refused(m, GMS_CFG("0"), WT_EUNSUPPORTED, "shared_mlp.input_linear.weight",
	           "without shared experts");
	m = tm_granitemoe(4, 0);
	gm_refused(m, GMS_CFG("256"), WT_ENOTFOUND, "shared_mlp.input_linear.weight", "missing");
}

/* ---------- OLMoE: Llama's pre-norm decoder, full-width q/k norms, all layers MoE ---------- */

/* H 8, KV 2, d 32, intermediate_size 128 (the expert size), V 1000; tie_word_embeddings
 * absent (OlmoeConfig's default: untied); E and extra keys given. */
#define OLMOE_CFG(extra)                                                                           \
	"{\"architectures\":[\"OlmoeForCausalLM\"],\"model_type\":\"olmoe\",\"hidden_size\":256,"  \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":128,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"num_experts_per_tok\":2,"                   \
	"\"norm_topk_prob\":false" extra "}"
#define OLMOE_E8 OLMOE_CFG(",\"num_experts\":8")
#define OL_QN    "model.layers.1.self_attn.q_norm.weight"
#define OL_KN    "model.layers.1.self_attn.k_norm.weight"
#define OL_W13   "model.layers.1.mlp.experts.w13_weight"
#define OL_W2    "model.layers.1.mlp.experts.w2_weight"
#define OL_ROUTE "model.layers.1.mlp.gate.weight"

/* q_norm [qn], k_norm [kn] (OLMoE: 256 and 64) */
static tm_model *tm_olmoe(int64_t qn, int64_t kn)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, 256, 1);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.q_norm.weight");
		tm_add2(m, b, qn, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "self_attn.k_norm.weight");
		tm_add2(m, b, kn, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.weight");
		tm_add2(m, b, 8, 256);
		tm_experts(m, i, "mlp.experts.", 8, 128, 256, "gate_proj", "up_proj", "down_proj");
	}
	return m;
}

/* Source expert j's leaf of layer 1 from row r0 */
static const uint8_t *ol_exp(const fx *f, int64_t j, const char *leaf, int64_t r0)
{
	char b[200];
	snprintf(b, sizeof(b), "model.layers.1.mlp.experts.%lld.%s.weight", (long long)j, leaf);
	return srow(f, b, r0);
}

static void test_olmoe_ep(void **state)
{
	(void)state;
	fx f;
	/* TP 2 x EP 2, E 8: ep rank 1 (ranks 2, 3) holds experts 4..7 whole, slot k =
	 * [gate_{4+k} ; up_{4+k}] (128 + 128 rows of 256 columns), w2 slot k = down_{4+k} */
	fx_open(&f, tm_olmoe(256, 64), OLMOE_E8, 2, 2, 0, true);
	assert_string_equal(shardmap_family(f.p), "olmoe");
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 3, OL_W13, 3, 4, 256, 256);
	shp(&f, 3, OL_W2, 3, 4, 256, 128);
	const uint8_t *w13 = out_bytes(&f, 3, OL_W13), *w2 = out_bytes(&f, 3, OL_W2);
	for (int64_t k = 0; k < 4; k++) {
		const uint8_t *o = w13 + (size_t)(k * 256) * RB13;
		assert_memory_equal(o, ol_exp(&f, 4 + k, "gate_proj", 0), 128 * RB13);
		assert_memory_equal(o + 128 * RB13, ol_exp(&f, 4 + k, "up_proj", 0), 128 * RB13);
		assert_memory_equal(w2 + (size_t)(k * 256) * 256, ol_exp(&f, 4 + k, "down_proj", 0),
		                    256 * 256);
	}
	/* full-width q_norm [H*d] / k_norm [KV*d] and the router [E, hid] whole on every rank */
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, OL_QN, 1, 256, 0, 0);
		shp(&f, r, OL_KN, 1, 64, 0, 0);
		shp(&f, r, OL_ROUTE, 2, 8, 256, 0);
		assert_memory_equal(out_bytes(&f, r, OL_QN), srow(&f, OL_QN, 0), 256 * 2);
		assert_memory_equal(out_bytes(&f, r, OL_KN), srow(&f, OL_KN, 0), 64 * 2);
		assert_memory_equal(out_bytes(&f, r, OL_ROUTE), srow(&f, OL_ROUTE, 0), 8 * RB13);
	}
	/* tp rank 1: q heads 4..7 (rows [128, 256)), kv head 1 (k / v rows [32, 64)) */
	const char *qkv = "model.layers.1.self_attn.qkv_proj.weight";
	shp(&f, 3, qkv, 2, 128 + 2 * 32, 256, 0);
	const uint8_t *got = out_bytes(&f, 3, qkv);
	assert_memory_equal(got, srow(&f, "model.layers.1.self_attn.q_proj.weight", 128),
	                    128 * RB13);
	assert_memory_equal(got + 128 * RB13,
	                    srow(&f, "model.layers.1.self_attn.k_proj.weight", 32), 32 * RB13);
	assert_memory_equal(got + 160 * RB13,
	                    srow(&f, "model.layers.1.self_attn.v_proj.weight", 32), 32 * RB13);
	shp(&f, 3, "model.layers.1.input_layernorm.weight", 1, 256, 0, 0);
	shp(&f, 3, "lm_head.weight", 2, 512, 256, 0);
	fx_close(&f);
	/* TP 2, no EP: rank 1's expert j = [gate_j rows [64, 128) ; up_j rows [64, 128)], w2
	 * columns [64, 128) */
	fx_open(&f, tm_olmoe(256, 64), OLMOE_E8, 2, 1, 0, true);
	shp(&f, 1, OL_W13, 3, 8, 128, 256);
	shp(&f, 1, OL_W2, 3, 8, 256, 64);
	w13 = out_bytes(&f, 1, OL_W13) + (size_t)(5 * 128) * RB13;
	assert_memory_equal(w13, ol_exp(&f, 5, "gate_proj", 64), 64 * RB13);
	assert_memory_equal(w13 + 64 * RB13, ol_exp(&f, 5, "up_proj", 64), 64 * RB13);
	w2 = out_bytes(&f, 1, OL_W2) + (size_t)(5 * 256) * 128;
	const uint8_t *src = ol_exp(&f, 5, "down_proj", 0);
	for (int64_t row = 0; row < 256; row++)
		assert_memory_equal(w2 + (size_t)row * 128, src + (size_t)row * 256 + 128, 128);
	shp(&f, 1, OL_QN, 1, 256, 0, 0);
	fx_close(&f);
}

static void test_olmoe_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2},
	                                   {2, 2}, {1, 4}, {4, 2}, {2, 4}};
	coverage(tm_olmoe(256, 64), OLMOE_E8, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

static void test_olmoe_errors(void **state)
{
	(void)state;
	/* Qwen3-MoE's per-head q_norm [d] / k_norm [d] are not OLMoE's: refused by name */
	gm_refused(tm_olmoe(32, 64), OLMOE_E8, WT_ESHAPE, "model.layers.0.self_attn.q_norm.weight",
	           "[256]");
	gm_refused(tm_olmoe(256, 32), OLMOE_E8, WT_ESHAPE, "model.layers.0.self_attn.k_norm.weight",
	           "[64]");
	tm_model *m = tm_olmoe(256, 64);
	tm_remove(m, OL_QN);
	gm_refused(m, OLMOE_E8, WT_ENOTFOUND, OL_QN, "missing");
	/* every layer is MoE: a dense MLP or a shared expert is no OLMoE tensor */
	m = tm_olmoe(256, 64);
	tm_mlp(m, 0, "mlp.", 128, 256);
	gm_refused(m, OLMOE_E8, WT_EUNSUPPORTED, "model.layers.0.mlp.down_proj.weight", "olmoe");
	m = tm_olmoe(256, 64);
	tm_mlp(m, 1, "mlp.shared_expert.", 128, 256);
	gm_refused(m, OLMOE_E8, WT_EUNSUPPORTED,
	           "model.layers.1.mlp.shared_expert.down_proj.weight", "olmoe");
	/* no expert count (transformers would default to 64): refused, not read as dense */
	gm_refused(tm_olmoe(256, 64), OLMOE_CFG(""), WT_ECORRUPT, "num_experts",
	           "OlmoeForCausalLM");
	/* experts past num_experts */
	gm_refused(tm_olmoe(256, 64), OLMOE_CFG(",\"num_experts\":6"), WT_ESHAPE,
	           "model.layers.0.mlp.experts.6.down_proj.weight", "has 6 experts");
}

/* ---------- OLMo 1: Llama's tensors without any norm (parameter-free LayerNorms) ---------- */

/* H 8, KV 2, d 32, I 512, V 1000 (OLMo-1B-hf ties, 7B-hf does not) */
#define OLMO_CFG(tied)                                                                             \
	"{\"architectures\":[\"OlmoForCausalLM\"],\"model_type\":\"olmo\",\"hidden_size\":256,"    \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":512,"           \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,\"clip_qkv\":null,"                           \
	"\"tie_word_embeddings\":" tied "}"
#define OLMO_L1 "model.layers.1."

/* Llama's tensors less model.norm and the layer norms; lm_head when untied; q/k/v/o
 * biases (attention_bias) when asked. */
static tm_model *tm_olmo(int lm_head, int bias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1000, 256, lm_head);
	tm_remove(m, "model.norm.weight");
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, bias, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_remove(m, b);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_remove(m, b);
		if (bias) {
			tm_fmt(b, sizeof(b), TM_L, i, "self_attn.o_proj.bias");
			tm_add2(m, b, 256, 0);
		}
		tm_mlp(m, i, "mlp.", 512, 256);
	}
	return m;
}

/* Rank r's tensor name [rows, cols] (BF16) is the source's columns [c0, c0 + cols) of its
 * src_cols. */
static void olmo_cols(const fx *f, uint32_t r, const char *name, int64_t rows, int64_t cols,
                      int64_t src_cols, int64_t c0)
{
	const uint8_t *got = out_bytes(f, r, name), *src = srow(f, name, 0);
	for (int64_t row = 0; row < rows; row++)
		assert_memory_equal(got + (size_t)(row * cols) * 2,
		                    src + (size_t)(row * src_cols + c0) * 2, (size_t)cols * 2);
}

static void test_olmo(void **state)
{
	(void)state;
	fx f;
	/* tied (OLMo-1B-hf), attention biases, TP 2: no norm and no lm_head on any rank */
	fx_open(&f, tm_olmo(0, 1), OLMO_CFG("true"), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "olmo");
	assert_true(shardmap_tied_lm_head(f.p));
	for (uint32_t r = 0; r < 2; r++) {
		assert_int_equal(tm_ix(f.p, r, "lm_head.weight"), -1);
		assert_int_equal(tm_ix(f.p, r, "model.norm.weight"), -1);
		assert_int_equal(tm_ix(f.p, r, OLMO_L1 "input_layernorm.weight"), -1);
	}
	/* vocab rows [512, 1000) on rank 1, then 24 zero padding rows */
	const char *emb = "model.embed_tokens.weight";
	shp(&f, 1, emb, 2, 512, 256, 0);
	assert_memory_equal(out_bytes(&f, 1, emb), srow(&f, emb, 512), 488 * RB13);
	for (size_t k = 488 * RB13; k < 512 * RB13; k++)
		assert_int_equal(out_bytes(&f, 1, emb)[k], 0);
	/* rank 1: q heads 4..7 (rows [128, 256)), kv head 1 (k / v rows [32, 64)), biases alike */
	const char *qkv = OLMO_L1 "self_attn.qkv_proj.weight",
	           *qkvb = OLMO_L1 "self_attn.qkv_proj.bias";
	shp(&f, 1, qkv, 2, 128 + 2 * 32, 256, 0);
	const uint8_t *got = out_bytes(&f, 1, qkv), *gb = out_bytes(&f, 1, qkvb);
	assert_memory_equal(got, srow(&f, OLMO_L1 "self_attn.q_proj.weight", 128), 128 * RB13);
	assert_memory_equal(got + 128 * RB13, srow(&f, OLMO_L1 "self_attn.k_proj.weight", 32),
	                    32 * RB13);
	assert_memory_equal(got + 160 * RB13, srow(&f, OLMO_L1 "self_attn.v_proj.weight", 32),
	                    32 * RB13);
	shp(&f, 1, qkvb, 1, 192, 0, 0);
	assert_memory_equal(gb, srow(&f, OLMO_L1 "self_attn.q_proj.bias", 128), 128 * 2);
	assert_memory_equal(gb + 128 * 2, srow(&f, OLMO_L1 "self_attn.k_proj.bias", 32), 32 * 2);
	assert_memory_equal(gb + 160 * 2, srow(&f, OLMO_L1 "self_attn.v_proj.bias", 32), 32 * 2);
	/* o_proj columns [128, 256), its bias whole; gate_up [gate rows [256, 512); up rows
	 * [256, 512)], down columns [256, 512) */
	shp(&f, 1, OLMO_L1 "self_attn.o_proj.weight", 2, 256, 128, 0);
	olmo_cols(&f, 1, OLMO_L1 "self_attn.o_proj.weight", 256, 128, 256, 128);
	assert_memory_equal(out_bytes(&f, 0, OLMO_L1 "self_attn.o_proj.bias"),
	                    srow(&f, OLMO_L1 "self_attn.o_proj.bias", 0), 256 * 2);
	const char *gu = OLMO_L1 "mlp.gate_up_proj.weight";
	shp(&f, 1, gu, 2, 512, 256, 0);
	assert_memory_equal(out_bytes(&f, 1, gu), srow(&f, OLMO_L1 "mlp.gate_proj.weight", 256),
	                    256 * RB13);
	assert_memory_equal(out_bytes(&f, 1, gu) + 256 * RB13,
	                    srow(&f, OLMO_L1 "mlp.up_proj.weight", 256), 256 * RB13);
	shp(&f, 1, OLMO_L1 "mlp.down_proj.weight", 2, 256, 256, 0);
	olmo_cols(&f, 1, OLMO_L1 "mlp.down_proj.weight", 256, 256, 512, 256);
	fx_close(&f);
	/* untied (OLMo-7B-hf): lm_head vocab rows [512, 1000) on rank 1 */
	fx_open(&f, tm_olmo(1, 0), OLMO_CFG("false"), 2, 1, 0, true);
	assert_false(shardmap_tied_lm_head(f.p));
	shp(&f, 1, "lm_head.weight", 2, 512, 256, 0);
	assert_memory_equal(out_bytes(&f, 1, "lm_head.weight"), srow(&f, "lm_head.weight", 512),
	                    488 * RB13);
	assert_int_equal(tm_ix(f.p, 1, "model.layers.0.self_attn.qkv_proj.bias"), -1);
	fx_close(&f);
}

static void test_olmo_coverage(void **state)
{
	(void)state;
	static const uint32_t dense[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_olmo(0, 0), OLMO_CFG("true"), 2, dense, 4);
	coverage(tm_olmo(1, 1), OLMO_CFG("false"), 2, dense, 4);
}

static void test_olmo_errors(void **state)
{
	(void)state;
	/* OLMo 1's LayerNorms have no weights: a norm tensor is no OLMo tensor */
	tm_model *m = tm_olmo(0, 0);
	tm_add2(m, "model.layers.1.input_layernorm.weight", 256, 0);
	gm_refused(m, OLMO_CFG("true"), WT_EUNSUPPORTED, "model.layers.1.input_layernorm.weight",
	           "olmo");
	m = tm_olmo(0, 0);
	tm_add2(m, "model.norm.weight", 256, 0);
	gm_refused(m, OLMO_CFG("true"), WT_EUNSUPPORTED, "model.norm.weight", "olmo");
	/* untied without lm_head */
	gm_refused(tm_olmo(0, 0), OLMO_CFG("false"), WT_ENOTFOUND, "lm_head.weight", "missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_granite),
	    cmocka_unit_test(test_granitemoe_ep),
	    cmocka_unit_test(test_granitemoe_tp),
	    cmocka_unit_test(test_granitemoe_as_mixtral),
	    cmocka_unit_test(test_granitemoe_coverage),
	    cmocka_unit_test(test_granitemoeshared),
	    cmocka_unit_test(test_granitemoe_errors),
	    cmocka_unit_test(test_olmoe_ep),
	    cmocka_unit_test(test_olmoe_coverage),
	    cmocka_unit_test(test_olmoe_errors),
	    cmocka_unit_test(test_olmo),
	    cmocka_unit_test(test_olmo_coverage),
	    cmocka_unit_test(test_olmo_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
