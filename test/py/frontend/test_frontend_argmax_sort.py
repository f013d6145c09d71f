"""td.argmax / td.argmin (rt.reduce argmax|argmin): differential tests
against NumPy on every backend (reference, numpy, jax, and jax with x64,
where the kernel is jitted), ties (first position), NaN (counts as the
extremum, first NaN wins), temporal windows, errors at the user's line, and
autodiff (integer results carry no gradient)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tidal as td
from tidal.runtime import kernels as K

BACKENDS = ("reference", "numpy", "jax", "jax-x64")


def run_all(p, bounds, inputs):
    """{backend: outputs} for every backend; executables cached on the program."""
    cache = p.__dict__.setdefault("_test_exes", {})
    out = {}
    for b in BACKENDS:
        x64 = b == "jax-x64"
        with jax.enable_x64(x64):
            if b not in cache:
                cache[b] = p.compile(backend="jax" if x64 else b)
            res = cache[b].run(bounds=bounds, inputs=inputs)
            out[b] = {k: np.asarray(v) if not isinstance(v, list) else v for k, v in res.items()}
    return out


def same(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected)


# -- whole tensors -------------------------------------------------------------------------
def _static_program():
    with td.Program("argext") as p:
        x = td.input("x", shape=(3, 5))
        n = td.input("n", shape=(3, 5), dtype="int32")
        b = td.input("b", shape=(3, 5), dtype="bool")
        for f in ("argmax", "argmin"):
            for name, v in (("x", x), ("n", n), ("b", b)):
                p.output(f"{f}_{name}_none", getattr(td, f)(v))
                p.output(f"{f}_{name}_none_keep", getattr(v, f)(keepdim=True))
                for d in (0, 1, -1):
                    p.output(f"{f}_{name}_{d}", getattr(td, f)(v, dim=d))
                    p.output(f"{f}_{name}_{d}_keep", getattr(v, f)(d, keepdim=True))
    return p


STATIC = _static_program()

# small value sets make ties common; NaN appears in the floats
_FLOATS = st.sampled_from([0.0, 1.0, -1.0, 2.5, np.nan, -np.inf, np.inf, -0.0])


@settings(max_examples=25)
@given(st.lists(_FLOATS, min_size=15, max_size=15), st.lists(st.integers(-2, 2), min_size=15, max_size=15),
       st.lists(st.booleans(), min_size=15, max_size=15))
def test_argmax_argmin_match_numpy_on_every_backend(xs, ns, bs):
    inputs = {"x": np.array(xs, np.float32).reshape(3, 5), "n": np.array(ns, np.int32).reshape(3, 5),
              "b": np.array(bs, bool).reshape(3, 5)}
    outs = run_all(STATIC, {}, inputs)
    for f in ("argmax", "argmin"):
        npf = getattr(np, f)
        for name, v in inputs.items():
            expected = {"none": npf(v), "none_keep": npf(v, keepdims=True)}
            for d in (0, 1, -1):
                expected[str(d)] = npf(v, axis=d)
                expected[f"{d}_keep"] = npf(v, axis=d, keepdims=True)
            for backend, out in outs.items():
                for key, e in expected.items():
                    got = out[f"{f}_{name}_{key}"]
                    assert got.dtype == np.int64, (backend, f, name, key)
                    np.testing.assert_array_equal(got, e, err_msg=f"{backend} {f} {name} {key}")


def test_ties_give_the_first_position_and_nan_wins():
    with td.Program() as p:
        x = td.input("x", shape=(6,))
        p.output("max", td.argmax(x))
        p.output("min", td.argmin(x))
    cases = [([1, 3, 3, 0, 0, 1], 1, 3), ([2, 2, 2, 2, 2, 2], 0, 0), ([1, np.nan, 5, np.nan, -1, 0], 1, 1),
             ([-np.inf, -np.inf, 0, np.inf, np.inf, 0], 3, 0)]
    for values, amax, amin in cases:
        for backend, out in run_all(p, {}, {"x": np.array(values, np.float32)}).items():
            assert (int(out["max"]), int(out["min"])) == (amax, amin), (backend, values)


# -- temporal windows ------------------------------------------------------------------------
def test_argmax_over_a_sliding_window_per_t():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        p.output("w", x[td.max(0, t - 2):t + 1].argmax(0))            # the window's own positions
        p.output("wmin", td.argmin(x[td.max(0, t - 2):t + 1], dim=0, keepdim=True))
        p.output("pre", td.argmax(x[0:t + 1], dim=0))                 # a growing prefix
        p.output("row", x.argmax())                                   # per point
    rng = np.random.default_rng(0)
    n = 9
    xs = rng.integers(0, 3, (n, 4)).astype(np.float32)  # many ties
    xs[4, 2] = np.nan
    for backend, out in run_all(p, {"T": n}, {"x": xs}).items():
        for k in range(n):
            win = xs[max(0, k - 2):k + 1]
            np.testing.assert_array_equal(out["w"][k], np.argmax(win, 0), err_msg=backend)
            np.testing.assert_array_equal(out["wmin"][k], np.argmin(win, 0, keepdims=True), err_msg=backend)
            np.testing.assert_array_equal(out["pre"][k], np.argmax(xs[:k + 1], 0), err_msg=backend)
            assert out["row"][k] == np.argmax(xs[k]), backend
        assert out["w"].dtype == np.int64


def test_argmax_of_a_recurrence_drives_greedy_decoding():
    """tok[t + 1] = argmax(E[tok[t]] @ W): the argmax feeds the next step's lookup."""
    rng = np.random.default_rng(1)
    E, W = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal((3, 5)).astype(np.float32)
    with td.Program() as p:
        (t, T), = p.dims("t")
        e, w = td.param("E", E), td.param("W", W)
        tok = td.recurrent(shape=(), dtype="int64", domain=(t,))
        tok[0] = td.constant(np.int64(2))
        tok[t + 1] = td.argmax(e.index_select(0, tok[t]) @ w, dim=-1)
        p.output("tok", tok)
    toks = [2]
    for _ in range(6):
        toks.append(int(np.argmax(E[toks[-1]] @ W)))
    for backend, out in run_all(p, {"T": 7}, {}).items():
        np.testing.assert_array_equal(out["tok"], toks, err_msg=backend)


