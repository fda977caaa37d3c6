/*
 * test_shardmap_ultravox.c — Ultravox (UltravoxModel, docs/format.md section 2.7): the
 * Whisper encoder `audio_tower.*` as vLLM's WhisperEncoder builds it (q/k/v fused into
 * qkv_proj by heads with k's zero bias, out_proj / fc2 by columns, fc1 by rows; those
 * quantized; convs, positions, LayerNorms and the row-parallel biases whole), the projector
 * `multi_modal_projector.*` (ln_pre, linear_1, linear_2, ln_mid or ln_post) whole on every
 * rank with linear_1 / linear_2 quantized whole (ReplicatedLinear with the quant config), the
 * language model as Llama's / Qwen3's / Gemma 3's (same bytes under `language_model.`), exact
 * shapes, coverage at TP 1, 2, 4, 8, UltravoxConfig's / WhisperConfig's / LlamaConfig's
 * defaults, the tie from text_config only, the projector switches, and the refusals
 * (text_model_id / audio_model_id without their weights, a whole Whisper under
 * audio_tower.model., the transformer projector, other language models). Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x0b7bull
#include "test_shardmap_fx.h"
#include "test_shardmap_audio.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1. Encoder: d_model 32, 8 heads of 4, ffn 128,
 * 2 layers, 8 mel bins, 12 positions. Projector: stack_factor 2 (ln_pre / linear_1's input
 * 64), hidden_size 96 (linear_1's rows), swiglu: linear_2 reads 48. */
#define HID 64
#define AE  32
#define AI  128
#define MEL 8
#define POS 12
#define VM  64
#define VPI 96
#define VPO 48

#define LM_KEYS(mt)                                                                                \
	"\"model_type\":\"" mt "\",\"hidden_size\":64,\"num_attention_heads\":8,"                  \
	"\"num_key_value_heads\":2,\"head_dim\":8,\"intermediate_size\":128,"                      \
	"\"vocab_size\":128,\"num_hidden_layers\":1"
#define AUDIO_KEYS(heads)                                                                          \
	",\"audio_config\":{\"model_type\":\"whisper\",\"d_model\":32,"                            \
	"\"encoder_attention_heads\":" heads ",\"encoder_ffn_dim\":128,\"encoder_layers\":2,"      \
	"\"num_mel_bins\":8,\"max_source_positions\":12}}"
/* the top level's hidden_size / vocab_size are UltravoxConfig's own, not the LM's */
#define CFG_HEAD(top, mt, text)                                                                    \
	"{\"architectures\":[\"UltravoxModel\"],\"model_type\":\"ultravox\",\"hidden_size\":96,"   \
	"\"vocab_size\":128256,\"stack_factor\":2," top "\"text_config\":{" LM_KEYS(mt) text "}"
/* untied (LlamaConfig's default; the top level's true is not the text model's); v0.4 ln_post */
static const char cfg_uv[] = CFG_HEAD("\"tie_word_embeddings\":true,", "llama", "") AUDIO_KEYS("8");
static const char cfg_mid[] = CFG_HEAD("\"projector_ln_mid\":true,", "llama", "") AUDIO_KEYS("8");
static const char cfg_text[] = "{\"architectures\":[\"LlamaForCausalLM\"]," LM_KEYS("llama") "}";

#define AT "audio_tower."
#define AB AT "layers.%d."
#define LM "language_model.model."
#define PJ "multi_modal_projector."

enum {
	UV_MID = 1,      /* ln_mid [VPO] (projector_ln_mid), not ln_post [HID] */
	UV_QWEN3 = 2,    /* q_norm / k_norm */
	UV_GEMMA3 = 4,   /* Gemma 3's norms and q_norm / k_norm */
	UV_NOLM = 8,     /* no language_model.* */
	UV_NOAUDIO = 16, /* no audio_tower.* */
	UV_QKVB = 32     /* Qwen2's q/k/v biases */
};

