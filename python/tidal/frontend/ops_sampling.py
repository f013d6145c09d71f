"""Sampling from discrete distributions: categorical and multinomial.

Both are built on `rt.random uniform` and invert the cumulative distribution
with ops every backend computes alike (docs/semantics.md, "Sampling"):

    c   = cumsum(p) / (its last element)       along the categories, in float64
    u   ~ td.rand(..., dtype=float64, seed=s)  at point q: random_draw(np, 'uniform', s, q, shape)
    idx = min(n - 1, #{j : c[j] <= u})         so P(idx = i) = c[i] - c[i - 1] = p[i] / sum(p)

A category of probability 0 is never drawn (c[i] = c[i - 1] <= u < c[i] is
impossible), and c[n - 1] = 1 > u exactly, so the count is already < n for
finite, positive totals (the `min` only bounds what NaN or a zero total give).
The draws depend on the seed and the point only, so every backend draws the
same indices (up to the last-bit rounding of exp/cumsum in float64 on XLA
with x64, which moves a draw only when u falls within ~1e-16 of a boundary).
"""
from __future__ import annotations

import numbers
from typing import Any

from tidal.symbolic import simplify

from . import dtypes as dt
from .creation import random
from .errors import TidalError
from .graph import lift, resolve_program
from .ops_elementwise import astype, binary, exp, minimum
from .ops_reduce import amax, cumsum, reduce
from .shapes import norm_dim, static
from .tensor import RecurrentTensor

__all__ = ["categorical", "multinomial"]

_F64 = dt.as_dtype("float64")


def _cdf(p: RecurrentTensor, d: int) -> RecurrentTensor:
    """cumsum(p) / (its last element) along d, keeping d."""
    from .ops_shape import slice as spatial_slice

    c = cumsum(p, d)
    n = p.shape[d]
    return binary("div", c, spatial_slice(c, d, simplify(n - 1), n))


def _count_below(c: RecurrentTensor, u: RecurrentTensor, d: int, n: Any) -> RecurrentTensor:
    """min(n - 1, #{j : c[j] <= u}) along d (c and u broadcast against each other)."""
    count = reduce("sum", binary("le", c, u), d)
    v = static(n)
    return minimum(count, v - 1 if v is not None else simplify(n - 1))


def _check_categories(x: RecurrentTensor, d: int, what: str) -> Any:
    n = x.shape[d]
    if static(n) == 0:
        raise TidalError(f"{what} over an empty dimension (dim {d} has size 0)",
                         "there must be at least one category")
    return n


def _seed(seed: Any, what: str) -> Any:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or seed < 0):
        raise TidalError(f"{what}: seed must be a non-negative int or None, got {seed!r}",
                         "e.g. seed=0 (None picks the program's next seed)")
    return seed


def categorical(logits: Any, dim: int = -1, seed: int | None = None, domain: Any = ()) -> RecurrentTensor:
    """One sample (int64) from the categorical distribution softmax(logits) along `dim`.

    The result has the shape of `logits` without `dim`. Draws are fresh at
    every point of the domain (the logits' domain plus `domain`): a decoder
    sampling `tok[t + 1] = td.categorical(logits_at_t)` gets a new draw at each
    t. Rule (docs/semantics.md): with `p = exp(logits - max)` and
    `c = cumsum(p) / c[-1]` in float64, `u = random_draw(np, 'uniform', seed, point, shape)`
    (the same numbers as `td.rand(*shape, dtype="float64", seed=seed)`), the
    sample is `#{j : c[j] <= u}`. `seed=None` takes the program's next seed
    (as `td.rand`). A `-inf` logit is never drawn. Not differentiable::

        tok = td.categorical(logits[t] / temperature, seed=0)    # (batch,) int64, per t
    """
    program = resolve_program([logits], "categorical")
    x = lift(logits, program)
    if x.ndim == 0:
        raise TidalError("categorical needs logits of rank >= 1, got a scalar",
                         "the categories lie along `dim`")
    if x.dtype.kind not in "iub" and not dt.is_float(x.dtype):
        raise TidalError(f"categorical needs numeric logits, got {x.dtype}", "pass float logits")
    d = norm_dim(dim, x.ndim, "categorical dim")
    n = _check_categories(x, d, "categorical")
    _seed(seed, "categorical")
    x = astype(x, _F64)
    p = exp(binary("sub", x, amax(x, d, keepdim=True)))
    batch = x.shape[:d] + x.shape[d + 1:]
    dom = program.canonical_domain(set(x.domain) | set(program.as_domain(domain, "categorical domain")))
    u = random("uniform", batch, _F64, dom, seed, program, "td.categorical")
    from .ops_shape import unsqueeze

    return _count_below(_cdf(p, d), unsqueeze(u, d), d, n)


def multinomial(probs: Any, num_samples: int = 1, replacement: bool = True, seed: int | None = None,
                domain: Any = ()) -> RecurrentTensor:
    """`num_samples` draws with replacement (int64) from the categories along the last dim
    of `probs`, each with probability `probs[..., i] / probs.sum(-1)`, as
    `torch.multinomial(probs, num_samples, replacement=True)`.

    The result has shape `probs.shape[:-1] + (num_samples,)`. `probs` must be
    non-negative with a positive finite sum (not checked; otherwise the
    indices are unspecified but in range). Fresh draws at every point of the
    domain (the probabilities' domain plus `domain`). Rule: with
    `c = cumsum(probs) / c[-1]` in float64 and
    `u = random_draw(np, 'uniform', seed, point, probs.shape[:-1] + (num_samples,))`,
    sample k is `#{j : c[j] <= u[..., k]}`. Without replacement only
    `num_samples=1` is supported (the same draw)::

        idx = td.multinomial(weights, 4, seed=1)     # 4 indices drawn with replacement
    """
    program = resolve_program([probs], "multinomial")
    x = lift(probs, program)
    if x.ndim == 0:
        raise TidalError("multinomial needs probabilities of rank >= 1, got a scalar",
                         "the categories lie along the last dim")
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral) or num_samples < 1:
        raise TidalError(f"multinomial: num_samples must be a positive int, got {num_samples!r}",
                         "e.g. td.multinomial(p, 4)")
    if not replacement and num_samples != 1:
        raise TidalError("multinomial without replacement is not supported for num_samples > 1",
                         "use replacement=True (the default), or draw one sample")
    if x.dtype.kind not in "iub" and not dt.is_float(x.dtype):
        raise TidalError(f"multinomial needs numeric probabilities, got {x.dtype}", "pass floats")
    d = x.ndim - 1
    n = _check_categories(x, d, "multinomial")
    _seed(seed, "multinomial")
    c = _cdf(astype(x, _F64), d)
    dom = program.canonical_domain(set(x.domain) | set(program.as_domain(domain, "multinomial domain")))
    u = random("uniform", x.shape[:-1] + (int(num_samples),), _F64, dom, seed, program, "td.multinomial")
    from .ops_shape import unsqueeze

    # c[..., None, :] <= u[..., :, None], counted over the categories (the last dim)
    return _count_below(unsqueeze(c, d), unsqueeze(u, -1), d + 1, n)
