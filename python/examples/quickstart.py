import os

import torch
import weightd

endpoint = os.environ.get("WEIGHTD_ENDPOINT", "tcp://127.0.0.1:7450")
model = os.environ.get("WEIGHTD_MODEL", "llama")

with weightd.Client(endpoint) as client:
    for info in client.models():
        print("model", info.name, info.architecture, info.checkpoint_bytes)

    # Rank 0 of TP=2 as {runtime name: torch.Tensor}: views of libweights'
    # verified host buffers, no copy (BF16 -> torch.bfloat16).
    def progress(done, total):
        if done == total:
            print("fetched", done, "bytes")

    shard = client.fetch(model, tp_size=2, tp_rank=0, progress=progress)
    qkv = shard["model.layers.0.self_attn.qkv_proj.weight"]
    print("qkv", qkv.dtype, tuple(qkv.shape))

    # Rank 1 straight into tensors the engine allocated (device="cuda" works
    # the same way); names, dtypes and shapes are checked before any byte moves.
    manifest = client.manifest(model, tp_size=2, tp_rank=1)
    engine = {t.name: torch.empty(t.shape, dtype=weightd.torch_dtype(t.dtype))
              for t in manifest.tensors}
    client.fetch_into(engine, manifest)
    print("loaded", len(engine), "tensors into engine memory")

    # Streamed, the shape of vLLM's model.load_weights(weights): (name, tensor)
    # in manifest order, each yielded once verified while later bytes still
    # arrive; at most max_bytes wait for the loop (the fetch thread waits).
    def load_weights(weights):
        for name, tensor in weights:
            engine[name].copy_(tensor)  # the engine's own parameter
        return len(engine)

    n = load_weights(client.iter_tensors(manifest, max_bytes=64 << 20))
    print("streamed", n, "tensors into engine memory")

    # A fetch on its own thread can be cancelled from any other thread.
    job = client.fetch_async(model, tp_size=2, tp_rank=1)
    job.cancel()
    try:
        job.result()
        print("finished before the cancel")
    except weightd.Cancelled:
        print("cancelled")
