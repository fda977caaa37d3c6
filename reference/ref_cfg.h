/*
 * ref_cfg.h — the reference forward pass's configuration (reference/): the kind of model, the
 * gate activations and ref_cfg, the dimensions the loader shares with the planner plus every
 * switch a family's math needs, filled by ref_cfg_finish (reference.h) from config.json.
 * Split from reference.h, which includes it.
 */
#ifndef WT_REF_CFG_H
#define WT_REF_CFG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
	REF_DENSE = 0,
	REF_MIXTRAL,
	REF_QWEN2_MOE,
	REF_BERT,     /* post-norm encoder, GELU, absolute positions (reference_bert.c) */
	REF_DEEPSEEK, /* MLA attention, sigmoid-routed MoE (reference_mla.c) */
} ref_kind;

/* Activation of the gated MLP's gate: act(x wg^T) * (x wu^T). */
typedef enum {
	REF_ACT_SILU = 0,  /* Llama and most decoders */
	REF_ACT_GELU_TANH, /* gelu_pytorch_tanh / gelu_new: the tanh approximation */
	REF_ACT_GELU,      /* gelu: exact (erf) */
	/* the MLPs without a gate (nogate): act(up(x)) */
	REF_ACT_RELU2,      /* relu2: relu(x)^2 (Arcee) */
	REF_ACT_XIELU,      /* xielu: learned per-layer scalars (Apertus; ref_nogate_mlp) */
	REF_ACT_RELU,       /* relu (OPT's activation_function) */
	REF_ACT_QUICK_GELU, /* quick_gelu: x sigmoid(1.702 x) (CLIP's text tower) */
} ref_act;

#define REF_MAX_ROPE_EXT 256 /* LongRoPE factors per list: rotary dims up to 512 */
/* Routed experts of an MoE config (Qwen3-Next: 512); top-k <= experts. The routers
 * keep per-expert scores, the chosen indices / weights and the set of experts (or
 * DeepSeek groups) taken on the stack, sized by this. */
#define REF_MAX_EXPERTS 512

