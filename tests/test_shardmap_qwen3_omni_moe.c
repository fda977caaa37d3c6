/*
 * test_shardmap_qwen3_omni_moe.c — Qwen3-Omni's thinker (Qwen3OmniMoeForConditionalGeneration,
 * docs/format.md section 2.7): the Qwen3-MoE language model under thinker. (q/k/v by heads,
 * o_proj by columns, q_norm / k_norm and the router replicated, the experts' gate / up rows
 * into w13 and down columns into w2, the dense layer's gate_up / down_proj, vocabulary rows),
 * the vision tower thinker.visual.* as vLLM's Qwen3Omni_VisionTransformer loads it (the fused
 * attn.qkv by heads with its bias, proj by columns, linear_fc1 rows / linear_fc2 columns, the
 * merger's and each merger_list entry's mlp.0 rows / mlp.2 columns, ln_q whole), the audio
 * encoder thinker.audio_tower.* whole and never quantized (vLLM builds transformers'
 * Qwen3OmniMoeAudioEncoder), talker.* / code2wav.* skipped, exact shapes, int8 / fp8
 * quantization of the split Linears only, coverage at TP 1, 2, 4, 8 and EP 2, the classes'
 * defaults of the nested thinker_config, the tie from text_config only, and the refusals.
 * Seed fixed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap_int.h"
#include "test_shardmap_util.h"

#define SEED 0x03a0ull
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"

/* LM: hid 64, H 8, KV 2, d 8, V 128, L 2 (layer 0: 4 experts of 16; layer 1 dense by
 * mlp_only_layers, I 128), MRoPE [2, 1, 1]. Vision: width 32, 4 heads, MLP 64, 2 blocks,
 * patch 2, temporal 2, merge 2 (merger 128), 16 positions, deepstack after blocks 0 and 1.
 * Audio: d_model 16, 2 heads, ffn 48, 2 layers, 16 mel bins, stem 4 channels (conv_out
 * 4 x 2 = 8 columns), output_dim 64. */
#define HID 64
#define VE  32
#define VI  64
#define VM  128
#define AE  16
#define AI  48
#define DH  4
#define CO  8
#define E   4
#define IE  16

#define TEXT_KEYS(rope, extra)                                                                     \
	"\"text_config\":{\"model_type\":\"qwen3_omni_moe_text\",\"hidden_size\":64,"              \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":8,"                      \
	"\"intermediate_size\":128,\"vocab_size\":128,\"num_hidden_layers\":2,\"num_experts\":4,"  \
	"\"num_experts_per_tok\":2,\"moe_intermediate_size\":16,\"mlp_only_layers\":[1]" rope      \
	    extra "}"
#define ROPE ",\"rope_scaling\":{\"mrope_section\":[2,1,1],\"interleaved\":true}"
#define VIS_KEYS(heads, deep)                                                                      \
	"\"vision_config\":{\"depth\":2,\"hidden_size\":32,\"intermediate_size\":64,"              \
	"\"num_heads\":" heads ",\"in_channels\":3,\"patch_size\":2,\"temporal_patch_size\":2,"    \
	"\"spatial_merge_size\":2,\"out_hidden_size\":64,\"num_position_embeddings\":16,"          \
	"\"deepstack_visual_indexes\":" deep "}"
#define AUD_KEYS(heads, out)                                                                       \
	"\"audio_config\":{\"d_model\":16,\"encoder_attention_heads\":" heads                      \
	",\"encoder_ffn_dim\":48,\"encoder_layers\":2,\"num_mel_bins\":16,"                        \
	"\"downsample_hidden_size\":4,\"output_dim\":" out "}"
#define CFG(top, text, vis, aud)                                                                   \
	"{\"architectures\":[\"Qwen3OmniMoeForConditionalGeneration\"],\"model_type\":"            \
	"\"qwen3_omni_moe\"," top "\"thinker_config\":{" text "," vis "," aud "}}"
