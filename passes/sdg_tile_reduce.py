"""sdg-tile's reductions over tiles: each root reduction of a tiled chain
becomes the reduction of its partial results, one per tile, the last tile
masked with the reduction's identity where it is padded (TEMPO's Fig. 13),
or, for a sum of a batched matmul, masked through the product's factors
(see `_batched_factors`); and the small IR helpers the rewrite shares
(passes/sdg_tile.py has the plan, the cost model and the tile reads).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from mlir import ir

from tidal.dialects import enums
from tidal.dialects.attrs import expr_attr, index_attr, tensor_element_type, tensor_shape, tensor_type
from tidal.symbolic import parse, simplify, to_text

from .sdg_build import kind_name
from .transform_utils import read_type

if TYPE_CHECKING:
    from .sdg_tile import TilePlan

__all__ = ["reduce_tiles"]

IDENTITY = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}
FLOATS = {"f16", "bf16", "f32", "f64"}


def mlir_text(e) -> str:
    """`e` simplified, as MLIR attribute text."""
    return to_text(simplify(e), mlir=True)


def i64_type(ctx) -> ir.Type:
    """The i64 type in `ctx`."""
    return ir.IntegerType.get_signless(64, ctx)


def create_op(name: str, result: ir.Type, operands: list, deps: list, domain: list, attrs: dict | None = None,
              ctx=None) -> ir.Value:
    """A new op `name` with one result, reading `operands` at `deps`, over `domain`."""
    attrs = dict(attrs or {})
    if operands:
        attrs["deps"] = ir.ArrayAttr.get([index_attr(d, ctx) for d in deps], ctx)
    attrs["domain"] = index_attr(domain, ctx)
    return ir.Operation.create(name, results=[result], operands=operands, attributes=attrs).results[0]


def reduce_tiles(plan: TilePlan, r: int, new: dict, reads: dict, tile_of, n: str, count: str, tile: int,
                 exact: bool) -> None:
    """Root r as the reduction of its partial results, one per tile (masked
    with the reduction's identity where the last tile is padded)."""
    g, red = plan.g, plan.g.ops[r]
    ctx = red.context
    domain = list(plan.domain)
    tdomain = ident = domain + [n]
    start = f"{tile} * {n}"
    src, dep = g.reads[r][0]
    if src in new:
        value, vdep = new[src], list(dep) + [n]
    else:
        value, vdep = tile_of(r, 0)
    vtype = value.type if vdep == ident else read_type(value, tuple(vdep))
    elt = tensor_element_type(vtype)
    kind = kind_name(red)

    def masked(v: ir.Value, vdep: list, vtype: ir.Type) -> ir.Value:
        """where(row < D - 64 n, v, the reduction's identity): the padded rows of the last tile left
        out. One per read, not shared between the sums that mask one value (a bias's gradient and its
        weight's): each fuses into its reader (the backend's kernel for a product over rows skips the
        masked rows when it sees the mask next to the product, tidal.runtime.cpu_kernels)."""
        vshape = tensor_shape(vtype)
        iota = create_op("sdg.iota", tensor_type(vshape, "i64", ctx), [], [], tdomain,
                         {"dim": ir.IntegerAttr.get(i64_type(ctx), 0)}, ctx)
        rows = create_op("sdg.symbol_value", tensor_type([], "i64", ctx), [], [], tdomain,
                         {"expr": expr_attr(mlir_text(parse(f"{plan.size} - {start}")), ctx)}, ctx)
        lt = ir.IntegerAttr.get(ir.IntegerType.get_signless(32, ctx), int(enums.BinaryKind.lt))
        valid = create_op("sdg.binary", tensor_type(vshape, "i1", ctx), [iota, rows], [ident, ident], tdomain,
                          {"kind": lt}, ctx)
        fill = create_op("sdg.full", tensor_type([], elt, ctx), [], [], [],
                         {"value": ir.FloatAttr.get(ir.F64Type.get(ctx), IDENTITY[kind])}, ctx)
        return create_op("sdg.where", vtype, [valid, v, fill], [ident, vdep, []], tdomain, ctx=ctx)

    with ctx, red.location, ir.InsertionPoint(red):
        if not exact:      # mask the padded rows of the last tile with the reduction's identity
            factors = _batched_factors(plan, src, value, vdep, ident, reads, tile) if kind == "sum" else None
            if factors is None:
                rank = len(tensor_shape(vtype))
                rest = sorted({d % rank for d in ir.DenseI64ArrayAttr(red.attributes["dims"])} - {0})
                if rest and len(rest) + 1 == len(ir.DenseI64ArrayAttr(red.attributes["dims"])):
                    # the root reduces the rows and other axes: reduce the others first (keepdim), so
                    # that the mask selects among (tile, kept axes) partials, not every element
                    kshape = ["1" if a in rest else x for a, x in enumerate(tensor_shape(vtype))]
                    value = create_op("sdg.reduce", tensor_type(kshape, elt, ctx), [value], [vdep], tdomain,
                                      {"kind": red.attributes["kind"], "dims": ir.DenseI64ArrayAttr.get(rest, ctx),
                                       "keepdim": ir.UnitAttr.get(ctx)}, ctx)
                    vdep, vtype = ident, value.type
                value = masked(value, vdep, vtype)
            else:          # mask a sum's batched product through its factors (see _batched_factors)
                operands, stale = [], []
                for v in factors:
                    k, args, deps = reads.get(v, (None, [], []))
                    if k is not None and plan.g.ops[k].name == "sdg.permute" and deps == [ident] \
                            and ir.DenseI64ArrayAttr(plan.g.ops[k].attributes["perm"])[0] == 0:
                        # beneath a batched transpose, which sdg-contract folds into the contraction
                        old = v
                        v = create_op("sdg.permute", v.type, [masked(args[0], ident, args[0].type)], [ident],
                                      tdomain, {"perm": plan.g.ops[k].attributes["perm"]}, ctx)
                        stale.append(old)
                    else:
                        v = masked(v, ident, v.type)
                    operands.append(v)
                product = value.owner
                value = create_op("sdg.matmul", value.type, operands, [ident, ident], tdomain, ctx=ctx)
                product.erase()
                for v in stale:      # a transpose only the product read
                    if not list(v.uses):
                        v.owner.erase()
            vdep = ident
        attrs = {red.attributes[j].name: red.attributes[j].attr for j in range(len(red.attributes))
                 if red.attributes[j].name not in ("deps", "domain")}
        partial = create_op("sdg.reduce", red.results[0].type, [value], [vdep], tdomain, attrs, ctx)
        final_attrs = {a: v for a, v in attrs.items() if a != "keepdim"}   # a partial with keepdim has the axis
        final_attrs["dims"] = ir.DenseI64ArrayAttr.get([0], ctx)
        final = create_op("sdg.reduce", red.results[0].type, [partial], [domain + [f"0:{count}"]], domain,
                          final_attrs, ctx)
    red.results[0].replace_all_uses_with(final)


def _batched_factors(plan: TilePlan, src, value: ir.Value, vdep: list, ident: list, reads: dict,
                     tile: int) -> list | None:
    """The factors of the tiled batched matmul that a sum root alone reads, if the
    mask of the last tile may move onto them: both of the product's rank (>= 3),
    read whole, with the tile's rows as their batch axis 0. Then
    sum(where(m, a @ b, 0)) equals sum(where(m, a, 0) @ where(m, b, 0))
    exactly, the padded steps' products 0 @ 0 whatever their rows hold (masking
    one factor would not do: 0 * inf is NaN), and sdg-contract can fold the sum
    into one contraction over every row of the tile (a (16 * 64, 64) by
    (16 * 64, 64) product in place of 16 small ones, a mask and a sum), which
    it does when the left factor is a batched transpose (sdg-contract's
    condition). None: mask the product (the sum stays batched)."""
    g = plan.g
    if src is None or g.ops[src].name != "sdg.matmul" or len(g.readers[src]) != 1 or vdep != ident \
            or value not in reads:
        return None
    shape = tensor_shape(value.type)
    if len(shape) < 3 or tensor_element_type(value.type) not in FLOATS:
        return None
    _, factors, deps = reads[value]
    for v, d in zip(factors, deps):
        if d != ident or tensor_shape(v.type)[:1] != [str(tile)] or len(tensor_shape(v.type)) != len(shape):
            return None
    # sdg-contract folds the sum only when the left factor is a batched transpose (a copy of it
    # otherwise); a product it leaves batched is cheaper masked itself than through both factors
    k, _, kdeps = reads.get(factors[0], (None, [], []))
    rank = len(shape)
    if k is None or g.ops[k].name != "sdg.permute" or kdeps != [ident] \
            or list(ir.DenseI64ArrayAttr(g.ops[k].attributes["perm"])) != list(range(rank - 2)) + [rank - 1, rank - 2]:
        return None
    return factors
