"""bfloat16 (`td.bfloat16`, `ml_dtypes.bfloat16`, MLIR `bf16`) as a first-class dtype.

Promotion is checked against JAX's; programs in bfloat16 run on every backend
(`td.backends()`) and are compared with float32 NumPy on the same (bfloat16)
data within BF16_RTOL/BF16_ATOL: bfloat16 keeps 8 significant bits (an ulp is
2**-7 relative, 0.8%; rounding errs by at most half of it), and a chain of a
few ops rounds a few times. What is exact is checked exactly: casts, sums of
ones (float32 accumulation), data carried through constants and params.
"""
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import tidal as td
from tidal.frontend import dtypes as dt
from tidal.frontend.errors import TidalError

BF16 = np.dtype(ml_dtypes.bfloat16)
BF16_RTOL, BF16_ATOL = 2e-2, 1e-2
BACKENDS = td.backends()
F32 = np.float32
RNG = np.random.default_rng(16)


def close(got, want, rtol=BF16_RTOL, atol=BF16_ATOL):
    got = np.asarray(got)
    assert got.dtype == BF16, got.dtype
    np.testing.assert_allclose(got.astype(F32), np.asarray(want, F32), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- names and promotion
def test_bfloat16_names():
    for name in (td.bfloat16, "bfloat16", "bf16", ml_dtypes.bfloat16, jnp.bfloat16, BF16):
        assert dt.as_dtype(name) == BF16
    assert dt.mlir_name(BF16) == "bf16" and dt.is_float(BF16) and not dt.is_float(np.int32)
    with pytest.raises(TidalError, match="bfloat16"):      # the error lists the supported dtypes
        dt.as_dtype(np.complex64)


DTYPES = {"bf16": BF16, "f16": np.float16, "f32": np.float32, "f64": np.float64,
          "i32": np.int32, "i64": np.int64, "bool": np.bool_}


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_promotion_is_jax_s(a, b):
    want = np.dtype(jnp.promote_types(DTYPES[a], DTYPES[b]))
    assert dt.promote([np.dtype(DTYPES[a]), np.dtype(DTYPES[b])]) == want
    with td.Program():
        x = td.zeros((2,), dtype=DTYPES[a])
        y = td.zeros((2,), dtype=DTYPES[b])
        assert (x + y).dtype == want and (y * x).dtype == want


@pytest.mark.parametrize("scalar", [0.5, 2, True, -3.25])
def test_weak_python_scalars_keep_bfloat16_as_in_jax(scalar):
    want = np.dtype(jnp.result_type(jnp.zeros(2, jnp.bfloat16), scalar))
    assert want == BF16
    with td.Program():
        x = td.zeros((2,), dtype="bfloat16")
        assert (x + scalar).dtype == want and (scalar * x).dtype == want and td.maximum(x, scalar).dtype == want


def test_numpy_scalars_and_arrays():
    """NumPy scalars are weak in Tidal (the tensor's dtype wins, PyTorch's rule; JAX
    keeps them strong), bfloat16 ones included; NumPy arrays are strong."""
    with td.Program():
        x = td.zeros((2,), dtype="bfloat16")
        f = td.zeros((2,), dtype="float32")
        n = td.zeros((2,), dtype="int32")
        assert (x * np.float32(2)).dtype == BF16 and (x + np.float64(0.5)).dtype == BF16
        assert (f * ml_dtypes.bfloat16(2)).dtype == np.float32
        assert (n * ml_dtypes.bfloat16(2)).dtype == np.float32     # an int meeting a weak float: the default float
        assert (x + np.array(1.0, np.float32)).dtype == np.float32
        assert td.constant(ml_dtypes.bfloat16(1.5)).dtype == BF16


def test_functions_of_bfloat16_are_bfloat16():
    with td.Program():
        x = td.zeros((3, 4), dtype="bfloat16")
        for y in (x.exp(), x.tanh(), x.sigmoid(), x.sqrt(), x.mean(), x.sum(0), x.cumsum(1), x.softmax(-1),
                  x.log_softmax(-1), x.amax(0), x @ td.zeros((4, 2), dtype="bfloat16"), td.where(x > 0, x, 0.0)):
            assert y.dtype == BF16
        assert x.argmax(0).dtype == np.int64 and (x > 0).dtype == np.bool_
        assert (td.zeros((2,), dtype="int8").astype("bfloat16") + 1).dtype == BF16


@pytest.mark.parametrize("backend", BACKENDS)
def test_mixed_dtypes_run_as_promoted(backend):
    """bf16 with f16 computes in f32, with ints and bools in bf16, on every backend."""
    with td.Program("bf16_mixed") as p:
        (t, T), = p.dims("t")
        a = td.input("a", shape=(3,), dtype="bfloat16", domain=(t,))
        h = td.input("h", shape=(3,), dtype="float16", domain=(t,))
        n = td.input("n", shape=(3,), dtype="int32", domain=(t,))
        p.output("ah", a + h)
        p.output("an", a * n)
        p.output("ab", a + (n > 0))
    out = p.compile(backend=backend).run(bounds={T: 1}, inputs={
        "a": np.array([[1.5, 2, 3]], BF16), "h": np.array([[0.25, 1, 2]], np.float16),
        "n": np.array([[1, -2, 3]], np.int32)})
    assert out["ah"].dtype == F32 and out["ah"].tolist() == [[1.75, 3.0, 5.0]]
    assert out["an"].dtype == BF16 and out["an"].astype(F32).tolist() == [[1.5, -4.0, 9.0]]
    assert out["ab"].dtype == BF16 and out["ab"].astype(F32).tolist() == [[2.5, 2.0, 4.0]]


# ---------------------------------------------------------------- programs on every backend
def _ops_program(W, G):
    with td.Program("bf16_ops") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4, 8), dtype="bfloat16", domain=(t,))
        y = td.input("y", shape=(4, 8), dtype=td.bfloat16, domain=(t,))
        w, g = td.param("w", W), td.param("g", G)
        outs = {
            "add": x + y, "mul": x * y, "div": x / (y.abs() + 1), "exp": x.exp(), "tanh": x.tanh(),
            "sigmoid": x.sigmoid(), "sqrt": x.abs().sqrt(), "affine": x * 0.5 + 1,
            "matmul": x @ w, "sum": x.sum(-1), "mean": x.mean(-1), "max": x.amax(-1),
            "cumsum": x.cumsum(-1), "softmax": x.softmax(-1),
            "rmsnorm": x * td.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * g,
            "prefix": x[0:t + 1].sum(0),        # a sum over a growing window (sdg-lift: a scan)
        }
        for name, v in outs.items():
            p.output(name, v)
    return p, T


