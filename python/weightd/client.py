"""Client: models, manifests, fetch (zero copy), fetch_into, async + cancel."""

import ctypes
import json
import logging
import threading
import weakref

from . import _arrays, _lib
from .errors import Cancelled, Error, check, cstr, flag_partial, make
from .manifest import LAYOUT_KEYS, MODES, AdminResult, LayoutArg, Manifest, ModelInfo, _s
from .stream import DEFAULT_MAX_BYTES, TensorStream, check_max_bytes

WAIT_STEP_MS = 100  # _run_fetch: how often a waiting fetch looks at cancel() and signals
_ADMIN_OPS = {"stats": 1, "warm": 2, "evict": 3, "verify": 4, "reclaim": 7}

_OPTS = ("connect_timeout_ms", "request_timeout_ms", "manifest_timeout_ms", "window",
         "connections", "max_retries", "backoff_initial_ms", "backoff_max_ms",
         "max_message_bytes", "hash_refetch", "retry_budget_ms", "cut_through", "stream")


def _opt_value(name, v):
    """v checked against the range of wt_client_opts member name: ctypes would
    store it modulo 2^bits (window=2**32 + 8 would become 8, -1 a huge
    timeout), so anything outside is WT_EINVAL naming the option. The int
    flags (cut_through, stream) also take a bool."""
    ctype = dict(_lib.ClientOpts._fields_)[name]
    flag = ctype is _lib.c_int
    if flag and isinstance(v, bool):
        return int(v)
    bits = 8 * ctypes.sizeof(ctype)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if flag else (0, (1 << bits) - 1)
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                    "weightd.Client: %s=%r: want an integer %d..%d" % (name, v, lo, hi))
    return v


class Shard(dict):
    """What Client.fetch() returns: {runtime name: array or tensor}, in manifest
    order, every value a view of the library's host buffers (no copy). The
    buffers are freed when the last of this dict and its arrays is gone.
    manifest: the Manifest; stats: the wt_fetch_stats as a dict (None for a
    Shard from weightd.receive_broadcast: no fetch ran)."""

    def __init__(self, owner, manifest, stats):
        super().__init__()
        self._owner = owner
        self.manifest = manifest
        self.stats = stats
        self.mode = manifest.mode  # "partitioned" or "raw"
        self.mode_reason = manifest.mode_reason

    def address(self, name):
        """Address of tensor name's bytes inside libweights (wt_host_sink_find):
        what every returned array points at."""
        return self._owner.find(name)[0]


def want_torch(as_torch):
    """as_torch as fetch() takes it (None: torch when it imports) -> bool."""
    if as_torch is None:
        return _arrays.torch is not None
    if as_torch and _arrays.torch is None:
        raise ImportError("weightd: as_torch=True but torch does not import")
    return bool(as_torch)


def make_shard(host, m, stats, as_torch):
    """The Shard of manifest m over the buffers of host (a filled _HostSink)."""
    out = Shard(host, m, stats)
    for t in m.tensors:
        addr, n = host.find(t.name)
        out[t.name] = _arrays.wrap(host, addr, n, t.dtype_code, t.shape, as_torch)
    return out


class _HostSink:
    def __init__(self):
        self.h = ctypes.c_void_p()
        err = _lib.ErrBuf()
        check(_lib.wt_host_sink_create(ctypes.byref(self.h), ctypes.byref(err)), err)

    def sink(self):
        return _lib.wt_host_sink_sink(self.h)

    def find(self, name):
        data, n = ctypes.c_void_p(), ctypes.c_uint64()
        rc = _lib.wt_host_sink_find(self.h, cstr(name, "tensor name"), ctypes.byref(data),
                                    ctypes.byref(n))
        check(rc, None)
        return data.value or 0, n.value

    def __del__(self):
        if getattr(self, "h", None):
            _lib.wt_host_sink_destroy(self.h)
            self.h = None


