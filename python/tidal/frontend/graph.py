"""Creating nodes: program resolution, domain inference, lifting operands.

`make(op, inputs, attrs, shape, dtype, exprs=...)` is the one place nodes
are made. Its domain is the union (in program order, Fig. 6 of the paper)
of the inputs' domains and of the dims whose steps occur in the op's
symbolic attributes (`exprs`) and result shape: `td.arange(T)[t]` gains `t`.
"""
from __future__ import annotations

import numbers
from typing import Any, Iterable, Sequence

import numpy as np

from tidal.symbolic import Dim, Expr

from . import dtypes as dt
from .errors import TidalError, user_location
from .program import Program, current_program
from .shapes import canon
from .tensor import Node, RecurrentTensor

__all__ = ["make", "make_multi", "resolve_program", "lift", "constant", "symbol_value",
           "is_tensor", "is_scalar_like"]


def is_tensor(x: Any) -> bool:
    return isinstance(x, RecurrentTensor)


def is_scalar_like(x: Any) -> bool:
    """Python and NumPy scalars and integer/boolean symbolic expressions (weak operands)."""
    return dt.is_weak_scalar(x) or (isinstance(x, Expr) and x.kind in ("int", "bool"))


def resolve_program(values: Iterable[Any], what: str = "this operation") -> Program:
    """The program the tensors belong to (and the active one, if any, must agree)."""
    active = current_program(required=False)
    found: Program | None = None
    for v in values:
        if isinstance(v, RecurrentTensor):
            if found is None:
                found = v.program
            elif v.program is not found:
                raise TidalError(f"{what} mixes tensors of two different Programs "
                                 f"({found.name!r} and {v.program.name!r})",
                                 "a tensor can only be used in the Program that created it")
    if found is not None and active is not None and found is not active:
        raise TidalError(f"{what} uses a tensor from another Program ({found.name!r}) inside "
                         f"`with` Program {active.name!r}",
                         "a tensor can only be used in the Program that created it; "
                         "trace the computation again in this program")
    program = found or active
    if program is None:
        raise TidalError(f"{what} needs an active program", "trace inside `with td.Program() as p:`")
    return program


def _domain(program: Program, inputs: Sequence[RecurrentTensor], exprs: Iterable[Expr],
            extra: Iterable[Dim], what: str) -> tuple[Dim, ...]:
    dims: set[Dim] = set(extra)
    for x in inputs:
        dims.update(x.domain)
    for e in exprs:
        dims |= program.check_symbols(e, what)
    return program.canonical_domain(dims)


def make_multi(op: str, inputs: Sequence[RecurrentTensor], attrs: dict,
               results: Sequence[tuple[tuple, np.dtype]], *, exprs: Iterable[Expr] = (),
               extra_domain: Iterable[Dim] = (), program: Program | None = None,
               domain: tuple | None = None) -> tuple[RecurrentTensor, ...]:
    """Makes one node with several results, each `(shape, dtype)`."""
    inputs = tuple(inputs)
    results = [(tuple(canon(s) for s in shape), d) for shape, d in results]
    if program is None:
        program = resolve_program(inputs, f"rt.{op}")
    exprs = list(exprs) + [s for shape, _ in results for s in shape]
    if domain is None:
        domain = _domain(program, inputs, exprs, extra_domain, f"rt.{op}")
    node = Node(program, op, inputs, attrs, domain, user_location(), len(program.nodes))
    node.outputs = tuple(RecurrentTensor(node, i, tuple(shape), np.dtype(d))
                         for i, (shape, d) in enumerate(results))
    program.nodes.append(node)
    program.statements.append(node)
    return node.outputs


def make(op: str, inputs: Sequence[RecurrentTensor], attrs: dict, shape: tuple, dtype: np.dtype,
         **kw: Any) -> RecurrentTensor:
    """Makes one node with one result."""
    return make_multi(op, inputs, attrs, [(shape, dtype)], **kw)[0]


def constant(program: Program, value: Any, dtype: np.dtype | None = None) -> RecurrentTensor:
    """A (deduplicated) `rt.constant` of a NumPy-convertible value."""
    arr = np.asarray(value)
    dtype = dt.as_dtype(arr.dtype if dtype is None else dtype, "constant dtype")
    if arr.dtype != dtype:
        with np.errstate(all="ignore"):
            arr = arr.astype(dtype)
    arr = np.array(arr, order="C")
    key = (dtype.name, arr.shape, arr.tobytes())
    found = program._constants.get(key)
    if found is not None:
        return found
    from tidal.symbolic import Const

    shape = tuple(Const(int(n)) for n in arr.shape)
    out = make("constant", (), {"value": arr}, shape, dtype, program=program, domain=())
    program._constants[key] = out
    return out


def symbol_value(program: Program, expr: Expr) -> RecurrentTensor:
    """`rt.symbol_value <expr>`: a symbolic expression as a scalar tensor (i64, or bool)."""
    from .shapes import size
    from tidal.symbolic import simplify

    if expr.kind == "bool":
        e, dtype = simplify(expr), dt.BOOL
    else:
        e, dtype = size(expr, "symbolic value"), dt.INDEX
    key = ("symbol_value", e)
    found = program._constants.get(key)
    if found is None:
        found = make("symbol_value", (), {"expr": e}, (), dtype, program=program, exprs=[e])
        program._constants[key] = found
    return found


def lift(value: Any, program: Program, dtype: np.dtype | None = None,
         what: str = "operand") -> RecurrentTensor:
    """A tensor from a tensor, Python/NumPy scalar or array, or symbolic expression.

    With `dtype`, scalars and arrays become constants of that dtype (tensors
    are returned unchanged: casting is the caller's business).
    """
    if isinstance(value, RecurrentTensor):
        return value
    from .indexing import Masked

    if isinstance(value, Masked):
        raise TidalError(f"{what} is a conditional view x[cond], which can only be assigned or output",
                         "use td.where(cond, x, other) to combine values conditionally")
    if isinstance(value, Expr):
        if value.kind not in ("int", "bool"):
            raise TidalError(f"{what} `{value}` is a {value.kind} expression, not a value",
                             "only integer and boolean expressions can be used as tensors")
        out = symbol_value(program, value)
        if dtype is not None and out.dtype != dtype:
            from .ops_elementwise import astype

            out = astype(out, dtype)
        return out
    if isinstance(value, (numbers.Number, np.ndarray, np.generic, list, tuple)):
        arr = np.asarray(value)
        if arr.dtype == object:
            raise TidalError(f"{what} {value!r} is not numeric data",
                             "pass numbers, NumPy arrays, or tensors")
        if dtype is None and dt.is_python_scalar(value):
            dtype = dt.promote([], [dt.weak_kind(value)])
        if dtype is not None and dt.is_weak_scalar(value):
            dt.check_scalar_fits(value, dtype)
        return constant(program, arr, dtype)
    raise TidalError(f"{what} {value!r} of type {type(value).__name__} cannot be used as a tensor",
                     "pass a tensor, a number, a NumPy array, or a symbolic expression")
