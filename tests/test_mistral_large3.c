/*
 * test_mistral_large3.c — Mistral-Large-3 in Mistral's native format (params.json with MLA +
 * moe + llama_4_scaling, consolidated*.safetensors under Mistral's names;
 * loader/config_mistral_ml3.c, docs/format.md "Mistral native format"): read as vLLM's
 * configs/mistral.py and mistral_large_3.py read it, a DeepSeek-V3 model
 * (MistralLarge3ForCausalLM) whose tensors are renamed, never permuted. Every rank file of TP
 * 1 / 2 / 4 and TP 2 x EP 2, each x none / int8-channel / fp8-block, is byte for byte the one
 * the same weights under DeepSeek-V3's transformers names give (wt-mkckpt --family
 * mistral_large3, and --format mistral); the loader's view (config.json keys, names, the
 * tensors' bytes); params.json's refusals and range checks, and the tensors', name what they
 * refuse; verify-forward passes over the native folder (TP 2 x EP 2).
 * Fixtures from $WT_BUILD/wt-mkckpt (seed printed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader_mistral.h"
#include "reference/ckpt.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x6d6c3300ull
#include "test_shardmap_util.h"
#include "tests/util/testutil.h"

#define GEN_SEED  11u
#define MX_FAMILY "mistral_large3"
#include "test_mistral_util.h"

static int setup(void **state)
{
	(void)state;
	g_root = tu_mkdtemp("mistralml3");
	if (g_root == NULL)
		return -1;
	print_message("fixtures: wt-mkckpt --family mistral_large3 --seed %u into %s\n", GEN_SEED,
	              g_root);
	if (gen("hf", "hf") != 0 || gen("native", "mistral") != 0) {
		print_error("wt-mkckpt failed; build it first (make)\n");
		return -1;
	}
	return 0;
}

/* Every rank file of TP 1/2/4 and TP 2 x EP 2 x none / int8-channel / fp8-block. */
static void test_same_bytes(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_NONE, WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_BLOCK};
	static const uint32_t tps[][2] = {{1, 1}, {2, 1}, {4, 1}, {2, 2}};
	size_t all = 0;
	for (size_t a = 0; a < 4; a++)
		for (size_t b = 0; b < 3; b++) {
			wt_layout l;
			wt_layout_init(&l);
			l.tp_size = tps[a][0];
			l.ep_size = tps[a][1];
			l.quant = qs[b];
			side hf, nat;
			side_open(&hf, "hf", &l);
			side_open(&nat, "native", &l);
			uint32_t nr = tps[a][0] * tps[a][1];
			assert_int_equal(shardmap_n_ranks(hf.p), nr);
			assert_int_equal(shardmap_n_ranks(nat.p), nr);
			size_t total = 0, experts = 0;
			for (uint32_t r = 0; r < nr; r++) {
				assert_int_equal(hf.pr->n[r], nat.pr->n[r]);
				for (size_t i = 0; i < hf.pr->n[r]; i++) {
					const char *nm = shardmap_rank_tensor(hf.p, r, i)->name;
					if (!same_tensor(&hf, &nat, r, i))
						fail_msg("tp %u ep %u %s rank %u: '%s' differs",
						         tps[a][0], tps[a][1], wt_quant_name(qs[b]),
						         r, nm);
					size_t n = strlen(nm), k = strlen("experts.w13_weight");
					experts +=
					    n > k && strcmp(nm + n - k, "experts.w13_weight") == 0;
					total++;
				}
			}
			assert_int_equal(experts, nr); /* one MoE layer: every rank's w13 stack */
			print_message("tp %u ep %u quant %s: %zu rank tensors identical\n",
			              tps[a][0], tps[a][1], wt_quant_name(qs[b]), total);
			all += total;
			side_close(&hf);
			side_close(&nat);
		}
	print_message("%zu rank tensors over 12 layouts\n", all);
}

