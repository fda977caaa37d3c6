"""Exceptions: every libweights error becomes weightd.Error(code, name, message)."""

from . import _lib


class Error(Exception):
    """A libweights error: code (wt_err number), name ("WT_ENOTFOUND") and the
    library's message, which names the object and the fix."""

    def __init__(self, code, name, message):
        super().__init__("%s: %s" % (name, message))
        self.code = code
        self.name = name
        self.message = message


class Cancelled(Error):
    """WT_ECANCELED: the fetch was cancelled (Fetch.cancel(), or the progress
    callback raised Cancelled)."""


class MismatchError(Error):
    """fetch_into(): the destination tensors do not match the shard. mismatches
    lists one line per problem (missing or unexpected name, dtype, shape,
    layout); nothing was fetched."""

    def __init__(self, mismatches):
        self.mismatches = list(mismatches)
        super().__init__(_lib.WT_EINVAL, "WT_EINVAL",
                         "%d destination tensor mismatch(es):\n  %s" %
                         (len(self.mismatches), "\n  ".join(self.mismatches)))


def flag_partial(e, names):
    """Tell the engine which destinations a failed fetch_into / update_into
    left with partial bytes: e.partial (names, maybe empty) and, when there
    are any, the message (a weightd.Error's; other exceptions, say one raised
    from a progress callback, get a note)."""
    e.partial = list(names)
    if not e.partial:
        return
    note = ("partial bytes in %d destination(s), stale until fetch_into or an update "
            "that rewrites them: %s" % (len(e.partial), ", ".join(e.partial)))
    if isinstance(e, Error):
        e.message = "%s (%s)" % (e.message, note)
        e.args = ("%s: %s" % (e.name, e.message),)
    elif hasattr(e, "add_note"):  # Python 3.11+
        e.add_note(note)


def make(code, message):
    name = _lib.wt_errname(code).decode()
    cls = Cancelled if code == _lib.WT_ECANCELED else Error
    return cls(code, name, message)


def cstr(value, what):
    """value (str, or bytes as they are) as the C string libweights gets: a
    str is UTF-8 encoded; a NUL would end the C string early ("a\\0b" would
    name "a"), and anything else would fail deep inside as an AttributeError,
    so both are WT_EINVAL naming the argument."""
    if isinstance(value, str):
        try:
            b = value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise Error(_lib.WT_EINVAL, "WT_EINVAL", "%s %r: not encodable as UTF-8 (%s)" %
                        (what, value, e.reason)) from None
    elif isinstance(value, (bytes, bytearray)):
        b = bytes(value)
    else:
        raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                    "%s %r: want a str (or bytes), not %s" % (what, value, type(value).__name__))
    if b"\0" in b:
        raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                    "%s %r contains a NUL byte, where a C string ends; remove it" %
                    (what, value))
    return b


def check(rc, err):
    """Raise for a non-zero return code with the message of the wt_errbuf."""
    if rc != _lib.WT_OK:
        msg = err.msg.decode("utf-8", "replace") if err is not None else ""
        raise make(rc, msg or _lib.wt_strerror(rc).decode())


def sink_call(run, err, fn, *args):
    """Run a Python sink callback's body fn(*args) for libweights: WT_OK, or,
    when it raised, the exception kept in run (re-raised by the caller of the
    fetch) and its code (an Error's, else WT_EINVAL) with err[0] filled."""
    try:
        fn(*args)
        return _lib.WT_OK
    except BaseException as e:  # noqa: B902 - re-raised by the fetch's caller
        run.fail(e)
        code = e.code if isinstance(e, Error) else _lib.WT_EINVAL
        err[0].code = code
        err[0].msg = ("python sink: %s: %s" % (type(e).__name__, e)).encode()[:500]
        return code
