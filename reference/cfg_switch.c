/*
 * cfg_switch.c — the switches of ref_cfg that a row of the reference's family table
 * (cfg_kind.c) sets: the encoder / classifier / embedding heads its name carries, the
 * Llama-like decoders' (q/k norms, Gemma, fused checkpoints), the MoE's, the recurrent mixers'
 * and the layout's.
 */
#include <string.h>

#include "reference/cfg_kind.h"

/* The switches are set in this order: a later step ORs into switches an earlier one set. */
/* The encoder, classifier and embedding heads the family name carries. */
static void head_switches(ref_cfg *c, const char *family, const struct family_row *r)
{
	c->modernbert = strncmp(family, "modernbert", 10) == 0;
	c->mb_cls = strcmp(family, "modernbert_cls") == 0;
	c->mb_tok = strcmp(family, "modernbert_tok") == 0;
	c->brope = strcmp(family, "nomic_bert") == 0 ? 1 : !strncmp(family, "gte_new", 7) ? 2 : 0;
	c->roberta =
	    r->kind == REF_BERT && strncmp(family, "bert", 4) != 0 && !c->modernbert && !c->brope;
	c->bt_cls = strcmp(family, "bert_cls") == 0;
	c->bt_tok = strcmp(family, "bert_tok") == 0;
	c->rb_cls = c->roberta && strstr(family, "_cls") != NULL;
	c->rm_head = !strcmp(family, "qwen2_rm") || !strcmp(family, "qwen2_prm") ||
	             !strcmp(family, "jina_vl");
	c->vh_cols = strcmp(family, "internlm2_rm") == 0;
	c->dec_cls = (r->kind == REF_DENSE && strstr(family, "_cls") != NULL) || c->rm_head ||
	             c->vh_cols || strcmp(family, "jamba_cls") == 0;
	c->dec_emb = r->kind == REF_DENSE && strstr(family, "_emb") != NULL;
	c->bidir = strncmp(family, "llama_bidir_", 12) == 0;
}

/* Llama-like decoders: q/k norms, Gemma, fused checkpoints, OLMo, Granite. */
static void decoder_switches(ref_cfg *c, const struct family_row *r)
{
	c->qk_norm = r->qk_norm;
	c->gemma = r->gemma;
	c->fused_ckpt = r->fam == FAM_PHI3 || r->fam == FAM_CHATGLM;
	c->glm = r->fam == FAM_GLM ? 1 : r->fam == FAM_GLM4 ? 2 : r->fam == FAM_CHATGLM ? 3 : 0;
	c->fused_gate_up = c->fused_ckpt || c->glm != 0;
	c->layernorm = c->plain_mlp = r->fam == FAM_STARCODER2;
	c->ds_v2 = r->fam == FAM_DEEPSEEK_V2;
	c->olmo3 = r->fam == FAM_OLMO3;
	c->exaone4 = r->fam == FAM_EXAONE4;
	c->flex_olmo = r->fam == FAM_FLEX_OLMO;
	c->vaultgemma = r->fam == FAM_VAULTGEMMA;
	c->olmo2 = r->fam == FAM_OLMO2 || c->olmo3 || c->exaone4 || c->flex_olmo;
	c->m2 = r->fam == FAM_MINIMAX_M2;
	c->qk_norm_full = (c->olmo2 && !c->exaone4) || r->fam == FAM_OLMOE || c->m2;
	c->norm_free = r->fam == FAM_OLMO;
	c->fh1 = r->fam == FAM_FALCONH1;
	c->bamba = r->fam == FAM_BAMBA || c->fh1;
	c->g4 = r->fam == FAM_GRANITE4 || c->bamba;
	c->granite = r->fam == FAM_GRANITE || r->fam == FAM_GRANITEMOE || r->fam == FAM_GRANITE4;
	c->stacked_experts = r->fam == FAM_GRANITEMOE || r->fam == FAM_GRANITE4;
	if (r->fam == FAM_GRANITE4) { /* the shared MLP is the dense MLP
		                             (shared_mlp.), I its size */
		c->I = c->Is;
		if (c->E == 0) /* num_local_experts 0: no block_sparse_moe */
			c->kind = REF_DENSE;
	}
}

