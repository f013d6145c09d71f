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

The parser is iterative (operator precedence with explicit stacks), so its
time is linear in the text and it never recurses.  Parentheses, ``min`` /
``max`` / ``select`` calls and prefix operators (``-``, ``not``) may nest at
most :data:`MAX_NESTING_DEPTH` levels deep, like in the C++ parser of the
MLIR dialects; deeper text raises :class:`ParseError`.  Flat runs of binary
operators (``t + t + ... + t``) are not nesting and have no limit.
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

#: How deeply parentheses, function calls and prefix operators may nest (the
#: same limit as ``kMaxExprNestingDepth`` in dialects/common/SymbolicSyntax.h).
MAX_NESTING_DEPTH = 256
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
    """Operator-precedence parsing with explicit stacks (no recursion).

    One :class:`_Frame` per open context: the whole text or an index sequence
    (whose components may be slices), a parenthesis, a function call.  Each
    frame has an operand stack and an operator stack; an operator is applied
    ("reduced") when an operator that binds no tighter follows, or when the
    frame's expression ends.  Nodes are built in the same order and with the
    same error positions as a recursive-descent parser of the grammar.
    """

    def __init__(self, text: str, table: dict | None, validate: bool):
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0
        self.table = table
        self.validate = validate
        self.depth = 0  # open parentheses and calls, pending prefix operators
        self.conventional: dict = {}  # name -> symbol, when there is no table

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
            raise self.error(f"expected {op!r} {context}, found {self._found()!r}")

    def _found(self) -> str:
        return self.current[1] or "end of text"

    def build(self, position: int, factory: Callable, *args) -> Expr:
        try:
            return factory(*args)
        except SymbolicError as exc:
            raise ParseError(str(exc).splitlines()[0], self.text, position) from exc

    def enter(self, position: int) -> None:
        """One more nesting level, opened by the token at ``position``."""
        if self.depth >= MAX_NESTING_DEPTH:
            raise self.error(
                f"expression nested too deeply (more than {MAX_NESTING_DEPTH} levels of "
                f"parentheses, calls and prefix operators)", position)
        self.depth += 1

    # -- reductions ----------------------------------------------------------
    def reduce(self, frame: "_Frame", above: int) -> None:
        """Apply the frame's pending operators that bind tighter than ``above``."""
        ops, values = frame.ops, frame.values
        while ops and ops[-1][1] > above:
            kind, _, position, payload = ops.pop()
            if kind == _PREFIX:
                self.depth -= 1
                operand = values.pop()
                values.append(self.build(position, Not if payload == "~" else Neg, operand))
            elif kind == _NARY:
                operands = values[-payload[0]:]
                del values[-payload[0]:]
                values.append(self.build(position, Or if payload[1] == "|" else And, *operands))
            else:
                rhs = values.pop()
                lhs = values.pop()
                if payload in _COMPARISONS:
                    values.append(self.build(position, Compare, _COMPARISONS[payload], lhs, rhs))
                else:
                    values.append(self.build(position, _ARITHMETIC[payload], lhs, rhs))

    def finish(self, frame: "_Frame") -> Expr:
        """The frame's whole expression (all its operators applied)."""
        self.reduce(frame, 0)
        (value,) = frame.values
        frame.values.clear()
        return value

    # -- grammar ---------------------------------------------------------------
    def parse_top(self) -> Expr:
        frames = [_Frame(_SEQUENCE if self.current[:2] == ("op", "[") else _TOP, 0)]
        if frames[0].kind == _SEQUENCE:
            frames[0].position = self.current[2]
            self.index += 1
            if self.accept("]"):
                return self.end(IndexSeq([], validate=self.validate))
        while True:
            self.operand(frames)
            # After an operand: binary operators continue the frame's
            # expression; anything else ends it.
            while True:
                frame = frames[-1]
                kind, value, position = self.current
                level = _BINARY.get(value) if kind == "op" else None
                if level is not None:
                    self.binary(frame, value, level, position)
                    break
                self.reduce(frame, 0)
                if frame.kind == _PAREN:
                    self.expect(")", "to close the parenthesis")
                    self.depth -= 1
                    frames.pop()
                    frames[-1].values.append(self.finish(frame))
                    continue
                if frame.kind == _CALL:
                    frame.args.append(self.finish(frame))
                    if self.accept(","):
                        break
                    self.expect(")", f"to close {frame.name}(...)")
                    self.depth -= 1
                    frames.pop()
                    frames[-1].values.append(self.call(frame))
                    continue
                # A component of the top level or of the index sequence.
                if frame.colons < 2 and self.accept(":"):
                    if not frame.colons:
                        frame.slice_position = position
                    frame.colons += 1
                    frame.parts.append(self.finish(frame))
                    break
                component = self.component(frame)
                if frame.kind == _TOP:
                    return self.end(component)
                frame.components.append(component)
                if self.accept(","):
                    break
                self.expect("]", "to close the index sequence")
                return self.end(self.build(
                    frame.position, lambda: IndexSeq(frame.components, validate=self.validate)))

    def end(self, result: Expr) -> Expr:
        if self.current[0] != "end":
            raise self.error(f"unexpected {self.current[1]!r}")
        return result

    def operand(self, frames: list) -> None:
        """Prefix operators, opening parentheses and calls, then one atom."""
        while True:
            frame = frames[-1]
            kind, value, position = self.current
            if kind == "int":
                self.index += 1
                frame.values.append(Const(int(value)))
                return
            if kind == "ident":
                self.index += 1
                if value in _CONSTANTS:
                    frame.values.append(_CONSTANTS[value])
                    return
                if value not in _FUNCTIONS:
                    frame.values.append(self.symbol(value, position))
                    return
                opening = self.current[2]
                self.expect("(", f"after {value!r}")
                self.enter(opening)
                frames.append(_Frame(_CALL, position, value))
                continue
            if kind == "op" and value == "(":
                self.enter(position)
                self.index += 1
                frames.append(_Frame(_PAREN, position))
                continue
            # `-` may prefix any operand; `not` only a not_expr (the start of
            # an expression, of an `and`/`or` operand, or after `not`).
            if kind == "op" and (value == "-" or (value == "~" and (
                    not frame.ops or frame.ops[-1][0] == _NARY
                    or frame.ops[-1][3] == "~"))):
                self.enter(position)
                self.index += 1
                frame.ops.append((_PREFIX, _NOT_LEVEL if value == "~" else _NEG_LEVEL,
                                  position, value))
                continue
            raise self.error(f"expected an expression, found {self._found()!r}")

    def binary(self, frame: "_Frame", value: str, level: int, position: int) -> None:
        self.index += 1
        ops = frame.ops
        if level in (_OR_LEVEL, _AND_LEVEL):
            self.reduce(frame, level)
            if ops and ops[-1][0] == _NARY and ops[-1][3][1] == value:
                ops[-1][3][0] += 1
            else:
                ops.append((_NARY, level, position, [2, value]))
            return
        if level == _CMP_LEVEL:
            self.reduce(frame, level)
            if ops and ops[-1][1] == _CMP_LEVEL:
                raise self.error("comparisons do not chain; use 'and'", position)
        else:  # left-associative
            self.reduce(frame, level - 1)
        ops.append((_BINARY_OP, level, position, value))

    def component(self, frame: "_Frame") -> Expr:
        """The frame's finished component: an expression or a slice."""
        value = self.finish(frame)
        parts, frame.parts = frame.parts + [value], []
        colons, frame.colons = frame.colons, 0
        if not colons:
            return value
        start, stop, step = parts[0], parts[1], (parts[2] if colons == 2 else 1)
        return self.build(frame.slice_position,
                          lambda: Slice(start, stop, step, validate=self.validate))

    def call(self, frame: "_Frame") -> Expr:
        name, args, position = frame.name, frame.args, frame.position
        if name == "select":
            if len(args) != 3:
                raise self.error(f"select takes 3 arguments, got {len(args)}", position)
            return self.build(position, Select, *args)
        return self.build(position, min_ if name == "min" else max_, *args)

    def symbol(self, name: str, position: int) -> Expr:
        if self.table is None:
            found = self.conventional.get(name)
            if found is not None:
                return found
            try:
                found = self.conventional[name] = _convention_symbol(name)
                return found
            except KeyError:
                raise UnknownSymbolError(
                    f"cannot infer the role of symbol {name!r} (mixed case); pass dims=... or symbols=...",
                    self.text, position,
                ) from None
        if name not in self.table:
            known = ", ".join(sorted(self.table)) or "none"
            raise UnknownSymbolError(f"unknown symbol {name!r} (known: {known})", self.text, position)
        return self.table[name]


