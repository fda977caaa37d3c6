/*
 * test_shardmap_glm4v_old.c — GLM-4V, the first one (GLM4VForCausalLM, model_type chatglm with
 * a vision_config, remote code: THUDM/glm-4v-9b) cut as vLLM's glm4v.py loads it: the ChatGLM
 * language model exactly as the chatglm family cuts it; the EVA2CLIP tower's fused
 * query_key_value (and bias) by vision heads into [q_r; k_r; v_r], dense and fc2 by columns
 * (their biases whole), fc1 and its bias by rows, LayerNorms, patch / cls / position
 * embeddings, conv, boi / eoi whole; the GLU adapter's linear_proj whole but quantized, norm1
 * whole, gate_proj / dense_h_to_4h merged by rows into merged_proj ([gate_r; up_r]),
 * dense_4h_to_h by columns. Hand-computed slices at TP 2 and TP 4, the language model byte for
 * byte the chatglm family's, int8-channel and fp8-channel layouts, coverage, the vision_config
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0047ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_same_lm.h"

/* LM: hid 128, H 8, KV 2, head 16, I 192, V 1000, 2 layers; tower: VE 64, 4 heads, VI 96,
 * 2 blocks, image 28 / patch 14 (a 2 x 2 grid: 5 positions) */
#define HID 128
#define HD  16
#define I   192
#define VE  64
#define VI  96
#define VIS_KEYS(extra)                                                                            \
	"\"hidden_size\":64,\"intermediate_size\":96,\"num_heads\":4,\"num_hidden_layers\":2,"     \
	"\"image_size\":28,\"patch_size\":14,\"in_channels\":3,\"num_positions\":5,"               \
	"\"layer_norm_eps\":1e-6,\"hidden_act\":\"gelu\",\"dropout_prob\":0.0,"                    \
	"\"scaling_factor\":8" extra
#define LM_KEYS                                                                                    \
	"\"model_type\":\"chatglm\",\"hidden_size\":128,\"ffn_hidden_size\":192,"                  \
	"\"num_attention_heads\":8,\"padded_vocab_size\":1000,\"num_layers\":2,"                   \
	"\"kv_channels\":16,\"original_rope\":true,\"multi_query_attention\":true,"                \
	"\"multi_query_group_num\":2,\"add_qkv_bias\":true"
#define GV_CFG_AS(arch, extra, vis)                                                                \
	"{\"architectures\":[\"" arch "\"]," LM_KEYS extra ",\"vision_config\":{" vis "}}"
#define GV_CFG_T(extra, vis) GV_CFG_AS("GLM4VForCausalLM", extra, vis)
#define GV_CFG(extra)        GV_CFG_T(",\"tie_word_embeddings\":false" extra, VIS_KEYS(""))
#define CG_TEXT_CFG                                                                                \
	"{\"architectures\":[\"ChatGLMModel\"]," LM_KEYS ",\"tie_word_embeddings\":false}"

#define V     "transformer.vision."
#define B1    V "transformer.layers.1."
#define QKV   B1 "attention.query_key_value.weight"
#define QKVB  B1 "attention.query_key_value.bias"
#define DNS   B1 "attention.dense.weight"
#define FC1   B1 "mlp.fc1.weight"
#define FC1B  B1 "mlp.fc1.bias"
#define FC2   B1 "mlp.fc2.weight"
#define A     V "linear_proj."
#define LPJ   A "linear_proj.weight"
#define GATE  A "gate_proj.weight"
#define UP    A "dense_h_to_4h.weight"
#define MRG   A "merged_proj.weight"
#define D4H   A "dense_4h_to_h.weight"
#define CONV  V "conv.weight"
#define PATCH V "patch_embedding.proj.weight"
#define OUT   "transformer.output_layer.weight"

