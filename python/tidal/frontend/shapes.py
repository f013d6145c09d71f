"""Symbolic shapes: canonical sizes, broadcasting, dimension arguments.

A size is a canonical (`tidal.symbolic.simplify`d) integer expression over
the program's steps and bounds; two sizes are equal when their canonical
forms are the same object (`a.same(b)`). Printing a size with
`to_text(size, mlir=True)` gives the text the dialect's types use.
"""
from __future__ import annotations

import numbers
from typing import Any, Iterable, Sequence

from tidal.symbolic import Const, Dim, Expr, Max, Min, Symbol, simplify, to_text

from .errors import TidalError, symbolic_errors

__all__ = ["size", "canon", "as_shape", "broadcast", "norm_dim", "norm_dims", "numel", "static",
           "provably", "steps_in", "text"]


def size(value: Any, what: str = "size") -> Expr:
    """A canonical integer expression from an int or symbolic expression."""
    if isinstance(value, Dim):
        raise TidalError(f"{what} {value!r} is a dimension, not a size",
                         f"use its bound ({value.bound.name}) or step ({value.step.name})")
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, Expr)):
        raise TidalError(f"{what} {value!r} is not an integer or a symbolic integer expression",
                         "sizes are ints or expressions such as T - t")
    with symbolic_errors(what):
        e = simplify(Const(int(value)) if isinstance(value, numbers.Integral) else value)
    if e.kind != "int":
        raise TidalError(f"{what} `{e}` is a {e.kind} expression, not an integer",
                         "use an integer expression such as t + 1")
    return e


_CANON: dict = {}


def canon(e: Expr) -> Expr:
    """`simplify(e)`, or the constant it equals everywhere when the simplifier
    cannot see it (`min(t, 2) + max(0, 2 - t) + 1` is 3): a constant found by
    evaluation on small domains is confirmed with isl before it is used."""
    e = simplify(e)
    if isinstance(e, Const) or e.kind != "int":
        return e
    found = _CANON.get(e)
    if found is None:
        value = _constant_value(e)
        found = _CANON[e] = e if value is None else value
    return found


def _has_minmax(e: Expr) -> bool:
    return isinstance(e, (Min, Max)) or any(_has_minmax(a) for a in e.args)


def _constant_value(e: Expr) -> Expr | None:
    import itertools

    from tidal.symbolic import Compare, evaluate

    if not _has_minmax(e) or any(s.role == "param" for s in e.free_symbols):
        return None
    dims = sorted({s.dim for s in e.free_symbols}, key=lambda d: d.step.name)
    if len(dims) > 3:
        return None
    values = set()
    for bounds in itertools.product(range(1, 7), repeat=len(dims)):
        env = {d.bound.name: b for d, b in zip(dims, bounds)}
        for point in itertools.product(*(range(b) for b in bounds)):
            env.update({d.step.name: v for d, v in zip(dims, point)})
            values.add(evaluate(e, env))
            if len(values) > 1:
                return None
    if len(values) != 1:
        return None
    c = values.pop()
    try:
        from tidal.symbolic import And
        from tidal.symbolic.isl_bridge import domain_set

        facts = And(*(Compare("ge", d.bound, 1) for d in dims), Compare("ne", e, c)) if dims \
            else Compare("ne", e, c)
        if domain_set(dims, facts).is_empty():
            return Const(c)
    except Exception:  # noqa: BLE001 - no isl, or a form isl cannot take: keep e
        return None
    return None


def static(e: Expr) -> int | None:
    """The value of a constant size, else None."""
    return e.value if isinstance(e, Const) else None


def as_shape(shape: Any, program=None, what: str = "shape") -> tuple[Expr, ...]:
    """A canonical shape from ints/expressions; negative static sizes are errors."""
    if isinstance(shape, (numbers.Integral, Expr)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        items = tuple(shape)
    except TypeError:
        raise TidalError(f"{what} {shape!r} is not a sequence of sizes", "e.g. shape=(4,) or (T - t, 4)") from None
    out = tuple(size(s, f"{what} entry") for s in items)
    for s in out:
        v = static(s)
        if v is not None and v < 0:
            raise TidalError(f"{what} {items} has a negative size {v}", "sizes must be >= 0")
        if program is not None:
            program.check_symbols(s, what)
    return out


def text(e: Expr) -> str:
    return to_text(e, mlir=True)


def steps_in(exprs: Iterable[Expr]) -> set[Symbol]:
    out = set()
    for e in exprs:
        out |= {s for s in e.free_symbols if s.role == "step"}
    return out


def provably(cond: Expr) -> bool:
    """True when `cond` simplifies to true under the dimension facts."""
    try:
        result = simplify(cond)
    except Exception:  # noqa: BLE001 - an undecidable condition is not provable
        return False
    return result.kind == "bool" and result.free_symbols == frozenset() and bool(result)


def _show(shape: Sequence[Expr]) -> str:
    return "(" + ", ".join(to_text(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast(*shapes: Sequence[Expr], what: str = "operands") -> tuple[Expr, ...]:
    """NumPy broadcasting of canonical symbolic shapes (equal sizes or a static 1)."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        chosen = None
        for s in shapes:
            if i >= len(s):
                continue
            d = s[len(s) - 1 - i]
            if static(d) == 1:
                continue
            if chosen is None:
                chosen = d
            elif not chosen.same(d):
                raise TidalError(
                    f"shape mismatch: cannot broadcast {' and '.join(_show(s) for s in shapes)} "
                    f"({what}): size {to_text(chosen)} vs {to_text(d)}",
                    "sizes must be equal or 1 (aligned from the right); reshape, expand or index "
                    "one operand so the sizes agree")
        out.append(chosen if chosen is not None else Const(1))
    return tuple(reversed(out))


def norm_dim(dim: Any, rank: int, what: str = "dim", inclusive: bool = False) -> int:
    """A dimension argument in [0, rank) (negative counts from the end)."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TidalError(f"{what} must be an int, got {dim!r}", "spatial dimensions are ints (0, 1, -1)")
    n = rank + 1 if inclusive else rank
    d = int(dim) + n if dim < 0 else int(dim)
    if not 0 <= d < n:
        raise TidalError(f"{what} {dim} is out of range for a tensor of rank {rank}",
                         f"use a dimension in [{-n}, {n - 1}]")
    return d


def norm_dims(dims: Any, rank: int, what: str = "dim") -> tuple[int, ...]:
    """`None` (all), an int or a sequence of ints, normalized and sorted."""
    if dims is None:
        return tuple(range(rank))
    if isinstance(dims, numbers.Integral):
        dims = (dims,)
    out = tuple(sorted(norm_dim(d, rank, what) for d in dims))
    if len(set(out)) != len(out):
        raise TidalError(f"{what} lists a dimension twice: {dims}", "list each dimension once")
    return out


def numel(shape: Sequence[Expr]) -> Expr:
    """The (simplified) product of sizes."""
    total: Expr = Const(1)
    for d in shape:
        total = total * d
    return simplify(total)
