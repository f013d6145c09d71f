"""LLM decoding benchmark: Tidal vs JAX (padded cache, one jit) vs PyTorch eager.

A tiny Llama (dim 256, 4 layers, 4 heads of 64, SwiGLU hidden 768, vocab 2048,
untied output, rotate-half RoPE), batch 4, a 16-token prompt, greedy decoding
of T in {256, 1024, 4096} tokens with causal or window(256) attention. The same
deterministic float32 weights (`examples/llm_decode.py`'s `init_weights`, seed 0)
and prompt drive all three systems; every system feeds the prompt one token per
step through the same loop (P + T steps), so they do the same work:

* tidal: `examples/llm_decode.py`'s program on the default jax backend (the K/V
  cache is the recurrent tensors k[0:t+1] / k[max(0, t-W+1):t+1]).
* jax: what JAX users write, profiled and tuned (issue 49): the whole loop in one
  `jax.jit` with `lax.fori_loop`; each layer's cache is (B, H, S, hd), so both
  attention contractions are `dot_general`s batched over (B, H) that read the
  cache without a transpose (the former (B, S, H, hd) cache read through
  `einsum("bhd,bnhd->bhn")` was 2.6x slower at T=1024), and the new row goes in
  with `dynamic_update_slice`; causal attention reads the padded cache of
  S = P + T rows under a mask (XLA needs static shapes); window attention keeps
  a ring buffer of S = W rows (slot t % W), so a step reads W rows, not P + T;
  RoPE angles are one table; the top-2 margin is a max over the logits with
  the argmax masked (`lax.top_k` sorts on XLA CPU: 1.6 of a 3.5 ms step).
* tidal-half (T=256): Tidal under `p.compile(device_memory=...)` of half the peak
  live bytes of its stores without a budget (measured first, in the same process):
  weights and caches are swapped to host memory and back; the tokens must stay
  the same (`swaps`: how many moves; `live_mb`: the peak on the device).
* torch: eager PyTorch (one thread), Meta-style: a preallocated cache read as
  cache[:, :t+1] for causal (the attended part grows), a sliding cache of the
  last W steps (torch.cat, then dropped from the front) for window.

Metrics per configuration (one process each, bench/harness.py): `compile_s`
(tidal: p.compile(); jax: lower + compile; torch: 0), `compile_to_first_s`
(from the start of compilation to the end of the first run), `ms_per_token`
(the best warm run / T generated tokens; the prompt steps are included in the
run), `peak_rss_mb` (harness), `live_mb` (tidal: the peak live bytes of its stores,
`exe.memory_report()`; jax: arguments, results and temporaries of the compiled
decode per XLA's memory analysis, plus the weights), the generated tokens (list and sha256), the
near-ties (steps whose top-2 logit gap is < 1e-3) and Tidal's `exe.stats()`.
After the runs the tokens of the three systems are compared per (pattern, T):
identical, or the first differing token and the top-2 gap there (a divergence
at a gap ~1e-6 is a float tie, not a bug). A PNG of ms/token and peak memory
vs T is written next to the JSON lines (bench/results/decode.png).

    python bench/decode.py                         # everything (long: Tidal is slow today)
    python bench/decode.py --only '"T": 256'       # a subset; --timeout S per configuration
    python bench/decode.py --T 1024,8192 --only '"system": "tidal"'   # other lengths
"""
from __future__ import annotations

import hashlib
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import llm_decode as L  # noqa: E402  (examples/llm_decode.py)
from harness import RESULTS, main, plot, single_thread_torch  # noqa: E402

MODEL = dict(dim=256, layers=4, heads=4, hidden=768, vocab=2048, batch=4)
PROMPT, WINDOW = 16, 256
SYSTEMS = ("jax", "torch", "tidal")
TIE = 1e-3


def model_config(cfg: dict) -> L.Config:
    return L.Config(**{k: cfg[k] for k in MODEL}, pattern=cfg["pattern"], window=cfg.get("window", WINDOW))


