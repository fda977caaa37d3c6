"""The reference forward pass (reference/, `weightctl verify-forward --logits`)
against transformers on the checkpoints transformers wrote: Llama, Mixtral,
Gemma, Qwen2 and StarCoder2 (conftest's hf-* models), and Llama with the RoPE
scalings transformers 4.39.3 has (linear, dynamic NTK past
max_position_embeddings). The reference runs in float32 over the same weights
(BF16 checkpoints widen exactly); transformers runs the model converted to
float32. Measured: largest logit difference / largest logit at most 5.3e-7;
a scaling left out moves it by 5e-3 or more. The sharded side of verify-forward must PASS too."""

import copy
import os
import subprocess

import pytest

from conftest import bin_path, hf_model, need

TOKENS = [1, 17, 42, 99, 3, 200, 249]
TOL = 2e-5  # of max|logit|: float32 summation order, measured <= 1.5e-6


def reference_logits(model_dir, out, tp=2):
    """verify-forward at TP tp (must PASS); the full path's logits [T, V]."""
    np = need("numpy")
    r = subprocess.run([bin_path("weightctl"), "verify-forward", "--model-dir", model_dir,
                        "--tp-size", str(tp), "--tokens", ",".join(map(str, TOKENS)),
                        "--logits", out], capture_output=True, text=True)
    assert r.returncode == 0 and "PASS" in r.stdout, r.stdout + r.stderr
    return np.load(out)


def hf_logits(model):
    """transformers' logits in float32: a fresh float32 model with the same
    weights (a model cast to BF16 and back keeps BF16-rounded RoPE buffers)."""
    torch = need("torch")
    m = type(model)(model.config).float().eval()
    m.load_state_dict({k: v.float() for k, v in model.state_dict().items()})
    with torch.no_grad():
        return m(torch.tensor([TOKENS])).logits[0].numpy()


def rel_diff(a, b):
    np = need("numpy")
    assert a.shape == b.shape
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("name", ["hf-llama", "hf-mixtral", "hf-gemma", "hf-qwen2",
                                  "hf-starcoder2"])
def test_reference_matches_transformers(server, tmp_path, name):
    model = hf_model(name)
    got = reference_logits(os.path.join(server[1], name), str(tmp_path / "l.npy"))
    d = rel_diff(got, hf_logits(model))
    print(f"{name}: max|reference - transformers| / max|logit| = {d:.3g}")
    assert d <= TOL


def _llama(tmp_path, name, **cfg):
    torch = need("torch")
    from transformers import LlamaConfig, LlamaForCausalLM

    args = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                num_hidden_layers=2, vocab_size=250, intermediate_size=128,
                max_position_embeddings=64, tie_word_embeddings=False)
    args.update(cfg)
    torch.manual_seed(3)
    m = LlamaForCausalLM(LlamaConfig(**args)).eval()
    with torch.no_grad():
        for p in m.parameters():
            p.normal_(0.0, 0.2)  # norms too, so every weight matters
    d = str(tmp_path / name)
    m.save_pretrained(d, safe_serialization=True)
    return m, d


@pytest.mark.parametrize("rope", [
    {"type": "linear", "factor": 4.0},
    # 7 tokens past max_position_embeddings 4: the NTK base grows
    {"type": "dynamic", "factor": 3.0, "max_position_embeddings": 4},
])
def test_rope_scaling_matches_transformers(tmp_path, rope):
    need("torch")
    need("transformers")
    rope = dict(rope)
    extra = {"max_position_embeddings": rope.pop("max_position_embeddings")} \
        if "max_position_embeddings" in rope else {}
    model, d = _llama(tmp_path, "scaled", rope_scaling=rope, **extra)
    got = reference_logits(d, str(tmp_path / "l.npy"), tp=4)
    want = hf_logits(model)
    diff = rel_diff(got, want)
    print(f"llama rope_scaling {rope}: reference vs transformers {diff:.3g}")
    assert diff <= TOL
    # the comparison can fail: the same weights without the scaling
    from transformers import LlamaForCausalLM

    cfg = copy.deepcopy(model.config)
    cfg.rope_scaling = None
    unscaled = LlamaForCausalLM(cfg).eval()
    unscaled.load_state_dict(model.state_dict())
    moved = rel_diff(got, hf_logits(unscaled))
    print(f"  against the unscaled model: {moved:.3g}")
    assert moved > 1e-3
