"""Regressions of issue 8 in the runtime, every backend against the reference:

* 64-bit values on jax: a point read must not alias a ring slot written later;
* process-global kernel caches keyed on everything that shapes the code;
* UDF results checked against their declaration, the same way on every backend;
* inputs never narrowed silently (int64 -> int32);
* bounds validated up front and the memory a run needs estimated before allocating.

Plus unit properties of `tidal.runtime.run_checks.cast_exact` against NumPy.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tidal as td
from tidal.runtime.run_checks import cast_exact, check_bound, check_footprint, check_udf_result

BACKENDS = ("reference", "numpy", "jax")


def run_all(p, bounds, inputs=None):
    return {b: p.compile(backend=b).run(bounds=bounds, inputs=inputs or {}) for b in BACKENDS}


def assert_same(results):
    ref = results["reference"]
    for b, out in results.items():
        assert out.keys() == ref.keys()
        for k in ref:
            np.testing.assert_array_equal(out[k], ref[k], err_msg=f"{b}: output {k}")
            assert np.asarray(out[k]).dtype == np.asarray(ref[k]).dtype, (b, k)


# -- 64-bit values read at a constant point and through a window (defect 1) ------------------------
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_constant_point_read_of_a_window_store_is_not_aliased(dtype):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), dtype=dtype, domain=(t,))
        v = x * 2
        s = td.recurrent(shape=(2,), dtype=dtype, domain=(t,))
        s[0] = v[0]
        s[t + 1] = s + 1
        p.output("s", s)
        p.output("w", v[td.max(0, t - 1):t + 1].sum(0))
    x = np.arange(1, 9).reshape(4, 2).astype(dtype)
    results = run_all(p, {T: 4}, {"x": x})
    assert_same(results)
    np.testing.assert_array_equal(results["jax"]["s"][0], [2, 4])


def test_base_case_per_iteration_is_not_aliased_over_two_dims():
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(2,), dtype="int64", domain=(i, t))
        v = x * 2
        s = td.recurrent(shape=(2,), dtype="int64", domain=(i, t))
        s[i, 0] = v[i, 0]
        s[i, t + 1] = s + 1
        p.output("s", s)
        p.output("w", v[i, td.max(0, t - 1):t + 1].sum(0))
    x = np.arange(1, 25).reshape(3, 4, 2).astype(np.int64)
    results = run_all(p, {I: 3, T: 4}, {"x": x})
    assert_same(results)
    np.testing.assert_array_equal(results["jax"]["s"][:, 0], 2 * x[:, 0])


# -- caches keyed on less than the code they hold (defect 2) ----------------------------------------
def test_stores_of_equal_buffer_shape_but_different_domains_do_not_share_writers():
    # (t,)-store of per-point shape (1,) and (i, t)-store of shape (): both buffers are (1, 1)
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        u = td.randn(1, domain=(t,), seed=1)
        v = td.randn(domain=(i, t), seed=2)
        p.output("a", u[0:T].sum(0))
        p.output("b", v[0:I, t].sum(0))
    for bounds in ({I: 1, T: 1}, {I: 2, T: 1}, {I: 1, T: 3}):
        assert_same(run_all(p, bounds))


@pytest.mark.parametrize("order", [(False, True), (True, False)])
def test_udf_programs_over_one_and_two_dims_run_one_after_another(order):
    def program(two):
        with td.Program() as p:
            (i, I), (t, T) = p.dims("i", "t")
            shape = () if two else (1,)
            u = td.udf(lambda: np.full(shape, 3, np.float32), shape=shape, dtype="float32",
                       domain=(i, t) if two else (t,))
            p.output("a", u * 2)
        return p, I, T

    for two in order:
        p, I, T = program(two)
        results = run_all(p, {I: 1, T: 1})
        assert_same(results)
        assert results["jax"]["a"].shape == (1, 1)


# -- UDF results (defect 4) ------------------------------------------------------------------------
def _udf_program(returned):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        y = td.udf(lambda a: returned, [x], shape=(2,), dtype="float32", name="env.step")
        p.output("y", y + 1)
    return p, T


@pytest.mark.parametrize("returned, words", [
    (np.float32(1.0), "has shape (), declared (2,)"),
    (np.ones(1, np.float32), "has shape (1,), declared (2,)"),
    (np.ones(3, np.float32), "has shape (3,), declared (2,)"),
    (None, "is None"),
    (np.array([1.5, 2.0]).astype(np.int64) + 2**40, None),   # fits float32 after rounding: accepted
    ("ab", "cannot be converted to float32"),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_udf_results_are_checked_on_every_backend(returned, words, backend):
    p, T = _udf_program(returned)
    exe = p.compile(backend=backend)
    x = np.ones((2, 2), np.float32)
    if words is None:
        out = exe.run(bounds={T: 2}, inputs={"x": x})
        assert out["y"].dtype == np.float32 and out["y"].shape == (2, 2)
        return
    with pytest.raises(RuntimeError) as info:
        exe.run(bounds={T: 2}, inputs={"x": x})
    message = str(info.value)
    assert "UDF 'env.step" in message and words in message
    assert "test_runtime_run_checks.py:" in message   # the td.udf line
    assert "t=0" in message


def test_udf_wrong_arity_is_an_error_and_a_sinks_value_is_ignored():
    assert check_udf_result("f", np.ones(2), [], []) == ()
    with pytest.raises(ValueError, match="declared with 2 results but returned 3 values"):
        check_udf_result("f", (1, 2, 3), [(), ()], [np.float32, np.float32])
    assert check_udf_result("f", None, [], []) == ()


# -- inputs are never narrowed silently (defect 5) -------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_int64_values_that_do_not_fit_int32_are_refused(backend):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), dtype="int32", domain=(t,))
        p.output("y", x + 1)
    exe = p.compile(backend=backend)
    with pytest.raises(td.TidalError, match=r"holds 1099511627776, which does not fit in int32"):
        exe.run(bounds={T: 2}, inputs={"x": np.array([2**40, 3], np.int64)})
    out = exe.run(bounds={T: 2}, inputs={"x": np.array([2**31 - 2, -2**31], np.int64)})
    np.testing.assert_array_equal(out["y"], np.array([2**31 - 1, -2**31 + 1], np.int32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_int64_inputs_stay_exact(backend):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), dtype="int64", domain=(t,))
        p.output("y", x + 2**40)
        p.output("z", x[0:t + 1].sum(0))
    x = np.array([2**40, 3, -2**50], np.int64)
    out = p.compile(backend=backend).run(bounds={T: 3}, inputs={"x": x})
    np.testing.assert_array_equal(out["y"], x + 2**40)
    np.testing.assert_array_equal(out["z"], np.cumsum(x))
    assert out["y"].dtype == np.int64


_INTS = st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"])


@given(src=_INTS, dst=_INTS, data=st.data())
def test_cast_exact_accepts_exactly_the_values_that_round_trip(src, dst, data):
    info = np.iinfo(src)
    values = np.array(data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1,
                                         max_size=5)), dtype=src)
    fits = all(np.iinfo(dst).min <= int(v) <= np.iinfo(dst).max for v in values)
    if fits:
        out = cast_exact(values, dst, "x")
        assert out.dtype == np.dtype(dst)
        assert [int(v) for v in out] == [int(v) for v in values]
    else:
        with pytest.raises(ValueError, match="does not fit"):
            cast_exact(values, dst, "x")


def test_cast_exact_refuses_lossy_kinds_and_allows_float_rounding():
    with pytest.raises(ValueError, match="floats are not converted"):
        cast_exact(np.array([1.0]), np.int32, "x")
    with pytest.raises(ValueError, match="expected bool"):
        cast_exact(np.array([0, 1]), np.bool_, "x")
    with pytest.raises(ValueError, match="overflows float16"):
        cast_exact(np.array([1e6, np.inf]), np.float16, "x")
    assert cast_exact(np.array([np.inf, np.nan, 1.0]), np.float32, "x").dtype == np.float32
    assert cast_exact(np.array([0.1]), np.float32, "x")[0] == np.float32(0.1)
    assert cast_exact([1, 2], np.float32, "x").dtype == np.float32


# -- bounds and memory (defect 6) ------------------------------------------------------------------
def _random_program():
    with td.Program() as p:
        (t, T), = p.dims("t")
        r = td.randn(2, domain=(t,), seed=1)
        p.output("r", r * 2)
    return p, T


@pytest.mark.parametrize("backend", BACKENDS)
def test_bounds_past_int64_are_refused(backend):
    p, T = _random_program()
    exe = p.compile(backend=backend)
    for value in (2**63, 2**64, -1, 0, 2.0, True):
        with pytest.raises(td.TidalError, match="bound 'T'"):
            exe.run(bounds={T: value})


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_that_cannot_fit_in_memory_names_the_tensor_and_bytes(backend):
    p, T = _random_program()
    exe = p.compile(backend=backend)
    with pytest.raises(MemoryError) as info:
        exe.run(bounds={T: 10**12})
    message = str(info.value)
    assert "8000000000000 bytes" in message            # 10**12 points of 2 float32
    assert "test_runtime_run_checks.py:" in message     # the tensor's line
    np.testing.assert_array_equal(exe.run(bounds={T: 3})["r"].shape, (3, 2))


def test_memory_limit_can_be_set(monkeypatch):
    monkeypatch.setenv("TIDAL_MEMORY_LIMIT", "1000")
    p, T = _random_program()
    with pytest.raises(MemoryError, match="the largest is the store of 'sdg.output"):
        p.compile(backend="numpy").run(bounds={T: 200})
    check_footprint([("a", 400), ("b", 600)], limit=1000)
    with pytest.raises(MemoryError, match="would need 1001 bytes.*the largest is b: 601 bytes"):
        check_footprint([("a", 400), ("b", 601)], limit=1000)


def test_check_bound_unit():
    assert check_bound("T", np.int64(5)) == 5
    assert check_bound("T", 2**63 - 1) == 2**63 - 1
    for bad in (2**63, 0, -3, 1.0, "5", None, np.bool_(True)):
        with pytest.raises(ValueError, match="bound 'T'"):
            check_bound("T", bad)


# -- what a compile leaves behind (defect 11) --------------------------------------------------------
def _grad_program():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        W = td.param("W", np.eye(4, dtype=np.float32))
        s = td.recurrent(shape=(4,), domain=(t,))
        s[0] = x[0]
        s[t + 1] = td.tanh(s @ W + x[t + 1])
        p.output("s", s)
        p.output("g", td.grad(s[0:T].sum(), W))
        p.output("u", td.udf(lambda a: a, [x], shape=(4,), dtype="float32"))
    return p, T


@pytest.mark.parametrize("backend", BACKENDS)
def test_programs_executables_and_contexts_are_freed_after_use(backend):
    import gc
    import weakref
    from mlir import ir

    gc.collect()
    live = ir.Context._get_live_count()
    p, T = _grad_program()
    exe = p.compile(backend=backend)
    exe.run(bounds={T: 3}, inputs={"x": np.ones((3, 4), np.float32)})
    refs = [weakref.ref(p), weakref.ref(exe)] + ([weakref.ref(exe.compiled)] if exe.compiled else [])
    del p, exe
    td.clear_compile_cache()   # the cache keeps the last compilations (a bounded number) alive
    gc.collect()
    assert [r() for r in refs] == [None] * len(refs)
    assert ir.Context._get_live_count() == live


def test_compile_counts_belong_to_one_executable():
    p, T = _random_program()
    first = p.compile(backend="jax")
    first.run(bounds={T: 3})
    assert first.compiled.compiles() > 0
    assert p.compile(backend="jax").compiled is first.compiled   # a cache hit shares them
    td.clear_compile_cache()
    second = p.compile(backend="jax")          # same graph name, same kernel names
    assert second.compiled.compiles() == 0
    second.run(bounds={T: 3})
    assert second.compiled.compiles() == first.compiled.compiles()


def test_compiles_create_no_isl_context(monkeypatch):
    """islpy never frees a context that held objects: one isl context per compile
    retained ~410 KB per compile of this program (measured with RSS over 40
    compiles; what remains is islpy's own ~32 bytes per set operation). Every
    compile must use the shared context."""
    import islpy

    import tidal.lowering.polyhedral  # noqa: F401 - its shared context exists before we count
    created = []

    class Counting(islpy.Context):
        def __init__(self, *args, **kwargs):
            created.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(islpy, "Context", Counting)
    for backend in ("numpy", "jax"):
        p, T = _grad_program()
        p.compile(backend=backend).run(bounds={T: 3}, inputs={"x": np.ones((3, 4), np.float32)})
    assert created == []
