/*
 * test_reference_cfg.c — the reference forward pass's configuration
 * (reference/cfg.c, reference/cfg_gemma.c) from config.json text alone: RoPE
 * fields, the text_config overlay, refusals, and the Gemma families' switches with transformers'
 * defaults, nulls, layer_types and transformers 5.x rope_parameters; plus the Gemma math pieces
 * (GELU tanh, soft-capping, per-layer attention); Phi-3, StarCoder2 and DeepSeek-V2
 * (reference/cfg_fam.c) and V2's router. Forward passes over
 * checkpoints are tests/test_reference.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reference/reference.h"
#include "reference/ckpt.h"
#include "reference/reference_int.h"

#define LLAMA_CFG(extra)                                                                           \
	"{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64, "                        \
	"\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "              \
	"\"intermediate_size\": 128" extra "}"

static int parse_cfg(const char *json, ref_cfg *c, wt_errbuf *err)
{
	return ref_cfg_parse_json(json, strlen(json), c, err);
}

static void test_rope_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(parse_cfg(LLAMA_CFG(""), &c, &err), WT_OK);
	assert_true(c.theta == 10000.0);
	assert_int_equal(parse_cfg(LLAMA_CFG(", \"rope_theta\": 500000.0"), &c, &err), WT_OK);
	assert_true(c.theta == 500000.0);
	/* transformers 5.x: rope_parameters, which wins over a legacy rope_theta */
	assert_int_equal(parse_cfg(LLAMA_CFG(", \"rope_parameters\": {\"rope_theta\": 250000, "
	                                     "\"rope_type\": \"default\"}"),
	                           &c, &err),
	                 WT_OK);
	assert_true(c.theta == 250000.0);
	assert_int_equal(parse_cfg(LLAMA_CFG(", \"rope_theta\": 10000.0, \"rope_parameters\": "
	                                     "{\"rope_theta\": 250000}"),
	                           &c, &err),
	                 WT_OK);
	assert_true(c.theta == 250000.0);
	assert_false(c.rope_interleave); /* DeepSeek only */
	assert_int_equal(parse_cfg(LLAMA_CFG(", \"rope_parameters\": 5"), &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "rope_parameters"));
	assert_int_equal(
	    parse_cfg(LLAMA_CFG(", \"rope_parameters\": {\"rope_theta\": \"x\"}"), &c, &err),
	    WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "rope_parameters.rope_theta"));
	assert_int_equal(parse_cfg(LLAMA_CFG(", \"rope_theta\": true"), &c, &err), WT_ECORRUPT);
	/* num_local_experts / num_experts / n_routed_experts, as the planner reads them */
	static const char q3[] =
	    "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"hidden_size\": 64, "
	    "\"num_attention_heads\": 4, \"num_hidden_layers\": 1, \"vocab_size\": 100, "
	    "\"intermediate_size\": 128, \"moe_intermediate_size\": 32, \"num_local_experts\": 8, "
	    "\"num_experts_per_tok\": 2}";
	assert_int_equal(parse_cfg(q3, &c, &err), WT_OK);
	assert_int_equal(c.E, 8);
	assert_int_equal(c.Ie, 32);
	assert_true(c.qk_norm);

	/* de-interleave: [x0 x1 x2 x3 ...] -> [x0 x2 ... | x1 x3 ...] per head */
	float x[2 * 8];
	for (int i = 0; i < 16; i++)
		x[i] = (float)i;
	ref_rope_deinterleave(x, 1, 2, 8, 16);
	static const float want[16] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};
	assert_memory_equal(x, want, sizeof(want));
}

/* The Qwen2-VL language model's fields come from text_config (transformers 5.x)
 * exactly as the planner reads them; an architecture without a reference, or a
 * required field missing, is refused naming it. */
