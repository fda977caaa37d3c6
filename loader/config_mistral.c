/*
 * config_mistral.c — Mistral's native format (docs/format.md "Mistral native format"):
 * params.json read as the config.json of the same dense model in transformers' format, as
 * vLLM's configs/mistral.py adapts it (--config-format mistral), and the Meta tensor names
 * as vLLM's llama.py mistral_mapping renames them.
 *
 *   params.json          config.json                 rule
 *   dim                  hidden_size                 required, 1 .. 2^31-1
 *   n_layers             num_hidden_layers           required, 1 .. 2^31-1
 *   n_heads              num_attention_heads         required, 1 .. 2^31-1
 *   n_kv_heads           num_key_value_heads         default n_heads; divides n_heads
 *   head_dim             head_dim                    default dim / n_heads; even
 *   hidden_dim           intermediate_size           required, 1 .. 2^31-1
 *   vocab_size           vocab_size                  required, 1 .. 2^31-1
 *   norm_eps             rms_norm_eps                required, finite, > 0
 *   rope_theta           rope_theta                  default 10000 (Meta's), finite, > 0
 *   max_position_embeddings  max_position_embeddings default 128000 (vLLM's)
 *   max_seq_len          (read, not used)            1 .. 2^31-1
 *   tied_embeddings      tie_word_embeddings         default false
 *   sliding_window       sliding_window              null or an integer (a per-layer list:
 *                                                    refused)
 *   model_type           (architecture)              "transformer" only
 *   activation           hidden_act                  "silu" only
 *   dtype, torch_dtype   (not used)                  strings
 * and architectures ["MistralForCausalLM"], model_type "mistral". Refused with the fix
 * (convert with transformers' convert_mistral_weights_to_hf.py, or ship config.json): moe,
 * vision_encoder, multimodal, quantization, yarn, llama_4_scaling, qk_nope_head_dim and any
 * other key (it may change the model's math). A params.json with qk_nope_head_dim is
 * Mistral-Large-3 (MLA + MoE, MistralLarge3ForCausalLM): config_mistral_ml3.c reads its keys
 * and names.
 *
 *   Meta name                                 transformers name
 *   tok_embeddings.weight                     model.embed_tokens.weight
 *   norm.weight                               model.norm.weight
 *   output.weight                             lm_head.weight
 *   layers.{i}.attention.wq / wk / wv / wo    model.layers.{i}.self_attn.q / k / v / o_proj
 *   layers.{i}.attention_norm                 model.layers.{i}.input_layernorm
 *   layers.{i}.ffn_norm                       model.layers.{i}.post_attention_layernorm
 *   layers.{i}.feed_forward.w1 / w2 / w3      model.layers.{i}.mlp.gate / down / up_proj
 * (.weight on each). wq / wk keep Meta's interleaved RoPE rows (loader_mistral.h).
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "loader/ckpt_int.h"
#include "loader/mistral_ml3.h"

#define P "params.json"
#define FIX                                                                                        \
	"convert the checkpoint with transformers' convert_mistral_weights_to_hf.py, or serve "    \
	"its transformers-format release (config.json + model*.safetensors)"

/* Keys that make another model than the dense decoder read here. */
static const struct {
	const char *key, *what;
} refused[] = {
    {"moe", "a mixture-of-experts model (Mixtral, Mistral-Large-3)"},
    {"vision_encoder", "a vision encoder (Pixtral, Mistral-Small-3.1)"},
    {"multimodal", "a vision or audio encoder"},
    {"quantization", "quantized weights"},
    {"yarn", "YaRN RoPE scaling"},
    {"llama_4_scaling", "Llama-4 attention scaling"},
    {"qk_nope_head_dim", "multi-head latent attention"},
};

/* Keys read (any other is refused). */
static const char *const known[] = {
    "dim",
    "n_layers",
    "n_heads",
    "n_kv_heads",
    "head_dim",
    "hidden_dim",
    "vocab_size",
    "norm_eps",
    "rope_theta",
    "max_seq_len",
    "max_position_embeddings",
    "tied_embeddings",
    "sliding_window",
    "model_type",
    "activation",
    "dtype",
    "torch_dtype",
};

