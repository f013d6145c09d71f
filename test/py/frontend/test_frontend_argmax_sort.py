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
from numeric_checks import central_differences
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


# == sort, argsort, topk ==========================================================================
def ref_argsort(v, axis=-1, descending=False):
    """torch.sort(stable=True)'s indices, written out: NaN above every number,
    ties by position, per row with Python's sort (an oracle independent of the kernel)."""
    v = np.moveaxis(np.asarray(v), axis, -1)
    out = np.empty(v.shape, np.int64)
    for idx in np.ndindex(v.shape[:-1]):
        row = v[idx].tolist()

        def key(j, row=row):
            x = row[j]
            nan = isinstance(x, float) and np.isnan(x)
            if descending:
                return (0 if nan else 1, 0 if nan else -x, j)
            return (1 if nan else 0, 0 if nan else x, j)

        out[idx] = sorted(range(len(row)), key=key)
    return np.moveaxis(out, -1, axis)


def ref_sort(v, axis=-1, descending=False):
    i = ref_argsort(v, axis, descending)
    return np.take_along_axis(np.asarray(v), i, axis), i


def ref_topk(v, k, axis=-1, largest=True):
    vals, i = ref_sort(v, axis, descending=largest)
    keep = (slice(None),) * (axis % np.ndim(v)) + (slice(0, k),)
    return vals[keep], i[keep]


def test_the_oracle_is_torch_sort():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(-2, 3, (4, 6)).astype(np.float32)
        x[rng.random(x.shape) < 0.15] = np.nan
        for d in (0, 1):
            for desc in (False, True):
                tv, ti = torch.sort(torch.from_numpy(x), dim=d, descending=desc, stable=True)
                v, i = ref_sort(x, d, desc)
                np.testing.assert_array_equal(i, ti.numpy())
                np.testing.assert_array_equal(v, tv.numpy())
            tv, _ = torch.topk(torch.from_numpy(x), 3, dim=d, largest=desc)
            np.testing.assert_array_equal(ref_topk(x, 3, d, desc)[0], tv.numpy())


def _sort_program():
    with td.Program("sorts") as p:
        x = td.input("x", shape=(3, 5))
        n = td.input("n", shape=(3, 5), dtype="int32")
        for name, v in (("x", x), ("n", n)):
            for d in (0, 1):
                for desc in (False, True):
                    vals, idx = td.sort(v, dim=d, descending=desc)
                    p.output(f"sort_{name}_{d}_{desc}", vals)
                    p.output(f"sorti_{name}_{d}_{desc}", idx)
                    p.output(f"argsort_{name}_{d}_{desc}", v.argsort(d, descending=desc))
                for k in (0, 2, 3):
                    for largest in (True, False):
                        r = v.topk(k, dim=d, largest=largest)
                        p.output(f"topk_{name}_{d}_{k}_{largest}", r.values)
                        p.output(f"topki_{name}_{d}_{k}_{largest}", r.indices)
    return p


SORTS = _sort_program()


@settings(max_examples=15)
@given(st.lists(_FLOATS, min_size=15, max_size=15), st.lists(st.integers(-2, 2), min_size=15, max_size=15))
def test_sort_argsort_topk_match_the_oracle_on_every_backend(xs, ns):
    inputs = {"x": np.array(xs, np.float32).reshape(3, 5), "n": np.array(ns, np.int32).reshape(3, 5)}
    outs = run_all(SORTS, {}, inputs)
    for name, v in inputs.items():
        expected = {}
        for d in (0, 1):
            for desc in (False, True):
                vals, idx = ref_sort(v, d, desc)
                expected.update({f"sort_{name}_{d}_{desc}": vals, f"sorti_{name}_{d}_{desc}": idx,
                                 f"argsort_{name}_{d}_{desc}": idx})
            for k in (0, 2, 3):
                for largest in (True, False):
                    vals, idx = ref_topk(v, k, d, largest)
                    expected.update({f"topk_{name}_{d}_{k}_{largest}": vals,
                                     f"topki_{name}_{d}_{k}_{largest}": idx})
        for backend, out in outs.items():
            for key, e in expected.items():
                same(out[key], e)


