"""Peeling the one iteration of a loop that an equality guard selects.

isl writes a statement that runs at one iteration of a loop (an episode's
whole-range read placed at `c1 == T`, a merge's first point at `c1 == 0`)
as a guard inside the loop. When the guard has an `else` that holds the rest
of the body,

    for c1 in range(7, T + 7):
        if c1 == T:
            %91 = sdg.reshape  [i = c0]
        else:
            <the step's work>

every step runs its work inside a conditional. In a loop that runs inside
XLA that is a `lax.cond` over the store buffers, and XLA copies the buffers
the branches update: REINFORCE n-step's acting loop in this form ran 2x
slower. `peel_equality_guards` splits such a loop at the guarded iteration,

    for c1 in range(7, min(T + 7, T)):
        <the step's work>
    for c1 in range(max(7, T), min(T + 7, T + 1)):
        if c1 == T: ... else: ...            (one iteration, guard kept)
    for c1 in range(max(7, T + 1), T + 7):
        <the step's work>

which runs the same instances in the same order (the schedule's checker
verifies the tree it returns). Only guards `var == e` (alone or in a
conjunction) with `e` not using the loop's variable, on unit-step loops,
whose `if` has an `else`, are peeled, the first one of each loop only
(`MAX_PEELS`): every peel adds two copies of the body to compile.
"""
from __future__ import annotations

import copy

from .loop_ast import Exec, For, If

__all__ = ["peel_equality_guards", "MAX_PEELS"]

MAX_PEELS = 1


def _mentions(e: tuple, var: str) -> bool:
    if e[0] == "var":
        return e[1] == var
    if e[0] == "int":
        return False
    return any(_mentions(a, var) for a in e[1:] if isinstance(a, tuple))


def _equality(cond: tuple, var: str) -> tuple | None:
    """e when `cond` is `var == e` or a conjunction with such a term, else None."""
    if cond[0] == "eq":
        a, b = cond[1], cond[2]
        if a == ("var", var) and not _mentions(b, var):
            return b
        if b == ("var", var) and not _mentions(a, var):
            return a
        return None
    if cond[0] == "and":
        return _equality(cond[1], var) or _equality(cond[2], var)
    return None


def _guard(body: list, var: str):
    """(position, e) of the first top-level `if` of `body` with an `else` and a
    guard `var == e`, or None."""
    for k, s in enumerate(body):
        if isinstance(s, If) and s.orelse:
            e = _equality(s.cond, var)
            if e is not None:
                return k, e
    return None


def _peel(loop: For, budget: int) -> list:
    found = _guard(loop.body, loop.var) if loop.step == 1 and budget > 0 else None
    if found is None:
        return [loop]
    k, e = found
    without = loop.body[:k] + loop.body[k].orelse + loop.body[k + 1:]   # var != e: the else holds
    one = ("add", e, ("int", 1))
    # Every copy gets statements of its own: later passes annotate them in place
    # (merge_branches: the branches a merge can take where it runs).
    before = For(loop.var, loop.lower, ("min", loop.upper, e), 1, copy.deepcopy(without))
    at = For(loop.var, ("max", loop.lower, e), ("min", loop.upper, one), 1, loop.body)
    after = For(loop.var, ("max", loop.lower, one), loop.upper, 1, copy.deepcopy(without))
    return _peel(before, budget - 1) + [at] + _peel(after, budget - 1)


def peel_equality_guards(tree: list, max_peels: int = MAX_PEELS) -> list:
    """The loop tree with equality-guarded iterations peeled (see the module doc)."""
    out = []
    for s in tree:
        if isinstance(s, For):
            inner = For(s.var, s.lower, s.upper, s.step, peel_equality_guards(s.body, max_peels))
            out += _peel(inner, max_peels)
        elif isinstance(s, If):
            out.append(If(s.cond, peel_equality_guards(s.then, max_peels), peel_equality_guards(s.orelse, max_peels)))
        else:
            assert isinstance(s, Exec)
            out.append(s)
    return out
