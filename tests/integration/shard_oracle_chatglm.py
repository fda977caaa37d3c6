"""shard_oracle_chatglm.py — shard_oracle.py's cut of ChatGLM / GLM-4 in THUDM's format
(ChatGLMModel, ChatGLMForConditionalGeneration; vLLM's chatglm.py; docs/format.md, ChatGLM):
self_attention.query_key_value (and its bias) holds contiguous [q; k; v] rows; rank r gets
[q_r; k_r; v_r] (kv heads r*KV/T.. or, when KV < T, the one kv head r // (T / KV),
replicated); self_attention.dense and mlp.dense_4h_to_h by columns; mlp.dense_h_to_4h
[gate; up] re-cut into [gate_r; up_r]; word_embeddings / output_layer by padded vocabulary rows
(output_layer dropped when tied, ChatGLMConfig's default); the norms whole;
rotary_pos_emb.inv_freq dropped.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows

ARCHS = ("ChatGLMModel", "ChatGLMForConditionalGeneration")


def chatglm_cfg(cfg):
    """ChatGLMConfig's keys under the names shard_oracle.py reads."""
    H = cfg.get("num_attention_heads", 32)
    KV = cfg.get("multi_query_group_num", 1) if cfg.get("multi_query_attention") else H
    return dict(cfg, num_hidden_layers=cfg.get("num_layers", 28),
                vocab_size=cfg.get("padded_vocab_size", 65024), num_key_value_heads=KV,
                head_dim=cfg.get("kv_channels", 128),
                tie_word_embeddings=cfg.get("tie_word_embeddings", True))


def chatglm(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    H = cfg["num_attention_heads"]; KV = cfg["num_key_value_heads"]; d = cfg["head_dim"]
    Hl = H // T
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name.endswith("rotary_pos_emb.inv_freq"):
        return
    if name == "transformer.output_layer.weight" and cfg["tie_word_embeddings"]:
        return
    if name in ("transformer.embedding.word_embeddings.weight", "transformer.output_layer.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif re.search(r"\.query_key_value\.(weight|bias)$", name):
        kvs = range(r * KV // T, r * KV // T + KV // T) if KV >= T else [r // (T // KV)]
        blocks = list(range(r * Hl, r * Hl + Hl)) + [H + j for j in kvs] + [H + KV + j for j in kvs]
        add(name, [pc for b in blocks for pc in pieces_rows(name, b * d, d)])
    elif re.search(r"\.(self_attention\.dense|mlp\.dense_4h_to_h)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif name.endswith("mlp.dense_h_to_4h.weight"):
        half = rows // 2
        add(name, pieces_rows(name, r * half // T, half // T) +
            pieces_rows(name, half + r * half // T, half // T))
    else:
        add(name, pieces_rows(name, 0, rows))
