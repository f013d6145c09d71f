"""Parsing mixed pipelines and running them (tidal.passes.run_pipeline)."""
from dataclasses import dataclass
from typing import ClassVar

import pytest
from mlir import ir

import tidal.lowering.passes  # noqa: F401  (sdg-schedule, sdg-lower-to-scf)
from tidal.dialects import make_context
from tidal.passes import (ModulePass, PassFailure, PipelineError, TidalStep, UpstreamStep,
                          get_pass, option, parse_pipeline, register_pass, run_pipeline,
                          unregister_pass)

ARITH = """
func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  %1 = arith.muli %0, %0 : i32
  %2 = arith.muli %0, %0 : i32
  %3 = arith.addi %1, %2 : i32
  return %3 : i32
}
sdg.graph @g dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
  %e = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
  sdg.output "x" %x[t] domain [t] : !tidal.tensor<[4], f32>
}
"""


@dataclass
class _Record(ModulePass):
    name: ClassVar[str] = "test-record"
    summary: ClassVar[str] = "records its options"
    count: int = option(1)
    scale: float = option(0.5)
    flag: bool = option(False)
    names: list[str] = option([])

    def run(self, op):
        op.attributes["test.seen"] = ir.StringAttr.get(f"{self.count} {self.flag} {self.names}")


@dataclass
class _Fail(ModulePass):
    name: ClassVar[str] = "test-fail"
    summary: ClassVar[str] = "fails on the first func"
    how: str = option("raise")

    def run(self, op):
        func = op.regions[0].blocks[0].operations[0]
        if self.how == "raise":
            raise PassFailure("no functions allowed", func)
        if self.how == "emit":
            func.location.emit_error("emitted on the func")
        else:
            raise KeyError("a bug")


@pytest.fixture(autouse=True)
def test_passes():
    register_pass(_Record, replace=True)
    register_pass(_Fail, replace=True)
    yield
    unregister_pass("test-record")
    unregister_pass("test-fail")


@pytest.fixture
def module():
    with make_context(), ir.Location.unknown():
        yield ir.Module.parse(ARITH)


def test_mixed_pipeline_is_split_into_ordered_steps():
    p = parse_pipeline("builtin.module(cse, func.func(canonicalize{max-iterations=2}),"
                       "test-record{count=3 flag names=a,b},canonicalize,sdg-dce)")
    kinds = [(type(s).__name__, s.text if isinstance(s, UpstreamStep) else s.name) for s in p.steps]
    assert kinds == [("UpstreamStep", "cse"),
                     ("UpstreamStep", "func.func(canonicalize{max-iterations=2})"),
                     ("TidalStep", "test-record"), ("UpstreamStep", "canonicalize"),
                     ("TidalStep", "sdg-dce")]
    rec = p.steps[2].pass_
    assert (rec.count, rec.scale, rec.flag, rec.names) == (3, 0.5, True, ["a", "b"])
    assert [r.name for r in p.steps[1].refs] == ["canonicalize"]


def test_bare_lists_and_the_root_anchor_are_the_same():
    a, b = parse_pipeline("sdg-dce,cse"), parse_pipeline("builtin.module(sdg-dce,cse)")
    assert [type(s) for s in a.steps] == [type(s) for s in b.steps] == [TidalStep, UpstreamStep]
    assert parse_pipeline("").steps == [] and parse_pipeline("builtin.module()").steps == []
    # a single func.func(...) is an element of the module pipeline
    (step,) = parse_pipeline("func.func(cse)").steps
    assert isinstance(step, UpstreamStep) and step.text == "func.func(cse)"


@pytest.mark.parametrize("text,col,message", [
    ("builtin.module(test-record{cont=1})", 28,
     "no such option 'cont' for pass 'test-record'; valid options: count=<int>, scale=<float>, "
     "flag=<bool>, names=<list[str]>"),
    ("test-record{count=x}", 13, "invalid value 'x' for option 'count' of pass 'test-record': "
                                 "expected an integer"),
    ("test-record{flag=maybe}", 13, "expected a boolean"),
    ("test-record{count=1 count=2}", 21, "option 'count' of pass 'test-record' is given twice"),
    ("builtin.module(func.func(sdg-dce))", 26,
     "Tidal pass 'sdg-dce' runs on the top-level 'builtin.module' only"),
    ("builtin.module(builtin.module(sdg-dce))", 31, "cannot be nested under 'builtin.module'"),
    ("builtin.module(cse", 19, "unbalanced parentheses"),
    ("cse,,sdg-dce", 5, "expected a pass name or an op anchor, found ','"),
    ("test-record{count=1", 12, "unbalanced braces"),
    ("cse) x", 4, "expected ',' or 'end of pipeline' after 'cse', found ')'"),
    ("sdg-dce cse", 9, "expected ',' or 'end of pipeline' after 'sdg-dce', found 'c'"),
])
def test_pipeline_errors_point_at_the_culprit(text, col, message):
    with pytest.raises(PipelineError) as err:
        parse_pipeline(text)
    assert message in err.value.message
    assert err.value.col == col
    shown = err.value.format()
    assert shown.startswith(f"<pass-pipeline>:1:{col}: error: ")
    assert shown.splitlines()[1:] == [text, " " * (col - 1) + "^"]


