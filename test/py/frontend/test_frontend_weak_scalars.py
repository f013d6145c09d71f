"""NumPy scalars are weak, like Python scalars: the tensor's dtype wins
(`float32 * np.float64(0.125)` is float32), a scalar of a higher kind gives
that kind's default dtype (`int32 * 0.5` is float32), NumPy arrays (0-d ones
included) keep their dtype. Checked on the traced rt types and on the run
outputs of the numpy and jax backends, against NumPy."""
import math
import re

import numpy as np
import pytest

import tidal as td

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
I32, I64, BOOL = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)
RNG = np.random.default_rng(7)
N = 3

# name: (input, Tidal expression, the NumPy expression it stands for, result dtype)
CASES = {
    "f32_mul_np_f64": ("x", lambda a: a * (1.0 / np.sqrt(8)), lambda a: a * (1.0 / np.sqrt(8)), F32),
    "np_f64_mul_f32": ("x", lambda a: np.float64(0.125) * a, lambda a: np.float64(0.125) * a, F32),
    "f32_div_np_f32": ("x", lambda a: a / np.float32(3), lambda a: a / np.float32(3), F32),
    "f32_pow_np_f64": ("x", lambda a: a ** np.float64(2), lambda a: a ** np.float64(2), F32),
    "f16_mul_np_f32": ("h", lambda a: a * np.float32(3), lambda a: a * np.float32(3), F16),
    "f16_add_np_f64": ("h", lambda a: a + np.float64(0.5), lambda a: a + np.float64(0.5), F16),
    "i32_add_np_i64": ("n", lambda a: a + np.int64(3), lambda a: a + np.int64(3), I32),
    "np_i64_floordiv_i32": ("n", lambda a: np.int64(7) // a, lambda a: np.int64(7) // a, I32),
    "i32_mul_np_f64": ("n", lambda a: a * np.float64(0.5), lambda a: a * np.float64(0.5), F32),
    "i32_mul_py_float": ("n", lambda a: a * 0.5, lambda a: a * 0.5, F32),
    "b_add_np_i64": ("b", lambda a: a + np.int64(2), lambda a: a + np.int64(2), I64),
    "b_and_np_bool": ("b", lambda a: a & np.bool_(True), lambda a: a & np.bool_(True), BOOL),
    "maximum_np_f64": ("x", lambda a: td.maximum(a, np.float64(0.25)), lambda a: np.maximum(a, 0.25), F32),
    "where_np_f64": ("x", lambda a: td.where(a > 0, a, np.float64(-1)), lambda a: np.where(a > 0, a, -1), F32),
    "clamp_np_f64": ("x", lambda a: a.clamp(np.float64(-0.5), np.float64(0.5)), lambda a: np.clip(a, -0.5, 0.5), F32),
    # NumPy arrays, 0-d ones included, keep their dtype (as in NumPy and JAX)
    "f32_mul_0d_f64": ("x", lambda a: a * np.array(0.125), lambda a: a * np.array(0.125), F64),
    "f32_add_f64_array": ("x", lambda a: a + np.ones(4), lambda a: a + np.ones(4), F64),
}


def _inputs():
    return {
        "x": RNG.standard_normal((N, 4)).astype(np.float32),
        "h": RNG.standard_normal((N, 4)).astype(np.float16),
        "n": RNG.integers(1, 9, (N, 4)).astype(np.int32),
        "b": RNG.integers(0, 2, (N, 4)).astype(bool),
    }


def _rt_output_types(text: str) -> dict:
    return dict(re.findall(r'rt\.output "(\w+)" .*: !tidal\.tensor<\[[^\]]*\], (\w+)>', text))


_MLIR = {F16: "f16", F32: "f32", F64: "f64", I32: "i32", I64: "i64", BOOL: "i1"}


@pytest.fixture(scope="module")
def program():
    with td.Program("weak") as p:
        (t, T), = p.dims("t")
        ins = {"x": td.input("x", shape=(4,), domain=(t,)),
               "h": td.input("h", shape=(4,), dtype="float16", domain=(t,)),
               "n": td.input("n", shape=(4,), dtype="int32", domain=(t,)),
               "b": td.input("b", shape=(4,), dtype="bool", domain=(t,))}
        for name, (src, fn, _, expected) in CASES.items():
            y = fn(ins[src])
            assert y.dtype == expected, (name, y.dtype)
            p.output(name, y)
        # symbolic steps meeting floats: their value, in the default float
        p.output("half_t", t / 2.0)
        p.output("decay", 0.99 ** t)
        p.output("decay_np", np.float64(0.99) ** t)
    return p, T


def test_traced_rt_types(program):
    p, T = program
    types = _rt_output_types(p.mlir(locations=False))
    expected = {name: _MLIR[c[3]] for name, c in CASES.items()}
    expected.update(half_t="f32", decay="f32", decay_np="f32")
    assert types == expected


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_float32_layer_scaled_by_a_numpy_scalar_stays_float32(backend):
    hd = 8
    W0 = RNG.standard_normal((hd, hd)).astype(np.float32)
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(hd,), domain=(t,))
        W = td.param("W", W0)
        y = (x @ W) * (1.0 / np.sqrt(hd))  # np.sqrt(8) is a np.float64
        p.output("y", y)
    assert y.dtype == F32 and "f64" not in p.mlir()
    xs = RNG.standard_normal((N, hd)).astype(np.float32)
    got = np.asarray(p.compile(backend=backend).run(bounds={T: N}, inputs={"x": xs})["y"])
    assert got.dtype == F32
    np.testing.assert_allclose(got, (xs @ W0) * np.float32(1.0 / np.sqrt(hd)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_run_outputs_match_numpy(program, backend):
    p, T = program
    inputs = _inputs()
    out = p.compile(backend=backend).run(bounds={T: N}, inputs=inputs)
    for name, (src, _, ref, expected) in CASES.items():
        got = np.asarray(out[name])
        assert got.dtype == expected, (backend, name, got.dtype)
        want = np.asarray(ref(inputs[src])).astype(expected)
        rtol = 1e-3 if expected == F16 else 1e-6
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   err_msg=f"{backend} {name}")
    steps = np.arange(N)
    for name, want in [("half_t", steps / 2.0), ("decay", 0.99 ** steps), ("decay_np", 0.99 ** steps)]:
        got = np.asarray(out[name])
        assert got.dtype == F32, (backend, name, got.dtype)
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-6)


