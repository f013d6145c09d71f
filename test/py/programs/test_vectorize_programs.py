"""sdg-vectorize on generated chains of ops over t whose result is summed over
all of t (the shape of a gradient): each program runs on the reference
interpreter (which evaluates the graph before any sdg pass... and after: it is
the oracle either way) and on the scheduled backends with and without the
pass; all agree with a plain NumPy evaluation, and the pass did vectorize the
chain (or, when the chain is also read at a point, left it alone).
Plus the REINFORCE learner: vectorized, it computes what it computed before."""
import os
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

import tidal as td

PLAIN = td.default_passes(without=["sdg-vectorize"])

STEPS = st.sampled_from(["tanh", "exp", "add_input", "mul_scalar_input", "mul_weight_vec", "matmul",
                         "reduce", "unsqueeze_sum", "permute", "softmax", "cumsum", "where"])


def _apply(step, y, yv, x2, x2v, w, wv, rng_axis):
    """One op on the chain, in Tidal (y) and NumPy (yv: leading axis = the points)."""
    if step == "tanh":
        return td.tanh(y), np.tanh(yv)
    if step == "exp":
        return td.exp(-td.abs(y)), np.exp(-np.abs(yv))
    if step == "add_input":                      # another input over t, same shape
        return y + x2, yv + x2v
    if step == "mul_scalar_input":               # a scalar per point broadcasts against the value
        s, sv = x2.sum(), x2v.reshape(len(x2v), -1).sum(-1)
        return y * s, yv * sv.reshape((-1,) + (1,) * (yv.ndim - 1))
    if step == "mul_weight_vec":                 # a weight without t (broadcasts on the right)
        return y * w[0], yv * wv[0]
    if step == "matmul":
        return y @ w, yv @ wv
    if step == "reduce" and y.ndim >= 1:
        ax = rng_axis % y.ndim
        return y.sum(ax, keepdim=True), yv.sum(ax + 1, keepdims=True)
    if step == "unsqueeze_sum":
        return td.unsqueeze(y, 0).sum(0), yv
    if step == "permute" and y.ndim >= 2:
        return td.permute(y, 1, 0), np.swapaxes(yv, 1, 2)
    if step == "softmax" and y.ndim >= 1:
        e = np.exp(yv - yv.max(-1, keepdims=True))
        return td.softmax(y, -1), e / e.sum(-1, keepdims=True)
    if step == "cumsum" and y.ndim >= 1:
        return td.cumsum(y, -1), np.cumsum(yv, -1)
    if step == "where":
        return td.where(y > 0, y, y * 0.5), np.where(yv > 0, yv, yv * 0.5)
    return y, yv


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(STEPS, min_size=1, max_size=5), axis=st.integers(0, 3), T=st.integers(1, 5),
       read_at_point=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_vectorized_chains_agree_with_numpy(steps, axis, T, read_at_point, seed):
    rng = np.random.default_rng(seed)
    xv = rng.standard_normal((T, 2, 3)).astype(np.float32)
    x2v = rng.standard_normal((T, 2, 3)).astype(np.float32)
    wv = (rng.standard_normal((3, 3)) / 2).astype(np.float32)
    with td.Program() as p:
        (t, T_), = p.dims("t")
        x = td.input("x", shape=(2, 3), domain=(t,))
        x2 = td.input("x2", shape=(2, 3), domain=(t,))
        w = td.param("w", wv)
        y, yv = x, xv.astype(np.float64)
        for k, step in enumerate(steps):
            shp = tuple(int(str(s)) for s in y.shape)
            if (step == "add_input" and shp != (2, 3)) or \
                    (step in ("matmul", "mul_weight_vec") and (not shp or shp[-1] != 3)):
                continue
            y, yv = _apply(step, y, yv, x2, x2v.astype(np.float64), w, wv.astype(np.float64), axis + k)
        p.output("total", y[0:T_].sum(0))
        if read_at_point:
            p.output("y", y)
    want = yv.sum(0)
    for backend, passes in (("reference", None), ("numpy", None), ("jax", None), ("numpy", PLAIN)):
        exe = p.compile(backend, passes=passes)
        out = exe.run({"T": T}, {"x": xv, "x2": x2v})
        np.testing.assert_allclose(out["total"], want, rtol=2e-4, atol=2e-4, err_msg=f"{backend} {passes}")
        if read_at_point:
            np.testing.assert_allclose(out["y"], yv, rtol=2e-4, atol=2e-4)
    vec = p.compile("numpy")
    changed = vec.stages["sdg-vectorize"] != vec.stages["cse"]
    if not read_at_point and any(s in ("tanh", "exp", "where", "mul_weight_vec", "matmul") for s in steps):
        assert changed, vec.stages["sdg-vectorize"]


