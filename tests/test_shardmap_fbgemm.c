/*
 * test_shardmap_fbgemm.c — fbgemm_fp8 source checkpoints (Llama 4 Maverick's FP8
 * release; docs/format.md 4.7) as transformers 4.54 writes them: FbgemmFp8Linear
 * weights F8_E4M3 [N, K] + weight_scale [N, 1], Llama 4's expert stacks [E, hid, 2I] +
 * gate_up_proj_scale [E, 1, 2I] and [E, I, hid] + down_proj_scale [E, hid, 1] (one scale
 * per output channel), modules_to_not_convert matched as transformers matches it.
 * Expected elements are computed here with a decoder of our own (f32(e4m3) * f32(scale)):
 * dequantized (quant none, F32 output) at TP 2, EP 2 and TP 2 x EP 2, passed through
 * (fp8-channel: codes as stored, scales as F32 rows), requantized (int8-channel), for a
 * Llama 4 text model and a Llama; the config and name rules, and every refusal with its
 * message. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00fbull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "shardmap/quant_f8.h"

/* hid 256, H 8, KV 2, d 32, V 1003, layer 0 dense (MLP 192), layer 1 MoE (4 experts of 64,
 * shared expert 64) */
#define HID 256
#define IE  64
#define IM  192
#define NE  4
#define FBQ(keep)                                                                                  \
	",\"quantization_config\":{\"quant_method\":\"fbgemm_fp8\",\"activation_scale_ub\":1200."  \
	"0,"                                                                                       \
	"\"modules_to_not_convert\":" keep "}"
#define KEEP_OK "[\"model.layers.1.self_attn\",\"router\",\"shared_expert\",\"lm_head\"]"
#define L4T(q)                                                                                     \
	"{\"architectures\":[\"Llama4ForCausalLM\"],\"model_type\":\"llama4_text\","               \
	"\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32," \
	"\"vocab_size\":1003,\"num_hidden_layers\":2,\"intermediate_size\":64,"                    \
	"\"num_local_experts\":4,\"interleave_moe_layer_step\":2,\"intermediate_size_mlp\":192" q  \
	"}"
#define L4_OK L4T(FBQ(KEEP_OK))
#define L0    "model.layers.0."
#define L1    "model.layers.1."
#define GU    L1 "feed_forward.experts.gate_up_proj"
#define DN    L1 "feed_forward.experts.down_proj"
#define W13   L1 "feed_forward.experts.w13_weight"
#define W2    L1 "feed_forward.experts.w2_weight"
#define QW    L0 "self_attn.q_proj.weight"
#define GATE  L0 "feed_forward.gate_proj.weight"
#define UP    L0 "feed_forward.up_proj.weight"
#define DOWN  L0 "feed_forward.down_proj.weight"
#define GUP   L0 "feed_forward.gate_up_proj.weight"
#define QKV0  L0 "self_attn.qkv_proj.weight"

/* float8 e4m3fn and float16, decoded here (no NaN or Inf codes in these tests). */
static float q8(uint8_t b)
{
	int e = (b >> 3) & 15, mant = b & 7;
	float v = e == 0 ? ldexpf((float)mant, -9) : ldexpf((float)(8 + mant), e - 10);
	return (b & 0x80) ? -v : v;
}

static float f16v(uint16_t h)
{
	int e = (h >> 10) & 31, mant = h & 1023;
	float v = e == 0 ? ldexpf((float)mant, -24) : ldexpf((float)(1024 + mant), e - 25);
	return (h & 0x8000) ? -v : v;
}

/* Element i of model tensor `name` as float32 (an F8 code decoded, not scaled). */
static float val(const tm_model *m, const char *name, int64_t i)
{
	int k = tm_find(m, name);
	assert_true(k >= 0);
	const uint8_t *p = m->data[k];
	uint16_t h;
	uint32_t u;
	float v;
	switch (m->d[k].dtype) {
	case WT_F32:
		memcpy(&v, p + i * 4, 4);
		return v;
	case WT_BF16:
		memcpy(&h, p + i * 2, 2);
		u = (uint32_t)h << 16;
		memcpy(&v, &u, 4);
		return v;
	case WT_F16:
		memcpy(&h, p + i * 2, 2);
		return f16v(h);
	case WT_F8_E4M3:
		return q8(p[i]);
	default:
		fail_msg("'%s': dtype %s", name, wt_dtype_name(m->d[k].dtype));
	}
	return 0;
}

static uint8_t code(const tm_model *m, const char *name, int64_t i)
{
	return ((const uint8_t *)m->data[tm_find(m, name)])[i];
}

