/*
 * test_shardmap_hcx_v2.c — HyperCLOVAX-SEED-Think (HCXVisionV2ForCausalLM: naver-hyperclovax/
 * HyperCLOVAX-SEED-Think-32B, model_type vlm; docs/format.md section 2.7, HyperCLOVAX), cut as
 * vLLM's hyperclovax_vision_v2.py / hyperclovax.py / qwen2_5_vl.py load it: the language model
 * (text_config hyperclovax: the llama rows and, with use_post_norm, post_norm1 / post_norm2),
 * Qwen2.5-VL's tower of vision_config, the Linear mm_projector, under the release's prefixes
 * (model.language_model., model.vision_model., model.mm_projector.) or vLLM's own names. Every
 * rank is Qwen2.5-VL's of the same weights byte for byte under the checkpoint's names, plus the
 * post norms and the projector whole (plain TP 2 and 4 with hand slices of layer 1 and the
 * tower's gated MLP, int8-channel TP 2); the two layouts give the same ranks;
 * model.discrete_vision_model.* skipped; coverage at TP 1, 2, 4, 8; the config (HyperCLOVAXConfig's
 * and Qwen2_5_VLVisionConfig's defaults, use_post_norm); the refusals. Plan sizes are small: no
 * fixture. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x4c52ull
#include "test_shardmap_fx.h"
#include "test_shardmap_qvl25.h"

/* LM: hid 128, H 8, KV 2, d 16, I 256, V 256, L 2, q/k/v biases (attention_bias), untied.
 * Vision (Qwen2.5-VL's): depth 2, width 64, 8 heads, gated MLP 96, merger 256 (merge 2) out 128,
 * patch embed [64, 3, 2, 2, 2]. */
#define HID 128
#define I   256
#define VE  64
#define VI  96
#define VM  256

#define LM_KEYS                                                                                    \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":256,\"vocab_size\":256,\"num_hidden_layers\":2"
#define VKEYS_AT(out)                                                                              \
	"\"vision_config\":{\"model_type\":\"qwen2_5_vl\",\"depth\":2,\"hidden_size\":64,"         \
	"\"intermediate_size\":96,\"num_heads\":8,\"out_hidden_size\":" out ",\"patch_size\":2,"   \
	"\"temporal_patch_size\":2,\"spatial_merge_size\":2,\"in_chans\":3,\"window_size\":112,"   \
	"\"fullatt_block_indexes\":[1]}"
#define VKEYS VKEYS_AT("128")
/* Qwen2.5-VL's 4.x config.json: the same weights */
#define QVL                                                                                        \
	"{\"architectures\":[\"Qwen2_5_VLForConditionalGeneration\"],\"model_type\":\"qwen2_5_"    \
	"vl\"," LM_KEYS ",\"rope_scaling\":{\"type\":\"mrope\",\"mrope_section\":[2,3,3]}," VKEYS  \
	"}"
/* HyperCLOVAX-SEED-Think's: text_config `text`, then `vis` */
#define HX_T(text, vis)                                                                            \
	"{\"architectures\":[\"HCXVisionV2ForCausalLM\"],\"model_type\":\"vlm\","                  \
	"\"mm_projector_type\":\"linear\",\"text_config\":{" text "}" vis "}"
#define HX_TEXT(post)                                                                              \
	"\"model_type\":\"hyperclovax\",\"attention_bias\":true,\"use_post_norm\":" post           \
	",\"attention_multiplier\":0.0884,\"residual_multiplier\":1.0," LM_KEYS
#define HX      HX_T(HX_TEXT("true"), "," VKEYS)
#define HX_NOPN HX_T(HX_TEXT("false"), "," VKEYS)

/* HX_QVL: Qwen2.5-VL's 4.x names (no post norms, no projector); HX_REL: the release's
 * (model.language_model.*, model.vision_model.*, model.mm_projector.*); HX_VLLM: vLLM's own
 * (language_model.*, visual.*, mm_projector.*); HX_MIXED: the release's but the tower under
 * visual. */
typedef enum { HX_QVL, HX_REL, HX_VLLM, HX_MIXED } lay_t;

/* Checkpoint name of the Qwen2.5-VL-style name c (model.*, lm_head.*, visual.*,
 * mm_projector.*) in layout y. */
