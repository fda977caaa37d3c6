"""ctypes bindings of libweights.so.1 (include/weights/*.h).

Only the C API is declared here; the Python API is in client.py. The structs
mirror the public headers member for member. Versioned structs (those that
start with struct_size) are filled by the library's *_init() function inside a
buffer with room to spare, then struct_size is set to the size this module
declares: a newer library gives the members it knows and this module does not
their defaults (docs/client.md "Versioned structs").
"""

import ctypes
import os
import threading

# ---- error codes (include/weights/error.h; FROZEN) ----
WT_OK = 0
WT_EINVAL = 2
WT_EUNSUPPORTED = 7
WT_ELAYOUT = 13
WT_ENOTFOUND = 3
WT_EDTYPE = 11
WT_ESHAPE = 12
WT_ECLOSED = 17
WT_EBUSY = 18
WT_ECANCELED = 24
WT_EDEVICE = 26

WT_MAX_DIMS = 8
WT_MAX_EXCLUDE = 64
WT_ERRMSG_MAX = 512

c_size = ctypes.c_size_t
c_u8, c_u32, c_u64, c_i64 = ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64
c_int, c_char_p, c_void_p = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p


class ErrBuf(ctypes.Structure):
    _fields_ = [("code", c_int), ("msg", ctypes.c_char * WT_ERRMSG_MAX)]


LogFn = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_char_p)


class ClientOpts(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size),
        ("endpoints", ctypes.POINTER(c_char_p)),
        ("n_endpoints", c_size),
        ("connect_timeout_ms", c_u32),
        ("request_timeout_ms", c_u32),
        ("manifest_timeout_ms", c_u32),
        ("window", c_u32),
        ("connections", c_u32),
        ("max_retries", c_u32),
        ("backoff_initial_ms", c_u32),
        ("backoff_max_ms", c_u32),
        ("max_message_bytes", c_u64),
        ("hash_refetch", c_u32),
        ("token", c_char_p),
        ("client_id", c_char_p),
        ("log", LogFn),
        ("log_ctx", c_void_p),
        ("log_level", c_int),
        # since 0.3-1.1 (versioned: an older library is told a smaller struct_size)
        ("retry_budget_ms", c_u32),
        ("tls_ca_file", c_char_p),
        ("tls_cert_key_file", c_char_p),
        ("mode", c_int),
        ("cut_through", c_int),
        ("stream", c_int),  # 1.2: the bulk data plane
    ]


class Layout(ctypes.Structure):
    _fields_ = [
        ("tp_size", c_u32),
        ("tp_rank", c_u32),
        ("ep_size", c_u32),
        ("ep_rank", c_u32),
        ("quant", c_int),
        ("dtype", c_int),
        ("group_size", c_u32),
        ("vocab_pad", c_u32),
        ("w13_up_gate", c_int),
        ("requant_allow", c_int),
        ("n_exclude", c_u32),
        ("exclude", c_char_p * WT_MAX_EXCLUDE),
        # since libweights 0.5: raw layouts
        ("raw", c_int),
        ("n_include", c_u32),
        ("include", ctypes.POINTER(c_char_p)),
    ]


class ModelInfo(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("uri", c_char_p),
        ("revision", c_char_p),
        ("architecture", c_char_p),
        ("checkpoint_bytes", c_u64),
        ("n_tensors", c_u32),
        ("available", c_int),
        ("error", c_char_p),
        ("source", c_char_p),
    ]


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("dtype", c_int),
        ("ndim", c_int),
        ("shape", c_i64 * WT_MAX_DIMS),
        ("nbytes", c_u64),
        ("hash", c_u8 * 16),
        ("role", c_int),
        ("requantized", c_int),
        ("n_chunks", c_size),
    ]


ProgressFn = ctypes.CFUNCTYPE(c_int, c_void_p, c_u64, c_u64)


class FetchStats(ctypes.Structure):
    _fields_ = [
        ("bytes", c_u64),
        ("chunks", c_u64),
        ("retries", c_u32),
        ("refetches", c_u32),
        ("failovers", c_u32),
        ("reconnects", c_u32),
        ("endpoint", ctypes.c_char * 256),
    ]


class FetchOpts(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size),
        ("progress", ProgressFn),
        ("progress_ctx", c_void_p),
        ("stats", ctypes.POINTER(FetchStats)),
        ("cancel", ctypes.POINTER(c_int)),  # libweights 1.8
    ]


