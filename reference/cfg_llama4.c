/*
 * cfg_llama4.c — Llama 4 (Llama4ForCausalLM, and the language model of
 * Llama4ForConditionalGeneration, whose text_config the field readers lay over the
 * top level): the config.json fields only the reference reads, with Llama4TextConfig's
 * defaults (transformers 4.54.1, configuration_llama4.py). The sizes and MoE layers come
 * from the loader's parse as the planner reads them (ckpt.c llama4_dims); the math is in
 * llama4.c.
 *
 *   key                      default (Llama4TextConfig)   what the reference does
 *   rms_norm_eps             1e-5                         RMSNorms and the L2 q/k norm
 *   rope_theta               500000                       RoPE base (adjacent pairs)
 *   rope_scaling             null: plain RoPE             any object is llama3, as
 *                                                         Llama4TextRotaryEmbedding reads
 *                                                         it; another type is refused
 *   no_rope_layers           absent or []: layer i uses   1 / true: RoPE (and the qk
 *                            RoPE iff (i + 1) %           norm); 0 / false: NoPE (and the
 *                            no_rope_layer_interval != 0  temperature)
 *   no_rope_layer_interval   4                            the default list
 *   layer_types              chunked_attention on RoPE    chunked: the chunked causal
 *                            layers, full_attention on    mask; full: causal
 *                            NoPE layers
 *   attention_chunk_size     8192                         chunk of the chunked layers
 *                                                         (null refused when one is)
 *   use_qk_norm              true                         L2 norm of q, k on RoPE layers
 *   attn_temperature_tuning  true                         q times log(floor((pos + 1) /
 *   floor_scale              8192                         floor_scale) + 1) * attn_scale
 *   attn_scale               0.1                          + 1 on NoPE layers
 *   num_experts_per_tok      1                            top-k of the router
 *   hidden_act               silu                         the MLPs' and experts' gate
 *   head_dim                 the loader's (hidden / heads when absent; Llama4TextConfig
 *                            says 128: configs that omit it differ, released ones give it)
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum {
	F_EPS,
	F_THETA,
	F_RP_THETA,
	F_ACT,
	F_TOPK,
	F_TEMP,
	F_FLOOR,
	F_ASCALE,
	F_QKNORM,
	F_INTERVAL,
	F_MAX_POS,
	F_COUNT
};

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[F_COUNT] = {
	    [F_EPS] = {"rms_norm_eps", CKPT_FIELD_REAL},
	    [F_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [F_RP_THETA] = {"rope_parameters.rope_theta", CKPT_FIELD_REAL},
	    [F_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [F_TOPK] = {"num_experts_per_tok", CKPT_FIELD_INT},
	    [F_TEMP] = {"attn_temperature_tuning", CKPT_FIELD_BOOL},
	    [F_FLOOR] = {"floor_scale", CKPT_FIELD_REAL},
	    [F_ASCALE] = {"attn_scale", CKPT_FIELD_REAL},
	    [F_QKNORM] = {"use_qk_norm", CKPT_FIELD_BOOL},
	    [F_INTERVAL] = {"no_rope_layer_interval", CKPT_FIELD_INT},
	    [F_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, F_COUNT, err);
}

static void set_bit(uint64_t *m, int64_t i)
{
	m[i / 64] |= 1ull << (i % 64);
}

/* no_rope_layers into c->l4_rope: a list of L or more 0 / 1 (or booleans), or the
 * default of no_rope_layer_interval when absent, null or empty. */
static int rope_layers(json_t *root, const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	json_t *nr = ref_lm_get(root, "no_rope_layers");
	memset(c->l4_rope, 0, sizeof(c->l4_rope));
	if (nr == NULL || json_is_null(nr) || (json_is_array(nr) && json_array_size(nr) == 0)) {
		int64_t iv = f[F_INTERVAL].present ? f[F_INTERVAL].i : 4;
		if (iv < 1)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: no_rope_layer_interval %lld; it must be at "
			                 "least 1 (released models: 4)",
			                 (long long)iv);
		for (int64_t i = 0; i < c->L; i++)
			if ((i + 1) % iv != 0)
				set_bit(c->l4_rope, i);
		return WT_OK;
	}
	if (!json_is_array(nr) || (int64_t)json_array_size(nr) < c->L)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: no_rope_layers must be a list of one 0 / 1 per layer "
		    "(%lld layers)",
		    (long long)c->L);
	for (int64_t i = 0; i < c->L; i++) {
		json_t *v = json_array_get(nr, (size_t)i);
		if (!json_is_boolean(v) && !json_is_integer(v))
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: no_rope_layers entry %lld is not 0 / 1",
			                 (long long)i);
		if (json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0))
			set_bit(c->l4_rope, i);
	}
	return WT_OK;
}

/* layer_types into c->l4_chunked, or the default: chunked on the RoPE layers. */
static int layer_types(json_t *root, ref_cfg *c, wt_errbuf *err)
{
	json_t *lt = ref_lm_get(root, "layer_types");
	if (lt == NULL || json_is_null(lt)) {
		memcpy(c->l4_chunked, c->l4_rope, sizeof(c->l4_chunked));
		return WT_OK;
	}
	if (!json_is_array(lt) || (int64_t)json_array_size(lt) < c->L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types must be a list of one type per layer "
		                 "(%lld layers)",
		                 (long long)c->L);
	for (int64_t i = 0; i < c->L; i++) {
		const char *t = json_string_value(json_array_get(lt, (size_t)i));
		if (t != NULL && strcmp(t, "chunked_attention") == 0)
			set_bit(c->l4_chunked, i);
		else if (t == NULL || strcmp(t, "full_attention") != 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: layer_types entry %lld is '%s'; Llama 4 layers "
			    "are full_attention or chunked_attention",
			    (long long)i, t ? t : "not a string");
	}
	return WT_OK;
}

