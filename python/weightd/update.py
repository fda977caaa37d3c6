"""Online weight updates from Python: watch for a model's next revision and
update tensors an engine already holds in place, fetching only the tensors
whose content hash changed (C: wt_client_watch, wt_manifest_delta,
wt_client_fetch_update)."""

import ctypes
from types import SimpleNamespace

from . import _lib
from .errors import check, cstr, flag_partial, make


def watch(client, model, known_revision=None, timeout_ms=0):
    """(revision, changed): the model's current revision; with known_revision
    equal to it, the server holds the request until the next revision appears
    or timeout_ms passes (capped at 60000 by the server)."""
    out, changed, err = (ctypes.c_char * 65)(), ctypes.c_int(), _lib.ErrBuf()
    known = cstr(known_revision or "", "known_revision")
    cmodel = cstr(model, "model")
    client._enter()
    try:
        rc = _lib.wt_client_watch(client._c, cmodel, known, int(timeout_ms), out,
                                  ctypes.byref(changed), ctypes.byref(err))
    finally:
        client._leave()
    check(rc, err)
    return out.value.decode(), bool(changed.value)


def delta(old, new):
    """Indices into new.tensors of the tensors whose bytes differ from old's.
    Error WT_ELAYOUT (full reload needed) when an in-place update is impossible."""
    n = max(len(new.tensors), 1)
    flags, err = (ctypes.c_uint8 * n)(), _lib.ErrBuf()
    check(_lib.wt_manifest_delta(old._ptr, new._ptr, flags, None, None, ctypes.byref(err)),
          err)
    return [i for i in range(len(new.tensors)) if flags[i]]


def update_into(client, tensors, old, new, progress=None, strict=True):
    """Bring tensors (the engine's own, holding old's rank: {name: torch.Tensor
    on CPU or CUDA, or numpy array}) to manifest new, in place: only the
    tensors whose hash changed are fetched and written, straight into their
    existing storage. Every destination is checked against new first
    (MismatchError listing each problem). Returns the update report as a dict
    (revision_before/after, tensors_total/updated, bytes_total/updated,
    elapsed_us, plus the fetch stats).

    Bytes are written as they are verified: when the update fails, the
    exception's partial lists the destinations it began (they may hold bytes
    of both revisions; also in the message) and they stay stale, by memory
    (device, address, size: whatever dict or view holds them), until a
    successful fetch_into or an update_into that rewrites them. An update_into
    that does not rewrite every stale destination among tensors (say, to a
    revision that reverted them, or with nothing changed) is refused with
    weightd.Error WT_ELAYOUT naming one, before anything moves, never a
    success over a mix of revisions (C: wt_host_sink_update_sink)."""
    from .client import _Run
    from .into import IntoSink, _span, check_dests, stale_clear, stale_find
    from .manifest import Manifest

    if not isinstance(old, Manifest) or not isinstance(new, Manifest):
        raise TypeError("weightd.update_into: old and new must be Manifests "
                        "(client.manifest(...)), got %s and %s" %
                        (type(old).__name__, type(new).__name__))
    dests = check_dests(new, tensors, strict)
    changed = delta(old, new)
    hit = stale_find([t.name for t in new.tensors],
                     [_span(d, t.nbytes) for t, d in zip(new.tensors, dests)], set(changed))
    if hit is not None:
        raise make(_lib.WT_ELAYOUT,
                   "update %s -> %s: tensor '%s' holds bytes of no one revision (a failed "
                   "update or fetch_into began writing it%s) and this update does not "
                   "rewrite it: fetch the rank in full (fetch_into) or update to a revision "
                   "that changes it; nothing written" % (
                       old.revision, new.revision, hit[0],
                       "" if hit[1] == hit[0] else " as '%s'" % hit[1]))
    sub = SimpleNamespace(tensors=[new.tensors[i] for i in changed])
    run = _Run(progress, None)
    sink = IntoSink(sub, [dests[i] for i in changed], run)
    fo = _lib.versioned(_lib.FetchOpts, _lib.wt_fetch_opts_init)
    stats, report, err = _lib.FetchStats(), _lib.UpdateReport(), _lib.ErrBuf()
    fo.progress = run.c_progress
    fo.stats = ctypes.pointer(stats)
    client._enter()
    try:
        # on a helper thread: an exception here (Ctrl-C) stops it at once
        rc = _lib.run_interruptible(fo, lambda: _lib.wt_client_fetch_update(
            client._c, old._ptr, new._ptr, ctypes.byref(sink.c_sink), ctypes.byref(fo),
            ctypes.byref(report), ctypes.byref(err)))
        run.finish(rc, err)
    except BaseException as e:  # noqa: B902 - re-raised, with what it left partial
        flag_partial(e, sink.partial())
        raise
    finally:
        client._leave()
    stale_clear(sink.spans)
    out = {k: getattr(report, k) for k in ("tp_rank", "ep_rank", "tensors_total",
                                            "tensors_updated", "bytes_total", "bytes_updated",
                                            "elapsed_us")}
    out["revision_before"] = report.revision_before.decode()
    out["revision_after"] = report.revision_after.decode()
    out["changed"] = [new.tensors[i].name for i in changed]
    out["fetched_bytes"] = stats.bytes
    return out