# Sink callbacks: the first argument is the wt_sink pointer (unused: the
# Python sink is a closure).
SinkBegin = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, ctypes.POINTER(ErrBuf))
SinkTensor = ctypes.CFUNCTYPE(c_int, c_void_p, c_size, ctypes.POINTER(ErrBuf))
SinkWrite = ctypes.CFUNCTYPE(c_int, c_void_p, c_size, c_u64, c_void_p, c_size,
                             ctypes.POINTER(ErrBuf))
SinkEnd = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(ErrBuf))
SinkAbort = ctypes.CFUNCTYPE(None, c_void_p)
SinkRecvBuf = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_size, c_u64, c_size)


class SinkOps(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size),
        ("begin", SinkBegin),
        ("tensor_begin", SinkTensor),
        ("write", SinkWrite),
        ("tensor_end", SinkTensor),
        ("end", SinkEnd),
        ("abort", SinkAbort),
        ("recv_buf", SinkRecvBuf),  # 1.3, optional: chunks received in place
    ]


class Sink(ctypes.Structure):
    _fields_ = [("ops", ctypes.POINTER(SinkOps))]


def _candidates():
    env = os.environ.get("WEIGHTD_LIB")
    if env:
        return [env]  # explicit: nothing else is tried
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "libweights.so.1")]  # shipped inside the package
    build = os.environ.get("WT_BUILD", "build")
    repo = os.path.dirname(os.path.dirname(here))  # python/weightd -> repository root
    out.append(os.path.join(repo, build, "libweights.so.1"))
    out.append("libweights.so.1")  # the system loader (make install, ldconfig)
    return out


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise OSError("weightd: cannot load libweights.so.1; tried: " + "; ".join(tried) +
                  ". Build it (make), install it (make install) or set WEIGHTD_LIB "
                  "to its path")


lib, lib_path = _load()


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


P = ctypes.POINTER
E = P(ErrBuf)
wt_version = _fn("wt_version", c_char_p, P(c_int), P(c_int), P(c_int))
wt_errname = _fn("wt_errname", c_char_p, c_int)
wt_strerror = _fn("wt_strerror", c_char_p, c_int)
wt_dtype_name = _fn("wt_dtype_name", c_char_p, c_int)
wt_dtype_size = _fn("wt_dtype_size", c_size, c_int)
wt_quant_from_name = _fn("wt_quant_from_name", c_int, c_char_p, P(c_int), E)
wt_quant_name = _fn("wt_quant_name", c_char_p, c_int)
wt_dtype_from_name = _fn("wt_dtype_from_name", c_int, c_char_p)
wt_tensor_role_name = _fn("wt_tensor_role_name", c_char_p, c_int)
wt_layout_init = _fn("wt_layout_init", None, P(Layout))
wt_layout_clear = _fn("wt_layout_clear", None, P(Layout))
wt_layout_add_exclude = _fn("wt_layout_add_exclude", c_int, P(Layout), c_char_p, E)
wt_layout_add_include = _fn("wt_layout_add_include", c_int, P(Layout), c_char_p, E)
wt_manifest_mode = _fn("wt_manifest_mode", c_int, c_void_p)
wt_manifest_live = _fn("wt_manifest_live", c_int, c_void_p)
wt_manifest_mode_reason = _fn("wt_manifest_mode_reason", c_char_p, c_void_p)
wt_layout_check = _fn("wt_layout_check", c_int, P(Layout), E)
wt_client_opts_init = _fn("wt_client_opts_init", None, c_void_p)
wt_client_open = _fn("wt_client_open", c_int, P(c_void_p), c_void_p, E)
wt_client_close = _fn("wt_client_close", None, c_void_p)
wt_client_list_models = _fn("wt_client_list_models", c_int, c_void_p, P(P(ModelInfo)),
                            P(c_size), E)
wt_model_list_free = _fn("wt_model_list_free", None, P(ModelInfo), c_size)
try:  # libweights 1.10; with an older one every config_override reads ""
    wt_model_list_override = _fn("wt_model_list_override", c_char_p, P(ModelInfo), c_size,
                                 c_size)
except AttributeError:
    wt_model_list_override = None


class AdminResult(ctypes.Structure):  # wt_admin_result (not versioned: frozen)
    _fields_ = [("text", ctypes.c_void_p), ("bytes", c_u64), ("shards", c_u64),
                ("chunks", c_u64), ("bad", c_u64), ("disk_bytes", c_u64),
                ("disk_before", c_u64), ("rewritten", c_u64)]


