"""Array kernels for the tensor operator set (dialects/common/TensorOpSet.td).

One function per op. Every kernel takes the array module `xp` first (NumPy
for the reference interpreter, `jax.numpy` for the scheduled runtime), then
the op's static attributes, already decoded into plain Python (kind names
such as "add", dims as ints, symbolic sizes evaluated at the point), then the
input arrays, and returns an array of the result's element type `dtype`
(a NumPy dtype). Kernels never mutate their inputs and use only functions
that NumPy and jax.numpy share.

Conventions where NumPy and the op set leave a choice:

* `div` on integers truncates toward zero (true division, then cast);
  `mod` and `floordiv` follow Python (floor) semantics, like `tidal.symbolic`.
* `reduce max/min/argmax/argmin` over an empty dimension is an error.
* `reduce argmax/argmin` reduce one dimension to the position of its first
  maximal/minimal element, a NaN counting as both (NumPy's rule, which
  `jnp.argmax`/`jnp.argmin` follow too).
* `argsort` is stable; descending is the reversed ascending order of the
  flipped operand, so ties keep their order and NaN (last ascending) comes
  first, as `torch.sort(stable=True)`.
* `gather`/`scatter_add` follow `torch.gather`/`torch.scatter_add`: the index
  may be smaller than the source/destination outside `dim`. Index values are
  range-checked on NumPy arrays only (no data-dependent checks under jax).
* `random` draws from a counter-based generator (counter_random.py): a pure
  function of the seed, the point and the element index, in float64, then
  cast to `dtype`, with the same bits on NumPy and under jit.
* bfloat16 (`ml_dtypes.bfloat16`) accumulates in float32: `reduce sum/prod`,
  `scan cumsum/cumprod`, `linear_scan` and `matmul` compute in float32 and round
  the result to bfloat16 once, on NumPy and under jax alike (NumPy would add in
  bfloat16, where 256 + 1 is 256). Elementwise ops round each result to
  bfloat16 on NumPy; XLA may keep a fused chain in float32 (excess precision),
  so the backends agree within a few bfloat16 ulps, not bit for bit.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tidal.dialects.element_types import BFLOAT16

from .counter_random import random_draw

__all__ = [
    "UNARY_KINDS", "BINARY_KINDS", "REDUCE_KINDS", "SCAN_KINDS", "RANDOM_DISTS", "KernelError",
    "unary", "binary", "where", "reduce", "scan", "linear_scan", "argsort", "matmul", "reshape", "permute", "expand",
    "squeeze", "unsqueeze", "flip", "slice_", "take", "index_select", "gather", "scatter_add",
    "concat", "pad", "cast", "constant", "full", "iota", "random", "symbol_value",
]


class KernelError(ValueError):
    """A kernel's inputs do not fit its attributes (out-of-range slice, ...)."""


def _out(xp, value, dtype):
    return xp.asarray(value, dtype=dtype)


def _wide(xp, x):
    """`x` in float32 if it is bfloat16 (the dtype bfloat16 accumulates in), else `x`."""
    return x.astype(np.float32) if np.dtype(x.dtype) == BFLOAT16 else x


def _sigmoid(xp, x):
    return 0.5 * (xp.tanh(0.5 * x) + 1)


UNARY_KINDS = {
    "neg": lambda xp, x: -x,
    "exp": lambda xp, x: xp.exp(x),
    "log": lambda xp, x: xp.log(x),
    "tanh": lambda xp, x: xp.tanh(x),
    "sigmoid": _sigmoid,
    "relu": lambda xp, x: xp.maximum(x, xp.zeros((), dtype=x.dtype)),
    "sqrt": lambda xp, x: xp.sqrt(x),
    "rsqrt": lambda xp, x: 1 / xp.sqrt(x),
    "abs": lambda xp, x: xp.abs(x),
    "sign": lambda xp, x: xp.sign(x),
    "sin": lambda xp, x: xp.sin(x),
    "cos": lambda xp, x: xp.cos(x),
    "floor": lambda xp, x: xp.floor(x),
    "ceil": lambda xp, x: xp.ceil(x),
    "not": lambda xp, x: xp.logical_not(x),
    "reciprocal": lambda xp, x: 1 / x,
    "square": lambda xp, x: x * x,
}


