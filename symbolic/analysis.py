"""Slice sizes, slice validation and access-pattern classification.

:func:`classify` names the access pattern of one index component relative to
a dimension ``t`` (the paper's Fig. 2):

================  =========================  ===================================
pattern           example                    meaning
================  =========================  ===================================
POINT             ``t``, ``t - 1``           a single point that moves with ``t``
CONSTANT          ``0``, ``T - 1``           a single point independent of ``t``
WINDOW            ``max(0, t - 3):t + 1``    both ends move with ``t``: a sliding
                  ``t:min(t + 3, T)``        window of constant nominal size
PREFIX            ``0:t + 1``                a growing range (fixed start)
SUFFIX            ``t:T``                    a shrinking range (fixed stop)
FULL              ``0:T``                    the whole dimension
CONSTANT_SLICE    ``0:5``                    a fixed range other than FULL
BLOCK             ``t // 4 * 4:t // 4 * 4 + 4``  chunks that jump with ``t``
OTHER             ``t:2 * t``, ``t % 5``     anything else
================  =========================  ===================================
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass

from .errors import InvalidSliceError, SymbolicTypeError
from .expr import INT, SLICE, Const, Dim, Expr, FloorDiv, Max, Min, Symbol, sort_key
from .poly import Poly, constant_of, expr_to_poly, poly_to_expr
from .prover import prove_nonneg
from .simplifier import int_poly, simplify


def _step_of(dim: Dim | Symbol) -> Symbol:
    if isinstance(dim, Dim):
        return dim.step
    if isinstance(dim, Symbol) and dim.role == "step":
        return dim
    raise TypeError(f"expected a Dim or a step symbol, got {dim!r}")


def slice_size(component: Expr) -> Expr:
    """Number of indices, simplified: ``max(0, ceil((stop - start) / step))``.

    ``t:T`` -> ``T - t``; ``max(0, t - 2):t + 1`` -> ``min(t, 2) + 1``;
    ``0:T:2`` -> ``(T + 1) // 2``.  A point has size 1.
    """
    if component.kind == INT:
        return Const(1)
    if component.kind != SLICE:
        raise SymbolicTypeError(f"slice_size needs a slice or a point, got `{component}`")
    span = component.stop - component.start
    if component.step != 1:
        span = (span + (component.step - 1)) // component.step
    return simplify(Max(0, span))


def _witness(size: Expr) -> dict | None:
    """A small valid point where ``size < 0`` (for error messages), if any."""
    symbols = sorted(size.free_symbols, key=sort_key)
    dims = sorted({s.dim for s in symbols if s.role != "param"}, key=lambda d: d.step.name)
    params = [s for s in symbols if s.role == "param"]
    if len(dims) + len(params) > 4:
        return None
    from .evaluation import compile_expr

    params_list = [x for d in dims for x in (d.step, d.bound)] + params
    fn = compile_expr(size, params_list)
    bound_ranges = [range(1, 9)] * len(dims)
    for bounds in itertools.product(*bound_ranges):
        step_ranges = [range(b) for b in bounds]
        for steps in itertools.product(*step_ranges):
            for values in itertools.product(range(-4, 9), repeat=len(params)):
                args = [x for pair in zip(steps, bounds) for x in pair] + list(values)
                if fn(*args) < 0:
                    return {s.name: v for s, v in zip(params_list, args)}
    return None


def check_slice(component: Expr) -> None:
    """Raise :class:`InvalidSliceError` unless ``stop - start >= 0`` is provable.

    Uses the facts ``0 <= t < T`` and ``T >= 1`` for every dimension.
    """
    size = int_poly(component.stop - component.start)
    if prove_nonneg(size):
        return
    size_text = poly_to_expr(size)
    witness = _witness(size_text)
    where = (
        " (e.g. at " + ", ".join(f"{k}={v}" for k, v in witness.items()) + ")"
        if witness else " (it cannot be proven non-negative under 0 <= t < T, T >= 1)"
    )
    raise InvalidSliceError(
        f"slice `{component}` may have a negative size `{size_text}`{where}; "
        f"pass validate=False to build it anyway"
    )


class AccessPattern(enum.Enum):
    """How an index component accesses a dimension (see the module docstring)."""

    POINT = "point"
    CONSTANT = "constant"
    WINDOW = "window"
    PREFIX = "prefix"
    SUFFIX = "suffix"
    FULL = "full"
    CONSTANT_SLICE = "constant_slice"
    BLOCK = "block"
    OTHER = "other"


@dataclass(frozen=True)
class Access:
    """Result of :func:`classify`.

    ``size`` is the exact symbolic number of indices (1 for points);
    ``window`` the nominal (unclamped) width of a WINDOW; ``offset`` the
    constant ``k`` of a POINT ``t + k`` or the unclamped start offset of a
    WINDOW (``-3`` for ``max(0, t - 3):t + 1``).
    """

    pattern: AccessPattern
    size: Expr
    window: int | None = None
    offset: int | None = None


def _moving_offset(p: Poly, step: Symbol) -> int | None:
    """``k`` if ``p`` is ``t + k``, possibly clamped by min/max with ``t``-free terms."""
    monos = [m for m in p if m]
    if len(monos) != 1 or len(monos[0]) != 1 or p[monos[0]] != 1:
        return None
    atom, constant = monos[0][0], constant_of(p)
    if atom is step:
        return constant
    if isinstance(atom, (Min, Max)):
        moving = [a for a in atom.args if step in a.free_symbols]
        if len(moving) == 1:
            inner = _moving_offset(expr_to_poly(moving[0]), step)
            return None if inner is None else inner + constant
    return None


def is_affine_in(p: Poly, step: Symbol) -> bool:
    """True if ``step`` occurs in ``p`` only as a monomial of its own (``a * step + rest``)."""
    return all(len(m) == 1 and m[0] is step for m in p if any(step in a.free_symbols for a in m))


def _moves_only_by_blocks(p: Poly, step: Symbol) -> bool:
    """True if ``step`` occurs only inside ``// divisor`` atoms (possibly clamped)."""
    def atom_ok(a: Expr) -> bool:
        if step not in a.free_symbols or isinstance(a, FloorDiv):
            return True
        if isinstance(a, (Min, Max)):
            return all(all(atom_ok(b) for m in expr_to_poly(x) for b in m) for x in a.args)
        return False

    return all(atom_ok(a) for m in p for a in m)