/* A scale tensor of dtype dt: positive values |u| / 100 + 1/1000 (u as tm_add draws it). */
static void fb_scale(tm_model *m, const char *name, wt_dtype dt, int nd, int64_t a, int64_t b,
                     int64_t c)
{
	uint8_t *p = tm_add(m, name, dt, nd, a, b, c);
	int64_t n = a * (nd > 1 ? b : 1) * (nd > 2 ? c : 1);
	for (int64_t i = 0; i < n; i++) {
		float v = fabsf(val(m, name, i)) * 0.01f + 0.001f;
		uint16_t h = dt == WT_BF16 ? kern_f32_to_bf16(v) : kern_f32_to_f16(v);
		if (dt == WT_F32)
			memcpy(p + i * 4, &v, 4);
		else
			memcpy(p + i * 2, &h, 2);
	}
}

/* FbgemmFp8Linear `name` ("X.weight" [N, K]) with X.weight_scale [N, 1] of dtype sdt. */
static void fb_lin(tm_model *m, const char *name, int64_t N, int64_t K, wt_dtype sdt)
{
	char b[200];
	tm_add(m, name, WT_F8_E4M3, 2, N, K, 0);
	snprintf(b, sizeof(b), "%s_scale", name);
	fb_scale(m, b, sdt, 2, N, 1, 0);
}

/* Llama4ForCausalLM as fbgemm_fp8 writes it under KEEP_OK: layer 0's q/k/v/o and dense MLP
 * FP8 (scales sdt), layer 1's stacks FP8 (gate_up scales gdt, down ddt); layer 1's
 * attention, router and shared expert BF16. */
static tm_model *fb_l4(wt_dtype sdt, wt_dtype gdt, wt_dtype ddt)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, HID, 1);
	tm_add2(m, L0 "input_layernorm.weight", HID, 0);
	tm_add2(m, L0 "post_attention_layernorm.weight", HID, 0);
	fb_lin(m, QW, 256, HID, sdt);
	fb_lin(m, L0 "self_attn.k_proj.weight", 64, HID, sdt);
	fb_lin(m, L0 "self_attn.v_proj.weight", 64, HID, sdt);
	fb_lin(m, L0 "self_attn.o_proj.weight", HID, 256, sdt);
	fb_lin(m, GATE, IM, HID, sdt);
	fb_lin(m, UP, IM, HID, sdt);
	fb_lin(m, DOWN, HID, IM, sdt);
	tm_attn(m, 1, 8, 2, 32, HID, 0, 0);
	tm_add2(m, L1 "feed_forward.router.weight", NE, HID);
	tm_mlp(m, 1, "feed_forward.shared_expert.", IE, HID);
	tm_add(m, GU, WT_F8_E4M3, 3, NE, HID, 2 * IE);
	fb_scale(m, GU "_scale", gdt, 3, NE, 1, 2 * IE);
	tm_add(m, DN, WT_F8_E4M3, 3, NE, IE, HID);
	fb_scale(m, DN "_scale", ddt, 3, NE, HID, 1);
	return m;
}

static void fx_lay(fx *f, tm_model *m, const char *cfg, uint32_t T, uint32_t P, wt_quant q,
                   wt_dtype dt)
{
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = T;
	l.ep_size = P;
	l.quant = q;
	l.dtype = dt;
	fx_open_l(f, m, cfg, &l, true);
}

/* Rank r's rt, rows [o, o+n) of ocols columns: rows [a, a+n), columns [c0, c0+ocols) of the
 * Linear w [N, K]; pass: its codes and rt_scale's rows = w's row scales as F32, else F32
 * values f32(q) * f32(scale of the row). */
static void lin_chk(const fx *f, uint32_t r, const char *rt, int64_t o, const char *w, int64_t K,
                    int64_t a, int64_t n, int64_t c0, int64_t ocols, bool pass)
{
	char sn[200], rs[200];
	snprintf(sn, sizeof(sn), "%s_scale", w);
	snprintf(rs, sizeof(rs), "%s_scale", rt);
	const uint8_t *got = out_bytes(f, r, rt);
	for (int64_t i = 0; i < n; i++) {
		float s = val(f->m, sn, a + i);
		if (pass && ((const float *)out_bytes(f, r, rs))[o + i] != s)
			fail_msg("rank %u %s row %lld: scale differs", r, rs, (long long)(o + i));
		for (int64_t c = 0; c < ocols; c++) {
			int64_t src = (a + i) * K + c0 + c, at = (o + i) * ocols + c;
			bool ok = pass ? got[at] == code(f->m, w, src)
			               : ((const float *)got)[at] == val(f->m, w, src) * s;
			if (!ok)
				fail_msg("rank %u %s row %lld col %lld != %s row %lld col %lld", r,
				         rt, (long long)(o + i), (long long)c, w,
				         (long long)(a + i), (long long)(c0 + c));
		}
	}
}