static void test_text_config(void **state)
{
	(void)state;
	/* text_config wins over the top level, for the planner's fields and the
	 * reference's alike */
	static const char vl[] =
	    "{\"architectures\": [\"Qwen2VLForConditionalGeneration\"], \"model_type\": "
	    "\"qwen2_vl\", \"hidden_size\": 8, \"rms_norm_eps\": 0.1, \"rope_theta\": 7.0, "
	    "\"vision_config\": {\"depth\": 1, \"embed_dim\": 32, \"num_heads\": 2, "
	    "\"mlp_ratio\": 2, \"hidden_size\": 64, \"patch_size\": 2, "
	    "\"temporal_patch_size\": 2, \"spatial_merge_size\": 2, \"in_chans\": 3}, "
	    "\"text_config\": {\"hidden_size\": 64, \"num_attention_heads\": 4, "
	    "\"num_key_value_heads\": 2, \"num_hidden_layers\": 2, \"vocab_size\": 100, "
	    "\"intermediate_size\": 128, \"rms_norm_eps\": 1e-5, \"rope_theta\": 500000.0}}";
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(parse_cfg(vl, &c, &err), WT_OK);
	assert_int_equal(c.hid, 64);
	assert_int_equal(c.KV, 2);
	assert_int_equal(c.L, 2);
	assert_int_equal(c.d, 16);
	assert_true(c.eps == 1e-5);
	assert_true(c.theta == 500000.0);
	static const char bad[] = "{\"architectures\": [\"Qwen2VLForConditionalGeneration\"], "
	                          "\"text_config\": 3}";
	assert_int_equal(parse_cfg(bad, &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "text_config"));
	/* an architecture without a reference */
	static const char xlnet[] =
	    "{\"architectures\": [\"XLNetLMHeadModel\"], \"hidden_size\": 64, "
	    "\"num_attention_heads\": 4, \"num_hidden_layers\": 2, \"vocab_size\": 100}";
	assert_int_equal(parse_cfg(xlnet, &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "XLNetLMHeadModel"));
	/* whole, not cut at WT_ERRMSG_MAX (the list of every covered one was) */
	assert_non_null(strstr(err.msg, "docs/reference.md lists what it covers"));
	static const char nohid[] = "{\"architectures\": [\"LlamaForCausalLM\"]}";
	assert_int_equal(parse_cfg(nohid, &c, &err), WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "hidden_size"));
}

/* ---- Gemma families (reference/cfg_gemma.c) ---- */

#define GEMMA_CFG(arch, extra)                                                                     \
	"{\"architectures\": [\"" arch "\"], \"hidden_size\": 256, "                               \
	"\"num_attention_heads\": 4, \"num_key_value_heads\": 1, \"head_dim\": 128, "              \
	"\"num_hidden_layers\": 4, \"vocab_size\": 1000, \"intermediate_size\": 512" extra "}"
#define G1(extra) GEMMA_CFG("GemmaForCausalLM", extra)
#define G2(extra) GEMMA_CFG("Gemma2ForCausalLM", extra)
#define G3(extra) GEMMA_CFG("Gemma3ForCausalLM", extra)

