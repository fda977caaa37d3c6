"""shard_oracle_telechat2.py — shard_oracle.py's cut of TeleChat2ForCausalLM (vLLM's
telechat2.py over its llama.py; docs/format.md, TeleChat2), served under Llama's runtime names:
self_attention.query with key_value ([KV, 2, d] rows: each kv head's k, then its v) into
self_attn.qkv_proj [q_r; k_r; v_r] (kv heads r*KV/T.. or, when KV < T, the one kv head
r // (T / KV), replicated); self_attention.dense and mlp.down_proj by columns, their biases
whole; gate_proj / up_proj merged by rows into mlp.gate_up_proj [gate_r; up_r];
word_embeddings / lm_head by padded vocabulary rows (lm_head dropped when tied, true when the
config leaves it out); the norms whole. The config's Telechat2Config keys are read as such.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows

NAMES = (("transformer.word_embeddings.", "model.embed_tokens."), ("transformer.ln_f.", "model.norm."),
         ("transformer.h.", "model.layers."), (".self_attention.dense.", ".self_attn.o_proj."))


def runtime(name):
    for a, b in NAMES:
        name = name.replace(a, b)
    return name


def telechat2_cfg(c):
    """Telechat2Config's keys under the names expected() reads (a Llama name given wins, as
    PretrainedConfig sets it last); tied unless the config says otherwise."""
    c = dict(c)
    for own, llama in (("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"),
                       ("ffn_hidden_size", "intermediate_size")):
        if c.get(llama) is None and own in c:
            c[llama] = c[own]
    c["tie_word_embeddings"] = c.get("tie_word_embeddings", True)
    return c


def telechat2(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    H = cfg["num_attention_heads"]; KV = cfg.get("num_key_value_heads") or H
    d = cfg["hidden_size"] // H; Hl = H // T
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    if name == "lm_head.weight" and cfg["tie_word_embeddings"]:
        return
    if name in ("transformer.word_embeddings.weight", "lm_head.weight"):
        add(runtime(name), vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif name.endswith("self_attention.query.weight"):  # with key_value: qkv_proj
        kvn = name.replace(".query.", ".key_value.")
        kvs = range(r * KV // T, r * KV // T + KV // T) if KV >= T else [r // (T // KV)]
        pcs = pieces_rows(name, r * Hl * d, Hl * d)
        pcs += [pc for part in (0, 1) for g in kvs for pc in pieces_rows(kvn, (2 * g + part) * d, d)]
        add(runtime(name).replace(".self_attention.query.", ".self_attn.qkv_proj."), pcs)
    elif name.endswith("self_attention.key_value.weight"):
        return
    elif re.search(r"\.(self_attention\.dense|mlp\.down_proj)\.weight$", name):
        add(runtime(name), pieces_cols(name, r * cols // T, cols // T))
    elif name.endswith("mlp.gate_proj.weight"):  # with up_proj: gate_up_proj [gate_r; up_r]
        up = name.replace(".gate_proj.", ".up_proj.")
        add(runtime(name).replace(".gate_proj.", ".gate_up_proj."),
            pieces_rows(name, r * rows // T, rows // T) + pieces_rows(up, r * rows // T, rows // T))
    elif name.endswith("mlp.up_proj.weight"):
        return
    else:
        add(runtime(name), pieces_rows(name, 0, rows))
