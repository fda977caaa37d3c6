"""Client.iter_tensors: one rank streamed as (name, tensor) in manifest order,
each verified before it is yielded, with bounded memory held for the
consumer, dropped tensors freed, early exit cancelling the fetch thread, and
failures mid-fetch (a corrupted chunk, the server gone) raised by next()."""

import gc
import os
import subprocess
import sys
import tempfile
import time
import weakref

import numpy as np
import pytest

import weightd
from conftest import bin_path, need, start_weightd, stop_weightd

LAYOUTS = [dict(tp_size=2, tp_rank=0), dict(tp_size=2, tp_rank=1),
           dict(tp_size=2, tp_rank=0, quant="fp8-block"),
           dict(tp_size=2, tp_rank=1, quant="fp8-block")]


def raw(t):
    """The bytes of a numpy array or torch tensor (any dtype)."""
    if isinstance(t, np.ndarray):
        return t.tobytes()
    import torch

    return t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""


def wait_until(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def wait_quiet(counter, quiet=0.5, timeout=10.0):
    """Wait until counter() stopped changing for quiet seconds."""
    end = time.monotonic() + timeout
    last, since = counter(), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.02)
        now = counter()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return now
    return counter()


@pytest.mark.parametrize("as_torch", [True, False])
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda d: "-".join(map(str, d.values())))
def test_stream_equals_fetch(client, layout, as_torch):
    """Every rank of TP=2 (BF16 and fp8-block): the same names in manifest
    order, dtypes, shapes and bytes as client.fetch."""
    if as_torch:
        need("torch")
    want = client.fetch("llama", as_torch=as_torch, **layout)
    order = [t.name for t in want.manifest.tensors]
    got = list(client.iter_tensors("llama", as_torch=as_torch, max_bytes=1 << 20, **layout))
    assert [n for n, _ in got] == order
    if "quant" in layout:
        assert any(want.manifest[n].dtype == "F8_E4M3" for n in order)
    for name, t in got:
        w = want[name]
        assert type(t) is type(w) and t.dtype == w.dtype and tuple(t.shape) == tuple(w.shape)
        assert raw(t) == raw(w), name


def _spy_writes(monkeypatch):
    """(tensor, offset, address) of every chunk libweights hands write()."""
    from weightd import stream

    seen, copy = [], stream._StreamSink._copy

    def spy(self, i, off, data, n):
        seen.append((i, off, data))
        return copy(self, i, off, data, n)

    monkeypatch.setattr(stream._StreamSink, "_copy", spy)
    return seen


def test_stream_receives_in_place(url, monkeypatch):
    """stream=1 (chunks on the server's bulk stream): with room for buffers
    ahead, every chunk is received straight into the memory of the array
    that is then yielded (write() is handed that very address, nothing is
    copied); the bytes equal a fetch's. With no room ahead (max_bytes=1) only
    the later chunks of a tensor being received land in place, the bound
    holds; over messages every chunk is copied."""
    lay = dict(tp_size=2, tp_rank=1, quant="fp8-block")
    seen = _spy_writes(monkeypatch)
    with weightd.Client(url) as plain, weightd.Client(url, stream=1) as c:
        m = c.manifest("llama", **lay)
        want = plain.fetch(m, as_torch=False)
        s = c.iter_tensors(m, as_torch=False, max_bytes=m.total_bytes)
        got = list(s)
        assert [n for n, _ in got] == list(want)
        for name, a in got:
            assert a.tobytes() == want[name].tobytes(), name
        assert s.in_place_chunks == m.n_chunks > len(m.tensors) and s.copied_chunks == 0
        addr = [a.ctypes.data for _, a in got]
        assert len(seen) == m.n_chunks
        assert all(data == addr[i] + off for i, off, data in seen)

        largest = max(t.nbytes for t in m.tensors)
        s = c.iter_tensors(m, as_torch=False, max_bytes=1)
        assert [a.tobytes() for _, a in s] == [a.tobytes() for a in want.values()]
        assert 0 < s.in_place_chunks < m.n_chunks
        assert s.in_place_chunks + s.copied_chunks == m.n_chunks
        assert s.peak_held_bytes == largest  # one at a time, as without the stream

        s = plain.iter_tensors(m, as_torch=False, max_bytes=m.total_bytes)
        assert len(list(s)) == len(m.tensors)
        assert s.in_place_chunks == 0 and s.copied_chunks == m.n_chunks


