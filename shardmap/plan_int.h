/* plan_int.h — planner context shared by plan.c (mapping, validation), plan_dims.c
 * (dims from config.json), plan_inst.c (instances), plan_part.c (partition rules) and
 * plan_excl.c (exclusions). */
#ifndef WT_SHARDMAP_PLAN_INT_H
#define WT_SHARDMAP_PLAN_INT_H

#include "shardmap/shardmap_int.h"

#define SM_NONE UINT32_MAX

/* Dimensions derived from config.json. docs/format.md section 1 writes them with
 * the short symbols in brackets. */
typedef struct sm_dims {
	int64_t n_heads;      /* [H] num_attention_heads */
	int64_t n_kv_heads;   /* [KV] num_key_value_heads (= n_heads when unset) */
	int64_t head_dim;     /* [d] head_dim, else hidden / n_heads */
	int64_t hidden;       /* [hid] hidden_size */
	int64_t inter;        /* [I] intermediate_size */
	int64_t vocab;        /* [V] vocab_size */
	int64_t n_experts;    /* [E] routed experts (0 = dense) */
	int64_t n_zero;       /* zero (identity) experts the router also scores (LongCat) */
	int64_t moe_inter;    /* [Ie] moe_intermediate_size, else intermediate_size */
	int64_t moe_inter_v;  /* [IEV] ERNIE-4.5-VL's vision experts' moe_intermediate_size[1] */
	int64_t shared_inter; /* [ISH] shared-expert intermediate size (0 = none) */
	int64_t n_layers;     /* [L] num_hidden_layers (an MTP draft: + num_nextn_predict_layers) */
	int64_t layer_lo;     /* the first layer {i} names: 0 (an MTP draft: num_hidden_layers) */
	int64_t rt_lo;        /* added to {i} in runtime names: 0 (ErnieMTP: num_hidden_layers) */
	/* DeepSeek-V3 multi-head latent attention */
	int64_t q_lora_rank, kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
	int64_t n_sinks; /* openPangu's param_sink_number */
	/* EAGLE-3 drafts: fc's columns (3 x target_hidden_size) and draft_vocab_size */
	int64_t eagle_fc_in, draft_vocab;
	/* vision tower (vision_config): depth, embed_dim, num_heads, MLP width,
	 * merged embed (embed * merge^2), in_chans, temporal and spatial patch */
	int64_t vis_depth, vis_embed, vis_heads, vis_inter, vis_merged;
	int64_t vis_in_chans, vis_temporal_patch, vis_patch;
	int64_t vis_positions; /* SigLIP: (image_size / patch_size)^2 (Llama 4: + 1) */
	/* Llama 4: num_channels * patch_size^2, projector_input_dim,
	 * projector_output_dim, vision_output_dim */
	int64_t vis_unfold, vis_proj_in, vis_proj_out, vis_out;
	int64_t vis_deep;             /* Qwen3-VL: deepstack mergers */
	int64_t vis_merge;            /* spatial_merge_size (GLM-4.1V's downsample kernel) */
	int64_t vis_pos_h, vis_pos_w; /* Kimi-VL's MoonViT position table [h, w, VE] */
	int64_t vis_vocab;            /* Ovis's visual vocabulary (0 for other families) */
	int64_t vis_attn; /* InternViT's attention width with its dummy heads ((H + n) x d) */
	/* Qwen3-Next's gated delta net: [Hk] linear_num_key_heads, [Hv]
	 * linear_num_value_heads, [dk] linear_key_head_dim, [dv] linear_value_head_dim,
	 * [K] linear_conv_kernel_dim (-1 when absent) */
	int64_t lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, lin_kernel;
	/* Granite 4.0's Mamba2 mixer: [Hm] mamba_n_heads, [G] mamba_n_groups, [N]
	 * mamba_d_state, [Im] mamba_expand * hidden_size, [Kc] mamba_d_conv (-1 when
	 * absent) */
	int64_t m_heads, m_groups, m_state, m_inter, m_kernel;
	/* Jamba's mamba_dt_rank (ceil(hidden_size / 16) for "auto") */
	int64_t m_dt_rank;
	/* Zamba2's adapter_rank (-1 for other families) */
	int64_t z_rank;
	/* Gemma 3n: altup_num_inputs, hidden_size_per_layer_input, num_hidden_layers x that,
	 * laurel_rank, vocab_size_per_layer_input (-1 for other families) */
	int64_t g3n_alt, g3n_ple, g3n_lp, g3n_laurel, g3n_pvocab;
	/* OPT: word_embed_proj_dim, max_position_embeddings + 2 (-1 for other families) */
	int64_t opt_wep, opt_pos;
	/* RoBERTa: max_position_embeddings, type_vocab_size, num_labels (-1 for other families) */
	int64_t rob_pos, rob_types, rob_labels;
	/* Granite Speech: SM_D_GSA, GSDH, GSC, GSK; a BLIP-2 Q-Former's (Granite Speech's
	 * projector, BLIP-2's qformer): hidden, intermediate, encoder_hidden_size, queries and
	 * layers (0 for other families) */
	int64_t gs_attn, gs_dim_head, gs_conv, gs_kernel;
	int64_t qf_hidden, qf_inter, qf_enc, qf_queries, qf_layers;
	/* Mllama: max_aspect_ratio_id + 1, max_num_tiles x vision hidden, max_num_tiles x
	 * positions x vision hidden (0 for other families; qf_layers holds num_global_layers) */
	int64_t ml_aspects, ml_tiles_hid, ml_tiles_pos;
	/* Qwen2.5-Omni's audio encoder: d_model, encoder_ffn_dim, num_mel_bins (0 for other
	 * families; qf_layers holds encoder_layers) */
	int64_t au_embed, au_inter, au_mel;
	int64_t au_dsh, au_conv_in; /* Qwen3-Omni: downsample_hidden_size, conv_out's columns */
	/* the keys n_heads / n_kv_heads come from in errors, a layer's own (sm_layer_dims);
	 * NULL: num_attention_heads / num_key_value_heads */
	const char *heads_key, *kv_key;
} sm_dims;

