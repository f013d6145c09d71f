"""Needed points: where each node of an SDG must run.

The reference interpreter is demand-driven: it computes a point only when an
output or a UDF reads it, directly or through a chain of reads. The scheduler
runs each node at its points that are both *valid* (computable, see
`polyhedral.py`) and *needed*, so a point nobody reads never runs (it could
fail: a `max` over a window that is empty where another merge branch
applies, a division by zero in dead code).

Needed points are the least fixpoint of

    needed(k) = roots(k) ∪ { q : some needed point p of a consumer reads q }

backwards over the reads (sink instance -> the source instances it reads; a
slice reads every point of the slice; at a merge only the branch that is the
first true one at the point, exactly as `Polyhedral.validity` restricts
them). The roots are the outputs (their whole domain, under their condition)
and the UDFs (their whole domain: they have effects). Inputs are like any
node: the runtime loads an input whole if any point of it is needed, and
one that nothing needs is not loaded (the reference, which reads inputs on
demand, never asks for it). Only valid points are followed: a valid point
reads only valid points, and the bounds that leave an output or UDF with an
invalid point fail before a run (`GraphSchedule.check_bounds`).

Nodes are visited by strongly connected components, consumers first. An
acyclic node's needed set is final once its consumers are done: one
`apply` per read. Inside a cycle (a recurrence) a worklist propagates the
points needed from outside; it converges when the needed sets stop growing
(a training loop whose last update nobody reads). When a node keeps
growing (one step per round: `s[t] = f(s[t - 1])` read only at `t = T - 1`),
the cycle's needed points are `seed ∪ seed.apply(R+)` with isl's transitive
closure `R+` of the reads inside the cycle. An inexact closure
over-approximates, which is safe (more points run); the result is checked to
be closed under the reads. If isl fails, runs out of operations or the check
fails, the cycle's nodes keep their whole valid domain (and so everything
they read), which is always correct; if isl fails elsewhere, every node does.

A needed set with many pieces or existentially quantified variables (isl's
closure of a recurrence with a `t % 3 == 0` case gives hundreds) is replaced
by its simple hull within the valid domain: a superset, so only valid points
are added, and inside a cycle only when the hulls are still closed under the
reads. The whole computation runs under an isl operation budget.

An over-approximation may add points where an op *fails*: a `max` over a
window that is empty at `t = 0`, where the reference (which computes only
needed points) never asks for it (fuzz finding F11). So for each node that
can fail on an empty operand (a `max`/`min`/`argmax`/`argmin` reduction, or
an island with one) the points of its needed set where some read is empty
are tested one by one, forwards: a point is needed exactly when a chain of
its readers (valid points, first-true merge branches) reaches an output or a
UDF. The points whose chains provably do not are removed, and so are the
points that read them (a needed point reads only needed points), until
nothing changes. A test that does not finish within a few rounds keeps the
points (a possible spurious error, never a wrong value).
"""
from __future__ import annotations

from collections import deque

import islpy as isl

from tidal.symbolic import Slice

from .polyhedral import Polyhedral
from .graph import components, read_island

__all__ = ["needed_domains", "ROOTS"]

ROOTS = ("sdg.output", "sdg.udf", "sdg.stop_when")       # needed at every valid point
# isl operations one transitive closure may take before the cycle falls back.
CLOSURE_OPERATIONS = 2_000_000
# isl operations the whole computation may take before every node keeps its
# valid domain (a fallback that is always closed under the reads).
NEEDED_OPERATIONS = 20_000_000
# A needed set with more basic sets or existentially quantified variables than
# this is replaced by its simple hull (within the valid domain, checked to be
# closed under the reads): isl's transitive closure of recurrences with
# modular conditions (`t % 3 == 0`) returns sets of hundreds of existentials,
# on which later operations (coalesce, the dependences) ran for minutes or
# overflowed isl's stack.
SIMPLE_PIECES = 8
# Growths of a node's needed set (beyond one per reader inside its cycle)
# after which the cycle is taken to grow step by step (transitive closure).
_GROWTHS = 3


def needed_domains(poly: Polyhedral, valid: dict[int, isl.Set]) -> dict[int, isl.Set]:
    """`valid ∩ needed` for every node (see the module docstring)."""
    ctx = poly.ctx
    before = ctx.get_max_operations()
    ctx.reset_operations()
    ctx.set_max_operations(NEEDED_OPERATIONS)
    try:
        needed = _needed(poly, valid)
    except isl.Error:   # out of operations: run everything that can be computed, as without this pass
        return dict(valid)
    finally:
        ctx.set_max_operations(before)
        ctx.reset_operations()
    ctx.set_max_operations(NEEDED_OPERATIONS)
    try:
        _prune_failing(poly, needed)
    except isl.Error:   # out of operations: the points stay (the over-approximation)
        pass
    finally:
        ctx.set_max_operations(before)
        ctx.reset_operations()
    return needed


