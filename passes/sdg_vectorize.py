"""sdg-vectorize: compute ops over a temporal dim for all its points at once
(temporal -> spatial, TEMPO section 5.1).

An op over a domain with a dim d (say t < T) runs once per point of t. When
nothing needs it before all its points are done, the T runs can be one run
over a leading spatial axis of size T: the op leaves d's domain and its
result gets the shape (T, ...). That is what makes a learner's backward pass
over an episode one batched computation after the episode instead of T small
ones inside the episode's loop.

The pass vectorizes the largest set of ops over d such that, for every op in
the set:

* its kind has a batched form (elementwise ops, casts, reductions, scans,
  matmuls, permutes, reshapes, expands, (un)squeezes, flips, slices, takes at
  an index that does not use d, concats and pads);
* it is not on a cycle (a recurrence over d cannot be run for all points at
  once: its points depend on each other);
* it reads every operand at d's identity (`x[i, t]`) or from a producer
  without d, and no shape it reads or makes varies with d; or, with option
  `windows` (default on), it reads a window whose size varies with d within a
  constant bound (n-step returns `r[i, t:min(t + n, T)]`, a sliding window
  `x[max(t - 2, 0):t + 1]`) and its varying sizes have such bounds: it is
  batched at that capacity, the window gathered, the padding masked with the
  identity of the ops that combine it (vectorize_windows.py);
* every op outside the set that reads it reads all of d at once (`v[i, 0:T]`,
  typically the sum over t of a gradient). So each reader outside waited for
  every point anyway: the batched op runs when its last operand point is
  ready, which delays nothing that reads it (the cost model of this pass);
* or reads one point of it (`v[i, t]`, `v[i, T - 1]`) from a backward
  recurrence over d (GAE: `adv[t] = delta[t] + c * adv[t + 1]`), whose loop
  starts at d's last point, provided no backward recurrence feeds the op
  (its operands' last points then come last): that loop could not start
  before the batched op anyway. The read becomes a `take 0 at <t>` of the
  batched value (PPO's critic runs once over the episode, not twice per step);
* or, for a value computed by a matmul over d (`x[t] @ U + b`) that a
  recurrence over d reads at `v[t]` (and its start at a fixed point), whose
  operands are all ready before d's loop (inputs and ops this pass batches,
  nothing on or after a cycle over d): option `early`
  (default on). It runs once before the loop, which it delays by nothing,
  and the loop takes row t: an RNN's input projection `x[t] @ U` is one
  matrix product instead of T vector-matrix products inside the recurrence.

Operands from outside the set that vary with d are read as whole blocks
(`x[i, 0:T]`); operands without d are unchanged (they broadcast against the
leading axis). The readers outside read the vectorized value at their other
components (`v'[i]`). Refused (left as they are): merges (cases of
recurrences), islands, UDFs, random draws, sources (but an iota or full of a
varying shape, a symbol_value of d), outputs, index_select,
gather, scatter_add, argsort, matmuls whose batched form would contract
the wrong axes (a batched vector on the right), and ops over values that
may lack some points: a merge with no value near d's ends (a case
`x[t - 1] if <true>` with no case for t = 0) and what reads it over d: the
batched op would need every point.

Before (the gradient of a weight used at every step, w over i, h and g over (i, t)):

    %o = sdg.matmul %hT[i, t], %g[i, t] domain [i, t] : (...[4, 64]..., ...[64, 2]...) -> [4, 2]
    %s = sdg.reduce sum [0] %o[i, 0:T] domain [i] : (...[4, 2]...) -> [4, 2]

After `sdg-vectorize`:

    %o = sdg.matmul %hT[i, 0:T], %g[i, 0:T] domain [i] : (...[4, 64]..., ...[64, 2]...) -> [T, 4, 2]
    %s = sdg.reduce sum [0] %o[i] domain [i] : (...[T, 4, 2]...) -> [4, 2]

The memory limit (option `max-block-bytes`, with `assume-bound` for the
bounds): an op whose batched result, or an operand over the step it would
read as a whole block, would have at least that many bytes stays per step
(and, through the rule on readers above, so does what it needs over the
step). Batching trades memory for speed: a learner over an episode of large
observations (TEMPO section 7.4) would keep every observation and a
(T, in, out) block of per-step weight gradients. Left per step, with the
sums over t carried by sdg-accumulate, it runs as soon as its operands
exist: n-step returns let it run n - 1 steps behind the acting, and only
the last n observations live. The default, 256 MiB at a bound of 1024,
leaves ordinary programs batched; 0 is no limit.

Option `dims`: the steps to vectorize, comma-separated (default: every step
of each graph, innermost first); `windows` and `early` switch those two
forms off.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects.op_properties import ops_with
from tidal.dialects.attrs import expr_attr, expr_text, index_attr, is_tensor_type, \
    tensor_element_type, tensor_shape, tensor_type
from tidal.symbolic import Const, SymbolicError, parse, simplify

from .base import ModulePass, PassFailure, graph_steps, option
from .sdg_build import mentions as _mentions, value_bytes
from .sccs import strongly_connected
from .sdg_graph_view import View, branches_at, cycles_over, operand_deps, step_offset, stop_condition_ops
from .transform_utils import read_type
from .vectorize_early import early_point
from .vectorize_windows import gather_window, mask_combined, padded_ok, static_shape, step_values, \
    varying_axes, window

__all__ = ["SdgVectorize"]

ELEMENTWISE = ops_with("elementwise")
# ops whose i64 `dim` attribute names an axis of the per-point value (shifted by the new axis);
# sorts and gathers have no batching rule here
AXIS_OPS = ops_with("axis") - ops_with("source") - {"sdg.argsort", "sdg.index_select", "sdg.gather",
                                                    "sdg.scatter_add"}
STEP_ATTRS = ("start", "before", "after")    # symbolic attributes that must not vary with the step
VECTORIZABLE = ELEMENTWISE | AXIS_OPS | {"sdg.reduce", "sdg.matmul", "sdg.permute", "sdg.reshape",
                                         "sdg.expand"}
# batched only where their shape (a window's iota) or value (a window's size, for a mean) varies with the step
SOURCES = {"sdg.iota", "sdg.full", "sdg.symbol_value"}


def _read_rank(o: ir.Operation, i: int) -> int:
    """The rank of operand i as the op reads it (one leading axis per slice component)."""
    return len(tensor_shape(read_type(o.operands[i], tuple(operand_deps(o)[i]))))


class _Plan:
    """The ops over one step to vectorize (see the module doc)."""

    def __init__(self, g: View, step: str, windows: bool = True, early: bool = True, max_block: int = 0,
                 assume: int = 1024):
        self.g, self.step, self.windows, self.early = g, step, windows, early
        self.max_block, self.assume = max_block, assume
        self.bound = g.bounds[g.steps.index(step)]
        self.cyclic, self.backward, self.recurrent = cycles_over(g, step)
        self._unsafe: set[int] | None = None
        self._partial_ops: set[int] | None = None
        self._early: dict[int, str | None] = {}   # vectorize_early.early_ready
        self._after_cycles: set[int] | None = None
        self.gathers: dict = {}   # the windows gathered so far (vectorize_windows.gather_window)
        self._shape_cache: dict[int, list[list[str]]] = {}
        kept = stop_condition_ops(g, step)      # computed before a stop is known: never over all of the step
        chosen = {k for k in range(len(g.ops)) if k not in self.cyclic and k not in kept and self._candidate(k)}
        changed = True
        while changed:   # drop ops read by someone outside other than through the whole range
            changed = False
            for k in sorted(chosen):
                # a vectorized producer read through another slice would put T after that axis
                # (a window is gathered instead); a value of varying shape has no block form
                inside = any(src in chosen and any(":" in c for c in dep) and self.window_of(src, dep) is None
                             for src, dep in g.reads[k]) or \
                    any(self.batched(src) and src not in chosen and varying and self.window_of(src, dep) is None
                        for (src, dep), varying in zip(g.reads[k], self.varying(k)))
                if inside or not all(r in chosen or self._whole_range(k, r, i) or self.point_read(k, r, i)
                                     for r, i in g.readers[k]):
                    chosen.discard(k)
                    changed = True
        self.chosen = chosen

    def _component(self, src: int, dep: list[str]) -> str | None:
        dom = self.g.domain[src]
        return dep[dom.index(self.step)] if self.step in dom and len(dep) == len(dom) else None

    def batched(self, src: int | None) -> bool:
        return src is not None and self.step in self.g.domain[src]

    def _candidate(self, k: int) -> bool:
        g, o, step = self.g, self.g.ops[k], self.step
        if o.name not in VECTORIZABLE | SOURCES or step not in g.domain[k] or len(o.results) != 1 or len(o.regions):
            return False
        types = [v.type for v in list(o.operands) + list(o.results)]
        if not all(is_tensor_type(t) for t in types):
            return False
        if any(self.varying(k)) and not (self.windows and self._padded_ok(k)):
            return False
        if self.max_block and self._block_bytes(k) >= self.max_block:
            return False
        if o.name in SOURCES and not any(self.varying(k)) and \
                not (o.name == "sdg.symbol_value" and _mentions(expr_text(o.attributes["expr"]), step)):
            return False
        for src, dep in g.reads[k]:
            if src is None:
                return False
            own = self._component(src, dep)
            if self.batched(src) and src in self._partial():
                return False   # the batched op would need every point of src, some of which it lacks
            others = [c for j, c in enumerate(dep) if own is None or j != g.domain[src].index(step)]
            if (self.batched(src) and own != step and self.window_of(src, dep) is None) or \
                    any(_mentions(c, step) for c in others):
                return False
            if self.batched(src) and any(":" in c for c in dep[:g.domain[src].index(step)]):
                return False   # the block read would put T after that slice's axis
        if any(a in o.attributes and _mentions(expr_text(o.attributes[a]), step) for a in STEP_ATTRS):
            return False   # a slice start or padding that varies with the step: no one batched op
        if o.name == "sdg.take" and _mentions(expr_text(o.attributes["index"]), step) and not self._gather_all(k):
            return False
        if o.name == "sdg.concat" and not all(self.batched(s) for s, _ in g.reads[k]):
            return False
        if o.name == "sdg.matmul":
            (a, _), (b, _) = g.reads[k]
            ra, rb = _read_rank(o, 0), _read_rank(o, 1)
            ok = {(True, False): True, (False, True): rb >= 2, (True, True): ra >= 2 and rb >= 2}
            return ok.get((self.batched(a), self.batched(b)), False)
        return True

    def _partial(self) -> set[int]:
        """The ops over the step that may lack a value at some point: merges that
        are not total (_merge_total) and every op over the step downstream of one
        (a read at t of a value missing at t = 0 is missing there too; through
        merges as well, whose cases are not checked against it)."""
        if self._partial_ops is None:
            g, step = self.g, self.step
            seen = {k for k in range(len(g.ops)) if not self._merge_total(k)}
            todo = list(seen)
            while todo:
                u = todo.pop()
                for r, _ in g.readers[u]:
                    if r not in seen and step in g.domain[r]:
                        seen.add(r)
                        todo.append(r)
            self._partial_ops = seen
        return self._partial_ops

    def _merge_total(self, src: int) -> bool:
        """False for a merge over the step that may have no computable value at a
        point near the step's ends: a branch that can hold there reads its source
        at `t + c` outside 0..T-1 (`x[t - 1] if <true>` at t = 0, a case of
        `x[t - 1]` that sdg-restrict-merges left without its base case). Only
        the points a reader needs are computed per point; the batched reader of
        `src[0:T]` would need them all. True for every other op."""
        g, step = self.g, self.step
        o = g.ops[src]
        if o.name != "sdg.merge" or "conds" not in o.attributes or step not in g.domain[src]:
            return True
        pos, offsets = g.domain[src].index(step), []
        for source, dep in g.reads[src]:
            if source is not None and step in g.domain[source]:
                own = dep[g.domain[source].index(step)]
                c = step_offset(own, step)
                if c is None and _mentions(own, step):
                    return False   # a read of the step that is no shift: not decided here
                offsets.append(c or 0)
        low, high = -min(offsets + [0]), max(offsets + [0])
        if low > 8 or high > 8:
            return False
        ident = list(g.domain[src])
        for p in [str(j) for j in range(low)] + [f"{self.bound} - {j + 1}" for j in range(high)]:
            point = ident[:pos] + [p] + ident[pos + 1:]
            branches = branches_at(o, point)
            if branches is None:
                return False
            for j, _, dep in branches:
                source = g.reads[src][j][0]
                if source is None or step not in g.domain[source]:
                    continue
                try:
                    at = parse(dep[g.domain[source].index(step)])
                    c, over = simplify(at), simplify(at - parse(self.bound))
                except SymbolicError:
                    return False
                if (isinstance(c, Const) and c.value < 0) or (isinstance(over, Const) and over.value >= 0):
                    return False
        return True

    def _block_bytes(self, k: int) -> int:
        """The largest block that batching op k would make or read: its result, or an
        operand over the step, for all points of the step (every bound at `assume`)."""
        o, shapes = self.g.ops[k], self._shapes(k)
        over = [self.batched(src) for src, _ in self.g.reads[k]] + [True]
        elems = [tensor_element_type(v.type) for v in list(o.operands) + list(o.results)]
        return max((value_bytes(tensor_type([self.bound] + shape, elem, o.context), self.assume)
                    for shape, elem, batched in zip(shapes, elems, over) if batched), default=0)

    def _shapes(self, k: int) -> list[list[str]]:
        """The shapes of op k's operands as it reads them, then of its result (kept:
        the fixpoint above asks for them once per reader and round)."""
        if k not in self._shape_cache:
            o = self.g.ops[k]
            self._shape_cache[k] = [tensor_shape(read_type(v, tuple(d))) for v, d in zip(o.operands, operand_deps(o))] \
                + [tensor_shape(o.results[0].type)]
        return self._shape_cache[k]

    def varying(self, k: int) -> list[list[int]]:
        """The axes whose size varies with the step: of each operand as op k reads it, then of its result."""
        return [varying_axes(s, self.step) for s in self._shapes(k)]

    def window_of(self, src: int, dep: list[str]) -> tuple[str, str, int] | None:
        """(start, size, capacity) of a window read `x[i, t:min(t + n, T)]` of a value
        over the step whose own shape is static, the window its only slice."""
        own = self._component(src, dep)
        if not self.windows or own is None or sum(":" in c for c in dep) != 1 or \
                varying_axes(tensor_shape(self.g.ops[src].results[0].type), self.step):
            return None
        return window(own, self.step)

    def _padded_ok(self, k: int) -> bool:
        shapes = self._shapes(k)
        return padded_ok(self.g.ops[k], shapes[:-1], shapes[-1], self.step)

    def _gather_all(self, k: int) -> bool:
        """A `take 0 at <d>` of a value without d whose axis 0 has d's bound: for
        all points of d it takes the whole value (a lifted scan read at d)."""
        o, (src, dep) = self.g.ops[k], self.g.reads[k][0]
        if self.batched(src) or ir.IntegerAttr(o.attributes["dim"]).value != 0 or any(c.count(":") > 1 for c in dep):
            return False
        try:
            index = parse(expr_text(o.attributes["index"])).same(parse(self.step))
            shape = tensor_shape(read_type(o.operands[0], tuple(dep)))
            return index and bool(shape) and parse(shape[0]).same(parse(self.bound))
        except SymbolicError:
            return False

    def point_read(self, src: int, reader: int, operand: int) -> bool:
        """Whether `reader` may read one point of the batched `src` (a `take` of it):
        from a backward recurrence (late_point), or from anywhere when every
        point of `src` is ready before the step's loop starts (early_point)."""
        return self.late_point(src, reader, operand) or early_point(self, src, reader, operand)

    def late_point(self, src: int, reader: int, operand: int) -> bool:
        """Whether `reader` reads one point of `src` (`v[i, t]`, `v[i, T - 1]`) from a
        backward recurrence over the step (cycles_over) and `src`'s points come
        last at the step's last point (_upstream_safe). Such a loop starts at
        the step's last point, so the batched op, ready with its last operand
        point, delays nothing: GAE reads the critic's values at t after the episode."""
        g, step = self.g, self.step
        if reader not in self.backward or g.ops[reader].name == "sdg.output" or self.varying(src)[-1]:
            return False
        dep = g.reads[reader][operand][1]
        own = self._component(src, dep)
        if own is None or ":" in own or (_mentions(own, step) and step_offset(own, step) != 0):
            return False   # a point t + c could fall outside 0..T-1 where its case does not hold
        pos = g.domain[src].index(step)
        others = [c for j, c in enumerate(dep) if j != pos]
        return not any(":" in c or _mentions(c, step) for c in others) and self._upstream_safe(src)

    def _upstream_safe(self, k: int) -> bool:
        """Whether op k's points are all computable and come in order: nothing
        upstream of it (through ops other than merges) is a backward recurrence
        over the step, whose last point would come first, or reads a value at
        another point of the step (`x[t + 1]`: undefined at the last point). The
        batched op computes every point; a late reader may need only some (the
        backward pass of an RNN reads `1 - h[t + 1]^2` for t < T - 1 only).
        Merges start over: their cases say where each read holds."""
        if self._unsafe is None:
            g, step = self.g, self.step
            seeds = set(self.backward)
            for j, reads in enumerate(g.reads):
                if step in g.domain[j] and g.ops[j].name != "sdg.merge":
                    for src, dep in reads:
                        own = self._component(src, dep) if self.batched(src) else None
                        if own is not None and own != step and _mentions(own, step):
                            seeds.add(j)
            seen, todo = set(seeds), list(seeds)
            while todo:
                u = todo.pop()
                if g.ops[u].name == "sdg.merge" and u not in self.backward:
                    continue
                for r, _ in g.readers[u]:
                    if r not in seen and step in g.domain[r]:
                        seen.add(r)
                        todo.append(r)
            self._unsafe = seen
        return k not in self._unsafe

    def _whole_range(self, src: int, reader: int, operand: int) -> bool:
        """Whether `reader` reads `src` over all of the step (`[..., 0:T, ...]`)."""
        dep = self.g.reads[reader][operand][1]
        own = self._component(src, dep)
        if own is None or self.g.ops[reader].name == "sdg.output" or self.varying(src)[-1]:
            return False
        try:
            whole = own.count(":") == 1 and parse(own.split(":")[0]).same(parse("0")) \
                and parse(own.split(":")[1]).same(parse(self.bound))
        except SymbolicError:
            return False
        pos = self.g.domain[src].index(self.step)
        others = [c for j, c in enumerate(dep) if j != pos]
        # a slice after ours would read its axis before T once ours is the value's leading axis
        return whole and not any(_mentions(c, self.step) for c in others) \
            and not any(":" in c for c in dep[pos + 1:])