/* ml3: Mistral-Large-3's keys are read (config_mistral_ml3.c). */
static int check_keys(json_t *root, bool ml3, wt_errbuf *err)
{
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v)
	{
		if (ml3 && ckpt_mistral_ml3_key(k))
			continue;
		for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
			if (strcmp(k, refused[i].key) == 0 && !json_is_null(v))
				return wt_seterr(err, WT_EUNSUPPORTED,
				                 P ": '%s' (%s): Mistral's native format is read "
				                   "for dense models only; " FIX,
				                 k, refused[i].what);
		bool ok = false;
		for (size_t i = 0; !ok && i < sizeof(known) / sizeof(known[0]); i++)
			ok = strcmp(k, known[i]) == 0;
		for (size_t i = 0; !ok && i < sizeof(refused) / sizeof(refused[0]); i++)
			ok = strcmp(k, refused[i].key) == 0; /* null */
		if (!ok)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    P ": unknown key '%s' (it may change the model's math); " FIX, k);
	}
	return WT_OK;
}

/* Integer key: *out (def when absent or null, def < 0: required), 1 .. 2^31-1. */
static int get_int(json_t *root, const char *key, int64_t def, int64_t *out, wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if (v == NULL || json_is_null(v)) {
		if (def < 0)
			return wt_seterr(err, WT_ECORRUPT, P ": '%s' is required", key);
		*out = def;
		return WT_OK;
	}
	if (!json_is_integer(v))
		return wt_seterr(err, WT_ECORRUPT, P ": '%s' must be an integer", key);
	json_int_t n = json_integer_value(v);
	if (n < 1 || n > INT32_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 P ": '%s' is %" JSON_INTEGER_FORMAT "; it must be 1 .. 2147483647",
		                 key, n);
	*out = (int64_t)n;
	return WT_OK;
}

/* Positive finite number key (integers too): *out, def when absent (def < 0: required). */
static int get_real(json_t *root, const char *key, double def, double *out, wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if (v == NULL || json_is_null(v)) {
		if (def < 0)
			return wt_seterr(err, WT_ECORRUPT, P ": '%s' is required", key);
		*out = def;
		return WT_OK;
	}
	if (!json_is_number(v))
		return wt_seterr(err, WT_ECORRUPT, P ": '%s' must be a number", key);
	double x = json_number_value(v);
	if (!(x > 0) || !isfinite(x))
		return wt_seterr(err, WT_ECORRUPT, P ": '%s' is %g; it must be a finite number > 0",
		                 key, x);
	*out = x;
	return WT_OK;
}

/* String key that must be `want` when present; strings only for `free_form`. */
static int get_str(json_t *root, const char *key, const char *want, wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if (v == NULL || json_is_null(v))
		return WT_OK;
	if (!json_is_string(v))
		return wt_seterr(err, WT_ECORRUPT, P ": '%s' must be a string", key);
	if (want != NULL && strcmp(json_string_value(v), want) != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 P ": '%s' is \"%s\"; only \"%s\" is read; " FIX, key,
		                 json_string_value(v), want);
	return WT_OK;
}

typedef struct mparams {
	ckpt_mistral_dims d;
	int64_t dim, inter, vocab, max_pos, seq, window; /* window 0: none */
	double eps, theta;
	bool tied;
} mparams;

