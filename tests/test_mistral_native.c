/*
 * test_mistral_native.c — Mistral's native format (params.json + consolidated*.safetensors,
 * Meta names; loader/config_mistral.c, docs/format.md "Mistral native format"): every rank
 * file of TP 1 / 2 / 4 x quant none / int8-channel / fp8-block is byte for byte the one the
 * same weights in transformers' format give (wt-mkckpt --family llama, and --format mistral:
 * its wq / wk rows in Meta's interleaved order); the same file with wq / wk left in
 * transformers' order (--format mistral-noperm) gives other q/k/v bytes and the same rest
 * (the permute is applied); the raw plan serves transformers' names and rows; config.json
 * wins over params.json; params.json's refusals (moe, vision_encoder, quantization, an
 * unknown key, values out of range) and the tensors' (an unknown name, a layer past
 * n_layers, wq rows not n_heads x head_dim) name what they refuse; the reference forward
 * pass reads the native folder as transformers' (the same logits, bit for bit, and
 * verify-forward's check passes). Fixtures from
 * $WT_BUILD/wt-mkckpt (seed printed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loader/loader_mistral.h"
#include "reference/ckpt.h"
#include "shardmap/shardmap_int.h"

#define SEED 0x6d697374ull
#include "test_shardmap_util.h"
#include "tests/util/testutil.h"

#define GEN_SEED  11u
#define MX_FAMILY "llama"
#include "test_mistral_util.h"

static int setup(void **state)
{
	(void)state;
	g_root = tu_mkdtemp("mistralnat");
	if (g_root == NULL)
		return -1;
	print_message("fixtures: wt-mkckpt --family llama --seed %u into %s\n", GEN_SEED, g_root);
	if (gen("hf", "hf") != 0 || gen("native", "mistral") != 0 ||
	    gen("noperm", "mistral-noperm") != 0) {
		print_error("wt-mkckpt failed; build it first (make)\n");
		return -1;
	}
	return 0;
}

static void layout(wt_layout *l, uint32_t tp, wt_quant q)
{
	wt_layout_init(l);
	l->tp_size = tp;
	l->quant = q;
}

/* Every rank file of TP 1/2/4 x none / int8-channel / fp8-block: the same as transformers'. */
static void test_same_bytes(void **state)
{
	(void)state;
	static const wt_quant qs[] = {WT_QUANT_NONE, WT_QUANT_INT8_CHANNEL, WT_QUANT_FP8_BLOCK};
	static const uint32_t tps[] = {1, 2, 4};
	for (size_t a = 0; a < 3; a++)
		for (size_t b = 0; b < 3; b++) {
			wt_layout l;
			layout(&l, tps[a], qs[b]);
			side hf, nat;
			side_open(&hf, "hf", &l);
			side_open(&nat, "native", &l);
			assert_int_equal(shardmap_n_ranks(hf.p), tps[a]);
			assert_int_equal(shardmap_n_ranks(nat.p), tps[a]);
			size_t total = 0;
			for (uint32_t r = 0; r < tps[a]; r++) {
				assert_int_equal(hf.pr->n[r], nat.pr->n[r]);
				for (size_t i = 0; i < hf.pr->n[r]; i++) {
					if (!same_tensor(&hf, &nat, r, i))
						fail_msg("tp %u %s rank %u: '%s' differs", tps[a],
						         wt_quant_name(qs[b]), r,
						         shardmap_rank_tensor(hf.p, r, i)->name);
					total++;
				}
			}
			print_message("tp %u quant %s: %zu rank tensors identical\n", tps[a],
			              wt_quant_name(qs[b]), total);
			side_close(&hf);
			side_close(&nat);
		}
}

/* wq / wk left in transformers' order: q/k/v's bytes differ, the rest does not. */
static void test_permute_applied(void **state)
{
	(void)state;
	wt_layout l;
	layout(&l, 2, WT_QUANT_NONE);
	side hf, np;
	side_open(&hf, "hf", &l);
	side_open(&np, "noperm", &l);
	size_t qkv = 0, other = 0;
	for (uint32_t r = 0; r < 2; r++)
		for (size_t i = 0; i < hf.pr->n[r]; i++) {
			const char *name = shardmap_rank_tensor(hf.p, r, i)->name;
			bool is_qkv = strstr(name, "qkv_proj") != NULL;
			if (is_qkv == same_tensor(&hf, &np, r, i))
				fail_msg("rank %u '%s': %s", r, name,
				         is_qkv ? "the same without the permute" : "differs");
			qkv += is_qkv;
			other += !is_qkv;
		}
	assert_true(qkv == 4 && other > 0);
	side_close(&hf);
	side_close(&np);
}

