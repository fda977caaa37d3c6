"""iter_tensors(): one rank as a stream of (runtime name, tensor) pairs, the
shape engines' loaders take (vLLM's model.load_weights(weights), sglang's
likewise), each handed out as soon as libweights verified it, with bounded
host memory.

The fetch (wt_client_fetch) runs on a thread of its own into a sink written
in Python: tensor_begin(i) waits until the bytes held (tensors verified but
not yet taken by the consumer, plus the one being received) leave room for
tensor i under max_bytes (or nothing is held: a tensor larger than max_bytes
goes alone), then allocates its buffer (unless it was allocated ahead,
below); write() copies each verified chunk
into it; tensor_end(i), called by libweights only after the tensor's
XXH3-128 matched, queues it. The consumer's next() takes it off the queue
and owns it from then on. Back-pressure therefore blocks the fetch thread
(inside tensor_begin), never the consumer beyond waiting for the next
verified tensor.

Over the bulk stream (stream=1, libweights 1.3) the sink also offers
wt_sink_ops.recv_buf: the chunks of a tensor whose buffer exists are
received straight into it (not yet verified; write() then gets that very
pointer and copies nothing). Such a buffer is the sink's alone until
tensor_end (nobody else holds it, nothing is queued), a chunk that fails its
hash is fetched again into the same place, and abort() drops it. libweights
asks for the first chunks of a tensor before its tensor_begin; a buffer is
then allocated early, in manifest order and only while it fits under
max_bytes without waiting (else that chunk goes through write()), so the
bound and the order in which tensors wait for room are unchanged."""

import atexit
import collections
import ctypes
import threading
import weakref

import numpy as np

from . import _arrays, _lib
from .errors import Cancelled, Error, sink_call

DEFAULT_MAX_BYTES = 256 << 20  # Client.iter_tensors(max_bytes=...)

_live = weakref.WeakSet()  # running streams, cancelled at interpreter exit


def _cancelled(why):
    return Cancelled(_lib.WT_ECANCELED, "WT_ECANCELED", why)


class _State:
    """What the fetch thread and the consumer share. Fields below guarded by cv
    (a Condition over an RLock: a buffer's finalizer may run under it on
    the same thread); the fetch thread never holds a reference to the
    TensorStream, so dropping the stream can cancel it."""

    def __init__(self, max_bytes):
        self.cv = threading.Condition()
        self.max_bytes = max_bytes
        self.queue = collections.deque()  # (name, tensor, nbytes), verified, in manifest order
        self.held = 0  # bytes in queue + the tensor being received + buffers allocated ahead
        self.peak_held = 0
        self.live = 0  # bytes of buffers this stream allocated that are still alive anywhere
        self.done = False  # the fetch thread has ended
        self.exc = None  # why it ended, None on success
        self.closed = False  # the consumer closed the stream: stop

    def release(self, nbytes):
        with self.cv:
            self.live -= nbytes


