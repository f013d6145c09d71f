"""sdg-tile: split a large spatial axis into a temporal dim over tiles
(spatial -> temporal, TEMPO section 4.3).

A reduction over the leading axis of a large value (the sum over an episode
of a vectorized learner's per-step terms, the sum over a big batch) needs the
whole value at once, and so does the chain of ops that computes it. Tiling
computes that chain one tile of `tile` rows at a time: the ops of the chain
get a new temporal dim n < N over the tiles, their values hold one tile, the
reduction reduces each tile (the partial results, N small values), and a
final reduction over the N partials restores the original value. The tile
values are freed tile by tile; only the partials live across tiles
(gradient accumulation is this transformation on a loss).

The tiled set starts from the `sdg.reduce` ops (sum, prod, max or min) whose
axes include axis 0 of what they read, grouped by the domain and the size of
that axis (reductions of one chain, a loss and its gradient sums, share the
tiles), and grows through the ops that compute their operands: elementwise
ops, casts, reductions over other axes, batched matmuls, takes, slices, pads,
squeezes and unsqueezes along another axis (a taken action's log-probability
`lp[..., 1]`, its gradient's zero padding), permutes that keep axis 0 first
(a batched transpose in a weight gradient) and expands (each row of axis 0
of the result depends only on the same row of the operands), over the
reductions' domain, read at the identity, and read by nothing outside the
set. A policy-gradient learner's whole loss and backward pass (PPO's epoch)
is such a chain. A reduction whose operand would only be sliced out of a value that
stays whole is left alone (that saves nothing). The set stops (TEMPO's
stopping conditions) at:

* a dependence that makes the axis, `x[0:T]` read over the reduction's
  domain: it becomes the tile `x[64 * n:min(64 * n + 64, T)]`;
* any other operand with the axis (a value computed outside the set): an
  `sdg.slice` of the n-th tile is inserted;
* an operand that broadcasts along the axis (lower rank, or size 1): read
  as it was.

A tile that the tile size may not divide (D symbolic) would be read with
`min(D - 64 n, 64)` rows, a shape that varies with n: the runtime cannot
compile such a read into a loop with static shapes and would run that loop
from the host. A value a quarter or less the size of the chain's largest
(PPO's observations, 4 floats a row, against its 64-wide activations) is
instead padded once, whole, to N tiles (`sdg.pad` at the dims its read
uses) and each tile is a slice of a static 64 rows; a larger one (a padded
copy would cost what tiling saves) is read as the rows `min(64 n + j, D - 1)`
of the whole value (`sdg.index_select`, static 64 rows: the last tile
repeats row D - 1, and the mask below leaves those rows out).

N is `(D + tile - 1) floordiv tile`, a bound derived from the others
(`dims [..., n < N = (T + 63) floordiv 64]`; runs do not give it). When
`tile` does not divide D the last tile is padded (`sdg.pad`) and masked
before the partial reduction with the reduction's identity (0 for sum, 1 for
prod, -inf for max, +inf for min), as in TEMPO's Fig. 13.

A sum of a batched matmul that nothing else reads (a weight gradient,
`sum_t h[t]^T @ g[t]`) is masked through the product's factors instead, both
of them with the tile's rows as their batch axis: `where(m, a, 0) @ where(m,
b, 0)`, a factor that is a batched transpose masked beneath it. The padded
steps contribute 0 @ 0 whatever their rows hold (masking one factor would
not do: 0 * inf is NaN), so the sum is the same, and sdg-contract can fold it
into one product over the tile's steps and rows (which the JAX backend runs
on Tidal's CPU kernel, tidal.runtime.cpu_kernels): a mask on the product
would stand between the sum and the matmul.

The axis's size D may vary with the reduction's point only as a growing
prefix: a causal read `x[0:t + 1]`, whose size grows by a constant with each
step it uses (all of the reduction's domain). N is then the tile count of the
largest prefix (each step at its bound - 1), and the reduction at step t
reduces the partials of its own `(D + tile - 1) floordiv tile` tiles
(`%q[t, 0:t floordiv 64 + 1]`): the tiles past the prefix are never read, so
the schedule never runs them (a loop over n up to t floordiv 64 inside the
loop over t). A size that shrinks (`x[t:T]`) or stops growing
(`x[0:min(t + 1, W)]`) is refused.

Before (`(x[0:T] * w).exp().sum(0)`, tile=64):

    %m = sdg.binary mul %x[0:T], %w[] domain [] : (...[4]..., ...[4]...) -> [T, 4]
    %e = sdg.unary exp %m[] domain [] : ([T, 4]) -> [T, 4]
    %s = sdg.reduce sum [0] %e[] domain [] : ([T, 4]) -> [4]

After `sdg-tile{tile=64 min-bytes=0}` (graph dims [t < T, n < N = (T + 63) floordiv 64]):

    %j = (iota 0 + 64 * n) min (T - 1)        (the rows, static 64 of them)
    %p = sdg.index_select 0 %x[0:T], %j[n] domain [n] -> [64, 4]
    %m = sdg.binary mul %p[n], %w[] domain [n] -> [64, 4]
    %e = sdg.unary exp %m[n] domain [n] -> [64, 4]
    %v = (iota 0 < T - 64 * n)
    %k = sdg.where %v[n], %e[n], %zero[] domain [n] -> [64, 4]
    %q = sdg.reduce sum [0] %k[n] domain [n] -> [4]
    %s = sdg.reduce sum [0] %q[0:N] domain [] -> [4]

Options: `tile` (rows per tile; 0, the default, lets the cost model choose),
`tile-bytes` (the cost model: as many rows as make the chain's largest
value about this many bytes a tile, 256 KiB, a quarter of a 1 MiB L2 cache,
which the other values a fused island reads and writes share), `min-bytes`
(tile only a set whose largest value at one point is at least this many
bytes, 1 MiB, more than fits in that cache; sizes evaluated with every
bound and step at `assume-bound`), `assume-bound`. Tiling for the cache is
what makes PPO's epochs fast: its loss and backward pass over 12800 rows of
64-wide activations (3.3 MB a value) run 16 steps, 1024 rows and 256 KB a
value, at a time. A value that would fit in the cache whole is not tiled
(a loop over tiles costs more than it saves there).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects import enums, ops_named
from tidal.dialects.attrs import derived_bounds, expr_attr, tensor_element_type, tensor_shape, tensor_type
from tidal.dialects.op_properties import ops_with
from tidal.symbolic import SymbolicError, evaluate, free_symbols, parse, simplify, substitute

from .base import ModulePass, PassFailure, option
from .sdg_build import kind_name, value_bytes
from .sdg_graph_view import View
from .sdg_tile_reduce import FLOATS, IDENTITY, create_op, i64_type, mlir_text, reduce_tiles
from .transform_utils import read_type

__all__ = ["SdgTile"]

ROW_WISE = ops_with("elementwise") | ops_with("reduction")
# ops that move or index elements along one dim: row-wise when that dim is not axis 0 (those
# the tiler has a rule for)
ALONG_DIM = {"sdg.take", "sdg.slice", "sdg.pad", "sdg.squeeze", "sdg.unsqueeze"}



def _same(a: str, b: str) -> bool:
    try:
        return parse(a).same(parse(b)) or simplify(parse(f"({a}) - ({b})")).same(parse("0"))
    except SymbolicError:
        return False


class TilePlan:
    """Reductions over the same axis to tile together, the ops computed per tile."""

    def __init__(self, g: View, roots: list[int], size: str):
        self.g, self.roots, self.size = g, list(roots), size
        self.domain = g.domain[roots[0]]
        self.chain: list[int] = []     # producers first
        self.made: list[tuple[int, int]] = []   # (op, operand) reads whose dependence makes the axis

    def row_wise(self, k: int) -> bool:
        """Whether row j of axis 0 of op k's result depends only on row j of its
        operands that have the axis (the others broadcast)."""
        g, o = self.g, self.g.ops[k]
        if o.name not in ROW_WISE | ALONG_DIM | {"sdg.permute", "sdg.expand"} or len(o.results) != 1 \
                or g.domain[k] != self.domain:
            return False
        shape = tensor_shape(o.results[0].type)
        if not shape or not _same(shape[0], self.size):
            return False
        if any(self.operand_role(k, i) is None for i in range(len(o.operands))):
            return False
        if o.name == "sdg.reduce" or o.name in ALONG_DIM:
            rank = len(tensor_shape(read_type(o.operands[0], tuple(g.reads[k][0][1]))))
            if o.name == "sdg.reduce":
                return 0 not in [d % rank for d in ir.DenseI64ArrayAttr(o.attributes["dims"])]
            dim = ir.IntegerAttr(o.attributes["dim"]).value
            return dim % (rank + 1 if o.name == "sdg.unsqueeze" else rank) != 0
        if o.name == "sdg.permute":
            return ir.DenseI64ArrayAttr(o.attributes["perm"])[0] % len(shape) == 0
        if o.name == "sdg.matmul":   # batched, or rows times a matrix without the axis (x @ w)
            ranks = [len(tensor_shape(read_type(v, tuple(d)))) for v, (_, d) in zip(o.operands, g.reads[k])]
            return (len(shape) >= 3 and min(ranks) >= 2) or (len(shape) == 2 and ranks == [2, 2])
        return True

    def operand_role(self, k: int, i: int) -> str | None:
        """'broadcast' (read as it is), 'tiled' (has the axis) or None (refused)."""
        o = self.g.ops[k]
        read = tensor_shape(read_type(o.operands[i], tuple(self.g.reads[k][i][1])))
        if o.name == "sdg.reduce":
            return "tiled" if read and _same(read[0], self.size) else None
        rank = len(tensor_shape(o.results[0].type))
        if o.name in ALONG_DIM or o.name == "sdg.permute":   # the operand's axis 0 is the result's
            return "tiled" if read and _same(read[0], self.size) else None
        if o.name == "sdg.matmul" and i == 1 and rank == 2 == len(read):
            return "broadcast"     # x @ w: w's axis 0 is the contraction, not the rows
        if len(read) < rank or (read and read[0] == "1" and not _same("1", self.size)):
            return "broadcast"
        return "tiled" if read and _same(read[0], self.size) else None


def _root_size(g: View, r: int, derived: set) -> str | None:
    """The size of the axis 0 that reduction r reduces, if r can be tiled over it."""
    o = g.ops[r]
    if o.name != "sdg.reduce" or len(o.operands) != 1 or kind_name(o) not in IDENTITY:
        return None
    read = tensor_shape(read_type(o.operands[0], tuple(g.reads[r][0][1])))
    if not read or 0 not in [d % len(read) for d in ir.DenseI64ArrayAttr(o.attributes["dims"])]:
        return None
    try:
        size = mlir_text(parse(read[0]))
        used = {s.name for s in free_symbols(parse(size))}
    except SymbolicError:
        return None
    if used & derived:                     # a tile count already
        return None
    src = g.reads[r][0][0]
    tiles = {step for step, bound in zip(g.steps, g.bounds) if bound in derived}
    if src is not None and tiles & set(g.domain[src]):
        return None                        # the partials of tiles already (`%q[t, 0:t floordiv 64 + 1]`)
    if used & set(g.steps) and _largest_size(g, size, g.domain[r]) is None:
        return None                        # varies with the point, not as a growing prefix
    if kind_name(o) in ("max", "min") and tensor_element_type(o.results[0].type) not in FLOATS:
        return None                         # no exact identity in sdg.full's f64 for every integer
    return size


def _largest_size(g: View, size: str, domain) -> str | None:
    """For a size that varies with the point (a causal prefix `x[0:t + 1]`):
    its largest value, with each step it uses at its bound - 1, if the size
    grows (by a constant) with each of those steps, all of the reduction's
    domain; else None. The size of one that does not vary, as it is."""
    steps = [d for d in (s.name for s in free_symbols(parse(size))) if d in g.steps]
    if any(d not in domain for d in steps):
        return None
    try:
        e = parse(size)
        if not all(mlir_text(substitute(e, {d: parse(f"{d} + 1")}) - e).isdigit() for d in steps):
            return None
        return mlir_text(substitute(e, {d: parse(f"{g.bounds[g.steps.index(d)]} - 1") for d in steps}))
    except SymbolicError:
        return None


def _plans(g: View, derived: set):
    """One plan per group of reductions over the same axis size and domain."""
    groups: dict[tuple, list[int]] = {}
    for r in range(len(g.ops)):
        size = _root_size(g, r, derived)
        if size is not None:
            groups.setdefault((g.domain[r], size), []).append(r)
    for (_, size), roots in groups.items():
        while roots:
            plan = TilePlan(g, roots, size)
            _grow(plan)
            # a root that would only slice a value that stays whole saves nothing
            useful = [r for r in roots if g.reads[r][0][0] in plan.chain or _makes_axis(g.reads[r][0][1])]
            if useful == roots:
                break
            roots = useful
        if roots:
            for k in plan.chain + plan.roots:
                for i, (src, dep) in enumerate(g.reads[k]):
                    if src not in plan.chain and (k in roots or plan.operand_role(k, i) == "tiled") \
                            and _makes_axis(dep):
                        plan.made.append((k, i))
            yield plan


def _makes_axis(dep) -> bool:
    """Whether a read's leading axis is made by its dependence (one unit-step slice)."""
    slices = [c for c in dep if ":" in c]
    return len(slices) == 1 and slices[0].count(":") == 1


