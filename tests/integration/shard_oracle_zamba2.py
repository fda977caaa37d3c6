"""shard_oracle_zamba2.py — shard_oracle.py's cut of Zamba2 (vLLM's zamba2.py, MambaMixer2):
every layer's Mamba2 mixer (mamba. or a hybrid layer's mamba_decoder.mamba.) as Granite
4.0's (Zamba2Config's n_mamba_heads / mamba_ngroups under the mixer's names); the shared
blocks' q / k / v (one kv head per head) fused by heads into self_attn.qkv_proj, o_proj and
down_proj by columns (down's bias whole), gate_up_proj (and its bias) as [gate_r; up_r]; the
LoRA adapters' A (.0) by rows of adapter_rank, B (.1) by rows (gate_up's as [gate_r; up_r]);
embed_tokens / lm_head by padded vocabulary rows; linear and the norms whole.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def zamba2(name, rows, cols, cfg, T, r, pad, add, mixer):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces); mixer:
    shard_oracle.py's mamba_mixer."""
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
        return
    if ".mamba." in name:  # Zamba2Config's keys under the mixer's names
        m2 = dict(cfg, mamba_n_groups=cfg.get("mamba_ngroups", 1),
                  mamba_n_heads=cfg.get("n_mamba_heads", 8), mamba_expand=cfg.get("mamba_expand", 2))
        add(name, mixer(name, rows, cols, m2, T, r))
        return
    m = re.match(r"(.*)\.(q|k|v)_proj\.weight$", name)
    if m:
        if m.group(2) == "q":
            n = rows // T
            add(m.group(1) + ".qkv_proj.weight",
                sum((pieces_rows(f"{m.group(1)}.{x}_proj.weight", r * n, n) for x in "qkv"), []))
        return
    if re.search(r"(o_proj|down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"(gate_up_proj\.(weight|bias)|gate_up_proj_adapter_list\.\d+\.1\.weight)$",
                   name):
        half = rows // 2; n = half // T
        add(name, pieces_rows(name, r * n, n) + pieces_rows(name, half + r * n, n))
    elif re.search(r"adapter_list\.\d+\.[01]\.weight$", name):
        add(name, pieces_rows(name, r * rows // T, rows // T))
    else:  # linear, the norms, down_proj's bias
        add(name, pieces_rows(name, 0, rows))
