"""shard_oracle_mimo_v2.py — shard_oracle.py's cut of MiMo-V2-Flash (MiMoV2FlashForCausalLM,
model_type mimo_v2_flash; vLLM's mimo_v2_flash.py; docs/format.md, MiMo-V2-Flash), laying out
its fused tensors itself (OWN_FUSED: each layer has its own sizes and v heads of v_head_dim rows,
which expected()'s fused pass does not know):
- each layer's attention by its own sizes: hybrid_layer_pattern[i] 1 swa_head_dim, else
  head_dim (d); its heads H, kv heads KV and v head width dv read off q_proj / k_proj / v_proj's
  rows; self_attn.q_proj / k_proj / v_proj (and their biases) fused into qkv_proj
  [q_r; k_r; v_r] by the rank's heads (QKVParallelLinear with v_head_size dv), kv heads
  replicated on T / KV ranks past KV; o_proj by columns (H x dv); attention_sink_bias by the
  rank's heads (load_weights narrows it);
- the dense layers' mlp gate_proj / up_proj merged into gate_up_proj [gate_r; up_r], down_proj by
  columns; the MoE layers' router mlp.gate and its e_score_correction_bias whole, the experts to
  expected()'s common expert rules (COMMON: w13 / w2 stacks, EP, the w13 order);
- names holding "mtp" dropped (mimo_v2_src: load_weights skips them); embed_tokens and lm_head
  (never tied) by padded vocabulary rows; the norms whole.
"""
import re

from shard_oracle_cut import COMMON, pieces_cols, pieces_rows, vocab_rows


def mimo_v2_cfg(cfg):
    """vLLM's ParallelLMHead for MiMo-V2-Flash is never tied (a tie is refused)."""
    return dict(cfg, tie_word_embeddings=False)


def mimo_v2_src(src):
    """The checkpoint's tensors less those vLLM's load_weights skips ("mtp" in the name)."""
    return {k: v for k, v in src.items() if "mtp" not in k}


def _qkv(p, src, cfg, T, r, leaf):
    """Rank r's [q_r; k_r; v_r] pieces of layer prefix p's q/k/v_proj.<leaf>."""
    i = int(p.split(".")[2])
    d = cfg["swa_head_dim"] if cfg["hybrid_layer_pattern"][i] == 1 else cfg["head_dim"]
    H = src[p + "q_proj." + leaf][1].shape[0] // d
    KV = src[p + "k_proj." + leaf][1].shape[0] // d
    dv = src[p + "v_proj." + leaf][1].shape[0] // KV
    Hl = H // T
    KVl, ks = (KV // T, r) if KV >= T else (1, r // (T // KV))
    return (pieces_rows(p + "q_proj." + leaf, r * Hl * d, Hl * d)
            + pieces_rows(p + "k_proj." + leaf, ks * KVl * d, KVl * d)
            + pieces_rows(p + "v_proj." + leaf, ks * KVl * dv, KVl * dv))


def mimo_v2(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces);
    COMMON for the experts (expected()'s stacks)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    m = re.match(r"(model\.layers\.\d+\.self_attn\.)q_proj\.(weight|bias)$", name)
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif ".mlp.experts." in name:
        return COMMON
    elif m:
        add(m.group(1) + "qkv_proj." + m.group(2), _qkv(m.group(1), src, cfg, T, r, m.group(2)))
    elif re.search(r"self_attn\.[kv]_proj\.(weight|bias)$", name):
        return  # with q_proj above
    elif name.endswith("self_attn.attention_sink_bias"):
        add(name, pieces_rows(name, r * rows // T, rows // T))
    elif name.endswith("mlp.up_proj.weight"):
        return  # with gate_proj below
    elif name.endswith("mlp.gate_proj.weight"):
        b, n = name[: -len("gate_proj.weight")], rows // T
        add(b + "gate_up_proj.weight",
            pieces_rows(name, r * n, n) + pieces_rows(b + "up_proj.weight", r * n, n))
    elif re.search(r"\.(self_attn\.o_proj|mlp\.down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:  # the norms, the router mlp.gate and its e_score_correction_bias
        add(name, pieces_rows(name, 0, rows))
