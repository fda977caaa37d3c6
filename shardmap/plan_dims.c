/*
 * plan_dims.c — the dims of a plan (sm_dims) from config.json: every dim
 * config.json gives checked against SM_DIM_MAX, the family's derived dims
 * (head dims, expert counts and sizes, the SigLIP tower's patch grid); the
 * value of each symbolic dim a rule's shape names is plan_symval.c's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/common.h"
#include "shardmap/families.h"
#include "shardmap/family_rules.h"
#include "shardmap/plan_int.h"
#include "shardmap/tower_defaults.h"

/* Config dims above this are not a model: every product of two stays far
 * inside int64 (products of three are checked), and no dim can make the
 * planner allocate what it never will need. The largest real ones (vocab
 * ~2^18, hidden ~2^15) are far below. */
#define SM_DIM_MAX (1ll << 24)

/* Every dim config.json gives (0 = absent) within 0..SM_DIM_MAX. */
static int check_config_dims(const ckpt_config *c, wt_errbuf *err)
{
	const struct {
		const char *name;
		int64_t v;
	} f[] = {
	    {"num_attention_heads", c->num_attention_heads},
	    {"num_key_value_heads", c->num_key_value_heads},
	    {"hidden_size", c->hidden_size},
	    {"head_dim", c->head_dim},
	    {"intermediate_size", c->intermediate_size},
	    {"vocab_size", c->vocab_size},
	    {"num_experts", c->num_experts},
	    {"zero_expert_num", c->zero_expert_num},
	    {"moe_intermediate_size", c->moe_intermediate_size},
	    {"shared_expert_intermediate_size", c->shared_expert_intermediate_size},
	    {"n_shared_experts", c->n_shared_experts},
	    {"num_hidden_layers", c->num_hidden_layers},
	    {"q_lora_rank", c->q_lora_rank},
	    {"kv_lora_rank", c->kv_lora_rank},
	    {"qk_nope_head_dim", c->qk_nope_head_dim},
	    {"qk_rope_head_dim", c->qk_rope_head_dim},
	    {"v_head_dim", c->v_head_dim},
	    {"vision_config.depth", c->v_depth},
	    {"vision_config.embed_dim", c->v_embed_dim},
	    {"vision_config.num_heads", c->v_num_heads},
	    {"vision_config.spatial_merge_size", c->v_spatial_merge_size},
	    {"vision_config.in_chans", c->v_in_chans},
	    {"vision_config.temporal_patch_size", c->v_temporal_patch_size},
	    {"vision_config.patch_size", c->v_patch_size},
	    {"vision_config.hidden_size", c->v_hidden_size},
	    {"vision_config.intermediate_size", c->v_intermediate_size},
	    {"vision_config.out_hidden_size", c->v_out_hidden_size},
	    {"vision_config.num_hidden_layers", c->v_num_layers},
	    {"the Q-Former's hidden_size", c->qf_hidden},
	    {"the Q-Former's num_hidden_layers", c->qf_layers},
	    {"the Q-Former's num_attention_heads", c->qf_heads},
	    {"the Q-Former's intermediate_size", c->qf_inter},
	    {"the Q-Former's encoder_hidden_size", c->qf_enc},
	    {"num_query_tokens", c->num_query_tokens},
	    {"vision_config.num_attention_heads", c->v_num_attn_heads},
	    {"vision_config.image_size", c->v_image_size},
	    {"intermediate_size_mlp", c->intermediate_size_mlp},
	    {"vision_config.vision_output_dim", c->v_output_dim},
	    {"vision_config.projector_input_dim", c->v_proj_in_dim},
	    {"vision_config.projector_output_dim", c->v_proj_out_dim},
	    {"vision_config.num_position_embeddings", c->v_num_pos},
	    {"vision_config.init_pos_emb_height", c->v_pos_h},
	    {"vision_config.init_pos_emb_width", c->v_pos_w},
	    {"vision_config.num_global_layers", c->ml_global_layers},
	    {"vision_config.max_num_tiles", c->ml_max_tiles},
	    {"linear_num_key_heads", c->lin_num_k_heads},
	    {"linear_num_value_heads", c->lin_num_v_heads},
	    {"linear_key_head_dim", c->lin_k_head_dim},
	    {"linear_value_head_dim", c->lin_v_head_dim},
	    {"linear_conv_kernel_dim", c->lin_conv_kernel},
	    {"mamba_n_heads", c->mamba_n_heads},
	    {"mamba_n_groups", c->mamba_n_groups},
	    {"mamba_d_state", c->mamba_d_state},
	    {"mamba_d_conv", c->mamba_d_conv},
	    {"mamba_expand", c->mamba_expand},
	    {"mamba_d_head", c->mamba_d_head},
	    {"mamba_dt_rank", c->mamba_dt_rank},
	    {"altup_num_inputs", c->g3n_altup},
	    {"laurel_rank", c->g3n_laurel},
	    {"hidden_size_per_layer_input", c->g3n_ple},
	    {"vocab_size_per_layer_input", c->g3n_ple_vocab},
	    {"visual_tokenizer_config.vocab_size", c->ov_vocab},
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v > SM_DIM_MAX)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: %s %" PRId64
			                 " is not a model's (at most %lld)",
			                 f[i].name, f[i].v, SM_DIM_MAX);
	if (c->v_embed_dim > 0 && !(c->v_mlp_ratio > 0 && c->v_mlp_ratio <= 64))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config.mlp_ratio %g is outside (0, 64]",
		                 c->v_mlp_ratio);
	return WT_OK;
}

