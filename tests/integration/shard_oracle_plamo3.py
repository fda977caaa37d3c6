"""shard_oracle_plamo3.py — shard_oracle.py's cut of Plamo3ForCausalLM (vLLM's plamo3.py;
docs/format.md, PLaMo 3) under the checkpoint's names (model.layers.layers.{i}.): mixer.qkv_proj
([q; k; v] rows in the checkpoint) into the rank's [q_r; k_r; v_r] (max(1, KV/T) kv heads a
rank, kv head r // (T/KV) when KV < T), mlp.gate_up_proj ([gate; up]) into [gate_r; up_r],
mixer.o_proj and mlp.down_proj by columns, model.embed_tokens / lm_head by padded vocabulary rows
(lm_head dropped when tied, Plamo3Config's default), every norm whole (as stored: vLLM adds its
offsets at load time).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def plamo3(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    H, KV, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    if name == "lm_head.weight" and cfg.get("tie_word_embeddings", True):
        return
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif name.endswith(".mixer.qkv_proj.weight"):
        Hl, KVl = H // T, max(1, KV // T)
        ks = r * KVl if KV >= T else r // (T // KV)
        add(name, pieces_rows(name, r * Hl * d, Hl * d)
            + pieces_rows(name, (H + ks) * d, KVl * d)
            + pieces_rows(name, (H + KV + ks) * d, KVl * d))
    elif name.endswith(".mlp.gate_up_proj.weight"):
        n = rows // 2 // T
        add(name, pieces_rows(name, r * n, n) + pieces_rows(name, rows // 2 + r * n, n))
    elif re.search(r"\.(mixer\.o_proj|mlp\.down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:
        add(name, pieces_rows(name, 0, rows))
