"""Invalid points of a strongly connected component by node elimination.

The valid-domain rule (see polyhedral.py) makes a point invalid iff a chain of
reads inside its component reaches a point that fails by itself: the invalid
points are the least solution of

    X = local  ∪  R⁻¹(X)          (R: sink instance -> source instance read)

`Polyhedral.closure_valid_domains` first takes isl's transitive closure of the
component's whole read relation. With several statements, modular branch
conditions (`t % 3 == 0`) and extra parameters that closure can blow up (isl
gives up after its operation budget) although the cycle itself is a plain
`s[t] -> s[t + 1]`. This module removes the statements one at a time instead,
as in state elimination for automata: removing v replaces every path p -> v ->
s by the composed relation p -> v* -> s (v* the reflexive closure of v's
self-reads), and v's own failures become failures of its readers. Composing
first lets isl coalesce the branches again (`t % 3 == 0` and `t % 3 != 0`
become all t), so the closures left are of one statement each. Back-
substituting in reverse order gives each statement's invalid points.

The result does not need exact closures: the caller keeps it only if it is a
fixpoint of the rule, and on the finite, acyclic instance graph of a
schedulable program the equation above has exactly one solution (a point in
a solution but not in the least one would start an infinite chain of reads).
"""
from __future__ import annotations

import islpy as isl

__all__ = ["invalid_by_elimination"]


def _union(a, b):
    return b if a is None else a.union(b).coalesce()


def _star(self_map: isl.Map | None, space_set: isl.Set):
    """Reflexive-transitive closure of a statement's self-reads (the identity if none)."""
    identity = isl.Map.identity(space_set.get_space().map_from_set())
    if self_map is None:
        return identity
    closure, _exact = self_map.transitive_closure()   # an over-approximation is fine (module doc)
    return identity.union(closure).coalesce()


def _next(remaining: list[int], R: dict) -> int:
    """The statement whose removal adds the fewest relations (readers x sources),
    one without self-reads first."""
    def cost(v):
        preds = sum(1 for p in remaining if p != v and (p, v) in R)
        succs = sum(1 for s in remaining if s != v and (v, s) in R)
        return (preds * succs, (v, v) in R, v)
    return min(remaining, key=cost)


def invalid_by_elimination(nodes: list[int], full: dict[int, isl.Set], local: dict[int, isl.Set],
                           reads: dict[tuple[int, int], isl.Map]) -> dict[int, isl.Set]:
    """{statement: its invalid points} for the component of statements `nodes`,
    given each one's full domain, the points that fail by themselves (`local`)
    and the reads between them ((sink, source) -> map sink instance -> source
    instance). May raise isl.Error (the caller bounds isl's operations)."""
    R = {key: m.coalesce() for key, m in reads.items()}
    L = {k: local[k] for k in nodes}
    eliminated: list[tuple[int, isl.Map, dict[int, isl.Map]]] = []
    remaining = list(nodes)
    while remaining:
        v = _next(remaining, R)
        remaining.remove(v)
        star = _star(R.pop((v, v), None), full[v])
        preds = {p: R.pop((p, v)) for p in remaining if (p, v) in R}
        succs = {s: star.apply_range(R.pop((v, s))) for s in remaining if (v, s) in R}
        own = star.intersect_range(L[v]).domain()          # v's points that reach its own failures
        for p, into in preds.items():
            L[p] = L[p].union(into.intersect_range(own).domain()).coalesce()
            for s, out in succs.items():
                R[(p, s)] = _union(R.get((p, s)), into.apply_range(out))
        eliminated.append((v, own, succs))
    invalid: dict[int, isl.Set] = {}
    for v, own, succs in reversed(eliminated):     # successors are solved before v
        bad = own
        for s, out in succs.items():
            bad = bad.union(out.intersect_range(invalid[s]).domain())
        invalid[v] = bad.intersect(full[v]).coalesce()
    return invalid