/* A 4-D tensor [a, b, k, k] (the Conv2d weights). */
static void add_conv(tm_model *m, const char *name, int64_t a, int64_t b, int64_t k)
{
	tm_add(m, name, WT_DTYPE_INVALID, 1, a * b * k * k, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 4;
	d->shape[0] = a;
	d->shape[1] = b;
	d->shape[2] = d->shape[3] = k;
}

/* ChatGLM's language model (2 kv heads, the qkv bias; output_layer when head). */
static void add_lm(tm_model *m, int head)
{
	tm_add2(m, "transformer.embedding.word_embeddings.weight", 1000, HID);
	tm_add2(m, "transformer.encoder.final_layernorm.weight", HID, 0);
	if (head)
		tm_add2(m, OUT, 1000, HID);
	const tm_leaf L[] = {{"input_layernorm.weight", HID, 0, 0},
	                     {"post_attention_layernorm.weight", HID, 0, 0},
	                     {"self_attention.query_key_value.weight", 12 * HD, HID, 0},
	                     {"self_attention.query_key_value.bias", 12 * HD, 0, 0},
	                     {"self_attention.dense.weight", HID, HID, 0},
	                     {"mlp.dense_h_to_4h.weight", 2 * I, HID, 0},
	                     {"mlp.dense_4h_to_h.weight", HID, I, 0}};
	tm_layers(m, "transformer.encoder.layers.%d.", 2, L, TM_NLEAVES(L), 0);
}

/* The whole GLM-4V checkpoint: the language model, the tower (2 blocks), conv, boi / eoi and
 * the adapter. */
static tm_model *tm_glm4v_old(int head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	add_lm(m, head);
	add_conv(m, PATCH, VE, 3, 14);
	tm_add2(m, V "patch_embedding.proj.bias", VE, 0);
	tm_add2(m, V "patch_embedding.cls_embedding", 1, VE);
	tm_add2(m, V "patch_embedding.position_embedding.weight", 5, VE);
	const tm_leaf L[] = {{"input_layernorm.weight", VE, 0, 0},
	                     {"input_layernorm.bias", VE, 0, 0},
	                     {"attention.query_key_value.weight", 3 * VE, VE, 0},
	                     {"attention.query_key_value.bias", 3 * VE, 0, 0},
	                     {"attention.dense.weight", VE, VE, 0},
	                     {"attention.dense.bias", VE, 0, 0},
	                     {"mlp.fc1.weight", VI, VE, 0},
	                     {"mlp.fc1.bias", VI, 0, 0},
	                     {"mlp.fc2.weight", VE, VI, 0},
	                     {"mlp.fc2.bias", VE, 0, 0},
	                     {"post_attention_layernorm.weight", VE, 0, 0},
	                     {"post_attention_layernorm.bias", VE, 0, 0}};
	tm_layers(m, V "transformer.layers.%d.", 2, L, TM_NLEAVES(L), 0);
	add_conv(m, CONV, HID, VE, 2);
	tm_add2(m, V "conv.bias", HID, 0);
	tm_add(m, V "boi", WT_DTYPE_INVALID, 3, 1, 1, HID);
	tm_add(m, V "eoi", WT_DTYPE_INVALID, 3, 1, 1, HID);
	tm_add2(m, LPJ, HID, HID);
	tm_add2(m, A "norm1.weight", HID, 0);
	tm_add2(m, A "norm1.bias", HID, 0);
	tm_add2(m, GATE, I, HID);
	tm_add2(m, UP, I, HID);
	tm_add2(m, D4H, HID, I);
	return m;
}

static const char *const gv_whole[] = {
    PATCH,
    V "patch_embedding.proj.bias",
    V "patch_embedding.cls_embedding",
    V "patch_embedding.position_embedding.weight",
    B1 "input_layernorm.weight",
    B1 "input_layernorm.bias",
    B1 "post_attention_layernorm.weight",
    B1 "post_attention_layernorm.bias",
    B1 "attention.dense.bias",
    B1 "mlp.fc2.bias",
    CONV,
    V "conv.bias",
    V "boi",
    V "eoi",
    LPJ,
    A "norm1.weight",
    A "norm1.bias",
};

/* Rank r of T: query_key_value (weight or bias) q rows [64/T r, +64/T), then k rows 64 + the
 * same, v rows 128 + the same (KV = H: no replication). */
static void vqkv_rows(const fx *f, uint32_t r, uint32_t T, const char *name)
{
	int64_t n = VE / T;
	for (int p = 0; p < 3; p++)
		rows_at(f, r, name, p * n, name, p * VE + n * r, n);
}

/* TP 2 and TP 4 (one vision head a rank) by hand; every tensor outside transformer.vision. the
 * chatglm family's rank of the same language model byte for byte (not_lm left out). */
static const char *const not_lm[] = {V, NULL};

static void test_gv_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f, g;
		fx_open(&f, tm_glm4v_old(1), GV_CFG(""), T, 1, 0, true);
		assert_string_equal(shardmap_family(f.p), "glm4v_old");
		tm_model *text = tm_new(SEED, WT_BF16);
		add_lm(text, 1);
		fx_open(&g, text, CG_TEXT_CFG, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			shp(&f, r, QKV, 2, 3 * VE / T, VE, 0);
			vqkv_rows(&f, r, T, QKV);
			vqkv_rows(&f, r, T, QKVB);
			cols_of(&f, r, T, DNS, DNS, VE, VE);
			shp(&f, r, FC1, 2, VI / T, VE, 0);
			rows_at(&f, r, FC1, 0, FC1, VI / T * r, VI / T);
			rows_at(&f, r, FC1B, 0, FC1B, VI / T * r, VI / T);
			cols_of(&f, r, T, FC2, FC2, VE, VI);
			for (size_t k = 0; k < sizeof(gv_whole) / sizeof(gv_whole[0]); k++)
				repl(&f, r, gv_whole[k]);
			shp(&f, r, MRG, 2, 2 * I / T, HID, 0);
			rows_at(&f, r, MRG, 0, GATE, I / T * r, I / T);
			rows_at(&f, r, MRG, I / T, UP, I / T * r, I / T);
			assert_true(tm_ix(f.p, r, GATE) < 0 && tm_ix(f.p, r, UP) < 0);
			cols_of(&f, r, T, D4H, D4H, HID, I);
			fx_same_rank_but(&f, &g, r, not_lm, "chatglm");
		}
		fx_close(&g);
		fx_close(&f);
	}
}