static void test_gemma_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	/* Gemma: (1 + w) norms, sqrt(hidden) embeddings, GELU tanh, tied (key absent) */
	assert_int_equal(parse_cfg(G1(""), &c, &err), WT_OK);
	assert_int_equal(c.kind, REF_DENSE);
	assert_int_equal(c.gemma, 1);
	assert_true(c.tied);
	assert_int_equal(c.d, 128); /* H x head_dim = 512 != hidden 256 */
	assert_true(c.norm_off == 1.0f && c.embed_scale == 16.0f);
	assert_int_equal(c.act, REF_ACT_GELU_TANH);
	assert_false(c.sandwich || c.qk_norm);
	assert_true(c.attn_scale == 0.0 && c.attn_cap == 0.0 && c.final_cap == 0.0);
	assert_int_equal(c.window, 0);
	assert_true(c.theta == 10000.0);
	/* 4.39.3 reads hidden_activation only (null: gelu_pytorch_tanh) */
	assert_int_equal(
	    parse_cfg(G1(", \"hidden_act\": \"gelu\", \"hidden_activation\": null"), &c, &err),
	    WT_OK);
	assert_int_equal(c.act, REF_ACT_GELU_TANH);
	assert_int_equal(parse_cfg(G1(", \"hidden_activation\": \"gelu\""), &c, &err), WT_OK);
	assert_int_equal(c.act, REF_ACT_GELU);
	assert_int_equal(parse_cfg(G1(", \"hidden_activation\": \"silu\""), &c, &err),
	                 WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "silu"));
	/* Gemma 2: defaults 50 / 30 / 256 / 4096, even layers local */
	assert_int_equal(parse_cfg(G2(""), &c, &err), WT_OK);
	assert_true(c.sandwich && !c.qk_norm);
	assert_true(c.attn_cap == 50.0 && c.final_cap == 30.0 && c.attn_scale == 0.0625);
	assert_int_equal(c.window, 4096);
	assert_int_equal(c.window_pattern, 2);
	/* an explicit null disables soft-capping (transformers: None) */
	assert_int_equal(parse_cfg(G2(", \"attn_logit_softcapping\": null, "
	                              "\"final_logit_softcapping\": null, "
	                              "\"query_pre_attn_scalar\": 144, \"sliding_window\": 8"),
	                           &c, &err),
	                 WT_OK);
	assert_true(c.attn_cap == 0.0 && c.final_cap == 0.0);
	assert_true(fabs(c.attn_scale - 1.0 / 12.0) < 1e-15);
	assert_int_equal(c.window, 8);
	assert_int_equal(parse_cfg(G2(", \"final_logit_softcapping\": 0"), &c, &err),
	                 WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "final_logit_softcapping"));
	assert_int_equal(
	    parse_cfg(G2(", \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2}"), &c,
	              &err),
	    WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "rope_scaling"));
}

static void test_gemma3_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(parse_cfg(G3(", \"attn_logit_softcapping\": null, "
	                              "\"final_logit_softcapping\": null"),
	                           &c, &err),
	                 WT_OK);
	assert_int_equal(c.gemma, 3);
	assert_true(c.sandwich && c.qk_norm);
	assert_true(c.attn_cap == 0.0 && c.final_cap == 0.0 && c.attn_scale == 0.0625);
	assert_true(c.theta == 1000000.0 && c.theta_local == 10000.0);
	assert_int_equal(c.window, 4096);
	assert_int_equal(c.window_pattern, 6);
	/* Gemma3Attention never applies attn_logit_softcapping; the final cap is applied;
	 * linear scaling on the global layers only */
	assert_int_equal(
	    parse_cfg(G3(", \"attn_logit_softcapping\": 50.0, "
	                 "\"final_logit_softcapping\": 30.0, \"rope_theta\": 5e5, "
	                 "\"rope_local_base_freq\": 2e4, \"sliding_window_pattern\": 2, "
	                 "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 8}"),
	              &c, &err),
	    WT_OK);
	assert_true(c.attn_cap == 0.0 && c.final_cap == 30.0);
	double th, fa;
	ref_attn_opt o;
	ref_layer_attn(&c, 0, &th, &fa, &o); /* (0 + 1) % 2 != 0: local */
	assert_true(th == 2e4 && fa == 1.0 && o.window == 4096 && o.causal);
	assert_true(o.scale == 0.0625f && o.softcap == 0.0f);
	ref_layer_attn(&c, 1, &th, &fa, &o); /* global */
	assert_true(th == 5e5 && fa == 8.0 && o.window == 0);
	assert_int_equal(
	    parse_cfg(G3(", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 8}"), &c, &err),
	    WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "yarn"));
	/* layer_types (transformers >= 4.53) sets the pattern; a list it cannot express is refused
	 */
	assert_int_equal(parse_cfg(G3(", \"sliding_window_pattern\": 6, \"layer_types\": "
	                              "[\"sliding_attention\", \"sliding_attention\", "
	                              "\"full_attention\", \"sliding_attention\"]"),
	                           &c, &err),
	                 WT_OK);
	assert_int_equal(c.window_pattern, 3);
	assert_int_equal(parse_cfg(G3(", \"layer_types\": [\"full_attention\", "
	                              "\"sliding_attention\", \"sliding_attention\", "
	                              "\"sliding_attention\"]"),
	                           &c, &err),
	                 WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "layer_types[1]"));
	assert_int_equal(parse_cfg(G3(", \"layer_types\": [\"full_attention\"]"), &c, &err),
	                 WT_ECORRUPT);
	/* transformers 5.x: rope_parameters per layer type */
	assert_int_equal(
	    parse_cfg(
	        G3(", \"rope_parameters\": {\"full_attention\": {\"rope_type\": "
	           "\"linear\", \"factor\": 4, \"rope_theta\": 250000}, "
	           "\"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": 5000}}"),
	        &c, &err),
	    WT_OK);
	assert_true(c.theta == 250000.0 && c.theta_local == 5000.0);
	assert_true(c.rope_factor[0] == 4.0 && c.rope_factor[1] == 0.0);
}