def _ops_reference(X, Y, W, G):
    x, y, w, g = (a.astype(F32) for a in (X, Y, W, G))
    e = np.exp(x - x.max(-1, keepdims=True))
    return {
        "add": x + y, "mul": x * y, "div": x / (np.abs(y) + 1), "exp": np.exp(x), "tanh": np.tanh(x),
        "sigmoid": 1 / (1 + np.exp(-x)), "sqrt": np.sqrt(np.abs(x)), "affine": x * 0.5 + 1,
        "matmul": x @ w, "sum": x.sum(-1), "mean": x.mean(-1), "max": x.max(-1),
        "cumsum": np.cumsum(x, -1), "softmax": e / e.sum(-1, keepdims=True),
        "rmsnorm": x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g,
        "prefix": np.cumsum(x, 0),
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_matmul_reductions_softmax_rmsnorm(backend):
    W, G = RNG.standard_normal((8, 6)).astype(BF16), (1 + 0.1 * RNG.standard_normal(8)).astype(BF16)
    p, T = _ops_program(W, G)
    X, Y = (RNG.standard_normal((5, 4, 8)).astype(BF16) for _ in range(2))
    out = p.compile(backend=backend).run(bounds={T: 5}, inputs={"x": X, "y": Y})
    for name, want in _ops_reference(X, Y, W, G).items():
        try:
            close(out[name], want)
        except AssertionError as e:
            raise AssertionError(f"{name} on {backend}: {e}") from None


@pytest.mark.parametrize("backend", BACKENDS)
def test_sums_and_matmuls_accumulate_in_float32(backend):
    """In bfloat16 256 + 1 is 256: 1000 ones add up to 1000 only in a wider accumulator."""
    with td.Program("bf16_acc") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(1000,), dtype="bfloat16", domain=(t,))
        m = td.input("m", shape=(2, 512), dtype="bfloat16", domain=(t,))
        p.output("sum", x.sum())
        p.output("mean", x.mean())
        p.output("cumsum", x.cumsum(0))
        p.output("matmul", m @ m.transpose(0, 1))
    out = p.compile(backend=backend).run(bounds={T: 2}, inputs={"x": np.ones((2, 1000), BF16),
                                                               "m": np.ones((2, 2, 512), BF16)})
    assert out["sum"].dtype == BF16 and out["sum"].astype(F32).tolist() == [1000, 1000]
    assert out["mean"].astype(F32).tolist() == [1, 1]
    np.testing.assert_array_equal(out["cumsum"].astype(F32),
                                  np.broadcast_to(np.arange(1, 1001, dtype=F32).astype(BF16).astype(F32), (2, 1000)))
    assert (out["matmul"].astype(F32) == 512).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_casts(backend):
    with td.Program("bf16_casts") as p:
        (t, T), = p.dims("t")
        h = td.input("h", shape=(8,), dtype="bfloat16", domain=(t,))
        n = td.input("n", shape=(5,), dtype="int32", domain=(t,))
        b = td.input("b", shape=(2,), dtype="bool", domain=(t,))
        f = td.input("f", shape=(3,), dtype="float32", domain=(t,))
        p.output("h_i32", h.astype("int32"))
        p.output("h_bool", h.astype("bool"))
        p.output("h_f32", h.astype("float32"))
        p.output("n_bf16", n.astype("bfloat16"))
        p.output("b_bf16", td.astype(b, td.bfloat16))
        p.output("f_bf16", f.astype("bf16"))
    H = np.array([-3.7, -0.5, 0.5, 2.5, 1e10, -1e10, np.nan, np.inf], BF16)
    F = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -2.75], F32)   # halfway cases round to even
    out = p.compile(backend=backend).run(bounds={T: 1}, inputs={
        "h": H[None], "n": np.array([[-5, 0, 7, 300, 257]], np.int32), "b": np.array([[True, False]]),
        "f": F[None]})
    big, small = np.iinfo(np.int32).max, np.iinfo(np.int32).min
    assert out["h_i32"][0].tolist() == [-3, 0, 0, 2, big, small, 0, big]    # truncate, saturate, NaN -> 0
    assert out["h_bool"][0].tolist() == [True] * 8
    assert out["h_f32"].dtype == F32 and np.array_equal(out["h_f32"][0], H.astype(F32), equal_nan=True)
    assert out["n_bf16"].dtype == BF16 and out["n_bf16"][0].astype(F32).tolist() == [-5, 0, 7, 300, 256]
    assert out["b_bf16"].dtype == BF16 and out["b_bf16"][0].astype(F32).tolist() == [1, 0]
    assert out["f_bf16"][0].astype(F32).tolist() == [1.0, 1 + 2 ** -6, -2.75]


