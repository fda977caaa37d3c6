/*
 * own.c — the families whose checkpoints keep their own tensor names (GPT-NeoX, InternLM2,
 * ChatGLM, Qwen, GPT-2, Mamba, DBRX, LongCat-Flash, AFMoE, Step 3, Ouro, ...): which one a
 * set's names are, and the set renamed to the names the reference passes read (each
 * family's renaming in its own file). Split from reference.c.
 */
#include <stdbool.h>
#include <stddef.h>

#include "reference/afmoe.h"
#include "reference/grok1.h"
#include "reference/ouro.h"
#include "reference/plamo3.h"
#include "reference/reference_int.h"
#include "reference/step3.h"

/* Whose own checkpoint names set s holds (the first that applies: flags overlap, GPT-J's
 * config sets Phi's), read renamed by ref_rename_own. */
typedef enum {
	OWN_NONE = 0,
	OWN_NEOX,      /* GPT-NeoX, Phi, Persimmon, BLOOM, Falcon (neox.c) */
	OWN_INTERNLM2, /* under Llama's names (internlm2.c) */
	OWN_CHATGLM,   /* under Llama's names (chatglm.c) */
	OWN_EXAONE,    /* under Llama's names (exaone.c) */
	OWN_QWEN,      /* under Llama's names (qwen.c) */
	OWN_BAICHUAN,  /* under Llama's names (baichuan.c) */
	OWN_TELECHAT2, /* under Llama's names (telechat2.c) */
	OWN_GROK1,     /* under Mixtral's and Gemma 2's names (grok1.c) */
	OWN_BAILING,   /* under Llama's names (bailing.c) */
	OWN_GPT2,      /* GPT-2's and CLIP's (gpt2.c, clip.c) */
	OWN_GPTJ,      /* under Phi's names (gptj.c) */
	OWN_MAMBA,     /* Mamba's under Jamba's, Nemotron-H's under Granite 4.0's */
	OWN_ZAMBA2,    /* the hybrid layers' mixers under the Mamba layers' names */
	OWN_DBRX,      /* DBRX's / MPT's under Mixtral's / StarCoder2's (dbrx.c) */
	OWN_LONGCAT,   /* as virtual layers (longcat.c) */
	OWN_AFMOE,     /* under Gemma 2's and DeepSeek-V3's names (afmoe.c) */
	OWN_STEP3,     /* under DeepSeek-MoE's names (step3.c) */
	OWN_OURO,      /* under Gemma 2's sandwich names (ouro.c) */
	OWN_PLAMO3,    /* under Gemma 3's names, norms offset (plamo3.c, PLaMo 2's plamo2.c) */
} own_kind;

static own_kind own_names(const ref_cfg *c, ref_set *s)
{
	if ((c->neox && ref_set_find(s, "gpt_neox.embed_in.weight") != NULL) ||
	    ((c->phi || c->persimmon) && ref_set_find(s, "model.final_layernorm.weight") != NULL) ||
	    ((c->bloom || c->falcon) && ref_bloom_ckpt(s)))
		return OWN_NEOX;
	if (c->internlm2 && ref_internlm2_named(s))
		return OWN_INTERNLM2;
	if (c->glm == 3 && ref_chatglm_named(s))
		return OWN_CHATGLM;
	if (c->exaone && ref_exaone_named(s))
		return OWN_EXAONE;
	if (c->qwen && ref_qwen_named(s))
		return OWN_QWEN;
	if (c->baichuan && ref_baichuan_named(s))
		return OWN_BAICHUAN;
	if (c->telechat2 && ref_telechat2_named(s))
		return OWN_TELECHAT2;
	if (c->grok && ref_grok1_named(s))
		return OWN_GROK1;
	if ((c->bailing || c->bailing_v2) && ref_bailing_named(s))
		return OWN_BAILING;
	if ((c->gpt2 || c->clip) && ref_set_find(s, "model.embed_tokens.weight") == NULL)
		return OWN_GPT2;
	if (c->gptj && ref_set_find(s, "transformer.wte.weight") != NULL)
		return OWN_GPTJ;
	if ((c->mamba_lm || c->nh) && ref_set_find(s, "backbone.embeddings.weight") != NULL)
		return OWN_MAMBA;
	if (c->zamba2 && ref_z2_named(s))
		return OWN_ZAMBA2;
	if ((c->dbrx || c->mpt) && ref_set_find(s, "transformer.wte.weight") != NULL)
		return OWN_DBRX;
	if (c->longcat && ref_set_find(s, "model.layers.0.input_layernorm.0.weight") != NULL)
		return OWN_LONGCAT;
	if ((c->afmoe || c->pangu_moe) && ref_afmoe_named(s)) /* the same sandwich names */
		return OWN_AFMOE;
	if (c->step3 && ref_step3_named(s))
		return OWN_STEP3;
	if (c->ouro && ref_ouro_named(s))
		return OWN_OURO;
	if (c->plamo3 && ref_plamo3_named(s))
		return OWN_PLAMO3;
	return OWN_NONE;
}

bool ref_own_names(const ref_cfg *c, ref_set *s)
{
	return own_names(c, s) != OWN_NONE;
}

/* Set ck, under its family's own names (k: own_names), into r under the names the pass reads;
 * ckpt: ck is the checkpoint (its packed / interleaved forms), else one rank's shard. */
int ref_rename_own(const ref_cfg *c, ref_set *ck, ref_set *r, bool ckpt, wt_errbuf *err)
{
	switch (own_names(c, ck)) {
	case OWN_NEOX:
		return ref_neox_rename(c, ck, r, ckpt, err);
	case OWN_INTERNLM2:
		return ref_internlm2_rename(c, ck, r, ckpt, err);
	case OWN_CHATGLM:
		return ref_chatglm_rename(ck, r, err);
	case OWN_EXAONE:
		return ref_exaone_rename(ck, r, err);
	case OWN_QWEN:
		return ref_qwen_rename(ck, r, ckpt, err);
	case OWN_BAICHUAN:
		return ref_baichuan_rename(c, ck, r, ckpt, err);
	case OWN_TELECHAT2:
		return ref_telechat2_rename(c, ck, r, err);
	case OWN_GROK1:
		return ref_grok1_rename(c, ck, r, err);
	case OWN_BAILING:
		return ref_bailing_rename(ck, r, err);
	case OWN_GPT2:
		return c->clip ? ref_clip_rename(ck, r, err) : ref_gpt2_rename(c, ck, r, ckpt, err);
	case OWN_GPTJ:
		return ref_gptj_rename(ck, r, err);
	case OWN_MAMBA:
		return c->nh ? ref_nh_rename(c, ck, r, err) : ref_mamba_rename(c, ck, r, err);
	case OWN_ZAMBA2:
		return ref_z2_rename(ck, r, err);
	case OWN_DBRX:
		return ref_dbrx_rename(c, ck, r, err);
	case OWN_LONGCAT:
		return ref_lc_rename(c, ck, r, err);
	case OWN_AFMOE:
		return ref_afmoe_rename(ck, r, err);
	case OWN_STEP3:
		return ref_step3_rename(c, ck, r, ckpt, err);
	case OWN_OURO:
		return ref_ouro_rename(c, ck, r, err);
	case OWN_PLAMO3:
		return c->plamo2 ? ref_plamo2_rename(c, ck, r, ckpt, err)
		                 : ref_plamo3_rename(c, ck, r, err);
	case OWN_NONE:
		break;
	}
	return wt_seterr(err, WT_EINVAL, "reference: no renaming for this checkpoint");
}
