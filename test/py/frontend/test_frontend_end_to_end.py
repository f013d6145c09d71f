"""End to end: trace, `p.compile(backend="reference")` (rt-to-sdg, then the
reference interpreter), `.run(bounds, inputs)`, compared with plain NumPy
implementations written here. Results follow docs/semantics.md (`rt.output`):
leading axes are the output's domain in program order; a per-point shape that
varies gives nested lists; a condition gives {point tuple: array}."""
import numpy as np
import pytest

import tidal as td

RNG = np.random.default_rng(0)


def close(a, b, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol)


def test_reference_program():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), dtype="float32", domain=(t,))
        s = td.recurrent(shape=(4,), dtype="float32", domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] * 0.5 + x[t + 1]
        w = x[td.max(0, t - 2):t + 1].sum(0)
        g = x[t:T].sum(0)
        c = x[0:t + 1].cumsum(0)[t]
        p.output("s", s); p.output("w", w); p.output("g", g); p.output("c", c)
    n = 7
    xs = RNG.standard_normal((n, 4)).astype(np.float32)
    out = p.compile(backend="reference").run(bounds={T: n}, inputs={"x": xs})
    s_ref = np.zeros((n, 4))
    s_ref[0] = xs[0]
    for k in range(1, n):
        s_ref[k] = 0.5 * s_ref[k - 1] + xs[k]
    close(out["s"], s_ref)
    close(out["w"], [xs[max(0, k - 2):k + 1].sum(0) for k in range(n)])
    close(out["g"], [xs[k:].sum(0) for k in range(n)])
    close(out["c"], [np.cumsum(xs[:k + 1], 0)[k] for k in range(n)])
    assert np.asarray(out["s"]).shape == (n, 4)


def test_bounds_by_name_and_by_symbol_agree():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        p.output("y", x * 2)
    exe = p.compile()
    xs = np.arange(5, dtype=np.float32)
    close(exe.run(bounds={"T": 5}, inputs={"x": xs})["y"], exe.run(bounds={T: 5}, inputs={"x": xs})["y"])


def test_rnn():
    W0 = RNG.standard_normal((3, 3)).astype(np.float32) / 2
    with td.Program("rnn") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        W = td.param("W", W0)
        h = td.recurrent(shape=(3,), domain=(t,))
        h[0] = td.tanh(x[0] @ W)
        h[t + 1] = td.tanh(x[t + 1] @ W + h[t])
        p.output("h", h)
    n = 6
    xs = RNG.standard_normal((n, 3)).astype(np.float32)
    out = p.compile().run(bounds={T: n}, inputs={"x": xs})
    ref, prev = [], None
    for k in range(n):
        prev = np.tanh(xs[k] @ W0) if prev is None else np.tanh(xs[k] @ W0 + prev)
        ref.append(prev)
    close(out["h"], ref)


def test_backward_recurrence():
    with td.Program("returns") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))
        v = td.recurrent(shape=(), domain=(t,))
        v[T - 1] = r[T - 1]
        v[t] = r[t] + 0.9 * v[t + 1]
        p.output("v", v)
    n = 8
    rs = RNG.standard_normal(n).astype(np.float32)
    ref = np.zeros(n)
    ref[-1] = rs[-1]
    for k in range(n - 2, -1, -1):
        ref[k] = rs[k] + 0.9 * ref[k + 1]
    close(p.compile().run(bounds={T: n}, inputs={"r": rs})["v"], ref)


def test_conditional_definitions_and_outputs():
    with td.Program("cond") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        y = td.recurrent(shape=(4,), domain=(t,))
        y[t % 5 == 0] = x * 2.0
        y[t + 1, t > 2] = y[t] + x[t + 1]
        y[t] = x
        p.output("y", y)
        p.output("y_mid", y, when=(t > 0) & (t < T - 1))
    n = 12
    xs = RNG.standard_normal((n, 4)).astype(np.float32)
    out = p.compile().run(bounds={T: n}, inputs={"x": xs})
    ref = np.zeros((n, 4))
    for k in range(n):
        if k % 5 == 0:
            ref[k] = 2 * xs[k]
        elif k - 1 > 2:
            ref[k] = ref[k - 1] + xs[k]
        else:
            ref[k] = xs[k]
    close(out["y"], ref)
    assert sorted(out["y_mid"]) == [(k,) for k in range(1, n - 1)]
    for (k,), value in out["y_mid"].items():
        close(value, ref[k])


