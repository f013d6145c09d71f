"""Integer-tensor indexing, `E[tok]` and `x[t, :, idx]`: NumPy's advanced
indexing with one index array on a spatial axis, checked against NumPy on the
reference backend and the default (jax) one; negative indices wrap, indices
out of range are an error of the run at the user's line; masks, float
indices, several index tensors and tensors in a temporal position are
refused while tracing, at the user's line."""
import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tidal as td
from tidal.runtime.reference_graph import EvaluationError

BACKENDS = ("reference", "jax")          # the oracle and the default scheduled backend
V, D, B = 7, 4, 3


def _line(marker: str) -> int:
    lines = inspect.getsource(inspect.getmodule(_line)).splitlines()
    return next(n for n, text in enumerate(lines, 1) if text.rstrip().endswith(f"# @{marker}"))


def _table(seed=0):
    return np.random.default_rng(seed).normal(size=(V, D)).astype(np.float32)


def _compile(p, backend):
    return p.compile(backend=backend) if backend != "jax" else p.compile()   # jax is the default


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_embedding_lookup_feeds_a_recurrence(backend, dtype):
    """h[t + 1] = tanh(h[t] @ W + E[tok[t + 1]]): the lookup at every step, on
    a batch of tokens (B,), some negative (counted from the end)."""
    E, W = _table(0), np.random.default_rng(1).normal(size=(D, D)).astype(np.float32) * 0.5
    with td.Program() as p:
        (t, T), = p.dims("t")
        e, w = td.param("E", E), td.param("W", W)
        tok = td.input("tok", shape=(B,), domain=(t,), dtype=dtype)
        h = td.recurrent(shape=(B, D), domain=(t,))
        h[0] = e[tok[0]]
        h[t + 1] = td.tanh(h[t] @ w + e[tok[t + 1]])
        p.output("h", h)
        p.output("scalar", e[tok[t, 0]])                     # a 0-d index: one row per step
    n = 6
    tok = np.random.default_rng(2).integers(-V, V, size=(n, B)).astype(dtype)
    out = _compile(p, backend).run(bounds={"T": n}, inputs={"tok": tok})
    want = [E[tok[0]]]
    for s in range(1, n):
        want.append(np.tanh(want[-1] @ W + E[tok[s]]))
    np.testing.assert_allclose(np.asarray(out["h"]), np.stack(want), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(out["scalar"]), E[tok[:, 0]])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_a_2d_index_and_constant_indices(backend, dtype):
    E = _table(3)
    with td.Program() as p:
        (t, T), = p.dims("t")
        e = td.param("E", E)
        tok = td.input("tok", shape=(2, 3), domain=(t,), dtype=dtype)
        p.output("grid", e[tok])                              # (2, 3, D) at every step
        p.output("window", e[tok[0:t + 1, :, 0, 0]])          # an index of symbolic shape (t + 1,)
        p.output("list", e[[0, -1, 2]])
        p.output("array", e[np.array([[1, 1], [-2, 0]])])
        p.output("cols", e[:, tok[t, 1] % D])
    n = 4
    tok = np.random.default_rng(4).integers(-V, V, size=(n, 2, 3)).astype(dtype)
    got = _compile(p, backend).run(bounds={"T": n}, inputs={"tok": tok})
    for s in range(n):
        np.testing.assert_array_equal(np.asarray(got["grid"])[s], E[tok[s]])
        np.testing.assert_array_equal(np.asarray(got["window"][s]), E[tok[:s + 1, 0, 0]])
        np.testing.assert_array_equal(np.asarray(got["cols"])[s], E[:, tok[s, 1] % D])
    assert np.asarray(got["grid"]).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got["list"]), E[[0, -1, 2]])
    np.testing.assert_array_equal(np.asarray(got["array"]), E[np.array([[1, 1], [-2, 0]])])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_negative_index_on_an_axis_of_symbolic_size_counts_from_its_end(backend):
    """x[0:t + 1, i]: the window has t + 1 rows, so -1 is step t (the wrap reads
    the size as a symbol value)."""
    X = np.arange(12, dtype=np.float32).reshape(4, 3)
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        i = td.input("i", shape=(2,), dtype="int32")
        p.output("w", x[0:t + 1, i])
    got = _compile(p, backend).run(bounds={"T": 4}, inputs={"x": X, "i": np.array([-1, 0], np.int32)})
    for s in range(4):
        np.testing.assert_array_equal(np.asarray(got["w"][s]), X[:s + 1][[-1, 0]])


