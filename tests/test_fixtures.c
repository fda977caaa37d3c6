/* test_fixtures.c — every wt-mkckpt family opens with our own checkpoint view
 * (loader/ckpt_open) with the tensor count, byte total and config fields
 * computed by hand below; the generator is found as $WT_BUILD/wt-mkckpt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loader/loader.h"
#include "shardmap/shardmap.h"
#include "tests/util/testutil.h"

#define SEED 7u

#include "tests/test_fixtures_expect.h"
#include "tests/test_fixtures_cfg.h"

static char *mkckpt_path(void)
{
	const char *b = getenv("WT_BUILD");
	return tu_path(b != NULL && *b ? b : "build", "wt-mkckpt");
}

/* Run wt-mkckpt; returns its exit status. */
static int run_mkckpt(const char *args)
{
	char *bin = mkckpt_path();
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "'%s' %s >/dev/null 2>&1", bin, args);
	free(bin);
	int st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

/* The vision / audio towers of the multimodal fixtures. */
static void check_towers(const fam_expect *e, const ckpt_config *cfg)
{
	/* Qwen2-VL: vision_config and mrope_section, from the top level (4.x) or with the
	 * language model in text_config and rope_parameters (5.x); Qwen2.5-VL names its
	 * vision width hidden_size and gives intermediate_size and out_hidden_size */
	bool v25 = strncmp(e->name, "qwen2_5_vl", 10) == 0;
	bool g3 = strncmp(e->name, "gemma3", 6) == 0 && strcmp(e->name, "gemma3_text") != 0 &&
	          strncmp(e->name, "gemma3n", 7) != 0;
	bool l4v = strcmp(e->name, "llama4") == 0 || strcmp(e->name, "llama4_fbgemm") == 0;
	bool q3v = strncmp(e->name, "qwen3_vl", 8) == 0;
	bool m3 = strncmp(e->name, "mistral3", 8) == 0;
	bool g4v = strncmp(e->name, "glm4v", 5) == 0;
	bool ov = strcmp(e->name, "llava_onevision") == 0;
	bool c2v = strcmp(e->name, "cohere2_vision") == 0;
	bool px = strcmp(e->name, "llava_pixtral") == 0;
	bool lv = strncmp(e->name, "llava", 5) == 0 && !ov && !px; /* llava, llava_next(_video) */
	bool i3 = strcmp(e->name, "idefics3") == 0 || strcmp(e->name, "smolvlm") == 0;
	bool pg = strcmp(e->name, "paligemma") == 0;
	bool av = strcmp(e->name, "aya_vision") == 0;
	bool ivl = strncmp(e->name, "internvl", 8) == 0;
	bool fy = strcmp(e->name, "fuyu") == 0;
	bool lvl = strcmp(e->name, "lfm2_vl") == 0;
	bool b2 = strcmp(e->name, "blip2") == 0;
	bool ar = strcmp(e->name, "aria") == 0;
	bool ml = strcmp(e->name, "mllama") == 0;
	bool qo = strcmp(e->name, "qwen2_5_omni") == 0 || strcmp(e->name, "qwen3_omni_moe") == 0;
	bool cl = strcmp(e->name, "clip") == 0;
	bool sg = strcmp(e->name, "siglip") == 0;
	bool jv = strcmp(e->name, "jina_vl") == 0; /* Qwen2-VL's tower under a score head */
	bool mv = strcmp(e->name, "minimax_vl_01") == 0 || strcmp(e->name, "phi3v") == 0;
	assert_int_equal(cfg->has_vision, strncmp(e->name, "qwen2_vl", 8) == 0 || v25 || g3 ||
	                                      l4v || q3v || m3 || g4v || lv || i3 || pg || av ||
	                                      ov || c2v || ivl || px || fy || lvl || b2 || ar ||
	                                      ml || qo || cl || sg || jv || mv);
	if (ivl)
		check_internvl(cfg, e->name[8] != '\0' ? e->name + 9 : "qwen2");
	if (m3) { /* Pixtral's vision_config; the projector's keys at the top level */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_hidden_size, 128);
		assert_int_equal(cfg->v_num_attn_heads, 4);
		assert_int_equal(cfg->v_spatial_merge_size, 2);
		assert_int_equal(cfg->mm_projector_bias, strcmp(e->name, "mistral3_hf5") == 0);
		assert_false(cfg->v_feature_list);
	}
	if (strncmp(e->name, "llama4", 6) == 0) {
		assert_int_equal(cfg->interleave_moe_layer_step, 2);
		assert_int_equal(cfg->intermediate_size_mlp, 384);
		assert_false(cfg->has_moe_layers);
	} else if (m3 || g4v || lv || i3 || pg || av || ov || c2v || ivl || px || fy || lvl || b2 ||
	           ar || ml || qo || cl || sg || mv) {
		/* checked above (mv: check_minimax_vl_01, check_phi3v) */
	} else if (g3) { /* SigLIP's vision_config (text_config holds the LM) */
		assert_int_equal(cfg->v_num_layers, 2);
		assert_int_equal(cfg->v_num_attn_heads, 4);
		assert_int_equal(cfg->v_hidden_size, 128);
		assert_int_equal(cfg->v_intermediate_size, 256);
		assert_int_equal(cfg->v_image_size, 56);
		assert_true(cfg->v_patch_given);
		assert_int_equal(cfg->v_patch_size, 14);
		assert_int_equal(cfg->v_in_chans, 3);
	} else if (q3v) { /* Qwen3-VL's vision_config and interleaved MRoPE (text_config) */
		assert_int_equal(cfg->v_depth, 3);
		assert_int_equal(cfg->v_hidden_size, 64);
		assert_int_equal(cfg->v_intermediate_size, 192);
		assert_int_equal(cfg->v_out_hidden_size, 256);
		assert_int_equal(cfg->v_num_pos, 16);
		assert_int_equal(cfg->v_patch_size, 4);
		assert_true(cfg->has_deepstack);
		assert_int_equal(cfg->n_deepstack, 2);
		assert_int_equal(cfg->deepstack[1], 2);
		assert_true(cfg->has_mrope);
		assert_int_equal(cfg->n_mrope, 3);
		assert_int_equal(cfg->mrope_section[0], 8);
		assert_int_equal(cfg->n_mlp_only_layers, strcmp(e->name, "qwen3_vl_moe") == 0);
	} else if (cfg->has_vision) {
		assert_int_equal(cfg->v_depth, v25 ? 4 : 2);
		assert_int_equal(v25 ? cfg->v_hidden_size : cfg->v_embed_dim, 128);
		assert_int_equal(cfg->v_intermediate_size, v25 ? 384 : -1);
		assert_int_equal(cfg->v_out_hidden_size, v25 ? 256 : -1);
		assert_int_equal(cfg->v_num_heads, 4);
		assert_true(cfg->v_mlp_ratio == 4.0);
		assert_int_equal(cfg->v_patch_size, 14);
		assert_int_equal(cfg->v_in_chans, 3);
		assert_true(cfg->has_mrope);
		assert_int_equal(cfg->n_mrope, 3);
		assert_int_equal(cfg->mrope_section[0], 4);
		assert_int_equal(cfg->mrope_section[2], 6);
	}
}

