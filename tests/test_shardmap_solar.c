/*
 * test_shardmap_solar.c — Solar (SolarForCausalLM, remote code: upstage/solar-pro-preview-instruct)
 * cut as vLLM's solar.py loads it: Llama's names, q_proj / k_proj / v_proj fused by heads into
 * self_attn.qkv_proj [q_r; k_r; v_r], o_proj by columns, gate_proj / up_proj merged by rows into
 * mlp.gate_up_proj, down_proj by columns; the norms replicated; embed_tokens / lm_head by
 * vocabulary rows, untied by default. `attention_bias or bias` gives q/k/v's and o_proj's biases
 * alike (qkv_bias is not read: LA_QKV_BIAS_READ 0). The block skip connections (bskcn_*) change
 * no tensor; the keys vLLM's forward fails on are refused, naming the key. Hand-computed slices
 * at TP 2 and TP 4, int8-channel and fp8-channel layouts, coverage over TP 1..8, SolarConfig's
 * defaults (the skips' through ckpt_config_solar) and the refusals. Seeds fixed and printed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "shardmap/shardmap_int.h"
#include "loader/loader.h"

#define SEED   0x5eed0050ull
#define LA_FAM "solar"
#define LA_CFG_RAW(extra)                                                                          \
	"{\"architectures\":[\"SolarForCausalLM\"],\"model_type\":\"solar\","                      \
	"\"hidden_size\":128,\"num_attention_heads\":8" extra "}"
#define LA_CFG(extra)                                                                              \
	LA_CFG_RAW(",\"num_hidden_layers\":2,\"intermediate_size\":192,\"vocab_size\":1000" extra)
#define LA_VOCAB_SHAPE   "[32000, 128]" /* SolarConfig's vocab_size */
#define LA_INTER_SHAPE   "[128, 11008]" /* and intermediate_size */
#define LA_QKV_BIAS_READ 0
#include "test_shardmap_llama_alias.h"

/* The slices, SolarConfig's default skips (past the 2 layers) or skips inside them alike. */
static void test_solar_slices(void **state)
{
	(void)state;
	la_slices(LA_CFG(""));
	la_slices(LA_CFG(",\"bskcn_1\":[1],\"bskcn_2\":[1],\"bskcn_3\":[1],\"bskcn_4\":[1],"
	                 "\"bskcn_tv\":[0.9,0.8]"));
}

/* The skips' refusals: what vLLM's SolarModel.forward fails on (a save at layer 0, a mix with
 * nothing saved yet), wrong types; entries at or past num_hidden_layers are never reached. */
static void test_solar_skips_refused(void **state)
{
	(void)state;
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_1\":[0,1]"), WT_EUNSUPPORTED, "bskcn_1",
	           "layer 0");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_2\":[0]"), WT_EUNSUPPORTED, "bskcn_2",
	           "layer 0");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_1\":[5],\"bskcn_3\":[1]"), WT_EUNSUPPORTED,
	           "bskcn_3 names layer 1", "bskcn_1");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_2\":[],\"bskcn_4\":[1]"), WT_EUNSUPPORTED,
	           "bskcn_4 names layer 1", "bskcn_2");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_1\":[-1]"), WT_ECORRUPT, "bskcn_1[0]",
	           "layer index");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_3\":[1.5]"), WT_ECORRUPT, "bskcn_3[0]",
	           "layer index");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_4\":4"), WT_ECORRUPT, "bskcn_4", "list");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_tv\":[0.9]"), WT_ECORRUPT, "bskcn_tv",
	           "two finite numbers");
	fx_refused(tm_la(8, 1, 0), LA_CFG(",\"bskcn_tv\":[0.9,\"x\"]"), WT_ECORRUPT, "bskcn_tv",
	           "two finite numbers");
	/* a mix past the 2 layers, and one at layer 1 after a save there, plan */
	fx f;
	fx_open(&f, tm_la(8, 1, 0), LA_CFG(",\"bskcn_1\":[],\"bskcn_3\":[2,7]"), 2, 1, 0, true);
	fx_close(&f);
	fx_open(&f, tm_la(8, 1, 0), LA_CFG(",\"bskcn_1\":[1],\"bskcn_3\":[1]"), 2, 1, 0, true);
	fx_close(&f);
}

static bool bit(const uint64_t *m, int i)
{
	return (m[i / 64] >> (i % 64)) & 1u;
}

/* SolarConfig's skips where the keys are absent (bskcn_1 [12, 20, 32, 44], bskcn_2 [20, 32],
 * bskcn_3 [16, 24, 36, 48], bskcn_4 [28, 40], tv [0.9, 0.8]: 0.8), those below n_layers only;
 * given ones read as they are. */
static void test_solar_skip_defaults(void **state)
{
	(void)state;
	ckpt_solar_skips s;
	wt_errbuf err = {0};
	const char *none = "{\"model_type\":\"solar\"}";
	assert_int_equal(ckpt_config_solar(none, strlen(none), 64, &s, &err), WT_OK);
	static const int save1[] = {12, 20, 32, 44}, mix1[] = {16, 24, 36, 48};
	for (int i = 0, n1 = 0, n2 = 0, n3 = 0, n4 = 0; i < 64; i++) {
		n1 += bit(s.save[0], i);
		n2 += bit(s.save[1], i);
		n3 += bit(s.mix[0], i);
		n4 += bit(s.mix[1], i);
		if (i == 63)
			assert_true(n1 == 4 && n2 == 2 && n3 == 4 && n4 == 2);
	}
	for (int k = 0; k < 4; k++)
		assert_true(bit(s.save[0], save1[k]) && bit(s.mix[0], mix1[k]));
	assert_true(bit(s.save[1], 20) && bit(s.save[1], 32) && bit(s.mix[1], 28) &&
	            bit(s.mix[1], 40));
	assert_true(fabs(s.tv - 0.8) < 1e-12);
	assert_int_equal(ckpt_config_solar(none, strlen(none), 30, &s, &err), WT_OK);
	assert_true(bit(s.save[0], 20) && !bit(s.save[0], 32) && !bit(s.mix[0], 36));
	const char *given = "{\"bskcn_1\":[3],\"bskcn_2\":[2,5],\"bskcn_3\":[4],\"bskcn_4\":[6],"
	                    "\"bskcn_tv\":[0.5,0.25]}";
	assert_int_equal(ckpt_config_solar(given, strlen(given), 8, &s, &err), WT_OK);
	assert_true(s.save[0][0] == (1u << 3) && s.save[1][0] == ((1u << 2) | (1u << 5)) &&
	            s.mix[0][0] == (1u << 4) && s.mix[1][0] == (1u << 6) && s.tv == 0.25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_solar_slices),
	    cmocka_unit_test(test_la_switches),
	    cmocka_unit_test(test_la_quant),
	    cmocka_unit_test(test_la_coverage),
	    cmocka_unit_test(test_la_defaults),
	    cmocka_unit_test(test_la_errors),
	    cmocka_unit_test(test_solar_skips_refused),
	    cmocka_unit_test(test_solar_skip_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
