"""shard_oracle_enc.py — shard_oracle.py's cut of the encoders with their own layouts:
ModernBertModel (vLLM's modernbert.py). Returns the rank tensor as a list of pieces
(name, axis, start, count) or ("zero", rows), as shard_oracle_cut.py's; None: not a rank
tensor (a bias whose config switch is false: vLLM's load_weights skips it).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def modernbert(name, rows, cols, cfg, T, r, pad):
    """ModernBERT: attn.Wqkv [q; k; v] rows (QKVParallelLinear loading the fused tensor) ->
    the rank's [q_r; k_r; v_r] (rows r*hid/T of each third), its bias alike; attn.Wo and
    mlp.Wo (RowParallelLinear) by columns; tok_embeddings by padded vocabulary rows; mlp.Wi
    (a plain nn.Linear), the LayerNorms and the row-parallel biases whole. Names without the
    model. prefix (shard_oracle.py drops it), or the sequence classifier's (kept) with its head
    head.* / classifier.* whole."""
    hid = cfg["hidden_size"]
    switch = (("norm.bias", "norm_bias"), ("attn.Wqkv.bias", "attention_bias"),
              ("attn.Wo.bias", "attention_bias"), ("mlp.Wi.bias", "mlp_bias"),
              ("mlp.Wo.bias", "mlp_bias"))
    for tail, key in switch:
        if name.endswith(tail) and not cfg.get(key, False):
            return None
    if name.endswith("embeddings.tok_embeddings.weight"):
        return vocab_rows(name, cfg["vocab_size"], T, r, pad)
    if re.search(r"\.attn\.Wqkv\.(weight|bias)$", name):
        hl = hid // T
        return [pc for p in range(3) for pc in pieces_rows(name, p * hid + r * hl, hl)]
    if re.search(r"\.(attn|mlp)\.Wo\.weight$", name):
        return pieces_cols(name, r * cols // T, cols // T)
    return pieces_rows(name, 0, rows)
