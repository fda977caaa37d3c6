/*
 * config.c — config.json -> ckpt_config: the fields docs/format.md section 1 needs, with the
 * Hugging Face defaults documented in loader.h. Strict on types: a field that
 * is present must have the documented JSON type (null counts as absent).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/ct_int.h"
#include "loader/loader.h"

/* Integer field: absent/null -> dflt; wrong type, < min or > CONFIG_INT_MAX -> WT_ECORRUPT.
 * Every key read here is a size, a count or an index: the bound keeps the planner's sums and
 * products of them (4 * hidden_size, max_position_embeddings + 2, ...) inside int64_t. */
int config_get_int(json_t *o, const char *name, int64_t dflt, int64_t min, int64_t *out,
                   wt_errbuf *err)
{
	json_t *v = json_object_get(o, name);
	if (v == NULL || json_is_null(v)) {
		*out = dflt;
		return WT_OK;
	}
	if (!json_is_integer(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an integer", name);
	int64_t x = (int64_t)json_integer_value(v);
	if (x < min)
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' = %lld, must be >= %lld",
		                 name, (long long)x, (long long)min);
	if (x > CONFIG_INT_MAX)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: %s %lld is past 2^40: no model has such a size, count "
		    "or index; give the model's value",
		    name, (long long)x);
	*out = x;
	return WT_OK;
}

int config_read_ints(json_t *o, const char *in, const config_int_key *k, size_t n, ckpt_config *c,
                     wt_errbuf *err)
{
	if (o != NULL && !json_is_null(o) && !json_is_object(o))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an object", in);
	json_t *src = json_is_object(o) ? o : NULL; /* json_object_get(NULL): every default */
	for (size_t i = 0; i < n; i++) {
		int rv = config_get_int(src, k[i].key, k[i].dflt, 1,
		                        (int64_t *)((char *)c + k[i].off), err);
		if (rv != WT_OK) {
			if (err != NULL)
				wt_errprefix(err, "in %s", in);
			return rv;
		}
	}
	return WT_OK;
}

static int get_required(json_t *o, const char *name, int64_t *out, wt_errbuf *err)
{
	json_t *v = json_object_get(o, name);
	if (v == NULL || json_is_null(v))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: required field '%s' is missing; add it (see the "
		                 "model's original config)",
		                 name);
	return config_get_int(o, name, 0, 1, out, err);
}

