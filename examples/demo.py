"""Tidal's main demo: one recurrent-tensor program, end to end.

A REINFORCE-style fragment: per-step rewards r[t], discounted returns over the
rest of the episode (r[t:T], anti-causal), n-step returns (r[t:min(t+3,T)]),
a smoothed signal defined by cases (a recurrence: a cycle through a merge) and
a causal window. The demo traces it to the `rt` dialect, converts it to the
symbolic dependence graph (`sdg`), schedules it once with isl (printing the
loop nest: the Monte-Carlo returns wait for the episode, the n-step returns
run n-1 steps behind in the same loop), runs it on JAX at two bounds, and
checks every result against the reference interpreter and plain NumPy.

    python examples/demo.py
"""
import numpy as np

import tidal as td

GAMMA, N = 0.9, 3


def build():
    with td.Program("reinforce") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), dtype="float32", domain=(t,))
        mc = r[t:T].discounted_sum(GAMMA, dim=0)                    # Monte-Carlo returns
        nstep = r[t:td.min(t + N, T)].discounted_sum(GAMMA, dim=0)  # n-step returns
        ema = td.recurrent(shape=(), dtype="float32", domain=(t,))  # a recurrence
        ema[0] = r[0]
        ema[t + 1] = 0.5 * ema[t] + 0.5 * r[t + 1]
        window = r[td.max(0, t - 2):t + 1].mean(0)                  # causal window
        p.output("mc", mc)
        p.output("nstep", nstep)
        p.output("ema", ema)
        p.output("window", window)
    return p


def numpy_reference(r):
    T = len(r)
    mc = np.array([sum(GAMMA ** k * r[t + k] for k in range(T - t)) for t in range(T)])
    nstep = np.array([sum(GAMMA ** k * r[t + k] for k in range(min(N, T - t))) for t in range(T)])
    ema = np.zeros(T)
    ema[0] = r[0]
    for t in range(1, T):
        ema[t] = 0.5 * ema[t - 1] + 0.5 * r[t]
    window = np.array([r[max(0, t - 2):t + 1].mean() for t in range(T)])
    return {"mc": mc, "nstep": nstep, "ema": ema, "window": window}


def main():
    p = build()
    print("=== rt (what the user wrote) ===")
    print(p.mlir(locations=False))
    print("=== sdg (the symbolic dependence graph) ===")
    print(p.sdg())
    exe = p.compile()  # scheduled once with isl, run on JAX for any bounds
    reference = p.compile(backend="reference")
    print("=== schedule (compiled once, parametric in T) ===")
    print(exe.schedule())
    rng = np.random.default_rng(0)
    for T in (5, 9):  # one compiled program, two bounds
        r = rng.normal(size=T).astype(np.float32)
        out = exe.run(bounds={"T": T}, inputs={"r": r})
        oracle = reference.run(bounds={"T": T}, inputs={"r": r})
        expected = numpy_reference(r.astype(np.float64))
        print(f"=== results at T={T} (scheduled, JAX) ===")
        for name, value in out.items():
            np.testing.assert_allclose(value, oracle[name], rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(value, expected[name], rtol=1e-5, atol=1e-5)
            print(f"{name:>7}: {np.array2string(np.asarray(value), precision=3)}")
    print("all results match the reference interpreter and NumPy")


if __name__ == "__main__":
    main()
