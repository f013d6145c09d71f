"""Boolean expression nodes: constants, comparisons, connectives, ``select``."""

from __future__ import annotations

from typing import Any

from .errors import SymbolicTypeError
from .expr import BOOL, INT, Expr, coerce, int_operand

#: Comparison operators by their keyword (MLIR-safe) name.
COMPARISON_OPS = ("lt", "le", "eq", "ne", "ge", "gt")
_OP_ALIASES = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">=": "ge", ">": "gt"}
#: ``a op b``  <=>  ``b SWAPPED[op] a``
SWAPPED = {"lt": "gt", "le": "ge", "eq": "eq", "ne": "ne", "ge": "le", "gt": "lt"}
#: ``not (a op b)``  <=>  ``a NEGATED[op] b``
NEGATED = {"lt": "ge", "le": "gt", "eq": "ne", "ne": "eq", "ge": "lt", "gt": "le"}


def _bool_operand(value: Any, context: str) -> Expr:
    expr = coerce(value)
    if expr is None:
        raise SymbolicTypeError(f"operand {value!r} of {context} is not a boolean expression")
    if expr.kind != BOOL:
        raise SymbolicTypeError(f"operand `{expr}` of {context} is a {expr.kind} expression, expected a boolean one")
    return expr


class BoolConst(Expr):
    """``true`` or ``false``; use the singletons :data:`TRUE` and :data:`FALSE`."""

    __slots__ = ("value",)
    _payload_fields = ("value",)
    kind = BOOL
    _rank = 0

    def __new__(cls, value: bool) -> BoolConst:
        if not isinstance(value, bool):
            raise SymbolicTypeError(f"BoolConst needs a bool, got {value!r}")
        return cls._make((), (value,))

    def __bool__(self) -> bool:
        return self.value


TRUE = BoolConst(True)
FALSE = BoolConst(False)


class Compare(Expr):
    """``lhs op rhs`` for ``op`` in ``lt le eq ne ge gt`` (or ``< <= == != >= >``)."""

    __slots__ = ("op",)
    _payload_fields = ("op",)
    kind = BOOL
    _rank = 30

    def __new__(cls, op: str, lhs, rhs) -> Compare:
        op = _OP_ALIASES.get(op, op)
        if op not in COMPARISON_OPS:
            raise ValueError(f"unknown comparison operator {op!r}")
        a = int_operand(lhs, f"comparison {op}")
        b = int_operand(rhs, f"comparison {op}")
        return cls._make((a, b), (op,))

    def __bool__(self) -> bool:
        # Fast, exact answers for identical operands (dict lookups hit this).
        if self.args[0] is self.args[1] and self.op in ("eq", "ne", "le", "ge", "lt", "gt"):
            return self.op in ("eq", "le", "ge")
        return Expr.__bool__(self)


class _Connective(Expr):
    __slots__ = ()
    kind = BOOL
    _name: str = ""

    def __new__(cls, *args):
        flat: list[Expr] = []
        for a in args:
            operand = _bool_operand(a, cls._name)
            flat.extend(operand.args if type(operand) is cls else (operand,))
        if not flat:
            return TRUE if cls is And else FALSE
        if len(flat) == 1:
            return flat[0]
        return cls._make(tuple(flat))


class And(_Connective):
    """Conjunction of two or more conditions (nested ``And`` is flattened)."""

    __slots__ = ()
    _name = "and"
    _rank = 31


class Or(_Connective):
    """Disjunction of two or more conditions (nested ``Or`` is flattened)."""

    __slots__ = ()
    _name = "or"
    _rank = 32


class Not(Expr):
    """Negation of a condition."""

    __slots__ = ()
    kind = BOOL
    _rank = 33

    def __new__(cls, operand) -> Not:
        return cls._make((_bool_operand(operand, "not"),))


class Select(Expr):
    """``select(cond, a, b)``: ``a`` where ``cond`` holds, else ``b``.

    ``a`` and ``b`` are both integer or both boolean expressions; the
    select has their kind.
    """

    __slots__ = ()
    _rank = 14

    def __new__(cls, cond, if_true, if_false) -> Select:
        c = _bool_operand(cond, "select condition")
        a, b = coerce(if_true), coerce(if_false)
        if a is None or b is None or a.kind != b.kind or a.kind not in (INT, BOOL):
            raise SymbolicTypeError(
                f"select(`{c}`, {if_true!r}, {if_false!r}): both values must be integer or both boolean expressions"
            )
        return cls._make((c, a, b))

    @property
    def kind(self) -> str:  # type: ignore[override]
        """The kind of the two values (``"int"`` or ``"bool"``)."""
        return self.args[1].kind


def select(cond, if_true, if_false) -> Expr:
    """Piecewise value: ``if_true`` where ``cond`` holds, else ``if_false``."""
    return Select(cond, if_true, if_false)
