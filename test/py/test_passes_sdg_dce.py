"""sdg-dce on graphs built in Python, and against a reference on random graphs."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir

from tidal.dialects import enums, make_context, sdg
from tidal.dialects.attrs import expr_attr, index_attr, tensor_type
from tidal.passes import get_pass, run_pipeline

SdgDce = get_pass("sdg-dce")


@pytest.fixture
def ctx():
    with make_context() as c, ir.Location.unknown():
        yield c


def _i32(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def _deps(*texts):
    return ir.ArrayAttr.get([index_attr([t]) if t else index_attr([]) for t in texts])


def build_graph():
    """An sdg graph with a live recurrence, a dead cycle through a merge, a
    dead chain and a UDF that reads a value nothing else needs."""
    v4 = tensor_type([4], "f32")
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        graph = sdg.GraphOp("g", ir.ArrayAttr.get([ir.StringAttr.get("t")]),
                            ir.ArrayAttr.get([ir.StringAttr.get("T")]))
    dom = index_attr(["t"])
    conds = ir.ArrayAttr.get([expr_attr("t eq 0"), expr_attr("true")])
    with ir.InsertionPoint(graph.body.blocks.append()):
        x = sdg.InputOp(v4, "x", dom).result
        sdg.InputOp(v4, "unread", dom)
        # live: s[t] = x[0] if t == 0 else tanh(s[t-1])
        live = sdg.MergeOp(v4, [x, x], _deps("0", "t"), conds, dom)
        tanh = sdg.UnaryOp(v4, _i32(enums.UnaryKind.tanh), [live.result], _deps("t - 1"), dom)
        live.operation.operands[1] = tanh.result
        # dead: the same cycle, which no output reads
        dead = sdg.MergeOp(v4, [x, x], _deps("0", "t"), conds, dom)
        neg = sdg.UnaryOp(v4, _i32(enums.UnaryKind.neg), [dead.result], _deps("t - 1"), dom)
        dead.operation.operands[1] = neg.result
        exp = sdg.UnaryOp(v4, _i32(enums.UnaryKind.exp), [x], _deps("t"), dom).result
        sdg.UnaryOp(v4, _i32(enums.UnaryKind.log), [exp], _deps("t"), dom)  # dead chain
        sdg.UdfOp([tensor_type([], "f32")], "env.log", [exp], _deps("t"), dom)
        sdg.OutputOp("s", live.result, index_attr(["t"]), dom)
    return module, graph


def op_names(graph):
    return [op.operation.name for op in graph.regions[0].blocks[0].operations]


def test_dce_on_a_graph_built_in_python(ctx):
    module, graph = build_graph()
    assert module.operation.verify()
    before = op_names(graph)
    assert before.count("sdg.merge") == 2 and len(before) == 10
    dce = SdgDce()
    dce.run(module.operation)
    # The unread input, the dead cycle (merge + neg) and the log; exp stays
    # because the UDF reads it.
    assert dce.num_erased == 4
    assert module.operation.verify()
    assert op_names(graph) == ["sdg.input", "sdg.merge", "sdg.unary", "sdg.unary", "sdg.udf",
                               "sdg.output"]
    text = str(module)
    assert "unread" not in text and "sdg.unary neg" not in text and "sdg.unary log" not in text
    assert "sdg.unary tanh" in text and "sdg.unary exp" in text


def test_keep_udfs_false_through_run_pipeline(ctx):
    module, graph = build_graph()
    run_pipeline(module, "sdg-dce{keep-udfs=false}")
    assert op_names(graph) == ["sdg.input", "sdg.merge", "sdg.unary", "sdg.output"]
    assert module.operation.verify()


def test_dce_is_idempotent_and_leaves_live_graphs_alone(ctx):
    module, graph = build_graph()
    SdgDce().run(module.operation)
    text = str(module)
    again = SdgDce()
    again.run(module.operation)
    assert again.num_erased == 0 and str(module) == text


# Random graphs: ops are inputs, unary/binary ops, merges, UDFs and outputs;
# operands may refer to any op (forward references and cycles included).
KINDS = ["input", "unary", "binary", "merge", "udf", "output"]
T = "!tidal.tensor<[4], f32>"


@st.composite
def random_graphs(draw):
    n = draw(st.integers(2, 12))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=n, max_size=n))
    kinds[0] = "input"  # something to read
    producers = [i for i, k in enumerate(kinds) if k != "output"]
    arity = {"input": 0, "unary": 1, "binary": 2, "merge": 2, "udf": 1, "output": 1}
    operands = [draw(st.lists(st.sampled_from(producers), min_size=arity[k], max_size=arity[k]))
                for k in kinds]
    return kinds, operands


def graph_text(kinds, operands):
    lines = []
    for i, (k, ops) in enumerate(zip(kinds, operands)):
        refs = [f"%v{j}[t]" for j in ops]
        dom = "domain [t]"
        if k == "input":
            lines.append(f'%v{i} = sdg.input "in{i}" {dom} : {T}')
        elif k == "unary":
            lines.append(f"%v{i} = sdg.unary exp {refs[0]} {dom} : ({T}) -> {T}")
        elif k == "binary":
            lines.append(f"%v{i} = sdg.binary add {refs[0]}, {refs[1]} {dom} : ({T}, {T}) -> {T}")
        elif k == "merge":
            lines.append(f"%v{i} = sdg.merge {refs[0]} if <t eq 0>, {refs[1]} if <true> {dom} "
                         f": ({T}, {T}) -> {T}")
        elif k == "udf":
            lines.append(f'%v{i} = sdg.udf "f{i}"({refs[0]}) {dom} : ({T}) -> {T}')
        else:
            lines.append(f'sdg.output "out{i}" {refs[0]} {dom} : {T}')
    return "sdg.graph @r dims [t < T] {\n  " + "\n  ".join(lines) + "\n}\n"


def reference_live(kinds, operands, keep_udfs):
    live = {i for i, k in enumerate(kinds) if k == "output" or (keep_udfs and k == "udf")}
    work = list(live)
    while work:
        for j in operands[work.pop()]:
            if j not in live:
                live.add(j)
                work.append(j)
    return live


@settings(max_examples=60)
@given(random_graphs(), st.booleans())
def test_dce_matches_reachability_on_random_graphs(graph, keep_udfs):
    kinds, operands = graph
    with make_context():
        module = ir.Module.parse(graph_text(kinds, operands))
        block = module.body.operations[0].regions[0].blocks[0]
        for i, op in enumerate(block.operations):  # tag ops to recognise them afterwards
            op.operation.attributes["tag"] = _i32(i)
        run_pipeline(module, f"sdg-dce{{keep-udfs={str(keep_udfs).lower()}}}")
        assert module.operation.verify()
        left = {ir.IntegerAttr(op.operation.attributes["tag"]).value for op in block.operations}
    assert left == reference_live(kinds, operands, keep_udfs)
