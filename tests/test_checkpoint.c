/* test_checkpoint.c — config.json defaults, single-file and indexed folders,
 * every index error (the revision digest: test_revision.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "loader/loader.h"
#include "tests/util/testutil.h"

#define SEED 777u

#define tiny   tu_tiny_llama
#define N_TINY TU_TINY_LLAMA_N

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
	/* every byte read once: each data block is read whole, checked against
	 * its block digest and kept in the verified-block cache for the other
	 * tensors in it (store_verify.c); the header is a block of its own that
	 * tensor reads never touch. So the store reads the tensor bytes (they tile
	 * the data sections) once, though they are asked for about twice. */
	uint64_t before = store_bytes_read(s), tensor_bytes = total;
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
	printf("tensor bytes asked for %llu, read from the store %llu, tensors %llu\n",
	       (unsigned long long)total, (unsigned long long)(store_bytes_read(s) - before),
	       (unsigned long long)tensor_bytes);
	assert_int_equal(store_bytes_read(s) - before, tensor_bytes);
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
	assert_true(c.tie_given);
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
	assert_true(c.tie_given);
	ckpt_config_clear(&c);

	/* tie_word_embeddings absent or null: not given (the family decides) */
	static const char *const untold[] = {"", ", \"tie_word_embeddings\": null"};
	for (int k = 0; k < 2; k++) {
		char json[256];
		snprintf(json, sizeof(json),
		         "{\"architectures\": [\"GemmaForCausalLM\"], \"hidden_size\": 64, "
		         "\"num_attention_heads\": 4, \"num_hidden_layers\": 1, "
		         "\"vocab_size\": 10%s}",
		         untold[k]);
		parse_ok(json, &c);
		assert_false(c.tie_given);
		assert_false(c.tie_word_embeddings);
		ckpt_config_clear(&c);
	}
}

/* google/gemma-3-4b-it's config.json as released: text_config holds only what differs
 * from Gemma3TextConfig's defaults, which transformers then applies. */
static const char gemma3_4b[] =
    "{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"boi_token_index\": 255999, "
    "\"eoi_token_index\": 256000, \"eos_token_id\": [1, 106], \"image_token_index\": 262144, "
    "\"initializer_range\": 0.02, \"mm_tokens_per_image\": 256, \"model_type\": \"gemma3\", "
    "\"text_config\": {\"hidden_size\": 2560, \"intermediate_size\": 10240, \"model_type\": "
    "\"gemma3_text\", \"num_hidden_layers\": 34, \"rope_scaling\": {\"factor\": 8.0, "
    "\"rope_type\": \"linear\"}, \"sliding_window\": 1024}, \"torch_dtype\": \"bfloat16\", "
    "\"transformers_version\": \"4.50.0.dev0\", \"vision_config\": {\"hidden_size\": 1152, "
    "\"image_size\": 896, \"intermediate_size\": 4304, \"model_type\": \"siglip_vision_model\", "
    "\"num_attention_heads\": 16, \"num_hidden_layers\": 27, \"patch_size\": 14, "
    "\"vision_use_head\": false}}";

