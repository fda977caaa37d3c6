/*
 * test_mistral_large3_params.h — test_mistral_large3.c's params.json and tensor-name cases:
 * every Mistral-Large-3 key range-checked, every key not read refused, naming it.
 */
#ifndef WT_TEST_MISTRAL_LARGE3_PARAMS_H
#define WT_TEST_MISTRAL_LARGE3_PARAMS_H

/* A copy of the native fixture with params.json replaced by `params`. */
static char *with_params(const char *params)
{
	char *d = tu_mkdtemp("ml3p");
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

#define ML3_BASE                                                                                   \
	"\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"n_kv_heads\": 8, \"hidden_dim\": 512, "  \
	"\"vocab_size\": 1024, \"head_dim\": 32, \"norm_eps\": 1e-06, \"q_lora_rank\": 128, "      \
	"\"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 32, "               \
	"\"v_head_dim\": 32"
#define ML3_MOE(x)                                                                                 \
	"\"moe\": {\"num_experts\": 4, \"num_experts_per_tok\": 2, \"expert_hidden_dim\": 256, "   \
	"\"num_shared_experts\": 1, \"first_k_dense_replace\": 1" x "}"
#define ML3_L4 "\"llama_4_scaling\": {\"original_max_position_embeddings\": 8192, \"beta\": 0.1}"
#define ML3(x) "{" ML3_BASE ", " ML3_MOE("") ", " ML3_L4 x "}"

/* params.json opened (code WT_OK; then `what`, if any, is in the config.json view) or refused
 * with code and a message naming `what`. */
static void expect_params(const char *params, int code, const char *what)
{
	char *d = with_params(params);
	store *s;
	ckpt *c;
	wt_errbuf err = {0};
	int rv = open_dir(d, &c, &s, &err);
	size_t len;
	const char *text = rv == WT_OK ? ckpt_config_json(c, &len) : err.msg;
	if (rv != code || (what != NULL && strstr(text, what) == NULL))
		fail_msg("params %s: %s (%s), want %s with '%s'", params, wt_errname(rv), text,
		         wt_errname(code), what ? what : "");
	if (code != WT_OK)
		print_message("refused: %s\n", err.msg);
	ckpt_close(c);
	store_close(s);
	tu_rmrf(d);
	free(d);
}

static void test_params(void **state)
{
	(void)state;
	expect_params(ML3(""), WT_OK, "\"first_k_dense_replace\": 1");
	expect_params("{" ML3_BASE ", " ML3_MOE(", \"route_every_n\": 1, \"routed_scale\": 1.5, "
	                                        "\"num_expert_groups\": 2, "
	                                        "\"num_expert_groups_per_tok\": 1, "
	                                        "\"use_load_balancing_bias\": false, "
	                                        "\"renorm_strategy\": \"WEIGHTS\"") ", " ML3_L4 "}",
	              WT_OK, "\"routed_scaling_factor\": 1.5");
	expect_params(ML3(", \"yarn\": {\"factor\": 4, \"original_max_position_embeddings\": 1024, "
	                  "\"beta\": 32, \"alpha\": 1, \"apply_scale\": false}"),
	              WT_OK, "\"attention_factor\": 1.0");
	expect_params(
	    ML3(", \"yarn\": {\"factor\": 4, \"original_max_position_embeddings\": 1024}"), WT_OK,
	    "\"beta_fast\": 32.0");
	/* what is not read */
	expect_params("{" ML3_BASE ", " ML3_MOE("") "}", WT_ECORRUPT,
	              "'llama_4_scaling' is required");
	expect_params("{" ML3_BASE ", " ML3_L4 "}", WT_EUNSUPPORTED, "without 'moe'");
	expect_params(ML3(", \"quantization\": {\"qformat_weight\": \"fp8_e4m3\"}"),
	              WT_EUNSUPPORTED, "'quantization'");
	expect_params(ML3(", \"vision_encoder\": {\"hidden_size\": 1024}"), WT_EUNSUPPORTED,
	              "'vision_encoder'");
	expect_params(ML3(", \"sliding_window\": 4096"), WT_EUNSUPPORTED, "'sliding_window'");
	expect_params(ML3(", \"index_topk\": 2048"), WT_EUNSUPPORTED, "unknown key 'index_topk'");
	expect_params("{" ML3_BASE ", " ML3_MOE(", \"capacity\": 2") ", " ML3_L4 "}",
	              WT_EUNSUPPORTED, "'moe.capacity'");
	expect_params("{" ML3_BASE ", " ML3_MOE(", \"use_load_balancing_bias\": true") ", " ML3_L4
	                                                                               "}",
	              WT_EUNSUPPORTED, "'moe.use_load_balancing_bias'");
	expect_params("{" ML3_BASE ", " ML3_MOE(", \"renorm_strategy\": \"NONE\"") ", " ML3_L4 "}",
	              WT_EUNSUPPORTED, "'moe.renorm_strategy'");
	expect_params(ML3(", \"yarn\": {\"factor\": 4, \"original_max_position_embeddings\": 1024, "
	                  "\"mscale\": 1}"),
	              WT_EUNSUPPORTED, "'yarn.mscale'");
	expect_params("{" ML3_BASE
	              ", " ML3_MOE("") ", \"llama_4_scaling\": {\"beta\": 0.1, "
	                               "\"original_max_position_embeddings\": 8192, \"floor\": 1}}",
	              WT_EUNSUPPORTED, "'llama_4_scaling.floor'");
}

/* Values out of range, and the files against params.json. */
static void test_params_range(void **state)
{
	(void)state;
	expect_params("{" ML3_BASE ", \"moe\": {\"num_experts\": 4, \"num_experts_per_tok\": 2, "
	              "\"expert_hidden_dim\": 256, \"num_shared_experts\": 0, "
	              "\"first_k_dense_replace\": 1}, " ML3_L4 "}",
	              WT_ECORRUPT, "'moe.num_shared_experts' is 0");
	expect_params("{" ML3_BASE ", \"moe\": {\"num_experts\": 4, \"num_experts_per_tok\": 5, "
	              "\"expert_hidden_dim\": 256, \"num_shared_experts\": 1, "
	              "\"first_k_dense_replace\": 1}, " ML3_L4 "}",
	              WT_ECORRUPT, "num_experts_per_tok 5 of num_experts 4");
	expect_params("{" ML3_BASE ", \"moe\": {\"num_experts\": 4, \"num_experts_per_tok\": 2, "
	              "\"expert_hidden_dim\": 256, \"num_shared_experts\": 1, "
	              "\"first_k_dense_replace\": 3}, " ML3_L4 "}",
	              WT_ECORRUPT, "first_k_dense_replace 3 of n_layers 2");
	expect_params("{" ML3_BASE ", \"moe\": {\"num_experts\": 4, \"num_experts_per_tok\": 2, "
	              "\"expert_hidden_dim\": 256, \"num_shared_experts\": 1}, " ML3_L4 "}",
	              WT_ECORRUPT, "'moe.first_k_dense_replace' is required");
	expect_params("{" ML3_BASE ", " ML3_MOE(", \"num_expert_groups\": 3") ", " ML3_L4 "}",
	              WT_ECORRUPT, "num_expert_groups 3");
	expect_params("{" ML3_BASE ", " ML3_MOE(", \"routed_scale\": 0") ", " ML3_L4 "}",
	              WT_ECORRUPT, "'moe.routed_scale' must be a finite number > 0");
	expect_params("{" ML3_BASE ", " ML3_MOE(", \"route_every_n\": \"1\"") ", " ML3_L4 "}",
	              WT_ECORRUPT, "'moe.route_every_n' must be an integer");
	expect_params("{" ML3_BASE ", \"moe\": 3, " ML3_L4 "}", WT_ECORRUPT,
	              "'moe' must be an object");
	expect_params(
	    "{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	    "\"vocab_size\": 1024, \"norm_eps\": 1e-06, \"kv_lora_rank\": 64, "
	    "\"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 32, \"v_head_dim\": 32, " ML3_MOE(
	        "") ", " ML3_L4 "}",
	    WT_ECORRUPT, "'q_lora_rank' is required");
	expect_params(ML3(", \"qk_rope_head_dim\": 31"), WT_EDUP, "qk_rope_head_dim");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"vocab_size\": 1024, \"norm_eps\": 1e-06, \"q_lora_rank\": 128, "
	              "\"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 31, "
	              "\"v_head_dim\": 32, " ML3_MOE("") ", " ML3_L4 "}",
	              WT_ECORRUPT, "'qk_rope_head_dim' 31 is odd");
	expect_params("{\"dim\": 256, \"n_layers\": 2, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"vocab_size\": 1024, \"norm_eps\": 1e-06, \"q_lora_rank\": 128, "
	              "\"kv_lora_rank\": 0, \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 32, "
	              "\"v_head_dim\": 4294967296, " ML3_MOE("") ", " ML3_L4 "}",
	              WT_ECORRUPT, "'kv_lora_rank' is 0");
	expect_params("{" ML3_BASE ", " ML3_MOE("") ", \"llama_4_scaling\": {\"beta\": -1, "
	                                            "\"original_max_position_embeddings\": 8192}}",
	              WT_ECORRUPT, "'llama_4_scaling.beta' must be a finite number >= 0");
	expect_params("{" ML3_BASE ", " ML3_MOE("") ", \"llama_4_scaling\": "
	                                            "{\"original_max_position_embeddings\": 8192}}",
	              WT_ECORRUPT, "'llama_4_scaling.beta' is required");
	expect_params("{" ML3_BASE ", " ML3_MOE("") ", \"llama_4_scaling\": {\"beta\": 0.1, "
	                                            "\"original_max_position_embeddings\": 0}}",
	              WT_ECORRUPT, "'llama_4_scaling.original_max_position_embeddings' is 0");
	expect_params(ML3(", \"yarn\": {\"factor\": 0.5, \"original_max_position_embeddings\": 1}"),
	              WT_ECORRUPT, "'yarn.factor' must be a finite number >= 1");
	expect_params(ML3(", \"yarn\": {\"original_max_position_embeddings\": 1024}"), WT_ECORRUPT,
	              "'yarn.factor' is required");
	expect_params(ML3(", \"yarn\": {\"factor\": 4, \"original_max_position_embeddings\": 1024, "
	                  "\"apply_scale\": \"no\"}"),
	              WT_ECORRUPT, "'yarn.apply_scale' must be true or false");
	/* the files against params.json: a layer past n_layers, an expert past num_experts */
	expect_params("{\"dim\": 256, \"n_layers\": 1, \"n_heads\": 8, \"hidden_dim\": 512, "
	              "\"vocab_size\": 1024, \"norm_eps\": 1e-06, \"q_lora_rank\": 128, "
	              "\"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 32, "
	              "\"v_head_dim\": 32, " ML3_MOE("") ", " ML3_L4 "}",
	              WT_EUNSUPPORTED, "layers.1.");
	expect_params("{" ML3_BASE ", \"moe\": {\"num_experts\": 3, \"num_experts_per_tok\": 2, "
	              "\"expert_hidden_dim\": 256, \"num_shared_experts\": 1, "
	              "\"first_k_dense_replace\": 1}, " ML3_L4 "}",
	              WT_EUNSUPPORTED, "expert 3 is past params.json's moe.num_experts 3");
}