def _needed(poly: Polyhedral, valid: dict[int, isl.Set]) -> dict[int, isl.Set]:
    graph = poly.graph
    nodes = graph.nodes
    reads: dict[int, list[tuple[int, isl.Map]]] = {n.index: [] for n in nodes}   # sink -> (source, map)
    for sink, number, m in poly.validity(valid):
        if not m.is_empty():
            reads[sink].append((nodes[sink].edges[number].source, m.reverse()))
    needed = {n.index: valid[n.index] if n.name in ROOTS else _empty(valid[n.index])
              for n in nodes}
    for component in _components(graph):
        inside = set(component)
        if len(component) > 1 or any(s == component[0] for s, _ in reads[component[0]]):
            _cycle(component, inside, reads, needed, valid, poly.ctx)
        else:   # final now (its readers are done): an over-approximation is safe
            needed[component[0]] = _simple(needed[component[0]], valid[component[0]])
        for k in component:
            if needed[k].is_empty():
                continue
            for source, m in reads[k]:
                if source not in inside:
                    needed[source] = needed[source].union(needed[k].apply(m)).coalesce()
    return {k: needed[k].intersect(valid[k]).coalesce() for k in needed}


def _empty(s: isl.Set) -> isl.Set:
    return s.subtract(s)


def _is_complex(s: isl.Set) -> bool:
    return s.n_basic_set() > SIMPLE_PIECES or \
        sum(b.dim(isl.dim_type.div) for b in s.get_basic_sets()) > SIMPLE_PIECES


def _simple(s: isl.Set, valid: isl.Set) -> isl.Set:
    """`s`, or its simple hull within `valid` when `s` is complex (a superset
    of `s`: more points run, all of them computable)."""
    return isl.Set.from_basic_set(s.simple_hull()).intersect(valid).coalesce() if _is_complex(s) else s


def _simplified(component, edges, needed, valid) -> None:
    """Replaces the complex needed sets of a cycle by simple hulls if the
    result is still closed under the reads inside the cycle, else by the
    valid domains (closed by definition): complex sets made isl's later
    steps run for minutes or fail (F2, F5)."""
    if not any(_is_complex(needed[k]) for k in component):
        return
    simple = {k: _simple(needed[k], valid[k]) for k in component}
    for k in component:
        for source, m in edges[k]:
            if not simple[k].apply(m).is_subset(simple[source]):
                needed.update({k: valid[k] for k in component})
                return
    needed.update(simple)


def _cycle(component, inside, reads, needed, valid, ctx) -> None:
    """Completes `needed` inside one strongly connected component whose
    points needed from outside (and roots) are already in `needed`: a
    worklist while each node grows at most a few times more than it has
    readers in the component, else the transitive closure."""
    if all(needed[k].is_empty() for k in component):
        return
    edges = {k: [(source, m) for source, m in reads[k] if source in inside] for k in component}
    readers = {k: 0 for k in component}
    for k in component:
        for source, _ in edges[k]:
            readers[source] += 1
    updates = {k: 0 for k in component}
    pending = deque(k for k in component if not needed[k].is_empty())
    queued = set(pending)
    while pending:
        k = pending.popleft()
        queued.discard(k)
        for source, m in edges[k]:
            add = needed[k].apply(m)
            if add.is_subset(needed[source]):
                continue
            needed[source] = needed[source].union(add).coalesce()
            updates[source] += 1
            if updates[source] > _GROWTHS + readers[source]:   # growing step by step: a recurrence
                pending = None
                break
            if source not in queued:
                pending.append(source)
                queued.add(source)
        if pending is None:
            break
    else:
        _simplified(component, edges, needed, valid)
        return
    try:
        closed = _closure(component, edges, needed, ctx)
    except isl.Error:
        closed = None
    for k in component:
        needed[k] = valid[k] if closed is None else closed[k]
    if closed is not None:
        _simplified(component, edges, needed, valid)