def test_reinforce_learner_vectorized_equals_unvectorized():
    """The REINFORCE program (B=8, hidden 16, T=12, 3 iterations): with sdg-vectorize
    the backward pass over t is one batched computation per iteration (inside the
    iteration loop's XLA program), and every
    output (states, actions, returns, losses, the weights at every iteration) is the
    one of the pipeline without it, within float32 rounding."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    import reinforce

    outs = {}
    for name, passes in (("vectorized", None), ("plain", PLAIN)):
        p = reinforce.build(B=8, hidden=16, returns="nstep", n=4, gamma=0.99, lr=1e-2, model_seed=0, debug=True)
        exe = p.compile(passes=passes)
        outs[name] = exe.run(bounds={"I": 3, "T": 12})
        if name == "vectorized":
            text = exe.stages["sdg-vectorize"]
            assert text.count("domain [i, t]") < exe.stages["cse"].count("domain [i, t]") - 40
            assert "-> !tidal.tensor<[T, 8, 16], f32>" in text      # batched activations' gradients
            # values of shape (T, ...) are fixed in a run: the iteration loop traces whole
            assert exe.compiled._gen.untraced == {}, exe.compiled._gen.untraced
    for k, v in outs["plain"].items():
        np.testing.assert_allclose(np.asarray(outs["vectorized"][k]), np.asarray(v), rtol=1e-5, atol=1e-5,
                                   err_msg=k)


def _dims(p, two_dims: bool):
    """(t, T, the components before t, the domain) of a program over (i, t) or (t,)."""
    if two_dims:
        (i, _), (t, T_) = p.dims("i", "t")
        return t, T_, (i,), (i, t)
    (t, T_), = p.dims("t")
    return t, T_, (), (t,)


def _drop_i(two_dims: bool, want, I: int, T: int, xv):
    """The expected value, bounds and inputs, without the leading i axis for (t,)."""
    if two_dims:
        return want, {"I": I, "T": T}, {"x": xv}
    return want[0], {"T": T}, {"x": xv[0]}


def _agrees(p, name: str, want, bounds: dict, inputs: dict, plain_backend: str) -> str:
    """Output `name` equals `want` on every backend, and on `plain_backend` without
    sdg-vectorize; returns the numpy compile's sdg-vectorize stage."""
    for backend, passes in (("reference", None), ("numpy", None), ("jax", None), (plain_backend, PLAIN)):
        out = p.compile(backend, passes=passes).run(bounds, inputs)
        np.testing.assert_allclose(out[name], want, rtol=2e-4, atol=2e-4, err_msg=f"{backend} {passes}")
    return p.compile("numpy").stages["sdg-vectorize"]


@settings(max_examples=8, deadline=None)
@given(T=st.integers(1, 6), two_dims=st.booleans(), gamma=st.sampled_from([0.0, 0.5, 0.9]))
def test_values_read_by_a_backward_recurrence_are_batched(T, two_dims, gamma):
    """GAE's shape: v = tanh(x[t] @ W) read by adv[t] = v[t] + gamma * adv[t + 1]
    (adv[T - 1] = v[T - 1]). adv's loop starts after v's last point, so v is
    computed for all t at once and read with takes; the values are NumPy's, with
    and without the pass, on every backend."""
    rng = np.random.default_rng(T)
    I = 2 if two_dims else 1
    xv = rng.standard_normal((I, T, 3, 4)).astype(np.float32)
    wv = rng.standard_normal((4, 2)).astype(np.float32)
    with td.Program() as p:
        t, T_, pre, dom = _dims(p, two_dims)
        x = td.input("x", shape=(3, 4), domain=dom)
        v = td.tanh(x @ td.param("w", wv))
        adv = td.recurrent(shape=(3, 2), domain=dom)
        adv[(*pre, T_ - 1)] = v[(*pre, T_ - 1)]
        adv[(*pre, t)] = v + gamma * adv[(*pre, t + 1)]
        p.output("adv", adv)
    vw = np.tanh(xv.astype(np.float64) @ wv)
    want = np.zeros_like(vw)
    for k in reversed(range(T)):
        want[:, k] = vw[:, k] + (gamma * want[:, k + 1] if k + 1 < T else 0.0)
    want, bounds, inputs = _drop_i(two_dims, want, I, T, xv)
    text = _agrees(p, "adv", want, bounds, inputs, plain_backend="numpy")
    assert "-> !tidal.tensor<[T, 3, 2], f32>" in text and "sdg.take 0 at <t>" in text, text


