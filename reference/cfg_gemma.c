/*
 * cfg_gemma.c — the reference configuration of the Gemma families (gemma,
 * gemma2, gemma3_text): which of ref_cfg's Gemma switches each generation
 * sets, and its config.json fields with transformers' defaults.
 *
 * The math followed, per generation (transformers' modeling files):
 *
 *   Gemma (models/gemma/modeling_gemma.py of 4.39.3): every RMSNorm is
 *   x * rsqrt(mean(x^2) + eps) * (1 + w) in float32; embeddings times
 *   sqrt(hidden_size) (a float32 constant in a float32 run; transformers casts it
 *   to the hidden dtype, so a bf16 run rounds it: 55.5 for 3072, the reference
 *   does not); MLP act(gate) * up with act = hidden_activation (default
 *   gelu_pytorch_tanh; 4.39.3's GemmaMLP does not read hidden_act, 4.57 reads
 *   hidden_act instead); head_dim as given; scores q.k / sqrt(head_dim); RoPE
 *   base rope_theta.
 *
 *   Gemma 2 (modeling_gemma2.py, 4.42.4 and 4.57.1): Gemma's norms, embedding
 *   scale and activation, plus x += post_attention_layernorm(attn(
 *   input_layernorm(x))); x += post_feedforward_layernorm(mlp(
 *   pre_feedforward_layernorm(x))); scores q.k * query_pre_attn_scalar^-0.5,
 *   then attn_logit_softcapping: cap * tanh(s / cap), before the mask; logits
 *   final_logit_softcapping the same way; even layers local (sliding window:
 *   token t sees keys s with t - s < sliding_window), odd layers global.
 *
 *   Gemma 3 text (Gemma3ForCausalLM, modeling_gemma3.py, 4.50.3 and 4.57.1):
 *   Gemma 2's layer plus q_norm / k_norm (Gemma RMSNorm over head_dim) on q and
 *   k before RoPE; layer i global when (i + 1) % sliding_window_pattern == 0,
 *   else local; local layers RoPE base rope_local_base_freq without scaling,
 *   global ones rope_theta with rope_scaling (linear or none);
 *   final_logit_softcapping when not null; attn_logit_softcapping is never
 *   applied (Gemma3Attention does not pass it to its attention function).
 *
 * Checked once against transformers on float32 checkpoints it saved (tiny dims,
 * H x head_dim != hidden_size, random norm offsets): Gemma with 4.39.3, Gemma 2
 * (soft-caps set and null, window 3 and 4, default config) with 4.42.4, Gemma 3
 * (pattern 2 and 3, windows 3 and 5, linear RoPE scaling, final cap) with 4.50.3:
 * max |logit difference| <= 1.7e-6 of max |logit| for all.
 *
 *   key                       Gemma            Gemma 2             Gemma 3 text
 *   hidden_activation         gelu_pytorch_tanh (all three; also gelu_new, gelu)
 *   query_pre_attn_scalar     (1/sqrt(hd))     256 (4.42: 224)     256
 *   attn_logit_softcapping    -                50 (null: none)     never applied
 *   final_logit_softcapping   -                30 (null: none)     none
 *   sliding_window            -                4096                4096
 *   sliding_window_pattern    -                (2)                 6
 *   rope_theta                10000            10000               1000000
 *   rope_local_base_freq      -                -                   10000
 *   rope_scaling              none             none                none or linear
 *
 * A null key counts as absent (ckpt_config_fields), except Gemma 2's soft-caps,
 * where transformers reads null as "no capping": the loader's field reader cannot
 * tell null from absent, so json_facts reads that here. `layer_types`
 * (transformers >= 4.53 writes it and it wins there) sets the pattern, and
 * transformers 5.x's per-layer-type rope_parameters {full_attention,
 * sliding_attention} are read too.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum {
	G_ACT,
	G_QPAS,
	G_ATTN_CAP,
	G_FINAL_CAP,
	G_WINDOW,
	G_PATTERN,
	G_THETA,
	G_RP_THETA,
	G_LOCAL_THETA,
	G_RS_TYPE,
	G_RS_TYPE_OLD,
	G_RS_FACTOR,
	G_RP_TYPE,
	G_RP_FACTOR,
	G_COUNT
};

static int read_fields(const char *json, size_t len, ckpt_field *f, wt_errbuf *err)
{
	static const ckpt_field spec[G_COUNT] = {
	    [G_ACT] = {"hidden_activation", CKPT_FIELD_STRING},
	    [G_QPAS] = {"query_pre_attn_scalar", CKPT_FIELD_REAL},
	    [G_ATTN_CAP] = {"attn_logit_softcapping", CKPT_FIELD_REAL},
	    [G_FINAL_CAP] = {"final_logit_softcapping", CKPT_FIELD_REAL},
	    [G_WINDOW] = {"sliding_window", CKPT_FIELD_INT},
	    [G_PATTERN] = {"sliding_window_pattern", CKPT_FIELD_INT},
	    [G_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [G_RP_THETA] = {"rope_parameters.rope_theta", CKPT_FIELD_REAL},
	    [G_LOCAL_THETA] = {"rope_local_base_freq", CKPT_FIELD_REAL},
	    [G_RS_TYPE] = {"rope_scaling.rope_type", CKPT_FIELD_STRING},
	    [G_RS_TYPE_OLD] = {"rope_scaling.type", CKPT_FIELD_STRING},
	    [G_RS_FACTOR] = {"rope_scaling.factor", CKPT_FIELD_REAL},
	    [G_RP_TYPE] = {"rope_parameters.rope_type", CKPT_FIELD_STRING},
	    [G_RP_FACTOR] = {"rope_parameters.factor", CKPT_FIELD_REAL},
	};
	memcpy(f, spec, sizeof(spec)); /* keys and kinds, outputs cleared */
	return ckpt_config_fields(json, len, f, G_COUNT, err);
}

