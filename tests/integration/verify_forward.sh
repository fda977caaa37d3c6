#!/usr/bin/env bash
# weightctl verify-forward: the reference forward pass over every rank of a
# layout agrees with the full checkpoint (PASS, exit 0) for dense, MoE and
# quantized layouts; exit codes 2 (usage) and 3 (layout invalid / unsupported).
# Under a sanitizer build the per-family checks run for fams.sh's subset and the quantized
# sources.
set -u
B=${WT_BUILD:-build}
CTL=$B/weightctl
MK=$B/wt-mkckpt
T=$(mktemp -d "${TMPDIR:-/tmp}/wt-verifyfwd-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "verify_forward.sh: FAIL: $*"; exit 1; }

for f in llama mixtral qwen2_moe bert deepseek_v3 qwen2_vl qwen2_vl_hf5 qwen2_5_vl llama_w8a8 llama_w4a16 \
	llama_w4a8 llama_w4a16_asym llama_w8a8_asym llama_w8a16 llama_w4a16_actorder llama_ct_fp8 llama_ct_fp8_tensor \
	qwen3_ct_fp8_block gemma gemma2 gemma3_text phi3 starcoder2 deepseek_v2 glm glm4 olmo2 granite seed_oss smollm3 granitemoe granitemoeshared gemma3 gemma3_hf5 olmoe olmo \
	phimoe gpt_oss llama4 llama4_text glm4_moe dots1 llama4_fbgemm qwen3_next ernie4_5 ernie4_5_moe cohere cohere2 qwen3_vl qwen3_vl_moe olmo3 exaone4 mistral3 mistral3_hf5 glm4v glm4v_moe apertus arcee lfm2 granitemoehybrid granitemoehybrid_dense hunyuan_v1_dense hunyuan_v1_moe bamba nemotron minimax jamba gpt_neox phi flex_olmo vaultgemma dbrx stablelm ministral falcon_h1 mpt longcat_flash gpt2 gpt_bigcode llava llava_next mamba falcon_mamba opt gptj bloom persimmon falcon mamba2 idefics3 smolvlm paligemma aya_vision llava_onevision cohere2_vision llava_next_video qwen2_audio internvl internvl_qwen3 roberta xlm_roberta xlm_roberta_cls llava_pixtral fuyu lfm2_vl internvl_qwen3_moe chameleon modernbert modernbert_cls granite_speech blip2 aria voxtral mllama zamba2 qwen3_cls bert_cls bert_tok qwen2_5_omni gemma3n_text qwen2_emb qwen2_rm qwen3_omni_moe whisper gpt2_cls clip internlm2 internlm2_ve internlm2_rm minimax_m2 nemotron_h siglip jamba_cls modernbert_tok chatglm exaone qwen baichuan baichuan_7b minicpm internlm3 nemotron_h_moe minicpm3 lfm2_moe minicpm_moe internlm orion telechat2 jais arctic grok1 bailing_moe bailing_moe_v2 xverse aquila stablelm_epoch teleflm falcon_rw minimax_text01 solar mimo deepseek_moe telechat afmoe ouro decilm jais2 deepseek_v32 step3_text plamo3 plamo2 pangu_dense mimo_v2_flash llama_bidir_emb nomic_bert gte_new llama_bidir_cls gritlm pangu_ultra_moe gte_new_cls bert_splade jina_vl pangu_pro_moe_v2 minimax_vl_01 phi3v; do
	"$MK" --family "$f" --out "$T/$f" --seed 5 >/dev/null || fail "wt-mkckpt $f"
done

# Under a sanitizer build only fams.sh's subset and the quantized sources (compressed-tensors,
# FP8, fbgemm: their dequantization paths) are checked; the reference tests run every family's
# forward pass under the sanitizers, and the normal pass checks all here.
. "$(dirname "$0")/fetch_lib/fams.sh"
SAN_SOURCES="llama_fp8 llama_w8a8 llama_w4a16 llama_w4a8 llama_w4a16_asym llama_w8a8_asym llama_w8a16
	llama_w4a16_actorder llama_ct_fp8 llama_ct_fp8_tensor qwen3_ct_fp8_block llama4_fbgemm"
wanted() {
	san_wanted "$1" || case " $(echo $SAN_SOURCES) " in *" $1 "*) ;; *) return 1 ;; esac
}
san_wanted llama_w8a8 ||
	echo "verify_forward.sh: sanitizer build: the checks of" $SAN_FAMS $SAN_SOURCES >&2
