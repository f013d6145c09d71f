"""Training loops in one program: parameters are recurrences over an iteration
dim i (W[0] = init, W[i + 1] = optimizer step on the gradient of iteration i),
episodes run over t inside each iteration. Checked against a JAX training loop
(jax.grad per iteration, the optimizer written out by hand). Plus a UDF
environment with external state driven by a policy."""
import jax
import jax.numpy as jnp
import numpy as np
from tidal.runtime.counter_random import random_draw
import pytest

import tidal as td
from program_helpers import close, normal, param_value, run, value_and_grads


def adam_steps(params, grads, state, it, lr, b1=0.9, b2=0.999, eps=1e-8):
    out = []
    for k, (w, g) in enumerate(zip(params, grads)):
        m, v = state.get(k, (0.0 * w, 0.0 * w))
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        state[k] = (m, v)
        out.append(w - lr * (m / (1 - b1 ** (it + 1))) / (np.sqrt(v / (1 - b2 ** (it + 1))) + eps))
    return out


def regression_program(hidden):
    with td.Program("regression") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(3,), domain=(t,))
        y = td.input("y", shape=(1,), domain=(t,))
        h = td.recurrent(shape=(hidden,), domain=(i, t))       # an RNN over the episode
        cell = td.nn.Linear(3, hidden, domain=(i,), rng=np.random.default_rng(1), name="cell")
        head = td.nn.Linear(hidden, 1, domain=(i,), rng=np.random.default_rng(2), name="head")
        h[i, 0] = td.tanh(cell(x[0]))
        h[i, t + 1] = td.tanh(cell(x[t + 1]) + h[i, t] * 0.5)
        err = ((head(h) - y) ** 2).sum()
        loss = err[i, 0:T].mean()                               # domain (i,)
        params = cell.parameters() + head.parameters()
        lr = 0.05 * 0.9 ** td.symbol(i).astype("float32")      # a schedule: an RT over i
        td.optim.Adam(params, lr=lr).step(td.grad(loss, params))
        p.output("loss", loss)
        p.output("head_w", head.weight)
    return p


def test_adam_regression_over_iterations_and_episode():
    p = regression_program(hidden=2)
    init = [param_value(p, n) for n in ("cell.weight", "cell.bias", "head.weight", "head.bias")]

    def loss_fn(x, y, cw, cb, hw, hb):
        h, hs = jnp.tanh(x[0] @ cw + cb), []
        hs.append(h)
        for k in range(1, x.shape[0]):
            h = jnp.tanh(x[k] @ cw + cb + h * 0.5)
            hs.append(h)
        return (((jnp.stack(hs) @ hw + hb) - y) ** 2).sum(-1).mean()

    for I, T in ((1, 1), (3, 2), (4, 4)):
        x, y = normal(T, T, 3), normal(T + 1, T, 1)
        out = run(p, {"I": I, "T": T}, {"x": x, "y": y})
        params, state, losses, head_w = list(init), {}, [], []
        for it in range(I):
            head_w.append(params[2])
            loss, grads = value_and_grads(lambda *ws: loss_fn(x, y, *ws), *params)
            losses.append(loss)
            params = adam_steps(params, grads, state, it, 0.05 * 0.9 ** it)
        close(out["loss"], losses)
        close(out["head_w"], np.stack(head_w), rtol=1e-4, atol=1e-5)
        if I > 2:
            assert out["loss"][-1] < out["loss"][0]


def test_sgd_momentum_with_backward_and_grad_attribute():
    """loss.backward() records .grad on the parameters; SGD(momentum) reads it in step()."""
    W0 = np.array([[0.5], [-0.3]], dtype=np.float32)
    with td.Program("sgd") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(2,), domain=(t,))
        W = td.nn.parameter("W", W0, domain=(i,))
        loss = ((x @ W - 1.0) ** 2).sum()[i, 0:T].sum()
        loss.backward()
        assert W.grad is not None and W.grad.domain == (i,)
        opt = td.optim.SGD([W], lr=0.05, momentum=0.9)
        opt.step()
        p.output("loss", loss)
        p.output("buf", opt.state[0]["momentum"])

    for I, T in ((1, 1), (4, 3)):
        x = normal(I + T, T, 2)
        out = run(p, {"I": I, "T": T}, {"x": x})
        w, buf, losses, bufs = W0.astype(np.float64), np.zeros((2, 1)), [], []
        for _ in range(I):
            bufs.append(buf)
            loss, (g,) = value_and_grads(lambda a: ((x @ a - 1.0) ** 2).sum(), w)
            losses.append(loss)
            buf = 0.9 * buf + g
            w = w - 0.05 * buf
        close(out["loss"], losses)
        close(out["buf"], np.stack(bufs))


