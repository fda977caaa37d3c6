/*
 * reference_cfg.c — the config.json fields only the reference forward pass
 * needs (jansson), and the validation of the whole engine_ref_cfg.
 *
 * The fields the planner reads too (dimensions, experts, MoE layer selection,
 * MLA dims, FP8 block) are NOT parsed here: the caller copies them from the
 * loader's ckpt_config (loader/config.c, engine_ref_cfg_from_ckpt in
 * reference_ckpt.h), so `plan` and `verify-forward` read one parse of them.
 * libweights never links loader/, hence the split.
 *
 * Reference-only fields and their Hugging Face defaults: rms_norm_eps 1e-6
 * (BERT layer_norm_eps 1e-12), rope_parameters.rope_theta (transformers 5.x)
 * else rope_theta, else 10000; DeepSeek rope_interleave true;
 * num_experts_per_tok (required with experts); Mixtral renormalises its top-k
 * weights, Qwen-MoE only with norm_topk_prob, DeepSeek unless norm_topk_prob
 * is false; DeepSeek n_group 1, topk_group 1, routed_scaling_factor 1,
 * scoring_func sigmoid; BERT max_position_embeddings 512, type_vocab_size 2,
 * hidden_act gelu. A present field of the wrong JSON type is WT_ECORRUPT
 * naming it (null counts as absent), as in loader/config.c. Like the loader,
 * a `text_config` object (transformers 5.x, Qwen2-VL) is laid over the top
 * level before these fields are read.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "engine/reference.h"

static json_t *present(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v == NULL || json_is_null(v) ? NULL : v;
}

static int get_int(json_t *root, const char *key, int64_t def, bool required, int64_t *out,
                   wt_errbuf *err)
{
	json_t *v = present(root, key);
	if (v == NULL) {
		if (required)
			return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is missing", key);
		*out = def;
		return WT_OK;
	}
	if (!json_is_integer(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not an integer", key);
	*out = (int64_t)json_integer_value(v);
	return WT_OK;
}

/* `what` names the field in messages ("rope_parameters.rope_theta"). */
static int get_real(json_t *o, const char *key, const char *what, double def, double *out,
                    wt_errbuf *err)
{
	json_t *v = present(o, key);
	if (v == NULL) {
		*out = def;
		return WT_OK;
	}
	if (!json_is_number(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a number", what);
	*out = json_number_value(v);
	return WT_OK;
}

static int get_bool(json_t *root, const char *key, bool def, bool *out, wt_errbuf *err)
{
	json_t *v = present(root, key);
	if (v == NULL) {
		*out = def;
		return WT_OK;
	}
	if (!json_is_boolean(v))
		return wt_seterr(err, WT_ECORRUPT, "config.json: '%s' is not a boolean", key);
	*out = json_is_true(v);
	return WT_OK;
}

/* The planner's family -> the reference's kind. */
static int ref_kind(const char *family, const char *arch, engine_ref_cfg *c, wt_errbuf *err)
{
	static const struct {
		const char *family;
		engine_ref_kind kind;
		bool qk_norm;
	} map[] = {
	    {"llama", ENGINE_REF_DENSE, false},
	    {"mistral", ENGINE_REF_DENSE, false},
	    {"qwen2", ENGINE_REF_DENSE, false},
	    /* Qwen2-VL: the language model only, on text tokens, where MRoPE's three
	     * position streams are equal and it is the plain 1-D RoPE */
	    {"qwen2_vl", ENGINE_REF_DENSE, false},
	    {"qwen3", ENGINE_REF_DENSE, true},
	    {"mixtral", ENGINE_REF_MIXTRAL, false},
	    {"qwen2_moe", ENGINE_REF_QWEN2_MOE, false},
	    /* Qwen3-MoE: the same MoE block, no shared expert unless configured */
	    {"qwen3_moe", ENGINE_REF_QWEN2_MOE, true},
	    {"deepseek_v3", ENGINE_REF_DEEPSEEK, false},
	    {"bert", ENGINE_REF_BERT, false},
	};
	for (size_t i = 0; family != NULL && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(family, map[i].family) == 0) {
			c->kind = map[i].kind;
			c->qk_norm = map[i].qk_norm;
			return WT_OK;
		}
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "architecture '%s' (family %s) has no reference forward pass; supported: "
	                 "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
	                 "Qwen3ForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM, "
	                 "Qwen3MoeForCausalLM, DeepseekV3ForCausalLM, BertModel, "
	                 "Qwen2VLForConditionalGeneration (language model)",
	                 arch ? arch : "", family ? family : "none");
}

/* rope_parameters.rope_theta (transformers 5.x) wins over the legacy rope_theta. */
static int parse_rope(json_t *root, engine_ref_cfg *c, wt_errbuf *err)
{
	json_t *rp = present(root, "rope_parameters");
	int rv = get_real(root, "rope_theta", "rope_theta", 10000.0, &c->theta, err);
	if (rv == WT_OK && rp != NULL && !json_is_object(rp))
		rv = wt_seterr(err, WT_ECORRUPT, "config.json: 'rope_parameters' is not an object");
	if (rv == WT_OK && rp != NULL)
		rv = get_real(rp, "rope_theta", "rope_parameters.rope_theta", c->theta, &c->theta,
		              err);
	if (rv == WT_OK && !(c->theta > 1.0))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: rope_theta %g; the reference needs a value above 1",
		               c->theta);
	c->rope_interleave = false;
	if (rv == WT_OK && c->kind == ENGINE_REF_DEEPSEEK) /* transformers' default: true */
		rv = get_bool(root, "rope_interleave", true, &c->rope_interleave, err);
	return rv;
}

