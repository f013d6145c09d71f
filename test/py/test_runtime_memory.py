"""Store lifetimes and `exe.memory_report()` (runtime/scheduled/memory.py,
lowering/lifetimes.py): a value's store is allocated just before the first
top-level statement that uses it and freed after the last one that reads it;
the report's peak is what the live stores held at once."""
import numpy as np
import pytest

import tidal as td
from tidal.frontend.errors import TidalError

N = 64


def two_phases():
    """Two vectorized phases: a = exp(2x) summed over t, then sin(x + s1) maxed
    over t; a's (T, N) store is dead before b's is allocated."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(N,), domain=(t,))
        a = (x * 2.0).exp()
        s1 = a[0:T].sum(0)
        b = (x + s1).sin()
        p.output("z", b[0:T].max(0))
    return p


def expected(x):
    return np.sin(x + np.exp(2 * x).sum(0)).max(0)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_dead_phase_is_freed_before_the_next_one_is_allocated(backend):
    exe = two_phases().compile(backend)
    T = 50
    x = np.random.default_rng(0).random((T, N), dtype=np.float32)
    given = x.copy()
    out = exe.run(bounds={"T": T}, inputs={"x": x})
    np.testing.assert_allclose(out["z"], expected(x), rtol=1e-4, atol=1e-4)   # float32 sums of ~200
    np.testing.assert_array_equal(x, given)          # the user's input is never freed nor written
    report = exe.memory_report()
    whole = T * N * 4
    big = {name: s for name, s in report.stores.items() if s.bytes == whole}
    # the input copy, a and x + s1 (the jax input store may be padded to a power of two)
    assert len(big) >= 2 and all(s.freed is not None for s in big.values()), str(report)
    total = sum(s.bytes for s in report.stores.values())
    assert report.peak_bytes < total - whole // 2, str(report)    # never all at once
    assert report.peak_bytes >= 2 * whole                          # x and a while a is summed
    assert exe.stats()["store_bytes"] == report.peak_bytes
    # what a schedule shows: each free after the last statement that reads the value
    schedule = exe.schedule()
    lines = schedule.splitlines()
    for name, life in report.stores.items():
        if life.freed is not None:
            at = lines.index(f"free {name}")
            assert all(name not in line.split("=")[0] for line in lines[at + 1:]), schedule


def test_report_text_timeline_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    exe = two_phases().compile("numpy")
    exe.run(bounds={"T": 8}, inputs={"x": np.ones((8, N), dtype=np.float32)})
    report = exe.memory_report()
    text = str(report)
    assert text.startswith("peak live bytes") and "sdg.input \"x\"" in text
    events = [e for _, e, _, _ in report.timeline]
    assert events[0] == "start" and events[-1] == "end" and any(e.startswith("free %") for e in events)
    seconds = [s for s, _, _, _ in report.timeline]
    assert seconds == sorted(seconds)
    assert report.peak_bytes == max(live for _, _, live, _ in report.timeline)
    assert report.freed_bytes > 0 and report.swapped == []
    path = report.plot(tmp_path / "mem.png")
    assert (tmp_path / "mem.png").stat().st_size > 1000 and path.endswith("mem.png")


def test_each_run_reports_its_own_stores():
    exe = two_phases().compile("numpy")
    exe.run(bounds={"T": 4}, inputs={"x": np.ones((4, N), dtype=np.float32)})
    small = exe.memory_report().peak_bytes
    exe.run(bounds={"T": 40}, inputs={"x": np.ones((40, N), dtype=np.float32)})
    assert exe.memory_report().peak_bytes >= 8 * small     # (T, N) stores: 10x, the rest the same


def test_memory_report_errors():
    p = two_phases()
    with pytest.raises(TidalError, match="reference backend"):
        p.compile("reference").memory_report()
    with pytest.raises(TidalError, match="run the executable first"):
        p.compile("numpy").memory_report()


def test_outputs_and_values_read_at_the_end_are_not_freed():
    """A value read by the last statement lives to the end; outputs always do."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        y = x.exp()
        p.output("y", y)
        p.output("total", y[0:T].sum(0))
    exe = p.compile("numpy")
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    out = exe.run(bounds={"T": 3}, inputs={"x": x})
    np.testing.assert_allclose(out["y"], np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(out["total"], np.exp(x).sum(0), rtol=1e-6)
    report = exe.memory_report()
    outputs = [s for s in report.stores.values() if "sdg.output" in s.label]
    assert len(outputs) == 2 and all(s.freed is None for s in outputs)


# -- swapping under a device-memory budget (runtime/scheduled/swapping.py) ----------------------
def rnn():
    rng = np.random.default_rng(0)
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(N,), domain=(t,))
        W1 = td.param("W1", rng.standard_normal((N, N)).astype(np.float32) / 8)
        W2 = td.param("W2", rng.standard_normal((N, N)).astype(np.float32) / 8)
        h = td.recurrent(shape=(N,), domain=(t,))
        h[0] = x[0]
        h[t + 1] = td.tanh(h @ W1 + x[t + 1] @ W2)
        p.output("h", h)
    return p


