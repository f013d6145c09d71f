"""Checking that a schedule runs every dependence source first.

`first_violated(graph, domains, validity, theta)`: each dependence m (source
instance -> sink instance) becomes the pairs of their times under `theta`
(instance -> time), none of which may be lexicographically later-or-same:
one emptiness test per dependence. Comparing m with all in-order pairs of
its two nodes' instances (`first_violated_pairwise`, kept for times in
several spaces) was 3-4x slower on PPO's loop tree.
"""
from __future__ import annotations

import islpy as isl

__all__ = ["first_violated", "first_violated_pairwise"]


def first_violated(graph, domains: dict, validity: list, theta: isl.UnionMap,
                   per_node: dict | None = None) -> tuple[int, int] | None:
    """The first (sink, operand) of `validity` ([(sink, operand, map)]) whose
    dependence `theta` (`per_node`: the same, node index -> map) does not run
    source first, or None."""
    space = _single_range_space(theta)
    if space is None:
        return first_violated_pairwise(graph, domains, validity, theta)
    not_before = isl.UnionMap.from_map(isl.Map.lex_ge(space))
    times: dict = {}

    def time_of(k):
        if k not in times:
            t = (isl.UnionMap.from_map(per_node[k]) if per_node is not None and k in per_node else
                 theta.intersect_domain(isl.UnionSet.from_set(domains[k])))
            # an instance with no time would drop out of the pairs below
            times[k] = t if isl.UnionSet.from_set(domains[k]).is_subset(t.domain()) else None
        return times[k]

    for sink, number, m in validity:
        src, dst = time_of(graph.nodes[sink].edges[number].source), time_of(sink)
        if src is None or dst is None:
            return sink, number
        pairs = isl.UnionMap.from_map(m).apply_domain(src).apply_range(dst)
        if not pairs.intersect(not_before).is_empty():
            return sink, number
    return None


def first_violated_pairwise(graph, domains: dict, validity: list, theta: isl.UnionMap) -> tuple[int, int] | None:
    """`first_violated` by comparing each dependence with all pairs of its
    nodes' instances whose times are in order (isl compares times pairwise)."""
    times = {}   # statement -> its part of theta (pairs are compared per dependence, not all at once)
    for sink, number, m in validity:
        src = graph.nodes[sink].edges[number].source
        for k in (src, sink):
            if k not in times:
                times[k] = theta.intersect_domain(isl.UnionSet.from_set(domains[k]))
        if not isl.UnionMap.from_map(m).is_subset(times[src].lex_lt_union_map(times[sink])):
            return sink, number
    return None


def _single_range_space(theta: isl.UnionMap):
    """The one space of `theta`'s times, or None if there are several (or none).
    (From the maps' spaces: `theta.range()` would compute the set.)"""
    maps = theta.get_map_list()
    spaces = [maps.get_at(i).get_space().range() for i in range(maps.n_map())]
    if not spaces:
        return None
    return spaces[0] if all(sp.is_equal(spaces[0]) for sp in spaces[1:]) else None