# -- the JAX baseline -------------------------------------------------------------------------
def jax_decoder(conf: L.Config, weights: dict, prompt_len: int, steps: int):
    """A jitted fn(tokens0 (steps, B) int32, prompt rows filled) -> (tokens, margins)."""
    import jax
    import jax.numpy as jnp

    w = {k: jnp.asarray(v) for k, v in weights.items()}
    H, dh, B, D = conf.heads, conf.dim // conf.heads, conf.batch, conf.dim
    inv = jnp.asarray(conf.rope_base ** (-np.arange(0, dh, 2, dtype=np.float64) / dh), jnp.float32)
    pos = jnp.arange(steps)

    def rms(x, g):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + conf.eps) * g

    # Tuned as a practitioner writes it (issue 49): each layer's cache is (B, H, S, dh), so
    # both attention contractions are batched `dot_general`s over (B, H) with no transpose
    # of the cache, and the new row goes in with one dynamic_update_slice; RoPE angles are
    # a table computed once. Causal attention reads the whole padded cache under a mask
    # (XLA needs static shapes); window attention keeps a ring buffer of W rows (slot
    # t % W), so a step reads W rows, not the padded S (the order of rows does not matter
    # to softmax; RoPE is applied before a row is stored).
    S = steps if conf.pattern == "causal" else min(conf.window, steps)
    angles = pos[:, None].astype(jnp.float32) * inv                   # (steps, dh/2)
    cos_t, sin_t = jnp.cos(angles), jnp.sin(angles)
    slots = jnp.arange(S)

    def rope_at(x, t):
        cos, sin = cos_t[t], sin_t[t]
        if conf.rope == "interleaved":
            a, b = x[..., 0::2], x[..., 1::2]
            return jnp.stack([a * cos - b * sin, a * sin + b * cos], -1).reshape(x.shape)
        a, b = x[..., : dh // 2], x[..., dh // 2:]
        return jnp.concatenate([a * cos - b * sin, b * cos + a * sin], -1)

    scale = np.float32(np.sqrt(dh))

    def body(t, carry):
        toks, kcs, vcs, margins = carry                 # kcs[i], vcs[i]: (B, H, S, dh)
        x = w["embed.weight"][toks[t]]
        slot = t if conf.pattern == "causal" else t % S
        mask = slots <= t                               # causal: rows 0..t; ring: filled slots
        kcs, vcs = list(kcs), list(vcs)
        for i in range(conf.layers):
            pre = f"layers.{i}."
            h = rms(x, w[pre + "attn_norm.weight"])
            q, k, v = ((h @ w[pre + f"attn.{n}.weight"]).reshape(B, H, dh) for n in "qkv")
            q, k = rope_at(q, t), rope_at(k, t)
            kcs[i] = jax.lax.dynamic_update_slice(kcs[i], k[:, :, None], (0, 0, slot, 0))
            vcs[i] = jax.lax.dynamic_update_slice(vcs[i], v[:, :, None], (0, 0, slot, 0))
            s = jnp.einsum("bhd,bhsd->bhs", q, kcs[i]) / scale
            a = jax.nn.softmax(jnp.where(mask, s, -jnp.inf), -1)
            x = x + jnp.einsum("bhs,bhsd->bhd", a, vcs[i]).reshape(B, D) @ w[pre + "attn.o.weight"]
            h = rms(x, w[pre + "mlp_norm.weight"])
            g = h @ w[pre + "mlp.gate.weight"]
            x = x + (jax.nn.silu(g) * (h @ w[pre + "mlp.up.weight"])) @ w[pre + "mlp.down.weight"]
        x = rms(x, w["norm.weight"])
        logits = x @ (w["embed.weight"].T if conf.tied else w["output.weight"])
        # the top-2 gap without lax.top_k (a sort on XLA CPU: 1.6 ms of a 3.5 ms step at T=256)
        nxt = jnp.argmax(logits, -1)
        best = jnp.take_along_axis(logits, nxt[:, None], -1)[:, 0]
        second = jnp.where(jnp.arange(logits.shape[-1]) == nxt[:, None], -jnp.inf, logits).max(-1)
        toks = toks.at[t + 1].set(jnp.where(t + 1 >= prompt_len, nxt.astype(toks.dtype), toks[t + 1]))
        return toks, tuple(kcs), tuple(vcs), margins.at[t].set(best - second)

    def decode(toks0):
        cache = tuple(jnp.zeros((B, H, S, dh), jnp.float32) for _ in range(conf.layers))
        margins = jnp.zeros((steps - 1, B), jnp.float32)
        toks, _, _, margins = jax.lax.fori_loop(0, steps - 1, body, (toks0, cache, cache, margins))
        return toks, margins

    return jax.jit(decode)


def jax_tokens0(prompt: np.ndarray, steps: int) -> np.ndarray:
    toks = np.zeros((steps, prompt.shape[1]), np.int32)
    toks[: len(prompt)] = prompt
    return toks


def jax_decode(conf: L.Config, weights: dict, prompt: np.ndarray, steps: int):
    """(tokens (steps, B) int64, margins (steps - 1, B)) with the JAX baseline."""
    toks, margins = jax_decoder(conf, weights, len(prompt), steps)(jax_tokens0(prompt, steps))
    return np.asarray(toks).astype(np.int64), np.asarray(margins)


# -- the PyTorch eager baseline ---------------------------------------------------------------
def torch_decode(conf: L.Config, weights: dict, prompt: np.ndarray, steps: int):
    """(tokens (steps, B) int64, margins (steps - 1, B)), eager PyTorch, float32."""
    import torch

    w = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in weights.items()}
    H, dh, B, D, W = conf.heads, conf.dim // conf.heads, conf.batch, conf.dim, conf.window
    inv = torch.tensor(conf.rope_base ** (-np.arange(0, dh, 2, dtype=np.float64) / dh), dtype=torch.float32)
    out_w = w["embed.weight"].T if conf.tied else w["output.weight"]

    def rope(x, t):
        ang = float(t) * inv
        cos, sin = torch.cos(ang), torch.sin(ang)
        if conf.rope == "interleaved":
            a, b = x[..., 0::2], x[..., 1::2]
            return torch.stack([a * cos - b * sin, a * sin + b * cos], -1).reshape(x.shape)
        a, b = x[..., : dh // 2], x[..., dh // 2:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)

    def rms(x, g):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + conf.eps) * g

    with torch.inference_mode():
        if conf.pattern == "causal":
            kc = [torch.zeros(B, steps, H, dh) for _ in range(conf.layers)]
            vc = [torch.zeros(B, steps, H, dh) for _ in range(conf.layers)]
        else:
            kc = [torch.zeros(B, 0, H, dh) for _ in range(conf.layers)]
            vc = [torch.zeros(B, 0, H, dh) for _ in range(conf.layers)]
        toks = [torch.from_numpy(prompt[i].astype(np.int64)) for i in range(len(prompt))]
        margins = []
        for t in range(steps - 1):
            x = w["embed.weight"][toks[t]]
            for i in range(conf.layers):
                pre = f"layers.{i}."
                h = rms(x, w[pre + "attn_norm.weight"])
                q, k, v = ((h @ w[pre + f"attn.{n}.weight"]).view(B, H, dh) for n in "qkv")
                q, k = rope(q, t), rope(k, t)
                if conf.pattern == "causal":
                    kc[i][:, t], vc[i][:, t] = k, v
                    K, V = kc[i][:, : t + 1], vc[i][:, : t + 1]
                else:
                    keep = max(0, kc[i].shape[1] - (W - 1))
                    kc[i] = torch.cat([kc[i][:, keep:], k[:, None]], 1)
                    vc[i] = torch.cat([vc[i][:, keep:], v[:, None]], 1)
                    K, V = kc[i], vc[i]
                s = torch.einsum("bhd,bnhd->bhn", q, K) / float(np.float32(np.sqrt(dh)))
                a = torch.softmax(s, -1)
                x = x + torch.einsum("bhn,bnhd->bhd", a, V).reshape(B, D) @ w[pre + "attn.o.weight"]
                h = rms(x, w[pre + "mlp_norm.weight"])
                g = h @ w[pre + "mlp.gate.weight"]
                g = torch.nn.functional.silu(g) * (h @ w[pre + "mlp.up.weight"])
                x = x + g @ w[pre + "mlp.down.weight"]
            logits = rms(x, w["norm.weight"]) @ out_w
            top2 = torch.topk(logits, 2, -1).values
            margins.append(top2[:, 0] - top2[:, 1])
            if t + 1 >= len(toks):
                toks.append(torch.argmax(logits, -1))
        return torch.stack(toks).numpy().astype(np.int64), torch.stack(margins).numpy()


