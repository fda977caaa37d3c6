/*
 * test_shardmap_eagle.c — EAGLE-3 draft heads (llama_eagle3: Eagle3LlamaForCausalLM,
 * LlamaForCausalLMEagle3, Eagle3Qwen2_5vlForCausalLM, Eagle3Qwen3vlForCausalLM; e.g.
 * yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, lmsys/sglang-EAGLE3-LLaMA3.3-Instruct-70B) cut as vLLM's
 * llama_eagle3.py loads them: the draft module's names (midlayer. or layers.N., fc., norm.,
 * embed_tokens., lm_head, d2t, t2d) under vLLM's (model.layers.N., model.fc, ...,
 * draft_id_to_target_id); layer 0's q / k / v over [embeds; hidden] (2 x hidden columns) fused by
 * heads, the later layers' as Llama's, o_proj / down_proj by columns, gate_up by rows, the norms
 * and hidden_norm replicated; fc whole on every rank (ReplicatedLinear, quantized); lm_head by
 * rows of draft_vocab_size padded, embed_tokens by rows of vocab_size; d2t whole in I64, t2d
 * skipped. Hand slices at TP 2 / 4, the later layers byte for byte LlamaForCausalLM's,
 * int8-channel TP 2, fp8-channel TP 4, coverage TP 1/2/4/8, LlamaConfig's defaults, the
 * refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed00e3ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"

/* hid 128, H 8, KV 2 (d 16), I 192, V 1000, draft V 300, target hidden 96 (fc [128, 288]) */
#define HID 128
#define HD  16
#define I   192
#define DV  300
#define EG_RAW(arch, extra)                                                                        \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"llama\",\"hidden_size\":128,"          \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"intermediate_size\":192,"           \
	"\"vocab_size\":1000,\"rms_norm_eps\":1e-05" extra "}"
#define EG_KEYS(l)     ",\"num_hidden_layers\":" l ",\"draft_vocab_size\":300,\"target_hidden_size\":96"
#define EG_CFG(extra)  EG_RAW("LlamaForCausalLMEagle3", EG_KEYS("1") extra)
#define EG_CFG2(extra) EG_RAW("Eagle3LlamaForCausalLM", EG_KEYS("2") extra)

#define L0   "model.layers.0."
#define L1   "model.layers.1."
#define QKV0 L0 "self_attn.qkv_proj.weight"
#define D2T  "draft_id_to_target_id"

/* What a model holds beyond the layers' weights and fc / norm / lm_head. */
enum {
	EG_EMB = 1 << 0,    /* embed_tokens.weight [V, hid] */
	EG_D2T = 1 << 1,    /* d2t I64 [DV], t2d BOOL [V] */
	EG_QKVB = 1 << 2,   /* q/k/v biases */
	EG_OB = 1 << 3,     /* o_proj bias */
	EG_MLPB = 1 << 4,   /* gate / up / down biases */
	EG_NOFC = 1 << 5,   /* no fc.weight */
	EG_HN1 = 1 << 6,    /* hidden_norm in the later layers */
	EG_FC384 = 1 << 7,  /* fc [hid, 3 x hid] (no target_hidden_size) */
	EG_HEAD1K = 1 << 8, /* lm_head [V, hid] (no draft_vocab_size) */
	EG_NOHEAD = 1 << 9, /* no lm_head */
};

/* Layer i's checkpoint prefix: midlayer. (one layer, yuhuili's releases) or layers.i. */
static void eg_pre(char *b, size_t n, bool mid, int i)
{
	if (mid)
		snprintf(b, n, "midlayer.");
	else
		snprintf(b, n, "layers.%d.", i);
}

static void eg_add(tm_model *m, const char *p, const char *leaf, int64_t a, int64_t b)
{
	char n[160];
	snprintf(n, sizeof(n), "%s%s", p, leaf);
	tm_add2(m, n, a, b);
}

