#!/usr/bin/env python3
"""ct_oracle.py — compressed-tensors sources (docs/format.md 4.5) read independently with
numpy: the llama_w8a8 / llama_w4a16 / llama_w4a16_asym / llama_w4a8 / llama_w8a8_asym /
llama_w8a16 / llama_w4a16_actorder fixtures' codes are read here (unpacked from
pack_to_int32: code + 2^(bits-1), element k of each run of 32/bits at bits bits*(k%(32/bits));
asymmetric zero points I8 [N, 1] (int-quantized) or unpacked as compressed-tensors 0.20
PackedQuantizationCompressor.decompress does, pack_to_int32 with packed_dim=0: row r of
group g at bits bits*(r%(32/bits)) of word [r//(32/bits), g]; activation order: the scale of
column k is scale[:, g_idx[k]]; dequantized as its dequantize() does, (code - zp) * scale;
llama_ct_fp8 / llama_ct_fp8_tensor, float-quantized FP8 per channel / per tensor: F8_E4M3
codes decoded here from the e4m3fn bit layout, f32(code) * f32(bf16 scale); per tensor, fused
parts passed through are merged to their largest scale, each code re-encoded here as
e4m3(f32(code) * (s / max)), nearest, ties to even),
each rank's expected tensors are rebuilt from the llama partition rules, and `weightctl
shard` output is compared:

  pass     quant = the source's scheme (FP8: fp8-channel): codes byte for byte (int4 repacked here), scales
           f32(bf16) sliced with them, input scales; every code * scale near the value the
           fixture's BF16 llama twin holds (dequantize -> compare with the original).
  requant  another scheme with --requant allow: dequantize (f32(code) * f32(scale)) here,
           quantize with the contract's int8-channel / int4-group formulas here, compare.
  none     --quant none --dtype fp32: f32(code) * f32(scale) exactly (asymmetric:
           (code - zp) * scale), and near the BF16 twin's values.

usage: ct_oracle.py WEIGHTCTL MODEL_DIR LLAMA_DIR TP MODE(pass|requant|none)
       ct_oracle.py --batch   (the same five words a case, one case a line on stdin: numpy
                              imported and each folder read once, not once a case)
"""
import json, os, shutil, struct, subprocess, sys, tempfile, traceback
import numpy as np

DT = {"BF16": np.uint16, "F32": np.float32, "I8": np.int8, "I32": np.uint32, "I64": np.int64,
      "F8_E4M3": np.uint8}


def e4m3_table():
    """float8 e4m3fn: bias 7, subnormals at exponent 0, 0x7f / 0xff NaN, no Inf."""
    t = np.zeros(256, dtype=np.float32)
    for b in range(256):
        e, m = (b >> 3) & 15, b & 7
        v = (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)
        t[b] = np.nan if (b & 127) == 127 else (-v if b & 128 else v)
    return t


E4M3 = e4m3_table()


def e4m3_enc(v):
    """float32 -> e4m3fn code: the nearest magnitude (ties to the even code), saturating."""
    a = np.abs(v).astype(np.float32)
    pos = E4M3[:127]  # codes 0..126, ascending
    hi = np.clip(np.searchsorted(pos, a), 1, 126)
    lo = hi - 1
    dl, dh = a - pos[lo], pos[hi] - a
    pick = np.where(dl < dh, lo, np.where(dh < dl, hi, np.where(lo % 2 == 0, lo, hi)))
    pick = np.where(a >= pos[126], 126, pick)
    return (pick | np.where(np.signbit(v), 128, 0)).astype(np.uint8)


def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        data = f.read()
    hdr.pop("__metadata__", None)
    out = {}
    for k, v in hdr.items():
        a, b = v["data_offsets"]
        out[k] = (v["dtype"], np.frombuffer(data[a:b], dtype=DT[v["dtype"]]).reshape(v["shape"] or [1]))
    return out


def load_dir(d):
    out = {}
    for fn in sorted(os.listdir(d)):
        if fn.endswith(".safetensors"):
            out.update(read_st(os.path.join(d, fn)))
    return out


def bf16(a):
    return (a.astype(np.uint32) << 16).view(np.float32)


