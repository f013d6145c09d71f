"""sdg-vectorize on random programs: the scheduled runtimes give the same
results with the pass as without it (within float32 rounding: a batched
reduction or matmul may add in another order), and the pass applies to a fair
share of the programs. The main fuzz test (test_fuzz_programs.py) runs the
default pipeline, which vectorizes, against the reference and the float64
evaluator; this one checks the pass against the pipeline without it.
"""
from hypothesis import given
from hypothesis import strategies as st

from fuzz_budget import pass_settings
from fuzz_check import build, make_inputs
from program_gen import features, programs
from test_fuzz_fusion import agree
import tidal as td
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES


def pass_on_random_programs(request, name: str, previous: str, element: str | None = None,
                            pipelines: tuple | None = None, compare_off: bool = False,
                            feature: str | None = None) -> dict:
    """Random programs compiled with the default pipeline and without pass `name`
    agree at two sets of bounds (jax too where the pass changed the IR, i.e. its
    stage differs from stage `previous`); returns how many it changed. `element`:
    the pass with options, in place of `name` in the default pipeline.
    `pipelines`: (with the pass, without it) for a pass not in the default.
    `compare_off`: a program counts as changed when stage `name` differs between
    the two pipelines (two option settings of one pass), not from `previous`.
    `feature`: only programs with this generator feature (program_gen.features)."""
    without = tuple(p for p in DEFAULT_SDG_PASSES if p != name)
    with_pass = tuple(element if p == name and element else p for p in DEFAULT_SDG_PASSES)
    if pipelines is not None:
        with_pass, without = pipelines
    seen = {"programs": 0, "changed": 0, "bounds not compared": 0}   # uncomparable: see agree

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        strategy = programs() if feature is None else programs().filter(lambda d: feature in features(d))
        desc = data.draw(strategy, label="program")
        p, _ = build(desc)
        on = p.compile(backend="numpy", passes=with_pass)
        off = p.compile(backend="numpy", passes=without)
        seen["programs"] += 1
        changed = on.stages[name] != (off if compare_off else on).stages[name if compare_off else previous]
        seen["changed"] += changed
        for bounds in ({d.upper(): desc.min_bound[d] + 1 for d in desc.dims},
                       {d.upper(): desc.min_bound[d] + 3 for d in desc.dims}):
            skipped = agree(p, off, on, bounds, make_inputs(desc, bounds, 0), name, exact=False,
                            with_jax=changed, desc=desc)
            seen["bounds not compared"] += skipped is not None

    run()
    print(f"\n{name}:", seen)
    return seen


def test_vectorize_on_random_programs(request):
    seen = pass_on_random_programs(request, "sdg-vectorize", "sdg-lift")
    # the generator reads some derived values only over all of a dim ("whole_range");
    # test_vectorize_programs.py generates longer such chains on purpose
    assert seen["changed"] >= max(1, seen["programs"] // 10), seen


def test_vectorize_windows_on_random_programs(request):
    # windows t:min(t + n, T) and max(t - n + 1, 0):t + 1 ("nstep", "window") batched
    # at their capacity, against sdg-vectorize without them
    off = td.default_passes(options={"sdg-vectorize": "windows=false"})
    seen = pass_on_random_programs(request, "sdg-vectorize", "sdg-lift", pipelines=(DEFAULT_SDG_PASSES, off),
                                   compare_off=True)
    assert seen["changed"] >= 1, seen


def test_vectorize_early_on_random_programs(request):
    # matmuls of inputs read row by row by a recurrence, batched before its loop
    # ("early"), against sdg-vectorize without them
    off = td.default_passes(options={"sdg-vectorize": "early=false"})
    # programs with an input projection in a recurrence's step case ("rec_input_proj",
    # about one in ten drawn); about half of them are batched early (the others: the
    # recurrence is backward, batched before already, or dead)
    seen = pass_on_random_programs(request, "sdg-vectorize", "sdg-lift", pipelines=(DEFAULT_SDG_PASSES, off),
                                   compare_off=True, feature="rec_input_proj")
    assert seen["changed"] >= 1, seen


def test_reassociate_on_random_programs(request):
    # the generator's matmuls with parameters rarely form a chain of two read at the
    # point: this checks that the pass changes no result (test_reassociate_programs.py
    # generates chains on purpose and checks when it rewrites)
    seen = pass_on_random_programs(request, "sdg-reassociate", "cse")
    assert seen["programs"] >= 1, seen
