/*
 * test_shardmap_whisper.c — Whisper (WhisperForConditionalGeneration, docs/format.md section
 * 2.7): the encoder `model.encoder.*` as Voxtral's audio tower (vLLM's WhisperEncoder: q/k/v
 * fused into qkv_proj by heads, the bias [q_r; zeros; v_r] since k_proj has none, out_proj by
 * columns, fc1 by rows with its bias, fc2 by columns; convs, positions, LayerNorms and the
 * row-parallel biases whole); the decoder `model.decoder.*`: self_attn as the encoder's,
 * encoder_attn's q_proj by rows with its bias, k_proj / v_proj fused into kv_proj ([k_r; v_r],
 * the bias [zeros; v_r]), out_proj by columns, fc1 / fc2; embed_tokens (a plain nn.Embedding
 * in vLLM), embed_positions and LayerNorms whole; the Linears quantized and nothing else; a
 * stray proj_out.weight skipped; exact shapes, coverage at TP 1, 2, 4, 8, WhisperConfig's
 * defaults and the refusals. Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x3415ull
#include "test_shardmap_fx.h"

/* d_model 32; encoder 8 heads of 4, encoder_ffn_dim 64, 2 layers, 8 mel bins, 6 positions;
 * decoder 4 heads of 8, decoder_ffn_dim 96, 2 layers, V 100, 10 positions. */
#define E    32
#define AI   64
#define DI   96
#define MEL  8
#define SPOS 6
#define TPOS 10
#define V    100

#define CFG_AT(dh, eh, el, extra)                                                                  \
	"{\"architectures\":[\"WhisperForConditionalGeneration\"],\"model_type\":\"whisper\","     \
	"\"d_model\":32,\"vocab_size\":100,\"num_mel_bins\":8,\"encoder_layers\":" el              \
	",\"encoder_attention_heads\":" eh ",\"encoder_ffn_dim\":64,\"decoder_layers\":2,"         \
	"\"decoder_attention_heads\":" dh ",\"decoder_ffn_dim\":96,\"num_hidden_layers\":" el      \
	",\"max_source_positions\":6,\"max_target_positions\":10" extra "}"
#define CFG(dh, eh, extra) CFG_AT(dh, eh, "2", extra)
static const char cfg_wh[] = CFG("4", "8", "");

#define EN "model.encoder."
#define EB EN "layers.%d."
#define DE "model.decoder."
#define DB DE "layers.%d."

/* an encoder layer's tensors, a decoder layer's self-attention and MLP (0 columns: 1-D) */
static const fx_leaf elayer[] = {FX_WHISPER_LAYER_LEAVES(E, AI)};
static const fx_leaf dlayer[] = {
    FX_WHISPER_LAYER_LEAVES(E, DI),           {"encoder_attn.q_proj.weight", E, E},
    {"encoder_attn.q_proj.bias", E, 0},       {"encoder_attn.k_proj.weight", E, E},
    {"encoder_attn.v_proj.weight", E, E},     {"encoder_attn.v_proj.bias", E, 0},
    {"encoder_attn.out_proj.weight", E, E},   {"encoder_attn.out_proj.bias", E, 0},
    {"encoder_attn_layer_norm.weight", E, 0}, {"encoder_attn_layer_norm.bias", E, 0},
};

/* whole on every rank (with conv1 / conv2) */
static const struct {
	const char *name;
	int64_t n, k;
} top[] = {
    {EN "conv1.bias", E, 0},
    {EN "conv2.bias", E, 0},
    {EN "embed_positions.weight", SPOS, E},
    {EN "layer_norm.weight", E, 0},
    {EN "layer_norm.bias", E, 0},
    {DE "embed_tokens.weight", V, E},
    {DE "embed_positions.weight", TPOS, E},
    {DE "layer_norm.weight", E, 0},
    {DE "layer_norm.bias", E, 0},
};