/* One mapped checkpoint tensor. */
typedef struct sm_entry {
	uint32_t t; /* ckpt index */
	uint32_t rule;
	int64_t i, j;
	char *rt;        /* runtime name; owned */
	uint32_t wscale; /* weight_scale_inv / weight_scale, or SM_NONE */
	uint32_t iscale; /* input_scale, or SM_NONE */
	char *canon;     /* canonical name when the checkpoint uses an alias layout; owned */
	/* The tensor as the rules see it: a packed int4 weight [N, K/8] is viewed as [N, K]. */
	ckpt_tensor view;
} sm_entry;

typedef struct sm_ctx {
	const ckpt *c;
	const ckpt_config *cfg;
	const wt_layout *l;
	const sm_family *fam;
	sm_dims dm;
	sm_entry *ents; /* sorted by (rt, part, j) */
	size_t n_ents;
	sm_excl *excl;
	uint32_t tp_size,
	    ep_size;       /* the layout's sizes (plan_inst.c varies tp_size in suggestions) */
	bool alt;          /* the checkpoint uses the family's alias name layout */
	bool tied;         /* the LM head is the embedding (shardmap_tied) */
	sm_layer_dims *ld; /* fam->layer_dims's, one per layer; owned; NULL = none */
	sm_plan *p;        /* NULL in a dry run (validation only, no messages) */
} sm_ctx;

/* Checkpoint name `name` into the rules' name (the family's aliases, then its rename hook), into
 * buf (cap bytes): name itself when unchanged, NULL when too long; *mixed as
 * shardmap_alias_canon says. And back: a rules' name into the checkpoint's (plan_rename.c). */
const char *shardmap_plan_canon(const sm_ctx *x, const char *name, char *buf, size_t cap,
                                bool *mixed);
const char *shardmap_plan_ckpt(const sm_ctx *x, const char *name, char *buf, size_t cap);

/* The dims of x from its config (plan_dims.c): x->dm filled, every config dim checked;
 * a dim out of range or missing where the family needs it is an error naming the key. */
int shardmap_derive_dims(sm_ctx *x, wt_errbuf *err);
/* The first index {i} of rule r takes (an MTP draft's layers: num_hidden_layers; else 0) and the
 * config.json key counting the layers, named in refusals (plan_dims.c). */
