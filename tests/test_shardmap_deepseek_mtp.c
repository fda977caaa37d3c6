/*
 * test_shardmap_deepseek_mtp.c — the DeepSeek MTP draft (deepseek_mtp: DeepSeekMTPModel, the
 * name vLLM's speculative config gives DeepSeek-V3's config) cut as vLLM's deepseek_mtp.py loads
 * it from the target's checkpoint: only the layers num_hidden_layers .. + num_nextn_predict_layers
 * - 1; each one's decoder layer under model.layers.N.mtp_block., byte for byte what the
 * deepseek_v3 family serves for the same layer; enorm / hnorm / shared_head.norm whole, eh_proj
 * [hid, 2 hid] whole and never quantized, shared_head.head by padded vocabulary rows, the first
 * MTP layer's embed_tokens as model.embed_tokens (the later ones' skipped); every other tensor
 * skipped. Hand slices at TP 2 / 4 and TP 2 x EP 2, two MTP layers, int8-channel / fp8-channel,
 * an FP8-block source, coverage TP 1..8 with EP, the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0317ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_mtp.h"

/* tm_deepseek's V3: hid 256, V 1000, layers 0 (dense) and 1 (MoE), layer 2 the MTP layer. */
#define HID 256
#define V   1000
#define L2  "model.layers.2."
#define MB2 "model.layers.2.mtp_block."

static const mtp_dims D = {HID, V, 1024};

/* cfg: V3's (v3) named DeepSeekMTPModel with num_nextn_predict_layers `n` (NULL: none) and
 * `keys` appended. */
static void ds_mtp_cfg(char *out, size_t cap, const char *v3, const char *n, const char *keys)
{
	mtp_cfg(out, cap, v3, "DeepseekV3ForCausalLM", "DeepSeekMTPModel", n, keys);
}

/* A DeepSeek-V3 MoE decoder layer i (tm_deepseek's layer 1 sizes), BF16. */
static void ds_moe_layer(tm_model *m, int i)
{
	char b[200];
	static const fx_leaf lv[] = {
	    {"input_layernorm.weight", HID, 0},
	    {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_a_proj.weight", 128, HID},
	    {"self_attn.q_a_layernorm.weight", 128, 0},
	    {"self_attn.q_b_proj.weight", 512, 128},
	    {"self_attn.kv_a_proj_with_mqa.weight", 96, HID},
	    {"self_attn.kv_a_layernorm.weight", 64, 0},
	    {"self_attn.kv_b_proj.weight", 512, 64},
	    {"self_attn.o_proj.weight", HID, 256},
	    {"mlp.gate.weight", 4, HID},
	    {"mlp.shared_experts.gate_proj.weight", 256, HID},
	    {"mlp.shared_experts.up_proj.weight", 256, HID},
	    {"mlp.shared_experts.down_proj.weight", HID, 256},
	};
	for (size_t k = 0; k < sizeof(lv) / sizeof(lv[0]); k++) {
		tm_fmt(b, sizeof(b), TM_L, i, lv[k].leaf);
		tm_add2(m, b, lv[k].n, lv[k].k);
	}
	tm_fmt(b, sizeof(b), TM_L, i, "mlp.gate.e_score_correction_bias");
	tm_add(m, b, WT_F32, 1, 4, 0, 0);
	tm_experts(m, i, "mlp.experts.", 4, 256, HID, "gate_proj", "up_proj", "down_proj");
}

enum {
	MT_NO_EMB = 1 << 0, /* layer 2 without embed_tokens */
	MT_TWO = 1 << 1,    /* a second MTP layer 3 (with its own embed_tokens) */
	MT_EH_F8 = 1 << 2,  /* eh_proj as tm_deepseek stores it (FP8 in an FP8 model) */
};

/* layer i's MTP modules: tm_deepseek's FP8 eh_proj replaced by a BF16 one unless kept */
static void mtp_own(tm_model *m, int i, int fl)
{
	char b[200], sc[200];
	tm_fmt(b, sizeof(b), TM_L, i, "eh_proj.weight");
	tm_fmt(sc, sizeof(sc), TM_L, i, "eh_proj.weight_scale_inv");
	if (tm_find(m, sc) >= 0 && !(fl & MT_EH_F8)) {
		tm_remove(m, b);
		tm_remove(m, sc);
	}
	mtp_own_add(m, i, &D, !(i == 2 && (fl & MT_NO_EMB)));
}

/* DeepSeek-V3's release as tm_deepseek builds it (fp8: FP8 block), its MTP layer 2 whole, with
 * `fl`; cfg the DeepSeekMTPModel config with num_nextn_predict_layers n and `keys`. */
static tm_model *tm_mtp(int fp8, int fl, const char *n, const char *keys, char *cfg, size_t cap)
{
	char v3[1024];
	tm_model *m = tm_deepseek(SEED, fp8, v3, sizeof(v3));
	ds_mtp_cfg(cfg, cap, v3, n, keys);
	mtp_own(m, 2, fl);
	if (fl & MT_TWO) {
		ds_moe_layer(m, 3);
		mtp_own(m, 3, fl);
	}
	return m;
}

/* DeepSeek-V3 with num_hidden_layers 3 over the same tensors minus the MTP modules: its layer 2
 * is the MTP layer's decoder layer. */
static tm_model *tm_v3_of(char *cfg, size_t cap, int fp8)
{
	char v3[1024], c2[1200];
	tm_model *m = tm_mtp(fp8, 0, "1", "", c2, sizeof(c2));
	tm_free(tm_deepseek(SEED, fp8, v3, sizeof(v3))); /* V3's config only */
	static const char *const own[] = {"enorm.weight",
	                                  "hnorm.weight",
	                                  "shared_head.norm.weight",
	                                  "eh_proj.weight",
	                                  "shared_head.head.weight",
	                                  "embed_tokens.weight"};
	for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
		char b[200];
		tm_fmt(b, sizeof(b), TM_L, 2, own[k]);
		tm_remove(m, b);
	}
	const char *h = strstr(v3, "\"num_hidden_layers\":2");
	assert_non_null(h);
	snprintf(cfg, cap, "%.*s\"num_hidden_layers\":3%s", (int)(h - v3), v3, h + 21);
	return m;
}