/* GELU tanh (PyTorch's approximate='tanh'), soft-capping, sliding window. */
static void test_gemma_math(void **state)
{
	(void)state;
	const float g[3] = {1.0f, -2.0f, 0.5f}, u[3] = {1.0f, 1.0f, 2.0f};
	float out[3];
	ref_act_mul(out, g, u, 3, REF_ACT_GELU_TANH);
	/* torch.nn.functional.gelu(x, approximate='tanh') at 1, -2, 0.5 */
	assert_true(fabsf(out[0] - 0.8411920f) < 1e-6f);
	assert_true(fabsf(out[1] - -0.0454023f) < 1e-6f);
	assert_true(fabsf(out[2] - 2.0f * 0.3457140f) < 1e-6f);
	float x[2] = {30.0f, -3.0f};
	ref_softcap(x, 2, 30.0f);
	assert_true(fabsf(x[0] - 30.0f * tanhf(1.0f)) < 1e-5f);
	assert_true(fabsf(x[1] - 30.0f * tanhf(-0.1f)) < 1e-6f);
	/* window 2: token 2 sees keys 1 and 2 only; one head, d 2, v = position */
	const float q[6] = {1, 0, 1, 0, 1, 0}, k[6] = {5, 0, 0, 0, 0, 0}, v[6] = {0, 0, 1, 1, 2, 2};
	const int64_t kv_of[1] = {0};
	float att[6];
	ref_attn_opt o = {.causal = true, .window = 2};
	ref_attention(att, q, k, v, 3, 1, 1, kv_of, 2, &o);
	assert_true(fabsf(att[4] - 1.5f) < 1e-6f); /* key 0 (score 5/sqrt 2) is masked */
	o.window = 0;
	ref_attention(att, q, k, v, 3, 1, 1, kv_of, 2, &o);
	assert_true(att[4] < 0.5f);
}

/* ---- Phi-3, StarCoder2, DeepSeek-V2 (reference/cfg_fam.c) ---- */

#define FAM_CFG(arch, extra)                                                                       \
	"{\"architectures\": [\"" arch "\"], \"hidden_size\": 256, "                               \
	"\"num_attention_heads\": 8, \"num_key_value_heads\": 2, \"num_hidden_layers\": 2, "       \
	"\"vocab_size\": 1000, \"intermediate_size\": 512" extra "}"
#define PHI3(extra) FAM_CFG("Phi3ForCausalLM", extra)
#define SC2(extra)  FAM_CFG("Starcoder2ForCausalLM", extra)
#define DS2(extra)                                                                                 \
	FAM_CFG("DeepseekV2ForCausalLM",                                                           \
	        ", \"kv_lora_rank\": 64, \"q_lora_rank\": null, \"qk_nope_head_dim\": 32, "        \
	        "\"qk_rope_head_dim\": 32, \"v_head_dim\": 32, \"n_routed_experts\": 4, "          \
	        "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 128" extra)

