#!/usr/bin/env python3
"""shard_oracle.py — an independent reading of SHARDS.md section 2 (and the FP8-block
pass-through of section 4) in Python: builds each rank's expected runtime tensors from
the source safetensors (raw bytes, so BF16/FP8 compare exactly) and compares them with
`weightctl shard` output, tensor names included. Used by shard_python.sh.

The cut of each family (expected(), with its notes) is in shard_oracle_expected.py.

Llama 4's FP8 release (quant_method fbgemm_fp8, docs/format.md 4.7) keeps one scale per
output channel: a Linear's X.weight_scale [N, 1] (its rows), a stack's X_scale [E, 1, 2I] /
[E, hid, 1] (its columns, the output channels of the torch.bmm operands). With quant none
dequant_fbgemm turns every FP8 source into BF16 here (f32(e4m3) * f32(scale), rounded to
nearest even); with fp8-channel the codes pass through (unstack_llama4 transposes them per
expert like any stack) and each rank's scales are the rows' (all rows' for a column slice).

usage: shard_oracle.py WEIGHTCTL MODEL_DIR TP EP QUANT(none|fp8-block|fp8-channel) [up_gate]
"""
import json, os, re, sys, struct
import numpy as np
from shard_oracle_cut import conv1d_gpt2
from shard_oracle_whisper import whisper_cfg
from shard_oracle_more import SRCS  # InternLM2 and later
from shard_oracle_src import (dequant_fbgemm, unstack_aria, unstack_dbrx, unstack_gpt_oss,
                              unstack_granite, unstack_llama4)
from shard_oracle_expected import expected

NP = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SZ = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "I64": 8, "I32": 4, "I8": 1,
      "U8": 1}