@dataclass
class SdgVectorize(ModulePass):
    """Vectorizes ops over temporal dims whose readers need all points (see the module doc)."""

    name: ClassVar[str] = "sdg-vectorize"
    summary: ClassVar[str] = ("Compute ops over a temporal dim for all its points at once, as a leading "
                              "spatial axis, where every outside reader needs the whole range")
    dims: str = option("", "steps to vectorize, comma-separated (default: every step, innermost first)")
    windows: bool = option(True, "batch ops over bounded windows (r[t:min(t + n, T)]) at their capacity, "
                                 "padded and masked (vectorize_windows)")
    early: bool = option(True, "batch matmuls of values ready before a recurrence's loop (an RNN's input "
                               "projection x[t] @ U) and read their rows in the loop")
    max_block_bytes: int = option(1 << 28, "batch no op whose result or operand over all points of the step "
                                           "would have this many bytes (0: no limit)")
    assume_bound: int = option(1024, "the value of every bound when block sizes are estimated")

    def run(self, op: ir.Operation) -> None:
        self.num_vectorized = 0   # for tests and callers
        for graph, step in graph_steps(op, self.dims, self.name, innermost_first=True):
            plan = _Plan(View(graph), step, bool(self.windows), bool(self.early), max(0, self.max_block_bytes),
                         self.assume_bound)
            if plan.chosen:
                _rewrite(plan)
                self.num_vectorized += len(plan.chosen)


