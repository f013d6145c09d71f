"""Loops inside XLA (runtime/scheduled/traced.py): an `scf.for` whose body JAX
can trace runs as one `lax.fori_loop`. Each test checks that the loop was
taken (`xla_loops`, launches) and that the values equal a plain NumPy loop
and the numpy backend; the fallback to the Python loop is tested by making
a trace fail."""
import numpy as np
import pytest

import tidal as td
from tidal.runtime.counter_random import random_draw

RNG = np.random.default_rng(7)


def rnn(d=4):
    with td.Program("rnn") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(d,), domain=(t,))
        W = td.input("W", shape=(d, d))
        h = td.recurrent(shape=(d,), domain=(t,))
        h[0] = td.tanh(x[0] @ W)
        h[t + 1] = td.tanh(h[t] @ W + x[t + 1])
        p.output("h", h)
    return p


def rnn_numpy(x, W):
    h = [np.tanh(x[0] @ W)]
    for k in range(1, len(x)):
        h.append(np.tanh(h[-1] @ W + x[k]))
    return np.stack(h)


def stats(exe):
    return exe.compiled.stats()


@pytest.mark.parametrize("T", [1, 2, 9])
def test_an_rnn_runs_as_one_xla_loop(T):
    p = rnn()
    x, W = RNG.standard_normal((T, 4)).astype(np.float32), RNG.standard_normal((4, 4)).astype(np.float32) * 0.5
    exe = p.compile(backend="jax")
    out = exe.run(bounds={"T": T}, inputs={"x": x, "W": W})
    np.testing.assert_allclose(out["h"], rnn_numpy(x, W), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["h"], p.compile(backend="numpy").run(bounds={"T": T}, inputs={"x": x, "W": W})["h"],
                               rtol=1e-5, atol=1e-6)
    s = stats(exe)
    assert s["xla_loops"] >= 1 and s["loop_fallbacks"] == 0
    if T == 9:   # h[0] and the steps after it: one XLA program, one launch, compiled once
        assert s["launches"] == 1 and s["xla_compilations"] == 1, s


def test_a_loop_compiles_once_for_every_bound_of_the_same_capacity():
    p = rnn()
    exe = p.compile(backend="jax")
    W = np.eye(4, dtype=np.float32) * 0.5
    counts = []
    for T in (40, 50, 63, 64):      # capacities: every store rounds T up to 64
        x = RNG.standard_normal((T, 4)).astype(np.float32)
        np.testing.assert_allclose(exe.run(bounds={"T": T}, inputs={"x": x, "W": W})["h"], rnn_numpy(x, W),
                                   rtol=1e-5, atol=1e-6)
        counts.append(exe.compiled.compiles())
    assert counts[1:] == counts[:1] * 3, counts


def test_a_point_store_of_one_slot_packs_as_the_value_itself():
    """A ring store of size 1 (h[t] is read at t + 1, then overwritten) packs as
    the value's shape, not [1, d]: XLA on CPU then reads the carried value with a
    bitcast, where a [1, d] slot cost a copy per step (an RNN of T = 2,000 ran at
    twice lax.scan's time per step). Its values read back on the host are the
    loop's."""
    from tidal.runtime.scheduled.packing import DenseSlots
    p = rnn()
    exe = p.compile(backend="jax")
    T = 7
    x, W = RNG.standard_normal((T, 4)).astype(np.float32), RNG.standard_normal((4, 4)).astype(np.float32) * 0.5
    np.testing.assert_allclose(exe.run(bounds={"T": T}, inputs={"x": x, "W": W})["h"], rnn_numpy(x, W),
                               rtol=1e-5, atol=1e-6)
    c = exe.compiled
    rings = [(key, store) for key, store in c.last_stores.items() if isinstance(getattr(store, "data", None), DenseSlots)
             and [a.mode for a in store.plan.axes] == ["ring"] and store.plan.axes[0].size == 1]
    assert rings, c.store_kinds()
    for key, store in rings:
        assert tuple(store.data.dense.shape) == tuple(store.layout[1]), (key, store.data.dense.shape)
        assert store.layout[0] == []                       # no slot axis left
        value = store.data[(0,)]                           # the host reads it by its full slot
        assert tuple(value.shape) == tuple(store.layout[1])