check() { # model, flags...
	local m=$1
	shift
	wanted "$m" || return 0
	"$CTL" verify-forward --model-dir "$T/$m" "$@" >"$T/out" 2>&1 ||
		fail "$m $*: $(cat "$T/out")"
	grep -q '^PASS$' "$T/out" || fail "$m $*: no PASS line"
	grep -q 'max |full - sharded|' "$T/out" || fail "$m $*: no difference line"
	echo "$m $*: $(grep ratio "$T/out" | sed 's/.*\(ratio [^,]*\), \(budget [^ ]*\).*/\1 \2/')"
}
check llama --tp-size 8
check llama --tp-size 2 --quant int8-channel
check mixtral --ep-size 4
check mixtral --tp-size 2 --w13-order up_gate
check qwen2_moe --tp-size 2 --ep-size 2 --tokens 5,1023,77
check qwen2_moe --ep-size 2 --quant fp8-block
check bert --tp-size 4
check deepseek_v3 --tp-size 2 --dtype fp32
check deepseek_v3 --tp-size 2 --ep-size 2 --quant fp8-block
check qwen2_vl --tp-size 4
check qwen2_vl_hf5 --tp-size 2 --quant fp8-channel
check qwen2_5_vl --tp-size 4
. "$(dirname "$0")/verify_forward_families.bash" || # the Gemma families .. CLIPModel
	fail "verify_forward_families.bash: not found or failed"