/* What vLLM's load_weights skips: the layers below num_hidden_layers, the top-level tensors. */
static const char *const skipped[] = {
    "model.embed_tokens.weight",
    "model.norm.weight",
    "lm_head.weight",
    "model.layers.0.self_attn.q_a_proj.weight",
    "model.layers.0.mlp.gate_proj.weight",
    "model.layers.1.mlp.experts.3.down_proj.weight",
    "model.layers.1.input_layernorm.weight",
};

/* TP 2, TP 4, TP 2 x EP 2: the decoder layer byte for byte V3's layer 2 under mtp_block., the
 * MTP modules, the first MTP layer's embed_tokens as model.embed_tokens; the rest skipped. */
static void test_mtp_slices(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {4, 1}, {2, 2}};
	for (size_t k = 0; k < 3; k++) {
		char cfg[1200], v3[1200];
		fx f, g;
		uint32_t T = lays[k][0];
		fx_open(&f, tm_mtp(0, 0, "1", "", cfg, sizeof(cfg)), cfg, T, lays[k][1], 0, true);
		assert_string_equal(shardmap_family(f.p), "deepseek_mtp");
		fx_open(&g, tm_v3_of(v3, sizeof(v3), 0), v3, T, lays[k][1], 0, true);
		for (size_t s = 0; s < sizeof(skipped) / sizeof(skipped[0]); s++)
			assert_true(fx_skipped(&f, skipped[s]));
		for (uint32_t r = 0; r < T * lays[k][1]; r++) { /* tp_rank r % T */
			mtp_block_same(&f, &g, r, 2, 6);
			mtp_own_is(&f, r, T, 2, &D);
			mtp_vocab_at(&f, r, T, &D, "model.embed_tokens.weight",
			             L2 "embed_tokens.weight");
			assert_true(tm_ix(f.p, r, L2 "embed_tokens.weight") < 0);
			assert_true(tm_ix(f.p, r, MB2 "enorm.weight") < 0);
		}
		/* the MLA and MoE under mtp_block., as V3's names them */
		shp(&f, 1, MB2 "self_attn.q_b_proj.weight", 2, 512 / T, 128, 0);
		shp(&f, 0, MB2 "self_attn.q_a_proj.weight", 2, 128, HID, 0);
		repl_from(&f, 0, MB2 "mlp.gate.weight", L2 "mlp.gate.weight");
		fx_close(&f);
		fx_close(&g);
	}
}

