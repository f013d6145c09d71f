"""Bounded windows for sdg-vectorize: ops whose shapes vary with the step.

An n-step return reads `r[i, t:min(t + n, T)]`: n rows, fewer in the last
n - 1 steps. Per point the window's shape `[min(T - t, n)]` varies with t, so
the T points cannot be stacked as they are. They can once every such size is
given its capacity (the constant that bounds it, n here) and the rows past
the size are padding, valid rows first:

* a window read `x[i, lo(t):hi(t)]` of a value over t becomes one gather of
  all of x: rows `clamp(lo(t) + j, 0, T - 1)` for j < capacity, as an
  `index_select` of the flattened (T * capacity) row indices and a reshape to
  (T, capacity, ...);
* an `iota` or `full` of a varying shape is made at the capacity, and a
  `symbol_value` of the step (a window's size, a mean's divisor) is its
  expression over an iota of the step;
* elementwise ops, casts, permutes, expands and (un)squeezes compute on the
  padding too (what they make there is never read as a result);
* ops that combine the rows of a varying axis read the padding with their
  identity (`where(j < size(t), x, identity)`): reductions, contractions,
  reverse scans. Forward scans need nothing: their valid rows read only
  valid rows.

Everything else on a varying axis (slices, takes, flips, pads, concats,
reshapes, arg-reductions) is refused, and so is a size without a constant
bound (`k[0:t + 1]`), a window read of a value whose own shape varies, and any
reader outside the batched set that would see a padded value.

This module holds the analysis (sizes and their capacities) and the ops the
rewrite creates; sdg_vectorize decides what is batched.
"""
from __future__ import annotations

import math

from mlir import ir

from tidal.dialects import enums
from tidal.dialects.attrs import expr_attr, tensor_element_type, tensor_shape
from tidal.dialects.op_properties import ops_with
from tidal.symbolic import Const, SymbolicError, Symbol, parse, simplify, to_text
from tidal.symbolic.arithmetic import Add, FloorDiv, Max, Min, Mod, Mul, Neg, Sub

from .sdg_build import create, i64_attr, kind_name, mentions
from .transform_utils import read_type

__all__ = ["capacity", "varying_axes", "static_shape", "window", "padded_ok", "gather_window", "mask_combined",
           "step_values", "IDENTITY"]

# the value a reduction or scan reads in the padding: it changes nothing
IDENTITY = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf,
            "cumsum": 0.0, "cumprod": 1.0, "cummax": -math.inf, "cummin": math.inf}


def capacity(size: str, step: str) -> int | None:
    """A constant bound of a size that varies with the step (`min(T - t, 8)`: 8), or None."""
    try:
        bound = _bound(simplify(parse(size)))
    except SymbolicError:
        return None
    return bound if bound is not None and bound >= 0 else None


def _bound(e) -> int | None:
    """An upper bound of e that does not depend on any symbol, else None."""
    if isinstance(e, Const):
        return e.value
    known = [_bound(a) for a in e.args] if isinstance(e, (Min, Max, Add, Mul)) else []
    if isinstance(e, Min):
        known = [b for b in known if b is not None]
        return min(known) if known else None
    if None in known:
        return None
    if isinstance(e, Max):
        return max(known)
    if isinstance(e, Add):
        return sum(known)
    if isinstance(e, Mul) and any(isinstance(a, Const) and a.value >= 0 for a in e.args):
        c = next(a.value for a in e.args if isinstance(a, Const))
        other = [a for a in e.args if not isinstance(a, Const)]
        return c * _bound(other[0]) if len(other) == 1 and _bound(other[0]) is not None else None
    return None


def varying_axes(shape: list[str], step: str) -> list[int]:
    return [a for a, s in enumerate(shape) if mentions(s, step)]


def static_shape(shape: list[str], step: str) -> list[str] | None:
    """The shape with each varying size replaced by its capacity; None if one has none."""
    out = []
    for s in shape:
        if mentions(s, step):
            c = capacity(s, step)
            if c is None:
                return None
            s = str(c)
        out.append(s)
    return out


def window(component: str, step: str) -> tuple[str, str, int] | None:
    """(start, size, capacity) of a read component `lo:hi` (no stride) whose ends vary
    with the step and whose size has a constant bound, else None."""
    parts = component.split(":")
    if len(parts) != 2 or not all(p.strip() for p in parts) or not any(mentions(p, step) for p in parts):
        return None
    try:
        lo, hi = parse(parts[0]), parse(parts[1])
        size = simplify(Max(Sub(hi, lo), Const(0)))
    except SymbolicError:
        return None
    cap = _bound(size)
    if cap is None or cap <= 0:
        return None
    return to_text(simplify(lo), mlir=True), to_text(size, mlir=True), cap


