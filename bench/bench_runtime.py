"""Scheduled runtime vs hand-written JAX, on CPU: dispatch overhead and end to end.

    python bench/bench_runtime.py [--T 2000] [--hidden 64] [--quick]

Prints, from one run:
* per-operator dispatch overhead: a chain of elementwise ops per step, as
  seconds per launch, against a hand-written Python loop that calls one
  jitted function per op (the same number of dispatches);
* an RNN (h[t] = tanh(h[t-1] @ W + x[t] @ U)) and a windowed program
  (w[t] = sum(exp(x[max(0, t - 7):t + 1]))) end to end, after the default sdg
  passes (fusion), against a hand-written Python loop over one jitted step per
  t and against `lax.scan`. The RNN's loop runs as one XLA loop (xla_loops).
Times exclude compilation (one warm-up run with the same bounds first) and
include waiting for the results. The RNN is timed twice: with NumPy inputs
(copied to the device in every run) and with the jax arrays lax.scan gets
(read where they are), each against lax.scan as the median of 101 runs of the
three in turn (a best of few, one system after the other, is at the mercy of
this machine's drift). The hand-written loops get their inputs as
per-step device arrays prepared outside the timed region and keep their
outputs as a list of arrays (no stacking), so they do strictly less work.
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from tidal.runtime.scheduled import compile_sdg


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _medians(fns: list, repeat: int) -> list[float]:
    """The median time of each of `fns`, called in turn `repeat` times (interleaved:
    this machine's speed drifts by 15% and more between seconds, which a best of
    3 taken one system after the other turned into RNN ratios of 1.45 to 2.26)."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            start = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - start)
    return [float(np.median(ts)) for ts in times]


def _sync(out):
    jax.tree_util.tree_map(lambda a: a.block_until_ready() if hasattr(a, "block_until_ready") else a, out)
    return out


def with_default_passes(text: str):
    """The graph after the sdg passes `p.compile()` runs (sdg-dce, cse,
    sdg-fuse: tidal.frontend.compile_pipeline), as a user's program gets it."""
    from mlir import ir

    from tidal.dialects import make_context
    from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES
    from tidal.passes.runner import run_pipeline
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, f"builtin.module({','.join(DEFAULT_SDG_PASSES)})")
        return str(module)


def chain_program(n_ops: int, d: int) -> str:
    v = f"!tidal.tensor<[{d}], f32>"
    lines = [f"sdg.graph @chain dims [t < T] {{", f'  %x = sdg.input "x" domain [t] : {v}']
    prev = "%x"
    for k in range(n_ops):
        kind = ("tanh", "neg", "exp", "sin")[k % 4]
        lines.append(f"  %u{k} = sdg.unary {kind} {prev}[t] domain [t] : ({v}) -> {v}")
        prev = f"%u{k}"
    lines.append(f'  sdg.output "y" {prev}[t] domain [t] : {v}')
    return "\n".join(lines + ["}"])


def rnn_program(d: int) -> str:
    v, m = f"!tidal.tensor<[{d}], f32>", f"!tidal.tensor<[{d}, {d}], f32>"
    return f"""
sdg.graph @rnn dims [t < T] {{
  %x = sdg.input "x" domain [t] : {v}
  %W = sdg.input "W" domain [] : {m}
  %U = sdg.input "U" domain [] : {m}
  %xu = sdg.matmul %x[t], %U[] domain [t] : ({v}, {m}) -> {v}
  %h0 = sdg.unary tanh %xu[0] domain [] : ({v}) -> {v}
  %hw = sdg.matmul %h[t - 1], %W[] domain [t] : ({v}, {m}) -> {v}
  %a = sdg.binary add %hw[t], %xu[t] domain [t] : ({v}, {v}) -> {v}
  %hn = sdg.unary tanh %a[t] domain [t] : ({v}) -> {v}
  %h = sdg.merge %h0[] if <t eq 0>, %hn[t] if <true> domain [t] : ({v}, {v}) -> {v}
  sdg.output "h" %h[t] domain [t] : {v}
}}"""


def window_program(d: int, w: int) -> str:
    v = f"!tidal.tensor<[{d}], f32>"
    return f"""
sdg.graph @win dims [t < T] {{
  %x = sdg.input "x" domain [t] : {v}
  %e = sdg.unary exp %x[t] domain [t] : ({v}) -> {v}
  %s = sdg.reduce sum [0] %e[max(0, t - {w - 1}):t + 1] domain [t] : ({v}) -> {v}
  sdg.output "w" %s[t] domain [t] : {v}
}}"""


def bench_dispatch(T: int, n_ops: int, d: int, repeat: int) -> dict:
    exe = compile_sdg(chain_program(n_ops, d))
    x = np.random.default_rng(0).standard_normal((T, d)).astype(np.float32)
    exe.run({"T": T}, {"x": x})
    ours = _best(lambda: exe.run({"T": T}, {"x": x}), repeat)
    ops = [jax.jit(f) for f in (jnp.tanh, jnp.negative, jnp.exp, jnp.sin)]
    xs = [jnp.asarray(row) for row in x]  # rows on device beforehand: no slicing in the loop

    def hand():
        out = []
        for t in range(T):
            y = xs[t]
            for k in range(n_ops):
                y = ops[k % 4](y)
            out.append(y)
        return _sync(out)
    hand()
    theirs = _best(hand, repeat)
    launches = T * n_ops  # the output keeps references: no launch
    return {"ours_us_per_launch": ours / launches * 1e6, "hand_us_per_op": theirs / (T * n_ops) * 1e6,
            "ratio": ours / theirs}


