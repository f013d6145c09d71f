"""sdg-lift: replace per-point work over growing windows of a temporal dim by
one scan over the whole dim (TEMPO section 4.1, "lifting", Fig. 10).

`y[t] = x[0:t + 1].sum(0)` sums t + 1 elements at every t: O(T^2) work for
all t. The same values are the cumulative sum of `x[0:T]` read at t, O(T).
Likewise for the suffix windows of returns: `g[t] = r[t:T].discounted_sum(gamma)`
is a reverse discounted scan of `r[0:T]` read at t. The pass rewrites, for a
temporal dim d < D of an op's domain:

* a reduction `sum`/`prod`/`max`/`min` over axis 0 of a window value
  -> the scan `cumsum`/`cumprod`/`cummax`/`cummin` of the whole-range value,
  read with `sdg.take 0 at <d>` (an `sdg.slice` of size 1 with `keepdim`);
* a `linear_scan` along axis 0 of window values (the discounts with
  per-step factors of `td.discounted_sum(x, gamma_tensor)`) -> the same scan
  over the whole range, read with `sdg.slice 0 at <d>` (a `take` of that
  slice becomes a `take` of the scan: `take 0 at <0>` -> `take 0 at <d>`);
* `sum(x * gamma ** k)` over axis 0, k the position in the window and gamma
  a scalar without d (`td.discounted_sum(x, 0.99)`) -> a reverse
  `linear_scan` of (gamma, x) over the whole range, read at d.

A window value is a read `x[..., d:D, ...]` (a suffix: only reverse scans
and reductions) or `x[..., 0:d + 1, ...]` (a prefix: forward scans and
reductions) of a producer over d, its first slice (axis 0 of the value),
or an elementwise op (unary, binary, where, cast) over d whose operands are
window values or do not depend on d (they broadcast along the window), its
leading axis the window's length. Such a chain is cloned once over the
domain without d, reading `x[..., 0:D, ...]`: a suffix at d or a prefix up to
d of the whole-range scan is exactly the scan of the window, since a reverse
scan at a position reads only what follows it up to the end, a forward one
only what precedes it from the start.

A sum over any other window of the step, `x[lo:hi]` with lo or hi using d
(a sliding window, `x[max(0, d - 7):d + 1]`, or n-step's `x[d:min(d + n, D)]`),
becomes `cz[hi] - cz[lo]`, cz the cumulative sum of the whole range with a
zero row in front: O(D) instead of O(D * n). It is accumulated in f64 and cast
back (a difference of two large float32 prefix sums would lose the window's
digits), so only float types of at most 32 bits are lifted this way, and
only windows that can hold more than `min-window` rows (default 32). On the
2-core CPU, a sum of exp(x) over windows of w rows of 64 floats, T = 2,000,
took (direct / lifted, ms): w = 8: 1.4 / 2.3, 16: 1.5 / 2.6, 32: 1.3 / 1.8,
64: 6.0 / 2.3, 512: 19.9 / 1.7 (the lifted form is three XLA programs
instead of one loop).

Refused (left as they are): ops on a cycle (a recurrence reading the window
would wait for the whole range it feeds), other reductions (max, prod, ...)
and scans over windows that are neither such a suffix nor such a prefix,
float64 sums over such windows, reductions over other axes or several,
`any`/`all`/`argmax`/`argmin`, and window chains through other ops (matmul,
reshape, ...). The cost of the rewrite is that
the scan runs once all of the range is ready: for a suffix that is when the
first window is ready anyway; for a prefix the earlier points wait, which
the schedule absorbs (nothing on a cycle reads them).

Before (Monte-Carlo returns cut at episode ends, i < I iterations, t < T steps):

    %a = sdg.binary mul %c[], %m[i, t:T] domain [i, t] : (...) -> !tidal.tensor<[T - t, 4], f32>
    %s = sdg.linear_scan 0 reverse %a[i, t], %r[i, t:T] domain [i, t] : (...) -> !tidal.tensor<[T - t, 4], f32>
    %g = sdg.take 0 at <0> %s[i, t] domain [i, t] : (...) -> !tidal.tensor<[4], f32>

After `sdg-lift` (O(T) per iteration instead of O(T^2)):

    %a2 = sdg.binary mul %c[], %m[i, 0:T] domain [i] : (...) -> !tidal.tensor<[T, 4], f32>
    %s2 = sdg.linear_scan 0 reverse %a2[i], %r[i, 0:T] domain [i] : (...) -> !tidal.tensor<[T, 4], f32>
    %g = sdg.take 0 at <t> %s2[i] domain [i, t] : (...) -> !tidal.tensor<[4], f32>

Option `dims`: the steps to lift over, comma-separated (default: every step).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects.attrs import expr_attr, index_attr, tensor_element_type, tensor_shape
from tidal.dialects.op_properties import ops_with
from tidal.symbolic import Const, SymbolicError, evaluate, parse, simplify, to_text

from .base import ModulePass, graph_steps, option
from .sdg_build import I64, create as _create, kind_name as _enum_name, mentions as _mentions
from .sdg_graph_view import View, cyclic_over, stop_condition_ops
from .transform_utils import erase_dead, op_attrs, read_shape

__all__ = ["SdgLift"]

ELEMENTWISE = ops_with("elementwise")
SCAN_OF = {"sum": "cumsum", "prod": "cumprod", "max": "cummax", "min": "cummin"}
def _same(text: str, expr) -> bool:
    try:
        return parse(text).same(expr)
    except SymbolicError:
        return False


class Graph(View):
    """One graph block's ops (sdg_vectorize's view) with the op index of each value."""

    def __init__(self, graph: ir.Operation):
        super().__init__(graph)
        self.index = {value: k for k, o in enumerate(self.ops) for value in o.results}


class _Lifter:
    """Lifts the windows over one step (see the module doc)."""

    def __init__(self, g: Graph, step: str, min_window: int = 0):
        self.g, self.step, self.min_window = g, step, min_window
        self.bound = g.bounds[g.steps.index(step)]
        self.cyclic = cyclic_over(g, step)
        self.clones: dict = {}
        self.created: list = []   # clones, erased at the end if a failed rewrite left them unread
        self.count = 0

    # -- windows ---------------------------------------------------------
    def window_of(self, size: str) -> str | None:
        """'suffix' for a leading axis of size D - d, 'prefix' for d + 1."""
        d, D = parse(self.step), parse(self.bound)
        if _same(size, simplify(D - d)):
            return "suffix"
        if _same(size, simplify(d + 1)):
            return "prefix"
        return None

    def _read_window(self, src: int | None, dep: list[str]) -> str | None:
        """The window kind of a read `x[.., d:D, ..]` / `x[.., 0:d + 1, ..]`, its first slice."""
        g, step = self.g, self.step
        if src is None or step not in g.domain[src] or len(dep) != len(g.domain[src]):
            return None
        pos = g.domain[src].index(step)
        c = dep[pos]
        if c.count(":") != 1 or any(":" in x for x in dep[:pos]):
            return None
        if any(_mentions(x, step) for j, x in enumerate(dep) if j != pos):
            return None
        lo, hi = c.split(":")
        if _same(lo, parse(step)) and _same(hi, parse(self.bound)):
            return "suffix"
        if _same(lo, Const(0)) and _same(hi, simplify(parse(step) + 1)):
            return "prefix"
        try:   # another window of the step (a sliding one): only sums lift it (_window_sum)
            ends = [simplify(parse(x)) for x in (lo, hi)]
        except SymbolicError:
            return None
        if any(any(sym.name == step for sym in e.free_symbols) for e in ends):
            return f"range {to_text(ends[0], mlir=True)}:{to_text(ends[1], mlir=True)}"
        return None

    def has_window_size(self, size: str, kind: str) -> bool:
        """Whether a leading axis of `size` is the window of `kind`."""
        if kind.startswith("range "):
            lo, hi = kind[len("range "):].split(":")
            return _same(size, simplify(parse(hi) - parse(lo)))
        return self.window_of(size) == kind

    def lifted(self, k: int, i: int, kind: str, rank: int):
        """Operand i of op k lifted to the whole range: (value, components over the
        domain without the step), or None. `rank`: the rank of the window value."""
        g, step = self.g, self.step
        src, dep = g.reads[k][i]
        value = g.ops[k].operands[i]
        if self._read_window(src, dep) == kind:
            pos = g.domain[src].index(step)
            return value, dep[:pos] + [f"0:{self.bound}"] + dep[pos + 1:]
        read = read_shape(value, dep)
        if read is None:
            return None
        if not any(_mentions(x, step) for x in dep):   # constant along the window: broadcasts
            if len(read) < rank or (len(read) == rank and read[0] == "1"):
                return value, dep
            return None
        if src is None or dep != list(g.domain[src]) or step not in g.domain[src]:
            return None
        clone = self._clone(src, kind)
        if clone is None:
            return None
        return clone, [x for x in dep if x != step]

    def _clone(self, k: int, kind: str):
        """Elementwise op k (over the window) computed over the whole range, or None."""
        if (k, kind) in self.clones:
            return self.clones[(k, kind)]
        o = self.g.ops[k]
        self.clones[(k, kind)] = None
        if o.name not in ELEMENTWISE or len(o.results) != 1 or k in self.cyclic:
            return None
        shape = tensor_shape(o.results[0].type)
        if not shape or not self.has_window_size(shape[0], kind) or any(_mentions(s, self.step) for s in shape[1:]):
            return None
        operands = [self.lifted(k, i, kind, len(shape)) for i in range(len(o.operands))]
        if any(x is None for x in operands):
            return None
        new = _create(o, o.name, [self.bound] + shape[1:], tensor_element_type(o.results[0].type),
                      operands, self._domain(k), op_attrs(o))
        self.clones[(k, kind)] = new
        self.created.append(new.owner)
        return new

    def _domain(self, k: int) -> list[str]:
        return [x for x in self.g.domain[k] if x != self.step]

    # -- rewrites --------------------------------------------------------
    def run(self) -> None:
        g = self.g
        kept = stop_condition_ops(g, self.step)   # a scan over the whole step would read its bound
        for k, o in enumerate(list(g.ops)):
            if self.step not in g.domain[k] or k in self.cyclic or len(o.results) != 1 or k in kept:
                continue
            if o.name == "sdg.linear_scan":
                self._linear_scan(k)
            elif o.name == "sdg.reduce":
                self._reduce(k)
        for op in reversed(self.created):
            if not list(op.results[0].uses):
                op.erase()

    def factor_out(self) -> None:
        """`sum(a * w, 0)` over a window w, a constant along the window (an expand of
        a value with axis 0 of size 1, read at the point: a gradient broadcast over
        the window) -> `a[0] * sum(w, 0)`, whose sum lifts. The product stays
        for its other readers, if any."""
        g = self.g
        for k, o in enumerate(list(g.ops)):
            if o.name != "sdg.reduce" or _enum_name(o) != "sum" or self.step not in g.domain[k] \
                    or k in self.cyclic:
                continue
            src, dep = g.reads[k][0]
            if src is None or g.ops[src].name != "sdg.binary" or _enum_name(g.ops[src]) != "mul" \
                    or dep != list(g.domain[src]) or src in self.cyclic:
                continue
            shape = tensor_shape(o.operands[0].type)
            rank = len(shape)
            if not rank or [d % rank for d in ir.DenseI64ArrayAttr(o.attributes["dims"])] != [0] \
                    or self.window_of(shape[0]) is None:
                continue
            for c in range(2):
                const = self._constant_along_window(src, c, shape)
                if const is not None:
                    self._factor(k, src, c, const)
                    break

    def _constant_along_window(self, mul: int, i: int, shape: list[str]):
        """(value, components) of x if operand i of `mul` is `expand(x)` to `shape` with
        x's axis 0 of size 1, read at the point."""
        g = self.g
        src, dep = g.reads[mul][i]
        if src is None or g.ops[src].name != "sdg.expand" or dep != list(g.domain[src]):
            return None
        if tensor_shape(g.ops[src].results[0].type) != shape:
            return None
        x_dep = g.reads[src][0][1]
        x_shape = read_shape(g.ops[src].operands[0], x_dep)
        if x_shape is None or len(x_shape) != len(shape) or x_shape[0] != "1" or any(_mentions(a, self.step) for a in x_shape):
            return None
        return g.ops[src].operands[0], x_dep

    def _factor(self, k: int, mul: int, i: int, const) -> None:
        g, o = self.g, self.g.ops[k]
        elem = tensor_element_type(o.results[0].type)
        other = (g.ops[mul].operands[1 - i], g.reads[mul][1 - i][1])
        if tensor_element_type(const[0].type) != elem or tensor_element_type(other[0].type) != elem:
            return
        keep = "keepdim" in o.attributes
        dom = list(g.domain[k])
        summed = _create(o, "sdg.reduce", tensor_shape(o.results[0].type), elem, [other], dom, op_attrs(o))
        factor = const
        if not keep:
            x_shape = read_shape(const[0], const[1])
            factor = (_create(o, "sdg.squeeze", x_shape[1:], elem, [const], dom,
                              {"dim": ir.IntegerAttr.get(I64(), 0)}), dom)
        new = _create(o, "sdg.binary", tensor_shape(o.results[0].type), elem, [factor, (summed, dom)], dom,
                      {"kind": g.ops[mul].attributes["kind"]})
        o.results[0].replace_all_uses_with(new)
        self.count += 1

    def _linear_scan(self, k: int) -> None:
        o = self.g.ops[k]
        shape = tensor_shape(o.results[0].type)
        kind = self.window_of(shape[0]) if shape else None
        if ir.IntegerAttr(o.attributes["dim"]).value != 0 or kind is None or \
                (kind == "suffix") != ("reverse" in o.attributes):
            return
        operands = [self.lifted(k, i, kind, len(shape)) for i in range(2)]
        if any(x is None for x in operands):
            return
        scan = _create(o, "sdg.linear_scan", [self.bound] + shape[1:], tensor_element_type(o.results[0].type),
                       operands, self._domain(k), op_attrs(o))
        self._replace_window(k, scan)

    def _reduce(self, k: int) -> None:
        g, o = self.g, self.g.ops[k]
        red = _enum_name(o)
        read = read_shape(o.operands[0], g.reads[k][0][1])
        if read is None:
            return
        rank = len(read)
        dims = [d % rank for d in ir.DenseI64ArrayAttr(o.attributes["dims"])] if rank else []
        if dims != [0] or red not in SCAN_OF:
            return
        kind = self.window_of(read[0])
        if kind is None:
            if red == "sum" and "keepdim" not in o.attributes:
                self._window_sum(k, read)
            return
        elem = tensor_element_type(o.results[0].type)
        if red == "sum" and kind == "suffix":
            pair = self._discounted(k)
            if pair is not None:
                gamma, x = pair
                full = _create(o, "sdg.expand", [self.bound] + read[1:], elem, [gamma], self._domain(k), {})
                scan = _create(o, "sdg.linear_scan", [self.bound] + read[1:], elem,
                               [(full, self._domain(k)), x], self._domain(k),
                               {"dim": ir.IntegerAttr.get(I64(), 0), "reverse": ir.UnitAttr.get()})
                self._replace_reduction(k, scan)
                return
        x = self.lifted(k, 0, kind, rank)
        if x is None or tensor_element_type(o.operands[0].type) != elem:
            return
        attrs = {"kind": _scan_kind(SCAN_OF[red]), "dim": ir.IntegerAttr.get(I64(), 0)}
        if kind == "suffix":
            attrs["reverse"] = ir.UnitAttr.get()
        scan = _create(o, "sdg.scan", [self.bound] + read[1:], elem, [x], self._domain(k), attrs)
        self._replace_reduction(k, scan)

    def _window_sum(self, k: int, read: list[str]) -> None:
        """The sum over any other window x[lo:hi] of the step (a sliding one,
        x[max(0, d - 7):d + 1]) -> cz[hi] - cz[lo], cz the cumulative sum of the
        whole range with a zero row in front, accumulated in f64 (the difference
        of two large prefix sums would lose a float32 window's digits); floats of
        at most 32 bits only (f64 has no wider type to accumulate in)."""
        g, o = self.g, self.g.ops[k]
        elem = tensor_element_type(o.results[0].type)
        if elem not in ("f32", "f16", "bf16") or tensor_element_type(o.operands[0].type) != elem:
            return
        kind = self._range_kind(k)
        if kind is None or not self.has_window_size(read[0], kind) or self._at_most(read[0], self.min_window):
            return
        x = self.lifted(k, 0, kind, len(read))
        if x is None:
            return
        ctx, rest, dom, full = o.context, read[1:], self._domain(k), list(g.domain[k])
        axis = ir.IntegerAttr.get(I64(), 0)
        wide = _create(o, "sdg.cast", [self.bound] + rest, "f64", [x], dom, {})
        cum = _create(o, "sdg.scan", [self.bound] + rest, "f64", [(wide, dom)], dom,
                      {"kind": _scan_kind("cumsum"), "dim": axis})
        zero = _create(o, "sdg.pad", [to_text(simplify(parse(self.bound) + 1), mlir=True)] + rest, "f64", [(cum, dom)], dom,
                       {"dim": axis, "before": expr_attr("1", ctx), "after": expr_attr("0", ctx),
                        "value": ir.FloatAttr.get(ir.F64Type.get(ctx), 0.0, loc=o.location)})
        ends = [_create(o, "sdg.take", rest, "f64", [(zero, dom)], full,
                        {"dim": axis, "index": expr_attr(to_text(parse(e), mlir=True), ctx)})
                for e in kind[len("range "):].split(":")]
        sub = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(_binary_kind("sub")))
        diff = _create(o, "sdg.binary", rest, "f64", [(ends[1], full), (ends[0], full)], full, {"kind": sub})
        o.results[0].replace_all_uses_with(_create(o, "sdg.cast", rest, elem, [(diff, full)], full, {}))
        self.count += 1

    def _at_most(self, size: str, limit: int) -> bool:
        """Whether a window of `size` never holds more than `limit` rows: its size
        far from the edges (steps 2**20, bounds 2**21), e.g. 8 for min(t + 1, 8)."""
        env = {b: 1 << 21 for b in self.g.bounds}
        env.update({d: 1 << 20 for d in self.g.steps})
        try:
            return evaluate(parse(size), env) <= limit
        except Exception:   # noqa: BLE001  a size the evaluator cannot compute: lift it
            return False

    def _range_kind(self, k: int) -> str | None:
        """The first `range` window read by reduction k's operand chain (elementwise
        ops over the step read at the point)."""
        g, todo, seen = self.g, [k], {k}
        while todo:
            j = todo.pop()
            for src, dep in g.reads[j]:
                kind = self._read_window(src, dep)
                if kind is not None and kind.startswith("range "):
                    return kind
                if src is not None and src not in seen and g.ops[src].name in ELEMENTWISE \
                        and list(dep) == list(g.domain[src]) and self.step in g.domain[src]:
                    seen.add(src)
                    todo.append(src)
        return None

    def _discounted(self, k: int):
        """(gamma operand, lifted x) when op k sums x * gamma ** position over a suffix."""
        g = self.g
        src, dep = g.reads[k][0]
        if src is None or g.ops[src].name != "sdg.binary" or _enum_name(g.ops[src]) != "mul" \
                or dep != list(g.domain[src]) or src in self.cyclic:
            return None
        shape = tensor_shape(g.ops[src].results[0].type)
        for w in range(2):
            gamma = self._powers(src, w)
            if gamma is not None:
                x_read = read_shape(g.ops[src].operands[1 - w], g.reads[src][1 - w][1])
                if x_read != shape:
                    return None
                x = self.lifted(src, 1 - w, "suffix", len(shape))
                return None if x is None else (gamma, x)
        return None

    def _powers(self, k: int, i: int):
        """The scalar gamma (value, components) if operand i of op k is gamma ** iota along
        axis 0 (then unsqueezed at the end), iota the position in the window."""
        g, step = self.g, self.step
        src, dep = g.reads[k][i]
        while src is not None and g.ops[src].name == "sdg.unsqueeze" and dep == list(g.domain[src]):
            o = g.ops[src]
            if ir.IntegerAttr(o.attributes["dim"]).value == 0:
                return None
            src, dep = g.reads[src][0]
        if src is None or g.ops[src].name != "sdg.binary" or _enum_name(g.ops[src]) != "pow" \
                or dep != list(g.domain[src]):
            return None
        (gs, gdep), (ks, kdep) = g.reads[src]
        pw = g.ops[src]
        gamma_read = read_shape(pw.operands[0], gdep)
        if gamma_read is None or gamma_read or any(_mentions(x, step) for x in gdep):
            return None
        while ks is not None and g.ops[ks].name == "sdg.cast" and kdep == list(g.domain[ks]):
            ks, kdep = g.reads[ks][0]
        if ks is None or g.ops[ks].name != "sdg.iota" or ir.IntegerAttr(g.ops[ks].attributes["dim"]).value != 0:
            return None
        iota_shape = tensor_shape(g.ops[ks].results[0].type)
        if len(iota_shape) != 1 or self.window_of(iota_shape[0]) != "suffix":
            return None
        return pw.operands[0], gdep

    def _replace_window(self, k: int, scan: ir.Value) -> None:
        """Readers of the window scan k read `slice 0 at <d>` of `scan` (a take of
        it takes from `scan`); reverse: at d, forward: from 0."""
        o, g = self.g.ops[k], self.g
        suffix = "reverse" in o.attributes
        start = self.step if suffix else "0"
        sliced = None
        for use in list(o.results[0].uses):
            reader = use.owner
            reader_k = g.index.get(reader.results[0]) if len(reader.results) else None
            if reader.name == "sdg.take" and ir.IntegerAttr(reader.attributes["dim"]).value == 0 \
                    and reader_k is not None and g.reads[reader_k][0][1] == list(g.domain[k]):
                idx = to_text(simplify(parse(start) + _expr(reader, "index")), mlir=True)
                reader.operands[0] = scan
                reader.attributes["index"] = expr_attr(idx, reader.context)
                reader.attributes["deps"] = ir.ArrayAttr.get([index_attr(self._domain(k), reader.context)])
                continue
            if sliced is None:
                sliced = _create(o, "sdg.slice", tensor_shape(o.results[0].type),
                                 tensor_element_type(o.results[0].type), [(scan, self._domain(k))],
                                 list(g.domain[k]), {"dim": ir.IntegerAttr.get(I64(), 0),
                                                     "start": expr_attr(start, o.context)})
            reader.operands[use.operand_number] = sliced
        self.count += 1

    def _replace_reduction(self, k: int, scan: ir.Value) -> None:
        """The reduction k becomes a read of `scan` at d (suffix) or d (prefix: its last
        element), `slice` of size 1 with keepdim."""
        o = self.g.ops[k]
        if "keepdim" in o.attributes:
            new = _create(o, "sdg.slice", tensor_shape(o.results[0].type), tensor_element_type(o.results[0].type),
                          [(scan, self._domain(k))], list(self.g.domain[k]),
                          {"dim": ir.IntegerAttr.get(I64(), 0), "start": expr_attr(self.step, o.context)})
        else:
            new = _create(o, "sdg.take", tensor_shape(o.results[0].type), tensor_element_type(o.results[0].type),
                          [(scan, self._domain(k))], list(self.g.domain[k]),
                          {"dim": ir.IntegerAttr.get(I64(), 0), "index": expr_attr(self.step, o.context)})
        o.results[0].replace_all_uses_with(new)
        self.count += 1