static void add_lm(tm_model *m, lay y, bool lm_head, unsigned fl)
{
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
	if (fl & (UV_QWEN3 | UV_GEMMA3)) {
		mm_add(m, y, "model.layers.0.self_attn.q_norm.weight", 8, 0);
		mm_add(m, y, "model.layers.0.self_attn.k_norm.weight", 8, 0);
	}
	if (fl & UV_QKVB) {
		mm_add(m, y, "model.layers.0.self_attn.q_proj.bias", 64, 0);
		mm_add(m, y, "model.layers.0.self_attn.k_proj.bias", 16, 0);
		mm_add(m, y, "model.layers.0.self_attn.v_proj.bias", 16, 0);
	}
	if (fl & UV_GEMMA3) {
		mm_add(m, y, "model.layers.0.pre_feedforward_layernorm.weight", HID, 0);
		mm_add(m, y, "model.layers.0.post_feedforward_layernorm.weight", HID, 0);
	}
	if (lm_head)
		mm_add(m, y, "lm_head.weight", 128, HID);
}

/* The language model (lm_head when asked), then unless LAY_TEXT the encoder of `layers` layers
 * and the projector. */
static tm_model *uv_model(lay y, bool lm_head, int layers, unsigned fl)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	if (!(fl & UV_NOLM))
		add_lm(m, y, lm_head, fl);
	if (y == LAY_TEXT)
		return m;
	tm_add2(m, PJ "ln_pre.weight", VM, 0);
	tm_add2(m, PJ "linear_1.weight", VPI, VM);
	tm_add2(m, PJ "linear_2.weight", HID, VPO);
	if (fl & UV_MID)
		tm_add2(m, PJ "ln_mid.weight", VPO, 0);
	else
		tm_add2(m, PJ "ln_post.weight", HID, 0);
	if (fl & UV_NOAUDIO)
		return m;
	tm_add_whisper_tower(m, AT, layers, AE, AI, MEL, POS);
	return m;
}

static void check_rank(const fx *f, uint32_t T, uint32_t r, bool mid)
{
	for (int l = 0; l < 2; l++)
		fx_whisper_layer_is(f, T, r, AT, l, AE, AI);
	fx_whisper_whole_is(f, r, AT, AE, MEL);
	repl(f, r, PJ "ln_pre.weight");
	repl(f, r, PJ "linear_1.weight");
	repl(f, r, PJ "linear_2.weight");
	shp(f, r, PJ "linear_1.weight", 2, VPI, VM, 0);
	shp(f, r, PJ "linear_2.weight", 2, HID, VPO, 0);
	repl(f, r, mid ? PJ "ln_mid.weight" : PJ "ln_post.weight");
	assert_true(tm_ix(f->p, r, mid ? PJ "ln_post.weight" : PJ "ln_mid.weight") < 0);
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
	/* 2 layers x 12 (q/k/v and their biases fused), conv1 / conv2, the 5 above, the
	 * projector's 4; the LM's 6 + embed, norm, lm_head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 2 + 5 + 4 + 6 + 3);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++)
		for (int mid = 0; mid < 2; mid++) {
			fx f;
			fx_open(&f, uv_model(LAY_V450, true, 2, mid ? UV_MID : 0),
			        mid ? cfg_mid : cfg_uv, tps[i], 1, 0, true);
			for (uint32_t r = 0; r < tps[i]; r++)
				check_rank(&f, tps[i], r, mid);
			assert_false(shardmap_tied_lm_head(f.p));
			assert_int_equal(shardmap_n_skipped(f.p), 0);
			fx_close(&f);
		}
}

/* The language model is LlamaForCausalLM's / Qwen3ForCausalLM's / Gemma3ForCausalLM's under
 * language_model., byte for byte (Gemma 3 tied by Gemma3TextConfig's default). */
static void test_text(void **state)
{
	(void)state;
	fx_same_layouts(uv_model(LAY_V450, true, 2, 0), NULL, cfg_uv,
	                uv_model(LAY_TEXT, true, 0, 0), cfg_text, 2, 1, "language_model.");
	static const char cfg_q3[] = CFG_HEAD("", "qwen3", "") AUDIO_KEYS("8");
	static const char text_q3[] =
	    "{\"architectures\":[\"Qwen3ForCausalLM\"]," LM_KEYS("qwen3") "}";
	fx_same_layouts(uv_model(LAY_V450, true, 2, UV_QWEN3), NULL, cfg_q3,
	                uv_model(LAY_TEXT, true, 0, UV_QWEN3), text_q3, 4, 1, "language_model.");
	static const char cfg_mis[] = CFG_HEAD("", "mistral", "") AUDIO_KEYS("8");
	static const char text_mis[] =
	    "{\"architectures\":[\"MistralForCausalLM\"]," LM_KEYS("mistral") "}";
	fx_same_layouts(uv_model(LAY_V450, true, 2, 0), NULL, cfg_mis,
	                uv_model(LAY_TEXT, true, 0, 0), text_mis, 2, 1, "language_model.");
	/* Qwen2's q/k/v biases fused with the weights by heads */
	static const char cfg_q2[] = CFG_HEAD("", "qwen2", "") AUDIO_KEYS("8");
	static const char text_q2[] =
	    "{\"architectures\":[\"Qwen2ForCausalLM\"]," LM_KEYS("qwen2") "}";
	fx_same_layouts(uv_model(LAY_V450, true, 2, UV_QKVB), NULL, cfg_q2,
	                uv_model(LAY_TEXT, true, 0, UV_QKVB), text_q2, 4, 1, "language_model.");
	static const char cfg_g3[] = CFG_HEAD("", "gemma3_text", "") AUDIO_KEYS("8");
	static const char text_g3[] =
	    "{\"architectures\":[\"Gemma3ForCausalLM\"]," LM_KEYS("gemma3_text") "}";
	fx_same_layouts(uv_model(LAY_V450, false, 2, UV_GEMMA3), NULL, cfg_g3,
	                uv_model(LAY_TEXT, false, 0, UV_GEMMA3), text_g3, 2, 1, "language_model.");
	fx f;
	fx_open(&f, uv_model(LAY_V450, false, 2, UV_GEMMA3), cfg_g3, 2, 1, 0, true);
	assert_true(shardmap_tied_lm_head(f.p));
	repl(&f, 1, LM "layers.0.pre_feedforward_layernorm.weight");
	repl(&f, 1, LM "layers.0.self_attn.k_norm.weight");
	repl(&f, 1, PJ "linear_1.weight");
	fx_close(&f);
	/* q_norm / k_norm are Qwen3's and Gemma 3's alone */
	tm_model *m = uv_model(LAY_V450, true, 2, UV_QWEN3);
	fx_refused(m, cfg_uv, WT_EUNSUPPORTED, LM "layers.0.self_attn.", "not qwen3");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_q3, WT_ENOTFOUND,
	           LM "layers.0.self_attn.q_norm.weight", "");
}

