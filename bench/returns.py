"""Monte-Carlo returns over growing episodes: Tidal with and without sdg-lift, and JAX.

    python bench/returns.py                  # every configuration (one process each)
    python bench/returns.py --only '"T": 4096'

Workload: B = 64 reward streams of T steps, episode ends `d` (about one step in
50), returns cut at episode ends, G[t] = sum_k gamma^k prod_{j<k} (1 - d[t+j]) r[t+k]
for every t (TEMPO's `r[t:T].discounted_sum(gamma)` with per-step discounts),
then their mean per iteration; I = 16 iterations, new rewards each.

* tidal: `td.discounted_sum(r[i, t:T], gamma * (1 - d[i, t:T]))`, jax backend,
  default pipeline: sdg-lift makes the T suffix sums one reverse linear scan
  of (T, B) per iteration (O(T)).
* tidal-nolift: the same program without sdg-lift: one scan over a window of
  T - t elements at every t (O(T^2) per iteration; not run at T = 4096).
* jax: a reverse `lax.scan` over the (T, B) rewards in `jit` (O(T)).

ms_per_iter = the median of REPEAT runs of I iterations / I (one run for
tidal-nolift), after a warm-up run at the same bounds (one run alone moved the
T = 4096 / T = 1024 ratio between 4.8x and 5.6x from process to process;
medians of 15 in one process: 4.0x to 4.3x);
compile_s = p.compile() plus the warm-up (jax: lowering and compiling).
Done-when (issue 12): tidal at T = 4096 costs <= 5x its cost at T = 1024.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPEAT = 9
sys.path.insert(0, HERE)

B, I, GAMMA = 64, 16, 0.99


def data(T: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    r = rng.standard_normal((I, T, B)).astype(np.float32)
    d = (rng.uniform(size=(I, T, B)) < 0.02).astype(np.float32)
    return r, d


def measure_tidal(cfg):
    import tidal as td

    with td.Program("returns") as p:
        (i, In), (t, T) = p.dims("i", "t")
        r = td.input("r", shape=(B,), domain=(i, t))
        d = td.input("d", shape=(B,), domain=(i, t))
        g = td.discounted_sum(r[i, t:T], GAMMA * (1.0 - d[i, t:T]), dim=0)
        p.output("mean", g[i, 0:T].mean())
    passes = None if cfg["system"] == "tidal" else td.default_passes(without=["sdg-lift"])
    r, dn = data(cfg["T"])
    bounds, inputs = {"I": I, "T": cfg["T"]}, {"r": r, "d": dn}
    start = time.perf_counter()
    exe = p.compile(backend="jax", passes=passes)
    exe.run(bounds, inputs)
    compile_s = time.perf_counter() - start
    runs = []
    for _ in range(REPEAT if cfg["system"] == "tidal" else 1):    # no-lift: seconds a run
        start = time.perf_counter()
        out = exe.run(bounds, inputs)
        runs.append(time.perf_counter() - start)
    return {"ms_per_iter": 1e3 * float(np.median(runs)) / I, "compile_s": compile_s,
            "check": float(np.sum(out["mean"]))}


def measure_jax(cfg):
    import jax
    import jax.numpy as jnp

    def returns(r, d):
        def back(G, x):
            rk, dk = x
            G = rk + GAMMA * (1.0 - dk) * G
            return G, G
        _, G = jax.lax.scan(back, jnp.zeros(r.shape[1]), (r, d), reverse=True)
        return G.mean()

    fn = jax.jit(returns)
    r, d = data(cfg["T"])
    start = time.perf_counter()
    jax.block_until_ready(fn(r[0], d[0]))
    compile_s = time.perf_counter() - start
    runs = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        outs = [fn(r[k], d[k]) for k in range(I)]
        jax.block_until_ready(outs)
        runs.append(time.perf_counter() - start)
    return {"ms_per_iter": 1e3 * float(np.median(runs)) / I, "compile_s": compile_s,
            "check": float(np.sum(np.asarray(outs)))}


def measure(cfg):
    return (measure_jax if cfg["system"] == "jax" else measure_tidal)(cfg)


CONFIGS = [{"system": s, "T": T} for T in (256, 1024, 4096) for s in ("jax", "tidal", "tidal-nolift")
           if not (s == "tidal-nolift" and T > 1024)]


def _scaling(rows):
    ms = {r["T"]: r.get("ms_per_iter") for r in rows if r["system"] == "tidal"}
    if ms.get(1024) and ms.get(4096):
        print(f"\ntidal T=4096 / T=1024: {ms[4096] / ms[1024]:.2f}x (target <= 5x: linear, not quadratic)")


if __name__ == "__main__":
    from harness import main

    main("returns", CONFIGS, measure, key=("T",), metrics=["ms_per_iter", "compile_s"], timeout=900.0,
         after=_scaling)
