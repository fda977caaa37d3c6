"""shard_oracle_falcon_rw.py — shard_oracle.py's cut of Falcon's original releases
(RWForCausalLM, remote code: model_type RefinedWeb / RefinedWebModel; vLLM's registry maps it
onto falcon.py and reads the config through its stored RWConfig; docs/format.md, Falcon):
falcon's cut (shard_oracle_cut.py falcon) under RWConfig's reading of the keys.
"""
from shard_oracle_cut import falcon


def falcon_rw_cfg(c):
    """RWConfig's attribute_map (n_layer / n_head / n_head_kv; the FalconConfig name wins when
    both are given), n_embed over hidden_size, its defaults (vocab_size 250880, hidden_size 64,
    2 layers, 8 heads, n_head_kv 1, multi_query true, parallel_attn false), the new decoder
    architecture forced at hidden_size 8192, tied (PretrainedConfig's default)."""
    c = dict(c)
    for k, to in (("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"),
                  ("n_head_kv", "num_kv_heads")):
        if c.get(k) is not None and c.get(to) is None:
            c[to] = c[k]
    if c.get("n_embed") is not None:
        c["hidden_size"] = c["n_embed"]
    for k, x in (("vocab_size", 250880), ("hidden_size", 64), ("num_hidden_layers", 2),
                 ("num_attention_heads", 8), ("num_kv_heads", 1), ("multi_query", True),
                 ("parallel_attn", False), ("tie_word_embeddings", True)):
        if c.get(k) is None:
            c[k] = x
    if c["hidden_size"] == 8192:
        c["new_decoder_architecture"] = True
    return c


def falcon_rw(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    pcs = falcon(name, rows, cols, cfg, T, r, pad, cfg["tie_word_embeddings"])
    if pcs is not None:
        add(name, pcs)
