/* test_checkpoint.c — config.json defaults, single-file and indexed folders,
 * every index error, and the revision digest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "common/common.h"
#include "loader/loader.h"
#include "tests/util/testutil.h"

#define SEED 777u

static const st_desc tiny[] = {
    {"model.embed_tokens.weight", WT_BF16, 2, {128, 64}},
    {"model.layers.0.self_attn.q_proj.weight", WT_BF16, 2, {64, 64}},
    {"model.layers.0.self_attn.k_proj.weight", WT_BF16, 2, {32, 64}},
    {"model.layers.0.input_layernorm.weight", WT_F32, 1, {64}},
    {"model.layers.1.mlp.up_proj.weight", WT_BF16, 2, {128, 64}},
    {"model.layers.1.mlp.up_proj.weight_scale", WT_F32, 0, {0}},
    {"model.norm.weight", WT_F32, 1, {64}},
    {"lm_head.weight", WT_BF16, 2, {128, 64}},
};
#define N_TINY (sizeof(tiny) / sizeof(tiny[0]))

static int open_ckpt(const char *dir, store **s, ckpt **c, wt_errbuf *err)
{
	*c = NULL;
	int rv = store_open(s, dir, err);
	if (rv == WT_OK)
		rv = ckpt_open(c, *s, err);
	return rv;
}

static void close_ckpt(store *s, ckpt *c)
{
	ckpt_close(c);
	store_close(s);
}

static size_t desc_index(const char *name)
{
	for (size_t i = 0; i < N_TINY; i++)
		if (strcmp(tiny[i].name, name) == 0)
			return i;
	fail_msg("unknown tensor %s", name);
	return 0;
}

/* Open, then check every tensor's metadata and bytes against the descs. */
static void check_tiny(const char *dir, size_t n_objects_expected)
{
	store *s;
	ckpt *c;
	wt_errbuf err;
	int rv = open_ckpt(dir, &s, &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_int_equal(ckpt_n_tensors(c), N_TINY);
	assert_ptr_equal(ckpt_store(c), s);
	uint64_t total = 0;
	const char *objs[8] = {0};
	size_t n_objs = 0;
	for (size_t i = 0; i < N_TINY; i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		if (i > 0)
			assert_true(strcmp(ckpt_tensor_at(c, i - 1)->name, t->name) < 0);
		size_t k = desc_index(t->name);
		assert_int_equal(t->dtype, tiny[k].dtype);
		assert_int_equal(t->ndim, tiny[k].ndim);
		assert_int_equal(t->nbytes, tu_desc_nbytes(&tiny[k]));
		assert_ptr_equal(ckpt_find(c, t->name), t);
		assert_int_equal(ckpt_tensor_index(c, t), i);
		total += t->nbytes;
		size_t j = 0;
		while (j < n_objs && strcmp(objs[j], t->object) != 0)
			j++;
		if (j == n_objs)
			objs[n_objs++] = t->object;
	}
	assert_null(ckpt_tensor_at(c, N_TINY));
	assert_null(ckpt_find(c, "model.nope"));
	assert_null(ckpt_find(c, ""));
	assert_int_equal(n_objs, n_objects_expected);
	assert_int_equal(ckpt_total_bytes(c), total);
	/* every byte, read once */
	uint64_t before = store_bytes_read(s);
	for (size_t i = 0; i < N_TINY; i++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, i);
		size_t k = desc_index(t->name);
		uint8_t *want = malloc(t->nbytes + 1), *got = malloc(t->nbytes + 1);
		tu_fill(want, t->nbytes, SEED + k);
		assert_int_equal(ckpt_read(c, t, 0, got, t->nbytes, &err), WT_OK);
		assert_memory_equal(got, want, t->nbytes);
		if (t->nbytes > 3) {
			assert_int_equal(ckpt_read(c, t, 3, got, t->nbytes - 3, &err), WT_OK);
			assert_memory_equal(got, want + 3, t->nbytes - 3);
			total += t->nbytes - 3;
		}
		assert_int_equal(ckpt_read(c, t, 1, got, t->nbytes, &err), WT_EINVAL);
		assert_non_null(strstr(err.msg, t->name));
		free(want);
		free(got);
	}
	assert_int_equal(store_bytes_read(s) - before, total);
	size_t len;
	assert_string_equal(ckpt_config_json(c, &len), tu_llama_config);
	assert_int_equal(len, strlen(tu_llama_config));
	assert_int_equal(strlen(ckpt_revision(c)), 64);
	assert_string_equal(ckpt_get_config(c)->architecture, "LlamaForCausalLM");
	close_ckpt(s, c);
}