def test_a_scalar_store_written_after_a_loop_reads_back():
    """A store of one scalar value (no block axes) that the host writes after a
    traced loop packed it: its array is the 0-d value written. Indexing the 0-d
    dense array with () gave a NumPy scalar, and writing the host's value into
    it raised (test_fuzz_tile's causal-prefix programs, seed 4141)."""
    from tidal.runtime.scheduled.packing import DenseSlots
    slots = DenseSlots(np.float32(0.0))
    slots[()] = np.float32(2.5)
    out = slots.array([])
    assert out.shape == () and float(out) == 2.5
    block = DenseSlots(np.zeros((3, 2), np.float32))
    block[(1,)] = np.ones(2, np.float32)
    np.testing.assert_array_equal(block.array([2]), [[0, 0], [1, 1]])


def test_point_stores_a_loop_writes_first_are_made_inside_it(monkeypatch):
    """The point stores an XLA loop writes before anything else does are zeros
    made inside its program (packing.py's Z): nothing is packed and sent for
    them. The RNN's h[0] and steps (one traced region) pack no point store."""
    from tidal.runtime.scheduled import packing
    packed = []
    real = packing._pack_points
    monkeypatch.setattr(packing, "_pack_points", lambda stores: (packed.extend(stores), real(stores))[1])
    p = rnn()
    exe = p.compile(backend="jax")
    for T in (5, 9):
        x, W = RNG.standard_normal((T, 4)).astype(np.float32), RNG.standard_normal((4, 4)).astype(np.float32) * 0.5
        np.testing.assert_allclose(exe.run(bounds={"T": T}, inputs={"x": x, "W": W})["h"], rnn_numpy(x, W),
                                   rtol=1e-5, atol=1e-6)
    assert packed == [] and stats(exe)["launches"] == 1


def test_store_positions_are_one_int32_index_each_with_no_wraparound():
    """slice_at / update_at (a store's reads and writes inside kernels and loops):
    one dynamic_slice / dynamic_update_slice on int32 positions, whatever the
    positions' types, and no select that maps a negative position to the end
    (jax's default: in a loop body it cost more than the step's matmuls)."""
    import jax
    import jax.numpy as jnp
    from tidal.runtime.scheduled.traced import slice_at, update_at
    buf = jnp.zeros((8, 3), jnp.float32)
    with jax.enable_x64(True):   # as the runtime traces them (executable._device_scope)
        row = jnp.ones((1, 3), jnp.float32)
        for f in (lambda b, i: slice_at(b, [i], [2]), lambda b, i: update_at(b, row, [i + 1])):
            for i in (jnp.int64(2), jnp.int32(2), 2):
                eqns = jax.make_jaxpr(f)(buf, i).jaxpr.eqns
                prims = {e.primitive.name for e in eqns}
                assert prims <= {"dynamic_slice", "dynamic_update_slice", "convert_element_type", "add"}, prims
                assert not prims & {"select_n", "lt"}
                sliced = next(e for e in eqns if e.primitive.name.startswith("dynamic"))
                assert all(str(v.aval.dtype) == "int32" for v in sliced.invars[-2:]), sliced
        np.testing.assert_array_equal(slice_at(jnp.arange(8.0).reshape(4, 2), [jnp.int64(1)], [2]),
                                      [[2.0, 3.0], [4.0, 5.0]])


def test_the_python_loop_gives_the_same_values(monkeypatch):
    p = rnn()
    x, W = RNG.standard_normal((6, 4)).astype(np.float32), np.eye(4, dtype=np.float32)
    from tidal.runtime.scheduled import compile_sdg
    plain = compile_sdg(p.compile(backend="jax").module, xla_loops=False)
    assert plain.stats()["xla_loops"] == 0
    out = plain.run({"T": 6}, {"x": x, "W": W})
    assert plain.stats()["launches"] >= 6      # one launch per step at least
    np.testing.assert_allclose(out["h"], rnn_numpy(x, W), rtol=1e-5, atol=1e-6)
    monkeypatch.setenv("TIDAL_XLA_LOOPS", "off")     # the switch users have
    assert compile_sdg(p.compile(backend="jax").module).stats()["xla_loops"] == 0
    monkeypatch.setenv("TIDAL_XLA_LOOPS", "strict")
    assert compile_sdg(p.compile(backend="jax").module).stats()["xla_loops"] >= 1


