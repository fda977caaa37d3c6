/*
 * test_shardmap_audioflamingo3.c — Audio Flamingo 3 (AudioFlamingo3ForConditionalGeneration,
 * model_type audioflamingo3; docs/format.md): the language model as Qwen2's under
 * `language_model.` (same bytes as Qwen2ForCausalLM's), the encoder `audio_tower.*`
 * (transformers' Qwen2AudioEncoder in vLLM: no tensor parallelism, no quant config) byte for
 * byte Qwen2-Audio's, the projector multi_modal_projector.linear_1 / linear_2 (plain
 * nn.Linear) whole on every rank and never quantized, their biases exactly when
 * projector_bias; coverage at TP 1, 2, 4, 8; AudioFlamingo3Config's /
 * AudioFlamingo3EncoderConfig's / Qwen2Config's defaults, the encoder's attribute_map
 * aliases, the tie from text_config only, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0xaf3ull
#include "test_shardmap_fx.h"

#include "test_shardmap_audio.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Encoder: hidden 32, 4 heads, MLP 64, 2
 * layers, 8 mel bins, 12 positions. */
#define HID 64
#define AE  32
#define AI  64
#define MEL 8
#define POS 12

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"                  \
	"\"num_hidden_layers\":1"
#define AUDIO_KEYS(heads, layers)                                                                  \
	",\"audio_config\":{\"model_type\":\"audioflamingo3_encoder\",\"hidden_size\":32,"         \
	"\"num_attention_heads\":" heads ",\"intermediate_size\":64,\"num_hidden_layers\":" layers \
	",\"num_mel_bins\":8,\"max_source_positions\":12}}"
#define AF3_ARCH "{\"architectures\":[\"AudioFlamingo3ForConditionalGeneration\"],"
#define CFG_HEAD(top, mt, text)                                                                    \
	AF3_ARCH "\"model_type\":\"audioflamingo3\"," top "\"text_config\":{" LM_KEYS(mt) text "}"
/* untied (Qwen2Config's default; the top level's true is not the text model's) */
static const char cfg_af[] =
    CFG_HEAD("\"tie_word_embeddings\":true,", "qwen2", "") AUDIO_KEYS("4", "2");
static const char cfg_nobias[] =
    CFG_HEAD("\"projector_bias\":false,", "qwen2", "") AUDIO_KEYS("4", "2");
static const char cfg_text[] = "{\"architectures\":[\"Qwen2ForCausalLM\"]," LM_KEYS("qwen2") "}";
/* the same weights as Qwen2-Audio (its own key names) */
static const char cfg_qa[] =
    "{\"architectures\":[\"Qwen2AudioForConditionalGeneration\"],\"model_type\":\"qwen2_audio\","
    "\"text_config\":{" LM_KEYS(
        "qwen2") "},\"audio_config\":{\"d_model\":32,"
                 "\"encoder_attention_heads\":4,\"encoder_ffn_dim\":64,\"encoder_layers\":2,"
                 "\"num_mel_bins\":8,\"max_source_positions\":12}}";

#define AT "audio_tower."
#define LM "language_model.model."
#define PJ "multi_modal_projector."

typedef enum { PROJ_AF3, PROJ_AF3_NOBIAS, PROJ_QA } proj;

/* The Qwen2 language model (lm_head when asked), then unless LAY_TEXT the encoder of `layers`
 * layers and last the projector (so the tensors before it are the same bytes whichever). */
