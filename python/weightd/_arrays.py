"""dtype mapping and zero-copy wrapping of library memory as numpy / torch.

What a fetch returns per shard dtype (docs/engines.md "Python"):

    shard dtype   numpy (no torch, or as_torch=False)   torch
    F64 F32 F16   float64 float32 float16               float64 float32 float16
    BF16          uint16 (raw bfloat16 bits)            bfloat16
    F8_E4M3       uint8 (raw e4m3fn bytes)              float8_e4m3fn (torch >= 2.1), else uint8
    F8_E5M2       uint8 (raw e5m2 bytes)                float8_e5m2 (torch >= 2.1), else uint8
    I64 I32 I16   int64 int32 int16                     same
    I8 U8 BOOL    int8 uint8 bool                       same
"""

import numpy as np

F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I16, I8, U8, BOOL = range(1, 13)

# numpy dtype a caller sees without torch
NUMPY = {F64: np.float64, F32: np.float32, F16: np.float16, BF16: np.uint16,
         F8_E4M3: np.uint8, F8_E5M2: np.uint8, I64: np.int64, I32: np.int32,
         I16: np.int16, I8: np.int8, U8: np.uint8, BOOL: np.bool_}
# numpy dtype torch.from_numpy accepts (torch 1.13 has no uint16)
_FOR_TORCH = {**NUMPY, BF16: np.int16}

try:
    import torch
except ImportError:  # numpy only
    torch = None


def torch_dtype(dt):
    """The torch dtype fetch() returns for shard dtype dt."""
    t = torch
    table = {F64: t.float64, F32: t.float32, F16: t.float16, BF16: t.bfloat16,
             F8_E4M3: getattr(t, "float8_e4m3fn", t.uint8),
             F8_E5M2: getattr(t, "float8_e5m2", t.uint8), I64: t.int64, I32: t.int32,
             I16: t.int16, I8: t.int8, U8: t.uint8, BOOL: t.bool}
    return table[dt]


def torch_accepts(dt):
    """torch dtypes fetch_into() accepts for shard dtype dt: the one fetch()
    returns, plus uint8 for raw FP8 bytes."""
    ok = {torch_dtype(dt)}
    if dt in (F8_E4M3, F8_E5M2):
        ok.add(torch.uint8)
    return ok


class _Memory:
    """Exposes nbytes of library memory at addr to numpy, keeping owner (the
    object that frees that memory) alive as long as any array uses it."""

    def __init__(self, owner, addr, nbytes):
        self.owner = owner
        self.__array_interface__ = {"data": (addr, False), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}


def wrap(owner, addr, nbytes, dt, shape, as_torch):
    """A numpy array or torch tensor viewing the memory at addr (no copy)."""
    if nbytes == 0 or not addr:
        raw = np.empty(0, dtype=np.uint8)
    else:
        raw = np.asarray(_Memory(owner, addr, nbytes))
    return view_bytes(raw, dt, shape, as_torch)


def view_bytes(raw, dt, shape, as_torch):
    """raw (a 1-D uint8 numpy array) as a numpy array or torch tensor of shard
    dtype dt and shape: a view, no copy; it keeps raw alive."""
    if not as_torch:
        return raw.view(NUMPY[dt]).reshape(shape)
    arr = raw.view(_FOR_TORCH[dt]).reshape(shape)
    t = torch.from_numpy(arr)
    want = torch_dtype(dt)
    return t if t.dtype == want else t.view(want)


def code_of(dtype):
    """wt_dtype code of a safetensors dtype name ("BF16") or a code."""
    if isinstance(dtype, int):
        return dtype
    from . import _lib

    code = _lib.wt_dtype_from_name(str(dtype).encode())
    if code not in NUMPY:
        raise ValueError("weightd: unknown dtype %r (want a safetensors name such as BF16)"
                         % (dtype,))
    return code
