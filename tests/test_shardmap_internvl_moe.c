/*
 * test_shardmap_internvl_moe.c — InternVL3.5-MoE (InternVLForConditionalGeneration whose
 * text_config is qwen3_moe: InternVL3_5-30B-A3B-HF, 241B-A28B-HF; docs/format.md section 2.7):
 * the language model cut as vLLM's qwen3_moe.py builds Qwen3MoeForCausalLM of it. The rank
 * slices computed by hand at TP 2 and 4 and at EP 2 (q/k/v rows by heads, o_proj columns,
 * per-head q_norm / k_norm whole; the dense layer's gate_up_proj rows and down_proj columns; the
 * router mlp.gate whole; each expert's gate / up rows stacked into w13_weight and its down_proj
 * columns into w2_weight; the InternViT tower as InternVL3's), both name layouts giving the
 * same shards and the language model Qwen3MoeForCausalLM's, int8-channel / fp8-channel
 * quantizing the experts and not the router, coverage at TP 1, 2, 4, 8 and EP 2, 4, the sparse
 * layers by mlp_only_layers / decoder_sparse_step, Qwen3MoeConfig's defaults, the tie from
 * text_config only, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x1a7full
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_internvl_fx.h"

/* LM: hid 64, H 8 x d 16, KV 2, V 128, 2 layers: layer 0 an MLP of 128 (mlp_only_layers),
 * layer 1 4 experts of 32 (top 2). The tower and projector of test_shardmap_internvl_fx.h. */
#define NE 4
#define IE 32
#define L0 LM "layers.0."
#define L1 LM "layers.1."

#define MOE_KEYS(extra)                                                                            \
	"\"model_type\":\"qwen3_moe\",\"hidden_size\":64,\"num_attention_heads\":8,"               \
	"\"num_key_value_heads\":2,\"head_dim\":16,\"intermediate_size\":128,\"vocab_size\":128,"  \
	"\"num_hidden_layers\":2,\"moe_intermediate_size\":32,\"num_experts\":4,"                  \
	"\"num_experts_per_tok\":2" extra
/* InternVL3.5-MoE: a qwen3_moe text_config (layer 0 dense unless `sparse` overrides it) */
#define CFG_M(top, text)                                                                           \
	"{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"                \
	"\"internvl\"," top "\"text_config\":{" MOE_KEYS(text) "},\"vision_config\":{" VKEYS       \
	                                                       ",\"attention_bias\":true}}"
#define DENSE0 ",\"mlp_only_layers\":[0]"
#define W13    L1 "mlp.experts.w13_weight"
#define W2     L1 "mlp.experts.w2_weight"

/* Layer 1's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, L1 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

static const char cfg_m[] = CFG_M("", DENSE0);
static const char cfg_text[] = "{\"architectures\":[\"Qwen3MoeForCausalLM\"]," MOE_KEYS(DENSE0) "}";

static const fx_leaf attn[] = {
    {"input_layernorm.weight", HID, 0},    {"post_attention_layernorm.weight", HID, 0},
    {"self_attn.q_proj.weight", 128, HID}, {"self_attn.k_proj.weight", 32, HID},
    {"self_attn.v_proj.weight", 32, HID},  {"self_attn.o_proj.weight", HID, 128},
    {"self_attn.q_norm.weight", 16, 0},    {"self_attn.k_norm.weight", 16, 0},
};
static const fx_leaf mlp[] = {
    {"mlp.gate_proj.weight", 128, HID},
    {"mlp.up_proj.weight", 128, HID},
    {"mlp.down_proj.weight", HID, 128},
};

/* Layer i's sparse MLP: the router and NE experts, in layout y */
static void add_moe(tm_model *m, lay y, int i)
{
	char b[200];
	snprintf(b, sizeof(b), "model.layers.%d.mlp.gate.weight", i);
	mm_add(m, y, b, NE, HID);
	for (int j = 0; j < NE; j++) {
		snprintf(b, sizeof(b), "model.layers.%d.mlp.experts.%d.gate_proj.weight", i, j);
		mm_add(m, y, b, IE, HID);
		snprintf(b, sizeof(b), "model.layers.%d.mlp.experts.%d.up_proj.weight", i, j);
		mm_add(m, y, b, IE, HID);
		snprintf(b, sizeof(b), "model.layers.%d.mlp.experts.%d.down_proj.weight", i, j);
		mm_add(m, y, b, HID, IE);
	}
}

