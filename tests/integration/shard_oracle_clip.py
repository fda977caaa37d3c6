"""shard_oracle_clip.py — shard_oracle.py's cut of CLIPModel (vLLM's clip.py,
CLIPEmbeddingModel): the text tower's token_embedding and position_embedding by their own padded
vocabulary rows (VocabParallelEmbedding each); in both towers q / k / v with their biases fused
into self_attn.qkv_proj by heads (text_config's / vision_config's, KV = H), out_proj and fc2 by
columns, fc1 and its bias by rows; LayerNorms, the row-parallel biases, the vision embeddings,
text_projection and visual_projection whole; logit_scale and the position_ids buffers dropped.
SiglipModel (vLLM's siglip.py, SiglipEmbeddingModel): the same, with SiglipTextConfig's
defaults (32000 tokens, 64 positions), text_model.head, the vision embeddings and the pooling
head's probe / MultiheadAttention / layernorm whole, its mlp.fc1 by rows and fc2 by columns;
logit_bias dropped too.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def clip(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    if name in ("logit_scale", "logit_bias") or name.endswith("position_ids"):
        return
    tc, vc = cfg.get("text_config") or {}, cfg.get("vision_config") or {}
    sg = cfg["architectures"][0] == "SiglipModel"
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name == "text_model.embeddings.token_embedding.weight":
        add(name, vocab_rows(name, tc.get("vocab_size", 32000 if sg else 49408), T, r, pad))
        return
    if name == "text_model.embeddings.position_embedding.weight":  # a rank may hold only
        add(name, [p if p[0] != "zero" else ("zero", p[1], name)  # padding: zeros of its shape
                   for p in vocab_rows(name, tc.get("max_position_embeddings", 64 if sg else 77), T, r, pad)])
        return
    m = re.match(r"(.*)\.([qkv])_proj\.(weight|bias)$", name)
    if m:
        if m.group(2) != "q":
            return
        b, leaf = m.group(1), m.group(3)
        wide = (tc if name.startswith("text_model.") else vc).get("hidden_size")
        n = wide // T
        add(f"{b}.qkv_proj.{leaf}", [pc for x in "qkv"
                                     for pc in pieces_rows(f"{b}.{x}_proj.{leaf}", r * n, n)])
    elif re.search(r"\.(self_attn\.out_proj|mlp\.fc2)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"\.mlp\.fc1\.(weight|bias)$", name):
        add(name, pieces_rows(name, r * rows // T, rows // T))
    else:
        add(name, pieces_rows(name, 0, rows))
