"""The schedule's loop-fusion post-pass (lowering/loop_fusion.py) on random
programs: the scheduled runtimes give the same results, bit for bit on the
numpy backend, with the post-pass as without it, and the jax backend agrees
where it changed the schedule. The programs are compiled with sdg-vectorize
batching nothing (every block counts as too large), which leaves their loops
per step, where the post-pass has most to fuse."""
from hypothesis import given
from hypothesis import strategies as st

from fuzz_budget import pass_settings
from fuzz_check import build, make_inputs
from program_gen import programs
from test_fuzz_accumulate import LIMITED
from test_fuzz_fusion import agree
from tidal.frontend import compile_cache
from tidal.lowering.schedule import ScheduleOptions
from tidal.runtime.scheduled import executable as scheduled


class _WithoutFusion(ScheduleOptions):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{**kwargs, "fuse_shifted": False})


def test_loop_fusion_on_random_programs(request, monkeypatch):
    seen = {"programs": 0, "changed": 0}

    def compile_without_fusion(p):
        compile_cache.clear()    # an equal program compiled before would come back fused
        with monkeypatch.context() as m:
            m.setattr(scheduled, "ScheduleOptions", _WithoutFusion)
            exe = p.compile(backend="numpy", passes=LIMITED)
        compile_cache.clear()
        return exe

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        on = p.compile(backend="numpy", passes=LIMITED)
        off = compile_without_fusion(p)
        seen["programs"] += 1
        changed = on.schedule() != off.schedule()
        seen["changed"] += changed
        for bounds in ({d.upper(): desc.min_bound[d] + 1 for d in desc.dims},
                       {d.upper(): desc.min_bound[d] + 3 for d in desc.dims}):
            agree(p, off, on, bounds, make_inputs(desc, bounds, 0), "loop fusion", exact=True, with_jax=changed)

    run()
    print("\nloop fusion:", seen)
    assert seen["changed"] >= 1, seen
