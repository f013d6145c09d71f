"""The passes sdg-schedule and sdg-lower-to-scf, the readable loop nest,
and the schedule checker (run the lowered program with recording launchers)."""
import numpy as np
import pytest
from mlir import ir

from tidal.dialects import make_context
from tidal.passes import all_pass_names, register_pass, run_pipeline, unregister_pass
from tidal.runtime.scheduled import compile_sdg
from tidal.runtime.scheduled.checker import ScheduleCheckError, check_schedule, record_execution
from sdg_fixtures import UNSCHEDULABLE_FUTURE

V = "!tidal.tensor<[4], f32>"
NSTEP = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %r = sdg.unary sigmoid %x[t] domain [t] : ({V}) -> {V}
  %g = sdg.reduce sum [0] %r[t:min(t + 3, T)] domain [t] : ({V}) -> {V}
  sdg.output "g" %g[t] domain [t] : {V}
}}"""
PIPELINE = "builtin.module(sdg-schedule,sdg-lower-to-scf)"


LOWERING_PASSES = {
    "sdg-schedule": "tidal.lowering.sdg_schedule:SdgSchedule",
    "sdg-lower-to-scf": "tidal.lowering.sdg_lower_to_scf:SdgLowerToScf",
    "sdg-view-graph": "tidal.lowering.sdg_view_graph:SdgViewGraph",
}


@pytest.fixture(autouse=True)
def registered():
    """The passes, registered for this module only if the registry does not
    list them (the registry is process-global: other tests compare it)."""
    added = [name for name in LOWERING_PASSES if name not in all_pass_names()]
    for name in added:
        register_pass(name, LOWERING_PASSES[name])
    yield
    for name in added:
        unregister_pass(name)


def test_plugin_module_names_the_same_passes():
    import importlib
    from tidal.passes import get_pass
    before = set(all_pass_names())
    plugin = importlib.import_module("tidal.lowering.passes")
    assert plugin.PASSES == LOWERING_PASSES
    assert get_pass("sdg-schedule").name == "sdg-schedule"
    assert get_pass("sdg-lower-to-scf").name == "sdg-lower-to-scf"
    assert set(all_pass_names()) == before


def lowered(text: str, pipeline: str = PIPELINE):
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text)
        run_pipeline(module, pipeline)
        return ctx, module


def test_pipeline_lowers_to_func_scf_arith():
    ctx, module = lowered(NSTEP)
    text = str(module)
    assert "sdg.graph @g dims [t < T] attributes {tidal.schedule = " in text
    assert "func.func @g_run(%arg0: index) attributes {tidal.bounds = [\"T\"], tidal.graph = @g}" in text
    for op in ("scf.for", "arith.constant", "func.call @g_op1(", "func.call @g_op2(",
               "func.func private @g_op2(index) attributes {tidal.graph = @g, "
               "tidal.op = \"%2 = sdg.reduce sum\", tidal.op_index = 2 : i64}"):
        assert op in text, text
    with ctx:
        assert module.operation.verify()
        again = ir.Module.parse(text)                     # round trip
        assert str(again) == text
        generic = module.operation.get_asm(print_generic_op_form=True)
        assert str(ir.Module.parse(generic)) == text


def test_lowering_twice_is_lowering_once():
    ctx, module = lowered(NSTEP, PIPELINE)
    once = str(module)
    with ctx:
        run_pipeline(module, PIPELINE)
        assert str(module) == once
        assert module.operation.verify()


def test_schedule_pass_options_and_idempotence():
    ctx, module = lowered(NSTEP, "builtin.module(sdg-schedule{separate=false whole-component=false})")
    with ctx:
        graph = module.body.operations[0]
        first = ir.StringAttr(graph.attributes["tidal.schedule"]).value
        assert "separate" not in first
        run_pipeline(module, "builtin.module(sdg-schedule{separate=false whole-component=false})")
        assert ir.StringAttr(graph.attributes["tidal.schedule"]).value == first


def test_lowering_needs_a_schedule():
    with make_context():
        module = ir.Module.parse(NSTEP)
        with pytest.raises(ir.MLIRError) as info:
            run_pipeline(module, "builtin.module(sdg-lower-to-scf)")
    assert "run sdg-schedule first" in str(info.value)


def test_unschedulable_graph_fails_the_pass_at_the_culprit_op():
    text = UNSCHEDULABLE_FUTURE
    with make_context():
        module = ir.Module.parse(text)
        with pytest.raises(ir.MLIRError) as info:
            run_pipeline(module, PIPELINE)
    diag = info.value.error_diagnostics[0]
    assert "-:5:" in str(diag.location) or ":5:" in str(diag.location)
    assert "reads %1[t + 1]" in diag.message and "'%1 = sdg.merge' at -:4:8" in diag.message


def test_readable_schedule():
    exe = compile_sdg(NSTEP, backend="numpy")
    assert exe.schedule() == """@g(T):