@pytest.mark.parametrize("backend", BACKENDS)
def test_param_constant_and_input_data(backend):
    """bfloat16 data in params (declared in the rt text, bound at run time), in a
    small constant (hex in the text) and a large one (its attribute set from the
    buffer: emit.LARGE_ELEMENTS), and in an input; outputs come back bfloat16
    with exactly the sums NumPy rounds to."""
    small = RNG.standard_normal((3, 4)).astype(BF16)
    large = RNG.standard_normal((32, 16)).astype(BF16)
    table = RNG.standard_normal((32, 16)).astype(BF16)
    c = np.array([0.5, -1.25, 3.0, 1e-3], BF16)
    with td.Program("bf16_data") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), dtype="bfloat16", domain=(t,))
        ws, wl = td.param("small", small), td.param("large", large)
        assert ws.dtype == wl.dtype == BF16
        p.output("small", ws + td.constant(c))
        p.output("large", wl + x[0, 0])
        p.output("table", wl + td.constant(table))
        p.output("x", x + c)
    text = p.mlir(locations=False)
    assert "!tidal.tensor<[3, 4], bf16>" in text and "tensor<4xbf16>" in text and "tensor<32x16xbf16>" in text
    X = RNG.standard_normal((3, 4)).astype(BF16)
    out = p.compile(backend=backend).run(bounds={T: 3}, inputs={"x": X})
    assert all(v.dtype == BF16 for v in out.values())
    np.testing.assert_array_equal(out["small"], small + c)
    np.testing.assert_array_equal(out["large"], large + X[0, 0])
    np.testing.assert_array_equal(out["table"], large + table)
    np.testing.assert_array_equal(out["x"], X + c)


