/*
 * test_shardmap_aria.c — Aria (AriaForConditionalGeneration, docs/format.md section 2.7): rank
 * slices computed by hand at TP 2 and 4 (the language model's qkv by heads, o_proj by columns,
 * the router whole, the stacked experts fc1 [E, hid, 2*I] / fc2 [E, I, hid] transposed into
 * w13 [gate_r; up_r] / w2 column slices, the shared experts merged by rows / down by columns,
 * the Idefics3 tower's blocks as vLLM's idefics2_vision_model.py cuts them and its
 * post_layernorm skipped, the projector's query / cross attention / LayerNorm whole, linear_in
 * by rows, linear_out by columns, the vocabulary rows), EP 2 stacks whole (gate_up and up_gate),
 * the released and the modules' name layouts byte for byte, int8 / fp8 codes of what vLLM
 * quantizes and not of the rest, coverage at TP 1, 2, 4, 8 and EP 2 in both layouts,
 * AriaTextConfig's / Idefics3VisionConfig's / AriaConfig's defaults, the tie read from
 * text_config alone, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0xa41aull
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* LM: hid 64, H 8, KV 2, d 8, 4 experts of I 32 (fc1 [4, 64, 64]), 2 shared experts (64),
 * V 128, L 1, untied. Vision: 2 blocks, width 32, 8 heads, MLP 64, image 8 / patch 2: 16
 * positions. Projector: 4 queries. */
#define HID 64
#define IE  32
#define ISH 64
#define NE  4
#define VE  32
#define VI  64
#define NQ  4

#define LM_KEYS                                                                                    \
	"\"hidden_size\":64,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                  \
	"\"intermediate_size\":32,\"vocab_size\":128,\"num_hidden_layers\":1"
#define MOE_KEYS ",\"moe_num_experts\":4,\"moe_topk\":2,\"moe_num_shared_experts\":2"
#define VIS_KEYS                                                                                   \
	"\"model_type\":\"idefics3_vision\",\"hidden_size\":32,\"intermediate_size\":64,"          \
	"\"num_attention_heads\":8,\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2"
#define AR_CFG(top, text, vis)                                                                     \
	"{\"architectures\":[\"AriaForConditionalGeneration\"],\"model_type\":\"aria\"," top       \
	"\"text_config\":{" text "},\"vision_config\":{" vis "}}"
#define TEXT_OK "\"model_type\":\"aria_text\"," LM_KEYS MOE_KEYS
#define TOP_OK  "\"projector_patch_to_query_dict\":{\"16\":4,\"4\":2},"
static const char cfg_ok[] = AR_CFG(TOP_OK, TEXT_OK, VIS_KEYS);

#define L0  "language_model.model.layers.0."
#define M0  L0 "mlp."
#define FC1 M0 "experts.fc1.weight"
#define FC2 M0 "experts.fc2.weight"
#define W13 M0 "experts.w13_weight"
#define W2  M0 "experts.w2_weight"
#define VT  "vision_tower."
#define VB  VT "encoder.layers.%d."
#define PJ  "multi_modal_projector."

/* The projector's whole tensors (canonical names, [n, k]; k 0: a vector). */
static const fx_leaf proj_whole[] = {
    {"query", NQ, VE},
    {"cross_attn.q_proj.weight", VE, VE},
    {"cross_attn.k_proj.weight", VE, VE},
    {"cross_attn.v_proj.weight", VE, VE},
    {"cross_attn.multihead_attn.in_proj_weight", 3 * VE, VE},
    {"cross_attn.multihead_attn.in_proj_bias", 3 * VE, 0},
    {"cross_attn.multihead_attn.out_proj.weight", VE, VE},
    {"cross_attn.multihead_attn.out_proj.bias", VE, 0},
    {"cross_attn.linear.weight", VE, VE},
    {"cross_attn.linear.bias", VE, 0},
    {"cross_attn.layer_norm.weight", VE, 0},
    {"cross_attn.layer_norm.bias", VE, 0},
    {"cross_attn.layer_norm_kv.weight", VE, 0},
    {"cross_attn.layer_norm_kv.bias", VE, 0},
    {"layer_norm.weight", VE, 0},
    {"layer_norm.bias", VE, 0},
};

