"""Gradients through each class of temporal dependence: point shifts, windows,
prefixes, suffixes, n-step windows, constant slices and points, reversed and
coarse reads, several dims, definition cases; compared with jax.grad of the
unrolled function at several bounds (T = 1 included)."""
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tidal as td
from ad_helpers import check, close, grad_program, normal

X = {"x": ((2,), ("t",), "float32")}
XS = {"x": ((), ("t",), "float32")}


def per_t(T, f):
    return sum(f(k) for k in range(T))


def run_all(build, ref, inputs=X, bounds=(1, 2, 5), shape=(2,)):
    prog = grad_program(build, inputs, ("t",))
    for T in bounds:
        check(None, lambda x: ref(x, T), inputs, {"x": normal(T, T, *shape)}, {"T": T}, program=prog)


def test_point_shift_back_clamped():
    run_all(lambda p, d, x: (x[td.max(0, d[0].step - 2)] * x).sum()[0:d[0].bound].sum(),
            lambda x, T: per_t(T, lambda k: (x[max(0, k - 2)] * x[k]).sum()))


def test_point_shift_forward_clamped():
    run_all(lambda p, d, x: td.tanh(x[td.min(d[0].step + 1, d[0].bound - 1)] - x).sum()[0:d[0].bound].sum(),
            lambda x, T: per_t(T, lambda k: jnp.tanh(x[min(k + 1, T - 1)] - x[k]).sum()))


def test_reversed_read():
    run_all(lambda p, d, x: (x[d[0].bound - 1 - d[0].step] * td.symbol(d[0].step).astype("float32")).sum()
            [0:d[0].bound].sum(),
            lambda x, T: per_t(T, lambda k: (x[T - 1 - k] * k).sum()))


@settings(max_examples=6)
@given(st.integers(1, 4), st.integers(1, 6))
def test_causal_window(w, T):
    """y[t] = f(x[max(0, t - w + 1):t + 1]): the inverse is x[t] -> y[t:min(t + w, T)]."""
    def build(p, d, x):
        t, T_ = d[0]
        win = x[td.max(0, t - w + 1):t + 1]
        return (td.sin(win) * (td.symbol(t).astype("float32") + 1.0)).sum()[0:T_].sum()

    prog = grad_program(build, X, ("t",))
    check(None, lambda x: per_t(T, lambda k: (jnp.sin(x[max(0, k - w + 1):k + 1]) * (k + 1)).sum()), X,
          {"x": normal(T + w, T, 2)}, {"T": T}, program=prog)


@settings(max_examples=6)
@given(st.integers(1, 4), st.integers(1, 6))
def test_n_step_window(n, T):
    """y[t] = f(x[t:min(t + n, T)]): position j of y[t] is x[t + j]."""
    def build(p, d, x):
        t, T_ = d[0]
        return x[t:td.min(t + n, T_)].discounted_sum(0.5).sum()[0:T_].sum() ** 2

    prog = grad_program(build, X, ("t",))
    check(None, lambda x: per_t(T, lambda k: sum(0.5 ** j * x[k + j] for j in range(min(n, T - k))).sum()) ** 2,
          X, {"x": normal(T + n, T, 2)}, {"T": T}, program=prog)


def test_prefix():
    run_all(lambda p, d, x: (x[0:d[0].step + 1] ** 2).mean(0).sum()[0:d[0].bound].sum(),
            lambda x, T: per_t(T, lambda k: (x[:k + 1] ** 2).mean(0).sum()))


def test_suffix():
    run_all(lambda p, d, x: td.exp(x[d[0].step:d[0].bound] * 0.3).sum()[0:d[0].bound].sum(),
            lambda x, T: per_t(T, lambda k: jnp.exp(x[k:] * 0.3).sum()))


def test_moving_slice_with_offset():
    """x[max(0, t - 3):max(1, t - 1)]: a window that lags behind t."""
    run_all(lambda p, d, x: (x[td.max(0, d[0].step - 3):td.max(1, d[0].step - 1)].sum(0) ** 2).sum()
            [0:d[0].bound].sum(),
            lambda x, T: per_t(T, lambda k: (x[max(0, k - 3):max(1, k - 1)].sum(0) ** 2).sum()),
            bounds=(1, 3, 6))


def test_constant_slices_and_points():
    def build(p, d, x):
        t, T = d[0]
        return (x[1:T] ** 2).sum() + (x[0:T:2] * 3.0).sum() + (x[T - 1] * x[0]).sum()

    run_all(build, lambda x, T: (x[1:] ** 2).sum() + (x[0::2] * 3.0).sum() + (x[-1] * x[0]).sum(),
            bounds=(1, 2, 5))