/* Slot `slot` of rank r's w13 ([count, 2n, HID]: expert j's gate output channels [a, a+n)
 * then its up ones, columns IE + a.. of gate_up_proj[j] [HID, 2*IE]) and w2 ([count, HID,
 * n]: down_proj[j] [IE, HID] rows [a, a+n), transposed), dequantized or passed through. */
static void experts_chk(const fx *f, uint32_t r, int64_t slot, int64_t j, int64_t a, int64_t n,
                        bool pass)
{
	const uint8_t *w13 = out_bytes(f, r, W13), *w2 = out_bytes(f, r, W2);
	for (int half = 0; half < 2; half++)
		for (int64_t k = 0; k < n; k++) {
			int64_t ch = j * 2 * IE + half * IE + a + k,
			        orow = slot * 2 * n + half * n + k;
			float s = val(f->m, GU "_scale", ch);
			if (pass && ((const float *)out_bytes(f, r, W13 "_scale"))[orow] != s)
				fail_msg("rank %u w13 scale slot %lld row %lld", r, (long long)slot,
				         (long long)(half * n + k));
			for (int64_t h = 0; h < HID; h++) {
				int64_t src = (j * HID + h) * 2 * IE + half * IE + a + k;
				bool ok = pass ? w13[orow * HID + h] == code(f->m, GU, src)
				               : ((const float *)w13)[orow * HID + h] ==
				                     val(f->m, GU, src) * s;
				if (!ok)
					fail_msg("rank %u w13 slot %lld half %d row %lld col %lld",
					         r, (long long)slot, half, (long long)k,
					         (long long)h);
			}
		}
	for (int64_t h = 0; h < HID; h++) {
		float s = val(f->m, DN "_scale", j * HID + h);
		if (pass && ((const float *)out_bytes(f, r, W2 "_scale"))[slot * HID + h] != s)
			fail_msg("rank %u w2 scale slot %lld row %lld", r, (long long)slot,
			         (long long)h);
		for (int64_t c = 0; c < n; c++) {
			int64_t src = (j * IE + a + c) * HID + h, at = (slot * HID + h) * n + c;
			bool ok = pass ? w2[at] == code(f->m, DN, src)
			               : ((const float *)w2)[at] == val(f->m, DN, src) * s;
			if (!ok)
				fail_msg("rank %u w2 slot %lld row %lld col %lld", r,
				         (long long)slot, (long long)h, (long long)c);
		}
	}
}

/* The dense layer's tensors on tp rank t of 2 (rank r): q heads 4t.., kv head t, gate/up
 * rows 96t.., down and o_proj columns. */
static void dense_chk(const fx *f, uint32_t r, uint32_t t, bool pass)
{
	lin_chk(f, r, QKV0, 0, QW, HID, t * 128, 128, 0, HID, pass);
	lin_chk(f, r, QKV0, 128, L0 "self_attn.k_proj.weight", HID, t * 32, 32, 0, HID, pass);
	lin_chk(f, r, QKV0, 160, L0 "self_attn.v_proj.weight", HID, t * 32, 32, 0, HID, pass);
	lin_chk(f, r, L0 "self_attn.o_proj.weight", 0, L0 "self_attn.o_proj.weight", 256, 0, HID,
	        t * 128, 128, pass);
	lin_chk(f, r, GUP, 0, GATE, HID, t * 96, 96, 0, HID, pass);
	lin_chk(f, r, GUP, 96, UP, HID, t * 96, 96, 0, HID, pass);
	lin_chk(f, r, DOWN, 0, DOWN, IM, 0, HID, t * 96, 96, pass);
}

/* quant none, F32 output, TP 2: every FP8 weight dequantized per output channel (F32, BF16
 * and F16 scales), the kept modules' BF16 bytes widened; BF16 output rounds those values. */
static void test_fb_tp2_dequant(void **state)
{
	(void)state;
	fx f;
	fx_lay(&f, fb_l4(WT_F32, WT_BF16, WT_F16), L4_OK, 2, 1, WT_QUANT_NONE, WT_F32);
	for (uint32_t r = 0; r < 2; r++) {
		dense_chk(&f, r, r, false);
		shp(&f, r, W13, 3, NE, 64, HID);
		shp(&f, r, W2, 3, NE, HID, 32);
		for (int64_t j = 0; j < NE; j++)
			experts_chk(&f, r, j, j, r * 32, 32, false);
	}
	/* layer 1's attention is kept (modules_to_not_convert): its BF16 values */
	const float *q1 = (const float *)out_bytes(&f, 1, L1 "self_attn.qkv_proj.weight");
	for (int64_t i = 0; i < 128 * HID; i++)
		assert_true(q1[i] == val(f.m, L1 "self_attn.q_proj.weight", 128 * HID + i));
	fx_close(&f);
	fx_lay(&f, fb_l4(WT_F32, WT_F32, WT_F32), L4_OK, 2, 1, WT_QUANT_NONE, WT_DTYPE_INVALID);
	assert_int_equal(info(&f, 1, GUP)->dtype, WT_BF16); /* dtype source: BF16 */
	const uint16_t *g = (const uint16_t *)out_bytes(&f, 1, GUP);
	for (int64_t k = 0; k < 96 * HID; k++)
		assert_int_equal(g[k], kern_f32_to_bf16(val(f.m, GATE, 96 * HID + k) *
		                                        val(f.m, GATE "_scale", 96 + k / HID)));
	fx_close(&f);
}

