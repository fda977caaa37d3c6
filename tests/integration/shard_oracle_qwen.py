"""shard_oracle_qwen.py — shard_oracle.py's cut of Qwen, first generation (QWenLMHeadModel;
vLLM's qwen.py; docs/format.md, Qwen) under the checkpoint's names: attn.c_attn (and its bias)
holds contiguous [q; k; v] rows, multi-head; rank r gets [q_r; k_r; v_r] (heads r*H/T..);
attn.c_proj and mlp.c_proj by columns; mlp.w2 (gate) / w1 (up) merged by rows into
mlp.gate_up_proj [w2_r; w1_r]; transformer.wte / lm_head by padded vocabulary rows (never tied);
the norms whole.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def qwen(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name in ("transformer.wte.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif re.search(r"\.attn\.c_attn\.(weight|bias)$", name):
        third = rows // 3
        add(name, [pc for p in range(3)
                   for pc in pieces_rows(name, p * third + r * third // T, third // T)])
    elif re.search(r"\.(attn|mlp)\.c_proj\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif name.endswith("mlp.w2.weight"):  # with w1: gate_up_proj [w2_r; w1_r]
        up = name.replace(".w2.", ".w1.")
        add(name.replace(".w2.", ".gate_up_proj."),
            pieces_rows(name, r * rows // T, rows // T) + pieces_rows(up, r * rows // T, rows // T))
    elif name.endswith("mlp.w1.weight"):
        return
    else:
        add(name, pieces_rows(name, 0, rows))
