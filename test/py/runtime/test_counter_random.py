"""The counter-based generator of `rt.random` (runtime/counter_random.py).

The golden values come from a plain-Python transcription of the rule in the
module's docstring (integers masked to 32 bits), written independently of
the array code; the array code must match it bit for bit on NumPy and under
`jax.jit` with the point traced.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidal.runtime.counter_random import random_draw

M32 = 0xFFFFFFFF


def mix(x):
    x ^= x >> 16
    x = (x * 0x21F0AAAD) & M32
    x ^= x >> 15
    x = (x * 0x735A2D97) & M32
    return x ^ (x >> 15)


def absorb(k, v):
    v &= 0xFFFFFFFFFFFFFFFF
    return mix(((mix(k ^ (v & M32)) + 0x9E3779B9) & M32) ^ (v >> 32))


def word(key, j):
    return mix((mix(key ^ j) + mix(key ^ 0x9E3779B9)) & M32)


def uniform(key, j):
    a, b = word(key, j), word(key, j + 1)
    return ((a >> 5) * 2 ** 26 + (b >> 6)) / 2 ** 53


def spec(dist, seed, point, n):
    key = 0x6A09E667
    for v in (seed, *point):
        key = absorb(key, v)
    if dist == "uniform":
        return [uniform(key, 2 * i) for i in range(n)]
    if dist == "bernoulli":
        return [uniform(key, 2 * i) < 0.5 for i in range(n)]
    return [math.sqrt(-2 * math.log1p(-uniform(key, 4 * i))) * math.cos(2 * math.pi * uniform(key, 4 * i + 2))
            for i in range(n)]


@settings(max_examples=40)
@given(dist=st.sampled_from(["uniform", "normal", "bernoulli"]), seed=st.integers(-2 ** 40, 2 ** 40),
       point=st.lists(st.integers(0, 2 ** 34), max_size=3), n=st.integers(1, 6))
def test_numpy_matches_the_written_rule(dist, seed, point, n):
    got = random_draw(np, dist, seed, point, (n,))
    want = np.array(spec(dist, seed, point, n))
    if dist == "normal":
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dist", ["uniform", "normal", "bernoulli"])
def test_jitted_draw_with_a_traced_point_equals_numpy(dist):
    with jax.enable_x64(True):
        f = jax.jit(lambda i, t: random_draw(jnp, dist, 5, (i, t), (3, 4)))
        for i, t in [(0, 0), (2, 7), (1, 2 ** 33)]:
            got = np.asarray(f(i, t))
            want = random_draw(np, dist, 5, (i, t), (3, 4))
            if dist == "normal":
                np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
            else:
                np.testing.assert_array_equal(got, want)


def test_draws_look_uniform_and_normal_and_points_are_independent():
    u = random_draw(np, "uniform", 1, (0,), (200_000,))
    assert 0 <= u.min() and u.max() < 1
    counts = np.histogram(u, bins=20, range=(0, 1))[0]
    chi2 = ((counts - 10_000) ** 2 / 10_000).sum()
    assert chi2 < 60          # 19 degrees of freedom: p < 1e-5 above 50
    z = random_draw(np, "normal", 1, (0,), (200_000,))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(np.mean(np.abs(z) < 1.96) - 0.95) < 0.003
    # consecutive points (the RL pattern: one draw per step) are uncorrelated
    per_point = np.array([random_draw(np, "uniform", 3, (0, t), ()) for t in range(20_000)])
    assert abs(np.corrcoef(per_point[:-1], per_point[1:])[0, 1]) < 0.03
    assert not np.array_equal(random_draw(np, "uniform", 3, (1,), (8,)), random_draw(np, "uniform", 3, (1, 0), (8,)))
    assert not np.array_equal(random_draw(np, "uniform", 3, (1,), (8,)), random_draw(np, "uniform", 4, (1,), (8,)))
