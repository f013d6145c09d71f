"""sdg-accumulate on random programs, with no size threshold, after an
sdg-vectorize that batches nothing (`max-block-bytes=1`: every block counts as
too large, the memory-bound schedule): the generator's reductions over a whole
dim (`x[0:T]`, computed per step) become running reductions along the dim,
and the scheduled runtimes give the same results with the pass as without it
(within float32 rounding: the running sum adds in another order), on both
backends where it changed the IR. The pipeline with vectorize limited but no
accumulate is itself checked against the default's results by `agree`."""
import tidal as td
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

from test_fuzz_vectorize import pass_on_random_programs

LIMITED = td.default_passes(options={"sdg-vectorize": "max-block-bytes=1"})


def test_accumulate_on_random_programs(request):
    with_pass = tuple("sdg-accumulate{min-bytes=0}" if p == "sdg-accumulate" else p for p in LIMITED)
    without = tuple(p for p in LIMITED if p != "sdg-accumulate")
    seen = pass_on_random_programs(request, "sdg-accumulate", "sdg-vectorize", pipelines=(with_pass, without))
    assert seen["changed"] >= max(1, seen["programs"] // 10), seen


def test_vectorize_block_limit_on_random_programs(request):
    """Vectorizing nothing (every block too large) against the default's batching."""
    seen = pass_on_random_programs(request, "sdg-vectorize", "sdg-vectorize", compare_off=True,
                                   pipelines=(LIMITED, DEFAULT_SDG_PASSES))
    assert seen["changed"] >= max(1, seen["programs"] // 10), seen