/* A ViT tower's vision_config with its class's defaults for absent keys (SigLIP for Gemma 3,
 * Idefics3 / SmolVLM's, CLIP for LLaVA, Pixtral for Mistral 3); learned positions
 * (image_size / patch_size)^2 as the class's embeddings' num_patches, plus cls_rows class
 * token rows (CLIPVisionEmbeddings' num_positions). */
static void vit_class_dims(const ckpt_config *c, const sm_vis_class *k, int64_t cls_rows,
                           sm_dims *d)
{
	d->vis_depth = c->v_num_layers > 0 ? c->v_num_layers : k->layers;
	d->vis_heads = c->v_num_attn_heads > 0 ? c->v_num_attn_heads : k->heads;
	d->vis_embed = c->v_hidden_size > 0 ? c->v_hidden_size : k->hidden;
	d->vis_inter = c->v_intermediate_size > 0 ? c->v_intermediate_size : k->inter;
	int64_t patch = c->v_patch_given ? c->v_patch_size : k->patch;
	int64_t side = (c->v_image_size > 0 ? c->v_image_size : k->image) / patch;
	d->vis_patch = patch;
	d->vis_positions = side * side + cls_rows; /* side at most SM_DIM_MAX: no overflow */
}

/* InternVL's vision_config (the loader applied InternVLVisionConfig's defaults); positions
 * (image_size / patch_size)^2 + 1 as InternVLVisionEmbeddings' (the class token); InternViT's
 * n dummy heads (NVLM-D's) counted with its heads, its attention (H + n) x d wide. */
static void internvl_dims(const ckpt_config *c, int64_t n, sm_dims *d)
{
	d->vis_depth = c->v_num_layers;
	d->vis_heads = c->v_num_attn_heads + n;
	d->vis_embed = c->v_hidden_size;
	d->vis_attn = c->v_num_attn_heads > 0 && c->v_hidden_size % c->v_num_attn_heads == 0
	                  ? d->vis_heads * (c->v_hidden_size / c->v_num_attn_heads)
	                  : c->v_hidden_size; /* heads not dividing it: refused by the check */
	d->vis_inter = c->v_intermediate_size;
	int64_t side = c->v_image_size / c->v_patch_size;
	d->vis_patch = c->v_patch_size;
	d->vis_positions = side * side + 1; /* side at most SM_DIM_MAX: no overflow */
}

/* LFM2-VL's SigLIP2 vision_config (the loader applied Siglip2VisionConfig's defaults):
 * positions num_patches (Siglip2VisionEmbeddings' nn.Embedding), no image_size. */
static void siglip2_dims(const ckpt_config *c, sm_dims *d)
{
	d->vis_depth = c->v_num_layers;
	d->vis_heads = c->v_num_attn_heads;
	d->vis_embed = c->v_hidden_size;
	d->vis_inter = c->v_intermediate_size;
	d->vis_patch = c->v_patch_size;
	d->vis_positions = c->v_num_pos;
	d->vis_proj_in = c->v_proj_in_dim;
}

/* Llama 4 (Llama4TextConfig): dense MLPs intermediate_size_mlp, the routed and the shared
 * expert intermediate_size (Llama4TextMLP's default, Llama4TextExperts' expert_dim). The
 * vision tower (Llama4VisionConfig, its defaults for absent keys): positions
 * (image_size / patch_size)^2 + 1 (Llama4VisionModel's num_patches: the class token),
 * the unfolded patch num_channels * patch_size^2 (Llama4UnfoldConvolution). */
