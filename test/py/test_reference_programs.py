"""rt programs through rt-to-sdg and the reference interpreter, against plain
NumPy written independently here, for several bounds each (T = 1 included)."""
import numpy as np
from tidal.runtime.counter_random import random_draw
import pytest

from tidal.runtime.reference import evaluate

BOUNDS = [1, 2, 5, 11]
V = "!tidal.tensor<[4], f32>"
S = "!tidal.tensor<[], f32>"


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


W = [[0.5, -0.2, 0.1], [0.3, 0.8, -0.5], [-0.4, 0.2, 0.9]]
RNN = f"""
!v = !tidal.tensor<[3], f32>
!m = !tidal.tensor<[3, 3], f32>
rt.program @rnn dims [t < T] {{
  %x = rt.input "x" domain [t] : !v
  %w = rt.param "W" dense<{W}> : tensor<3x3xf32> domain [] : !m
  %h = rt.recurrent domain [t] : !v
  %x0 = rt.index %x[0] domain [] : (!v) -> !v
  %h0 = rt.unary tanh %x0 domain [] : (!v) -> !v
  rt.define %h[0] = %h0 : !v, !v
  %hw = rt.matmul %h, %w domain [t] : (!v, !m) -> !v
  %xn = rt.index %x[t + 1] domain [t] : (!v) -> !v
  %pre = rt.binary add %hw, %xn domain [t] : (!v, !v) -> !v
  %hn = rt.unary tanh %pre domain [t] : (!v) -> !v
  rt.define %h[t + 1] = %hn : !v, !v
  rt.output "h" %h : !v
}}
"""


@pytest.mark.parametrize("T", BOUNDS)
def test_matmul_rnn(T):
    x = rand(T, 3)
    h = np.zeros((T, 3), np.float32)
    h[0] = np.tanh(x[0])
    for t in range(1, T):
        h[t] = np.tanh(h[t - 1] @ np.array(W, np.float32) + x[t])
    out = evaluate(RNN, {"T": T}, {"x": x})
    assert out["h"].shape == (T, 3) and out["h"].dtype == np.float32
    np.testing.assert_allclose(out["h"], h, rtol=1e-5, atol=1e-6)


RECURRENCE = f"""
rt.program @rec dims [t < T] {{
  %x = rt.input "x" domain [t] : {V}
  %half = rt.constant dense<0.5> : tensor<f32> domain [] : {S}
  %s = rt.recurrent domain [t] : {V}
  %x0 = rt.index %x[0] domain [] : ({V}) -> {V}
  rt.define %s[0] = %x0 : {V}, {V}
  %d = rt.binary mul %s, %half domain [t] : ({V}, {S}) -> {V}
  %xn = rt.index %x[t + 1] domain [t] : ({V}) -> {V}
  %n = rt.binary add %d, %xn domain [t] : ({V}, {V}) -> {V}
  rt.define %s[t + 1] = %n : {V}, {V}
  rt.output "s" %s : {V}
}}
"""


@pytest.mark.parametrize("T", BOUNDS + [5000])
def test_recurrence(T):
    x = rand(T, 4, seed=T)
    s = np.empty_like(x)
    s[0] = x[0]
    for t in range(1, T):
        s[t] = 0.5 * s[t - 1] + x[t]
    out = evaluate(RECURRENCE, {"T": T}, {"x": x})
    np.testing.assert_allclose(out["s"], s, rtol=1e-5, atol=1e-5)


def t_shape(text):
    return f"!tidal.tensor<[{text}, 4], f32>"


