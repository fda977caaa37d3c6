/*
 * config_mistral_ml3.c — Mistral-Large-3 in Mistral's native format (docs/format.md "Mistral
 * native format"): a params.json with multi-head latent attention (qk_nope_head_dim) and a
 * `moe` with shared experts is, as vLLM's configs/mistral.py adapts it, a DeepSeek-V3 model
 * (model_type deepseek_v3) of architecture MistralLarge3ForCausalLM, which vLLM's
 * mistral_large_3.py loads under Mistral's names renamed to DeepSeek-V3's (no weight permute).
 * The dense keys are config_mistral.c's; here the rest:
 *
 *   params.json                   config.json              rule
 *   q_lora_rank                   q_lora_rank              required (the names have no wq)
 *   kv_lora_rank                  kv_lora_rank             required
 *   qk_nope_head_dim              qk_nope_head_dim         required
 *   qk_rope_head_dim              qk_rope_head_dim         required, even
 *   v_head_dim                    v_head_dim               required   (all 1 .. 2^31-1)
 *   moe.num_experts               n_routed_experts         required
 *   moe.num_experts_per_tok       num_experts_per_tok      required, <= num_experts
 *   moe.expert_hidden_dim         moe_intermediate_size    required
 *   moe.num_shared_experts        n_shared_experts         required, >= 1 (0: Mixtral, refused)
 *   moe.first_k_dense_replace     first_k_dense_replace    required, 0 .. n_layers
 *   moe.route_every_n             moe_layer_freq           default 1
 *   moe.routed_scale              routed_scaling_factor    default 1.0, finite, > 0
 *   moe.num_expert_groups         n_group                  default 1, divides num_experts
 *   moe.num_expert_groups_per_tok topk_group               default 1, <= n_group
 *   moe.use_load_balancing_bias   (none)                   false only (vLLM builds no bias)
 *   moe.renorm_strategy           (none)                   "WEIGHTS" only
 *   llama_4_scaling               llama_4_scaling          required (vLLM asserts it):
 *     .original_max_position_embeddings                    1 .. 2^31-1
 *     .beta                                                finite, >= 0
 *   yarn                          rope_scaling             optional: rope_type yarn,
 *     .factor -> factor (finite, >= 1), .original_max_position_embeddings (1 .. 2^31-1),
 *     .beta -> beta_fast, .alpha -> beta_slow (finite, > 0), .apply_scale (boolean; false:
 *     attention_factor 1.0), mscale_all_dim 1 (as vLLM writes rope_parameters) and mscale 1
 *     (vLLM's deepseek_yarn default, written so transformers' YaRN derives the same factor)
 * with topk_method null, norm_topk_prob true and scoring_func "softmax" (configs/mistral.py's
 * _remap_moe_args). Any other key, in params.json, moe, llama_4_scaling or yarn, is refused
 * naming it; sliding_window too (DeepSeek-V3 has none).
 *
 *   Mistral name (layers.{i}.)            DeepSeek-V3 name (model.layers.{i}.)
 *   attention_norm / ffn_norm             input_layernorm / post_attention_layernorm
 *   attention.wq_a / q_a_norm / wq_b      self_attn.q_a_proj / q_a_layernorm / q_b_proj
 *   attention.wkv_a_with_mqa / kv_a_norm  self_attn.kv_a_proj_with_mqa / kv_a_layernorm
 *   attention.wkv_b / wo                  self_attn.kv_b_proj / o_proj
 *   feed_forward.w1 / w2 / w3             mlp.gate_proj / down_proj / up_proj
 *   gate                                  mlp.gate
 *   shared_experts.w1 / w2 / w3           mlp.shared_experts.gate_proj / down_proj / up_proj
 *   experts.{j}.w1 / w2 / w3              mlp.experts.{j}.gate_proj / down_proj / up_proj
 * (.weight on each; j below num_experts) and tok_embeddings / norm / output as the dense ones.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "loader/ckpt_int.h"

#define P   "params.json"
#define FIX "convert the checkpoint to transformers' DeepSeek-V3 format, or fix params.json"

/* params.json keys of the MLA + MoE model, beyond the dense ones. */
static const char *const ml3_keys[] = {
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim",  "moe",          "llama_4_scaling",  "yarn",
};

