#!/usr/bin/env python3
"""unstack_experts.py — a Qwen3-VL-MoE checkpoint with its experts stored one Linear each,
as the FP8 releases store them, from one with transformers' bmm stacks.

  unstack_experts.py SRC DST
      DST holds SRC's tensors, each stack model.language_model.layers.L.mlp.experts.
      gate_up_proj [E, hid, 2*Ie] / down_proj [E, Ie, hid] written as experts.{j}.gate_proj /
      up_proj .weight [Ie, hid] (gate the first Ie columns, transposed) and down_proj.weight
      [hid, Ie]; SRC's config.json.
  unstack_experts.py fp8 SRC DST TWIN
      TWIN as DST above; DST with those expert weights as F8_E4M3 and weight_scale_inv F32
      per 128 x 128 block (s = amax / 448, q = e4m3(x / s), edge blocks partial), and
      quantization_config {quant_method fp8, weight_block_size [128, 128]} naming every
      other Linear in modules_to_not_convert.
  unstack_experts.py mix SRC DST
      layer 0's experts one Linear each, every other layer's stacked (a mixed checkpoint).
  unstack_experts.py cmp A.safetensors B.safetensors [fp8]
      the same tensors (names, dtypes, shapes; __metadata__ aside) with the same bytes, or
      (fp8) BF16 values within e4m3's rounding of B's: 2^-4 of |b| plus a subnormal step of
      the tensor's largest value / 448; exit 1 naming the first that differs.
"""
import json, os, re, sys
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ct_oracle import bf16, e4m3_enc, load_dir, read_st  # noqa: E402
from ct_moe import write_st  # noqa: E402

STACK = re.compile(r"(.*\.layers\.(\d+)\.mlp\.experts\.)(gate_up_proj|down_proj)$")


def unstack(src, only_layer=None):
    out = {}
    for k, (dt, a) in load_dir(src).items():
        m = STACK.match(k)
        if not m or (only_layer is not None and int(m.group(2)) != only_layer):
            out[k] = (dt, a)
            continue
        for e in range(a.shape[0]):
            w = a[e]
            if m.group(3) == "gate_up_proj":
                ie = w.shape[1] // 2
                out["%s%d.gate_proj.weight" % (m.group(1), e)] = (dt, np.ascontiguousarray(w[:, :ie].T))
                out["%s%d.up_proj.weight" % (m.group(1), e)] = (dt, np.ascontiguousarray(w[:, ie:].T))
            else:
                out["%s%d.down_proj.weight" % (m.group(1), e)] = (dt, np.ascontiguousarray(w.T))
    return out


def fp8_blocks(x):
    """F8_E4M3 codes and F32 [ceil(N/128), ceil(K/128)] scales of f32 x [N, K]."""
    N, K = x.shape
    nb, kb = -(-N // 128), -(-K // 128)
    s = np.zeros((nb, kb), dtype=np.float32)
    q = np.zeros((N, K), dtype=np.uint8)
    for i in range(nb):
        for j in range(kb):
            blk = x[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128]
            s[i, j] = max(float(np.abs(blk).max()), 1e-12) / 448.0
            q[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128] = e4m3_enc(blk / s[i, j])
    return q, s


def write(dst, tensors, cfg):
    os.makedirs(dst, exist_ok=True)
    write_st(os.path.join(dst, "model.safetensors"), tensors)
    json.dump(cfg, open(os.path.join(dst, "config.json"), "w"), indent=1)


def cmp(a_path, b_path, fp8):
    a, b = read_st(a_path), read_st(b_path)
    if sorted(a) != sorted(b):
        print("cmp: tensors differ: %s" % sorted(set(a) ^ set(b)))
        return 1
    for k in sorted(a):
        (da, x), (db, y) = a[k], b[k]
        if da != db or x.shape != y.shape:
            print("cmp: %s: %s %s against %s %s" % (k, da, x.shape, db, y.shape))
            return 1
        if np.array_equal(x, y):
            continue
        if not fp8 or da != "BF16":
            print("cmp: %s: bytes differ" % k)
            return 1
        fx, fy = bf16(x), bf16(y)
        sub = float(np.abs(fy).max()) / 448.0 * 2.0 ** -9
        if not np.all(np.abs(fx - fy) <= np.abs(fy) * 0.0625 + sub):
            print("cmp: %s: off by %g (largest %g)" % (k, float(np.abs(fx - fy).max()),
                                                      float(np.abs(fy).max())))
            return 1
    return 0


def main():
    if len(sys.argv) in (4, 5) and sys.argv[1] == "cmp":
        return cmp(sys.argv[2], sys.argv[3], len(sys.argv) == 5 and sys.argv[4] == "fp8")
    if len(sys.argv) == 4 and sys.argv[1] == "mix":
        src, dst = sys.argv[2:4]
        write(dst, unstack(src, only_layer=0), json.load(open(os.path.join(src, "config.json"))))
        return 0
    if len(sys.argv) == 3:
        src, dst = sys.argv[1:3]
        write(dst, unstack(src), json.load(open(os.path.join(src, "config.json"))))
        return 0
    if len(sys.argv) != 5 or sys.argv[1] != "fp8":
        print(__doc__)
        return 2
    src, dst, twin = sys.argv[2:5]
    cfg = json.load(open(os.path.join(src, "config.json")))
    t = unstack(src)
    write(twin, t, cfg)
    q = {}
    for k, (dt, a) in t.items():
        if re.search(r"\.experts\.\d+\.\w+\.weight$", k):
            codes, s = fp8_blocks(bf16(a))
            q[k] = ("F8_E4M3", codes)
            q[k + "_scale_inv"] = ("F32", s)
        else:
            q[k] = (dt, a)
    keep = sorted({k[: -len(".weight")] for k, (dt, a) in t.items()
                   if k.endswith(".weight") and a.ndim == 2 and not re.search(r"\.experts\.\d+\.", k)})
    write(dst, q, dict(cfg, quantization_config={
        "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
        "weight_block_size": [128, 128], "modules_to_not_convert": keep}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
