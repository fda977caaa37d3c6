/*
 * test_shardmap_qwen2_5_omni.c — Qwen2.5-Omni's thinker (Qwen2_5OmniForConditionalGeneration,
 * docs/format.md section 2.7): the Qwen2 language model under thinker. (q/k/v with biases by
 * heads, o_proj / down_proj by columns, vocabulary rows), the vision tower thinker.visual.*
 * as vLLM's Qwen2_5_VisionTransformer loads it (attn.q / attn.k / attn.v fused into attn.qkv
 * by vision heads with their biases, proj by columns, the gated MLP as the language model's,
 * the merger's mlp.0 rows / mlp.2 columns), the audio encoder thinker.audio_tower.* whole and
 * never quantized (vLLM builds transformers' Qwen2_5OmniAudioEncoder), talker.* / token2wav.*
 * skipped, exact shapes, int8 / fp8 quantization of the split Linears only, coverage at TP 1,
 * 2, 4, 8, the classes' defaults of the nested thinker_config, the tie from text_config only,
 * and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x0a5eull
#include "test_shardmap_fx.h"

/* LM: hid 64, H 8, KV 2, d 8, I 128, V 128, L 1, MRoPE [2, 1, 1]. Vision: width 32, 4 heads,
 * MLP 64, 2 blocks, patch 2, temporal 2, merge 2 (merger 128). Audio: d_model 16, 2 heads,
 * ffn 48, 2 layers, 8 mel bins, output_dim 64. */
#define HID 64
#define VE  32
#define VI  64
#define VM  128
#define AE  16
#define AI  48
#define MEL 8

#define TEXT_KEYS(extra)                                                                           \
	"\"text_config\":{\"model_type\":\"qwen2_5_omni_text\",\"hidden_size\":64,"                \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":128,"           \
	"\"vocab_size\":128,\"num_hidden_layers\":1,\"rope_scaling\":{\"mrope_section\":[2,1,1],"  \
	"\"type\":\"default\"}" extra "}"
#define VIS_KEYS(heads)                                                                            \
	"\"vision_config\":{\"depth\":2,\"hidden_size\":32,\"intermediate_size\":64,"              \
	"\"num_heads\":" heads ",\"in_channels\":3,\"patch_size\":2,\"temporal_patch_size\":2,"    \
	"\"spatial_merge_size\":2,\"out_hidden_size\":64}"
#define AUD_KEYS(heads, out)                                                                       \
	"\"audio_config\":{\"d_model\":16,\"encoder_attention_heads\":" heads                      \
	",\"encoder_ffn_dim\":48,\"encoder_layers\":2,\"num_mel_bins\":8,\"output_dim\":" out "}"
#define CFG(top, text, vis, aud)                                                                   \
	"{\"architectures\":[\"Qwen2_5OmniForConditionalGeneration\"],\"model_type\":"             \
	"\"qwen2_5_omni\"," top "\"thinker_config\":{" text "," vis "," aud "}}"
/* untied (Qwen2_5OmniTextConfig's default; the top level's and the thinker's true are not the
 * text model's) */
static const char cfg_qo[] = CFG("\"tie_word_embeddings\":true,\"enable_audio_output\":true,",
                                 TEXT_KEYS(""), VIS_KEYS("4"), AUD_KEYS("2", "64"));

#define TM "thinker.model."
#define VB "thinker.visual.blocks.%d."
#define VT "thinker.visual."
#define AT "thinker.audio_tower."
#define AB AT "layers.%d."

/* an audio encoder layer's tensors (0 columns: 1-D) */
static const fx_leaf alayer[] = {FX_WHISPER_LAYER_LEAVES(AE, AI)};

/* a vision block's tensors */
static const fx_leaf vblock[] = {
    {"norm1.weight", VE, 0},          {"norm2.weight", VE, 0},
    {"attn.q.weight", VE, VE},        {"attn.q.bias", VE, 0},
    {"attn.k.weight", VE, VE},        {"attn.k.bias", VE, 0},
    {"attn.v.weight", VE, VE},        {"attn.v.bias", VE, 0},
    {"attn.proj.weight", VE, VE},     {"attn.proj.bias", VE, 0},
    {"mlp.gate_proj.weight", VI, VE}, {"mlp.gate_proj.bias", VI, 0},
    {"mlp.up_proj.weight", VI, VE},   {"mlp.up_proj.bias", VI, 0},
    {"mlp.down_proj.weight", VE, VI}, {"mlp.down_proj.bias", VE, 0},
};