static int llama4_dims(const ckpt_config *c, sm_dims *d, wt_errbuf *err)
{
	d->inter = c->intermediate_size_mlp;
	d->moe_inter = c->intermediate_size;
	d->shared_inter = c->intermediate_size > 0 ? c->intermediate_size : 0;
	d->vis_depth = c->v_num_layers > 0 ? c->v_num_layers : SM_L4V_LAYERS;
	d->vis_heads = c->v_num_attn_heads > 0 ? c->v_num_attn_heads : SM_L4V_HEADS;
	d->vis_embed = c->v_hidden_size > 0 ? c->v_hidden_size : SM_L4V_HIDDEN;
	d->vis_inter = c->v_intermediate_size > 0 ? c->v_intermediate_size : SM_L4V_INTER;
	d->vis_out = c->v_output_dim > 0 ? c->v_output_dim : SM_L4V_OUT;
	d->vis_proj_in = c->v_proj_in_dim > 0 ? c->v_proj_in_dim : SM_L4V_PROJ;
	d->vis_proj_out = c->v_proj_out_dim > 0 ? c->v_proj_out_dim : SM_L4V_PROJ;
	int64_t patch = c->v_patch_size; /* the loader's default 14 is Llama 4's */
	int64_t side = (c->v_image_size > 0 ? c->v_image_size : SM_L4V_IMAGE) / patch;
	d->vis_patch = patch;
	d->vis_positions = side * side + 1; /* side at most SM_DIM_MAX: no overflow */
	uint64_t unf;
	if (!wt_mul_u64((uint64_t)(c->v_in_chans > 0 ? c->v_in_chans : 0), (uint64_t)patch, &unf) ||
	    !wt_mul_u64(unf, (uint64_t)patch, &unf) || unf > (uint64_t)SM_DIM_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config num_channels x patch_size^2 is not a "
		                 "model's (at most %lld)",
		                 SM_DIM_MAX);
	d->vis_unfold = (int64_t)unf;
	return WT_OK;
}

/* Qwen3-VL (Qwen3VLVisionConfig, its defaults for absent keys): width hidden_size, MLP
 * intermediate_size, merger output out_hidden_size (vision_output_dim's dim), pos_embed
 * num_position_embeddings rows, one deepstack merger per deepstack_visual_indexes entry
 * (the list's length, so [] is none). */
static void qwen3_vl_dims(const ckpt_config *c, sm_dims *d)
{
	d->vis_depth = c->v_depth > 0 ? c->v_depth : SM_Q3V_DEPTH;
	d->vis_heads = c->v_num_heads > 0 ? c->v_num_heads : SM_Q3V_HEADS;
	d->vis_embed = c->v_hidden_size > 0 ? c->v_hidden_size : SM_Q3V_HIDDEN;
	d->vis_inter = c->v_intermediate_size > 0 ? c->v_intermediate_size : SM_Q3V_INTER;
	d->vis_out = c->v_out_hidden_size > 0 ? c->v_out_hidden_size : SM_Q3V_OUT;
	d->vis_positions = c->v_num_pos > 0 ? c->v_num_pos : SM_Q3V_POS;
	d->vis_patch = c->v_patch_given ? c->v_patch_size : SM_Q3V_PATCH;
	d->vis_deep = c->has_deepstack ? (int64_t)c->n_deepstack : SM_Q3V_DEEP;
}

/* GLM-4.1V / 4.5V (Glm4vVisionConfig, its defaults for absent keys): width hidden_size,
 * each block's gated MLP out_hidden_size wide ([VI], as the merger's proj), the merger's
 * gated MLP intermediate_size wide ([VM]), the downsample's output out_hidden_size
 * ([VOD]), (image_size // patch_size)^2 learned positions. */
/* Kimi-VL's MoonViT (the loader applied MoonViTConfig's defaults): its position table
 * [init_pos_emb_height, init_pos_emb_width, VE], the projector VE x kh x kw wide (each at most
 * SM_DIM_MAX, kh and kw at most 64: no overflow). */
static void moonvit_dims(const ckpt_config *c, sm_dims *d)
{
	d->vis_depth = c->v_num_layers;
	d->vis_heads = c->v_num_attn_heads;
	d->vis_embed = c->v_hidden_size;
	d->vis_inter = c->v_intermediate_size;
	d->vis_patch = c->v_patch_size;
	d->vis_pos_h = c->v_pos_h;
	d->vis_pos_w = c->v_pos_w;
}

