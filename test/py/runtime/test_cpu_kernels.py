"""Tidal's CPU kernels (tidal.runtime.cpu_kernels): the row-contracting product
a.T @ b against NumPy at every shape class (blocks of 8 rows and 32 columns
and their remainders, chunks of 256 rows, empty operands), in both the
AVX-512 and the portable code, inside jitted loops, and end to end in a
program's weight gradient, where the JAX backend calls it; with the kernels
off, the same program gives the same values through XLA's product."""
import os
import subprocess
import sys

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings

import tidal as td
from tidal.runtime import cpu_kernels

pytestmark = pytest.mark.skipif(jax.default_backend() != "cpu", reason="CPU kernels")


def _check(K, M, N, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((K, M)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    got = np.asarray(jax.jit(cpu_kernels.tn_matmul)(jnp.asarray(a), jnp.asarray(b)))
    want = a.astype(np.float64).T @ b.astype(np.float64)
    assert got.shape == (M, N) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.sqrt(max(K, 1)))


def test_the_kernels_build_and_register():
    assert cpu_kernels.available(), cpu_kernels.status()
    assert cpu_kernels.status().startswith("ready: ")


@pytest.mark.parametrize("K,M,N", [(1024, 64, 64), (12800, 64, 64), (0, 8, 32), (1, 1, 1), (257, 9, 33),
                                   (256, 8, 32), (3, 17, 16), (513, 64, 2), (100, 7, 95)])
def test_row_contraction_matches_numpy(K, M, N):
    _check(K, M, N)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 700), st.integers(1, 41), st.integers(1, 80), st.integers(0, 2 ** 16))
def test_random_shapes_match_numpy(K, M, N, seed):
    _check(K, M, N, seed)


@pytest.mark.parametrize("rows", [0, 1, 77, 299, 300, 1000, -5])
def test_rows_bound_the_contraction(rows):
    """tn_matmul(a, b, rows): the rows past the bound (a last tile's padding,
    here NaN) are not read; the bound is clamped to [0, K]."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 33)).astype(np.float32)
    b = rng.standard_normal((300, 40)).astype(np.float32)
    keep = max(0, min(rows, 300))
    a[keep:], b[keep:] = np.nan, np.inf
    got = np.asarray(jax.jit(cpu_kernels.tn_matmul)(jnp.asarray(a), jnp.asarray(b), jnp.int32(rows)))
    want = a[:keep].astype(np.float64).T @ b[:keep].astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_the_portable_loops_match_numpy():
    """TIDAL_CPU_KERNELS_GENERIC=1 (read once per process): the loops a CPU
    without AVX-512 runs, at the same shape classes."""
    code = ("import sys; sys.path.insert(0, %r); import test_cpu_kernels as t\n"
            "for s in [(1024, 64, 64), (0, 8, 32), (257, 9, 33), (3, 17, 16), (513, 64, 2), (100, 7, 95)]:\n"
            "    t._check(*s)\n"
            "print('ok')") % os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TIDAL_CPU_KERNELS_GENERIC="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_inside_a_jitted_loop():
    rng = np.random.default_rng(1)
    h = jnp.asarray(rng.standard_normal((300, 40)).astype(np.float32))
    g = jnp.asarray(rng.standard_normal((300, 24)).astype(np.float32))

    @jax.jit
    def loop(h, g):
        return jax.lax.fori_loop(0, 5, lambda i, acc: acc + cpu_kernels.tn_matmul(h * (i + 1.0), g),
                                 jnp.zeros((40, 24), jnp.float32))
    want = 15.0 * (np.asarray(h, np.float64).T @ np.asarray(g, np.float64))
    np.testing.assert_allclose(np.asarray(loop(h, g)), want, rtol=1e-5, atol=1e-3)


def _weight_gradient_program():
    """sum_t h[t]^T @ g[t]: sdg-contract makes it one product over the steps and rows of a tile."""
    with td.Program("grad") as p:
        (t, T), = p.dims("t")
        h = td.input("h", shape=(32, 48), domain=(t,))
        g = td.input("g", shape=(32, 20), domain=(t,))
        p.output("dw", (td.tanh(h[0:T]).permute(0, 2, 1) @ g[0:T]).sum(0))
    return p


def test_a_programs_weight_gradient_runs_on_the_kernel(monkeypatch):
    """The tiles' sums of products run on the kernel, the last tile's padding (g's
    rows past T repeat row T - 1: counted, they would change the sum) bounded by
    the kernel's rows instead of the masks sdg-tile puts on both factors."""
    calls = []
    real = cpu_kernels.tn_matmul
    monkeypatch.setattr(cpu_kernels, "tn_matmul",
                        lambda a, b, rows=None: calls.append((a.shape, b.shape, rows is not None)) or real(a, b, rows))
    rng = np.random.default_rng(2)
    h = rng.standard_normal((7, 32, 48)).astype(np.float32)
    g = rng.standard_normal((7, 32, 20)).astype(np.float32)
    out = _weight_gradient_program().compile(backend="jax").run({"T": 7}, {"h": h, "g": g})
    want = np.einsum("tki,tkj->ij", np.tanh(h.astype(np.float64)), g)
    np.testing.assert_allclose(out["dw"], want, rtol=1e-4, atol=1e-4)
    # the default pipeline tiles it (42 steps of 32 rows a tile at the assumed bounds; the
    # last tile masked through both factors) and contracts each tile's sum
    assert calls and all(a[1] == 48 and b[1] == 20 and a[0] == b[0] and a[0] % 32 == 0 and bounded
                         for a, b, bounded in calls), calls


