"""JAX kernels for the scheduled runtime: one jitted function per operator.

`jit_kernel(opdef, operands, out, counter)` wraps an operator's computation
(`OpDef.fn` with `xp = jax.numpy`) with the paper's kernel wrappers (§6):

* *lazy reads*: an operand held in an `ArrayStore` is passed as the whole
  buffer plus start indices and sliced inside the kernel
  (`lax.dynamic_slice`), so reading costs no extra dispatch;
* *in-place writes*: when the result goes to an `ArrayStore`, the kernel
  receives that buffer (donated) and the slot indices and returns the
  updated buffer (`lax.dynamic_update_slice`, twice for a window store's
  mirrored slot); JAX reuses the donated memory, so a write is O(point).

Shapes that vary with the point (a window `max(0, t - 3):t + 1` at the
start, a prefix `0:t + 1`) are padded to a power of two (`stores.bucket`):
the kernel reads `bucket(n)` elements and masks those outside `[lo, lo + n)`
with the identity of the reduction that consumes them (0 for `sum` and for a
matmul contraction, -inf for `max`, ...), so each op compiles once per
bucket, never once per point. The bucket sizes and the scalars that depend on
the bounds only are the jit's static argument; slot indices and point-varying
scalars are traced. Every trace increments `counter[name]` (the executable's
own count of compilations, for tests and benchmarks) and `COMPILES[name]`.

No jitted function here is shared between programs unless its key is exactly
what its traced code closes over (`store_writer`); kernels belong to one
executable, and jax.jit keys each trace on its arguments' shapes and dtypes.
Within an executable, kernels with the same `kernel_key` (the op's text with
local names and no locations, the operand and output specs) are one jitted
function, so the identical layers of a model compile once.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .opdecode import REDUCE_IDENTITY, OpDef
from .stores import ArrayStore, bucket
from .traced import slice_at, update_at

__all__ = ["LazyOperand", "OutSpec", "jit_kernel", "store_writer", "host_read", "COMPILES"]

# name -> number of traces, over the whole process (tests diff it)
COMPILES: dict[str, int] = {}


@dataclass
class LazyOperand:
    """How a jitted kernel reads one operand. `kind` is "value" (an array
    argument) or "lazy" (buffer + starts). For "lazy", `axes` has one entry
    per producer axis: "point", "fixed" (a slice whose size depends on the
    bounds only) or "varying" (padded to a bucket and masked)."""

    kind: str
    axes: list[str] = field(default_factory=list)
    shape: tuple = ()
    self_read: bool = False        # the operand's buffer is the output buffer
    identity: object = None        # padding value for "varying" axes
    # "padded" (a stores.Padded value: array + valid length) and "shifted" lazy
    # axes (valid elements first): the padded axis of the value, and whether the
    # kernel masks it with `identity` (it reduces or contracts it) or keeps it.
    pad_axis: int = 0
    mask: bool = False
    layout: tuple | None = None    # the buffer's physical axis order (StorePlan.layout)


@dataclass
class OutSpec:
    inplace: bool                  # write into a donated ArrayStore buffer
    ndim: int = 0                  # domain axes of the output store
    window_axis: int | None = None
    window: int = 0
    layout: tuple | None = None    # the buffer's physical axis order (StorePlan.layout)


# -- buffers in a physical axis order (StorePlan.layout) --------------------------------------
# Kernels see every value in its logical order: a read slices the physical buffer and
# transposes the slice back (XLA folds that transpose into the matmul that consumes it),
# a write transposes the point before writing it.

def logical_shape(shape: tuple, layout: tuple | None) -> tuple:
    """The logical shape of a buffer of physical `shape`."""
    if layout is None:
        return tuple(shape)
    out = [0] * len(shape)
    for p, a in enumerate(layout):
        out[a] = shape[p]
    return tuple(out)


def read_slice(buf, starts: list, sizes: list, layout: tuple | None):
    """`buf[starts : starts + sizes, ...]` in logical axis order (`starts` and
    `sizes` for the leading logical axes, the rest whole)."""
    if layout is None:
        return slice_at(buf, starts, sizes)
    shape = logical_shape(buf.shape, layout)
    full_starts = list(starts) + [0] * (len(shape) - len(starts))
    full_sizes = list(sizes) + list(shape[len(sizes):])
    x = slice_at(buf, [full_starts[a] for a in layout], [full_sizes[a] for a in layout])
    return jnp.transpose(x, tuple(int(i) for i in np.argsort(layout)))


def write_slot(buf, update, idx: list, layout: tuple | None):
    """`buf` with `update` (logical order, leading axes of size 1 at the slot
    `idx`) written in."""
    if layout is None:
        return update_at(buf, update, idx)
    full = list(idx) + [0] * (update.ndim - len(idx))
    return update_at(buf, jnp.transpose(update, layout), [full[a] for a in layout])


def write_point(buf, value, idx: list, ndim: int, window_axis: int | None, window: int,
                layout: tuple | None):
    """`buf` with the point `value` written at slot `idx` (and at its mirror
    slot on a window store's window axis)."""
    update = value.reshape((1,) * ndim + value.shape).astype(buf.dtype)
    buf = write_slot(buf, update, list(idx), layout)
    if window_axis is not None:
        mirror = list(idx)
        mirror[window_axis] = mirror[window_axis] + window
        buf = write_slot(buf, update, mirror, layout)
    return buf


def count_compile(name: str) -> None:
    """Counts one trace (compilation) of `name` in COMPILES."""
    COMPILES[name] = COMPILES.get(name, 0) + 1




def jit_kernel(name: str, opdef: OpDef, operands: list[LazyOperand], out: OutSpec,
               fn=None, counter: dict | None = None):
    """The jitted kernel. Call as `k(static, *leaves)` with `static` =
    (read sizes of fixed/varying axes in operand order..., static scalars...)
    and leaves = [out buffer, out slot per axis] (in place) + per operand
    (array | buffer, start per axis, then (lo, n) per varying axis) + the
    point-varying scalars in `opdef.dynamic_scalars` order."""
    fn = fn or (lambda args, sv: opdef.fn(jnp, args, sv)[0])
    dyn_names, static_names = opdef.dynamic_scalars, opdef.static_scalars
    check = opdef.attrs.get("index_check")

    def impl(static, *leaves):
        count_compile(name)
        if counter is not None:
            counter[name] = counter.get(name, 0) + 1
        if check is not None:
            leaves, seen = leaves[:-1], leaves[-1]
        pos, spos = 0, 0
        out_buf = out_idx = None
        if out.inplace:
            out_buf, out_idx = leaves[0], leaves[1:1 + out.ndim]
            pos = 1 + out.ndim
        args = []
        for spec in operands:
            if spec.kind == "value":
                args.append(jnp.asarray(leaves[pos]))
                pos += 1
                continue
            if spec.kind == "padded":
                x, n = jnp.asarray(leaves[pos]), leaves[pos + 1]
                pos += 2
                args.append(_mask(x, spec.pad_axis, n, spec.identity) if spec.mask else x)
                continue
            if spec.self_read:
                buf = out_buf
            else:
                buf, pos = leaves[pos], pos + 1
            starts = list(leaves[pos:pos + len(spec.axes)])
            pos += len(spec.axes)
            extents = logical_shape(buf.shape, spec.layout)
            sizes, shifted = [], {}
            for i, ax in enumerate(spec.axes):
                if ax == "point":
                    sizes.append(1)
                elif ax == "prefix" and static[spos] <= extents[i]:   # x[j'] = buf[j'], a plain slice
                    sizes.append(static[spos])
                    spos += 1
                elif ax in ("shifted", "prefix"):   # the whole axis, gathered from the start below
                    shifted[i] = (starts[i], static[spos])
                    starts[i] = 0
                    sizes.append(extents[i])
                    spos += 1
                else:
                    sizes.append(static[spos])
                    spos += 1
            x = read_slice(buf, starts, sizes, spec.layout)
            kept = [s for ax, s in zip(spec.axes, sizes) if ax != "point"]
            x = x.reshape(tuple(kept) + tuple(spec.shape))
            j = 0
            for i, ax in enumerate(spec.axes):
                if ax == "point":
                    continue
                if ax in ("shifted", "prefix"):   # x[j'] = buf[start + j'] for j' < n, valid part first
                    if i in shifted:
                        start, cap = shifted[i]
                        idx = jnp.clip(start + jnp.arange(cap, dtype=jnp.int32), 0, x.shape[j] - 1)
                        x = jnp.take(x, idx, axis=j)
                    n = leaves[pos]
                    pos += 1
                    if spec.mask:
                        x = _mask(x, j, n, spec.identity)
                if ax == "varying":
                    lo, n = leaves[pos], leaves[pos + 1]
                    pos += 2
                    iota = lax.broadcasted_iota(jnp.int32, x.shape, j)
                    x = jnp.where((iota >= lo) & (iota < lo + n), x,
                                  jnp.asarray(spec.identity, dtype=x.dtype))
                j += 1
            args.append(x)
        sv = {}
        for n_ in dyn_names:
            sv[n_], pos = leaves[pos], pos + 1
        for n_ in static_names:
            sv[n_], spos = static[spos], spos + 1
        value = fn(args, sv)
        if check is not None:
            seen = index_range(seen, args[check[0]], args[check[1]].shape[check[2]])
        if not out.inplace:
            return value if check is None else (value, seen)
        out_buf = write_point(out_buf, value, list(out_idx), out.ndim, out.window_axis, out.window, out.layout)
        return out_buf if check is None else (out_buf, seen)

    impl.__name__ = impl.__qualname__ = name.lstrip("@")   # what JAX's logs and profiles call it
    return jax.jit(impl, static_argnums=0, donate_argnums=(1,) if out.inplace else ())


# -- index range checks ---------------------------------------------------------------------------
def index_range(seen, idx, size: int):
    """`seen` (int64 [smallest index, largest index - size of its dimension])
    folded with the indices `idx` into a dimension of `size`: an index was
    out of range iff seen[0] < 0 or seen[1] >= 0 once the run ends."""
    idx = jnp.asarray(idx).astype(jnp.int64).ravel()
    big = jnp.iinfo(jnp.int64).max
    low = jnp.min(idx, initial=big)
    high = jnp.max(idx - size, initial=-big)
    return jnp.stack([jnp.minimum(seen[0], low), jnp.maximum(seen[1], high)])


def index_range_start() -> "jax.Array":
    """The accumulator of a run that has seen no index."""
    big = np.iinfo(np.int64).max
    return jnp.asarray(np.array([big, -big], dtype=np.int64))


_SSA = re.compile(r"%[A-Za-z0-9_$.#-]+")


def kernel_key(opdef: OpDef, operands: list[LazyOperand], out: OutSpec) -> str:
    """What a jitted kernel's traced code depends on, as text: the op (an
    island with its body) printed with local SSA names and no locations, the
    scalar names and padded masks, and the operand and output specs. Kernels
    of one executable with equal keys are one jitted function (the layers of
    a model share theirs); the bounds' values and sizes are jit's own key."""
    op = opdef.node.op
    with op.context:
        text = op.get_asm(enable_debug_info=False, use_local_scope=True)
    names: dict[str, str] = {}   # SSA names renumbered in order of appearance
    text = _SSA.sub(lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text)
    return "\n".join([text, repr([n for n, _ in opdef.scalars]), repr(opdef.attrs.get("masks")),
                      repr(opdef.attrs.get("index_check")), repr(operands), repr(out)])


def _mask(x, axis: int, n, identity):
    """`x` with the elements at positions >= n along `axis` replaced by `identity`."""
    iota = lax.broadcasted_iota(jnp.int32, x.shape, axis)
    return jnp.where(iota < n, x, jnp.asarray(identity, dtype=x.dtype))


def mask_identity(opdef: OpDef) -> object | None:
    """Padding for varying axes, or None when the op cannot mask them."""
    if opdef.kind == "reduce":
        return REDUCE_IDENTITY(opdef.attrs["reduce_kind"], opdef.dtypes[0])
    if opdef.kind == "matmul":
        return 0
    return None


# -- generic host-side access to a jax ArrayStore -----------------------------------------------
# Writers are shared by every executable of the process. The key is exactly what
# the traced function closes over (domain axes, window axis and size); shapes and
# dtypes of the arguments are jax.jit's own cache key, so no entry can serve
# another layout.
@functools.cache
def helper_jit(fn, static_argnums: tuple = (), donate_argnums: tuple = ()):
    """`jax.jit(fn)`, made once a process: the runtime's own small helpers
    (packing, uploads, device zeros; one dispatch where eager JAX or
    `jax.device_put` costs several), not a program's kernels."""
    return jax.jit(fn, static_argnums=static_argnums, donate_argnums=donate_argnums)


_WRITERS: dict = {}


def store_writer(store: ArrayStore):
    """A jitted, donating `write(buf, *slots, value)` for stores of this layout."""
    nd = len(store.modes)
    window = store.sizes[store.window_axis] if store.window_axis is not None else 0
    key = (nd, store.window_axis, window, store.layout)
    if key not in _WRITERS:
        spec = OutSpec(True, nd, store.window_axis, window, store.layout)

        def impl(buf, *rest):
            count_compile("store_write")
            idx, value = rest[:nd], jnp.asarray(rest[nd])
            return write_point(buf, value, list(idx), nd, spec.window_axis, spec.window, spec.layout)

        _WRITERS[key] = jax.jit(impl, donate_argnums=0)
    return _WRITERS[key]


@partial(jax.jit, static_argnums=(0, 1))
def _read(sizes, layout, buf, *starts):
    count_compile("store_read")
    return read_slice(buf, list(starts), list(sizes), layout)


def host_read(store: ArrayStore, idx: tuple) -> np.ndarray:
    """NumPy value of `store.buf[idx]` (ints and slices), read through a
    jitted bucketed slice so no size compiles more than once per bucket."""
    starts, sizes, crops = [], [], []
    for axis, c in enumerate(idx):
        cap = store.caps[axis]
        if isinstance(c, slice):
            n = len(range(c.start, c.stop, c.step or 1))
            span = (c.stop - c.start) if (c.step or 1) == 1 else max(0, (n - 1) * c.step + 1)
            b = min(bucket(span), cap)
            s = min(c.start, cap - b)
            starts.append(s)
            sizes.append(b)
            crops.append(slice(c.start - s, c.start - s + span, c.step))
        else:
            starts.append(c)
            sizes.append(1)
            crops.append(0)
    padded = np.asarray(_read(tuple(sizes), store.layout, store.buf, *starts))
    return padded[tuple(crops)]