static void glm4v_dims(const ckpt_config *c, sm_dims *d)
{
	d->vis_depth = c->v_depth > 0 ? c->v_depth : SM_G4V_DEPTH;
	d->vis_heads = c->v_num_heads > 0 ? c->v_num_heads : SM_G4V_HEADS;
	d->vis_embed = c->v_hidden_size > 0 ? c->v_hidden_size : SM_G4V_HIDDEN;
	d->vis_out = c->v_out_hidden_size > 0 ? c->v_out_hidden_size : SM_G4V_OUT;
	d->vis_inter = d->vis_out;
	d->vis_patch = c->v_patch_given ? c->v_patch_size : SM_G4V_PATCH;
	int64_t side = (c->v_image_size > 0 ? c->v_image_size : SM_G4V_IMAGE) / d->vis_patch;
	d->vis_positions = side * side; /* side at most SM_DIM_MAX: no overflow */
}

/* The recurrent mixers' sizes: Qwen3-Next's gated delta net, LFM2's short conv (and its MLP
 * size rule), the Mamba2 / Mamba mixers of Granite 4.0, Bamba, Falcon-H1 and Jamba. */
static void mixer_dims(const sm_ctx *x, sm_dims *d)
{
	const ckpt_config *c = x->cfg;
	d->lin_k_heads = c->lin_num_k_heads;
	d->lin_v_heads = c->lin_num_v_heads;
	d->lin_k_dim = c->lin_k_head_dim;
	d->lin_v_dim = c->lin_v_head_dim;
	d->lin_kernel = c->lin_conv_kernel;
	if (x->fam->lfm2) { /* Lfm2MLP's size rule; the short conv's taps */
		d->inter = shardmap_lfm2_ff_dim(c, NULL);
		d->lin_kernel = c->lfm2_conv_l_cache;
	}
	d->m_heads = c->mamba_n_heads;
	d->m_groups = c->mamba_n_groups;
	d->m_state = c->mamba_d_state;
	d->m_kernel = c->mamba_d_conv;
	d->m_inter = x->fam->mamba_lm      ? c->intermediate_size /* Mamba's */
	             : c->mamba_d_ssm > 0  ? c->mamba_d_ssm       /* Falcon-H1's */
	             : c->mamba_expand > 0 ? c->mamba_expand * c->hidden_size
	                                   : -1;
	d->m_dt_rank = c->mamba_dt_rank > 0 ? c->mamba_dt_rank : (c->hidden_size + 15) / 16;
	d->z_rank = c->z2_adapter_rank;
}

/* a x b into *out when both are in [1, SM_DIM_MAX] and so is the product */
static bool dim_mul(int64_t a, int64_t b, int64_t *out)
{
	if (a < 1 || b < 1 || a > SM_DIM_MAX || b > SM_DIM_MAX || a * b > SM_DIM_MAX)
		return false;
	*out = a * b;
	return true;
}

/* Gemma 3n's AltUp, per-layer input and Laurel sizes (-1 for the other families); the per-layer
 * inputs' num_hidden_layers x hidden_size_per_layer_input and altup_num_inputs^2 (the
 * prediction coefficients' rows) at most 2^24. */
static int g3n_dims(const ckpt_config *c, sm_dims *d, wt_errbuf *err)
{
	d->g3n_alt = c->g3n_altup;
	d->g3n_ple = c->g3n_ple;
	d->g3n_laurel = c->g3n_laurel;
	d->g3n_pvocab = c->g3n_ple_vocab;
	d->g3n_lp = -1;
	int64_t sq;
	if (c->g3n_altup < 0)
		return WT_OK;
	if (!dim_mul(c->num_hidden_layers, c->g3n_ple, &d->g3n_lp) ||
	    !dim_mul(c->g3n_altup, c->g3n_altup, &sq))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_hidden_layers %" PRId64
		                 " x hidden_size_per_layer_input %" PRId64
		                 " or altup_num_inputs %" PRId64 " squared is not a model's (at "
		                 "most %lld)",
		                 c->num_hidden_layers, c->g3n_ple, c->g3n_altup, SM_DIM_MAX);
	return WT_OK;
}

/* A BLIP-2 Q-Former's sizes (the loader's qf_*, class defaults applied; Granite Speech's
 * projector, BLIP-2's qformer) and its q queries. */
