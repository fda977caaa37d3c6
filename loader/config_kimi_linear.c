/*
 * config_kimi_linear.c — Kimi Linear's remote config.json (model_type kimi_linear,
 * KimiLinearForCausalLM: moonshotai/Kimi-Linear-48B-A3B-*), read as vLLM's KimiLinearConfig
 * (vllm/transformers_utils/configs/kimi_linear.py) and kimi_linear.py read it, laid onto the
 * names the kimi_linear family (shardmap/family_kimi_linear.c) reads; run over the view after
 * KimiLinearConfig's class defaults (config_defaults_more.c):
 *
 *   remote key                            read as                       vLLM
 *   linear_attn_config.kda_layers         layer_types: layer i          is_kda_layer(i):
 *     (1-based layer numbers)               "linear_attention" when      (i + 1) in kda_layers
 *                                           i + 1 is listed, else        (KimiDeltaAttention),
 *                                           "full_attention" (MLA)       else KimiMLAAttention
 *   linear_attn_config.num_heads          linear_num_key_heads and      the KDA heads
 *                                           linear_num_value_heads
 *   linear_attn_config.head_dim           linear_key_head_dim and       each head's width
 *                                           linear_value_head_dim
 *   linear_attn_config.short_conv_kernel_size  linear_conv_kernel_dim  q/k/v_conv1d's taps
 *   num_shared_experts (absent: 0)        n_shared_experts              shared_experts x
 *                                                                       moe_intermediate_size
 *   num_experts                           num_experts (the other        FusedMoE's experts
 *                                           expert-count keys dropped)
 *
 * Refused naming the key: linear_attn_config missing or not an object, kda_layers /
 * full_attn_layers missing or not lists (KimiLinearConfig asserts them), a kda_layers entry
 * that is no layer number 1 .. num_hidden_layers, num_heads / head_dim /
 * short_conv_kernel_size missing or below 1 (vLLM's get_mamba_state_shape_from_config reads
 * them for any config) (WT_ECORRUPT); with an MLA layer, q_lora_rank set (KimiMLAAttention
 * asserts None) or mla_use_nope not true (it asserts use_nope), with MoE layers num_experts 0,
 * moe_intermediate_size missing, num_shared_experts null (KimiMoE's forward then has no shared
 * output), hidden_act other than silu (KimiMLP raises), moe_router_activation_func other than
 * sigmoid / softmax (KimiLinearConfig asserts), tie_word_embeddings true (vLLM's
 * KimiLinearForCausalLM skips lm_head when tied but never ties its head to the embedding)
 * (WT_EUNSUPPORTED). The MLA sizes a layer needs are the planner's check (kl_check).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

static int refuse(wt_errbuf *err, const char *key, const char *why)
{
	return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s %s", key, why);
}

static int corrupt(wt_errbuf *err, const char *key, const char *why)
{
	return wt_seterr(err, WT_ECORRUPT, "config.json: %s %s", key, why);
}

/* linear_attn_config.NAME as a positive integer into *out. */
static int la_int(json_t *la, const char *name, int64_t *out, wt_errbuf *err)
{
	json_t *x = json_object_get(la, name);
	if (!json_is_integer(x) || json_integer_value(x) < 1)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: linear_attn_config.%s is missing or not a positive "
		    "integer; vLLM's KimiLinearForCausalLM reads it for the KDA layers' "
		    "state (Kimi-Linear-48B-A3B: num_heads 32, head_dim 128, "
		    "short_conv_kernel_size 4)",
		    name);
	*out = (int64_t)json_integer_value(x);
	return WT_OK;
}

/* kda_layers' 1-based numbers into kda[0 .. L) (true: layer i is KDA), full_attn_layers a list. */
static int la_layers(json_t *la, int64_t L, bool *kda, wt_errbuf *err)
{
	json_t *k = json_object_get(la, "kda_layers"), *f = json_object_get(la, "full_attn_layers");
	if (!json_is_array(k) || !json_is_array(f))
		return corrupt(err,
		               !json_is_array(k) ? "linear_attn_config.kda_layers"
		                                 : "linear_attn_config.full_attn_layers",
		               "is missing or not a list; KimiLinearConfig asserts both lists (the "
		               "1-based numbers of the KDA and of the MLA layers)");
	for (size_t n = 0; n < json_array_size(k); n++) {
		json_t *x = json_array_get(k, n);
		json_int_t v = json_is_integer(x) ? json_integer_value(x) : 0;
		if (v < 1 || v > L)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: linear_attn_config.kda_layers[%zu] is no layer "
			    "number 1 .. %lld (num_hidden_layers): vLLM makes layer i KDA "
			    "when i + 1 is listed; give 1-based layer numbers",
			    n, (long long)L);
		kda[v - 1] = true;
	}
	return WT_OK;
}

