"""The scheduled runtime (tidal.runtime.scheduled) against the reference
interpreter: one compile per program and backend, several runs with bounds
never seen at compile time (T = 1 included), results equal (or within float
tolerance), and the generated schedule checked point by point."""
import numpy as np
import pytest

from tidal.runtime.reference import evaluate
from tidal.runtime.scheduled import compile_sdg
from tidal.runtime.scheduled.checker import check_schedule
from sdg_fixtures import RT_RECURRENCE, reinforce

V = "!tidal.tensor<[4], f32>"
M = "!tidal.tensor<[4, 4], f32>"

PROGRAMS = {
    # s[0] = x[0]; s[t] = 0.5 * s[t-1] + x[t]; windows and suffix sums (examples/recurrence.sdg.mlir)
    "recurrence": f"""
sdg.graph @recurrence dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %half = sdg.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %s = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %d = sdg.binary mul %s[t - 1], %half[] domain [t] : ({V}, !tidal.tensor<[], f32>) -> {V}
  %n = sdg.binary add %d[t], %x[t] domain [t] : ({V}, {V}) -> {V}
  %w = sdg.reduce sum [0] %x[max(0, t - 2):t + 1] domain [t] : ({V}) -> {V}
  %g = sdg.reduce sum [0] %x[t:T] domain [t] : ({V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
  sdg.output "w" %w[t] domain [t] : {V}
  sdg.output "g" %g[t] domain [t] : {V}
}}""",
    # h[0] = tanh(x[0] @ U); h[t] = tanh(h[t-1] @ W + x[t] @ U)
    "rnn": f"""
sdg.graph @rnn dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %W = sdg.param "W" dense<[[0.5, -0.1, 0.2, 0.0], [0.1, 0.3, -0.2, 0.1], [0.0, 0.2, 0.4, -0.3], [-0.2, 0.1, 0.0, 0.5]]> : tensor<4x4xf32> domain [] : {M}
  %U = sdg.param "U" dense<[[1.0, 0.0, 0.5, 0.0], [0.0, 1.0, 0.0, 0.5], [0.5, 0.0, 1.0, 0.0], [0.0, 0.5, 0.0, 1.0]]> : tensor<4x4xf32> domain [] : {M}
  %xu = sdg.matmul %x[t], %U[] domain [t] : ({V}, {M}) -> {V}
  %h0 = sdg.unary tanh %xu[0] domain [] : ({V}) -> {V}
  %hw = sdg.matmul %h[t - 1], %W[] domain [t] : ({V}, {M}) -> {V}
  %a = sdg.binary add %hw[t], %xu[t] domain [t] : ({V}, {V}) -> {V}
  %hn = sdg.unary tanh %a[t] domain [t] : ({V}) -> {V}
  %h = sdg.merge %h0[] if <t eq 0>, %hn[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %last = sdg.reduce sum [0] %h[T - 1:T] domain [] : ({V}) -> {V}
  sdg.output "h" %h[t] domain [t] : {V}
  sdg.output "last" %last[] domain [] : {V}
}}""",
    # sliding windows (window store, wrap-around), a growing prefix (block store)
    "windows": f"""
sdg.graph @windows dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %e = sdg.unary exp %x[t] domain [t] : ({V}) -> {V}
  %w = sdg.reduce sum [0] %e[max(0, t - 4):t + 1] domain [t] : ({V}) -> {V}
  %m = sdg.reduce max [0] keepdim %e[max(0, t - 2):t + 1] domain [t] : ({V}) -> !tidal.tensor<[1, 4], f32>
  %p = sdg.reduce max [0, 1] %e[0:t + 1] domain [t] : ({V}) -> !tidal.tensor<[], f32>
  sdg.output "w" %w[t] domain [t] : {V}
  sdg.output "m" %m[t] domain [t] : !tidal.tensor<[1, 4], f32>
  sdg.output "p" %p[t] domain [t] : !tidal.tensor<[], f32>
}}""",
    # Monte Carlo returns r[t:T] and n-step returns r[t:min(t + 3, T)]
    "returns": f"""
sdg.graph @returns dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %r = sdg.unary sigmoid %x[t] domain [t] : ({V}) -> {V}
  %mc = sdg.reduce sum [0] %r[t:T] domain [t] : ({V}) -> {V}
  %td = sdg.reduce sum [0] %r[t:min(t + 3, T)] domain [t] : ({V}) -> {V}
  sdg.output "mc" %mc[t] domain [t] : {V}
  sdg.output "td" %td[t] domain [t] : {V}
}}""",
    # b[T-1] = x[T-1]; b[t] = tanh(b[t+1]) + x[t]
    "backward": f"""
sdg.graph @backward dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %b = sdg.merge %x[T - 1] if <t eq T - 1>, %n[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %h = sdg.unary tanh %b[t + 1] domain [t] : ({V}) -> {V}
  %n = sdg.binary add %h[t], %x[t] domain [t] : ({V}, {V}) -> {V}
  sdg.output "b" %b[t] domain [t] : {V}
}}""",
    # per-iteration update of a parameter from a whole episode: w[i+1] = w[i] - 0.1 * sum_t w[i] * x[i, t]
    "training": f"""
sdg.graph @training dims [i < I, t < T] {{
  %w0 = sdg.param "W" dense<1.0> : tensor<4xf32> domain [] : {V}
  %lr = sdg.constant dense<0.1> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %x = sdg.input "x" domain [i, t] : {V}
  %w = sdg.merge %w0[] if <i eq 0>, %u[i - 1] if <true> domain [i] : ({V}, {V}) -> {V}
  %p = sdg.binary mul %w[i], %x[i, t] domain [i, t] : ({V}, {V}) -> {V}
  %g = sdg.reduce sum [0] %p[i, 0:T] domain [i] : ({V}) -> {V}
  %st = sdg.binary mul %g[i], %lr[] domain [i] : ({V}, !tidal.tensor<[], f32>) -> {V}
  %u = sdg.binary sub %w[i], %st[i] domain [i] : ({V}, {V}) -> {V}
  %tot = sdg.reduce sum [0, 1] %p[0:I, 0:T] domain [] : ({V}) -> {V}
  sdg.output "w" %w[i] domain [i] : {V}
  sdg.output "p" %p[i, t] domain [i, t] : {V}
  sdg.output "tot" %tot[] domain [] : {V}
}}""",
    # conditional definitions: a reset every 3 steps; constant indices x[0], x[T - 1]
    "conditional": f"""
sdg.graph @conditional dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %s = sdg.merge %x[t] if <t mod 3 eq 0>, %n[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %n = sdg.binary add %s[t - 1], %x[t] domain [t] : ({V}, {V}) -> {V}
  %f = sdg.binary sub %x[0], %x[T - 1] domain [t] : ({V}, {V}) -> {V}
  %y = sdg.binary mul %f[t], %s[t] domain [t] : ({V}, {V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
  sdg.output "y" %y[t] domain [t] : {V}
}}""",
    # a UDF with external state (called once per point, in order), random draws,
    # symbol values, a scan over the whole episode read back with take
    "host_ops": f"""
sdg.graph @host_ops dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %o = sdg.udf "acc"(%x[t]) domain [t] : ({V}) -> {V}
  %r = sdg.random normal seed 7 domain [t] : {V}
  %i = sdg.symbol_value <t> domain [t] : !tidal.tensor<[], i64>
  %fi = sdg.cast %i[t] domain [t] : (!tidal.tensor<[], i64>) -> !tidal.tensor<[], f32>
  %a = sdg.binary add %o[t], %fi[t] domain [t] : ({V}, !tidal.tensor<[], f32>) -> {V}
  %c = sdg.scan cumsum 0 %r[0:T] domain [] : ({V}) -> !tidal.tensor<[T, 4], f32>
  %k = sdg.take 0 at <t> %c[] domain [t] : (!tidal.tensor<[T, 4], f32>) -> {V}
  sdg.output "a" %a[t] domain [t] : {V}
  sdg.output "k" %k[t] domain [t] : {V}
  sdg.output "i" %i[t] domain [t] : !tidal.tensor<[], i64>
}}""",
    # shapes that vary with the point: a growing prefix kept as a value, output as nested lists
    "varying": f"""
sdg.graph @varying dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %e = sdg.unary exp %x[0:t + 1] domain [t] : ({V}) -> !tidal.tensor<[t + 1, 4], f32>
  %s = sdg.reduce sum [1] %e[t] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[t + 1], f32>
  %z = sdg.full 2.0 domain [t] : !tidal.tensor<[T - t], f32>
  %q = sdg.reduce sum [0] %z[t] domain [t] : (!tidal.tensor<[T - t], f32>) -> !tidal.tensor<[], f32>
  %y = sdg.input "y" domain [t] : !tidal.tensor<[t + 1], f32>
  %ys = sdg.binary mul %y[t], %s[t] domain [t] : (!tidal.tensor<[t + 1], f32>, !tidal.tensor<[t + 1], f32>) -> !tidal.tensor<[t + 1], f32>
  sdg.output "ys" %ys[t] domain [t] : !tidal.tensor<[t + 1], f32>
  sdg.output "s" %s[t] domain [t] : !tidal.tensor<[t + 1], f32>
  sdg.output "q" %q[t] domain [t] : !tidal.tensor<[], f32>
}}""",
}




