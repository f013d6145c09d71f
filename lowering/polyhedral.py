"""The polyhedral view of an SDG: statements, dependence relations, valid domains.

Every node of the graph is an isl statement `S<k>` whose instances are the
points of its domain, with the bounds as parameters (`[T] -> { S3[t] : 0 <= t < T }`;
a node with domain `[]` is the 0-dimensional statement `{ S1[] }`). Each operand
is an isl map from sink instances to the source instances they read; for
`sdg.merge` branch `b` the sink side is restricted to the points where `b` is
the *first* branch whose condition holds (`t ge 1`, `t mod 5 eq 0`, ...).

`valid_domains` computes which points of each node can be computed at all: a
point is valid if everything it reads is inside its producer's domain and
valid itself (for a merge: the first branch that holds reads only valid
points). It is the greatest fixpoint of that rule, found with a worklist.
Invalid points are never executed; if an output or a UDF (which must run at
every point of its domain) has one, the program is an error (see
`schedule.py`). The reference interpreter is demand-driven and never asks
for an invalid point from a valid one, so executing exactly the valid points
agrees with it.

islpy reports exceptions raised in callbacks only as warnings; this module
uses no callbacks and checks every result it relies on.
"""
from __future__ import annotations

import islpy as isl

from tidal.symbolic import And, Not, parse
from tidal.symbolic.isl_bridge import dependence_map, domain_set

from .graph import Graph, Node

__all__ = ["Polyhedral", "statement_name", "NotConverged", "BOX"]

# Dependence distances beyond this are "unbounded" (they grow with a bound).
BOX = 1 << 20


def statement_name(index: int) -> str:
    return f"S{index}"


class NotConverged(Exception):
    """The valid-domain fixpoint keeps shrinking (a chain with no base case)."""

    def __init__(self, nodes: list[int]):
        super().__init__(f"valid domains of nodes {nodes} do not converge")
        self.nodes = nodes