def _div(xp, a, b):
    if xp.issubdtype(a.dtype, xp.integer) and xp.issubdtype(b.dtype, xp.integer):
        return xp.trunc(xp.true_divide(a, b))
    return xp.true_divide(a, b)


BINARY_KINDS = {
    "add": lambda xp, a, b: a + b,
    "sub": lambda xp, a, b: a - b,
    "mul": lambda xp, a, b: a * b,
    "div": _div,
    "pow": lambda xp, a, b: xp.power(a, b),
    "max": lambda xp, a, b: xp.maximum(a, b),
    "min": lambda xp, a, b: xp.minimum(a, b),
    "mod": lambda xp, a, b: xp.mod(a, b),
    "floordiv": lambda xp, a, b: xp.floor_divide(a, b),
    "eq": lambda xp, a, b: a == b,
    "ne": lambda xp, a, b: a != b,
    "lt": lambda xp, a, b: a < b,
    "le": lambda xp, a, b: a <= b,
    "gt": lambda xp, a, b: a > b,
    "ge": lambda xp, a, b: a >= b,
    "and": lambda xp, a, b: xp.logical_and(a, b),
    "or": lambda xp, a, b: xp.logical_or(a, b),
    "xor": lambda xp, a, b: xp.logical_xor(a, b),
}


def _one_axis(axes: tuple) -> int:
    if len(axes) != 1:
        raise KernelError(f"argmax/argmin reduce exactly one dimension, got {list(axes)}")
    return axes[0]


REDUCE_KINDS = {
    "sum": lambda xp, x, axes, keep: xp.sum(x, axis=axes, keepdims=keep),
    "prod": lambda xp, x, axes, keep: xp.prod(x, axis=axes, keepdims=keep),
    "max": lambda xp, x, axes, keep: xp.max(x, axis=axes, keepdims=keep),
    "min": lambda xp, x, axes, keep: xp.min(x, axis=axes, keepdims=keep),
    "any": lambda xp, x, axes, keep: xp.any(x, axis=axes, keepdims=keep),
    "all": lambda xp, x, axes, keep: xp.all(x, axis=axes, keepdims=keep),
    "argmax": lambda xp, x, axes, keep: xp.argmax(x, axis=_one_axis(axes), keepdims=keep),
    "argmin": lambda xp, x, axes, keep: xp.argmin(x, axis=_one_axis(axes), keepdims=keep),
}

SCAN_KINDS = {
    "cumsum": lambda xp, x, axis: xp.cumsum(x, axis=axis, dtype=x.dtype),
    "cumprod": lambda xp, x, axis: xp.cumprod(x, axis=axis, dtype=x.dtype),
    "cummax": lambda xp, x, axis: xp.maximum.accumulate(x, axis=axis),
    "cummin": lambda xp, x, axis: xp.minimum.accumulate(x, axis=axis),
}

RANDOM_DISTS = ("uniform", "normal", "bernoulli")


def _kind(table: dict, kind: str, what: str):
    try:
        return table[kind]
    except KeyError:
        raise KernelError(f"unknown {what} kind '{kind}'") from None


def unary(xp, kind: str, x, dtype):
    return _out(xp, _kind(UNARY_KINDS, kind, "unary")(xp, x), dtype)


def binary(xp, kind: str, a, b, dtype):
    return _out(xp, _kind(BINARY_KINDS, kind, "binary")(xp, a, b), dtype)


def where(xp, c, a, b, dtype):
    return _out(xp, xp.where(c, a, b), dtype)


def reduce(xp, kind: str, dims: Sequence[int], keepdim: bool, x, dtype):
    fn = _kind(REDUCE_KINDS, kind, "reduce")
    axes = tuple(int(d) for d in dims)
    if kind in ("max", "min", "argmax", "argmin") and any(x.shape[d] == 0 for d in axes):
        raise KernelError(f"reduce {kind} over an empty dimension (shape {tuple(x.shape)}, dims {list(axes)})")
    if kind in ("sum", "prod"):
        x = _wide(xp, x)
        if xp is np:   # NumPy adds pairwise along the memory order: a view
            x = np.ascontiguousarray(x)   # and its copy must sum alike (see matmul)
    return _out(xp, fn(xp, x, axes, bool(keepdim)), dtype)


