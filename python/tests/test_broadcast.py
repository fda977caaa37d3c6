"""Broadcast to replicas from Python (weightd.BroadcastRoot, weightd.receive_broadcast;
docs/engines.md "Python"): a root and its replicas on threads of
this process against the fixture weightd, over tcp://127.0.0.1 (port 0)."""

import threading
import time

import numpy as np
import pytest

import weightd
from conftest import need

LAYOUT = dict(tp_size=2, tp_rank=0)
T_MS = 5000  # generous io/join timeouts where nothing is meant to time out


def _thread(fn, *args, **kw):
    """fn on a thread of its own: (thread, box); box gets "out" or "exc"."""
    box = {}

    def main():
        try:
            box["out"] = fn(*args, **kw)
        except BaseException as e:  # noqa: B902 - checked by the test
            box["exc"] = e

    t = threading.Thread(target=main, daemon=True)
    t.start()
    return t, box


def _join(t, box, timeout=20):
    t.join(timeout)
    assert not t.is_alive(), "thread still running after %s s" % timeout
    return box


def _manifest(url, **layout):
    with weightd.Client(url) as c:  # a replica asks weightd for its own manifest
        return c.manifest("llama", **(layout or LAYOUT))


def _raw(v):
    """The bytes of a numpy array or a torch tensor."""
    if isinstance(v, np.ndarray):
        return v.tobytes()
    import torch

    if v.dtype == torch.bfloat16:
        v = v.view(torch.int16)
    return v.numpy().tobytes()


def _addr(v):
    return v.ctypes.data if isinstance(v, np.ndarray) else v.data_ptr()


@pytest.mark.parametrize("as_torch", [True, False], ids=["torch", "numpy"])
def test_root_and_two_replicas_get_the_same_bytes(client, url, as_torch):
    if as_torch:
        need("torch")
    ms = [_manifest(url) for _ in range(2)]
    with weightd.BroadcastRoot("tcp://127.0.0.1:0", 3, group="set-a", join_timeout_ms=T_MS,
                               io_timeout_ms=T_MS) as root:
        assert root.url.startswith("tcp://127.0.0.1:") and not root.url.endswith(":0")
        assert root.result is None
        reps = [_thread(weightd.receive_broadcast, root.url, m, group="set-a",
                        join_timeout_ms=T_MS, io_timeout_ms=T_MS, as_torch=as_torch)
                for m in ms]
        shard = client.fetch("llama", broadcast=root, as_torch=as_torch, **LAYOUT)
        boxes = [_join(*r) for r in reps]
        assert root.result == (2, 2, None) and root.replica_errors == [None, None]
    plain = client.fetch("llama", as_torch=as_torch, **LAYOUT)
    assert list(shard) == list(plain) and len(shard) > 5
    for box in boxes:
        assert "exc" not in box, box.get("exc")
        rs = box["out"]
        assert isinstance(rs, weightd.Shard) and rs.stats is None
        assert list(rs) == list(shard)
        for name, v in shard.items():
            r = rs[name]
            assert type(r) is type(v) and r.dtype == v.dtype and tuple(r.shape) == tuple(v.shape)
            assert _raw(r) == _raw(v) == _raw(plain[name]), name
            # zero copy: a view of the replica's own host sink, not the root's
            assert _addr(r) == rs.address(name) != shard.address(name)
    assert shard.stats["bytes"] == shard.manifest.total_bytes


def test_replica_of_another_rank_or_group_is_refused(client, url):
    good = [_manifest(url) for _ in range(2)]
    other_rank = _manifest(url, tp_size=2, tp_rank=1)
    with weightd.BroadcastRoot("tcp://127.0.0.1:0", 3, group="set-b", join_timeout_ms=T_MS,
                               io_timeout_ms=T_MS) as root:
        fetch = _thread(client.fetch, "llama", broadcast=root, as_torch=False, **LAYOUT)
        # the wrong ones go first, alone: the root refuses them at hello while
        # it waits, and they do not count
        bad = _join(*_thread(weightd.receive_broadcast, root.url, other_rank, group="set-b",
                             join_timeout_ms=T_MS))
        assert bad["exc"].name == "WT_ELAYOUT", bad
        assert "rank" in bad["exc"].message
        bad = _join(*_thread(weightd.receive_broadcast, root.url, good[0], group="set-x",
                             join_timeout_ms=T_MS))
        assert bad["exc"].name == "WT_EINVAL" and "group" in bad["exc"].message, bad
        assert fetch[0].is_alive()  # still waiting for two replicas of its own
        reps = [_thread(weightd.receive_broadcast, root.url, m, group="set-b",
                        join_timeout_ms=T_MS, as_torch=False) for m in good]
        boxes = [_join(*r) for r in reps]
        root_box = _join(*fetch)
        assert "exc" not in root_box, root_box.get("exc")
        for box in boxes:
            assert "exc" not in box, box.get("exc")
            assert _raw(box["out"]["model.norm.weight"]) == \
                _raw(root_box["out"]["model.norm.weight"])
        assert root.result == (2, 2, None)