# InternLM2: Llama's decoder with wqkv packed per kv group (each rank its own heads; the two
# kv heads replicated at TP 4), w1 / w3 merged into gate_up_proj, untied output
check internlm2 --tp-size 4
check internlm2 --tp-size 2 --quant int8-channel
# InternLM2-VE (Mono-InternVL's language model): InternLM2's layers and the visual expert
# feed_forward_ve cut as feed_forward (unread on text); four kv heads replicated at TP 8
check internlm2_ve --tp-size 8
check internlm2_ve --tp-size 2 --quant int8-channel
# InternLM2's reward model: InternLM2's decoder without output, v_head [1, hid] by columns
# (unquantized), every token's score summed over the ranks
check internlm2_rm --tp-size 4
check internlm2_rm --tp-size 2 --quant int8-channel
# MiniMax-M2: q_norm / k_norm over all heads (each rank its heads' channels, the mean squares
# summed over the ranks; TP 4 shares the two kv heads), partial RoPE, sigmoid routing with the
# correction bias
check minimax_m2 --tp-size 4
check minimax_m2 --tp-size 2 --ep-size 2 --quant int8-channel
check minimax_m2 --tp-size 4 --quant fp8-channel
# Nemotron-H: one mixer per layer ("M-M*-": Mamba2, relu2 MLP, attention without RoPE)
check nemotron_h --tp-size 4
check nemotron_h --tp-size 2 --quant int8-channel
# SiglipModel: CLIP's text tower without the causal mask (gelu_pytorch_tanh, eps 1e-6),
# text_model.head (with its bias) whole on every token; the text MLP (96 / 192) unquantized
check siglip --tp-size 4
check siglip --tp-size 2 --quant int8-channel
check siglip --tp-size 4 --vocab-pad 1 # positions 0..6 over ranks 0 and 1
# JambaForSequenceClassification: Jamba's decoder, score.weight whole on every token
check jamba_cls --tp-size 4
check jamba_cls --tp-size 2 --ep-size 2
check jamba_cls --tp-size 2 --quant int8-channel
# ModernBertForTokenClassification: the encoder under model., its head on every token
check modernbert_tok --tp-size 4
check modernbert_tok --tp-size 2 --quant fp8-channel
# ChatGLM (THUDM's format): GLM's math with query_key_value [q; k; v] and its bias cut by
# heads (the two kv heads replicated at TP 4), dense_h_to_4h [gate; up] re-cut, untied
check chatglm --tp-size 4
check chatglm --tp-size 2 --quant int8-channel
# EXAONE 3.x: Llama's decoder under transformer.h.{i}.attn.attention / mlp.c_fc_0 / c_fc_1 /
# c_proj, q/k/v fused by heads (the two kv heads replicated at TP 4), untied, llama3 rope
check exaone --tp-size 4
check exaone --tp-size 2 --quant int8-channel
# Qwen (first generation): Llama's decoder with q/k/v biases under transformer.h.{i}.attn.c_attn
# ([q; k; v] cut by heads) / c_proj and mlp.w1 / w2 (up / gate) / c_proj, untied
check qwen --tp-size 4
check qwen --tp-size 2 --quant int8-channel
# Baichuan: Llama's decoder with W_pack [q; k; v] cut by heads; BaichuanForCausalLM at hidden
# 128 with ALiBi (each rank its heads' slopes), BaiChuanForCausalLM with RoPE; untied
check baichuan --tp-size 4
check baichuan --tp-size 2 --quant int8-channel
check baichuan_7b --tp-size 2
check baichuan_7b --tp-size 4 --quant fp8-channel
# MiniCPM: Llama's names, q/k/v fused by heads (the two kv heads replicated at TP 4), tied by
# MiniCPMConfig's default, scale_emb / scale_depth / dim_model_base
check minicpm --tp-size 4
check minicpm --tp-size 2 --quant int8-channel
# InternLM3: Llama's cut (vLLM's llama.py), head_dim given, qkv_bias / bias false, untied,
# dynamic rope
check internlm3 --tp-size 4
check internlm3 --tp-size 2 --quant int8-channel
# Nemotron-H's MoE layers ("ME*E"): DeepSeek-V3's routing (sigmoid, the correction bias for the
# choice, 2 of 4 groups, 3 experts a token, renormalised, x 2.5) over relu2 experts without a
# gate, the shared experts added
check nemotron_h_moe --tp-size 2 --ep-size 2
check nemotron_h_moe --tp-size 2 --quant int8-channel
# MiniCPM3: DeepSeek-V2's MLA (q_b_proj / kv_b_proj by heads, q_a / kv_a replicated, rotate-half
# RoPE) in MiniCPM's decoder (scale_emb / scale_depth / dim_model_base), dense MLP, tied
check minicpm3 --tp-size 4
check minicpm3 --tp-size 2 --quant int8-channel
# LFM2-MoE: LFM2's short-conv / attention layers, layer 0's dense SwiGLU, then the MoE routed
# as vLLM's lfm2_moe.py asks FusedMoE to (sigmoid, the expert bias for the choice, 3 of 8,
# renormalised, x 1.5), tied
check lfm2_moe --tp-size 2 --ep-size 2
check lfm2_moe --tp-size 2 --quant int8-channel
# MiniCPM-MoE: MiniCPM's decoder with vLLM's MiniCPMMoE (every expert on every rank, cut by tp in
# mlp.ws / w2s, unquantized; Mixtral's renormalized top-2 routing), tied
check minicpm_moe --tp-size 4
check minicpm_moe --tp-size 2 --quant int8-channel
# InternLM (first generation): Llama's cut (vLLM's llama.py), q/k/v and o_proj biases (bias
# true), MHA, untied, rotary base 10000
check internlm --tp-size 4
check internlm --tp-size 2 --quant int8-channel
# Orion: Llama's cut (vLLM's orion.py), the three norms LayerNorms with weight and bias (whole
# on every rank, unquantized), no linear biases, KV 2 of H 4 (replicated at TP 4), untied
check orion --tp-size 4
check orion --tp-size 2 --quant int8-channel
check orion --tp-size 4 --quant fp8-channel
# TeleChat2: Llama's decoder under transformer.h.* names (vLLM's telechat2.py), key_value's k / v
# interleaved per kv head, o_proj (dense) and down_proj biases, MHA, untied
check telechat2 --tp-size 4
check telechat2 --tp-size 2 --quant int8-channel
# JAIS: GPT-2's Conv1D layout with the SwiGLU c_fc / c_fc2, ALiBi (each rank its heads'
# slopes), embeddings_scale / width_scale, head_dim^-1 scores, tied
check jais --tp-size 4
check jais --tp-size 2 --quant int8-channel
# Arctic: a dense layer's block_sparse_moe.mlp w13 / w2, a MoE layer's ArcticMoE ws / w2s (every
# expert on every rank, cut by tp) with the residual MLP beside it, the router quantized
check arctic --tp-size 4
check arctic --tp-size 2 --quant int8-channel
# Grok-1: four RMSNorms per layer, soft-capped scores and router, gelu experts, the three
# multipliers (attn_output_multiplier on the all-reduced o_proj output), tied
check grok1 --tp-size 4
check grok1 --tp-size 2 --ep-size 2 --quant int8-channel
# Bailing MoE: Llama's decoder with query_key_value [q; k; v] and its bias, every layer MoE
# (softmax top 2 renormalized, one shared expert ungated), untied, kv heads never replicated
check bailing_moe --tp-size 4
check bailing_moe --tp-size 2 --ep-size 2
check bailing_moe --tp-size 2 --quant int8-channel
check bailing_moe_v2 --tp-size 8
check bailing_moe_v2 --tp-size 2 --ep-size 2
check bailing_moe_v2 --tp-size 4 --quant fp8-channel
# Xverse: Llama's cut (vLLM's llama.py), no biases, MHA, untied, rope_theta 10000 (absent)
check xverse --tp-size 4
check xverse --tp-size 2 --quant int8-channel
# Aquila: Llama's cut (vLLM's llama.py), no biases, GQA 8 / 2 (kv heads replicated at TP 4),
# untied, rope_theta 1e6
check aquila --tp-size 4
check aquila --tp-size 2 --quant int8-channel
# StableLM Epoch: StableLM's cut (vLLM's stablelm.py) under the remote config's keys (rope_pct 0.5,
# norm_eps), q/k/v biases, GQA 8 / 4 (one kv head a rank at TP 4), untied
check stablelm_epoch --tp-size 4
check stablelm_epoch --tp-size 2 --quant int8-channel
# Tele-FLM: Llama's cut (vLLM's teleflm.py over its llama.py), no biases, MHA, untied; the
# embeddings times input_mult 3, the logits times output_mult / mup_scale_factor 2.5 / 0.8
check teleflm --tp-size 4
check teleflm --tp-size 2 --quant int8-channel
# Falcon's original releases (RWForCausalLM, RefinedWeb): falcon.py's cut under RWConfig's keys
check falcon_rw --tp-size 4
check falcon_rw --tp-size 2 --quant int8-channel
# MiniMax-Text-01's remote names (MiniMaxText01ForCausalLM): minimax's cut, attn_type_list's
# kinds, the layernorm_* factors, RoPE on rotary_dim 16 of 32
check minimax_text01 --tp-size 4
check minimax_text01 --tp-size 2 --ep-size 2 --quant int8-channel
# MiniMax-VL-01: that language model under language_model. (its CLIP tower loaded, not run)
check minimax_vl_01 --tp-size 4
check minimax_vl_01 --tp-size 2 --ep-size 2 --quant int8-channel
# Phi-3-Vision: Phi-3's language model (its CLIP tower, separators and projector loaded, not run)
check phi3v --tp-size 8
check phi3v --tp-size 2 --quant int8-channel
# Solar: Llama's cut (vLLM's solar.py), GQA 8 / 2, untied, the block skip connections inside
# the four layers (both passes mix the layer inputs)
check solar --tp-size 4
check solar --tp-size 2 --quant int8-channel
# MiMo: Qwen2's cut (vLLM's mimo.py over qwen2.py), q/k/v biases, GQA 8 / 2 (kv heads
# replicated at TP 4), untied, rope_theta 640000; the MTP layer (model.mtp_layers.0.*) dropped
check mimo --tp-size 4
check mimo --tp-size 2 --quant int8-channel
# DeepSeek-MoE: vLLM's deepseek_v2.py with DeepseekAttention (Llama's attention, no biases), layer
# 0 dense, layers 1-2 MoE (softmax top 3 of 8, not renormalized, two shared experts), untied
check deepseek_moe --tp-size 4
check deepseek_moe --tp-size 2 --ep-size 2
check deepseek_moe --tp-size 2 --quant int8-channel
# TeleChat (TeleChatForCausalLM, the first generation): TeleChat2's cut (vLLM's telechat2.py),
# key_value de-interleaved, the dense / down_proj biases, MHA, tied (TeleChat-7B)
check telechat --tp-size 4
check telechat --tp-size 2 --quant int8-channel
# AFMoE (Arcee's Trinity; vLLM's afmoe.py): the output gate by the rank's heads, q/k norms, three
# sliding layers with RoPE and a full one without, layer 0 dense, layers 1-3 sigmoid-routed with
# the F32 expert_bias over groups plus two shared experts, mup; TP 8 replicates the 2 kv heads
check afmoe --tp-size 8
check afmoe --tp-size 2 --ep-size 2
check afmoe --tp-size 4 --quant fp8-channel
# Ouro: Qwen2's cut without biases, four norms a layer, the early-exit gate by columns; the
# layers run total_ut_steps (3) times over the same weights, so the quantized layouts are held
# to the scheme's budget times the passes (int8 0.03 x 3, fp8 0.12 x 3; docs/reference.md)
check ouro --tp-size 8
check ouro --tp-size 2 --quant int8-channel --budget 0.09
check ouro --tp-size 4 --quant fp8-channel --budget 0.36
# DeciLM (Llama-Nemotron): Llama's cut, each layer's kv heads (2, -, 1, 1: replicated from TP 2 /
# TP 4) and MLP width (256, 512, -, 256) its own, the no-op attention and ffn skipped
check decilm --tp-size 8
check decilm --tp-size 2 --quant int8-channel
check decilm --tp-size 4 --quant fp8-channel
# Jais 2 (Jais2ForCausalLM): nn.LayerNorm norms with biases, q/k/v/o and up/down biases, relu2
# without a gate, interleaved_sliding_window [4, null] over 3 layers (the list wraps); kv heads
# replicated at TP 4
check jais2 --tp-size 4
check jais2 --tp-size 2 --quant int8-channel
check jais2 --tp-size 4 --quant fp8-channel
# DeepSeek-V3.2 (DeepseekV32ForCausalLM): V3's pass (7 tokens < index_topk 2048: the indexer keeps
# every earlier token, so the sparse MLA is V3's dense one; the indexer tensors are served whole to
# every rank but not read here), layer 0 dense, MTP layer dropped
check deepseek_v32 --tp-size 8
check deepseek_v32 --tp-size 2 --ep-size 2
check deepseek_v32 --tp-size 4 --quant fp8-channel
# Step 3 (Step3TextForCausalLM; vLLM's step3_text.py): the replicated qkv_proj [qa; k; v] over one
# kv head, inter_norm and wq by heads; layer 0 dense, layers 1-2 softmax top-2 over stacked experts
# (moe_layers_enum) plus share_expert
check step3_text --tp-size 4
check step3_text --tp-size 2 --ep-size 2
check step3_text --tp-size 2 --quant int8-channel
check step3_text --tp-size 4 --quant fp8-channel
# MiMo-V2-Flash (mimo_v2_flash.py): full / sliding layers of their own sizes, v_head_dim, sinks
check mimo_v2_flash --tp-size 8
check mimo_v2_flash --tp-size 2 --ep-size 2
check mimo_v2_flash --tp-size 2 --quant int8-channel
check mimo_v2_flash --tp-size 4 --quant fp8-channel
# PLaMo 3 (Plamo3ForCausalLM; vLLM's plamo3.py): qkv_proj / gate_up_proj fused in the checkpoint
# under model.layers.layers., q/k norms, sandwich norms with vLLM's load-time offsets, sliding
# layers 0 and 2 (window 4, rope_local_theta) around full layer 1; kv heads replicated at TP 8
check plamo3 --tp-size 8
check plamo3 --tp-size 2 --quant int8-channel
check plamo3 --tp-size 4 --quant fp8-channel
# PLaMo 2 (Plamo2ForCausalLM; vLLM's plamo2.py): Mamba mixers (in_proj per head [gate; x], conv
# over x, bcdt_proj row-parallel) in layers 0 and 2, attention with per-head q/k norm rows in 1, 3
check plamo2 --tp-size 8
check plamo2 --tp-size 2 --quant int8-channel
! wanted plamo2 || grep -q "PLaMo 2's Mamba mixers" "$T/out" || fail "plamo2 budget: $(cat "$T/out")"
# openPangu-Embedded: Llama's cut (vLLM's openpangu.py, its dense decoder), q/k/v and o_proj
# biases (bias true), GQA 8 / 2 (kv heads replicated at TP 4), untied, rope_theta 1.6e7
check pangu_dense --tp-size 4
check pangu_dense --tp-size 2 --quant int8-channel
# openPangu-Ultra-MoE: DeepSeek-V3's MLA and MoE (no correction bias, one group) with the
# sandwich norms (sandwich_norm), MTP layer dropped, rope_theta 2.56e7
check pangu_ultra_moe --tp-size 8
check pangu_ultra_moe --tp-size 2 --ep-size 2
check pangu_ultra_moe --tp-size 4 --quant fp8-channel
# openPangu-Pro-MoE-V2: the sink attention (k_layernorm, 4 static sinks a kv head, v_channels,
# GPT-J RoPE on qk_rope_dim) and V3's MoE with the router bias, the sandwich, MTP dropped
check pangu_pro_moe_v2 --tp-size 4
check pangu_pro_moe_v2 --tp-size 2 --ep-size 2
check pangu_pro_moe_v2 --tp-size 2 --quant int8-channel
# LlamaBidirectionalModel: Llama's decoder under the base names, attention without the causal
# mask: every token's final hidden state
check llama_bidir_emb --tp-size 4
check llama_bidir_emb --tp-size 2 --quant int8-channel
# LlamaBidirectionalForSequenceClassification: the same decoder under model., attention without
# the causal mask, score.weight (whole, quantized) on every token
check llama_bidir_cls --tp-size 4
check llama_bidir_cls --tp-size 2 --quant int8-channel
# GritLM: vLLM's gritlm.py over Mistral's config, the generate runner's causal pass with lm_head
check gritlm --tp-size 4
check gritlm --tp-size 2 --quant int8-channel
# NomicBertModel: the post-norm encoder with RoPE and the SwiGLU fc11 / fc12 (bert_rope.c)
check nomic_bert --tp-size 8
check nomic_bert --tp-size 2 --quant int8-channel
# GteNewModel: the same encoder, geglu over up_gate_proj [up; gate], one token type row
check gte_new --tp-size 4
check gte_new --tp-size 4 --quant fp8-channel
check gte_new_cls --tp-size 2
check gte_new_cls --tp-size 4 --quant int8-channel
check bert_splade --tp-size 4 --quant fp8-channel
# JinaVLForRanking: Qwen2-VL's language model, then score.0 (rows), ReLU, score.2 (columns,
# partial scores summed) on every token, the head never quantized
check jina_vl --tp-size 4
check jina_vl --tp-size 2 --quant int8-channel
# Maverick's FP8 release (fbgemm_fp8): per-channel FP8 passed through exactly, or
# dequantized (BF16 rounding) and requantized
check llama4_fbgemm --tp-size 2 --ep-size 2 --quant fp8-channel
check llama4_fbgemm --tp-size 2
check llama4_fbgemm --ep-size 2 --quant int8-channel
# OLMo 1: parameter-free LayerNorms (no norm tensors), tied; clip_qkv on OLMo 1 and OLMoE
check olmo --tp-size 8
check olmo --tp-size 2 --quant int8-channel
for f in olmo olmoe; do
	cp -r "$T/$f" "$T/${f}_clip"
	sed -i 's/"clip_qkv": null/"clip_qkv": 1.0/' "$T/${f}_clip/config.json"
	"$CTL" verify-forward --model-dir "$T/$f" --logits "$T/a.npy" >/dev/null || fail "--logits $f"
	"$CTL" verify-forward --model-dir "$T/${f}_clip" --logits "$T/b.npy" >/dev/null ||
		fail "--logits ${f}_clip"
	cmp -s "$T/a.npy" "$T/b.npy" && fail "$f: clip_qkv 1.0 left the logits unchanged"
