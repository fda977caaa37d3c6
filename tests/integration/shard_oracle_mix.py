"""shard_oracle_mix.py — shard_oracle.py's cuts of the sequence mixers: Qwen3-Next's gated
delta net (linear_attn), LFM2's short conv (lfm2), the Mamba2 mixer of Granite 4.0 / Bamba /
Falcon-H1 / Mamba2 / Zamba2 (mamba_mixer) and Jamba's Mamba v1 mixer (jamba_mixer), as vLLM's
loaders cut them, as pieces (name, axis, start, count) of the source; what each returns for a
name that is not its mixer's, its docstring says.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows


def linear_attn(name, rows, cols, cfg, T, r):
    """Qwen3-Next's linear_attn.* on tp rank r: conv1d's [q; k; v] channel segments each
    split; in_proj_qkvz / in_proj_ba (whole key-head groups) and A_log / dt_bias (value
    heads) by contiguous rows; out_proj by columns; the gated norm whole."""
    if name.endswith(".conv1d.weight"):
        kd = cfg["linear_num_key_heads"] * cfg["linear_key_head_dim"]
        segs = ((0, kd), (kd, kd), (2 * kd, rows - 2 * kd))
        return sum((pieces_rows(name, a + r * (n // T), n // T) for a, n in segs), [])
    if re.search(r"\.(in_proj_qkvz\.weight|in_proj_ba\.weight|A_log|dt_bias)$", name):
        return pieces_rows(name, r * rows // T, rows // T)
    if name.endswith(".out_proj.weight"):
        return pieces_cols(name, r * cols // T, cols // T)
    return pieces_rows(name, 0, rows)  # norm.weight

def lfm2(name, rows, cols, T, r, add):
    """LFM2's short conv (runtime short_conv.*), feed_forward and attention out_proj on tp
    rank r; False for what the common rules cut (q/k/v, norms, embeddings; LFM2-MoE's routed
    experts and router). LFM2-MoE's expert_bias is vLLM's gate.e_score_correction_bias, whole."""
    if name.endswith(".feed_forward.expert_bias"):
        add(name.replace(".expert_bias", ".gate.e_score_correction_bias"), pieces_rows(name, 0, rows))
        return True
    if ".experts." in name:
        return False
    if ".conv." in name:
        rt = name.replace(".conv.", ".short_conv.", 1)
        if re.search(r"\.in_proj\.(weight|bias)$", name):  # [B; C; x], each segment split
            seg = rows // 3; n = seg // T
            add(rt, sum((pieces_rows(name, k * seg + r * n, n) for k in range(3)), []))
        elif re.search(r"\.conv\.conv\.(weight|bias)$", name):
            add(rt, pieces_rows(name, r * rows // T, rows // T))
        elif name.endswith(".out_proj.weight"):
            add(rt, pieces_cols(name, r * cols // T, cols // T))
        else:
            add(rt, pieces_rows(name, 0, rows))  # out_proj.bias, whole
        return True
    m = re.match(r"(.*)\.w(1|3)\.weight$", name)
    if m:
        n = rows // T
        add(m.group(1) + ".w13.weight", pieces_rows(name, r * n, n) if m.group(2) == "1" else [])
        if m.group(2) == "1":
            add(m.group(1) + ".w13.weight", pieces_rows(m.group(1) + ".w3.weight", r * n, n))
        return True
    if re.search(r"(feed_forward\.w2|self_attn\.out_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
        return True
    return False


def mamba_mixer(name, rows, cols, cfg, T, r):
    """Granite 4.0's (Bamba's, Falcon-H1's) mamba.* on tp rank r, as MambaMixer2 loads it."""
    im = cfg.get("mamba_d_ssm") or cfg["mamba_expand"] * cfg["hidden_size"]  # Falcon-H1's width
    gn, hm = cfg["mamba_n_groups"] * cfg["mamba_d_state"], cfg["mamba_n_heads"]
    dup = cfg["mamba_n_groups"] % T != 0

    def segments(sizes, groups):
        pcs, at = [], 0
        for n, g in zip(sizes, groups):
            pcs += pieces_rows(name, at, n) if g and dup else pieces_rows(name, at + r * (n // T), n // T)
            at += n
        return pcs
    if re.search(r"\.in_proj\.(weight|bias)$", name):
        return segments((im, im, gn, gn, hm), (0, 0, 1, 1, 0))
    if re.search(r"\.conv1d\.(weight|bias)$", name):
        return segments((im, gn, gn), (0, 1, 1))
    if name.endswith(".out_proj.weight"):
        return pieces_cols(name, r * cols // T, cols // T)
    if name.endswith(".out_proj.bias"):
        return pieces_rows(name, 0, rows)
    return pieces_rows(name, r * rows // T, rows // T)  # A_log, D, dt_bias, norm.weight

def jamba_mixer(name, rows, cols, T, r):
    """Jamba's mamba.* on tp rank r, as vLLM's MambaMixer (the v1 mixer) loads it:
    in_proj a MergedColumnParallelLinear of two halves [x; z], each split; conv1d, dt_proj
    (ColumnParallelLinear) and A_log / D (its weight_loader) by rows; x_proj and out_proj
    RowParallelLinear by columns, out_proj's bias whole; the dt / B / C norms whole."""
    if re.search(r"\.in_proj\.(weight|bias)$", name):
        half = rows // 2; n = half // T
        return pieces_rows(name, r * n, n) + pieces_rows(name, half + r * n, n)
    if re.search(r"\.(x_proj|out_proj)\.weight$", name):
        return pieces_cols(name, r * cols // T, cols // T)
    if re.search(r"(layernorm\.weight|out_proj\.bias)$", name):
        return pieces_rows(name, 0, rows)
    return pieces_rows(name, r * rows // T, rows // T)  # conv1d, dt_proj, A_log, D
