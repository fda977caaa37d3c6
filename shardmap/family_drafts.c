/*
 * family_drafts.c — the speculative-decoding drafts that read the target's hidden states without
 * a decoder layer of their own, cut as vLLM loads them.
 *
 * Medusa (MedusaModel: vLLM's medusa.py, FasterDecoding's heads converted for vLLM, e.g.
 * abhigoyal/vllm-medusa-vicuna-7b-v1.3): num_heads ResidualBlocks of num_hidden_layers
 * nn.Linear [hid, hid] each, blocks.{j}.layers.{i}.weight (.bias with medusa_fc_bias), whole on
 * every rank and never quantized (plain nn.Linear: no quant_config reaches them); one
 * ParallelLMHead a head, lm_heads.{j}.weight, vocabulary rows over truncated_vocab_size (padded
 * to 64 as every LM head here), or with original_lm_head one lm_head.weight that every head
 * shares (vLLM loads a stored lm_head.weight, or lm_heads.0.weight into it, and skips
 * lm_heads.1. on: dropped here; both lm_head.weight and lm_heads.0.weight refused, which of the
 * two vLLM keeps depends on their order). token_map (truncated_vocab_size below vocab_size:
 * required, as vLLM asserts) whole in I64 as stored (int_keep), else skipped as vLLM skips
 * it; heads stored over the full vocabulary (vLLM gathers the token_map rows at load) are
 * refused. vLLM drops medusa_heads. from every name (the aliases below); it skips any other
 * name silently, which is refused here as unknown.
 *
 * MLPSpeculator (MLPSpeculatorPreTrainedModel: vLLM's mlp_speculator.py, e.g.
 * ibm-ai-platform/llama3-8b-accelerator): n_predict stages {i} of emb.{i} (VocabParallelEmbedding
 * [vocab, inner]), proj.{i} (nn.Linear [inner, emb_dim] for stage 0, [inner, inner] after:
 * whole on every rank, never quantized), head.{i} (ParallelLMHead [vocab, inner]) and ln.{i}
 * (weight and bias, replicated); ln0 (scale_input) has no parameters. With tie_weights vLLM
 * builds one emb / head / ln and two proj, so its parameters are emb.0, proj.0, proj.1,
 * head.0, ln.0: the later stages' copies a checkpoint holds are skipped (vLLM's loader finds no
 * parameter of that name). vLLM drops speculator. from every name (the aliases).
 */
#include <string.h>

#include "loader/loader.h"
#include "shardmap/family_rules.h"

#define MD_BLOCK "blocks.{j}.layers.{i}."
#define MD_BLOCKS                                                                                  \
	SM_RULE(MD_BLOCK "weight", MD_BLOCK "weight", SM_K_REPL, 0, SM_U_NONE, SM_C_MDBLK, 0, 2,   \
	        SM_D_HID, SM_D_HID),                                                               \
	    SM_RULE(MD_BLOCK "bias", MD_BLOCK "bias", SM_K_REPL, 0, SM_U_NONE, SM_C_MDFCB, 0, 1,   \
	            SM_D_HID, SM_D_ANY)
#define MD_TMAP                                                                                    \
	SM_RULE("token_map", "token_map", SM_K_REPL, 0, SM_U_NONE, SM_C_MDTMAP, 0, 1, SM_D_DV,     \
	        SM_D_ANY)
#define MD_HEADS                                                                                   \
	SM_RULE("lm_heads.{j}.weight", "lm_heads.{j}.weight", SM_K_VOCAB, 0, SM_U_NONE,            \
	        SM_C_MDHEADS, 0, 2, SM_D_DV, SM_D_HID),                                            \
	    MD_TMAP

/* one lm_heads.{j} a head; a stored lm_head.weight refused (original_lm_head false) */
static const sm_rule medusa_rules[] = {
    MD_BLOCKS,
    MD_HEADS,
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_MDORIG, 0, 2,
            SM_D_DV, SM_D_HID),
};

/* original_lm_head (variant_for): the first head's table is the shared lm_head */
static const sm_rule medusa_orig_rules[] = {
    MD_BLOCKS,
    SM_RULE("lm_heads.0.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_MDORIG, 0, 2,
            SM_D_DV, SM_D_HID),
    MD_TMAP,
};

/* original_lm_head with lm_head.weight stored (prefix_variant): lm_heads.0 beside it refused */
static const sm_rule medusa_orig_lm_rules[] = {
    MD_BLOCKS,
    SM_RULE("lm_head.weight", "lm_head.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_MDORIG, 0, 2,
            SM_D_DV, SM_D_HID),
    MD_HEADS,
};

static const char *const medusa_aliases[] = {"medusa_heads.", "", NULL};

static bool medusa_tmap(const ckpt_config *c)
{
	return c->draft_vocab_size > 0 && c->draft_vocab_size < c->vocab_size;
}

/* token_map without a truncated vocabulary; lm_heads.1. on under original_lm_head */
static bool medusa_drop(const ckpt_config *c, const char *cn)
{
	if (strcmp(cn, "token_map") == 0)
		return !medusa_tmap(c);
	return c->medusa_orig_lm_head && strncmp(cn, "lm_heads.", 9) == 0 &&
	       strncmp(cn, "lm_heads.0.", 11) != 0;
}

static bool medusa_head(const ckpt_config *c, int64_t i, int64_t j)
{
	(void)i;
	return j < c->medusa_heads;
}

static int64_t medusa_nheads(const ckpt_config *c)
{
	return c->medusa_heads;
}