bool ckpt_mistral_ml3_key(const char *k)
{
	for (size_t i = 0; i < sizeof(ml3_keys) / sizeof(ml3_keys[0]); i++)
		if (strcmp(k, ml3_keys[i]) == 0)
			return true;
	return false;
}

bool ckpt_mistral_ml3_wanted(json_t *root)
{
	json_t *nope = json_object_get(root, "qk_nope_head_dim");
	return nope != NULL && !json_is_null(nope);
}

/* Integer obj.key (where names the object) into *out: lo .. 2^31-1; def when absent (def <
 * lo: required). */
static int iget(json_t *obj, const char *where, const char *key, int64_t lo, int64_t def,
                int64_t *out, wt_errbuf *err)
{
	json_t *v = json_object_get(obj, key);
	if (v == NULL || json_is_null(v)) {
		if (def < lo)
			return wt_seterr(err, WT_ECORRUPT, P ": '%s%s' is required", where, key);
		*out = def;
		return WT_OK;
	}
	if (!json_is_integer(v))
		return wt_seterr(err, WT_ECORRUPT, P ": '%s%s' must be an integer", where, key);
	json_int_t n = json_integer_value(v);
	if (n < lo || n > INT32_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 P ": '%s%s' is %" JSON_INTEGER_FORMAT "; it must be %" PRId64
		                   " .. 2147483647",
		                 where, key, n, lo);
	*out = (int64_t)n;
	return WT_OK;
}

/* Finite number obj.key >= lo (> lo when strict), def when absent (NAN: required). */
static int rget(json_t *obj, const char *where, const char *key, double lo, bool strict, double def,
                double *out, wt_errbuf *err)
{
	json_t *v = json_object_get(obj, key);
	if (v == NULL || json_is_null(v)) {
		if (isnan(def))
			return wt_seterr(err, WT_ECORRUPT, P ": '%s%s' is required", where, key);
		*out = def;
		return WT_OK;
	}
	double x = json_is_number(v) ? json_number_value(v) : NAN;
	if (!json_is_number(v) || !isfinite(x) || x < lo || (strict && x == lo))
		return wt_seterr(err, WT_ECORRUPT, P ": '%s%s' must be a finite number %s %g",
		                 where, key, strict ? ">" : ">=", lo);
	*out = x;
	return WT_OK;
}

/* Every key of obj (named where) in known[0..n), else refused naming it. */
static int only_keys(json_t *obj, const char *where, const char *const *known, size_t n,
                     wt_errbuf *err)
{
	if (!json_is_object(obj))
		return wt_seterr(err, WT_ECORRUPT, P ": '%s' must be an object", where);
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v)
	{
		bool ok = false;
		for (size_t i = 0; !ok && i < n; i++)
			ok = strcmp(k, known[i]) == 0;
		if (!ok)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    P ": unknown key '%s.%s' (it may change the model's math); " FIX, where,
			    k);
	}
	return WT_OK;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static int set(json_t *o, const char *key, json_t *v, wt_errbuf *err)
{
	if (v == NULL || json_object_set_new(o, key, v) != 0)
		return wt_seterr(err, WT_ENOMEM, P ": out of memory");
	return WT_OK;
}

static int read_mla(json_t *root, json_t *o, wt_errbuf *err)
{
	static const char *const keys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
	                                   "qk_rope_head_dim", "v_head_dim"};
	int rv = WT_OK;
	for (size_t i = 0; i < N_OF(keys) && rv == WT_OK; i++) {
		int64_t x;
		rv = iget(root, "", keys[i], 1, 0, &x, err);
		if (rv == WT_OK && i == 3 && x % 2 != 0)
			rv = wt_seterr(err, WT_ECORRUPT,
			               P ": 'qk_rope_head_dim' %" PRId64
			                 " is odd; RoPE pairs need an "
			                 "even one",
			               x);
		if (rv == WT_OK)
			rv = set(o, keys[i], json_integer(x), err);
	}
	return rv;
}

