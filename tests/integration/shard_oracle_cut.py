"""shard_oracle_cut.py — shard_oracle.py's pieces of a source tensor (a rank's rows or
columns, the padded vocabulary rows) and its cuts of the GPT-era fused layouts: GPT-NeoX /
BLOOM / Persimmon's per-head query_key_value, Falcon's kv groups, GPT-2's Conv1D weights and
c_attn, GPTBigCode's multi-query c_attn. Each returns the rank tensor as a list of pieces
(name, axis, start, count) or ("zero", rows); None: not a rank tensor.
COMMON: what an ORACLES cut (shard_oracle_more.py) returns for a tensor it leaves to
expected()'s common rules (Step 3's experts: the stacks, EP and the w13 order are theirs).
"""
import re

import numpy as np

COMMON = "common"


def pieces_rows(name, a, n): return [(name, 0, a, n)]

def pieces_cols(name, a, n): return [(name, 1, a, n)]

def vocab_rows(name, V, T, r, pad):
    import math
    mm = pad * T // math.gcd(pad, T)
    Vp = (V + mm - 1) // mm * mm; Vl = Vp // T; lo, hi = r * Vl, r * Vl + Vl
    pcs = []
    if lo < V: pcs += pieces_rows(name, lo, min(hi, V) - lo)
    if hi > V: pcs.append(("zero", hi - max(lo, V)))
    return pcs