static void test_single_file(void **state)
{
	(void)state;
	printf("seed %u\n", SEED);
	char *dir = tu_mkdtemp("ck1");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 1, SEED), 0);
	check_tiny(dir, 1);
	tu_rmrf(dir);
	free(dir);
}

static void test_indexed(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ck3");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 3, SEED), 0);
	check_tiny(dir, 3);
	tu_rmrf(dir);
	free(dir);
}

/* ---- index errors ---- */

/* A 3-shard checkpoint whose index is then replaced by weight_map `wm` (JSON text). */
static char *indexed_with(const char *index_json)
{
	char *dir = tu_mkdtemp("ckx");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 3, SEED), 0);
	if (index_json != NULL)
		assert_int_equal(tu_write_file(dir, "model.safetensors.index.json", index_json,
		                               strlen(index_json)),
		                 0);
	return dir;
}

/* The standard weight_map text with `extra` appended inside it and entry
 * `drop` (a tensor name) removed. Caller frees. */
static char *weight_map(const char *extra, const char *drop, const char *remap_to)
{
	char *buf = malloc(8192);
	size_t len = (size_t)snprintf(buf, 8192, "{\"weight_map\": {");
	size_t per = (N_TINY + 2) / 3;
	const char *sep = "";
	for (size_t i = 0; i < N_TINY; i++) {
		if (drop != NULL && strcmp(tiny[i].name, drop) == 0)
			continue;
		char shard[64];
		tu_shard_name(shard, sizeof(shard), i / per + 1, 3);
		const char *file = (remap_to && i == 0) ? remap_to : shard;
		len += (size_t)snprintf(buf + len, 8192 - len, "%s\"%s\": \"%s\"", sep,
		                        tiny[i].name, file);
		sep = ", ";
	}
	snprintf(buf + len, 8192 - len, "%s%s}}", extra ? ", " : "", extra ? extra : "");
	return buf;
}

static void expect_open(const char *dir, int code, const char *needle)
{
	store *s;
	ckpt *c;
	wt_errbuf err;
	wt_errclear(&err);
	int rv = open_ckpt(dir, &s, &c, &err);
	if (rv != code || strstr(err.msg, needle) == NULL)
		print_error("got %s: %s (want %s naming '%s')\n", wt_errname(rv), err.msg,
		            wt_errname(code), needle);
	assert_int_equal(rv, code);
	assert_null(c);
	assert_non_null(strstr(err.msg, needle));
	close_ckpt(s, c);
}

static void run_index_case(const char *json, int code, const char *needle)
{
	char *dir = indexed_with(json);
	expect_open(dir, code, needle);
	tu_rmrf(dir);
	free(dir);
}