def test_memory_bound_and_back_pressure(client):
    """A consumer that stops after the first tensor: the fetch thread stops
    too (the bytes it verified stay below the shard's) with at most max_bytes
    held; the rest then streams, never over the bound."""
    m = client.manifest("llama", tp_size=2, tp_rank=1)
    largest = max(t.nbytes for t in m.tensors)
    cap = 2 * largest
    assert m.total_bytes > 3 * cap  # the bound must matter
    done = [0]
    s = client.iter_tensors(m, max_bytes=cap, as_torch=False,
                            progress=lambda d, total: done.__setitem__(0, d))
    name, first = next(s)
    assert name == m.tensors[0].name
    stalled_at = wait_quiet(lambda: done[0])
    assert 0 < stalled_at < m.total_bytes, "the fetch did not wait for the consumer"
    assert s._thread.is_alive()
    assert 0 < s.held_bytes <= cap
    rest = [n for n, _ in s]
    assert [name] + rest == [t.name for t in m.tensors]
    assert done[0] == m.total_bytes
    assert largest <= s.peak_held_bytes <= cap
    assert s.held_bytes == 0


def test_tensor_larger_than_max_bytes_goes_alone(client):
    m = client.manifest("llama", tp_size=2, tp_rank=0)
    s = client.iter_tensors(m, max_bytes=1, as_torch=False)
    sizes = {n: a.nbytes for n, a in s}
    assert list(sizes) == [t.name for t in m.tensors]
    assert s.peak_held_bytes == max(t.nbytes for t in m.tensors)  # one at a time


def test_dropped_tensors_are_freed(client):
    """A yielded tensor is the consumer's: dropped, its buffer goes (live_bytes
    counts the stream's buffers still alive anywhere); kept, it stays."""
    torch = need("torch")
    m = client.manifest("llama", tp_size=2, tp_rank=1)
    largest = max(t.nbytes for t in m.tensors)
    s = client.iter_tensors(m, max_bytes=2 * largest)
    refs = []
    for name, t in s:
        assert isinstance(t, torch.Tensor)
        refs.append(weakref.ref(t))
        # the consumer's one, plus what the stream holds for it
        assert s.live_bytes <= 2 * largest + m[name].nbytes
        del t
    gc.collect()
    assert s.live_bytes == 0
    assert all(r() is None for r in refs)

    s = client.iter_tensors(m, max_bytes=2 * largest)
    kept = dict(s)
    gc.collect()
    assert s.live_bytes == m.total_bytes  # everything the consumer kept
    kept.popitem()
    kept.popitem()
    gc.collect()
    assert 0 < s.live_bytes < m.total_bytes
    del kept
    gc.collect()
    assert s.live_bytes == 0


@pytest.mark.parametrize("how", ["break", "close", "with", "gc"])
def test_early_exit_cancels(url, how):
    """Leaving the loop early ends the fetch thread within a second, however
    the stream goes; the client is free again (close() is not WT_EBUSY)."""
    c = weightd.Client(url)
    m = c.manifest("llama", tp_size=2, tp_rank=1)
    cap = max(t.nbytes for t in m.tensors)
    done = [0]
    s = c.iter_tensors(m, max_bytes=cap, as_torch=False,
                       progress=lambda d, total: done.__setitem__(0, d))
    thread = s._thread
    wait_quiet(lambda: s.held_bytes)  # the fetch waits for room
    assert thread.is_alive()
    t0 = time.monotonic()
    if how == "break":
        for _name, _t in s:
            break
        del s
    elif how == "close":
        next(s)
        s.close()
        with pytest.raises(StopIteration):
            next(s)
    elif how == "with":
        with s:
            next(s)
    else:
        s.cycle = s  # only the cycle collector frees it
        del s
        gc.collect()
    # close() (and so the with-block, del and gc) returns once the thread ended
    assert not thread.is_alive(), "fetch thread still running after %s" % how
    assert time.monotonic() - t0 < 1.0
    assert 0 < done[0] < m.total_bytes  # stopped, not run to the end
    c.close()


def test_exception_in_the_loop_then_client_close(url):
    """An engine's load_weights raising inside the loop: its traceback keeps
    the stream referenced, and the with-block's close() must neither fail
    with WT_EBUSY (hiding the engine's error) nor leave the thread running."""
    with pytest.raises(KeyError, match="no such parameter") as e:
        with weightd.Client(url) as c:
            s = c.iter_tensors("llama", max_bytes=1, as_torch=False)
            thread = s._thread
            for name, _t in s:
                raise KeyError("no such parameter: " + name)
    assert e.value.__context__ is None
    assert not thread.is_alive()