int config_get_bool(json_t *o, const char *name, bool dflt, bool *out, wt_errbuf *err)
{
	json_t *v = json_object_get(o, name);
	if (v == NULL || json_is_null(v)) {
		*out = dflt;
		return WT_OK;
	}
	if (!json_is_boolean(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a boolean", name);
	*out = json_is_true(v);
	return WT_OK;
}

int config_refuse_bool(json_t *o, const char *key, bool dflt, bool bad, const char *why,
                       wt_errbuf *err)
{
	bool b = dflt;
	int rv = config_get_bool(o, key, dflt, &b, err);
	if (rv == WT_OK && b == bad)
		return wt_seterr(err, WT_EUNSUPPORTED, "config.json: %s is %s; %s", key,
		                 bad ? "true" : "false", why);
	return rv;
}

json_t *config_first_of(json_t *o, const char *const *names, const char **which)
{
	for (; *names != NULL; names++) {
		json_t *v = json_object_get(o, *names);
		if (v != NULL && !json_is_null(v)) {
			*which = *names;
			return v;
		}
	}
	return NULL;
}

int config_int_list(json_t *v, const char *name, int64_t **out, size_t *n, wt_errbuf *err)
{
	if (v == NULL || json_is_null(v))
		return WT_OK;
	if (!json_is_array(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an array", name);
	size_t k = json_array_size(v);
	if (k == 0)
		return WT_OK;
	if ((*out = calloc(k, sizeof(**out))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory for '%s'", name);
	for (size_t i = 0; i < k; i++) {
		json_t *x = json_array_get(v, i);
		json_int_t y = json_is_integer(x) ? json_integer_value(x) : 0;
		if (!json_is_integer(x) || y > CONFIG_INT_MAX || y < -CONFIG_INT_MAX)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: '%s'[%zu] is not an integer within +-2^40",
			                 name, i);
		(*out)[i] = (int64_t)y;
	}
	*n = k;
	return WT_OK;
}

/* Append the strings of array v (field `name`) to the ignore list. */
/* Append pattern p (a copy) to c's ignore list, which has room. */
static int push_ignore(ckpt_config *c, const char *p, const char *suffix, wt_errbuf *err)
{
	size_t n = strlen(p) + strlen(suffix) + 1;
	char *s = malloc(n);
	if (s == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	snprintf(s, n, "%s%s", p, suffix);
	c->quant_ignore[c->n_quant_ignore++] = s;
	return WT_OK;
}

/*
 * quantization_config's list `name` into c->quant_ignore. modules_to_not_convert
 * names modules whose whole subtree stays unquantized (transformers matches
 * its entries as prefixes of module names: gpt-oss's "model.layers.*.self_attn"
 * covers q/k/v/o), so each of its entries also gets its prefix form "P."
 * (docs/format.md section 5); ignore / ignored_layers name the modules
 * themselves.
 */
static int add_ignores(ckpt_config *c, json_t *v, const char *name, wt_errbuf *err)
{
	if (v == NULL || json_is_null(v))
		return WT_OK;
	if (!json_is_array(v))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: quantization_config.%s is not an array", name);
	size_t k = json_array_size(v);
	if (k == 0)
		return WT_OK;
	bool subtree = strcmp(name, "modules_to_not_convert") == 0;
	char **l = realloc(c->quant_ignore, (c->n_quant_ignore + 2 * k) * sizeof(*l));
	if (l == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	c->quant_ignore = l;
	for (size_t i = 0; i < k; i++) {
		json_t *s = json_array_get(v, i);
		if (!json_is_string(s))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: quantization_config.%s[%zu] is not a string",
			                 name, i);
		const char *p = json_string_value(s);
		size_t n = strlen(p);
		int rv = push_ignore(c, p, "", err);
		if (rv == WT_OK && subtree && n > 0 && p[n - 1] != '.' && strncmp(p, "re:", 3) != 0)
			rv = push_ignore(c, p, ".", err);
		if (rv != WT_OK)
			return rv;
	}
	return WT_OK;
}

/*
 * fbgemm_fp8 (FbgemmFp8Config): modules_to_not_convert verbatim into c->quant_keep
 * (transformers matches them against module names its own way: shardmap_fb_kept, not as
 * section 5 patterns); activation_scale_ub bounds the activations' dynamic per-row
 * scales, an inference setting that no weight depends on: a number or absent, else
 * WT_ECORRUPT, and not read further.
 */
static int parse_fbgemm(json_t *q, ckpt_config *c, wt_errbuf *err)
{
	c->quant = CKPT_QUANT_FBGEMM_FP8;
	json_t *ub = json_object_get(q, "activation_scale_ub");
	if (ub != NULL && !json_is_null(ub) && !json_is_number(ub))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: quantization_config.activation_scale_ub is not a "
		                 "number");
	json_t *v = json_object_get(q, "modules_to_not_convert");
	if (v == NULL || json_is_null(v))
		return WT_OK;
	size_t k = json_is_array(v) ? json_array_size(v) : 0;
	if (!json_is_array(v) || k > CKPT_MAX_QUANT_KEEP)
		return wt_seterr(
		    err, json_is_array(v) ? WT_ETOOBIG : WT_ECORRUPT,
		    "config.json: quantization_config.modules_to_not_convert must be an "
		    "array of at most %d module names",
		    CKPT_MAX_QUANT_KEEP);
	if ((c->quant_keep = calloc(k ? k : 1, sizeof(char *))) == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	for (size_t i = 0; i < k; i++) {
		json_t *s = json_array_get(v, i);
		if (!json_is_string(s) || json_string_length(s) == 0)
			return wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: quantization_config.modules_to_not_convert[%zu] "
			    "is not a module name (a non-empty string)",
			    i);
		if ((c->quant_keep[i] = strdup(json_string_value(s))) == NULL)
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		c->n_quant_keep++;
	}
	return WT_OK;
}

/* weight_block_size [b0, b1] of an "fp8" config (block FP8), else per-tensor FP8. */
static int parse_fp8(json_t *q, ckpt_config *c, wt_errbuf *err)
{
	json_t *b = json_object_get(q, "weight_block_size");
	if (b == NULL || json_is_null(b)) {
		c->quant = CKPT_QUANT_FP8_TENSOR;
		return WT_OK;
	}
	if (!json_is_array(b) || json_array_size(b) != 2 ||
	    !json_is_integer(json_array_get(b, 0)) || !json_is_integer(json_array_get(b, 1)) ||
	    json_integer_value(json_array_get(b, 0)) <= 0 ||
	    json_integer_value(json_array_get(b, 1)) <= 0 ||
	    json_integer_value(json_array_get(b, 0)) > CKPT_MAX_QUANT_BLOCK ||
	    json_integer_value(json_array_get(b, 1)) > CKPT_MAX_QUANT_BLOCK)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: quantization_config.weight_block_size must "
		                 "be two integers in 1..%d",
		                 CKPT_MAX_QUANT_BLOCK);
	c->quant = CKPT_QUANT_FP8_BLOCK;
	c->quant_block[0] = (int64_t)json_integer_value(json_array_get(b, 0));
	c->quant_block[1] = (int64_t)json_integer_value(json_array_get(b, 1));
	return WT_OK;
}

static int parse_quant(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	c->quant = CKPT_QUANT_NONE;
	c->quant_block[0] = 128;
	c->quant_block[1] = 128;
	json_t *q = json_object_get(root, "quantization_config");
	if (q == NULL || json_is_null(q))
		return WT_OK;
	if (!json_is_object(q))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: quantization_config is not an object");
	json_t *m = json_object_get(q, "quant_method");
	if (!json_is_string(m))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: quantization_config.quant_method missing or not a "
		                 "string");
	const char *method = json_string_value(m);
	bool ct = strcmp(method, "compressed-tensors") == 0;
	bool mx = strcmp(method, "mxfp4") == 0, fb = strcmp(method, "fbgemm_fp8") == 0;
	if (!ct && !mx && !fb && strcmp(method, "fp8") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: quant_method '%s' is not supported; only 'fp8' "
		                 "(block or per-tensor), 'fbgemm_fp8' (per channel), "
		                 "'compressed-tensors' (int8 channel, int4 group, fp8 channel) and "
		                 "'mxfp4' (GPT-OSS experts) checkpoints are read",
		                 method);
	int rv = WT_OK;
	if (ct)
		rv = ckpt_ct_parse_quant(q, c, err);
	else if (mx)
		c->quant = CKPT_QUANT_MXFP4;
	else if (fb)
		rv = parse_fbgemm(q, c, err);
	else
		rv = parse_fp8(q, c, err);
	/* fbgemm_fp8's modules_to_not_convert went to quant_keep */
	static const char *const lists[] = {"ignore", "ignored_layers", "modules_to_not_convert"};
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]) - fb && rv == WT_OK; i++)
		rv = add_ignores(c, json_object_get(q, lists[i]), lists[i], err);
	return rv;
}

