"""Broadcast to data-parallel replicas (weights/bcast.h, libweights 1.5).

The R ranks of a replica set that hold the same (tp_rank, ep_rank) need the
same bytes. The root fetches from weightd once and sends every verified chunk
to the others over a host stream (tcp:// or ipc://):

    root = weightd.BroadcastRoot("tcp://0.0.0.0:0", n_members=R, group="job-7")
    # tell the replicas root.url (the bound port filled in), then:
    shard = client.fetch("llama", tp_size=2, tp_rank=0, broadcast=root)
    root.result   # BroadcastResult(replicas=R-1, done=..., error=None or weightd.Error)

    # on each replica (every member asks weightd for its own manifest):
    m = client.manifest("llama", tp_size=2, tp_rank=0)
    shard = weightd.receive_broadcast(url, m, group="job-7")
    # weightd.BroadcastCancel(): cancel=c, then c.cancel() from another thread

Both return a Shard (zero-copy views of a libweights host sink, as
Client.fetch). A replica checks every chunk and tensor hash against its own
manifest, so its integrity never rests on the root. Once the broadcast began,
a replica that fails never fails the root's fetch: it is dropped and shows in
root.result. Both calls block with the GIL released (ctypes), so a root and
its replicas may run on threads of one process.

A BroadcastRoot listens from its creation until close() and gives one Shard:
its host sink's buffers become that Shard's, so the next broadcast needs a new
BroadcastRoot (a fetch that failed may be retried on the same one).
"""

import ctypes
import threading
from collections import namedtuple

from . import _lib
from .client import _HostSink, make_shard, want_torch
from .errors import Error, check, cstr, make
from .manifest import Manifest

BroadcastResult = namedtuple("BroadcastResult", "replicas done error")
BroadcastResult.__doc__ = """After a broadcast (wt_bcast_root_result): replicas =
n_members - 1, done = how many received and verified every tensor, error = the
first replica failure (weightd.Error naming the replica) or None when all did."""


def _einval(msg):
    return Error(_lib.WT_EINVAL, "WT_EINVAL", msg)


def _u32(what, name, v):
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 0xFFFFFFFF:
        raise _einval("%s: %s=%r: want an integer 0..2^32-1" % (what, name, v))
    return v


def _opts(what, url, group, join_timeout_ms, io_timeout_ms, n_members=None, lag=(None, None)):
    """A wt_bcast_opts; None leaves the library's default (60000 / 30000 ms).
    The library checks the ranges it cares about (n_members 1..256, group
    length) and names the field."""
    if _lib.wt_bcast_opts_init is None:
        raise Error(_lib.WT_EUNSUPPORTED, "WT_EUNSUPPORTED",
                    "%s: %s has no broadcast (wt_bcast_*, libweights 1.5); load a newer "
                    "one (WEIGHTD_LIB)" % (what, _lib.lib_path))
    o = _lib.versioned(_lib.BcastOpts, _lib.wt_bcast_opts_init)
    o.url = cstr(url, "%s url" % what)  # the struct keeps the bytes alive
    o.group = cstr(group, "%s group" % what) if group is not None else None
    if n_members is not None:
        o.n_members = _u32(what, "n_members", n_members)
    if join_timeout_ms is not None:
        o.join_timeout_ms = _u32(what, "join_timeout_ms", join_timeout_ms)
    if io_timeout_ms is not None:
        o.io_timeout_ms = _u32(what, "io_timeout_ms", io_timeout_ms)
    max_lag_bytes, lag_timeout_ms = lag
    if max_lag_bytes is None and lag_timeout_ms is None:
        return o
    if o.struct_size < ctypes.sizeof(_lib.BcastOpts):
        raise Error(_lib.WT_EUNSUPPORTED, "WT_EUNSUPPORTED",
                    "%s: %s has no max_lag_bytes / lag_timeout_ms (libweights 1.6); load a "
                    "newer one (WEIGHTD_LIB) or leave them out" % (what, _lib.lib_path))
    if max_lag_bytes is not None:
        if not isinstance(max_lag_bytes, int) or isinstance(max_lag_bytes, bool) or \
                not 0 <= max_lag_bytes < 1 << 64:
            raise _einval("%s: max_lag_bytes=%r: want an integer 0..2^64-1"
                          % (what, max_lag_bytes))
        o.max_lag_bytes = max_lag_bytes
    if lag_timeout_ms is not None:
        o.lag_timeout_ms = _u32(what, "lag_timeout_ms", lag_timeout_ms)
    return o


