"""The op surface: functions and methods, dtype promotion (NumPy 2, weak
Python and NumPy scalars), symbolic shape inference, domain inference, spatial
indexing, creation ops, and the dual td.max/td.min."""
import math

import numpy as np
import pytest

import tidal as td
from tidal.symbolic import Dim, Max


@pytest.fixture
def env():
    with td.Program("ops") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(4,), domain=(t,))
        m = td.input("m", shape=(T, 4), domain=(t,))
        n = td.input("n", shape=(3,), dtype="int32", domain=(i,))
        b = td.input("b", shape=(4,), dtype="bool", domain=(t,))
        yield p, dict(i=i, I=I, t=t, T=T, x=x, m=m, n=n, b=b)


def shape(x):
    return [str(d) for d in x.shape]


def test_module_with_every_op_verifies(env, parse):
    p, v = env
    t, T, x, m, n, b = (v[k] for k in ("t", "T", "x", "m", "n", "b"))
    outs = [
        x.exp(), td.log(x), x.tanh(), td.sigmoid(x), x.relu(), x.sqrt(), td.rsqrt(x), abs(x), x.sign(),
        td.sin(x), td.cos(x), x.floor(), x.ceil(), x.reciprocal(), x.square(), -x, ~b, x ** 2, 2 ** x,
        x // 2, x % 3, td.maximum(x, 0), td.minimum(x, 1.0), x.clamp(0, 1), td.where(b, x, 0.0),
        (x > 0) & b, (x < 0) | b, b ^ b, x == x, x != 1, x <= 1, x >= 1, m.mean(0), m.prod(1), m.any(),
        m.all(1), m.cumprod(0), m.cummax(1), m.cummin(0, reverse=True), m.log_softmax(), m.logsumexp(0),
        m.flip(0), m.flatten(), m.permute(1, 0), m.transpose(), m.mT, m.unsqueeze(1).squeeze(1),
        td.cat([m, m], 1), td.stack([x, x], 1), td.pad(x, (1, t)), m[:, 0:t + 1], m[..., 2], m[None],
        m.index_select(0, td.arange(2)), m.gather(1, td.zeros((T, 1), dtype="int64")),
        m.scatter_add(1, td.zeros((T, 1), dtype="int64"), td.ones((T, 1))), x.astype("float16"),
        td.full((T - t, 4), -math.inf), td.rand(4, domain=(t,)), td.randn(2, 2), td.bernoulli(3),
        td.arange(t, T, 2), x.discounted_sum(0.5), n.sum(), x.expand(3, 4), m[:, ::2],
    ]
    for k, y in enumerate(outs):
        p.output(f"o{k}", y)
    parse(p.mlir())


def test_weak_python_scalars_keep_the_tensor_dtype(env):
    _, v = env
    x, n, b = v["x"], v["n"], v["b"]
    assert (0.5 * x).dtype == np.float32 and (1 - x).dtype == np.float32
    assert (n + 1).dtype == np.int32 and (n * 2).dtype == np.int32
    # a scalar of a higher kind raises the kind to its default dtype, as JAX
    assert (n * 0.5).dtype == np.float32 and (b + 1).dtype == np.int64 and (b * 1.5).dtype == np.float32
    assert (x + n.astype("float64").sum()).dtype == np.float64
    assert (n + x.sum()).dtype == np.float32  # int32 with float32 -> float32 (PyTorch, JAX; NumPy: float64)


def test_op_dtypes_follow_numpy_with_the_default_float(env):
    """NumPy's result types, except that integers turned into floats take the
    default float32 (as in PyTorch and JAX): float64 only comes from float64."""
    _, v = env
    x, n, b = v["x"], v["n"], v["b"]
    assert (n / 2).dtype == np.float32 and n.exp().dtype == np.float32
    assert n.sum().dtype == np.int64 and n.mean().dtype == np.float32
    assert (n.astype("float64") / 2).dtype == np.float64 and (n + x.astype("float64")[0, :3]).dtype == np.float64
    assert (n.astype("int64") + x[0, :3]).dtype == np.float32
    assert b.sum().dtype == np.int64 and (x > 0).dtype == np.bool_
    assert n.astype("int8").exp().dtype == np.float16  # as np.exp(int8)
    assert td.symbol(v["t"]).dtype == np.int64 and (x * v["t"]).dtype == np.float32


