"""shard_oracle_nemotron_h.py — shard_oracle.py's cut of Nemotron-H (vLLM's nemotron_h.py,
MambaMixer2): Mamba's backbone.* (backbone.embeddings and lm_head by padded vocabulary rows,
the norms whole) and one mixer per layer under backbone.layers.{i}.mixer.: the Mamba2 mixer
as Granite 4.0's (NemotronHConfig's mamba_num_heads / n_groups / ssm_state_size under the
mixer's names, its width mamba_num_heads * mamba_head_dim), q / k / v fused by heads into
qkv_proj (shard_oracle.py's fused q/k/v pass, as Llama's), o_proj and down_proj by columns
(down's bias whole), up_proj (and its bias) by rows; an "E" layer's router gate.weight and
gate.e_score_correction_bias whole, its shared_experts.up_proj by rows and down_proj by columns
(its routed experts: shard_oracle.py's stacks).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def nemotron_h(name, rows, cols, cfg, T, r, pad, add, mixer):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces); mixer:
    shard_oracle.py's mamba_mixer."""
    if name in ("backbone.embeddings.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
        return
    if re.search(r"\.(q|k|v)_proj\.weight$", name):
        return  # fused into qkv_proj by heads by shard_oracle.py's fused q/k/v pass
    if re.search(r"mixer\.(in_proj\.|conv1d\.|A_log$|D$|dt_bias$|norm\.|out_proj\.)", name):
        im = cfg["mamba_num_heads"] * cfg["mamba_head_dim"]
        m2 = dict(cfg, mamba_d_ssm=im, mamba_n_groups=cfg.get("n_groups", 8),
                  mamba_d_state=cfg.get("ssm_state_size", 128),
                  mamba_n_heads=cfg["mamba_num_heads"])
        add(name, mixer(name, rows, cols, m2, T, r))
    elif re.search(r"(o_proj|down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"up_proj\.(weight|bias)$", name):
        add(name, pieces_rows(name, r * rows // T, rows // T))
    else:  # the norms, down_proj's bias, the MoE's router and its bias
        add(name, pieces_rows(name, 0, rows))
