/*
 * test_shardmap_chameleon.c — Chameleon (ChameleonForConditionalGeneration: facebook/chameleon-7b
 * / -30b) cut as vLLM's chameleon.py loads it: Llama's table (q/k/v fused by heads, o_proj and
 * down_proj by columns, gate/up merged, RMSNorms replicated, vocabulary rows) with per-head
 * LayerNorms self_attn.q_norm [H, d] / k_norm [KV, d] (weights and biases) cut by heads as
 * vLLM's row_parallel_weight_loader narrows them (q heads [r*H/T, ...), the kv heads of the
 * rank's k slice), never quantized; the VQ-VAE model.vqmodel.* replicated whole and never
 * quantized, its modules vLLM does not build (per vq_config) skipped. Hand-computed slices at
 * TP 2, 4 and 8, int8 / fp8 layouts, coverage over TP 1..8, ChameleonConfig /
 * ChameleonVQVAEConfig defaults, the tie, and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eedca11ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 4, head size 16, I 256, V 1000, 2 layers */
#define HID 128
#define HD  16
#define DIMS                                                                                       \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":4,"                 \
	"\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2"
/* the fixture's vq_config: two levels of 32 / 64 channels, attention at 16 (VQ_CH: the
 * channel keys alone, the structure's ChameleonVQVAEConfig's defaults) */
#define VQ_CH "\"base_channels\":32,\"latent_channels\":32,\"embed_dim\":32,\"num_embeddings\":64"
#define VQC                                                                                        \
	"\"vq_config\":{" VQ_CH ",\"channel_multiplier\":[1,2],\"num_res_blocks\":1,"              \
	"\"resolution\":32,\"attn_resolutions\":[16]}"
#define CH_HEAD                                                                                    \
	"{\"architectures\":[\"ChameleonForConditionalGeneration\"],\"model_type\":\"chameleon\","
#define CH_CFG(extra) CH_HEAD DIMS "," VQC extra "}"
#define L1            "model.layers.1."
#define A1            L1 "self_attn."
#define QKV           A1 "qkv_proj.weight"
#define QN            A1 "q_norm.weight"
#define QNB           A1 "q_norm.bias"
#define KN            A1 "k_norm.weight"
#define KNB           A1 "k_norm.bias"
#define HEAD          "lm_head.weight"
#define VQ            "model.vqmodel."
#define VQE           VQ "encoder."

/* A 4-D tensor [a, b, c, d] (a conv weight). */
static void tm_add4(tm_model *m, const char *name, int64_t a, int64_t b, int64_t c, int64_t d)
{
	tm_add(m, name, WT_DTYPE_INVALID, 3, a, b, c * d);
	st_desc *t = &m->d[m->n - 1];
	t->ndim = 4;
	t->shape[2] = c;
	t->shape[3] = d;
}

static void vq_conv(tm_model *m, const char *n, int64_t o, int64_t i, int64_t k)
{
	char b[160];
	snprintf(b, sizeof(b), "%s.weight", n);
	tm_add4(m, b, o, i, k, k);
	snprintf(b, sizeof(b), "%s.bias", n);
	tm_add2(m, b, o, 0);
}

static void vq_norm(tm_model *m, const char *n, int64_t c)
{
	char b[160];
	snprintf(b, sizeof(b), "%s.weight", n);
	tm_add2(m, b, c, 0);
	snprintf(b, sizeof(b), "%s.bias", n);
	tm_add2(m, b, c, 0);
}

static void vq_res(tm_model *m, const char *p, int64_t ci, int64_t co)
{
	char b[160];
	snprintf(b, sizeof(b), "%snorm1", p);
	vq_norm(m, b, ci);
	snprintf(b, sizeof(b), "%sconv1", p);
	vq_conv(m, b, co, ci, 3);
	snprintf(b, sizeof(b), "%snorm2", p);
	vq_norm(m, b, co);
	snprintf(b, sizeof(b), "%sconv2", p);
	vq_conv(m, b, co, co, 3);
}

static void vq_attn(tm_model *m, const char *p, int64_t c)
{
	static const char *const lin[] = {"q", "k", "v", "proj_out"};
	char b[160];
	snprintf(b, sizeof(b), "%snorm", p);
	vq_norm(m, b, c);
	for (int k = 0; k < 4; k++) {
		snprintf(b, sizeof(b), "%s%s", p, lin[k]);
		vq_conv(m, b, c, c, 1);
	}
}

