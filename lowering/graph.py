"""A read-only model of one `sdg.graph` for scheduling and execution.

`read_graph(graph_op)` walks the graph region once and returns a `Graph`:
its dimensions (`tidal.symbolic.Dim`, program order) and one `Node` per op,
numbered in region order. Each node knows its domain (step names), its
operands as `Edge`s (producer node, producer result, dependence as a parsed
`IndexSeq`, and for `sdg.merge` the branch condition), its result types and
its MLIR location. The MLIR op itself stays reachable as `node.op` (kernels
need its attributes), so keep the module alive while the model is used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlir import ir

from tidal.dialects import ops_named
from tidal.dialects.attrs import (derived_bounds, expr_text, index_components, is_tensor_type, tensor_element_type,
                                  tensor_shape)
from tidal.passes.base import OpError
from tidal.passes.sccs import strongly_connected
from tidal.symbolic import TRUE, Dim, Expr, IndexSeq, SymbolicError, free_symbols, parse

__all__ = ["Edge", "Node", "Graph", "read_graph", "graphs_in", "format_location", "GraphError", "components",
           "IslandBody", "read_island"]


class GraphError(OpError):
    """An `sdg.graph` this layer cannot read or schedule (a non-sdg op inside
    it, a dependence that does not parse or uses a step its op lacks, ...):
    `message` and the op at fault (`op`; None for the graph). An `OpError`, so
    a pass that lets it escape reports it at the op's location."""


@dataclass
class Edge:
    """Operand `number` of a node: reads `result` of node `source` at `dep`."""

    number: int
    source: int
    result: int
    dep: IndexSeq
    dep_text: str                  # as written: "[t - 1]"
    cond: Expr = TRUE              # merge branch condition (TRUE elsewhere)
    cond_text: str = "true"


@dataclass
class Node:
    index: int
    name: str                      # "sdg.binary"
    domain: tuple[str, ...]        # step names, program order
    edges: list[Edge]
    result_shapes: list[list[str]]  # per result: shape texts at one point
    result_dtypes: list[str]
    location: str                  # "file:line:col" (or MLIR's text)
    op: ir.Operation = field(repr=False, compare=False, default=None)
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The op's mnemonic and its kind, e.g. "binary add", "merge"."""
        mnemonic = self.name.split(".", 1)[1]
        kind = self.attrs.get("kind_name")
        return f"{mnemonic} {kind}" if kind else mnemonic

    @property
    def label(self) -> str:
        """How messages name the op: `%3 = sdg.binary add` or `sdg.output "s"`."""
        if self.name == "sdg.output":
            return f'sdg.output {self.attrs.get("name", "")}'.strip()
        if self.name in ("sdg.input", "sdg.param"):
            return f'%{self.index} = {self.name} {self.attrs.get("name", "")}'.strip()
        return f"%{self.index} = sdg.{self.kind}"

    def describe(self) -> str:
        return f"'{self.label}' at {self.location}"


@dataclass
class Graph:
    name: str
    dims: list[Dim]
    nodes: list[Node]
    op: ir.Operation = field(repr=False, compare=False, default=None)
    derived: dict[str, str] = field(default_factory=dict)   # bound -> expression text (sdg-tile)

    @property
    def steps(self) -> list[str]:
        return [d.step.name for d in self.dims]

    @property
    def bounds(self) -> list[str]:
        return [d.bound.name for d in self.dims]

    def dims_of(self, node: Node | int) -> list[Dim]:
        node = self.nodes[node] if isinstance(node, int) else node
        by_step = {d.step.name: d for d in self.dims}
        return [by_step[s] for s in node.domain]

    def consumers(self, index: int) -> list[tuple[Node, Edge]]:
        return [(n, e) for n in self.nodes for e in n.edges if e.source == index]


def op_weight(node: Node) -> int:
    """The ops a node runs at one point: an island's body ops, else 1."""
    if node.name == "sdg.island" and node.op is not None:
        return max(1, len(node.op.regions[0].blocks[0].operations) - 1)
    return 1