/* num_nextn_predict_layers 2: layers 2 and 3 both cut (the second's decoder layer under
 * model.layers.3.mtp_block.), its embed_tokens skipped (vLLM loads the first MTP layer's only);
 * a layer past them (4) and a name with a leading zero (03) skipped as vLLM skips them. */
static void test_mtp_two_layers(void **state)
{
	(void)state;
	char cfg[1200];
	tm_model *m = tm_mtp(0, MT_TWO, "2", "", cfg, sizeof(cfg));
	tm_add2(m, "model.layers.4.enorm.weight", HID, 0);
	tm_add2(m, "model.layers.03.enorm.weight", HID, 0); /* no layer of vLLM's: skipped */
	fx f;
	fx_open(&f, m, cfg, 2, 1, 0, true);
	assert_true(fx_skipped(&f, "model.layers.3.embed_tokens.weight"));
	assert_true(fx_skipped(&f, "model.layers.4.enorm.weight"));
	assert_true(fx_skipped(&f, "model.layers.03.enorm.weight"));
	assert_false(fx_skipped(&f, "model.layers.2.embed_tokens.weight"));
	for (uint32_t r = 0; r < 2; r++) {
		mtp_own_is(&f, r, 2, 2, &D);
		mtp_own_is(&f, r, 2, 3, &D);
		mtp_vocab_at(&f, r, 2, &D, "model.embed_tokens.weight", L2 "embed_tokens.weight");
		repl_from(&f, r, "model.layers.3.mtp_block.mlp.gate.weight",
		          "model.layers.3.mlp.gate.weight");
		cols_of(&f, r, 2, "model.layers.3.mtp_block.self_attn.o_proj.weight",
		        "model.layers.3.self_attn.o_proj.weight", HID, 256);
		shp(&f, r, "model.layers.3.mtp_block.mlp.experts.w13_weight", 3, 4, 256, HID);
	}
	fx_close(&f);
}

static const char *const mtp_keep[] = {L2 "eh_proj.weight",          L2 "enorm.weight",
                                       L2 "shared_head.head.weight", "model.embed_tokens.weight",
                                       MB2 "mlp.gate.weight",        MB2 "input_layernorm.weight"};
static const char *const mtp_quant[] = {
    MB2 "self_attn.q_a_proj.weight",  MB2 "self_attn.q_b_proj.weight",
    MB2 "self_attn.kv_b_proj.weight", MB2 "self_attn.o_proj.weight",
    MB2 "mlp.experts.w13_weight",     MB2 "mlp.shared_experts.down_proj.weight"};

/* int8-channel TP 2: the decoder layer's Linears quantized as V3's (rank 1's q_b_proj codes),
 * eh_proj BF16 and byte for byte the source (an nn.Linear no quant_config reaches),
 * shared_head.head and the embedding unquantized; fp8-channel TP 4 alike. */
static void test_mtp_quant(void **state)
{
	(void)state;
	char cfg[1200];
	fx f;
	fx_open_quant(&f, tm_mtp(0, 0, "1", "", cfg, sizeof(cfg)), cfg, 2, WT_QUANT_INT8_CHANNEL,
	              WT_BF16, FX_N(mtp_keep), FX_N(mtp_quant));
	fx_rows_int8_is(&f, 1, MB2 "self_attn.q_b_proj.weight", 0, L2 "self_attn.q_b_proj.weight",
	                256, 256, 128);
	repl(&f, 1, L2 "eh_proj.weight");
	assert_true(tm_ix(f.p, 1, L2 "eh_proj.weight_scale") < 0);
	mtp_vocab_at(&f, 1, 2, &D, L2 "shared_head.head.weight", L2 "shared_head.head.weight");
	fx_close(&f);
	fx_open_quant(&f, tm_mtp(0, 0, "1", "", cfg, sizeof(cfg)), cfg, 4, WT_QUANT_FP8_CHANNEL,
	              WT_BF16, FX_N(mtp_keep), FX_N(mtp_quant));
	repl(&f, 3, L2 "eh_proj.weight");
	fx_close(&f);
}