static int parse_arch(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *a = json_object_get(root, "architectures");
	if (a == NULL || json_is_null(a))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: required field 'architectures' is missing; add "
		                 "e.g. [\"LlamaForCausalLM\"]");
	if (!json_is_array(a) || json_array_size(a) == 0 || !json_is_string(json_array_get(a, 0)))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: 'architectures' must be a non-empty array of strings");
	json_t *mt = json_object_get(root, "model_type");
	if (mt != NULL && !json_is_null(mt) && !json_is_string(mt))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'model_type' is not a string");
	c->architecture = strdup(json_string_value(json_array_get(a, 0)));
	c->model_type = strdup(json_is_string(mt) ? json_string_value(mt) : "");
	if (c->architecture == NULL || c->model_type == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

static int parse_moe(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	/* ERNIE 4.5 MoE: moe_num_experts (Ernie4_5_MoeConfig maps num_experts onto it) */
	static const char *const expert_keys[] = {"num_local_experts", "num_experts",
	                                          "n_routed_experts", "moe_num_experts", NULL};
	const char *which = "num_experts";
	json_t *ne = config_first_of(root, expert_keys, &which);
	int rv = ne ? config_get_int(root, which, 0, 0, &c->num_experts, err) : WT_OK;
	if (rv == WT_OK)
		rv = config_get_int(root, "moe_intermediate_size", -1, 1, &c->moe_intermediate_size,
		                    err);
	if (rv == WT_OK && c->moe_intermediate_size < 0 && c->num_experts > 0)
		c->moe_intermediate_size = c->intermediate_size; /* Mixtral */
	/* Qwen2-MoE's key, else GraniteMoeShared's shared_intermediate_size (0: no shared MLP) */
	static const char *const shared_keys[] = {"shared_expert_intermediate_size",
	                                          "shared_intermediate_size", NULL};
	const char *shared = shared_keys[0];
	config_first_of(root, shared_keys, &shared);
	if (rv == WT_OK)
		rv = config_get_int(root, shared, -1, 0, &c->shared_expert_intermediate_size, err);
	/* DeepSeek's n_shared_experts, else ERNIE 4.5's moe_num_shared_experts */
	static const char *const nshared_keys[] = {"n_shared_experts", "moe_num_shared_experts",
	                                           NULL};
	const char *nshared = nshared_keys[0];
	config_first_of(root, nshared_keys, &nshared);
	if (rv == WT_OK)
		rv = config_get_int(root, nshared, 0, 0, &c->n_shared_experts, err);
	if (rv == WT_OK)
		rv =
		    config_get_int(root, "decoder_sparse_step", 1, 1, &c->decoder_sparse_step, err);
	if (rv == WT_OK)
		rv = config_int_list(json_object_get(root, "mlp_only_layers"), "mlp_only_layers",
		                     &c->mlp_only_layers, &c->n_mlp_only_layers, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "first_k_dense_replace", 0, 0, &c->first_k_dense_replace,
		                    err);
	if (rv == WT_OK)
		rv = config_get_int(root, "moe_layer_freq", 1, 1, &c->moe_layer_freq, err);
	/* ERNIE 4.5 MoE (Ernie4_5_MoeDecoderLayer): a list (ERNIE-4.5-VL's per-modality
	 * ranges) is not an integer and refused */
	if (rv == WT_OK)
		rv = config_get_int(root, "moe_layer_start_index", 0, 0, &c->moe_layer_start_index,
		                    err);
	if (rv == WT_OK)
		rv = config_get_int(root, "moe_layer_end_index", -1, -1, &c->moe_layer_end_index,
		                    err);
	if (rv == WT_OK)
		rv = config_get_int(root, "moe_layer_interval", 1, 1, &c->moe_layer_interval, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "intermediate_size_mlp", -1, 1, &c->intermediate_size_mlp,
		                    err);
	/* Llama4TextConfig: range(step - 1, L, step); a step of 0 is range()'s error */
	if (rv == WT_OK)
		rv = config_get_int(root, "interleave_moe_layer_step", 1, 1,
		                    &c->interleave_moe_layer_step, err);
	/* Hunyuan V1 MoE: the shared MLP (mlp.shared_mlp) is intermediate_size x
	 * num_shared_expert wide when use_mixed_mlp_moe (vLLM's hunyuan_v1.py; transformers
	 * builds it always, intermediate_size wide: both absent read 1 and true) */
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "hunyuan_v1_moe") == 0) {
		int64_t ns = 1;
		bool mixed = true;
		rv = config_get_int(root, "num_shared_expert", 1, 0, &ns, err);
		if (rv == WT_OK)
			rv = config_get_bool(root, "use_mixed_mlp_moe", true, &mixed, err);
		if (rv == WT_OK && ns > 4096)
			rv = wt_seterr(
			    err, WT_ECORRUPT,
			    "config.json: num_shared_expert %lld is not a model's (at most "
			    "4096)",
			    (long long)ns);
		/* intermediate_size past 2^24 is refused by the planner's dim check */
		if (rv == WT_OK && c->intermediate_size > 0 && c->intermediate_size <= (1ll << 24))
			c->shared_expert_intermediate_size = mixed ? c->intermediate_size * ns : 0;
	}
	json_t *ml = json_object_get(root, "moe_layers");
	c->has_moe_layers = ml != NULL && !json_is_null(ml);
	if (rv == WT_OK)
		rv = config_int_list(ml, "moe_layers", &c->moe_layers, &c->n_moe_layers, err);
	return rv;
}

