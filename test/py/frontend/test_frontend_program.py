"""The frontend's reference program (issue "Frontend"): it traces to a verified
rt module whose ops, domains, index expressions, symbolic result types and
source locations are exactly what the user wrote."""
import subprocess

import numpy as np
from mlir import ir

import tidal as td
from tidal.symbolic import Dim, parse as sparse, simplify


def build():
    with td.Program() as p:
        (t, T), = p.dims("t")  # @dims
        x = td.input("x", shape=(4,), dtype="float32", domain=(t,))  # @x
        s = td.recurrent(shape=(4,), dtype="float32", domain=(t,))  # @s
        s[0] = x[0]  # @base
        s[t + 1] = s[t] * 0.5 + x[t + 1]  # @step
        w = x[td.max(0, t - 2):t + 1].sum(0)  # @w
        g = x[t:T].sum(0)  # @g
        c = x[0:t + 1].cumsum(0)[t]  # @c
        p.output("s", s); p.output("w", w); p.output("g", g)  # @out
    return p, dict(t=t, T=T, x=x, s=s, w=w, g=g, c=c)


CHECKS = """
CHECK: rt.program @main dims [t < T] {
CHECK-NEXT: [[X:%[0-9]+]] = rt.input "x" domain [t] : !tidal.tensor<[4], f32>
CHECK-NEXT: [[S:%[0-9]+]] = rt.recurrent domain [t] : !tidal.tensor<[4], f32>
CHECK-NEXT: [[X0:%[0-9]+]] = rt.index [[X]][0] domain [] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
CHECK-NEXT: rt.define [[S]][0] = [[X0]] : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
CHECK-NEXT: [[H:%[0-9]+]] = rt.constant dense<5.000000e-01> : tensor<f32> domain [] : !tidal.tensor<[], f32>
CHECK-NEXT: [[M:%[0-9]+]] = rt.binary mul [[S]], [[H]] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[4], f32>
CHECK-NEXT: [[XN:%[0-9]+]] = rt.index [[X]][t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
CHECK-NEXT: [[V:%[0-9]+]] = rt.binary add [[M]], [[XN]] domain [t] : (!tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
CHECK-NEXT: rt.define [[S]][t + 1] = [[V]] : !tidal.tensor<[4], f32>, !tidal.tensor<[4], f32>
CHECK-NEXT: [[WIN:%[0-9]+]] = rt.index [[X]][max(0, t - 2):t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[min(t, 2) + 1, 4], f32>
CHECK-NEXT: [[W:%[0-9]+]] = rt.reduce sum [0] [[WIN]] domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[4], f32>
CHECK-NEXT: [[SUF:%[0-9]+]] = rt.index [[X]][t:T] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[T - t, 4], f32>
CHECK-NEXT: [[G:%[0-9]+]] = rt.reduce sum [0] [[SUF]] domain [t] : (!tidal.tensor<[T - t, 4], f32>) -> !tidal.tensor<[4], f32>
CHECK-NEXT: [[PRE:%[0-9]+]] = rt.index [[X]][0:t + 1] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
CHECK-NEXT: [[CS:%[0-9]+]] = rt.scan cumsum 0 [[PRE]] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[t + 1, 4], f32>
CHECK-NEXT: rt.take 0 at <t> [[CS]] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[4], f32>
CHECK-NEXT: rt.output "s" [[S]] : !tidal.tensor<[4], f32>
CHECK-NEXT: rt.output "w" [[W]] : !tidal.tensor<[4], f32>
CHECK-NEXT: rt.output "g" [[G]] : !tidal.tensor<[4], f32>
CHECK-NEXT: }
"""


def test_reference_program_emits_the_expected_rt(filecheck):
    p, _ = build()
    filecheck(p.mlir(locations=False), CHECKS)


def test_module_verifies_and_round_trips_through_the_parser(parse):
    p, _ = build()
    text = p.mlir()
    module = parse(text)
    again = module.operation.get_asm(enable_debug_info=True, use_local_scope=True)
    assert again == text
    assert isinstance(p.module(), ir.Module) and p.module().operation.verify()


