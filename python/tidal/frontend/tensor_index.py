"""Integer-tensor indexing on one spatial axis: `E[tok]`, `x[t, :, idx]`.

`x[..., idx, ...]` with an integer tensor (or a NumPy array or list of ints)
`idx` on spatial axis `a` is NumPy's advanced indexing with one index array:
the result has shape `x.shape[:a] + idx.shape + x.shape[a + 1:]`, and when
integer components (ints, symbolic points such as `t`) are separated from
the tensor by a slice, `None` or `...`, the index's axes move to the front,
as in NumPy. It composes existing ops (no op of its own):

    idx' = where(idx < 0, idx + n, idx)          negative indices count from the end
    rt.index_select  along a  with idx'          (rank 0 or 1)
    rt.reshape idx' to 1-D, rt.index_select, rt.reshape back   (rank >= 2)

so every backend and pass, and autodiff (the gradient with respect to `x` is
a scatter-add), handle it already. Indices are range-checked as
`td.index_select`'s are: below `-n` or at or above `n` is an error of the
run naming the user's line, on every backend (NumPy raises, JAX does not
clamp). A constant index (a list, a NumPy array, `td.constant`) is checked
and wrapped while tracing instead.

Refused while tracing, with the user's line: boolean masks (the result's
shape would depend on data: use `td.where`), float tensors (cast them), more
than one tensor in a subscript (NumPy would pair them elementwise: index one
axis at a time, or a flattened axis), a list holding tensors (`td.stack`
them), and a tensor in a temporal position (`x[idx]` on a tensor with a
domain: write `x[t, idx]`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tidal.symbolic import Dim, Expr

from . import dtypes as dt
from .errors import TidalError
from .graph import lift
from .shapes import numel, static
from .tensor import RecurrentTensor

__all__ = ["index_component", "refuse_index_tensor", "is_point", "gather_axis", "select_rows", "front_axes",
           "check_one_tensor"]


def refuse_index_tensor(c: RecurrentTensor, what: str) -> None:
    """A TidalError for a boolean or float tensor used as an index."""
    if c.dtype == dt.BOOL:
        raise TidalError(f"{what} is a boolean mask tensor: boolean mask indexing is not supported "
                         "(the result's shape would depend on the data)",
                         "keep the shape and zero the rest with td.where(mask, x, 0), or reduce with "
                         "td.where(mask, x, 0).sum(...)")
    if c.dtype.kind not in "iu":
        raise TidalError(f"{what} is a {c.dtype} tensor; a tensor index must have an integer dtype",
                         "cast it with .astype('int64') (after .round() or .floor() if needed)")


def _has_tensor(value: Any) -> bool:
    if isinstance(value, RecurrentTensor):
        return True
    return isinstance(value, (list, tuple)) and any(_has_tensor(v) for v in value)


def index_component(program, c: Any) -> Any:
    """A spatial index component with NumPy arrays and lists of ints made
    `rt.constant` tensors; tensors checked for an integer dtype."""
    if isinstance(c, RecurrentTensor):
        refuse_index_tensor(c, "the index")
        return c
    if not isinstance(c, (list, np.ndarray)):
        return c
    if _has_tensor(c):
        raise TidalError("a list holding tensors cannot index a tensor",
                         "stack the indices into one integer tensor first: x[td.stack([i, j])]")
    arr = np.asarray(c)
    if arr.dtype == dt.BOOL:
        raise TidalError("boolean mask indexing is not supported (the result's shape would depend on "
                         "the mask)", "use integer positions (np.flatnonzero(mask)), or td.where")
    if arr.size == 0:
        arr = arr.astype(dt.INDEX)
    if arr.dtype.kind not in "iu":
        raise TidalError(f"the index {c!r} is not integer data ({arr.dtype})",
                         "index with ints, e.g. x[[0, 2]] or x[np.array([0, 2])]")
    return lift(arr.astype(dt.INDEX), program)


def is_point(c: Any) -> bool:
    """An int, Dim or integer expression: one position (`rt.take`)."""
    if isinstance(c, (bool, np.bool_)):
        return False
    return isinstance(c, (int, np.integer, Dim)) or (isinstance(c, Expr) and c.kind == "int")


def check_one_tensor(items: list) -> None:
    """At most one tensor in a subscript (NumPy would broadcast several together)."""
    if sum(isinstance(c, RecurrentTensor) for c in items) > 1:
        raise TidalError("a subscript can hold only one index tensor: with several, NumPy pairs them "
                         "elementwise (advanced-indexing broadcast), which Tidal does not support",
                         "index one axis at a time for the outer product (x[i][:, j] on a tensor "
                         "without a domain), or pair them through a flattened axis: "
                         "x.reshape(m * n, ...)[i * n + j]")


def front_axes(items: list) -> bool:
    """Whether NumPy puts the index tensor's axes first: when integer components
    and the tensor (NumPy's advanced indices) are not all next to each other.
    `items` has its ellipsis expanded."""
    advanced = [j for j, c in enumerate(items) if isinstance(c, RecurrentTensor) or is_point(c)]
    if not any(isinstance(c, RecurrentTensor) for c in items):
        return False
    return advanced[-1] - advanced[0] + 1 != len(advanced)


def _constant_values(idx: RecurrentTensor):
    return idx.attrs.get("value") if idx.op == "constant" else None


def _wrap(idx: RecurrentTensor, n: Expr, axis: int) -> RecurrentTensor:
    """Negative indices counted from the end (`idx + n` where `idx < 0`)."""
    from .ops_elementwise import astype, where

    nv = static(n)
    values = _constant_values(idx)
    if values is not None:
        if nv is not None and values.size and (values.min() < -nv or values.max() >= nv):
            bad = values.min() if values.min() < -nv else values.max()
            raise TidalError(f"index {int(bad)} is out of range for spatial axis {axis} of size {nv}",
                             f"indices must be in [{-nv}, {nv - 1}]")
        if not values.size or values.min() >= 0:
            return idx
        if nv is not None:
            return lift(np.where(values < 0, values + nv, values).astype(idx.dtype), idx.program)
    if idx.dtype.kind == "u":
        return idx
    if nv is None or nv > np.iinfo(idx.dtype).max:
        idx = astype(idx, dt.INDEX)
    size = nv if nv is not None else lift(n, idx.program)
    return where(idx < 0, idx + size, idx)


def gather_axis(y: RecurrentTensor, axis: int, idx: RecurrentTensor) -> RecurrentTensor:
    """`y` indexed on `axis` by the integer tensor `idx` (negative indices wrap): shape
    `y.shape[:axis] + idx.shape + y.shape[axis + 1:]`."""
    return select_rows(y, axis, _wrap(idx, y.shape[axis], axis))


def select_rows(y: RecurrentTensor, axis: int, idx: RecurrentTensor) -> RecurrentTensor:
    """`rt.index_select` with an index of any rank (indices in [0, n)): shape
    `y.shape[:axis] + idx.shape + y.shape[axis + 1:]`."""
    from .ops_shape import index_select, reshape

    if idx.ndim <= 1:
        return index_select(y, axis, idx)
    picked = index_select(y, axis, reshape(idx, numel(idx.shape)))
    return reshape(picked, y.shape[:axis] + idx.shape + y.shape[axis + 1:])