/* The Qwen3-MoE language model (layer i sparse when bit i of moe is set, dense otherwise;
 * lm_head when asked), then unless LAY_TEXT the tower and projector, all in layout y. */
static tm_model *moe_model(lay y, bool lm_head, unsigned moe)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	for (int i = 0; i < 2; i++) {
		for (size_t k = 0; k < sizeof(attn) / sizeof(attn[0]); k++) {
			snprintf(b, sizeof(b), "model.layers.%d.%s", i, attn[k].leaf);
			mm_add(m, y, b, attn[k].n, attn[k].k);
		}
		for (size_t k = 0; !((moe >> i) & 1u) && k < sizeof(mlp) / sizeof(mlp[0]); k++) {
			snprintf(b, sizeof(b), "model.layers.%d.%s", i, mlp[k].leaf);
			mm_add(m, y, b, mlp[k].n, mlp[k].k);
		}
		if ((moe >> i) & 1u)
			add_moe(m, y, i);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y != LAY_TEXT)
		ivl_add_tower(m, y, 0);
	return m;
}

/* Rank r of TP T (EP 1): layer 0's attention and dense MLP, layer 1's router and experts (each
 * TP-split: w13[j] = [gate_j rows; up_j rows], w2[j] = down_j columns), the tower. */
static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	char n[200];
	int64_t ql = 8 / T * 16, kvh = T == 2 ? r : r / 2, il = IE / T;
	shp(f, r, L0 "self_attn.qkv_proj.weight", 2, ql + 32, HID, 0);
	rows_at(f, r, L0 "self_attn.qkv_proj.weight", 0, L0 "self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, L0 "self_attn.qkv_proj.weight", ql, L0 "self_attn.k_proj.weight", kvh * 16,
	        16);
	rows_at(f, r, L0 "self_attn.qkv_proj.weight", ql + 16, L0 "self_attn.v_proj.weight",
	        kvh * 16, 16);
	cols_of(f, r, T, L1 "self_attn.o_proj.weight", L1 "self_attn.o_proj.weight", HID, 128);
	repl(f, r, L1 "self_attn.q_norm.weight");
	repl(f, r, L1 "self_attn.k_norm.weight");
	fx_mlp_is(f, r, T, L0 "mlp.", 128, HID);
	repl(f, r, L1 "mlp.gate.weight");
	fx_experts_are(f, &XP, r, 0, NE, r * il, il, false);
	assert_int_equal(tm_ix(f->p, r, L1 "mlp.gate_up_proj.weight"), -1);
	assert_int_equal(tm_ix(f->p, r, L0 "mlp.gate.weight"), -1);
	snprintf(n, sizeof(n), LM "embed_tokens.weight");
	rows_at(f, r, n, 0, n, r * (128 / T), 128 / T);
	ivl_check_tower(f, T, r);
	/* the tower's 2 x 18 + 4 + 6; per layer 2 norms, qkv, o, 2 q/k norms; layer 0's 2, layer
	 * 1's 3; embed, norm, head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 18 + 4 + 6 + 2 * 6 + 2 + 3 + 3);
}

/* TP 2 and 4 (the released names; test_layouts: 4.57's give the same bytes) */
static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, moe_model(LAY_V450, true, 2u), cfg_m, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* EP 2 (TP 1): rank e holds experts [2e, 2e + 2) whole; the rest as TP 1 */
static void test_ep(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, moe_model(LAY_V450, true, 2u), cfg_m, 1, 2, 0, true);
	for (uint32_t e = 0; e < 2; e++) {
		fx_experts_are(&f, &XP, e, 2 * e, 2, 0, IE, false);
		repl(&f, e, L1 "mlp.gate.weight");
		repl(&f, e, L0 "mlp.down_proj.weight");
	}
	fx_close(&f);
}

/* transformers 4.57's layout gives the older one's shards byte for byte; the language model
 * Qwen3MoeForCausalLM's (the qwen3_moe family) under language_model. */
