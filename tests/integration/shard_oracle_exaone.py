"""shard_oracle_exaone.py — shard_oracle.py's cut of ExaoneForCausalLM (vLLM's exaone.py;
docs/format.md, EXAONE 3.x) under the checkpoint's names: attn.attention.q_proj / k_proj /
v_proj fused by heads into qkv_proj by shard_oracle.py's fused pass (skipped here);
attn.attention.out_proj and mlp.c_proj by columns; mlp.c_fc_0 / c_fc_1 merged by rows into
mlp.gate_up_proj [gate_r; up_r]; transformer.wte / lm_head by padded vocabulary rows (lm_head
dropped when tied, ExaoneConfig's default); the norms whole. ExaoneConfig names the depth
num_layers (exaone_cfg).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def exaone_cfg(cfg):
    """cfg with ExaoneConfig's num_layers as num_hidden_layers, tied unless said otherwise."""
    return dict(cfg, num_hidden_layers=cfg["num_layers"],
                tie_word_embeddings=cfg.get("tie_word_embeddings", True))


def exaone(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name == "lm_head.weight" and cfg["tie_word_embeddings"]:
        return
    if name in ("transformer.wte.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif re.search(r"\.attn\.attention\.[qkv]_proj\.weight$", name):
        return  # shard_oracle.py's fused q/k/v pass
    elif re.search(r"\.(attn\.attention\.out_proj|mlp\.c_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif name.endswith("mlp.c_fc_0.weight"):  # with c_fc_1: gate_up_proj [gate_r; up_r]
        up = name.replace(".c_fc_0.", ".c_fc_1.")
        add(name.replace(".c_fc_0.", ".gate_up_proj."),
            pieces_rows(name, r * rows // T, rows // T) + pieces_rows(up, r * rows // T, rows // T))
    elif name.endswith("mlp.c_fc_1.weight"):
        return
    else:
        add(name, pieces_rows(name, 0, rows))
