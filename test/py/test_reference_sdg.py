"""The reference interpreter on hand-written sdg graphs: symbolic attributes,
input and output formats, and errors that name the op's location and point."""
import pathlib

import numpy as np
import pytest
from mlir import ir

from tidal.dialects import make_context
from tidal.runtime.reference import EvaluationError, evaluate

ROOT = pathlib.Path(__file__).resolve().parents[2]
V = "!tidal.tensor<[4], f32>"


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("T", [1, 3, 8])
def test_example_graph(T):
    x = rand(T, 4)
    out = evaluate((ROOT / "examples/recurrence.sdg.mlir").read_text(), {"T": T}, {"x": x})
    s = [x[0]]
    for t in range(1, T):
        s.append(0.5 * s[-1] + x[t])
    np.testing.assert_allclose(out["s"], s, rtol=1e-6)
    np.testing.assert_allclose(out["w"], [x[max(0, t - 2):t + 1].sum(0) for t in range(T)], rtol=1e-5)
    np.testing.assert_allclose(out["g"], [x[t:].sum(0) for t in range(T)], rtol=1e-5, atol=1e-6)


SPATIAL = f"""
sdg.graph @spatial dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %cs = sdg.scan cumsum 0 reverse %x[0:T] domain [] : ({V}) -> !tidal.tensor<[T, 4], f32>
  %tk = sdg.take 0 at <t> %cs[] domain [t] : (!tidal.tensor<[T, 4], f32>) -> {V}
  %sl = sdg.slice 0 at <(T - t - 1) floordiv 2> %x[t:T] domain [t] : ({V}) -> !tidal.tensor<[1, 4], f32>
  %pd = sdg.pad 0 <2 - min(t, 2)> <0> value -1.0 %x[max(0, t - 2):t + 1] domain [t] : ({V}) -> !tidal.tensor<[3, 4], f32>
  %io = sdg.iota 0 domain [t] : !tidal.tensor<[t + 1], i64>
  %fl = sdg.full 2.5 domain [t] : !tidal.tensor<[T - t, 2], f16>
  %sv = sdg.symbol_value <T - t> domain [t] : !tidal.tensor<[], i64>
  %us = sdg.unsqueeze 0 %x[t] domain [t] : ({V}) -> !tidal.tensor<[1, 4], f32>
  %ex = sdg.expand %us[t] domain [t] : (!tidal.tensor<[1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
  %pm = sdg.permute [1, 0] %x[0:t + 1] domain [t] : ({V}) -> !tidal.tensor<[4, t + 1], f32>
  sdg.output "tk" %tk[t] domain [t] : {V}
  sdg.output "sl" %sl[t] domain [t] : !tidal.tensor<[1, 4], f32>
  sdg.output "pd" %pd[t] domain [t] : !tidal.tensor<[3, 4], f32>
  sdg.output "io" %io[t] domain [t] : !tidal.tensor<[t + 1], i64>
  sdg.output "fl" %fl[t] domain [t] : !tidal.tensor<[T - t, 2], f16>
  sdg.output "sv" %sv[t] domain [t] : !tidal.tensor<[], i64>
  sdg.output "ex" %ex[t] domain [t] : !tidal.tensor<[t + 1, 4], f32>
  sdg.output "pm" %pm[t] domain [t] : !tidal.tensor<[4, t + 1], f32>
  sdg.output "win" %x[t:T] domain [t] : {V}
}}
"""