static void test_index_errors(void **state)
{
	(void)state;
	char *wm;
	/* the baseline weight_map is valid */
	wm = weight_map(NULL, NULL, NULL);
	char *dir = indexed_with(wm);
	check_tiny(dir, 3);
	tu_rmrf(dir);
	free(dir);
	free(wm);
	/* entry -> a file that does not exist */
	wm = weight_map("\"extra.w\": \"model-00009-of-00009.safetensors\"", NULL, NULL);
	run_index_case(wm, WT_ENOTFOUND, "tensor 'extra.w' maps to 'model-00009-of-00009");
	free(wm);
	/* entry -> an existing file that lacks the tensor */
	wm = weight_map("\"ghost.w\": \"model-00001-of-00003.safetensors\"", NULL, NULL);
	run_index_case(wm, WT_ENOTFOUND, "tensor 'ghost.w' maps to 'model-00001-of-00003");
	free(wm);
	/* entry -> the wrong file (the tensor is elsewhere) */
	wm = weight_map(NULL, NULL, "model-00003-of-00003.safetensors");
	run_index_case(wm, WT_ENOTFOUND, "found in 'model-00001-of-00003");
	free(wm);
	/* a tensor in a file but not in the index */
	wm = weight_map(NULL, "model.norm.weight", NULL);
	run_index_case(wm, WT_ECORRUPT, "tensor 'model.norm.weight' is in");
	free(wm);
	/* the index escapes the folder */
	wm = weight_map("\"x\": \"../elsewhere.safetensors\"", NULL, NULL);
	run_index_case(wm, WT_EPERM, "elsewhere");
	free(wm);
	/* malformed index JSON */
	run_index_case("{\"weight_map\": ", WT_ECORRUPT, "not valid JSON");
	run_index_case("{\"metadata\": {}}", WT_ECORRUPT, "weight_map");
	run_index_case("{\"weight_map\": {\"a\": 3}}", WT_ECORRUPT, "tensor 'a'");
	run_index_case("{\"weight_map\": {\"a\": \"f\", \"a\": \"g\"}}", WT_EDUP, "duplicate");
}

static void test_tensor_in_two_files(void **state)
{
	(void)state;
	char *dir = indexed_with(NULL);
	/* an extra shard holding a copy of the embedding plus one new tensor */
	st_desc d[] = {tiny[0], {"model.extra.weight", WT_F32, 1, {4}}};
	uint8_t a[128 * 64 * 2] = {0}, b[16] = {0};
	const void *data[] = {a, b};
	char *p = tu_path(dir, "model-extra.safetensors");
	wt_errbuf err;
	assert_int_equal(st_write_path(p, d, data, 2, NULL, 0, &err), WT_OK);
	char *wm = weight_map("\"model.extra.weight\": \"model-extra.safetensors\"", NULL, NULL);
	assert_int_equal(tu_write_file(dir, "model.safetensors.index.json", wm, strlen(wm)), 0);
	expect_open(dir, WT_EDUP, "tensor 'model.embed_tokens.weight' is in both");
	free(wm);
	free(p);
	tu_rmrf(dir);
	free(dir);
}

static void test_folder_errors(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckf");
	expect_open(dir, WT_ENOTFOUND, "config.json");
	assert_int_equal(
	    tu_write_file(dir, "config.json", tu_llama_config, strlen(tu_llama_config)), 0);
	expect_open(dir, WT_ENOTFOUND, "neither model.safetensors");
	/* a corrupt single file names the file */
	assert_int_equal(tu_write_file(dir, "model.safetensors", "\x04\0\0\0\0\0\0\0[1] ", 12), 0);
	expect_open(dir, WT_ECORRUPT, "'model.safetensors': header is not a JSON object");
	/* config.json over the cap (sparse file) */
	char *cfg = tu_path(dir, "config.json");
	assert_int_equal(truncate(cfg, (off_t)CKPT_MAX_JSON_BYTES + 1), 0);
	expect_open(dir, WT_ETOOBIG, "config.json");
	free(cfg);
	/* a bad config names the field */
	const char *no_vocab = "{\"architectures\": [\"X\"], \"hidden_size\": 8, "
	                       "\"num_attention_heads\": 2, \"num_hidden_layers\": 1}";
	assert_int_equal(tu_write_file(dir, "config.json", no_vocab, strlen(no_vocab)), 0);
	expect_open(dir, WT_ECORRUPT, "'vocab_size'");
	tu_rmrf(dir);
	free(dir);
}

/* ---- config.json ---- */

