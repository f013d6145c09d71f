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

from tidal.dialects.attrs import expr_attr, index_attr, index_components
from tidal.symbolic import SymbolicError, parse, to_text
from tidal.symbolic.logic import BoolConst

from .base import ModulePass, sdg_graphs
from .sdg_graph_view import branches_at
from .transform_utils import dep_of, set_dep

__all__ = ["SdgRestrictMerges"]


def _restriction(merge: ir.Operation, dep: list[str], reader_domain: list[str]):
    """(domain, branches) of the merge a reader at `reader_domain` reads instead of
    `merge` at `dep` (branches_at), or None where no branch drops or the point is
    constant."""
    if dep == index_components(merge.attributes["domain"]):
        return None
    branches = branches_at(merge, dep)
    if branches is None or not 0 < len(branches) < len(merge.operands):
        return None
    try:
        used = {s.name for c in dep for s in parse(c).free_symbols}
    except SymbolicError:
        return None
    domain = [d for d in reader_domain if d in used]   # the reader's dims its point uses
    # a read at a constant point runs once: no loop to untie, and its errors
    # name the point the user wrote (s[3] past T: "s at t = 3")
    return (domain, branches) if domain else None


def _restrict(graph: ir.Operation) -> int:
    ops = [o.operation for o in graph.regions[0].blocks[0].operations]
    made: dict[tuple, tuple[ir.Value, list[str]] | None] = {}
    count = 0
    for reader in ops:
        reader_domain = index_components(reader.attributes["domain"]) if "domain" in reader.attributes else []
        for i, value in enumerate(reader.operands):
            merge = getattr(value.owner, "operation", None)   # None for a block argument
            dep = dep_of(reader, i)
            if merge is None or merge.name != "sdg.merge" or "conds" not in merge.attributes or dep is None:
                continue
            key = (value, tuple(dep))
            if key not in made:
                r = _restriction(merge, dep, reader_domain)
                made[key] = None if r is None else _restricted(merge, *r)
            if made[key] is not None:
                new_value, new_dep = made[key]
                reader.operands[i] = new_value
                set_dep(reader, i, new_dep)
                count += 1
    return count


def _restricted(merge: ir.Operation, domain: list[str], branches: list) -> tuple[ir.Value, list[str]]:
    """(value, components) the reader reads instead of the merge: the one branch
    that holds, read directly, or a new merge of the branches over `domain`."""
    if len(branches) == 1 and isinstance(branches[0][1], BoolConst):
        j, _, dep = branches[0]
        return merge.operands[j], dep
    ctx = merge.context
    with ctx, merge.location, ir.InsertionPoint(merge):
        attrs = {merge.attributes[k].name: merge.attributes[k].attr for k in range(len(merge.attributes))}
        attrs["domain"] = index_attr(domain, ctx)
        attrs["deps"] = ir.ArrayAttr.get([index_attr(dep, ctx) for _, _, dep in branches])
        attrs["conds"] = ir.ArrayAttr.get([expr_attr(to_text(c, mlir=True), ctx) for _, c, _ in branches])
        new = ir.Operation.create("sdg.merge", results=[merge.results[0].type],
                                  operands=[merge.operands[j] for j, _, _ in branches], attributes=attrs)
    return new.results[0], list(domain)


@dataclass
class SdgRestrictMerges(ModulePass):
    """Reads of a merge at points where some branches cannot hold read a merge of the others (module doc)."""

    name: ClassVar[str] = "sdg-restrict-merges"
    summary: ClassVar[str] = ("A read of a merge at a point where some branches cannot hold (W[i, 0] of a "
                              "recurrence over (i, k)) reads a new merge of the branches that can")

    def run(self, op: ir.Operation) -> None:
        self.num_restricted = 0   # for tests and callers
        for graph in sdg_graphs(op, "sdg-restrict-merges"):
            with graph.context:
                self.num_restricted += _restrict(graph)