def test_a_budget_swaps_and_keeps_the_results():
    p = rnn()
    x = np.random.default_rng(2).random((20, N), dtype=np.float32)
    given = x.copy()
    free = p.compile()
    want = free.run({"T": 20}, {"x": x})["h"]
    peak = free.memory_report().peak_bytes
    budget = int(peak * 0.9)
    exe = p.compile(device_memory=budget)
    np.testing.assert_allclose(exe.run({"T": 20}, {"x": x})["h"], want, rtol=1e-6)
    report = exe.memory_report()
    assert report.budget == budget and report.peak_device_bytes <= budget < report.peak_bytes
    assert {d for _, _, d, _ in report.swapped} == {"in", "out"}
    assert all(report.timeline[i][1] == f"swap {d} {name}" for i, name, d, _ in report.swapped)
    assert max(device for *_, device in report.timeline) <= budget
    assert "swaps" in str(report) and "under a budget" in str(report)
    np.testing.assert_array_equal(x, given)   # an input kept on the host as given is never written
    y = np.random.default_rng(3).random((32, N), dtype=np.float32)   # capacity = extent: sent as given
    saved = y.copy()
    np.testing.assert_allclose(exe.run({"T": 32}, {"x": y})["h"], free.run({"T": 32}, {"x": y})["h"], rtol=1e-6)
    np.testing.assert_array_equal(y, saved)


def test_a_budget_below_what_one_op_needs_is_a_clear_error():
    from tidal.runtime.scheduled.swapping import BudgetError
    exe = rnn().compile(device_memory=4096)
    with pytest.raises(BudgetError, match=r"'%\d+ = sdg\.\w+.*' at .*test_runtime_memory.py:\d+:\d+ needs [\d,]+ "
                                          r"bytes .* budget of 4,096 bytes; compile with a larger device_memory"):
        exe.run({"T": 5}, {"x": np.ones((5, N), dtype=np.float32)})


@pytest.mark.parametrize("value, message", [(0, "must be positive"), (-5, "must be positive"),
                                            (1.5, "must lie in"), ("1GB", "number of bytes"),
                                            (True, "number of bytes")])
def test_device_memory_is_validated(value, message):
    with pytest.raises(TidalError, match=message):
        rnn().compile(device_memory=value)


def test_device_memory_needs_the_jax_backend_and_a_fraction_is_of_the_device():
    with pytest.raises(TidalError, match=r"needs a backend that keeps a device memory budget \(jax\); the numpy"):
        rnn().compile("numpy", device_memory=10**6)
    exe = rnn().compile(device_memory=0.5)          # half of this machine: nothing to swap
    exe.run({"T": 3}, {"x": np.ones((3, N), dtype=np.float32)})
    report = exe.memory_report()
    assert report.swapped and all(d == "in" for _, _, d, _ in report.swapped)   # stores start on the host
    assert report.budget > 10**6


