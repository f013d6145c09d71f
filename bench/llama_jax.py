"""A JAX baseline for greedy decoding of Hugging Face Llama checkpoints (LlamaForCausalLM).

Reads a directory as Hugging Face writes it (config.json, model.safetensors or sharded
model-*.safetensors + model.safetensors.index.json), memory-mapped, with the reader of the
tests' NumPy reference decoder (test/py/models/hf_llama.py, independent of tidal), and decodes the way a careful JAX user would:

* `load`: weights stay in the file's dtype (or `dtype`), the Linear weights transposed once
  to (in, out); the layers unrolled in the jit (each layer's weights its own buffers, read
  in place), or with `stacked=True` stacked per layer and run as one `lax.scan` (compile
  time does not grow with depth, but each step slices every layer's weights out of the
  stack: on XLA's CPU backend that costs a copy of the weights per token, 3x slower at 1B).
* `generate`: the whole prompt (B, P) is prefilled in ONE batched causal pass (one jit),
  then the decode loop runs in one jit as a `lax.while_loop` over a preallocated K/V cache
  of (layers, B, P + n, kv_heads, head_dim) per K and V, updated in place in the loop's
  carry (copied once on entry from the prefill's cache). The cache is padded: at step t the rows > t are still zeros and are masked
  out (with window=W the rows <= t - W too), so the shapes, and the compilation, depend
  on (B, P, n) only; the position, the EOS id and the finished rows are traced values.
  The loop stops early once every row has emitted eos_token_id; rows that finished are
  filled with it.
* matmuls accumulate in float32 (`preferred_element_type`) and at HIGHEST precision (no
  TF32 for float32 weights on GPUs); RMSNorm and softmax in float32, cast back as HF does.

    python bench/llama_jax.py DIR --prompt-len 8 --new 32 [--batch 1] [--window W]
        [--eos ID] [--dtype bfloat16] [--reps 3]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

# the checkpoint reader and the RoPE frequencies of the NumPy reference decoder the tests use
# (test/py/models/hf_llama.py, independent of tidal)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "py"))
from models.hf_llama import read_llama, rope_inv_freq  # noqa: E402

_HI = jax.lax.Precision.HIGHEST


def read_config(directory) -> dict:
    with open(os.path.join(directory, "config.json")) as f:
        return json.load(f)


class Dims(NamedTuple):
    """The static (hashable) part of a config."""
    heads: int
    kv_heads: int
    head_dim: int
    eps: float
    tied: bool


def dims(config: dict) -> Dims:
    nq = config["num_attention_heads"]
    return Dims(nq, config.get("num_key_value_heads") or nq,
                config.get("head_dim") or config["hidden_size"] // nq,
                float(config["rms_norm_eps"]), bool(config.get("tie_word_embeddings", False)))


def load(directory, dtype=None, stacked=False) -> dict:
    """The params pytree: embed (V, E), layers [{name: (in, out) or (E,)}] (stacked: {name: (L, ...)}), norm (E,),
    lm_head (E, V) unless tied, inv_freq (head_dim // 2,) float32."""
    config, w = read_llama(directory)   # memory-mapped, in the file's dtype
    put = lambda a: jnp.asarray(a if dtype is None else np.asarray(a).astype(jnp.dtype(dtype)))
    names = {"wq": "self_attn.q_proj", "wk": "self_attn.k_proj", "wv": "self_attn.v_proj",
             "wo": "self_attn.o_proj", "gate": "mlp.gate_proj", "up": "mlp.up_proj", "down": "mlp.down_proj",
             "ln1": "input_layernorm", "ln2": "post_attention_layernorm"}
    n_layers = config["num_hidden_layers"]
    if stacked:
        layers = {}
        for key, hf in names.items():           # one stacked host copy at a time, then to the device
            ws = [w[f"model.layers.{i}.{hf}.weight"] for i in range(n_layers)]
            layers[key] = put(np.stack([x.T if x.ndim == 2 else x for x in ws]))
    else:
        layers = []
        for i in range(n_layers):
            ws = {key: w[f"model.layers.{i}.{hf}.weight"] for key, hf in names.items()}
            layers.append({key: put(np.ascontiguousarray(x.T) if x.ndim == 2 else x) for key, x in ws.items()})
    params = {"embed": put(w["model.embed_tokens.weight"]), "layers": layers,
              "norm": put(w["model.norm.weight"]), "inv_freq": jnp.asarray(rope_inv_freq(config))}
    if not config.get("tie_word_embeddings", False):
        params["lm_head"] = put(w["lm_head.weight"].T)
    return params


def _mm(spec, x, w):
    return jnp.einsum(spec, x, w, preferred_element_type=jnp.float32, precision=_HI)


def _rms(x, w, eps):
    x32 = x.astype(jnp.float32)
    return w * (x32 * jax.lax.rsqrt((x32 * x32).mean(-1, keepdims=True) + eps)).astype(x.dtype)


def _forward(d: Dims, window, params, ids, pos0, kc, vc, prefill: bool):
    """Logits (B, V) float32 of the last of `ids` (B, T) at positions pos0.., and the caches
    kc, vc (L, B, S, kv_heads, head_dim) with those positions written. prefill: attend
    within `ids` only (pos0 == 0); else attend to the cache rows 0..pos0+T-1."""
    B, T = ids.shape
    G, hd = d.heads // d.kv_heads, d.head_dim
    h = params["embed"][ids]
    dt = h.dtype
    pos = pos0 + jnp.arange(T)
    ang = pos.astype(jnp.float32)[:, None] * params["inv_freq"][None, :]
    ang = jnp.concatenate([ang, ang], -1)[None, :, None, :]             # (1, T, 1, hd)
    cos, sin = jnp.cos(ang).astype(dt), jnp.sin(ang).astype(dt)

    def rope(x):                                                         # (B, T, heads, hd)
        return x * cos + jnp.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], -1) * sin

    def layer(carry, lp):
        h, kc, vc, l = carry
        x = _rms(h, lp["ln1"], d.eps)
        q, k, v = (_mm("bte,eo->bto", x, lp[n]).astype(dt).reshape(B, T, -1, hd) for n in ("wq", "wk", "wv"))
        q, k = rope(q), rope(k)
        kc = jax.lax.dynamic_update_slice(kc, k[None].astype(kc.dtype), (l, 0, pos0, 0, 0))
        vc = jax.lax.dynamic_update_slice(vc, v[None].astype(vc.dtype), (l, 0, pos0, 0, 0))
        keys, vals = (k, v) if prefill else (kc[l], vc[l])               # (B, S, kv_heads, hd)
        kpos = jnp.arange(keys.shape[1])
        mask = kpos[None, :] <= pos[:, None]
        if window is not None:
            mask &= kpos[None, :] > pos[:, None] - window
        qg = q.reshape(B, T, d.kv_heads, G, hd)          # query head h = kv * G + g reads kv head h // G
        s = _mm("btkgd,bskd->bkgts", qg, keys) * (hd ** -0.5)
        s = jax.nn.softmax(jnp.where(mask, s, -jnp.inf), axis=-1).astype(dt)
        o = _mm("bkgts,bskd->btkgd", s, vals).astype(dt).reshape(B, T, -1)
        h = h + _mm("bti,io->bto", o, lp["wo"]).astype(dt)
        x = _rms(h, lp["ln2"], d.eps)
        g = _mm("bte,ef->btf", x, lp["gate"]).astype(dt)
        u = _mm("bte,ef->btf", x, lp["up"]).astype(dt)
        h = h + _mm("btf,fe->bte", jax.nn.silu(g) * u, lp["down"]).astype(dt)
        return (h, kc, vc, l + 1), None

    if isinstance(params["layers"], list):                             # unrolled
        for l, lp in enumerate(params["layers"]):
            (h, kc, vc, _), _ = layer((h, kc, vc, l), lp)
    else:
        (h, kc, vc, _), _ = jax.lax.scan(layer, (h, kc, vc, 0), params["layers"])
    x = _rms(h[:, -1], params["norm"], d.eps)
    logits = _mm("be,ve->bv", x, params["embed"]) if d.tied else _mm("be,ev->bv", x, params["lm_head"])
    return logits, kc, vc


