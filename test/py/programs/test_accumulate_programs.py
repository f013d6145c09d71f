"""sdg-accumulate (a large reduction over all of a dim carried as a running
reduction) and sdg-vectorize's block limit (`max-block-bytes`), end to end:
random programs against NumPy on every backend, and TEMPO section 7.4 on
REINFORCE with large observations: with the learner's large blocks refused,
n-step returns let it run n - 1 steps behind the acting, in the same loop,
keeping only the last n observations; Monte-Carlo returns make it wait for
the episode, which keeps them all."""
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tidal as td
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES

KINDS = {"sum": (lambda w: w.sum(0), np.sum), "prod": (lambda w: w.prod(0), np.prod),
         "max": (lambda w: td.max(w, dim=0), np.max), "min": (lambda w: td.min(w, dim=0), np.min)}


def _passes(block: int, carry: int, assume: int) -> tuple:
    """The default pipeline with sdg-vectorize's block limit and sdg-accumulate's threshold."""
    out = []
    for p in DEFAULT_SDG_PASSES:
        if p == "sdg-vectorize":
            p = f"sdg-vectorize{{max-block-bytes={block} assume-bound={assume}}}"
        elif p == "sdg-accumulate":
            p = f"sdg-accumulate{{min-bytes={carry} assume-bound={assume}}}"
        out.append(p)
    return tuple(out)


@settings(max_examples=10, deadline=None)
@given(kind=st.sampled_from(sorted(KINDS)), I=st.integers(1, 3), T=st.integers(1, 6), width=st.integers(1, 3),
       seed=st.integers(0, 2 ** 16))
def test_running_reductions_agree_with_numpy(kind, I, T, width, seed):
    """s[i] = kind over t of tanh(x[i, t] @ W) (a matmul per step, as a weight
    gradient would be), then used by an update over i; carried along t when
    sdg-vectorize leaves the matmul per step, on the reference interpreter
    and both scheduled backends."""
    rng = np.random.default_rng(seed)
    xv = rng.uniform(-1, 1, (I, T, 2, width)).astype(np.float32)
    wv = rng.uniform(-1, 1, (width, 3)).astype(np.float32)
    op, ref = KINDS[kind]
    with td.Program("carried") as p:
        (i, In), (t, Tn) = p.dims("i", "t")
        x = td.input("x", shape=(2, width), domain=(i, t))
        W = td.param("W", wv)
        y = td.tanh(x @ W)                          # (2, 3) per (i, t)
        s = op(y[i, 0:Tn])
        p.output("s", s)
        p.output("u", s * 2.0 - 1.0)
    want = ref(np.tanh(xv.astype(np.float64) @ wv), axis=1)
    carried = _passes(block=1, carry=0, assume=8)
    for backend in ("reference", "numpy", "jax"):
        for passes in (carried, DEFAULT_SDG_PASSES):
            exe = p.compile(backend=backend, passes=passes)
            out = exe.run(bounds={"I": I, "T": T}, inputs={"x": xv})
            np.testing.assert_allclose(out["s"], want, rtol=1e-4, atol=1e-5, err_msg=f"{backend} {passes}")
            np.testing.assert_allclose(out["u"], want * 2 - 1, rtol=1e-4, atol=1e-5)
    stage = p.compile(backend="numpy", passes=carried).stages["sdg-accumulate"]
    assert "sdg.reduce" not in stage and "if <t eq 0>" in stage, stage


def _reinforce():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
    import reinforce
    return reinforce


# blocks of 1 MB or more at T = 40 are refused (batched) and carried (summed):
# the first layer's weight gradient, 40 x 512 x 16 floats; the observations'
# own block (40 x 8 x 512 floats) stays under it
MEMORY = _passes(block=1_000_000, carry=1_000_000, assume=40)
N = 8