typedef struct ref_cfg {
	ref_kind kind;
	int64_t hid, H, KV, d, I, V, L;
	int64_t E, topk, Ie, Is; /* MoE; E = 0 dense */
	int64_t sparse_step;
	uint64_t mlp_only_mask; /* layers < 64 listed in mlp_only_layers */
	bool tied, qk_norm, norm_topk;
	double eps, theta;        /* theta: rope_parameters.rope_theta, else rope_theta */
	bool rope_interleave;     /* DeepSeek rope_interleave (default true): de-interleave first */
	int64_t max_pos, n_types; /* BERT position / token-type embedding rows */
	/* RoBERTa / XLM-RoBERTa (REF_BERT): positions pad_id + 1 + the count of non-pad tokens so
	 * far (pad tokens at pad_id), no pooler (vLLM loads none): the output is the last hidden
	 * state alone */
	bool roberta;
	int64_t pad_id;
	/* RoBERTa's sequence classifiers (roberta_cls, xlm_roberta_cls): RobertaClassificationHead
	 * over token 0, n_labels logits in the output's last row */
	bool rb_cls;
	int64_t n_labels;
	/* BERT's heads (REF_BERT, neither roberta nor modernbert; the encoder under bert.):
	 * bt_cls (BertForSequenceClassification): the pooler tanh(pooler.dense(x[0])), then
	 * classifier: the output's last row holds its n_labels logits, then zeros; bt_tok
	 * (BertForTokenClassification, no pooler): classifier on every token, each output row its
	 * token's n_labels logits, then zeros (no pooler row) */
	bool bt_cls, bt_tok;
	/* ModernBERT (modernbert.c; kind REF_BERT with modernbert set): pre-norm encoder,
	 * tok_embeddings -> LayerNorm, then per layer x += Wo(attn(rope(Wqkv(attn_norm(x)))))
	 * (layer 0 without attn_norm), x += Wo(gelu(input) * gate) of [input; gate] =
	 * Wi(mlp_norm(x)), then final_norm; layer i global (theta) when i % mb_every == 0, else
	 * local: keys within mb_window = local_attention / 2 of the query, RoPE base
	 * mb_theta_local (global: mb_theta). LayerNorms with mb_eps (norm_eps) and biases when
	 * mb_norm_bias; Wqkv / attn.Wo biases with mb_attn_bias, Wi / mlp.Wo with mb_mlp_bias. The
	 * output is the last hidden state */
	bool modernbert, mb_attn_bias, mb_mlp_bias, mb_norm_bias;
	/* its sequence classifier (modernbert_cls): the encoder under model., then the head
	 * (head.dense with mb_cls_bias, GELU, head.norm, classifier) on token 0 or, with
	 * mb_pool_mean, the tokens' mean: n_labels logits in the output's last row */
	bool mb_cls, mb_cls_bias, mb_pool_mean;
	/* its token classifier (modernbert_tok): the encoder under model., then head.dense (with
	 * mb_cls_bias), GELU, head.norm, classifier on every token: each row holds its token's
	 * n_labels logits, then zeros; mb_cls_gelu: classifier_activation is gelu (the only one
	 * its head runs) */
	bool mb_tok, mb_cls_gelu;
	/* vLLM's bert_with_rope.py encoders (bert_rope.c; kind REF_BERT with brope 1: nomic_bert,
	 * 2: gte_new): post-norm LayerNorm blocks, rotate-half RoPE of base theta on rot_dim dims,
	 * the gated MLP (Nomic silu, GTE exact GELU), n_types token type rows (0: no table);
	 * br_bias: Nomic's qkv_proj_bias (every Linear's bias; GTE: all but gate_up_proj's) */
	int brope;
	bool br_bias;
	/* GteNewForSequenceClassification (gte_new_cls, brope 2): GTE's encoder under new., then
	 * BertPooler tanh(pooler.dense(x[0])) and classifier: one more output row holding the
	 * n_labels logits, then zeros (set by ref_cfg_finish) */
	bool br_cls;
	/* BertSpladeSparseEmbeddingModel (bert_splade; BERT's encoder under bert.): the masked-LM
	 * head on every token, then SPLADE's max pooling of log1p(relu(logits)) without the first
	 * token when it is sp_cls and the last when it is sp_sep (-1: none): the output is [T + 1,
	 * V] (splade.c; set by ref_cfg_finish) */
	bool bt_splade;
	int64_t sp_cls, sp_sep;
	/* The decoder sequence classifiers (llama_cls, mistral_cls, qwen2_cls, qwen3_cls, gpt2_cls;
	 * kind REF_DENSE): the decoder without lm_head, then score.weight [n_labels, hid] (no bias)
	 * on every token's final hidden state: n_labels scores per token (transformers' score is
	 * the last non-pad token's row; the last row without padding) */
	bool dec_cls;
	/* Qwen2's reward models (qwen2_rm, qwen2_prm) and jina-reranker-m0 (jina_vl; with dec_cls):
	 * the score head is score.0 [hid, hid] + bias, ReLU, score.2 [n_labels, hid] + bias in
	 * place of score.weight */
	bool rm_head;
	/* InternLM2's reward models (internlm2_rm; with dec_cls): v_head [1, hid] read as
	 * score.weight, a rank's its hid / T columns (vLLM's RowParallelLinear: partial scores
	 * summed over the ranks) */
	bool vh_cols;
	/* The decoder embedding models saved as base models (llama_emb, mistral_emb, qwen2_emb,
	 * gemma2_emb, gemma3_text_emb; kind REF_DENSE): no head, the final hidden states (after
	 * the final norm) of every token, n_tok x hid (transformers' last_hidden_state) */
	bool dec_emb;
	/* Bidirectional decoder attention (llama_bidir_emb; vLLM's is_causal false): every query
	 * sees every key (ref_layer_attn) */
	bool bidir;
	int64_t mb_every, mb_window;
	double mb_theta, mb_theta_local, mb_eps;
	/* DeepSeek-V3: MLA dims (q_lora -1 = null: q_proj), routing, dense/MoE layers */
	int64_t q_lora, kv_lora, nope, rope, vhd;
	int64_t n_group, topk_group, first_dense, layer_freq;
	double routed_scale;
	int64_t block[2]; /* quantization_config weight_block_size (128 x 128 default) */
	/* Gemma families (kind REF_DENSE; cfg_gemma.c). All zero for the others,
	 * which is the Llama math. */
	int gemma;         /* 0, or the generation: 1 Gemma, 2 Gemma 2, 3 Gemma 3 text */
	float norm_off;    /* every RMSNorm scales by (norm_off + w): 1 for Gemma; with layernorm,
	                    * every LayerNorm (Nemotron's LayerNorm1P: 1) */
	float embed_scale; /* embeddings times this (Gemma: sqrt(hidden_size)); 0 = 1 */
	ref_act act;       /* the MLP's gate activation */
	/* Gemma 2/3: x += post_attention_layernorm(attn(input_layernorm(x)));
	 * x += post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x)));
	 * GLM-4-0414 (glm 2) the same with its names (reference_int.h ref_post_norm) */
	bool sandwich;
	double attn_scale; /* scores times this (query_pre_attn_scalar^-0.5); 0 = 1/sqrt(d) */
	double attn_cap,
	    final_cap; /* soft-capping cap * tanh(s / cap) of scores / logits; 0 = none */
	/* sliding window (0 = none) of the local layers: layer i is global when
	 * (i + 1) % window_pattern == 0 (Gemma 2: 2, odd layers global); pattern 0:
	 * every layer local (Phi-3, StarCoder2) */
	int64_t window, window_pattern;
	double theta_local;    /* RoPE base of the local layers */
	double rope_factor[2]; /* linear RoPE scaling of [global, local] layers; 0 = none */
	/* Phi-3, StarCoder2, DeepSeek-V2 (cfg_fam.c). All zero for the others. */
	bool fused_ckpt;    /* Phi-3: the checkpoint holds qkv_proj [q; k; v] */
	bool fused_gate_up; /* Phi-3, GLM: the checkpoint holds mlp.gate_up_proj [gate; up] */
	int64_t rot_dim; /* RoPE turns the first rot_dim dims of a head (partial_rotary_factor); 0 =
	                    d */
	/* Per-frequency RoPE divisors: inverse frequency i divided by rope_ext[long][i]
	 * (long when the tokens exceed rope_orig_max), cos and sin times rope_mscale;
	 * n_ext 0 = none. LongRoPE (Phi-3, cfg_fam.c): the short and long factors;
	 * llama3 and YaRN (cfg_rope.c): one list for every length */
	int64_t n_ext, rope_orig_max;
	double rope_ext[2][REF_MAX_ROPE_EXT];
	double rope_mscale;
	/* dynamic NTK (cfg_rope.c): past rope_dyn_max tokens the base grows by
	 * rope_dyn; 0 = none */
	double rope_dyn;
	int64_t rope_dyn_max;
	bool layernorm; /* StarCoder2: LayerNorm with bias instead of RMSNorm */
	bool plain_mlp; /* StarCoder2: mlp.c_proj(act(mlp.c_fc(x))) with biases */
	bool ds_v2;     /* DeepSeek-V2 routing: softmax scores, groups ranked by their best */
	/* Mistral-Large-3 (cfg_ml3.c): V2's softmax routing, renormalised; q times
	 * 1 + l4_beta ln(1 + floor(pos / l4_orig)) when l4_orig > 0 (llama_4_scaling) */
	bool ml3;
	int64_t l4_orig;
	double l4_beta;
	/* GLM-4 (cfg_fam.c): 1 glm (GlmForCausalLM), 2 glm4 (Glm4ForCausalLM, GLM-4-0414:
	 * sandwich with post_self_attn_layernorm / post_mlp_layernorm, the MLP's input
	 * norm post_attention_layernorm), 3 chatglm (ChatGLMModel: glm's math under THUDM's
	 * names, chatglm.c); 0 the others */
	int glm;
	bool
	    rope_pairs; /* GLM: RoPE turns the adjacent pairs (x[2i], x[2i+1]) of the rotary dims */
	/* OLMo 2 (cfg_fam.c): no input norms (attention and MLP read the residual stream;
	 * sandwich norms on their outputs) */
	bool olmo2;
	/* OLMo 3 (cfg_olmo3.c; olmo2 and qk_norm_full set too): sliding_attention layers
	 * (window, window_pattern) turn q / k by the default RoPE (theta_local, no scaling),
	 * full_attention layers by rope_scaling */
	bool olmo3;
	/* EXAONE 4.0 (cfg_olmo3.c; olmo2 and qk_norm set: per-head q/k norms [d]): one RoPE
	 * (rope_scaling included) on the sliding layers; with nope_global (sliding_window
	 * set) the full_attention layers have none */
	bool exaone4, nope_global;
	/* FlexOlmo (cfg_fam.c; olmo2 and qk_norm_full set too): OLMo 2's decoder with OLMoE's
	 * MoE in every layer; rms_norm_eps defaults to 1e-6 */
	bool flex_olmo;
	/* VaultGemma (cfg_gemma.c; gemma 2): Gemma 2 without the post norms (no sandwich;
	 * the MLP reads pre_feedforward_layernorm) */
	bool vaultgemma;
	/* OLMo 2, OLMoE: q_norm / k_norm (qk_norm) are RMSNorms over the whole of q [H*d] and
	 * k [KV*d], not per head */
	bool qk_norm_full;
	/* OLMo 1 (cfg_fam.c): every norm of ref_norm_of (input_layernorm,
	 * post_attention_layernorm, model.norm) is a LayerNorm without weight or bias
	 * (eps 1e-5); the checkpoint holds no norm tensor */
	bool norm_free;
	/* OLMo 1, OLMoE clip_qkv: q, k and v clamped to [-clip_qkv, clip_qkv] after the
	 * projections (biases added) and OLMoE's q/k norms, before RoPE; 0 = none */
	double clip_qkv;
	/* Granite (cfg_fam.c): embed_scale = embedding_multiplier, attn_scale =
	 * attention_multiplier, x += resid_mult * block(x), logits / logits_div; 0 = 1 */
	double resid_mult, logits_div;
	bool granite;
	/* GraniteMoE: the checkpoint's experts stacked (block_sparse_moe.input_linear
	 * [E, 2*Ie, hid], output_linear [E, hid, Ie]) and its router router.layer; the
	 * ranks carry Mixtral's names */
	bool stacked_experts;
	/* PhiMoE (cfg_phimoe.c): sparsemixer routing with jitter_eps (router_jitter_noise),
	 * LayerNorms with bias (layernorm), lm_head.bias added to the logits (lm_bias) */
	bool phimoe, lm_bias;
	double jitter_eps;
	/* GPT-OSS (cfg_gpt_oss.c, gpt_oss.c; kind REF_QWEN2_MOE for the "mlp." prefix and
	 * every layer MoE): per-head attention sinks, the router mlp.router with a bias
	 * (top-k of the logits, softmax over those k), experts with biases and the clamped
	 * SwiGLU (gate <= limit, |up| <= limit, gate * sigmoid(1.702 gate) * (up + 1)) */
	bool gpt_oss;
	double swiglu_limit;
	/* Llama 4 (cfg_llama4.c, llama4.c; kind REF_QWEN2_MOE when a layer is MoE, else
	 * REF_DENSE; modules under "feed_forward."): RoPE on adjacent pairs (rope_pairs) on
	 * the layers of l4_rope only, then the weightless L2 norm of q and k per head
	 * (l2_qk_norm: use_qk_norm); on the NoPE layers q times the temperature
	 * log(floor((pos + 1) / floor_scale) + 1) * temp_scale + 1 (temp_tuning); the
	 * chunked causal mask (key s seen by query t when s / chunk == t / chunk) on the
	 * layers of l4_chunked; MoE layers l4_moe: sigmoid of the top-k router logits
	 * scaling each expert's INPUT, plus the shared expert (Is) ungated. Bit i of a mask
	 * is layer i (REF_L4_MAX_LAYERS) */
	bool llama4, l2_qk_norm, temp_tuning;
	/* GLM-4.5 / 4.6 (Glm4MoeForCausalLM; cfg_fam.c): kind REF_DEEPSEEK for the MoE
	 * (sigmoid router with the correction bias, n_group / topk_group, norm_topk_prob,
	 * routed_scaling_factor, shared experts, dense layers < first_k_dense_replace), with
	 * Llama's attention instead of MLA: q/k/v biases, per-head q_norm / k_norm
	 * (qk_norm: use_qk_norm), rotate-half RoPE on the first rot_dim dims. dots.llm1
	 * (Dots1ForCausalLM) sets it too, with dots1: q/k norms on every layer, RoPE on the
	 * whole head, o_proj's bias with attention_bias, norm_topk_prob default false.
	 * DeepSeek-MoE (DeepseekForCausalLM) sets it too, with ds_moe: no q/k norms, RoPE on the
	 * whole head, V2's softmax router (no correction bias; a group scored by its best),
	 * norm_topk_prob default false, dense layers off moe_layer_freq (cfg_fam.c) */
	bool glm4_moe, dots1, ds_moe;
	/* local_masked (dots.llm1, SmolLM3): layer i is a sliding-window layer (window) exactly
	 * when bit i of local_mask is set (REF_L4_MAX_LAYERS bits), instead of window_pattern's
	 * rule */
	bool local_masked;
	uint64_t local_mask[4];
	/* Seed-OSS, SmolLM3: Llama's math with hidden_act read (ref_cfg_act: silu default, the
	 * gelu forms) instead of taken as silu; the other Llama-kin families do not read it */
	bool read_act;
	/* SmolLM3 (cfg_smollm3.c; kind REF_DENSE, Llama's math): layer i applies no RoPE when bit
	 * i of nope_mask is set (no_rope_layers[i] 0); zero for every other family */
	bool smollm3;
	uint64_t nope_mask[4];
	/* Qwen3-Next (Qwen3NextForCausalLM; cfg_qwen3_next.c, qwen3_next.c; kind REF_QWEN2_MOE,
	 * REF_DENSE without experts): zero-centred RMSNorms (norm_off 1); layer i is linear
	 * attention when bit i of q3n_linear is set (REF_L4_MAX_LAYERS bits): the gated delta
	 * net of lin_hk key heads of lin_dk and lin_hv value heads of lin_dv, its causal
	 * depthwise conv lin_kconv taps wide; else gated full attention (q_proj rows per head
	 * [query; gate], q_norm / k_norm with qk_norm, rotate-half RoPE on the first rot_dim
	 * dims, the output times sigmoid(gate) before o_proj) */
	bool q3n;
	/* LFM2 (Lfm2ForCausalLM; cfg_lfm2.c, lfm2.c; kind REF_DENSE): operator_norm /
	 * ffn_norm / model.embedding_norm, the SwiGLU feed_forward (w1, w3, w2) of I rows
	 * (Lfm2MLP's rule, ckpt.c); layer i is a short-conv layer when bit i of lfm2_conv is
	 * set (in_proj [B; C; x], y = C * conv(B * x) over lfm2_kconv causal taps per channel,
	 * out_proj; biases with lfm2_conv_bias), else attention with q_layernorm /
	 * k_layernorm per head, RoPE, out_proj */
	bool lfm2, lfm2_conv_bias;
	uint64_t lfm2_conv[4];
	int64_t lfm2_kconv;
	/* MiniMax (MiniMaxForCausalLM; cfg_minimax.c, minimax.c; kind REF_MIXTRAL): layer i is
	 * a lightning-attention layer when bit i of mm_lin is set, else Mixtral's attention;
	 * every residual is x = alpha * norm(x) + beta * branch with the normed input as the
	 * residual (mm_alpha[0] softmax attention, [1] lightning, [2] the MoE; the betas, equal,
	 * are resid_mult) */
	bool minimax;
	uint64_t mm_lin[4];
	double mm_alpha[3];
	/* Cohere (1: CohereForCausalLM) / Cohere2 (2) (cfg_cohere.c): LayerNorms without bias
	 * (layernorm set, no bias read), the parallel block x += attn(h) + mlp(h) with one
	 * h = input_layernorm(x), per-head q_norm [H, d] / k_norm [KV, d] LayerNorms (qk_norm:
	 * use_qk_norm, Cohere only), RoPE on adjacent pairs (rope_pairs), logits times
	 * logit_mult; Cohere2's full_attention layers (window_pattern) without RoPE */
	int cohere;
	double logit_mult; /* logits times this (Cohere's logit_scale); 0 = none */
	uint64_t q3n_linear[4];
	int64_t lin_hk, lin_hv, lin_dk, lin_dv, lin_kconv;
	/* ERNIE 4.5 (Ernie4_5ForCausalLM kind REF_DENSE, Ernie4_5_MoeForCausalLM kind
	 * REF_DEEPSEEK for its MoE; cfg.c): Llama's attention with use_bias biases and RoPE on
	 * adjacent pairs over the whole head (rope_pairs); MoE layers i with (i + 1) % moe_every
	 * == 0 and moe_start <= i <= moe_end; softmax router in float32, the top-k chosen on
	 * softmax + moe_statics.e_score_correction_bias, weighted by the softmax values over
	 * max(their sum, norm_min); moe_num_shared_experts shared experts added ungated */
	bool ernie;
	/* Qwen3-VL-MoE (Qwen3VLMoeForConditionalGeneration's language model; kind
	 * REF_QWEN2_MOE; qwen3vl.c): Qwen3-MoE's layers, the top-k softmax weights always
	 * renormalised (Qwen3VLMoeTextSparseMoeBlock ignores norm_topk_prob), the experts
	 * read from the checkpoint's bmm stacks mlp.experts.gate_up_proj [E, hid, 2*Ie]
	 * (gate the first Ie columns) / down_proj [E, Ie, hid] */
	bool q3vl_moe;
	/* Aria's language model (AriaTextModel): every layer's mlp routes the top moe_topk
	 * router.weight logits (softmax over them) to the bmm stacks experts.fc1.weight
	 * [E, hid, 2*Ie] (gate the first Ie columns) / fc2.weight [E, Ie, hid] and adds
	 * shared_experts (Ie x moe_num_shared_experts wide) ungated; silu only */
	bool aria;
	int64_t moe_start, moe_end, moe_every;
	double norm_min;
	uint64_t l4_rope[4], l4_chunked[4], l4_moe[4];
	int64_t chunk;
	double floor_scale, temp_scale;
	/* An MLP without a gate (Apertus, Arcee; cfg_apertus.c, nogate.c):
	 * mlp.down_proj(act(mlp.up_proj(x))), biases where the checkpoint has them; act
	 * REF_ACT_XIELU reads the layer's mlp.act_fn scalars. apertus: the decoder's norms are
	 * attention_layernorm / feedforward_layernorm (ref_attn_norm / ref_mlp_norm).
	 * nemotron: Nemotron's LayerNorm1P norms (layernorm, norm_off 1), norm_eps, RoPE on the
	 * first int(head_dim * partial_rotary_factor) dims (rot_dim). jais2: Jais 2's nn.LayerNorm
	 * norms (layernorm, norm_off 0), relu2, interleaved_sliding_window (local_mask),
	 * logit_scale (jais2.c) */
	bool nogate, apertus, nemotron, jais2;
	/* Granite 4.0 (GraniteMoeHybridForCausalLM; cfg_granite4.c, granite4.c; granite and
	 * stacked_experts set: Granite's multipliers, GraniteMoE's router and stacked experts
	 * (kind REF_MIXTRAL), the shared MLP ungated beside them or alone (kind REF_DENSE,
	 * I = Is, module shared_mlp.)): layer i is a Mamba2 mixer when bit i of g4_mamba is
	 * set (REF_L4_MAX_LAYERS bits), else Llama's attention, with RoPE only when g4_rope
	 * (position_embedding_type "rope"). The mixer: m_heads heads of m_dh, m_groups groups
	 * of state m_state, a causal depthwise conv m_conv taps wide over [x; B; C] */
	bool g4, g4_rope;
	uint64_t g4_mamba[4];
	int64_t m_heads, m_dh, m_groups, m_state, m_conv;
	/* Hunyuan V1 (cfg_hunyuan.c; kind REF_DENSE, Llama's math): the per-head q / k norms
	 * (qk_norm: use_qk_norm) are self_attn.query_layernorm / key_layernorm, applied after
	 * RoPE; the RoPE base takes rope_scaling's dynamic alpha */
	bool hunyuan;
	/* Bamba (BambaForCausalLM; cfg_granite4.c; kind REF_DENSE; g4 set too): Granite 4.0's
	 * mixer in the layers attn_layer_indices leaves out (g4_mamba), Llama attention with
	 * RoPE on the first rot_dim dims (partial_rotary_factor 0.5), the SwiGLU feed_forward
	 * after pre_ff_layernorm, model.final_layernorm; no multipliers */
	bool bamba;
	/* Falcon-H1 (FalconH1ForCausalLM; cfg_granite4.c, granite4.c; bamba and g4 set too):
	 * every layer Bamba's Mamba2 mixer (width mamba_d_ssm) and the attention (full RoPE,
	 * head_dim read) side by side on the same normed input, summed into the residual. The
	 * muP multipliers: fh1_attn_in / fh1_ssm_in on the two inputs, fh1_key on k,
	 * fh1_attn_out / fh1_ssm_out on the two outputs, fh1_mup[5] (ssm_multipliers) on
	 * in_proj's z / x / B / C / dt rows, fh1_gate / fh1_down (mlp_multipliers) on the
	 * feed_forward's gate and output; embedding_multiplier is embed_scale,
	 * lm_head_multiplier logit_mult. The mixer's gated norm exists with m_rms_norm, over
	 * m_norm_groups groups (mamba_n_groups), before the gate with m_norm_before_gate. */
	bool fh1, m_rms_norm, m_norm_before_gate;
	float fh1_attn_in, fh1_attn_out, fh1_ssm_in, fh1_ssm_out, fh1_key, fh1_gate, fh1_down;
	float fh1_mup[5];
	int64_t m_norm_groups; /* 0: 1 (Granite 4.0 / Bamba: one group over all channels) */
	/* Jamba (JambaForCausalLM; cfg_jamba.c, jamba.c; kind REF_QWEN2_MOE with experts, else
	 * REF_DENSE): layer i a Mamba (v1) mixer when bit i of g4_mamba is set (i %
	 * attn_layer_period != attn_layer_offset), else Llama's attention without positions;
	 * MoE when bit i of l4_moe is set (num_experts > 1, i % expert_layer_period ==
	 * expert_layer_offset), the softmax top-k weights not renormalised, router
	 * feed_forward.router, else a dense feed_forward; pre_ff_layernorm,
	 * model.final_layernorm. The mixer: m_inner channels, state m_state, dt rank m_rank,
	 * a causal depthwise conv m_conv taps wide over x */
	bool jamba;
	int64_t m_inner, m_rank;
	/* Mamba (MambaForCausalLM; mamba.c; also sets jamba, kind REF_DENSE): every layer
	 * Jamba's mixer, without the dt / B / C norms, and no feed_forward: x = x +
	 * mixer(input_layernorm(x)); read under Jamba's names (ref_mamba_rename) */
	bool mamba_lm;
	/* Falcon-Mamba (also mamba_lm): the mixer's dt / B / C through weightless RMSNorms of
	 * epsilon m_rms_eps (mixer_rms_eps, default 1e-6) */
	bool m_plain_norm;
	double m_rms_eps;
	/* Mamba2 (Mamba2ForCausalLM; also mamba_lm, g4 and granite, not jamba): every layer
	 * Granite 4.0's Mamba2 mixer (the gated norm over all channels, as transformers 4.57.1's
	 * MambaRMSNormGated), no feed_forward, read under Mamba's renaming (mamba.c); Granite's
	 * multipliers absent, so 1.0 */
	bool mamba2;
	/* Zamba2 (Zamba2ForCausalLM; zamba2.c; also mamba_lm and g4, not jamba or granite):
	 * every layer Granite 4.0's Mamba2 mixer (silu, the gated norm per mamba_n_groups
	 * group), the hybrid layers (bit i of z2_hybrid) adding linear(shared block z2_blocks'
	 * j % z2_blocks) before their input_layernorm; adapters of rank z2_rank (q / k / v too
	 * with z2_attn_ad), RoPE with z2_rope; hidden_act gelu the MLP's */
	bool zamba2, z2_attn_ad, z2_rope;
	int64_t z2_blocks, z2_rank;
	uint64_t z2_hybrid[4];
	/* Nemotron-H (NemotronHForCausalLM; nemotron_h.c; also g4 and nogate, kind REF_DENSE):
	 * one mixer per layer, x = x + mixer(norm(x)): Granite 4.0's Mamba2 mixer where bit i of
	 * g4_mamba is set (silu, the gated norm per m_norm_groups group), the relu2 MLP
	 * (nogate) where bit i of nh_mlp is, else the attention without RoPE; read under the
	 * Granite 4.0 / Arcee names (ref_nh_rename); where bit i of nh_moe is (also set in
	 * nh_mlp) the MoE: DeepSeek-V3's routing (ref_route_ds: sigmoid, gate.
	 * e_score_correction_bias, n_group / topk_group, norm_topk, routed_scale), the relu2
	 * experts up_proj / down_proj and the shared experts (Is wide), both without a gate */
	bool nh;
	uint64_t nh_mlp[4], nh_moe[4];
	/* Gemma 3n (Gemma3nForCausalLM; gemma3n.c, gemma3n_attn.c; kind REF_DENSE, its own pass):
	 * g3n_alt AltUp streams (the active one g3n_active), laurel_rank, the per-layer inputs
	 * g3n_ple wide over g3n_pvocab rows, layer l full_attention when bit l of g3n_full (else
	 * sliding, window), its keys / values layer g3n_src[l]'s (-1: its own), the gaussian
	 * top-k's icdf(activation_sparsity_pattern[l]) g3n_zmul[l] (0: none); final_cap, theta /
	 * theta_local, eps */
	bool g3n;
	int64_t g3n_alt, g3n_active, g3n_laurel, g3n_ple, g3n_pvocab;
	uint64_t g3n_full[2];
	int16_t g3n_src[128];
	float g3n_zmul[128];
	/* GPT-NeoX (cfg_neox.c, neox.c; kind REF_DENSE): StarCoder2's LayerNorms with biases
	 * (layernorm) and plain MLP (plain_mlp) and Phi-3's fused qkv_proj (fused_ckpt), read
	 * under those names from the checkpoint's gpt_neox.* (ref_neox_rename), RoPE on the
	 * first rot_dim dims; neox_par: the parallel residual x = mlp(ln2(x)) + attn(ln1(x)) + x */
	bool neox, neox_par;
	/* BLOOM (cfg_neox.c, neox.c; kind REF_DENSE): GPT-NeoX's names and math read the same
	 * way, sequential, no RoPE: ALiBi (ref_alibi_slopes) in every attention, and the
	 * word-embedding LayerNorm (model.embed_norm) on the embeddings */
	bool bloom;
	/* Phi (cfg_neox.c, neox.c; kind REF_DENSE): GPT-NeoX's parallel residual (neox_par) with
	 * one norm, input_layernorm, before both branches; StarCoder2's LayerNorms and plain MLP
	 * (mlp.fc1 / fc2 read as c_fc / c_proj), self_attn.dense as o_proj, model.final_layernorm
	 * as model.norm, lm_head.bias added (lm_bias), RoPE on the first rot_dim dims */
	bool phi;
	/* DBRX (cfg_dbrx.c, dbrx.c; kind REF_MIXTRAL): its tensors renamed onto Mixtral's
	 * (ref_dbrx_rename: zero biases for its bias-free LayerNorms, the 2-D expert stacks
	 * split per expert, w2 transposed), Phi-3's qkv_proj (fused_ckpt), OLMo's clip_qkv */
	bool dbrx;
	/* StableLM (cfg_neox.c; kind REF_DENSE, Llama's math and names): LayerNorms with biases
	 * (layernorm), q/k/v biases where the checkpoint has them, RoPE on the first rot_dim
	 * dims */
	bool stablelm;
	/* Ministral (cfg_smollm3.c; kind REF_DENSE, Llama's math): layer i uses the sliding window
	 * when bit i of local_mask is set (local_masked; layer_types) */
	bool ministral;
	/* MPT (cfg_dbrx.c, dbrx.c; kind REF_DENSE): its tensors renamed onto StarCoder2's /
	 * Phi-3's (ref_dbrx_rename: zero biases for its bias-free LayerNorms), LayerNorms
	 * (layernorm), plain GELU MLP without biases (plain_mlp), Phi-3's qkv_proj (fused_ckpt),
	 * OLMo's clip_qkv, no RoPE: ALiBi with alibi_max (attn_config.alibi_bias_max) over the
	 * H heads (ref_alibi_slopes) */
	bool mpt;
	double alibi_max;
	/* LongCat-Flash (longcat.c; kind REF_DEEPSEEK for the MLA): its layer i read as two
	 * virtual layers 2i and 2i + 1 (L counts them), each an MLA sublayer and a dense MLP;
	 * layer i's shortcut MoE block on virtual layer 2i's MLP input, added after virtual
	 * layer 2i + 1; n_zero identity experts after the E routed ones (zero_expert_num) */
	bool longcat;
	int64_t n_zero;
	/* GPT-2 (gpt2.c; kind REF_DENSE): its tensors renamed onto StarCoder2's LayerNorms and
	 * plain MLP and Phi-3's fused qkv_proj (ref_gpt2_rename: the checkpoint's Conv1D weights
	 * transposed), the learned positions transformer.wpe added to the embeddings, no RoPE */
	bool gpt2;
	/* GPTBigCode (gpt2 set too): nn.Linear weights (nothing transposed), one kv head */
	bool bigcode;
	/* JAIS (JAISLMHeadModel, remote code; gpt2 set too, gpt2.c): GPT-2's blocks with the
	 * SwiGLU MLP c_fc(x) * silu(c_fc2(x)) read as Llama's gated MLP (c_fc2 the gate; a rank's
	 * c_fc / c_fc2 rows apart, ref_shard_mlp_rank), embed_scale on wte + wpe, logit_mult,
	 * attn_scale head_dim^-1 with scale_qk_dot_by_d; jais_alibi: position_embedding_type
	 * alibi (no wpe; _get_alibi_slopes, alibi_max 8, each rank its heads') */
	bool jais, jais_alibi;
	/* CLIP's text tower (clip.c; kind REF_DENSE, dec_cls): its tensors renamed onto
	 * StarCoder2's LayerNorms and plain MLP, Llama's q/k/v and o_proj with biases, the learned
	 * positions added to the embeddings (vocabulary-parallel in a shard), no RoPE,
	 * text_projection the score head (n_labels = projection_dim) */
	bool clip;
	/* SigLIP's text tower (clip set too; clip.c): attention without the causal mask,
	 * text_model.head (with score.bias) the score head (n_labels = projection_size),
	 * SiglipTextConfig's gelu_pytorch_tanh and 1e-6 */
	bool siglip;
	/* OPT (cfg_opt.c, opt.c; kind REF_DENSE, its own passes): embed_tokens wep
	 * (word_embed_proj_dim) wide with project_in / project_out when wep != hid, the learned
	 * positions (max_pos + 2 rows), pre-norm layers with opt_pre (do_layer_norm_before), else
	 * post-norm; model.decoder.final_layer_norm with opt_fnorm; biases with opt_bias
	 * (enable_bias) */
	bool opt, opt_pre, opt_fnorm, opt_bias;
	int64_t wep;
	/* Whisper (cfg_whisper.c, whisper.c; kind REF_DENSE, its own passes): the encoder's
	 * layers, heads, ffn width, mel bins and positions (max_source_positions; its input is a
	 * fixed seeded log-mel of twice as many frames), the decoder's positions in max_pos */
	bool whisper;
	int64_t wh_el, wh_eh, wh_ei, wh_mel, wh_src;
	/* GPT-J (cfg_neox.c, gptj.c; phi set too: Phi's block, read under Phi's names after
	 * ref_gptj_rename): RoPE on the adjacent pairs (rope_pairs) of the first rotary_dim dims,
	 * q/k/v and out_proj without biases */
	bool gptj;
	/* Persimmon (cfg_neox.c, neox.c; kind REF_DENSE): GPT-NeoX's tensors under
	 * model.layers.* names (ref_neox_rename: self_attn.query_key_value / dense,
	 * mlp.dense_h_to_4h / dense_4h_to_h, model.final_layernorm), the sequential residual, with
	 * ps_qkln (qk_layernorm) q and k LayerNormed per head by self_attn.q_layernorm /
	 * k_layernorm [d] weight and bias shared by every head (ref_persimmon_qk), before RoPE */
	bool persimmon, ps_qkln;
	/* Chameleon (cfg_chameleon.c; kind REF_DENSE): Llama's decoder with q and k LayerNormed
	 * per head (eps 1e-5) by self_attn.q_norm [H, d] / k_norm [KV, d], each head its own
	 * weight and bias row (ref_chameleon_qk), before RoPE; swin_norm sets olmo2 and sandwich
	 * (the norms after the sublayers, under input_layernorm / post_attention_layernorm) */
	bool chameleon;
	/* Falcon (cfg_neox.c, neox.c; kind REF_DENSE): BLOOM's transformer.* names read as
	 * GPT-NeoX's (ref_neox_rename: query_key_value's [KV, H/KV + 2, d] groups reordered into
	 * [q; k; v], ln_attn / ln_mlp as input_layernorm / post_attention_layernorm); neox_par
	 * with parallel_attn, fl_one_ln: one input_layernorm before both (falcon-7b); fl_alibi:
	 * ALiBi instead of RoPE, the slopes scaled by 1/sqrt(d) (ref_alibi_slopes) */
	bool falcon, fl_one_ln, fl_alibi;
	/* InternLM2 (InternLM2ForCausalLM, remote code; kind REF_DENSE): Llama's decoder read
	 * under Llama's names (ref_internlm2_rename, internlm2.c: the checkpoint's wqkv
	 * [KV, H/KV + 2, d] groups unpacked into q_proj / k_proj / v_proj) */
	bool internlm2;
	/* EXAONE 3.x (ExaoneForCausalLM, remote code; kind REF_DENSE): Llama's decoder read under
	 * Llama's names (ref_exaone_rename, exaone.c) */
	bool exaone;
	/* Qwen, first generation (QWenLMHeadModel, remote code; kind REF_DENSE): Llama's decoder
	 * with q/k/v biases read under Llama's names (ref_qwen_rename, qwen.c) */
	bool qwen;
	/* Baichuan / Baichuan2 (BaiChuanForCausalLM / BaichuanForCausalLM, remote code; kind
	 * REF_DENSE): Llama's decoder read under Llama's names (ref_baichuan_rename, baichuan.c:
	 * W_pack's thirds as q_proj / k_proj / v_proj, Baichuan2's lm_head rows normalized);
	 * bc_alibi: ALiBi (ref_alibi_slopes, alibi_max 8, unscaled) instead of RoPE, as vLLM's
	 * BaichuanForCausalLM runs it unless hidden_size is 4096 */
	bool baichuan, bc_alibi;
	/* TeleChat2 (TeleChat2ForCausalLM, remote code; kind REF_DENSE): Llama's decoder with
	 * o_proj / down_proj biases, the checkpoint read under Llama's names (ref_telechat2_rename,
	 * telechat2.c: key_value de-interleaved into k_proj / v_proj) */
	bool telechat2;
	/* Bailing MoE (BailingMoeForCausalLM, remote code; kind REF_QWEN2_MOE, fused_ckpt;
	 * bailing.c): Llama's decoder under Llama's names, every layer Qwen2-MoE's routing
	 * (norm_topk_prob default true) with mlp.shared_experts added ungated */
	bool bailing;
	/* Bailing MoE V2 (BailingMoeV2ForCausalLM, Ling 2.0, remote code; kind REF_DEEPSEEK with
	 * glm4_moe and fused_ckpt; bailing.c): GLM-4.5's reading under Bailing's names */
	bool bailing_v2;
	/* AFMoE (AfmoeForCausalLM, Arcee's Trinity; kind REF_DEEPSEEK with glm4_moe; cfg_afmoe.c,
	 * afmoe.c): Gemma 2's sandwich under its own names, the output-gated attention (sliding
	 * layers with RoPE, full ones without), GLM-4.5's routing with expert_bias */
	bool afmoe;
	/* openPangu-Ultra-MoE (PanguUltraMoEForCausalLM, remote code; kind REF_DEEPSEEK;
	 * cfg_pangu_moe.c): DeepSeek-V3's pass without the correction bias, Gemma 2's sandwich
	 * (sandwich_norm) under its own names (afmoe.c's rename) */
	bool pangu_moe;
	/* Step 3 (Step3TextForCausalLM, remote code; kind REF_DEEPSEEK with glm4_moe and ds_moe;
	 * step3.c): the inter_norm / wq attention over one kv head, DeepSeek-MoE's softmax router
	 * on the layers moe_layers_enum names (l4_moe), under DeepSeek-MoE's names */
	bool step3;
	/* MiniCPM (MiniCPMForCausalLM, remote code; kind REF_DENSE; cfg_minicpm.c): Llama's
	 * decoder under Llama's names, scale_emb / scale_depth / dim_model_base as Granite's
	 * embed_scale / resid_mult / logits_div */
	bool minicpm;
	/* MiniCPM3 (MiniCPM3ForCausalLM, remote code; kind REF_DEEPSEEK without experts; minicpm
	 * set too): DeepSeek-V2's MLA (mla.c) with the rope parts turned by rotate-half (no
	 * interleave), q_a_layernorm / kv_a_layernorm at rms_norm_eps (vLLM's minicpm3.py), scores
	 * times (nope + rope)^-0.5, every layer MiniCPM's dense MLP */
	bool minicpm3;
	/* Snowflake Arctic (ArcticForCausalLM, remote code; kind REF_MIXTRAL; arctic.c): dense
	 * layers' ArcticMLP block_sparse_moe.mlp (w1 / w3 / w2), MoE every moe_layer_frequency-th
	 * layer (sparse_step), top-k renormalized only above 1; arctic_res (use_residual): a MoE
	 * layer's residual_mlp on residual_layernorm beside the MoE, which reads the layer input */
	bool arctic, arctic_res;
	/* Tele-FLM (TeleFLMForCausalLM, remote code; kind REF_DENSE, read_act; teleflm.c): Llama's
	 * decoder, with use_mup the embeddings times input_mult (embed_scale) and the logits times
	 * output_mult / mup_scale_factor (logit_mult) */
	bool teleflm;
	/* LFM2-MoE (Lfm2MoeForCausalLM; kind REF_MIXTRAL, lfm2 set too; cfg_lfm2.c): LFM2's
	 * layers; the feed_forward of layers < first_dense (num_dense_layers) the SwiGLU w1 / w3
	 * / w2 of I (intermediate_size) rows, of the others the MoE: sigmoid of
	 * feed_forward.gate, the top-k chosen on it plus the expert bias (lfm2_bias:
	 * use_expert_bias; checkpoint feed_forward.expert_bias, ranks
	 * feed_forward.gate.e_score_correction_bias), weighted by the sigmoid, renormalised with
	 * norm_topk, x routed_scale (ref_route_ds, one group) */
	bool lfm2_moe, lfm2_bias;
	/* Mllama (MllamaForConditionalGeneration's language model; kind REF_DENSE; ckpt.c):
	 * Llama's decoder on text tokens, the layers of ml_cross (text_config's
	 * cross_attention_layers) skipped as MllamaTextModel skips them without cross-attention
	 * states; embed_tokens holds vocab_size + 8 rows (ref_embed_rows) */
	bool mllama;
	uint64_t ml_cross[4];
	/* MiniMax-M2 (cfg_minimax_m2.c; kind REF_MIXTRAL, qk_norm and qk_norm_full set): the
	 * router block_sparse_moe.gate scores by sigmoid, the top-k chosen on the scores plus
	 * block_sparse_moe.e_score_correction_bias (ref_route_ds, one group), weighted by the
	 * scores renormalised; in a shard each rank's q_norm / k_norm hold its own heads'
	 * channels ([Hl*d] / [KVl*d]) */
	bool m2;
	/* Orion (OrionForCausalLM, remote code; kind REF_DENSE, cfg.c): Llama's decoder and names,
	 * its input_layernorm, post_attention_layernorm and model.norm LayerNorms with biases
	 * (layernorm), eps rms_norm_eps (OrionConfig's 1e-5 filled by the loader), Llama's
	 * rope_scaling */
	bool orion;
	/* Ouro (OuroForCausalLM, remote code; kind REF_DENSE, ouro.c): Qwen2's decoder without
	 * biases and Gemma 2's sandwich norms under its own names, the layers run ouro_steps
	 * (total_ut_steps) times with model.norm between the passes; 0 for every other family */
	bool ouro;
	/* PLaMo 3 (Plamo3ForCausalLM, remote code; kind REF_DENSE, plamo3.c): Gemma 3's sandwich,
	 * q/k norms and sliding layers under its own names, the norms' load-time offsets added;
	 * also set for PLaMo 2 (its cfg_kind.c row) */
	bool plamo3;
	/* PLaMo 2 (Plamo2ForCausalLM, remote code; plamo2.c; with plamo3's decoder switches, no
	 * windows): layer i Plamo2MambaMixer when bit i of g4_mamba is set, its sizes m_heads,
	 * m_dh, m_state, m_conv, m_rank (dt rank), m_inner; per-head q / k norm rows [H, d] */
	bool plamo2;
	int64_t ouro_steps;
	/* Grok-1 (Grok1ModelForCausalLM, remote code; kind REF_MIXTRAL, grok1.c): its names read
	 * as Mixtral's and Gemma 2's (sandwich), the o_proj output times gk_attn_mult
	 * (attn_output_multiplier) before post_attn_norm, the router logits soft-capped
	 * 30 tanh(x / 30) before the softmax top-k (vLLM's Grok1MoE), gelu (erf) experts;
	 * embed_scale, logit_mult and attn_cap its multipliers and soft-cap */
	bool grok;
	float gk_attn_mult;
	/* Solar (SolarForCausalLM, remote code; kind REF_DENSE, solar.c): Llama's decoder whose
	 * layer inputs the block skip connections save and mix (vLLM's SolarModel.forward):
	 * sk_save[k] / sk_mix[k] the layers of bskcn_1 / bskcn_2 and bskcn_3 / bskcn_4 (bit i of
	 * words [4]), sk_tv bskcn_tv[1] */
	bool solar;
	uint64_t sk_save[2][4], sk_mix[2][4];
	double sk_tv;
	/* DeciLM (DeciLMForCausalLM, remote code; kind REF_DENSE, decilm.c): Llama's decoder whose
	 * layers block_configs sizes one by one (the loader's ckpt_config_decilm): bit i of
	 * dl_attn / dl_ffn when layer i has attention / an MLP (a no-op one skips its residual
	 * branch), dl_kv[i] / dl_I[i] its kv heads and MLP width; KV and I hold the largest */
	bool decilm;
	uint64_t dl_attn[4], dl_ffn[4];
	int32_t dl_kv[256], dl_I[256];
	/* MiMo-V2-Flash (MiMoV2FlashForCausalLM, remote code; kind REF_DEEPSEEK with glm4_moe,
	 * mimo_v2.c): layer i's attention the sliding kind [1] when bit i of local_mask is set (the
	 * window, theta_local), else the full kind [0], of mv_h heads, mv_kv kv heads, mv_d q / k
	 * and mv_vd v dims, RoPE on the first mv_rot; v times mv_vscale; sinks on the sliding
	 * layers with mv_sinks; MoE layers l4_moe */
	bool mimo_v2, mv_sinks;
	int64_t mv_h[2], mv_kv[2], mv_d[2], mv_vd[2], mv_rot[2];
	double mv_vscale;
	/* openPangu-Pro-MoE-V2 (PanguProMoEV2ForCausalLM, remote code; kind REF_DEEPSEEK with
	 * glm4_moe and pangu_moe, pangu_sink.c): the sink attention, v heads of pv2_vd dims,
	 * pv2_sinks static sinks per kv head */
	bool pv2;
	int64_t pv2_vd, pv2_sinks;
} ref_cfg;

#define REF_L4_MAX_LAYERS 256 /* the bits of ref_cfg's Llama 4 layer masks */

/* Bit i of a Llama 4 layer mask (false beyond REF_L4_MAX_LAYERS). */
static inline bool ref_l4_bit(const uint64_t *m, int64_t i)
{
	return i >= 0 && i < REF_L4_MAX_LAYERS && ((m[i / 64] >> (i % 64)) & 1u);
}

#endif