def test_several_dimensions():
    with td.Program("multi") as p:
        (b, B), (i, I), (t, T) = p.dims("b", "i", "t")
        x = td.input("x", shape=(2,), domain=(b, i, t))
        lr = 0.5 ** td.symbol(i)
        o = td.recurrent(shape=(2,), domain=(b, i, t))
        o[b, i, 0] = x[b, i, 0]
        o[b, i, t + 1] = o[b, i, t] + x[:, :, t + 1] * lr.astype("float32")
        z = x[0] + x[b, 0]
        p.output("o", o); p.output("z", z); p.output("lr", lr)
    nb, ni, nt = 2, 3, 4
    xs = RNG.standard_normal((nb, ni, nt, 2)).astype(np.float32)
    out = p.compile().run(bounds={B: nb, I: ni, T: nt}, inputs={"x": xs})
    ref = np.zeros_like(xs, dtype=np.float64)
    for bb in range(nb):
        for ii in range(ni):
            ref[bb, ii, 0] = xs[bb, ii, 0]
            for tt in range(1, nt):
                ref[bb, ii, tt] = ref[bb, ii, tt - 1] + xs[bb, ii, tt] * 0.5 ** ii
    close(out["o"], ref)
    close(out["z"], xs[0][None, :, :, :] + xs[:, 0][:, None, :, :])
    close(out["lr"], 0.5 ** np.arange(ni))


def test_causal_and_windowed_attention():
    with td.Program("attn") as p:
        (t, T), = p.dims("t")
        q = td.input("q", shape=(4,), domain=(t,))
        k = td.input("k", shape=(4,), domain=(t,))
        causal = (q[t] @ k[0:t + 1].T).softmax(0)
        window = td.softmax(q @ k[td.max(0, t - 2):t + 1].T, dim=0)
        padded = td.pad(window, (2 - td.min(t, 2), 0), dim=0)
        p.output("causal", causal); p.output("window", window); p.output("padded", padded)
    n = 5
    qs, ks = (RNG.standard_normal((n, 4)).astype(np.float32) for _ in range(2))
    out = p.compile().run(bounds={T: n}, inputs={"q": qs, "k": ks})

    def softmax(v):
        e = np.exp(v - v.max())
        return e / e.sum()

    assert len(out["causal"]) == n and len(out["window"]) == n
    for j in range(n):
        close(out["causal"][j], softmax(ks[:j + 1] @ qs[j]))
        lo = max(0, j - 2)
        close(out["window"][j], softmax(ks[lo:j + 1] @ qs[j]))
        close(out["padded"][j], np.concatenate([np.zeros(2 - min(j, 2)), softmax(ks[lo:j + 1] @ qs[j])]))
    assert np.asarray(out["padded"]).shape == (n, 3)


def test_discounted_returns():
    with td.Program("disc") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))
        p.output("g", r[t:T].discounted_sum(0.9))
        p.output("n", r[t:td.min(t + 3, T)].discounted_sum(0.9))
    n = 9
    rs = RNG.standard_normal(n).astype(np.float32)
    out = p.compile().run(bounds={T: n}, inputs={"r": rs})
    close(out["g"], [sum(0.9 ** j * rs[k + j] for j in range(n - k)) for k in range(n)])
    close(out["n"], [sum(0.9 ** j * rs[k + j] for j in range(min(3, n - k))) for k in range(n)])


def test_udf_with_external_state():
    calls = []

    def env_step(action):
        calls.append(np.array(action))
        return action * 2, np.float32(len(calls))

    with td.Program("env") as p:
        (t, T), = p.dims("t")
        a = td.input("a", shape=(2,), domain=(t,))
        obs, count = td.udf(env_step, [a], shapes=[(2,), ()], dtypes=["float32", "float32"])
        p.output("obs", obs + 1); p.output("count", count)
    n = 4
    xs = RNG.standard_normal((n, 2)).astype(np.float32)
    out = p.compile().run(bounds={T: n}, inputs={"a": xs})
    assert len(calls) == n  # once per point
    close(out["obs"], xs * 2 + 1)
    assert sorted(np.asarray(out["count"]).tolist()) == [1.0, 2.0, 3.0, 4.0]


def test_random_draws_follow_the_documented_generator():
    with td.Program("rand") as p:
        (t, T), = p.dims("t")
        u = td.rand(3, domain=(t,))
        z = td.randn(2)
        p.output("u", u); p.output("z", z)
    out = p.compile().run(bounds={T: 3}, inputs={})

    from tidal.runtime.counter_random import random_draw
    for k in range(3):   # seeds in program order (0, 1, ...), drawn in float64 and cast
        np.testing.assert_array_equal(out["u"][k], random_draw(np, "uniform", 0, (k,), (3,)).astype(np.float32))
        assert 0 <= np.min(out["u"][k]) and np.max(out["u"][k]) < 1
    np.testing.assert_allclose(out["z"], random_draw(np, "normal", 1, (), (2,)).astype(np.float32), rtol=1e-6)


