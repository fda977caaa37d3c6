"""Undo weightd's per-rank layouts (docs/format.md section 2) back into the
checkpoint's tensors: concatenate column/row-parallel slices, split fused
qkv ([q_r; k_r; v_r], weight and bias) and gate_up ([gate_r; up_r]), unstack expert w13/w2,
drop vocabulary padding. Every copy that should be replicated across ranks is
checked to be identical. Used by test_transformers.py only."""

import torch


def _same(tensors, what):
    first = tensors[0]
    for t in tensors[1:]:
        assert torch.equal(t, first), "%s differs between ranks that should share it" % what
    return first


def _expert_range(E, P, e):
    """format.md 2.4: (start, count) of ep rank e."""
    base, extra = divmod(E, P)
    return e * base + min(e, extra), base + (1 if e < extra else 0)


def reassemble(cfg, T, P, shards):
    """cfg: config.json dict; shards[(tp_rank, ep_rank)]: {runtime name: tensor}.
    Returns {checkpoint name: tensor}."""
    H, hid, V = cfg["num_attention_heads"], cfg["hidden_size"], cfg["vocab_size"]
    KV = cfg.get("num_key_value_heads") or H
    d = cfg.get("head_dim") or hid // H
    E = cfg.get("num_local_experts", 0)
    out = {}
    names = set()
    for s in shards.values():
        names |= set(s)
    for name in sorted(names):
        # non-expert tensors follow tp_rank only: every ep rank holds the same slice
        if ".experts." not in name:
            by_r = [_same([shards[(r, e)][name] for e in range(P)], name) for r in range(T)]
        if name.endswith(("self_attn.qkv_proj.weight", "self_attn.qkv_proj.bias")):
            pre, leaf = name.split("qkv_proj.")
            Hl, KVl = H // T, max(KV // T, 1)
            per_kv = 1 if KV >= T else T // KV  # ranks sharing one kv slice
            parts = [torch.split(x, [Hl * d, KVl * d, KVl * d]) for x in by_r]
            out[pre + "q_proj." + leaf] = torch.cat([p[0] for p in parts])
            for i, proj in ((1, "k_proj."), (2, "v_proj.")):
                groups = [_same([parts[r][i] for r in range(g * per_kv, (g + 1) * per_kv)],
                                name) for g in range(T // per_kv)]
                out[pre + proj + leaf] = torch.cat(groups)
        elif name.endswith(("o_proj.weight", "mlp.down_proj.weight", "mlp.c_proj.weight")):
            out[name] = torch.cat(by_r, dim=1)
        elif name.endswith("mlp.gate_up_proj.weight"):
            pre = name[:-len("gate_up_proj.weight")]
            halves = [x.chunk(2) for x in by_r]
            out[pre + "gate_proj.weight"] = torch.cat([h[0] for h in halves])
            out[pre + "up_proj.weight"] = torch.cat([h[1] for h in halves])
        elif name.endswith(("mlp.c_fc.weight", "mlp.c_fc.bias")):  # StarCoder2: rows
            out[name] = torch.cat(by_r)
        elif name in ("model.embed_tokens.weight", "lm_head.weight"):
            out[name] = torch.cat(by_r)[:V]  # drop the padding rows
        elif name.endswith("experts.w13_weight") or name.endswith("experts.w2_weight"):
            _experts(out, name, E, T, P, shards)
        else:  # replicated
            out[name] = _same(by_r, name)
    return out


def _experts(out, name, E, T, P, shards):
    pre = name[:-len("w13_weight")] if name.endswith("w13_weight") else name[:-len("w2_weight")]
    w13 = name.endswith("w13_weight")
    for e in range(P):
        start, count = _expert_range(E, P, e)
        stacks = [shards[(r, e)][name] for r in range(T)]
        assert all(s.shape[0] == count for s in stacks), name
        if P > 1:  # whole experts, identical on every tp rank of an ep rank
            stacks = [_same(stacks, name)]
        for local in range(count):
            j = start + local
            if w13:
                halves = [s[local].chunk(2) for s in stacks]
                out["%s%d.w1.weight" % (pre, j)] = torch.cat([h[0] for h in halves])
                out["%s%d.w3.weight" % (pre, j)] = torch.cat([h[1] for h in halves])
            else:
                out["%s%d.w2.weight" % (pre, j)] = torch.cat([s[local] for s in stacks], dim=1)
