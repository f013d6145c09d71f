"""td.stop_when on every backend, against plain NumPy: a run ends after the
first t where the condition holds and means the program at T = t_stop + 1
(outputs cut, values that read T computed with it), `exe.stats()["steps"]`
says how many steps ran, and the EOS decode of examples/llm_decode.py gives
the NumPy decode's tokens."""
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tidal as td

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import llm_decode as L  # noqa: E402

BACKENDS = td.backends()


def returns_program(threshold: float):
    """s: a recurrence; the stop when s's sum passes `threshold`; outputs that read T."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        s = td.recurrent(shape=(2,), domain=(t,))
        s[0] = x[0]
        s[t + 1] = 0.5 * s[t] + x[t + 1]
        td.stop_when(s.sum() > threshold)
        g = td.recurrent(shape=(2,), domain=(t,))   # returns, backwards from the (stopped) last step
        g[T - 1] = x[T - 1]
        g[t] = x[t] + 0.9 * g[t + 1]
        p.output("s", s)
        p.output("suffix", x[t:T].sum(0))
        p.output("nstep", x[t:td.min(t + 3, T)].discounted_sum(0.9, dim=0))
        p.output("g", g)
        p.output("last", x[T - 1])
        p.output("total", x[0:T].sum(0))
    return p, T


def numpy_returns(X: np.ndarray, threshold: float) -> dict:
    S = [X[0].astype(np.float64)]
    for i in range(1, len(X)):
        S.append(0.5 * S[-1] + X[i])
    S = np.array(S)
    hits = np.flatnonzero(S.sum(1) > threshold)
    n = int(hits[0]) + 1 if len(hits) else len(X)
    x = X[:n].astype(np.float64)
    g = np.zeros_like(x)
    g[-1] = x[-1]
    for i in range(n - 2, -1, -1):
        g[i] = x[i] + 0.9 * g[i + 1]
    return {"s": S[:n], "suffix": np.array([x[i:].sum(0) for i in range(n)]),
            "nstep": np.array([sum(0.9 ** (k - i) * x[k] for k in range(i, min(i + 3, n))) for i in range(n)]),
            "g": g, "last": x[-1], "total": x.sum(0), "steps": n}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("threshold", [-100.0, 3.0, 4.6, 100.0])     # at t = 0, early, later, never
def test_stop_cuts_outputs_and_stopped_bound_reads(backend, threshold):
    p, T = returns_program(threshold)
    X = np.random.default_rng(0).uniform(0, 2, (24, 2)).astype(np.float32)
    exe = p.compile(backend=backend)
    out = exe.run(bounds={T: 24}, inputs={"x": X})
    want = numpy_returns(X, threshold)
    for k in ("s", "suffix", "nstep", "g", "last", "total"):
        assert np.asarray(out[k]).shape == np.asarray(want[k]).shape, k
        np.testing.assert_allclose(out[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)
    assert exe.stats()["steps"] == {"t": want["steps"]}


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 16), n=st.integers(1, 12), threshold=st.floats(0.0, 6.0))
def test_stop_random_inputs_every_backend(seed, n, threshold):
    X = np.random.default_rng(seed).uniform(0, 2, (n, 2)).astype(np.float32)
    want = numpy_returns(X, threshold)
    for backend in BACKENDS:
        p, T = returns_program(threshold)
        out = p.compile(backend=backend).run(bounds={T: n}, inputs={"x": X})
        for k in ("s", "suffix", "g", "total"):
            np.testing.assert_allclose(out[k], want[k], rtol=1e-4, atol=1e-4, err_msg=f"{k} on {backend}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_executable_many_stops(backend):
    """The stopped bound is the run's own: the next run starts from its bounds again."""
    p, T = returns_program(4.6)
    exe = p.compile(backend=backend)
    rng = np.random.default_rng(1)
    for n, scale in ((20, 1.0), (20, 0.1), (7, 2.0), (20, 1.0)):
        X = (scale * rng.uniform(0, 2, (n, 2))).astype(np.float32)
        want = numpy_returns(X, 4.6)
        out = exe.run(bounds={T: n}, inputs={"x": X})
        np.testing.assert_allclose(out["g"], want["g"], rtol=1e-5, atol=1e-5)
        assert exe.stats()["steps"]["t"] == want["steps"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_udf_runs_once_per_point_up_to_the_stop(backend):
    calls = []

    def env(a):
        calls.append(float(a))
        return np.asarray(a * 2.0, np.float32)

    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        y = td.udf(env, [x], shape=(), dtype="float32")
        td.stop_when(y > 5)
        p.output("y", y)
    out = p.compile(backend=backend).run(bounds={T: 10}, inputs={"x": np.arange(10, dtype=np.float32)})
    np.testing.assert_array_equal(out["y"], [0, 2, 4, 6])
    assert calls == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_stop_below_a_needed_bound_fails(backend):
    """An output that needs T >= 3 (x[2]): a run that stops at t = 0 cannot give it."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        td.stop_when(x > 0)
        p.output("third", x[2])
    exe = p.compile(backend=backend)
    out = exe.run(bounds={T: 5}, inputs={"x": np.array([-1, -1, -1, 1, 1], np.float32)})
    assert float(out["third"]) == -1
    with pytest.raises(Exception, match="T"):
        exe.run(bounds={T: 5}, inputs={"x": np.array([1, -1, -1, 1, 1], np.float32)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_eos_decode_matches_numpy(backend):
    """4 sequences reaching EOS at different steps: the NumPy decode's tokens, cut
    after the last sequence's EOS; without the stop, every step runs and the
    finished sequences repeat EOS."""
    cfg = L.Config(dim=32, layers=1, heads=2, hidden=64, vocab=64, batch=4)
    w = L.init_weights(cfg, 0)
    P, G = 3, 40
    prompt = L.make_prompt(cfg, P, 1)
    free, _ = L.numpy_decode(cfg, w, prompt, P + G)
    gen = free[P:]
    firsts = {int(tok): [int(np.flatnonzero(gen[:, b] == tok)[0]) for b in range(cfg.batch)]
              for tok in np.unique(gen) if all((gen[:, b] == tok).any() for b in range(cfg.batch))}
    eos = min(firsts, key=lambda k: (len(set(firsts[k])) < 3, max(firsts[k])))
    assert len(set(firsts[eos])) >= 3 and max(firsts[eos]) < G - 5, firsts[eos]   # different steps, early
    want, _ = L.numpy_decode(cfg, w, prompt, P + G, eos=eos)
    assert len(want) == P + max(firsts[eos]) + 1
    p, _ = L.build(cfg, w, eos=eos)
    exe = p.compile(backend=backend)
    out = exe.run(bounds={"P": P, "T": P + G}, inputs={"prompt": prompt})["tokens"]
    np.testing.assert_array_equal(out, want)
    assert (out[-1] == eos).all() and not (out[-2] == eos).all()
    assert exe.stats()["steps"] == {"s": P, "t": len(want)}
    full, _ = L.build(cfg, w, eos=eos, stop=False)
    every = full.compile(backend=backend).run(bounds={"P": P, "T": P + G}, inputs={"prompt": prompt})["tokens"]
    assert every.shape == (P + G, cfg.batch)
    np.testing.assert_array_equal(every[:len(want)], want)
    assert (every[len(want):] == eos).all()


def test_jax_stop_loop_stays_in_xla():
    """The loop that computes the condition is one lax.while_loop: one launch,
    no fallback to Python, the stopped bound read back once."""
    p, T = returns_program(4.6)
    exe = p.compile(backend="jax")
    X = np.random.default_rng(0).uniform(0, 2, (64, 2)).astype(np.float32)
    exe.run(bounds={T: 64}, inputs={"x": X})
    s = exe.stats()
    assert s["loop_fallbacks"] == 0 and s["xla_loops"] >= 1 and s["host_launches"] == 0
    assert "_wfori(" in exe.stages["host"]