/* The VQ-VAE of VQC: 67 tensors. */
static void add_vq(tm_model *m)
{
	vq_conv(m, VQE "conv_in", 32, 3, 3);
	vq_res(m, VQE "down.0.block.0.", 32, 32);
	vq_conv(m, VQE "down.0.downsample.conv", 32, 32, 3);
	vq_res(m, VQE "down.1.block.0.", 32, 64);
	vq_conv(m, VQE "down.1.block.0.nin_shortcut", 64, 32, 1);
	vq_attn(m, VQE "down.1.attn.0.", 64);
	vq_res(m, VQE "mid.block_1.", 64, 64);
	vq_attn(m, VQE "mid.attn_1.", 64);
	vq_res(m, VQE "mid.block_2.", 64, 64);
	vq_norm(m, VQE "norm_out", 64);
	vq_conv(m, VQE "conv_out", 32, 64, 3);
	tm_add2(m, VQ "quantize.embedding.weight", 64, 32);
	vq_conv(m, VQ "quant_conv", 32, 32, 1);
	vq_conv(m, VQ "post_quant_conv", 32, 32, 1);
}

/* A VQ-VAE of base 32 channels (latent and embed_dim 32, 64 codebook entries, RGB) with the
 * levels' multipliers mult[0..nl), nrb res blocks a level, attention at the levels of
 * attn_mask and in the middle when mid_attn: what vLLM builds of such a vq_config. */
static void add_vq_gen(tm_model *m, const int64_t *mult, int nl, int nrb, unsigned attn_mask,
                       bool mid_attn)
{
	char p[96];
	int64_t ch = 32;
	vq_conv(m, VQE "conv_in", 32, 3, 3);
	for (int l = 0; l < nl; l++) {
		for (int b = 0; b < nrb; b++) {
			snprintf(p, sizeof(p), VQE "down.%d.block.%d.", l, b);
			vq_res(m, p, ch, 32 * mult[l]);
			if (ch != 32 * mult[l]) {
				snprintf(p, sizeof(p), VQE "down.%d.block.%d.nin_shortcut", l, b);
				vq_conv(m, p, 32 * mult[l], ch, 1);
			}
			ch = 32 * mult[l];
			snprintf(p, sizeof(p), VQE "down.%d.attn.%d.", l, b);
			if ((attn_mask >> l) & 1u)
				vq_attn(m, p, ch);
		}
		snprintf(p, sizeof(p), VQE "down.%d.downsample.conv", l);
		if (l != nl - 1)
			vq_conv(m, p, ch, ch, 3);
	}
	vq_res(m, VQE "mid.block_1.", ch, ch);
	if (mid_attn)
		vq_attn(m, VQE "mid.attn_1.", ch);
	vq_res(m, VQE "mid.block_2.", ch, ch);
	vq_norm(m, VQE "norm_out", ch);
	vq_conv(m, VQE "conv_out", 32, ch, 3);
	tm_add2(m, VQ "quantize.embedding.weight", 64, 32);
	vq_conv(m, VQ "quant_conv", 32, 32, 1);
	vq_conv(m, VQ "post_quant_conv", 32, 32, 1);
}

/* The language model (lm_head when head), transformers 4.57.1's names. */
static tm_model *tm_lm(bool head)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	if (head)
		tm_add2(m, HEAD, 1000, HID);
	for (int i = 0; i < 2; i++) {
		static const struct {
			const char *leaf;
			int64_t a, b;
		} t[] = {
		    {"input_layernorm.weight", HID, 0},
		    {"post_attention_layernorm.weight", HID, 0},
		    {"self_attn.q_proj.weight", 8 * HD, HID},
		    {"self_attn.k_proj.weight", 4 * HD, HID},
		    {"self_attn.v_proj.weight", 4 * HD, HID},
		    {"self_attn.o_proj.weight", HID, 8 * HD},
		    {"self_attn.q_norm.weight", 8, HD},
		    {"self_attn.q_norm.bias", 8, HD},
		    {"self_attn.k_norm.weight", 4, HD},
		    {"self_attn.k_norm.bias", 4, HD},
		    {"mlp.gate_proj.weight", 256, HID},
		    {"mlp.up_proj.weight", 256, HID},
		    {"mlp.down_proj.weight", HID, 256},
		};
		for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
			char n[96];
			snprintf(n, sizeof(n), "model.layers.%d.%s", i, t[k].leaf);
			tm_add2(m, n, t[k].a, t[k].b);
		}
	}
	return m;
}

