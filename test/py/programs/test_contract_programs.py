"""sdg-contract end to end: weight gradients summed over an episode (rows per
step, a vector per step, two dims, one column) and sums of per-step products with a
weight are rewritten by the default pipeline and give NumPy's values on the
reference interpreter and both scheduled backends, and the same values as the
pipeline without the pass; a graph whose input has a shape of bounds (the
gradient factor g of shape (T, 8, 3)) runs on every backend too."""
import re

import numpy as np
import pytest

import tidal as td
from tidal.runtime.reference import evaluate
from tidal.runtime.scheduled import compile_sdg

WITHOUT = td.default_passes(without=["sdg-contract"])
# the default tiles these chains (1 MiB or more with every bound at 1024; I * T steps for two dims),
# and contraction then rewrites each tile's products: the rewrite's structure is checked untiled
UNTILED = td.default_passes(without=["sdg-tile"])
BACKENDS = ("reference", "numpy", "jax")


def _gradient_program(rows: int | None, k: int, m: int, two_dims: bool):
    """loss = sum over the episode of sum(tanh(x[t] @ W)); outputs the loss, dW and
    sum_t x[t] @ V (V another weight: a product summed with a weight read the same
    at every t)."""
    rng = np.random.default_rng(rows or 0)
    w = (rng.standard_normal((k, m)) / np.sqrt(k)).astype(np.float32)
    v = rng.standard_normal((m, 2)).astype(np.float32)
    shape = (k,) if rows is None else (rows, k)
    with td.Program() as p:
        if two_dims:
            (i, _), (t, T) = p.dims("i", "t")
            episode, domain = (i, slice(0, T)), (i, t)
        else:
            (t, T), = p.dims("t")
            episode, domain = slice(0, T), (t,)
        x = td.input("x", shape=shape, domain=domain)
        W = td.param("w", w)
        loss = td.tanh(x @ W).sum()[episode].sum()
        p.output("loss", loss)
        g, = td.grad(loss, [W])
        p.output("gw", g)
        y = td.tanh(x @ W) @ td.param("v", v)
        p.output("ysum", y[episode].sum(0))
    return p, w, v


def _want(x: np.ndarray, w: np.ndarray, v: np.ndarray) -> dict:
    """NumPy, in float64, per leading iteration if x has one more axis than a run of t."""
    x = x.astype(np.float64)
    h = np.tanh(x @ w)
    grad = x.reshape(-1, x.shape[-1]).T @ (1 - h ** 2).reshape(-1, h.shape[-1])
    return {"loss": h.sum(), "gw": grad, "ysum": (h @ v).sum(0)}


def _summed_products(text: str) -> int:
    """How many `sdg.reduce sum [0, ..]` read a matmul's result at a point (not the
    final sum of a tiled contraction's partial products, `%q[0:N]`)."""
    products = set(re.findall(r"(%\w+) = sdg\.matmul", text))
    reads = re.findall(r"sdg\.reduce sum \[0[^]]*\] (?:keepdim )?(%\w+)\[([^]]*)\]", text)
    return sum(m in products and ":" not in dep for m, dep in reads)


@pytest.mark.parametrize("rows,two_dims,m,k", [(6, False, 5, 4), (None, False, 5, 4), (3, True, 5, 4),
                                               (6, False, 1, 4), (3, True, 1, 4), (6, False, 2, 32),
                                               (6, False, 3, 40), (None, False, 8, 32)])