def test_operands_are_cast_to_the_computing_dtype(env, filecheck):
    p, v = env
    y = v["n"] / 2
    p.output("y", y)
    filecheck(p.mlir(locations=False), """
    CHECK: [[N:%[0-9]+]] = rt.input "n" domain [i] : !tidal.tensor<[3], i32>
    CHECK: [[C:%[0-9]+]] = rt.cast [[N]] domain [i] : (!tidal.tensor<[3], i32>) -> !tidal.tensor<[3], f32>
    CHECK-NEXT: [[TWO:%[0-9]+]] = rt.constant dense<2.000000e+00> : tensor<f32>
    CHECK-NEXT: rt.binary div [[C]], [[TWO]] domain [i] : (!tidal.tensor<[3], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[3], f32>
    """)


def test_broadcasting_and_domain_union(env):
    _, v = env
    x, n, t = v["x"], v["n"], v["t"]
    y = x.unsqueeze(1) + n.astype("float32")[None]
    assert shape(y) == ["4", "3"] and y.domain == (Dim("i"), Dim("t"))
    assert (x + 1).domain == (t,) and td.arange(v["T"]).domain == ()
    assert td.arange(v["T"])[t].domain == (t,)  # a spatial index with a step adds the dim
    assert td.zeros(t + 1).domain == (t,) and td.zeros(v["T"]).domain == ()


def test_reductions_and_scans(env):
    _, v = env
    m = v["m"]
    assert shape(m.sum()) == [] and shape(m.sum(0)) == ["4"] and shape(m.sum(-1, keepdim=True)) == ["T", "1"]
    assert shape(m.max(1)) == ["T"] and m.max(dim=1).attrs["kind"] == "max"
    assert shape(m.cumsum(1)) == ["T", "4"] and m.cumsum(1, reverse=True).attrs["reverse"]
    assert shape(m.softmax(0)) == ["T", "4"] and shape(m.mean((0, 1))) == []


def test_td_max_and_min_are_symbolic_reductions_or_elementwise(env):
    _, v = env
    t, T, m = v["t"], v["T"], v["m"]
    assert isinstance(td.max(0, t - 2), Max)
    assert str(td.max(0, t - 2)) == "max(0, t - 2)" and str(td.min(t + 3, T)) == "min(t + 3, T)"
    assert td.max(m).op == "reduce" and shape(td.max(m, dim=1)) == ["T"] and shape(td.min(m, 0)) == ["4"]
    assert td.max(m, m).attrs["kind"] == "max" and td.max(m, m).op == "binary"
    assert m.max(m).op == "binary" and m.min().op == "reduce"
    assert td.maximum(m, 0).attrs["kind"] == "max"


def test_matmul_shapes(env):
    _, v = env
    x, m = v["x"], v["m"]
    W = td.param("W", np.ones((4, 5), np.float32))
    assert shape(x @ W) == ["5"] and shape(m @ W) == ["T", "5"] and shape(W.T @ x) == ["5"]
    assert shape(td.matmul(m.unsqueeze(0).expand(2, v["T"], 4), W)) == ["2", "T", "5"]
    assert shape(x @ x) == []


def test_shape_ops(env):
    _, v = env
    m, T, t = v["m"], v["T"], v["t"]
    assert shape(m.reshape(-1)) == ["4 * T"] and shape(m.reshape(2, -1)) == ["2", "2 * T"]
    assert shape(m.view(T, 2, 2)) == ["T", "2", "2"] and m.reshape(T, 4) is m
    assert shape(m.T) == ["4", "T"] and shape(m.permute(1, 0)) == ["4", "T"]
    assert shape(m.flatten()) == ["4 * T"] and shape(td.stack([m, m])) == ["2", "T", "4"]
    assert shape(td.cat([m, m[:, 0:t + 1]], 0)) == ["t + T + 1", "4"]
    assert shape(m.unsqueeze(-1)) == ["T", "4", "1"] and shape(m[None, :, None]) == ["1", "T", "1", "4"]
    assert shape(m.unsqueeze(0).squeeze()) == ["T", "4"]
    assert shape(m.expand(3, -1, -1)) == ["3", "T", "4"]


