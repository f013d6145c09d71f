"""Reductions, scans, softmax, discounted sums and matmul.

`sum/prod/max/min/any/all/argmax/argmin` are `rt.reduce`, `cumsum/cumprod/cummax/cummin`
are `rt.scan`; `mean`, `softmax`, `log_softmax`, `logsumexp` and
`discounted_sum` are built from primitives. Result dtypes follow NumPy
(`sum` of int32 is int64, `mean` of ints is float64).
"""
from __future__ import annotations

import builtins
import numbers
from typing import Any

import numpy as np

from tidal.symbolic import Const

from . import dtypes as dt
from .errors import TidalError
from .graph import lift, make, resolve_program, symbol_value
from .ops_elementwise import astype, binary, exp, log
from .shapes import broadcast, norm_dim, norm_dims, numel, provably, static
from .tensor import RecurrentTensor

__all__ = ["reduce", "sum", "prod", "mean", "amax", "amin", "any", "all", "argmax", "argmin", "scan",
           "cumsum", "cumprod", "cummax", "cummin", "softmax", "log_softmax", "logsumexp",
           "discounted_sum", "linear_scan", "matmul"]

_NP_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}
_NP_SCAN = {"cumsum": np.cumsum, "cumprod": np.cumprod,
            "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}


def _tensor(x: Any, what: str) -> RecurrentTensor:
    return lift(x, resolve_program([x], what))


def reduce(kind: str, x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:
    """`rt.reduce <kind> [dims]` over spatial dims (`dim=None`: all of them)."""
    x = _tensor(x, kind)
    dims = norm_dims(dim, x.ndim, f"{kind} dim")
    if not dims:
        return x
    if kind in ("any", "all"):
        if x.dtype != dt.BOOL:
            x = binary("ne", x, 0)
        out = dt.BOOL
    else:
        out = dt.reduction_result(_NP_REDUCE[kind], x.dtype)
        x = astype(x, out)
    if keepdim:
        shape = tuple(Const(1) if i in dims else s for i, s in enumerate(x.shape))
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
    return make("reduce", (x,), {"kind": kind, "dims": dims, "keepdim": bool(keepdim)}, shape, out)


def sum(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:  # noqa: A001
    """Sum over `dim` (an int, ints, or None for all)."""
    return reduce("sum", x, dim, keepdim)


def prod(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:
    return reduce("prod", x, dim, keepdim)


def amax(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:
    """Maximum over `dim` (values only; `td.argmax` gives the position)."""
    return reduce("max", x, dim, keepdim)


def amin(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:
    return reduce("min", x, dim, keepdim)


def any(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:  # noqa: A001
    return reduce("any", x, dim, keepdim)


def all(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:  # noqa: A001
    return reduce("all", x, dim, keepdim)


def _arg_extremum(kind: str, x: Any, dim: Any, keepdim: bool) -> RecurrentTensor:
    """`rt.reduce argmax|argmin [d]`: the int64 position of the first extremum along one dim."""
    from .ops_shape import reshape

    x = _tensor(x, kind)
    if dim is None:  # NumPy: the position in the flattened (row-major) tensor
        flat = x if x.ndim == 1 else reshape(x, numel(x.shape))
        out = _arg_extremum(kind, flat, 0, False)
        return reshape(out, *([1] * x.ndim)) if keepdim and x.ndim else out
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise TidalError(f"{kind} dim must be an int or None, got {dim!r}",
                         f"{kind} reduces one dimension (or the flattened tensor with dim=None)")
    d = norm_dim(dim, x.ndim, f"{kind} dim")
    if static(x.shape[d]) == 0:
        raise TidalError(f"{kind} of an empty dimension (dim {d} of shape "
                         f"({', '.join(str(s) for s in x.shape)}))",
                         "there is no position to return; reduce a non-empty dimension")
    if keepdim:
        shape = tuple(Const(1) if i == d else s for i, s in enumerate(x.shape))
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i != d)
    return make("reduce", (x,), {"kind": kind, "dims": (d,), "keepdim": bool(keepdim)}, shape, dt.INDEX)


def argmax(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:
    """The position (int64) of the first maximum along `dim`, as `torch.argmax`/`np.argmax`.

    `dim=None` returns the position in the flattened tensor (row-major).
    Ties give the first position; a NaN counts as the maximum (the first NaN
    wins), as in NumPy and PyTorch. Not differentiable (an integer result:
    gradients do not flow through it). For example, greedy decoding::

        tok = td.argmax(logits[t], dim=-1)           # int64, shape of logits without the dim
        best = x[td.max(0, t - 2):t + 1].argmax(0)   # per t, over a sliding window
    """
    return _arg_extremum("argmax", x, dim, keepdim)


def argmin(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:
    """The position (int64) of the first minimum along `dim` (see `argmax`; NaN
    counts as the minimum too, as in NumPy)::

        i = td.argmin(dists, dim=1)                  # nearest centroid per row
    """
    return _arg_extremum("argmin", x, dim, keepdim)


def _count(x: RecurrentTensor, dims: tuple, dtype: np.dtype) -> Any:
    """The number of reduced elements: a Python int, or a tensor when symbolic."""
    n = numel([x.shape[i] for i in dims])
    v = static(n)
    if v is not None:
        return v
    return astype(symbol_value(x.program, n), dtype)


def mean(x: Any, dim: Any = None, keepdim: bool = False) -> RecurrentTensor:
    """Arithmetic mean over `dim` (float result, as `np.mean`)."""
    x = _tensor(x, "mean")
    dims = norm_dims(dim, x.ndim, "mean dim")
    out = dt.reduction_result(np.mean, x.dtype)
    x = astype(x, out)
    return binary("div", reduce("sum", x, dims, keepdim), _count(x, dims, out))


def scan(kind: str, x: Any, dim: int = 0, reverse: bool = False) -> RecurrentTensor:
    """`rt.scan <kind> dim (reverse)`: an inclusive scan along one spatial dim."""
    x = _tensor(x, kind)
    d = norm_dim(dim, x.ndim, f"{kind} dim")
    out = dt.reduction_result(_NP_SCAN[kind], x.dtype)
    x = astype(x, out)
    return make("scan", (x,), {"kind": kind, "dim": d, "reverse": bool(reverse)}, x.shape, out)


def cumsum(x: Any, dim: int = 0, reverse: bool = False) -> RecurrentTensor:
    """Inclusive cumulative sum along `dim` (from the end with `reverse=True`)."""
    return scan("cumsum", x, dim, reverse)


def cumprod(x: Any, dim: int = 0, reverse: bool = False) -> RecurrentTensor:
    return scan("cumprod", x, dim, reverse)


def cummax(x: Any, dim: int = 0, reverse: bool = False) -> RecurrentTensor:
    return scan("cummax", x, dim, reverse)


def cummin(x: Any, dim: int = 0, reverse: bool = False) -> RecurrentTensor:
    return scan("cummin", x, dim, reverse)


def _float(x: Any, what: str) -> RecurrentTensor:
    x = _tensor(x, what)
    return astype(x, dt.ufunc_result(np.exp, x.dtype))


def softmax(x: Any, dim: int = -1) -> RecurrentTensor:
    """exp(x - max) / sum(exp(x - max)) along `dim`."""
    x = _float(x, "softmax")
    d = norm_dim(dim, x.ndim, "softmax dim")
    e = exp(binary("sub", x, amax(x, d, keepdim=True)))
    return binary("div", e, sum(e, d, keepdim=True))


def logsumexp(x: Any, dim: int = -1, keepdim: bool = False) -> RecurrentTensor:
    """log(sum(exp(x))) along `dim`, computed stably."""
    x = _float(x, "logsumexp")
    d = norm_dim(dim, x.ndim, "logsumexp dim")
    m = amax(x, d, keepdim=True)
    out = binary("add", log(sum(exp(binary("sub", x, m)), d, keepdim=True)), m)
    return out if keepdim else reduce_squeeze(out, d)


def reduce_squeeze(x: RecurrentTensor, d: int) -> RecurrentTensor:
    from .ops_shape import squeeze

    return squeeze(x, d)


def log_softmax(x: Any, dim: int = -1) -> RecurrentTensor:
    """x - logsumexp(x) along `dim`."""
    x = _float(x, "log_softmax")
    d = norm_dim(dim, x.ndim, "log_softmax dim")
    return binary("sub", x, logsumexp(x, d, keepdim=True))


def linear_scan(a: Any, b: Any, dim: int = 0, reverse: bool = False) -> RecurrentTensor:
    """The first-order linear recurrence along `dim` (`rt.linear_scan`):
    `y[k] = b[k] + a[k] * y[k - 1]` from the start (y[-1] = 0), or with
    `reverse=True` `y[k] = b[k] + a[k] * y[k + 1]` from the end. `a` broadcasts
    to `b`'s shape; both are cast to their common floating-point type.
    `a = gamma` reversed gives discounted returns, `a = 1` a cumulative sum."""
    from .ops_elementwise import common_dtype
    from .ops_shape import expand

    program = resolve_program([a, b], "linear_scan")
    compute = common_dtype(a, b)
    if not dt.is_float(compute):
        compute = dt.ufunc_result(np.exp, compute)
    x = astype(lift(b, program, compute), compute)
    c = astype(lift(a, program, compute), compute)
    d = norm_dim(dim, x.ndim, "linear_scan dim")
    if c.ndim > x.ndim:
        raise TidalError(f"linear_scan coefficients of shape {_s(c.shape)} do not broadcast to the values' "
                         f"shape {_s(x.shape)}", "the coefficients `a` must broadcast to `b`'s shape")
    if not _same_shape(c.shape, x.shape):
        c = expand(c, *x.shape)
    return make("linear_scan", (c, x), {"dim": d, "reverse": bool(reverse)}, x.shape, compute)


def _same_shape(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and builtins.all(p.same(q) for p, q in zip(a, b))


def discounted_sum(x: Any, gamma: Any, dim: int = 0, keepdim: bool = False) -> RecurrentTensor:
    """sum_k gamma**k * x[k] along `dim` (k counts from 0 at the start of `dim`).

    A scalar `gamma` is built from primitives: k = iota, w = gamma ** k
    (broadcast along the trailing dims), then sum(x * w, dim). A tensor `gamma`
    of x's shape (or broadcasting to it) holds per-step discounts:
    sum_k (gamma[0] * ... * gamma[k - 1]) * x[k], so `gamma * (1 - done)` cuts
    the sum after the step that ends an episode; it is the first element of a
    reverse `linear_scan(gamma, x)`.
    """
    from .creation import arange
    from .ops_shape import pad, take, unsqueeze

    x = _tensor(x, "discounted_sum")
    d = norm_dim(dim, x.ndim, "discounted_sum dim")
    program = x.program
    if isinstance(gamma, RecurrentTensor) and gamma.ndim != 0:
        scan = linear_scan(gamma, x, d, reverse=True)
        if not provably(x.shape[d] >= 1):   # may be empty (x[max(0, t - 2):t]): one zero more, read first
            scan = pad(scan, (0, 1), dim=d)
        out = take(scan, d, 0)
        return unsqueeze(out, d) if keepdim else out
    dtype = dt.promote([x.dtype] + ([] if not isinstance(gamma, RecurrentTensor) else [gamma.dtype]),
                       [] if isinstance(gamma, RecurrentTensor) else [2])
    k = astype(arange(x.shape[d], program=program), dtype)
    g = lift(gamma, program, dtype) if not isinstance(gamma, RecurrentTensor) else astype(gamma, dtype)
    w = binary("pow", g, k)
    for _ in range(x.ndim - 1 - d):
        w = unsqueeze(w, -1)
    return sum(binary("mul", astype(x, dtype), w), d, keepdim)


def matmul(a: Any, b: Any) -> RecurrentTensor:
    """Matrix product with `numpy.matmul` semantics (`rt.matmul`)."""
    from .ops_elementwise import common_dtype

    program = resolve_program([a, b], "matmul")
    compute = common_dtype(a, b)
    x, y = astype(lift(a, program, compute), compute), astype(lift(b, program, compute), compute)
    if x.ndim == 0 or y.ndim == 0:
        raise TidalError("matmul (@) needs operands of rank >= 1, got a scalar",
                         "use * for scalar multiplication")
    xs = x.shape if x.ndim > 1 else (Const(1),) + x.shape
    ys = y.shape if y.ndim > 1 else y.shape + (Const(1),)
    if not xs[-1].same(ys[-2]):
        raise TidalError(f"shape mismatch in matmul (@): contracted sizes differ "
                         f"({xs[-1]} vs {ys[-2]}) for shapes {_s(x.shape)} @ {_s(y.shape)}",
                         "the last dim of the left operand must equal the second-to-last of the "
                         "right one; transpose (.T) or reshape an operand")
    batch = broadcast(xs[:-2], ys[:-2], what="matmul batch dims")
    shape = batch + ((xs[-2],) if x.ndim > 1 else ()) + ((ys[-1],) if y.ndim > 1 else ())
    return make("matmul", (x, y), {}, shape, compute)


def _s(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"

