"""sdg-vectorize over bounded windows (passes/vectorize_windows.py): ops on a
window `x[t:min(t + n, T)]` (n-step returns) or `x[max(t - n + 1, 0):t + 1]`
(a sliding window) whose size varies with t but never exceeds n are batched
over t at the capacity n, padded and masked. Each program runs on the
reference interpreter and the scheduled backends, with and without the pass,
and agrees with a NumPy loop over t; the pass did batch it (one gather of
(T, n) rows, no op left over t), and a per-step reader keeps it per step."""
import os
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

import tidal as td
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

PLAIN = [p for p in DEFAULT_SDG_PASSES if p != "sdg-vectorize"]
OPS = ["sum", "mean", "max", "min", "cumsum", "cumsum_reverse", "discounted", "matmul", "cut"]


def _window_op(op, w, gamma):
    """`op` on a window w of shape (rows, 2), in Tidal."""
    if op == "sum":
        return w.sum(0)
    if op == "mean":        # divides by the window's size: a symbol_value over t, batched too
        return w.mean(0)
    if op == "max":
        return td.max(td.exp(w), dim=0)
    if op == "min":
        return td.min(w * 2.0, dim=0)
    if op == "cumsum":
        return td.cumsum(td.tanh(w), 0).sum(0)
    if op == "cumsum_reverse":
        return td.cumsum(w, 0, reverse=True).max(0)
    if op == "discounted":
        return td.discounted_sum(w, gamma, dim=0)
    if op == "matmul":      # contracts the window: (1, rows) @ (rows, 2)
        return (td.ones(1, w.shape[0]) @ w).sum(0) * 0.5
    # n-step returns cut at episode ends (ended before k = cumsum(d) - d)
    d = (w[..., 1] > 0.0).astype("float32")
    return td.discounted_sum(td.where(td.cumsum(d, 0) - d < 0.5, w[..., 0], 0.0), gamma, dim=0)


def _numpy_op(op, k, gamma):
    """The same on a NumPy window k (rows, 2)."""
    disc = gamma ** np.arange(len(k))
    if op == "sum":
        return k.sum(0)
    if op == "mean":
        return k.mean(0)
    if op == "max":
        return np.exp(k).max(0)
    if op == "min":
        return (k * 2.0).min(0)
    if op == "cumsum":
        return np.cumsum(np.tanh(k), 0).sum(0)
    if op == "cumsum_reverse":
        return np.cumsum(k[::-1], 0)[::-1].max(0)
    if op == "discounted":
        return (k * disc[:, None]).sum(0)
    if op == "matmul":
        return k.sum(0) * 0.5
    d = (k[:, 1] > 0.0).astype(np.float64)
    return (np.where(np.cumsum(d) - d < 0.5, k[:, 0], 0.0) * disc).sum(0)


def _build(op, n, forward, gamma, per_step=False):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), dtype="float32", domain=(t,))
        win = x[t:td.min(t + n, T)] if forward else x[td.max(t - (n - 1), 0):t + 1]
        g = _window_op(op, win, gamma)
        p.output("g", td.tanh(g[0:T]))            # a reader of all of t: g is batched
        if per_step:
            p.output("g_t", g)                    # a reader at every t: g stays per step
    return p


def _expected(op, n, forward, gamma, xv):
    T, x64 = len(xv), xv.astype(np.float64)
    return np.stack([_numpy_op(op, x64[t:min(t + n, T)] if forward else x64[max(t - (n - 1), 0):t + 1], gamma)
                     for t in range(T)])


@settings(max_examples=25, deadline=None)
@given(op=st.sampled_from(OPS), n=st.integers(1, 4), forward=st.booleans(), T=st.integers(1, 9),
       gamma=st.sampled_from([0.5, 0.9]), seed=st.integers(0, 2 ** 16))
