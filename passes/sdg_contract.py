"""sdg-contract: fold a sum over the batch axis of a batched matmul into the
matmul's contraction.

A vectorized weight gradient sums per-step outer products over the steps:
`dW = sum_t h[t]^T @ g[t]`, which sdg-vectorize leaves as a batched matmul of
the transposed activations `(T, m, k)` with the output gradients `(T, k, n)`,
then `reduce sum [0]` over the `(T, m, n)` products. The same value is one
matmul whose contraction runs over both axes: `h` reshaped to `(T * k, m)`,
transposed, times `g` reshaped to `(T * k, n)`. Same multiply-adds, but no
`(T, m, n)` intermediate to write and read back, and one large matmul in place
of T small ones (on the 2-core CPU, 200 products of (64, 64) by (64, 64): 3.2
ms batched and summed, 2.6 ms contracted, in XLA).

The pass rewrites `reduce sum [0]` (with or without `keepdim`) of a matmul
when:
* the reduction is the matmul's only reader, reads it at the identity and has
  its domain;
* the matmul's left operand is a `permute [0, 2, 1]` of a rank-3 value `h`
  (T, k, m), read at the identity of the permute's domain (the transpose then
  costs nothing: it folds into the matmul's operand layout), and the right
  operand is rank 3, `(T, k, n)`, with the same T and k as read;
* T and k are the same at every point of the domain (T mentions no step of
  it: a size that varies with the point, `t + 1`, stays batched so that the
  padded kernels of a varying axis still apply);
* the element types agree.

With several leading axes summed (a gradient over dims i and t: `sum [0, 1]`
of `(I, T, k, m)`-shaped products) all of them merge into the contraction.

A gradient of few columns (n = 1, a value head; 2 <= n <= 8 with m >= 32, a
policy head) is contracted one column at a time, `g[..., c]^T @ h` stacked:
XLA on CPU runs the transposed product h^T @ g slowly when n is small (12800
rows of 64, n = 2: 0.91 ms; by columns 0.11 ms).

When one operand is the same at every t (a weight of rank <= 2 that
numpy.matmul broadcasts) and the summed axes are the other's (its batch axes,
or the rows of a left matrix), the sum moves onto that operand instead:
`sum_t a[t] @ W` -> `(sum_t a[t]) @ W`, T times fewer multiply-adds; this
needs no condition on T.

Refused (left as they are): sums over axes that are not the leading ones, a
sum of some batch axes of a product of two batched operands, a matmul read by
another op too, a left operand that is not such a transpose (merging its
batch axes into the contraction would need a copy of it), point-varying batch
sizes in a contraction, other reductions (max, mean, ...).

Before (a 64-64 layer's weight gradient over an episode, per iteration i):

    %ht = sdg.permute [0, 2, 1] %h[i, 0:T] domain [i] : (<[64, 64]>) -> <[T, 64, 64]>
    %p = sdg.matmul %ht[i], %g[i] domain [i] : (<[T, 64, 64]>, <[T, 64, 64]>) -> <[T, 64, 64]>
    %dw = sdg.reduce sum [0] %p[i] domain [i] : (<[T, 64, 64]>) -> <[64, 64]>

After `sdg-contract`:

    %hr = sdg.reshape %h[i, 0:T] domain [i] : (<[64, 64]>) -> <[64 * T, 64]>
    %ht = sdg.permute [1, 0] %hr[i] domain [i] : (<[64 * T, 64]>) -> <[64, 64 * T]>
    %gr = sdg.reshape %g[i] domain [i] : (<[T, 64, 64]>) -> <[64 * T, 64]>
    %dw = sdg.matmul %ht[i], %gr[i] domain [i] : (<[64, 64 * T]>, <[64 * T, 64]>) -> <[64, 64]>
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from tidal.dialects.attrs import expr_attr, tensor_element_type, tensor_shape
from tidal.symbolic import SymbolicError, parse, simplify, to_text

from .base import ModulePass, sdg_graphs
from .sdg_build import create as _create, i64_attr, kind_name as _enum_name, mentions as _mentions
from .sdg_graph_view import View
from .transform_utils import op_attrs, read_shape

__all__ = ["SdgContract"]


def _same(a: str, b: str) -> bool:
    try:
        return parse(a).same(parse(b))
    except SymbolicError:
        return False


# a weight gradient h^T @ g with at most this many columns, h at least MIN_ROWS_FOR_COLUMNS
# wide, is computed a column at a time (see _rewrite); with h narrow (a first layer's
# 4 inputs) the transposed product is already fast (0.06 ms for 12800 rows, n = 2)
MAX_COLUMNS, MIN_ROWS_FOR_COLUMNS = 8, 32


def _columns(m: str, n: str) -> bool:
    return n.isdigit() and 2 <= int(n) <= MAX_COLUMNS and m.isdigit() and int(m) >= MIN_ROWS_FOR_COLUMNS


def _product(a: str, b: str) -> str | None:
    try:
        return to_text(simplify(parse(a) * parse(b)), mlir=True)
    except SymbolicError:
        return None


class _Contractions:
    def __init__(self, graph: ir.Operation):
        self.g = View(graph)

    def first(self) -> bool:
        """Rewrites the first summed batched matmul this pass handles; False if none."""
        return any(o.name == "sdg.reduce" and self._try(k) for k, o in enumerate(self.g.ops))

    def _try(self, r: int) -> bool:
        g, red = self.g, self.g.ops[r]
        dims = list(ir.DenseI64ArrayAttr(red.attributes["dims"]))
        if _enum_name(red) != "sum" or not dims or dims != list(range(len(dims))):
            return False
        src, dep = g.reads[r][0]
        if src is None or g.ops[src].name != "sdg.matmul" or list(dep) != list(g.domain[src]) \
                or g.domain[src] != g.domain[r] or len(g.readers[src]) != 1:
            return False
        mm = g.ops[src]
        if self._distribute(r, src, len(dims)):
            return True
        rank = len(dims) + 2          # every batch axis summed: the product is one matrix
        (p, pdep), (_, bdep) = g.reads[src]
        if p is None or g.ops[p].name != "sdg.permute" or list(pdep) != list(g.domain[p]) \
                or list(ir.DenseI64ArrayAttr(g.ops[p].attributes["perm"])) != dims + [rank - 1, rank - 2]:
            return False
        perm = g.ops[p]
        xdep = g.reads[p][0][1]
        xshape = read_shape(perm.operands[0], xdep)             # (T, .., k, m)
        bshape = read_shape(mm.operands[1], bdep)               # (T, .., k, n)
        if xshape is None or bshape is None or len(xshape) != rank or len(bshape) != rank:
            return False
        rows, (m, n) = xshape[:-1], (xshape[-1], bshape[-1])
        if not all(_same(a, b) for a, b in zip(rows, bshape[:-1])) \
                or any(_mentions(x, s) for x in rows for s in g.domain[r]):
            return False
        elem = tensor_element_type(red.results[0].type)
        if any(tensor_element_type(v.type) != elem for v in (perm.operands[0], mm.operands[1])):
            return False
        merged = rows[0]
        for size in rows[1:]:
            merged = merged and _product(merged, size)
        if merged is None:
            return False
        self._rewrite(r, src, p, merged, m, n, xdep, bdep, elem, bshape)
        return True

    def _distribute(self, r: int, src: int, summed: int) -> bool:
        """sum_t A[t] @ W -> (sum_t A[t]) @ W (and W @ B[t] likewise): the summed
        leading axes of the product are axes of one operand only (batch axes of
        either, or the rows of a left matrix); the other has rank <= 2 (the same
        at every t: numpy.matmul broadcasts it)."""
        g, red, mm = self.g, self.g.ops[r], self.g.ops[src]
        shapes = [read_shape(v, dep) for v, (_, dep) in zip(mm.operands, g.reads[src])]
        if any(s is None for s in shapes):
            return False
        left, right = len(shapes[0]), len(shapes[1])
        if right >= 3 and left <= 2:
            b, limit = 1, right - 2      # the summed axes are batch axes of the right operand
        elif left >= 2 and right <= 2:
            b, limit = 0, left - 1       # batch axes or rows of the left operand
        else:
            return False
        if summed > limit:
            return False
        bdep = g.reads[src][b][1]
        elem = tensor_element_type(red.results[0].type)
        if any(tensor_element_type(v.type) != elem for v in mm.operands):
            return False
        dom = list(g.domain[r])
        keep = shapes[b][summed:] if "keepdim" not in red.attributes else ["1"] * summed + shapes[b][summed:]
        total = _create(red, "sdg.reduce", keep, elem, [(mm.operands[b], bdep)], dom, op_attrs(red))
        pairs = [(total, dom), (mm.operands[1 - b], g.reads[src][1 - b][1])]
        out = _create(red, "sdg.matmul", tensor_shape(red.results[0].type), elem, pairs if b == 0 else pairs[::-1],
                      dom, {})
        red.results[0].replace_all_uses_with(out)
        red.erase()
        mm.erase()
        return True

    def _rewrite(self, r: int, src: int, p: int, merged: str, m: str, n: str, xdep, bdep, elem, bshape) -> None:
        g, red = self.g, self.g.ops[r]
        mm, perm = g.ops[src], g.ops[p]
        pdom, dom = list(g.domain[p]), list(g.domain[r])
        # The transposed operand is made where the permute was, not before the sum: isl's
        # whole-component scheduler is sensitive to statement order, and ops that read a
        # whole episode (h[i, 0:T]) moved later fused REINFORCE n-step's return loop
        # into its acting loop with guards in every step: 2x slower in XLA.
        flat = _create(perm, "sdg.reshape", [merged, m], elem, [(perm.operands[0], xdep)], pdom, {})
        if n == "1":
            # One column (a value head's weight gradient): g^T @ h, whose g^T is a reshape.
            # XLA on CPU runs h^T @ g as a transposed copy of h then a matrix-vector
            # product: 12800 rows of 64, 0.48 ms plus the copy, against 0.12 ms.
            row = _create(red, "sdg.reshape", ["1", merged], elem, [(mm.operands[1], bdep)], dom, {})
            out = _create(red, "sdg.matmul", ["1", m], elem, [(row, dom), (flat, pdom)], dom, {})
        elif _columns(m, n):
            # A few columns (a policy head's, n = 2): one g[..., c]^T @ h per column, stacked.
            # XLA on CPU runs h^T @ g (12800 rows of 64, n = 2) at 0.91 ms; the columns
            # at 0.11 ms (n = 4: 0.28 against 0.99; n = 8: 0.44 against 1.11; n = 16: even).
            rows = []
            for c in range(int(n)):
                col = _create(red, "sdg.take", bshape[:-1], elem, [(mm.operands[1], bdep)], dom,
                              {"dim": i64_attr(len(bshape) - 1, red.context), "index": expr_attr(str(c), red.context)})
                row = _create(red, "sdg.reshape", ["1", merged], elem, [(col, dom)], dom, {})
                rows.append((_create(red, "sdg.matmul", ["1", m], elem, [(row, dom), (flat, pdom)], dom, {}), dom))
            stacked = _create(red, "sdg.concat", [n, m], elem, rows, dom, {"dim": i64_attr(0, red.context)})
            out = _create(red, "sdg.permute", [m, n], elem, [(stacked, dom)], dom,
                          {"perm": ir.DenseI64ArrayAttr.get([1, 0], red.context)})
        else:
            lhs = _create(perm, "sdg.permute", [m, merged], elem, [(flat, pdom)], pdom,
                          {"perm": ir.DenseI64ArrayAttr.get([1, 0], red.context)})
            rhs = _create(red, "sdg.reshape", [merged, n], elem, [(mm.operands[1], bdep)], dom, {})
            out = _create(red, "sdg.matmul", [m, n], elem, [(lhs, pdom), (rhs, dom)], dom, {})
        if n == "1" or "keepdim" in red.attributes:
            out = _create(red, "sdg.reshape", tensor_shape(red.results[0].type), elem, [(out, dom)], dom, {})
        red.results[0].replace_all_uses_with(out)
        red.erase()
        mm.erase()
        if not list(perm.results[0].uses):
            perm.erase()


@dataclass
class SdgContract(ModulePass):
    """Folds a batched matmul's sum over its batch axis into the contraction (see the module doc)."""

    name: ClassVar[str] = "sdg-contract"
    summary: ClassVar[str] = ("Fold a sum over the leading axes of a matmul into the matmul: a vectorized weight "
                              "gradient contracts over steps and rows; sum_t a[t] @ W becomes (sum_t a[t]) @ W")

    def run(self, op: ir.Operation) -> None:
        self.num_contracted = 0   # for tests and callers
        for graph in sdg_graphs(op, "sdg-contract"):
            with graph.context:
                while _Contractions(graph).first():   # one rewrite per view
                    self.num_contracted += 1
