"""Printing expressions in the Pythonic or the MLIR-safe textual form.

Both forms share one grammar and one canonical spacing, so that the C++ and
Python printers produce identical text:

* binary operators surrounded by one space: ``t - 1``, ``t mod 5 eq 0``;
* unary minus without a space: ``-t``; ``not x`` with one space (``~x`` in
  the Pythonic form);
* ``, `` after commas; no spaces inside brackets and parentheses;
* no spaces around slice colons: ``0:t + 1``, ``max(0, t - 3):t + 1``,
  ``0:T:2``; index sequences in brackets: ``[t - 1, 0:T]``;
* parentheses only where precedence requires them.

Precedence, low to high: ``or``, ``and``, ``not``, comparisons
(non-associative), ``+ -``, ``* floordiv mod`` (all left-associative), unary
``-``, atoms (integers, identifiers, ``min(...)``, ``max(...)``,
``select(c, a, b)``, ``true``, ``false``, parenthesized expressions).

Note that ``&``, ``|`` and ``~`` in the Pythonic text bind like ``and``,
``or`` and ``not`` (looser than comparisons), unlike Python's operators:
``t > 0 & t < T`` means ``(t > 0) & (t < T)``.

The MLIR-safe form uses only integers, identifiers, ``+ - * : , ( ) [ ]``
and the keywords ``floordiv mod eq ne lt le gt ge and or not min max select
true false``.
"""

from __future__ import annotations

from .expr import Add, Const, Expr, FloorDiv, Max, Min, Mod, Mul, Neg, Sub, Symbol
from .indexing import IndexSeq, Slice
from .logic import And, BoolConst, Compare, Not, Or, Select

# Precedence levels.
LOWEST, OR, AND, NOT, CMP, ADD, MUL, UNARY, ATOM = range(9)

PYTHONIC_TOKENS = {
    "floordiv": "//", "mod": "%", "and": "&", "or": "|", "not": "~",
    "lt": "<", "le": "<=", "eq": "==", "ne": "!=", "ge": ">=", "gt": ">",
}
MLIR_TOKENS = {
    "floordiv": "floordiv", "mod": "mod", "and": "and", "or": "or", "not": "not ",
    "lt": "lt", "le": "le", "eq": "eq", "ne": "ne", "ge": "ge", "gt": "gt",
}


def to_text(e: Expr, mlir: bool = False) -> str:
    """Print ``e`` in the Pythonic form, or the MLIR-safe form with ``mlir=True``."""
    return _Printer(MLIR_TOKENS if mlir else PYTHONIC_TOKENS).text(e, LOWEST)


def to_mlir_text(e: Expr) -> str:
    """Shorthand for ``to_text(e, mlir=True)``."""
    return to_text(e, mlir=True)


class _Printer:
    def __init__(self, tokens: dict):
        self.tokens = tokens

    def text(self, e: Expr, min_level: int) -> str:
        body, level = self.print(e)
        return f"({body})" if level < min_level else body

    def print(self, e: Expr) -> tuple[str, int]:
        kind = type(e)
        a = e.args
        tok = self.tokens
        if kind is Const:
            return str(e.value), (ATOM if e.value >= 0 else UNARY)
        if kind is Symbol:
            return e.name, ATOM
        if kind is BoolConst:
            return ("true" if e.value else "false"), ATOM
        if kind in _CHAIN_LEVEL:
            return self.chain(e), _CHAIN_LEVEL[kind]
        if kind is Neg:
            return f"-{self.text(a[0], UNARY)}", UNARY
        if kind is Min or kind is Max:
            name = "min" if kind is Min else "max"
            return f"{name}({', '.join(self.text(x, LOWEST) for x in a)})", ATOM
        if kind is Select:
            return f"select({', '.join(self.text(x, LOWEST) for x in a)})", ATOM
        if kind is Compare:
            return f"{self.text(a[0], ADD)} {tok[e.op]} {self.text(a[1], ADD)}", CMP
        if kind is Not:
            return f"{tok['not']}{self.text(a[0], NOT)}", NOT
        if kind is And:
            return f" {tok['and']} ".join(self.text(x, NOT) for x in a), AND
        if kind is Or:
            return f" {tok['or']} ".join(self.text(x, AND) for x in a), OR
        if kind is Slice:
            step = "" if e.step == 1 else f":{e.step}"
            return f"{self.text(a[0], ADD)}:{self.text(a[1], ADD)}{step}", LOWEST
        if kind is IndexSeq:
            return "[" + ", ".join(self.text(x, LOWEST) for x in a) + "]", ATOM
        raise TypeError(f"cannot print {e!r}")

    def chain(self, e: Expr) -> str:
        """A left-associative run such as ``a + b - c`` or ``t // 2 * 3``.

        The left operands of one level are printed in a loop, not by recursion,
        so that long flat sums print in linear time and constant stack depth.
        """
        level = _CHAIN_LEVEL[type(e)]
        tails = []
        while _CHAIN_LEVEL.get(type(e)) == level:
            kind, a = type(e), e.args
            if kind is Add or kind is Sub:
                tails.append(f" {'+' if kind is Add else '-'} {self.text(a[1], MUL)}")
            elif kind is Mul:
                tails.append(f" * {self.text(a[1], UNARY)}")
            else:
                tails.append(f" {self.tokens['floordiv' if kind is FloorDiv else 'mod']} {e.divisor}")
            e = a[0]
        tails.append(self.text(e, level))
        return "".join(reversed(tails))


_CHAIN_LEVEL = {Add: ADD, Sub: ADD, Mul: MUL, FloorDiv: MUL, Mod: MUL}
