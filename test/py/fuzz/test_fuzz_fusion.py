"""sdg-fuse on random programs: the fused graph verifies, inlining gives the
unfused graph back, and the scheduled runtimes give the same results fused
and unfused (NumPy bit for bit: the same kernels run in the same order; JAX
within float32 rounding, since XLA may contract a fused island's arithmetic).
The main fuzz test (test_fuzz_programs.py) runs the default pipeline, which
fuses, against the reference and the float64 evaluator; this one checks
that fusion happened on enough of the programs for that to mean something.
"""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from mlir import ir

from fuzz_budget import pass_settings
from fuzz_check import build, make_inputs, uncomparable
from program_gen import programs
from tidal.dialects import ops_named
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES
from tidal.passes import get_pass
from tidal.passes.sdg_inline_islands import inline_islands

UNFUSED = tuple(p for p in DEFAULT_SDG_PASSES if p != "sdg-fuse")   # the default pipeline, unfused




def test_fusion_on_random_programs(request):
    seen = {"programs": 0, "fused": 0, "islands": 0}

    @pass_settings(request.config)
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        p, _ = build(desc)
        fused = p.compile(backend="numpy")
        plain = p.compile(backend="numpy", passes=UNFUSED)
        islands = ops_named(fused.module.operation, "sdg.island")
        seen["programs"] += 1
        seen["fused"] += bool(islands)
        seen["islands"] += len(islands)
        # Inlining the islands gives a graph with the unfused graph's ops.
        with fused.module.context:
            copy = fused.module.operation.clone()
            inline_islands(copy)
            copy.verify()
            names = sorted(op.operation.name for g in ops_named(copy, "sdg.graph")
                           for op in g.regions[0].blocks[0].operations)
        with plain.module.context:
            plain_names = sorted(op.operation.name for g in ops_named(plain.module.operation, "sdg.graph")
                                 for op in g.regions[0].blocks[0].operations)
        assert names == plain_names
        bounds = {d.upper(): desc.min_bound[d] + 1 for d in desc.dims}
        agree(p, plain, fused, bounds, make_inputs(desc, bounds, 0), "sdg-fuse", exact=True,
              with_jax=bool(islands), desc=desc)

    run()
    # The generator's programs are small; still, fusion must happen on a fair share.
    print("\nfusion:", seen)
    assert seen["fused"] >= seen["programs"] // 5, seen


def agree(p, plain, changed, bounds, inputs, what: str, exact: bool, with_jax: bool, desc=None) -> str | None:
    """`changed` (compiled with the pass `what`) gives `plain`'s results (numpy
    backends; `exact`: bit for bit), and so does the jax backend (`with_jax`);
    where `plain` raises, `changed` raises the same error. Results compared within
    rounding are not compared where program `desc` is uncomparable at these bounds
    (fuzz_check.uncomparable); returns that reason, or None."""
    try:
        want = plain.run(bounds=bounds, inputs=inputs)
    except Exception as e:   # noqa: BLE001 - it fails without the pass: it must fail alike
        try:
            changed.run(bounds=bounds, inputs=inputs)
        except Exception as f:  # noqa: BLE001
            assert type(f) is type(e) and str(f) == str(e), (e, f)
            return
        raise AssertionError(f"the program fails without {what} ({e}) and not with it") from None
    got = changed.run(bounds=bounds, inputs=inputs)
    within_rounding = not exact or with_jax     # a comparison that rounding can fail
    skip = uncomparable(desc, bounds, inputs) if desc is not None and within_rounding else None
    if skip and not exact:
        return skip
    jax_got = p.compile(backend="jax").run(bounds=bounds, inputs=inputs) if with_jax and not skip else got
    for name in want:
        _same(want[name], got[name], exact=exact)
        _same(want[name], jax_got[name], exact=False)
    return skip


def _same(a, b, exact: bool) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k], exact)
        return
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y, exact)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    if exact or a.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=1e-4 * max(1.0, float(np.nanmax(np.abs(a), initial=0))))


def test_the_pass_counts_what_it_fused():
    """The pass object reports islands and fused ops (callers and stages read them)."""
    src = """
    sdg.graph @g dims [t < T] {
      %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
      %a = sdg.unary exp %x[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
      %b = sdg.unary neg %a[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[4], f32>
      %c = sdg.reduce sum [0] %b[t] domain [t] : (!tidal.tensor<[4], f32>) -> !tidal.tensor<[], f32>
      sdg.output "c" %c[t] domain [t] : !tidal.tensor<[], f32>
    }"""
    from tidal.dialects import make_context
    with make_context():
        module = ir.Module.parse(src)
        fuse = get_pass("sdg-fuse")()
        fuse.run(module.operation)
        module.operation.verify()
        assert (fuse.num_islands, fuse.num_fused) == (1, 3)
        again = get_pass("sdg-fuse")()
        again.run(module.operation)
        assert (again.num_islands, again.num_fused) == (0, 0)