/* EP 2 (experts whole, 2 per rank) and TP 2 x EP 2, dequantized. */
static void test_fb_ep_dequant(void **state)
{
	(void)state;
	fx f;
	fx_lay(&f, fb_l4(WT_BF16, WT_F32, WT_BF16), L4_OK, 1, 2, WT_QUANT_NONE, WT_F32);
	for (uint32_t e = 0; e < 2; e++) {
		shp(&f, e, W13, 3, 2, 2 * IE, HID);
		for (int64_t s = 0; s < 2; s++)
			experts_chk(&f, e, s, 2 * e + s, 0, IE, false);
		lin_chk(&f, e, DOWN, 0, DOWN, IM, 0, HID, 0, IM, false);
	}
	fx_close(&f);
	fx_lay(&f, fb_l4(WT_BF16, WT_F32, WT_BF16), L4_OK, 2, 2, WT_QUANT_NONE, WT_F32);
	for (uint32_t r = 0; r < 4; r++) { /* rank = ep * 2 + tp */
		dense_chk(&f, r, r % 2, false);
		for (int64_t s = 0; s < 2; s++)
			experts_chk(&f, r, s, 2 * (r / 2) + s, 0, IE, false);
	}
	fx_close(&f);
}

/* fp8-channel keeps the codes and scales (F32 rows of the emitted tensor): TP 2 (experts
 * TP-split, w2 keeps every row's scale), EP 2 and TP 2 x EP 2; kept modules stay BF16. */
static void test_fb_pass(void **state)
{
	(void)state;
	fx f;
	fx_lay(&f, fb_l4(WT_F16, WT_BF16, WT_F32), L4_OK, 2, 1, WT_QUANT_FP8_CHANNEL,
	       WT_DTYPE_INVALID);
	for (uint32_t r = 0; r < 2; r++) {
		assert_int_equal(info(&f, r, W13)->dtype, WT_F8_E4M3);
		assert_int_equal(info(&f, r, W13 "_scale")->dtype, WT_F32);
		shp(&f, r, W13 "_scale", 3, NE, 64, 1);
		shp(&f, r, W2 "_scale", 3, NE, HID, 1);
		shp(&f, r, DOWN "_scale", 2, HID, 1, 0);
		dense_chk(&f, r, r, true);
		for (int64_t j = 0; j < NE; j++)
			experts_chk(&f, r, j, j, r * 32, 32, true);
		assert_int_equal(info(&f, r, L1 "self_attn.qkv_proj.weight")->dtype, WT_BF16);
		assert_true(tm_ix(f.p, r, L1 "self_attn.qkv_proj.weight_scale") < 0);
		assert_int_equal(
		    info(&f, r, L1 "feed_forward.shared_expert.down_proj.weight")->dtype, WT_BF16);
		assert_int_equal(info(&f, r, L1 "feed_forward.router.weight")->dtype, WT_BF16);
	}
	fx_close(&f);
	for (uint32_t T = 1; T <= 2; T++) {
		fx_lay(&f, fb_l4(WT_F32, WT_F32, WT_BF16), L4_OK, T, 2, WT_QUANT_FP8_CHANNEL,
		       WT_DTYPE_INVALID);
		for (uint32_t r = 0; r < 2 * T; r++) {
			if (T == 2)
				dense_chk(&f, r, r % 2, true);
			shp(&f, r, W13 "_scale", 3, 2, 2 * IE, 1);
			for (int64_t s = 0; s < 2; s++)
				experts_chk(&f, r, s, 2 * (r / T) + s, 0, IE, true);
		}
		fx_close(&f);
	}
}

/* Other schemes quantize the dequantized values (no requant=allow needed): int8-channel
 * scales from f32(q) * s, one expert at a time. */
