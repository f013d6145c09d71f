"""What a run's stores hold over time: `exe.memory_report()`.

The runtime allocates a store when its value's lifetime starts and frees it
when the lifetime ends (`_alloc(k)` / `_free(k)` in the host program, from
lowering/lifetimes.py); the other stores live for the whole run. A
`MemoryTracker` records, at each of these events, the bytes of every live
store (an array store's buffer, the arrays a point store holds) and the
seconds since the run started; the report is the resulting timeline.

    report = exe.memory_report()
    report.peak_bytes            # the most the stores held at once
    report.stores["%3"]          # StoreLife: bytes, allocated / freed at (event index)
    print(report)                # a table, largest stores first
    report.plot("mem.png")       # live bytes over the run, stacked per store (matplotlib)

Counted: the stores (inputs' copies, intermediate values, outputs). Not
counted: the temporaries inside one kernel or XLA loop (XLA's own buffers),
compiled code, and the user's arrays. Between two events a point store only
grows (a ring store stops at its K points), so the maximum over the events,
each sampled just before its free, is the peak of the stores.

Under a device-memory budget (`p.compile(device_memory=...)`, swapping.py)
the stores move between the device and the host: every move is an event
(`swapped`), each timeline entry also gives the bytes on the device, and
`peak_device_bytes` is the most the device held, checked before every launch.
"""
from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["MemoryTracker", "MemoryReport", "StoreLife", "store_bytes"]


def store_bytes(store) -> int:
    """The bytes a store holds now (array buffer, or the arrays of a point store)."""
    buf = getattr(store, "buf", None)
    if buf is not None:
        nbytes = getattr(store, "nbytes", None)    # an ArrayStore's, fixed
        return nbytes if nbytes is not None else int(buf.size) * np.dtype(buf.dtype).itemsize
    data = getattr(store, "data", None)
    if data is None:
        return 0
    dense = getattr(data, "dense", None)
    layout = getattr(store, "layout", None)
    if layout is not None and getattr(store, "padded_axis", None) is None:
        # values of one static shape (allocation.py): counted, not measured one by one
        # (a run samples every live store at every alloc and free: REINFORCE 392 x 138)
        caps, shape, dtype = layout
        point = math.prod(shape) * dtype.itemsize
        return (math.prod(caps) * point if dense is not None else 0) + len(data) * point
    total = int(dense.nbytes) if dense is not None else 0
    return total + sum(int(getattr(v, "nbytes", 0)) for v in data.values())


@dataclass
class StoreLife:
    name: str           # "%3" (or "%3#1" for a second result)
    label: str          # the op and the user's line
    kind: str           # "point" | "block" | "window"
    bytes: int          # the most it held
    allocated: int      # event index (0: when the run started)
    freed: int | None   # event index, or None (lived to the end)