/* untied (Qwen3OmniMoeTextConfig's default; the top level's and the thinker's true are not
 * the text model's) */
static const char cfg_q3o[] = CFG("\"tie_word_embeddings\":true,\"enable_audio_output\":true,",
                                  TEXT_KEYS(ROPE, ""), VIS_KEYS("4", "[0,1]"), AUD_KEYS("2", "64"));

#define TM "thinker.model."
#define L0 TM "layers.0."
#define L1 TM "layers.1."
#define VB "thinker.visual.blocks.%d."
#define VT "thinker.visual."
#define AT "thinker.audio_tower."
#define AB AT "layers.%d."

#define W13 L0 "mlp.experts.w13_weight"
#define W2  L0 "mlp.experts.w2_weight"

/* Layer 0's stacked experts against their leaves (test_shardmap_experts.h). */
static const fx_experts XP = {
    W13, W2, L0 "mlp.experts.%lld.%s.weight", "gate_proj", "up_proj", "down_proj", HID, IE};

/* an audio encoder layer's tensors (Qwen3-Omni's k_proj has a bias) */
static const fx_leaf alayer[] = {FX_WHISPER_LAYER_LEAVES(AE, AI), {"self_attn.k_proj.bias", AE, 0}};

/* a vision block's tensors */
static const fx_leaf vblock[] = {
    {"norm1.weight", VE, 0},           {"norm1.bias", VE, 0},
    {"norm2.weight", VE, 0},           {"norm2.bias", VE, 0},
    {"attn.qkv.weight", 3 * VE, VE},   {"attn.qkv.bias", 3 * VE, 0},
    {"attn.proj.weight", VE, VE},      {"attn.proj.bias", VE, 0},
    {"mlp.linear_fc1.weight", VI, VE}, {"mlp.linear_fc1.bias", VI, 0},
    {"mlp.linear_fc2.weight", VE, VI}, {"mlp.linear_fc2.bias", VE, 0},
};

/* whole on every rank (besides the convolutions, the patch embed and the encoder layers) */
static const fx_leaf top[] = {
    {VT "patch_embed.proj.bias", VE, 0},
    {VT "pos_embed.weight", 16, VE},
    {VT "merger.ln_q.weight", VE, 0},
    {VT "merger.ln_q.bias", VE, 0},
    {VT "merger.mlp.2.bias", HID, 0},
    {AT "conv2d1.bias", DH, 0},
    {AT "conv2d2.bias", DH, 0},
    {AT "conv2d3.bias", DH, 0},
    {AT "conv_out.weight", AE, CO},
    {AT "ln_post.weight", AE, 0},
    {AT "ln_post.bias", AE, 0},
    {AT "proj1.weight", AE, AE},
    {AT "proj1.bias", AE, 0},
    {AT "proj2.weight", HID, AE},
    {AT "proj2.bias", HID, 0},
};

static void add4(tm_model *m, const char *n, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, n, WT_DTYPE_INVALID, 1, a * b * c * d, 0, 0);
	st_desc *s = &m->d[m->n - 1];
	s->ndim = 4;
	s->shape[0] = a;
	s->shape[1] = b;
	s->shape[2] = c;
	s->shape[3] = d;
}

