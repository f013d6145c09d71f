"""The schedule cache on disk (tidal.lowering.schedule_cache): a graph compiled
before loads its isl schedule instead of computing it, an entry that does not
fit the graph is recomputed, and only the graph's structure and the options
make the key (not locations, not large values)."""
import os

import islpy as isl
import numpy as np
import pytest
from mlir import ir

import tidal as td
from tidal.dialects import make_context
from tidal.frontend import compile_cache
from tidal.lowering import schedule_cache
from tidal.lowering.graph import graphs_in, read_graph
from tidal.lowering.schedule import ScheduleOptions


def _program(weights, name="cached", window=False):
    with td.Program(name) as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(5,), domain=(t,))
        W = td.param("W", weights)
        h = td.recurrent(shape=(5,), domain=(t,))
        h[0] = td.tanh(x[0])
        h[t + 1] = td.tanh(h @ W + x[t + 1])
        y = h[td.max(t - 2, 0):t + 1].sum(0) if window else h
        p.output("y", y)
    return p


def _run(p):
    exe = p.compile(backend="numpy")
    xv = np.linspace(-1, 1, 35, dtype=np.float32).reshape(7, 5)
    return exe, exe.run(bounds={"T": 7}, inputs={"x": xv})["y"]


def _same_schedule(a: str, b: str) -> bool:
    """Equal schedule maps (isl prints a union's parts in an order of its own)."""
    ctx = isl.Context()
    return isl.Schedule.read_from_str(ctx, a).get_map().is_equal(isl.Schedule.read_from_str(ctx, b).get_map())


def _entries(path):
    return sorted(f for f in os.listdir(path) if f.endswith(".isl"))


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path):
    compile_cache.clear()
    schedule_cache.set_directory(tmp_path / "schedules")
    before = dict(schedule_cache.STATS)
    yield tmp_path / "schedules", before
    schedule_cache.set_directory(None)
    compile_cache.clear()


def _delta(before):
    return {k: schedule_cache.STATS[k] - before[k] for k in before}


def test_a_schedule_is_computed_once_then_loaded(_cache_dir):
    path, before = _cache_dir
    exe1, y1 = _run(_program(np.eye(5, dtype=np.float32) * 0.5))
    assert _delta(before) == {"hits": 0, "misses": 1, "stale": 0}
    assert len(_entries(path)) == 1
    compile_cache.clear()    # what a new process sees: no compiled program in memory
    exe2, y2 = _run(_program(np.eye(5, dtype=np.float32) * 0.5))
    assert _delta(before) == {"hits": 1, "misses": 1, "stale": 0}
    assert exe2.schedule() == exe1.schedule()
    np.testing.assert_array_equal(y2, y1)


def test_the_key_ignores_large_values_but_not_structure(_cache_dir):
    path, before = _cache_dir
    rng = np.random.default_rng(0)
    _, ya = _run(_program(rng.standard_normal((5, 5)).astype(np.float32) * 0.3))
    compile_cache.clear()    # (in one process, other weights are a compile cache hit)
    _, yb = _run(_program(rng.standard_normal((5, 5)).astype(np.float32) * 0.3))   # other weights: same schedule
    assert _delta(before) == {"hits": 1, "misses": 1, "stale": 0}
    assert not np.allclose(ya, yb)                                                   # and its own values
    _run(_program(np.eye(5, dtype=np.float32), window=True))                         # another graph
    assert _delta(before)["misses"] == 2 and len(_entries(path)) == 2


def test_an_entry_that_does_not_fit_is_recomputed(_cache_dir):
    path, before = _cache_dir
    plain = _program(np.eye(5, dtype=np.float32) * 0.5)
    windowed = _program(np.eye(5, dtype=np.float32) * 0.5, window=True)
    _, want = _run(windowed)
    (entry_w,) = _entries(path)
    _run(plain)
    entry_p = next(f for f in _entries(path) if f != entry_w)
    good = (path / entry_w).read_text()
    for bad in ((path / entry_p).read_text(), "garbage { domain", good[: len(good) // 2]):
        (path / entry_w).write_text(bad)          # another graph's schedule, not isl, truncated
        compile_cache.clear()
        stale = schedule_cache.STATS["stale"]
        _, got = _run(windowed)
        assert schedule_cache.STATS["stale"] == stale + 1
        np.testing.assert_array_equal(got, want)
        assert _same_schedule((path / entry_w).read_text(), good)   # written again
    compile_cache.clear()
    hits = schedule_cache.STATS["hits"]
    _run(windowed)
    assert schedule_cache.STATS["hits"] == hits + 1


def test_options_are_part_of_the_key(_cache_dir):
    path, _ = _cache_dir
    exe, _ = _run(_program(np.eye(5, dtype=np.float32)))
    with make_context():
        module = ir.Module.parse(exe.stages["sdg-fuse"])
        graph_op = graphs_in(module.operation)[0]
        graph = read_graph(graph_op)
        a = schedule_cache.schedule(graph, ScheduleOptions(), graph_op)
        b = schedule_cache.schedule(graph, ScheduleOptions(separate=False), graph_op)
    assert len(_entries(path)) == 2
    assert _same_schedule(a.text(), exe.compiled.sched.text())   # the default options' entry is the compile's
    assert "separate[0]" in a.text() and "separate" not in b.text()


def test_without_a_directory_nothing_is_kept(_cache_dir):
    path, before = _cache_dir
    schedule_cache.set_directory(None)
    _run(_program(np.eye(5, dtype=np.float32)))
    assert _delta(before) == {"hits": 0, "misses": 0, "stale": 0}
    assert not path.exists() or not _entries(path)
