/*
 * cfg_neox.c — GPT-NeoX (GPTNeoXForCausalLM; transformers 4.57.1 configuration_gpt_neox.py,
 * modeling_gpt_neox.py; vLLM gpt_neox.py): its config.json fields.
 *
 * The math: LayerNorms with biases (input_layernorm before attention,
 * post_attention_layernorm before the MLP, final_layer_norm); query_key_value
 * [H, 3, d] rows per head with its bias, RoPE rotate-half on the first
 * int(d * rotary_pct) dims of q and k, attention.dense with its bias; the MLP
 * dense_4h_to_h(act(dense_h_to_4h(x))) with both biases; with use_parallel_residual
 * x = mlp(ln2(x)) + attn(ln1(x)) + x, else x += attn(ln1(x)); x += mlp(ln2(x)); embed_out
 * untied. The tensors are read under StarCoder2's / Phi-3's names (neox.c renames them).
 *
 *   key                      default     what the reference does with it
 *   hidden_act               gelu        the MLP's activation (ref_cfg_act's forms)
 *   rotary_pct               0.25        rotary dims int(d * rotary_pct): even, >= 2
 *                                        (the class copies it to partial_rotary_factor)
 *   rotary_emb_base          10000       the RoPE base (the class copies it to rope_theta,
 *                                        over any rope_theta key)
 *   layer_norm_eps           1e-5        every LayerNorm
 *   use_parallel_residual    true        the parallel block above
 *   rope_scaling             none        cfg_rope.c over the rotary dims
 *
 * Phi (PhiForCausalLM; modeling_phi.py, vLLM phi.py): x = x + attn(ln(x)) + mlp(ln(x)) with
 * one input_layernorm, q/k/v and dense with biases, RoPE rotate-half on the first
 * int(d * partial_rotary_factor) dims, fc2(act(fc1(x))) with biases, final_layernorm, lm_head
 * with its bias. Keys: hidden_act (gelu_new), partial_rotary_factor (0.5), rope_theta (10000),
 * layer_norm_eps (1e-5), rope_scaling (none); qk_layernorm true refused (as the planner does:
 * vLLM's phi.py has no q/k layernorms).
 *
 * BLOOM (BloomForCausalLM; modeling_bloom.py, vLLM bloom.py): word_embeddings then
 * word_embeddings_layernorm, GPT-NeoX's sequential block (query_key_value [H, 3, d] rows
 * with its bias, dense, dense_4h_to_h(gelu_tanh(dense_h_to_4h(x))) with biases) with no
 * RoPE: ALiBi adds slope_h * s to head h's score of key s; ln_f, the tied word_embeddings as
 * head. Keys: layer_norm_epsilon (1e-5); apply_residual_connection_post_layernorm true
 * refused (no release sets it; the reference adds the block's input).
 *
 * StableLM (StableLmForCausalLM; modeling_stablelm.py, vLLM stablelm.py): Llama's sequential
 * decoder (its q/k/v biases added where the checkpoint has them: use_qkv_bias) whose
 * input_layernorm, post_attention_layernorm and model.norm are LayerNorms with biases
 * (layernorm), RoPE rotate-half on the first int(d * partial_rotary_factor) dims, the SwiGLU
 * MLP; the tensors keep Llama's names. Keys: hidden_act (silu; vLLM's StablelmMLP is
 * SiluAndMul, anything else refused), partial_rotary_factor (0.25), rope_theta (10000),
 * layer_norm_eps (1e-5); qk_layernorm true and use_parallel_residual true refused (as the
 * planner does: vLLM's stablelm.py has neither), a rope_scaling other than default refused
 * (vLLM's stablelm.py builds its rotary embedding without it; transformers applies it).
 *
 * Persimmon (PersimmonForCausalLM; modeling_persimmon.py, vLLM persimmon.py): the sequential
 * decoder x += dense(attn(ln1(x))); x += mlp(ln2(x)) with LayerNorms with biases,
 * query_key_value [H, 3, d] per head with its bias (read as GPT-NeoX's), with qk_layernorm q
 * and k LayerNormed per head by q_layernorm / k_layernorm [d] (weight and bias shared by
 * every head) before RoPE rotate-half on the first int(d * partial_rotary_factor) dims,
 * dense_4h_to_h(act(dense_h_to_4h(x))) with biases, final_layernorm, lm_head untied without a
 * bias. Keys: hidden_act (relu2), partial_rotary_factor (0.5), rope_theta (25000),
 * layer_norm_eps (1e-5; with qk_layernorm another refused, as the loader does: vLLM's q/k
 * LayerNorms take eps 1e-5), qk_layernorm (true); a rope_scaling other than default refused
 * (vLLM's persimmon.py builds its rotary embedding without it).
 */
