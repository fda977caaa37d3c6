/*
 * cfg_kind.h — the reference's family table (cfg_kind.c) and the switches its rows set
 * (cfg_switch.c), internal to reference/.
 */
#ifndef WT_REFERENCE_CFG_KIND_H
#define WT_REFERENCE_CFG_KIND_H

#include "reference/reference_int.h"

/* Families whose switches cfg_fam.c sets. */
enum {
	FAM_PHI3 = 1,
	FAM_STARCODER2,
	FAM_DEEPSEEK_V2,
	FAM_GLM,
	FAM_GLM4,
	FAM_OLMO2,
	FAM_GRANITE,
	FAM_GRANITEMOE,
	FAM_OLMOE,
	FAM_OLMO,
	FAM_PHIMOE,
	FAM_GPT_OSS,
	FAM_LLAMA4,
	FAM_GLM4_MOE,
	FAM_QWEN3_NEXT,
	FAM_ERNIE,
	FAM_COHERE,
	FAM_COHERE2,
	FAM_QWEN3_VL_MOE,
	FAM_OLMO3,
	FAM_EXAONE4,
	FAM_DOTS1,
	FAM_ACT, /* Llama's math with hidden_act read (silu, gelu variants; others refused) */
	FAM_SMOLLM3,
	FAM_APERTUS,
	FAM_ARCEE,
	FAM_LFM2,
	FAM_GRANITE4,
	FAM_HUNYUAN,
	FAM_BAMBA,
	FAM_NEMOTRON,
	FAM_MINIMAX,
	FAM_JAMBA,
	FAM_NEOX,
	FAM_PHI,
	FAM_FLEX_OLMO,
	FAM_VAULTGEMMA,
	FAM_DBRX,
	FAM_STABLELM,
	FAM_MINISTRAL,
	FAM_FALCONH1,
	FAM_MPT,
	FAM_LONGCAT,
	FAM_GPT2,
	FAM_MAMBA,
	FAM_FALCON_MAMBA,
	FAM_OPT,
	FAM_GPTJ,
	FAM_BLOOM,
	FAM_PERSIMMON,
	FAM_FALCON,
	FAM_MAMBA2,
	FAM_CHAMELEON,
	FAM_ARIA,
	FAM_ZAMBA2,
	FAM_GEMMA3N,
	FAM_WHISPER,
	FAM_CLIP,
	FAM_INTERNLM2,
	FAM_MINIMAX_M2,
	FAM_NEMOTRON_H,
	FAM_SIGLIP,
	FAM_CHATGLM,
	FAM_EXAONE,
	FAM_QWEN,
	FAM_BAICHUAN,
	FAM_MINICPM,
	FAM_MINICPM3,
	FAM_LFM2_MOE,
	FAM_ORION,
	FAM_TELECHAT2,
	FAM_JAIS,
	FAM_ARCTIC,
	FAM_GROK1,
	FAM_BAILING,
	FAM_BAILING_V2,
	FAM_AFMOE,
	FAM_STEP3,
	FAM_MIMO_V2,
	FAM_TELEFLM,
	FAM_SOLAR,
	FAM_DEEPSEEK_MOE,
	FAM_OURO,
	FAM_PLAMO3,
	FAM_JAIS2
};

/* One row per planner family: the reference's kind and where its switches come from. */
struct family_row {
	const char *family;
	ref_kind kind;
	bool qk_norm;
	int gemma; /* generation: the Gemma switches of ref_cfg (cfg_gemma.c) */
	int fam;   /* FAM_*: the switches of cfg_fam.c */
};

/* c's switches from family's row r (cfg_switch.c): the heads the name carries, the decoder's,
 * the MoE's, the mixers' and the layout's, in that order (a later step ORs into switches an
 * earlier one set). */
void ref_kind_switches(ref_cfg *c, const char *family, const struct family_row *r);

/* The planner's family -> c's kind and the family switches (qk_norm, gemma, the FAM_*
 * switches of cfg_fam.c and the others); WT_EUNSUPPORTED naming arch and family when the
 * reference has no forward pass for it. */
int ref_kind_of(const char *family, const char *arch, ref_cfg *c, wt_errbuf *err);

#endif