static void parse_ok(const char *json, ckpt_config *c)
{
	wt_errbuf err;
	int rv = ckpt_config_parse(json, strlen(json), c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
}

static void test_config_defaults(void **state)
{
	(void)state;
	ckpt_config c;
	parse_ok(tu_llama_config, &c);
	assert_string_equal(c.architecture, "LlamaForCausalLM");
	assert_string_equal(c.model_type, "llama");
	assert_int_equal(c.hidden_size, 64);
	assert_int_equal(c.num_attention_heads, 4);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 16);
	assert_int_equal(c.intermediate_size, 128);
	assert_int_equal(c.vocab_size, 128);
	assert_int_equal(c.num_hidden_layers, 2);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.num_experts, 0);
	assert_int_equal(c.moe_intermediate_size, -1);
	assert_int_equal(c.shared_expert_intermediate_size, -1);
	assert_int_equal(c.n_shared_experts, 0);
	assert_int_equal(c.decoder_sparse_step, 1);
	assert_int_equal(c.n_mlp_only_layers, 0);
	assert_int_equal(c.first_k_dense_replace, 0);
	assert_int_equal(c.moe_layer_freq, 1);
	assert_int_equal(c.q_lora_rank, -1);
	assert_int_equal(c.kv_lora_rank, -1);
	assert_int_equal(c.quant, CKPT_QUANT_NONE);
	assert_int_equal(c.quant_block[0], 128);
	assert_int_equal(c.quant_block[1], 128);
	ckpt_config_clear(&c);
	ckpt_config_clear(&c);
	ckpt_config_clear(NULL);

	/* minimal: num_key_value_heads and head_dim default from H; no model_type */
	parse_ok("{\"architectures\": [\"A\", \"B\"], \"hidden_size\": 96, "
	         "\"num_attention_heads\": 3, \"num_hidden_layers\": 1, \"vocab_size\": 10, "
	         "\"head_dim\": null, \"tie_word_embeddings\": true}",
	         &c);
	assert_string_equal(c.architecture, "A");
	assert_string_equal(c.model_type, "");
	assert_int_equal(c.num_key_value_heads, 3);
	assert_int_equal(c.head_dim, 32);
	assert_int_equal(c.intermediate_size, -1);
	assert_true(c.tie_word_embeddings);
	ckpt_config_clear(&c);
}

#define BASE                                                                                       \
	"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 4, "              \
	"\"vocab_size\": 100, \"intermediate_size\": 256, "

static void test_config_moe(void **state)
{
	(void)state;
	ckpt_config c;
	parse_ok("{\"architectures\": [\"MixtralForCausalLM\"], " BASE
	         "\"num_local_experts\": 8, \"num_experts_per_tok\": 2}",
	         &c);
	assert_int_equal(c.num_experts, 8);
	assert_int_equal(c.moe_intermediate_size, 256); /* Mixtral: intermediate_size */
	ckpt_config_clear(&c);

	parse_ok("{\"architectures\": [\"Qwen2MoeForCausalLM\"], " BASE
	         "\"num_experts\": 6, \"moe_intermediate_size\": 32, "
	         "\"shared_expert_intermediate_size\": 64, \"decoder_sparse_step\": 2, "
	         "\"mlp_only_layers\": [1, 3], \"head_dim\": 8}",
	         &c);
	assert_int_equal(c.num_experts, 6);
	assert_int_equal(c.moe_intermediate_size, 32);
	assert_int_equal(c.shared_expert_intermediate_size, 64);
	assert_int_equal(c.decoder_sparse_step, 2);
	assert_int_equal(c.n_mlp_only_layers, 2);
	assert_int_equal(c.mlp_only_layers[1], 3);
	assert_int_equal(c.head_dim, 8);
	ckpt_config_clear(&c);

	parse_ok("{\"architectures\": [\"DeepseekV3ForCausalLM\"], " BASE
	         "\"n_routed_experts\": 16, \"n_shared_experts\": 1, \"moe_intermediate_size\": "
	         "16, \"first_k_dense_replace\": 1, \"moe_layer_freq\": 1, \"q_lora_rank\": null, "
	         "\"kv_lora_rank\": 32, \"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 8, "
	         "\"v_head_dim\": 16, \"quantization_config\": {\"quant_method\": \"fp8\", "
	         "\"activation_scheme\": \"dynamic\", \"fmt\": \"e4m3\", \"weight_block_size\": "
	         "[128, 64], \"ignore\": [\"lm_head\"], \"modules_to_not_convert\": [\"gate\"]}}",
	         &c);
	assert_int_equal(c.num_experts, 16);
	assert_int_equal(c.n_shared_experts, 1);
	assert_int_equal(c.first_k_dense_replace, 1);
	assert_int_equal(c.q_lora_rank, -1);
	assert_int_equal(c.kv_lora_rank, 32);
	assert_int_equal(c.qk_nope_head_dim, 16);
	assert_int_equal(c.qk_rope_head_dim, 8);
	assert_int_equal(c.v_head_dim, 16);
	assert_int_equal(c.quant, CKPT_QUANT_FP8_BLOCK);
	assert_int_equal(c.quant_block[0], 128);
	assert_int_equal(c.quant_block[1], 64);
	assert_int_equal(c.n_quant_ignore, 2);
	assert_string_equal(c.quant_ignore[0], "lm_head");
	assert_string_equal(c.quant_ignore[1], "gate");
	ckpt_config_clear(&c);

	parse_ok("{\"architectures\": [\"LlamaForCausalLM\"], " BASE
	         "\"quantization_config\": {\"quant_method\": \"fp8\", \"activation_scheme\": "
	         "\"static\", \"ignored_layers\": [\"lm_head\"]}}",
	         &c);
	assert_int_equal(c.quant, CKPT_QUANT_FP8_TENSOR);
	assert_int_equal(c.n_quant_ignore, 1);
	ckpt_config_clear(&c);
}

