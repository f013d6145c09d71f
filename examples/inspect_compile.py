"""A walk-through of what `p.compile()` does to a program: its named stages,
their dumps, the dependence graph and the executed schedule.

    python examples/inspect_compile.py [OUT_DIR]      (default: a new temporary folder)

Writes OUT_DIR/stages/ (one numbered file per compile stage, and index.json),
OUT_DIR/sdg.svg (the symbolic dependence graph) and OUT_DIR/schedule.png (the
schedule a run with T = 6 executes), and prints where each came from.
"""
import json
import os
import sys
import tempfile

import numpy as np

import tidal as td


def build():
    """An RNN-like recurrence, a sliding window and a discounted return."""
    with td.Program("inspect") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        W = td.param("W", np.eye(4, dtype=np.float32) * 0.5)
        h = td.recurrent(shape=(4,), domain=(t,))
        h[0] = td.tanh(x[0])
        h[t + 1] = td.tanh(h @ W + x[t + 1])
        smooth = h[td.max(0, t - 2):t + 1].mean(0)          # a window of 3 steps
        ret = td.recurrent(shape=(), domain=(t,))            # a backward recurrence
        ret[T - 1] = smooth[T - 1].sum()
        ret[t] = smooth.sum() + 0.9 * ret[t + 1]
        p.output("h", h)
        p.output("ret", ret)
    return p


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    p = build()
    exe = p.compile(backend="numpy", dump=os.path.join(out, "stages"), timings=True)
    print("compile stages:", ", ".join(exe.stages))
    index = json.load(open(os.path.join(out, "stages", "index.json")))["stages"]
    for s in index:
        print(f"  {s['name']:<18} {s['file'] or '(unchanged)':<28} {s['seconds'] * 1e3:7.1f} ms")
        if "command" in s:
            print(f"  {'':<18} replay: (cd {out}/stages && {s['command']})")
    print("\nthe loop nest that runs:\n" + exe.schedule())
    exe.draw("sdg", os.path.join(out, "sdg.svg"))
    exe.draw("sdg", os.path.join(out, "sdg.png"))
    exe.draw("schedule", os.path.join(out, "schedule.png"), bounds={"T": 6})
    x = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    result = exe.run(bounds={"T": 6}, inputs={"x": x})
    print(f"ret = {np.round(result['ret'], 3)}")
    print(f"\nwrote {out}/sdg.svg, {out}/sdg.png and {out}/schedule.png")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tidal-inspect-"))