/* RoPE of one layer type: base, and "linear" scaling factor (0 = none). */
typedef struct rope_ps {
	bool present, has_theta;
	double theta, factor;
} rope_ps;

/* What ckpt_config_fields cannot say: explicit nulls, arrays, two-level keys. */
typedef struct gemma_facts {
	bool attn_cap_null, final_cap_null;
	json_t *layer_types; /* borrowed from the root; NULL when absent or null */
	rope_ps rope[2];     /* rope_parameters.full_attention / .sliding_attention */
} gemma_facts;

/* The language-model value of key: text_config's over the top level (as
 * loader/config.c lays them); NULL when absent. */
json_t *ref_cfg_root(const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
	if (root == NULL || !json_is_object(root)) { /* ckpt_config_fields took it already */
		json_decref(root);
		wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object");
		return NULL;
	}
	if (!config_is_tarsier2(root))
		return root;
	json_t *flat = NULL; /* Tarsier2: text_config's view, as the loader reads it */
	config_tarsier2_root(root, &flat, err);
	json_decref(root);
	return flat;
}

int ref_json_keys(const char *json, size_t len, int (*keys)(json_t *, wt_errbuf *), char **out,
                  size_t *out_len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	int rv = keys(root, err);
	char *s = rv == WT_OK ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	if (rv != WT_OK)
		return rv;
	if (s == NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	*out = s;
	*out_len = strlen(s);
	return WT_OK;
}

json_t *ref_lm_get(json_t *root, const char *key)
{
	json_t *tc = json_object_get(root, "text_config");
	json_t *v = json_is_object(tc) ? json_object_get(tc, key) : NULL;
	return v != NULL ? v : json_object_get(root, key);
}

/* Scaling of rope type `type` (the value of key `where`) with factor f into
 * *factor; only default and linear. */
static int rope_scaling(const char *where, const char *type, bool has_factor, double f,
                        double *factor, wt_errbuf *err)
{
	*factor = 0.0;
	if (type == NULL || strcmp(type, "default") == 0)
		return WT_OK;
	if (strcmp(type, "linear") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s '%s'; the reference has 'default' and 'linear' "
		                 "for Gemma",
		                 where, type);
	if (!has_factor || !(f > 0.0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: %s 'linear' needs a positive 'factor' beside it",
		                 where);
	*factor = f;
	return WT_OK;
}

/* rope_parameters.<name> (transformers 5.x Gemma 3) into *out. */
static int rope_type_params(json_t *rp, const char *name, rope_ps *out, wt_errbuf *err)
{
	json_t *o = json_object_get(rp, name);
	memset(out, 0, sizeof(*out));
	if (o == NULL || json_is_null(o))
		return WT_OK;
	json_t *th = json_object_get(o, "rope_theta"), *ty = json_object_get(o, "rope_type"),
	       *fa = json_object_get(o, "factor");
	th = json_is_null(th) ? NULL : th; /* null counts as absent */
	ty = json_is_null(ty) ? NULL : ty;
	fa = json_is_null(fa) ? NULL : fa;
	if (!json_is_object(o) || (th && !json_is_number(th)) || (ty && !json_is_string(ty)) ||
	    (fa && !json_is_number(fa)))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'rope_parameters.%s' is not an object with a number "
		                 "rope_theta, a string rope_type and a number factor",
		                 name);
	out->present = true;
	out->has_theta = th != NULL;
	out->theta = th ? json_number_value(th) : 0.0;
	char where[80];
	snprintf(where, sizeof(where), "rope_parameters.%s.rope_type", name);
	return rope_scaling(where, ty ? json_string_value(ty) : NULL, fa != NULL,
	                    fa ? json_number_value(fa) : 0.0, &out->factor, err);
}

int ref_layer_types(ref_cfg *c, json_t *lt, const char *fam, wt_errbuf *err)
{
	if (!json_is_array(lt) || (int64_t)json_array_size(lt) != c->L)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'layer_types' is not an array of %lld strings",
		                 (long long)c->L);
	c->window_pattern = c->L + 1;
	for (int64_t i = c->L - 1; i >= 0; i--) {
		const char *s = json_string_value(json_array_get(lt, (size_t)i));
		if (s != NULL && strcmp(s, "full_attention") == 0)
			c->window_pattern = i + 1;
	}
	for (int64_t i = 0; i < c->L; i++) {
		const char *s = json_string_value(json_array_get(lt, (size_t)i));
		const char *want =
		    (i + 1) % c->window_pattern != 0 ? "sliding_attention" : "full_attention";
		if (s == NULL || strcmp(s, want) != 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: layer_types[%lld] is '%s'; the reference runs "
			    "%s layers as 'full_attention' every %lld-th layer and "
			    "'sliding_attention' otherwise",
			    (long long)i, s ? s : "(not a string)", fam,
			    (long long)c->window_pattern);
	}
	return WT_OK;
}