static tm_model *af_model(lay y, bool lm_head, int layers, proj pj)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	mm_add(m, y, "model.embed_tokens.weight", 128, HID);
	mm_add(m, y, "model.norm.weight", HID, 0);
	static const fx_leaf lmt[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.q_proj.bias", 64, 0},
	    {"self_attn.k_proj.weight", 16, HID}, {"self_attn.k_proj.bias", 16, 0},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.v_proj.bias", 16, 0},
	    {"self_attn.o_proj.weight", HID, 64}, {"mlp.gate_proj.weight", 128, HID},
	    {"mlp.up_proj.weight", 128, HID},     {"mlp.down_proj.weight", HID, 128}};
	for (size_t k = 0; k < sizeof(lmt) / sizeof(lmt[0]); k++) {
		snprintf(b, sizeof(b), "model.layers.0.%s", lmt[k].leaf);
		mm_add(m, y, b, lmt[k].n, lmt[k].k);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
	if (y == LAY_TEXT)
		return m;
	tm_add_whisper_tower(m, AT, layers, AE, AI, MEL, POS);
	if (pj == PROJ_QA) {
		tm_add2(m, PJ "linear.weight", HID, AE);
		tm_add2(m, PJ "linear.bias", HID, 0);
		return m;
	}
	tm_add2(m, PJ "linear_1.weight", HID, AE);
	tm_add2(m, PJ "linear_2.weight", HID, HID);
	if (pj == PROJ_AF3) {
		tm_add2(m, PJ "linear_1.bias", HID, 0);
		tm_add2(m, PJ "linear_2.bias", HID, 0);
	}
	return m;
}

static const char *const proj_t[] = {PJ "linear_1.weight", PJ "linear_1.bias", PJ "linear_2.weight",
                                     PJ "linear_2.bias"};

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	char n[200], a[200];
	fx_whisper_whole_is(f, r, AT, AE, MEL);
	static const fx_leaf layer[] = {FX_WHISPER_LAYER_LEAVES(AE, AI)};
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(layer) / sizeof(layer[0]); k++) {
			snprintf(n, sizeof(n), AT "layers.%d.%s", l, layer[k].leaf);
			repl(f, r, n);
		}
	for (size_t k = 0; k < sizeof(proj_t) / sizeof(proj_t[0]); k++)
		repl(f, r, proj_t[k]);
	shp(f, r, PJ "linear_1.weight", 2, HID, AE, 0);
	shp(f, r, PJ "linear_2.weight", 2, HID, HID, 0);
	const char *lq = LM "layers.0.self_attn.qkv_proj.";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	for (int w = 0; w < 2; w++) {
		const char *leaf = w ? "bias" : "weight";
		snprintf(n, sizeof(n), "%s%s", lq, leaf);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.q_proj.%s", leaf);
		rows_at(f, r, n, 0, a, r * ql, ql);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.k_proj.%s", leaf);
		rows_at(f, r, n, ql, a, kvh * 8, 8);
		snprintf(a, sizeof(a), LM "layers.0.self_attn.v_proj.%s", leaf);
		rows_at(f, r, n, ql + 8, a, kvh * 8, 8);
	}
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	assert_true(tm_ix(f->p, r, "language_model.lm_head.weight") >= 0); /* untied */
	/* 2 layers x 15, conv1 / conv2 and 5 whole; the projector's 4; the LM's 7 + embed,
	 * norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 15 + 2 + 5 + 4 + 7 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, af_model(LAY_V450, true, 2, PROJ_AF3), cfg_af, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* The language model is Qwen2ForCausalLM's under language_model., byte for byte. */
static void test_text(void **state)
{
	(void)state;
	fx_same_layouts(af_model(LAY_V450, true, 2, PROJ_AF3), NULL, cfg_af,
	                af_model(LAY_TEXT, true, 0, PROJ_AF3), cfg_text, 2, 1, "language_model.");
}

/* Every rank's tensors outside the projector are Qwen2-Audio's of the same weights (the same
 * encoder class, the same Qwen2 model), byte for byte, at TP 1 / 2 / 4 and int8 TP 2. */
