"""sdg-lift on generated window reductions: `f(x[0:t + 1])` or `f(x[t:T])`
reduced over the window (sum, max, min, prod, a discounted sum with a constant
or a per-step discount), maybe through an elementwise op first, for every t.
Each program runs on the scheduled backends with and without the pass and on
the reference; all agree with a plain NumPy evaluation, and the pass lifted
exactly the cases it should (a reverse discount over a prefix is no suffix of
a whole-range scan: refused). Plus gradients through lifted sums, and the
REINFORCE program's Monte-Carlo returns: one reverse scan per iteration."""
import os
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

import tidal as td

PLAIN = td.default_passes(without=["sdg-lift"])
KINDS = ["sum", "max", "min", "prod", "discounted", "per_step"]


def _reverse_scan(a, b):
    out, acc = np.zeros_like(b), np.zeros(b.shape[1:], b.dtype)
    for k in range(len(b) - 1, -1, -1):
        acc = b[k] + a[k] * acc
        out[k] = acc
    return out


def _reduce(kind, w, wv, gamma):
    """The reduction of window w over its axis 0, in Tidal and NumPy (wv: the window's values)."""
    if kind == "sum":
        return w.sum(0), wv.sum(0)
    if kind == "max":
        return w.amax(0), wv.max(0)
    if kind == "min":
        return w.amin(0), wv.min(0)
    if kind == "prod":
        return w.prod(0), wv.prod(0)
    if kind == "discounted":
        return w.discounted_sum(gamma, dim=0), (wv * gamma ** np.arange(len(wv))[:, None]).sum(0)
    a = 1 / (1 + np.exp(-wv))
    return w.discounted_sum(td.sigmoid(w), dim=0), _reverse_scan(a, wv)[0]


@settings(max_examples=20, deadline=None)
@given(kind=st.sampled_from(KINDS), suffix=st.booleans(), through=st.sampled_from([None, "tanh", "scale"]),
       T=st.integers(1, 6), gamma=st.sampled_from([0.5, 0.9]), seed=st.integers(0, 2 ** 16))
def test_lifted_window_reductions_agree_with_numpy(kind, suffix, through, T, gamma, seed):
    rng = np.random.default_rng(seed)
    xv = rng.uniform(0.5, 1.5, (T, 3)).astype(np.float32)
    with td.Program() as p:
        (t, Tn), = p.dims("t")
        x = td.input("x", shape=(3,), dtype="float32", domain=(t,))
        w = x[t:Tn] if suffix else x[0:t + 1]
        if through == "tanh":
            w = td.tanh(w)
        elif through == "scale":
            w = w * 2.0 - 1.0
        y, _ = _reduce(kind, w, np.zeros((1, 3), np.float32), gamma)
        p.output("y", y)
    expected = []
    for k in range(T):
        wv = (xv[k:] if suffix else xv[:k + 1]).astype(np.float64)
        wv = np.tanh(wv) if through == "tanh" else wv * 2.0 - 1.0 if through == "scale" else wv
        expected.append(_reduce(kind, w, wv, gamma)[1])
    expected = np.stack(expected)
    liftable = suffix or kind not in ("discounted", "per_step")
    ref = p.compile(backend="reference").run({"T": T}, {"x": xv})["y"]
    np.testing.assert_allclose(ref, expected, rtol=2e-5, atol=2e-5)
    for backend in ("numpy", "jax"):
        for passes in (None, PLAIN):
            exe = p.compile(backend=backend, passes=passes)
            np.testing.assert_allclose(exe.run({"T": T}, {"x": xv})["y"], expected, rtol=2e-5, atol=2e-5,
                                       err_msg=f"{backend} passes={passes}")
            if passes is None:
                lifted = exe.stages["sdg-lift"] != exe.stages["sdg-reassociate"]
                assert lifted == liftable, exe.stages["sdg-lift"]
                if lifted:    # no op left over a window that grows or shrinks with t
                    assert "T - t" not in exe.stages["sdg-lift"] and "t + 1," not in exe.stages["sdg-lift"]