def _rnn_reference(W, U, x):
    def step(h, xt):
        h = jnp.tanh(h @ W + xt @ U)
        return h, h
    h0 = jnp.tanh(x[0] @ U)
    _, hs = jax.lax.scan(step, h0, x[1:])
    return jnp.concatenate([h0[None], hs])


def bench_rnn(T: int, d: int, repeat: int, rnn_repeat: int = 101) -> dict:
    rng = np.random.default_rng(1)
    W = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    U = (rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    x = rng.standard_normal((T, d)).astype(np.float32)
    exe = compile_sdg(with_default_passes(rnn_program(d)))
    inputs = {"x": x, "W": W, "U": U}
    got = exe.run({"T": T}, inputs)["h"]
    step = jax.jit(lambda h, xt, W, U: jnp.tanh(h @ W + xt @ U))
    first = jax.jit(lambda xt, U: jnp.tanh(xt @ U))
    jW, jU, jx = jnp.asarray(W), jnp.asarray(U), jnp.asarray(x)
    rows = [jnp.asarray(row) for row in x]

    def hand():
        h = first(rows[0], jU)
        out = [h]
        for t in range(1, T):
            h = step(h, rows[t], jW, jU)
            out.append(h)
        return _sync(out)
    expected = np.stack([np.asarray(h) for h in hand()])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    theirs = _best(hand, repeat)
    scan = jax.jit(_rnn_reference)
    _sync(scan(jW, jU, jx))
    on_device = {"x": jx, "W": jW, "U": jU}     # as lax.scan gets them: read where they are
    np.testing.assert_allclose(exe.run({"T": T}, on_device)["h"], got, rtol=1e-6)
    ours, ours_dev, scanned = _medians([lambda: exe.run({"T": T}, inputs), lambda: exe.run({"T": T}, on_device),
                                        lambda: _sync(scan(jW, jU, jx))], rnn_repeat)
    return {"ours_s": ours, "ours_device_inputs_s": ours_dev, "hand_loop_s": theirs, "lax_scan_s": scanned,
            "ratio_vs_loop": ours / theirs, "ratio_vs_scan": ours / scanned,
            "ratio_vs_scan_device_inputs": ours_dev / scanned, "compiles": exe.compiles()}


def bench_window(T: int, d: int, w: int, repeat: int) -> dict:
    x = np.random.default_rng(2).standard_normal((T, d)).astype(np.float32)
    exe = compile_sdg(with_default_passes(window_program(d, w)))
    got = exe.run({"T": T}, {"x": x})["w"]
    ours = _best(lambda: exe.run({"T": T}, {"x": x}), repeat)
    padded = jnp.asarray(np.concatenate([np.full((w - 1, d), -np.inf, np.float32), x]))
    step = jax.jit(lambda buf, t: jnp.sum(jnp.exp(jax.lax.dynamic_slice_in_dim(buf, t, w, 0)), axis=0))

    def hand():
        return _sync([step(padded, t) for t in range(T)])
    expected = np.stack([np.asarray(v) for v in hand()])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    theirs = _best(hand, repeat)
    return {"ours_s": ours, "hand_loop_s": theirs, "ratio_vs_loop": ours / theirs,
            "compiles": exe.compiles()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--T", type=int, default=2000)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--ops", type=int, default=8)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rnn-repeat", type=int, default=101,
                   help="RNN: Tidal and lax.scan run in turn this many times, medians compared")
    p.add_argument("--quick", action="store_true", help="T=200, one repeat")
    args = p.parse_args(argv)
    if args.quick:
        args.T, args.repeat, args.rnn_repeat = 200, 1, 5
    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}; T={args.T}, hidden={args.hidden}")
    r = bench_dispatch(args.T, args.ops, args.hidden, args.repeat)
    print(f"dispatch: {r['ours_us_per_launch']:.1f} us/launch (scheduled) vs {r['hand_us_per_op']:.1f} us/op "
          f"(hand-written jitted op loop): ratio {r['ratio']:.2f}")
    r = bench_rnn(args.T, args.hidden, args.repeat, args.rnn_repeat)
    print(f"rnn: {r['ours_s'] * 1e3:.1f} ms (scheduled) vs {r['hand_loop_s'] * 1e3:.1f} ms (jitted step loop) "
          f"vs {r['lax_scan_s'] * 1e3:.1f} ms (lax.scan): ratio {r['ratio_vs_loop']:.2f} vs loop, "
          f"{r['ratio_vs_scan']:.2f} vs scan; with the inputs on the device as lax.scan's: "
          f"{r['ours_device_inputs_s'] * 1e3:.2f} ms, {r['ratio_vs_scan_device_inputs']:.2f} vs scan; "
          f"{r['compiles']} compiles")
    r = bench_window(args.T, args.hidden, 8, args.repeat)
    print(f"window: {r['ours_s'] * 1e3:.1f} ms (scheduled) vs {r['hand_loop_s'] * 1e3:.1f} ms (jitted step loop): "
          f"ratio {r['ratio_vs_loop']:.2f}; {r['compiles']} compiles")


if __name__ == "__main__":
    main()