/* The model with `elayers` encoder layers, `dlayers` decoder layers. */
static tm_model *wh_model(int elayers, int dlayers)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	tm_add(m, EN "conv1.weight", WT_DTYPE_INVALID, 3, E, MEL, 3);
	tm_add(m, EN "conv2.weight", WT_DTYPE_INVALID, 3, E, E, 3);
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		tm_add2(m, top[k].name, top[k].n, top[k].k);
	for (int l = 0; l < elayers; l++)
		for (size_t k = 0; k < sizeof(elayer) / sizeof(elayer[0]); k++) {
			snprintf(b, sizeof(b), EB "%s", l, elayer[k].leaf);
			tm_add2(m, b, elayer[k].n, elayer[k].k);
		}
	for (int l = 0; l < dlayers; l++)
		for (size_t k = 0; k < sizeof(dlayer) / sizeof(dlayer[0]); k++) {
			snprintf(b, sizeof(b), DB "%s", l, dlayer[k].leaf);
			tm_add2(m, b, dlayer[k].n, dlayer[k].k);
		}
	return m;
}

/* Rank r's self-attention + MLP layer under fmt (EB or DB) l at TP T, MLP width I: q/k/v rows
 * fused, the bias's k rows zero, out_proj / fc2 columns, fc1 rows with its bias, the rest
 * whole. */
static void check_layer(const fx *f, uint32_t T, uint32_t r, const char *fmt, int l, int64_t I)
{
	char n[200], a[200], p[100];
	int64_t ql = E / T, il = I / T;
	snprintf(p, sizeof(p), fmt, l);
	snprintf(n, sizeof(n), "%sself_attn.qkv_proj.weight", p);
	shp(f, r, n, 2, 3 * ql, E, 0);
	static const char *const qkv[] = {"q", "k", "v"};
	for (int k = 0; k < 3; k++) {
		snprintf(a, sizeof(a), "%sself_attn.%s_proj.weight", p, qkv[k]);
		rows_at(f, r, n, k * ql, a, r * ql, ql);
	}
	snprintf(n, sizeof(n), "%sself_attn.qkv_proj.bias", p);
	shp(f, r, n, 1, 3 * ql, 0, 0);
	snprintf(a, sizeof(a), "%sself_attn.q_proj.bias", p);
	rows_at(f, r, n, 0, a, r * ql, ql);
	snprintf(a, sizeof(a), "%sself_attn.v_proj.bias", p);
	rows_at(f, r, n, 2 * ql, a, r * ql, ql);
	const uint8_t *z = out_bytes(f, r, n) + ql * 2;
	for (int64_t k = 0; k < ql * 2; k++)
		assert_int_equal(z[k], 0);
	snprintf(n, sizeof(n), "%sself_attn.out_proj.weight", p);
	cols_of(f, r, T, n, n, E, E);
	snprintf(n, sizeof(n), "%sfc1.weight", p);
	rows_at(f, r, n, 0, n, r * il, il);
	shp(f, r, n, 2, il, E, 0);
	snprintf(n, sizeof(n), "%sfc1.bias", p);
	rows_at(f, r, n, 0, n, r * il, il);
	snprintf(n, sizeof(n), "%sfc2.weight", p);
	cols_of(f, r, T, n, n, E, I);
	static const char *const whole[] = {
	    "self_attn.out_proj.bias",   "self_attn_layer_norm.weight",
	    "self_attn_layer_norm.bias", "fc2.bias",
	    "final_layer_norm.weight",   "final_layer_norm.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), "%s%s", p, whole[k]);
		repl(f, r, n);
	}
}

/* Rank r's cross-attention of decoder layer l: q rows with its bias, kv_proj [k_r; v_r] and
 * its bias [zeros; v_r], out_proj columns, its bias and the LayerNorm whole. */
