"""Online updates from Python: Client.watch sees a new revision, and
Client.update_into brings an engine's tensors (allocated and filled once with
fetch_into) to it in place, moving only the changed tensors' bytes; the
result equals a full fetch of the new revision. A weightd of its own
(revalidate_ms 200) over a copy of the llama fixture, so the shared server's
models stay unchanged."""

import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import bin_path, need

LAYOUT = dict(tp_size=2, tp_rank=1)
UPD_PROC = []  # upd_server's weightd process (test_update_into_interrupted stops it)


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
    UPD_PROC[:] = [proc]
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


class _Stop(Exception):
    pass


def _stop(done, total):
    raise _Stop("stopped by the test after the first verified chunk")


def test_update_into_refuses_what_a_failed_update_left_stale(upd_server):
    """An update_into that fails half-way leaves the tensors it began with
    bytes of two revisions (exception .partial names them); a later update_into
    that does not rewrite them (nothing changed) is WT_ELAYOUT, before anything
    moves, however the engine's dict holds that storage; a full fetch_into, or
    an update that rewrites them, clears them (C: test_update_stale.c)."""
    torch = need("torch")
    import weightd

    url, model_dir = upd_server
    with weightd.Client(url) as c:
        a = c.manifest("llama", **LAYOUT)
        engine = {t.name: torch.empty(t.shape, dtype=weightd.torch_dtype(t.dtype))
                  for t in a.tensors}
        c.fetch_into(engine, a)
        at_a = {k: raw(v) for k, v in engine.items()}
        c.update_into(engine, a, a)  # nothing stale: nothing to do

        change_two_tensors(model_dir)
        rev, changed = c.watch("llama", a.revision, timeout_ms=20000)
        assert changed
        b = c.manifest("llama", **LAYOUT)
        assert b.revision == rev
        full_b = {k: raw(v) for k, v in c.fetch(b).items()}

        a_hash = {x.name: x.hash for x in a.tensors}
        t = [x.name for x in b.tensors if x.hash != a_hash[x.name]][0]
        with pytest.raises(_Stop) as stopped:
            c.update_into(engine, a, b, progress=_stop)
        assert at_a[t] != full_b[t]
        assert raw(engine[t]) not in (at_a[t], full_b[t])  # a mix of both revisions

        snap = {k: raw(v) for k, v in engine.items()}
        views = {k: v.view(v.shape) for k, v in engine.items()}  # a rebuilt dict, same storage
        for tensors in (engine, views):
            with pytest.raises(weightd.Error) as ei:
                c.update_into(tensors, a, a)  # A->A would report success over the mix
            assert ei.value.code == 13, ei.value
            assert "'%s'" % t in str(ei.value) and "fetch_into" in str(ei.value)
        assert {k: raw(v) for k, v in engine.items()} == snap  # nothing written
        # one chunk was delivered, into the first changed tensor: the engine is told
        assert stopped.value.partial == [t]
        assert t in "".join(stopped.value.__notes__)

        c.fetch_into(engine, b)  # in full: clears it
        rep = c.update_into(engine, b, b)
        assert rep["tensors_updated"] == 0
        assert {k: raw(v) for k, v in engine.items()} == full_b

        # an update that rewrites the stale tensor clears it too
        change_two_tensors(model_dir)  # flips the bits back: a third revision
        rev, changed = c.watch("llama", b.revision, timeout_ms=20000)
        assert changed
        c3 = c.manifest("llama", **LAYOUT)
        with pytest.raises(_Stop) as ei:
            c.update_into(engine, b, c3, progress=_stop)
        t = ei.value.partial[0]
        with pytest.raises(weightd.Error) as ei:
            c.update_into(engine, b, b)
        assert ei.value.code == 13 and "'%s'" % t in str(ei.value), ei.value
        c.update_into(engine, b, c3)  # rewrites every tensor of the delta
        c.update_into(engine, c3, c3)
        full_c = c.fetch(c3)
        for k, v in engine.items():
            assert raw(v) == raw(full_c[k]), k

        # a fetch_into stopped half-way: what it touched is stale the same way
        def cancel(done, total):
            raise weightd.Cancelled(24, "WT_ECANCELED", "stopped by the test")

        with pytest.raises(weightd.Cancelled) as ei:
            c.fetch_into(engine, c3, progress=cancel)
        assert ei.value.partial and "partial bytes" in str(ei.value), ei.value
        with pytest.raises(weightd.Error) as e2:
            c.update_into(engine, c3, c3)
        assert e2.value.code == 13 and "'%s'" % ei.value.partial[0] in str(e2.value)
        c.fetch_into(engine, c3)
        c.update_into(engine, c3, c3)