/* layer_types (transformers >= 4.53): an array of strings, each kept as a ckpt_layer_type
 * code; absent or null: has_layer_types false. */
static int parse_layer_types(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *v = json_object_get(root, "layer_types");
	if (v == NULL || json_is_null(v))
		return WT_OK;
	if (!json_is_array(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'layer_types' is not an array");
	size_t k = json_array_size(v);
	c->has_layer_types = true;
	if (k == 0)
		return WT_OK;
	if ((c->layer_types = calloc(k, 1)) == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory for 'layer_types'");
	c->n_layer_types = k;
	for (size_t i = 0; i < k; i++) {
		const char *t = json_string_value(json_array_get(v, i));
		if (t == NULL)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: 'layer_types'[%zu] is not a string", i);
		c->layer_types[i] = strcmp(t, "full_attention") == 0      ? CKPT_LAYER_FULL_ATTN
		                    : strcmp(t, "linear_attention") == 0  ? CKPT_LAYER_LINEAR_ATTN
		                    : strcmp(t, "sliding_attention") == 0 ? CKPT_LAYER_SLIDING_ATTN
		                    : strcmp(t, "conv") == 0              ? CKPT_LAYER_CONV
		                    : strcmp(t, "mamba") == 0             ? CKPT_LAYER_MAMBA
		                    : strcmp(t, "attention") == 0         ? CKPT_LAYER_ATTN
		                    : strcmp(t, "hybrid") == 0            ? CKPT_LAYER_HYBRID
		                    : strcmp(t, "mlp") == 0               ? CKPT_LAYER_MLP
		                    : strcmp(t, "moe") == 0               ? CKPT_LAYER_MOE
		                                                          : CKPT_LAYER_OTHER;
	}
	return WT_OK;
}

/* Qwen3-Next's linear attention (gated delta net) and its layer pattern. */
static int parse_linear_attn(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	const struct {
		const char *key;
		int64_t *out;
	} dims[] = {
	    {"linear_num_key_heads", &c->lin_num_k_heads},
	    {"linear_num_value_heads", &c->lin_num_v_heads},
	    {"linear_key_head_dim", &c->lin_k_head_dim},
	    {"linear_value_head_dim", &c->lin_v_head_dim},
	    {"linear_conv_kernel_dim", &c->lin_conv_kernel},
	    /* Qwen3NextConfig: layer i is full attention iff (i + 1) % interval == 0 */
	    {"full_attention_interval", &c->full_attention_interval},
	};
	int rv = WT_OK;
	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]) && rv == WT_OK; i++)
		rv = config_get_int(root, dims[i].key, -1, 1, dims[i].out, err);
	return rv == WT_OK ? parse_layer_types(root, c, err) : rv;
}