def components(graph: Graph) -> list[list[int]]:
    """The strongly connected components of the read graph (a node reads its
    edges' sources), each sorted, producers before their consumers. A
    recurrence is a component of more than one node (or a node reading itself)."""
    return strongly_connected(len(graph.nodes), lambda k: [e.source for e in graph.nodes[k].edges])


@dataclass
class IslandBody:
    """The body of an `sdg.island` node, in execution order: `ops[j]` is a
    Node (no edges) for the j-th body op; `sources[j]` says where each of
    its operands comes from, ("arg", i) for the island's operand i or
    ("op", j') for an earlier body op's result; `yields` likewise for the
    island's results."""

    ops: list[Node]
    sources: list[list[tuple[str, int]]]
    yields: list[tuple[str, int]]


def read_island(node: Node) -> IslandBody:
    block = node.op.regions[0].blocks[0]
    where = {arg: ("arg", i) for i, arg in enumerate(block.arguments)}
    ops, sources, yields = [], [], []
    for j, op in enumerate(block.operations):
        op = op.operation
        if op.name == "sdg.yield":
            yields = [where[v] for v in op.operands]
            break
        shapes = [tensor_shape(v.type) for v in op.results if is_tensor_type(v.type)]
        dtypes = [tensor_element_type(v.type) for v in op.results if is_tensor_type(v.type)]
        attrs = {}
        kind = _kind_name(op)
        if kind is not None:
            attrs["kind_name"] = kind
        ops.append(Node(node.index, op.name, node.domain, [], shapes, dtypes, format_location(op.location),
                        op, attrs))
        sources.append([where[v] for v in op.operands])
        for v in op.results:
            where[v] = ("op", j)
    return IslandBody(ops, sources, yields)


_LOC = re.compile(r'^loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def format_location(loc: ir.Location) -> str:
    """`loc("f.mlir":3:8)` -> `f.mlir:3:8`; other locations as MLIR prints them."""
    text = str(loc)
    m = _LOC.match(text)
    return f"{m['file']}:{m['line']}:{m['col']}" if m else text


def _strings(attr: ir.Attribute) -> list[str]:
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(attr)]


def _kind_name(op: ir.Operation) -> str | None:
    from tidal.dialects import enums
    if "kind" not in op.attributes:
        return None
    value = ir.IntegerAttr(op.attributes["kind"]).value
    table = {"sdg.unary": enums.UnaryKind, "sdg.binary": enums.BinaryKind,
             "sdg.reduce": enums.ReduceKind, "sdg.scan": enums.ScanKind}.get(op.name)
    return str(table(value)) if table else str(value)


def graphs_in(module) -> list[ir.Operation]:
    """The `sdg.graph` ops of a module (or under an op)."""
    return ops_named(module, "sdg.graph")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _parse_at(op: ir.Operation, text: str, dims: list[Dim], allowed: set[str], what: str, kind: str):
    """`text` parsed over the graph's dims; GraphError at `op` if it does not
    parse, is not of `kind` ("seq": a dependence, "bool": a condition) or
    uses a symbol other than `allowed` (the op's steps, the bounds)."""
    try:
        value = parse(text, dims=dims, validate=False)
    except SymbolicError as e:
        raise GraphError(f"'{op.name}' {what} is not a valid symbolic expression: "
                         f"{str(e).splitlines()[0]}", op) from None
    if getattr(value, "kind", None) != kind:
        expected = "a condition (a boolean expression)" if kind == "bool" else "a dependence"
        raise GraphError(f"'{op.name}' {what} is not {expected}", op)
    outside = sorted(s.name for s in free_symbols(value) if s.name not in allowed)
    if outside:
        raise GraphError(f"'{op.name}' {what} uses {', '.join(outside)}, which the op's domain does not "
                         f"provide (it may use its steps and the bounds: {', '.join(sorted(allowed))})", op)
    return value


