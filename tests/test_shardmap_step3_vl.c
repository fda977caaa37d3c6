/*
 * test_shardmap_step3_vl.c — Step3-VL (Step3VLForConditionalGeneration, model_type step3_vl,
 * remote code: stepfun-ai/step3) cut as vLLM's step3_vl.py loads it: the language model as the
 * step3_text family's (byte for byte its ranks of the same weights), the tower vision_model.*
 * built without quant_config (qkv_proj fused in the checkpoint re-cut by vision heads into
 * [q_r; k_r; v_r] with its bias, out_proj / fc2 by columns, fc1 by rows, norms, row-parallel
 * biases and embeddings whole, nothing quantized), vit_downsampler / vit_downsampler2 /
 * vit_large_projector whole and never quantized. Hand-computed slices at TP 2 / 4, the
 * language model against step3_text's at TP 1..8 and TP 2 x EP 2, int8-channel TP 2 and
 * fp8-channel TP 4, coverage, Step3VLConfig's defaults and the refusals. Seeds fixed and
 * printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed03e1ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"
#include "test_shardmap_quant.h"

/* The language model: hid 128, H 8 of head_dim 16, share_q_dim 64, dense I 96, 4 experts of Ie
 * 32, share_expert_dim 48, V 1000, 3 layers (0 dense, 1 and 2 MoE). */
#define HID 128
#define HD  16
#define SQ  64
#define IE  32
#define ISH 48
/* The tower: VE 64, 8 heads of 8, VI 96, 2 blocks, image 28 / patch 14 (5 positions), OH 32. */
#define VE 64
#define VI 96
#define OH 32
#define NP 5
#define TXT                                                                                        \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"vocab_size\":1000,"                       \
	"\"num_hidden_layers\":3,\"intermediate_size\":96,\"head_dim\":16,\"moe_num_experts\":4,"  \
	"\"moe_intermediate_size\":32,\"share_q_dim\":64,\"share_expert_dim\":48,"                 \
	"\"moe_top_k\":2,\"moe_layers_enum\":\"1,2\""
#define VISP(heads, img, oh)                                                                       \
	"\"hidden_size\":64,\"intermediate_size\":96,\"output_hidden_size\":" #oh ","              \
	"\"num_hidden_layers\":2,\"num_attention_heads\":" #heads ",\"image_size\":" #img ","      \
	"\"patch_size\":14"
#define VIS(heads) VISP(heads, 28, 32)
#define S3V_TOP                                                                                    \
	"{\"architectures\":[\"Step3VLForConditionalGeneration\"],\"model_type\":\"step3_vl\""
#define S3V_CFG(tmt, vis, extra)                                                                   \
	S3V_TOP ",\"text_config\":{\"model_type\":\"" tmt "\"," TXT "},\"vision_config\":{" vis    \
	        "}" extra "}"
#define S3V_OK S3V_CFG("step3_text", VIS(8), "")
/* VIS(8) without num_hidden_layers (Step3VisionEncoderConfig's 63) */
#define VIS63                                                                                      \
	"\"hidden_size\":64,\"intermediate_size\":96,\"output_hidden_size\":32,"                   \
	"\"num_attention_heads\":8,\"image_size\":28,\"patch_size\":14"
#define TXT_CFG                                                                                    \
	"{\"architectures\":[\"Step3TextForCausalLM\"],\"model_type\":\"step3_text\"," TXT "}"
#define L1  "model.layers.1."
#define WQ  L1 "self_attn.wq.weight"
#define QKV L1 "self_attn.qkv_proj.weight"
#define OP  L1 "self_attn.o_proj.weight"
#define VT  "vision_model."
#define VB  VT "transformer.layers.%d."
#define VB1 VT "transformer.layers.1."
#define DS1 "vit_downsampler."
#define DS2 "vit_downsampler2."
#define PJ  "vit_large_projector."

static void add_4d(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * c * d, 0, 0);
	st_desc *s = &m->d[m->n - 1];
	s->ndim = 4;
	s->shape[0] = a;
	s->shape[1] = b;
	s->shape[2] = c;
	s->shape[3] = d;
}