static void test_fb_requant(void **state)
{
	(void)state;
	fx f;
	fx_lay(&f, fb_l4(WT_F32, WT_BF16, WT_F32), L4_OK, 2, 1, WT_QUANT_INT8_CHANNEL,
	       WT_DTYPE_INVALID);
	const int8_t *q = (const int8_t *)out_bytes(&f, 1, W13);
	const float *sc = (const float *)out_bytes(&f, 1, W13 "_scale");
	for (int64_t j = 0; j < NE; j++)
		for (int64_t row = 0; row < 64; row++) {
			int64_t ch = j * 2 * IE + (row / 32) * IE + 32 + row % 32;
			float x[HID], amax = 0;
			for (int64_t h = 0; h < HID; h++) {
				x[h] = val(f.m, GU, (j * HID + h) * 2 * IE + ch - j * 2 * IE) *
				       val(f.m, GU "_scale", ch);
				amax = fmaxf(amax, fabsf(x[h]));
			}
			float s = fmaxf(amax, 1e-8f) / 127.0f;
			assert_true(sc[j * 64 + row] == s);
			for (int64_t h = 0; h < HID; h++) {
				float v = rintf(x[h] / s);
				assert_int_equal(q[(j * 64 + row) * HID + h],
				                 (int)fmaxf(-127, fminf(127, v)));
			}
		}
	assert_false(info(&f, 1, W13)->requantized); /* FP8 sources: as 4.4, not flagged */
	fx_close(&f);
}

/* Any family's Linears: a Llama checkpoint in fbgemm_fp8, layer 1's MLP kept. */
#define LLAMA_FB                                                                                   \
	"{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\",\"hidden_size\":256,"  \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"head_dim\":32,"                     \
	"\"intermediate_size\":512,\"vocab_size\":1000,\"num_hidden_layers\":2,"                   \
	"\"tie_word_embeddings\":false" FBQ("[\"lm_head\",\"model.layers.1.mlp\"]") "}"

static tm_model *fb_llama(void)
{
	tm_model *m = tm_new(SEED + 1, WT_BF16);
	tm_top(m, 1000, 256, 1);
	static const char *const lin[] = {
	    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
	    "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
	static const int64_t nk[][2] = {{256, 256}, {64, 256},  {64, 256}, {256, 256},
	                                {512, 256}, {512, 256}, {256, 512}};
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_fmt(b, sizeof(b), TM_L, i, "input_layernorm.weight");
		tm_add2(m, b, 256, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "post_attention_layernorm.weight");
		tm_add2(m, b, 256, 0);
		for (int k = 0; k < 7; k++) {
			char leaf[64];
			snprintf(leaf, sizeof(leaf), "%s.weight", lin[k]);
			tm_fmt(b, sizeof(b), TM_L, i, leaf);
			if (i == 1 && k >= 4)
				tm_add2(m, b, nk[k][0], nk[k][1]);
			else
				fb_lin(m, b, nk[k][0], nk[k][1], WT_BF16);
		}
	}
	return m;
}

static void test_fb_llama(void **state)
{
	(void)state;
	fx f;
	fx_lay(&f, fb_llama(), LLAMA_FB, 2, 1, WT_QUANT_FP8_CHANNEL, WT_DTYPE_INVALID);
	lin_chk(&f, 1, L0 "mlp.gate_up_proj.weight", 0, L0 "mlp.gate_proj.weight", 256, 256, 256, 0,
	        256, true);
	lin_chk(&f, 1, L0 "mlp.down_proj.weight", 0, L0 "mlp.down_proj.weight", 512, 0, 256, 256,
	        256, true);
	lin_chk(&f, 0, L1 "self_attn.o_proj.weight", 0, L1 "self_attn.o_proj.weight", 256, 0, 256,
	        0, 128, true);
	assert_int_equal(info(&f, 1, L1 "mlp.gate_up_proj.weight")->dtype, WT_BF16); /* kept */
	assert_true(tm_ix(f.p, 1, L1 "mlp.down_proj.weight_scale") < 0);
	fx_close(&f);
	fx_lay(&f, fb_llama(), LLAMA_FB, 2, 1, WT_QUANT_NONE, WT_F32);
	lin_chk(&f, 1, L0 "mlp.down_proj.weight", 0, L0 "mlp.down_proj.weight", 512, 0, 256, 256,
	        256, false);
	lin_chk(&f, 0, L0 "self_attn.qkv_proj.weight", 128, L0 "self_attn.k_proj.weight", 256, 0,
	        32, 0, 256, false);
	fx_close(&f);
}

/* modules_to_not_convert as _replace_with_fbgemm_fp8_linear matches it: the module's own
 * name, its full name, or entry + "." anywhere in the full name (a stack's module is its
 * parent, "...feed_forward.experts"). */