static int moe_flags(json_t *moe, wt_errbuf *err)
{
	json_t *b = json_object_get(moe, "use_load_balancing_bias");
	if (b != NULL && !json_is_null(b) && !json_is_false(b))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 P
		                 ": 'moe.use_load_balancing_bias' is not false: vLLM's "
		                 "MistralLarge3ForCausalLM routes without a correction bias; " FIX);
	json_t *r = json_object_get(moe, "renorm_strategy");
	if (r != NULL && !json_is_null(r) &&
	    (!json_is_string(r) || strcmp(json_string_value(r), "WEIGHTS") != 0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 P ": 'moe.renorm_strategy' is not \"WEIGHTS\" (vLLM renormalises "
		                   "the top-k weights); " FIX);
	return WT_OK;
}

static int read_moe(json_t *root, json_t *o, int64_t layers, int64_t *experts, wt_errbuf *err)
{
	static const char *const known[] = {"num_experts",
	                                    "num_experts_per_tok",
	                                    "expert_hidden_dim",
	                                    "num_shared_experts",
	                                    "first_k_dense_replace",
	                                    "route_every_n",
	                                    "routed_scale",
	                                    "num_expert_groups",
	                                    "num_expert_groups_per_tok",
	                                    "use_load_balancing_bias",
	                                    "renorm_strategy"};
	json_t *moe = json_object_get(root, "moe");
	int64_t e, k, ie, sh, fd, every, ng, tg;
	double scale;
	int rv = only_keys(moe, "moe", known, N_OF(known), err);
	if (rv == WT_OK)
		rv = moe_flags(moe, err);
	if (rv != WT_OK || (rv = iget(moe, "moe.", "num_experts", 1, 0, &e, err)) != WT_OK ||
	    (rv = iget(moe, "moe.", "num_experts_per_tok", 1, 0, &k, err)) != WT_OK ||
	    (rv = iget(moe, "moe.", "expert_hidden_dim", 1, 0, &ie, err)) != WT_OK ||
	    (rv = iget(moe, "moe.", "num_shared_experts", 1, 0, &sh, err)) != WT_OK ||
	    (rv = iget(moe, "moe.", "first_k_dense_replace", 0, -1, &fd, err)) != WT_OK ||
	    (rv = iget(moe, "moe.", "route_every_n", 1, 1, &every, err)) != WT_OK ||
	    (rv = iget(moe, "moe.", "num_expert_groups", 1, 1, &ng, err)) != WT_OK ||
	    (rv = iget(moe, "moe.", "num_expert_groups_per_tok", 1, 1, &tg, err)) != WT_OK ||
	    (rv = rget(moe, "moe.", "routed_scale", 0, true, 1.0, &scale, err)) != WT_OK)
		return rv;
	if (k > e || fd > layers || e % ng != 0 || tg > ng)
		return wt_seterr(err, WT_ECORRUPT,
		                 P ": moe.num_experts_per_tok %" PRId64 " of num_experts %" PRId64
		                   ", first_k_dense_replace %" PRId64 " of n_layers %" PRId64
		                   ", num_expert_groups %" PRId64
		                   ", num_expert_groups_per_tok %" PRId64
		                   ": the top-k must not pass the experts, the dense layers the "
		                   "layers, the groups must divide the experts and the groups "
		                   "per token must not pass them",
		                 k, e, fd, layers, ng, tg);
	*experts = e;
	if ((rv = set(o, "n_routed_experts", json_integer(e), err)) != WT_OK ||
	    (rv = set(o, "num_experts_per_tok", json_integer(k), err)) != WT_OK ||
	    (rv = set(o, "moe_intermediate_size", json_integer(ie), err)) != WT_OK ||
	    (rv = set(o, "n_shared_experts", json_integer(sh), err)) != WT_OK ||
	    (rv = set(o, "first_k_dense_replace", json_integer(fd), err)) != WT_OK ||
	    (rv = set(o, "moe_layer_freq", json_integer(every), err)) != WT_OK ||
	    (rv = set(o, "n_group", json_integer(ng), err)) != WT_OK ||
	    (rv = set(o, "topk_group", json_integer(tg), err)) != WT_OK ||
	    (rv = set(o, "routed_scaling_factor", json_real(scale), err)) != WT_OK ||
	    (rv = set(o, "topk_method", json_null(), err)) != WT_OK ||
	    (rv = set(o, "norm_topk_prob", json_true(), err)) != WT_OK)
		return rv;
	return set(o, "scoring_func", json_string("softmax"), err);
}

