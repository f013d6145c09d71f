"""sdg-simplify on random programs: the scheduled runtimes give the same results
with the pass as without it (and jax too where it changed the IR). The main
fuzz test (test_fuzz_programs.py) runs the default pipeline, which simplifies,
against the reference and the float64 evaluator; this one checks the pass
against the pipeline without it. test_simplify_programs.py builds programs
that each rewrite applies to.
"""
from test_fuzz_vectorize import pass_on_random_programs


def test_simplify_on_random_programs(request):
    seen = pass_on_random_programs(request, "sdg-simplify", "sdg-restrict-merges")
    assert seen["changed"] >= max(1, seen["programs"] // 4), seen   # mostly folded splats and hoists
