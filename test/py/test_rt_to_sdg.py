"""rt-to-sdg: the structure of the graphs it builds (merges, conditions,
dependences, cycles, locations), round trips, the index algebra it relies on,
and errors as diagnostics, never aborts."""
import pathlib

import pytest
from mlir import ir

from tidal.dialects import make_context
from tidal.dialects.attrs import expr_text, index_attr, index_components
from tidal.passes.base import ModulePass
from tidal.passes.registry import all_pass_names, get_pass
from tidal.passes.rt_to_sdg import RtToSdg, RtToSdgError, rt_to_sdg
from tidal.passes.rt_to_sdg_index import CaseError, compose, invert_case, location_text
from tidal.passes.runner import run_pipeline
from tidal.passes.sdg_verify_dependences import dependence_errors
from tidal.symbolic import Dim, parse, to_text
from sdg_fixtures import RT_RECURRENCE

ROOT = pathlib.Path(__file__).resolve().parents[2]

V = "!tidal.tensor<[4], f32>"
RECURRENCE = RT_RECURRENCE


@pytest.fixture
def ctx():
    with make_context() as c, ir.Location.unknown():
        yield c


def parse_named(text, name="prog.mlir"):
    op = ir.Operation.parse(text, source_name=name)
    module = ir.Module.create()
    module.body.append(op)
    return module


def graph_ops(module, symbol=None):
    graphs = [o for o in module.body.operations if o.operation.name == "sdg.graph"]
    if symbol is not None:
        graphs = [g for g in graphs if ir.StringAttr(g.attributes["sym_name"]).value == symbol]
    assert len(graphs) == 1
    return [o.operation for o in graphs[0].regions[0].blocks[0].operations]


def deps(op):
    return [index_components(d) for d in ir.ArrayAttr(op.attributes["deps"])]


def conds(op):
    return [expr_text(c) for c in ir.ArrayAttr(op.attributes["conds"])]


def test_recurrence_becomes_a_merge_in_a_cycle(ctx):
    module = parse_named(RECURRENCE)
    rt_to_sdg(module)
    assert module.operation.verify()
    names = [o.operation.name for o in module.body.operations]
    assert names == ["sdg.graph"]
    graph = module.body.operations[0]
    assert ir.StringAttr(graph.attributes["sym_name"]).value == "rec"
    assert [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])] == ["t"]
    x, merge, tanh, out = graph_ops(module)
    assert [o.name for o in (x, merge, tanh, out)] == ["sdg.input", "sdg.merge", "sdg.unary", "sdg.output"]
    assert conds(merge) == ["t eq 0", "t ge 1"]
    assert deps(merge) == [["0"], ["t - 1"]]
    assert merge.operands[0].owner == x and merge.operands[1].owner == tanh
    assert tanh.operands[0].owner == merge  # the cycle
    assert deps(tanh) == [["t"]]
    assert index_components(out.attributes["dep"]) == ["t"]
    assert index_components(out.attributes["domain"]) == ["t"]
    assert not dependence_errors(graph.operation)


def test_locations_are_kept(ctx):
    module = parse_named(RECURRENCE, "rec.mlir")
    lines = {o.operation.name: location_text(o.location)
             for o in module.body.operations[0].regions[0].blocks[0].operations}
    rt_to_sdg(module)
    x, merge, tanh, out = graph_ops(module)
    assert location_text(x.location) == lines["rt.input"] == "rec.mlir:3:8"
    assert location_text(merge.location) == lines["rt.recurrent"]
    assert location_text(tanh.location) == lines["rt.unary"]
    assert location_text(out.location) == lines["rt.output"]


def test_printed_graph_round_trips(ctx):
    module = parse_named((ROOT / "test/lit/dialects/rt-ops.mlir").read_text())
    rt_to_sdg(module)
    text = str(module)
    assert "rt." not in text
    again = ir.Module.parse(text)
    assert str(again) == text
    generic = module.operation.get_asm(print_generic_op_form=True)
    assert str(ir.Module.parse(generic)) == text
    assert not dependence_errors(module.body.operations[0].operation)