/* The loader's view: MistralForCausalLM from params.json, transformers' names; the raw
 * plan serves q_proj / k_proj in transformers' rows. */
static void test_view_and_raw(void **state)
{
	(void)state;
	wt_layout l;
	wt_layout_init(&l);
	l.raw = 1;
	side hf, nat;
	side_open(&hf, "hf", &l);
	side_open(&nat, "native", &l);
	assert_true(ckpt_mistral_native(nat.c));
	assert_false(ckpt_mistral_native(hf.c));
	const ckpt_config *cfg = ckpt_get_config(nat.c);
	assert_string_equal(cfg->architecture, "MistralForCausalLM");
	assert_int_equal(cfg->hidden_size, 256);
	assert_int_equal(cfg->num_key_value_heads, 2);
	assert_int_equal(cfg->head_dim, 32);
	assert_false(cfg->tie_word_embeddings);
	const ckpt_tensor *q = ckpt_find(nat.c, "model.layers.1.self_attn.q_proj.weight");
	const ckpt_tensor *k = ckpt_find(nat.c, "model.layers.1.self_attn.k_proj.weight");
	assert_non_null(q);
	assert_int_equal(ckpt_rope_heads(nat.c, ckpt_tensor_index(nat.c, q)), 8);
	assert_int_equal(ckpt_rope_heads(nat.c, ckpt_tensor_index(nat.c, k)), 2);
	const ckpt_tensor *v = ckpt_find(nat.c, "model.layers.1.self_attn.v_proj.weight");
	assert_int_equal(ckpt_rope_heads(nat.c, ckpt_tensor_index(nat.c, v)), 0);
	assert_int_equal(ckpt_n_tensors(nat.c), ckpt_n_tensors(hf.c));
	for (size_t i = 0; i < hf.pr->n[0]; i++)
		if (!same_tensor(&hf, &nat, 0, i))
			fail_msg("raw: '%s' differs", shardmap_rank_tensor(hf.p, 0, i)->name);
	side_close(&hf);
	side_close(&nat);
}

/* The reference forward pass over the checkpoint: the native folder's logits are the
 * transformers folder's, bit for bit (its wq / wk de-interleaved as the planner's), and the
 * sharded pass agrees with it (verify-forward, TP 2). */
static void test_reference_pass(void **state)
{
	(void)state;
	static const int64_t tok[] = {1, 17, 423, 998, 5, 250, 63};
	size_t nt = sizeof(tok) / sizeof(tok[0]);
	float *lg[2] = {NULL, NULL};
	wt_layout l;
	layout(&l, 2, WT_QUANT_NONE);
	const char *names[2] = {"hf", "native"};
	for (int k = 0; k < 2; k++) {
		side x;
		side_open(&x, names[k], &l);
		ref_cfg cfg;
		ref_set ck = {0};
		wt_errbuf err = {0};
		if (ref_load_ckpt(x.c, &cfg, &ck, &err) != WT_OK)
			fail_msg("%s: %s", names[k], err.msg);
		lg[k] = malloc(nt * (size_t)cfg.V * sizeof(float));
		assert_non_null(lg[k]);
		if (ref_forward_full(&cfg, &ck, tok, nt, lg[k], NULL, &err) != WT_OK)
			fail_msg("%s: forward: %s", names[k], err.msg);
		ref_result res;
		if (ref_verify(x.c, &l, tok, nt, NULL, NULL, &res, &err) != WT_OK)
			fail_msg("%s: verify: %s", names[k], err.msg);
		print_message("%s: verify-forward TP 2 %s, max |diff| %.3g of %.3g\n", names[k],
		              res.pass ? "pass" : "FAIL", res.diff.max_abs_diff,
		              res.diff.max_abs_ref);
		assert_true(res.pass);
		ref_set_clear(&ck);
		side_close(&x);
		assert_int_equal(cfg.V, 1000);
	}
	assert_memory_equal(lg[0], lg[1], nt * 1000 * sizeof(float));
	free(lg[0]);
	free(lg[1]);
}

/* A copy of the native fixture with params.json replaced by `params`. */
static char *with_params(const char *params)
{
	char *d = tu_mkdtemp("mistralp");
	char *src = tu_path(g_root, "native");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s'/", src, d);
	free(src);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(tu_write_file(d, "params.json", params, strlen(params)), 0);
	return d;
}

static int open_dir(const char *dir, ckpt **c, store **s, wt_errbuf *err)
{
	*c = NULL;
	*s = NULL;
	int rv = store_open(s, dir, err);
	return rv == WT_OK ? ckpt_open(c, *s, err) : rv;
}

#define DIMS                                                                                       \
	"\"dim\": 256, \"n_layers\": 2, \"head_dim\": 32, \"hidden_dim\": 512, \"n_heads\": 8, "   \
	"\"n_kv_heads\": 2, \"norm_eps\": 1e-05, \"vocab_size\": 1000"