static void expect_config(const char *json, int code, const char *needle)
{
	ckpt_config c;
	wt_errbuf err;
	wt_errclear(&err);
	int rv = ckpt_config_parse(json, strlen(json), &c, &err);
	if (rv != code || strstr(err.msg, needle) == NULL)
		print_error("%s -> %s: %s\n", json, wt_errname(rv), err.msg);
	assert_int_equal(rv, code);
	assert_non_null(strstr(err.msg, needle));
	assert_null(c.architecture);
}

static void test_config_errors(void **state)
{
	(void)state;
	const char *req[] = {"hidden_size", "num_attention_heads", "num_hidden_layers",
	                     "vocab_size"};
	const char *val[] = {"64", "4", "2", "100"};
	for (size_t skip = 0; skip < 4; skip++) {
		char buf[512];
		size_t len = (size_t)snprintf(buf, sizeof(buf), "{\"architectures\": [\"X\"]");
		for (size_t i = 0; i < 4; i++)
			if (i != skip)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len,
				                        ", \"%s\": %s", req[i], val[i]);
		snprintf(buf + len, sizeof(buf) - len, "}");
		char needle[64];
		snprintf(needle, sizeof(needle), "'%s' is missing", req[skip]);
		expect_config(buf, WT_ECORRUPT, needle);
	}
	expect_config("{" BASE "\"model_type\": \"llama\"}", WT_ECORRUPT, "'architectures'");
	expect_config("{\"architectures\": [], " BASE "\"x\": 1}", WT_ECORRUPT, "'architectures'");
	expect_config("{\"architectures\": [\"X\"], " BASE "\"num_key_value_heads\": \"8\"}",
	              WT_ECORRUPT, "'num_key_value_heads' is not an integer");
	expect_config("{\"architectures\": [\"X\"], " BASE "\"tie_word_embeddings\": 1}",
	              WT_ECORRUPT, "'tie_word_embeddings'");
	expect_config("{\"architectures\": [\"X\"], \"hidden_size\": 0, \"num_attention_heads\": "
	              "4, \"num_hidden_layers\": 4, \"vocab_size\": 100}",
	              WT_ECORRUPT, "'hidden_size' = 0");
	expect_config("{\"architectures\": [\"X\"], " BASE "\"mlp_only_layers\": [\"a\"]}",
	              WT_ECORRUPT, "'mlp_only_layers'[0]");
	expect_config("{\"architectures\": [\"X\"], " BASE
	              "\"quantization_config\": {\"quant_method\": \"gptq\"}}",
	              WT_EUNSUPPORTED, "'gptq'");
	expect_config("{\"architectures\": [\"X\"], " BASE
	              "\"quantization_config\": {\"quant_method\": \"fp8\", "
	              "\"weight_block_size\": [128]}}",
	              WT_ECORRUPT, "weight_block_size");
	expect_config("{\"architectures\": [\"X\"], " BASE
	              "\"quantization_config\": {\"quant_method\": \"fp8\", \"ignore\": [1]}}",
	              WT_ECORRUPT, "ignore[0]");
	expect_config("[1]", WT_ECORRUPT, "not a JSON object");
	expect_config("{\"architectures\": [\"X\"], \"architectures\": [\"Y\"]}", WT_EDUP,
	              "duplicate");
	expect_config("{\"architectures\": ", WT_ECORRUPT, "not valid JSON");
}