/* Step 3's language model (test_shardmap_step3.c's, layers 1 and 2 MoE). */
static void add_lm(tm_model *m)
{
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	tm_add2(m, "lm_head.weight", 1000, HID);
	const tm_leaf L[] = {
	    {"input_layernorm.weight", HID, 0, 0},   {"post_attention_layernorm.weight", HID, 0, 0},
	    {"self_attn.q_proj.weight", SQ, HID, 0}, {"self_attn.k_proj.weight", HD, HID, 0},
	    {"self_attn.v_proj.weight", HD, HID, 0}, {"self_attn.inter_norm.weight", SQ, 0, 0},
	    {"self_attn.wq.weight", 8 * HD, SQ, 0},  {"self_attn.o_proj.weight", HID, 8 * HD, 0}};
	tm_layers(m, "model.layers.%d.", 3, L, TM_NLEAVES(L), 0);
	tm_mlp(m, 0, "mlp.", 96, HID);
	char b[200];
	for (int i = 1; i < 3; i++) {
		snprintf(b, sizeof(b), "model.layers.%d.moe.gate.weight", i);
		tm_add2(m, b, 4, HID);
		snprintf(b, sizeof(b), "model.layers.%d.moe.gate_proj.weight", i);
		tm_add(m, b, WT_DTYPE_INVALID, 3, 4, IE, HID);
		snprintf(b, sizeof(b), "model.layers.%d.moe.up_proj.weight", i);
		tm_add(m, b, WT_DTYPE_INVALID, 3, 4, IE, HID);
		snprintf(b, sizeof(b), "model.layers.%d.moe.down_proj.weight", i);
		tm_add(m, b, WT_DTYPE_INVALID, 3, 4, HID, IE);
		tm_mlp(m, i, "share_expert.", ISH, HID);
	}
}

/* The language model alone (a Step3TextForCausalLM checkpoint). */
static tm_model *tm_text(void)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m);
	return m;
}

/* The whole checkpoint: the language model, the tower of `blocks` blocks, the downsamplers and
 * the projector (its bias when pbias). */
static tm_model *tm_s3v(int blocks, bool pbias)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m);
	tm_add2(m, VT "embeddings.class_embedding", 1, VE);
	add_4d(m, VT "embeddings.patch_embedding.weight", VE, 3, 14, 14);
	tm_add2(m, VT "embeddings.patch_embedding.bias", VE, 0);
	tm_add2(m, VT "embeddings.position_embedding.weight", NP, VE);
	const tm_leaf B[] = {{"self_attn.qkv_proj.weight", 3 * VE, VE, 0},
	                     {"self_attn.qkv_proj.bias", 3 * VE, 0, 0},
	                     {"self_attn.out_proj.weight", VE, VE, 0},
	                     {"self_attn.out_proj.bias", VE, 0, 0},
	                     {"layer_norm1.weight", VE, 0, 0},
	                     {"layer_norm1.bias", VE, 0, 0},
	                     {"mlp.fc1.weight", VI, VE, 0},
	                     {"mlp.fc1.bias", VI, 0, 0},
	                     {"mlp.fc2.weight", VE, VI, 0},
	                     {"mlp.fc2.bias", VE, 0, 0},
	                     {"layer_norm2.weight", VE, 0, 0},
	                     {"layer_norm2.bias", VE, 0, 0}};
	tm_layers(m, VB, blocks, B, TM_NLEAVES(B), 0);
	add_4d(m, DS1 "weight", OH, VE, 2, 2);
	tm_add2(m, DS1 "bias", OH, 0);
	add_4d(m, DS2 "weight", 2 * OH, OH, 3, 3);
	tm_add2(m, DS2 "bias", 2 * OH, 0);
	tm_add2(m, PJ "weight", HID, 2 * OH);
	if (pbias)
		tm_add2(m, PJ "bias", HID, 0);
	return m;
}

/* Rank r's tower block blk at TP T: qkv_proj (weight and bias) rows [q_r; k_r; v_r] of the
 * fused source's thirds, out_proj / fc2 columns, fc1 rows with its bias, the rest whole. */
