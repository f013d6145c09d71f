"""The sdg passes' view of a graph block and its cycles over a step.

`View` indexes a graph's ops: their domains, what each reads (producer index
and dependence components) and who reads it. `cycles_over` finds the ops on
cycles over a step (which no pass can run for all its points at once), those
on backward cycles (their loop starts at the step's last point) and those on
recurrences over the step itself; `step_edges` and `branches_at` are the read
edges they follow (a merge read where only some cases hold goes to those
cases). Used by sdg-vectorize, sdg-lift, sdg-lift-recurrence, sdg-tile,
sdg-contract, sdg-reassociate and sdg-restrict-merges.
"""
from __future__ import annotations

from mlir import ir

from tidal.dialects.attrs import expr_text, index_components
from tidal.symbolic import Const, SymbolicError, parse, simplify, substitute, to_text
from tidal.symbolic.logic import BoolConst

from .sccs import strongly_connected

__all__ = ["View", "operand_deps", "cyclic_over", "cycles_over", "step_edges", "branches_at", "step_offset",
           "stop_condition_ops"]


def operand_deps(o: ir.Operation) -> list[list[str]]:
    """The dependence components through which `o` reads each operand (none: [])."""
    if "deps" in o.attributes:
        return [index_components(a) for a in ir.ArrayAttr(o.attributes["deps"])]
    return [[] for _ in o.operands]


def step_offset(component: str, step: str) -> int | None:
    """c for a component `step + c` (any integer c), else None."""
    if ":" in component:
        return None
    try:
        delta = simplify(parse(component) - parse(step))
    except SymbolicError:
        return None
    return int(delta.value) if isinstance(delta, Const) else None


def _shift(component: str, step: str) -> int | None:
    """c for a component `step + c` (c <= 0), else None."""
    c = step_offset(component, step)
    return c if c is not None and c <= 0 else None


class View:
    """The ops of one graph block: domains, reads (producer index, components), readers."""

    def __init__(self, graph: ir.Operation):
        self.steps = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])]
        self.bounds = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["bounds"])]
        self.ops = [o.operation for o in graph.regions[0].blocks[0].operations]
        where = {}
        for k, o in enumerate(self.ops):
            for value in o.results:
                where[value] = k
        self.domain = [tuple(index_components(o.attributes["domain"])) if "domain" in o.attributes else ()
                       for o in self.ops]
        self.reads = [[(where.get(v), d) for v, d in zip(o.operands, operand_deps(o))] for o in self.ops]
        self.readers: list[list[tuple[int, int]]] = [[] for _ in self.ops]
        for k, reads in enumerate(self.reads):
            for i, (src, _) in enumerate(reads):
                if src is not None:
                    self.readers[src].append((k, i))


def stop_condition_ops(g: View, step: str) -> set[int]:
    """The ops that an `sdg.stop_when` over `step` reads, transitively: they run
    before the stop is known, so a pass must not make them read the bound of
    `step` (a block over all of it, a scan over 0:T), which only the stop
    decides (lowering/stopping.py)."""
    stack = [k for k, o in enumerate(g.ops) if o.name == "sdg.stop_when" and g.domain[k][-1:] == (step,)]
    seen: set[int] = set()
    while stack:
        k = stack.pop()
        if k in seen:
            continue
        seen.add(k)
        stack.extend(src for src, _ in g.reads[k] if src is not None)
    return seen


def cyclic_over(g: View, step: str) -> set[int]:
    """The ops on a cycle of `g` once reads into the strict past of another
    past-only step (`W[i - 1]` when t is `step`) are left out: a chain of reads
    through an earlier point of such a step never comes back to the same point
    of it, so those cycles do not tie the points of `step` together.

    Reads of merges are not followed through their cases here (step_edges'
    `through_merges`): on PPO that finds two more ops (its old log-probabilities
    and value targets) free of cycles over t, and once they are vectorized isl
    picks a schedule whose epoch loop runs 23 guarded phases per epoch: 85 ->
    520 ms per iteration, measured."""
    return cycles_over(g, step)[0]