/* The language model: layer 0 MoE, layer 1 dense; lm_head when asked. */
static void q3o_lm(tm_model *m, bool lm_head)
{
	char b[200];
	static const fx_leaf attn[] = {
	    {"input_layernorm.weight", HID, 0},   {"post_attention_layernorm.weight", HID, 0},
	    {"self_attn.q_proj.weight", 64, HID}, {"self_attn.k_proj.weight", 16, HID},
	    {"self_attn.v_proj.weight", 16, HID}, {"self_attn.o_proj.weight", HID, 64},
	    {"self_attn.q_norm.weight", 8, 0},    {"self_attn.k_norm.weight", 8, 0}};
	tm_add2(m, TM "embed_tokens.weight", 128, HID);
	tm_add2(m, TM "norm.weight", HID, 0);
	for (int l = 0; l < 2; l++)
		for (size_t k = 0; k < sizeof(attn) / sizeof(attn[0]); k++) {
			snprintf(b, sizeof(b), TM "layers.%d.%s", l, attn[k].leaf);
			tm_add2(m, b, attn[k].n, attn[k].k);
		}
	tm_add2(m, L0 "mlp.gate.weight", E, HID);
	for (int j = 0; j < E; j++) {
		static const char *const g[] = {"gate_proj", "up_proj", "down_proj"};
		for (int p = 0; p < 3; p++) {
			snprintf(b, sizeof(b), L0 "mlp.experts.%d.%s.weight", j, g[p]);
			tm_add2(m, b, p == 2 ? HID : IE, p == 2 ? IE : HID);
		}
	}
	tm_add2(m, L1 "mlp.gate_proj.weight", 128, HID);
	tm_add2(m, L1 "mlp.up_proj.weight", 128, HID);
	tm_add2(m, L1 "mlp.down_proj.weight", HID, 128);
	if (lm_head)
		tm_add2(m, "thinker.lm_head.weight", 128, HID);
}

/* The language model, the vision tower of vblocks blocks and deep merger_list entries, the
 * audio encoder of alayers layers and, when speech, two tensors of the speech generator. */
static tm_model *q3o_model(bool lm_head, int vblocks, int deep, int alayers, bool speech)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	char b[200];
	q3o_lm(m, lm_head);
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
	for (int k = 0; k < deep; k++) {
		static const fx_leaf ml[] = {{"ln_q.weight", VM, 0},    {"ln_q.bias", VM, 0},
		                             {"mlp.0.weight", VM, VM},  {"mlp.0.bias", VM, 0},
		                             {"mlp.2.weight", HID, VM}, {"mlp.2.bias", HID, 0}};
		for (size_t x = 0; x < sizeof(ml) / sizeof(ml[0]); x++) {
			snprintf(b, sizeof(b), VT "merger_list.%d.%s", k, ml[x].leaf);
			tm_add2(m, b, ml[x].n, ml[x].k);
		}
	}
	add4(m, AT "conv2d1.weight", DH, 1, 3, 3);
	add4(m, AT "conv2d2.weight", DH, DH, 3, 3);
	add4(m, AT "conv2d3.weight", DH, DH, 3, 3);
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		tm_add2(m, top[k].leaf, top[k].n, top[k].k);
	for (int l = 0; l < alayers; l++)
		for (size_t k = 0; k < sizeof(alayer) / sizeof(alayer[0]); k++) {
			snprintf(b, sizeof(b), AB "%s", l, alayer[k].leaf);
			tm_add2(m, b, alayer[k].n, alayer[k].k);
		}
	if (speech) {
		tm_add2(m, "talker.codec_head.weight", 8, HID);
		tm_add2(m, "code2wav.code_embedding.weight", 4, 4);
	}
	return m;
}

/* Rank r's vision block l at TP T: the fused qkv (weight and bias) rows by heads, proj /
 * linear_fc2 columns, linear_fc1 rows (its bias alike), the rest whole. */