/* The model with the fixture's VQ-VAE. */
static tm_model *tm_ch(bool head)
{
	tm_model *m = tm_lm(head);
	add_vq(m);
	return m;
}

/* Rank r of T: [q_r; k_r; v_r] of H 8 / KV 4 heads of 16 (kv heads shared when T > 4). */
static void qkv_is(const fx *f, uint32_t r, uint32_t T)
{
	int64_t hl = 8 / T, kvl = T <= 4 ? 4 / T : 1, ks = T <= 4 ? r : r / (T / 4);
	rows_at(f, r, QKV, 0, A1 "q_proj.weight", r * hl * HD, hl * HD);
	rows_at(f, r, QKV, hl * HD, A1 "k_proj.weight", ks * kvl * HD, kvl * HD);
	rows_at(f, r, QKV, (hl + kvl) * HD, A1 "v_proj.weight", ks * kvl * HD, kvl * HD);
	/* q_norm: the rank's q heads; k_norm: the kv heads of its k rows */
	shp(f, r, QN, 2, hl, HD, 0);
	rows_at(f, r, QN, 0, QN, r * hl, hl);
	rows_at(f, r, QNB, 0, QNB, r * hl, hl);
	shp(f, r, KN, 2, kvl, HD, 0);
	rows_at(f, r, KN, 0, KN, ks * kvl, kvl);
	rows_at(f, r, KNB, 0, KNB, ks * kvl, kvl);
}

/* Every VQ-VAE tensor whole on rank r. */
static void vq_whole(const fx *f, uint32_t r)
{
	for (size_t k = 0; k < f->m->n; k++)
		if (strncmp(f->m->name[k], VQ, strlen(VQ)) == 0)
			repl(f, r, f->m->name[k]);
}

static void test_tp2(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ch(true), CH_CFG(""), 2, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "chameleon");
	for (uint32_t r = 0; r < 2; r++) {
		shp(&f, r, QKV, 2, (4 + 2 * 2) * HD, HID, 0);
		qkv_is(&f, r, 2);
		cols_of(&f, r, 2, A1 "o_proj.weight", A1 "o_proj.weight", HID, 8 * HD);
		rows_at(&f, r, L1 "mlp.gate_up_proj.weight", 0, L1 "mlp.gate_proj.weight", 128 * r,
		        128);
		rows_at(&f, r, L1 "mlp.gate_up_proj.weight", 128, L1 "mlp.up_proj.weight", 128 * r,
		        128);
		cols_of(&f, r, 2, L1 "mlp.down_proj.weight", L1 "mlp.down_proj.weight", HID, 256);
		repl(&f, r, L1 "input_layernorm.weight");
		repl(&f, r, "model.norm.weight");
		vq_whole(&f, r);
		const sm_out_info *co = info(&f, r, VQE "conv_out.weight");
		assert_int_equal(co->ndim, 4);
		assert_true(co->shape[0] == 32 && co->shape[1] == 64 && co->shape[2] == 3 &&
		            co->shape[3] == 3);
	}
	shp(&f, 1, HEAD, 2, 512, HID, 0);
	rows_are(&f, 1, HEAD, 0, HEAD, 512, 488);
	rows_are(&f, 0, "model.embed_tokens.weight", 0, "model.embed_tokens.weight", 0, 512);
	/* 3 top + 2 x 10 per layer + 67 VQ-VAE */
	assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 2 * 10 + 67);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	fx_close(&f);
}

/* TP 4: two q heads and one kv head a rank; tied (no lm_head). */
static void test_tp4(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ch(false), CH_CFG(",\"tie_word_embeddings\":true"), 4, 1, 0, true);
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, QKV, 2, (2 + 2) * HD, HID, 0);
		qkv_is(&f, r, 4);
		cols_of(&f, r, 4, A1 "o_proj.weight", A1 "o_proj.weight", HID, 8 * HD);
		assert_true(tm_ix(f.p, r, HEAD) < 0);
		vq_whole(&f, r);
	}
	fx_close(&f);
}

/* TP 8 > KV 4: consecutive ranks share a kv head, its k_norm row with it. */
static void test_tp8(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, tm_ch(true), CH_CFG(""), 8, 1, 0, true);
	for (uint32_t r = 0; r < 8; r++)
		qkv_is(&f, r, 8);
	fx_close(&f);
}