/* A stack [a, b, c] under canonical name cn in layout y. */
static void mm_add3(tm_model *m, lay y, const char *cn, int64_t a, int64_t b, int64_t c)
{
	char n[200];
	mm_ck_name(n, sizeof(n), cn, y);
	tm_add(m, n, WT_DTYPE_INVALID, 3, a, b, c);
}

/* The language model (experts `ne`, lm_head unless tied) in layout y. */
static void ar_text(tm_model *m, lay y, bool lm_head, int64_t ne)
{
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	static const fx_leaf lmt[] = {{"input_layernorm.weight", HID, 0},
	                              {"post_attention_layernorm.weight", HID, 0},
	                              {"self_attn.q_proj.weight", 64, HID},
	                              {"self_attn.k_proj.weight", 16, HID},
	                              {"self_attn.v_proj.weight", 16, HID},
	                              {"self_attn.o_proj.weight", HID, 64},
	                              {"mlp.shared_experts.gate_proj.weight", ISH, HID},
	                              {"mlp.shared_experts.up_proj.weight", ISH, HID},
	                              {"mlp.shared_experts.down_proj.weight", HID, ISH}};
	for (size_t k = 0; k < sizeof(lmt) / sizeof(lmt[0]); k++)
		mm_add_at(m, y, "model.layers.0.", lmt[k].leaf, lmt[k].n, lmt[k].k);
	mm_add(m, y, "model.layers.0.mlp.router.weight", ne, HID);
	mm_add3(m, y, "model.layers.0.mlp.experts.fc1.weight", ne, HID, 2 * IE);
	mm_add3(m, y, "model.layers.0.mlp.experts.fc2.weight", ne, IE, HID);
}

/* The tower (`blocks` blocks, a 2 x 2 patch) and the projector (nq queries) in layout y. */
static void ar_vision(tm_model *m, lay y, int blocks, int64_t nq)
{
	mm_add_vit_at(m, y, VT, false, VE, VI, 16, blocks);
	for (size_t k = 0; k < sizeof(proj_whole) / sizeof(proj_whole[0]); k++)
		mm_add_at(m, y, PJ, proj_whole[k].leaf, k == 0 ? nq : proj_whole[k].n,
		          proj_whole[k].k);
	mm_add(m, y, PJ "feed_forward.linear_in.weight", HID, VE);
	mm_add(m, y, PJ "feed_forward.linear_out.weight", HID, HID);
}

static tm_model *ar_model(lay y, bool lm_head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	ar_text(m, y, lm_head, NE);
	ar_vision(m, y, 2, NQ);
	return m;
}

static const fx_bmm BMM = {FC1, FC2, W13, W2, HID, IE};

