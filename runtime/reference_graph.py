"""Decoding an `sdg.graph` for the reference interpreter (reference.py).

Each op becomes a `Node`: its domain and extents, its operands with their
dependence expressions compiled once (`tidal.symbolic.compile_expr`, bounds
already substituted), its result shapes and dtypes, and a `compute`
function that applies the op's kernel (runtime/kernels.py) with the op's
attributes decoded into plain Python.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from mlir import ir

from tidal.dialects import enums
from tidal.dialects.element_types import NUMPY_DTYPES, dense_array
from tidal.dialects.attrs import (expr_text, index_components, tensor_element_type,
                                  tensor_shape)
from tidal.passes.rt_to_sdg_index import location_text
from tidal.symbolic import (Dim, IndexSeq, SymbolicError, compile_expr, parse, slice_size,
                            substitute)

from . import kernels as K

__all__ = ["EvaluationError", "Node", "Operand", "DTYPES", "decode_graph", "format_point"]

DTYPES = NUMPY_DTYPES   # MLIR element type -> NumPy dtype, bf16 included


def format_point(steps: Sequence[str], point: Sequence[int]) -> str:
    return "(" + ", ".join(f"{s}={p}" for s, p in zip(steps, point)) + ")"


class EvaluationError(RuntimeError):
    """An error while evaluating an SDG: names the op's location (file:line:col),
    the op and the point. `location`, `op_name` and `point` are attributes."""

    def __init__(self, message: str, node: "Node | None" = None, point: Sequence[int] | None = None):
        self.message = message
        self.location = node.loc if node is not None else None
        self.op_name = node.op_name if node is not None else None
        self.point = tuple(point) if point is not None else None
        where = ""
        if node is not None:
            where = f"{node.loc}: '{node.op_name}'"
            if point is not None:
                where += f" at point {format_point(node.steps, point)}"
            where += ": "
        super().__init__(where + message)


@dataclass
class Operand:
    """Operand `number` of a node: result `result` of `producer`, read at
    the points `dep(*point)` selects (a tuple of ints and slices)."""

    number: int
    producer: "Node"
    result: int
    dep: Callable
    text: str
    has_slices: bool


@dataclass
class Node:
    op_name: str                       # sdg.binary
    kind: str                          # binary
    loc: str                           # file:line:col
    steps: tuple[str, ...]             # the domain, in program order
    extents: tuple[int, ...]
    index: int = 0
    operands: list[Operand] = field(default_factory=list)
    shapes: list[Callable] = field(default_factory=list)     # point -> shape tuple, per result
    shape_texts: list[str] = field(default_factory=list)
    varying: list[bool] = field(default_factory=list)        # shape mentions a step
    dtypes: list[Any] = field(default_factory=list)
    compute: Callable | None = None    # (args, point, evaluator) -> tuple of arrays
    conds: list[Callable] = field(default_factory=list)      # merge branches
    cond_texts: list[str] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)     # decoded attributes

    def in_domain(self, point: Sequence[int]) -> bool:
        return all(0 <= p < e for p, e in zip(point, self.extents))


class _Decoder:
    def __init__(self, graph: ir.Operation, bounds: dict[str, int]):
        steps = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])]
        bound_names = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["bounds"])]
        self.dims = [Dim(s, bound=b) for s, b in zip(steps, bound_names)]
        self.extent = {s: bounds[b] for s, b in zip(steps, bound_names)}
        self.bound_values = {b: bounds[b] for b in bound_names}
        self.nodes: dict[ir.Operation, Node] = {}

    # -- symbolic helpers ----------------------------------------------------------
    def expr(self, text: str, node: Node, what: str):
        try:
            return substitute(parse(text, dims=self.dims, validate=False), self.bound_values)
        except SymbolicError as e:
            raise EvaluationError(f"{what} '{text}': {str(e).splitlines()[0]}", node) from None

    def compile(self, e, node: Node, what: str) -> Callable:
        try:
            return compile_expr(e, list(node.steps))
        except SymbolicError as e:
            raise EvaluationError(f"{what}: {str(e).splitlines()[0]} (the op's domain is "
                                  f"[{', '.join(node.steps)}])", node) from None

    def seq(self, texts: Sequence[str], node: Node, what: str) -> IndexSeq:
        return IndexSeq([self.expr(t, node, what) for t in texts], validate=False)

    def scalar(self, op: ir.Operation, name: str, node: Node) -> Callable:
        text = expr_text(op.attributes[name])
        return self.compile(self.expr(text, node, name), node, name)

    # -- decoding ------------------------------------------------------------------
    def node(self, op: ir.Operation) -> Node:
        steps = tuple(index_components(op.attributes["domain"])) if "domain" in op.attributes else ()
        kind = op.name.split(".", 1)[1]
        node = Node(op.name, kind, location_text(op.location), steps,
                    tuple(self.extent.get(s, 0) for s in steps))
        unknown = [s for s in steps if s not in self.extent]
        if unknown:
            raise EvaluationError(f"domain step '{unknown[0]}' is not a dim of the graph", node)
        for result in op.results:
            texts = tensor_shape(result.type)
            shape = self.seq(texts, node, "result shape")
            node.shape_texts.append("[" + ", ".join(texts) + "]")
            node.varying.append(any(s.role == "step" for s in shape.free_symbols))
            node.shapes.append(self.compile(shape, node, "result shape"))
            elt = tensor_element_type(result.type)
            if elt not in DTYPES:
                raise EvaluationError(f"element type {elt} is not supported (expected one of "
                                      f"{', '.join(DTYPES)})", node)
            node.dtypes.append(np.dtype(DTYPES[elt]))
        return node

    def link(self, op: ir.Operation, node: Node) -> None:
        """Operands (after every op has a node: graphs have cycles)."""
        if "deps" in op.attributes:
            deps = [index_components(d) for d in ir.ArrayAttr(op.attributes["deps"])]
        elif "dep" in op.attributes:
            deps = [index_components(op.attributes["dep"])]
        else:
            deps = [[] for _ in op.operands]
        if len(deps) != len(op.operands):
            raise EvaluationError(f"{len(op.operands)} operands but {len(deps)} dependences", node)
        for i, (value, texts) in enumerate(zip(op.operands, deps)):
            owner = value.owner
            producer = self.nodes.get(owner.operation if hasattr(owner, "operation") else owner)
            if producer is None:
                raise EvaluationError(f"operand {i} is not produced by an op of the graph", node)
            if len(texts) != len(producer.steps):
                raise EvaluationError(
                    f"operand {i} has dependence [{', '.join(texts)}] with {len(texts)} components "
                    f"but its producer '{producer.op_name}' ({producer.loc}) has domain "
                    f"[{', '.join(producer.steps)}]", node)
            seq = self.seq(texts, node, f"operand {i} dependence")
            node.operands.append(Operand(
                i, producer, value.result_number, self.compile(seq, node, f"operand {i} dependence"),
                f"[{', '.join(texts)}]", any(c.kind == "slice" for c in seq)))
        if node.kind == "merge":
            for c in ir.ArrayAttr(op.attributes["conds"]):
                text = expr_text(c)
                node.cond_texts.append(text)
                node.conds.append(self.compile(self.expr(text, node, "condition"), node, "condition"))
        if node.kind == "output":
            node.attrs["name"] = ir.StringAttr(op.attributes["name"]).value
            node.attrs["cond"] = (self.scalar(op, "cond", node) if "cond" in op.attributes else None)
            shape_varies = node.operands[0].producer.varying[node.operands[0].result]
            seq = self.seq(deps[0], node, "dependence")
            slices_vary = any(c.kind == "slice" and any(s.role == "step" for s in slice_size(c).free_symbols)
                              for c in seq)
            node.attrs["varying"] = shape_varies or slices_vary
            node.compute = lambda args, p, ev: (args[0],)
        elif node.kind == "stop_when":   # read by `reference.stopped_bounds`, no value
            node.compute = lambda args, p, ev: ()
        else:
            node.compute = _compute(self, op, node)


def decode_graph(graph: ir.Operation, bounds: dict[str, int]) -> list[Node]:
    """The nodes of `graph`, in op order (outputs included, kind 'output')."""
    decoder = _Decoder(graph, bounds)
    ops = [o.operation for o in graph.regions[0].blocks[0].operations]
    nodes = []
    for i, op in enumerate(ops):
        if not op.name.startswith("sdg."):
            raise EvaluationError(f"'{op.name}' is not an sdg op", Node(op.name, op.name,
                                  location_text(op.location), (), ()))
        node = decoder.node(op)
        node.index = i
        decoder.nodes[op] = node
        nodes.append(node)
    for op, node in zip(ops, nodes):
        decoder.link(op, node)
    return nodes


# -- kernels ---------------------------------------------------------------------------
def _int(op, name):
    return ir.IntegerAttr(op.attributes[name]).value


def _kind(op, enum):
    return str(enum(_int(op, "kind")))


def _dense(op) -> np.ndarray:
    return np.array(dense_array(op.attributes["value"]))


def _compute(dec: _Decoder, op: ir.Operation, node: Node) -> Callable:
    """`compute(args, point, ev)` -> tuple of result arrays, for one op."""
    xp = np
    kind = node.kind
    dtype = node.dtypes[0] if node.dtypes else None
    shape = node.shapes[0] if node.shapes else None
    a = node.attrs

    def one(fn):
        return lambda args, p, ev: (fn(args, p),)

    if kind == "unary":
        k = a["kind"] = _kind(op, enums.UnaryKind)
        return one(lambda args, p: K.unary(xp, k, args[0], dtype))
    if kind == "binary":
        k = a["kind"] = _kind(op, enums.BinaryKind)
        return one(lambda args, p: K.binary(xp, k, args[0], args[1], dtype))
    if kind == "where":
        return one(lambda args, p: K.where(xp, *args, dtype))
    if kind == "reduce":
        k, dims = _kind(op, enums.ReduceKind), list(ir.DenseI64ArrayAttr(op.attributes["dims"]))
        keep = "keepdim" in op.attributes
        return one(lambda args, p: K.reduce(xp, k, dims, keep, args[0], dtype))
    if kind == "scan":
        k, dim, rev = _kind(op, enums.ScanKind), _int(op, "dim"), "reverse" in op.attributes
        return one(lambda args, p: K.scan(xp, k, dim, rev, args[0], dtype))
    if kind == "linear_scan":
        dim, rev = _int(op, "dim"), "reverse" in op.attributes
        return one(lambda args, p: K.linear_scan(xp, dim, rev, args[0], args[1], dtype))
    if kind == "argsort":
        dim, desc = _int(op, "dim"), "descending" in op.attributes
        return one(lambda args, p: K.argsort(xp, dim, desc, args[0], dtype))
    if kind == "matmul":
        return one(lambda args, p: K.matmul(xp, args[0], args[1], dtype))
    if kind in ("reshape", "expand"):
        fn = K.reshape if kind == "reshape" else K.expand
        return one(lambda args, p: fn(xp, shape(*p), args[0], dtype))
    if kind == "permute":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["perm"]))
        return one(lambda args, p: K.permute(xp, perm, args[0], dtype))
    if kind in ("squeeze", "unsqueeze", "flip", "concat", "index_select", "gather", "scatter_add"):
        dim = _int(op, "dim")
        if kind == "concat":
            return one(lambda args, p: K.concat(xp, dim, args, dtype))
        fn = {"squeeze": K.squeeze, "unsqueeze": K.unsqueeze, "flip": K.flip,
              "index_select": K.index_select, "gather": K.gather, "scatter_add": K.scatter_add}[kind]
        return one(lambda args, p: fn(xp, dim, *args, dtype))
    if kind == "slice":
        dim, start = _int(op, "dim"), dec.scalar(op, "start", node)
        return one(lambda args, p: K.slice_(xp, dim, start(*p), shape(*p)[dim], args[0], dtype))
    if kind == "take":
        dim, index = _int(op, "dim"), dec.scalar(op, "index", node)
        return one(lambda args, p: K.take(xp, dim, index(*p), args[0], dtype))
    if kind == "pad":
        dim, before, after = _int(op, "dim"), dec.scalar(op, "before", node), dec.scalar(op, "after", node)
        value = ir.FloatAttr(op.attributes["value"]).value
        return one(lambda args, p: K.pad(xp, dim, before(*p), after(*p), value, args[0], dtype))
    if kind == "cast":
        return one(lambda args, p: K.cast(xp, args[0], dtype))
    if kind in ("constant", "param"):
        value = K.constant(xp, _dense(op), dtype) if "value" in op.attributes else None
        if kind == "param":   # a run-time buffer bound by name; the IR's value is its default
            a["name"] = ir.StringAttr(op.attributes["name"]).value
            return lambda args, p, ev: (ev.param_value(node, value),)
        return one(lambda args, p: value)
    if kind == "full":
        value = ir.FloatAttr(op.attributes["value"]).value
        return one(lambda args, p: K.full(xp, shape(*p), value, dtype))
    if kind == "iota":
        dim = _int(op, "dim")
        return one(lambda args, p: K.iota(xp, shape(*p), dim, dtype))
    if kind == "random":
        dist, seed = str(enums.RandomDist(_int(op, "dist"))), _int(op, "seed")
        return one(lambda args, p: K.random(xp, dist, seed, p, shape(*p), dtype))
    if kind == "symbol_value":
        expr = dec.scalar(op, "expr", node)
        return one(lambda args, p: K.symbol_value(xp, expr(*p), dtype))
    if kind == "input":
        a["name"] = ir.StringAttr(op.attributes["name"]).value
        return lambda args, p, ev: (ev.input_value(node, p),)
    if kind == "udf":
        a["callee"] = ir.StringAttr(op.attributes["callee"]).value
        return lambda args, p, ev: ev.call_udf(node, args, p)
    if kind == "merge":
        return lambda args, p, ev: (args[0],)
    raise EvaluationError(f"the reference interpreter does not know '{op.name}'", node)
