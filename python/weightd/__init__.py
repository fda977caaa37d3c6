"""weightd: fetch verified, pre-partitioned weight shards from weightd into
numpy arrays or torch tensors, through libweights (ctypes).

    import weightd
    with weightd.Client("tcp://127.0.0.1:7450") as c:
        shard = c.fetch("llama", tp_size=2, tp_rank=0)    # {name: tensor}, no copy
        c.fetch_into(engine_tensors, "llama", tp_size=2, tp_rank=1)

See README.md "Use from an engine / Python".
"""

from ._lib import lib_path
from .client import Client, Fetch, Shard
from .errors import Cancelled, Error, MismatchError
from .manifest import Manifest, ModelInfo, TensorInfo

__all__ = ["Client", "Fetch", "Shard", "Manifest", "TensorInfo", "ModelInfo", "Error",
           "Cancelled", "MismatchError", "library_version", "lib_path"]
__version__ = "0.2.0"


def library_version():
    """The version of the libweights actually loaded ("0.2.0")."""
    from . import _lib

    return _lib.wt_version(None, None, None).decode()
