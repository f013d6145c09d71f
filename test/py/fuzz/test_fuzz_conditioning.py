"""The fuzz checker leaves ill-conditioned outputs uncompared, and only those.

A float32 program whose output amplifies rounding (here sin(v * b) applied k
times with b = 100: each step multiplies an error by up to 100) is only that
accurate on any backend, and the evaluator's float64 value is no reference
for it (fuzz seed 3: such a recurrence over t failed at t = 5 by 0.34 with a
tolerance of 0.13). `fuzz_check.ill_conditioned` finds these outputs by
re-evaluating with one float32 ulp of noise per op; a well-conditioned chain
(k = 1) must stay compared.
"""
import numpy as np
import pytest

from fuzz_check import ill_conditioned
from program_desc import Desc, Node
from program_eval import Evaluator, precisions


def sin_chain(k: int) -> Desc:
    """o = sin(...sin(sin(x * b) * b)... * b), k times; x and b float32 scalars."""
    d = Desc(())

    def add(op, args, attrs):
        d.nodes.append(Node(len(d.nodes), op, args, attrs, "float32", (), ()))
        d.stmts.append(("node", d.nodes[-1].id))
        return d.nodes[-1].id

    x = add("input", (), {})
    b = add("input", (), {})
    v = x
    for _ in range(k):
        v = add("unary", (add("binary", (v, b), {"kind": "mul"}),), {"kind": "sin"})
    d.stmts.append(("output", "o", v, None))
    d.stmts.append(("output", "x", x, None))
    return d


@pytest.mark.parametrize("k, unstable", [(1, []), (2, []), (4, ["o"])])
def test_ill_conditioned_outputs_are_found(k, unstable):
    d = sin_chain(k)
    inputs = {"x0": np.float32(0.3), "x1": np.float32(100.0)}
    ev = Evaluator(d, {}, inputs)
    expected = {s[1]: ev.output(s[2]) for s in d.outputs()}
    mags = {s[1]: ev.output_mag(s[2]) for s in d.outputs()}
    assert ill_conditioned(d, {}, inputs, expected, mags, precisions(d)) == unstable


def test_the_noisy_evaluation_moves_only_float32_values_computed_by_ops():
    d = sin_chain(1)
    inputs = {"x0": np.float32(0.3), "x1": np.float32(100.0)}
    exact = Evaluator(d, {}, inputs).output(0)
    noisy = Evaluator(d, {}, inputs, noise=np.random.default_rng(0))
    assert noisy.output(0) == exact                      # an input: the backends read it exactly
    o = d.outputs()[0][2]
    assert 0 < abs(noisy.output(o) - Evaluator(d, {}, inputs).output(o)) < 1e-4