def classify(component: Expr, dim: Dim | Symbol) -> Access:
    """Classify an index component (point or slice) relative to dimension ``dim``."""
    step = _step_of(dim)
    bound = Symbol(step.partner, "bound", step.name)
    if component.kind not in (INT, SLICE):
        raise SymbolicTypeError(f"classify needs a point or a slice, got `{component}`")
    c = simplify(component)
    if c.kind == INT:
        if step not in c.free_symbols:
            return Access(AccessPattern.CONSTANT, Const(1))
        poly = int_poly(c)
        offset = _moving_offset(poly, step)
        if offset is not None or is_affine_in(poly, step):
            return Access(AccessPattern.POINT, Const(1), offset=offset)
        return Access(AccessPattern.OTHER, Const(1))
    size = slice_size(c)
    start_moves = step in c.start.free_symbols
    stop_moves = step in c.stop.free_symbols
    if not start_moves and not stop_moves:
        full = c.start is Const(0) and c.stop is bound and c.step == 1
        return Access(AccessPattern.FULL if full else AccessPattern.CONSTANT_SLICE, size)
    start_offset = _moving_offset(int_poly(c.start), step) if start_moves else None
    stop_offset = _moving_offset(int_poly(c.stop), step) if stop_moves else None
    if start_offset is not None and stop_offset is not None:
        return Access(AccessPattern.WINDOW, size, window=stop_offset - start_offset, offset=start_offset)
    if not start_moves and stop_offset is not None:
        return Access(AccessPattern.PREFIX, size)
    if not stop_moves and start_offset is not None:
        return Access(AccessPattern.SUFFIX, size)
    if start_moves and stop_moves and step not in size.free_symbols:
        if _moves_only_by_blocks(int_poly(c.start), step) and _moves_only_by_blocks(int_poly(c.stop), step):
            return Access(AccessPattern.BLOCK, size)
    return Access(AccessPattern.OTHER, size)



def provably_at_most(e: Expr, k: int) -> bool:
    """True if the integer expression ``e <= k`` at every valid point (the
    facts ``0 <= t < T``, ``T >= 1``); False means not proven."""
    return prove_nonneg(int_poly(Const(int(k)) - e))