def scan(xp, kind: str, dim: int, reverse: bool, x, dtype):
    fn = _kind(SCAN_KINDS, kind, "scan")
    if kind in ("cumsum", "cumprod"):
        x = _wide(xp, x)
    if reverse:
        return _out(xp, xp.flip(fn(xp, xp.flip(x, axis=dim), dim), axis=dim), dtype)
    return _out(xp, fn(xp, x, dim), dtype)


def linear_scan(xp, dim: int, reverse: bool, a, b, dtype, sequential: bool | None = None):
    """y[k] = b[k] + a[k] * y[k - 1] along `dim` (y[k + 1] with `reverse`), y = 0 outside.

    NumPy: the recurrence step by step, in its definition's order. JAX on CPU:
    the same as a `lax.scan` (sequential: 2x to 12x faster there than the
    associative scan, measured from (200, 64) to (4096, 4096)); on other
    platforms `lax.associative_scan` on pairs (a, b) composed as affine maps,
    O(log n) depth. `sequential` overrides the platform's choice (tests).
    """
    a, b = xp.asarray(a), xp.asarray(b)
    if a.shape != b.shape:
        raise KernelError(f"linear_scan operands differ in shape: {tuple(a.shape)} vs {tuple(b.shape)}")
    if np.dtype(dtype) == BFLOAT16:
        y = linear_scan(xp, dim, reverse, _wide(xp, a), _wide(xp, b), np.dtype(np.float32), sequential)
        return _out(xp, y, dtype)
    if xp is np:
        y = np.array(b, dtype=dtype, copy=True)
        a = np.moveaxis(np.asarray(a, dtype=dtype), dim, 0)
        view = np.moveaxis(y, dim, 0)
        n = view.shape[0]
        order = range(n - 2, -1, -1) if reverse else range(1, n)
        step = 1 if reverse else -1
        for k in order:
            view[k] = view[k] + a[k] * view[k + step]
        return y
    import jax
    from jax import lax

    if sequential if sequential is not None else jax.default_backend() == "cpu":
        a_, b_ = xp.moveaxis(a.astype(dtype), dim, 0), xp.moveaxis(b.astype(dtype), dim, 0)

        def step(y, ab):
            y = ab[1] + ab[0] * y
            return y, y
        _, y = lax.scan(step, xp.zeros(b_.shape[1:], dtype), (a_, b_), reverse=bool(reverse))
        return xp.moveaxis(y, 0, dim)

    def combine(first, second):     # apply `first`'s map, then `second`'s
        (a1, b1), (a2, b2) = first, second
        return a1 * a2, b2 + a2 * b1

    _, y = lax.associative_scan(combine, (a.astype(dtype), b.astype(dtype)), reverse=bool(reverse), axis=dim)
    return y


def argsort(xp, dim: int, descending: bool, x, dtype):
    """The stable sorting permutation along `dim` (`torch.sort(stable=True)`'s indices)."""
    if not descending:
        return _out(xp, xp.argsort(x, axis=dim, stable=True), dtype)
    rev = xp.flip(xp.argsort(xp.flip(x, axis=dim), axis=dim, stable=True), axis=dim)
    return _out(xp, (x.shape[dim] - 1) - rev, dtype)


# contractions of at most this many terms run as broadcast products under jax (see matmul)
SMALL_CONTRACTION = 4


