"""sdg-tile end to end: graphs it tiles (a dynamic episode axis, a static
batch that tiles exactly, a max over rows that do not fill the last tile)
give the untiled graph's results on the reference and both scheduled
backends at bounds below, at and around the tile size; a frontend learner's
loss tiled by the default pipeline (with the threshold lowered) agrees with
NumPy and holds less in its stores; runs never give the derived tile count."""
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from mlir import ir

import tidal as td
from tidal.dialects import make_context
from tidal.passes import run_pipeline
from tidal.runtime.reference import EvaluationError, evaluate
from tidal.runtime.scheduled import compile_sdg

EPISODE = """
sdg.graph @g dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[3], f32>
  %w = sdg.param "w" dense<[1.0, -2.0, 0.5]> : tensor<3xf32> domain [] : !tidal.tensor<[3], f32>
  %m = sdg.binary mul %x[0:T], %w[] domain [] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[T, 3], f32>
  %e = sdg.unary tanh %m[] domain [] : (!tidal.tensor<[T, 3], f32>) -> !tidal.tensor<[T, 3], f32>
  %s = sdg.reduce sum [0] %e[] domain [] : (!tidal.tensor<[T, 3], f32>) -> !tidal.tensor<[3], f32>
  %k = sdg.reduce min [0] keepdim %x[0:T] domain [] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[1, 3], f32>
  sdg.output "y" %s[] domain [] : !tidal.tensor<[3], f32>
  sdg.output "k" %k[] domain [] : !tidal.tensor<[1, 3], f32>
}
"""

PREFIX = """
sdg.graph @g dims [t < T] {
  %x = sdg.input "x" domain [t] : !tidal.tensor<[3], f32>
  %w = sdg.param "w" dense<[1.0, -2.0, 0.5]> : tensor<3xf32> domain [] : !tidal.tensor<[3], f32>
  %m = sdg.binary mul %x[0:t + 1], %w[] domain [t] : (!tidal.tensor<[3], f32>, !tidal.tensor<[3], f32>) -> !tidal.tensor<[t + 1, 3], f32>
  %e = sdg.unary tanh %m[t] domain [t] : (!tidal.tensor<[t + 1, 3], f32>) -> !tidal.tensor<[t + 1, 3], f32>
  %s = sdg.reduce sum [0] %e[t] domain [t] : (!tidal.tensor<[t + 1, 3], f32>) -> !tidal.tensor<[3], f32>
  %k = sdg.reduce max [0] %x[0:t + 1] domain [t] : (!tidal.tensor<[3], f32>) -> !tidal.tensor<[3], f32>
  sdg.output "y" %s[t] domain [t] : !tidal.tensor<[3], f32>
  sdg.output "k" %k[t] domain [t] : !tidal.tensor<[3], f32>
}
"""

BATCH = """
sdg.graph @g dims [i < I] {
  %x = sdg.input "x" domain [i] : !tidal.tensor<[12, 2, 3], f32>
  %w = sdg.param "w" dense<[[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]]> : tensor<3x2xf32> domain [] : !tidal.tensor<[3, 2], f32>
  %m = sdg.matmul %x[i], %w[] domain [i] : (!tidal.tensor<[12, 2, 3], f32>, !tidal.tensor<[3, 2], f32>) -> !tidal.tensor<[12, 2, 2], f32>
  %h = sdg.unary exp %m[i] domain [i] : (!tidal.tensor<[12, 2, 2], f32>) -> !tidal.tensor<[12, 2, 2], f32>
  %r = sdg.reduce max [1, 2] %h[i] domain [i] : (!tidal.tensor<[12, 2, 2], f32>) -> !tidal.tensor<[12], f32>
  %s = sdg.reduce sum [0] %r[i] domain [i] : (!tidal.tensor<[12], f32>) -> !tidal.tensor<[], f32>
  %p = sdg.reduce max [0] %h[i] domain [i] : (!tidal.tensor<[12, 2, 2], f32>) -> !tidal.tensor<[2, 2], f32>
  sdg.output "y" %s[i] domain [i] : !tidal.tensor<[], f32>
  sdg.output "p" %p[i] domain [i] : !tidal.tensor<[2, 2], f32>
}
"""


def _tiled(text: str, tile: int) -> str:
    with make_context():
        module = ir.Module.parse(text)
        run_pipeline(module, f"builtin.module(sdg-tile{{tile={tile} min-bytes=0}})")
        return str(module)


