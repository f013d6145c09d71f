"""Store layouts (lowering/storage.py's `choose_layout`): an array store whose
readers slice it along a step by moving or growing ranges (a K/V cache read as
`k[0:t + 1]`) keeps its buffer with that axis next to the value's last axis,
(B, H, T, hd) rather than (T, B, H, hd); on the jax backend the kernels and
host readers translate, so every value reads as in the logical order."""
import numpy as np
import pytest

import tidal as td
from tidal.lowering.storage import AxisPlan, StorePlan
from tidal.runtime.scheduled import compile_sdg
from tidal.runtime.scheduled.stores import ArrayStore

jnp = pytest.importorskip("jax.numpy")


def _plan(kind, axes, layout):
    return StorePlan(0, 0, kind, [AxisPlan(*a) for a in axes], True, layout=layout)


@pytest.mark.parametrize("kind,axes", [("block", [("t", "block")]),
                                       ("window", [("t", "window", 3)]),
                                       ("block", [("i", "ring", 2), ("t", "block")])])
def test_a_permuted_buffer_reads_and_writes_as_the_logical_one(kind, axes):
    shape = (2, 3, 4)
    d = len(axes)
    layout = tuple(range(d - 1)) + (d, d + 1, d - 1, d + 2)          # (.., B, H, t, hd)
    extents = [2, 7][-d:]
    plain = ArrayStore(_plan(kind, axes, None), extents, shape, np.float32, np)
    permuted = ArrayStore(_plan(kind, axes, layout), extents, shape, np.float32, jnp, pow2=True)
    assert permuted.layout == layout
    logical = tuple(permuted.caps) + shape
    assert permuted.buf.shape == tuple(logical[a] for a in layout)
    rng = np.random.default_rng(0)
    for point in np.ndindex(*extents):
        value = rng.normal(size=shape).astype(np.float32)
        plain.write(point, value)
        permuted.write(point, value)
        t = point[-1]
        lo = max(0, t - 2) if kind == "window" else 0
        coords = point[:-1] + (slice(lo, t + 1),)
        np.testing.assert_array_equal(np.asarray(permuted.read(coords)), plain.read(coords))
        np.testing.assert_array_equal(np.asarray(permuted.read(point)), value)
    if kind == "block":
        np.testing.assert_array_equal(permuted.result(extents), plain.result(extents))


def _attention(pattern: str, keys_last: bool = False, w: int = 3):
    """Attention over keys the program computes (so their store is its own)."""
    with td.Program("layout_attention") as p:
        (t, T), = p.dims("t")
        q = td.input("q", shape=(2, 3, 4), domain=(t,))
        x = td.input("x", shape=(2, 3, 4), domain=(t,))
        k, v = td.tanh(x), x * 0.5
        lo = {"causal": 0, "window": td.max(0, t - w + 1), "suffix": t}[pattern]
        hi = T if pattern == "suffix" else t + 1
        if keys_last:
            s = td.matmul(q.unsqueeze(2), k[lo:hi].permute(1, 2, 3, 0)).squeeze(2)       # (2, 3, n)
        else:
            s = td.matmul(k[lo:hi].permute(1, 2, 0, 3), q.unsqueeze(-1)).squeeze(-1)    # (2, 3, n)
        e = td.exp(s - s.amax(-1, keepdim=True))
        a = e / e.sum(-1, keepdim=True)
        p.output("o", td.matmul(a.unsqueeze(2), v[lo:hi].permute(1, 2, 0, 3)).squeeze(2))   # (2, 3, 4)
        p.output("k_now", k[t])
    return p


def _numpy_attention(q, x, pattern, w=3):
    k, v = np.tanh(x), x * 0.5
    T, out = len(q), []
    for t in range(T):
        lo, hi = {"causal": (0, t + 1), "window": (max(0, t - w + 1), t + 1), "suffix": (t, T)}[pattern]
        s = np.einsum("nbhd,bhd->bhn", k[lo:hi], q[t])
        e = np.exp(s - s.max(-1, keepdims=True))
        out.append(np.einsum("bhn,nbhd->bhd", e / e.sum(-1, keepdims=True), v[lo:hi]))
    return np.array(out), k