static void test_fb_kept(void **state)
{
	(void)state;
	char *keep[] = {"lm_head",
	                "self_attn",
	                "layers.1",
	                "model.layers.2.feed_forward.experts",
	                "feed_forward.experts",
	                "q*",
	                "vision_model"};
	ckpt_config c = {0};
	c.quant = CKPT_QUANT_FBGEMM_FP8;
	c.quant_keep = keep;
	c.n_quant_keep = sizeof(keep) / sizeof(keep[0]);
	static const struct {
		const char *name, *entry;
	} cases[] = {
	    {"language_model.lm_head.weight", "lm_head"},
	    {"model.layers.0.self_attn.q_proj.weight", "self_attn"},
	    {"model.layers.0.my_self_attn.q_proj.weight", "self_attn"}, /* a substring */
	    {"model.layers.1.mlp.gate_proj.weight", "layers.1"},
	    {"model.layers.11.mlp.gate_proj.weight", NULL},
	    {"model.layers.2.feed_forward.experts.gate_up_proj",
	     "model.layers.2.feed_forward.experts"},
	    /* "feed_forward.experts." is not in the module name "...feed_forward.experts" */
	    {"model.layers.3.feed_forward.experts.down_proj", NULL},
	    {"model.layers.3.feed_forward.experts.x.weight", "feed_forward.experts"},
	    {"model.layers.0.mlp.q_proj.weight", NULL}, /* "q*" is literal */
	    {"vision_model.patch_embedding.linear.weight", "vision_model"},
	    {"lm_head", NULL}, /* no module */
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const char *e = shardmap_fb_kept(&c, cases[k].name);
		if ((e == NULL) != (cases[k].entry == NULL) ||
		    (e && strcmp(e, cases[k].entry) != 0))
			fail_msg("'%s': kept by '%s', want '%s'", cases[k].name, e ? e : "(none)",
			         cases[k].entry ? cases[k].entry : "(none)");
	}
	c.quant = CKPT_QUANT_FP8_BLOCK; /* another method: never */
	assert_null(shardmap_fb_kept(&c, "model.layers.0.self_attn.q_proj.weight"));
}

/* quantization_config: modules_to_not_convert verbatim (not patterns), ignore still read as
 * patterns, activation_scale_ub a number; bad lists and values refused. */
static void test_fb_config(void **state)
{
	(void)state;
	static const struct {
		const char *q;
		int rv;
		const char *msg;
	} cases[] = {
	    {FBQ("[\"a.*\",\"b\"]"), WT_OK, NULL},
	    {",\"quantization_config\":{\"quant_method\":\"fbgemm_fp8\"}", WT_OK, NULL},
	    {",\"quantization_config\":{\"quant_method\":\"fbgemm_fp8\",\"ignore\":[\"x\"],"
	     "\"modules_to_not_convert\":null,\"activation_scale_ub\":null}",
	     WT_OK, NULL},
	    {",\"quantization_config\":{\"quant_method\":\"fbgemm_fp8\",\"activation_scale_ub\":"
	     "\"1200\"}",
	     WT_ECORRUPT, "activation_scale_ub"},
	    {FBQ("{}"), WT_ECORRUPT, "modules_to_not_convert must be an array"},
	    {FBQ("[\"a\",\"\"]"), WT_ECORRUPT, "modules_to_not_convert[1]"},
	    {FBQ("[7]"), WT_ECORRUPT, "modules_to_not_convert[0]"},
	    {",\"quantization_config\":{\"quant_method\":\"fbgemm_fp4\"}", WT_EUNSUPPORTED,
	     "'fbgemm_fp4' is not supported"},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char full[1200];
		snprintf(full, sizeof(full), L4T("%s"), cases[k].q);
		ckpt_config c;
		wt_errbuf err = {0};
		int rv = ckpt_config_parse(full, strlen(full), &c, &err);
		printf("config %zu: %s\n", k, rv ? err.msg : "ok");
		assert_int_equal(rv, cases[k].rv);
		if (rv != WT_OK) {
			assert_non_null(strstr(err.msg, cases[k].msg));
			continue;
		}
		assert_int_equal(c.quant, CKPT_QUANT_FBGEMM_FP8);
		assert_int_equal(c.n_quant_keep, k == 0 ? 2 : 0);
		if (k == 0)
			assert_string_equal(c.quant_keep[0], "a.*");
		assert_int_equal(c.n_quant_ignore, k == 2 ? 1 : 0);
		ckpt_config_clear(&c);
	}
}