# -- one configuration (in its own process) ---------------------------------------------------
def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def measure(cfg: dict) -> dict:
    conf = model_config(cfg)
    weights = L.init_weights(conf, 0)
    P, T = cfg["prompt"], cfg["T"]
    steps = P + T
    prompt = L.make_prompt(conf, P, 1)
    extra: dict = {}
    if cfg["system"] in ("tidal", "tidal-half"):
        p, _ = L.build(conf, weights, margins=True)
        bounds, inputs = {"P": P, "T": steps}, {"prompt": prompt}
        budget = None
        if cfg["system"] == "tidal-half":   # half of the stores' unconstrained peak (issue 13)
            free = p.compile()
            free.run(bounds=bounds, inputs=inputs)
            budget = free.memory_report().peak_bytes // 2
            extra["budget_mb"] = budget / 2**20
        exe, compile_s = _timed(lambda: p.compile(device_memory=budget))
        run = lambda: exe.run(bounds=bounds, inputs=inputs)  # noqa: E731
        fetch = lambda out: (out["tokens"], out["margin"][:-1])  # noqa: E731
    elif cfg["system"] == "jax":
        import jax

        fn = jax_decoder(conf, weights, P, steps)
        toks0 = jax_tokens0(prompt, steps)
        compiled, compile_s = _timed(lambda: fn.lower(toks0).compile())
        run = lambda: jax.block_until_ready(compiled(toks0))  # noqa: E731
        fetch = lambda out: (np.asarray(out[0]), np.asarray(out[1]))  # noqa: E731
    elif cfg["system"] == "torch":
        single_thread_torch()
        compile_s = 0.0
        run = lambda: torch_decode(conf, weights, prompt, steps)  # noqa: E731
        fetch = lambda out: out  # noqa: E731
    else:
        raise ValueError(f"unknown system {cfg['system']!r}")
    out, first_s = _timed(run)
    warm = min(_timed(run)[1] for _ in range(max(1, cfg.get("warm", 1))))
    tokens, margins = fetch(out)
    if cfg["system"] in ("tidal", "tidal-half"):
        extra["stats"] = exe.stats()
        report = exe.memory_report()
        extra["live_mb"] = report.peak_device_bytes / 2**20    # = peak_bytes without a budget
        if report.budget is not None:
            extra["swaps"] = len(report.swapped)
            extra["moved_mb"] = sum(b for *_, b in report.swapped) / 2**20
    elif cfg["system"] == "jax":
        # what the jitted decode holds: its arguments, results and temporaries (the
        # padded cache is one) per XLA's memory analysis, plus the weights it closes over
        ma = compiled.memory_analysis()
        held = ma.argument_size_in_bytes + ma.output_size_in_bytes + ma.temp_size_in_bytes
        extra["live_mb"] = (held + sum(v.nbytes for v in weights.values())) / 2**20
    gen = np.asarray(tokens, np.int64)[P:]
    near = np.argwhere(np.asarray(margins)[P - 1:] < TIE)
    return {"compile_s": compile_s, "compile_to_first_s": compile_s + first_s,
            "ms_per_token": 1e3 * warm / T, "warm_run_s": warm, **extra,
            "tokens_sha256": hashlib.sha256(gen.tobytes()).hexdigest()[:16],
            "near_ties": [[int(i), int(b), float(margins[P - 1 + i, b])] for i, b in near],
            "tokens": gen.tolist()}


