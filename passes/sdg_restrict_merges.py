"""sdg-restrict-merges: a read of a merge at a point where some of its
branches cannot hold reads a merge of the branches that can.

A recurrence over two dims is one merge: PPO's weights over (iteration i,
epoch k) are

    W[i, k] = W0                 if i == 0 and k == 0
            = Adam(W[i - 1, K - 1]) if k == 0 and i >= 1
            = Adam(W[i, k - 1])     if k >= 1

and the acting loop of iteration i reads `W[i, 0]`, where the third branch
never holds. The read still depends on the merge as a whole, so to the
scheduler the acting loop, the learner's epochs and the merge are one
strongly connected component within an iteration: isl then schedules them as
one band, the epoch loop with the acting loop inside its first iteration and
every epoch cut into phases (`for c1 in range(2 * K): if c1 % 2 == 0: ...`).
With more ops over the iteration (sdg-vectorize moving the critic's forward
passes out of the acting loop), it cut each epoch into 23 guarded phases: 6x
slower in XLA (measured on bench/rl.py's PPO).

The rewrite substitutes the read's point into the merge's conditions and
dependences. When some condition becomes false (`0 ge 1`), or true before
the last branch, the reader reads a new merge over the dims its point uses (here i) with the branches whose
condition is not false, up to the first that is true, each read at the
composed dependence:

    W0[i] = W0 if i == 0;  Adam(W[i - 1, K - 1]) if i >= 1      (domain [i])

and a single branch that is true is read directly. Readers of the same merge
at the same point share one new merge. The values are the same (the new merge
takes the branch the old one took at that point); what changes is that the
acting loop no longer depends on the epochs of its own iteration.

Refused (left as they are): reads through a slice of the merge, reads at a
point where no condition becomes false or true before the last branch, and
reads at a constant point (`s[3]`, `W[0, 0]`): they run once, so there is no
loop to untie, and an error for a bad bound keeps naming the point the user
wrote.

Before:

    %w = sdg.merge %w0[] if <i eq 0 and k eq 0>, %u[i - 1, K - 1] if <k eq 0 and i ge 1>,
                   %u[i, k - 1] if <k ge 1> domain [i, k] : ...
    %a = sdg.matmul %s[i, t], %w[i, 0] domain [i, t] : ...

After `sdg-restrict-merges`:

    %w_0 = sdg.merge %w0[] if <i eq 0>, %u[i - 1, K - 1] if <i ge 1> domain [i] : ...
    %a = sdg.matmul %s[i, t], %w_0[i] domain [i, t] : ...
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects import ops_named
from tidal.dialects.attrs import expr_attr, expr_text, index_attr, index_components
from tidal.symbolic import SymbolicError, parse, simplify, substitute, to_text
from tidal.symbolic.logic import BoolConst

from .base import ModulePass, PassFailure

__all__ = ["SdgRestrictMerges"]


def _components(o: ir.Operation, name: str) -> list[str]:
    return index_components(o.attributes[name]) if name in o.attributes else []


def _at(component: str, point: dict) -> str:
    """A dependence component with the merge's point substituted (each end of a slice)."""
    parts = component.split(":")
    return ":".join(p if not p.strip() else to_text(simplify(substitute(parse(p), point))) for p in parts)


