"""Operators and PyTorch-style methods of RecurrentTensor, and the
dual-purpose `td.max` / `td.min`.

`td.max(a, b, ...)` on ints/symbolic expressions is the symbolic max
(`tidal.symbolic.max_`, for indices such as `x[td.max(0, t - 2):t + 1]`);
`td.max(x)` / `td.max(x, dim=0, keepdim=False)` on a tensor is the
reduction (values only: `td.argmax` gives positions); `td.max(x, y)` with a tensor is
the elementwise `td.maximum` (as in PyTorch, an int second argument is a
dim: `td.max(x, 0)` reduces dim 0; use `td.maximum(x, 0)` to clamp). Same
for `td.min`. Methods: `x.max()`, `x.max(0)`, `x.max(dim=0)`,
`x.max(other_tensor)`.
"""
from __future__ import annotations

import numbers
from typing import Any

from tidal.symbolic import Expr, max_ as _smax, min_ as _smin

from . import ops_elementwise as E
from . import ops_reduce as R
from . import ops_shape as S
from . import ops_sort as O
from .errors import TidalError
from .tensor import RecurrentTensor

__all__ = ["max", "min"]


def _is_dim(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, numbers.Integral) or (
        isinstance(v, (tuple, list)) and all(isinstance(d, numbers.Integral) for d in v))


def _extremum(kind: str, args: tuple, dim: Any, keepdim: bool) -> Any:
    elementwise = E.maximum if kind == "max" else E.minimum
    if not any(isinstance(a, RecurrentTensor) for a in args):
        if dim is not None or not args or \
                not all(isinstance(a, (numbers.Integral, Expr)) for a in args):
            raise TidalError(f"td.{kind} needs integer/symbolic arguments or a tensor, got {args!r}",
                             f"e.g. td.{kind}(0, t - 2) or td.{kind}(x, dim=0)")
        return (_smax if kind == "max" else _smin)(*args)
    if isinstance(args[0], RecurrentTensor) and len(args) <= 2:
        if len(args) == 1:
            return R.reduce(kind, args[0], dim, keepdim)
        if _is_dim(args[1]) and dim is None:  # torch.max(x, 0): a reduction over dim 0
            return R.reduce(kind, args[0], args[1], keepdim)
    if dim is not None:
        raise TidalError(f"td.{kind}(a, b, dim=...) mixes elementwise and reduction forms",
                         f"use td.{kind}(x, dim=0) or td.{elementwise.__name__}(a, b)")
    out = args[0]
    for a in args[1:]:
        out = elementwise(out, a)
    return out


def max(*args: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Symbolic max of expressions, reduction of a tensor, or elementwise maximum."""
    return _extremum("max", args, dim, keepdim)


def min(*args: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001
    """Symbolic min of expressions, reduction of a tensor, or elementwise minimum."""
    return _extremum("min", args, dim, keepdim)


def _method_extremum(kind: str):
    def method(self: RecurrentTensor, other: Any = None, dim: Any = None, keepdim: bool = False):
        if isinstance(other, RecurrentTensor) or isinstance(other, float):
            if dim is not None:
                raise TidalError(f"x.{kind}(other, dim=...) mixes two forms", f"use x.{kind}(dim=...)")
            return (E.maximum if kind == "max" else E.minimum)(self, other)
        d = other if other is not None else dim
        return R.reduce(kind, self, d, keepdim)

    method.__name__ = kind
    method.__doc__ = (f"x.{kind}(dim=None, keepdim=False) reduces (values only); "
                      f"x.{kind}(other_tensor) is elementwise.")
    return method


def _swap(fn):
    def method(self, other):
        return fn(other, self)

    return method


def _backward(self: RecurrentTensor, inputs: Any = None) -> list:
    """`loss.backward(inputs=None)`: gradients of this scalar loss (tidal.autodiff),
    recorded as `x.grad` for each input (default: the program's parameters)."""
    from tidal.autodiff import backward

    return backward(self, inputs)


def _grad(self: RecurrentTensor) -> Any:
    from tidal.autodiff import grad_of

    return grad_of(self)


def _bind() -> None:
    T = RecurrentTensor
    ops = {
        "__add__": E.add, "__radd__": _swap(E.add), "__sub__": E.sub, "__rsub__": _swap(E.sub),
        "__mul__": E.mul, "__rmul__": _swap(E.mul), "__truediv__": E.div,
        "__rtruediv__": _swap(E.div), "__floordiv__": E.floordiv, "__rfloordiv__": _swap(E.floordiv),
        "__mod__": E.mod, "__rmod__": _swap(E.mod), "__pow__": E.pow, "__rpow__": _swap(E.pow),
        "__matmul__": R.matmul, "__rmatmul__": _swap(R.matmul),
        "__lt__": E.lt, "__le__": E.le, "__gt__": E.gt, "__ge__": E.ge, "__eq__": E.eq, "__ne__": E.ne,
        "__and__": E.logical_and, "__rand__": _swap(E.logical_and), "__or__": E.logical_or,
        "__ror__": _swap(E.logical_or), "__xor__": E.logical_xor, "__rxor__": _swap(E.logical_xor),
        "__neg__": E.neg, "__invert__": E.logical_not, "__abs__": E.abs,
    }
    for name, fn in ops.items():
        setattr(T, name, fn)
    T.__pos__ = lambda self: self
    T.__hash__ = object.__hash__  # defining __eq__ would otherwise unset it
    for name in ("exp", "log", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "abs", "sign", "sin",
                 "cos", "floor", "ceil", "reciprocal", "square", "neg", "logical_not", "pow",
                 "maximum", "minimum", "logical_and", "logical_or", "logical_xor", "add", "sub",
                 "mul", "div", "eq", "ne", "lt", "le", "gt", "ge", "astype"):
        setattr(T, name, getattr(E, name))
    T.negative = E.neg
    T.clamp = T.clip = E.clamp
    T.cast = T.to = E.astype
    T.float = lambda self: E.astype(self, "float32")
    T.double = lambda self: E.astype(self, "float64")
    T.half = lambda self: E.astype(self, "float16")
    T.int = lambda self: E.astype(self, "int32")
    T.long = lambda self: E.astype(self, "int64")
    T.bool = lambda self: E.astype(self, "bool")
    T.where = lambda self, cond, other: E.where(cond, self, other)
    for name in ("sum", "prod", "mean", "any", "all", "amax", "amin", "cumsum", "cumprod", "cummax",
                 "cummin", "softmax", "log_softmax", "logsumexp", "discounted_sum", "matmul",
                 "argmax", "argmin"):
        setattr(T, name, getattr(R, name))
    for name in ("argsort", "sort", "topk"):
        setattr(T, name, getattr(O, name))
    T.max = _method_extremum("max")
    T.min = _method_extremum("min")
    T.dot = R.matmul
    for name in ("reshape", "flatten", "permute", "transpose", "expand", "unsqueeze", "squeeze",
                 "flip", "index_select", "gather", "scatter_add", "take", "slice", "pad"):
        setattr(T, name, getattr(S, name))
    T.view = S.reshape
    T.select = S.take
    T.index = S.take
    T.backward = _backward
    T.grad = property(_grad, doc="The gradient recorded by the last `backward()` (None if none).")
    T.T = property(S.T)
    T.mT = property(lambda self: S.transpose(self, -2, -1))


_bind()