static void test_fam_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(parse_cfg(PHI3(""), &c, &err), WT_OK);
	assert_true(c.fused_ckpt && c.eps == 1e-5 && c.rot_dim == 32 && c.n_ext == 0);
	assert_int_equal(c.act, REF_ACT_SILU);
	/* Phi-4-mini: 3/4 of each head turns; LongRoPE attention factor from the ratio */
	assert_int_equal(
	    parse_cfg(PHI3(", \"partial_rotary_factor\": 0.75, "
	                   "\"max_position_embeddings\": 131072, \"rope_scaling\": "
	                   "{\"type\": \"longrope\", \"short_factor\": [1, 1, 1, 1, 1, 1, "
	                   "1, 1, 1, 1, 1, 2], \"long_factor\": [1, 2, 3, 4, 5, 6, 7, 8, "
	                   "9, 10, 11, 12]}"),
	              &c, &err),
	    WT_OK);
	assert_int_equal(c.rot_dim, 24);
	assert_int_equal(c.n_ext, 12);
	assert_int_equal(c.rope_orig_max, 4096);
	assert_true(c.rope_ext[0][11] == 2.0f && c.rope_ext[1][11] == 12.0f);
	assert_true(fabs(c.rope_mscale - sqrt(1.0 + log(32.0) / log(4096.0))) < 1e-12);
	assert_int_equal(parse_cfg(PHI3(", \"rope_scaling\": {\"type\": \"longrope\", "
	                                "\"short_factor\": [1], \"long_factor\": [1]}"),
	                           &c, &err),
	                 WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "rope_scaling.short_factor"));
	/* Phi3Config refuses every other type (the other families: cfg_rope.c) */
	assert_int_equal(
	    parse_cfg(PHI3(", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2}"), &c, &err),
	    WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "rope_scaling type 'dynamic'"));
	/* too few rotary dims, and factors out of (0, 1] (1e300 never reaches the cast) */
	static const char *const prf[] = {PHI3(", \"partial_rotary_factor\": 0.01"),
	                                  PHI3(", \"partial_rotary_factor\": 1e300"),
	                                  PHI3(", \"partial_rotary_factor\": -2")};
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(parse_cfg(prf[k], &c, &err), WT_EUNSUPPORTED);
		assert_non_null(strstr(err.msg, "partial_rotary_factor"));
	}
	/* StarCoder2: LayerNorm (norm_epsilon), GELU tanh, tied when the key is absent */
	assert_int_equal(parse_cfg(SC2(""), &c, &err), WT_OK);
	assert_true(c.layernorm && c.plain_mlp && c.tied && c.eps == 1e-5);
	assert_int_equal(c.act, REF_ACT_GELU_TANH);
	assert_int_equal(
	    parse_cfg(SC2(", \"norm_epsilon\": 0.001, \"sliding_window\": 7"), &c, &err), WT_OK);
	assert_true(c.eps == 0.001 && c.window == 7 && c.window_pattern == 0);
	assert_int_equal(
	    parse_cfg(SC2(", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}"), &c, &err),
	    WT_OK);
	assert_true(c.rope_factor[0] == 2.0 && c.rope_factor[1] == 2.0);
	assert_int_equal(parse_cfg(SC2(", \"hidden_act\": \"relu\""), &c, &err), WT_EUNSUPPORTED);
	/* DeepSeek-V2: softmax routing, greedy by default, no renormalisation */
	assert_int_equal(parse_cfg(DS2(", \"n_group\": 2, \"topk_group\": 1"), &c, &err), WT_OK);
	assert_true(c.ds_v2 && !c.norm_topk && c.rope_interleave);
	assert_int_equal(c.n_group, 1); /* greedy ignores the groups */
	assert_int_equal(
	    parse_cfg(DS2(", \"topk_method\": \"group_limited_greedy\", \"n_group\": 2, "
	                  "\"topk_group\": 1, \"routed_scaling_factor\": 16.0"),
	              &c, &err),
	    WT_OK);
	assert_true(c.n_group == 2 && c.topk_group == 1 && c.routed_scale == 16.0);
	static const char *const refused[] = {
	    DS2(", \"norm_topk_prob\": true"),
	    DS2(", \"scoring_func\": \"sigmoid\""),
	    DS2(", \"topk_method\": \"noaux_tc\""),
	    DS2(", \"rope_scaling\": {\"type\": \"longrope\", \"factor\": 40}"),
	};
	static const char *const key[] = {"norm_topk_prob", "scoring_func", "topk_method",
	                                  "rope_scaling type 'longrope'"};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(parse_cfg(refused[i], &c, &err), WT_EUNSUPPORTED);
		assert_non_null(strstr(err.msg, key[i]));
	}
}