def _expr(op: ir.Operation, name: str):
    from tidal.dialects.attrs import expr_text
    return parse(expr_text(op.attributes[name]))


def _binary_kind(name: str) -> int:
    from tidal.dialects import enums
    return getattr(enums.BinaryKind, name)


def _scan_kind(name: str) -> ir.Attribute:
    from tidal.dialects import enums
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(getattr(enums.ScanKind, name)))


@dataclass
class SdgLift(ModulePass):
    """Lifts per-point window scans and reductions into whole-range scans (see the module doc)."""

    name: ClassVar[str] = "sdg-lift"
    summary: ClassVar[str] = ("Replace reductions and scans over growing windows of a temporal dim "
                              "(x[0:t+1].sum, r[t:T].discounted_sum) by one scan over the whole dim")
    dims: str = option("", "steps to lift over, comma-separated (default: every step)")
    min_window: int = option(32, "sums over sliding windows of at most this many rows stay direct sums "
                                 "(the prefix-sum difference costs more than a short window)")

    def run(self, op: ir.Operation) -> None:
        self.num_lifted = 0   # for tests and callers
        for graph, step in graph_steps(op, self.dims, self.name):
            with graph.context:
                factored = _Lifter(Graph(graph), step)
                factored.factor_out()
                lifter = _Lifter(Graph(graph), step, max(0, int(self.min_window)))
                lifter.run()
            self.num_lifted += factored.count + lifter.count
            if lifter.count or factored.count:
                erase_dead(graph)
