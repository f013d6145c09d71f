"""Benchmark: compiled symbolic evaluation (``compile_expr``) vs the tree walk (``evaluate``).

Run:  python3 bench/bench_symbolic_eval.py [--repeat N]

Prints ns/call for each representative expression and the speed-up ratio
from one run.  The runtime hot path target is < 2 us per compiled call.
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit

try:
    import tidal.symbolic as sym
except ImportError:  # running from a source checkout without an installed package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import symbolic as sym  # type: ignore[no-redef]

TARGET_NS = 2000


def cases():
    t_dim, i_dim = sym.dims("t", "i")
    t, T = t_dim
    i, _ = i_dim
    window = sym.Slice(sym.max_(0, t - 3), t + 1)
    return [
        ("t - 1", t - 1),
        ("max(0, t - 3):t + 1", window),
        ("[i, t - 1, max(0, t - 3):t + 1]", sym.IndexSeq([i, t - 1, window])),
        ("t % 5 == 0", t % 5 == 0),
        ("(t > 0) & (t < T - 1)", (t > 0) & (t < T - 1)),
    ], [t_dim, i_dim]


def ns_per_call(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing repetitions (best is kept)")
    args = parser.parse_args()
    exprs, dims = cases()
    params = [s for d in dims for s in d]  # t, T, i, I
    point = (7, 100, 2, 10)
    env = dict(zip(params, point))
    print(f"python {sys.version.split()[0]}; point {dict(zip((p.name for p in params), point))}")
    print(f"{'expression':<50} {'compiled ns':>12} {'evaluate ns':>12} {'ratio':>7}")
    worst = 0.0
    for label, expr in exprs:
        compiled = sym.compile_expr(expr, params)
        assert compiled(*point) == sym.evaluate(expr, env), label
        fast = ns_per_call(lambda: compiled(*point), 200_000, args.repeat)
        slow = ns_per_call(lambda: sym.evaluate(expr, env), 20_000, args.repeat)
        worst = max(worst, fast)
        print(f"{label:<50} {fast:>12.0f} {slow:>12.0f} {slow / fast:>6.1f}x")
    verdict = "meets" if worst < TARGET_NS else "MISSES"
    print(f"slowest compiled call: {worst:.0f} ns ({verdict} the {TARGET_NS} ns target)")
    return 0 if worst < TARGET_NS else 1


if __name__ == "__main__":
    sys.exit(main())