def test_with_the_kernels_off_the_program_gives_the_same_values():
    code = ("import sys; sys.path.insert(0, %r); import numpy as np, test_cpu_kernels as t\n"
            "from tidal.runtime import cpu_kernels\n"
            "rng = np.random.default_rng(2)\n"
            "h = rng.standard_normal((7, 32, 48)).astype(np.float32)\n"
            "g = rng.standard_normal((7, 32, 20)).astype(np.float32)\n"
            "out = t._weight_gradient_program().compile(backend='jax').run({'T': 7}, {'h': h, 'g': g})\n"
            "want = np.einsum('tki,tkj->ij', np.tanh(h.astype(np.float64)), g)\n"
            "np.testing.assert_allclose(out['dw'], want, rtol=1e-4, atol=1e-4)\n"
            "print(cpu_kernels.status())") % os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TIDAL_CPU_KERNELS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "off (TIDAL_CPU_KERNELS=0)" in out.stdout


def test_a_few_column_weight_gradient_runs_on_the_kernel(monkeypatch):
    """A policy head's gradient (2 columns): sdg-contract contracts it one column at
    a time, g[..., c]^T @ h, over the tile's rows; each column runs on the kernel as a
    (rows, 1) by (rows, 48) product bounded by the last tile's rows, so neither of
    sdg-tile's masks (the whole (rows, 48) one included) is computed."""
    calls = []
    real = cpu_kernels.tn_matmul
    monkeypatch.setattr(cpu_kernels, "tn_matmul",
                        lambda a, b, rows=None: calls.append((a.shape, b.shape, rows is not None)) or real(a, b, rows))
    with td.Program("head") as p:
        (t, T), = p.dims("t")
        h = td.input("h", shape=(32, 48), domain=(t,))
        g = td.input("g", shape=(32, 2), domain=(t,))
        p.output("dw", (td.tanh(h[0:T]).permute(0, 2, 1) @ g[0:T]).sum(0))
    rng = np.random.default_rng(3)
    h = rng.standard_normal((7, 32, 48)).astype(np.float32)
    g = rng.standard_normal((7, 32, 2)).astype(np.float32)
    out = p.compile(backend="jax").run({"T": 7}, {"h": h, "g": g})
    want = np.einsum("tki,tkj->ij", np.tanh(h.astype(np.float64)), g)
    np.testing.assert_allclose(out["dw"], want, rtol=1e-4, atol=1e-4)
    assert calls and all(a[1] == 1 and b[1] == 48 and a[0] == b[0] and a[0] % 32 == 0 and bounded
                         for a, b, bounded in calls), calls