def test_every_rt_op_kind_is_converted(ctx):
    module = parse_named((ROOT / "test/lit/dialects/rt-ops.mlir").read_text())
    before = {o.operation.name[3:] for o in module.body.operations[0].regions[0].blocks[0].operations}
    rt_to_sdg(module)
    after = {o.name[4:] for o in graph_ops(module)}
    assert before - {"index", "recurrent", "define"} == after - {"merge"}
    merge = next(o for o in graph_ops(module) if o.name == "sdg.merge")
    # s[t + 1] if <t mod 5 eq 0 and t gt 0> = x[t + 1]: read x at t, shifted condition.
    assert deps(merge) == [["0"], ["t"], ["t"]]
    assert conds(merge) == ["t eq 0", "(t + 4) mod 5 eq 0 and t gt 1", "t ge 1"]


def test_backward_recurrence_reads_the_future(ctx):
    s = "!tidal.tensor<[], f32>"
    module = parse_named(f"""
rt.program @ret dims [t < T] {{
  %r = rt.input "r" domain [t] : {s}
  %v = rt.recurrent domain [t] : {s}
  %rl = rt.index %r[T - 1] domain [] : ({s}) -> {s}
  rt.define %v[T - 1] = %rl : {s}, {s}
  %vn = rt.index %v[t + 1] domain [t] : ({s}) -> {s}
  %a = rt.binary add %r, %vn domain [t] : ({s}, {s}) -> {s}
  rt.define %v[t] = %a : {s}, {s}
  rt.output "v" %v : {s}
}}""")
    rt_to_sdg(module)
    r, merge, add, out = graph_ops(module)
    assert conds(merge) == ["t eq T - 1", "true"]
    assert deps(merge) == [["T - 1"], ["t"]]
    assert add.operands[1].owner == merge and deps(add) == [["t"], ["t + 1"]]


def test_multi_dim_cases_and_projection(ctx):
    w = "!tidal.tensor<[3], f32>"
    module = parse_named(f"""
rt.program @p dims [i < I, t < T] {{
  %x = rt.input "x" domain [i, t] : {w}
  %o0 = rt.input "o0" domain [i] : {w}
  %o = rt.recurrent domain [i, t] : {w}
  rt.define %o[i, 0] = %o0 : {w}, {w}
  %n = rt.binary add %o, %x domain [i, t] : ({w}, {w}) -> {w}
  rt.define %o[i, t + 2] if <t mod 2 eq 0> = %n : {w}, {w}
  %back = rt.index %x[i, t - 1] domain [i, t] : ({w}) -> {w}
  rt.define %o[i, t] = %back : {w}, {w}
  rt.output "o" %o : {w}
}}""")
    rt_to_sdg(module)
    merge = next(o for o in graph_ops(module) if o.name == "sdg.merge")
    assert deps(merge) == [["i"], ["i", "t - 2"], ["i", "t - 1"]]
    assert conds(merge) == ["t eq 0", "t mod 2 eq 0 and t ge 2", "true"]


def test_index_of_index_composes_or_materialises(ctx):
    module = parse_named(f"""
rt.program @p dims [t < T] {{
  %x = rt.input "x" domain [t] : {V}
  %prev = rt.index %x[t - 1] domain [t] : ({V}) -> {V}
  %pp = rt.index %prev[t - 1] domain [t] : ({V}) -> {V}
  %win = rt.index %prev[1:t + 1] domain [t] : ({V}) -> !tidal.tensor<[t, 4], f32>
  %pre = rt.index %x[0:t + 1] domain [t] : ({V}) -> !tidal.tensor<[t + 1, 4], f32>
  %last = rt.index %pre[T - 1] domain [] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[T, 4], f32>
  rt.output "pp" %pp : {V}
  rt.output "win" %win : !tidal.tensor<[t, 4], f32>
  rt.output "last" %last : !tidal.tensor<[T, 4], f32>
}}""", "ix.mlir")
    rt_to_sdg(module)
    ops = graph_ops(module)
    x, reshape = ops[0], ops[1]
    outs = {ir.StringAttr(o.attributes["name"]).value: o for o in ops if o.name == "sdg.output"}
    assert outs["pp"].operands[0].owner == x
    assert index_components(outs["pp"].attributes["dep"]) == ["t - 2"]
    assert index_components(outs["win"].attributes["dep"]) == ["0:t"]
    assert reshape.name == "sdg.reshape" and deps(reshape) == [["0:t + 1"]]
    assert location_text(reshape.location) == "ix.mlir:7:10"  # the inner rt.index
    assert outs["last"].operands[0].owner == reshape
    assert index_components(outs["last"].attributes["dep"]) == ["T - 1"]
    assert index_components(outs["last"].attributes["domain"]) == []
    assert module.operation.verify()