@pytest.mark.parametrize("T", [1, 2, 6])
def test_symbolic_attributes_and_varying_shapes(T):
    x = rand(T, 4, seed=4)
    out = evaluate(SPATIAL, {"T": T}, {"x": x})
    np.testing.assert_allclose(out["tk"], [x[t:].sum(0) for t in range(T)], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["sl"], [x[t:][(T - t - 1) // 2:(T - t - 1) // 2 + 1] for t in range(T)])
    for t in range(T):
        window = x[max(0, t - 2):t + 1]
        padded = np.concatenate([np.full((3 - len(window), 4), -1.0, np.float32), window])
        np.testing.assert_array_equal(out["pd"][t], padded)
        np.testing.assert_array_equal(out["io"][t], np.arange(t + 1))
        assert out["fl"][t].dtype == np.float16 and out["fl"][t].shape == (T - t, 2)
        assert (out["fl"][t] == 2.5).all()
        np.testing.assert_array_equal(out["ex"][t], np.broadcast_to(x[t], (t + 1, 4)))
        np.testing.assert_array_equal(out["pm"][t], x[:t + 1].T)
        np.testing.assert_array_equal(out["win"][t], x[t:])
    assert isinstance(out["io"], list) and isinstance(out["win"], list)
    assert out["sv"].tolist() == [T - t for t in range(T)] and out["sv"].dtype == np.int64


def test_varying_input_as_nested_lists_and_conditional_output():
    text = """
sdg.graph @g dims [b < B, t < T] {
  %x = sdg.input "x" domain [b, t] : !tidal.tensor<[t + 1], f64>
  %s = sdg.reduce sum [0] %x[b, t] domain [b, t] : (!tidal.tensor<[t + 1], f64>) -> !tidal.tensor<[], f64>
  sdg.output "s" %s[b, t] domain [b, t] : !tidal.tensor<[], f64>
  sdg.output "x" %x[b, t] domain [b, t] {cond = #tidal.expr<t eq b>} : !tidal.tensor<[t + 1], f64>
}"""
    x = [[np.arange(t + 1) * (b + 1.0) for t in range(3)] for b in range(2)]
    out = evaluate(text, {"B": 2, "T": 3}, {"x": x})
    np.testing.assert_array_equal(out["s"], [[x[b][t].sum() for t in range(3)] for b in range(2)])
    assert set(out["x"]) == {(0, 0), (1, 1)}
    np.testing.assert_array_equal(out["x"][(1, 1)], [0.0, 2.0])
    with pytest.raises(EvaluationError, match=r"<input>:3:8: 'sdg.input' at point \(b=0, t=0\): input 'x' has "
                                              r"shape \(2,\) at this point, expected \(1,\)"):
        bad = [[np.zeros(t + 2) for t in range(3)] for _ in range(2)]
        evaluate(text, {"B": 2, "T": 3}, {"x": bad})


def test_rt_modules_are_converted_on_a_copy():
    with make_context():
        module = ir.Module.parse(f"""
rt.program @p dims [t < T] {{
  %x = rt.input "x" domain [t] : {V}
  %y = rt.unary neg %x domain [t] : ({V}) -> {V}
  rt.output "y" %y : {V}
}}""")
        before = str(module)
        x = rand(3, 4)
        np.testing.assert_array_equal(evaluate(module, {"T": 3}, {"x": x})["y"], -x)
        assert str(module) == before


def test_udf_results_are_converted_and_checked():
    text = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %a, %b = sdg.udf "split"(%x[t]) domain [t] : ({V}) -> (!tidal.tensor<[2], f64>, !tidal.tensor<[], i32>)
  sdg.output "a" %a[t] domain [t] : !tidal.tensor<[2], f64>
  sdg.output "b" %b[t] domain [t] : !tidal.tensor<[], i32>
}}"""
    x = rand(2, 4)
    out = evaluate(text, {"T": 2}, {"x": x}, {"split": lambda v: (v[:2], len(v))})
    assert out["a"].dtype == np.float64 and out["b"].tolist() == [4, 4]
    np.testing.assert_allclose(out["a"], x[:, :2])
    with pytest.raises(EvaluationError, match=r"<input>:4:12: 'sdg.udf' at point \(t=0\): UDF 'split' "
                                              r"result 0 has shape \(3,\), declared \(2,\) \(float64\)"):
        evaluate(text, {"T": 2}, {"x": x}, {"split": lambda v: (v[:3], 1)})
    with pytest.raises(EvaluationError, match="declared with 2 results but returned ndarray"):
        evaluate(text, {"T": 2}, {"x": x}, {"split": lambda v: v})
    with pytest.raises(EvaluationError, match="result 1 holds 4294967296, which does not fit in int32"):
        evaluate(text, {"T": 2}, {"x": x}, {"split": lambda v: (v[:2], 2**32)})


ERRORS = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %p = sdg.unary neg %x[t - 1] domain [t] : ({V}) -> {V}
  %m = sdg.merge %x[t] if <t gt 1> domain [t] : ({V}) -> {V}
  %u = sdg.udf "nope"(%x[t]) domain [t] : ({V}) -> {V}
  %c = sdg.merge %x[0] if <t eq 0>, %d[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %d = sdg.unary exp %c[t] domain [t] : ({V}) -> {V}
  %r = sdg.reshape %x[t] domain [t] : ({V}) -> !tidal.tensor<[t + 1, 2], f32>
  %k = sdg.reduce max [0] %x[0:t] domain [t] : ({V}) -> {V}
  sdg.output "x" %x[t] domain [t] : {V}
}}"""


def with_output(value, dep="t", shape=V):
    return ERRORS.replace('sdg.output "x" %x[t]', f'sdg.output "o" {value}[{dep}]').replace(
        f"domain [t] : {V}\n}}", f"domain [t] : {shape}\n}}")


@pytest.mark.parametrize("text, inputs, message", ids=[
    "missing-input", "input-shape", "outside-domain", "no-branch", "unknown-udf", "cycle",
    "kernel-error", "empty-max"], argvalues=[
    (ERRORS, {}, r"<input>:3:8: 'sdg.input' at point \(t=0\): no value for input 'x'"),
    (ERRORS, {"x": np.zeros((3, 5))},
     r"<input>:3:8: 'sdg.input' at point \(t=0\): input 'x' has shape \(3, 5\), expected \(3, 4\)"),
    (with_output("%p"), None, r"<input>:4:8: 'sdg.unary' at point \(t=0\): operand 0 reads 'sdg.input' "
                              r"\(<input>:3:8\) at \[t - 1\] = \[-1\], outside its domain: it needs t = -1 but T = 3 \(t must be in \[0, T\)\)"),
    (with_output("%m"), None, r"<input>:5:8: 'sdg.merge' at point \(t=0\): no branch condition holds "
                              r"\(conditions: <t gt 1>\)"),
    (with_output("%u"), None, r"<input>:6:8: 'sdg.udf' at point \(t=0\): no UDF registered under 'nope'"),
    (with_output("%c"), None, r"<input>:8:8: 'sdg.unary' at point \(t=1\): cyclic dependence: it needs "
                              r"'sdg.merge' \(<input>:7:8\) at \(t=1\)"),
    (with_output("%r", "t", "!tidal.tensor<[t + 1, 2], f32>"), None,
     r"<input>:9:8: 'sdg.reshape' at point \(t=0\): KernelError: cannot reshape \(4,\) \(4 elements\) into \(1, 2\)"),
    (with_output("%k"), None, r"<input>:10:8: 'sdg.reduce' at point \(t=0\): .*empty dimension"),
])
def test_errors_name_the_location_and_the_point(text, inputs, message):
    with pytest.raises(EvaluationError, match=message) as info:
        evaluate(text, {"T": 3}, {"x": rand(3, 4)} if inputs is None else inputs)
    assert info.value.location.startswith("<input>:") and info.value.point is not None


def test_source_name_and_bounds_errors():
    with pytest.raises(EvaluationError, match=r"^net.mlir:3:8: 'sdg.input' at point \(t=0\)"):
        evaluate(ERRORS, {"T": 3}, {}, source_name="net.mlir")
    with pytest.raises(EvaluationError, match="no value for bound 'T'"):
        evaluate(ERRORS, {}, {})
    with pytest.raises(EvaluationError, match="bound 'T' must be an int >= 1, got 0"):
        evaluate(ERRORS, {"T": 0}, {})
    with pytest.raises(EvaluationError, match="unknown bound 'B'"):
        evaluate(ERRORS, {"T": 2, "B": 2}, {})
    two = ERRORS + ERRORS.replace("@g", "@h")
    with pytest.raises(EvaluationError, match=r"found 2 \(g, h\): pass graph="):
        evaluate(two, {"T": 2}, {"x": rand(2, 4)})
    # graph h's UDF runs at every point of its domain, although no output reads it
    np.testing.assert_array_equal(evaluate(two, {"T": 2}, {"x": np.ones((2, 4))}, {"nope": np.negative},
                                           graph="h")["x"], np.ones((2, 4)))


def test_sink_udfs_run_once_at_every_point_of_their_domain():
    """A UDF with no results (logging, checkpointing) is an effect: it runs
    at every point of its domain although no output reads it."""
    text = f"""sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  sdg.udf "log"(%x[t]) domain [t] : ({V}) -> ()
  %y = sdg.unary exp %x[t] domain [t] : ({V}) -> {V}
  sdg.output "y" %y[t] domain [t] : {V}
}}"""
    seen = []
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = evaluate(text, {"T": 3}, {"x": x}, {"log": lambda a: seen.append(a.copy())})
    np.testing.assert_allclose(out["y"], np.exp(x), rtol=1e-6)
    assert len(seen) == 3 and all(np.array_equal(a, x[k]) for k, a in enumerate(seen))