/* ---- revision ---- */

static void revision_of(const char *dir, char out[65])
{
	store *s;
	ckpt *c;
	wt_errbuf err;
	int rv = open_ckpt(dir, &s, &c, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	memcpy(out, ckpt_revision(c), 65);
	close_ckpt(s, c);
}

/* The digest as documented (README "Revision digest"), computed
 * independently: XXH3-128 of each whole file with libxxhash, SHA-256 with OpenSSL. */
static void expected_revision(const char *dir, const char *const *keys, size_t n, char out[65])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	EVP_DigestUpdate(md, "weightd-revision-2", sizeof("weightd-revision-2"));
	for (size_t i = 0; i < n; i++) {
		char *p = tu_path(dir, keys[i]);
		size_t len = 0;
		char *bytes = tu_read_file(p, &len);
		assert_non_null(bytes);
		free(p);
		XXH128_hash_t h = XXH3_128bits(bytes, len);
		free(bytes);
		char rec[256];
		int k = snprintf(rec, sizeof(rec), "%s%c%zu%c%016llx%016llx%c", keys[i], 0, len, 0,
		                 (unsigned long long)h.high64, (unsigned long long)h.low64, 0);
		EVP_DigestUpdate(md, rec, (size_t)k);
	}
	unsigned char dig[32];
	EVP_DigestFinal_ex(md, dig, NULL);
	EVP_MD_CTX_free(md);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", dig[i]);
}

static void test_revision(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckr");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 2, SEED), 0);
	char r1[65], r2[65], want[65];
	revision_of(dir, r1);
	revision_of(dir, r2);
	assert_string_equal(r1, r2); /* stable */
	const char *keys[] = {"config.json", "model-00001-of-00002.safetensors",
	                      "model-00002-of-00002.safetensors", "model.safetensors.index.json"};
	expected_revision(dir, keys, 4, want);
	assert_string_equal(r1, want);

	/* touching a shard does not change it: the revision is the bytes */
	char *shard = tu_path(dir, "model-00002-of-00002.safetensors");
	assert_int_equal(tu_touch(shard, 1000), 0);
	revision_of(dir, r2);
	assert_string_equal(r1, r2);
	/* one byte of tensor data changed, same size, mtime put back: it changes */
	struct stat sst;
	assert_int_equal(stat(shard, &sst), 0);
	int fd = open(shard, O_RDWR);
	assert_true(fd >= 0);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, sst.st_size - 1), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, sst.st_size - 1), 1);
	close(fd);
	struct timespec sts[2] = {sst.st_atim, sst.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, shard, sts, 0), 0);
	revision_of(dir, r2);
	assert_string_not_equal(r1, r2);
	/* editing config.json (same size, same mtime) changes it */
	char *cfgp = tu_path(dir, "config.json");
	struct stat st;
	assert_int_equal(stat(cfgp, &st), 0);
	char *edited = strdup(tu_llama_config);
	char *pos = strstr(edited, "\"vocab_size\": 128");
	pos[15] = '9'; /* 128 -> 129 */
	assert_int_equal(tu_write_file(dir, "config.json", edited, strlen(edited)), 0);
	struct timespec ts[2] = {st.st_atim, st.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, cfgp, ts, 0), 0);
	char r3[65];
	revision_of(dir, r3);
	assert_string_not_equal(r2, r3);
	/* restoring the content restores the digest */
	assert_int_equal(
	    tu_write_file(dir, "config.json", tu_llama_config, strlen(tu_llama_config)), 0);
	assert_int_equal(utimensat(AT_FDCWD, cfgp, ts, 0), 0);
	revision_of(dir, r3);
	assert_string_equal(r2, r3);
	free(edited);
	free(cfgp);
	free(shard);
	tu_rmrf(dir);
	free(dir);
}

