"""The TP/EP shards of checkpoints written by transformers, fetched with
weightd.Client, reassembled (reassemble.py) and loaded back into a fresh
transformers model with load_state_dict(strict=True): every weight and the
logits must equal the original model's bit for bit. A tied model's shards
carry no lm_head.weight: the fresh model ties it to the embedding."""

import json
import os

import pytest

from conftest import hf_model, need
from reassemble import reassemble

LAYOUTS = {
    "hf-llama": [(1, 1), (2, 1), (4, 1)],  # TP 4 > KV 2: kv heads replicated
    "hf-mixtral": [(2, 1), (1, 2), (2, 2), (1, 3)],  # EP 3: experts 2, 1, 1
    "hf-gemma": [(1, 1), (2, 1), (4, 1)],  # KV 1: kv heads replicated at TP 2 and 4
    "hf-qwen2": [(1, 1), (2, 1), (4, 1)],  # q/k/v biases fused like the weights
    "hf-starcoder2": [(1, 1), (2, 1), (4, 1)],  # TP 4 > KV 2; c_proj bias replicated
}


@pytest.mark.parametrize("model,T,P", [(m, t, p) for m, ls in LAYOUTS.items() for t, p in ls])
def test_roundtrip_logits(client, server, model, T, P):
    torch = need("torch")
    orig = hf_model(model)
    with open(os.path.join(server[1], model, "config.json")) as f:
        cfg = json.load(f)
    shards = {}
    for e in range(P):
        for r in range(T):
            s = client.fetch(model, tp_size=T, tp_rank=r, ep_size=P, ep_rank=e)
            for name, t in s.items():
                assert t.data_ptr() == s.address(name)  # zero copy all the way
            shards[(r, e)] = s
            assert s.manifest.tied_lm_head == orig.config.tie_word_embeddings
    state = reassemble(cfg, T, P, shards)
    ref = orig.state_dict()
    if orig.config.tie_word_embeddings:
        assert "lm_head.weight" not in state
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    assert sorted(state) == sorted(ref)
    for name, t in ref.items():
        assert state[name].dtype == t.dtype and torch.equal(state[name], t), name

    fresh = type(orig)(orig.config).to(next(orig.parameters()).dtype).eval()
    fresh.load_state_dict(state, strict=True)
    ids = torch.tensor([[1, 17, 42, 99, 3, 200, 249, 0, 7, 128]])
    with torch.no_grad():
        want = orig(ids).logits
        got = fresh(ids).logits
    assert got.dtype == want.dtype and torch.equal(got, want)
    assert got.abs().sum() > 0


def test_reassembly_is_checked(client, server):
    """The comparison above can fail: a wrong reassembly (k and v swapped in
    the fused qkv) is caught by the weights and by the logits."""
    torch = need("torch")
    orig = hf_model("hf-llama")
    with open(os.path.join(server[1], "hf-llama", "config.json")) as f:
        cfg = json.load(f)
    shards = {(r, 0): dict(client.fetch("hf-llama", tp_size=2, tp_rank=r)) for r in range(2)}
    state = reassemble(cfg, 2, 1, shards)
    k = "model.layers.0.self_attn.k_proj.weight"
    v = "model.layers.0.self_attn.v_proj.weight"
    state[k], state[v] = state[v], state[k]
    assert not torch.equal(state[k], orig.state_dict()[k])
    fresh = type(orig)(orig.config).to(torch.bfloat16).eval()
    fresh.load_state_dict(state, strict=True)
    ids = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        assert not torch.equal(fresh(ids).logits, orig(ids).logits)
