"""sdg-lift-recurrence on random programs: the pass is not in the default
pipeline, so each random program is compiled with the default pipeline and
with the pass added after sdg-lift; the scheduled runtimes agree (within
float32 rounding: a linear scan adds in another order than the loop). The
generator's recurrences are by cases over one or two dims, forward and
backward, of several orders and dtypes, whose steps are random expressions:
few are first-order linear float steps read without a broadcast in between,
so few programs change, if any (none of CI's 20, none of 200 other draws). This
test checks that the pass breaks none; test_lift_recurrence_programs.py
generates linear recurrences on purpose and checks that they lift."""
from hypothesis import given
from hypothesis import strategies as st

from fuzz_budget import pass_settings
from fuzz_check import build, make_inputs
from program_gen import programs
from test_fuzz_fusion import agree
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

AT = DEFAULT_SDG_PASSES.index("sdg-lift") + 1
WITH = DEFAULT_SDG_PASSES[:AT] + ("sdg-lift-recurrence",) + DEFAULT_SDG_PASSES[AT:]


def test_lift_recurrence_on_random_programs(request):
    seen = {"programs": 0, "changed": 0}

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        off = p.compile(backend="numpy", passes=DEFAULT_SDG_PASSES)
        try:
            on = p.compile(backend="numpy", passes=WITH)
        except Exception as e:  # noqa: BLE001 - reported with the graph the pass made
            lifted = build(desc)[0].compile(backend="reference", passes=WITH[:AT + 1]).stages["sdg-lift-recurrence"]
            raise AssertionError(f"compiles without sdg-lift-recurrence, not with it: {e}\n{lifted}") from None
        seen["programs"] += 1
        changed = on.stages["sdg-lift-recurrence"] != on.stages["sdg-lift"]
        seen["changed"] += changed
        for bounds in ({d.upper(): desc.min_bound[d] + 1 for d in desc.dims},
                       {d.upper(): desc.min_bound[d] + 3 for d in desc.dims}):
            agree(p, off, on, bounds, make_inputs(desc, bounds, 0), "sdg-lift-recurrence", exact=False,
                  with_jax=changed)

    run()
    print("\nsdg-lift-recurrence:", seen)
    assert seen["programs"] >= 1, seen
