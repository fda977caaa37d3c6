"""shard_oracle_ouro.py — shard_oracle.py's cut of OuroForCausalLM (vLLM's ouro.py;
docs/format.md, Ouro) under the checkpoint's names: Qwen2's without biases, with q/k/v fused by
heads and gate_proj / up_proj merged by shard_oracle.py's fused pass (skipped here); o_proj and
down_proj by columns; model.early_exit_gate.weight [1, hid] by columns (RowParallelLinear), its
bias [1] whole; model.embed_tokens / lm_head by padded vocabulary rows (lm_head dropped when
tied); the four norms of each layer and model.norm whole.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def ouro(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif re.search(r"\.(self_attn\.[qkv]_proj|mlp\.gate_proj|mlp\.up_proj)\.weight$", name):
        return  # shard_oracle.py's fused q/k/v and gate_up passes
    elif re.search(r"\.(self_attn\.o_proj|mlp\.down_proj)\.weight$", name) or \
            name == "model.early_exit_gate.weight":
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:
        add(name, pieces_rows(name, 0, rows))
