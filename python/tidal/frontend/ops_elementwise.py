"""Elementwise ops: rt.unary, rt.binary, rt.where, rt.cast.

Operands broadcast as in NumPy (symbolic sizes must be equal or 1), dtypes
promote as in `dtypes.py`; operands are cast (`rt.cast`) to the dtype the op
computes in, because rt requires equal operand element types.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tidal.symbolic import Expr

from . import dtypes as dt
from .errors import TidalError
from .graph import is_tensor, lift, make, resolve_program
from .shapes import broadcast
from .tensor import RecurrentTensor

__all__ = [
    "astype", "unary", "binary", "where",
    "neg", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "abs", "sign", "sin", "cos",
    "floor", "ceil", "logical_not", "reciprocal", "square",
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod", "floordiv",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "clamp",
]

# The NumPy function whose dtype rules each kind follows.
_UNARY_NP = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": np.exp,
    "relu": np.positive, "sqrt": np.sqrt, "rsqrt": np.sqrt, "abs": np.absolute, "sign": np.sign,
    "sin": np.sin, "cos": np.cos, "floor": np.floor, "ceil": np.ceil, "not": np.logical_not,
    "reciprocal": np.reciprocal, "square": np.square,
}
_BINARY_NP = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "pow": np.power, "max": np.maximum, "min": np.minimum, "mod": np.mod,
    "floordiv": np.floor_divide, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
}
PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
LOGICAL = ("and", "or", "xor")


def astype(x: Any, dtype: Any) -> RecurrentTensor:
    """`rt.cast` to `dtype` (a no-op when the dtype is already `dtype`)."""
    dtype = dt.as_dtype(dtype)
    if not is_tensor(x):
        return lift(x, resolve_program([x], "astype"), dtype)
    if x.dtype == dtype:
        return x
    return make("cast", (x,), {}, x.shape, dtype)


def unary(kind: str, x: Any) -> RecurrentTensor:
    """`rt.unary <kind>`; integer inputs of float functions are cast as NumPy does."""
    program = resolve_program([x], kind)
    x = lift(x, program)
    if kind == "not" and x.dtype != dt.BOOL:
        raise TidalError(f"logical not (~) needs a bool tensor, got {x.dtype}",
                         "compare first (e.g. ~(x > 0)); bitwise not on integers is not supported")
    if kind == "neg" and x.dtype == dt.BOOL:
        raise TidalError("cannot negate a bool tensor", "use ~x for logical not, or cast with .astype(...)")
    out = dt.ufunc_result(_UNARY_NP[kind], x.dtype)
    if kind == "not":
        out = dt.BOOL
    x = astype(x, out)
    return make("unary", (x,), {"kind": kind}, x.shape, out)


def _dtype_operand(v: Any):
    """(strong dtype or None, weak kind or None) of one operand."""
    if is_tensor(v):
        return v.dtype, None
    if isinstance(v, Expr):
        return None, 0 if v.kind == "bool" else 1
    if dt.is_weak_scalar(v):
        return None, dt.weak_kind(v)
    arr = np.asarray(v)
    return dt.as_dtype(arr.dtype), None


def common_dtype(*operands: Any) -> np.dtype:
    strong, weak = [], []
    for v in operands:
        s, w = _dtype_operand(v)
        if s is not None:
            strong.append(s)
        else:
            weak.append(w)
    return dt.promote(strong, weak)


def _lift_as(v: Any, program, dtype: np.dtype) -> RecurrentTensor:
    return astype(lift(v, program, dtype), dtype)


def binary(kind: str, a: Any, b: Any) -> RecurrentTensor:
    """`rt.binary <kind>` with NumPy broadcasting and promotion."""
    program = resolve_program([a, b], kind)
    compute = common_dtype(a, b)
    if kind in LOGICAL and compute != dt.BOOL:
        raise TidalError(f"logical {kind} (&, |, ^) needs bool operands, got {compute}",
                         "compare first, e.g. (x > 0) & (y > 0); bitwise ops on integers are not supported")
    out = dt.ufunc_result(_BINARY_NP[kind], compute, compute)
    if kind not in PREDICATES and kind not in LOGICAL:
        compute = out
    for v in (a, b):
        if not is_tensor(v):
            dt.check_scalar_fits(v, compute)
    x, y = _lift_as(a, program, compute), _lift_as(b, program, compute)
    shape = broadcast(x.shape, y.shape, what=f"operands of {kind}")
    result = dt.BOOL if kind in PREDICATES else compute
    return make("binary", (x, y), {"kind": kind}, shape, result)


def where(cond: Any, a: Any, b: Any) -> RecurrentTensor:
    """`a` where the bool `cond` holds, else `b` (`rt.where`, broadcasting)."""
    program = resolve_program([cond, a, b], "where")
    c = lift(cond, program)
    if c.dtype != dt.BOOL:
        raise TidalError(f"the condition of where must be a bool tensor, got {c.dtype}",
                         "compare first, e.g. td.where(x > 0, x, 0.0)")
    compute = common_dtype(a, b)
    x, y = _lift_as(a, program, compute), _lift_as(b, program, compute)
    shape = broadcast(c.shape, x.shape, y.shape, what="operands of where")
    return make("where", (c, x, y), {}, shape, compute)


def _unary_fn(kind: str, name: str):
    def fn(x: Any) -> RecurrentTensor:
        return unary(kind, x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (`rt.unary {kind}`)."
    return fn


def _binary_fn(kind: str, name: str):
    def fn(a: Any, b: Any) -> RecurrentTensor:
        return binary(kind, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting (`rt.binary {kind}`)."
    return fn


neg = _unary_fn("neg", "neg")
exp = _unary_fn("exp", "exp")
log = _unary_fn("log", "log")
tanh = _unary_fn("tanh", "tanh")
sigmoid = _unary_fn("sigmoid", "sigmoid")
relu = _unary_fn("relu", "relu")
sqrt = _unary_fn("sqrt", "sqrt")
rsqrt = _unary_fn("rsqrt", "rsqrt")
abs = _unary_fn("abs", "abs")  # noqa: A001
sign = _unary_fn("sign", "sign")
sin = _unary_fn("sin", "sin")
cos = _unary_fn("cos", "cos")
floor = _unary_fn("floor", "floor")
ceil = _unary_fn("ceil", "ceil")
logical_not = _unary_fn("not", "logical_not")
reciprocal = _unary_fn("reciprocal", "reciprocal")
square = _unary_fn("square", "square")

add = _binary_fn("add", "add")
sub = _binary_fn("sub", "sub")
mul = _binary_fn("mul", "mul")
div = _binary_fn("div", "div")
pow = _binary_fn("pow", "pow")  # noqa: A001
maximum = _binary_fn("max", "maximum")
minimum = _binary_fn("min", "minimum")
mod = _binary_fn("mod", "mod")
floordiv = _binary_fn("floordiv", "floordiv")
eq = _binary_fn("eq", "eq")
ne = _binary_fn("ne", "ne")
lt = _binary_fn("lt", "lt")
le = _binary_fn("le", "le")
gt = _binary_fn("gt", "gt")
ge = _binary_fn("ge", "ge")
logical_and = _binary_fn("and", "logical_and")
logical_or = _binary_fn("or", "logical_or")
logical_xor = _binary_fn("xor", "logical_xor")


def clamp(x: Any, min: Any = None, max: Any = None) -> RecurrentTensor:  # noqa: A002
    """Elementwise clamp to [min, max] (either may be None)."""
    out = x
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return lift(out, resolve_program([x], "clamp"))