class _Run:
    """One fetch's progress callback, cancel flag and captured exception."""

    def __init__(self, progress, cancel_event, handle=None):
        self.progress = progress
        self.cancel = cancel_event or threading.Event()
        self.handle = handle
        self.exc = None
        self.c_progress = _lib.ProgressFn(self._cb)

    def _cb(self, _ctx, done, total):
        if self.handle is not None:
            self.handle.bytes_done, self.handle.bytes_total = done, total
        try:
            if self.progress is not None:
                self.progress(done, total)
        except BaseException as e:  # noqa: B902 - re-raised by finish()
            self.exc = e
            return 1
        return 1 if self.cancel.is_set() else 0

    def fail(self, exc):
        if self.exc is None:
            self.exc = exc

    def finish(self, rc, err):
        if rc == _lib.WT_OK:
            return
        if self.exc is not None:
            raise self.exc from make(rc, err.msg.decode("utf-8", "replace"))
        if rc == _lib.WT_ECANCELED and self.cancel.is_set():
            raise Cancelled(rc, "WT_ECANCELED", "fetch cancelled by Fetch.cancel()")
        check(rc, err)


class Fetch:
    """A fetch running on its own thread (Client.fetch_async / fetch_into_async).
    cancel() from any thread stops it at the next verified chunk, or within
    about 0.1 s while it waits for one; result() then raises
    weightd.Cancelled."""

    def __init__(self, fn):
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._result = self._exc = None
        self.bytes_done = self.bytes_total = 0
        self._thread = threading.Thread(target=self._main, args=(fn,), daemon=True)
        self._thread.start()

    def _main(self, fn):
        try:
            self._result = fn(self._cancel, self)
        except BaseException as e:  # noqa: B902 - handed to result()
            self._exc = e
        finally:
            self._done.set()

    def cancel(self):
        self._cancel.set()

    def done(self):
        return self._done.is_set()

    def result(self, timeout=None):
        if not self._done.wait(timeout):
            raise TimeoutError("weightd: fetch still running after %s s" % timeout)
        self._thread.join()
        if self._exc is not None:
            raise self._exc
        return self._result


def _override(arr, n, i):
    """The configuration override of entry i of a model list ("" before libweights 1.10)."""
    if _lib.wt_model_list_override is None:
        return ""
    return _s(_lib.wt_model_list_override(arr, n, i))


