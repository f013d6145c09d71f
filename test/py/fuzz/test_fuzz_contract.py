"""sdg-contract on random programs: the scheduled runtimes give the same results
with the pass as without it (within float32 rounding: the contracted sum adds
in another order), on both backends where it changed the IR. The generator's
programs rarely sum per-step products of a transpose over a vectorized dim, so
this mostly checks that the pass leaves them alone or rewrites them soundly;
test_contract_programs.py builds the gradients it rewrites on purpose."""
from test_fuzz_vectorize import pass_on_random_programs


def test_contract_on_random_programs(request):
    seen = pass_on_random_programs(request, "sdg-contract", "sdg-tile")
    assert seen["programs"] >= 1, seen