/* The FP8-block release kept FP8-block at TP 2: the decoder layer byte for byte V3's (its
 * weight_scale_inv served as weight_scale), eh_proj BF16 as stored; an FP8 eh_proj (with its
 * weight_scale_inv) is dequantized to BF16 whole, never served quantized. */
static void test_mtp_fp8_source(void **state)
{
	(void)state;
	char cfg[1200], v3[1200];
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_BLOCK;
	fx f, g;
	fx_open_l(&f, tm_mtp(1, 0, "1", "", cfg, sizeof(cfg)), cfg, &l, true);
	fx_open_l(&g, tm_v3_of(v3, sizeof(v3), 1), v3, &l, true);
	for (uint32_t r = 0; r < 2; r++) {
		mtp_block_same(&f, &g, r, 2, 6);
		repl(&f, r, L2 "eh_proj.weight");
		assert_int_equal(info(&f, r, MB2 "self_attn.kv_b_proj.weight")->dtype, WT_F8_E4M3);
	}
	fx_close(&f);
	fx_close(&g);
	fx_open_l(&f, tm_mtp(1, MT_EH_F8, "1", "", cfg, sizeof(cfg)), cfg, &l, true);
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, L2 "eh_proj.weight", 2, HID, 2 * HID, 0);
		assert_int_equal(info(&f, r, L2 "eh_proj.weight")->dtype, WT_BF16);
		assert_true(tm_ix(f.p, r, L2 "eh_proj.weight_scale") < 0);
	}
	fx_close(&f);
}

static void test_mtp_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}, {4, 2}, {8, 4}};
	char cfg[1200];
	coverage(tm_mtp(0, MT_TWO, "2", "", cfg, sizeof(cfg)), cfg, 8, lays, 7);
}

/* vLLM's _rewrite_spec_layer_name on runtime names. */
static void test_mtp_rename(void **state)
{
	(void)state;
	static const char *const io[][2] = {
	    {"model.layers.61.self_attn.kv_b_proj.weight",
	     "model.layers.61.mtp_block.self_attn.kv_b_proj.weight"},
	    {"model.layers.61.enorm.weight", "model.layers.61.enorm.weight"},
	    {"model.layers.62.shared_head.head.weight", "model.layers.62.shared_head.head.weight"},
	    {"model.layers.61.eh_proj.weight", "model.layers.61.eh_proj.weight"},
	    {"model.embed_tokens.weight", "model.embed_tokens.weight"},
	    {"model.layers.7.mlp.experts.w13_weight",
	     "model.layers.7.mtp_block.mlp.experts.w13_weight"},
	};
	for (size_t k = 0; k < sizeof(io) / sizeof(io[0]); k++) {
		char b[200];
		snprintf(b, sizeof(b), "%s", io[k][0]);
		assert_true(shardmap_mtp_rename(b, sizeof(b)));
		assert_string_equal(b, io[k][1]);
	}
	char small[32] = "model.layers.1.mlp.gate.weight";
	assert_false(shardmap_mtp_rename(small, sizeof(small)));
}

