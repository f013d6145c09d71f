"""The scheduler runs an operator only at the points an output or a UDF
needs (lowering/needed.py), like the demand-driven reference interpreter.

A point nobody needs may fail (a `max` over a window that is empty where
another case of the recurrence applies): running it was a spurious error on
the NumPy backend. A needed point that fails is an error on every backend,
naming the op's line, and never a silently padded identity (`-inf`) on JAX.
See docs/semantics.md, "Reading an operand".
"""
import inspect
import re
from collections import Counter

import numpy as np
import pytest

import tidal as td
from tidal.runtime.reference import EvaluationError
from tidal.runtime.scheduled import compile_sdg
from tidal.runtime.scheduled.checker import check_schedule, record_execution

SCHEDULED = ["numpy", "jax"]
BACKENDS = ["reference"] + SCHEDULED


def here() -> int:
    return inspect.currentframe().f_back.f_lineno


def run_all(p, bounds, inputs):
    return {b: p.compile(backend=b).run(bounds=bounds, inputs=inputs) for b in BACKENDS}


def assert_same(results, expected=None):
    first = results["reference"]
    for backend, out in results.items():
        assert set(out) == set(first), backend
        for name in first:
            np.testing.assert_array_equal(np.asarray(out[name]), np.asarray(first[name]), err_msg=f"{backend} {name}")
    for name, value in (expected or {}).items():
        np.testing.assert_array_equal(np.asarray(first[name]), value)


def runs(p, bounds, backend="numpy") -> Counter:
    """{node label: number of points the schedule runs it at}; checks the schedule.
    Unfused (sdg-dce only), so that labels name single ops."""
    exe = p.compile(backend=backend, passes=("sdg-dce",)).compiled
    check_schedule(exe, bounds)
    return Counter(exe.graph.nodes[k].label for k, _ in record_execution(exe, bounds))


def empty_max_error(line: int, point: str):
    return re.escape(f"{__file__}:{line}:") + r"\d+: 'sdg\.reduce' at point " + re.escape(point) + \
        r": KernelError: reduce max over an empty dimension"


# -- a max over an empty window where another case applies -----------------------------------
def window_recurrence():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        s[t] = x[td.max(0, t - 2):t].amax(0)     # the window is empty at t = 0, where s[0] applies
        p.output("s", s)
    return p


@pytest.mark.parametrize("T", [1, 3, 6])
def test_an_empty_window_where_the_base_case_applies_is_never_run(T):
    x = np.arange(1, T + 1, dtype=np.float32)
    expected = np.array([x[0]] + [x[max(0, t - 2):t].max() for t in range(1, T)], np.float32)
    assert_same(run_all(window_recurrence(), {"T": T}, {"x": x}), {"s": expected})


def test_the_max_runs_only_where_its_case_applies():
    counts = runs(window_recurrence(), {"T": 5})
    assert counts["%2 = sdg.reduce max"] == 4                     # t = 1..4, not t = 0


def test_an_unused_max_over_an_empty_window_is_not_an_error():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        x[td.max(0, t - 2):t].amax(0)          # dead code: nothing reads it
        p.output("y", x * 2.0)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert_same(run_all(p, {"T": 3}, {"x": x}), {"y": x * 2})
    assert "sdg.reduce" not in p.compile(backend="numpy").schedule()


def window_recurrence_with_reader():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        m = x[td.max(0, t - 2):t].amax(0)      # empty at t = 0
        s[t] = m * 2.0                         # reads m at t: unneeded at t = 0 too
        p.output("s", s)
    return p


def test_an_over_approximated_needed_set_drops_the_failing_points_nobody_needs(monkeypatch):
    """Fuzz finding F11: a simple hull (or any over-approximation of the
    needed points) can add a point where an op fails, here the `max` over the
    empty window at t = 0; the reference never computes it. Simulated with the
    coarsest over-approximation, every valid point: the failing point, and the
    point of the op that reads it, are still not run, and every backend
    agrees with the reference."""
    from tidal.lowering import needed
    monkeypatch.setattr(needed, "_needed", lambda poly, valid: dict(valid))
    counts = runs(window_recurrence_with_reader(), {"T": 5})
    assert counts["%2 = sdg.reduce max"] == 4 and counts["%4 = sdg.binary mul"] == 4, counts
    x = np.arange(1, 5, dtype=np.float32)
    expected = np.array([1, 2, 4, 6], np.float32)
    assert_same(run_all(window_recurrence_with_reader(), {"T": 4}, {"x": x}), {"s": expected})
    assert_same(run_all(window_recurrence(), {"T": 4}, {"x": x}), {"s": np.array([1, 1, 2, 3], np.float32)})


