"""Shape and spatial-indexing ops: reshape, permute, expand, (un)squeeze,
flip, concat, pad, slice, take, index_select, gather, scatter_add.

Sizes, starts and indices may be symbolic (`x[:, 0:t + 1]` is
`rt.slice 1 at <0>` with result size `t + 1`); the op's domain then gains
the dims whose steps occur in them.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

from tidal.symbolic import Const, Expr, Slice, max_, min_, simplify, slice_size

from . import dtypes as dt
from .errors import TidalError, symbolic_errors
from .graph import is_tensor, lift, make, resolve_program
from .ops_elementwise import astype, common_dtype
from .shapes import as_shape, norm_dim, numel, provably, size, static
from .tensor import RecurrentTensor

__all__ = ["reshape", "flatten", "permute", "transpose", "expand", "unsqueeze", "squeeze", "flip",
           "cat", "stack", "pad", "slice", "take", "index_select", "gather", "scatter_add"]


def _t(x: Any, what: str) -> RecurrentTensor:
    return lift(x, resolve_program([x], what))


def _sizes(args: tuple) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return args


def _s(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def reshape(x: Any, *shape: Any) -> RecurrentTensor:
    """`rt.reshape`; one size may be -1 when the others divide the total evenly."""
    x = _t(x, "reshape")
    items = list(_sizes(shape))
    holes = [i for i, s in enumerate(items) if isinstance(s, numbers.Integral) and s == -1]
    if len(holes) > 1:
        raise TidalError("reshape can infer only one size (-1)", "give the other sizes explicitly")
    total = numel(x.shape)
    if holes:
        known = numel(as_shape([s for i, s in enumerate(items) if i != holes[0]], x.program, "reshape"))
        k = static(known)
        inferred = simplify(total // k) if k else None
        if inferred is None or not simplify(inferred * known - total).same(Const(0)):
            raise TidalError(f"reshape cannot infer -1: {total} elements do not divide evenly by {known}",
                             "give every size explicitly")
        items[holes[0]] = inferred
    new = as_shape(items, x.program, "reshape shape")
    if not numel(new).same(total):
        raise TidalError(f"shape mismatch: cannot reshape {_s(x.shape)} ({total} elements) "
                         f"into {_s(new)} ({numel(new)} elements)",
                         "the number of elements must stay the same")
    if all(a.same(b) for a, b in zip(new, x.shape)) and len(new) == x.ndim:
        return x
    return make("reshape", (x,), {}, new, x.dtype)


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> RecurrentTensor:
    """Merges dims start_dim..end_dim into one."""
    x = _t(x, "flatten")
    if x.ndim == 0:
        return reshape(x, 1)
    a, b = norm_dim(start_dim, x.ndim, "start_dim"), norm_dim(end_dim, x.ndim, "end_dim")
    if a > b:
        raise TidalError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}", "swap them")
    return reshape(x, *x.shape[:a], numel(x.shape[a:b + 1]), *x.shape[b + 1:])


def permute(x: Any, *dims: Any) -> RecurrentTensor:
    """`rt.permute`: result dim i is input dim dims[i]."""
    x = _t(x, "permute")
    perm = tuple(norm_dim(d, x.ndim, "permute dim") for d in _sizes(dims))
    if sorted(perm) != list(range(x.ndim)):
        raise TidalError(f"permute needs a permutation of {x.ndim} dims, got {perm}",
                         f"list each of 0..{x.ndim - 1} once")
    if perm == tuple(range(x.ndim)):
        return x
    return make("permute", (x,), {"perm": perm}, tuple(x.shape[p] for p in perm), x.dtype)


def transpose(x: Any, dim0: int = -2, dim1: int = -1) -> RecurrentTensor:
    """Swaps two dims (default: the last two)."""
    x = _t(x, "transpose")
    if x.ndim < 2:
        return x
    a, b = norm_dim(dim0, x.ndim, "dim0"), norm_dim(dim1, x.ndim, "dim1")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return permute(x, *perm)


def T(x: Any) -> RecurrentTensor:  # noqa: N802
    """All dims reversed (`x.T`, as NumPy)."""
    x = _t(x, "T")
    return permute(x, *reversed(range(x.ndim)))


def expand(x: Any, *shape: Any) -> RecurrentTensor:
    """`rt.expand`: broadcast to `shape` (-1 keeps a size; new leading dims allowed)."""
    x = _t(x, "expand")
    items = list(_sizes(shape))
    if len(items) < x.ndim:
        raise TidalError(f"expand to {len(items)} dims is fewer than the tensor's {x.ndim}",
                         "give at least as many sizes as the tensor has dims")
    lead = len(items) - x.ndim
    for i, s in enumerate(items):
        if isinstance(s, numbers.Integral) and s == -1:
            if i < lead:
                raise TidalError("expand: -1 is not allowed for a new leading dim", "give its size")
            items[i] = x.shape[i - lead]
    new = as_shape(items, x.program, "expand shape")
    for i, d in enumerate(x.shape):
        target = new[lead + i]
        if not (d.same(target) or static(d) == 1):
            raise TidalError(f"shape mismatch: cannot expand {_s(x.shape)} to {_s(new)} "
                             f"(size {d} is neither {target} nor 1)",
                             "only dims of size 1 stretch")
    if lead == 0 and all(a.same(b) for a, b in zip(new, x.shape)):
        return x
    return make("expand", (x,), {}, new, x.dtype)


def unsqueeze(x: Any, dim: int) -> RecurrentTensor:
    """Inserts a dim of size 1 at `dim` (`rt.unsqueeze`)."""
    x = _t(x, "unsqueeze")
    d = norm_dim(dim, x.ndim, "unsqueeze dim", inclusive=True)
    shape = x.shape[:d] + (Const(1),) + x.shape[d:]
    return make("unsqueeze", (x,), {"dim": d}, shape, x.dtype)


def squeeze(x: Any, dim: Any = None) -> RecurrentTensor:
    """Removes dim `dim` of size 1 (all static size-1 dims with `dim=None`)."""
    x = _t(x, "squeeze")
    if dim is None:
        for d in reversed(range(x.ndim)):
            if static(x.shape[d]) == 1:
                x = make("squeeze", (x,), {"dim": d}, x.shape[:d] + x.shape[d + 1:], x.dtype)
        return x
    d = norm_dim(dim, x.ndim, "squeeze dim")
    if static(x.shape[d]) != 1:
        raise TidalError(f"cannot squeeze dim {dim} of size {x.shape[d]} (shape {_s(x.shape)})",
                         "only a dim of size 1 can be squeezed; index it instead (x[..., 0])")
    return make("squeeze", (x,), {"dim": d}, x.shape[:d] + x.shape[d + 1:], x.dtype)


def flip(x: Any, dim: Any = 0) -> RecurrentTensor:
    """Reverses the order along `dim` (or each dim of a sequence)."""
    x = _t(x, "flip")
    for d in ((dim,) if isinstance(dim, numbers.Integral) else dim):
        x = make("flip", (x,), {"dim": norm_dim(d, x.ndim, "flip dim")}, x.shape, x.dtype)
    return x


def cat(tensors: Sequence[Any], dim: int = 0) -> RecurrentTensor:
    """`rt.concat` along `dim`; dtypes promote, the other sizes must agree."""
    tensors = list(tensors)
    if not tensors:
        raise TidalError("cat needs at least one tensor", "pass a list of tensors")
    program = resolve_program(tensors, "cat")
    compute = common_dtype(*tensors)
    xs = [astype(lift(v, program, compute), compute) for v in tensors]
    rank = xs[0].ndim
    d = norm_dim(dim, rank, "cat dim")
    for x in xs[1:]:
        if x.ndim != rank or any(not a.same(b) for i, (a, b) in enumerate(zip(x.shape, xs[0].shape))
                                 if i != d):
            raise TidalError(f"shape mismatch in cat along dim {d}: {_s(xs[0].shape)} vs {_s(x.shape)}",
                             "all sizes except the concatenated one must agree")
    if len(xs) == 1:
        return xs[0]
    total = simplify(sum((x.shape[d] for x in xs[1:]), xs[0].shape[d]))
    shape = xs[0].shape[:d] + (total,) + xs[0].shape[d + 1:]
    return make("concat", tuple(xs), {"dim": d}, shape, compute)


def stack(tensors: Sequence[Any], dim: int = 0) -> RecurrentTensor:
    """Stacks tensors of equal shape along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise TidalError("stack needs at least one tensor", "pass a list of tensors")
    program = resolve_program(tensors, "stack")
    first = lift(tensors[0], program)
    d = norm_dim(dim, first.ndim, "stack dim", inclusive=True)
    return cat([unsqueeze(lift(v, program), d) for v in tensors], d)