/* params.json that is opened (want WT_OK) or refused with code and a message naming `what`. */
static void expect_params(const char *params, int code, const char *what)
{
	char *d = with_params(params);
	store *s;
	ckpt *c;
	wt_errbuf err = {0};
	int rv = open_dir(d, &c, &s, &err);
	if (rv != code || (what != NULL && strstr(err.msg, what) == NULL))
		fail_msg("params %s: %s (%s), want %s naming '%s'", params, wt_errname(rv), err.msg,
		         wt_errname(code), what ? what : "");
	if (code != WT_OK)
		print_message("refused: %s\n", err.msg);
	ckpt_close(c);
	store_close(s);
	tu_rmrf(d);
	free(d);
}

static void test_params_refused(void **state)
{
	(void)state;
	expect_params("{" DIMS "}", WT_OK, NULL);
	expect_params("{" DIMS ", \"rope_theta\": 1e6, \"max_seq_len\": 4096, "
	              "\"sliding_window\": null, \"model_type\": \"transformer\"}",
	              WT_OK, NULL);
	expect_params("{" DIMS ", \"moe\": {\"num_experts\": 8}}", WT_EUNSUPPORTED,
	              "'moe' (a mixture-of-experts");
	expect_params("{" DIMS ", \"moe\": {}}", WT_EUNSUPPORTED, "convert_mistral_weights_to_hf");
	expect_params("{" DIMS ", \"vision_encoder\": {\"hidden_size\": 1024}}", WT_EUNSUPPORTED,
	              "'vision_encoder' (a vision");
	expect_params("{" DIMS ", \"quantization\": {\"qformat_weight\": \"fp8_e4m3\"}}",
	              WT_EUNSUPPORTED, "'quantization' (quantized");
	expect_params("{" DIMS ", \"yarn\": {\"factor\": 4}}", WT_EUNSUPPORTED, "'yarn' (YaRN");
	expect_params("{" DIMS ", \"qk_norm\": true}", WT_EUNSUPPORTED, "unknown key 'qk_norm'");
	expect_params("{" DIMS ", \"sliding_window\": [4096, null]}", WT_EUNSUPPORTED,
	              "'sliding_window'");
	expect_params("{" DIMS ", \"model_type\": \"mamba\"}", WT_EUNSUPPORTED, "'model_type'");
	expect_params("{" DIMS ", \"activation\": \"gelu\"}", WT_EUNSUPPORTED, "'activation'");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"norm_eps\": 1e-05}",
	              WT_ECORRUPT, "'vocab_size' is required");
	expect_params("{" DIMS ", \"dim\": 0}", WT_EDUP, "dim");
	expect_params("{\"dim\": -4, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"norm_eps\": 1e-05, \"vocab_size\": 1000}",
	              WT_ECORRUPT, "'dim' is -4");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"norm_eps\": 0, \"vocab_size\": 1000}",
	              WT_ECORRUPT, "'norm_eps'");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"norm_eps\": 1e-5, \"vocab_size\": 1000, \"n_kv_heads\": 3}",
	              WT_ECORRUPT, "'n_kv_heads' 3");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"norm_eps\": 1e-5, \"vocab_size\": 1000, \"head_dim\": 33}",
	              WT_ECORRUPT, "'head_dim' 33 is odd");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": \"512\", "
	              "\"norm_eps\": 1e-5, \"vocab_size\": 1000}",
	              WT_ECORRUPT, "'hidden_dim' must be an integer");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 4294967296, "
	              "\"norm_eps\": 1e-5, \"vocab_size\": 1000}",
	              WT_ECORRUPT, "'hidden_dim' is 4294967296");
	expect_params("[1, 2]", WT_ECORRUPT, "JSON object");
	expect_params("{\"dim\": 256,", WT_ECORRUPT, "not valid JSON");
	/* n_layers 1 while the files hold layer 1: the tensor is named */
	expect_params("{\"dim\": 256, \"n_layers\": 1, \"n_heads\": 8, \"n_kv_heads\": 2, "
	              "\"hidden_dim\": 512, \"norm_eps\": 1e-5, \"vocab_size\": 1000}",
	              WT_EUNSUPPORTED, "layers.1.");
	/* wq's rows are not n_heads x head_dim */
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"n_kv_heads\": 2, "
	              "\"head_dim\": 16, \"hidden_dim\": 512, \"norm_eps\": 1e-5, "
	              "\"vocab_size\": 1000}",
	              WT_ECORRUPT, "attention.wk.weight");
}

