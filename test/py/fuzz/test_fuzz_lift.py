"""sdg-lift on random programs: the scheduled runtimes give the same results
with the pass as without it (within float32 rounding: a cumulative sum adds in
another order than a window's sum), and the pass applies to a fair share of the
programs (the generator reduces windows `x[0:t + 1]` and `x[t:T]`, some of them
through elementwise chains). The main fuzz test (test_fuzz_programs.py) runs
the default pipeline, which lifts, against the reference and the float64
evaluator; this one checks the pass against the pipeline without it.
"""
from hypothesis import given
from hypothesis import strategies as st

from fuzz_budget import pass_settings
from fuzz_check import build, make_inputs
from program_gen import programs
from test_fuzz_fusion import agree
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

PLAIN = tuple(p for p in DEFAULT_SDG_PASSES if p != "sdg-lift")


def test_lift_on_random_programs(request):
    seen = {"programs": 0, "lifted": 0}

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        lifted = p.compile(backend="numpy")
        plain = p.compile(backend="numpy", passes=PLAIN)
        seen["programs"] += 1
        changed = lifted.stages["sdg-lift"] != lifted.stages["cse"]
        seen["lifted"] += changed
        for bounds in ({d.upper(): desc.min_bound[d] + 1 for d in desc.dims},
                       {d.upper(): desc.min_bound[d] + 3 for d in desc.dims}):
            agree(p, plain, lifted, bounds, make_inputs(desc, bounds, 0), "sdg-lift", exact=False,
                  with_jax=changed)

    run()
    print("\nlift:", seen)
    assert seen["lifted"] >= max(1, seen["programs"] // 10), seen
