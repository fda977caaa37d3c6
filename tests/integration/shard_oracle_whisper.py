"""shard_oracle_whisper.py — shard_oracle.py's cut of Whisper (vLLM's whisper.py,
WhisperForConditionalGeneration): the encoder model.encoder.* and the decoder's self_attn / fc1 /
fc2 / LayerNorms / embed_tokens / embed_positions as Voxtral's Whisper encoder (shard_oracle.py's
voxtral: q/k/v fused into qkv_proj by heads with a zero k bias, out_proj and fc2 by columns, fc1 by
rows, the rest whole, embed_tokens a plain nn.Embedding); the cross-attention encoder_attn: q_proj
and its bias by rows, k_proj / v_proj into kv_proj [k_r; v_r], its bias [zeros; v_r]; proj_out
skipped (vLLM ties it whatever the config says).
"""
import re

from shard_oracle_cut import pieces_rows


def whisper_cfg(cfg):
    """WhisperConfig's decoder keys as the language model's (tied always)."""
    return dict(cfg, hidden_size=cfg["d_model"], num_attention_heads=cfg["decoder_attention_heads"],
                num_key_value_heads=cfg["decoder_attention_heads"],
                num_hidden_layers=cfg["decoder_layers"], tie_word_embeddings=True)


def whisper(name, rows, cols, T, r, add, voxtral):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    if name.startswith("proj_out."):
        return
    m = re.match(r"(.*)\.encoder_attn\.(q|k|v)_proj\.(weight|bias)$", name)
    if m is None:
        voxtral(name, rows, cols, T, r, add)
        return
    b, part, leaf, hl = m.group(1) + ".encoder_attn.", m.group(2), m.group(3), rows // T
    if part == "q":
        add(name, pieces_rows(name, r * hl, hl))
    elif leaf == "weight" and part == "k":
        add(b + "kv_proj.weight", pieces_rows(name, r * hl, hl)
            + pieces_rows(b + "v_proj.weight", r * hl, hl))
    elif leaf == "bias":  # v's: k_proj has none, vLLM loads zeros
        add(b + "kv_proj.bias", [("zero", hl)] + pieces_rows(name, r * hl, hl))