done
check olmo_clip --tp-size 4
check olmoe_clip --tp-size 2 --ep-size 2
# PhiMoE: LayerNorm and attention biases, sparsemixer routing, LongRoPE mscale,
# lm_head.bias cut as the LM head's rows (V 1003: padding entries on the last rank)
check phimoe --tp-size 2 --ep-size 2
check phimoe --tp-size 8
check phimoe --tp-size 2 --quant int8-channel
# GPT-OSS: attention sinks, biased router and experts, clamped SwiGLU; the MXFP4 experts
# are exact as BF16, requantized they are held to the MXFP4 budgets
check gpt_oss --tp-size 2 --ep-size 2
check gpt_oss --tp-size 4 --w13-order up_gate
check gpt_oss --tp-size 2 --quant int8-channel
grep -q "on an MXFP4 source" "$T/out" || fail "gpt_oss MXFP4 budget: $(cat "$T/out")"
# Granite: four multipliers, V 1003 padded per rank
check granite --tp-size 8
check granite --tp-size 2 --quant fp8-channel
# Seed-OSS: q/k/v, o_proj and MLP biases (the replicated ones added once), H x d 512 against
# hidden 256
check seed_oss --tp-size 8
check seed_oss --tp-size 2 --quant int8-channel
# SmolLM3: no RoPE on the no_rope_layers 0 layer, tied with the key absent
check smollm3 --tp-size 8
check smollm3 --tp-size 2 --quant fp8-channel
# GraniteMoE: experts stacked in the checkpoint, Mixtral's stacks on the ranks
check granitemoe --tp-size 2 --ep-size 2
check granitemoe --ep-size 3 --quant int8-channel
check granitemoeshared --tp-size 2 --ep-size 2
# RoPE scaling (reference/cfg_rope.c): Llama 3.1's llama3 at TP 4
cp -r "$T/llama" "$T/llama31"
sed -i 's/"rope_scaling": null/"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 16}/' \
	"$T/llama31/config.json"