/* The quantization config the fixture declares. */
static void check_quant(const fam_expect *e, const ckpt_config *cfg)
{
	assert_int_equal(cfg->quant_group, e->quant == CKPT_QUANT_CT_INT4 ? 128 : 0);
	assert_int_equal(cfg->quant_int4_i8, strcmp(e->name, "llama_w4a8") == 0);
	assert_int_equal(cfg->quant_asym, strstr(e->name, "_asym") != NULL);
	assert_int_equal(cfg->quant_pack8, strcmp(e->name, "llama_w8a16") == 0);
	assert_int_equal(cfg->quant_gidx, strcmp(e->name, "llama_w4a16_actorder") == 0);
	if (e->quant == CKPT_QUANT_CT_INT4 || e->quant == CKPT_QUANT_CT_INT8 ||
	    e->quant == CKPT_QUANT_CT_FP8 || strcmp(e->name, "llama_ct_fp8_tensor") == 0 ||
	    strcmp(e->name, "qwen3_ct_fp8_block") == 0)
		assert_int_equal(cfg->n_quant_ignore, 1); /* "ignore": ["lm_head"] */
	/* Maverick's list, kept verbatim (matched as transformers does, not as patterns) */
	assert_int_equal(cfg->n_quant_keep, e->quant == CKPT_QUANT_FBGEMM_FP8 ? 6 : 0);
	if (e->quant == CKPT_QUANT_FBGEMM_FP8)
		assert_int_equal(cfg->n_quant_ignore, 0);
	if (e->quant == CKPT_QUANT_FP8_BLOCK) {
		assert_int_equal(cfg->quant_block[0], 128);
		assert_int_equal(cfg->quant_block[1], 128);
	}
}