@partial(jax.jit, static_argnames=("d", "window", "total"))
def prefill(params, prompt, *, d: Dims, window, total: int):
    """One causal pass over the prompt (B, P): (logits (B, V) of its last position, kc, vc)
    with a fresh cache of `total` = P + n rows."""
    layers = params["layers"]
    L = len(layers) if isinstance(layers, list) else layers["wq"].shape[0]
    B, dt = prompt.shape[0], params["embed"].dtype
    kc = vc = jnp.zeros((L, B, total, d.kv_heads, d.head_dim), dt)
    return _forward(d, window, params, prompt, 0, kc, vc, prefill=True)


@partial(jax.jit, static_argnames=("d", "window", "n"))
def decode(params, logits, kc, vc, eos, *, d: Dims, window, n: int):
    """The n greedy tokens (B, n) int32 from the prefill's logits; eos < 0: none."""
    B, S = logits.shape[0], kc.shape[2]
    P = S - n
    tok = jnp.argmax(logits, -1).astype(jnp.int32)
    done = tok == eos
    out = jnp.full((B, n), jnp.maximum(eos, 0), jnp.int32).at[:, 0].set(tok)

    def cond(c):
        return (c[0] < n) & ~jnp.all(c[2])

    def body(c):
        i, tok, done, out, kc, vc = c                   # feed token i-1 at position P+i-1
        logits, kc, vc = _forward(d, window, params, tok[:, None], P + i - 1, kc, vc, prefill=False)
        nxt = jnp.where(done, eos, jnp.argmax(logits, -1).astype(jnp.int32))
        return i + 1, nxt, done | (nxt == eos), out.at[:, i].set(nxt), kc, vc

    return jax.lax.while_loop(cond, body, (jnp.int32(1), tok, done, out, kc, vc))[3]


