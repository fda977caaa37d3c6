"""shard_oracle_more.py — the families shard_oracle.py hands over whole by architecture
(ORACLES: architecture -> its cut, called as cut(name, src, cfg, T, r, pad, add) for every
checkpoint tensor), beside it since it reached 800 lines.

QWenLMHeadModel (vLLM's qwen.py, Qwen's first generation): shard_oracle_qwen.py.
"""
from shard_oracle_qwen import qwen

ORACLES = {"QWenLMHeadModel": qwen}