/* Rank r of TP T (released layout): every tensor by hand. */
static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	/* LM attention: H 8 KV 2 d 8; TP 2: kv head r, TP 4: kv head r/2 replicated */
	const char *qkv = L0 "self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	shp(f, r, qkv, 2, ql + 16, HID, 0);
	rows_at(f, r, qkv, 0, L0 "self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, qkv, ql, L0 "self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, qkv, ql + 8, L0 "self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, L0 "self_attn.o_proj.weight", L0 "self_attn.o_proj.weight", HID, 64);
	/* the MoE: router whole, every expert's I split, the shared experts' 64 split */
	int64_t il = IE / T, sl = ISH / T;
	repl(f, r, M0 "router.weight");
	shp(f, r, W13, 3, NE, 2 * il, HID);
	shp(f, r, W2, 3, NE, HID, il);
	for (int64_t j = 0; j < NE; j++)
		fx_bmm_experts_are(f, &BMM, r, j, j, r * il, il, false);
	const char *gu = M0 "shared_experts.gate_up_proj.weight";
	shp(f, r, gu, 2, 2 * sl, HID, 0);
	rows_at(f, r, gu, 0, M0 "shared_experts.gate_proj.weight", r * sl, sl);
	rows_at(f, r, gu, sl, M0 "shared_experts.up_proj.weight", r * sl, sl);
	cols_of(f, r, T, M0 "shared_experts.down_proj.weight", M0 "shared_experts.down_proj.weight",
	        HID, ISH);
	/* vocabulary rows: 128 padded to 128 at TP 2 / 4 */
	int64_t vl = 128 / T;
	rows_at(f, r, "language_model.lm_head.weight", 0, "language_model.lm_head.weight", r * vl,
	        vl);
	rows_at(f, r, "language_model.model.embed_tokens.weight", 0,
	        "language_model.model.embed_tokens.weight", r * vl, vl);
	static const char *const rep[] = {
	    "language_model.model.norm.weight",   L0 "input_layernorm.weight",
	    L0 "post_attention_layernorm.weight", VT "embeddings.patch_embedding.weight",
	    VT "embeddings.patch_embedding.bias", VT "embeddings.position_embedding.weight"};
	for (size_t k = 0; k < sizeof(rep) / sizeof(rep[0]); k++)
		repl(f, r, rep[k]);
	for (int blk = 0; blk < 2; blk++)
		fx_vit_block(f, T, r, VB, blk, VE, VI);
	assert_int_equal(tm_ix(f->p, r, VT "post_layernorm.weight"), -1);
	/* the projector: whole but its FFN */
	for (size_t k = 0; k < sizeof(proj_whole) / sizeof(proj_whole[0]); k++) {
		char n[200];
		snprintf(n, sizeof(n), PJ "%s", proj_whole[k].leaf);
		repl(f, r, n);
	}
	const char *lin = PJ "feed_forward.linear_in.weight";
	shp(f, r, lin, 2, HID / T, VE, 0);
	rows_at(f, r, lin, 0, lin, r * HID / T, HID / T);
	cols_of(f, r, T, PJ "feed_forward.linear_out.weight", PJ "feed_forward.linear_out.weight",
	        HID, HID);
	/* LM 12 (embed, norm, lm_head, 2 norms, qkv, o, router, w13, w2, gate_up, down); tower 3
	 * + 2 x 12; projector 16 + 2 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 12 + 3 + 24 + 18);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, ar_model(LAY_V450, true), cfg_ok, tps[i], 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "aria");
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2);
		assert_true(fx_skipped(&f, VT "post_layernorm.weight"));
		assert_true(fx_skipped(&f, VT "post_layernorm.bias"));
		fx_close(&f);
	}
}

/* EP 2: rank e holds experts 2e, 2e+1 whole (I 32), up first under up_gate; the shared
 * experts and everything else as TP 1. */
static void test_ep(void **state)
{
	(void)state;
	for (int ug = 0; ug < 2; ug++) {
		fx f;
		fx_open(&f, ar_model(LAY_V450, true), cfg_ok, 1, 2, ug, true);
		for (uint32_t e = 0; e < 2; e++) {
			shp(&f, e, W13, 3, 2, 2 * IE, HID);
			for (int64_t s = 0; s < 2; s++)
				fx_bmm_experts_are(&f, &BMM, e, s, 2 * e + s, 0, IE, ug != 0);
			repl(&f, e, M0 "shared_experts.down_proj.weight");
		}
		fx_close(&f);
	}
}

/* transformers 4.57.1's module names (model.language_model.*, model.vision_tower.*,
 * model.multi_modal_projector.*, lm_head.weight) give the released layout's shards. */
static void test_layouts(void **state)
{
	(void)state;
	fx a, b;
	fx_open(&a, ar_model(LAY_V450, true), cfg_ok, 2, 1, 0, true);
	fx_open(&b, ar_model(LAY_HF5, true), cfg_ok, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	assert_true(fx_skipped(&b, "model.vision_tower.post_layernorm.weight"));
	fx_close(&a);
	fx_close(&b);
}

/* int8-channel TP 2: the language model's and the tower's Linears quantized (w13 per
 * expert row: its codes from the unquantized plan's rows), the router, the projector (its
 * FFN included: vLLM builds it without a quantization config), embeddings, norms and biases
 * kept BF16 and equal to the unquantized plan's; fp8-channel TP 4 alike. */
static void test_quant(void **state)
{
	(void)state;
	fx n, q;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	fx_open_l(&n, ar_model(LAY_V450, true), cfg_ok, &l, true);
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&q, ar_model(LAY_V450, true), cfg_ok, &l, true);
	shp(&q, 1, W13 "_scale", 3, NE, IE, 1);
	const int8_t *c = (const int8_t *)out_bytes(&q, 1, W13);
	const float *sc = (const float *)(const void *)out_bytes(&q, 1, W13 "_scale");
	const uint16_t *x = (const uint16_t *)(const void *)out_bytes(&n, 1, W13);
	for (int64_t row = 0; row < NE * IE; row++)
		int8_row_is(c + row * HID, sc[row], x + row * HID, HID);
	static const char *const keep[] = {M0 "router.weight",
	                                   PJ "feed_forward.linear_in.weight",
	                                   PJ "feed_forward.linear_out.weight",
	                                   PJ "cross_attn.q_proj.weight",
	                                   PJ "cross_attn.multihead_attn.in_proj_weight",
	                                   PJ "cross_attn.linear.weight",
	                                   PJ "query",
	                                   VT "embeddings.patch_embedding.weight",
	                                   VT "encoder.layers.0.self_attn.qkv_proj.bias",
	                                   "language_model.model.embed_tokens.weight",
	                                   "language_model.lm_head.weight",
	                                   L0 "input_layernorm.weight"};
	static const char *const q8[] = {W13,
	                                 W2,
	                                 M0 "shared_experts.gate_up_proj.weight",
	                                 M0 "shared_experts.down_proj.weight",
	                                 L0 "self_attn.qkv_proj.weight",
	                                 L0 "self_attn.o_proj.weight",
	                                 VT "encoder.layers.1.self_attn.qkv_proj.weight",
	                                 VT "encoder.layers.1.self_attn.out_proj.weight",
	                                 VT "encoder.layers.1.mlp.fc1.weight",
	                                 VT "encoder.layers.1.mlp.fc2.weight"};
	fx_quant_split(&q, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
		assert_memory_equal(out_bytes(&q, 1, keep[k]), out_bytes(&n, 1, keep[k]),
		                    info(&n, 1, keep[k])->nbytes);
	fx_close(&n);
	fx_close(&q);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&q, ar_model(LAY_V450, true), cfg_ok, &l, false);
	assert_int_equal(info(&q, 3, W13)->dtype, WT_F8_E4M3);
	shp(&q, 3, W13 "_scale", 3, NE, 2 * IE / 4, 1);
	assert_int_equal(info(&q, 3, M0 "shared_experts.down_proj.weight")->dtype, WT_F8_E4M3);
	assert_int_equal(info(&q, 3, PJ "feed_forward.linear_out.weight")->dtype, WT_BF16);
	assert_int_equal(info(&q, 3, M0 "router.weight")->dtype, WT_BF16);
	assert_int_equal(tm_ix(q.p, 3, PJ "feed_forward.linear_in.weight_scale"), -1);
	fx_close(&q);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}, {1, 4}};
	coverage(ar_model(LAY_V450, true), cfg_ok, 2, lays, 7);
	coverage(ar_model(LAY_HF5, true), cfg_ok, 2, lays, 4);
}

