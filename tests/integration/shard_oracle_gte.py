"""shard_oracle_gte.py — shard_oracle.py's cut of GteNewModel (vLLM's bert_with_rope.py;
docs/format.md, GTE v1.5) from NewModel's names onto vLLM's: "new." dropped, encoder.layer. as
encoder.layers.; the word and token type tables by padded rows (VocabParallelEmbedding);
embeddings.LayerNorm whole; attention.qkv_proj [q; k; v] (and its bias) as attn.qkv_proj, the
rank's heads of each third; attention.o_proj (as attn.out_proj) and mlp.down_proj by columns,
their biases whole; mlp.up_gate_proj [up; gate] re-merged gate first as mlp.gate_up_proj
[gate_r; up_r] (no bias); attn_ln / mlp_ln whole; pooler / classifier tensors skipped.
GteNewForSequenceClassification (gte_new_cls): the same cut under new., which the runtime names
keep; new.pooler.dense and classifier (weight and bias) whole on every rank.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def gte_new(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    hid, I = cfg["hidden_size"], cfg["intermediate_size"]
    out = name[4:] if name.startswith("new.") else name
    if out.startswith("classifier") or "pooler" in out:
        return
    out = out.replace("encoder.layer.", "encoder.layers.").replace("attention.qkv_proj",
                                                                   "attn.qkv_proj")
    out = out.replace("attention.o_proj", "attn.out_proj").replace("up_gate_proj", "gate_up_proj")
    if out == "embeddings.word_embeddings.weight":
        add(out, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif out == "embeddings.token_type_embeddings.weight":  # a rank past the rows: zeros
        add(out, [pc + (name,) if pc[0] == "zero" else pc
                  for pc in vocab_rows(name, rows, T, r, pad)])
    elif re.search(r"\.attn\.qkv_proj\.(weight|bias)$", out):
        hl = hid // T
        add(out, [pc for p in range(3) for pc in pieces_rows(name, p * hid + r * hl, hl)])
    elif re.search(r"\.(attn\.out_proj|mlp\.down_proj)\.weight$", out):
        add(out, pieces_cols(name, r * cols // T, cols // T))
    elif out.endswith(".mlp.gate_up_proj.weight"):
        il = I // T
        add(out, pieces_rows(name, I + r * il, il) + pieces_rows(name, r * il, il))
    else:  # the row-parallel biases, the LayerNorms
        add(out, pieces_rows(name, 0, rows))


def gte_new_cls(name, src, cfg, T, r, pad, add):
    """GteNewModel's cut of new.*, the runtime names under new.; the pooler and classifier whole."""
    if name.startswith(("classifier.", "new.pooler.")):
        add(name, pieces_rows(name, 0, src[name][1].shape[0]))
    else:
        gte_new(name, src, cfg, T, r, pad, lambda out, pcs: add("new." + out, pcs))
