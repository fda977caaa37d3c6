"""weightd: fetch verified, pre-partitioned weight shards from weightd into
numpy arrays or torch tensors, through libweights (ctypes).

    import weightd
    with weightd.Client("tcp://127.0.0.1:7450") as c:
        shard = c.fetch("llama", tp_size=2, tp_rank=0)    # {name: tensor}, no copy
        c.fetch_into(engine_tensors, "llama", tp_size=2, tp_rank=1)
        model.load_weights(c.iter_tensors("llama", tp_size=2, tp_rank=1))  # streamed
        shard = c.fetch("llama", broadcast=weightd.BroadcastRoot(url, n_members=3))
        # on a replica: weightd.receive_broadcast(url, c.manifest("llama"))

See docs/engines.md "Python".
"""

from ._lib import lib_path
from .bcast import BroadcastCancel, BroadcastResult, BroadcastRoot, receive_broadcast
from .client import Client, Fetch, Shard
from .errors import Cancelled, Error, MismatchError
from .manifest import AdminResult, Manifest, ModelInfo, TensorInfo
from .stream import TensorStream

__all__ = ["Client", "Fetch", "Shard", "TensorStream", "Manifest", "TensorInfo", "ModelInfo",
           "AdminResult", "Error", "BroadcastRoot", "BroadcastResult", "BroadcastCancel",
           "receive_broadcast",
           "Cancelled", "MismatchError", "library_version", "lib_path", "torch_dtype",
           "numpy_dtype"]
__version__ = "0.3.0"


def library_version():
    """The version of the libweights actually loaded ("1.7.0")."""
    from . import _lib

    return _lib.wt_version(None, None, None).decode()


def torch_dtype(dtype):
    """The torch dtype fetch() returns (and fetch_into() wants) for a shard
    dtype: a name as in TensorInfo.dtype ("BF16", "F8_E4M3") or its code."""
    from . import _arrays

    if _arrays.torch is None:
        raise ImportError("weightd.torch_dtype: torch does not import")
    return _arrays.torch_dtype(_arrays.code_of(dtype))


def numpy_dtype(dtype):
    """The numpy dtype fetch(as_torch=False) returns for a shard dtype
    (BF16 -> uint16 and F8_* -> uint8: the raw bits)."""
    from . import _arrays
    import numpy as np

    return np.dtype(_arrays.NUMPY[_arrays.code_of(dtype)])