static void qformer_dims(const ckpt_config *c, int64_t q, sm_dims *d)
{
	d->qf_hidden = c->qf_hidden;
	d->qf_inter = c->qf_inter;
	d->qf_enc = c->qf_enc;
	d->qf_layers = c->qf_layers;
	d->qf_queries = q;
}

/* Granite Speech's encoder_config and projector_config (the loader's gs_*, class defaults
 * applied): the conformer on the vision dims, its attention / conv sizes and the Q-Former's
 * own; a product past 2^24 is not a model's. */
static int gspeech_dims(const ckpt_config *c, sm_dims *d, wt_errbuf *err)
{
	d->vis_depth = c->gs_layers;
	d->vis_heads = c->gs_heads;
	d->vis_embed = c->gs_hidden;
	d->vis_in_chans = c->gs_in;
	d->vis_proj_out = c->gs_out;
	d->gs_dim_head = c->gs_dim_head;
	d->gs_kernel = c->gs_kernel;
	qformer_dims(c, c->gs_downsample > 0 ? c->gs_window / c->gs_downsample : 0, d);
	if (!dim_mul(c->gs_hidden, c->gs_ff_mult, &d->vis_inter) ||
	    !dim_mul(c->gs_heads, c->gs_dim_head, &d->gs_attn) ||
	    !dim_mul(c->gs_hidden, c->gs_conv_exp, &d->gs_conv) ||
	    !dim_mul(2, c->gs_max_pos, &d->vis_positions))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: encoder_config's hidden_dim x feedforward_mult, "
		                 "num_heads x dim_head, hidden_dim x conv_expansion_factor and 2 x "
		                 "max_pos_emb are not a model's (each at most %lld)",
		                 SM_DIM_MAX);
	d->vis_positions += 1; /* rel_pos_emb: distances -max_pos_emb .. max_pos_emb */
	return WT_OK;
}

/* Mllama's vision_config (the loader applied MllamaVisionConfig's defaults): positions
 * (image_size / patch_size)^2 + 1 (the class token), the global transformer's layers on
 * qf_layers, the tile embeddings' sizes; a product past 2^24 is not a model's. */
static int mllama_dims(const ckpt_config *c, sm_dims *d, wt_errbuf *err)
{
	d->vis_depth = c->v_num_layers;
	d->vis_heads = c->v_num_attn_heads;
	d->vis_embed = c->v_hidden_size;
	d->vis_inter = c->v_intermediate_size;
	d->vis_patch = c->v_patch_size;
	d->vis_out = c->v_output_dim;
	d->vis_in_chans = c->v_in_chans;
	d->qf_layers = c->ml_global_layers;
	d->ml_aspects = c->ml_n_aspect + 1;
	int64_t side = c->v_image_size / c->v_patch_size, sq;
	if (side < 1)
		return shardmap_vision_patch_err(c->v_image_size, c->v_patch_size, err);
	if (!dim_mul(side, side, &sq) ||
	    !dim_mul(c->ml_max_tiles, c->v_hidden_size, &d->ml_tiles_hid) ||
	    !dim_mul(sq + 1, d->ml_tiles_hid, &d->ml_tiles_pos))
		return wt_seterr(
		    err, WT_ECORRUPT,
		    "config.json: vision_config's max_num_tiles x hidden_size x "
		    "((image_size / patch_size)^2 + 1) is not a model's (at most %lld)",
		    SM_DIM_MAX);
	d->vis_positions = sq + 1;
	return WT_OK;
}

/* Qwen2.5-Omni's audio encoder (the loader's a_*, Qwen2_5OmniAudioEncoderConfig's defaults
 * applied): its own dims beside the vision tower's, encoder_layers on qf_layers. */