def test_summed_gradients_agree(rows, two_dims, m, k):
    """m = 1: a one-column weight (a value head), contracted as g^T @ h; 2 <= m <= 8
    columns with k >= 32 inputs (a policy head): one column at a time, stacked."""
    p, w, v = _gradient_program(rows, k, m, two_dims)
    exes = {b: p.compile(backend=b) for b in BACKENDS}
    plain = p.compile(backend="numpy", passes=WITHOUT)
    stages = p.compile(backend="numpy", passes=UNTILED).stages
    # the gradient's and ysum's sums of per-step products: before the pass, after it none
    assert _summed_products(stages["sdg-accumulate"]) >= 2 and _summed_products(stages["sdg-contract"]) == 0
    assert _summed_products(exes["numpy"].stages["sdg-contract"]) == 0   # tiled or not
    columns = [line for line in stages["sdg-contract"].splitlines() if "sdg.concat 0" in line]
    assert bool(columns) == (2 <= m <= 8 and k >= 32), columns
    rng = np.random.default_rng(1)
    for T in (1, 2, 7):
        bounds = {"T": T, "I": 2} if two_dims else {"T": T}
        lead = (2, T) if two_dims else (T,)
        x = rng.standard_normal(lead + ((k,) if rows is None else (rows, k))).astype(np.float32)
        want = [_want(xi, w, v) for xi in x] if two_dims else [_want(x, w, v)]
        ref = plain.run(bounds=bounds, inputs={"x": x})
        for backend, exe in exes.items():
            out = exe.run(bounds=bounds, inputs={"x": x})
            for name in ("loss", "gw", "ysum"):
                got = np.asarray(out[name])
                expected = np.stack([wi[name] for wi in want]) if two_dims else want[0][name]
                if two_dims and name == "gw":   # W has no dim: its gradient sums over every i
                    expected = expected.sum(0)
                np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=f"{backend} {name} T={T}")
                np.testing.assert_allclose(got, np.asarray(ref[name]), rtol=1e-5, atol=1e-5,
                                           err_msg=f"{backend} {name} T={T} vs without the pass")


GRAD = """
sdg.graph @grad dims [i < I, t < T] {
  %h = sdg.input "h" domain [i, t] : !tidal.tensor<[8, 5], f32>
  %g = sdg.input "g" domain [i] : !tidal.tensor<[T, 8, 3], f32>
  %ht = sdg.permute [0, 2, 1] %h[i, 0:T] domain [i] : (!tidal.tensor<[8, 5], f32>) -> !tidal.tensor<[T, 5, 8], f32>
  %p = sdg.matmul %ht[i], %g[i] domain [i] : (!tidal.tensor<[T, 5, 8], f32>, !tidal.tensor<[T, 8, 3], f32>) -> !tidal.tensor<[T, 5, 3], f32>
  %dw = sdg.reduce sum [0] %p[i] domain [i] : (!tidal.tensor<[T, 5, 3], f32>) -> !tidal.tensor<[5, 3], f32>
  sdg.output "dw" %dw[i] domain [i] : !tidal.tensor<[5, 3], f32>
}
"""


def test_contracted_graph_with_an_input_of_bound_shape():
    from mlir import ir

    from tidal.dialects import make_context
    from tidal.passes import run_pipeline

    with make_context():
        module = ir.Module.parse(GRAD)
        run_pipeline(module, "builtin.module(sdg-contract)")
        after = str(module)
    assert "sdg.reduce" not in after and "!tidal.tensor<[5, 8 * T], f32>" in after
    rng = np.random.default_rng(0)
    for graph in (GRAD, after):
        exes = {b: compile_sdg(graph, backend=b) for b in ("numpy", "jax")}
        for I, T in ((1, 1), (2, 3), (3, 7)):
            h = rng.standard_normal((I, T, 8, 5)).astype(np.float32)
            g = rng.standard_normal((I, T, 8, 3)).astype(np.float32)
            want = np.einsum("itbm,itbn->imn", h.astype(np.float64), g)
            runs = {"reference": evaluate(graph, {"I": I, "T": T}, {"h": h, "g": g})}
            runs.update({b: e.run({"I": I, "T": T}, {"h": h, "g": g}) for b, e in exes.items()})
            for backend, out in runs.items():
                np.testing.assert_allclose(out["dw"], want, rtol=1e-4, atol=1e-4, err_msg=f"{backend} I={I} T={T}")