def _rewrite(plan: _Plan) -> None:
    g, step = plan.g, plan.step
    order = _producers_first(plan)
    new: dict[int, ir.Value] = {}
    for k in order:
        new[k] = _vectorized(plan, k, new)
    for k in order:   # readers outside: read the vectorized value at their other components
        for r, i in g.readers[k]:
            if r in plan.chosen:
                continue
            reader = g.ops[r]
            deps = list(ir.ArrayAttr(reader.attributes["deps"]))
            comps = g.reads[r][i][1]
            pos = g.domain[k].index(step)
            value, dep = new[k], comps[:pos] + comps[pos + 1:]
            if plan.point_read(k, r, i):   # one point: a take of the batched value, before the reader
                value, dep = _point_take(value, dep, comps[pos], g.ops[k].results[0].type, reader,
                                         g.domain[r], step)
            reader.operands[i] = value
            deps[i] = index_attr(dep, reader.context)
            reader.attributes["deps"] = ir.ArrayAttr.get(deps, reader.context)
    for k in reversed(order):   # readers before what they read
        if list(g.ops[k].results[0].uses):   # erasing a used op would abort (LLVM assertions)
            raise PassFailure("internal error in sdg-vectorize: a vectorized op is still read", g.ops[k])
        g.ops[k].erase()


