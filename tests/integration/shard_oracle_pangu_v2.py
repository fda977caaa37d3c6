"""shard_oracle_pangu_v2.py — shard_oracle.py's cut of openPangu-Pro-MoE-V2
(PanguProMoEV2ForCausalLM, model_type PanguProMoEV2; vLLM's openpangu.py with
OpenPanguSinkAttention; docs/format.md, openPangu-Pro-MoE-V2), laying out its fused q/k/v itself
(OWN_FUSED: v heads of v_channels rows and a head_dim of qk_nope_dim + qk_rope_dim, which
expected()'s fused pass does not know):
- self_attn.q_proj / k_proj / v_proj (and biases) fused into qkv_proj [q_r; k_r; v_r] by the
  rank's heads (no kv head replicated: vLLM refuses KV < T); o_proj by columns; k_layernorm
  whole; param_sink_key / param_sink_value [S, KV, x] by the rank's kv heads on dim 1 (read as
  [S*KV, x] rows: pangu_v2_src);
- the dense layers' gate_proj / up_proj merged into gate_up_proj, down_proj by columns; the MoE
  layers' router mlp.gate whole, mlp.e_score_correction_bias whole as
  mlp.gate.e_score_correction_bias (load_weights' rename), the shared experts as the dense MLP,
  the routed experts to expected()'s common expert rules (COMMON);
- the MTP layers dropped (pangu_v2_src: every model.layers.{i} with i >= num_hidden_layers);
  embed_tokens / lm_head by padded vocabulary rows; the norms whole.
"""
import re

from shard_oracle_cut import COMMON, pieces_cols, pieces_rows, vocab_rows


def pangu_v2_src(src):
    """The checkpoint's tensors less the MTP layers (those with an eh_proj), the sinks as
    [S*KV, x] rows."""
    mtp = {k.split(".")[2] for k in src if re.match(r"model\.layers\.\d+\.eh_proj\.", k)}
    out = {}
    for k, v in src.items():
        if k.startswith("model.layers.") and k.split(".")[2] in mtp:
            continue
        if k.endswith(("param_sink_key", "param_sink_value")):
            v = (v[0], v[1].reshape(-1, v[1].shape[-1]))
        out[k] = v
    return out


def _qkv(p, src, cfg, T, r, leaf):
    """Rank r's [q_r; k_r; v_r] pieces of layer prefix p's q/k/v_proj.<leaf>."""
    d = cfg["qk_nope_dim"] + cfg["qk_rope_dim"]
    H, KV, dv = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["v_channels"]
    Hl, KVl = H // T, KV // T
    return (pieces_rows(p + "q_proj." + leaf, r * Hl * d, Hl * d)
            + pieces_rows(p + "k_proj." + leaf, r * KVl * d, KVl * d)
            + pieces_rows(p + "v_proj." + leaf, r * KVl * dv, KVl * dv))


def pangu_v2(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces);
    COMMON for the routed experts."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    m = re.match(r"(model\.layers\.\d+\.self_attn\.)q_proj\.(weight|bias)$", name)
    KV, S = cfg["num_key_value_heads"], cfg["param_sink_number"]
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif ".mlp.experts." in name:
        return COMMON
    elif m:
        add(m.group(1) + "qkv_proj." + m.group(2), _qkv(m.group(1), src, cfg, T, r, m.group(2)))
    elif re.search(r"self_attn\.[kv]_proj\.(weight|bias)$", name):
        return  # with q_proj above
    elif name.endswith(("param_sink_key", "param_sink_value")):
        n = KV // T
        add(name, [pc for s in range(S) for pc in pieces_rows(name, s * KV + r * n, n)])
    elif name.endswith("mlp.e_score_correction_bias"):
        add(name[: -len("e_score_correction_bias")] + "gate.e_score_correction_bias",
            pieces_rows(name, 0, rows))
    elif name.endswith("up_proj.weight"):
        return  # with gate_proj below
    elif name.endswith("gate_proj.weight"):
        b, n = name[: -len("gate_proj.weight")], rows // T
        add(b + "gate_up_proj.weight",
            pieces_rows(name, r * n, n) + pieces_rows(b + "up_proj.weight", r * n, n))
    elif re.search(r"\.(o_proj|down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:  # the norms, k_layernorm, o_proj's bias, the router mlp.gate
        add(name, pieces_rows(name, 0, rows))