static void check_cross(const fx *f, uint32_t T, uint32_t r, int l)
{
	char n[200], a[200];
	int64_t ql = E / T;
	snprintf(n, sizeof(n), DB "encoder_attn.q_proj.weight", l);
	rows_at(f, r, n, 0, n, r * ql, ql);
	shp(f, r, n, 2, ql, E, 0);
	snprintf(n, sizeof(n), DB "encoder_attn.q_proj.bias", l);
	rows_at(f, r, n, 0, n, r * ql, ql);
	shp(f, r, n, 1, ql, 0, 0);
	snprintf(n, sizeof(n), DB "encoder_attn.kv_proj.weight", l);
	shp(f, r, n, 2, 2 * ql, E, 0);
	snprintf(a, sizeof(a), DB "encoder_attn.k_proj.weight", l);
	rows_at(f, r, n, 0, a, r * ql, ql);
	snprintf(a, sizeof(a), DB "encoder_attn.v_proj.weight", l);
	rows_at(f, r, n, ql, a, r * ql, ql);
	snprintf(n, sizeof(n), DB "encoder_attn.kv_proj.bias", l);
	shp(f, r, n, 1, 2 * ql, 0, 0);
	snprintf(a, sizeof(a), DB "encoder_attn.v_proj.bias", l);
	rows_at(f, r, n, ql, a, r * ql, ql);
	const uint8_t *z = out_bytes(f, r, n);
	for (int64_t k = 0; k < ql * 2; k++)
		assert_int_equal(z[k], 0);
	snprintf(n, sizeof(n), DB "encoder_attn.out_proj.weight", l);
	cols_of(f, r, T, n, n, E, E);
	static const char *const whole[] = {"encoder_attn.out_proj.bias",
	                                    "encoder_attn_layer_norm.weight",
	                                    "encoder_attn_layer_norm.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), DB "%s", l, whole[k]);
		repl(f, r, n);
	}
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	for (int l = 0; l < 2; l++) {
		check_layer(f, T, r, EB, l, AI);
		check_layer(f, T, r, DB, l, DI);
		check_cross(f, T, r, l);
	}
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		repl(f, r, top[k].name);
	repl(f, r, EN "conv1.weight");
	repl(f, r, EN "conv2.weight");
	shp(f, r, EN "conv1.weight", 3, E, MEL, 3);
	shp(f, r, DE "embed_tokens.weight", 2, V, E, 0); /* whole: no vocabulary padding */
	assert_int_equal(tm_ix(f->p, r, "proj_out.weight"), -1);
	/* encoder layers 12 (q/k/v and their biases fused), decoder layers 12 + 8 (k/v and
	 * their biases fused); conv1 / conv2 and the 9 above */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 2 * 12 + 2 * 20 + 2 + 9);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, wh_model(2, 2), cfg_wh, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_true(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 0);
		fx_close(&f);
	}
}

/* A stray proj_out.weight (vLLM's skip_prefixes) is skipped and listed, the rest the same. */
static void test_proj_out(void **state)
{
	(void)state;
	tm_model *m = wh_model(2, 2);
	tm_add2(m, "proj_out.weight", V, E);
	fx f;
	fx_open(&f, m, cfg_wh, 2, 1, 0, true);
	assert_int_equal(shardmap_n_skipped(f.p), 1);
	for (uint32_t r = 0; r < 2; r++)
		check_rank(&f, 2, r);
	fx_close(&f);
}

/* A quantized layout at rank 1 of TP 2: the encoder's and the decoder's Linears quantized
 * (int8: fc1 and kv_proj row by row), convs, positions, embed_tokens, norms and biases kept
 * BF16 without a scale. */
