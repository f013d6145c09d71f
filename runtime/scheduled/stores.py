"""Tensor stores (paper §6): where the points of each value live at run time.

* `PointStore` keeps each point's array as is, in a dict keyed by its slot
  (the coordinate modulo K on `ring` axes: only the K most recent points
  live). Point reads are a lookup; slice reads stack (host). Any shape,
  including shapes that vary with the point.
* `ArrayStore` is one preallocated array `[capacity per axis..., *shape]`:
  a *block store* when every axis is `block` or `ring` (prefixes, suffixes,
  whole ranges: slices are plain views, writes are in place), a *window store*
  when one axis is a `window` of W: 2W slots, each point written at `c mod W`
  and `c mod W + W`, so any window of up to W consecutive points is the
  contiguous slice starting at `start mod W`.

With NumPy the buffer is written in place (`buf[i] = v`). With JAX the
buffer is a jax array and writes happen inside jitted kernels that donate it
(see jax_backend.py); `read`/`write` here are the generic, slower host path.
The plans come from `tidal.lowering.storage`, verified against the schedule.
"""
from __future__ import annotations

import math

from typing import Any, Sequence

import numpy as np

from tidal.lowering.storage import StorePlan

__all__ = ["bucket", "capacities", "kernel_bucket", "LEAST_KERNEL_BUCKET", "Padded", "unpad", "PointStore", "ArrayStore", "make_store"]


def bucket(n: int) -> int:
    """The power of two >= n (at least 1): padded sizes, so a size that grows
    with the point compiles O(log n) times, not once per point."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


# A buffer this large at power-of-two capacities has its block axes rounded up to an
# eighth of an octave instead (<= 12.5% unused, not up to 100%: a causal K/V cache of
# 1040 rows takes 1152, not 2048); smaller ones keep powers of two, so that runs at
# nearby bounds share their compiled loops and kernels.
FINE_ROUNDING_BYTES = 1 << 20


def capacities(extents: Sequence[int], point_bytes: int) -> list[int]:
    """The capacities of a store's block axes of `extents` (a point of
    `point_bytes` each): powers of two (`bucket`), or, when that would take
    more than FINE_ROUNDING_BYTES, each extent rounded up to a multiple of an
    eighth of the power of two below it."""
    pow2 = [bucket(e) for e in extents]
    if math.prod(pow2) * point_bytes <= FINE_ROUNDING_BYTES:
        return pow2
    steps = [1 << max(0, e.bit_length() - 4) for e in extents]   # an eighth of the power of two <= e
    return [max(1, -(-e // g) * g) for e, g in zip(extents, steps)]


# Below this, a kernel computes on the whole capacity anyway (launches cost more
# than the elements): one compilation for every size up to it, not six.
LEAST_KERNEL_BUCKET = 32


def kernel_bucket(n: int) -> int:
    """The capacity a kernel reads a point-varying size `n` at: `bucket(n)`,
    at least LEAST_KERNEL_BUCKET."""
    return max(LEAST_KERNEL_BUCKET, bucket(n))


class Padded:
    """A point value whose size along `axis` varies with the point (`k[0:t + 1]`
    scores), kept on the device at a fixed capacity (`bucket(n)`) with its
    valid length `n`: the kernels that consume it compile once per capacity,
    not once per point (see padded.py). Host readers see `crop()`."""

    __slots__ = ("arr", "n", "axis")

    def __init__(self, arr, n: int, axis: int):
        self.arr, self.n, self.axis = arr, int(n), axis

    @property
    def nbytes(self) -> int:
        return int(self.arr.size) * self.arr.dtype.itemsize

    def crop(self):
        index = [slice(None)] * self.arr.ndim
        index[self.axis] = slice(0, self.n)
        return self.arr[tuple(index)]


def unpad(value):
    """The exact value of a point store entry (a `Padded` one cropped)."""
    return value.crop() if isinstance(value, Padded) else value


def dense_axes(plan: StorePlan) -> tuple[int, ...]:
    """The slot axes a point store keeps when packed into a dense array inside
    a traced loop (packing.py): all but ring axes of size 1, whose one slot is
    always 0 (only the latest point is kept). XLA on CPU copies a carried
    `[1, 64]` it reads as `[64]` at every step where a bitcast would do: an
    RNN's loop of T = 2,000 took 2.1 ms that way, 1.1 ms without."""
    return tuple(i for i, a in enumerate(plan.axes) if not (a.mode == "ring" and a.size == 1))


class PointStore:
    kind = "point"

    def __init__(self, plan: StorePlan | None, ndim: int):
        self.plan = plan
        self.mods = [a.size if a.mode == "ring" else None for a in plan.axes] if plan else [None] * ndim
        self.data: dict = {}
        # the slot axes of its dense array (packing.py), when it packs
        self.dense_axes = dense_axes(plan) if plan else tuple(range(ndim))

    def slot(self, point: Sequence[int]) -> tuple:
        return tuple(c % m if m else c for c, m in zip(point, self.mods))

    def write(self, point: Sequence[int], value: Any) -> None:
        self.data[self.slot(point)] = value

    def get(self, point: Sequence[int]) -> Any:
        return unpad(self.data[self.slot(point)])

    def read(self, coords: Sequence, shape: Sequence[int] | None = None, dtype=None) -> Any:
        """Value at `coords` (ints and slices): slices stack their points."""
        axes = [range(c.start, c.stop, c.step or 1) if isinstance(c, slice) else None for c in coords]
        if all(a is None for a in axes):
            return self.get(coords)
        sizes = tuple(len(a) for a in axes if a is not None)
        points = _product([a if a is not None else (c,) for a, c in zip(axes, coords)])
        if not points:
            return np.zeros(sizes + tuple(shape or ()), dtype=dtype)
        items = [np.asarray(self.get(q)) for q in points]
        return np.stack(items).reshape(sizes + items[0].shape)

    def live(self) -> int:
        return len(self.data)