static void test_same_as_qwen2_audio(void **state)
{
	(void)state;
	static const struct {
		uint32_t tp;
		wt_quant q;
	} lays[] = {
	    {1, WT_QUANT_NONE}, {2, WT_QUANT_NONE}, {4, WT_QUANT_NONE}, {2, WT_QUANT_INT8_CHANNEL}};
	for (size_t i = 0; i < sizeof(lays) / sizeof(lays[0]); i++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[i].tp;
		l.quant = lays[i].q;
		fx a, q;
		fx_open_l(&a, af_model(LAY_V450, true, 2, PROJ_AF3), cfg_af, &l, true);
		fx_open_l(&q, af_model(LAY_V450, true, 2, PROJ_QA), cfg_qa, &l, true);
		for (uint32_t r = 0; r < lays[i].tp; r++) {
			size_t nq = shardmap_rank_n_tensors(q.p, r), same = 0;
			for (size_t k = 0; k < nq; k++) {
				const sm_out_info *u = shardmap_rank_tensor(q.p, r, k);
				if (strncmp(u->name, PJ, strlen(PJ)) == 0)
					continue;
				const sm_out_info *v = info(&a, r, u->name);
				assert_int_equal(u->dtype, v->dtype);
				assert_int_equal(u->nbytes, v->nbytes);
				if (memcmp(q.pr->b[r][k], out_bytes(&a, r, u->name), u->nbytes) !=
				    0)
					fail_msg("rank %u '%s' differs from Qwen2-Audio's", r,
					         u->name);
				same++;
			}
			/* Qwen2-Audio's projector: 2 tensors; Audio Flamingo 3's: 4 */
			assert_int_equal(same, nq - 2);
			assert_int_equal(shardmap_rank_n_tensors(a.p, r), same + 4);
		}
		fx_close(&a);
		fx_close(&q);
	}
}

/* int8-channel TP 2: the LM quantized; the encoder and the projector kept BF16 whole. */
static void test_int8(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, af_model(LAY_V450, true, 2, PROJ_AF3), cfg_af, &l, true);
	static const char *const keep[] = {AT "conv1.weight",
	                                   AT "layers.1.fc1.weight",
	                                   AT "layers.0.self_attn.q_proj.weight",
	                                   PJ "linear_1.weight",
	                                   PJ "linear_2.weight",
	                                   PJ "linear_2.bias",
	                                   LM "embed_tokens.weight"};
	static const char *const q8[] = {LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight",
	                                 LM "layers.0.self_attn.o_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	repl(&f, 1, PJ "linear_1.weight");
	repl(&f, 1, PJ "linear_2.weight");
	assert_int_equal(tm_ix(f.p, 1, PJ "linear_1.weight_scale"), -1);
	assert_int_equal(tm_ix(f.p, 1, PJ "linear_2.weight_scale"), -1);
	assert_int_equal(tm_ix(f.p, 1, AT "layers.1.fc2.weight_scale"), -1);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_af, 2, lays, 4);
	coverage(af_model(LAY_V450, true, 2, PROJ_AF3_NOBIAS), cfg_nobias, 2, lays, 2);
}

/* projector_bias false: linear_1 / linear_2 without biases (vLLM builds none), whole. */
static void test_no_bias(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, af_model(LAY_V450, true, 2, PROJ_AF3_NOBIAS), cfg_nobias, 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		repl(&f, r, PJ "linear_1.weight");
		repl(&f, r, PJ "linear_2.weight");
		assert_int_equal(tm_ix(f.p, r, PJ "linear_1.bias"), -1);
		assert_int_equal(tm_ix(f.p, r, PJ "linear_2.bias"), -1);
	}
	fx_close(&f);
}

