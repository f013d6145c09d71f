"""`sdg.stop_when`: which ops must wait for a stop, and the schedule's order.

A run of a graph with `sdg.stop_when %c[t] domain [t]` ends after the first
t where `c` holds, and means what the graph means with `T = t_stop + 1`
(docs/semantics.md). The scheduled runtime runs the schedule built for `T`,
changes `T` to `t_stop + 1` the moment the stop's condition holds, and every
loop bound, guard and kernel size evaluated from then on sees the new value
(hostgen.py). That is correct if nothing computed before the change depends
on `T`: every op that reads `T` (a dependence, a branch condition, a shape or
an attribute that uses it, or a bound derived from it) is *bound-dependent*,
and must run after every instance of the stop. The schedule (schedule.py) runs
the stops and the ops their conditions read first (`stop_phase`), in loops
that are never split by the bound (atomic), and everything else after, with
loop nests generated apart (a test of the bound made before the stop must
not choose the code that runs after it); `check_stop_order` verifies the
order. The condition itself must not depend on `T` (the frontend checks the
program as written; `stop_slice_error` the graph after the passes).

Points the schedule computes ahead of the stop (`x[t + 1]` computed in the
step of `t`) are computed once too many and never read; outputs over t are cut
to `t_stop + 1` steps.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl

from .graph import Graph, Node

__all__ = ["StopInfo", "graph_stops", "stop_phase", "stop_slice_error", "check_stop_order"]

_SKIP_ATTRS = {"domain", "name", "callee", "value"}


@dataclass
class StopInfo:
    index: int                 # the sdg.stop_when node
    step: str                  # the dim it stops
    bound: str                 # its bound
    names: frozenset           # the bound and the derived bounds that use it
    dependent: frozenset       # nodes that read one of `names`: run after every stop instance


def _word(names) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(re.escape(n) for n in sorted(names)) + r")(?![A-Za-z0-9_])")


def _op_uses(op, pattern: re.Pattern) -> bool:
    for i in range(len(op.attributes)):
        named = op.attributes[i]
        if named.name not in _SKIP_ATTRS and pattern.search(str(named.attr)):
            return True
    if any(pattern.search(str(r.type)) for r in op.results):
        return True
    for region in op.regions:
        for block in region.blocks:
            if any(pattern.search(str(a.type)) for a in block.arguments):
                return True
            for inner in block.operations:
                if _op_uses(inner.operation, pattern):
                    return True
    return False


def uses_bound(node: Node, pattern: re.Pattern) -> bool:
    """Whether the node reads one of the bounds `pattern` matches."""
    if node.name == "sdg.input":
        return False      # fed whole, for the bounds given: read at points below the stop only
    for edge in node.edges:
        if pattern.search(edge.dep_text) or pattern.search(edge.cond_text):
            return True
    if any(pattern.search(s) for shape in node.result_shapes for s in shape):
        return True
    if "cond" in node.attrs and pattern.search(node.attrs["cond"]):
        return True
    return node.op is not None and _op_uses(node.op, pattern)


def graph_stops(graph: Graph) -> list[StopInfo]:
    """One StopInfo per sdg.stop_when of the graph, in graph order."""
    out = []
    for node in graph.nodes:
        if node.name != "sdg.stop_when" or not node.domain:
            continue
        step = node.domain[-1]
        bound = next(d.bound.name for d in graph.dims if d.step.name == step)
        names = {bound} | {b for b, e in graph.derived.items() if e and _word({bound}).search(e)}
        pattern = _word(names)
        dependent = frozenset(n.index for n in graph.nodes if n.index != node.index and uses_bound(n, pattern))
        out.append(StopInfo(node.index, step, bound, frozenset(names), dependent))
    return out


def _slice(graph: Graph, index: int) -> set[int]:
    seen, stack = set(), [index]
    while stack:
        k = stack.pop()
        if k in seen:
            continue
        seen.add(k)
        stack.extend(e.source for e in graph.nodes[k].edges)
    return seen


def stop_slice_error(graph: Graph, stops: list[StopInfo]) -> tuple[str, list] | None:
    """(message, [(node, what)]) when a stop is over more than one dim (a stop per
    point of the outer dims: not supported yet) or its condition reads a
    bound-dependent op (it could not be computed before the stop is known), else None."""
    for stop in stops:
        node = graph.nodes[stop.index]
        if len(node.domain) > 1:
            return (f"sdg.stop_when over an inner dim ({stop.step}, one stop per point of "
                    f"{', '.join(node.domain[:-1])}) is not supported yet", [(stop.index, node.describe())])
    for stop in stops:
        bad = sorted(_slice(graph, stop.index) & stop.dependent)
        if bad:
            node = graph.nodes[bad[0]]
            where = graph.nodes[stop.index].location
            return (f"the condition of sdg.stop_when at {where} depends on the bound {stop.bound}, which is known "
                    f"only when the run stops (through {node.describe()})",
                    [(bad[0], f"{node.describe()} reads {stop.bound}")])
    return None


def stop_phase(graph: Graph, stops: list[StopInfo]) -> set[int]:
    """The nodes the schedule runs first: the stops and what their conditions
    read (the rest runs after them, lowering/schedule.py)."""
    out: set[int] = set()
    for stop in stops:
        out |= _slice(graph, stop.index)
    return out


def check_stop_order(executed: dict, stops: list[StopInfo]) -> tuple[int, int] | None:
    """(stop, node): the first bound-dependent node that the loop tree
    (`executed`: node -> instance -> time) runs before an instance of its stop,
    or None."""
    for stop in stops:
        if stop.index not in executed:
            continue
        last = executed[stop.index].range()
        for k in sorted(stop.dependent):
            if k not in executed:
                continue
            first = executed[k].range()
            if last.dim(isl.dim_type.set) != first.dim(isl.dim_type.set) or \
                    not last.lex_ge_set(first).is_empty():
                return stop.index, k
    return None