static int read_l4(json_t *root, json_t *o, wt_errbuf *err)
{
	static const char *const known[] = {"original_max_position_embeddings", "beta"};
	json_t *l4 = json_object_get(root, "llama_4_scaling");
	if (l4 == NULL || json_is_null(l4))
		return wt_seterr(err, WT_ECORRUPT,
		                 P ": 'llama_4_scaling' is required for an MLA + MoE model "
		                   "(vLLM's MistralLarge3ForCausalLM asserts it)");
	int64_t orig;
	double beta;
	int rv = only_keys(l4, "llama_4_scaling", known, N_OF(known), err);
	if (rv == WT_OK)
		rv = iget(l4, "llama_4_scaling.", "original_max_position_embeddings", 1, 0, &orig,
		          err);
	if (rv == WT_OK)
		rv = rget(l4, "llama_4_scaling.", "beta", 0, false, NAN, &beta, err);
	if (rv == WT_OK)
		rv = set(o, "llama_4_scaling",
		         json_pack("{s:I,s:f}", "original_max_position_embeddings",
		                   (json_int_t)orig, "beta", beta),
		         err);
	return rv;
}

static int read_yarn(json_t *root, json_t *o, wt_errbuf *err)
{
	static const char *const known[] = {"factor", "original_max_position_embeddings", "beta",
	                                    "alpha", "apply_scale"};
	json_t *y = json_object_get(root, "yarn");
	if (y == NULL || json_is_null(y))
		return WT_OK;
	int64_t orig;
	double factor, beta, alpha;
	int rv = only_keys(y, "yarn", known, N_OF(known), err);
	if (rv != WT_OK ||
	    (rv = rget(y, "yarn.", "factor", 1, false, NAN, &factor, err)) != WT_OK ||
	    (rv = iget(y, "yarn.", "original_max_position_embeddings", 1, 0, &orig, err)) !=
	        WT_OK ||
	    (rv = rget(y, "yarn.", "beta", 0, true, 32.0, &beta, err)) != WT_OK ||
	    (rv = rget(y, "yarn.", "alpha", 0, true, 1.0, &alpha, err)) != WT_OK)
		return rv;
	json_t *ap = json_object_get(y, "apply_scale");
	if (ap != NULL && !json_is_null(ap) && !json_is_boolean(ap))
		return wt_seterr(err, WT_ECORRUPT, P ": 'yarn.apply_scale' must be true or false");
	json_t *rs =
	    json_pack("{s:s,s:f,s:I,s:f,s:f,s:f,s:f}", "rope_type", "yarn", "factor", factor,
	              "original_max_position_embeddings", (json_int_t)orig, "beta_fast", beta,
	              "beta_slow", alpha, "mscale", 1.0, "mscale_all_dim", 1.0);
	if (rs != NULL && json_is_false(ap) &&
	    json_object_set_new(rs, "attention_factor", json_real(1.0)) != 0) {
		json_decref(rs);
		rs = NULL;
	}
	return set(o, "rope_scaling", rs, err);
}

int ckpt_mistral_ml3_config(json_t *root, json_t *o, ckpt_mistral_dims *d, wt_errbuf *err)
{
	json_t *w = json_object_get(root, "sliding_window");
	if (w != NULL && !json_is_null(w))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 P
		                 ": 'sliding_window' with multi-head latent attention: DeepSeek-V3 "
		                 "has no sliding window; " FIX);
	json_t *moe = json_object_get(root, "moe");
	if (moe == NULL || json_is_null(moe))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 P
		                 ": 'qk_nope_head_dim' (multi-head latent attention) without 'moe' "
		                 "is not read (only Mistral-Large-3's MLA + MoE); " FIX);
	int rv = read_mla(root, o, err);
	if (rv == WT_OK)
		rv = read_moe(root, o, d->layers, &d->experts, err);
	if (rv == WT_OK)
		rv = read_l4(root, o, err);
	if (rv == WT_OK)
		rv = read_yarn(root, o, err);
	if (rv == WT_OK)
		rv = set(o, "architectures", json_pack("[s]", "MistralLarge3ForCausalLM"), err);
	if (rv == WT_OK)
		rv = set(o, "model_type", json_string("deepseek_v3"), err);
	if (rv == WT_OK && json_object_del(o, "sliding_window") != 0)
		rv = wt_seterr(err, WT_ENOMEM, P ": out of memory");
	d->ml3 = rv == WT_OK;
	return rv;
}

