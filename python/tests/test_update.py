"""Online updates from Python: Client.watch sees a new revision, and
Client.update_into brings an engine's tensors (allocated and filled once with
fetch_into) to it in place, moving only the changed tensors' bytes; the
result equals a full fetch of the new revision. A weightd of its own
(revalidate_ms 200) over a copy of the llama fixture, so the shared server's
models stay unchanged."""

import json
import os
import shutil
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import bin_path, need

LAYOUT = dict(tp_size=2, tp_rank=1)


@pytest.fixture(scope="module")
def upd_server():
    tmp = tempfile.mkdtemp(prefix="wt-pyupd-")
    models = os.path.join(tmp, "models")
    os.makedirs(models)
    subprocess.run([bin_path("wt-mkckpt"), "--family", "llama", "--seed", "3", "--out",
                    os.path.join(models, "llama")], check=True, stdout=subprocess.DEVNULL)
    ready = os.path.join(tmp, "ready")
    log = open(os.path.join(tmp, "weightd.log"), "w")
    proc = subprocess.Popen([bin_path("weightd"), "--listen", "tcp://127.0.0.1:0",
                             "--models-dir", models, "--cache-dir", os.path.join(tmp, "cache"),
                             "--chunk-bytes", str(64 * 1024), "--revalidate-ms", "200",
                             "--log-level", "warning", "--ready-file", ready],
                            stdout=log, stderr=log)
    try:
        for _ in range(300):
            if os.path.exists(ready) and os.path.getsize(ready) > 0:
                break
            assert proc.poll() is None, open(log.name).read()
            time.sleep(0.05)
        yield open(ready).read().split()[0], os.path.join(models, "llama")
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def change_two_tensors(model_dir):
    """Flip the lowest mantissa bit of every BF16 value of one gate_proj and one
    o_proj tensor in the first shard file (rewritten: a new inode). Returns
    their checkpoint names."""
    p = os.path.join(model_dir, "model-00001-of-00002.safetensors")
    b = bytearray(open(p, "rb").read())
    (n,) = struct.unpack("<Q", b[:8])
    h = json.loads(b[8:8 + n])
    names = sorted(k for k in h if k != "__metadata__")
    picked = [k for k in names if k.endswith("mlp.gate_proj.weight")][:1] + \
             [k for k in names if k.endswith("self_attn.o_proj.weight")][:1]
    assert len(picked) == 2, names
    for k in picked:
        lo, hi = h[k]["data_offsets"]
        for i in range(8 + n + lo, 8 + n + hi, 2):
            b[i] ^= 1
    with open(p + ".new", "wb") as f:
        f.write(b)
    os.rename(p + ".new", p)
    return picked


def raw(t):
    """The tensor's bytes (bit-exact comparisons, NaN-safe)."""
    return t.contiguous().view(-1).view(__import__("torch").uint8).numpy().tobytes()


def test_watch_and_update_into(upd_server):
    torch = need("torch")
    import weightd

    url, model_dir = upd_server
    with weightd.Client(url) as c:
        old = c.manifest("llama", **LAYOUT)
        engine = {t.name: torch.empty(t.shape, dtype=weightd.torch_dtype(t.dtype))
                  for t in old.tensors}
        c.fetch_into(engine, old)
        before = {k: raw(v) for k, v in engine.items()}
        ptrs = {k: v.data_ptr() for k, v in engine.items()}

        assert c.watch("llama")[0] == old.revision  # no known revision: the current one
        rev, changed = c.watch("llama", old.revision)  # timeout 0: answer at once
        assert rev == old.revision and not changed
        picked = change_two_tensors(model_dir)
        rev1, changed = c.watch("llama", old.revision, timeout_ms=20000)
        assert changed and rev1 != old.revision, (rev1, picked)
        new = c.manifest("llama", **LAYOUT)
        assert new.revision == rev1

        old_hash = {t.name: t.hash for t in old.tensors}
        want = [t for t in new.tensors if t.hash != old_hash[t.name]]
        want_bytes = sum(t.nbytes for t in want)
        assert 0 < want_bytes < new.total_bytes

        seen = []
        rep = c.update_into(engine, old, new, progress=lambda d, t: seen.append((d, t)))
        print("update report:", {k: v for k, v in rep.items() if k != "changed"})
        assert rep["revision_before"] == old.revision and rep["revision_after"] == rev1
        assert rep["tensors_updated"] == len(want)
        assert sorted(rep["changed"]) == sorted(t.name for t in want)
        assert rep["bytes_updated"] == want_bytes == rep["fetched_bytes"]
        assert rep["bytes_total"] == new.total_bytes
        assert seen and seen[-1] == (want_bytes, want_bytes)  # only the delta moved

        # in place, unchanged tensors untouched, the result equals a full fetch
        assert {k: v.data_ptr() for k, v in engine.items()} == ptrs
        full = c.fetch(new)
        for t in new.tensors:
            assert raw(engine[t.name]) == raw(full[t.name]), t.name
            if t.hash == old_hash[t.name]:
                assert raw(engine[t.name]) == before[t.name], t.name
            else:
                assert raw(engine[t.name]) != before[t.name], t.name

        # nothing changed: nothing moves
        rep = c.update_into(engine, new, new)
        assert rep["tensors_updated"] == 0 and rep["bytes_updated"] == 0

        # another layout: refused (full reload), destinations untouched
        other = c.manifest("llama", tp_size=1)
        snap = {k: raw(v) for k, v in engine.items()}
        with pytest.raises(weightd.MismatchError) as ei:  # tp=1 shapes differ
            c.update_into(engine, new, other, strict=False)
        assert "shape" in str(ei.value)
        assert {k: raw(v) for k, v in engine.items()} == snap


def test_update_into_refuses_a_changed_layout(upd_server):
    need("torch")
    import weightd

    url, _ = upd_server
    with weightd.Client(url) as c:
        r0 = c.manifest("llama", tp_size=2, tp_rank=0)
        r1 = c.manifest("llama", tp_size=2, tp_rank=1)
        engine = {t.name: __import__("torch").empty(t.shape, dtype=weightd.torch_dtype(t.dtype))
                  for t in r1.tensors}
        with pytest.raises(weightd.Error) as ei:
            c.update_into(engine, r0, r1)  # same shapes, another rank: full reload
        assert ei.value.code == 13, ei.value
        assert "full reload" in str(ei.value)
        with pytest.raises(TypeError):
            c.update_into(engine, "llama", r1)