def exprs(*texts):
    return tuple(parse(t, validate=False) for t in texts)


@pytest.mark.parametrize("inner, outer, expected", [
    (["t - 1"], ["t + 2"], ["t + 1"]),
    (["t - 1"], ["0:t + 1"], ["-1:t"]),
    (["t + 1"], ["max(0, t - 2):t + 1"], ["max(0, t - 2) + 1:t + 2"]),
    (["i", "t - 1"], ["2", "1:T:2"], ["2", "0:T - 1:2"]),
    (["t", "i"], ["0:I", "0:T"], None),          # the slice axes would swap
    (["max(0, t - 1)"], ["0:t"], None),          # not t + e
    (["t:T"], ["t"], None),                      # the inner index has a slice
    (["t", "t"], ["0:T"], None),                 # a diagonal
    (["i + t"], ["0:I", "3"], ["3:I + 3"]),
])
def test_compose(inner, outer, expected):
    steps = ["i", "t"] if len(outer) == 2 else ["t"]
    got = compose(exprs(*inner), steps, exprs(*outer))
    if expected is None:
        assert got is None
    else:
        assert [to_text(c, mlir=True) for c in got] == expected


def test_invert_case_of_shifts_and_constants():
    i, t = Dim("i"), Dim("t")
    inv = invert_case(exprs("i", "t + 3"), [i, t])
    assert {k: to_text(v, mlir=True) for k, v in inv.points.items()} == {"i": "i", "t": "t - 3"}
    assert to_text(inv.condition, mlir=True) == "t ge 3"
    inv = invert_case(exprs("I - 1", "t - 1"), [i, t])
    assert inv.constant == {"i"} and set(inv.points) == {"t"}
    assert to_text(inv.condition, mlir=True) == "i eq I - 1 and t lt T - 1"
    for bad in (["t", "i"], ["2 * i", "t"], ["i", "t + T"], ["i", "t mod 2"]):
        with pytest.raises(CaseError, match="not invertible"):
            invert_case(exprs(*bad), [i, t])


def test_invalid_index_is_an_error_at_the_op_and_leaves_the_program(ctx):
    module = parse_named(RECURRENCE, "bad.mlir")
    block = module.body.operations[0].regions[0].blocks[0]
    index = next(o for o in block.operations if o.operation.name == "rt.index")
    index.attributes["index"] = index_attr(["0", "1"])  # no verifier runs here
    before = str(module)
    with pytest.raises(RtToSdgError) as info:
        rt_to_sdg(module)
    assert "index has 2 components but the indexed tensor's domain [t] has 1 dimensions" in str(info.value)
    assert info.value.location == "bad.mlir:5:9"
    assert str(info.value).startswith("bad.mlir:5:9: ")
    assert info.value.op == index.operation
    assert str(module) == before  # the failed program is left alone


def test_pass_class_and_pipeline(ctx):
    assert issubclass(RtToSdg, ModulePass) and RtToSdg.name == "rt-to-sdg"
    assert "rt-to-sdg" in all_pass_names()
    assert get_pass("rt-to-sdg") is RtToSdg
    module = parse_named(RECURRENCE)
    run_pipeline(module, "builtin.module(rt-to-sdg)")
    assert "sdg.merge %0[0] if <t eq 0>, %2[t - 1] if <t ge 1>" in str(module)


def test_pipeline_failure_is_a_diagnostic_not_an_abort(ctx):
    module = parse_named(RECURRENCE.replace("rt.define %s[t + 1]", "rt.define %s[2 * t]"), "f.mlir")
    with pytest.raises(ir.MLIRError) as info:
        run_pipeline(module, "builtin.module(rt-to-sdg)")
    (diag,) = info.value.error_diagnostics
    assert "definition index component '2 * t'" in diag.message
    assert location_text(diag.location) == "f.mlir:8:3"
