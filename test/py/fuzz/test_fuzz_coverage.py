"""The generator draws every feature of issue 8 often: a histogram over 200 programs.

Generation only (nothing is compiled), derandomized, so it is fast and stable.
`python -m pytest test/py/fuzz/test_fuzz_coverage.py -s` prints the histogram.
"""
import collections

from hypothesis import HealthCheck, given, settings

from program_gen import EXCLUDE, features, programs

N = 200
REQUIRED = [  # (feature, at least this many of the N programs): about a third of what is drawn
    ("unclamped_shift", 25), ("rec_forward", 15), ("rec_backward", 15), ("rec_order>1", 15),
    ("rec_cond_reset", 10), ("rec_pair", 5), ("rec_self_window", 5), ("rec_two_dims", 8),
    ("window", 10), ("prefix", 8), ("suffix", 4), ("nstep", 8), ("full", 4),
    ("clamped_shift", 10), ("const_point", 20), ("const_pair", 10), ("coarse_read", 1),
    ("cond_def", 20), ("cond_output", 15), ("elementwise", 50), ("reduce", 25), ("matmul", 8),
    ("cast", 40), ("two_dims", 20), ("udf", 10), ("random", 10), ("symbol", 4), ("grad", 15),
    ("dtype:float32", 50), ("dtype:float64", 30), ("dtype:int32", 25), ("dtype:int64", 30),
    ("dtype:bool", 30), ("treduce:dsum", 5), ("treduce:dsteps", 3), ("treduce:cumsum_take", 2),
    ("whole_range", 20), ("lift_window", 20), ("window_whole", 15), ("rec_input_proj", 7),
]


def histogram(n: int = N) -> collections.Counter:
    counts = collections.Counter()

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def draw(desc):
        counts["(programs)"] += 1
        counts.update(features(desc))

    draw()
    return counts


def test_every_feature_is_drawn_often():
    counts = histogram()
    print("\nfeatures in", counts["(programs)"], "programs:",
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    assert counts["(programs)"] == N
    missing = [(f, counts[f], want) for f, want in REQUIRED if counts[f] < want and f not in EXCLUDE]
    assert not missing, f"features drawn too rarely (feature, drawn, wanted): {missing}"