/* int8-channel TP 2: q/k/v, o, gate/up, down quantized; the q/k LayerNorms, the VQ-VAE (its
 * convs and codebook too), the norms and the vocabulary kept BF16; fp8-channel TP 4 alike. */
static void test_quant(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx f;
	fx_open_l(&f, tm_ch(true), CH_CFG(""), &l, true);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, QKV);
	const float *sc = (const float *)out_bytes(&f, 1, QKV "_scale");
	shp(&f, 1, QKV "_scale", 2, 8 * HD, 1, 0);
	for (int64_t row = 0; row < 4 * HD; row++) { /* rank 1's q rows: heads 4..7 */
		size_t rowb;
		const uint16_t *x =
		    (const uint16_t *)src_rows(&f, A1 "q_proj.weight", 4 * HD + row, &rowb);
		int8_row_is(q + row * HID, sc[row], x, HID);
	}
	static const char *const keep[] = {QN,
	                                   KNB,
	                                   HEAD,
	                                   "model.embed_tokens.weight",
	                                   VQE "conv_in.weight",
	                                   VQE "down.1.attn.0.q.weight",
	                                   VQ "quantize.embedding.weight",
	                                   VQ "quant_conv.weight"};
	static const char *const q8[] = {QKV, A1 "o_proj.weight", L1 "mlp.gate_up_proj.weight",
	                                 L1 "mlp.down_proj.weight"};
	fx_quant_split(&f, 1, WT_BF16, keep, sizeof(keep) / sizeof(keep[0]), q8,
	               sizeof(q8) / sizeof(q8[0]));
	repl(&f, 1, VQE "down.1.attn.0.q.weight");
	fx_close(&f);
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_ch(true), CH_CFG(""), &l, true);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(info(&f, r, QKV)->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, KN)->dtype, WT_BF16);
		assert_int_equal(info(&f, r, VQ "post_quant_conv.weight")->dtype, WT_BF16);
		repl(&f, r, VQE "mid.block_2.conv1.weight");
	}
	fx_close(&f);
}

static void test_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(tm_ch(true), CH_CFG(""), 4, lays, sizeof(lays) / sizeof(lays[0]));
	coverage(tm_ch(false), CH_CFG(",\"tie_word_embeddings\":true,\"swin_norm\":true"), 4, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* The VQ-VAE modules vLLM does not build, per vq_config, are skipped: a decoder, a level
 * past channel_multiplier, the last level's downsample, a nin_shortcut where the channels do
 * not change, attention at a level whose resolution attn_resolutions lacks, a block past
 * num_res_blocks; attn_type null builds no attention block. */
static void test_skipped(void **state)
{
	(void)state;
	static const char *const extra[] = {
	    VQ "decoder.conv_in.weight",           VQE "down.2.block.0.norm1.weight",
	    VQE "down.1.downsample.conv.weight",   VQE "down.0.block.0.nin_shortcut.weight",
	    VQE "down.0.attn.0.q.weight",          VQE "down.1.block.1.conv1.bias",
	    VQE "mid.block_1.nin_shortcut.weight", VQE "down.0.block.0.conv3.weight"};
	tm_model *m = tm_ch(true);
	for (size_t k = 0; k < sizeof(extra) / sizeof(extra[0]); k++)
		tm_add2(m, extra[k], 32, 0);
	fx f;
	fx_open(&f, m, CH_CFG(""), 2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), sizeof(extra) / sizeof(extra[0]));
	for (size_t k = 0; k < sizeof(extra) / sizeof(extra[0]); k++)
		if (!fx_skipped(&f, extra[k]))
			fail_msg("'%s' not skipped", extra[k]);
	assert_int_equal(shardmap_rank_n_tensors(f.p, 0), 3 + 2 * 10 + 67);
	fx_close(&f);
	/* attn_type null: the attention blocks (level 1's, the middle one) skipped */
	fx_open(&f, tm_ch(true),
	        CH_HEAD DIMS ",\"vq_config\":{" VQ_CH ",\"channel_multiplier\":[1,2],"
	                     "\"num_res_blocks\":1,\"resolution\":32,\"attn_resolutions\":[16],"
	                     "\"attn_type\":null}}",
	        2, 1, 0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 20);
	assert_true(fx_skipped(&f, VQE "mid.attn_1.proj_out.bias"));
	assert_true(fx_skipped(&f, VQE "down.1.attn.0.norm.weight"));
	fx_close(&f);
}