def test_ops_agree_with_numpy():
    with td.Program("ops") as p:
        (t, T), = p.dims("t")
        m = td.input("m", shape=(3, 4), domain=(t,))
        n = td.input("n", shape=(4,), dtype="int32", domain=(t,))
        outs = {
            "mean": m.mean(0), "max": m.max(1), "lse": m.logsumexp(1), "lsm": m.log_softmax(0),
            "div": n / 2, "idx": m[:, 1:3, ::2], "take": m[..., -1], "cat": td.cat([m, m * 2], 1),
            "where": td.where(m > 0, m, 0.0), "mm": m @ m.T, "flip": m.flip(1), "cummax": m.cummax(0),
            "gather": m.gather(1, td.zeros((3, 1), dtype="int64") + 2),
            "sel": m.index_select(1, td.arange(1, 3)), "ar": td.arange(t, T),
        }
        for name, v in outs.items():
            p.output(name, v)
    n_ = 3
    ms = RNG.standard_normal((n_, 3, 4)).astype(np.float32)
    ns = RNG.integers(-5, 5, (n_, 4)).astype(np.int32)
    out = p.compile().run(bounds={T: n_}, inputs={"m": ms, "n": ns})
    close(out["mean"], ms.mean(1))
    close(out["max"], ms.max(2))
    close(out["lse"], np.log(np.exp(ms).sum(2)))
    close(out["lsm"], ms - np.log(np.exp(ms).sum(1, keepdims=True)))
    close(out["div"], ns / 2)
    assert np.asarray(out["div"]).dtype == np.float32   # the default float, as in PyTorch and JAX
    close(out["idx"], ms[:, 1:3, ::2])
    close(out["take"], ms[..., -1])
    close(out["cat"], np.concatenate([ms, ms * 2], 2))
    close(out["where"], np.where(ms > 0, ms, 0))
    close(out["mm"], ms @ ms.transpose(0, 2, 1))
    close(out["flip"], ms[:, :, ::-1])
    close(out["cummax"], np.maximum.accumulate(ms, 1))
    close(out["gather"], ms[:, :, 2:3])
    close(out["sel"], ms[:, :, 1:3])
    for k in range(n_):
        np.testing.assert_array_equal(out["ar"][k], np.arange(k, n_))


def test_run_validates_inputs_before_running():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        p.output("y", x + 1)
    exe = p.compile()
    with pytest.raises(td.TidalError, match="expected \\(5, 4\\)"):
        exe.run(bounds={T: 5}, inputs={"x": np.zeros((4, 4), np.float32)})


def test_indexing_patterns():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        r = td.input("r", shape=(t + 1,), domain=(t,))        # ragged: a nested list
        W = td.param("W", np.ones(2, np.float32), domain=(t,))
        p.output("first", td.where(t > 0, x, 0.0))           # a symbolic condition as a value
        p.output("even", x[0:T:2])                            # stepped temporal slice, domain ()
        p.output("lift", x[0:T].cumsum(0)[t])                 # spatial index by a step adds t
        p.output("ar", td.arange(T)[t])
        p.output("rs", r.sum() + W.sum())
        p.output("rr", r * 2)                                 # ragged output: a nested list
        p.output("blk", x[t // 2 * 2:td.min(t // 2 * 2 + 2, T)].sum(0))  # block access
    n = 5
    xs = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    rs = [np.arange(k + 1, dtype=np.float32) for k in range(n)]
    out = p.compile().run(bounds={T: n}, inputs={"x": xs, "r": rs})
    close(out["first"], np.where(np.arange(n)[:, None] > 0, xs, 0))
    close(out["even"], xs[0::2])
    close(out["lift"], np.cumsum(xs, 0))
    np.testing.assert_array_equal(out["ar"], np.arange(n))
    close(out["rs"], [a.sum() + 2 for a in rs])
    assert len(out["rr"]) == n
    for k in range(n):
        close(out["rr"][k], rs[k] * 2)
    close(out["blk"], [xs[k // 2 * 2:k // 2 * 2 + 2].sum(0) for k in range(n)])


def test_sdg_text():
    with td.Program("g") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] + x[t + 1]
        p.output("s", s)
    text = p.sdg()
    assert "sdg.graph @g dims [t < T]" in text and "sdg.merge" in text and "rt." not in text


def test_a_tensor_inside_a_subscript_selects_spatial_rows():
    """x[t, idx] and x[t, :, idx] gather as NumPy does; a boolean mask gets the
    error that says so (an `Ellipsis in items` test called the tensor's ==, and
    both failed with "dtype object is not supported")."""
    X = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4, 5), domain=(t,))
        idx = td.constant(np.array([3, 1], np.int64))
        p.output("a", x[t, idx])
        p.output("b", x[t, ..., idx])
        with pytest.raises(td.TidalError, match="boolean mask indexing is not supported"):
            x[t, x[t] > 0]
    for backend in ("reference", "jax"):
        out = p.compile(backend=backend).run(bounds={T: 3}, inputs={"x": X})
        np.testing.assert_array_equal(out["a"], X[:, [3, 1]])
        np.testing.assert_array_equal(out["b"], X[:, :, [3, 1]])