/* The safetensors files the tensors live in. */
static void check_objects(const fam_expect *e, const ckpt *c)
{
	const char *objs[4] = {0};
	size_t n_objs = 0;
	for (size_t i = 0; i < ckpt_n_tensors(c); i++) {
		const char *o = ckpt_tensor_at(c, i)->object;
		size_t k = 0;
		while (k < n_objs && strcmp(objs[k], o) != 0)
			k++;
		if (k == n_objs) {
			assert_true(n_objs < 4);
			objs[n_objs++] = o;
		}
	}
	assert_int_equal(n_objs, e->n_objects);
}

static void check_family(const fam_expect *e, const char *root)
{
	char *dir = tu_path(root, e->name);
	char args[1024];
	snprintf(args, sizeof(args), "--family %s --out '%s' --seed %u", e->name, dir, SEED);
	assert_int_equal(run_mkckpt(args), 0);

	store *s = NULL;
	ckpt *c = NULL;
	wt_errbuf err = {0};
	int rv = store_open(&s, dir, &err);
	if (rv == WT_OK)
		rv = ckpt_open(&c, s, &err);
	if (rv != WT_OK)
		print_error("%s: %s\n", e->name, err.msg);
	assert_int_equal(rv, WT_OK);

	const ckpt_config *cfg = ckpt_get_config(c);
	print_message("%s: %zu tensors, %llu bytes\n", e->name, ckpt_n_tensors(c),
	              (unsigned long long)ckpt_total_bytes(c));
	assert_int_equal(ckpt_n_tensors(c), e->n_tensors);
	assert_int_equal(ckpt_total_bytes(c), e->total_bytes);
	assert_int_equal(cfg->hidden_size, e->hidden);
	assert_int_equal(cfg->num_attention_heads, e->heads);
	assert_int_equal(cfg->num_key_value_heads, e->kv_heads);
	assert_int_equal(cfg->head_dim, e->head_dim);
	assert_int_equal(cfg->intermediate_size, e->inter);
	assert_int_equal(cfg->vocab_size, e->vocab);
	assert_int_equal(cfg->num_hidden_layers, e->layers);
	/* the gemma and starcoder2 fixtures leave tie_word_embeddings out, as
	 * transformers does */
	assert_int_equal(shardmap_tied(cfg), e->tied);
	if (strncmp(e->name, "gemma", 5) == 0 || strcmp(e->name, "starcoder2") == 0)
		assert_false(cfg->tie_given);
	assert_int_equal(cfg->num_experts, e->experts);
	if (e->moe_inter > 0)
		assert_int_equal(cfg->moe_intermediate_size, e->moe_inter);
	assert_int_equal(cfg->quant, e->quant);
	check_towers(e, cfg);
	for (size_t i = 0; i < sizeof(cfg_checks) / sizeof(cfg_checks[0]); i++)
		if (names_hold(cfg_checks[i].names, e->name)) {
			cfg_checks[i].check(cfg);
			cfg_checks_used[i] = true;
		}
	check_quant(e, cfg);
	check_objects(e, c);
	ckpt_close(c);
	store_close(s);
	free(dir);
}