/* ChameleonConfig's defaults: untied, num_key_value_heads 32, intermediate_size 11008;
 * ChameleonVQVAEConfig's: channel_multiplier [1, 1, 2, 2, 4] (level 1 is not the last, keeps
 * the input's channels: its downsample built, no nin_shortcut), num_res_blocks 2, no
 * attention at any level (attn_resolutions None) but the middle one (attn_type vanilla). swin_norm
 * changes no tensor. */
static void test_defaults(void **state)
{
	(void)state;
	fx_refused(tm_ch(false), CH_CFG(""), WT_ENOTFOUND, HEAD, "missing");
	fx_refused(tm_ch(true),
	           CH_HEAD
	           "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":4,"
	           "\"vocab_size\":1000,\"num_hidden_layers\":2," VQC "}",
	           WT_ESHAPE, "11008", "fix config.json");
	fx_refused(tm_ch(true),
	           CH_HEAD
	           "\"hidden_size\":128,\"num_attention_heads\":8,"
	           "\"intermediate_size\":256,\"vocab_size\":1000,\"num_hidden_layers\":2," VQC "}",
	           WT_ESHAPE, "k_norm.bias", "[32, 16]");
	fx a, b;
	fx_open(&a, tm_ch(true), CH_CFG(""), 2, 1, 0, true);
	fx_open(&b, tm_ch(true), CH_CFG(",\"swin_norm\":true"), 2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&b);
	fx_close(&a);
	/* ChameleonVQVAEConfig's structure: five levels [1, 1, 2, 2, 4] (a nin_shortcut where the
	 * channels change: levels 2 and 4; no downsample on the last), two res blocks a level,
	 * resolution 512, no attention but the middle one (attn_type vanilla), in_channels 3,
	 * double_latent false; what it does not build is skipped */
	static const int64_t mult[] = {1, 1, 2, 2, 4};
	tm_model *m = tm_lm(true);
	add_vq_gen(m, mult, 5, 2, 0, true);
	static const char *const gone[] = {
	    VQE "down.3.block.0.nin_shortcut.bias", VQE "down.4.downsample.conv.bias",
	    VQE "down.5.block.0.norm1.weight",      VQE "down.3.attn.0.q.bias",
	    VQE "down.4.block.2.conv1.bias",        VQE "down.1.block.1.nin_shortcut.bias"};
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++)
		tm_add2(m, gone[k], 4, 0);
	fx f;
	fx_open(&f, m, CH_HEAD DIMS ",\"vq_config\":{" VQ_CH "}}", 2, 1, 0, false);
	for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++)
		if (!fx_skipped(&f, gone[k]))
			fail_msg("'%s' not skipped", gone[k]);
	assert_int_equal(shardmap_n_skipped(f.p), sizeof(gone) / sizeof(gone[0]));
	assert_int_equal(shardmap_rank_n_tensors(f.p, 0),
	                 3 + 2 * 10 + 2 + 5 * 16 + 2 * 2 + 4 * 2 + 16 + 10 + 2 + 2 + 1 + 4);
	fx_close(&f);
	/* resolution 512: level 3 (64 x 64) has attention blocks when attn_resolutions names 64 */
	m = tm_lm(true);
	add_vq_gen(m, mult, 5, 2, 1u << 3, true);
	fx_open(&f, m, CH_HEAD DIMS ",\"vq_config\":{" VQ_CH ",\"attn_resolutions\":[64]}}", 2, 1,
	        0, false);
	assert_int_equal(shardmap_n_skipped(f.p), 0);
	fx_close(&f);
	m = tm_lm(true);
	add_vq_gen(m, mult, 5, 2, 0, true);
	fx_refused(m, CH_HEAD DIMS ",\"vq_config\":{" VQ_CH ",\"attn_resolutions\":[64]}}",
	           WT_ENOTFOUND, VQE "down.3.attn.0.norm.weight", "vq_config");
}

