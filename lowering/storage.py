"""Choosing a tensor store for every value of a scheduled SDG (paper §6).

Each result of each node gets a `StorePlan`, one `AxisPlan` per dimension of
the node's domain:

* `ring` K: the coordinate is kept modulo K (only the K most recent points
  along that axis live), for point-accessed axes (`t`, `t - 1`, `0`);
* `window` W: a circular buffer of 2W slots with mirrored writes (slot
  `c mod W` and `c mod W + W`), so a contiguous window of up to W points is
  always one slice; for sliding windows (`max(0, t - 3):t + 1`, `t:min(t + 3, T)`);
* `block`: the coordinate indexes a buffer as large as the bound, for
  growing prefixes (`0:t + 1`), suffixes (`t:T`), whole ranges and the rest.

The store kind follows: `point` when every axis is `ring` or when the
per-point shape varies (values kept individually, slices stacked), `window`
when an axis is `window`, else `block` (one preallocated array).

Access patterns only suggest capacities; each plan is then *verified against
the schedule* with isl: no point may be overwritten (by a later point with the
same slot) before its last reader ran. If a capacity fails, it is enlarged a
few times and finally the axis becomes `block` (or unbounded for a point
store), which is always safe.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from tidal.symbolic import AccessPattern, classify, parse
from tidal.symbolic.isl_bridge import isl_name

from .polyhedral import statement_name
from .schedule import GraphSchedule

__all__ = ["AxisPlan", "StorePlan", "plan_storage", "is_safe"]

_POINTS = {AccessPattern.POINT, AccessPattern.CONSTANT}
_MAX_RING = 64


@dataclass
class AxisPlan:
    step: str
    mode: str                 # "ring" | "window" | "block"
    size: int | None = None   # K for ring, W for window

    def __str__(self) -> str:
        return f"{self.step}:{self.mode}" + (f"({self.size})" if self.size else "")


@dataclass
class StorePlan:
    node: int
    result: int
    kind: str                          # "point" | "block" | "window"
    axes: list[AxisPlan]
    static_shape: bool
    patterns: dict[str, list[str]] = field(default_factory=dict)
    # the physical order of an array store's buffer axes (domain axes, then the
    # value's axes): `layout[i]` is the logical axis that physical axis i holds;
    # None: the logical order (see `choose_layout`)
    layout: tuple[int, ...] | None = None

    def __str__(self) -> str:
        text = f"%{self.node}#{self.result}: {self.kind} [{', '.join(map(str, self.axes))}]"
        return text + (f" layout {list(self.layout)}" if self.layout else "")


def _accesses(sched: GraphSchedule, node: int, result: int) -> dict[str, list]:
    """Per axis (step name) of node's domain: the classified accesses of its readers."""
    graph = sched.graph
    dims = graph.dims_of(node)
    live = {(k, n) for k, n, _ in sched.validity}
    out: dict[str, list] = {d.step.name: [] for d in dims}
    for consumer in graph.nodes:
        for edge in consumer.edges:
            if edge.source != node or edge.result != result or (consumer.index, edge.number) not in live:
                continue
            for d, component in zip(dims, edge.dep):
                out[d.step.name].append(classify(component, d))
    return out


def _initial(accesses: list) -> AxisPlan | tuple:
    patterns = {a.pattern for a in accesses}
    if patterns <= _POINTS:  # start small: the isl check finds the least safe K
        return ("ring", 1)
    if AccessPattern.WINDOW in patterns and patterns <= _POINTS | {AccessPattern.WINDOW}:
        return ("window", max(a.window for a in accesses if a.pattern is AccessPattern.WINDOW))
    return ("block", None)


def _static(shape: list[str]) -> bool:
    return all(not parse(text).free_symbols for text in shape)


def _kind(axes: list[AxisPlan], static_shape: bool) -> str:
    if not static_shape or all(a.mode == "ring" for a in axes):
        return "point"
    return "window" if any(a.mode == "window" for a in axes) else "block"


def is_safe(sched: GraphSchedule, node: int, result: int, axes: list[AxisPlan]) -> bool:
    """True if, under the schedule, no point of (node, result) is overwritten by
    a later point with the same slot before every reader of it has run."""
    folded = [a for a in axes if a.mode in ("ring", "window")]
    if not folded:
        return True
    poly = sched.poly
    k = node
    name = statement_name(k)
    params = [isl_name(b) for b in sched.graph.bounds]
    prefix = "s"  # isl names of the steps, distinct from every parameter and from each other
    while any(p.startswith(prefix) or p.startswith("e_" + prefix) for p in params):
        prefix += "_"
    steps = [f"{prefix}{i}" for i in range(len(axes))]
    primed = [f"{s}__2" for s in steps]
    same = []
    for a, s, p in zip(axes, steps, primed):
        if a.mode == "block":
            same.append(f"{p} = {s}")
        else:
            same.append(f"exists (e_{s} : {p} = {s} + {a.size} * e_{s})")
    differ = " or ".join(f"{p} < {s} or {p} > {s}" for s, p in zip(steps, primed))
    text = (f"[{', '.join(params)}] -> {{ {name}[{', '.join(steps)}] -> {name}[{', '.join(primed)}] : "
            f"{' and '.join(same)} and ({differ}) }}")
    same_slot = isl.Map.read_from_str(poly.ctx, text).align_params(poly.params)
    domain = sched.domains[k]
    same_slot = same_slot.intersect_domain(domain).intersect_range(domain)
    theta = sched.schedule_map()
    theta_p = theta.intersect_domain(isl.UnionSet.from_set(domain))
    # times that tie (instances the schedule leaves unordered: the loops isl
    # generates order them anyhow) count as possibly after
    later = theta_p.lex_le_union_map(theta_p)                  # p -> p' written after p
    overwrite = isl.UnionMap.from_map(same_slot).intersect(later)
    readers = None
    for sink, number, m in sched.validity:
        edge = sched.graph.nodes[sink].edges[number]
        if edge.source != k or edge.result != result:
            continue
        um = isl.UnionMap.from_map(m.reverse())                # reader q -> p it reads
        readers = um if readers is None else readers.union(um)
    if readers is None:
        return True
    theta_q = theta.intersect_domain(readers.domain())
    q_after = theta_q.lex_ge_union_map(theta_p)               # q -> p' with p' before q
    bad = readers.apply_range(overwrite).intersect(q_after)
    return bool(bad.is_empty())


