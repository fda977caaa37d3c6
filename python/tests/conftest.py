"""Fixtures: a real weightd on 127.0.0.1 (free port, ready file) serving
  - "llama": wt-mkckpt's llama fixture (BF16, H 8, KV 2, V 1000),
  - "foo": the same files with architectures ["FooForCausalLM"] (no family: raw only),
  - "hf-llama", "hf-mixtral", "hf-gemma", "hf-qwen2", "hf-starcoder2": tiny
    models written by transformers' save_pretrained(safe_serialization=True)
    (when transformers imports; 4.39.3 has no Qwen2-MoE, Gemma 2/3 or Phi-3).
The binaries come from $WT_BUILD (default build/, relative to the repository).
WEIGHTD_REQUIRE_ALL=1 (set by tests/integration/python_pkg.sh) turns a missing
torch or transformers into a failure instead of a skip."""

import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Without an installed weightd (PYTHONPATH, pip), test the checkout's python/:
# from the repository root, "weightd" would otherwise be the daemon's source
# folder (a namespace package).
_spec = importlib.util.find_spec("weightd")
if _spec is None or _spec.origin is None:
    sys.path.insert(0, os.path.join(REPO, "python"))
BUILD = os.path.join(REPO, os.environ.get("WT_BUILD", "build"))
REQUIRE_ALL = os.environ.get("WEIGHTD_REQUIRE_ALL") == "1"
CHUNK_BYTES = 64 * 1024  # small chunks: fetches of the fixtures take many chunks
HF_MODELS = {}


def need(module):
    """Import module or skip (fail under WEIGHTD_REQUIRE_ALL=1)."""
    try:
        return __import__(module)
    except ImportError as e:
        if REQUIRE_ALL:
            pytest.fail("%s does not import (%s): run scripts/deps.sh" % (module, e))
        pytest.skip("%s not installed" % module)


def bin_path(name):
    p = os.path.join(BUILD, name)
    if not os.access(p, os.X_OK):
        pytest.fail("%s not built: run make" % p)
    return p


def _randomize(model, torch, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g, dtype=torch.float32) * 0.05
            base = 1.0 if name.endswith("norm.weight") else 0.0
            p.copy_((noise + base).to(p.dtype))


def _hf_models(models_dir):
    """Write the transformers models into models_dir; remember the originals."""
    try:
        import torch
        import transformers
    except ImportError:
        return
    from transformers import (GemmaConfig, GemmaForCausalLM, LlamaConfig, LlamaForCausalLM,
                              MixtralConfig, MixtralForCausalLM, Qwen2Config, Qwen2ForCausalLM,
                              Starcoder2Config, Starcoder2ForCausalLM)

    common = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                  num_hidden_layers=2, vocab_size=250, intermediate_size=128,
                  max_position_embeddings=64, tie_word_embeddings=False)
    torch.manual_seed(0)
    llama = LlamaForCausalLM(LlamaConfig(**common)).eval()
    _randomize(llama, torch, 1)
    llama = llama.to(torch.bfloat16)  # BF16 shards: torch.bfloat16 views
    mixtral = MixtralForCausalLM(MixtralConfig(num_local_experts=4, num_experts_per_tok=2,
                                               **common)).eval()
    _randomize(mixtral, torch, 2)  # F32 shards
    # H*d 128 != hidden 64; tie_word_embeddings left to Gemma's default (true),
    # so config.json has no such key and the checkpoint no lm_head.weight
    gemma_args = dict(common, num_key_value_heads=1, head_dim=32)
    del gemma_args["tie_word_embeddings"]
    gemma = GemmaForCausalLM(GemmaConfig(**gemma_args)).eval()
    _randomize(gemma, torch, 3)
    gemma = gemma.to(torch.bfloat16)
    qwen2 = Qwen2ForCausalLM(Qwen2Config(**common)).eval()  # q/k/v biases
    _randomize(qwen2, torch, 4)  # F32
    # LayerNorm biases, biases on every linear, a plain GELU MLP (c_fc / c_proj);
    # tied by the config class's default (no key, no lm_head)
    sc2_args = dict(gemma_args, num_key_value_heads=2)
    del sc2_args["head_dim"]
    starcoder2 = Starcoder2ForCausalLM(Starcoder2Config(**sc2_args)).eval()
    _randomize(starcoder2, torch, 5)
    starcoder2 = starcoder2.to(torch.bfloat16)
    for name, model in (("hf-llama", llama), ("hf-mixtral", mixtral), ("hf-gemma", gemma),
                        ("hf-qwen2", qwen2), ("hf-starcoder2", starcoder2)):
        model.save_pretrained(os.path.join(models_dir, name), safe_serialization=True)
        HF_MODELS[name] = model
    assert transformers.__version__