KEYS = {                 # Tidal subscript on x (domain t, shape (3, 4, 5)): NumPy key at one step
    "x[t, idx]": (lambda x, t, i: x[t, i], lambda i: (i,)),
    "x[t, :, idx]": (lambda x, t, i: x[t, :, i], lambda i: (slice(None), i)),
    "x[..., idx]": (lambda x, t, i: x[..., i], lambda i: (Ellipsis, i)),
    "x[t, 1:, idx]": (lambda x, t, i: x[t, 1:, i], lambda i: (slice(1, None), i)),
    "x[t, 1, :, idx]": (lambda x, t, i: x[t, 1, :, i], lambda i: (1, slice(None), i)),  # axes first
    "x[t, idx, :, 2]": (lambda x, t, i: x[t, i, :, 2], lambda i: (i, slice(None), 2)),  # axes first
    "x[t, idx, 2]": (lambda x, t, i: x[t, i, 2], lambda i: (i, 2)),                     # in place
    "x[t, None, idx]": (lambda x, t, i: x[t, None, i], lambda i: (None, i)),
    "x[t, 0, None, idx]": (lambda x, t, i: x[t, 0, None, i], lambda i: (0, None, i)),  # axes first
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_spatial_axis_with_temporal_components_matches_numpy(backend):
    X = np.arange(4 * 3 * 4 * 5, dtype=np.float32).reshape(4, 3, 4, 5)
    idx = np.array([[0, -1], [2, 1]], np.int64)
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3, 4, 5), domain=(t,))
        i = td.input("idx", shape=(2, 2), dtype="int64")           # no domain: the same every step
        for view, (tidal, _) in KEYS.items():
            p.output(view, tidal(x, t, i))
        p.output("previous", x[t - 1, :, :, i], when=t > 0)
    got = _compile(p, backend).run(bounds={"T": 4}, inputs={"x": X, "idx": idx})
    for view, (_, key) in KEYS.items():
        np.testing.assert_array_equal(np.asarray(got[view]), np.stack([X[s][key(idx)] for s in range(4)]),
                                      err_msg=view)
    previous = got["previous"]                                   # conditional: {(t,): value}
    assert sorted(previous) == [(1,), (2,), (3,)]
    for (s,), value in previous.items():
        np.testing.assert_array_equal(np.asarray(value), X[s - 1][:, :, idx])


