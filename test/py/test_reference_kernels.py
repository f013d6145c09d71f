"""The array kernels (runtime/kernels.py) against straightforward NumPy and
Python loops, with hypothesis for the elementwise, reduce and scan ops, and
against themselves under jax.numpy (the scheduled runtime's array module)."""
import functools
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from tidal.runtime import kernels as K

F32 = np.dtype(np.float32)
floats = hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                    elements=st.floats(-20, 20, width=32))

UNARY_REFERENCE = {
    "neg": lambda v: -v, "exp": math.exp, "tanh": math.tanh,
    "sigmoid": lambda v: 1 / (1 + math.exp(-v)), "relu": lambda v: v if v > 0 else 0.0,
    "abs": abs, "sign": lambda v: (v > 0) - (v < 0), "sin": math.sin, "cos": math.cos,
    "floor": math.floor, "ceil": math.ceil, "square": lambda v: v * v,
    "log": lambda v: math.log(abs(v) + 0.5), "sqrt": lambda v: math.sqrt(abs(v) + 0.5),
    "rsqrt": lambda v: 1 / math.sqrt(abs(v) + 0.5), "reciprocal": lambda v: 1 / (abs(v) + 0.5),
}
POSITIVE_ONLY = {"log", "sqrt", "rsqrt", "reciprocal"}


@given(x=floats, kind=st.sampled_from(sorted(UNARY_REFERENCE)))
def test_unary(x, kind):
    arg = np.abs(x) + np.float32(0.5) if kind in POSITIVE_ONLY else x
    got = K.unary(np, kind, arg, F32)
    expected = np.array([UNARY_REFERENCE[kind](float(v)) for v in x.ravel()], np.float64).reshape(x.shape)
    assert got.dtype == F32 and got.shape == x.shape
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=2e-6)


def test_unary_not():
    assert K.unary(np, "not", np.array([True, False]), np.dtype(bool)).tolist() == [False, True]


FLOAT_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "max": max, "min": min,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}
INT_BINARY = {
    "add": lambda a, b: a + b, "mod": lambda a, b: a % b, "floordiv": lambda a, b: a // b,
    "div": lambda a, b: int(a / b), "pow": lambda a, b: a ** abs(b), "max": max,
}


def elementwise(fn, a, b, shape):
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    return np.array([fn(x.item(), y.item()) for x, y in zip(a.ravel(), b.ravel())]).reshape(shape)


@given(data=st.data(), kind=st.sampled_from(sorted(FLOAT_BINARY)))
def test_binary_float_with_broadcasting(data, kind):
    shapes, result = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_side=3))
    elems = st.floats(-8, 8, width=32).filter(lambda v: abs(v) > 0.1)
    a = data.draw(hnp.arrays(np.float32, shapes[0], elements=elems))
    b = data.draw(hnp.arrays(np.float32, shapes[1], elements=elems))
    dtype = np.dtype(bool) if kind in ("eq", "ne", "lt", "le", "gt", "ge") else F32
    got = K.binary(np, kind, a, b, dtype)
    assert got.shape == result and got.dtype == dtype
    np.testing.assert_allclose(got, elementwise(FLOAT_BINARY[kind], a, b, result).astype(dtype), rtol=1e-6)


@given(data=st.data(), kind=st.sampled_from(sorted(INT_BINARY)))
def test_binary_int(data, kind):
    shapes, result = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_side=3))
    a = data.draw(hnp.arrays(np.int64, shapes[0], elements=st.integers(-50, 50)))
    b = data.draw(hnp.arrays(np.int64, shapes[1], elements=st.integers(-6, 6).filter(bool)))
    if kind == "pow":
        b = np.abs(b)
    got = K.binary(np, kind, a, b, np.dtype(np.int64))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, elementwise(INT_BINARY[kind], a, b, result))


@given(a=hnp.arrays(bool, 5), b=hnp.arrays(bool, 5), kind=st.sampled_from(["and", "or", "xor"]))
def test_binary_logical(a, b, kind):
    fn = {"and": lambda x, y: x and y, "or": lambda x, y: x or y, "xor": lambda x, y: x != y}[kind]
    assert K.binary(np, kind, a, b, np.dtype(bool)).tolist() == [fn(x, y) for x, y in zip(a, b)]


REDUCE = {"sum": sum, "prod": math.prod, "max": max, "min": min, "any": any, "all": all}