static void test_layouts(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {1, 2}};
	for (size_t k = 0; k < 2; k++) {
		fx_same_layouts(moe_model(LAY_HF5, true, 2u), moe_model(LAY_V450, true, 2u), cfg_m,
		                moe_model(LAY_TEXT, true, 2u), cfg_text, lays[k][0], lays[k][1],
		                "language_model.");
	}
}

/* int8-channel TP 2 / fp8-channel TP 4: the experts, attention and dense MLP quantized; the
 * router, q/k norms, embeddings and the tower not. */
static void test_quant(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_CHANNEL};
	static const uint32_t tps[] = {2, 4};
	static const char *const keep[] = {
	    L1 "mlp.gate.weight", L1 "self_attn.q_norm.weight", LM "embed_tokens.weight",
	    VT "encoder.layer.1.mlp.fc1.weight", PJ "linear_1.weight"};
	for (size_t i = 0; i < 2; i++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = tps[i];
		l.quant = qs[i];
		fx f;
		fx_open_l(&f, moe_model(LAY_V450, true, 2u), cfg_m, &l, true);
		uint32_t r = tps[i] - 1;
		fx_quant_split(&f, r, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), NULL, 0);
		repl(&f, r, L1 "mlp.gate.weight");
		int want = i == 0 ? WT_I8 : WT_F8_E4M3;
		static const char *const q[] = {
		    L1 "mlp.experts.w13_weight", L1 "mlp.experts.w2_weight",
		    L0 "mlp.gate_up_proj.weight", L0 "self_attn.qkv_proj.weight"};
		for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
			assert_int_equal(info(&f, r, q[k])->dtype, want);
		if (i ==
		    0) { /* expert 2's up rows of rank 1: [16, 32) of up_proj, each quantized */
			int64_t il = IE / 2;
			shp(&f, r, L1 "mlp.experts.w13_weight_scale", 3, NE, 2 * il, 1);
			const int8_t *c =
			    (const int8_t *)out_bytes(&f, r, L1 "mlp.experts.w13_weight");
			const float *sc =
			    (const float *)out_bytes(&f, r, L1 "mlp.experts.w13_weight_scale");
			for (int64_t row = 0; row < il; row++) {
				size_t rowb, o = (size_t)(2 * 2 * il + il + row);
				const uint16_t *x = (const uint16_t *)src_rows(
				    &f, L1 "mlp.experts.2.up_proj.weight", il + row, &rowb);
				int8_row_is(c + o * HID, sc[o], x, HID);
			}
		}
		fx_close(&f);
	}
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1},
	                                   {1, 2}, {2, 2}, {1, 4}, {1, 3}};
	coverage(moe_model(LAY_HF5, true, 2u), cfg_m, 2, lays, 8);
	coverage(moe_model(LAY_V450, true, 2u), cfg_m, 2, lays, 8);
	/* every layer sparse (InternVL3_5-30B-A3B's mlp_only_layers []), tied by text_config */
	static const char all[] = CFG_M("", ",\"tie_word_embeddings\":true");
	coverage(moe_model(LAY_HF5, false, 3u), all, 2, lays, 8);
}

/* Which layers are sparse: mlp_only_layers, decoder_sparse_step (layer i when (i + 1) % step
 * is 0), num_experts 0 (every layer dense, as vLLM's and transformers' Qwen3MoeDecoderLayer) */
static void test_sparse_layers(void **state)
{
	(void)state;
	static const char step2[] = CFG_M("", ",\"decoder_sparse_step\":2");
	static const char none[] =
	    "{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	    "\"internvl\",\"text_config\":{\"model_type\":\"qwen3_moe\",\"hidden_size\":64,"
	    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":16,"
	    "\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":2,"
	    "\"num_experts\":0},\"vision_config\":{" VKEYS ",\"attention_bias\":true}}";
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(moe_model(LAY_HF5, true, 2u), step2, 2, lays, 3);
	coverage(moe_model(LAY_HF5, true, 0u), none, 2, lays, 3);
	/* layer 0 sparse by mlp_only_layers [1] */
	coverage(moe_model(LAY_HF5, true, 1u), CFG_M("", ",\"mlp_only_layers\":[1]"), 2, lays, 3);
	/* a sparse layer's tensors where config.json makes it dense, and the reverse */
	fx_refused(moe_model(LAY_HF5, true, 3u), cfg_m, WT_EUNSUPPORTED, "layers.0.mlp.",
	           "mlp_only_layers");
	fx_refused(moe_model(LAY_HF5, true, 2u), CFG_M("", ""), WT_EUNSUPPORTED, "layers.0.mlp.",
	           "a MoE layer");
	fx_refused(moe_model(LAY_HF5, true, 2u), none, WT_ESHAPE, "layers.1.mlp.experts.",
	           "0 experts");
}

