"""A small, sound prover for ``poly >= 0`` under the dimension facts.

Facts: every step symbol ``t`` satisfies ``0 <= t <= T - 1`` for its bound
``T``; every bound satisfies ``T >= 1``; parameters are unconstrained.

The prover answers ``True`` only when the inequality holds at *every* valid
point; ``False`` means "not proven" (it may still hold).  It case-splits on
``min``/``max``/``select`` atoms, replaces ``%`` and ``//`` atoms by their
bounds, and minimizes the remaining polynomial over the box of facts, which
is exact for linear polynomials in steps and bounds.
"""

from __future__ import annotations

from fractions import Fraction

from .expr import FloorDiv, Max, Min, Mod, Symbol
from .logic import Select
from .poly import Poly, add, const_poly, expr_to_poly, mono_key, scale, step_bound, without

#: Maximum number of case splits per query (beyond it the answer is "not proven").
SPLIT_BUDGET = 256


def prove_nonneg(p: Poly) -> bool:
    """True if ``p >= 0`` holds at every valid point (sound, incomplete)."""
    return _prove(p, [SPLIT_BUDGET])


def prove_le(p: Poly, q: Poly) -> bool:
    """True if ``p <= q`` holds at every valid point."""
    return prove_nonneg(add(q, scale(p, -1)))


def _prove(p: Poly, budget: list) -> bool:
    budget[0] -= 1
    if budget[0] < 0:
        return False
    # Split conjunctive cases (every branch must hold) before disjunctive
    # ones: "for all a, some b" is stronger than "some b, for all a".  The
    # order is canonical, so equal polys get equal answers.
    splittable = sorted(
        (m for m in p if len(m) == 1 and isinstance(m[0], (Min, Max, Select))), key=mono_key
    )
    if splittable:
        conjunctive = [m for m in splittable if _needs_all(m[0], p[m])]
        mono = (conjunctive or splittable)[0]
        return _split(p, mono, p[mono], budget)
    divisions = sorted((m for m in p if len(m) == 1 and isinstance(m[0], (Mod, FloorDiv))), key=mono_key)
    if divisions:
        return _bound_division(p, divisions[0], p[divisions[0]], budget)
    return _minimize_over_box(p)


def _needs_all(atom, coef) -> bool:
    # coef * min(args) with coef > 0 is min(coef * args): every branch must hold.
    return isinstance(atom, Select) or isinstance(atom, Min) == (coef > 0)


def _split(p: Poly, mono: tuple, coef, budget: list) -> bool:
    atom = mono[0]
    rest = without(p, mono)
    branches = atom.args[1:] if isinstance(atom, Select) else atom.args
    need_all = _needs_all(atom, coef)
    results = (_prove(add(rest, scale(expr_to_poly(b), coef)), budget) for b in branches)
    return all(results) if need_all else any(results)


def _bound_division(p: Poly, mono: tuple, coef, budget: list) -> bool:
    atom = mono[0]
    rest = without(p, mono)
    x = expr_to_poly(atom.args[0])
    d = atom.divisor
    if isinstance(atom, Mod):
        if coef > 0:  # x % d >= 0
            return _prove(rest, budget)
        # x % d <= d - 1, and x % d <= x whenever x >= 0
        if _prove(add(rest, const_poly(coef * (d - 1))), budget):
            return True
        return _prove(x, budget) and _prove(add(rest, scale(x, coef)), budget)
    if coef > 0:  # x // d >= (x - d + 1) / d, and x // d >= 0 whenever x >= 0
        bound = scale(add(x, const_poly(-(d - 1))), Fraction(1, d))
        if _prove(add(rest, scale(bound, coef)), budget):
            return True
        return _prove(x, budget) and _prove(rest, budget)
    # x // d <= x / d
    return _prove(add(rest, scale(scale(x, Fraction(1, d)), coef)), budget)


def _minimize_over_box(p: Poly) -> bool:
    linear: dict = {}
    constant = 0
    for mono, coef in p.items():
        if not mono:
            constant += coef
        elif not all(isinstance(a, Symbol) for a in mono):
            return False
        elif len(mono) == 1:
            linear[mono[0]] = linear.get(mono[0], 0) + coef
        elif coef > 0 and all(a.role != "param" for a in mono):
            continue  # a product of non-negative symbols is >= 0
        else:
            return False
    bounds: dict = {}
    for symbol, coef in linear.items():
        if symbol.role == "param":
            if coef:
                return False
        elif symbol.role == "bound":
            bounds[symbol] = bounds.get(symbol, 0) + coef
        elif coef < 0:  # minimum at t = T - 1
            bound = step_bound(symbol)
            bounds[bound] = bounds.get(bound, 0) + coef
            constant -= coef
        # coef > 0: minimum at t = 0
    for coef in bounds.values():
        if coef < 0:
            return False
        constant += coef  # minimum at T = 1
    # The value is an integer, so a real lower bound above -1 proves >= 0.
    return constant > -1