/* A one-file native folder (Mistral-Large-3's params.json) holding tensor `name` alone. */
static void expect_tensor(const char *name, int code, const char *what)
{
	char *d = tu_mkdtemp("ml3t");
	const char *params = ML3("");
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
	if (rv != code || (what != NULL && rv != WT_OK && strstr(err.msg, what) == NULL))
		fail_msg("tensor %s: %s (%s), want %s naming '%s'", name, wt_errname(rv), err.msg,
		         wt_errname(code), what ? what : "");
	if (rv == WT_OK)
		assert_non_null(ckpt_find(c, what));
	else
		print_message("refused: %s\n", err.msg);
	ckpt_close(c);
	store_close(s);
	free(path);
	free(buf);
	tu_rmrf(d);
	free(d);
}

static void test_tensors(void **state)
{
	(void)state;
	expect_tensor("layers.1.experts.3.w2.weight", WT_OK,
	              "model.layers.1.mlp.experts.3.down_proj.weight");
	expect_tensor("layers.0.shared_experts.w3.weight", WT_OK,
	              "model.layers.0.mlp.shared_experts.up_proj.weight");
	expect_tensor("layers.1.attention.wkv_a_with_mqa.weight", WT_OK,
	              "model.layers.1.self_attn.kv_a_proj_with_mqa.weight");
	expect_tensor("layers.0.attention.wq.weight", WT_EUNSUPPORTED, "Mistral-Large-3");
	expect_tensor("layers.0.experts.4.w1.weight", WT_EUNSUPPORTED, "expert 4 is past");
	expect_tensor("layers.0.experts.01.w1.weight", WT_EUNSUPPORTED,
	              "'layers.0.experts.01.w1.weight'");
	expect_tensor("layers.0.experts.0.w1.qscale_weight", WT_EUNSUPPORTED,
	              "'layers.0.experts.0.w1.qscale_weight'");
	expect_tensor("layers.0.gate.bias", WT_EUNSUPPORTED, "'layers.0.gate.bias'");
	expect_tensor("layers.2.ffn_norm.weight", WT_EUNSUPPORTED, "n_layers 2");
}

#endif