def test_interpreter_exit_with_stream_open(url):
    """A stream still held at exit (its fetch waiting for room) does not
    hang the interpreter, and its fetch is cancelled, the thread ended,
    before the last exit handler (registered first, so it runs last)."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('alive at exit', s._thread.is_alive()))\n"
            "import weightd\n"
            "c = weightd.Client(sys.argv[1])\n"
            "s = c.iter_tensors('llama', max_bytes=1, as_torch=False)\n"
            "print(next(s)[0], flush=True)\n")
    pkg_root = os.path.dirname(os.path.dirname(weightd.__file__))
    path = os.pathsep.join(p for p in (pkg_root, os.environ.get("PYTHONPATH")) if p)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True,
                       timeout=30, env=dict(os.environ, PYTHONPATH=path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n") == ["lm_head.weight", "alive at exit False", ""], r.stdout
    assert time.monotonic() - t0 < 15


@pytest.fixture(scope="module")
def faulty(server):
    """A wt-faultyd over the same models that corrupts chunk reply #8 once."""
    tmp = tempfile.mkdtemp(prefix="wt-pytest-faulty-")
    proc, furl, log = start_weightd(tmp, server[1], "--chunk-bytes", str(64 * 1024),
                                    argv0=[bin_path("tests/tools/wt-faultyd"),
                                           "--corrupt-chunk", "8"])
    try:
        yield furl
    finally:
        stop_weightd(proc, log)


def test_corrupted_chunk_mid_fetch(faulty):
    """WT_EHASH from next() at the tensor whose chunk came corrupted; every
    tensor yielded before was whole and verified, and nothing after."""
    with weightd.Client(faulty, window=1) as c:  # one chunk at a time: reply #8 = chunk 7
        m = c.manifest("llama", tp_size=2, tp_rank=1)
        first_chunk, bad = 0, None
        for t in m.tensors:
            if first_chunk + t.n_chunks > 7:
                bad = t.name
                break
            first_chunk += t.n_chunks
        order = [t.name for t in m.tensors]
        assert order.index(bad) > 0
        got = []
        with pytest.raises(weightd.Error) as e:
            for name, t in c.iter_tensors(m, as_torch=False, max_bytes=1 << 16):
                got.append((name, t.tobytes()))
        assert e.value.code == 5 and e.value.name == "WT_EHASH", e.value
        assert not isinstance(e.value, weightd.Cancelled)
        assert [n for n, _ in got] == order[:order.index(bad)]
        good = c.fetch(m, as_torch=False)  # the fault fires once
        for name, b in got:
            assert b == good[name].tobytes(), name


@pytest.fixture
def faulty_stream(server):
    """A wt-faultyd with a bulk stream that corrupts chunk reply #7 (chunk 6
    of the first fetch, in the middle of the second tensor) once."""
    tmp = tempfile.mkdtemp(prefix="wt-pytest-faulty-stream-")
    proc, furl, log = start_weightd(tmp, server[1], "--chunk-bytes", str(64 * 1024),
                                    "--stream-listen", "tcp://127.0.0.1:0",
                                    argv0=[bin_path("tests/tools/wt-faultyd"),
                                           "--corrupt-chunk", "7"])
    try:
        yield furl
    finally:
        stop_weightd(proc, log)


def _tensor_of_chunk(m, ci):
    first = 0
    for t in m.tensors:
        if first + t.n_chunks > ci:
            return t.name, ci - first
        first += t.n_chunks
    raise AssertionError("no chunk %d" % ci)


def test_corrupted_chunk_received_in_place(faulty_stream):
    """Over the bulk stream the corrupted chunk lands in its tensor's buffer
    before its hash is checked: that tensor and every later one are never
    yielded, WT_EHASH comes from next(), and the aborted fetch drops the
    buffer being received and those allocated ahead (nothing held, and
    nothing alive once the yielded tensors are dropped)."""
    with weightd.Client(faulty_stream, stream=1, window=4, connections=1) as c:
        m = c.manifest("llama", tp_size=2, tp_rank=1)
        bad, k = _tensor_of_chunk(m, 6)
        assert k > 0  # mid-tensor: earlier chunks of it were received in place
        order = [t.name for t in m.tensors]
        s = c.iter_tensors(m, as_torch=False, max_bytes=m.total_bytes)
        got = []
        with pytest.raises(weightd.Error) as e:
            for name, t in s:
                got.append((name, t))
        assert e.value.name == "WT_EHASH", e.value
        assert [n for n, _ in got] == order[:order.index(bad)]
        # the chunks of the tensors yielded were all written; of the bad
        # tensor's earlier chunks, those written before the abort (a chunk
        # checked on nng's thread may not have reached write() yet: under
        # load 5 of 6 were seen once)
        assert s.in_place_chunks >= 6 - k and s.copied_chunks == 0
        assert s.held_bytes == 0
        assert s.live_bytes == sum(t.nbytes for _, t in got)
        good = c.fetch(m, as_torch=False)  # the fault fires once
        for name, t in got:
            assert t.tobytes() == good[name].tobytes(), name
        del got, t
        gc.collect()
        assert s.live_bytes == 0


