/*
 * family_modernbert.c — ModernBertModel (answerdotai/ModernBERT-base / -large's encoder,
 * Alibaba-NLP/gte-modernbert-base), docs/format.md section 2.7, as vLLM's modernbert.py
 * builds and loads it.
 *
 * embeddings.tok_embeddings vocab-parallel (VocabParallelEmbedding). Each layer's
 * attn.Wqkv [3*hid, hid] is a QKVParallelLinear loaded from the fused tensor
 * (loaded_shard_id None: the [q; k; v] rows split into their three parts, each cut by heads),
 * so rank r holds [q_r; k_r; v_r] (SM_K_QKVF), its bias alike; attn.Wo and mlp.Wo are
 * RowParallelLinear: columns by heads / by intermediate_size, biases whole. mlp.Wi
 * [2*I, hid] ([input; gate] rows) is a plain nn.Linear in vLLM: whole on every rank with
 * its bias. No Linear is built with the quantization config: nothing is quantized.
 * LayerNorms replicated; layer 0 has no attn_norm (an Identity). Biases follow
 * attention_bias (Wqkv, attn.Wo), mlp_bias (Wi, mlp.Wo), norm_bias (every LayerNorm); a bias
 * present with its switch false is skipped and listed (vLLM's load_weights skips a ".bias"
 * it has no parameter for). Names with the `model.` prefix (the base model of
 * ModernBertForMaskedLM / ...ForSequenceClassification) or none (ModernBertModel's own
 * save_pretrained): the same runtime names and bytes.
 */
#include <inttypes.h>
#include <string.h>

#include "shardmap/family_modernbert.h"

static const sm_rule modernbert_rules[] = {
    MB_RULES_AT(""),
};

static const char *const modernbert_aliases[] = {"model.", "", NULL};

bool shardmap_modernbert_bias_off(const ckpt_config *c, const char *p, const char *cn)
{
	size_t lp = strlen(p), n = strlen(cn);
	if (strncmp(cn, p, lp) != 0 || n < 5 || strcmp(cn + n - 5, ".bias") != 0)
		return false;
	cn += lp;
	if (strstr(cn, "norm.bias") != NULL)
		return !c->mb_norm_bias;
	if (strstr(cn, ".attn.Wqkv.bias") != NULL || strstr(cn, ".attn.Wo.bias") != NULL)
		return !c->attention_bias;
	if (strstr(cn, ".mlp.Wi.bias") != NULL || strstr(cn, ".mlp.Wo.bias") != NULL)
		return !c->mlp_bias;
	return false;
}

static bool modernbert_drop(const ckpt_config *c, const char *cn)
{
	return shardmap_modernbert_bias_off(c, "", cn);
}

int shardmap_modernbert_check(const ckpt_config *c, wt_errbuf *err)
{
	if (!c->mb_gelu)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: hidden_activation is not \"gelu\": vLLM's "
		                 "ModernBertMLP runs nn.GELU() (exact) whatever it says; set it "
		                 "to \"gelu\" or remove it");
	if (c->mb_every < 1)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: global_attn_every_n_layers %" PRId64
		                 " must be >= 1 (layer i is global when i %% it == 0)",
		                 c->mb_every);
	if (c->mb_local < 2)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: local_attention %" PRId64
		                 " must be >= 2 (the local layers see local_attention / 2 "
		                 "tokens each side)",
		                 c->mb_local);
	if (c->num_key_value_heads != c->num_attention_heads)
		return wt_seterr(err, WT_EUNSUPPORTED,
		                 "config.json: num_key_value_heads %" PRId64
		                 " is not num_attention_heads %" PRId64
		                 ": ModernBERT's Wqkv has one key / value head per head; remove "
		                 "the key",
		                 c->num_key_value_heads, c->num_attention_heads);
	if (c->hidden_size % c->num_attention_heads != 0 ||
	    c->head_dim != c->hidden_size / c->num_attention_heads) /* no product: no overflow */
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_attention_heads %" PRId64
		                 " does not divide hidden_size %" PRId64
		                 " (ModernBERT's head_dim is hidden_size / num_attention_heads)",
		                 c->num_attention_heads, c->hidden_size);
	return WT_OK;
}

static const char *const modernbert_archs[] = {"ModernBertModel", NULL};

const sm_family shardmap_family_modernbert = {
    .name = "modernbert",
    .archs = modernbert_archs,
    .rules = modernbert_rules,
    .n_rules = SM_NRULES(modernbert_rules),
    .layer_prefix = "layers.",
    .check = shardmap_modernbert_check,
    .aliases = modernbert_aliases,
    .drop_canon = modernbert_drop,
};