# -- comparing the systems' tokens (in the parent) --------------------------------------------
def compare_tokens(rows: list[dict]) -> list[str]:
    """One line per (pattern, T): identical tokens, or where they first differ."""
    lines = []
    groups: dict = {}
    for r in rows:
        if "tokens" in r:
            groups.setdefault((r["pattern"], r["T"]), {})[r["system"]] = r
    for (pattern, T), by in sorted(groups.items()):
        names = sorted(by)
        ref = by[names[0]]
        verdicts = []
        for other in names[1:]:
            a, b = np.asarray(ref["tokens"]), np.asarray(by[other]["tokens"])
            if a.shape == b.shape and np.array_equal(a, b):
                verdicts.append(f"{names[0]} == {other}")
                continue
            diff = np.argwhere(a != b)
            i = int(diff[:, 0].min())
            bs = [int(x) for x in diff[diff[:, 0] == i, 1]]
            gaps = {s: [g for (j, k, g) in by[s].get("near_ties", []) if j == i and k in bs]
                    for s in (names[0], other)}
            tie = any(gaps.values())
            verdicts.append(f"{names[0]} != {other} from generated token {i} (sequence {bs[0]}): "
                            + (f"a float tie (top-2 gaps {gaps})" if tie else "NOT at a near-tie"))
        lines.append(f"{pattern:>6} T={T:<5} {', '.join(verdicts) or 'only ' + names[0] + ' finished'}")
    return lines


def after(rows: list[dict]) -> None:
    print()
    print("generated tokens across systems (greedy):")
    for line in compare_tokens(rows):
        print("  " + line)
    for r in rows:
        if r.get("stats"):
            print(f"tidal {r['pattern']} T={r['T']} exe.stats(): {r['stats']}")
    path = plot(rows, os.path.join(RESULTS, "decode.png"), x="T", ys=["ms_per_token", "peak_rss_mb"],
                group=["system", "pattern"])
    if path:
        print("plot:", path)


def configs(Ts=(256, 1024, 4096), patterns=("causal", "window")) -> list[dict]:
    # tidal-half: under a device_memory budget of half its peak (swapping; Python loops), T=256 only
    return [{"system": s, "pattern": pat, "T": T, "prompt": PROMPT, "window": WINDOW, **MODEL, "warm": 1}
            for T in Ts for pat in patterns for s in SYSTEMS + (("tidal-half",) if T == 256 else ())]


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--T", default="256,1024,4096", help="the generated lengths, comma-separated")
    known, _ = ap.parse_known_args()
    main("decode", configs(Ts=tuple(int(x) for x in known.T.split(","))), measure, key=("pattern", "T"),
         metrics=["ms_per_token", "compile_s", "compile_to_first_s", "live_mb", "budget_mb", "swaps"],
         timeout=900.0, after=after)