class Client:
    """A libweights client. endpoints: one "tcp://host:port" / "ipc:///path" or
    a list (fail-over in rendezvous order). Other keywords are wt_client_opts
    members (connect_timeout_ms, window, connections, max_retries, retry_budget_ms,
    ...). cut_through=1: a layout still being produced is answered with a live
    manifest (Manifest.live) and fetched chunk by chunk as it is produced; every
    chunk and tensor is still checked (docs/client.md "Cut-through serving"). stream=1
    (libweights 1.2): chunk bytes on the server's bulk stream when it offers one,
    else messages (docs/client.md "Bulk data plane")."""

    def __init__(self, endpoints, token=None, client_id=None, **opts):
        if isinstance(endpoints, str):
            endpoints = [endpoints]
        endpoints = [cstr(e, "endpoint") for e in endpoints]
        o = _lib.versioned(_lib.ClientOpts, _lib.wt_client_opts_init)
        eps = (ctypes.c_char_p * max(len(endpoints), 1))(*endpoints)
        o.endpoints, o.n_endpoints = eps, len(endpoints)
        o.token = cstr(token, "token") if token is not None else None
        o.client_id = cstr(client_id, "client_id") if client_id is not None else b"weightd-python"
        for k, v in opts.items():
            if k not in _OPTS:
                raise TypeError("weightd.Client: unknown option %r (known: %s)" %
                                (k, ", ".join(_OPTS)))
            setattr(o, k, _opt_value(k, v))
        self._c = ctypes.c_void_p()
        self._lock = threading.Lock()
        self._active = 0
        self._streams = weakref.WeakSet()  # iter_tensors streams, closed by close()
        err = _lib.ErrBuf()
        check(_lib.wt_client_open(ctypes.byref(self._c), ctypes.byref(o), ctypes.byref(err)), err)

    # ---- lifetime ----
    def close(self):
        """Close the connections. iter_tensors streams still open are closed
        first (an exception raised inside their loop keeps them referenced by
        its traceback); fails with WT_EBUSY while another fetch runs."""
        for s in list(getattr(self, "_streams", ())):
            s.close()
        with self._lock:
            if self._active:
                raise Error(_lib.WT_EBUSY, "WT_EBUSY", "weightd.Client.close(): %d call(s) still "
                            "running; cancel them and wait for result() first" % self._active)
            if getattr(self, "_c", None):
                _lib.wt_client_close(self._c)
                self._c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_c", None) and not self._active:
            _lib.wt_client_close(self._c)
            self._c = None

    def _enter(self):
        with self._lock:
            if not self._c:
                raise Error(_lib.WT_ECLOSED, "WT_ECLOSED", "weightd.Client is closed")
            self._active += 1

    def _leave(self):
        with self._lock:
            self._active -= 1

    # ---- models and manifests ----
    def models(self):
        """The models of the first reachable endpoint: a list of ModelInfo."""
        arr, n, err = ctypes.POINTER(_lib.ModelInfo)(), ctypes.c_size_t(), _lib.ErrBuf()
        self._enter()
        try:
            rc = _lib.wt_client_list_models(self._c, ctypes.byref(arr), ctypes.byref(n),
                                            ctypes.byref(err))
        finally:
            self._leave()
        check(rc, err)
        try:
            return [ModelInfo(_s(m.name), _s(m.uri), _s(m.revision), _s(m.architecture),
                              m.checkpoint_bytes, m.n_tensors, bool(m.available),
                              _s(m.error), _s(m.source),
                              _override(arr, n, i))
                    for i, m in enumerate(arr[:n.value])]
        finally:
            _lib.wt_model_list_free(arr, n)

    # ---- admin (storage teams; every op but stats needs the admin token) ----
    def _admin_call(self, fn, *args):
        res, err = _lib.AdminResult(), _lib.ErrBuf()
        self._enter()
        try:
            rc = fn(self._c, *args, ctypes.byref(res), ctypes.byref(err))
        finally:
            self._leave()
        check(rc, err)
        try:
            text = _s(ctypes.string_at(res.text)) if res.text else ""
            return AdminResult(text, res.bytes, res.shards, res.chunks, res.bad,
                               res.disk_bytes, res.disk_before, res.rewritten)
        finally:
            _lib.wt_admin_result_clear(ctypes.byref(res))

    def admin(self, op, model=None, **layout):
        """An admin operation on the first reachable endpoint: op is "stats",
        "warm", "evict", "verify" or "reclaim". model narrows warm (which needs
        it, with layout keywords as manifest() takes them: the layout to
        produce into the cache) and evict (every cached shard of the model).
        Returns an AdminResult (evict: bad counts the shards left cached
        because readers had them open; evict again later)."""
        if op not in _ADMIN_OPS:
            raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                        "admin op %r: use one of %s (register() and unregister() for "
                        "those)" % (op, ", ".join(_ADMIN_OPS)))
        if layout and op != "warm":
            raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                        "admin %r takes no layout keywords (%s); only warm does" %
                        (op, ", ".join(layout)))
        if layout and not model:
            raise Error(_lib.WT_EINVAL, "WT_EINVAL", "admin warm: layout keywords need a model")
        lay = LayoutArg(**layout) if layout else None
        return self._admin_call(_lib.wt_client_admin, _ADMIN_OPS[op],
                                cstr(model, "model") if model else None,
                                ctypes.byref(lay.c) if lay else None)

    def register(self, model, uri, progress=None, config_override=None):
        """Register model -> uri (file:///dir, s3://bucket/prefix, http(s)://) on
        the first reachable endpoint and return its AdminResult (text names the
        revision; bytes = checkpoint bytes). The server reads a new checkpoint
        whole for its revision (minutes for a large remote one): this returns
        when that ends, and progress(read, total) (optional) is called about
        once a second meanwhile, total 0 until known. An exception raised by
        progress, or Ctrl-C, stops the waiting within a second and is raised
        here; the registration goes on in the server (unregister() cancels
        it). With a libweights older than 1.4 progress is never called.
        config_override (libweights 1.9): a dict (or its JSON text) merged over
        the checkpoint's config.json as vLLM's hf_overrides, e.g.
        {"architectures": ["DeepSeekMTPModel"]}; part of the registration and
        of the revision."""
        override = None
        if config_override is not None:
            if _lib.wt_client_register_override is None:
                raise make(_lib.WT_EUNSUPPORTED, "config_override needs libweights 1.9 or newer")
            text = (config_override if isinstance(config_override, str)
                    else json.dumps(config_override, sort_keys=True))
            override = cstr(text, "config_override")
        if _lib.wt_client_register_progress is None:  # libweights < 1.4
            return self._admin_call(_lib.wt_client_register, cstr(model, "model"),
                                    cstr(uri, "uri"))
        cmodel, curi = cstr(model, "model"), cstr(uri, "uri")
        stop, raised, done = threading.Event(), [], {}

        def cb(_ctx, read, total):  # on the worker thread below
            if stop.is_set():
                return 1
            if progress is not None:
                try:
                    progress(read, total)
                except BaseException as e:  # raised by register(), not inside ctypes
                    raised.append(e)
                    return 1
            return 0

        fn = _lib.RegisterProgressFn(cb)

        ended = threading.Event()

        def run():
            try:
                if override is not None:
                    done["out"] = self._admin_call(_lib.wt_client_register_override,
                                                   cmodel, curi, override, fn, None)
                else:
                    done["out"] = self._admin_call(_lib.wt_client_register_progress,
                                                   cmodel, curi, fn, None)
            except BaseException as e:
                done["err"] = e
            finally:
                ended.set()

        # the call runs on a thread so that Ctrl-C reaches the caller here; the
        # callback then tells the library to stop waiting. Waited for on an
        # Event: a Thread.join interrupted by a signal's exception can take the
        # running thread for ended (CPython 3.11), and the call went on after
        # register() had raised
        threading.Thread(target=run, name="weightd-register", daemon=True).start()
        try:
            while not ended.wait(0.1):
                pass
        except BaseException:
            stop.set()
            ended.wait()
            raise
        if raised:
            raise raised[0]
        if "err" in done:
            raise done["err"]
        return done["out"]

    def unregister(self, model):
        """Remove a model added by register() (one being registered too: its
        open is canceled); its cached shards stay until admin("evict",
        model). Returns the AdminResult."""
        return self._admin_call(_lib.wt_client_unregister, cstr(model, "model"))

    def manifest(self, model, mode="partitioned", **layout):
        """The manifest of one rank. layout keywords: tp_size, tp_rank, ep_size,
        ep_rank, quant ("none", "fp8-block", ...), dtype ("source", "bf16",
        "fp16", "fp32"), group_size, vocab_pad, w13_order, requant, exclude,
        include (raw: the checkpoint names to serve). mode: "partitioned" (the
        layout; a model the planner refuses raises its error), "raw" (the
        checkpoint's own tensors, unmodified; the other layout keywords are
        ignored) or "auto" (partitioned, raw when the server refuses the
        layout with WT_EUNSUPPORTED or WT_ELAYOUT; logged on the "weightd"
        logger). The result's .mode / .mode_reason say which and why."""
        if mode not in MODES:
            raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                        "mode %r: use one of %s" % (mode, ", ".join(MODES)))
        include = layout.pop("include", ())
        if mode == "raw":
            return self._get(model, LayoutArg(raw=True, include=include))
        if include:
            raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                        "include names tensors of mode='raw' only (auto: of its fallback)"
                        if mode == "partitioned" else
                        "include with mode='auto' would only apply to the raw fallback; "
                        "use mode='raw'")
        if mode == "partitioned":
            return self._get(model, LayoutArg(**layout))
        try:
            return self._get(model, LayoutArg(**layout))
        except Error as e:
            if e.code not in (_lib.WT_EUNSUPPORTED, _lib.WT_ELAYOUT):
                raise
            reason = "partitioned refused (%s): %s" % (e.name, e.message)
        logging.getLogger("weightd").warning(
            "model '%s': mode auto: serving raw tensors: %s", model, reason)
        m = self._get(model, LayoutArg(raw=True))
        m.mode_reason = reason
        return m

    def _get(self, model, lay):
        out, err = ctypes.c_void_p(), _lib.ErrBuf()
        self._enter()
        try:
            rc = _lib.wt_client_get_manifest(self._c, cstr(model, "model"), ctypes.byref(lay.c),
                                             ctypes.byref(out), ctypes.byref(err))
        finally:
            self._leave()
        check(rc, err)
        return Manifest(out.value)

    def _resolve(self, source, layout):
        if isinstance(source, Manifest):
            if layout:
                raise TypeError("weightd: layout keywords (%s) come with a model name, not "
                                "with a Manifest" % ", ".join(layout))
            return source
        if not isinstance(source, str):
            raise TypeError("weightd: want a model name or a Manifest, got %r" % (source,))
        if "broadcast" in layout:
            raise TypeError("weightd: broadcast= is taken by fetch() only (the root's rank "
                            "arrives as a Shard in libweights' host buffers)")
        bad = [k for k in layout if k not in LAYOUT_KEYS]
        if bad:
            raise TypeError("weightd: unknown keyword(s) %s" % ", ".join(bad))
        return self.manifest(source, **layout)

    def _run_fetch(self, m, sink, fo, run, err):
        """wt_client_fetch on libweights' own thread (wt_client_fetch_start)
        while this thread waits in steps of WAIT_STEP_MS: Fetch.cancel() and
        any exception raised here meanwhile (KeyboardInterrupt, a signal
        handler's) stop it within about that long, even while it waits for a
        server that stopped answering (wt_fetch_cancel); a blocking
        wt_client_fetch would hold them until its next chunk or its request
        timeout. Returns wt_client_fetch's code."""
        h = ctypes.c_void_p()
        rc = _lib.wt_client_fetch_start(self._c, m._ptr, sink, ctypes.byref(fo), None,
                                        ctypes.byref(h), ctypes.byref(err))
        if rc != _lib.WT_OK:
            return rc
        result = ctypes.c_int(_lib.WT_OK)
        try:
            while True:
                if run.cancel.is_set():
                    _lib.wt_fetch_cancel(h)  # a no-op once asked
                if _lib.wt_fetch_wait(h, WAIT_STEP_MS, ctypes.byref(result),
                                      ctypes.byref(err)) == _lib.WT_OK:
                    break
        except BaseException:
            _lib.wt_fetch_cancel(h)
            raise
        finally:
            _lib.wt_fetch_free(h)  # waits for the end (the sink and opts stay alive)
        return result.value

    def _fetch(self, m, sink, run):
        """wt_client_fetch into sink; returns the stats dict."""
        fo = _lib.versioned(_lib.FetchOpts, _lib.wt_fetch_opts_init)
        stats = _lib.FetchStats()
        fo.progress = run.c_progress
        fo.stats = ctypes.pointer(stats)
        err = _lib.ErrBuf()
        if run.cancel.is_set():
            raise Cancelled(_lib.WT_ECANCELED, "WT_ECANCELED",
                            "fetch cancelled by Fetch.cancel() before it started")
        self._enter()
        try:
            rc = self._run_fetch(m, sink, fo, run, err)
        finally:
            self._leave()
        run.finish(rc, err)
        return {k: getattr(stats, k) for k in ("bytes", "chunks", "retries", "refetches",
                                                 "failovers", "reconnects")} | {
            "endpoint": stats.endpoint.decode("utf-8", "replace")}

    # ---- fetch ----
    def fetch(self, source, *, progress=None, as_torch=None, broadcast=None, _cancel=None,
              _handle=None, **layout):
        """Fetch one rank (source: a model name with layout keywords, or a
        Manifest) into libweights' host buffers and return a Shard: {name:
        tensor} viewing those buffers, no copy. as_torch: None = torch tensors
        when torch imports, else numpy (dtypes: weightd._arrays). progress:
        callable(bytes_done, bytes_total) after each verified chunk; raising
        from it cancels the fetch and the exception propagates. broadcast: a
        weightd.BroadcastRoot; the fetch first waits for its replicas to join,
        then sends them every verified chunk (weightd/bcast.py); its .result
        tells how many got everything."""
        as_torch = want_torch(as_torch)
        m = self._resolve(source, layout)
        run = _Run(progress, _cancel, _handle)
        if broadcast is None:
            host = _HostSink()
            stats = self._fetch(m, host.sink(), run)
        else:
            from .bcast import BroadcastRoot

            if not isinstance(broadcast, BroadcastRoot):
                raise TypeError("weightd: broadcast=%r: want a weightd.BroadcastRoot" %
                                (broadcast,))
            host, stats = broadcast._run(lambda sink: self._fetch(m, sink, run))
        return make_shard(host, m, stats, as_torch)

    def fetch_into(self, tensors, source, *, progress=None, strict=True, _cancel=None,
                   _handle=None, **layout):
        """Write one rank's shard straight into tensors the engine allocated:
        {runtime name: torch.Tensor (CPU or CUDA) or numpy array}. Names, dtypes,
        shapes and contiguity are checked first; any mismatch raises
        MismatchError listing each one, before any byte is fetched (strict:
        names the shard lacks are mismatches too). On a failure during the fetch
        the destinations hold partial data, not all of it verified (with
        stream=1, chunks are received straight into host destinations and
        checked there): the exception's partial lists the destinations it
        touched, which update_into then refuses to leave as they are (see
        there) until a fetch_into succeeds. Returns the stats dict."""
        from .into import IntoSink, check_dests, stale_clear  # torch-aware; imported on use

        m = self._resolve(source, layout)
        dests = check_dests(m, tensors, strict)
        run = _Run(progress, _cancel, _handle)
        sink = IntoSink(m, dests, run, in_place=True)
        try:
            stats = self._fetch(m, ctypes.byref(sink.c_sink), run)
        except BaseException as e:  # noqa: B902 - re-raised, with what it left partial
            flag_partial(e, sink.partial())
            raise
        stale_clear(sink.spans)
        return stats

    def iter_tensors(self, source, *, max_bytes=DEFAULT_MAX_BYTES, progress=None,
                     as_torch=None, **layout):
        """Stream one rank as (runtime name, tensor) pairs in manifest order,
        each yielded as soon as libweights verified its XXH3-128: the shape of
        vLLM's model.load_weights(weights) (sglang likewise). The fetch runs on
        a thread of its own while the engine copies; returns a TensorStream
        (an iterator; close() or a with-block; python/weightd/stream.py).

        Memory: at most max_bytes of tensors verified but not yet taken, plus
        the one being received, are held (a tensor larger than max_bytes is
        still allowed, alone; with stream=1, libweights 1.3, chunks are
        received straight into the tensors' buffers, nothing copied, and
        buffers allocated ahead for that stay within max_bytes); when full, the fetch thread waits, the consumer
        never does beyond the next verified tensor. Besides that, libweights
        holds its window of chunks in flight (window x chunk bytes). A tensor
        handed out is the consumer's (its own host buffer, torch or numpy as
        fetch() gives): kept or dropped, nothing else refers to it.
        progress(bytes_done, bytes_total) as fetch(), on the fetch thread.

        The manifest is asked for here (a bad layout raises now). A failure
        later (hash mismatch, server gone, an exception from progress) is
        raised by next() after the tensors verified before it: no unverified
        tensor is ever yielded. Breaking out of the loop and dropping the
        stream, close(), garbage collection or interpreter exit cancel the
        fetch and end its thread (at once when it waits for room, else at the
        next verified chunk); so does close() of this client."""
        check_max_bytes(max_bytes)
        if as_torch is None:
            as_torch = _arrays.torch is not None
        elif as_torch and _arrays.torch is None:
            raise ImportError("weightd: as_torch=True but torch does not import")
        m = self._resolve(source, layout)
        s = TensorStream(self, m, max_bytes, progress, as_torch)
        self._streams.add(s)
        return s

    def fetch_async(self, source, **kw):
        """fetch() on a new thread; returns a Fetch (cancel(), result())."""
        return Fetch(lambda cancel, h: self.fetch(source, _cancel=cancel, _handle=h, **kw))

    def fetch_into_async(self, tensors, source, **kw):
        """fetch_into() on a new thread; returns a Fetch (cancel(), result())."""
        return Fetch(lambda cancel, h: self.fetch_into(tensors, source, _cancel=cancel,
                                                       _handle=h, **kw))

    # ---- online updates (weightd.update) ----
    def watch(self, model, known_revision=None, timeout_ms=0):
        """(revision, changed): the current revision of model, or (with
        known_revision = the current one) the next one, waiting up to timeout_ms."""
        from .update import watch

        return watch(self, model, known_revision, timeout_ms)

    def update_into(self, tensors, old, new, *, progress=None, strict=True):
        """Update tensors holding manifest old's rank to manifest new in place,
        fetching only the changed tensors; returns the update report (dict).
        WT_ELAYOUT (weightd.Error) when a full reload is needed."""
        from .update import update_into

        return update_into(self, tensors, old, new, progress, strict)

