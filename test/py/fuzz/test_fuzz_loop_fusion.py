"""The schedule's loop-fusion post-pass (lowering/loop_fusion.py) on random
programs: the scheduled runtimes give the same results, bit for bit on the
numpy backend, with the post-pass as without it, and the jax backend agrees
where it changed the schedule. The programs are compiled with sdg-vectorize
batching nothing (every block counts as too large), which leaves their loops
per step, and scheduled by isl without proximity (and not in whole-component
mode), which gives every operator a loop of its own: all the fusing is the
post-pass's. (With the default options isl fuses most loops itself; the
main fuzz test runs the default, post-pass included, against the reference.)"""
from hypothesis import given
from hypothesis import strategies as st

from fuzz_budget import pass_settings
from fuzz_check import build, make_inputs
from program_gen import programs
from test_fuzz_accumulate import LIMITED
from test_fuzz_fusion import agree
from tidal.frontend import compile_cache
from tidal.lowering.schedule import ScheduleOptions
from tidal.runtime.scheduled import program as scheduled


class _Apart(ScheduleOptions):
    """isl alone leaves every operator in a loop of its own."""
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "whole_component": False, "proximity": False})


class _ApartUnfused(_Apart):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "fuse_shifted": False})


def test_loop_fusion_on_random_programs(request, monkeypatch):
    seen = {"programs": 0, "changed": 0}

    def compile_with(p, options):
        compile_cache.clear()    # an equal program compiled before would come back with other options
        with monkeypatch.context() as m:
            m.setattr(scheduled, "options_for", lambda graph: options())   # the scheduled program's default
            exe = p.compile(backend="numpy", passes=LIMITED)
        compile_cache.clear()
        return exe

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        on, off = compile_with(p, _Apart), compile_with(p, _ApartUnfused)
        seen["programs"] += 1
        changed = on.schedule() != off.schedule()
        seen["changed"] += changed
        for bounds in ({d.upper(): desc.min_bound[d] + 1 for d in desc.dims},
                       {d.upper(): desc.min_bound[d] + 3 for d in desc.dims}):
            agree(p, off, on, bounds, make_inputs(desc, bounds, 0), "loop fusion", exact=True, with_jax=changed,
                  desc=desc)

    run()
    print("\nloop fusion:", seen)
    assert seen["changed"] >= max(1, seen["programs"] // 4), seen
