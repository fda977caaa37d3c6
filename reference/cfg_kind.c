/*
 * cfg_kind.c — the planner's family -> the reference's kind and switches (ref_kind_of,
 * cfg_kind.h): the families' table the reference configuration (cfg.c) starts from.
 */
#include <string.h>

#include "reference/cfg_kind.h"
#include "reference/reference_int.h"

static const struct family_row families[] = {
    {"llama", REF_DENSE, false, 0, 0},
    {"mistral", REF_DENSE, false, 0, 0},
    /* Mistral3ForConditionalGeneration, LightOnOCR: text_config's LM (cfg.c), on text tokens */
    {"mistral3", REF_DENSE, false, 0, 0},
    /* Lfm2ForCausalLM: short-conv / attention layers, SwiGLU (cfg_lfm2.c, lfm2.c) */
    {"lfm2", REF_DENSE, false, 0, FAM_LFM2},
    {"qwen2", REF_DENSE, false, 0, 0},
    /* Qwen2-VL: the language model only, on text tokens, where MRoPE's three
     * position streams are equal and it is the plain 1-D RoPE */
    {"qwen2_vl", REF_DENSE, false, 0, 0},
    {"jina_vl", REF_DENSE, false, 0, 0},    /* qwen2_vl's, then qwen2_rm's score head (rm_head) */
    {"qwen2_5_vl", REF_DENSE, false, 0, 0}, /* Qwen2.5-VL: the same language model */
    /* SeedOssForCausalLM: Llama's math; its biases (q/k/v, o_proj, MLP) are added
     * where the checkpoint has them, which the planner ties to the config's switches */
    {"seed_oss", REF_DENSE, false, 0, FAM_ACT},
    /* SmolLM3ForCausalLM: Llama's math without RoPE on the no_rope_layers 0 layers,
     * sliding windows per layer_types (cfg_smollm3.c) */
    {"smollm3", REF_DENSE, false, 0, FAM_SMOLLM3},
    {"qwen3", REF_DENSE, true, 0, 0},
    {"phi3", REF_DENSE, false, 0, FAM_PHI3},
    {"phi3v", REF_DENSE, false, 0, FAM_PHI3}, /* Phi3VForCausalLM: its LM on text tokens */
    {"starcoder2", REF_DENSE, false, 0, FAM_STARCODER2},
    {"glm", REF_DENSE, false, 0, FAM_GLM},   /* GlmForCausalLM (GLM-4-9B -hf) */
    {"glm4", REF_DENSE, false, 0, FAM_GLM4}, /* Glm4ForCausalLM (GLM-4-0414) */
    /* Olmo2ForCausalLM: q_norm / k_norm over all heads (olmo2) */
    {"olmo2", REF_DENSE, true, 0, FAM_OLMO2},
    /* OlmoeForCausalLM: Llama's pre-norms, OLMo 2's full-width q/k norms, Qwen-MoE's
     * experts and softmax top-k router (norm_topk_prob), every layer MoE */
    {"olmoe", REF_QWEN2_MOE, true, 0, FAM_OLMOE},
    /* OlmoForCausalLM (OLMo 1): Llama with parameter-free LayerNorms */
    {"olmo", REF_DENSE, false, 0, FAM_OLMO},
    /* PhiMoEForCausalLM (Phi-3.5-MoE): Mixtral's experts, LayerNorms with bias,
     * sparsemixer routing, lm_head bias (cfg_phimoe.c) */
    {"phimoe", REF_MIXTRAL, false, 0, FAM_PHIMOE},
    /* GptOssForCausalLM: attention sinks, every layer an "mlp." MoE block with a
     * biased router and biased, clamped-SwiGLU experts (cfg_gpt_oss.c, gpt_oss.c) */
    {"gpt_oss", REF_QWEN2_MOE, false, 0, FAM_GPT_OSS},
    /* Llama4ForConditionalGeneration (its language model, on text tokens) and
     * Llama4ForCausalLM: NoPE layers, chunked attention, L2 q/k norms, dense and MoE
     * feed_forward layers; the kind is set by cfg_llama4.c */
    {"llama4", REF_DENSE, false, 0, FAM_LLAMA4},
    {"llama4_text", REF_DENSE, false, 0, FAM_LLAMA4},
    /* GraniteForCausalLM: Llama with four multipliers */
    {"granite", REF_DENSE, false, 0, FAM_GRANITE},
    /* GraniteMoeForCausalLM: Granite's multipliers, Mixtral's routing (softmax of
     * the top-k logits), experts stacked in the checkpoint */
    {"granitemoe", REF_MIXTRAL, false, 0, FAM_GRANITEMOE},
    /* GraniteMoeSharedForCausalLM: + shared_mlp (input_linear [gate; up], output_linear)
     * added ungated to the experts' sum */
    {"granitemoeshared", REF_MIXTRAL, false, 0, FAM_GRANITEMOE},
    {"gemma", REF_DENSE, false, 1, 0},
    {"gemma2", REF_DENSE, false, 2, 0},
    {"gemma3_text", REF_DENSE, true, 3, 0}, /* Gemma3ForCausalLM */
    /* Gemma3ForConditionalGeneration: its language model, on text tokens */
    {"gemma3", REF_DENSE, true, 3, 0},
    {"mixtral", REF_MIXTRAL, false, 0, 0},
    {"qwen2_moe", REF_QWEN2_MOE, false, 0, 0},
    /* Qwen3-MoE: the same MoE block, no shared expert unless configured */
    {"qwen3_moe", REF_QWEN2_MOE, true, 0, 0},
    {"deepseek_v3", REF_DEEPSEEK, false, 0, 0},
    /* DeepseekV32ForCausalLM: V3's pass; with no more tokens than index_topk the indexer keeps
     * every earlier one, so its sparse MLA is V3's dense MLA (the indexer tensors unread) */
    {"deepseek_v32", REF_DEEPSEEK, false, 0, 0},
    {"pangu_ultra_moe", REF_DEEPSEEK, false, 0, 0}, /* openPangu-Ultra-MoE: cfg_pangu_moe.c */
    {"pangu_pro_moe_v2", REF_DEEPSEEK, false, 0, FAM_GLM4_MOE}, /* V3's MoE: pangu_sink.c */
    {"deepseek_v2", REF_DEEPSEEK, false, 0, FAM_DEEPSEEK_V2},
    {"mistral_large3", REF_DEEPSEEK, false, 0, 0}, /* cfg_ml3.c (cfg.c sets c->ml3) */
    /* Glm4MoeForCausalLM: DeepSeek-V3's MoE under Llama's attention (cfg_fam.c) */
    {"glm4_moe", REF_DEEPSEEK, false, 0, FAM_GLM4_MOE},
    /* Dots1ForCausalLM: the same under Qwen3's attention (q/k norms always) */
    {"dots1", REF_DEEPSEEK, true, 0, FAM_DOTS1},
    /* Qwen3NextForCausalLM: gated delta net / gated full attention layers over
     * Qwen2-MoE's MoE (dense without experts; cfg_qwen3_next.c, qwen3_next.c) */
    {"qwen3_next", REF_QWEN2_MOE, true, 0, FAM_QWEN3_NEXT},
    /* ERNIE 4.5: Llama with adjacent-pair RoPE; the MoE's softmax routing with the
     * correction bias and shared experts is DeepSeek's kind (ref_route_ds) */
    {"ernie4_5", REF_DENSE, false, 0, FAM_ERNIE},
    {"ernie4_5_moe", REF_DEEPSEEK, false, 0, FAM_ERNIE},
    /* CohereForCausalLM / Cohere2ForCausalLM: the parallel block, bias-free
     * LayerNorms, per-head q/k LayerNorms, logit_scale; Cohere2's NoPE full layers
     * (cfg_cohere.c) */
    {"cohere", REF_DENSE, false, 0, FAM_COHERE},
    {"cohere2", REF_DENSE, false, 0, FAM_COHERE2},
    /* Qwen3VLForConditionalGeneration's language model on text tokens: Qwen3 (its
     * interleaved MRoPE is the plain RoPE when the three position streams are equal);
     * Qwen3VLMoeForConditionalGeneration's: Qwen3-MoE's layers with the experts
     * stacked as bmm operands (qwen3vl.c) */
    {"qwen3_vl", REF_DENSE, true, 0, 0},
    {"qwen3_vl_moe", REF_QWEN2_MOE, true, 0, FAM_QWEN3_VL_MOE},
    /* Olmo3ForCausalLM: OLMo 2's decoder, sliding layers with the default RoPE, full
     * layers with rope_scaling (cfg_olmo3.c) */
    {"olmo3", REF_DENSE, true, 0, FAM_OLMO3},
    /* Exaone4ForCausalLM: OLMo 2's post norms, Qwen3's per-head q/k norms, global
     * layers without RoPE while a sliding window is set (cfg_olmo3.c) */
    {"exaone4", REF_DENSE, true, 0, FAM_EXAONE4},
    {"bert", REF_BERT, false, 0, 0},
    /* RobertaModel / XLMRobertaModel: BERT's encoder, RoBERTa's positions, no pooler
     * (bert.c) */
    {"roberta", REF_BERT, false, 0, 0},
    {"xlm_roberta", REF_BERT, false, 0, 0},
    /* their sequence classifiers: the same, RobertaClassificationHead on token 0 */
    {"roberta_cls", REF_BERT, false, 0, 0},
    {"xlm_roberta_cls", REF_BERT, false, 0, 0},
    /* Glm4vForConditionalGeneration's language model on text tokens: GLM-4-0414's
     * decoder (its MRoPE over the first int(head_dim * partial_rotary_factor) dims is
     * the plain adjacent-pair RoPE when the three position streams are equal);
     * Glm4vMoeForConditionalGeneration's: GLM-4.5's without q/k norms */
    {"glm4v", REF_DENSE, false, 0, FAM_GLM4},
    {"glm4v_moe", REF_DEEPSEEK, false, 0, FAM_GLM4_MOE},
    /* ApertusForCausalLM: Llama's attention with per-head q/k norms under
     * attention_layernorm, feedforward_layernorm before an up/down MLP with xIELU
     * (cfg_apertus.c, nogate.c) */
    {"apertus", REF_DENSE, true, 0, FAM_APERTUS},
    /* ArceeForCausalLM: Llama's decoder with an up/down MLP, relu2 by default, biases
     * with mlp_bias (cfg_apertus.c, nogate.c) */
    {"arcee", REF_DENSE, false, 0, FAM_ARCEE},
    /* GraniteMoeHybridForCausalLM (Granite 4.0): Mamba2 mixers and Llama attention layers
     * (granite4.c) under Granite's multipliers, GraniteMoE's experts and the shared MLP
     * (without experts: the shared MLP alone; cfg_granite4.c) */
    {"granitemoehybrid", REF_MIXTRAL, false, 0, FAM_GRANITE4},
    /* HunYuanDenseV1ForCausalLM: Llama's math, per-head query_layernorm / key_layernorm
     * after RoPE (use_qk_norm), the NTK-alpha RoPE base (cfg_hunyuan.c) */
    {"hunyuan_v1_dense", REF_DENSE, false, 0, FAM_HUNYUAN},
    /* HunYuanMoEV1ForCausalLM: the same attention; every layer MoE: softmax router
     * mlp.gate.wg, top moe_topk renormalised, + the ungated shared_mlp */
    {"hunyuan_v1_moe", REF_QWEN2_MOE, false, 0, FAM_HUNYUAN},
    /* BambaForCausalLM: Granite 4.0's Mamba2 mixer (granite4.c) and Llama attention with
     * partial RoPE, a SwiGLU feed_forward after pre_ff_layernorm (cfg_granite4.c) */
    {"bamba", REF_DENSE, false, 0, FAM_BAMBA},
    /* NemotronForCausalLM: Llama's decoder with LayerNorm1P norms (weight + 1, bias),
     * partial rotary, an up/down MLP with relu2 (cfg_apertus.c, nogate.c) */
    {"nemotron", REF_DENSE, false, 0, FAM_NEMOTRON},
    /* Jais2ForCausalLM: Nemotron's decoder with nn.LayerNorm norms (weight, bias), RoPE on
     * the whole head, the relu2 up/down MLP, interleaved_sliding_window (jais2.c, nogate.c) */
    {"jais2", REF_DENSE, false, 0, FAM_JAIS2},
    /* MiniMaxForCausalLM: lightning-attention layers (minimax.c) beside Mixtral's
     * attention, Mixtral's MoE, x = alpha * norm(x) + beta * branch (cfg_minimax.c) */
    {"minimax", REF_MIXTRAL, false, 0, FAM_MINIMAX},
    {"minimax_vl_01", REF_MIXTRAL, false, 0, FAM_MINIMAX}, /* its LM on text tokens */
    /* JambaForCausalLM: Mamba (v1) mixers (jamba.c) and Llama attention without
     * positions; softmax top-k experts, not renormalised, in the expert layers, a
     * dense feed_forward elsewhere (cfg_jamba.c) */
    {"jamba", REF_QWEN2_MOE, false, 0, FAM_JAMBA},
    /* JambaForSequenceClassification: Jamba's decoder, then score.weight on every token
     * (dec_cls) */
    {"jamba_cls", REF_QWEN2_MOE, false, 0, FAM_JAMBA},
    /* GPTNeoXForCausalLM: LayerNorms with biases, query_key_value per head, partial
     * rotary, plain MLP with biases, parallel residual (cfg_neox.c, neox.c) */
    {"gpt_neox", REF_DENSE, false, 0, FAM_NEOX},
    /* PhiForCausalLM (phi-2): one LayerNorm before the parallel attention and MLP, q/k/v
     * and dense with biases, partial rotary, fc1 / fc2, lm_head with its bias */
    {"phi", REF_DENSE, false, 0, FAM_PHI},
    /* FlexOlmoForCausalLM: OLMo 2's post norms and full-width q/k norms, OLMoE's
     * softmax top-k experts in every layer (cfg_fam.c) */
    {"flex_olmo", REF_QWEN2_MOE, true, 0, FAM_FLEX_OLMO},
    /* VaultGemmaForCausalLM: Gemma 2 without post_attention_layernorm /
     * post_feedforward_layernorm (cfg_gemma.c) */
    {"vaultgemma", REF_DENSE, false, 2, FAM_VAULTGEMMA},
    /* DbrxForCausalLM: Mixtral's math under DBRX's names (dbrx.c), bias-free
     * LayerNorms, Wqkv as Phi-3's qkv_proj with clip_qkv, renormalised softmax top-k
     * (cfg_dbrx.c) */
    {"dbrx", REF_MIXTRAL, false, 0, FAM_DBRX},
    /* StableLmForCausalLM: Llama's decoder with LayerNorms (biases), q/k/v biases,
     * partial rotary (cfg_neox.c) */
    {"stablelm", REF_DENSE, false, 0, FAM_STABLELM},
    /* MinistralForCausalLM: Mistral's decoder, the sliding mask on layer_types'
     * sliding_attention layers (cfg_smollm3.c) */
    {"ministral", REF_DENSE, false, 0, FAM_MINISTRAL},
    /* FalconH1ForCausalLM: Bamba's Mamba2 mixer and attention side by side in every
     * layer under the muP multipliers, the SwiGLU feed_forward (cfg_granite4.c) */
    {"falcon_h1", REF_DENSE, false, 0, FAM_FALCONH1},
    /* MptForCausalLM: bias-free LayerNorms, Wqkv as Phi-3's qkv_proj with clip_qkv,
     * ALiBi instead of RoPE, the plain GELU MLP, tied (cfg_dbrx.c, dbrx.c) */
    {"mpt", REF_DENSE, false, 0, FAM_MPT},
    /* LongcatFlashForCausalLM: two MLA sublayers and two dense MLPs per layer (virtual
     * layers), the shortcut MoE with zero experts (cfg_longcat.c, longcat.c) */
    {"longcat_flash", REF_DEEPSEEK, false, 0, FAM_LONGCAT},
    /* GPT2LMHeadModel: LayerNorms with biases, c_attn as Phi-3's qkv_proj, learned
     * positions, no RoPE, the plain MLP with biases, tied (gpt2.c) */
    {"gpt2", REF_DENSE, false, 0, FAM_GPT2},
    /* GPTBigCodeForCausalLM: GPT-2's math with nn.Linear weights and one kv head
     * (multi_query), gelu_pytorch_tanh (gpt2.c) */
    {"gpt_bigcode", REF_DENSE, false, 0, FAM_GPT2},
    /* JAISLMHeadModel: GPT-2's blocks with the SwiGLU MLP (c_fc2 the gate), ALiBi or learned
     * positions, the muP scales, tied (gpt2.c) */
    {"jais", REF_DENSE, false, 0, FAM_JAIS},
    /* ArcticForCausalLM: Mixtral's attention and routing (renormalized above top-1), the
     * dense ArcticMLP between MoE layers, the residual MLP beside the MoE (arctic.c) */
    {"arctic", REF_MIXTRAL, false, 0, FAM_ARCTIC},
    /* Grok1ModelForCausalLM (remote code; vLLM's grok1.py): Mixtral's MoE with gelu experts
     * and a soft-capped router, Gemma 2's sandwich norms, the multipliers (grok1.c) */
    {"grok1", REF_MIXTRAL, false, 0, FAM_GROK1},
    /* BailingMoeForCausalLM (remote code; vLLM's bailing_moe.py): Llama's decoder with Phi-3's
     * qkv_proj, Qwen2-MoE's routing in every layer, shared experts ungated (bailing.c) */
    {"bailing_moe", REF_QWEN2_MOE, false, 0, FAM_BAILING},
    /* BailingMoeV2ForCausalLM (Ling 2.0, remote code; vLLM's later bailing_moe.py): GLM-4.5's
     * reading (per-head q/k RMSNorms, partial rotate-half RoPE, dense first layers, sigmoid
     * grouped routing with the expert bias, routed_scaling_factor, shared experts ungated)
     * under Bailing's names with Phi-3's qkv_proj (bailing.c) */
    {"bailing_moe_v2", REF_DEEPSEEK, false, 0, FAM_BAILING_V2},
    /* AfmoeForCausalLM (Arcee's Trinity; vLLM's afmoe.py): the output-gated attention with
     * q/k norms (afmoe.c), Gemma 2's sandwich, GLM-4.5's MoE with expert_bias (cfg_afmoe.c) */
    {"afmoe", REF_DEEPSEEK, true, 0, FAM_AFMOE},
    /* Step3TextForCausalLM (stepfun-ai/step3's language model; vLLM's step3_text.py): the
     * inter_norm / wq attention over one kv head, DeepSeek-MoE's softmax router (step3.c) */
    {"step3_text", REF_DEEPSEEK, false, 0, FAM_STEP3},
    /* MiMoV2FlashForCausalLM (remote code; vLLM's mimo_v2_flash.py; mimo_v2.c) */
    {"mimo_v2_flash", REF_DEEPSEEK, false, 0, FAM_MIMO_V2},
    /* DeepseekForCausalLM (remote code; vLLM's deepseek_v2.py with DeepseekAttention):
     * GLM-4.5's reading (Llama's attention over DeepSeek's MoE) with V2's softmax router */
    {"deepseek", REF_DEEPSEEK, false, 0, FAM_DEEPSEEK_MOE},
    /* LlavaForConditionalGeneration: its Llama / Mistral language model, on text
     * tokens */
    {"llava", REF_DENSE, false, 0, 0},
    /* LlavaNextForConditionalGeneration: the same */
    {"llava_next", REF_DENSE, false, 0, 0},
    /* MambaForCausalLM: Jamba's Mamba (v1) mixer without its dt / B / C norms in every
     * layer, no feed_forward, under Jamba's names (mamba.c) */
    {"mamba", REF_DENSE, false, 0, FAM_MAMBA},
    /* FalconMambaForCausalLM: Mamba with weightless RMSNorms (mixer_rms_eps) on the
     * mixer's dt / B / C (mamba.c, cfg_jamba.c) */
    {"falcon_mamba", REF_DENSE, false, 0, FAM_FALCON_MAMBA},
    /* OPTForCausalLM: learned positions, project_in / project_out, pre- or post-norm
     * layers with biased q/k/v/out_proj and fc1 / fc2, relu (cfg_opt.c, opt.c) */
    {"opt", REF_DENSE, false, 0, FAM_OPT},
    /* GPTJForCausalLM: Phi's parallel block (gptj.c renames onto Phi's names), RoPE on
     * adjacent pairs of rotary_dim dims, no attention biases (cfg_neox.c) */
    {"gptj", REF_DENSE, false, 0, FAM_GPTJ},
    /* BloomForCausalLM: GPT-NeoX's per-head query_key_value, LayerNorms with biases and
     * plain MLP, sequential, ALiBi instead of RoPE, the embedding's LayerNorm (cfg_neox.c,
     * neox.c) */
    {"bloom", REF_DENSE, false, 0, FAM_BLOOM},
    /* PersimmonForCausalLM: GPT-NeoX's query_key_value per head with q/k LayerNorms [d]
     * with biases, sequential residual, partial rotary, relu2 plain MLP (cfg_neox.c) */
    {"persimmon", REF_DENSE, false, 0, FAM_PERSIMMON},
    /* FalconForCausalLM: query_key_value grouped per kv head, the parallel block with
     * ln_attn / ln_mlp or one input_layernorm (or sequential), RoPE or ALiBi, gelu plain
     * MLP (cfg_neox.c, neox.c) */
    {"falcon", REF_DENSE, false, 0, FAM_FALCON},
    /* InternLM2ForCausalLM (remote code): Llama's decoder, wqkv packed per kv group and
     * other names (internlm2.c renames onto Llama's) */
    {"internlm2", REF_DENSE, false, 0, FAM_INTERNLM2},
    /* InternLM2VEForCausalLM (remote code, Mono-InternVL's language model): InternLM2 on text,
     * feed_forward_ve (the visual expert) left unread (internlm2.c) */
    {"internlm2_ve", REF_DENSE, false, 0, FAM_INTERNLM2},
    /* InternLM2ForRewardModel (remote code): InternLM2 without output, v_head [1, hid] read as
     * score.weight on every token (dec_cls; a rank's is its columns: vh_cols) */
    {"internlm2_rm", REF_DENSE, false, 0, FAM_INTERNLM2},
    /* ChatGLMModel (remote code): GlmForCausalLM's math, query_key_value as Phi-3's
     * qkv_proj and other names (chatglm.c renames onto Llama's) */
    {"chatglm", REF_DENSE, false, 0, FAM_CHATGLM},
    /* ExaoneForCausalLM (remote code): Llama's decoder under GPT-2-style names (exaone.c
     * renames onto Llama's) */
    {"exaone", REF_DENSE, false, 0, FAM_EXAONE},
    /* QWenLMHeadModel (remote code): Llama's decoder with q/k/v biases, c_attn packed
     * [q; k; v] and GPT-2-style names (qwen.c renames onto Llama's) */
    {"qwen", REF_DENSE, false, 0, FAM_QWEN},
    /* BaiChuanForCausalLM / BaichuanForCausalLM (remote code): Llama's decoder with q/k/v
     * packed in W_pack (baichuan.c renames onto Llama's), ALiBi or RoPE by architecture */
    {"baichuan", REF_DENSE, false, 0, FAM_BAICHUAN},
    /* MiniCPMForCausalLM (remote code): Llama's decoder under Llama's names with Granite's
     * multipliers as scale_emb / scale_depth / dim_model_base (cfg_minicpm.c) */
    {"minicpm", REF_DENSE, false, 0, FAM_MINICPM},
    /* InternLM3ForCausalLM (remote code; vLLM's llama.py): Llama's math under Llama's names,
     * q/k/v and o_proj biases added where the checkpoint has them (the planner ties them to
     * qkv_bias / bias), hidden_act read, Llama's RoPE scaling (dynamic in the release) */
    {"internlm3", REF_DENSE, false, 0, FAM_ACT},
    /* InternLMForCausalLM (remote code; vLLM's llama.py): InternLM3's reading, the q/k/v and
     * o_proj biases on in the release (bias true); rotary is the loader's */
    {"internlm", REF_DENSE, false, 0, FAM_ACT},
    /* XverseForCausalLM (remote code; vLLM's llama.py): InternLM's reading, no biases in the
     * releases (XverseConfig has no bias key) */
    {"xverse", REF_DENSE, false, 0, FAM_ACT},
    /* AquilaForCausalLM / AquilaModel (remote code; vLLM's llama.py): Xverse's reading */
    {"aquila", REF_DENSE, false, 0, FAM_ACT},
    /* PanguEmbeddedForCausalLM (remote code; vLLM's openpangu.py, its dense Llama-like decoder):
     * InternLM's reading, q/k/v and o_proj biases in the releases (bias true) */
    {"pangu_dense", REF_DENSE, false, 0, FAM_ACT},
    /* OuroForCausalLM (remote code; vLLM's ouro.py): Qwen2's decoder without biases, Gemma 2's
     * sandwich norms under its own names, the layers looped total_ut_steps times (ouro.c) */
    {"ouro", REF_DENSE, false, 0, FAM_OURO},
    /* Plamo3ForCausalLM (remote code; vLLM's plamo3.py): Gemma 3's decoder shape with SwiGLU
     * under its own names, the norms' offsets added at load (plamo3.c) */
    {"plamo3", REF_DENSE, false, 0, FAM_PLAMO3}, /* qk_norm and the rest: ref_cfg_plamo3 */
    {"plamo2", REF_DENSE, false, 0, FAM_PLAMO3}, /* + Mamba layers (plamo2.c, ckpt.c) */
    /* TeleFLMForCausalLM (remote code; vLLM's teleflm.py over its llama.py): Xverse's reading
     * plus the muP multipliers (teleflm.c) */
    {"teleflm", REF_DENSE, false, 0, FAM_TELEFLM},
    /* SolarForCausalLM (remote code; vLLM's solar.py): Llama's decoder, hidden_act read (silu;
     * the loader refuses others), the block skip connections (solar.c) */
    {"solar", REF_DENSE, false, 0, FAM_SOLAR},
    /* DeciLMForCausalLM (remote code; vLLM's nemotron_nas.py): Llama's decoder, hidden_act read
     * (silu; the loader refuses others), each layer sized or skipped by block_configs
     * (decilm.c) */
    {"nemotron_nas", REF_DENSE, false, 0, FAM_ACT},
    /* MiMoForCausalLM (remote code; vLLM's mimo.py over qwen2.py): Qwen2's reading; the
     * checkpoint's model.mtp_layers.* (the draft's) are not read */
    {"mimo", REF_DENSE, false, 0, 0},
    /* OrionForCausalLM (remote code; vLLM's orion.py): Llama's decoder under Llama's names whose
     * three norms are LayerNorms with weight and bias (eps rms_norm_eps), no linear biases,
     * hidden_act read (silu; the loader refuses others) */
    {"orion", REF_DENSE, false, 0, FAM_ORION},
    /* TeleChat2ForCausalLM (remote code; vLLM's telechat2.py over its llama.py): Llama's
     * decoder with o_proj and down_proj biases, query / key_value (k / v interleaved per kv
     * head) and other names (telechat2.c renames onto Llama's) */
    {"telechat2", REF_DENSE, false, 0, FAM_TELECHAT2},
    /* MiniCPM3ForCausalLM (remote code): DeepSeek-V2's MLA (mla.c; kind REF_DEEPSEEK, no
     * experts) with MiniCPM's dense MLP and multipliers (cfg_minicpm.c) */
    {"minicpm3", REF_DEEPSEEK, false, 0, FAM_MINICPM3},
    /* Lfm2MoeForCausalLM: LFM2's layers (lfm2.c) whose feed_forward is the dense SwiGLU below
     * num_dense_layers and from there a sigmoid-routed MoE (Mixtral's w1 / w3 / w2 experts,
     * the expert bias for the choice: ref_route_ds with one group; cfg_lfm2.c) */
    {"lfm2_moe", REF_MIXTRAL, false, 0, FAM_LFM2_MOE},
    /* Mamba2ForCausalLM: Granite 4.0's Mamba2 mixer (granite4.c) in every layer, no
     * feed_forward, read under Jamba's names as Mamba's (mamba.c) */
    {"mamba2", REF_DENSE, false, 0, FAM_MAMBA2},
    /* Idefics3ForConditionalGeneration: its Llama language model (model.text_model.*
     * read as model.*), on text tokens */
    {"idefics3", REF_DENSE, false, 0, 0},
    /* SmolVLMForConditionalGeneration: the same */
    {"smolvlm", REF_DENSE, false, 0, 0},
    /* PaliGemmaForConditionalGeneration: its Gemma language model (Gemma 2's when
     * text_config.model_type is gemma2: cfg.c), on text tokens */
    {"paligemma", REF_DENSE, false, 1, 0},
    /* AyaVisionForConditionalGeneration: its Cohere 2 language model, on text tokens */
    {"aya_vision", REF_DENSE, false, 0, FAM_COHERE2},
    /* LlavaOnevisionForConditionalGeneration: its Qwen2 language model (q/k/v biases), on
     * text tokens */
    {"llava_onevision", REF_DENSE, false, 0, 0},
    /* Cohere2VisionForConditionalGeneration: its Cohere 2 language model, on text
     * tokens */
    {"cohere2_vision", REF_DENSE, false, 0, FAM_COHERE2},
    /* LlavaNextVideoForConditionalGeneration: its Llama / Mistral language model, on text
     * tokens */
    {"llava_next_video", REF_DENSE, false, 0, 0},
    /* Qwen2AudioForConditionalGeneration: its Qwen2 language model (q/k/v biases), on
     * text tokens */
    {"qwen2_audio", REF_DENSE, false, 0, 0},
    /* InternVLForConditionalGeneration: its Qwen2 language model (q/k/v biases), or Qwen3's
     * (q / k norms) when text_config.model_type is qwen3, or Qwen3-MoE's (qwen3_moe's
     * kind) when it is qwen3_moe (cfg.c), on text tokens */
    {"internvl", REF_DENSE, false, 0, 0},
    /* FuyuForCausalLM: its Persimmon language model, on text tokens */
    {"fuyu", REF_DENSE, false, 0, FAM_PERSIMMON},
    /* Lfm2VlForConditionalGeneration: its LFM2 language model, on text tokens */
    {"lfm2_vl", REF_DENSE, false, 0, FAM_LFM2},
    /* ChameleonForConditionalGeneration: Llama's decoder with per-head q/k LayerNorms
     * (cfg_chameleon.c), on text tokens */
    {"chameleon", REF_DENSE, false, 0, FAM_CHAMELEON},
    /* Zamba2: Granite 4.0's Mamba2 mixer in every layer, the shared blocks before the
     * hybrid layers' (zamba2.c) */
    {"zamba2", REF_DENSE, false, 0, FAM_ZAMBA2},
    /* Gemma3nForCausalLM: AltUp, Laurel, per-layer inputs, KV sharing (gemma3n.c) */
    {"gemma3n_text", REF_DENSE, false, 0, FAM_GEMMA3N},
    /* WhisperForConditionalGeneration: the encoder on a fixed log-mel, the decoder with
     * cross-attention to it (cfg_whisper.c, whisper.c) */
    {"whisper", REF_DENSE, false, 0, FAM_WHISPER},
    /* ModernBertModel: its own pre-norm encoder (modernbert.c) */
    {"modernbert", REF_BERT, false, 0, 0},
    /* NomicBertModel, GteNewModel: vLLM's bert_with_rope.py post-norm encoder (bert_rope.c) */
    {"nomic_bert", REF_BERT, false, 0, 0},
    {"gte_new", REF_BERT, false, 0, 0},
    {"gte_new_cls", REF_BERT, false, 0, 0}, /* GteNewForSequenceClassification: + its head */
    /* ModernBertForSequenceClassification: the same under model., then its head */
    {"modernbert_cls", REF_BERT, false, 0, 0},
    /* ModernBertForTokenClassification: the same under model., its head on every token */
    {"modernbert_tok", REF_BERT, false, 0, 0},
    /* GraniteSpeechForConditionalGeneration: its Granite language model (the four
     * multipliers), on text tokens */
    {"granite_speech", REF_DENSE, false, 0, FAM_GRANITE},
    /* Blip2ForConditionalGeneration: its OPT language model (language_model.* read as
     * OPT's names), on text tokens; the tower and Q-Former loaded, unused */
    {"blip_2", REF_DENSE, false, 0, FAM_OPT},
    /* AriaForConditionalGeneration: its language model on text tokens, Llama's
     * attention, every layer MoE: Mixtral's routing (softmax of the top moe_topk
     * logits) over the stacked fc1 / fc2 experts, + the ungated shared experts */
    {"aria", REF_QWEN2_MOE, false, 0, FAM_ARIA},
    /* VoxtralForConditionalGeneration: its Llama language model, on text tokens */
    {"voxtral", REF_DENSE, false, 0, 0},
    /* MllamaForConditionalGeneration: its Llama language model without the
     * cross-attention layers (ckpt.c), on text tokens */
    {"mllama", REF_DENSE, false, 0, 0},
    /* The decoder sequence classifiers: Llama's (Mistral's, Qwen2's) or Qwen3's decoder
     * without lm_head, then score.weight on every token (dec_cls) */
    {"llama_cls", REF_DENSE, false, 0, 0},
    {"mistral_cls", REF_DENSE, false, 0, 0},
    {"qwen2_cls", REF_DENSE, false, 0, 0},
    {"qwen3_cls", REF_DENSE, true, 0, 0},
    {"llama_bidir_cls", REF_DENSE, false, 0, 0}, /* bidir: llama_bidir_* */
    /* BERT's heads: BertModel under bert., then the pooler and classifier (bert_cls) or
     * the classifier on every token (bert_tok) */
    {"bert_cls", REF_BERT, false, 0, 0},
    {"bert_tok", REF_BERT, false, 0, 0},
    {"bert_splade", REF_BERT, false, 0, 0}, /* the masked-LM head, SPLADE's pooling */
    /* Qwen2.5-Omni's thinker: its Qwen2 language model (q/k/v biases; thinker.* read as
     * Qwen2's names), on text tokens; the towers and the speech generator loaded, unused */
    {"qwen2_5_omni", REF_DENSE, false, 0, 0},
    /* Qwen3-Omni's thinker: its Qwen3-MoE language model (per-expert Linears; thinker.*
     * read as Qwen3-MoE's names; MRoPE over text positions is 1-D RoPE), on text tokens;
     * the towers and the speech generator loaded, unused */
    {"qwen3_omni_moe", REF_QWEN2_MOE, true, 0, 0},
    /* The decoder embedding models saved as base models: the causal LM's decoder under
     * the base model's names (read as model.*, ckpt.c), its final hidden states on every
     * token (dec_emb) */
    {"llama_emb", REF_DENSE, false, 0, 0},
    {"mistral_emb", REF_DENSE, false, 0, 0},
    {"qwen2_emb", REF_DENSE, false, 0, 0},
    {"gemma2_emb", REF_DENSE, false, 2, 0},
    {"gemma3_text_emb", REF_DENSE, true, 3, 0},
    /* LlamaBidirectionalModel: Llama's decoder as llama_emb's, attention without the
     * causal mask (bidir) */
    {"llama_bidir_emb", REF_DENSE, false, 0, 0},
    /* Qwen2's reward models: Qwen2's decoder without lm_head, then the score head
     * score.0, ReLU, score.2 on every token (dec_cls with rm_head) */
    {"qwen2_rm", REF_DENSE, false, 0, 0},
    {"qwen2_prm", REF_DENSE, false, 0, 0},
    /* GPT2ForSequenceClassification: GPT-2's decoder (gpt2.c) without lm_head, then
     * score.weight on every token (dec_cls) */
    {"gpt2_cls", REF_DENSE, false, 0, FAM_GPT2},
    /* CLIPModel: the text tower, StarCoder2's LayerNorms and plain MLP under the causal
     * mask with learned positions, text_projection on every token (clip.c) */
    {"clip", REF_DENSE, false, 0, FAM_CLIP},
    /* MiniMaxM2ForCausalLM: Mixtral's layout (block_sparse_moe, w1 / w3 / w2) with
     * q_norm / k_norm over all heads, partial RoPE, sigmoid routing with the correction
     * bias (cfg_minimax_m2.c) */
    {"minimax_m2", REF_MIXTRAL, true, 0, FAM_MINIMAX_M2},
    /* NemotronHForCausalLM: one mixer per layer, Granite 4.0's Mamba2 mixer, the
     * attention without RoPE or Arcee's relu2 MLP (nemotron_h.c) */
    {"nemotron_h", REF_DENSE, false, 0, FAM_NEMOTRON_H},
    /* SiglipModel: the same text tower, bidirectional, text_model.head (with its bias) on
     * every token (clip.c) */
    {"siglip", REF_DENSE, false, 0, FAM_SIGLIP},
};