# Frame kinds and operator-stack entries of the parser.
_TOP, _SEQUENCE, _PAREN, _CALL = "top", "sequence", "paren", "call"
_PREFIX, _NARY, _BINARY_OP = "prefix", "nary", "binary"
# Binding strength, loose to tight (as in the grammar above).
_OR_LEVEL, _AND_LEVEL, _NOT_LEVEL, _CMP_LEVEL, _ADD_LEVEL, _MUL_LEVEL, _NEG_LEVEL = range(1, 8)
_BINARY = {"|": _OR_LEVEL, "&": _AND_LEVEL, "+": _ADD_LEVEL, "-": _ADD_LEVEL,
           "*": _MUL_LEVEL, "//": _MUL_LEVEL, "%": _MUL_LEVEL,
           **{op: _CMP_LEVEL for op in _COMPARISONS}}
_ARITHMETIC = {"+": Add, "-": Sub, "*": Mul, "//": FloorDiv, "%": Mod}


class _Frame:
    """One open context of :class:`_Parser`."""

    __slots__ = ("kind", "position", "name", "values", "ops", "args", "components", "parts",
                 "colons", "slice_position")

    def __init__(self, kind: str, position: int, name: str = ""):
        self.kind = kind
        self.position = position  # of `[`, `(` or the function name
        self.name = name
        self.values: list = []  # operands
        self.ops: list = []  # (kind, level, position, payload) of pending operators
        self.args: list = []  # a call's finished arguments
        self.components: list = []  # a sequence's finished components
        self.parts: list = []  # the finished start (and stop) of a slice
        self.colons = 0
        self.slice_position = 0