@dataclass
class MemoryReport:
    peak_bytes: int
    timeline: list      # [(seconds, event, live bytes, device bytes)]: "start", "alloc %3", "free %3",
    #                     "swap out %3", "swap in %3", "end"
    stores: dict        # name -> StoreLife
    changes: list       # per timeline entry: [(name, bytes now, or None: freed)] since the entry before
    swapped: list = field(default_factory=list)   # [(timeline index, name, "out" | "in", bytes)]
    peak_device_bytes: int = 0    # the most the stores on the device held (= peak_bytes without a budget)
    budget: int | None = None     # p.compile(device_memory=...), in bytes

    @functools.cached_property
    def per_store(self) -> list:
        """Per timeline entry: {name: bytes} of the live stores (made from
        `changes` when asked: a run records only what changed at each event)."""
        snaps, live = [], {}
        for changed in self.changes:
            for name, nbytes in changed:
                if nbytes is None:
                    live.pop(name, None)
                else:
                    live[name] = nbytes
            snaps.append(dict(live))
        return snaps

    @property
    def freed_bytes(self) -> int:
        """Bytes released before the run ended."""
        return sum(s.bytes for s in self.stores.values() if s.freed is not None)

    def __str__(self) -> str:
        events = sum(1 for _, e, _, _ in self.timeline if e.startswith(("alloc", "free")))
        swaps = (f"{len(self.swapped)} swaps, {_mb(sum(b for *_, b in self.swapped))} moved, peak on the device "
                 f"{_mb(self.peak_device_bytes)} under a budget of {_mb(self.budget)}"
                 if self.budget is not None else "nothing swapped")
        head = (f"peak live bytes {_mb(self.peak_bytes)} ({len(self.stores)} stores, {events} alloc/free events, "
                f"{_mb(self.freed_bytes)} freed before the end, {swaps})")
        rows = sorted(self.stores.values(), key=lambda s: -s.bytes)
        lines = [head, f"{'store':>8} {'kind':6} {'bytes':>12} {'alloc':>6} {'free':>6}  op"]
        for s in rows:
            lines.append(f"{s.name:>8} {s.kind:6} {s.bytes:>12,} {s.allocated:>6} "
                         f"{'-' if s.freed is None else s.freed:>6}  {s.label}")
        return "\n".join(lines)

    def plot(self, path, top: int = 8) -> str:
        """Live bytes over the run (x: event index), stacked per store (the
        `top` largest, the rest as "other"); written to `path` (PNG, SVG...)."""
        try:
            import matplotlib
            matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("MemoryReport.plot needs matplotlib: pip install matplotlib "
                              "(or 'tidal[draw]')") from None
        names = [s.name for s in sorted(self.stores.values(), key=lambda s: -s.bytes)[:top]]
        xs = list(range(len(self.timeline)))
        layers = [[snap.get(n, 0) / 2**20 for snap in self.per_store] for n in names]
        other = [sum(b for n, b in snap.items() if n not in names) / 2**20 for snap in self.per_store]
        fig, ax = plt.subplots(figsize=(8, 4.5))
        ax.stackplot(xs, *layers, other, step="post",
                     labels=[f"{n} {self.stores[n].label[:40]}" for n in names] + ["other"])
        if self.budget is not None:
            ax.step(xs, [d / 2**20 for *_, d in self.timeline], where="post", color="black", label="on the device")
            ax.axhline(self.budget / 2**20, color="red", linestyle="--", label="budget")
        if len(xs) <= 60:
            ax.set_xticks(xs)
            ax.set_xticklabels([e for _, e, _, _ in self.timeline], rotation=60, ha="right", fontsize=7)
        else:
            ax.set_xlabel("event")
        ax.set_ylabel("live MiB (stores)")
        ax.set_title(f"peak {_mb(self.peak_bytes)}")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return str(path)


