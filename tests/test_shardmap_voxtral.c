/*
 * test_shardmap_voxtral.c — Voxtral (VoxtralForConditionalGeneration, docs/format.md
 * section 2.7): the Whisper encoder `audio_tower.*` as vLLM's WhisperEncoder builds it (q/k/v
 * fused into qkv_proj by heads, the bias [q_r; zeros; v_r] since k_proj has none, out_proj by
 * columns, fc1 by rows with its bias, fc2 by columns; those weights quantized; convs,
 * positions, LayerNorms and the row-parallel biases whole), the projector
 * `multi_modal_projector.linear_1` / `linear_2` whole and never quantized, the language
 * model as Llama's (same bytes under `language_model.`), exact shapes, coverage at TP 1, 2,
 * 4, 8, VoxtralConfig's / VoxtralEncoderConfig's / LlamaConfig's defaults, the tie from
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

#define SEED 0x0b7aull
#include "test_shardmap_fx.h"
#include "test_shardmap_audio.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Encoder: hidden 32, 8 heads of 4,
 * intermediate 128 (4 x 32, as the releases'), 2 layers, 8 mel bins, 12 positions. */
#define HID 64
#define AE  32
#define AI  128
#define MEL 8
#define POS 12

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":8,\"intermediate_size\":128,"                      \
	"\"vocab_size\":128,\"num_hidden_layers\":1"
#define AUDIO_KEYS(heads, layers)                                                                  \
	",\"audio_config\":{\"model_type\":\"voxtral_encoder\",\"hidden_size\":32,"                \
	"\"num_attention_heads\":" heads                                                           \
	",\"intermediate_size\":128,\"num_hidden_layers\":" layers                                 \
	",\"num_mel_bins\":8,\"max_source_positions\":12}}"
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"VoxtralForConditionalGeneration\"],\"model_type\":"                 \
	"\"voxtral\"," top "\"text_config\":{" LM_KEYS(mt) text "}"
/* untied (LlamaConfig's default; the top level's true is not the text model's) */
static const char cfg_vx[] =
    CFG_HEAD("\"tie_word_embeddings\":true,", "llama", "") AUDIO_KEYS("8", "2");
static const char cfg_text[] = "{\"architectures\":[\"LlamaForCausalLM\"]," LM_KEYS("llama") "}";

#define AT "audio_tower."
#define AB AT "layers.%d."
#define LM "language_model.model."

/* the projector, whole on every rank */
static const struct {
	const char *name;
	int64_t n, k;
} proj[] = {
    {"multi_modal_projector.linear_1.weight", HID, AI},
    {"multi_modal_projector.linear_2.weight", HID, HID},
};

/* The Llama language model (lm_head when asked), then unless LAY_TEXT the encoder of
 * `layers` layers and the projector. */
static tm_model *vx_model(lay y, bool lm_head, int layers)
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
	tm_add_whisper_tower(m, AT, layers, AE, AI, MEL, POS);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		tm_add2(m, proj[k].name, proj[k].n, proj[k].k);
	return m;
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int l = 0; l < 2; l++)
		fx_whisper_layer_is(f, T, r, AT, l, AE, AI);
	fx_whisper_whole_is(f, r, AT, AE, MEL);
	for (size_t k = 0; k < sizeof(proj) / sizeof(proj[0]); k++)
		repl(f, r, proj[k].name);
	shp(f, r, "multi_modal_projector.linear_1.weight", 2, HID, AI, 0);
	const char *lq = LM "layers.0.self_attn.qkv_proj.weight";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	rows_at(f, r, lq, 0, LM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, LM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, LM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	cols_of(f, r, T, LM "layers.0.self_attn.o_proj.weight",
	        LM "layers.0.self_attn.o_proj.weight", HID, 64);
	const char *lmh = "language_model.lm_head.weight";
	assert_true(tm_ix(f->p, r, lmh) >= 0);              /* untied */
	rows_at(f, r, lmh, 0, lmh, r * (128 / T), 128 / T); /* vocabulary rows */
	/* 2 layers x 12 (q/k/v and their biases fused), conv1 / conv2 and the 7 above; the LM's
	 * 6 + embed, norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 2 + 7 + 6 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, vx_model(LAY_V450, true, 2), cfg_vx, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* The language model is LlamaForCausalLM's under language_model., byte for byte. */
static void test_text(void **state)
{
	(void)state;
	fx_same_layouts(vx_model(LAY_V450, true, 2), NULL, cfg_vx, vx_model(LAY_TEXT, true, 0),
	                cfg_text, 2, 1, "language_model.");
}

/* A quantized layout at rank 1 of TP 2: the LM's and the encoder's Linears quantized (qkv,
 * out_proj, fc1 / fc2 row by row for int8), convs, positions, norms, biases and the projector
 * kept BF16 whole without a scale. */
static void check_quant(wt_quant q, int qdt)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = q;
	fx f;
	fx_open_l(&f, vx_model(LAY_V450, true, 2), cfg_vx, &l, true);
	static const char *const keep[] = {AT "conv1.weight",
	                                   AT "embed_positions.weight",
	                                   AT "layers.1.fc1.bias",
	                                   AT "layers.1.self_attn.qkv_proj.bias",
	                                   AT "layers.0.self_attn_layer_norm.weight",
	                                   "multi_modal_projector.linear_1.weight",
	                                   "multi_modal_projector.linear_2.weight",
	                                   LM "embed_tokens.weight"};
	static const char *const qw[] = {LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight",
	                                 AT "layers.0.self_attn.qkv_proj.weight",
	                                 AT "layers.1.self_attn.out_proj.weight",
	                                 AT "layers.1.fc1.weight",
	                                 AT "layers.1.fc2.weight"};
	fx_quant_split_as(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), qw,
	                  sizeof(qw) / sizeof(qw[0]), qdt);
	repl(&f, 1, "multi_modal_projector.linear_1.weight");
	if (q == WT_QUANT_INT8_CHANNEL) { /* fc1's codes: rank 1's rows [64, 128) row by row */
		const int8_t *c = (const int8_t *)out_bytes(&f, 1, AT "layers.1.fc1.weight");
		const float *s = (const float *)out_bytes(&f, 1, AT "layers.1.fc1.weight_scale");
		size_t rowb;
		for (int64_t row = 0; row < AI / 2; row++)
			int8_row_is(c + row * AE, s[row],
			            (const uint16_t *)src_rows(&f, AT "layers.1.fc1.weight",
			                                       AI / 2 + row, &rowb),
			            AE);
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
	coverage(vx_model(LAY_V450, true, 2), cfg_vx, 2, lays, 4);
}

