/*
 * plan_symval.c — the value of each symbolic dim a rule's shape names (docs/format.md
 * section 3), from a plan's dims (sm_dims, plan_dims.c).
 */
#include "shardmap/plan_int.h"

/* The recurrent mixers' dims (Qwen3-Next's linear attention, LFM2's short conv, the Mamba2 /
 * Mamba mixers); -1 for a symbol that is none of them. */
static int64_t mixer_dim_value(const sm_dims *d, int sym)
{
	switch (sym) {
	case SM_D_LQKVZ:
		return 2 * d->lin_k_heads * d->lin_k_dim + 2 * d->lin_v_heads * d->lin_v_dim;
	case SM_D_LBA:
		return 2 * d->lin_v_heads;
	case SM_D_LCONV:
		return 2 * d->lin_k_heads * d->lin_k_dim + d->lin_v_heads * d->lin_v_dim;
	case SM_D_LKER:
		return d->lin_kernel;
	case SM_D_LHV:
		return d->lin_v_heads;
	case SM_D_LVD:
		return d->lin_v_heads * d->lin_v_dim;
	case SM_D_LDV:
		return d->lin_v_dim;
	case SM_D_HID3:
		return 3 * d->hidden;
	case SM_D_MIN:
		return 2 * d->m_inter + 2 * d->m_groups * d->m_state + d->m_heads;
	case SM_D_MCONV:
		return d->m_inter + 2 * d->m_groups * d->m_state;
	case SM_D_MKER:
		return d->m_kernel;
	case SM_D_MH:
		return d->m_heads;
	case SM_D_MI:
		return d->m_inter;
	case SM_D_MI2:
		return 2 * d->m_inter;
	case SM_D_MXP:
		return d->m_dt_rank + 2 * d->m_state;
	case SM_D_MR:
		return d->m_dt_rank;
	case SM_D_MN:
		return d->m_state;
	default:
		return -1;
	}
}

/* Mllama's vocabulary and tile-embedding dims; -1 for a symbol that is none of them. */
static int64_t mllama_dim_value(const sm_dims *d, int sym)
{
	switch (sym) {
	case SM_D_V8:
		return d->vocab + 8;
	case SM_D_MLAR:
		return d->ml_aspects;
	case SM_D_MLTH:
		return d->ml_tiles_hid;
	case SM_D_MLTE:
		return d->ml_tiles_pos;
	default:
		return -1;
	}
}

/* Granite Speech's conformer and Q-Former dims; -1 for a symbol that is none of them. */
static int64_t gspeech_dim_value(const sm_dims *d, int sym)
{
	switch (sym) {
	case SM_D_GSA:
		return d->gs_attn;
	case SM_D_GSA2:
		return 2 * d->gs_attn;
	case SM_D_GSDH:
		return d->gs_dim_head;
	case SM_D_GSC:
		return d->gs_conv;
	case SM_D_GSC2:
		return 2 * d->gs_conv;
	case SM_D_GSK:
		return d->gs_kernel;
	case SM_D_QFH:
		return d->qf_hidden;
	case SM_D_QFI:
		return d->qf_inter;
	case SM_D_QFE:
		return d->qf_enc;
	case SM_D_QFQ:
		return d->qf_queries;
	default:
		return -1;
	}
}

/* The vision towers' symbolic dims (shardmap_dim_value's). */
static int64_t vision_dim_value(const sm_dims *d, int sym)
{
	switch (sym) {
	case SM_D_VE:
		return d->vis_embed;
	case SM_D_V3E:
		return 3 * d->vis_embed;
	case SM_D_VA:
		return d->vis_attn;
	case SM_D_V3A:
		return 3 * d->vis_attn;
	case SM_D_VI:
		return d->vis_inter;
	case SM_D_VM:
		return d->vis_merged;
	case SM_D_VCH:
		return d->vis_in_chans;
	case SM_D_VTP:
		return d->vis_temporal_patch;
	case SM_D_VP:
		return d->vis_patch;
	case SM_D_VNP:
		return d->vis_positions;
	case SM_D_VUNF:
		return d->vis_unfold;
	case SM_D_VPI:
		return d->vis_proj_in;
	case SM_D_VPO:
		return d->vis_proj_out;
	case SM_D_VOD:
		return d->vis_out;
	case SM_D_VMS:
		return d->vis_merge;
	case SM_D_VPH:
		return d->vis_pos_h;
	case SM_D_VPW:
		return d->vis_pos_w;
	case SM_D_OVV:
		return d->vis_vocab;
	case SM_D_OVH:
		return d->vis_vocab - 5;
	case SM_D_OV4:
		return d->vis_vocab - 4;
	default:
		return -1;
	}
}

/* The audio encoders' and Gemma 3n's symbolic dims (shardmap_dim_value's). */
static int64_t encoder_dim_value(const sm_dims *d, int sym)
{
	switch (sym) {
	case SM_D_AE:
		return d->au_embed;
	case SM_D_AI:
		return d->au_inter;
	case SM_D_AMEL:
		return d->au_mel;
	case SM_D_ADH:
		return d->au_dsh;
	case SM_D_ACO:
		return d->au_conv_in;
	case SM_D_G3NA:
		return d->g3n_alt;
	case SM_D_G3NA2:
		return d->g3n_alt * d->g3n_alt;
	case SM_D_G3NP:
		return d->g3n_ple;
	case SM_D_G3NLP:
		return d->g3n_lp;
	case SM_D_G3NLR:
		return d->g3n_laurel;
	case SM_D_G3NVP:
		return d->g3n_pvocab;
	default:
		return -1;
	}
}