/* Real field > 0: absent/null -> dflt; wrong type or <= 0 -> WT_ECORRUPT. */
int config_get_pos_real(json_t *o, const char *name, double dflt, double *out, wt_errbuf *err)
{
	json_t *v = json_object_get(o, name);
	if (v == NULL || json_is_null(v)) {
		*out = dflt;
		return WT_OK;
	}
	if (!json_is_number(v) || !(json_number_value(v) > 0.0))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' must be a positive number",
		                 name);
	*out = json_number_value(v);
	return WT_OK;
}

/* The keys one model_type's config class alone has (LFM2, Mamba, Bamba, Falcon-H1, Jamba,
 * LongCat-Flash, OPT, Falcon, InternLM2, RoBERTa, ModernBERT, MiniMax-M2); the fields of the others
 * keep their unset values. */
static int parse_class_fields(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = WT_OK;
	if (rv == WT_OK && c->model_type != NULL &&
	    (strcmp(c->model_type, "lfm2") == 0 || strcmp(c->model_type, "lfm2_vl") == 0 ||
	     strcmp(c->model_type, "lfm2-vl") == 0)) /* LFM2-VL: its text_config's */
		rv = config_parse_lfm2(root, c, err);
	c->lfm2_expert_bias = false;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "lfm2_moe") == 0)
		rv = config_parse_lfm2_moe(root, c, err);
	if (rv == WT_OK)
		rv = config_parse_mamba(root, c, err);
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "bamba") == 0)
		rv = config_parse_bamba(root, c, err);
	c->mamba_d_ssm = -1;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "falcon_h1") == 0)
		rv = config_parse_falcon_h1(root, c, err);
	if (rv == WT_OK && c->model_type != NULL &&
	    (strcmp(c->model_type, "nemotron_h") == 0 || strcmp(c->model_type, "plamo2") == 0))
		rv = config_get_int(root, "mamba_d_ssm", -1, 1, &c->mamba_d_ssm, err); /* set */
	c->jamba_attn_period = c->jamba_attn_offset = -1;
	c->jamba_expert_period = c->jamba_expert_offset = c->mamba_dt_rank = -1;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "jamba") == 0)
		rv = config_parse_jamba(root, c, err);
	c->opt_word_embed_proj_dim = c->opt_max_pos = -1;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "longcat_flash") == 0)
		rv = config_parse_longcat(root, c, err);
	if (rv == WT_OK && c->model_type != NULL &&
	    (strcmp(c->model_type, "mamba") == 0 || strcmp(c->model_type, "falcon_mamba") == 0 ||
	     strcmp(c->model_type, "plamo2") == 0)) /* PLaMo 2: config_plamo2.c's */
		rv = config_parse_dt_rank(root, c, err);
	if (rv == WT_OK && c->model_type != NULL &&
	    (strcmp(c->model_type, "opt") == 0 ||
	     strcmp(c->model_type, "blip-2") == 0)) /* BLIP-2: its text_config's */
		rv = config_parse_opt(root, c, err);
	if (rv == WT_OK && c->model_type != NULL &&
	    (strcmp(c->model_type, "falcon") == 0 || config_is_rw(c->model_type)))
		rv = config_parse_falcon(root, c, err); /* RWConfig's too (RWForCausalLM) */
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "internlm2") == 0)
		rv = config_parse_internlm2(root, c, err);
	c->rob_max_pos = c->rob_types = c->rob_pad = c->rob_num_labels = -1;
	if (rv == WT_OK && config_is_roberta(c->model_type))
		rv = config_parse_roberta(root, c, err);
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "nomic_bert") == 0)
		rv = config_get_int(root, "type_vocab_size", 2, 1, &c->rob_types, err); /* Nomic */
	if (rv == WT_OK && c->model_type != NULL &&
	    (strcmp(c->model_type, "new") == 0 || strcmp(c->model_type, "gte") == 0)) /* GTE */
		rv = config_parse_gte_new(root, c, err);
	if (rv == WT_OK && config_is_bert_head(c->architecture))
		rv = config_parse_bert_head(root, c, err);
	c->cls_from_token = false;
	if (rv == WT_OK && config_is_seqcls(c->architecture))
		rv = config_parse_seqcls(root, c, err);
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "chameleon") == 0)
		rv = config_parse_chameleon(root, c, err);
	c->mb_every = c->mb_local = -1;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "modernbert") == 0)
		rv = config_parse_modernbert(root, c, err);
	c->z2_mem_blocks = c->z2_adapter_rank = -1;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "zamba2") == 0)
		rv = config_parse_zamba2(root, c, err);
	c->g3n_altup = c->g3n_active = c->g3n_laurel = c->g3n_ple = c->g3n_ple_vocab = -1;
	c->g3n_kv_shared = -1;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "gemma3n_text") == 0)
		rv = config_parse_gemma3n(root, c, err);
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "minimax_m2") == 0)
		rv = config_parse_minimax_m2(root, c, err);
	c->jais_wpe = false;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "jais") == 0)
		rv = config_parse_jais(root, c, err);
	c->arctic_residual = false;
	c->arctic_moe_freq = 2;
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "arctic") == 0)
		rv = config_parse_arctic(root, c, err);
	if (rv == WT_OK && c->model_type != NULL && strcmp(c->model_type, "grok-1") == 0)
		rv = config_parse_grok1(root, c, err);
	return rv;
}

