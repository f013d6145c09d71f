"""One workload, several spellings: does Tidal's speed depend on how a program is written?

Each workload is written several ways that compute the same thing; every
variant runs on Tidal (one process per configuration, one thread,
bench/harness.py) and is compared with one JAX baseline of the workload,
measured in the same run. After the runs it prints, per workload, each
variant's ratio to JAX and the **spread**: the slowest variant's time over the
fastest's (issue 49 drives it down to <= 1.25x).

Decode (bench/decode.py's tiny Llama: dim 256, 4 layers of 4 heads, batch 4,
a 16-token prompt, greedy; JAX = bench/decode.py's tuned baseline). The
variants differ in the attention and the argmax only; the tokens must be
identical across variants and JAX:

* nn: `td.nn.MultiHeadAttention` (keys last: `q @ K^T`, K = k[0:t + 1]
  permuted to (B, H, hd, n); `td.softmax`) and `td.argmax`;
* keys_first: `K @ q` with K = k[0:t + 1] permuted to (B, H, n, hd), softmax
  written out as exp(s - max) / sum;
* keys_last: `q @ K^T` written by hand (K.permute to (B, H, hd, n)), softmax
  written out;
* argmax_primitives: as nn, the argmax as `where(x == max(x), iota, V).min()`.

REINFORCE, Monte-Carlo returns (bench/rl.py's CartPole, B = 64, T = 200,
I = 20; JAX = bench/rl.py's JaxReinforce), the returns spelled:

* discounted_sum: `td.discounted_sum(r[t:T], gamma * (1 - done[t:T]))`
  (examples/reinforce.py);
* recurrence: G[t] = r[t] + gamma * (1 - done[t]) * G[t + 1], a backward
  recurrence with G[T - 1] = r[T - 1].

    python bench/variants.py                       # every workload and variant
    python bench/variants.py --only decode --T 256,1024
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

from harness import main  # noqa: E402

DECODE_VARIANTS = ("nn", "keys_first", "keys_last", "argmax_primitives")
REINFORCE_VARIANTS = ("discounted_sum", "recurrence")


# -- decode ---------------------------------------------------------------------------------
def _attention_class(spelling: str):
    """A td.nn.MultiHeadAttention whose forward spells attention as `spelling`."""
    import math

    import tidal as td
    from tidal.nn.attention import temporal_window

    class HandAttention(td.nn.MultiHeadAttention):
        def forward(self, x):
            H, dh = self.n_heads, self.head_dim
            B = int(str(x.shape[0]))
            t = x.program.dim_of(self.dim, "attention dimension").step
            q = self.q(x).reshape(B, H, dh)
            k = self.k(x).reshape(B, H, dh)
            v = self.v(x).reshape(B, H, dh)
            q, k = self.rope(q, t), self.rope(k, t)
            K = temporal_window(k, self.dim, self.pattern, self.window)     # (n, B, H, dh)
            V = temporal_window(v, self.dim, self.pattern, self.window).permute(1, 2, 0, 3)   # (B, H, n, dh)
            if spelling == "keys_first":
                s = (K.permute(1, 2, 0, 3) @ q.unsqueeze(-1)).squeeze(-1)   # (B, H, n)
            else:
                s = (q.unsqueeze(2) @ K.permute(1, 2, 3, 0)).squeeze(2)      # (B, H, n)
            s = s * (1.0 / math.sqrt(dh))
            e = td.exp(s - s.max(-1, keepdim=True))
            w = e / e.sum(-1, keepdim=True)
            out = (w.unsqueeze(2) @ V).squeeze(2)                           # (B, H, dh)
            return self.o(out.reshape(B, H * dh))

    return HandAttention


def build_decode(cfg: dict):
    """(program, config, weights, prompt) of the decode variant cfg["variant"]."""
    import llm_decode as L
    import tidal as td
    from decode import model_config

    conf = model_config(cfg)
    weights = L.init_weights(conf, 0)
    variant = cfg["variant"]
    saved = (td.nn.MultiHeadAttention, L._argmax)
    try:
        if variant in ("keys_first", "keys_last"):
            td.nn.MultiHeadAttention = _attention_class(variant)
        if variant == "argmax_primitives":
            L._argmax = lambda logits, n: td.where(logits == logits.max(-1, keepdim=True),
                                                   td.arange(0, n), n).min(-1)
        p, _ = L.build(conf, weights)
    finally:
        td.nn.MultiHeadAttention, L._argmax = saved
    return p, conf, weights, L.make_prompt(conf, cfg["prompt"], 1)


def measure_decode(cfg: dict) -> dict:
    P, T = cfg["prompt"], cfg["T"]
    steps = P + T
    if cfg["system"] == "jax":
        import jax

        import llm_decode as L
        from decode import jax_decoder, jax_tokens0, model_config
        conf = model_config(cfg)
        fn = jax_decoder(conf, L.init_weights(conf, 0), P, steps)
        toks0 = jax_tokens0(L.make_prompt(conf, P, 1), steps)
        compiled = fn.lower(toks0).compile()
        run = lambda: jax.block_until_ready(compiled(toks0))    # noqa: E731
        tokens = lambda out: np.asarray(out[0])                  # noqa: E731
    else:
        p, conf, _, prompt = build_decode(cfg)
        exe = p.compile()
        run = lambda: exe.run(bounds={"P": P, "T": steps}, inputs={"prompt": prompt})   # noqa: E731
        tokens = lambda out: np.asarray(out["tokens"])              # noqa: E731
    start = time.perf_counter()
    out = run()
    first = time.perf_counter() - start
    warm = []
    for _ in range(2):
        start = time.perf_counter()
        run()
        warm.append(time.perf_counter() - start)
    gen = np.asarray(tokens(out), np.int64)[P:]
    return {"ms": 1e3 * min(warm) / T, "first_s": first,
            "tokens_sha256": hashlib.sha256(gen.tobytes()).hexdigest()[:16]}


# -- REINFORCE ------------------------------------------------------------------------------
def measure_reinforce(cfg: dict) -> dict:
    import rl
    returns = {"jax": "mc", "discounted_sum": "mc", "recurrence": "mc_recurrence"}[cfg["variant"]]
    out = (rl.measure_jax if cfg["system"] == "jax" else rl.measure_tidal)({**cfg, "returns": returns})
    return {"ms": out["ms_per_iter"], "first_s": out.get("compile_s", 0.0), "mean_return": out.get("mean_return")}


# -- the runs -------------------------------------------------------------------------------
def measure(cfg: dict) -> dict:
    return measure_decode(cfg) if cfg["workload"] == "decode" else measure_reinforce(cfg)


def configs(Ts=(256, 1024)) -> list[dict]:
    from decode import MODEL, PROMPT
    out = []
    for T in Ts:
        base = {"workload": "decode", "pattern": "causal", "T": T, "prompt": PROMPT, "window": 256, **MODEL}
        out.append({"system": "jax", "variant": "jax", **base})
        out += [{"system": "tidal", "variant": v, **base} for v in DECODE_VARIANTS]
    base = {"workload": "reinforce", "B": 64, "T": 200, "I": 20, "seed": 0}
    out.append({"system": "jax", "variant": "jax", **base})
    out += [{"system": "tidal", "variant": v, **base} for v in REINFORCE_VARIANTS]
    return out


def spread(rows: list[dict]) -> list[str]:
    """Per workload (and T): each variant's ratio to JAX, and the slowest over the fastest."""
    groups: dict = {}
    for r in rows:
        if "ms" in r:
            groups.setdefault((r["workload"], r.get("pattern", ""), r.get("T")), []).append(r)
    lines = []
    for key, rs in sorted(groups.items(), key=str):
        jax = next((r["ms"] for r in rs if r["system"] == "jax"), None)
        tidal = {r["variant"]: r for r in rs if r["system"] == "tidal"}
        if not tidal:
            continue
        times = {v: r["ms"] for v, r in tidal.items()}
        parts = [f"{v} {ms:.3g} ms" + (f" ({ms / jax:.2f}x jax)" if jax else "") for v, ms in times.items()]
        hashes = {r.get("tokens_sha256") for r in rs if r.get("tokens_sha256")}
        same = "" if len(hashes) <= 1 else f"; TOKENS DIFFER across variants: {sorted(hashes)}"
        lines.append(f"{' '.join(str(k) for k in key)}: jax {jax:.3g} ms; " if jax else f"{key}: ")
        lines[-1] += "; ".join(parts) + f"; spread {max(times.values()) / min(times.values()):.2f}x" + same
    return lines


def after(rows: list[dict]) -> None:
    print()
    print("spelling variants (ms per token / per iteration; ratio to JAX; spread = slowest / fastest):")
    for line in spread(rows):
        print("  " + line)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--T", default="256,1024", help="decode lengths, comma-separated")
    known, _ = ap.parse_known_args()
    main("variants", configs(Ts=tuple(int(x) for x in known.T.split(","))), measure,
         key=("workload", "pattern", "T"), metrics=["ms", "first_s"], timeout=900.0, after=after)
