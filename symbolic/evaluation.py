"""Evaluation at a point: a tree walk, and compilation to a Python function.

Integer expressions evaluate to ``int`` (``//`` and ``%`` are Python's floor
division and modulo), conditions to ``bool``, slices to Python ``slice``
objects (``slice(start, stop)`` or ``slice(start, stop, step)``) and index
sequences to tuples.
"""

from __future__ import annotations

import keyword
from typing import Any, Callable, Iterable, Mapping

from .errors import UnboundSymbolError
from .expr import Add, Const, Dim, Expr, FloorDiv, Max, Min, Mod, Mul, Neg, Sub, Symbol, as_expr
from .indexing import IndexSeq, Slice
from .logic import And, BoolConst, Compare, Not, Or, Select

_COMPARE = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b, "ge": lambda a, b: a >= b, "gt": lambda a, b: a > b,
}
_PY_COMPARE = {"lt": "<", "le": "<=", "eq": "==", "ne": "!=", "ge": ">=", "gt": ">"}


def _values_by_name(env: Mapping) -> dict:
    values = {}
    for key, value in env.items():
        name = key.name if isinstance(key, Symbol) else key
        if not isinstance(name, str):
            raise TypeError(f"environment keys must be symbols or names, got {key!r}")
        values[name] = value
    return values


def evaluate(e: Any, env: Mapping | None = None) -> Any:
    """Evaluate ``e`` with symbol values from ``env`` (keys: symbols or names).

    >>> t, T = Dim("t")
    >>> evaluate(t + 1, {t: 3})
    4
    """
    values = _values_by_name(env or {})
    return _eval(as_expr(e), values)


def _eval(e: Expr, values: dict) -> Any:
    kind = type(e)
    args = e.args
    if kind is Const or kind is BoolConst:
        return e.value
    if kind is Symbol:
        try:
            return values[e.name]
        except KeyError:
            raise UnboundSymbolError(f"no value for symbol `{e.name}`") from None
    if kind is Add:
        return _eval(args[0], values) + _eval(args[1], values)
    if kind is Sub:
        return _eval(args[0], values) - _eval(args[1], values)
    if kind is Mul:
        return _eval(args[0], values) * _eval(args[1], values)
    if kind is Neg:
        return -_eval(args[0], values)
    if kind is FloorDiv:
        return _eval(args[0], values) // e.divisor
    if kind is Mod:
        return _eval(args[0], values) % e.divisor
    if kind is Min:
        return min(_eval(a, values) for a in args)
    if kind is Max:
        return max(_eval(a, values) for a in args)
    if kind is Compare:
        return _COMPARE[e.op](_eval(args[0], values), _eval(args[1], values))
    if kind is And:
        return all(_eval(a, values) for a in args)
    if kind is Or:
        return any(_eval(a, values) for a in args)
    if kind is Not:
        return not _eval(args[0], values)
    if kind is Select:
        return _eval(args[1] if _eval(args[0], values) else args[2], values)
    if kind is Slice:
        start, stop = _eval(args[0], values), _eval(args[1], values)
        return slice(start, stop) if e.step == 1 else slice(start, stop, e.step)
    if kind is IndexSeq:
        return tuple(_eval(a, values) for a in args)
    raise TypeError(f"cannot evaluate {e!r}")


# -- compilation ----------------------------------------------------------------------
def _param_symbols(params: Iterable) -> list:
    symbols: list = []
    for p in params:
        if isinstance(p, Dim):
            symbols.extend((p.step, p.bound))
        elif isinstance(p, Symbol):
            symbols.append(p)
        elif isinstance(p, str):
            symbols.append(p)
        else:
            raise TypeError(f"compile_expr params must be symbols, names or Dims, got {p!r}")
    return symbols