/* The planner's family -> the reference's kind. */
int ref_kind_of(const char *family, const char *arch, ref_cfg *c, wt_errbuf *err)
{
	for (size_t i = 0; family != NULL && i < sizeof(families) / sizeof(families[0]); i++)
		if (strcmp(family, families[i].family) == 0) {
			const struct family_row *r = &families[i];

			c->kind = r->kind;
			ref_kind_switches(c, family, r);
			/* vLLM's BaichuanForCausalLM: ALiBi (_get_alibi_slopes, the remote code's
			 * _get_interleave) unless hidden_size is 4096 (Baichuan2-7B: RoPE);
			 * BaiChuanForCausalLM (Baichuan-7B): RoPE */
			c->bc_alibi = c->baichuan && arch != NULL &&
			              strcmp(arch, "BaichuanForCausalLM") == 0 && c->hid != 4096;
			if (c->bc_alibi)
				c->alibi_max = 8.0;
			return WT_OK;
		}
	/* named by what it covers: the list outgrew an error message */
	return wt_seterr(err, WT_EUNSUPPORTED,
	                 "architecture '%s' (family %s) has no reference forward pass: it "
	                 "covers BERT and every decoder family of the planner; "
	                 "docs/reference.md lists what it covers",
	                 arch ? arch : "", family ? family : "none");
}