/* A draft of `layers` layers (mid: the one layer under midlayer.), BF16, with `fl`. */
static tm_model *eg_model(int layers, bool mid, int fl)
{
	tm_model *m = tm_new(SEED, WT_BF16);
	for (int i = 0; i < layers; i++) {
		char p[40];
		eg_pre(p, sizeof(p), mid, i);
		int64_t in = i == 0 ? 2 * HID : HID;
		eg_add(m, p, "self_attn.q_proj.weight", 8 * HD, in);
		eg_add(m, p, "self_attn.k_proj.weight", 2 * HD, in);
		eg_add(m, p, "self_attn.v_proj.weight", 2 * HD, in);
		eg_add(m, p, "self_attn.o_proj.weight", HID, 8 * HD);
		eg_add(m, p, "mlp.gate_proj.weight", I, HID);
		eg_add(m, p, "mlp.up_proj.weight", I, HID);
		eg_add(m, p, "mlp.down_proj.weight", HID, I);
		eg_add(m, p, "input_layernorm.weight", HID, 0);
		eg_add(m, p, "post_attention_layernorm.weight", HID, 0);
		if (i == 0 || (fl & EG_HN1))
			eg_add(m, p, "hidden_norm.weight", HID, 0);
		if (fl & EG_QKVB) {
			eg_add(m, p, "self_attn.q_proj.bias", 8 * HD, 0);
			eg_add(m, p, "self_attn.k_proj.bias", 2 * HD, 0);
			eg_add(m, p, "self_attn.v_proj.bias", 2 * HD, 0);
		}
		if (fl & EG_OB)
			eg_add(m, p, "self_attn.o_proj.bias", HID, 0);
		if (fl & EG_MLPB) {
			eg_add(m, p, "mlp.gate_proj.bias", I, 0);
			eg_add(m, p, "mlp.up_proj.bias", I, 0);
			eg_add(m, p, "mlp.down_proj.bias", HID, 0);
		}
	}
	if (!(fl & EG_NOFC))
		tm_add2(m, "fc.weight", HID, (fl & EG_FC384) ? 3 * HID : 3 * 96);
	tm_add2(m, "norm.weight", HID, 0);
	if (!(fl & EG_NOHEAD))
		tm_add2(m, "lm_head.weight", (fl & EG_HEAD1K) ? 1000 : DV, HID);
	if (fl & EG_EMB)
		tm_add2(m, "embed_tokens.weight", 1000, HID);
	if (fl & EG_D2T) {
		tm_add(m, "d2t", WT_I64, 1, DV, 0, 0);
		tm_add(m, "t2d", WT_BOOL, 1, 1000, 0, 0);
	}
	return m;
}

/* Rank r of T's layer under runtime prefix rt from checkpoint prefix ck, its q/k/v `in` columns
 * wide: qkv_proj [q_r; k_r; v_r] (kv heads replicated when 2 < T), o_proj / down_proj by
 * columns, gate_up [gate_r; up_r], the norms (and hidden_norm when hn) whole. */