static int read_dims(json_t *root, mparams *m, wt_errbuf *err)
{
	int rv;
	if ((rv = get_int(root, "dim", -1, &m->dim, err)) != WT_OK ||
	    (rv = get_int(root, "n_layers", -1, &m->d.layers, err)) != WT_OK ||
	    (rv = get_int(root, "n_heads", -1, &m->d.heads, err)) != WT_OK ||
	    (rv = get_int(root, "n_kv_heads", m->d.heads, &m->d.kv_heads, err)) != WT_OK ||
	    (rv = get_int(root, "hidden_dim", -1, &m->inter, err)) != WT_OK ||
	    (rv = get_int(root, "vocab_size", -1, &m->vocab, err)) != WT_OK ||
	    (rv = get_int(root, "max_position_embeddings", 128000, &m->max_pos, err)) != WT_OK ||
	    (rv = get_int(root, "max_seq_len", 1, &m->seq, err)) != WT_OK ||
	    (rv = get_real(root, "norm_eps", -1, &m->eps, err)) != WT_OK ||
	    (rv = get_real(root, "rope_theta", 10000.0, &m->theta, err)) != WT_OK)
		return rv;
	if (m->dim % m->d.heads != 0 && json_object_get(root, "head_dim") == NULL)
		return wt_seterr(err, WT_ECORRUPT,
		                 P ": 'dim' %" PRId64 " is not a multiple of 'n_heads' %" PRId64
		                   " and there is no 'head_dim'",
		                 m->dim, m->d.heads);
	if ((rv = get_int(root, "head_dim", m->dim / m->d.heads, &m->d.head_dim, err)) != WT_OK)
		return rv;
	if (m->d.head_dim % 2 != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 P ": 'head_dim' %" PRId64 " is odd; RoPE pairs need an even one",
		                 m->d.head_dim);
	if (m->d.heads % m->d.kv_heads != 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 P ": 'n_heads' %" PRId64
		                   " is not a multiple of 'n_kv_heads' %" PRId64,
		                 m->d.heads, m->d.kv_heads);
	return WT_OK;
}

static int read_rest(json_t *root, mparams *m, wt_errbuf *err)
{
	int rv;
	if ((rv = get_str(root, "model_type", "transformer", err)) != WT_OK ||
	    (rv = get_str(root, "activation", "silu", err)) != WT_OK ||
	    (rv = get_str(root, "dtype", NULL, err)) != WT_OK ||
	    (rv = get_str(root, "torch_dtype", NULL, err)) != WT_OK)
		return rv;
	json_t *t = json_object_get(root, "tied_embeddings");
	if (t != NULL && !json_is_null(t) && !json_is_boolean(t))
		return wt_seterr(err, WT_ECORRUPT, P ": 'tied_embeddings' must be true or false");
	m->tied = t != NULL && json_is_true(t);
	json_t *w = json_object_get(root, "sliding_window");
	if (json_is_array(w))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 P ": 'sliding_window' is a per-layer list (interleaved sliding "
		                   "window) and is not read; " FIX);
	m->window = 0;
	if (w != NULL && !json_is_null(w) &&
	    (rv = get_int(root, "sliding_window", -1, &m->window, err)) != WT_OK)
		return rv;
	return WT_OK;
}

