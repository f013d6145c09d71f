"""Which branches of a merge can hold where the loop tree runs it.

isl's loop tree often runs a merge's instances in several places: a
recurrence `h[t] = merge(h0 if t == 0, f(h[t-1]))` runs at `t = 0` before its
loop and at `1 <= t < T` in it. At each place only some branches can hold
(here: the first before the loop, the second in it). `mark_reachable_branches`
records them on each `Exec` of a merge (`Exec.branches`, the branch indices
whose first-true region meets the instances that place runs); lowering
writes them on the call (`func.call @g_op6(%i) {tidal.branches = array<i64: 1>}`),
and a loop inside XLA then computes no select between branches that cannot
hold there (an RNN step at T = 4,000: 7.5 -> 4.3 ms for the loop alone, measured
on a hand-written replica of the traced loop).

The test is exact (isl): a branch is dropped only where its region and the
instances run there do not meet, for every value of the bounds.
"""
from __future__ import annotations

import islpy as isl

from .executed_order import Exprs, as_map, tree_iterators
from .loop_ast import Exec, For, If

__all__ = ["mark_reachable_branches"]


def mark_reachable_branches(tree: list, sched) -> None:
    """Sets `branches` on each `Exec` of a merge in `tree` to the branches
    that can hold at the instances it runs (all of them: left None)."""
    graph, poly = sched.graph, sched.poly
    merges = {k for k, regions in poly.regions.items() if regions and graph.nodes[k].name == "sdg.merge"}
    if not merges:
        return
    exprs = Exprs(poly.ctx, poly.context, tree_iterators(tree, []))

    def visit(stmts: list, where: isl.Set) -> None:
        for s in stmts:
            if isinstance(s, For):
                var = exprs.aff(("var", s.var))
                lower = exprs.aff(s.lower)
                inside = lower.le_set(var).intersect(var.lt_set(exprs.aff(s.upper)))
                if s.step != 1:
                    inside = inside.intersect(var.sub(lower).mod_val(isl.Val.int_from_si(poly.ctx, s.step))
                                              .eq_set(exprs.const(0)))
                visit(s.body, where.intersect(inside))
            elif isinstance(s, If):
                holds = exprs.cond(s.cond)
                visit(s.then, where.intersect(holds))
                visit(s.orelse, where.subtract(holds))
            elif isinstance(s, Exec) and s.node in merges:
                s.branches = _reachable(exprs, s, where, poly.regions[s.node])

    visit(tree, exprs.universe.intersect_params(poly.context))


def _reachable(exprs: Exprs, s: Exec, where: isl.Set, regions: list) -> tuple[int, ...] | None:
    instances = as_map(exprs, [exprs.aff(a) for a in s.args], where, f"S{s.node}").range()
    live = []
    for b, region in enumerate(regions):
        region = region.align_params(instances.get_space())
        if not region.intersect(instances.align_params(region.get_space())).is_empty():
            live.append(b)
    return None if len(live) == len(regions) else tuple(live)