static void test_families(void **state)
{
	(void)state;
	char *root = tu_mkdtemp("fixtures");
	assert_non_null(root);
	print_message("seed %u\n", SEED);
	for (size_t i = 0; i < N_FAMS; i++)
		check_family(fam_at(i), root);
	for (size_t i = 0; i < sizeof(cfg_checks) / sizeof(cfg_checks[0]); i++)
		if (!cfg_checks_used[i])
			fail_msg("cfg_checks row '%s' names no fixture", cfg_checks[i].names);
	tu_rmrf(root);
	free(root);
}

/* Every family the generator lists is covered above, and no other. */
static void test_list(void **state)
{
	(void)state;
	char *bin = mkckpt_path();
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "'%s' --family list", bin);
	free(bin);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[128];
	size_t n = 0;
	while (fgets(line, sizeof(line), p) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		assert_true(n < N_FAMS);
		assert_string_equal(line, fam_at(n)->name);
		n++;
	}
	assert_int_equal(pclose(p), 0);
	assert_int_equal(n, N_FAMS);
}

/* The MTP layer and the pre-quantized tensors have the names real checkpoints use. */
static void test_deepseek_names(void **state)
{
	(void)state;
	char *root = tu_mkdtemp("fixtures-ds");
	char args[1024];
	snprintf(args, sizeof(args), "--family deepseek_v3 --out '%s' --seed %u", root, SEED);
	assert_int_equal(run_mkckpt(args), 0);
	store *s = NULL;
	ckpt *c = NULL;
	assert_int_equal(store_open(&s, root, NULL), WT_OK);
	assert_int_equal(ckpt_open(&c, s, NULL), WT_OK);
	static const struct {
		const char *name;
		wt_dtype dt;
		int64_t d0, d1;
	} want[] = {
	    {"model.layers.0.self_attn.q_b_proj.weight", WT_F8_E4M3, 512, 128},
	    {"model.layers.0.self_attn.q_b_proj.weight_scale_inv", WT_F32, 4, 1},
	    {"model.layers.1.mlp.experts.3.down_proj.weight_scale_inv", WT_F32, 2, 2},
	    {"model.layers.1.mlp.gate.weight", WT_BF16, 4, 256},
	    {"model.layers.1.mlp.gate.e_score_correction_bias", WT_F32, 4, -1},
	    {"model.layers.2.eh_proj.weight", WT_F8_E4M3, 256, 512},
	    {"model.layers.2.shared_head.head.weight", WT_BF16, 1024, 256},
	    {"model.layers.0.self_attn.rotary_emb.inv_freq", WT_F32, 16, -1},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const ckpt_tensor *t = ckpt_find(c, want[i].name);
		if (t == NULL)
			fail_msg("missing %s", want[i].name);
		assert_int_equal(t->dtype, want[i].dt);
		assert_int_equal(t->shape[0], want[i].d0);
		assert_int_equal(t->ndim, want[i].d1 < 0 ? 1 : 2);
		if (want[i].d1 >= 0)
			assert_int_equal(t->shape[1], want[i].d1);
	}
	assert_null(ckpt_find(c, "model.layers.0.mlp.experts.0.up_proj.weight"));
	assert_null(ckpt_find(c, "model.layers.1.mlp.gate_proj.weight"));
	ckpt_close(c);
	store_close(s);
	tu_rmrf(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_list),
	    cmocka_unit_test(test_families),
	    cmocka_unit_test(test_deepseek_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
