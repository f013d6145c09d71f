"""Arithmetic expression nodes: ``+ - *``, unary ``-``, ``//`` and ``%`` by constants, ``min``, ``max``."""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

from .errors import NonConstantDivisorError, SymbolicTypeError
from .expr import INT, Const, Expr, coerce, int_operand

class Add(Expr):
    """``lhs + rhs``."""

    __slots__ = ()
    _rank = 20

    def __new__(cls, lhs, rhs) -> Add:
        return cls._make((int_operand(lhs, "+"), int_operand(rhs, "+")))


class Sub(Expr):
    """``lhs - rhs``."""

    __slots__ = ()
    _rank = 21

    def __new__(cls, lhs, rhs) -> Sub:
        return cls._make((int_operand(lhs, "-"), int_operand(rhs, "-")))


class Mul(Expr):
    """``lhs * rhs``."""

    __slots__ = ()
    _rank = 22

    def __new__(cls, lhs, rhs) -> Mul:
        return cls._make((int_operand(lhs, "*"), int_operand(rhs, "*")))


class Neg(Expr):
    """``-operand``; folds ``-(constant)`` and ``--x`` at construction."""

    __slots__ = ()
    _rank = 23

    def __new__(cls, operand) -> Expr:
        x = int_operand(operand, "unary -")
        if isinstance(x, Const):
            return Const(-x.value)
        if isinstance(x, Neg):
            return x.args[0]
        return cls._make((x,))


def _positive_constant(dividend: Expr, divisor: Any, symbol: str) -> int:
    d = coerce(divisor)
    shown = str(d) if d is not None else repr(divisor)
    text = f"`{dividend} {symbol} {shown}`"
    if d is None or d.kind != INT:
        raise NonConstantDivisorError(f"{text}: the divisor must be a positive integer constant")
    if d.free_symbols:
        raise NonConstantDivisorError(
            f"{text}: the divisor `{d}` is not a constant (only division by positive integer constants is supported)"
        )
    from .evaluation import evaluate

    value = evaluate(d, {})
    if value <= 0:
        raise NonConstantDivisorError(f"{text}: the divisor must be a positive integer constant, got {value}")
    return value


class FloorDiv(Expr):
    """``dividend // divisor`` (floor division) by a positive constant."""

    __slots__ = ("divisor",)
    _payload_fields = ("divisor",)
    _rank = 12

    def __new__(cls, dividend, divisor) -> FloorDiv:
        x = int_operand(dividend, "//")
        return cls._make((x,), (_positive_constant(x, divisor, "//"),))


class Mod(Expr):
    """``dividend % divisor`` (Python modulo, in ``[0, divisor)``) by a positive constant."""

    __slots__ = ("divisor",)
    _payload_fields = ("divisor",)
    _rank = 13

    def __new__(cls, dividend, divisor) -> Mod:
        x = int_operand(dividend, "%")
        return cls._make((x,), (_positive_constant(x, divisor, "%"),))


class _MinMax(Expr):
    __slots__ = ()
    _name: ClassVar[str] = ""

    def __new__(cls, *args):
        if len(args) < 2:
            raise SymbolicTypeError(f"{cls._name}() needs at least two arguments, got {len(args)}")
        return cls._make(tuple(int_operand(a, f"{cls._name}()") for a in args))


class Min(_MinMax):
    """``min(a, b, ...)`` with at least two arguments (see :func:`min_`)."""

    __slots__ = ()
    _name = "min"
    _rank = 10


class Max(_MinMax):
    """``max(a, b, ...)`` with at least two arguments (see :func:`max_`)."""

    __slots__ = ()
    _name = "max"
    _rank = 11


def _varargs(args: tuple) -> tuple:
    if len(args) == 1 and not isinstance(args[0], (Expr, numbers.Integral)):
        return tuple(args[0])
    return args


def min_(*args) -> Expr:
    """Symbolic ``min`` of one or more integer expressions (or one iterable)."""
    args = _varargs(args)
    if not args:
        raise SymbolicTypeError("min_() needs at least one argument")
    return int_operand(args[0], "min()") if len(args) == 1 else Min(*args)


def max_(*args) -> Expr:
    """Symbolic ``max`` of one or more integer expressions (or one iterable)."""
    args = _varargs(args)
    if not args:
        raise SymbolicTypeError("max_() needs at least one argument")
    return int_operand(args[0], "max()") if len(args) == 1 else Max(*args)


smin = min_
smax = max_
