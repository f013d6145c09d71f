"""Simplification to a canonical form.

Integer expressions become polynomials over atoms (see :mod:`.poly`) and are
rebuilt deterministically: like terms combined, constants folded, positive
terms first, constant last (``t + 1``, ``T - t``).  ``min``/``max`` are
flattened, arguments provably dominated under the dimension facts
(``0 <= t < T``, ``T >= 1``) are dropped, and a sum with a single
``min``/``max`` is normalized by moving the other terms inside and pulling the
common part back out (``t + 1 - max(0, t - 2)`` -> ``min(t, 2) + 1``).
``//`` and ``%`` by constants pull out multiples of the divisor, nest, and
vanish when the facts bound the dividend.  Conditions are handled by
:mod:`.conditions`.

The result is equivalent to the input at every valid point, and
``simplify(simplify(e))`` is ``simplify(e)``.
"""

from __future__ import annotations


from .expr import BOOL, INT, SEQ, SLICE, Add, Const, Expr, FloorDiv, Max, Min, Mod, Mul, Neg, Sub, Symbol, sort_key
from .indexing import IndexSeq, Slice
from .logic import FALSE, TRUE, BoolConst, Select
from .poly import (
    Poly, add, atom_poly, chain_poly, const_poly, constant_of, is_constant, minmax_monomials,
    poly_to_expr, scale, split_floor, sub, without,
)
from .prover import prove_nonneg

_CACHE_LIMIT = 200_000
_int_cache: dict = {}


def remember(cache: dict, key, value) -> None:
    """Stores `value` under `key` in a memo `cache`, emptied when it grows past the limit."""
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    cache[key] = value


def simplify(e: Expr) -> Expr:
    """Return the canonical simplified form of ``e`` (any kind)."""
    if e.kind == INT:
        return poly_to_expr(int_poly(e))
    if e.kind == BOOL:
        return _conditions.simplify_bool(e)
    if e.kind == SLICE:
        return Slice(simplify(e.start), simplify(e.stop), e.step, validate=False)
    if e.kind == SEQ:
        return IndexSeq([simplify(c) for c in e.args], validate=False)
    raise TypeError(f"cannot simplify {e!r}")


def int_poly(e: Expr) -> Poly:
    """The canonical poly of an integer expression (cached; do not mutate)."""
    cached = _int_cache.get(e)
    if cached is None:
        cached = _int_poly_uncached(e)
        remember(_int_cache, e, cached)
    return cached


def _int_poly_uncached(e: Expr) -> Poly:
    kind = type(e)
    if kind is Const:
        return const_poly(e.value)
    if kind is Symbol:
        return atom_poly(e)
    if kind is Add or kind is Sub or kind is Neg or kind is Mul:
        # Normalize the whole arithmetic tree at once, so the result does not
        # depend on how the sum was parenthesized.
        return normalize_sum(_expand(e))
    if kind is FloorDiv:
        return _floordiv_poly(int_poly(e.args[0]), e.divisor)
    if kind is Mod:
        return _mod_poly(int_poly(e.args[0]), e.divisor)
    if kind is Min or kind is Max:
        return _minmax_poly(kind, [int_poly(a) for a in e.args])
    if kind is Select:
        return _select_poly(e)
    raise TypeError(f"cannot simplify integer expression {e!r}")


def _expand(e: Expr) -> Poly:
    kind = type(e)
    if kind is Add or kind is Sub or kind is Mul:
        return chain_poly(e, _expand)  # linear in the length of flat sums
    if kind is Neg:
        return scale(_expand(e.args[0]), -1)
    return int_poly(e)


def nonneg(p: Poly) -> bool:
    """True if the poly is provably ``>= 0`` at every valid point."""
    return prove_nonneg(p)


# -- sums with a single min/max ----------------------------------------------------
def normalize_sum(p: Poly) -> Poly:
    """Move the other terms of a sum into its only ``min``/``max`` atom, then pull out.

    ``c * min(a, b) + r`` becomes ``min(c*a + r, c*b + r)`` (``max`` if
    ``c < 0``), which is then re-normalized by :func:`_minmax_poly`.
    """
    p = _fold_modulo(p)
    monos = minmax_monomials(p)
    if len(monos) != 1 or len(monos[0]) != 1:
        return p
    mono = monos[0]
    coef = p[mono]
    rest = without(p, mono)
    if coef == 1 and not rest:
        return p
    atom = mono[0]
    kind = type(atom) if coef > 0 else (Max if type(atom) is Min else Min)
    return _minmax_poly(kind, [add(scale(int_poly(a), coef), rest) for a in atom.args])


def _fold_modulo(p: Poly) -> Poly:
    """Rewrite ``k*x - k*d*(x // d)`` as ``k*(x % d)``."""
    for mono, coef in p.items():
        if len(mono) != 1 or type(mono[0]) is not FloorDiv or coef % mono[0].divisor:
            continue
        atom = mono[0]
        factor = -coef // atom.divisor
        x = int_poly(atom.args[0])
        if all(m and p.get(m) == factor * c for m, c in x.items() if m):
            folded = add(sub(p, scale(x, factor)), scale(atom_poly(atom), -coef))
            return _fold_modulo(add(folded, scale(_mod_poly(x, atom.divisor), factor)))
    return p


def _flattenable(kind: type, p: Poly) -> Expr | None:
    monos = minmax_monomials(p)
    if len(monos) == 1 and len(monos[0]) == 1 and type(monos[0][0]) is kind and p[monos[0]] == 1:
        return monos[0][0]
    return None


