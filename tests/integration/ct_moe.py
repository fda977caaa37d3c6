#!/usr/bin/env python3
"""ct_moe.py — compressed-tensors MoE checkpoints (one quantized Linear per expert, as
llm-compressor writes them, router gates and lm_head in `ignore`) through `weightctl shard`,
checked with numpy (ct_oracle.py's safetensors reader and e4m3 codec).

  ct_moe.py make SRC DST SCHEME
      SRC, a BF16 MoE fixture (mixtral, qwen2_moe, deepseek_v2), becomes DST/twin, the same checkpoint
      with expert e of layer l scaled by 2^((e + l) % 4) (exact in BF16, so that a scale or
      code taken from another expert is off by a factor of 2 or more), and DST/ct, every
      Linear of the twin but the ignored ones quantized with compressed-tensors' formulas:
      fp8-channel (FP8_DYNAMIC), fp8-tensor (FP8: weight_scale [1] and a static input_scale
      [1]), w4a16 (pack-quantized int4, group 128), w8a8 (int-quantized int8 per channel,
      static input_scale). Scales are BF16 (truncated from f32, as the tests may).

  ct_moe.py batch
      `SRC DST SCHEME WEIGHTCTL TP,EP...` a line on stdin: make, then check, each case.

  ct_moe.py check WEIGHTCTL DST SCHEME TP,EP...
      For every rank of each layout:
      - `--quant none --dtype fp32` of DST/ct holds the twin's tensors (names, shapes); the
        tensors that were quantized are within the scheme's rounding of the twin's values
        (int: 0.75 of a step of the scale passed through for that value; fp8: 2^-4 of |x| plus a subnormal
        step), the others are the twin's exactly;
      - the scheme's own target (pass-through) dequantizes to that fp32 shard exactly
        (fp8-tensor: within one e4m3 rounding, fused parts being merged to their largest
        scale), and its input scales are the max of the source modules' they fuse (an
        expert stack's: over the rank's local experts).
"""
import atexit, json, os, re, shutil, struct, subprocess, sys, tempfile, traceback
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ct_oracle import E4M3, bf16, e4m3_enc, load_dir, pack, read_st  # noqa: E402

IGNORED = re.compile(r"(lm_head|.*\.gate|.*shared_expert_gate)$")
EXPERT = re.compile(r"model\.layers\.(\d+)\..*\.experts\.(\d+)\.")
QMAX = {"w4a16": 7.0, "w8a8": 127.0}
PASS = {"fp8-channel": "fp8-channel", "fp8-tensor": "fp8-tensor", "w4a16": "int4-group",
        "w8a8": "int8-channel"}