check llama31 --tp-size 4
# --logits: the full path's logits as .npy [tokens, V]; the scaling moved them
"$CTL" verify-forward --model-dir "$T/llama" --tokens 1,2,3 --logits "$T/a.npy" >/dev/null ||
	fail "--logits llama"
"$CTL" verify-forward --model-dir "$T/llama31" --tokens 1,2,3 --logits "$T/b.npy" >"$T/out" ||
	fail "--logits llama31"
grep -q "logits \[3, 1000\] written to" "$T/out" || fail "--logits line: $(cat "$T/out")"
head -c 128 "$T/a.npy" | grep -aq "'shape': (3, 1000)" || fail "--logits npy header"
[ "$(stat -c %s "$T/a.npy")" -eq $((128 + 3 * 1000 * 4)) ] || fail "--logits npy size"
cmp -s "$T/a.npy" "$T/b.npy" && fail "llama3 rope scaling left the logits unchanged"
"$CTL" verify-forward --model-dir "$T/llama" --logits "$T/no/such/dir/x.npy" >/dev/null 2>"$T/err"
[ $? -eq 1 ] || fail "--logits into a missing folder should exit 1"
grep -q "pick a writable path" "$T/err" || fail "--logits error: $(cat "$T/err")"
# compressed-tensors sources: pass-through is exact (the full path dequantizes the
# checkpoint's codes); requantized and BF16 outputs are held to their budgets
check llama_w8a8 --tp-size 4 --quant int8-channel
check llama_w8a8 --tp-size 2
check llama_w8a8 --tp-size 2 --quant fp8-channel --requant allow
check llama_w4a16 --tp-size 2 --quant int4-group
check llama_w4a8 --tp-size 2 --quant int4-group
grep -q "budget 0.0001 (compressed-tensors pass-through" "$T/out" || fail "w4a8 pass-through budget"
check llama_w4a16 --tp-size 4 --quant int4-group --group-size 64 --requant allow
grep -q "budget 0.4 (quantization budget" "$T/out" || fail "w4a16 requant budget: $(cat "$T/out")"
check llama_w4a16_asym --tp-size 2 # zero points: dequantized to BF16
check llama_w4a16_asym --tp-size 2 --quant int8-channel --requant allow
check llama_w8a8_asym --tp-size 2 # int8 zero points: dequantized to BF16
check llama_w8a16 --tp-size 2 --quant int8-channel # 8-bit packed: unpacked, passed through
grep -q "budget 0.0001 (compressed-tensors pass-through" "$T/out" || fail "w8a16 pass-through budget"
check llama_w4a16_actorder --tp-size 2 # g_idx: dequantized to BF16
check llama_w4a16_actorder --tp-size 2 --quant int4-group --requant allow
check llama_ct_fp8 --tp-size 2 --quant fp8-channel # FP8_DYNAMIC: codes and row scales passed through
check llama_ct_fp8 --tp-size 4 # dequantized to BF16
check llama_ct_fp8_tensor --tp-size 2 --quant fp8-tensor # FP8 static: q/k/v merged to the max scale
check qwen3_ct_fp8_block --tp-size 2 --quant fp8-block # FP8_BLOCK: blocks and BF16 scales passed through
grep -q "budget 0.0001 (fp8-block pass-through" "$T/out" || fail "ct fp8-block pass-through budget: $(cat "$T/out")"
# config.json as transformers 5.x writes it (num_local_experts, rope_parameters):
# verify-forward reads what plan reads
for f in qwen2_moe llama; do
	"$MK" --family "$f" --config-style hf5 --out "$T/${f}_hf5" --seed 5 >/dev/null ||
		fail "wt-mkckpt $f hf5"
