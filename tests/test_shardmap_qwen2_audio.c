/*
 * test_shardmap_qwen2_audio.c — Qwen2-Audio (Qwen2AudioForConditionalGeneration,
 * docs/format.md section 2.7): the Whisper-style audio encoder `audio_tower.*` (transformers'
 * own Qwen2AudioEncoder in vLLM: no tensor parallelism, no quant config) and the projector
 * `multi_modal_projector.linear` whole on every rank and never quantized, the language model
 * as Qwen2's (q/k/v biases; same bytes under `language_model.`), exact shapes, int8 codes
 * left to the LM, coverage at TP 1, 2, 4, 8, Qwen2AudioConfig's / Qwen2AudioEncoderConfig's /
 * Qwen2Config's defaults, the tie from text_config only, and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0xa0d1ull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Encoder: d_model 32, 4 heads, ffn 64, 2
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
	",\"audio_config\":{\"model_type\":\"qwen2_audio_encoder\",\"d_model\":32,"                \
	"\"encoder_attention_heads\":" heads ",\"encoder_ffn_dim\":64,\"encoder_layers\":" layers  \
	",\"num_mel_bins\":8,\"max_source_positions\":12}}"
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"Qwen2AudioForConditionalGeneration\"],\"model_type\":"              \
	"\"qwen2_audio\"," top "\"text_config\":{" LM_KEYS(mt) text "}"
/* untied (Qwen2Config's default; the top level's true is not the text model's) */
static const char cfg_qa[] =
    CFG_HEAD("\"tie_word_embeddings\":true,", "qwen2", "") AUDIO_KEYS("4", "2");
static const char cfg_text[] = "{\"architectures\":[\"Qwen2ForCausalLM\"]," LM_KEYS("qwen2") "}";

#define AT "audio_tower."
#define AB AT "layers.%d."
#define LM "language_model.model."

/* an encoder layer's tensors (0 columns: 1-D) */
static const fx_leaf layer[] = {FX_WHISPER_LAYER_LEAVES(AE, AI)};

static const struct {
	const char *name;
	int64_t n, k;
} top[] = {
    {AT "conv1.bias", AE, 0},
    {AT "conv2.bias", AE, 0},
    {AT "embed_positions.weight", POS, AE},
    {AT "layer_norm.weight", AE, 0},
    {AT "layer_norm.bias", AE, 0},
    {"multi_modal_projector.linear.weight", HID, AE},
    {"multi_modal_projector.linear.bias", HID, 0},
};

/* The Qwen2 language model (lm_head when asked), then unless LAY_TEXT the encoder of
 * `layers` layers and the projector. */