@given(data=st.data(), kind=st.sampled_from(sorted(REDUCE)), keepdim=st.booleans())
def test_reduce(data, kind, keepdim):
    x = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=3),
                             elements=st.integers(-3, 3).map(float)))
    dims = data.draw(st.lists(st.integers(0, x.ndim - 1), unique=True, max_size=x.ndim))
    kept = [d for d in range(x.ndim) if d not in dims]
    moved = np.moveaxis(x, dims, list(range(x.ndim - len(dims), x.ndim)))
    rows = moved.reshape([x.shape[d] for d in kept] + [-1])
    expected = np.array([REDUCE[kind](row.tolist()) for row in rows.reshape(-1, rows.shape[-1])])
    expected = expected.reshape([x.shape[d] for d in kept])
    if keepdim:
        expected = expected.reshape([1 if d in dims else n for d, n in enumerate(x.shape)])
    dtype = np.dtype(bool) if kind in ("any", "all") else np.dtype(np.float64)
    got = K.reduce(np, kind, dims, keepdim, x, dtype)
    assert got.shape == expected.shape and got.dtype == dtype
    np.testing.assert_array_equal(got, expected.astype(dtype))


def test_reduce_max_of_an_empty_window_is_an_error():
    with pytest.raises(K.KernelError, match="empty dimension"):
        K.reduce(np, "max", [0], False, np.zeros((0, 4)), F32)
    assert K.reduce(np, "sum", [0], False, np.zeros((0, 4)), F32).tolist() == [0, 0, 0, 0]


SCAN = {"cumsum": lambda a, b: a + b, "cumprod": lambda a, b: a * b, "cummax": max, "cummin": min}


@given(data=st.data(), kind=st.sampled_from(sorted(SCAN)), reverse=st.booleans())
def test_scan(data, kind, reverse):
    x = data.draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                             elements=st.integers(-3, 3)))
    dim = data.draw(st.integers(0, x.ndim - 1))
    lines = np.moveaxis(x, dim, -1).reshape(-1, x.shape[dim])
    out = []
    for line in lines.tolist():
        seq = line[::-1] if reverse else line
        acc = list(itertools.accumulate(seq, SCAN[kind]))
        out.append(acc[::-1] if reverse else acc)
    expected = np.moveaxis(np.array(out).reshape(np.moveaxis(x, dim, -1).shape), -1, dim)
    np.testing.assert_array_equal(K.scan(np, kind, dim, reverse, x, np.dtype(np.int64)), expected)


def test_indexing_kernels_against_loops():
    rng = np.random.default_rng(0)
    src = rng.standard_normal((3, 5)).astype(np.float32)
    idx = np.array([[4, 0], [1, 1]])
    got = K.gather(np, 1, src, idx, F32)
    assert got.tolist() == [[src[i, idx[i, j]] for j in range(2)] for i in range(2)]
    dst = np.zeros((3, 5), np.float32)
    upd = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    expected = dst.copy()
    for i, j in itertools.product(range(2), range(2)):
        expected[i, idx[i, j]] += upd[i, j]
    np.testing.assert_array_equal(K.scatter_add(np, 1, dst, idx, upd, F32), expected)
    assert not dst.any()  # no in-place update
    np.testing.assert_array_equal(K.index_select(np, 0, src, np.array([2, 0]), F32), src[[2, 0]])
    np.testing.assert_array_equal(K.index_select(np, 1, src, np.array(3), F32), src[:, 3])
    np.testing.assert_array_equal(K.take(np, 1, 2, src, F32), src[:, 2])
    np.testing.assert_array_equal(K.slice_(np, 1, 1, 3, src, F32), src[:, 1:4])
    with pytest.raises(K.KernelError, match="out of range"):
        K.slice_(np, 1, 3, 3, src, F32)
    with pytest.raises(K.KernelError, match="out of range"):
        K.gather(np, 1, src, np.array([[5]]), F32)
    padded = K.pad(np, 0, 1, 2, 7.0, src, F32)
    assert padded.shape == (6, 5) and (padded[0] == 7).all() and (padded[4:] == 7).all()
    np.testing.assert_array_equal(K.concat(np, 1, [src, src[:, :1]], F32), np.hstack([src, src[:, :1]]))
    assert K.iota(np, (2, 3), 1, np.dtype(np.int64)).tolist() == [[0, 1, 2], [0, 1, 2]]
    assert K.iota(np, (2, 3), 0, np.dtype(np.int64)).tolist() == [[0, 0, 0], [1, 1, 1]]