def test_a_window_within_the_least_bucket_is_padded_inside_the_loop():
    with td.Program("win") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        w = td.exp(x[td.max(0, t - 4):t + 1]).sum(0)        # up to 5 rows: padded to the least bucket
        p.output("w", w)
    T = 11
    x = RNG.standard_normal((T, 3)).astype(np.float32)
    exe = p.compile(backend="jax")
    out = exe.run(bounds={"T": T}, inputs={"x": x})
    expected = np.stack([np.exp(x[max(0, k - 4):k + 1]).sum(0) for k in range(T)])
    np.testing.assert_allclose(out["w"], expected, rtol=1e-5)
    assert stats(exe)["xla_loops"] >= 1 and stats(exe)["launches"] <= 3


def test_a_short_window_runs_at_its_own_capacity_not_the_least_bucket():
    """n-step returns: a window of at most 8 steps (fewer at the end) is
    computed at capacity 8, in the XLA loop and in the Python loop alike (the
    loop packs what the other computed); at LEAST_KERNEL_BUCKET (32) its
    cumsum did 16x the work."""
    import re

    from tidal.runtime.scheduled import compile_sdg
    with td.Program("nstep") as p:
        (t, T), = p.dims("t")
        d = td.input("d", shape=(5,), domain=(t,))
        win = d[t:td.min(t + 8, T)]
        ended = td.cumsum(win, 0) - win
        p.output("g", td.discounted_sum(td.where(ended < 0.5, win + 1.0, 0.0), 0.9, dim=0))
    T = 20
    d = (RNG.random((T, 5)) < 0.2).astype(np.float32)
    want = []
    for k in range(T):
        w = d[k:min(k + 8, T)]
        v = np.where(np.cumsum(w, 0) - w < 0.5, w + 1.0, 0.0)
        want.append((v * 0.9 ** np.arange(len(w))[:, None]).sum(0))
    module = p.compile(backend="jax").module
    for xla_loops in (True, False):
        exe = compile_sdg(module, xla_loops=xla_loops)
        np.testing.assert_allclose(exe.run({"T": T}, {"d": d})["g"], np.stack(want), rtol=1e-5)
        caps = {int(c) for c in re.findall(r"_K\d+\(\(min\(_kbucket\(\w+\), (\d+)\)", exe.source)}
        caps |= {int(c) for c in re.findall(r"_r = _K\d+\(\((\d+), ", exe.source)}
        assert caps == {8}, caps
        assert (exe.stats()["xla_loops"] >= 1) == xla_loops


def test_random_draws_inside_an_xla_loop_are_the_documented_ones():
    with td.Program("walk") as p:
        (t, T), = p.dims("t")
        s = td.recurrent(shape=(2,), domain=(t,))
        u = td.rand(2, domain=(t,), seed=5)
        s[0] = u[0]
        s[t + 1] = s[t] + u[t + 1]
        p.output("s", s)
    T = 8
    exe = p.compile(backend="jax")
    out = exe.run(bounds={"T": T})
    draws = np.stack([random_draw(np, "uniform", 5, (k,), (2,)).astype(np.float32) for k in range(T)])
    np.testing.assert_allclose(out["s"], np.cumsum(draws, 0), rtol=1e-6)
    assert stats(exe)["xla_loops"] >= 1 and stats(exe)["host_ops"] == 0


def test_a_loop_whose_trace_fails_runs_in_python(monkeypatch):
    p = rnn()
    x, W = RNG.standard_normal((5, 4)).astype(np.float32), np.eye(4, dtype=np.float32)
    exe = p.compile(backend="jax")
    ns = exe.compiled.ns

    def refuse(*args, **kwargs):
        raise TypeError("this loop cannot be traced")

    monkeypatch.setitem(ns, "_fori", refuse)
    monkeypatch.setenv("TIDAL_XLA_LOOPS", "strict")
    with pytest.raises(TypeError, match="cannot be traced"):
        exe.run(bounds={"T": 5}, inputs={"x": x, "W": W})
    monkeypatch.setenv("TIDAL_XLA_LOOPS", "on")
    out = exe.run(bounds={"T": 5}, inputs={"x": x, "W": W})
    np.testing.assert_allclose(out["h"], rnn_numpy(x, W), rtol=1e-5, atol=1e-6)
    assert stats(exe)["loop_fallbacks"] == 1 and "cannot be traced" in str(exe.compiled.loop_fallbacks)