static int parse_fields(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	int rv = get_required(root, "hidden_size", &c->hidden_size, err);
	if (rv == WT_OK)
		rv = get_required(root, "num_attention_heads", &c->num_attention_heads, err);
	if (rv == WT_OK)
		rv = get_required(root, "num_hidden_layers", &c->num_hidden_layers, err);
	if (rv == WT_OK)
		rv = get_required(root, "vocab_size", &c->vocab_size, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "num_key_value_heads", c->num_attention_heads, 1,
		                    &c->num_key_value_heads, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "head_dim", c->hidden_size / c->num_attention_heads, 1,
		                    &c->head_dim, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "intermediate_size", -1, 1, &c->intermediate_size, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "tie_word_embeddings", false, &c->tie_word_embeddings,
		                     err);
	if (rv == WT_OK) {
		json_t *tie = json_object_get(root, "tie_word_embeddings");
		c->tie_given = tie != NULL && !json_is_null(tie);
	}
	if (rv == WT_OK)
		rv = config_get_bool(root, "lm_head_bias", false, &c->lm_head_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "use_qk_norm", false, &c->use_qk_norm, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "use_bias", false, &c->use_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "use_cla", false, &c->use_cla, err);
	bool ps = c->model_type != NULL &&
	          (strcmp(c->model_type, "persimmon") == 0 || strcmp(c->model_type, "fuyu") == 0);
	if (rv == WT_OK && (ps || (c->model_type != NULL && strcmp(c->model_type, "phi") == 0)))
		rv = config_get_bool(root, "qk_layernorm", false, &c->qk_layernorm, err);
	if (rv == WT_OK && ps)
		rv = config_persimmon_eps(root, c->qk_layernorm, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "attention_bias", false, &c->attention_bias, err);
	if (rv == WT_OK && c->model_type != NULL &&
	    (strcmp(c->model_type, "stablelm") == 0 ||
	     strcmp(c->model_type, "stablelm_epoch") == 0)) {
		rv = config_get_bool(root, "qk_layernorm", false, &c->qk_layernorm, err);
		if (rv == WT_OK)
			rv = config_get_bool(root, "use_parallel_residual", false,
			                     &c->use_parallel_residual, err);
		if (rv == WT_OK) /* q/k/v biases: StableLmAttention's bias=use_qkv_bias */
			rv = config_get_bool(root, "use_qkv_bias", false, &c->attention_bias, err);
	}
	if (rv == WT_OK)
		rv =
		    config_get_bool(root, "attention_out_bias", false, &c->attention_out_bias, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "mlp_bias", false, &c->mlp_bias, err);
	if (rv == WT_OK)
		rv = config_pangu_flags(root, c, err);
	if (rv == WT_OK)
		rv = parse_moe(root, c, err);
	if (rv == WT_OK)
		rv = parse_linear_attn(root, c, err);
	if (rv == WT_OK)
		rv = parse_class_fields(root, c, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "q_lora_rank", -1, 1, &c->q_lora_rank, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "kv_lora_rank", -1, 1, &c->kv_lora_rank, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "qk_nope_head_dim", -1, 0, &c->qk_nope_head_dim, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "qk_rope_head_dim", -1, 0, &c->qk_rope_head_dim, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "v_head_dim", -1, 1, &c->v_head_dim, err);
	if (rv == WT_OK)
		rv = config_parse_mrope(root, c, err);
	json_t *prf = json_object_get(root, "partial_rotary_factor");
	c->partial_rotary_factor = prf == NULL || json_is_null(prf) ? 0.0
	                           : json_is_number(prf) && json_number_value(prf) > 0.0
	                               ? json_number_value(prf)
	                               : -1.0;
	return rv;
}