/* whole on every rank (besides conv1 / conv2, the patch embed and the encoder layers) */
static const fx_leaf top[] = {
    {VT "merger.ln_q.weight", VE, 0},
    {VT "merger.mlp.2.bias", HID, 0},
    {AT "conv1.bias", AE, 0},
    {AT "conv2.bias", AE, 0},
    {AT "audio_bos_eos_token.weight", 2, HID},
    {AT "ln_post.weight", AE, 0},
    {AT "ln_post.bias", AE, 0},
    {AT "proj.weight", HID, AE},
    {AT "proj.bias", HID, 0},
};

/* The language model (lm_head when asked), then the vision tower of vblocks blocks, the
 * audio encoder of alayers layers and, when speech, two tensors of the speech generator. */
static tm_model *qo_model(bool lm_head, int vblocks, int alayers, bool speech)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	static const fx_leaf lm[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.q_proj.bias", 64, 0},
	    {"self_attn.k_proj.weight", 16, HID}, {"self_attn.k_proj.bias", 16, 0},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.v_proj.bias", 16, 0},
	    {"self_attn.o_proj.weight", HID, 64}, {"mlp.gate_proj.weight", 128, HID},
	    {"mlp.up_proj.weight", 128, HID},     {"mlp.down_proj.weight", HID, 128}};
	tm_add2(m, TM "embed_tokens.weight", 128, HID);
	tm_add2(m, TM "norm.weight", HID, 0);
	for (size_t k = 0; k < sizeof(lm) / sizeof(lm[0]); k++) {
		snprintf(b, sizeof(b), TM "layers.0.%s", lm[k].leaf);
		tm_add2(m, b, lm[k].n, lm[k].k);
	}
	if (lm_head)
		tm_add2(m, "thinker.lm_head.weight", 128, HID);
	tm_add(m, VT "patch_embed.proj.weight", WT_DTYPE_INVALID, 1, VE * 3 * 2 * 2 * 2, 0, 0);
	st_desc *d = &m->d[m->n - 1];
	d->ndim = 5;
	d->shape[0] = VE;
	d->shape[1] = 3;
	d->shape[2] = d->shape[3] = d->shape[4] = 2;
	for (int l = 0; l < vblocks; l++)
		for (size_t k = 0; k < sizeof(vblock) / sizeof(vblock[0]); k++) {
			snprintf(b, sizeof(b), VB "%s", l, vblock[k].leaf);
			tm_add2(m, b, vblock[k].n, vblock[k].k);
		}
	tm_add2(m, VT "merger.mlp.0.weight", VM, VM);
	tm_add2(m, VT "merger.mlp.0.bias", VM, 0);
	tm_add2(m, VT "merger.mlp.2.weight", HID, VM);
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, MEL, 3);
	tm_add(m, AT "conv2.weight", WT_DTYPE_INVALID, 3, AE, AE, 3);
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		tm_add2(m, top[k].leaf, top[k].n, top[k].k);
	for (int l = 0; l < alayers; l++)
		for (size_t k = 0; k < sizeof(alayer) / sizeof(alayer[0]); k++) {
			snprintf(b, sizeof(b), AB "%s", l, alayer[k].leaf);
			tm_add2(m, b, alayer[k].n, alayer[k].k);
		}
	if (speech) {
		tm_add2(m, "talker.codec_head.weight", 8, HID);
		tm_add2(m, "token2wav.code2wav_dit_model.proj_out.weight", 4, 4);
	}
	return m;
}

/* Rank r's vision block l at TP T: q/k/v (weights and biases) rows by heads fused into
 * attn.qkv, proj / down_proj columns, gate / up rows fused (biases alike), the rest whole. */