def test_gradient_through_lifted_prefix_sums():
    """loss = sum_t tanh(sum(w * x[0:t + 1]))^2: the forward prefix sums and the
    backward pass's suffix sums (the transposed reads) are lifted; the gradient
    equals NumPy's, derived by hand."""
    T, rng = 5, np.random.default_rng(3)
    xv = rng.standard_normal((T, 3)).astype(np.float32)
    wv = rng.standard_normal(3).astype(np.float32)
    with td.Program() as p:
        (t, Tn), = p.dims("t")
        x = td.input("x", shape=(3,), dtype="float32", domain=(t,))
        w = td.param("w", wv)
        h = td.tanh((x[0:t + 1] * w).sum(0).sum())
        loss = (h * h)[0:Tn].sum()
        p.output("loss", loss)
        p.output("gw", td.grad(loss, [w])[0])
    c = np.cumsum(xv.astype(np.float64), 0)               # prefix sums, (T, 3)
    hv = np.tanh(c @ wv)
    gw = ((2 * hv * (1 - hv ** 2))[:, None] * c).sum(0)
    for backend in ("numpy", "jax"):
        exe = p.compile(backend=backend)
        out = exe.run({"T": T}, {"x": xv})
        np.testing.assert_allclose(out["loss"], (hv ** 2).sum(), rtol=1e-5)
        np.testing.assert_allclose(out["gw"], gw, rtol=1e-4, atol=1e-5)
        assert "sdg.scan cumsum" in exe.stages["sdg-lift"]
        assert "0:t + 1]" not in exe.stages["sdg-lift"]


def test_reinforce_mc_returns_are_one_reverse_scan_per_iteration():
    """REINFORCE's Monte-Carlo returns (per-step discounts gamma * (1 - done) over
    r[i, t:T]): one linear_scan over (T, B) per iteration after sdg-lift, then
    batched with the learner by sdg-vectorize; the run equals the run without
    the pass (the returns' values, and so the parameters, to float rounding)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    import reinforce

    p = reinforce.build(B=4, hidden=8, returns="mc", debug=True)
    exe = p.compile(backend="jax")
    lifted = exe.stages["sdg-lift"]
    scans = [line for line in lifted.splitlines() if "sdg.linear_scan" in line]
    assert len(scans) == 1 and "domain [i]" in scans[0] and "[T, 4], f32>" in scans[0], scans
    assert "T - t" not in lifted
    plain = p.compile(backend="jax", passes=PLAIN)
    bounds = {"I": 3, "T": 12}
    a, b = exe.run(bounds), plain.run(bounds)
    assert set(a) == set(b)
    for k in a:
        np.testing.assert_allclose(np.asarray(a[k], np.float64), np.asarray(b[k], np.float64),
                                   rtol=1e-4, atol=1e-5, err_msg=k)
    assert exe.compiled._gen.untraced == {}   # the whole iteration loop runs inside XLA


def test_mc_and_nstep_returns_are_scheduled_differently():
    """TEMPO section 7.4, with the default pipeline (lifting and vectorization on):
    Monte-Carlo returns are one scan per iteration after the episode's loop (no
    t in its schedule point). n-step returns read a forward window
    r[t:min(t + n, T)]: when something reads them at every step (here the
    debug outputs, g[i, t]) they run inside the episode's schedule, n - 1 steps
    behind the step being acted (`t = c1 - (n - 1)`); when every reader waits
    for the episode anyway (the normalised advantage reads g[i, 0:T]), the
    windows are batched after it (sdg-vectorize's padded windows: one gather of
    (T, n) rows per iteration, no t)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    import reinforce

    mc = reinforce.build(B=4, hidden=8, returns="mc").compile(backend="numpy").schedule().splitlines()
    scans = [line for line in mc if "sdg.linear_scan" in line]
    assert scans and all("[i = " in line and "t =" not in line for line in scans), scans
    for n in (3, 5):
        lines = reinforce.build(B=4, hidden=8, returns="nstep", n=n, debug=True).compile(backend="numpy").schedule()
        behind = [line for line in lines.splitlines() if "reduce sum)" in line and f"t = c1 - {n - 1}]" in line]
        assert behind, lines
        exe = reinforce.build(B=4, hidden=8, returns="nstep", n=n).compile(backend="numpy")
        lines = exe.schedule().splitlines()
        assert not [line for line in lines if "scan cumsum" in line and "t =" in line], lines
        gathers = [line for line in lines if "sdg.index_select" in line]
        assert gathers and all("[i = c0]" in line for line in gathers), lines
        assert f"[T, {n}, 4], f32>" in exe.stages["sdg-vectorize"]