def unpack(words, K, bits=4, axis=1):
    """pack_to_int32 undone: code + 2^(bits-1), element i of each run of 32/bits at bits
    bits*i of a word; runs along the rows (axis 1) or, for zero points, the columns (axis 0)."""
    w = words.astype(np.uint32)
    per, off = 32 // bits, 1 << (bits - 1)
    q = np.stack([((w >> (bits * i)) & ((1 << bits) - 1)).astype(np.int16) - off
                  for i in range(per)], axis=axis + 1)
    if axis == 1:
        return q.reshape(w.shape[0], -1)[:, :K]
    return q.reshape(-1, w.shape[1])[:K]


def pack(q):
    u = (q.astype(np.int32) + 8).astype(np.uint32).reshape(q.shape[0], -1, 8)
    return sum(u[:, :, i] << (4 * i) for i in range(8)).astype(np.uint32)


blocks = {}  # module -> its FP8 block scales (float-quantized strategy block)


def modules(src, cfg):
    """module -> (codes - zero points int16 [N, K], scales f32 [N, groups], input scale or
    None, the scale column of each input column [K]: k // G, 0 per channel, or g_idx[k])."""
    qc = cfg["quantization_config"]
    grp = next(iter(qc["config_groups"].values()))["weights"]
    bits = grp.get("num_bits", 8)
    out = {}
    global blocks
    for name, (dt, arr) in src.items():
        if dt == "F8_E4M3" and name.endswith(".weight"):  # raw codes; dequant() decodes
            m = name[: -len(".weight")]
            codes = arr
        elif dt == "I8" and name.endswith(".weight"):
            m = name[: -len(".weight")]
            codes = arr.astype(np.int16)
        elif dt == "I32" and name.endswith(".weight_packed"):
            m = name[: -len(".weight_packed")]
            N, K = src[m + ".weight_shape"][1].tolist()
            assert K == arr.shape[1] * (32 // bits) and N == arr.shape[0], name
            codes = unpack(arr, K, bits)
        else:
            continue
        s = bf16(src[m + ".weight_scale"][1])
        N, K = codes.shape
        if s.size == 1:  # per tensor: one scale, as if each row had it
            s = np.full((N, 1), s.reshape(-1)[0], dtype=np.float32)
        if grp.get("strategy") == "block":  # FP8 blocks: each code's own scale [N, K]
            b0, b1 = grp["block_structure"]
            blocks[m] = s
            s = np.repeat(np.repeat(s, b0, axis=0)[:N], b1, axis=1)[:, :K]
        col = np.arange(K) // (K // s.shape[1])
        if m + ".weight_g_idx" in src:  # actorder group: scale[n, g_idx[k]]
            col = src[m + ".weight_g_idx"][1].astype(np.int64)
            assert grp.get("actorder") in ("group", "dynamic", True) and col.shape == (K,), name
        if not grp.get("symmetric", True):  # codes - zero points (exact in int16)
            zdt, z = src[m + ".weight_zero_point"]
            zp = z.astype(np.int16) if zdt == "I8" else unpack(z, N, bits, axis=0)
            assert zp.shape == s.shape, name
            codes = codes - zp[:, col]
        isc = bf16(src[m + ".input_scale"][1])[0] if m + ".input_scale" in src else None
        out[m] = (codes, s, isc, col)
    return out, grp.get("group_size") or None


def rank_parts(cfg, T, r, layer):
    """runtime module -> list of (checkpoint module, axis, start, len) (llama rules)."""
    H, KV, hid, I = (cfg["num_attention_heads"], cfg["num_key_value_heads"],
                     cfg["hidden_size"], cfg["intermediate_size"])
    d = cfg.get("head_dim") or hid // H
    Hl = H // T
    KVl, ks = (KV // T, r) if KV >= T else (1, r // (T // KV))
    p = "model.layers.%d." % layer
    return {
        p + "self_attn.qkv_proj": [(p + "self_attn.q_proj", 0, r * Hl * d, Hl * d),
                                   (p + "self_attn.k_proj", 0, ks * KVl * d, KVl * d),
                                   (p + "self_attn.v_proj", 0, ks * KVl * d, KVl * d)],
        p + "self_attn.o_proj": [(p + "self_attn.o_proj", 1, r * Hl * d, Hl * d)],
        p + "mlp.gate_up_proj": [(p + "mlp.gate_proj", 0, r * I // T, I // T),
                                 (p + "mlp.up_proj", 0, r * I // T, I // T)],
        p + "mlp.down_proj": [(p + "mlp.down_proj", 1, r * I // T, I // T)],
    }


def assemble(mods, parts, G):
    """codes, scales as passed through (whole groups), and each code's scale."""
    qs, ss, fs = [], [], []
    for m, axis, a, n in parts:
        q, s, _, col = mods[m]
        full = s[:, col]
        if axis == 0:
            qs.append(q[a:a + n]); ss.append(s[a:a + n]); fs.append(full[a:a + n])
        else:
            qs.append(q[:, a:a + n]); fs.append(full[:, a:a + n])
            ss.append(s if s.shape[1] == 1 else s[:, a // G:(a + n) // G] if G else s[:, a:a + n])
    return np.concatenate(qs), np.concatenate(ss), np.concatenate(fs)


def dequant(q, full):
    return (E4M3[q] if q.dtype == np.uint8 else q.astype(np.float32)) * full


def near(d, x, full, tol, fp8):
    """Dequantized d near the BF16 twin x: within tol steps of the scale; FP8 (3 mantissa
    bits): within half a quantum, 2^-4 of |x|, or of the subnormal step 2^-9 * scale."""
    if fp8:
        return bool(np.all(np.abs(d - x) <= np.abs(x) * 0.0625 + full * 2.0 ** -9))
    return float((np.abs(d - x) / full).max()) <= tol


def quant_int8(x):
    amax = np.abs(x).max(axis=1, keepdims=True)
    s = np.maximum(amax, np.float32(1e-8)) / np.float32(127.0)
    return np.clip(np.rint(x / s), -127, 127).astype(np.int8), s.astype(np.float32)


def quant_int4(x, G):
    N, K = x.shape
    g = x.reshape(N, K // G, G)
    s = np.maximum(np.abs(g).max(axis=2, keepdims=True), np.float32(1e-8)) / np.float32(7.0)
    q = np.clip(np.rint(g / s), -8, 7).astype(np.int8).reshape(N, K)
    return q, s.reshape(N, K // G).astype(np.float32)


_loaded = {}  # folder -> load_dir's tensors (read-only numpy views): a batch reads each once


def load_dir_once(d):
    if d not in _loaded:
        _loaded[d] = load_dir(d)
    return _loaded[d]


def check(ctl, model, llama, T, mode):
    """One case; its mismatches (0: ok)."""
    src = load_dir_once(model)
    ref = load_dir_once(llama) if llama != "-" else None
    cfg = json.load(open(os.path.join(model, "config.json")))
    mods, G = modules(src, cfg)
    i4 = G is not None
    grp = next(iter(cfg["quantization_config"]["config_groups"].values()))["weights"]
    fp8 = grp.get("type") == "float"
    fp8t = fp8 and grp.get("strategy") == "tensor"
    fp8b = fp8 and grp.get("strategy") == "block"
    assert mode != "pass" or grp.get("symmetric", True), "zero points never pass through"
    # distance to the BF16 twin, in steps: half a step of rounding plus the clamped top of the
    # range; asymmetric int8 adds half a step of zero-point rounding and 255 * 2^-8 of a
    # BF16-rounded scale: up to 1.5
    tol = 1.5 if grp.get("num_bits") == 8 and not grp.get("symmetric", True) else 0.75
    quant = {"pass": "int4-group" if i4 else "fp8-tensor" if fp8t else "fp8-block" if fp8b
             else "fp8-channel" if fp8 else "int8-channel",
             "requant": "int8-channel" if i4 else "int4-group", "none": "none"}[mode]
    bad, outd = 0, tempfile.mkdtemp()  # every rank in one pass (each file what --out writes)
    cmd = [ctl, "shard", "--model-dir", model, "--tp-size", str(T), "--quant", quant,
           "--out-dir", outd]
    if mode == "requant":
        cmd += ["--requant", "allow", "--group-size", "64"]
    if mode == "none":
        cmd += ["--dtype", "fp32"]
    try:
        subprocess.run(cmd, check=True)
        ranks = [read_st(os.path.join(outd, "tp%d-ep0.safetensors" % r)) for r in range(T)]
    finally:
        shutil.rmtree(outd)
    for r in range(T):
        got = ranks[r]
        for layer in range(cfg["num_hidden_layers"]):
            for rt, parts in rank_parts(cfg, T, r, layer).items():
                q, s, full = assemble(mods, parts, G)
                w, sc = got[rt + ".weight"][1], got.get(rt + ".weight_scale", (None, None))[1]
                if mode == "pass" and fp8t:  # parts merged to the largest scale
                    mx = max(mods[m][1][0, 0] for m, *_ in parts)
                    want = np.concatenate([
                        (lambda qq, sp: qq if sp == mx else e4m3_enc(E4M3[qq] * np.float32(sp / mx)))(
                            mods[m][0][a:a + n] if ax == 0 else mods[m][0][:, a:a + n], mods[m][1][0, 0])
                        for m, ax, a, n in parts])
                    ok = np.array_equal(w.reshape(want.shape), want) and sc.reshape(-1).tolist() == [mx]
                    isc = [mods[m][2] for m, *_ in parts if mods[m][2] is not None]
                    ok = ok and got[rt + ".input_scale"][1].reshape(-1)[0] == max(isc)
                elif mode == "pass" and fp8b:  # codes, and the block scales of whole blocks
                    b0, b1 = grp["block_structure"]
                    ws = np.concatenate([
                        blocks[m][a // b0:-(-(a + n) // b0)] if ax == 0 else
                        blocks[m][:, a // b1:-(-(a + n) // b1)] for m, ax, a, n in parts])
                    ok = np.array_equal(w.reshape(q.shape), q) and np.array_equal(
                        sc.reshape(ws.shape), ws) and sc.dtype == np.float32
                elif mode == "pass":
                    want = pack(q) if i4 else q
                    ok = np.array_equal(w.reshape(want.shape), want) and np.array_equal(
                        sc.reshape(s.shape), s)
                    isc = [mods[m][2] for m, *_ in parts if mods[m][2] is not None]
                    if isc:
                        ok = ok and got[rt + ".input_scale"][1][0] == max(isc)
                    if ref is not None:  # dequantized shard vs the BF16 twin's values
                        x = np.concatenate([bf16(ref[m + ".weight"][1])[a:a + n] if ax == 0 else
                                            bf16(ref[m + ".weight"][1])[:, a:a + n]
                                            for m, ax, a, n in parts])
                        ok = ok and near(dequant(q, full), x, full, tol, fp8)
                elif mode == "requant":
                    x = dequant(q, full)
                    wq, ws = quant_int4(x, 64) if not i4 else quant_int8(x)
                    want = pack(wq) if not i4 else wq
                    ok = np.array_equal(w.reshape(want.shape), want) and np.array_equal(
                        sc.reshape(ws.shape), ws)
                else:
                    ok = np.array_equal(w.reshape(q.shape), dequant(q, full)) and sc is None
                    if ref is not None:  # the fixture's codes mean what the reader made of them
                        x = np.concatenate([bf16(ref[m + ".weight"][1])[a:a + n] if ax == 0 else
                                            bf16(ref[m + ".weight"][1])[:, a:a + n]
                                            for m, ax, a, n in parts])
                        ok = ok and near(dequant(q, full), x, full, tol, fp8)
                if not ok:
                    print("rank %d %s: %s differs" % (r, mode, rt))
                    bad += 1
    print("%s T=%d %s: %s" % (os.path.basename(model), T, mode, "ok" if bad == 0 else "%d mismatches" % bad))
    return bad


def main():
    if sys.argv[1:] != ["--batch"]:
        a = sys.argv
        sys.exit(1 if check(a[1], a[2], a[3], int(a[4]), a[5]) else 0)
    fail = 0
    for line in sys.stdin:
        a = line.split()
        if not a:
            continue
        try:
            bad = check(a[0], a[1], a[2], int(a[3]), a[4])
        except Exception:  # the case is a failure; say which and why, go on
            print("FAIL:", " ".join(a[1:]))
            traceback.print_exc(limit=3)
            bad = 1
        fail += bad != 0
    print("ct_oracle: %d of the cases failed" % fail if fail else "ct_oracle: ok")
    sys.exit(1 if fail else 0)


if __name__ == "__main__":
    main()