/* V2 routing: softmax scores; group_limited_greedy keeps the groups with the best
 * single score; weights times routed_scaling_factor, not renormalised. */
static void test_deepseek_v2_route(void **state)
{
	(void)state;
	ref_cfg c;
	memset(&c, 0, sizeof(c));
	c.kind = REF_DEEPSEEK;
	c.ds_v2 = true;
	c.E = 4;
	c.topk = 2;
	c.n_group = c.topk_group = 1;
	c.routed_scale = 2.0;
	/* group 0 = {0, 1}: best 0.9 logit; group 1 = {2, 3}: 0.8 and 0.7 */
	const float lg[4] = {0.9f, -3.0f, 0.8f, 0.7f};
	float p[4], w[2];
	int64_t idx[2];
	ref_softmax(p, lg, 4);
	ref_route_ds(&c, lg, NULL, NULL, idx, w);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 2);
	assert_true(fabsf(w[0] - 2.0f * p[0]) < 1e-6f && fabsf(w[1] - 2.0f * p[2]) < 1e-6f);
	c.n_group = 2; /* one group kept: group 0 (best 0.9 > 0.8) though group 1 sums more */
	ref_route_ds(&c, lg, NULL, NULL, idx, w);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], 1);
	assert_true(fabsf(w[1] - 2.0f * p[1]) < 1e-6f);
}

/* ---- GLM-4 (reference/cfg_fam.c) ---- */

#define GLM(arch, extra) FAM_CFG(arch, ", \"head_dim\": 64, \"partial_rotary_factor\": 0.5" extra)

static void test_glm_config(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	assert_int_equal(parse_cfg(GLM("GlmForCausalLM", ""), &c, &err), WT_OK);
	assert_true(c.glm == 1 && c.fused_gate_up && !c.fused_ckpt && !c.sandwich);
	assert_true(c.rope_pairs && c.rot_dim == 32 && c.eps == 1.5625e-07);
	assert_string_equal(ref_mlp_norm(&c), "post_attention_layernorm");
	assert_int_equal(parse_cfg(GLM("Glm4ForCausalLM", ", \"rms_norm_eps\": 1e-05"), &c, &err),
	                 WT_OK);
	assert_true(c.glm == 2 && c.sandwich && c.eps == 1e-5);
	assert_string_equal(ref_mlp_norm(&c), "post_attention_layernorm");
	assert_string_equal(ref_post_norm(&c, false), "post_self_attn_layernorm");
	assert_string_equal(ref_post_norm(&c, true), "post_mlp_layernorm");
	/* YaRN over the rotary half of the head (32 dims: 16 frequencies) */
	assert_int_equal(parse_cfg(GLM("Glm4ForCausalLM",
	                               ", \"max_position_embeddings\": 4096, \"rope_scaling\": "
	                               "{\"type\": \"yarn\", \"factor\": 4}"),
	                           &c, &err),
	                 WT_OK);
	assert_int_equal(c.n_ext, 16);
	assert_true(fabs(c.rope_mscale - (0.1 * log(4.0) + 1.0)) < 1e-12);
	/* adjacent pairs of the rotary dims: position 1 turns (x0, x1) by 1 rad and
	 * (x2, x3) by 10000^-0.5 rad; x4..x7 pass */
	ref_cfg r = {.d = 8, .rot_dim = 4, .theta = 10000.0, .rope_pairs = true};
	float x[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 5, 6, 7, 8};
	ref_rope_layer(&r, 0, x, 2, 1, 8);
	assert_true(fabsf(x[8] - cosf(1.0f)) < 1e-6f && fabsf(x[9] - sinf(1.0f)) < 1e-6f);
	assert_true(fabsf(x[10] + sinf(0.01f)) < 1e-6f && fabsf(x[11] - cosf(0.01f)) < 1e-6f);
	assert_true(x[12] == 5.0f && x[15] == 8.0f);
}