int ref_layer_types_list(const ref_cfg *c, json_t *lt, wt_errbuf *err)
{
	if (!json_is_array(lt) || (int64_t)json_array_size(lt) != c->L)
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: layer_types is not a list of num_hidden_layers (%lld) "
		    "entries; give one type per layer",
		    (long long)c->L);
	return WT_OK;
}

int ref_layer_type_at(const ref_cfg *c, json_t *lt, int64_t i, bool *local, wt_errbuf *err)
{
	const char *t = json_string_value(json_array_get(lt, (size_t)i));
	*local = t != NULL && strcmp(t, "sliding_attention") == 0;
	if (!*local && (t == NULL || strcmp(t, "full_attention") != 0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types[%lld] is neither \"full_attention\" nor "
		                 "\"sliding_attention\"",
		                 (long long)i);
	if (*local && c->window == 0)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_types[%lld] is sliding_attention but "
		                 "sliding_window is null or 0; give the window",
		                 (long long)i);
	return WT_OK;
}

static int json_facts(const char *json, size_t len, gemma_facts *g, json_t **root_out,
                      wt_errbuf *err)
{
	memset(g, 0, sizeof(*g));
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, NULL);
	*root_out = root;
	if (root == NULL || !json_is_object(root)) /* ckpt_config_fields took it already */
		return wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object");
	g->attn_cap_null = json_is_null(ref_lm_get(root, "attn_logit_softcapping"));
	g->final_cap_null = json_is_null(ref_lm_get(root, "final_logit_softcapping"));
	g->layer_types = ref_lm_get(root, "layer_types");
	if (json_is_null(g->layer_types))
		g->layer_types = NULL;
	json_t *rp = ref_lm_get(root, "rope_parameters");
	int rv = WT_OK;
	if (json_is_object(rp) && (rv = rope_type_params(rp, "full_attention", &g->rope[0], err)))
		return rv;
	if (json_is_object(rp))
		rv = rope_type_params(rp, "sliding_attention", &g->rope[1], err);
	return rv;
}

static int parse_act(const ckpt_field *f, ref_cfg *c, wt_errbuf *err)
{
	const char *a = f->present ? f->s : "gelu_pytorch_tanh";
	if (strcmp(a, "gelu_pytorch_tanh") == 0 || strcmp(a, "gelu_new") == 0)
		c->act = REF_ACT_GELU_TANH;
	else if (strcmp(a, "gelu") == 0)
		c->act = REF_ACT_GELU;
	else
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_activation '%s'; the reference has "
		                 "gelu_pytorch_tanh, gelu_new and gelu for Gemma",
		                 a);
	return WT_OK;
}