# ops that read their operand along their `dim` axis (unsqueeze inserts an axis and reads none)
ALONG_AXIS = ops_with("axis") - ops_with("source") - {"sdg.unsqueeze"}


def padded_ok(o: ir.Operation, operands: list[list[str]], result: list[str], step: str) -> bool:
    """Whether op o (operand shapes as it reads them, result shape) can run on the
    padded form of its varying sizes: every size bounded, no varying axis sliced,
    taken, flipped, padded, concatenated or reshaped, reductions with an identity."""
    if any(static_shape(s, step) is None for s in operands + [result]):
        return False
    axes = [varying_axes(s, step) for s in operands]
    if o.name == "sdg.reshape":
        return False
    if o.name in ALONG_AXIS:
        d = ir.IntegerAttr(o.attributes["dim"]).value % len(operands[0])
        if any(d in a for a in axes):   # a forward scan: nothing to do; a reverse one: masked
            return o.name == "sdg.scan" and ("reverse" not in o.attributes or _has_identity(o))
    if o.name == "sdg.reduce":
        dims = {d % len(operands[0]) for d in ir.DenseI64ArrayAttr(o.attributes["dims"])}
        return not dims & set(axes[0]) or _has_identity(o)
    return True


def _has_identity(o: ir.Operation) -> bool:
    """Whether the padding can be given o's identity: a sum or product, or a
    max or min of floats (-inf and inf; integers have none to write)."""
    kind = kind_name(o)
    if kind not in IDENTITY:
        return False
    return math.isfinite(IDENTITY[kind]) or tensor_element_type(o.operands[0].type) in ("f16", "bf16", "f32", "f64")


# ---------------------------------------------------------------------------------- rewrite
def _binary(before, kind: str, a, b, shape, elem, domain) -> ir.Value:
    ctx = before.context
    attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(32, ctx), int(getattr(enums.BinaryKind, kind)))
    return create(before, "sdg.binary", shape, elem, [(a, domain), (b, domain)], domain, {"kind": attr})


def _step_values(before, expr: str, step: str, steps_value: ir.Value, shape: list[str], domain: list) -> ir.Value:
    """An i64 tensor of `shape` holding `expr` at each step value of `steps_value`
    (same shape): its parts without the step are `symbol_value`s, the rest binary ops."""
    ctx = before.context

    def build(e) -> ir.Value:
        free = {s.name for s in e.free_symbols}
        if step not in free:
            return create(before, "sdg.symbol_value", [], "i64", [], domain,
                       {"expr": expr_attr(to_text(e, mlir=True), ctx)})
        if isinstance(e, Symbol):
            return steps_value
        if isinstance(e, Neg):
            zero = build(Const(0))
            return _binary(before, "sub", zero, build(e.args[0]), shape, "i64", domain)
        if isinstance(e, (FloorDiv, Mod)):
            kind = "floordiv" if isinstance(e, FloorDiv) else "mod"
            return _binary(before, kind, build(e.args[0]), build(Const(e.divisor)), shape, "i64", domain)
        kind = {Add: "add", Sub: "sub", Mul: "mul", Min: "min", Max: "max"}.get(type(e))
        if kind is None:
            raise SymbolicError(f"no tensor form for the size {to_text(e)}")
        args = [build(a) for a in e.args]
        value = args[0]
        for a in args[1:]:
            value = _binary(before, kind, value, a, shape, "i64", domain)
        return value

    return build(simplify(parse(expr)))


def _uses(domain: list, expr: str) -> list:
    """The dims of `domain` that `expr` names."""
    free = {s.name for s in parse(expr).free_symbols}
    return [d for d in domain if d in free]


def _iota(before, shape: list[str], dim: int, domain: list) -> ir.Value:
    return create(before, "sdg.iota", shape, "i64", [], domain, {"dim": i64_attr(dim, before.context)})


def step_values(before: ir.Operation, expr: str, step: str, bound: str, domain: list, elem: str) -> ir.Value:
    """`expr` at every point of the step, (bound,) of `elem`: the batched `symbol_value`
    (a window's size, the divisor of its mean)."""
    value = _step_values(before, expr, step, _iota(before, [bound], 0, domain), [bound], domain)
    if elem != "i64":
        value = create(before, "sdg.cast", [bound], elem, [(value, domain)], domain)
    return value