def read_graph(graph_op) -> Graph:
    """The model of one `sdg.graph` op. Raises GraphError, at the op at
    fault, for what the C++ verifiers let through but this layer cannot read
    (see `sdg-verify-dependences`)."""
    graph_op = graph_op.operation if hasattr(graph_op, "operation") else graph_op
    steps, bounds = _strings(graph_op.attributes["steps"]), _strings(graph_op.attributes["bounds"])
    dims = [Dim(s, bound=b) for s, b in zip(steps, bounds)]
    name = ir.StringAttr(graph_op.attributes["sym_name"]).value
    ops = [o.operation for o in graph_op.regions[0].blocks[0].operations]
    producer: dict = {}
    for k, op in enumerate(ops):
        for r, value in enumerate(op.results):
            producer[value] = (k, r)
    nodes = []
    domains = []
    for op in ops:
        if not op.name.startswith("sdg.") or "domain" not in op.attributes:
            raise GraphError(f"'{op.name}' inside sdg.graph @{name} is not an sdg operator", op)
        domain = tuple(index_components(op.attributes["domain"]))
        unknown = [s for s in domain if s not in steps]
        if unknown or len(set(domain)) != len(domain):
            raise GraphError(f"'{op.name}' has domain [{', '.join(domain)}], which is not a list of distinct "
                             f"steps of @{name} (dims [{', '.join(steps)}])", op)
        domains.append(domain)
    for k, op in enumerate(ops):
        domain = domains[k]
        allowed = set(domain) | set(bounds)
        if "deps" in op.attributes:
            deps = [index_components(a) for a in ir.ArrayAttr(op.attributes["deps"])]
        elif "dep" in op.attributes:
            deps = [index_components(op.attributes["dep"])]
        else:
            deps = []
        conds = ([expr_text(a) for a in ir.ArrayAttr(op.attributes["conds"])]
                 if "conds" in op.attributes else ["true"] * len(deps))
        edges = []
        for number, (value, comps, cond) in enumerate(zip(op.operands, deps, conds)):
            if value not in producer:
                raise GraphError(f"'{op.name}' operand {number} is not defined by an op of "
                                 f"sdg.graph @{name}", op)
            source, result = producer[value]
            text = "[" + ", ".join(comps) + "]"
            what = f"operand {number} (%{source}{text})"
            if len(comps) != len(domains[source]):
                raise GraphError(f"'{op.name}' {what}: the dependence has {_count(len(comps), 'component')} "
                                 f"but the producer's domain [{', '.join(domains[source])}] has "
                                 f"{_count(len(domains[source]), 'dimension')}", op)
            dep = _parse_at(op, text, dims, allowed, what, "seq")
            edges.append(Edge(number, source, result, dep, text,
                              _parse_at(op, cond, dims, allowed, f"branch {number} condition <{cond}>", "bool"),
                              cond))
        shapes, dtypes = [], []
        for value in op.results:
            if is_tensor_type(value.type):
                shapes.append(tensor_shape(value.type))
                dtypes.append(tensor_element_type(value.type))
        attrs = {}
        if "cond" in op.attributes:  # a conditional output: only where it holds
            try:
                attrs["cond"] = expr_text(op.attributes["cond"])
            except TypeError as e:
                raise GraphError(f"'{op.name}' attribute 'cond' is not a condition: {e}", op) from None
            _parse_at(op, attrs["cond"], dims, allowed, f"condition <{attrs['cond']}>", "bool")
        if "name" in op.attributes:
            attrs["name"] = str(op.attributes["name"])
        kind = _kind_name(op)
        if kind is not None:
            attrs["kind_name"] = kind
        if "callee" in op.attributes:
            attrs["kind_name"] = str(op.attributes["callee"])
        node = Node(k, op.name, domain, edges, shapes, dtypes, format_location(op.location), op, attrs)
        if op.name == "sdg.island":   # "%4 = sdg.island (matmul, binary add, unary tanh)"
            attrs["kind_name"] = "(" + ", ".join(inner.kind for inner in read_island(node).ops) + ")"
        nodes.append(node)
    return Graph(name, dims, nodes, graph_op, derived_bounds(graph_op))
