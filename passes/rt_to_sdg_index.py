"""Index algebra for `rt-to-sdg`: composing `rt.index` chains and inverting
`rt.define` cases (docs/semantics.md, "rt-to-sdg").

Everything here works on `tidal.symbolic` expressions; nothing touches MLIR
except `location_text`, which the pass and the reference interpreter use to
name an op's location in messages.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from mlir import ir

from tidal.symbolic import (TRUE, And, Const, Dim, Expr, IndexSeq, Slice, invert, simplify,
                            substitute, to_text)

__all__ = ["location_text", "step_names", "compose", "CaseInverse", "invert_case", "case_condition",
           "CaseError"]

_SLICE = "slice"


def location_text(loc: ir.Location) -> str:
    """`file:line:col` of an MLIR location (the first file location inside a
    name, call-site or fused location), else its printed form."""
    seen = 0
    while seen < 16:
        seen += 1
        if loc.is_a_file():
            return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
        if loc.is_a_name():
            loc = loc.child_loc
        elif loc.is_a_callsite():
            loc = loc.callee
        elif loc.is_a_fused() and len(loc.locations):
            loc = loc.locations[0]
        else:
            break
    return str(loc)


def step_names(e: Expr) -> set[str]:
    """The names of the step symbols in `e`."""
    return {s.name for s in e.free_symbols if s.role == "step"}


def compose(inner: Sequence[Expr], inner_steps: Sequence[str],
            outer: Sequence[Expr]) -> tuple[Expr, ...] | None:
    """`x[inner]` read at `outer`: the dependence on `x` of `y[outer]` when
    `y = x[inner]` over the steps `inner_steps` (one `outer` component per
    step). Point components of `outer` are substituted; a slice component of
    `outer` for step `d` is pushed through the one `inner` component of the
    form `d + e` (`e` free of `d`), so that `x[t - 1]` read at `[0:t]` is
    `x[-1:t - 1]`. Returns None when the result is not an index of `x`
    (the inner index has slices, a sliced step is used non-affinely or in
    several components, or the slice axes would come out reordered): the
    caller then materialises `y`.
    """
    if any(c.kind == _SLICE for c in inner) or len(outer) != len(inner_steps):
        return None
    points = {s: o for s, o in zip(inner_steps, outer) if o.kind != _SLICE}
    sliced = {s: (j, o) for j, (s, o) in enumerate(zip(inner_steps, outer)) if o.kind == _SLICE}
    result, order = [], []
    for component in inner:
        mentioned = step_names(component) & sliced.keys()
        if not mentioned:
            result.append(simplify(substitute(component, points)))
            continue
        if len(mentioned) > 1:
            return None
        (step,) = mentioned
        j, outer_slice = sliced[step]
        symbol = next(s for s in component.free_symbols if s.name == step)
        rest = simplify(component - symbol)
        if step in step_names(rest):
            return None
        rest = substitute(rest, points)
        result.append(Slice(simplify(outer_slice.start + rest), simplify(outer_slice.stop + rest),
                            outer_slice.step, validate=False))
        order.append(j)
    if order != sorted(order) or len(set(order)) != len(order) or len(order) != len(sliced):
        return None
    return tuple(result)


class CaseError(ValueError):
    """An `rt.define` case outside the class the semantics allow."""


@dataclass(frozen=True)
class CaseInverse:
    """The inverse of a definition index `psi` over the recurrent tensor's
    dims: `points[d]` is `psi^-1(q)` along every dim `d` that `psi` moves
    (`d + k` -> `d - k`), `condition` is `q in image(psi)`, `constant` the
    dims that `psi` fixes (where `p` is irrelevant)."""

    points: dict[str, Expr]
    condition: Expr
    constant: frozenset[str]


def invert_case(psi: Sequence[Expr], dims: Sequence[Dim]) -> CaseInverse:
    """Checks that every component of `psi` is `d + k` in its own dim `d`
    (k an integer constant) or free of steps, and inverts it. Raises
    CaseError naming the offending component."""
    if len(psi) != len(dims):
        raise CaseError(f"the definition index has {len(psi)} components but the recurrent "
                        f"tensor's domain has {len(dims)} dimensions")
    constant = set()
    for component, dim in zip(psi, dims):
        if component.kind == _SLICE:
            raise CaseError(f"definition index component '{_text(component)}' is a slice; "
                            f"a case defines points")
        steps = step_names(component)
        if not steps:
            constant.add(dim.name)
            continue
        offset = simplify(component - dim.step)
        if steps != {dim.name} or not isinstance(offset, Const):
            raise CaseError(f"definition index component '{_text(component)}' for dimension "
                            f"'{dim.name}' is not invertible: expected '{dim.name} + k' "
                            f"(k an integer constant) or an expression without steps")
    inverse = invert(IndexSeq(list(psi), validate=False), dims, dims)
    points = {d.name: c for d, c in zip(dims, inverse.index) if d.name not in constant}
    condition = simplify(inverse.condition) if inverse.condition is not None else TRUE
    return CaseInverse(points, condition, frozenset(constant))


def case_condition(inverse: CaseInverse, cond: Expr | None) -> Expr:
    """`q in image(psi) and c(psi^-1(q))`, simplified."""
    if cond is None:
        return inverse.condition
    return simplify(And(inverse.condition, substitute(cond, inverse.points)))


def _text(e: Expr) -> str:
    return to_text(e, mlir=True)