def _mb(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


class MemoryTracker:
    """Collects one run's timeline (see the module docstring). `on_host(key)`:
    whether a store is swapped out to the host now (swapping.py).

    An event records only what changed since the one before (the bytes of
    the stores added, removed, or grown); the report rebuilds the per-store
    snapshots from them when asked. Without a budget, the live total is kept
    as a running sum and an event measures only the stores whose size can
    change (point stores): measuring every live store at every event cost
    the RNN of bench_runtime.py 85 us a run, a third of its fixed overhead."""

    def __init__(self, describe, on_host=None, budget: int | None = None):
        self.describe = describe     # store key -> (name, label, kind)
        self.on_host = on_host or (lambda key: False)
        self.budget = budget
        self.live: dict = {}         # key -> store
        self.names: dict = {}        # key -> its name in the report
        self.fixed: dict = {}        # key -> bytes, for stores whose size never changes (array stores)
        self.growing: dict = {}      # key -> store, the live stores whose size can change
        self.current: dict = {}      # name -> bytes at the last event, of the live stores
        self.total = 0               # sum(self.current.values())
        self.lives: dict = {}        # name -> StoreLife
        self.timeline: list = []
        self.changes: list = []
        self.swapped: list = []
        self.peak = 0
        self.peak_device = 0
        self.start = time.perf_counter()

    def device_bytes(self) -> int:
        return sum(store_bytes(s) for key, s in self.live.items() if not self.on_host(key))

    def _sample(self, event: str, quiet: bool = False, added=(), removed=()) -> None:
        """Appends the live bytes now. `quiet`: nothing ran since the last
        event, only the stores `added` and `removed` (keys) changed: the
        other stores are not measured again (a run of consecutive allocs and
        frees between two statements: REINFORCE's 392 events a run)."""
        if self.budget is not None:
            self._sample_all(event)
            return
        changed, current, lives = [], self.current, self.lives
        for key in removed:
            name = self.names[key]
            if name in current:
                self.total -= current.pop(name)
                changed.append((name, None))
        if quiet and self.timeline:
            measure = [(key, self.live[key]) for key in added if key in self.live]
        else:
            measure = list(self.growing.items()) + [(key, self.live[key]) for key in added
                                                     if key in self.live and key not in self.growing]
        fixed, names = self.fixed, self.names
        for key, store in measure:
            name = names[key]
            b = fixed.get(key)
            if b is None:
                b = store_bytes(store)
            old = current.get(name)
            if old != b:
                current[name] = b
                self.total += b - (old or 0)
                changed.append((name, b))
                life = lives[name]
                if b > life.bytes:
                    life.bytes = b
        self._record(event, changed, self.total, self.total)

    def _sample_all(self, event: str) -> None:
        """Every live store measured, and which are on the device (under a budget)."""
        snap, device = {}, 0
        for key, store in self.live.items():
            name = self.names[key]
            b = self.fixed.get(key)
            if b is None:
                b = store_bytes(store)
            snap[name] = b
            if not self.on_host(key):
                device += b
            life = self.lives[name]
            life.bytes = max(life.bytes, b)
        changed = [(name, None) for name in self.current if name not in snap]
        changed += [(name, b) for name, b in snap.items() if self.current.get(name) != b]
        self.current, self.total = snap, sum(snap.values())
        self._record(event, changed, self.total, device)

    def _record(self, event: str, changed: list, total: int, device: int) -> None:
        if total > self.peak:
            self.peak = total
        if device > self.peak_device:
            self.peak_device = device
        self.timeline.append((time.perf_counter() - self.start, event, total, device))
        self.changes.append(changed)

    def observe_device(self, device: int) -> None:
        """Device bytes seen between events (swapping.py checks them before every launch)."""
        self.peak_device = max(self.peak_device, device)

    def _add(self, key, store) -> None:
        name, label, kind = self.describe(key)
        self.live[key] = store
        self.names[key] = name
        nbytes = getattr(store, "nbytes", None)     # an ArrayStore's: fixed (stores.py)
        if nbytes is not None:
            self.fixed[key] = nbytes
        else:
            self.growing[key] = store
        self.lives[name] = StoreLife(name, label, kind, 0, len(self.timeline), None)

    def started(self, stores: dict) -> None:
        for key, store in stores.items():
            self._add(key, store)
        self._sample("start", added=list(stores))

    def allocated(self, node: int, stores: dict, quiet: bool = False) -> None:
        """`quiet`: the previous event came just before (no statement between)."""
        for key, store in stores.items():
            self._add(key, store)
        self._sample(f"alloc %{node}", quiet, added=list(stores))

    def freeing(self, node: int, keys: list, quiet: bool = False) -> None:
        """Before the stores of `node` are dropped: the sample that sees them at
        their largest. `quiet`: the previous event came just before."""
        self._sample(f"before free %{node}", quiet)
        for key in keys:
            self.live.pop(key, None)
            self.growing.pop(key, None)
            self.lives[self.describe(key)[0]].freed = len(self.timeline)
        self._sample(f"free %{node}", True, removed=keys)

    def swap(self, key: str, direction: str, nbytes: int) -> None:
        name = self.describe(key)[0]
        self._sample(f"swap {direction} {name}")
        self.swapped.append((len(self.timeline) - 1, name, direction, nbytes))

    def report(self) -> MemoryReport:
        self._sample("end")
        return MemoryReport(self.peak, self.timeline, self.lives, self.changes, self.swapped,
                            self.peak_device, self.budget)
