/*
 * test_shardmap_minimax_text01.c — MiniMax-Text-01 / MiniMax-M1 under their remote-code names
 * (MiniMaxText01ForCausalLM, MiniMaxM1ForCausalLM; model_type minimax_text_01 / minimax_m1),
 * which vLLM's registry maps onto minimax_text_01.py as it does MiniMaxForCausalLM: the same
 * cut (test_shardmap_minimax.h's model and slices), the config read through
 * loader/config_minimax01.c (attn_type_list for layer_types, the layernorm_* factors).
 * Hand-computed slices at TP 2 and TP 4 under both names, every rank byte for byte the
 * transformers-named config's at TP 2 / 4 / 8, int8-channel TP 2 and fp8-channel TP 4,
 * coverage over TP 1..8 / EP, MiniMaxText01Config's defaults and the refusals. Seeds fixed and
 * printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"

#define SEED 0x5eed0048ull
#include "test_shardmap_util.h"
#include "test_shardmap_fx.h"
#include "test_shardmap_experts.h"
#include "test_shardmap_minimax.h"

#define T01_RAW(arch, mt, extra)                                                                   \
	"{\"architectures\":[\"" arch "\"],\"model_type\":\"" mt "\",\"hidden_size\":128,"         \
	"\"num_attention_heads\":8,\"num_key_value_heads\":2,\"num_experts_per_tok\":2" extra "}"
#define T01_DIMS          ",\"intermediate_size\":64,\"vocab_size\":1000,\"num_hidden_layers\":2"
#define T01_E(extra)      T01_RAW("MiniMaxText01ForCausalLM", "minimax_text_01", T01_DIMS extra)
#define T01_AT(at, extra) T01_E(",\"num_local_experts\":4,\"attn_type_list\":" at extra)
#define T01(extra)        T01_AT("[0,1]", extra)
#define M1_AT(at, extra)                                                                           \
	T01_RAW("MiniMaxM1ForCausalLM", "minimax_m1",                                              \
	        T01_DIMS ",\"num_local_experts\":4,\"attn_type_list\":" at extra)
#define M1(extra) M1_AT("[0,1]", extra)
/* the releases' keys beside the dims */
#define T01_KEYS                                                                                   \
	",\"head_dim\":16,\"rotary_dim\":8,\"postnorm\":true,\"shared_intermediate_size\":0,"      \
	"\"layernorm_full_attention_alpha\":3.5,\"layernorm_mlp_beta\":1.0"
/* the same model as transformers' MiniMaxConfig names it */
#define MM_SAME                                                                                    \
	"{\"architectures\":[\"MiniMaxForCausalLM\"],\"model_type\":\"minimax\","                  \
	"\"hidden_size\":128,\"num_attention_heads\":8,\"num_key_value_heads\":2,"                 \
	"\"intermediate_size\":64,\"num_local_experts\":4,\"num_experts_per_tok\":2,"              \
	"\"vocab_size\":1000,\"num_hidden_layers\":2,"                                             \
	"\"layer_types\":[\"linear_attention\",\"full_attention\"]}"

/* TP 2 and TP 4 under both names: the lightning heads by rank, the softmax attention's q/k/v
 * by heads (TP 4 > KV 2: kv head r / 2), the experts' Ie rows by rank, the norms and routers
 * whole. */
static void slices(const char *cfg, uint32_t T)
{
	fx f;
	fx_open(&f, tm_minimax(), cfg, T, 1, 0, true);
	assert_string_equal(shardmap_family(f.p), "minimax");
	for (uint32_t r = 0; r < T; r++) {
		lin_rank(&f, r, T);
		whole(&f, r);
		fx_attn_is(&f, r, T, A1, "o_proj.weight", 8, 2, HD, HID);
		fx_experts_are(&f, &XP, r, 0, NE, IE / T * r, IE / T, false);
	}
	fx_close(&f);
}

static void test_t01_slices(void **state)
{
	(void)state;
	slices(T01(T01_KEYS), 2);
	slices(T01(""), 4);
	slices(M1(T01_KEYS), 2);
	slices(M1(""), 4);
}