static void eg_layer_is(const fx *f, uint32_t r, uint32_t T, const char *rt, const char *ck,
                        int64_t in, bool hn)
{
	char a[160], q[160], k[160], v[160], b[160], c[160];
#define RT(s)      (snprintf(a, sizeof(a), "%s%s", rt, s), a)
#define CK(buf, s) (snprintf(buf, sizeof(buf), "%s%s", ck, s), buf)
	int64_t kvl = 2 >= T ? 2 / T : 1;
	shp(f, r, RT("self_attn.qkv_proj.weight"), 2, (8 / T + 2 * kvl) * HD, in, 0);
	fx_qkv_is(f, r, T, a, CK(q, "self_attn.q_proj.weight"), CK(k, "self_attn.k_proj.weight"),
	          CK(v, "self_attn.v_proj.weight"), 8, 2, HD);
	cols_of(f, r, T, RT("self_attn.o_proj.weight"), CK(b, "self_attn.o_proj.weight"), HID,
	        8 * HD);
	shp(f, r, RT("mlp.gate_up_proj.weight"), 2, 2 * (I / T), HID, 0);
	fx_gate_up_is(f, r, T, a, CK(b, "mlp.gate_proj.weight"), CK(c, "mlp.up_proj.weight"), I);
	cols_of(f, r, T, RT("mlp.down_proj.weight"), CK(b, "mlp.down_proj.weight"), HID, I);
	repl_from(f, r, RT("input_layernorm.weight"), CK(b, "input_layernorm.weight"));
	repl_from(f, r, RT("post_attention_layernorm.weight"),
	          CK(b, "post_attention_layernorm.weight"));
	if (hn)
		repl_from(f, r, RT("hidden_norm.weight"), CK(b, "hidden_norm.weight"));
	else
		assert_true(tm_ix(f->p, r, RT("hidden_norm.weight")) < 0);
#undef RT
#undef CK
}

/* TP 2 and 4 of yuhuili's layout (midlayer., d2t / t2d, no embed_tokens) and of the layers.0.
 * layout with embed_tokens, by hand: layer 0's q/k/v 256 columns wide; fc and d2t whole on
 * every rank (d2t I64 whatever the dtype); lm_head rows of the padded draft vocabulary (300 ->
 * 320), embed_tokens of the vocabulary (1000 -> 1024); t2d skipped. */
static void test_eagle_slices(void **state)
{
	(void)state;
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f;
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = T;
		l.dtype = WT_BF16;
		fx_open_l(&f, eg_model(1, true, EG_D2T), EG_CFG(""), &l, true);
		assert_string_equal(shardmap_family(f.p), "llama_eagle3");
		assert_true(fx_skipped(&f, "t2d"));
		for (uint32_t r = 0; r < T; r++) {
			eg_layer_is(&f, r, T, L0, "midlayer.", 2 * HID, true);
			repl_from(&f, r, "model.fc.weight", "fc.weight");
			shp(&f, r, "model.fc.weight", 2, HID, 288, 0);
			repl_from(&f, r, "model.norm.weight", "norm.weight");
			fx_vocab_from(&f, r, T, "lm_head.weight", "lm_head.weight", DV, 320, HID);
			repl_from(&f, r, D2T, "d2t");
			assert_int_equal(info(&f, r, D2T)->dtype, WT_I64);
			assert_true(tm_ix(f.p, r, "model.embed_tokens.weight") < 0);
			/* the layer's 7, fc, norm, lm_head, d2t */
			assert_int_equal(shardmap_rank_n_tensors(f.p, r), 11);
		}
		fx_close(&f);
		fx_open(&f, eg_model(1, false, EG_EMB),
		        EG_RAW("Eagle3Qwen2_5vlForCausalLM", EG_KEYS("1")), T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			eg_layer_is(&f, r, T, L0, "layers.0.", 2 * HID, true);
			fx_vocab_from(&f, r, T, "model.embed_tokens.weight", "embed_tokens.weight",
			              1000, 1024, HID);
			assert_true(tm_ix(f.p, r, D2T) < 0);
		}
		fx_close(&f);
	}
	/* the two name layouts of one draft: every rank byte for byte */
	fx a, b;
	fx_open(&a, eg_model(1, true, 0), EG_CFG(""), 2, 1, 0, true);
	fx_open(&b, eg_model(1, false, 0), EG_RAW("Eagle3Qwen3vlForCausalLM", EG_KEYS("1")), 2, 1,
	        0, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
}

/* A copy of draft d's layer 1 as the one layer of a LlamaForCausalLM (model.layers.0.*), with
 * embed_tokens / lm_head / norm of its own. */