static void block_is(const fx *f, uint32_t T, uint32_t r, int blk)
{
	int64_t vl = VE / T, il = VI / T;
	char p[100], n[200];
	snprintf(p, sizeof(p), VB, blk);
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), "%sself_attn.qkv_proj.%s", p, w ? "bias" : "weight");
		shp(f, r, n, w ? 1 : 2, 3 * vl, w ? 0 : VE, 0);
		for (int q = 0; q < 3; q++)
			rows_at(f, r, n, q * vl, n, q * VE + r * vl, vl);
	}
	snprintf(n, sizeof(n), "%sself_attn.out_proj.weight", p);
	cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), "%smlp.fc2.weight", p);
	cols_of(f, r, T, n, n, VE, VI);
	static const char *const fc1[] = {"mlp.fc1.weight", "mlp.fc1.bias"};
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), "%s%s", p, fc1[w]);
		shp(f, r, n, w ? 1 : 2, il, w ? 0 : VE, 0);
		rows_at(f, r, n, 0, n, r * il, il);
	}
	static const char *const rep[] = {"self_attn.out_proj.bias", "mlp.fc2.bias",
	                                  "layer_norm1.weight",      "layer_norm1.bias",
	                                  "layer_norm2.weight",      "layer_norm2.bias"};
	for (size_t k = 0; k < sizeof(rep) / sizeof(rep[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", p, rep[k]);
		repl(f, r, n);
	}
}

static const char *const s3v_whole[] = {VT "embeddings.class_embedding",
                                        VT "embeddings.patch_embedding.weight",
                                        VT "embeddings.patch_embedding.bias",
                                        VT "embeddings.position_embedding.weight",
                                        DS1 "weight",
                                        DS1 "bias",
                                        DS2 "weight",
                                        DS2 "bias",
                                        PJ "weight",
                                        PJ "bias"};

/* TP 2 and 4: both blocks by hand, the embeddings / downsamplers / projector whole, wq by rows
 * and qkv_proj whole in the language model; the count of outputs. */
static void test_s3v_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		fx_open(&f, tm_s3v(2, true), S3V_OK, T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "step3_vl");
		for (uint32_t r = 0; r < T; r++) {
			for (int blk = 0; blk < 2; blk++)
				block_is(&f, T, r, blk);
			for (size_t k = 0; k < TM_NLEAVES(s3v_whole); k++)
				repl(&f, r, s3v_whole[k]);
			rows_at(&f, r, WQ, 0, WQ, r * 8 * HD / T, 8 * HD / T);
			shp(&f, r, QKV, 2, SQ + 2 * HD, HID, 0);
		}
		/* the language model's 33 (test_shardmap_step3.c); 4 embeddings, 2 x 12 block
		 * outputs, 2 downsamplers x 2, the projector's 2 */
		assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 33 + 4 + 24 + 4 + 2);
		fx_close(&f);
	}
}

/* Every output of the Step3-VL rank but vision_model.* / vit_* is the text model's rank's of
 * the same name, byte for byte, and the text model's rank has no other. */
static void same_lm(tm_model *m, const char *cfg, uint32_t T, uint32_t P)
{
	fx a, t;
	fx_open(&a, m, cfg, T, P, 0, true);
	fx_open(&t, tm_text(), TXT_CFG, T, P, 0, true);
	static const char *const not_lm[] = {VT, "vit_", NULL};
	for (uint32_t r = 0; r < T * P; r++)
		fx_same_rank_but(&a, &t, r, not_lm, "step3_text");
	fx_close(&a);
	fx_close(&t);
}

/* The language model's ranks are step3_text's at TP 1 / 2 / 4 / 8 and TP 2 x EP 2, whatever
 * text_config's model_type says (Step3VLConfig builds a Step3TextConfig of it). */