/* A quantized layout at rank 1 of TP 2: the LM's and the encoder's Linears quantized, and the
 * projector's linear_1 / linear_2 whole, row by row for int8; convs, positions, norms, biases
 * and the projector's RMSNorms kept BF16 whole without a scale. */
static void check_quant(wt_quant q, int qdt)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = q;
	fx f;
	fx_open_l(&f, uv_model(LAY_V450, true, 2, 0), cfg_uv, &l, true);
	static const char *const keep[] = {AT "conv1.weight",
	                                   AT "embed_positions.weight",
	                                   AT "layers.1.fc1.bias",
	                                   AT "layers.1.self_attn.qkv_proj.bias",
	                                   AT "layers.0.self_attn_layer_norm.weight",
	                                   PJ "ln_pre.weight",
	                                   PJ "ln_post.weight",
	                                   LM "embed_tokens.weight"};
	static const char *const qw[] = {LM "layers.0.mlp.gate_up_proj.weight",
	                                 LM "layers.0.self_attn.qkv_proj.weight",
	                                 AT "layers.0.self_attn.qkv_proj.weight",
	                                 AT "layers.1.self_attn.out_proj.weight",
	                                 AT "layers.1.fc1.weight",
	                                 AT "layers.1.fc2.weight",
	                                 PJ "linear_1.weight",
	                                 PJ "linear_2.weight"};
	fx_quant_split_as(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), qw,
	                  sizeof(qw) / sizeof(qw[0]), qdt);
	repl(&f, 1, PJ "ln_pre.weight");
	if (q == WT_QUANT_INT8_CHANNEL) { /* the whole projector on rank 1, row by row */
		shp(&f, 1, PJ "linear_1.weight", 2, VPI, VM, 0);
		fx_rows_int8_is(&f, 1, PJ "linear_1.weight", 0, PJ "linear_1.weight", 0, VPI, VM);
		fx_rows_int8_is(&f, 1, PJ "linear_2.weight", 0, PJ "linear_2.weight", 0, HID, VPO);
		fx_rows_int8_is(&f, 1, AT "layers.1.fc1.weight", 0, AT "layers.1.fc1.weight",
		                AI / 2, AI / 2, AE);
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
	coverage(uv_model(LAY_V450, true, 2, 0), cfg_uv, 2, lays, 4);
	coverage(uv_model(LAY_V450, true, 2, UV_MID), cfg_mid, 2, lays, 4);
}

