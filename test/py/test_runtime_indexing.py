"""Indexing ops (index_select, gather, scatter_add) and 64-bit values on the
jax backend: they run as jitted kernels (64-bit types inside a scoped
`jax.enable_x64`), agree with the reference, leave the user's JAX
configuration alone, and an index out of range is still an error that names
the user's line (checked when the run ends, from a range the kernels fold)."""
import inspect

import jax
import numpy as np
import pytest

import tidal as td
from tidal.runtime.reference_graph import EvaluationError

BACKENDS = ("reference", "numpy", "jax")


def _line(marker: str) -> int:
    lines = inspect.getsource(inspect.getmodule(_line)).splitlines()
    return next(n for n, text in enumerate(lines, 1) if text.rstrip().endswith(f"# @{marker}"))


def greedy_lookup():
    """Token t + 1 is the argmax of table[token t] @ W: an i64 recurrence
    through argmax, index_select, gather and scatter_add at every step."""
    rng = np.random.default_rng(0)
    table = rng.normal(size=(6, 5)).astype(np.float32)
    W = rng.normal(size=(5, 6)).astype(np.float32)
    with td.Program("lookup") as p:
        (t, T), = p.dims("t")
        first = td.input("first", shape=(2,), dtype="int64")
        tok = td.recurrent(shape=(2,), domain=(t,), dtype="int64")
        tok[0] = first
        emb = td.param("table", table).index_select(0, tok[t])            # @select
        scores = emb @ td.param("W", W)
        tok[t] = scores[t - 1].argmax(1)
        picked = scores.gather(1, tok[t].reshape((2, 1)))                  # @gather
        spread = td.zeros((2, 6)).scatter_add(1, tok[t].reshape((2, 1)), picked)
        p.output("tok", tok)
        p.output("spread", spread)
        p.output("t64", td.symbol(t).astype("int64") * 3_000_000_000)      # needs 64 bits
    return p, table, W


def expected(first, table, W, T):
    tok = [np.asarray(first)]
    spread = []
    for step in range(T):
        scores = table[tok[-1]] @ W
        picked = scores[np.arange(2), tok[-1]]
        s = np.zeros((2, 6), np.float32)
        s[np.arange(2), tok[-1]] += picked
        spread.append(s)
        if step + 1 < T:
            tok.append(scores.argmax(1))
    return np.stack(tok), np.stack(spread)


@pytest.mark.parametrize("backend", BACKENDS)
def test_indexing_recurrence_agrees_with_numpy(backend):
    p, table, W = greedy_lookup()
    first = np.array([1, 4])
    out = p.compile(backend=backend).run(bounds={"T": 6}, inputs={"first": first})
    tok, spread = expected(first, table, W, 6)
    np.testing.assert_array_equal(np.asarray(out["tok"]), tok)
    assert np.asarray(out["tok"]).dtype == np.int64
    np.testing.assert_allclose(np.asarray(out["spread"]), spread, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(out["t64"]), np.arange(6, dtype=np.int64) * 3_000_000_000)


def test_on_jax_nothing_runs_on_the_host_and_jax_stays_32_bit():
    p, _, _ = greedy_lookup()
    exe = p.compile(backend="jax")
    before = jax.config.jax_enable_x64
    exe.run(bounds={"T": 6}, inputs={"first": np.array([1, 4])})
    stats = exe.stats()
    assert stats["host_ops"] == 0 and stats["host_launches"] == 0, stats
    assert stats["device_to_host"] == 0, stats     # no mid-run reads (outputs are fetched after)
    assert jax.config.jax_enable_x64 == before
    assert jax.numpy.asarray(1).dtype == np.int32 or before


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("bad", [6, -1])
def test_an_index_out_of_range_names_the_line(backend, bad):
    p, _, _ = greedy_lookup()
    with pytest.raises(EvaluationError, match="out of range") as e:
        p.compile(backend=backend).run(bounds={"T": 4}, inputs={"first": np.array([1, bad])})
    assert f":{_line('select')}:" in str(e.value), str(e.value)


def test_the_range_check_sees_every_launch_not_only_the_last():
    """The bad index is read at t = 0 only; later steps read good ones."""
    p, _, _ = greedy_lookup()
    exe = p.compile(backend="jax")
    exe.run(bounds={"T": 5}, inputs={"first": np.array([0, 5])})          # in range: fine
    with pytest.raises(EvaluationError, match="out of range"):
        exe.run(bounds={"T": 5}, inputs={"first": np.array([0, 9])})
    exe.run(bounds={"T": 5}, inputs={"first": np.array([2, 3])})          # the next run starts clean


def test_a_udf_sees_the_users_jax_configuration():
    """Kernels run with 64-bit types on; user code called during the run
    (a UDF) runs with the user's own setting."""
    seen = []

    def probe(x):
        seen.append(jax.numpy.asarray(1.5).dtype)
        return np.asarray(x) * 2

    with td.Program("udf_x64") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        y = td.udf(probe, x, shape=(2,), dtype="float32")
        p.output("y", y + 1.0)
    out = p.compile(backend="jax").run(bounds={"T": 2}, inputs={"x": np.ones((2, 2), np.float32)})
    np.testing.assert_allclose(np.asarray(out["y"]), np.full((2, 2), 3.0))
    assert seen and all(d == (np.float64 if jax.config.jax_enable_x64 else np.float32) for d in seen), seen
