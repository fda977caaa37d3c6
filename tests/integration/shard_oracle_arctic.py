"""shard_oracle_arctic.py — shard_oracle.py's cut of ArcticForCausalLM (vLLM's arctic.py;
docs/format.md, Arctic) under the checkpoint's names: Llama's attention, q/k/v fused by heads by
shard_oracle.py's fused pass (skipped here), o_proj by columns; model.embed_tokens / lm_head by
padded vocabulary rows (untied); the norms, residual_layernorm and the router
block_sparse_moe.gate whole. The ArcticMLPs (a dense layer's block_sparse_moe.mlp, a MoE layer's
residual_mlp): w13 = [w1 rows [r*F/T, +F/T); w3 the same rows], w2 by columns, F its width.
vLLM's ArcticMoE, not FusedMoE: every rank holds every expert, each cut by tp:
block_sparse_moe.ws = per expert [w1 rows [r*I/T, +I/T); w3 the same rows], block_sparse_moe.w2s
= per expert w2's columns, in expert order whatever w13_order says (no EP).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def arctic_cfg(cfg):
    """cfg untied unless it says otherwise (ArcticConfig's tie_word_embeddings=False)."""
    return dict(cfg, tie_word_embeddings=cfg.get("tie_word_embeddings", False))


def arctic(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    mlp = re.search(r"^(.*\.(block_sparse_moe\.mlp|residual_mlp))\.(w[123])\.weight$", name)
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif re.search(r"\.self_attn\.[qkv]_proj\.weight$", name):
        return  # shard_oracle.py's fused q/k/v pass
    elif name.endswith(".self_attn.o_proj.weight"):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif mlp and mlp.group(3) == "w1":
        il = rows // T
        add(mlp.group(1) + ".w13.weight", [pc for w in ("w1", "w3") for pc in
                                           pieces_rows(f"{mlp.group(1)}.{w}.weight", r * il, il)])
    elif mlp and mlp.group(3) == "w2":
        add(mlp.group(1) + ".w2.weight", pieces_cols(name, r * cols // T, cols // T))
    elif mlp:
        return  # w3: gathered with w1
    elif re.search(r"\.experts\.0\.w[12]\.weight$", name):  # every expert, in order
        base = name[:name.index(".experts.")]
        il = (rows if name.endswith(".w1.weight") else cols) // T
        if name.endswith(".w1.weight"):
            add(base + ".ws", [pc for j in range(cfg["num_local_experts"]) for w in ("w1", "w3")
                               for pc in pieces_rows(f"{base}.experts.{j}.{w}.weight", r * il, il)])
        else:
            add(base + ".w2s", [pc for j in range(cfg["num_local_experts"])
                                for pc in pieces_cols(f"{base}.experts.{j}.w2.weight", r * il, il)])
    elif ".experts." in name:
        return  # gathered with expert 0's
    else:
        add(name, pieces_rows(name, 0, rows))
