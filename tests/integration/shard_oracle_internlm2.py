"""shard_oracle_internlm2.py — shard_oracle.py's cut of InternLM2ForCausalLM (vLLM's
internlm2.py; docs/format.md, InternLM2): attention.wqkv holds its rows per kv group
([KV, H/KV + 2, d]: a group's q heads, its k head, its v head); rank r gets its own heads
[q_r; k_r; v_r] (kv heads r*KV/T.. or, when KV < T, the one kv head r // (T / KV), replicated);
attention.wo and feed_forward.w2 by columns; w1 / w3 merged by rows into
feed_forward.gate_up_proj [gate_r; up_r]; tok_embeddings / output by padded vocabulary rows
(output dropped when tied); the norms whole. InternLM2VEForCausalLM (vLLM's internlm2_ve.py):
the visual expert feed_forward_ve cut as feed_forward. InternLM2ForRewardModel (internlm2.py):
no output, v_head [1, hid] by columns (a RowParallelLinear).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def internlm2(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    H = cfg["num_attention_heads"]; KV = cfg.get("num_key_value_heads") or H
    d = cfg["hidden_size"] // H; n = H // KV; Hl = H // T
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name == "output.weight" and cfg.get("tie_word_embeddings", False):
        return
    if name in ("model.tok_embeddings.weight", "output.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif name.endswith("attention.wqkv.weight"):
        q = [h // n * (n + 2) + h % n for h in range(H)]  # head h's row block in the groups
        k = [g * (n + 2) + n for g in range(KV)]
        kvs = range(r * KV // T, r * KV // T + KV // T) if KV >= T else [r // (T // KV)]
        blocks = q[r * Hl:r * Hl + Hl] + [k[j] for j in kvs] + [k[j] + 1 for j in kvs]
        add(name, [pc for b in blocks for pc in pieces_rows(name, b * d, d)])
    elif name == "v_head.weight" or \
            re.search(r"\.(attention\.wo|feed_forward(_ve)?\.w2)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"\.feed_forward(_ve)?\.w1\.weight$", name):  # with w3: [gate_r; up_r]
        up = name.replace(".w1.", ".w3.")
        add(name.replace(".w1.", ".gate_up_proj."),
            pieces_rows(name, r * rows // T, rows // T) + pieces_rows(up, r * rows // T, rows // T))
    elif re.search(r"\.feed_forward(_ve)?\.w3\.weight$", name):
        return
    else:
        add(name, pieces_rows(name, 0, rows))
