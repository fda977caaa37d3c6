/*
 * test_shardmap_glmasr.c — GLM-ASR (GlmAsrForConditionalGeneration, docs/format.md section
 * 2.7): the encoder `audio_tower.*` as vLLM's native GlmAsrEncoder builds it (q/k/v fused into
 * qkv_proj by heads, the bias [q_r; zeros; v_r] since k_proj has none, o_proj by columns,
 * mlp.fc1 by rows with its bias, mlp.fc2 by columns; those weights quantized; convs,
 * LayerNorms and the row-parallel biases whole; a stray embed_positions skipped), the
 * projector (linear_1 by rows with its bias, linear_2 by columns, both quantized), the
 * language model as Llama's (same bytes under `language_model.`), coverage at TP 1, 2, 4, 8,
 * GlmAsrConfig's / GlmAsrEncoderConfig's defaults and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x6a5bull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Encoder: hidden 32, 8 heads of 4,
 * intermediate 128 (4 x 32, as the release's), 2 layers, 8 mel bins. */
#define HID 64
#define AE  32
#define AI  128
#define MEL 8

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":8,\"intermediate_size\":128,"                      \
	"\"vocab_size\":128,\"num_hidden_layers\":1"
#define AUDIO_KEYS(heads, extra)                                                                   \
	",\"audio_config\":{\"model_type\":\"glmasr_encoder\",\"hidden_size\":32,"                 \
	"\"num_attention_heads\":" heads ",\"intermediate_size\":128,\"num_hidden_layers\":2,"     \
	"\"num_mel_bins\":8" extra "}}"
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"GlmAsrForConditionalGeneration\"],\"model_type\":"                  \
	"\"glmasr\"," top "\"text_config\":{" LM_KEYS(mt) text "}"
/* untied (LlamaConfig's default; the top level's true is not the text model's) */
static const char cfg_ga[] =
    CFG_HEAD("\"tie_word_embeddings\":true,", "llama", "") AUDIO_KEYS("8", "");
static const char cfg_text[] = "{\"architectures\":[\"LlamaForCausalLM\"]," LM_KEYS("llama") "}";

#define AT "audio_tower."
#define LM "language_model.model."
#define P1 "multi_modal_projector.linear_1."
#define P2 "multi_modal_projector.linear_2."

static const struct {
	const char *leaf;
	int64_t n, k;
} enc_layer[] = {
    {"self_attn.q_proj.weight", AE, AE},
    {"self_attn.q_proj.bias", AE, 0},
    {"self_attn.k_proj.weight", AE, AE},
    {"self_attn.v_proj.weight", AE, AE},
    {"self_attn.v_proj.bias", AE, 0},
    {"self_attn.o_proj.weight", AE, AE},
    {"self_attn.o_proj.bias", AE, 0},
    {"input_layernorm.weight", AE, 0},
    {"input_layernorm.bias", AE, 0},
    {"post_attention_layernorm.weight", AE, 0},
    {"post_attention_layernorm.bias", AE, 0},
    {"mlp.fc1.weight", AI, AE},
    {"mlp.fc1.bias", AI, 0},
    {"mlp.fc2.weight", AE, AI},
    {"mlp.fc2.bias", AE, 0},
};
static const char *const enc_whole[] = {AT "conv1.bias", AT "conv2.bias", AT "norm.weight",
                                        AT "norm.bias", P2 "bias"};

/* The Llama language model (lm_head when asked), then unless LAY_TEXT the encoder of
 * `layers` layers and the projector. */
static tm_model *ga_model(lay y, bool lm_head, int layers)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const struct {
		const char *leaf;
		int64_t n, k;
	} lmt[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.k_proj.weight", 16, HID},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.o_proj.weight", HID, 64},
	    {"mlp.gate_proj.weight", 128, HID},   {"mlp.up_proj.weight", 128, HID},
	    {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lmt) / sizeof(lmt[0]); k++) {
		snprintf(b, sizeof(b), "model.layers.0.%s", lmt[k].leaf);
		mm_add(m, y, b, lmt[k].n, lmt[k].k);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, MEL, 3);
	tm_add(m, AT "conv2.weight", WT_DTYPE_INVALID, 3, AE, AE, 3);
	for (int l = 0; l < layers; l++)
		for (size_t k = 0; k < sizeof(enc_layer) / sizeof(enc_layer[0]); k++) {
			snprintf(b, sizeof(b), AT "layers.%d.%s", l, enc_layer[k].leaf);
			tm_add2(m, b, enc_layer[k].n, enc_layer[k].k);
		}
	for (size_t k = 0; k < 4; k++)
		tm_add2(m, enc_whole[k], AE, 0);
	tm_add2(m, P1 "weight", 2 * HID, AI);
	tm_add2(m, P1 "bias", 2 * HID, 0);
	tm_add2(m, P2 "weight", HID, 2 * HID);
	tm_add2(m, P2 "bias", HID, 0);
	return m;
}

