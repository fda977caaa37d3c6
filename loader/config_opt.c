/*
 * config_opt.c — OPT's config keys (model_type opt, OPTForCausalLM: facebook/opt-125m ...
 * opt-66b), read as transformers 4.57.1's OPTConfig reads them.
 *
 * OPTConfig names the MLP's width ffn_dim (3072 when absent; an intermediate_size key is no
 * argument of its and stays unread), so the language-model view lays ffn_dim over
 * intermediate_size before the class defaults fill what is absent. Its own keys:
 * word_embed_proj_dim (None: hidden_size), max_position_embeddings (2048),
 * do_layer_norm_before (True), _remove_final_layer_norm (False), enable_bias (True),
 * layer_norm_elementwise_affine (True).
 */
#include <string.h>

#include "loader/config_int.h"
#include "loader/loader.h"

int config_opt_keys(json_t *v, wt_errbuf *err)
{
	json_t *f = json_object_get(v, "ffn_dim");
	int rc = f != NULL && !json_is_null(f) ? json_object_set(v, "intermediate_size", f)
	                                       : json_object_del(v, "intermediate_size");
	if (rc != 0 && json_object_get(v, "intermediate_size") != NULL)
		return wt_seterr(err, WT_ENOMEM, "config.json: out of memory");
	return WT_OK;
}

int config_parse_opt(json_t *root, ckpt_config *c, wt_errbuf *err)
{
	bool remove_final = false;
	int rv = config_get_int(root, "word_embed_proj_dim", c->hidden_size, 1,
	                        &c->opt_word_embed_proj_dim, err);
	if (rv == WT_OK)
		rv = config_get_int(root, "max_position_embeddings", 2048, 1, &c->opt_max_pos, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "do_layer_norm_before", true, &c->opt_ln_before, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "_remove_final_layer_norm", false, &remove_final, err);
	if (rv == WT_OK)
		rv = config_get_bool(root, "layer_norm_elementwise_affine", true, &c->opt_ln_affine,
		                     err);
	if (rv == WT_OK) /* every Linear but project_in / project_out: bias=enable_bias */
		rv = config_get_bool(root, "enable_bias", true, &c->attention_bias, err);
	c->opt_final_norm = c->opt_ln_before && !remove_final;
	return rv;
}