static int parse_deepseek(json_t *root, engine_ref_cfg *c, wt_errbuf *err)
{
	int rv;
	if ((rv = get_int(root, "n_group", 1, false, &c->n_group, err)) ||
	    (rv = get_int(root, "topk_group", 1, false, &c->topk_group, err)) ||
	    (rv = get_bool(root, "norm_topk_prob", true, &c->norm_topk, err)) ||
	    (rv = get_real(root, "routed_scaling_factor", "routed_scaling_factor", 1.0,
	                   &c->routed_scale, err)))
		return rv;
	json_t *sf = present(root, "scoring_func");
	if (sf != NULL && !json_is_string(sf))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'scoring_func' is not a string");
	if (sf != NULL && strcmp(json_string_value(sf), "sigmoid") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: scoring_func '%s'; the reference has 'sigmoid'",
		                 json_string_value(sf));
	if (c->n_group < 1 || c->topk_group < 1 || c->topk_group > c->n_group ||
	    c->layer_freq < 1 || c->first_dense < 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: n_group %lld, topk_group %lld, moe_layer_freq "
		                 "%lld, first_k_dense_replace %lld out of range",
		                 (long long)c->n_group, (long long)c->topk_group,
		                 (long long)c->layer_freq, (long long)c->first_dense);
	if (c->E % c->n_group != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: n_group %lld does not divide %lld experts",
		                 (long long)c->n_group, (long long)c->E);
	return WT_OK;
}

static int parse_moe(json_t *root, engine_ref_cfg *c, wt_errbuf *err)
{
	int rv = get_int(root, "num_experts_per_tok", 0, true, &c->topk, err);
	if (rv != WT_OK)
		return rv;
	if (c->E < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: no routed experts (num_local_experts, num_experts "
		                 "or n_routed_experts) for a mixture-of-experts architecture");
	if (c->kind == ENGINE_REF_MIXTRAL) {
		c->Is = 0;
		c->norm_topk = true;
		c->sparse_step = 1;
	} else if (c->kind == ENGINE_REF_DEEPSEEK) {
		c->sparse_step = 1;
		if ((rv = parse_deepseek(root, c, err)) != WT_OK)
			return rv;
	} else if ((rv = get_bool(root, "norm_topk_prob", false, &c->norm_topk, err)) != WT_OK) {
		return rv;
	}
	if (c->E > 64 || c->topk < 1 || c->topk > c->E || c->Ie < 1 || c->Is < 0 ||
	    c->sparse_step < 1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: experts %lld, top-k %lld, expert size %lld, shared "
		    "%lld, sparse step %lld; the reference needs 1 <= top-k <= experts "
		    "<= 64 and positive sizes",
		    (long long)c->E, (long long)c->topk, (long long)c->Ie, (long long)c->Is,
		    (long long)c->sparse_step);
	return WT_OK;
}

static int parse_bert(json_t *root, engine_ref_cfg *c, wt_errbuf *err)
{
	json_t *act = present(root, "hidden_act");
	if (act != NULL && !json_is_string(act))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'hidden_act' is not a string");
	if (act != NULL && strcmp(json_string_value(act), "gelu") != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "BertModel hidden_act '%s': the reference has only 'gelu'",
		                 json_string_value(act));
	int rv;
	if ((rv = get_real(root, "layer_norm_eps", "layer_norm_eps", 1e-12, &c->eps, err)) ||
	    (rv = get_int(root, "max_position_embeddings", 512, false, &c->max_pos, err)) ||
	    (rv = get_int(root, "type_vocab_size", 2, false, &c->n_types, err)))
		return rv;
	if (c->max_pos < 1 || c->n_types < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: max_position_embeddings %lld, type_vocab_size "
		                 "%lld must be positive",
		                 (long long)c->max_pos, (long long)c->n_types);
	if (c->KV != c->H)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: BertModel with %lld kv heads for %lld heads; BERT "
		                 "attention has one kv head per head",
		                 (long long)c->KV, (long long)c->H);
	return WT_OK;
}