WINDOWS = f"""
rt.program @windows dims [t < T] {{
  %x = rt.input "x" domain [t] : {V}
  %win = rt.index %x[max(0, t - 2):t + 1] domain [t] : ({V}) -> {t_shape("min(t, 2) + 1")}
  %w = rt.reduce sum [0] %win domain [t] : ({t_shape("min(t, 2) + 1")}) -> {V}
  %suf = rt.index %x[t:T] domain [t] : ({V}) -> {t_shape("T - t")}
  %g = rt.reduce sum [0] %suf domain [t] : ({t_shape("T - t")}) -> {V}
  %ns = rt.index %x[t:min(t + 3, T)] domain [t] : ({V}) -> {t_shape("min(t + 3, T) - t")}
  %n = rt.reduce sum [0] %ns domain [t] : ({t_shape("min(t + 3, T) - t")}) -> {V}
  %nm = rt.reduce max [0] %ns domain [t] : ({t_shape("min(t + 3, T) - t")}) -> {V}
  %pre = rt.index %x[0:t + 1] domain [t] : ({V}) -> {t_shape("t + 1")}
  %p = rt.scan cumsum 0 %pre domain [t] : ({t_shape("t + 1")}) -> {t_shape("t + 1")}
  %all = rt.index %x[0:T] domain [] : ({V}) -> {t_shape("T")}
  %a = rt.reduce sum [0] %all domain [] : ({t_shape("T")}) -> {V}
  %x0 = rt.index %x[0] domain [] : ({V}) -> {V}
  %f = rt.binary sub %x, %x0 domain [t] : ({V}, {V}) -> {V}
  %even = rt.index %x[0:T:2] domain [] : ({V}) -> {t_shape("(T + 1) floordiv 2")}
  %last = rt.index %x[T - 1] domain [] : ({V}) -> {V}
  %prev = rt.index %x[t - 1] domain [t] : ({V}) -> {V}
  %before = rt.index %prev[1:t + 1] domain [t] : ({V}) -> {t_shape("t")}
  %b = rt.reduce sum [0] %before domain [t] : ({t_shape("t")}) -> {V}
  rt.output "w" %w : {V}
  rt.output "g" %g : {V}
  rt.output "n" %n : {V}
  rt.output "nm" %nm : {V}
  rt.output "p" %p : {t_shape("t + 1")}
  rt.output "a" %a : {V}
  rt.output "f" %f : {V}
  rt.output "even" %even : {t_shape("(T + 1) floordiv 2")}
  rt.output "last" %last : {V}
  rt.output "b" %b : {V}
}}
"""


@pytest.mark.parametrize("T", BOUNDS)
def test_windows_prefixes_suffixes_and_constant_indices(T):
    x = rand(T, 4, seed=1)
    out = evaluate(WINDOWS, {"T": T}, {"x": x})
    close = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["w"], [x[max(0, t - 2):t + 1].sum(0) for t in range(T)], **close)
    np.testing.assert_allclose(out["g"], [x[t:].sum(0) for t in range(T)], **close)
    np.testing.assert_allclose(out["n"], [x[t:t + 3].sum(0) for t in range(T)], **close)
    np.testing.assert_allclose(out["nm"], [x[t:t + 3].max(0) for t in range(T)], **close)
    assert isinstance(out["p"], list) and len(out["p"]) == T  # per-point shape [t + 1, 4]
    for t in range(T):
        np.testing.assert_allclose(out["p"][t], np.cumsum(x[:t + 1], axis=0), **close)
    np.testing.assert_allclose(out["a"], x.sum(0), **close)
    np.testing.assert_allclose(out["f"], x - x[0], **close)
    np.testing.assert_allclose(out["even"], x[::2], **close)
    np.testing.assert_allclose(out["last"], x[T - 1], **close)
    np.testing.assert_allclose(out["b"], [x[:t].sum(0) for t in range(T)], **close)
    assert out["b"][0].tolist() == [0, 0, 0, 0]  # an empty slice sums to zero


RETURNS = f"""
rt.program @returns dims [t < T] {{
  %r = rt.input "r" domain [t] : {S}
  %gamma = rt.constant dense<0.9> : tensor<f32> domain [] : {S}
  %v = rt.recurrent domain [t] : {S}
  %rl = rt.index %r[T - 1] domain [] : ({S}) -> {S}
  rt.define %v[T - 1] = %rl : {S}, {S}
  %vn = rt.index %v[t + 1] domain [t] : ({S}) -> {S}
  %m = rt.binary mul %gamma, %vn domain [t] : ({S}, {S}) -> {S}
  %a = rt.binary add %r, %m domain [t] : ({S}, {S}) -> {S}
  rt.define %v[t] = %a : {S}, {S}
  rt.output "v" %v : {S}
}}
"""


@pytest.mark.parametrize("T", BOUNDS + [3000])
def test_discounted_returns_backward_recurrence(T):
    r = rand(T, seed=2)
    expected = [sum(0.9 ** (k - t) * float(r[k]) for k in range(t, T)) for t in range(min(T, 30))]
    out = evaluate(RETURNS, {"T": T}, {"r": r})
    assert out["v"].shape == (T,)
    np.testing.assert_allclose(out["v"][:30], expected, rtol=1e-4, atol=1e-4)