static void check_vblock(const fx *f, uint32_t T, uint32_t r, int l)
{
	char n[200], a[200];
	int64_t vl = VE / T, il = VI / T;
	static const char *const qkv[] = {"q", "k", "v"};
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), VB "attn.qkv.%s", l, w ? "bias" : "weight");
		shp(f, r, n, w ? 1 : 2, 3 * vl, w ? 0 : VE, 0);
		for (int p = 0; p < 3; p++) {
			snprintf(a, sizeof(a), VB "attn.%s.%s", l, qkv[p], w ? "bias" : "weight");
			rows_at(f, r, n, p * vl, a, r * vl, vl);
		}
		snprintf(n, sizeof(n), VB "mlp.gate_up_proj.%s", l, w ? "bias" : "weight");
		shp(f, r, n, w ? 1 : 2, 2 * il, w ? 0 : VE, 0);
		snprintf(a, sizeof(a), VB "mlp.gate_proj.%s", l, w ? "bias" : "weight");
		rows_at(f, r, n, 0, a, r * il, il);
		snprintf(a, sizeof(a), VB "mlp.up_proj.%s", l, w ? "bias" : "weight");
		rows_at(f, r, n, il, a, r * il, il);
	}
	snprintf(n, sizeof(n), VB "attn.proj.weight", l);
	cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), VB "mlp.down_proj.weight", l);
	cols_of(f, r, T, n, n, VE, VI);
	static const char *const whole[] = {"norm1.weight", "norm2.weight", "attn.proj.bias",
	                                    "mlp.down_proj.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), VB "%s", l, whole[k]);
		repl(f, r, n);
	}
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	char n[200];
	for (int l = 0; l < 2; l++) {
		check_vblock(f, T, r, l);
		for (size_t k = 0; k < sizeof(alayer) / sizeof(alayer[0]); k++) {
			snprintf(n, sizeof(n), AB "%s", l, alayer[k].leaf);
			repl(f, r, n);
		}
	}
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		repl(f, r, top[k].leaf);
	repl(f, r, AT "conv1.weight");
	repl(f, r, AT "conv2.weight");
	repl(f, r, VT "patch_embed.proj.weight");
	shp(f, r, AT "conv1.weight", 3, AE, MEL, 3);
	int64_t ml = VM / T;
	rows_at(f, r, VT "merger.mlp.0.weight", 0, VT "merger.mlp.0.weight", r * ml, ml);
	rows_at(f, r, VT "merger.mlp.0.bias", 0, VT "merger.mlp.0.bias", r * ml, ml);
	cols_of(f, r, T, VT "merger.mlp.2.weight", VT "merger.mlp.2.weight", HID, VM);
	const char *lq = TM "layers.0.self_attn.qkv_proj.weight";
	const char *lb = TM "layers.0.self_attn.qkv_proj.bias";
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2;
	rows_at(f, r, lq, 0, TM "layers.0.self_attn.q_proj.weight", r * ql, ql);
	rows_at(f, r, lq, ql, TM "layers.0.self_attn.k_proj.weight", kvh * 8, 8);
	rows_at(f, r, lq, ql + 8, TM "layers.0.self_attn.v_proj.weight", kvh * 8, 8);
	rows_at(f, r, lb, 0, TM "layers.0.self_attn.q_proj.bias", r * ql, ql);
	rows_at(f, r, lb, ql, TM "layers.0.self_attn.k_proj.bias", kvh * 8, 8);
	rows_at(f, r, lb, ql + 8, TM "layers.0.self_attn.v_proj.bias", kvh * 8, 8);
	cols_of(f, r, T, TM "layers.0.self_attn.o_proj.weight",
	        TM "layers.0.self_attn.o_proj.weight", HID, 64);
	int64_t il = 128 / T;
	const char *gu = TM "layers.0.mlp.gate_up_proj.weight";
	rows_at(f, r, gu, 0, TM "layers.0.mlp.gate_proj.weight", r * il, il);
	rows_at(f, r, gu, il, TM "layers.0.mlp.up_proj.weight", r * il, il);
	cols_of(f, r, T, TM "layers.0.mlp.down_proj.weight", TM "layers.0.mlp.down_proj.weight",
	        HID, 128);
	const char *lmh = "thinker.lm_head.weight";
	assert_true(tm_ix(f->p, r, lmh) >= 0);              /* untied */
	rows_at(f, r, lmh, 0, lmh, r * (128 / T), 128 / T); /* vocabulary rows */
	rows_at(f, r, TM "embed_tokens.weight", 0, TM "embed_tokens.weight", r * (128 / T),
	        128 / T);
	/* vision: 2 blocks x 10 (q/k/v and gate/up fused, with biases) + patch, ln_q, merger 4;
	 * audio: 2 layers x 15 + conv 4 + bos_eos, ln_post 2, proj 2; LM: 7 + embed, norm, head */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 10 + 6 + 2 * 15 + 9 + 10);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, qo_model(true, 2, 2, true), cfg_qo, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2);
		assert_true(fx_skipped(&f, "talker.codec_head.weight"));
		assert_true(fx_skipped(&f, "token2wav.code2wav_dit_model.proj_out.weight"));
		fx_close(&f);
	}
}

