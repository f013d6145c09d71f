"""Packing a run's stores into the buffers of a loop inside XLA (traced.py), and back.

A traced loop reads and writes dense arrays: an array store's buffer as is,
a point store of static shape as one array `[slots..., *shape]`
(`DenseSlots`, which the store keeps afterwards, slicing values out on
first read). The point stores a loop is the first to pack, and those
written point by point since their last pack, are made in one jitted call
(`_pack_points`): zeros, and the values the host wrote, written in place.
One XLA dispatch for them all, instead of one transfer per store and one
update per written point. With the inputs sent in one call (allocation.py)
and device zeros made by one jitted call each (stores.py), an RNN run of
T = 16 (bench_runtime.py's program) went from 1.6 to 0.6-0.8 ms.
"""
from __future__ import annotations

import numpy as np

from .traced import getp, setp

__all__ = ["DenseSlots", "pack_buffers", "unpack_buffers"]


class DenseSlots(dict):
    """`PointStore.data` after a traced loop: every slot's value lives in
    `dense` (`[slots..., *shape]`) and is sliced out on first read; writes
    made afterwards are kept in `written` too (the next pack applies them)."""

    def __init__(self, dense, lengths=None, axis: int | None = None, axes: tuple | None = None):
        super().__init__()
        self.dense = dense
        self.written: dict = {}
        # a store of padded values (stores.Padded): their valid lengths, and the padded axis
        self.lengths, self.axis = lengths, axis
        # the slot axes `dense` has (stores.dense_axes; None: all)
        self.axes = axes

    def __missing__(self, key):
        slot = dense_slot(key, self.axes)
        # a padded value: at the capacity the Python loop gives it, min(kernel_bucket(n),
        # the static capacity the dense array has; launchers.LauncherGen.bucket)
        if self.axis is not None:
            from .stores import Padded, kernel_bucket
            n = int(self.lengths[slot])
            arr = self.dense[slot]
            index = [slice(None)] * arr.ndim
            index[self.axis] = slice(0, kernel_bucket(n))
            value = Padded(arr[tuple(index)], n, self.axis)
            dict.__setitem__(self, key, value)
            return value
        if slot == ():               # one slot: never hand out the buffer a loop donates
            value = self.dense.copy()
        else:                        # one jitted read (indexing eagerly dispatches 2-3 primitives)
            value = _slot_reader(self.dense, slot)
        dict.__setitem__(self, key, value)
        return value

    def __setitem__(self, key, value):
        self.written[key] = value
        dict.__setitem__(self, key, value)

    def array(self, extents) -> np.ndarray:
        """The values at every point of `extents` (block axes), as NumPy."""
        if self.axis is not None:
            raise TypeError("a padded store has no static shape")
        dense = np.array(self.dense)
        if self.axes is not None:    # its ring axes of size 1 back
            dense = np.expand_dims(dense, tuple(i for i in range(len(extents)) if i not in self.axes))
        out = dense[tuple(slice(0, e) for e in extents) + (Ellipsis,)]   # 0-d: an array, not a scalar
        for key, value in self.written.items():
            out[key] = np.asarray(value)
        return out


def dense_slot(key: tuple, axes: tuple | None) -> tuple:
    """A point store's slot `key` in its dense array, which keeps slot axes `axes`."""
    return tuple(key) if axes is None else tuple(key[i] for i in axes)


def _axes(store) -> tuple | None:
    axes = store.dense_axes
    return None if axes == tuple(range(len(store.mods))) else axes


def pack_buffers(stores: dict, keys: list[str], written: set[str]) -> tuple[dict, dict, tuple]:
    """(R, B, Z) for the loop function: the buffers of the array stores, the
    dense arrays of the point stores (the points written since the last loop
    written in; zeros where none) and the index accumulators; B those the
    loop writes (donated), R those it only reads; Z, (key, shape, dtype) of
    the point stores the loop writes that hold nothing yet: made as zeros
    inside the loop's XLA program (`_zeros`), not sent. The loop's jit key is
    then their shapes and Z."""
    from .stores import ArrayStore
    read, buffers, zeros = {}, {}, []
    pending: list[tuple[str, object]] = []     # point stores whose dense array is made below
    for key in keys:
        out = buffers if key in written else read
        if key.startswith(("_IX", "_EG")):
            out[key] = stores[key[:3]][int(key[3:])]
            continue
        if key.endswith("#n"):
            continue             # with its padded store, below
        store = stores[key]
        if isinstance(store, ArrayStore):
            out[key] = store.buf
            continue
        if key not in written and _whole_value(store):
            out[key] = next(iter(store.data.values()))   # one value only read (a weight): as it is, no copy
            continue
        if getattr(store, "padded_axis", None) is None:
            data = store.data
            if isinstance(data, DenseSlots) and not data.written:
                out[key] = data.dense
            elif key in written and not isinstance(data, DenseSlots) and not data:
                caps, shape, dtype = store.layout
                zeros.append((key, tuple(caps) + tuple(shape), dtype.name))
            else:
                pending.append((key, store))
            continue
        dense, lengths = _dense_padded(store)
        out[key] = dense
        out[key + "#n"] = lengths
        if key not in written:            # packed once: the next loop reads the same arrays
            store.data = DenseSlots(dense, lengths, store.padded_axis, _axes(store))
    for (key, store), dense in zip(pending, _pack_points([store for _, store in pending])):
        (buffers if key in written else read)[key] = dense
        if key not in written:
            store.data = DenseSlots(dense, axes=_axes(store))
    # B is donated: no array may appear twice in the call (a point value kept
    # by reference in two stores, a domain-less store's dense array), nor in R too.
    seen: set[int] = {id(buf) for buf in read.values()}
    for key, buf in buffers.items():
        if id(buf) in seen:
            buffers[key] = buf.copy()
        seen.add(id(buffers[key]))
    return read, buffers, tuple(zeros)


