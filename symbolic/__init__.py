"""Symbolic index expressions over temporal dimensions (``tidal.symbolic``).

The base layer of Tidal: it imports nothing else of Tidal, and ``islpy`` only
when :mod:`.isl_bridge` is imported.

>>> t, i = dims("t", "i")
>>> e = max_(0, t.step - 3)
>>> to_text(IndexSeq([i.step, Slice(e, t.step + 1)]), mlir=True)
'[i, max(0, t - 3):t + 1]'

Note on equality: ``==`` on integer expressions builds a comparison (like
numpy); use :meth:`Expr.same` / :func:`structurally_equal` for structural
equality.  Expressions are hashable (by structure) and hash-consed.
"""

from .analysis import Access, AccessPattern, check_slice, classify, provably_at_most, slice_size
from .errors import (
    InvalidSliceError,
    IslTranslationError,
    NonAffineError,
    NonConstantDivisorError,
    NonInvertibleError,
    ParseError,
    SymbolicError,
    SymbolicTypeError,
    UnboundSymbolError,
    UnknownSymbolError,
)
from .evaluation import compile_expr, compile_source, evaluate
from .expr import (
    RESERVED_WORDS,
    Add,
    Const,
    Dim,
    Expr,
    FloorDiv,
    Max,
    Min,
    Mod,
    Mul,
    Neg,
    Sub,
    Symbol,
    as_expr,
    dims,
    max_,
    min_,
    set_numeric_promotion,
    set_user_error_hook,
    smax,
    smin,
    structurally_equal,
)
from .indexing import IndexSeq, Slice, as_component, index_seq
from .inversion import Inversion, invert
from .logic import FALSE, TRUE, And, BoolConst, Compare, Not, Or, Select, select
from .simplifier import simplify
from .text_parser import parse
from .text_printer import to_mlir_text, to_text
from .transform import free_symbols, substitute

true = TRUE
false = FALSE

__all__ = [
    # construction
    "Expr", "Dim", "dims", "Symbol", "Const", "Add", "Sub", "Mul", "Neg", "FloorDiv", "Mod",
    "Min", "Max", "min_", "max_", "smin", "smax", "Compare", "And", "Or", "Not", "Select",
    "select", "BoolConst", "TRUE", "FALSE", "true", "false", "Slice", "IndexSeq", "index_seq",
    "as_expr", "as_component", "structurally_equal", "RESERVED_WORDS", "set_numeric_promotion",
    "set_user_error_hook",
    # operations
    "simplify", "evaluate", "compile_expr", "compile_source", "substitute", "free_symbols",
    "slice_size", "check_slice", "provably_at_most", "classify", "AccessPattern", "Access", "invert", "Inversion",
    # text
    "parse", "to_text", "to_mlir_text",
    # errors
    "SymbolicError", "SymbolicTypeError", "NonConstantDivisorError", "InvalidSliceError",
    "NonInvertibleError", "NonAffineError", "UnboundSymbolError", "IslTranslationError",
    "ParseError", "UnknownSymbolError",
]