class Polyhedral:
    """isl sets and maps of one graph, in one isl context.

    `fixed` maps bound names to integers to work with concrete bounds
    (used to find a witness point for error messages).
    """

    def __init__(self, graph: Graph, ctx: isl.Context | None = None, fixed: dict | None = None):
        self.graph = graph
        self.ctx = ctx or isl.Context()
        bounds = graph.bounds
        self.params = isl.Set.read_from_str(self.ctx, f"[{', '.join(bounds)}] -> {{ : }}").get_space()
        self.context = self._set(f"[{', '.join(bounds)}] -> {{ : {' and '.join(f'{b} >= 1' for b in bounds) or '0 = 0'} }}")
        self.fixed = dict(fixed or {})
        self.full: dict[int, isl.Set] = {}
        self.regions: dict[int, list[isl.Set]] = {}   # merge: first-true region of each branch
        self.reads: dict[int, list[isl.Map]] = {}     # sink instance -> source instances read
        for node in graph.nodes:
            self._add_node(node)

    # -- construction ----------------------------------------------------------------
    def _fix(self, obj):
        obj = obj.align_params(self.params)
        for name, value in self.fixed.items():
            pos = obj.find_dim_by_name(isl.dim_type.param, name)
            if pos >= 0:
                obj = obj.fix_val(isl.dim_type.param, pos, isl.Val.int_from_si(self.ctx, value))
        return obj

    def _set(self, text: str) -> isl.Set:
        return isl.Set.read_from_str(self.ctx, text).align_params(self.params)

    def _add_node(self, node: Node) -> None:
        dims = self.graph.dims_of(node)
        name = statement_name(node.index)
        cond = parse(node.attrs["cond"], dims=self.graph.dims) if "cond" in node.attrs else True
        full = self._fix(domain_set(dims, cond, ctx=self.ctx).set_tuple_name(name)).intersect_params(
            self._fix(self.context))
        self.full[node.index] = full
        regions, reads, earlier = [], [], []
        for edge in node.edges:
            cond = And(edge.cond, *[Not(c) for c in earlier]) if node.name == "sdg.merge" else edge.cond
            if node.name == "sdg.merge":
                earlier.append(edge.cond)
                region = self._fix(domain_set(dims, cond, ctx=self.ctx).set_tuple_name(name)).intersect(full)
                regions.append(region)
            source_dims = self.graph.dims_of(edge.source)
            m = dependence_map(dims, edge.dep, source_dims, cond, restrict_source=False, ctx=self.ctx)
            m = m.set_tuple_name(isl.dim_type.in_, name)
            m = m.set_tuple_name(isl.dim_type.out, statement_name(edge.source))
            reads.append(self._fix(m).intersect_domain(full))
        self.regions[node.index] = regions
        self.reads[node.index] = reads

    # -- valid domains -----------------------------------------------------------------
    def _valid_of(self, node: Node, valid: dict) -> isl.Set:
        k = node.index
        if node.name == "sdg.merge":
            result = self.full[k].subtract(self.full[k])  # empty, same space
            for edge, region, read in zip(node.edges, self.regions[k], self.reads[k]):
                bad = read.intersect_range(valid[edge.source].complement()).domain()
                result = result.union(region.subtract(bad))
            return result.coalesce()
        result = self.full[k]
        for edge, read in zip(node.edges, self.reads[k]):
            result = result.subtract(read.intersect_range(valid[edge.source].complement()).domain())
        return result.coalesce()

    def valid_domains(self, max_updates: int = 6) -> dict[int, isl.Set]:
        """The greatest fixpoint of "a point is valid if all it reads is valid".
        Raises NotConverged when some node shrinks more than `max_updates` times."""
        nodes = self.graph.nodes
        valid = {n.index: self.full[n.index] for n in nodes}
        consumers: dict[int, set[int]] = {n.index: set() for n in nodes}
        for n in nodes:
            for e in n.edges:
                consumers[e.source].add(n.index)
        pending = [n.index for n in nodes if n.edges]
        queued = set(pending)
        updates = {n.index: 0 for n in nodes}
        while pending:
            k = pending.pop(0)
            queued.discard(k)
            new = self._valid_of(nodes[k], valid)
            if new.is_equal(valid[k]):
                continue
            valid[k] = new
            updates[k] += 1
            if updates[k] > max_updates:
                raise NotConverged(sorted(i for i, u in updates.items() if u >= max_updates))
            for c in sorted(consumers[k]):
                if c not in queued:
                    pending.append(c)
                    queued.add(c)
        return valid

    # -- dependences --------------------------------------------------------------------
    def validity(self, valid: dict) -> list[tuple[int, int, isl.Map]]:
        """`(sink, operand, map source instance -> sink instance)` for every
        operand, restricted to valid sink points (and, for merges, to the
        branch's first-true region)."""
        out = []
        for node in self.graph.nodes:
            k = node.index
            for number, (edge, read) in enumerate(zip(node.edges, self.reads[k])):
                sink = valid[k]
                if node.name == "sdg.merge":
                    sink = sink.intersect(self.regions[k][number])
                m = read.intersect_domain(sink).intersect_range(valid[edge.source])
                out.append((k, number, m.reverse().coalesce()))
        return out

    def embedding(self, index: int) -> isl.Map:
        """`{ S<k>[own steps] -> [all graph steps, absent ones 0] }`."""
        steps = self.graph.steps
        own = self.graph.nodes[index].domain
        target = ", ".join(s if s in own else "0" for s in steps)
        return isl.Map.read_from_str(self.ctx, f"{{ {statement_name(index)}[{', '.join(own)}] -> [{target}] }}")

    def is_bounded(self, source: int, sink: int, m: isl.Map) -> bool:
        """Whether the dependence distance of `m` (source -> sink instances)
        stays within a constant, every graph dim compared (a dim absent from
        one side counts as 0): only such edges go into proximity."""
        if m.is_empty():
            return True
        if not self.graph.steps:
            return True
        full = m.apply_domain(self.embedding(source)).apply_range(self.embedding(sink))
        deltas = full.deltas()
        box = " and ".join(f"-{BOX} <= d{i} <= {BOX}" for i in range(len(self.graph.steps)))
        names = ", ".join(f"d{i}" for i in range(len(self.graph.steps)))
        box_set = self._set(f"[{', '.join(self.graph.bounds)}] -> {{ [{names}] : {box} }}")
        return bool(deltas.is_subset(self._fix(box_set)))