int64_t shardmap_block_lo(const sm_ctx *x, const sm_rule *r);
const char *shardmap_layers_key(const sm_family *f);
/* The dims rule r's tensor at index i is cut by: x->dm, with layer i's own kv heads and MLP
 * width (fam->layer_dims) in *tmp when r is a layer's and the family has them. */
const sm_dims *shardmap_layer_dm(const sm_ctx *x, const sm_rule *r, int64_t i, sm_dims *tmp);
/* The value of symbolic dim sym (SM_D_*) in d; -1 for none. */
int64_t shardmap_dim_value(const sm_dims *d, int sym);

/* plan_cond.c: does rule r apply at layer (or vision block) i; the config.json switch a bias
 * rule's condition reads (NULL: none); the switch that asks for a conditional tensor when
 * true (a bias rule's, or use_qk_norm for q / k norms), or NULL. */
bool shardmap_cond_holds(const sm_ctx *x, const sm_rule *r, int64_t i);
/* Whether family rule r, matched at layer i, gives way there to a later rule of the same
 * checkpoint name whose condition holds where r's does not (Kimi-Linear's self_attn.q_proj /
 * o_proj: the MLA rows at its full-attention layers, the KDA rows at the others). */
bool shardmap_cond_deferred(const sm_ctx *x, size_t r, int64_t i);
/* How far {j} runs for a family with j_holds: its j_count, else num_hidden_layers. */
int64_t shardmap_j_count(const sm_ctx *x);
const char *shardmap_bias_key(const sm_family *f, uint8_t cond);
const char *shardmap_switch_key(const sm_family *f, uint8_t cond);
/* InternVL's vision_config switch behind cond (SM_C_VATTNB .. SM_C_VPOOL), as the config that
 * asks for the tensor (on) or the one that leaves it unbuilt (!on) says it; NULL for any other
 * cond. */
const char *shardmap_vswitch(uint8_t cond, bool on);
/* The error for checkpoint tensor t, matched by rule ru at layer i where ru's condition does
 * not hold: WT_EUNSUPPORTED naming the config.json keys that make the tensor unknown there. */
int shardmap_cond_refused(const sm_ctx *x, const sm_rule *ru, const ckpt_tensor *t, int64_t i,
                          wt_errbuf *err);

/* Validate the layout for every rank and, unless dry, add the outputs. */
int shardmap_plan_instances(sm_ctx *x, wt_errbuf *err);
/* ", use tp_size 1, 2, 4 or 8" for the current ep_size (empty if none works). */
void shardmap_suggest_tp(const sm_ctx *x, char *buf, size_t cap);

/* plan_excl.c: entry k matches an exclusion under its checkpoint name or its
 * canonical name (alias layouts). */
bool shardmap_entry_excluded(const sm_ctx *x, size_t k);
/* The WT_ELAYOUT error for fused entries [a, a+n) of which nex are excluded:
 * names up to 2 excluded and 2 other parts. No tp size is suggested (none
 * changes which parts a pattern matches). */
int shardmap_partly_excluded(const sm_ctx *x, size_t a, size_t n, size_t nex, wt_errbuf *err);

/* Rows of t and elements per row, as the planner and the producer cut it: a 1-D
 * [N] is [N, 1] (0 rows for an empty tensor, 1 for a scalar), a 2-D [N, K] is
 * itself, and a stack of 3 or more dimensions is a matrix of its last
 * dimension ([E, a, b] is [E*a, b], as the expert stacks the rules emit), so a
 * stacked checkpoint tensor (GraniteMoE experts) is cut like the outputs. */
static inline int64_t sm_trows(const ckpt_tensor *t)
{
	if (t->ndim < 3)
		return t->ndim >= 1 ? t->shape[0] : 1;
	int64_t rows = 1;
	for (int k = 0; k + 1 < t->ndim; k++)
		rows *= t->shape[k];
	return rows;
}

static inline int64_t sm_tcols(const ckpt_tensor *t)
{
	if (t->ndim >= 3)
		return t->shape[t->ndim - 1];
	return t->ndim == 2 ? t->shape[1] : 1;
}

#endif