def test_next_uses_go_round_the_innermost_loop_body():
    """Belady's distances: launches from an op to the next one touching a store,
    wrapping around the loop body; stores the body never touches are absent."""
    from tidal.lowering.loop_ast import Exec, For
    from tidal.runtime.scheduled.swapping import next_uses

    body = [Exec(1, []), Exec(2, []), Exec(3, [])]
    tree = [Exec(0, []), For("c0", ("int", 0), ("var", "T"), 1, body), Exec(4, [])]
    touches = {0: [0], 1: [1, 0], 2: [2, 1], 3: [3, 2], 4: [4, 3]}
    uses = next_uses(tree, touches)
    assert uses[3] == {1: 1, 0: 1, 2: 2, 3: 3}     # after 3 comes 1 (reads 0), then 2, then 3 again
    assert uses[1][2] == 1 and uses[1][3] == 2 and 4 not in uses[1]
    assert uses[0] == {4: 1, 3: 1, 0: 2}           # the top level: 0, 4 (cyclic too: harmless)


def test_device_array_inputs_are_read_as_given_and_left_intact():
    """A jax.Array input of the declared dtype and shape is the store's buffer as
    is, or padded to its store's capacity on the device (no copy to the host and
    back: on a GPU, two transfers); the program never writes or donates it, so
    it stays valid and equal, run after run."""
    import jax.numpy as jnp
    p = rnn()
    exe = p.compile()
    for T in (32, 20):    # 32: capacity = extent, read as given; 20: padded to its capacity
        x = np.random.default_rng(T).random((T, N), dtype=np.float32)
        jx = jnp.asarray(x)
        want = exe.run({"T": T}, {"x": x})["h"]
        for _ in range(2):
            np.testing.assert_allclose(exe.run({"T": T}, {"x": jx})["h"], want, rtol=1e-6)
            assert exe.stats()["host_to_device"] == 0 and exe.stats()["device_to_host"] == 0
        assert not jx.is_deleted()
        np.testing.assert_array_equal(np.asarray(jx), x)


def test_consecutive_allocs_and_frees_update_the_last_sample(monkeypatch):
    """Allocs and frees with no statement between them update the previous
    sample (memory.py's `quiet` events), and other events measure only the
    stores that can grow, instead of measuring every live store again: the
    report is the same as with every event measured in full (`_sample_all`),
    on a program with long runs of them (the REINFORCE example, 2 iterations)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    import reinforce
    from tidal.runtime.scheduled import memory

    exe = reinforce.build(B=4, hidden=8, returns="mc", n=3, gamma=0.9, lr=1e-2, model_seed=0).compile("jax")
    assert ", True)" in exe.compiled.source      # some events are marked as following another

    def report():
        exe.run(bounds={"I": 2, "T": 6})
        r = exe.memory_report()
        return ([(e, live, dev) for _, e, live, dev in r.timeline], r.per_store, r.peak_bytes,
                {n: (s.bytes, s.allocated, s.freed) for n, s in r.stores.items()})

    quiet = report()
    monkeypatch.setattr(memory.MemoryTracker, "_sample",
                        lambda self, event, quiet=False, added=(), removed=(): self._sample_all(event))
    assert report() == quiet
    assert len(quiet[0]) > 100


def test_large_host_inputs_at_capacity_are_sent_directly(monkeypatch):
    """A host input already at its store's capacity and of DIRECT_UPLOAD_BYTES or
    more goes to the device with jnp.asarray (one copy), the others through the
    jitted padding call; both give the numpy backend's values, and the input
    array the user passed is left as it was."""
    from tidal.runtime.scheduled import allocation

    sent = []
    real = allocation._padded_all
    monkeypatch.setattr(allocation, "_padded_all", lambda xs, shapes: sent.append(len(xs)) or real(xs, shapes))
    p = rnn()
    ref = p.compile(backend="numpy")
    exe = p.compile()
    for limit, T, padded_calls in ((1 << 40, 32, 1), (0, 32, 0), (0, 20, 1)):   # 20: padded to 32
        monkeypatch.setattr(allocation, "DIRECT_UPLOAD_BYTES", limit)
        x = np.random.default_rng(T).random((T, N), dtype=np.float32)
        before = x.copy()
        sent.clear()
        got = exe.run({"T": T}, {"x": x})["h"]
        np.testing.assert_allclose(got, ref.run({"T": T}, {"x": x})["h"], rtol=1e-5, atol=1e-6)
        assert len(sent) == padded_calls, (limit, T, sent)
        np.testing.assert_array_equal(x, before)