static void layer_is(const fx *f, uint32_t T, uint32_t r, int l)
{
	char n[200], a[200];
	int64_t ql = AE / T, il = AI / T;
	snprintf(n, sizeof(n), AT "layers.%d.self_attn.qkv_proj.weight", l);
	shp(f, r, n, 2, 3 * ql, AE, 0);
	static const char *const qkv[] = {"q", "k", "v"};
	for (int p = 0; p < 3; p++) {
		snprintf(a, sizeof(a), AT "layers.%d.self_attn.%s_proj.weight", l, qkv[p]);
		rows_at(f, r, n, p * ql, a, r * ql, ql);
	}
	snprintf(n, sizeof(n), AT "layers.%d.self_attn.qkv_proj.bias", l);
	shp(f, r, n, 1, 3 * ql, 0, 0);
	snprintf(a, sizeof(a), AT "layers.%d.self_attn.q_proj.bias", l);
	rows_at(f, r, n, 0, a, r * ql, ql);
	snprintf(a, sizeof(a), AT "layers.%d.self_attn.v_proj.bias", l);
	rows_at(f, r, n, 2 * ql, a, r * ql, ql);
	const uint8_t *z = out_bytes(f, r, n) + ql * 2;
	for (int64_t k = 0; k < ql * 2; k++)
		assert_int_equal(z[k], 0);
	snprintf(n, sizeof(n), AT "layers.%d.self_attn.o_proj.weight", l);
	cols_of(f, r, T, n, n, AE, AE);
	snprintf(n, sizeof(n), AT "layers.%d.mlp.fc1.weight", l);
	rows_at(f, r, n, 0, n, r * il, il);
	shp(f, r, n, 2, il, AE, 0);
	snprintf(n, sizeof(n), AT "layers.%d.mlp.fc1.bias", l);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), AT "layers.%d.mlp.fc2.weight", l);
	cols_of(f, r, T, n, n, AE, AI);
	static const char *const whole[] = {
	    "self_attn.o_proj.bias",         "input_layernorm.weight",
	    "input_layernorm.bias",          "post_attention_layernorm.weight",
	    "post_attention_layernorm.bias", "mlp.fc2.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), AT "layers.%d.%s", l, whole[k]);
		repl(f, r, n);
	}
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int l = 0; l < 2; l++)
		layer_is(f, T, r, l);
	for (size_t k = 0; k < sizeof(enc_whole) / sizeof(enc_whole[0]); k++)
		repl(f, r, enc_whole[k]);
	repl(f, r, AT "conv1.weight");
	repl(f, r, AT "conv2.weight");
	int64_t pl = 2 * HID / T;
	rows_at(f, r, P1 "weight", 0, P1 "weight", r * pl, pl);
	shp(f, r, P1 "weight", 2, pl, AI, 0);
	rows_at(f, r, P1 "bias", 0, P1 "bias", r * pl, pl);
	cols_of(f, r, T, P2 "weight", P2 "weight", HID, 2 * HID);
	shp(f, r, P2 "weight", 2, HID, pl, 0);
	const char *lq = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	rows_at(f, r, lq, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	const char *lmh = "language_model.lm_head.weight";
	rows_at(f, r, lmh, 0, lmh, r * (128 / T), 128 / T); /* untied: vocabulary rows */
	/* 2 layers x 12 (q/k/v and their biases fused), conv1 / conv2 and the 5 above, the
	 * projector's other 3; the LM's 6 + embed, norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 2 + 5 + 3 + 6 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		tm_model *m = ga_model(LAY_V450, true, 2);
		tm_add2(m, AT "embed_positions.weight", 12, AE); /* vLLM's skip_prefixes */
		fx_open(&f, m, cfg_ga, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 1);
		fx_close(&f);
	}
}

/* The language model is LlamaForCausalLM's under language_model., byte for byte (the
 * prefixed names rule out fx_same_rank_but: fx_same_layouts strips the prefix). */
