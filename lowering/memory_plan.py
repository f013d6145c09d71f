"""Static memory planning with symbolic sizes (Relax §4.3, on TEMPO's store lifetimes).

`plan_storage` (storage.py) gives each value a store and `lifetimes`
(lifetimes.py) the top-level statements between which it lives. This pass
assigns the array stores (block and window stores of static per-point shape)
to *storages*, once per compile, with their sizes as symbolic expressions of
the bounds: two values share a storage when their lifetimes do not overlap
(one is freed after statement `last`, the other allocated before statement
`first > last`) and the storage's size provably holds both. A run then
allocates one buffer per storage, at the largest size its values take for
the run's bounds, and each value's store is a zeroed view of it (NumPy), or
the previous value's device buffer, zeroed in place, when both have the same
shape and dtype (jax; XLA buffers cannot be reinterpreted).

The rule, in the order values are allocated (by `first`, then node):

* a free storage whose size is provably at least the value's is reused (the
  smallest such, by the order sizes are compared);
* else a free storage whose size is provably at most the value's is reused
  and grows to the value's size (`max` of two comparable sizes is the larger);
* else the value gets a new storage.

Sizes that cannot be compared (`64 * T` and `32 * I`) never share: the plan
holds for every value of the bounds, not only for the run at hand. Point
stores (values kept one by one), the inputs' copies (loaded from the user's
arrays, or the user's device arrays themselves) and stores whose per-point
shape varies with the point are not planned.

    plan = plan_memory(graph, plans, lifetimes(graph, tree, statements))
    plan.storages          # [Storage(index, size, values)], size: symbolic bytes
    plan.storage_of        # {(node, result): storage index}
    plan.bytes({"T": 100}) # the planned bytes for these bounds (sizes as planned,
                           # before the runtime rounds capacities)
    print(plan)            # one line per storage

`exe.memory_plan()` returns an executable's plan; `p.compile(dump=DIR)`
writes it as the `memory-plan` stage.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from tidal.symbolic import Const, Expr, evaluate, parse, provably_at_most, simplify, to_text

from .graph import Graph
from .lifetimes import Lifetime
from .storage import StorePlan

__all__ = ["MemoryPlan", "Storage", "plan_memory", "ITEMSIZE"]

ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8,
            "ui8": 1}


@dataclass
class Storage:
    index: int
    size: Expr                                   # bytes, symbolic in the bounds
    values: list[tuple[int, int]] = field(default_factory=list)   # (node, result), in allocation order
    free_after: int = -1                         # the last statement of its latest value

    def __str__(self) -> str:
        names = ", ".join(f"%{k}" + (f"#{r}" if r else "") for k, r in self.values)
        return f"storage {self.index}: {to_text(self.size)} bytes <- {names}"


@dataclass
class MemoryPlan:
    storages: list[Storage]
    storage_of: dict[tuple[int, int], int]
    sizes: dict[tuple[int, int], Expr]           # each planned value's own size (bytes)

    def bytes(self, bounds: dict) -> int:
        """The planned bytes of every storage together, for `bounds`."""
        return sum(int(evaluate(s.size, bounds)) for s in self.storages)

    def unplanned_bytes(self, bounds: dict) -> int:
        """What the planned values would take with a buffer each."""
        return sum(int(evaluate(e, bounds)) for e in self.sizes.values())

    def __str__(self) -> str:
        if not self.storages:
            return "no array stores to plan\n"
        return "".join(f"{s}\n" for s in self.storages)


def value_bytes(graph: Graph, plan: StorePlan, shape: list[str], dtype: str) -> Expr | None:
    """The symbolic bytes of a value's array store (None if not an array store
    of static per-point shape): ring axes keep K points, window axes 2W,
    block axes the bound."""
    if plan.kind == "point" or not plan.static_shape or dtype not in ITEMSIZE:
        return None
    node = graph.nodes[plan.node]
    factors = [Const(ITEMSIZE[dtype])]
    for a, d in zip(plan.axes, graph.dims_of(node)):
        factors.append(Const(a.size) if a.mode == "ring" else Const(2 * a.size) if a.mode == "window"
                       else parse(d.bound.name, dims=graph.dims))
    for text in shape:
        e = parse(text, dims=graph.dims)
        if any(s.role == "step" for s in e.free_symbols):
            return None
        factors.append(e)
    return simplify(math.prod(factors[1:], start=factors[0]))


def _at_most(a: Expr, b: Expr) -> bool:
    return provably_at_most(simplify(a - b), 0)


def plan_memory(graph: Graph, plans: dict[tuple[int, int], StorePlan],
                lives: dict[int, Lifetime]) -> MemoryPlan:
    """The storages of the array stores (see the module doc)."""
    values = []
    sizes: dict[tuple[int, int], Expr] = {}
    for (k, r), plan in plans.items():
        node = graph.nodes[k]
        if node.name in ("sdg.input", "sdg.output") or k not in lives:
            continue
        size = value_bytes(graph, plan, node.result_shapes[r], node.result_dtypes[r])
        if size is None:
            continue
        sizes[(k, r)] = size
        values.append((lives[k].first, k, r))
    storages: list[Storage] = []
    storage_of: dict[tuple[int, int], int] = {}
    for first, k, r in sorted(values):
        size = sizes[(k, r)]
        free = [s for s in storages if s.free_after < first]
        holds = [s for s in free if _at_most(size, s.size)]
        grows = [s for s in free if _at_most(s.size, size)]
        if holds:
            chosen = holds[0]
            for s in holds[1:]:
                if _at_most(s.size, chosen.size):
                    chosen = s
        elif grows:
            chosen = grows[0]
            chosen.size = size
        else:
            chosen = Storage(len(storages), size)
            storages.append(chosen)
        chosen.values.append((k, r))
        chosen.free_after = max(chosen.free_after, lives[k].last)
        storage_of[(k, r)] = chosen.index
    return MemoryPlan(storages, storage_of, sizes)
