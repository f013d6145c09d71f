"""Bridge between symbolic expressions and isl (through ``islpy``).

Only this module imports ``islpy``.  Bounds become isl parameters:

* :func:`domain_set` -- ``[T] -> { [t] : 0 <= t < T }``;
* :func:`dependence_map` -- a dependence edge (sink dims, dependence, optional
  condition) as a map from sink points to the source points they read;
  slices become ranges, ``min``/``max``/``//``/``%`` use isl's own syntax and
  ``select`` is expanded into a disjunction;
* :func:`map_to_dependence` -- back from a single-piece isl map whose output
  dims are bounded by unit-coefficient constraints (the shapes that
  :func:`~tidal.symbolic.invert` produces) to a dependence and a condition;
* :func:`check_inverse_agrees` -- compares ``dependence_map(...).reverse()``
  with the map of the symbolic inverse using ``is_equal``.

islpy reports exceptions raised in callbacks only as warnings, so this module
uses no callbacks and checks every result explicitly.
"""

from __future__ import annotations

from typing import Any, Sequence

import islpy as isl

from .errors import IslTranslationError, NonAffineError
from .expr import INT, Add, Const, Dim, Expr, FloorDiv, Max, Min, Mod, Mul, Neg, Sub, Symbol, as_expr, max_, min_
from .indexing import IndexSeq, Slice
from .inversion import Inversion, invert
from .logic import FALSE, TRUE, And, BoolConst, Compare, Not, Or, Select
from .simplifier import simplify

_ISL_CMP = {"lt": "<", "le": "<=", "eq": "=", "ne": "!=", "ge": ">=", "gt": ">"}


def _replace(e: Expr, target: Expr, replacement: Expr) -> Expr:
    if e is target:
        return replacement
    if not e.args:
        return e
    from .transform import rebuild

    return rebuild(e, tuple(_replace(a, target, replacement) for a in e.args))


def _find_select(e: Expr) -> Expr | None:
    if isinstance(e, Select):
        return e
    for a in e.args:
        found = _find_select(a)
        if found is not None:
            return found
    return None


def _without_selects(cond: Expr) -> Expr:
    """Expand every ``select`` into ``(c and ...) or (not c and ...)``."""
    if isinstance(cond, (And, Or)):
        return type(cond)(*(_without_selects(a) for a in cond.args))
    if isinstance(cond, Not):
        return Not(_without_selects(cond.args[0]))
    found = _find_select(cond)
    if found is None:
        return cond
    c, a, b = found.args
    return Or(
        And(_without_selects(c), _without_selects(_replace(cond, found, a))),
        And(Not(_without_selects(c)), _without_selects(_replace(cond, found, b))),
    )


class _IslText:
    """Prints conditions in isl syntax; ``names`` maps symbol names to isl names."""

    def __init__(self, names: dict):
        self.names = names

    def affine(self, e: Expr, whole: Expr) -> str:
        a = e.args
        kind = type(e)
        if kind is Const:
            return f"({e.value})" if e.value < 0 else str(e.value)
        if kind is Symbol:
            if e.name not in self.names:
                raise IslTranslationError(f"symbol `{e.name}` of `{whole}` is not a dimension or bound of this map")
            return self.names[e.name]
        if kind is Add or kind is Sub:
            op = "+" if kind is Add else "-"
            return f"({self.affine(a[0], whole)} {op} {self.affine(a[1], whole)})"
        if kind is Neg:
            return f"(-{self.affine(a[0], whole)})"
        if kind is Mul:
            constant = [x for x in a if not x.free_symbols]
            if not constant:
                raise NonAffineError(f"`{e}` is a product of two non-constant terms; isl needs affine expressions")
            other = a[1] if constant[0] is a[0] else a[0]
            return f"({simplify(constant[0]).value} * {self.affine(other, whole)})"
        if kind is FloorDiv:
            return f"floor(({self.affine(a[0], whole)})/{e.divisor})"
        if kind is Mod:
            return f"(({self.affine(a[0], whole)}) mod {e.divisor})"
        if kind is Min or kind is Max:
            return f"{kind.__name__.lower()}({', '.join(self.affine(x, whole) for x in a)})"
        raise IslTranslationError(f"cannot translate `{e}` in `{whole}` to isl")

    def condition(self, cond: Expr) -> str:
        a = cond.args
        if isinstance(cond, BoolConst):
            return "0 = 0" if cond.value else "1 = 0"
        if isinstance(cond, Compare):
            return f"{self.affine(a[0], cond)} {_ISL_CMP[cond.op]} {self.affine(a[1], cond)}"
        if isinstance(cond, And):
            return "(" + " and ".join(self.condition(x) for x in a) + ")"
        if isinstance(cond, Or):
            return "(" + " or ".join(self.condition(x) for x in a) + ")"
        if isinstance(cond, Not):
            return f"not ({self.condition(a[0])})"
        raise IslTranslationError(f"cannot translate condition `{cond}` to isl")