static void refused(tm_model *m, const char *cfg, int code, const char *a, const char *b)
{
	wt_errbuf err = {0};
	assert_int_equal(plan_err(m, cfg, &err), code);
	printf("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, a));
	assert_non_null(strstr(err.msg, b));
}

/* Replace tensor `name` by a new one (dtype dt, nd dims a, b, c; scales positive). */
static tm_model *swap(tm_model *m, const char *name, wt_dtype dt, int nd, int64_t a, int64_t b,
                      int64_t c)
{
	tm_remove(m, name);
	if (dt == WT_F32 || dt == WT_BF16 || dt == WT_F16)
		fb_scale(m, name, dt, nd, a, b, c);
	else
		tm_add(m, name, dt, nd, a, b, c);
	return m;
}

static tm_model *drop(tm_model *m, const char *name)
{
	tm_remove(m, name);
	return m;
}

static void test_fb_refusals(void **state)
{
	(void)state;
#define M fb_l4(WT_F32, WT_F32, WT_F32)
	/* an FP8 weight needs its scale */
	refused(drop(M, GATE "_scale"), L4_OK, WT_EDTYPE, GATE,
	        "without its scale '" GATE "_scale'");
	refused(drop(M, GU "_scale"), L4_OK, WT_EDTYPE, GU, "without its scale '" GU "_scale'");
	/* with the exact shape: [N, 1]; stacks [E, 1, 2I] (gate_up) and [E, hid, 1] (down) */
	refused(swap(M, GATE "_scale", WT_F32, 1, IM, 0, 0), L4_OK, WT_ESHAPE, GATE "_scale",
	        "must be [192, 1]");
	refused(swap(M, GATE "_scale", WT_F32, 2, 1, IM, 0), L4_OK, WT_ESHAPE, GATE "_scale",
	        "not [1, 192]");
	refused(swap(M, GU "_scale", WT_F32, 3, NE, 2 * IE, 1), L4_OK, WT_ESHAPE, GU "_scale",
	        "must be [4, 1, 128]");
	refused(swap(M, DN "_scale", WT_F32, 3, NE, 1, HID), L4_OK, WT_ESHAPE, DN "_scale",
	        "must be [4, 256, 1]");
	/* and a float dtype of F32 / BF16 / F16 */
	refused(swap(M, GATE "_scale", WT_F64, 2, IM, 1, 0), L4_OK, WT_EDTYPE, GATE "_scale",
	        "scale dtype F64");
	refused(swap(M, DN "_scale", WT_I32, 3, NE, HID, 1), L4_OK, WT_EDTYPE, DN "_scale",
	        "scale dtype I32");
	/* a scale without its weight is an unknown tensor; beside a float weight, unused */
	tm_model *m = drop(M, GU);
	tm_add(m, GU, WT_DTYPE_INVALID, 3, NE, HID, 2 * IE);
	refused(m, L4_OK, WT_EUNSUPPORTED, GU "_scale", "not F8_E4M3");
	refused(drop(drop(M, GU), GU "_scale"), L4_OK, WT_ENOTFOUND, GU, "missing");
	refused(drop(M, GU), L4_OK, WT_EUNSUPPORTED, GU "_scale", "unknown tensor");
	m = drop(M, QW);
	tm_add2(m, QW, 256, HID);
	refused(m, L4_OK, WT_EUNSUPPORTED, QW "_scale", "does not use");
	refused(swap(M, L1 "self_attn.k_proj.weight_scale", WT_F32, 2, 64, 1, 0), L4_OK,
	        WT_EUNSUPPORTED, L1 "self_attn.k_proj.weight_scale", "does not use");
	refused(swap(M, L0 "self_attn.v_proj.weight_scale_inv", WT_F32, 2, 1, 2, 0), L4_OK,
	        WT_EUNSUPPORTED, "v_proj.weight_scale_inv", "fbgemm_fp8");
	/* an FP8 tensor in a module modules_to_not_convert keeps */
	m = drop(M, L1 "self_attn.q_proj.weight");
	fb_lin(m, L1 "self_attn.q_proj.weight", 256, HID, WT_F32);
	refused(m, L4_OK, WT_EDTYPE, L1 "self_attn.q_proj.weight",
	        "modules_to_not_convert entry 'model.layers.1.self_attn'");
	refused(M, L4T(FBQ("[\"experts\"]")), WT_EDTYPE, L1 "feed_forward.experts.",
	        "entry 'experts'");
	refused(M, L4T(FBQ("[\"gate_proj\"]")), WT_EDTYPE, GATE, "entry 'gate_proj'");
	/* no static input scales: activations are scaled dynamically */
	refused(swap(M, L0 "self_attn.o_proj.input_scale", WT_F32, 1, 1, 0, 0), L4_OK,
	        WT_EUNSUPPORTED, "o_proj.input_scale", "dynamically");
#undef M
}

/* A fused module some of whose parts the list keeps, quantized: WT_ELAYOUT (quant none
 * reads it); FP8 stacks outside Llama 4 are no fbgemm format; the stacks' shapes stay
 * checked in the checkpoint's orientation. */
static void test_fb_layout_refusals(void **state)
{
	(void)state;
	tm_model *m = fb_l4(WT_F32, WT_F32, WT_F32);
	drop(m, QW);
	drop(m, QW "_scale");
	tm_add2(m, QW, 256, HID);
	const char *cfg =
	    L4T(FBQ("[\"model.layers.1.self_attn\",\"model.layers.0.self_attn.q_proj\","
	            "\"router\",\"shared_expert\"]"));
	fx f;
	fx_lay(&f, m, cfg, 2, 1, WT_QUANT_NONE, WT_F32);
	lin_chk(&f, 1, QKV0, 128, L0 "self_attn.k_proj.weight", HID, 32, 32, 0, HID, false);
	f.m = NULL;
	fx_close(&f);
	char *dir = tu_mkdtemp("fbq");
	assert_int_equal(tm_write(m, dir, cfg), 0);
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_FP8_CHANNEL;
	store *s;
	ckpt *c;
	sm_plan *p;
	wt_errbuf err = {0};
	assert_int_equal(tm_plan(dir, &l, &s, &c, &p, &err), WT_ELAYOUT);
	printf("refused: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "1 of its 3 fused modules are excluded"));
	tm_close(s, c, p);
	tm_free(m);
	tu_rmrf(dir);
	free(dir);
	/* GraniteMoE's stacks are no Linear transformers converts */
	m = tm_new(SEED, WT_BF16);
	tm_top(m, 1003, 256, 0);
	char b[200];
	for (int i = 0; i < 2; i++) {
		tm_attn(m, i, 8, 2, 32, 256, 0, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.router.layer.weight");
		tm_add2(m, b, 2, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.input_linear.weight");
		tm_add(m, b, WT_F8_E4M3, 3, 2, 256, 256);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.input_linear.weight_scale");
		fb_scale(m, b, WT_F32, 2, 256, 1, 0);
		tm_fmt(b, sizeof(b), TM_L, i, "block_sparse_moe.output_linear.weight");
		tm_add(m, b, WT_DTYPE_INVALID, 3, 2, 256, 128);
	}
	refused(m,
	        "{\"architectures\":[\"GraniteMoeForCausalLM\"],\"model_type\":\"granitemoe\","
	        "\"hidden_size\":256,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
	        "\"intermediate_size\":128,\"vocab_size\":1003,\"num_hidden_layers\":2,"
	        "\"num_local_experts\":2,\"tie_word_embeddings\":true" FBQ("[]") "}",
	        WT_ESHAPE, "input_linear.weight", "a Linear's [N, K] or a Llama 4 expert stack");
	m = drop(fb_l4(WT_F32, WT_F32, WT_F32), GU);
	tm_add(m, GU, WT_F8_E4M3, 3, NE, 2 * IE, HID); /* nn.Linear orientation */
	refused(m, L4_OK, WT_ESHAPE, GU, "disagrees with config.json");
}

/* A scale that is NaN or negative: passed through, the emitted scale is refused at
 * production (WT_ENONFINITE, as FP8 block scales); quantized, the NaN fails the quantizer. */
static void test_fb_bad_scales(void **state)
{
	(void)state;
	static const struct {
		const char *t;
		int64_t at;
		float v;
		wt_quant q;
		const char *msg;
	} cases[] = {
	    {GU "_scale", 70, NAN, WT_QUANT_FP8_CHANNEL, "w13_weight_scale"},
	    {DOWN "_scale", 3, -0.5f, WT_QUANT_FP8_CHANNEL, "down_proj.weight_scale"},
	    {DN "_scale", 9, NAN, WT_QUANT_INT8_CHANNEL, "w2_weight"},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		tm_model *m = fb_l4(WT_F32, WT_F32, WT_F32);
		memcpy((float *)m->data[tm_find(m, cases[k].t)] + cases[k].at, &cases[k].v, 4);
		char *dir = tu_mkdtemp("fbs");
		assert_int_equal(tm_write(m, dir, L4_OK), 0);
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = 2;
		l.quant = cases[k].q;
		store *s;
		ckpt *c;
		sm_plan *p;
		wt_errbuf err = {0};
		int rv;
		assert_int_equal(tm_plan(dir, &l, &s, &c, &p, &err), WT_OK);
		tm_prod_free(tm_produce(c, p, -1, &rv, &err));
		printf("production: %s\n", err.msg);
		assert_int_equal(rv, WT_ENONFINITE);
		assert_non_null(strstr(err.msg, cases[k].msg));
		tm_close(s, c, p);
		tm_free(m);
		tu_rmrf(dir);
		free(dir);
	}
}

static void test_fb_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {1, 2}, {2, 2}, {1, 4}, {4, 2}};
	coverage(fb_l4(WT_F32, WT_BF16, WT_F16), L4_OK, 2, lays, sizeof(lays) / sizeof(lays[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fb_tp2_dequant),
	    cmocka_unit_test(test_fb_ep_dequant),
	    cmocka_unit_test(test_fb_pass),
	    cmocka_unit_test(test_fb_requant),
	    cmocka_unit_test(test_fb_llama),
	    cmocka_unit_test(test_fb_kept),
	    cmocka_unit_test(test_fb_config),
	    cmocka_unit_test(test_fb_refusals),
	    cmocka_unit_test(test_fb_layout_refusals),
	    cmocka_unit_test(test_fb_bad_scales),
	    cmocka_unit_test(test_fb_coverage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