def test_a_window_beyond_the_least_bucket_runs_at_its_static_capacity():
    with td.Program("win40") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        m = x[td.max(0, t - 39):t + 1].amax(0)        # up to 40 rows: capacity 64 in the loop
        p.output("m", m)
    T = 70
    x = RNG.standard_normal((T, 2)).astype(np.float32)
    exe = p.compile(backend="jax")
    out = exe.run(bounds={"T": T}, inputs={"x": x})
    np.testing.assert_array_equal(out["m"], np.stack([x[max(0, k - 39):k + 1].max(0) for k in range(T)]))
    assert stats(exe)["xla_loops"] >= 1 and stats(exe)["launches"] <= 3


def test_an_empty_max_inside_an_xla_loop_raises_when_the_run_ends():
    with td.Program("empty") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        p.output("m", x[td.max(0, t - 2):t].amax(0))   # empty at t = 0
    x = np.arange(4, dtype=np.float32)
    for backend in ("reference", "jax"):
        with pytest.raises(Exception, match="empty"):
            p.compile(backend=backend).run(bounds={"T": 4}, inputs={"x": x})
    exe = p.compile(backend="jax")
    assert stats(exe)["xla_loops"] >= 1


def causal_prefix():
    with td.Program("prefix") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        e = td.exp(x[0:t + 1] - x[0:t + 1].amax(0, keepdim=True))   # no static bound on t + 1
        p.output("s", (e * x[0:t + 1]).sum(0) / e.sum(0))
    return p


def causal_numpy(x):
    out = []
    for k in range(len(x)):
        e = np.exp(x[:k + 1] - x[:k + 1].max(0))
        out.append((e * x[:k + 1]).sum(0) / e.sum(0))
    return np.stack(out)


def test_a_causal_prefix_runs_inside_the_loop_at_the_least_capacity_that_holds_it():
    """A size with no static bound (t + 1) runs inside the XLA loop under a
    switch over capacities (128, 256, ... up to the store's rows): each step takes
    the least that holds t + 1, so the values stay right across every boundary."""
    from tidal.runtime.scheduled.traced import capacities
    exe = causal_prefix().compile(backend="jax")
    for T in (1, 2, 128, 129, 300):
        x = RNG.standard_normal((T, 3)).astype(np.float32)
        out = exe.run(bounds={"T": T}, inputs={"x": x})
        np.testing.assert_allclose(out["s"], causal_numpy(x), rtol=1e-5, atol=1e-6)
        assert exe.compiled._gen.untraced == {}, exe.compiled._gen.untraced
        assert stats(exe)["xla_loops"] >= 1 and stats(exe)["launches"] <= 3, stats(exe)
    assert capacities(600) == [128, 256, 512, 600] and capacities(256) == [128, 256] and capacities(8) == [8]


def test_a_causal_loop_compiles_as_often_at_every_bound():
    """Without the switch the prefix's kernels compiled once per power of two
    up to T (O(log T)); now a run compiles the loop once whatever T is."""
    from tidal.runtime.scheduled import compile_sdg
    module = causal_prefix().compile(backend="jax").module
    counts = []
    for T in (40, 300, 1100):
        exe = compile_sdg(module)
        x = RNG.standard_normal((T, 3)).astype(np.float32)
        np.testing.assert_allclose(exe.run({"T": T}, {"x": x})["s"], causal_numpy(x), rtol=1e-5, atol=1e-6)
        counts.append(exe.compiles())
    assert counts == counts[:1] * 3, counts


def test_an_empty_max_over_a_causal_prefix_inside_an_xla_loop_raises():
    with td.Program("empty_prefix") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        p.output("m", (x[0:t] * 2.0).amax(0))   # empty at t = 0
    exe = p.compile(backend="jax")
    with pytest.raises(Exception, match="empty"):
        exe.run(bounds={"T": 40}, inputs={"x": np.arange(40, dtype=np.float32)})
    assert exe.compiled._gen.untraced == {} and stats(exe)["xla_loops"] >= 1