/* The sizes of MLA's low-rank projections and of the fused / doubled / per-head tensors:
 * *v set and true, or false when sym is none of them. */
static bool fused_dim_value(const sm_dims *d, int sym, int64_t *v)
{
	switch (sym) {
	case SM_D_QLORA:
		*v = d->q_lora_rank;
		return true;
	case SM_D_KVLORA:
		*v = d->kv_lora_rank;
		return true;
	case SM_D_KVA:
		*v = d->kv_lora_rank + d->qk_rope_dim;
		return true;
	case SM_D_QB:
		*v = d->n_heads * (d->qk_nope_dim + d->qk_rope_dim);
		return true;
	case SM_D_KVB:
		*v = d->n_heads * (d->qk_nope_dim + d->v_head_dim);
		return true;
	case SM_D_OV:
		*v = d->n_heads * d->v_head_dim;
		return true;
	case SM_D_QKV:
		*v = (d->n_heads + 2 * d->n_kv_heads) * d->head_dim;
		return true;
	case SM_D_I2:
		*v = 2 * d->inter;
		return true;
	case SM_D_IE2:
		*v = 2 * d->moe_inter;
		return true;
	case SM_D_ISH2:
		*v = 2 * d->shared_inter;
		return true;
	case SM_D_Q2:
		*v = 2 * d->n_heads * d->head_dim;
		return true;
	case SM_D_KVH:
		*v = d->n_kv_heads;
		return true;
	case SM_D_Q3:
		*v = 3 * d->n_heads * d->head_dim;
		return true;
	case SM_D_KV2:
		*v = 2 * d->n_kv_heads * d->head_dim;
		return true;
	case SM_D_KVV:
		*v = d->n_kv_heads * (d->v_head_dim > 0 ? d->v_head_dim : d->head_dim);
		return true;
	case SM_D_VHD:
		*v = d->v_head_dim > 0 ? d->v_head_dim : d->head_dim;
		return true;
	case SM_D_SINKS:
		*v = d->n_sinks;
		return true;
	case SM_D_HID2:
		*v = 2 * d->hidden;
		return true;
	case SM_D_HID4:
		*v = 4 * d->hidden;
		return true;
	case SM_D_EFC:
		*v = d->eagle_fc_in;
		return true;
	case SM_D_DV:
		*v = d->draft_vocab;
		return true;
	default:
		return false;
	}
}

/* The text model's plain sizes (then fused_dim_value's): *v set and true, or false when sym is
 * none of them. */
static bool text_dim_value(const sm_dims *d, int sym, int64_t *v)
{
	switch (sym) {
	case SM_D_ONE:
		*v = 1;
		return true;
	case SM_D_HID:
		*v = d->hidden;
		return true;
	case SM_D_Q:
		*v = d->n_heads * d->head_dim;
		return true;
	case SM_D_KV:
		*v = d->n_kv_heads * d->head_dim;
		return true;
	case SM_D_HD:
		*v = d->head_dim;
		return true;
	case SM_D_I:
		*v = d->inter;
		return true;
	case SM_D_V:
		*v = d->vocab;
		return true;
	case SM_D_E:
		*v = d->n_experts;
		return true;
	case SM_D_IE:
		*v = d->moe_inter;
		return true;
	case SM_D_IEV:
		*v = d->moe_inter_v;
		return true;
	case SM_D_VM2: /* at most 2 x SM_DIM_MAX^2: no overflow */
		*v = 2 * d->vis_merged;
		return true;
	case SM_D_ISH:
		*v = d->shared_inter;
		return true;
	case SM_D_WEP:
		*v = d->opt_wep;
		return true;
	case SM_D_OPOS:
		*v = d->opt_pos;
		return true;
	case SM_D_RPOS:
		*v = d->rob_pos;
		return true;
	case SM_D_RTYPES:
		*v = d->rob_types;
		return true;
	case SM_D_NLAB:
		*v = d->rob_labels;
		return true;
	case SM_D_H: /* GPT-OSS attention sinks, one per head */
		*v = d->n_heads;
		return true;
	case SM_D_EZ:
		*v = d->n_experts + d->n_zero;
		return true;
	case SM_D_ZAR:
		*v = d->z_rank;
		return true;
	default:
		return fused_dim_value(d, sym, v);
	}
}

int64_t shardmap_dim_value(const sm_dims *d, int sym)
{
	int64_t v;
	if (text_dim_value(d, sym, &v))
		return v;
	switch (sym) {
	case SM_D_VE:
	case SM_D_V3E:
	case SM_D_VI:
	case SM_D_VM:
	case SM_D_VCH:
	case SM_D_VTP:
	case SM_D_VP:
	case SM_D_VNP:
	case SM_D_VUNF:
	case SM_D_VPI:
	case SM_D_VPO:
	case SM_D_VOD:
	case SM_D_VMS:
	case SM_D_VPH:
	case SM_D_VPW:
	case SM_D_OVV:
	case SM_D_OVH:
	case SM_D_OV4:
	case SM_D_VA:
	case SM_D_V3A:
		return vision_dim_value(d, sym);
	case SM_D_AE:
	case SM_D_AI:
	case SM_D_AMEL:
	case SM_D_ADH:
	case SM_D_ACO:
	case SM_D_G3NA:
	case SM_D_G3NA2:
	case SM_D_G3NP:
	case SM_D_G3NLP:
	case SM_D_G3NLR:
	case SM_D_G3NVP:
		return encoder_dim_value(d, sym);
	default:
		return sym >= SM_D_V8    ? mllama_dim_value(d, sym)
		       : sym >= SM_D_GSA ? gspeech_dim_value(d, sym)
		                         : mixer_dim_value(d, sym);
	}
}
