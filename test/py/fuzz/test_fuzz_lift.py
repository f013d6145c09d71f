"""sdg-lift on random programs: the scheduled runtimes give the same results
with the pass as without it (within float32 rounding: a cumulative sum adds in
another order than a window's sum), and the pass applies to a fair share of the
programs (the generator reduces windows `x[0:t + 1]` and `x[t:T]`, some of them
through elementwise chains, and sums over sliding windows `x[max(0, t - 2):t + 1]`,
lifted here whatever their size: `min-window=0`). The main fuzz test (test_fuzz_programs.py) runs
the default pipeline, which lifts, against the reference and the float64
evaluator; this one checks the pass against the pipeline without it.
"""
from test_fuzz_vectorize import pass_on_random_programs


def test_lift_on_random_programs(request):
    seen = pass_on_random_programs(request, "sdg-lift", "sdg-reassociate", "sdg-lift{min-window=0}")
    assert seen["changed"] >= max(1, seen["programs"] // 10), seen