static tm_model *eg_as_llama(const tm_model *d)
{
	static const char *const leaves[] = {
	    "self_attn.q_proj.weight",        "self_attn.k_proj.weight",
	    "self_attn.v_proj.weight",        "self_attn.o_proj.weight",
	    "mlp.gate_proj.weight",           "mlp.up_proj.weight",
	    "mlp.down_proj.weight",           "input_layernorm.weight",
	    "post_attention_layernorm.weight"};
	tm_model *m = tm_new(SEED + 1, WT_BF16);
	for (size_t k = 0; k < sizeof(leaves) / sizeof(leaves[0]); k++) {
		char s[160], t[160];
		snprintf(s, sizeof(s), "layers.1.%s", leaves[k]);
		snprintf(t, sizeof(t), L0 "%s", leaves[k]);
		int j = tm_find(d, s);
		assert_true(j >= 0);
		const st_desc *x = &d->d[j];
		void *p =
		    tm_add(m, t, WT_BF16, x->ndim, x->shape[0], x->ndim > 1 ? x->shape[1] : 0, 0);
		memcpy(p, d->data[j], (size_t)(x->shape[0] * (x->ndim > 1 ? x->shape[1] : 1)) * 2);
	}
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	tm_add2(m, "lm_head.weight", 1000, HID);
	tm_add2(m, "model.norm.weight", HID, 0);
	return m;
}

/* Two layers (layers.0. / layers.1.): layer 1's q/k/v read hidden_size columns and its every
 * tensor is on each rank byte for byte what LlamaForCausalLM's layer of the same weights gets
 * (TP 2, 4); its hidden_norm optional (built, never read), replicated when there. */
static void test_eagle_layers(void **state)
{
	(void)state;
	static const char *const leaves[] = {
	    "self_attn.qkv_proj.weight", "self_attn.o_proj.weight",
	    "mlp.gate_up_proj.weight",   "mlp.down_proj.weight",
	    "input_layernorm.weight",    "post_attention_layernorm.weight"};
	for (uint32_t T = 2; T <= 4; T *= 2) {
		fx f, g;
		fx_open(&f, eg_model(2, false, 0), EG_CFG2(""), T, 1, 0, true);
		fx_open(&g, eg_as_llama(f.m),
		        "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\","
		        "\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"
		        "\"intermediate_size\":192,\"vocab_size\":1000,\"num_hidden_layers\":1}",
		        T, 1, 0, true);
		for (uint32_t r = 0; r < T; r++) {
			eg_layer_is(&f, r, T, L0, "layers.0.", 2 * HID, true);
			eg_layer_is(&f, r, T, L1, "layers.1.", HID, false);
			for (size_t k = 0; k < sizeof(leaves) / sizeof(leaves[0]); k++) {
				char a[160], b[160];
				snprintf(a, sizeof(a), L1 "%s", leaves[k]);
				snprintf(b, sizeof(b), L0 "%s", leaves[k]);
				const sm_out_info *x = info(&f, r, a), *y = info(&g, r, b);
				assert_int_equal(x->nbytes, y->nbytes);
				assert_memory_equal(out_bytes(&f, r, a), out_bytes(&g, r, b),
				                    x->nbytes);
			}
		}
		fx_close(&f);
		fx_close(&g);
	}
	fx f;
	fx_open(&f, eg_model(2, false, EG_HN1), EG_CFG2(""), 2, 1, 0, true);
	eg_layer_is(&f, 1, 2, L1, "layers.1.", HID, true);
	fx_close(&f);
}

/* The bias switches as llama_eagle3.py reads them: attention_bias gives q/k/v's (fused by heads)
 * and o_proj's (whole) biases; bias alone o_proj's; mlp_bias the MLP's (gate / up by rows, down
 * whole). use_aux_hidden_state false: fc skipped. target_hidden_size absent: fc [hid, 3 hid];
 * draft_vocab_size absent or null: lm_head over vocab_size. lm_head / embed_tokens / d2t
 * optional; tie_word_embeddings never drops lm_head (the draft's own ParallelLMHead). */