/* ckpt_open_quick: the same validation and table, no tensor byte read, no
 * revision; a full open of the same store then reads every byte. */
static void test_open_quick(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckq");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 2, SEED), 0);
	store *s;
	ckpt *c;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	assert_int_equal(ckpt_open_quick(&c, s, &err), WT_OK);
	uint64_t quick = store_bytes_read(s), total = ckpt_total_bytes(c);
	assert_int_equal(ckpt_n_tensors(c), N_TINY);
	assert_string_equal(ckpt_revision(c), "");
	ckpt_close(c);
	assert_int_equal(ckpt_open(&c, s, &err), WT_OK);
	uint64_t full = store_bytes_read(s) - quick;
	printf("quick open read %llu bytes, full open %llu; tensors %llu bytes\n",
	       (unsigned long long)quick, (unsigned long long)full, (unsigned long long)total);
	assert_true(quick < total / 4);
	assert_true(full >= total + quick);
	assert_int_equal(strlen(ckpt_revision(c)), 64);
	ckpt_close(c);
	store_close(s);
	tu_rmrf(dir);
	free(dir);
}

/* ---- digests of several objects at once ---- */

typedef struct log_cap {
	pthread_mutex_t lk;
	int progress, last;
	double prev_pct; /* percent read in the previous progress line */
	bool monotonic;
	char last_line[300];
} log_cap;

static void cap_log(void *ctx, int level, const char *msg)
{
	log_cap *c = ctx;
	double pct = 0;
	pthread_mutex_lock(&c->lk);
	if (level == WT_LOG_NOTICE && strstr(msg, "content digest (revision):") != NULL &&
	    sscanf(strstr(msg, "revision):") + 10, " %lf%% read", &pct) == 1) {
		c->progress++;
		c->monotonic = c->monotonic && pct >= c->prev_pct && pct <= 100.0;
		c->prev_pct = pct;
	} else if (level == WT_LOG_NOTICE &&
	           strstr(msg, "content digest (revision) done") != NULL) {
		c->last++;
		snprintf(c->last_line, sizeof(c->last_line), "%s", msg);
	}
	pthread_mutex_unlock(&c->lk);
}

/* A digest longer than the progress interval says how far it got, in order,
 * then that it is done; a short one says nothing. */
static void test_digest_progress(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckg");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 8, SEED), 0);
	log_cap cap = {.monotonic = true};
	pthread_mutex_init(&cap.lk, NULL);
	common_log_set(cap_log, &cap, WT_LOG_NOTICE);
	ckpt_digest_progress_ns(1); /* every block after the first moment */
	char r1[65], r2[65];
	revision_of(dir, r1);
	printf("interval 1 ns: %d progress lines (last at %.1f%%), %d last line: %s\n",
	       cap.progress, cap.prev_pct, cap.last, cap.last_line);
	assert_true(cap.progress >= 1);
	assert_true(cap.monotonic);
	assert_int_equal(cap.last, 1);
	assert_non_null(strstr(cap.last_line, dir));
	cap.progress = cap.last = 0;
	ckpt_digest_progress_ns(30000000000ull); /* the default: a tiny model says nothing */
	revision_of(dir, r2);
	assert_int_equal(cap.progress + cap.last, 0);
	assert_string_equal(r1, r2);
	common_log_set(NULL, NULL, WT_LOG_NOTICE);
	pthread_mutex_destroy(&cap.lk);
	tu_rmrf(dir);
	free(dir);
}

/* A memo that knows nothing. get: the first caller waits (up to 5 s) for a
 * caller on another thread, so a digest that hashes one object at a time is
 * seen as such; or, in truncate mode, cuts the object named victim to half
 * its size (through the folder) before the pinned read starts. */
typedef struct par_memo {
	pthread_mutex_t lk;
	pthread_cond_t cv;
	const char *dir, *victim; /* victim: NULL = barrier mode */
	pthread_t first;
	int gets, puts;
	bool have_first, overlapped, waited_out;
} par_memo;