def _grow(plan: TilePlan) -> None:
    """The largest set of row-wise ops feeding the roots, read (at the identity)
    only by the set and the roots; producers first."""
    g, roots = plan.g, set(plan.roots)
    members: set[int] = set()
    stack = list(roots)
    while stack:
        k = stack.pop()
        for i, (src, dep) in enumerate(g.reads[k]):
            if src is None or src in members or src in roots or list(dep) != list(g.domain[k]):
                continue
            if plan.row_wise(src) and plan.operand_role(k, i) == "tiled":
                members.add(src)
                stack.append(src)
    changed = True
    while changed:     # drop members that something outside reads whole, to a fixed point
        changed = False
        inside = _reachable(g, roots, members)
        for k in sorted(members):
            outside = any(reader not in members | roots or list(g.reads[reader][i][1]) != list(g.domain[reader])
                          for reader, i in g.readers[k])
            if outside or k not in inside:
                members.discard(k)
                changed = True
    plan.chain = [k for k in range(len(g.ops)) if k in members]


def _reachable(g: View, roots: set, members: set) -> set:
    seen, stack = set(), list(roots)
    while stack:
        k = stack.pop()
        for src, dep in g.reads[k]:
            if src in members and src not in seen and list(dep) == list(g.domain[k]):
                seen.add(src)
                stack.append(src)
    return seen