static void test_s3v_same_lm(void **state)
{
	(void)state;
	for (uint32_t T = 1; T <= 8; T *= 2)
		same_lm(tm_s3v(2, true), S3V_OK, T, 1);
	same_lm(tm_s3v(2, true), S3V_OK, 2, 2);
	same_lm(tm_s3v(2, true), S3V_CFG("llama", VIS(8), ""), 2, 1);
}

static const char *const s3v_keep[] = {VT "embeddings.patch_embedding.weight",
                                       VB1 "self_attn.qkv_proj.weight",
                                       VB1 "self_attn.out_proj.weight",
                                       VB1 "mlp.fc1.weight",
                                       VB1 "mlp.fc2.weight",
                                       DS1 "weight",
                                       DS2 "weight",
                                       PJ "weight",
                                       PJ "bias",
                                       "model.embed_tokens.weight",
                                       L1 "moe.gate.weight"};
static const char *const s3v_quant[] = {QKV, WQ, OP, L1 "moe.experts.w13_weight",
                                        "model.layers.0.mlp.gate_up_proj.weight"};

/* int8-channel at TP 2 and fp8-channel at TP 4: the language model's Linears quantized, the
 * tower's Linears (built with quant_config None), the convolutions and the projector BF16;
 * rank 1's o_proj codes by columns. */
static void test_s3v_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_s3v(2, true), S3V_OK, 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(s3v_keep), FX_N(s3v_quant));
	fx_cols_int8_is(&f, 1, 2, OP, HID, 8 * HD);
	block_is(&f, 2, 1, 1);
	fx_close(&f);
	fx_open_quant(&f, tm_s3v(2, true), S3V_OK, 4, WT_QUANT_FP8_CHANNEL, WT_BF16, FX_N(s3v_keep),
	              FX_N(s3v_quant));
	block_is(&f, 4, 3, 0);
	fx_close(&f);
}

static void test_s3v_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}};
	coverage(tm_s3v(2, true), S3V_OK, 1, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_s3v(2, false), S3V_CFG("step3_text", VIS(8), ",\"projector_bias\":false"), 1,
	         lays, sizeof(lays) / sizeof(lays[0]));
}

/* Step3VLConfig's defaults: projector_bias true (the bias required), understand_projector_stride
 * any integer >= 1 (no weight's shape); an empty vision_config is Step3VisionEncoderConfig's
 * (1792 wide, 4096 output_hidden_size, 63 blocks), each seen in a shape it sizes. */
static void test_s3v_defaults(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_s3v(2, false), S3V_CFG("step3_text", VIS(8), ",\"projector_bias\":false"), 2,
	        1, 0, true);
	assert_true(tm_ix(f.p, 0, PJ "bias") < 0);
	fx_close(&f);
	fx_open(&f, tm_s3v(2, true),
	        S3V_CFG("step3_text", VIS(8), ",\"understand_projector_stride\":2"), 2, 1, 0, true);
	repl(&f, 1, DS1 "weight");
	fx_close(&f);
	/* get_act_fn lowers the name */
	fx_open(&f, tm_s3v(2, true),
	        S3V_CFG("step3_text", VIS(8) ",\"hidden_act\":\"QUICK_GELU\"", ""), 1, 1, 0, false);
	fx_close(&f);
	fx_refused(tm_s3v(2, false), S3V_OK, WT_ENOTFOUND, PJ "bias", "missing");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VIS(8), ",\"projector_bias\":false"),
	           WT_EUNSUPPORTED, PJ "bias", "projector_bias is false");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", "", ""), WT_ESHAPE, "vision_model.",
	           "1792");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VISP(8, 28, null), ""), WT_ESHAPE,
	           DS1 "weight", "[4096, 64, 2, 2]");
	/* num_hidden_layers absent: 63 blocks */
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VIS63, ""), WT_ENOTFOUND,
	           "transformer.layers.2.", "num_hidden_layers 63");
}

/* A tower block past num_hidden_layers, a missing tower tensor, the shapes the rules cannot
 * name (output_hidden_size), vision heads not dividing tp_size. */