static void test_text(void **state)
{
	(void)state;
	static const uint32_t tps[] = {1, 2, 4, 8};
	for (size_t i = 0; i < 4; i++)
		fx_same_layouts(ga_model(LAY_V450, true, 2), NULL, cfg_ga,
		                ga_model(LAY_TEXT, true, 0), cfg_text, tps[i], 1,
		                "language_model.");
}

/* rank 1 of TP 2: the LM's, the encoder's and the projector's Linears quantized; convs, norms
 * and biases kept BF16 whole without a scale. */
static void check_quant(wt_quant q, int qdt)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = q;
	fx f;
	fx_open_l(&f, ga_model(LAY_V450, true, 2), cfg_ga, &l, true);
	static const char *const keep[] = {AT "conv1.weight",
	                                   AT "layers.1.mlp.fc1.bias",
	                                   AT "layers.1.self_attn.qkv_proj.bias",
	                                   AT "layers.0.input_layernorm.weight",
	                                   AT "norm.weight",
	                                   P1 "bias",
	                                   P2 "bias",
	                                   LM "embed_tokens.weight"};
	static const char *const qw[] = {LM "layers.0.mlp.gate_up_proj.weight",
	                                 AT "layers.0.self_attn.qkv_proj.weight",
	                                 AT "layers.1.self_attn.o_proj.weight",
	                                 AT "layers.1.mlp.fc1.weight",
	                                 AT "layers.1.mlp.fc2.weight",
	                                 P1 "weight",
	                                 P2 "weight"};
	fx_quant_split_as(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), qw,
	                  sizeof(qw) / sizeof(qw[0]), qdt);
	if (q == WT_QUANT_INT8_CHANNEL) { /* linear_1's codes: rank 1's rows [64, 128) */
		const int8_t *c = (const int8_t *)out_bytes(&f, 1, P1 "weight");
		const float *s = (const float *)out_bytes(&f, 1, P1 "weight_scale");
		size_t rowb;
		for (int64_t row = 0; row < HID; row++)
			int8_row_is(c + row * AI, s[row],
			            (const uint16_t *)src_rows(&f, P1 "weight", HID + row, &rowb),
			            AI);
	}
	fx_close(&f);
}

static void test_quant(void **state)
{
	(void)state;
	check_quant(WT_QUANT_INT8_CHANNEL, WT_I8);
	check_quant(WT_QUANT_FP8_CHANNEL, WT_F8_E4M3);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(ga_model(LAY_V450, true, 2), cfg_ga, 2, lays, 4);
}

/* GlmAsrEncoderConfig's defaults (audio_config absent or empty), a llama text_config with
 * GlmAsrConfig's _default_text_config_kwargs over LlamaConfig's. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const cls[] = {
	    "{\"architectures\":[\"GlmAsrForConditionalGeneration\"],\"model_type\":\"glmasr\","
	    "\"tie_word_embeddings\":true,\"text_config\":{},\"audio_config\":{}}",
	    "{\"architectures\":[\"GlmAsrForConditionalGeneration\"],\"model_type\":\"glmasr\","
	    "\"text_config\":{\"model_type\":\"llama\"}}"};
	for (size_t i = 0; i < 2; i++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cls[i], strlen(cls[i]), &c, &err), WT_OK);
		assert_true(c.has_audio && c.a_mel == 128 && c.a_layers == 32 && c.a_heads == 20 &&
		            c.a_ffn == 5120 && c.a_d_model == 1280 && c.a_max_pos == 1500 &&
		            strcmp(c.lm_model_type, "llama") == 0);
		assert_true(c.vocab_size == 59264 && c.hidden_size == 2048 &&
		            c.num_attention_heads == 16 && c.num_key_value_heads == 4 &&
		            c.head_dim == 128 && c.intermediate_size == 6144 &&
		            c.num_hidden_layers == 28 && !c.tie_given);
		ckpt_config_clear(&c);
	}
	fx_refused(ga_model(LAY_V450, false, 2), cfg_ga, WT_ENOTFOUND, "lm_head.weight", "");
	/* the position table's size is GlmAsrEncoderConfig's max_position_embeddings (Whisper's
	 * max_source_positions is not its key) */
	static const char pos[] =
	    "{\"architectures\":[\"GlmAsrForConditionalGeneration\"],\"model_type\":\"glmasr\","
	    "\"text_config\":{},\"audio_config\":{\"max_position_embeddings\":12,"
	    "\"max_source_positions\":7}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(pos, strlen(pos), &c, &err), WT_OK);
	assert_int_equal(c.a_max_pos, 12);
	ckpt_config_clear(&c);
}