static int omni_audio_dims(const ckpt_config *c, sm_dims *d, wt_errbuf *err)
{
	const struct {
		const char *name;
		int64_t v;
	} f[] = {
	    {"encoder_layers", c->a_layers}, {"encoder_attention_heads", c->a_heads},
	    {"encoder_ffn_dim", c->a_ffn},   {"d_model", c->a_d_model},
	    {"num_mel_bins", c->a_mel},      {"output_dim", c->a_out_dim},
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v > SM_DIM_MAX)
			return wt_seterr(err, WT_ECORRUPT,
			                 "config.json: thinker_config.audio_config.%s %" PRId64
			                 " is not a model's (at most %lld)",
			                 f[i].name, f[i].v, SM_DIM_MAX);
	d->qf_layers = c->a_layers;
	d->au_embed = c->a_d_model;
	d->au_inter = c->a_ffn;
	d->au_mel = c->a_mel;
	if (c->a_dsh > SM_DIM_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: thinker_config.audio_config.downsample_hidden_size "
		                 "%" PRId64 " is not a model's (at most %lld)",
		                 c->a_dsh, SM_DIM_MAX);
	/* Qwen3-Omni: conv_out takes DH x ((((mel + 1) // 2 + 1) // 2 + 1) // 2) (0 for
	 * Qwen2.5-Omni, whose a_dsh is 0) */
	d->au_dsh = c->a_dsh;
	d->au_conv_in = c->a_dsh * ((((c->a_mel + 1) / 2 + 1) / 2 + 1) / 2);
	return WT_OK;
}

/* The vision tower's sizes (and Llama 4's), by the family's tower kind; the merged width
 * checked against overflow. */
/* Ultravox's projector (the loader's uv_*, UltravoxConfig's defaults): ln_pre / linear_1's
 * input d_model x stack_factor ([VM]), linear_1's hidden_size rows ([VPI]), linear_2's input
 * half of them under swiglu ([VPO]; the loader refused an odd one). */
static int ultravox_dims(const ckpt_config *c, sm_dims *d, wt_errbuf *err)
{
	uint64_t vm;
	if (!wt_mul_u64((uint64_t)c->a_d_model, (uint64_t)c->uv_stack, &vm) ||
	    vm > (uint64_t)SM_DIM_MAX || c->uv_hidden > SM_DIM_MAX)
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: audio_config.d_model %" PRId64
		                 " x stack_factor %" PRId64 " or hidden_size %" PRId64
		                 " is not a model's (at most %lld)",
		                 c->a_d_model, c->uv_stack, c->uv_hidden, SM_DIM_MAX);
	d->vis_merged = (int64_t)vm;
	d->vis_proj_in = c->uv_hidden;
	d->vis_proj_out = c->uv_swiglu ? c->uv_hidden / 2 : c->uv_hidden;
	return WT_OK;
}

