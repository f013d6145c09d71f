"""sdg-tile on random programs, with tiles of 2 rows and no size threshold: the
scheduled runtimes give the same results with the pass as without it (within
float32 rounding: the tiles' partial sums add in another order), on both
backends where it changed the IR. The generator's reductions over a whole dim
(`x[0:T]`, vectorized) and over static axes are what it tiles; the derived
tile count N = (T + 1) // 2 is computed at each run."""
from test_fuzz_vectorize import pass_on_random_programs


def test_tile_on_random_programs(request):
    seen = pass_on_random_programs(request, "sdg-tile", "sdg-vectorize", "sdg-tile{tile=2 min-bytes=0}")
    assert seen["changed"] >= max(1, seen["programs"] // 10), seen


def test_tile_causal_prefixes_on_random_programs(request):
    """Programs with a reduction over a prefix x[0:t + 1], their loops kept per
    step (sdg-vectorize batching nothing): sdg-tile tiles the prefixes up to
    each step (`0:t floordiv 2 + 1` tiles at step t) as well as whole dims."""
    from test_fuzz_accumulate import LIMITED

    with_pass = tuple("sdg-tile{tile=2 min-bytes=0}" if p == "sdg-tile" else p for p in LIMITED)
    without = tuple(p for p in LIMITED if p != "sdg-tile")
    seen = pass_on_random_programs(request, "sdg-tile", "sdg-accumulate", pipelines=(with_pass, without),
                                   feature="prefix")
    assert seen["changed"] >= max(1, seen["programs"] // 10), seen