static void check_quant(wt_quant q, int qdt)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = q;
	fx f;
	fx_open_l(&f, wh_model(2, 2), cfg_wh, &l, true);
	static const char *const keep[] = {EN "conv1.weight",
	                                   EN "conv2.weight",
	                                   EN "embed_positions.weight",
	                                   EN "layers.1.fc1.bias",
	                                   EN "layers.1.self_attn.qkv_proj.bias",
	                                   DE "embed_tokens.weight",
	                                   DE "embed_positions.weight",
	                                   DE "layer_norm.weight",
	                                   DE "layers.0.encoder_attn.kv_proj.bias",
	                                   DE "layers.0.encoder_attn.q_proj.bias",
	                                   DE "layers.1.encoder_attn_layer_norm.weight"};
	static const char *const qw[] = {EN "layers.0.self_attn.qkv_proj.weight",
	                                 EN "layers.1.self_attn.out_proj.weight",
	                                 EN "layers.1.fc1.weight",
	                                 EN "layers.1.fc2.weight",
	                                 DE "layers.0.self_attn.qkv_proj.weight",
	                                 DE "layers.0.self_attn.out_proj.weight",
	                                 DE "layers.1.encoder_attn.q_proj.weight",
	                                 DE "layers.1.encoder_attn.kv_proj.weight",
	                                 DE "layers.1.encoder_attn.out_proj.weight",
	                                 DE "layers.1.fc1.weight",
	                                 DE "layers.1.fc2.weight"};
	fx_quant_split_as(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), qw,
	                  sizeof(qw) / sizeof(qw[0]), qdt);
	repl(&f, 1, DE "embed_tokens.weight");
	if (q == WT_QUANT_INT8_CHANNEL) {
		/* fc1's codes: rank 1's rows [32, 64) row by row */
		const int8_t *c = (const int8_t *)out_bytes(&f, 1, EN "layers.1.fc1.weight");
		const float *s = (const float *)out_bytes(&f, 1, EN "layers.1.fc1.weight_scale");
		size_t rowb;
		for (int64_t row = 0; row < AI / 2; row++)
			int8_row_is(c + row * E, s[row],
			            (const uint16_t *)src_rows(&f, EN "layers.1.fc1.weight",
			                                       AI / 2 + row, &rowb),
			            E);
		/* kv_proj's codes: k rows [16, 32), then v rows [16, 32) */
		const char *kv = DE "layers.1.encoder_attn.kv_proj.weight";
		c = (const int8_t *)out_bytes(&f, 1, kv);
		s = (const float *)out_bytes(&f, 1,
		                             DE "layers.1.encoder_attn.kv_proj.weight_scale");
		for (int64_t row = 0; row < E; row++)
			int8_row_is(c + row * E, s[row],
			            (const uint16_t *)src_rows(
			                &f,
			                row < E / 2 ? DE "layers.1.encoder_attn.k_proj.weight"
			                            : DE "layers.1.encoder_attn.v_proj.weight",
			                E / 2 + row % (E / 2), &rowb),
			            E);
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
	coverage(wh_model(2, 2), cfg_wh, 4, lays, 3);
	static const char cfg8[] = CFG("8", "8", "");
	static const uint32_t l8[][2] = {{8, 1}};
	coverage(wh_model(2, 2), cfg8, 8, l8, 1);
}

/* WhisperConfig's defaults (whisper-tiny's: d_model 384, 4 + 4 layers of 6 heads, ffn 1536,
 * 80 mel bins, 1500 / 448 positions, V 51865), the decoder's keys read as the language
 * model's (num_hidden_layers, which the class sets to encoder_layers, is not), tied when
 * tie_word_embeddings is absent. */