@settings(max_examples=8, deadline=None)
@given(T=st.integers(1, 6), two_dims=st.booleans(), chain=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_input_projections_of_a_recurrence_are_batched(T, two_dims, chain, seed):
    """An RNN's input projection: h[t] = tanh(h[t - 1] @ W + x[t] @ U), h[0] =
    tanh(x[0] @ U) (with `chain`, (x[t] @ U) @ V). The projections depend on
    inputs only, so they run as one matmul over all t before the recurrence's
    loop, which reads row t (and its start row 0); the recurrence stays per step.
    The values are NumPy's on every backend, with and without the pass."""
    rng = np.random.default_rng(seed)
    I = 2 if two_dims else 1
    xv = rng.standard_normal((I, T, 2, 3)).astype(np.float32)
    uv = rng.standard_normal((3, 4)).astype(np.float32) * 0.5
    vv = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
    wv = rng.standard_normal((4, 4)).astype(np.float32) * 0.5
    with td.Program() as p:
        t, T_, pre, dom = _dims(p, two_dims)
        x = td.input("x", shape=(2, 3), domain=dom)
        xu = x @ td.param("U", uv)
        if chain:
            xu = xu @ td.param("V", vv)
        h = td.recurrent(shape=(2, 4), domain=dom)
        h[(*pre, 0)] = td.tanh(xu[(*pre, 0)])
        h[(*pre, t)] = td.tanh(h[(*pre, t - 1)] @ td.param("W", wv) + xu)
        p.output("h", h)
    proj = xv.astype(np.float64) @ uv
    proj = proj @ vv if chain else proj
    want = np.zeros(proj.shape)
    for k in range(T):
        want[:, k] = np.tanh(proj[:, k] + (want[:, k - 1] @ wv if k else 0.0))
    want, bounds, inputs = _drop_i(two_dims, want, I, T, xv)
    text = _agrees(p, "h", want, bounds, inputs, plain_backend="jax")
    assert "-> !tidal.tensor<[T, 2, 4], f32>" in text and "sdg.take 0 at <t>" in text, text
    assert "sdg.take 0 at <0>" in text, text
    loop = [line for line in text.splitlines() if "sdg.matmul" in line and "domain [" + ", ".join(
        ["i", "t"] if two_dims else ["t"]) + "]" in line]
    assert len(loop) == 1, loop     # h[t - 1] @ W only


def test_a_matmul_vectorized_over_two_dims_aligns_its_batch_axes():
    """x[i, t] (3, 1) @ w[i] (1, 3) summed over all (i, t): vectorized over t, then
    over i with both operands batched, (I, T, 3, 1) @ (I, 1, 1, 3); equals NumPy on
    every backend (it raised a broadcast error before: fuzz seed 3939)."""
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((2, 3, 3, 1)).astype(np.float32)
    wv = rng.standard_normal((2, 1, 3)).astype(np.float32)
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(3, 1), domain=(i, t))
        w = td.input("w", shape=(1, 3), domain=(i,))
        s = (x @ w)[i, 0:T].sum(0)
        p.output("r", s[0:I].sum(0))
    want = np.einsum("itak,ikb->ab", xv.astype(np.float64), wv.astype(np.float64))
    for backend in ("reference", "numpy", "jax"):
        exe = p.compile(backend=backend)
        out = exe.run(bounds={"I": 2, "T": 3}, inputs={"x": xv, "w": wv})
        np.testing.assert_allclose(out["r"], want, rtol=1e-5, atol=1e-5, err_msg=backend)
    assert "tidal.tensor<[I, 1, 1, 3], f32>" in exe.stages["sdg-vectorize"]