def test_replica_that_never_joins_times_the_root_out(client, url):
    ms = [_manifest(url) for _ in range(2)]
    with weightd.BroadcastRoot("tcp://127.0.0.1:0", 3, join_timeout_ms=600,
                               io_timeout_ms=T_MS) as root:
        one = _thread(weightd.receive_broadcast, root.url, ms[0], join_timeout_ms=T_MS)
        t0 = time.monotonic()
        with pytest.raises(weightd.Error) as e:
            client.fetch("llama", broadcast=root, **LAYOUT)
        assert e.value.name == "WT_ETIMEDOUT" and "1 of 2 replicas" in e.value.message
        assert 0.5 < time.monotonic() - t0 < 4
        told = _join(*one)["exc"]  # the replica that joined is told, not left waiting
        assert told.name == "WT_ETIMEDOUT" and "1 of 2 replicas" in told.message, told
        assert root.result.replicas == 2 and root.result.done == 0
        assert isinstance(root.result.error, weightd.Error)
        assert [e.name for e in root.replica_errors] == ["WT_ETIMEDOUT"] * 2
        # a fetch that failed may be retried on the same root, now with both
        reps = [_thread(weightd.receive_broadcast, root.url, m, join_timeout_ms=T_MS,
                        as_torch=False) for m in ms]
        time.sleep(0.1)  # both dialling before the 600 ms join window opens
        shard = client.fetch("llama", broadcast=root, as_torch=False, **LAYOUT)
        for box in [_join(*r) for r in reps]:
            assert "exc" not in box, box.get("exc")
        assert root.result == (2, 2, None)
        # its host buffers are now that Shard's: the next broadcast needs a new root
        with pytest.raises(weightd.Error) as e:
            client.fetch("llama", broadcast=root, **LAYOUT)
        assert e.value.name == "WT_EINVAL" and "new BroadcastRoot" in e.value.message
        assert shard["model.norm.weight"].size > 0  # untouched by the refused fetch
    with pytest.raises(weightd.Error) as e:
        client.fetch("llama", broadcast=root, **LAYOUT)
    assert e.value.name == "WT_ECLOSED"


def test_alone_and_bad_arguments(client, url):
    with weightd.BroadcastRoot("tcp://127.0.0.1:0", 1,  # nobody to send to
                               max_lag_bytes=1 << 20, lag_timeout_ms=100) as root:
        shard = client.fetch("llama", broadcast=root, as_torch=False, **LAYOUT)
        assert root.result == (0, 0, None) and len(shard) > 5
    for kw, what in ((dict(n_members=0), "n_members 0"), (dict(n_members=-1), "n_members=-1"),
                     (dict(n_members=3, join_timeout_ms=1 << 32), "join_timeout_ms"),
                     (dict(n_members=3, io_timeout_ms=True), "io_timeout_ms"),
                     (dict(n_members=3, max_lag_bytes=1000), "max_lag_bytes 1000"),
                     (dict(n_members=3, max_lag_bytes=-1), "max_lag_bytes=-1"),
                     (dict(n_members=3, lag_timeout_ms=1.5), "lag_timeout_ms"),
                     (dict(n_members=3, group="g" * 256), "group")):
        with pytest.raises(weightd.Error) as e:
            weightd.BroadcastRoot("tcp://127.0.0.1:0", **kw)
        assert e.value.name == "WT_EINVAL" and what in e.value.message, e.value
    with pytest.raises(weightd.Error) as e:
        weightd.BroadcastRoot("", 2)
    assert e.value.name == "WT_EINVAL" and "url" in e.value.message
    m = _manifest(url)
    t0 = time.monotonic()
    with pytest.raises(weightd.Error) as e:  # nobody listens there
        weightd.receive_broadcast("tcp://127.0.0.1:1", m, join_timeout_ms=200)
    assert e.value.name == "WT_ETIMEDOUT" and time.monotonic() - t0 < 3
    with pytest.raises(TypeError):
        weightd.receive_broadcast("tcp://127.0.0.1:1", "llama")
    with pytest.raises(TypeError):
        client.fetch("llama", broadcast="tcp://127.0.0.1:1")
    with pytest.raises(TypeError) as te:
        client.fetch_into({}, "llama", broadcast=None)
    assert "fetch() only" in str(te.value)


def test_receive_cancelled_from_another_thread(url):
    """A replica waiting for a root whose fetch never starts (join and io
    timeouts 30 s, beyond the test's 20 s wait for the thread): cancel() from
    this thread ends it with weightd.Cancelled; a cancellation fired before
    the call raises at once; one receive at a time per BroadcastCancel."""
    m = _manifest(url)
    with weightd.BroadcastRoot("tcp://127.0.0.1:0", n_members=2, group="c") as root:
        c = weightd.BroadcastCancel()
        t, box = _thread(weightd.receive_broadcast, root.url, m, group="c",
                         join_timeout_ms=30000, io_timeout_ms=30000, cancel=c)
        time.sleep(0.3)  # dialed, hello sent: waiting to be admitted
        with pytest.raises(weightd.Error) as e:  # in use by the thread
            weightd.receive_broadcast(root.url, m, group="c", cancel=c)
        assert e.value.name == "WT_EBUSY"
        with pytest.raises(weightd.Error) as e:
            c.close()
        assert e.value.name == "WT_EBUSY"
        c.cancel()
        c.cancel()  # idempotent
        exc = _join(t, box).get("exc")
        assert isinstance(exc, weightd.Cancelled), exc
        assert "wt_bcast_cancel_fire" in exc.message
        assert c.cancelled
        with pytest.raises(weightd.Cancelled):  # stays cancelled
            weightd.receive_broadcast(root.url, m, group="c", join_timeout_ms=30000, cancel=c)
        c.close()
        c.close()
        with pytest.raises(weightd.Error) as e:
            weightd.receive_broadcast(root.url, m, group="c", cancel=c)
        assert e.value.name == "WT_ECLOSED"
    with pytest.raises(TypeError):
        weightd.receive_broadcast(root.url, m, cancel=object())