for c0 in range(min(1, T - 1) + 1):
  %0 = sdg.input "x"  [t = c0]
  %1 = sdg.unary sigmoid  [t = c0]
alloc %2
for c0 in range(2, T):
  %0 = sdg.input "x"  [t = c0]
  %1 = sdg.unary sigmoid  [t = c0]
  %2 = sdg.reduce sum  [t = c0 - 2]
  sdg.output "g"  [t = c0 - 2]
free %0
for c0 in range(max(2, T), T + 2):
  %2 = sdg.reduce sum  [t = c0 - 2]
  sdg.output "g"  [t = c0 - 2]
"""
    assert "def _program(T):" in exe.source and "for c" in exe.source


def test_checker_walks_the_lowered_program():
    exe = compile_sdg(NSTEP, backend="numpy")
    for T in (1, 2, 3, 8):
        report = check_schedule(exe, {"T": T})
        assert report.executions == 4 * T
        assert report.dependences == T + sum(min(t + 3, T) - t for t in range(T)) + T  # x->r, r->g, g->out
    log = record_execution(exe, {"T": 4})
    assert log[:3] == [(0, (0,)), (1, (0,)), (0, (1,))]


def test_checker_catches_a_wrong_order(monkeypatch):
    exe = compile_sdg(NSTEP, backend="numpy")
    import tidal.runtime.scheduled.checker as checker
    real = checker.record_execution

    def swapped(exe_, bounds, memory=None):
        log = real(exe_, bounds, memory)
        i = log.index((2, (0,)))
        j = log.index((1, (2,)))
        log[i], log[j] = log[j], log[i]     # g[0] before r[2], which it reads
        return log
    monkeypatch.setattr(checker, "record_execution", swapped)
    with pytest.raises(ScheduleCheckError, match="reads %1\\[t:min\\(t \\+ 3, T\\)\\]"):
        checker.check_schedule(exe, {"T": 5})

    def dropped(exe_, bounds, memory=None):
        return real(exe_, bounds, memory)[:-1]
    monkeypatch.setattr(checker, "record_execution", dropped)
    with pytest.raises(ScheduleCheckError, match="never ran"):
        checker.check_schedule(exe, {"T": 5})

    def early_free(exe_, bounds, memory=None):
        log = real(exe_, bounds, memory)
        assert ("free", 0, 2 * 2 + 3 * 4) in memory     # x: after the steady loop (T = 5)
        memory[:] = [(kind, k, 3 if kind == "free" else at) for kind, k, at in memory]
        return log
    monkeypatch.setattr(checker, "record_execution", early_free)
    with pytest.raises(ScheduleCheckError, match="reads %0\\[t\\] at \\(1,\\) outside the lifetime"):
        checker.check_schedule(exe, {"T": 5})


def test_one_compile_many_bounds():
    exe = compile_sdg(NSTEP, backend="numpy")
    for T in (1, 4, 50):
        x = np.ones((T, 4), np.float32)
        out = exe.run({"T": T}, {"x": x})["g"]
        sig = 1 / (1 + np.exp(-1.0))
        expected = [min(3, T - t) * sig for t in range(T)]
        np.testing.assert_allclose(out[:, 0], expected, rtol=1e-6)


# -- names and inputs the verifiers let through (issue 8.8) ---------------------------------
KEYWORDS = f"""
sdg.graph @keywords dims [floor < exists, t < c0] {{
  %x = sdg.input "x" domain [floor, t] : {V}
  %s = sdg.merge %x[floor, t] if <t eq 0>, %y[floor, t - 1] if <true> domain [floor, t] : ({V}, {V}) -> {V}
  %y = sdg.unary tanh %s[floor, t] domain [floor, t] : ({V}) -> {V}
  %w = sdg.reduce sum [0] %y[floor, max(0, t - 2):t + 1] domain [floor, t] : ({V}) -> {V}
  %l = sdg.reduce sum [0] %x[exists - 1 - floor, 0:c0] domain [floor] : ({V}) -> {V}
  sdg.output "w" %w[floor, t] domain [floor, t] : {V}
  sdg.output "l" %l[floor] domain [floor] : {V}
}}"""


def test_dimension_names_isl_reserves_schedule_store_and_run():
    """`floor` and `exists` are isl keywords, `c0` the name of isl's first loop iterator."""
    from tidal.runtime.reference import evaluate
    exe = compile_sdg(KEYWORDS, backend="numpy")
    assert exe.store_kinds()["%2"] == "window [floor:ring(1), t:window(3)]"   # verified with isl
    for bounds in ({"exists": 1, "c0": 1}, {"exists": 2, "c0": 5}, {"exists": 3, "c0": 2}):
        x = np.random.default_rng(0).normal(size=(bounds["exists"], bounds["c0"], 4)).astype(np.float32)
        got = exe.run(bounds, {"x": x})
        want = evaluate(KEYWORDS, bounds, {"x": x})
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, err_msg=f"{name} {bounds}")


