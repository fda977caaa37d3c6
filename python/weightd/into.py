"""fetch_into(): a wt_sink written in Python that puts each verified chunk
straight into the engine's own tensors (host memory, or CUDA through pinned
staging buffers), after checking every destination against the manifest."""

import ctypes
import threading

import numpy as np

from . import _arrays, _lib
from .errors import sink_call

torch = _arrays.torch
STAGE_BYTES = 8 << 20  # per pinned staging buffer (two of them), CUDA destinations only


def _describe(t):
    return "%s %s" % (t.dtype, list(t.shape))


def _check_one(info, d):
    """The problems of destination d for manifest tensor info ([] if none)."""
    probs = []
    name = "'%s'" % info.name
    if torch is not None and isinstance(d, torch.Tensor):
        ok = _arrays.torch_accepts(info.dtype_code)
        if d.dtype not in ok:
            probs.append("%s: dtype %s, the shard has %s: allocate it as %s" % (
                name, d.dtype, info.dtype, " or ".join(sorted(str(x) for x in ok))))
        if d.device.type not in ("cpu", "cuda"):
            probs.append("%s: device %s: want a cpu or cuda tensor" % (name, d.device))
        contiguous = d.is_contiguous()
    elif isinstance(d, np.ndarray):
        want = np.dtype(_arrays.NUMPY[info.dtype_code])
        if d.dtype != want:
            probs.append("%s: dtype %s, the shard has %s: allocate it as numpy %s" % (
                name, d.dtype, info.dtype, want))
        if not d.flags.writeable:
            probs.append("%s: numpy array is read-only" % name)
        contiguous = d.flags.c_contiguous
    else:
        return ["%s: a %s, want a torch.Tensor or numpy.ndarray" % (name, type(d).__name__)]
    if tuple(d.shape) != tuple(info.shape):
        probs.append("%s: shape %s, the shard has %s" % (name, list(d.shape), list(info.shape)))
    elif not contiguous:
        probs.append("%s: not contiguous (row-major): pass .contiguous() storage" % name)
    return probs


def check_dests(m, tensors, strict):
    """Destinations in manifest order, or MismatchError listing every problem."""
    from .errors import MismatchError

    probs, dests = [], []
    for info in m.tensors:
        if info.name not in tensors:
            probs.append("'%s': missing (the shard has %s %s)" % (info.name, info.dtype,
                                                                   list(info.shape)))
            continue
        p = _check_one(info, tensors[info.name])
        probs += p
        dests.append(tensors[info.name])
    if strict:
        for name in tensors:
            if name not in m:
                probs.append("'%s': not in the shard of %s (%s tp_rank=%d ep_rank=%d): "
                             "remove it or pass strict=False" % (
                                 name, m.model, m.layout_text, m.tp_rank, m.ep_rank))
    if probs:
        raise MismatchError(probs)
    return dests


# ---- stale destinations ----
# Memory a fetch_into or update_into began writing and that then failed: it may
# hold bytes of two revisions until a successful fetch_into or update_into
# rewrites it (the Python side of wt_host_sink_update_sink's stale tensors).
# Kept by memory, not by name or by tensor object: the engine owns the tensors
# dict and may rebuild it, view or re-wrap the same storage (numpy over a CPU
# torch tensor) between calls. Ranges are (lo, hi) byte addresses per device
# ("cpu", "cuda:0", ...); a destination is stale when its bytes overlap any
# stale range. A range left over from memory the engine freed can only make a
# later update refuse (WT_ELAYOUT, a fetch_into clears it), never pass.
_stale_lock = threading.Lock()
_stale = {}  # device -> [(lo, hi, name)]; guarded by _stale_lock


def _span(d, nbytes):
    """(device, lo, hi): the bytes destination d occupies (contiguous)."""
    if isinstance(d, np.ndarray):
        return "cpu", d.ctypes.data, d.ctypes.data + nbytes
    return str(d.device), d.data_ptr(), d.data_ptr() + nbytes


def stale_find(names, dests, skip=()):
    """(name, begun_as) of the first destination (index not in skip) that
    overlaps stale memory, or None. begun_as: the name it was begun under."""
    with _stale_lock:
        for i, (name, (dev, lo, hi)) in enumerate(zip(names, dests)):
            if i in skip or lo == hi:
                continue
            for slo, shi, was in _stale.get(dev, ()):
                if slo < hi and lo < shi:
                    return name, was
    return None


def stale_mark(names, spans):
    with _stale_lock:
        for name, (dev, lo, hi) in zip(names, spans):
            if lo != hi:
                _stale.setdefault(dev, []).append((lo, hi, name))


def stale_clear(spans):
    """Forget the stale bytes inside spans (written in full and verified)."""
    with _stale_lock:
        for dev, lo, hi in spans:
            if lo == hi or dev not in _stale:
                continue
            keep = []
            for slo, shi, was in _stale[dev]:
                if shi <= lo or hi <= slo:
                    keep.append((slo, shi, was))
                    continue
                if slo < lo:
                    keep.append((slo, lo, was))
                if hi < shi:
                    keep.append((hi, shi, was))
            if keep:
                _stale[dev] = keep
            else:
                del _stale[dev]


class _Host:
    def __init__(self, d, nbytes):
        if isinstance(d, np.ndarray):
            self.addr = d.ctypes.data
        else:
            self.addr = d.data_ptr()
        self.nbytes = nbytes
        self.keep = d

    def write(self, off, data, n):
        if data != self.addr + off:  # else received in place (IntoSink._recv_buf)
            ctypes.memmove(self.addr + off, data, n)


