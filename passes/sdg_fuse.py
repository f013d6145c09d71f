"""sdg-fuse: group sdg operators into static islands (`sdg.island`).

An island is what a backend compiles into one kernel (TEMPO section 5.4):
operators of one domain whose dependences on each other are the identity,
with shapes that are static at a point or vary with it along one extent. This pass grows them by
producer-into-consumer fusion, which keeps three properties by construction:

* **one root**: only the island's last op (its root) is read from outside,
  every other member is read by members only, at the identity. So all
  members are needed at exactly the points the root is (a member is needed
  wherever a member that reads it is), and running the island at a point
  computes nothing, and reads nothing, that the unfused program would not.
* **no new cycle, no lost schedule**: a member is entered only through
  the root's readers, and the root reads every member at the same point.
  So a chain of dependences from an island instance back to one (at any
  points) would be a chain from the root's instance back to one in the
  graph already, and the old schedule of the root orders the island: every
  value a member reads is ready before the member, hence before the root.
  This holds inside recurrences too, whatever their dependences.
* **static or padded, on the device**: members have static shapes (no step
  in any operand or result shape), or, for elementwise ops, reductions,
  matmuls, permutes and (un)squeezes, at most one axis whose size varies with
  the point, the same extent (`t + 1`) in every value of the island: a
  backend pads it to a capacity and masks it where it is reduced (the jax
  runtime's padded kernels), so attention's scores-softmax-values chain at a
  growing cache is one kernel. Members read their outside operands at
  points or through unit-step slices whose length varies with the point,
  of values of static shape (the island's block argument then has the
  sliced type; the slice's length counts as the island's extent): the permute of `k[0:t + 1]` fuses
  with the scores that read it, and XLA folds it into the contraction
  instead of copying the cache at every step. Members are plain tensor ops: merges, UDFs, random draws, inputs,
  params, constants, outputs and indexing ops (index_select, gather,
  scatter_add: the runtime checks their indices' range per launch) stay
  outside.

Before (a recurrent cell, h[t] = tanh(h[t - 1] @ W + x[t])):

    %h = sdg.merge %x[0] if <t eq 0>, %n[t - 1] if <true> domain [t] : ...
    %m = sdg.matmul %h[t], %w[] domain [t] : ...
    %a = sdg.binary add %m[t], %x[t] domain [t] : ...
    %n = sdg.unary tanh %a[t] domain [t] : ...
    sdg.output "h" %h[t] domain [t] : ...

After `sdg-fuse`:

    %h = sdg.merge %x[0] if <t eq 0>, %n[t - 1] if <true> domain [t] : ...
    %n = sdg.island %h[t], %w[], %x[t] domain [t] : (...) -> !tidal.tensor<[4], f32> {
    ^bb0(%a0: ..., %a1: ..., %a2: ...):
      %m = sdg.matmul %a0[t], %a1[t] domain [t] : ...
      %a = sdg.binary add %m[t], %a2[t] domain [t] : ...
      %r = sdg.unary tanh %a[t] domain [t] : ...
      sdg.yield %r : ...
    }
    sdg.output "h" %h[t] domain [t] : ...

An op that nothing could join stays as it is (no one-op islands).
`sdg-inline-islands` is the inverse.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects.attrs import index_attr, index_components, is_tensor_type, tensor_shape
from tidal.dialects.op_properties import ops_with
from tidal.symbolic import SymbolicError, parse, slice_size

from .base import ModulePass, PassFailure, sdg_graphs
from .sccs import strongly_connected
from .transform_utils import parse_slice, read_type

__all__ = ["SdgFuse"]

# Tensor ops a kernel computes on the device at a point.
FUSABLE = ops_with("fusable")


@dataclass
class _Op:
    op: ir.Operation
    domain: tuple
    reads: list            # per operand: (producer index | None, dep components)
    admissible: bool
    extent: str | None = None   # the one point-varying extent of its values (None: static)


# Ops a backend can run on a padded point-varying axis (elementwise, reductions,
# contractions and moves of axes: the jax runtime's padded kernels).
PADDABLE = ops_with("paddable")


def _extent(t: ir.Type, steps: set):
    """(admissible, the point-varying extent or None) of a value's type: at
    most one axis may vary with the point."""
    if not is_tensor_type(t):
        return False, None
    try:
        varying = [parse(d) for d in tensor_shape(t) if any(s.name in steps for s in parse(d).free_symbols)]
    except SymbolicError:
        return False, None
    if len(varying) > 1:
        return False, None
    return True, (str(varying[0]) if varying else None)


def _admissible(o: ir.Operation, reads: list, steps: set):
    """(admissible, its point-varying extent or None). An operand may be read
    through unit-step slices of a value of static shape whose lengths vary
    with the point (they are the extent)."""
    if o.name not in FUSABLE or len(o.results) != 1 or len(o.regions) != 0:
        return False, None
    extents = set()
    for v, (_, dep) in zip(o.operands, reads):
        cuts = [c for c in dep if ":" in c]
        if not cuts:
            continue
        slices = [parse_slice(c) for c in cuts]
        if any(c is None for c in slices) or _extent(v.type, steps) != (True, None):
            return False, None
        for c in slices:
            size = slice_size(c)
            if not any(sym.name in steps for sym in size.free_symbols):
                # Only point-varying slices (a cache read k[0:t + 1]): fusing
                # fixed-size slice reads made the check of PPO's loop nest
                # (GraphSchedule.verify_tree) run for minutes in isl.
                return False, None
            extents.add(str(size))
    for v in list(o.operands) + list(o.results):
        ok, extent = _extent(v.type, steps)
        if not ok:
            return False, None
        if extent is not None:
            extents.add(extent)
    if len(extents) > 1 or extents and o.name not in PADDABLE:
        return False, None
    return True, (extents.pop() if extents else None)


class _Graph:
    """The graph's ops with their domains, reads (producer, dependence) and readers."""

    def __init__(self, graph: ir.Operation):
        self.steps = {ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])}
        self.ops = [o.operation for o in graph.regions[0].blocks[0].operations]
        where = {}
        for k, o in enumerate(self.ops):
            for value in o.results:
                where[value] = k
        self.nodes: list[_Op] = []
        for o in self.ops:
            domain = tuple(index_components(o.attributes["domain"])) if "domain" in o.attributes else ()
            deps = [index_components(a) for a in ir.ArrayAttr(o.attributes["deps"])] \
                if "deps" in o.attributes else [index_components(o.attributes["dep"])] \
                if "dep" in o.attributes else [[] for _ in o.operands]
            reads = [(where.get(v), list(d)) for v, d in zip(o.operands, deps)]
            ok, extent = _admissible(o, reads, self.steps)
            self.nodes.append(_Op(o, domain, reads, ok, extent))
        self.readers: list[list[tuple[int, int]]] = [[] for _ in self.ops]   # (reader, operand)
        for k, n in enumerate(self.nodes):
            for i, (src, _) in enumerate(n.reads):
                if src is not None:
                    self.readers[src].append((k, i))

    def identity(self, reader: int, operand: int) -> bool:
        src, dep = self.nodes[reader].reads[operand]
        return src is not None and self.nodes[src].domain == self.nodes[reader].domain \
            and tuple(dep) == self.nodes[reader].domain