RegisterProgressFn = ctypes.CFUNCTYPE(c_int, c_void_p, c_u64, c_u64)
wt_client_admin = _fn("wt_client_admin", c_int, c_void_p, c_int, c_char_p, P(Layout),
                      P(AdminResult), E)
try:  # libweights 1.4; an older library still serves everything else
    wt_client_register_progress = _fn("wt_client_register_progress", c_int, c_void_p,
                                      c_char_p, c_char_p, RegisterProgressFn, c_void_p,
                                      P(AdminResult), E)
except AttributeError:
    wt_client_register_progress = None
try:  # libweights 1.9
    wt_client_register_override = _fn("wt_client_register_override", c_int, c_void_p,
                                      c_char_p, c_char_p, c_char_p, RegisterProgressFn,
                                      c_void_p, P(AdminResult), E)
except AttributeError:
    wt_client_register_override = None
wt_client_register = _fn("wt_client_register", c_int, c_void_p, c_char_p, c_char_p,
                         P(AdminResult), E)
wt_client_unregister = _fn("wt_client_unregister", c_int, c_void_p, c_char_p, P(AdminResult),
                           E)
wt_admin_result_clear = _fn("wt_admin_result_clear", None, P(AdminResult))
wt_client_get_manifest = _fn("wt_client_get_manifest", c_int, c_void_p, c_char_p, P(Layout),
                             P(c_void_p), E)
wt_manifest_free = _fn("wt_manifest_free", None, c_void_p)
for _n, _t in [("model", c_char_p), ("revision", c_char_p), ("layout_text", c_char_p),
               ("tp_rank", c_u32), ("ep_rank", c_u32), ("format_version", c_u32),
               ("total_bytes", c_u64), ("checkpoint_bytes", c_u64), ("n_chunks", c_size),
               ("tied_lm_head", c_int), ("n_skipped", c_size), ("n_tensors", c_size)]:
    globals()["wt_manifest_" + _n] = _fn("wt_manifest_" + _n, _t, c_void_p)
wt_manifest_skipped = _fn("wt_manifest_skipped", c_char_p, c_void_p, c_size)
wt_manifest_tensor = _fn("wt_manifest_tensor", c_int, c_void_p, c_size, P(TensorInfo))
wt_hash_hex = _fn("wt_hash_hex", None, P(c_u8), ctypes.c_char * 33)
wt_fetch_opts_init = _fn("wt_fetch_opts_init", None, c_void_p)
wt_client_fetch = _fn("wt_client_fetch", c_int, c_void_p, c_void_p, c_void_p, P(FetchOpts), E)
# async.h (libweights 1.1): the fetch on a thread of libweights, so that the
# calling Python thread waits in short steps (signals, Fetch.cancel())
wt_client_fetch_start = _fn("wt_client_fetch_start", c_int, c_void_p, c_void_p, c_void_p,
                            P(FetchOpts), c_void_p, P(c_void_p), E)
wt_fetch_wait = _fn("wt_fetch_wait", c_int, c_void_p, ctypes.c_int64, P(c_int), E)
wt_fetch_cancel = _fn("wt_fetch_cancel", None, c_void_p)
wt_fetch_free = _fn("wt_fetch_free", None, c_void_p)
wt_sink_ops_init = _fn("wt_sink_ops_init", None, c_void_p)
wt_host_sink_create = _fn("wt_host_sink_create", c_int, P(c_void_p), E)
wt_host_sink_sink = _fn("wt_host_sink_sink", c_void_p, c_void_p)
wt_host_sink_find = _fn("wt_host_sink_find", c_int, c_void_p, c_char_p, P(c_void_p), P(c_u64))
wt_host_sink_n_tensors = _fn("wt_host_sink_n_tensors", c_size, c_void_p)
wt_host_sink_destroy = _fn("wt_host_sink_destroy", None, c_void_p)

# Room for members a newer library's *_init() may write past our declaration.
_SPARE = 1024


