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
from test_fuzz_vectorize import pass_on_random_programs
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

AT = DEFAULT_SDG_PASSES.index("sdg-lift") + 1
WITH = DEFAULT_SDG_PASSES[:AT] + ("sdg-lift-recurrence",) + DEFAULT_SDG_PASSES[AT:]


def test_lift_recurrence_on_random_programs(request):
    seen = pass_on_random_programs(request, "sdg-lift-recurrence", "sdg-lift",
                                   pipelines=(WITH, DEFAULT_SDG_PASSES))
    assert seen["programs"] >= 1, seen
