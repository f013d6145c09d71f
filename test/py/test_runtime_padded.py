"""Padded values (runtime/scheduled/padded.py): a value whose size varies with
the point (attention scores over `k[0:t + 1]`) runs on the device at a
power-of-two capacity with its valid length, so its kernels compile once per
capacity (O(log T)), not once per t, and give the reference's results.
"""
import math

import numpy as np
import pytest

import tidal as td
from tidal.runtime.reference import EvaluationError
from tidal.runtime.scheduled import compile_sdg


def attention(pattern: str, w: int = 3):
    with td.Program("padded_attention") as p:
        (t, T), = p.dims("t")
        q = td.input("q", shape=(2, 4), domain=(t,))
        k = td.input("k", shape=(2, 4), domain=(t,))
        v = td.input("v", shape=(2, 4), domain=(t,))
        lo = 0 if pattern == "causal" else td.max(0, t - w + 1)
        keys = k[lo:t + 1].permute(1, 0, 2)                       # (2, n, 4)
        vals = v[lo:t + 1].permute(1, 0, 2)
        scores = td.matmul(keys, q.unsqueeze(-1)).squeeze(-1) * 0.5   # (2, n)
        e = td.exp(scores - scores.amax(-1, keepdim=True))
        att = e / e.sum(-1, keepdim=True)
        p.output("o", td.matmul(att.unsqueeze(1), vals).squeeze(1))  # (2, 4)
        p.output("m", scores.amax(-1))
    return p


def numpy_attention(q, k, v, pattern, w=3):
    out, mx = [], []
    for t in range(len(q)):
        lo = 0 if pattern == "causal" else max(0, t - w + 1)
        keys, vals = k[lo:t + 1].transpose(1, 0, 2), v[lo:t + 1].transpose(1, 0, 2)
        s = np.einsum("hnd,hd->hn", keys, q[t]) * 0.5
        e = np.exp(s - s.max(-1, keepdims=True))
        att = e / e.sum(-1, keepdims=True)
        out.append(np.einsum("hn,hnd->hd", att, vals))
        mx.append(s.max(-1))
    return np.array(out), np.array(mx)


def inputs(T, seed=0):
    rng = np.random.default_rng(seed)
    return {n: rng.normal(size=(T, 2, 4)).astype(np.float32) for n in "qkv"}


@pytest.mark.parametrize("pattern", ["causal", "window"])
@pytest.mark.parametrize("backend", ["reference", "numpy", "jax"])
def test_attention_over_a_growing_prefix_matches_numpy(pattern, backend):
    exe = attention(pattern).compile(backend=backend)
    for T in (1, 2, 5, 9):
        x = inputs(T, seed=T)
        out = exe.run(bounds={"T": T}, inputs=x)
        o, m = numpy_attention(x["q"], x["k"], x["v"], pattern)
        np.testing.assert_allclose(np.asarray(out["o"]), o, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(out["m"]), m, rtol=1e-5, atol=1e-6)


def test_padded_kernels_compile_once_per_capacity_not_once_per_step():
    exe = attention("causal").compile(backend="jax", passes=("sdg-dce",))   # one kernel per op
    T = 40
    exe.run(bounds={"T": T}, inputs=inputs(T))
    counts = exe.compiled._compile_counts
    padded = [f"padded_attention_K{k}" for k in exe.compiled.padded_nodes]
    assert len(padded) >= 6, exe.compiled.source        # the scores and softmax ops run padded
    capacities = math.ceil(math.log2(T)) + 1            # 1, 2, 4, ..., 64
    for name in padded:
        assert counts.get(name, 0) <= capacities, (name, counts)
    assert sum(counts.values()) <= 2 * capacities * len(padded) + 20, counts
    stats = exe.stats()
    assert stats["host_ops"] == 0, exe.compiled.source   # nothing of the attention runs on the host


def test_the_padded_chain_fuses_into_one_island_kernel():
    """With sdg-fuse (the default) the scores-softmax-values chain over the
    growing prefix is one padded island: a handful of launches per step,
    each compiled once per capacity, with the reference's results (above)."""
    exe = attention("causal").compile(backend="jax")
    T = 40
    exe.run(bounds={"T": T}, inputs=inputs(T))
    c = exe.compiled
    islands = [k for k in c.padded_nodes if c.graph.nodes[k].name == "sdg.island"]
    assert islands, c.source
    body = " ".join(c.graph.nodes[k].label for k in islands)
    for op in ("matmul", "reduce max", "unary exp", "reduce sum", "binary div"):
        assert op in body, body
    stats = exe.stats()
    assert stats["launches"] <= 6 * T and stats["host_ops"] == 0, (stats, c.source)
    capacities = math.ceil(math.log2(T)) + 1
    for k in islands:
        assert c._compile_counts.get(f"padded_attention_K{k}", 0) <= capacities, c._compile_counts