/* Every rank of the remote-named config equals the transformers-named one, byte for byte. */
static void same_as_minimax(const wt_layout *l, const char *cfg)
{
	fx a, b;
	fx_open_l(&a, tm_minimax(), cfg, l, true);
	fx_open_l(&b, tm_minimax(), MM_SAME, l, true);
	for (uint32_t r = 0; r < l->tp_size * l->ep_size; r++)
		fx_same_rank(&a, &b, r, NULL);
	fx_close(&a);
	fx_close(&b);
}

static void test_t01_same(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{2, 1}, {4, 1}, {8, 1}, {2, 2}};
	for (size_t k = 0; k < sizeof(lays) / sizeof(lays[0]); k++) {
		wt_layout l;
		wt_layout_init(&l);
		l.tp_size = lays[k][0];
		l.ep_size = lays[k][1];
		same_as_minimax(&l, T01(T01_KEYS));
		same_as_minimax(&l, M1(""));
	}
}

static const char *const t01_keep[] = {A0 "norm.weight", M0 "gate.weight",
                                       L0 "input_layernorm.weight", "model.norm.weight"};
static const char *const t01_quant[] = {A0 "qkv_proj.weight",
                                        A0 "output_gate.weight",
                                        A0 "out_proj.weight",
                                        A1 "qkv_proj.weight",
                                        A1 "o_proj.weight",
                                        W13,
                                        W2};

/* int8-channel at TP 2: the projections and experts quantized per row, the lightning norm,
 * routers and layer norms BF16; rank 1's out_proj / o_proj codes are its columns. fp8-channel
 * at TP 4: the same split. Both byte for byte the transformers-named config's. */
static void test_t01_quant(void **state)
{
	(void)state;
	fx f;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.quant = WT_QUANT_INT8_CHANNEL;
	fx_open_l(&f, tm_minimax(), T01(T01_KEYS), &l, true);
	for (uint32_t r = 0; r < 2; r++)
		fx_quant_split(&f, r, WT_BF16, t01_keep, sizeof(t01_keep) / sizeof(t01_keep[0]),
		               t01_quant, sizeof(t01_quant) / sizeof(t01_quant[0]));
	fx_cols_int8_is(&f, 1, 2, A0 "out_proj.weight", HID, QD);
	fx_cols_int8_is(&f, 1, 2, A1 "o_proj.weight", HID, QD);
	fx_close(&f);
	same_as_minimax(&l, T01(T01_KEYS));
	l.tp_size = 4;
	l.quant = WT_QUANT_FP8_CHANNEL;
	fx_open_l(&f, tm_minimax(), M1(""), &l, true);
	for (uint32_t r = 0; r < 4; r++)
		fx_quant_split_as(&f, r, WT_BF16, t01_keep, sizeof(t01_keep) / sizeof(t01_keep[0]),
		                  t01_quant, sizeof(t01_quant) / sizeof(t01_quant[0]), WT_F8_E4M3);
	fx_close(&f);
	same_as_minimax(&l, M1(""));
}

