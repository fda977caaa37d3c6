/*
 * reference_cfg.c — the config.json fields the reference forward pass needs
 * (jansson), with the Hugging Face defaults: num_key_value_heads = H,
 * head_dim = hidden / H, rms_norm_eps 1e-6, rope_theta 10000,
 * tie_word_embeddings false, Mixtral renormalises its top-k weights and
 * Qwen2-MoE does so only with norm_topk_prob.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "engine/reference.h"

static int get_int(json_t *root, const char *key, int64_t def, bool required, int64_t *out,
                   wt_errbuf *err)
{
	json_t *v = json_object_get(root, key);
	if (v == NULL || json_is_null(v)) {
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

static double get_real(json_t *root, const char *key, double def)
{
	json_t *v = json_object_get(root, key);
	return json_is_number(v) ? json_number_value(v) : def;
}

static bool get_bool(json_t *root, const char *key, bool def)
{
	json_t *v = json_object_get(root, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

static int parse_arch(json_t *root, engine_ref_cfg *c, wt_errbuf *err)
{
	json_t *a = json_array_get(json_object_get(root, "architectures"), 0);
	const char *arch = json_string_value(a);
	if (arch == NULL)
		return wt_seterr(err, WT_ECORRUPT, "config.json: 'architectures' is missing");
	if (strcmp(arch, "LlamaForCausalLM") == 0 || strcmp(arch, "MistralForCausalLM") == 0 ||
	    strcmp(arch, "Qwen2ForCausalLM") == 0 ||
	    strcmp(arch, "Qwen2VLForConditionalGeneration") == 0) {
		/* Qwen2-VL: the language model only, on text tokens, where MRoPE's three
		 * position streams are equal and it is the plain 1-D RoPE */
		c->kind = ENGINE_REF_DENSE;
	} else if (strcmp(arch, "Qwen3ForCausalLM") == 0) {
		c->kind = ENGINE_REF_DENSE;
		c->qk_norm = true;
	} else if (strcmp(arch, "MixtralForCausalLM") == 0) {
		c->kind = ENGINE_REF_MIXTRAL;
	} else if (strcmp(arch, "Qwen2MoeForCausalLM") == 0) {
		c->kind = ENGINE_REF_QWEN2_MOE;
	} else if (strcmp(arch, "Qwen3MoeForCausalLM") == 0) {
		c->kind = ENGINE_REF_QWEN2_MOE; /* same MoE block, no shared expert by default */
		c->qk_norm = true;
	} else if (strcmp(arch, "DeepseekV3ForCausalLM") == 0) {
		c->kind = ENGINE_REF_DEEPSEEK;
	} else if (strcmp(arch, "BertModel") == 0) {
		const char *act = json_string_value(json_object_get(root, "hidden_act"));
		if (act != NULL && strcmp(act, "gelu") != 0)
			return wt_seterr(err, WT_EUNSUPPORTED,
			                 "BertModel hidden_act '%s': the reference has only 'gelu'",
			                 act);
		c->kind = ENGINE_REF_BERT;
	} else {
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "architecture '%s' has no reference forward pass; supported: "
		                 "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
		                 "Qwen3ForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM, "
		                 "Qwen3MoeForCausalLM, "
		                 "DeepseekV3ForCausalLM, BertModel, "
		                 "Qwen2VLForConditionalGeneration (language model)",
		                 arch);
	}
	return WT_OK;
}