def generate(params, config: dict, prompt_ids, max_new_tokens: int, eos_token_id=None, window=None) -> np.ndarray:
    """Greedy tokens (B, P + max_new_tokens) int64: the prompt, then the generated tokens
    (a row that emitted eos_token_id repeats it to the end)."""
    prompt = np.atleast_2d(np.asarray(prompt_ids))
    if max_new_tokens == 0:
        return prompt.astype(np.int64)
    d, n = dims(config), max_new_tokens
    logits, kc, vc = prefill(params, jnp.asarray(prompt, jnp.int32), d=d, window=window, total=prompt.shape[1] + n)
    eos = jnp.int32(-1 if eos_token_id is None else eos_token_id)
    out = decode(params, logits, kc, vc, eos, d=d, window=window, n=n)
    return np.concatenate([prompt, np.asarray(out)], 1).astype(np.int64)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("directory")
    ap.add_argument("--prompt-len", type=int, default=8)
    ap.add_argument("--new", type=int, default=32)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--window", type=int, default=None)
    ap.add_argument("--eos", type=int, default=None, help="stop id (default: none, all --new tokens run)")
    ap.add_argument("--dtype", default=None, help="cast the weights (default: the file's dtype)")
    ap.add_argument("--reps", type=int, default=3, help="timed warm runs; the best is reported")
    a = ap.parse_args(argv)
    config = read_config(a.directory)
    t = time.perf_counter()
    params = jax.block_until_ready(load(a.directory, a.dtype))
    print(f"load: {time.perf_counter() - t:.2f} s ({jax.devices()[0]})")
    prompt = jnp.asarray(np.random.default_rng(0).integers(0, config["vocab_size"], (a.batch, a.prompt_len)), jnp.int32)
    d, n, S = dims(config), a.new, a.prompt_len + a.new
    eos = jnp.int32(-1 if a.eos is None else a.eos)
    t = time.perf_counter()
    pre = prefill.lower(params, prompt, d=d, window=a.window, total=S).compile()
    logits, kc, vc = pre(params, prompt)
    dec = decode.lower(params, logits, kc, vc, eos, d=d, window=a.window, n=n).compile()
    print(f"compile: {time.perf_counter() - t:.2f} s")
    logits, kc, vc = pre(params, prompt)                                # one untimed warm run
    jnp.argmax(logits, -1).block_until_ready()
    np.asarray(dec(params, logits, kc, vc, eos))
    ttft, loop = [], []
    for _ in range(a.reps):
        t = time.perf_counter()
        logits, kc, vc = pre(params, prompt)
        jnp.argmax(logits, -1).block_until_ready()
        t1 = time.perf_counter()
        out = np.asarray(dec(params, logits, kc, vc, eos))
        t2 = time.perf_counter()
        ttft.append(t1 - t)
        loop.append(t2 - t1)
    # the loop ran until the last row emitted eos (column j: j steps), else n - 1 steps
    steps = max(int(np.argmax(r == a.eos)) if (r == a.eos).any() else n - 1 for r in out)
    print(f"time to first token: {min(ttft) * 1e3:.2f} ms (prefill of {a.batch} x {a.prompt_len})")
    print(f"decode: {min(loop) * 1e3 / max(steps, 1):.3f} ms/token ({steps} steps after the first token, batch {a.batch})")
    print("generated tokens[0]:", out[0].tolist())


if __name__ == "__main__":
    main()
