"""Recurrences: the RNN of the brief (gradients through time), an RNN over (b, t),
a GRU cell over time, a backward recurrence, conditional definitions, and an
exponential moving average. Forward values are checked against NumPy loops,
gradients against jax.grad of an unrolled equivalent."""
import jax.numpy as jnp
import numpy as np
import pytest

import tidal as td
from program_helpers import close, normal, param_value, run, value_and_grads

BOUNDS = [1, 2, 5]


def rnn_program():
    with td.Program("rnn_grad") as q:                              # gradients through time
        (t, T), = q.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        W = td.param("W", np.eye(3, dtype=np.float32))            # domain (): constant across t
        h = td.recurrent(shape=(3,), domain=(t,))
        h[0] = td.tanh(x[0] @ W)
        h[t + 1] = td.tanh(x[t + 1] @ W + h[t])
        loss = (h[0:T] ** 2).sum()
        (dW,) = td.grad(loss, [W])
        q.output("loss", loss)
        q.output("dW", dW)
        q.output("h", h)
    return q


def jax_rnn(W, x):
    h, hs = jnp.tanh(x[0] @ W), []
    hs.append(h)
    for k in range(1, x.shape[0]):
        h = jnp.tanh(x[k] @ W + h)
        hs.append(h)
    return (jnp.stack(hs) ** 2).sum()


@pytest.mark.parametrize("T", BOUNDS + [7])
def test_rnn_gradients_through_time(T):
    q = rnn_program()
    x = normal(T, T, 3)
    out = run(q, {"T": T}, {"x": x})
    loss, (dW,) = value_and_grads(lambda W: jax_rnn(W, x), np.eye(3))
    close(out["loss"], loss)
    close(out["dW"], dW)
    h = np.zeros((T, 3))
    h[0] = np.tanh(x[0])
    for k in range(1, T):
        h[k] = np.tanh(x[k] + h[k - 1])
    close(out["h"], h)


def test_rnn_over_batch_and_time():
    """Domain (b, t): one recurrence per sample; the loss reads the last step of every sample."""
    W0 = normal(11, 3, 3) * 0.5
    with td.Program("rnn_bt") as p:
        (b, B), (t, T) = p.dims("b", "t")
        x = td.input("x", shape=(3,), domain=(b, t))
        W = td.param("W", W0)
        U = td.param("U", np.eye(3, dtype=np.float32) * 0.5)
        h = td.recurrent(shape=(3,), domain=(b, t))
        h[b, 0] = td.tanh(x[b, 0] @ W)
        h[b, t + 1] = td.tanh(x[b, t + 1] @ W + h[b, t] @ U)
        loss = h[0:B, T - 1].sum() + (h[0:B, 0:T] ** 2).mean()
        dW, dU, dx = td.grad(loss, [W, U, x])
        for n, v in (("loss", loss), ("dW", dW), ("dU", dU), ("dx", dx)):
            p.output(n, v)

    def ref(W, U, x):
        Bn, Tn = x.shape[:2]
        h = jnp.tanh(x[:, 0] @ W)
        hs = [h]
        for k in range(1, Tn):
            h = jnp.tanh(x[:, k] @ W + h @ U)
            hs.append(h)
        H = jnp.stack(hs, 1)
        return H[:, -1].sum() + (H ** 2).mean()

    for B, T in ((1, 1), (2, 3), (3, 4)):
        x = normal(B * 10 + T, B, T, 3)
        out = run(p, {"B": B, "T": T}, {"x": x})
        loss, grads = value_and_grads(ref, W0, np.eye(3) * 0.5, x)
        close(out["loss"], loss)
        for name, g in zip(("dW", "dU", "dx"), grads):
            close(out[name], g)


def gru_program(rng):
    with td.Program("gru") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        params = {n: td.param(n, rng.normal(scale=0.6, size=s).astype(np.float32))
                  for n, s in (("Wz", (2, 3)), ("Uz", (3, 3)), ("Wr", (2, 3)), ("Ur", (3, 3)),
                               ("Wn", (2, 3)), ("Un", (3, 3)), ("bn", (3,)))}

        def cell(xt, h):
            z = td.sigmoid(xt @ params["Wz"] + h @ params["Uz"])
            r = td.sigmoid(xt @ params["Wr"] + h @ params["Ur"])
            n = td.tanh(xt @ params["Wn"] + r * (h @ params["Un"]) + params["bn"])
            return (1 - z) * n + z * h

        h = td.recurrent(shape=(3,), domain=(t,))
        h[0] = cell(x[0], td.zeros(3))
        h[t + 1] = cell(x[t + 1], h[t])
        loss = (h[0:T] * td.arange(1, T + 1).astype("float32")[:, None]).sum()
        grads = td.grad(loss, list(params.values()))
        p.output("h", h)
        p.output("loss", loss)
        for n, g in zip(params, grads):
            p.output("d" + n, g)
    return p, list(params)