def cycles_over(g: View, step: str) -> tuple[set[int], set[int], set[int]]:
    """(the ops on cycles over `step`, as cyclic_over; those of them on backward
    cycles; those on recurrences over `step` itself): a cycle is backward when its
    reads inside it all go to the same or a later point of the step, one at least
    to a later one (`adv[t] = delta[t] + c * adv[t + 1]`). A loop over it runs from
    the step's last point down, so its first point needs the last of its
    operands. A cycle is a recurrence over `step` when one of its reads goes to
    another point of it (`h[t - 1]`); a recurrence over t of an (i, t) program is
    a cycle over i too, but not a recurrence over i."""
    edges = step_edges(g, step, through_merges=False)
    past = _past_only_steps(g, step)
    cyclic: set[int] = set()
    backward: set[int] = set()
    recurrent: set[int] = set()
    for comp in strongly_connected(len(g.ops), lambda k: edges[k]):
        members = set(comp)
        if len(comp) == 1 and comp[0] not in edges[comp[0]]:
            continue
        cyclic |= members
        offsets = [step_offset(dep[g.domain[src].index(step)], step)
                   if step in g.domain[src] and len(dep) == len(g.domain[src]) else None
                   for k in comp for src, dep in g.reads[k]
                   if src in members and not _into_the_past(g, src, dep, past)]
        if offsets and None not in offsets and min(offsets) >= 0 and max(offsets) > 0:
            backward |= members
        if any(o is not None and o != 0 for o in offsets):
            recurrent |= members
    return cyclic, backward, recurrent


def step_edges(g: View, step: str, through_merges: bool = True) -> list[list[int]]:
    """For each op, the ops it reads, as far as cycles over `step` go: reads
    into the strict past of another past-only step are left out, and a read of a
    merge at a point where some of its cases cannot hold (PPO's acting reads
    the weights at epoch 0, `W[i, 0]`, where only the cases from the previous
    iteration hold, not `W[i, k - 1]`) goes to the producers of the cases that
    can, through the merge's own reads (unless `through_merges` is False)."""
    past = _past_only_steps(g, step)
    edges = []
    for k in range(len(g.ops)):
        out = []
        for src, dep in g.reads[k]:
            if src is None:
                continue
            reads = _through_merge(g, src, dep) if through_merges else [(src, dep)]
            out += [s for s, d in reads if not _into_the_past(g, s, d, past)]
        edges.append(out)
    return edges


def _through_merge(g: View, src: int, dep: list[str]) -> list[tuple[int, list[str]]]:
    """[(src, dep)], or for a merge read where some cases cannot hold, the reads
    of the cases that can, with the merge's point replaced by the read's."""
    o = g.ops[src]
    branches = branches_at(o, dep) if o.name == "sdg.merge" and "conds" in o.attributes else None
    if branches is None or len(branches) == len(g.reads[src]):
        return [(src, dep)]
    return [(g.reads[src][j][0], d) for j, _, d in branches if g.reads[src][j][0] is not None]


def branches_at(merge: ir.Operation, dep: list[str]) -> list[tuple[int, object, list[str]]] | None:
    """The branches of `merge` that can hold at its point `dep` (no slices): (index,
    condition there, the branch's dependence there), without the branches whose
    condition is false there and those after the first that is true; None if the
    point does not substitute (a slice, an expression that does not parse)."""
    domain = index_components(merge.attributes["domain"])
    if len(dep) != len(domain) or any(":" in c for c in dep):
        return None
    try:
        point = {e: parse(c) for e, c in zip(domain, dep)}
        conds = [simplify(substitute(parse(expr_text(c)), point)) for c in ir.ArrayAttr(merge.attributes["conds"])]
        deps = [[_at(c, point) for c in index_components(a)] for a in ir.ArrayAttr(merge.attributes["deps"])]
    except (SymbolicError, TypeError, ValueError):
        return None
    out = []
    for j, c in enumerate(conds):
        if isinstance(c, BoolConst) and not c.value:
            continue
        out.append((j, c, deps[j]))
        if isinstance(c, BoolConst):
            break
    return out


def _at(component: str, point: dict) -> str:
    """A dependence component with a point substituted (each end of a slice)."""
    return ":".join(p if not p.strip() else to_text(simplify(substitute(parse(p), point)), mlir=True)
                    for p in component.split(":"))


def _past_only_steps(g: View, step: str) -> set[str]:
    """Steps other than `step` that every read indexes at the identity or an
    earlier point (`i`, `i - 1`)."""
    out = set(g.steps) - {step}
    for reads in g.reads:
        for src, dep in reads:
            if src is None or len(dep) != len(g.domain[src]):
                continue
            for e, c in zip(g.domain[src], dep):
                if e in out and _shift(c, e) is None:
                    out.discard(e)
    return out


def _into_the_past(g: View, src: int, dep: list[str], past: set[str]) -> bool:
    """Whether a read goes to a strictly earlier point of a past-only step."""
    if len(dep) != len(g.domain[src]):
        return False
    return any(e in past and (_shift(c, e) or 0) < 0 for e, c in zip(g.domain[src], dep))
