"""Canonical forms of conditions (the boolean half of the simplifier).

Conditions are put in negation normal form (no ``not``); comparisons are
decided by the dimension facts when possible, comparisons against a single
``min``/``max`` are split (``i < min(t, 3)`` -> ``i < 3 & i < t``), and
``and``/``or`` drop constants, duplicates, implied and redundant arguments
and detect contradictions and tautologies between comparisons.
"""

from __future__ import annotations

from math import gcd

from .expr import Const, Expr, Min, sort_key
from .logic import FALSE, NEGATED, SWAPPED, TRUE, And, BoolConst, Compare, Not, Or, Select
from .poly import Poly, add, const_poly, constant_of, is_constant, minmax_monomials, poly_to_expr, scale, sub, without
from .simplifier import int_poly, nonneg, normalize_sum, remember

_bool_cache: dict = {}
_negate_cache: dict = {}
_implies_cache: dict = {}


def orientation(cond: Expr) -> tuple[Expr, bool]:
    """The representative of ``{cond, not cond}`` used as a select condition.

    Returns ``(representative, flipped)``: ``flipped`` means the
    representative is equivalent to ``not cond``.  Negation is iterated until
    it cycles, so that ``cond`` and ``negate(cond)`` give the same answer; the
    representative may be a :class:`BoolConst` when the prover decides it.
    """
    seen = [cond]  # seen[k] is equivalent to cond for even k, to not cond for odd k
    for _ in range(8):
        current = negate(seen[-1])
        seen.append(current)
        if isinstance(current, BoolConst):
            return current, (len(seen) - 1) % 2 == 1
        if len(seen) >= 3 and current is seen[-3]:
            break
    candidates = [(seen[-1].sort_key(), len(seen) - 1), (seen[-2].sort_key(), len(seen) - 2)]
    _, position = min(candidates)
    return seen[position], position % 2 == 1


def simplify_bool(e: Expr) -> Expr:
    """Canonical form of a boolean expression (negation normal form)."""
    cached = _bool_cache.get(e)
    if cached is None:
        cached = _simplify_bool_uncached(e)
        remember(_bool_cache, e, cached)
    return cached


def _simplify_bool_uncached(e: Expr) -> Expr:
    kind = type(e)
    if kind is BoolConst:
        return e
    if kind is Compare:
        return _compare(e.op, int_poly(e.args[0]), int_poly(e.args[1]))
    if kind is Not:
        return negate(simplify_bool(e.args[0]))
    if kind is And or kind is Or:
        return _connective(kind, [simplify_bool(a) for a in e.args])
    if kind is Select:
        cond, if_true, if_false = e.args
        return simplify_bool(Or(And(cond, if_true), And(Not(cond), if_false)))
    raise TypeError(f"cannot simplify boolean expression {e!r}")


def negate(b: Expr) -> Expr:
    """The canonical negation of a canonical boolean expression."""
    cached = _negate_cache.get(b)
    if cached is None:
        cached = _negate_uncached(b)
        remember(_negate_cache, b, cached)
    return cached


def _negate_uncached(b: Expr) -> Expr:
    if b is TRUE:
        return FALSE
    if b is FALSE:
        return TRUE
    if type(b) is Compare:
        return _compare(NEGATED[b.op], int_poly(b.args[0]), int_poly(b.args[1]))
    if type(b) is And:
        return _connective(Or, [negate(a) for a in b.args])
    if type(b) is Or:
        return _connective(And, [negate(a) for a in b.args])
    return simplify_bool(Not(b))


_CMP = {
    "lt": lambda v: v < 0, "le": lambda v: v <= 0, "eq": lambda v: v == 0,
    "ne": lambda v: v != 0, "ge": lambda v: v >= 0, "gt": lambda v: v > 0,
}


def _ge_forms(op: str, d: Poly) -> list:
    """Polys ``g`` with ``(d op 0)  <=>  all(g >= 0)``; empty for ``ne``."""
    minus_d = scale(d, -1)
    return {
        "ge": [d], "gt": [add(d, const_poly(-1))], "le": [minus_d],
        "lt": [add(minus_d, const_poly(-1))], "eq": [d, minus_d], "ne": [],
    }[op]


def _decide(op: str, d: Poly) -> BoolConst | None:
    if op == "ne":
        decided = _decide("eq", d)
        return None if decided is None else negate(decided)
    forms = _ge_forms(op, d)
    if all(nonneg(g) for g in forms):
        return TRUE
    if any(nonneg(add(scale(g, -1), const_poly(-1))) for g in forms):
        return FALSE
    return None