/* A present cap must be positive; absent: def (0 = none), explicit null: none. */
static int parse_cap(const ckpt_field *f, bool null, double def, double *out, wt_errbuf *err)
{
	*out = f->present ? f->r : null ? 0.0 : def;
	if (f->present && !(f->r > 0.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: %s %g; the reference needs a positive cap or null",
		                 f->key, f->r);
	return WT_OK;
}

/* RoPE bases and scaling: Gemma 3 local / global, Gemma 1/2 one for all layers. */
static int parse_rope(const ckpt_field *f, const gemma_facts *g, ref_cfg *c, wt_errbuf *err)
{
	/* transformers 5.x rope_parameters (one for all layers) wins, as for rope_theta */
	const ckpt_field *ty = f[G_RP_TYPE].present       ? &f[G_RP_TYPE]
	                       : f[G_RS_TYPE].present     ? &f[G_RS_TYPE]
	                       : f[G_RS_TYPE_OLD].present ? &f[G_RS_TYPE_OLD]
	                                                  : NULL;
	const ckpt_field *fa = f[G_RP_TYPE].present ? &f[G_RP_FACTOR] : &f[G_RS_FACTOR];
	double fac;
	int rv = rope_scaling(ty ? ty->key : "rope_scaling.rope_type", ty ? ty->s : NULL,
	                      fa->present, fa->r, &fac, err);
	if (rv != WT_OK)
		return rv;
	if (c->gemma < 3) {
		c->theta_local = c->theta; /* cfg.c: rope_parameters.rope_theta, rope_theta */
		if (fac > 0.0)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: linear rope_scaling on a Gemma / Gemma 2 "
			                 "config; transformers 4.39.3 ignores it, later versions "
			                 "apply it: the reference takes neither");
		return WT_OK;
	}
	c->theta = f[G_RP_THETA].present ? f[G_RP_THETA].r
	           : f[G_THETA].present  ? f[G_THETA].r
	                                 : 1000000.0;
	c->theta_local = f[G_LOCAL_THETA].present ? f[G_LOCAL_THETA].r : 10000.0;
	c->rope_factor[0] = fac;
	if (g->rope[0].present) { /* transformers 5.x: per layer type */
		c->theta = g->rope[0].has_theta ? g->rope[0].theta : c->theta;
		c->rope_factor[0] = g->rope[0].factor;
	}
	if (g->rope[1].present) {
		c->theta_local = g->rope[1].has_theta ? g->rope[1].theta : c->theta_local;
		if (g->rope[1].factor > 0.0)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "config.json: rope scaling on Gemma 3's sliding layers; "
			                 "the reference scales the global layers only");
	}
	if (!(c->theta > 1.0) || !(c->theta_local > 1.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: RoPE bases %g (global), %g (local); the reference "
		                 "needs values above 1",
		                 c->theta, c->theta_local);
	return WT_OK;
}

/* Sliding window and which layers use it: layer_types, else the pattern. */
static int parse_window(const ckpt_field *f, const gemma_facts *g, ref_cfg *c, wt_errbuf *err)
{
	c->window = f[G_WINDOW].present ? f[G_WINDOW].i : 4096;
	c->window_pattern = c->gemma == 2 ? 2 : f[G_PATTERN].present ? f[G_PATTERN].i : 6;
	int rv = g->layer_types ? ref_layer_types(c, g->layer_types, "Gemma", err) : WT_OK;
	if (rv == WT_OK && (c->window < 1 || c->window_pattern < 1))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: sliding_window %lld, sliding_window_pattern %lld; "
		                 "the reference needs positive values",
		                 (long long)c->window, (long long)c->window_pattern);
	return rv;
}

int ref_cfg_gemma(ref_cfg *c, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[G_COUNT];
	gemma_facts g;
	json_t *root = NULL;
	int rv = read_fields(json, len, f, err);
	if (rv == WT_OK)
		rv = json_facts(json, len, &g, &root, err);
	if (rv == WT_OK)
		rv = parse_act(&f[G_ACT], c, err);
	if (rv == WT_OK)
		rv = parse_rope(f, &g, c, err);
	c->norm_off = 1.0f;
	c->embed_scale = (float)sqrt((double)c->hid);
	c->sandwich = c->gemma >= 2 && !c->vaultgemma; /* VaultGemma: no post norms */
	if (rv == WT_OK && c->gemma >= 2) {
		double q = f[G_QPAS].present ? f[G_QPAS].r : 256.0;
		if (!(q >= 1e-6 && q <= 1e6)) /* 1e-300 overflowed the scores to inf */
			rv = wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: query_pre_attn_scalar %g; the reference needs a "
			    "value in [1e-6, 1e6] (Gemma 2 / 3: the head size, 256 or 144)",
			    q);
		c->attn_scale = pow(q, -0.5); /* query_pre_attn_scalar**-0.5 */
		/* Gemma 3: transformers' Gemma3Attention never passes attn_logit_softcapping
		 * to its attention function (4.50.3, 4.57.1), so it is not applied */
		if (rv == WT_OK && c->gemma == 2)
			rv = parse_cap(&f[G_ATTN_CAP], g.attn_cap_null, 50.0, &c->attn_cap, err);
		if (rv == WT_OK)
			rv = parse_cap(&f[G_FINAL_CAP], g.final_cap_null,
			               c->gemma == 2 ? 30.0 : 0.0, &c->final_cap, err);
		if (rv == WT_OK)
			rv = parse_window(f, &g, c, err);
	}
	json_decref(root);
	return rv;
}
