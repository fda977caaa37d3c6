"""shard_oracle_phi3v.py — shard_oracle.py's cut of Phi3VForCausalLM (vLLM's phi3v.py) under the
checkpoint's names: the language model (model.*, lm_head.weight) left to expected()'s common
rules (Phi-3's: qkv_proj / gate_up_proj fused in the checkpoint and re-cut per rank, o_proj /
down_proj by columns, the vocabulary by padded rows); model.vision_embed_tokens.wte.weight, when
present, by padded vocabulary rows (vLLM's own VocabParallelEmbedding); the CLIP tower
model.vision_embed_tokens.img_processor.vision_model.* cut as CLIPModel's vision tower
(shard_oracle_clip.py: q / k / v fused into qkv_proj by heads, out_proj / fc2 by columns, fc1 by
rows) at vLLM's hard-coded width 1024, built up to img_processor.layer_idx (24 + idx + 1 blocks
when negative, idx + 1 otherwise): the deeper blocks dropped, post_layernorm dropped unless all 24
are built; glb_GN, sub_GN and img_projection.{0,2} (plain modules) whole on every rank.
"""
import re

from shard_oracle_clip import clip
from shard_oracle_cut import COMMON, pieces_rows, vocab_rows

E = "model.vision_embed_tokens."
VT = E + "img_processor.vision_model."


def phi3v(name, src, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces); COMMON
    for the language model's."""
    if not name.startswith(E):
        return COMMON
    if name == E + "wte.weight":
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
        return None
    if not name.startswith(VT):  # glb_GN, sub_GN, img_projection: whole
        add(name, pieces_rows(name, 0, src[name][1].shape[0]))
        return None
    idx = cfg["img_processor"].get("layer_idx", -2)
    built = 24 + idx + 1 if idx < 0 else idx + 1
    m = re.match(re.escape(VT) + r"encoder\.layers\.(\d+)\.", name)
    if (m and int(m.group(1)) >= built) or \
            (name.startswith(VT + "post_layernorm.") and built < 24):
        return None  # not built by vLLM
    clip(name, src, dict(cfg, vision_config={"hidden_size": 1024}), T, r, pad, add)
    return None