def test_window_ops_batched_agree_with_numpy(op, n, forward, T, gamma, seed):
    xv = np.random.default_rng(seed).standard_normal((T, 2)).astype(np.float32)
    want = np.tanh(_expected(op, n, forward, gamma, xv))
    p = _build(op, n, forward, gamma)
    for backend, passes in (("reference", None), ("numpy", None), ("jax", None), ("jax", PLAIN)):
        out = p.compile(backend, passes=passes).run({"T": T}, {"x": xv})
        np.testing.assert_allclose(out["g"], want, rtol=2e-4, atol=2e-5, err_msg=f"{op} {backend} {passes}")
    text = p.compile("numpy").stages["sdg-vectorize"]
    assert f"-> !tidal.tensor<[T, {n}, 2], f32>" in text and "sdg.index_select" in text, text
    assert f"min(T - t, {n})" not in text and f"min(t + 1, {n})" not in text, text
    assert not [line for line in text.splitlines() if "domain [t]" in line and "sdg.input" not in line], text


@settings(max_examples=6, deadline=None)
@given(op=st.sampled_from(OPS), n=st.integers(2, 4), forward=st.booleans())
def test_window_read_at_every_step_stays_per_step(op, n, forward):
    """An output of g at every t needs each point when it is ready: no batching."""
    T = 7
    xv = np.random.default_rng(n).standard_normal((T, 2)).astype(np.float32)
    want = _expected(op, n, forward, 0.9, xv)
    p = _build(op, n, forward, 0.9, per_step=True)
    exe = p.compile("jax")
    out = exe.run({"T": T}, {"x": xv})
    np.testing.assert_allclose(out["g_t"], want, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(out["g"], np.tanh(want), rtol=2e-4, atol=2e-5)
    assert "sdg.index_select" not in exe.stages["sdg-vectorize"]


def test_reinforce_nstep_returns_batched_equal_unbatched():
    """REINFORCE with n-step returns: with the windows batched (default) the
    losses and episode counts of 3 iterations (so the weights each iteration
    learned from the returns) are the ones of the pipeline without window
    batching, within float32 rounding."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    import reinforce

    outs = {}
    for name, passes in (("windows", None),
                         ("no windows", [p if p != "sdg-vectorize" else "sdg-vectorize{windows=false}"
                                         for p in DEFAULT_SDG_PASSES])):
        p = reinforce.build(B=5, hidden=8, returns="nstep", n=4, gamma=0.9, lr=1e-2)
        exe = p.compile("jax", passes=passes)
        outs[name] = exe.run(bounds={"I": 3, "T": 11})
        assert ("sdg.index_select" in exe.stages["sdg-vectorize"]) == (name == "windows")
    for k, v in outs["no windows"].items():
        np.testing.assert_allclose(np.asarray(outs["windows"][k]), np.asarray(v), rtol=1e-4, atol=1e-5, err_msg=k)


@settings(max_examples=6, deadline=None)
@given(T=st.integers(1, 7), n=st.integers(2, 3), seed=st.integers(0, 2 ** 16))
def test_integer_windows(T, n, seed):
    """int64 windows: a sum is batched (its padding reads 0), a max stays per step
    (an integer has no -inf for the padding); both equal NumPy on every backend.
    (n = 1: a window of one row, no padding, which the first test covers.)"""
    xv = np.random.default_rng(seed).integers(-50, 50, (T, 3))
    with td.Program() as p:
        (t, Tn), = p.dims("t")
        x = td.input("x", shape=(3,), dtype="int64", domain=(t,))
        win = x[t:td.min(t + n, Tn)]
        p.output("s", win.sum(0)[0:Tn].sum(0))
        p.output("m", td.max(win, dim=0)[0:Tn].sum(0))
    want_s = sum(xv[k:min(k + n, T)].sum(0) for k in range(T))
    want_m = sum(xv[k:min(k + n, T)].max(0) for k in range(T))
    for backend in ("reference", "numpy", "jax"):
        out = p.compile(backend).run({"T": T}, {"x": xv})
        np.testing.assert_array_equal(out["s"], want_s, err_msg=backend)
        np.testing.assert_array_equal(out["m"], want_m, err_msg=backend)
    text = p.compile("numpy").stages["sdg-vectorize"]
    assert f"-> !tidal.tensor<[T, {n}, 3], i64>" in text and "sdg.reduce max [0]" in text, text