PROGRAMS["reinforce_mc"] = reinforce("t:T")
PROGRAMS["reinforce_td"] = reinforce("t:min(t + 3, T)")
PROGRAMS["rt_program"] = RT_RECURRENCE


def _env_udfs(state):
    def reset(w):
        return np.full(4, 0.1, np.float32) + w * 0.01

    def step(a):
        state["calls"] += 1
        state["total"] = state["total"] + a
        return np.tanh(a + state["total"] * 0.1).astype(np.float32), np.float32(a.sum() * 0.01)
    return {"env.reset": reset, "env.step": step}


def _acc_udf():
    state = {"total": np.zeros(4, np.float32), "calls": 0}

    def acc(x):
        state["total"] = state["total"] + x
        state["calls"] += 1
        return state["total"]
    return acc, state


def _inputs(name: str, bounds: dict, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    if name.startswith("reinforce"):
        return {}
    if name == "varying":
        return {"x": rng.standard_normal((bounds["T"], 4)).astype(np.float32),
                "y": [rng.standard_normal(t + 1).astype(np.float32) for t in range(bounds["T"])]}
    if name == "training":
        return {"x": rng.standard_normal((bounds["I"], bounds["T"], 4)).astype(np.float32)}
    return {"x": rng.standard_normal((bounds["T"], 4)).astype(np.float32)}


BOUNDS = {"training": [{"I": 1, "T": 1}, {"I": 3, "T": 4}, {"I": 2, "T": 7}],
          "reinforce_mc": [{"I": 1, "T": 1}, {"I": 3, "T": 6}],
          "reinforce_td": [{"I": 1, "T": 1}, {"I": 2, "T": 2}, {"I": 3, "T": 8}]}
DEFAULT_BOUNDS = [{"T": 1}, {"T": 2}, {"T": 7}, {"T": 13}]


def _same(a, b, what):
    if isinstance(b, list):
        assert isinstance(a, list) and len(a) == len(b), what
        for x, y in zip(a, b):
            _same(x, y, what)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, err_msg=what)


