"""sdg-lift-recurrence: a first-order linear recurrence over a temporal dim
becomes one linear scan over the whole dim (TEMPO section 4.1, lifting).

GAE's advantages, discounted returns and running sums are recurrences:

    adv[t] = delta[t] + c[t] * adv[t + 1]        adv[T - 1] = delta[T - 1]
    s[t]   = s[t - 1] + f[t]                     s[0] = s0

Run point by point they are a loop over t that carries one value; the loop
can only run in order (for a backward one, after the last step exists), and
every op that feeds it stays a per-step op inside it. The same values are
`linear_scan(a, b)` over the whole range (`y[k] = b[k] + a[k] * y[k -/+ 1]`;
a sequential scan on CPU, an associative one, O(log T) depth, elsewhere), read
at t with `take 0 at <t>`. What
feeds the recurrence is then read over the whole range, which lets
sdg-vectorize batch it when nothing else ties it to a loop.

The pass rewrites a merge M over a domain with step d < D when:
* it has two cases: a base `d == D - 1` (a backward recurrence, reading
  M[.., d + 1]) or `d == 0` (a forward one, reading M[.., d - 1]), then `true`;
* the `true` case reads, at the identity, an `add` of b and r, in either
  order, where r is M read one step on (`M[.., d + 1]` backward, `d - 1`
  forward: a = 1) or an op `mul` of a and that read (in either order), read at
  the identity and over M's domain;
* M, that add and that mul are a strongly connected component of the graph
  on their own (a and b do not depend on M: the recurrence is linear), and
  no other op reads the add or the mul;
* a and b are read at the identity of the step or do not depend on it, in
  M's floating-point element type, and broadcast to M's per-point shape,
  which does not vary with d.

The scan reads b where the recurrence used it: backward b[0:D - 1] then the
base, forward the base then b[1:D] (a concat of the two; when the base is b
at the boundary point, b[0:D] in one read, which lets sdg-vectorize batch b);
a likewise, with a zero row where the scan never uses it (pad). A value
without d is broadcast along the new axis (expand).

Refused (left as they are): merges with other cases (Adam's step count over
(i, k)), nonlinear recurrences (a `where` over the step: an episode counter
reset at done; a product of M with itself), recurrences whose operands depend
on M through another op (the environment's state), steps more than one apart,
and integer recurrences (the scan is for floats).

Not in the default pipeline (ask for it: `p.compile(passes=DEFAULT_SDG_PASSES
+ ...)`, `tidal-opt --sdg-lift-recurrence`). On PPO (bench/rl.py) it lifts GAE,
and isl then schedules the K epochs of each iteration as one loop of 23
guarded phases per epoch instead of a loop over epochs: 85 -> 520 ms per
iteration on the 2-core CPU, measured. The rewrite is right; the scheduler's
answer to the changed graph is what costs. With sdg-restrict-merges (stop 34)
that schedule is gone, and with the sequential scan on CPU the lifted PPO runs
at the default's speed (68 against 66 ms per iteration, one process): no gain.

Cost: the scan waits for every point of a and b. For a backward recurrence
that costs nothing (its first point needs the last step anyway); for a
forward one its readers run after the whole range instead of along it,
which the SCC condition keeps free of deadlock (nothing that feeds the
recurrence reads it).

Before (GAE, per iteration i, over steps t < T):

    %adv = sdg.merge %delta[i, T - 1] if <t eq T - 1>, %n[i, t] if <true> domain [i, t] : ...
    %r = sdg.binary mul %c[i, t], %adv[i, t + 1] domain [i, t] : ...
    %n = sdg.binary add %delta[i, t], %r[i, t] domain [i, t] : ...

After `sdg-lift-recurrence`:

    %a = sdg.pad 0 <0> <1> value 0.0 %c[i, 0:T - 1] domain [i] : (...) -> !tidal.tensor<[T, 64], f32>
    %y = sdg.linear_scan 0 reverse %a[i], %delta[i, 0:T] domain [i] : (...) -> !tidal.tensor<[T, 64], f32>
    %adv = sdg.take 0 at <t> %y[i] domain [i, t] : (...) -> !tidal.tensor<[64], f32>

Option `dims`: the steps to lift over, comma-separated (default: every step).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects.attrs import expr_attr, expr_text, tensor_element_type, tensor_shape
from tidal.dialects.attrs import index_attr, tensor_type
from tidal.symbolic import SymbolicError, parse, simplify, substitute, to_text

from .base import ModulePass, graph_steps, option
from .sccs import strongly_connected
from .sdg_build import I64, create as _create, kind_name as _enum_name, mentions as _mentions
from .sdg_graph_view import step_edges, step_offset
from .sdg_lift import Graph
from .transform_utils import erase_dead, read_shape

__all__ = ["SdgLiftRecurrence"]

FLOATS = {"f16", "bf16", "f32", "f64"}


def _same(a: str, b: str) -> bool:
    try:
        return parse(a).same(parse(b))
    except SymbolicError:
        return False


def _substitute(component: str, step: str, value: str) -> str | None:
    """`component` with the step replaced by `value`, or None for a slice or an error."""
    if ":" in component:
        return None
    try:
        return to_text(simplify(substitute(parse(component), {step: parse(value)})), mlir=True)
    except (SymbolicError, TypeError, ValueError):
        return None


class _Recurrences:
    """The linear recurrences over one step of one graph (see the module doc).

    An operand reference is (op, operand index, shift): the operand of the
    add or the mul of the true case, which the merge reads `shift` steps away
    (`s[t + 1] = s[t] + f[t]` reads its add at t - 1: shift -1)."""

    def __init__(self, g: Graph, step: str):
        self.g, self.step = g, step
        self.bound = g.bounds[g.steps.index(step)]
        # reads into the strict past of another past-only step (W[i - 1] when the step is
        # t) do not tie the points of the step together (sdg_graph_view.step_edges)
        edges = step_edges(g, step)
        comps = strongly_connected(len(g.ops), lambda k: edges[k])
        self.component = {k: tuple(c) for c in comps for k in c}

    def lift_one(self) -> bool:
        return any(o.name == "sdg.merge" and self._try(k) for k, o in enumerate(self.g.ops))

    # -- matching ----------------------------------------------------------------
    def _direction(self, k: int) -> str | None:
        """'reverse' or 'forward' for a merge `base if <d == D - 1 | d == 0>, x if <the rest>`."""
        o = self.g.ops[k]
        conds = [expr_text(c) for c in ir.ArrayAttr(o.attributes["conds"])]
        if len(conds) != 2 or self.step not in self.g.domain[k]:
            return None
        d, D = self.step, self.bound
        rest = conds[1].strip() == "true"
        if _same(conds[0], f"{d} == {D} - 1") and (rest or any(_same(conds[1], c) for c in
                                                             (f"{d} <= {D} - 2", f"{d} < {D} - 1"))):
            return "reverse"
        if _same(conds[0], f"{d} == 0") and (rest or any(_same(conds[1], c) for c in (f"{d} >= 1", f"{d} > 0"))):
            return "forward"
        return None

    def _step_shift(self, src: int | None, dep: list[str], k: int) -> int | None:
        """s for a read of op `src` (over k's domain) at k's point with the step moved by s."""
        g, d = self.g, self.step
        if src is None or g.domain[src] != g.domain[k] or len(dep) != len(g.domain[k]):
            return None
        if any(c != e for e, c in zip(g.domain[k], dep) if e != d):
            return None
        return step_offset(dep[g.domain[k].index(d)], d)

    def _match(self, m: int, offset: int):
        """(add, mul or None, a ref or None, b ref) of the true case, or None;
        `offset`: the step the recurrence reads M at (+1 backward, -1 forward)."""
        g = self.g
        n, ndep = g.reads[m][1]
        s = self._step_shift(n, ndep, m)
        if s is None or g.ops[n].name != "sdg.binary" or _enum_name(g.ops[n]) != "add":
            return None
        for r_at in range(2):
            r, rdep = g.reads[n][r_at]
            b = (n, 1 - r_at, s)
            if r == m and self._step_shift(r, rdep, m) == offset - s:
                return n, None, None, b
            if r is not None and r != m and self._step_shift(r, rdep, n) == 0 and g.ops[r].name == "sdg.binary" \
                    and _enum_name(g.ops[r]) == "mul":
                for y_at in range(2):
                    y, ydep = g.reads[r][y_at]
                    if y == m and self._step_shift(y, ydep, m) == offset - s:
                        return n, r, (r, 1 - y_at, s), b
        return None

    def _shift_of(self, ref) -> int | None:
        """The step offset, from the merge's point, at which operand `ref` is read
        (0 for a value without the step), or None for another read."""
        g, d = self.g, self.step
        src, dep = g.reads[ref[0]][ref[1]]
        if any(":" in c for c in dep):     # a block read: its axes would come before the new one
            return None
        if d not in g.domain[src]:
            return 0 if not any(_mentions(c, d) for c in dep) else None
        pos = g.domain[src].index(d)
        c = step_offset(dep[pos], d)
        if c is None or any(_mentions(x, d) for j, x in enumerate(dep) if j != pos):
            return None
        return c + ref[2]

    def _operand_ok(self, ref, m: int, shape: list[str], elem: str) -> bool:
        """Operand `ref`: outside M's component, in M's element type, broadcasting to
        `shape`, read a fixed number of steps away or without the step."""
        g, d = self.g, self.step
        src, dep = g.reads[ref[0]][ref[1]]
        value = g.ops[ref[0]].operands[ref[1]]
        if src is None or self.component[src] == self.component[m] or tensor_element_type(value.type) != elem:
            return False
        read = read_shape(value, dep)
        if read is None or len(read) > len(shape) or any(_mentions(x, d) for x in read):
            return False
        if any(x != y and x != "1" for x, y in zip(read[::-1], shape[::-1])):
            return False
        return self._shift_of(ref) is not None

    def _try(self, m: int) -> bool:
        g = self.g
        direction = self._direction(m)
        if direction is None:
            return False
        o = g.ops[m]
        shape, elem = tensor_shape(o.results[0].type), tensor_element_type(o.results[0].type)
        if elem not in FLOATS or any(_mentions(x, self.step) for x in shape):
            return False
        match = self._match(m, 1 if direction == "reverse" else -1)
        if match is None:
            return False
        add, mul, a_ref, b_ref = match
        chain = {m, add} | ({mul} if mul is not None else set())
        if set(self.component[m]) != chain:
            return False
        if len(g.readers[add]) != 1 or (mul is not None and len(g.readers[mul]) != 1):
            return False
        base_src, base_dep = g.reads[m][0]
        boundary = "0" if direction == "forward" else f"{self.bound} - 1"
        base_dep = [_substitute(c, self.step, boundary) for c in base_dep]
        if base_src is None or any(c is None or _mentions(c, self.step) for c in base_dep) \
                or tensor_element_type(o.operands[0].type) != elem \
                or read_shape(o.operands[0], base_dep) != shape:
            return False
        if not self._operand_ok(b_ref, m, shape, elem) or (a_ref is not None and not self._operand_ok(a_ref, m, shape, elem)):
            return False
        self._rewrite(m, direction, a_ref, b_ref, (o.operands[0], base_src, base_dep), shape, elem)
        return True

    # -- rewriting ---------------------------------------------------------------
    def _dom(self, k: int) -> list[str]:
        return [x for x in self.g.domain[k] if x != self.step]

    def _rows(self, ref, lo: str, hi: str, shape: list[str], elem: str, dom: list[str], before) -> tuple:
        """(value, components) of operand `ref` at the merge's points lo:hi, shaped
        (hi - lo, *shape): a value with the step is read over that range moved by its
        offset (axes of 1 inserted where it broadcasts), one without it is expanded
        along a new leading axis."""
        g, d = self.g, self.step
        src, dep = g.reads[ref[0]][ref[1]]
        value = g.ops[ref[0]].operands[ref[1]]
        own = read_shape(value, dep)
        rows = to_text(simplify(parse(hi) - parse(lo)), mlir=True)
        if d not in g.domain[src]:
            return _create(before, "sdg.expand", [rows] + shape, elem, [(value, list(dep))], dom, {}), dom
        pos, c = g.domain[src].index(d), self._shift_of(ref)
        ends = [to_text(simplify(parse(x) + c), mlir=True) for x in (lo, hi)]
        dep = dep[:pos] + [f"{ends[0]}:{ends[1]}"] + dep[pos + 1:]
        read = read_shape(value, dep)
        full = read[:1] + ["1"] * (len(shape) - len(own)) + read[1:]
        if full != read:
            value, dep = _create(before, "sdg.reshape", full, elem, [(value, dep)], dom, {}), dom
        if full[1:] != shape:
            value, dep = _create(before, "sdg.expand", [full[0]] + shape, elem, [(value, dep)], dom, {}), dom
        return value, dep

    def _base_is_b(self, b_ref, base, boundary: str) -> bool:
        """Whether the base case reads b at the boundary point (then b[0:D] is one read)."""
        g, d = self.g, self.step
        base_value, base_src, base_dep = base
        b_src, b_dep = g.reads[b_ref[0]][b_ref[1]]
        if base_src != b_src or base_value != g.ops[b_ref[0]].operands[b_ref[1]] or d not in g.domain[b_src] \
                or self._shift_of(b_ref) != 0:
            return False
        pos = g.domain[b_src].index(d)
        at = [boundary if j == pos else c for j, c in enumerate(b_dep)]
        return all(_same(x, y) for x, y in zip(at, base_dep))

    def _rewrite(self, m: int, direction: str, a_ref, b_ref, base, shape: list[str], elem: str) -> None:
        g, o, d, D = self.g, self.g.ops[m], self.step, self.bound
        dom = self._dom(m)
        reverse = direction == "reverse"
        whole = [D] + shape
        lo, hi = ("0", f"{D} - 1") if reverse else ("1", D)
        i64 = lambda v: ir.IntegerAttr.get(I64(), v)  # noqa: E731
        # b: b where the recurrence used it, the base at the boundary (b[0:D] when the base is b there)
        if self._base_is_b(b_ref, base, "0" if not reverse else f"{D} - 1"):
            b = self._rows(b_ref, "0", D, shape, elem, dom, o)
        else:
            rows = self._rows(b_ref, lo, hi, shape, elem, dom, o)
            one = _create(o, "sdg.reshape", ["1"] + shape, elem, [(base[0], base[2])], dom, {})
            parts = [rows, (one, dom)] if reverse else [(one, dom), rows]
            b = (_create(o, "sdg.concat", whole, elem, parts, dom, {"dim": i64(0)}), dom)
        # a: the factor where the recurrence used it, 0 where the scan never reads it
        if a_ref is None:
            with o.context, o.location, ir.InsertionPoint(o):
                ones = ir.Operation.create("sdg.full", results=[tensor_type(whole, elem, o.context)], operands=[],
                                           attributes={"value": ir.FloatAttr.get_f64(1.0),
                                                       "domain": index_attr(dom, o.context)}).results[0]
            a = (ones, dom)
        else:
            rows = self._rows(a_ref, lo, hi, shape, elem, dom, o)
            pad = {"dim": i64(0), "before": expr_attr("0" if reverse else "1", o.context),
                   "after": expr_attr("1" if reverse else "0", o.context), "value": ir.FloatAttr.get_f64(0.0)}
            a = (_create(o, "sdg.pad", whole, elem, [rows], dom, pad), dom)
        attrs = {"dim": i64(0)}
        if reverse:
            attrs["reverse"] = ir.UnitAttr.get(o.context)
        scan = _create(o, "sdg.linear_scan", whole, elem, [a, b], dom, attrs)
        take = _create(o, "sdg.take", shape, elem, [(scan, dom)], list(g.domain[m]),
                       {"dim": i64(0), "index": expr_attr(d, o.context)})
        o.results[0].replace_all_uses_with(take)
        o.erase()


@dataclass
class SdgLiftRecurrence(ModulePass):
    """Lifts first-order linear recurrences over a step into linear scans (see the module doc)."""

    name: ClassVar[str] = "sdg-lift-recurrence"
    summary: ClassVar[str] = ("Replace a first-order linear recurrence over a temporal dim "
                              "(adv[t] = delta[t] + c[t] * adv[t + 1]) by one linear scan over the whole dim")
    dims: str = option("", "steps to lift over, comma-separated (default: every step)")

    def run(self, op: ir.Operation) -> None:
        self.num_lifted = 0   # for tests and callers
        for graph, step in graph_steps(op, self.dims, self.name):
            with graph.context:
                count = 0
                while _Recurrences(Graph(graph), step).lift_one():   # one rewrite per view
                    count += 1
            self.num_lifted += count
            if count:
                erase_dead(graph)