@pytest.mark.parametrize("pattern", ["causal", "window", "suffix"])
@pytest.mark.parametrize("keys_last", [False, True])
def test_attention_over_a_permuted_cache_matches_numpy(pattern, keys_last):
    p = _attention(pattern, keys_last)
    exe = p.compile(backend="jax")
    laid = [line for line in exe.stages["storage"].splitlines() if " layout " in line]
    assert len(laid) == 2, exe.stages["storage"]          # the keys' and the values' stores
    assert all("layout [1, 2, 0, 3]" in line for line in laid), laid
    plain = compile_sdg(exe.module, xla_loops=False)     # the loops in Python, kernel by kernel
    for T in (1, 2, 7, 40):
        rng = np.random.default_rng(T)
        inputs = {n: rng.normal(size=(T, 2, 3, 4)).astype(np.float32) for n in "qx"}
        o, k = _numpy_attention(inputs["q"], inputs["x"], pattern)
        for out in (exe.run(bounds={"T": T}, inputs=inputs), plain.run({"T": T}, inputs)):
            np.testing.assert_allclose(np.asarray(out["o"]), o, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(np.asarray(out["k_now"]), k, rtol=1e-6, atol=1e-6)


def test_a_permuted_cache_swapped_under_a_device_budget_reads_the_same():
    p = _attention("causal")
    T = 24
    rng = np.random.default_rng(1)
    inputs = {n: rng.normal(size=(T, 2, 3, 4)).astype(np.float32) for n in "qx"}
    free = p.compile(backend="jax")
    free.run(bounds={"T": T}, inputs=inputs)
    budget = free.memory_report().peak_bytes * 3 // 5
    exe = p.compile(backend="jax", device_memory=budget)
    out = exe.run(bounds={"T": T}, inputs=inputs)
    assert exe.memory_report().swapped, "the budget should make the run swap"
    np.testing.assert_allclose(np.asarray(out["o"]), _numpy_attention(inputs["q"], inputs["x"], "causal")[0],
                               rtol=1e-5, atol=1e-6)


def test_whole_range_readers_inputs_and_outputs_keep_the_logical_order():
    """A value read whole (x[0:T], a vectorized op's block) keeps (T, ...), as do
    the program's inputs (the caller's arrays) and rank-1 values."""
    with td.Program("no_layout") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2, 4), domain=(t,))
        y = td.tanh(x)
        z = td.tanh(x).sum(-1)                                    # rank 1 per point
        p.output("whole", y[0:T].sum(0))
        p.output("prefix", x[0:t + 1].sum(0))
        p.output("zs", z[0:t + 1].sum(0))
    exe = p.compile(backend="jax")
    assert " layout " not in exe.stages["storage"], exe.stages["storage"]
    T = 5
    xv = np.random.default_rng(2).normal(size=(T, 2, 4)).astype(np.float32)
    out = exe.run(bounds={"T": T}, inputs={"x": xv})
    np.testing.assert_allclose(np.asarray(out["whole"]), np.tanh(xv).sum(0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out["prefix"]), np.cumsum(xv, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(out["zs"]), np.cumsum(np.tanh(xv).sum(-1), 0), rtol=1e-5, atol=1e-5)


def test_a_strided_prefix_runs_at_capacities_that_cost_less_than_the_whole_buffer():
    """A prefix of a (B, H, T, hd) buffer is a strided slice, copied before the
    contraction reads it: capacities over half the buffer read it whole instead."""
    from tidal.runtime.scheduled.traced import capacities
    assert capacities(4608) == [128, 256, 512, 1024, 2048, 4096, 4608]
    assert capacities(4608, strided=True) == [128, 256, 512, 1024, 2048, 4608]
    assert capacities(4096, strided=True) == [128, 256, 512, 1024, 2048, 4096]
    assert capacities(64, strided=True) == [64]
    exe = _attention("causal").compile(backend="jax")
    T = 20
    rng = np.random.default_rng(3)
    inputs = {n: rng.normal(size=(T, 2, 3, 4)).astype(np.float32) for n in "qx"}
    exe.run(bounds={"T": T}, inputs=inputs)
    switches = [line for line in exe.compiled.source.splitlines() if "_capswitch(" in line]
    assert switches and all(line.rstrip().endswith("True)") or ", True); " in line for line in switches), switches