@pytest.mark.parametrize("pattern", ["causal", "window"])
def test_the_islands_read_the_cache_through_slices_no_permute_launches(pattern):
    """sdg-fuse lets an island read an operand through a unit-step slice, so
    the keys' and values' permutes fuse into the attention islands (XLA folds
    them into the contraction) instead of materializing a transposed copy of
    the cache at every step: 3 launches per step here."""
    exe = attention(pattern).compile(backend="jax")
    T = 40
    exe.run(bounds={"T": T}, inputs=inputs(T))
    c = exe.compiled
    islands = [n for n in c.graph.nodes if n.name == "sdg.island"]
    assert not [n for n in c.graph.nodes if n.name == "sdg.permute"], c.source
    sliced = {c.graph.nodes[e.source].attrs.get("name") for n in islands for e in n.edges if ":" in e.dep_text}
    assert sliced == {'"k"', '"v"'}, sliced
    if pattern == "causal":   # the scores (%4), read by two islands, are a padded value kept in a
        # store between them, which needs a static capacity in an XLA loop: the Python loop runs
        assert exe.stats()["launches"] == 3 * T, exe.stats()
        assert set(c._gen.untraced.values()) == {"a padded value with no static capacity"}, c._gen.untraced
    else:                     # a window of 3 keys: the loop runs inside XLA (traced.py)
        assert exe.stats()["xla_loops"] >= 1 and exe.stats()["launches"] <= 3, exe.stats()
    plain = compile_sdg(exe.module, xla_loops=False)
    plain.run({"T": T}, inputs(T))
    assert plain.stats()["launches"] == 3 * T, plain.stats()


def transposed_keys(pattern: str, w: int = 3):
    """q @ K^T as users write it: the permute makes the keys' last axis the
    contracted one (the jax runtime contracts along it without the transpose)."""
    with td.Program("transposed_keys") as p:
        (t, T), = p.dims("t")
        q = td.input("q", shape=(2, 4), domain=(t,))
        k = td.input("k", shape=(2, 4), domain=(t,))
        lo = 0 if pattern == "causal" else td.max(0, t - w + 1)
        kt = k[lo:t + 1].permute(1, 2, 0)                              # (2, 4, n)
        s = td.matmul(q.unsqueeze(1), kt).squeeze(1)                    # (2, n)
        p.output("y", td.matmul(td.exp(s - s.amax(-1, keepdim=True)).unsqueeze(1), kt.permute(0, 2, 1)))
    return p


@pytest.mark.parametrize("pattern", ["causal", "window"])
def test_q_times_transposed_keys_matches_numpy(pattern, monkeypatch):
    """... and the jax island runs q @ K^T as the row-wise contraction."""
    from tidal.runtime.scheduled import opdecode
    taken = []
    fast = opdecode._transposed_matmul
    monkeypatch.setattr(opdecode, "_transposed_matmul", lambda *a: taken.append(fast(*a)) or taken[-1])
    T = 9
    x = inputs(T, seed=3)
    expected = []
    for t in range(T):
        lo = 0 if pattern == "causal" else max(0, t - 2)
        kt = x["k"][lo:t + 1].transpose(1, 2, 0)
        s = np.einsum("hd,hdn->hn", x["q"][t], kt)
        e = np.exp(s - s.max(-1, keepdims=True))
        expected.append(np.einsum("hn,hnd->hd", e, kt.transpose(0, 2, 1))[:, None, :])
    for backend in ("reference", "numpy", "jax"):
        out = transposed_keys(pattern).compile(backend=backend).run(bounds={"T": T}, inputs={"q": x["q"], "k": x["k"]})
        np.testing.assert_allclose(np.asarray(out["y"]), np.array(expected), rtol=1e-5, atol=1e-5, err_msg=backend)
    assert any(r is not None for r in taken), taken


def test_an_empty_padded_max_is_an_error_on_every_backend():
    with td.Program("padded_empty") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        p.output("m", (x[0:t] * 2.0).amax(0))          # empty at t = 0
    for backend in ("reference", "numpy", "jax"):
        with pytest.raises(EvaluationError, match="empty"):
            p.compile(backend=backend).run(bounds={"T": 3}, inputs={"x": np.arange(3, dtype=np.float32)})


def test_an_empty_max_inside_a_padded_island_is_an_error_at_its_line():
    with td.Program("padded_empty_island") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        y = td.exp(x[0:t] * 2.0)
        p.output("m", (y + 1.0).amax(0))                # empty at t = 0
    line = next(n for n, text in enumerate(open(__file__), 1) if "(y + 1.0).amax(0))" in text and "p.output" in text)
    exe = p.compile(backend="jax")
    assert any(exe.compiled.graph.nodes[k].name == "sdg.island" for k in exe.compiled.padded_nodes)
    for backend in ("reference", "numpy", "jax"):
        with pytest.raises(EvaluationError, match="empty") as e:
            p.compile(backend=backend).run(bounds={"T": 3}, inputs={"x": np.arange(3, dtype=np.float32)})
        assert f":{line}:" in str(e.value), (backend, str(e.value))


def test_a_padded_sum_over_an_empty_prefix_is_zero():
    with td.Program("padded_sum") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        p.output("s", (x[0:t] * 2.0).sum(0))
    x = np.arange(1, 6, dtype=np.float32)
    expected = [2 * x[:t].sum() for t in range(5)]
    for backend in ("reference", "numpy", "jax"):
        out = p.compile(backend=backend).run(bounds={"T": 5}, inputs={"x": x})
        np.testing.assert_allclose(np.asarray(out["s"]), expected)
