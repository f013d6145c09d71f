"""Temporal windows: Monte-Carlo returns (suffix `t:T`), n-step returns
(`t:min(t + n, T)`), a prefix cumsum (`0:t + 1`), a causal moving window
(`max(0, t - w + 1):t + 1`) and constant-indexed reads (`0:T`, `0`, `T - 1`).
Values against NumPy, gradients against jax.grad of the unrolled program."""
import jax.numpy as jnp
import numpy as np
import pytest

import tidal as td
from program_helpers import close, normal, run, value_and_grads

GAMMA, N = 0.9, 3


def test_monte_carlo_and_n_step_returns():
    with td.Program("returns") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))
        mc = r[t:T].discounted_sum(GAMMA)
        nstep = r[t:td.min(t + N, T)].discounted_sum(GAMMA)
        value = td.input("value", shape=(), domain=(t,))
        loss = ((mc - value) ** 2 + (nstep - value) ** 2 * 0.5)[0:T].mean()
        dr, dv = td.grad(loss, [r, value])
        for n, x in (("mc", mc), ("nstep", nstep), ("loss", loss), ("dr", dr), ("dv", dv)):
            p.output(n, x)

    def ref(r, v):
        Tn = r.shape[0]
        mc = jnp.stack([sum(GAMMA ** j * r[k + j] for j in range(Tn - k)) for k in range(Tn)])
        ns = jnp.stack([sum(GAMMA ** j * r[k + j] for j in range(min(N, Tn - k))) for k in range(Tn)])
        return ((mc - v) ** 2 + (ns - v) ** 2 * 0.5).mean(), mc, ns

    for T in (1, 2, 4, 6):
        r, v = normal(T, T), normal(T + 9, T)
        out = run(p, {"T": T}, {"r": r, "value": v})
        loss, (dr, dv) = value_and_grads(lambda a, b: ref(a, b)[0], r, v)
        _, mc, ns = ref(r.astype(np.float64), v.astype(np.float64))
        close(out["mc"], mc)
        close(out["nstep"], ns)
        close(out["loss"], loss)
        close(out["dr"], dr)
        close(out["dv"], dv)


def test_prefix_cumsum():
    """y[t] = x[0:t + 1].cumsum(0)[t] (a prefix, spatially indexed with t) and a prefix max."""
    with td.Program("prefix") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        y = x[0:t + 1].cumsum(0)[t]
        m = x[0:t + 1].amax(0)
        loss = (td.sin(y) + m * 0.5)[0:T].sum()
        (dx,) = td.grad(loss, [x])
        p.output("y", y)
        p.output("dx", dx)

    def ref(x):
        Tn = x.shape[0]
        y = jnp.cumsum(x, 0)
        m = jnp.stack([x[:k + 1].max(0) for k in range(Tn)])
        return (jnp.sin(y) + m * 0.5).sum()

    for T in (1, 3, 6):
        x = normal(T, T, 2)
        out = run(p, {"T": T}, {"x": x})
        close(out["y"], np.cumsum(x, 0))
        _, (dx,) = value_and_grads(ref, x)
        close(out["dx"], dx)


@pytest.mark.parametrize("w", [1, 3])
def test_causal_window(w):
    """A learned causal convolution: y[t] = Σ_k K[k] * x[t - k] over the last w steps."""
    K0 = np.linspace(0.5, -0.5, w).astype(np.float32)
    with td.Program("window") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        K = td.param("K", K0)
        win = x[td.max(0, t - w + 1):t + 1]                    # (min(t, w - 1) + 1,)
        n = win.shape[0]
        taps = td.flip(K, 0).slice(0, w - n, w)                 # the last n taps, oldest first
        y = td.tanh((win * taps).sum())
        loss = ((y - 0.3) ** 2)[0:T].sum()
        dx, dK = td.grad(loss, [x, K])
        p.output("y", y)
        p.output("dx", dx)
        p.output("dK", dK)

    def ref(x, K):
        Tn = x.shape[0]
        ys = []
        for k in range(Tn):
            ys.append(jnp.tanh(sum(K[j] * x[k - j] for j in range(w) if k - j >= 0)))
        return ((jnp.stack(ys) - 0.3) ** 2).sum()

    for T in (1, 2, 5):
        x = normal(T + w, T)
        out = run(p, {"T": T}, {"x": x})
        _, (dx, dK) = value_and_grads(ref, x, K0)
        close(out["dx"], dx)
        close(out["dK"], dK)


def test_constant_indexed_reads():
    """y = f(x[0:T]) has no t; ∇x[t] is recovered by taking position t (and x[0], x[T - 1])."""
    with td.Program("constant") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        allx = x[0:T]                                          # (T, 3), domain ()
        z = td.softmax(allx.sum(1), 0)                         # softmax over time
        loss = (z * td.arange(T).astype("float32")).sum() + (x[0] * x[T - 1]).sum()
        (dx,) = td.grad(loss, [x])
        p.output("loss", loss)
        p.output("dx", dx)

    def ref(x):
        z = jnp.exp(x.sum(1)) / jnp.exp(x.sum(1)).sum()
        return (z * jnp.arange(x.shape[0])).sum() + (x[0] * x[-1]).sum()

    for T in (1, 2, 5):
        x = normal(T * 3, T, 3)
        out = run(p, {"T": T}, {"x": x})
        loss, (dx,) = value_and_grads(ref, x)
        close(out["loss"], loss)
        close(out["dx"], dx)


def test_strided_and_every_other_step():
    """A constant stepped slice x[0:T:2] and a coarse read x[t // 2]."""
    with td.Program("strided") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        even = x[0:T:2]
        coarse = x[t // 2]
        loss = (even ** 3).sum() + (coarse * td.symbol(t).astype("float32"))[0:T].sum()
        (dx,) = td.grad(loss, [x])
        p.output("dx", dx)

    def ref(x):
        Tn = x.shape[0]
        return (x[0::2] ** 3).sum() + sum(x[k // 2] * k for k in range(Tn))

    for T in (1, 4, 5):
        x = normal(T, T)
        out = run(p, {"T": T}, {"x": x})
        _, (dx,) = value_and_grads(ref, x)
        close(out["dx"], dx)
