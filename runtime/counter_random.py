"""The counter-based generator behind `rt.random` (docs/semantics.md, "Random draws").

A draw is a pure function of (seed, point, element index): no state, so
NumPy on the host and XLA on the device (inside a jitted kernel or a traced
loop, with the point a traced integer) compute the same bits, and a draw at
one point does not depend on which other points ran. All integer arithmetic
is on uint32 (multiplication wraps), which NumPy and jax.numpy share:

    mix(x)    = x ^= x >> 16; x *= 0x21F0AAAD; x ^= x >> 15; x *= 0x735A2D97; x ^= x >> 15
    absorb(k, v) = mix((mix(k ^ lo32(v)) + 0x9E3779B9) ^ hi32(v))      (v: a 64-bit integer)
    key       = absorb(... absorb(absorb(0x6A09E667, seed), p[0]) ..., p[n-1])
    word(j)   = mix(mix(key ^ j) + mix(key ^ 0x9E3779B9))               (j: uint32 counter)

A float64 uniform in [0, 1) from two words a = word(2i), b = word(2i + 1):
`((a >> 5) * 2**26 + (b >> 6)) / 2**53` (53 random bits, like NumPy's doubles).
Element i (row-major) of a draw of `shape`:

* uniform: the uniform from words 2i, 2i + 1;
* normal: Box-Muller, `sqrt(-2 log(1 - u1)) * cos(2 pi u2)` with u1 from words
  4i, 4i + 1 and u2 from 4i + 2, 4i + 3 (float64);
* bernoulli: `uniform < 0.5` (words 2i, 2i + 1).

The result is computed in float64 and then cast to the op's element type.
Uniform and bernoulli bits are identical on every backend; normal draws go
through `log`/`cos`, whose float64 results may differ in the last bit between
NumPy and XLA.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["random_draw", "DISTS"]

DISTS = ("uniform", "normal", "bernoulli")
_GOLDEN = 0x9E3779B9
_START = 0x6A09E667


def _u32(xp, value):
    return xp.asarray(value, dtype=xp.uint32)


def _mix(xp, x):
    x = x ^ (x >> 16)
    x = x * _u32(xp, 0x21F0AAAD)
    x = x ^ (x >> 15)
    x = x * _u32(xp, 0x735A2D97)
    return x ^ (x >> 15)


def _halves(xp, v):
    """(low, high) 32 bits of a 64-bit integer: a Python int or an integer array scalar."""
    if isinstance(v, (int, np.integer)):
        v = int(v) & 0xFFFFFFFFFFFFFFFF
        return _u32(xp, v & 0xFFFFFFFF), _u32(xp, v >> 32)
    v = xp.asarray(v).astype(xp.int64)
    return (v & 0xFFFFFFFF).astype(xp.uint32), ((v >> 32) & 0xFFFFFFFF).astype(xp.uint32)


def _absorb(xp, k, v):
    lo, hi = _halves(xp, v)
    return _mix(xp, (_mix(xp, k ^ lo) + _u32(xp, _GOLDEN)) ^ hi)


def _key(xp, seed: int, point: Sequence):
    k = _u32(xp, _START)
    for v in (seed, *point):
        k = _absorb(xp, k, v)
    return k


def _uniform(xp, key, first, count: int, stride: int):
    """Uniforms i = 0..count-1 from words first + stride*i and first + stride*i + 1."""
    j = xp.arange(count, dtype=xp.uint32) * _u32(xp, stride) + _u32(xp, first)
    k2 = _mix(xp, key ^ _u32(xp, _GOLDEN))
    a = _mix(xp, _mix(xp, key ^ j) + k2)
    b = _mix(xp, _mix(xp, key ^ (j + _u32(xp, 1))) + k2)
    hi = (a >> 5).astype(xp.float64)
    lo = (b >> 6).astype(xp.float64)
    return (hi * 67108864.0 + lo) * (1.0 / 9007199254740992.0)


def random_draw(xp, dist: str, seed: int, point: Sequence, shape: Sequence[int]):
    """The float64 (bool for bernoulli) draw of `rt.random dist seed` at `point`."""
    shape = tuple(int(s) for s in shape)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count >= 1 << 30:
        raise ValueError(f"a random draw of {count} elements is too large (at most 2**30)")
    with np.errstate(over="ignore"):
        key = _key(xp, seed, point)
        if dist == "uniform":
            value = _uniform(xp, key, 0, count, 2)
        elif dist == "bernoulli":
            value = _uniform(xp, key, 0, count, 2) < 0.5
        elif dist == "normal":
            u1 = _uniform(xp, key, 0, count, 4)
            u2 = _uniform(xp, key, 2, count, 4)
            value = xp.sqrt(-2.0 * xp.log1p(-u1)) * xp.cos(2.0 * np.pi * u2)
        else:
            raise ValueError(f"unknown random distribution '{dist}'")
    return value.reshape(shape)
