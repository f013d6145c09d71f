"""Exception types raised by the symbolic expression library.

Every error derives from :class:`SymbolicError` and also from the matching
built-in exception (``TypeError``, ``ValueError``, ``LookupError``) so callers
can catch either.  Messages always name the offending expression or text.
"""

from __future__ import annotations


class SymbolicError(Exception):
    """Base class of every error raised by ``tidal.symbolic``."""


class SymbolicTypeError(SymbolicError, TypeError):
    """An operand has the wrong kind (e.g. a boolean used in arithmetic)."""


class NonConstantDivisorError(SymbolicError, ValueError):
    """Floor division or modulo by something other than a positive constant."""


class InvalidSliceError(SymbolicError, ValueError):
    """A slice whose size may be negative at some valid point of its domain."""


class NonInvertibleError(SymbolicError, ValueError):
    """A dependence expression outside the class that :func:`invert` handles."""


class NonAffineError(SymbolicError, ValueError):
    """An expression that isl cannot represent (e.g. a product of two symbols)."""


class UnboundSymbolError(SymbolicError, LookupError):
    """Evaluation or compilation met a symbol with no value or parameter."""


class IslTranslationError(SymbolicError, ValueError):
    """An isl object has a shape that cannot be turned back into expressions."""


class ParseError(SymbolicError, ValueError):
    """Text that does not parse; the message names the text and the position."""

    def __init__(self, message: str, text: str, position: int):
        self.text = text
        self.position = position
        self.reason = message
        pointer = " " * (position + 2) + "^"
        super().__init__(
            f"{message} at position {position} in {text!r}\n  {text}\n{pointer}"
        )


class UnknownSymbolError(ParseError):
    """An identifier that the parser's symbol table does not define."""
