"""sdg-vectorize on random programs: the scheduled runtimes give the same
results with the pass as without it (within float32 rounding: a batched
reduction or matmul may add in another order), and the pass applies to a fair
share of the programs. The main fuzz test (test_fuzz_programs.py) runs the
default pipeline, which vectorizes, against the reference and the float64
evaluator; this one checks the pass against the pipeline without it.
"""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_budget import fuzz_n
from fuzz_check import build, make_inputs
from program_gen import programs
from test_fuzz_fusion import _same
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

PLAIN = tuple(p for p in DEFAULT_SDG_PASSES if p != "sdg-vectorize")


def test_vectorize_on_random_programs(request):
    seen = {"programs": 0, "vectorized": 0}

    @settings(max_examples=max(20, fuzz_n(request.config) // 4), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        vec = p.compile(backend="numpy")
        plain = p.compile(backend="numpy", passes=PLAIN)
        seen["programs"] += 1
        changed = vec.stages["sdg-vectorize"] != vec.stages["cse"]
        seen["vectorized"] += changed
        for bounds in ({d.upper(): desc.min_bound[d] + 1 for d in desc.dims},
                       {d.upper(): desc.min_bound[d] + 3 for d in desc.dims}):
            inputs = make_inputs(desc, bounds, 0)
            try:
                want = plain.run(bounds=bounds, inputs=inputs)
            except Exception as e:   # noqa: BLE001 - it fails without the pass: it must fail alike
                try:
                    vec.run(bounds=bounds, inputs=inputs)
                except Exception as f:  # noqa: BLE001
                    assert type(f) is type(e), (e, f)
                    continue
                raise AssertionError(f"the program fails without sdg-vectorize ({e}) and not with it") from None
            got = vec.run(bounds=bounds, inputs=inputs)
            jax_got = p.compile(backend="jax").run(bounds=bounds, inputs=inputs) if changed else got
            for name in want:
                _same(want[name], got[name], exact=False)
                _same(want[name], jax_got[name], exact=False)

    run()
    print("\nvectorize:", seen)
    # the generator reads some derived values only over all of a dim ("whole_range");
    # test_vectorize_programs.py generates longer such chains on purpose
    assert seen["vectorized"] >= max(1, seen["programs"] // 10), seen