static void ck_name(char *b, size_t n, const char *c, lay_t y)
{
	bool lm = strncmp(c, "model.", 6) == 0 || strncmp(c, "lm_head.", 8) == 0,
	     vis = strncmp(c, "visual.", 7) == 0;
	if (y == HX_QVL)
		snprintf(b, n, "%s", c);
	else if (lm)
		snprintf(b, n, "%slanguage_model.%s", y == HX_VLLM ? "" : "model.", c);
	else if (vis && (y == HX_REL))
		snprintf(b, n, "model.vision_model.%s", c + 7);
	else
		snprintf(b, n, "%s%s", y == HX_REL || (y == HX_MIXED && !vis) ? "model." : "", c);
}

static void add(tm_model *m, lay_t y, const char *c, int64_t a, int64_t b)
{
	char n[200];
	ck_name(n, sizeof(n), c, y);
	tm_add2(m, n, a, b);
}

static void add_lay(tm_model *m, int layout, const char *c, int64_t a, int64_t b)
{
	add(m, (lay_t)layout, c, a, b);
}

/* The model in layout y (Qwen2.5-VL's tensors first, so the same values in every layout): post
 * norms with `post`, the projector, unless y is HX_QVL. */
static tm_model *hx_model(lay_t y, bool post)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	qvl25_add(m, (int)y, add_lay, true, &(qvl25_dims){HID, I, VE, VI, VM});
	if (y == HX_QVL) /* Qwen2.5-VL's tensors first: the same values in every layout */
		return m;
	char b[200];
	for (int l = 0; post && l < 2; l++)
		for (int k = 1; k <= 2; k++) {
			snprintf(b, sizeof(b), "model.layers.%d.post_norm%d.weight", l, k);
			add(m, y, b, HID, 0);
		}
	add(m, y, "mm_projector.weight", HID, HID);
	add(m, y, "mm_projector.bias", HID, 0);
	return m;
}

#define TL1 "model.language_model.model.layers.1."
#define VB1 "model.vision_model.blocks.1."
#define PJ  "model.mm_projector."

static void rel_name(char *b, size_t n, const char *c)
{
	ck_name(b, n, c, HX_REL);
}

/* vLLM's name c as the release's: model. before it, vision_model. for visual. */
static void vllm_to_rel(char *b, size_t n, const char *c)
{
	if (strncmp(c, "visual.", 7) == 0)
		snprintf(b, n, "model.vision_model.%s", c + 7);
	else
		snprintf(b, n, "model.%s", c);
}

/* Every tensor of Qwen2.5-VL q's rank r is t's under the release name; t has `extra` more
 * (the post norms and the projector). */
static void same_as_qvl(const fx *q, const fx *t, uint32_t r, size_t extra)
{
	assert_string_equal(shardmap_family(t->p), "hcx_vision");
	size_t nq = shardmap_rank_n_tensors(q->p, r);
	for (size_t i = 0; i < nq; i++) {
		const sm_out_info *u = shardmap_rank_tensor(q->p, r, i);
		char n[200];
		rel_name(n, sizeof(n), u->name);
		const sm_out_info *v = info(t, r, n);
		assert_int_equal(u->dtype, v->dtype);
		assert_int_equal(u->nbytes, v->nbytes);
		if (memcmp(q->pr->b[r][i], out_bytes(t, r, n), u->nbytes) != 0)
			fail_msg("rank %u '%s' differs from Qwen2.5-VL's '%s'", r, n, u->name);
	}
	assert_int_equal(shardmap_rank_n_tensors(t->p, r), nq + extra);
}

/* TP 2 and 4: layer 1's q/k/v rows (and biases), o_proj columns, gate_up rows and down_proj
 * columns by hand under the checkpoint's names, the post norms and the projector whole; the
 * tower's gated MLP; the rest as Qwen2.5-VL's. */
static void test_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		uint32_t T = tps[i];
		fx t, q;
		fx_open(&t, hx_model(HX_REL, true), HX, T, 1, 0, true);
		fx_open(&q, hx_model(HX_QVL, false), QVL, T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			fx_attn_is(&t, r, T, TL1 "self_attn.", "o_proj.weight", 8, 2, 16, HID);
			fx_qkv_is(&t, r, T, TL1 "self_attn.qkv_proj.bias",
			          TL1 "self_attn.q_proj.bias", TL1 "self_attn.k_proj.bias",
			          TL1 "self_attn.v_proj.bias", 8, 2, 16);
			fx_mlp_is(&t, r, T, TL1 "mlp.", I, HID);
			fx_gate_up_is(&t, r, T, VB1 "mlp.gate_up_proj.weight",
			              VB1 "mlp.gate_proj.weight", VB1 "mlp.up_proj.weight", VI);
			cols_of(&t, r, T, VB1 "mlp.down_proj.weight", VB1 "mlp.down_proj.weight",
			        VE, VI);
			repl(&t, r, TL1 "post_norm1.weight");
			repl(&t, r, TL1 "post_norm2.weight");
			repl(&t, r, PJ "weight");
			repl(&t, r, PJ "bias");
			same_as_qvl(&q, &t, r, 6);
		}
		fx_close(&t);
		fx_close(&q);
	}
}