static tm_model *qa_model(lay y, bool lm_head, int layers)
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
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, MEL, 3);
	tm_add(m, AT "conv2.weight", WT_DTYPE_INVALID, 3, AE, AE, 3);
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		tm_add2(m, top[k].name, top[k].n, top[k].k);
	for (int l = 0; l < layers; l++)
		for (size_t k = 0; k < sizeof(layer) / sizeof(layer[0]); k++) {
			snprintf(b, sizeof(b), AB "%s", l, layer[k].leaf);
			tm_add2(m, b, layer[k].n, layer[k].k);
		}
	return m;
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	char n[200];
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(layer) / sizeof(layer[0]); k++) {
			snprintf(n, sizeof(n), AB "%s", l, layer[k].leaf);
			repl(f, r, n);
		}
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		repl(f, r, top[k].name);
	repl(f, r, AT "conv1.weight");
	repl(f, r, AT "conv2.weight");
	shp(f, r, AT "conv1.weight", 3, AE, MEL, 3);
	shp(f, r, "multi_modal_projector.linear.weight", 2, HID, AE, 0);
	const char *lq = LM "layers.0.self_attn.qkv_proj.";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	char a[200];
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
	/* 2 layers x 15, conv1 / conv2 and the 7 above; the LM's 7 + embed, norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 15 + 2 + 7 + 7 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, qa_model(LAY_V450, true, 2), cfg_qa, tps[i], 1, 0, true);
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
	fx_same_layouts(qa_model(LAY_V450, true, 2), NULL, cfg_qa, qa_model(LAY_TEXT, true, 0),
	                cfg_text, 2, 1, "language_model.");
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
	fx_open_l(&f, qa_model(LAY_V450, true, 2), cfg_qa, &l, true);
	static const char *const keep[] = {
	    AT "conv1.weight", AT "layers.1.fc1.weight", AT "layers.0.self_attn.k_proj.weight",
	    "multi_modal_projector.linear.weight", LM "embed_tokens.weight"};
	static const char *const q8[] = {LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	repl(&f, 1, AT "layers.1.fc1.weight");
	repl(&f, 1, "multi_modal_projector.linear.weight");
	assert_int_equal(tm_ix(f.p, 1, AT "layers.1.fc1.weight_scale"), -1);
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(qa_model(LAY_V450, true, 2), cfg_qa, 2, lays, 4);
}

/* Qwen2AudioEncoderConfig's defaults, text_config a qwen2 one with Qwen2Config's defaults for
 * keys left out (num_key_value_heads 32), the tie from text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] =
	    "{\"architectures\":[\"Qwen2AudioForConditionalGeneration\"],\"model_type\":"
	    "\"qwen2_audio\",\"tie_word_embeddings\":true,\"text_config\":{\"vocab_size\":156032},"
	    "\"audio_config\":{}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	assert_true(c.has_audio && c.a_mel == 128 && c.a_layers == 32 && c.a_heads == 20 &&
	            c.a_ffn == 5120 && c.a_d_model == 1280 && c.a_max_pos == 1500 &&
	            strcmp(c.lm_model_type, "qwen2") == 0);
	assert_true(c.vocab_size == 156032 && c.hidden_size == 4096 &&
	            c.num_attention_heads == 32 && c.num_key_value_heads == 32 &&
	            c.intermediate_size == 22016 && c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	/* untied whatever the top level says: lm_head needed */
	fx_refused(qa_model(LAY_V450, false, 2), cfg_qa, WT_ENOTFOUND, "lm_head.weight", "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] = CFG_HEAD("\"tie_word_embeddings\":false,", "qwen2",
	                                    ",\"tie_word_embeddings\":true") AUDIO_KEYS("4", "2");
	fx f;
	fx_open(&f, qa_model(LAY_V450, false, 2), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* an encoder tensor missing, of another shape, past encoder_layers, unknown */
	tm_model *m = qa_model(LAY_V450, true, 2);
	tm_remove(m, AT "layers.1.fc2.bias");
	fx_refused(m, cfg_qa, WT_ENOTFOUND, AT "layers.1.fc2.bias", "");
	m = qa_model(LAY_V450, true, 2);
	tm_remove(m, AT "conv1.weight");
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, MEL * 2, 3);
	fx_refused(m, cfg_qa, WT_ESHAPE, AT "conv1.weight", "");
	m = qa_model(LAY_V450, true, 2);
	tm_remove(m, AT "embed_positions.weight");
	tm_add2(m, AT "embed_positions.weight", POS + 1, AE);
	fx_refused(m, cfg_qa, WT_ESHAPE, AT "embed_positions.weight", "");
	m = qa_model(LAY_V450, true, 2);
	tm_remove(m, "multi_modal_projector.linear.weight");
	tm_add2(m, "multi_modal_projector.linear.weight", HID, AE * 2);
	fx_refused(m, cfg_qa, WT_ESHAPE, "multi_modal_projector.linear.weight", "");
	fx_refused(qa_model(LAY_V450, true, 3), cfg_qa, WT_ESHAPE, "encoder block 2",
	           "audio_config.encoder_layers is 2");
	m = qa_model(LAY_V450, true, 2);
	tm_add2(m, AT "layers.0.self_attn.k_proj.bias", AE, 0);
	fx_refused(m, cfg_qa, WT_EUNSUPPORTED, AT "layers.0.self_attn.k_proj.bias", "");
	/* heads: 3 do not divide 32 */
	static const char cfg3h[] = CFG_HEAD("", "qwen2", "") AUDIO_KEYS("3", "2");
	fx_refused(qa_model(LAY_V450, true, 2), cfg3h, WT_ECORRUPT,
	           "encoder_attention_heads 3 does not divide d_model 32", "");
	/* another language model, none, no encoder */
	static const char cfg_llama[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("4", "2");
	fx_refused(qa_model(LAY_V450, true, 2), cfg_llama, WT_EUNSUPPORTED,
	           "text_config.model_type 'llama'", "qwen2");
	static const char cfg_noa[] = CFG_HEAD("", "qwen2", "") "}";
	fx_refused(qa_model(LAY_V450, true, 2), cfg_noa, WT_ECORRUPT, "needs audio_config", "");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"Qwen2AudioForConditionalGeneration\"],\"model_type\":"
	    "\"qwen2_audio\",\"hidden_size\":64,\"num_attention_heads\":8,"
	    "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1" AUDIO_KEYS("4", "2");
	fx_refused(qa_model(LAY_V450, true, 2), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
	static const char cfg_bad[] =
	    CFG_HEAD("", "qwen2", "") ",\"audio_config\":{\"d_model\":0}}";
	fx_refused(qa_model(LAY_V450, true, 2), cfg_bad, WT_ECORRUPT, "audio_config", "d_model");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_text),
	    cmocka_unit_test(test_int8),        cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
