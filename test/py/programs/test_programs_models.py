"""Models built from td.nn: causal and window multi-head attention over time,
RMSNorm + RoPE, and an embedding + MLP language model. Each forward and every
parameter gradient is checked against an independent JAX implementation."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tidal as td
from program_helpers import close, normal, param_value, run, value_and_grads


def jax_rope(x, pos, base=10000.0):
    d = x.shape[-1]
    inv = base ** (-jnp.arange(0, d, 2) / d)
    ang = pos * inv
    cos, sin = jnp.concatenate([jnp.cos(ang)] * 2), jnp.concatenate([jnp.sin(ang)] * 2)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + jnp.concatenate([-x2, x1], -1) * sin


def jax_mha(P, X, H, pattern, w, rope):
    """Reference multi-head attention over the rows of X (T, d) with explicit masks."""
    Tn, d = X.shape
    dh = d // H
    q, k, v = X @ P["q.weight"], X @ P["k.weight"], X @ P["v.weight"]
    q, k, v = (a.reshape(Tn, H, dh) for a in (q, k, v))
    if rope:
        pos = jnp.arange(Tn)[:, None, None]
        q = jnp.stack([jax_rope(q[s], s) for s in range(Tn)])
        k = jnp.stack([jax_rope(k[s], s) for s in range(Tn)])
        del pos
    s = jnp.einsum("thd,uhd->htu", q, k) / np.sqrt(dh)
    i, j = jnp.arange(Tn)[:, None], jnp.arange(Tn)[None, :]
    mask = (j <= i) if pattern == "causal" else ((j <= i) & (j > i - w))
    s = jnp.where(mask[None], s, -jnp.inf)
    a = jax.nn.softmax(s, -1)
    out = jnp.einsum("htu,uhd->thd", a, v).reshape(Tn, d)
    return out @ P["o.weight"]


@pytest.mark.parametrize("pattern,window,rope", [("causal", None, False), ("window", 2, False),
                                                 ("causal", None, True)])
def test_attention_over_time(pattern, window, rope):
    d, H = 4, 2
    with td.Program("attention") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(d,), domain=(t,))
        mha = td.nn.MultiHeadAttention(d, H, dim=t, pattern=pattern, window=window, rope=rope,
                                       rng=np.random.default_rng(5), name="mha")
        y = mha(x)
        loss = (y[0:T] * td.cos(y[0:T])).sum()
        params = mha.parameters()
        grads = td.grad(loss, params + [x])
        p.output("y", y)
        for k, g in enumerate(grads):
            p.output(f"g{k}", g)
    names = [n for n, _ in mha.named_parameters()]
    values = [param_value(p, f"mha.{n.split('.')[0]}.weight") for n in names]

    def ref(X, *ws):
        P = {n: w for n, w in zip(names, ws)}
        Y = jax_mha(P, X, H, pattern, window, rope)
        return (Y * jnp.cos(Y)).sum(), Y

    for T in (1, 2, 4):
        x = normal(T + 40, T, d)
        out = run(p, {"T": T}, {"x": x})
        _, grads = value_and_grads(lambda *a: ref(a[-1], *a[:-1])[0], *values, x)
        with jax.enable_x64(True):
            Y = np.asarray(ref(jnp.asarray(x, dtype=jnp.float64), *values)[1])
        close(out["y"], Y)
        for k, g in enumerate(grads):
            close(out[f"g{k}"], g)


def test_rmsnorm_and_rope():
    d = 4
    with td.Program("norm_rope") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2, d), domain=(t,))
        norm = td.nn.RMSNorm(d, eps=1e-5, name="norm")
        rope = td.nn.RoPE(d, base=100.0)
        y = rope(norm(x), t)
        loss = (y * y * td.arange(1, d + 1).astype("float32")).sum()[0:T].sum()
        dx, dw = td.grad(loss, [x, norm.weight])
        p.output("y", y)
        p.output("dx", dx)
        p.output("dw", dw)

    def ref(x, w):
        n = x / jnp.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * w
        y = jnp.stack([jax_rope(n[s], s, base=100.0) for s in range(x.shape[0])])
        return (y * y * jnp.arange(1, d + 1)).sum(), y

    for T in (1, 3):
        x = normal(T + 1, T, 2, d)
        out = run(p, {"T": T}, {"x": x})
        _, (dx, dw) = value_and_grads(lambda a, b: ref(a, b)[0], x, np.ones(d))
        with jax.enable_x64(True):
            Y = np.asarray(ref(jnp.asarray(x, dtype=jnp.float64), jnp.ones(d))[1])
        close(out["y"], Y)
        close(out["dx"], dx)
        close(out["dw"], dw)


def test_embedding_mlp_language_model():
    """Next-token prediction: tok[t] -> embedding -> MLP -> logits; cross-entropy with tok[t + 1]."""
    V, E = 5, 3
    with td.Program("lm") as p:
        (t, T), = p.dims("t")
        tok = td.input("tok", shape=(), dtype="int64", domain=(t,))
        emb = td.nn.Embedding(V, E, rng=np.random.default_rng(2), name="emb")
        mlp = td.nn.MLP([E, 6, V], activation="tanh", rng=np.random.default_rng(3), name="mlp")
        logits = mlp(emb(tok))
        logp = td.log_softmax(logits, -1)
        nll = -logp.index_select(0, tok[td.min(t + 1, T - 1)])
        loss = nll[0:T].mean()
        params = emb.parameters() + mlp.parameters()
        grads = td.grad(loss, params)
        p.output("loss", loss)
        for k, g in enumerate(grads):
            p.output(f"g{k}", g)
    names = [n for n, _ in emb.named_parameters()] + [n for n, _ in mlp.named_parameters()]
    pnames = ["emb.weight"] + [f"mlp.{k}.{w}" for k in (0, 1) for w in ("weight", "bias")]
    values = [param_value(p, n) for n in pnames]
    assert len(names) == len(values) == 5

    def ref(tok, Wemb, W0, b0, W1, b1):
        h = jnp.tanh(Wemb[tok] @ W0 + b0)
        lp = jax.nn.log_softmax(h @ W1 + b1, -1)
        nxt = jnp.concatenate([tok[1:], tok[-1:]])
        return -lp[jnp.arange(tok.shape[0]), nxt].mean()

    for T in (1, 3, 6):
        tok = np.random.default_rng(T).integers(0, V, size=T)
        out = run(p, {"T": T}, {"tok": tok})
        loss, grads = value_and_grads(lambda *ws: ref(tok, *ws), *values)
        close(out["loss"], loss)
        for k, g in enumerate(grads):
            close(out[f"g{k}"], g)