def to_bf16(x):
    """f32 -> BF16 bits, truncated."""
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def write_st(path, tensors):
    hdr, blobs, off = {}, [], 0
    for k in sorted(tensors):
        dt, a = tensors[k]
        b = np.ascontiguousarray(a).tobytes()
        hdr[k] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def quantize(scheme, m, x, out):
    """The compressed-tensors tensors of module m (BF16 values x, as f32) into out."""
    N, K = x.shape
    if scheme.startswith("fp8"):
        amax = np.abs(x).max(axis=1, keepdims=True) if scheme == "fp8-channel" else \
            np.full((1,), np.abs(x).max(), dtype=np.float32)
        sb = to_bf16(amax / np.float32(448.0))
        out[m + ".weight"] = ("F8_E4M3", e4m3_enc(x / (bf16(sb) if sb.ndim == 2 else bf16(sb)[0])))
    else:
        G = 128 if scheme == "w4a16" else K
        g = x.reshape(N, K // G, G)
        sb = to_bf16(np.maximum(np.abs(g).max(axis=2), np.float32(1e-8)) / np.float32(QMAX[scheme]))
        q = np.clip(np.rint(g / bf16(sb)[:, :, None]), -QMAX[scheme] - 1, QMAX[scheme]).reshape(N, K)
        if scheme == "w4a16":
            out[m + ".weight_packed"] = ("I32", pack(q))
            out[m + ".weight_shape"] = ("I64", np.array([N, K], dtype=np.int64))
        else:
            out[m + ".weight"] = ("I8", q.astype(np.int8))
    out[m + ".weight_scale"] = ("BF16", sb)
    if scheme in ("fp8-tensor", "w8a8"):  # static activation scales: one per input (fused parts
        # read the same input), different across layers, experts and inputs
        key = re.sub(r"(q_proj|k_proj|v_proj|w1|w3|gate_proj|up_proj)$", "in", m)
        v = 0.01 * (1 + sum(key.encode()) % 13)
        out[m + ".input_scale"] = ("BF16", to_bf16(np.float32([v])))


def make(src, dst, scheme):
    cfg = json.load(open(os.path.join(src, "config.json")))
    twin, ct = {}, {}
    for k, (dt, a) in load_dir(src).items():
        e = EXPERT.match(k)
        if e and dt == "BF16":
            a = to_bf16(bf16(a) * np.float32(2.0 ** ((int(e.group(1)) + int(e.group(2))) % 4)))
        twin[k] = (dt, a)
        m = k[: -len(".weight")]
        if (k.endswith(".weight") and a.ndim == 2 and dt == "BF16" and "embed" not in k
                and not IGNORED.match(m)):
            quantize(scheme, m, bf16(a), ct)
        else:
            ct[k] = (dt, a)
    fp8 = scheme.startswith("fp8")
    w = {"num_bits": 4 if scheme == "w4a16" else 8, "type": "float" if fp8 else "int",
         "symmetric": True, "strategy": {"fp8-channel": "channel", "fp8-tensor": "tensor",
                                          "w4a16": "group", "w8a8": "channel"}[scheme],
         "group_size": 128 if scheme == "w4a16" else None, "block_structure": None,
         "dynamic": False, "actorder": None, "observer": "minmax", "observer_kwargs": {}}
    act = None if scheme == "w4a16" else {
        "num_bits": 8, "type": w["type"], "symmetric": True, "group_size": None,
        "strategy": "token" if scheme == "fp8-channel" else "tensor", "block_structure": None,
        "dynamic": scheme == "fp8-channel", "actorder": None, "observer": None, "observer_kwargs": {}}
    qc = {"quant_method": "compressed-tensors", "quantization_status": "compressed",
          "format": "pack-quantized" if scheme == "w4a16" else
          "float-quantized" if fp8 else "int-quantized",
          "ignore": ["lm_head", "re:.*mlp.gate$", "re:.*block_sparse_moe.gate$",
                     "re:.*shared_expert_gate$"],
          "kv_cache_scheme": None, "global_compression_ratio": None,
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": w,
                                        "input_activations": act, "output_activations": None}}}
    for sub, tensors in (("twin", twin), ("ct", ct)):
        os.makedirs(os.path.join(dst, sub), exist_ok=True)
        write_st(os.path.join(dst, sub, "model.safetensors"), tensors)
        c = dict(cfg, quantization_config=qc) if sub == "ct" else cfg
        json.dump(c, open(os.path.join(dst, sub, "config.json"), "w"), indent=1)


_ROOT = tempfile.mkdtemp()  # every layout's ranks, written once (removed at exit)
atexit.register(shutil.rmtree, _ROOT, True)
_LAYOUTS = {}


