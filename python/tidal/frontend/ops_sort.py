"""Sorting: argsort, sort and topk.

`argsort` is `rt.argsort dim (descending)`: the stable sorting permutation
(int64). `sort` and `topk` are built on it: the values are
`gather(x, dim, indices)` (so they are differentiable through `gather`'s
rule: the gradient is scattered back to the positions they came from, as in
PyTorch), and `topk` keeps the first `k` positions of the sorted order.
"""
from __future__ import annotations

import numbers
from typing import Any, NamedTuple

from tidal.symbolic import Const

from . import dtypes as dt
from .errors import TidalError
from .graph import lift, make, resolve_program
from .shapes import norm_dim, provably, static
from .tensor import RecurrentTensor

__all__ = ["argsort", "sort", "topk", "SortResult"]


class SortResult(NamedTuple):
    """`(values, indices)`, as `torch.sort`/`torch.topk` return them."""

    values: RecurrentTensor
    indices: RecurrentTensor


def _dim(x: RecurrentTensor, dim: Any, what: str) -> int:
    if x.ndim == 0:
        raise TidalError(f"{what} needs a tensor of rank >= 1, got a scalar",
                         "unsqueeze it first (x.unsqueeze(0)), or sort a vector")
    return norm_dim(dim, x.ndim, f"{what} dim")


def argsort(x: Any, dim: int = -1, descending: bool = False) -> RecurrentTensor:
    """The int64 positions that sort `x` along `dim` (`rt.argsort`), stably.

    Equal elements keep their order (ascending or descending); NaN sorts above
    every number, so it comes last ascending and first descending, as
    `torch.sort(stable=True)`. Not differentiable (an integer result)::

        order = td.argsort(scores, dim=-1, descending=True)
    """
    x = lift(x, resolve_program([x], "argsort"))
    d = _dim(x, dim, "argsort")
    return make("argsort", (x,), {"dim": d, "descending": bool(descending)}, x.shape, dt.INDEX)


def sort(x: Any, dim: int = -1, descending: bool = False) -> SortResult:
    """`(values, indices)` of `x` sorted along `dim`, as `torch.sort(..., stable=True)`.

    `values = x.gather(dim, indices)`, so gradients flow to the elements the
    values came from::

        v, i = td.sort(x, dim=0, descending=True)      # v[0] is the maximum, i[0] its position
    """
    x = lift(x, resolve_program([x], "sort"))
    from .ops_shape import gather

    idx = argsort(x, dim, descending)
    return SortResult(gather(x, _dim(x, dim, "sort"), idx), idx)


def topk(x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> SortResult:  # noqa: A002
    """The `k` largest (smallest with `largest=False`) elements along `dim` and
    their positions, as `torch.topk`: `(values, indices)`, sorted (largest
    first, or smallest first). `k` is a static int with `0 <= k <= size`.

    Ties keep their order (the first positions win) and NaN counts as the
    largest, the order of `td.sort(x, dim, descending=largest)`, whose first
    `k` elements these are. `values` are differentiable (through `gather`)::

        v, i = td.topk(logits[t], 5)                 # top-5 tokens at each step
    """
    x = lift(x, resolve_program([x], "topk"))
    d = _dim(x, dim, "topk")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TidalError(f"topk: k must be a static int, got {k!r}",
                         "pass a Python int (a data-dependent k is not supported)")
    k = int(k)
    n = x.shape[d]
    if k < 0:
        raise TidalError(f"topk: k = {k} is negative", "k must be in [0, size of the dim]")
    size = static(n)
    if size is not None and k > size:
        raise TidalError(f"topk: k = {k} is larger than dim {d} of size {size}",
                         f"k must be in [0, {size}]")
    if size is None and not provably(n >= k):
        raise TidalError(f"topk: k = {k} may be larger than dim {d} of size {n}",
                         "k must be at most the size at every point: pad the tensor or use a "
                         "smaller k")
    from .ops_shape import gather, slice as spatial_slice

    del sorted  # always sorted
    idx = argsort(x, d, descending=largest)
    if not (size is not None and size == k):
        idx = spatial_slice(idx, d, 0, k)
        if not idx.shape[d].same(Const(k)):  # pragma: no cover - slice sizes are exact here
            raise AssertionError(f"topk slice size {idx.shape[d]} is not {k}")
    return SortResult(gather(x, d, idx), idx)