class _Restriction:
    """The branches of a merge that can hold at one point of it, read there."""

    def __init__(self, merge: ir.Operation, dep: list[str], reader_domain: list[str]):
        self.ok = False
        domain = _components(merge, "domain")
        if len(dep) != len(domain) or any(":" in c for c in dep) or dep == domain:
            return
        try:
            point = {e: parse(c) for e, c in zip(domain, dep)}
            used = {s.name for c in dep for s in parse(c).free_symbols}
            conds = [simplify(substitute(parse(expr_text(c)), point)) for c in ir.ArrayAttr(merge.attributes["conds"])]
            deps = [[_at(c, point) for c in index_components(a)] for a in ir.ArrayAttr(merge.attributes["deps"])]
        except (SymbolicError, TypeError, ValueError):
            return
        self.domain = [d for d in reader_domain if d in used]   # the reader's dims its point uses
        if not self.domain:   # a read at a constant point runs once: no loop to untie, and its
            return            # errors name the point the user wrote (s[3] past T: "s at t = 3")
        self.branches = []
        for j, c in enumerate(conds):
            if isinstance(c, BoolConst) and not c.value:
                continue
            self.branches.append((j, c, deps[j]))
            if isinstance(c, BoolConst):
                break
        self.ok = 0 < len(self.branches) < len(conds)

    def single(self) -> bool:
        return len(self.branches) == 1 and isinstance(self.branches[0][1], BoolConst)


def _restrict(graph: ir.Operation) -> int:
    ops = [o.operation for o in graph.regions[0].blocks[0].operations]
    made: dict[tuple, tuple[ir.Value, list[str]]] = {}
    count = 0
    for reader in ops:
        one = "dep" in reader.attributes   # sdg.output reads its one operand at `dep`
        if not one and "deps" not in reader.attributes:
            continue
        deps = [reader.attributes["dep"]] if one else list(ir.ArrayAttr(reader.attributes["deps"]))
        changed = False
        for i, value in enumerate(reader.operands):
            merge = getattr(value.owner, "operation", None)   # None for a block argument
            if merge is None or merge.name != "sdg.merge" or "conds" not in merge.attributes:
                continue
            dep = index_components(deps[i])
            key = (value, tuple(dep))
            if key not in made:
                r = _Restriction(merge, dep, _components(reader, "domain"))
                made[key] = _restricted(merge, r) if r.ok else None
            if made[key] is None:
                continue
            new_value, new_dep = made[key]
            reader.operands[i] = new_value
            deps[i] = index_attr(new_dep, reader.context)
            changed = True
            count += 1
        if changed and one:
            reader.attributes["dep"] = deps[0]
        elif changed:
            reader.attributes["deps"] = ir.ArrayAttr.get(deps, reader.context)
    return count


def _restricted(merge: ir.Operation, r: _Restriction) -> tuple[ir.Value, list[str]]:
    """(value, components) the reader reads instead of the merge at r's point."""
    if r.single():
        j, _, dep = r.branches[0]
        return merge.operands[j], dep
    ctx = merge.context
    with ctx, merge.location, ir.InsertionPoint(merge):
        attrs = {merge.attributes[k].name: merge.attributes[k].attr for k in range(len(merge.attributes))}
        attrs["domain"] = index_attr(r.domain, ctx)
        attrs["deps"] = ir.ArrayAttr.get([index_attr(dep, ctx) for _, _, dep in r.branches])
        attrs["conds"] = ir.ArrayAttr.get([expr_attr(to_text(c, mlir=True), ctx) for _, c, _ in r.branches])
        new = ir.Operation.create("sdg.merge", results=[merge.results[0].type],
                                  operands=[merge.operands[j] for j, _, _ in r.branches], attributes=attrs)
    return new.results[0], list(r.domain)


@dataclass
class SdgRestrictMerges(ModulePass):
    """Reads of a merge at points where some branches cannot hold read a merge of the others (module doc)."""

    name: ClassVar[str] = "sdg-restrict-merges"
    summary: ClassVar[str] = ("A read of a merge at a point where some branches cannot hold (W[i, 0] of a "
                              "recurrence over (i, k)) reads a new merge of the branches that can")

    def run(self, op: ir.Operation) -> None:
        self.num_restricted = 0   # for tests and callers
        for graph in ops_named(op, "sdg.graph"):
            if len(graph.regions) != 1 or len(graph.regions[0].blocks) != 1:
                raise PassFailure("sdg-restrict-merges expects an sdg.graph with one block", graph)
            with graph.context:
                self.num_restricted += _restrict(graph)