def _product(ranges: list) -> list:
    out = [()]
    for r in ranges:
        out = [p + (c,) for p in out for c in r]
    return out


class ArrayStore:
    def __init__(self, plan: StorePlan, extents: Sequence[int], shape: Sequence[int], dtype,
                 xp=np, pow2: bool = False, host: bool = False, zeros=None):
        self.plan = plan
        self.kind = plan.kind
        self.xp = xp
        self.modes = [a.mode for a in plan.axes]
        self.sizes = [a.size for a in plan.axes]
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        caps = []
        for a, extent in zip(plan.axes, extents):
            if a.mode == "ring":
                caps.append(a.size)
            elif a.mode == "window":
                caps.append(2 * a.size)
            else:
                caps.append(extent)
        if pow2:   # jitted kernels and loops compile per buffer shape: round block axes up
            block = [i for i, a in enumerate(plan.axes) if a.mode == "block"]
            point = math.prod([c for i, c in enumerate(caps) if i not in block] + list(self.shape)) \
                * self.dtype.itemsize
            for i, c in zip(block, capacities([caps[i] for i in block], point)):
                caps[i] = c
        self.caps = caps
        # its buffer's bytes, wherever it is (its shape never changes: memory.py samples this)
        self.nbytes = math.prod(caps + list(self.shape)) * self.dtype.itemsize
        # the buffer's physical axis order (StorePlan.layout), on the jax backend; the
        # kernels and readers of jax_backend.py translate (NumPy keeps the logical order)
        self.layout = plan.layout if xp is not np else None
        logical = tuple(caps) + self.shape
        physical = logical if self.layout is None else tuple(logical[a] for a in self.layout)
        # `host`: created swapped out (a device-memory budget, swapping.py)
        # `zeros(shape, dtype)`: a zeroed buffer from the run's memory plan (allocation.py)
        if zeros is not None and not host:
            self.buf = zeros(physical, self.dtype)
        elif xp is np or host:
            self.buf = np.zeros(physical, dtype=self.dtype)
        else:
            self.buf = device_zeros(physical, self.dtype.name)
        self.window_axis = self.modes.index("window") if "window" in self.modes else None
        self._reader = None
        self._writer = None

    # -- slots ----------------------------------------------------------------------------
    def slot(self, axis: int, c: int) -> int:
        mode = self.modes[axis]
        return c if mode == "block" else c % self.sizes[axis]

    def index(self, coords: Sequence) -> tuple:
        """NumPy index of `coords` (ints and unit-step or strided slices)."""
        out = []
        for axis, c in enumerate(coords):
            if isinstance(c, slice):
                mode = self.modes[axis]
                if mode == "ring":
                    raise ValueError("slice read on a ring axis")
                start = c.start if mode == "block" else c.start % self.sizes[axis]
                n = len(range(c.start, c.stop, c.step or 1))
                step = c.step or 1
                out.append(slice(start, start + max(n - 1, 0) * step + 1 if n else start, step))
            else:
                out.append(self.slot(axis, c))
        return tuple(out)

    # -- generic host access --------------------------------------------------------------------
    def write(self, point: Sequence[int], value: Any) -> None:
        idx = tuple(self.slot(a, c) for a, c in enumerate(point))
        if self.xp is np:
            self.buf[idx] = value
            if self.window_axis is not None:
                mirror = list(idx)
                mirror[self.window_axis] += self.sizes[self.window_axis]
                self.buf[tuple(mirror)] = value
        else:
            from .jax_backend import store_writer
            self.buf = store_writer(self)(self.buf, *idx, value)

    def read(self, coords: Sequence, shape=None, dtype=None) -> Any:
        idx = self.index(coords)
        if self.xp is np:
            return self.buf[idx]
        from .jax_backend import host_read
        return host_read(self, idx)

    def result(self, extents: Sequence[int]) -> np.ndarray:
        """The whole buffer cropped to `extents` (block axes only), as NumPy."""
        buf = np.asarray(self.buf)
        if self.layout is not None:
            buf = buf.transpose(np.argsort(self.layout))
        return buf[tuple(slice(0, e) for e in extents)]


def device_zeros(shape: tuple, dtype: str):
    """Zeros made on the device (a jitted call per shape: no host buffer to
    fill and send; `jax.device_put` alone costs about 0.1 ms an array)."""
    import jax.numpy as jnp

    from .jax_backend import helper_jit
    return helper_jit(jnp.zeros, (0, 1))(shape, dtype)




def make_store(plan: StorePlan, extents: Sequence[int], shape: Sequence[int] | None, dtype,
               xp=np, pow2: bool = False, host: bool = False, zeros=None):
    if plan.kind == "point" or shape is None:
        return PointStore(plan, len(plan.axes))
    return ArrayStore(plan, extents, shape, dtype, xp, pow2, host, zeros)
