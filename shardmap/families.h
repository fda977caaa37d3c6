/*
 * families.h — every family table of shardmap/ (each defined in its family_*.c), for the
 * registry (registry.c) and the few places that name one family.
 */
#ifndef WT_SHARDMAP_FAMILIES_H
#define WT_SHARDMAP_FAMILIES_H

#include "shardmap/shardmap_int.h"

extern const sm_family shardmap_family_llama;
extern const sm_family shardmap_family_mistral;
extern const sm_family shardmap_family_qwen2;
extern const sm_family shardmap_family_qwen3;
extern const sm_family shardmap_family_mixtral;
extern const sm_family shardmap_family_qwen2_moe;
extern const sm_family shardmap_family_qwen3_moe;
extern const sm_family shardmap_family_olmoe;
extern const sm_family shardmap_family_phimoe;
extern const sm_family shardmap_family_deepseek_v3;
extern const sm_family shardmap_family_deepseek_v32; /* family_deepseek.c */
extern const sm_family shardmap_family_deepseek_v2;
extern const sm_family shardmap_family_mistral_large3; /* family_deepseek.c */
extern const sm_family shardmap_family_glm4_moe;
extern const sm_family shardmap_family_dots1;
extern const sm_family shardmap_family_seed_oss;
extern const sm_family shardmap_family_smollm3;
extern const sm_family shardmap_family_ernie4_5;
extern const sm_family shardmap_family_ernie4_5_moe;
extern const sm_family shardmap_family_ernie45_vl; /* family_ernie45vl.c */
extern const sm_family shardmap_family_bert;
extern const sm_family shardmap_family_roberta;
extern const sm_family shardmap_family_xlm_roberta;
extern const sm_family shardmap_family_roberta_cls;
extern const sm_family shardmap_family_xlm_roberta_cls;
extern const sm_family shardmap_family_qwen2_vl;
extern const sm_family shardmap_family_phi3;
extern const sm_family shardmap_family_starcoder2;
extern const sm_family shardmap_family_glm;
extern const sm_family shardmap_family_glm4;
extern const sm_family shardmap_family_olmo2;
extern const sm_family shardmap_family_olmo;
extern const sm_family shardmap_family_granite;
extern const sm_family shardmap_family_granitemoe;
extern const sm_family shardmap_family_granitemoeshared;
extern const sm_family shardmap_family_gemma;
extern const sm_family shardmap_family_gemma2;
extern const sm_family shardmap_family_gemma3_text;
extern const sm_family shardmap_family_qwen2_5_vl;
extern const sm_family shardmap_family_gemma3;
extern const sm_family shardmap_family_mistral3;
extern const sm_family shardmap_family_glm4v;
extern const sm_family shardmap_family_glm4v_moe;
extern const sm_family shardmap_family_apertus;
extern const sm_family shardmap_family_arcee;
extern const sm_family shardmap_family_lfm2;
extern const sm_family shardmap_family_lfm2_vl;
extern const sm_family shardmap_family_gpt_oss;
extern const sm_family shardmap_family_llama4;
extern const sm_family shardmap_family_llama4_text;
extern const sm_family shardmap_family_qwen3_next;
extern const sm_family shardmap_family_cohere;
extern const sm_family shardmap_family_cohere2;
extern const sm_family shardmap_family_qwen3_vl;
extern const sm_family shardmap_family_qwen3_vl_moe;
extern const sm_family shardmap_family_olmo3;
extern const sm_family shardmap_family_exaone4;
extern const sm_family shardmap_family_granitemoehybrid;
extern const sm_family shardmap_family_hunyuan_v1_dense;
extern const sm_family shardmap_family_hunyuan_moe;
extern const sm_family shardmap_family_hunyuan_vl;
extern const sm_family shardmap_family_bamba;
extern const sm_family shardmap_family_nemotron;
extern const sm_family shardmap_family_jais2;
extern const sm_family shardmap_family_minimax;
extern const sm_family shardmap_family_minimax_vl_01; /* family_minimax_vl.c */
extern const sm_family shardmap_family_kimi_vl;       /* family_kimi_vl.c */
extern const sm_family shardmap_family_kimi_linear;   /* family_kimi_linear.c */
extern const sm_family shardmap_family_phi3v;         /* family_phi3v.c */
extern const sm_family shardmap_family_molmo;         /* family_molmo.c */
extern const sm_family shardmap_family_keye;          /* family_keye.c */
extern const sm_family shardmap_family_isaac;         /* family_isaac.c */
extern const sm_family shardmap_family_bagel;         /* family_bagel.c */
extern const sm_family shardmap_family_hcx;           /* family_hcx.c */
extern const sm_family shardmap_family_hcx_v2;        /* family_hcx.c */
extern const sm_family shardmap_family_nano_vl;       /* family_nano_vl.c */
extern const sm_family shardmap_family_dots_ocr;      /* family_dots_ocr.c */
extern const sm_family shardmap_family_paddleocr_vl;  /* family_paddleocr_vl.c */
extern const sm_family shardmap_family_jamba;
extern const sm_family shardmap_family_gpt_neox;
extern const sm_family shardmap_family_phi;
extern const sm_family shardmap_family_flex_olmo;
extern const sm_family shardmap_family_vaultgemma;
extern const sm_family shardmap_family_dbrx;
extern const sm_family shardmap_family_stablelm;
extern const sm_family shardmap_family_ministral;
extern const sm_family shardmap_family_falcon_h1;
extern const sm_family shardmap_family_mpt;
extern const sm_family shardmap_family_longcat_flash;
extern const sm_family shardmap_family_gpt2;
extern const sm_family shardmap_family_gpt_bigcode;
extern const sm_family shardmap_family_llava;
extern const sm_family shardmap_family_llava_next;
extern const sm_family shardmap_family_mamba;
extern const sm_family shardmap_family_falcon_mamba;
extern const sm_family shardmap_family_opt;
extern const sm_family shardmap_family_gptj;
extern const sm_family shardmap_family_bloom;
extern const sm_family shardmap_family_falcon;
extern const sm_family shardmap_family_persimmon;
extern const sm_family shardmap_family_fuyu;
extern const sm_family shardmap_family_blip2;
extern const sm_family shardmap_family_chameleon;
extern const sm_family shardmap_family_mamba2;
extern const sm_family shardmap_family_idefics3;
extern const sm_family shardmap_family_smolvlm;
extern const sm_family shardmap_family_paligemma;
extern const sm_family shardmap_family_aya_vision;
extern const sm_family shardmap_family_llava_onevision;
extern const sm_family shardmap_family_bee; /* family_bee.c */
extern const sm_family shardmap_family_cohere2_vision;
extern const sm_family shardmap_family_llava_next_video;
extern const sm_family shardmap_family_rvl; /* family_rvl.c: R-4B */
extern const sm_family shardmap_family_qwen2_audio;
extern const sm_family shardmap_family_internvl;
extern const sm_family shardmap_family_internvl_chat;     /* family_internvl_chat.c */
extern const sm_family shardmap_family_internvl_chat_il2; /* its InternLM2 table */
extern const sm_family shardmap_family_nvlm_d;            /* family_internvl_chat.c */
extern const sm_family shardmap_family_ovis;              /* family_ovis.c */
extern const sm_family shardmap_family_ovis2_5;           /* family_ovis2_5.c */
extern const sm_family shardmap_family_deepseek_vl2;      /* family_deepseek_vl2.c */
extern const sm_family shardmap_family_deepseek_ocr;      /* family_deepseek_ocr.c */
extern const sm_family shardmap_family_minicpmv;          /* family_minicpmv.c */
extern const sm_family shardmap_family_modernbert;
extern const sm_family shardmap_family_modernbert_cls;
extern const sm_family shardmap_family_granite_speech;
extern const sm_family shardmap_family_aria;
extern const sm_family shardmap_family_voxtral;
extern const sm_family shardmap_family_glmasr;
extern const sm_family shardmap_family_audioflamingo3;
extern const sm_family shardmap_family_ultravox; /* family_ultravox.c */
extern const sm_family shardmap_family_mllama;
extern const sm_family shardmap_family_zamba2;
extern const sm_family shardmap_family_llama_cls;
extern const sm_family shardmap_family_mistral_cls;
extern const sm_family shardmap_family_qwen2_cls;
extern const sm_family shardmap_family_qwen3_cls;
extern const sm_family shardmap_family_llama_bidir_cls; /* family_seqcls.c */
extern const sm_family shardmap_family_bert_cls;
extern const sm_family shardmap_family_bert_tok;
extern const sm_family shardmap_family_qwen2_5_omni;
extern const sm_family shardmap_family_gemma3n_text;
extern const sm_family shardmap_family_llama_emb;
extern const sm_family shardmap_family_mistral_emb;
extern const sm_family shardmap_family_qwen2_emb;
extern const sm_family shardmap_family_gemma2_emb;
extern const sm_family shardmap_family_gemma3_text_emb;
extern const sm_family shardmap_family_llama_bidir_emb; /* family_emb.c */
extern const sm_family shardmap_family_llama_eagle3;    /* family_eagle.c */
extern const sm_family shardmap_family_llama_eagle;     /* family_eagle.c */
extern const sm_family shardmap_family_medusa;          /* family_drafts.c */
extern const sm_family shardmap_family_mlp_speculator;  /* family_drafts.c */
extern const sm_family shardmap_family_deepseek_mtp;    /* family_mtp.c */
extern const sm_family shardmap_family_glm4_moe_mtp;    /* family_mtp.c */
extern const sm_family shardmap_family_mimo_mtp;        /* family_mimo_mtp.c */
extern const sm_family shardmap_family_qwen3_next_mtp;  /* family_qwen3_next_mtp.c */
extern const sm_family shardmap_family_ernie_mtp;       /* family_ernie_mtp.c */
extern const sm_family shardmap_family_qwen2_rm;
extern const sm_family shardmap_family_qwen2_prm;
extern const sm_family shardmap_family_qwen3_omni_moe;
extern const sm_family shardmap_family_whisper;
extern const sm_family shardmap_family_gpt2_cls;
extern const sm_family shardmap_family_clip;
extern const sm_family shardmap_family_internlm2;
extern const sm_family shardmap_family_internlm2_ve;
extern const sm_family shardmap_family_internlm2_rm;
extern const sm_family shardmap_family_minimax_m2;
extern const sm_family shardmap_family_nemotron_h;
extern const sm_family shardmap_family_siglip;         /* family_clip.c */
extern const sm_family shardmap_family_jamba_cls;      /* family_jamba.c */
extern const sm_family shardmap_family_modernbert_tok; /* family_modernbert_cls.c */
extern const sm_family shardmap_family_chatglm;
extern const sm_family shardmap_family_glm4v_old;
extern const sm_family shardmap_family_exaone;
extern const sm_family shardmap_family_qwen;
extern const sm_family shardmap_family_baichuan;
extern const sm_family shardmap_family_minicpm;   /* family_llama.c */
extern const sm_family shardmap_family_internlm3; /* family_llama.c */
extern const sm_family shardmap_family_minicpm3;  /* family_minicpm3.c */
extern const sm_family shardmap_family_lfm2_moe;  /* family_lfm2.c */
extern const sm_family shardmap_family_internlm;  /* family_llama.c */
extern const sm_family shardmap_family_orion;     /* family_stablelm.c */
extern const sm_family shardmap_family_telechat2; /* family_telechat2.c */
extern const sm_family shardmap_family_jais;      /* family_gpt2.c */
extern const sm_family shardmap_family_arctic;    /* family_arctic.c */
extern const sm_family shardmap_family_grok1;     /* family_grok1.c */