def _producers_first(plan: _Plan) -> list[int]:
    g, chosen = plan.g, plan.chosen
    comps = strongly_connected(len(g.ops), lambda k: [s for s, _ in g.reads[k] if s in chosen])
    return [k for c in comps for k in c if k in chosen]


def _vectorized(plan: _Plan, k: int, new: dict[int, ir.Value]) -> ir.Value:
    """The batched form of op k (created before it), reading vectorized producers in `new`."""
    g, step, bound = plan.g, plan.step, plan.bound
    o = g.ops[k]
    ctx = o.context
    shape = tensor_shape(o.results[0].type)
    elem = tensor_element_type(o.results[0].type)
    result_type = tensor_type([bound] + static_shape(shape, step), elem, ctx)
    domain = [d for d in g.domain[k] if d != step]
    if o.name == "sdg.take" and plan.batched(k) and _mentions(expr_text(o.attributes["index"]), step):
        return _whole_take(o, g.reads[k][0][1], domain, result_type)   # (_gather_all)
    if o.name == "sdg.symbol_value":
        return step_values(o, expr_text(o.attributes["expr"]), step, bound, domain, elem)
    with ctx, o.location, ir.InsertionPoint(o):
        operands, deps = [], []
        for i, (src, dep) in enumerate(g.reads[k]):
            value = o.operands[i]
            read = read_type(o.operands[i], tuple(dep))
            if plan.batched(src):
                pos = g.domain[src].index(step)
                win = plan.window_of(src, dep)
                if src in new:
                    value, dep = new[src], dep[:pos] + dep[pos + 1:]
                else:
                    dep = dep[:pos] + [f"0:{bound}"] + dep[pos + 1:]
                if win is not None:   # (T, capacity, ...): rows start(t) + j of the whole value
                    value, dep = gather_window(o, value, dep, domain, win[0], win[2], bound, step, plan.gathers), domain
                missing = 0
                if o.name in ELEMENTWISE | {"sdg.expand"}:   # align ranks: (T, 1, ..., shape)
                    missing = len(shape) - len(tensor_shape(read))
                elif o.name == "sdg.matmul" and all(plan.batched(s) for s, _ in g.reads[k]):
                    # align the batch axes: both lead with T, and NumPy/XLA match the
                    # others from the right (a (T, 3, 1) @ (1, 3) vectorized again over
                    # i is (I, T, 3, 1) @ (I, 1, 1, 3), not @ (I, 1, 3))
                    missing = max(_read_rank(o, 0), _read_rank(o, 1)) - _read_rank(o, i)
                if missing > 0:
                    padded = tensor_type(static_shape(tensor_shape(read), step), tensor_element_type(read), ctx)
                    value, dep = _unsqueezed(value, dep, domain, missing, bound, padded)
            value, dep = mask_combined(o, i, value, dep, domain, tensor_shape(read), bound, step, plan.gathers)
            operands.append(value)
            deps.append(index_attr(dep, ctx))
        attrs = {o.attributes[j].name: o.attributes[j].attr for j in range(len(o.attributes))}
        attrs["domain"] = index_attr(domain, ctx)
        if o.operands:
            attrs["deps"] = ir.ArrayAttr.get(deps)
        _shift_axes(o, attrs, shape)
        return ir.Operation.create(o.name, results=[result_type], operands=operands, attributes=attrs).results[0]