/* vLLM's own names give the release's ranks (served under each checkpoint's names);
 * model.discrete_vision_model.* is skipped (the mapper's None); without use_post_norm no post
 * norm is asked. */
static void test_names(void **state)
{
	(void)state;
	fx a, b;
	tm_model *m = hx_model(HX_REL, true);
	tm_add2(m, "model.discrete_vision_model.encoder.weight", 8, 8);
	fx_open(&a, m, HX, 2, 1, 0, true);
	fx_open(&b, hx_model(HX_VLLM, true), HX, 2, 1, 0, true);
	assert_true(fx_skipped(&a, "model.discrete_vision_model.encoder.weight"));
	for (uint32_t r = 0; r < 2; r++) {
		assert_non_null(
		    info(&b, r, "language_model.model.layers.0.self_attn.qkv_proj.weight"));
		assert_non_null(info(&b, r, "visual.blocks.0.attn.qkv.weight"));
		fx_same_rank_renamed(&b, &a, r, vllm_to_rel, "vLLM's names");
	}
	fx_close(&a);
	fx_close(&b);
	fx_open(&a, hx_model(HX_REL, false), HX_NOPN, 2, 1, 0, true);
	fx_open(&b, hx_model(HX_QVL, false), QVL, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		same_as_qvl(&b, &a, r, 2);
	fx_close(&a);
	fx_close(&b);
	assert_string_equal(shardmap_family_find("HCXVisionV2ForCausalLM", NULL)->name,
	                    "hcx_vision");
}

/* int8-channel TP 2: Qwen2.5-VL's ranks under the release's names; the projector and the post
 * norms never quantized. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx t, q;
	fx_open_l(&t, hx_model(HX_REL, true), HX, &l, true);
	fx_open_l(&q, hx_model(HX_QVL, false), QVL, &l, true);
	for (uint32_t r = 0; r < 2; r++) {
		same_as_qvl(&q, &t, r, 6);
		fx_cols_int8_is(&t, r, 2, TL1 "self_attn.o_proj.weight", HID, 128);
		repl(&t, r, PJ "weight");
		assert_int_equal(info(&t, r, PJ "weight")->dtype, WT_BF16);
		assert_int_equal(info(&t, r, TL1 "post_norm1.weight")->dtype, WT_BF16);
	}
	fx_close(&t);
	fx_close(&q);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(hx_model(HX_REL, true), HX, 2, lays, 4);
}

/* The loader: text_config as HyperCLOVAXConfig (its defaults), use_post_norm read (not for
 * llama), the tower from vision_config (Qwen2_5_VLVisionConfig's defaults). */
static void test_config(void **state)
{
	(void)state;
	ckpt_config a;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(HX, strlen(HX), &a, &err), WT_OK);
	assert_string_equal(a.architecture, "HCXVisionV2ForCausalLM");
	assert_string_equal(a.lm_model_type, "hyperclovax");
	assert_string_equal(a.v_model_type, "qwen2_5_vl");
	assert_true(a.hidden_size == HID && a.num_hidden_layers == 2 &&
	            a.num_key_value_heads == 2 && a.attention_bias && a.hcx_post_norm &&
	            a.has_vision && a.v_depth == 2 && a.v_hidden_size == VE &&
	            a.v_intermediate_size == VI && a.v_out_hidden_size == HID &&
	            !a.tie_word_embeddings);
	ckpt_config_clear(&a);
	static const char d[] = HX_T("\"model_type\":\"hyperclovax\"", "");
	assert_int_equal(ckpt_config_parse(d, strlen(d), &a, &err), WT_OK);
	assert_true(a.hidden_size == 4096 && a.intermediate_size == 11008 &&
	            a.num_hidden_layers == 32 && a.num_key_value_heads == 32 &&
	            a.vocab_size == 32000 && !a.hcx_post_norm && !a.attention_bias &&
	            a.v_depth == 32 && a.v_hidden_size == 3584 && a.v_num_heads == 16 &&
	            a.v_out_hidden_size == 3584);
	ckpt_config_clear(&a);
	static const char ll[] = HX_T("\"model_type\":\"llama\",\"use_post_norm\":true", "");
	assert_int_equal(ckpt_config_parse(ll, strlen(ll), &a, &err), WT_OK);
	assert_string_equal(a.lm_model_type, "llama");
	assert_false(a.hcx_post_norm);
	ckpt_config_clear(&a);
	/* tied by text_config alone (vLLM builds the language model of it) */
	fx t;
	fx_open(&t, hx_model(HX_REL, true),
	        HX_T(HX_TEXT("true") ",\"tie_word_embeddings\":true", "," VKEYS), 2, 1, 0, true);
	assert_true(fx_skipped(&t, "model.language_model.lm_head.weight"));
	fx_close(&t);
	fx_open(&t, hx_model(HX_REL, true),
	        "{\"tie_word_embeddings\":true,\"architectures\":[\"HCXVisionV2ForCausalLM\"],"
	        "\"model_type\":\"vlm\",\"text_config\":{" HX_TEXT("true") "}," VKEYS "}",
	        2, 1, 0, true);
	assert_false(fx_skipped(&t, "model.language_model.lm_head.weight"));
	fx_close(&t);
}