class _CodeGen:
    def __init__(self, names: dict, functional: bool = False):
        self.names = names  # symbol name -> Python identifier
        self.functional = functional  # logic as calls (_and, _or, _not, _sel): no short-circuit

    def gen(self, e: Expr) -> str:
        kind = type(e)
        a = e.args
        g = self.gen
        if kind is Const:
            return repr(e.value) if e.value >= 0 else f"({e.value})"
        if kind is BoolConst:
            return "True" if e.value else "False"
        if kind is Symbol:
            try:
                return self.names[e.name]
            except KeyError:
                raise UnboundSymbolError(f"symbol `{e.name}` is not among the compile_expr params") from None
        if kind is Add:
            return f"({g(a[0])} + {g(a[1])})"
        if kind is Sub:
            return f"({g(a[0])} - {g(a[1])})"
        if kind is Mul:
            return f"({g(a[0])} * {g(a[1])})"
        if kind is Neg:
            return f"(-{g(a[0])})"
        if kind is FloorDiv:
            return f"({g(a[0])} // {e.divisor})"
        if kind is Mod:
            return f"({g(a[0])} % {e.divisor})"
        if kind is Min or kind is Max:
            return f"_{kind.__name__.lower()}({', '.join(g(x) for x in a)})"
        if kind is Compare:
            return f"({g(a[0])} {_PY_COMPARE[e.op]} {g(a[1])})"
        if kind is And:
            if self.functional:
                return f"_and({', '.join(g(x) for x in a)})"
            return "(" + " and ".join(g(x) for x in a) + ")"
        if kind is Or:
            if self.functional:
                return f"_or({', '.join(g(x) for x in a)})"
            return "(" + " or ".join(g(x) for x in a) + ")"
        if kind is Not:
            return f"_not({g(a[0])})" if self.functional else f"(not {g(a[0])})"
        if kind is Select:
            if self.functional:
                return f"_sel({g(a[0])}, {g(a[1])}, {g(a[2])})"
            return f"({g(a[1])} if {g(a[0])} else {g(a[2])})"
        if kind is Slice:
            step = "" if e.step == 1 else f", {e.step}"
            return f"_slice({g(a[0])}, {g(a[1])}{step})"
        if kind is IndexSeq:
            return "(" + "".join(f"{g(x)}, " for x in a) + ")"
        raise TypeError(f"cannot compile {e!r}")


def _python_names(symbols: list) -> dict:
    names: dict = {}
    for position, sym in enumerate(symbols):
        name = sym.name if isinstance(sym, Symbol) else sym
        if name in names:
            raise ValueError(f"compile_expr: parameter `{name}` given twice")
        usable = name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")
        names[name] = name if usable else f"_p{position}"
    return names


def compile_source(e: Any, params: Iterable, functional: bool = False) -> str:
    """The Python source (a ``lambda``) that :func:`compile_expr` would ``eval``.

    ``functional=True`` writes logic as calls instead of Python's ``and``,
    ``or``, ``not`` and ``x if c else y`` (``_and(a, b, ...)``, ``_or``,
    ``_not(a)``, ``_sel(c, x, y)``), for callers that evaluate the source on
    values Python cannot branch on (traced array scalars); the caller binds
    those names. Min and max are ``_min``/``_max`` in both modes."""
    symbols = _param_symbols(params)
    names = _python_names(symbols)
    body = _CodeGen(names, functional).gen(as_expr(e))
    return f"lambda {', '.join(names.values())}: {body}"


def compile_expr(e: Any, params: Iterable) -> Callable:
    """Compile ``e`` into a Python function of the ``params`` (in that order).

    ``params`` lists symbols (or names, or :class:`Dim` objects, which stand
    for their step and bound).  The source is generated once and ``eval``-ed,
    so a call does no tree walk:

    >>> t, T = Dim("t")
    >>> f = compile_expr(Slice(max_(0, t - 3), t + 1), [t, T])
    >>> f(5, 10)
    slice(2, 6, None)

    The returned function has the generated source in ``__source__``.
    """
    source = compile_source(e, params)
    namespace = {"_min": min, "_max": max, "_slice": slice, "__builtins__": {}}
    function = eval(source, namespace)  # noqa: S307 - source generated from a trusted tree
    function.__source__ = source
    return function