def tiledvalue_bytes(p: TilePlan, assume: int) -> int:
    """The largest value that tiling makes one tile of: a result of the chain or a
    read whose dependence makes the axis (0: tiling would only slice values that
    stay whole, and save nothing)."""
    g = p.g
    sizes = [value_bytes(g.ops[k].results[0].type, assume) for k in p.chain]
    sizes += [value_bytes(read_type(g.ops[k].operands[i], tuple(g.reads[k][i][1])), assume) for k, i in p.made]
    return max(sizes, default=0)


@dataclass
class SdgTile(ModulePass):
    """Tiles large reductions over a new temporal dim of tiles (see the module doc)."""

    name: ClassVar[str] = "sdg-tile"
    summary: ClassVar[str] = ("Compute the chain of a large reduction one tile of rows at a time, over a new "
                              "temporal dim, padding and masking the last tile")
    tile: int = option(0, "rows per tile (0: chosen so that the chain's largest value is about tile-bytes "
                          "per tile)")
    tile_bytes: int = option(1 << 18, "with tile=0: the bytes of the chain's largest value in one tile")
    min_bytes: int = option(1 << 20, "tile only where a tiled value has at least this many bytes at one point")
    assume_bound: int = option(1024, "the value of every bound and step when sizes are estimated")

    def run(self, op: ir.Operation) -> None:
        if self.tile < 0 or (self.tile == 0 and self.tile_bytes < 1):
            raise PassFailure(f"sdg-tile: tile must be >= 1 (or 0, with tile-bytes >= 1), got tile={self.tile} "
                              f"tile-bytes={self.tile_bytes}", op)
        self.num_tiled = 0
        for graph in ops_named(op, "sdg.graph"):
            limit = len(graph.regions[0].blocks[0].operations)   # each rewrite removes a root
            while True:
                g = View(graph)
                derived = set(derived_bounds(graph))
                chosen = next(((p, t, b) for p in _plans(g, derived) for b in [tiledvalue_bytes(p, self.assume_bound)]
                               if b >= max(1, self.min_bytes) for t in [self._rows(p, b)] if t is not None), None)
                if chosen is None:
                    break
                limit -= 1
                if limit < 0:
                    raise PassFailure("internal error in sdg-tile: the reductions it makes are tiled again", graph)
                plan, tile, chain_bytes = chosen
                _rewrite(graph, plan, tile, self.assume_bound, chain_bytes)
                self.num_tiled += 1

    def _rows(self, plan: TilePlan, largest: int) -> int | None:
        """The plan's rows per tile (None: its axis is static and fits in one tile);
        `largest`: the bytes of the chain's largest value at assume-bound."""
        tile = self.tile
        if not tile:     # the cost model: rows of the chain's largest value, at assume-bound, in tile-bytes
            rows = _rows_at(plan.size, self.assume_bound)
            tile = max(1, self.tile_bytes * rows // largest) if rows and largest else 64
        if plan.size.isdigit() and int(plan.size) <= tile:
            return None
        return tile


def _rows_at(size: str, assume: int) -> int:
    """The axis's size with every symbol at `assume` (0 when it does not evaluate)."""
    try:
        e = parse(size)
        return max(0, int(evaluate(e, {s.name: assume for s in free_symbols(e)})))
    except (SymbolicError, ValueError, TypeError, ZeroDivisionError):
        return 0


# -- the rewrite --------------------------------------------------------------------

def _new_dim(graph: ir.Operation, size: str, tile: int) -> tuple[str, str]:
    """Appends n < N = ceil(size / tile) to the graph's dims; returns (n, N)."""
    steps = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])]
    bounds = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["bounds"])]
    derived = derived_bounds(graph)
    taken = {s.lower() for s in steps + bounds}
    k = 0
    while (f"n{k}" if k else "n") in taken or (f"N{k}" if k else "N").lower() in taken:
        k += 1
    step, bound = (f"n{k}", f"N{k}") if k else ("n", "N")
    count = mlir_text(parse(f"({size} + {tile - 1}) // {tile}"))
    ctx = graph.context
    graph.attributes["steps"] = ir.ArrayAttr.get([ir.StringAttr.get(s, ctx) for s in steps + [step]], ctx)
    graph.attributes["bounds"] = ir.ArrayAttr.get([ir.StringAttr.get(b, ctx) for b in bounds + [bound]], ctx)
    texts = [derived.get(b, "") for b in bounds] + [count]
    graph.attributes["derived"] = ir.ArrayAttr.get([ir.StringAttr.get(t, ctx) for t in texts], ctx)
    return step, bound