def test_coarse_read():
    run_all(lambda p, d, x: (x[d[0].step // 2] * (td.symbol(d[0].step).astype("float32") - 1.0)).sum()
            [0:d[0].bound].sum(),
            lambda x, T: per_t(T, lambda k: (x[k // 2] * (k - 1)).sum()))


def test_loss_with_a_domain_sums_over_it():
    """A loss with domain (t,) is differentiated as the sum over t (its gradient is
    constant along t, which exercises the multiplicity of inverse slices)."""
    def build(p, d, x):
        t, T = d[0]
        return x[td.max(0, t - 1):t + 1].sum() + x[0:t + 1].sum() + x[t:T].sum() * 2.0

    prog = grad_program(build, X, ("t",))
    for T in (1, 3, 5):
        x = normal(T, T, 2)
        out = prog[0].compile(backend="reference").run(bounds={"T": T}, inputs={"x": x})
        from ad_helpers import jax_grads
        _, (dx,) = jax_grads(lambda a: per_t(T, lambda k: a[max(0, k - 1):k + 1].sum() + a[:k + 1].sum()
                                             + a[k:].sum() * 2.0), x)
        close(out["dx"], dx)


def test_two_dims_batch_and_time():
    """x over (b, t): a window on t, a constant slice on b, the identity on b."""
    inputs = {"x": ((2,), ("b", "t"), "float32")}

    def build(p, d, x):
        (b, B), (t, T) = d
        win = x[b, td.max(0, t - 1):t + 1]                         # domain (b, t)
        allb = x[0:B, t]                                           # domain (t,)
        y = (win.sum(0) * allb.mean(0)).sum() + (x[b, 0:t + 1] ** 2).sum()
        return y[0:B, 0:T].sum()

    def ref(x, B, T):
        tot = 0.0
        for bb in range(B):
            for k in range(T):
                tot += (x[bb, max(0, k - 1):k + 1].sum(0) * x[:, k].mean(0)).sum() + (x[bb, :k + 1] ** 2).sum()
        return tot

    prog = grad_program(build, inputs, ("b", "t"))
    for B, T in ((1, 1), (2, 3), (3, 2)):
        check(None, lambda x: ref(x, B, T), inputs, {"x": normal(B + T, B, T, 2)}, {"B": B, "T": T},
              program=prog)


def test_parameter_used_at_every_point_of_two_dims():
    """A domain-() parameter read at every (b, t): its gradient sums over both dims."""
    W0 = normal(3, 2, 2)
    with td.Program() as p:
        (b, B), (t, T) = p.dims("b", "t")
        x = td.input("x", shape=(2,), domain=(b, t))
        W = td.param("W", W0)
        loss = td.tanh(x @ W).sum()[0:B, 0:T].sum()
        (dW,) = td.grad(loss, [W])
        p.output("dW", dW)
    from ad_helpers import jax_grads
    for B, T in ((1, 1), (2, 3)):
        x = normal(7, B, T, 2)
        out = p.compile(backend="reference").run(bounds={"B": B, "T": T}, inputs={"x": x})
        _, (dW,) = jax_grads(lambda w: jnp.tanh(x @ w).sum(), W0)
        close(out["dW"], dW)


def test_cases_with_constants_conditions_and_two_dims():
    """s[b, 0] = x[b, 0]; s[b, t + 1] if t % 2 == 1 = x[b, t + 1]; s[b, t + 1] = s[b, t] * x[b, t + 1];
    and a tensor defined at T - 1 from a domain-() value."""
    inputs = {"x": ((), ("b", "t"), "float32")}

    def build(p, d, x):
        (b, B), (t, T) = d
        s = td.recurrent(shape=(), domain=(b, t))
        s[b, 0] = x[b, 0]
        s[b, t + 1, t % 2 == 1] = x[b, t + 1]
        s[b, t + 1] = s[b, t] * x[b, t + 1] + 0.5
        last = td.recurrent(shape=(), domain=(t,))
        last[T - 1] = x[0, T - 1] * 3.0
        last[t] = x[0, t] * last[t + 1]
        return s[0:B, 0:T].sum() + last[0:T].sum()

    def ref(x, B, T):
        tot = 0.0
        for bb in range(B):
            s = x[bb, 0]
            tot += s
            for k in range(1, T):
                s = x[bb, k] if (k - 1) % 2 == 1 else s * x[bb, k] + 0.5
                tot += s
        lst = [None] * T
        lst[T - 1] = x[0, T - 1] * 3.0
        for k in range(T - 2, -1, -1):
            lst[k] = x[0, k] * lst[k + 1]
        return tot + sum(lst)

    prog = grad_program(build, inputs, ("b", "t"))
    for B, T in ((1, 1), (2, 4), (1, 5)):
        check(None, lambda x: ref(x, B, T), inputs, {"x": normal(B * T, B, T) * 0.8}, {"B": B, "T": T},
              program=prog)


@pytest.mark.parametrize("T", [1, 4])
def test_recurrent_leaf_gets_per_point_gradients(T):
    """With wrt a recurrent tensor, its cases are not differentiated through: ∇s[t] = ∂L/∂s[t]."""
    with td.Program() as p:
        (t, T_), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] + x[t + 1]
        loss = (s * s)[0:T_].sum()
        ds, dx = td.grad(loss, [s, x])
        p.output("s", s)
        p.output("ds", ds)
        p.output("dx", dx)
    x = normal(T, T)
    out = p.compile(backend="reference").run(bounds={"T": T}, inputs={"x": x})
    close(out["ds"], 2 * out["s"])
    assert np.all(out["dx"] == 0)      # x reaches the loss only through the leaf s
