"""shard_oracle_expected.py — shard_oracle.py's expected runtime tensors (split from
shard_oracle.py, which imports expected from here): expected() builds, from the source
tensors and config.json as shard_oracle.py has normalized them, the pieces of each runtime
tensor a rank (T, r) and expert rank (P, e) should hold, as SHARDS.md section 2 and vLLM cut
each family; the helpers it calls for the tensors vLLM drops or fuses are here too.

Phi-3: qkv_proj ([q; k; v] rows) and gate_up_proj ([gate; up]) come fused in the
checkpoint; each rank gets the same [q_r; k_r; v_r] and [gate_r ; up_r] as Llama's.

Qwen2-VL: the vision tower (qkv by heads, proj/fc2/mlp.2 columns, fc1/mlp.0 rows) and the
transformers 5.x names are read here too; Qwen2.5-VL's gated vision MLP fuses gate/up into
gate_up_proj like the language model's, down_proj by columns.

GraniteMoE / GraniteMoeShared store each layer's experts stacked; they are read as vLLM's
loader reads them (unstack_granite) into Mixtral's per-expert tensors, so the expected
shards are Mixtral's; the shared MLP's input_linear is [gate; up] like Phi-3's gate_up_proj.

GPT-OSS stores each layer's experts stacked as MXFP4 with gate/up interleaved along 2I;
unstack_gpt_oss dequantizes them here (E2M1 table, E8M0 scales, low nibble first, as
transformers' integrations/mxfp4.py), rounds to BF16 and splits gate = rows ::2, up = rows
1::2 into per-expert tensors (biases alike), so the expected shards are again Mixtral-style
stacks, plus the biases w13_bias (rows of w13) and w2_bias (whole per expert).

Llama 4 stores each MoE layer's experts stacked as torch.bmm operands: gate_up_proj
[E, hid, 2I] (gate = the first I columns, gate_up.chunk(2, dim=-1)) and down_proj [E, I, hid];
unstack_llama4 transposes each expert into nn.Linear's [out, in] and splits gate / up into
per-expert tensors, so the expected shards are Mixtral-style stacks. Its vision tower
(vision_model.*) is read as SigLIP's: q/k/v by heads, o_proj / fc2 / the adapter's fc2 by
columns, fc1 / the adapter's fc1 by rows, the rest and multi_modal_projector replicated.
Qwen3-VL-MoE stores its experts as the same bmm stacks under mlp.experts.; Qwen3-VL's tower
is read as Qwen2-VL's: qkv by heads, attn.proj and every linear_fc2 (blocks, merger,
deepstack mergers) by columns, every linear_fc1 by rows, the rest replicated.

Qwen3-Next (vLLM's qwen3_next.py): q_proj holds H heads of [query (d rows); gate (d rows)],
so q/k/v fuse with q rows [r*Hl*2d, (r+1)*Hl*2d); the gated delta net's in_proj_qkvz and
in_proj_ba are grouped per key head and split as contiguous rows; conv1d's channels are
three segments [q (Hk*dk); k (Hk*dk); v (Hv*dv)], each split in T; A_log / dt_bias split,
out_proj by columns, norm whole; mtp.* is dropped.

LFM2 (vLLM's lfm2.py / short_conv.py): the short-conv layers' conv.* are short_conv.* at run
time; in_proj [B; C; x] (and its bias) split per segment, conv.conv [hid, 1, K] (and its bias)
by channels, out_proj by columns with its bias whole; feed_forward w1 / w3 merged into w13
by rows, w2 by columns; self_attn.out_proj by columns; tied unless tie_embedding /
tie_word_embeddings says otherwise (Lfm2Config).
LFM2-VL (vLLM's lfm2_vl.py): LFM2's cut under language_model. (transformers 4.57.1's layout),
tied by text_config alone; the SigLIP2 tower as SigLIP's, the projector whole.
GPT-2 (vLLM's gpt2.py): transformer.* names (a bare checkpoint's h. / wte. / wpe. / ln_f. read
under it); every Conv1D weight transposed to [out, in] first (conv1d_gpt2), then c_attn cut as
[q_r; k_r; v_r] and the rest as StarCoder2's c_fc / c_proj (gpt2 below). GPTBigCode (vLLM's
gpt_bigcode.py): the same names, nothing transposed, c_attn's one kv head on every rank.
GPT2ForSequenceClassification (vLLM's gpt2.py): GPT-2's cut, no lm_head, score.weight whole.
JambaForSequenceClassification (vLLM's jamba.py): Jamba's cut, no lm_head, score.weight whole.
GPT-NeoX (vLLM's gpt_neox.py): gpt_neox.* names kept; query_key_value holds [H, 3, d] rows
per head and each rank gets [q_r; k_r; v_r] of its heads (neox below).
Phi (vLLM's phi.py): q/k/v fused as Llama's, self_attn.dense / mlp.fc2 by columns, mlp.fc1
by rows with its bias, lm_head.bias as PhiMoE's (vocab rows, zero padding).
GPT-J (vLLM's gpt_j.py): transformer.* names kept; q/k/v (no biases) fused as Llama's, out_proj /
fc_out by columns, fc_in by rows with its bias, transformer.wte / lm_head / lm_head.bias by
vocabulary rows, the old attn.masked_bias buffers dropped.
OPT (vLLM's opt.py): model.decoder.* names kept; q/k/v fused as Llama's (KV = H), out_proj /
fc2 by columns, fc1 by rows with its bias, embed_tokens [V, word_embed_proj_dim] by vocabulary
rows; embed_positions, project_in / project_out and the LayerNorms whole; tied by default.
BLOOM (vLLM's bloom.py): names with the transformer. prefix (added where the checkpoint
lacks it); self_attention.query_key_value [H, 3, d] rows per head cut as GPT-NeoX's (neox
below), word_embeddings by padded vocabulary rows, tied.
DBRX (vLLM's dbrx.py): transformer.* names kept; attn.Wqkv [q; k; v] cut as Phi-3's
qkv_proj, attn.out_proj by columns, transformer.wte by vocabulary rows; the experts' 2-D
stacks w1 / v1 / w2 [E*Ie, hid] are Mixtral's experts.{j}.w1 / w3 / w2 once viewed [E, Ie,
hid] and w2 transposed per expert, as DbrxExperts.weight_loader writes them (unstack_dbrx).
Falcon (vLLM's falcon.py): transformer.* names kept; self_attention.query_key_value holds its
rows per kv group [KV, H/KV + 2, d] and each rank gets [q_r; k_r; v_r] as load_weights
re-cuts it (falcon below), the kv heads replicated when KV < T.
Persimmon (vLLM's persimmon.py): GPT-NeoX's cut under model.layers.* names
(self_attn.query_key_value / dense), q_layernorm / k_layernorm whole, model.embed_tokens /
lm_head by vocabulary rows.
MPT (vLLM's mpt.py): transformer.* names kept; attn.Wqkv and attn.out_proj as DBRX's,
ffn.up_proj by rows and ffn.down_proj by columns (an MLP without a gate), tied to wte.
LongCat-Flash (vLLM's longcat_flash.py): self_attn.0 / .1 cut as DeepSeek's MLA (q_b_proj /
kv_b_proj rows, o_proj columns), mlps.0 / .1 as Llama's MLP, the router's classifier and
correction bias whole, the routed experts stacked; model.mtp.* dropped.
Granite 4.0 (vLLM's mamba_mixer2.py, MambaMixer2): the Mamba2 mixer's in_proj rows are five
segments [z (Im); x (Im); B (G*N); C (G*N); dt (Hm)] and conv1d's channels (weight and bias)
three [x; B; C], each split in T, but B and C are whole on every rank when T does not divide
mamba_n_groups (G 1: the group duplicated to follow the head shards); A_log / D / dt_bias
and the gated norm by rows (heads), out_proj by columns, its bias whole. Its experts are
GraniteMoE's stacks (unstack_granite), its shared MLP GraniteMoeShared's.
MiniMax (vLLM's minimax_text_01.py): the lightning attention's self_attn.qkv_proj ([q_h; k_h;
v_h] per head), output_gate and norm by contiguous rows, out_proj by columns; the softmax
layers' q/k/v / o_proj and Mixtral's experts as the common rules cut them.

Jamba (vLLM's jamba.py, mamba_mixer.py's MambaMixer, the v1 mixer): in_proj's two halves
[x; z] each split in T, conv1d (weight and bias), dt_proj (weight and bias), A_log and D
by rows, x_proj and out_proj by columns (out_proj's bias whole), dt / b / c layernorms
whole; its experts Mixtral-style experts.{j}.gate_proj / up_proj / down_proj.

Mamba (vLLM's mamba.py, the same MambaMixer): backbone.layers.{i}.mixer.* as Jamba's
mamba.* (no norms; Falcon-Mamba's weightless), backbone.embeddings (and an untied lm_head) by padded vocabulary rows,
the layers' norm and norm_f whole; tied unless tie_word_embeddings is false.
Mamba2 (vLLM's mamba2.py, MambaMixer2): Mamba's backbone.* and Granite 4.0's Mamba2 mixer
under backbone.layers.{i}.mixer. (Mamba2Config's expand / n_groups / state_size / num_heads);
untied unless tie_word_embeddings is true. Zamba2: shard_oracle_zamba2.py (tied by default).
Gemma 3n's language model: shard_oracle_gemma3n.py (always tied).
CLIPModel (vLLM's clip.py), SiglipModel (vLLM's siglip.py): shard_oracle_clip.py.
InternLM2ForCausalLM (vLLM's internlm2.py, each rank its own heads): shard_oracle_internlm2.py.
Nemotron-H (vLLM's nemotron_h.py): shard_oracle_nemotron_h.py (untied; mtp.* dropped); "E"
layers' experts stacked as the common rules do (w13: up_proj alone, the one part).
ChatGLMModel (vLLM's chatglm.py, THUDM's names): shard_oracle_chatglm.py.
ExaoneForCausalLM (vLLM's exaone.py): shard_oracle_exaone.py.

PaliGemma (vLLM's paligemma.py / siglip.py): Gemma 3's layouts and tower, a Gemma / Gemma 2
language model tied by text_config.tie_word_embeddings alone (default true), the projector's
multi_modal_projector.linear (a plain nn.Linear) whole on every rank. Aya Vision (vLLM's
aya_vision.py): the same layouts and tower, a Cohere 2 language model tied by text_config,
the projector (layernorm, linear_1, linear_2: plain nn.LayerNorm / nn.Linear) whole.
LLaVA-OneVision (vLLM's llava_onevision.py): the same layouts and tower (no post_layernorm,
vision_feature_layer -1 by default), a Qwen2 language model tied by text_config alone (default
false), the projector's linear_1 / linear_2 (plain nn.Linear) and image_newline whole.
LLaVA with a Pixtral tower (pixtral-12b): LLaVA's layouts, projector and language model (Mistral),
Mistral 3's tower (vLLM's pixtral.py), its blocks past vision_feature_layer not built.
LLaVA-NeXT-Video (vLLM's llava_next_video.py): LLaVA's tower and Llama / Mistral language
model tied by text_config alone, the projector (plain nn.Linear) whole, image_newline skipped.
Qwen2-Audio (vLLM's qwen2_audio.py): a Qwen2 language model tied by text_config alone, the
audio_tower (transformers' own encoder) and multi_modal_projector.linear whole on every rank.
Fuyu (vLLM's fuyu.py): Persimmon's cut under language_model. (either layout), tied by
text_config alone; vision_embed_tokens (a ColumnParallelLinear) and its bias by rows.
Chameleon (vLLM's chameleon.py): Llama's cut with q_norm / k_norm [H, d] / [KV, d] (weights
and biases) by the rank's q heads / k_proj heads; the VQ-VAE model.vqmodel.* whole.
InternVL (vLLM's interns1.py / interns1_vit.py): a Qwen2, Qwen3 or Qwen3-MoE language model (its
router whole, its experts stacked as the common rules do) tied by text_config alone, the InternViT tower whole on every rank but fc1 (rows) and fc2 (columns), the projector
(layer_norm, linear_1, linear_2: plain modules) whole.
RoBERTa / XLM-RoBERTa (vLLM's roberta.py): BERT's cut (position and token-type tables whole),
the pooler and an MLM head lm_head.* skipped (vLLM loads neither), the roberta. prefix dropped;
their sequence classifiers keep roberta. in the runtime names, the head classifier.* whole.
ModernBERT (vLLM's modernbert.py; shard_oracle_enc.py): Wqkv by heads of each third, attn.Wo /
mlp.Wo by columns, mlp.Wi and the LayerNorms whole, the model. prefix dropped; its sequence
classifier keeps model. in the runtime names, head.* / classifier.* whole.
The decoder sequence classifiers (Llama / Mistral / Qwen2 / Qwen3ForSequenceClassification,
vLLM's as_seq_cls_model): the causal LM's cut, no lm_head, score.weight whole (replicated).
BERT's heads (Bert- For Sequence / Token Classification, vLLM's bert.py): BERT's cut under bert.
(kept), the pooler whole (the token classifier's skipped), classifier.* whole. SPLADE
(BertSpladeSparseEmbeddingModel): the same encoder, the masked-LM head cls.predictions.* whole.
The decoder embedding models saved as base models (LlamaModel, MistralModel, Qwen2Model,
Gemma2Model, Gemma3TextModel; vLLM's as_embedding_model): the causal LM's cut under the base
model's names (no model. prefix), no lm_head.
Qwen2's reward models (Qwen2ForRewardModel, Qwen2ForProcessRewardModel; vLLM's qwen2_rm.py):
Qwen2's cut, no lm_head, score.0 (weight and bias) by rows, score.2.weight by columns, its bias
whole.
jina-reranker-m0 (JinaVLForRanking; vLLM's jina_vl.py): Qwen2-VL's cut (tied: no lm_head) and the
same score head, its rows and columns as qwen2_rm's (never quantized: the oracle has no int8 path).
Granite Speech (vLLM's granite_speech.py): a Granite language model tied by text_config alone,
the conformer's ff1 / ff2 up_proj and encoder.out (with their biases) by rows, down_proj and
out_mid by columns, the rest of the encoder and the Q-Former projector whole.
Voxtral (vLLM's voxtral.py / whisper.py): a Llama language model tied by text_config alone, the
Whisper encoder's q/k/v fused by heads (the bias [q_r; zeros; v_r]), out_proj / fc2 by columns,
fc1 by rows with its bias, the rest and the projector whole.
Qwen2.5-Omni (vLLM's qwen2_5_omni_thinker.py): thinker_config's Qwen2 language model tied by
text_config alone, Qwen2.5-VL's tower with attn.q / k / v fused into attn.qkv by heads, the
audio encoder (transformers' own) whole; talker.* / token2wav.* skipped; thinker. kept.
Qwen3-Omni (vLLM's qwen3_omni_moe_thinker.py): the same with a Qwen3-MoE language model, Qwen3-VL's
tower (merger_list.N as the merger) and its own audio encoder whole; code2wav.* skipped.
Mllama (vLLM's mllama.py): Llama's language model with the cross-attention layers' cross_attn
q / k / v fused as self_attn's, embed_tokens' vocab_size + 8 rows; the vision model's patch
embedding, fc1 and the projector by rows, o_proj / fc2 by columns, the rest whole.
Cohere2Vision (vLLM's cohere2_vision.py): Aya Vision's layouts, tower (whole, post_layernorm
built) and language model; the projector's linear_1 a MergedColumnParallelLinear of two halves
([x_r; gate_r] rows, its bias alike), linear_2 a RowParallelLinear (columns, its bias whole).
BLIP-2 (vLLM's blip2.py / blip.py): OPT's cut under language_model., tied by text_config alone;
the BLIP tower's fused self_attn.qkv (and its bias) by heads of each third, projection / fc2
by columns, fc1 by rows, the rest whole; query_tokens, qformer.* and language_projection.*
(plain nn.Linear / nn.LayerNorm / nn.Parameter) whole.
Aria (vLLM's aria.py): Llama's cut under language_model. (either layout), tied by text_config
alone; the fc1 / fc2 expert stacks read as Llama 4's (unstack_aria), the router and the shared
experts as Qwen2-MoE's; the Idefics3 tower as Gemma 3's, post_layernorm dropped; the
projector whole but feed_forward.linear_in (rows) and linear_out (columns).

Idefics3 (vLLM's idefics3.py / idefics2_vision_model.py): Llama's table under model.text_model.
(lm_head at the top, tied by text_config.tie_word_embeddings alone), the SigLIP-style tower
model.vision_model.* as Gemma 3's, the connector's proj whole on every rank (ReplicatedLinear).
"""
import re
import numpy as np
from shard_oracle_cut import (COMMON, falcon, gpt2, gpt_bigcode, neox,
                              pieces_cols, pieces_rows, vocab_rows)