class _Stager:
    """Two pinned host buffers; a copy to the device is issued non-blocking on
    the device's current stream and a buffer is refilled only after its event
    says the previous copy finished."""

    def __init__(self):
        self.bufs = [torch.empty(STAGE_BYTES, dtype=torch.uint8).pin_memory() for _ in (0, 1)]
        self.events = [None, None]
        self.k = 0
        self.devices = set()

    def copy(self, dst_flat, off, data, n):
        done = 0
        while done < n:
            step = min(n - done, STAGE_BYTES)
            k = self.k
            if self.events[k] is not None:
                self.events[k].synchronize()
            buf = self.bufs[k]
            ctypes.memmove(buf.data_ptr(), data + done, step)
            with torch.cuda.device(dst_flat.device):
                dst_flat[off + done:off + done + step].copy_(buf[:step], non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(torch.cuda.current_stream(dst_flat.device))
            self.events[k] = ev
            self.devices.add(dst_flat.device)
            self.k ^= 1
            done += step

    def sync(self):
        for dev in self.devices:
            torch.cuda.synchronize(dev)


class _Cuda:
    def __init__(self, d, nbytes, stager):
        self.flat = d.reshape(-1).view(torch.uint8) if nbytes else None
        self.nbytes = nbytes
        self.stager = stager

    def write(self, off, data, n):
        self.stager.copy(self.flat, off, data, n)


class IntoSink:
    """The ctypes wt_sink whose callbacks write into the destinations.

    in_place: host destinations offer their memory to the bulk stream
    (wt_sink_ops.recv_buf), which then receives chunks straight into them,
    before they are verified: only for destinations nobody reads until the
    fetch returned (fetch_into), never for tensors in use (update_into)."""

    def __init__(self, m, dests, run, in_place=False):
        self.run = run
        self.stager = None
        self.in_place = 0  # chunks written in place (write() got the offered memory)
        self.names = [info.name for info in m.tensors]
        self.spans = [_span(d, info.nbytes) for info, d in zip(m.tensors, dests)]
        self.touched = set()  # tensors begun or received into: partial if the fetch fails
        self.out = []
        for info, d in zip(m.tensors, dests):
            if torch is not None and isinstance(d, torch.Tensor) and d.device.type == "cuda":
                if self.stager is None:
                    self.stager = _Stager()
                self.out.append(_Cuda(d, info.nbytes, self.stager))
            else:
                self.out.append(_Host(d, info.nbytes))
        ops = _lib.versioned(_lib.SinkOps, _lib.wt_sink_ops_init)
        # keep the CFUNCTYPE objects alive as long as the sink
        self.cbs = (_lib.SinkBegin(self._begin), _lib.SinkTensor(self._tensor_begin),
                    _lib.SinkWrite(self._write), _lib.SinkTensor(self._ok_tensor),
                    _lib.SinkEnd(self._end), _lib.SinkAbort(self._abort))
        (ops.begin, ops.tensor_begin, ops.write, ops.tensor_end, ops.end,
         ops.abort) = self.cbs
        if in_place and any(isinstance(o, _Host) for o in self.out):
            self.cb_recv = _lib.SinkRecvBuf(self._recv_buf)
            ops.recv_buf = self.cb_recv  # ignored by a libweights before 1.3
        self.ops = ops
        self.c_sink = _lib.Sink(ctypes.pointer(ops))

    def _guard(self, err, fn):  # re-raised by Client.fetch_into
        return sink_call(self.run, err, fn)

    def _begin(self, _s, _m, err):
        return _lib.WT_OK

    def _tensor_begin(self, _s, i, err):
        self.touched.add(i)
        return _lib.WT_OK

    def _ok_tensor(self, _s, _i, err):
        return _lib.WT_OK

    def partial(self):
        """After a failed fetch: mark the tensors it began (or received into)
        stale and return their names, in manifest order."""
        hit = sorted(self.touched)
        stale_mark([self.names[i] for i in hit], [self.spans[i] for i in hit])
        return [self.names[i] for i in hit]

    def _recv_buf(self, _s, i, off, n):
        """Where chunk [off, off + n) of tensor i may be received: its place in
        a host destination; None (a CUDA one, or out of range) = through write()."""
        o = self.out[i] if i < len(self.out) else None
        if not isinstance(o, _Host) or off + n > o.nbytes:
            return None
        self.touched.add(i)
        return o.addr + off

    def _write(self, _s, i, off, data, n, err):
        def go():
            if self.run.cancel.is_set():
                raise_cancel()
            o = self.out[i]
            if off + n > o.nbytes:
                raise ValueError("chunk [%d, %d) past the end of tensor %d (%d bytes)" %
                                 (off, off + n, i, o.nbytes))
            if isinstance(o, _Host) and data == o.addr + off:
                self.in_place += 1  # counted as delivered, not as offered
            o.write(off, data, n)
        return self._guard(err, go)

    def _end(self, _s, err):
        return self._guard(err, self.stager.sync if self.stager else (lambda: None))

    def _abort(self, _s):
        if self.stager is not None:  # the copies must not outlive the call
            try:
                self.stager.sync()
            except BaseException:  # noqa: B902 - abort must not fail
                pass


def raise_cancel():
    from .errors import Cancelled

    raise Cancelled(_lib.WT_ECANCELED, "WT_ECANCELED", "fetch cancelled by Fetch.cancel()")