static int parse_all(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	json_t *lm = NULL;
	int rv = config_lm_view(root, &lm, err);
	if (rv != WT_OK)
		return rv;
	rv = parse_arch(root, c, err);
	if (rv == WT_OK)
		rv = parse_fields(lm, c, err);
	if (rv == WT_OK && config_is_clip(root))
		rv = config_parse_clip(root, lm, c, err);
	if (rv == WT_OK && config_is_siglip(root))
		rv = config_parse_siglip(root, lm, c, err);
	if (rv == WT_OK)
		rv = parse_quant(root, c, err);
	if (rv == WT_OK)
		rv = config_parse_vision(root, c, err);
	if (rv == WT_OK && (rv = config_parse_audio(root, c, err)) == WT_OK)
		rv = config_parse_drafts(root, lm, c, err); /* drafts: config_drafts.c, _mtp.c */
	json_decref(lm);
	return rv;
}

int ckpt_config_parse(const char *json, size_t len, ckpt_config *out, wt_errbuf *err)
{
	memset(out, 0, sizeof(*out));
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return wt_seterr(
		    err, json_error_code(&je) == json_error_duplicate_key ? WT_EDUP : WT_ECORRUPT,
		    "config.json: not valid JSON: %s at line %d column %d", je.text, je.line,
		    je.column);
	ckpt_config c = {0};
	json_t *flat = NULL; /* Omni's thinker_config, Tarsier2's text_config (config_flat_root) */
	int rv = !json_is_object(root)
	             ? wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object")
	             : config_flat_root(root, &flat, err);
	if (rv == WT_OK)
		rv = parse_all(flat != NULL ? flat : root, &c, err);
	json_decref(flat);
	json_decref(root);
	if (rv != WT_OK) {
		ckpt_config_clear(&c);
		return rv;
	}
	*out = c;
	return WT_OK;
}

void ckpt_config_clear(ckpt_config *c)
{
	if (c == NULL)
		return;
	free(c->architecture);
	free(c->model_type);
	free(c->mlp_only_layers);
	free(c->moe_layers);
	free(c->deepstack);
	free(c->layer_types);
	free(c->full_attn_idxs);
	for (size_t i = 0; i < c->n_quant_ignore; i++)
		free(c->quant_ignore[i]);
	free(c->quant_ignore);
	for (size_t i = 0; i < c->n_quant_keep; i++)
		free(c->quant_keep[i]);
	free(c->quant_keep);
	memset(c, 0, sizeof(*c));
}
