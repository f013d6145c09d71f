"""Llama-3.2-1B-shaped decoding: Tidal (`tidal.models.Llama`) vs JAX vs PyTorch (transformers).

The checkpoint is written once, with random bfloat16 weights, to a temporary
directory (or --dir): the Llama-3.2-1B shape (dim 2048, 16 layers, 32 heads, 8
KV heads of 64, MLP 8192, vocab 128256, tied embeddings, rope_theta 500000 with
llama3 scaling), 1.24 B parameters, 2.5 GB. Every system loads the same files:

* tidal: `Llama.from_pretrained(dir)` (bf16 kept, memory-mapped, bound as
  run-time buffers), `model.generate(prompt, n)`: the prompt prefilled in one
  batched pass, decoding as one recurrent-tensor program on the jax backend.
* jax: bench/llama_jax.py, a padded K/V cache, the prefill one jit and the
  decode loop one jit (`lax.while_loop`), matmuls with float32 accumulation.
* torch: `transformers.LlamaForCausalLM.from_pretrained(dir, torch_dtype=bf16)`,
  `generate(do_sample=False)`, eager, when transformers and torch are installed
  (the `[bench]` extra; not installable on every machine).

Metrics per configuration (one process each, one thread, bench/harness.py):
`load_s` (reading the checkpoint), `compile_s` (tidal: tracing and p.compile();
both: the XLA compilations of the first generate calls, measured as their time
minus a warm call's), `first_token_s` (a warm generate of one token: the prompt's
prefill and its first token), `ms_per_token` (a warm generate of T - P tokens
after a P-token prompt, per generated token), `peak_rss_mb`, the weights' bytes
on disk, and the first 32 generated tokens (compared across systems). Each
system runs with the weights in bfloat16 and, in a second row, upcast to float32
at load (`dtype`).

    python bench/llama.py                       # T = 256, every system
    python bench/llama.py --T 256,2048 --only '"system": "tidal"'
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import main  # noqa: E402

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
    "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256, "rms_norm_eps": 1e-5,
    "rope_theta": 500000.0, "max_position_embeddings": 131072, "tie_word_embeddings": True,
    "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    "torch_dtype": "bfloat16", "bos_token_id": 128000, "eos_token_id": 128001,
}
PROMPT = 8
BATCH = 1


def write_checkpoint(directory: str, config: dict = CONFIG, seed: int = 0) -> int:
    """Random bf16 weights in Hugging Face's layout, one tensor at a time; returns bytes."""
    import ml_dtypes
    import numpy as np

    from models.hf_llama import llama_shapes  # test/py/models (independent of tidal)

    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    shapes = llama_shapes(config)
    rng = np.random.default_rng(seed)
    header, offset = {}, 0
    for name, shape in shapes.items():
        n = int(np.prod(shape)) * 2
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps({**header, "__metadata__": {"format": "pt"}}).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(directory, "model.safetensors"), "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for name, shape in shapes.items():
            if len(shape) == 1:
                w = 1.0 + 0.1 * rng.standard_normal(shape, dtype=np.float32)
            elif name.endswith("embed_tokens.weight"):
                w = rng.standard_normal(shape, dtype=np.float32)
            else:
                w = rng.standard_normal(shape, dtype=np.float32) / np.float32(np.sqrt(shape[1]))
            f.write(w.astype(ml_dtypes.bfloat16).tobytes())
    return offset


def _prompt(T: int):
    import numpy as np
    return np.random.default_rng(1).integers(0, CONFIG["vocab_size"], size=(BATCH, PROMPT)).astype(np.int64)


def measure(cfg: dict) -> dict:
    """load_s: reading the checkpoint; compile_s: tracing and compiling (tidal's p.compile)
    plus the XLA compilations of the first generate call (its time minus a warm call's);
    first_token_s: a warm generate of one token (the prompt's prefill and its first token);
    ms_per_token: a warm generate of T - P tokens, per token."""
    import numpy as np

    directory, T, system, dtype = cfg["dir"], cfg["T"], cfg["system"], cfg.get("dtype")
    prompt, n = _prompt(T), T - PROMPT
    compile_s = 0.0
    if system == "tidal":
        from tidal.models import Llama

        t0 = time.perf_counter()
        model = Llama.from_pretrained(directory, dtype=dtype)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        model.executable(BATCH)
        compile_s = time.perf_counter() - t0
        generate = lambda k: model.generate(prompt, k)   # noqa: E731
    elif system == "jax":
        import llama_jax as J

        t0 = time.perf_counter()
        params = J.load(directory, dtype=dtype)
        config = J.read_config(directory)
        load_s = time.perf_counter() - t0
        generate = lambda k: J.generate(params, config, prompt, k)   # noqa: E731
    else:
        import torch
        import transformers

        from harness import single_thread_torch
        single_thread_torch()
        t0 = time.perf_counter()
        model = transformers.LlamaForCausalLM.from_pretrained(
            directory, torch_dtype=getattr(torch, dtype or "bfloat16"))
        load_s = time.perf_counter() - t0
        ids = torch.tensor(prompt)

        def generate(k):
            with torch.no_grad():
                return model.generate(ids, max_new_tokens=k, min_new_tokens=k, do_sample=False).numpy()

    timed = []
    for k in (1, 1, n, n):     # first calls compile (jax: per length), second ones are warm
        start = time.perf_counter()
        tokens = np.asarray(generate(k))
        timed.append(time.perf_counter() - start)
    compile_s += (timed[0] - timed[1]) + (timed[2] - timed[3])
    return {"load_s": load_s, "compile_s": compile_s, "first_token_s": timed[1],
            "ms_per_token": 1e3 * timed[3] / n, "tokens": tokens[0, PROMPT:PROMPT + 32].tolist(),
            "weights_mb": os.path.getsize(os.path.join(directory, "model.safetensors")) / 2 ** 20}


def configs(directory: str, lengths: list[int]) -> list[dict]:
    systems = ["tidal", "jax"]
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        systems.append("torch")
    except ImportError:
        print("transformers/torch not installed: no PyTorch row (pip install '.[bench]')", file=sys.stderr)
    out = [{"system": s, "T": T, "dir": directory} for T in lengths for s in systems]
    # float32 compute: XLA's CPU backend has no bfloat16 matmul, it keeps a float32 copy
    # of every bf16 weight it multiplies (bf16 rows: the weights' bytes three times over)
    out += [{"system": s, "T": T, "dir": directory, "dtype": "float32"} for T in lengths for s in systems]
    return out


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(HERE, "..", "test", "py"))
    args = sys.argv[1:]
    lengths = [256]
    if "--T" in args:
        i = args.index("--T")
        lengths = [int(x) for x in args[i + 1].split(",")]
        del args[i:i + 2]
    directory = None
    if "--dir" in args:
        i = args.index("--dir")
        directory = args[i + 1]
        del args[i:i + 2]
    if "--child" not in args:
        directory = directory or os.path.join(tempfile.gettempdir(), "tidal-llama-1b")
        if not os.path.exists(os.path.join(directory, "model.safetensors")):
            start = time.perf_counter()
            size = write_checkpoint(directory)
            print(f"wrote {size / 2 ** 30:.2f} GB of bf16 weights to {directory} "
                  f"in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    sys.argv = [sys.argv[0]] + args
    main("llama", configs(directory or "", lengths), measure, key=("T", "dtype"),
         metrics=["ms_per_token", "load_s", "compile_s", "first_token_s", "weights_mb"],
         timeout=3600)
