"""shard_oracle_nomic.py — shard_oracle.py's cut of NomicBertModel (vLLM's bert_with_rope.py;
docs/format.md, Nomic BERT) from the checkpoint's names onto vLLM's: the word and token type
tables by padded rows (both VocabParallelEmbedding); emb_ln whole as embeddings.LayerNorm;
attn.Wqkv [q; k; v] (and its bias) as attn.qkv_proj, the rank's heads of each third; out_proj and
mlp.fc2 (as mlp.down_proj) by columns, their biases whole; mlp.fc12 (gate, shard 0) and mlp.fc11
(up, shard 1) merged by rows into mlp.gate_up_proj [gate_r; up_r], their biases alike; norm1 /
norm2 whole as attn_ln / mlp_ln. nomic_cfg lays GPT-2's n_* keys onto the names expected() reads.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def nomic_cfg(c):
    return dict(c, hidden_size=c["n_embd"], num_attention_heads=c["n_head"],
                num_hidden_layers=c["n_layer"], intermediate_size=c["n_inner"],
                num_key_value_heads=c["n_head"], tie_word_embeddings=False)


def nomic(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    rows = src[name][1].shape[0]
    cols = src[name][1].shape[1] if src[name][1].ndim > 1 else 1
    hid, I = cfg["hidden_size"], cfg["intermediate_size"]
    if name == "embeddings.word_embeddings.weight":
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
    elif name == "embeddings.token_type_embeddings.weight":  # a rank past the 2 rows: zeros
        add(name, [pc + (name,) if pc[0] == "zero" else pc
                   for pc in vocab_rows(name, rows, T, r, pad)])
    elif name.startswith("emb_ln."):
        add("embeddings.LayerNorm." + name.split(".")[-1], pieces_rows(name, 0, rows))
    elif re.search(r"\.attn\.Wqkv\.(weight|bias)$", name):
        hl = hid // T
        add(name.replace("attn.Wqkv", "attn.qkv_proj"),
            [pc for p in range(3) for pc in pieces_rows(name, p * hid + r * hl, hl)])
    elif name.endswith(".attn.out_proj.weight"):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"\.mlp\.fc12\.(weight|bias)$", name):
        il = I // T
        up = name.replace("mlp.fc12", "mlp.fc11")
        add(name.replace("mlp.fc12", "mlp.gate_up_proj"),
            pieces_rows(name, r * il, il) + pieces_rows(up, r * il, il))
    elif re.search(r"\.mlp\.fc11\.", name):
        return  # merged with fc12 above
    elif name.endswith(".mlp.fc2.weight"):
        add(name.replace("mlp.fc2", "mlp.down_proj"), pieces_cols(name, r * cols // T, cols // T))
    else:  # the row-parallel biases, norm1 / norm2
        out = name.replace("mlp.fc2", "mlp.down_proj").replace("norm1", "attn_ln")
        add(out.replace("norm2", "mlp_ln"), pieces_rows(name, 0, rows))