class BroadcastRoot:
    """The root of a replica set: listens on url (tcp://HOST:0 picks a port;
    .url is the one to give the replicas) for n_members - 1 replicas (n_members
    counts the root; 1..256) of group. Pass it as Client.fetch(...,
    broadcast=root): the fetch waits up to join_timeout_ms for every replica
    (else weightd.Error WT_ETIMEDOUT, nothing fetched, the joined replicas are
    told the same), then forwards each verified chunk to all of them through
    one queue of max_lag_bytes (None: the library's 64 MiB) that each replica
    takes from at its own speed: one that, that far behind the fastest, held
    the others up lag_timeout_ms in all (None: 5000), or that takes no byte
    for io_timeout_ms, is dropped, so none paces the others for long.
    After the fetch, .result is a BroadcastResult and .replica_errors lists
    each replica's own result (None, or the Error naming it; in the order
    they were admitted). close() (or a with-block)
    closes the listener; not while its fetch runs (WT_EBUSY)."""

    def __init__(self, url, n_members, *, group=None, join_timeout_ms=None,
                 io_timeout_ms=None, max_lag_bytes=None, lag_timeout_ms=None):
        o = _opts("BroadcastRoot", url, group, join_timeout_ms, io_timeout_ms, n_members,
                  (max_lag_bytes, lag_timeout_ms))
        self.n_members = n_members
        self.group = group or ""
        self.result = None  # BroadcastResult after a fetch
        self.replica_errors = None  # after a fetch: per replica, its Error or None
        self._lock = threading.Lock()
        self._busy = self._used = False  # guarded by _lock
        self._host = _HostSink()  # the inner sink: must outlive the C root
        self._r = ctypes.c_void_p()
        err = _lib.ErrBuf()
        check(_lib.wt_bcast_root_create(ctypes.byref(self._r), ctypes.byref(o),
                                        self._host.sink(), ctypes.byref(err)), err)
        self.url = _lib.wt_bcast_root_url(self._r).decode()

    def _run(self, fetch):
        """fetch(sink) (Client.fetch's wt_client_fetch) through the broadcast
        sink; returns (the filled _HostSink, fetch's result). Sets .result."""
        with self._lock:
            if not self._r:
                raise Error(_lib.WT_ECLOSED, "WT_ECLOSED", "weightd.BroadcastRoot is closed")
            if self._busy:
                raise Error(_lib.WT_EBUSY, "WT_EBUSY", "weightd.BroadcastRoot: a fetch into it is "
                            "running; one broadcast at a time")
            if self._used:
                raise _einval("weightd.BroadcastRoot %s already gave its Shard (whose "
                              "buffers it filled); create a new BroadcastRoot for the next "
                              "broadcast" % self.url)
            self._busy = True
        try:
            out = fetch(_lib.wt_bcast_root_sink(self._r))
            self._used = True
            return self._host, out
        finally:
            self.result = self._read_result()
            with self._lock:
                self._busy = False

    def _read_result(self):
        n, err = ctypes.c_uint32(), _lib.ErrBuf()
        rc = _lib.wt_bcast_root_result(self._r, ctypes.byref(n), ctypes.byref(err))
        error = None if rc == _lib.WT_OK else make(rc, err.msg.decode("utf-8", "replace"))
        self.replica_errors = [self._replica_error(k) for k in range(self.n_members - 1)]
        return BroadcastResult(self.n_members - 1, n.value, error)

    def _replica_error(self, k):
        """Replica k's own result (wt_bcast_root_replica): None, or its Error."""
        err = _lib.ErrBuf()
        rc = _lib.wt_bcast_root_replica(self._r, k, ctypes.byref(err))
        return None if rc == _lib.WT_OK else make(rc, err.msg.decode("utf-8", "replace"))

    def close(self):
        """Close the listener and the replicas' streams. Idempotent."""
        with self._lock:
            if self._busy:
                raise Error(_lib.WT_EBUSY, "WT_EBUSY", "weightd.BroadcastRoot.close(): its fetch is "
                            "still running; wait for it first")
            if getattr(self, "_r", None):
                _lib.wt_bcast_root_destroy(self._r)
                self._r = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):  # a running fetch holds a reference: never busy here
        if getattr(self, "_r", None):
            _lib.wt_bcast_root_destroy(self._r)
            self._r = None