/* AudioFlamingo3EncoderConfig's defaults (audio_config {} or absent), text_config a qwen2 one
 * with Qwen2Config's defaults for keys left out, projector_bias true, the tie from text_config
 * alone; the encoder's attribute_map aliases. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const cls[] = {
	    AF3_ARCH "\"model_type\":\"audioflamingo3\",\"tie_word_embeddings\":true,"
	             "\"text_config\":{\"vocab_size\":151672},\"audio_config\":{}}",
	    AF3_ARCH "\"model_type\":\"audioflamingo3\",\"text_config\":{\"vocab_size\":151672}}",
	    AF3_ARCH "\"model_type\":\"audioflamingo3\",\"text_config\":{\"vocab_size\":151672},"
	             "\"audio_config\":null}"};
	for (size_t i = 0; i < 3; i++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cls[i], strlen(cls[i]), &c, &err), WT_OK);
		assert_true(c.has_audio && c.a_mel == 128 && c.a_layers == 32 && c.a_heads == 20 &&
		            c.a_ffn == 5120 && c.a_d_model == 1280 && c.a_max_pos == 1500 &&
		            strcmp(c.lm_model_type, "qwen2") == 0 && c.mm_projector_bias);
		assert_true(c.vocab_size == 151672 && c.hidden_size == 4096 &&
		            c.num_attention_heads == 32 && c.num_key_value_heads == 32 &&
		            c.intermediate_size == 22016 && c.num_hidden_layers == 32 &&
		            !c.tie_given);
		ckpt_config_clear(&c);
	}
	/* the aliases, alone or equal to the canonical key */
	static const char alias[] =
	    CFG_HEAD("", "qwen2", "") ",\"audio_config\":{\"d_model\":32,\"encoder_layers\":2,"
	                              "\"encoder_attention_heads\":4,\"encoder_ffn_dim\":64,"
	                              "\"hidden_size\":32,\"num_mel_bins\":8,"
	                              "\"max_source_positions\":12}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(alias, strlen(alias), &c, &err), WT_OK);
	assert_true(c.a_d_model == 32 && c.a_layers == 2 && c.a_heads == 4 && c.a_ffn == 64 &&
	            c.a_mel == 8 && c.a_max_pos == 12);
	ckpt_config_clear(&c);
	fx f;
	fx_open(&f, af_model(LAY_V450, true, 2, PROJ_AF3), alias, 2, 1, 0, true);
	check_rank(&f, 2, 1);
	fx_close(&f);
	/* untied whatever the top level says: lm_head needed */
	fx_refused(af_model(LAY_V450, false, 2, PROJ_AF3), cfg_af, WT_ENOTFOUND, "lm_head.weight",
	           "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] = CFG_HEAD("\"tie_word_embeddings\":false,", "qwen2",
	                                    ",\"tie_word_embeddings\":true") AUDIO_KEYS("4", "2");
	fx_open(&f, af_model(LAY_V450, false, 2, PROJ_AF3), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* Tensors vLLM would not load, or loads into modules of another shape. */
static void test_tensor_errors(void **state)
{
	(void)state;
	tm_model *m = af_model(LAY_V450, true, 2, PROJ_AF3);
	tm_remove(m, AT "layers.1.fc2.bias");
	fx_refused(m, cfg_af, WT_ENOTFOUND, AT "layers.1.fc2.bias", "");
	m = af_model(LAY_V450, true, 2, PROJ_AF3);
	tm_remove(m, AT "conv1.weight");
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, MEL * 2, 3);
	fx_refused(m, cfg_af, WT_ESHAPE, AT "conv1.weight", "");
	m = af_model(LAY_V450, true, 2, PROJ_AF3);
	tm_remove(m, AT "embed_positions.weight");
	tm_add2(m, AT "embed_positions.weight", POS + 1, AE);
	fx_refused(m, cfg_af, WT_ESHAPE, AT "embed_positions.weight", "");
	fx_refused(af_model(LAY_V450, true, 3, PROJ_AF3), cfg_af, WT_ESHAPE, "encoder block 2",
	           "audio_config.num_hidden_layers is 2");
	m = af_model(LAY_V450, true, 2, PROJ_AF3);
	tm_add2(m, AT "layers.0.self_attn.k_proj.bias", AE, 0);
	fx_refused(m, cfg_af, WT_EUNSUPPORTED, AT "layers.0.self_attn.k_proj.bias", "");
	/* the projector: linear_1 reads the encoder's width, linear_2 the LM's */
	m = af_model(LAY_V450, true, 2, PROJ_AF3);
	tm_remove(m, PJ "linear_1.weight");
	tm_add2(m, PJ "linear_1.weight", HID, AI);
	fx_refused(m, cfg_af, WT_ESHAPE, PJ "linear_1.weight", "");
	m = af_model(LAY_V450, true, 2, PROJ_AF3);
	tm_remove(m, PJ "linear_2.weight");
	tm_add2(m, PJ "linear_2.weight", HID, AE);
	fx_refused(m, cfg_af, WT_ESHAPE, PJ "linear_2.weight", "");
	m = af_model(LAY_V450, true, 2, PROJ_AF3);
	tm_remove(m, PJ "linear_2.bias");
	fx_refused(m, cfg_af, WT_ENOTFOUND, PJ "linear_2.bias", "projector_bias");
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_nobias, WT_EUNSUPPORTED,
	           PJ "linear_1.bias", "projector_bias is false");
	/* Qwen2-Audio's single projector Linear is not Audio Flamingo 3's */
	fx_refused(af_model(LAY_V450, true, 2, PROJ_QA), cfg_af, WT_EUNSUPPORTED, PJ "linear.",
	           "check architectures");
}