def test_hex_text_of_bfloat16_parses_back():
    """emit.dense prints bfloat16 as the hex of its little-endian bytes (two a
    value); MLIR parses it, and dense_array reads it back bit for bit."""
    from mlir import ir

    from tidal.dialects import make_context
    from tidal.dialects.element_types import dense_array
    from tidal.frontend.emit import dense

    data = np.array([[1.5, -2.0], [np.nan, 3.25]], BF16)
    text = dense(data)
    assert text == 'dense<"0xC03F00C0C07F5040"> : tensor<2x2xbf16>'
    with make_context():
        back = dense_array(ir.Attribute.parse(text))
        splat = dense_array(ir.Attribute.parse("dense<1.5> : tensor<2x3xbf16>"))
    assert back.dtype == BF16 and np.array_equal(back, data, equal_nan=True)
    assert splat.dtype == BF16 and splat.shape == (2, 3) and (splat.astype(F32) == 1.5).all()
    with td.Program("bf16_text") as p:
        p.output("c", td.constant(data) * 2)
    assert "tensor<2x2xbf16>" in p.mlir(locations=False)


def test_compile_cache_tells_bfloat16_constants_apart_and_shares_across_weights():
    """The compile cache digests dense attributes' bytes, bf16 ones too: equal
    constants hit, other constants miss. Params are bound at run time, so other
    bf16 weights hit, and each executable computes with its own."""
    def program(values, weights):
        with td.Program("bf16_cache") as p:
            p.output("w", td.param("w", weights) * td.constant(values))
        return p
    a = RNG.standard_normal((4, 4)).astype(BF16)
    b = a + np.asarray(1, BF16)
    first, again, other = (program(v, a).compile(backend="numpy") for v in (a, a.copy(), b))
    assert not first.cache_hit and again.cache_hit and not other.cache_hit
    np.testing.assert_array_equal(other.run(bounds={}, inputs={})["w"], a * b)
    reweighted = program(a, b).compile(backend="numpy")
    assert reweighted.cache_hit and reweighted.compiled is first.compiled
    np.testing.assert_array_equal(reweighted.run(bounds={}, inputs={})["w"], b * a)
    np.testing.assert_array_equal(first.run(bounds={}, inputs={})["w"], a * a)


def test_inputs_convert_as_other_floats():
    """float32 data feeds a bfloat16 input (rounded), bfloat16 data a float32 one;
    floats never feed an integer input implicitly."""
    with td.Program("bf16_inputs") as p:
        (t, T), = p.dims("t")
        h = td.input("h", shape=(2,), dtype="bfloat16", domain=(t,))
        f = td.input("f", shape=(2,), domain=(t,))
        n = td.input("n", shape=(2,), dtype="int32", domain=(t,))
        p.output("h", h)
        p.output("f", f)
        p.output("n", n + 0)
    exe = p.compile(backend="reference")
    out = exe.run(bounds={T: 1}, inputs={"h": np.array([[1 + 2 ** -9, 3.0]], F32), "f": np.ones((1, 2), BF16),
                                         "n": np.zeros((1, 2), np.int32)})
    assert out["h"].dtype == BF16 and out["h"].astype(F32).tolist() == [[1.0, 3.0]]
    assert out["f"].dtype == F32
    with pytest.raises(ValueError, match="floats are not converted"):
        exe.run(bounds={T: 1}, inputs={"h": np.ones((1, 2), BF16), "f": np.ones((1, 2), F32),
                                       "n": np.ones((1, 2), BF16)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_recurrence_over_t(backend):
    """s[t + 1] = 0.9 s[t] + x[t + 1] in bfloat16: each step rounds to bfloat16
    (the reference exactly as NumPy's bfloat16 does), close to float32 throughout."""
    with td.Program("bf16_rec") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), dtype="bfloat16", domain=(t,))
        s = td.recurrent(shape=(3,), dtype="bfloat16", domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] * 0.9 + x[t + 1]
        p.output("s", s)
    X = RNG.uniform(0, 1, (40, 3)).astype(BF16)
    out = p.compile(backend=backend).run(bounds={T: 40}, inputs={"x": X})["s"]
    steps16, steps32 = [X[0]], [X[0].astype(F32)]
    for row in X[1:]:
        steps16.append(steps16[-1] * np.asarray(0.9, BF16) + row)
        steps32.append(steps32[-1] * F32(0.9) + row.astype(F32))
    close(out, np.stack(steps32), rtol=3e-2)
    if backend == "reference":
        np.testing.assert_array_equal(out, np.stack(steps16))