/* Whether some layer below L has bit set in m. */
static bool any_layer(const ref_cfg *c, const uint64_t *m, bool set)
{
	for (int64_t i = 0; i < c->L; i++)
		if (ref_l4_bit(m, i) == set)
			return true;
	return false;
}

/* attention_chunk_size when a layer is chunked: absent is 8192, null or below 1 refused
 * (transformers' create_chunked_causal_mask raises on None). */
static int chunk_size(json_t *root, ref_cfg *c, wt_errbuf *err)
{
	json_t *v = ref_lm_get(root, "attention_chunk_size");
	c->chunk = 8192;
	if (v != NULL && !json_is_null(v) && !json_is_integer(v))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'attention_chunk_size' is not an integer");
	if (json_is_integer(v))
		c->chunk = json_integer_value(v);
	if (!any_layer(c, c->l4_chunked, true))
		return WT_OK;
	if ((v != NULL && json_is_null(v)) || c->chunk < 1)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: attention_chunk_size %s; Llama 4's chunked_attention "
		    "layers need a positive chunk (released models: 8192)",
		    json_is_null(v) ? "is null" : "below 1");
	return WT_OK;
}

/* rope_scaling: Llama4TextRotaryEmbedding reads any object as llama3 (rope_type
 * "llama3" if rope_scaling is not None); an object without a type is given llama3, one
 * naming another type is refused. */
static int rope_scaling(json_t *root, ref_cfg *c, const ckpt_field *f, const char *arch,
                        wt_errbuf *err)
{
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	if (o != NULL && type == NULL && json_object_set_new(o, "rope_type", json_string("llama3")))
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	if (o != NULL && type != NULL && strcmp(type, "llama3") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s type '%s'; Llama 4's rotary embedding computes "
		                 "llama3 frequencies from any rope_scaling (the reference takes "
		                 "llama3 or no type)",
		                 key, type);
	ref_rope_in in = {arch ? arch : "Llama4ForCausalLM", c->d,
	                  f[F_MAX_POS].present ? f[F_MAX_POS].i : 131072, true};
	return ref_cfg_rope(root, &in, c, err);
}

/* Scalars, their defaults and ranges. */
static int parse_scalars(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	c->eps = f[F_EPS].present ? f[F_EPS].r : 1e-5;
	c->theta = f[F_RP_THETA].present ? f[F_RP_THETA].r
	                                 : (f[F_THETA].present ? f[F_THETA].r : 500000.0);
	c->theta_local = c->theta;
	c->rope_pairs = true; /* apply_rotary_emb: view_as_complex over (x[2i], x[2i+1]) */
	c->l2_qk_norm = f[F_QKNORM].present ? f[F_QKNORM].b : true;
	c->temp_tuning = f[F_TEMP].present ? f[F_TEMP].b : true;
	c->floor_scale = f[F_FLOOR].present ? f[F_FLOOR].r : 8192.0;
	c->temp_scale = f[F_ASCALE].present ? f[F_ASCALE].r : 0.1;
	c->topk = f[F_TOPK].present ? f[F_TOPK].i : 1;
	if (c->L > REF_L4_MAX_LAYERS)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_hidden_layers %lld; the reference's Llama 4 layer "
		    "masks hold %d (released models: 48)",
		    (long long)c->L, REF_L4_MAX_LAYERS);
	if (!(c->theta > 1.0 && c->theta < 1e300))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_theta %g; the reference needs a value above 1",
		                 c->theta);
	if (!(c->floor_scale > 0.0 && c->floor_scale < 1e300))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: floor_scale %g; it must be positive (released "
		                 "models: 8192)",
		                 c->floor_scale);
	if (!(fabs(c->temp_scale) < 1e6))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: attn_scale %g; it must be in (-1e6, 1e6) (released "
		                 "models: 0.1)",
		                 c->temp_scale);
	return ref_cfg_act(&f[F_ACT], "silu", c, err);
}

/* An MoE layer below L makes the kind REF_QWEN2_MOE (the "feed_forward." prefix of
 * ref_moe_prefix); the planner has checked num_local_experts and intermediate_size. */
static int parse_moe(ref_cfg *c, wt_errbuf *err)
{
	c->sparse_step = 1;
	c->mlp_only_mask = 0;
	c->norm_topk = false;
	if (c->E < 1 || !any_layer(c, c->l4_moe, true)) {
		c->kind = REF_DENSE;
		return WT_OK;
	}
	c->kind = REF_QWEN2_MOE;
	if (c->E > REF_MAX_EXPERTS || c->topk < 1 || c->topk > c->E || c->Ie < 1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: num_local_experts %lld, num_experts_per_tok %lld, "
		    "intermediate_size %lld; the reference needs 1 <= top-k <= experts "
		    "<= %d and a positive expert size",
		    (long long)c->E, (long long)c->topk, (long long)c->Ie, REF_MAX_EXPERTS);
	return WT_OK;
}

int ref_cfg_llama4(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[F_COUNT];
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = parse_scalars(f, c, err);
	if (rv == WT_OK)
		rv = parse_moe(c, err);
	if (rv != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	rv = rope_layers(root, f, c, err);
	if (rv == WT_OK)
		rv = layer_types(root, c, err);
	if (rv == WT_OK)
		rv = chunk_size(root, c, err);
	if (rv == WT_OK)
		rv = rope_scaling(root, c, f, arch, err);
	json_decref(root);
	return rv;
}