/* family_bailing.c */
extern const sm_family shardmap_family_bailing_moe;
/* family_bailing_v2.c */
extern const sm_family shardmap_family_bailing_moe_v2;
extern const sm_family shardmap_family_afmoe;  /* family_afmoe.c */
extern const sm_family shardmap_family_xverse; /* family_llama.c */
extern const sm_family shardmap_family_aquila; /* family_llama.c */
/* family_llama.c: Tele-FLM */
extern const sm_family shardmap_family_teleflm;
extern const sm_family shardmap_family_solar; /* family_llama.c */
extern const sm_family shardmap_family_mimo;  /* family_mimo.c */
/* family_deepseek.c */
extern const sm_family shardmap_family_deepseek;
extern const sm_family shardmap_family_ouro;         /* family_ouro.c */
extern const sm_family shardmap_family_nemotron_nas; /* family_decilm.c */
extern const sm_family shardmap_family_step3_text;   /* family_step3.c */
extern const sm_family shardmap_family_step3_vl;     /* family_step3_vl.c */
extern const sm_family shardmap_family_plamo3;       /* family_plamo3.c */
extern const sm_family shardmap_family_plamo2;       /* family_plamo2.c */
/* family_llama.c: openPangu-Embedded */
extern const sm_family shardmap_family_pangu_dense;
/* family_pangu_moe.c: openPangu-Ultra-MoE */
extern const sm_family shardmap_family_pangu_ultra_moe;
/* family_pangu_v2.c: openPangu-Pro-MoE-V2 */
extern const sm_family shardmap_family_pangu_pro_moe_v2;
/* family_mimo_v2.c */
extern const sm_family shardmap_family_mimo_v2_flash;
/* family_nomic_bert.c: NomicBertModel */
extern const sm_family shardmap_family_nomic_bert;
/* family_gte.c: GteNewModel, GteNewForSequenceClassification */
extern const sm_family shardmap_family_gte_new;
extern const sm_family shardmap_family_gte_new_cls;
/* family_bert_cls.c: BertSpladeSparseEmbeddingModel */
extern const sm_family shardmap_family_bert_splade;
extern const sm_family shardmap_family_jina_vl;  /* family_qwen2vl.c */
extern const sm_family shardmap_family_tarsier2; /* family_qwen2vl.c: qwen2_vl's arch_variant */
/* family_mistral3.c: mistral3's arch_variant (LightOnOCRForConditionalGeneration) */
extern const sm_family shardmap_family_lightonocr;
/* family_qwen2vl.c: qwen2_5_vl's arch_variant (OpenCUAForConditionalGeneration) */
extern const sm_family shardmap_family_opencua;

#endif