def _grow(size: int) -> int:
    return size + 1 if size < 4 else min(_MAX_RING, size * 2)


def _make_safe(sched: GraphSchedule, node: int, result: int, axes: list[AxisPlan]) -> None:
    """Enlarges capacities until `is_safe`: first one axis at a time
    (innermost first), then the innermost folded axis alone, which becomes
    `block` past `_MAX_RING` (all-block is always safe)."""
    while not is_safe(sched, node, result, axes):
        folded = [a for a in axes if a.mode in ("ring", "window")]
        if not folded:
            return
        for a in reversed(folded):
            if a.size < _MAX_RING:
                old, a.size = a.size, _grow(a.size)
                if is_safe(sched, node, result, axes):
                    return
                a.size = old
        a = folded[-1]
        if a.size < _MAX_RING:
            a.size = _grow(a.size)
        else:
            a.mode, a.size = "block", None


def _plan_one(sched: GraphSchedule, node: int, result: int) -> StorePlan:
    graph = sched.graph
    n = graph.nodes[node]
    static = _static(n.result_shapes[result])
    accesses = _accesses(sched, node, result)
    axes = []
    for step in n.domain:
        mode, size = _initial(accesses[step])
        if mode == "window" and (not static or any(a.mode == "window" for a in axes)):
            mode, size = "block", None
        axes.append(AxisPlan(step, mode, size))
    _make_safe(sched, node, result, axes)
    patterns = {s: sorted({a.pattern.value for a in accesses[s]}) for s in n.domain}
    plan = StorePlan(node, result, _kind(axes, static), axes, static, patterns)
    plan.layout = choose_layout(n, plan, len(n.result_shapes[result]))
    return plan


# Readers that slice an axis by a range that moves or grows with their own step
# (`k[0:t + 1]`, `k[max(0, t - W + 1):t + 1]`, `r[t:T]`): each reads the range
# anew, inside a loop over that step.
_STEPPED = {AccessPattern.PREFIX, AccessPattern.SUFFIX, AccessPattern.WINDOW}
# Nodes whose buffers come from outside or go to the caller as they are.
_EXTERNAL = ("sdg.input", "sdg.param", "sdg.constant", "sdg.output")


def choose_layout(node, plan: StorePlan, rank: int) -> tuple[int, ...] | None:
    """The physical axis order of an array store, chosen from its readers.

    A value of shape (B, H, hd) over a step t that readers slice by moving or
    growing ranges (the K/V cache of attention: `k[0:t + 1]` contracted with a
    query over hd, batched over B and H) is kept as (B, H, T, hd), not
    (T, B, H, hd): each read is then B*H contiguous (n, hd) matrices, the
    layout a batched matmul reads without a transpose (on XLA CPU a
    time-major cache costs a transposing copy of the slice at every step:
    attention over 2048 keys, 4 layers of 4 heads of 64, batch 4, took 8.0 ms
    a step time-major and 3.9 ms so, measured). Point reads (`k[t]`) of such
    a buffer read B*H rows of hd, no worse.

    Applies to block and window stores of static rank >= 2 values with one
    such sliced axis, every other domain axis read at points, produced by the
    program (not inputs, params, constants or outputs, whose buffers are the
    caller's). Readers that take the whole range at once (a vectorized op's
    x[0:T]) keep the logical order: they contract or map over t as a leading
    axis."""
    if plan.kind not in ("block", "window") or rank < 2 or node.name in _EXTERNAL:
        return None
    d = len(plan.axes)
    sliced = []
    for i, a in enumerate(plan.axes):
        kinds = {AccessPattern(p) for p in plan.patterns.get(a.step, [])}
        if kinds & _STEPPED and kinds <= _STEPPED | _POINTS and a.mode in ("block", "window"):
            sliced.append(i)
        elif not kinds <= _POINTS:
            return None
    if len(sliced) != 1:
        return None
    values = list(range(d, d + rank))
    return tuple([i for i in range(d) if i != sliced[0]] + values[:-1] + sliced + values[-1:])


def plan_storage(sched: GraphSchedule) -> dict[tuple[int, int], StorePlan]:
    """A verified store plan for every result of every scheduled node."""
    plans = {}
    for k in sched.statements():
        node = sched.graph.nodes[k]
        for r in range(len(node.result_shapes)):
            plans[(k, r)] = _plan_one(sched, k, r)
    return plans