def _point_take(value: ir.Value, dep: list[str], index: str, per_point: ir.Type, reader: ir.Operation,
                reader_domain: tuple, step: str) -> tuple[ir.Value, list[str]]:
    """`take 0 at <index>` of a batched value read at `dep`, just before `reader`, over
    the reader's domain (without the step if the index does not use it); the
    value and the components the reader reads it at."""
    ctx = reader.context
    domain = [d for d in reader_domain if d != step or _mentions(index, step)]
    with ctx, reader.location, ir.InsertionPoint(reader):
        attrs = {"dim": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0), "index": expr_attr(index, ctx),
                 "deps": ir.ArrayAttr.get([index_attr(dep, ctx)]), "domain": index_attr(domain, ctx)}
        take = ir.Operation.create("sdg.take", results=[per_point], operands=[value], attributes=attrs)
    return take.results[0], domain


def _whole_take(o: ir.Operation, dep: list[str], domain: list[str], result_type: ir.Type) -> ir.Value:
    """`take 0 at <d>` for every d of a value whose axis 0 has d's bound: the value
    itself if read at the identity of the new domain, else an `sdg.slice` of all of it."""
    if list(dep) == list(domain):
        return o.operands[0]
    ctx = o.context
    with ctx, o.location, ir.InsertionPoint(o):
        attrs = {"dim": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0), "start": expr_attr("0", ctx),
                 "deps": ir.ArrayAttr.get([index_attr(dep, ctx)]), "domain": index_attr(domain, ctx)}
        return ir.Operation.create("sdg.slice", results=[result_type], operands=[o.operands[0]],
                                   attributes=attrs).results[0]