static void check_vblock(const fx *f, uint32_t T, uint32_t r, int l)
{
	char n[200];
	int64_t vl = VE / T, il = VI / T;
	for (int w = 0; w < 2; w++) {
		snprintf(n, sizeof(n), VB "attn.qkv.%s", l, w ? "bias" : "weight");
		shp(f, r, n, w ? 1 : 2, 3 * vl, w ? 0 : VE, 0);
		for (int p = 0; p < 3; p++)
			rows_at(f, r, n, p * vl, n, p * VE + r * vl, vl);
		snprintf(n, sizeof(n), VB "mlp.linear_fc1.%s", l, w ? "bias" : "weight");
		rows_at(f, r, n, 0, n, r * il, il);
	}
	snprintf(n, sizeof(n), VB "attn.proj.weight", l);
	cols_of(f, r, T, n, n, VE, VE);
	snprintf(n, sizeof(n), VB "mlp.linear_fc2.weight", l);
	cols_of(f, r, T, n, n, VE, VI);
	static const char *const whole[] = {"norm1.weight",   "norm1.bias",
	                                    "norm2.weight",   "norm2.bias",
	                                    "attn.proj.bias", "mlp.linear_fc2.bias"};
	for (size_t k = 0; k < sizeof(whole) / sizeof(whole[0]); k++) {
		snprintf(n, sizeof(n), VB "%s", l, whole[k]);
		repl(f, r, n);
	}
}

/* Rank r's merger under M (its ln_q whole): mlp.0 rows with its bias, mlp.2 columns. */
static void check_merger(const fx *f, uint32_t T, uint32_t r, const char *M)
{
	char n[200], b[200];
	int64_t ml = VM / T;
	snprintf(n, sizeof(n), "%smlp.0.weight", M);
	rows_at(f, r, n, 0, n, r * ml, ml);
	snprintf(b, sizeof(b), "%smlp.0.bias", M);
	rows_at(f, r, b, 0, b, r * ml, ml);
	snprintf(n, sizeof(n), "%smlp.2.weight", M);
	cols_of(f, r, T, n, n, HID, VM);
	snprintf(n, sizeof(n), "%sln_q.weight", M);
	repl(f, r, n);
}

/* Rank r's language model at TP T (EP 1): q/k/v rows by heads (kv heads replicated past 2),
 * o_proj columns, the experts' gate / up rows into w13 and down columns into w2, the dense
 * layer's gate_up rows and down columns, vocabulary rows, the norms and router whole. */
static void check_lm(const fx *f, uint32_t T, uint32_t r)
{
	int64_t ql = 64 / T, kvh = T == 2 ? r : r / 2, il = IE / T;
	for (int l = 0; l < 2; l++) {
		char q[200], s[200];
		snprintf(q, sizeof(q), TM "layers.%d.self_attn.qkv_proj.weight", l);
		snprintf(s, sizeof(s), TM "layers.%d.self_attn.q_proj.weight", l);
		rows_at(f, r, q, 0, s, r * ql, ql);
		snprintf(s, sizeof(s), TM "layers.%d.self_attn.k_proj.weight", l);
		rows_at(f, r, q, ql, s, kvh * 8, 8);
		snprintf(s, sizeof(s), TM "layers.%d.self_attn.v_proj.weight", l);
		rows_at(f, r, q, ql + 8, s, kvh * 8, 8);
		snprintf(s, sizeof(s), TM "layers.%d.self_attn.o_proj.weight", l);
		cols_of(f, r, T, s, s, HID, 64);
		snprintf(s, sizeof(s), TM "layers.%d.self_attn.q_norm.weight", l);
		repl(f, r, s);
	}
	repl(f, r, L0 "mlp.gate.weight");
	fx_experts_are(f, &XP, r, 0, E, r * il, il, false);
	fx_mlp_is(f, r, T, L1 "mlp.", 128, HID);
	assert_int_equal(tm_ix(f->p, r, L1 "mlp.gate.weight"), -1); /* dense: no router */
	const char *lmh = "thinker.lm_head.weight";
	rows_at(f, r, lmh, 0, lmh, r * (128 / T), 128 / T); /* untied: vocabulary rows */
	rows_at(f, r, TM "embed_tokens.weight", 0, TM "embed_tokens.weight", r * (128 / T),
	        128 / T);
}

