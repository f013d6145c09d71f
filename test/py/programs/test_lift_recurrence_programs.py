"""sdg-lift-recurrence on generated linear recurrences: forward (`y[0] = base;
y[t] = b + a * y[t - 1]`, or as the frontend writes a running sum, `y[t + 1] =
y[t] + b[t]`) and backward (`y[T - 1] = base; y[t] = b + a * y[t + 1]`), with
a factor that is absent, a scalar constant, or a per-step tensor (broadcast
or not), a base that is or is not b at the boundary, over one dim or two.
Each program runs on the reference interpreter without the pass and on the
numpy and jax backends with it; all agree with a plain NumPy loop, and the
pass lifted the recurrence (no merge left). Plus what it must refuse on the
same programs (a nonlinear step), and a GAE over (i, t) whose b is computed
from the step's inputs."""
import numpy as np
from hypothesis import given, settings, strategies as st

import tidal as td
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

LIFTED = DEFAULT_SDG_PASSES[:DEFAULT_SDG_PASSES.index("sdg-lift") + 1] + ("sdg-lift-recurrence",) \
    + DEFAULT_SDG_PASSES[DEFAULT_SDG_PASSES.index("sdg-lift") + 1:]


def _program(direction, factor, base_is_b, shifted, nonlinear=False):
    """The recurrence and its NumPy twin: (program, fn(b, a, base, T) -> y)."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        b = td.input("b", shape=(3,), dtype="float32", domain=(t,))
        a = td.input("a", shape=(3,) if factor == "tensor" else (), dtype="float32", domain=(t,))
        base = td.input("base", shape=(3,), dtype="float32")
        y = td.recurrent(shape=(3,), domain=(t,))
        first = (T - 1) if direction == "reverse" else 0
        y[first] = b[first] if base_is_b else base
        prev = y[t + 1] if direction == "reverse" else y[t - 1]
        coef = {"none": None, "const": 0.75, "tensor": a, "scalar": a}[factor]
        step = prev if coef is None else coef * prev
        if nonlinear:
            step = step * prev
        if shifted and direction == "forward" and coef is None:
            y[t + 1] = y[t] + b      # the frontend's running sum: merge reads its add at t - 1
        else:
            y[t] = b + step
        p.output("y", y)

    def want(bv, av, basev, Tn):
        out = np.zeros((Tn, 3), np.float64)
        order = range(Tn - 1, -1, -1) if direction == "reverse" else range(Tn)
        for k in order:
            edge = k == (Tn - 1 if direction == "reverse" else 0)
            if edge:
                out[k] = bv[k] if base_is_b else basev
                continue
            j = k + 1 if direction == "reverse" else k - 1
            if shifted and direction == "forward" and coef is None:
                out[k] = out[j] + bv[j]
                continue
            c = {"none": 1.0, "const": 0.75}.get(factor)
            c = (av[k] if factor == "tensor" else av[k][..., None]) if c is None else c
            out[k] = bv[k] + c * out[j] * (out[j] if nonlinear else 1.0)
        return out
    return p, want


def _run(p, passes, backend, bounds, inputs):
    exe = p.compile(backend=backend, **({"passes": passes} if passes else {}))
    return exe, np.asarray(exe.run(bounds=bounds, inputs=inputs)["y"])


@settings(max_examples=16, deadline=None)
@given(direction=st.sampled_from(["forward", "reverse"]), factor=st.sampled_from(["none", "const", "tensor", "scalar"]),
       base_is_b=st.booleans(), shifted=st.booleans(), T=st.integers(1, 6), seed=st.integers(0, 2 ** 16))
def test_lifted_recurrences_agree_with_numpy(direction, factor, base_is_b, shifted, T, seed):
    rng = np.random.default_rng(seed)
    p, want = _program(direction, factor, base_is_b, shifted)
    inputs = {"b": rng.uniform(-1, 1, (T, 3)).astype(np.float32),
              "a": rng.uniform(0.2, 0.9, (T, 3) if factor == "tensor" else (T,)).astype(np.float32),
              "base": rng.uniform(-1, 1, 3).astype(np.float32)}
    expected = want(inputs["b"].astype(np.float64), inputs["a"].astype(np.float64), inputs["base"], T)
    _, ref = _run(p, None, "reference", {"T": T}, inputs)
    np.testing.assert_allclose(ref, expected, rtol=1e-5, atol=1e-5)
    for backend in ("numpy", "jax"):
        exe, got = _run(p, LIFTED, backend, {"T": T}, inputs)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        stage = exe.stages["sdg-lift-recurrence"]
        assert "sdg.linear_scan" in stage and "sdg.merge" not in stage, stage


def test_a_nonlinear_step_is_refused_and_still_runs():
    p, want = _program("forward", "const", False, False, nonlinear=True)
    rng = np.random.default_rng(3)
    inputs = {"b": rng.uniform(-0.5, 0.5, (5, 3)).astype(np.float32), "a": np.zeros(5, np.float32),
              "base": rng.uniform(-0.5, 0.5, 3).astype(np.float32)}
    exe, got = _run(p, LIFTED, "jax", {"T": 5}, inputs)
    assert "sdg.linear_scan" not in exe.stages["sdg-lift-recurrence"]
    assert "sdg.merge" in exe.stages["sdg-lift-recurrence"]
    np.testing.assert_allclose(got, want(inputs["b"], inputs["a"], inputs["base"], 5), rtol=1e-5, atol=1e-5)


def test_gae_over_iterations_lifts_and_matches_the_loop():
    """GAE as in examples/ppo.py: delta from the step's inputs, c = gamma * lam * (1 - done),
    per iteration i; one reverse scan per i, the same advantages as the loop."""
    gamma, lam = 0.99, 0.95
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        r = td.input("r", shape=(4,), dtype="float32", domain=(i, t))
        v = td.input("v", shape=(4,), dtype="float32", domain=(i, t))
        done = td.input("done", shape=(4,), dtype="float32", domain=(i, t))
        delta = r + gamma * (1.0 - done) * td.tanh(v) - v
        adv = td.recurrent(shape=(4,), domain=(i, t))
        adv[i, T - 1] = delta[i, T - 1]
        adv[i, t] = delta + gamma * lam * (1.0 - done) * adv[i, t + 1]
        p.output("adv", adv)
    rng = np.random.default_rng(0)
    In, Tn = 2, 7
    inputs = {"r": rng.standard_normal((In, Tn, 4)).astype(np.float32),
              "v": rng.standard_normal((In, Tn, 4)).astype(np.float32),
              "done": (rng.random((In, Tn, 4)) < 0.3).astype(np.float32)}
    x = {k: val.astype(np.float64) for k, val in inputs.items()}
    d = x["r"] + gamma * (1 - x["done"]) * np.tanh(x["v"]) - x["v"]
    want = np.zeros_like(d)
    for it in range(In):
        acc = d[it, Tn - 1]
        want[it, Tn - 1] = acc
        for k in range(Tn - 2, -1, -1):
            acc = d[it, k] + gamma * lam * (1 - x["done"][it, k]) * acc
            want[it, k] = acc
    for backend in ("numpy", "jax"):
        exe = p.compile(backend=backend, passes=LIFTED)
        got = np.asarray(exe.run(bounds={"I": In, "T": Tn}, inputs=inputs)["adv"])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert exe.stages["sdg-lift-recurrence"].count("sdg.linear_scan") == 1