static void test_eagle_switches(void **state)
{
	(void)state;
	fx f;
	fx_open(&f, eg_model(1, true, EG_QKVB | EG_OB | EG_MLPB),
	        EG_CFG(",\"attention_bias\":true,"
	               "\"mlp_bias\":true"),
	        2, 1, 0, true);
	for (uint32_t r = 0; r < 2; r++) {
		fx_qkv_is(&f, r, 2, L0 "self_attn.qkv_proj.bias", "midlayer.self_attn.q_proj.bias",
		          "midlayer.self_attn.k_proj.bias", "midlayer.self_attn.v_proj.bias", 8, 2,
		          HD);
		repl_from(&f, r, L0 "self_attn.o_proj.bias", "midlayer.self_attn.o_proj.bias");
		fx_gate_up_is(&f, r, 2, L0 "mlp.gate_up_proj.bias", "midlayer.mlp.gate_proj.bias",
		              "midlayer.mlp.up_proj.bias", I);
		repl_from(&f, r, L0 "mlp.down_proj.bias", "midlayer.mlp.down_proj.bias");
	}
	fx_close(&f);
	fx_open(&f, eg_model(1, true, EG_OB), EG_CFG(",\"bias\":true"), 2, 1, 0, true);
	repl_from(&f, 1, L0 "self_attn.o_proj.bias", "midlayer.self_attn.o_proj.bias");
	assert_true(tm_ix(f.p, 1, L0 "self_attn.qkv_proj.bias") < 0);
	fx_close(&f);
	fx_open(&f, eg_model(1, true, 0),
	        EG_CFG(",\"eagle_config\":{\"use_aux_hidden_state\":false}"), 2, 1, 0, true);
	assert_true(fx_skipped(&f, "fc.weight") && tm_ix(f.p, 0, "model.fc.weight") < 0);
	fx_close(&f);
	fx_open(&f, eg_model(1, true, EG_NOFC | EG_NOHEAD),
	        EG_CFG(",\"eagle_config\":{\"use_aux_hidden_state\":false,"
	               "\"eagle_aux_hidden_state_layer_ids\":[1,2,3]}"),
	        2, 1, 0, true);
	assert_true(tm_ix(f.p, 0, "lm_head.weight") < 0 && tm_ix(f.p, 0, "model.norm.weight") >= 0);
	fx_close(&f);
	fx_open(&f, eg_model(1, true, EG_FC384 | EG_HEAD1K),
	        EG_RAW("LlamaForCausalLMEagle3", ",\"num_hidden_layers\":1"), 4, 1, 0, true);
	shp(&f, 3, "model.fc.weight", 2, HID, 3 * HID, 0);
	fx_vocab_from(&f, 3, 4, "lm_head.weight", "lm_head.weight", 1000, 1024, HID);
	fx_close(&f);
	fx_open(&f, eg_model(1, true, EG_HEAD1K),
	        EG_RAW("LlamaForCausalLMEagle3",
	               ",\"num_hidden_layers\":1,\"draft_vocab_size\":null,"
	               "\"target_hidden_size\":96,"
	               "\"tie_word_embeddings\":true"),
	        2, 1, 0, true);
	fx_vocab_from(&f, 1, 2, "lm_head.weight", "lm_head.weight", 1000, 1024, HID);
	assert_false(shardmap_tied_lm_head(f.p));
	fx_close(&f);
}

static const char *const eg_keep[] = {"lm_head.weight", "model.norm.weight",
                                      L0 "hidden_norm.weight", L0 "input_layernorm.weight"};
static const char *const eg_quant[] = {QKV0, L0 "self_attn.o_proj.weight",
                                       L0 "mlp.gate_up_proj.weight", L0 "mlp.down_proj.weight",
                                       "model.fc.weight"};

/* int8-channel at TP 2: the layer's Linears and fc quantized per row (rank 1's qkv_proj codes
 * are layer 0's q / k / v rows over 256 columns; fc's every row on both ranks), lm_head and
 * the norms BF16, d2t I64. fp8-channel at TP 4 alike. */