/* AriaTextConfig's moe_num_experts 8 and moe_num_shared_experts 2 (intermediate_size x 2),
 * AriaConfig's projector_patch_to_query_dict (256 queries), Idefics3VisionConfig's patch 32,
 * 12 blocks and 16 heads; the tie read from text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	tm_model *m = tm_new(SEED, WT_BF16);
	ar_text(m, LAY_V450, true, 8);
	ar_vision(m, LAY_V450, 12, 256);
	tm_remove(m, VT "embeddings.patch_embedding.weight");
	tm_add(m, VT "embeddings.patch_embedding.weight", WT_DTYPE_INVALID, 1, VE * 3 * 1024, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = 32;
	tm_remove(m, VT "embeddings.position_embedding.weight");
	tm_add2(m, VT "embeddings.position_embedding.weight", 4, VE);
	static const char cfg[] =
	    AR_CFG("", "\"model_type\":\"aria_text\"," LM_KEYS,
	           "\"hidden_size\":32,\"intermediate_size\":64,\"image_size\":64");
	fx f;
	fx_open(&f, m, cfg, 2, 1, 0, false);
	shp(&f, 1, W13, 3, 8, IE, HID);
	shp(&f, 1, M0 "shared_experts.gate_up_proj.weight", 2, ISH, HID, 0);
	shp(&f, 1, PJ "query", 2, 256, VE, 0);
	const sm_out_info *pc = info(&f, 1, VT "embeddings.patch_embedding.weight");
	assert_true(pc->ndim == 4 && pc->shape[2] == 32 && pc->shape[3] == 32);
	assert_true(tm_ix(f.p, 1, VT "encoder.layers.11.mlp.fc1.weight") >= 0);
	shp(&f, 1, VT "encoder.layers.0.self_attn.qkv_proj.weight", 2, 3 * 16, VE, 0);
	fx_close(&f);
	/* AriaTextConfig's class defaults (KV = H, intermediate_size 4096), the loader's view */
	static const char cls[] = AR_CFG("\"tie_word_embeddings\":true,",
	                                 "\"model_type\":\"aria_text\",\"vocab_size\":100352", "");
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.hidden_size == 4096 && c.num_attention_heads == 32 &&
	            c.num_key_value_heads == 32 && c.intermediate_size == 4096 &&
	            c.vocab_size == 100352 && c.num_hidden_layers == 32 && c.num_experts == 8 &&
	            c.n_shared_experts == 2 && c.aria_queries == 256 && c.has_vision &&
	            strcmp(c.lm_model_type, "aria_text") == 0 && !c.tie_word_embeddings);
	ckpt_config_clear(&c);
	/* text_config's tie true over the top level's false: no lm_head needed, in both layouts */
	static const char cfg_tied[] = AR_CFG(TOP_OK "\"tie_word_embeddings\":false,",
	                                      TEXT_OK ",\"tie_word_embeddings\":true", VIS_KEYS);
	for (int y = 0; y < 2; y++) {
		fx_open(&f, ar_model(y ? LAY_HF5 : LAY_V450, false), cfg_tied, 2, 1, 0, false);
		assert_true(shardmap_tied_lm_head(f.p));
		assert_int_equal(tm_ix(f.p, 0, "language_model.lm_head.weight"), -1);
		fx_close(&f);
	}
	/* the top level's true (AriaConfig's own default) with text_config silent: untied */
	static const char cfg_top[] =
	    AR_CFG(TOP_OK "\"tie_word_embeddings\":true,", TEXT_OK, VIS_KEYS);
	fx_refused(ar_model(LAY_V450, false), cfg_top, WT_ENOTFOUND,
	           "language_model.lm_head.weight", "");
}