/* Keys a config class defaults are filled in (Gemma 3); other classes are not. */
static void test_config_class_defaults(void **state)
{
	(void)state;
	ckpt_config c;
	parse_ok(gemma3_4b, &c);
	assert_string_equal(c.model_type, "gemma3");
	assert_int_equal(c.hidden_size, 2560);
	assert_int_equal(c.num_hidden_layers, 34);
	assert_int_equal(c.intermediate_size, 10240);
	assert_int_equal(c.num_attention_heads, 8); /* Gemma3TextConfig's defaults */
	assert_int_equal(c.num_key_value_heads, 4);
	assert_int_equal(c.head_dim, 256);
	assert_int_equal(c.vocab_size, 262208);
	assert_false(c.tie_given);
	assert_int_equal(c.v_num_layers, 27);
	ckpt_config_clear(&c);
	/* Gemma3ForCausalLM with the keys left out, and an explicit value kept */
	parse_ok("{\"architectures\": [\"Gemma3ForCausalLM\"], \"model_type\": \"gemma3_text\", "
	         "\"hidden_size\": 1152, \"num_hidden_layers\": 26, \"num_key_value_heads\": 1}",
	         &c);
	assert_int_equal(c.num_attention_heads, 8);
	assert_int_equal(c.num_key_value_heads, 1);
	assert_int_equal(c.head_dim, 256);
	assert_int_equal(c.vocab_size, 262208);
	ckpt_config_clear(&c);
	/* Llama 4 (Llama4TextConfig): a Scout text_config saved with its defaults left out */
	parse_ok("{\"architectures\": [\"Llama4ForConditionalGeneration\"], \"model_type\": "
	         "\"llama4\", \"text_config\": {\"model_type\": \"llama4_text\", "
	         "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 16.0}}, "
	         "\"vision_config\": {\"model_type\": \"llama4_vision_model\"}}",
	         &c);
	assert_int_equal(c.hidden_size, 5120);
	assert_int_equal(c.num_hidden_layers, 48);
	assert_int_equal(c.num_attention_heads, 40);
	assert_int_equal(c.num_key_value_heads, 8);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.vocab_size, 202048);
	assert_int_equal(c.intermediate_size, 8192);
	assert_int_equal(c.intermediate_size_mlp, 16384);
	assert_int_equal(c.num_experts, 16);
	assert_int_equal(c.interleave_moe_layer_step, 1);
	ckpt_config_clear(&c);
	/* Llama4ForCausalLM: an explicit value kept, the rest defaulted */
	parse_ok("{\"architectures\": [\"Llama4ForCausalLM\"], \"model_type\": \"llama4_text\", "
	         "\"num_local_experts\": 128, \"interleave_moe_layer_step\": 2}",
	         &c);
	assert_int_equal(c.num_experts, 128);
	assert_int_equal(c.interleave_moe_layer_step, 2);
	assert_int_equal(c.hidden_size, 5120);
	ckpt_config_clear(&c);
	/* ERNIE 4.5 MoE (Ernie4_5_MoeConfig): 21B-A3B's dims, moe_num_experts and
	 * moe_num_shared_experts read under their names, the layer range 1 .. -1 every layer */
	parse_ok("{\"architectures\": [\"Ernie4_5_MoeForCausalLM\"], \"model_type\": "
	         "\"ernie4_5_moe\", \"moe_num_experts\": 8}",
	         &c);
	assert_int_equal(c.hidden_size, 2560);
	assert_int_equal(c.num_hidden_layers, 28);
	assert_int_equal(c.num_attention_heads, 20);
	assert_int_equal(c.num_key_value_heads, 4);
	assert_int_equal(c.head_dim, 128); /* no class default: hid / H */
	assert_int_equal(c.vocab_size, 103424);
	assert_int_equal(c.intermediate_size, 12288);
	assert_int_equal(c.moe_intermediate_size, 1536);
	assert_int_equal(c.num_experts, 8);
	assert_int_equal(c.n_shared_experts, 2);
	assert_int_equal(c.moe_layer_start_index, 1);
	assert_int_equal(c.moe_layer_end_index, -1);
	assert_int_equal(c.moe_layer_interval, 1);
	assert_false(c.use_bias);
	ckpt_config_clear(&c);
	/* ERNIE 4.5 (Ernie4_5Config): 0.3B's dims, head_dim 128 given by the class */
	parse_ok("{\"architectures\": [\"Ernie4_5ForCausalLM\"], \"model_type\": \"ernie4_5\", "
	         "\"use_bias\": true}",
	         &c);
	assert_int_equal(c.hidden_size, 1024);
	assert_int_equal(c.num_hidden_layers, 18);
	assert_int_equal(c.num_attention_heads, 16);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.intermediate_size, 3072);
	assert_int_equal(c.vocab_size, 103424);
	assert_int_equal(c.num_experts, 0);
	assert_true(c.use_bias);
	ckpt_config_clear(&c);
	/* a Llama config gets no defaults: the required keys stay required */
	wt_errbuf err = {0};
	static const char llama[] = "{\"architectures\": [\"LlamaForCausalLM\"], "
	                            "\"model_type\": \"llama\", \"hidden_size\": 64, "
	                            "\"num_hidden_layers\": 1, \"vocab_size\": 10}";
	assert_int_equal(ckpt_config_parse(llama, strlen(llama), &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "num_attention_heads"));
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
	/* modules_to_not_convert covers the module's subtree: "gate" and "gate." */
	assert_int_equal(c.n_quant_ignore, 3);
	assert_string_equal(c.quant_ignore[0], "lm_head");
	assert_string_equal(c.quant_ignore[1], "gate");
	assert_string_equal(c.quant_ignore[2], "gate.");
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
	/* integers past 2^40 (the hostile-config sweep's 2^63-1 overflowed 4 * hidden_size
	 * (Falcon), max_position_embeddings + 2 (OPT), expansion_ratio * d_model (MPT)) */
	expect_config("{\"architectures\": [\"X\"], " BASE
	              "\"num_key_value_heads\": 1099511627777}",
	              WT_ECORRUPT, "num_key_value_heads 1099511627777 is past 2^40");
	expect_config("{\"architectures\": [\"FalconForCausalLM\"], \"model_type\": \"falcon\", "
	              "\"hidden_size\": 9223372036854775807, \"num_attention_heads\": 4, "
	              "\"num_hidden_layers\": 2, \"vocab_size\": 100}",
	              WT_ECORRUPT, "hidden_size 9223372036854775807 is past 2^40");
	expect_config("{\"architectures\": [\"OPTForCausalLM\"], \"model_type\": \"opt\", " BASE
	              "\"max_position_embeddings\": 9223372036854775807}",
	              WT_ECORRUPT, "max_position_embeddings 9223372036854775807 is past 2^40");
	expect_config("{\"architectures\": [\"MPTForCausalLM\"], \"model_type\": \"mpt\", "
	              "\"d_model\": 64, \"n_heads\": 4, \"n_layers\": 2, \"vocab_size\": 100, "
	              "\"expansion_ratio\": 9223372036854775807}",
	              WT_ECORRUPT, "expansion_ratio * d_model overflows");
	expect_config("{\"architectures\": [\"Mamba2ForCausalLM\"], \"model_type\": \"mamba2\", "
	              "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"vocab_size\": 100, "
	              "\"expand\": 4611686018427387904, \"intermediate_size\": 0}",
	              WT_EUNSUPPORTED, "intermediate_size must be expand 4611686018427387904");
	expect_config("{\"architectures\": [\"X\"], " BASE "\"mlp_only_layers\": [1099511627777]}",
	              WT_ECORRUPT, "'mlp_only_layers'[0] is not an integer within +-2^40");
	expect_config("[1]", WT_ECORRUPT, "not a JSON object");
	expect_config("{\"architectures\": [\"X\"], \"architectures\": [\"Y\"]}", WT_EDUP,
	              "duplicate");
	expect_config("{\"architectures\": ", WT_ECORRUPT, "not valid JSON");
}