/* config.json refused by the loader: the code and words of its message. */
static void cfg_refused(const char *cfg, int code, const char *a, const char *b)
{
	ckpt_config c = {0};
	wt_errbuf err = {0};
	int rv = ckpt_config_parse(cfg, strlen(cfg), &c, &err);
	printf("refused (%s): %s\n", wt_errname(rv), err.msg);
	assert_int_equal(rv, code);
	if (!strstr(err.msg, a) || !strstr(err.msg, b))
		fail_msg("'%s' lacks '%s' or '%s'", err.msg, a, b);
	ckpt_config_clear(&c);
}

static void test_errors(void **state)
{
	(void)state;
	cfg_refused(HX_T("\"model_type\":\"gpt2\"", ""), WT_EUNSUPPORTED,
	            "text_config.model_type 'gpt2'", "hyperclovax");
	cfg_refused(HX_T("\"hidden_size\":128", ""), WT_ECORRUPT, "text_config.model_type",
	            "missing");
	cfg_refused(HX_T("\"model_type\":\"hyperclovax\",\"use_post_norm\":3", ""), WT_ECORRUPT,
	            "text_config.use_post_norm", "post_norm1");
	/* post norms against use_post_norm, either way */
	fx_refused(hx_model(HX_REL, true), HX_NOPN, WT_EUNSUPPORTED, "post_norm1.weight",
	           "use_post_norm");
	fx_refused(hx_model(HX_REL, false), HX, WT_ENOTFOUND, "post_norm1.weight", "use_post_norm");
	/* the merger out to another width than the language model's */
	fx_refused(hx_model(HX_REL, true), HX_T(HX_TEXT("true"), "," VKEYS_AT("64")),
	           WT_EUNSUPPORTED, "out_hidden_size 64", "hidden_size 128");
	/* the release's names with the tower under vLLM's visual. */
	fx_refused(hx_model(HX_MIXED, true), HX, WT_EUNSUPPORTED, "visual.",
	           "mixes two name layouts");
	/* Qwen2.5-VL's names (vLLM's mapper reads lm_head.* and model.layers.* as no parameter) */
	fx_refused(hx_model(HX_QVL, false), HX_NOPN, WT_EUNSUPPORTED, "lm_head.weight",
	           "unknown tensor");
	fx_refused_tp(hx_model(HX_REL, true), HX, 16, WT_ELAYOUT, "tp_size 16", "");
	/* a tower of no block (the loader's), heads not splitting its width; the projector missing
	 */
	fx_refused(hx_model(HX_REL, true),
	           HX_T(HX_TEXT("true"), ",\"vision_config\":{\"model_type\":\"qwen2_5_vl\","
	                                 "\"depth\":0,\"hidden_size\":64}"),
	           WT_ECORRUPT, "vision_config", "'depth' = 0");
	fx_refused(hx_model(HX_REL, true),
	           HX_T(HX_TEXT("true"), ",\"vision_config\":{\"model_type\":\"qwen2_5_vl\","
	                                 "\"depth\":2,\"hidden_size\":64,\"num_heads\":7,"
	                                 "\"out_hidden_size\":128}"),
	           WT_ECORRUPT, "num_heads 7", "64");
	tm_model *m = hx_model(HX_REL, true);
	tm_remove(m, PJ "weight");
	tm_remove(m, PJ "bias");
	fx_refused(m, HX, WT_ENOTFOUND, "model.mm_projector.weight", "missing");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slices), cmocka_unit_test(test_names),
	    cmocka_unit_test(test_quant),  cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_config), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
