"""Store lifetimes on random programs: the lowered program's `_alloc`/`_free`
calls (lowering/lifetimes.py) never free a value before its last reader nor
allocate it after its first writer, checked point by point against the
polyhedral model (checker.check_schedule) at two sets of bounds; and the
memory report's peak is the most the live stores held, never more than all
stores together; the memory plan (lowering/memory_plan.py) puts in one
storage only values that live one after the other, and its size holds each. The main fuzz test runs every backend with the frees on
(a freed store read again would fail there with the wrong values or an error).
"""
from hypothesis import given
from hypothesis import strategies as st

from fuzz_budget import pass_settings
from fuzz_check import build, make_inputs
from program_gen import programs
from tidal.dialects.attrs import with_derived
from tidal.lowering.lifetimes import lifetimes
from tidal.runtime.scheduled.checker import check_schedule
from tidal.symbolic import evaluate


def test_lifetimes_on_random_programs(request):
    seen = {"programs": 0, "with_frees": 0, "shared": 0}

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        exe = p.compile(backend="numpy")
        seen["programs"] += 1
        frees = "free %" in exe.schedule()
        seen["with_frees"] += frees
        plan, c = exe.memory_plan(), exe.compiled
        lives = lifetimes(c.graph, c.sched.loop_tree(), c.statements)
        for s in plan.storages:     # values of one storage: one after the other
            spans = sorted((lives[k].first, lives[k].last) for k, _ in s.values)
            assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), f"{plan}\n{desc.repro()}"
        seen["shared"] += any(len(s.values) > 1 for s in plan.storages)
        for bounds in ({d.upper(): desc.min_bound[d] + 1 for d in desc.dims},
                       {d.upper(): desc.min_bound[d] + 3 for d in desc.dims}):
            check_schedule(exe.compiled, bounds)
            full = with_derived(bounds, c.graph.derived)   # sizes may use sdg-tile's tile count
            for s in plan.storages:     # holds each of its values
                assert all(evaluate(plan.sizes[v], full) <= evaluate(s.size, full) for v in s.values)
            exe.run(bounds=bounds, inputs=make_inputs(desc, bounds, 0))
            report = exe.memory_report()
            assert report.peak_bytes <= sum(s.bytes for s in report.stores.values())
            assert report.peak_bytes == max(live for _, _, live, _ in report.timeline)
            assert frees == any(s.freed is not None for s in report.stores.values())

    run()
    print("\nlifetimes:", seen)
    assert seen["with_frees"] >= max(1, seen["programs"] // 10), seen


def test_swapping_on_random_programs(request):
    """Under a device-memory budget of 70% of a run's unconstrained peak, random
    programs give the jax backend's results (within float32 rounding: loops run
    in Python instead of XLA), keep the stores on the device under the budget,
    or fail with the budget error when one op alone needs more."""
    from test_fuzz_fusion import _same
    from tidal.runtime.scheduled.swapping import BudgetError

    seen = {"programs": 0, "swapped": 0, "too_small": 0}

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        bounds = {d.upper(): desc.min_bound[d] + 2 for d in desc.dims}
        inputs = make_inputs(desc, bounds, 0)
        free = p.compile(backend="jax")
        try:
            want = free.run(bounds=bounds, inputs=inputs)
        except Exception:   # noqa: BLE001 - a run error: test_fuzz_programs checks those
            return
        peak = free.memory_report().peak_bytes
        if peak < 16:
            return
        seen["programs"] += 1
        budget = int(peak * 0.7)
        exe = p.compile(backend="jax", device_memory=budget)
        try:
            got = exe.run(bounds=bounds, inputs=inputs)
        except BudgetError as e:
            assert "needs" in str(e) and f"{budget:,} bytes" in str(e)
            seen["too_small"] += 1
            return
        report = exe.memory_report()
        assert report.peak_device_bytes <= budget, f"{report}\n{desc.repro()}"
        seen["swapped"] += any(d == "out" for _, _, d, _ in report.swapped)
        for name in want:
            _same(want[name], got[name], exact=False)

    run()
    print("\nswapping:", seen)
    assert seen["swapped"] >= max(1, seen["programs"] // 10), seen
