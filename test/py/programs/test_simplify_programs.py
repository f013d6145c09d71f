"""sdg-simplify on programs each of its rewrites applies to: the pass rewrites
(its counts), every backend agrees with NumPy with and without it, and the
merge-branch analysis (isl) agrees with enumerating the points."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mlir import ir

import tidal as td
from tidal.dialects import make_context
from tidal.passes import get_pass
from tidal.passes.sdg_simplify import _reachable
from tidal.symbolic import Dim, evaluate, parse

WITHOUT = td.default_passes(without=["sdg-simplify"])


def _counts(p) -> dict:
    module = ir.Module.parse(p.sdg(), make_context())
    simplify = get_pass("sdg-simplify")()
    simplify.run(module.operation)
    return simplify.counts


def _ones_program():
    """x * ones + exp(b) * ones, with `ones` made at every t: hoisted, then both
    products by one bypassed."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        b = td.input("b", shape=(4,), domain=())
        one = td.ones(4, domain=(t,))
        p.output("y", x * one + td.exp(b) * one)
    return p, lambda x, b: x + np.exp(b)


def _cases_program():
    """A recurrent tensor whose second case never holds, read through x * 1 - 0."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        b = td.input("b", shape=(4,), domain=())
        s = td.recurrent(shape=(4,), domain=(t,))
        s[t, t >= 0] = x * 1.0 - 0.0
        s[t, t >= T] = x + b
        p.output("y", s)
    return p, lambda x, b: x


def _fold_program():
    """Splat arithmetic and an expanded splat, added to x."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        b = td.input("b", shape=(4,), domain=())
        c = (td.full((4,), 2.0) + 3.0) * 2.0
        p.output("y", x + c + b)
    return p, lambda x, b: x + 10.0 + b


@pytest.mark.parametrize("build,rewrite", [(_ones_program, "hoisted"), (_ones_program, "forwarded"),
                                           (_cases_program, "branches_dropped"), (_cases_program, "forwarded"),
                                           (_fold_program, "folded")])
def test_each_rewrite_applies_and_every_backend_agrees(build, rewrite):
    p, want = build()
    assert _counts(p)[rewrite] >= 1
    T = 5
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    expected = np.stack([want(x[q], b) for q in range(T)])
    for backend in ("reference", "numpy", "jax"):
        for passes in (None, WITHOUT):
            out = p.compile(backend=backend, passes=passes).run({"T": T}, {"x": x, "b": b})["y"]
            np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{backend} {passes}")


def test_simplified_pipeline_shows_the_rewrites():
    p, _ = _ones_program()
    exe = p.compile(backend="numpy")
    before, after = exe.stages["sdg-dce"], exe.stages["sdg-simplify"]
    assert "sdg.full 1.000000e+00 domain [t]" in before
    assert "sdg.full" not in after and "sdg.binary mul" not in after   # hoisted, then x * 1 bypassed


CONDITIONS = ["true", "false", "t eq 0", "t lt 2", "t ge 1", "t lt T", "t ge T - 1", "t eq T - 1",
              "t lt T - 2", "t ge 3", "t % 2 eq 0", "t ne 1"]


@settings(max_examples=60, deadline=None)
@given(conds=st.lists(st.sampled_from(CONDITIONS), min_size=1, max_size=4))
def test_reachable_branches_agree_with_enumeration(conds):
    """A branch is kept iff it is the first true one at some point for some T
    (T in 1..8 suffices for these conditions), and `covers` iff some branch
    holds at every point of every T."""
    dim = Dim("t")
    keep, covers = _reachable(conds, [dim], lambda text: parse(text, dims=[dim], validate=False))
    first_true, covered = set(), True
    for T in range(1, 9):
        for q in range(T):
            truth = [bool(evaluate(parse(c, dims=[dim], validate=False), {"t": q, "T": T})) for c in conds]
            if any(truth):
                first_true.add(truth.index(True))
            else:
                covered = False
    assert set(keep) == first_true, (conds, keep, first_true)
    assert covers == covered, (conds, covers, covered)


def test_hoisted_values_read_by_outputs_over_more_dims():
    """ones over (i, t) times 2 folds to a splat and leaves both dims; b * 1 is b;
    the sums then run over i only, and the outputs over (i, t) read them at i."""
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        b = td.input("b", shape=(4,), domain=(i,))
        p.output("y", td.ones(4, domain=(i, t)) * 2.0 + b * 1.0)
        p.output("z", td.exp(b) * td.ones(4, domain=(i, t)))
    simplified = p.compile(backend="numpy").stages["sdg-simplify"]
    assert "sdg.full 2.000000e+00 domain [] " in simplified
    assert "sdg.binary add %1[], %0[i] domain [i] " in simplified
    b_value = np.random.default_rng(3).random((3, 4)).astype(np.float32)
    for backend in ("reference", "numpy", "jax"):
        out = p.compile(backend=backend).run({"I": 3, "T": 5}, {"b": b_value})
        np.testing.assert_allclose(np.asarray(out["y"]), np.broadcast_to((2.0 + b_value)[:, None], (3, 5, 4)),
                                   rtol=1e-6, err_msg=backend)
        np.testing.assert_allclose(np.asarray(out["z"]), np.broadcast_to(np.exp(b_value)[:, None], (3, 5, 4)),
                                   rtol=1e-6, err_msg=backend)