static void test_defaults(void **state)
{
	(void)state;
	static const char *const cls[] = {
	    "{\"architectures\":[\"WhisperForConditionalGeneration\"],\"model_type\":\"whisper\"}",
	    "{\"architectures\":[\"WhisperForConditionalGeneration\"],\"model_type\":\"whisper\","
	    "\"num_hidden_layers\":32,\"hidden_size\":null}"};
	for (size_t i = 0; i < 2; i++) {
		ckpt_config c;
		wt_errbuf err = {0};
		assert_int_equal(ckpt_config_parse(cls[i], strlen(cls[i]), &c, &err), WT_OK);
		assert_true(c.has_audio && c.a_mel == 80 && c.a_layers == 4 && c.a_heads == 6 &&
		            c.a_ffn == 1536 && c.a_d_model == 384 && c.a_max_pos == 1500 &&
		            c.rob_max_pos == 448);
		assert_true(c.vocab_size == 51865 && c.hidden_size == 384 &&
		            c.num_attention_heads == 6 && c.num_key_value_heads == 6 &&
		            c.head_dim == 64 && c.intermediate_size == 1536 &&
		            c.num_hidden_layers == 4 && !c.tie_given);
		ckpt_config_clear(&c);
	}
	/* whisper-large-v3's: the decoder's keys over the encoder's */
	static const char lg[] =
	    "{\"architectures\":[\"WhisperForConditionalGeneration\"],\"model_type\":\"whisper\","
	    "\"d_model\":1280,\"encoder_layers\":32,\"decoder_layers\":2,\"num_hidden_layers\":32,"
	    "\"encoder_attention_heads\":20,\"decoder_attention_heads\":10,\"decoder_ffn_dim\":"
	    "5000,\"encoder_ffn_dim\":5120,\"num_mel_bins\":128,\"vocab_size\":51866,"
	    "\"head_dim\":7,\"num_key_value_heads\":20}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(lg, strlen(lg), &c, &err), WT_OK);
	assert_true(c.a_layers == 32 && c.a_heads == 20 && c.a_ffn == 5120 && c.a_mel == 128 &&
	            c.a_d_model == 1280 && c.hidden_size == 1280 && c.num_hidden_layers == 2 &&
	            c.num_attention_heads == 10 && c.num_key_value_heads == 10 &&
	            c.head_dim == 128 && c.intermediate_size == 5000 && c.vocab_size == 51866);
	ckpt_config_clear(&c);
	fx f; /* tie_word_embeddings true given: the same */
	fx_open(&f, wh_model(2, 2), CFG("4", "8", ",\"tie_word_embeddings\":true"), 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

static void test_errors(void **state)
{
	(void)state;
	/* untied: vLLM ties proj_out whatever the config says */
	fx_refused(wh_model(2, 2), CFG("4", "8", ",\"tie_word_embeddings\":false"), WT_EUNSUPPORTED,
	           "tie_word_embeddings false", "proj_out");
	/* a tensor missing, of another shape, past the layer counts, unknown */
	tm_model *m = wh_model(2, 2);
	tm_remove(m, DE "layers.1.encoder_attn.v_proj.bias");
	fx_refused(m, cfg_wh, WT_ENOTFOUND, DE "layers.1.encoder_attn.v_proj.bias", "");
	m = wh_model(2, 2);
	tm_remove(m, DE "embed_positions.weight");
	tm_add2(m, DE "embed_positions.weight", TPOS + 1, E);
	fx_refused(m, cfg_wh, WT_ESHAPE, DE "embed_positions.weight", "");
	m = wh_model(2, 2);
	tm_remove(m, DE "layers.0.fc1.weight");
	tm_add2(m, DE "layers.0.fc1.weight", AI, E);
	fx_refused(m, cfg_wh, WT_ESHAPE, DE "layers.0.fc1.weight", "");
	fx_refused(wh_model(3, 2), cfg_wh, WT_ESHAPE, "encoder block 2", "encoder_layers is 2");
	fx_refused(wh_model(2, 3), cfg_wh, WT_ESHAPE, "layer 2", "decoder_layers is 2");
	m = wh_model(2, 2);
	tm_add2(m, DE "layers.0.encoder_attn.k_proj.bias", E, 0);
	fx_refused(m, cfg_wh, WT_EUNSUPPORTED, DE "layers.0.encoder_attn.k_proj.bias", "");
	m = wh_model(2, 2);
	tm_add2(m, EN "layers.0.self_attn.k_proj.bias", E, 0);
	fx_refused(m, cfg_wh, WT_EUNSUPPORTED, EN "layers.0.self_attn.k_proj.bias", "");
	/* heads that do not split d_model; TP past the heads (WhisperAttention asserts) */
	fx_refused(wh_model(2, 2), CFG("4", "3", ""), WT_ECORRUPT,
	           "encoder_attention_heads 3 does not divide d_model 32", "");
	fx_refused(wh_model(2, 2), CFG("5", "8", ""), WT_ECORRUPT,
	           "decoder_attention_heads 5 does not divide d_model 32", "");
	fx_refused_tp(wh_model(2, 2), cfg_wh, 8, WT_ELAYOUT, "model.decoder.layers.",
	              "decoder_attention_heads 4");
	fx_refused_tp(wh_model(2, 2), CFG("8", "4", ""), 8, WT_ELAYOUT, "model.encoder.layers.",
	              "encoder_attention_heads 4");
	static const char cfg0[] = CFG_AT("4", "8", "0", "");
	fx_refused(wh_model(2, 2), cfg0, WT_ECORRUPT, "encoder_layers", ">= 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices), cmocka_unit_test(test_proj_out),
	    cmocka_unit_test(test_quant),       cmocka_unit_test(test_coverage),
	    cmocka_unit_test(test_defaults),    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