static void test_eagle_quant(void **state)
{
	(void)state;
	fx f;
	fx_open_quant(&f, eg_model(1, true, EG_D2T), EG_CFG(""), 2, WT_QUANT_INT8_CHANNEL, WT_BF16,
	              FX_N(eg_keep), FX_N(eg_quant));
	fx_qkv_int8_is(&f, 1, 2, QKV0, "midlayer.self_attn.q_proj.weight",
	               "midlayer.self_attn.k_proj.weight", "midlayer.self_attn.v_proj.weight", 8, 2,
	               HD, 2 * HID);
	for (uint32_t r = 0; r < 2; r++) {
		fx_rows_int8_is(&f, r, "model.fc.weight", 0, "fc.weight", 0, HID, 288);
		repl_from(&f, r, D2T, "d2t");
		assert_int_equal(info(&f, r, D2T)->dtype, WT_I64);
	}
	fx_close(&f);
	fx_open_quant(&f, eg_model(1, true, EG_D2T), EG_CFG(""), 4, WT_QUANT_FP8_CHANNEL, WT_BF16,
	              FX_N(eg_keep), FX_N(eg_quant));
	for (uint32_t r = 0; r < 4; r++) {
		shp(&f, r, "model.fc.weight_scale", 2, HID, 1, 0);
		repl_from(&f, r, D2T, "d2t");
	}
	fx_close(&f);
}

static void test_eagle_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}};
	coverage(eg_model(1, true, EG_D2T | EG_EMB), EG_CFG(""), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
	coverage(eg_model(2, false, EG_QKVB | EG_OB | EG_MLPB | EG_HN1 | EG_EMB | EG_D2T),
	         EG_CFG2(",\"attention_bias\":true,\"mlp_bias\":true"), 2, lays,
	         sizeof(lays) / sizeof(lays[0]));
}

/* The config keys vLLM refuses or cannot read, named. */
static void test_eagle_config_errors(void **state)
{
	(void)state;
	fx_refused(eg_model(1, true, 0), EG_CFG(",\"hidden_act\":\"gelu\""), WT_EUNSUPPORTED,
	           "hidden_act", "silu");
	fx_refused(eg_model(1, true, 0), EG_CFG(",\"speculators_model_type\":\"eagle3\""),
	           WT_EUNSUPPORTED, "speculators_model_type", "Eagle3LlamaForCausalLM");
	fx_refused(eg_model(1, true, 0),
	           EG_RAW("LlamaForCausalLMEagle3",
	                  ",\"num_hidden_layers\":1,\"target_hidden_size\":"
	                  "null,\"draft_vocab_size\":300"),
	           WT_ECORRUPT, "target_hidden_size", "null");
	fx_refused(eg_model(1, true, 0), EG_CFG(",\"eagle_config\":[1]"), WT_ECORRUPT,
	           "eagle_config", "not an object");
	fx_refused(eg_model(1, true, 0), EG_CFG(",\"eagle_config\":{\"use_aux_hidden_state\":1}"),
	           WT_ECORRUPT, "use_aux_hidden_state", "boolean");
	fx_refused(
	    eg_model(1, true, 0),
	    EG_RAW("LlamaForCausalLMEagle3", ",\"num_hidden_layers\":1,\"draft_vocab_size\":0"),
	    WT_ECORRUPT, "draft_vocab_size", "");
	fx_refused(eg_model(1, true, 0), EG_CFG(",\"bias\":\"yes\""), WT_ECORRUPT, "bias", "");
}