/* projector_ln_mid picks ln_mid (v0.5 on) or ln_post (up to v0.4.1); projector_act other
 * than swiglu reads linear_1's whole width in linear_2 and ln_mid. */
static void test_switches(void **state)
{
	(void)state;
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_mid, WT_EUNSUPPORTED, PJ "ln_post.weight",
	           "projector_ln_mid is true");
	fx_refused(uv_model(LAY_V450, true, 2, UV_MID), cfg_uv, WT_EUNSUPPORTED, PJ "ln_mid.weight",
	           "projector_ln_mid is false or absent");
	tm_model *m = uv_model(LAY_V450, true, 2, 0);
	tm_remove(m, PJ "ln_post.weight");
	fx_refused(m, cfg_uv, WT_ENOTFOUND, PJ "ln_post.weight", "projector_ln_mid false");
	m = uv_model(LAY_V450, true, 2, UV_MID);
	tm_remove(m, PJ "ln_mid.weight");
	fx_refused(m, cfg_mid, WT_ENOTFOUND, PJ "ln_mid.weight", "projector_ln_mid true");
	static const char cfg_gelu[] =
	    CFG_HEAD("\"projector_act\":\"gelu\",\"projector_ln_mid\":true,", "llama", "")
	        AUDIO_KEYS("8");
	m = uv_model(LAY_V450, true, 2, 0);
	tm_remove(m, PJ "linear_2.weight");
	tm_remove(m, PJ "ln_post.weight");
	tm_add2(m, PJ "linear_2.weight", HID, VPI);
	tm_add2(m, PJ "ln_mid.weight", VPI, 0);
	fx f;
	fx_open(&f, m, cfg_gelu, 2, 1, 0, true);
	shp(&f, 1, PJ "linear_2.weight", 2, HID, VPI, 0);
	repl(&f, 1, PJ "ln_mid.weight");
	fx_close(&f);
	/* swiglu's half where gelu is configured: a shape error naming the tensor */
	fx_refused(uv_model(LAY_V450, true, 2, UV_MID), cfg_gelu, WT_ESHAPE, PJ "linear_2.weight",
	           "");
}

/* WhisperConfig's defaults (audio_config absent), UltravoxConfig's (hidden_size 4096,
 * stack_factor 8, swiglu, ln_post), a text_config without model_type read as LlamaConfig with
 * its defaults, the top level's hidden_size / vocab_size not the LM's; the tie from
 * text_config alone. */