def matmul(xp, a, b, dtype):
    if np.dtype(a.dtype) == BFLOAT16 or np.dtype(b.dtype) == BFLOAT16:
        if xp is np:   # products of bfloat16 are exact in float32, the accumulator
            return _out(xp, np.matmul(np.ascontiguousarray(_wide(xp, a)), np.ascontiguousarray(_wide(xp, b))), dtype)
        return _out(xp, xp.matmul(a, b, preferred_element_type=np.float32), dtype)
    if xp is np:   # BLAS rounds a transposed or strided operand otherwise than a contiguous one (by
        # an ulp: FMA or not): a permute read as a view inside an island and the same permute
        # copied into a store must give the same product
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    elif a.ndim >= 2 and b.ndim >= 2 and 1 <= a.shape[-1] <= SMALL_CONTRACTION \
            and np.dtype(a.dtype) == np.dtype(b.dtype) == np.dtype(np.float32):
        # a float32 contraction of 1 to 4 terms (a first layer over 4 observations, the gradient
        # through a 2-wide policy head) as the sum of broadcast products: XLA fuses it into what
        # reads the product (the bias and tanh after it), where its dot writes the whole (rows, n)
        # result first (on CPU, 1024 x 4 by 4 x 64: ~15 us, about a tanh's time). float64 keeps the dot, which rounds as NumPy's product does at these sizes (the
        # fused sum may round an ulp otherwise: a ceil of it can differ)
        out = a[..., 0:1] * b[..., 0:1, :]
        for k in range(1, a.shape[-1]):
            out = out + a[..., k:k + 1] * b[..., k:k + 1, :]
        return _out(xp, out, dtype)
    return _out(xp, xp.matmul(a, b), dtype)


def reshape(xp, shape: Sequence[int], x, dtype):
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise KernelError(f"cannot reshape {tuple(x.shape)} ({x.size} elements) into {tuple(shape)}")
    return _out(xp, xp.reshape(x, tuple(shape)), dtype)


def permute(xp, perm: Sequence[int], x, dtype):
    return _out(xp, xp.transpose(x, tuple(perm)), dtype)


def expand(xp, shape: Sequence[int], x, dtype):
    return _out(xp, xp.broadcast_to(x, tuple(shape)), dtype)


def squeeze(xp, dim: int, x, dtype):
    if x.shape[dim] != 1:
        raise KernelError(f"cannot squeeze dimension {dim} of size {x.shape[dim]}")
    return _out(xp, xp.squeeze(x, axis=dim), dtype)


def unsqueeze(xp, dim: int, x, dtype):
    return _out(xp, xp.expand_dims(x, dim), dtype)


def flip(xp, dim: int, x, dtype):
    return _out(xp, xp.flip(x, axis=dim), dtype)


def _along(dim: int, index) -> tuple:
    return (slice(None),) * dim + (index,)


def slice_(xp, dim: int, start: int, size: int, x, dtype):
    """`size` elements along `dim` from `start` (both evaluated at the point)."""
    if start < 0 or size < 0 or start + size > x.shape[dim]:
        raise KernelError(f"slice [{start}, {start + size}) is out of range for dimension {dim} "
                          f"of size {x.shape[dim]}")
    return _out(xp, x[_along(dim, slice(start, start + size))], dtype)


def take(xp, dim: int, index: int, x, dtype):
    if not 0 <= index < x.shape[dim]:
        raise KernelError(f"index {index} is out of range for dimension {dim} of size {x.shape[dim]}")
    return _out(xp, x[_along(dim, index)], dtype)


def _check_indices(xp, idx, size: int, what: str):
    """Range check of an index tensor's values, on NumPy arrays only (under
    jax.numpy, possibly traced, out-of-range indices follow jax's rules)."""
    if isinstance(idx, np.ndarray) and idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise KernelError(f"{what} index out of range [0, {size}): min {int(idx.min())}, "
                          f"max {int(idx.max())}")


def index_select(xp, dim: int, x, idx, dtype):
    _check_indices(xp, idx, x.shape[dim], "index_select")
    return _out(xp, xp.take(x, idx, axis=dim), dtype)


def _check_torch_shapes(dim: int, idx_shape, other_shape, what: str):
    if len(idx_shape) != len(other_shape) or any(
            i > o for d, (i, o) in enumerate(zip(idx_shape, other_shape)) if d != dim):
        raise KernelError(f"{what}: index shape {tuple(idx_shape)} does not fit {tuple(other_shape)} "
                          f"outside dimension {dim}")