static int parse_moe(json_t *root, engine_ref_cfg *c, wt_errbuf *err)
{
	int rv;
	const char *ekey = c->kind == ENGINE_REF_MIXTRAL    ? "num_local_experts"
	                   : c->kind == ENGINE_REF_DEEPSEEK ? "n_routed_experts"
	                                                    : "num_experts";
	if ((rv = get_int(root, ekey, 0, true, &c->E, err)) != WT_OK ||
	    (rv = get_int(root, "num_experts_per_tok", 0, true, &c->topk, err)) != WT_OK)
		return rv;
	if (c->kind == ENGINE_REF_MIXTRAL) {
		c->Ie = c->I;
		c->Is = 0;
		c->norm_topk = true;
		c->sparse_step = 1;
	} else if (c->kind == ENGINE_REF_DEEPSEEK) {
		int64_t nsh = 0;
		if ((rv = get_int(root, "moe_intermediate_size", 0, true, &c->Ie, err)) ||
		    (rv = get_int(root, "n_shared_experts", 0, false, &nsh, err)) ||
		    (rv = get_int(root, "n_group", 1, false, &c->n_group, err)) ||
		    (rv = get_int(root, "topk_group", 1, false, &c->topk_group, err)) ||
		    (rv = get_int(root, "first_k_dense_replace", 0, false, &c->first_dense, err)) ||
		    (rv = get_int(root, "moe_layer_freq", 1, false, &c->layer_freq, err)))
			return rv;
		const char *sf = json_string_value(json_object_get(root, "scoring_func"));
		if (sf != NULL && strcmp(sf, "sigmoid") != 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: scoring_func '%s'; the reference has 'sigmoid'", sf);
		c->Is = c->Ie * nsh;
		c->norm_topk = get_bool(root, "norm_topk_prob", true);
		c->routed_scale = get_real(root, "routed_scaling_factor", 1.0);
		c->sparse_step = 1;
		if (c->n_group < 1 || c->topk_group < 1 || c->topk_group > c->n_group ||
		    c->layer_freq < 1 || c->first_dense < 0)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "config.json: n_group %lld, topk_group %lld, moe_layer_freq "
			    "%lld, first_k_dense_replace %lld out of range",
			    (long long)c->n_group, (long long)c->topk_group,
			    (long long)c->layer_freq, (long long)c->first_dense);
	} else {
		if ((rv = get_int(root, "moe_intermediate_size", 0, true, &c->Ie, err)) != WT_OK ||
		    (rv = get_int(root, "shared_expert_intermediate_size", 0, false, &c->Is,
		                  err)) != WT_OK ||
		    (rv = get_int(root, "decoder_sparse_step", 1, false, &c->sparse_step, err)) !=
		        WT_OK)
			return rv;
		c->norm_topk = get_bool(root, "norm_topk_prob", false);
		json_t *ml = json_object_get(root, "mlp_only_layers");
		size_t i;
		json_t *v;
		json_array_foreach(ml, i, v)
		{
			int64_t x = json_integer_value(v);
			if (x >= 0 && x < 64)
				c->mlp_only_mask |= 1ull << x;
		}
	}
	if (c->kind == ENGINE_REF_DEEPSEEK && c->E % c->n_group != 0)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: n_group %lld does not divide %lld experts",
		                 (long long)c->n_group, (long long)c->E);
	if (c->E < 1 || c->E > 64 || c->topk < 1 || c->topk > c->E || c->Ie < 1 || c->Is < 0 ||
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

int engine_ref_cfg_parse(const char *json, size_t len, engine_ref_cfg *out, wt_errbuf *err)
{
	engine_ref_cfg c;
	memset(&c, 0, sizeof(c));
	json_error_t je;
	json_t *top = json_loadb(json, len, 0, &je);
	if (top == NULL || !json_is_object(top)) {
		json_decref(top);
		return wt_seterr(err, WT_ECORRUPT, "config.json: not a JSON object (line %d: %s)",
		                 je.line, je.text);
	}
	/* transformers 5.x: the language model's fields in text_config (as loader/config.c) */
	json_t *root = json_incref(top), *tc = json_object_get(top, "text_config");
	if (json_is_object(tc)) {
		json_decref(root);
		root = json_copy(top);
		if (root == NULL || json_object_update(root, tc) != 0) {
			json_decref(root);
			json_decref(top);
			return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
		}
	}
	int rv;
	if ((rv = parse_arch(top, &c, err)) != WT_OK ||
	    (rv = get_int(root, "hidden_size", 0, true, &c.hid, err)) != WT_OK ||
	    (rv = get_int(root, "num_attention_heads", 0, true, &c.H, err)) != WT_OK ||
	    (rv = get_int(root, "num_key_value_heads", c.H, false, &c.KV, err)) != WT_OK ||
	    (rv = get_int(root, "intermediate_size", 0, true, &c.I, err)) != WT_OK ||
	    (rv = get_int(root, "vocab_size", 0, true, &c.V, err)) != WT_OK ||
	    (rv = get_int(root, "num_hidden_layers", 0, true, &c.L, err)) != WT_OK)
		goto out;
	if (c.H < 1 || c.KV < 1 || c.hid < 1) {
		rv = wt_seterr(err, WT_ECORRUPT,
		               "config.json: hidden %lld, heads %lld, kv heads %lld "
		               "must be positive",
		               (long long)c.hid, (long long)c.H, (long long)c.KV);
		goto out;
	}
	if ((rv = get_int(root, "head_dim", c.hid / c.H, false, &c.d, err)) != WT_OK)
		goto out;
	c.tied = get_bool(root, "tie_word_embeddings", false);
	c.eps = get_real(root, "rms_norm_eps", 1e-6);
	c.theta =
	    get_real(root, "rope_theta",
	             get_real(json_object_get(root, "rope_parameters"), "rope_theta", 10000.0));
	if (c.kind == ENGINE_REF_BERT) {
		c.KV = c.H;
		c.eps = get_real(root, "layer_norm_eps", 1e-12);
		if ((rv = get_int(root, "max_position_embeddings", 512, false, &c.max_pos, err)) ||
		    (rv = get_int(root, "type_vocab_size", 2, false, &c.n_types, err)))
			goto out;
		if (c.max_pos < 1 || c.n_types < 1) {
			rv = wt_seterr(err, WT_ECORRUPT,
			               "config.json: max_position_embeddings %lld, type_vocab_size "
			               "%lld must be positive",
			               (long long)c.max_pos, (long long)c.n_types);
			goto out;
		}
	}
	c.block[0] = c.block[1] = 128;
	json_t *bs =
	    json_object_get(json_object_get(root, "quantization_config"), "weight_block_size");
	if (json_array_size(bs) == 2) {
		c.block[0] = json_integer_value(json_array_get(bs, 0));
		c.block[1] = json_integer_value(json_array_get(bs, 1));
	}
	if (c.kind == ENGINE_REF_DEEPSEEK &&
	    ((rv = get_int(root, "q_lora_rank", -1, false, &c.q_lora, err)) ||
	     (rv = get_int(root, "kv_lora_rank", 0, true, &c.kv_lora, err)) ||
	     (rv = get_int(root, "qk_nope_head_dim", 0, true, &c.nope, err)) ||
	     (rv = get_int(root, "qk_rope_head_dim", 0, true, &c.rope, err)) ||
	     (rv = get_int(root, "v_head_dim", 0, true, &c.vhd, err))))
		goto out;
	if (c.kind == ENGINE_REF_DEEPSEEK &&
	    (c.kv_lora < 1 || c.nope < 1 || c.rope < 2 || c.rope % 2 || c.vhd < 1 ||
	     c.q_lora == 0 || c.q_lora < -1)) {
		rv = wt_seterr(
		    err, WT_EUNSUPPORTED,
		    "config.json: MLA dims q_lora %lld kv_lora %lld nope %lld rope %lld v "
		    "%lld; the reference needs positive sizes and an even rope dim",
		    (long long)c.q_lora, (long long)c.kv_lora, (long long)c.nope, (long long)c.rope,
		    (long long)c.vhd);
		goto out;
	}
	if (c.kind != ENGINE_REF_DENSE && c.kind != ENGINE_REF_BERT &&
	    (rv = parse_moe(root, &c, err)) != WT_OK)
		goto out;
	if (c.H % c.KV != 0 || c.d < 2 || c.d % 2 != 0 || c.I < 1 || c.V < 1 || c.L < 1 ||
	    c.block[0] < 1 || c.block[1] < 1) {
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: heads %lld, kv heads %lld, head_dim %lld, "
		               "intermediate %lld, vocab %lld, layers %lld; the reference needs "
		               "kv heads dividing heads, an even head_dim and positive sizes",
		               (long long)c.H, (long long)c.KV, (long long)c.d, (long long)c.I,
		               (long long)c.V, (long long)c.L);
		goto out;
	}
	*out = c;
	rv = WT_OK;
out:
	json_decref(root);
	json_decref(top);
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
