"""shard_oracle_minicpm.py — shard_oracle.py's cut of MiniCPMForCausalLM (vLLM's minicpm.py;
docs/format.md, MiniCPM) under the checkpoint's names: Llama's, with q/k/v fused by heads and
the dense gate_proj / up_proj merged by shard_oracle.py's fused pass (skipped here); o_proj and
down_proj by columns; model.embed_tokens / lm_head by padded vocabulary rows (lm_head dropped
when tied, MiniCPMConfig's default: minicpm_cfg); the norms and the MoE router mlp.gate whole.
MiniCPM-MoE (num_experts > 0): vLLM's MiniCPMMoE, not FusedMoE: every rank holds every expert,
each cut by tp: mlp.ws = per expert [w1 rows [r*I/T, +I/T); w3 the same rows], mlp.w2s = per
expert w2's columns [r*I/T, +I/T), in expert order whatever w13_order says (no EP).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def minicpm_cfg(cfg):
    """cfg tied unless it says otherwise (MiniCPMConfig's tie_word_embeddings=True)."""
    return dict(cfg, tie_word_embeddings=cfg.get("tie_word_embeddings", True))


def minicpm(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif re.search(r"\.(self_attn\.[qkv]_proj|mlp\.gate_proj|mlp\.up_proj)\.weight$", name):
        return  # shard_oracle.py's fused q/k/v and gate_up passes
    elif re.search(r"\.(self_attn\.o_proj|mlp\.down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"\.mlp\.experts\.0\.w[12]\.weight$", name):  # every expert, in order
        base = name[:name.index(".experts.")]
        il = (rows if name.endswith(".w1.weight") else cols) // T
        if name.endswith(".w1.weight"):
            add(base + ".ws", [pc for j in range(cfg["num_experts"]) for w in ("w1", "w3")
                               for pc in pieces_rows(f"{base}.experts.{j}.{w}.weight", r * il, il)])
        else:
            add(base + ".w2s", [pc for j in range(cfg["num_experts"])
                                for pc in pieces_cols(f"{base}.experts.{j}.w2.weight", r * il, il)])
    elif ".mlp.experts." in name:
        return  # gathered with expert 0's
    else:
        add(name, pieces_rows(name, 0, rows))