def reinforce_program(seed=7, gamma=0.9, lr=0.1):
    """REINFORCE on a toy task: o[t + 1] = 0.8 o[t] + (a - 0.5) e; reward -|o|² + a * o0;
    actions sampled from the policy with td.rand (the same numbers in the test)."""
    with td.Program("reinforce") as p:
        (i, I), (t, T) = p.dims("i", "t")
        o0 = td.input("o0", shape=(2,))
        pi = td.nn.Linear(2, 2, domain=(i,), rng=np.random.default_rng(4), name="pi")
        o = td.recurrent(shape=(2,), domain=(i, t))
        logits = pi(o)
        logp = td.log_softmax(logits, -1)
        u = td.rand(domain=(i, t), seed=seed)
        a = u < td.exp(logp[..., 1])                                 # bool: not differentiable
        af = a.astype("float32")
        o[i, 0] = o0
        o[i, t + 1] = 0.8 * o[i, t] + (af[i, t] - 0.5) * td.constant(np.array([1.0, -0.5], np.float32))
        r = -(o * o).sum() + af * o[..., 0]
        g = r[i, t:T].discounted_sum(gamma)                     # returns: a suffix window
        lp_a = td.where(a, logp[..., 1], logp[..., 0])
        loss = -(lp_a * g)[i, 0:T].sum()                        # domain (i,)
        td.optim.Adam(pi.parameters(), lr=lr).step(td.grad(loss, pi.parameters()))
        p.output("loss", loss)
        p.output("ret", g[i, 0])
    return p


def test_reinforce_with_adam():
    p = reinforce_program()
    params = [param_value(p, "pi.weight"), param_value(p, "pi.bias")]
    o0 = np.array([0.6, -0.4], dtype=np.float32)
    E = np.array([1.0, -0.5])

    def episode(params, it, T):
        W, b = (np.asarray(v, np.float32) for v in params)
        o, obs, acts, rews = o0.astype(np.float32), [], [], []
        for k in range(T):
            z = o @ W + b
            lp = z - (np.log(np.exp(z - z.max()).sum()) + z.max())
            u = np.float32(random_draw(np, "uniform", 7, (it, k), ()))
            act = float(u < np.exp(lp[1]))
            obs.append(o)
            acts.append(act)
            rews.append(-(o * o).sum() + act * o[0])
            o = (0.8 * o + (act - 0.5) * E).astype(np.float32)
        ret = [sum(0.9 ** j * rews[k + j] for j in range(T - k)) for k in range(T)]
        return np.array(obs), np.array(acts), np.array(ret)

    def loss_fn(obs, acts, ret, W, b):
        lp = jax.nn.log_softmax(obs @ W + b, -1)
        lpa = jnp.where(acts > 0.5, lp[:, 1], lp[:, 0])
        return -(lpa * ret).sum()

    for I, T in ((1, 1), (3, 4)):
        out = run(p, {"I": I, "T": T}, {"o0": o0})
        ws, state, losses, rets = list(params), {}, [], []
        for it in range(I):
            obs, acts, ret = episode(ws, it, T)
            loss, grads = value_and_grads(lambda W, b: loss_fn(obs, acts, ret, W, b), *ws)
            losses.append(loss)
            rets.append(ret[0])
            ws = adam_steps(ws, grads, state, it, 0.1)
        close(out["ret"], rets)
        close(out["loss"], losses, rtol=1e-3, atol=1e-4)


class GridWorld:
    """An environment with external state: a walker on a line, reset at t = 0."""

    def __init__(self):
        self.pos, self.calls = 0.0, []

    def reset(self):
        self.pos = 2.0
        self.calls.append("reset")
        return np.array([self.pos], dtype=np.float32)

    def step(self, action):
        self.calls.append(float(action))
        self.pos += -1.0 if action > 0 else 1.0
        return np.array([self.pos], dtype=np.float32), np.float32(-abs(self.pos))


@pytest.mark.parametrize("T", [1, 3, 6])
def test_udf_environment_with_state(T):
    env = GridWorld()
    with td.Program("env") as p:
        (t, T_), = p.dims("t")
        obs = td.recurrent(shape=(1,), domain=(t,))
        obs[0] = td.udf(env.reset, [], shape=(1,), dtype="float32", name="env.reset")
        action = (obs[..., 0] > 0).astype("float32")              # a fixed policy
        nxt, rew = td.udf(env.step, [action], shapes=[(1,), ()], dtypes=["float32", "float32"],
                          name="env.step")
        obs[t + 1] = nxt
        p.output("obs", obs)
        p.output("ret", rew[0:T_].sum())
    out = p.compile(backend="reference").run(bounds={"T": T})
    pos, obs, total = 2.0, [], 0.0
    for _ in range(T):
        obs.append([pos])
        pos += -1.0 if pos > 0 else 1.0
        total += -abs(pos)
    close(out["obs"], obs)
    close(out["ret"], total)
    assert env.calls[0] == "reset" and len(env.calls) == T + 1