static const char *const gv_keep[] = {
    "transformer.embedding.word_embeddings.weight",
    OUT,
    "transformer.encoder.layers.1.input_layernorm.weight",
    "transformer.encoder.layers.1.self_attention.query_key_value.bias",
    PATCH,
    V "patch_embedding.cls_embedding",
    V "patch_embedding.position_embedding.weight",
    B1 "input_layernorm.weight",
    QKVB,
    FC1B,
    B1 "attention.dense.bias",
    CONV,
    V "conv.bias",
    V "boi",
    A "norm1.weight",
};
static const char *const gv_quant[] = {
    "transformer.encoder.layers.1.self_attention.query_key_value.weight",
    "transformer.encoder.layers.1.mlp.dense_4h_to_h.weight",
    QKV,
    DNS,
    FC1,
    FC2,
    LPJ,
    MRG,
    D4H,
};

/* int8-channel at TP 2: every Linear quantized (the tower's, the adapter's linear_proj whole on
 * both ranks, merged_proj, dense_4h_to_h, the LM's), embeddings, convs, norms, biases,
 * boi / eoi BF16; fp8-channel at TP 4 the same split. */
static void test_gv_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, tm_glm4v_old(1), GV_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(gv_keep), FX_N(gv_quant));
	fx_rows_int8_is(&f, 1, LPJ, 0, LPJ, 0, HID, HID);
	fx_cols_int8_is(&f, 1, 2, DNS, VE, VE);
	fx_cols_int8_is(&f, 1, 2, D4H, HID, I);
	fx_rows_int8_is(&f, 1, MRG, I / 2, UP, I / 2, I / 2, HID);
	fx_close(&f);
	fx_open_quant(&f, tm_glm4v_old(1), GV_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(gv_keep), FX_N(gv_quant));
	fx_close(&f);
}

/* Coverage TP 1 / 2 (KV 2: the kv heads' replication past TP 2 is the chatglm test's); tied by
 * default (ChatGLMConfig sets no tie_word_embeddings): output_layer dropped; the remote code's
 * rotary_pos_emb.inv_freq dropped; vision_config.spatial_merge_size ignored (vLLM's conv has
 * kernel 2 whatever it says). */
static void test_gv_coverage_defaults(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}};
	coverage(tm_glm4v_old(1), GV_CFG(""), 2, lays, 2);
	fx f;
	tm_model *m = tm_glm4v_old(1);
	tm_add2(m, "transformer.rotary_pos_emb.inv_freq", 4, 0);
	fx_open(&f, m, GV_CFG_T("", VIS_KEYS(",\"spatial_merge_size\":3")), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_true(tm_ix(f.p, r, OUT) < 0);
		repl(&f, r, CONV);
	}
	assert_true(fx_skipped(&f, OUT));
	assert_true(fx_skipped(&f, "transformer.rotary_pos_emb.inv_freq"));
	fx_close(&f);
}

/* The configs vLLM cannot load: the tower under another architecture, GLM4VForCausalLM without
 * one, a vision_config key it reads missing, num_positions off the grid, heads not dividing
 * the width or tp_size, another model_type. */