static void test_errors(void **state)
{
	(void)state;
	/* no text_config; one without model_type (AriaConfig cannot build it) */
	static const char cfg_notext[] =
	    "{\"architectures\":[\"AriaForConditionalGeneration\"],\"model_type\":\"aria\"," LM_KEYS
	    ",\"vision_config\":{" VIS_KEYS "}}";
	fx_refused(ar_model(LAY_V450, true), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
	static const char cfg_nomt[] = AR_CFG(TOP_OK, LM_KEYS MOE_KEYS, VIS_KEYS);
	fx_refused(ar_model(LAY_V450, true), cfg_nomt, WT_ECORRUPT, "no model_type",
	           "\"model_type\": \"aria_text\"");
	/* no shared experts; MLP biases */
	static const char cfg_nosh[] =
	    AR_CFG(TOP_OK,
	           "\"model_type\":\"aria_text\"," LM_KEYS ",\"moe_num_experts\":4,"
	           "\"moe_num_shared_experts\":0",
	           VIS_KEYS);
	fx_refused(ar_model(LAY_V450, true), cfg_nosh, WT_EUNSUPPORTED, "moe_num_shared_experts 0",
	           "at least 1");
	static const char cfg_bias[] = AR_CFG(TOP_OK, TEXT_OK ",\"mlp_bias\":true", VIS_KEYS);
	fx_refused(ar_model(LAY_V450, true), cfg_bias, WT_EUNSUPPORTED, "mlp_bias", "false");
	/* the projector's queries: a value that is not a count; rows not the dict's largest */
	static const char cfg_q[] =
	    AR_CFG("\"projector_patch_to_query_dict\":{\"16\":\"4\"},", TEXT_OK, VIS_KEYS);
	fx_refused(ar_model(LAY_V450, true), cfg_q, WT_ECORRUPT,
	           "projector_patch_to_query_dict['16']", "query count");
	static const char cfg_q8[] =
	    AR_CFG("\"projector_patch_to_query_dict\":{\"16\":8},", TEXT_OK, VIS_KEYS);
	fx_refused(ar_model(LAY_V450, true), cfg_q8, WT_ESHAPE, PJ "query", "");
	/* the tower: heads not dividing its width */
	static const char cfg3h[] =
	    AR_CFG(TOP_OK, TEXT_OK,
	           "\"hidden_size\":32,\"intermediate_size\":64,\"num_attention_heads\":3,"
	           "\"num_hidden_layers\":2,\"image_size\":8,\"patch_size\":2");
	fx_refused(ar_model(LAY_V450, true), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	/* fc2 stored as [E, hid, I] (nn.Linear's, not the bmm operand); a missing router; the
	 * experts one Linear each; a bias on the projector's FFN (bias=False) */
	tm_model *m = ar_model(LAY_V450, true);
	tm_remove(m, FC2);
	tm_add(m, FC2, WT_DTYPE_INVALID, 3, NE, HID, IE);
	fx_refused(m, cfg_ok, WT_ESHAPE, FC2, "");
	m = ar_model(LAY_V450, true);
	tm_remove(m, M0 "router.weight");
	fx_refused(m, cfg_ok, WT_ENOTFOUND, M0 "router.weight", "");
	m = ar_model(LAY_V450, true);
	tm_add2(m, M0 "experts.0.gate_proj.weight", IE, HID);
	fx_refused(m, cfg_ok, WT_EUNSUPPORTED, M0 "experts.0.gate_proj.weight", "aria");
	m = ar_model(LAY_V450, true);
	tm_add2(m, PJ "feed_forward.linear_in.bias", HID, 0);
	fx_refused(m, cfg_ok, WT_EUNSUPPORTED, PJ "feed_forward.linear_in.bias", "aria");
	/* the two layouts mixed */
	m = ar_model(LAY_V450, true);
	tm_add2(m, "model.multi_modal_projector.layer_norm.extra", VE, 0);
	fx_refused(m, cfg_ok, WT_EUNSUPPORTED, "mixes two name layouts", "");
	/* EP past the experts; a block past num_hidden_layers */
	fx_refused_tp_ep(ar_model(LAY_V450, true), cfg_ok, 1, 8, WT_ELAYOUT, "ep_size 8", "");
	m = tm_new(SEED, WT_BF16);
	ar_text(m, LAY_V450, true, NE);
	ar_vision(m, LAY_V450, 3, NQ);
	fx_refused(m, cfg_ok, WT_ESHAPE, VT "encoder.layers.2.", "num_hidden_layers is 2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_ep),
	    cmocka_unit_test(test_layouts),     cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage),    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