def gather(xp, dim: int, src, idx, dtype):
    """`torch.gather`: out[..., j, ...] = src[..., idx[..., j, ...], ...]."""
    _check_torch_shapes(dim, idx.shape, src.shape, "gather")
    _check_indices(xp, idx, src.shape[dim], "gather")
    window = tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(idx.shape))
    return _out(xp, xp.take_along_axis(src[window], idx, axis=dim), dtype)


def scatter_add(xp, dim: int, dst, idx, src, dtype):
    """`torch.scatter_add`: a copy of dst with src[..., j, ...] added at
    position idx[..., j, ...] along `dim` (functional: one-hot and sum)."""
    _check_torch_shapes(dim, idx.shape, dst.shape, "scatter_add")
    if tuple(idx.shape) != tuple(src.shape):
        raise KernelError(f"scatter_add: index shape {tuple(idx.shape)} differs from source shape "
                          f"{tuple(src.shape)}")
    size = dst.shape[dim]
    _check_indices(xp, idx, size, "scatter_add")
    hot = xp.expand_dims(idx, -1) == xp.arange(size)
    contrib = xp.sum(xp.where(hot, xp.expand_dims(src, -1), xp.zeros((), dtype=src.dtype)), axis=dim)
    contrib = xp.moveaxis(contrib, -1, dim)
    widths = [(0, dst.shape[d] - contrib.shape[d]) for d in range(dst.ndim)]
    return _out(xp, dst + xp.pad(contrib, widths).astype(dst.dtype), dtype)


def concat(xp, dim: int, xs: Sequence[Any], dtype):
    return _out(xp, xp.concatenate(list(xs), axis=dim), dtype)


def pad(xp, dim: int, before: int, after: int, value: float, x, dtype):
    if before < 0 or after < 0:
        raise KernelError(f"negative padding ({before}, {after}) along dimension {dim}")
    widths = [(before, after) if d == dim else (0, 0) for d in range(x.ndim)]
    return _out(xp, xp.pad(x, widths, constant_values=xp.asarray(value, dtype=x.dtype)), dtype)


def cast(xp, x, dtype):
    """`x` as `dtype`. Floats to integers truncate toward zero and saturate, as
    XLA converts: NaN -> 0, values beyond the type's range (infinities too) ->
    its least or greatest value (NumPy alone gives platform garbage there)."""
    target = np.dtype(dtype)
    x = xp.asarray(x)
    if xp is np and np.issubdtype(target, np.integer):
        x = _wide(xp, x)   # bfloat16 (not an np.floating) saturates as the other floats do
    if xp is np and np.issubdtype(x.dtype, np.floating) and np.issubdtype(target, np.integer):
        info = np.iinfo(target)
        with np.errstate(invalid="ignore", over="ignore"):   # the bounds overflow a float16 to inf
            out = x.astype(target)
            # float(info.max) rounds up to a power of two for int32/int64: at or above it is out of range
            out = np.where(x >= float(info.max), info.max, out)
            out = np.where(x <= float(info.min), info.min, out)
        return _out(xp, np.where(np.isnan(x), 0, out), dtype)
    return _out(xp, x.astype(dtype), dtype)


def constant(xp, value, dtype):
    return _out(xp, value, dtype)


def full(xp, shape: Sequence[int], value: float, dtype):
    return xp.full(tuple(shape), value, dtype=dtype)


def iota(xp, shape: Sequence[int], dim: int, dtype):
    shape = tuple(shape)
    line = xp.arange(shape[dim], dtype=dtype)
    return _out(xp, xp.broadcast_to(xp.reshape(line, [-1 if d == dim else 1 for d in range(len(shape))]),
                                    shape), dtype)


def random(xp, dist: str, seed: int, point: Sequence, shape: Sequence[int], dtype):
    """The draw of `rt.random dist seed s` at `point` (docs/semantics.md;
    counter_random.py): the same bits with NumPy and inside a jitted kernel,
    where `point` may hold traced integers."""
    if dist not in RANDOM_DISTS:
        raise KernelError(f"unknown random distribution '{dist}'")
    return _out(xp, random_draw(xp, dist, seed, point, shape), dtype)


def symbol_value(xp, value: int, dtype):
    return _out(xp, value, dtype)
