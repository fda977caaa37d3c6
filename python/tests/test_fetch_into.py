"""Client.fetch_into(): a rank written straight into tensors the engine
allocated (torch CPU, numpy, CUDA where a device exists), checked against the
shard first with one error listing every mismatch."""

import threading

import numpy as np
import pytest

import weightd
from conftest import need

LAYOUT = dict(tp_size=2, tp_rank=0)


def alloc_torch(torch, manifest, device="cpu"):
    """What an engine does: its own tensors, garbage-filled, before loading."""
    out = {}
    for t in manifest.tensors:
        dt = {"BF16": torch.bfloat16, "F32": torch.float32, "F8_E4M3": torch.uint8}[t.dtype]
        x = torch.empty(t.shape, dtype=dt, device=device)
        if x.numel():
            x.view(-1).view(torch.uint8).fill_(0xA5)
        out[t.name] = x
    return out


def test_fetch_into_torch_host(client):
    torch = need("torch")
    m = client.manifest("llama", **LAYOUT)
    dst = alloc_torch(torch, m)
    ptrs = {k: v.data_ptr() for k, v in dst.items()}
    calls = []
    stats = client.fetch_into(dst, m, progress=lambda d, t: calls.append(d))
    assert stats["bytes"] == m.total_bytes and calls[-1] == m.total_bytes
    ref = client.fetch(m)
    for name, t in dst.items():
        assert t.data_ptr() == ptrs[name]  # written in place, no new allocation
        assert torch.equal(t, ref[name]), name


def _spy_sinks(monkeypatch):
    """The IntoSinks fetch_into makes, to count chunks received in place."""
    import weightd.into as into

    made, init = [], into.IntoSink.__init__

    def spy(self, *a, **k):
        init(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(into.IntoSink, "__init__", spy)
    return made


def test_fetch_into_stream_in_place(url, monkeypatch):
    """Over the bulk stream (stream=1), every chunk of host destinations
    (torch and numpy) is received straight into them (wt_sink_ops.recv_buf),
    with the bytes of a plain fetch; over messages none is."""
    torch = need("torch")
    made = _spy_sinks(monkeypatch)
    with weightd.Client(url) as plain, weightd.Client(url, stream=1) as c:
        m = c.manifest("llama", **LAYOUT)
        ref = plain.fetch(m)
        dst = alloc_torch(torch, m)
        c.fetch_into(dst, m)
        assert made[-1].in_place == m.n_chunks > len(m.tensors)
        for name, t in dst.items():
            assert torch.equal(t, ref[name]), name
        refnp = plain.fetch(m, as_torch=False)
        npd = {t.name: np.full(t.shape, 0x5A, dtype=refnp[t.name].dtype) for t in m.tensors}
        c.fetch_into(npd, m)
        assert made[-1].in_place == m.n_chunks
        for name, a in npd.items():
            assert a.tobytes() == refnp[name].tobytes(), name
        plain.fetch_into(alloc_torch(torch, m), m)
        assert made[-1].in_place == 0  # messages: write() copies


def test_fetch_into_fp8_and_numpy(client):
    m = client.manifest("llama", quant="fp8-channel", **LAYOUT)
    ref = client.fetch(m, as_torch=False)
    dst = {t.name: np.full(t.shape, 0x5A, dtype=ref[t.name].dtype) for t in m.tensors}
    client.fetch_into(dst, m)
    assert any(a.dtype == np.uint8 for a in dst.values())  # F8_E4M3 as raw bytes
    for name, a in dst.items():
        assert a.tobytes() == ref[name].tobytes(), name
    torch = need("torch")
    tdst = alloc_torch(torch, m)
    client.fetch_into(tdst, m)
    for name, t in tdst.items():
        assert t.view(-1).view(torch.uint8).numpy().tobytes() == ref[name].tobytes(), name


def test_fetch_into_mismatches_listed_before_fetching(client):
    torch = need("torch")
    m = client.manifest("llama", **LAYOUT)
    dst = alloc_torch(torch, m)
    dst["model.norm.weight"] = torch.zeros(256, dtype=torch.float32)  # dtype
    dst["lm_head.weight"] = torch.zeros(500, 256, dtype=torch.bfloat16)  # shape
    del dst["model.embed_tokens.weight"]  # missing
    dst["model.layers.9.extra"] = torch.zeros(1)  # not in the shard
    o = m["model.layers.0.self_attn.o_proj.weight"].shape
    dst["model.layers.0.self_attn.o_proj.weight"] = torch.zeros(
        o[1], o[0], dtype=torch.bfloat16).t()  # right shape, not contiguous
    dst["model.layers.1.input_layernorm.weight"] = [0.0] * 256  # not a tensor
    before = {k: v.clone() for k, v in dst.items() if isinstance(v, torch.Tensor)}
    calls = []
    with pytest.raises(weightd.MismatchError) as e:
        client.fetch_into(dst, m, progress=lambda d, t: calls.append(d))
    lines = e.value.mismatches
    assert len(lines) == 6, lines
    text = str(e.value)
    for frag in ("'model.norm.weight': dtype torch.float32, the shard has BF16",
                 "'lm_head.weight': shape [500, 256], the shard has [512, 256]",
                 "'model.embed_tokens.weight': missing",
                 "'model.layers.9.extra': not in the shard",
                 "'model.layers.0.self_attn.o_proj.weight': not contiguous",
                 "'model.layers.1.input_layernorm.weight': a list, want a torch.Tensor"):
        assert frag in text, text
    assert calls == []  # nothing fetched
    for k, v in before.items():
        assert torch.equal(dst[k], v)  # nothing written
    # strict=False ignores the extra name only
    with pytest.raises(weightd.MismatchError) as e:
        client.fetch_into(dst, m, strict=False)
    assert len(e.value.mismatches) == 5


def test_fetch_into_cancel(client):
    torch = need("torch")
    m = client.manifest("llama", **LAYOUT)
    dst = alloc_torch(torch, m)
    n = []

    def stop(d, t):
        n.append(d)
        if len(n) == 2:
            raise weightd.Cancelled(24, "WT_ECANCELED", "stop")

    with pytest.raises(weightd.Cancelled):
        client.fetch_into(dst, m, progress=stop)
    started, go_on = threading.Event(), threading.Event()

    def slow(d, t):
        started.set()
        go_on.wait(10)

    f = client.fetch_into_async(dst, m, progress=slow)
    assert started.wait(10)
    f.cancel()  # from this thread, while the fetch runs on its own
    go_on.set()
    with pytest.raises(weightd.Cancelled):
        f.result(30)
    assert 0 < f.bytes_done < f.bytes_total


def test_fetch_into_cuda(client):
    torch = need("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for torch")
    m = client.manifest("llama", **LAYOUT)
    dst = alloc_torch(torch, m, device="cuda")
    ptrs = {k: v.data_ptr() for k, v in dst.items()}
    before = torch.cuda.memory_allocated()
    client.fetch_into(dst, m)
    assert torch.cuda.memory_allocated() == before  # no second device allocation
    ref = client.fetch(m)
    for name, t in dst.items():
        assert t.data_ptr() == ptrs[name]
        assert torch.equal(t.cpu(), ref[name]), name