@pytest.mark.parametrize("returns", ["nstep", "mc"])
def test_learner_runs_behind_the_acting_only_with_nstep_returns(returns):
    """TEMPO section 7.4: REINFORCE (no baseline, as in its Alg. 1) with
    512-feature observations. The first layer's weight gradient over the
    episode would be a (T, 512, 16) block: it stays per step and its sum over t
    is carried. With n-step returns the per-step learner (backward pass and
    running gradient sums) runs at t = c1 - (n - 1) inside the acting loop, and
    the observations' store keeps n of them; with Monte-Carlo returns it runs
    in a loop after the episode's, and the store keeps all T. Both equal the
    default pipeline's run (which batches the learner after the episode)."""
    reinforce = _reinforce()
    p = reinforce.build(B=8, hidden=16, returns=returns, n=N, baseline=False, obs_dim=512)
    exe = p.compile(backend="numpy", passes=MEMORY)
    stage = exe.stages["sdg-accumulate"]
    assert "if <t eq 0>" in stage and "[512, 16], f32>" in stage     # the gradient sum, carried
    bounds = {"I": 2, "T": 40}
    got = exe.run(bounds=bounds)
    want = p.compile(backend="numpy").run(bounds=bounds)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=2e-3, atol=1e-4, err_msg=k)
    lines = exe.schedule().splitlines()
    obs = next(j for j, line in enumerate(lines) if "(matmul, unary tanh)  [i = c0, t = c1]" in line)
    grads = [j for j, line in enumerate(lines) if "(permute, matmul)" in line and "[i = c0, t = c1" in line]
    loops = [j for j, line in enumerate(lines) if line.strip().startswith("for c1 in")]
    stores = {life.label.split(" at ")[0]: life for life in exe.memory_report().stores.values()}
    observations = next(v for k, v in stores.items() if k.endswith("sdg.island (matmul, unary tanh)"))
    if returns == "nstep":
        # the weight gradient of the same loop iteration as the acting, n - 1 steps behind
        lag = [j for j in grads if f"t = c1 - {N - 1}]" in lines[j]]
        assert lag and any(max(k for k in loops if k < j) < obs < j for j in lag), "\n".join(lines)
        assert observations.kind == "point" and observations.bytes <= N * 8 * 512 * 4, observations
    else:
        assert grads and all(max(k for k in loops if k < j) > obs for j in grads), "\n".join(lines)
        assert observations.kind == "block" and observations.bytes >= 40 * 8 * 512 * 4, observations


@pytest.mark.parametrize("returns", ["nstep", "mc"])
def test_the_learner_runs_behind_the_acting_at_the_bench_sizes(returns):
    """bench/rl.py's large-observation configuration (K = 4096, B = 16, hidden
    64, the default pipeline): isl's clustering put the n-step learner in a
    loop of its own after the acting there (the observations were all kept);
    the schedule's loop-fusion post-pass (lowering/loop_fusion.py) runs it
    n - 1 steps behind, in the acting's loop, with a point store for the
    observations. Monte-Carlo returns still wait for the episode."""
    reinforce = _reinforce()
    p = reinforce.build(B=16, hidden=64, returns=returns, n=N, baseline=False, obs_dim=4096)
    exe = p.compile(backend="jax")
    lines = exe.schedule().splitlines()
    obs = next(j for j, line in enumerate(lines) if "(matmul, unary tanh)  [i = c0, t = c1]" in line)
    grads = [j for j, line in enumerate(lines) if "(permute, matmul)" in line and "[i = c0, t = c1" in line]
    loops = [j for j, line in enumerate(lines) if line.strip().startswith("for c1 in")]
    observations = next(kind for name, kind in exe.compiled.store_kinds().items()
                        if name == lines[obs].split(" = ")[0].strip())
    assert grads, "\n".join(lines)
    if returns == "nstep":
        assert all(f"t = c1 - {N - 1}]" in lines[j] for j in grads), "\n".join(lines)
        assert any(max(k for k in loops if k < j) < obs < j for j in grads), "\n".join(lines)
        assert observations.startswith("point"), observations
    else:
        assert all(max(k for k in loops if k < j) > obs for j in grads), "\n".join(lines)
        assert observations.startswith("block"), observations