def test_module_round_trips_through_tidal_opt():
    p, _ = build()
    text = p.mlir(locations=False)
    out = subprocess.run(["tidal-opt"], input=text, capture_output=True, text=True, check=True).stdout
    again = subprocess.run(["tidal-opt"], input=out, capture_output=True, text=True, check=True).stdout
    assert out == again
    assert 'rt.index %0[max(0, t - 2):t + 1] domain [t]' in out


def test_every_op_carries_the_users_line(line_of, locs):
    p, _ = build()
    found = locs(p.mlir())
    me = __file__
    expected = [
        ("rt.input", "x"), ("rt.recurrent", "s"), ("rt.index", "base"), ("rt.define", "base"),
        ("rt.constant", "step"), ("rt.binary mul", "step"), ("rt.index", "step"), ("rt.binary add", "step"),
        ("rt.define", "step"), ("rt.index", "w"), ("rt.reduce", "w"), ("rt.index", "g"), ("rt.reduce", "g"),
        ("rt.index", "c"), ("rt.scan", "c"), ("rt.take", "c"),
        ("rt.output \"s\"", "out"), ("rt.output \"w\"", "out"), ("rt.output \"g\"", "out"),
    ]
    ops = [(text, where) for text, where in found if not text.startswith(("rt.program", "}", "module"))]
    assert len(ops) == len(expected)
    for (text, (file, line, col)), (op, marker) in zip(ops, expected):
        assert op in text
        assert (file, line) == (me, line_of(marker)), text
        assert col >= 1
    # Columns point at the expression: `s[0] = x[0]` puts the index at `x`, the define at `s`.
    base = {text.split(" ")[2] if text.startswith("%") else text.split(" ")[0]: col
            for text, (_, line, col) in ops if line == line_of("base")}
    assert base == {"rt.index": 16, "rt.define": 9}


def test_outputs_of_different_statements_on_one_line_have_their_own_columns(locs, line_of):
    p, _ = build()
    cols = [col for text, (_, line, col) in locs(p.mlir()) if text.startswith("rt.output")]
    assert cols == sorted(cols) and len(set(cols)) == 3


def test_symbolic_shapes_are_canonical():
    _, v = build()
    t, T = v["t"], v["T"]
    x = v["x"]
    win = x[td.max(0, t - 2):t + 1]
    assert [str(d) for d in win.shape] == ["min(t, 2) + 1", "4"]
    assert win.shape[0].same(simplify(sparse("min(t, 2) + 1", dims=[Dim("t")])))
    assert x[t:T].shape[0].same(simplify(T - t))
    assert v["w"].shape == v["g"].shape == v["c"].shape == x.shape
    assert x[0:T:2].shape[0].same(simplify((T + 1) // 2))


def test_graph_is_walkable():
    """Every tensor knows its node, op, inputs, attributes, shape, dtype, domain, location."""
    _, v = build()
    t = v["t"]
    s, x, w = v["s"], v["x"], v["w"]
    assert (x.op, x.name, x.domain, x.dtype) == ("input", "x", (Dim("t"),), np.dtype("float32"))
    assert w.op == "reduce" and w.attrs == {"kind": "sum", "dims": (0,), "keepdim": False}
    (win,) = w.inputs
    assert win.op == "index" and win.inputs == (x,)
    assert [str(c) for c in win.attrs["index"]] == ["max(0, t - 2):t + 1"]
    assert win.node.outputs == (win,) and win.loc.line == w.loc.line
    assert s.op == "recurrent" and len(s.cases) == 2
    base, step = s.cases
    assert [str(c) for c in base.index] == ["0"] and base.cond is None
    assert [str(c) for c in step.index] == ["t + 1"]
    add = step.value
    assert add.op == "binary" and add.attrs["kind"] == "add"
    mul, xn = add.inputs
    assert mul.inputs[0] is s and xn.attrs["index"][0].same(t + 1)
    assert s.program.nodes[0] is x.node


def test_reading_the_identity_returns_the_tensor_itself():
    _, v = build()
    t = v["t"]
    assert v["s"][t] is v["s"] and v["x"][:] is v["x"]


def test_dims_and_program_repr():
    p, v = build()
    assert [d.step.name for d in p.dim_list] == ["t"]
    assert "dims [t < T]" in repr(p)
    assert repr(v["w"]) == "RecurrentTensor(reduce sum, shape=(4,), dtype=float32, domain=(t,))"