/* Values no model uses that made the logits NaN / Inf (test_config_sweep found
 * them: verify-forward then reported a FAIL) are refused naming the key. */
static void test_real_bounds(void **state)
{
	(void)state;
	ref_cfg c;
	wt_errbuf err = {0};
	static const char *const eps_bad[] = {
	    ", \"rms_norm_eps\": -0.5", ", \"rms_norm_eps\": -1e300", ", \"rms_norm_eps\": 1e300"};
	for (size_t i = 0; i < 3; i++) {
		char buf[1024];
		snprintf(buf, sizeof(buf), LLAMA_CFG("%s"), eps_bad[i]);
		assert_int_equal(parse_cfg(buf, &c, &err), WT_ECORRUPT);
		assert_non_null(strstr(err.msg, "rms_norm_eps"));
	}
	assert_int_equal(parse_cfg(LLAMA_CFG(", \"rms_norm_eps\": 0"), &c, &err), WT_OK);
	assert_int_equal(parse_cfg(SC2(", \"norm_epsilon\": -1"), &c, &err), WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "norm_epsilon"));
	assert_int_equal(parse_cfg(DS2(", \"routed_scaling_factor\": 16.0"), &c, &err), WT_OK);
	assert_int_equal(parse_cfg(DS2(", \"routed_scaling_factor\": 1e300"), &c, &err),
	                 WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "routed_scaling_factor"));
	assert_int_equal(parse_cfg(DS2(", \"routed_scaling_factor\": -1e300"), &c, &err),
	                 WT_ECORRUPT);
	assert_int_equal(parse_cfg(G2(""), &c, &err), WT_OK);
	assert_true(c.attn_cap == 50.0 && c.final_cap == 30.0);
	assert_int_equal(parse_cfg(G2(", \"attn_logit_softcapping\": 1e300"), &c, &err),
	                 WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "attn_logit_softcapping"));
	assert_int_equal(parse_cfg(G2(", \"final_logit_softcapping\": 1e300"), &c, &err),
	                 WT_ECORRUPT);
	assert_non_null(strstr(err.msg, "final_logit_softcapping"));
	/* scales whose inverse overflows float (the hostile-config sweep's 1e-300: the
	 * reference ran and gave inf) */
	assert_int_equal(parse_cfg(G2(", \"query_pre_attn_scalar\": 1e-300"), &c, &err),
	                 WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "query_pre_attn_scalar"));
	assert_int_equal(parse_cfg(G3(", \"query_pre_attn_scalar\": 144"), &c, &err), WT_OK);
	assert_int_equal(
	    parse_cfg(FAM_CFG("GraniteForCausalLM", ", \"logits_scaling\": 1e-300"), &c, &err),
	    WT_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "logits_scaling"));
	assert_int_equal(
	    parse_cfg(FAM_CFG("GraniteForCausalLM", ", \"logits_scaling\": 16"), &c, &err), WT_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rope_config),       cmocka_unit_test(test_text_config),
	    cmocka_unit_test(test_gemma_config),      cmocka_unit_test(test_gemma3_config),
	    cmocka_unit_test(test_gemma_math),        cmocka_unit_test(test_fam_config),
	    cmocka_unit_test(test_deepseek_v2_route), cmocka_unit_test(test_glm_config),
	    cmocka_unit_test(test_real_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