def _closure(component, edges, needed, ctx) -> dict | None:
    """`seed ∪ seed.apply(R+)` per node, or None (inexact and not closed, or
    too many operations)."""
    relation = None
    for m in (m for k in component for _, m in edges[k]):
        um = isl.UnionMap.from_map(m)
        relation = um if relation is None else relation.union(um)
    if relation is None:
        return {k: needed[k] for k in component}
    seed = None
    for k in component:
        us = isl.UnionSet.from_set(needed[k])
        seed = us if seed is None else seed.union(us)
    before = ctx.get_max_operations()
    ctx.reset_operations()
    ctx.set_max_operations(CLOSURE_OPERATIONS)   # give up (keep whole domains) rather than hang
    try:
        closure, _exact = relation.transitive_closure()   # inexact: an over-approximation
        result = seed.union(seed.apply(closure)).coalesce()
        if not result.apply(relation).is_subset(result):
            return None
    finally:
        ctx.set_max_operations(before)
        ctx.reset_operations()
    return {k: needed[k].union(result.extract_set(needed[k].get_space())).coalesce() for k in component}


# Reductions without an identity: they fail on an empty operand.
_FALLIBLE = ("reduce max", "reduce min", "reduce argmax", "reduce argmin")
# Rounds of the forward test of a failing point before it gives up.
_FORWARD_ROUNDS = 8


def _fallible(node) -> bool:
    if node.kind in _FALLIBLE:
        return True
    if node.name == "sdg.island":
        return any(op.kind in _FALLIBLE for op in read_island(node).ops)
    return False


def _prune_failing(poly: Polyhedral, needed: dict[int, isl.Set]) -> None:
    """Removes from `needed` (in place) the points where a fallible node
    reads an empty slice and that no output or UDF needs, and the points
    that read them (see the module docstring)."""
    graph = poly.graph
    nodes = graph.nodes
    suspects = {}
    for node in nodes:
        k = node.index
        if needed[k].is_empty() or not _fallible(node):
            continue
        empty = needed[k]
        for edge, read in zip(node.edges, poly.reads[k]):
            if any(isinstance(c, Slice) for c in edge.dep.components):
                empty = empty.subtract(read.domain())
        if not empty.is_empty():
            suspects[k] = empty.coalesce()
    if not suspects:
        return
    forward: dict[int, list[tuple[int, isl.Map]]] = {n.index: [] for n in nodes}   # source -> (sink, map)
    for sink, number, m in poly.validity(needed):
        if not m.is_empty():
            forward[nodes[sink].edges[number].source].append((sink, m))
    removed = {}
    for k, points in suspects.items():
        unneeded = points.subtract(_reaching(nodes, forward, k, points))
        if not unneeded.is_empty():
            removed[k] = unneeded
    _remove(forward, needed, removed)


def _reaching(nodes, forward, k: int, points: isl.Set) -> isl.Set:
    """The points of `points` (of node k) from which a chain of readers
    reaches an output or a UDF; all of `points` if the search does not
    settle within `_FORWARD_ROUNDS` rounds."""
    identity = isl.Map.identity(points.get_space().map_from_set()).intersect_domain(points)
    reach = {k: identity}              # node -> { suspect point -> point of that node it flows to }
    found = points.subtract(points)
    frontier = {k: identity}
    for _ in range(_FORWARD_ROUNDS):
        if not frontier or found.is_equal(points):
            return found
        step = {}
        for j, m in frontier.items():
            for sink, v in forward[j]:
                add = m.apply_range(v)
                if add.is_empty():
                    continue
                if nodes[sink].name in ROOTS:
                    found = found.union(add.domain()).coalesce()
                have = reach.get(sink)
                if have is not None:
                    add = add.subtract(have)
                    if add.is_empty():
                        continue
                reach[sink] = add if have is None else have.union(add).coalesce()
                step[sink] = add if sink not in step else step[sink].union(add)
        frontier = step
    return found if not frontier else points


def _remove(forward, needed, removed: dict[int, isl.Set]) -> None:
    """Subtracts `removed` from `needed`, and forwards: the points that read
    a removed point (a needed point reads only needed points). If that does
    not settle within `_FORWARD_ROUNDS` rounds, nothing is removed (a point
    left reading a removed one would read a store slot never written)."""
    before = dict(needed)
    frontier = dict(removed)
    for _ in range(_FORWARD_ROUNDS):
        if not frontier:
            return
        for k, points in frontier.items():
            needed[k] = needed[k].subtract(points).coalesce()
        step = {}
        for j, points in frontier.items():
            for sink, v in forward[j]:
                add = points.apply(v).intersect(needed[sink])
                if not add.is_empty():
                    step[sink] = add if sink not in step else step[sink].union(add)
        frontier = step
    if frontier:
        needed.update(before)


def _components(graph) -> list[list[int]]:
    """Strongly connected components of "node reads node", consumers before
    the producers they read."""
    return components(graph)[::-1]