static void test_errors(void **state)
{
	(void)state;
	fx_refused(tm_ch(true), CH_CFG(",\"attention_bias\":true"), WT_EUNSUPPORTED,
	           "attention_bias true", "without biases");
	fx_refused(tm_ch(true), CH_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED, "hidden_act",
	           "only silu");
	fx_refused(tm_ch(true), CH_CFG(",\"head_dim\":32"), WT_EUNSUPPORTED, "head_dim 32",
	           "remove head_dim");
	tm_model *m = tm_ch(true);
	tm_add2(m, A1 "q_proj.bias", 8 * HD, 0);
	fx_refused(m, CH_CFG(""), WT_EUNSUPPORTED, A1 "q_proj.bias", "chameleon");
	fx_refused(tm_ch(true), CH_CFG(",\"mlp_bias\":true"), WT_ENOTFOUND, "gate_proj.bias",
	           "mlp_bias");
	m = tm_ch(true);
	tm_remove(m, KNB);
	fx_refused(m, CH_CFG(""), WT_ENOTFOUND, KNB, "missing");
	/* q_norm [d] (Qwen3's shape) is not Chameleon's [H, d] */
	m = tm_ch(true);
	tm_remove(m, QN);
	tm_add2(m, QN, HD, 0);
	fx_refused(m, CH_CFG(""), WT_ESHAPE, QN, "[8, 16]");
	m = tm_ch(true);
	tm_remove(m, VQE "conv_in.weight");
	tm_add2(m, VQE "conv_in.weight", 32, 27);
	fx_refused(m, CH_CFG(""), WT_ESHAPE, VQE "conv_in.weight", "");
	/* every VQ-VAE parameter vq_config builds, with its shape */
	m = tm_ch(true);
	tm_remove(m, VQE "mid.attn_1.proj_out.bias");
	fx_refused(m, CH_CFG(""), WT_ENOTFOUND, VQE "mid.attn_1.proj_out.bias", "vq_config");
	m = tm_ch(true);
	tm_remove(m, VQE "down.1.block.0.conv2.bias");
	tm_add2(m, VQE "down.1.block.0.conv2.bias_x", 64, 0); /* renamed: skipped, so missing */
	fx_refused(m, CH_CFG(""), WT_ENOTFOUND, VQE "down.1.block.0.conv2.bias", "missing");
	m = tm_ch(true);
	tm_remove(m, VQE "down.1.block.0.nin_shortcut.weight");
	tm_add4(m, VQE "down.1.block.0.nin_shortcut.weight", 64, 32, 3, 3);
	fx_refused(m, CH_CFG(""), WT_ESHAPE, "nin_shortcut.weight", "[64, 32, 1, 1]");
	fx_refused(tm_ch(true),
	           CH_HEAD DIMS ",\"vq_config\":{" VQ_CH ",\"channel_multiplier\":[1,2],"
	                        "\"num_res_blocks\":1,\"resolution\":32,"
	                        "\"attn_resolutions\":[16],\"double_latent\":true}}",
	           WT_ESHAPE, "conv_out.weight", "[64, 64, 3, 3]");
	fx_refused(tm_ch(true),
	           CH_HEAD DIMS ",\"vq_config\":{\"base_channels\":16777216,"
	                        "\"channel_multiplier\":[1,2]}}",
	           WT_ECORRUPT, "vq_config", "2^24");
	fx_refused(tm_ch(true), CH_HEAD DIMS ",\"vq_config\":[1]}", WT_ECORRUPT, "vq_config", "");
	fx_refused(tm_ch(true),
	           CH_HEAD DIMS ",\"vq_config\":{\"channel_multiplier\":[1,1,1,1,1,1,1,1,1]}}",
	           WT_EUNSUPPORTED, "channel_multiplier", "at most 8");
	fx_refused(tm_ch(true), CH_HEAD DIMS ",\"vq_config\":{\"channel_multiplier\":[]}}",
	           WT_ECORRUPT, "channel_multiplier", "empty");
	fx_refused(tm_ch(true), CH_HEAD DIMS ",\"vq_config\":{\"num_res_blocks\":0}}", WT_ECORRUPT,
	           "num_res_blocks", "");
	fx_refused(tm_ch(true), CH_CFG(",\"swin_norm\":1"), WT_ECORRUPT, "swin_norm", "");
	fx_refused_tp(tm_ch(true), CH_CFG(""), 3, WT_ELAYOUT, "", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tp2),      cmocka_unit_test(test_tp4),
	    cmocka_unit_test(test_tp8),      cmocka_unit_test(test_quant),
	    cmocka_unit_test(test_coverage), cmocka_unit_test(test_skipped),
	    cmocka_unit_test(test_defaults), cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