static void test_s3v_errors(void **state)
{
	(void)state;
	fx_refused(tm_s3v(3, true), S3V_OK, WT_ESHAPE, "transformer.layers.2.",
	           "num_hidden_layers is 2");
	tm_model *m = tm_s3v(2, true);
	tm_remove(m, VB1 "self_attn.qkv_proj.bias");
	fx_refused(m, S3V_OK, WT_ENOTFOUND, "qkv_proj.bias", "missing");
	m = tm_s3v(2, true);
	tm_remove(m, DS2 "weight");
	fx_refused(m, S3V_OK, WT_ENOTFOUND, DS2 "weight", "missing");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VISP(8, 28, 16), ""), WT_ESHAPE,
	           DS1 "weight", "[16, 64, 2, 2]");
	m = tm_s3v(2, false);
	tm_add2(m, PJ "bias", 2 * OH, 0);
	fx_refused(m, S3V_OK, WT_ESHAPE, PJ "bias", "[128]");
	m = tm_s3v(2, true);
	tm_remove(m, DS2 "bias");
	tm_add2(m, DS2 "bias", OH, 0);
	fx_refused(m, S3V_OK, WT_ESHAPE, DS2 "bias", "2 x vision_config.output_hidden_size");
	m = tm_s3v(2, true);
	tm_remove(m, VT "embeddings.position_embedding.weight");
	tm_add2(m, VT "embeddings.position_embedding.weight", NP - 1, VE);
	fx_refused(m, S3V_OK, WT_ESHAPE, "position_embedding", "[5, 64]");
	fx_refused_tp(tm_s3v(2, true), S3V_CFG("step3_text", VIS(4), ""), 8, WT_ELAYOUT,
	              "vision_config.num_attention_heads", "4");
}

/* Each config refusal names its key and the fix. */
static void test_s3v_config_refusals(void **state)
{
	(void)state;
	fx_refused(tm_s3v(2, true), S3V_TOP ",\"vision_config\":{" VIS(8) "}}", WT_ECORRUPT,
	           "needs a text_config", "moe_layers_enum");
	fx_refused(tm_s3v(2, true),
	           S3V_TOP ",\"text_config\":{\"hidden_size\":128},\"vision_config\":{" VIS(8) "}}",
	           WT_ECORRUPT, "moe_layers_enum is missing", "tuple");
	fx_refused(tm_s3v(2, true), S3V_TOP ",\"text_config\":{" TXT "},\"vision_config\":7}",
	           WT_ECORRUPT, "vision_config", "not an object");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VIS(8) ",\"hidden_act\":\"swish\"", ""),
	           WT_EUNSUPPORTED, "vision_config.hidden_act", "quick_gelu");
	fx_refused(tm_s3v(2, true),
	           S3V_CFG("step3_text", VIS(8), ",\"understand_projector_stride\":0"), WT_ECORRUPT,
	           "understand_projector_stride", ">= 1");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VIS(8), ",\"projector_bias\":\"yes\""),
	           WT_ECORRUPT, "projector_bias", "boolean");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VIS(5), ""), WT_ECORRUPT,
	           "num_attention_heads", "64");
	fx_refused(tm_s3v(2, true), S3V_CFG("step3_text", VISP(8, 8, 32), ""), WT_ECORRUPT,
	           "image_size", "patch_size");
	fx_refused(tm_s3v(2, true),
	           "{\"architectures\":[\"Step3VLForConditionalGeneration\"],"
	           "\"model_type\":\"step3_text\"," TXT "}",
	           WT_ECORRUPT, "needs model_type step3_vl", "vision_config");
	fx_refused(tm_s3v(2, true),
	           S3V_TOP ",\"text_config\":{" TXT
	                   ",\"hidden_act\":\"gelu\"},\"vision_config\":{" VIS(8) "}}",
	           WT_EUNSUPPORTED, "hidden_act is not \"silu\"", "silu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_s3v_slices),          cmocka_unit_test(test_s3v_same_lm),
	    cmocka_unit_test(test_s3v_quant),           cmocka_unit_test(test_s3v_coverage),
	    cmocka_unit_test(test_s3v_defaults),        cmocka_unit_test(test_s3v_errors),
	    cmocka_unit_test(test_s3v_config_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