def _minmax_poly(kind: type, arg_polys: list) -> Poly:
    is_min = kind is Min
    # 1. normalize and flatten nested min-in-min / max-in-max
    work = list(arg_polys)
    args: list = []
    while work:
        p = normalize_sum(work.pop())
        inner = _flattenable(kind, p)
        if inner is not None:
            rest = without(p, (inner,))
            work.extend(add(int_poly(a), rest) for a in inner.args)
        else:
            args.append(p)
    # 2. fold constants, dedupe structurally
    constants = [constant_of(p) for p in args if is_constant(p)]
    unique: dict = {}
    if constants:
        folded = min(constants) if is_min else max(constants)
        unique[Const(folded)] = const_poly(folded)
    for p in args:
        if not is_constant(p):
            unique.setdefault(poly_to_expr(p), p)
    items = list(unique.items())
    # 3. drop arguments dominated by another one
    kept = []
    for j, (ej, pj) in enumerate(items):
        dominated = False
        for i, (ei, pi) in enumerate(items):
            if i == j:
                continue
            gap = sub(pj, pi) if is_min else sub(pi, pj)  # >= 0 means ei makes ej redundant
            if nonneg(gap) and (ei.sort_key() < ej.sort_key() or not nonneg(scale(gap, -1))):
                dominated = True
                break
        if not dominated:
            kept.append(pj)
    if len(kept) == 1:
        return kept[0]
    # 4. pull out the common part: the non-min/max monomials that every
    #    argument has with the same coefficient, and the smallest (min) or
    #    largest (max) constant.  Both choices commute with adding a constant
    #    or a term to every argument, which keeps normalization idempotent.
    #    (poly_to_expr may show a constant back inside: ``max(1, t)``.)
    common: Poly = {}
    first = kept[0]
    for mono, coef in first.items():
        if mono and not any(isinstance(a, (Min, Max)) for a in mono):
            if all(p.get(mono) == coef for p in kept[1:]):
                common[mono] = coef
    constants = [constant_of(p) for p in kept]
    shift = min(constants) if is_min else max(constants)
    if shift:
        common[()] = shift
    # Argument order: max ascending, min descending (``max(0, t - 3)``, ``min(t + 3, T)``).
    exprs = sorted((poly_to_expr(sub(p, common)) for p in kept), key=sort_key, reverse=is_min)
    return add(common, atom_poly(kind(*exprs)))


# -- floor division and modulo ---------------------------------------------------------
def _single_atom_plus_constant(p: Poly, kind: type) -> Expr | None:
    monos = [m for m in p if m]
    if len(monos) == 1 and len(monos[0]) == 1 and type(monos[0][0]) is kind and p[monos[0]] == 1:
        return monos[0][0]
    return None


def _within(p: Poly, divisor: int) -> bool:
    """True if ``0 <= p <= divisor - 1`` at every valid point."""
    return nonneg(p) and nonneg(sub(const_poly(divisor - 1), p))


def _reduced_split(p: Poly, d: int) -> tuple[Poly, Poly]:
    """``p == d * quotient + remainder``, the remainder reduced and normalized.

    Normalizing the remainder may move terms in or out of a ``min``/``max``,
    so reduce again until both properties hold.
    """
    quotient: Poly = {}
    for _ in range(8):
        extra, remainder = split_floor(p, d)
        quotient = add(quotient, extra)
        normalized = normalize_sum(remainder)
        if normalized == remainder:
            break
        p = normalized
    return quotient, remainder


def _floordiv_poly(p: Poly, d: int) -> Poly:
    if d == 1:
        return p
    quotient, remainder = _reduced_split(p, d)
    if is_constant(remainder):  # remainder constant is in [0, d)
        return normalize_sum(quotient)
    inner = _single_atom_plus_constant(remainder, FloorDiv)
    if inner is not None:  # (x // d1 + k) // d == (x + k * d1) // (d1 * d)
        shifted = add(int_poly(inner.args[0]), const_poly(constant_of(remainder) * inner.divisor))
        return normalize_sum(add(quotient, _floordiv_poly(shifted, inner.divisor * d)))
    if _within(remainder, d):
        return normalize_sum(quotient)
    return normalize_sum(add(quotient, atom_poly(FloorDiv(poly_to_expr(remainder), d))))


def _mod_poly(p: Poly, d: int) -> Poly:
    if d == 1:
        return {}
    _, remainder = _reduced_split(p, d)
    if is_constant(remainder):
        return remainder
    inner = _single_atom_plus_constant(remainder, Mod)
    if inner is not None and inner.divisor % d == 0:  # (x % (k*d) + c) % d == (x + c) % d
        return _mod_poly(add(int_poly(inner.args[0]), const_poly(constant_of(remainder))), d)
    if _within(remainder, d):
        return remainder
    return atom_poly(Mod(poly_to_expr(remainder), d))


# -- select ---------------------------------------------------------------------------
def _select_poly(e: Expr) -> Poly:
    cond = _conditions.simplify_bool(e.args[0])
    if cond is TRUE:
        return int_poly(e.args[1])
    if cond is FALSE:
        return int_poly(e.args[2])
    if_true, if_false = int_poly(e.args[1]), int_poly(e.args[2])
    if if_true == if_false:
        return if_true
    cond, flipped = _conditions.orientation(cond)
    if flipped:
        if_true, if_false = if_false, if_true
    if isinstance(cond, BoolConst):  # the prover decided the negation
        return if_true if cond.value else if_false
    return atom_poly(Select(cond, poly_to_expr(if_true), poly_to_expr(if_false)))


# Boolean canonicalization lives in .conditions, which imports this module;
# it is bound late so either module can be imported first.
from . import conditions as _conditions  # noqa: E402