static void test_config_errors(void **state)
{
	(void)state;
	/* heads: 3 do not divide 32 */
	static const char cfg3h[] = CFG_HEAD("", "qwen2", "") AUDIO_KEYS("3", "2");
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg3h, WT_ECORRUPT,
	           "audio_config.num_attention_heads 3 does not divide hidden_size 32", "");
	/* another language model, none */
	static const char cfg_llama[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("4", "2");
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_llama, WT_EUNSUPPORTED,
	           "text_config.model_type 'llama'", "Qwen2ForCausalLM");
	static const char cfg_notext[] = AF3_ARCH
	    "\"model_type\":\"audioflamingo3\",\"hidden_size\":64,"
	    "\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":128,"
	    "\"vocab_size\":128,\"num_hidden_layers\":1" AUDIO_KEYS("4", "2");
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_notext, WT_ECORRUPT,
	           "needs a text_config", "");
	/* an encoder vLLM's AudioFlamingo3Encoder is not built from */
	static const char cfg_whisper[] =
	    CFG_HEAD("", "qwen2", "") ",\"audio_config\":{\"model_type\":\"whisper\"}}";
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_whisper, WT_EUNSUPPORTED,
	           "audio_config.model_type 'whisper'", "audioflamingo3_encoder");
	static const char cfg_notobj[] = CFG_HEAD("", "qwen2", "") ",\"audio_config\":[1]}";
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_notobj, WT_ECORRUPT,
	           "'audio_config' is not an object", "");
	static const char cfg_zero[] =
	    CFG_HEAD("", "qwen2", "") ",\"audio_config\":{\"hidden_size\":0}}";
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_zero, WT_ECORRUPT, "audio_config",
	           "hidden_size");
	static const char cfg_zero_alias[] =
	    CFG_HEAD("", "qwen2", "") ",\"audio_config\":{\"d_model\":0}}";
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_zero_alias, WT_ECORRUPT,
	           "audio_config", "d_model");
	static const char cfg_both[] =
	    CFG_HEAD("", "qwen2", "") ",\"audio_config\":{\"hidden_size\":32,\"d_model\":16}}";
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_both, WT_ECORRUPT,
	           "both hidden_size and d_model", "keep hidden_size alone");
	static const char cfg_pbias[] =
	    CFG_HEAD("\"projector_bias\":\"yes\",", "qwen2", "") AUDIO_KEYS("4", "2");
	fx_refused(af_model(LAY_V450, true, 2, PROJ_AF3), cfg_pbias, WT_ECORRUPT, "projector_bias",
	           "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices),
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_same_as_qwen2_audio),
	    cmocka_unit_test(test_int8),
	    cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_no_bias),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_tensor_errors),
	    cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