@pytest.fixture(scope="module", params=["numpy", "jax"])
def backend(request):
    return request.param


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_reference(name, backend):
    text = PROGRAMS[name]
    acc, state = _acc_udf()
    exe = compile_sdg(text, udfs={"acc": acc, **_env_udfs(state)}, backend=backend)
    for bounds in BOUNDS.get(name, DEFAULT_BOUNDS):
        inputs = _inputs(name, bounds)
        ref_acc, ref_state = _acc_udf()
        expected = evaluate(text, bounds, inputs, {"acc": ref_acc, **_env_udfs(ref_state)})
        state["calls"], state["total"] = 0, np.zeros(4, np.float32)
        got = exe.run(bounds, inputs)
        assert sorted(got) == sorted(expected)
        for key in expected:
            _same(got[key], expected[key], f"{name} {bounds} output {key}")
        assert state["calls"] == ref_state["calls"]
        check_schedule(exe, bounds)


def test_example_file_runs():
    import pathlib
    text = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "recurrence.sdg.mlir").read_text()
    exe = compile_sdg(text, backend="numpy")
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    got, expected = exe.run({"T": 5}, {"x": x}), evaluate(text, {"T": 5}, {"x": x})
    for key in expected:
        _same(got[key], expected[key], key)


def test_module_is_not_modified_and_accepts_ir():
    from mlir import ir
    from tidal.dialects import make_context
    with make_context():
        module = ir.Module.parse(PROGRAMS["returns"])
        before = str(module)
        exe = compile_sdg(module, backend="numpy")
        assert str(module) == before
        assert "scf.for" in exe.lowered and "tidal.schedule" in exe.lowered
    out = exe.run({"T": 3}, {"x": np.ones((3, 4), np.float32)})
    np.testing.assert_allclose(out["mc"][0], 3 * (1 / (1 + np.exp(-1))) * np.ones(4), rtol=1e-6)


def test_bad_bounds_and_inputs():
    from tidal.runtime.reference import EvaluationError
    exe = compile_sdg(PROGRAMS["returns"], backend="numpy")
    with pytest.raises(EvaluationError, match="bound 'T'"):
        exe.run({"T": 0}, {"x": np.ones((0, 4))})
    with pytest.raises(EvaluationError, match="unknown bound"):
        exe.run({"T": 2, "Q": 1}, {"x": np.ones((2, 4))})
    with pytest.raises(EvaluationError, match="shape"):
        exe.run({"T": 2}, {"x": np.ones((3, 4))})
    with pytest.raises(EvaluationError, match="no value for input"):
        exe.run({"T": 2}, {})


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_dimension_names_isl_reserves_run_and_check(backend):
    """`floor` and `exists` are isl keywords: the checker fixes bounds by their
    isl spelling, as the scheduler does."""
    text = f"""
sdg.graph @g dims [floor < exists] {{
  %x = sdg.input "x" domain [floor] : {V}
  %s = sdg.merge %x[0] if <floor eq 0>, %n[floor] if <true> domain [floor] : ({V}, {V}) -> {V}
  %n = sdg.binary add %s[floor - 1], %x[floor] domain [floor] : ({V}, {V}) -> {V}
  sdg.output "s" %s[floor] domain [floor] : {V}
}}"""
    exe = compile_sdg(text, backend=backend)
    assert check_schedule(exe, {"exists": 5}).executions == 19
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    np.testing.assert_allclose(exe.run({"exists": 5}, {"x": x})["s"], np.cumsum(x, 0))
