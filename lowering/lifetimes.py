"""Store lifetimes under the schedule: when a value's store can be allocated
and when it can be freed (the deallocation augmentation of the paper's §6, at
the granularity of the program's top-level statements).

The schedule's loop tree (`sched.loop_tree()`, isl's AST, checked to run
every instance once and every dependence source first) is a *sequence* of
top-level statements `S_0; S_1; ...; S_{n-1}` (loop nests, conditionals or
single executions), and all instances inside `S_j` run before any inside
`S_{j+1}`. So the lexicographic maximum of the schedule times of a value's
readers starts with the index of the last top-level statement that contains
one of them, and nothing reads the value after that statement ends:

* `free` after `S_last`, where `last` is the last statement that runs a
  reader of the value (or the writer, for a value nobody reads);
* `alloc` before `S_first`, where `first` is the first statement that runs
  the writer or a reader.

Inside a top-level loop nest the stores already reuse their memory: ring and
window stores keep a few points (storage.py, checked with isl), so a value
whose points die one step later costs one point, not T.

Which values: every scheduled node with a store except `sdg.output`s (the
run's results are read after the program) and `sdg.input`s are not allocated
late (they are loaded, as a copy of the user's array, when the run starts)
but are freed after their last reader, like the rest. An alloc before
`S_0` or a free after `S_{n-1}` changes nothing and is left out.

    events = memory_events(graph, tree, statements)
    # {j: ([nodes to allocate before S_j], [nodes to free after S_j])}

`sdg-lower-to-scf` turns them into calls of `@<graph>_alloc<k>` and
`@<graph>_free<k>` between the top-level statements of the run function.
"""
from __future__ import annotations

from dataclasses import dataclass

from .graph import Graph
from .loop_ast import Exec, walk

__all__ = ["Lifetime", "lifetimes", "memory_events"]


@dataclass(frozen=True)
class Lifetime:
    node: int
    first: int   # the first top-level statement that writes or reads the value
    last: int    # the last one that reads it (or writes it, when nothing reads it)


def _positions(tree: list) -> dict[int, list[int]]:
    """Node -> the indices of the top-level statements that run it."""
    out: dict[int, list[int]] = {}
    for j, stmt in enumerate(tree):
        for s in walk([stmt]):
            if isinstance(s, Exec):
                at = out.setdefault(s.node, [])
                if not at or at[-1] != j:
                    at.append(j)
    return out


def lifetimes(graph: Graph, tree: list, statements: list[int]) -> dict[int, Lifetime]:
    """The lifetime of every scheduled node's store, in top-level statements."""
    runs = _positions(tree)
    readers: dict[int, list[int]] = {}
    for consumer in statements:
        for edge in graph.nodes[consumer].edges:
            readers.setdefault(edge.source, []).extend(runs.get(consumer, []))
    out = {}
    for k in statements:
        own = runs.get(k, [])
        if not own:
            continue
        reads = readers.get(k, [])
        first = min(own + reads)
        last = max(reads) if reads else max(own)
        out[k] = Lifetime(k, first, max(last, max(own)))
    return out


def memory_events(graph: Graph, tree: list, statements: list[int]) -> dict[int, tuple[list[int], list[int]]]:
    """{top-level statement j: (nodes allocated just before it, nodes freed
    just after it)}, only for statements with events."""
    n = len(tree)
    events: dict[int, tuple[list[int], list[int]]] = {}
    for k, life in sorted(lifetimes(graph, tree, statements).items()):
        name = graph.nodes[k].name
        if name == "sdg.output":
            continue
        if name != "sdg.input" and life.first > 0:
            events.setdefault(life.first, ([], []))[0].append(k)
        if life.last < n - 1:
            events.setdefault(life.last, ([], []))[1].append(k)
    return events