@st.composite
def subscripts(draw):
    """(x's shape, idx's shape, idx's values, a spatial subscript with one 'I')."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    ishape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    values = np.array(draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(ishape)),
                                    max_size=int(np.prod(ishape)))), np.int64).reshape(ishape)
    key = []
    for a, size in enumerate(shape):
        if a == axis:
            key.append("I")
        else:
            key.append(draw(st.sampled_from([slice(None), slice(1, None), 0, size - 1, None])))
            if key[-1] is None:
                key.append(slice(None))
    if draw(st.booleans()):                        # trailing components left out
        while key and key[-1] != "I" and isinstance(key[-1], slice) and key[-1] == slice(None):
            key.pop()
    return shape, ishape, values, key


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subscripts(), st.sampled_from(["int32", "int64"]))
def test_random_subscripts_match_numpy_on_the_reference(case, dtype):
    shape, ishape, values, key = case
    X = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    with td.Program() as p:
        x = td.input("x", shape=shape)
        i = td.input("i", shape=ishape, dtype=dtype)
        y = x[tuple(i if c == "I" else c for c in key)]
        p.output("y", y)
    want = X[tuple(values if isinstance(c, str) else c for c in key)]
    assert tuple(int(str(s)) for s in y.shape) == want.shape, (key, y.shape, want.shape)
    got = p.compile(backend="reference").run(bounds={}, inputs={"x": X, "i": values.astype(dtype)})
    np.testing.assert_array_equal(np.asarray(got["y"]), want)


def test_the_gradient_reaches_the_table_with_repeated_tokens():
    E = _table(5)
    tok = np.array([[1, 3, 1], [0, 1, -1]])
    G = np.random.default_rng(6).normal(size=(2, 3, D)).astype(np.float32)
    with td.Program() as p:
        e = td.input("E", shape=(V, D))
        i = td.input("tok", shape=(2, 3), dtype="int32")
        loss = (e[i] * td.constant(G)).sum()
        g, = td.grad(loss, [e])
        p.output("g", g)
    got = p.compile(backend="reference").run(bounds={}, inputs={"E": E, "tok": tok.astype(np.int32)})
    want = np.zeros_like(E)
    np.add.at(want, tok % V, G)
    np.testing.assert_allclose(np.asarray(got["g"]), want, rtol=1e-6, atol=1e-6)


def _lookup_program():
    with td.Program() as p:
        (t, T), = p.dims("t")
        tok = td.input("tok", shape=(B,), domain=(t,), dtype="int32")
        p.output("y", td.param("E", _table())[tok[t]])                   # @lookup
    return p


@pytest.mark.parametrize("backend", ("reference", "numpy", "jax"))
@pytest.mark.parametrize("bad", [V, -V - 1])
def test_an_index_out_of_range_is_an_error_of_the_run_at_the_line(backend, bad):
    tok = np.zeros((3, B), np.int32)
    tok[1, 2] = bad
    with pytest.raises(EvaluationError, match="out of range") as e:
        _lookup_program().compile(backend=backend).run(bounds={"T": 3}, inputs={"tok": tok})
    assert f":{_line('lookup')}" in str(e.value), str(e.value)


def _raises_at(marker, *words):
    """Checks a TidalError raised at the line marked `# @marker`, naming `words`."""
    class Check:
        def __enter__(self):
            self.cm = pytest.raises(td.TidalError)
            self.info = self.cm.__enter__()

        def __exit__(self, *exc):
            handled = self.cm.__exit__(*exc)
            err = self.info.value
            assert (err.filename, err.lineno) == (__file__, _line(marker)), str(err)
            for w in words:
                assert w in str(err), (w, str(err))
            assert "hint:" in str(err)
            return handled

    return Check()


def _program():
    p = td.Program()
    with p:
        (t, T), = p.dims("t")
    return p, t


def test_a_boolean_mask_is_refused_with_a_hint_for_where():
    p, t = _program()
    with p:
        v = td.input("v", shape=(5,), domain=(t,))
        with _raises_at("mask-temporal", "boolean mask", "td.where"):
            v[v != 0]                                                     # @mask-temporal
        with _raises_at("mask-spatial", "boolean mask", "td.where"):
            v[t, v > 1.0]                                                 # @mask-spatial
        with _raises_at("mask-array", "boolean mask"):
            v[t, np.array([True, False, True, False, True])]              # @mask-array


def test_float_tensors_several_tensors_and_lists_of_tensors_are_refused():
    p, t = _program()
    with p:
        E = td.param("E", _table())
        i = td.input("i", shape=(2,), domain=(t,), dtype="int64")
        f = td.input("f", shape=(2,))
        with _raises_at("float", "float32", "integer dtype", ".astype('int64')"):
            E[f]                                                          # @float
        with _raises_at("two", "only one index tensor", "flattened axis"):
            E[i, i]                                                       # @two
        with _raises_at("list", "list holding tensors", "td.stack"):
            E[[i[t, 0], i[t, 1]]]                                         # @list
        with _raises_at("floats", "not integer data"):
            E[[0.0, 1.0]]                                                 # @floats
        with _raises_at("const", "out of range", "[-7, 6]"):
            E[[0, 7]]                                                     # @const


def test_a_tensor_in_a_temporal_position_points_to_x_t_idx():
    p, t = _program()
    with p:
        x = td.input("x", shape=(V, D), domain=(t,))
        i = td.input("i", shape=(2,), dtype="int64")
        with _raises_at("temporal", "input 'x'", "temporal dim t", "x[t, idx]"):
            x[i]                                                          # @temporal
        with _raises_at("temporal-ellipsis", "temporal dim t"):
            x[i, ...]                                                     # @temporal-ellipsis
        with _raises_at("temporal-list", "a list", "x[t, idx]"):
            x[[0, 2]]                                                     # @temporal-list
        assert x[t, i].shape == (2, D) and x[..., i].shape == (V, 2)     # what the hint says


def test_indexing_never_compares_a_tensor_with_eq(monkeypatch):
    """`==` on a tensor builds an op: no check of a component against None or
    Ellipsis may use it (`in`, `==`, list.index)."""
    p, t = _program()
    with p:
        x = td.input("x", shape=(V, D), domain=(t,))
        i = td.input("i", shape=(2,), dtype="int64")

        def no_eq(self, other):
            raise AssertionError("a tensor was compared with ==")

        monkeypatch.setattr(td.RecurrentTensor, "__eq__", no_eq)
        monkeypatch.setattr(td.RecurrentTensor, "__ne__", no_eq)
        shapes = [y.shape for y in (x[t, i], x[..., i], x[t, None, i], x[t, i, ...], x[:, i], x[t, 1:, i])]
        with pytest.raises(AssertionError, match="compared with =="):
            x == i                                                        # the probe works
    assert shapes == [(2, D), (V, 2), (1, 2, D), (2, D), (2, D), (V - 1, 2)]