SGD = """
!w = !tidal.tensor<[3], f32>
!s = !tidal.tensor<[], f32>
rt.program @sgd dims [i < I, t < T] {
  %x = rt.input "x" domain [i, t] : !w
  %w0 = rt.param "w0" dense<[1.0, -2.0, 0.5]> : tensor<3xf32> domain [] : !w
  %w = rt.recurrent domain [i] : !w
  rt.define %w[0] = %w0 : !w, !w
  %g = rt.binary mul %w, %x domain [i, t] : (!w, !w) -> !w
  %gs = rt.index %g[i, 0:T] domain [i] : (!w) -> !tidal.tensor<[T, 3], f32>
  %s = rt.reduce sum [0] %gs domain [i] : (!tidal.tensor<[T, 3], f32>) -> !w
  %iv = rt.symbol_value <i> domain [i] : !tidal.tensor<[], i64>
  %ivf = rt.cast %iv domain [i] : (!tidal.tensor<[], i64>) -> !s
  %k = rt.constant dense<0.5> : tensor<f32> domain [] : !s
  %lr = rt.binary pow %k, %ivf domain [i] : (!s, !s) -> !s
  %d = rt.binary mul %lr, %s domain [i] : (!s, !w) -> !w
  %u = rt.binary sub %w, %d domain [i] : (!w, !w) -> !w
  rt.define %w[i + 1] = %u : !w, !w
  rt.output "w" %w : !w
  rt.output "g" %g : !w
}
"""


@pytest.mark.parametrize("I, T", [(1, 1), (1, 4), (3, 1), (4, 5)])
def test_two_dims_with_an_iteration_level_recurrence(I, T):
    x = rand(I, T, 3, seed=3) * 0.1
    w = np.empty((I, 3), np.float32)
    w[0] = [1.0, -2.0, 0.5]
    for i in range(1, I):
        w[i] = w[i - 1] - 0.5 ** (i - 1) * (w[i - 1] * x[i - 1]).sum(0)
    out = evaluate(SGD, {"I": I, "T": T}, {"x": x})
    np.testing.assert_allclose(out["w"], w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["g"], w[:, None, :] * x, rtol=1e-5, atol=1e-6)
    assert out["g"].shape == (I, T, 3)


COUNTER = f"""
rt.program @counter dims [t < T] {{
  %z = rt.constant dense<0.0> : tensor<f32> domain [] : {S}
  %one = rt.constant dense<1.0> : tensor<f32> domain [] : {S}
  %ten = rt.constant dense<10.0> : tensor<f32> domain [] : {S}
  %c = rt.recurrent domain [t] : {S}
  rt.define %c[0] = %one : {S}, {S}
  rt.define %c[t] if <t mod 5 eq 0> = %z : {S}, {S}
  %inc = rt.binary add %c, %one domain [t] : ({S}, {S}) -> {S}
  %jump = rt.binary add %c, %ten domain [t] : ({S}, {S}) -> {S}
  rt.define %c[t + 1] if <t mod 3 eq 0> = %jump : {S}, {S}
  rt.define %c[t + 1] = %inc : {S}, {S}
  rt.output "c" %c : {S}
  rt.output "odd" %c if <t mod 2 eq 1> : {S}
}}
"""


@pytest.mark.parametrize("T", BOUNDS + [17])
def test_conditional_definitions_in_order(T):
    c = []
    for q in range(T):
        if q == 0:
            c.append(1.0)
        elif q % 5 == 0:
            c.append(0.0)
        elif (q - 1) % 3 == 0:
            c.append(c[q - 1] + 10)
        else:
            c.append(c[q - 1] + 1)
    out = evaluate(COUNTER, {"T": T}, {})
    assert out["c"].tolist() == c
    assert set(out["odd"]) == {(t,) for t in range(1, T, 2)}
    assert all(out["odd"][(t,)] == c[t] for t in range(1, T, 2))


ENV = """
!o = !tidal.tensor<[2], f32>
!r = !tidal.tensor<[], f32>
rt.program @env dims [b < B, t < T] {
  %o0 = rt.udf "env.reset"() domain [b] : () -> !o
  %o = rt.recurrent domain [b, t] : !o
  rt.define %o[b, 0] = %o0 : !o, !o
  %next, %r = rt.udf "env.step"(%o) domain [b, t] : (!o) -> (!o, !r)
  rt.define %o[b, t + 1] = %next : !o, !o
  rt.output "obs" %o : !o
  rt.output "reward" %r : !r
}
"""