ARGS = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
JAX_CASES = {
    "unary": lambda xp: K.unary(xp, "sigmoid", xp.asarray(ARGS), F32),
    "binary": lambda xp: K.binary(xp, "div", xp.asarray(ARGS), xp.asarray(ARGS[0] + 1), F32),
    "int-div": lambda xp: K.binary(xp, "div", xp.asarray([7, -7]), xp.asarray([2, 2]), np.dtype(np.int32)),
    "where": lambda xp: K.where(xp, xp.asarray(ARGS > 0.5), xp.asarray(ARGS), xp.asarray(0.0, F32), F32),
    "reduce": lambda xp: K.reduce(xp, "max", [0], True, xp.asarray(ARGS), F32),
    "scan": lambda xp: K.scan(xp, "cummax", 1, True, xp.asarray(ARGS[::-1]), F32),
    "matmul": lambda xp: K.matmul(xp, xp.asarray(ARGS), xp.asarray(ARGS.T), F32),
    "reshape": lambda xp: K.reshape(xp, (4, 3), xp.asarray(ARGS), F32),
    "permute": lambda xp: K.permute(xp, [1, 0], xp.asarray(ARGS), F32),
    "expand": lambda xp: K.expand(xp, (2, 3, 4), xp.asarray(ARGS), F32),
    "squeeze": lambda xp: K.squeeze(xp, 0, xp.asarray(ARGS[None]), F32),
    "unsqueeze": lambda xp: K.unsqueeze(xp, 1, xp.asarray(ARGS), F32),
    "flip": lambda xp: K.flip(xp, 1, xp.asarray(ARGS), F32),
    "slice": lambda xp: K.slice_(xp, 1, 1, 2, xp.asarray(ARGS), F32),
    "take": lambda xp: K.take(xp, 0, 2, xp.asarray(ARGS), F32),
    "index_select": lambda xp: K.index_select(xp, 1, xp.asarray(ARGS), xp.asarray([3, 0]), F32),
    "gather": lambda xp: K.gather(xp, 1, xp.asarray(ARGS), xp.asarray([[1], [3]]), F32),
    "scatter_add": lambda xp: K.scatter_add(xp, 1, xp.asarray(ARGS), xp.asarray([[1, 1]]),
                                            xp.asarray([[1.0, 2.0]], F32), F32),
    "concat": lambda xp: K.concat(xp, 0, [xp.asarray(ARGS), xp.asarray(ARGS)], F32),
    "pad": lambda xp: K.pad(xp, 1, 2, 1, -1.0, xp.asarray(ARGS), F32),
    "cast": lambda xp: K.cast(xp, xp.asarray(ARGS * 3), np.dtype(np.int32)),
    "constant": lambda xp: K.constant(xp, ARGS, F32),
    "full": lambda xp: K.full(xp, (2, 2), 1.5, np.dtype(np.float16)),
    "iota": lambda xp: K.iota(xp, (2, 3), 1, np.dtype(np.int32)),
    "random": lambda xp: K.random(xp, "normal", 3, (1, 2), (2, 2), F32),
    "symbol_value": lambda xp: K.symbol_value(xp, 5, np.dtype(np.int32)),
}


@functools.lru_cache(maxsize=1)
def jnp():
    import jax.numpy  # 32-bit mode (the default): the cases above use no 64-bit types

    return jax.numpy


@pytest.mark.parametrize("case", sorted(JAX_CASES))
def test_kernels_run_under_jax_numpy(case):
    expected = JAX_CASES[case](np)
    got = JAX_CASES[case](jnp())
    assert type(got).__module__.startswith("jax")
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


@given(values=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                 st.floats(-1e20, 1e20),
                                 st.sampled_from([2.0 ** 31, -(2.0 ** 31), 2.0 ** 63, 255.5, -0.5, 127.9])),
                       min_size=1, max_size=12),
       src=st.sampled_from([np.float16, np.float32, np.float64]),
       dtype=st.sampled_from(["int8", "int16", "int32", "int64"]))