/* MoE and hybrid decoders, PhiMoE to Nemotron. */
static void moe_switches(ref_cfg *c, const struct family_row *r)
{
	c->phimoe = r->fam == FAM_PHIMOE;
	c->layernorm = c->layernorm || c->phimoe;
	c->gpt_oss = r->fam == FAM_GPT_OSS;
	c->llama4 = r->fam == FAM_LLAMA4;
	c->dots1 = r->fam == FAM_DOTS1;
	c->step3 = r->fam == FAM_STEP3;
	c->ds_moe = r->fam == FAM_DEEPSEEK_MOE || c->step3;
	c->bailing_v2 = r->fam == FAM_BAILING_V2;
	c->afmoe = r->fam == FAM_AFMOE;
	c->mimo_v2 = r->fam == FAM_MIMO_V2;
	if (c->mimo_v2 && !(c->l4_moe[0] | c->l4_moe[1] | c->l4_moe[2] | c->l4_moe[3]))
		c->kind = REF_DENSE; /* no moe_layer_freq layer: no MoE key read */
	c->glm4_moe = r->fam == FAM_GLM4_MOE || c->dots1 || c->ds_moe || c->bailing_v2 ||
	              c->afmoe || c->mimo_v2;
	c->q3n = r->fam == FAM_QWEN3_NEXT;
	c->cohere = r->fam == FAM_COHERE ? 1 : r->fam == FAM_COHERE2 ? 2 : 0;
	if (c->q3n && c->E == 0) /* Qwen3NextDecoderLayer: num_experts 0, MLPs */
		c->kind = REF_DENSE;
	c->ernie = r->fam == FAM_ERNIE;
	c->q3vl_moe = r->fam == FAM_QWEN3_VL_MOE;
	c->aria = r->fam == FAM_ARIA;
	c->smollm3 = r->fam == FAM_SMOLLM3;
	c->teleflm = r->fam == FAM_TELEFLM;
	c->read_act = r->fam == FAM_ACT || c->teleflm || r->fam == FAM_SOLAR;
	c->apertus = r->fam == FAM_APERTUS;
	c->nogate = c->apertus || r->fam == FAM_ARCEE;
}

/* State-space mixers: LFM2, Mamba, Jamba, Mamba2, Nemotron-H, Zamba2. */
static void mixer_switches(ref_cfg *c, const struct family_row *r)
{
	c->lfm2 = r->fam == FAM_LFM2;
	c->minimax = r->fam == FAM_MINIMAX;
	c->hunyuan = r->fam == FAM_HUNYUAN;
	c->nemotron = r->fam == FAM_NEMOTRON;
	c->jais2 = r->fam == FAM_JAIS2;
	c->nogate = c->nogate || c->nemotron || c->jais2;
	c->layernorm = c->layernorm || c->nemotron || c->jais2;
	c->m_plain_norm = r->fam == FAM_FALCON_MAMBA;
	c->mamba2 = r->fam == FAM_MAMBA2;
	c->zamba2 = r->fam == FAM_ZAMBA2;
	c->mamba_lm = r->fam == FAM_MAMBA || c->m_plain_norm || c->mamba2 || c->zamba2;
	c->jamba = r->fam == FAM_JAMBA || (c->mamba_lm && !c->mamba2 && !c->zamba2);
	if (c->mamba2) /* Granite 4.0's mixer, Granite's switches at 1.0 */
		c->g4 = c->granite = true;
	c->nh = r->fam == FAM_NEMOTRON_H;
	c->nogate = c->nogate || c->nh; /* the MLP layers' up / down */
	/* Granite 4.0's mixer, no multipliers */
	c->g4 = c->g4 || c->zamba2 || c->nh;
	if (c->jamba && c->E <= 1) /* num_experts 1: every feed_forward dense */
		c->kind = REF_DENSE;
}

/* GPT-2-era layouts (LayerNorms, plain MLPs, fused q/k/v) and the remote-code
 * families. */