static int vision_dims(const sm_ctx *x, sm_dims *d, wt_errbuf *err)
{
	const ckpt_config *c = x->cfg;
	int rv;
	if (x->fam->mllama)
		return mllama_dims(c, d, err);
	if (x->fam->llama4) {
		if ((rv = llama4_dims(c, d, err)) != WT_OK)
			return rv;
	} else if ((x->fam->internvl && c->has_vision) || x->fam->blip2) {
		/* BLIP-2's: the same, the class token's row too */
		internvl_dims(c, x->fam->vis_dummy_heads, d);
	} else if (x->fam->qwen3_vl)
		qwen3_vl_dims(c, d);
	else if (x->fam->glm4v)
		glm4v_dims(c, d);
	else if (x->fam->moonvit)
		moonvit_dims(c, d);
	else if (x->fam->pixtral) {
		vit_class_dims(c, &shardmap_vis_pixtral, 0, d);
		d->vis_positions = 0; /* 2-D RoPE: no learned positions */
	} else if (x->fam->siglip2)
		siglip2_dims(c, d);
	else if (x->fam->clip)
		vit_class_dims(c, &shardmap_vis_clip, 1, d);
	else if (x->fam->idefics3)
		vit_class_dims(c, &shardmap_vis_i3v, 0, d);
	else if (x->fam->vision_siglip)
		vit_class_dims(c, &shardmap_vis_siglip, 0, d);
	else if (x->fam->vision_gated) {
		d->vis_embed = c->v_hidden_size;
		d->vis_inter = c->v_intermediate_size;
	} else {
		d->vis_embed = c->v_embed_dim;
		d->vis_inter = (int64_t)((double)c->v_embed_dim * c->v_mlp_ratio);
	}
	/* three factors: checked (a product past SM_DIM_MAX^2 means nothing anyway) */
	uint64_t vm;
	if (!wt_mul_u64((uint64_t)(d->vis_embed > 0 ? d->vis_embed : 0),
	                (uint64_t)(c->v_spatial_merge_size > 0 ? c->v_spatial_merge_size : 0),
	                &vm) ||
	    !wt_mul_u64(vm, (uint64_t)(c->v_spatial_merge_size > 0 ? c->v_spatial_merge_size : 0),
	                &vm) ||
	    vm > (uint64_t)(SM_DIM_MAX * SM_DIM_MAX))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: vision_config embed_dim x spatial_merge_size^2 is "
		                 "not a model's");
	d->vis_merged = (int64_t)vm;
	if (x->fam->glm4v) /* the merger's MLP, not embed x merge^2 */
		d->vis_merged = c->v_intermediate_size > 0 ? c->v_intermediate_size : SM_G4V_INTER;
	d->vis_merge = c->v_spatial_merge_size;
	if (x->fam->moonvit) /* merge_kernel_size [kh, kw], each at most 64 */
		d->vis_merged = d->vis_embed * c->v_merge_h * c->v_merge_w;
	if (x->fam->aya_vision) { /* at most SM_DIM_MAX: no overflow */
		d->vis_proj_in = c->v_proj_in_dim > 0 ? c->v_proj_in_dim : c->hidden_size;
		d->vis_proj_out = d->vis_proj_in / 2;
	}
	d->vis_in_chans = c->v_in_chans;
	d->vis_vocab = c->ov_vocab; /* Ovis's (checked above: at most SM_DIM_MAX) */
	d->vis_temporal_patch = c->v_temporal_patch_size;
	uint64_t unf; /* Fuyu's vision_embed_tokens columns, LFM2-VL's patch Linear's */
	if ((x->fam->fuyu || x->fam->siglip2 || x->fam->ernie_vl) &&
	    (!wt_mul_u64((uint64_t)c->v_in_chans, (uint64_t)c->v_patch_size, &unf) ||
	     !wt_mul_u64(unf, (uint64_t)c->v_patch_size, &unf) || unf > (uint64_t)SM_DIM_MAX))
		return wt_seterr(err, WT_ECORRUPT,
		                 "config.json: num_channels x patch_size^2 is not a model's (at "
		                 "most %lld)",
		                 SM_DIM_MAX);
	if (x->fam->fuyu || x->fam->siglip2 || x->fam->ernie_vl)
		d->vis_unfold = (int64_t)unf;
	if (!x->fam->vision_siglip && !x->fam->qwen3_vl && !x->fam->glm4v)
		d->vis_patch = c->v_patch_size;
	if (x->fam->gspeech)
		return gspeech_dims(c, d, err);
	if (x->fam->aria) /* the loader's bound: at most 2^24 */
		d->qf_queries = c->aria_queries;
	if (x->fam->minicpmv) /* the loader's bound: at most 2^24 */
		d->qf_queries = c->mcv_query_num;
	if (x->fam->omni) /* Qwen2.5-Omni's audio_config (loader defaults): beside the tower */
		return omni_audio_dims(c, d, err);
	if (x->fam->audio) { /* Qwen2-Audio's audio_config (loader defaults) */
		d->vis_depth = c->a_layers;
		d->vis_heads = c->a_heads;
		d->vis_embed = c->a_d_model;
		d->vis_inter = c->a_ffn;
		d->vis_in_chans = c->a_mel;
		d->vis_positions = c->a_max_pos;
	}
	return x->fam->ultravox ? ultravox_dims(c, d, err) : WT_OK;
}