/* config.json of m (MistralForCausalLM, every key explicit). */
static json_t *hf_config(const mparams *m)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = 0;
	bad |= json_object_set_new(o, "architectures", json_pack("[s]", "MistralForCausalLM"));
	bad |= json_object_set_new(o, "model_type", json_string("mistral"));
	bad |= json_object_set_new(o, "hidden_size", json_integer(m->dim));
	bad |= json_object_set_new(o, "num_hidden_layers", json_integer(m->d.layers));
	bad |= json_object_set_new(o, "num_attention_heads", json_integer(m->d.heads));
	bad |= json_object_set_new(o, "num_key_value_heads", json_integer(m->d.kv_heads));
	bad |= json_object_set_new(o, "head_dim", json_integer(m->d.head_dim));
	bad |= json_object_set_new(o, "intermediate_size", json_integer(m->inter));
	bad |= json_object_set_new(o, "vocab_size", json_integer(m->vocab));
	bad |= json_object_set_new(o, "max_position_embeddings", json_integer(m->max_pos));
	bad |= json_object_set_new(o, "rms_norm_eps", json_real(m->eps));
	bad |= json_object_set_new(o, "rope_theta", json_real(m->theta));
	bad |= json_object_set_new(o, "tie_word_embeddings", json_boolean(m->tied));
	bad |= json_object_set_new(o, "hidden_act", json_string("silu"));
	bad |= json_object_set_new(o, "sliding_window",
	                           m->window > 0 ? json_integer(m->window) : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int ckpt_mistral_config(const char *params, size_t len, char **json, size_t *json_len,
                        ckpt_mistral_dims *d, wt_errbuf *err)
{
	*json = NULL;
	json_error_t je;
	json_t *root = json_loadb(params, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return wt_seterr(
		    err, json_error_code(&je) == json_error_duplicate_key ? WT_EDUP : WT_ECORRUPT,
		    P ": not valid JSON: %s at line %d column %d", je.text, je.line, je.column);
	mparams m = {0};
	int rv = WT_OK;
	if (!json_is_object(root))
		rv = wt_seterr(err, WT_ECORRUPT, P ": must be a JSON object");
	bool ml3 = rv == WT_OK && ckpt_mistral_ml3_wanted(root);
	if (rv == WT_OK)
		rv = check_keys(root, ml3, err);
	if (rv == WT_OK)
		rv = read_dims(root, &m, err);
	if (rv == WT_OK)
		rv = read_rest(root, &m, err);
	json_t *o = rv == WT_OK ? hf_config(&m) : NULL;
	if (rv == WT_OK && o == NULL)
		rv = wt_seterr(err, WT_ENOMEM, P ": out of memory");
	if (rv == WT_OK && ml3)
		rv = ckpt_mistral_ml3_config(root, o, &m.d, err);
	json_decref(root);
	if (rv != WT_OK) {
		json_decref(o);
		return rv;
	}
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	json_decref(o);
	if (text == NULL)
		return wt_seterr(err, WT_ENOMEM, P ": out of memory");
	*json = text;
	*json_len = strlen(text);
	*d = m.d;
	return WT_OK;
}

/* Meta suffix -> transformers suffix within a layer; heads: 1 wq, 2 wk. */
static const struct {
	const char *meta, *hf;
	int heads;
} layer_names[] = {
    {"attention.wq.weight", "self_attn.q_proj.weight", 1},
    {"attention.wk.weight", "self_attn.k_proj.weight", 2},
    {"attention.wv.weight", "self_attn.v_proj.weight", 0},
    {"attention.wo.weight", "self_attn.o_proj.weight", 0},
    {"attention_norm.weight", "input_layernorm.weight", 0},
    {"ffn_norm.weight", "post_attention_layernorm.weight", 0},
    {"feed_forward.w1.weight", "mlp.gate_proj.weight", 0},
    {"feed_forward.w2.weight", "mlp.down_proj.weight", 0},
    {"feed_forward.w3.weight", "mlp.up_proj.weight", 0},
};

static const struct {
	const char *meta, *hf;
} global_names[] = {
    {"tok_embeddings.weight", "model.embed_tokens.weight"},
    {"norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};

static int unknown(const char *name, wt_errbuf *err)
{
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "tensor '%s': not a name of Mistral's native dense format (params.json "
	                 "folder); " FIX,
	                 name);
}

int ckpt_mistral_name(const ckpt_mistral_dims *d, const char *name, char *buf, size_t cap,
                      int64_t *heads, wt_errbuf *err)
{
	*heads = 0;
	for (size_t k = 0; k < sizeof(global_names) / sizeof(global_names[0]); k++)
		if (strcmp(name, global_names[k].meta) == 0) {
			if (snprintf(buf, cap, "%s", global_names[k].hf) >= (int)cap)
				return unknown(name, err);
			return WT_OK;
		}
	if (strncmp(name, "layers.", 7) != 0)
		return unknown(name, err);
	const char *p = name + 7;
	int64_t i = 0;
	size_t nd = 0;
	for (; p[nd] >= '0' && p[nd] <= '9' && nd < 10; nd++)
		i = i * 10 + (p[nd] - '0');
	if (nd == 0 || p[nd] != '.' || (nd > 1 && p[0] == '0'))
		return unknown(name, err);
	if (i >= d->layers)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "tensor '%s': layer %" PRId64
		                 " is past params.json's n_layers %" PRId64
		                 "; fix params.json or the checkpoint",
		                 name, i, d->layers);
	const char *suf = p + nd + 1;
	if (d->ml3) /* no permute: vLLM's mistral_large_3.py renames only */
		return ckpt_mistral_ml3_layer_name(d, name, i, suf, buf, cap, err);
	for (size_t k = 0; k < sizeof(layer_names) / sizeof(layer_names[0]); k++) {
		if (strcmp(suf, layer_names[k].meta) != 0)
			continue;
		if (snprintf(buf, cap, "model.layers.%" PRId64 ".%s", i, layer_names[k].hf) >=
		    (int)cap)
			return unknown(name, err);
		*heads = layer_names[k].heads == 1   ? d->heads
		         : layer_names[k].heads == 2 ? d->kv_heads
		                                     : 0;
		return WT_OK;
	}
	return unknown(name, err);
}