#include <jansson.h>
#include <string.h>

#include "loader/loader.h"
#include "reference/reference.h"
#include "reference/reference_int.h"

enum { N_ACT, N_PCT, N_BASE, N_EPS, N_PAR, N_MAX_POS, N_COUNT };
/* Phi's keys (P_PHI of them), StableLM's the same plus use_parallel_residual (P_COUNT) */
enum { P_ACT, P_PRF, P_THETA, P_EPS, P_QKLN, P_MAX_POS, P_PAR, P_COUNT, P_PHI = P_PAR };

/* RoPE on the first int(d * f) dims (named key), even and >= 2, then rope_scaling. */
static int rotary(ref_cfg *c, const char *key, double f, const char *a, int64_t max_pos,
                  const char *json, size_t len, wt_errbuf *err)
{
	c->rot_dim = f > 0.0 && f <= 1.0 ? (int64_t)((double)c->d * f) : 0;
	if (c->rot_dim < 2 || c->rot_dim % 2 != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s %g of head size %lld gives %lld rotary dims on %s; "
		    "the reference (and vLLM's rotary embedding) needs an even count "
		    "from 2 to the head size",
		    key, f, (long long)c->d, (long long)c->rot_dim, a);
	if (!(c->theta > 0.0) || !(c->eps > 0.0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: the RoPE base %g and layer_norm_eps %g must be "
		                 "positive",
		                 c->theta, c->eps);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	ref_rope_in in = {a, c->rot_dim, max_pos};
	int rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	return rv;
}

/* PhiConfig's keys (Persimmon's are the same; transformers 4.57.1). */
static const ckpt_field phi_spec[P_PHI] = {
    [P_ACT] = {"hidden_act", CKPT_FIELD_STRING},
    [P_PRF] = {"partial_rotary_factor", CKPT_FIELD_REAL},
    [P_THETA] = {"rope_theta", CKPT_FIELD_REAL},
    [P_EPS] = {"layer_norm_eps", CKPT_FIELD_REAL},
    [P_QKLN] = {"qk_layernorm", CKPT_FIELD_BOOL},
    [P_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
};

/* PhiConfig's keys (transformers 4.57.1 configuration_phi.py). */
static int cfg_phi(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[P_PHI];
	const char *a = arch ? arch : "PhiForCausalLM";
	memcpy(f, phi_spec, sizeof(phi_spec));
	int rv = ckpt_config_fields(json, len, f, P_PHI, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[P_ACT], "gelu_new", c, err);
	if (rv != WT_OK)
		return rv;
	if (f[P_QKLN].present && f[P_QKLN].b)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: qk_layernorm true on %s; vLLM's phi.py builds no q/k "
		    "layernorms (the planner refuses it too)",
		    a);
	c->theta = f[P_THETA].present ? f[P_THETA].r : 10000.0;
	c->eps = f[P_EPS].present ? f[P_EPS].r : 1e-5;
	return rotary(c, "partial_rotary_factor", f[P_PRF].present ? f[P_PRF].r : 0.5, a,
	              f[P_MAX_POS].present ? f[P_MAX_POS].i : 0, json, len, err);
}

/* StableLmConfig's keys (transformers 4.57.1 configuration_stablelm.py), read with Phi's
 * list (P_PAR: use_parallel_residual). */
static int cfg_stablelm(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	static const ckpt_field spec[P_COUNT] = {
	    [P_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [P_PRF] = {"partial_rotary_factor", CKPT_FIELD_REAL},
	    [P_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [P_EPS] = {"layer_norm_eps", CKPT_FIELD_REAL},
	    [P_QKLN] = {"qk_layernorm", CKPT_FIELD_BOOL},
	    [P_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [P_PAR] = {"use_parallel_residual", CKPT_FIELD_BOOL},
	};
	ckpt_field f[P_COUNT];
	const char *a = arch ? arch : "StableLmForCausalLM";
	memcpy(f, spec, sizeof(spec));
	int rv = ckpt_config_fields(json, len, f, P_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (f[P_ACT].present && strcmp(f[P_ACT].s, "silu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_act '%s' on %s; vLLM's stablelm.py runs "
		                 "SiluAndMul whatever the key says: give \"silu\"",
		                 f[P_ACT].s, a);
	c->act = REF_ACT_SILU;
	if ((f[P_QKLN].present && f[P_QKLN].b) || (f[P_PAR].present && f[P_PAR].b))
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: %s true on %s; vLLM's stablelm.py has no "
		    "per-head q/k layernorms and no parallel residual (the planner "
		    "refuses it too)",
		    f[P_QKLN].present && f[P_QKLN].b ? "qk_layernorm" : "use_parallel_residual", a);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	bool other = o != NULL && type != NULL && strcmp(type, "default") != 0;
	if (other)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: %s type '%s' on %s: vLLM's stablelm.py builds the "
		               "default RoPE without it (transformers would apply it); give null",
		               key, type, a);
	json_decref(root);
	if (rv != WT_OK)
		return rv;
	c->theta = f[P_THETA].present ? f[P_THETA].r : 10000.0;
	c->eps = f[P_EPS].present ? f[P_EPS].r : 1e-5;
	return rotary(c, "partial_rotary_factor", f[P_PRF].present ? f[P_PRF].r : 0.25, a,
	              f[P_MAX_POS].present ? f[P_MAX_POS].i : 0, json, len, err);
}

/* GPTJConfig's keys (transformers 4.57.1 configuration_gptj.py): activation_function
 * (gelu_new), rotary_dim (64; null: the whole head, which vLLM's gpt_j.py cannot build: refused),
 * layer_norm_epsilon (1e-5); RoPE base 10000 (a rope_theta other than it refused: transformers
 * ignores the key, vLLM's gpt_j.py reads it). */
static int cfg_gptj(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	enum { G_ACT, G_ROT, G_EPS, G_THETA, G_MAX_POS, G_COUNT };
	static const ckpt_field spec[G_COUNT] = {
	    [G_ACT] = {"activation_function", CKPT_FIELD_STRING},
	    [G_ROT] = {"rotary_dim", CKPT_FIELD_INT},
	    [G_EPS] = {"layer_norm_epsilon", CKPT_FIELD_REAL},
	    [G_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [G_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	ckpt_field f[G_COUNT];
	const char *a = arch ? arch : "GPTJForCausalLM";
	memcpy(f, spec, sizeof(spec));
	int rv = ckpt_config_fields(json, len, f, G_COUNT, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[G_ACT], "gelu_new", c, err);
	if (rv != WT_OK)
		return rv;
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	json_t *rd = ref_lm_get(root, "rotary_dim");
	bool null_rot = rd != NULL && json_is_null(rd);
	json_decref(root);
	if (null_rot)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rotary_dim null on %s (RoPE over the whole head in "
		                 "transformers); vLLM's gpt_j.py needs an even rotary_dim: give it",
		                 a);
	if (f[G_THETA].present && f[G_THETA].r != 10000.0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: rope_theta %g on %s: transformers' GPT-J ignores it "
		                 "(base 10000), vLLM's gpt_j.py applies it; remove it",
		                 f[G_THETA].r, a);
	int64_t rot = f[G_ROT].present ? f[G_ROT].i : 64;
	if (rot < 2 || rot > c->d || rot % 2 != 0)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: rotary_dim %lld on %s of head size %lld; the reference "
		    "(and vLLM's rotary embedding) needs an even count from 2 to the "
		    "head size",
		    (long long)rot, a, (long long)c->d);
	c->theta = 10000.0;
	c->eps = f[G_EPS].present ? f[G_EPS].r : 1e-5;
	return rotary(c, "rotary_dim / head size", c->d > 0 ? (double)rot / (double)c->d : 0.0, a,
	              f[G_MAX_POS].present ? f[G_MAX_POS].i : 0, json, len, err);
}

/* BloomConfig's keys (transformers 4.57.1 configuration_bloom.py). */
static int cfg_bloom(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	enum { B_EPS, B_POST, B_COUNT };
	ckpt_field f[B_COUNT] = {
	    [B_EPS] = {"layer_norm_epsilon", CKPT_FIELD_REAL},
	    [B_POST] = {"apply_residual_connection_post_layernorm", CKPT_FIELD_BOOL},
	};
	const char *a = arch ? arch : "BloomForCausalLM";
	int rv = ckpt_config_fields(json, len, f, B_COUNT, err);
	if (rv != WT_OK)
		return rv;
	if (f[B_POST].present && f[B_POST].b)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: apply_residual_connection_post_layernorm true on %s; "
		    "the reference adds the block's input (every BLOOM release says "
		    "false): set it false",
		    a);
	/* BloomMLP's bloom_gelu_forward: the tanh approximation (vLLM's BloomMLP runs the
	 * exact gelu; docs/reference.md) */
	c->act = REF_ACT_GELU_TANH;
	c->alibi_max = 8.0; /* build_alibi_tensor's slopes: MPT's with alibi_bias_max 8 */
	c->eps = f[B_EPS].present ? f[B_EPS].r : 1e-5;
	if (!(c->eps > 0.0))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: layer_norm_epsilon %g must be positive", c->eps);
	return WT_OK;
}

/* PersimmonConfig's keys (transformers 4.57.1 configuration_persimmon.py), read with Phi's
 * list. */
static int cfg_persimmon(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	ckpt_field f[P_PHI];
	const char *a = arch ? arch : "PersimmonForCausalLM";
	memcpy(f, phi_spec, sizeof(phi_spec));
	int rv = ckpt_config_fields(json, len, f, P_PHI, err);
	if (rv != WT_OK)
		return rv;
	if (!f[P_ACT].present || strcmp(f[P_ACT].s, "relu2") == 0)
		c->act = REF_ACT_RELU2;
	else if ((rv = ref_cfg_act(&f[P_ACT], "relu2", c, err)) != WT_OK)
		return rv;
	c->ps_qkln = f[P_QKLN].present ? f[P_QKLN].b : true;
	c->theta = f[P_THETA].present ? f[P_THETA].r : 25000.0;
	c->eps = f[P_EPS].present ? f[P_EPS].r : 1e-5;
	if (c->ps_qkln && c->eps != 1e-5)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: layer_norm_eps %g on %s with qk_layernorm true; "
		                 "vLLM's persimmon.py builds q_layernorm / k_layernorm with eps "
		                 "1e-5 (transformers with layer_norm_eps): give 1e-5",
		                 c->eps, a);
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	const char *key, *type;
	json_t *o = ref_rope_obj(root, &key, &type);
	if (o != NULL && type != NULL && strcmp(type, "default") != 0)
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: %s type '%s' on %s: vLLM's persimmon.py builds the "
		               "default RoPE without it (transformers would apply it); give null",
		               key, type, a);
	json_decref(root);
	if (rv != WT_OK)
		return rv;
	return rotary(c, "partial_rotary_factor", f[P_PRF].present ? f[P_PRF].r : 0.5, a,
	              f[P_MAX_POS].present ? f[P_MAX_POS].i : 0, json, len, err);
}

/* FalconConfig's keys (transformers 4.57.1 configuration_falcon.py), or RWConfig's (vLLM's
 * stored copy, model_type RefinedWeb / RefinedWebModel: parallel_attn false by default, the new
 * architecture forced at hidden_size 8192); the loader has refused the layouts vLLM's
 * falcon.py cannot build and laid RWConfig's n_* names onto the sizes (loader/config_falcon.c). */
static int cfg_falcon(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	enum { F_ALIBI, F_THETA, F_EPS, F_NDA, F_PAR, F_NLN, F_MAX_POS, F_MT, F_COUNT };
	ckpt_field f[F_COUNT] = {
	    [F_ALIBI] = {"alibi", CKPT_FIELD_BOOL},
	    [F_THETA] = {"rope_theta", CKPT_FIELD_REAL},
	    [F_EPS] = {"layer_norm_epsilon", CKPT_FIELD_REAL},
	    [F_NDA] = {"new_decoder_architecture", CKPT_FIELD_BOOL},
	    [F_PAR] = {"parallel_attn", CKPT_FIELD_BOOL},
	    [F_NLN] = {"num_ln_in_parallel_attn", CKPT_FIELD_INT},
	    [F_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	    [F_MT] = {"model_type", CKPT_FIELD_STRING},
	};
	const char *a = arch ? arch : "FalconForCausalLM";
	int rv = ckpt_config_fields(json, len, f, F_COUNT, err);
	if (rv != WT_OK)
		return rv;
	bool rw = f[F_MT].present && (strcmp(f[F_MT].s, "RefinedWeb") == 0 ||
	                              strcmp(f[F_MT].s, "RefinedWebModel") == 0);
	bool nda = (f[F_NDA].present && f[F_NDA].b) || (rw && c->hid == 8192);
	bool par = f[F_PAR].present ? f[F_PAR].b : !rw;
	c->act = REF_ACT_GELU; /* FalconMLP's nn.GELU (activation "gelu", the loader's check) */
	c->neox_par = par;     /* x = x + attn(ln_attn(x)) + mlp(ln_mlp(x)) */
	c->fl_one_ln = par && !(nda && !(f[F_NLN].present && f[F_NLN].i == 1));
	c->eps = f[F_EPS].present ? f[F_EPS].r : 1e-5;
	c->theta = f[F_THETA].present ? f[F_THETA].r : 10000.0;
	c->fl_alibi = f[F_ALIBI].present && f[F_ALIBI].b;
	if (!c->fl_alibi)
		return rotary(c, "rotary dims / head size", 1.0, a,
		              f[F_MAX_POS].present ? f[F_MAX_POS].i : 0, json, len, err);
	if (c->H > REF_MAX_HEADS || !(c->eps > 0.0))
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: alibi true on %s with %lld heads and "
		                 "layer_norm_epsilon %g; the reference's ALiBi takes at most %d "
		                 "heads and a positive epsilon",
		                 a, (long long)c->H, c->eps, REF_MAX_HEADS);
	c->alibi_max = 8.0; /* build_alibi_tensor's slopes (BLOOM's), scaled by 1/sqrt(d) */
	return WT_OK;
}

int ref_persimmon_qk(const ref_cfg *c, ref_set *s, int64_t l, float *q, float *k, int64_t T,
                     int64_t n_heads, wt_errbuf *err)
{
	const float *w[2], *b[2];
	int rv;
	for (int j = 0; j < 2; j++)
		if ((rv = ref_getf(s, &w[j], false, err, 1, c->d, 0, 0,
		                   "model.layers.%lld.self_attn.%s_layernorm.weight", (long long)l,
		                   j ? "k" : "q")) ||
		    (rv = ref_getf(s, &b[j], false, err, 1, c->d, 0, 0,
		                   "model.layers.%lld.self_attn.%s_layernorm.bias", (long long)l,
		                   j ? "k" : "q")))
			return rv;
	ref_layernorm(q, q, w[0], b[0], T * n_heads, c->d, (float)c->eps);
	ref_layernorm(k, k, w[1], b[1], T * n_heads, c->d, (float)c->eps);
	return WT_OK;
}

int ref_cfg_neox(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	if (c->gptj)
		return cfg_gptj(c, arch, json, len, err);
	if (c->bloom)
		return cfg_bloom(c, arch, json, len, err);
	if (c->persimmon)
		return cfg_persimmon(c, arch, json, len, err);
	if (c->falcon)
		return cfg_falcon(c, arch, json, len, err);
	if (c->stablelm)
		return cfg_stablelm(c, arch, json, len, err);
	if (c->phi)
		return cfg_phi(c, arch, json, len, err);
	static const ckpt_field spec[N_COUNT] = {
	    [N_ACT] = {"hidden_act", CKPT_FIELD_STRING},
	    [N_PCT] = {"rotary_pct", CKPT_FIELD_REAL},
	    [N_BASE] = {"rotary_emb_base", CKPT_FIELD_REAL},
	    [N_EPS] = {"layer_norm_eps", CKPT_FIELD_REAL},
	    [N_PAR] = {"use_parallel_residual", CKPT_FIELD_BOOL},
	    [N_MAX_POS] = {"max_position_embeddings", CKPT_FIELD_INT},
	};
	ckpt_field f[N_COUNT];
	const char *a = arch ? arch : "GPTNeoXForCausalLM";
	memcpy(f, spec, sizeof(spec));
	int rv = ckpt_config_fields(json, len, f, N_COUNT, err);
	if (rv == WT_OK)
		rv = ref_cfg_act(&f[N_ACT], "gelu", c, err);
	if (rv != WT_OK)
		return rv;
	c->theta = f[N_BASE].present ? f[N_BASE].r : 10000.0;
	c->eps = f[N_EPS].present ? f[N_EPS].r : 1e-5;
	c->neox_par = f[N_PAR].present ? f[N_PAR].b : true;
	return rotary(c, "rotary_pct", f[N_PCT].present ? f[N_PCT].r : 0.25, a,
	              f[N_MAX_POS].present ? f[N_MAX_POS].i : 0, json, len, err);
}