def test_upstream_names_and_options_are_checked_by_mlir(module):
    with pytest.raises(PipelineError, match="'no-such-pass' does not refer to a registered pass") as e:
        run_pipeline(module, "builtin.module(cse,func.func(no-such-pass))")
    assert e.value.col == 30
    with pytest.raises(PipelineError, match="max-iterations") as e:
        run_pipeline(module, "canonicalize{max-iterations=abc}")
    with pytest.raises(PipelineError, match="no such option foo"):
        run_pipeline(module, "canonicalize{foo=1}")
    with pytest.raises(PipelineError, match="print_ir_after: 'nope' is not a registered pass"):
        run_pipeline(module, "cse", print_ir_after=["nope"])


def test_run_pipeline_mixes_upstream_and_tidal_passes_in_order(module):
    assert run_pipeline(module, "builtin.module(sdg-dce,func.func(canonicalize),cse,"
                                "test-record{count=2 names=x})") is module
    text = str(module)
    assert "sdg.unary exp" not in text                       # sdg-dce ran
    assert text.count("arith.muli") == 1 and "arith.constant" not in text  # canonicalize + cse
    assert 'test.seen = "2 False [\'x\']"' in text           # the Tidal pass ran last, with options


def test_ir_dumps_for_python_and_upstream_passes(module, capfd):
    run_pipeline(module, "sdg-dce,cse", print_ir_after_all=True)
    err = capfd.readouterr().err
    assert "// -----// IR Dump After SdgDeadCodeElimination (sdg-dce) //----- //" in err
    assert "// -----// IR Dump After CSE (cse) //----- //" in err
    run_pipeline(module, "builtin.module(test-record,func.func(canonicalize),cse)",
                 print_ir_before=["cse"], print_ir_after="test-record")
    err = capfd.readouterr().err
    assert err.count("IR Dump") == 2
    assert err.index("IR Dump After _Record (test-record)") < err.index("IR Dump Before CSE (cse)")


def test_pass_failure_becomes_an_mlir_error_at_the_named_op():
    with make_context():
        module = ir.Module.parse(ARITH)
        with pytest.raises(ir.MLIRError) as err:
            run_pipeline(module, "test-fail,sdg-dce")
        (diag,) = err.value.error_diagnostics
        assert diag.message == "no functions allowed"
        assert diag.location.start_line == 2  # the func, not the module
        assert "sdg.unary exp" in str(module)   # sdg-dce never ran
        with pytest.raises(ir.MLIRError, match="emitted on the func"):
            run_pipeline(module, "test-fail{how=emit}")


def test_a_crashing_pass_is_an_error_whose_cause_is_the_exception():
    with make_context():
        module = ir.Module.parse(ARITH)
        with pytest.raises(ir.MLIRError, match="internal error in pass 'test-fail': KeyError") as err:
            run_pipeline(module, "test-fail{how=crash}")
        assert isinstance(err.value.__cause__, KeyError)
        # the context is still usable afterwards
        run_pipeline(module, "sdg-dce")
        assert "sdg.unary exp" not in str(module)


def test_get_pass_returns_the_class_used_by_pipelines():
    (step,) = parse_pipeline("sdg-dce{keep-udfs=false}").steps
    assert type(step.pass_) is get_pass("sdg-dce") and step.pass_.keep_udfs is False


def test_an_unterminated_bracket_in_options_is_reported_at_its_item():
    text = "builtin.module(sdg-dce{keep-udfs=(true})"
    with pytest.raises(PipelineError, match="unterminated quote or brace in pass options") as info:
        parse_pipeline(text)
    assert text[info.value.col - 1:].startswith("keep-udfs=(true")  # the caret points at the item


def test_top_level_pieces_respects_quotes_and_brackets():
    from tidal.passes.base import top_level_pieces

    assert top_level_pieces('a, "b,c", {d, e}, [f,g]', lambda ch: ch == ",") == [
        (0, "a"), (2, ' "b,c"'), (9, " {d, e}"), (17, " [f,g]")]
    assert top_level_pieces("x=1  y='a b'", str.isspace) == [(0, "x=1"), (5, "y='a b'")]
    with pytest.raises(ValueError):
        top_level_pieces("a, (b", lambda ch: ch == ",")


def test_every_registered_sdg_pass_runs_without_a_default_context():
    """A pipeline run outside `with context:` (a script calling run_pipeline on a
    parsed module): every pass creates its attributes in the module's context
    (sdg-schedule once made its schedule attribute without one and failed)."""
    module = ir.Module.parse(ARITH.split("}\n", 1)[1], make_context())
    run_pipeline(module, "sdg-dce,sdg-simplify,cse,sdg-reassociate,sdg-lift,sdg-vectorize,sdg-fuse,"
                         "sdg-schedule,sdg-lower-to-scf")
    assert "func.func" in str(module) and "scf.for" in str(module)