/* A quantized layout at rank 1 of TP 2: the LM's and the vision tower's split Linears
 * quantized (int8 codes of the vision qkv row by row), the audio encoder, the patch embed,
 * norms, biases and embeddings kept BF16 without a scale. */
static void check_quant(wt_quant q, int qdt)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = q;
	fx f;
	fx_open_l(&f, qo_model(true, 2, 2, false), cfg_qo, &l, true);
	static const char *const keep[] = {AT "conv1.weight",
	                                   AT "layers.1.fc1.weight",
	                                   AT "layers.0.self_attn.q_proj.weight",
	                                   AT "layers.0.self_attn.out_proj.weight",
	                                   AT "proj.weight",
	                                   AT "audio_bos_eos_token.weight",
	                                   VT "patch_embed.proj.weight",
	                                   VT "blocks.0.attn.qkv.bias",
	                                   VT "blocks.1.norm1.weight",
	                                   TM "embed_tokens.weight",
	                                   "thinker.lm_head.weight"};
	static const char *const qw[] = {TM "layers.0.mlp.gate_up_proj.weight",
	                                 TM "layers.0.self_attn.qkv_proj.weight",
	                                 TM "layers.0.self_attn.o_proj.weight",
	                                 VT "blocks.0.attn.qkv.weight",
	                                 VT "blocks.1.attn.proj.weight",
	                                 VT "blocks.1.mlp.gate_up_proj.weight",
	                                 VT "blocks.1.mlp.down_proj.weight",
	                                 VT "merger.mlp.0.weight",
	                                 VT "merger.mlp.2.weight"};
	fx_quant_split_as(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), qw,
	                  sizeof(qw) / sizeof(qw[0]), qdt);
	repl(&f, 1, AT "layers.1.fc1.weight");
	if (q == WT_QUANT_INT8_CHANNEL) { /* vision qkv's codes: rank 1's q, k, v rows [16, 32) */
		const int8_t *c = (const int8_t *)out_bytes(&f, 1, VT "blocks.0.attn.qkv.weight");
		const float *s =
		    (const float *)out_bytes(&f, 1, VT "blocks.0.attn.qkv.weight_scale");
		static const char *const src[] = {VT "blocks.0.attn.q.weight",
		                                  VT "blocks.0.attn.k.weight",
		                                  VT "blocks.0.attn.v.weight"};
		size_t rowb;
		for (int p = 0; p < 3; p++)
			for (int64_t row = 0; row < VE / 2; row++)
				int8_row_is(
				    c + (p * VE / 2 + row) * VE, s[p * VE / 2 + row],
				    (const uint16_t *)src_rows(&f, src[p], VE / 2 + row, &rowb),
				    VE);
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
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}};
	coverage(qo_model(true, 2, 2, true), cfg_qo, 2, lays, 3);
	/* TP 8: 8 vision heads (4 do not split 8 ways) */
	static const char cfg8[] = CFG("", TEXT_KEYS(""), VIS_KEYS("8"), AUD_KEYS("2", "64"));
	static const uint32_t l8[][2] = {{8, 1}};
	coverage(qo_model(true, 2, 2, true), cfg8, 2, l8, 1);
}