@dataclass
class SdgFuse(ModulePass):
    """Fuses sdg operators into `sdg.island` ops (see the module doc)."""

    name: ClassVar[str] = "sdg-fuse"
    summary: ClassVar[str] = "Group sdg operators of one domain, read at the identity, into islands (one kernel each)"

    def run(self, op: ir.Operation) -> None:
        self.num_islands = self.num_fused = 0   # for tests and callers
        for graph in sdg_graphs(op, "sdg-fuse"):
            self._run_on_graph(graph)

    def _run_on_graph(self, graph: ir.Operation) -> None:
        g = _Graph(graph)
        n = len(g.nodes)
        comps = strongly_connected(n, lambda k: [s for s, _ in g.nodes[k].reads if s is not None])
        island = list(range(n))                   # node -> its island's root
        members: dict[int, list[int]] = {k: [k] for k in range(n)}
        extents = {k: {g.nodes[k].extent} - {None} for k in range(n)}   # an island's varying extents
        order = [k for c in reversed(comps) for k in sorted(c, reverse=True)]   # consumers first
        for u in order:
            node = g.nodes[u]
            if not node.admissible or not g.readers[u]:
                continue
            roots = {island[r] for r, _ in g.readers[u]}
            if len(roots) != 1:
                continue
            root = roots.pop()
            if not g.nodes[root].admissible or g.nodes[root].domain != node.domain:
                continue
            if not all(g.identity(r, i) for r, i in g.readers[u]):
                continue
            if len(extents[root] | extents[u]) > 1:   # one varying extent per island
                continue
            extents[root] |= extents.pop(u)
            for m in members.pop(u):
                island[m] = root
                members[root].append(m)
        for root, group in members.items():
            if len(group) > 1:
                self._build(g, root, group)
                self.num_islands += 1
                self.num_fused += len(group)

    @staticmethod
    def _build(g: _Graph, root: int, group: list[int]) -> None:
        inside = set(group)
        body = _topological(g, group)
        outside: list[tuple] = []                 # (value, dep components)
        slot: dict[tuple, int] = {}
        for k in body:
            for i, (src, dep) in enumerate(g.nodes[k].reads):
                if src in inside:
                    continue
                key = (g.ops[k].operands[i], tuple(dep))
                if key not in slot:
                    slot[key] = len(outside)
                    outside.append(key)
        root_op = g.ops[root]
        domain = g.nodes[root].domain
        with root_op.context, root_op.location, ir.InsertionPoint(root_op):
            island = ir.Operation.create(
                "sdg.island", results=[root_op.results[0].type], operands=[v for v, _ in outside],
                attributes={"deps": ir.ArrayAttr.get([index_attr(list(d)) for _, d in outside]),
                            "domain": root_op.attributes["domain"]}, regions=1)
            root_op.results[0].replace_all_uses_with(island.results[0])
            block = island.regions[0].blocks.append(*[read_type(v, d) for v, d in outside])
            identity = index_attr(list(domain))
            for k in body:
                op = g.ops[k]
                block.append(op)
                deps = list(ir.ArrayAttr(op.attributes["deps"])) if "deps" in op.attributes else []
                for i, (src, dep) in enumerate(g.nodes[k].reads):
                    if src not in inside:
                        op.operands[i] = block.arguments[slot[(op.operands[i], tuple(dep))]]
                        deps[i] = identity
                if deps:
                    op.attributes["deps"] = ir.ArrayAttr.get(deps)
            with ir.InsertionPoint(block):
                ir.Operation.create("sdg.yield", operands=[root_op.results[0]])


def _topological(g: _Graph, group: list[int]) -> list[int]:
    """The island's members, producers first (identity reads form a DAG)."""
    where = {k: i for i, k in enumerate(group)}
    comps = strongly_connected(len(group), lambda i: [where[s] for s, _ in g.nodes[group[i]].reads if s in where])
    for c in comps:
        k = group[c[0]]
        if len(c) > 1 or any(s == k for s, _ in g.nodes[k].reads):
            raise PassFailure("sdg-fuse: ops read each other at the same point (a cycle with no "
                              "delay); the program cannot be scheduled", g.ops[k])
    return [group[c[0]] for c in comps]