static void test_defaults(void **state)
{
	(void)state;
	static const char cl[] =
	    "{\"architectures\":[\"UltravoxModel\"],\"model_type\":\"ultravox\",\"hidden_size\":"
	    "8192,\"vocab_size\":7,\"tie_word_embeddings\":true,\"text_config\":{}}";
	static const char c2[] = "{\"architectures\":[\"UltravoxModel\"],\"model_type\":"
	                         "\"ultravox\",\"text_config\":{\"model_type\":\"qwen3\"},"
	                         "\"audio_config\":{\"d_model\":1280}}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cl, strlen(cl), &c, &err), WT_OK);
	assert_true(c.has_audio && c.a_mel == 80 && c.a_layers == 4 && c.a_heads == 6 &&
	            c.a_ffn == 1536 && c.a_d_model == 384 && c.a_max_pos == 1500 &&
	            strcmp(c.lm_model_type, "llama") == 0);
	assert_true(c.uv_hidden == 8192 && c.uv_stack == 8 && c.uv_swiglu && !c.uv_ln_mid &&
	            c.uv_text_id[0] == '\0' && c.uv_audio_id[0] == '\0');
	assert_true(c.vocab_size == 32000 && c.hidden_size == 4096 && c.num_attention_heads == 32 &&
	            c.intermediate_size == 11008 && c.num_hidden_layers == 32 && !c.tie_given);
	ckpt_config_clear(&c);
	assert_int_equal(ckpt_config_parse(c2, strlen(c2), &c, &err), WT_OK);
	assert_true(c.uv_hidden == 4096 && c.a_d_model == 1280 && c.a_layers == 4 &&
	            strcmp(c.lm_model_type, "qwen3") == 0 && c.vocab_size == 151936 &&
	            c.head_dim == 128);
	ckpt_config_clear(&c);
	/* untied whatever the top level says: lm_head needed */
	fx_refused(uv_model(LAY_V450, false, 2, 0), cfg_uv, WT_ENOTFOUND, "lm_head.weight", "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] = CFG_HEAD("\"tie_word_embeddings\":false,", "llama",
	                                    ",\"tie_word_embeddings\":true") AUDIO_KEYS("8");
	fx f;
	fx_open(&f, uv_model(LAY_V450, false, 2, 0), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* The weights text_model_id / audio_model_id name: cut from the folder when there, refused
 * naming the key and the fix when not; a whole Whisper under audio_tower.model. refused. */
static void test_model_ids(void **state)
{
	(void)state;
	static const char cfg_tid[] =
	    CFG_HEAD("\"text_model_id\":\"meta-llama/Llama-3.2-1B-Instruct\",", "llama", "")
	        AUDIO_KEYS("8");
	static const char cfg_aid[] =
	    CFG_HEAD("\"audio_model_id\":\"openai/whisper-large-v3-turbo\",", "llama", "")
	        AUDIO_KEYS("8");
	fx f;
	fx_open(&f, uv_model(LAY_V450, true, 2, 0), cfg_tid, 2, 1, 0, true);
	check_rank(&f, 2, 1, false);
	fx_close(&f);
	fx_refused(uv_model(LAY_V450, true, 2, UV_NOLM), cfg_tid, WT_EUNSUPPORTED,
	           "text_model_id 'meta-llama/Llama-3.2-1B-Instruct'", "language_model.<name>");
	fx_refused(uv_model(LAY_V450, true, 2, UV_NOAUDIO), cfg_aid, WT_EUNSUPPORTED,
	           "audio_model_id 'openai/whisper-large-v3-turbo'", "audio_tower.<name>");
	static const char cfg_tonly[] =
	    "{\"architectures\":[\"UltravoxModel\"],\"model_type\":\"ultravox\","
	    "\"text_model_id\":\"meta-llama/Llama-3.1-8B-Instruct\"" AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_tonly, WT_EUNSUPPORTED,
	           "text_model_id 'meta-llama/Llama-3.1-8B-Instruct' and no text_config",
	           "as text_config");
	static const char cfg_aonly[] =
	    CFG_HEAD("\"audio_model_id\":\"openai/whisper-small\",", "llama", "") "}";
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_aonly, WT_EUNSUPPORTED,
	           "audio_model_id 'openai/whisper-small' and no audio_config", "as audio_config");
	tm_model *m = uv_model(LAY_V450, true, 2, 0);
	tm_add2(m, AT "model.decoder.layer_norm.weight", AE, 0);
	fx_refused(m, cfg_uv, WT_EUNSUPPORTED, AT "model.decoder.layer_norm.weight",
	           "rename audio_tower.model.encoder.<name> to audio_tower.<name>");
	m = uv_model(LAY_V450, true, 2, 0);
	tm_add2(m, AT "proj_out.weight", 128, AE);
	fx_refused(m, cfg_uv, WT_EUNSUPPORTED, AT "proj_out.weight", "audio_tower.proj_out.*");
}