static void layout_switches(ref_cfg *c, const char *family, const struct family_row *r)
{
	c->neox = r->fam == FAM_NEOX;
	if (c->neox) /* StarCoder2's norms and MLP, Phi-3's qkv_proj */
		c->layernorm = c->plain_mlp = c->fused_ckpt = true;
	c->phi = r->fam == FAM_PHI;
	if (c->phi) /* StarCoder2's norms and MLP, the parallel block, lm_head.bias
	             */
		c->layernorm = c->plain_mlp = c->neox_par = c->lm_bias = true;
	c->dbrx = r->fam == FAM_DBRX;
	if (c->dbrx) /* PhiMoE's LayerNorms, Phi-3's qkv_proj */
		c->layernorm = c->fused_ckpt = true;
	c->stablelm = r->fam == FAM_STABLELM;
	c->layernorm = c->layernorm || c->stablelm;
	c->ministral = r->fam == FAM_MINISTRAL;
	c->mpt = r->fam == FAM_MPT;
	if (c->mpt) /* StarCoder2's norms and MLP, Phi-3's qkv_proj */
		c->layernorm = c->plain_mlp = c->fused_ckpt = true;
	c->longcat = r->fam == FAM_LONGCAT;
	c->gpt2 = r->fam == FAM_GPT2;
	c->bigcode = c->gpt2 && strcmp(family, "gpt_bigcode") == 0;
	if (c->gpt2) /* StarCoder2's norms and MLP, Phi-3's qkv_proj */
		c->layernorm = c->plain_mlp = c->fused_ckpt = true;
	c->jais = r->fam == FAM_JAIS;
	if (c->jais) /* GPT-2's reading, StarCoder2's norms, Llama's gated MLP */
		c->gpt2 = c->layernorm = c->fused_ckpt = true;
	c->arctic = r->fam == FAM_ARCTIC;
	c->opt = r->fam == FAM_OPT;
	c->whisper = r->fam == FAM_WHISPER;
	c->g3n = r->fam == FAM_GEMMA3N;
	c->gptj = r->fam == FAM_GPTJ;
	if (c->gptj) /* Phi's block, adjacent-pair RoPE */
		c->phi = c->layernorm = c->plain_mlp = c->neox_par = c->lm_bias = c->rope_pairs =
		    true;
	c->bloom = r->fam == FAM_BLOOM;
	if (c->bloom) /* GPT-NeoX's reading, sequential */
		c->layernorm = c->plain_mlp = c->fused_ckpt = true;
	c->persimmon = r->fam == FAM_PERSIMMON;
	if (c->persimmon) /* GPT-NeoX's norms, MLP and qkv_proj */
		c->layernorm = c->plain_mlp = c->fused_ckpt = true;
	c->chameleon = r->fam == FAM_CHAMELEON;
	c->siglip = r->fam == FAM_SIGLIP;
	c->clip = r->fam == FAM_CLIP || c->siglip;
	if (c->clip) /* StarCoder2's norms and MLP, the score head */
		c->layernorm = c->plain_mlp = c->dec_cls = true;
	c->falcon = r->fam == FAM_FALCON;
	if (c->falcon) /* GPT-NeoX's norms, MLP and qkv_proj */
		c->layernorm = c->plain_mlp = c->fused_ckpt = true;
	c->internlm2 = r->fam == FAM_INTERNLM2;
	c->exaone = r->fam == FAM_EXAONE;
	c->qwen = r->fam == FAM_QWEN;
	c->baichuan = r->fam == FAM_BAICHUAN;
	c->telechat2 = r->fam == FAM_TELECHAT2;
	c->minicpm3 = r->fam == FAM_MINICPM3;
	c->minicpm = r->fam == FAM_MINICPM || c->minicpm3;
	c->lfm2_moe = r->fam == FAM_LFM2_MOE;
	c->lfm2 = c->lfm2 || c->lfm2_moe;
	c->orion = r->fam == FAM_ORION;
	c->ouro = r->fam == FAM_OURO;
	c->plamo3 = r->fam == FAM_PLAMO3;
	c->grok = r->fam == FAM_GROK1;
	if (c->orion) /* StableLM's LayerNorms, Llama's RoPE and SwiGLU MLP */
		c->layernorm = c->read_act = true;
	c->solar = r->fam == FAM_SOLAR;
	c->bailing = r->fam == FAM_BAILING;
	if (c->bailing || c->bailing_v2) /* Phi-3's qkv_proj */
		c->fused_ckpt = true;
	/* MiniCPM-MoE (num_experts > 0): vLLM's MiniCPMMoE in every layer, routed as Mixtral's
	 * (softmax, top num_experts_per_tok, renormalized) under mlp. (ref_moe_prefix) */
	if (r->fam == FAM_MINICPM && c->E > 0)
		c->kind = REF_MIXTRAL;
}

void ref_kind_switches(ref_cfg *c, const char *family, const struct family_row *r)
{
	head_switches(c, family, r);
	decoder_switches(c, r);
	moe_switches(c, r);
	mixer_switches(c, r);
	layout_switches(c, family, r);
}
