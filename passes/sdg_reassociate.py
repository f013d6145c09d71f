"""sdg-reassociate: choose the association of a chain of two matmuls by its
symbolic cost summed over the domain (TEMPO section 4.1, "optimizing symbolically").

`(A @ B) @ C` and `A @ (B @ C)` compute the same value; which is cheaper
depends on the sizes, and in Tidal sizes are symbolic (`t + 1` rows of
`A = k[0:t + 1]`). The product that moves also changes domain: it is computed
over only the dims its operands use, so with B and C weights (no temporal
dim) `B @ C` runs once instead of at every t. The pass compares, for each such
chain, the multiply-adds of both forms summed over every point of their
domains, with every bound set to `bound` (an option, default 256: the size
the program is expected to run at; both costs are polynomials in the bounds),
and rewrites when the other form is strictly cheaper.

Cost of `X @ Y` with X of shape (a, k) and Y of shape (k, n) at one point:
a * k * n. The chain is rewritten only when: both matmuls have operands of
rank 2 as read, the inner product has one reader (the outer one), reads it
at the identity, and is on no cycle; the element types agree; the moved
product's operands and shape use no dim outside its new domain.

Before (scores against a fixed projection, t < T):

    %p = sdg.matmul %k[0:t + 1], %w[] domain [t] : (<[8]>, <[8, 64]>) -> <[t + 1, 64]>
    %s = sdg.matmul %p[t], %v[] domain [t] : (<[t + 1, 64]>, <[64, 2]>) -> <[t + 1, 2]>

After `sdg-reassociate` (8 * 64 * 2 once, then (t + 1) * 8 * 2 per t instead
of (t + 1) * 64 * (8 + 2)):

    %wv = sdg.matmul %w[], %v[] domain [] : (<[8, 64]>, <[64, 2]>) -> <[8, 2]>
    %s = sdg.matmul %k[0:t + 1], %wv[] domain [t] : (<[8]>, <[8, 2]>) -> <[t + 1, 2]>

Refused (left as they are): batched or vector operands, a product read by
another op too, chains on a cycle, mixed element types.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

from tidal.dialects.attrs import index_attr, tensor_element_type, tensor_type
from tidal.symbolic import SymbolicError, evaluate, parse

from .base import ModulePass, option, sdg_graphs
from .sccs import strongly_connected
from .sdg_build import mentions as _mentions
from .sdg_graph_view import View
from .transform_utils import read_shape

__all__ = ["SdgReassociate"]


class _Chains:
    def __init__(self, graph: ir.Operation, bound: int):
        self.g = View(graph)
        self.bound = bound
        comps = strongly_connected(len(self.g.ops), lambda k: [s for s, _ in self.g.reads[k] if s is not None])
        self.cyclic = {k for c in comps for k in c if len(c) > 1 or any(s == k for s, _ in self.g.reads[k])}

    def first(self) -> bool:
        """Rewrites the first chain that is cheaper reassociated; False if none."""
        for k, o in enumerate(self.g.ops):
            if o.name == "sdg.matmul" and k not in self.cyclic and (self._try(k, 0) or self._try(k, 1)):
                return True
        return False

    def _operand(self, k: int, i: int):
        """(value, components, shape as read) of operand i of op k, or None if not rank 2."""
        o = self.g.ops[k]
        dep = self.g.reads[k][i][1]
        shape = read_shape(o.operands[i], dep)
        return None if shape is None or len(shape) != 2 else (o.operands[i], list(dep), shape)

    def _try(self, k: int, side: int) -> bool:
        g, outer = self.g, self.g.ops[k]
        src, dep = g.reads[k][side]
        if src is None or g.ops[src].name != "sdg.matmul" or src in self.cyclic \
                or dep != list(g.domain[src]) or g.domain[src] != g.domain[k] \
                or len(list(g.ops[src].results[0].uses)) != 1:
            return False
        inner = [self._operand(src, 0), self._operand(src, 1)]
        other = self._operand(k, 1 - side)
        if any(x is None for x in inner) or other is None or self._operand(k, side) is None:
            return False
        elem = tensor_element_type(outer.results[0].type)
        if any(tensor_element_type(x[0].type) != elem for x in inner + [other]):
            return False
        # (A @ B) @ C -> A @ (B @ C)  (side 0), or A @ (B @ C) -> (A @ B) @ C  (side 1)
        a, b, c = (inner[0], inner[1], other) if side == 0 else (other, inner[0], inner[1])
        moved = (b, c) if side == 0 else (a, b)
        stay = a if side == 0 else c
        domain = list(g.domain[k])
        used = [d for d in domain if any(_mentions(x, d) for m in moved for x in m[1] + m[2])]
        moved_shape = [b[2][0], c[2][1]] if side == 0 else [a[2][0], b[2][1]]
        now = self._cost(domain, a[2][0], a[2][1], b[2][1]) + self._cost(domain, a[2][0], b[2][1], c[2][1]) \
            if side == 0 else \
            self._cost(domain, b[2][0], b[2][1], c[2][1]) + self._cost(domain, a[2][0], a[2][1], c[2][1])
        moved_cost = self._cost(used, moved[0][2][0], moved[0][2][1], moved[1][2][1])
        then = moved_cost + (self._cost(domain, a[2][0], a[2][1], c[2][1]) if side == 0 else
                             self._cost(domain, a[2][0], b[2][1], c[2][1]))
        if now is None or moved_cost is None or then is None or not then < now:
            return False
        self._rewrite(k, src, side, moved, stay, moved_shape, used, elem)
        return True

    def _cost(self, domain: list[str], a: str, k: str, n: str) -> float | None:
        """Multiply-adds of an (a, k) @ (k, n) product at every point of `domain`,
        every bound = self.bound, summed (the mean over an even grid of at most 16
        points per dim, times the number of points)."""
        env = {b: self.bound for b in self.g.bounds}
        try:
            sizes = [parse(x) for x in (a, k, n)]
        except SymbolicError:
            return None
        per_dim = min(self.bound, 16 if len(domain) <= 2 else 6)
        grid = np.unique(np.linspace(0, self.bound - 1, per_dim).round().astype(np.int64))
        values = []
        for point in itertools.product(*[grid for _ in domain]):
            env.update(zip(domain, (int(x) for x in point)))
            try:
                values.append(float(np.prod([evaluate(x, env) for x in sizes], dtype=np.float64)))
            except Exception:   # noqa: BLE001  a size the evaluator cannot compute here
                return None
        return float(np.mean(values)) * float(self.bound) ** len(domain)

    def _rewrite(self, k: int, src: int, side: int, moved, stay, moved_shape, used, elem) -> None:
        outer = self.g.ops[k]
        ctx = outer.context
        with ctx, outer.location, ir.InsertionPoint(outer):
            product = ir.Operation.create(
                "sdg.matmul", results=[tensor_type(moved_shape, elem, ctx)],
                operands=[moved[0][0], moved[1][0]],
                attributes={"deps": ir.ArrayAttr.get([index_attr(moved[0][1], ctx), index_attr(moved[1][1], ctx)]),
                            "domain": index_attr(used, ctx)}).results[0]
            pairs = [(stay[0], stay[1]), (product, used)] if side == 0 else [(product, used), (stay[0], stay[1])]
            new = ir.Operation.create(
                "sdg.matmul", results=[outer.results[0].type], operands=[v for v, _ in pairs],
                attributes={"deps": ir.ArrayAttr.get([index_attr(d, ctx) for _, d in pairs]),
                            "domain": outer.attributes["domain"]}).results[0]
        outer.results[0].replace_all_uses_with(new)
        outer.erase()
        self.g.ops[src].erase()


@dataclass
class SdgReassociate(ModulePass):
    """Reassociates chains of two matmuls where the other association is cheaper (see the module doc)."""

    name: ClassVar[str] = "sdg-reassociate"
    summary: ClassVar[str] = ("Choose (A @ B) @ C or A @ (B @ C) by multiply-adds summed over the domain, "
                              "the moved product computed over only the dims it uses")
    bound: int = option(256, "the value of every bound at which the two costs are compared")

    def run(self, op: ir.Operation) -> None:
        self.num_reassociated = 0   # for tests and callers
        for graph in sdg_graphs(op, "sdg-reassociate"):
            with graph.context:
                while _Chains(graph, max(1, int(self.bound))).first():   # one rewrite per view
                    self.num_reassociated += 1