# -- the kernel under jax.jit ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_kernel_is_jittable_and_agrees_with_numpy(kind):
    x = np.array([[1, np.nan, 3, np.nan], [2, 2, -1, -1], [0, 5, 5, 0]], np.float32)
    for dims, keep in (([0], False), ([1], True), ([1], False)):
        f = jax.jit(lambda a: K.reduce(jnp, kind, dims, keep, a, np.int32))
        np.testing.assert_array_equal(np.asarray(f(x)), K.reduce(np, kind, dims, keep, x, np.int32))
    with pytest.raises(K.KernelError, match="empty dimension"):
        K.reduce(np, kind, [0], False, np.zeros((0, 2), np.float32), np.int64)
    with pytest.raises(K.KernelError, match="exactly one dimension"):
        K.reduce(np, kind, [0, 1], False, x, np.int64)


# -- trace-time results and errors -------------------------------------------------------------------
def test_result_type_and_ir():
    with td.Program() as p:
        (t, T), = p.dims("t")
        m = td.input("m", shape=(T, 4), domain=(t,))
        a, b = td.argmax(m, 1), m.argmin(0, keepdim=True)
        s = td.argmax(m)
        assert a.dtype == np.int64 and [str(d) for d in a.shape] == ["T"]
        assert [str(d) for d in b.shape] == ["1", "4"] and s.shape == ()
        p.output("a", a)
        p.output("s", s)
    text = p.mlir(locations=False)
    assert "rt.reduce argmax [1] " in text and "-> !tidal.tensor<[T], i64>" in text
    assert "rt.reshape" in text  # dim=None flattens first


def test_bad_dims_are_errors_at_the_users_line(line_of):
    with td.Program():
        x = td.input("x", shape=(3, 4))
        with pytest.raises(td.TidalError) as e:
            td.argmax(x, dim=2)  # @bad_dim
        assert e.value.lineno == line_of("bad_dim") and "out of range" in str(e.value)
        with pytest.raises(td.TidalError) as e:
            x.argmin(dim=(0, 1))  # @tuple_dim
        assert e.value.lineno == line_of("tuple_dim") and "must be an int or None" in str(e.value)
        with pytest.raises(td.TidalError) as e:
            td.argmax(td.zeros(0, 3), dim=0)  # @empty
        assert e.value.lineno == line_of("empty") and "empty dimension" in str(e.value)


def test_no_gradient_flows_through_argmax():
    """loss = x[argmax(x)] * 3: the gradient is 3 at the argmax and 0 elsewhere
    (through gather; the position itself is an integer constant to autodiff)."""
    xs = np.array([0.5, 2.0, -1.0, 2.0], np.float32)
    with td.Program() as p:
        x = td.param("x", xs)
        i = td.argmax(x, dim=0, keepdim=True)
        loss = (x.gather(0, i) * 3.0).sum() + i.astype("float32").sum()
        (g,) = td.grad(loss, [x])
        p.output("g", g)
    for backend, out in run_all(p, {}, {}).items():
        np.testing.assert_array_equal(out["g"], [0, 3, 0, 0], err_msg=backend)