def start_weightd(tmp, models, *flags, argv0=None):
    """A weightd serving models (cache in tmp/cache, log in tmp/weightd.log)
    on a free port, with flags: (process, endpoint URL, log file) once ready.
    argv0: the program and its first arguments instead of [weightd] (say
    [tests/tools/wt-faultyd, --corrupt-chunk, N])."""
    ready = os.path.join(tmp, "ready")
    log = open(os.path.join(tmp, "weightd.log"), "w")
    argv0 = argv0 or [bin_path("weightd")]
    proc = subprocess.Popen([*argv0, "--listen", "tcp://127.0.0.1:0",
                             "--models-dir", models, "--cache-dir", os.path.join(tmp, "cache"),
                             "--log-level", "warning", "--ready-file", ready, *flags],
                            stdout=log, stderr=log)
    for _ in range(300):
        if os.path.exists(ready) and os.path.getsize(ready) > 0:
            return proc, open(ready).read().split()[0], log
        if proc.poll() is not None:
            log.close()
            pytest.fail("weightd exited: " + open(log.name).read())
        time.sleep(0.05)
    stop_weightd(proc, log)
    pytest.fail("weightd not ready after 15 s: " + open(log.name).read())


def stop_weightd(proc, log):
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


@pytest.fixture(scope="session")
def server():
    """(endpoint URL, models folder, workdir) of a weightd serving the models."""
    tmp = tempfile.mkdtemp(prefix="wt-pytest-")
    models = os.path.join(tmp, "models")
    os.makedirs(models)
    subprocess.run([bin_path("wt-mkckpt"), "--family", "llama", "--seed", "7", "--out",
                    os.path.join(models, "llama")], check=True, stdout=subprocess.DEVNULL)
    shutil.copytree(os.path.join(models, "llama"), os.path.join(models, "foo"))
    cfg_path = os.path.join(models, "foo", "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg["architectures"], cfg["model_type"] = ["FooForCausalLM"], "foo"
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    _hf_models(models)
    proc, url, log = start_weightd(tmp, models,
                                   "--stream-listen", "tcp://127.0.0.1:0",  # stream=1 uses it
                                   "--workers", "2", "--chunk-bytes", str(CHUNK_BYTES))
    try:
        yield url, models, tmp
    finally:
        stop_weightd(proc, log)
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def url(server):
    return server[0]


@pytest.fixture
def client(url):
    import weightd

    with weightd.Client(url) as c:
        yield c


def hf_model(name):
    need("torch")
    need("transformers")
    return HF_MODELS[name]


def weightctl_fetch(url, model, out, *layout_flags):
    """The shard as weightctl fetch writes it (file sink), for comparisons."""
    subprocess.run([bin_path("weightctl"), "fetch", "--endpoint", url, "--model", model,
                    "--out", out, "--quiet", *layout_flags], check=True)
    return read_safetensors_raw(out)


def read_safetensors_raw(path):
    """{name: (dtype, shape, bytes)} read by hand from a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        a, b = v["data_offsets"]
        out[name] = (v["dtype"], tuple(v["shape"]), data[base + a:base + b])
    return out