static void check_rank(const fx *f, uint32_t T, uint32_t r)
{
	char n[200];
	check_lm(f, T, r);
	for (int l = 0; l < 2; l++) {
		check_vblock(f, T, r, l);
		for (size_t k = 0; k < sizeof(alayer) / sizeof(alayer[0]); k++) {
			snprintf(n, sizeof(n), AB "%s", l, alayer[k].leaf);
			repl(f, r, n);
		}
		snprintf(n, sizeof(n), VT "merger_list.%d.", l);
		check_merger(f, T, r, n);
	}
	check_merger(f, T, r, VT "merger.");
	for (size_t k = 0; k < sizeof(top) / sizeof(top[0]); k++)
		repl(f, r, top[k].leaf);
	repl(f, r, AT "conv2d1.weight");
	repl(f, r, AT "conv2d2.weight");
	repl(f, r, AT "conv2d3.weight");
	repl(f, r, VT "patch_embed.proj.weight");
	/* LM: 3 + layer 0's 9 (norms 2, qkv, o, q/k norm, router, w13, w2) + layer 1's 8;
	 * vision: patch 2, pos 1, 2 blocks x 12, 3 mergers x 6; audio: convs 6, conv_out,
	 * 2 layers x 16, ln_post 2, proj1 / proj2 4 */
	assert_int_equal(shardmap_rank_n_tensors(f->p, r), 20 + 45 + 45);
}

static void test_hand_slices(void **state)
{
	(void)state;
	static const uint32_t tps[] = {2, 4};
	for (size_t i = 0; i < 2; i++) {
		fx f;
		fx_open(&f, q3o_model(true, 2, 2, 2, true), cfg_q3o, tps[i], 1, 0, true);
		for (uint32_t r = 0; r < tps[i]; r++)
			check_rank(&f, tps[i], r);
		assert_false(shardmap_tied_lm_head(f.p));
		assert_int_equal(shardmap_n_skipped(f.p), 2);
		assert_true(fx_skipped(&f, "talker.codec_head.weight"));
		assert_true(fx_skipped(&f, "code2wav.code_embedding.weight"));
		fx_close(&f);
	}
}

/* A quantized layout at rank 1 of TP 2: the LM's and the vision tower's split Linears (the
 * experts too) quantized (int8 codes of the vision qkv row by row), the audio encoder, the
 * patch embed, pos_embed, router, norms, biases and embeddings kept BF16 without a scale. */
static void check_quant(wt_quant q, int qdt)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = q;
	fx f;
	fx_open_l(&f, q3o_model(true, 2, 2, 2, false), cfg_q3o, &l, true);
	static const char *const keep[] = {AT "conv2d1.weight",
	                                   AT "conv_out.weight",
	                                   AT "layers.1.fc1.weight",
	                                   AT "layers.0.self_attn.q_proj.weight",
	                                   AT "proj1.weight",
	                                   AT "proj2.weight",
	                                   VT "patch_embed.proj.weight",
	                                   VT "pos_embed.weight",
	                                   VT "blocks.0.attn.qkv.bias",
	                                   VT "merger_list.1.ln_q.weight",
	                                   L0 "mlp.gate.weight",
	                                   L0 "self_attn.q_norm.weight",
	                                   TM "embed_tokens.weight",
	                                   "thinker.lm_head.weight"};
	static const char *const qw[] = {
	    L0 "mlp.experts.w13_weight",         L0 "mlp.experts.w2_weight",
	    L1 "mlp.gate_up_proj.weight",        L1 "self_attn.qkv_proj.weight",
	    L1 "self_attn.o_proj.weight",        VT "blocks.0.attn.qkv.weight",
	    VT "blocks.1.attn.proj.weight",      VT "blocks.1.mlp.linear_fc1.weight",
	    VT "blocks.1.mlp.linear_fc2.weight", VT "merger.mlp.0.weight",
	    VT "merger_list.0.mlp.2.weight"};
	fx_quant_split_as(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), qw,
	                  sizeof(qw) / sizeof(qw[0]), qdt);
	repl(&f, 1, AT "layers.1.fc1.weight");
	if (q == WT_QUANT_INT8_CHANNEL) { /* vision qkv's codes: rank 1's q, k, v rows */
		const int8_t *c = (const int8_t *)out_bytes(&f, 1, VT "blocks.0.attn.qkv.weight");
		const float *s =
		    (const float *)out_bytes(&f, 1, VT "blocks.0.attn.qkv.weight_scale");
		size_t rowb;
		for (int p = 0; p < 3; p++)
			for (int64_t row = 0; row < VE / 2; row++)
				int8_row_is(
				    c + (p * VE / 2 + row) * VE, s[p * VE / 2 + row],
				    (const uint16_t *)src_rows(&f, VT "blocks.0.attn.qkv.weight",
				                               p * VE + VE / 2 + row, &rowb),
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
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2}};
	coverage(q3o_model(true, 2, 2, 2, true), cfg_q3o, 2, lays, 5);
	/* TP 8: 8 vision heads (4 do not split 8 ways) */
	static const char cfg8[] =
	    CFG("", TEXT_KEYS(ROPE, ""), VIS_KEYS("8", "[0,1]"), AUD_KEYS("2", "64"));
	static const uint32_t l8[][2] = {{8, 1}};
	coverage(q3o_model(true, 2, 2, 2, true), cfg8, 2, l8, 1);
}