class BroadcastCancel:
    """A cancellation for receive_broadcast(..., cancel=this) (wt_bcast_cancel,
    libweights 1.6): cancel() from any thread makes that receive raise
    weightd.Cancelled (WT_ECANCELED) at once, whether it is dialing, waiting
    to be admitted or waiting for a frame, instead of at its timeouts; the
    root drops this replica. Once cancelled it stays so (a later receive with
    it raises at once). One receive at a time; close() (or garbage
    collection) frees it, WT_EBUSY while a receive uses it."""

    def __init__(self):
        if _lib.wt_bcast_cancel_create is None:
            raise Error(_lib.WT_EUNSUPPORTED, "WT_EUNSUPPORTED",
                        "weightd.BroadcastCancel: %s has no wt_bcast_cancel (libweights 1.6); "
                        "load a newer one (WEIGHTD_LIB)" % _lib.lib_path)
        self._lock = threading.Lock()
        self._users = 0  # receives using it; guarded by _lock
        self._cancelled = False
        self._c = ctypes.c_void_p()
        err = _lib.ErrBuf()
        check(_lib.wt_bcast_cancel_create(ctypes.byref(self._c), ctypes.byref(err)), err)

    @property
    def cancelled(self):
        return self._cancelled

    def cancel(self):
        """Idempotent; from any thread."""
        with self._lock:
            self._cancelled = True
            if self._c:
                _lib.wt_bcast_cancel_fire(self._c)

    def _enter(self):
        with self._lock:
            if not self._c:
                raise Error(_lib.WT_ECLOSED, "WT_ECLOSED", "weightd.BroadcastCancel is closed")
            if self._users:
                raise Error(_lib.WT_EBUSY, "WT_EBUSY", "weightd.BroadcastCancel: a "
                            "receive_broadcast already uses it; one at a time")
            self._users += 1
            return self._c.value

    def _leave(self):
        with self._lock:
            self._users -= 1

    def close(self):
        with self._lock:
            if self._users:
                raise Error(_lib.WT_EBUSY, "WT_EBUSY", "weightd.BroadcastCancel.close(): a "
                            "receive_broadcast still uses it")
            if getattr(self, "_c", None):
                _lib.wt_bcast_cancel_destroy(self._c)
                self._c = ctypes.c_void_p()

    def __del__(self):  # a running receive holds a reference: never in use here
        if getattr(self, "_c", None):
            _lib.wt_bcast_cancel_destroy(self._c)
            self._c = ctypes.c_void_p()


def receive_broadcast(url, manifest, *, group=None, join_timeout_ms=None, io_timeout_ms=None,
                      as_torch=None, cancel=None):
    """On a replica: dial the root at url (retrying up to join_timeout_ms),
    receive its broadcast into a libweights host sink, checking every chunk
    and tensor against manifest (this replica's own, from
    client.manifest(...) with the root's layout and rank), and return a Shard
    as Client.fetch does (stats None). Blocks, with the GIL released, until
    the end, the timeouts, or cancel.cancel() from another thread (cancel: a
    BroadcastCancel, libweights 1.6; then weightd.Cancelled). Errors are
    weightd.Error: WT_ELAYOUT / WT_EVERSION / WT_EINVAL when the root refused
    this replica's layout or rank / revision / group, WT_EHASH, WT_ECANCELED
    (the root's fetch failed, or cancelled), WT_ECLOSED, WT_ETIMEDOUT, ..."""
    as_torch = want_torch(as_torch)
    if not isinstance(manifest, Manifest):
        raise TypeError("weightd.receive_broadcast: want this replica's Manifest "
                        "(client.manifest(model, **layout)), got %r" % (manifest,))
    if cancel is not None and not isinstance(cancel, BroadcastCancel):
        raise TypeError("weightd.receive_broadcast: cancel=%r: want a weightd.BroadcastCancel"
                        % (cancel,))
    o = _opts("receive_broadcast", url, group, join_timeout_ms, io_timeout_ms)
    host, err = _HostSink(), _lib.ErrBuf()
    if cancel is not None:
        o.cancel = cancel._enter()
    try:
        rc = _lib.wt_bcast_receive(ctypes.byref(o), manifest._ptr, host.sink(),
                                   ctypes.byref(err))
    finally:
        if cancel is not None:
            cancel._leave()
    check(rc, err)
    return make_shard(host, manifest, None, as_torch)
