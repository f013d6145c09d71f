"""Strongly connected components of a graph given by successor lists.

`strongly_connected(n, successors)` returns the components of the graph on
nodes 0..n-1 (`successors(k)`: the nodes k points to), each sorted, in the
order Tarjan's algorithm closes them: a component comes after every
component it points to. For a read graph (a node points to the producers it
reads) that is producers before their consumers. Iterative: graphs are deep.
"""
from __future__ import annotations

from typing import Callable, Iterable

__all__ = ["strongly_connected"]


def strongly_connected(n: int, successors: Callable[[int], Iterable[int]]) -> list[list[int]]:
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    out: list[list[int]] = []

    def visit(k: int):
        index[k] = low[k] = len(index)
        stack.append(k)
        on_stack.add(k)
        return (k, iter(sorted(set(successors(k)))))

    for root in range(n):
        if root in index:
            continue
        work = [visit(root)]
        while work:
            k, succ = work[-1]
            nxt = next((s for s in succ if s not in index or s in on_stack), None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[k])
                if low[k] == index[k]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == k:
                            break
                    out.append(sorted(component))
            elif nxt in index:
                low[k] = min(low[k], index[nxt])
            else:
                work.append(visit(nxt))
    return out