class Env:
    """An environment with external state: a call log and a step counter."""

    def __init__(self):
        self.calls = []
        self.resets = 0

    def reset(self):
        self.resets += 1
        self.calls.append("reset")
        return np.array([self.resets, 0.0])

    def step(self, obs):
        assert isinstance(obs, np.ndarray) and obs.dtype == np.float32 and obs.shape == (2,)
        self.calls.append(("step", float(obs[0]), float(obs[1])))
        return obs + np.array([0.0, 1.0]), np.float64(len(self.calls))


@pytest.mark.parametrize("B, T", [(1, 1), (2, 3), (3, 5)])
def test_udfs_with_state_run_once_per_point_in_demand_order(B, T):
    env = Env()
    out = evaluate(ENV, {"B": B, "T": T}, {}, {"env.reset": env.reset, "env.step": env.step})
    # Documented order: outputs in op order, points lexicographically, depth-first.
    expected_calls = []
    for b in range(B):
        expected_calls.append("reset")
        expected_calls += [("step", float(b + 1), float(t)) for t in range(T - 1)]
    expected_calls += [("step", float(b + 1), float(T - 1)) for b in range(B)]
    assert env.calls == expected_calls
    obs = np.array([[[b + 1, t] for t in range(T)] for b in range(B)], np.float32)
    np.testing.assert_array_equal(out["obs"], obs)
    reward = np.empty((B, T), np.float32)
    for position, call in enumerate(expected_calls):
        if call != "reset":
            reward[int(call[1]) - 1, int(call[2])] = position + 1
    np.testing.assert_array_equal(out["reward"], reward)
    assert out["reward"].dtype == np.float32


RANDOM = """
rt.program @rng dims [i < I, t < T] {
  %u = rt.random uniform seed 11 domain [i, t] : !tidal.tensor<[3], f32>
  %n = rt.random normal seed 12 domain [t] : !tidal.tensor<[2, 2], f64>
  %b = rt.random bernoulli seed 13 domain [i] : !tidal.tensor<[5], i1>
  rt.output "u" %u : !tidal.tensor<[3], f32>
  rt.output "n" %n : !tidal.tensor<[2, 2], f64>
  rt.output "b" %b : !tidal.tensor<[5], i1>
}
"""


@pytest.mark.parametrize("I, T", [(1, 1), (2, 4)])
def test_random_is_deterministic_per_seed_and_point(I, T):
    out = evaluate(RANDOM, {"I": I, "T": T}, {})
    again = evaluate(RANDOM, {"I": I, "T": T}, {})
    for name in ("u", "n", "b"):
        np.testing.assert_array_equal(out[name], again[name])
    for i in range(I):
        for t in range(T):
            expected = random_draw(np, "uniform", 11, (i, t), (3,)).astype(np.float32)
            np.testing.assert_array_equal(out["u"][i, t], expected)
        bern = random_draw(np, "bernoulli", 13, (i,), (5,))
        np.testing.assert_array_equal(out["b"][i], bern)
    for t in range(T):
        np.testing.assert_array_equal(out["n"][t], random_draw(np, "normal", 12, (t,), (2, 2)))
    assert out["u"].dtype == np.float32 and out["b"].dtype == np.bool_
    if T > 1:
        assert not np.array_equal(out["u"][0, 0], out["u"][0, 1])


PREFIX_OF_RECURRENCE = """
!s = !tidal.tensor<[], f64>
rt.program @p dims [t < T] {
  %x = rt.input "x" domain [t] : !s
  %s = rt.recurrent domain [t] : !s
  %x0 = rt.index %x[0] domain [] : (!s) -> !s
  rt.define %s[0] = %x0 : !s, !s
  %sp = rt.index %s[0:t + 1] domain [t] : (!s) -> !tidal.tensor<[t + 1], f64>
  %tot = rt.reduce sum [0] %sp domain [t] : (!tidal.tensor<[t + 1], f64>) -> !s
  %xn = rt.index %x[t + 1] domain [t] : (!s) -> !s
  %n = rt.binary add %tot, %xn domain [t] : (!s, !s) -> !s
  rt.define %s[t + 1] = %n : !s, !s
  rt.output "s" %s : !s
}
"""


@pytest.mark.parametrize("T", BOUNDS)
def test_a_recurrence_reading_its_whole_prefix(T):
    x = rand(T, seed=5).astype(np.float64)
    s = [x[0]]
    for t in range(1, T):
        s.append(sum(s) + x[t])
    np.testing.assert_allclose(evaluate(PREFIX_OF_RECURRENCE, {"T": T}, {"x": x})["s"], s, rtol=1e-12)