static void test_errors(void **state)
{
	(void)state;
	/* a tensor missing, of another shape, past encoder_layers, unknown */
	tm_model *m = uv_model(LAY_V450, true, 2, 0);
	tm_remove(m, AT "layers.1.fc2.bias");
	fx_refused(m, cfg_uv, WT_ENOTFOUND, AT "layers.1.fc2.bias", "");
	m = uv_model(LAY_V450, true, 2, 0);
	tm_remove(m, PJ "ln_pre.weight");
	fx_refused(m, cfg_uv, WT_ENOTFOUND, PJ "ln_pre.weight", "");
	m = uv_model(LAY_V450, true, 2, 0);
	tm_remove(m, PJ "linear_1.weight");
	tm_add2(m, PJ "linear_1.weight", VPI, AE); /* stack_factor not applied */
	fx_refused(m, cfg_uv, WT_ESHAPE, PJ "linear_1.weight", "");
	m = uv_model(LAY_V450, true, 2, 0);
	tm_remove(m, PJ "ln_pre.weight");
	tm_add2(m, PJ "ln_pre.weight", AE, 0);
	fx_refused(m, cfg_uv, WT_ESHAPE, PJ "ln_pre.weight", "");
	fx_refused(uv_model(LAY_V450, true, 3, 0), cfg_uv, WT_ESHAPE, "encoder block 2", "");
	m = uv_model(LAY_V450, true, 2, 0);
	tm_add2(m, PJ "linear_1.bias", VPI, 0);
	fx_refused(m, cfg_uv, WT_EUNSUPPORTED, PJ "linear_1.bias", "");
	/* heads: 3 do not divide 32; 4 heads at TP 8 (vLLM's WhisperAttention asserts) */
	static const char cfg3h[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("3");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg3h, WT_ECORRUPT,
	           "audio_config.encoder_attention_heads 3 does not divide d_model 32", "");
	static const char cfg4h[] = CFG_HEAD("", "llama", "") AUDIO_KEYS("4");
	fx_refused_tp(uv_model(LAY_V450, true, 2, 0), cfg4h, 8, WT_ELAYOUT, "audio_tower.layers.",
	              "audio_config.encoder_attention_heads 4");
	/* other language models, none, another encoder, the transformer projector, bad keys */
	static const char cfg_phi[] = CFG_HEAD("", "phi3", "") AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_phi, WT_EUNSUPPORTED,
	           "text_config.model_type 'phi3'", "gemma3_text");
	static const char cfg_g3mm[] = CFG_HEAD("", "gemma3", "") AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_g3mm, WT_EUNSUPPORTED,
	           "text_config.model_type gemma3", "model_type gemma3_text");
	static const char cfg_mt[] = "{\"architectures\":[\"UltravoxModel\"]," LM_KEYS("llama") "}";
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_mt, WT_ECORRUPT,
	           "UltravoxModel needs model_type ultravox", "");
	static const char cfg_notext[] = "{\"architectures\":[\"UltravoxModel\"],\"model_type\":"
	                                 "\"ultravox\"" AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_notext, WT_ECORRUPT, "needs text_config",
	           "");
	static const char cfg_enc[] =
	    CFG_HEAD("", "llama", "") ",\"audio_config\":{\"model_type\":\"qwen2_audio_encoder\"}}";
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_enc, WT_EUNSUPPORTED,
	           "audio_config.model_type 'qwen2_audio_encoder'", "whisper");
	static const char cfg_tp[] =
	    CFG_HEAD("\"num_projector_layers\":2,", "llama", "") AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_tp, WT_EUNSUPPORTED,
	           "num_projector_layers 2", "UltravoxTransformerProjector");
	static const char cfg_odd[] =
	    "{\"architectures\":[\"UltravoxModel\"],\"model_type\":\"ultravox\",\"hidden_size\":"
	    "95,\"text_config\":{" LM_KEYS("llama") "}" AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_odd, WT_ECORRUPT, "hidden_size 95 is odd",
	           "swiglu");
	static const char cfg_sf0[] =
	    "{\"architectures\":[\"UltravoxModel\"],\"model_type\":\"ultravox\",\"stack_factor\":"
	    "0,\"text_config\":{" LM_KEYS("llama") "}" AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_sf0, WT_ECORRUPT, "stack_factor", "");
	static const char cfg_nobj[] = CFG_HEAD("", "llama", "") ",\"audio_config\":7}";
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_nobj, WT_ECORRUPT, "'audio_config' is not",
	           "");
	static const char cfg_act[] = CFG_HEAD("\"projector_act\":3,", "llama", "") AUDIO_KEYS("8");
	fx_refused(uv_model(LAY_V450, true, 2, 0), cfg_act, WT_ECORRUPT, "projector_act", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_text),
	    cmocka_unit_test(test_quant),       cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_switches),    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_model_ids),   cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
