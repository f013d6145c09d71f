"""sdg-restrict-merges on random programs: the scheduled runtimes give the same
results with the pass as without it (and jax too where it changed the IR).
The generator's recurrences are read at their first or last point and at
shifted points (`x[0]`, `x[t - 1]`); test_restrict_merges_programs.py builds
the two-dim recurrence read at a fixed inner point that the pass is for.
"""
from test_fuzz_vectorize import pass_on_random_programs


def test_restrict_merges_on_random_programs(request):
    seen = pass_on_random_programs(request, "sdg-restrict-merges", "sdg-dce")
    assert seen["programs"] > 0, seen