def run_interruptible(fo, call, step_s=0.1):
    """call() (a blocking libweights call that takes fo, a FetchOpts) on a
    helper thread while this one waits in steps of step_s: an exception raised
    here meanwhile (KeyboardInterrupt, a signal handler's) sets fo.cancel's
    flag (libweights 1.8: the call ends within about 0.1 s, also while it
    waits on a server that stopped answering), waits for the call to end and
    propagates. Returns call()'s value (its exception, if any, is raised)."""
    flag = c_int(0)
    fo.cancel = ctypes.pointer(flag)
    out = {}
    done = threading.Event()

    def main():
        try:
            out["rc"] = call()
        except BaseException as e:  # noqa: B902 - re-raised below
            out["exc"] = e
        finally:
            done.set()

    threading.Thread(target=main, name="weightd-call", daemon=True).start()
    # an Event, not Thread.join: a join that a signal's exception interrupts
    # can leave the Thread taken for ended while it runs (CPython 3.11,
    # bpo-45274's fix), and the call would go on after we returned
    try:
        while not done.wait(step_s):
            pass
    except BaseException:
        flag.value = 1
        done.wait()
        raise
    if "exc" in out:
        raise out["exc"]
    return out["rc"]


def versioned(cls, init):
    """An instance of cls filled by the library's init function (which writes
    its own struct_size and defaults), with struct_size set to the smaller of
    the library's and ours."""
    buf = ctypes.create_string_buffer(ctypes.sizeof(cls) + _SPARE)
    init(ctypes.cast(buf, c_void_p))
    out = cls.from_buffer_copy(buf.raw[:ctypes.sizeof(cls)])
    # An older library knows fewer members: tell it only about those.
    out.struct_size = min(out.struct_size, ctypes.sizeof(cls))
    return out


# ---- online updates (client.h: wt_client_watch, wt_manifest_delta, wt_client_fetch_update)
class UpdateReport(ctypes.Structure):
    _fields_ = [
        ("revision_before", ctypes.c_char * 65),
        ("revision_after", ctypes.c_char * 65),
        ("tp_rank", c_u32),
        ("ep_rank", c_u32),
        ("tensors_total", c_u64),
        ("tensors_updated", c_u64),
        ("bytes_total", c_u64),
        ("bytes_updated", c_u64),
        ("elapsed_us", c_u64),
    ]


wt_client_watch = _fn("wt_client_watch", c_int, c_void_p, c_char_p, c_char_p, c_u32,
                      ctypes.c_char * 65, P(c_int), E)
wt_manifest_delta = _fn("wt_manifest_delta", c_int, c_void_p, c_void_p, P(c_u8), P(c_size),
                        P(c_u64), E)
wt_client_fetch_update = _fn("wt_client_fetch_update", c_int, c_void_p, c_void_p, c_void_p,
                             c_void_p, P(FetchOpts), P(UpdateReport), E)


# ---- broadcast to replicas (bcast.h, libweights 1.5)
class BcastOpts(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_size),
        ("url", c_char_p),
        ("group", c_char_p),
        ("n_members", c_u32),
        ("join_timeout_ms", c_u32),
        ("io_timeout_ms", c_u32),
        ("max_lag_bytes", c_u64),  # libweights 1.6
        ("lag_timeout_ms", c_u32),  # libweights 1.6
        ("cancel", c_void_p),  # 1.6: a wt_bcast_cancel (replica)
    ]


try:  # an older library still serves everything else (weightd.bcast says so)
    wt_bcast_opts_init = _fn("wt_bcast_opts_init", None, c_void_p)
    wt_bcast_root_create = _fn("wt_bcast_root_create", c_int, P(c_void_p), P(BcastOpts),
                               c_void_p, E)
    wt_bcast_root_sink = _fn("wt_bcast_root_sink", c_void_p, c_void_p)
    wt_bcast_root_url = _fn("wt_bcast_root_url", c_char_p, c_void_p)
    wt_bcast_root_result = _fn("wt_bcast_root_result", c_int, c_void_p, P(c_u32), E)
    wt_bcast_root_replica = _fn("wt_bcast_root_replica", c_int, c_void_p, c_u32, E)
    wt_bcast_root_destroy = _fn("wt_bcast_root_destroy", None, c_void_p)
    wt_bcast_receive = _fn("wt_bcast_receive", c_int, P(BcastOpts), c_void_p, c_void_p, E)
except AttributeError:
    wt_bcast_opts_init = None
try:  # 1.6
    wt_bcast_cancel_create = _fn("wt_bcast_cancel_create", c_int, P(c_void_p), E)
    wt_bcast_cancel_fire = _fn("wt_bcast_cancel_fire", None, c_void_p)
    wt_bcast_cancel_destroy = _fn("wt_bcast_cancel_destroy", None, c_void_p)
except AttributeError:
    wt_bcast_cancel_create = None
