"""Swapping under a device-memory budget: `p.compile(device_memory=...)`.

Before every launch, `Swapper.guard(k)` makes sure that the stores op k reads
and writes are on the device (swapping them in from the host if needed) and
that the stores on the device, plus one point of k's result, fit in the
budget: if not, it swaps out to the host the stores op k does not touch whose
next use is furthest in the future (Belady's choice), until they fit.

The future is known statically: the launches of the innermost loop body that
contains op k repeat in the order of the loop tree (isl's AST), so the
distance from op k to the next launch that touches store s is the number of
launches between them, going round the body (`next_uses`); a store the body
does not touch is not needed before the loop ends and goes first.

On the jax backend the device is XLA's buffers and the host is NumPy memory: a
store goes out as `numpy.asarray` of its arrays and comes back with
`jax.device_put` (on a GPU, a real device-to-host copy and back). Loops then
run in Python (an XLA loop keeps all its buffers on the device), so a budget
trades time for memory. Values are moved, never recomputed, so results are
identical with and without a budget. The memory report lists every swap.
"""
from __future__ import annotations

import numpy as np

from tidal.lowering.loop_ast import Exec, For, If

from .memory import store_bytes
from .stores import ArrayStore, Padded

__all__ = ["Swapper", "next_uses", "BudgetError"]

_FAR = 1 << 60


class BudgetError(MemoryError):
    pass


def _bodies(tree: list, out: list) -> None:
    """The launch sequences of every innermost loop body (and of the top level)."""
    own: list[int] = []

    def visit(stmts: list) -> None:
        for s in stmts:
            if isinstance(s, For):
                _bodies(s.body, out)
            elif isinstance(s, If):
                visit(s.then)
                visit(s.orelse)
            elif isinstance(s, Exec):
                own.append(s.node)
    visit(tree)
    if own:
        out.append(own)


def next_uses(tree: list, touches: dict[int, list[int]]) -> dict[int, dict[int, int]]:
    """{op k: {store owner s: launches from k to the next launch touching s}},
    cyclic within k's innermost loop body; owners absent are not touched there."""
    bodies: list[list[int]] = []
    _bodies(tree, bodies)
    out: dict[int, dict[int, int]] = {}
    for body in bodies:
        n = len(body)
        for p, k in enumerate(body):
            dist: dict[int, int] = {}
            for step in range(1, n + 1):
                for s in touches.get(body[(p + step) % n], ()):
                    dist.setdefault(s, step)
            out[k] = dist
    return out


def _to_host(value):
    if isinstance(value, Padded):
        return Padded(np.asarray(value.arr), value.n, value.axis)
    return np.asarray(value) if hasattr(value, "shape") else value


def _to_device(value):
    import jax
    if isinstance(value, Padded):
        return Padded(jax.device_put(value.arr), value.n, value.axis)
    return jax.device_put(value) if isinstance(value, np.ndarray) else value