def shard(ctl, model, tp, ep, r, quant, *extra):
    """Rank r (tp_rank r % tp, ep_rank r // tp) of the layout: all its ranks are written by one
    weightctl shard --out-dir run (each file what --out writes: shard_all.sh), the first time."""
    key = (model, tp, ep, quant) + extra
    if key not in _LAYOUTS:
        d = _LAYOUTS[key] = os.path.join(_ROOT, str(len(_LAYOUTS)))
        subprocess.run([ctl, "shard", "--model-dir", model, "--quant", quant, "--out-dir", d,
                        "--tp-size", str(tp), "--ep-size", str(ep)] + list(extra),
                       check=True, stderr=subprocess.DEVNULL)
    return read_st(os.path.join(_LAYOUTS[key], "tp%d-ep%d.safetensors" % (r % tp, r // tp)))


def decode(got, k):
    """f32 values of a quantized shard tensor (codes times their scale) and each value's
    scale."""
    dt, a = got[k]
    s = got[k + "_scale"][1].astype(np.float32)
    if dt == "I32":  # int4-group: 8 codes per word, code + 8, low nibble first
        w = a.astype(np.uint32)
        q = np.stack([((w >> (4 * i)) & 15).astype(np.int16) - 8 for i in range(8)], axis=-1)
        q = q.reshape(a.shape[:-1] + (a.shape[-1] * 8,)).astype(np.float32)
    else:
        q = E4M3[a] if dt == "F8_E4M3" else a.astype(np.float32)
    if s.size == q.shape[0] and q.ndim == 3:  # fp8-tensor expert stack: [count, 1]
        s = s.reshape(-1, 1, 1)
    elif s.ndim == q.ndim and s.shape[-1] != q.shape[-1]:  # groups along the rows
        s = np.repeat(s, q.shape[-1] // s.shape[-1], axis=-1)
    return q * s, np.broadcast_to(s, q.shape)


def sources(ct, rt, ep, er, E):
    """The CT modules a runtime module fuses (local experts of an EP rank for a stack)."""
    m = re.match(r"(model\.layers\.\d+\.\w+)\.experts\.(w13|w2)$", rt)
    if m:
        names = ("w1", "w3") if "block_sparse_moe" in rt else ("gate_proj", "up_proj")
        names = names if m.group(2) == "w13" else ("w2",) if "block_sparse_moe" in rt else ("down_proj",)
        return ["%s.experts.%d.%s" % (m.group(1), e, n) for e in range(er * E // ep, (er + 1) * E // ep)
                for n in names]
    fused = {"qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj")}
    head, _, last = rt.rpartition(".")
    return [head + "." + n for n in fused.get(last, (last,))]


def check(ctl, dst, scheme, layouts):
    twin_dir, ct_dir = os.path.join(dst, "twin"), os.path.join(dst, "ct")
    cfg = json.load(open(os.path.join(ct_dir, "config.json")))
    E = cfg.get("num_local_experts") or cfg.get("num_experts") or cfg.get("n_routed_experts")
    src = load_dir(ct_dir)
    bad, n = 0, 0
    for lay in layouts:
        tp, ep = (int(v) for v in lay.split(","))
        for r in range(tp * ep):
            tw = shard(ctl, twin_dir, tp, ep, r, "none", "--dtype", "fp32")
            nf = shard(ctl, ct_dir, tp, ep, r, "none", "--dtype", "fp32")
            pa = shard(ctl, ct_dir, tp, ep, r, PASS[scheme])
            if set(nf) != set(tw):
                print("%s %s rank %d: tensors differ from the twin's: %s" % (scheme, lay, r, sorted(set(nf) ^ set(tw))))
                bad += 1
                continue
            for k in sorted(tw):
                x, got = tw[k][1], nf[k][1]
                quant = k in pa and pa[k][0] in ("F8_E4M3", "I8", "I32")
                if not quant:
                    ok = np.array_equal(got, x)
                elif scheme.startswith("fp8"):
                    sub = np.abs(x).max() / 448.0 * 2.0 ** -9
                    ok = bool(np.all(np.abs(got - x) <= np.abs(x) * 0.0625 + sub))
                    d = decode(pa, k)[0]
                    ok = ok and (np.array_equal(d, got) if scheme == "fp8-channel" else
                                 bool(np.all(np.abs(d - got) <= np.abs(got) * 0.0625 + sub)))
                else:
                    d, step = decode(pa, k)  # the source's scales, passed through
                    ok = bool(np.all(np.abs(got - x) <= 0.75 * step)) and np.array_equal(d, got)
                isc = k[: -len("weight")] + "input_scale"
                if quant and scheme in ("fp8-tensor", "w8a8"):
                    want = max(bf16(src[m + ".input_scale"][1])[0]
                               for m in sources(src, k[: -len("_weight") if k.endswith("_weight") else -len(".weight")], ep, r // tp, E))
                    ok = ok and isc in pa and pa[isc][1].reshape(-1).tolist() == [want]
                n += 1
                if not ok:
                    print("%s %s rank %d: %s differs" % (scheme, lay, r, k))
                    bad += 1
    print("ct_moe %s %s: %d tensors, %s" % (os.path.basename(dst), scheme, n,
                                            "ok" if bad == 0 else "%d bad" % bad))
    return bad


def batch():
    """One case a line on stdin, `SRC DST SCHEME WEIGHTCTL TP,EP...`: make, check, remove DST
    (numpy imported once, not twice a case). A case that raises is a failure; the others
    still run. Exit 1 when any failed."""
    fail = 0
    for line in sys.stdin:
        a = line.split()
        if not a:
            continue
        try:
            make(a[0], a[1], a[2])
            bad = check(a[3], a[1], a[2], a[4:])
        except Exception:
            print("FAIL:", " ".join(a[:3]))
            traceback.print_exc(limit=3)
            bad = 1
        shutil.rmtree(a[1], ignore_errors=True)
        fail += bad != 0
    print("ct_moe: %d of the cases failed" % fail if fail else "ct_moe: all cases ok")
    return 1 if fail else 0


def main():
    if sys.argv[1:] == ["batch"]:
        return batch()
    if len(sys.argv) == 5 and sys.argv[1] == "make":
        make(*sys.argv[2:5])
        return 0
    if len(sys.argv) >= 6 and sys.argv[1] == "check":
        return 1 if check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]) else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