/* thinker_config absent: every class default (Qwen3-Omni-30B-A3B-like thinker). */
static void check_class_defaults(const ckpt_config *c)
{
	assert_true(c->has_audio && c->a_mel == 128 && c->a_layers == 32 && c->a_heads == 20 &&
	            c->a_ffn == 5120 && c->a_d_model == 1280 && c->a_max_pos == 1500 &&
	            c->a_out_dim == 3584 && c->a_dsh == 480);
	assert_true(c->has_vision && c->v_depth == 27 && c->v_hidden_size == 1152 &&
	            c->v_intermediate_size == 4304 && c->v_num_heads == 16 && c->v_in_chans == 3 &&
	            c->v_patch_size == 16 && c->v_spatial_merge_size == 2 &&
	            c->v_temporal_patch_size == 2 && c->v_out_hidden_size == 3584 &&
	            c->v_num_pos == 2304);
	assert_true(c->has_deepstack && c->n_deepstack == 3 && c->deepstack[0] == 8 &&
	            c->deepstack[1] == 16 && c->deepstack[2] == 24);
	assert_true(c->vocab_size == 3584 && c->hidden_size == 2048 &&
	            c->num_attention_heads == 28 && c->num_key_value_heads == 4 &&
	            c->intermediate_size == 18944 && c->num_hidden_layers == 28 &&
	            !c->tie_word_embeddings && !c->tie_given);
	assert_true(c->num_experts == 128 && c->moe_intermediate_size == 768);
}