class _StreamSink:
    """The ctypes wt_sink whose callbacks run on the fetch thread."""

    def __init__(self, m, st, run, as_torch):
        self.m, self.st, self.run, self.as_torch = m, st, run, as_torch
        self.cur = None  # (index, uint8 buffer, address) of the tensor being received
        # buffers allocated early for recv_buf: tensors [cur + 1, next_alloc), or
        # [0, next_alloc) before the first tensor_begin; index -> (buffer, address)
        self.ready = {}
        self.next_alloc = 0  # every tensor before it has (had) its buffer
        self.in_place = 0  # chunks write() got in the buffer itself (received there)
        self.copied = 0  # chunks write() copied
        ops = _lib.versioned(_lib.SinkOps, _lib.wt_sink_ops_init)
        # keep the CFUNCTYPE objects alive as long as the sink
        self.cbs = (_lib.SinkBegin(self._begin), _lib.SinkTensor(self._tensor_begin),
                    _lib.SinkWrite(self._write), _lib.SinkTensor(self._tensor_end),
                    _lib.SinkEnd(self._end), _lib.SinkAbort(self._abort))
        (ops.begin, ops.tensor_begin, ops.write, ops.tensor_end, ops.end,
         ops.abort) = self.cbs
        self.cb_recv = _lib.SinkRecvBuf(self._recv_buf)
        ops.recv_buf = self.cb_recv  # ignored by a libweights before 1.3 and off the stream
        self.ops = ops
        self.c_sink = _lib.Sink(ctypes.pointer(ops))

    def _guard(self, err, fn, *args):  # re-raised by the consumer's next()
        return sink_call(self.run, err, fn, *args)

    def _begin(self, _s, _m, err):
        return _lib.WT_OK

    def _reserve(self, nbytes):
        st = self.st
        with st.cv:
            # wait for room; a tensor larger than max_bytes goes when nothing is held
            while not (st.closed or self.run.cancel.is_set()) and st.held > 0 and \
                    st.held + nbytes > st.max_bytes:
                st.cv.wait()
            if st.closed or self.run.cancel.is_set():
                raise _cancelled("iter_tensors: the stream was closed by its consumer")
            st.held += nbytes
            st.peak_held = max(st.peak_held, st.held)
            st.live += nbytes

    def _alloc(self, nbytes):
        """(buffer, address) for nbytes already counted in held and live."""
        try:
            buf = np.empty(nbytes, dtype=np.uint8)
        except BaseException:
            self._unhold(nbytes, live=True)
            raise
        # live counts the buffer until the last array viewing it is gone
        weakref.finalize(buf, self.st.release, nbytes)
        return buf, buf.ctypes.data if nbytes else 0

    def _unhold(self, nbytes, live=False):
        with self.st.cv:
            self.st.held -= nbytes
            if live:
                self.st.live -= nbytes
            self.st.cv.notify_all()

    def _open(self, i):
        if i in self.ready:  # allocated early for recv_buf
            self.cur = (i,) + self.ready.pop(i)
            return
        if i != self.next_alloc or self.ready:
            raise ValueError("tensor_begin(%d): tensors before it have no buffer" % i)
        nbytes = self.m.tensors[i].nbytes
        self._reserve(nbytes)
        self.next_alloc = i + 1
        self.cur = (i,) + self._alloc(nbytes)

    def _tensor_begin(self, _s, i, err):
        return self._guard(err, self._open, i)

    def _alloc_ahead(self, upto):
        """Allocate the buffers of tensors next_alloc..upto in order while each
        fits under max_bytes now (never waits: tensors before it are still to
        be received, and the consumer frees room only from queued ones)."""
        st = self.st
        while self.next_alloc <= upto:
            nbytes = self.m.tensors[self.next_alloc].nbytes
            with st.cv:
                if st.closed or self.run.cancel.is_set() or st.held + nbytes > st.max_bytes:
                    return
                st.held += nbytes
                st.peak_held = max(st.peak_held, st.held)
                st.live += nbytes
            self.ready[self.next_alloc] = self._alloc(nbytes)
            self.next_alloc += 1

    def _recv_buf(self, _s, i, off, n):
        """Where chunk [off, off + n) of tensor i may be received: its place in
        the tensor's own buffer, or None (through write()) when the tensor has
        none and there is no room for it yet."""
        try:
            if self.cur is not None and self.cur[0] == i:
                buf, addr = self.cur[1], self.cur[2]
            else:
                if i >= self.next_alloc and i < len(self.m.tensors):
                    self._alloc_ahead(i)
                if i not in self.ready:
                    return None
                buf, addr = self.ready[i]
            return addr + off if off + n <= len(buf) else None
        except BaseException:  # noqa: B902 - no buffer: the chunk goes through write()
            return None

    def _copy(self, i, off, data, n):
        if self.run.cancel.is_set() or self.st.closed:
            raise _cancelled("iter_tensors: the stream was closed by its consumer")
        if self.cur is None or self.cur[0] != i:
            raise ValueError("write to tensor %d, which was not begun" % i)
        if off + n > len(self.cur[1]):
            raise ValueError("chunk [%d, %d) past the end of tensor %d (%d bytes)" %
                             (off, off + n, i, len(self.cur[1])))
        if data == self.cur[2] + off:  # received there (_recv_buf): already in place
            self.in_place += 1
            return
        self.copied += 1
        ctypes.memmove(self.cur[2] + off, data, n)

    def _write(self, _s, i, off, data, n, err):
        return self._guard(err, self._copy, i, off, data, n)

    def _close(self, i):
        if self.cur is None or self.cur[0] != i:
            raise ValueError("end of tensor %d, which was not begun" % i)
        info, buf = self.m.tensors[i], self.cur[1]
        self.cur = None
        t = _arrays.view_bytes(buf, info.dtype_code, info.shape, self.as_torch)
        with self.st.cv:
            if self.st.closed:  # by the consumer meanwhile: nobody will take it
                self.st.held -= info.nbytes
            else:
                self.st.queue.append((info.name, t, info.nbytes))
            self.st.cv.notify_all()

    def _tensor_end(self, _s, i, err):
        return self._guard(err, self._close, i)

    def _end(self, _s, err):
        return _lib.WT_OK

    def _abort(self, _s):
        # nothing is received into them any more: the buffers go with their
        # last reference
        cur, self.cur = self.cur, None
        ahead, self.ready = self.ready, {}
        dropped = sum(len(buf) for buf, _ in ahead.values())
        if cur is not None:
            dropped += len(cur[1])
        if dropped:
            self._unhold(dropped)