def test_padding_a_window_gives_a_static_size(env, filecheck):
    p, v = env
    x, t = v["x"], v["t"]
    win = x[td.max(0, t - 2):t + 1]
    padded = td.pad(win, (2 - td.min(t, 2), 0), dim=0)
    assert shape(win) == ["min(t, 2) + 1", "4"] and shape(padded) == ["3", "4"]
    p.output("padded", padded)
    filecheck(p.mlir(locations=False), """
    CHECK: rt.pad 0 <{{.*}}> <0> value 0.000000e+00 {{%[0-9]+}} domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[3, 4], f32>
    """)


def test_spatial_indexing(env, filecheck):
    p, v = env
    m, x, t, T = v["m"], v["x"], v["t"], v["T"]
    a = m[:, 0:t + 1]          # temporal identity, then a symbolic spatial slice
    b = m[..., 2]
    c = m[t, -1]               # t: temporal identity of an input; -1 counts from the end
    d = x[:, 1:3]            # x[1:3] would be a temporal slice
    e = m[:, 2:]               # numpy clamps: T may be smaller than 2
    assert shape(a) == ["t + 1", "4"] and shape(b) == ["T"] and shape(c) == ["4"]
    assert shape(d) == ["2"] and shape(e) == ["max(0, T - 2)", "4"]
    for k, y in enumerate((a, b, c, d)):
        p.output(f"y{k}", y)
    filecheck(p.mlir(locations=False), """
    CHECK: [[M:%[0-9]+]] = rt.input "m" domain [t] : !tidal.tensor<[T, 4], f32>
    CHECK: rt.slice 0 at <0> [[M]] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
    CHECK-NEXT: rt.take 1 at <2> [[M]] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[T], f32>
    CHECK-NEXT: rt.take 0 at <T - 1> [[M]] domain [t] : (!tidal.tensor<[T, 4], f32>) -> !tidal.tensor<[4], f32>
    CHECK-NEXT: rt.slice 0 at <1> {{%[0-9]+}} domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[2], f32>
    """)


def test_identity_step_on_a_dynamic_derived_tensor_is_spatial(env):
    _, v = env
    x, t, T = v["x"], v["t"], v["T"]
    prefix = x[0:t + 1].cumsum(0)
    assert prefix[t].op == "take" and shape(prefix[t]) == ["4"]
    assert prefix[:, t].op == "take" and prefix[:].shape == prefix.shape  # explicit temporal `:`
    assert shape(x[0:T].cumsum(0)[t]) == ["4"] and x[0:T].cumsum(0)[t].domain == (t,)


