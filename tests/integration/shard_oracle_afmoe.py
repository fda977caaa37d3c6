"""shard_oracle_afmoe.py — shard_oracle.py's cut of AFMoE (AfmoeForCausalLM, Arcee's Trinity;
vLLM's afmoe.py; docs/format.md, AFMoE) under the checkpoint's names, TP only, laying out its
fused tensors itself (OWN_FUSED: expected()'s fused pass would read self_attn.gate_proj as an
MLP's): q/k/v into qkv_proj [q_r; k_r; v_r] (kv heads replicated past KV: max(1, KV/T) a rank
from head r*KV/T); the output gate self_attn.gate_proj by the rank's heads' rows as q's; o_proj
by columns; the dense and shared MLPs' gate / up into gate_up_proj [gate_r; up_r], their
down_proj by columns; the routed experts stacked (shard_oracle_bailing.py's bailing_experts); the
router mlp.router.gate served as mlp.gate (vLLM's rename) and expert_bias whole; the embedding and
lm_head by padded vocabulary rows; the norms whole.
"""
import re

from shard_oracle_bailing import bailing_experts
from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def afmoe_cfg(cfg):
    """AfmoeConfig's defaults as expected() reads them: head_dim 128 (not hid / H), untied."""
    return dict(cfg, head_dim=cfg.get("head_dim", 128),
                tie_word_embeddings=cfg.get("tie_word_embeddings", False))


def afmoe(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    H = cfg["num_attention_heads"]; KV = cfg.get("num_key_value_heads", H); d = cfg["head_dim"]
    Hl, KVl, kv0 = H // T, max(1, KV // T), r * KV // T
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif name.endswith("self_attn.q_proj.weight"):
        b = name[: -len("q_proj.weight")]
        add(b + "qkv_proj.weight", pieces_rows(name, r * Hl * d, Hl * d)
            + pieces_rows(b + "k_proj.weight", kv0 * d, KVl * d)
            + pieces_rows(b + "v_proj.weight", kv0 * d, KVl * d))
    elif re.search(r"self_attn\.[kv]_proj\.weight$", name):
        return  # with q_proj above
    elif name.endswith("self_attn.gate_proj.weight"):  # ColumnParallelLinear, q's heads
        add(name, pieces_rows(name, r * Hl * d, Hl * d))
    elif re.search(r"\.mlp\.experts\.0\.gate_proj\.weight$", name):
        bailing_experts(name, src, cfg, T, r, add)
    elif ".mlp.experts." in name or re.search(r"mlp\.(shared_experts\.)?up_proj\.", name):
        return  # the stacks above; with gate_proj below
    elif re.search(r"mlp\.(shared_experts\.)?gate_proj\.weight$", name):
        b, n = name[: -len("gate_proj.weight")], rows // T
        add(b + "gate_up_proj.weight",
            pieces_rows(name, r * n, n) + pieces_rows(b + "up_proj.weight", r * n, n))
    elif re.search(r"\.(self_attn\.o_proj|down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif name.endswith("mlp.router.gate.weight"):  # vLLM: .router.gate.weight -> .gate.weight
        add(name.replace("mlp.router.gate.", "mlp.gate."), pieces_rows(name, 0, rows))
    else:
        add(name, pieces_rows(name, 0, rows))