/* The loader's: num_nextn_predict_layers missing, null, 0, not an integer; V3.2's index_topk. */
static void test_mtp_config_refusals(void **state)
{
	(void)state;
	char cfg[1200];
	static const struct {
		const char *n, *want;
	} bad[] = {
	    {NULL, "needs num_nextn_predict_layers"},
	    {"null", "needs num_nextn_predict_layers"},
	    {"0", ">= 1"},
	    {"-1", ">= 1"},
	    {"\"1\"", "not an integer"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		fx_refused(tm_mtp(0, 0, bad[k].n, "", cfg, sizeof(cfg)), cfg, WT_ECORRUPT,
		           "num_nextn_predict_layers", bad[k].want);
	fx_refused(tm_mtp(0, 0, "1", ",\"index_topk\":2048", cfg, sizeof(cfg)), cfg,
	           WT_EUNSUPPORTED, "index_topk", "V3.2");
}

/* The planner's: no MTP layer in the checkpoint; a missing MTP module (each names itself); the
 * first MTP layer's embed_tokens missing; wrong shapes; a tensor the layer has no parameter for;
 * V3's MLA keys missing; tp_size not dividing the heads, ep_size past the experts. */
static void test_mtp_refusals(void **state)
{
	(void)state;
	char cfg[1200];
	tm_model *m = tm_mtp(0, 0, "1", "", cfg, sizeof(cfg));
	mtp_remove_prefix(m, L2);
	fx_refused(m, cfg, WT_ENOTFOUND, "model.layers.2.*", "no MTP layer");
	static const char *const need[] = {"enorm.weight",
	                                   "hnorm.weight",
	                                   "eh_proj.weight",
	                                   "shared_head.norm.weight",
	                                   "shared_head.head.weight",
	                                   "self_attn.kv_b_proj.weight",
	                                   "mlp.gate.weight"};
	for (size_t k = 0; k < sizeof(need) / sizeof(need[0]); k++) {
		char b[200];
		m = tm_mtp(0, 0, "1", "", cfg, sizeof(cfg));
		tm_fmt(b, sizeof(b), TM_L, 2, need[k]);
		tm_remove(m, b);
		fx_refused(m, cfg, WT_ENOTFOUND, b, "missing");
	}
	fx_refused(tm_mtp(0, MT_NO_EMB, "1", "", cfg, sizeof(cfg)), cfg, WT_ENOTFOUND,
	           L2 "embed_tokens.weight", "shared model.embed_tokens");
	m = tm_mtp(0, 0, "1", "", cfg, sizeof(cfg));
	tm_remove(m, L2 "eh_proj.weight");
	tm_add2(m, L2 "eh_proj.weight", HID, HID);
	fx_refused(m, cfg, WT_ESHAPE, L2 "eh_proj.weight", "[256, 512]");
	m = tm_mtp(0, 0, "1", "", cfg, sizeof(cfg));
	tm_remove(m, L2 "shared_head.head.weight");
	tm_add2(m, L2 "shared_head.head.weight", V - 1, HID);
	fx_refused(m, cfg, WT_ESHAPE, L2 "shared_head.head.weight", "1000");
	m = tm_mtp(0, 0, "1", "", cfg, sizeof(cfg));
	tm_add2(m, L2 "eh_proj.bias", HID, 0);
	fx_refused(m, cfg, WT_EUNSUPPORTED, L2 "eh_proj.bias", "unknown tensor");
	m = tm_mtp(0, 0, "1", "", cfg, sizeof(cfg));
	char *kv = strstr(cfg, "\"kv_lora_rank\":64,");
	assert_non_null(kv);
	memmove(kv, kv + 18, strlen(kv + 18) + 1);
	fx_refused(m, cfg, WT_ESHAPE, "kv_lora_rank", "DeepSeek-V3");
	fx_refused_tp(tm_mtp(0, 0, "1", "", cfg, sizeof(cfg)), cfg, 3, WT_ELAYOUT, "tp_size 3",
	              "8");
	fx_refused_tp_ep(tm_mtp(0, 0, "1", "", cfg, sizeof(cfg)), cfg, 1, 8, WT_ELAYOUT,
	                 "ep_size 8", "4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mtp_slices),          cmocka_unit_test(test_mtp_two_layers),
	    cmocka_unit_test(test_mtp_quant),           cmocka_unit_test(test_mtp_fp8_source),
	    cmocka_unit_test(test_mtp_coverage),        cmocka_unit_test(test_mtp_rename),
	    cmocka_unit_test(test_mtp_config_refusals), cmocka_unit_test(test_mtp_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