static int check_mla(const engine_ref_cfg *c, wt_errbuf *err)
{
	if (c->kv_lora < 1 || c->nope < 1 || c->rope < 2 || c->rope % 2 || c->rope > 1024 ||
	    c->vhd < 1 || c->q_lora == 0 || c->q_lora < -1)
		return wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: MLA dims q_lora %lld kv_lora %lld nope %lld rope %lld v "
		    "%lld; the reference needs positive sizes and an even rope dim <= 1024",
		    (long long)c->q_lora, (long long)c->kv_lora, (long long)c->nope,
		    (long long)c->rope, (long long)c->vhd);
	return WT_OK;
}

static int parse_rest(json_t *root, engine_ref_cfg *c, wt_errbuf *err)
{
	int rv = get_real(root, "rms_norm_eps", "rms_norm_eps", 1e-6, &c->eps, err);
	if (rv == WT_OK)
		rv = parse_rope(root, c, err);
	if (rv == WT_OK && c->kind == ENGINE_REF_BERT)
		rv = parse_bert(root, c, err);
	if (rv == WT_OK && c->kind == ENGINE_REF_DEEPSEEK)
		rv = check_mla(c, err);
	if (rv == WT_OK && c->kind != ENGINE_REF_DENSE && c->kind != ENGINE_REF_BERT)
		rv = parse_moe(root, c, err);
	if (rv != WT_OK)
		return rv;
	if (c->I < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: 'intermediate_size' is missing; the reference "
		                 "forward pass needs it");
	if (c->H < 1 || c->KV < 1 || c->hid < 1 || c->H % c->KV != 0 || c->d < 2 || c->d % 2 != 0 ||
	    c->V < 1 || c->L < 1 || c->block[0] < 1 || c->block[1] < 1)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: heads %lld, kv heads %lld, head_dim %lld, "
		                 "intermediate %lld, vocab %lld, layers %lld; the reference needs "
		                 "kv heads dividing heads, an even head_dim and positive sizes",
		                 (long long)c->H, (long long)c->KV, (long long)c->d,
		                 (long long)c->I, (long long)c->V, (long long)c->L);
	return WT_OK;
}

/*
 * *out = the object the language-model fields are read from, as loader/config.c
 * lm_view reads them: root itself, or (transformers 5.x, a `text_config`
 * object) a shallow copy of root with text_config's fields laid over it. A new
 * reference either way.
 */
static int lm_view(json_t *root, json_t **out, wt_errbuf *err)
{
	json_t *tc = present(root, "text_config");
	if (tc == NULL) {
		*out = json_incref(root);
		return WT_OK;
	}
	if (!json_is_object(tc))
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'text_config' is not an object");
	json_t *v = json_copy(root);
	if (v == NULL || json_object_update(v, tc) != 0) {
		json_decref(v);
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	}
	*out = v;
	return WT_OK;
}

int engine_ref_cfg_finish(engine_ref_cfg *c, const char *family, const char *arch, const char *json,
                          size_t len, wt_errbuf *err)
{
	int rv = ref_kind(family, arch, c, err);
	if (rv != WT_OK)
		return rv;
	json_error_t je;
	json_t *root = json_loadb(json, len, 0, &je), *lm = NULL;
	if (root == NULL || !json_is_object(root)) {
		json_decref(root);
		return wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object (line %d: %s)",
		                 je.line, je.text);
	}
	rv = lm_view(root, &lm, err);
	if (rv == WT_OK)
		rv = parse_rest(lm, c, err);
	json_decref(lm);
	json_decref(root);
	return rv;
}

bool engine_ref_layer_is_moe(const engine_ref_cfg *c, int64_t i)
{
	if (c->kind == ENGINE_REF_DENSE || c->kind == ENGINE_REF_BERT)
		return false;
	if (c->kind == ENGINE_REF_MIXTRAL)
		return true;
	if (c->kind == ENGINE_REF_DEEPSEEK)
		return i >= c->first_dense && i % c->layer_freq == 0;
	if (i >= 0 && i < 64 && ((c->mlp_only_mask >> i) & 1u))
		return false;
	return (i + 1) % c->sparse_step == 0;
}

void engine_ref_moe_prefix(const engine_ref_cfg *c, int64_t i, char *buf, size_t cap)
{
	snprintf(buf, cap, "model.layers.%lld.%s", (long long)i,
	         c->kind == ENGINE_REF_MIXTRAL ? "block_sparse_moe." : "mlp.");
}

size_t engine_ref_out_count(const engine_ref_cfg *c, size_t n_tok)
{
	if (c->kind == ENGINE_REF_BERT)
		return (n_tok + 1) * (size_t)c->hid;
	return n_tok * (size_t)c->V;
}
