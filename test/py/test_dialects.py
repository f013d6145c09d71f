"""The rt/sdg dialects from Python: generated op classes, hand-written
attribute helpers, verifiers, and the mlir-opt plugin."""
import subprocess
import os
import pathlib

import pytest
from mlir import ir

from tidal.dialects import enums, make_context, plugin_path, rt, sdg
from tidal.dialects.attrs import (expr_attr, expr_text, index_attr, index_components,
                                  split_top_level, tensor_element_type, tensor_shape,
                                  tensor_type)

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def ctx():
    with make_context() as c, ir.Location.unknown():
        yield c


def int_attr(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def test_attribute_helpers_canonicalise_and_read_back(ctx):
    a = index_attr(["t-1", "0:t+1", "max(0,t-3):min(t+3, T)"])
    assert str(a) == "#tidal.index<[t - 1, 0:t + 1, max(0, t - 3):min(t + 3, T)]>"
    assert index_components(a) == ["t - 1", "0:t + 1", "max(0, t - 3):min(t + 3, T)"]
    assert expr_text(expr_attr("(t mod 5) eq 0 and not (t gt 3)")) == "t mod 5 eq 0 and not t gt 3"
    t = tensor_type(["T - t", 4], "f32")
    assert (tensor_shape(t), tensor_element_type(t)) == (["T - t", "4"], "f32")
    assert tensor_shape(tensor_type([], "i1")) == []
    assert split_top_level("a, min(b, c), [d, e]") == ["a", "min(b, c)", "[d, e]"]


@pytest.mark.parametrize("bad", ["t % 2", "t //2", "min(t)", "floordiv", "t +", "select(t, 1)"])
def test_malformed_expressions_raise_value_error_naming_them(ctx, bad):
    with pytest.raises(ValueError, match="invalid symbolic attribute"):
        index_attr([bad])


def test_precedence_is_preserved_by_printing(ctx):
    # Parenthesised where needed, dropped where redundant.
    assert index_components(index_attr(["(t - 1) * 2", "t - (1 - T)", "(t * 2) + 1", "-(t + 1)"])) == [
        "(t - 1) * 2", "t - (1 - T)", "t * 2 + 1", "-(t + 1)"]


def build_recurrence():
    """s[0] = x[0]; s[t] = tanh(s[t-1]) + x[t] -- a cycle through a merge."""
    v4 = tensor_type([4], "f32")
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        graph = sdg.GraphOp("rec", ir.ArrayAttr.get([ir.StringAttr.get("t")]),
                            ir.ArrayAttr.get([ir.StringAttr.get("T")]))
    block = graph.body.blocks.append()
    dom_t = index_attr(["t"])
    with ir.InsertionPoint(block):
        x = sdg.InputOp(v4, "x", dom_t).result
        # The merge reads %n, defined later: build it with a placeholder first.
        merge = sdg.MergeOp(v4, [x, x], ir.ArrayAttr.get([index_attr(["0"]), index_attr(["t"])]),
                            ir.ArrayAttr.get([expr_attr("t eq 0"), expr_attr("true")]), dom_t)
        u = sdg.UnaryOp(v4, int_attr(enums.UnaryKind.tanh), [merge.result],
                        ir.ArrayAttr.get([index_attr(["t - 1"])]), dom_t).result
        n = sdg.BinaryOp(v4, int_attr(enums.BinaryKind.add), [u, x],
                         ir.ArrayAttr.get([index_attr(["t"]), index_attr(["t"])]), dom_t).result
        merge.operation.operands[1] = n
        sdg.OutputOp("s", merge.result, index_attr(["t"]), dom_t)
    return module


def test_build_a_cyclic_graph_from_python(ctx):
    module = build_recurrence()
    assert module.operation.verify()
    text = str(module)
    assert "sdg.merge %0[0] if <t eq 0>, %3[t] if <true> domain [t]" in text
    assert "sdg.unary tanh %1[t - 1] domain [t]" in text
    # Parses back to the same text, and ops come back as their Python classes.
    again = ir.Module.parse(text)
    assert str(again) == text
    ops = list(again.body.operations[0].regions[0].blocks[0].operations)
    assert [type(o).__name__ for o in ops] == ["InputOp", "MergeOp", "UnaryOp", "BinaryOp", "OutputOp"]


def test_verifier_errors_are_exceptions_not_aborts(ctx):
    module = build_recurrence()
    graph = module.body.operations[0]
    merge = list(graph.regions[0].blocks[0].operations)[1]
    merge.attributes["conds"] = ir.ArrayAttr.get([expr_attr("true")])
    with pytest.raises(ir.MLIRError, match="needs one condition per branch"):
        module.operation.verify()


def test_rt_program_parses_with_ssa_dominance(ctx):
    text = (ROOT / "test/lit/dialects/rt-ops.mlir").read_text()
    module = ir.Module.parse(text)
    program = module.body.operations[0]
    assert isinstance(program, rt.ProgramOp)
    names = {op.operation.name for op in program.regions[0].blocks[0].operations}
    assert {"rt.recurrent", "rt.define", "rt.index", "rt.output", "rt.udf"} <= names


def test_plugin_loads_into_upstream_mlir_opt():
    mlir_opt = pathlib.Path(list(__import__("mlir").__path__)[0]) / "bin" / "mlir-opt"
    example = ROOT / "examples" / "recurrence.sdg.mlir"
    out = subprocess.run([str(mlir_opt), f"--load-dialect-plugin={plugin_path()}", str(example)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert 'sdg.output "g" %6[t] domain [t] : !tidal.tensor<[4], f32>' in out.stdout


def test_ops_named_finds_nested_matches_without_looking_inside_them(ctx):
    from tidal.dialects import ops_named

    text = (ROOT / "examples/recurrence.sdg.mlir").read_text()
    module = ir.Module.parse(f"module {{\n{text}\n}}\n{text.replace('@recurrence', '@again')}")
    graphs = ops_named(module, "sdg.graph")
    assert [ir.StringAttr(g.attributes["sym_name"]).value for g in graphs] == ["recurrence", "again"]
    assert len(ops_named(module, "sdg.output")) == 6
    assert ops_named(module, "sdg.graph", "sdg.output") == graphs  # no descent into a match