def test_temporal_slices_prepend_dims_and_constant_indices_remove_dims(env):
    _, v = env
    x, m, t, T = v["x"], v["m"], v["t"], v["T"]
    assert x[0].domain == () and x[T - 1].domain == () and x[0:T].domain == ()
    assert shape(x[0:T]) == ["T", "4"] and shape(m[0:T:2]) == ["(T + 1) // 2", "T", "4"]
    assert shape(x[t:td.min(t + 3, T)]) == ["min(T - t, 3)", "4"]
    assert [str(c) for c in x[t - 1].attrs["index"]] == ["t - 1"]
    assert x[t // 4 * 4:t // 4 * 4 + 4].domain == (t,)  # block access (floordiv by a constant)


def test_creation_ops(env, filecheck):
    p, v = env
    t, T = v["t"], v["T"]
    z = td.zeros(T - t, 4)
    f = td.full((2,), -math.inf)
    r1, r2 = td.rand(4, domain=(t,)), td.randn(4)
    c = td.constant([[1, 2], [3, 4]], dtype="float32")
    s = td.symbol(T - t)
    assert z.domain == (t,) and shape(z) == ["T - t", "4"] and z.dtype == np.float32
    assert (r1.attrs["seed"], r2.attrs["seed"]) == (0, 1) and r1.domain == (t,) and r2.domain == ()
    assert td.full((2,), 3).dtype == np.int64 and td.full((2,), True).dtype == np.bool_
    assert td.zeros_like(v["m"]).shape == v["m"].shape and td.ones_like(v["n"]).dtype == np.int32
    for k, y in enumerate((z, f, r1, r2, c, s)):
        p.output(f"c{k}", y)
    filecheck(p.mlir(locations=False), """
    CHECK: rt.full 0.000000e+00 domain [t] : !tidal.tensor<[T - t, 4], f32>
    CHECK-NEXT: rt.full 0xFFF0000000000000 domain [] : !tidal.tensor<[2], f32>
    CHECK-NEXT: rt.random uniform seed 0 domain [t] : !tidal.tensor<[4], f32>
    CHECK-NEXT: rt.random normal seed 1 domain [] : !tidal.tensor<[4], f32>
    CHECK-NEXT: rt.constant dense<{{\\[\\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32> domain [] : !tidal.tensor<[2, 2], f32>
    CHECK-NEXT: rt.symbol_value <T - t> domain [t] : !tidal.tensor<[], i64>
    """)


@pytest.mark.parametrize("backend", ["reference", "numpy", "jax"])
def test_params_keep_their_exact_values(backend):
    """A td.param's values are bound to the executable, not printed into the
    IR (which keeps the name, shape and dtype), and come back bit for bit."""
    values = {"f": np.array([0.1, -0.0, np.inf, np.nan, 1e-30], np.float32),
              "d": np.linspace(0, 1, 7).reshape(7, 1), "i": np.arange(-3, 3, dtype=np.int16),
              "b": np.array([True, False, True]), "h": np.array(1.5, np.float16)}
    with td.Program("params") as p:
        for name, value in values.items():
            p.output(name, td.param(name, value))
    text = p.mlir(locations=False)
    assert "dense" not in text and 'rt.param "d" domain [] : !tidal.tensor<[7, 1], f64>' in text
    got = p.compile(backend=backend).run()
    for name, value in values.items():
        np.testing.assert_array_equal(got[name], value)
        assert got[name].dtype == value.dtype


def test_constants_and_symbol_values_are_shared(env):
    p, v = env
    x = v["x"]
    a, b = x * 0.5, x + 0.5
    assert a.inputs[1] is b.inputs[1]
    assert td.symbol(v["T"]) is td.symbol(v["T"])


def test_udf_with_declared_outputs(env):
    p, v = env
    out = td.udf(lambda a: a, [v["x"]], shape=(4,), dtype="float32")
    two = td.udf(lambda a: (a, a), [v["x"]], shapes=[(4,), (4,)], dtypes=["float32", "float64"])
    assert out.op == "udf" and len(two) == 2 and two[1].dtype == np.float64 and two[0].node is two[1].node
    assert out.attrs["callee"] != two[0].attrs["callee"] and set(p.udfs) >= {out.attrs["callee"]}
    assert td.udf(print, [v["x"]]) is None


def test_numpy_operands_on_either_side(env):
    _, v = env
    x = v["x"]
    assert (np.float32(0.5) * x).dtype == np.float32 and (np.ones(4) + x).dtype == np.float64
    assert (x - np.ones(4, np.float32)).op == "binary" and (np.ones(4, np.float32) @ x).shape == ()


def test_floats_meeting_steps_become_tensors_of_their_value():
    """Alg. 1 of the paper: `lr = 1e-3 * (0.99 ** i)` varies with the iteration."""
    with td.Program() as p:
        (i, I), = p.dims("i")
        lr = 1e-3 * (0.99 ** i)
        half = i / 2.0
        p.output("lr", lr)
        p.output("half", half)
    assert lr.domain == (i,) and lr.shape == ()
    out = p.compile(backend="reference").run(bounds={I: 4}, inputs={})
    np.testing.assert_allclose(out["lr"], 1e-3 * 0.99 ** np.arange(4), rtol=1e-6)
    np.testing.assert_allclose(out["half"], np.arange(4) / 2.0)


def test_integer_arithmetic_on_steps_stays_symbolic():
    with td.Program() as p:
        (t, T), = p.dims("t")
        assert isinstance(t + 1, td.symbolic.Expr)
    with pytest.raises(TypeError, match="powers of `t` are not supported"):
        t ** 2
