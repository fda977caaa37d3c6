"""shard_oracle_jais.py — shard_oracle.py's cut of JAIS (JAISLMHeadModel; vLLM's jais.py;
docs/format.md, JAIS) under the checkpoint's names: GPT-2's (shard_oracle_cut.py gpt2) on the
Conv1D weights transposed to [out, in] as load_weights does (c_attn, c_proj, c_fc and c_fc2),
with mlp.c_fc2 (and its bias) by rows as c_fc; lm_head.weight (jais.py skips it: tied) and
the ALiBi buffer relative_pe.slopes dropped; names without transformer. read under it.
"""
import re

import numpy as np

from shard_oracle_cut import gpt2, pieces_rows

T_KEY = "T:"  # src's transposed copy of a Conv1D weight, added once


def jais_cfg(c):
    """JAISConfig's GPT-2 names (n_inner None: 4 * n_embd); always tied."""
    return dict(c, hidden_size=c["n_embd"], num_attention_heads=c["n_head"],
                num_hidden_layers=c["n_layer"],
                intermediate_size=c.get("n_inner") or 4 * c["n_embd"], tie_word_embeddings=True)


def jais(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    if name.startswith(T_KEY) or "relative_pe" in name or name == "lm_head.weight":
        return
    rt = name if name.startswith(("transformer.", "lm_head.")) else "transformer." + name
    key = name
    if re.search(r"\.(c_attn|c_proj|c_fc|c_fc2)\.weight$", name):
        key = T_KEY + rt
        if key not in src:
            src[key] = (src[name][0], np.ascontiguousarray(src[name][1].T))
    rows = src[key][1].shape[0]
    cols = src[key][1].shape[1] if src[key][1].ndim > 1 else 1
    if re.search(r"mlp\.c_fc2\.(weight|bias)$", name):
        pcs = pieces_rows(key, r * rows // T, rows // T)
    else:
        pcs = gpt2(key, rows, cols, cfg, T, r, pad, True)
    if pcs is not None:
        add(rt, pcs)