static void test_defaults(void **state)
{
	(void)state;
	static const char cls[] = "{\"architectures\":[\"Qwen3OmniMoeForConditionalGeneration\"],"
	                          "\"model_type\":\"qwen3_omni_moe\",\"tie_word_embeddings\":true}";
	ckpt_config c;
	wt_errbuf err = {0};
	assert_int_equal(ckpt_config_parse(cls, strlen(cls), &c, &err), WT_OK);
	check_class_defaults(&c);
	assert_false(c.has_mrope); /* rope_scaling None: refused by the planner (test_errors) */
	ckpt_config_clear(&c);
	/* empty sub-configs, rope_scaling without mrope_section: [24, 20, 20] */
	static const char emp[] =
	    "{\"architectures\":[\"Qwen3OmniMoeForConditionalGeneration\"],\"model_type\":"
	    "\"qwen3_omni_moe\",\"thinker_config\":{\"tie_word_embeddings\":true,\"text_config\":"
	    "{\"model_type\":\"qwen3_moe\",\"rope_scaling\":{\"rope_type\":\"default\"}},"
	    "\"vision_config\":null,\"audio_config\":{}}}";
	assert_int_equal(ckpt_config_parse(emp, strlen(emp), &c, &err), WT_OK);
	check_class_defaults(&c);
	assert_true(c.has_mrope && c.n_mrope == 3 && c.mrope_section[0] == 24 &&
	            c.mrope_section[1] == 20 && c.mrope_section[2] == 20);
	ckpt_config_clear(&c);
	/* untied whatever the top level and the thinker say: lm_head needed */
	fx_refused(q3o_model(false, 2, 2, 2, false), cfg_q3o, WT_ENOTFOUND,
	           "thinker.lm_head.weight", "");
	/* tied by text_config: lm_head may be absent */
	static const char tied[] = CFG("", TEXT_KEYS(ROPE, ",\"tie_word_embeddings\":true"),
	                               VIS_KEYS("4", "[0,1]"), AUD_KEYS("2", "64"));
	fx f;
	fx_open(&f, q3o_model(false, 2, 2, 2, false), tied, 2, 1, 0, false);
	assert_true(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

/* Tensors missing, of another shape, past the counts, off the table. */
static void test_tensor_errors(void **state)
{
	(void)state;
	tm_model *m = q3o_model(true, 2, 2, 2, false);
	tm_remove(m, L0 "mlp.experts.3.up_proj.weight");
	fx_refused(m, cfg_q3o, WT_ENOTFOUND, L0 "mlp.experts.3.up_proj.weight", "");
	m = q3o_model(true, 2, 2, 2, false);
	tm_remove(m, AT "layers.1.self_attn.k_proj.bias");
	fx_refused(m, cfg_q3o, WT_ENOTFOUND, AT "layers.1.self_attn.k_proj.bias", "");
	m = q3o_model(true, 2, 2, 2, false);
	tm_remove(m, AT "conv_out.weight");
	tm_add2(m, AT "conv_out.weight", AE, 2 * CO);
	fx_refused(m, cfg_q3o, WT_ESHAPE, AT "conv_out.weight", "");
	m = q3o_model(true, 2, 2, 2, false);
	tm_remove(m, AT "conv2d2.weight");
	add4(m, AT "conv2d2.weight", DH, 2 * DH, 3, 3);
	fx_refused(m, cfg_q3o, WT_ESHAPE, AT "conv2d2.weight", "");
	fx_refused(q3o_model(true, 2, 2, 3, false), cfg_q3o, WT_ESHAPE, "audio encoder layer 2",
	           "thinker_config.audio_config.encoder_layers is 2");
	fx_refused(q3o_model(true, 3, 2, 2, false), cfg_q3o, WT_ESHAPE, "vision block 2",
	           "thinker_config.vision_config.depth is 2");
	fx_refused(q3o_model(true, 2, 3, 2, false), cfg_q3o, WT_ESHAPE, "deepstack merger 2",
	           "deepstack_visual_indexes (entries) is 2");
	m = q3o_model(true, 2, 2, 2, false); /* a non-persistent buffer: not saved */
	tm_add2(m, AT "positional_embedding.positional_embedding", 1500, AE);
	fx_refused(m, cfg_q3o, WT_EUNSUPPORTED, AT "positional_embedding", "");
	m = q3o_model(true, 2, 2, 2, false); /* Qwen2.5-Omni's stem: not this encoder's */
	tm_add(m, AT "conv1.weight", WT_DTYPE_INVALID, 3, AE, 16, 3);
	fx_refused(m, cfg_q3o, WT_EUNSUPPORTED, AT "conv1.weight", "");
	m = q3o_model(true, 2, 2, 2, false); /* Qwen3-VL's merger names: not this tower's */
	tm_add2(m, VT "merger.linear_fc1.weight", VM, VM);
	fx_refused(m, cfg_q3o, WT_EUNSUPPORTED, VT "merger.linear_fc1.weight", "");
}

/* config.json's refusals, each naming its key. */
static void test_config_errors(void **state)
{
	(void)state;
	static const char cfg_nr[] =
	    CFG("", TEXT_KEYS("", ""), VIS_KEYS("4", "[0,1]"), AUD_KEYS("2", "64"));
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_nr, WT_ECORRUPT,
	           "thinker_config.text_config.rope_scaling", "");
	static const char cfg_mr[] =
	    CFG("", TEXT_KEYS(",\"rope_scaling\":{\"mrope_section\":[2,2,1]}", ""),
	        VIS_KEYS("4", "[0,1]"), AUD_KEYS("2", "64"));
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_mr, WT_ECORRUPT, "summing to 5",
	           "head_dim/2 = 4");
	static const char cfg3v[] =
	    CFG("", TEXT_KEYS(ROPE, ""), VIS_KEYS("3", "[0,1]"), AUD_KEYS("2", "64"));
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg3v, WT_ECORRUPT, "num_heads 3",
	           "hidden_size 32");
	fx_refused_tp(q3o_model(true, 2, 2, 2, false), cfg_q3o, 8, WT_ELAYOUT, VT "blocks.",
	              "thinker_config.vision_config.num_heads 4");
	static const char cfg_ds[] =
	    CFG("", TEXT_KEYS(ROPE, ""), VIS_KEYS("4", "[0,5]"), AUD_KEYS("2", "64"));
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_ds, WT_ECORRUPT,
	           "deepstack_visual_indexes[1] = 5", "");
	static const char cfg3a[] =
	    CFG("", TEXT_KEYS(ROPE, ""), VIS_KEYS("4", "[0,1]"), AUD_KEYS("3", "64"));
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg3a, WT_ECORRUPT,
	           "audio_config.d_model 16 must be even and divisible by "
	           "encoder_attention_heads 3",
	           "");
	static const char cfg_out[] =
	    CFG("", TEXT_KEYS(ROPE, ""), VIS_KEYS("4", "[0,1]"), AUD_KEYS("2", "32"));
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_out, WT_ECORRUPT,
	           "thinker_config.audio_config.output_dim 32", "hidden_size 64");
	static const char cfg_vout[] =
	    CFG("", TEXT_KEYS(ROPE, ""),
	        "\"vision_config\":{\"depth\":2,\"hidden_size\":32,\"intermediate_size\":64,"
	        "\"num_heads\":4,\"patch_size\":2,\"out_hidden_size\":32,"
	        "\"num_position_embeddings\":16,\"deepstack_visual_indexes\":[0,1]}",
	        AUD_KEYS("2", "64"));
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_vout, WT_ECORRUPT,
	           "vision_config.out_hidden_size 32", "hidden_size 64");
	static const char cfg_nt[] =
	    "{\"architectures\":[\"Qwen3OmniMoeForConditionalGeneration\"],"
	    "\"model_type\":\"qwen3_omni_moe\",\"thinker_config\":[]}";
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_nt, WT_ECORRUPT, "'thinker_config' is not",
	           "");
	static const char cfg_na[] =
	    CFG("", TEXT_KEYS(ROPE, ""), VIS_KEYS("4", "[0,1]"), "\"audio_config\":7");
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_na, WT_ECORRUPT,
	           "'thinker_config.audio_config' is not", "");
	static const char cfg_dh[] = CFG("", TEXT_KEYS(ROPE, ""), VIS_KEYS("4", "[0,1]"),
	                                 "\"audio_config\":{\"downsample_hidden_size\":0}");
	fx_refused(q3o_model(true, 2, 2, 2, false), cfg_dh, WT_ECORRUPT,
	           "thinker_config.audio_config", "downsample_hidden_size");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_slices),   cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage),      cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_tensor_errors), cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