def _compare(op: str, lhs: Poly, rhs: Poly) -> Expr:
    raw = sub(lhs, rhs)
    if is_constant(raw):
        return TRUE if _CMP[op](constant_of(raw)) else FALSE
    normalized = normalize_sum(raw)
    decided = _decide(op, normalized)
    if decided is not None:
        return decided
    expanded = _expand_minmax_comparison(op, normalized)
    if expanded is not None:
        return expanded
    raw = normalized
    if op in ("eq", "ne"):
        divisor = 0
        for mono, coef in raw.items():
            if mono:
                divisor = gcd(divisor, coef)
        if constant_of(raw) % divisor:
            return FALSE if op == "eq" else TRUE
        raw = normalize_sum({m: c // divisor for m, c in raw.items()})
    if minmax_monomials(raw):
        # Splitting a sum with min/max into two sides could change how each
        # side normalizes; keep it on the left: ``min(T, i) - t - min(t, i) < 0``.
        return Compare(op, poly_to_expr(without(raw, ())), Const(-constant_of(raw)))
    positive = {m: c for m, c in raw.items() if m and c > 0}
    negative = {m: -c for m, c in raw.items() if m and c < 0}
    constant = constant_of(raw)
    if not positive:
        positive, negative, constant, op = negative, positive, -constant, SWAPPED[op]
    return Compare(op, poly_to_expr(positive), poly_to_expr(add(negative, const_poly(-constant))))


def _expand_minmax_comparison(op: str, d: Poly) -> Expr | None:
    """``min(a, b) + r < 0`` -> ``a + r < 0 or b + r < 0`` (and the other cases)."""
    monos = minmax_monomials(d)
    if op in ("eq", "ne") or len(monos) != 1 or len(monos[0]) != 1:
        return None
    mono = monos[0]
    coef, atom, rest = d[mono], mono[0], without(d, mono)
    # coef * min(args) is min(coef * args) for coef > 0 and max(coef * args) otherwise
    is_min = isinstance(atom, Min) == (coef > 0)
    below = op in ("lt", "le")
    kind = Or if is_min == below else And
    return _connective(kind, [_compare(op, add(scale(int_poly(a), coef), rest), {}) for a in atom.args])


def _comparison_forms(b: Expr) -> list | None:
    if type(b) is not Compare:
        return None
    return _ge_forms(b.op, sub(int_poly(b.args[0]), int_poly(b.args[1])))


def _implies(a: Expr, b: Expr) -> bool:
    """Sound (incomplete) check that canonical condition ``a`` implies ``b``.

    Also tries the contrapositive, so that the answer does not depend on
    which of a condition and its negation the caller holds.
    """
    key = (a, b)
    cached = _implies_cache.get(key)
    if cached is None:
        cached = _implies_directly(a, b) or _implies_directly(negate(b), negate(a))
        remember(_implies_cache, key, cached)
    return cached


def _implies_directly(a: Expr, b: Expr) -> bool:
    if type(b) is Or and any(m is a for m in b.args):
        return True
    if type(a) is And and any(m is b for m in a.args):
        return True
    forms_a, forms_b = _comparison_forms(a), _comparison_forms(b)
    if not forms_a or not forms_b:
        return False
    return all(any(nonneg(sub(fb, fa)) for fa in forms_a) for fb in forms_b)


def _contradict(a: Expr, b: Expr) -> bool:
    forms_a, forms_b = _comparison_forms(a), _comparison_forms(b)
    if not forms_a or not forms_b:
        return False
    return any(nonneg(add(scale(add(fa, fb), -1), const_poly(-1))) for fa in forms_a for fb in forms_b)


def _exhaustive(a: Expr, b: Expr) -> bool:
    """``a or b`` always holds, i.e. ``not a and not b`` is contradictory."""
    return _contradict(negate(a), negate(b))


def _connective(kind: type, args: list) -> Expr:
    is_and = kind is And
    absorbing, identity = (FALSE, TRUE) if is_and else (TRUE, FALSE)
    unique: dict = {}
    for a in args:
        for item in (a.args if type(a) is kind else (a,)):
            if item is absorbing:
                return absorbing
            if item is not identity:
                unique[item] = True
    items = list(unique)
    for a in items:
        if negate(a) in unique:
            return absorbing
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            if (_contradict(a, b) if is_and else _exhaustive(a, b)):
                return absorbing
    kept = []
    for j, b in enumerate(items):
        redundant = False
        for i, a in enumerate(items):
            if i == j:
                continue
            # and: drop b if some a implies it; or: drop b if it implies some a
            stronger, weaker = (a, b) if is_and else (b, a)
            if _implies(stronger, weaker):
                if not _implies(weaker, stronger) or a.sort_key() < b.sort_key():
                    redundant = True
                    break
        if not redundant:
            kept.append(b)
    kept.sort(key=sort_key)
    if not kept:
        return identity
    return kept[0] if len(kept) == 1 else kind(*kept)