/* layer_types from kda, and the KDA sizes under the linear_* names, into view v. */
static int la_write(json_t *v, json_t *la, const bool *kda, int64_t L, wt_errbuf *err)
{
	static const char *const names[][2] = {
	    {"num_heads", "linear_num_key_heads"},
	    {"num_heads", "linear_num_value_heads"},
	    {"head_dim", "linear_key_head_dim"},
	    {"head_dim", "linear_value_head_dim"},
	    {"short_conv_kernel_size", "linear_conv_kernel_dim"},
	};
	int rv = WT_OK;
	for (size_t n = 0; n < sizeof(names) / sizeof(names[0]) && rv == WT_OK; n++) {
		int64_t x = 0;
		rv = la_int(la, names[n][0], &x, err);
		if (rv == WT_OK && json_object_set_new(v, names[n][1], json_integer(x)) != 0)
			rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	json_t *lt = json_array();
	for (int64_t i = 0; lt != NULL && i < L; i++)
		if (json_array_append_new(
		        lt, json_string(kda[i] ? "linear_attention" : "full_attention")) != 0) {
			json_decref(lt);
			lt = NULL;
		}
	if (rv == WT_OK && (lt == NULL || json_object_set_new(v, "layer_types", lt) != 0))
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (rv != WT_OK)
		json_decref(lt);
	return rv;
}

/* KimiMLAAttention's asserts where a layer is MLA. */
static int mla_keys(json_t *v, wt_errbuf *err)
{
	json_t *q = json_object_get(v, "q_lora_rank");
	if (q != NULL && !json_is_null(q))
		return refuse(
		    err, "q_lora_rank",
		    "is set; vLLM's KimiMLAAttention asserts q_lora_rank is None (q_proj, "
		    "no q_a_proj / q_b_proj): give null");
	if (!json_is_true(json_object_get(v, "mla_use_nope")))
		return refuse(err, "mla_use_nope",
		              "is not true; vLLM's KimiMLAAttention asserts use_nope (MLA without "
		              "RoPE, Kimi-Linear's): give true");
	return WT_OK;
}

/* The MoE keys: the expert count under num_experts alone, the shared experts' count. */
static int moe_keys(json_t *v, wt_errbuf *err)
{
	static const char *const drop[] = {"num_local_experts",
	                                   "n_routed_experts",
	                                   "moe_num_experts",
	                                   "moe_num_shared_experts",
	                                   "shared_expert_intermediate_size",
	                                   "shared_intermediate_size"};
	for (size_t n = 0; n < sizeof(drop) / sizeof(drop[0]); n++)
		json_object_del(v, drop[n]);
	json_t *e = json_object_get(v, "num_experts");
	if (e == NULL || json_is_null(e)) { /* is_moe false: KimiMLP in every layer */
		json_object_del(v, "n_shared_experts");
		return WT_OK;
	}
	if (json_is_integer(e) && json_integer_value(e) == 0)
		return refuse(err, "num_experts",
		              "is 0; vLLM's KimiDecoderLayer then builds a FusedMoE of no experts: "
		              "give null for a dense model, or the expert count");
	json_t *mi = json_object_get(v, "moe_intermediate_size");
	if (mi == NULL || json_is_null(mi))
		return corrupt(err, "moe_intermediate_size",
		               "is missing; vLLM's KimiMoE builds its experts that wide "
		               "(Kimi-Linear-48B-A3B: 1024)");
	json_t *s = json_object_get(v, "num_shared_experts");
	if (s != NULL && json_is_null(s))
		return refuse(
		    err, "num_shared_experts",
		    "is null; vLLM's KimiMoE then builds no shared_experts and its forward "
		    "fails on the missing shared output: give 0 or the count");
	int64_t ns = 0;
	int rv = config_get_int(v, "num_shared_experts", 0, 0, &ns, err);
	if (rv == WT_OK && json_object_set_new(v, "n_shared_experts", json_integer(ns)) != 0)
		rv = wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return rv;
}

/* hidden_act, the router's scoring, the tie. */
static int other_keys(json_t *v, wt_errbuf *err)
{
	json_t *a = json_object_get(v, "hidden_act");
	if (a != NULL && !json_is_null(a) &&
	    (!json_is_string(a) || strcmp(json_string_value(a), "silu") != 0))
		return refuse(err, "hidden_act",
		              "is not silu; vLLM's KimiMLP and KimiMoE raise on any other: give "
		              "\"silu\"");
	json_t *r = json_object_get(v, "moe_router_activation_func");
	if (r != NULL && !json_is_null(r) &&
	    (!json_is_string(r) || (strcmp(json_string_value(r), "sigmoid") != 0 &&
	                            strcmp(json_string_value(r), "softmax") != 0)))
		return refuse(
		    err, "moe_router_activation_func",
		    "is neither sigmoid nor softmax, the two KimiLinearConfig asserts: give "
		    "\"sigmoid\" (Kimi-Linear's)");
	return config_refuse_bool(v, "tie_word_embeddings", false, true,
	                          "vLLM's KimiLinearForCausalLM skips lm_head when tied but never "
	                          "ties its ParallelLMHead to embed_tokens: give false and "
	                          "lm_head.weight",
	                          err);
}

int config_kimi_linear_keys(json_t *v, wt_errbuf *err)
{
	int64_t L = 0;
	int rv = config_get_int(v, "num_hidden_layers", 32, 1, &L, err);
	json_t *la = json_object_get(v, "linear_attn_config");
	if (rv == WT_OK && !json_is_object(la))
		return corrupt(
		    err, "linear_attn_config",
		    "is missing or not an object; vLLM's KimiLinearForCausalLM reads its "
		    "kda_layers, num_heads, head_dim and short_conv_kernel_size: give it");
	if (rv == WT_OK && L > (1 << 20))
		return corrupt(err, "num_hidden_layers", "is not a model's (at most 2^20)");
	bool *kda = rv == WT_OK ? calloc((size_t)L, sizeof(bool)) : NULL;
	if (rv == WT_OK && kda == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (rv == WT_OK)
		rv = la_layers(la, L, kda, err);
	if (rv == WT_OK)
		rv = la_write(v, la, kda, L, err);
	bool mla = false;
	for (int64_t i = 0; rv == WT_OK && i < L; i++)
		mla = mla || !kda[i];
	free(kda);
	if (rv == WT_OK && mla)
		rv = mla_keys(v, err);
	if (rv == WT_OK)
		rv = moe_keys(v, err);
	return rv == WT_OK ? other_keys(v, err) : rv;
}