def gather_window(before: ir.Operation, value: ir.Value, dep: list[str], domain: list, start: str, cap: int,
                  bound: str, step: str, cache: dict) -> ir.Value:
    """Rows `clamp(start(t) + j, 0, bound - 1)` of `value` (read at `dep`: shape
    (bound, *rest)) for every t < bound and j < cap: a (bound, cap, *rest) value.
    `cache` keeps the row indices and gathers made so far (one per window and value)."""
    key = (value, tuple(dep), start, cap, tuple(domain))
    if key in cache:
        return cache[key]
    read = tensor_shape(read_type(value, tuple(dep)))
    rest, elem = read[1:], tensor_element_type(value.type)
    grid = [bound, str(cap)]
    flat = to_text(simplify(parse(f"({bound}) * {cap}")), mlir=True)
    idom = _uses(domain, start)    # the row indices run once, not once per point of the other dims
    at = cache.get((start, cap, tuple(idom)))
    if at is None:
        rows = _step_values(before, start, step, _iota(before, grid, 0, idom), grid, idom)
        at = _binary(before, "add", rows, _iota(before, grid, 1, idom), grid, "i64", idom)
        last = _step_values(before, f"{bound} - 1", step, at, grid, idom)
        zero = _step_values(before, "0", step, at, grid, idom)
        at = _binary(before, "max", _binary(before, "min", at, last, grid, "i64", idom), zero, grid, "i64", idom)
        at = cache[(start, cap, tuple(idom))] = create(before, "sdg.reshape", [flat], "i64", [(at, idom)], idom)
    dim0 = i64_attr(0, before.context)
    rows = create(before, "sdg.index_select", [flat] + rest, elem, [(value, dep), (at, idom)], domain, {"dim": dim0})
    cache[key] = create(before, "sdg.reshape", grid + rest, elem, [(rows, domain)], domain)
    return cache[key]


def masked(before: ir.Operation, value: ir.Value, dep: list[str], domain: list, per_point: list[str],
           axes: list[int], identity: float, bound: str, step: str, cache: dict) -> ir.Value:
    """`value` (the batched form, (bound, *static per_point)) with the rows past the
    size of each varying axis in `axes` replaced by `identity`; `cache` keeps the
    masks made so far (one per size, axis and rank)."""
    elem = tensor_element_type(value.type)
    batched = [bound] + static_shape(per_point, step)
    for axis in axes:
        grid = [bound] + ["1"] * len(per_point)
        grid[axis + 1] = batched[axis + 1]
        mdom = _uses(domain, per_point[axis])
        key = ("mask", to_text(simplify(parse(per_point[axis]))), tuple(grid), tuple(mdom))
        if key not in cache:
            size = _step_values(before, per_point[axis], step, _iota(before, grid, 0, mdom), grid, mdom)
            cache[key] = _binary(before, "lt", _iota(before, grid, axis + 1, mdom), size, grid, "i1", mdom)
        fill = create(before, "sdg.full", [], elem, [], [],
                   {"value": ir.FloatAttr.get(ir.F64Type.get(before.context), identity)})
        value = create(before, "sdg.where", batched, elem, [(cache[key], mdom), (value, dep), (fill, [])], domain)
        dep = domain
    return value


def mask_combined(o: ir.Operation, i: int, value: ir.Value, dep: list[str], domain: list, per_point: list[str],
                  bound: str, step: str, cache: dict) -> tuple[ir.Value, list[str]]:
    """Operand i of op o, batched, with the padding of the varying axes o combines
    (reduced, contracted, scanned in reverse) set to o's identity; (value, dep)."""
    axes = varying_axes(per_point, step)
    if not axes:
        return value, dep
    rank = len(per_point)
    if o.name == "sdg.reduce":
        combined = {d % rank for d in ir.DenseI64ArrayAttr(o.attributes["dims"])}
    elif o.name == "sdg.scan" and "reverse" in o.attributes:
        combined = {ir.IntegerAttr(o.attributes["dim"]).value % rank}
    elif o.name == "sdg.matmul":
        combined = {rank - 1} if i == 0 or rank == 1 else {rank - 2}
    else:
        return value, dep
    axes = [a for a in axes if a in combined]
    if not axes:
        return value, dep
    return masked(o, value, dep, domain, per_point, axes, IDENTITY.get(kind_name(o), 0.0), bound, step, cache), domain