done
grep -q '"num_local_experts"' "$T/qwen2_moe_hf5/config.json" || fail "hf5 config"
check qwen2_moe_hf5 --tp-size 2 --ep-size 2
check llama_hf5 --tp-size 2 --quant int8-channel

"$CTL" verify-forward --model-dir "$T/llama" --tp-size 3 >/dev/null 2>&1
[ $? -eq 3 ] || fail "tp 3 on llama should exit 3"
# a checkpoint that does not fit its family: the planner refuses it (exit 3)
cp -r "$T/llama" "$T/q3moe"
sed -i 's/LlamaForCausalLM/Qwen3MoeForCausalLM/' "$T/q3moe/config.json"
"$CTL" verify-forward --model-dir "$T/q3moe" --tp-size 2 >/dev/null 2>"$T/err"
[ $? -eq 3 ] || fail "Qwen3MoeForCausalLM should exit 3"
"$CTL" verify-forward --model-dir "$T/llama" --tokens 1,x >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "bad --tokens should exit 2"
grep -q "tokens entry 2 'x' is not a token id" "$T/err" || fail "bad --tokens: $(cat "$T/err")"
"$CTL" verify-forward --model-dir "$T/llama" --tokens 5,1000 >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "token >= vocab should exit 2"
grep -q "tokens entry 2 (1000) is not below the model's vocab_size 1000" "$T/err" ||
	fail "token >= vocab: $(cat "$T/err")"
