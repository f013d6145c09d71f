"""sdg-restrict-merges end to end: a state over (iteration i, epoch k) updated
once per epoch and read by a loop over t at epoch 0 (PPO's weights and its
acting loop, in small). The pass gives the t loop a merge over i of its own;
every backend, with and without the pass, gives the values of a NumPy loop.
On PPO itself, test_rl_examples.py checks that the acting loop is not nested
in the epoch loop (what the pass is for: see its docstring)."""
import re

import numpy as np
from hypothesis import given, settings, strategies as st

import tidal as td

WITHOUT = td.default_passes(without=["sdg-restrict-merges"])
BACKENDS = ("reference", "numpy", "jax")


def _program(w0: np.ndarray, lr: float, read_last: bool):
    """w[i, k]: w[0, 0] = w0, w[i, k + 1] = u[i, k], w[i + 1, 0] = u[i, K - 1] with
    u = w - lr * (w - total[i]), total[i] = sum over t of tanh(x[i, t] * w[i, 0]).
    read_last: the t loop also reads w[i, 0] through a second op (two readers, one
    new merge), an output reads the state at the last epoch (both branches can
    hold: left as it is) and one at epoch 1, where one branch holds (read as u[i, 0]
    directly; needs K >= 2)."""
    with td.Program() as p:
        (i, I), (k, K), (t, T) = p.dims("i", "k", "t")
        w = td.recurrent(shape=w0.shape, domain=(i, k), name="w")
        x = td.input("x", shape=w0.shape, domain=(i, t))
        act = td.tanh(x * w[i, 0])
        if read_last:
            act = act + 0.5 * w[i, 0]
        total = act[i, 0:T].sum(0)
        u = w - lr * (w - total)
        w[0, 0] = td.param("w0", w0)
        w[i + 1, 0] = u[i, K - 1]
        w[i, k + 1] = u[i, k]
        p.output("act", act)
        p.output("w", w)
        if read_last:
            p.output("last", w[i, K - 1])
            p.output("second", 2.0 * w[i, 1])
    return p


def _want(w0, lr, read_last, x, K):
    I, T = x.shape[:2]
    w = np.zeros((I, K) + w0.shape)
    act = np.zeros(x.shape)
    cur = w0.astype(np.float64)
    for i in range(I):
        act[i] = np.tanh(x[i] * cur) + (0.5 * cur if read_last else 0.0)
        total = act[i].sum(0)
        for k in range(K):
            w[i, k] = cur
            cur = cur - lr * (cur - total)
    out = {"act": act, "w": w}
    if read_last:
        out["last"] = w[:, K - 1]
        out["second"] = 2.0 * w[:, 1]
    return out


@settings(max_examples=6, deadline=None)
@given(bounds=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4)), read_last=st.booleans(),
       lr=st.sampled_from([0.1, 0.5]))
def test_epoch_state_read_at_epoch_zero(bounds, read_last, lr):
    I, K, T = bounds
    K = max(K, 2) if read_last else K
    w0 = np.array([0.3, -0.2, 0.1], np.float32)
    p = _program(w0, lr, read_last)
    x = np.random.default_rng(I * 100 + K * 10 + T).standard_normal((I, T, 3)).astype(np.float32)
    want = _want(w0, lr, read_last, x, K)
    b = {"I": I, "K": K, "T": T}
    for passes in (None, WITHOUT):
        for backend in BACKENDS:
            out = p.compile(backend=backend, passes=passes).run(bounds=b, inputs={"x": x})
            for name, value in want.items():
                np.testing.assert_allclose(np.asarray(out[name]), value, rtol=2e-4, atol=2e-4,
                                           err_msg=f"{backend} {name} {b} passes={passes}")


def test_the_t_loop_reads_a_merge_over_i():
    p = _program(np.array([0.3, -0.2, 0.1], np.float32), 0.1, read_last=True)
    graph = p.compile(backend="numpy").stages["sdg-restrict-merges"]
    merges = re.findall(r"sdg\.merge .* domain \[([^]]*)\]", graph)
    assert sorted(merges) == ["i", "i, k"], merges          # one new merge, shared by both readers
    assert not re.search(r"\[i, 0\] domain \[i, t\]", graph)  # no read of w at epoch 0 is left
    assert re.search(r"\[i, K - 1\] domain \[i\]", graph)   # the output at the last epoch: both branches hold
    assert re.search(r"\[i, 0\] domain \[i\]", graph) and not re.search(r"\[i, 1\] domain", graph)  # w[i, 1]: u[i, 0]