def _in_domain(d: Dim, var: Expr | None = None) -> Expr:
    x = d.step if var is None else var
    return And(Compare("ge", x, 0), Compare("lt", x, d.bound))


#: Words isl's parser reserves (case-insensitively); such names get a trailing underscore.
ISL_KEYWORDS = frozenset(
    "exists and or implies not infty nan min max rat true false ceild floord mod ceil floor".split()
)


def isl_name(name: str) -> str:
    """The identifier used in isl text for a symbol called ``name``."""
    return name + "_" if name.lower() in ISL_KEYWORDS else name


def _param_names(dims: Sequence[Dim], exprs: Sequence[Expr], placeholders: Sequence[Symbol] = ()) -> list:
    names = {d.bound.name for d in dims}
    for e in exprs:
        names.update(s.name for s in e.free_symbols if s.role != "step")
    return sorted(names - {p.name for p in placeholders})


def _translate(condition: Expr, names: dict, what: str) -> str:
    """isl text of ``condition``; ``what`` names the user's object in errors."""
    printer = _IslText(names)
    try:
        return printer.condition(_without_selects(condition))
    except NonAffineError as first:
        try:  # e.g. (t + 1) * (t - 1) - t * t is affine once simplified
            return printer.condition(_without_selects(simplify(condition)))
        except NonAffineError:
            raise NonAffineError(f"{what} is not affine: {first}") from None


def domain_set(dims: Sequence[Dim], condition: Any = True, ctx: Any = None) -> isl.Set:
    """``[T, I] -> { [t, i] : 0 <= t < T and 0 <= i < I and condition }``."""
    dims = tuple(dims)
    cond = And(*(_in_domain(d) for d in dims), as_expr(condition))
    params = _param_names(dims, [cond])
    names = {n: isl_name(n) for n in params + [d.step.name for d in dims]}
    body = _translate(cond, names, f"condition `{as_expr(condition)}`")
    param_text = ", ".join(names[p] for p in params)
    text = f"[{param_text}] -> {{ [{', '.join(names[d.step.name] for d in dims)}] : {body} }}"
    return isl.Set.read_from_str(ctx or isl.DEFAULT_CONTEXT, text)


def dependence_map(sink_dims: Sequence[Dim], dep: Any, source_dims: Sequence[Dim],
                   condition: Any = True, *, restrict_source: bool = True, ctx: Any = None) -> isl.Map:
    """The isl map ``{ sink point -> source points it reads }`` of a dependence edge.

    The domain is the sink domain restricted by ``condition`` (e.g. ``t > 0``
    or ``t % 5 == 0``); with ``restrict_source`` the range is intersected
    with the source domain.
    """
    sink_dims, source_dims = tuple(sink_dims), tuple(source_dims)
    seq = dep if isinstance(dep, IndexSeq) else IndexSeq(list(dep), validate=False)
    if len(seq) != len(source_dims):
        raise IslTranslationError(f"dependence `{seq}` has {len(seq)} components for {len(source_dims)} source dims")
    outs = [Symbol(f"__out{k}") for k in range(len(source_dims))]
    parts = [_in_domain(d) for d in sink_dims] + [as_expr(condition)]
    for out, component, source in zip(outs, seq, source_dims):
        if component.kind == INT:
            parts.append(Compare("eq", out, component))
        else:
            parts += [Compare("ge", out, component.start), Compare("lt", out, component.stop)]
            if component.step != 1:
                parts.append(Compare("eq", (out - component.start) % component.step, 0))
        if restrict_source:
            parts.append(_in_domain(source, out))
    cond = And(*parts)
    params = _param_names(sink_dims + source_dims, [cond], outs)
    names = {n: isl_name(n) for n in params + [d.step.name for d in sink_dims]}
    names.update({o.name: f"{isl_name(d.step.name)}'" for o, d in zip(outs, source_dims)})
    ins = ", ".join(names[d.step.name] for d in sink_dims)
    out_names = ", ".join(names[o.name] for o in outs)
    what = f"dependence `{seq}`" + ("" if as_expr(condition) is TRUE else f" with condition `{as_expr(condition)}`")
    param_text = ", ".join(names[p] for p in params)
    text = f"[{param_text}] -> {{ [{ins}] -> [{out_names}] : {_translate(cond, names, what)} }}"
    return isl.Map.read_from_str(ctx or isl.DEFAULT_CONTEXT, text)


