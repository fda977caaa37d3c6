/*
 * tower_defaults.h — the vision towers' config class defaults (transformers' *VisionConfig
 * classes), for the vision_config keys a checkpoint's config.json leaves out. Read by the
 * families' dimension checks (family_*.c) and plan_dims.c; one place so that a family's
 * checks and the planner's dimensions never disagree on a default.
 */
#ifndef WT_SHARDMAP_TOWER_DEFAULTS_H
#define WT_SHARDMAP_TOWER_DEFAULTS_H

/* Llama4VisionConfig's defaults (transformers 4.54), for absent vision_config keys. */
#define SM_L4V_HIDDEN 768
#define SM_L4V_INTER  5632
#define SM_L4V_LAYERS 34
#define SM_L4V_HEADS  16
#define SM_L4V_IMAGE  448
#define SM_L4V_OUT    7680
#define SM_L4V_PROJ   4096

/* Qwen3VLVisionConfig's defaults (transformers 4.57.1), for absent vision_config keys;
 * in_channels, temporal_patch_size and spatial_merge_size default as the loader's. */
#define SM_Q3V_DEPTH  27
#define SM_Q3V_HIDDEN 1152
#define SM_Q3V_INTER  4304
#define SM_Q3V_HEADS  16
#define SM_Q3V_PATCH  16
#define SM_Q3V_OUT    3584
#define SM_Q3V_POS    2304
#define SM_Q3V_DEEP   3 /* deepstack_visual_indexes [8, 16, 24] */

/* Glm4vVisionConfig's / Glm4vMoeVisionConfig's defaults (transformers 4.57.1), for absent
 * vision_config keys; in_channels, temporal_patch_size and spatial_merge_size default as
 * the loader's. */
#define SM_G4V_DEPTH  24
#define SM_G4V_HIDDEN 1536
#define SM_G4V_HEADS  12
#define SM_G4V_PATCH  14
#define SM_G4V_IMAGE  336
#define SM_G4V_OUT    4096
#define SM_G4V_INTER  13696

/* PixtralVisionConfig's defaults (transformers 4.57.1), for the vision_config keys a
 * Mistral 3 or LLaVA Pixtral-HF config omits (pixtral-12b's gives none of the sizes);
 * num_channels defaults to 3 as in_chans does. */
#define SM_PIX_HIDDEN 1024
#define SM_PIX_INTER  4096
#define SM_PIX_LAYERS 24
#define SM_PIX_HEADS  16
#define SM_PIX_IMAGE  1024
#define SM_PIX_PATCH  16

/* SiglipVisionConfig's defaults (transformers), for the vision_config keys a Gemma 3
 * config omits; num_channels defaults to 3 as in_chans does. */
#define SM_SIGLIP_HIDDEN 768
#define SM_SIGLIP_INTER  3072
#define SM_SIGLIP_LAYERS 12
#define SM_SIGLIP_HEADS  12
#define SM_SIGLIP_IMAGE  224
#define SM_SIGLIP_PATCH  16

/* CLIPVisionConfig's defaults (transformers 4.57.1), for the vision_config keys a LLaVA
 * config omits; num_channels defaults to 3 as in_chans does. */
#define SM_CLIP_HIDDEN 768
#define SM_CLIP_INTER  3072
#define SM_CLIP_LAYERS 12
#define SM_CLIP_HEADS  12
#define SM_CLIP_IMAGE  224
#define SM_CLIP_PATCH  32

/* Idefics3VisionConfig's / SmolVLMVisionConfig's defaults (transformers 4.57.1, the same
 * in both), for absent vision_config keys; num_channels defaults to 3 as in_chans does. */
#define SM_I3V_HIDDEN 1152
#define SM_I3V_INTER  3072
#define SM_I3V_LAYERS 12
#define SM_I3V_HEADS  16
#define SM_I3V_IMAGE  224
#define SM_I3V_PATCH  32

#endif