/* The classes' defaults: thinker_config absent (every class default: Qwen2.5-Omni-7B's
 * thinker) or with empty sub-configs; text_config's model_type whatever it says. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const cls[] = {
	    "{\"architectures\":[\"Qwen2_5OmniForConditionalGeneration\"],\"model_type\":"
	    "\"qwen2_5_omni\",\"tie_word_embeddings\":true}",
	    "{\"architectures\":[\"Qwen2_5OmniModel\"],\"model_type\":\"qwen2_5_omni\","
	    "\"thinker_config\":{\"tie_word_embeddings\":true,\"text_config\":{\"model_type\":"
	    "\"qwen2\"},\"vision_config\":null,\"audio_config\":{}}}"};
	for (size_t i = 0; i < 2; i++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cls[i], strlen(cls[i]), &c, &err), WT_OK);
		assert_true(c.has_audio && c.a_mel == 128 && c.a_layers == 32 && c.a_heads == 20 &&
		            c.a_ffn == 5120 && c.a_d_model == 1280 && c.a_max_pos == 1500 &&
		            c.a_out_dim == 3584);
		assert_true(c.has_vision && c.v_depth == 32 && c.v_hidden_size == 3584 &&
		            c.v_intermediate_size == 3420 && c.v_num_heads == 16 &&
		            c.v_in_chans == 3 && c.v_patch_size == 14 &&
		            c.v_spatial_merge_size == 2 && c.v_temporal_patch_size == 2 &&
		            c.v_out_hidden_size == 3584);
		assert_true(c.vocab_size == 152064 && c.hidden_size == 3584 &&
		            c.num_attention_heads == 28 && c.num_key_value_heads == 4 &&
		            c.head_dim == 128 && c.intermediate_size == 18944 &&
		            c.num_hidden_layers == 28 && !c.tie_word_embeddings && !c.tie_given);
		assert_true(c.has_mrope && c.n_mrope == 3 && c.mrope_section[0] == 16 &&
		            c.mrope_section[1] == 24 && c.mrope_section[2] == 24);
		assert_string_equal(c.architecture,
		                    i ? "Qwen2_5OmniModel" : "Qwen2_5OmniForConditionalGeneration");
		ckpt_config_clear(&c);
	}
	/* untied whatever the top level and the thinker say: lm_head needed */
	fx_refused(qo_model(false, 2, 2, false), cfg_qo, WT_ENOTFOUND, "thinker.lm_head.weight",
	           "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] =
	    CFG("", TEXT_KEYS(",\"tie_word_embeddings\":true"), VIS_KEYS("4"), AUD_KEYS("2", "64"));
	fx f;
	fx_open(&f, qo_model(false, 2, 2, false), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* missing, of another shape, past the counts, unknown */
	tm_model *m = qo_model(true, 2, 2, false);
	tm_remove(m, VT "blocks.1.attn.k.bias");
	fx_refused(m, cfg_qo, WT_ENOTFOUND, VT "blocks.1.attn.k.bias", "");
	m = qo_model(true, 2, 2, false);
	tm_remove(m, AT "layers.1.fc2.bias");
	fx_refused(m, cfg_qo, WT_ENOTFOUND, AT "layers.1.fc2.bias", "");
	m = qo_model(true, 2, 2, false);
	tm_remove(m, AT "conv1.weight");
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, MEL * 2, 3);
	fx_refused(m, cfg_qo, WT_ESHAPE, AT "conv1.weight", "");
	m = qo_model(true, 2, 2, false);
	tm_remove(m, AT "proj.weight");
	tm_add2(m, AT "proj.weight", HID, VE);
	fx_refused(m, cfg_qo, WT_ESHAPE, AT "proj.weight", "");
	fx_refused(qo_model(true, 2, 3, false), cfg_qo, WT_ESHAPE, "audio encoder layer 2",
	           "thinker_config.audio_config.encoder_layers is 2");
	fx_refused(qo_model(true, 3, 2, false), cfg_qo, WT_ESHAPE, "vision block 2",
	           "thinker_config.vision_config.depth is 2");
	m = qo_model(true, 2, 2, false);
	tm_add2(m, AT "layers.0.self_attn.k_proj.bias", AE, 0);
	fx_refused(m, cfg_qo, WT_EUNSUPPORTED, AT "layers.0.self_attn.k_proj.bias", "");
	m = qo_model(true, 2, 2, false); /* a non-persistent buffer: not saved */
	tm_add2(m, AT "positional_embedding.positional_embedding", 1500, AE);
	fx_refused(m, cfg_qo, WT_EUNSUPPORTED, AT "positional_embedding", "");
	m = qo_model(true, 2, 2, false); /* Qwen2.5-VL's fused name: not this tower's */
	tm_add2(m, VT "blocks.0.attn.qkv.weight", 3 * VE, VE);
	fx_refused(m, cfg_qo, WT_EUNSUPPORTED, VT "blocks.0.attn.qkv.weight", "");
	/* heads: 3 do not divide the vision width 32; 4 at TP 8; audio 3 do not divide 16 */
	static const char cfg3v[] = CFG("", TEXT_KEYS(""), VIS_KEYS("3"), AUD_KEYS("2", "64"));
	fx_refused(qo_model(true, 2, 2, false), cfg3v, WT_ECORRUPT,
	           "thinker_config.vision_config.num_heads 3 does not divide hidden_size 32", "");
	fx_refused_tp(qo_model(true, 2, 2, false), cfg_qo, 8, WT_ELAYOUT, VT "blocks.",
	              "thinker_config.vision_config.num_heads 4");
	static const char cfg3a[] = CFG("", TEXT_KEYS(""), VIS_KEYS("4"), AUD_KEYS("3", "64"));
	fx_refused(qo_model(true, 2, 2, false), cfg3a, WT_ECORRUPT,
	           "audio_config.d_model 16 must be even and divisible by "
	           "encoder_attention_heads 3",
	           "");
	/* the encoder's output and the merger's are the language model's input */
	static const char cfg_out[] = CFG("", TEXT_KEYS(""), VIS_KEYS("4"), AUD_KEYS("2", "32"));
	fx_refused(qo_model(true, 2, 2, false), cfg_out, WT_ECORRUPT,
	           "thinker_config.audio_config.output_dim 32", "hidden_size 64");
	static const char cfg_vout[] =
	    CFG("", TEXT_KEYS(""),
	        "\"vision_config\":{\"depth\":2,\"hidden_size\":32,\"intermediate_size\":64,"
	        "\"num_heads\":4,\"patch_size\":2,\"out_hidden_size\":32}",
	        AUD_KEYS("2", "64"));
	fx_refused(qo_model(true, 2, 2, false), cfg_vout, WT_ECORRUPT,
	           "vision_config.out_hidden_size 32", "hidden_size 64");
	/* MRoPE sections: Qwen2_5OmniTextConfig's [16, 24, 24] default does not fit head_dim 8 */
	static const char cfg_mr[] =
	    CFG("",
	        "\"text_config\":{\"hidden_size\":64,\"num_attention_heads\":8,"
	        "\"num_key_value_heads\":2,\"intermediate_size\":128,\"vocab_size\":128,"
	        "\"num_hidden_layers\":1}",
	        VIS_KEYS("4"), AUD_KEYS("2", "64"));
	fx_refused(qo_model(true, 2, 2, false), cfg_mr, WT_ECORRUPT, "mrope_section sums to 64",
	           "head_dim/2 = 4");
	/* sub-configs that are not objects, a bad size */
	static const char cfg_nt[] = "{\"architectures\":[\"Qwen2_5OmniForConditionalGeneration\"],"
	                             "\"model_type\":\"qwen2_5_omni\",\"thinker_config\":7}";
	fx_refused(qo_model(true, 2, 2, false), cfg_nt, WT_ECORRUPT, "'thinker_config' is not", "");
	static const char cfg_na[] = CFG("", TEXT_KEYS(""), VIS_KEYS("4"), "\"audio_config\":[]");
	fx_refused(qo_model(true, 2, 2, false), cfg_na, WT_ECORRUPT,
	           "'thinker_config.audio_config' is not", "");
	static const char cfg_nv[] =
	    CFG("", TEXT_KEYS(""), "\"vision_config\":1", AUD_KEYS("2", "64"));
	fx_refused(qo_model(true, 2, 2, false), cfg_nv, WT_ECORRUPT,
	           "'thinker_config.vision_config' is not", "");
	static const char cfg_bad[] =
	    CFG("", TEXT_KEYS(""), VIS_KEYS("4"), "\"audio_config\":{\"d_model\":0}");
	fx_refused(qo_model(true, 2, 2, false), cfg_bad, WT_ECORRUPT, "thinker_config.audio_config",
	           "d_model");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage),    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
