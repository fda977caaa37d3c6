/*
 * cfg_longcat.c — LongCat-Flash (LongcatFlashForCausalLM, transformers 4.57.1
 * modeling_longcat_flash.py): its config.json read as the switches of the MLA decoder
 * (longcat.c).
 *
 * LongcatFlashConfig's keys come through the loader's view (loader/config_longcat.c:
 * num_layers, ffn_hidden_size, expert_ffn_hidden_size, moe_topk under the common names, the
 * class defaults for absent keys); ckpt.c doubles the layers into virtual ones and reads
 * zero_expert_num. Here: the top-k weights are the softmax scores times
 * routed_scaling_factor (LongcatFlashTopkRouter does not renormalise), RoPE is the
 * interleaved form on the qk_rope_head_dim part (apply_rotary_pos_emb_interleave, always)
 * with rope_theta, silu MLPs and experts (the loader refuses another hidden_act); a
 * rope_scaling other than null is refused (not checked against transformers).
 */
#include <jansson.h>

#include "reference/reference.h"
#include "reference/reference_int.h"

int ref_cfg_longcat(ref_cfg *c, const char *arch, const char *json, size_t len, wt_errbuf *err)
{
	json_t *root = ref_cfg_root(json, len, err);
	if (root == NULL)
		return err ? err->code : WT_ECORRUPT;
	int rv = WT_OK;
	json_t *rs = json_object_get(root, "rope_scaling");
	if (rs != NULL && !json_is_null(rs))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: rope_scaling is set; the reference reads "
		               "LongcatFlashForCausalLM with plain RoPE only (rope_scaling null)");
	json_t *mp = json_object_get(root, "max_position_embeddings");
	ref_rope_in in = {arch ? arch : "LongcatFlashForCausalLM", c->rope,
	                  json_is_integer(mp) ? (int64_t)json_integer_value(mp) : 0};
	if (rv == WT_OK)
		rv = ref_cfg_rope(root, &in, c, err);
	json_decref(root);
	c->act = REF_ACT_SILU;
	c->norm_topk = false;
	c->rope_interleave = true;
	c->n_group = c->topk_group = 1;
	if (rv == WT_OK &&
	    (c->n_zero < 0 || c->E + c->n_zero > REF_MAX_EXPERTS || c->q_lora < 1 || c->L % 2 != 0))
		rv = wt_seterr(err, WT_EUNSUPPORTED,
		               "config.json: %lld routed and %lld zero experts, q_lora_rank %lld; "
		               "the reference needs at most %d experts in all and a q_lora_rank",
		               (long long)c->E, (long long)c->n_zero, (long long)c->q_lora,
		               REF_MAX_EXPERTS);
	return rv;
}