def pad(x: Any, widths: Any, dim: int = -1, value: float = 0.0) -> RecurrentTensor:
    """`rt.pad`: `widths = (before, after)` copies of `value` along `dim` (symbolic ok)."""
    x = _t(x, "pad")
    try:
        before, after = widths
    except (TypeError, ValueError):
        raise TidalError(f"pad widths {widths!r} must be a pair (before, after)", "e.g. pad(x, (0, 2 - t))") \
            from None
    d = norm_dim(dim, x.ndim, "pad dim")
    b, a = size(before, "pad before"), size(after, "pad after")
    for w in (b, a):
        x.program.check_symbols(w, "pad width")
        if not provably(w >= 0):
            raise TidalError(f"pad width {w} may be negative", "pad widths must be >= 0 at every point")
    shape = x.shape[:d] + (simplify(x.shape[d] + b + a),) + x.shape[d + 1:]
    return make("pad", (x,), {"dim": d, "before": b, "after": a, "value": float(value)}, shape, x.dtype,
                exprs=[b, a])


def _norm_index(i: Any, n: Expr, what: str) -> Expr:
    e = size(i, what)
    v, nv = static(e), static(n)
    if v is not None and v < 0:
        e = simplify(n + v)
        v = static(e)
    if v is not None and nv is not None and not 0 <= v < nv:
        raise TidalError(f"{what} {i} is out of range for a dim of size {nv}", f"use an index in [{-nv}, {nv - 1}]")
    return e