/* Mistral suffix -> DeepSeek-V3 suffix within a layer. */
static const char *const ml3_names[][2] = {
    {"attention_norm.weight", "input_layernorm.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"attention.wq_a.weight", "self_attn.q_a_proj.weight"},
    {"attention.q_a_norm.weight", "self_attn.q_a_layernorm.weight"},
    {"attention.wq_b.weight", "self_attn.q_b_proj.weight"},
    {"attention.wkv_a_with_mqa.weight", "self_attn.kv_a_proj_with_mqa.weight"},
    {"attention.kv_a_norm.weight", "self_attn.kv_a_layernorm.weight"},
    {"attention.wkv_b.weight", "self_attn.kv_b_proj.weight"},
    {"attention.wo.weight", "self_attn.o_proj.weight"},
    {"feed_forward.w1.weight", "mlp.gate_proj.weight"},
    {"feed_forward.w2.weight", "mlp.down_proj.weight"},
    {"feed_forward.w3.weight", "mlp.up_proj.weight"},
    {"gate.weight", "mlp.gate.weight"},
    {"shared_experts.w1.weight", "mlp.shared_experts.gate_proj.weight"},
    {"shared_experts.w2.weight", "mlp.shared_experts.down_proj.weight"},
    {"shared_experts.w3.weight", "mlp.shared_experts.up_proj.weight"},
};

static const char *const ml3_expert[][2] = {
    {"w1.weight", "gate_proj.weight"},
    {"w2.weight", "down_proj.weight"},
    {"w3.weight", "up_proj.weight"},
};

/* A decimal index at *p (no sign, no leading zero, at most 10 digits) followed by '.'. */
static bool index_at(const char **p, int64_t *out)
{
	size_t nd = 0;
	int64_t v = 0;
	for (; (*p)[nd] >= '0' && (*p)[nd] <= '9' && nd < 10; nd++)
		v = v * 10 + ((*p)[nd] - '0');
	if (nd == 0 || (*p)[nd] != '.' || (nd > 1 && (*p)[0] == '0'))
		return false;
	*out = v;
	*p += nd + 1;
	return true;
}

int ckpt_mistral_ml3_layer_name(const ckpt_mistral_dims *d, const char *name, int64_t i,
                                const char *suf, char *buf, size_t cap, wt_errbuf *err)
{
	for (size_t k = 0; k < N_OF(ml3_names); k++)
		if (strcmp(suf, ml3_names[k][0]) == 0) {
			if (snprintf(buf, cap, "model.layers.%" PRId64 ".%s", i, ml3_names[k][1]) >=
			    (int)cap)
				break;
			return WT_OK;
		}
	const char *p = suf;
	int64_t j;
	if (strncmp(p, "experts.", 8) == 0 && (p += 8, index_at(&p, &j)))
		for (size_t k = 0; k < N_OF(ml3_expert); k++) {
			if (strcmp(p, ml3_expert[k][0]) != 0)
				continue;
			if (j >= d->experts)
				return wt_seterr(err, WT_EUNSUPPORTED,
				                 "tensor '%s': expert %" PRId64
				                 " is past params.json's "
				                 "moe.num_experts %" PRId64
				                 "; fix params.json or the checkpoint",
				                 name, j, d->experts);
			if (snprintf(buf, cap,
			             "model.layers.%" PRId64 ".mlp.experts.%" PRId64 ".%s", i, j,
			             ml3_expert[k][1]) >= (int)cap)
				break;
			return WT_OK;
		}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "tensor '%s': not a name of Mistral-Large-3's native format (vLLM's "
	                 "mistral_large_3.py cannot remap it); " FIX,
	                 name);
}