"$CTL" verify-forward --model-dir "$T/llama" --budget 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--budget 0 should exit 2"
# a quantized layout above its budget: re-checked unquantized, reported as the
# scheme's error (exit 1), not a bare FAIL; --budget accepts it
"$CTL" verify-forward --model-dir "$T/llama" --tp-size 2 --quant fp8-channel --budget 0.001 \
	>"$T/out" 2>&1
[ $? -eq 1 ] || fail "fp8 above --budget 0.001 should exit 1: $(cat "$T/out")"
grep -q '^FAIL: quantization error above budget (ratio .* > 0.001); the same layout unquantized' \
	"$T/out" || fail "quantization verdict: $(cat "$T/out")"
grep -q 'so the slicing is right' "$T/out" || fail "slicing proof: $(cat "$T/out")"
check llama --tp-size 2 --quant fp8-channel --budget 0.5
grep -q 'budget 0.5 (--budget)' "$T/out" || fail "--budget not applied: $(cat "$T/out")"
# --budget never loosens the exact tolerance
"$CTL" verify-forward --model-dir "$T/llama" --tp-size 2 --budget 0.5 >"$T/out" 2>&1 ||
	fail "llama tp 2: $(cat "$T/out")"
grep -q 'budget 0.0001 (float32 summation order only)' "$T/out" || fail "exact budget kept"
"$CTL" verify-forward --model-dir "$T/llama" --out x >/dev/null 2>&1
[ $? -eq 2 ] || fail "--out should exit 2"
"$CTL" verify-forward --tp-size 2 >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing --model-dir should exit 2"
"$CTL" verify-forward --help | grep -q "1e-04 x max|logit|" || fail "--help names the tolerance"
echo "verify_forward.sh: ok"