def neox(name, rows, cols, cfg, T, r, pad, tied):
    """GPT-NeoX (vLLM's gpt_neox.py): query_key_value [H, 3, d] rows per head -> the rank's
    [q_r; k_r; v_r] (for each part p, head h of the rank: rows (3h + p) d .. + d), its bias
    alike; attention.dense / dense_4h_to_h by columns, dense_h_to_4h (and bias) by rows,
    embed_in / embed_out by padded vocabulary rows; the old attention.bias / masked_bias
    buffers dropped; the rest whole. None: not a rank tensor."""
    H = cfg["num_attention_heads"]; d = cfg["hidden_size"] // H; Hl = H // T
    if re.search(r"\.attention\.(bias|masked_bias)$", name): return None
    if name in ("embed_out.weight", "lm_head.weight") and tied: return None
    if name in ("gpt_neox.embed_in.weight", "embed_out.weight", "model.embed_tokens.weight",
                "lm_head.weight"):  # + Persimmon's names
        return vocab_rows(name, cfg["vocab_size"], T, r, pad)
    if re.search(r"(attention|self_attn)\.query_key_value\.(weight|bias)$", name):
        return [pc for p in range(3) for h in range(r * Hl, r * Hl + Hl)
                for pc in pieces_rows(name, (3 * h + p) * d, d)]
    if re.search(r"(attention\.dense|self_attn\.dense|dense_4h_to_h)\.weight$", name):
        return pieces_cols(name, r * cols // T, cols // T)
    if re.search(r"dense_h_to_4h\.(weight|bias)$", name):
        return pieces_rows(name, r * rows // T, rows // T)
    return pieces_rows(name, 0, rows)

def falcon(name, rows, cols, cfg, T, r, pad, tied):
    """Falcon (vLLM's falcon.py): self_attention.query_key_value [KV, H/KV + 2, d] rows per kv
    group (KV: num_kv_heads with new_decoder_architecture, 1 with multi_query, else H);
    load_weights views it (KV, n + 2, d), narrows q (the n first of each group), k and v and
    concatenates [q; k; v] for QKVParallelLinear: the rank's q heads, then its kv head(s)
    (KV < T: kv head r // (T / KV), replicated), its bias alike; self_attention.dense /
    dense_4h_to_h by columns, dense_h_to_4h (and bias) by rows, word_embeddings / lm_head by
    padded vocabulary rows; the LayerNorms and row-parallel biases whole."""
    H = cfg["num_attention_heads"]; d = cfg["hidden_size"] // H; Hl = H // T
    KV = (cfg.get("num_kv_heads", H) if cfg.get("new_decoder_architecture", False)
          else 1 if cfg.get("multi_query", True) else H)
    n = H // KV
    if name == "lm_head.weight" and tied: return None
    if name in ("transformer.word_embeddings.weight", "lm_head.weight"):
        return vocab_rows(name, cfg["vocab_size"], T, r, pad)
    if re.search(r"self_attention\.query_key_value\.(weight|bias)$", name):
        q = [h // n * (n + 2) + h % n for h in range(H)]  # head h's row block in the groups
        k = [g * (n + 2) + n for g in range(KV)]
        v = [g * (n + 2) + n + 1 for g in range(KV)]
        kvs = range(r * KV // T, r * KV // T + KV // T) if KV >= T else [r // (T // KV)]
        blocks = q[r * Hl:r * Hl + Hl] + [k[j] for j in kvs] + [v[j] for j in kvs]
        return [pc for b in blocks for pc in pieces_rows(name, b * d, d)]
    if re.search(r"(self_attention\.dense|dense_4h_to_h)\.weight$", name):
        return pieces_cols(name, r * cols // T, cols // T)
    if re.search(r"dense_h_to_4h\.(weight|bias)$", name):
        return pieces_rows(name, r * rows // T, rows // T)
    return pieces_rows(name, 0, rows)

def conv1d_gpt2(src):
    """GPT-2 (vLLM's gpt2.py): names without transformer. read under it, every Conv1D weight
    (attn.c_attn / attn.c_proj / mlp.c_fc / mlp.c_proj, stored [in, out]) transposed to
    [out, in] as load_weights does."""
    out = {}
    for k, (dt, a) in src.items():
        if re.match(r"(h|wte|wpe|ln_f)\.", k):
            k = "transformer." + k
        if re.search(r"\.(c_attn|c_proj|c_fc)\.weight$", k):
            a = np.ascontiguousarray(a.T)
        out[k] = (dt, a)
    return out

def gpt_bigcode(name, rows, cols, cfg, T, r, pad, tied):
    """GPTBigCode (vLLM's gpt_bigcode.py; Linear weights, nothing transposed): attn.c_attn
    [q (H*d); k (d); v (d)] -> the rank's q heads and the one kv head (replicated), its bias
    alike; the rest as GPT-2's."""
    H = cfg["num_attention_heads"]; d = cfg["hidden_size"] // H; Hl = H // T
    if re.search(r"attn\.c_attn\.(weight|bias)$", name):
        return (pieces_rows(name, r * Hl * d, Hl * d) + pieces_rows(name, H * d, d)
                + pieces_rows(name, H * d + d, d))
    return gpt2(name, rows, cols, cfg, T, r, pad, tied)

def gpt2(name, rows, cols, cfg, T, r, pad, tied):
    """GPT-2 (the Conv1D weights already transposed): attn.c_attn [q; k; v] rows -> the rank's
    [q_r; k_r; v_r], its bias alike; attn.c_proj / mlp.c_proj by columns, mlp.c_fc (and bias)
    by rows, wte / lm_head by padded vocabulary rows; the attn.bias / attn.masked_bias buffers
    dropped; the rest (wpe, LayerNorms, row-parallel biases) whole. None: not a rank tensor."""
    H = cfg["num_attention_heads"]; d = cfg["hidden_size"] // H; Hl = H // T
    if re.search(r"\.attn\.(bias|masked_bias)$", name): return None
    if name == "lm_head.weight" and tied: return None
    if name in ("transformer.wte.weight", "lm_head.weight"):
        return vocab_rows(name, cfg["vocab_size"], T, r, pad)
    if re.search(r"attn\.c_attn\.(weight|bias)$", name):
        return [pc for p in range(3) for pc in pieces_rows(name, p * H * d + r * Hl * d, Hl * d)]
    if re.search(r"c_proj\.weight$", name):
        return pieces_cols(name, r * cols // T, cols // T)
    if re.search(r"mlp\.c_fc\.(weight|bias)$", name):
        return pieces_rows(name, r * rows // T, rows // T)
    return pieces_rows(name, 0, rows)
