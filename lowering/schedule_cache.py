"""A schedule cache on disk: isl's schedule of a graph, kept across processes.

Computing the schedule (isl's ILP scheduler) is most of a large program's
compile time: PPO's 179 statements take ~6 of its ~11 s of `p.compile()`.
The schedule depends only on the graph's structure (its ops, domains,
dependences and bounds) and the scheduler's options, so a later process that
compiles the same graph can load it instead.

With a directory set (`set_directory`; `tidal.frontend.compile_cache
.enable_persistent_cache(d)` and `TIDAL_CACHE_DIR=d` set `d/schedules`, next
to JAX's cache of XLA executables), `schedule(graph, options, graph_op)`
looks for a file named by the SHA-256 of the graph's text (without
locations; large constants elided: their values do not change a schedule),
the options and this format's version. On a hit the text is loaded with
`load_schedule`, which derives the domains again and checks every
dependence against it: an entry that does not fit the graph (stale, edited,
truncated) counts as `stale`, is recomputed and written again. It is never
trusted. Without a directory nothing is read or written.

`STATS` counts hits, misses and stale entries in this process. Writes go to a temporary file renamed into place, so
a reader never sees half an entry.
"""
from __future__ import annotations

import hashlib
import os
import tempfile

from mlir import ir

from .schedule import GraphSchedule, ScheduleOptions, load_schedule, schedule_graph

__all__ = ["schedule", "set_directory", "directory", "STATS", "FORMAT"]

FORMAT = "tidal-schedule-2"   # bump when the meaning of a cached schedule text changes
STATS = {"hits": 0, "misses": 0, "stale": 0}
_DIRECTORY: str | None = None


def set_directory(path: str | os.PathLike | None) -> None:
    """Where schedules are kept (created if missing); None turns the cache off."""
    global _DIRECTORY
    if path is None:
        _DIRECTORY = None
        return
    os.makedirs(path, exist_ok=True)
    _DIRECTORY = os.fspath(path)


def directory() -> str | None:
    return _DIRECTORY


def _key(graph_op: ir.Operation, options: ScheduleOptions) -> str:
    text = graph_op.get_asm(large_elements_limit=16, enable_debug_info=False)
    digest = hashlib.sha256()
    for part in (FORMAT, repr(options), text):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def schedule(graph, options: ScheduleOptions, graph_op: ir.Operation) -> GraphSchedule:
    """The schedule of `graph` (read from `graph_op`): from the cache when it
    holds one that fits, else computed by `schedule_graph` (and kept, when a
    directory is set)."""
    if _DIRECTORY is None:
        return schedule_graph(graph, options)
    path = os.path.join(_DIRECTORY, _key(graph_op, options) + ".isl")
    text = _read(path)
    if text is not None:
        try:
            sched = load_schedule(graph, text, options)
        except Exception:  # noqa: BLE001 - any entry that does not load is recomputed, never trusted
            STATS["stale"] += 1
        else:
            STATS["hits"] += 1
            return sched
    else:
        STATS["misses"] += 1
    sched = schedule_graph(graph, options)
    _write(path, sched.text())
    return sched


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _write(path: str, text: str) -> None:
    """Best effort: a cache that cannot be written costs the next process a recompute, nothing else."""
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass
