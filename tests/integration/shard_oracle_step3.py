"""shard_oracle_step3.py — shard_oracle.py's cut of Step 3 (Step3TextForCausalLM, model_type
step3_text: stepfun-ai/step3's language model; vLLM's step3_text.py; docs/format.md, Step 3)
under the checkpoint's names, laying out its fused tensors itself (OWN_FUSED: expected()'s
fused pass would cut q/k/v by heads):
- self_attn.q_proj [Sq, hid], k_proj / v_proj [d, hid] (the one shared kv head) joined whole
  into self_attn.qkv_proj [q; k; v], the same on every rank (a ReplicatedLinear that
  load_weights' qkv_params_mapping fills in that order); inter_norm [Sq] whole;
  wq [H*d, Sq] by the rank's heads' rows (ColumnParallelLinear); o_proj by columns;
- the dense layers' mlp and the MoE layers' share_expert (Step3TextMLP): gate_proj / up_proj
  merged into gate_up_proj [gate_r; up_r], down_proj by columns;
- the MoE layers' router moe.gate [E, hid] whole; the experts, stored stacked as
  moe.gate_proj / moe.up_proj [E, Ie, hid] and moe.down_proj [E, hid, Ie], read one expert
  at a time (step3_src: load_weights hands FusedMoE loaded_weight[expert_id]) as
  moe.experts.{j}.gate_proj / up_proj / down_proj and handed back to expected()'s common
  expert rules (COMMON): moe.experts.w13_weight / w2_weight, EP by whole experts, TP by Ie,
  the w13 order as asked;
- model.embed_tokens and lm_head (vLLM's ParallelLMHead, never tied: step3_cfg) by padded
  vocabulary rows; the norms whole.
"""
import re

from shard_oracle_cut import COMMON, pieces_cols, pieces_rows, vocab_rows


def step3_cfg(cfg):
    """Step3TextConfig's keys as expected() reads them: untied whatever the key says (vLLM's
    lm_head is loaded from lm_head.weight)."""
    return dict(cfg, tie_word_embeddings=False)


def step3_src(src):
    """The stacked experts moe.gate_proj / up_proj / down_proj.weight [E, ...] as expert j's
    moe.experts.{j}.gate_proj / up_proj / down_proj.weight (loaded_weight[j])."""
    out = {}
    for k, (dt, a) in src.items():
        m = re.match(r"(.*\.moe\.)(gate_proj|up_proj|down_proj)\.weight$", k)
        if not m:
            out[k] = (dt, a); continue
        for j in range(a.shape[0]):
            out[f"{m.group(1)}experts.{j}.{m.group(2)}.weight"] = (dt, a[j])
    return out


def step3(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces);
    COMMON for the experts (expected()'s stacks)."""
    H = cfg["num_attention_heads"]; Hl = H // T
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name in ("model.embed_tokens.weight", "lm_head.weight"):
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif ".moe.experts." in name:
        return COMMON
    elif name.endswith("self_attn.q_proj.weight"):  # whole, [q; k; v], on every rank
        b = name[: -len("q_proj.weight")]
        add(b + "qkv_proj.weight", pieces_rows(name, 0, rows)
            + pieces_rows(b + "k_proj.weight", 0, src[b + "k_proj.weight"][1].shape[0])
            + pieces_rows(b + "v_proj.weight", 0, src[b + "v_proj.weight"][1].shape[0]))
    elif re.search(r"self_attn\.[kv]_proj\.weight$", name):
        return  # with q_proj above
    elif name.endswith("self_attn.wq.weight"):  # the rank's heads' rows
        d = rows // H
        add(name, pieces_rows(name, r * Hl * d, Hl * d))
    elif re.search(r"\.(mlp|share_expert)\.up_proj\.weight$", name):
        return  # with gate_proj below
    elif re.search(r"\.(mlp|share_expert)\.gate_proj\.weight$", name):
        b, n = name[: -len("gate_proj.weight")], rows // T
        add(b + "gate_up_proj.weight",
            pieces_rows(name, r * n, n) + pieces_rows(b + "up_proj.weight", r * n, n))
    elif re.search(r"\.(self_attn\.o_proj|down_proj)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    else:  # the norms, inter_norm, the router moe.gate
        add(name, pieces_rows(name, 0, rows))