def proc_state(pid):
    """The process's state letter from /proc (T: stopped), or '?'."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


class _Alarm(Exception):
    pass


def test_update_into_interrupted_on_a_stopped_server(upd_server):
    """An exception raised by a signal handler (as Ctrl-C's KeyboardInterrupt)
    while update_into waits on a server that stopped answering (SIGSTOP after
    the update's first verified chunk; window 1, request timeout 20 s): it
    propagates within about 0.1 s of the signal, with .partial naming what
    the update began (wt_fetch_opts.cancel, libweights 1.8; before, Python saw
    the signal only when the C call returned: the request timeout and its
    retries). Runs last: it leaves the model at a new revision."""
    torch = need("torch")
    import weightd

    url, model_dir = upd_server
    proc = UPD_PROC[0]
    with weightd.Client(url, window=1, request_timeout_ms=20000) as c:
        a = c.manifest("llama", **LAYOUT)
        engine = {t.name: torch.empty(t.shape, dtype=weightd.torch_dtype(t.dtype))
                  for t in a.tensors}
        c.fetch_into(engine, a)
        change_two_tensors(model_dir)
        rev, changed = c.watch("llama", a.revision, timeout_ms=20000)
        assert changed
        b = c.manifest("llama", **LAYOUT)
        a_hash = {t.name: t.hash for t in a.tensors}
        delta = [t for t in b.tensors if t.hash != a_hash[t.name]]
        # the request after the first chunk's may be answered before the stop
        assert sum(t.n_chunks for t in delta) >= 3, [t.n_chunks for t in delta]

        calls = []  # (done, total, s since t0): in the message if the update ends

        def stop_server(done, total):  # at the first verified chunk (and again: a no-op)
            calls.append((done, total, round(time.monotonic() - t0, 3)))
            os.kill(proc.pid, signal.SIGSTOP)
            # the stop lands when the server's threads next run: on a loaded machine
            # a thread already serving answered the rest of a 1 ms update first
            # (CI, 2026-12-05: state R after five callbacks); wait until it is stopped
            until = time.monotonic() + 5.0
            while proc_state(proc.pid) != "T" and time.monotonic() < until:
                time.sleep(0.001)

        def on_alarm(signum, frame):
            raise _Alarm()

        old = signal.signal(signal.SIGALRM, on_alarm)
        t0 = time.monotonic()
        try:
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            with pytest.raises(_Alarm) as ei:
                rep = c.update_into(engine, a, b, progress=stop_server)
                # not reached unless the update ended on a stopped server:
                # say what it saw, so that a rare failure can be explained
                signal.setitimer(signal.ITIMER_REAL, 0)
                pytest.fail("update_into ended on a stopped server after %.3f s: "
                            "progress %r, server state %s, report %r" % (
                                time.monotonic() - t0, calls, proc_state(proc.pid), rep))
            took = time.monotonic() - t0
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            os.kill(proc.pid, signal.SIGCONT)
        print("update_into interrupted on a stopped server: %.3f s (alarm at 1 s); "
              "progress %r" % (took, calls))
        assert took < 3.0
        assert ei.value.partial, "the update began a tensor: .partial names it"
        c.fetch_into(engine, b)  # a full fetch clears what the update left stale
        c.update_into(engine, b, b)