static bool par_get(void *ctx, const char *uri, const store_obj *o, wt_hash128 *out)
{
	(void)uri;
	(void)out;
	par_memo *m = ctx;
	pthread_mutex_lock(&m->lk);
	m->gets++;
	if (m->victim != NULL) {
		if (strcmp(o->key, m->victim) == 0) {
			char *p = tu_path(m->dir, o->key);
			assert_int_equal(truncate(p, (off_t)(o->nbytes / 2)), 0);
			free(p);
		}
	} else if (!m->have_first) {
		m->have_first = true;
		m->first = pthread_self();
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 5;
		while (!m->overlapped && pthread_cond_timedwait(&m->cv, &m->lk, &dl) == 0) {
		}
		m->waited_out = !m->overlapped;
	} else if (!pthread_equal(pthread_self(), m->first) && !m->overlapped) {
		m->overlapped = true;
		pthread_cond_broadcast(&m->cv);
	}
	pthread_mutex_unlock(&m->lk);
	return false;
}

static void par_put(void *ctx, const char *uri, const store_obj *o, wt_hash128 d)
{
	(void)uri;
	(void)o;
	(void)d;
	par_memo *m = ctx;
	pthread_mutex_lock(&m->lk);
	m->puts++;
	pthread_mutex_unlock(&m->lk);
}

/* Eight shards (one tensor each): hashed several at a time (a second thread hashes while the
 * first is inside its object), each digest in its object's place (the
 * revision as documented), every digest remembered once; then one shard cut
 * short while it is hashed: the open fails naming that shard, whatever the
 * other threads were doing. */
static void test_revision_parallel(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp("ckp");
	assert_int_equal(tu_write_ckpt(dir, tu_llama_config, tiny, N_TINY, 8, SEED), 0);
	char keys[10][64];
	const char *kp[10];
	snprintf(keys[0], sizeof(keys[0]), "config.json");
	for (size_t k = 1; k <= 8; k++)
		tu_shard_name(keys[k], sizeof(keys[k]), k, 8);
	snprintf(keys[9], sizeof(keys[9]), "model.safetensors.index.json");
	for (int i = 0; i < 10; i++)
		kp[i] = keys[i];
	char want[65];
	expected_revision(dir, kp, 10, want);

	par_memo m = {.dir = dir};
	pthread_mutex_init(&m.lk, NULL);
	pthread_cond_init(&m.cv, NULL);
	ckpt_memo memo = {.get = par_get, .put = par_put, .ctx = &m};
	store *s;
	ckpt *c;
	wt_errbuf err;
	assert_int_equal(store_open(&s, dir, &err), WT_OK);
	int rv = ckpt_open_memo(&c, s, &memo, &err);
	if (rv != WT_OK)
		print_error("%s\n", err.msg);
	assert_int_equal(rv, WT_OK);
	assert_string_equal(ckpt_revision(c), want);
	printf("8 shards: %d lookups, %d digests remembered, overlapped %d\n", m.gets, m.puts,
	       m.overlapped);
	assert_true(m.overlapped && !m.waited_out);
	assert_int_equal(m.gets, 8);
	assert_int_equal(m.puts, 8);
	ckpt_close(c);

	m.victim = keys[3];
	m.gets = m.puts = 0;
	rv = ckpt_open_memo(&c, s, &memo, &err);
	printf("shard 3 cut short: %s\n", err.msg);
	assert_int_not_equal(rv, WT_OK);
	assert_null(c);
	assert_non_null(strstr(err.msg, keys[3]));
	assert_true(m.puts < 8);
	store_close(s);
	pthread_cond_destroy(&m.cv);
	pthread_mutex_destroy(&m.lk);
	tu_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_single_file),   cmocka_unit_test(test_indexed),
	    cmocka_unit_test(test_index_errors),  cmocka_unit_test(test_tensor_in_two_files),
	    cmocka_unit_test(test_folder_errors), cmocka_unit_test(test_config_defaults),
	    cmocka_unit_test(test_config_moe),    cmocka_unit_test(test_config_errors),
	    cmocka_unit_test(test_revision),      cmocka_unit_test(test_revision_parallel),
	    cmocka_unit_test(test_open_quick),    cmocka_unit_test(test_digest_progress),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
