"""mode = auto | partitioned | raw: raw serves the checkpoint's own tensors byte for
byte; auto falls back to raw (with the planner's reason) for an architecture or a
layout the planner refuses; partitioned raises the planner's error."""

import glob
import logging
import os

import pytest
import weightd

from conftest import read_safetensors_raw


def checkpoint(models, name):
    out = {}
    for p in sorted(glob.glob(os.path.join(models, name, "*.safetensors"))):
        out.update(read_safetensors_raw(p))
    return out


def raw_bytes(shard, name):
    t = shard[name]
    return bytes(t.numpy().tobytes() if hasattr(t, "numpy") else t.tobytes())


@pytest.mark.parametrize("model", ["llama", "foo"])
def test_raw_equals_checkpoint(client, server, model):
    want = checkpoint(server[1], model)
    shard = client.fetch(model, mode="raw", tp_size=2, tp_rank=1, as_torch=False)
    assert shard.mode == "raw" and shard.mode_reason == ""
    assert shard.manifest.layout_text == "raw"
    assert sorted(shard) == sorted(want)
    for name, (dtype, shape, data) in want.items():
        t = shard.manifest[name]
        assert (t.dtype, tuple(t.shape)) == (dtype, shape), name
        assert raw_bytes(shard, name) == data, name


def test_raw_subset(client, server):
    want = checkpoint(server[1], "llama")
    names = ["model.norm.weight", "model.layers.1.mlp.down_proj.weight"]
    shard = client.fetch("llama", mode="raw", include=names, as_torch=False)
    assert sorted(shard) == sorted(names)
    assert shard.manifest.layout_text == "raw,include=[%s]" % ";".join(sorted(names))
    for n in names:
        assert raw_bytes(shard, n) == want[n][2]
    with pytest.raises(weightd.Error) as e:
        client.manifest("llama", mode="raw", include=["nosuch.weight"])
    assert e.value.name == "WT_ENOTFOUND" and "nosuch.weight" in e.value.message


def test_auto_falls_back_with_reason(client, caplog):
    with caplog.at_level(logging.WARNING, logger="weightd"):
        shard = client.fetch("foo", mode="auto", tp_size=2, tp_rank=0, as_torch=False)
    assert shard.mode == "raw"
    assert shard.mode_reason.startswith("partitioned refused (WT_EUNSUPPORTED)")
    assert "FooForCausalLM" in shard.mode_reason
    assert "serving raw tensors" in caplog.text
    assert "model.layers.0.self_attn.q_proj.weight" in shard  # checkpoint names
    m = client.manifest("llama", mode="auto", tp_size=3)
    assert m.mode == "raw" and "WT_ELAYOUT" in m.mode_reason and "tp_size 3" in m.mode_reason
    m = client.manifest("llama", mode="auto", tp_size=2)
    assert m.mode == "partitioned" and m.mode_reason == ""
    assert m.layout_text.startswith("tp=2,")


def test_partitioned_fails_with_planner_message(client):
    for mode in ("partitioned", None):
        kw = {} if mode is None else {"mode": mode}
        with pytest.raises(weightd.Error) as e:
            client.manifest("foo", tp_size=2, **kw)
        assert e.value.name == "WT_EUNSUPPORTED"
        assert "architecture 'FooForCausalLM'" in e.value.message
    with pytest.raises(weightd.Error) as e:
        client.manifest("nosuch", mode="auto")
    assert e.value.name == "WT_ENOTFOUND"  # no planner refusal: no fallback
    with pytest.raises(weightd.Error) as e:
        client.manifest("llama", mode="bogus")
    assert e.value.name == "WT_EINVAL"