def slice(x: Any, dim: int, start: Any = None, stop: Any = None, step: Any = None) -> RecurrentTensor:  # noqa: A001
    """Spatial slice `start:stop(:step)` along `dim` (`rt.slice`, or index_select for steps > 1)."""
    x = _t(x, "slice")
    d = norm_dim(dim, x.ndim, "slice dim")
    n = x.shape[d]
    a, b = _slice_bound(start, n, Const(0), "slice start"), _slice_bound(stop, n, n, "slice stop")
    if not provably(b <= n):
        b = simplify(min_(b, n))
    if not provably(a <= n):
        a = simplify(min_(a, n))
    k = 1 if step is None else step
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k <= 0:
        raise TidalError(f"spatial slice step {step!r} must be a positive int", "e.g. x[:, 0:T:2]")
    with symbolic_errors("spatial slice"):
        length = slice_size(Slice(a, max_(a, b), k, validate=False))
    for e in (a, b):
        x.program.check_symbols(e, "spatial slice")
    if k != 1:
        from .creation import arange

        return index_select(x, d, arange(a, simplify(max_(a, b)), k, program=x.program))
    if static(a) == 0 and length.same(n):
        return x
    shape = x.shape[:d] + (length,) + x.shape[d + 1:]
    return make("slice", (x,), {"dim": d, "start": a}, shape, x.dtype, exprs=[a])


def _slice_bound(v: Any, n: Expr, default: Expr, what: str) -> Expr:
    """A start/stop: None is the default, a negative int counts from the end."""
    if v is None:
        return default
    if isinstance(v, numbers.Integral) and not isinstance(v, bool) and v < 0:
        return simplify(max_(0, n + int(v)))
    return size(v, what)


def take(x: Any, dim: int, index: Any) -> RecurrentTensor:
    """Position `index` (int or symbolic, e.g. `t`) along `dim`, removing it (`rt.take`)."""
    x = _t(x, "take")
    d = norm_dim(dim, x.ndim, "take dim")
    if is_tensor(index):
        return index_select(x, d, index)
    i = _norm_index(index, x.shape[d], "spatial index")
    x.program.check_symbols(i, "spatial index")
    if i.free_symbols and not (provably(i >= 0) and provably(i < x.shape[d])):
        raise TidalError(f"spatial index `{i}` may be out of range for dim {d} of size {x.shape[d]}",
                         "clamp it (e.g. td.min(t, n - 1)); if you meant a temporal index, note that "
                         "temporal dims are indexed first, one component per dim of the tensor's domain")
    shape = x.shape[:d] + x.shape[d + 1:]
    return make("take", (x,), {"dim": d, "index": i}, shape, x.dtype, exprs=[i])


def _int_index(index: Any, program, what: str) -> RecurrentTensor:
    i = lift(index, program, dt.INDEX if not is_tensor(index) else None)
    if i.dtype.kind not in "iu":
        raise TidalError(f"{what} index must have an integer dtype, got {i.dtype}",
                         "cast it with .astype('int64')")
    return i


def index_select(x: Any, dim: int, index: Any) -> RecurrentTensor:
    """Positions held in an integer tensor (rank 0 removes `dim`, rank 1 replaces it)."""
    program = resolve_program([x, index], "index_select")
    x = lift(x, program)
    d = norm_dim(dim, x.ndim, "index_select dim")
    i = _int_index(index, program, "index_select")
    if i.ndim > 1:
        raise TidalError(f"index_select needs an index of rank 0 or 1, got rank {i.ndim}",
                         "flatten the index, or use gather")
    shape = x.shape[:d] + i.shape + x.shape[d + 1:]
    return make("index_select", (x, i), {"dim": d}, shape, x.dtype)


def gather(x: Any, dim: int, index: Any) -> RecurrentTensor:
    """`torch.gather`: out[..., j, ...] = x[..., index[..., j, ...], ...] along `dim`."""
    program = resolve_program([x, index], "gather")
    x = lift(x, program)
    d = norm_dim(dim, x.ndim, "gather dim")
    i = _int_index(index, program, "gather")
    if i.ndim != x.ndim:
        raise TidalError(f"gather needs an index of the source's rank {x.ndim}, got {i.ndim}",
                         "unsqueeze the index")
    return make("gather", (x, i), {"dim": d}, i.shape, x.dtype)


def scatter_add(x: Any, dim: int, index: Any, src: Any) -> RecurrentTensor:
    """`torch.scatter_add`: adds src into a copy of x at index along `dim`."""
    program = resolve_program([x, index, src], "scatter_add")
    x = lift(x, program)
    d = norm_dim(dim, x.ndim, "scatter_add dim")
    i = _int_index(index, program, "scatter_add")
    s = astype(lift(src, program, x.dtype), x.dtype)
    if i.ndim != s.ndim or any(not a.same(b) for a, b in zip(i.shape, s.shape)):
        raise TidalError(f"shape mismatch in scatter_add: index {_s(i.shape)} vs source {_s(s.shape)}",
                         "index and source must have the same shape")
    return make("scatter_add", (x, i, s), {"dim": d}, x.shape, x.dtype)
