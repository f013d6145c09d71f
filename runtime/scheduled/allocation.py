"""Allocating a run's stores: their layouts for the bounds, the footprint check
before anything is allocated, loading the inputs, and the stores' lifetimes.

A store is created when the run starts, or, for a value whose lifetime starts
at a later top-level statement (lowering/lifetimes.py), by `_alloc(k)` just
before it; `_free(k)` drops it after its last reader. Both are recorded by
the run's `MemoryTracker` (memory.py, `exe.memory_report()`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from mlir import ir

from tidal.symbolic import evaluate, parse, slice_size

from ..reference_graph import EvaluationError
from ..run_checks import cast_exact, check_footprint, is_device_array
from .launchers import static_bucket, store_name
from .opdecode import DTYPES
from .stores import PointStore, bucket, make_store

__all__ = ["StoreAllocator"]


class StoreAllocator:
    """The stores of a scheduled program's runs (program.py owns one): their layouts
    for a run's bounds, the footprint check, the inputs loaded, and `alloc(k)` /
    `free(k)`, which the host program calls where a value's lifetime starts and
    ends. `ns` is the host program's namespace, where the live stores are bound
    by name; `counts` the executable's run counters (host-to-device copies)."""

    def __init__(self, graph, plans: dict, mem_plan, late: set, backend, device_memory: int | None,
                 padded: dict, counts: list):
        self.graph, self.plans, self.mem_plan, self.late = graph, plans, mem_plan, late
        self.backend, self.device_memory, self.padded, self._counts = backend, device_memory, padded, counts
        self.ns: dict = {}
        self.live: dict = {}          # the run's live stores by name: allocate() sets, alloc adds, free drops
        self.memory = None            # the run's MemoryTracker (memory.py)
        self.swapper = None           # under a device budget (swapping.py)
        self.reuses = 0               # values whose store took memory an earlier value had (last run)
        self._run_bounds: dict = {}
        self._pending: dict = {}
        self._uploads: list = []
        self._storage_bufs: dict = {}
        self._live_index = None
        self._layout_cache: dict = {}
        self._descriptions: dict = {}
        self._layout_of: dict = {}    # store key -> the layout it was made with

    def _shape(self, texts, bounds):
        exprs = [_parsed(t) for t in texts]
        if any(any(s.role == "step" for s in e.free_symbols) for e in exprs):
            return None
        return tuple(int(evaluate(e, bounds)) for e in exprs)

    def _load_input(self, node, store, extents, shape, inputs):
        name = ir.StringAttr(node.op.attributes["name"]).value
        if name not in inputs:
            raise EvaluationError(f"{node.location}: no value for input '{name}'")
        dtype = np.dtype(DTYPES[node.result_dtypes[0]])
        if isinstance(store, PointStore):
            for p in np.ndindex(*extents):
                value = inputs[name]
                for c in p:
                    value = value[c]
                try:
                    store.data[tuple(p)] = cast_exact(value, dtype, f"input '{name}' at {p}")
                except ValueError as e:
                    raise EvaluationError(f"{node.location}: {e}") from None
            return
        if store.xp is not np and is_device_array(inputs[name], dtype, tuple(extents) + tuple(shape)) \
                and self.device_memory is None:
            # a device array as declared: read as is (inputs are never written), or
            # padded to the store's capacity where it is (no copy to the host and back)
            store.buf = inputs[name] if tuple(store.caps) == tuple(extents) else \
                _pad_on_device(inputs[name], tuple(store.caps) + tuple(shape))
            return
        try:
            given = cast_exact(inputs[name], dtype, f"input '{name}'")
        except ValueError as e:
            raise EvaluationError(f"{node.location}: {e}") from None
        expected = tuple(extents) + tuple(shape)
        if given.shape != expected:
            raise EvaluationError(f"{node.location}: input '{name}' has shape {given.shape}, "
                                  f"expected {expected}")
        if store.xp is np:
            store.buf = given
        elif self.device_memory is None:
            store.buf = given          # sent and padded to the store's capacity on the device (_upload)
            self._uploads.append(store)
            self._counts[3] += 1
        else:                          # under a budget: on the host until used, at its capacity
            buf = given
            if tuple(store.caps) != tuple(extents):
                buf = np.zeros(tuple(store.caps) + tuple(shape), dtype=dtype)
                buf[tuple(slice(0, e) for e in extents)] = given
            store.buf = buf

    def _padded_shape(self, texts, axis: int, bounds: dict):
        """The shape a padded value is packed at in an XLA loop: its varying
        axis at the static capacity a traced kernel computes it at
        (`static_bucket`), or None (no static bound: never traced)."""
        cap = static_bucket(parse(texts[axis], dims=self.graph.dims))
        shape = self._shape([t for i, t in enumerate(texts) if i != axis], bounds)
        if cap is None or shape is None:
            return None
        return shape[:axis] + (cap,) + shape[axis:]

    def layouts(self, bounds: dict) -> list:
        """(key, plan, extents, per-point shape or None, dtype) of every store of a run."""
        return self._planned(bounds)[0]

    def _planned(self, bounds: dict) -> tuple[list, list]:
        """(the layouts, the footprint) of a run's stores: the same for the same
        bounds, kept for the last few."""
        cache = self._layout_cache
        key = tuple(sorted(bounds.items()))
        if key not in cache:
            if len(cache) >= 8:
                cache.pop(next(iter(cache)))
            layouts = self._compute_layouts(bounds)
            cache[key] = (layouts, self._footprint(layouts))
        return cache[key]

    def _compute_layouts(self, bounds: dict) -> list:
        out = []
        for (k, r), plan in self.plans.items():
            node = self.graph.nodes[k]
            extents = [bounds[d.bound.name] for d in self.graph.dims_of(node)]
            if node.name == "sdg.output":
                edge = node.edges[0]
                src = self.graph.nodes[edge.source]
                shape = self._shape(src.result_shapes[edge.result], bounds)
                if shape is not None:
                    sizes = [evaluate(slice_size(c), bounds) for c in edge.dep if c.kind == "slice"]
                    shape = tuple(sizes) + shape
                dtype = DTYPES[src.result_dtypes[edge.result]]
            else:
                shape = self._shape(node.result_shapes[r], bounds)
                dtype = DTYPES[node.result_dtypes[r]]
            out.append(((k, r), plan, extents, shape, dtype))
        return out

    def _footprint(self, layouts: list) -> list[tuple[str, int]]:
        """(what, bytes) per store, before anything is allocated: a store keeps
        `size` points on ring/window axes (2W for a window) and every point on
        block axes; values that share a storage (memory_plan.py) count once, at
        the largest. Point stores of point-varying shapes are not counted."""
        entries, shared = [], {}
        for (k, r), plan, extents, shape, dtype in layouts:
            if shape is None:
                continue
            points = 1
            for a, extent in zip(plan.axes, extents):
                points *= a.size if a.mode == "ring" else 2 * a.size if a.mode == "window" else extent
            size = math.prod(shape)
            node = self.graph.nodes[k]
            entry = (f"the store of '{node.label}' at {node.location}", points * size * np.dtype(dtype).itemsize)
            storage = self.mem_plan.storage_of.get((k, r)) if self.device_memory is None else None
            if storage is None:
                entries.append(entry)
            elif entry[1] > shared.get(storage, ("", -1))[1]:
                shared[storage] = entry
        return entries + list(shared.values())

    def allocate(self, bounds: dict, inputs: dict) -> dict:
        """The stores of one run, inputs loaded (by generated name; also `live`);
        the stores of values whose lifetime starts later (`self.late`) are
        created by `alloc` when it does. The previous run's stores are dropped
        from the namespace first."""
        for key in self.live:
            self.ns[key] = None
        layouts, footprint = self._planned(bounds)
        check_footprint(footprint)
        self._run_bounds = bounds
        stores = {}
        self._pending, self._uploads = {}, []
        self._storage_bufs = {}     # storage -> its buffer this run (memory_plan.py)
        self.reuses = 0            # values whose store took memory an earlier value had
        for layout in layouts:
            (k, r), _, _, shape, _ = layout
            if self.graph.nodes[k].name != "sdg.output":
                self.ns[f"_shape{k}_{r}"] = shape
            if k in self.late:
                self._pending.setdefault(k, []).append(layout)
            else:
                stores[store_name(k, r)] = self._make_store(layout, bounds, inputs)
        _upload(self._uploads)
        self.live = stores
        return stores

    def rebound(self, bounds: dict, dependent: set) -> None:
        """An `sdg.stop_when` lowered a bound (stopping.py): the stores created
        from now on get the layouts of `bounds`, and the stores of `dependent`
        nodes (which run only after the stop) whose layout changes are made
        again, empty. Memory was checked for the bounds given (the most)."""
        layouts, _ = self._planned(bounds)
        by_key = {layout[0]: layout for layout in layouts}
        for k, pending in self._pending.items():
            self._pending[k] = [by_key[layout[0]] for layout in pending]
        for layout in layouts:
            (k, r), _, _, shape, _ = layout
            if self.graph.nodes[k].name != "sdg.output":
                self.ns[f"_shape{k}_{r}"] = shape
            key = store_name(k, r)
            if k in dependent and key in self.live and layout != self._layout_of.get(key):
                self.live[key] = self.ns[key] = self._make_store(layout, bounds, {})
        self._run_bounds = bounds

    def _make_store(self, layout, bounds: dict, inputs: dict):
        (k, r), plan, extents, shape, dtype = layout
        self._layout_of[store_name(k, r)] = layout
        xp = self.backend.array_module()
        node = self.graph.nodes[k]
        budget = self.device_memory is not None   # every store starts on the host
        # an input's buffer is replaced by the loaded value (_load_input): never sent zeros
        storage = None if budget else self.mem_plan.storage_of.get((k, r))
        zeros = None if storage is None else functools.partial(self._from_storage, storage, xp)
        if node.name == "sdg.input" and not budget:
            zeros = _no_buffer     # _load_input gives it the input's value: no zeros to fill first
        store = make_store(plan, extents, shape, dtype, xp, pow2=xp is not np,
                           host=budget or (node.name == "sdg.input" and zeros is None), zeros=zeros)
        # slots of a packed point store (traced.py): block axes at the power of two, as
        # array stores, so a loop compiles once per capacity, not per extent
        # (no ring axes of size 1: stores.dense_axes)
        slots = [a.size if a.mode == "ring" else bucket(e) for a, e in zip(plan.axes, extents)]
        if isinstance(store, PointStore):
            slots = [slots[i] for i in store.dense_axes]
        if isinstance(store, PointStore) and shape is not None:   # packable (traced.py)
            store.layout = (slots, shape, np.dtype(dtype))
        elif isinstance(store, PointStore) and k in self.padded and r == 0 \
                and self.padded[k].out_axis is not None:
            # padded values, packed at their static capacity (traced.py, LauncherGen.bucket)
            axis = self.padded[k].out_axis
            padded_shape = self._padded_shape(node.result_shapes[r], axis, bounds)
            if padded_shape is not None:
                store.layout, store.padded_axis = (slots, padded_shape, np.dtype(dtype)), axis
        if node.name == "sdg.input":
            self._load_input(node, store, extents, shape, inputs)
        return store

    # -- lifetimes (the host program's `_alloc(k)` / `_free(k)`) ------------------------------
    def alloc(self, k: int, quiet: bool = False) -> None:
        """`quiet`: called just after another `_alloc` or `_free` (hostgen.py)."""
        created, self._uploads = {}, []
        for layout in self._pending.pop(k, ()):
            created[store_name(*layout[0])] = self._make_store(layout, self._run_bounds, {})
        _upload(self._uploads)
        self.ns.update(created)
        for key in created:          # the index is current before the stores it adds
            keys = self._live_keys(node_of(key))
            if key not in self.live:
                keys.append(key)
        self.live.update(created)
        if self.swapper is not None:
            self.swapper.added(created)     # created on the host
        self.memory.allocated(k, created, quiet)

    def _live_keys(self, k: int) -> list:
        """The live stores of op k: an index of `live` by op, rebuilt when a run
        replaces that dict (a scan of every live store per `free` is slow)."""
        index = self._live_index
        if index is None or index[0] is not self.live:
            by_op: dict[int, list] = {}
            for key in self.live:
                by_op.setdefault(node_of(key), []).append(key)
            index = self._live_index = (self.live, by_op)
        return index[1].setdefault(k, [])

    def free(self, k: int, quiet: bool = False) -> None:
        keys = self._live_keys(k)
        self._live_index[1][k] = []
        self.memory.freeing(k, keys, quiet)
        for key in keys:
            self._release(k, _result_of(key), self.live[key])
            del self.live[key]
            self.ns[key] = None     # the buffer goes with its last reference

    def _release(self, k: int, r: int, store) -> None:
        """A freed value's memory: kept for the next value of its storage (a
        NumPy pool stays; a device buffer is kept to be zeroed in place), or
        released with the storage's last value."""
        storage = self.mem_plan.storage_of.get((k, r))
        if storage is None or self.device_memory is not None:
            return
        if self.mem_plan.storages[storage].values[-1] == (k, r):
            self._storage_bufs.pop(storage, None)
        elif getattr(store, "buf", None) is not None and store.xp is not np:
            self._storage_bufs[storage] = store.buf

    def _from_storage(self, storage: int, xp, shape: tuple, dtype: np.dtype):
        """A zeroed buffer of `shape` in storage `storage` (memory_plan.py): on
        NumPy a view of the storage's buffer (grown if this value is larger);
        on the device the storage's last dead buffer, zeroed in place (donated),
        when it has this shape and dtype, else new zeros."""
        nbytes = math.prod(shape) * dtype.itemsize
        if xp is np:
            pool = self._storage_bufs.get(storage)
            if pool is None or pool.nbytes < nbytes:
                pool = self._storage_bufs[storage] = np.empty(nbytes, dtype=np.uint8)
            else:
                self.reuses += 1
            view = pool[:nbytes].view(dtype).reshape(shape)
            view.fill(0)
            return view
        from .stores import device_zeros
        dead = self._storage_bufs.pop(storage, None)
        if dead is not None and tuple(dead.shape) == tuple(shape) and dead.dtype == dtype:
            self.reuses += 1
            return _zeros_in_place(dead)
        return device_zeros(tuple(shape), dtype.name)

    def describe_store(self, key: str) -> tuple:
        """(name, label, kind) of a store key, for the memory report."""
        cache = self._descriptions
        if key not in cache:
            cache[key] = self._describe(key)
        return cache[key]

    def _describe(self, key: str) -> tuple:
        k, r = node_of(key), _result_of(key)
        node = self.graph.nodes[k]
        plan = self.plans.get((k, r))
        return (f"%{k}" + (f"#{r}" if r else ""), f"{node.label} at {node.location}",
                plan.kind if plan is not None else "point")