@settings(max_examples=8, deadline=None)
@given(reverse=st.booleans(), T=st.integers(1, 7), seed=st.integers(0, 2 ** 16))
def test_linear_scan_over_windows_unlifted_agrees_with_numpy(reverse, T, seed):
    """td.linear_scan over a prefix window at every t without sdg-lift: a forward
    scan runs padded along the growing axis on jax (a reverse one cannot: it would
    read the padding first, so it runs unpadded); both equal NumPy."""
    rng = np.random.default_rng(seed)
    xv = rng.standard_normal((T, 2)).astype(np.float32)
    av = rng.uniform(-1, 1, (T, 2)).astype(np.float32)
    with td.Program() as p:
        (t, Tn), = p.dims("t")
        x = td.input("x", shape=(2,), dtype="float32", domain=(t,))
        a = td.input("a", shape=(2,), dtype="float32", domain=(t,))
        y = td.linear_scan(a[0:t + 1], td.tanh(x[0:t + 1]), 0, reverse=reverse)
        p.output("y", y.sum(0))
    want = np.stack([_scan_np(av[:k + 1], np.tanh(xv[:k + 1].astype(np.float64)), reverse).sum(0)
                     for k in range(T)])
    for backend in ("reference", "numpy", "jax"):
        exe = p.compile(backend=backend, passes=PLAIN)
        out = exe.run({"T": T}, {"x": xv, "a": av})["y"]
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5, err_msg=backend)
    gen = exe.compiled._gen    # jax
    padded = {gen.graph.nodes[k].label.split(" = ")[-1] for k in gen.padded}
    assert ("sdg.linear_scan" in padded) == (not reverse), padded


def _scan_np(a, b, reverse):
    return _reverse_scan(a, b) if reverse else _forward_scan(a, b)


def _forward_scan(a, b):
    out, acc = np.zeros_like(b), np.zeros(b.shape[1:], b.dtype)
    for k in range(len(b)):
        acc = b[k] + a[k] * acc
        out[k] = acc
    return out


@settings(max_examples=8, deadline=None)
@given(width=st.integers(1, 5), ahead=st.booleans(), through_exp=st.booleans(), T=st.integers(1, 9))
def test_sliding_window_sums_lift_to_a_prefix_sum_difference(width, ahead, through_exp, T):
    """x[max(0, t - w + 1):t + 1] or x[t:min(t + w, T)] summed (maybe of exp(x)):
    one cumulative sum in f64, read at both ends; equal to NumPy on every backend
    and to the pipeline without the pass; a max over the same window is left."""
    with td.Program() as p:
        (t, T_), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        v = td.exp(x) if through_exp else x
        w = v[t:td.min(t + width, T_)] if ahead else v[td.max(0, t - width + 1):t + 1]
        p.output("s", w.sum(0))
        p.output("m", w.amax(0))
    xs = np.random.default_rng(width * 10 + T).standard_normal((T, 3)).astype(np.float32)
    vs = np.exp(xs.astype(np.float64)) if through_exp else xs.astype(np.float64)
    windows = [vs[k:min(k + width, T)] if ahead else vs[max(0, k - width + 1):k + 1] for k in range(T)]
    want_s, want_m = np.stack([w.sum(0) for w in windows]), np.stack([w.max(0) for w in windows])
    plain = p.compile(backend="numpy", passes=PLAIN).run(bounds={"T": T}, inputs={"x": xs})
    # windows of at most 32 rows stay direct sums by default (min-window); lift these anyway
    assert "sdg.pad 0 <1> <0>" not in p.compile(backend="numpy").stages["sdg-lift"]
    every = td.default_passes(options={"sdg-lift": "min-window=0"})
    for backend in ("reference", "numpy", "jax"):
        exe = p.compile(backend=backend, passes=every)
        if backend == "numpy":
            stage = exe.stages["sdg-lift"]
            assert stage.count("sdg.pad 0 <1> <0>") == 1 and "reduce max [0]" in stage
        out = exe.run(bounds={"T": T}, inputs={"x": xs})
        np.testing.assert_allclose(out["s"], want_s, rtol=1e-5, atol=1e-5, err_msg=backend)
        np.testing.assert_allclose(out["s"], plain["s"], rtol=1e-5, atol=1e-5, err_msg=backend)
        np.testing.assert_allclose(out["m"], want_m, rtol=1e-6, err_msg=backend)