int shardmap_derive_dims(sm_ctx *x, wt_errbuf *err)
{
	const ckpt_config *c = x->cfg;
	sm_dims *d = &x->dm;
	int rv = check_config_dims(c, err);
	if (rv != WT_OK)
		return rv;
	d->n_heads = c->num_attention_heads;
	d->n_kv_heads =
	    c->num_key_value_heads > 0 ? c->num_key_value_heads : c->num_attention_heads;
	d->hidden = c->hidden_size;
	d->head_dim =
	    c->head_dim > 0 ? c->head_dim : (d->n_heads > 0 ? d->hidden / d->n_heads : -1);
	d->inter = c->intermediate_size;
	d->vocab = c->vocab_size;
	d->n_experts = c->num_experts > 0 ? c->num_experts : 0;
	d->n_zero = c->zero_expert_num > 0 ? c->zero_expert_num : 0;
	d->moe_inter =
	    c->moe_intermediate_size > 0 ? c->moe_intermediate_size : c->intermediate_size;
	d->moe_inter_v = c->ev_moe_inter_v;
	if (c->shared_expert_intermediate_size > 0)
		d->shared_inter = c->shared_expert_intermediate_size;
	else if (c->n_shared_experts > 0)
		d->shared_inter = d->moe_inter * c->n_shared_experts;
	else
		d->shared_inter = 0; /* no shared experts */
	d->n_layers = c->num_hidden_layers;
	d->layer_lo = 0;
	if (x->fam->mtp) { /* the MTP layers only: [L, L + num_nextn_predict_layers) */
		d->layer_lo = c->num_hidden_layers;
		d->n_layers = c->num_hidden_layers + c->mtp_layers;
	}
	if (x->fam->mtp_from0) /* MiMo's: [0, num_nextn_predict_layers) */
		d->n_layers = c->mtp_layers;
	d->rt_lo = x->fam->mtp_rt_shift ? c->num_hidden_layers : 0;
	d->q_lora_rank = c->q_lora_rank;
	d->kv_lora_rank = c->kv_lora_rank;
	d->qk_nope_dim = c->qk_nope_head_dim;
	d->qk_rope_dim = c->qk_rope_head_dim;
	d->v_head_dim = c->v_head_dim;
	d->n_sinks = c->sink_number;
	d->eagle_fc_in = 3 * (c->eagle_target_hidden > 0 ? c->eagle_target_hidden : c->hidden_size);
	d->draft_vocab = c->draft_vocab_size > 0 ? c->draft_vocab_size : c->vocab_size;
	d->vis_depth = c->v_depth;
	d->vis_heads = c->v_num_heads;
	mixer_dims(x, d);
	d->opt_wep = c->opt_word_embed_proj_dim;
	d->opt_pos = c->opt_max_pos > 0 ? c->opt_max_pos + 2 : -1;
	d->rob_pos = c->rob_max_pos;
	d->rob_types = c->rob_types;
	d->rob_labels = c->rob_num_labels;
	if ((rv = g3n_dims(c, d, err)) != WT_OK)
		return rv;
	if (x->fam->blip2)
		qformer_dims(c, c->num_query_tokens, d);
	if ((rv = vision_dims(x, d, err)) != WT_OK)
		return rv;
	if (d->n_heads <= 0 || d->hidden <= 0 || d->vocab <= 0 || d->n_layers < 0)
		return wt_seterr(err, WT_ESHAPE,
		                 "config.json: num_attention_heads %" PRId64
		                 ", hidden_size %" PRId64 ", vocab_size %" PRId64
		                 ", num_hidden_layers %" PRId64 " must be set and positive",
		                 d->n_heads, d->hidden, d->vocab, d->n_layers);
	if (d->head_dim < 1)
		return wt_seterr(
		    err, WT_ESHAPE,
		    "config.json: hidden_size %" PRId64 " / num_attention_heads %" PRId64
		    " gives a head_dim of 0; such a model needs head_dim in its config",
		    d->hidden, d->n_heads);
	if ((x->fam == &shardmap_family_deepseek_v3 || x->fam == &shardmap_family_deepseek_v32 ||
	     x->fam == &shardmap_family_mistral_large3 ||
	     x->fam == &shardmap_family_deepseek_mtp) &&
	    (d->kv_lora_rank <= 0 || d->qk_nope_dim <= 0 || d->qk_rope_dim <= 0 ||
	     d->v_head_dim <= 0))
		return wt_seterr(
		    err, WT_ESHAPE,
		    "config.json: DeepSeek-V3 (and V3.2) needs kv_lora_rank, qk_nope_head_dim, "
		    "qk_rope_head_dim and v_head_dim");
	return WT_OK;
}

int shardmap_vision_heads_err(const char *key, int64_t heads, int64_t hidden, wt_errbuf *err)
{
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: vision_config.%s %" PRId64
	                 " does not divide hidden_size %" PRId64,
	                 key, heads, hidden);
}

int shardmap_vision_patch_err(int64_t image, int64_t patch, wt_errbuf *err)
{
	return wt_seterr(err, WT_ECORRUPT,
	                 "config.json: vision_config.image_size %" PRId64
	                 " is below patch_size %" PRId64 " (no patch)",
	                 image, patch);
}

int64_t shardmap_block_lo(const sm_ctx *x, const sm_rule *r)
{
	return r->flags & (SM_F_VIS | SM_F_DEEP | SM_F_QF) ? 0 : x->dm.layer_lo;
}

const char *shardmap_layers_key(const sm_family *f)
{
	return f->layers_key != NULL ? f->layers_key /* Whisper's, an MLPSpeculator's */
	       : f->mtp              ? "num_hidden_layers + num_nextn_predict_layers"
	                             : "num_hidden_layers";
}
