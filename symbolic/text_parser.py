"""Parsing the textual form (Pythonic and MLIR-safe tokens, freely mixed).

Grammar (see :mod:`.text_printer` for the precedence)::

    top        := sequence | component
    sequence   := '[' [component (',' component)*] ']'
    component  := or_expr [':' or_expr [':' or_expr]]
    or_expr    := and_expr (('or' | '|') and_expr)*
    and_expr   := not_expr (('and' | '&') not_expr)*
    not_expr   := ('not' | '~') not_expr | comparison
    comparison := sum [cmp_op sum]          (a second cmp_op is an error)
    sum        := product (('+' | '-') product)*
    product    := unary (('*' | '//' | 'floordiv' | '%' | 'mod') unary)*
    unary      := '-' unary | atom
    atom       := INT | IDENT | 'true' | 'false' | '(' or_expr ')'
                | ('min' | 'max') '(' or_expr (',' or_expr)* ')'
                | 'select' '(' or_expr ',' or_expr ',' or_expr ')'
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping

from .errors import ParseError, SymbolicError, UnknownSymbolError
from .expr import Add, Const, Dim, Expr, FloorDiv, Mod, Mul, Neg, Sub, Symbol, max_, min_
from .indexing import IndexSeq, Slice
from .logic import FALSE, TRUE, And, Compare, Not, Or, Select

_TOKEN = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>//|==|!=|<=|>=|[-+*%:,()\[\]<>&|~]))"
)
_KEYWORD_OPS = {
    "floordiv": "//", "mod": "%", "eq": "==", "ne": "!=", "lt": "<", "le": "<=",
    "gt": ">", "ge": ">=", "and": "&", "or": "|", "not": "~",
}
_COMPARISONS = {"<": "lt", "<=": "le", "==": "eq", "!=": "ne", ">=": "ge", ">": "gt"}
_FUNCTIONS = ("min", "max", "select")
_CONSTANTS = {"true": TRUE, "false": FALSE, "True": TRUE, "False": FALSE}


def _tokenize(text: str) -> list:
    tokens = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        match = _TOKEN.match(text, position)
        if match is None:
            raise ParseError(f"unexpected character {text[position]!r}", text, position)
        start = match.start(match.lastgroup)
        value = match.group(match.lastgroup)
        kind = match.lastgroup
        if kind == "ident" and value in _KEYWORD_OPS:
            kind, value = "op", _KEYWORD_OPS[value]
        tokens.append((kind, value, start))
        position = match.end()
    tokens.append(("end", "", len(text)))
    return tokens


def _convention_symbol(name: str) -> Symbol:
    """Resolve a name without a symbol table: ``t`` -> step of ``Dim("t")``, ``T`` -> its bound."""
    if name == name.lower() and name != name.upper():
        return Dim(name).step
    if name == name.upper() and name != name.lower():
        return Dim(name.lower()).bound
    raise KeyError(name)


def _symbol_table(dims: Iterable | None, symbols: Any) -> dict | None:
    if dims is None and symbols is None:
        return None
    table: dict = {}
    for d in dims or ():
        if not isinstance(d, Dim):
            raise TypeError(f"parse(dims=...) expects Dim objects, got {d!r}")
        table[d.step.name] = d.step
        table[d.bound.name] = d.bound
    if isinstance(symbols, Mapping):
        table.update(symbols)
    else:
        for s in symbols or ():
            table[s.name] = s
    return table


def parse(text: str, dims: Iterable[Dim] | None = None, symbols: Any = None, *, validate: bool = False) -> Expr:
    """Parse the textual form (Pythonic or MLIR-safe) into an expression.

    With ``dims`` (an iterable of :class:`Dim`) and/or ``symbols`` (symbols,
    or a name -> expression mapping), identifiers resolve against that table
    and unknown ones raise :class:`UnknownSymbolError`.  Without a table,
    all-lowercase names are the step of ``Dim(name)`` and all-uppercase names
    the bound of ``Dim(name.lower())``.

    ``validate=True`` checks every slice like the :class:`Slice` constructor
    does (its size must not be negative at any valid point); use it for text
    typed by users.  The default accepts any slice, because printed IR may
    legitimately hold slices that are empty where a condition is false (e.g.
    the inverse of ``[t // 2]`` is ``[2 * t:min(2 * t + 2, T)]`` if
    ``2 * t < T``), and ``parse(to_text(e))`` must give ``e`` back.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() expects a str, got {type(text).__name__}")
    return _Parser(text, _symbol_table(dims, symbols), validate).parse_top()


class _Parser:
    def __init__(self, text: str, table: dict | None, validate: bool):
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0
        self.table = table
        self.validate = validate

    # -- token helpers -------------------------------------------------------
    @property
    def current(self) -> tuple:
        return self.tokens[self.index]

    def error(self, message: str, position: int | None = None) -> ParseError:
        return ParseError(message, self.text, self.current[2] if position is None else position)

    def accept(self, op: str) -> bool:
        kind, value, _ = self.current
        if kind == "op" and value == op:
            self.index += 1
            return True
        return False

    def expect(self, op: str, context: str) -> None:
        if not self.accept(op):
            found = self.current[1] or "end of text"
            raise self.error(f"expected {op!r} {context}, found {found!r}")

    def build(self, position: int, factory: Callable, *args) -> Expr:
        try:
            return factory(*args)
        except SymbolicError as exc:
            raise ParseError(str(exc).splitlines()[0], self.text, position) from exc

    # -- grammar ---------------------------------------------------------------
    def parse_top(self) -> Expr:
        if self.current[:2] == ("op", "["):
            result = self.sequence()
        else:
            result = self.component()
        if self.current[0] != "end":
            raise self.error(f"unexpected {self.current[1]!r}")
        return result

    def sequence(self) -> Expr:
        position = self.current[2]
        self.expect("[", "to open an index sequence")
        components = []
        if not self.accept("]"):
            components.append(self.component())
            while self.accept(","):
                components.append(self.component())
            self.expect("]", "to close the index sequence")
        return self.build(position, lambda: IndexSeq(components, validate=self.validate))

    def component(self) -> Expr:
        start = self.or_expr()
        position = self.current[2]
        if not self.accept(":"):
            return start
        stop = self.or_expr()
        step: Any = 1
        if self.accept(":"):
            step = self.or_expr()
        return self.build(position, lambda: Slice(start, stop, step, validate=self.validate))

    def or_expr(self) -> Expr:
        operands = [self.and_expr()]
        position = self.current[2]
        while self.accept("|"):
            operands.append(self.and_expr())
        return operands[0] if len(operands) == 1 else self.build(position, Or, *operands)

    def and_expr(self) -> Expr:
        operands = [self.not_expr()]
        position = self.current[2]
        while self.accept("&"):
            operands.append(self.not_expr())
        return operands[0] if len(operands) == 1 else self.build(position, And, *operands)

    def not_expr(self) -> Expr:
        position = self.current[2]
        if self.accept("~"):
            return self.build(position, Not, self.not_expr())
        return self.comparison()

    def comparison(self) -> Expr:
        lhs = self.sum()
        kind, value, position = self.current
        if kind == "op" and value in _COMPARISONS:
            self.index += 1
            rhs = self.sum()
            following = self.current
            if following[0] == "op" and following[1] in _COMPARISONS:
                raise self.error("comparisons do not chain; use 'and'")
            return self.build(position, Compare, _COMPARISONS[value], lhs, rhs)
        return lhs

    def sum(self) -> Expr:
        result = self.product()
        while True:
            position = self.current[2]
            if self.accept("+"):
                result = self.build(position, Add, result, self.product())
            elif self.accept("-"):
                result = self.build(position, Sub, result, self.product())
            else:
                return result

    def product(self) -> Expr:
        result = self.unary()
        while True:
            position = self.current[2]
            if self.accept("*"):
                result = self.build(position, Mul, result, self.unary())
            elif self.accept("//"):
                result = self.build(position, FloorDiv, result, self.unary())
            elif self.accept("%"):
                result = self.build(position, Mod, result, self.unary())
            else:
                return result

    def unary(self) -> Expr:
        position = self.current[2]
        if self.accept("-"):
            return self.build(position, Neg, self.unary())
        return self.atom()

    def atom(self) -> Expr:
        kind, value, position = self.current
        if kind == "int":
            self.index += 1
            return Const(int(value))
        if kind == "ident":
            self.index += 1
            if value in _CONSTANTS:
                return _CONSTANTS[value]
            if value in _FUNCTIONS:
                return self.call(value, position)
            return self.symbol(value, position)
        if self.accept("("):
            inner = self.or_expr()
            self.expect(")", "to close the parenthesis")
            return inner
        found = value or "end of text"
        raise self.error(f"expected an expression, found {found!r}")

    def call(self, name: str, position: int) -> Expr:
        self.expect("(", f"after {name!r}")
        args = [self.or_expr()]
        while self.accept(","):
            args.append(self.or_expr())
        self.expect(")", f"to close {name}(...)")
        if name == "select":
            if len(args) != 3:
                raise self.error(f"select takes 3 arguments, got {len(args)}", position)
            return self.build(position, Select, *args)
        return self.build(position, min_ if name == "min" else max_, *args)

    def symbol(self, name: str, position: int) -> Expr:
        if self.table is None:
            try:
                return _convention_symbol(name)
            except KeyError:
                raise UnknownSymbolError(
                    f"cannot infer the role of symbol {name!r} (mixed case); pass dims=... or symbols=...",
                    self.text, position,
                ) from None
        if name not in self.table:
            known = ", ".join(sorted(self.table)) or "none"
            raise UnknownSymbolError(f"unknown symbol {name!r} (known: {known})", self.text, position)
        return self.table[name]