def inversion_map(inversion: Inversion, sink_dims: Sequence[Dim], source_dims: Sequence[Dim]) -> isl.Map:
    """The map ``{ source point -> sink points reading it }`` of a symbolic inversion."""
    return dependence_map(source_dims, inversion.index, sink_dims, inversion.condition)


def check_inverse_agrees(dep: Any, sink_dims: Sequence[Dim], source_dims: Sequence[Dim]) -> bool:
    """True iff :func:`invert` agrees with isl's ``reverse()`` of the dependence map.

    Both maps are restricted to the sink and source domains and compared
    with ``is_equal`` (for all parameter values).
    """
    reversed_map = dependence_map(sink_dims, dep, source_dims).reverse()
    symbolic = inversion_map(invert(dep, sink_dims, source_dims), sink_dims, source_dims)
    return bool(reversed_map.is_equal(symbolic))


# -- isl -> expressions --------------------------------------------------------------
def _val(v: Any) -> int:
    value = v.to_python()
    if not isinstance(value, int):
        raise IslTranslationError(f"unexpected non-integer isl value {v}")
    return value


class _MapReader:
    def __init__(self, wrapped: Any, in_dims: Sequence[Dim], out_dims: Sequence[Dim]):
        self.set = wrapped
        self.n_in = len(in_dims)
        self.n_out = len(out_dims)
        symbols = {isl_name(d.bound.name): d.bound for d in (*in_dims, *out_dims)}
        params = []
        for k in range(wrapped.dim(isl.dim_type.param)):
            name = wrapped.get_dim_name(isl.dim_type.param, k)
            if name in symbols:
                params.append(symbols[name])
            else:
                plain = name[:-1] if name.endswith("_") and name[:-1].lower() in ISL_KEYWORDS else name
                params.append(Symbol(plain))
        self.params = params
        self.vars = [d.step for d in in_dims] + [None] * self.n_out
        self.divs: list = []
        for k in range(wrapped.dim(isl.dim_type.div)):
            self.divs.append(self._div(wrapped.get_div(k)))

    def _linear(self, obj: Any, var_type: Any, scale_by: int = 1) -> tuple[Expr, list]:
        """``(expression without outputs, output coefficients)`` of a constraint or aff."""
        coefficient = obj.get_coefficient_val
        total: Expr = Const(_val(obj.get_constant_val() * scale_by))
        outs = []
        for k in range(self.n_in + self.n_out):
            c = _val(coefficient(var_type, k) * scale_by)
            if k >= self.n_in:
                outs.append(c)
            elif c:
                total = total + c * self.vars[k]
        for k, p in enumerate(self.params):
            c = _val(coefficient(isl.dim_type.param, k) * scale_by)
            if c:
                total = total + c * p
        for k in range(obj.dim(isl.dim_type.div)):
            c = _val(coefficient(isl.dim_type.div, k) * scale_by)
            if c:
                total = total + c * self.divs[k]
        return total, outs

    def _div(self, aff: Any) -> Expr:
        denominator = _val(aff.get_denominator_val())
        numerator, outs = self._linear(aff, isl.dim_type.in_, denominator)
        if any(outs):
            raise IslTranslationError(f"existential variable {aff} involves output dims; unsupported")
        return FloorDiv(numerator, denominator)

    def read(self) -> tuple[list, list, list, list]:
        lowers: list = [[] for _ in range(self.n_out)]
        uppers: list = [[] for _ in range(self.n_out)]
        equals: list = [None] * self.n_out
        conditions: list = []
        for c in self.set.get_constraints():
            rest, outs = self._linear(c, isl.dim_type.set)
            involved = [k for k, a in enumerate(outs) if a]
            if not involved:
                conditions.append(Compare("eq" if c.is_equality() else "ge", rest, 0))
                continue
            if len(involved) > 1:
                raise IslTranslationError(f"constraint {c} couples several output dims")
            k, a = involved[0], outs[involved[0]]
            if c.is_equality():
                if abs(a) != 1:
                    raise IslTranslationError(f"constraint {c}: output coefficient {a} is not +-1")
                if equals[k] is not None:
                    conditions.append(Compare("eq", equals[k], -a * rest))
                else:
                    equals[k] = -a * rest
            elif a > 0:  # a*o + rest >= 0  <=>  o >= -floor(rest / a)
                lowers[k].append(-rest if a == 1 else -(rest // a))
            else:  # o <= floor(rest / -a)
                uppers[k].append(rest if a == -1 else rest // -a)
        return lowers, uppers, equals, conditions


def map_to_dependence(m: Any, in_dims: Sequence[Dim], out_dims: Sequence[Dim]) -> Inversion:
    """Turn a single-piece isl map (or basic map) into ``(index, condition)`` over ``in_dims``' symbols.

    The result is an :class:`Inversion` named tuple used as a generic
    "dependence plus condition" pair: ``index`` has one component per output
    dim and ``condition`` (over the input dims) holds exactly where the map
    relates the input point to some output point.

    Each output dim must be fixed by a unit-coefficient equality (a point) or
    bounded below and above (a slice ``max(lower bounds):min(upper bounds) + 1``).
    The results are simplified with the facts of ``in_dims``.
    """
    in_dims, out_dims = tuple(in_dims), tuple(out_dims)
    if isinstance(m, isl.Map):
        pieces = m.coalesce().get_basic_maps()
        if not pieces:
            return Inversion(IndexSeq([Slice(0, 0, validate=False) for _ in out_dims]), FALSE)
        if len(pieces) != 1:
            raise IslTranslationError(f"isl map {m} has {len(pieces)} pieces; only single-piece maps are supported")
        m = pieces[0]
    m = m.detect_equalities().remove_redundancies()
    if m.dim(isl.dim_type.in_) != len(in_dims) or m.dim(isl.dim_type.out) != len(out_dims):
        raise IslTranslationError(f"isl map {m} does not have {len(in_dims)} inputs and {len(out_dims)} outputs")
    lowers, uppers, equals, conditions = _MapReader(m.wrap(), in_dims, out_dims).read()
    components = []
    for k, d in enumerate(out_dims):
        if equals[k] is not None:
            point = equals[k]
            conditions += [Compare("ge", point, x) for x in lowers[k]]
            conditions += [Compare("le", point, x) for x in uppers[k]]
            components.append(simplify(point))
        elif lowers[k] and uppers[k]:
            start, stop = simplify(max_(*lowers[k])), simplify(min_(*uppers[k]) + 1)
            components.append(Slice(start, stop, validate=False))
            conditions.append(Compare("lt", start, stop))
        else:
            raise IslTranslationError(f"output dim `{d.name}` of {m} is unbounded")
    return Inversion(IndexSeq(components, validate=False), simplify(And(*conditions)))


def inverse_via_isl(dep: Any, sink_dims: Sequence[Dim], source_dims: Sequence[Dim]) -> Inversion:
    """The inverse dependence computed by isl (``reverse()``), read back as expressions."""
    reversed_map = dependence_map(sink_dims, dep, source_dims).reverse()
    return map_to_dependence(reversed_map, source_dims, sink_dims)


def fix_params(s: Any, values: dict) -> Any:
    """``s`` (an isl set or map) with parameters fixed to ``values`` (name -> int)."""
    for name, value in values.items():
        position = s.find_dim_by_name(isl.dim_type.param, name)
        if position >= 0:
            s = s.fix_val(isl.dim_type.param, position, isl.Val.int_from_si(s.get_ctx(), value))
    return s


def points(s: Any) -> list:
    """All points of a bounded isl set or map (parameters fixed), as sorted int tuples.

    For a map, each point is the input coordinates followed by the outputs.
    """
    if isinstance(s, (isl.Map, isl.BasicMap)):
        s = s.wrap()
    n = s.dim(isl.dim_type.set)
    found: list = []
    failures: list = []

    def visit(point: Any) -> None:
        try:
            found.append(tuple(_val(point.get_coordinate_val(isl.dim_type.set, k)) for k in range(n)))
        except Exception as exc:  # islpy would only print a warning
            failures.append(exc)

    s.foreach_point(visit)
    if failures:
        raise IslTranslationError(f"enumerating the points of {s} failed: {failures[0]}")
    return sorted(found)


__all__ = [
    "domain_set", "dependence_map", "inversion_map", "check_inverse_agrees", "map_to_dependence",
    "inverse_via_isl", "fix_params", "points", "isl_name", "ISL_KEYWORDS",
]