/* Qwen3MoeConfig's defaults under a qwen3_moe text_config (transformers 4.57.1), the tie from
 * text_config only */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	    "\"internvl\",\"tie_word_embeddings\":true,\"text_config\":{\"model_type\":"
	    "\"qwen3_moe\"},\"vision_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_string_equal(c.lm_model_type, "qwen3_moe");
	assert_true(c.vocab_size == 151936 && c.hidden_size == 2048 && c.head_dim == 64 &&
	            c.num_attention_heads == 32 && c.num_key_value_heads == 4 &&
	            c.intermediate_size == 6144 && c.num_hidden_layers == 24 &&
	            c.num_experts == 128 && c.moe_intermediate_size == 768 &&
	            c.decoder_sparse_step == 1 && c.n_mlp_only_layers == 0 && !c.tie_given);
	ckpt_config_clear(&c);
	/* the top level's tie is not the language model's: lm_head kept */
	static const char top[] = CFG_M("\"tie_word_embeddings\":true,", DENSE0);
	fx f;
	fx_open(&f, moe_model(LAY_HF5, true, 2u), top, 2, 1, 0, false);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
	static const char tied[] =
	    CFG_M("\"tie_word_embeddings\":false,", DENSE0 ",\"tie_word_embeddings\":true");
	fx_open(&f, moe_model(LAY_HF5, true, 2u), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	assert_int_equal(tm_ix(f.p, 0, "language_model.lm_head.weight"), -1);
	fx_close(&f);
}

/* The refusals: a missing expert, router or q_norm; a router of another shape; EP past the
 * experts; GPT-OSS's text model. */
static void test_errors(void **state)
{
	(void)state;
	tm_model *m = moe_model(LAY_HF5, true, 2u);
	tm_remove(m, "model.language_model.layers.1.mlp.experts.3.down_proj.weight");
	fx_refused(m, cfg_m, WT_ENOTFOUND, "experts.3.down_proj.weight", "");
	m = moe_model(LAY_HF5, true, 2u);
	tm_remove(m, "model.language_model.layers.1.mlp.gate.weight");
	fx_refused(m, cfg_m, WT_ENOTFOUND, "mlp.gate.weight", "");
	m = moe_model(LAY_HF5, true, 2u);
	tm_remove(m, "model.language_model.layers.1.self_attn.q_norm.weight");
	fx_refused(m, cfg_m, WT_ENOTFOUND, "self_attn.q_norm.weight", "");
	m = moe_model(LAY_HF5, true, 2u);
	tm_remove(m, "model.language_model.layers.1.mlp.gate.weight");
	tm_add2(m, "model.language_model.layers.1.mlp.gate.weight", NE + 1, HID);
	fx_refused(m, cfg_m, WT_ESHAPE, "mlp.gate.weight", "");
	fx_refused_tp_ep(moe_model(LAY_HF5, true, 2u), cfg_m, 1, 8, WT_ELAYOUT, "ep_size 8", "");
	static const char oss[] =
	    "{\"architectures\":[\"InternVLForConditionalGeneration\"],\"model_type\":"
	    "\"internvl\",\"text_config\":{\"model_type\":\"gpt_oss\",\"hidden_size\":64,"
	    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":16,"
	    "\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":2,"
	    "\"num_local_experts\":4},\"vision_config\":{" VKEYS ",\"attention_bias\":true}}";
	fx_refused(moe_model(LAY_HF5, true, 2u), oss, WT_EUNSUPPORTED,
	           "text_config.model_type 'gpt_oss'", "GPT-OSS language model");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_ep),
	    cmocka_unit_test(test_layouts),     cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage),    cmocka_unit_test(test_sparse_layers),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