def test_sort_and_topk_over_temporal_windows():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        w = x[td.max(0, t - 2):t + 1]
        v, i = td.sort(w, dim=0, descending=True)
        p.output("v", v)
        p.output("i", i)
        top = w.topk(1, dim=0)                     # the window has >= 1 row at every t
        p.output("tv", top.values)
        p.output("ti", top.indices)
        pre = td.topk(x[0:t + 1], 1, dim=0, largest=False)
        p.output("pv", pre.values)
        p.output("row", td.sort(x).values)
    rng = np.random.default_rng(5)
    n = 8
    xs = rng.integers(0, 3, (n, 4)).astype(np.float32)
    xs[3, 1] = np.nan
    for backend, out in run_all(p, {"T": n}, {"x": xs}).items():
        for k in range(n):
            win = xs[max(0, k - 2):k + 1]
            ev, ei = ref_sort(win, 0, True)
            same(out["v"][k], ev)
            same(out["i"][k], ei)
            same(out["tv"][k], ref_topk(win, 1, 0)[0])
            same(out["ti"][k], ref_topk(win, 1, 0)[1])
            same(out["pv"][k], ref_topk(xs[:k + 1], 1, 0, largest=False)[0])
            same(out["row"][k], ref_sort(xs[k])[0])


def test_gradients_of_sort_and_topk_values_match_finite_differences():
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal((3, 5))                      # distinct values: no kinks nearby
    w1, w2 = rng.standard_normal((3, 2)), rng.standard_normal((3, 5))

    def f(x):
        return float((ref_topk(x, 2, 1)[0] * w1).sum() + (ref_sort(x, 0, True)[0] * w2).sum()
                     + (ref_topk(x, 1, 0, largest=False)[0] ** 2).sum())

    with td.Program() as p:
        x = td.param("x", x0)
        loss = (td.topk(x, 2).values * w1).sum() + (td.sort(x, 0, descending=True).values * w2).sum() \
            + (x.topk(1, dim=0, largest=False).values ** 2).sum()
        (g,) = td.grad(loss, [x])
        p.output("g", g)
        p.output("loss", loss)
    expected = central_differences(f, x0)
    for backend, out in run_all(p, {}, {}).items():
        np.testing.assert_allclose(out["loss"], f(x0), rtol=1e-12, err_msg=backend)
        np.testing.assert_allclose(out["g"], expected, rtol=1e-6, atol=1e-8, err_msg=backend)


def test_gradient_of_topk_over_a_window_per_t():
    """loss = sum_t topk(x[max(0, t - 1):t + 1], 1, dim=0).values @ w: each x[t]
    gets the gradient of the windows in which it is the maximum."""
    rng = np.random.default_rng(8)
    n = 6
    x0, w = rng.standard_normal((n, 3)), rng.standard_normal(3)

    def f(x):
        return float(sum((ref_topk(x[max(0, k - 1):k + 1], 1, 0)[0][0] * w).sum() for k in range(n)))

    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), dtype="float64", domain=(t,))
        loss = (x[td.max(0, t - 1):t + 1].topk(1, dim=0).values.squeeze(0) * w).sum()
        (g,) = td.grad(loss, [x])
        p.output("g", g)
    expected = central_differences(f, x0)
    for backend, out in run_all(p, {"T": n}, {"x": x0}).items():
        np.testing.assert_allclose(out["g"], expected, rtol=1e-6, atol=1e-8, err_msg=backend)


def test_sort_errors_at_the_users_line(line_of):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        cases = [
            (lambda: td.topk(x, 5), "larger than dim 0 of size 4", "k5"),  # @k5
            (lambda: x.topk(-1), "negative", "kneg"),  # @kneg
            (lambda: td.topk(x, 1.5), "static int", "kfloat"),  # @kfloat
            (lambda: x[td.max(0, t - 2):t + 1].topk(2, dim=0), "may be larger than dim 0", "ksym"),  # @ksym
            (lambda: td.sort(x, dim=1), "out of range", "dim"),  # @dim
            (lambda: td.argsort(x.sum()), "rank >= 1", "scalar"),  # @scalar
        ]
        for fn, message, marker in cases:
            with pytest.raises(td.TidalError, match=message) as e:
                fn()
            assert e.value.lineno == line_of(marker), marker