static void test_errors(void **state)
{
	(void)state;
	tm_model *m = ga_model(LAY_V450, true, 2);
	tm_remove(m, AT "layers.1.mlp.fc2.bias");
	fx_refused(m, cfg_ga, WT_ENOTFOUND, AT "layers.1.mlp.fc2.bias", "");
	m = ga_model(LAY_V450, true, 2);
	tm_add2(m, AT "layers.0.self_attn.k_proj.bias", AE, 0);
	fx_refused(m, cfg_ga, WT_EUNSUPPORTED, AT "layers.0.self_attn.k_proj.bias", "");
	/* the projector's 2 x hid width */
	m = ga_model(LAY_V450, true, 2);
	tm_remove(m, P1 "weight");
	tm_add2(m, P1 "weight", HID, AI);
	fx_refused(m, cfg_ga, WT_ESHAPE, P1 "weight", "2 x text_config.hidden_size = 128");
	m = ga_model(LAY_V450, true, 2);
	tm_remove(m, P2 "weight");
	tm_add2(m, P2 "weight", HID, 4 * HID);
	fx_refused(m, cfg_ga, WT_ESHAPE, P2 "weight", "GlmAsrMultiModalProjector");
	m = ga_model(LAY_V450, true, 2);
	tm_remove(m, P1 "weight");
	tm_add2(m, P1 "weight", 2 * HID, AE);
	fx_refused(m, cfg_ga, WT_ESHAPE, P1 "weight", "");
	fx_refused(ga_model(LAY_V450, true, 3), cfg_ga, WT_ESHAPE, "encoder block 2",
	           "audio_config.num_hidden_layers is 2");
	/* heads: 3 do not divide 32; 4 heads at TP 8 */
	static const char cfg3h[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("3", "");
	fx_refused(ga_model(LAY_V450, true, 2), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32",
	           "GlmAsrEncoderAttention");
	static const char cfg4h[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("4", "");
	fx_refused_tp(ga_model(LAY_V450, true, 2), cfg4h, 8, WT_ELAYOUT, "audio_tower.layers.",
	              "audio_config.num_attention_heads 4");
	/* grouped-query encoder; the same count is fine */
	static const char cfg_gqa[] =
	    CFG_HEAD("", "llama", "") AUDIO_KEYS("8", ",\"num_key_value_heads\":2");
	fx_refused(ga_model(LAY_V450, true, 2), cfg_gqa, WT_EUNSUPPORTED,
	           "audio_config.num_key_value_heads", "set it to num_attention_heads");
	static const char cfg_kv8[] =
	    CFG_HEAD("", "llama", "") AUDIO_KEYS("8", ",\"num_key_value_heads\":8");
	fx f;
	fx_open(&f, ga_model(LAY_V450, true, 2), cfg_kv8, 2, 1, 0, true);
	fx_close(&f);
	/* no text_config (GlmAsrConfig would build its default Llama) */
	static const char cfg_notext[] =
	    "{\"architectures\":[\"GlmAsrForConditionalGeneration\"],\"model_type\":"
	    "\"glmasr\",\"hidden_size\":64,\"num_attention_heads\":8,"
	    "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1" AUDIO_KEYS("8", "");
	fx_refused(ga_model(LAY_V450, true, 2), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
	/* another language model, another encoder, a bad size, not an object */
	static const char cfg_glm[] = CFG_HEAD("", "glm", "") AUDIO_KEYS("8", "");
	fx_refused(ga_model(LAY_V450, true, 2), cfg_glm, WT_EUNSUPPORTED,
	           "text_config.model_type 'glm'", "llama");
	static const char cfg_wh[] =
	    CFG_HEAD("", "llama", "") ",\"audio_config\":{\"model_type\":\"whisper\"}}";
	fx_refused(ga_model(LAY_V450, true, 2), cfg_wh, WT_EUNSUPPORTED,
	           "audio_config.model_type 'whisper'", "glmasr_encoder");
	static const char cfg_bad[] =
	    CFG_HEAD("", "llama", "") ",\"audio_config\":{\"hidden_size\":0}}";
	fx_refused(ga_model(LAY_V450, true, 2), cfg_bad, WT_ECORRUPT, "audio_config",
	           "hidden_size");
	static const char cfg_nobj[] = CFG_HEAD("", "llama", "") ",\"audio_config\":7}";
	fx_refused(ga_model(LAY_V450, true, 2), cfg_nobj, WT_ECORRUPT, "'audio_config' is not", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_text),
	    cmocka_unit_test(test_quant),       cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
