"""shard_oracle_bailing.py — shard_oracle.py's cut of Bailing MoE (BailingMoeForCausalLM; the first
vLLM bailing_moe.py; docs/format.md, Bailing MoE) under the checkpoint's names, TP only:
attention.query_key_value (and its bias) holds contiguous [q; k; v] rows, rank r gets [q_r;
k_r; v_r] (kv heads r*KV/T..; vLLM asserts T divides KV); attention.dense by columns;
model.word_embeddings / lm_head by padded vocabulary rows; every layer's routed experts into
mlp.experts.w13_weight ([gate_j rows; up_j rows] per expert, the rank's Ie / T of each) and
w2_weight (down_j's columns), built once at expert 0's gate_proj; the shared experts' down_proj
by columns, their gate / up left to expected()'s fused pass (gate_up_proj); the router and the
norms whole. Bailing MoE V2 (BailingMoeV2ForCausalLM, Ling 2.0; the later bailing_moe.py) the
same, with kv heads replicated past KV (max(1, KV/T) a rank, head r*KV/T), the dense MLP of
the layers below first_k_dense_replace (gate / up to the fused pass, down_proj by columns),
the q/k norms and the router's expert_bias whole (its MTP layers are taken out of the source by
shard_oracle_more.py's bailing_v2_src).
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def bailing_cfg(cfg):
    """BailingMoeConfig's keys as expected() reads them: untied (its default), head_dim
    hid / H when absent."""
    return dict(cfg, tie_word_embeddings=cfg.get("tie_word_embeddings", False),
                head_dim=cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"])


def bailing_experts(name, src, cfg, T, r, add):
    """Layer name's (expert 0's gate_proj) w13 / w2 stacks of every expert, TP-cut."""
    base = name[: -len("0.gate_proj.weight")]
    Ie = src[name][1].shape[0]; Il = Ie // T
    for j in range(cfg["num_experts"]):
        g, u, d = (f"{base}{j}.{x}_proj.weight" for x in ("gate", "up", "down"))
        add(base[: -1] + ".w13_weight", pieces_rows(g, r * Il, Il) + pieces_rows(u, r * Il, Il))
        add(base[: -1] + ".w2_weight", pieces_cols(d, r * Il, Il))


def bailing(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    H = cfg["num_attention_heads"]; KV = cfg["num_key_value_heads"]; d = cfg["head_dim"]
    Hl, KVl, kv0 = H // T, max(1, KV // T), r * KV // T
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name in ("model.word_embeddings.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif re.search(r"\.query_key_value\.(weight|bias)$", name):
        blocks = (list(range(r * Hl, r * Hl + Hl)) + [H + kv0 + j for j in range(KVl)]
                  + [H + KV + kv0 + j for j in range(KVl)])
        add(name, [pc for b in blocks for pc in pieces_rows(name, b * d, d)])
    elif re.search(r"\.mlp\.experts\.0\.gate_proj\.weight$", name):
        bailing_experts(name, src, cfg, T, r, add)
    elif ".mlp.experts." in name or re.search(r"mlp\.(shared_experts\.)?(gate|up)_proj\.", name):
        return  # the stacks above; the fused pass
    elif re.search(r"\.(attention\.dense|mlp\.down_proj|shared_experts\.down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:
        add(name, pieces_rows(name, 0, rows))