static void test_t01_coverage(void **state)
{
	(void)state;
	static const uint32_t lays[][2] = {{1, 1}, {2, 1}, {4, 1}, {8, 1}, {1, 2}, {2, 2}};
	coverage(tm_minimax(), T01(T01_KEYS), 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* attn_type_list longer than the layers: vLLM reads the first num_hidden_layers */
	coverage(tm_minimax(), T01_AT("[0,1,1]", ""), 2, lays, sizeof(lays) / sizeof(lays[0]));
	/* attn_type_list wins over a transformers layer_types it replaces */
	coverage(tm_minimax(), M1(",\"layer_types\":[\"full_attention\",\"full_attention\"]"), 2,
	         lays, sizeof(lays) / sizeof(lays[0]));
}

/* Keys left out take MiniMaxText01Config's (Mixtral's) defaults: 8 experts, vocab 32000,
 * intermediate 14336, 32 layers; untied (lm_head needed). */
static void test_t01_defaults(void **state)
{
	(void)state;
	fx_refused(tm_minimax(),
	           T01_RAW("MiniMaxText01ForCausalLM", "minimax_text_01",
	                   ",\"intermediate_size\":64,\"vocab_size\":1000,"
	                   "\"num_hidden_layers\":2,\"attn_type_list\":[0,1]"),
	           WT_ESHAPE, "[8, 128]", "fix config.json");
	fx_refused(tm_minimax(),
	           T01_RAW("MiniMaxM1ForCausalLM", "minimax_m1",
	                   ",\"intermediate_size\":64,\"num_local_experts\":4,"
	                   "\"num_hidden_layers\":2,\"attn_type_list\":[0,1]"),
	           WT_ESHAPE, "[32000, 128]", "fix config.json");
	fx_refused(tm_minimax(),
	           T01_RAW("MiniMaxText01ForCausalLM", "minimax_text_01",
	                   ",\"num_local_experts\":4,\"vocab_size\":1000,"
	                   "\"num_hidden_layers\":2,\"attn_type_list\":[0,1]"),
	           WT_ESHAPE, "14336", "fix config.json");
	fx_refused(tm_minimax(),
	           T01_RAW("MiniMaxText01ForCausalLM", "minimax_text_01",
	                   ",\"intermediate_size\":64,\"num_local_experts\":4,\"vocab_size\":1000,"
	                   "\"attn_type_list\":[0,1]"),
	           WT_ECORRUPT, "attn_type_list has 2 entries for 32 layers", "one per layer");
	tm_model *m = tm_minimax();
	tm_remove(m, "lm_head.weight");
	fx_refused(m, T01(""), WT_ENOTFOUND, "lm_head.weight", "missing");
}

static void test_t01_errors(void **state)
{
	(void)state;
	fx_refused(tm_minimax(),
	           T01_RAW("MiniMaxText01ForCausalLM", "minimax_text_01",
	                   ",\"intermediate_size\":64,\"num_local_experts\":4,\"vocab_size\":1000,"
	                   "\"num_hidden_layers\":2"),
	           WT_EUNSUPPORTED, "attn_type_list is missing", "one per layer");
	fx_refused(tm_minimax(), T01_AT("[0]", ""), WT_ECORRUPT,
	           "attn_type_list has 1 entries for 2 layers", "num_hidden_layers");
	fx_refused(tm_minimax(), T01_AT("[0,2]", ""), WT_EUNSUPPORTED, "attn_type_list[1]",
	           "MiniMaxText01DecoderLayer");
	fx_refused(tm_minimax(), T01_AT("{}", ""), WT_ECORRUPT, "attn_type_list", "not a list");
	/* the kinds swapped: layer 0 then needs q/k/v */
	fx_refused(tm_minimax(), M1_AT("[1,0]", ""), WT_EUNSUPPORTED, A0, "layer_types");
	fx_refused(tm_minimax(), T01_E(",\"num_local_experts\":[4,4],\"attn_type_list\":[0,1]"),
	           WT_EUNSUPPORTED, "num_local_experts is a per-layer list", "give an integer");
	fx_refused(tm_minimax(), T01_E(",\"num_local_experts\":1,\"attn_type_list\":[0,1]"),
	           WT_EUNSUPPORTED, "num_local_experts is 1", "dense mlp.gate_up_proj");
	fx_refused(tm_minimax(), T01(",\"shared_intermediate_size\":64"), WT_EUNSUPPORTED,
	           "shared_intermediate_size is above 0", "give 0");
	fx_refused(tm_minimax(), M1(",\"shared_intermediate_size\":[0,64]"), WT_EUNSUPPORTED,
	           "shared_intermediate_size is above 0", "shared_mlp and coefficient");
	fx_refused(tm_minimax(), T01(",\"tie_word_embeddings\":true"), WT_EUNSUPPORTED,
	           "tie_word_embeddings is true", "never ties");
	fx_refused(tm_minimax(), T01(",\"rope_scaling\":{\"type\":\"linear\",\"factor\":2.0}"),
	           WT_EUNSUPPORTED, "rope_scaling is set", "plain RoPE");
	fx_refused(tm_minimax(), T01(",\"rotary_dim\":7"), WT_EUNSUPPORTED,
	           "rotary_dim 7 of head_dim 16", "even count");
	fx_refused(tm_minimax(), M1(",\"rotary_dim\":32"), WT_EUNSUPPORTED,
	           "rotary_dim 32 of head_dim 16", "even count");
	fx_refused(tm_minimax(), T01_E(",\"num_local_experts\":0,\"attn_type_list\":[0,1]"),
	           WT_ECORRUPT, "num_local_experts > 0", "every layer is MoE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_t01_slices),   cmocka_unit_test(test_t01_same),
	    cmocka_unit_test(test_t01_quant),    cmocka_unit_test(test_t01_coverage),
	    cmocka_unit_test(test_t01_defaults), cmocka_unit_test(test_t01_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