/* A one-file native folder holding tensor `name` [64, 256] BF16 alone. */
static void expect_tensor(const char *name, int code, const char *what)
{
	char *d = tu_mkdtemp("mistralt");
	const char *params = "{" DIMS "}";
	assert_int_equal(tu_write_file(d, "params.json", params, strlen(params)), 0);
	st_desc desc = {.name = name, .dtype = WT_BF16, .ndim = 2, .shape = {64, 256}};
	void *buf = calloc(64 * 256, 2);
	const void *data[1] = {buf};
	char *path = tu_path(d, "consolidated.safetensors");
	wt_errbuf err = {0};
	assert_int_equal(st_write_path(path, &desc, data, 1, NULL, 0, &err), WT_OK);
	store *s;
	ckpt *c;
	int rv = open_dir(d, &c, &s, &err);
	if (rv != code || (what != NULL && strstr(err.msg, what) == NULL))
		fail_msg("tensor %s: %s (%s), want %s naming '%s'", name, wt_errname(rv), err.msg,
		         wt_errname(code), what ? what : "");
	if (rv == WT_OK)
		assert_non_null(ckpt_find(c, "model.layers.1.self_attn.k_proj.weight"));
	else
		print_message("refused: %s\n", err.msg);
	ckpt_close(c);
	store_close(s);
	free(path);
	free(buf);
	tu_rmrf(d);
	free(d);
}

static void test_tensors_refused(void **state)
{
	(void)state;
	expect_tensor("layers.1.attention.wk.weight", WT_OK, NULL); /* one file, no index */
	expect_tensor("layers.0.attention.wx.weight", WT_EUNSUPPORTED,
	              "'layers.0.attention.wx.weight'");
	expect_tensor("model.layers.0.self_attn.q_proj.weight", WT_EUNSUPPORTED,
	              "'model.layers.0.self_attn.q_proj.weight'");
	expect_tensor("layers.2.ffn_norm.weight", WT_EUNSUPPORTED, "n_layers 2");
	expect_tensor("layers.01.ffn_norm.weight", WT_EUNSUPPORTED, "'layers.01.ffn_norm.weight'");
	expect_tensor("layers.0.attention.wq.weight", WT_ECORRUPT, "8 heads of head_dim 32");
}

/* config.json and params.json both: config.json wins (today's reading, vLLM's `auto`). */
static void test_config_json_wins(void **state)
{
	(void)state;
	char *d = tu_mkdtemp("mistralboth");
	char *src = tu_path(g_root, "hf");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s'/", src, d);
	free(src);
	assert_int_equal(system(cmd), 0);
	const char *params = "{\"moe\": {\"num_experts\": 8}}"; /* refused if it were read */
	assert_int_equal(tu_write_file(d, "params.json", params, strlen(params)), 0);
	store *s;
	ckpt *c;
	wt_errbuf err = {0};
	int rv = open_dir(d, &c, &s, &err);
	if (rv != WT_OK)
		fail_msg("%s", err.msg);
	assert_false(ckpt_mistral_native(c));
	assert_string_equal(ckpt_get_config(c)->architecture, "LlamaForCausalLM");
	ckpt_close(c);
	store_close(s);
	/* neither config.json nor params.json: config.json's message, as before */
	snprintf(cmd, sizeof(cmd), "rm -f '%s'/config.json '%s'/params.json", d, d);
	assert_int_equal(system(cmd), 0);
	rv = open_dir(d, &c, &s, &err);
	assert_int_equal(rv, WT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "config.json"));
	ckpt_close(c);
	store_close(s);
	tu_rmrf(d);
	free(d);
}

/* The revision covers params.json's bytes. */
static void test_revision(void **state)
{
	(void)state;
	/* the same length: the content decides */
	char *a = with_params("{" DIMS ", \"rope_theta\": 2000000.0}");
	char *b = with_params("{" DIMS ", \"rope_theta\": 1000000.0}");
	store *sa, *sb;
	ckpt *ca, *cb;
	wt_errbuf err = {0};
	assert_int_equal(open_dir(a, &ca, &sa, &err), WT_OK);
	assert_int_equal(open_dir(b, &cb, &sb, &err), WT_OK);
	assert_int_equal(strlen(ckpt_revision(ca)), 64);
	assert_string_not_equal(ckpt_revision(ca), ckpt_revision(cb));
	ckpt_close(ca);
	ckpt_close(cb);
	store_close(sa);
	store_close(sb);
	tu_rmrf(a);
	tu_rmrf(b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_bytes),      cmocka_unit_test(test_permute_applied),
	    cmocka_unit_test(test_view_and_raw),    cmocka_unit_test(test_params_refused),
	    cmocka_unit_test(test_tensors_refused), cmocka_unit_test(test_config_json_wins),
	    cmocka_unit_test(test_revision),        cmocka_unit_test(test_reference_pass),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
