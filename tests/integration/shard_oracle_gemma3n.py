"""shard_oracle_gemma3n.py — shard_oracle.py's cut of Gemma 3n's language model (vLLM's
gemma3n.py, Gemma3nForCausalLM): embed_tokens and embed_tokens_per_layer by their own padded
vocabulary rows (VocabParallelEmbedding each), lm_head dropped (always tied); q / k / v and gate /
up left to shard_oracle.py's fusing pass (Llama's qkv_proj by heads, gate_up_proj [gate_r;
up_r]); o_proj, down_proj and laurel.linear_right by columns, laurel.linear_left, per_layer_model_projection and altup_(unembed_)projections.{j} by rows
(ColumnParallelLinear, gather_output); the AltUp coefficients / router, per_layer_input_gate /
per_layer_projection (ReplicatedLinear), the norms and correct_output_scale whole.
"""
import re

from shard_oracle_cut import pieces_cols, pieces_rows, vocab_rows


def gemma3n(name, rows, cols, cfg, T, r, pad, add):
    """Rank r's pieces of checkpoint tensor name added with add(runtime name, pieces)."""
    if name == "lm_head.weight":
        return
    if name == "model.embed_tokens.weight":
        add(name, vocab_rows(name, cfg["vocab_size"], T, r, pad))
        return
    if name == "model.embed_tokens_per_layer.weight":
        add(name, vocab_rows(name, cfg["vocab_size_per_layer_input"], T, r, pad))
        return
    if re.search(r"\.(self_attn\.[qkv]_proj|mlp\.(gate|up)_proj)\.weight$", name):
        return  # fused by shard_oracle.py's q/k/v and gate/up pass, as Llama's
    if re.search(r"(self_attn\.o_proj|mlp\.down_proj|laurel\.linear_right)\.weight$", name):
        add(name, pieces_cols(name, r * cols // T, cols // T))
    elif re.search(r"(laurel\.linear_left|per_layer_model_projection|"
                   r"altup_(unembed_)?projections\.\d+)\.weight$", name):
        add(name, pieces_rows(name, r * rows // T, rows // T))
    else:  # the norms, correct_output_scale, the ReplicatedLinears
        add(name, pieces_rows(name, 0, rows))