def test_gradient_of_a_bfloat16_param():
    """A bfloat16 td.param is a parameter (a float): its gradient is bfloat16."""
    W = RNG.standard_normal((4, 3)).astype(BF16)
    with td.Program("bf16_grad") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), dtype="bfloat16", domain=(t,))
        w = td.param("w", W)
        loss = (x @ w).tanh().sum()
        (gw,) = td.grad(loss, [w])
        assert gw.dtype == BF16
        p.output("gw", gw)
    X = RNG.standard_normal((1, 4)).astype(BF16)
    got = p.compile(backend="reference").run(bounds={T: 1}, inputs={"x": X})["gw"]
    with jax.enable_x64(False):
        want = jax.grad(lambda w: jnp.tanh(X[0].astype(F32) @ w).sum())(W.astype(F32))
    close(got, want, rtol=3e-2, atol=2e-2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_carried_bfloat16_sum_carries_in_float32(backend):
    """sdg-accumulate's running sum of bf16 values over t adds in f32, as the
    block sum it replaces does: 300 ones make 300, where bf16 would stop at 256."""
    from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

    def passes(carry):
        return tuple("sdg-vectorize{max-block-bytes=1 assume-bound=8}" if q == "sdg-vectorize" else
                     f"sdg-accumulate{{min-bytes={carry} assume-bound=8}}" if q == "sdg-accumulate" else q
                     for q in DEFAULT_SDG_PASSES)
    with td.Program("bf16_carried") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(2,), dtype="bfloat16", domain=(i, t))
        y = x * 2.0
        s = y[i, 0:T].sum(0)
        p.output("s", s)
        p.output("u", s * 2.0)
    X = np.full((2, 300, 2), 0.5, BF16)
    for carry in (0, 1 << 40):
        exe = p.compile(backend=backend, passes=passes(carry))
        assert ("sdg.merge" in exe.stages["sdg-accumulate"]) == (carry == 0)
        out = exe.run(bounds={I: 2, T: 300}, inputs={"x": X})
        assert out["s"].dtype == BF16 and (out["s"].astype(F32) == 300).all()
        assert (out["u"].astype(F32) == 600).all()


def test_safetensors_hold_bfloat16(tmp_path):
    """save_weights writes bf16 arrays as BF16; load_weights widens them to float32
    exactly, or keeps them with keep_bfloat16=True; an .npz refuses them."""
    w = RNG.standard_normal((3, 5)).astype(BF16)
    path = td.nn.save_weights(tmp_path / "m.safetensors", {"w": w, "b": np.arange(3, dtype=F32)})
    kept = td.nn.load_weights(path, keep_bfloat16=True)
    assert kept["w"].dtype == BF16 and np.array_equal(kept["w"], w) and kept["b"].dtype == F32
    wide = td.nn.load_weights(path)
    assert wide["w"].dtype == F32 and np.array_equal(wide["w"], w.astype(F32))
    with pytest.raises(TidalError, match="bfloat16"):
        td.nn.save_weights(tmp_path / "m.npz", {"w": w})