def test_gru_cell_over_time():
    p, names = gru_program(np.random.default_rng(3))
    values = [param_value(p, n) for n in names]

    def ref(x, *ps):
        P = dict(zip(names, ps))
        h, hs = jnp.zeros(3), []
        for k in range(x.shape[0]):
            z = 1 / (1 + jnp.exp(-(x[k] @ P["Wz"] + h @ P["Uz"])))
            r = 1 / (1 + jnp.exp(-(x[k] @ P["Wr"] + h @ P["Ur"])))
            n = jnp.tanh(x[k] @ P["Wn"] + r * (h @ P["Un"]) + P["bn"])
            h = (1 - z) * n + z * h
            hs.append(h)
        H = jnp.stack(hs)
        return (H * jnp.arange(1, x.shape[0] + 1)[:, None]).sum()

    for T in BOUNDS:
        x = normal(T + 20, T, 2)
        out = run(p, {"T": T}, {"x": x})
        loss, grads = value_and_grads(lambda *ps: ref(x, *ps), *values)
        close(out["loss"], loss)
        for n, g in zip(names, grads):
            close(out["d" + n], g)


def test_backward_recurrence_returns():
    """v[T - 1] = r[T - 1]; v[t] = r[t] + γ v[t + 1]: its gradient is a forward recurrence."""
    with td.Program("backward") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))
        v = td.recurrent(shape=(), domain=(t,))
        v[T - 1] = r[T - 1]
        v[t] = r[t] + 0.9 * v[t + 1]
        w = td.arange(T).astype("float32") - 1.5
        loss = (v[0:T] * w).sum() + (v[0:T] ** 2).sum() * 0.1
        (dr,) = td.grad(loss, [r])
        p.output("v", v)
        p.output("dr", dr)

    def ref(r):
        Tn = r.shape[0]
        vs = [None] * Tn
        vs[-1] = r[-1]
        for k in range(Tn - 2, -1, -1):
            vs[k] = r[k] + 0.9 * vs[k + 1]
        V = jnp.stack(vs)
        return (V * (jnp.arange(Tn) - 1.5)).sum() + (V ** 2).sum() * 0.1

    for T in BOUNDS:
        r = normal(T, T)
        out = run(p, {"T": T}, {"r": r})
        expected = [sum(0.9 ** j * r[k + j] for j in range(T - k)) for k in range(T)]
        close(out["v"], expected)
        _, (dr,) = value_and_grads(ref, r)
        close(out["dr"], dr)


def test_conditional_definitions():
    """y resets to x every third step and accumulates otherwise; z doubles at t % 5 == 0."""
    with td.Program("conditional") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        y = td.recurrent(shape=(2,), domain=(t,))
        y[0] = x[0]
        y[t + 1, (t + 1) % 3 == 0] = x[t + 1] * 2.0
        y[t + 1] = y[t] * 0.5 + x[t + 1]
        z = td.recurrent(shape=(2,), domain=(t,))
        z[t % 5 == 0] = y * y
        z[t] = td.sin(y)
        loss = z[0:T].sum()
        (dx,) = td.grad(loss, [x])
        p.output("y", y)
        p.output("loss", loss)
        p.output("dx", dx)

    def ref(x):
        ys = [x[0]]
        for k in range(1, x.shape[0]):
            ys.append(x[k] * 2.0 if k % 3 == 0 else ys[-1] * 0.5 + x[k])
        zs = [yk * yk if k % 5 == 0 else jnp.sin(yk) for k, yk in enumerate(ys)]
        return jnp.stack(zs).sum(), jnp.stack(ys)

    for T in (1, 4, 7):
        x = normal(T + 5, T, 2)
        out = run(p, {"T": T}, {"x": x})
        loss, (dx,) = value_and_grads(lambda a: ref(a)[0], x)
        close(out["loss"], loss)
        close(out["dx"], dx)
        close(out["y"], np.asarray(ref(x.astype(np.float64))[1]))


def test_moving_average_and_shift():
    """ema[t] = 0.8 ema[t - 1] + 0.2 x[t], plus a read two steps back (clamped at 0)."""
    with td.Program("ema") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        ema = td.recurrent(shape=(), domain=(t,))
        ema[0] = x[0]
        ema[t + 1] = 0.8 * ema[t] + 0.2 * x[t + 1]
        lag = x[td.max(0, t - 2)]
        loss = ((ema - lag) ** 2)[0:T].sum()
        (dx,) = td.grad(loss, [x])
        p.output("ema", ema)
        p.output("dx", dx)

    def ref(x):
        e, es = x[0], [x[0]]
        for k in range(1, x.shape[0]):
            e = 0.8 * e + 0.2 * x[k]
            es.append(e)
        lag = jnp.stack([x[max(0, k - 2)] for k in range(x.shape[0])])
        return ((jnp.stack(es) - lag) ** 2).sum()

    for T in BOUNDS:
        x = normal(T + 3, T)
        out = run(p, {"T": T}, {"x": x})
        _, (dx,) = value_and_grads(ref, x)
        close(out["dx"], dx)