def test_float_to_int_casts_saturate_as_xla_does(values, src, dtype):
    """NaN -> 0 and out-of-range values -> the type's least or greatest value on
    NumPy as in XLA (jax.numpy), so backends agree where NumPy alone would
    give platform-dependent values (a random program's overflowed cast)."""
    import jax
    import jax.numpy as jnp
    with np.errstate(over="ignore"):
        x = np.asarray(values, dtype=np.float64).astype(src)
    with jax.enable_x64(True):
        want = np.asarray(jnp.asarray(x).astype(dtype))
    got = K.cast(np, x, dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@given(data=st.data(), reverse=st.booleans(), sequential=st.booleans())
def test_linear_scan_under_jax_both_forms(data, reverse, sequential):
    """linear_scan under jax.numpy, as the sequential lax.scan (CPU's default) and as
    the associative scan (other platforms'), against a Python loop over the recurrence."""
    import jax.numpy as jnp

    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    dim = data.draw(st.integers(0, len(shape) - 1))
    elements = st.floats(-1, 1, width=32)
    a = data.draw(hnp.arrays(np.float32, shape, elements=elements))
    b = data.draw(hnp.arrays(np.float32, shape, elements=elements))
    am, bm = np.moveaxis(a.astype(np.float64), dim, 0), np.moveaxis(b.astype(np.float64), dim, 0)
    want = bm.copy()
    order = range(len(bm) - 2, -1, -1) if reverse else range(1, len(bm))
    for k in order:
        want[k] = bm[k] + am[k] * want[k + 1 if reverse else k - 1]
    got = K.linear_scan(jnp, dim, reverse, jnp.asarray(a), jnp.asarray(b), F32, sequential=sequential)
    np.testing.assert_allclose(np.asarray(got), np.moveaxis(want, 0, dim), rtol=1e-5, atol=1e-5)


def test_matmul_does_not_depend_on_the_operands_layout():
    """NumPy's matmul rounds a transposed (strided) operand otherwise than its
    contiguous copy (BLAS's kernels for the two differ by an ulp): a permute
    read as a view inside a fused island and the same permute copied into a
    store must give the same product, so the kernel multiplies contiguous
    operands. 134 of 2000 random shapes up to 8 differ without it."""
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(300):
        n, k, m = (int(v) for v in rng.integers(1, 9, 3))
        a = rng.standard_normal((n, k)).astype(np.float32)
        bt = rng.standard_normal((m, k)).astype(np.float32)
        view, copy = bt.T, np.ascontiguousarray(bt.T)
        differs += not np.array_equal(a @ view, a @ copy)
        np.testing.assert_array_equal(K.matmul(np, a, view, np.float32), K.matmul(np, a, copy, np.float32))
        np.testing.assert_array_equal(K.matmul(np, view.T, a.T, np.float32), K.matmul(np, copy.T, a.T, np.float32))
    assert differs > 0   # the layout does matter to NumPy here, so the test can fail


def test_sum_does_not_depend_on_the_operands_layout():
    """NumPy sums pairwise along the memory order, so a transposed view and its
    contiguous copy sum to different floats; the kernel sums the contiguous
    form (as for matmul)."""
    rng = np.random.default_rng(1)
    differs = 0
    for _ in range(200):
        n, m = (int(v) for v in rng.integers(1, 300, 2))
        x = rng.standard_normal((m, n)).astype(np.float32)
        view, copy = x.T, np.ascontiguousarray(x.T)
        for axes in ((0,), (1,), (0, 1)):
            differs += not np.array_equal(view.sum(axes), copy.sum(axes))
            np.testing.assert_array_equal(K.reduce(np, "sum", axes, False, view, np.float32),
                                          K.reduce(np, "sum", axes, False, copy, np.float32))
    assert differs > 0


@given(data=st.data(), k=st.integers(1, K.SMALL_CONTRACTION + 2), dtype=st.sampled_from([np.float32, np.float64]))
def test_small_contractions_under_jax_are_matmuls(data, k, dtype):
    """Under jax.numpy a float32 contraction of at most SMALL_CONTRACTION terms runs
    as a sum of broadcast products (so that XLA fuses it into its reader; float64
    keeps the dot); with
    batch axes broadcast either way it is NumPy's matmul, in shape and value."""
    import jax
    import jax.numpy as jnp

    batch = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    m, n = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    elements = st.floats(-4, 4, width=32)
    a = data.draw(hnp.arrays(dtype, batch.input_shapes[0] + (m, k), elements=elements))
    b = data.draw(hnp.arrays(dtype, batch.input_shapes[1] + (k, n), elements=elements))
    with jax.enable_x64(dtype == np.float64):
        got = K.matmul(jnp, jnp.asarray(a), jnp.asarray(b), np.dtype(dtype))
        assert got.dtype == np.dtype(dtype)
        want = np.matmul(a.astype(np.float64), b.astype(np.float64))
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
        hlo = jax.jit(lambda x, y: K.matmul(jnp, x, y, np.dtype(dtype))).lower(a, b).as_text()
        assert ("dot_general" in hlo) == (k > K.SMALL_CONTRACTION or dtype == np.float64)