def _fetch_main(client, m, st, sink, run):
    """The fetch thread: wt_client_fetch into the stream sink, then done."""
    exc = None
    try:
        client._fetch(m, ctypes.byref(sink.c_sink), run)
    except BaseException as e:  # noqa: B902 - handed to the consumer
        exc = e
    with st.cv:
        st.exc, st.done = exc, True
        st.cv.notify_all()


class TensorStream:
    """An iterator of (runtime name, tensor) in manifest order; see
    Client.iter_tensors. Also a context manager; close() cancels the fetch
    and waits for its thread to end.

    Counters (for tests and monitoring; bytes): held_bytes (verified tensors
    waiting in the queue plus the one being received and those whose buffer
    was allocated ahead for the bulk stream), peak_held_bytes (the most
    held_bytes ever was), live_bytes (buffers of this stream still alive
    anywhere, the consumer's included), max_bytes; in chunks:
    in_place_chunks (received straight into their tensor over the bulk
    stream: nothing copied) and copied_chunks (copied by write())."""

    def __init__(self, client, m, max_bytes, progress, as_torch):
        from .client import _Run

        self.manifest = m
        self.max_bytes = max_bytes
        self._st = st = _State(max_bytes)
        run = _Run(progress, None)
        sink = _StreamSink(m, st, run, as_torch)
        self._cancel = run.cancel
        self._sink = sink  # its counters; it holds no reference back
        # a daemon thread: one still waiting for room must not hold up exit
        # (_close_all cancels it first)
        t = threading.Thread(target=_fetch_main, args=(client, m, st, sink, run),
                             name="weightd-iter-tensors", daemon=True)
        t.start()
        self._thread = t
        _live.add(self)

    @property
    def held_bytes(self):
        return self._st.held

    @property
    def peak_held_bytes(self):
        return self._st.peak_held

    @property
    def live_bytes(self):
        return self._st.live

    @property
    def in_place_chunks(self):
        return self._sink.in_place

    @property
    def copied_chunks(self):
        return self._sink.copied

    def __iter__(self):
        return self

    def __next__(self):
        st = self._st
        with st.cv:
            while not st.queue and not st.done and not st.closed:
                st.cv.wait()
            if st.closed:  # by close(), or after the end was reported once
                raise StopIteration
            if st.queue:
                name, t, nbytes = st.queue.popleft()
                st.held -= nbytes  # the consumer's now
                st.cv.notify_all()
                return name, t
            exc, st.closed = st.exc, True
            st.exc = None  # raised once; then the stream is just exhausted
        self._thread.join()
        if exc is not None:
            raise exc
        raise StopIteration

    def close(self):
        """Cancel the fetch (if it still runs), drop the tensors not yet
        taken and wait for the fetch thread to end: at once when it waits for
        room, else at the next verified chunk (within request_timeout_ms).
        Idempotent; also called by the with-block, garbage collection and
        interpreter exit."""
        st, thread = getattr(self, "_st", None), getattr(self, "_thread", None)
        if st is None or thread is None:  # __init__ failed: nothing started
            return
        with st.cv:
            st.closed = True
            self._cancel.set()
            st.held -= sum(nbytes for _, _, nbytes in st.queue)
            st.queue.clear()
            st.cv.notify_all()
        if thread is not threading.current_thread():  # gc may run on it
            thread.join()
        _live.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


@atexit.register
def _close_all():
    """Cancel streams still running at interpreter exit (their daemon threads
    would otherwise be frozen inside a fetch)."""
    for s in list(_live):
        s.close()


def check_max_bytes(max_bytes):
    if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 1:
        raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                    "iter_tensors: max_bytes=%r: want an integer >= 1 (bytes of verified "
                    "tensors held for the consumer; default %d)" % (max_bytes, DEFAULT_MAX_BYTES))
    return max_bytes