def test_a_graph_name_that_needs_quoting_lowers():
    text = NSTEP.replace("@g ", '@"my graph" ')
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, PIPELINE)
        run_pipeline(module, "builtin.module(sdg-lower-to-scf)")      # lowering twice: same functions
        names = [op.operation.attributes["sym_name"] for op in module.body.operations
                 if op.operation.name == "func.func"]
    assert [str(n) for n in names] == ['"my graph_op0"', '"my graph_op1"', '"my graph_op2"', '"my graph_op3"',
                                       '"my graph_alloc2"', '"my graph_free0"', '"my graph_run"']


@pytest.mark.parametrize("pipeline", [PIPELINE, "builtin.module(sdg-schedule)"])
def test_a_non_affine_dependence_fails_the_pass_at_its_op(pipeline):
    text = NSTEP.replace("%r[t:min(t + 3, T)]", "%r[t * t:T]")
    with make_context():
        module = ir.Module.parse(text)
        with pytest.raises(ir.MLIRError) as info:
            run_pipeline(module, pipeline)
    assert info.value.__cause__ is None                       # not an internal error
    (diag,) = info.value.error_diagnostics
    assert str(diag.location) == 'loc("-":5:8)'
    assert diag.message.startswith("'sdg.reduce' operand 0 (%1[t * t:T]) cannot be scheduled")


def test_loop_tree_folds_conditions_the_context_decides():
    """isl writes a guard that the context decides as an integer (with a derived
    bound N = (T + 63) // 64 in the context; seen on REINFORCE tiled by sdg-tile):
    and/or/not/select of such a constant fold away before the tree is used."""
    from tidal.lowering.loop_ast import _fold_constant_condition as fold
    ge = ("ge", ("var", "T"), ("int", 2))
    assert fold(("and", ("int", 1), ge)) == ge
    assert fold(("and", ge, ("int", 0))) == ("int", 0)
    assert fold(("or", ("int", 0), ge)) == ge
    assert fold(("or", ge, ("int", 1))) == ("int", 1)
    assert fold(("not", ("int", 0))) == ("int", 1)
    assert fold(("select", ("int", 0), ("var", "a"), ("var", "b"))) == ("var", "b")
    assert fold(("and", ge, ge)) == ("and", ge, ge)