from shard_oracle_enc import modernbert
from shard_oracle_mix import jamba_mixer, lfm2, linear_attn, mamba_mixer
from shard_oracle_zamba2 import zamba2
from shard_oracle_gemma3n import gemma3n
from shard_oracle_whisper import whisper
from shard_oracle_clip import clip
from shard_oracle_nemotron_h import nemotron_h
from shard_oracle_more import CFGS, MINIMAX_ARCHS, ORACLES, OWN_FUSED  # InternLM2 and later

# Architectures whose layers >= num_hidden_layers are MTP layers, dropped (DeepSeek-V3,
# GLM-4.5 / 4.6: Glm4MoeForCausalLM, which is otherwise Llama's attention + V3's MoE;
# MiniMax-M2's MTP modules).
MTP_ARCHS = ("Deepseek", "Glm4Moe", "Glm4vMoe", "MiniMaxM2")

def ernie_mtp(arch, name):
    """ERNIE 4.5 MoE's multi-token-prediction module (model.mtp_block.*, mtp_emb_norm, ...),
    dropped as transformers skips it (_keys_to_ignore_on_load_unexpected "mtp")."""
    return arch == "Ernie4_5_MoeForCausalLM" and name.startswith("model.mtp_")


def llava_unbuilt(name, cfg):
    """LLaVA's CLIP / Pixtral tensors vLLM's llava.py does not build: post_layernorm
    (require_post_norm=False) and the blocks past vision_feature_layer."""
    vd = cfg["vision_config"].get("num_hidden_layers", 12)
    fl = cfg.get("vision_feature_layer", -1 if cfg["model_type"] == "llava_onevision" else -2)
    kept = vd + fl + 1 if fl < 0 else fl
    m = re.match(r"vision_tower\.(?:vision_model\.encoder|transformer)\.layers\.(\d+)\.", name)
    if cfg["model_type"] == "llava_next_video" and name == "image_newline":
        return True  # vLLM's llava_next_video.py ignores it
    return name.startswith("vision_tower.vision_model.post_layernorm.") or \
        (m is not None and int(m.group(1)) >= kept)


