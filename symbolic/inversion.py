"""Inversion of dependence expressions (TEMPO paper, section 3).

A dependence ``dep`` maps a sink point ``p`` (over ``sink_dims``) to source
points: one component per source dimension, each a point or a slice written
in the sink's step symbols.  Its inverse answers "which sink points read
source point ``q``?": one component per sink dimension, written in the
source's step symbols, plus a condition on ``q`` (false where no sink point
reads ``q``).  Examples (sink and source both over ``t``)::

    [t + 3]               ->  [t - 3]                 if t >= 3
    [max(0, t - 3):t + 1] ->  [t:min(t + 4, T)]
    [t:T]                 ->  [0:t + 1]
    [t:min(t + 3, T)]     ->  [max(0, t - 2):t + 1]
    [0:t + 1]             ->  [t:T]
    [0:T]                 ->  [0:T]

Method: every supported component is monotone non-decreasing in its sink
step ``p``, so ``{p : start(p) <= q < stop(p)}`` is the interval
``[U(stop)(q) + 1, U(start)(q)]`` with ``U(f)(q) = max{p : f(p) <= q}``,
computed by a Galois-connection recursion through ``+ c``, ``* c``, ``// c``,
``min``, ``max`` and ``select`` (``p``-free terms split into guarded cases),
then clipped to ``0 <= p < P``.  Unit-coefficient affine points (``t - 1``,
``T - 1 - t``) are solved directly.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from .errors import NonInvertibleError
from .expr import INT, Const, Dim, Expr, FloorDiv, Max, Min, Symbol, max_, min_
from .indexing import IndexSeq, Slice
from .logic import FALSE, TRUE, And, Compare, Or, Select
from .poly import expr_to_poly, poly_to_expr, without
from .conditions import negate, simplify_bool
from .simplifier import int_poly, simplify


class Inversion(NamedTuple):
    """The inverse of a dependence: ``index`` (one component per sink dim) and ``condition``."""

    index: IndexSeq
    condition: Expr


class _Infinity:
    def __init__(self, sign: int):
        self.sign = sign

    def __repr__(self) -> str:
        return "+inf" if self.sign > 0 else "-inf"


POS_INF, NEG_INF = _Infinity(1), _Infinity(-1)


def _ext_min(a: Any, b: Any) -> Any:
    if a is NEG_INF or b is NEG_INF:
        return NEG_INF
    if a is POS_INF:
        return b
    if b is POS_INF:
        return a
    return simplify(min_(a, b))


def _ext_max(a: Any, b: Any) -> Any:
    if a is POS_INF or b is POS_INF:
        return POS_INF
    if a is NEG_INF:
        return b
    if b is NEG_INF:
        return a
    return simplify(max_(a, b))


def _merge(cases: list) -> list:
    """Drop impossible cases and merge cases with the same value (guards or-ed)."""
    merged: dict = {}
    for guard, value in cases:
        guard = simplify_bool(guard)
        if guard is FALSE:
            continue
        merged[value] = simplify_bool(Or(merged[value], guard)) if value in merged else guard
    return [(g, v) for v, g in merged.items()]


def _combine(cases_a: list, cases_b: list, pick) -> list:
    return _merge([(And(ga, gb), pick(va, vb)) for ga, va in cases_a for gb, vb in cases_b])


class _Inverter:
    """Computes ``U(f)(q) = max{p : f(p) <= q}`` as guarded cases."""

    def __init__(self, p: Symbol, context: str):
        self.p = p
        self.context = context

    def fail(self, why: str) -> NonInvertibleError:
        return NonInvertibleError(f"cannot invert {self.context}: {why}")

    def upper(self, f: Expr, q: Expr) -> list:
        """Cases of ``max{p : f(p) <= q}``; tries the simplified form, then ``f``'s own structure.

        Simplification can turn a monotone expression into a sum of monotone
        terms (``t // 3 * 3 // 2 * 2`` becomes ``2 * (t // 3) + 2 * (t // 6)``),
        which the recursion cannot invert, while the original nesting can be.
        """
        try:
            return self._upper(f, q, structural=False)
        except NonInvertibleError as first:
            try:
                return self._upper(f, q, structural=True)
            except NonInvertibleError:
                raise first from None

    def _upper(self, f: Expr, q: Expr, structural: bool) -> list:
        poly = expr_to_poly(f) if structural else int_poly(f)
        dependent = [m for m in poly if any(self.p in a.free_symbols for a in m)]
        if not dependent:
            guard = simplify_bool(Compare("le", poly_to_expr(poly), q))
            return _merge([(guard, POS_INF), (negate(guard), NEG_INF)])
        if len(dependent) != 1 or len(dependent[0]) != 1:
            raise self.fail(f"`{f}` is not monotone in `{self.p}` (several terms depend on it)")
        mono = dependent[0]
        coef = poly[mono]
        if not isinstance(coef, int) or coef <= 0:
            raise self.fail(f"`{f}` decreases with `{self.p}`")
        target: Expr = q - poly_to_expr(without(poly, mono))
        if coef != 1:
            target = target // coef
        atom = mono[0]
        if atom is self.p:
            return [(TRUE, simplify(target))]
        if isinstance(atom, (Min, Max)):
            pick = _ext_max if isinstance(atom, Min) else _ext_min
            result = self._upper(atom.args[0], target, structural)
            for arg in atom.args[1:]:
                result = _combine(result, self._upper(arg, target, structural), pick)
            return result
        if isinstance(atom, FloorDiv):
            d = atom.divisor
            return self._upper(atom.args[0], target * d + (d - 1), structural)
        if isinstance(atom, Select) and self.p not in atom.args[0].free_symbols:
            cond = simplify_bool(atom.args[0])
            cases = [(And(cond, g), v) for g, v in self._upper(atom.args[1], target, structural)]
            cases += [(And(negate(cond), g), v) for g, v in self._upper(atom.args[2], target, structural)]
            return _merge(cases)
        raise self.fail(f"`{atom}` is not a supported monotone form in `{self.p}`")

    def lower_and_upper(self, component: Expr, q: Expr) -> tuple[list, list]:
        """Cases for the least and greatest ``p`` whose component contains ``q``."""
        if component.kind == INT:
            poly = int_poly(component)
            coef = poly.get((self.p,))
            others = without(poly, (self.p,))
            if coef in (1, -1) and not any(self.p in a.free_symbols for m in others for a in m):
                solution = simplify(coef * (q - poly_to_expr(others)))
                return [(TRUE, solution)], [(TRUE, solution)]
            component = Slice(component, component + 1, validate=False)
        if component.step != 1:
            raise self.fail(f"the stepped slice `{component}` moves with `{self.p}`")
        upper = self.upper(component.start, q)
        below_stop = self.upper(component.stop, q)
        lower = [(g, v if isinstance(v, _Infinity) else simplify(v + 1)) for g, v in below_stop]
        return lower, upper


def _membership(q: Symbol, component: Expr) -> Expr:
    """Condition that source step ``q`` lies in a component that ignores the sink."""
    if component.kind == INT:
        return Compare("eq", q, component)
    cond = And(Compare("ge", q, component.start), Compare("lt", q, component.stop))
    if component.step != 1:
        cond = And(cond, Compare("eq", (q - component.start) % component.step, 0))
    return cond


def _select_chain(guards: list, values: list) -> Expr:
    result = values[-1]
    for guard, value in zip(reversed(guards[:-1]), reversed(values[:-1])):
        result = Select(guard, value, result)
    return simplify(result)


def _solve_dim(sink: Dim, parts: list, context: str) -> tuple[Expr, Expr]:
    """Component and condition for one sink dim read by ``parts`` = [(q, component)]."""
    inverter = _Inverter(sink.step, context)
    lower: list = [(TRUE, NEG_INF)]
    upper: list = [(TRUE, POS_INF)]
    for q, component in parts:
        lo, hi = inverter.lower_and_upper(component, q)
        lower = _combine(lower, lo, _ext_max)
        upper = _combine(upper, hi, _ext_min)
    bound = sink.bound
    cases = []  # (guard, start, stop or None for a point, non-empty condition)
    for g_lo, lo in lower:
        for g_hi, hi in upper:
            guard = simplify_bool(And(g_lo, g_hi))
            if guard is FALSE or lo is POS_INF or hi is NEG_INF:
                continue
            if not isinstance(lo, _Infinity) and not isinstance(hi, _Infinity) and simplify(hi - lo) is Const(0):
                nonempty = And(Compare("ge", lo, 0), Compare("lt", lo, bound))
                case = (guard, lo, None)
            else:
                start = Const(0) if lo is NEG_INF else simplify(max_(lo, 0))
                stop = bound if hi is POS_INF else simplify(min_(hi + 1, bound))
                nonempty = Compare("lt", start, stop)
                case = (guard, start, stop)
            cond = simplify_bool(And(guard, nonempty))
            if cond is not FALSE:
                cases.append(case + (cond,))
    if not cases:
        return Slice(0, 0, validate=False), FALSE
    condition = simplify_bool(Or(*(c[3] for c in cases)))
    guards = [c[0] for c in cases]
    if all(c[2] is None for c in cases):
        return _select_chain(guards, [c[1] for c in cases]), condition
    starts = [c[1] for c in cases]
    stops = [c[1] + 1 if c[2] is None else c[2] for c in cases]
    return Slice(_select_chain(guards, starts), _select_chain(guards, stops), validate=False), condition


def invert(dep: Any, sink_dims: Sequence[Dim], source_dims: Sequence[Dim]) -> Inversion:
    """Invert dependence ``dep`` (sink over ``sink_dims`` reads source over ``source_dims``).

    Returns ``Inversion(index, condition)``: ``index`` has one component per
    sink dim, in the source's step symbols; ``condition`` (over the source's
    symbols, simplified with ``0 <= t < T``) holds exactly where some sink
    point reads the source point.  A sink dim that no component mentions is
    read entirely (``0:I``); a component that mentions no sink dim only adds
    a membership condition.  Raises :class:`NonInvertibleError` for
    components outside the supported monotone class.
    """
    seq = dep if isinstance(dep, IndexSeq) else IndexSeq(list(dep), validate=False)
    sink_dims, source_dims = tuple(sink_dims), tuple(source_dims)
    for d in sink_dims + source_dims:
        if not isinstance(d, Dim):
            raise TypeError(f"invert() expects Dim objects, got {d!r}")
    if len(seq) != len(source_dims):
        raise NonInvertibleError(f"dependence `{seq}` has {len(seq)} components for {len(source_dims)} source dims")
    sink_steps = {d.step: d for d in sink_dims}
    parts: dict = {d: [] for d in sink_dims}
    conditions = []
    for component, source in zip(seq, source_dims):
        context = f"component `{component}` of dependence `{seq}`"
        steps = [s for s in simplify(component).free_symbols if s.role == "step"]
        foreign = [s for s in steps if s not in sink_steps]
        if foreign:
            raise NonInvertibleError(f"cannot invert {context}: `{foreign[0]}` is not a sink dimension")
        if len(steps) > 1:
            names = ", ".join(sorted(s.name for s in steps))
            raise NonInvertibleError(f"cannot invert {context}: it depends on several sink dims ({names})")
        if steps:
            parts[sink_steps[steps[0]]].append((source.step, component, context))
        else:
            conditions.append(_membership(source.step, simplify(component)))
    components = []
    for sink in sink_dims:
        if not parts[sink]:
            components.append(Slice(0, sink.bound, validate=False))
            continue
        context = parts[sink][0][2] if len(parts[sink]) == 1 else f"dependence `{seq}` along `{sink.name}`"
        component, cond = _solve_dim(sink, [(q, c) for q, c, _ in parts[sink]], context)
        components.append(component)
        conditions.append(cond)
    return Inversion(IndexSeq(components, validate=False), simplify_bool(And(*conditions)))