def test_corrupted_chunk_fetched_again_in_place(faulty_stream):
    """hash_refetch=1: the chunk that failed its hash is received again into
    the same place, and the stream yields exactly a fetch's bytes."""
    with weightd.Client(faulty_stream, stream=1, hash_refetch=1, window=4,
                        connections=1) as c:
        m = c.manifest("llama", tp_size=2, tp_rank=1)
        s = c.iter_tensors(m, as_torch=False, max_bytes=m.total_bytes)
        got = [(name, t.tobytes()) for name, t in s]
        assert s.in_place_chunks == m.n_chunks and s.copied_chunks == 0
        good = c.fetch(m, as_torch=False)
        assert [n for n, _ in got] == list(good)
        for name, b in got:
            assert b == good[name].tobytes(), name


def test_server_gone_mid_fetch(server):
    """The server killed while the fetch waits for the consumer: the tensors
    already verified come out, then next() raises weightd.Error (not a hang,
    not a short stream)."""
    tmp = tempfile.mkdtemp(prefix="wt-pytest-gone-")
    proc, gurl, log = start_weightd(tmp, server[1], "--chunk-bytes", str(64 * 1024))
    try:
        with weightd.Client(gurl, window=1, max_retries=1, connect_timeout_ms=300,
                            request_timeout_ms=2000, retry_budget_ms=1000,
                            backoff_initial_ms=10, backoff_max_ms=50) as c:
            m = c.manifest("llama", tp_size=2, tp_rank=1)
            s = c.iter_tensors(m, as_torch=False, max_bytes=1)
            names = [next(s)[0]]
            proc.kill()
            proc.wait()
            t0 = time.monotonic()
            with pytest.raises(weightd.Error) as e:
                for name, _ in s:
                    names.append(name)
            assert not isinstance(e.value, weightd.Cancelled), e.value
            assert time.monotonic() - t0 < 20
            assert len(names) < len(m.tensors)
            assert names == [t.name for t in m.tensors][:len(names)]
            assert not s._thread.is_alive()
            with pytest.raises(StopIteration):  # raised once, then exhausted
                next(s)
    finally:
        stop_weightd(proc, log)


def test_progress_exception_and_arguments(client):
    class Mine(Exception):
        pass

    def boom(done, total):
        raise Mine("from the callback")

    s = client.iter_tensors("llama", progress=boom, as_torch=False)
    with pytest.raises(Mine):
        list(s)
    for bad in (0, -1, 1.5, "1", True):
        with pytest.raises(weightd.Error) as e:
            client.iter_tensors("llama", max_bytes=bad)
        assert e.value.name == "WT_EINVAL" and "max_bytes=%r" % (bad,) in e.value.message
    with pytest.raises(weightd.Error) as e:
        client.iter_tensors("llama", tp_size=3)  # 8 heads: a bad layout raises at the call
    assert e.value.name == "WT_ELAYOUT"
    with pytest.raises(TypeError):
        client.iter_tensors("llama", tp_sise=2)


def test_engine_load_weights_shape(client):
    """The loop an engine's load_weights runs: copy each into a parameter
    while later bytes still arrive; parameters end equal to fetch_into's."""
    torch = need("torch")
    m = client.manifest("llama", tp_size=2, tp_rank=0)
    params = {t.name: torch.empty(t.shape, dtype=weightd.torch_dtype(t.dtype))
              for t in m.tensors}

    def load_weights(weights):
        for name, w in weights:
            params[name].copy_(w)

    load_weights(client.iter_tensors(m, max_bytes=1 << 18))
    ref = {k: torch.empty_like(v) for k, v in params.items()}
    client.fetch_into(ref, m)
    for k in params:
        assert raw(params[k]) == raw(ref[k]), k
