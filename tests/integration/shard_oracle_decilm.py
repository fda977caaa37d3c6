"""shard_oracle_decilm.py — shard_oracle.py's cut of DeciLM (DeciLMForCausalLM, NVIDIA's
Llama-Nemotron; vLLM's nemotron_nas.py; docs/format.md, DeciLM) under Llama's names, each layer
with its own kv heads and MLP width, read off the checkpoint's shapes (a layer's k_proj rows /
head_dim, its gate_proj rows): self_attn.qkv_proj [q_r; k_r; v_r] of that layer's kv heads
(r*KV/T.., or the one kv head r / (T/KV) when KV < T), o_proj by columns, mlp.gate_up_proj
[gate_r; up_r], down_proj by columns, embed_tokens / lm_head by padded vocabulary rows, the
norms whole; a no-op half's tensors are simply absent from the source. The oracle lays out its
fused tensors itself (OWN_FUSED in shard_oracle_more.py): expected()'s fused pass takes one KV.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def decilm_cfg(cfg):
    """DeciLMConfig's keys as expected() reads them: num_key_value_heads (null in the releases;
    each layer's own is read off its k_proj) the heads, untied (its default)."""
    return dict(cfg, num_key_value_heads=cfg["num_attention_heads"],
                tie_word_embeddings=cfg.get("tie_word_embeddings", False))


def decilm(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    H = cfg["num_attention_heads"]
    d = cfg.get("head_dim") or cfg["hidden_size"] // H
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    m = re.match(r"(model\.layers\.\d+\.)(self_attn|mlp)\.(\w+)_proj\.weight$", name)
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif m and m.group(3) == "q":
        p = m.group(1) + "self_attn."
        KV = src[p + "k_proj.weight"][1].shape[0] // d
        Hl = H // T
        KVl, ks = (KV // T, r) if KV >= T else (1, r // (T // KV))
        add(p + "qkv_proj.weight", pieces_rows(name, r * Hl * d, Hl * d)
            + pieces_rows(p + "k_proj.weight", ks * KVl * d, KVl * d)
            + pieces_rows(p + "v_proj.weight", ks * KVl * d, KVl * d))
    elif m and m.group(3) == "gate":
        p, Il = m.group(1) + "mlp.", rows // T
        add(p + "gate_up_proj.weight", pieces_rows(name, r * Il, Il)
            + pieces_rows(p + "up_proj.weight", r * Il, Il))
    elif m and m.group(3) in ("k", "v", "up"):
        return  # fused above
    elif m and m.group(3) in ("o", "down"):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:
        add(name, pieces_rows(name, 0, rows))  # the norms