def _unsqueezed(value: ir.Value, dep: list[str], domain: list[str], missing: int, bound: str,
                per_point: ir.Type):
    """A batched operand (T, *s) of an op whose per-point rank exceeds s's by `missing`,
    as (T, 1, ..., 1, *s) so that it broadcasts as s did (right-aligned)."""
    if missing <= 0:
        return value, dep
    shape = [bound] + tensor_shape(per_point)
    ctx = value.context
    for _ in range(missing):
        shape = shape[:1] + ["1"] + shape[1:]
        op = ir.Operation.create(
            "sdg.unsqueeze", results=[tensor_type(shape, tensor_element_type(per_point), ctx)],
            operands=[value], attributes={"dim": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1),
                                          "deps": ir.ArrayAttr.get([index_attr(dep, ctx)]),
                                          "domain": index_attr(domain, ctx)})
        value, dep = op.results[0], list(domain)
    return value, dep


def _shift_axes(o: ir.Operation, attrs: dict, shape: list[str]) -> None:
    """Per-point axis attributes -> the batched value's (one leading axis more)."""
    i64 = ir.IntegerType.get_signless(64)
    if o.name == "sdg.iota":
        attrs["dim"] = ir.IntegerAttr.get(i64, ir.IntegerAttr(attrs["dim"]).value + 1)
    elif o.name in AXIS_OPS:
        rank = len(shape) if o.name == "sdg.unsqueeze" else _read_rank(o, 0)
        d = ir.IntegerAttr(attrs["dim"]).value
        attrs["dim"] = ir.IntegerAttr.get(i64, (d % rank if rank else d) + 1)
    elif o.name == "sdg.reduce":
        rank = _read_rank(o, 0)
        dims = ir.DenseI64ArrayAttr(attrs["dims"])
        attrs["dims"] = ir.DenseI64ArrayAttr.get([d % rank + 1 for d in dims])
    elif o.name == "sdg.permute":
        attrs["perm"] = ir.DenseI64ArrayAttr.get([0] + [p + 1 for p in ir.DenseI64ArrayAttr(attrs["perm"])])