/* A composite model's lm_head tie is its text_config's (transformers 4.57.1's
 * get_text_config(), vLLM's language model built of text_config): a top-level
 * true over a text_config without the key leaves the text class's default
 * (untied), and text_config's own key decides. */
static void test_composite_tie(void **state)
{
	(void)state;
	static const struct {
		const char *arch, *mt, *tmt;
		bool dflt; /* the text class's default */
	} fams[] = {
	    {"Mistral3", "mistral3", "mistral", false},
	    {"Glm4v", "glm4v", "glm4v_text", false},
	    {"Glm4vMoe", "glm4v_moe", "glm4v_moe_text", false},
	    {"Llama4", "llama4", "llama4_text", false},
	    {"Llava", "llava", "llama", false},
	    {"LlavaNext", "llava_next", "llama", false},
	    {"Gemma3", "gemma3", "gemma3_text", true},
	    {"Qwen2VL", "qwen2_vl", "qwen2_vl_text", false},
	    {"Qwen2_5_VL", "qwen2_5_vl", "qwen2_5_vl_text", false},
	    {"Qwen3VL", "qwen3_vl", "qwen3_vl_text", false},
	    {"Qwen3VLMoe", "qwen3_vl_moe", "qwen3_vl_moe_text", false},
	    {"InternVL", "internvl", "qwen2", false},
	};
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		for (int top = 0; top < 2; top++)
			for (int text = -1; text < 2; text++) { /* -1: no key */
				char js[768];
				snprintf(js, sizeof(js),
				         "{\"architectures\":[\"%sForConditionalGeneration\"],"
				         "\"model_type\":\"%s\",\"tie_word_embeddings\":%s,"
				         "\"text_config\":{\"model_type\":\"%s\","
				         "\"hidden_size\":64,\"num_attention_heads\":4,"
				         "\"num_hidden_layers\":1,\"vocab_size\":128%s},"
				         "\"vision_config\":{}}",
				         fams[i].arch, fams[i].mt, top ? "true" : "false",
				         fams[i].tmt,
				         text < 0 ? ""
				         : text   ? ",\"tie_word_embeddings\":true"
				                  : ",\"tie_word_embeddings\":false");
				ckpt_config c;
				wt_errbuf err = {0};
				int rv = ckpt_config_parse(js, strlen(js), &c, &err);
				if (rv != WT_OK)
					fail_msg("%s: %s", js, err.msg);
				/* without text_config's key the family's tie_default (the
				 * text class's) decides: the top level must not be given */
				bool want = text < 0 ? fams[i].dflt : text == 1;
				bool tied = c.tie_given ? c.tie_word_embeddings : fams[i].dflt;
				if (tied != want || c.tie_given != (text >= 0))
					fail_msg("%s: tied %d (given %d), want %d", js, tied,
					         c.tie_given, want);
				ckpt_config_clear(&c);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_single_file),
	    cmocka_unit_test(test_indexed),
	    cmocka_unit_test(test_index_errors),
	    cmocka_unit_test(test_tensor_in_two_files),
	    cmocka_unit_test(test_folder_errors),
	    cmocka_unit_test(test_config_defaults),
	    cmocka_unit_test(test_config_moe),
	    cmocka_unit_test(test_config_errors),
	    cmocka_unit_test(test_config_class_defaults),
	    cmocka_unit_test(test_composite_tie),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
