"""Layouts and manifests: the rank a fetch asks for and what it will get."""

import ctypes
from collections import namedtuple

from . import _lib
from .errors import Error, check, cstr

_DTYPES = {"source": 0, "fp32": 2, "fp16": 3, "bf16": 4}
_W13 = {"gate_up": 0, "up_gate": 1}
_REQUANT = {"deny": 0, "allow": 1}
LAYOUT_KEYS = ("tp_size", "tp_rank", "ep_size", "ep_rank", "quant", "dtype", "group_size",
               "vocab_pad", "w13_order", "requant", "exclude", "include", "mode")
MODES = ("auto", "partitioned", "raw")

TensorInfo = namedtuple("TensorInfo", "name dtype dtype_code shape nbytes hash role "
                        "requantized n_chunks")
TensorInfo.__doc__ = """One runtime tensor of a manifest: dtype is the safetensors
name ("BF16"), dtype_code the wt_dtype number, shape a tuple, hash the XXH3-128
in hex, role "weight" / "scale" / "bias" / "input_scale"."""

ModelInfo = namedtuple("ModelInfo", "name uri revision architecture checkpoint_bytes "
                       "n_tensors available error source config_override",
                       defaults=("",))
ModelInfo.__doc__ = """A model the daemon serves (wt_model_info): config_override is the
configuration override it is served under (canonical JSON, "" for none)."""

AdminResult = namedtuple("AdminResult", "text bytes shards chunks bad disk_bytes disk_before "
                         "rewritten")
AdminResult.__doc__ = """What an admin operation answered (wt_admin_result): the
server's text and its counters (register: bytes = checkpoint bytes; stats: cache
bytes, shards, chunks, corruptions in bad, disk_bytes; verify: bad chunks;
reclaim: disk_before, disk_bytes after, rewritten)."""


def _pick(table, what, value):
    if value not in table:
        raise Error(_lib.WT_EINVAL, "WT_EINVAL", "layout %s %r: use one of %s" %
                    (what, value, ", ".join(table)))
    return table[value]


class LayoutArg:
    """A wt_layout built from keyword arguments (docs/format.md section 1); the
    exclude strings live as long as this object."""

    def __init__(self, tp_size=1, tp_rank=0, ep_size=1, ep_rank=0, quant="none",
                 dtype="source", group_size=128, vocab_pad=64, w13_order="gate_up",
                 requant="deny", exclude=(), include=(), raw=False):
        lay = _lib.Layout()
        _lib.wt_layout_init(ctypes.byref(lay))
        self.c = lay
        err = _lib.ErrBuf()
        q = ctypes.c_int()
        check(_lib.wt_quant_from_name(cstr(str(quant), "quant"), ctypes.byref(q), ctypes.byref(err)),
              err)
        for k, v in (("tp_size", tp_size), ("tp_rank", tp_rank), ("ep_size", ep_size),
                     ("ep_rank", ep_rank), ("group_size", group_size),
                     ("vocab_pad", vocab_pad)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v > 0xFFFFFFFF:
                raise Error(_lib.WT_EINVAL, "WT_EINVAL",
                            "layout %s=%r: want an integer 0..2^32-1" % (k, v))
            setattr(lay, k, v)
        lay.quant = q.value
        lay.dtype = _pick(_DTYPES, "dtype", dtype)
        lay.w13_up_gate = _pick(_W13, "w13_order", w13_order)
        lay.requant_allow = _pick(_REQUANT, "requant", requant)
        if isinstance(exclude, str):
            exclude = [exclude]
        for pat in exclude:
            check(_lib.wt_layout_add_exclude(ctypes.byref(lay), cstr(pat, "exclude pattern"),
                                             ctypes.byref(err)), err)
        lay.raw = 1 if raw else 0
        if isinstance(include, str):
            include = [include]
        for name in include:
            check(_lib.wt_layout_add_include(ctypes.byref(lay), cstr(name, "include name"),
                                             ctypes.byref(err)), err)
        check(_lib.wt_layout_check(ctypes.byref(lay), ctypes.byref(err)), err)

    def __del__(self):
        if getattr(self, "c", None) is not None:
            _lib.wt_layout_clear(ctypes.byref(self.c))
            self.c = None


def _s(b):
    return b.decode("utf-8", "replace") if b is not None else None


class Manifest:
    """One rank's manifest (validated by libweights). Read-only; the C manifest
    is freed with the object (or close())."""

    def __init__(self, ptr):
        self._ptr = ptr
        m = ptr
        self.model = _s(_lib.wt_manifest_model(m))
        self.revision = _s(_lib.wt_manifest_revision(m))
        self.layout_text = _s(_lib.wt_manifest_layout_text(m))
        self.tp_rank = _lib.wt_manifest_tp_rank(m)
        self.ep_rank = _lib.wt_manifest_ep_rank(m)
        self.format_version = _lib.wt_manifest_format_version(m)
        self.total_bytes = _lib.wt_manifest_total_bytes(m)
        self.checkpoint_bytes = _lib.wt_manifest_checkpoint_bytes(m)
        self.n_chunks = _lib.wt_manifest_n_chunks(m)
        self.tied_lm_head = bool(_lib.wt_manifest_tied_lm_head(m))
        # a live manifest (cut-through): the layout was still being produced
        self.live = bool(_lib.wt_manifest_live(m))
        # "partitioned" or "raw", and why ("" when that mode was asked for)
        self.mode = "raw" if _lib.wt_manifest_mode(m) == 2 else "partitioned"
        self.mode_reason = _s(_lib.wt_manifest_mode_reason(m))
        self.skipped = [_s(_lib.wt_manifest_skipped(m, i))
                        for i in range(_lib.wt_manifest_n_skipped(m))]
        self.tensors = [self._tensor(i) for i in range(_lib.wt_manifest_n_tensors(m))]
        self._by_name = {t.name: i for i, t in enumerate(self.tensors)}

    def _tensor(self, i):
        ti = _lib.TensorInfo()
        check(_lib.wt_manifest_tensor(self._ptr, i, ctypes.byref(ti)), None)
        hexbuf = (ctypes.c_char * 33)()
        _lib.wt_hash_hex(ti.hash, hexbuf)
        return TensorInfo(_s(ti.name), _s(_lib.wt_dtype_name(ti.dtype)), ti.dtype,
                          tuple(ti.shape[:ti.ndim]), ti.nbytes, hexbuf.value.decode(),
                          _s(_lib.wt_tensor_role_name(ti.role)), bool(ti.requantized),
                          ti.n_chunks)

    def __getitem__(self, name):
        return self.tensors[self._by_name[name]]

    def __contains__(self, name):
        return name in self._by_name

    def __len__(self):
        return len(self.tensors)

    def __repr__(self):
        return "<weightd.Manifest %s %s tp_rank=%d ep_rank=%d: %d tensors, %d bytes>" % (
            self.model, self.layout_text, self.tp_rank, self.ep_rank, len(self.tensors),
            self.total_bytes)

    def close(self):
        if getattr(self, "_ptr", None):
            _lib.wt_manifest_free(self._ptr)
            self._ptr = None

    __del__ = close