# a host input at its store's capacity and at least this large is sent with
# jnp.asarray, not through the jitted padding call: two (16, 4096, 64) f32
# inputs, 5.9 ms against 11 ms there (the jitted call copies each once more)
DIRECT_UPLOAD_BYTES = 1 << 20


def _upload(stores: list) -> None:
    """The host buffers of `stores` to the device, each padded with zeros to
    its store's capacity there, in one call (one jitted dispatch for all, where
    `jax.device_put` costs about 0.1 ms an array; no host buffer of the
    capacity to fill first)."""
    if not stores:
        return
    import jax.numpy as jnp

    from .jax_backend import helper_jit
    shapes = tuple(tuple(store.caps) + tuple(store.shape) for store in stores)
    rest = []
    for store, shape in zip(stores, shapes):
        if tuple(store.buf.shape) == shape and store.buf.nbytes >= DIRECT_UPLOAD_BYTES:
            store.buf = jnp.asarray(store.buf)   # at its capacity already: one copy, no jitted call
        else:
            rest.append((store, shape))
    if rest:
        bufs = helper_jit(_padded_all, (1,))([store.buf for store, _ in rest], tuple(shape for _, shape in rest))
        for (store, _), buf in zip(rest, bufs):
            store.buf = buf


def _padded_all(xs, shapes: tuple):
    return [x if tuple(x.shape) == shape else _padded(x, shape) for x, shape in zip(xs, shapes)]


def _no_buffer(shape: tuple, dtype) -> None:
    return None


def _zeros_in_place(buf):
    """Zeros in `buf`'s memory (donated: XLA writes the zeros where it was)."""
    import jax.numpy as jnp

    from .jax_backend import helper_jit
    return helper_jit(jnp.zeros_like, donate_argnums=(0,))(buf)


def _pad_on_device(value, shape: tuple):
    """`value` in a zero buffer of `shape` (its leading corner), one jitted call."""
    from .jax_backend import helper_jit
    return helper_jit(_padded, (1,))(value, shape)


def _padded(value, shape: tuple):
    import jax.numpy as jnp
    return jnp.pad(value, [(0, c - e) for c, e in zip(shape, value.shape)])


@functools.lru_cache(maxsize=4096)
def _parsed(text: str):
    return parse(text)


def node_of(key: str) -> int:
    return int(key[2:].split("_")[0])


def _result_of(key: str) -> int:
    parts = key[2:].split("_")
    return int(parts[1]) if len(parts) > 1 else 0