/* Is cn (canonical) a head's table: lm_head.weight or lm_heads.N.weight? */
static bool medusa_is_head(const char *cn)
{
	const char *s = cn + 9;
	if (strcmp(cn, "lm_head.weight") == 0)
		return true;
	if (strncmp(cn, "lm_heads.", 9) != 0 || *s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return strcmp(s, ".weight") == 0;
}

/* Before any tensor is mapped (the layer_dims hook; every layer the model's sizes): with a
 * truncated vocabulary, token_map in I64 and the heads already cut to its rows. */
static int medusa_names(const ckpt *c, sm_layer_dims **out, wt_errbuf *err)
{
	const ckpt_config *cfg = ckpt_get_config(c);
	*out = NULL;
	for (size_t k = 0; medusa_tmap(cfg) && k < ckpt_n_tensors(c); k++) {
		const ckpt_tensor *t = ckpt_tensor_at(c, k);
		const char *cn =
		    strncmp(t->name, "medusa_heads.", 13) == 0 ? t->name + 13 : t->name;
		if (strcmp(cn, "token_map") == 0 && t->dtype != WT_I64)
			return wt_seterr(
			    err, WT_EDTYPE,
			    "tensor '%s': dtype %s; vLLM's medusa.py indexes the heads' logits "
			    "with token_map: store it as I64 (the target's token ids)",
			    t->name, wt_dtype_name(t->dtype));
		if (medusa_is_head(cn) && t->ndim == 2 && t->shape[0] == cfg->vocab_size)
			return wt_seterr(
			    err, WT_EUNSUPPORTED,
			    "tensor '%s': %lld rows (vocab_size) under truncated_vocab_size %lld: "
			    "vLLM's medusa.py gathers the token_map rows at load, not done here; "
			    "store the head's token_map rows ([%lld, %lld])",
			    t->name, (long long)t->shape[0], (long long)cfg->draft_vocab_size,
			    (long long)cfg->draft_vocab_size, (long long)t->shape[1]);
	}
	return WT_OK;
}

static const char *const medusa_archs[] = {"MedusaModel", NULL};

#define MD_FAMILY(tab)                                                                             \
	.name = "medusa", .archs = medusa_archs, .rules = tab, .n_rules = SM_NRULES(tab),          \
	.layer_prefix = "blocks.", .aliases = medusa_aliases, .drop_canon = medusa_drop,           \
	.layer_dims = medusa_names, .int_keep = "token_map", .j_holds = medusa_head,               \
	.j_key = "num_heads", .j_count = medusa_nheads

static const sm_family medusa_orig_lm = {MD_FAMILY(medusa_orig_lm_rules)};

static const sm_family medusa_orig = {
    MD_FAMILY(medusa_orig_rules),
    .prefix_variant = &medusa_orig_lm,
    .prefix_at = "lm_head.",
};

static const sm_family *medusa_variant(const ckpt_config *c)
{
	return c->medusa_orig_lm_head ? &medusa_orig : NULL;
}

const sm_family shardmap_family_medusa = {
    MD_FAMILY(medusa_rules),
    .variant_for = medusa_variant,
};

static const sm_rule mlps_rules[] = {
    SM_RULE("emb.{i}.weight", "emb.{i}.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_MSTIE0, 0, 2, SM_D_V,
            SM_D_I),
    /* stage 0's reads the target's hidden states (before proj.{i}) */
    SM_RULE("proj.0.weight", "proj.0.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_ALL, 0, 2, SM_D_I,
            SM_D_HID),
    SM_RULE("proj.{i}.weight", "proj.{i}.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_MSTIE1, 0, 2,
            SM_D_I, SM_D_I),
    SM_RULE("head.{i}.weight", "head.{i}.weight", SM_K_VOCAB, 0, SM_U_NONE, SM_C_MSTIE0, 0, 2,
            SM_D_V, SM_D_I),
    SM_RULE("ln.{i}.weight", "ln.{i}.weight", SM_K_REPL, 0, SM_U_NONE, SM_C_MSTIE0, 0, 1, SM_D_I,
            SM_D_ANY),
    SM_RULE("ln.{i}.bias", "ln.{i}.bias", SM_K_REPL, 0, SM_U_NONE, SM_C_MSTIE0, 0, 1, SM_D_I,
            SM_D_ANY),
};

static const char *const mlps_aliases[] = {"speculator.", "", NULL};

/* Stage index after prefix p of cn, or -1. */
static int64_t mlps_stage(const char *cn, const char *p)
{
	size_t n = strlen(p);
	int64_t v = 0;
	const char *s = cn + n;
	if (strncmp(cn, p, n) != 0 || *s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9' && v < 100000000)
		v = v * 10 + (*s++ - '0');
	return *s == '.' ? v : -1;
}

/* tie_weights: the later stages' copies of the shared modules (vLLM has no parameter of their
 * names) */
static bool mlps_drop(const ckpt_config *c, const char *cn)
{
	if (!c->mlps_tied)
		return false;
	return mlps_stage(cn, "emb.") > 0 || mlps_stage(cn, "head.") > 0 ||
	       mlps_stage(cn, "ln.") > 0 || mlps_stage(cn, "proj.") > 1;
}

static const char *const mlps_archs[] = {"MLPSpeculatorPreTrainedModel", NULL};

const sm_family shardmap_family_mlp_speculator = {
    .name = "mlp_speculator",
    .archs = mlps_archs,
    .rules = mlps_rules,
    .n_rules = SM_NRULES(mlps_rules),
    .layer_prefix = "emb.",
    .aliases = mlps_aliases,
    .drop_canon = mlps_drop,
    .layers_key = "n_predict",
};