/* VoxtralEncoderConfig's defaults (audio_config absent or empty), text_config a llama one
 * with VoxtralConfig's _default_text_config_kwargs over LlamaConfig's (head_dim 128,
 * num_key_value_heads 8, rope_theta 1e8), the tie from text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const cls[] = {
	    "{\"architectures\":[\"VoxtralForConditionalGeneration\"],\"model_type\":\"voxtral\","
	    "\"tie_word_embeddings\":true,\"text_config\":{\"vocab_size\":131072},"
	    "\"audio_config\":{}}",
	    "{\"architectures\":[\"VoxtralForConditionalGeneration\"],\"model_type\":\"voxtral\","
	    "\"text_config\":{\"model_type\":\"llama\",\"vocab_size\":131072}}"};
	for (size_t i = 0; i < 2; i++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cls[i], strlen(cls[i]), &c, &err), WT_OK);
		assert_true(c.has_audio && c.a_mel == 128 && c.a_layers == 32 && c.a_heads == 20 &&
		            c.a_ffn == 5120 && c.a_d_model == 1280 && c.a_max_pos == 1500 &&
		            strcmp(c.lm_model_type, "llama") == 0);
		assert_true(c.vocab_size == 131072 && c.hidden_size == 3072 &&
		            c.num_attention_heads == 32 && c.num_key_value_heads == 8 &&
		            c.head_dim == 128 && c.intermediate_size == 8192 &&
		            c.num_hidden_layers == 30 && !c.tie_given && !c.attention_bias &&
		            !c.mlp_bias);
		ckpt_config_clear(&c);
	}
	/* untied whatever the top level says: lm_head needed */
	fx_refused(vx_model(LAY_V450, false, 2), cfg_vx, WT_ENOTFOUND, "lm_head.weight", "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] = CFG_HEAD("\"tie_word_embeddings\":false,", "llama",
	                                    ",\"tie_word_embeddings\":true") AUDIO_KEYS("8", "2");
	fx f;
	fx_open(&f, vx_model(LAY_V450, false, 2), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* text_config's attention_bias / mlp_bias: Llama's biases required then (q/k/v fused with
 * the weights, o_proj's whole), unknown otherwise. */
static void test_llama_biases(void **state)
{
	(void)state;
	static const char cfg_b[] =
	    CFG_HEAD("", "llama", ",\"attention_bias\":true") AUDIO_KEYS("8", "2");
	tm_model *m = vx_model(LAY_V450, true, 2);
	tm_add2(m, LM "layers.0.self_attn.q_proj.bias", 64, 0);
	tm_add2(m, LM "layers.0.self_attn.k_proj.bias", 16, 0);
	tm_add2(m, LM "layers.0.self_attn.v_proj.bias", 16, 0);
	tm_add2(m, LM "layers.0.self_attn.o_proj.bias", HID, 0);
	fx f;
	fx_open(&f, m, cfg_b, 2, 1, 0, true);
	rows_at(&f, 1, LM "layers.0.self_attn.qkv_proj.bias", 0,
	        LM "layers.0.self_attn.q_proj.bias", 32, 32);
	repl(&f, 1, LM "layers.0.self_attn.o_proj.bias");
	fx_close(&f);
	fx_refused(vx_model(LAY_V450, true, 2), cfg_b, WT_ENOTFOUND,
	           LM "layers.0.self_attn.q_proj.bias", "attention_bias");
	m = vx_model(LAY_V450, true, 2);
	tm_add2(m, LM "layers.0.mlp.up_proj.bias", 128, 0);
	fx_refused(m, cfg_vx, WT_EUNSUPPORTED, LM "layers.0.mlp.up_proj.bias", "");
}

static void test_errors(void **state)
{
	(void)state;
	/* an encoder tensor missing, of another shape, past num_hidden_layers, unknown */
	tm_model *m = vx_model(LAY_V450, true, 2);
	tm_remove(m, AT "layers.1.fc2.bias");
	fx_refused(m, cfg_vx, WT_ENOTFOUND, AT "layers.1.fc2.bias", "");
	m = vx_model(LAY_V450, true, 2);
	tm_remove(m, AT "layers.0.self_attn.v_proj.bias");
	fx_refused(m, cfg_vx, WT_ENOTFOUND, AT "layers.0.self_attn.v_proj.bias", "");
	m = vx_model(LAY_V450, true, 2);
	tm_remove(m, AT "conv1.weight");
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, MEL * 2, 3);
	fx_refused(m, cfg_vx, WT_ESHAPE, AT "conv1.weight", "");
	m = vx_model(LAY_V450, true, 2);
	tm_remove(m, AT "embed_positions.weight");
	tm_add2(m, AT "embed_positions.weight", POS + 1, AE);
	fx_refused(m, cfg_vx, WT_ESHAPE, AT "embed_positions.weight", "");
	m = vx_model(LAY_V450, true, 2);
	tm_remove(m, "multi_modal_projector.linear_1.weight");
	tm_add2(m, "multi_modal_projector.linear_1.weight", HID, AE);
	fx_refused(m, cfg_vx, WT_ESHAPE, "multi_modal_projector.linear_1.weight", "");
	fx_refused(vx_model(LAY_V450, true, 3), cfg_vx, WT_ESHAPE, "encoder block 2",
	           "audio_config.num_hidden_layers is 2");
	m = vx_model(LAY_V450, true, 2);
	tm_add2(m, AT "layers.0.self_attn.k_proj.bias", AE, 0);
	fx_refused(m, cfg_vx, WT_EUNSUPPORTED, AT "layers.0.self_attn.k_proj.bias", "");
	m = vx_model(LAY_V450, true, 2);
	tm_add2(m, "multi_modal_projector.linear_1.bias", HID, 0);
	fx_refused(m, cfg_vx, WT_EUNSUPPORTED, "multi_modal_projector.linear_1.bias", "");
	/* heads: 3 do not divide 32; 4 heads at TP 8 (vLLM's WhisperAttention asserts) */
	static const char cfg3h[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("3", "2");
	fx_refused(vx_model(LAY_V450, true, 2), cfg3h, WT_ECORRUPT,
	           "num_attention_heads 3 does not divide hidden_size 32", "");
	static const char cfg4h[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("4", "2");
	fx_refused_tp(vx_model(LAY_V450, true, 2), cfg4h, 8, WT_ELAYOUT, "audio_tower.layers.",
	              "audio_config.num_attention_heads 4");
	/* another language model, none, another encoder, a bad size */
	static const char cfg_mis[] = CFG_HEAD("", "mistral", "") AUDIO_KEYS("8", "2");
	fx_refused(vx_model(LAY_V450, true, 2), cfg_mis, WT_EUNSUPPORTED,
	           "text_config.model_type 'mistral'", "llama");
	static const char cfg_notext[] =
	    "{\"architectures\":[\"VoxtralForConditionalGeneration\"],\"model_type\":"
	    "\"voxtral\",\"hidden_size\":64,\"num_attention_heads\":8,"
	    "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	    "\"num_hidden_layers\":1" AUDIO_KEYS("8", "2");
	fx_refused(vx_model(LAY_V450, true, 2), cfg_notext, WT_ECORRUPT, "needs a text_config", "");
	static const char cfg_whisper[] =
	    CFG_HEAD("", "llama", "") ",\"audio_config\":{\"model_type\":\"whisper\"}}";
	fx_refused(vx_model(LAY_V450, true, 2), cfg_whisper, WT_EUNSUPPORTED,
	           "audio_config.model_type 'whisper'", "voxtral_encoder");
	static const char cfg_bad[] =
	    CFG_HEAD("", "llama", "") ",\"audio_config\":{\"hidden_size\":0}}";
	fx_refused(vx_model(LAY_V450, true, 2), cfg_bad, WT_ECORRUPT, "audio_config",
	           "hidden_size");
	static const char cfg_nobj[] = CFG_HEAD("", "llama", "") ",\"audio_config\":7}";
	fx_refused(vx_model(LAY_V450, true, 2), cfg_nobj, WT_ECORRUPT, "'audio_config' is not", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_text),
	    cmocka_unit_test(test_quant),       cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_llama_biases),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