def _inputs(text: str, bounds: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    if "@g dims [t < T]" in text:
        return {"x": rng.standard_normal((bounds["T"], 3)).astype(np.float32)}
    return {"x": rng.standard_normal((bounds["I"], 12, 2, 3)).astype(np.float32)}


@pytest.mark.parametrize("text,tile,bound,values,derived", [
    (EPISODE, 4, "T", (1, 3, 4, 5, 9, 16), "n < N = (T + 3) floordiv 4"),
    (PREFIX, 4, "T", (1, 3, 4, 5, 9, 16), "n < N = (T + 3) floordiv 4"),   # a causal prefix x[0:t + 1]
    (BATCH, 4, "I", (1, 3), "n < N = 3"),      # 12 rows: three full tiles, no mask
    (BATCH, 5, "I", (2,), "n < N = 3"),        # 5 + 5 + 2 rows: the last padded and masked
])
def test_tiled_graphs_agree(text, tile, bound, values, derived):
    after = _tiled(text, tile)
    assert derived in after and "sdg.reduce sum [0] %" in after
    exes = {b: compile_sdg(after, backend=b) for b in ("numpy", "jax")}
    for seed, value in enumerate(values):
        bounds = {bound: value}
        inputs = _inputs(text, bounds, seed)
        want = evaluate(text, bounds, inputs)
        got = {"reference": evaluate(after, bounds, inputs)}
        got.update({b: exe.run(bounds, inputs) for b, exe in exes.items()})
        for backend, out in got.items():
            for name, value_ in want.items():
                np.testing.assert_allclose(out[name], value_, rtol=2e-5, atol=1e-6,
                                           err_msg=f"{backend} {name} {bounds}")


def test_reductions_over_one_axis_share_the_tiles():
    after = _tiled(EPISODE, 4)
    # the sum and the min of the episode: one tile dim, one loop over the tiles
    assert "dims [t < T, n < N = (T + 3) floordiv 4] {" in after
    assert "0x7FF0000000000000" in after   # min's mask: +inf
    # each reads the tile of x: its rows min(4 n + j, T - 1)
    assert after.count("sdg.index_select 0 %0[0:T]") == 2, after


def test_runs_do_not_give_derived_bounds():
    after = _tiled(EPISODE, 4)
    x = np.ones((5, 3), np.float32)
    with pytest.raises(EvaluationError, match="bound 'N' is derived .* leave it out"):
        evaluate(after, {"T": 5, "N": 2}, {"x": x})
    with pytest.raises(Exception, match="bound 'N' is derived"):
        compile_sdg(after, backend="numpy").run({"T": 5, "N": 2}, {"x": x})


def test_an_uncomputable_run_of_a_tiled_program_names_only_the_users_bounds():
    """A run whose bounds leave a point out (h[5] with T = 3) is explained in the
    bounds the user gives: sdg-tile's tile count N = (T + 41) floordiv 42 is
    neither listed among the run's bounds nor in what the program needs."""
    from tidal.lowering.schedule_diagnostics import UncomputableError
    with td.Program("g") as p:
        (t, T), = p.dims("t")
        h = td.input("h", shape=(32, 48), domain=(t,))
        g = td.input("g", shape=(32, 20), domain=(t,))
        p.output("dw", (td.tanh(h[0:T]).permute(0, 2, 1) @ g[0:T]).sum(0))
        p.output("h5", h[5] * 2.0)
    exe = p.compile(backend="numpy")
    assert " n < N = " in str(exe.module)          # tiled
    rng = np.random.default_rng(0)
    inputs = {"h": rng.standard_normal((3, 32, 48)).astype(np.float32),
              "g": rng.standard_normal((3, 32, 20)).astype(np.float32)}
    with pytest.raises(UncomputableError) as info:
        exe.run({"T": 3}, inputs)
    message = str(info.value).splitlines()[0]
    assert message.endswith("cannot be computed with T = 3; @g needs T >= 6"), message


def _learner():
    """A vectorized learner's loss: tanh(x[t] @ w) summed over the batch and the episode."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 8)).astype(np.float32) / 3
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4, 8), domain=(t,))
        h = td.tanh(x @ td.param("w", w))
        p.output("loss", h.sum()[0:T].sum())
    return p, T, w


TILED = td.default_passes(options={"sdg-tile": "tile=16 min-bytes=0"})


@pytest.mark.parametrize("backend", ["reference", "numpy", "jax"])
def test_learner_loss_tiled(backend):
    p, T, w = _learner()
    exe = p.compile(backend=backend, passes=TILED)
    assert "n < N = (T + 15) floordiv 16" in exe.stages["sdg-tile"]
    for value in (1, 16, 40):
        x = np.random.default_rng(value).standard_normal((value, 4, 8)).astype(np.float32)
        out = exe.run({T: value}, {"x": x})
        np.testing.assert_allclose(out["loss"], np.tanh(x @ w).sum(), rtol=1e-4, atol=1e-4)


def test_the_schedule_checker_computes_a_tiled_programs_tile_count():
    """check_schedule takes a run's bounds and computes the derived ones, as run does
    (it raised KeyError 'N' on a tiled program: make fuzz, seed 560473439)."""
    from tidal.runtime.scheduled.checker import check_schedule
    p, T, _ = _learner()
    exe = p.compile(backend="numpy", passes=TILED)
    for value in (1, 16, 40):
        report = check_schedule(exe.compiled, {"T": value})
        assert report.executions >= (value + 15) // 16


def test_tiling_shrinks_the_stores_and_the_default_threshold_leaves_it():
    p, T, _ = _learner()
    plain = p.compile(backend="jax")
    # the default tiles values of 1 MiB or more at T = 1024 (that no longer fit in the cache): this
    # chain's are 128 KiB there, not tiled
    assert plain.stages["sdg-tile"] == plain.stages["sdg-vectorize"]
    tiled = p.compile(backend="jax", passes=TILED)
    x = np.random.default_rng(0).standard_normal((400, 4, 8)).astype(np.float32)
    a, b = plain.run({T: 400}, {"x": x}), tiled.run({T: 400}, {"x": x})
    np.testing.assert_allclose(a["loss"], b["loss"], rtol=1e-4)
    # the input's store (400 rows, rounded up to 512) stays; the matmul's (T, 4, 8)
    # value, x.nbytes, becomes one tile of 16 rows (2 KiB) plus N partial sums
    saved = plain.stats()["store_bytes"] - tiled.stats()["store_bytes"]
    assert saved >= 0.9 * x.nbytes, (plain.stats()["store_bytes"], tiled.stats()["store_bytes"])


def _causal():
    """At every step t, tanh(x[0:t + 1] @ w) summed over the prefix: a value of
    t + 1 rows per step, which tiling makes one tile of 16 rows."""
    w = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32) / 3
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(8,), domain=(t,))
        p.output("y", td.tanh(x[0:t + 1] @ td.param("w", w)).sum(0))
    return p, T, w


@pytest.mark.parametrize("backend", ["reference", "numpy", "jax"])
def test_a_causal_prefix_is_tiled_up_to_its_step(backend):
    p, T, w = _causal()
    exe = p.compile(backend=backend, passes=TILED)
    stage = exe.stages["sdg-tile"]
    assert "n < N = (T + 15) floordiv 16" in stage and "[t, 0:t floordiv 16 + 1]" in stage, stage
    assert any("sdg.matmul %" in line and "domain [t, n]" in line and "-> !tidal.tensor<[16, 8], f32>" in line
               for line in stage.splitlines()), stage   # the projection runs one tile at a time
    if backend != "reference":   # the tiles past the prefix never run: n up to t // 16 inside the loop over t
        assert "for c1 in range(c0, c0 + c0 // 16 + 1):" in exe.schedule(), exe.schedule()
    for value in (1, 15, 16, 17, 50):
        x = np.random.default_rng(value).standard_normal((value, 8)).astype(np.float32)
        want = np.stack([np.tanh(x[:t + 1] @ w).sum(0) for t in range(value)])
        np.testing.assert_allclose(exe.run({T: value}, {"x": x})["y"], want, rtol=1e-4, atol=1e-4)



PREFIX_KINDS = {"sum": (lambda v: v.sum(0), np.sum), "prod": (lambda v: v.prod(0), np.prod),
                "max": (lambda v: td.max(v, dim=0), np.max), "min": (lambda v: td.min(v, dim=0), np.min)}


@settings(max_examples=12, deadline=None)
@given(tile=st.sampled_from([1, 2, 3, 5]), kind=st.sampled_from(sorted(PREFIX_KINDS)),
       project=st.booleans(), steps=st.lists(st.integers(1, 12), min_size=1, max_size=3))
@example(tile=1, kind="sum", project=False, steps=[5])   # its final reduction reads 0:t + 1: not tiled again
def test_causal_prefix_reductions_tiled_agree_with_numpy(tile, kind, project, steps):
    """A reduction over x[0:t + 1] (through a projection or not), tiled with
    `tile` rows at every step: NumPy's prefix reductions, on both scheduled
    backends, at bounds below, at and above the tile size. (sdg-lift, off
    here, would make these prefix reductions scans, which beats tiling them.)"""
    w = np.random.default_rng(tile).standard_normal((3, 3)).astype(np.float32) / 2
    ours, theirs = PREFIX_KINDS[kind]
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        v = x[0:t + 1] @ td.param("w", w) if project else x[0:t + 1]
        p.output("y", ours(td.tanh(v) * 0.5 + 1.0))
    passes = td.default_passes(without=["sdg-lift"], options={"sdg-tile": {"tile": tile, "min-bytes": 0}})
    for backend in ("numpy", "jax"):
        exe = p.compile(backend=backend, passes=passes)
        partials = f"[t, 0:t floordiv {tile} + 1]" if tile > 1 else "[t, 0:t + 1]"   # each step's own tiles
        assert partials in exe.stages["sdg-tile"], exe.stages["sdg-tile"]
        for value in steps:
            x = np.random.default_rng(value).standard_normal((value, 3)).astype(np.float32)
            xs = x @ w if project else x
            want = np.stack([theirs(np.tanh(xs[:s + 1]) * 0.5 + 1.0, axis=0) for s in range(value)])
            np.testing.assert_allclose(exe.run({T: value}, {"x": x})["y"], want, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{backend} T={value}")


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_causal_attention_with_keys_first_is_tiled_in_two_passes(backend):
    """Attention at step t over the keys 0..t, written keys first (the scores
    k[0:t + 1] @ q, keys on axis 0): the causal KV reads are tiled up to the
    step, the softmax in two passes over the tiles (each tile's max, then the
    exponentials against the step's max, their sum and the weighted values),
    both loops over n up to t // 4 inside the loop over t. Keys on the last
    axis (q @ k.T, the decode example's form) are not tiled: sdg-tile tiles
    axis 0 only."""
    D = 4
    passes = td.default_passes(without=["sdg-lift"], options={"sdg-tile": "tile=4 min-bytes=0"})
    with td.Program() as p:
        (t, T), = p.dims("t")
        q = td.input("q", shape=(D, 1), domain=(t,))
        k = td.input("k", shape=(D,), domain=(t,))
        v = td.input("v", shape=(D,), domain=(t,))
        s = k[0:t + 1] @ q
        e = td.exp(s - td.max(s, dim=0, keepdim=True))
        p.output("o", (e * v[0:t + 1]).sum(0) / e.sum(0))
    exe = p.compile(backend=backend, passes=passes)
    lines = exe.schedule().splitlines()

    def loop_of(kernel: str) -> int:   # the line of the loop over n around the kernel's line in the loop over t
        at = next(j for j, line in enumerate(lines) if kernel in line and "t = c0, n = " in line)
        return max(j for j in range(at) if lines[j].strip().startswith("for c1") and "c0 // 4 + 1" in lines[j])

    first, second = loop_of("reduce max)"), loop_of("unary exp)")   # the passes: each tile's max, then the rest
    assert first < second and "for c0 in range(1, T)" in "\n".join(lines[:first]), "\n".join(lines)
    rng = np.random.default_rng(0)
    for value in (1, 4, 5, 11):
        Q = rng.standard_normal((value, D, 1)).astype(np.float32)
        K, V = (rng.standard_normal((value, D)).astype(np.float32) for _ in range(2))
        want = []
        for step in range(value):
            w = np.exp(K[:step + 1] @ Q[step] - (K[:step + 1] @ Q[step]).max(0))
            want.append((w * V[:step + 1]).sum(0) / w.sum(0))
        np.testing.assert_allclose(exe.run({T: value}, {"q": Q, "k": K, "v": V})["o"], np.stack(want),
                                   rtol=1e-5, atol=1e-6)


def _policy_gradient():
    """A vectorized policy-gradient learner over x[0:T] (TEMPO's REINFORCE/PPO
    loss in small): log-softmax of a tanh MLP, the taken action's
    log-probability (a take along the last axis), and the weights' gradients,
    whose backward pass unsqueezes, pads, expands and transposes per step."""
    rng = np.random.default_rng(7)
    w0 = (rng.standard_normal((3, 8)) / 2).astype(np.float32)
    v0 = (rng.standard_normal((8, 2)) / 2).astype(np.float32)
    with td.Program() as p:
        (t, T), = p.dims("t")
        x, a, adv = (td.input(name, shape=shape, domain=(t,)) for name, shape in
                     (("x", (4, 3)), ("a", (4,)), ("adv", (4,))))
        ws = [td.param("w", w0), td.param("v", v0)]
        lp = td.log_softmax(td.tanh(x[0:T] @ ws[0]) @ ws[1], -1)
        loss = -(td.where(a[0:T] > 0.5, lp[..., 1], lp[..., 0]) * adv[0:T]).mean()
        gw, gv = td.grad(loss, ws)
        for name, value in (("loss", loss), ("gw", gw), ("gv", gv)):
            p.output(name, value)
    return p, T, (w0, v0)


def _policy_gradient_numpy(w0, v0, x, a, adv):
    import jax
    import jax.numpy as jnp

    def loss(ws):
        lp = jax.nn.log_softmax(jnp.tanh(x @ ws[0]) @ ws[1], -1)
        return -(jnp.where(a > 0.5, lp[..., 1], lp[..., 0]) * adv).mean()
    with jax.enable_x64(True):
        ws = [jnp.asarray(w, jnp.float64) for w in (w0, v0)]
        value, grads = jax.value_and_grad(loss)(ws)
        return float(value), [np.asarray(g) for g in grads]


@pytest.mark.parametrize("backend", ["reference", "numpy", "jax"])
def test_a_policy_gradient_is_tiled_through_takes_pads_and_transposes(backend):
    p, T, (w0, v0) = _policy_gradient()
    exe = p.compile(backend=backend, passes=td.default_passes(options={"sdg-tile": "tile=4 min-bytes=0"}))
    tiled = exe.stages["sdg-tile"].splitlines()
    for op in ("sdg.take 2 at <1>", "sdg.unsqueeze 2", "sdg.pad 2", "sdg.permute [0, 2, 1]", "sdg.expand"):
        assert any(op in line and "domain [n]" in line for line in tiled), op
    # no (T, 4, 8) activation or gradient is computed whole any more
    assert not any("domain []" in line and "-> !tidal.tensor<[T, 4, 8]" in line for line in tiled)
    if backend != "reference":   # one loop over the tiles, not mixed with the loops over t (options_for)
        loops = [line.strip() for line in exe.schedule().splitlines() if line.lstrip().startswith("for ")]
        assert sum("range(N)" in line for line in loops) == 1, loops
        assert not any("N" in line and "T" in line for line in loops), loops
    rng = np.random.default_rng(1)
    for steps in (1, 4, 10):
        x = rng.standard_normal((steps, 4, 3)).astype(np.float32)
        a = (rng.random((steps, 4)) < 0.5).astype(np.float32)
        adv = rng.standard_normal((steps, 4)).astype(np.float32)
        out = exe.run({T: steps}, {"x": x, "a": a, "adv": adv})
        loss, (gw, gv) = _policy_gradient_numpy(w0, v0, x, a, adv)
        np.testing.assert_allclose(out["loss"], loss, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out["gw"], gw, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out["gv"], gv, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_tiles_of_a_small_input_run_inside_the_compiled_loop(backend):
    """The input (3 floats a step) is a small part of the chain (64 a step):
    its tiles are static slices of one padded copy, so the loop over the tiles
    compiles whole (no host op); with tiles read at their own size, the last
    tile's min(T - 4 n, 4) rows made the slices host ops and the loop ran from
    Python."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 64)).astype(np.float32)
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        p.output("y", td.tanh(x[0:T] @ td.param("w", w)).sum(0))
    exe = p.compile(backend=backend, passes=td.default_passes(options={"sdg-tile": "tile=4 min-bytes=0"}))
    assert "sdg.slice 0 at <4 * n>" in exe.stages["sdg-tile"]
    if backend == "jax":
        assert exe.stats()["host_ops"] == 0, exe.stats()
    for steps in (1, 4, 7, 13):
        x = rng.standard_normal((steps, 3)).astype(np.float32)
        np.testing.assert_allclose(exe.run({T: steps}, {"x": x})["y"], np.tanh(x @ w).sum(0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("text,whole_component", [(EPISODE, False), (BATCH, False), (PREFIX, True)])
def test_loops_over_tiles_of_whole_dims_schedule_without_whole_component_clustering(text, whole_component):
    """A graph with tiles of a whole dim schedules with isl's incremental
    clustering (whole-component clustering put PPO's actor tiles into the GAE
    loop over t); a causal prefix's, whose tiles each step reads depend on the
    step, and a graph without tiles keep whole-component clustering."""
    from tidal.lowering.graph import read_graph
    from tidal.lowering.schedule import options_for
    from tidal.runtime.reference import load_graph

    for source, expected in ((text, True), (_tiled(text, 4), whole_component)):
        root, graph = load_graph(source)
        with root.context:
            assert options_for(read_graph(graph)).whole_component is expected, source