/* The loader's view: config.json keys as configs/mistral.py writes them; every tensor under
 * DeepSeek-V3's name with the twin's bytes (no permute: no ckpt_rope_heads). */
static void test_view(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.raw = 1;
	side hf, nat;
	side_open(&hf, "hf", &l);
	side_open(&nat, "native", &l);
	assert_true(ckpt_mistral_native(nat.c));
	const ckpt_config *cfg = ckpt_get_config(nat.c);
	assert_string_equal(cfg->architecture, "MistralLarge3ForCausalLM");
	assert_int_equal(cfg->num_experts, 4);
	assert_int_equal(cfg->first_k_dense_replace, 1);
	assert_int_equal(cfg->q_lora_rank, 128);
	assert_int_equal(cfg->kv_lora_rank, 64);
	size_t len;
	const char *json = ckpt_config_json(nat.c, &len);
	static const char *const want[] = {
	    "\"model_type\": \"deepseek_v3\"", "\"scoring_func\": \"softmax\"",
	    "\"topk_method\": null",           "\"norm_topk_prob\": true",
	    "\"n_shared_experts\": 1",         "\"moe_intermediate_size\": 256",
	    "\"llama_4_scaling\": {",          "\"original_max_position_embeddings\": 3",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(json, want[i]) == NULL)
			fail_msg("config.json view lacks %s:\n%s", want[i], json);
	assert_null(strstr(json, "sliding_window"));
	assert_int_equal(ckpt_n_tensors(nat.c), ckpt_n_tensors(hf.c));
	for (size_t i = 0; i < ckpt_n_tensors(hf.c); i++) {
		const ckpt_tensor *a = ckpt_tensor_at(hf.c, i), *b = ckpt_find(nat.c, a->name);
		if (b == NULL)
			fail_msg("native folder lacks '%s'", a->name);
		assert_int_equal(ckpt_rope_heads(nat.c, ckpt_tensor_index(nat.c, b)), 0);
		assert_int_equal(a->nbytes, b->nbytes);
		void *x = malloc(a->nbytes), *y = malloc(b->nbytes);
		wt_errbuf err = {0};
		assert_int_equal(ckpt_read(hf.c, a, 0, x, a->nbytes, &err), WT_OK);
		assert_int_equal(ckpt_read(nat.c, b, 0, y, b->nbytes, &err), WT_OK);
		if (memcmp(x, y, a->nbytes) != 0)
			fail_msg("'%s': other bytes than the twin's", a->name);
		free(x);
		free(y);
	}
	for (size_t i = 0; i < nat.pr->n[0]; i++)
		if (!same_tensor(&hf, &nat, 0, i))
			fail_msg("raw: '%s' differs", shardmap_rank_tensor(hf.p, 0, i)->name);
	side_close(&hf);
	side_close(&nat);
}

/* verify-forward over the native folder passes (the pass itself: test_reference_mistral_large3). */
static void test_reference_pass(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.tp_size = 2;
	l.ep_size = 2;
	static const int64_t tok[] = {1, 17, 423, 998, 5, 250, 63};
	side nat;
	side_open(&nat, "native", &l);
	ref_result res;
	wt_errbuf err = {0};
	if (ref_verify(nat.c, &l, tok, 7, NULL, NULL, &res, &err) != WT_OK)
		fail_msg("verify: %s", err.msg);
	print_message("verify-forward TP 2 x EP 2: %s, max |diff| %.3g of %.3g\n",
	              res.pass ? "pass" : "FAIL", res.diff.max_abs_diff, res.diff.max_abs_ref);
	assert_true(res.pass);
	side_close(&nat);
}

#include "test_mistral_large3_params.h"

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_bytes), cmocka_unit_test(test_view),
	    cmocka_unit_test(test_params),     cmocka_unit_test(test_params_range),
	    cmocka_unit_test(test_tensors),    cmocka_unit_test(test_reference_pass),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
