"""Polynomial normal form used by the simplifier and the prover.

A *poly* is a ``dict`` mapping a monomial to a non-zero coefficient.  A
monomial is a tuple of *atoms* sorted by :meth:`Expr.sort_key`; the empty
tuple is the constant monomial.  Atoms are symbols and the non-polynomial
nodes (``min``, ``max``, ``//``, ``%``, ``select``).  Coefficients are ints
(``Fraction`` only inside the prover).  Polys are treated as immutable:
every function here returns a fresh dict and never mutates its inputs.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Union

from .expr import Add, Const, Expr, Max, Min, Mul, Neg, Sub, Symbol, sort_key

Monomial = tuple
Poly = dict
Number = Union[int, Fraction]

CONSTANT: Monomial = ()


def const_poly(value: Number) -> Poly:
    """The poly of a constant."""
    return {CONSTANT: value} if value else {}


def atom_poly(atom: Expr) -> Poly:
    """The poly ``1 * atom``."""
    return {(atom,): 1}


def add(p: Poly, q: Poly) -> Poly:
    """``p + q``."""
    result = dict(p)
    for mono, coef in q.items():
        value = result.get(mono, 0) + coef
        if value:
            result[mono] = value
        else:
            result.pop(mono, None)
    return result


def scale(p: Poly, factor: Number) -> Poly:
    """``factor * p``."""
    if not factor:
        return {}
    return {mono: coef * factor for mono, coef in p.items()}


def sub(p: Poly, q: Poly) -> Poly:
    """``p - q``."""
    return add(p, scale(q, -1))


def mul(p: Poly, q: Poly) -> Poly:
    """``p * q``."""
    result: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            mono = m1 + m2
            if m1 and m2:
                mono = tuple(sorted(mono, key=sort_key))
            value = result.get(mono, 0) + c1 * c2
            if value:
                result[mono] = value
            else:
                result.pop(mono, None)
    return result


def without(p: Poly, mono: Monomial) -> Poly:
    """``p`` with the monomial ``mono`` removed."""
    result = dict(p)
    result.pop(mono, None)
    return result


def constant_of(p: Poly) -> Number:
    """The constant term of ``p``."""
    return p.get(CONSTANT, 0)


def is_constant(p: Poly) -> bool:
    """True if ``p`` has no non-constant monomial."""
    return all(not mono for mono in p)


def mono_key(mono: Monomial) -> tuple:
    """Deterministic order of monomials."""
    return (len(mono), tuple(a.sort_key() for a in mono))


def minmax_monomials(p: Poly) -> list:
    """The monomials of ``p`` that contain a ``min``/``max`` atom."""
    return [m for m in p if any(isinstance(a, (Min, Max)) for a in m)]


_EXPAND_CACHE: dict = {}


def chain_poly(e: Expr, convert, cache: dict | None = None) -> Poly:
    """The poly of a ``+ -`` chain or a ``*`` chain, given ``convert`` for its operands.

    Equal to the recursive ``add``/``sub``/``mul`` of the operands' polys, but
    the chain's left operands are visited in a loop and a sum is accumulated
    in one dict, so a flat sum of ``n`` terms takes ``O(n)`` time and
    constant stack depth (not ``O(n**2)`` and ``n`` levels).  The walk stops
    at a left operand found in ``cache``.
    """
    product = type(e) is Mul
    spine = []
    while (type(e) is Mul) if product else (type(e) is Add or type(e) is Sub):
        if spine and cache is not None and e in cache:
            break
        spine.append(e)
        e = e.args[0]
    result = convert(e)
    if product:
        for node in reversed(spine):
            result = mul(result, convert(node.args[1]))
        return result
    result = dict(result)
    for node in reversed(spine):
        sign = 1 if type(node) is Add else -1
        for mono, coef in convert(node.args[1]).items():
            value = result.get(mono, 0) + coef * sign
            if value:
                result[mono] = value
            else:
                result.pop(mono, None)
    return result


def expr_to_poly(e: Expr) -> Poly:
    """Expand ``+ - *`` structurally; other nodes become atoms (no simplification)."""
    cached = _EXPAND_CACHE.get(e)
    if cached is not None:
        return cached
    kind = type(e)
    if kind is Const:
        result = const_poly(e.value)
    elif kind is Add or kind is Sub or kind is Mul:
        result = chain_poly(e, expr_to_poly, _EXPAND_CACHE)
    elif kind is Neg:
        result = scale(expr_to_poly(e.args[0]), -1)
    else:
        result = atom_poly(e)
    if len(_EXPAND_CACHE) > 100_000:
        _EXPAND_CACHE.clear()
    _EXPAND_CACHE[e] = result
    return result


def _product(mono: Monomial) -> Expr:
    result = mono[0]
    for atom in mono[1:]:
        result = Mul(result, atom)
    return result


def _term(mono: Monomial, magnitude: int) -> Expr:
    product = _product(mono)
    return product if magnitude == 1 else Mul(Const(magnitude), product)


def _show_minmax_constant(p: Poly) -> Poly:
    """Display form of ``min(args) + k``: ``min(args + k)`` if that has a constant-free argument.

    Canonical ``min``/``max`` atoms have their smallest (largest) constant
    pulled out, e.g. ``max(1, t)`` is ``max(0, t - 1) + 1``; it is shown as
    ``max(1, t)``.  Simplifying the shown form gives the same canonical poly.
    """
    monos = minmax_monomials(p)
    k = constant_of(p)
    if not k or len(monos) != 1 or len(monos[0]) != 1 or p[monos[0]] != 1:
        return p
    atom = monos[0][0]
    args = [add(expr_to_poly(a), const_poly(k)) for a in atom.args]
    if all(constant_of(a) for a in args):
        return p
    shown = type(atom)(*(poly_to_expr(a) for a in args))
    return add(without(without(p, monos[0]), CONSTANT), atom_poly(shown))


def poly_to_expr(p: Poly) -> Expr:
    """Build the canonical expression of an integer poly.

    Terms with positive coefficients come first, then negative ones, each
    group in :func:`mono_key` order; the constant comes last:
    ``T - t``, ``t + 1``, ``min(t, 2) + 1``, ``2 * t - i - 3``.
    """
    p = _show_minmax_constant(p)
    terms = [(m, c) for m, c in p.items() if m]
    for _, coef in p.items():
        if not isinstance(coef, int):
            raise TypeError(f"poly_to_expr needs integer coefficients, got {coef!r}")
    terms.sort(key=lambda mc: (mc[1] < 0, mono_key(mc[0])))
    constant = constant_of(p)
    if not terms:
        return Const(constant)
    mono, coef = terms[0]
    if coef > 0:
        result = _term(mono, coef)
    elif coef == -1:
        result = Neg(_product(mono))
    else:
        result = Mul(Const(coef), _product(mono))
    for mono, coef in terms[1:]:
        result = Add(result, _term(mono, coef)) if coef > 0 else Sub(result, _term(mono, -coef))
    if constant > 0:
        result = Add(result, Const(constant))
    elif constant < 0:
        result = Sub(result, Const(-constant))
    return result


def step_bound(step: Symbol) -> Symbol:
    """The bound symbol paired with a step symbol."""
    return Symbol(step.partner, "bound", step.name)


def split_floor(p: Poly, divisor: int) -> tuple[Poly, Poly]:
    """``p = divisor * quotient + remainder`` with integer-coefficient polys.

    The remainder's constant is in ``[0, divisor)``; its other coefficients
    keep the sign of the original ones and have magnitude below ``divisor``
    (so ``-t`` stays ``-t`` rather than becoming ``(divisor - 1) * t``).
    """
    quotient: Poly = {}
    remainder: Poly = {}
    for mono, coef in p.items():
        q, r = divmod(coef, divisor)
        if mono and coef < 0 and r:
            q, r = q + 1, r - divisor
        if q:
            quotient[mono] = q
        if r:
            remainder[mono] = r
    return quotient, remainder