class Swapper:
    """The guard of every launch under a budget (see the module docstring)."""

    def __init__(self, budget: int, touches: dict[int, list[int]], uses: dict[int, dict[int, int]],
                 reserve: dict[int, int], label):
        self.budget = budget
        self.touches = touches    # op -> the owners of the stores it reads or writes
        self.uses = uses          # next_uses
        self.reserve = reserve    # op -> bytes of one point of its result (a point store grows by it)
        self.label = label        # op -> "'%3 = sdg.matmul' at file:line"
        self.varying: dict = {}   # op -> fn(point) -> bytes of its result there (shapes varying per point)
        self.on_host: set[str] = set()

    def start(self, stores: dict, owner, tracker) -> None:
        """Every store starts on the host (created there, inputs loaded there)."""
        self.stores, self.owner, self.tracker = stores, owner, tracker
        self.on_host = set(stores)

    def added(self, keys) -> None:
        """Stores allocated late start on the host too."""
        self.on_host |= set(keys)

    def guard(self, k: int, *point) -> None:
        needed = set(self.touches.get(k, ()))
        keys = [key for key in self.stores if self.owner(key) in needed]
        coming = [key for key in keys if key in self.on_host]
        reserve = self.reserve.get(k, 0)
        if k in self.varying:         # a value whose shape depends on the point: its size there
            reserve += self.varying[k](point)
        device = self.tracker.device_bytes() + sum(store_bytes(self.stores[key]) for key in coming) + reserve
        if device > self.budget:      # make room first: out go the stores needed furthest ahead
            dist = self.uses.get(k, {})
            resident = [key for key in self.stores if key not in self.on_host and self.owner(key) not in needed]
            resident.sort(key=lambda key: (-dist.get(self.owner(key), _FAR), -store_bytes(self.stores[key])))
            for key in resident:
                if device <= self.budget:
                    break
                device -= store_bytes(self.stores[key])
                self._move(key, "out")
        if device > self.budget:
            held = sum(store_bytes(self.stores[key]) for key in keys) + reserve
            raise BudgetError(f"{self.label(k)} needs {held:,} bytes of stores on the device at once, more than "
                              f"the device_memory budget of {self.budget:,} bytes; compile with a larger "
                              f"device_memory (the memory report of a run without a budget shows each store)")
        for key in coming:
            self._move(key, "in")
        self.tracker.observe_device(device)

    def _move(self, key: str, direction: str) -> None:
        store = self.stores[key]
        convert = _to_host if direction == "out" else _to_device
        if isinstance(store, ArrayStore):
            store.buf = convert(store.buf)
        else:
            for slot, value in list(store.data.items()):
                store.data[slot] = convert(value)
        if direction == "out":
            self.on_host.add(key)
        else:
            self.on_host.discard(key)
        nbytes = store_bytes(store)
        if nbytes:                    # an empty store (a value not computed yet) moves nothing
            self.tracker.swap(key, direction, nbytes)


# -- wiring into a ScheduledProgram (program.py) -----------------------------------------------
def make_swapper(exe) -> Swapper:
    """The swapper of an executable compiled with `device_memory`: which stores
    each launch touches and when each is used next, from the graph and the loop tree."""
    graph = exe.graph
    statements = set(exe.statements)
    touches = {k: [k] + [e.source for e in graph.nodes[k].edges if e.source in statements] for k in statements}
    uses = next_uses(exe.sched.loop_tree(), touches)

    def label(k: int) -> str:
        node = graph.nodes[k]
        return f"'{node.label}' at {node.location}"
    return Swapper(exe.device_memory, touches, uses, {}, label)


def start_swapper(exe, bounds: dict) -> None:
    """Per run: the stores, and one point of each op's result (what its launch adds to a
    point store) at these bounds."""
    from .allocation import node_of

    allocator = exe.allocator
    layouts = allocator.layouts(bounds)
    reserve: dict[int, int] = {}
    for (k, _), plan, _, shape, dtype in layouts:
        if plan.kind == "point" and shape is not None:   # (a shape that varies per point: not known ahead)
            reserve[k] = reserve.get(k, 0) + int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    allocator.swapper.reserve = reserve
    allocator.swapper.varying = {k: _point_size(exe, k, bounds) for (k, r), plan, _, shape, _ in layouts
                                 if plan.kind == "point" and shape is None and exe.graph.nodes[k].name != "sdg.output"}
    allocator.swapper.start(allocator.live, node_of, allocator.memory)


def _point_size(exe, k: int, bounds: dict):
    """fn(point) -> the bytes node k's results take at `point` (a padded value at
    the capacity it is kept at, stores.kernel_bucket of its valid length)."""
    from tidal.symbolic import evaluate, parse

    from .opdecode import DTYPES
    from .stores import kernel_bucket

    node = exe.graph.nodes[k]
    padded = exe._gen.padded.get(k)
    results = [([parse(t) for t in node.result_shapes[r]], np.dtype(DTYPES[node.result_dtypes[r]]).itemsize)
               for r in range(len(node.result_shapes))]

    def size(point: tuple) -> int:
        env = dict(bounds)
        env.update(zip(node.domain, (int(c) for c in point)))
        total = 0
        for r, (exprs, itemsize) in enumerate(results):
            shape = [int(evaluate(e, env)) for e in exprs]
            if r == 0 and padded is not None and padded.out_axis is not None:
                shape[padded.out_axis] = kernel_bucket(shape[padded.out_axis])
            total += int(np.prod(shape, dtype=object)) * itemsize
        return total
    return size