def _whole_value(store) -> bool:
    """A point store of one slot (no domain, or ring axes of size 1) holding
    its value, of the packed shape and dtype."""
    caps, shape, dtype = store.layout
    if caps or isinstance(store.data, DenseSlots) or getattr(store, "padded_axis", None) is not None \
            or len(store.data) != 1:
        return False
    value = next(iter(store.data.values()))
    return getattr(value, "dtype", None) == dtype and tuple(getattr(value, "shape", ())) == tuple(shape)


def _pack_points(point_stores: list) -> list:
    """The dense arrays of point stores (not padded), in one jitted call: each
    its last dense array or zeros, with the points written since applied."""
    if not point_stores:
        return []
    from .jax_backend import helper_jit
    specs, bases, entries = [], [], []
    for store in point_stores:
        caps, shape, dtype = store.layout
        data = store.data
        base = data.dense if isinstance(data, DenseSlots) else None
        points = data.written if isinstance(data, DenseSlots) else data
        axes = _axes(store)
        slots = np.asarray([dense_slot(p, axes) for p in points], dtype=np.int64).reshape(len(points), len(caps))
        specs.append((tuple(caps) + tuple(shape), dtype.name, len(points), len(caps), base is not None))
        bases.append(base)
        entries.append((slots, list(points.values())))
    return helper_jit(_packed, (0,))(tuple(specs), bases, entries)


def _packed(specs: tuple, bases: list, entries: list) -> list:
    import jax.numpy as jnp
    out = []
    for (shape, dtype, n, rank, has_base), base, (slots, values) in zip(specs, bases, entries):
        buf = base if has_base else jnp.zeros(shape, dtype)
        for j in range(n):
            buf = setp(buf, tuple(slots[j, i] for i in range(rank)), values[j])
        out.append(buf)
    return out


def _dense_padded(store) -> tuple:
    """The dense array of a store of padded values, and that of their valid
    lengths, the points written since it was packed applied."""
    import jax

    data = store.data
    caps, shape, dtype = store.layout
    if isinstance(data, DenseSlots):
        dense, lengths, entries = data.dense, data.lengths, data.written
    else:
        dense = jax.device_put(np.zeros(tuple(caps) + tuple(shape), dtype=dtype))
        lengths, entries = jax.device_put(np.zeros(tuple(caps), dtype=np.int64)), data
    for key, value in entries.items():   # a value of the Python loop: its capacity padded to the packed one
        slot = dense_slot(key, _axes(store))
        lengths = _slot_writer(lengths, tuple(slot), np.int64(value.n))
        dense = _slot_writer(dense, tuple(slot), _pad_to(value.arr, store.padded_axis, shape[store.padded_axis]))
    return dense, lengths


def _pad_to(arr, axis: int, cap: int):
    import jax.numpy as jnp
    if arr.shape[axis] == cap:
        return arr
    widths = [(0, 0)] * arr.ndim
    widths[axis] = (0, cap - arr.shape[axis])
    return jnp.pad(arr, widths)


def _slot_reader(dense, slot: tuple):
    from .jax_backend import helper_jit
    return helper_jit(getp)(dense, slot)


def _slot_writer(dense, slot: tuple, value):
    from .jax_backend import helper_jit
    return helper_jit(setp)(dense, slot, value)


def unpack_buffers(stores: dict, buffers: dict) -> None:
    from .stores import ArrayStore
    for key, value in buffers.items():
        if key.startswith(("_IX", "_EG")):
            stores[key[:3]][int(key[3:])] = value
        elif key.endswith("#n"):
            continue
        elif isinstance(stores[key], ArrayStore):
            stores[key].buf = value
        else:
            axis = getattr(stores[key], "padded_axis", None)
            stores[key].data = DenseSlots(value, buffers.get(key + "#n"), axis, _axes(stores[key]))