def test_without_the_pruning_the_over_approximation_would_fail(monkeypatch):
    """The check above fails without the pruning (so it tests it)."""
    from tidal.lowering import needed
    monkeypatch.setattr(needed, "_needed", lambda poly, valid: dict(valid))
    monkeypatch.setattr(needed, "_prune_failing", lambda poly, n: None)
    exe = window_recurrence().compile(backend="numpy")
    with pytest.raises(EvaluationError, match="reduce max over an empty dimension"):
        exe.run(bounds={"T": 3}, inputs={"x": np.ones(3, np.float32)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_needed_max_over_an_empty_window_fails_on_every_backend(backend):
    """JAX pads a window whose size varies and masks it with the reduction's
    identity: an empty one must not come back as -inf."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        p.output("m", x[td.max(0, t - 2):t].amax(0)); line = here()  # noqa: E702
        p.output("n", x[0:t].sum(0))           # an empty sum is 0: not an error
    exe = p.compile(backend=backend)
    # on jax the loop runs inside XLA (the empty sum lifts to a prefix-sum difference):
    # its guard names the op and the point, not the shape
    shape = "" if backend == "jax" else r" \(shape \(0, 3\)"
    with pytest.raises(EvaluationError, match=empty_max_error(line, "(t=0)") + shape):
        exe.run(bounds={"T": 3}, inputs={"x": np.ones((3, 3), np.float32)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_max_over_a_slice_empty_for_some_bounds_fails_when_it_is(backend):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        p.output("m", x[0:T - 1].amax(0)); line = here()  # noqa: E702
    exe = p.compile(backend=backend)
    assert exe.run(bounds={"T": 3}, inputs={"x": np.arange(3, dtype=np.float32)})["m"] == 1
    with pytest.raises(EvaluationError, match=empty_max_error(line, "()")):
        exe.run(bounds={"T": 1}, inputs={"x": np.zeros(1, np.float32)})


# -- two dims ---------------------------------------------------------------------------------
def windows_2d():
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(), domain=(i, t))
        s = td.recurrent(shape=(), domain=(i, t))
        s[i, 0] = x[i, 0]
        s[i, t] = x[i, td.max(0, t - 2):t].amax(0)            # empty at t = 0
        u = td.recurrent(shape=(), domain=(i, t))
        u[0, t] = x[0, t]
        u[i, t] = x[td.max(0, i - 2):i, t].amin(0)            # empty at i = 0
        p.output("s", s)
        p.output("u", u)
    return p


@pytest.mark.parametrize("I, T", [(1, 1), (3, 4), (4, 2)])
def test_two_dims_empty_windows_where_the_base_cases_apply(I, T):
    x = np.arange(I * T, dtype=np.float32).reshape(I, T) * np.float32(-1) ** np.arange(I * T).reshape(I, T)
    s = np.array([[x[i, 0]] + [x[i, max(0, t - 2):t].max() for t in range(1, T)] for i in range(I)], np.float32)
    u = np.array([x[0]] + [x[max(0, i - 2):i].min(0) for i in range(1, I)], np.float32)
    assert_same(run_all(windows_2d(), {"I": I, "T": T}, {"x": x}), {"s": s, "u": u})
    counts = runs(windows_2d(), {"I": I, "T": T})
    assert counts["%2 = sdg.reduce max"] == I * (T - 1) and counts["%4 = sdg.reduce min"] == (I - 1) * T


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_dims_a_needed_empty_window_fails(backend):
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(), domain=(i, t))
        p.output("m", x[td.max(0, i - 1):i, t].amax(0)); line = here()  # noqa: E702
    exe = p.compile(backend=backend)
    with pytest.raises(EvaluationError, match=empty_max_error(line, "(i=0, t=0)")):
        exe.run(bounds={"I": 2, "T": 3}, inputs={"x": np.ones((2, 3), np.float32)})


# -- less work ----------------------------------------------------------------------------------
def last_only():
    """exp(x) and a recurrence, each read at t = T - 1 only."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        p.output("e", td.exp(x)[T - 1])
        s = td.recurrent(shape=(2,), domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] * 0.5 + x[t + 1]
        p.output("s", td.tanh(s)[T - 1])
        r = td.recurrent(shape=(2,), domain=(t,))           # every other step
        r[0] = x[0]
        r[1] = x[1]
        r[t + 2] = r[t] - x[t + 2]
        p.output("r", r[T - 1])
    return p


@pytest.mark.parametrize("T", [1, 2, 5, 8])
def test_values_read_at_the_last_step_only_run_once(T):
    p = last_only()
    x = np.random.default_rng(T).normal(size=(T, 2)).astype(np.float32)
    results = run_all(p, {"T": T}, {"x": x})
    s, r = x[0], list(x[:2])
    for k in range(1, T):
        s = s * np.float32(0.5) + x[k]
    for k in range(2, T):
        r.append(r[k - 2] - x[k])
    for out in results.values():
        np.testing.assert_allclose(out["e"], np.exp(x[-1]), rtol=1e-6)
        np.testing.assert_allclose(out["s"], np.tanh(s), rtol=1e-5)
        np.testing.assert_allclose(out["r"], r[T - 1], rtol=1e-6)
    counts = runs(p, {"T": T})
    assert counts["%1 = sdg.unary exp"] == 1                   # not T times
    assert counts["%7 = sdg.unary tanh"] == 1
    assert counts["%3 = sdg.merge"] == T                       # the recurrence runs at every step ...
    assert counts["%9 = sdg.merge"] == (T + 1) // 2           # ... this one at every other step
    assert "%1 = sdg.unary exp  [t = T - 1]" in p.compile(backend="numpy").schedule()


def test_the_last_update_of_a_training_loop_is_not_run():
    """w[i + 1] = w[i] - g[i]: the update at i = I - 1 is read by nothing."""
    with td.Program() as p:
        (i, I), = p.dims("i")
        x = td.input("x", shape=(3,), domain=())
        w = td.recurrent(shape=(3,), domain=(i,))
        w[0] = x
        w[i + 1] = w[i] - td.exp(w[i]) * 0.1
        p.output("w", w)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    results = run_all(p, {"I": 4}, {"x": x})
    expected = [x]
    for _ in range(3):
        expected.append(expected[-1] - np.exp(expected[-1]) * np.float32(0.1))
    for out in results.values():
        np.testing.assert_allclose(out["w"], np.stack(expected), rtol=1e-6)
    assert runs(p, {"I": 4})["%2 = sdg.unary exp"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_udf_runs_at_every_point_even_if_its_result_is_unread(backend):
    calls = []
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        y = td.exp(x)
        td.udf(lambda a: calls.append(float(a)), [y])        # a sink: effects only
        p.output("last", y[T - 1])
    x = np.array([0.0, 1.0, 2.0], np.float32)
    p.compile(backend=backend).run(bounds={"T": 3}, inputs={"x": x})
    np.testing.assert_allclose(calls, np.exp(x), rtol=1e-6)


# -- on sdg graphs ------------------------------------------------------------------------------
V = "!tidal.tensor<[4], f32>"
UNREAD_BRANCH = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %m = sdg.reduce max [0] %x[max(0, t - 2):t] domain [t] : ({V}) -> {V}
  %s = sdg.merge %x[0] if <t eq 0>, %m[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %dead = sdg.reduce min [0] %x[0:t] domain [t] : ({V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
}}"""


def test_the_schedule_domains_are_the_needed_valid_points():
    from tidal.lowering.schedule import load_schedule
    exe = compile_sdg(UNREAD_BRANCH, backend="numpy")
    sched = exe.sched
    assert str(sched.domains[1]).endswith("{ S1[t] : 0 < t < T }")
    assert str(sched.valid[1]).endswith("{ S1[t] : 0 <= t < T }")
    assert sched.domains[3].is_empty() and 3 not in sched.statements()
    assert load_schedule(sched.graph, sched.text()).domains[1].is_equal(sched.domains[1])
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(exe.run({"T": 3}, {"x": x})["s"], np.stack([x[0], x[0], x[1]]))


STRIDE = f"""
sdg.graph @stride dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %s = sdg.merge %x[t] if <t lt 2>, %n[t - 2] if <true> domain [t] : ({V}, {V}) -> {V}
  %n = sdg.binary add %s[t], %x[t + 2] domain [t] : ({V}, {V}) -> {V}
  sdg.output "s" %s[T - 1] domain [] : {V}
}}"""


@pytest.mark.parametrize("operations", [None, 1])
def test_a_recurrence_read_at_its_end_uses_the_transitive_closure_or_falls_back(monkeypatch, operations):
    """Needed grows by one step per round: isl's transitive closure gives every
    other t; if isl gives up, the recurrence keeps its valid domain (correct,
    more work)."""
    from tidal.lowering import needed
    from tidal.runtime.reference import evaluate
    if operations is not None:
        monkeypatch.setattr(needed, "CLOSURE_OPERATIONS", operations)
    exe = compile_sdg(STRIDE, backend="numpy")
    merge = str(exe.sched.domains[1])
    if operations is None:
        assert merge.endswith("{ S1[t] : (1 + T + t) mod 2 = 0 and 0 <= t < T }"), merge
    else:
        assert merge.endswith("{ S1[t] : 0 <= t < T }"), merge
    for T in (1, 2, 7, 8):
        x = np.random.default_rng(T).normal(size=(T, 4)).astype(np.float32)
        np.testing.assert_allclose(exe.run({"T": T}, {"x": x})["s"], evaluate(STRIDE, {"T": T}, {"x": x})["s"],
                                   rtol=1e-6)
        check_schedule(exe, {"T": T})


def test_needed_points_of_a_backward_recurrence_with_a_modular_case_stay_simple():
    """Fuzz finding F2: isl's transitive closure of a backward recurrence with
    a `% 3` case returned needed sets of ~25 pieces and ~300 existentials; the
    dependences computed from them then ran for minutes or overflowed isl's
    stack (a segmentation fault). Complex needed sets are replaced by their
    simple hull within the valid domain (lowering/needed.py), still closed
    under the reads, so the schedule runs every point the reference needs."""
    import islpy as isl

    with td.Program("f2") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), dtype="int64", domain=(t,))
        s = td.recurrent(shape=(), dtype="int64", domain=(t,))
        s[T - 1] = 1
        s[t - 1, (t - 1) % 3 == 0] = (s - x).sum()
        s[t - 1] = (s - s) % 7
        y = td.recurrent(shape=(), dtype="int64", domain=(t,))
        y[0] = s[0]
        y[t] = y[t - 1] + y[0:t].amin(0)
        p.output("y", y)                 # s is needed only through y[0] = s[0]
    exe = p.compile(backend="numpy").compiled
    for k, d in exe.sched.domains.items():
        pieces = d.n_basic_set()
        divs = sum(b.dim(isl.dim_type.div) for b in d.get_basic_sets())
        assert pieces <= 8 and divs <= 8, (exe.graph.nodes[k].label, str(d)[:300])
    for T in (1, 2, 4, 7):
        xs = (np.arange(2 * T).reshape(T, 2) - 3).astype(np.int64)
        s_ref = np.zeros(T, np.int64)
        s_ref[T - 1] = 1
        for k in range(T - 2, -1, -1):
            s_ref[k] = 0 if k % 3 else int((s_ref[k + 1] - xs[k + 1]).sum())
        y_ref = np.zeros(T, np.int64)
        y_ref[0] = s_ref[0]
        for k in range(1, T):
            y_ref[k] = y_ref[k - 1] + y_ref[:k].min()
        assert_same(run_all(p, {"T": T}, {"x": xs}), {"y": y_ref})