static void test_gv_config_errors(void **state)
{
	(void)state;
	fx_refused(tm_glm4v_old(1), GV_CFG_AS("ChatGLMModel", "", VIS_KEYS("")), WT_EUNSUPPORTED,
	           "does not name GLM4VForCausalLM", "\"architectures\": [\"GLM4VForCausalLM\"]");
	fx_refused(tm_glm4v_old(1), "{\"architectures\":[\"GLM4VForCausalLM\"]," LM_KEYS "}",
	           WT_ECORRUPT, "GLM4VForCausalLM needs a vision_config", "ChatGLMModel");
	fx_refused(tm_glm4v_old(1),
	           GV_CFG_T("", "\"hidden_size\":64,\"intermediate_size\":96,\"num_heads\":4,"
	                        "\"num_hidden_layers\":2,\"image_size\":28,\"patch_size\":14,"
	                        "\"in_channels\":3,\"num_positions\":5,\"layer_norm_eps\":1e-6,"
	                        "\"hidden_act\":\"gelu\",\"dropout_prob\":0.0"),
	           WT_ECORRUPT, "vision_config.scaling_factor is absent", "glm-4v-9b");
	fx_refused(tm_glm4v_old(1),
	           GV_CFG_T("",
	                    "\"hidden_size\":64,\"intermediate_size\":96,"
	                    "\"num_hidden_layers\":2,\"image_size\":28,\"patch_size\":14,"
	                    "\"in_channels\":3,\"num_positions\":5,\"layer_norm_eps\":1e-6,"
	                    "\"hidden_act\":\"gelu\",\"dropout_prob\":0.0,\"scaling_factor\":8"),
	           WT_ECORRUPT, "vision_config.num_heads is absent", "Namespace");
	fx_refused(tm_glm4v_old(1),
	           GV_CFG_T("",
	                    "\"hidden_size\":64,\"intermediate_size\":96,\"num_heads\":4,"
	                    "\"num_hidden_layers\":2,\"image_size\":28,\"patch_size\":14,"
	                    "\"in_channels\":3,\"num_positions\":6,\"layer_norm_eps\":1e-6,"
	                    "\"hidden_act\":\"gelu\",\"dropout_prob\":0.0,\"scaling_factor\":8"),
	           WT_ECORRUPT, "num_positions 6", "\"num_positions\": 5");
	fx_refused(tm_glm4v_old(1),
	           GV_CFG_T("",
	                    "\"hidden_size\":64,\"intermediate_size\":96,\"num_heads\":3,"
	                    "\"num_hidden_layers\":2,\"image_size\":28,\"patch_size\":14,"
	                    "\"in_channels\":3,\"num_positions\":5,\"layer_norm_eps\":1e-6,"
	                    "\"hidden_act\":\"gelu\",\"dropout_prob\":0.0,\"scaling_factor\":8"),
	           WT_ECORRUPT, "vision_config.num_heads 3", "fix vision_config");
	fx_refused(tm_glm4v_old(1),
	           "{\"architectures\":[\"GLM4VForCausalLM\"],\"model_type\":\"llama\","
	           "\"hidden_size\":128,\"intermediate_size\":192,\"num_attention_heads\":8,"
	           "\"num_key_value_heads\":2,\"vocab_size\":1000,\"num_hidden_layers\":2,"
	           "\"vision_config\":{" VIS_KEYS("") "}}",
	           WT_ECORRUPT, "GLM4VForCausalLM needs model_type chatglm", "vision_config");
	fx_refused_tp(tm_glm4v_old(1), GV_CFG(""), 8, WT_ELAYOUT, "tp_size 8",
	              "vision_config.num_heads");
	fx_refused(tm_glm4v_old(1), GV_CFG(",\"add_bias_linear\":true"), WT_EUNSUPPORTED,
	           "add_bias_linear is true", "\"add_bias_linear\": false");
}

/* The checkpoint's tensors against the rules: a missing tower / adapter tensor, one vLLM has no
 * parameter for, a wrong shape. */
static void test_gv_tensor_errors(void **state)
{
	(void)state;
	tm_model *m = tm_glm4v_old(1);
	tm_remove(m, V "boi");
	fx_refused(m, GV_CFG(""), WT_ENOTFOUND, "transformer.vision.boi", "missing");
	m = tm_glm4v_old(1);
	tm_remove(m, UP);
	fx_refused(m, GV_CFG(""), WT_ENOTFOUND, "dense_h_to_4h", "missing");
	m = tm_glm4v_old(1);
	tm_remove(m, QKVB);
	fx_refused(m, GV_CFG(""), WT_ENOTFOUND, "query_key_value.bias", "missing");
	m = tm_glm4v_old(1);
	tm_add2(m, A "linear_proj.bias", HID, 0);
	fx_refused(m, GV_CFG(""), WT_EUNSUPPORTED, "linear_proj.linear_proj.bias", "unknown");
	m = tm_glm4v_old(1);
	tm_remove(m, CONV);
	add_conv(m, CONV, HID, VE, 3);
	fx_refused(m, GV_CFG(""), WT_ESHAPE, "conv.weight", "[128, 64, 2, 2]");
	m = tm_glm4v_old(1);
	tm_remove(m, V "patch_embedding.position_embedding.weight");
	tm_add2(m, V "patch_embedding.position_embedding.weight", 4, VE);
	fx_refused(m, GV_CFG(""), WT_ESHAPE, "position_embedding", "[5, 64]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gv_slices),
	    cmocka_unit_test(test_gv_quant),
	    cmocka_unit_test(test_gv_coverage_defaults),
	    cmocka_unit_test(test_gv_config_errors),
	    cmocka_unit_test(test_gv_tensor_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
