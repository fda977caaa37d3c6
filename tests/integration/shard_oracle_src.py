"""shard_oracle_src.py — shard_oracle.py's readings of source tensors stored otherwise
than one per module: experts stacked in the checkpoint (Granite's input_linear /
output_linear, DBRX's ffn.experts.mlp.*, GPT-OSS's MXFP4 blocks and scales, Llama 4's
transposed gate_up_proj / down_proj) unstacked to Mixtral-style per-expert names, and
Llama 4's fbgemm_fp8 codes dequantized to BF16 (shard_oracle.py's docstring gives the rules).
Each takes and returns {name: (dtype, array)}.
"""
import re

import numpy as np


def unstack_granite(src):
    """input_linear [E, 2I, hid] -> experts.{j}.w1 / w3 (the two row halves of expert j:
    transformers chunk(2) them into gate and up), output_linear [E, hid, I] -> experts.{j}.w2,
    router.layer -> gate (the runtime names of Mixtral's modules)."""
    out = {}
    for k, (dt, a) in src.items():
        m = re.match(r"(.*\.block_sparse_moe\.)(input_linear|output_linear|router\.layer)\.weight$", k)
        if not m:
            out[k] = (dt, a); continue
        b, what = m.groups()
        if what == "router.layer":
            out[b + "gate.weight"] = (dt, a); continue
        for j in range(a.shape[0]):
            if what == "input_linear":
                gate, up = np.split(a[j], 2, axis=0)
                out[f"{b}experts.{j}.w1.weight"] = (dt, gate)
                out[f"{b}experts.{j}.w3.weight"] = (dt, up)
            else:
                out[f"{b}experts.{j}.w2.weight"] = (dt, a[j])
    return out

def unstack_dbrx(src, E):
    """ffn.experts.mlp.w1 / v1 / w2 [E*Ie, hid] -> ffn.experts.{j}.w1 / w3 / w2.weight (w2
    transposed: [hid, Ie]), the names and layout of Mixtral's experts."""
    out = {}
    for k, (dt, a) in src.items():
        m = re.match(r"(.*\.ffn\.experts\.)mlp\.(w1|v1|w2)$", k)
        if not m:
            out[k] = (dt, a); continue
        b, what = m.groups()
        for j, w in enumerate(a.reshape(E, -1, a.shape[1])):
            leaf = {"w1": "w1", "v1": "w3", "w2": "w2"}[what]
            out[f"{b}{j}.{leaf}.weight"] = (dt, np.ascontiguousarray(w.T) if what == "w2" else w)
    return out

E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])

def mxfp4_bf16(blocks, scales):
    """[E, N, G, 16] U8 + [E, N, G] U8 -> BF16 bits [E, N, G*32] (round to nearest even)."""
    v = np.empty(blocks.shape[:-1] + (32,))
    v[..., 0::2], v[..., 1::2] = E2M1[blocks & 15], E2M1[blocks >> 4]
    v = (v * np.exp2(scales.astype(np.float64) - 127)[..., None]).astype(np.float32)
    u = v.reshape(blocks.shape[:-2] + (-1,)).view(np.uint32).astype(np.uint64)
    return ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)

def unstack_gpt_oss(src):
    out = {}
    for k, (dt, a) in src.items():
        m = re.match(r"(.*\.experts\.)(gate_up_proj|down_proj)_(blocks|scales|bias)$", k)
        if not m:
            out[k] = (dt, a); continue
        b, what, leaf = m.groups()
        if leaf == "scales": continue
        w = mxfp4_bf16(a, src[b + what + "_scales"][1]) if leaf == "blocks" else a
        sfx = "weight" if leaf == "blocks" else "bias"
        for j in range(w.shape[0]):
            if what == "gate_up_proj":  # interleaved: gate rows 2k, up rows 2k + 1
                out[f"{b}{j}.gate_proj.{sfx}"] = ("BF16", w[j][0::2])
                out[f"{b}{j}.up_proj.{sfx}"] = ("BF16", w[j][1::2])
            else:
                out[f"{b}{j}.down_proj.{sfx}"] = ("BF16", w[j])
    return out

def e4m3_table():
    v = np.zeros(256, np.float32)
    for c in range(256):
        e, m = (c >> 3) & 15, c & 7
        x = np.nan if (e, m) == (15, 7) else m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        v[c] = -x if c & 128 else x
    return v

E4M3 = e4m3_table()

def bf16_bits(v):
    u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)

def fbgemm_scale(src, name):
    dt, a = src[name + "_scale"]
    assert dt == "F32", name + "_scale: the fixture writes F32 scales"
    return a.view(np.float32)

def dequant_fbgemm(src):
    """Every F8_E4M3 source to BF16: a Linear [N, K] times its row's scale [N, 1], a stack
    [E, K, N] times its column's [E, 1, N] / [E, N, 1]; the scales dropped."""
    out = {}
    for k, (dt, a) in src.items():
        if k.endswith("_scale") and src.get(k[:-6], ("",))[0] == "F8_E4M3":
            continue
        if dt != "F8_E4M3":
            out[k] = (dt, a); continue
        s = fbgemm_scale(src, k)
        s = s.reshape(-1, 1) if a.ndim == 2 else s.reshape(a.shape[0], 1, a.shape[2])
        out[k] = ("BF16", bf16_bits(E4M3[a] * s))
    return out

def unstack_llama4(src):
    out = {}
    for k, (dt, a) in src.items():
        if re.search(r"\.feed_forward\.experts\.(gate_up_proj|down_proj)_scale$", k):
            continue  # fbgemm_fp8: per expert below
        m = re.match(r"(.*\.(?:feed_forward|mlp)\.experts\.)(gate_up_proj|down_proj)$", k)
        if not m:
            out[k] = (dt, a); continue
        b, what = m.groups()
        sc = src.get(k + "_scale")  # fbgemm_fp8: one per output channel (e, n)
        for j in range(a.shape[0]):
            w = np.ascontiguousarray(a[j].T)  # [in, out] -> [out, in]
            s = sc[1].reshape(a.shape[0], -1, 1)[j] if sc else None
            if what == "gate_up_proj":
                half = w.shape[0] // 2
                out[f"{b}{j}.gate_proj.weight"] = (dt, w[:half])
                out[f"{b}{j}.up_proj.weight"] = (dt, w[half:])
                if sc:
                    out[f"{b}{j}.gate_proj.weight_scale"] = (sc[0], s[:half])
                    out[f"{b}{j}.up_proj.weight_scale"] = (sc[0], s[half:])
            else:
                out[f"{b}{j}.down_proj.weight"] = (dt, w)
                if sc:
                    out[f"{b}{j}.down_proj.weight_scale"] = (sc[0], s)
    return out


def unstack_aria(src):
    """Aria (vLLM's aria.py): AriaGroupedExpertsMLP's fc1 [E, hid, 2I] / fc2 [E, I, hid] are
    Llama 4's bmm stacks (the first I columns of fc1 the gate: AriaFusedMoE.weight_loader keeps
    [first_r; second_r]), read by unstack_llama4 into per-expert gate / up / down; the tower's
    post_layernorm, which vLLM replaces with Identity and skips, dropped."""
    ren = {}
    for k, v in src.items():
        if re.match(r"(model\.)?vision_tower\.post_layernorm\.", k):
            continue
        ren[re.sub(r"\.mlp\.experts\.fc1\.weight$", ".mlp.experts.gate_up_proj",
                   re.sub(r"\.mlp\.experts\.fc2\.weight$", ".mlp.experts.down_proj", k))] = v
    return unstack_llama4(ren)