def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        data = f.read()
    meta = hdr.pop("__metadata__", {})
    out = {}
    for k, v in hdr.items():
        a, b = v["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=NP[SZ[v["dtype"]]]).reshape(v["shape"] or [1])
        out[k] = (v["dtype"], arr)
    return out, meta

def load_dir(d):
    src = {}
    for fn in sorted(os.listdir(d)):
        if fn.endswith(".safetensors"):
            src.update(read_st(os.path.join(d, fn))[0])
    return src, json.load(open(os.path.join(d, "config.json")))

def materialize(src, pcs, scale=False, blk=128):
    """The pieces' values; with scale, their FP8 scales: blk x blk blocks (weight_scale_inv),
    or with blk None per row (fbgemm_fp8 weight_scale: a column slice keeps every row's)."""
    parts = []
    for p in pcs:
        if p[0] == "zero":  # shaped as the previous piece, or as source p[2] (a rank of zeros)
            like = parts[-1] if parts else src[p[2]][1] if len(p) > 2 else None
            parts.append(None if like is None else
                         np.zeros((p[1],) + like.reshape(like.shape[0], -1).shape[1:], like.dtype))
            continue
        name, axis, a, n = p
        if scale and blk is None:
            arr = src[name[: -len("weight")] + "weight_scale"][1]
            parts.append(arr[a:a + n] if axis == 0 else arr)
        elif scale:
            sname = name[: -len("weight")] + "weight_scale_inv"
            arr = src[sname][1]
            a2, b2 = a // blk, -(-(a + n) // blk)
            parts.append(arr[a2:b2] if axis == 0 else arr[:, a2:b2])
        else:
            arr = src[name][1]
            if arr.ndim == 1: arr = arr.reshape(-1, 1)
            parts.append(arr[a:a + n] if axis == 0 else arr[:, a:a + n])
    first = next(x for x in parts if x is not None)  # leading zero rows (Whisper's kv bias)
    parts = [np.zeros((p[1],) + first.shape[1:], first.dtype) if x is None else x
             for x, p in zip(parts, pcs)]
    return np.concatenate([x.reshape(x.shape[0], -1) for x in parts], axis=0)

# The decoder embedding models saved as base models (vLLM's as_embedding_model) -> their causal LM
BASE_LMS = {"LlamaModel": "LlamaForCausalLM", "MistralModel": "MistralForCausalLM",
            "Qwen2Model": "Qwen2ForCausalLM", "Gemma2Model": "Gemma2ForCausalLM",
            "Gemma3TextModel": "Gemma3ForCausalLM", "LlamaBidirectionalModel": "LlamaForCausalLM"}


def check(ctl, model, T, P, quant, up_gate=False):
    """Every rank of layout (T, P, quant) of model against weightctl shard: the mismatches."""
    src, cfg = load_dir(model)
    if cfg.get("quantization_config", {}).get("quant_method") == "fbgemm_fp8" and quant == "none":
        src = dequant_fbgemm(src)
    if cfg["architectures"][0].startswith("GraniteMoe"):
        src = unstack_granite(src)
    if cfg["architectures"][0] == "GptOssForCausalLM":
        src = unstack_gpt_oss(src)
    if cfg["architectures"][0].startswith(("Llama4", "Qwen3VLMoe")):  # the same bmm stacks
        src = unstack_llama4(src)
    if cfg["architectures"][0] == "AriaForConditionalGeneration":  # fc1 / fc2: the same
        src = unstack_aria(src)
    if cfg["model_type"] == "dbrx":  # DbrxConfig's names, nested attn_config / ffn_config
        a, f = cfg.get("attn_config", {}), cfg.get("ffn_config", {})
        cfg = dict(cfg, hidden_size=cfg["d_model"], num_attention_heads=cfg["n_heads"],
                   num_hidden_layers=cfg["n_layers"], num_key_value_heads=a.get("kv_n_heads", 1),
                   num_local_experts=f.get("moe_num_experts", 4), tie_word_embeddings=False)
        src = unstack_dbrx(src, cfg["num_local_experts"])
    if cfg["model_type"] == "mpt":  # MptConfig's names, attn_config.kv_n_heads where present
        a = cfg.get("attn_config", {})
        cfg = dict(cfg, hidden_size=cfg["d_model"], num_attention_heads=cfg["n_heads"],
                   num_hidden_layers=cfg["n_layers"],
                   num_key_value_heads=a.get("kv_n_heads", cfg["n_heads"]),
                   tie_word_embeddings=True)
    if cfg["model_type"] == "whisper":  # the decoder's keys as the language model's
        cfg = whisper_cfg(cfg)
    if cfg["model_type"] == "longcat_flash":  # LongcatFlashConfig's names; model.mtp.* dropped
        cfg = dict(cfg, num_hidden_layers=cfg["num_layers"], tie_word_embeddings=False)
        src = {k: v for k, v in src.items() if not k.startswith("model.mtp.")}
    if cfg["model_type"] in ("gpt2", "gpt_bigcode"):  # GPT2Config's n_* names
        cfg = dict(cfg, hidden_size=cfg["n_embd"], num_attention_heads=cfg["n_head"],
                   num_hidden_layers=cfg["n_layer"],
                   tie_word_embeddings=cfg.get("tie_word_embeddings", True))
        if cfg["model_type"] == "gpt2":  # Conv1D [in, out] transposed
            src = conv1d_gpt2(src)
    if cfg["model_type"] in SRCS:  # Grok-1's names as Mixtral's, MiMo's MTP dropped (_more.py)
        src = SRCS[cfg["model_type"]](src)
    if cfg["model_type"] == "bloom":  # BloomConfig's names; vLLM adds the transformer. prefix
        cfg = dict(cfg, hidden_size=cfg.get("n_embed", cfg.get("hidden_size", 64)),
                   num_attention_heads=cfg.get("num_attention_heads", cfg.get("n_head", 8)),
                   num_hidden_layers=cfg.get("num_hidden_layers", cfg.get("n_layer", 2)),
                   tie_word_embeddings=cfg.get("tie_word_embeddings", True))
        src = {k if k.startswith(("transformer.", "lm_head.")) else "transformer." + k: v
               for k, v in src.items()}
    if cfg["model_type"] in ("roberta", "xlm-roberta") and \
            not cfg["architectures"][0].endswith("ForSequenceClassification"):  # roberta. -> none
        src = {re.sub(r"^roberta\.", "", k): v for k, v in src.items()}
    if cfg["architectures"][0] == "ModernBertModel":  # model. (a ForMaskedLM's) -> none
        src = {re.sub(r"^model\.", "", k): v for k, v in src.items()}
    lm_prefix = ""
    back = None  # the expected names back to the runtime ones (Idefics3)
    if cfg["model_type"] == "llama4":  # language_model.model.* / .lm_head, the tower's own
        cfg = dict(cfg, **{k: v for k, v in cfg["text_config"].items() if k != "model_type"})
        lm_prefix = "language_model."
        src = {re.sub(r"^language_model\.(model|lm_head)\.", r"\1.", k): v for k, v in src.items()}
    elif cfg["model_type"] in ("gemma3", "mistral3", "llava", "llava_next", "paligemma", "aya_vision",
                               "llava_onevision", "cohere2_vision", "llava_next_video",
                               "qwen2_audio", "internvl", "fuyu", "lfm2-vl",
                               "granite_speech", "blip-2", "aria", "voxtral",
                               "mllama", "minimax_vl_01"):  # -> LM + tower
        tc = cfg["text_config"]
        cfg = dict(cfg, **{k: v for k, v in tc.items()
                           if k not in ("model_type", "architectures")})  # llava's says Llama
        # tied by text_config alone (transformers' get_text_config, vLLM's language model),
        # the text class's default where it has no key: Gemma 3's, Gemma's, Cohere's true
        cfg["tie_word_embeddings"] = tc.get("tie_embedding", tc.get(  # Lfm2Config's first
            "tie_word_embeddings", cfg["model_type"] in (
                "gemma3", "paligemma", "aya_vision", "cohere2_vision", "lfm2-vl", "blip-2")))
        lm_prefix = "language_model."
        src = {re.sub(r"^(model\.language_model\.|language_model\.model\.)", "model.",
                      re.sub(r"^(model\.)?(vision_tower\.|multi_modal_projector\.|image_newline$|"
                             r"vision_embed_tokens\.)", r"\2",
                             re.sub(r"^language_model\.lm_head\.", "lm_head.", k))): v
               for k, v in src.items()}
    elif cfg["model_type"] in ("qwen2_5_omni", "qwen3_omni_moe"):  # thinker_config's text_config;
        th = cfg["thinker_config"]  # thinker.* -> none, the speech generator skipped; tied by text_config
        cfg = dict(cfg, **{k: v for k, v in th["text_config"].items() if k != "model_type"})
        cfg["tie_word_embeddings"] = th["text_config"].get("tie_word_embeddings", False)
        src = {re.sub(r"^thinker\.", "", k): v for k, v in src.items()
               if not k.startswith(("talker.", "token2wav.", "code2wav."))}
        back = lambda n: n if n.startswith("thinker.") else "thinker." + n
    elif cfg["model_type"] in ("idefics3", "smolvlm"):  # model.text_model.* -> model.*; tied by
        tc = cfg["text_config"]                          # text_config alone (transformers, vLLM)
        cfg = dict(cfg, **{k: v for k, v in tc.items() if k not in ("model_type", "architectures")})
        cfg["tie_word_embeddings"] = tc.get("tie_word_embeddings", False)
        src = {re.sub(r"^model\.text_model\.", "model.",
                      re.sub(r"^model\.(vision_model|connector)\.", r"\1.", k)): v for k, v in src.items()}
        back = lambda n: re.sub(r"^(vision_model|connector)\.", r"model.\1.",
                                re.sub(r"^model\.", "model.text_model.", n))
    elif cfg["architectures"][0] in BASE_LMS:  # base-model names: the causal LM's cut, model.
        cfg = dict(cfg, architectures=[BASE_LMS[cfg["architectures"][0]]],  # dropped again
                   tie_word_embeddings=True)  # no lm_head
        src = {("model." + k if k.startswith(("embed_tokens.", "layers.", "norm.")) else k): v
               for k, v in src.items()}
        back = lambda n: re.sub(r"^model\.", "", n)
    elif "text_config" in cfg:  # transformers 5.x multimodal layout: LM fields and names
        cfg = dict(cfg, **{k: v for k, v in cfg["text_config"].items() if k != "model_type"})
        cfg["tie_word_embeddings"] = cfg["text_config"].get("tie_word_embeddings", False)  # its alone
        src = {re.sub(r"^model\.language_model\.", "model.",
                      re.sub(r"^model\.visual\.", "visual.", k)): v for k, v in src.items()}
    import shutil, subprocess, tempfile
    bad, outd = 0, tempfile.mkdtemp()  # every rank in one pass: each file what --out writes (shard_all.sh)
    cmd = [ctl, "shard", "--model-dir", model, "--tp-size", str(T), "--ep-size", str(P), "--quant", quant,
           "--out-dir", outd] + (["--w13-order", "up_gate"] if up_gate else [])
    try:
        subprocess.run(cmd, check=True)
        ranks = {(r, e): read_st(os.path.join(outd, "tp%d-ep%d.safetensors" % (r, e))) for e in range(P) for r in range(T)}
    finally:
        shutil.rmtree(outd)
    for e in range(P):
        for r in range(T):
            got, meta = ranks[(r, e)]
            exp = expected(src, cfg, T, r, P, e, up_gate=up_gate)
            # Gemma 3's language model runs under language_model. (docs/format.md 2.7)
            exp = {(lm_prefix + n if n.startswith(("model.", "lm_head.")) else n): pcs
                   for n, pcs in exp.items()}
            if back is not None:
                exp = {back(n): pcs for n, pcs in exp.items()}
            names = set(exp)
            if quant in ("fp8-block", "fp8-channel"):  # pre-quantized pass-through only
                names |= {n + "_scale" for n in exp if src.get(exp[n][0][0] if exp[n][0][0] != "zero" else "", ("",))[0] == "F8_E4M3"}
            if set(got) != names:
                print("rank", r, e, "names differ:", sorted(set(got) ^ names)[:6]); bad += 1; continue
            for n, pcs in exp.items():
                want = materialize(src, pcs)
                g = got[n][1].reshape(want.shape[0], -1) if got[n][1].size == want.size else None
                # Whisper's kv bias has zeros first; CLIP's padding-only ranks are all zeros
                first = next((p[0] for p in pcs if p[0] != "zero"), None)
                if first is not None and src[first][0] == "F8_E4M3" and quant == "none":
                    continue  # dequantized: checked by the unit tests
                if g is None or not np.array_equal(g, want):
                    print("rank", r, e, "tensor", n, "differs"); bad += 1
                if n == "lm_head.bias" and got[n][1].shape != (want.shape[0],):  # stays 1-D
                    print("rank", r, e, "lm_head.bias shape", got[n][1].shape); bad += 1
                if n + "_scale" in got:
                    ws = materialize(src, pcs, scale=True,
                                     blk=128 if quant == "fp8-block" else None)
                    if not np.array_equal(got[n + "_scale"][1].reshape(ws.shape[0], -1), ws):
                        print("rank", r, e, "scale", n, "differs"); bad += 1
    print(f"{os.path.basename(model)} T={T} P={P} {quant}: {'ok' if bad == 0 else str(bad) + ' mismatches'}")
    return bad


if __name__ == "__main__":  # CTL MODEL TP EP QUANT [up_gate]; shard_oracle_batch.py: many
    a = sys.argv[1:]
    sys.exit(1 if check(a[0], a[1], int(a[2]), int(a[3]), a[4], a[5:6] == ["up_gate"]) else 0)
