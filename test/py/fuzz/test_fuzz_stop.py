"""td.stop_when on random programs: every backend against the float64 evaluator.

Each program (over t alone) ends with `td.stop_when(n.sum() > thr)` (`n.any()`
for a bool) on a value the frontend accepts as a condition, or on an input; it
runs at the bounds of the main fuzz test, and `fuzz_check.check` compares each
output with the evaluation of the program at T = t_stop + 1
(`program_eval.stopped`), checks `exe.stats()["steps"]`, the UDF call counts
(once per point before the stop) and gradients, and that a stop below the
program's least bound fails on every backend. The main fuzz test draws the
same statement in a share of its programs.
"""
import collections

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from fuzz_budget import fuzz_n
from fuzz_check import Rejected, check
from program_gen import programs
from test_fuzz_programs import bounds_for


def test_stop_when_on_random_programs(request):
    stats = collections.Counter()

    @settings(max_examples=max(4, fuzz_n(request.config) // 4), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(stop=1.0), label="program")
        assume(any(s[0] == "stop" for s in desc.stmts))
        bounds = data.draw(bounds_for(desc), label="bounds")
        seed = data.draw(st.integers(0, 2 ** 16), label="input seed")
        note(desc.source())
        stop = next(s for s in desc.stmts if s[0] == "stop")
        stats["on an input" if desc.nodes[stop[1]].op == "input" else "on a computed value"] += 1
        try:
            check(desc, bounds, seed)
        except Rejected:
            stats["(rejected)"] += 1
            assume(False)
        stats["(programs)"] += 1

    run()
    print("\nstop_when fuzz:", dict(sorted(stats.items())))
    assert stats["on a computed value"] >= 1, stats