def test_numpy_int_scalar_must_fit_the_tensor_dtype(line_of):
    with td.Program() as p:
        (t, T), = p.dims("t")
        n = td.input("n", shape=(4,), dtype="int32", domain=(t,))
        with pytest.raises(td.TidalError, match="the NumPy int64 1099511627776 does not fit in int32") as info:
            n + np.int64(2 ** 40)  # @fits
    assert info.value.lineno == line_of("fits")


def test_defining_an_int_recurrent_with_a_numpy_float_is_an_error(line_of):
    with td.Program() as p:
        (t, T), = p.dims("t")
        s = td.recurrent(shape=(), dtype="int32", domain=(t,))
        with pytest.raises(td.TidalError, match="cannot define a int32 tensor with the NumPy float64") as info:
            s[0] = np.float64(1.5)  # @intdef
    assert info.value.lineno == line_of("intdef")


def test_creating_from_a_numpy_scalar_keeps_its_dtype():
    with td.Program():
        assert td.constant(np.float64(1.5)).dtype == F64
        assert td.full((2,), np.float64(1.5)).dtype == F64
        assert td.constant(1.5).dtype == F32


def test_attention_scaled_by_a_numpy_scalar_stays_float32():
    from tidal.nn.attention import MultiHeadAttention, attend

    with td.Program() as p:
        (t, T), = p.dims("t")
        q = td.input("q", shape=(4,), domain=(t,))
        k = td.input("k", shape=(4,), domain=(t,))
        v = td.input("v", shape=(2,), domain=(t,))
        y = attend(q, k, v, p.dim_list[0], scale=1.0 / np.sqrt(4))
        z = MultiHeadAttention(4, 2, dim=t, seed=0)(q)
        assert y.dtype == F32 and z.dtype == F32
        p.output("y", y)
        p.output("z", z)
    assert not [n for n in p.nodes if any(o.dtype == F64 for o in n.outputs)]
    qs, ks, vs = (RNG.standard_normal((N, d)).astype(np.float32) for d in (4, 4, 2))
    out = p.compile(backend="numpy").run(bounds={T: N}, inputs={"q": qs, "k": ks, "v": vs})
    assert np.asarray(out["y"]).dtype == F32
    for i in range(N):
        w = np.exp(ks[:i + 1] @ qs[i] / 2.0)
        np.testing.assert_allclose(out["y"][i], (w / w.sum()) @ vs[:i + 1], rtol=1e-5)
    assert math.isfinite(float(np.asarray(out["z"]).sum()))