/* The checkpoints vLLM cannot load (or would load wrong), named. */
static void test_eagle_errors(void **state)
{
	(void)state;
	tm_model *m = eg_model(1, false, 0);
	tm_add2(m, "model.embed_tokens.weight", 1000, HID);
	fx_refused(m, EG_CFG(""), WT_EUNSUPPORTED, "model.embed_tokens.weight", "without model.");
	m = eg_model(1, true, 0);
	tm_add2(m, "layers.0.hidden_norm.weight", HID, 0);
	fx_refused(m, EG_CFG(""), WT_EUNSUPPORTED, "layers.0.hidden_norm.weight", "unknown tensor");
	m = eg_model(1, true, 0);
	tm_add2(m, "mask_hidden", 1, 3 * HID);
	fx_refused(m, EG_CFG(""), WT_EUNSUPPORTED, "mask_hidden", "unknown tensor");
	fx_refused(eg_model(1, true, EG_NOFC), EG_CFG(""), WT_ENOTFOUND, "fc.weight", "missing");
	fx_refused(eg_model(1, true, EG_NOFC),
	           EG_CFG(",\"eagle_config\":{\"use_aux_hidden_state\":true}"), WT_ENOTFOUND,
	           "fc.weight", "missing");
	fx_refused(eg_model(1, true, 0),
	           EG_RAW("LlamaForCausalLMEagle3",
	                  ",\"num_hidden_layers\":1,\"draft_vocab_size\":300,"
	                  "\"target_hidden_size\":64"),
	           WT_ESHAPE, "fc.weight", "[128, 192]");
	fx_refused(eg_model(1, true, 0),
	           EG_RAW("LlamaForCausalLMEagle3",
	                  ",\"num_hidden_layers\":1,\"draft_vocab_size\":256,"
	                  "\"target_hidden_size\":96"),
	           WT_ESHAPE, "lm_head.weight", "[256, 128]");
	m = eg_model(1, true, 0);
	tm_remove(m, "midlayer.self_attn.q_proj.weight");
	tm_add2(m, "midlayer.self_attn.q_proj.weight", 8 * HD, HID);
	fx_refused(m, EG_CFG(""), WT_ESHAPE, "q_proj.weight", "[128, 256]");
	m = eg_model(1, true, 0);
	tm_remove(m, "midlayer.hidden_norm.weight");
	fx_refused(m, EG_CFG(""), WT_ENOTFOUND, "hidden_norm.weight", "missing");
	fx_refused(eg_model(1, true, EG_QKVB | EG_OB), EG_CFG(",\"bias\":true"), WT_EUNSUPPORTED,
	           "_proj.bias", "attention_bias");
	fx_refused(eg_model(1, true, EG_OB), EG_CFG(""), WT_EUNSUPPORTED, "o_proj.bias",
	           "(attention_bias or bias is false");
	fx_refused(eg_model(1, true, EG_OB), EG_CFG(",\"attention_bias\":true"), WT_ENOTFOUND,
	           "q_proj.bias", "attention_bias");
	fx_refused(eg_model(1, true, EG_MLPB), EG_CFG(""), WT_EUNSUPPORTED, "_proj.bias",
	           "mlp_bias");
	m = eg_model(1, true, 0);
	tm_add(m, "d2t", WT_I32, 1, DV, 0, 0);
	fx_refused(m, EG_CFG(""), WT_EDTYPE, "d2t", "not a float type");
	m = eg_model(1, true, 0);
	tm_add(m, "d2t", WT_I64, 1, 1000, 0, 0);
	fx_refused(m, EG_CFG(""), WT_ESHAPE, "d2t", "[300]");
	fx_refused_tp(eg_model(1, true, 0), EG_CFG(""), 16, WT_ELAYOUT, "tp_size 16", "8");
	fx_refused_tp(eg_model(1, true, 0), EG_CFG(""), 3, WT_ELAYOUT, "tp_size 3", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_eagle_slices),   cmocka_unit_test(test_eagle_layers),
	    cmocka_unit_test(test_eagle_switches), cmocka_unit_test(test_eagle_quant),
	    cmocka_unit_test(test_eagle_coverage), cmocka_unit_test(test_eagle_config_errors),
	    cmocka_unit_test(test_eagle_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