def _rewrite(graph: ir.Operation, plan: TilePlan, tile: int, assume: int, chain_bytes: int) -> None:
    g = plan.g
    ctx = graph.context
    size = plan.size
    exact = size.isdigit() and int(size) % tile == 0
    largest = _largest_size(g, size, plan.domain)
    n, count = _new_dim(graph, largest, tile)
    if largest != size:     # a growing prefix: the tiles it has at its point
        count = mlir_text(parse(f"({size} + {tile - 1}) // {tile}"))
    domain = list(plan.domain)
    tdomain = domain + [n]
    start = f"{tile} * {n}"
    ident = list(tdomain)
    new: dict[int, ir.Value] = {}
    reads: dict[ir.Value, tuple[int, list, list]] = {}   # a tiled value: its op in the plan, operands, deps

    padded: dict[tuple, ir.Value] = {}
    clamped: list[ir.Value] = []   # the rows min(64 n + j, D - 1), made once, read by every clamped tile

    def padded_tile(o: ir.Operation, value: ir.Value, dep: list, shape: list, elt: str) -> tuple[ir.Value, list]:
        """The n-th tile of a whole value whose size the tile does not divide:
        the value read whole and padded once per point of the reductions'
        domain to N tiles (a size fixed by the bounds), then a slice of a static
        `tile` rows, which a loop compiled with static shapes can run (a slice
        of the last tile's `min(T - 64 n, 64)` rows could not)."""
        key = (value, tuple(dep))
        used = set().union(*({s.name for s in free_symbols(parse(c))} for c in dep)) if dep else set()
        at = [d for d in domain if d in used]   # the dims the read uses: padded once per epoch, not per step
        with ctx, o.location, ir.InsertionPoint(o):
            if key not in padded:
                rows = mlir_text(parse(f"{tile} * (({size} + {tile - 1}) floordiv {tile})"))
                padded[key] = create_op(
                    "sdg.pad", tensor_type([rows] + shape[1:], elt, ctx), [value], [dep], at,
                    {"dim": ir.IntegerAttr.get(i64_type(ctx), 0), "before": expr_attr("0", ctx),
                     "after": expr_attr(mlir_text(parse(f"{rows} - ({size})")), ctx),
                     "value": ir.FloatAttr.get(ir.F64Type.get(ctx), 0.0)}, ctx)
            return create_op("sdg.slice", tensor_type([str(tile)] + shape[1:], elt, ctx), [padded[key]], [at],
                             tdomain, {"dim": ir.IntegerAttr.get(i64_type(ctx), 0), "start": expr_attr(start, ctx)},
                             ctx), ident

    def clamped_tile(o: ir.Operation, value: ir.Value, dep: list, shape: list, elt: str) -> tuple[ir.Value, list]:
        """The n-th tile of a value the tile size may not divide, as `tile` rows
        at the static shape a compiled loop needs: rows `min(64 n + j, D - 1)`
        of the whole value (`sdg.index_select`), the last tile's rows past D
        repeating row D - 1, which the mask before each partial reduction
        leaves out (a slice of `min(D - 64 n, 64)` rows padded to 64 would
        have a shape that varies with n, and run from the host)."""
        i64 = i64_type(ctx)
        vec = tensor_type([str(tile)], "i64", ctx)
        with ctx, o.location, ir.InsertionPoint(o):
            if not clamped:
                iota = create_op("sdg.iota", vec, [], [], tdomain, {"dim": ir.IntegerAttr.get(i64, 0)}, ctx)
                first = create_op("sdg.symbol_value", tensor_type([], "i64", ctx), [], [], tdomain,
                                  {"expr": expr_attr(start, ctx)}, ctx)
                last = create_op("sdg.symbol_value", tensor_type([], "i64", ctx), [], [], tdomain,
                                 {"expr": expr_attr(mlir_text(parse(f"{size} - 1")), ctx)}, ctx)
                kind = ir.IntegerType.get_signless(32, ctx)
                rows = create_op("sdg.binary", vec, [iota, first], [ident, ident], tdomain,
                                 {"kind": ir.IntegerAttr.get(kind, int(enums.BinaryKind.add))}, ctx)
                clamped.append(create_op("sdg.binary", vec, [rows, last], [ident, ident], tdomain,
                                         {"kind": ir.IntegerAttr.get(kind, int(enums.BinaryKind.min))}, ctx))
            return create_op("sdg.index_select", tensor_type([str(tile)] + shape[1:], elt, ctx), [value, clamped[0]],
                             [dep, ident], tdomain, {"dim": ir.IntegerAttr.get(i64, 0)}, ctx), ident

    def tile_of(k: int, i: int) -> tuple[ir.Value, list]:
        """Operand i of op k, as one tile (read at the identity of tdomain)."""
        o = g.ops[k]
        src, dep = g.reads[k][i]
        value = o.operands[i]
        read = read_type(value, tuple(dep))
        shape, elt = tensor_shape(read), tensor_element_type(read)
        slices = [j for j, c in enumerate(dep) if ":" in c]
        if not exact:
            if largest == size and 4 * value_bytes(read, assume) <= chain_bytes:
                return padded_tile(o, value, dep, shape, elt)
            return clamped_tile(o, value, dep, shape, elt)
        if len(slices) == 1 and dep[slices[0]].count(":") == 1:   # the dependence makes the axis: read the tile
            lo = mlir_text(parse(f"{dep[slices[0]].split(':')[0]} + {start}"))
            return value, dep[:slices[0]] + [f"{lo}:{mlir_text(parse(f'({lo}) + {tile}'))}"] + dep[slices[0] + 1:]
        with ctx, o.location, ir.InsertionPoint(o):                # slice the n-th tile of the whole value
            return create_op("sdg.slice", tensor_type([str(tile)] + shape[1:], elt, ctx), [value], [dep], tdomain,
                             {"dim": ir.IntegerAttr.get(i64_type(ctx), 0), "start": expr_attr(start, ctx)}, ctx), ident

    for k in plan.chain:
        o = g.ops[k]
        operands, deps = [], []
        for i, (src, dep) in enumerate(g.reads[k]):
            if src in new:
                operands.append(new[src])
                deps.append(list(dep) + [n])
            elif plan.operand_role(k, i) == "broadcast":
                operands.append(o.operands[i])
                deps.append(list(dep))
            else:
                v, d = tile_of(k, i)
                operands.append(v)
                deps.append(d)
        shape = tensor_shape(o.results[0].type)
        result = tensor_type([str(tile)] + shape[1:], tensor_element_type(o.results[0].type), ctx)
        attrs = {o.attributes[j].name: o.attributes[j].attr for j in range(len(o.attributes))
                 if o.attributes[j].name not in ("deps", "domain")}
        with ctx, o.location, ir.InsertionPoint(o):
            new[k] = create_op(o.name, result, operands, deps, tdomain, attrs, ctx)
        reads[new[k]] = (k, operands, deps)

    for r in plan.roots:
        reduce_tiles(plan, r, new, reads, tile_of, n, count, tile, exact)
    for k in plan.roots + list(reversed(plan.chain)):
        if list(g.ops[k].results[0].uses):
            raise PassFailure("internal error in sdg-tile: a tiled op is still read", g.ops[k])
        g.ops[k].erase()
