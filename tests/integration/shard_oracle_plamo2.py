"""shard_oracle_plamo2.py — shard_oracle.py's cut of Plamo2ForCausalLM (vLLM's plamo2.py;
docs/format.md, PLaMo 2) under the checkpoint's names (model.layers.layers.{i}.): a Mamba
layer's mixer.in_proj ([gate_h; x_h] rows per mamba head) into the rank's gate rows then x rows
of its heads, conv1d / dt_proj / A_log / D / dt_bias by the rank's heads, bcdt_proj / out_proj by
columns, dt_norm_weight / B_norm_weight / C_norm_weight whole; an attention layer's qkv_proj
([q; k; v] rows) into [q_r; k_r; v_r] (KV / T kv heads a rank, the one kv head on every rank),
q_weight by heads, k_weight by kv heads (whole for one), o_proj by columns; mlp.gate_up_proj
([gate; up]) into [gate_r; up_r], mlp.down_proj by columns; model.embed_tokens / lm_head by padded
vocabulary rows (lm_head dropped when tied, Plamo2Config's default); the sandwich norms and
model.norm whole (as stored: vLLM adds its offsets at load time).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def plamo2(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[-1] if src[name][1].ndim > 1 else 1
    H, KV, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["hidden_size_per_head"]
    Hm = cfg["mamba_num_heads"]
    if name == "lm_head.weight" and cfg.get("tie_word_embeddings", True):
        return
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif name.endswith(".mixer.in_proj.weight"):
        hl = Hm // T
        heads = range(r * hl, (r + 1) * hl)
        add(name, [p for part in (0, 1) for h in heads
                   for p in pieces_rows(name, (2 * h + part) * d, d)])
    elif re.search(r"\.mixer\.(conv1d\.weight|dt_proj\.weight|A_log|D|dt_bias)$", name):
        n = rows // T
        add(name, pieces_rows(name, r * n, n))
    elif name.endswith(".mixer.qkv_proj.weight"):
        Hl, KVl = H // T, max(1, KV // T)
        ks = r * KVl if KV >= T else 0  # vLLM replicates only one kv head
        add(name, pieces_rows(name, r * Hl * d, Hl * d)
            + pieces_rows(name, (H + ks) * d, KVl * d)
            + pieces_rows(name, (H + KV + ks) * d, KVl * d))
    elif name.endswith(".mixer.q_weight"):
        add(name, pieces_rows(name, r * (H // T), H // T))
    elif name.endswith(".mixer.k_weight"):
        KVl = max(1, KV // T)
        add(name, pieces_rows(name, r * KVl if KV >= T else 0, KVl))
    elif name.endswith(".mlp.gate_up_proj.weight"):
        n = rows // 2 // T
        add(name, pieces_rows(name, r * n, n) + pieces_rows(name, rows // 2 + r * n, n))
    elif re.search(r"\.(mixer\.(o_proj|out_proj|bcdt_proj)|mlp\.down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:
        add(name, pieces_rows(name, 0, rows))