def voxtral(name, rows, cols, T, r, add):
    m = re.match(r"(.*)\.(q|k|v)_proj\.(weight|bias)$", name)
    if m and m.group(2) == "q":  # k_proj has no bias: vLLM loads zeros
        b, leaf, hl = m.group(1), m.group(3), rows // T
        k = pieces_rows(f"{b}.k_proj.{leaf}", r * hl, hl) if leaf == "weight" else [("zero", hl)]
        add(f"{b}.qkv_proj.{leaf}", pieces_rows(name, r * hl, hl) + k
            + pieces_rows(f"{b}.v_proj.{leaf}", r * hl, hl))
    elif m:
        pass
    elif re.search(r"(out_proj|fc2)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"fc1\.(weight|bias)$", name):
        add(name, pieces_rows(name, r * rows // T, rows // T))
    else:
        add(name, pieces_rows(name, 0, rows))

def expected(src, cfg, T, r, P=1, e=0, fp8pass=False, up_gate=False, pad=64):
    arch = cfg["architectures"][0]
    if arch == "GPTJForCausalLM":  # GPTJConfig's attribute_map
        cfg = dict(cfg, hidden_size=cfg["n_embd"], num_attention_heads=cfg["n_head"],
                   num_hidden_layers=cfg["n_layer"])
    if arch in CFGS: cfg = CFGS[arch](cfg)  # the config's own key names (shard_oracle_more.py)
    H = cfg.get("num_attention_heads", 1); hid = cfg["hidden_size"]  # Mamba has no heads
    KV = cfg.get("num_key_value_heads", H)
    d = cfg.get("head_dim", hid // H)
    L = cfg["num_hidden_layers"]; V = cfg["vocab_size"]
    E = cfg.get("num_local_experts", cfg.get("num_experts", cfg.get("n_routed_experts",
                                                                       cfg.get("moe_num_experts", 0))))
    # absent: the transformers config class's default (Gemma, StarCoder2, ERNIE 4.5, Cohere, SmolLM3, LFM2, Mamba and OPT tie)
    tied = cfg.get("tie_word_embeddings", arch.startswith(("Gemma", "Starcoder2", "Ernie4_5", "Cohere", "SmolLM3", "Lfm2", "Mamba", "FalconMamba", "OPT", "FalconForCausalLM", "Zamba2")) and arch != "Mamba2ForCausalLM")
    if arch == "Lfm2ForCausalLM":  # Lfm2Config prefers its original key
        tied = cfg.get("tie_embedding", tied)
    roberta = arch in ("RobertaModel", "XLMRobertaModel", "RobertaForSequenceClassification",
                       "XLMRobertaForSequenceClassification")
    bert_head = arch in ("BertForSequenceClassification", "BertForTokenClassification",
                         "BertSpladeSparseEmbeddingModel")
    bert = arch == "BertModel" or roberta or bert_head
    if bert: KV = H
    outs = {}   # name -> list of pieces (src, axis, start, len) or ("zero", rows)
    stack = {}  # expert runtime name -> {j: [pieces]}
    def add(n, pcs): outs.setdefault(n, []).extend(pcs)
    Hl = H // T
    if KV >= T: KVl, ks = KV // T, r
    else: KVl, ks = 1, r // (T // KV)
    qd = 2 * d if arch == "Qwen3NextForCausalLM" else d  # q rows per head (gated q)
    for name in sorted(src):
        if re.search(r"rotary_emb\.|position_ids$|weight_scale(_inv)?$|^mtp\.", name): continue
        if ernie_mtp(arch, name): continue
        if roberta and name.startswith(("pooler.", "roberta.pooler.", "lm_head.")): continue
        if arch in ("BertForTokenClassification", "BertSpladeSparseEmbeddingModel") and \
                name.startswith("bert.pooler.") or name == "cls.predictions.bias": continue
        m = re.match(r"model\.layers\.(\d+)\.", name)
        if m and arch.startswith(MTP_ARCHS) and int(m.group(1)) >= L: continue
        if name == "lm_head.weight" and tied: continue
        if arch in ("CLIPModel", "SiglipModel"):  # shard_oracle_clip.py
            clip(name, src, cfg, T, r, pad, add); continue
        if arch in ORACLES and ORACLES[arch](name, src, cfg, T, r, pad, add) != COMMON: continue
        rows = src[name][1].shape[0]
        cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
        if arch in ("GPT2LMHeadModel", "GPT2ForSequenceClassification", "GPTBigCodeForCausalLM"):
            pcs = (gpt_bigcode if arch == "GPTBigCodeForCausalLM" else gpt2)(name, rows, cols, cfg,
                                                                            T, r, pad, tied)
            if pcs is not None: add(name, pcs)
            continue
        if arch in ("MambaForCausalLM", "FalconMambaForCausalLM"):  # backbone.*: Jamba's mixer
            if name in ("backbone.embeddings.weight", "lm_head.weight"):
                add(name, vocab_rows(name, V, T, r, pad))
            elif ".mixer." in name:
                add(name, jamba_mixer(name, rows, cols, T, r))
            else:
                add(name, pieces_rows(name, 0, rows))  # the norms
            continue
        if arch in ("ModernBertModel", "ModernBertForSequenceClassification",
                    "ModernBertForTokenClassification"):  # shard_oracle_enc.py
            pcs = modernbert(name, rows, cols, cfg, T, r, pad)
            if pcs is not None: add(name, pcs)
            continue
        if arch == "FalconForCausalLM":  # grouped query_key_value (falcon below)
            pcs = falcon(name, rows, cols, cfg, T, r, pad, tied)
            if pcs is not None: add(name, pcs)
            continue
        if arch == "Zamba2ForCausalLM":  # shard_oracle_zamba2.py
            zamba2(name, rows, cols, cfg, T, r, pad, add, mamba_mixer); continue
        if arch == "NemotronHForCausalLM" and ".mixer.experts." not in name:  # experts: below
            nemotron_h(name, rows, cols, cfg, T, r, pad, add, mamba_mixer); continue
        if arch == "Gemma3nForCausalLM":  # shard_oracle_gemma3n.py
            gemma3n(name, rows, cols, cfg, T, r, pad, add); continue
        if arch == "Mamba2ForCausalLM":  # backbone.*: Granite 4.0's Mamba2 mixer
            if name in ("backbone.embeddings.weight", "lm_head.weight"):
                add(name, vocab_rows(name, V, T, r, pad))
            elif ".mixer." in name:  # Mamba2Config's keys under the mixer's names
                m2 = dict(cfg, mamba_expand=cfg.get("expand", 2), mamba_n_groups=cfg["n_groups"],
                          mamba_d_state=cfg["state_size"], mamba_n_heads=cfg["num_heads"])
                add(name, mamba_mixer(name, rows, cols, m2, T, r))
            else:
                add(name, pieces_rows(name, 0, rows))  # the norms
            continue
        if arch == "BloomForCausalLM" and name == "transformer.word_embeddings.weight":
            add(name, vocab_rows(name, V, T, r, pad)); continue
        if arch == "FuyuForCausalLM" and name.startswith("vision_embed_tokens."):
            add(name, pieces_rows(name, r * rows // T, rows // T)); continue  # ColumnParallel
        if arch in ("GPTNeoXForCausalLM", "BloomForCausalLM", "PersimmonForCausalLM",
                    "FuyuForCausalLM"):  # per-head qkv (Fuyu's language model Persimmon's)
            pcs = neox(name, rows, cols, cfg, T, r, pad, tied)
            if pcs is not None: add(name, pcs)
            continue
        if arch == "PhiForCausalLM" and re.search(r"(self_attn\.dense|mlp\.fc2)\.weight$", name):
            add(name, pieces_cols(name, r * cols // T, cols // T)); continue  # RowParallelLinear
        if arch == "PhiForCausalLM" and re.search(r"mlp\.fc1\.(weight|bias)$", name):
            add(name, pieces_rows(name, r * rows // T, rows // T)); continue  # ColumnParallelLinear
        if arch == "GPTJForCausalLM":  # vLLM's gpt_j.py; q/k/v fused below as Llama's
            if name.endswith("attn.masked_bias"): continue  # the old buffer, skipped
            if name == "transformer.wte.weight":
                add(name, vocab_rows(name, V, T, r, pad)); continue
            if re.search(r"(attn\.out_proj|mlp\.fc_out)\.weight$", name):
                add(name, pieces_cols(name, r * cols // T, cols // T)); continue  # RowParallel
            if re.search(r"mlp\.fc_in\.(weight|bias)$", name):
                add(name, pieces_rows(name, r * rows // T, rows // T)); continue  # ColumnParallel
        if arch in ("OPTForCausalLM", "Blip2ForConditionalGeneration") and \
                name.startswith("model."):  # vLLM's opt.py; q/k/v fused below as Llama's
            if name == "model.decoder.embed_tokens.weight":
                add(name, vocab_rows(name, V, T, r, pad)); continue
            if re.search(r"(self_attn\.out_proj|\.fc2)\.weight$", name):
                add(name, pieces_cols(name, r * cols // T, cols // T)); continue  # RowParallel
            if re.search(r"\.fc1\.(weight|bias)$", name):
                add(name, pieces_rows(name, r * rows // T, rows // T)); continue  # ColumnParallel
        if arch.startswith(("Llava", "MiniMaxVL01")) and llava_unbuilt(name, cfg):
            continue  # vLLM builds no post_layernorm nor blocks past vision_feature_layer
        if arch in ("Mistral3ForConditionalGeneration", "LlavaForConditionalGeneration",
                    "LlavaNextForConditionalGeneration", "MiniMaxVL01ForConditionalGeneration") and \
                name.startswith("multi_modal_projector.linear_"):
            if name.startswith("multi_modal_projector.linear_1."):  # ColumnParallelLinear
                add(name, pieces_rows(name, r * rows // T, rows // T))
            elif name.endswith(".weight"):  # linear_2: RowParallelLinear, its bias whole
                add(name, pieces_cols(name, r * cols // T, cols // T))
            else:
                add(name, pieces_rows(name, 0, rows))
            continue
        if arch == "Cohere2VisionForConditionalGeneration" and \
                name.startswith("multi_modal_projector.linear_"):
            if name.startswith("multi_modal_projector.linear_1."):  # two halves, each by rank
                h = rows // 2
                add(name, pieces_rows(name, r * h // T, h // T) +
                    pieces_rows(name, h + r * h // T, h // T))
            elif name.endswith(".weight"):  # linear_2: RowParallelLinear, its bias whole
                add(name, pieces_cols(name, r * cols // T, cols // T))
            else:
                add(name, pieces_rows(name, 0, rows))
            continue
        if arch == "AriaForConditionalGeneration" and name.startswith("multi_modal_projector."):
            if name.endswith("feed_forward.linear_in.weight"):  # ColumnParallelLinear
                add(name, pieces_rows(name, r * rows // T, rows // T))
            elif name.endswith("feed_forward.linear_out.weight"):  # RowParallelLinear
                add(name, pieces_cols(name, r * cols // T, cols // T))
            else:  # query, the cross attention (transformers' modules), layer_norm: whole
                add(name, pieces_rows(name, 0, rows))
            continue
        if arch == "InternVLForConditionalGeneration" and name.startswith("vision_tower."):
            # interns1_vit.py: fc1 ColumnParallelLinear, fc2 RowParallelLinear (its bias whole),
            # q/k/v, projection_layer, the norms, lambdas and embeddings plain modules: whole
            if re.search(r"mlp\.fc1\.(weight|bias)$", name):
                add(name, pieces_rows(name, r * rows // T, rows // T))
            elif name.endswith("mlp.fc2.weight"):
                add(name, pieces_cols(name, r * cols // T, cols // T))
            else:
                add(name, pieces_rows(name, 0, rows))
            continue
        if arch == "GraniteSpeechForConditionalGeneration" and \
                name.startswith(("encoder.", "projector.")):
            # granite_speech.py: ff1 / ff2 up_proj (and bias) and out (and bias) Column-,
            # down_proj and out_mid RowParallelLinear (their biases whole); the rest of the
            # conformer and the Q-Former plain modules: whole; num_batches_tracked skipped
            if name.endswith("num_batches_tracked"): continue
            if re.search(r"(ff[12]\.up_proj|encoder\.out)\.(weight|bias)$", name):
                add(name, pieces_rows(name, r * rows // T, rows // T))
            elif re.search(r"(ff[12]\.down_proj|encoder\.out_mid)\.weight$", name):
                add(name, pieces_cols(name, r * cols // T, cols // T))
            else:
                add(name, pieces_rows(name, 0, rows))
            continue
        if arch == "WhisperForConditionalGeneration":  # shard_oracle_whisper.py
            whisper(name, rows, cols, T, r, add, voxtral); continue
        if arch == "VoxtralForConditionalGeneration" and \
                name.startswith(("audio_tower.", "multi_modal_projector.")):
            voxtral(name, rows, cols, T, r, add); continue
        if arch == "MllamaForConditionalGeneration" and (name in (
                "model.embed_tokens.weight", "vision_model.patch_embedding.weight") or
                name.startswith("multi_modal_projector.")):
            # mllama.py: embed_tokens vocab_size + 8 rows; the Conv2d patch embedding (a
            # ColumnParallelLinear) and the projector (one, its bias alike) by rows
            add(name, vocab_rows(name, V + 8, T, r, pad) if name.startswith("model.") else
                pieces_rows(name, r * rows // T, rows // T)); continue
        if name.startswith(("connector.", "audio_tower.", "qformer.", "query_tokens",
                            "language_projection.")):  # Idefics3's proj, Qwen2-Audio's encoder, BLIP-2's
            add(name, pieces_rows(name, 0, rows)); continue
        if name.startswith(("visual.", "vision_tower.", "vision_model.")):  # + Llama 4's
            sq = re.match(r"(.*)\.(q|k|v)_proj\.(weight|bias)$", name)
            vq = re.match(r"(.*)\.attn\.(q|k|v)\.(weight|bias)$", name)
            if vq:  # Qwen2.5-Omni: attn.q / k / v apart, fused into attn.qkv by heads
                if vq.group(2) == "q":
                    b, leaf, hl = vq.group(1), vq.group(3), rows // T
                    add(f"{b}.attn.qkv.{leaf}", sum((pieces_rows(f"{b}.attn.{x}.{leaf}", r * hl, hl)
                                                     for x in "qkv"), []))
            elif re.search(r"\.(self_)?attn\.qkv\.(weight|bias)$", name):  # [q; k; v] by heads
                ve = rows // 3; hl = ve // T  # (not e: that is the EP rank)
                add(name, sum((pieces_rows(name, k * ve + r * hl, hl) for k in range(3)), []))
            elif sq:  # SigLIP: q, k, v (KV = H) fused by heads into qkv_proj
                if sq.group(2) == "q":
                    b, leaf, hl = sq.group(1), sq.group(3), rows // T
                    add(f"{b}.qkv_proj.{leaf}", sum((pieces_rows(f"{b}.{x}_proj.{leaf}", r * hl, hl)
                                                     for x in "qkv"), []))
            elif re.search(r"(mlp|feed_forward|merger)\.(gate|up)_proj\.(weight|bias)$", name):
                pass  # Qwen2.5-VL, Pixtral, GLM-4.1V (+ its merger): fused into gate_up_proj below
            elif re.search(r"(attn\.proj|attn\.projection|out_proj|o_proj|mlp\.fc2|mlp\.down_proj|merger\.mlp\.2|"
                           r"linear_fc2|feed_forward\.down_proj|merger\.down_proj|merger_list\.\d+\.mlp\.2)\.weight$", name):
                # + Qwen3-VL's, Pixtral's, GLM-4.1V's merger
                add(name, pieces_cols(name, r * cols // T, cols // T))
            elif re.search(r"(mlp\.fc1|merger(_list\.\d+)?\.mlp\.0|linear_fc1|merger\.proj)\.(weight|bias)$", name):
                add(name, pieces_rows(name, r * rows // T, rows // T))
            else:
                add(name, pieces_rows(name, 0, rows))  # patch embed, norms, row-parallel biases
            continue
        m = re.match(r"(.*)\.(q|k|v)_proj\.(weight|bias)$", name) or \
            re.match(r"(.*)\.(query|key|value)\.(weight|bias)$", name)
        if m and not re.search(r"q_b_proj|kv_b_proj", name) and not (arch.startswith("DeepseekV")):
            continue  # handled below as a group
        m = re.match(r"(.*experts)\.(\d+)\.(gate_proj|up_proj|down_proj)\.bias$", name)
        if m:  # GPT-OSS expert biases: w13_bias rows as w13's, w2_bias whole per expert
            base, j, leaf = m.group(1), int(m.group(2)), m.group(3)
            if leaf == "down_proj":
                stack.setdefault(base + ".w2_bias", {}).setdefault(j, {})[0] = pieces_rows(name, 0, rows)
            else:
                Il = rows // T if P == 1 else rows
                part = (0 if leaf == "gate_proj" else 1) if not up_gate else (1 if leaf == "gate_proj" else 0)
                stack.setdefault(base + ".w13_bias", {}).setdefault(j, {})[part] = \
                    pieces_rows(name, r * Il if P == 1 else 0, Il)
            continue
        if arch in ("Lfm2ForCausalLM", "Lfm2VlForConditionalGeneration", "Lfm2MoeForCausalLM") and \
                lfm2(name, rows, cols, T, r, add):
            continue
        if arch in MINIMAX_ARCHS and re.search(
                r"self_attn\.(qkv_proj|output_gate|norm|out_proj)\.weight$", name):
            # MiniMax's lightning attention: qkv_proj ([q_h; k_h; v_h] per head), output_gate
            # and norm by contiguous rows (whole heads), out_proj by columns
            if name.endswith(".out_proj.weight"):
                add(name, pieces_cols(name, r * cols // T, cols // T))
            else:
                add(name, pieces_rows(name, r * rows // T, rows // T))
            continue
        if ".mamba." in name and arch in ("JambaForCausalLM", "JambaForSequenceClassification"):
            add(name, jamba_mixer(name, rows, cols, T, r)); continue
        if ".mamba." in name:  # Granite 4.0's Mamba2 mixer
            add(name, mamba_mixer(name, rows, cols, cfg, T, r)); continue
        if ".linear_attn." in name:  # Qwen3-Next's gated delta net
            add(name, linear_attn(name, rows, cols, cfg, T, r)); continue
        if name.endswith(".mlp.gate.wg.weight"):  # Hunyuan V1 MoE's router: vLLM's mlp.gate
            add(name.replace(".gate.wg.", ".gate."), pieces_rows(name, 0, rows)); continue
        if name.endswith("self_attn.sinks"):  # GPT-OSS: the rank's q heads
            add(name, pieces_rows(name, r * Hl, Hl)); continue
        m = re.match(r"(.*experts)\.(\d+)\.(gate_proj|up_proj|down_proj|w1|w3|w2)\.weight$", name)
        if m:
            base, j, leaf = m.group(1), int(m.group(2)), m.group(3)
            Ie = rows if leaf in ("gate_proj", "up_proj", "w1", "w3") else cols
            Il = Ie // T if P == 1 else Ie
            off = r * Il if P == 1 else 0
            if leaf in ("down_proj", "w2"):
                pc = pieces_cols(name, off, Il) if P == 1 else pieces_rows(name, 0, rows)
                stack.setdefault(base + ".w2_weight", {}).setdefault(j, {})[0] = pc
            else:
                part = 0 if leaf in ("gate_proj", "w1") else 1
                if up_gate: part = 1 - part
                stack.setdefault(base + ".w13_weight", {}).setdefault(j, {})[part] = pieces_rows(name, off, Il)
            continue
        if name in ("model.embed_tokens.weight", "lm_head.weight", "embeddings.word_embeddings.weight",
                    "transformer.wte.weight", "roberta.embeddings.word_embeddings.weight",
                    "bert.embeddings.word_embeddings.weight"):
            import math
            mm = pad * T // math.gcd(pad, T)
            Vp = (V + mm - 1) // mm * mm; Vl = Vp // T; lo, hi = r * Vl, r * Vl + Vl
            pcs = []
            if lo < V: pcs += pieces_rows(name, lo, min(hi, V) - lo)
            if hi > V: pcs.append(("zero", hi - max(lo, V)))
            add(name, pcs); continue
        if name == "lm_head.bias":  # PhiMoE: [V] cut as lm_head's rows, padding entries zero
            step = pad * T // np.gcd(pad, T)
            per = (V + step - 1) // step * step // T
            real = max(0, min(V - r * per, per))
            add(name, (pieces_rows(name, r * per, real) if real else [])
                + ([("zero", per - real)] if real < per else [])); continue
        if arch in ("DbrxForCausalLM", "MptForCausalLM") and name.endswith("attn.out_proj.weight"):
            add(name, pieces_cols(name, r * cols // T, cols // T)); continue  # RowParallelLinear
        if name.endswith(("self_attn.qkv_proj.weight", "attn.Wqkv.weight", "self_attn.W_pack.weight")):
            # Phi-3, DBRX, MPT, Baichuan (W_pack, KV = H, its own name kept): [q; k; v] in one tensor
            qa, ka = H * d, KV * d
            add(name, pieces_rows(name, r * Hl * d, Hl * d)
                + pieces_rows(name, qa + ks * KVl * d, KVl * d)
                + pieces_rows(name, qa + ka + ks * KVl * d, KVl * d)); continue
        if name.endswith(("mlp.gate_up_proj.weight", "shared_mlp.input_linear.weight")):
            # Phi-3, GLM, GraniteMoeShared's shared MLP: [gate; up] in one tensor
            half = rows // 2; n = half // T
            add(name, pieces_rows(name, r * n, n) + pieces_rows(name, half + r * n, n)); continue
        m = re.match(r"(.*)\.(gate|up)_proj\.(weight|bias)$", name)
        if m and m.group(2) == "up" and f"{m.group(1)}.gate_proj.{m.group(3)}" not in src:
            # an MLP without a gate (Apertus, Arcee): up_proj column parallel, its own name
            add(name, pieces_rows(name, r * rows // T, rows // T)); continue
        if m:
            continue  # grouped below
        if re.search(r"(o_proj|down_proj|mlp\.c_proj|attention\.output\.dense|\.output\.dense|shared_mlp\.output_linear)\.weight$", name) and ".mlp.experts." not in name:
            add(name, pieces_cols(name, r * cols // T, cols // T)); continue
        if re.search(r"(q_b_proj|kv_b_proj|intermediate\.dense|mlp\.c_fc)\.(weight|bias)$", name) or \
           (arch.startswith("DeepseekV") and name.endswith("self_attn.q_proj.weight")):
            add(name, pieces_rows(name, r * rows // T, rows // T)); continue
        if arch == "MiniMaxM2ForCausalLM" and re.search(r"self_attn\.[qk]_norm\.weight$", name):
            q = ".q_norm." in name  # [H*d] / [KV*d]: the rank's q heads' / k_proj heads' channels
            add(name, pieces_rows(name, r * Hl * d if q else ks * KVl * d, (Hl if q else KVl) * d))
            continue
        if arch == "CohereForCausalLM" and name.endswith("self_attn.q_norm.weight"):
            add(name, pieces_rows(name, r * Hl, Hl)); continue  # [H, d]: the rank's q heads
        if arch == "CohereForCausalLM" and name.endswith("self_attn.k_norm.weight"):
            add(name, pieces_rows(name, ks * KVl, KVl)); continue  # [KV, d]: its k_proj heads
        if arch == "ChameleonForConditionalGeneration" and \
                re.search(r"self_attn\.[qk]_norm\.(weight|bias)$", name):  # as Cohere's, biases too
            q = ".q_norm." in name
            add(name, pieces_rows(name, r * Hl if q else ks * KVl, Hl if q else KVl)); continue
        if arch in ("Qwen2ForRewardModel", "Qwen2ForProcessRewardModel", "JinaVLForRanking") \
                and name.startswith("score.") and name != "score.2.bias":  # qwen2_rm.py's head:
            add(name, pieces_cols(name, r * cols // T, cols // T) if name == "score.2.weight"
                else pieces_rows(name, r * rows // T, rows // T)); continue  # score.0 by rows
        # replicated: norms (OLMo 2 / OLMoE's q_norm [H*d] / k_norm [KV*d] whole), routers
        add(name, pieces_rows(name, 0, rows))
    # fused q/k/v (not of the OWN_FUSED oracles: their q / gate names fuse otherwise)
    for name in [] if arch in OWN_FUSED else sorted(src):
        m = re.match(r"(.*)\.q_proj\.(weight|bias)$", name)
        mtp = re.match(r"model\.layers\.(\d+)\.", name)
        if mtp and arch.startswith(MTP_ARCHS) and int(mtp.group(1)) >= L: continue
        if ernie_mtp(arch, name): continue
        if m and not arch.startswith(("DeepseekV", "Zamba2", "Whisper", "CLIPModel",
                                               "SiglipModel")) and \
                not name.startswith(("vision_tower.", "vision_model.", "audio_tower.",
                                     "multi_modal_projector.")):
            b, leaf = m.group(1), m.group(2)
            add(f"{b}.qkv_proj.{leaf}", pieces_rows(name, r * Hl * qd, Hl * qd)
                + pieces_rows(f"{b}.k_proj.{leaf}", ks * KVl * d, KVl * d)
                + pieces_rows(f"{b}.v_proj.{leaf}", ks * KVl * d, KVl * d))
        m = re.match(r"(.*)\.query\.(weight|bias)$", name)
        if m and not name.startswith(("projector.", "qformer.")):  # the Q-Formers: whole
            b, leaf = m.group(1), m.group(2)
            add(f"{b}.qkv_proj.{leaf}", pieces_rows(name, r * Hl * d, Hl * d)
                + pieces_rows(f"{b}.key.{leaf}", r * Hl * d, Hl * d)
                + pieces_rows(f"{b}.value.{leaf}", r * Hl * d, Hl * d))
        m = re.match(r"(.*)\.gate_proj\.(weight|bias)$", name)
        if m and not re.search(r"\.experts\.\d+\.", name) and \
                not (arch.startswith("Llava") and llava_unbuilt(name, cfg)):  # Pixtral's
            b, leaf = m.group(1), m.group(2)
            n = src[name][1].shape[0] // T
            mm2 = re.match(r"model\.layers\.(\d+)\.", name)
            if mm2 and arch.startswith(MTP_ARCHS) and int(mm2.group(1)) >= L: continue
            add(f"{b}.gate_up_proj.{leaf}", pieces_rows(name, r * n, n) + pieces_rows(f"{b}.up_proj.{leaf}", r * n, n))
    if P > 1:
        start = e * (E // P) + min(e, E % P); count = E // P + (1 if e < E % P else 0)
    else:
        start, count = 0, E
    for n, per in stack.items():
        pcs = []
        for j in range(start, start + count):
            for part in sorted(per[j]): pcs += per[j][part]
        add(n, pcs)
    return outs
